"""Named concurrency limits (``subject:<model>``, ``judge``) as an ``LLMClient`` wrapper."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
from pydantic import BaseModel

from mirage_guard.guard.errors import ConfigError
from mirage_guard.guard.llm import Completion, LLMClient, Message, SamplingParams


class ConcurrencyLimits:
    """One ``anyio.CapacityLimiter`` per name, created on first use with its declared size."""

    def __init__(self, sizes: dict[str, int] | None = None, *, default: int = 8) -> None:
        if default < 1 or any(v < 1 for v in (sizes or {}).values()):
            raise ConfigError("concurrency limits must be >= 1")
        self.default = default
        self._sizes = dict(sizes or {})
        self._limiters: dict[str, anyio.CapacityLimiter] = {}

    def size(self, name: str) -> int:
        return self._sizes.get(name, self.default)

    def limiter(self, name: str) -> anyio.CapacityLimiter:
        if name not in self._limiters:
            self._limiters[name] = anyio.CapacityLimiter(self.size(name))
        return self._limiters[name]

    def snapshot(self) -> dict[str, int]:
        return {name: self.size(name) for name in sorted(set(self._sizes) | set(self._limiters))}


class LimitedLLM(LLMClient):
    """At most ``limits.size(name)`` calls of this client (and its namesakes) in flight."""

    def __init__(self, inner: LLMClient, limits: ConcurrencyLimits, name: str) -> None:
        self.inner = inner
        self.model = inner.model
        self.name = name
        self._limiter = limits.limiter(name)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        async with self._limiter:
            return await self.inner.complete(messages, schema=schema, params=params)

    async def aclose(self) -> None:
        await self.inner.aclose()
