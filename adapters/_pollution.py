"""Memory-pollution figures from the decision log: pure functions, no I/O.

Definitions (every share is a fraction in [0, 1]; ``None`` when its denominator is 0):

- **written**: decisions whose item went into memory — ``store``, ``store_as_hypothesis`` and
  ``quarantine`` (quarantined items are written where default search does not return them);
  ``block`` writes nothing.
- **memory pollution** = generated / written: how much of what entered memory has no evidence.
- **visible pollution** = generated among facts + hypotheses (what default search returns).
  Zero under every allowed ``Policy`` (generated is quarantined or blocked).
- **facts not stated** = non-stated among ``store`` decisions. Zero *by construction*
  (``Decision`` refuses ``store`` for anything but stated); reported anyway as an invariant check,
  so a broken writer or a hand-edited log shows up. So is "inferred without an evidence link".
- **hypothesis share** = ``store_as_hypothesis`` / written.
- **generated share** = generated / all decisions; **uncalibrated share** = decisions made without
  a per-model calibration profile / all decisions.

Aggregates never carry user ids, agent/run ids, memory text or tenant names: tenants appear as
opaque labels ("tenant 1", ...) and only when there is more than one; reasons are counted by
code (never by their parameters or text).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from mirage_guard.adapters._profile_drift import ProfileDrift
from mirage_guard.adapters._time import as_utc
from mirage_guard.guard import Action, Provenance, Reason, ReasonCode, describe_reason_code

WRITTEN_ACTIONS: frozenset[Action] = frozenset(
    {Action.STORE, Action.STORE_AS_HYPOTHESIS, Action.QUARANTINE}
)
VISIBLE_ACTIONS: frozenset[Action] = frozenset({Action.STORE, Action.STORE_AS_HYPOTHESIS})
SCORE_BINS = 10
TOP_REASONS = 12
NO_MODEL = "(none)"
# automatic granularity: hourly while the log spans at most this long, daily beyond
HOURLY_MAX_SPAN = timedelta(hours=72)


class DecisionRecord(Protocol):
    """What the report reads from one decision (``LoggedDecision`` is one)."""

    @property
    def tenant(self) -> str: ...
    @property
    def user_id(self) -> str | None: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def candidate_text(self) -> str: ...
    @property
    def source_turn_id(self) -> str | None: ...
    @property
    def provenance(self) -> Provenance: ...
    @property
    def action(self) -> Action: ...
    @property
    def score(self) -> float | None: ...
    @property
    def calibrated(self) -> bool: ...
    @property
    def reasons(self) -> Sequence[Reason]: ...
    @property
    def writer_model(self) -> str | None: ...
    @property
    def created_at(self) -> datetime: ...


class Granularity(StrEnum):
    HOUR = "hour"
    DAY = "day"


class GroupFigures(BaseModel):
    """Counts and shares of one writer model or one (opaque) tenant."""

    model_config = ConfigDict(frozen=True)

    label: str
    decisions: int
    stated: int
    inferred: int
    generated: int
    written: int
    hypotheses: int
    quarantined: int
    blocked: int
    uncalibrated: int
    generated_share: float | None
    memory_pollution: float | None
    uncalibrated_share: float | None


class ScoreHistogram(BaseModel):
    """Scores (calibrated P(over-inference)) of one provenance in equal-width bins over [0, 1]."""

    model_config = ConfigDict(frozen=True)

    provenance: Provenance
    edges: list[float]
    counts: list[int]
    unscored: int
    mean: float | None


class TimeBucket(BaseModel):
    """One hour or day (UTC, by its start)."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    decisions: int
    generated: int
    generated_share: float | None
    written: int
    memory_pollution: float | None


class ReasonCount(BaseModel):
    """A reason code, what it means, and how many decisions gave it."""

    model_config = ConfigDict(frozen=True)

    code: ReasonCode
    reason: str
    decisions: int
    share: float


class InvariantCheck(BaseModel):
    """Something that must hold by construction; reported so a violation is visible."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    violations: int

    @property
    def ok(self) -> bool:
        return self.violations == 0


class PollutionSummary(BaseModel):
    """Every figure of the memory-pollution report (see the module docstring for definitions)."""

    model_config = ConfigDict(frozen=True)

    since: datetime | None
    until: datetime | None
    first_decision_at: datetime | None
    last_decision_at: datetime | None
    decisions: int
    by_provenance: dict[Provenance, int]
    provenance_share: dict[Provenance, float | None]
    by_action: dict[Action, int]
    action_share: dict[Action, float | None]
    written: int
    facts: int
    hypotheses: int
    quarantined: int
    blocked: int
    uncalibrated: int
    generated_share: float | None
    memory_pollution: float | None
    visible_pollution: float | None
    facts_not_stated_share: float | None
    hypothesis_share: float | None
    uncalibrated_share: float | None
    invariants: list[InvariantCheck]
    tenants: int
    by_model: list[GroupFigures]
    by_tenant: list[GroupFigures]
    score_histograms: list[ScoreHistogram]
    granularity: Granularity
    time_series: list[TimeBucket]
    top_reasons: list[ReasonCount]
    # per writer model: is its calibration profile stale? (needs the profiles: set by the CLI,
    # adapters/_profile_drift.py; rendered as "profile for M is stale since ...")
    profile_drift: list[ProfileDrift] = Field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return self.decisions == 0


# -- small pure pieces ------------------------------------------------------------------------


def share(part: int, whole: int) -> float | None:
    """part / whole, or None when there is nothing to divide by."""
    return part / whole if whole else None


def in_window(
    rows: Iterable[DecisionRecord], since: datetime | None, until: datetime | None
) -> list[DecisionRecord]:
    """Rows with since <= created_at <= until (bounds inclusive, like the decision log)."""
    lo = as_utc(since) if since is not None else None
    hi = as_utc(until) if until is not None else None
    out: list[DecisionRecord] = []
    for r in rows:
        ts = as_utc(r.created_at)
        if (lo is None or ts >= lo) and (hi is None or ts <= hi):
            out.append(r)
    return out


def group_figures(label: str, rows: Sequence[DecisionRecord]) -> GroupFigures:
    prov = Counter(r.provenance for r in rows)
    act = Counter(r.action for r in rows)
    written = [r for r in rows if r.action in WRITTEN_ACTIONS]
    written_generated = sum(1 for r in written if r.provenance is Provenance.GENERATED)
    uncalibrated = sum(1 for r in rows if not r.calibrated)
    n = len(rows)
    return GroupFigures(
        label=label,
        decisions=n,
        stated=prov[Provenance.STATED],
        inferred=prov[Provenance.INFERRED],
        generated=prov[Provenance.GENERATED],
        written=len(written),
        hypotheses=act[Action.STORE_AS_HYPOTHESIS],
        quarantined=act[Action.QUARANTINE],
        blocked=act[Action.BLOCK],
        uncalibrated=uncalibrated,
        generated_share=share(prov[Provenance.GENERATED], n),
        memory_pollution=share(written_generated, len(written)),
        uncalibrated_share=share(uncalibrated, n),
    )


def by_model(rows: Sequence[DecisionRecord]) -> list[GroupFigures]:
    """One row per writer model, most decisions first (ties by name)."""
    groups: dict[str, list[DecisionRecord]] = {}
    for r in rows:
        groups.setdefault(r.writer_model or NO_MODEL, []).append(r)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [group_figures(name, members) for name, members in ordered]


def by_tenant(rows: Sequence[DecisionRecord]) -> list[GroupFigures]:
    """Opaque per-tenant rows ("tenant 1" = most decisions); empty for zero or one tenant."""
    groups: dict[str, list[DecisionRecord]] = {}
    for r in rows:
        groups.setdefault(r.tenant, []).append(r)
    if len(groups) < 2:
        return []
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [group_figures(f"tenant {i}", members) for i, (_, members) in enumerate(ordered, 1)]


def score_histograms(
    rows: Sequence[DecisionRecord], bins: int = SCORE_BINS
) -> list[ScoreHistogram]:
    """One histogram per provenance; a score of exactly 1.0 falls in the last bin."""
    edges = [round(i / bins, 10) for i in range(bins + 1)]
    out: list[ScoreHistogram] = []
    for p in Provenance:
        scores = [r.score for r in rows if r.provenance is p and r.score is not None]
        counts = [0] * bins
        for s in scores:
            counts[min(max(int(s * bins), 0), bins - 1)] += 1
        unscored = sum(1 for r in rows if r.provenance is p and r.score is None)
        mean = sum(scores) / len(scores) if scores else None
        out.append(
            ScoreHistogram(provenance=p, edges=edges, counts=counts, unscored=unscored, mean=mean)
        )
    return out


def pick_granularity(rows: Sequence[DecisionRecord]) -> Granularity:
    if not rows:
        return Granularity.HOUR
    stamps = [as_utc(r.created_at) for r in rows]
    return Granularity.HOUR if max(stamps) - min(stamps) <= HOURLY_MAX_SPAN else Granularity.DAY


def bucket_start(ts: datetime, granularity: Granularity) -> datetime:
    ts = as_utc(ts).replace(minute=0, second=0, microsecond=0)
    return ts.replace(hour=0) if granularity is Granularity.DAY else ts


def time_series(rows: Sequence[DecisionRecord], granularity: Granularity) -> list[TimeBucket]:
    """Every bucket from the first decision's to the last one's, empty buckets included."""
    if not rows:
        return []
    groups: dict[datetime, list[DecisionRecord]] = {}
    for r in rows:
        groups.setdefault(bucket_start(r.created_at, granularity), []).append(r)
    step = timedelta(hours=1) if granularity is Granularity.HOUR else timedelta(days=1)
    out: list[TimeBucket] = []
    start, last = min(groups), max(groups)
    while start <= last:
        g = group_figures("", groups.get(start, []))
        out.append(
            TimeBucket(
                start=start,
                decisions=g.decisions,
                generated=g.generated,
                generated_share=g.generated_share,
                written=g.written,
                memory_pollution=g.memory_pollution,
            )
        )
        start += step
    return out


def top_reasons(rows: Sequence[DecisionRecord], top: int = TOP_REASONS) -> list[ReasonCount]:
    """Most frequent reason codes; a code counts once per decision. Parameters (ids, numbers,
    free text) are never shown: a code's description stands for all of them."""
    counts: Counter[ReasonCode] = Counter()
    for r in rows:
        counts.update({x.code for x in r.reasons})
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].value))[:top]
    return [
        ReasonCount(code=k, reason=describe_reason_code(k), decisions=v, share=v / len(rows))
        for k, v in ordered
    ]


def invariant_checks(rows: Sequence[DecisionRecord]) -> list[InvariantCheck]:
    return [
        InvariantCheck(
            name="facts_not_stated",
            description="items stored as facts whose provenance is not stated",
            violations=sum(
                1
                for r in rows
                if r.action is Action.STORE and r.provenance is not Provenance.STATED
            ),
        ),
        InvariantCheck(
            name="inferred_without_link",
            description="inferred items without a source_turn_id",
            violations=sum(
                1 for r in rows if r.provenance is Provenance.INFERRED and not r.source_turn_id
            ),
        ),
    ]


# -- the summary ------------------------------------------------------------------------------


def summarize(
    rows: Iterable[DecisionRecord],
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    granularity: Granularity | None = None,
) -> PollutionSummary:
    """Every figure of the report for the decisions in [since, until] (bounds inclusive).

    An empty window is not an error: the summary has ``decisions == 0`` and every share None.
    """
    kept = in_window(rows, since, until)
    total = group_figures("all", kept)
    act = Counter(r.action for r in kept)
    visible = [r for r in kept if r.action in VISIBLE_ACTIONS]
    facts = act[Action.STORE]
    checks = invariant_checks(kept)
    stamps = [as_utc(r.created_at) for r in kept]
    gran = granularity or pick_granularity(kept)
    prov_counts = {
        Provenance.STATED: total.stated,
        Provenance.INFERRED: total.inferred,
        Provenance.GENERATED: total.generated,
    }
    return PollutionSummary(
        since=as_utc(since) if since is not None else None,
        until=as_utc(until) if until is not None else None,
        first_decision_at=min(stamps) if stamps else None,
        last_decision_at=max(stamps) if stamps else None,
        decisions=total.decisions,
        by_provenance=prov_counts,
        provenance_share={p: share(n, total.decisions) for p, n in prov_counts.items()},
        by_action={a: act[a] for a in Action},
        action_share={a: share(act[a], total.decisions) for a in Action},
        written=total.written,
        facts=facts,
        hypotheses=total.hypotheses,
        quarantined=total.quarantined,
        blocked=total.blocked,
        uncalibrated=total.uncalibrated,
        generated_share=total.generated_share,
        memory_pollution=total.memory_pollution,
        visible_pollution=share(
            sum(1 for r in visible if r.provenance is Provenance.GENERATED), len(visible)
        ),
        facts_not_stated_share=share(checks[0].violations, facts),
        hypothesis_share=share(total.hypotheses, total.written),
        uncalibrated_share=total.uncalibrated_share,
        invariants=checks,
        tenants=len({r.tenant for r in kept}),
        by_model=by_model(kept),
        by_tenant=by_tenant(kept),
        score_histograms=score_histograms(kept),
        granularity=gran,
        time_series=time_series(kept, gran),
        top_reasons=top_reasons(kept),
    )


__all__ = [
    "DecisionRecord",
    "Granularity",
    "GroupFigures",
    "InvariantCheck",
    "PollutionSummary",
    "ReasonCount",
    "ScoreHistogram",
    "TimeBucket",
    "summarize",
]
