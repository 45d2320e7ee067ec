"""Calibration: per-model profiles that give a guard score its meaning, and jobs to fit them."""

from mirage_guard.calibration._profile import (
    AUDIT_FEATURES,
    CalibrationProfile,
    DataRef,
    LogisticModel,
    ProfileMode,
    audit_features,
    feature_version,
    make_profile_id,
)
from mirage_guard.calibration._store import ProfileStore

__all__ = [
    "AUDIT_FEATURES",
    "CalibrationProfile",
    "DataRef",
    "LogisticModel",
    "ProfileMode",
    "ProfileStore",
    "audit_features",
    "feature_version",
    "make_profile_id",
]
