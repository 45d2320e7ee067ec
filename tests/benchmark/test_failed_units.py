"""Failed units do not vanish: truncation is detected, --retry-failed redoes them, the report
shows the failed share per model and stage."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._config import RunConfig, RuntimeOptions
from mirage_guard.benchmark._records import JudgeRecord, SelfAuditRecord, TaskRecord
from mirage_guard.benchmark._report import write_report
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import SelfAuditOutput
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.llm import Completion, Message, Usage
from tests.benchmark.small_run import FAST, small_config
from tests.fakes.bench import JUDGE, SUBJECTS, CallLog, offline_rule, recording_provider

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]
SUBJECT = SUBJECTS[0]


def _cut(text: str) -> Completion:
    """What a provider returns when the answer hits max_tokens."""
    half = text[: max(1, len(text) // 2)]
    return Completion(
        text=half, model=SUBJECT, usage=Usage(completion_tokens=2048), finish_reason="length"
    )


def _truncating(kinds: set[str]) -> Callable[[Sequence[Message], type[BaseModel] | None], object]:
    """The offline subject, but its task answers (and/or self-audits) come back truncated."""
    answer = offline_rule(SUBJECT)

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> object:
        text = answer(messages, schema)
        kind = "self_audit" if schema is SelfAuditOutput else "task" if schema is None else ""
        return _cut(text) if kind in kinds else text

    return rule


def _config() -> RunConfig:
    return small_config(
        stages=["task", "self_audit", "judge"], models=[SUBJECT], limit=2, guard="off"
    )


async def test_truncated_answers_are_failed_units_not_silently_used(
    tmp_path: Path, make_run: MakeRun
) -> None:
    run, _ = make_run(tmp_path / "run", _config(), rules={SUBJECT: _truncating({"self_audit"})})
    summary = await run.run()
    rd = RunDirectory(tmp_path / "run")
    audits = rd.records(SelfAuditRecord)
    assert len(audits) == 4
    assert all(a.error is not None and a.error.type == "TruncatedOutputError" for a in audits)
    assert all(a.claims == [] for a in audits)
    assert all(len(a.calls) == 1 for a in audits)  # the cut answer was paid for
    assert summary.errors == 4
    assert all(t.ok for t in rd.records(TaskRecord))
    analysis = analyse(tmp_path / "run")
    rows = {(f.model, f.stage): f for f in analysis.failures}
    audit_row = rows[(SUBJECT, "self_audit")]
    assert (audit_row.units, audit_row.failed, audit_row.truncated) == (4, 4, 4)
    assert audit_row.failed_pct == 100.0
    task_row = rows[(SUBJECT, "task")]
    assert (task_row.units, task_row.failed) == (4, 0)
    assert rows[(JUDGE, "judge")].failed == 0  # judge units are the judge's
    files = write_report(tmp_path / "run")
    md = files.markdown.read_text()
    assert "## Failed units" in md
    assert f"| {SUBJECT} | self_audit | 4 | 4 | 100.0 | 4 | 0 | 0 | 0 |" in md


async def test_a_truncated_task_answer_is_not_judged(tmp_path: Path, make_run: MakeRun) -> None:
    run, _ = make_run(tmp_path / "run", _config(), rules={SUBJECT: _truncating({"task"})})
    await run.run()
    rd = RunDirectory(tmp_path / "run")
    assert all(t.error and t.error.type == "TruncatedOutputError" for t in rd.records(TaskRecord))
    assert rd.records(JudgeRecord) == []


async def test_retry_failed_redoes_final_failures_with_a_fresh_call(
    tmp_path: Path, make_run: MakeRun, small_personas: list[Persona]
) -> None:
    config = _config()
    first, _ = make_run(tmp_path / "run", config, rules={SUBJECT: _truncating({"self_audit"})})
    await first.run()
    # a plain resume keeps final failures
    plain, log = make_run(tmp_path / "run", config)
    await plain.run()
    assert log.fingerprints == []
    # --retry-failed asks again (the cached cut answer is not reused) and keeps the new answer
    log = CallLog()
    retry = BenchmarkRun(
        config,
        tmp_path / "run",
        provider=recording_provider(log),
        options=RuntimeOptions(**{**FAST.model_dump(), "retry_failed": True}),
        personas=small_personas,
    )
    summary = await retry.run()
    assert log.by_model == {SUBJECT: 4}  # only the 4 failed self-audits, nothing else
    assert summary.errors == 0
    audits = RunDirectory(tmp_path / "run").records(SelfAuditRecord)
    assert all(a.ok and a.claims for a in audits)
    assert all(a.attempt == 2 for a in audits)
    rows = {(f.model, f.stage): f for f in analyse(tmp_path / "run").failures}
    assert rows[(SUBJECT, "self_audit")].failed == 0
    assert rows[(SUBJECT, "self_audit")].retried_units == 4
    # and a second --retry-failed has nothing left to do
    log = CallLog()
    again = BenchmarkRun(
        config,
        tmp_path / "run",
        provider=recording_provider(log),
        options=RuntimeOptions(**{**FAST.model_dump(), "retry_failed": True}),
        personas=small_personas,
    )
    await again.run()
    assert log.fingerprints == []


def test_cli_takes_max_tokens_and_retry_failed(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app as mirage
    from tests.benchmark.small_run import PERSONAS_FILE

    args = [
        "bench",
        "run",
        "--models",
        "mock/alpha",
        "--judge",
        "mock/judge",
        "--personas-file",
        str(PERSONAS_FILE),
        "--limit",
        "1",
        "--tasks",
        "gift",
        "--stages",
        "task,judge",
        "--max-tokens",
        "4096",
        "--run-dir",
        str(tmp_path / "run"),
        "--no-progress",
    ]
    runner = CliRunner()
    first = runner.invoke(mirage, args)
    assert first.exit_code == 0, first.output
    assert RunDirectory(tmp_path / "run").read_manifest().config.max_tokens == 4096
    again = runner.invoke(mirage, [*args, "--retry-failed"])
    assert again.exit_code == 0, again.output
    assert "0 / 2" in again.output  # nothing failed, so nothing redone
