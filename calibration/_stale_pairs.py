"""Hand-written stale / holds triples -> labelled claims: a later sentence that changes a fact.

``benchmark/data/stale_pairs/<author>/triples.jsonl`` (data card there) holds (earlier sentence,
later sentence, memory entry written from the earlier one) triples, labelled ``stale`` when the
later sentence leaves the entry no longer true and ``holds`` when it does not. Each becomes a
three-turn conversation in the inline-turns format of `mirage guard eval` (as BEGIN's rows do):
the earlier sentence as a user turn, an assistant's "OK, noted.", the later sentence as a user
turn. ``stale`` -> FABRICATED (its phenomenon ``stale/<how>``), ``holds`` -> GROUNDED with the
first turn as its source (``holds/<how>``). `mirage guard eval-suite` scores them as the set
"stale triples".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mirage_guard.calibration._data import packaged, read_models
from mirage_guard.calibration._eval import write_whole
from mirage_guard.guard import Label
from mirage_guard.guard.errors import InputError

TRIPLES = "triples.jsonl"
FOLDER = "stale_pairs"
# what the assistant says between the two user turns: context, never evidence
BETWEEN = "OK, noted."
STALE_HOWS = frozenset(
    ("new_value", "correction_word", "ended", "changed_number", "self_correction")
)
HOLDS_HOWS = frozenset(
    ("restated", "elaborated", "same_topic", "someone_else", "considering", "temporary", "addition")
)


class Triple(BaseModel):
    """One line of a ``triples.jsonl`` file (the data card's schema)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    earlier: str
    later: str
    claim: str
    label: Literal["stale", "holds"]
    kind: str
    how: str
    note: str = ""


def stale_pairs_folder() -> Path:
    """The packaged triples (``benchmark/data/stale_pairs/``)."""
    return packaged(FOLDER)


def triple_files(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*/{TRIPLES}"))


def load_triples(folder: Path) -> list[tuple[str, Triple]]:
    """(author, triple) of every ``<author>/triples.jsonl`` in ``folder``; an
    :class:`~mirage_guard.guard.errors.InputError` names the file and line of a row that is not
    a triple, has an empty text or a ``how`` its label does not have, or repeats an id."""
    files = triple_files(folder)
    if not files:
        raise InputError(f"no <author>/{TRIPLES} in {folder}")
    out: list[tuple[str, Triple]] = []
    seen: set[str] = set()
    for path in files:
        for n, t in read_models(path, Triple, what="a triple"):
            if not (t.earlier.strip() and t.later.strip() and t.claim.strip()):
                raise InputError(f"{path}:{n}: empty earlier, later or claim")
            if t.how not in (STALE_HOWS if t.label == "stale" else HOLDS_HOWS):
                raise InputError(f"{path}:{n}: {t.how!r} is not a way a claim is {t.label}")
            if t.id in seen:
                raise InputError(f"{path}:{n}: repeated id {t.id!r}")
            seen.add(t.id)
            out.append((path.parent.name, t))
    return out


def triple_claims(triples: Sequence[Triple]) -> list[dict[str, object]]:
    """The triples as labelled claims with inline turns (the format of `mirage guard eval`)."""
    claims: list[dict[str, object]] = []
    for t in triples:
        turns = [
            {"id": f"{t.id}-t1", "role": "user", "content": t.earlier},
            {"id": f"{t.id}-t2", "role": "assistant", "content": BETWEEN},
            {"id": f"{t.id}-t3", "role": "user", "content": t.later},
        ]
        stale = t.label == "stale"
        claims.append(
            {
                "claim_id": t.id,
                "text": t.claim,
                "label": (Label.FABRICATED if stale else Label.GROUNDED).value,
                "source_turn_id": None if stale else f"{t.id}-t1",
                "turns": turns,
                "phenomenon": f"{t.label}/{t.how}",
            }
        )
    return claims


def write_triples_set(folder: Path, out: Path) -> int:
    """Write the triples of ``folder`` as a claims file at ``out`` (whole or not at all); how
    many."""
    claims = triple_claims([t for _, t in load_triples(folder)])
    write_whole(out, (json.dumps(c, ensure_ascii=False) for c in claims), "the stale triples")
    return len(claims)
