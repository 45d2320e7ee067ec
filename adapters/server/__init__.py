"""The mirage-guard sidecar: Mem0-compatible REST with the guard in the write path.

>>> from guard.server import create_app
>>> app = create_app(GuardSettings())   # or: `mirage serve`
"""

from mirage_guard.adapters.server._app import create_app
from mirage_guard.adapters.server._deps import Sidecar

__all__ = ["Sidecar", "create_app"]
