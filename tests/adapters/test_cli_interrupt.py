"""Ctrl-C in a long command is one line ``interrupted`` on stderr and exit status 130 (128 +
SIGINT), not a silent 130. The line claims nothing about resuming: ``bench run`` resumes on the
same ``--run-dir``, ``guard eval`` starts over."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from typer.testing import CliRunner

from mirage_guard.adapters.cli import _bench, _guard, app
from tests.benchmark.small_run import PERSONAS_FILE


def _ctrl_c(*args: Any, **kwargs: Any) -> Any:
    raise KeyboardInterrupt


class _InterruptedRun:
    """A benchmark run the user stops mid-way (inside ``anyio.run``, as a real one is)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    async def run(self) -> None:
        raise KeyboardInterrupt


def _interrupted(result: Result) -> None:
    assert result.exit_code == 130, result.output
    assert result.stderr == "interrupted\n"
    assert "Traceback" not in result.output


def test_ctrl_c_in_guard_eval_says_interrupted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_guard, "run_eval", _ctrl_c)
    _interrupted(CliRunner().invoke(app, ["guard", "eval"]))


def test_ctrl_c_in_bench_run_says_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bench, "BenchmarkRun", _InterruptedRun)
    args = [
        *("bench", "run", "--models", "mock/alpha", "--judge", "mock/judge"),
        *("--personas-file", str(PERSONAS_FILE), "--no-progress", "--run-dir", str(tmp_path)),
    ]
    _interrupted(CliRunner().invoke(app, args))


def test_an_error_is_still_status_1_and_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Catching Ctrl-C changed nothing for errors the root group reports."""

    def unreadable(*args: Any, **kwargs: Any) -> Any:
        raise IsADirectoryError(21, "Is a directory", "claims.jsonl")

    monkeypatch.setattr(_guard, "run_eval", unreadable)
    result = CliRunner().invoke(app, ["guard", "eval"])
    assert result.exit_code == 1, result.output
    assert result.stderr == "error: Is a directory: claims.jsonl\n"
