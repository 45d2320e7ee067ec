"""Calibration profiles built by hand for tests (no data file, no model).

The hand-set models read one or two evidence features, so a test can tell from the conversation
alone what the guard should decide: high similarity -> not over-inference; high lexical
containment -> stated. Audit-mode profiles add a weight on the writer's own label.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from mirage_guard.calibration import Example
from mirage_guard.guard import AuditVerdict
from mirage_guard.guard.evidence import FEATURE_NAMES
from mirage_guard.guard.scoring import (
    AUDIT_FEATURES,
    CalibrationProfile,
    DataRef,
    LogisticModel,
    ProfileMode,
    make_profile_id,
)
from mirage_guard.guard.scoring import feature_version as _feature_version


def _model(weights: dict[str, float], intercept: float) -> LogisticModel:
    names = list(weights)
    return LogisticModel(
        features=names,
        mean=[0.0] * len(names),
        scale=[1.0] * len(names),
        coef=[weights[n] for n in names],
        intercept=intercept,
    )


def make_profile(
    mode: ProfileMode = ProfileMode.EVIDENCE,
    *,
    writer_model: str | None = None,
    prompt_version: str | None = None,
    audit_weight: float = 0.0,
) -> CalibrationProfile:
    """P(OI) falls with ``sim_max``; P(stated) rises with ``lex_containment``.

    With ``audit_weight`` > 0 (audit modes only), the writer's own OI label pushes P(OI) up and
    its GROUNDED label pushes P(stated) up.
    """
    oi = {"sim_max": -12.0}
    stated = {"lex_containment": 12.0}
    if mode.uses_audit and audit_weight:
        oi["audit_oi"] = audit_weight
        stated["audit_grounded"] = audit_weight
    features = list(FEATURE_NAMES) + (list(AUDIT_FEATURES) if mode.uses_audit else [])
    return CalibrationProfile(
        profile_id=make_profile_id(mode, writer_model, prompt_version),
        mode=mode,
        writer_model=writer_model,
        prompt_version=prompt_version,
        embedder="test/hashing-bow-256",
        feature_version=_feature_version(features),
        oi_model=_model(oi, 4.0),
        oi_threshold=0.5,
        stated_model=_model(stated, -6.0),
        stated_threshold=0.5,
        objective="oi:recall>=0.8; stated:precision>=0.85",
        metrics={"train_auroc": 1.0},
        fitted_on=DataRef(path="hand-set", sha256="0" * 64, n_examples=0, split="none"),
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )


def labelled_verdicts(examples: Iterable[Example]) -> dict[str, AuditVerdict]:
    """A writer's verdicts that repeat each claim's own label (confidence 0.8), by claim id."""
    return {
        e.claim.claim_id: AuditVerdict(
            candidate_id=e.claim.claim_id, label=e.claim.label, confidence=0.8
        )
        for e in examples
    }
