"""The labelled-claims input format (what `mirage guard eval --data FILE` reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.calibration._data import group_by_conversation, load_examples
from mirage_guard.guard import Label, Role
from mirage_guard.guard.errors import InputError

TURNS = [
    {"id": "t1", "role": "user", "content": "I'm a nurse."},
    {"id": "t2", "role": "assistant", "content": "Nice."},
]
PERSONA = {
    "persona_id": "x-001",
    "group": "neutral",
    "revealed_facts": [
        {"turn_id": "x-001-t1", "text": "I repair bicycles."},
        {"turn_id": "x-001-t2", "text": "I keep bees."},
    ],
}


def write(path: Path, rows: list[Any]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def test_inline_and_persona_claims_load(tmp_path: Path) -> None:
    personas = write(tmp_path / "p.jsonl", [PERSONA])
    claims = write(
        tmp_path / "c.jsonl",
        [
            {"claim_id": "a", "text": "Is a nurse", "label": "GROUNDED", "source_turn_id": "t1",
             "turns": TURNS, "split": "dev"},
            "",
            {"claim_id": "b", "text": "Keeps bees", "label": "GROUNDED",
             "source_turn_id": "x-001-t2", "persona_id": "x-001", "split": "train"},
            {"claim_id": "c", "text": "Has a son", "label": "FABRICATED", "persona_id": "x-001",
             "unknown_field": 1},
        ],
    )  # fmt: skip
    examples = load_examples(claims, personas=personas)
    assert [e.claim.claim_id for e in examples] == ["a", "b", "c"]
    a, b, c = examples
    assert [t.role for t in a.turns] == [Role.USER, Role.ASSISTANT]
    assert b.conversation_id == c.conversation_id == "x-001"
    assert [t.id for t in b.turns] == ["x-001-t1", "x-001-t2"]
    assert all(t.role is Role.USER for t in b.turns)
    assert c.is_oi
    assert not b.is_oi
    assert b.candidate.id == "b"
    assert b.candidate.text == "Keeps bees"
    assert [e.claim.claim_id for e in load_examples(claims, personas=personas, split="dev")] == [
        "a"
    ]
    groups = group_by_conversation(examples)
    assert [len(g) for g in groups.values()] == [1, 2]


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"claim_id": "a", "text": "x", "label": "GROUNDED", "turns": TURNS}, "source_turn_id"),
        (
            {"claim_id": "a", "text": "x", "label": "INFERRED_REASONABLE", "turns": TURNS},
            "source_turn_id",
        ),
        ({"claim_id": "a", "text": "x", "label": "FABRICATED"}, "turns"),
        ({"claim_id": "a", "text": "x", "label": "MAYBE", "turns": TURNS}, "c.jsonl:1"),
        (
            {"claim_id": "a", "text": "x", "label": "GROUNDED", "source_turn_id": "t9",
             "turns": TURNS},
            "not in turns",
        ),
        (
            {"claim_id": "a", "text": "x", "label": "FABRICATED", "persona_id": "nobody"},
            "unknown persona_id",
        ),
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON object"),
    ],
    ids=["grounded-no-turn", "reasonable-no-turn", "no-conversation", "bad-label",
         "turn-not-in-conversation", "unknown-persona", "not-json", "not-object"],
)  # fmt: skip
def test_invalid_lines_are_input_errors_with_their_location(
    tmp_path: Path, row: Any, message: str
) -> None:
    personas = write(tmp_path / "p.jsonl", [PERSONA])
    claims = write(tmp_path / "c.jsonl", [row])
    with pytest.raises(InputError, match=message):
        load_examples(claims, personas=personas)


def test_empty_file_or_split_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no labelled claims"):
        load_examples(write(tmp_path / "empty.jsonl", [""]))
    one = write(
        tmp_path / "one.jsonl",
        [{"claim_id": "a", "text": "x", "label": "FABRICATED", "turns": TURNS, "split": "train"}],
    )
    with pytest.raises(InputError, match="split 'dev'"):
        load_examples(one, split="dev")
    with pytest.raises(InputError, match="cannot read"):
        load_examples(tmp_path / "missing.jsonl")


def test_packaged_claims_load_with_the_packaged_personas() -> None:
    examples = load_examples()
    assert len(examples) >= 1500
    assert {e.claim.label for e in examples} == set(Label)
    for e in examples:
        if e.claim.source_turn_id:
            assert e.claim.source_turn_id in {t.id for t in e.turns}


def test_linked_label_citing_an_assistant_turn_is_an_input_error(tmp_path: Path) -> None:
    claims = write(
        tmp_path / "c.jsonl",
        [{"claim_id": "a", "text": "Nice", "label": "GROUNDED", "source_turn_id": "t2",
          "turns": TURNS}],
    )  # fmt: skip
    with pytest.raises(InputError, match="user turn"):
        load_examples(claims)
