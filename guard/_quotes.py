"""Checking a self-audit's quotes: is the span the writer model relies on really the user's?

The self-audit returns, for every candidate, a label and the exact user span it rests on. The
guard accepts the span only when it occurs verbatim in a USER turn after normalisation: Unicode
NFKC, case folding, typographic quotes and dashes mapped to ASCII, and whitespace and punctuation
ignored (the quote and the turn are compared as sequences of words, so a quote can never match
inside a word: "limb" is not in "climbing"). A quote of fewer than :data:`MIN_QUOTE_WORDS` words
says nothing and counts as missing.

A quote found only in an assistant (or system, tool) turn is :attr:`QuoteCheck.ASSISTANT`; one
found nowhere is :attr:`QuoteCheck.INVENTED`. Neither ever counts for the model: the decision
rule (:func:`~mirage_guard.guard.decide`) and the pipeline make such a verdict count against it.

A valid quote is then scored against the claim with the evidence path (:func:`quote_links`: the
same linker and claim-support signal, with the quoted span as the only evidence).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence

from mirage_guard.guard._domain import (
    AuditVerdict,
    Candidate,
    EvidenceLink,
    QuoteCheck,
    Role,
    Turn,
)
from mirage_guard.guard.evidence import EvidenceLinker, plain

MIN_QUOTE_WORDS = 2
_WORD = re.compile(r"\w+(?:'\w+)*")


# dashes as "-" too: a quote is compared word by word, and "-" is no word
_DASHES = str.maketrans({"\u2013": "-", "\u2014": "-"})


def quote_words(text: str) -> tuple[str, ...]:
    """The words of ``text`` after Unicode, case and typography normalisation."""
    norm = plain(unicodedata.normalize("NFKC", text)).translate(_DASHES).casefold()
    return tuple(_WORD.findall(norm))


def _contains(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    n = len(needle)
    first = needle[0]
    return any(
        haystack[i] == first and haystack[i : i + n] == needle for i in range(len(haystack) - n + 1)
    )


def find_quote(quote: str | None, turns: Sequence[Turn]) -> tuple[QuoteCheck, str | None]:
    """Where ``quote`` occurs: (VALID, the first user turn's id), or why it is not valid."""
    needle = quote_words(quote or "")
    if len(needle) < MIN_QUOTE_WORDS:
        return QuoteCheck.MISSING, None
    elsewhere = False
    for turn in turns:
        if _contains(quote_words(turn.content), needle):
            if turn.role is Role.USER:
                return QuoteCheck.VALID, turn.id
            elsewhere = True
    return (QuoteCheck.ASSISTANT if elsewhere else QuoteCheck.INVENTED), None


def check_quotes(verdicts: Sequence[AuditVerdict], turns: Sequence[Turn]) -> list[AuditVerdict]:
    """Every verdict with its quote checked against ``turns`` (whatever check it came with).

    ``source_turn_id`` becomes the user turn the quote was found in (None when it is not valid):
    a turn id the model names without the words is never taken on trust.
    """
    out: list[AuditVerdict] = []
    for v in verdicts:
        check, turn_id = find_quote(v.quote, turns)
        out.append(v.model_copy(update={"quote_check": check, "source_turn_id": turn_id}))
    return out


def quote_links(
    linker: EvidenceLinker,
    candidates: Sequence[Candidate],
    verdicts: Mapping[str, AuditVerdict],
) -> dict[str, EvidenceLink]:
    """Each candidate with a valid quote linked to that span alone (the evidence path's features
    of the claim against what the model says it relies on). Keyed by candidate id."""
    out: dict[str, EvidenceLink] = {}
    for c in candidates:
        v = verdicts.get(c.id)
        if v is None or v.quote_check is not QuoteCheck.VALID or not v.quote:
            continue
        span = Turn(id=v.source_turn_id or "quote", role=Role.USER, content=v.quote)
        out[c.id] = linker.link([span], [c])[0]
    return out


__all__ = ["MIN_QUOTE_WORDS", "check_quotes", "find_quote", "quote_links", "quote_words"]
