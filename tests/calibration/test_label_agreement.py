"""`mirage guard agreement`: how far two other annotators agree with a set's labels, and the guard
with each; the packaged second labels are well formed and as their data card counts."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from rich.console import Console
from sklearn.metrics import cohen_kappa_score
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from mirage_guard.adapters.cli._guard import agreement_tables
from mirage_guard.calibration import (
    agreement,
    load_examples,
    load_second_labels,
    second_labels_path,
)
from mirage_guard.calibration._data import Example
from mirage_guard.guard import Decision, Provenance
from mirage_guard.guard.errors import InputError
from tests.fakes.decisions import logged_decision

G, R, S, F = "GROUNDED", "INFERRED_REASONABLE", "INFERRED_STEREOTYPE", "FABRICATED"
HELDOUT = Path(__file__).parents[2] / "benchmark" / "data" / "heldout"
CARD = Path(__file__).parents[2] / "benchmark" / "data" / "second_labels" / "README.md"

TURNS = [
    {"id": "t1", "role": "user", "content": "I moved to Leeds in May and I teach chemistry."},
    {"id": "t2", "role": "assistant", "content": "Nice! Do you like it there?"},
    {"id": "t3", "role": "user", "content": "Love it, I cycle to school every day."},
]
# claim id, the authors' label and turn; then slot 1's and slot 2's; then the guard's tag
CASES = [
    ("c1", (G, "t1"), (G, "t1"), (R, "t1"), Provenance.STATED),
    ("c2", (R, "t1"), (R, "t3"), (R, "t3"), Provenance.GENERATED),
    ("c3", (F, None), (F, None), (G, "t3"), Provenance.GENERATED),
    ("c4", (S, None), (F, None), (S, None), Provenance.GENERATED),
]


def _set(folder: Path) -> Path:
    folder.mkdir(parents=True)
    conv = {"conversation_id": "k1", "kind": "user-assistant", "turns": TURNS}
    (folder / "conversations.jsonl").write_text(json.dumps(conv) + "\n", "utf-8")
    claims = [
        {"claim_id": c, "conversation_id": "k1", "text": f"claim {c}", "label": a[0],
         "source_turn_id": a[1]}
        for c, a, _, _, _ in CASES
    ]  # fmt: skip
    (folder / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims), "utf-8")
    return folder


def _labels(path: Path, name: str, rows: list[dict[str, object]] | None = None) -> Path:
    if rows is None:
        rows = [
            {"set": name, "claim_id": c, "annotator": f"X{slot}", "slot": slot,
             "label": lab[0], "source_turn_id": lab[1], "sure": slot == 1, "note": "why"}
            for c, _, one, two, _ in CASES for slot, lab in ((1, one), (2, two))
        ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def _scored(folder: Path) -> dict[str, tuple[list[Example], dict[str, Decision]]]:
    examples = load_examples(folder)
    decisions = {
        c: logged_decision(f"claim {c}", tag, None if tag is Provenance.GENERATED else "t1")
        for c, *_, tag in CASES
    }
    return {"mine": (examples, decisions)}


def test_each_pair_of_labellers_and_the_guard_among_the_people(tmp_path: Path) -> None:
    folder = _set(tmp_path / "mine")
    report = agreement(load_second_labels(_labels(tmp_path / "l.jsonl", "mine")), _scored(folder))
    assert (report.n, report.sets) == (4, ["mine"])
    assert report.unsure_share == {"annotator 1": 0.0, "annotator 2": 1.0}
    pairs = {(p.a, p.b): p for p in report.pairs}
    assert list(pairs) == [
        ("authors", "annotator 1"), ("authors", "annotator 2"), ("authors", "guard"),
        ("annotator 1", "annotator 2"), ("annotator 1", "guard"), ("annotator 2", "guard"),
    ]  # fmt: skip
    one = pairs[("authors", "annotator 1")]
    # the same tag on all four; the same four-way label on three (a stereotype read as made up)
    assert (one.n, one.three_way, one.four_way) == (4, 1.0, 0.75)
    # both link c1 and c2: the same turn for c1 only
    assert (one.source_turn_n, one.source_turn) == (2, 0.5)
    two = pairs[("authors", "annotator 2")]
    authors = ["stated", "inferred", "generated", "generated"]
    slot2 = ["inferred", "inferred", "stated", "generated"]
    assert two.three_way == 0.5
    assert two.kappa_three_way == pytest.approx(cohen_kappa_score(authors, slot2))
    assert two.kappa_binary == pytest.approx(
        cohen_kappa_score([t == "generated" for t in authors], [t == "generated" for t in slot2])
    )
    guard = pairs[("authors", "guard")]
    assert (guard.three_way, guard.four_way) == (0.75, None)
    # c2 and c4 get one tag from all three people; the guard is right on c4 only
    assert report.unanimous_share == 0.5
    assert (report.guard_when_unanimous.n, report.guard_when_unanimous.accuracy) == (2, 0.5)
    assert (report.guard_when_split.n, report.guard_when_split.accuracy) == (2, 1.0)
    # the tag two of three give: stated, inferred, generated, generated
    assert (report.guard_vs_majority.n, report.guard_vs_majority.accuracy) == (4, 0.75)
    assert report.by_set["mine"]["authors / annotator 2"] == 0.5
    # printed on an 80-column console, every labeller pair and set name is whole
    out = io.StringIO()
    console = Console(file=out, width=80)
    for table in agreement_tables(report.model_copy(update={"sets": ["a_long_set_name_here"]})):
        console.print(table)
    text = out.getvalue()
    assert all(len(line) <= 80 for line in text.splitlines())
    for p in report.pairs:  # the annotators by their number
        assert f"{p.a} / {p.b}".replace("annotator ", "") in text
    assert f"{report.pairs[0].source_turn:.3f} (2)" in text  # a cell whole on one line
    assert "mine" in text
    wide = report.model_copy(update={"by_set": {"a_long_set_name_here": report.by_set["mine"]}})
    out = io.StringIO()
    Console(file=out, width=80).print(agreement_tables(wide)[2])
    assert "a_long_set_name_here" in out.getvalue()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"label": "MAYBE"}, "label"),
        ({"label": G, "source_turn_id": None}, "needs a source_turn_id"),
        ({"label": F, "source_turn_id": "t1"}, "has no source_turn_id"),
        ({"slot": 3}, "slot"),
    ],
)
def test_a_bad_label_line_is_an_input_error_naming_its_line(
    tmp_path: Path, row: dict[str, object], message: str
) -> None:
    good = {"set": "mine", "claim_id": "c1", "annotator": "X1", "slot": 1, "label": F}
    path = _labels(tmp_path / "l.jsonl", "mine", [good, {**good, "claim_id": "c2", **row}])
    with pytest.raises(InputError, match=rf"l\.jsonl:2: .*{message}"):
        load_second_labels(path)


def test_a_claim_given_one_slot_twice_or_an_empty_file_is_refused(tmp_path: Path) -> None:
    row = {"set": "mine", "claim_id": "c1", "annotator": "X1", "slot": 1, "label": F}
    with pytest.raises(InputError, match=r"l\.jsonl:2: mine/c1 has slot 1 already"):
        load_second_labels(_labels(tmp_path / "l.jsonl", "mine", [row, row]))
    with pytest.raises(InputError, match="no labels"):
        load_second_labels(_labels(tmp_path / "e.jsonl", "mine", []))


def test_a_source_turn_outside_the_conversation_is_refused(tmp_path: Path) -> None:
    folder = _set(tmp_path / "mine")
    row = {"set": "mine", "claim_id": "c1", "annotator": "X1", "slot": 1, "label": G,
           "source_turn_id": "t9"}  # fmt: skip
    labels = load_second_labels(_labels(tmp_path / "l.jsonl", "mine", [row]))
    with pytest.raises(InputError, match="'t9' is not a turn of its conversation"):
        agreement(labels, _scored(folder))
    elsewhere = load_second_labels(
        _labels(tmp_path / "o.jsonl", "other", [{**row, "set": "other"}])
    )
    with pytest.raises(InputError, match="other/c1: labelled, but not among the scored claims"):
        agreement(elsewhere, _scored(folder))


def _packaged() -> list[dict[str, object]]:
    lines = second_labels_path().read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def test_the_packaged_labels_cover_whole_conversations_twice() -> None:
    rows = _packaged()
    labels = load_second_labels(second_labels_path())
    assert len(labels) == len(rows)
    by_set: dict[str, set[str]] = {}
    for r in labels:
        by_set.setdefault(r.set, set()).add(r.claim_id)
    for name, ids in by_set.items():
        claims = [
            json.loads(x) for x in (HELDOUT / name / "claims.jsonl").read_text("utf-8").splitlines()
        ]
        picked = {c["conversation_id"] for c in claims if c["claim_id"] in ids}
        # every claim of a picked conversation, and nothing else
        assert ids == {c["claim_id"] for c in claims if c["conversation_id"] in picked}
        for slot in (1, 2):
            assert {r.claim_id for r in labels if r.set == name and r.slot == slot} == ids
    # the two annotators of a claim are different people
    annotators: dict[tuple[str, str], set[str]] = {}
    for r in labels:
        annotators.setdefault((r.set, r.claim_id), set()).add(r.annotator)
    assert all(len(a) == 2 for a in annotators.values())


def test_the_data_card_counts_the_packaged_labels() -> None:
    labels = load_second_labels(second_labels_path())
    card = CARD.read_text(encoding="utf-8")
    for name in sorted({r.set for r in labels}):
        mine = [r for r in labels if r.set == name]
        line = next(x for x in card.splitlines() if x.startswith(f"| `{name}` |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[1:3] == [str(len({r.claim_id for r in mine})), str(len(mine))], name
    for slot in (1, 2):
        counts = Counter(r.label.value for r in labels if r.slot == slot)
        unsure = sum(not r.sure for r in labels if r.slot == slot)
        line = next(x for x in card.splitlines() if x.startswith(f"| slot {slot} |"))
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[1:] == [*(str(counts[x]) for x in (G, R, S, F)), str(unsure)]


@pytest.mark.slow
def test_the_command_scores_the_labelled_conversations_with_the_real_guard(
    tmp_path: Path,
) -> None:
    """On one held-out conversation, slot 1 copying the authors agrees with them on every claim,
    and the guard's agreement with the authors is its 3-way accuracy from `guard eval`."""
    source = HELDOUT / "mem0_short"
    conv = (source / "conversations.jsonl").read_text("utf-8").splitlines()[0]
    cid = json.loads(conv)["conversation_id"]
    claims = [
        json.loads(x) for x in (source / "claims.jsonl").read_text("utf-8").splitlines()
        if json.loads(x)["conversation_id"] == cid
    ]  # fmt: skip
    folder = tmp_path / "heldout" / "short"
    folder.mkdir(parents=True)
    (folder / "conversations.jsonl").write_text(conv + "\n", "utf-8")
    (folder / "claims.jsonl").write_text("".join(json.dumps(c) + "\n" for c in claims), "utf-8")
    rows = [
        {"set": "short", "claim_id": c["claim_id"], "annotator": "copy", "slot": 1,
         "label": c["label"], "source_turn_id": c["source_turn_id"]}
        for c in claims
    ] + [
        {"set": "short", "claim_id": c["claim_id"], "annotator": "nay", "slot": 2, "label": F}
        for c in claims
    ]  # fmt: skip
    labels = _labels(tmp_path / "l.jsonl", "short", rows)
    runner = CliRunner()
    out = runner.invoke(
        app, ["guard", "agreement", "--labels", str(labels), "--heldout", str(tmp_path / "heldout"),
              "--json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
    assert report["n"] == len(claims) > 3
    assert pairs[("authors", "annotator 1")]["three_way"] == 1.0
    assert pairs[("authors", "annotator 1")]["source_turn"] == 1.0
    ev = runner.invoke(app, ["guard", "eval", "--data", str(folder), "--json"])
    assert ev.exit_code == 0, ev.output
    accuracy = json.loads(ev.output)["provenance_accuracy"]
    assert pairs[("authors", "guard")]["three_way"] == pytest.approx(accuracy)
    table = runner.invoke(
        app, ["guard", "agreement", "--labels", str(labels), "--heldout", str(tmp_path / "heldout")]
    )
    assert table.exit_code == 0, table.output
    assert "the guard's 3-way accuracy among the people" in table.output
    missing = _labels(tmp_path / "m.jsonl", "short", [{**rows[0], "set": "nowhere"}])
    heldout = str(tmp_path / "heldout")
    refused = runner.invoke(
        app, ["guard", "agreement", "--labels", str(missing), "--heldout", heldout]
    )
    assert refused.exit_code != 0
    assert "is not a set folder" in " ".join(refused.output.split())
    unknown = _labels(tmp_path / "u.jsonl", "short", [{**rows[0], "claim_id": "zzz"}])
    refused = runner.invoke(
        app, ["guard", "agreement", "--labels", str(unknown), "--heldout", heldout]
    )
    assert refused.exit_code != 0
    assert "1 claim(s) not in set 'short', e.g. 'zzz'" in " ".join(refused.output.split())
    # --set keeps the labels of the sets it names, and refuses one with no labels
    both = _labels(tmp_path / "b.jsonl", "short", [*rows, {**rows[0], "set": "nowhere"}])
    only = runner.invoke(
        app, ["guard", "agreement", "--labels", str(both), "--heldout", heldout, "--set", "short",
              "--json"],
    )  # fmt: skip
    assert only.exit_code == 0, only.output
    assert json.loads(only.output)["sets"] == ["short"]
    refused = runner.invoke(
        app, ["guard", "agreement", "--labels", str(both), "--heldout", heldout, "--set", "else"]
    )
    assert refused.exit_code != 0
    assert "no labels of set 'else'" in " ".join(refused.output.split())


def test_a_label_is_read_as_a_labelled_claims_is(tmp_path: Path) -> None:
    """Any case, and the guard's own tags for the label each stands for, as in a claims file."""
    rows = [
        {"set": "mine", "claim_id": "c1", "annotator": "X1", "slot": 1, "label": "grounded",
         "source_turn_id": "t1"},
        {"set": "mine", "claim_id": "c2", "annotator": "X1", "slot": 1, "label": "generated"},
        {"set": "mine", "claim_id": "c3", "annotator": "X1", "slot": 1, "label": "inferred",
         "source_turn_id": "t1"},
    ]  # fmt: skip
    labels = load_second_labels(_labels(tmp_path / "l.jsonl", "mine", rows))
    assert [r.label.value for r in labels] == [G, F, R]
