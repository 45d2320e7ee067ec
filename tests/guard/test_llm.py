"""The LLM seam: scripted fakes, retries that know a rate limit, litellm error mapping."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import httpx
import litellm
import pytest
from pydantic import BaseModel

from mirage_guard.guard.errors import (
    LLMAuthError,
    LLMError,
    LLMOutputError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMRequestError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mirage_guard.guard.llm import (
    Completion,
    FunctionLLM,
    LiteLLMClient,
    Message,
    RetryingLLM,
    SamplingParams,
    ScriptedLLM,
    create_llm,
)

MODEL = "openai/test-model"
HELLO = [Message(role="user", content="hello there")]


class Answer(BaseModel):
    answer: int


# ----------------------------------------------------------------- scripted fakes


async def test_scripted_llm_replays_in_order_and_records_calls() -> None:
    llm = ScriptedLLM(["one", LLMRefusalError("no"), "three"], model="mock/x")
    first = await llm.complete(HELLO, params=SamplingParams(temperature=0.2))
    assert (first.text, first.model) == ("one", "mock/x")
    with pytest.raises(LLMRefusalError):
        await llm.complete(HELLO)
    assert (await llm.complete(HELLO, schema=Answer)).text == "three"
    with pytest.raises(LLMError, match="script exhausted"):
        await llm.complete(HELLO)
    assert len(llm.calls) == 4
    assert llm.calls[0].params.temperature == 0.2
    assert llm.calls[2].schema is Answer


async def test_function_llm_answers_by_rule_sync_or_async() -> None:
    def rule(messages: Any, schema: Any) -> str:
        return messages[-1].content.upper()

    async def arule(messages: Any, schema: Any) -> str:
        return str(len(messages))

    assert (await FunctionLLM(rule).complete(HELLO)).text == "HELLO THERE"
    assert (await FunctionLLM(arule).complete(HELLO)).text == "1"


def test_completion_parse_uses_the_strict_parser() -> None:
    assert Completion(text='{"answer": 3}', model="m").parse(Answer) == Answer(answer=3)
    with pytest.raises(LLMOutputError) as info:
        Completion(text="three", model="m").parse(Answer)
    assert info.value.model == "m"
    assert info.value.output == "three"


# ----------------------------------------------------------------- retries


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record every backoff the retry loop asks for, and do not actually wait for it."""
    requested: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(seconds: float, *args: Any, **kwargs: Any) -> None:
        requested.append(float(seconds))
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    return requested


def fast_retrying(inner: ScriptedLLM, attempts: int = 4) -> RetryingLLM:
    return RetryingLLM(inner, attempts=attempts, initial_s=0.001, max_s=0.002, rate_limit_floor_s=0)


@pytest.mark.parametrize(
    "error",
    [
        LLMTimeoutError("slow"),
        LLMUnavailableError("503"),
        LLMRateLimitError("429"),
    ],
    ids=["timeout", "unavailable", "rate-limit"],
)
async def test_retryable_errors_are_retried(error: LLMError, sleeps: list[float]) -> None:
    inner = ScriptedLLM([error, error, "ok"])
    out = await fast_retrying(inner).complete(HELLO)
    assert out.text == "ok"
    assert len(inner.calls) == 3
    assert len(sleeps) == 2


@pytest.mark.parametrize(
    "error",
    [
        LLMAuthError("bad key"),
        LLMRefusalError("no"),
        LLMOutputError("junk"),
        LLMError("unknown"),
    ],
    ids=["auth", "refusal", "output", "plain"],
)
async def test_non_retryable_errors_are_raised_at_once(
    error: LLMError, sleeps: list[float]
) -> None:
    inner = ScriptedLLM([error, "ok"])
    with pytest.raises(type(error)):
        await fast_retrying(inner).complete(HELLO)
    assert len(inner.calls) == 1
    assert sleeps == []


async def test_rate_limit_waits_at_least_retry_after(sleeps: list[float]) -> None:
    inner = ScriptedLLM([LLMRateLimitError("429", retry_after=7.5), "ok"])
    assert (await fast_retrying(inner).complete(HELLO)).text == "ok"
    assert len(sleeps) == 1
    assert sleeps[0] >= 7.5


async def test_rate_limit_floor_applies_without_retry_after(sleeps: list[float]) -> None:
    inner = ScriptedLLM([LLMRateLimitError("429"), LLMTimeoutError("slow"), "ok"])
    llm = RetryingLLM(inner, attempts=3, initial_s=0.001, max_s=0.002, rate_limit_floor_s=0.25)
    assert (await llm.complete(HELLO)).text == "ok"
    rate_limit_wait, timeout_wait = sleeps
    assert rate_limit_wait >= 0.25
    assert timeout_wait < 0.25  # a transient fault is not treated like a rate limit


async def test_retries_stop_after_attempts_with_the_last_typed_error(sleeps: list[float]) -> None:
    inner = ScriptedLLM([LLMTimeoutError(f"slow {i}") for i in range(5)])
    with pytest.raises(LLMTimeoutError, match="slow 2"):
        await fast_retrying(inner, attempts=3).complete(HELLO)
    assert len(inner.calls) == 3


async def test_retrying_passes_schema_and_params_through() -> None:
    inner = ScriptedLLM(['{"answer": 1}'], model="mock/inner")
    llm = fast_retrying(inner)
    assert llm.model == "mock/inner"
    await llm.complete(HELLO, schema=Answer, params=SamplingParams(seed=7))
    assert inner.calls[0].schema is Answer
    assert inner.calls[0].params.seed == 7


# ----------------------------------------------------------------- litellm mapping


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(
        status, headers=headers or {}, request=httpx.Request("POST", "http://llm.test")
    )


LITELLM_ERRORS: dict[str, tuple[Exception, type[LLMError]]] = {
    "timeout": (litellm.Timeout("t", model=MODEL, llm_provider="openai"), LLMTimeoutError),
    "rate-limit": (
        litellm.RateLimitError("r", llm_provider="openai", model=MODEL, response=_response(429)),
        LLMRateLimitError,
    ),
    "auth": (
        litellm.AuthenticationError(
            "a", llm_provider="openai", model=MODEL, response=_response(401)
        ),
        LLMAuthError,
    ),
    "permission": (
        litellm.PermissionDeniedError(
            "p", llm_provider="openai", model=MODEL, response=_response(403)
        ),
        LLMAuthError,
    ),
    "content-policy": (
        litellm.ContentPolicyViolationError(
            "c", model=MODEL, llm_provider="openai", response=_response(400)
        ),
        LLMRefusalError,
    ),
    "connection": (
        litellm.APIConnectionError("x", llm_provider="openai", model=MODEL),
        LLMUnavailableError,
    ),
    "unavailable": (
        litellm.ServiceUnavailableError(
            "u", llm_provider="openai", model=MODEL, response=_response(503)
        ),
        LLMUnavailableError,
    ),
    "internal": (
        litellm.InternalServerError(
            "i", llm_provider="openai", model=MODEL, response=_response(500)
        ),
        LLMUnavailableError,
    ),
    # litellm's own words for a provider key not set (openai, gemini): no retry helps
    "missing-key-500": (
        litellm.InternalServerError(
            "OpenAIException - Missing credentials. Please pass an `api_key`, or set the "
            "`OPENAI_API_KEY` environment variable.",
            llm_provider="openai",
            model=MODEL,
            response=_response(500),
        ),
        LLMAuthError,
    ),
    "missing-key-connection": (
        litellm.APIConnectionError(
            "Missing Gemini API key. Set the GEMINI_API_KEY or GOOGLE_API_KEY environment "
            "variable.",
            llm_provider="gemini",
            model=MODEL,
        ),
        LLMAuthError,
    ),
    "bad-request": (
        litellm.BadRequestError("b", model=MODEL, llm_provider="openai", response=_response(400)),
        LLMRequestError,
    ),
}


class FakeAcompletion:
    """Stands in for ``litellm.acompletion``: records kwargs, answers or raises in order."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.results: list[Any] = []

    async def __call__(self, **kwargs: Any) -> Any:
        self.calls.append(kwargs)
        result = self.results.pop(0)
        if isinstance(result, BaseException):
            raise result
        return result


@pytest.fixture
def acompletion(monkeypatch: pytest.MonkeyPatch) -> FakeAcompletion:
    """Overrides the conftest's block for this test only: nothing leaves the process."""
    fake = FakeAcompletion()
    monkeypatch.setattr(litellm, "acompletion", fake)
    return fake


def _ok(text: str, finish: str = "stop", refusal: str | None = None) -> Any:
    message = SimpleNamespace(content=text, refusal=refusal)
    return SimpleNamespace(
        choices=[SimpleNamespace(message=message, finish_reason=finish)],
        usage=SimpleNamespace(prompt_tokens=11, completion_tokens=3),
    )


RETRYABLE = (LLMTimeoutError, LLMRateLimitError, LLMUnavailableError)


@pytest.mark.parametrize("case", list(LITELLM_ERRORS))
async def test_litellm_exceptions_become_typed_errors(
    case: str, acompletion: FakeAcompletion
) -> None:
    raised, expected = LITELLM_ERRORS[case]
    acompletion.results.append(raised)
    with pytest.raises(LLMError) as info:
        await LiteLLMClient(MODEL).complete(HELLO)
    assert type(info.value) is expected
    assert info.value.model == MODEL
    assert info.value.__cause__ is raised
    assert info.value.retryable is (expected in RETRYABLE)


async def test_rate_limit_carries_retry_after_from_headers(acompletion: FakeAcompletion) -> None:
    acompletion.results.append(
        litellm.RateLimitError(
            "slow down",
            llm_provider="openai",
            model=MODEL,
            response=_response(429, {"retry-after": "12"}),
        )
    )
    with pytest.raises(LLMRateLimitError) as info:
        await LiteLLMClient(MODEL).complete(HELLO)
    assert info.value.retry_after == 12.0


async def test_success_maps_text_usage_and_sends_no_retries(
    acompletion: FakeAcompletion,
) -> None:
    acompletion.results.append(_ok('{"answer": 2}'))
    client = LiteLLMClient(MODEL, api_base="http://vllm.test/v1", timeout_s=9.0)
    out = await client.complete(
        HELLO, schema=Answer, params=SamplingParams(temperature=0.0, max_tokens=50, seed=1)
    )
    assert out.text == '{"answer": 2}'
    assert out.parse(Answer).answer == 2
    assert (out.usage.prompt_tokens, out.usage.completion_tokens) == (11, 3)
    [sent] = acompletion.calls
    assert sent["model"] == MODEL
    assert sent["num_retries"] == 0  # retries belong to RetryingLLM
    assert sent["timeout"] == 9.0
    assert sent["api_base"] == "http://vllm.test/v1"
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.0, 50, 1)
    assert sent["messages"] == [{"role": "user", "content": "hello there"}]
    assert sent["response_format"]["json_schema"]["schema"] == Answer.model_json_schema()


@pytest.mark.parametrize(
    "reply",
    [_ok("", finish="content_filter"), _ok("", refusal="I won't do that")],
    ids=["content-filter", "refusal-field"],
)
async def test_content_filter_or_refusal_field_is_a_refusal(
    reply: Any, acompletion: FakeAcompletion
) -> None:
    acompletion.results.append(reply)
    with pytest.raises(LLMRefusalError):
        await LiteLLMClient(MODEL).complete(HELLO)


async def test_retrying_around_litellm_honours_retry_after(
    acompletion: FakeAcompletion, sleeps: list[float]
) -> None:
    acompletion.results += [
        litellm.RateLimitError(
            "r", llm_provider="openai", model=MODEL, response=_response(429, {"retry-after": "3"})
        ),
        _ok("fine"),
    ]
    llm = RetryingLLM(LiteLLMClient(MODEL), attempts=3, initial_s=0.001, max_s=0.002)
    assert (await llm.complete(HELLO)).text == "fine"
    assert len(acompletion.calls) == 2
    assert len(sleeps) == 1
    assert sleeps[0] >= 3.0


async def test_auth_error_through_litellm_is_not_retried(
    acompletion: FakeAcompletion, sleeps: list[float]
) -> None:
    acompletion.results += [
        litellm.AuthenticationError(
            "bad key", llm_provider="openai", model=MODEL, response=_response(401)
        ),
        _ok("never"),
    ]
    llm = RetryingLLM(LiteLLMClient(MODEL), attempts=3, initial_s=0.001, max_s=0.002)
    with pytest.raises(LLMAuthError):
        await llm.complete(HELLO)
    assert len(acompletion.calls) == 1
    assert sleeps == []


def test_create_llm_builds_a_litellm_client() -> None:
    client = create_llm("hosted_vllm/Qwen/Qwen3-8B", api_base="http://gpu:8000/v1", timeout_s=5)
    assert isinstance(client, LiteLLMClient)
    assert (client.model, client.api_base, client.timeout_s) == (
        "hosted_vllm/Qwen/Qwen3-8B",
        "http://gpu:8000/v1",
        5,
    )


async def test_conftest_blocks_real_calls() -> None:
    with pytest.raises(LLMError, match="real LLM call"):
        await LiteLLMClient(MODEL).complete(HELLO)


@pytest.mark.parametrize(
    "reply",
    [
        SimpleNamespace(choices=[], usage=None),
        SimpleNamespace(choices=[SimpleNamespace(message=None, finish_reason="stop")], usage=None),
    ],
    ids=["no-choices", "no-message"],
)
async def test_answer_without_a_message_is_a_typed_error(
    reply: Any, acompletion: FakeAcompletion
) -> None:
    acompletion.results.append(reply)
    with pytest.raises(LLMError):
        await LiteLLMClient(MODEL).complete(HELLO)
