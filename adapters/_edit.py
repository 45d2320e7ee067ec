"""An edit of a memory's text never bypasses the guard.

``update(memory_id, text=...)`` (``PUT /memories/{id}``, ``PUT /v1/memories/{id}/``) tags the
new text like a write: against the memory's conversation, i.e. the turns the decision log kept
for its user / agent / run. The memory then carries the new decision's provenance, status,
source turn, score and profile, plus ``edited_at`` / ``edited_by``, and the decision is logged
with an ``edited`` reason. An edit nothing in the conversation supports is no longer a fact
(generated: quarantined, or refused when the policy blocks generated facts); an edit without a
decision log, or of a memory whose turns are unknown, has no evidence and fails closed the same
way. If the decision cannot be logged, the memory's old text and metadata are put back.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.to_thread

from mirage_guard.adapters._backend import (
    PROVENANCE_KEYS,
    SCOPE_KEYS,
    TENANT_KEY,
    Item,
    MemoryBackend,
)
from mirage_guard.adapters._decision_log import DecisionLog, WrittenDecision, log_write_failed
from mirage_guard.adapters._mem0_wire import decision_summary
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard import Candidate, Decision, Guard, MemoryStatus, ReasonCode, reason

log = logging.getLogger("mirage.memory")


def item_scope(item: Mapping[str, Any]) -> MemoryScope:
    """The conversation a stored memory belongs to (its user / agent / run ids)."""
    meta = item.get("metadata") or {}
    ids = {k: item.get(k) or meta.get(k) for k in SCOPE_KEYS}
    return MemoryScope(**{k: str(v) for k, v in ids.items() if v})


async def guarded_edit(
    *,
    item: Item,
    text: str,
    caller_metadata: Mapping[str, Any] | None,
    backend: MemoryBackend,
    guard: Guard,
    decision_log: DecisionLog | None,
    tenant: str,
) -> dict[str, Any]:
    """Re-tag ``text`` against the memory's conversation, store it with that decision, log it.

    Returns Mem0's update answer plus the ``decision``; a blocked edit leaves the memory as it
    was and says so."""
    memory_id = str(item["id"])
    scope = item_scope(item)
    turns = (
        await anyio.to_thread.run_sync(decision_log.turns, tenant, scope)
        if decision_log is not None and not scope.is_empty()
        else []
    )
    (tagged,) = await guard.atag(turns, [Candidate(text=text)])
    # a tenant's own text: its audit label, if any, is no writer's label of its own claim
    decision = tagged.model_copy(
        update={"reasons": [*tagged.reasons, reason(ReasonCode.EDITED, memory_id=memory_id,
                                                     by=tenant)],
                "audit_source": None}
    )  # fmt: skip
    if decision.status is None:  # the policy blocks it: the memory stays as it was
        await _record(decision_log, tenant, scope, decision, None)
        return {
            "message": "Memory not updated: the guard blocked the new text",
            "decision": decision_summary(WrittenDecision(decision=decision)),
        }
    old_meta = dict(item.get("metadata") or {})
    meta = {
        **dict(caller_metadata or {}),
        **decision.memory_metadata(),
        TENANT_KEY: tenant,
        "edited_at": datetime.now(UTC).isoformat(),
        "edited_by": tenant,
    }
    await backend.update(memory_id, text=text, metadata=meta)
    try:
        await _record(decision_log, tenant, scope, decision, memory_id)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await _restore(backend, item, old_meta)
        raise
    written = WrittenDecision(decision=decision, memory_id=memory_id)
    return {"message": _updated(decision.status), "decision": decision_summary(written)}


def _updated(status: MemoryStatus | None) -> str:
    """The answer's message: Mem0's when the new text is a fact; else what became of it (the
    memory drops out of default reads, and "updated successfully" hid that)."""
    if status is MemoryStatus.FACT:
        return "Memory updated successfully!"
    read_with = "include_hypotheses" if status is MemoryStatus.HYPOTHESIS else "include_quarantined"
    return (
        f"Memory updated, but the conversation does not say the new text: it is now {status} "
        f"and left out of reads without {read_with}=True"
    )


async def _record(
    decision_log: DecisionLog | None,
    tenant: str,
    scope: MemoryScope,
    decision: Decision,
    memory_id: str | None,
) -> None:
    if decision_log is None:
        return
    try:
        await anyio.to_thread.run_sync(
            lambda: decision_log.record(
                tenant=tenant,
                scope=scope,
                turns=[],
                written=[WrittenDecision(decision=decision, memory_id=memory_id)],
                request_id=uuid.uuid4().hex,
                writer_model=None,
            )
        )
    except Exception as exc:  # nothing may stay unexplained
        raise log_write_failed(exc) from exc


async def _restore(backend: MemoryBackend, item: Item, old_meta: dict[str, Any]) -> None:
    memory_id = str(item["id"])
    restored = {k: old_meta.get(k) for k in (*PROVENANCE_KEYS, "edited_at", "edited_by")}
    try:
        await backend.update(memory_id, text=str(item["memory"]), metadata=restored)
    except Exception:
        log.error("guarded edit failed and could not be undone: tenant=%s id=%s", tenant_of(item),
                  memory_id)  # fmt: skip


def tenant_of(item: Mapping[str, Any]) -> str | None:
    meta = item.get("metadata") or {}
    value = meta.get(TENANT_KEY)
    return str(value) if value is not None else None


__all__ = ["guarded_edit", "item_scope"]
