"""Offline LLM providers for tests and for users' own offline checks.

``ScriptedLLM`` replays canned outputs (strings, or exceptions to raise) in order;
``FunctionLLM`` answers by rule from the messages. Both record every call.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from guard.errors import LLMError
from guard.llm._base import Completion, LLMClient, Message, SamplingParams, Usage

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


@dataclass
class _Recorder:
    calls: list[RecordedCall] = field(default_factory=list)


class ScriptedLLM(LLMClient):
    """Returns ``replies`` one per call, in order; raises when the script runs out."""

    def __init__(
        self, replies: Sequence[Reply], *, model: str = "mock/scripted", latency_s: float = 0.0
    ) -> None:
        self.model = model
        self._replies = list(replies)
        self._latency_s = latency_s
        self.calls: list[RecordedCall] = []

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
        if not self._replies:
            raise LLMError("script exhausted: no reply left", model=self.model)
        return _to_completion(self._replies.pop(0), self.model, messages)


class FunctionLLM(LLMClient):
    """Answers every call with ``rule(messages, schema)`` (sync or async)."""

    def __init__(self, rule: Rule, *, model: str = "mock/function", latency_s: float = 0.0) -> None:
        self.model = model
        self._rule = rule
        self._latency_s = latency_s
        self.calls: list[RecordedCall] = []

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
        reply = self._rule(messages, schema)
        if inspect.isawaitable(reply):
            reply = await reply
        return _to_completion(reply, self.model, messages)
