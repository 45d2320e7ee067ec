"""The mirage-guard sidecar: Mem0-compatible REST with the guard in the write path.

>>> from guard.server import create_app
>>> app = create_app(GuardSettings())   # or: `mirage serve`
"""

from mirage_guard.guard.server._app import Sidecar, create_app

__all__ = ["Sidecar", "create_app"]
