"""Fakes for the MirageBench tests: recording providers, a simulated kill, a real guard.

The per-stage answers come from the product's offline provider (``benchmark._offline``); this
module adds what tests need on top: a provider that records every call of every model, a
provider that "dies" after N completed calls, and a real ``Guard`` on a hashing embedder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from mirage_guard.benchmark._offline import offline_answer
from mirage_guard.guard import Guard
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.llm import Completion, FunctionLLM, LLMClient, Message, SamplingParams
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder

SUBJECTS = ("mock/subject-a", "mock/subject-b")
JUDGE = "mock/judge"

Rule = Callable[[Sequence[Message], type[BaseModel] | None], str]


class SimulatedKill(BaseException):
    """Raised instead of answering, to stop a run the way a kill would (not an Exception)."""


def call_fingerprint(model: str, messages: Sequence[Message], params: SamplingParams) -> str:
    blob = json.dumps(
        [model, [m.model_dump() for m in messages], params.model_dump()], sort_keys=True
    )
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class CallLog:
    """Every completed call of every model a provider built, in completion order."""

    fingerprints: list[str] = field(default_factory=list)
    by_model: dict[str, int] = field(default_factory=dict)


class RecordingLLM(LLMClient):
    def __init__(
        self,
        model: str,
        log: CallLog,
        rule: Rule,
        *,
        kill_after: int | None = None,
    ) -> None:
        self.model = model
        self._log = log
        self._inner = FunctionLLM(rule, model=model)
        self._kill_after = kill_after

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        if self._kill_after is not None and len(self._log.fingerprints) >= self._kill_after:
            raise SimulatedKill(f"killed after {self._kill_after} calls")
        completion = await self._inner.complete(messages, schema=schema, params=params)
        self._log.fingerprints.append(
            call_fingerprint(self.model, messages, params or SamplingParams())
        )
        self._log.by_model[self.model] = self._log.by_model.get(self.model, 0) + 1
        return completion


def offline_rule(model: str) -> Rule:
    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        return offline_answer(messages, schema, salt=model)

    return rule


def recording_provider(
    log: CallLog,
    *,
    kill_after: int | None = None,
    rules: dict[str, Rule] | None = None,
) -> Callable[[str], LLMClient]:
    """Provider factory: offline answers (or ``rules[model]``), every call logged."""

    def factory(model: str) -> LLMClient:
        rule = (rules or {}).get(model) or offline_rule(model)
        return RecordingLLM(model, log, rule, kill_after=kill_after)

    return factory


def real_guard() -> Guard:
    """The real guard pipeline on a hashing embedder and a hand-set evidence profile."""
    return Guard(linker=EvidenceLinker(HashingEmbedder()), evidence_profile=make_profile())
