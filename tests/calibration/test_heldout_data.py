"""The held-out labelled sets (benchmark/data/heldout/, data card there) are well formed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirage_guard.calibration._data import load_examples
from mirage_guard.calibration._suite import heldout_root

SETS = sorted(p for p in heldout_root().iterdir() if (p / "claims.jsonl").is_file())
LINKED = {"GROUNDED", "INFERRED_REASONABLE"}
LABELS = LINKED | {"INFERRED_STEREOTYPE", "FABRICATED"}


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def test_the_data_card_names_every_set() -> None:
    card = (heldout_root() / "README.md").read_text(encoding="utf-8")
    assert len(SETS) >= 15
    for folder in SETS:
        assert f"| `{folder.name}` |" in card


def test_ids_are_unique_across_sets() -> None:
    claims = [c["claim_id"] for s in SETS for c in _rows(s / "claims.jsonl")]
    convs = [c["conversation_id"] for s in SETS for c in _rows(s / "conversations.jsonl")]
    assert len(claims) == len(set(claims))
    assert len(convs) == len(set(convs))


@pytest.mark.parametrize("folder", SETS, ids=lambda p: p.name)
def test_every_claim_rests_on_a_user_turn_of_its_conversation(folder: Path) -> None:
    convs = {c["conversation_id"]: c for c in _rows(folder / "conversations.jsonl")}
    claims = _rows(folder / "claims.jsonl")
    for conv in convs.values():
        ids = [t["id"] for t in conv["turns"]]  # type: ignore[index]
        assert len(ids) == len(set(ids)), conv["conversation_id"]
    for c in claims:
        assert c["label"] in LABELS, c["claim_id"]
        turns = {t["id"]: t for t in convs[c["conversation_id"]]["turns"]}  # type: ignore[index]
        if c["label"] in LINKED:
            assert turns[c["source_turn_id"]]["role"] == "user", c["claim_id"]
        else:
            assert c["source_turn_id"] is None, c["claim_id"]
    assert len(load_examples(folder)) == len(claims)
