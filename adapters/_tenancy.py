"""Who may see what: Mem0 scope ids checked, reads narrowed to one tenant, ownership proved.

Every memory the guard writes carries its tenant in metadata (``TENANT_KEY``). A
:class:`Tenancy` adds that tenant to every filter, checks it again on every item a store returns
(a store may drop a filter) and answers "not found" for another tenant's memory, never
"forbidden", so ids do not leak across tenants.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from mirage_guard.adapters._backend import SCOPE_KEYS, TENANT_KEY, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._filters import checked_filters, matches
from mirage_guard.adapters._scope import MemoryScope, refuse_reserved
from mirage_guard.guard import well_formed
from mirage_guard.guard.errors import ConfigError, InputError, MemoryNotFoundError


def scope_of(user_id: str | None, agent_id: str | None, run_id: str | None) -> MemoryScope:
    """A Mem0 scope from the three ids: at least one, each non-empty, without whitespace, not
    Mem0's wildcard ``*`` and not a URL dot segment (``.``, ``..``)."""
    values: dict[str, str | None] = {}
    for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
        if value is not None:
            value = str(value).strip()
            if not value or any(c.isspace() for c in value) or not well_formed(value):
                raise InputError(
                    f"{name} must be a non-empty id without whitespace or a lone surrogate"
                )
            try:
                refuse_reserved(name, value)
            except ValueError as exc:
                raise InputError(str(exc)) from exc
        values[name] = value
    scope = MemoryScope(**values)
    if scope.is_empty():
        raise InputError("one of user_id, agent_id or run_id is required")
    return scope


# the keys a caller may not filter on, anywhere in a filter, and why
GUARD_FILTER_KEYS = {
    TENANT_KEY: f"{TENANT_KEY!r} is not a filter: the tenant is the API key's (the guarded "
    "memory's own), never a caller's choice",
    "status": "filter by status with include_hypotheses / include_quarantined, not filters=",
}


@dataclass(frozen=True)
class Tenancy:
    """One tenant's view of a store. ``isolated``: its reset deletes only what it wrote (the
    decision log records who wrote which memory, so isolation needs one)."""

    backend: MemoryBackend
    decision_log: DecisionLog | None
    tenant: str
    isolated: bool = False

    def __post_init__(self) -> None:
        if self.isolated and self.decision_log is None:
            raise ConfigError("tenant isolation needs a decision log (it records memory ownership)")

    def filters(self, filters: Mapping[str, Any] | None, statuses: list[str]) -> dict[str, Any]:
        """The caller's filters (Mem0's language, checked: :mod:`._filters`; a scope id
        required), narrowed to this tenant and ``statuses``."""
        f = checked_filters(filters, GUARD_FILTER_KEYS)
        if not any(f.get(k) for k in SCOPE_KEYS):
            raise InputError("filters must contain one of user_id, agent_id, run_id")
        for k in SCOPE_KEYS:
            if k in f:
                if isinstance(f[k], int) and not isinstance(f[k], bool):
                    f[k] = str(f[k])  # as add(user_id=42) files it, and Mem0 reads it
                if not isinstance(f[k], str):
                    raise InputError(f"filters[{k!r}] must be a string id")
                f[k] = scope_of(f[k], None, None).user_id
        f[TENANT_KEY] = self.tenant
        f["status"] = {"in": statuses}
        return f

    def mine(self, item: Mapping[str, Any]) -> bool:
        return matches(item, {TENANT_KEY: self.tenant})

    def visible(self, item: Mapping[str, Any], statuses: list[str]) -> bool:
        return matches(item, {TENANT_KEY: self.tenant, "status": {"in": statuses}})

    async def written_ids(self) -> list[str]:
        """Every memory id this tenant ever wrote (from the decision log)."""
        assert self.decision_log is not None
        return await anyio.to_thread.run_sync(self.decision_log.memory_ids, self.tenant)

    async def require_owned(self, memory_id: str, *, allow_deleted: bool = False) -> None:
        """MemoryNotFoundError unless the memory is this tenant's (``allow_deleted``: or was)."""
        item = await self.backend.get(memory_id)
        if item is not None:
            if self.mine(item):
                return
            raise MemoryNotFoundError(memory_id)
        was_mine = allow_deleted and self.decision_log is not None
        if not (was_mine and memory_id in await self.written_ids()):
            raise MemoryNotFoundError(memory_id)


__all__ = ["GUARD_FILTER_KEYS", "Tenancy", "scope_of"]
