"""``mirage report label``: label a file of claims one by one at the terminal.

The file is what ``mirage report label-sample`` writes (or any claims file with inline
``turns``): one JSON object per line with the claim's ``text``, an empty ``label`` and the
conversation as it stood when the claim was decided. Each answer fills ``label`` (and
``source_turn_id``, which must name one of that conversation's user turns, for a stated or
inferred claim) and the whole file is rewritten at once before the next claim is shown, so
quitting, an interrupt or a crash loses at most the claim on screen. Lines already labelled are
left as they are; every other field of a line is kept.

This module holds what can go wrong with a file and an answer (no terminal); the prompt loop is
in ``adapters/cli/_report.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mirage_guard.calibration import LABEL_ALIASES, label_key, read_jsonl, write_whole
from mirage_guard.guard import Label, Role
from mirage_guard.guard.errors import InputError

# the answer keys, as the prompt shows them
ANSWERS: dict[str, Label] = {
    "s": Label.GROUNDED,  # stated: the user said it
    "i": Label.INFERRED_REASONABLE,  # inferred: one common-sense step from what they said
    "t": Label.INFERRED_STEREOTYPE,  # a stereotype: generated
    "g": Label.FABRICATED,  # generated: nothing the user said gives it
}
# labels whose claim rests on a user turn (the source turn is required)
SOURCED = frozenset({Label.GROUNDED, Label.INFERRED_REASONABLE})


def read_claims(path: Path) -> list[dict[str, Any]]:
    """Every line of ``path`` as an object; an :class:`InputError` naming the line for anything
    the labeller cannot show (not JSON, not an object, no ``text``, no ``turns`` list, a
    ``label`` that ``guard eval`` would not read: one of the four in any case, or the guard's
    own tags "stated", "inferred", "generated")."""
    rows: list[dict[str, Any]] = []
    for n, row in read_jsonl(path):
        where = f"{path}:{n}"
        text = row.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InputError(f"{where}: no claim `text`")
        turns = row.get("turns")
        if not isinstance(turns, list) or not all(
            isinstance(t, dict) and isinstance(t.get("id"), str) for t in turns
        ):
            raise InputError(
                f"{where}: no `turns` list (the conversation, as `mirage report label-sample` "
                "writes it, with an `id`, `role` and `content` per turn)"
            )
        label = row.get("label")
        if label is not None and not (
            isinstance(label, str) and label_key(label) in Label.__members__
        ):
            raise InputError(
                f"{where}: label {label!r} is not one of {', '.join(Label)} (any case) or "
                f"{', '.join(LABEL_ALIASES).lower()}"
            )
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: no claim to label")
    return rows


def user_turn_ids(row: dict[str, Any]) -> list[str]:
    """The ids of the user's turns in the claim's conversation, in order."""
    return [str(t["id"]) for t in row["turns"] if t.get("role") == Role.USER.value]


def unlabelled(rows: list[dict[str, Any]]) -> list[int]:
    """Positions of the lines still to label."""
    return [i for i, r in enumerate(rows) if r.get("label") is None]


def answer(row: dict[str, Any], label: Label, source_turn_id: str | None) -> None:
    """Fill ``row``'s label and source turn; an :class:`InputError` (the row unchanged) when a
    stated or inferred claim names no user turn of its conversation, or a generated one names
    any."""
    if label in SOURCED:
        users = user_turn_ids(row)
        if source_turn_id not in users:
            shown = ", ".join(users) or "none"
            raise InputError(
                f"a {label.provenance.value} claim needs the user turn it rests on: one of {shown} "
                f"(got {source_turn_id!r})"
            )
    elif source_turn_id is not None:
        raise InputError(
            f"a {label.provenance.value} claim rests on no turn: leave the source turn empty"
        )
    row["label"] = label.value
    row["source_turn_id"] = source_turn_id


def save(path: Path, rows: list[dict[str, Any]]) -> None:
    """The file rewritten whole, in its order (a temporary file renamed into place)."""
    write_whole(path, (json.dumps(r, ensure_ascii=False) for r in rows), "the labels")


__all__ = ["ANSWERS", "SOURCED", "answer", "read_claims", "save", "unlabelled", "user_turn_ids"]
