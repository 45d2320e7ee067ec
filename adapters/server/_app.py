"""The sidecar: a FastAPI app (factory + lifespan) that puts the guard in front of Mem0."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from prometheus_client import CollectorRegistry

from mirage_guard.adapters import AsyncGuardedMemory, ExtractionMode, MemoryBackend
from mirage_guard.adapters._compose import reconcile_grace_s
from mirage_guard.adapters._data_dir import CANNOT_START, data_dir_problem
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters.server._admin import admin_router, reload_on_signal
from mirage_guard.adapters.server._deps import Sidecar
from mirage_guard.adapters.server._errors import BodyLimitMiddleware, install_error_handlers
from mirage_guard.adapters.server._routes import guard_router, mem0_router, ops_router
from mirage_guard.guard import Guard
from mirage_guard.guard.errors import ConfigError
from mirage_guard.guard.llm import LLMClient
from mirage_guard.guard.scoring import ProfileStore
from mirage_guard.guard.settings import GuardSettings

log = logging.getLogger("mirage.server")


def create_app(
    settings: GuardSettings | None = None,
    *,
    guard: Guard | None = None,
    backend: MemoryBackend | None = None,
    writer_llm: LLMClient | None = None,
    decision_log: DecisionLog | None = None,
    extraction: ExtractionMode = ExtractionMode.GUARD,
    reload_on_sighup: bool = False,
) -> FastAPI:
    """The sidecar app. Components passed in stay the caller's; the rest is built (and closed)
    in the lifespan from ``settings``. ``reload_on_sighup`` (``mirage serve``; the main thread
    only): SIGHUP reloads the calibration profiles, like ``POST /v1/admin/profiles/reload``."""
    s = settings or GuardSettings.from_env()
    keys = s.tenant_keys()  # checked when the settings were built (a ConfigError there)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        problem = await anyio.to_thread.run_sync(
            lambda: data_dir_problem(s.data_dir, min_free_bytes=s.min_free_bytes)
        )
        if problem is not None:  # refuse to start rather than fail (or SIGBUS) on first write
            log.critical(CANNOT_START, problem)
            raise ConfigError(f"data directory unusable: {problem}")
        profiles = ProfileStore(s.profile_dir)
        # model labels only from configuration: a caller's writer_model never becomes a series
        models = {m for m in (s.writer_model, writer_llm.model if writer_llm else None) if m}
        if s.auditor_model:  # the metrics' model when no writer is configured (Guard.atag)
            models.add(s.auditor_model)
        models |= {p.writer_model for p in profiles.all() if p.writer_model}
        metrics = GuardMetrics(CollectorRegistry(), models=models, drift_window=s.drift_window)
        if guard is not None and guard.metrics is None:
            guard.metrics = metrics  # a caller's guard reports into this app's registry
        memory = await anyio.to_thread.run_sync(
            lambda: AsyncGuardedMemory.from_settings(
                s,
                writer_llm=writer_llm,
                guard=guard,
                backend=backend,
                decision_log=decision_log,
                metrics=metrics,
                extraction=extraction,
                linker_thread="pool",  # concurrent requests share forward passes
            )
        )
        await _reconcile_at_startup(memory, s)
        sidecar = app.state.sidecar = Sidecar(
            settings=s,
            memory=memory,
            metrics=guard.metrics
            if guard is not None and isinstance(guard.metrics, GuardMetrics)
            else metrics,
            keys=keys,
            profiles=profiles,
        )
        sidecar.metrics.track_guard(memory.guard)  # drift of the writer model's live scores
        if reload_on_sighup:
            _on_sighup(lambda: reload_on_signal(sidecar))
        log.info(
            "mirage sidecar ready: backend=%s auth=%s tenants=%d",
            memory.backend.name, "on" if keys else "off", len(set(keys.values())),
        )  # fmt: skip
        try:
            yield
        finally:
            if reload_on_sighup:
                asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)
            await memory.aclose()

    app = FastAPI(
        title="mirage-guard sidecar",
        version="0.1.0",
        description=(
            "Mem0-compatible memory API with a provenance guard in the write path: every fact is "
            "tagged stated / inferred / generated and stored, hypothesised or quarantined."
        ),
        lifespan=lifespan,
    )
    app.add_middleware(BodyLimitMiddleware, max_bytes=s.max_body_bytes)
    install_error_handlers(app)
    app.include_router(mem0_router)
    app.include_router(guard_router)
    app.include_router(ops_router)
    app.include_router(admin_router)
    return app


async def _reconcile_at_startup(memory: AsyncGuardedMemory, s: GuardSettings) -> None:
    """Resolve the write intents a crash left (see README "Crash consistency"). On SQLite the
    log belongs to this process alone, so every pending intent is dead; on a database replicas
    share, only intents older than the idempotency lease are."""
    log_db = memory.decision_log
    if log_db is None:
        return
    grace = reconcile_grace_s(log_db, s)
    try:
        report = await memory.reconcile(older_than_s=grace)
    except Exception as exc:  # the store or log is down: retried before the first write
        log.error("start-up reconciliation failed (%s); retried before the first write",
                  type(exc).__name__)  # fmt: skip
        return
    if not report.clean:
        log.error(
            "start-up reconciliation left %d write intent(s) pending: run `mirage doctor`",
            len(report.left),
        )


def _on_sighup(reload: Callable[[], Coroutine[Any, Any, None]]) -> None:
    loop = asyncio.get_running_loop()
    tasks: set[asyncio.Task[None]] = set()

    def handle() -> None:
        task = loop.create_task(reload())
        tasks.add(task)  # keep a reference until it finishes
        task.add_done_callback(tasks.discard)

    loop.add_signal_handler(signal.SIGHUP, handle)


__all__ = ["create_app"]
