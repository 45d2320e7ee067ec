"""What a user found wrong with ``mirage doctor``, ``mirage report pollution``, ``mirage report
label`` and ``mirage guard diff``: each case refused in one line or shown as it is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._mem0 import Mem0Backend
from mirage_guard.adapters._pollution_report import report_files
from mirage_guard.adapters.cli import app
from mirage_guard.calibration import load_examples
from mirage_guard.calibration._eval import write_claim_rows
from mirage_guard.guard import Label
from tests.adapters.conftest import TURNS, _write
from tests.calibration.test_claim_diff import AFTER, BEFORE
from tests.fakes.mem0 import InMemoryStore


def _run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(app, list(args), input=input)


def _one_error_line(result: Result, *fragments: str, status: int = 1) -> None:
    """Exit ``status`` and a single ``error: ...`` line (no traceback) holding every fragment."""
    assert result.exit_code == status, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


# -- mirage doctor ----------------------------------------------------------------------------


def test_doctor_on_a_mistyped_data_dir_refuses_and_creates_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    typo = tmp_path / "typo"
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(typo))
    result = _run("doctor")
    _one_error_line(
        result, f"no decision log at {typo / 'decisions.db'}", "MIRAGE_DATA_DIR", status=2
    )
    assert not typo.exists()


def test_doctor_with_no_setting_does_not_create_a_store_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = _run("doctor", "--json")
    _one_error_line(result, "no decision log at", status=2)
    assert list(tmp_path.iterdir()) == []  # no ./.mirage


@pytest.mark.parametrize(
    ("setup", "fragment"),
    [
        ("corrupt", "cannot read the decision log at sqlite:///"),
        ("bogus-url", "cannot read the decision log at bogus://x: NoSuchModuleError"),
        ("data-dir-is-a-file", "is not a directory"),
    ],
)
def test_doctor_on_a_log_it_cannot_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setup: str, fragment: str
) -> None:
    data = tmp_path / "data"
    if setup == "corrupt":
        data.mkdir()
        (data / "decisions.db").write_bytes(b"not a database at all" * 100)
    elif setup == "bogus-url":
        monkeypatch.setenv("MIRAGE_DATABASE_URL", "bogus://x")
    else:
        data.write_text("a file\n", encoding="utf-8")
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data))
    result = _run("doctor")
    _one_error_line(result, fragment, status=2)  # cannot check: 2, not 1 (problems remain)
    assert not (data.is_dir() and (data / "qdrant").exists())  # the store was not opened


def test_doctor_on_an_existing_log_still_reports(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    DecisionLog(f"sqlite:///{data_dir / 'decisions.db'}").close()
    (data_dir / "qdrant").mkdir()  # the deployment's embedded store
    store = InMemoryStore()
    monkeypatch.setattr(Mem0Backend, "from_settings", staticmethod(lambda *a, **k: store))
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    result = _run("doctor")
    assert result.exit_code == 0, result.output
    assert "no problems" in result.output


# -- mirage report pollution --out -------------------------------------------------------------


@pytest.fixture
def empty_log(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'decisions.db'}"
    DecisionLog(url).close()
    return url


@pytest.mark.parametrize(
    ("out", "html", "md", "js"),
    [
        ("r.html", "r.html", "r.md", "r.json"),
        ("r.md", "r.html", "r.md", "r.json"),
        ("r.json", "r.html", "r.md", "r.json"),
        ("r.HTM", "r.HTM", "r.md", "r.json"),
        ("r", "r.html", "r.md", "r.json"),
        ("r.2026-11", "r.2026-11.html", "r.2026-11.md", "r.2026-11.json"),
    ],
)
def test_report_out_names_three_files_that_never_collide(
    tmp_path: Path, empty_log: str, out: str, html: str, md: str, js: str
) -> None:
    assert report_files(Path(out)) == (Path(html), Path(md), Path(js))
    result = _run("report", "pollution", "--database-url", empty_log, "--out", str(tmp_path / out))
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp_path / html}, {tmp_path / md}, {tmp_path / js}" in result.output
    assert "<html" in (tmp_path / html).read_text(encoding="utf-8")
    assert (tmp_path / md).read_text(encoding="utf-8").startswith("#")
    assert json.loads((tmp_path / js).read_text(encoding="utf-8"))["decisions"] == 0


def test_report_out_a_directory_is_refused_in_one_line(tmp_path: Path, empty_log: str) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    result = _run("report", "pollution", "--database-url", empty_log, "--out", str(folder))
    _one_error_line(result, f"{folder} is a directory")
    assert list(folder.iterdir()) == []
    assert not (tmp_path / "reports.md").exists()
    # a folder where one of the three would go is refused too, before anything is written
    (tmp_path / "r.md").mkdir()
    result = _run("report", "pollution", "--database-url", empty_log, "--out", str(tmp_path / "r"))
    _one_error_line(result, f"{tmp_path / 'r.md'} is a directory")
    assert not (tmp_path / "r.html").exists()


def test_report_out_that_cannot_be_written_is_one_line(tmp_path: Path, empty_log: str) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("x", encoding="utf-8")
    out = a_file / "r.html"  # under a file: neither the folder nor the page can be made
    result = _run("report", "pollution", "--database-url", empty_log, "--out", str(out))
    _one_error_line(result, f"cannot write the report to {out}")


# -- mirage report label ----------------------------------------------------------------------


def _claim(claim_id: str, text: str, label: str | None = None, turn: str | None = None) -> Any:
    return {"claim_id": claim_id, "text": text, "label": label, "source_turn_id": turn,
            "turns": TURNS}  # fmt: skip


def test_an_unknown_key_lists_the_keys_with_their_brackets(sample: Path) -> None:
    result = _run("report", "label", str(sample), input="x\nq\n")
    assert result.exit_code == 0, result.output
    words = result.output.split("answer one of:")[1].split()  # Rich wraps at 80 columns
    shown = " ".join(words[:7])
    assert shown == "[s]tated [i]nferred [t]stereotype [g]enerated [n]ext [b]ack [q]uit"


@pytest.mark.parametrize(
    "labels", [("stated", "fabricated"), ("Grounded", "generated"), ("inferred", "GENERATED")]
)
def test_labels_guard_eval_reads_are_read_by_the_labeller(
    tmp_path: Path, labels: tuple[str, str]
) -> None:
    path = _write(
        tmp_path / "mixed.jsonl",
        [_claim("c1", "Went climbing", labels[0], "t1"), _claim("c2", "Has sisters", labels[1]),
         _claim("c3", "Lives in Leeds")],
    )  # fmt: skip
    result = _run("report", "label", str(path), input="s\nt3\n")
    assert result.exit_code == 0, result.output
    assert "claim: Went climbing" not in result.output  # already labelled: skipped
    assert "1 labelled this session, 0 of 3 still unlabelled" in result.output
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r["label"] for r in rows[:2]] == list(labels)  # kept as written
    assert load_examples(path)[2].claim.label is Label.GROUNDED  # and guard eval reads it all


def test_a_claim_relabelled_after_back_counts_once(sample: Path) -> None:
    result = _run("report", "label", str(sample), input="g\nb\ns\nt1\nq\n")
    assert result.exit_code == 0, result.output
    assert "1 labelled this session, 2 of 3 still unlabelled" in result.output
    first = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
    assert (first["label"], first["source_turn_id"]) == ("GROUNDED", "t1")


def test_control_characters_in_the_file_never_reach_the_terminal(tmp_path: Path) -> None:
    turns = [
        {"id": "t1", "role": "user", "content": "I am \x1b[31mred\x1b[0m\r and \u202eright"},
        {"id": "t\x1b[2J", "role": "user", "content": "bell\x07"},
    ]
    row = {**_claim("c1", "Title \x1b]0;pwned\x07 here"), "turns": turns}
    path = _write(tmp_path / "ansi.jsonl", [row])
    result = _run("report", "label", str(path), input="s\nt9\nq\n")
    assert result.exit_code == 0, result.output
    for control in ("\x1b", "\x07", "\r", "\u202e"):
        assert control not in result.output, repr(control)
    assert "I am \\x1b[31mred\\x1b[0m\\x0d and \\u202eright" in result.output
    assert "claim: Title \\x1b]0;pwned\\x07 here" in result.output
    assert "one of t1, t\\x1b[2J" in result.output  # the error naming the turns, too


# -- mirage guard diff ------------------------------------------------------------------------


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    before, after = tmp_path / "b.jsonl", tmp_path / "a.jsonl"
    write_claim_rows(before, BEFORE)
    write_claim_rows(after, AFTER)
    return before, after


def test_diff_moved_takes_no_negative_count(runs: tuple[Path, Path]) -> None:
    result = _run("guard", "diff", *map(str, runs), "--moved", "-1")
    assert result.exit_code == 2, result.output
    assert "claims that moved" not in result.output
    assert "--moved" in result.output


def test_diff_row_with_an_unknown_provenance_names_file_and_line(
    runs: tuple[Path, Path],
) -> None:
    before, after = runs
    lines = after.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["provenance"] = "maybe"
    lines[1] = json.dumps(row)
    after.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = _run("guard", "diff", str(before), str(after))
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    text = " ".join(result.output.split())  # Rich wraps long lines
    assert f"{after}:2" in text
    assert "provenance: 'maybe' is not one of stated, inferred, generated" in text
