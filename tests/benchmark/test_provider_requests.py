"""The real requests litellm builds for each provider, seen at the HTTP layer (respx).

litellm itself runs here (its request building, param mapping and response parsing); only the
network is replaced: respx answers every request and fails any request it was not told about, so
nothing can reach a provider. All four providers go through httpx in litellm (OpenAI through the
openai SDK's httpx client; Anthropic, Gemini and hosted_vllm through litellm's own httpx handler).
litellm's default async transport for its own handler is aiohttp, which respx cannot see, so these
tests switch litellm to its httpx transport (``disable_aiohttp_transport``); that changes the
transport only, not the request litellm builds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import litellm
import pytest
import respx
from pydantic import BaseModel

from mirage_guard.benchmark._capabilities import CapabilityAwareLLM, resolve_params
from mirage_guard.benchmark._config import RunConfig, Stage
from mirage_guard.benchmark._offline import offline_answer
from mirage_guard.benchmark._records import JudgeRecord, SelfAuditRecord, TaskRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun, litellm_provider
from mirage_guard.benchmark._schemas import (
    JudgeOutput,
    MemoryUpdateOutput,
    ProbeOutput,
    SelfAuditOutput,
)
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.errors import LLMError
from mirage_guard.guard.llm import LiteLLMClient, Message, SamplingParams
from tests.benchmark.small_run import FAST

# litellm's lazily imported provider modules declare TypedDicts pydantic warns about
pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")

_REAL_ACOMPLETION = litellm.acompletion  # captured before the conftest switch replaces it

GPT5 = "openai/gpt-5-mini"
CLAUDE = "anthropic/claude-sonnet-4-5"
GEMINI = "gemini/gemini-2.5-flash"
VLLM = "hosted_vllm/Qwen/Qwen3-8B"
VLLM_BASE = "http://vllm.test/v1"

OPENAI_URL = "https://api.openai.com/v1/chat/completions"
ANTHROPIC_URL = "https://api.anthropic.com/v1/messages"
GEMINI_HOST = "generativelanguage.googleapis.com"
VLLM_URL = f"{VLLM_BASE}/chat/completions"

SCHEMAS: dict[str, type[BaseModel]] = {
    s.__name__: s for s in (JudgeOutput, SelfAuditOutput, ProbeOutput, MemoryUpdateOutput)
}


class Answer(BaseModel):
    answer: str


def _openai_body(text: str, model: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _anthropic_body(text: str) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _gemini_body(text: str) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"parts": [{"text": text}], "role": "model"}, "finishReason": "STOP"}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5},
        "modelVersion": "gemini-2.5-flash",
    }


def _wire_messages(body: dict[str, Any]) -> list[Message]:
    """The request's messages back as ``Message`` (OpenAI strings or Anthropic text blocks)."""
    out = []
    for m in body["messages"]:
        content = m["content"]
        if isinstance(content, list):
            content = "".join(block.get("text", "") for block in content)
        out.append(Message(role=m["role"], content=content))
    return out


@pytest.fixture
def http(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    """Real litellm, fake keys, every HTTP request answered by respx (unknown ones fail)."""
    monkeypatch.setattr(litellm, "acompletion", _REAL_ACOMPLETION)
    monkeypatch.setattr(litellm, "disable_aiohttp_transport", True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini-test-not-a-key")
    monkeypatch.setenv("LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS", "True")
    cache = getattr(litellm, "in_memory_llm_clients_cache", None)
    if cache is not None:
        cache.flush_cache()  # no client built with another transport survives from elsewhere
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router
    if cache is not None:
        cache.flush_cache()


def _json(request: httpx.Request) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(request.content)
    return body


# -- the lookup ------------------------------------------------------------------------------


def test_capability_lookup_drops_seed_for_anthropic_and_temperature_for_gpt5() -> None:
    asked = SamplingParams(temperature=0.7, max_tokens=512, seed=3)
    claude = resolve_params(CLAUDE, asked)
    gpt5 = resolve_params(GPT5, asked)
    gpt5_judge = resolve_params(GPT5, SamplingParams(temperature=0.0, seed=3))
    assert set(claude.dropped) == {"seed"}
    assert claude.sent == {"temperature": 0.7, "max_tokens": 512}
    assert set(gpt5.dropped) == {"temperature"}
    assert gpt5.sent == {"max_completion_tokens": 512, "seed": 3}
    assert set(gpt5_judge.dropped) == {"temperature"}
    for model in (GEMINI, VLLM, "openai/gpt-4o-mini"):
        kept = resolve_params(model, asked)
        assert kept.dropped == {}, model
        assert kept.effective(asked) == asked
    assert resolve_params("mock/x", asked, offline=True).dropped == {}


# -- the wire --------------------------------------------------------------------------------

ASKED = SamplingParams(temperature=0.7, max_tokens=256, seed=7)
MESSAGES = [Message(role="user", content="Say hi as JSON.")]


async def _call(model: str, *, api_base: str | None = None) -> str:
    client = CapabilityAwareLLM(LiteLLMClient(model, api_base=api_base))
    completion = await client.complete(MESSAGES, schema=Answer, params=ASKED)
    return completion.parse(Answer).answer


async def test_openai_gpt5_request_has_no_temperature(http: respx.MockRouter) -> None:
    route = http.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, json=_openai_body('{"answer": "hi"}', "gpt-5-mini"))
    )
    assert await _call(GPT5) == "hi"
    body = _json(route.calls.last.request)
    assert body["model"] == "gpt-5-mini"
    assert "temperature" not in body
    assert body["max_completion_tokens"] == 256
    assert "max_tokens" not in body
    assert body["seed"] == 7
    assert body["response_format"]["json_schema"]["name"] == "Answer"


async def test_anthropic_request_has_no_seed(http: respx.MockRouter) -> None:
    route = http.post(ANTHROPIC_URL).mock(
        return_value=httpx.Response(200, json=_anthropic_body('{"answer": "hi"}'))
    )
    assert await _call(CLAUDE) == "hi"
    request = route.calls.last.request
    body = _json(request)
    assert body["model"] == "claude-sonnet-4-5"
    assert "seed" not in body
    assert body["temperature"] == 0.7
    assert body["max_tokens"] == 256
    assert request.headers["x-api-key"] == "sk-ant-test-not-a-key"


async def test_anthropic_without_the_lookup_is_refused_before_any_request(
    http: respx.MockRouter,
) -> None:
    """What the benchmark did before: litellm refuses ``seed`` for Anthropic outright."""
    route = http.post(ANTHROPIC_URL).mock(
        return_value=httpx.Response(200, json=_anthropic_body('{"answer": "hi"}'))
    )
    with pytest.raises(LLMError, match="seed"):
        await LiteLLMClient(CLAUDE).complete(MESSAGES, schema=Answer, params=ASKED)
    assert not route.called


async def test_gemini_request_keeps_seed_and_temperature(http: respx.MockRouter) -> None:
    route = http.route(host=GEMINI_HOST).mock(
        return_value=httpx.Response(200, json=_gemini_body('{"answer": "hi"}'))
    )
    assert await _call(GEMINI) == "hi"
    request = route.calls.last.request
    assert request.url.path.endswith("gemini-2.5-flash:generateContent")
    config = _json(request)["generationConfig"]
    assert (config["temperature"], config["seed"], config["max_output_tokens"]) == (0.7, 7, 256)


async def test_hosted_vllm_request_keeps_every_param(http: respx.MockRouter) -> None:
    route = http.post(VLLM_URL).mock(
        return_value=httpx.Response(200, json=_openai_body('{"answer": "hi"}', "Qwen/Qwen3-8B"))
    )
    assert await _call(VLLM, api_base=VLLM_BASE) == "hi"
    body = _json(route.calls.last.request)
    assert body["model"] == "Qwen/Qwen3-8B"
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.7, 7, 256)


async def test_truncated_answer_reports_finish_reason_length(http: respx.MockRouter) -> None:
    http.post(OPENAI_URL).mock(
        return_value=httpx.Response(200, json=_openai_body('{"answ', "gpt-5-mini", "length"))
    )
    client = CapabilityAwareLLM(LiteLLMClient(GPT5))
    completion = await client.complete(MESSAGES, schema=Answer, params=ASKED)
    assert completion.finish_reason == "length"


# -- a run: subject gpt-5, judge Anthropic ---------------------------------------------------


def _subject_answer(request: httpx.Request) -> httpx.Response:
    body = _json(request)
    fmt = body.get("response_format") or {}
    schema = SCHEMAS.get(fmt.get("json_schema", {}).get("name", ""))
    text = offline_answer(_wire_messages(body), schema, salt=GPT5)
    return httpx.Response(200, json=_openai_body(text, body["model"]))


def _judge_answer(request: httpx.Request) -> httpx.Response:
    text = offline_answer(_wire_messages(_json(request)), JudgeOutput, salt=CLAUDE)
    return httpx.Response(200, json=_anthropic_body(text))


async def test_run_with_gpt5_subject_and_anthropic_judge(
    tmp_path: Path, http: respx.MockRouter, small_personas: list[Persona]
) -> None:
    subject = http.post(OPENAI_URL).mock(side_effect=_subject_answer)
    judge = http.post(ANTHROPIC_URL).mock(side_effect=_judge_answer)
    config = RunConfig(
        models=[GPT5],
        judge=CLAUDE,
        limit=1,
        tasks=[Task.GIFT],
        stages=[Stage.TASK, Stage.SELF_AUDIT, Stage.JUDGE],
    )
    run = BenchmarkRun(
        config,
        tmp_path / "run",
        provider=litellm_provider(FAST),
        options=FAST,
        personas=small_personas,
    )
    summary = await run.run()
    assert summary.errors == 0, summary.error_messages
    rd = RunDirectory(tmp_path / "run")
    (task,) = rd.records(TaskRecord)
    (audit,) = rd.records(SelfAuditRecord)
    (judged,) = rd.records(JudgeRecord)
    assert task.ok
    assert audit.ok
    assert judged.ok
    assert judged.judge == CLAUDE
    assert judged.claims
    # what went over the wire
    assert subject.call_count == 2
    assert judge.call_count == 1
    for call in subject.calls:
        sent = _json(call.request)
        assert "temperature" not in sent
        assert sent["seed"] == 0
    sent_to_judge = _json(judge.calls.last.request)
    assert "seed" not in sent_to_judge
    assert sent_to_judge["temperature"] == 0.0
    # and what the manifest says was sent
    manifest = rd.read_manifest()
    assert set(manifest.params_sent[CLAUDE]["judge"].dropped) == {"seed"}
    assert manifest.params_sent[CLAUDE]["judge"].sent["temperature"] == 0.0
    for role in ("generation", "self_audit"):
        assert set(manifest.params_sent[GPT5][role].dropped) == {"temperature"}
        assert manifest.params_sent[GPT5][role].sent["seed"] == 0


def test_cli_run_with_gpt5_subject_and_anthropic_judge(
    tmp_path: Path, http: respx.MockRouter
) -> None:
    """The command a user types, with the fake keys and respx standing in for the providers."""
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app as mirage
    from tests.benchmark.small_run import PERSONAS_FILE

    subject = http.post(OPENAI_URL).mock(side_effect=_subject_answer)
    judge = http.post(ANTHROPIC_URL).mock(side_effect=_judge_answer)
    run_dir = tmp_path / "run"
    result = CliRunner().invoke(
        mirage,
        [
            "bench",
            "run",
            "--models",
            GPT5,
            "--judge",
            CLAUDE,
            "--personas-file",
            str(PERSONAS_FILE),
            "--limit",
            "1",
            "--tasks",
            "gift",
            "--stages",
            "task,judge",
            "--run-dir",
            str(run_dir),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    (judged,) = RunDirectory(run_dir).records(JudgeRecord)
    assert judged.ok
    assert judged.claims
    assert subject.call_count == 1
    assert judge.call_count == 1
    assert "seed" not in _json(judge.calls.last.request)
    assert "temperature" not in _json(subject.calls.last.request)
