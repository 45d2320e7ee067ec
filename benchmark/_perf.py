"""``mirage perf harness``: does the runner reach its concurrency, and how fast is a cached re-run.

1. A fake provider with a fixed latency L answers N distinct calls through the runner's client
   stack (named limit -> retries -> provider) at concurrency C: wall time vs the ideal N·L/C.
2. All stages on P personas x 6 tasks with the offline provider, once to fill the call cache,
   then again into a fresh run directory on the same cache: the time of a fully cached re-run.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Annotated, NamedTuple

import anyio
import typer
from rich.console import Console
from rich.table import Table

from mirage_guard.benchmark._cache import CachedLLM, DiskCache
from mirage_guard.benchmark._config import GuardArm, RunConfig, RuntimeOptions
from mirage_guard.benchmark._limits import ConcurrencyLimits, LimitedLLM
from mirage_guard.benchmark._offline import offline_llm
from mirage_guard.benchmark._runner import BenchmarkRun, RunSummary
from mirage_guard.benchmark.personas import Persona, load_personas, select_personas
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


def _personas(file: Path | None, count: int) -> list[Persona]:
    return select_personas(load_personas(file), limit=count)


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


def perf_harness(
    latency_ms: Annotated[float, typer.Option(help="fake provider latency L per call, ms")] = 50,
    calls: Annotated[int, typer.Option(help="N calls")] = 2000,
    concurrency: Annotated[int, typer.Option(help="C calls in flight")] = 32,
    personas: Annotated[int, typer.Option(help="personas in the cached re-run")] = 150,
    personas_file: Annotated[
        Path | None, typer.Option(help="personas JSONL (default: the packaged 150)")
    ] = None,
    repeats: Annotated[int, typer.Option(help="repeats of the concurrency measure")] = 3,
    guard: Annotated[
        GuardArm, typer.Option(help="guard arm in the re-run (on/both load the real guard)")
    ] = GuardArm.OFF,
) -> None:
    """Runner concurrency (wall vs ideal N·L/C) and a fully cached re-run of all stages."""
    console = Console()
    runs = [
        anyio.run(measure_concurrency, calls, concurrency, latency_ms / 1000)
        for _ in range(repeats)
    ]
    figures = sorted(runs, key=lambda f: f.ratio)[len(runs) // 2]
    loop_ratio = statistics.median(
        anyio.run(measure_event_loop, calls, concurrency, latency_ms / 1000) for _ in range(repeats)
    )
    table = Table(title="MirageBench runner: fake provider with fixed latency")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row(
        "calls N / concurrency C / latency L",
        f"{figures.calls} / {figures.concurrency} / {latency_ms:g} ms",
    )
    table.add_row("ideal N·L/C", f"{figures.ideal_s:.3f} s")
    table.add_row("wall", f"{figures.wall_s:.3f} s")
    table.add_row(f"wall / ideal, median of {repeats} (goal ≤ 1.10)", f"{figures.ratio:.3f}")
    table.add_row("same for bare sleeps (this machine's event loop)", f"{loop_ratio:.3f}")
    console.print(table)
    rerun = measure_cached_rerun(_personas(personas_file, personas), guard=guard)
    table = Table(title="MirageBench: all stages, offline provider, then a fully cached re-run")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("personas x tasks, guard arm", f"{rerun.personas} x {rerun.tasks}, {guard.value}")
    table.add_row("LLM calls per run", str(rerun.llm_calls))
    table.add_row("first run (fills the cache)", f"{rerun.first_run_s:.2f} s")
    table.add_row("fully cached re-run (goal ≤ 60 s)", f"{rerun.cached_rerun_s:.2f} s")
    table.add_row("cache hits in the re-run", f"{rerun.cache_hits} / {rerun.llm_calls}")
    console.print(table)
