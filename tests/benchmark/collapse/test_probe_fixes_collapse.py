"""Fixes from a run against a real base model (Gemma 3 270M on llama.cpp), checked offline:
an answer cut at --max-tokens or empty is a failed unit, never scored, redone by --retry-failed;
a judge answer that copies the prompt's placeholder is no score; the report states no finding
without data; ``collapse run`` takes --max-tokens and ``bench run``'s --api-base forms."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from mirage_guard.adapters.cli import _collapse
from mirage_guard.adapters.cli import app as mirage
from mirage_guard.benchmark import RunSummary, RuntimeOptions
from mirage_guard.benchmark.collapse import (
    AnswerRecord,
    CollapseConfig,
    CollapseRun,
    CollapseRunDirectory,
    Condition,
    MemoryArm,
    ScoreRecord,
    analyse,
    collapse_offline_answer,
    collapse_offline_llm,
    write_collapse_report,
)
from mirage_guard.benchmark.collapse._schemas import StancePlan, StanceScore
from mirage_guard.guard.llm import Completion, LLMClient, Message, Usage
from tests.benchmark.small_run import FAST
from tests.fakes.bench import CallLog, RecordingLLM

SUBJECT = "mock/subject"
JUDGE = "mock/judge"
Reply = str | Completion
Rule = Callable[[Sequence[Message], type[BaseModel] | None], Reply]


def offline(model: str) -> Rule:
    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> Reply:
        return collapse_offline_answer(messages, schema, salt=model)

    return rule


def cut(model: str, text: str) -> Completion:
    """What a provider returns for an answer stopped at max_tokens (the base model's case)."""
    return Completion(
        text=text, model=model, usage=Usage(completion_tokens=64), finish_reason="length"
    )


def subject(
    *, answer: Callable[[str], Reply] | None = None, plan: Callable[[str], Reply] | None = None
) -> Rule:
    """The offline subject, with its free-text answers and/or its plans replaced."""
    normal = offline(SUBJECT)

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> Reply:
        text = normal(messages, schema)
        if schema is None and answer is not None:
            return answer(text)
        if schema is StancePlan and plan is not None:
            return plan(text)
        return text

    return rule


def config(**overrides: object) -> CollapseConfig:
    values: dict[str, object] = {
        "models": [SUBJECT],
        "judge": JUDGE,
        "contexts": ["grief", "legal"],
        "limit": 1,
        "conditions": [Condition.INSTRUCT, Condition.PLAN_FIRST],
        "memory": [MemoryArm.NONE],
    }
    values.update(overrides)
    return CollapseConfig.model_validate(values)


def run(
    run_dir: Path,
    rules: dict[str, Rule] | None = None,
    *,
    options: RuntimeOptions = FAST,
) -> tuple[RunSummary, CallLog]:
    log = CallLog()

    def factory(model: str) -> LLMClient:
        return RecordingLLM(model, log, (rules or {}).get(model) or offline(model))

    runner = CollapseRun(
        config(), run_dir, provider=factory, options=options, offline_models=[SUBJECT, JUDGE]
    )
    return anyio.run(runner.run), log


# -- 1. an answer cut at the token cap, or empty, is a failed unit ------------------------------


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (lambda text: cut(SUBJECT, text[: len(text) // 2]), "TruncatedOutputError"),
        (lambda text: "  \n", "EmptyOutputError"),
    ],
    ids=["truncated", "empty"],
)
def test_a_cut_or_empty_answer_is_a_failed_unit_never_scored(
    tmp_path: Path, answer: Callable[[str], Reply], error: str
) -> None:
    summary, log = run(tmp_path / "r", {SUBJECT: subject(answer=answer)})
    rd = CollapseRunDirectory(tmp_path / "r")
    answers = rd.read(AnswerRecord)
    assert len(answers) == 4  # 2 situations x (instruct, plan_first)
    assert all(a.error is not None and a.error.type == error for a in answers)
    assert all(not a.error.retryable for a in answers if a.error)  # final, as MirageBench's
    assert all(a.answer == "" for a in answers)
    assert rd.read(ScoreRecord) == []  # nothing judged
    assert JUDGE not in log.by_model
    # the paid calls are accounted: Plan-First's plan call too
    assert sorted(len(a.calls) for a in answers) == [1, 1, 2, 2]
    assert summary.errors == 4
    a = analyse(tmp_path / "r", resamples=20)
    assert all(c.n == 0 and c.failed == 2 for c in a.cells)


@pytest.mark.parametrize("schema", [StancePlan, StanceScore], ids=["plan", "judge"])
def test_a_json_answer_cut_at_the_cap_is_not_used_even_if_it_parses(
    tmp_path: Path, schema: type[BaseModel]
) -> None:
    model = JUDGE if schema is StanceScore else SUBJECT
    normal = offline(model)

    def rule(messages: Sequence[Message], asked: type[BaseModel] | None) -> Reply:
        text = normal(messages, asked)
        return cut(model, text) if asked is schema else text

    summary, _ = run(tmp_path / "r", {model: rule})
    rd = CollapseRunDirectory(tmp_path / "r")
    records = rd.read(ScoreRecord) if schema is StanceScore else rd.read(AnswerRecord)
    failed = [r for r in records if not r.ok]
    assert failed
    assert len(failed) == (4 if schema is StanceScore else 2)  # every score / the plan_first ones
    assert all(r.error and r.error.type == "TruncatedOutputError" for r in failed)
    assert summary.errors == len(failed)


def test_a_failed_answer_is_kept_on_resume_and_redone_by_retry_failed(tmp_path: Path) -> None:
    truncating = {SUBJECT: subject(answer=lambda text: cut(SUBJECT, text[:10]))}
    run(tmp_path / "r", truncating)
    # a plain resume keeps the final failures: no call
    _, log = run(tmp_path / "r")
    assert log.fingerprints == []
    # --retry-failed asks again (not the cached cut answer), keeps the new answer, scores it
    retry = RuntimeOptions(**{**FAST.model_dump(), "retry_failed": True})
    summary, log = run(tmp_path / "r", options=retry)
    assert summary.errors == 0
    assert log.by_model[SUBJECT] == 6  # 2 instruct + 2 x (plan + answer), asked again
    rd = CollapseRunDirectory(tmp_path / "r")
    answers = rd.read(AnswerRecord)
    assert all(a.ok and a.answer and a.attempt == 2 for a in answers)
    assert [s.ok for s in rd.read(ScoreRecord)] == [True] * 4
    # and nothing is left to redo
    _, log = run(tmp_path / "r", options=retry)
    assert log.fingerprints == []


# -- 2. a judge answer that copies the prompt's placeholder is no score -------------------------


def test_a_judge_answer_copying_the_placeholder_fails_its_unit(tmp_path: Path) -> None:
    def lazy_judge(messages: Sequence[Message], schema: type[BaseModel] | None) -> Reply:
        return json.dumps({"H": 0, "E": 1, "rationale": "<one or two sentences>"})

    summary, _ = run(tmp_path / "r", {JUDGE: lazy_judge})
    scores = CollapseRunDirectory(tmp_path / "r").read(ScoreRecord)
    assert len(scores) == 4
    assert all(s.error and s.error.type == "UnparsableOutputError" for s in scores)
    assert all(
        "placeholder <one or two sentences>" in (s.error.message if s.error else "") for s in scores
    )
    assert all(s.h is None and len(s.calls) == 1 for s in scores)
    assert summary.errors == 4
    assert all(c.n == 0 for c in analyse(tmp_path / "r", resamples=20).cells)


def test_a_plan_copying_the_placeholder_fails_its_unit(tmp_path: Path) -> None:
    copied = json.dumps(
        {"H": 0.5, "E": 0.5, "approach": "<one or two sentences on how you will answer>"}
    )
    run(tmp_path / "r", {SUBJECT: subject(plan=lambda text: copied)})
    answers = CollapseRunDirectory(tmp_path / "r").read(AnswerRecord)
    plan_first = [a for a in answers if a.condition is Condition.PLAN_FIRST]
    assert len(plan_first) == 2
    assert all(a.error and "placeholder" in a.error.message for a in plan_first)
    assert all(a.ok for a in answers if a.condition is Condition.INSTRUCT)


# -- 3. the report states no finding without data -----------------------------------------------


def test_plan_first_lowers_n_eff_reads_no_data_when_the_plan_arm_has_no_answers(
    tmp_path: Path,
) -> None:
    run(tmp_path / "r", {SUBJECT: subject(plan=lambda text: "not json")})
    md = write_collapse_report(tmp_path / "r", resamples=20).markdown.read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if "Plan-First lowers N_eff" in line)
    assert re.search(r"\| yes \| – \(no data\): \d\.\d\d → – \|", row), row
    assert "no:" not in row


def test_plan_first_lowers_n_eff_still_says_yes_or_no_with_data(tmp_path: Path) -> None:
    run(tmp_path / "r")
    md = write_collapse_report(tmp_path / "r", resamples=20).markdown.read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if "Plan-First lowers N_eff" in line)
    assert "| yes | yes: " in row or "| yes | no: " in row


# -- 4. collapse run: --max-tokens, and --api-base as bench run reads it ------------------------

CLI_RUN = ["bench", "collapse", "run", "--contexts", "grief", "--limit", "1",
           "--conditions", "instruct"]  # fmt: skip


def test_cli_max_tokens_is_validated_and_recorded(tmp_path: Path) -> None:
    cli = CliRunner()
    base = [*CLI_RUN, "--models", "mock/a", "--judge", "mock/j"]
    bad = cli.invoke(mirage, [*base, "--max-tokens", "0", "--run-dir", str(tmp_path / "bad")])
    assert bad.exit_code == 1
    assert "--max-tokens" in bad.output
    assert not (tmp_path / "bad").exists()
    good = cli.invoke(mirage, [*base, "--max-tokens", "77", "--run-dir", str(tmp_path / "r")])
    assert good.exit_code == 0, good.output
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["max_tokens"] == 77
    default = cli.invoke(mirage, [*base, "--run-dir", str(tmp_path / "d")])
    assert default.exit_code == 0, default.output
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["max_tokens"] == 1024


@pytest.fixture
def seen_options(monkeypatch: pytest.MonkeyPatch) -> list[RuntimeOptions]:
    """The real provider swapped for the offline one: records the options it was built with."""
    seen: list[RuntimeOptions] = []

    def provider(options: RuntimeOptions) -> Callable[[str], LLMClient]:
        seen.append(options)
        return lambda model: collapse_offline_llm(model)

    monkeypatch.setattr(_collapse, "litellm_provider", provider)
    return seen


def test_cli_api_base_takes_url_and_model_equals_url(
    tmp_path: Path, seen_options: list[RuntimeOptions], monkeypatch: pytest.MonkeyPatch
) -> None:
    # litellm's openai/ client needs a key even for a local server (any value does): without
    # one the run is refused before any call (tests/benchmark/test_bench_probe_fixes.py)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")
    args = [
        *CLI_RUN, "--models", "hosted_vllm/gemma3-270m", "--judge", "openai/gemma3-270m",
        "--api-base", "http://127.0.0.1:8081/v1",
        "--api-base", "openai/gemma3-270m=http://127.0.0.1:8082/v1",
        "--run-dir", str(tmp_path / "r"),
    ]  # fmt: skip
    result = CliRunner().invoke(mirage, args)
    assert result.exit_code == 0, result.output
    (options,) = seen_options
    assert options.api_base_for("hosted_vllm/gemma3-270m") == "http://127.0.0.1:8081/v1"
    assert options.api_base_for("openai/gemma3-270m") == "http://127.0.0.1:8082/v1"
    assert len(CollapseRunDirectory(tmp_path / "r").read(ScoreRecord)) == 1


@pytest.mark.parametrize(
    "value", ["openai/gemma3-270m", "localhost:8081", "=http://127.0.0.1:8081/v1", "m=not-a-url"]
)
def test_cli_api_base_neither_url_nor_model_equals_url_is_refused_before_any_call(
    tmp_path: Path, seen_options: list[RuntimeOptions], value: str
) -> None:
    args = [
        *CLI_RUN, "--models", "hosted_vllm/gemma3-270m", "--judge", "mock/j",
        "--api-base", f"http://127.0.0.1:8081/v1,{value}", "--run-dir", str(tmp_path / "r"),
    ]  # fmt: skip
    result = CliRunner().invoke(mirage, args)
    assert result.exit_code == 1
    assert f"--api-base: {value!r} is neither a URL" in result.output
    assert seen_options == []
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("value", ["openai/x", "localhost:8081", "m=not-a-url"])
def test_bench_run_refuses_an_api_base_that_is_no_url_either(value: str, tmp_path: Path) -> None:
    """The same parser reads `bench run`'s --api-base: such a value was sent as the URL."""
    result = CliRunner().invoke(
        mirage,
        [
            *("bench", "run", "--models", "mock/alpha", "--judge", "mock/judge"),
            *("--api-base", value, "--run-dir", str(tmp_path / "run"), "--no-progress"),
        ],
    )
    assert result.exit_code == 1, result.output
    assert "neither a URL" in result.output
    assert not (tmp_path / "run" / "records").exists()
