"""Helpers around the product's offline LLM providers (``ScriptedLLM``, ``FunctionLLM``).

The providers themselves are part of the product (``guard.llm``); this module adds what tests
need on top: building self-audit answers, and rules that answer the audit prompt by reading the
candidate ids back out of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

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
    quote: str | None = None,
    source_turn_id: str | None = None,
) -> dict[str, object]:
    """One wire verdict; ``quote`` is always present (the schema requires it, null allowed).
    ``source_turn_id`` is sent only when given (the guard ignores it: it reads the quote)."""
    cid = candidate.id if isinstance(candidate, Candidate) else candidate
    out: dict[str, object] = {
        "id": cid,
        "label": Label(label).value,
        "confidence": confidence,
        "quote": quote,
    }
    if source_turn_id is not None:
        out["source_turn_id"] = source_turn_id
    return out


def audit_for(
    candidates: Sequence[Candidate],
    label: Label = Label.GROUNDED,
    *,
    confidence: float = 0.9,
    quote: str | None = None,
    source_turn_id: str | None = None,
) -> str:
    """One verdict with the same label (and quote) for every candidate."""
    return audit_json(
        verdict(c, label, confidence=confidence, quote=quote, source_turn_id=source_turn_id)
        for c in candidates
    )


def _prompt_objects(messages: Sequence[Message], keys: set[str]) -> list[dict[str, str]]:
    """The JSON objects with exactly ``keys`` that the self-audit prompt renders one per line."""
    found: list[dict[str, str]] = []
    for message in messages:
        for line in message.content.splitlines():
            line = line.strip()
            if not (line.startswith("{") and line.endswith("}")):
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict) and set(obj) == keys:
                found.append({k: str(v) for k, v in obj.items()})
    return found


def candidate_ids_in_prompt(messages: Sequence[Message]) -> list[str]:
    """The entry ids the self-audit prompt asked about (rendered one JSON object per line)."""
    return [o["id"] for o in _prompt_objects(messages, {"id", "text"})]


QuoteStyle = Literal["honest", "invented", "assistant", "none"]


def _overlap(a: str, b: str) -> int:
    return len(set(a.lower().split()) & set(b.lower().split()))


def quote_for(text: str, messages: Sequence[Message], style: QuoteStyle) -> str | None:
    """What a writer that quotes in ``style`` would quote for the entry ``text``.

    honest: the user message sharing most words with the entry, copied exactly; invented: words
    the user never wrote; assistant: an assistant message, copied exactly; none: null.
    """
    turns = _prompt_objects(messages, {"id", "role", "content"})
    if style == "honest":
        users = [t["content"] for t in turns if t["role"] == "user"]
        return max(users, key=lambda u: _overlap(u, text)) if users else None
    if style == "invented":
        return f"I told you {text.lower()} many times"
    if style == "assistant":
        said = [t["content"] for t in turns if t["role"] == "assistant"]
        return said[0] if said else None
    return None


def labelling_llm(
    label_for: Callable[[str], Label] | Label,
    *,
    model: str = AUDIT_MODEL,
    confidence: float = 0.95,
    source_turn_id: str | None = None,
    latency_s: float = 0.0,
    quoting: QuoteStyle = "honest",
) -> FunctionLLM:
    """An auditor that labels every entry it is asked about (by id) with ``label_for(id)`` and
    quotes in the ``quoting`` style (:func:`quote_for`; FABRICATED entries quote nothing)."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        entries = _prompt_objects(messages, {"id", "text"})
        out = []
        for entry in entries:
            label = label_for(entry["id"]) if callable(label_for) else label_for
            style: QuoteStyle = "none" if label is Label.FABRICATED else quoting
            out.append(
                verdict(
                    entry["id"],
                    label,
                    confidence=confidence,
                    quote=quote_for(entry["text"], messages, style),
                    source_turn_id=source_turn_id,
                )
            )
        return audit_json(out)

    return FunctionLLM(rule, model=model, latency_s=latency_s)


def raising_llm(error: Exception, *, model: str = AUDIT_MODEL) -> FunctionLLM:
    """An LLM whose every call raises ``error``."""

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        raise error

    return FunctionLLM(rule, model=model)
