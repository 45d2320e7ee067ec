"""Offline LLM providers for tests and for users' own offline checks.

``ScriptedLLM`` replays canned outputs (strings, or exceptions to raise) in order;
``FunctionLLM`` answers by rule from the messages. Both record every call.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from mirage_guard.guard.errors import LLMError
from mirage_guard.guard.llm._base import Completion, LLMClient, Message, SamplingParams, Usage

Reply = str | Completion | Exception
Rule = Callable[[Sequence[Message], type[BaseModel] | None], Reply | Awaitable[Reply]]


@dataclass
class RecordedCall:
    messages: list[Message]
    schema: type[BaseModel] | None
    params: SamplingParams


def _to_completion(reply: Reply, model: str, messages: Sequence[Message]) -> Completion:
    if isinstance(reply, Exception):
        raise reply
    if isinstance(reply, Completion):
        return reply
    prompt_words = sum(len(m.content.split()) for m in messages)
    return Completion(
        text=reply,
        model=model,
        usage=Usage(prompt_tokens=prompt_words, completion_tokens=len(reply.split())),
        cost_usd=0.0,
        finish_reason="stop",
    )


class _RecordingLLM(LLMClient):
    """Records every call, waits ``latency_s``, then answers with :meth:`_reply`."""

    def __init__(self, *, model: str, latency_s: float) -> None:
        self.model = model
        self._latency_s = latency_s
        self.calls: list[RecordedCall] = []

    async def _reply(
        self, messages: Sequence[Message], schema: type[BaseModel] | None
    ) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        self.calls.append(RecordedCall(list(messages), schema, params or SamplingParams()))
        if self._latency_s:
            await asyncio.sleep(self._latency_s)
        return _to_completion(await self._reply(messages, schema), self.model, messages)


class ScriptedLLM(_RecordingLLM):
    """Returns ``replies`` one per call, in order; raises when the script runs out."""

    def __init__(
        self, replies: Sequence[Reply], *, model: str = "mock/scripted", latency_s: float = 0.0
    ) -> None:
        super().__init__(model=model, latency_s=latency_s)
        self._replies = list(replies)

    async def _reply(self, messages: Sequence[Message], schema: type[BaseModel] | None) -> Reply:
        if not self._replies:
            raise LLMError("script exhausted: no reply left", model=self.model)
        return self._replies.pop(0)


class FunctionLLM(_RecordingLLM):
    """Answers every call with ``rule(messages, schema)`` (sync or async)."""

    def __init__(self, rule: Rule, *, model: str = "mock/function", latency_s: float = 0.0) -> None:
        super().__init__(model=model, latency_s=latency_s)
        self._rule = rule

    async def _reply(self, messages: Sequence[Message], schema: type[BaseModel] | None) -> Reply:
        reply = self._rule(messages, schema)
        if inspect.isawaitable(reply):
            reply = await reply
        return reply
