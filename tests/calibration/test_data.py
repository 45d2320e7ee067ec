"""The labelled-claims input format (what `mirage guard eval --data FILE` reads)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.calibration._data import (
    TextVariant,
    chat_lines,
    group_by_conversation,
    load_examples,
    strip_hedges,
    typographic,
)
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
    ("written", "label"),
    [
        ("stated", Label.GROUNDED), ("Inferred", Label.INFERRED_REASONABLE),
        ("GENERATED", Label.FABRICATED), ("grounded", Label.GROUNDED),
        ("inferred-reasonable", Label.INFERRED_REASONABLE),
        (" Inferred_Stereotype ", Label.INFERRED_STEREOTYPE), ("fabricated", Label.FABRICATED),
    ],
)  # fmt: skip
def test_labels_in_any_case_or_as_the_guards_tags(
    tmp_path: Path, written: str, label: Label
) -> None:
    row = {"claim_id": "a", "text": "Is a nurse", "label": written, "turns": TURNS}
    if label in (Label.GROUNDED, Label.INFERRED_REASONABLE):
        row["source_turn_id"] = "t1"
    (ex,) = load_examples(write(tmp_path / "c.jsonl", [row]))
    assert ex.claim.label is label
    assert ex.claim.label_as_written == written
    assert ex.is_oi is label.is_over_inference


def test_a_stated_claim_without_its_turn_names_the_label_as_written(tmp_path: Path) -> None:
    row = {"claim_id": "a", "text": "x", "label": "stated", "turns": TURNS}
    with pytest.raises(InputError, match="stated claims need a source_turn_id"):
        load_examples(write(tmp_path / "c.jsonl", [row]))


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
        ({"claim_id": "a", "label": "FABRICATED", "turns": TURNS}, r"c\.jsonl:1: text: Field"),
    ],
    ids=["grounded-no-turn", "reasonable-no-turn", "no-conversation", "bad-label",
         "turn-not-in-conversation", "unknown-persona", "not-json", "not-object", "field-named"],
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


# ------------------------------------------------------- conversation keys, sets, text variants
def _inline(claim_id: str, text: str, turns: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
    label = extra.pop("label", "GROUNDED")
    source = extra.pop("source_turn_id", "t1" if label == "GROUNDED" else None)
    return {"claim_id": claim_id, "text": text, "label": label, "source_turn_id": source,
            "turns": turns, **extra}  # fmt: skip


ALICE = [{"id": "t1", "role": "user", "content": "I keep bees on my roof."}]
BOB = [{"id": "t1", "role": "user", "content": "I repair vintage motorbikes."}]


def test_conversations_that_reuse_turn_ids_are_not_merged(tmp_path: Path) -> None:
    claims = write(
        tmp_path / "c.jsonl",
        [_inline("a", "Keeps bees", ALICE), _inline("b", "Repairs motorbikes", BOB),
         _inline("a2", "Has a roof garden", ALICE, label="FABRICATED")],
    )  # fmt: skip
    examples = load_examples(claims)
    groups = group_by_conversation(examples)
    assert len(groups) == 2
    by_id = {e.claim.claim_id: e for e in examples}
    assert by_id["a"].conversation_id == by_id["a2"].conversation_id
    assert by_id["a"].conversation_id != by_id["b"].conversation_id
    assert by_id["b"].turns[0].content == "I repair vintage motorbikes."


def test_a_claim_id_used_twice_is_refused_with_both_lines(tmp_path: Path) -> None:
    """Within one conversation the guard said "duplicate candidate id" with no file or line;
    across two, the file loaded and its per-claim rows were then refused by guard diff."""
    for rows in (
        [_inline("a", "Keeps bees", ALICE), _inline("a", "Has a roof", ALICE)],
        [_inline("a", "Keeps bees", ALICE), _inline("a", "Repairs motorbikes", BOB)],
    ):
        claims = write(tmp_path / "c.jsonl", rows)
        with pytest.raises(InputError, match=r"c\.jsonl:2: claim_id 'a' again \(first on line 1\)"):
            load_examples(claims)


def test_a_persona_id_names_the_conversation_but_groups_it_the_same(tmp_path: Path) -> None:
    rows = [_inline("a", "Keeps bees", ALICE), _inline("b", "Repairs motorbikes", BOB)]
    plain = load_examples(write(tmp_path / "plain.jsonl", rows))
    named = load_examples(
        write(
            tmp_path / "named.jsonl",
            [{**r, "persona_id": p} for r, p in zip(rows, "AB", strict=True)],
        )
    )
    assert [e.conversation_id for e in named] == ["A", "B"]
    assert [len(g) for g in group_by_conversation(plain).values()] == [
        len(g) for g in group_by_conversation(named).values()
    ]


def test_a_persona_id_with_other_turns_is_an_input_error(tmp_path: Path) -> None:
    rows = [_inline("a", "Keeps bees", ALICE, persona_id="A"),
            _inline("b", "Repairs motorbikes", BOB, persona_id="A")]  # fmt: skip
    with pytest.raises(InputError, match="other turns"):
        load_examples(write(tmp_path / "c.jsonl", rows))


def test_a_set_folder_reads_claims_against_its_conversations(tmp_path: Path) -> None:
    folder = tmp_path / "set"
    folder.mkdir()
    write(
        folder / "conversations.jsonl",
        [{"conversation_id": "k1", "kind": "two-people", "turns": [
            {"id": "k1-s1-t01", "session": 1, "date": "2026-03-01", "role": "user",
             "content": "We live in Boston."},
            {"id": "k1-s1-t02", "session": 1, "role": "assistant", "content": "Nice city."},
            {"id": "k1-s2-t01", "session": 2, "role": "user",
             "content": "Actually we moved to Denver."}]}],
    )  # fmt: skip
    write(
        folder / "claims.jsonl",
        [{"claim_id": "x1", "conversation_id": "k1", "text": "Lives in Denver",
          "label": "GROUNDED", "source_turn_id": "k1-s2-t01", "phenomenon": "current"},
         {"claim_id": "x2", "conversation_id": "k1", "text": "Lives in Boston",
          "label": "FABRICATED", "source_turn_id": None}],
    )  # fmt: skip
    examples = load_examples(folder)
    assert [e.conversation_id for e in examples] == ["k1", "k1"]
    assert [t.id for t in examples[0].turns] == ["k1-s1-t01", "k1-s1-t02", "k1-s2-t01"]
    assert examples[0].claim.phenomenon == "current"
    with pytest.raises(InputError, match="conversations file"):
        load_examples(folder / "claims.jsonl")
    bad = write(tmp_path / "bad.jsonl", [{"claim_id": "z", "conversation_id": "nope",
                                          "text": "x", "label": "FABRICATED"}])  # fmt: skip
    with pytest.raises(InputError, match="unknown conversation_id"):
        load_examples(bad, conversations=folder / "conversations.jsonl")
    # a conversation line without its turns: the error names the field
    broken = write(tmp_path / "conv.jsonl", [{"conversation_id": "k2"}])
    with pytest.raises(InputError, match=r"conv\.jsonl:1: turns: Field required"):
        load_examples(bad, conversations=broken)


def test_the_users_name_comes_from_the_conversation_or_the_persona(tmp_path: Path) -> None:
    """A conversation's `user_name` and a persona's `profile.name` reach every example; a set
    without one has none (the guard then treats a name in a claim as unsaid)."""
    folder = tmp_path / "set"
    folder.mkdir()
    turns = [{"id": "t1", "role": "user", "content": "I was a pharmacist for 38 years."}]
    write(
        folder / "conversations.jsonl",
        [{"conversation_id": "k1", "user_name": "Ingrid Solberg", "turns": turns},
         {"conversation_id": "k2", "turns": turns}],
    )  # fmt: skip
    write(
        folder / "claims.jsonl",
        [{"claim_id": "a", "conversation_id": "k1", "text": "Ingrid was a pharmacist",
          "label": "GROUNDED", "source_turn_id": "t1"},
         {"claim_id": "b", "conversation_id": "k2", "text": "Was a pharmacist",
          "label": "GROUNDED", "source_turn_id": "t1"}],
    )  # fmt: skip
    assert [e.user_name for e in load_examples(folder)] == ["Ingrid Solberg", None]
    personas = write(tmp_path / "personas.jsonl", [{**PERSONA, "profile": {"name": "Ana Ruiz"}}])
    claims = write(
        tmp_path / "claims.jsonl",
        [{"claim_id": "c", "persona_id": "x-001", "text": "Ana repairs bicycles",
          "label": "GROUNDED", "source_turn_id": "x-001-t1"}],
    )  # fmt: skip
    (ex,) = load_examples(claims, personas=personas)
    assert ex.user_name == "Ana Ruiz"


def test_text_variants_use_the_hand_written_twins_or_strip_hedges(tmp_path: Path) -> None:
    claims = write(
        tmp_path / "c.jsonl",
        [_inline("a", "Probably keeps bees", ALICE, text_flat="Keeps bees",
                 text_hedged="Probably keeps bees"),
         _inline("b", "It seems she most likely keeps bees", ALICE)],
    )  # fmt: skip
    flat = {e.claim.claim_id: e.claim.text for e in load_examples(claims, variant=TextVariant.FLAT)}
    assert flat == {"a": "Keeps bees", "b": "She keeps bees"}
    hedged = load_examples(claims, variant=TextVariant.HEDGED)
    assert [e.claim.text for e in hedged] == [
        "Probably keeps bees",
        "It seems she most likely keeps bees",
    ]


def test_typographic_types_the_apostrophes_inside_words_as_a_phone_does(tmp_path: Path) -> None:
    assert (
        typographic("I don't eat meat, it's Mel's 'rule'")
        == "I don\u2019t eat meat, it\u2019s Mel\u2019s 'rule'"
    )
    turns = [{"id": "t1", "role": "user", "content": "I'm a nurse, I don't drive."}]
    claims = write(tmp_path / "c.jsonl", [_inline("a", "Doesn't drive", turns)])
    (ex,) = load_examples(claims)
    typed = ex.typed()
    assert typed.claim.text == "Doesn\u2019t drive"
    assert typed.turns[0].content == "I\u2019m a nurse, I don\u2019t drive."
    assert (typed.claim.claim_id, typed.claim.label, ex.claim.text) == (
        "a",
        ex.claim.label,
        "Doesn't drive",
    )


def test_chat_lines_type_each_stop_between_sentences_of_a_user_turn_as_a_line_break(
    tmp_path: Path,
) -> None:
    assert (
        chat_lines("I live in Lisbon. We moved in May. ok")
        == "I live in Lisbon\nWe moved in May\nok"
    )
    assert chat_lines("It costs 3.5 euros.") == "It costs 3.5 euros."
    turns = [
        {"id": "t1", "role": "user", "content": "I'm a nurse. I don't drive."},
        {"id": "t2", "role": "assistant", "content": "Noted. Anything else?"},
    ]
    claims = write(tmp_path / "c.jsonl", [_inline("a", "Doesn't drive. Nurse.", turns)])
    (ex,) = load_examples(claims)
    lines = ex.as_chat_lines()
    assert [t.content for t in lines.turns] == [
        "I'm a nurse\nI don't drive.",
        "Noted. Anything else?",
    ]
    assert lines.claim.text == "Doesn't drive. Nurse."  # the claim as it is


@pytest.mark.parametrize(
    ("text", "flat"),
    [
        ("Probably owns a soldering iron.", "Owns a soldering iron."),
        (
            "Your day-to-day likely involves payment systems.",
            "Your day-to-day involves payment systems.",
        ),
        ("She is probably a nurse", "She is a nurse"),
        ("Lives in Lisbon", "Lives in Lisbon"),
    ],
)
def test_strip_hedges(text: str, flat: str) -> None:
    assert strip_hedges(text) == flat
