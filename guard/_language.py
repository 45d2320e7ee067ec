"""Fail closed on languages the evidence model cannot read.

The evidence path (sentence embedder, attribute prototypes, word lists, the profile fitted on
them) reads the languages its calibration profile lists (``CalibrationProfile.languages``; the
shipped MiniLM profile: English only). A candidate whose text, or whose conversation's user
turns, is confidently in another language gets no stated or inferred provenance: the decision
becomes *generated* (the policy's generated action) with reason code ``unsupported_language``,
and the metrics count it. Detection is py3langid (its model ships in the wheel; no download).
Short or mixed texts the detector is not confident about are left to the evidence path, and so
is a text to which the detector still gives a covered language some weight
(:data:`MIN_COVERED_PROBABILITY`): py3langid takes short English memory entries for Nigerian
Pidgin ("Is 36 years old": pcm 0.53, en 0.39; "Ayesha is 36 years old": pcm 0.69, en 0.09),
while a sentence in another language leaves English almost nothing ("Habite à Paris depuis
2019": fr 0.71, en 0.002).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from mirage_guard.guard._domain import Candidate, Decision, Provenance, Role, Turn
from mirage_guard.guard._policy import Policy
from mirage_guard.guard._reasons import ReasonCode, reason
from mirage_guard.guard.evidence import plain

MIN_PROBABILITY = 0.5  # normalised probability of the top language
MIN_WORDS = 3  # ...and at least this many words (or MIN_IDEOGRAPHS for unspaced scripts)
MIN_IDEOGRAPHS = 4
# ...and no covered language has this much: on 80 memory entries written for the check (40
# English, 40 in 20 other languages) and the 4,664 labelled claims of benchmark/data, every
# entry in another language gave English at most 0.0021, and the English ones py3langid took
# for Nigerian Pidgin 0.017 or more (tests/guard/test_languages.py); "Loves bacalhau and pastéis
# de nata" (Occitan 0.62, English 0.006) still fails closed
MIN_COVERED_PROBABILITY = 0.01
# the conversation's language is read from its latest user turns, this many characters at least
# (about 50 chat turns): py3langid's time grows with the text (9.5 ms for 500 user turns, 55,000
# characters, on every write against a long history; 0.7 ms for 4,000)
CONVERSATION_CHARS = 4000


class LanguageDetector(Protocol):
    """Languages of a text, as (ISO 639-1 code, normalised probability), most probable first."""

    def rank(self, text: str) -> list[tuple[str, float]]: ...


class Py3LangidDetector:
    """py3langid with normalised probabilities (model loaded once, on first use)."""

    def __init__(self) -> None:
        self._identifier: Any = None
        self._lock = threading.Lock()

    def rank(self, text: str) -> list[tuple[str, float]]:
        with self._lock:
            if self._identifier is None:
                from py3langid.langid import (  # type: ignore[import-untyped]
                    MODEL_FILE,
                    LanguageIdentifier,
                )

                self._identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            ranked = self._identifier.rank(text)
        return [(str(lang), float(p)) for lang, p in ranked]


def _long_enough(text: str) -> bool:
    return len(text.split()) >= MIN_WORDS or sum(ch >= "\u2e80" for ch in text) >= MIN_IDEOGRAPHS


def language_of(text: str, detector: LanguageDetector, covered: Sequence[str] = ()) -> str | None:
    """The language of ``text`` when the detector is confident, else None: confident means the
    top language has :data:`MIN_PROBABILITY` and, when it is not one of ``covered``, that no
    covered language has :data:`MIN_COVERED_PROBABILITY`. Read with ASCII apostrophes: py3langid
    takes "Doesn’t eat meat" for Frisian, "Doesn't eat meat" for English."""
    text = plain(text).strip()
    if not text or not _long_enough(text):
        return None
    ranked = detector.rank(text)
    if not ranked:
        return None
    lang, p = ranked[0]
    if p < MIN_PROBABILITY:
        return None
    if lang not in covered and any(
        q >= MIN_COVERED_PROBABILITY for other, q in ranked if other in covered
    ):
        return None
    return lang


def latest_user_text(turns: Sequence[Turn], chars: int = CONVERSATION_CHARS) -> str:
    """The user turns, latest last, from the latest one back until they hold ``chars``
    characters (whole turns: a turn is never cut)."""
    kept: list[str] = []
    n = 0
    for t in reversed(turns):
        if t.role is Role.USER:
            kept.append(t.content)
            n += len(t.content) + 1
            if n >= chars:
                break
    return " ".join(reversed(kept))


def uncovered_languages(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    covered: Sequence[str],
    detector: LanguageDetector,
) -> dict[str, str]:
    """candidate id -> the language not in ``covered`` that its text or the user turns are in
    (the latest, :data:`CONVERSATION_CHARS` of them at least)."""
    user_text = latest_user_text(turns)
    conversation = language_of(user_text, detector, covered)
    out: dict[str, str] = {}
    for c in candidates:
        lang = language_of(c.text, detector, covered)
        if lang is not None and lang not in covered:
            out[c.id] = lang
        elif conversation is not None and conversation not in covered:
            out[c.id] = conversation
    return out


def fail_closed(
    decision: Decision, language: str, covered: Sequence[str], policy: Policy
) -> Decision:
    """The decision for a candidate the evidence model cannot read: generated, never stated."""
    return decision.model_copy(
        update={
            "provenance": Provenance.GENERATED,
            "action": policy.action_for(Provenance.GENERATED),
            "source_turn_id": None,
            # the profile never scored this label: no fit of one may learn from it
            "audit_source": None,
            "reasons": [
                *decision.reasons,
                reason(ReasonCode.UNSUPPORTED_LANGUAGE, language=language, covered=list(covered)),
            ],
        }
    )


__all__ = [
    "CONVERSATION_CHARS",
    "MIN_COVERED_PROBABILITY",
    "LanguageDetector",
    "Py3LangidDetector",
    "fail_closed",
    "language_of",
    "latest_user_text",
    "uncovered_languages",
]
