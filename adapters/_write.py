"""One guarded write as a transaction: store each approved fact, record the decisions, or undo.

A store has no transactions across items, so :class:`GuardedWrite` keeps two logs:

- a **write intent** committed in the decision-log database before the first store write
  (:mod:`._outbox`); every stored fact carries its write key. The decision rows, the idempotency
  answer and the intent's deletion are one transaction after the store writes, so a crash at any
  point leaves either a finished write or a pending intent that start-up reconciliation
  (:mod:`._reconcile`) completes or removes — never a fact without a decision row;
- an **undo log** in memory, the id of every item it created. Leaving the ``async with`` block
  with an error (the store failed mid-write, the upstream wrote the wrong number of items, the
  decision log is down, the caller was cancelled) deletes each of them again, shielded from
  cancellation, then drops the intent. An item that cannot be deleted is logged with its id and
  its intent stays pending, so reconciliation or ``mirage doctor --repair`` removes it later.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
import weakref
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.to_thread

from mirage_guard.adapters._backend import TENANT_KEY, WRITE_KEY, MemoryBackend
from mirage_guard.adapters._decision_log import (
    DecisionLog,
    ScopeLock,
    WrittenDecision,
    hold_scope,
    let_go,
    log_write_failed,
)
from mirage_guard.adapters._edit import item_scope
from mirage_guard.adapters._outbox import WriteIntent, current_call, outbox_for
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._reconcile import resolve
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard import Decision, Provenance, Turn
from mirage_guard.guard.errors import BackendError, InputError

log = logging.getLogger("mirage.memory")

_CLOSING = ".!"
# one lock per store, tenant and scope in this process: a write looks for repeats and stores its
# facts under it, so the same fact sent twice at once is stored once; replicas sharing a
# PostgreSQL decision log also take the scope's advisory lock (``hold_scope``)
_SCOPE_LOCKS: weakref.WeakValueDictionary[tuple[int, str, str], anyio.Lock] = (
    weakref.WeakValueDictionary()
)
_SCOPE_LOCKS_GUARD = threading.Lock()
# how long a write waits for another replica's write to the same scope (its store writes and
# decision rows, never a model call) before it answers 503
SCOPE_WAIT_S = 30.0


def _scope_lock(backend: MemoryBackend, tenant: str, scope: MemoryScope) -> anyio.Lock:
    key = (id(backend), tenant, scope.key())
    with _SCOPE_LOCKS_GUARD:
        lock = _SCOPE_LOCKS.get(key)
        if lock is None:
            lock = _SCOPE_LOCKS[key] = anyio.Lock()
        return lock


def fact_key(text: str) -> str:
    """A fact's text for spotting a repeat: case, runs of spaces and a closing full stop or
    exclamation mark do not make another fact."""
    return " ".join(text.split()).rstrip(_CLOSING).rstrip().casefold()


class GuardedWrite:
    """Writes one call's decisions for ``tenant`` in ``scope``; undoes them if the block fails.

    >>> async with GuardedWrite(backend, decision_log, tenant="t", scope=scope) as write:
    ...     await write.begin(turns, decisions, writer_model=None)
    ...     written = [await write.store(d) for d in decisions]
    ...     await write.record(turns, written, writer_model=None, reply=add_result(...))
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
        self.intent: WriteIntent | None = None  # committed before the first store write
        self._index = 0  # of the next decision passed to store()
        self._existing: dict[int, str] = {}  # decision index -> the memory already holding it
        self._repeats: dict[int, int] = {}  # decision index -> the earlier one it repeats
        self._written: dict[int, str] = {}  # decision index -> the memory written for it
        self._held: anyio.Lock | None = None  # the scope's lock, from begin() to the block's end
        self._shared: ScopeLock | None = None  # its lock across replicas (PostgreSQL), the same

    async def __aenter__(self) -> Self:
        self._start = time.perf_counter()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            await self._exit(exc)
        finally:
            shared, self._shared = self._shared, None
            await let_go(shared)
            if self._held is not None:
                self._held.release()
                self._held = None

    async def _exit(self, exc: BaseException | None) -> None:
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

    async def already_stored(
        self, decisions: Sequence[Decision]
    ) -> tuple[dict[int, str], dict[int, int]]:
        """The repeats among ``decisions``, for which nothing is written: decision index -> id
        of a memory of this tenant and exactly this scope that holds the same fact (the same
        text, but for case, spacing and a closing full stop: :func:`fact_key`) with the same
        status; and decision index -> the earlier decision of this write with the same fact and
        status. Mem0 skips such a repeat; a conversation sent again would otherwise store its
        facts twice. The decision log (indexed SQL) names the memories finished writes stored
        with such a text (matched there by SQL ``lower()`` on the logged text, so its spacing
        must be the normal one); each is read back from the store, which must still hold it in
        this scope, with that text and status. Without a decision log nothing is a repeat."""
        found: dict[int, str] = {}
        repeats: dict[int, int] = {}
        first: dict[tuple[str, str], int] = {}  # (fact key, status) -> first index in this write
        for i, d in enumerate(decisions):
            if d.status is None:
                continue
            earlier = first.setdefault((fact_key(d.candidate.text), d.status.value), i)
            if earlier != i:
                repeats[i] = earlier
        if not first or self.decision_log is None:
            return found, repeats
        lowered = [v for key, _ in first for v in (key, *(key + c for c in _CLOSING))]
        rows = await anyio.to_thread.run_sync(
            self.decision_log.stored_facts, self.tenant, self.scope, lowered
        )
        for text, status, memory_id in rows:  # newest first
            index = first.get((fact_key(text), status))
            if index is None or index in found:
                continue
            item = await self.backend.get(memory_id)
            if item is not None and self._holds(item, fact_key(text), status):
                found[index] = memory_id
        for i, j in list(repeats.items()):
            if j in found:  # the first one is stored already: so is this one
                found[i] = found[j]
                del repeats[i]
        return found, repeats

    def _holds(self, item: Mapping[str, Any], key: str, status: str) -> bool:
        """The stored item is this tenant's, in exactly this scope, with this fact and status
        (not deleted, moved or edited since its decision was logged)."""
        meta = item.get("metadata") or {}
        return (
            meta.get(TENANT_KEY) == self.tenant
            and meta.get("status") == status
            and item_scope(item) == self.scope  # a session's copy is not the user's fact
            and fact_key(str(item.get("memory", ""))) == key
        )

    async def begin(
        self, turns: Sequence[Turn], decisions: Sequence[Decision], writer_model: str | None
    ) -> None:
        """Find the facts the scope already holds (:meth:`already_stored`: nothing is written
        for them), then commit the write intent (before any store write; nothing to do if
        nothing is stored). An intent its idempotency key left behind (its writer died; this
        request now holds the key) is removed first, so the re-run cannot store a fact twice,
        nor take the dead attempt's facts for ones stored before."""
        self._index = 0
        self._existing, self._repeats, self._written = {}, {}, {}
        if all(d.status is None for d in decisions):
            return
        if self._held is None:
            self._held = _scope_lock(self.backend, self.tenant, self.scope)
            await self._held.acquire()
        if self._shared is None and self.decision_log is not None:
            self._shared = await hold_scope(
                self.decision_log, self.tenant, self.scope.key(), wait_s=SCOPE_WAIT_S
            )
        call = current_call()
        if self.decision_log is not None and call is not None:
            stale = await anyio.to_thread.run_sync(
                outbox_for(self.decision_log).for_key, self.tenant, call.key
            )
            if stale is not None:
                await _remove_stale(self.backend, self.decision_log, stale)
        self._existing, self._repeats = await self.already_stored(decisions)
        if self.decision_log is None or all(
            d.status is None or i in self._existing or i in self._repeats
            for i, d in enumerate(decisions)
        ):
            return
        intent = WriteIntent.plan(
            tenant=self.tenant,
            scope=self.scope,
            turns=turns,
            decisions=decisions,
            writer_model=writer_model,
            call=call,
            existing=self._existing,
            repeats=self._repeats,
        )
        try:
            await anyio.to_thread.run_sync(outbox_for(self.decision_log).begin, intent)
        except Exception as exc:  # database down or full: nothing was written yet
            raise log_write_failed(exc) from exc
        self.intent = intent

    async def store(self, decision: Decision) -> WrittenDecision:
        """Write one decision's fact, if its action stores anything, with its own metadata
        (and its write key, when an intent was begun). Called once per decision, in order."""
        index, self._index = self._index, self._index + 1
        if decision.status is None:
            return WrittenDecision(decision=decision)
        held = self._existing.get(index)
        if index in self._repeats:  # an earlier decision of this write stored it
            held = self._written.get(self._repeats[index])
        if held is not None:
            return WrittenDecision(decision=decision, memory_id=held, already_stored=True)
        role = "user" if decision.provenance is Provenance.STATED else "assistant"
        meta = {
            **self.caller_metadata,
            **decision.memory_metadata(),
            TENANT_KEY: self.tenant,
        }
        if self.intent is not None:
            meta[WRITE_KEY] = self.intent.write_key(index)
        items = await self.backend.add(
            [{"role": role, "content": decision.candidate.text}], scope=self.scope, metadata=meta
        )
        self.created.extend(str(i["id"]) for i in items if i.get("id"))
        if len(items) != 1 or not items[0].get("id"):
            # e.g. an upstream that ignored infer=false and ran its own extraction
            raise BackendError(f"the store wrote {len(items)} items for one fact")
        self._statuses.append(decision.status.value)
        self._written[index] = self.created[-1]
        return WrittenDecision(decision=decision, memory_id=self.created[-1])

    async def record(
        self,
        turns: Sequence[Turn],
        written: Sequence[WrittenDecision],
        writer_model: str | None,
        reply: dict[str, Any] | None = None,
    ) -> None:
        """One decision-log record for the whole call: turns, every decision, memory ids.
        With an intent it is the done transaction: the idempotency key of the request (if
        any) is answered with ``reply`` and the intent deleted, in the same commit."""
        if self.decision_log is None:
            return
        decision_log = self.decision_log
        intent, call = self.intent, current_call()
        try:
            if intent is not None:
                box = outbox_for(decision_log)
                await anyio.to_thread.run_sync(
                    lambda: box.complete(intent, written, reply or {}, call)
                )
                return
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
            raise log_write_failed(exc) from exc

    async def undo(self) -> None:
        """Delete every item this write created; log the ids of those that cannot be deleted."""
        created, self.created = self.created, []
        left: list[str] = []
        for memory_id in created:
            try:
                await self.backend.delete(memory_id)
            except Exception:  # keep undoing the rest; report what is left below
                left.append(memory_id)
        intent, self.intent = self.intent, None
        if left:
            log.error(
                "guarded write failed: undid %d write(s); %d could not be undone (its intent "
                "stays pending: `mirage doctor --repair` removes them): tenant=%s intent=%s "
                "ids=%s",
                len(created) - len(left), len(left), self.tenant,
                intent.id if intent else "-", ",".join(left),
            )  # fmt: skip
            if intent is not None and self.decision_log is not None:
                await _leave(self.decision_log, intent, f"undo failed: {','.join(left)}")
            return
        if created:
            log.warning("guarded write failed: undid %d write(s)", len(created))
        if intent is not None and self.decision_log is not None:
            box = outbox_for(self.decision_log)
            try:
                await anyio.to_thread.run_sync(lambda: box.drop(intent.id, release_key=False))
            except Exception:  # the database is down: reconciliation finds nothing to remove
                log.warning("guarded write failed: intent %s stays pending", intent.id)


async def _leave(decision_log: DecisionLog, intent: WriteIntent, note: str) -> None:
    try:
        await anyio.to_thread.run_sync(outbox_for(decision_log).leave, intent.id, note)
    except Exception:  # the database is down: the intent is still pending anyway
        log.warning("guarded write failed: intent %s stays pending", intent.id)


async def _remove_stale(
    backend: MemoryBackend, decision_log: DecisionLog, intent: WriteIntent
) -> None:
    """Remove what a dead request with the same idempotency key wrote (claimed first); the
    key itself stays with the request that now holds it."""
    box = outbox_for(decision_log)
    if await anyio.to_thread.run_sync(lambda: box.claim(intent.id, older_than_s=0.0)):
        outcome = await resolve(backend, decision_log, intent, complete=False, release_key=False)
        if outcome != "removed":
            raise BackendError("an earlier attempt of this request could not be removed")


__all__ = ["GuardedWrite"]
