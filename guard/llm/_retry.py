"""Retries as a wrapper: only errors that say a retry helps, backoff honouring Retry-After.

The first attempt goes straight to the inner client (no retry machinery on the hot path); only a
retryable failure enters the backoff loop: exponential with jitter for transient faults, and for
rate limits at least twice that, at least ``retry_after`` and at least ``rate_limit_floor_s``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence

from pydantic import BaseModel

from mirage_guard.guard.errors import LLMRateLimitError, MirageError
from mirage_guard.guard.llm._base import Completion, LLMClient, Message, SamplingParams


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
        self.initial_s = initial_s
        self.max_s = max_s
        self.jitter_s = jitter_s
        self.rate_limit_floor_s = rate_limit_floor_s

    def longest_s(self, per_try_s: float) -> float:
        """The longest a call can take when every try runs ``per_try_s`` and fails with a
        transient fault (rate limits can wait longer: as long as the server asks)."""
        waits = (
            min(self.initial_s * 2.0 ** (k - 1) + self.jitter_s, self.max_s)
            for k in range(1, self.attempts)
        )
        return self.attempts * per_try_s + sum(waits)

    def backoff_s(self, failed_attempt: int, exc: BaseException) -> float:
        """Seconds to wait after attempt number ``failed_attempt`` (1-based) failed with ``exc``."""
        base = self.initial_s * 2.0 ** (failed_attempt - 1) + random.uniform(0, self.jitter_s)
        base = max(0.0, min(base, self.max_s))
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
        attempt = 1
        while True:
            try:
                return await self.inner.complete(messages, schema=schema, params=params)
            except MirageError as exc:
                if not exc.retryable or attempt >= self.attempts:
                    raise
                await asyncio.sleep(self.backoff_s(attempt, exc))
                attempt += 1

    async def aclose(self) -> None:
        await self.inner.aclose()
