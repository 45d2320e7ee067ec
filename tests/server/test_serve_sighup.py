"""SIGHUP to a real `mirage serve` process reloads its calibration profiles; a bad file is
refused (logged) and the profile in use stays. Subprocess on loopback, default embedded stores."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode, ProfileStore
from mirage_guard.prompts import load_prompt
from tests.calibration.factories import make_profile

pytestmark = pytest.mark.slow  # a real sidecar process: MiniLM, embedded Mem0

CLI = [sys.executable, "-c", "from mirage_guard.adapters.cli import app; app()"]
WRITER = "hosted_vllm/sighup-writer"  # never called: nothing is written in this test
READY_TIMEOUT_S = 180.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _profile() -> CalibrationProfile:
    profile = make_profile(
        ProfileMode.SELF_AUDIT_INLINE,
        writer_model=WRITER,
        prompt_version=load_prompt("extract_candidates").ref,
        audit_weight=8.0,
    )
    # fitted with the embedder `mirage serve` encodes with (the shipped profile's)
    return profile.model_copy(update={"embedder": ProfileStore().evidence_only().embedder})


def _until(check: Callable[[], bool], what: str, log: Callable[[], str]) -> None:
    deadline = time.monotonic() + 60
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}\n{log()}"
        time.sleep(0.1)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path, Any]]:
    port = _free_port()
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MIRAGE_")}
    env |= {
        "MIRAGE_DATA_DIR": str(tmp_path / "data"),
        "MIRAGE_AUDIT_MODE": "inline",
        "MIRAGE_WRITER_MODEL": WRITER,
        "MIRAGE_WRITER_API_BASE": "http://127.0.0.1:9/v1",
        "MIRAGE_PROFILE_DIR": str(profiles),
    }
    log_path = tmp_path / "serve.log"
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            [*CLI, "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )

    def read_log() -> str:
        return log_path.read_text(errors="replace")[-4000:]

    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            assert proc.poll() is None, read_log()
            try:
                if httpx.get(f"{url}/readyz", timeout=2.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, f"the sidecar did not become ready\n{read_log()}"
            time.sleep(0.2)
        yield url, proc, profiles, read_log
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)


def test_sighup_reloads_profiles_in_mirage_serve(
    serve: tuple[str, subprocess.Popen[bytes], Path, Callable[[], str]],
) -> None:
    url, proc, profiles, read_log = serve

    def active() -> Any:
        return httpx.get(f"{url}/v1/profiles", timeout=5).json()["guard"]["audit_profile"]

    assert active() is None
    profile = _profile()
    ProfileStore(profiles).save(profile)
    proc.send_signal(signal.SIGHUP)
    _until(lambda: active() == profile.profile_id, "the reload", read_log)
    assert "profiles reloaded (SIGHUP)" in read_log()
    assert profile.content_hash in read_log()

    (profiles / "broken.json").write_text('{"profile_id": ', encoding="utf-8")
    proc.send_signal(signal.SIGHUP)
    _until(lambda: "refused" in read_log(), "the refusal", read_log)
    assert "broken.json" in read_log()
    assert proc.poll() is None  # still serving
    assert active() == profile.profile_id
