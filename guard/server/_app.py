"""The sidecar: a FastAPI app (factory + lifespan) that puts the guard in front of Mem0."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio.to_thread
from fastapi import Depends, FastAPI, Request, Security
from fastapi.security import APIKeyHeader
from prometheus_client import CollectorRegistry

from mirage_guard.adapters import AsyncGuardedMemory, ExtractionMode, MemoryBackend
from mirage_guard.calibration import ProfileStore
from mirage_guard.guard._pipeline import Guard
from mirage_guard.guard.decision_log import DEFAULT_TENANT, DecisionLog
from mirage_guard.guard.llm import LLMClient
from mirage_guard.guard.metrics import GuardMetrics
from mirage_guard.guard.server._errors import (
    BodyLimitMiddleware,
    UnauthorizedError,
    install_error_handlers,
)
from mirage_guard.guard.settings import GuardSettings

log = logging.getLogger("mirage.server")

API_KEY_HEADERS = ("authorization", "x-api-key")


@dataclass
class Sidecar:
    """What the routes need; one per app, built in the lifespan."""

    settings: GuardSettings
    memory: AsyncGuardedMemory
    metrics: GuardMetrics
    keys: dict[str, str]
    profiles: ProfileStore
    _tenants: dict[str, AsyncGuardedMemory] = field(default_factory=dict)
    _idempotency: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = field(
        default_factory=weakref.WeakValueDictionary
    )

    @property
    def decision_log(self) -> DecisionLog:
        assert self.memory.decision_log is not None
        return self.memory.decision_log

    @property
    def backend(self) -> MemoryBackend:
        return self.memory.backend

    def memory_for(self, tenant: str) -> AsyncGuardedMemory:
        if not self.keys:
            return self.memory  # auth disabled: one tenant, the whole store
        if tenant not in self._tenants:
            self._tenants[tenant] = self.memory.for_tenant(tenant, isolated=True)
        return self._tenants[tenant]

    def idempotency_lock(self, tenant: str, key: str) -> asyncio.Lock:
        lock = self._idempotency.get((tenant, key))
        if lock is None:
            lock = asyncio.Lock()
            self._idempotency[(tenant, key)] = lock
        return lock


def presented_key(request: Request) -> str | None:
    auth = request.headers.get("authorization")
    if auth:
        scheme, _, token = auth.partition(" ")
        if scheme.lower() in ("token", "bearer") and token.strip():
            return token.strip()
    key = request.headers.get("x-api-key")
    return key.strip() if key and key.strip() else None


def get_sidecar(request: Request) -> Sidecar:
    sidecar: Sidecar = request.app.state.sidecar
    return sidecar


_TOKEN = APIKeyHeader(
    name="Authorization",
    scheme_name="Token",
    description="'Token <key>' (what mem0.MemoryClient sends) or 'Bearer <key>'",
    auto_error=False,
)
_API_KEY = APIKeyHeader(name="X-API-Key", scheme_name="ApiKey", auto_error=False)


def get_tenant(
    request: Request,
    _token: Annotated[str | None, Security(_TOKEN)] = None,
    _key: Annotated[str | None, Security(_API_KEY)] = None,
) -> str:
    """The tenant bound to the caller's API key (auth disabled: the default tenant)."""
    sidecar = get_sidecar(request)
    if not sidecar.keys:
        return DEFAULT_TENANT
    key = presented_key(request)
    if key is None:
        raise UnauthorizedError(
            "missing API key: send 'Authorization: Token <key>' (or Bearer) or 'X-API-Key'"
        )
    tenant: str | None = None
    for known, owner in sidecar.keys.items():
        if hmac.compare_digest(known.encode(), key.encode()):
            tenant = owner
    if tenant is None:
        raise UnauthorizedError("invalid API key")
    return tenant


SidecarDep = Annotated[Sidecar, Depends(get_sidecar)]
TenantDep = Annotated[str, Depends(get_tenant)]


def request_hash(body: Any) -> str:
    return hashlib.sha256(body.model_dump_json().encode("utf-8")).hexdigest()


def create_app(
    settings: GuardSettings | None = None,
    *,
    guard: Guard | None = None,
    backend: MemoryBackend | None = None,
    writer_llm: LLMClient | None = None,
    decision_log: DecisionLog | None = None,
    extraction: ExtractionMode = ExtractionMode.GUARD,
) -> FastAPI:
    """The sidecar app. Components passed in stay the caller's; the rest is built (and closed)
    in the lifespan from ``settings``."""
    s = settings or GuardSettings()
    keys = s.tenant_keys()  # invalid MIRAGE_API_KEYS fails here, at startup

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        metrics = GuardMetrics(CollectorRegistry())
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
        app.state.sidecar = Sidecar(
            settings=s,
            memory=memory,
            metrics=guard.metrics if guard is not None and guard.metrics else metrics,
            keys=keys,
            profiles=ProfileStore(s.profile_dir),
        )
        log.info(
            "mirage sidecar ready: backend=%s auth=%s tenants=%d",
            memory.backend.name, "on" if keys else "off", len(set(keys.values())),
        )  # fmt: skip
        try:
            yield
        finally:
            await memory.close()

    from mirage_guard.guard.server._routes import guard_router, mem0_router, ops_router

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
    return app


__all__ = ["Sidecar", "create_app", "get_sidecar", "get_tenant", "presented_key"]
