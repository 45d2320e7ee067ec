"""BEGIN conversion (on a hand-made TSV in BEGIN's format) and the cue-only baseline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mirage_guard.calibration._begin import convert_begin, write_begin
from mirage_guard.calibration._cues import CueBaseline, cue_row
from mirage_guard.calibration._data import Example, LabelledClaim, load_examples
from mirage_guard.guard import Label, Role, Turn
from mirage_guard.guard.errors import InputError

HEADER = "evidence\tprevious turn\tresponse\tgold label\tcoarse label\tfull label set"
ROWS = [
    "otters hold hands while sleeping.\tdo otters sleep?\tthey hold hands while they sleep\t"
    "entailment\tentailment\tnot-generic;on-topic;cooperative;faithful",
    "otters live in rivers.\tcool!\ti saw otters in oslo last june\thallucination\tneutral\t"
    "not-generic;on-topic;cooperative;hallucination-personal",
    "otters eat fish.\tand?\tthey never eat fish\tcontradiction\tcontradiction\t"
    "not-generic;on-topic;uncooperative;faithful",
    "otters are mammals.\thi\tyeah\tgeneric\tneutral\tgeneric;on-topic;cooperative;not-info",
    "otters are mammals.\thi\ti like cars\toff-topic\tneutral\tnot-generic;off-topic",
]


def _tsv(tmp_path: Path, rows: list[str]) -> Path:
    path = tmp_path / "begin.tsv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_begin_maps_labels_and_keeps_the_previous_turn_out_of_the_evidence(
    tmp_path: Path,
) -> None:
    claims, seen = convert_begin(_tsv(tmp_path, ROWS))
    assert seen == {
        "entailment": 1, "hallucination": 1, "contradiction": 1, "generic": 1, "off-topic": 1,
    }  # fmt: skip
    assert [c["label"] for c in claims] == ["GROUNDED", "FABRICATED", "FABRICATED"]
    first = claims[0]
    assert first["source_turn_id"] == first["turns"][1]["id"]  # type: ignore[index]
    assert [t["role"] for t in first["turns"]] == ["assistant", "user"]  # type: ignore[union-attr]
    out = tmp_path / "begin.jsonl"
    n, _ = write_begin(_tsv(tmp_path, ROWS), out)
    examples = load_examples(out)
    assert n == len(examples) == 3
    # one conversation per row, even though every row's turn ids follow the same pattern
    assert len({e.conversation_id for e in examples}) == 3
    assert examples[0].turns[1].content == "otters hold hands while sleeping."


def test_begin_rejects_other_files(tmp_path: Path) -> None:
    bad = tmp_path / "x.tsv"
    bad.write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(InputError, match="not a BEGIN TSV"):
        convert_begin(bad)
    with pytest.raises(InputError, match="unknown BEGIN label"):
        convert_begin(_tsv(tmp_path, [ROWS[0].replace("entailment\tentailment", "maybe\tx")]))
    with pytest.raises(InputError, match="cannot read"):
        convert_begin(tmp_path / "missing.tsv")


def _example(i: int, text: str, label: Label) -> Example:
    turn = Turn(id="t1", role=Role.USER, content="I keep bees.")
    source = "t1" if label in (Label.GROUNDED, Label.INFERRED_REASONABLE) else None
    claim = LabelledClaim(
        claim_id=f"c{i}", text=text, label=label, source_turn_id=source, turns=[turn]
    )
    return Example(claim=claim, conversation_id="x", turns=(turn,))


def test_cue_baseline_finds_a_leaking_hedge_and_nothing_in_balanced_text() -> None:
    leaky = [
        _example(i, f"Probably owns hive tool {i}", Label.INFERRED_REASONABLE) for i in range(20)
    ]
    leaky += [_example(100 + i, f"Keeps bees {i}", Label.GROUNDED) for i in range(20)]
    assert CueBaseline(leaky).auroc_inferred(leaky) == pytest.approx(1.0)
    # hedges on every other claim of each label: the cue carries nothing
    balanced = [
        _example(i, ("Probably keeps bees" if (i // 2) % 2 else "Keeps bees"), label)
        for i, label in enumerate([Label.GROUNDED, Label.INFERRED_REASONABLE] * 20)
    ]
    assert CueBaseline(balanced).auroc_inferred(balanced) == pytest.approx(0.5)
    assert np.isnan(CueBaseline(balanced).auroc_oi(balanced))  # no OI label: nothing to learn
    assert cue_row("User probably likes you, Anna.")[:5] == [1.0, 0.0, 5.0, 1.0, 1.0]
    assert cue_row("Must love bees")[1] == 1.0


def test_load_examples_reads_the_converted_begin_lines_as_json(tmp_path: Path) -> None:
    out = tmp_path / "b.jsonl"
    write_begin(_tsv(tmp_path, ROWS[:2]), out)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {r["phenomenon"] for r in rows} == {"entailment", "hallucination"}


def test_per_phenomenon_accuracy_counts_only_tagged_claims() -> None:
    from mirage_guard.calibration._eval import _by_phenomenon

    examples = [_example(i, "Keeps bees", Label.GROUNDED) for i in range(3)]
    tagged = [
        Example(claim=e.claim.model_copy(update={"phenomenon": p}), conversation_id="x",
                turns=e.turns)
        for e, p in zip(examples, ["glued_detail", "glued_detail", None], strict=True)
    ]  # fmt: skip
    scores = _by_phenomenon(tagged, ["stated"] * 3, ["stated", "generated", "stated"])
    assert set(scores) == {"glued_detail"}
    assert scores["glued_detail"].n == 2
    assert scores["glued_detail"].provenance_accuracy == pytest.approx(0.5)
