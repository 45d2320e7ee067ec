"""A records line that is valid JSON but not a valid record is named (line and why) like a
damaged line, never dropped without a word; a torn last line stays silent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters.cli._bench import app as bench
from mirage_guard.benchmark._records import TaskRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import PersonaGroup
from tests.benchmark.small_run import PERSONAS_FILE

RUNNER = CliRunner()


def _task(unit: str, output: str, attempt: int = 1) -> dict[str, Any]:
    record = TaskRecord(
        unit=unit,
        model="mock/alpha",
        persona_id="st-01",
        group=PersonaGroup.STEREOTYPICAL,
        task=Task.GIFT,
        output=output,
        attempt=attempt,
    )
    return record.model_dump(mode="json")


def _write(path: Path, rows: list[dict[str, Any] | str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ({**_task("a", "x"), "output": 5}, "output: Input should be a valid string"),
        ({k: v for k, v in _task("a", "x").items() if k != "task"}, "task: Field required"),
        ({"item_id": "a", "label": "GROUNDED"}, "unit: Field required"),  # another schema
        (["a", "list"], None),  # JSON, but no object: the damaged-line case it already had
    ],
)
def test_an_invalid_record_in_the_middle_is_named_and_the_others_kept(
    tmp_path: Path, bad: dict[str, Any] | list[str], why: str | None
) -> None:
    path = tmp_path / "records" / "task.jsonl"
    _write(path, [_task("a", "first"), _task("b", "b's"), json.dumps(bad), _task("c", "c's")])
    rd = RunDirectory(tmp_path)

    outputs = {r.unit: r.output for r in rd.records(TaskRecord)}

    assert outputs == {"a": "first", "b": "b's", "c": "c's"}
    reason = "not a JSON record" if why is None else f"not a valid task record ({why})"
    assert [(s.path, s.line) for s in rd.skipped_lines] == [(path, 3)]
    assert [s.reason for s in rd.skipped_lines] == [reason]


def test_an_invalid_last_line_is_named_a_torn_last_line_is_not(tmp_path: Path) -> None:
    path = tmp_path / "records" / "task.jsonl"
    _write(path, [_task("a", "first"), {**_task("a", "second", attempt=2), "attempt": 0}])
    rd = RunDirectory(tmp_path)
    assert [r.output for r in rd.records(TaskRecord)] == ["first"]
    why = "not a valid task record (attempt: Input should be greater than or equal to 1)"
    assert [(s.path, s.line) for s in rd.skipped_lines] == [(path, 2)]
    assert [s.reason for s in rd.skipped_lines] == [why]

    _write(path, [_task("a", "first"), '{"unit": "a", "model": "mock/al'])  # a killed run's
    rd = RunDirectory(tmp_path)
    assert [r.output for r in rd.records(TaskRecord)] == ["first"]
    assert rd.skipped_lines == []


def test_a_later_raw_read_keeps_the_invalid_lines_listed(tmp_path: Path) -> None:
    """``failed_attempts`` rereads the file without validating: the invalid line stays listed."""
    path = tmp_path / "records" / "task.jsonl"
    _write(path, [{"unit": "a"}, _task("b", "b's")])
    rd = RunDirectory(tmp_path)
    rd.records(TaskRecord)
    rd.failed_attempts()
    assert [s.line for s in rd.skipped_lines] == [1]
    assert [s.reason for s in rd.skipped_lines] == [
        "not a valid task record (model: Field required)"
    ]


def test_the_report_names_the_invalid_line_with_why(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [
        *("run", "--models", "mock/alpha", "--judge", "mock/judge"),
        *("--personas-file", str(PERSONAS_FILE), "--tasks", "gift", "--stages", "task,judge"),
        *("--limit", "3", "--no-progress", "--run-dir", str(run_dir)),
    ]
    ran = RUNNER.invoke(bench, args)
    assert ran.exit_code == 0, ran.output
    shutil.rmtree(run_dir / "report", ignore_errors=True)
    tasks = run_dir / "records" / "task.jsonl"
    lines = tasks.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    row["group"] = "no such group"
    lines[1] = json.dumps(row)
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")

    result = RUNNER.invoke(bench, ["report", str(run_dir)])

    assert result.exit_code == 0, result.output
    why = "not a valid task record (group: Input should be 'stereotypical', 'counter' or 'neutral')"
    warnings = [w for w in result.output.splitlines() if w.startswith("warning:")]
    assert warnings[0] == f"warning: {tasks}:2: {why}, left out of every figure"
    analysis = json.loads((run_dir / "report" / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["skipped_lines"] == [f"records/task.jsonl:2: {why}"]
    assert f"records/task.jsonl:2: {why}" in (run_dir / "report" / "report.md").read_text()
