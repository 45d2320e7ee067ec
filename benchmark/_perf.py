"""Figures behind ``mirage perf harness``: does the runner reach its concurrency, and how
fast is a cached re-run.

1. A fake provider with a fixed latency L answers N distinct calls through the runner's client
   stack (named limit -> retries -> provider) at concurrency C: wall time vs the ideal N·L/C.
2. All stages on P personas x 6 tasks with the offline provider, once to fill the call cache,
   then again into a fresh run directory on the same cache: the time of a fully cached re-run.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import anyio

from mirage_guard.benchmark._cache import CachedLLM, DiskCache
from mirage_guard.benchmark._config import GuardArm, RunConfig, RuntimeOptions
from mirage_guard.benchmark._limits import ConcurrencyLimits, LimitedLLM
from mirage_guard.benchmark._offline import offline_llm
from mirage_guard.benchmark._runner import BenchmarkRun, RunSummary
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.llm import FunctionLLM, LLMClient, Message, RetryingLLM

PERF_SUBJECT = "mock/perf-subject"
PERF_JUDGE = "mock/perf-judge"


class ConcurrencyFigures(NamedTuple):
    calls: int
    concurrency: int
    latency_s: float
    wall_s: float
    ideal_s: float

    @property
    def ratio(self) -> float:
        return self.wall_s / self.ideal_s


class CachedRerunFigures(NamedTuple):
    personas: int
    tasks: int
    llm_calls: int
    first_run_s: float
    cached_rerun_s: float
    cache_hits: int


async def measure_concurrency(calls: int, concurrency: int, latency_s: float) -> ConcurrencyFigures:
    provider = FunctionLLM(lambda m, s: "ok", model=PERF_SUBJECT, latency_s=latency_s)
    limits = ConcurrencyLimits(default=concurrency)
    client: LLMClient = LimitedLLM(RetryingLLM(provider), limits, f"subject:{PERF_SUBJECT}")
    with tempfile.TemporaryDirectory() as tmp:
        client = CachedLLM(client, DiskCache(tmp))  # every call a miss: the full stack

        async def one(i: int) -> None:
            await client.complete([Message(role="user", content=f"call {i}")])

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for i in range(calls):
                tg.start_soon(one, i)
        wall = time.perf_counter() - start
    return ConcurrencyFigures(calls, concurrency, latency_s, wall, calls * latency_s / concurrency)


async def measure_event_loop(calls: int, concurrency: int, latency_s: float) -> float:
    """Wall / ideal of bare sleeps at the same concurrency: what this machine's loop costs."""
    limiter = anyio.CapacityLimiter(concurrency)

    async def one() -> None:
        async with limiter:
            await anyio.sleep(latency_s)

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(calls):
            tg.start_soon(one)
    return (time.perf_counter() - start) / (calls * latency_s / concurrency)


def _full_run(
    personas: list[Persona], run_dir: Path, cache_dir: Path, concurrency: int, guard: GuardArm
) -> tuple[RunSummary, float]:
    config = RunConfig(models=[PERF_SUBJECT], judge=PERF_JUDGE, guard=guard)
    run = BenchmarkRun(
        config,
        run_dir,
        provider=lambda model: offline_llm(model),
        options=RuntimeOptions(
            progress=False, concurrency=concurrency, judge_concurrency=concurrency
        ),
        cache_dir=cache_dir,
        personas=personas,
        offline_models=[PERF_SUBJECT, PERF_JUDGE],
    )
    start = time.perf_counter()
    summary = anyio.run(run.run)
    return summary, time.perf_counter() - start


def measure_cached_rerun(
    personas: list[Persona], *, concurrency: int = 64, guard: GuardArm = GuardArm.OFF
) -> CachedRerunFigures:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        first, first_s = _full_run(personas, base / "first", base / "cache", concurrency, guard)
        again, again_s = _full_run(personas, base / "again", base / "cache", concurrency, guard)
    return CachedRerunFigures(
        personas=len(personas),
        tasks=6,
        llm_calls=first.accounting.calls,
        first_run_s=first_s,
        cached_rerun_s=again_s,
        cache_hits=again.accounting.cached_calls,
    )
