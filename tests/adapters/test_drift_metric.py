"""mirage_guard_profile_drift: the PSI of a configured writer model's live scores against the
distribution its active profile was fitted on; NaN (unknown) until it can be told."""

from __future__ import annotations

import math

import numpy as np
from prometheus_client import CollectorRegistry

from mirage_guard.adapters._prometheus import PROFILE_DRIFT, GuardMetrics
from mirage_guard.guard import AuditMode, AuditVerdict, Guard, Label
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import (
    CalibrationProfile,
    DriftStatus,
    ProfileMode,
    psi,
    score_distribution,
)
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder
from tests.guard.paper import PAPER_TURNS, STATED, STEREOTYPE, UNSUPPORTED

WRITER = "mock/writer-a"
CANDS = [STATED, UNSUPPORTED, STEREOTYPE]


def _profile(fitted: list[float] | None) -> CalibrationProfile:
    base = make_profile(
        ProfileMode.SELF_AUDIT_INLINE,
        writer_model=WRITER,
        prompt_version=load_prompt("extract_candidates").ref,
        audit_weight=8.0,
    )
    dist = score_distribution(fitted) if fitted is not None else None
    return base.model_copy(update={"score_distribution": dist})


def _guard(profile: CalibrationProfile, metrics: GuardMetrics) -> Guard:
    return Guard(
        linker=EvidenceLinker(HashingEmbedder()),
        evidence_profile=make_profile(),
        audit_mode=AuditMode.INLINE,
        audit_profile=profile,
        writer_model=WRITER,
        metrics=metrics,
    )


def _verdicts() -> list[AuditVerdict]:
    return [
        AuditVerdict(candidate_id=c.id, label=Label.GROUNDED, confidence=0.9, source_turn_id="u1")
        for c in CANDS
    ]


def _gauge(metrics: GuardMetrics, model: str) -> float | None:
    return metrics.registry.get_sample_value(PROFILE_DRIFT, {"model": model})


def test_gauge_is_the_psi_of_the_live_window_against_the_fitted_scores() -> None:
    fitted = list(np.random.default_rng(3).beta(2.0, 5.0, 2000))
    profile = _profile(fitted)
    metrics = GuardMetrics(CollectorRegistry(), models={WRITER}, drift_window=30)
    guard = _guard(profile, metrics)
    reading = metrics.track_guard(guard)
    assert reading is not None
    assert reading.status is DriftStatus.UNKNOWN  # no live score yet
    value = _gauge(metrics, WRITER)
    assert value is not None
    assert math.isnan(value)

    live: list[float] = []
    for _ in range(10):  # 10 writes x 3 candidates fill the window of 30
        decisions = guard.tag(PAPER_TURNS, CANDS, audit=_verdicts())
        live += [d.score for d in decisions if d.score is not None]
    assert len(live) == 30
    expected = psi(
        profile.score_distribution.counts,  # type: ignore[union-attr]
        np.histogram(live, bins=np.asarray(profile.score_distribution.edges))[0],  # type: ignore[union-attr]
    )
    assert _gauge(metrics, WRITER) == expected
    assert expected > 0.25  # the paper claims score far from a mostly-low fitted distribution
    reading = metrics.drift.reading(WRITER)
    assert reading is not None
    assert reading.status is DriftStatus.STALE


def test_a_profile_without_a_fitted_distribution_stays_unknown() -> None:
    metrics = GuardMetrics(CollectorRegistry(), models={WRITER}, drift_window=10)
    guard = _guard(_profile(None), metrics)
    metrics.track_guard(guard)
    for _ in range(10):
        guard.tag(PAPER_TURNS, CANDS, audit=_verdicts())
    value = _gauge(metrics, WRITER)
    assert value is not None
    assert math.isnan(value)


def test_only_configured_models_get_a_drift_series() -> None:
    metrics = GuardMetrics(CollectorRegistry(), models={"some/other-model"}, drift_window=10)
    guard = _guard(_profile([0.1] * 100), metrics)
    assert metrics.track_guard(guard) is None  # WRITER is not a configured label
    guard.tag(PAPER_TURNS, CANDS, audit=_verdicts())
    assert _gauge(metrics, WRITER) is None
    assert _gauge(metrics, "other") is None
