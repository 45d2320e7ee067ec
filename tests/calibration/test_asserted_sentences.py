"""The sentences labelled by whether they assert a fact about their speaker
(benchmark/data/asserted_sentences/, data card there): well formed, and as the card counts."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2] / "benchmark" / "data" / "asserted_sentences"
LABELS = ("asserted", "imagined", "reported", "joke", "question", "other_person")
FOLDERS = ("p", "q", "r", "s", "t")


def _rows(folder: str) -> list[dict[str, object]]:
    lines = (ROOT / folder / "sentences.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_sentence_has_a_label_a_note_and_its_own_id(folder: str) -> None:
    rows = _rows(folder)
    assert len(rows) == 200
    for r in rows:
        assert set(r) == {"id", "text", "label", "hard", "note"}, r
        assert str(r["id"]).startswith(f"{folder}-")
        assert r["label"] in LABELS
        assert isinstance(r["hard"], bool)
        assert str(r["text"]).strip()
        assert str(r["note"]).strip()
    assert len({r["id"] for r in rows}) == len({r["text"] for r in rows}) == 200


def test_the_data_card_counts_every_folder() -> None:
    card = (ROOT / "README.md").read_text(encoding="utf-8")
    for folder in FOLDERS:
        rows = _rows(folder)
        labels = Counter(str(r["label"]) for r in rows)
        hard = sum(bool(r["hard"]) for r in rows)
        line = next(x for x in card.splitlines() if x.startswith(f"| `{folder}` |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[2:] == [str(len(rows)), *(str(labels[x]) for x in LABELS), str(hard)]
