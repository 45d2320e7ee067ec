"""Commands of the sidecar: ``mirage serve`` and ``mirage perf sidecar``.

Registered on the root CLI in ``guard/cli.py``::

    app.command("serve")(serve)
    perf_app.command("sidecar")(perf_sidecar)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from mirage_guard.guard.settings import GuardSettings


def _torch_threads(n: int) -> None:
    """Intra-op threads of the embedder. 1 keeps a busy server from oversubscribing its cores
    (concurrent requests are batched by the store's embedder instead)."""
    try:
        import torch
    except ImportError:  # pragma: no cover - the embed extra is not installed
        return
    torch.set_num_threads(n)


def serve(
    host: Annotated[str | None, typer.Option(help="bind address (default MIRAGE_HOST)")] = None,
    port: Annotated[int | None, typer.Option(help="port (default MIRAGE_PORT)")] = None,
    torch_threads: Annotated[
        int, typer.Option("--torch-threads", help="embedder intra-op threads")
    ] = 1,
    log_level: Annotated[str, typer.Option(help="uvicorn log level")] = "info",
    extraction: Annotated[
        str,
        typer.Option(
            help="infer=true extraction: 'guard' (provenance-aware prompt) or 'mem0' "
            "(Mem0's own prompt; its facts are tagged before they are written)"
        ),
    ] = "guard",
) -> None:
    """Run the sidecar: Mem0-compatible REST with the guard in the write path."""
    import uvicorn

    from mirage_guard.adapters import ExtractionMode
    from mirage_guard.guard.server._app import create_app

    try:
        mode = ExtractionMode(extraction)
    except ValueError as exc:
        raise typer.BadParameter("--extraction must be 'guard' or 'mem0'") from exc
    settings = GuardSettings()
    _torch_threads(torch_threads)
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    uvicorn.run(
        create_app(settings, extraction=mode),
        host=host or settings.host,
        port=port or settings.port,
        log_level=log_level,
        proxy_headers=False,
    )


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
) -> None:
    """Added latency of a guarded write over Mem0 ``add(infer=False)``, and writes/s on loopback."""
    from mirage_guard.guard.server._perf import run_sidecar_perf

    _torch_threads(torch_threads)
    console = Console()
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
    table.add_row("guarded / direct (p50)", f"{r.ratio_p50:.2f}x", "<= 1.5x")
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
        f"{torch_threads}; rerun: mirage perf sidecar --samples {samples} --facts {facts} "
        f"--duration {duration:g} --concurrency {concurrency} --torch-threads {torch_threads}[/dim]"
    )
