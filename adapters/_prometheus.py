"""Prometheus metrics of memory pollution: the edge's :class:`~mirage_guard.guard.GuardObserver`.

Labels are low-cardinality: never user ids or text. The ``model`` label takes only the models the
sidecar was configured with (writer model, calibration profiles); any other value a caller sends
(``writer_model`` of ``/v1/guard/tag`` or ``remember``) is counted as ``other``.

Names are part of the public contract (deploy/prometheus rules and the Grafana dashboard use
them; tests hold them consistent).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from mirage_guard.guard import STAGES, Decision, Guard, ReasonCode
from mirage_guard.guard.scoring import DRIFT_WINDOW, DriftMonitor, DriftReading

DECISIONS = "mirage_guard_decisions"  # counter: model, provenance, action
SCORE = "mirage_guard_score"  # histogram of calibrated P(OI): model, provenance
STAGE_SECONDS = "mirage_guard_stage_seconds"  # histogram: stage
ERRORS = "mirage_guard_errors"  # counter: stage, kind
MEMORY_WRITES = "mirage_guard_memory_writes"  # counter: status (fact/hypothesis/quarantined)
UNCALIBRATED = "mirage_guard_uncalibrated_decisions"  # counter: model
UNSUPPORTED_LANGUAGE = "mirage_guard_unsupported_language_decisions"  # counter: language
# counter: model, code; one count per reason a decision gives (ReasonCode: a closed set), so an
# operator sees which readings fire, and how often MIRAGE_STATED_MIN holds a fact back
# (below_stated_floor)
DECISION_REASONS = "mirage_guard_decision_reasons"
# gauge: model; PSI of the live P(OI) window against the active profile's fitted distribution;
# NaN = unknown (a profile without a fitted distribution, or too few live scores yet)
PROFILE_DRIFT = "mirage_guard_profile_drift"
OTHER_MODEL = "other"  # the model label of every writer model that was not configured
NO_MODEL = "none"  # the model label of decisions made without a writer model


class GuardMetrics:
    """One set of Prometheus collectors, registered on a registry of the caller's choosing.

    Implements :class:`~mirage_guard.guard.GuardObserver`, so a :class:`~mirage_guard.guard.Guard`
    reports into it; the guarded memory adds memory writes and the extract/write stages.
    """

    def __init__(
        self,
        registry: CollectorRegistry | None = None,
        *,
        models: Iterable[str] | None = None,
        drift_window: int = DRIFT_WINDOW,
    ) -> None:
        """``models``: the writer models that may appear as a label (others become ``other``);
        None lets every model through (a library caller that chooses its own models).
        ``drift_window``: live scores per model compared with its profile (a fifth of it, at
        least 10, before drift is known)."""
        self.registry = registry or CollectorRegistry()
        self.drift = DriftMonitor(window=drift_window, min_scores=max(10, drift_window // 5))
        self.models: frozenset[str] | None = None if models is None else frozenset(models)
        self.decisions = Counter(
            DECISIONS, "Guard decisions", ["model", "provenance", "action"], registry=self.registry
        )
        self.score = Histogram(
            SCORE,
            "Calibrated probability that a candidate is over-inference",
            ["model", "provenance"],
            buckets=(0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0),
            registry=self.registry,
        )
        self.stage_seconds = Histogram(
            STAGE_SECONDS,
            "Time spent per pipeline stage",
            ["stage"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )
        self.errors = Counter(
            ERRORS, "Failures per stage, by error type", ["stage", "kind"], registry=self.registry
        )
        self.memory_writes = Counter(
            MEMORY_WRITES, "Items written to memory, by status", ["status"], registry=self.registry
        )
        self.uncalibrated = Counter(
            UNCALIBRATED,
            "Decisions made without a per-model calibration profile",
            ["model"],
            registry=self.registry,
        )
        self.unsupported_language = Counter(
            UNSUPPORTED_LANGUAGE,
            "Decisions failed closed: a language the evidence model and profile do not cover",
            ["language"],
            registry=self.registry,
        )
        self.reasons = Counter(
            DECISION_REASONS,
            "Reasons given for guard decisions, by reason code",
            ["model", "code"],
            registry=self.registry,
        )
        self.profile_drift = Gauge(
            PROFILE_DRIFT,
            "PSI of live calibrated P(over-inference) against the distribution the active "
            "profile was fitted on (sliding window; NaN = unknown)",
            ["model"],
            registry=self.registry,
        )

    def model_label(self, writer_model: str | None) -> str:
        """The ``model`` label of a writer model: configured ones verbatim, the rest ``other``."""
        if not writer_model:
            return NO_MODEL
        if self.models is not None and writer_model not in self.models:
            return OTHER_MODEL
        return writer_model

    # ------------------------------------------------------------------ drift
    def track_guard(self, guard: Guard) -> DriftReading | None:
        """Watch the drift of ``guard``'s writer model against the profile that now scores its
        writes (the self-audit profile, else the evidence-only one). Call again after a reload:
        a changed profile starts a new window. Only a configured model becomes a label. With an
        independent auditor and no writer configured, the auditor's (the guard's metrics follow
        it then: ``Guard.atag``)."""
        model = guard.writer_model or guard.auditor_model
        if not model or self.model_label(model) != model:
            return None
        active = guard.profiles
        self.drift.track(model, active.audit or active.evidence)
        return self._publish_drift(model)

    def _publish_drift(self, model: str) -> DriftReading | None:
        reading = self.drift.reading(model)
        if reading is not None:
            value = reading.psi if reading.psi is not None else math.nan
            self.profile_drift.labels(model=model).set(value)
        return reading

    # ------------------------------------------------------------------ GuardObserver
    def on_decisions(self, decisions: Sequence[Decision], *, writer_model: str | None) -> None:
        model = self.model_label(writer_model)
        for d in decisions:
            self.decisions.labels(
                model=model, provenance=d.provenance.value, action=d.action.value
            ).inc()
            if d.score is not None:
                self.score.labels(model=model, provenance=d.provenance.value).observe(d.score)
            if not d.calibrated:
                self.uncalibrated.labels(model=model).inc()
            for r in d.reasons:
                self.reasons.labels(model=model, code=r.code.value).inc()
                if r.code is ReasonCode.UNSUPPORTED_LANGUAGE:  # ISO codes: a bounded label set
                    self.unsupported_language.labels(language=str(r.params["language"])).inc()
        self._observe_drift(writer_model, decisions)

    def _observe_drift(self, writer_model: str | None, decisions: Sequence[Decision]) -> None:
        if not writer_model:
            return
        by_profile: dict[str | None, list[float]] = {}
        for d in decisions:
            if d.score is not None:
                by_profile.setdefault(d.profile_id, []).append(d.score)
        added = [self.drift.observe(writer_model, pid, s) for pid, s in by_profile.items()]
        if any(added):
            self._publish_drift(writer_model)

    def on_stage(self, stage: str, seconds: float) -> None:
        self.stage_seconds.labels(stage=stage).observe(seconds)

    def on_error(self, stage: str, error: BaseException) -> None:
        self.errors.labels(stage=stage, kind=type(error).__name__).inc()


__all__ = [
    "DECISIONS",
    "ERRORS",
    "MEMORY_WRITES",
    "NO_MODEL",
    "OTHER_MODEL",
    "PROFILE_DRIFT",
    "SCORE",
    "STAGES",
    "STAGE_SECONDS",
    "UNCALIBRATED",
    "UNSUPPORTED_LANGUAGE",
    "GuardMetrics",
]
