"""How much one request may ask of the encoder: text per turn and per candidate, sentences in all.

The evidence linker encodes every unique sentence of a write, so one huge request would hold the
shared encoder for everyone else. :func:`check_limits` refuses such a request with a typed
:class:`~mirage_guard.guard.errors.LimitExceededError` before anything is encoded, extracted or
written (the sidecar answers 413). Sentences are counted with a deliberately generous splitter
(terminal punctuation of any script, line breaks), so the count is an upper bound of what the
linker encodes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from mirage_guard.guard._domain import Candidate, Turn
from mirage_guard.guard.errors import LimitExceededError

_SENTENCE_END = re.compile(r"[.!?;。！？；…]+|\n+")


class RequestLimits(BaseModel):
    """Per-request bounds (``MIRAGE_MAX_TURN_CHARS``, ``MIRAGE_MAX_CANDIDATE_CHARS``,
    ``MIRAGE_MAX_SENTENCES_PER_REQUEST``)."""

    model_config = ConfigDict(frozen=True)

    max_turn_chars: int = Field(default=20_000, gt=0)
    max_candidate_chars: int = Field(default=2_000, gt=0)
    max_sentences_per_request: int = Field(default=2_000, gt=0)


def count_sentences(text: str) -> int:
    """An upper bound of the sentences the evidence linker may split ``text`` into."""
    return sum(1 for part in _SENTENCE_END.split(text) if part.strip())


def check_turns(turns: Sequence[Turn], limits: RequestLimits) -> int:
    """Raise if a turn is too long; the number of sentences in the turns."""
    for t in turns:
        if len(t.content) > limits.max_turn_chars:
            raise LimitExceededError("turn_chars", len(t.content), limits.max_turn_chars)
    return _sentences((t.content for t in turns), 0, limits)


def check_limits(
    turns: Sequence[Turn], candidates: Sequence[Candidate], limits: RequestLimits
) -> None:
    """Raise :class:`LimitExceededError` if the request is over any of ``limits``."""
    n = check_turns(turns, limits)
    for c in candidates:
        if len(c.text) > limits.max_candidate_chars:
            raise LimitExceededError("candidate_chars", len(c.text), limits.max_candidate_chars)
    _sentences((c.text for c in candidates), n, limits)


def _sentences(texts: Iterable[str], start: int, limits: RequestLimits) -> int:
    """``start`` plus the sentences of ``texts``; raises at the first text past the limit, so
    the error names no total (the texts after it are never counted)."""
    n = start
    for text in texts:
        n += count_sentences(text)
        if n > limits.max_sentences_per_request:
            raise LimitExceededError("sentences", None, limits.max_sentences_per_request)
    return n
