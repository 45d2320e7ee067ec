"""One guarded write as a transaction: store each approved fact, record the decisions, or undo.

A store has no transactions across items, so :class:`GuardedWrite` keeps its own undo log: the
id of every item it created. Leaving the ``async with`` block with an error (the store failed
mid-write, the upstream wrote the wrong number of items, the decision log is down, the caller
was cancelled) deletes each of them again, shielded from cancellation. An item that cannot be
deleted is logged with its id, so an operator can remove it; nothing else is left behind.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.to_thread

from mirage_guard.adapters._backend import TENANT_KEY, MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog, WrittenDecision
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard import Decision, Provenance, Turn
from mirage_guard.guard.errors import BackendError, InputError

log = logging.getLogger("mirage.memory")


class GuardedWrite:
    """Writes one call's decisions for ``tenant`` in ``scope``; undoes them if the block fails.

    >>> async with GuardedWrite(backend, decision_log, tenant="t", scope=scope) as write:
    ...     written = [await write.store(d) for d in decisions]
    ...     await write.record(turns, written, writer_model=None)
    """

    def __init__(
        self,
        backend: MemoryBackend,
        decision_log: DecisionLog | None,
        *,
        tenant: str,
        scope: MemoryScope,
        caller_metadata: Mapping[str, Any] | None = None,
        metrics: GuardMetrics | None = None,
    ) -> None:
        self.backend = backend
        self.decision_log = decision_log
        self.tenant = tenant
        self.scope = scope
        self.caller_metadata = dict(caller_metadata or {})
        self.metrics = metrics
        self.created: list[str] = []  # the undo log: ids of items this write created
        self._statuses: list[str] = []  # of the items written, counted once the write holds
        self._start = 0.0

    async def __aenter__(self) -> Self:
        self._start = time.perf_counter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            if self.metrics:
                self.metrics.on_stage("write", time.perf_counter() - self._start)
                for status in self._statuses:
                    self.metrics.memory_writes.labels(status=status).inc()
            return
        with anyio.CancelScope(shield=True):
            await self.undo()
        if self.metrics and isinstance(exc, Exception):
            self.metrics.on_error("write", exc)

    async def check_store(self) -> None:
        """Fail before the first write if the store is down (nothing to undo then)."""
        await self.backend.ping()

    async def store(self, decision: Decision) -> WrittenDecision:
        """Write one decision's fact, if its action stores anything, with its own metadata."""
        if decision.status is None:
            return WrittenDecision(decision=decision)
        role = "user" if decision.provenance is Provenance.STATED else "assistant"
        meta = {**self.caller_metadata, **decision.memory_metadata(), TENANT_KEY: self.tenant}
        items = await self.backend.add(
            [{"role": role, "content": decision.candidate.text}], scope=self.scope, metadata=meta
        )
        self.created.extend(str(i["id"]) for i in items if i.get("id"))
        if len(items) != 1 or not items[0].get("id"):
            # e.g. an upstream that ignored infer=false and ran its own extraction
            raise BackendError(f"the store wrote {len(items)} items for one fact")
        self._statuses.append(decision.status.value)
        return WrittenDecision(decision=decision, memory_id=self.created[-1])

    async def record(
        self, turns: Sequence[Turn], written: Sequence[WrittenDecision], writer_model: str | None
    ) -> None:
        """One decision-log record for the whole call: turns, every decision, memory ids."""
        if self.decision_log is None:
            return
        decision_log = self.decision_log
        try:
            await anyio.to_thread.run_sync(
                lambda: decision_log.record(
                    tenant=self.tenant,
                    scope=self.scope,
                    turns=turns,
                    written=written,
                    request_id=uuid.uuid4().hex,
                    writer_model=writer_model,
                )
            )
        except InputError:
            raise
        except Exception as exc:  # database down or full: nothing may stay unexplained
            raise BackendError(f"decision log write failed: {type(exc).__name__}") from exc

    async def undo(self) -> None:
        """Delete every item this write created; log the ids of those that cannot be deleted."""
        created, self.created = self.created, []
        left: list[str] = []
        for memory_id in created:
            try:
                await self.backend.delete(memory_id)
            except Exception:  # keep undoing the rest; report what is left below
                left.append(memory_id)
        if left:
            log.error(
                "guarded write failed: undid %d write(s); %d could not be undone, delete them "
                "by hand: tenant=%s ids=%s",
                len(created) - len(left), len(left), self.tenant, ",".join(left),
            )  # fmt: skip
        elif created:
            log.warning("guarded write failed: undid %d write(s)", len(created))


__all__ = ["GuardedWrite"]
