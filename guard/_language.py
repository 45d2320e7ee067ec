"""Fail closed on languages the evidence model cannot read.

The evidence path (sentence embedder, attribute prototypes, word lists, the profile fitted on
them) reads the languages its calibration profile lists (``CalibrationProfile.languages``; the
shipped MiniLM profile: English only). A candidate whose text, or whose conversation's user
turns, is confidently in another language gets no stated or inferred provenance: the decision
becomes *generated* (the policy's generated action) with reason code ``unsupported_language``,
and the metrics count it. Detection is py3langid (its model ships in the wheel; no download).
Short or mixed texts the detector is not confident about are left to the evidence path.
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


class LanguageDetector(Protocol):
    """ISO 639-1 code and probability of a text's language."""

    def classify(self, text: str) -> tuple[str, float]: ...


class Py3LangidDetector:
    """py3langid with normalised probabilities (model loaded once, on first use)."""

    def __init__(self) -> None:
        self._identifier: Any = None
        self._lock = threading.Lock()

    def classify(self, text: str) -> tuple[str, float]:
        with self._lock:
            if self._identifier is None:
                from py3langid.langid import (  # type: ignore[import-untyped]
                    MODEL_FILE,
                    LanguageIdentifier,
                )

                self._identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            lang, p = self._identifier.classify(text)
        return str(lang), float(p)


def _long_enough(text: str) -> bool:
    return len(text.split()) >= MIN_WORDS or sum(ch >= "\u2e80" for ch in text) >= MIN_IDEOGRAPHS


def language_of(text: str, detector: LanguageDetector) -> str | None:
    """The language of ``text`` when the detector is confident, else None. Read with ASCII
    apostrophes: py3langid takes "Doesn’t eat meat" for Frisian, "Doesn't eat meat" for English."""
    text = plain(text).strip()
    if not text or not _long_enough(text):
        return None
    lang, p = detector.classify(text)
    return lang if p >= MIN_PROBABILITY else None


def uncovered_languages(
    turns: Sequence[Turn],
    candidates: Sequence[Candidate],
    covered: Sequence[str],
    detector: LanguageDetector,
) -> dict[str, str]:
    """candidate id -> the language not in ``covered`` that its text or the user turns are in."""
    user_text = " ".join(t.content for t in turns if t.role is Role.USER)
    conversation = language_of(user_text, detector)
    out: dict[str, str] = {}
    for c in candidates:
        lang = language_of(c.text, detector)
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
            "reasons": [
                *decision.reasons,
                reason(ReasonCode.UNSUPPORTED_LANGUAGE, language=language, covered=list(covered)),
            ],
        }
    )


__all__ = [
    "LanguageDetector",
    "Py3LangidDetector",
    "fail_closed",
    "language_of",
    "uncovered_languages",
]
