"""`--stated-objective`: the operator chooses how strict the gate of a stated fact is, at fit
time, with the real linker (shipped MiniLM and cross-encoder) on the packaged dev split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app

pytestmark = pytest.mark.slow


def _fit(tmp_path: Path, name: str, *extra: str) -> tuple[int, str, Path]:
    out = tmp_path / name / "evidence-only.json"
    result = CliRunner().invoke(
        app,
        ["calibrate", "fit-evidence", "--split", "dev", "--eval-split", "dev", "--out", str(out),
         *extra],
    )  # fmt: skip
    return result.exit_code, result.output, out


def test_a_stricter_stated_objective_raises_the_stated_threshold(tmp_path: Path) -> None:
    code, output, default = _fit(tmp_path, "default")
    assert code == 0, output
    code, output, strict = _fit(tmp_path, "strict", "--stated-objective", "precision>=0.95")
    assert code == 0, output
    a = json.loads(default.read_text("utf-8"))
    b = json.loads(strict.read_text("utf-8"))
    assert a["objective"].endswith("stated:precision>=0.85")
    assert b["objective"].endswith("stated:precision>=0.95")
    assert b["stated_threshold"] > a["stated_threshold"]
    # the over-inference part is the same fit
    assert (b["oi_threshold"], b["oi_model"]) == (a["oi_threshold"], a["oi_model"])


@pytest.mark.parametrize("option", ["--stated-objective", "--oi-objective"])
def test_a_bad_objective_stops_before_any_work(tmp_path: Path, option: str) -> None:
    code, output, out = _fit(tmp_path, "bad", option, "precision>=2")
    assert code == 2
    assert "objective must look like" in " ".join(output.split())
    assert not out.exists()
