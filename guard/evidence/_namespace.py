"""Whose cache: one namespace per tenant, so cache hits say nothing across tenants.

A sentence vector cached for one tenant answers faster than a new one; shared across tenants,
that difference tells tenant A whether tenant B has stored a sentence. The edge that knows the
tenant (the guarded memory, the sidecar) runs the guard inside ``with cache_namespace(tenant):``
and every cache keyed by text (the linker's, the edge's embedding cache) keys by namespace too.
The core knows nothing of HTTP or tenants: a namespace is an opaque string in a context
variable (copied into the linker's worker thread).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_NAMESPACE: ContextVar[str] = ContextVar("mirage_cache_namespace", default="")


@contextmanager
def cache_namespace(name: str) -> Iterator[None]:
    """Text caches used inside this block are those of ``name`` only."""
    token = _NAMESPACE.set(name)
    try:
        yield
    finally:
        _NAMESPACE.reset(token)


def current_cache_namespace() -> str:
    return _NAMESPACE.get()
