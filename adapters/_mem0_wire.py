"""Mem0's wire shapes, both ways: messages in, items and add results out, reserved keys checked.

Mem0 accepts a message as a str, a dict or a list of dicts and answers with plain dicts; these
helpers turn the one into guard turns and the other into what a ``mem0.Memory`` caller expects.
Nothing here does I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from mirage_guard.adapters._backend import (
    PROTECTED_KEYS,
    PROVENANCE_KEYS,
    SCOPE_KEYS,
    TENANT_KEY,
    WRITE_KEY,
    Item,
)
from mirage_guard.adapters._decision_log import WrittenDecision
from mirage_guard.guard import MemoryStatus, Role, Turn, well_formed
from mirage_guard.guard.errors import InputError, validation_message

# ``Memory.update``'s "not given" default for expiration_date (mem0 uses its own sentinel too).
UNSET: Any = object()


def statuses_for(*, include_hypotheses: bool, include_quarantined: bool) -> list[str]:
    """The statuses a read returns: facts, plus hypotheses / quarantined items when asked."""
    out = [MemoryStatus.FACT.value]
    if include_hypotheses:
        out.append(MemoryStatus.HYPOTHESIS.value)
    if include_quarantined:
        out.append(MemoryStatus.QUARANTINED.value)
    return out


def text_of(content: Any, i: int) -> str | None:
    """A message's text: a string, or an OpenAI-style list of parts whose text parts are joined
    by line breaks (Mem0 stores them so). Any other part (an image) is refused, never dropped:
    the guard reads no image, so nothing in one could support a fact."""
    if content is None or isinstance(content, str):
        return content
    if not isinstance(content, list):
        raise InputError(f"messages[{i}].content must be a string or a list of text parts")
    texts = []
    for j, part in enumerate(content):
        if not isinstance(part, Mapping) or part.get("type") != "text":
            kind = part.get("type") if isinstance(part, Mapping) else type(part).__name__
            raise InputError(
                f"messages[{i}].content[{j}] is a {kind!r} part: only text parts are read (the "
                "guard reads no image; describe it in text)"
            )
        if not isinstance(part.get("text"), str):
            raise InputError(f"messages[{i}].content[{j}].text must be a string")
        texts.append(part["text"])
    return "\n".join(texts)


def to_turns(messages: Any) -> list[Turn]:
    """Mem0's message forms (str, dict, list of dicts) as turns; a dict may carry its ``id``."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list | tuple):
        raise InputError("messages must be a str, a dict or a list of dicts")
    turns: list[Turn] = []
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            raise InputError("every message must be a dict with role and content")
        content = text_of(m.get("content"), i)
        if content is None:
            continue  # e.g. tool-call messages without text, as Mem0 skips them
        try:
            role = Role(str(m.get("role")))
        except ValueError as exc:
            raise InputError(f"unknown message role {m.get('role')!r}") from exc
        turn_id = m.get("id")
        if turn_id is not None and not (isinstance(turn_id, str) and turn_id.strip()):
            raise InputError("a message id must be a non-empty string")
        try:
            turns.append(Turn(id=turn_id, role=role, content=content) if turn_id else
                         Turn(role=role, content=content))  # fmt: skip
        except ValidationError as exc:  # e.g. a lone surrogate: no store can encode it
            raise InputError(f"messages[{i}] {validation_message(exc)}") from exc
    ids = [t.id for t in turns]
    if len(ids) != len(set(ids)):
        raise InputError("message ids must be unique within one call")
    return turns


def caller_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The caller's metadata, refused if it sets a key the guard or Mem0 owns or a scope id
    (Mem0 dropped a value under its own keys, ``data``, ``hash``, ``role``... silently)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InputError("metadata must be a dict")
    clash = PROTECTED_KEYS.intersection(metadata) | set(SCOPE_KEYS).intersection(metadata)
    if clash:
        raise InputError(f"metadata keys reserved for the guard or Mem0: {sorted(clash)}")
    if not well_formed(json.dumps(dict(metadata), ensure_ascii=False, default=str)):
        raise InputError("metadata holds a lone surrogate (half a character): not storable")
    return dict(metadata)


def reject_kwargs(kwargs: Mapping[str, Any], method: str) -> None:
    """Mem0's read methods take ``**kwargs``; the guard accepts none of them."""
    if set(SCOPE_KEYS).intersection(kwargs):
        raise InputError(f"{method}() takes user_id / agent_id / run_id inside filters=")
    if "limit" in kwargs:  # Mem0 1.x's name: Mem0 2.x ignores it and returns 20
        raise InputError(f"{method}() takes top_k=, not limit= (Mem0 2.x ignores limit=)")
    if kwargs:
        raise InputError(f"{method}() got unsupported arguments: {sorted(kwargs)}")


def present(item: Mapping[str, Any]) -> Item:
    """A store item as callers see it: provenance fields on top, the guard's bookkeeping keys
    (tenant, write intent) removed."""
    out = dict(item)
    meta = dict(out.get("metadata") or {})
    meta.pop(TENANT_KEY, None)
    meta.pop(WRITE_KEY, None)
    for key in PROVENANCE_KEYS:
        out[key] = meta.get(key)
    if meta:
        out["metadata"] = meta
    else:
        out.pop("metadata", None)
    return out


def decision_summary(w: WrittenDecision) -> dict[str, Any]:
    """One guard decision as the ``decisions`` list of an add result shows it (JSON values;
    reasons as code, params and rendered text)."""
    summary: dict[str, Any] = w.decision.summary(
        w.memory_id, already_stored=w.already_stored
    ).model_dump(mode="json")
    return summary


def add_result(written: Sequence[WrittenDecision], turns: Sequence[Turn]) -> dict[str, Any]:
    """``Memory.add``'s answer (``results``: what was written, not a fact the scope already held)
    plus ``decisions`` and ``turns``."""
    return {
        "results": [
            {
                "id": w.memory_id,
                "memory": w.decision.candidate.text,
                "event": "ADD",
                **w.decision.memory_metadata(),
            }
            for w in written
            if w.memory_id and not w.already_stored
        ],
        "decisions": [decision_summary(w) for w in written],
        "turns": [{"id": t.id, "role": t.role.value} for t in turns],
    }


__all__ = [
    "UNSET",
    "add_result",
    "caller_metadata",
    "decision_summary",
    "present",
    "reject_kwargs",
    "statuses_for",
    "text_of",
    "to_turns",
]
