"""Scoring: calibration profiles (what a guard score means, for which writer model, prompt and
mode) and the store that finds them, including the shipped evidence-only profile
(``profiles/evidence-only.json``).

Drift (``_drift``): live scores against the distribution a profile was fitted on (PSI).

Part of the core: imports only the domain and errors of :mod:`mirage_guard.guard`, numpy and
pydantic. Fitting profiles lives one layer up, in :mod:`mirage_guard.calibration`.
"""

from mirage_guard.guard.scoring._drift import (
    DRIFT_MIN_SCORES,
    DRIFT_WINDOW,
    PSI_STALE,
    DriftMonitor,
    DriftReading,
    DriftStatus,
    ScoreDistribution,
    psi,
    rolling_psi,
    score_distribution,
)
from mirage_guard.guard.scoring._profile import (
    AUDIT_FEATURES,
    MIN_QUOTE_TRUST,
    QUOTE_FEATURES,
    CalibrationProfile,
    DataRef,
    LogisticModel,
    ProfileMode,
    QuoteTrust,
    audit_features,
    feature_version,
    make_profile_id,
    quote_features,
)
from mirage_guard.guard.scoring._store import ProfileStore

__all__ = [
    "AUDIT_FEATURES",
    "DRIFT_MIN_SCORES",
    "DRIFT_WINDOW",
    "MIN_QUOTE_TRUST",
    "PSI_STALE",
    "QUOTE_FEATURES",
    "CalibrationProfile",
    "DataRef",
    "DriftMonitor",
    "DriftReading",
    "DriftStatus",
    "LogisticModel",
    "ProfileMode",
    "ProfileStore",
    "QuoteTrust",
    "ScoreDistribution",
    "audit_features",
    "feature_version",
    "make_profile_id",
    "psi",
    "quote_features",
    "rolling_psi",
    "score_distribution",
]
