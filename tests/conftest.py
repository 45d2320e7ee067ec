"""Test-wide switches: everything offline, and no real model reachable by accident."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

pytest_plugins = ["tests.postgres"]  # postgres_server / postgres_url: a real PostgreSQL + pgvector

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["MEM0_TELEMETRY"] = "False"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
_VLLM_API_BASE = os.environ.get("MIRAGE_VLLM_API_BASE")
for _var in list(os.environ):
    # the guard's settings come from each test alone; the harness's own switches
    # (MIRAGE_REQUIRE_LLM_SERVER, MIRAGE_REQUIRE_SYSTEM_TOOLS: set by `.ci/run`) are kept, or
    # they were read by no one and CI skipped what it must run
    if _var.startswith("MIRAGE_") and not _var.startswith("MIRAGE_REQUIRE_"):
        del os.environ[_var]


def _real_acompletion() -> object:
    import litellm

    return litellm.acompletion


REAL_ACOMPLETION = _real_acompletion()  # before any test replaces it (llm_server tests use it)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "llm_server: runs against llama.cpp's server on loopback (tests/llmserver); skips with "
        "the reason when llama-cpp-python[server] or the GGUF package is not installed",
    )


@pytest.fixture(autouse=True)
def _block_real_llm_calls(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test reaches a real provider only when marked ``live``."""
    if request.node.get_closest_marker("live"):
        return
    import litellm

    async def _refuse(*args: object, **kwargs: object) -> None:
        raise RuntimeError(
            f"test tried a real LLM call to {kwargs.get('model')!r}; use a fake from tests/fakes"
        )

    def _refuse_sync(*args: object, **kwargs: object) -> None:
        raise RuntimeError("test tried a real LLM call; use a fake from tests/fakes")

    monkeypatch.setattr(litellm, "acompletion", _refuse)
    monkeypatch.setattr(litellm, "completion", _refuse_sync)


@pytest.fixture(autouse=True)
def _mem0_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEM0_DIR", str(tmp_path_factory.getbasetemp() / "mem0home"))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    d = tmp_path / "mirage-data"
    d.mkdir()
    return d


# the Debian programs two markers need (`.ci/run` installs them and sets
# MIRAGE_REQUIRE_SYSTEM_TOOLS=1, so there a missing one fails the run instead of skipping)
SYSTEM_TOOLS = {
    "browser": (("chromium",), "Debian `chromium`"),
    "prometheus": (("promtool", "prometheus"), "Debian `prometheus`"),
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_live = pytest.mark.skip(reason="live provider test: run with `pytest -m live` and keys")
    skip_vllm = pytest.mark.skip(reason="needs MIRAGE_VLLM_API_BASE (a served vLLM endpoint)")
    markexpr = config.getoption("-m") or ""
    missing = _missing_system_tools(items)
    for item in items:
        if "live" in item.keywords and "live" not in markexpr:
            item.add_marker(skip_live)
        if "vllm" in item.keywords and not _VLLM_API_BASE:
            item.add_marker(skip_vllm)
        for marker, package in missing.items():
            if marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=f"needs {package} (apt install it)"))


def _missing_system_tools(items: list[pytest.Item]) -> dict[str, str]:
    """Marker -> the package whose program is not on PATH, for the markers these items use.
    With MIRAGE_REQUIRE_SYSTEM_TOOLS=1 (CI) a missing one is a usage error, not a skip."""
    used = {m for item in items for m in SYSTEM_TOOLS if m in item.keywords}
    missing = {
        m: package
        for m in sorted(used)
        for programs, package in [SYSTEM_TOOLS[m]]
        if not all(shutil.which(p) for p in programs)
    }
    if missing and os.environ.get("MIRAGE_REQUIRE_SYSTEM_TOOLS") == "1":
        raise pytest.UsageError(
            "MIRAGE_REQUIRE_SYSTEM_TOOLS=1 but "
            + ", ".join(f"{p} is not installed (tests marked {m})" for m, p in missing.items())
        )
    return missing
