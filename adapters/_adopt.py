"""Memories Mem0 stored before the guard, taken into a tenant (``mirage adopt``).

An app that switches from ``mem0.Memory`` to the drop-in keeps its store. The memories already
in it carry no tenant and no status, so every guarded read, which narrows to the tenant and the
statuses asked for, leaves them out, and ``delete_all`` (which deletes what the tenant's reads
list) leaves them in the store. Adopting one writes the tenant and a status next to it and logs
a decision for it, as a guarded write would.

No adopted memory becomes a stated fact: no conversation is left to check it against (Mem0's
writer models over-infer 35-49 % of what they store), and the guard fails closed. It becomes a
**hypothesis** (``--as hypothesis``, read with ``include_hypotheses``) or is **quarantined**;
its provenance is ``generated`` (no evidence) and its decision's reason says it was adopted.
The decision row is written before the store's item is tagged, so a crash between the two
leaves an untagged memory (adopted again by the next run) and a row ``mirage doctor`` reports
as gone, never a tagged memory without a row, which ``doctor --repair`` would delete as an
orphan.
"""

from __future__ import annotations

import functools
import uuid
from collections import defaultdict
from typing import Literal

import anyio
import anyio.to_thread
from pydantic import BaseModel

from mirage_guard.adapters._backend import TENANT_KEY, Item, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog, WrittenDecision, hold_scope, let_go
from mirage_guard.adapters._edit import item_scope
from mirage_guard.adapters._filters import field_value
from mirage_guard.guard import Action, Candidate, Decision, Provenance, ReasonCode, reason
from mirage_guard.guard.errors import ConfigError, MemoryNotFoundError

AdoptAs = Literal["hypothesis", "quarantined"]
ADOPT_LOCK = "adopt"  # the advisory-lock name of an adoption (no scope key is this)
ADOPT_WAIT_S = 60.0
_ADOPTING: defaultdict[int, anyio.Lock] = defaultdict(anyio.Lock)
# what an adopted memory may become; its provenance is "generated" either way (no evidence: a
# writer model's output, checked against nothing)
_ACTION: dict[str, Action] = {
    "hypothesis": Action.STORE_AS_HYPOTHESIS,
    "quarantined": Action.QUARANTINE,
}


class AdoptReport(BaseModel):
    """What an adoption found and did (ids only, never memory text)."""

    tenant: str
    status: AdoptAs
    found: int = 0  # store items without a tenant
    adopted: list[str] = []
    skipped: list[str] = []  # without a user / agent / run id or text: left as they are
    dry_run: bool = False


def adopted_decision(text: str, status: AdoptAs) -> Decision:
    """The decision logged for an adopted memory: never stated, its reason saying why."""
    return Decision(
        candidate=Candidate(text=text),
        provenance=Provenance.GENERATED,
        action=_ACTION[status],
        source_turn_id=None,
        similarity=0.0,
        evidence_span=None,
        score=None,
        threshold=None,
        profile_id=None,
        calibrated=False,
        reasons=[reason(ReasonCode.ADOPTED, status=status)],
    )


async def adopt(
    backend: MemoryBackend,
    decision_log: DecisionLog | None,
    *,
    tenant: str,
    status: AdoptAs = "hypothesis",
    dry_run: bool = False,
    limit: int = 1_000_000,
) -> AdoptReport:
    """Take every store item without a tenant into ``tenant`` as ``status``. Items already
    carrying a tenant are never touched; running it again adopts only what is still untagged."""
    if status not in _ACTION:
        raise ConfigError(f"adopt as 'hypothesis' or 'quarantined', not {status!r}")
    if decision_log is None:
        raise ConfigError("adopting needs a decision log (it records who owns each memory)")
    if dry_run:
        return await _adopt(backend, decision_log, tenant, status, dry_run=True, limit=limit)
    # one adoption at a time per store, in this process and (PostgreSQL) across replicas: two at
    # once gave one memory to two tenants (each wrote its row, the last tag won)
    async with _ADOPTING[id(backend)]:
        held = await hold_scope(decision_log, "", ADOPT_LOCK, wait_s=ADOPT_WAIT_S)
        try:
            return await _adopt(backend, decision_log, tenant, status, dry_run=False, limit=limit)
        finally:
            await let_go(held)


async def _adopt(
    backend: MemoryBackend,
    decision_log: DecisionLog,
    tenant: str,
    status: AdoptAs,
    *,
    dry_run: bool,
    limit: int,
) -> AdoptReport:
    items: list[Item] = await backend.scan(filters={}, limit=limit)
    report = AdoptReport(tenant=tenant, status=status, dry_run=dry_run)
    for item in items:
        if field_value(item, TENANT_KEY) is not None:
            continue
        report.found += 1
        memory_id, text = str(item.get("id") or ""), item.get("memory")
        scope = item_scope(item)
        if not memory_id or not isinstance(text, str) or not text.strip() or scope.is_empty():
            report.skipped.append(memory_id)
            continue
        if dry_run:
            report.adopted.append(memory_id)
            continue
        current = await backend.get(memory_id)  # as it is now, not as the scan saw it
        if current is None or field_value(current, TENANT_KEY) is not None:
            report.skipped.append(memory_id)
            continue
        decision = adopted_decision(text, status)
        written = WrittenDecision(decision=decision, memory_id=memory_id)
        record = functools.partial(
            decision_log.record,
            tenant=tenant,
            scope=scope,
            turns=[],
            written=[written],
            request_id=f"adopt-{uuid.uuid4().hex}",
            writer_model=None,
        )
        await anyio.to_thread.run_sync(record)
        try:
            await backend.update(
                memory_id, text=None, metadata={TENANT_KEY: tenant, **decision.memory_metadata()}
            )
        except MemoryNotFoundError:  # deleted meanwhile: its row says it was adopted, then gone
            report.skipped.append(memory_id)
            continue
        report.adopted.append(memory_id)
    return report


__all__ = ["AdoptAs", "AdoptReport", "adopt", "adopted_decision"]
