"""Commands that write a file never write over what they read, never replace a file with an
empty one when every call failed, and report a bad input in one line (exit 1), not a traceback.

Found by a user probing the CLI on 2026-12-07: `guard eval --per-claim` onto its own `--data`
replaced the hand-labelled claims; `convert-begin -o` onto its TSV replaced the TSV; `calibrate
audit` with every call failing emptied an existing verdicts file and exited 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app
from tests.calibration.test_per_claim_cli import _small_set

pytestmark = pytest.mark.slow  # guard eval loads the shipped models

BEGIN_HEADER = "evidence\tprevious turn\tresponse\tgold label\tcoarse label\tfull label set\n"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


def test_per_claim_rows_never_replace_the_labelled_claims(tmp_path: Path) -> None:
    data = _small_set(tmp_path / "mine", conversations=1)
    claims = data / "claims.jsonl"
    before = claims.read_bytes()
    for target in (claims, data / "conversations.jsonl"):
        code, out = _run("guard", "eval", "--data", str(data), "--per-claim", str(target))
        assert code == 1
        assert "is an input of this command" in out
        assert "Traceback" not in out
    assert claims.read_bytes() == before


def test_convert_begin_never_replaces_its_tsv_and_reports_bad_input_in_one_line(
    tmp_path: Path,
) -> None:
    tsv = tmp_path / "b.tsv"
    tsv.write_text(BEGIN_HEADER + "E is e\tP\tR is r\tentailment\tentailment\tx\n", "utf-8")
    before = tsv.read_bytes()
    assert _run("guard", "convert-begin", str(tsv), "-o", str(tsv))[0] == 1
    assert tsv.read_bytes() == before
    assert _run("guard", "convert-begin", str(tsv), "-o", str(tmp_path / "c.jsonl"))[0] == 0
    for args, said in [
        ((str(tmp_path / "nosuch.tsv"), "-o", str(tmp_path / "d.jsonl")), "nosuch.tsv"),
        ((str(tsv), "-o", str(tmp_path)), "is a directory"),
    ]:
        code, out = _run("guard", "convert-begin", *args)
        assert (code, out.startswith("error:"), said in out) == (1, True, True), out
    tsv.write_text(BEGIN_HEADER + "E\tP\tR\tweird\tweird\tx\n", "utf-8")
    code, out = _run("guard", "convert-begin", str(tsv), "-o", str(tmp_path / "e.jsonl"))
    assert (code, out) == (
        1,
        "error: b.tsv:2: unknown BEGIN label 'weird'".replace("b.tsv", str(tsv)),
    )


def test_an_audit_where_every_call_failed_leaves_the_verdicts_file_as_it_was(
    tmp_path: Path,
) -> None:
    data = _small_set(tmp_path / "mine", conversations=1)
    out = tmp_path / "v.jsonl"
    out.write_text('{"precious": 1}\n', "utf-8")
    audit = ("calibrate", "audit", "--writer-model", "mock/nobody", "--data", str(data))
    code, said = _run(*audit, "--out", str(out), "--timeout", "5")
    assert code == 1
    assert "no verdict was collected" in said
    assert out.read_text("utf-8") == '{"precious": 1}\n'
    # refused before any call: the input itself, or a folder
    for target, why in ((data / "claims.jsonl", "is an input"), (tmp_path, "is a directory")):
        code, said = _run(*audit, "--out", str(target))
        assert (code, why in said, "failed" in said) == (1, True, False), said


def test_an_eval_whose_every_self_audit_failed_says_so_and_exits_1(tmp_path: Path) -> None:
    """It printed a full report under exit 0 (and NaN, which is no JSON, with --json)."""
    data = _small_set(tmp_path / "mine", conversations=1)
    result = CliRunner().invoke(
        app, ["guard", "eval", "--data", str(data), "--writer-model", "mock/nobody", "--json"]
    )
    assert result.exit_code == 1
    report = json.loads(result.stdout)  # valid JSON: a figure that cannot be computed is null
    assert report["calibrated_share"] == 0.0
    assert "every self-audit call to mock/nobody failed" in " ".join(result.stderr.split())


def test_the_shipped_files_are_regenerated_only_from_a_checkout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run elsewhere, the default --out made a stray guard/... tree in the user's directory."""
    monkeypatch.chdir(tmp_path)
    for command in (["calibrate", "fit-evidence"], ["calibrate", "train-support", "--limit", "2"]):
        code, said = _run(*command)
        assert (code, "only a checkout of the repository has" in said) == (1, True), said
    assert list(tmp_path.iterdir()) == []


def test_options_that_contradict_each_other_are_refused(tmp_path: Path) -> None:
    verdicts = tmp_path / "v.jsonl"
    verdicts.write_text("", "utf-8")
    code, said = _run("guard", "eval", "--writer-model", "m", "--verdicts", str(verdicts))
    assert (code, "not both" in said) == (2, True), said
