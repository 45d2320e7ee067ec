"""`mirage guard diff`: two --per-claim files compared claim by claim (figures by hand)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from scipy.stats import binomtest
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from mirage_guard.adapters.cli._guard import diff_table, moved_table
from mirage_guard.calibration import ClaimRow, diff_runs, load_claim_rows, parse_groups, run_diff
from mirage_guard.calibration._eval import write_claim_rows
from mirage_guard.guard.errors import InputError

RUNNER = CliRunner()


def _row(
    set_: str, cid: str, expected: str, provenance: str, *, turn: str | None = None
) -> ClaimRow:
    """A claim labelled ``expected`` that the guard tagged ``provenance``; a stated or inferred
    claim's labelled turn is "t1", the guard's ``turn`` (None when generated)."""
    gold = None if expected == "generated" else "t1"
    return ClaimRow(
        set=set_, claim_id=cid, conversation_id="c1", text=f"claim {cid}", label=expected.upper(),
        expected=expected, provenance=provenance, correct=expected == provenance,
        action="store", score=0.5, threshold=0.5, expected_source_turn_id=gold,
        source_turn_id=turn, source_turn_correct=None if gold is None else turn == gold,
        expected_turn_text=None, evidence_span=None, similarity=0.5, phenomenon=None,
        audit_label=None, reasons=[],
    )  # fmt: skip


# set a: four claims; the second run fixes a1, a2 and a3 and breaks none
BEFORE = [
    _row("a", "a1", "stated", "inferred", turn="t1"),
    _row("a", "a2", "generated", "stated", turn="t1"),
    _row("a", "a3", "inferred", "generated"),
    _row("a", "a4", "stated", "stated", turn="t1"),
    # set b: b1 breaks (stated -> generated), b2 unchanged and wrong, b3 moves from one wrong
    # tag to another
    _row("b", "b1", "stated", "stated", turn="t1"),
    _row("b", "b2", "generated", "stated", turn="t1"),
    _row("b", "b3", "generated", "stated", turn="t2"),
]
AFTER = [
    _row("a", "a1", "stated", "stated", turn="t1"),
    _row("a", "a2", "generated", "generated"),
    _row("a", "a3", "inferred", "inferred", turn="t1"),
    _row("a", "a4", "stated", "stated", turn="t1"),
    _row("b", "b1", "stated", "generated"),
    _row("b", "b2", "generated", "stated", turn="t1"),
    _row("b", "b3", "generated", "inferred", turn="t2"),
]


def _keyed(rows: list[ClaimRow]) -> dict[tuple[str, str], ClaimRow]:
    return {(r.set, r.claim_id): r for r in rows}


def _write(path: Path, rows: list[ClaimRow]) -> Path:
    write_claim_rows(path, rows)
    return path


def test_figures_by_hand() -> None:
    report = diff_runs(_keyed(BEFORE), _keyed(AFTER), groups={"both": ["a", "b"]})
    by = {g.name: g for g in report.groups}
    assert list(by) == ["a", "b", "both", "all"]
    a, b, both = by["a"], by["b"], by["both"]
    assert (a.n, a.accuracy_before, a.accuracy_after) == (4, 0.25, 1.0)
    assert (a.moved, a.to_label, a.away) == (3, 3, 0)
    assert a.p_value == pytest.approx(0.25)  # 3 of 3 discordant one way: 2 * 0.5**3
    assert (a.generated_as_stated_before, a.generated_as_stated_after) == (1, 0)
    # linked to the labelled turn: a1, a4 before (a3 was generated); a1, a3, a4 after
    assert (a.source_turn_hits_before, a.source_turn_hits_after, a.source_turn_n) == (2, 3, 3)
    assert (b.n, b.moved, b.to_label, b.away) == (3, 2, 0, 1)
    assert (b.accuracy_before, b.accuracy_after) == (pytest.approx(1 / 3), 0.0)
    assert (b.generated_as_stated_before, b.generated_as_stated_after) == (2, 1)
    assert (b.source_turn_hits_before, b.source_turn_hits_after) == (1, 0)
    assert [g.kind for g in report.groups] == ["set", "set", "group", "all"]
    assert both.model_dump(exclude={"name", "kind"}) == by["all"].model_dump(
        exclude={"name", "kind"}
    )
    assert (both.to_label, both.away) == (3, 1)
    assert both.p_value == pytest.approx(binomtest(3, 4, 0.5).pvalue)
    assert [(m.claim_id, m.before, m.after) for m in report.moved] == [
        ("a1", "inferred", "stated"), ("a2", "stated", "generated"),
        ("a3", "generated", "inferred"), ("b1", "stated", "generated"),
        ("b3", "stated", "inferred"),
    ]  # fmt: skip
    same = diff_runs(_keyed(BEFORE), _keyed(BEFORE))
    assert all(g.moved == 0 and g.p_value == 1.0 for g in same.groups)


def test_only_shared_claims_are_compared(tmp_path: Path) -> None:
    before = _write(tmp_path / "before.jsonl", BEFORE)
    after = _write(tmp_path / "after.jsonl", [*AFTER[1:], _row("c", "c1", "stated", "stated")])
    report = run_diff(before, after)
    assert (report.only_before, report.only_after) == (1, 1)
    assert report.groups[-1].n == len(BEFORE) - 1
    assert [g.name for g in report.groups] == ["a", "b", "all"]
    # what the guard writes is what the loader reads, row for row
    assert list(load_claim_rows(before).values()) == BEFORE


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"set": "a", "claim_id": "x"}], r"x\.jsonl:1: not a --per-claim row \(conversation_id"),
        (["not json"], r"x\.jsonl:1: not JSON"),
        ([BEFORE[0].model_dump()] * 2, r"x\.jsonl:2: claim 'a1' of set 'a' twice"),
        ([], "no claims"),
    ],
    ids=["not-a-row", "not-json", "twice", "empty"],
)  # fmt: skip
def test_bad_files_are_input_errors_naming_the_line(
    tmp_path: Path, lines: list[object], message: str
) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    with pytest.raises(InputError, match=message):
        load_claim_rows(path)


def test_runs_that_are_not_comparable_are_refused() -> None:
    with pytest.raises(InputError, match="share no claim"):
        diff_runs(_keyed(BEFORE[:2]), _keyed(AFTER[2:]))
    relabelled = [_row("a", "a1", "inferred", "stated", turn="t1"), *AFTER[1:]]
    with pytest.raises(InputError, match=r"1 claims carry another label .* 'a1' of set 'a'"):
        diff_runs(_keyed(BEFORE), _keyed(relabelled))
    with pytest.raises(InputError, match="group 'g': no compared claims of set 'zz'"):
        diff_runs(_keyed(BEFORE), _keyed(AFTER), groups={"g": ["a", "zz"]})


@pytest.mark.parametrize("spec", ["noequals", "=a", "g=", "g= , ", "all=a"])
def test_bad_group_options_are_refused(spec: str) -> None:
    with pytest.raises(InputError, match="--group"):
        parse_groups([spec])
    with pytest.raises(InputError, match="taken"):
        parse_groups(["g=a", "g=b"])
    assert parse_groups(["read = a, b", "x=c"]) == {"read": ["a", "b"], "x": ["c"]}


def test_cli_prints_the_table_the_moved_claims_and_json(tmp_path: Path) -> None:
    before = _write(tmp_path / "before.jsonl", BEFORE)
    after = _write(tmp_path / "after.jsonl", AFTER)
    # a group may share a set's name: "a=a" is a group row, and printed as one
    args = ["guard", "diff", str(before), str(after), "--group", "both=a,b", "--group", "a=a"]
    out = RUNNER.invoke(app, [*args, "--moved", "2"])
    assert out.exit_code == 0, out.output
    for shown in ("0.250→1.000", "3/0", "claims that moved (2 of 5)", "claim a2"):
        assert shown in out.output
    assert "claim b1" not in out.output
    groups_only = RUNNER.invoke(app, [*args, "--no-per-set"])
    assert groups_only.exit_code == 0, groups_only.output
    rows = [re.match(r"\s*(\S+)\s+\d+\s+\d\.\d{3}→", x) for x in groups_only.output.splitlines()]
    names = [m.group(1) for m in rows if m]
    assert names == ["both", "a", "all"]
    as_json = RUNNER.invoke(app, [*args, "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["groups"][2]["to_label"] == 3
    bad = RUNNER.invoke(app, [*args[:3], str(tmp_path / "missing.jsonl")])
    assert bad.exit_code == 1
    assert "error:" in bad.output
    assert "cannot read" in bad.output


def test_tables_fit_an_80_column_console() -> None:
    many = [
        _row(f"a_rather_long_set_name_{i} (hedge-free)", "x", "stated", "stated") for i in range(3)
    ]
    report = diff_runs(_keyed(many), _keyed(many), groups={"g": [r.set for r in many]})
    out = io.StringIO()
    console = Console(file=out, width=80)
    console.print(diff_table(report))
    console.print(moved_table(diff_runs(_keyed(BEFORE), _keyed(AFTER)), limit=5))
    lines = out.getvalue().splitlines()
    assert lines
    assert max(len(line) for line in lines) <= 80
    assert sum("0.000→0.000" not in line and "1.000→1.000" in line for line in lines) == 5


def test_moved_in_lists_only_the_named_sets_and_keeps_every_figure(tmp_path: Path) -> None:
    every = diff_runs(_keyed(BEFORE), _keyed(AFTER), groups={"both": ["a", "b"]})
    only_b = diff_runs(_keyed(BEFORE), _keyed(AFTER), groups={"both": ["a", "b"]}, moved_in=["b"])
    assert [m.claim_id for m in only_b.moved] == ["b1", "b3"]
    assert only_b.groups == every.groups  # the figures of every set are still there
    by_group = diff_runs(_keyed(BEFORE), _keyed(AFTER), groups={"g": ["a"]}, moved_in=["g"])
    assert [m.claim_id for m in by_group.moved] == ["a1", "a2", "a3"]
    with pytest.raises(InputError, match="--moved-in 'c': neither a compared set nor a --group"):
        diff_runs(_keyed(BEFORE), _keyed(AFTER), moved_in=["c"])
    before = _write(tmp_path / "before.jsonl", BEFORE)
    after = _write(tmp_path / "after.jsonl", AFTER)
    out = RUNNER.invoke(
        app, ["guard", "diff", str(before), str(after), "--moved", "9", "--moved-in", "b"]
    )
    assert out.exit_code == 0, out.output
    assert "claims that moved (2 of 2)" in out.output
    assert "claim b1" in out.output
    assert "claim a1" not in out.output
