"""The memory-store seam: what the guard needs from Mem0 (or any store with Mem0's shape).

Items are Mem0-shaped dicts (``id``, ``memory``, ``metadata``, ``user_id``...). A backend only
ever writes verbatim (Mem0's ``infer=False``): what gets written, and with which provenance, is
the guard's decision, never the store's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard.errors import ConfigError

# Keys the guard owns inside a memory's metadata; callers may neither set nor change them.
PROVENANCE_KEYS = ("provenance", "source_turn_id", "guard_score", "profile_id", "status")
TENANT_KEY = "mirage_tenant"
# the write intent a stored fact belongs to, "<intent id>/<index>" (crash reconciliation, _outbox)
WRITE_KEY = "mirage_write"
EDIT_KEYS = ("edited_at", "edited_by")  # set by a guarded update of a memory's text
# Mem0's own timestamps: a client may not backdate a fact or make it expire (rejected, 400)
TIME_KEYS = ("created_at", "updated_at", "expiration_date")
# Mem0's own payload keys: a caller's value under one was dropped on the way in (rejected, 400)
MEM0_KEYS = ("data", "hash", "role", "id", "actor_id")
PROTECTED_KEYS = frozenset(
    (*PROVENANCE_KEYS, TENANT_KEY, WRITE_KEY, *EDIT_KEYS, *TIME_KEYS, *MEM0_KEYS)
)
SCOPE_KEYS = ("user_id", "agent_id", "run_id")

Item = dict[str, Any]


class MemoryBackend(ABC):
    """A Mem0-compatible store. Every method is async; failures raise ``guard.errors`` types:

    - ``BackendUnavailableError`` when the store cannot be reached (retry may help),
    - ``MemoryNotFoundError`` for an unknown id, ``InputError`` for input the store rejects,
    - ``BackendError`` for anything else the store did wrong.
    """

    name: str = "backend"

    @abstractmethod
    async def add(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        scope: MemoryScope,
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Item]:
        """Store each message verbatim (Mem0 ``infer=False``) with ``metadata``; return items."""

    @abstractmethod
    async def get(self, memory_id: str) -> Item | None:
        """The item, or None if there is no memory with that id."""

    @abstractmethod
    async def get_all(self, *, filters: Mapping[str, Any], top_k: int) -> list[Item]:
        """Items matching ``filters`` (scope ids, metadata equality, ``{"in": [...]}``)."""

    @abstractmethod
    async def search(
        self, query: str, *, filters: Mapping[str, Any], top_k: int, threshold: float
    ) -> list[Item]:
        """Items most similar to ``query`` among those matching ``filters``, best first."""

    @abstractmethod
    async def update(
        self, memory_id: str, *, text: str | None, metadata: Mapping[str, Any] | None
    ) -> None:
        """Replace the text and/or merge metadata of one memory."""

    @abstractmethod
    async def delete(self, memory_id: str) -> None:
        """Delete one memory; MemoryNotFoundError if there is none."""

    @abstractmethod
    async def delete_all(self, scope: MemoryScope) -> None:
        """Delete every memory of a scope (across tenants: the guard lists and deletes instead)."""

    @abstractmethod
    async def history(self, memory_id: str) -> list[Item]:
        """Change history of one memory (ADD / UPDATE / DELETE events)."""

    @abstractmethod
    async def reset(self) -> None:
        """Delete everything in the store."""

    async def scan(self, *, filters: Mapping[str, Any], limit: int) -> list[Item]:
        """Items matching ``filters`` whatever their user / agent / run scope (a tenant's
        reset, ``mirage doctor``). Optional: a store that cannot list across scopes raises
        :class:`~mirage_guard.guard.errors.ConfigError` (the default)."""
        raise ConfigError(f"the {self.name} store cannot list memories across scopes")

    async def ping(self) -> None:  # noqa: B027 - optional hook with a safe default
        """Raise BackendUnavailableError if the store cannot serve requests (readiness)."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook with a safe default
        """Release resources (async: ``aclose``, the httpx convention)."""


__all__ = [
    "EDIT_KEYS",
    "MEM0_KEYS",
    "PROTECTED_KEYS",
    "PROVENANCE_KEYS",
    "SCOPE_KEYS",
    "TENANT_KEY",
    "TIME_KEYS",
    "WRITE_KEY",
    "Item",
    "MemoryBackend",
]
