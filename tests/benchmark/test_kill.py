"""A real kill: SIGKILL a `mirage bench run` process mid-way, resume it, check nothing repeats.

A repeated LLM call would show up as a second cache line with the same key (every completed
call is appended to the cache before its record is written).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from mirage_guard.benchmark._records import TaskRecord
from mirage_guard.benchmark._rundir import RunDirectory
from tests.benchmark.small_run import PERSONAS_FILE

ARGS = [
    "bench",
    "run",
    "--models",
    "mock/killed-a,mock/killed-b",
    "--judge",
    "mock/judge",
    "--personas-file",
    str(PERSONAS_FILE),
    "--tasks",
    "gift,letter,apartment",
    "--accum-personas",
    "1",
    "--no-progress",
    "--mock-latency-ms",
    "20",
    "--concurrency",
    "2",
    "--judge-concurrency",
    "2",
]
CLI = [sys.executable, "-c", "from mirage_guard.adapters.cli import app; app()"]


def _cache_keys(run_dir: Path) -> Counter[str]:
    keys: Counter[str] = Counter()
    for segment in (run_dir / "cache").glob("segment-*.jsonl"):
        for line in segment.read_text().splitlines():
            try:
                keys[json.loads(line)["key"]] += 1
            except json.JSONDecodeError:
                continue  # torn by the kill
    return keys


def _lines(run_dir: Path, kind: str) -> int:
    path = run_dir / "records" / f"{kind}.jsonl"
    return len(path.read_text().splitlines()) if path.is_file() else 0


@pytest.mark.slow
def test_sigkill_midway_then_resume_repeats_no_call(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = [*CLI, *ARGS, "--run-dir", str(run_dir)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while _lines(run_dir, "task") < 6 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    killed_at = sum(_cache_keys(run_dir).values())
    assert killed_at > 0

    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    keys = _cache_keys(run_dir)
    assert max(keys.values()) == 1  # no call answered twice
    assert sum(keys.values()) > killed_at
    rd = RunDirectory(run_dir)
    assert len(rd.records(TaskRecord)) == 2 * 6 * 3
    assert rd.read_manifest().resumed_at
