"""A cue-only baseline: how far surface phrasing alone predicts the label.

If hedge words, length, person or a "User" prefix separate over-inference from the rest, a
classifier can score well by learning the phrasing and still fail on real memory entries. This
fits a logistic model on surface cues only (never the evidence) and reports its AUROC, so every
figure of the guard can be read next to what phrasing alone would give (0.5 = no leak).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from mirage_guard.calibration._data import Example
from mirage_guard.guard import Label

_HEDGE = re.compile(
    r"\b(probably|likely|maybe|perhaps|might|may|seems?|appears?|apparently|presumably|"
    r"possibly|guess|suspect|suggests?|imagine|bet|could)\b",
    re.IGNORECASE,
)
_CERTAIN = re.compile(
    r"\b(must|surely|clearly|certainly|definitely|obviously|no doubt|bound to|undoubtedly)\b",
    re.IGNORECASE,
)
_SECOND = re.compile(r"\b(you|your|you're|you've|yours)\b", re.IGNORECASE)
_FIRST_WORD_USER = re.compile(r"^\s*(the\s+)?user\b", re.IGNORECASE)
CUES: tuple[str, ...] = (
    "hedges",
    "certainty",
    "n_words",
    "second_person",
    "user_prefix",
    "starts_capital_name",
    "ends_period",
    "has_digit",
    "has_comma",
)


def cue_row(text: str) -> list[float]:
    words = text.split()
    first = words[0] if words else ""
    return [
        float(len(_HEDGE.findall(text))),
        float(len(_CERTAIN.findall(text))),
        float(len(words)),
        float(bool(_SECOND.search(text))),
        float(bool(_FIRST_WORD_USER.search(text))),
        float(first[:1].isupper() and len(words) > 1 and words[1][:1].isupper()),
        float(text.rstrip().endswith(".")),
        float(any(ch.isdigit() for ch in text)),
        float("," in text),
    ]


def _matrix(examples: Sequence[Example]) -> np.ndarray:
    return np.asarray([cue_row(e.claim.text) for e in examples], dtype=np.float64)


def _is_inferred(e: Example) -> bool:
    return e.claim.label is Label.INFERRED_REASONABLE


def _linked(examples: Sequence[Example]) -> list[Example]:
    return [e for e in examples if e.claim.label in (Label.GROUNDED, Label.INFERRED_REASONABLE)]


class CueBaseline:
    """Logistic regressions on surface cues, fitted on one set (the train split).

    Two questions: does phrasing predict over-inference (OI vs the rest), and does it predict
    an inference among linked claims (INFERRED_REASONABLE vs GROUNDED)?
    """

    def __init__(self, train: Sequence[Example]) -> None:
        self._oi = self._fit(train, lambda e: e.is_oi)
        self._inferred = self._fit(_linked(train), _is_inferred)

    @staticmethod
    def _fit(
        examples: Sequence[Example], target: Callable[[Example], bool]
    ) -> LogisticRegression | None:
        y = np.asarray([int(target(e)) for e in examples])
        if len(set(y.tolist())) < 2:
            return None  # nothing to learn: the baseline reports nan
        return LogisticRegression(max_iter=2000, class_weight="balanced").fit(_matrix(examples), y)

    @staticmethod
    def _auroc(
        model: LogisticRegression | None,
        examples: Sequence[Example],
        target: Callable[[Example], bool],
    ) -> float:
        y = np.asarray([int(target(e)) for e in examples])
        if model is None or len(set(y.tolist())) < 2:
            return float("nan")
        return float(roc_auc_score(y, model.predict_proba(_matrix(examples))[:, 1]))

    def auroc_oi(self, examples: Sequence[Example]) -> float:
        return self._auroc(self._oi, examples, lambda e: e.is_oi)

    def auroc_inferred(self, examples: Sequence[Example]) -> float:
        return self._auroc(self._inferred, _linked(examples), _is_inferred)
