"""A labelled set turned into support pairs (`mirage calibrate labelled-pairs`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from mirage_guard.calibration import labelled_set_pairs, load_authored, write_pairs
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker

TURNS = [
    ("t1", "user", "I work night shifts at the ER, so I sleep until 2pm."),
    ("t2", "assistant", "That sounds tiring. Do you live near the hospital?"),
    ("t3", "user", "Ten minutes away. My sister Ana is a teacher in Porto."),
    ("t4", "user", "We moved to Leeds last year, actually no, it was Sheffield."),
]
CLAIMS = [
    ("c1", "Works night shifts at the ER", "GROUNDED", "t1", "plain"),
    ("c2", "Sleeps during the day", "INFERRED_REASONABLE", "t1", "flat_inference"),
    ("c3", "Works day shifts at the ER", "FABRICATED", None, "contradicted_detail"),
    ("c4", "Is a teacher in Porto", "FABRICATED", None, "other_party_fact"),
    ("c5", "Moved to Leeds last year", "FABRICATED", None, "stale_after_correction"),
    ("c6", "Likes country music", "INFERRED_STEREOTYPE", None, "stereotype"),
]
# the turn the (stub) linker links each claim to; c6 links none
LINKED = {"c1": "t1", "c2": "t1", "c3": "t1", "c4": "t3", "c5": "t4", "c6": None}


class _Linker:
    def link(self, turns: Sequence[Any], candidates: Sequence[Any], user_name: Any = None) -> Any:
        linked = (LINKED[c.id.split("-")[-1]] for c in candidates)
        return [SimpleNamespace(turn_id=f"x-{t}" if t else None) for t in linked]


def _set(folder: Path) -> Path:
    folder.mkdir()
    turns = [{"id": f"x-{i}", "session": 1, "role": r, "content": c} for i, r, c in TURNS]
    conv = {"conversation_id": "x", "kind": "user-assistant", "user_name": "Kim",
            "other_name": "assistant", "turns": turns}  # fmt: skip
    (folder / "conversations.jsonl").write_text(json.dumps(conv) + "\n", encoding="utf-8")
    rows = [
        {"claim_id": f"x-{i}", "conversation_id": "x", "text": text, "label": label,
         "source_turn_id": f"x-{src}" if src else None, "phenomenon": case}
        for i, text, label, src, case in CLAIMS
    ]  # fmt: skip
    (folder / "claims.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    return folder


def test_each_label_becomes_its_support_class_against_the_turn_it_rests_on(
    tmp_path: Path,
) -> None:
    linker = cast(EvidenceLinker, _Linker())
    pairs = labelled_set_pairs(_set(tmp_path / "mine"), linker)
    got = {p.pair_id: (p.label, p.premise[:12], p.case) for p in pairs}
    assert got == {
        "ls-x-c1": ("ENTAILED", "I work night", "plain"),
        "ls-x-c2": ("INFERABLE", "I work night", "flat_inference"),
        "ls-x-c3": ("CONTRADICTED", "I work night", "contradicted_detail"),
        "ls-x-c4": ("UNSUPPORTED", "Ten minutes ", "other_party_fact"),
        # c5: a stale value's turn does say it; c6: linked to no turn
    }
    # the assistant's turn is never a premise, and the files read back as hand-written pairs
    write_pairs(pairs, tmp_path / "pairs" / "part_mine.jsonl")
    assert load_authored(tmp_path / "pairs") == pairs


def test_a_folder_that_cannot_be_written_is_a_typed_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(InputError, match="cannot write"):
        write_pairs([], blocker / "part_x.jsonl")
