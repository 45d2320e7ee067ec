"""What a release engineer found running `mirage bench` for the first time (2026-12-07):

- a provider that refuses the credentials stopped the run with a 150-line traceback (the task
  group's ExceptionGroup, which no ``except MirageError`` catches);
- an ``openai/`` model given its own ``--api-base`` skipped the key check, and failed for want of
  OPENAI_API_KEY after the first calls;
- ``--guard on`` with ``--limit`` below 9 (training personas only) ran, exit 0, with no guard arm
  and no Accum stage at all;
- the report of an interrupted run looked complete;
- a unit redone after a timeout was cached under a key no other run asks for;
- a task named twice ran twice, settings that run nothing were accepted, the stages' order made
  another configuration, an unpriced run's summary read 0.0000 and the report's run command did
  not paste into a shell.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError
from typer.testing import CliRunner

from mirage_guard.adapters.cli._bench import app as bench
from mirage_guard.adapters.cli._bench import missing_keys
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import Accounting, TaskRecord
from mirage_guard.benchmark._report import _banner, write_report
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.errors import LLMAuthError, LLMUnavailableError
from mirage_guard.guard.llm import Message
from tests.benchmark.small_run import FAST, PERSONAS_FILE, small_config
from tests.fakes.bench import CallLog, offline_rule, real_guard, recording_provider
from tests.fakes.embedder import HashingEmbedder

RUNNER = CliRunner()


def _refuses(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
    raise LLMAuthError("401: invalid api key", model="mock/judge")


async def test_refused_credentials_stop_the_run_with_the_error_itself(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    run = BenchmarkRun(
        small_config(stages=["task", "judge"], guard="off"),
        tmp_path / "run",
        provider=recording_provider(CallLog(), rules={"mock/judge": _refuses}),
        options=FAST,
        guard_factory=real_guard,
        personas=small_personas,
    )
    with pytest.raises(LLMAuthError, match="invalid api key"):
        await run.run()


def test_the_cli_prints_refused_credentials_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import mirage_guard.adapters.cli._bench as cli

    real = cli.provider_for

    def refusing_judge(options: object) -> object:
        factory = real(options)  # type: ignore[arg-type]
        return lambda model: (
            recording_provider(CallLog(), rules={model: _refuses})(model)
            if model == "mock/judge"
            else factory(model)
        )

    monkeypatch.setattr(cli, "provider_for", refusing_judge)
    result = RUNNER.invoke(
        bench,
        [
            "run", "--models", "mock/writer-a", "--judge", "mock/judge",
            "--personas-file", str(PERSONAS_FILE), "--tasks", "gift", "--stages", "task,judge",
            "--limit", "3", "--no-progress", "--run-dir", str(tmp_path / "run"),
        ],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    assert result.output.strip().splitlines() == ["error: [mock/judge] 401: invalid api key"]


def test_an_openai_model_on_its_own_api_base_still_needs_its_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert missing_keys(["openai/gemma3-270m", "hosted_vllm/gemma3-270m", "mock/j"]) == {
        "openai/gemma3-270m": ["OPENAI_API_KEY"]
    }
    result = RUNNER.invoke(
        bench,
        [
            "run", "--models", "hosted_vllm/gemma3-270m", "--judge", "openai/gemma3-270m",
            "--api-base", "http://127.0.0.1:9/v1",
            "--api-base", "openai/gemma3-270m=http://127.0.0.1:9/v1",
            "--limit", "2", "--tasks", "gift", "--no-progress",
            "--run-dir", str(tmp_path / "unused"),
        ],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "openai/gemma3-270m needs OPENAI_API_KEY" in result.output
    assert not (tmp_path / "unused").exists()


def test_a_guard_arm_without_a_held_out_persona_is_refused(tmp_path: Path) -> None:
    result = RUNNER.invoke(
        bench,
        [
            "run", "--models", "mock/writer-a", "--judge", "mock/judge", "--limit", "6",
            "--tasks", "gift", "--guard", "on", "--no-progress",
            "--run-dir", str(tmp_path / "run"),
        ],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "every selected persona (6) is one a guard profile was fitted on" in result.output
    assert not (tmp_path / "run").exists()
    nine = RUNNER.invoke(
        bench,
        [
            "run", "--models", "mock/writer-a", "--judge", "mock/judge", "--limit", "9",
            "--tasks", "gift", "--stages", "task,judge", "--guard", "on", "--no-progress",
            "--run-dir", str(tmp_path / "nine"),
        ],
    )  # fmt: skip
    assert nine.exit_code == 0, nine.output
    assert (tmp_path / "nine" / "records" / "guard.jsonl").read_text().strip()


async def test_a_report_on_an_interrupted_run_says_it_has_not_finished(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """It looked complete ("failed 0", no banner) with a third of its units recorded."""
    config = small_config(stages=["task", "self_audit", "judge"], guard="off")

    def build(kill_after: int | None) -> BenchmarkRun:
        return BenchmarkRun(
            config,
            tmp_path / "run",
            provider=recording_provider(CallLog(), kill_after=kill_after),
            options=FAST,
            personas=small_personas,
        )

    with pytest.raises(BaseException):  # noqa: B017, PT011 (the task group's group of kills)
        await build(kill_after=5).run()
    manifest = RunDirectory(tmp_path / "run").read_manifest()
    assert manifest.finished is False
    assert manifest.expected_units == {"task": 12, "self_audit": 12, "judge": 12}
    half = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    banner = _banner(half)
    assert banner is not None
    assert "This run has not finished" in banner
    assert half.recorded_units["task"] < 12
    assert f"task {half.recorded_units['task']} of 12" in banner
    await build(kill_after=None).run()
    done = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    assert done.manifest.finished is True
    assert done.recorded_units == {"task": 12, "self_audit": 12, "judge": 12}
    assert "not finished" not in (_banner(done) or "")


async def test_a_unit_redone_after_a_timeout_keeps_its_cache_key(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """Another judge on the same outputs (a new run dir, the same cache) found no cached Task
    answer for a unit redone after a transient error: the redo was cached under a try-2 key."""
    config = small_config(stages=["task"], guard="off")
    down = {"subject": True}
    subject = config.models[0]

    def flaky(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        if down["subject"]:
            raise LLMUnavailableError("503 service unavailable", model=subject)
        return offline_rule(subject)(messages, schema)

    def build(run_dir: Path, log: CallLog) -> BenchmarkRun:
        return BenchmarkRun(
            config,
            run_dir,
            provider=recording_provider(log, rules={subject: flaky}),
            options=FAST,
            cache_dir=tmp_path / "cache",
            personas=small_personas,
        )

    await build(tmp_path / "run", CallLog()).run()  # every Task of the subject fails, retryable
    down["subject"] = False
    await build(tmp_path / "run", CallLog()).run()  # a resume redoes them (attempt 2)
    assert {r.attempt for r in RunDirectory(tmp_path / "run").records(TaskRecord)
            if r.model == subject} == {2}  # fmt: skip
    again = CallLog()
    await build(tmp_path / "other", again).run()
    assert again.fingerprints == []  # every Task answered by the cache


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"tasks": ["gift", "gift"]}, "task 'gift' is named twice"),
        ({"stages": ["task", "task"]}, "stage 'task' is named twice"),
        ({"personas": ["st-001", "st-001"]}, "persona 'st-001' is named twice"),
        ({"max_tokens": 0}, "greater than or equal to 1"),
        ({"accum_personas": 0}, "--accum-personas 0 with the accum stage"),
        ({"families": {"mock/zzz": "x"}}, "--family names 'mock/zzz'"),
    ],
)
def test_settings_that_would_run_twice_or_nothing_are_refused(
    overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ValidationError, match=message):
        small_config(**overrides)
    assert small_config(accum_personas=0, stages=["task"]).accum_personas == 0


def test_the_stages_order_is_the_pipelines() -> None:
    given = small_config(stages=["task", "judge", "self_audit"])
    assert [s.value for s in given.stages] == ["task", "self_audit", "judge"]
    assert given.config_hash() == small_config(stages=["task", "self_audit", "judge"]).config_hash()


def test_an_unpriced_run_never_reads_as_costing_nothing() -> None:
    unpriced = Accounting(calls=16, cost_unknown_calls=16)
    assert unpriced.cost_summary() == "– (+16 calls of unknown price)"
    assert Accounting(calls=4, cost_usd=0.0123).cost_summary() == "0.0123"
    some = Accounting(calls=4, cost_usd=0.5, cost_unknown_calls=1)
    assert some.cost_summary() == "at least 0.5000 (+1 calls of unknown price)"


async def test_the_reports_run_command_pastes_into_a_shell(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    run = BenchmarkRun(
        small_config(stages=["task"], guard="off"),
        tmp_path / "run",
        provider=recording_provider(CallLog()),
        options=FAST,
        personas=small_personas,
    )
    await run.run()
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["command"] = ["mirage", "bench", "run", "--stop", "\\n\\n", "--run-dir", "my runs"]
    path.write_text(json.dumps(manifest))
    write_report(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    md = (tmp_path / "run" / "report" / "report.md").read_text()
    assert "`mirage bench run --stop '\\n\\n' --run-dir 'my runs'`" in md
