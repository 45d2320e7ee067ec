"""--stop: stop sequences for the Task answers (a base model on a chat endpoint never ends its
answer); an empty Task answer and a JSON answer that copies the prompt's placeholder are failed
units, never claims."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app as mirage
from mirage_guard.adapters.cli._bench import parse_stops
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._cache import cache_key, call_description
from mirage_guard.benchmark._capabilities import resolve_params
from mirage_guard.benchmark._config import RunConfig
from mirage_guard.benchmark._records import JudgeRecord, SelfAuditRecord, TaskRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import JudgeOutput, SelfAuditOutput
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.llm import LiteLLMClient, Message, SamplingParams
from tests.benchmark.small_run import FAST, PERSONAS_FILE, small_config
from tests.fakes.bench import (
    JUDGE,
    SUBJECTS,
    CallLog,
    RecordingLLM,
    Rule,
    offline_rule,
    recording_provider,
)

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]
SUBJECT = SUBJECTS[0]
MSG = [Message(role="user", content="hello")]


def _config(**kw: object) -> RunConfig:
    return small_config(
        stages=["task", "self_audit", "judge"], models=[SUBJECT], limit=2, guard="off", **kw
    )


def test_runs_without_stop_keep_their_hash_and_a_stop_changes_it() -> None:
    plain = small_config()
    before = plain.model_dump(mode="json")
    # what a config was before --stop (and --claim-units) existed
    del before["samples"], before["task_stop"], before["claim_units"]
    blob = json.dumps(before, sort_keys=True).encode()
    assert plain.config_hash() == hashlib.sha256(blob).hexdigest()[:16]
    assert plain.config_hash() != small_config(task_stop=["\n\n"]).config_hash()


def test_an_empty_stop_sequence_is_refused() -> None:
    with pytest.raises(ValueError, match="stop sequence must not be empty"):
        small_config(task_stop=[""])


def test_cache_keys_without_stop_are_unchanged_and_a_stop_is_in_the_key() -> None:
    params = SamplingParams(temperature=0.7, max_tokens=64, seed=0)
    described = call_description("m", MSG, None, params)
    assert described["params"] == {"temperature": 0.7, "max_tokens": 64, "seed": 0}
    stopped = params.model_copy(update={"stop": ("\n\n",)})
    assert call_description("m", MSG, None, stopped)["params"]["stop"] == ["\n\n"]
    assert cache_key(described) != cache_key(call_description("m", MSG, None, stopped))


def test_litellm_gets_the_stop_list_and_nothing_without_one() -> None:
    client = LiteLLMClient("hosted_vllm/base-model", api_base="http://127.0.0.1:9/v1")
    sent = client._kwargs(MSG, SamplingParams(stop=("\n\n", "User:")))
    assert sent["stop"] == ["\n\n", "User:"]
    assert "stop" not in client._kwargs(MSG, SamplingParams(temperature=0.0))


def test_the_capability_lookup_keeps_stop_for_openai_compatible_servers() -> None:
    resolved = resolve_params("hosted_vllm/base-model", SamplingParams(stop=("\n\n",)))
    assert resolved.requested == {"stop": ["\n\n"]}
    assert resolved.dropped == {}
    assert resolved.sent["stop"] == ["\n\n"]


def test_cli_reads_escapes_in_stop_sequences() -> None:
    assert parse_stops(["\\n\\n", "END", "a\\\\nb", "é\\t"]) == ["\n\n", "END", "a\\nb", "é\t"]
    assert parse_stops(None) == []


async def test_stop_goes_to_task_answers_only(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    clients: list[RecordingLLM] = []
    inner = recording_provider(CallLog())

    def provider(model: str) -> RecordingLLM:
        client = inner(model)
        assert isinstance(client, RecordingLLM)
        clients.append(client)
        return client

    run = BenchmarkRun(
        _config(task_stop=["\n\n"]),
        tmp_path / "run",
        provider=provider,
        options=FAST,
        personas=small_personas,
    )
    await run.run()
    seen = [(c.schema, c.params.stop) for client in clients for c in client._inner.calls]
    stops = {schema: {stop for s, stop in seen if s is schema} for schema, _ in seen}
    assert stops == {None: {("\n\n",)}, SelfAuditOutput: {None}, JudgeOutput: {None}}
    manifest = RunDirectory(tmp_path / "run").read_manifest()
    assert manifest.config.task_stop == ["\n\n"]


def _blank_task_answers(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
    return "  \n" if schema is None else offline_rule(SUBJECT)(messages, schema)


async def test_an_empty_task_answer_is_a_failed_unit(tmp_path: Path, make_run: MakeRun) -> None:
    run, _ = make_run(tmp_path / "run", _config(), rules={SUBJECT: _blank_task_answers})
    summary = await run.run()
    rd = RunDirectory(tmp_path / "run")
    tasks = rd.records(TaskRecord)
    assert tasks
    assert all(t.error and t.error.type == "EmptyOutputError" for t in tasks)
    assert rd.records(SelfAuditRecord) == []
    assert rd.records(JudgeRecord) == []
    assert summary.errors == len(tasks)
    rows = {(f.model, f.stage): f for f in analyse(tmp_path / "run").failures}
    assert rows[(SUBJECT, "task")].other == len(tasks)


def _placeholder_copier(model: str, placeholder: str, schema: type[BaseModel]) -> Rule:
    answer = offline_rule(model)

    def rule(messages: Sequence[Message], asked: type[BaseModel] | None) -> str:
        if asked is schema:
            return json.dumps({"claims": [{"text": placeholder, "label": "GROUNDED"}]})
        return answer(messages, asked)

    return rule


@pytest.mark.parametrize(
    ("model", "placeholder", "schema", "record"),
    [
        (SUBJECT, "<the claim>", SelfAuditOutput, SelfAuditRecord),
        (JUDGE, "<claim>", JudgeOutput, JudgeRecord),
    ],
)
async def test_an_answer_copying_the_prompts_placeholder_has_no_claims(
    tmp_path: Path,
    make_run: MakeRun,
    model: str,
    placeholder: str,
    schema: type[BaseModel],
    record: type[SelfAuditRecord] | type[JudgeRecord],
) -> None:
    rule = _placeholder_copier(model, placeholder, schema)
    run, _ = make_run(tmp_path / "run", _config(), rules={model: rule})
    await run.run()
    records = RunDirectory(tmp_path / "run").records(record)
    assert records
    for r in records:
        assert r.error is not None
        assert r.error.type == "UnparsableOutputError"
        assert f"copies the prompt's placeholder {placeholder}" in r.error.message
        assert r.claims == []


async def test_a_claim_that_merely_contains_angle_brackets_is_kept(
    tmp_path: Path, make_run: MakeRun
) -> None:
    text = "Likes the <b> tag in old HTML"

    def rule(messages: Sequence[Message], asked: type[BaseModel] | None) -> str:
        if asked is SelfAuditOutput:
            return json.dumps({"claims": [{"text": text, "label": "FABRICATED"}]})
        return offline_rule(SUBJECT)(messages, asked)

    run, _ = make_run(tmp_path / "run", _config(), rules={SUBJECT: rule})
    await run.run()
    audits = RunDirectory(tmp_path / "run").records(SelfAuditRecord)
    assert audits
    assert all(a.ok and [c.text for c in a.claims] == [text] for a in audits)


def test_cli_stop_lands_in_the_manifest(tmp_path: Path) -> None:
    args = [
        "bench", "run", "--models", "mock/alpha", "--judge", "mock/judge",
        "--personas-file", str(PERSONAS_FILE), "--limit", "1", "--tasks", "gift",
        "--stages", "task,judge", "--stop", "\\n\\n", "--stop", "###",
        "--run-dir", str(tmp_path / "run"), "--no-progress",
    ]  # fmt: skip
    result = CliRunner().invoke(mirage, args)
    assert result.exit_code == 0, result.output
    manifest = RunDirectory(tmp_path / "run").read_manifest()
    assert manifest.config.task_stop == ["\n\n", "###"]
