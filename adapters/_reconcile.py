"""Start-up reconciliation: every write intent a crash left pending is completed or removed.

For each pending intent (see :mod:`._outbox`) the store is asked for the items carrying its write
keys. If every fact the intent planned is there (exactly once), the write is **completed**: the
decision rows are written from the intent and its idempotency key is answered with the reply
the client would have had. Otherwise every item found is **removed** and the key is freed, so a
retry runs the write again. An item that cannot be removed is logged with its id (never its
text) and the intent stays pending for ``mirage doctor --repair``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

import anyio.to_thread
from pydantic import BaseModel

from mirage_guard.adapters._backend import TENANT_KEY, WRITE_KEY, Item, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog, WrittenDecision
from mirage_guard.adapters._filters import matches
from mirage_guard.adapters._mem0_wire import add_result
from mirage_guard.adapters._outbox import IdempotentCall, WriteIntent, outbox_for
from mirage_guard.guard.errors import MemoryNotFoundError

log = logging.getLogger("mirage.reconcile")


class ReconcileReport(BaseModel):
    """What one reconciliation pass did (intent ids, memory ids; never text)."""

    completed: list[str] = []
    removed: list[str] = []
    left: list[str] = []  # intents still pending (an item could not be removed)
    undo_failed: list[str] = []  # memory ids that could not be removed
    released_keys: int = 0  # idempotency keys of requests that died before storing anything

    @property
    def clean(self) -> bool:
        return not self.left


async def intent_items(backend: MemoryBackend, intent: WriteIntent) -> dict[str, list[Item]]:
    """The store's items of an intent, by write key (a key may have 0, 1 or more items)."""
    keys = intent.planned_keys()
    found: dict[str, list[Item]] = {k: [] for k in keys}
    if not keys:
        return found
    filters: dict[str, Any] = {
        **intent.scope.as_kwargs(),
        TENANT_KEY: intent.tenant,
        WRITE_KEY: {"in": sorted(keys)},
    }
    items = await backend.get_all(filters=filters, top_k=2 * len(keys) + 10)
    for item in items:
        meta = item.get("metadata") or {}
        key = meta.get(WRITE_KEY) if isinstance(meta, Mapping) else None
        if key in found and matches(item, {TENANT_KEY: intent.tenant}):
            found[str(key)].append(item)
    return found


async def resolve(
    backend: MemoryBackend,
    decision_log: DecisionLog,
    intent: WriteIntent,
    *,
    complete: bool,
    release_key: bool = True,
) -> str:
    """Resolve one claimed intent: ``completed``, ``removed`` (its unanswered idempotency key
    freed unless ``release_key`` is False) or ``left:<ids that could not be removed>``."""
    outbox = outbox_for(decision_log)
    found = await intent_items(backend, intent)
    if complete and all(len(items) == 1 for items in found.values()):
        keys = intent.planned_keys()
        ids = {keys[k]: str(items[0]["id"]) for k, items in found.items()}
        held = intent.held(ids)
        written = [
            WrittenDecision(
                decision=d,
                memory_id=held.get(i),
                already_stored=i in intent.existing or i in intent.repeats,
            )
            for i, d in enumerate(intent.decisions)
        ]
        call = (
            IdempotentCall(key=intent.idempotency_key, request_hash=intent.request_hash or "")
            if intent.idempotency_key
            else None
        )
        reply = add_result(written, intent.turns)
        await anyio.to_thread.run_sync(
            functools.partial(outbox.complete, intent, written, reply, call, by_reconciler=True)
        )
        return "completed"
    failed: list[str] = []
    for items in found.values():
        for item in items:
            try:
                await backend.delete(str(item["id"]))
            except MemoryNotFoundError:
                continue
            except Exception:  # keep removing the rest; report what is left
                failed.append(str(item["id"]))
    if failed:
        note = f"could not remove memories: {','.join(failed)}"
        log.error(
            "reconcile: intent %s of tenant=%s: %s; run `mirage doctor --repair`",
            intent.id, intent.tenant, note,
        )  # fmt: skip
        await anyio.to_thread.run_sync(outbox.leave, intent.id, note)
        return "left:" + ",".join(failed)
    await anyio.to_thread.run_sync(
        functools.partial(outbox.drop, intent.id, release_key=release_key)
    )
    return "removed"


async def reconcile(
    backend: MemoryBackend,
    decision_log: DecisionLog,
    *,
    older_than_s: float = 0.0,
    tenant: str | None = None,
    complete: bool = True,
) -> ReconcileReport:
    """Resolve every intent pending for at least ``older_than_s`` (0 at start-up of the only
    process on a database; longer than the slowest write where replicas share it).
    ``complete=False`` removes even intents whose facts are all stored."""
    outbox = outbox_for(decision_log)
    report = ReconcileReport()
    pending = await anyio.to_thread.run_sync(
        functools.partial(outbox.pending, older_than_s=older_than_s, tenant=tenant)
    )
    for intent in pending:
        claimed = await anyio.to_thread.run_sync(
            functools.partial(outbox.claim, intent.id, older_than_s=older_than_s)
        )
        if not claimed:
            continue  # another process resolves it
        outcome = await resolve(backend, decision_log, intent, complete=complete)
        if outcome == "completed":
            report.completed.append(intent.id)
        elif outcome == "removed":
            report.removed.append(intent.id)
        else:
            report.left.append(intent.id)
            report.undo_failed.extend(outcome.removeprefix("left:").split(","))
    report.released_keys = await anyio.to_thread.run_sync(
        functools.partial(outbox.release_dead_claims, older_than_s=older_than_s, tenant=tenant)
    )
    if pending:
        log.warning(
            "reconciled %d pending write(s): %d completed, %d removed, %d left",
            len(pending), len(report.completed), len(report.removed), len(report.left),
        )  # fmt: skip
    return report


__all__ = ["ReconcileReport", "intent_items", "reconcile", "resolve"]
