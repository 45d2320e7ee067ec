"""Helpers around the product's offline LLM providers (``ScriptedLLM``, ``FunctionLLM``).

The providers themselves are part of the product (``guard.llm``); this module adds what tests
need on top: building self-audit answers, and rules that answer the audit prompt by reading the
candidate ids back out of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence

from pydantic import BaseModel

from mirage_guard.guard._domain import Candidate, Label
from mirage_guard.guard.llm import FunctionLLM, Message

AUDIT_MODEL = "mock/writer-a"


def audit_json(
    verdicts: Iterable[Mapping[str, object]],
    *,
    fenced: bool = False,
) -> str:
    """A self-audit answer in the wire shape ``{"verdicts": [...]}``."""
    body = json.dumps({"verdicts": list(verdicts)})
    return f"```json\n{body}\n```" if fenced else body


def verdict(
    candidate: Candidate | str,
    label: Label | str = Label.GROUNDED,
    *,
    confidence: float = 0.9,
    source_turn_id: str | None = None,
) -> dict[str, object]:
    cid = candidate.id if isinstance(candidate, Candidate) else candidate
    return {
        "id": cid,
        "label": Label(label).value,
        "confidence": confidence,
        "source_turn_id": source_turn_id,
    }


def audit_for(
    candidates: Sequence[Candidate],
    label: Label = Label.GROUNDED,
    *,
    confidence: float = 0.9,
    source_turn_id: str | None = None,
) -> str:
    """One verdict with the same label for every candidate."""
    return audit_json(
        verdict(c, label, confidence=confidence, source_turn_id=source_turn_id) for c in candidates
    )


def candidate_ids_in_prompt(messages: Sequence[Message]) -> list[str]:
    """The entry ids the self-audit prompt asked about (rendered one JSON object per line)."""
    ids: list[str] = []
    for message in messages:
        for line in message.content.splitlines():
            line = line.strip()
            if not (line.startswith("{") and line.endswith("}")):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and set(obj) == {"id", "text"}:
                ids.append(str(obj["id"]))
    return ids


def labelling_llm(
    label_for: Callable[[str], Label] | Label,
    *,
    model: str = AUDIT_MODEL,
    confidence: float = 0.95,
    source_turn_id: str | None = None,
    latency_s: float = 0.0,
) -> FunctionLLM:
    """An auditor that labels every entry it is asked about (by id) with ``label_for(id)``."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        ids = candidate_ids_in_prompt(messages)
        return audit_json(
            verdict(
                cid,
                label_for(cid) if callable(label_for) else label_for,
                confidence=confidence,
                source_turn_id=source_turn_id,
            )
            for cid in ids
        )

    return FunctionLLM(rule, model=model, latency_s=latency_s)


def raising_llm(error: Exception, *, model: str = AUDIT_MODEL) -> FunctionLLM:
    """An LLM whose every call raises ``error``."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        raise error

    return FunctionLLM(rule, model=model)
