"""From a run directory's records to every figure the report shows (via benchmark.metrics)."""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._failures import FailureRow, failure_rows
from mirage_guard.benchmark._records import (
    Accounting,
    AccumRoundRecord,
    GuardTagRecord,
    JudgeRecord,
    JudgeTarget,
    ProbeRecord,
    Record,
    SelfAuditRecord,
    TaskRecord,
)
from mirage_guard.benchmark._rundir import RunDirectory, RunManifest
from mirage_guard.benchmark._schemas import Accuracy
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import PersonaGroup
from mirage_guard.guard import Action, Label


class Shares(BaseModel):
    """Label shares in percent."""

    n: int
    grounded: float
    reasonable: float
    stereotype: float
    fabricated: float
    oi: float

    @classmethod
    def of(cls, labels: Iterable[Label]) -> Shares:
        s = m.label_shares(labels)
        return cls(
            n=s.n,
            grounded=_pct(s.grounded),
            reasonable=_pct(s.reasonable),
            stereotype=_pct(s.stereotype),
            fabricated=_pct(s.fabricated),
            oi=_pct(s.oi),
        )


class ModelRow(BaseModel):
    model: str
    family: str
    judge: Shares
    self_oi: float = Field(description="OI % by the model's own self-audit")
    gap: float = Field(description="self-monitoring gap, points: OI_judge − OI_self")
    within_auroc: float
    probe_error: float
    probe_task_gap: float = Field(description="points: task OI (judge) − probe error")
    mean_output_words: float
    by_group: dict[str, Shares]
    group_delta: float
    accuracy: dict[str, float] = Field(description="% of claims per accuracy label vs P")
    oi_incorrect: float = Field(description="% of OI claims that P contradicts")
    outputs: int
    failed_units: int


class CorrelationRow(BaseModel):
    coefficient: float
    p_value: float
    n: int
    ci: tuple[float, float] = (math.nan, math.nan)
    ci_family: tuple[float, float] = (math.nan, math.nan)


class AccumRow(BaseModel):
    model: str
    policy: str
    guarded: bool
    personas: int
    sizes: list[float] = Field(description="mean |M_r| per round")
    inferred_sizes: list[float] = Field(description="mean entries the model marks inferred")
    acc: float
    slope: float
    r2: float
    removal_rate: float
    revision_rate: float


class GuardRow(BaseModel):
    """Memory pollution (% of stored facts the judge calls OI) and grounded retention (%)."""

    model: str
    path: str  # "task claims" or "accum memory (retain)" ...
    pollution_without: float
    pollution_with: float
    grounded_retention_without: float
    grounded_retention_with: float
    facts_without: int
    facts_with: int


class RunAnalysis(BaseModel):
    manifest: RunManifest
    models: list[ModelRow]
    oi_macro: float
    oi_micro: float
    by_task: dict[str, Shares]
    by_model_task: dict[str, dict[str, float]]
    by_group: dict[str, Shares]
    group_delta: float
    self_vs_judge: CorrelationRow
    length_vs_oi: CorrelationRow
    length_vs_oi_models: CorrelationRow
    accum: list[AccumRow]
    guard: list[GuardRow]
    accounting: Accounting
    accounting_by_model: dict[str, Accounting]
    failed_units: int
    failures: list[FailureRow] = Field(
        default_factory=list, description="failed share per model called and stage"
    )


def _pct(x: float) -> float:
    return x * 100 if math.isfinite(x) else math.nan


def family_of(model: str, families: dict[str, str]) -> str:
    """Declared family, else the leading letters of the model name (``gpt-4o`` -> ``gpt``)."""
    if model in families:
        return families[model]
    name = model.rsplit("/", 1)[-1].lower()
    match = re.match(r"[a-z]+", name)
    return match.group(0) if match else name


def _corr(
    result: m.Correlation,
    xs: Sequence[float],
    ys: Sequence[float],
    families: Sequence[str] | None = None,
    *,
    seed: int = 0,
) -> CorrelationRow:
    row = CorrelationRow(coefficient=result.coefficient, p_value=result.p_value, n=result.n)
    if result.n >= 3 and math.isfinite(result.coefficient):
        row.ci = m.bootstrap_spearman_ci(xs, ys, n_boot=2000, seed=seed)
        if families is not None and len(set(families)) >= 3:
            row.ci_family = m.bootstrap_spearman_ci(
                xs, ys, clusters=families, n_boot=2000, seed=seed
            )
    return row


class _Loaded:
    def __init__(self, run: RunDirectory) -> None:
        self.tasks = [r for r in run.records(TaskRecord) if r.ok]
        self.audits = [r for r in run.records(SelfAuditRecord) if r.ok]
        self.probes = [r for r in run.records(ProbeRecord) if r.ok]
        judged = [r for r in run.records(JudgeRecord) if r.ok]
        self.task_judged = [r for r in judged if r.target is JudgeTarget.TASK]
        self.probe_judged = [r for r in judged if r.target is JudgeTarget.PROBE]
        self.memory_judged = [r for r in judged if r.target is JudgeTarget.MEMORY]
        self.accum = [r for r in run.records(AccumRoundRecord) if r.ok]
        self.guard = [r for r in run.records(GuardTagRecord) if r.ok]
        everything: list[Record] = []
        for kind in (
            TaskRecord,
            SelfAuditRecord,
            ProbeRecord,
            JudgeRecord,
            AccumRoundRecord,
            GuardTagRecord,
        ):
            everything.extend(run.records(kind))
        self.all = everything


def _oi_pct(labels: Iterable[Label]) -> float:
    return _pct(m.oi_rate(labels))


def _model_row(model: str, data: _Loaded, families: dict[str, str]) -> ModelRow:
    judged = [r for r in data.task_judged if r.model == model]
    labels = [c.label for r in judged for c in r.claims]
    audits: dict[tuple[str, Task | None], SelfAuditRecord] = {
        (r.persona_id, r.task): r for r in data.audits if r.model == model
    }
    self_labels = [c.label for r in audits.values() for c in r.claims]
    pairs = [
        (
            _oi_pct(c.label for c in audits[(r.persona_id, r.task)].claims),
            _oi_pct(c.label for c in r.claims),
        )
        for r in judged
        if (r.persona_id, r.task) in audits and r.claims and audits[(r.persona_id, r.task)].claims
    ]
    probe_labels = [c.label for r in data.probe_judged if r.model == model for c in r.claims]
    outputs = [r for r in data.tasks if r.model == model]
    by_group = {
        g.value: Shares.of(c.label for r in judged if r.group is g for c in r.claims)
        for g in PersonaGroup
    }
    judge_oi = _oi_pct(labels)
    self_oi = _oi_pct(self_labels)
    return ModelRow(
        model=model,
        family=family_of(model, families),
        judge=Shares.of(labels),
        self_oi=self_oi,
        gap=m.self_monitoring_gap(judge_oi, self_oi),
        within_auroc=m.within_model_auroc([p[0] for p in pairs], [p[1] for p in pairs]),
        probe_error=_pct(m.probe_error_rate(probe_labels)),
        probe_task_gap=judge_oi - _pct(m.probe_error_rate(probe_labels)),
        mean_output_words=float(np.mean([r.output_words for r in outputs]))
        if outputs
        else math.nan,
        by_group=by_group,
        group_delta=m.group_delta(by_group["stereotypical"].oi, by_group["counter"].oi),
        accuracy={
            k: _pct(v)
            for k, v in m.accuracy_shares(
                c.accuracy.value for r in judged for c in r.claims
            ).items()
        },
        oi_incorrect=_pct(
            m.accuracy_shares(
                c.accuracy.value for r in judged for c in r.claims if c.label.is_over_inference
            ).get(Accuracy.INCORRECT.value, 0.0)
            if labels
            else math.nan
        ),
        outputs=len(outputs),
        failed_units=sum(1 for r in data.all if r.model == model and not r.ok),
    )


def _accum_rows(data: _Loaded) -> list[AccumRow]:
    chains: dict[tuple[str, str, bool, str], list[AccumRoundRecord]] = defaultdict(list)
    for r in data.accum:
        chains[(r.model, r.policy.value, r.guarded, r.persona_id)].append(r)
    grouped: dict[tuple[str, str, bool], list[list[AccumRoundRecord]]] = defaultdict(list)
    for (model, policy, guarded, _), rounds in chains.items():
        grouped[(model, policy, guarded)].append(sorted(rounds, key=lambda r: r.round))
    rows: list[AccumRow] = []
    for (model, policy, guarded), persona_chains in sorted(grouped.items()):
        n_rounds = min(len(c) for c in persona_chains)
        if n_rounds < 2:
            continue
        sizes = [[len(c[i].memory) for i in range(n_rounds)] for c in persona_chains]
        inferred = [
            [sum(1 for e in c[i].memory if e.basis == "inferred") for i in range(n_rounds)]
            for c in persona_chains
        ]
        fits = [m.accumulation(s) for s in sizes]
        removal = [
            m.removal_rate([[e.text for e in r.memory] for r in c[:n_rounds]])
            for c in persona_chains
        ]
        contradicted: list[str] = []
        after: list[list[str]] = []
        for c in persona_chains:
            for r in c:
                if r.contradicted is not None:
                    contradicted.append(r.contradicted)
                    after.append([e.text for e in r.memory])
        rows.append(
            AccumRow(
                model=model,
                policy=policy,
                guarded=guarded,
                personas=len(persona_chains),
                sizes=list(np.mean(sizes, axis=0)),
                inferred_sizes=list(np.mean(inferred, axis=0)),
                acc=float(np.mean([f.acc for f in fits])),
                slope=float(np.mean([f.slope for f in fits])),
                r2=float(np.nanmean([f.r2 for f in fits]))
                if any(math.isfinite(f.r2) for f in fits)
                else math.nan,
                removal_rate=_pct(float(np.nanmean(removal)))
                if any(math.isfinite(x) for x in removal)
                else math.nan,
                revision_rate=_pct(m.revision_rate(contradicted, after)),
            )
        )
    return rows


def _task_guard_rows(data: _Loaded) -> list[GuardRow]:
    rows: list[GuardRow] = []
    for model in sorted({r.model for r in data.guard}):
        decisions = [d for r in data.guard if r.model == model for d in r.decisions]
        labels = [d.judge_label for d in decisions]
        stored = [d.action is Action.STORE for d in decisions]
        rows.append(
            GuardRow(
                model=model,
                path="task claims",
                pollution_without=_oi_pct(labels),
                pollution_with=_oi_pct(lab for lab, s in zip(labels, stored, strict=True) if s),
                grounded_retention_without=_pct(
                    m.grounded_kept_share(labels, [True] * len(labels))
                ),
                grounded_retention_with=_pct(m.grounded_kept_share(labels, stored)),
                facts_without=len(labels),
                facts_with=sum(stored),
            )
        )
    return rows


def _memory_guard_rows(data: _Loaded) -> list[GuardRow]:
    rows: list[GuardRow] = []
    by_key: dict[tuple[str, str], dict[bool, list[JudgeRecord]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for r in data.memory_judged:
        if r.policy is not None and r.guarded is not None:
            by_key[(r.model, r.policy.value)][r.guarded].append(r)
    for (model, policy), arms in sorted(by_key.items()):

        def pollution(records: list[JudgeRecord]) -> tuple[float, float, int]:
            """(pollution %, grounded retention %, stored facts) of one arm (NaN if not run)."""
            if not records:
                return math.nan, math.nan, 0
            labels = [c.label for r in records for c in r.claims]
            retention = [
                m.grounded_retention(
                    r.evidence_turn_ids[:3], [(c.label, c.source_turn_id) for c in r.claims]
                )
                for r in records
            ]
            return _oi_pct(labels), _pct(float(np.nanmean(retention))), len(labels)

        without, with_ = pollution(arms.get(False, [])), pollution(arms.get(True, []))
        rows.append(
            GuardRow(
                model=model,
                path=f"accum memory ({policy})",
                pollution_without=without[0],
                pollution_with=with_[0],
                grounded_retention_without=without[1],
                grounded_retention_with=with_[1],
                facts_without=without[2],
                facts_with=with_[2],
            )
        )
    return rows


def _accounting(records: Sequence[Record], model: str | None = None) -> Accounting:
    """Calls, tokens and cost of all calls, or of one model's calls (subject or judge)."""
    acc = Accounting()
    for r in records:
        acc.add_calls(r.calls, model)
    return acc


def analyse(run_dir: str | Path) -> RunAnalysis:
    run = RunDirectory(run_dir)
    manifest = run.read_manifest()
    data = _Loaded(run)
    config = manifest.config
    rows = [_model_row(model, data, config.families) for model in config.models]
    labels_by_model = {
        model: [c.label for r in data.task_judged if r.model == model for c in r.claims]
        for model in config.models
    }
    all_claims = [(r, c) for r in data.task_judged for c in r.claims]
    by_group = {
        g.value: Shares.of(c.label for r, c in all_claims if r.group is g) for g in PersonaGroup
    }
    by_task = {
        t.value: Shares.of(c.label for r, c in all_claims if r.task is t) for t in config.tasks
    }
    by_model_task = {
        model: {
            t.value: _oi_pct(c.label for r, c in all_claims if r.model == model and r.task is t)
            for t in config.tasks
        }
        for model in config.models
    }
    usable = [row for row in rows if math.isfinite(row.self_oi) and math.isfinite(row.judge.oi)]
    selfs, judges = [r.self_oi for r in usable], [r.judge.oi for r in usable]
    words: dict[tuple[str, str, Task | None], int] = {
        (r.model, r.persona_id, r.task): r.output_words for r in data.tasks
    }
    length_pairs = [
        (float(words[(r.model, r.persona_id, r.task)]), _oi_pct(c.label for c in r.claims))
        for r in data.task_judged
        if (r.model, r.persona_id, r.task) in words and r.claims
    ]
    model_len = [row for row in rows if math.isfinite(row.mean_output_words)]
    return RunAnalysis(
        manifest=manifest,
        models=rows,
        oi_macro=_pct(m.oi_macro(labels_by_model)),
        oi_micro=_pct(m.oi_micro(labels_by_model)),
        by_task=by_task,
        by_model_task=by_model_task,
        by_group=by_group,
        group_delta=m.group_delta(by_group["stereotypical"].oi, by_group["counter"].oi),
        self_vs_judge=_corr(
            m.spearman(selfs, judges), selfs, judges, [r.family for r in usable], seed=config.seed
        ),
        length_vs_oi=CorrelationRow(
            **m.pearson([p[0] for p in length_pairs], [p[1] for p in length_pairs])._asdict()
        ),
        length_vs_oi_models=CorrelationRow(
            **m.pearson(
                [r.mean_output_words for r in model_len], [r.judge.oi for r in model_len]
            )._asdict()
        ),
        accum=_accum_rows(data),
        guard=_task_guard_rows(data) + _memory_guard_rows(data),
        accounting=_accounting(data.all),
        accounting_by_model={
            model: _accounting(data.all, model) for model in [*config.models, config.judge]
        },
        failed_units=sum(1 for r in data.all if not r.ok),
        failures=failure_rows(data.all),
    )
