"""`mirage calibrate from-bench`: a writer model's self-audit profile from a (mock) MirageBench run.

The run is the small offline run with scripted self-audits: ``mock/subject-a`` labels its claims
as the mock judge does (an honest self-audit), ``mock/subject-b`` inverts the judge (calls its
over-inferences grounded and its grounded claims fabricated), leaves out its last claim and adds
one claim the judge never extracts. The evidence path runs on a hashing embedder and a hand-set
evidence profile, so figures are a function of these scripts, not of any model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from mirage_guard.adapters._bench_calibration import FromBench, judged_claims, render_markdown
from mirage_guard.adapters.cli import _calibrate
from mirage_guard.adapters.cli._main import app
from mirage_guard.benchmark import (
    JudgeRecord,
    JudgeTarget,
    RunDirectory,
    SelfAuditRecord,
    SemanticMatcher,
    Stage,
    align_self_audit,
)
from mirage_guard.benchmark._offline import _LABEL_CYCLE, _h, _sentences, offline_answer
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import SelfAuditOutput
from mirage_guard.benchmark.personas import Persona
from mirage_guard.calibration import (
    Objective,
    cross_validate,
    is_never_stated,
    persona_folds,
    score_claims,
)
from mirage_guard.guard.errors import ProfileMismatchError, ProfileNotFoundError
from mirage_guard.guard.evidence import ClaimSupport, EvidenceLinker
from mirage_guard.guard.llm import Completion, Message, Usage
from mirage_guard.guard.scoring import CalibrationProfile, DataRef, ProfileMode, ProfileStore
from tests.benchmark.small_run import FAST, small_config
from tests.calibration.factories import make_profile
from tests.fakes.bench import JUDGE, SUBJECTS, CallLog, recording_provider
from tests.fakes.embedder import HashingEmbedder

A, B = SUBJECTS
EXTRA_CLAIM = "Collects vintage fountain pens from flea markets."
STAGES = [Stage.TASK, Stage.SELF_AUDIT, Stage.JUDGE]


def _judge_label(sentence: str) -> str:
    """What the offline judge calls a sentence of a mock Task output."""
    if sentence.startswith("Since you mentioned it"):
        return "GROUNDED"
    return _LABEL_CYCLE[_h(sentence) % 3]


def _inverted(label: str) -> str:
    return "FABRICATED" if label in ("GROUNDED", "INFERRED_REASONABLE") else "GROUNDED"


def scripted(
    kind: str,
) -> Callable[[Sequence[Message], type[BaseModel] | None], str | Completion]:
    """The offline answers, except the self-audit: honest, inverted or unrelated; or
    ``never_ends``: every Task answer cut at max_tokens (as a base model's are)."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str | Completion:
        if kind == "never_ends" and schema is None:
            usage = Usage(prompt_tokens=10, completion_tokens=200)
            return Completion(text="and so on", model=kind, usage=usage, finish_reason="length")
        if schema is not SelfAuditOutput:
            return offline_answer(messages, schema, salt=kind)
        answer = next(m.content for m in reversed(messages) if m.role == "assistant")
        sentences = _sentences(answer)
        if kind == "honest":
            claims = [(s, _judge_label(s)) for s in sentences]
        elif kind == "inverted":
            claims = [(s, _inverted(_judge_label(s))) for s in sentences[:-1]]
            claims.append((EXTRA_CLAIM, "GROUNDED"))
        else:  # unrelated: nothing it reports is what the judge extracts
            claims = [(EXTRA_CLAIM, "FABRICATED")]
        return json.dumps(
            {"claims": [{"text": t, "label": lab, "confidence": 0.9} for t, lab in claims]}
        )

    return rule


def make_bench_run(
    run_dir: Path, personas: list[Persona], kinds: dict[str, str], stages: list[Stage] = STAGES
) -> Path:
    rules = {model: scripted(kind) for model, kind in kinds.items()}
    run = BenchmarkRun(
        small_config(limit=6, stages=stages, guard="off"),
        run_dir,
        provider=recording_provider(CallLog(), rules=rules),
        options=FAST,
        personas=personas,
    )
    anyio.run(run.run)
    return run_dir


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory, small_personas: list[Persona]) -> Path:
    path = tmp_path_factory.mktemp("bench") / "run"
    return make_bench_run(path, small_personas, {A: "honest", B: "inverted"})


def matcher() -> SemanticMatcher:
    return SemanticMatcher(HashingEmbedder())


def job(
    personas: list[Persona],
    profile_dir: Path | None = None,
    objective: str = "max-f1",
    linker: EvidenceLinker | None = None,
) -> FromBench:
    return FromBench(
        linker=linker or EvidenceLinker(HashingEmbedder()),
        evidence_profile=make_profile(),
        objective=Objective.parse(objective),
        matcher=matcher(),
        personas=personas,
        profile_dir=profile_dir,
        n_boot=50,
    )


def _records(run_dir: Path, model: str) -> tuple[list[JudgeRecord], list[SelfAuditRecord]]:
    run = RunDirectory(run_dir)
    judged = [
        r
        for r in run.records(JudgeRecord)
        if r.model == model and r.target is JudgeTarget.TASK and r.ok
    ]
    audits = [r for r in run.records(SelfAuditRecord) if r.model == model and r.ok]
    return judged, audits


# -------------------------------------------------------------------------------- alignment


def test_alignment_counts_every_claim_on_both_sides(
    scripted_run: Path, small_personas: list[Persona]
) -> None:
    judged, audits = _records(scripted_run, B)
    n_judge = sum(len(r.claims) for r in judged)
    units = len(judged)
    assert units == len(audits) == 6 * 2

    honest = align_self_audit(scripted_run, A, personas=small_personas, matcher=matcher())
    assert honest.counts.judge_claims == honest.counts.aligned == honest.counts.audit_claims
    assert honest.counts.unaligned_judge_claims == honest.counts.unaligned_audit_claims == 0

    inverted = align_self_audit(scripted_run, B, personas=small_personas, matcher=matcher())
    c = inverted.counts
    assert c.units_with_both == units
    assert c.judge_claims == n_judge
    assert c.audit_claims == n_judge  # one left out and one added per unit
    assert c.aligned == n_judge - units
    assert c.unaligned_judge_claims == units
    assert c.unaligned_audit_claims == units
    # every pair joins the judge's claim to the model's own label of the same sentence
    for claim in inverted.claims:
        assert claim.audit_text == claim.text
        assert claim.audit_label.value == _inverted(claim.judge_label.value)
        assert claim.claim_id.startswith(f"{B}/{claim.persona_id}/{claim.task}/")
    assert set(inverted.turns) == {p.persona_id for p in small_personas}


def test_alignment_is_one_to_one_and_refuses_an_unknown_model(
    scripted_run: Path, small_personas: list[Persona]
) -> None:
    alignment = align_self_audit(scripted_run, A, personas=small_personas, matcher=matcher())
    ids = [c.claim_id for c in alignment.claims]
    assert len(ids) == len(set(ids))
    assert alignment.prompt_version.startswith("bench_self_audit@")
    with pytest.raises(ValueError, match="not a subject model"):
        align_self_audit(scripted_run, "mock/judge", personas=small_personas, matcher=matcher())


def test_claims_of_personas_missing_from_the_file_are_counted_not_used(
    scripted_run: Path, small_personas: list[Persona]
) -> None:
    kept = small_personas[:4]
    alignment = align_self_audit(scripted_run, A, personas=kept, matcher=matcher())
    assert alignment.counts.claims_of_unknown_personas > 0
    assert {c.persona_id for c in alignment.claims} <= {p.persona_id for p in kept}
    assert (
        alignment.counts.aligned + alignment.counts.claims_of_unknown_personas
        == alignment.counts.judge_claims
    )


# -------------------------------------------------------------------------------- figures


def test_held_out_split_never_puts_one_persona_in_two_folds(
    scripted_run: Path, small_personas: list[Persona]
) -> None:
    alignment = align_self_audit(scripted_run, A, personas=small_personas, matcher=matcher())
    claims = judged_claims(alignment)
    folds = persona_folds([e.conversation_id for e in claims.examples])
    assert len(set(folds.values())) == 5
    scored = score_claims(claims, EvidenceLinker(HashingEmbedder()), make_profile())
    cv = cross_validate(scored, Objective.parse("max-f1"), folds=folds, n_boot=50)
    for fold, fit in cv.fits.items():
        test = {p for p, f in folds.items() if f == fold}
        assert test
        assert all(folds[p] != fold for p in set(folds) - test)
        assert fit.combined is not None
    assert cv.figures.n_folds == 5
    assert all(p.n_scored == scored.n for p in cv.figures.paths.values())


def test_figures_follow_the_scripted_self_audits(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path
) -> None:
    report = job(small_personas, tmp_path).run(scripted_run, [A, B], compare=True)
    honest, inverted = report.models
    a_self, b_self = honest.figures.paths["self_audit"], inverted.figures.paths["self_audit"]
    assert a_self.auroc is not None
    assert a_self.auroc > 0.9
    assert b_self.auroc is not None
    assert b_self.auroc < 0.1
    assert a_self.auroc_ci is not None
    assert a_self.auroc_ci[0] <= a_self.auroc <= a_self.auroc_ci[1]
    # the combined model learns each model's sign: both separate well held out
    for result in report.models:
        combined = result.figures.paths["combined"]
        assert combined.auroc is not None
        assert combined.auroc > 0.9
    # different self-audits -> different fitted rules
    prof_a = ProfileStore(tmp_path).for_writer(
        A, ProfileMode.SELF_AUDIT_SEPARATE, honest.prompt_version
    )
    prof_b = ProfileStore(tmp_path).for_writer(
        B, ProfileMode.SELF_AUDIT_SEPARATE, inverted.prompt_version
    )
    assert honest.threshold is not None
    assert inverted.threshold is not None
    assert prof_a.oi_threshold == honest.threshold
    assert prof_b.oi_threshold == inverted.threshold
    a_coef = dict(zip(prof_a.oi_model.features, prof_a.oi_model.coef, strict=True))
    b_coef = dict(zip(prof_b.oi_model.features, prof_b.oi_model.coef, strict=True))
    assert a_coef["audit_conf_oi"] > 0 > b_coef["audit_conf_oi"]
    assert abs(honest.threshold - inverted.threshold) > 1e-3
    assert "max-f1" in prof_a.objective
    assert prof_a.metrics["heldout_self_audit_auroc"] == pytest.approx(a_self.auroc)
    # the transfer table: A's self-audit threshold on B's inverted verdicts costs accuracy
    rows = {(t.source, t.target, t.path): t for t in report.transfer}
    assert len(rows) == 4
    a_on_b = rows[(A, B, "self_audit")]
    assert a_on_b.accuracy_drop is not None
    assert a_on_b.accuracy_drop > 0.3
    assert a_on_b.n == inverted.figures.paths["self_audit"].n_scored
    # personas resampled: the drop holds across them
    assert a_on_b.accuracy_drop_ci is not None
    assert a_on_b.accuracy_drop_ci[0] > 0


@pytest.mark.parametrize("objective", ["max-kappa", "target-precision=0.9", "recall>=0.95"])
def test_objective_is_recorded_and_met_on_training_claims(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path, objective: str
) -> None:
    report = job(small_personas, tmp_path, objective).run(scripted_run, [A], compare=False)
    (result,) = report.models
    profile = CalibrationProfile.model_validate_json(Path(str(result.profile_path)).read_text())
    assert profile.objective.startswith(f"oi:{Objective.parse(objective)}")
    assert report.objective == str(Objective.parse(objective))
    if objective.startswith("recall"):
        recall = profile.metrics["train_recall"]
        assert isinstance(recall, float)
        assert recall >= 0.95


def test_profile_is_refused_for_any_other_model(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path
) -> None:
    report = job(small_personas, tmp_path).run(scripted_run, [A], compare=False)
    (result,) = report.models
    store = ProfileStore(tmp_path)
    profile = store.for_writer(A, ProfileMode.SELF_AUDIT_SEPARATE, result.prompt_version)
    with pytest.raises(ProfileMismatchError, match="writer_model"):
        profile.check_applicable(
            mode=ProfileMode.SELF_AUDIT_SEPARATE,
            writer_model=B,
            prompt_version=result.prompt_version,
        )
    with pytest.raises(ProfileNotFoundError):
        store.for_writer(B, ProfileMode.SELF_AUDIT_SEPARATE, result.prompt_version)
    assert profile.fitted_on.split == f"bench:{A}"
    assert profile.fitted_on.n_examples == result.alignment.aligned


def test_no_aligned_claims_gives_counts_na_figures_and_a_typed_error(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    run_dir = make_bench_run(tmp_path / "run", small_personas, {A: "unrelated", B: "honest"})
    report = job(small_personas, tmp_path / "profiles").run(run_dir, [A, B], compare=True)
    unrelated = report.models[0]
    assert unrelated.alignment.aligned == 0
    assert unrelated.alignment.audit_claims == 12
    assert unrelated.error is not None
    assert "0 aligned claim(s)" in unrelated.error
    assert unrelated.profile_path is None
    for figs in unrelated.figures.paths.values():
        assert figs.n_scored == 0
        assert figs.auroc is None
        assert figs.f1 is None
    # the other model still gets its profile; transfer rows with no claims are n/a, not zero
    assert report.models[1].profile_path is not None
    empty = [t for t in report.transfer if t.target == A]
    assert empty
    assert all(t.n == 0 and t.accuracy_drop is None and t.accuracy_drop_ci is None for t in empty)


def test_claims_of_one_persona_fit_but_held_out_figures_are_na(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path
) -> None:
    report = job(small_personas[:1], tmp_path).run(scripted_run, [A], compare=False)
    (result,) = report.models
    assert result.figures.n_personas == 1
    assert result.figures.n_folds == 0
    assert result.figures.note is not None
    assert "2 personas" in result.figures.note
    for figs in result.figures.paths.values():
        assert figs.n_scored == 0
        assert figs.auroc is None
    # the persona's 11 claims hold both classes: a profile is fitted, with no held-out figure
    assert result.error is None
    profile = ProfileStore(tmp_path).for_writer(
        A, ProfileMode.SELF_AUDIT_SEPARATE, result.prompt_version
    )
    assert not any(k.startswith("heldout_self_audit_auroc") for k in profile.metrics)
    assert profile.metrics["heldout_folds"] == 0.0


def test_personas_the_evidence_profile_saw_are_counted_and_can_be_left_out(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path
) -> None:
    # an evidence profile fitted on the packaged claims' train split, which holds claims about
    # every persona of the small file
    seen = make_profile().model_copy(
        update={"fitted_on": DataRef(path="claims.jsonl", sha256="0", n_examples=1, split="train")}
    )
    fitter = job(small_personas, tmp_path)
    fitter.evidence_profile = seen
    (scored_all,) = fitter.run(scripted_run, [A], compare=False).models
    assert scored_all.evidence_training_claims == scored_all.alignment.aligned > 0
    assert scored_all.figures.n_claims == scored_all.alignment.aligned
    fitter.held_out_only = True
    report = fitter.run(scripted_run, [A], compare=False)
    (left_out,) = report.models
    assert report.held_out_only
    assert left_out.evidence_training_claims == scored_all.alignment.aligned
    assert left_out.figures.n_claims == 0
    assert left_out.error is not None
    assert "0 aligned claim(s)" in left_out.error


def test_a_run_without_self_audits_is_all_unaligned(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    run_dir = make_bench_run(
        tmp_path / "run", small_personas, {A: "honest"}, stages=[Stage.TASK, Stage.JUDGE]
    )
    alignment = align_self_audit(run_dir, A, personas=small_personas, matcher=matcher())
    assert alignment.counts.audited_units == 0
    assert alignment.counts.aligned == 0
    assert alignment.counts.unaligned_judge_claims == alignment.counts.judge_claims > 0


def test_a_run_whose_task_answers_never_end_names_why_nothing_aligned(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    run_dir = make_bench_run(tmp_path / "run", small_personas, {A: "never_ends", B: "honest"})
    report = job(small_personas, tmp_path / "profiles").run(run_dir, [A, B], compare=False)
    cut, honest = report.models
    units = honest.alignment.task_outputs  # every Task unit of the run, for each model
    assert units > 0
    assert cut.alignment.task_outputs == 0
    assert cut.alignment.failed_units == {"task TruncatedOutputError": units}
    assert cut.alignment.units_with_both == cut.alignment.aligned == 0
    assert cut.figures.note == "no aligned claims to score"
    assert cut.error is not None
    assert "0 aligned claim(s)" in cut.error
    assert "0 Task output(s), 0 self-audited, 0 judged" in cut.error
    assert f"{units} task TruncatedOutputError (answers cut at --max-tokens" in cut.error
    assert cut.profile_path is None
    # the other model of the same run is untouched
    assert honest.alignment.failed_units == {}
    assert honest.error is None


# -------------------------------------------------------------------------------- CLI


@pytest.fixture
def offline_cli(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.setattr(_calibrate, "_linker", lambda: EvidenceLinker(HashingEmbedder()))
    monkeypatch.setattr(_calibrate, "_evidence_profile", make_profile)
    monkeypatch.setattr(_calibrate, "_matcher", lambda linker: matcher())
    return CliRunner()


def test_cli_from_bench_compare_prints_and_writes_the_tables(
    scripted_run: Path, offline_cli: CliRunner, tmp_path: Path
) -> None:
    personas_file = Path(__file__).with_name("personas_small.jsonl")
    out = tmp_path / "figures"
    result = offline_cli.invoke(
        app,
        [
            "calibrate", "from-bench", str(scripted_run), "--compare",
            "--profile-dir", str(tmp_path / "profiles"), "--personas-file", str(personas_file),
            "--out-dir", str(out), "--n-boot", "50",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    text = result.output
    assert "self-audit claims aligned" in text
    assert "cross-model transfer" in text
    assert "self-audit alone" in text
    assert "evidence alone" in text
    assert "both" in text
    assert "offline mock models" in text
    data = json.loads((out / "from_bench.json").read_text())
    assert [m["model"] for m in data["models"]] == [A, B]
    assert len(data["transfer"]) == 4
    md = (out / "from_bench.md").read_text()
    assert "## Cross-model transfer" in md
    assert "Regenerate: `mirage calibrate from-bench" in md
    for m in data["models"]:
        assert Path(m["profile_path"]).is_file()
        a = m["alignment"]
        cells = [a["units_with_both"], a["judge_claims"], a["audit_claims"], a["aligned"],
                 a["unaligned_judge_claims"], a["unaligned_audit_claims"]]  # fmt: skip
        row = re.escape(m["model"]) + r"\s*│\s*" + r"\s*│\s*".join(str(c) for c in cells)
        assert re.search(row, text), row
    # B (inverted) left one claim out and added one per output: 12 unaligned on each side
    assert data["models"][1]["alignment"]["unaligned_judge_claims"] == 12


def test_cli_from_bench_needs_a_model_and_reports_a_failed_fit(
    tmp_path: Path, small_personas: list[Persona], offline_cli: CliRunner
) -> None:
    run_dir = make_bench_run(tmp_path / "run", small_personas, {A: "unrelated", B: "honest"})
    personas_file = str(Path(__file__).with_name("personas_small.jsonl"))
    missing = offline_cli.invoke(app, ["calibrate", "from-bench", str(run_dir)])
    assert missing.exit_code == 1
    assert "give --model" in missing.output
    failed = offline_cli.invoke(
        app,
        ["calibrate", "from-bench", str(run_dir), "--model", A, "--personas-file", personas_file,
         "--n-boot", "20"],
    )  # fmt: skip
    assert failed.exit_code == 1
    assert "no profile" in failed.output
    assert "n/a" in failed.output
    assert "Traceback" not in failed.output
    bad = offline_cli.invoke(
        app, ["calibrate", "from-bench", str(run_dir), "--model", A, "--objective", "f1"]
    )
    assert bad.exit_code == 1
    assert "objective must look like" in bad.output


def _judge_never_grounded(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
    """The offline judge, except that it calls every grounded claim INFERRED_REASONABLE (as the
    local base model's judge did: it never labelled a claim GROUNDED)."""
    return offline_answer(messages, schema, salt=JUDGE).replace(
        '"GROUNDED"', '"INFERRED_REASONABLE"'
    )


def test_a_judge_that_never_says_grounded_gives_a_profile_that_never_says_stated(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """The OI part is fitted; the stated part, with no GROUNDED claim to learn from, never tags
    a claim stated (fail closed), and the report says so instead of refusing the whole fit."""
    rules = {A: scripted("honest"), JUDGE: _judge_never_grounded}
    run = BenchmarkRun(
        small_config(limit=6, stages=STAGES, guard="off"),
        tmp_path / "run",
        provider=recording_provider(CallLog(), rules=rules),
        options=FAST,
        personas=small_personas,
    )
    anyio.run(run.run)
    report = job(small_personas, tmp_path / "profiles").run(tmp_path / "run", [A], compare=False)
    (result,) = report.models
    assert result.error is None
    assert result.never_stated
    assert result.threshold is not None
    profile = ProfileStore(tmp_path / "profiles").for_writer(
        A, ProfileMode.SELF_AUDIT_SEPARATE, result.prompt_version
    )
    assert is_never_stated(profile)
    assert profile.stated_threshold == 1.0
    assert "stated:never" in profile.objective
    rows = [
        {f: float(i % 7) - 3.0 for f in profile.stated_model.features} for i in range(50)
    ]  # any features at all
    assert (profile.stated_model.predict_proba(profile.stated_model.matrix(rows)) < 1e-9).all()
    assert "Never tags a claim stated" in render_markdown(report, "mirage calibrate from-bench")


def test_the_honest_scripted_run_fits_a_stated_part(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path
) -> None:
    (result,) = job(small_personas, tmp_path).run(scripted_run, [A], compare=False).models
    assert not result.never_stated
    profile = ProfileStore(tmp_path).for_writer(
        A, ProfileMode.SELF_AUDIT_SEPARATE, result.prompt_version
    )
    assert not is_never_stated(profile)
    assert profile.stated_threshold < 1.0


class _UniformPairs:
    """A claim-support model known by its weights' hash that reads every pair alike."""

    sha256 = "c" * 64

    def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> object:
        import numpy as np

        return np.full((len(premises), 4), 0.25, np.float32)


def test_the_profile_records_the_support_model_its_features_came_from(
    scripted_run: Path, small_personas: list[Persona], tmp_path: Path
) -> None:
    """A guard refuses a profile fitted with another claim-support model (as for fit-evidence)."""
    linker = EvidenceLinker(HashingEmbedder(), support=ClaimSupport(_UniformPairs()))
    (result,) = (
        job(small_personas, tmp_path / "with", linker=linker)
        .run(scripted_run, [A], compare=False)
        .models
    )
    profile = ProfileStore(tmp_path / "with").for_writer(
        A, ProfileMode.SELF_AUDIT_SEPARATE, result.prompt_version
    )
    assert profile.support_model == "c" * 64
    with pytest.raises(ProfileMismatchError, match="support model"):
        profile.check_support_model("d" * 64)
    # no claim-support model (lexical features only): nothing to record
    (plain,) = (
        job(small_personas, tmp_path / "without").run(scripted_run, [A], compare=False).models
    )
    lexical = ProfileStore(tmp_path / "without").for_writer(
        A, ProfileMode.SELF_AUDIT_SEPARATE, plain.prompt_version
    )
    assert lexical.support_model is None
