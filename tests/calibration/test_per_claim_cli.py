"""`--per-claim` on `mirage guard eval` and `eval-suite`: every claim's decision, for error
analysis, with the real guard (shipped MiniLM, cross-encoder and profile)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from mirage_guard.calibration import ClaimRow

pytestmark = pytest.mark.slow

HELDOUT = Path(__file__).parents[2] / "benchmark" / "data" / "heldout" / "mem0_short"


def _small_set(folder: Path, conversations: int = 2) -> Path:
    """The first conversations of a packaged held-out set, as a set folder of one's own."""
    folder.mkdir(parents=True)
    convs = (HELDOUT / "conversations.jsonl").read_text("utf-8").splitlines()[:conversations]
    keep = {json.loads(c)["conversation_id"] for c in convs}
    claims = [
        line for line in (HELDOUT / "claims.jsonl").read_text("utf-8").splitlines()
        if json.loads(line)["conversation_id"] in keep
    ]  # fmt: skip
    (folder / "conversations.jsonl").write_text("\n".join(convs) + "\n", "utf-8")
    (folder / "claims.jsonl").write_text("\n".join(claims) + "\n", "utf-8")
    return folder


def _rows(path: Path) -> list[ClaimRow]:
    return [ClaimRow.model_validate_json(line) for line in path.read_text("utf-8").splitlines()]


def test_guard_eval_writes_one_row_per_claim_that_agrees_with_the_report(tmp_path: Path) -> None:
    data = _small_set(tmp_path / "mine")
    out = tmp_path / "rows.jsonl"
    runner = CliRunner()
    report = runner.invoke(
        app, ["guard", "eval", "--data", str(data), "--json", "--per-claim", str(out)]
    )
    assert report.exit_code == 0, report.output
    figures = json.loads(report.output)
    rows = _rows(out)
    assert len(rows) == figures["n"] > 10
    assert sum(r.correct for r in rows) == round(figures["provenance_accuracy"] * figures["n"])
    for gold, preds in figures["confusion"].items():
        for pred, count in preds.items():
            assert sum(r.expected == gold and r.provenance == pred for r in rows) == count
    # every decision names its profile, and a claim with unsaid words names them
    assert all(r.reasons and r.reasons[0].code == "scored_with_profile" for r in rows)
    unsaid = [x for r in rows for x in r.reasons if x.code == "unsupported_content"]
    assert unsaid
    assert all(x.params["words"] and x.text for x in unsaid)
    table = runner.invoke(app, ["guard", "eval", "--data", str(data), "--per-claim", str(out)])
    assert table.exit_code == 0, table.output
    assert "decisions per reason code" in table.output
    for code, score in figures["by_reason"].items():
        assert sum(code in {x.code for x in r.reasons} for r in rows) == score["n"]
    wrong = sum(not r.correct for r in rows)
    assert f"wrote {len(rows)} claims ({wrong} with another" in " ".join(table.output.split())


def test_eval_suite_rows_name_their_set_and_a_bad_path_fails_before_scoring(
    tmp_path: Path,
) -> None:
    heldout = tmp_path / "heldout"
    _small_set(heldout / "mine", conversations=1)
    runner = CliRunner()
    blocked = tmp_path / "a-file"
    blocked.write_text("x")
    refused = runner.invoke(
        app, ["guard", "eval-suite", "--heldout", str(heldout), "--n-boot", "20",
              "--no-stale-pairs", "--per-claim", str(blocked / "rows.jsonl")],
    )  # fmt: skip
    assert refused.exit_code == 1
    assert "cannot write the per-claim rows" in " ".join(refused.output.split())
    assert "guard eval-suite" not in refused.output  # no table: it stopped before scoring
    out = tmp_path / "rows.jsonl"
    suite = runner.invoke(
        app, ["guard", "eval-suite", "--heldout", str(heldout), "--n-boot", "20",
              "--no-stale-pairs", "--json", str(tmp_path / "suite.json"), "--per-claim", str(out)],
    )  # fmt: skip
    assert suite.exit_code == 0, suite.output
    reports = json.loads((tmp_path / "suite.json").read_text("utf-8"))
    rows = _rows(out)
    for r in reports:
        mine = [row for row in rows if row.set == r["set"]]
        assert len(mine) == r["report"]["n"] > 0
        hits = r["report"]["provenance_accuracy"] * r["report"]["n"]
        assert sum(row.correct for row in mine) == round(hits)
    assert {r.set for r in rows} == {"dev", "dev (hedge-free)", "mine", "mine (hedge-free)"}
