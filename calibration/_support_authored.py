"""Hand-written (user message, claim, class) pairs for the claim-support model.

``benchmark/data/support_pairs/part_*.jsonl`` (data card: that folder's README) holds pairs written
by hand by authors who never saw the guard's code, features or evaluation sets: one chat message a
user typed, a memory entry about that user, and how the message supports it (the four
:class:`~mirage_guard.guard.evidence.SupportClass` classes). Each message carries claims of
several classes, so the class is in the comparison, never in the message or the claim alone.

They are split by message, by a stable hash: four fifths train the cross-encoder beside the pairs
made from the project's labelled claims, one fifth is kept apart to measure it
(:func:`pair_report`), never trained on.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError
from sklearn.metrics import confusion_matrix, precision_recall_fscore_support

from mirage_guard.calibration._data import packaged
from mirage_guard.calibration._eval import ClassScore
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import SupportClass

FOLDER = "support_pairs"
# one message in this many goes to the test side (by a stable hash of the message)
TEST_ONE_IN = 5


class AuthoredPair(BaseModel):
    """One line of a ``part_*.jsonl`` file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pair_id: str
    premise: str
    claim: str
    label: str
    case: str
    note: str = ""

    @property
    def support(self) -> SupportClass:
        return SupportClass[self.label]


class PairSide(StrEnum):
    TRAIN = "train"
    TEST = "test"


def authored_folder() -> Path:
    return packaged(FOLDER)


def load_authored(folder: Path | None = None) -> list[AuthoredPair]:
    """Every pair of every ``part_*.jsonl`` in ``folder``, in file and line order.

    A malformed line, an unknown class or a repeated ``pair_id`` is an :class:`InputError` naming
    the file and line."""
    folder = folder or authored_folder()
    pairs: list[AuthoredPair] = []
    seen: dict[str, str] = {}
    for part in sorted(folder.glob("part_*.jsonl")):
        for n, line in enumerate(part.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            where = f"{part.name}:{n}"
            try:
                pair = AuthoredPair.model_validate(json.loads(line))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise InputError(f"{where}: not a support pair: {exc}") from exc
            if pair.label not in SupportClass.__members__:
                raise InputError(
                    f"{where}: label {pair.label!r} is not one of {list(SupportClass.__members__)}"
                )
            if not pair.premise.strip() or not pair.claim.strip():
                raise InputError(f"{where}: empty premise or claim")
            if pair.pair_id in seen:
                raise InputError(f"{where}: pair_id {pair.pair_id!r} repeats {seen[pair.pair_id]}")
            seen[pair.pair_id] = where
            pairs.append(pair)
    return pairs


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip().lower())


def side_of(pair: AuthoredPair) -> PairSide:
    """Train or test, by the message: every claim about one message lands on the same side."""
    digest = hashlib.blake2b(_norm(pair.premise).encode("utf-8"), digest_size=4).digest()
    return PairSide.TEST if int.from_bytes(digest, "big") % TEST_ONE_IN == 0 else PairSide.TRAIN


def authored_side(pairs: Sequence[AuthoredPair], side: PairSide) -> list[AuthoredPair]:
    return [p for p in pairs if side_of(p) is side]


class PairPredictor(Protocol):
    def predict_text(self, premises: Sequence[str], claims: Sequence[str]) -> np.ndarray: ...


class PairReport(BaseModel):
    """How a support model reads pairs it was never trained on."""

    n: int
    accuracy: float
    macro_f1: float
    per_class: dict[str, ClassScore]
    # gold class -> predicted class -> count
    confusion: dict[str, dict[str, int]]
    # per authored case: n and accuracy
    by_case: dict[str, tuple[int, float]]


def pair_report(model: PairPredictor, pairs: Sequence[AuthoredPair]) -> PairReport:
    if not pairs:
        raise InputError("no pairs to report on")
    probs = model.predict_text([p.premise for p in pairs], [p.claim for p in pairs])
    pred = probs.argmax(axis=1)
    gold = np.asarray([int(p.support) for p in pairs])
    labels = [int(c) for c in SupportClass]
    pr, rc, f1, sup = precision_recall_fscore_support(gold, pred, labels=labels, zero_division=0)
    cm = confusion_matrix(gold, pred, labels=labels)
    names = [c.name.lower() for c in SupportClass]
    hits: dict[str, list[bool]] = {}
    for p, g, q in zip(pairs, gold, pred, strict=True):
        hits.setdefault(p.case, []).append(bool(g == q))
    return PairReport(
        n=len(pairs),
        accuracy=float((pred == gold).mean()),
        macro_f1=float(np.mean(f1)),
        per_class={
            n: ClassScore(
                precision=float(pr[i]), recall=float(rc[i]), f1=float(f1[i]), support=int(sup[i])
            )
            for i, n in enumerate(names)
        },
        confusion={n: {m: int(cm[i, j]) for j, m in enumerate(names)} for i, n in enumerate(names)},
        by_case={k: (len(v), sum(v) / len(v)) for k, v in sorted(hits.items())},
    )
