"""``mirage serve``: run the sidecar (registered on the root CLI in ``_main.py``).

Loads FastAPI and uvicorn (the ``server`` extra) only when it runs; never the benchmark or
calibration packages, so a server process carries no scipy or scikit-learn.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from mirage_guard.adapters import ExtractionMode
from mirage_guard.adapters._data_dir import CANNOT_START, data_dir_problem
from mirage_guard.guard.settings import GuardSettings


def set_torch_threads(n: int) -> None:
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
    """Run the sidecar: Mem0-compatible REST with the guard in the write path. SIGHUP reloads
    the calibration profiles of MIRAGE_PROFILE_DIR (a bad one is refused; the old ones stay)."""
    # the `server` extra (FastAPI, uvicorn) is needed only here, not by the rest of the CLI
    import uvicorn

    from mirage_guard.adapters.server import create_app

    try:
        mode = ExtractionMode(extraction)
    except ValueError as exc:
        raise typer.BadParameter("--extraction must be 'guard' or 'mem0'") from exc
    settings = GuardSettings.from_env()
    set_torch_threads(torch_threads)
    logging.basicConfig(
        level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s %(message)s"
    )
    # the app's start-up refuses an unusable data directory too, but inside uvicorn's lifespan,
    # which prints a traceback after the line; here it is the one CRITICAL line, and exit 3
    problem = data_dir_problem(settings.data_dir, min_free_bytes=settings.min_free_bytes)
    if problem is not None:
        logging.getLogger("mirage.server").critical(CANNOT_START, problem)
        raise typer.Exit(3)
    uvicorn.run(
        create_app(settings, extraction=mode, reload_on_sighup=True),
        host=host or settings.host,
        port=port or settings.port,
        log_level=log_level,
        proxy_headers=False,
    )
