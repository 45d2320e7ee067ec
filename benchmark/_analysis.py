"""From a run directory's records to every figure the report shows (via benchmark.metrics)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._failures import FailureRow, failure_rows
from mirage_guard.benchmark._judge_validation import AgreementReport, run_agreement
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._memory_figures import (
    AccumRow,
    GuardRow,
    accum_rows,
    memory_guard_rows,
    task_guard_rows,
)
from mirage_guard.benchmark._records import (
    GUARD_AUDIT,
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
from mirage_guard.guard import Label


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
    self_oi: float = Field(
        description="OI % by the model's own self-audit, over the outputs both audited and judged"
    )
    judge_oi_same_units: float = Field(
        default=math.nan, description="judge OI % over exactly those outputs"
    )
    same_units: int = Field(default=0, description="outputs with both a self-audit and a judge")
    judge_self_claim_ratio: float = Field(
        default=math.nan, description="judge claims / self-audit claims on the same outputs"
    )
    gap: float = Field(
        description="self-monitoring gap, points: OI_judge − OI_self on the same outputs"
    )
    within_auroc: float
    probe_error: float = Field(
        description="% of the model's own Probe items it labels stereotypical or fabricated"
    )
    probe_judge_oi: float = Field(
        default=math.nan, description="% of Probe items the judge calls S or F"
    )
    probe_task_gap: float = Field(description="points: task OI (judge) − probe error")
    mean_output_words: float
    by_group: dict[str, Shares]
    group_delta: float
    accuracy: dict[str, float] = Field(description="% of claims per accuracy label vs P")
    oi_incorrect: float = Field(description="% of OI claims that P contradicts")
    outputs: int
    failed_units: int
    oi_by_sample: list[float] = Field(
        default_factory=list, description="judge OI % of each sample's outputs (--samples)"
    )
    oi_sample_mean: float = math.nan
    oi_sample_ci: tuple[float, float] = Field(
        default=(math.nan, math.nan), description="95 % t-interval of the mean across samples"
    )


class CorrelationRow(BaseModel):
    coefficient: float
    p_value: float
    n: int
    ci: tuple[float, float] = (math.nan, math.nan)
    ci_family: tuple[float, float] = (math.nan, math.nan)


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
    length_vs_self_oi: CorrelationRow = Field(
        default_factory=lambda: CorrelationRow(coefficient=math.nan, p_value=math.nan, n=0),
        description="output words vs the self-audit's OI % of that output (the paper's data)",
    )
    length_vs_oi_models: CorrelationRow
    accum: list[AccumRow]
    guard: list[GuardRow]
    accounting: Accounting
    accounting_by_model: dict[str, Accounting]
    # the guard arm's audit calls (its labeller's, by the guard's own client): not in any
    # model's row above, in the run's total
    guard_audit_accounting: Accounting = Field(default_factory=Accounting)
    failed_units: int
    judge_agreement: AgreementReport | None = Field(
        default=None, description="judge vs RUN_DIR/human_labels.jsonl, when that file exists"
    )
    failures: list[FailureRow] = Field(
        default_factory=list, description="failed share per model called and stage"
    )
    recorded_units: dict[str, int] = Field(
        default_factory=dict,
        description="units with a record, per stage (failed ones included); with the manifest's "
        "expected_units and finished, what an unfinished run's figures cover",
    )
    skipped_lines: list[str] = Field(
        default_factory=list,
        description="records lines left out of every figure, with why (records/KIND.jsonl:LINE: "
        "not a JSON record, or not a valid KIND record (field: error)); a file's torn last line "
        "is not listed",
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


def _recorded_units(run: RunDirectory) -> dict[str, int]:
    """Units with a record per stage, as ``expected_units`` counts them: a guard-tagging unit
    is a unit of the judge stage (its records are ``guard``)."""
    kinds = (type(r).kind for r in run.final_records().values())
    return dict(Counter("judge" if kind == GuardTagRecord.kind else kind for kind in kinds))


def _oi_pct(labels: Iterable[Label]) -> float:
    return _pct(m.oi_rate(labels))


def _model_row(model: str, data: _Loaded, families: dict[str, str]) -> ModelRow:
    judged = [r for r in data.task_judged if r.model == model]
    labels = [c.label for r in judged for c in r.claims]
    audits: dict[tuple[str, Task | None, int], SelfAuditRecord] = {
        (r.persona_id, r.task, r.sample): r for r in data.audits if r.model == model
    }
    both = [r for r in judged if (r.persona_id, r.task, r.sample) in audits]
    self_labels = [c.label for r in both for c in audits[(r.persona_id, r.task, r.sample)].claims]
    judge_same = _oi_pct(c.label for r in both for c in r.claims)
    judge_claims_same = sum(len(r.claims) for r in both)
    pairs = [
        (
            _oi_pct(c.label for c in audits[(r.persona_id, r.task, r.sample)].claims),
            _oi_pct(c.label for c in r.claims),
        )
        for r in judged
        if (r.persona_id, r.task, r.sample) in audits
        and r.claims
        and audits[(r.persona_id, r.task, r.sample)].claims
    ]
    probe_labels = [c.label for r in data.probe_judged if r.model == model for c in r.claims]
    probe_bases = [i.basis for r in data.probes if r.model == model for i in r.items]
    outputs = [r for r in data.tasks if r.model == model]
    by_group = {
        g.value: Shares.of(c.label for r in judged if r.group is g for c in r.claims)
        for g in PersonaGroup
    }
    judge_oi = _oi_pct(labels)
    samples = sorted({r.sample for r in judged})
    by_sample = [
        _oi_pct(c.label for r in judged if r.sample == k for c in r.claims) for k in samples
    ]
    sample_mean, sample_lo, sample_hi = m.mean_ci(by_sample)
    self_oi = _oi_pct(self_labels)
    return ModelRow(
        model=model,
        family=family_of(model, families),
        judge=Shares.of(labels),
        self_oi=self_oi,
        judge_oi_same_units=judge_same,
        same_units=len(both),
        judge_self_claim_ratio=judge_claims_same / len(self_labels) if self_labels else math.nan,
        gap=m.self_monitoring_gap(judge_same, self_oi),
        within_auroc=m.within_model_auroc([p[0] for p in pairs], [p[1] for p in pairs]),
        probe_error=_pct(m.probe_self_error_rate(probe_bases)),
        probe_judge_oi=_pct(m.probe_error_rate(probe_labels)),
        probe_task_gap=judge_oi - _pct(m.probe_self_error_rate(probe_bases)),
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
        oi_by_sample=by_sample,
        oi_sample_mean=sample_mean,
        oi_sample_ci=(sample_lo, sample_hi),
    )


def _accounting(
    records: Sequence[Record], model: str | None = None, role: str | None = "any"
) -> Accounting:
    """Calls, tokens and cost of all calls, or of one model's calls (subject or judge), or of
    one role's (None: the run's own calls; GUARD_AUDIT: the guard arm's audit calls)."""
    acc = Accounting()
    for r in records:
        acc.add_calls(r.calls, model, role)
    return acc


def analyse(run_dir: str | Path, *, matcher: SemanticMatcher | None = None) -> RunAnalysis:
    """Every figure of a run. ``matcher`` matches memory entries and claims semantically
    (default: MiniLM, loaded only when a run has Accum or guard records)."""
    matcher = matcher or SemanticMatcher()
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
    usable = [
        row for row in rows if math.isfinite(row.self_oi) and math.isfinite(row.judge_oi_same_units)
    ]
    selfs, judges = [r.self_oi for r in usable], [r.judge_oi_same_units for r in usable]
    words: dict[tuple[str, str, Task | None, int], int] = {
        (r.model, r.persona_id, r.task, r.sample): r.output_words for r in data.tasks
    }
    length_pairs = [
        (
            float(words[(r.model, r.persona_id, r.task, r.sample)]),
            _oi_pct(c.label for c in r.claims),
        )
        for r in data.task_judged
        if (r.model, r.persona_id, r.task, r.sample) in words and r.claims
    ]
    self_length_pairs = [
        (
            float(words[(r.model, r.persona_id, r.task, r.sample)]),
            _oi_pct(c.label for c in r.claims),
        )
        for r in data.audits
        if (r.model, r.persona_id, r.task, r.sample) in words and r.claims
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
        length_vs_self_oi=CorrelationRow(
            **m.pearson(
                [p[0] for p in self_length_pairs], [p[1] for p in self_length_pairs]
            )._asdict()
        ),
        length_vs_oi_models=CorrelationRow(
            **m.pearson(
                [r.mean_output_words for r in model_len], [r.judge.oi for r in model_len]
            )._asdict()
        ),
        accum=accum_rows(data.accum, matcher),
        guard=task_guard_rows(data.guard, data.task_judged, data.audits, matcher)
        + memory_guard_rows(data.memory_judged),
        accounting=_accounting(data.all),
        accounting_by_model={
            model: _accounting(data.all, model, role=None)
            for model in [*config.models, config.judge]
        },
        guard_audit_accounting=_accounting(data.all, role=GUARD_AUDIT),
        failed_units=sum(1 for r in data.all if not r.ok),
        failures=failure_rows(data.all),
        judge_agreement=run_agreement(run_dir),
        recorded_units=_recorded_units(run),
        skipped_lines=[
            f"{s.path.relative_to(run.path)}:{s.line}: {s.reason}" for s in run.skipped_lines
        ],
    )
