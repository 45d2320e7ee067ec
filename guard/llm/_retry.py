"""Retries as a wrapper: only errors that say a retry helps, backoff honouring Retry-After."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from guard.errors import LLMRateLimitError, MirageError
from guard.llm._base import Completion, LLMClient, Message, SamplingParams


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, MirageError) and exc.retryable


class RetryingLLM(LLMClient):
    """Wraps a client; retries timeouts, rate limits and unavailability with jittered backoff."""

    def __init__(
        self,
        inner: LLMClient,
        *,
        attempts: int = 4,
        initial_s: float = 1.0,
        max_s: float = 30.0,
        rate_limit_floor_s: float = 2.0,
        jitter_s: float = 1.0,
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self.attempts = attempts
        self._backoff = wait_exponential_jitter(multiplier=initial_s, max=max_s, jitter=jitter_s)
        self.rate_limit_floor_s = rate_limit_floor_s

    def _wait(self, state: RetryCallState) -> float:
        base = float(self._backoff(state))
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, LLMRateLimitError):
            # rate limits wait longer than transient faults, and at least what the server asked
            return max(base * 2, exc.retry_after or 0.0, self.rate_limit_floor_s)
        return base

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        async for attempt in AsyncRetrying(
            retry=retry_if_exception(_is_retryable),
            stop=stop_after_attempt(self.attempts),
            wait=self._wait,
            reraise=True,
        ):
            with attempt:
                return await self.inner.complete(messages, schema=schema, params=params)
        raise AssertionError("unreachable")  # pragma: no cover

    async def aclose(self) -> None:
        await self.inner.aclose()
