"""`mirage calibrate from-bench`: a writer model's self-audit profile from a MirageBench run.

The benchmark aligns the model's self-audit claims with the judge's claims
(:func:`benchmark.align_self_audit`); calibration fits and cross-validates by persona
(:mod:`calibration`); this edge module joins the two (neither may import the other), writes the
profiles and renders the figures (rich tables, JSON, markdown).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field
from rich.table import Table

from mirage_guard.benchmark import (
    AlignmentCounts,
    Persona,
    RunDirectory,
    SelfAuditAlignment,
    SemanticMatcher,
    align_self_audit,
    training_personas,
)
from mirage_guard.calibration import (
    CrossValidated,
    Example,
    JudgedClaims,
    LabelledClaim,
    ModelFigures,
    Objective,
    TransferRow,
    cross_validate,
    fit_judged_profile,
    is_never_stated,
    persona_folds,
    score_claims,
    transfer_table,
)
from mirage_guard.guard import AuditVerdict, Role, Turn
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import CalibrationProfile, DataRef, ProfileStore


def judged_claims(alignment: SelfAuditAlignment) -> JudgedClaims:
    """The aligned claims as calibration's input: the judge's label is the gold, the model's
    own label the verdict, the persona's revealed facts the (user) turns."""
    turns = {
        pid: tuple(Turn(id=tid, role=Role.USER, content=text) for tid, text in facts)
        for pid, facts in alignment.turns.items()
    }
    examples: list[Example] = []
    verdicts: dict[str, AuditVerdict] = {}
    for c in alignment.claims:
        # constructed, not validated: the judge may label a claim GROUNDED without naming a
        # turn it recognises; the OI label (all a fit uses) is still the judge's
        claim = LabelledClaim.model_construct(
            claim_id=c.claim_id,
            text=c.text,
            label=c.judge_label,
            source_turn_id=c.source_turn_id,
            persona_id=c.persona_id,
            task=c.task,
            split=None,
        )
        examples.append(
            Example(claim=claim, conversation_id=c.persona_id, turns=turns[c.persona_id])
        )
        verdicts[c.claim_id] = AuditVerdict(
            candidate_id=c.claim_id, label=c.audit_label, confidence=c.audit_confidence
        )
    return JudgedClaims(
        writer_model=alignment.model,
        prompt_version=alignment.prompt_version,
        examples=examples,
        verdicts=verdicts,
    )


def run_data_ref(run_dir: Path, model: str, n: int) -> tuple[Path, DataRef]:
    """The records a profile was fitted on: the run's judge file, hashed with its self-audit
    file (both append-only; the hash pins the state they were read in)."""
    records = RunDirectory(run_dir).records_dir
    judge = records / "judge.jsonl"
    h = hashlib.sha256()
    for name in ("judge.jsonl", "self_audit.jsonl"):
        path = records / name
        if path.is_file():
            h.update(path.read_bytes())
    ref = DataRef(
        path=f"{run_dir.name}/records", sha256=h.hexdigest(), n_examples=n, split=f"bench:{model}"
    )
    return judge, ref


class ModelResult(BaseModel):
    model: str
    prompt_version: str
    alignment: AlignmentCounts
    matcher: str
    match_threshold: float
    figures: ModelFigures
    evidence_training_claims: int = Field(
        default=0,
        description="aligned claims about personas the evidence-only profile was fitted on "
        "(dropped with held_out_only, else scored: evidence figures on them are not held out)",
    )
    profile_id: str | None = None
    profile_path: str | None = None
    threshold: float | None = None
    never_stated: bool = Field(
        default=False,
        description="the judge labelled none of the model's non-OI claims GROUNDED, so the "
        "profile never tags a claim stated (what it passes is stored as a hypothesis)",
    )
    error: str | None = None


class FromBenchReport(BaseModel):
    run_dir: str
    objective: str
    held_out_only: bool = False
    offline_models: list[str]
    models: list[ModelResult]
    transfer: list[TransferRow] = []


@dataclass
class FromBench:
    """Everything one `from-bench` invocation needs besides the run."""

    linker: EvidenceLinker
    evidence_profile: CalibrationProfile
    objective: Objective
    matcher: SemanticMatcher
    personas: Sequence[Persona] | None = None
    profile_dir: Path | None = None
    n_boot: int = 1000
    held_out_only: bool = False

    def run(self, run_dir: Path, models: Sequence[str], *, compare: bool) -> FromBenchReport:
        manifest = RunDirectory(run_dir).read_manifest()
        alignments = [
            align_self_audit(run_dir, m, personas=self.personas, matcher=self.matcher)
            for m in models
        ]
        # the shipped evidence profile (and the support model) saw labelled claims about these
        # personas: on them the evidence path is not held out
        seen, _, _ = training_personas(self.evidence_profile.fitted_on.model_dump(mode="json"))
        in_training = [sum(c.persona_id in seen for c in a.claims) for a in alignments]
        if self.held_out_only:
            alignments = [
                a.model_copy(update={"claims": [c for c in a.claims if c.persona_id not in seen]})
                for a in alignments
            ]
        claims = [judged_claims(a) for a in alignments]
        folds = persona_folds([e.conversation_id for c in claims for e in c.examples])
        fitted: dict[str, CrossValidated] = {}
        results: list[ModelResult] = []
        for alignment, judged, n_seen in zip(alignments, claims, in_training, strict=True):
            scored = score_claims(judged, self.linker, self.evidence_profile)
            cv = cross_validate(scored, self.objective, folds=folds, n_boot=self.n_boot)
            fitted[alignment.model] = cv
            result = self._fit_one(run_dir, alignment, cv)
            result.evidence_training_claims = n_seen
            results.append(result)
        return FromBenchReport(
            run_dir=str(run_dir),
            objective=str(self.objective),
            held_out_only=self.held_out_only,
            offline_models=list(manifest.offline_models),
            models=results,
            transfer=transfer_table(fitted, n_boot=self.n_boot) if compare else [],
        )

    def _fit_one(
        self, run_dir: Path, alignment: SelfAuditAlignment, cv: CrossValidated
    ) -> ModelResult:
        result = ModelResult(
            model=alignment.model,
            prompt_version=alignment.prompt_version,
            alignment=alignment.counts,
            matcher=alignment.matcher,
            match_threshold=alignment.threshold,
            figures=cv.figures,
        )
        data_path, ref = run_data_ref(run_dir, alignment.model, cv.scored.n)
        try:
            profile = fit_judged_profile(
                cv,
                self.objective,
                embedder=self.linker.embedder.name,
                data_path=data_path,
                data=ref,
                support_model=self.linker.support_sha256,
            )
        except InputError as exc:
            why = nothing_to_align(alignment.counts)
            result.error = f"{exc}; {why}" if why else str(exc)
            return result
        result.profile_id = profile.profile_id
        result.threshold = profile.oi_threshold
        result.never_stated = is_never_stated(profile)
        if self.profile_dir is not None:
            result.profile_path = str(ProfileStore(self.profile_dir).save(profile))
        return result


# -- rendering ---------------------------------------------------------------------------------

# failed units a from-bench user can act on, in words
FAILURE_HINTS = {
    "task TruncatedOutputError": "answers cut at --max-tokens: the model did not end its answer"
    " (a base model may need --stop)",
    "task EmptyOutputError": "the model ended its answer before saying anything",
    "self_audit UnparsableOutputError": "the self-audit answer did not parse or copied the "
    "prompt's placeholder",
    "judge UnparsableOutputError": "the judge's answer did not parse or copied the prompt's "
    "placeholder",
}


def nothing_to_align(counts: AlignmentCounts) -> str | None:
    """Why no Task output of the model has both a judgement and a self-audit (None when some
    has): the counts of each stage and the failed units that stopped it."""
    if counts.units_with_both:
        return None
    failed = ", ".join(
        f"{n} {key}" + (f" ({FAILURE_HINTS[key]})" if key in FAILURE_HINTS else "")
        for key, n in counts.failed_units.items()
    )
    return (
        f"no Task output was both self-audited and judged ({counts.task_outputs} Task "
        f"output(s), {counts.audited_units} self-audited, {counts.judged_units} judged; "
        f"failed units: {failed or 'none'})"
    )


PATH_NAMES = {"self_audit": "self-audit alone", "evidence": "evidence alone", "combined": "both"}


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _ci(value: list[float] | None) -> str:
    return "n/a" if value is None else f"[{value[0]:.3f}, {value[1]:.3f}]"


def _signed(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" + ("" if ci is None else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]")


def alignment_table(report: FromBenchReport) -> Table:
    table = Table(title="self-audit claims aligned with the judge's (per Task output)")
    cols = ("model", "units", "judge claims", "self-audit claims", "aligned", "unaligned judge",
            "unaligned self-audit")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="right" if col != "model" else "left")
    for r in report.models:
        a = r.alignment
        table.add_row(
            r.model,
            str(a.units_with_both),
            str(a.judge_claims),
            str(a.audit_claims),
            str(a.aligned),
            str(a.unaligned_judge_claims),
            str(a.unaligned_audit_claims),
        )
    return table


def figures_table(result: ModelResult) -> Table:
    f = result.figures
    table = Table(
        title=f"{result.model}: held out by persona ({f.n_personas} personas, {f.n_folds} folds, "
        f"{f.n_claims} claims, {f.n_oi} OI), objective {f.objective}"
    )
    for col in ("score", "n", "AUROC", "95% CI", "precision", "recall", "F1", "accuracy", "kappa"):
        table.add_column(col, justify="left" if col == "score" else "right")
    for path, p in f.paths.items():
        table.add_row(
            PATH_NAMES[path],
            str(p.n_scored),
            _num(p.auroc),
            _ci(p.auroc_ci),
            _num(p.precision),
            _num(p.recall),
            _num(p.f1),
            _num(p.accuracy),
            _num(p.kappa),
        )
    return table


def transfer_rich(report: FromBenchReport) -> Table:
    table = Table(
        title="cross-model transfer: model A's rule on model B's held-out claims "
        "(thr: mean over folds)"
    )
    cols = ("A (rule of)", "B (claims of)", "score", "n", "thr A", "thr B", "acc B's own",
            "acc A's", "acc drop", "F1 B's own", "F1 A's", "F1 drop")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="right" if col not in cols[:3] else "left")
    for row in transfer_rows(report):
        table.add_row(*row)
    return table


def transfer_rows(report: FromBenchReport) -> list[list[str]]:
    return [
        [
            t.source,
            t.target,
            PATH_NAMES[t.path],
            str(t.n),
            _num(t.source_threshold),
            _num(t.own_threshold),
            _num(t.accuracy_own),
            _num(t.accuracy_transfer),
            _signed(t.accuracy_drop, t.accuracy_drop_ci),
            _num(t.f1_own),
            _num(t.f1_transfer),
            _signed(t.f1_drop, t.f1_drop_ci),
        ]
        for t in report.transfer
    ]


def render_markdown(report: FromBenchReport, command: str) -> str:
    lines = [f"# Self-audit calibration from {report.run_dir}", ""]
    if report.offline_models:
        lines += [
            f"Models answered by the offline mock provider: {', '.join(report.offline_models)} "
            "(a pipeline check, not a measurement of any model).",
            "",
        ]
    seen = {r.model: n for r in report.models if (n := r.evidence_training_claims)}
    if seen:
        what = "left out" if report.held_out_only else "scored (evidence figures not held out)"
        lines += [
            "Claims about personas the shipped evidence profile was fitted on, "
            f"{what}: " + ", ".join(f"{m} {n}" for m, n in seen.items()) + ".",
            "",
        ]
    lines += [
        f"Objective: `{report.objective}`. Held out by persona (K-fold); thresholds chosen on "
        "the training personas of each fold.",
        "",
        "| model | aligned | unaligned judge | unaligned self-audit | score | AUROC [95% CI] "
        "| F1 | accuracy | profile threshold (both) |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|",
    ]
    for r in report.models:
        for path, p in r.figures.paths.items():
            lines.append(
                f"| {r.model} | {r.alignment.aligned} | {r.alignment.unaligned_judge_claims} | "
                f"{r.alignment.unaligned_audit_claims} | {PATH_NAMES[path]} | "
                f"{_num(p.auroc)} {_ci(p.auroc_ci)} | {_num(p.f1)} | {_num(p.accuracy)} | "
                f"{_num(r.threshold) if path == 'combined' else '-'} |"
            )
    never = [r.model for r in report.models if r.never_stated]
    if never:
        lines += [
            "",
            f"Never tags a claim stated (the judge labelled none of its non-OI claims GROUNDED; "
            f"what it passes is stored as a hypothesis): {', '.join(never)}.",
        ]
    if report.transfer:
        lines += [
            "",
            "## Cross-model transfer (A's rule on B's held-out claims)",
            "",
            "| A | B | score | n | thr A | thr B | acc B own | acc A's | drop | F1 B own | "
            "F1 A's | drop |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        lines += ["| " + " | ".join(row) + " |" for row in transfer_rows(report)]
    lines += ["", f"Regenerate: `{command}`", ""]
    return "\n".join(lines)


def write_report(report: FromBenchReport, out_dir: Path, command: str) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / "from_bench.json"
    md_path = out_dir / "from_bench.md"
    json_path.write_text(json.dumps(report.model_dump(mode="json"), indent=2) + "\n", "utf-8")
    md_path.write_text(render_markdown(report, command), "utf-8")
    return json_path, md_path
