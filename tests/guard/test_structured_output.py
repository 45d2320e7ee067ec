"""Structured output degrades by what the endpoint accepts, seen at the HTTP layer (respx).

Real litellm builds and parses every request; respx plays an OpenAI-compatible server that
refuses ``json_schema`` the way llama.cpp's server does (HTTP 500 whose body is the request
validation error, file path included) and accepts ``json_object``, with or without the
``schema`` key it compiles into a grammar.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import litellm
import pytest
import respx
from pydantic import BaseModel

from mirage_guard.guard.errors import LLMOutputError, LLMRequestError
from mirage_guard.guard.llm import (
    LiteLLMClient,
    Message,
    RetryingLLM,
    StructuredMode,
    forget_modes,
    mode_of,
    structured_output_modes,
)

pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")

_REAL_ACOMPLETION = litellm.acompletion
BASE = "http://llama.test/v1"
URL = f"{BASE}/chat/completions"
MODEL = "openai/gemma3-270m"

# what llama-cpp-python's server answers for response_format json_schema (HTTP 500)
LLAMA_CPP_REFUSAL = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
        "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", "
        "'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n"
        '  File "/opt/venv/lib/python3.12/site-packages/llama_cpp/server/app.py", line 512, '
        "in create_chat_completion\n    POST /v1/chat/completions",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}


class Answer(BaseModel):
    answer: str


def _ok(text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gemma3-270m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
    }


@pytest.fixture
def http(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.MockRouter]:
    monkeypatch.setattr(litellm, "acompletion", _REAL_ACOMPLETION)
    monkeypatch.setattr(litellm, "disable_aiohttp_transport", True)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    forget_modes()
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router
    forget_modes()


def _llama_cpp(seen: list[dict[str, Any]], answer: str) -> Any:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        fmt = (body.get("response_format") or {}).get("type")
        if fmt not in (None, "text", "json_object"):
            return httpx.Response(500, json=LLAMA_CPP_REFUSAL)
        return httpx.Response(200, json=_ok(answer))

    return handler


async def test_json_schema_refused_then_json_object_with_schema_remembered_for_the_model(
    http: respx.MockRouter,
) -> None:
    seen: list[dict[str, Any]] = []
    http.post(URL).mock(side_effect=_llama_cpp(seen, '{"answer": "yes"}'))
    client = LiteLLMClient(MODEL, api_base=BASE)
    first = await client.complete([Message(role="user", content="q")], schema=Answer)
    assert [b["response_format"]["type"] for b in seen] == ["json_schema", "json_object"]
    # the second request carries the schema for the server's grammar
    assert seen[1]["response_format"]["schema"] == Answer.model_json_schema()
    assert first.parse(Answer).answer == "yes"
    assert first.structured_mode == "json_object_schema"
    assert first.usage.prompt_tokens == 11
    assert first.usage.completion_tokens == 5

    # decided once: a second client for the same model and endpoint sends json_object at once
    seen.clear()
    again = LiteLLMClient(MODEL, api_base=BASE)
    await again.complete([Message(role="user", content="q")], schema=Answer)
    assert [b["response_format"]["type"] for b in seen] == ["json_object"]
    assert "schema" in seen[0]["response_format"]
    assert again.structured_mode is StructuredMode.JSON_OBJECT_SCHEMA
    assert mode_of(MODEL, BASE) is StructuredMode.JSON_OBJECT_SCHEMA
    [decision] = structured_output_modes()
    assert decision.reason == "server refused json_schema"


async def test_a_server_refusing_the_schema_key_gets_plain_json_object(
    http: respx.MockRouter,
) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        fmt = body.get("response_format") or {}
        if fmt.get("type") != "json_object" or "schema" in fmt:
            return httpx.Response(
                400, json={"error": {"message": "response_format: unsupported field", "code": 400}}
            )
        return httpx.Response(200, json=_ok('{"answer": "ok"}'))

    http.post(URL).mock(side_effect=handler)
    client = LiteLLMClient(MODEL, api_base=BASE)
    done = await client.complete([Message(role="user", content="q")], schema=Answer)
    assert [("schema" in b["response_format"], b["response_format"]["type"]) for b in seen] == [
        (False, "json_schema"),
        (True, "json_object"),
        (False, "json_object"),
    ]
    assert done.structured_mode == "json_object"
    assert mode_of(MODEL, BASE) is StructuredMode.JSON_OBJECT


async def test_endpoint_refusing_json_object_too_falls_back_to_text_with_strict_parsing(
    http: respx.MockRouter,
) -> None:
    seen: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        if "response_format" in body:
            return httpx.Response(
                400,
                json={"error": {"message": "response_format is not supported", "code": 400}},
            )
        return httpx.Response(200, json=_ok("Sure! here it is"))

    http.post(URL).mock(side_effect=handler)
    client = LiteLLMClient(MODEL, api_base=BASE)
    done = await client.complete([Message(role="user", content="q")], schema=Answer)
    assert [(b.get("response_format") or {}).get("type") for b in seen] == [
        "json_schema",
        "json_object",
        "json_object",
        None,
    ]
    assert done.structured_mode == "text"
    with pytest.raises(LLMOutputError):
        done.parse(Answer)  # prose is not JSON: strict parsing refuses it


async def test_a_validation_error_is_not_retried(http: respx.MockRouter) -> None:
    """A refused request (not about response_format) fails once, typed, without backoff."""
    route = http.post(URL).mock(
        return_value=httpx.Response(
            400, json={"error": {"message": "messages: field required", "code": 400}}
        )
    )
    client = RetryingLLM(LiteLLMClient(MODEL, api_base=BASE), initial_s=5.0)
    with pytest.raises(LLMRequestError) as info:
        await client.complete([Message(role="user", content="q")], schema=Answer)
    assert not info.value.retryable
    assert route.call_count == 1  # not about response_format: no downgrade, no retry


async def test_known_model_without_schema_support_starts_at_json_object_with_schema(
    http: respx.MockRouter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(litellm, "get_model_info", lambda model: {"key": model})
    monkeypatch.setattr(litellm, "supports_response_schema", lambda model: False)
    seen: list[dict[str, Any]] = []
    http.post(URL).mock(side_effect=_llama_cpp(seen, '{"answer": "ok"}'))
    client = LiteLLMClient(MODEL, api_base=BASE)
    await client.complete([Message(role="user", content="q")], schema=Answer)
    assert [b["response_format"]["type"] for b in seen] == ["json_object"]


async def test_llama_cpp_500_validation_error_is_not_retried(http: respx.MockRouter) -> None:
    """llama.cpp answers 500 for a request it refuses: typed as a request error, one attempt."""
    route = http.post(URL).mock(return_value=httpx.Response(500, json=LLAMA_CPP_REFUSAL))
    client = RetryingLLM(LiteLLMClient(MODEL, api_base=BASE), initial_s=5.0)
    with pytest.raises(LLMRequestError):
        await client.complete([Message(role="user", content="q")])  # no schema: no downgrade
    assert route.call_count == 1
