"""From a collapse run directory to figures: persona shares, N_eff and JS with bootstrap CIs,
per-context tables, the confusion against the reference stance, the memory arms."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import NamedTuple

from mirage_guard.benchmark._records import Accounting
from mirage_guard.benchmark.collapse import metrics as cm
from mirage_guard.benchmark.collapse._config import Condition, MemoryArm
from mirage_guard.benchmark.collapse._mapping import PersonaThresholds, persona_of
from mirage_guard.benchmark.collapse._memory import pollution_share
from mirage_guard.benchmark.collapse._records import (
    AnswerRecord,
    MemoryRecord,
    ScoreRecord,
)
from mirage_guard.benchmark.collapse._rundir import CollapseManifest, CollapseRunDirectory
from mirage_guard.benchmark.collapse._situations import (
    PERSONAS,
    AdviserPersona,
    ReferenceSet,
    Situation,
    load_reference,
    load_situations,
)
from mirage_guard.guard.errors import InputError


class Arm(NamedTuple):
    model: str
    condition: Condition
    memory: MemoryArm

    @property
    def name(self) -> str:
        tail = {MemoryArm.NONE: "", MemoryArm.RESAMPLE: " resampled (seed + 1)"}.get(
            self.memory, f" +{self.memory.value} memory"
        )
        return f"{self.model} · {self.condition.value}{tail}"


class Scored(NamedTuple):
    situation: Situation
    h: float
    e: float
    persona: AdviserPersona


class CellFigures(NamedTuple):
    arm: Arm
    n: int
    failed: int
    shares: list[float]
    n_eff: cm.Interval
    js: cm.Interval
    agreement: float
    confusion: cm.StanceConfusion


class ContextRow(NamedTuple):
    arm: Arm
    context: str
    n: int
    shares: list[float]
    n_eff: float
    js: float
    reference_n_eff: float


class MemoryRow(NamedTuple):
    model: str
    condition: Condition
    memory: MemoryArm
    n: int
    n_eff: cm.Interval
    js: cm.Interval
    healer: float
    changed_vs_none: float  # share of paired answers whose persona differs from no memory
    js_vs_none: float  # JS between this arm's and the no-memory distribution
    pollution: float  # share of stored facts that are over-inferred (mean over memories)
    dropped: float  # share of over-inferred candidates kept out of memory (guarded)


class CollapseAnalysis(NamedTuple):
    manifest: CollapseManifest
    thresholds: PersonaThresholds
    cells: list[CellFigures]
    contexts: list[ContextRow]
    memory: list[MemoryRow]
    reference_pooled: list[float]
    reference_n_eff_pooled: float
    reference_n_eff_mean: float
    authored_stances: list[float]
    authored_n_eff: float
    accounting: Accounting
    scored: dict[Arm, list[Scored]]

    @property
    def offline(self) -> bool:
        return bool(self.manifest.offline_models)


def _arm(r: AnswerRecord | ScoreRecord) -> Arm:
    return Arm(r.model, r.condition, r.memory)


def _scored(
    scores: list[ScoreRecord], by_id: dict[str, Situation], thresholds: PersonaThresholds
) -> dict[Arm, list[Scored]]:
    out: dict[Arm, list[Scored]] = defaultdict(list)
    for r in sorted(scores, key=lambda r: r.unit):
        if not r.ok or r.h is None or r.e is None:
            continue
        situation = by_id.get(r.situation_id)
        if situation is None:
            raise InputError(f"situation {r.situation_id!r} of the run is not in the situation set")
        out[_arm(r)].append(Scored(situation, r.h, r.e, persona_of(r.h, r.e, thresholds)))
    return dict(out)


def _cell(
    arm: Arm, rows: list[Scored], failed: int, reference: ReferenceSet, resamples: int, seed: int
) -> CellFigures:
    personas = [s.persona for s in rows]
    counts = Counter(s.situation.context for s in rows)
    ref = cm.mixture({c: reference.shares(c) for c in counts}, counts)
    stance = [s.situation.stance.persona for s in rows]
    return CellFigures(
        arm=arm,
        n=len(rows),
        failed=failed,
        shares=cm.shares(personas),
        n_eff=cm.n_eff_ci(personas, resamples=resamples, seed=seed),
        js=cm.js_ci(personas, ref, resamples=resamples, seed=seed),
        agreement=cm.stance_agreement(stance, personas),
        confusion=cm.stance_confusion(stance, personas),
    )


def _contexts(arm: Arm, rows: list[Scored], reference: ReferenceSet) -> list[ContextRow]:
    by_context: dict[str, list[AdviserPersona]] = defaultdict(list)
    for s in rows:
        by_context[s.situation.context].append(s.persona)
    out = []
    for context in sorted(by_context):
        shares = cm.shares(by_context[context])
        ref = reference.shares(context)
        out.append(
            ContextRow(
                arm,
                context,
                len(by_context[context]),
                shares,
                cm.n_eff(shares),
                cm.js_divergence(shares, ref),
                cm.n_eff(ref),
            )
        )
    return out


def _memory_rows(
    cells: list[CellFigures],
    scored: dict[Arm, list[Scored]],
    memories: list[MemoryRecord],
) -> list[MemoryRow]:
    by_arm: dict[MemoryArm, list[MemoryRecord]] = defaultdict(list)
    for m in memories:
        if m.ok:
            by_arm[m.memory].append(m)
    rows: list[MemoryRow] = []
    for cell in cells:
        arm = cell.arm
        none = scored.get(Arm(arm.model, arm.condition, MemoryArm.NONE), [])
        if arm.memory is MemoryArm.NONE and not any(
            a.model == arm.model and a.condition == arm.condition and a.memory != MemoryArm.NONE
            for a in scored
        ):
            continue
        mine = scored.get(arm, [])
        before = {s.situation.id: s.persona for s in none}
        pairs = [(before[s.situation.id], s.persona) for s in mine if s.situation.id in before]
        kept = by_arm.get(arm.memory, [])
        shares_pollution = [pollution_share(m.entries) for m in kept]
        candidates = [e for m in kept for e in m.entries if e.label and e.label.is_over_inference]
        rows.append(
            MemoryRow(
                model=arm.model,
                condition=arm.condition,
                memory=arm.memory,
                n=cell.n,
                n_eff=cell.n_eff,
                js=cell.js,
                healer=cell.shares[PERSONAS.index(AdviserPersona.HEALER)],
                changed_vs_none=cm.changed_share([a for a, _ in pairs], [b for _, b in pairs])
                if arm.memory is not MemoryArm.NONE
                else math.nan,
                js_vs_none=cm.js_divergence(cell.shares, cm.shares([s.persona for s in none]))
                if arm.memory is not MemoryArm.NONE
                else math.nan,
                pollution=_mean([x for x in shares_pollution if not math.isnan(x)]),
                dropped=sum(e.status == "dropped" for e in candidates) / len(candidates)
                if candidates
                else math.nan,
            )
        )
    order = list(MemoryArm)
    return sorted(rows, key=lambda r: (r.model, order.index(r.memory)))


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def analyse(
    run_dir: str | Path,
    *,
    thresholds: PersonaThresholds | None = None,
    resamples: int = 2000,
    seed: int = 0,
) -> CollapseAnalysis:
    run = CollapseRunDirectory(run_dir)
    manifest = run.read_collapse_manifest()
    config = manifest.config
    mapping = thresholds or config.mapping
    situations = load_situations(config.situations_file)
    by_id = {s.id: s for s in situations}
    reference = load_reference(config.reference_file)
    scores = run.read(ScoreRecord)
    answers = run.read(AnswerRecord)
    memories = run.read(MemoryRecord)
    scored = _scored(scores, by_id, mapping)
    failed: Counter[Arm] = Counter(_arm(r) for r in answers if not r.ok)
    failed.update(_arm(r) for r in scores if not r.ok)
    order = {pair: i for i, pair in enumerate(config.arms())}
    arms = sorted(
        set(scored) | set(failed),
        key=lambda a: (config.models.index(a.model), order.get((a.condition, a.memory), 99)),
    )
    cells = [_cell(a, scored.get(a, []), failed[a], reference, resamples, seed) for a in arms]
    contexts = [row for a in arms for row in _contexts(a, scored.get(a, []), reference)]
    used = sorted({s.situation.context for rows in scored.values() for s in rows}) or sorted(
        reference.contexts
    )
    counts = Counter(s.context for s in situations if s.context in used)
    pooled = cm.mixture({c: reference.shares(c) for c in counts}, counts)
    accounting = Accounting()
    for record in [*answers, *scores]:
        accounting.add_calls(record.calls)
    stance = cm.shares([s.stance.persona for s in situations if s.context in used])
    return CollapseAnalysis(
        manifest=manifest,
        thresholds=mapping,
        cells=cells,
        contexts=contexts,
        memory=_memory_rows(cells, scored, memories),
        reference_pooled=pooled,
        reference_n_eff_pooled=cm.n_eff(pooled),
        reference_n_eff_mean=_mean([cm.n_eff(reference.shares(c)) for c in used]),
        authored_stances=stance,
        authored_n_eff=cm.n_eff(stance),
        accounting=accounting,
        scored=scored,
    )
