"""One `mirage serve` subprocess on a loopback port, for tests that kill, restart and share them
(``test_kill_sidecar.py``: one sidecar on SQLite; ``test_replicas.py``: replicas on PostgreSQL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from mirage_guard.adapters._pgserver import free_port

CLI = [sys.executable, "-c", "from mirage_guard.adapters.cli import app; app()"]
READY_TIMEOUT_S = 240.0


@dataclass
class ServeProcess:
    """``mirage serve`` with ``MIRAGE_DATA_DIR=data_dir`` plus ``env`` (nothing else of the
    caller's ``MIRAGE_*``), logging to ``<data_dir's parent>/<name>.log``."""

    name: str
    data_dir: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir.parent / f"{self.name}.log"

    def process_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MIRAGE_")}
        return env | {"MIRAGE_DATA_DIR": str(self.data_dir), **self.env}

    def launch(self) -> None:
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                [*CLI, "serve", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "warning"],
                env=self.process_env(), stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while time.monotonic() < deadline:
            assert self.proc is not None
            assert self.proc.poll() is None, self.log()
            try:
                if httpx.get(f"{self.url}/readyz", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"{self.name} did not become ready\n{self.log()}")

    def start(self) -> None:
        self.launch()
        self.wait_ready()

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:] if self.log_path.is_file() else ""
