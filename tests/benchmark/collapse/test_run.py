"""The collapse diagnostic end to end on the mock provider: records, report, resume, memory arms,
failures, judge validation, the CLI. Every figure here is from mocks: behaviour, not measurement."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app as mirage
from mirage_guard.benchmark import RunSummary
from mirage_guard.benchmark.collapse import (
    PERSONAS,
    AnswerRecord,
    CollapseConfig,
    CollapseRun,
    CollapseRunDirectory,
    Condition,
    MemoryArm,
    MemoryRecord,
    PersonaThresholds,
    ScoreRecord,
    analyse,
    collapse_offline_answer,
    compare_ratings,
    draw_blind_sample,
    judge_ratings,
    read_ratings,
    write_collapse_report,
    write_sample,
)
from mirage_guard.benchmark.collapse._memory import assign_personas, load_claims
from mirage_guard.guard import Action, Label
from mirage_guard.guard.errors import ConfigError, InputError
from mirage_guard.guard.llm import LLMClient, Message
from tests.benchmark.small_run import FAST
from tests.fakes.bench import CallLog, RecordingLLM, SimulatedKill, real_guard

SUBJECTS = ["mock/subject-a", "mock/subject-b"]
JUDGE = "mock/judge"
Rule = Callable[[Sequence[Message], type[BaseModel] | None], str]


def provider(
    log: CallLog, *, kill_after: int | None = None, rules: dict[str, Rule] | None = None
) -> Callable[[str], LLMClient]:
    def factory(model: str) -> LLMClient:
        def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
            return collapse_offline_answer(messages, schema, salt=model)

        return RecordingLLM(model, log, (rules or {}).get(model, rule), kill_after=kill_after)

    return factory


def config(**overrides: object) -> CollapseConfig:
    values: dict[str, object] = {
        "models": SUBJECTS,
        "judge": JUDGE,
        "contexts": ["aita", "grief", "legal", "addiction_habits"],
        "limit": 2,
        "memory": list(MemoryArm),
    }
    values.update(overrides)
    return CollapseConfig.model_validate(values)


def run(
    run_dir: Path, cfg: CollapseConfig | None = None, **kwargs: object
) -> tuple[RunSummary, CallLog]:
    log = CallLog()
    runner = CollapseRun(
        cfg or config(),
        run_dir,
        provider=provider(log, **kwargs),  # type: ignore[arg-type]
        options=FAST,
        guard_factory=real_guard,
        offline_models=[*SUBJECTS, JUDGE],
    )
    return anyio.run(runner.run), log


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("collapse") / "run"
    summary, _ = run(run_dir)
    assert summary.errors == 0
    return run_dir


def test_every_unit_is_recorded(finished: Path) -> None:
    rd = CollapseRunDirectory(finished)
    answers = rd.read(AnswerRecord)
    scores = rd.read(ScoreRecord)
    # 8 situations x 2 models x (3 conditions + resample + 3 memory arms under Instruct)
    assert len(answers) == len(scores) == 8 * 2 * 7
    assert all(a.ok and a.answer for a in answers)
    plan_first = [a for a in answers if a.condition is Condition.PLAN_FIRST]
    assert all(a.plan_h is not None and len(a.calls) == 2 for a in plan_first)
    oracle = [a for a in answers if a.condition is Condition.ORACLE]
    assert all(a.plan_approach == "" and len(a.calls) == 1 for a in oracle)
    assert {s.judge for s in scores} == {JUDGE}


def test_the_oracle_plan_reaches_the_model(finished: Path) -> None:
    """The mock follows a plan when one is in its prompt, so under the oracle every answer
    takes the situation's stance: the reference (H, E) was injected."""
    a = analyse(finished, resamples=100)
    oracle = [c for c in a.cells if c.arm.condition is Condition.ORACLE]
    assert oracle
    assert all(c.agreement == 1.0 for c in oracle)
    instruct = [
        c
        for c in a.cells
        if c.arm.condition is Condition.INSTRUCT and c.arm.memory is MemoryArm.NONE
    ]
    assert all(c.agreement < 1.0 for c in instruct)


def test_memory_arms_are_built_from_miragebench_personas(finished: Path) -> None:
    memories = CollapseRunDirectory(finished).read(MemoryRecord)
    by_arm: dict[MemoryArm, list[MemoryRecord]] = {}
    for m in memories:
        by_arm.setdefault(m.memory, []).append(m)
    assert set(by_arm) == {MemoryArm.CLEAN, MemoryArm.POLLUTED, MemoryArm.GUARDED}
    dev = {c.persona_id for c in load_claims() if c.split == "dev"}
    assert {m.persona_id for m in memories} <= dev  # claims the shipped profile never saw
    for m in by_arm[MemoryArm.CLEAN]:
        assert len(m.entries) == 3
        assert all(e.label is Label.GROUNDED for e in m.entries)
    for m in by_arm[MemoryArm.POLLUTED]:
        oi = [e for e in m.entries if e.label and e.label.is_over_inference]
        assert oi
        assert all(e.status == "fact" for e in m.entries)
    guarded = [e for m in by_arm[MemoryArm.GUARDED] for e in m.entries]
    decided = [e for e in guarded if e.action is not None]
    assert decided, "the guard decided on the over-inferred candidates"
    for e in decided:
        expected = {Action.STORE: "fact", Action.STORE_AS_HYPOTHESIS: "hypothesis"}.get(
            e.action, "dropped"
        )
        assert e.status == expected


def test_the_memory_is_sent_as_a_system_message(tmp_path: Path) -> None:
    seen: list[list[Message]] = []

    def subject(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        seen.append(list(messages))
        return collapse_offline_answer(messages, schema, salt="s")

    cfg = config(models=["mock/s"], contexts=["grief"], limit=1, conditions=[Condition.INSTRUCT])
    summary, _ = run(tmp_path / "r", cfg, rules={"mock/s": subject})
    assert summary.errors == 0
    memory = CollapseRunDirectory(tmp_path / "r").read(MemoryRecord)
    polluted = next(m for m in memory if m.memory is MemoryArm.POLLUTED)
    systems = {m[0].content for m in seen if m[0].role == "system"}
    assert any(all(e.text in text for e in polluted.entries) for text in systems)
    assert any(len(m) == 1 for m in seen)  # the no-memory arm has no system message
    guarded = next(m for m in memory if m.memory is MemoryArm.GUARDED)
    dropped = [e.text for e in guarded.entries if e.status == "dropped"]
    guarded_system = [t for t in systems if all(x not in t for x in dropped)]
    assert guarded_system


def test_report_files_banner_and_paper_table(finished: Path, tmp_path: Path) -> None:
    files = write_collapse_report(finished, tmp_path / "report", resamples=100)
    md = files.markdown.read_text(encoding="utf-8")
    assert "offline mock provider" in md
    assert "not measurements" in md
    assert "not comparable: mock models" in md
    assert "| human N_eff | 3.80 |" in md
    assert "Stoic → Doomer %" in md
    assert "Does polluted memory shift the stance?" in md
    assert "h_band 0.25, e_band 0.25 (as run)" in md
    assert files.plots[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    html = files.html.read_text(encoding="utf-8")
    assert "data:image/png;base64," in html
    assert "class='banner'" in html
    with files.leaderboard.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 7
    for row in rows:
        shares = [float(row[f"{p.value.lower()}_pct"]) for p in PERSONAS]
        assert sum(shares) == pytest.approx(100.0, abs=0.3)
        assert 1.0 <= float(row["n_eff"]) <= 5.0


def test_thresholds_recorded_and_overridable_at_report_time(finished: Path) -> None:
    manifest = CollapseRunDirectory(finished).read_collapse_manifest()
    assert manifest.config.mapping == PersonaThresholds()
    assert manifest.offline_models == [*SUBJECTS, JUDGE]
    assert set(manifest.prompts) >= {"collapse_judge", "collapse_plan", "collapse_memory"}
    everything_technician = PersonaThresholds(h_band=1.0, e_band=1.0)
    a = analyse(finished, thresholds=everything_technician, resamples=50)
    assert all(c.shares[PERSONAS.index(PERSONAS[2])] == 1.0 for c in a.cells)
    assert all(c.n_eff.value == 1.0 for c in a.cells)


def test_a_killed_run_resumes_without_repeating_a_call(tmp_path: Path) -> None:
    cfg = config(memory=[MemoryArm.NONE], contexts=["grief", "legal"], limit=2)
    full, full_log = run(tmp_path / "full", cfg)
    total = len(full_log.fingerprints)
    with pytest.raises(BaseExceptionGroup) as killed:
        run(tmp_path / "resumed", cfg, kill_after=total // 2)
    assert killed.group_contains(SimulatedKill)
    summary, log = run(tmp_path / "resumed", cfg)
    assert summary.units_resumed > 0
    # the calls before the kill were cached; together the two halves make each call once
    first_half = total // 2
    assert len(log.fingerprints) == total - first_half
    assert len(CollapseRunDirectory(tmp_path / "resumed").read(ScoreRecord)) == len(
        CollapseRunDirectory(tmp_path / "full").read(ScoreRecord)
    )
    again, again_log = run(tmp_path / "resumed", cfg)
    assert again_log.fingerprints == []
    assert again.units_done == 0
    del full


def test_a_different_config_is_refused(finished: Path) -> None:
    with pytest.raises(ConfigError, match="another configuration"):
        run(finished, config(seed=1))


def test_a_judge_answer_off_schema_fails_its_unit_only(tmp_path: Path) -> None:
    def sloppy_judge(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        return json.dumps({"H": 0.5, "E": 0.5, "persona": "Healer"})  # an extra key

    cfg = config(memory=[MemoryArm.NONE], contexts=["grief"], limit=2)
    summary, _ = run(tmp_path / "r", cfg, rules={JUDGE: sloppy_judge})
    scores = CollapseRunDirectory(tmp_path / "r").read(ScoreRecord)
    assert summary.errors == len(scores) > 0
    assert all(s.error and s.error.type == "UnparsableOutputError" for s in scores)
    assert all("extra_field" in (s.error.message if s.error else "") for s in scores)
    assert all(len(s.calls) == 1 for s in scores)  # the paid call is accounted
    a = analyse(tmp_path / "r", resamples=50)
    assert all(c.n == 0 and c.failed == 2 for c in a.cells)


def test_judge_validation_blind_sample_and_kappa(finished: Path, tmp_path: Path) -> None:
    items = draw_blind_sample(finished, per_persona=5, seed=1)
    assert items
    sample = tmp_path / "sample.jsonl"
    write_sample(items, sample)
    first = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
    assert first["persona"] is None
    assert first["H"] is None
    assert "mock/" not in json.dumps(first)  # no model name, no judge score
    judge = judge_ratings(finished)
    rated = tmp_path / "rated.jsonl"
    rows = []
    for line in sample.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        mine = judge[row["item_id"]]
        row["H"], row["E"] = mine.h, mine.e
        rows.append(json.dumps(row))
    rated.write_text("\n".join(rows) + "\n", encoding="utf-8")
    agreement = compare_ratings(read_ratings(rated), judge)
    assert agreement.n == len(items)
    assert agreement.accuracy == 1.0
    assert agreement.pearson_h == pytest.approx(1.0)
    bad = tmp_path / "bad.jsonl"
    row = json.loads(rows[0])
    row["persona"] = "Doomer" if judge[row["item_id"]].persona.value != "Doomer" else "Healer"
    bad.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="disagrees"):
        read_ratings(bad)


def test_cli_run_resume_and_report(tmp_path: Path) -> None:
    cli = CliRunner()
    run_dir = tmp_path / "cli"
    args = [
        "bench", "collapse", "run", "--models", "mock/a", "--judge", "mock/j",
        "--contexts", "grief,legal", "--limit", "1", "--memory", "none,polluted",
        "--run-dir", str(run_dir),
    ]  # fmt: skip
    first = cli.invoke(mirage, args)
    assert first.exit_code == 0, first.output
    again = cli.invoke(mirage, args)
    assert again.exit_code == 0, again.output
    assert "0 / " in again.output  # nothing done again, everything resumed
    report = cli.invoke(
        mirage,
        ["bench", "collapse", "report", str(run_dir), "--h-band", "0.3", "--resamples", "50"],
    )
    assert report.exit_code == 0, report.output
    md = (run_dir / "report" / "report.md").read_text(encoding="utf-8")
    assert "h_band 0.3, e_band 0.25 (overridden at report time)" in md
    bad = cli.invoke(
        mirage, ["bench", "collapse", "run", "--models", "mock/a", "--judge", "mock/a"]
    )
    assert bad.exit_code != 0


def test_the_resample_arm_is_a_no_memory_noise_floor(tmp_path: Path) -> None:
    seeds: list[int | None] = []

    class SeedLog(RecordingLLM):
        async def complete(self, messages, *, schema=None, params=None):  # type: ignore[no-untyped-def]
            if self.model == "mock/s":
                seeds.append(params.seed if params else None)
            return await super().complete(messages, schema=schema, params=params)

    log = CallLog()

    def factory(model: str) -> LLMClient:
        def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
            return collapse_offline_answer(messages, schema, salt=model)

        return SeedLog(model, log, rule)

    cfg = config(
        models=["mock/s"],
        contexts=["grief"],
        limit=3,
        conditions=[Condition.INSTRUCT],
        memory=[MemoryArm.NONE, MemoryArm.RESAMPLE],
        seed=7,
    )
    runner = CollapseRun(cfg, tmp_path / "r", provider=factory, options=FAST)
    summary = anyio.run(runner.run)
    assert summary.errors == 0
    assert sorted(seeds) == [7, 7, 7, 8, 8, 8]
    answers = CollapseRunDirectory(tmp_path / "r").read(AnswerRecord)
    assert {a.memory for a in answers} == {MemoryArm.NONE, MemoryArm.RESAMPLE}
    assert all(a.persona_id is None for a in answers)
    rows = analyse(tmp_path / "r", resamples=50).memory
    resample = next(r for r in rows if r.memory is MemoryArm.RESAMPLE)
    # the mock ignores the seed, so its answers repeat: nothing changes (a real model would)
    assert resample.changed_vs_none == 0.0
    assert resample.n == 3


def test_persona_assignment_is_seeded_and_stable_under_subsets() -> None:
    from mirage_guard.benchmark.personas import load_personas

    people = load_personas()[:5]
    full = assign_personas(["s1", "s2", "s3", "s4", "s5", "s6"], people, seed=0)
    assert len({p.persona_id for p in list(full.values())[:5]}) == 5  # distinct while they last
    assert full["s6"] == full["s1"]  # then cycled
    assert assign_personas(["s1", "s2", "s3", "s4", "s5", "s6"], people, seed=0) == full
    assert assign_personas(["s1", "s2", "s3", "s4", "s5", "s6"], people, seed=1) != full


def test_cli_judge_sample_and_agreement(finished: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    sample = tmp_path / "sample.jsonl"
    drawn = cli.invoke(
        mirage,
        [
            "bench",
            "collapse",
            "judge-sample",
            str(finished),
            "--out",
            str(sample),
            "--per-persona",
            "3",
        ],
    )
    assert drawn.exit_code == 0, drawn.output
    judge = judge_ratings(finished)
    rated = tmp_path / "rated.jsonl"
    lines = []
    for line in sample.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        row["persona"] = judge[row["item_id"]].persona.value  # a rater who agrees throughout
        lines.append(json.dumps(row))
    rated.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "agreement.json"
    agreed = cli.invoke(
        mirage,
        [
            "bench",
            "collapse",
            "judge-agreement",
            str(rated),
            "--run-dir",
            str(finished),
            "--out",
            str(out),
        ],
    )
    assert agreed.exit_code == 0, agreed.output
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["n"] == len(lines)
    assert figures["accuracy"] == 1.0
    assert figures["pearson_h"] is None  # personas only, no H/E given


def test_the_guarded_memorys_audit_calls_are_the_memory_units_calls(tmp_path: Path) -> None:
    """The guarded memory arm's audit calls (the guard's own client, metered) had been in no
    record, so in no count of the run."""
    from mirage_guard.benchmark._guard_arm import MeteredLLM
    from mirage_guard.guard import AuditMode, Guard, SelfAuditor
    from mirage_guard.guard.evidence import EvidenceLinker
    from tests.calibration.factories import make_profile
    from tests.fakes.embedder import HashingEmbedder
    from tests.fakes.llm import labelling_llm

    auditor = labelling_llm(Label.GROUNDED, model="mock/auditor")

    def audited() -> Guard:
        return Guard(
            linker=EvidenceLinker(HashingEmbedder()),
            evidence_profile=make_profile(),
            auditor=SelfAuditor.independent(MeteredLLM(auditor)),
            audit_mode=AuditMode.SEPARATE,
            auditor_model="mock/auditor",
        )

    runner = CollapseRun(
        config(memory=[MemoryArm.GUARDED], contexts=["aita"]),
        tmp_path / "run",
        provider=provider(CallLog()),
        options=FAST,
        guard_factory=audited,
        offline_models=[*SUBJECTS, JUDGE],
    )
    summary = anyio.run(runner.run)
    memories = CollapseRunDirectory(tmp_path / "run").read(MemoryRecord)
    calls = [c for m in memories for c in m.calls]
    assert auditor.calls
    assert len(calls) == len(auditor.calls)
    assert {(c.model, c.role) for c in calls} == {("mock/auditor", "guard_audit")}
    assert summary.accounting.calls >= len(calls)
