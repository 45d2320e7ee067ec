"""The mirage-guard sidecar: Mem0-compatible REST with the guard in the write path.

>>> from mirage_guard.adapters.server import create_app
>>> app = create_app(GuardSettings())   # or: `mirage serve`

Modules: ``_app`` (factory + lifespan), ``_deps`` (per-app state, tenant auth), ``_routes``
(Mem0-compatible and guard-native routes), ``_models`` (wire models), ``_errors`` (typed JSON
errors, body limit). Needs the ``server`` extra (FastAPI); part of :mod:`mirage_guard.adapters`.
"""

from mirage_guard.adapters.server._app import create_app
from mirage_guard.adapters.server._deps import Sidecar

__all__ = ["Sidecar", "create_app"]
