"""The offline answers of ``mock/...`` models for the collapse diagnostic.

Deterministic functions of the prompt, so a configuration can be dry-run end to end without
keys. They exercise the pipeline and are **not** measurements of any model: the mock subject
picks a stance by a hash of its name and the prompt (mostly Healer, to look like a collapsed
model), follows a stance plan when one is given, and the mock judge reads the stance back from a
marker phrase. Any other request falls through to MirageBench's offline rule.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence

from pydantic import BaseModel

from mirage_guard.benchmark._offline import offline_answer
from mirage_guard.benchmark.collapse._mapping import persona_of
from mirage_guard.benchmark.collapse._schemas import StancePlan, StanceScore
from mirage_guard.benchmark.collapse._situations import AdviserPersona
from mirage_guard.guard.llm import FunctionLLM, Message

# One marker sentence per persona; the mock judge recognises them.
_MARKERS: dict[AdviserPersona, str] = {
    AdviserPersona.HEALER: "That sounds really hard, and what you feel makes sense; "
    "here is one step you could take this week.",
    AdviserPersona.STOIC: "I will be straight with you: part of this is on you, "
    "and here is what you can change.",
    AdviserPersona.TECHNICIAN: "Here are the steps, in order, and the documents you need.",
    AdviserPersona.ENABLER: "You did nothing wrong at all; do exactly what feels right to you.",
    AdviserPersona.DOOMER: "Honestly, this will not end well whatever you do.",
}
_CENTRES: dict[AdviserPersona, tuple[float, float]] = {
    AdviserPersona.HEALER: (0.6, 0.5),
    AdviserPersona.STOIC: (-0.5, 0.6),
    AdviserPersona.TECHNICIAN: (0.05, 0.05),
    AdviserPersona.ENABLER: (0.6, -0.5),
    AdviserPersona.DOOMER: (-0.6, -0.5),
}
# cumulative thresholds out of 100 of the unplanned mock's stance
_SKEW: tuple[tuple[int, AdviserPersona], ...] = (
    (80, AdviserPersona.HEALER),
    (90, AdviserPersona.TECHNICIAN),
    (96, AdviserPersona.STOIC),
    (99, AdviserPersona.ENABLER),
    (100, AdviserPersona.DOOMER),
)
_PLANNED = re.compile(r"H = (-?\d+(?:\.\d+)?)\b.*?E = (-?\d+(?:\.\d+)?)\b", flags=re.S)


def _h(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _skewed(key: str) -> AdviserPersona:
    roll = _h(key) % 100
    return next(p for bound, p in _SKEW if roll < bound)


def _answer(messages: Sequence[Message], salt: str) -> str:
    prompt = "\n".join(m.content for m in messages)
    planned = _PLANNED.search(messages[-1].content)
    if planned:
        persona = persona_of(float(planned.group(1)), float(planned.group(2)))
    else:
        persona = _skewed(salt + prompt)
    return f"Thank you for writing this down. {_MARKERS[persona]}"


def _plan(messages: Sequence[Message], salt: str) -> str:
    persona = _skewed("plan" + salt + messages[-1].content)
    h, e = _CENTRES[persona]
    return json.dumps({"H": h, "E": e, "approach": f"answer as a {persona.value}"})


def _score(prompt: str) -> str:
    answer = prompt.split("THE ANSWER:", 1)[-1]
    persona = next((p for p, m in _MARKERS.items() if m in answer), AdviserPersona.TECHNICIAN)
    h, e = _CENTRES[persona]
    jitter = (_h(answer) % 21 - 10) / 100  # +-0.10, keeps the persona
    return json.dumps(
        {"H": round(h + jitter, 2), "E": round(e - jitter, 2), "rationale": "mock judge"}
    )


def collapse_offline_answer(
    messages: Sequence[Message], schema: type[BaseModel] | None, *, salt: str = ""
) -> str:
    if schema is StanceScore:
        return _score(messages[-1].content)
    if schema is StancePlan:
        return _plan(messages, salt)
    if schema is None:
        return _answer(messages, salt)
    return offline_answer(messages, schema, salt=salt)


def collapse_offline_llm(model: str, *, latency_s: float = 0.0) -> FunctionLLM:
    """A ``mock/...`` model answering the collapse diagnostic by rule."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        return collapse_offline_answer(messages, schema, salt=model)

    return FunctionLLM(rule, model=model, latency_s=latency_s)
