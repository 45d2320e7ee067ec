"""What every route depends on: the per-app :class:`Sidecar` state, the caller's tenant (API-key
auth) and the request hash of idempotent writes. Imported by the routes and by the app factory."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import weakref
from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader

from mirage_guard.adapters import AsyncGuardedMemory, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._scope import DEFAULT_TENANT
from mirage_guard.adapters.server._errors import UnauthorizedError
from mirage_guard.guard.scoring import ProfileStore
from mirage_guard.guard.settings import GuardSettings

API_KEY_HEADERS = ("authorization", "x-api-key")


@dataclass
class Sidecar:
    """What the routes need; one per app, built in the lifespan."""

    settings: GuardSettings
    memory: AsyncGuardedMemory
    metrics: GuardMetrics
    keys: dict[str, str]
    profiles: ProfileStore
    data_dir_problem: str | None = None  # last readiness finding (logged when it changes)
    reload_lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one profile reload at a time
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
        # never echoed: a header without a scheme ("Authorization: k1") is the key itself
        what = "missing API key"
        if request.headers.get("authorization"):
            what = "the Authorization header is not 'Token <key>' or 'Bearer <key>'"
        raise UnauthorizedError(
            f"{what}: send 'Authorization: Token <key>' (or Bearer) or 'X-API-Key'"
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


__all__ = [
    "Sidecar",
    "SidecarDep",
    "TenantDep",
    "get_sidecar",
    "get_tenant",
    "presented_key",
    "request_hash",
]
