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

from mirage_guard.adapters._backend import SCOPE_KEYS, TENANT_KEY, MemoryBackend, matches
from mirage_guard.adapters._decision_log import DecisionLog
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


# the operators that compare a metadata value for equality (Mem0's "gt" / "lte" ... take numbers)
EQUALITY_OPERATORS = frozenset({"eq", "ne", "in", "nin"})


def refuse_float_equality(key: str, value: Any) -> None:
    """InputError when filter ``key`` compares a float for equality (``7.5``, ``{"eq": 7.5}``,
    ``{"in": [7.5]}``). Neither store can: embedded Qdrant matches a string, an integer or a
    boolean only (a float is a validation error inside the store), and pgvector compares the
    stored JSON's text with ``str(value)`` (``1e+16`` is not ``10000000000000000``)."""
    if isinstance(value, Mapping):
        compared = [v for op, v in value.items() if op in EQUALITY_OPERATORS]
    else:
        compared = [value]
    flat = [x for v in compared for x in (v if isinstance(v, list | tuple) else [v])]
    if any(isinstance(x, float) for x in flat):
        raise InputError(
            f"filters[{key!r}]: an equality filter takes a string, an integer or a boolean, not "
            "a float (the vector stores cannot match one exactly); filter on an integer or a "
            "string metadata value instead"
        )


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
        """The caller's filters (a scope id required), narrowed to this tenant and ``statuses``."""
        f = dict(filters or {})
        if TENANT_KEY in f:
            raise InputError(
                f"{TENANT_KEY!r} is not a filter: the tenant is the API key's (the guarded "
                "memory's own), never a caller's choice"
            )
        if "status" in f:
            raise InputError(
                "filter by status with include_hypotheses / include_quarantined, not filters="
            )
        if not any(f.get(k) for k in SCOPE_KEYS):
            raise InputError("filters must contain one of user_id, agent_id, run_id")
        for k, value in f.items():
            if k not in SCOPE_KEYS:
                refuse_float_equality(k, value)
        for k in SCOPE_KEYS:
            if k in f:
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


__all__ = ["Tenancy", "refuse_float_equality", "scope_of"]
