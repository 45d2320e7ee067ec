"""`mirage serve` and `mirage perf sidecar` as commands of the root CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from mirage_guard.adapters._perf_sidecar import run_sidecar_perf
from mirage_guard.adapters.cli import app


def test_serve_runs_the_app_factory_on_the_configured_address(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, Any] = {}

    def fake_run(application: Any, **kwargs: Any) -> None:
        seen["app"] = application
        seen.update(kwargs)

    monkeypatch.setattr("uvicorn.run", fake_run)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MIRAGE_PORT", "9123")
    result = CliRunner().invoke(app, ["serve", "--host", "127.0.0.2", "--log-level", "warning"])
    assert result.exit_code == 0, result.output
    assert isinstance(seen["app"], FastAPI)
    assert (seen["host"], seen["port"]) == ("127.0.0.2", 9123)
    paths = set(seen["app"].openapi()["paths"])
    assert {"/memories", "/v3/memories/add/", "/v1/guard/tag", "/metrics"} <= paths


def test_serve_rejects_an_unknown_extraction_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: None)
    result = CliRunner().invoke(app, ["serve", "--extraction", "magic"])
    assert result.exit_code == 2
    assert "--extraction" in result.output


def test_serve_refuses_malformed_api_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: None)
    monkeypatch.setenv("MIRAGE_API_KEYS", "no-tenant-here")
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 1
    assert result.output.startswith("error: MIRAGE_API_KEYS: entry 1 is not key:tenant")


@pytest.mark.slow
def test_perf_sidecar_measures_both_paths_without_errors(tmp_path: Path) -> None:
    r = run_sidecar_perf(
        samples=3, facts_per_write=2, duration_s=1.0, concurrency=2, data_dir=tmp_path
    )
    assert r.samples == 3
    assert r.errors == 0
    assert r.writes > 0
    assert r.guarded_p50_ms > 0
    assert r.direct_p50_ms > 0
    assert (tmp_path / "sidecar" / "decisions.db").is_file()


def test_serve_refuses_a_full_data_dir_in_one_line_without_starting(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The refusal was the CRITICAL line and then uvicorn's lifespan traceback."""
    started: list[bool] = []
    monkeypatch.setattr("uvicorn.run", lambda *a, **k: started.append(True))
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MIRAGE_MIN_FREE_BYTES", str(10**18))
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 3
    assert started == []
    lines = [r for r in caplog.records if r.name == "mirage.server"]
    assert [r.levelname for r in lines] == ["CRITICAL"]
    assert "cannot start: disk nearly full" in lines[0].getMessage()
    assert "Traceback" not in result.output
