"""What each layer loads: the import-linter contracts (pyproject.toml) hold the static graph;
these tests hold the run-time promises a lazy import could still break."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _loaded_after(code: str) -> set[str]:
    """Top-level module names loaded by a fresh interpreter after running ``code``."""
    script = textwrap.dedent(code) + (
        "\nimport json, sys\nprint(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True, timeout=300
    )
    loaded: set[str] = set(json.loads(out.stdout.strip().splitlines()[-1]))
    return loaded


def test_benchmark_metrics_loads_no_cli_framework() -> None:
    loaded = _loaded_after("import mirage_guard.benchmark.metrics")
    assert "scipy" in loaded  # the statistics really are loaded
    assert not {"typer", "click", "fastapi", "sqlalchemy", "prometheus_client"} & loaded


def test_the_guard_core_loads_no_edge_library() -> None:
    loaded = _loaded_after(
        """
        from mirage_guard.guard import Guard
        from mirage_guard.guard.scoring import ProfileStore
        ProfileStore().evidence_only()
        """
    )
    edge = {"typer", "fastapi", "starlette", "uvicorn", "sqlalchemy", "mem0", "qdrant_client"}
    assert not (edge | {"prometheus_client", "sklearn", "scipy", "litellm"}) & loaded


def test_mirage_serve_loads_neither_scipy_nor_sklearn() -> None:
    loaded = _loaded_after(
        """
        from typer.testing import CliRunner
        from mirage_guard.adapters.cli import app
        from mirage_guard.adapters.server import create_app
        from mirage_guard.guard import GuardSettings
        assert CliRunner().invoke(app, ["serve", "--help"]).exit_code == 0
        create_app(GuardSettings())
        """
    )
    assert {"fastapi", "typer"} <= loaded
    assert not {"scipy", "sklearn"} & loaded


def test_every_subcommand_is_reachable_from_the_root() -> None:
    from typer.testing import CliRunner

    from mirage_guard.adapters.cli import app

    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0, result.output
    for name in ("bench", "calibrate", "demo", "guard", "perf", "report", "serve"):
        assert name in result.output
    for group, command in [
        ("bench", "run"),
        ("calibrate", "fit"),
        ("guard", "eval"),
        ("perf", "sidecar"),
        ("report", "pollution"),
    ]:
        sub = CliRunner().invoke(app, [group, "--help"])
        assert sub.exit_code == 0, sub.output
        assert command in sub.output
