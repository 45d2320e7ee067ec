"""The README's Python examples run as written (the sidecar one is covered by tests/server)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
RUNNABLE = [b for b in BLOCKS if "MemoryClient" not in b]


def test_readme_has_the_examples_it_promises() -> None:
    assert len(RUNNABLE) >= 2
    assert any("GuardedMemory" in b for b in RUNNABLE)
    assert any("Guard.from_settings" in b for b in RUNNABLE)


@pytest.mark.slow
@pytest.mark.parametrize("block", RUNNABLE, ids=[f"block{i}" for i in range(len(RUNNABLE))])
def test_readme_python_example_runs(
    block: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(tmp_path / "data"))
    namespace: dict[str, object] = {}
    exec(compile(block, str(README), "exec"), namespace)
    assert (tmp_path / "data").exists() or "GuardedMemory" not in block
