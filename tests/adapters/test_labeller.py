"""``mirage report label``: a label-sample file labelled at the terminal, each answer in the file
before the next claim is shown; labelled, the file is what ``guard eval`` reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters._labeller import answer, read_claims, unlabelled
from mirage_guard.adapters.cli import app
from mirage_guard.calibration import load_examples
from mirage_guard.guard import Label
from mirage_guard.guard.errors import InputError
from tests.adapters.conftest import TURNS, _row


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _label(path: Path, keys: str, *args: str) -> Any:
    return CliRunner().invoke(app, ["report", "label", str(path), *args], input=keys)


def test_each_answer_is_in_the_file_and_the_file_reads_as_labelled_claims(sample: Path) -> None:
    first = _label(sample, "s\nt1\nq\n")
    assert first.exit_code == 0, first.output
    assert "claim: Went climbing last weekend" in first.output
    assert "Has two younger sisters" not in first.output  # quit at the second claim
    rows = _read(sample)
    assert (rows[0]["label"], rows[0]["source_turn_id"]) == ("GROUNDED", "t1")
    assert [r["label"] for r in rows[1:]] == [None, None]
    assert rows[0]["tenant"] == "acme"
    assert rows[0]["turns"] == TURNS
    assert "1 labelled this session, 2 of 3 still unlabelled" in first.output
    # run again: the labelled line is skipped, the rest asked in file order
    second = _label(sample, "i\nt3\ng\n")
    assert second.exit_code == 0, second.output
    assert "claim: Went climbing" not in second.output
    assert "2 labelled this session, 0 of 3 still unlabelled" in second.output
    rows = _read(sample)
    assert [(r["label"], r["source_turn_id"]) for r in rows] == [
        ("GROUNDED", "t1"), ("INFERRED_REASONABLE", "t3"), ("FABRICATED", None),
    ]  # fmt: skip
    examples = load_examples(sample)
    assert [e.claim.label for e in examples] == [
        Label.GROUNDED, Label.INFERRED_REASONABLE, Label.FABRICATED,
    ]  # fmt: skip


def test_a_source_turn_must_be_a_user_turn_of_the_conversation(sample: Path) -> None:
    """The assistant's turn and an unknown id are refused and the claim asked again; nothing is
    written for it until the answer is whole."""
    result = _label(sample, "s\nt2\ns\nt9\ns\n\ni\nt3\nq\n")
    assert result.exit_code == 0, result.output
    assert result.output.count("needs the user turn it rests on: one of t1, t3") == 3
    assert "a stated claim needs" in result.output
    assert result.output.count("claim: Went climbing last weekend") == 4
    rows = _read(sample)
    assert (rows[0]["label"], rows[0]["source_turn_id"]) == ("INFERRED_REASONABLE", "t3")
    assert rows[1]["label"] is None


def test_skip_back_and_an_unknown_key(sample: Path) -> None:
    """[n] leaves a claim unlabelled, [b] shows the one before again (its label can be changed),
    any other key asks again."""
    result = _label(sample, "x\nn\ng\nb\ns\nt3\nq\n")
    assert result.exit_code == 0, result.output
    assert "answer one of:" in result.output
    assert "labelled FABRICATED (source turn None)" in result.output  # shown again after [b]
    rows = _read(sample)
    assert rows[0]["label"] is None
    assert (rows[1]["label"], rows[1]["source_turn_id"]) == ("GROUNDED", "t3")
    assert rows[2]["label"] is None


def test_the_end_of_input_keeps_every_answer_given(sample: Path) -> None:
    result = _label(sample, "g\n")
    assert result.exit_code == 0, result.output
    assert [r["label"] for r in _read(sample)] == ["FABRICATED", None, None]


def test_last_shows_only_the_last_turns(sample: Path) -> None:
    result = _label(sample, "q\n", "--last", "1")
    assert "(2 earlier turns not shown)" in result.output
    assert "At the gym near my flat in Leeds." in result.output
    assert "I went climbing last weekend." not in result.output


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        (json.dumps({"text": "", "turns": TURNS}), "no claim `text`"),
        (json.dumps({"text": "Lives in Leeds"}), "no `turns` list"),
        (json.dumps({"text": "Lives in Leeds", "turns": TURNS, "label": "TRUE"}), "'TRUE'"),
    ],
)
def test_a_file_the_labeller_cannot_show_is_refused_naming_its_line(
    tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(_row("log-1", "Went climbing")) + "\n" + line + "\n", "utf-8")
    before = path.read_bytes()
    with pytest.raises(InputError, match=message) as err:
        read_claims(path)
    assert f"{path}:2" in str(err.value)
    result = _label(path, "s\nt1\n")
    assert result.exit_code == 2
    assert "error:" in result.output
    assert f"{path}:2" in result.output
    assert path.read_bytes() == before


def test_a_missing_or_empty_file_is_refused(tmp_path: Path) -> None:
    assert _label(tmp_path / "nope.jsonl", "").exit_code == 2
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    result = _label(empty, "")
    assert result.exit_code == 2
    assert "no claim to label" in result.output


def test_answer_leaves_the_row_unchanged_when_refused() -> None:
    row = _row("log-1", "Has two younger sisters")
    with pytest.raises(InputError, match="rests on no turn"):
        answer(row, Label.FABRICATED, "t1")
    with pytest.raises(InputError, match="one of t1, t3"):
        answer(row, Label.GROUNDED, None)
    assert (row["label"], row["source_turn_id"]) == (None, None)
    answer(row, Label.INFERRED_STEREOTYPE, None)
    assert row["label"] == "INFERRED_STEREOTYPE"
    assert unlabelled([row, _row("log-2", "x")]) == [1]
