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
from pydantic import BaseModel
from typer.testing import CliRunner

from mirage_guard.adapters.cli._bench import app as bench
from mirage_guard.adapters.cli._bench import missing_keys
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._config import RuntimeOptions
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import Accounting, TaskRecord
from mirage_guard.benchmark._report import _banner, write_report
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.errors import ConfigError, LLMAuthError, LLMUnavailableError
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
    monkeypatch.delenv("OLLAMA_API_BASE", raising=False)
    own = RuntimeOptions(
        api_base="http://127.0.0.1:9/v1",
        api_bases={m: "http://127.0.0.1:9/v1" for m in ("openai/gemma3-270m", "ollama/llama3")},
    )
    models = ["openai/gemma3-270m", "hosted_vllm/gemma3-270m", "ollama/llama3", "mock/j"]
    # ollama's endpoint variable is what --api-base gives; openai's client still needs a key
    assert missing_keys(models, own) == {"openai/gemma3-270m": ["OPENAI_API_KEY"]}
    local = [
        *("--models", "hosted_vllm/gemma3-270m", "--judge", "openai/gemma3-270m"),
        *("--api-base", "http://127.0.0.1:9/v1"),
        *("--api-base", "openai/gemma3-270m=http://127.0.0.1:9/v1"),
    ]
    for command in (["run", "--limit", "2", "--tasks", "gift", "--no-progress"],
                    ["collapse", "run"]):  # fmt: skip
        out = tmp_path / command[0]
        result = RUNNER.invoke(bench, [*command, *local, "--run-dir", str(out)])
        assert result.exit_code == 2, result.output
        assert "openai/gemma3-270m needs OPENAI_API_KEY" in result.output
        assert not out.exists()


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
        ({"max_tokens": 0}, "--max-tokens must be 1 or more"),
        ({"accum_personas": 0}, "--accum-personas 0 with the accum stage"),
        ({"families": {"mock/zzz": "x"}}, "--family names 'mock/zzz'"),
    ],
)
async def test_settings_that_would_run_twice_or_nothing_are_refused(
    tmp_path: Path, overrides: dict[str, object], message: str
) -> None:
    config = small_config(**overrides)
    assert any(message in r for r in config.refusals())
    run = BenchmarkRun(
        config, tmp_path / "run", provider=recording_provider(CallLog()), options=FAST
    )
    with pytest.raises(ConfigError, match=message):
        await run.run()
    assert not (tmp_path / "run").exists()
    assert small_config(accum_personas=0, stages=["task"]).refusals() == []


async def test_a_run_made_before_the_refusals_still_reports(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """Its manifest must still load (for the report, from-bench, a resume)."""
    await BenchmarkRun(
        small_config(stages=["task"], guard="off"),
        tmp_path / "run",
        provider=recording_provider(CallLog()),
        options=FAST,
        personas=small_personas,
    ).run()
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["config"]["tasks"] = ["gift", "gift"]
    manifest["config"]["families"] = {"mock/zzz": "x"}
    path.write_text(json.dumps(manifest))
    assert RunDirectory(tmp_path / "run").read_manifest().config.tasks == ["gift", "gift"]


async def test_a_run_started_with_the_stages_in_another_order_resumes(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """Its manifest holds the hash of the order it was given in (before the stages were put in
    the pipeline's order); the same command resumes it."""
    config = small_config(stages=["task", "self_audit", "judge"], guard="off")
    await BenchmarkRun(
        config, tmp_path / "run", provider=recording_provider(CallLog()), options=FAST,
        personas=small_personas,
    ).run()  # fmt: skip
    path = tmp_path / "run" / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["config"]["stages"] = ["task", "judge", "self_audit"]
    manifest["config_hash"] = "181d485a5a628dd3"  # as an earlier version hashed that order
    path.write_text(json.dumps(manifest))
    log = CallLog()
    await BenchmarkRun(
        small_config(stages=["task", "judge", "self_audit"], guard="off"),
        tmp_path / "run", provider=recording_provider(log), options=FAST,
        personas=small_personas,
    ).run()  # fmt: skip
    assert log.fingerprints == []


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


async def test_a_guard_arms_tagging_counts_as_judge_units(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    run = BenchmarkRun(
        small_config(stages=["task", "judge"], guard="on"),
        tmp_path / "run",
        provider=recording_provider(CallLog()),
        options=FAST,
        guard_factory=real_guard,
        personas=small_personas,
    )
    await run.run()
    a = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    assert a.manifest.finished is True
    assert a.recorded_units == a.manifest.expected_units  # guard records counted as judge


async def test_a_retry_after_an_old_runs_answered_failure_asks_under_a_new_key(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """A record written before ``cache_try`` was cached under its attempt: a unit whose try 1
    failed transiently and whose try 2 was an answered failure (cached under try 2) is retried
    under try 3, not by re-reading the failed answer of try 2."""
    config = small_config(stages=["task"], guard="off")
    await BenchmarkRun(
        config, tmp_path / "run", provider=recording_provider(CallLog()), options=FAST,
        personas=small_personas,
    ).run()  # fmt: skip
    path = tmp_path / "run" / "records" / "task.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    unit = rows[0]["unit"]
    transient = {**rows[0], "error": {"type": "LLMTimeoutError", "message": "t", "retryable": True}}
    answered = {
        **rows[0],
        "attempt": 2,
        "error": {"type": "TruncatedOutputError", "message": "cut", "retryable": False},
    }
    for row in (transient, answered):
        row.pop("cache_try", None)
    lines = [json.dumps(r) for r in (transient, answered, *rows[1:])]
    path.write_text("\n".join(lines) + "\n")
    assert RunDirectory(tmp_path / "run").answered_tries() == {unit: 2}
    log = CallLog()
    retry = BenchmarkRun(
        config, tmp_path / "run", provider=recording_provider(log),
        options=RuntimeOptions(**{**FAST.model_dump(), "retry_failed": True}),
        personas=small_personas,
    )  # fmt: skip
    await retry.run()
    (redone,) = [r for r in RunDirectory(tmp_path / "run").records(TaskRecord) if r.unit == unit]
    assert (redone.attempt, redone.cache_try) == (3, 3)
    assert len(log.fingerprints) == 1  # asked again under try 3


@pytest.mark.parametrize("labeller", ["MIRAGE_AUDITOR_MODEL", "MIRAGE_WRITER_MODEL"])
def test_the_guard_arms_self_audit_model_needs_its_key_too(
    labeller: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With MIRAGE_AUDIT_MODE=separate the guard arm calls an auditor (or the configured writer)
    on every tagging; without its key each decision failed closed on self_audit_failed, and the
    run exited 0 with guard figures that measured nothing."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("MIRAGE_AUDIT_MODE", "separate")
    monkeypatch.setenv(labeller, "anthropic/claude-sonnet-4-5")
    args = [
        "run", "--models", "mock/writer-a", "--judge", "mock/judge", "--limit", "9",
        "--tasks", "gift", "--stages", "task,judge", "--no-progress",
    ]  # fmt: skip
    result = RUNNER.invoke(bench, [*args, "--guard", "on", "--run-dir", str(tmp_path / "on")])
    assert result.exit_code == 2, result.output
    assert (
        f"anthropic/claude-sonnet-4-5 (the guard arm's self-audit, {labeller}) needs "
        "ANTHROPIC_API_KEY"
    ) in " ".join(result.output.split())
    assert not (tmp_path / "on").exists()
    # no guard arm, no self-audit call: nothing to check
    off = RUNNER.invoke(bench, [*args, "--guard", "off", "--run-dir", str(tmp_path / "off")])
    assert off.exit_code == 0, off.output
