"""The built wheel installs one import root, ``mirage_guard``, and ships its type information.

Builds the wheel offline with the project's own backend (hatchling + the build hook in
deploy/packaging/hatch_build.py) and reads its RECORD.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("guard", "adapters", "benchmark", "calibration", "prompts")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=600,
    )
    [path] = out.glob("mirage_guard-*.whl")
    return zipfile.ZipFile(path)


def _record(wheel: zipfile.ZipFile) -> list[str]:
    [name] = [n for n in wheel.namelist() if n.endswith(".dist-info/RECORD")]
    rows = csv.reader(io.StringIO(wheel.read(name).decode("utf-8")))
    return [row[0] for row in rows if row]


def test_the_wheel_installs_nothing_but_mirage_guard(wheel: zipfile.ZipFile) -> None:
    paths = _record(wheel)
    tops = {p.split("/", 1)[0] for p in paths}
    [dist_info] = [t for t in tops if t.endswith(".dist-info")]
    assert tops == {"mirage_guard", dist_info}
    assert dist_info.startswith("mirage_guard-")
    assert {p.split("/")[1] for p in paths if p.startswith("mirage_guard/")} == set(PACKAGES)
    assert not [p for p in paths if "__pycache__" in p or p.endswith(".pyc")]
    assert set(paths) == set(wheel.namelist())


def test_every_package_ships_py_typed_and_its_data(wheel: zipfile.ZipFile) -> None:
    paths = set(_record(wheel))
    for package in PACKAGES:
        assert f"mirage_guard/{package}/py.typed" in paths
        assert f"mirage_guard/{package}/__init__.py" in paths
    assert "mirage_guard/guard/scoring/profiles/evidence-only.json" in paths
    assert "mirage_guard/prompts/self_audit.md" in paths
    for name in ("model.safetensors", "manifest.json"):  # the claim-support cross-encoder
        assert f"mirage_guard/guard/evidence/support_cross/{name}" in paths
    # the hand-written support pairs the cross-encoder is trained and measured on
    pairs = [p for p in paths if p.startswith("mirage_guard/benchmark/data/support_pairs/")]
    assert {p.rsplit("/", 1)[1] for p in pairs} >= {"README.md", "part_a.jsonl", "part_d.jsonl"}


def test_the_console_script_is_the_adapters_cli(wheel: zipfile.ZipFile) -> None:
    [name] = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "mirage = mirage_guard.adapters.cli:app" in wheel.read(name).decode("utf-8")
