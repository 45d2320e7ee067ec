"""``GuardedMemory``: the synchronous drop-in for ``mem0.Memory``, a thin twin of the async one.

Every method runs :class:`~._async_memory.AsyncGuardedMemory`'s method of the same name on an
:class:`~._loop.EventLoopThread` and waits for it; no logic lives here. How they are built is
shared (:class:`~._compose.BaseGuardedMemory`), and a test holds every public method's signature
to its async twin's (tests/adapters/test_sync_async_twins.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from typing import Any, Self

from mirage_guard.adapters._adopt import AdoptAs, AdoptReport
from mirage_guard.adapters._async_memory import AsyncGuardedMemory
from mirage_guard.adapters._backend import Item
from mirage_guard.adapters._compose import BaseGuardedMemory, Components
from mirage_guard.adapters._loop import EventLoopThread
from mirage_guard.adapters._mem0_wire import UNSET
from mirage_guard.adapters._reconcile import ReconcileReport
from mirage_guard.guard import AuditVerdict, Candidate


class GuardedMemory(BaseGuardedMemory):
    """Synchronous drop-in for ``mem0.Memory`` (same methods and signatures)."""

    def __init__(self, memory: AsyncGuardedMemory) -> None:
        self._async = memory
        self._runner = EventLoopThread()
        self._owns_runner = True

    @classmethod
    def _from_components(cls, parts: Components, resources: AsyncExitStack) -> Self:
        return cls(AsyncGuardedMemory._from_components(parts, resources))

    @property
    def inner(self) -> AsyncGuardedMemory:
        """The async twin this facade drives."""
        return self._async

    def for_tenant(self, tenant: str, *, isolated: bool = True) -> Self:
        """The same components, scoped to one tenant (owns nothing: close the parent)."""
        child = type(self).__new__(type(self))
        child._async = self._async.for_tenant(tenant, isolated=isolated)
        child._runner = self._runner
        child._owns_runner = False
        return child

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        timestamp: Any = None,
        expiration_date: Any = None,
        infer: bool = True,
        memory_type: str | None = None,
        prompt: str | None = None,
        user_name: str | None = None,
    ) -> dict[str, Any]:
        """Guarded ``Memory.add`` (see :meth:`AsyncGuardedMemory.add`)."""
        return self._runner.run(
            self._async.add(
                messages,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                metadata=metadata,
                timestamp=timestamp,
                expiration_date=expiration_date,
                infer=infer,
                memory_type=memory_type,
                prompt=prompt,
                user_name=user_name,
            )
        )

    def remember(
        self,
        messages: Any,
        candidates: Sequence[str | Candidate],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        writer_model: str | None = None,
        audit: Sequence[AuditVerdict] | None = None,
        user_name: str | None = None,
    ) -> dict[str, Any]:
        """Guarded write of caller-given candidates (see :meth:`AsyncGuardedMemory.remember`)."""
        return self._runner.run(
            self._async.remember(
                messages,
                candidates,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                metadata=metadata,
                writer_model=writer_model,
                audit=audit,
                user_name=user_name,
            )
        )

    def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: dict[str, Any] | None = None,
        threshold: float | None = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        include_hypotheses: bool = False,
        include_quarantined: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """``Memory.search``: facts only unless hypotheses / quarantined items are asked for."""
        return self._runner.run(
            self._async.search(
                query,
                top_k=top_k,
                filters=filters,
                threshold=threshold,
                rerank=rerank,
                explain=explain,
                reference_date=reference_date,
                show_expired=show_expired,
                include_hypotheses=include_hypotheses,
                include_quarantined=include_quarantined,
                **kwargs,
            )
        )

    def get_all(
        self,
        *,
        filters: dict[str, Any] | None = None,
        top_k: int = 20,
        show_expired: bool = False,
        include_hypotheses: bool = False,
        include_quarantined: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """``Memory.get_all``: facts only unless hypotheses / quarantined items are asked for."""
        return self._runner.run(
            self._async.get_all(
                filters=filters,
                top_k=top_k,
                show_expired=show_expired,
                include_hypotheses=include_hypotheses,
                include_quarantined=include_quarantined,
                **kwargs,
            )
        )

    def get(self, memory_id: str) -> Item | None:
        """``Memory.get``: the item whatever its status (its ``status`` field says which)."""
        return self._runner.run(self._async.get(memory_id))

    def history(self, memory_id: str) -> list[Item]:
        """``Memory.history``: ADD / UPDATE / DELETE events, also of a deleted memory."""
        return self._runner.run(self._async.history(memory_id))

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = UNSET,
        data: str | None = None,
    ) -> dict[str, Any]:
        """``Memory.update``: new text is tagged against the memory's conversation like a
        write; provenance, status and tenant cannot be set by the caller."""
        return self._runner.run(
            self._async.update(
                memory_id, text=text, metadata=metadata, expiration_date=expiration_date, data=data
            )
        )

    def delete(self, memory_id: str) -> dict[str, str]:
        """``Memory.delete`` of one of this tenant's memories."""
        return self._runner.run(self._async.delete(memory_id))

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Delete every memory of a scope that belongs to this tenant (any status)."""
        return self._runner.run(
            self._async.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id)
        )

    def entities(self) -> list[dict[str, Any]]:
        """The users, agents and runs this tenant has memories of, any status, with how many
        each (what ``MemoryClient.users()`` lists; not ``mem0.Memory``'s)."""
        return self._runner.run(self._async.entities())

    def reset(self) -> None:
        """Wipe the store; a tenant-isolated memory deletes everything the store holds for its
        tenant (listed from the store, not from the decision log)."""
        self._runner.run(self._async.reset())

    def adopt(self, *, status: AdoptAs = "hypothesis", dry_run: bool = False) -> AdoptReport:
        """Take the memories Mem0 stored before the guard into this memory's tenant (never as
        stated facts)."""
        return self._runner.run(self._async.adopt(status=status, dry_run=dry_run))

    def reconcile(self, *, older_than_s: float = 0.0) -> ReconcileReport:
        """Resolve the write intents a crash left pending (complete or remove each one)."""
        return self._runner.run(self._async.reconcile(older_than_s=older_than_s))

    def close(self) -> None:
        """Close what :meth:`from_settings` / :meth:`from_config` built, then the loop thread
        (a :meth:`for_tenant` view closes nothing). Idempotent."""
        if not self._owns_runner or self._runner.closed:
            return
        try:
            self._runner.run(self._async.aclose())
        finally:
            self._runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["GuardedMemory"]
