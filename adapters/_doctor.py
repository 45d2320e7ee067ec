"""``mirage doctor``: is the store explained by the decision log, tenant by tenant?

Three kinds of problem, found by listing the whole store (:meth:`MemoryBackend.scan`) against
the decision log:

- **orphan**: a memory the guard wrote (it carries a tenant) with no decision row and no pending
  intent — nothing explains why it is there;
- **pending intent**: a write that did not finish (a crash; see :mod:`._outbox`);
- **gone**: a decision row whose memory the store no longer has and that was not deleted on
  purpose (delete, delete_all, reset are recorded).

``repair``: pending intents are reconciled (completed or removed), orphans deleted, gone memories
recorded as lost (their decision rows stay as history). Ids only, never memory text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime

import anyio.to_thread
from pydantic import BaseModel

from mirage_guard.adapters._backend import TENANT_KEY, WRITE_KEY, Item, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._outbox import outbox_for
from mirage_guard.adapters._reconcile import reconcile
from mirage_guard.adapters._time import as_utc
from mirage_guard.guard.errors import MemoryNotFoundError


class TenantHealth(BaseModel):
    """One tenant's findings (memory and intent ids, no text)."""

    tenant: str
    memories: int = 0  # in the store
    logged: int = 0  # distinct memory ids in decision rows
    orphans: list[str] = []
    pending_intents: list[str] = []
    gone: list[str] = []

    @property
    def problems(self) -> int:
        return len(self.orphans) + len(self.pending_intents) + len(self.gone)


class DoctorReport(BaseModel):
    tenants: list[TenantHealth]
    foreign: int = 0  # store items without a tenant (not written by the guard): never touched
    repaired: dict[str, int] = {}
    undo_failed: list[str] = []  # ids a repair could not delete

    @property
    def problems(self) -> int:
        return sum(t.problems for t in self.tenants)


def _tenant(item: Item) -> str | None:
    meta = item.get("metadata") or {}
    value = meta.get(TENANT_KEY) if isinstance(meta, Mapping) else None
    return str(value) if value is not None else None


def _write_key(item: Item) -> str | None:
    meta = item.get("metadata") or {}
    value = meta.get(WRITE_KEY) if isinstance(meta, Mapping) else None
    return str(value) if value is not None else None


async def examine(
    backend: MemoryBackend, decision_log: DecisionLog, *, limit: int = 1_000_000
) -> DoctorReport:
    """The findings, changing nothing."""
    outbox = outbox_for(decision_log)
    items = await backend.scan(filters={}, limit=limit)
    rows = await anyio.to_thread.run_sync(decision_log.all_decisions)
    pending = await anyio.to_thread.run_sync(outbox.pending)
    deleted, resets = await anyio.to_thread.run_sync(outbox.deletions)

    health: dict[str, TenantHealth] = defaultdict(lambda: TenantHealth(tenant=""))
    logged: dict[str, set[str]] = defaultdict(set)
    last_logged: dict[tuple[str, str], datetime] = {}
    for r in rows:
        if r.memory_id:
            logged[r.tenant].add(r.memory_id)
            last_logged[(r.tenant, r.memory_id)] = r.created_at
    pending_keys = {k for intent in pending for k in intent.planned_keys()}
    for intent in pending:
        health[intent.tenant].pending_intents.append(intent.id)
    all_logged = set().union(*logged.values()) if logged else set()
    stored: set[str] = set()
    foreign = 0
    for item in items:
        tenant = _tenant(item)
        if tenant is None:
            foreign += 1
            continue
        memory_id = str(item["id"])
        stored.add(memory_id)
        health[tenant].memories += 1
        if memory_id not in all_logged and _write_key(item) not in pending_keys:
            health[tenant].orphans.append(memory_id)
    for tenant, ids in logged.items():
        health[tenant].logged = len(ids)
        reset_at = max((as_utc(t) for w, t in resets.items() if w in (tenant, "*")), default=None)
        for memory_id in sorted(ids - stored):
            if (tenant, memory_id) in deleted:
                continue
            if reset_at is not None and as_utc(last_logged[(tenant, memory_id)]) <= reset_at:
                continue
            health[tenant].gone.append(memory_id)
    for name, h in health.items():
        h.tenant = name
    return DoctorReport(tenants=sorted(health.values(), key=lambda h: h.tenant), foreign=foreign)


async def repair(
    backend: MemoryBackend,
    decision_log: DecisionLog,
    *,
    older_than_s: float = 0.0,
    limit: int = 1_000_000,
) -> DoctorReport:
    """Reconcile pending intents, delete orphans, record gone memories as lost; then examine
    again (what is left is reported)."""
    rec = await reconcile(backend, decision_log, older_than_s=older_than_s)
    found = await examine(backend, decision_log, limit=limit)
    outbox = outbox_for(decision_log)
    deleted_orphans = 0
    failed: list[str] = list(rec.undo_failed)
    for h in found.tenants:
        for memory_id in h.orphans:
            try:
                await backend.delete(memory_id)
                deleted_orphans += 1
            except MemoryNotFoundError:
                continue
            except Exception:  # keep going; reported as still there below
                failed.append(memory_id)
        if h.orphans:
            await anyio.to_thread.run_sync(outbox.deleted, h.tenant, h.orphans, "doctor_orphan")
        if h.gone:
            await anyio.to_thread.run_sync(outbox.deleted, h.tenant, h.gone, "lost")
    after = await examine(backend, decision_log, limit=limit)
    after.repaired = {
        "intents_completed": len(rec.completed),
        "intents_removed": len(rec.removed),
        "keys_released": rec.released_keys,
        "orphans_deleted": deleted_orphans,
        "gone_recorded": sum(len(h.gone) for h in found.tenants),
    }
    after.undo_failed = failed
    return after


__all__ = ["DoctorReport", "TenantHealth", "examine", "repair"]
