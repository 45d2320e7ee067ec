"""``AsyncGuardedMemory``: a drop-in for ``mem0.AsyncMemory`` / ``mem0.Memory``, guard inside.

``add(..., infer=True)`` extracts candidates with the writer model (one call), lets the guard tag
each one stated / inferred / generated, and writes every approved fact on its own
(``infer=False``) with per-fact metadata: ``provenance``, ``source_turn_id``, ``guard_score``,
``profile_id``, ``status``. ``add(..., infer=False)`` stores each user message verbatim as a stated
fact with its own turn id (assistant/tool messages are not the user's words: generated).
``search`` / ``get_all`` return facts unless hypotheses or quarantined items are asked for.

Fail closed: if extraction, the guard, the store or the decision log fails, the add raises a
typed error and nothing it wrote is left behind (:class:`~._write.GuardedWrite`).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, Self, TypeVar, cast

import anyio
import anyio.to_thread
from pydantic import ValidationError

from mirage_guard.adapters._adopt import AdoptAs, AdoptReport, adopt
from mirage_guard.adapters._backend import TENANT_KEY, Item, MemoryBackend
from mirage_guard.adapters._compose import BaseGuardedMemory, Components
from mirage_guard.adapters._decision_log import DATABASE_DOWN, DecisionLog, database_error
from mirage_guard.adapters._edit import guarded_edit
from mirage_guard.adapters._filters import field_value
from mirage_guard.adapters._mem0_wire import (
    UNSET,
    add_result,
    caller_metadata,
    present,
    reject_kwargs,
    statuses_for,
    to_turns,
)
from mirage_guard.adapters._outbox import outbox_for
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._reconcile import ReconcileReport, reconcile
from mirage_guard.adapters._scope import DEFAULT_TENANT, MemoryScope
from mirage_guard.adapters._tenancy import Tenancy, scope_of
from mirage_guard.adapters._write import GuardedWrite
from mirage_guard.guard import (
    Action,
    AuditVerdict,
    Candidate,
    Decision,
    Guard,
    Policy,
    Provenance,
    ReasonCode,
    Role,
    Turn,
    check_turns,
    has_text,
    reason,
    well_formed,
)
from mirage_guard.guard.errors import (
    BackendError,
    ClosedError,
    ConfigError,
    InputError,
    LLMError,
    MemoryNotFoundError,
    MirageError,
    validation_message,
)
from mirage_guard.guard.evidence import cache_namespace
from mirage_guard.guard.extraction import Extractor

log = logging.getLogger("mirage.memory")

_DELETE_BATCH = 200
_ENTITIES_MAX = 100_000  # memories read to list a tenant's users, agents and runs
ENTITY_KINDS = {"user": "user_id", "agent": "agent_id", "run": "run_id"}
P = ParamSpec("P")
R = TypeVar("R")
_Method = TypeVar("_Method", bound=Callable[..., Coroutine[Any, Any, Any]])
NOTHING_TO_WRITE = "nothing was written: no message has any text"
ONLY_SYSTEM = "nothing was written: only system messages have text, and they are no one's facts"


_RECONCILE_RETRY_S = 30.0  # after a failed reconciliation before a read


@dataclass
class _Reconciliation:
    """Whether the write intents of dead writers still need resolving, shared by a memory and
    every memory :meth:`AsyncGuardedMemory.for_tenant` scopes from it: the first write or read
    of any of them does it, once (a scoped memory had never done it, and the parent's own could
    otherwise run while a scoped memory's write was in flight)."""

    needed: bool = False
    grace_s: float = 0.0  # (:func:`~._compose.reconcile_grace_s`)
    lock: anyio.Lock = dataclasses.field(default_factory=anyio.Lock)
    retry_at: float = 0.0  # after a failure before a read: reads try again from then


def tenant_caches(
    method: Callable[Concatenate[AsyncGuardedMemory, P], Coroutine[Any, Any, R]],
) -> Callable[Concatenate[AsyncGuardedMemory, P], Coroutine[Any, Any, R]]:
    """Run a write inside the tenant's cache namespace: the guard's and the store's text caches
    never answer one tenant from another's texts (no timing side channel across tenants)."""

    async def scoped(self: AsyncGuardedMemory, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with cache_namespace(self.tenant):
            return await method(self, *args, **kwargs)

    functools.update_wrapper(scoped, method)  # name, docstring and signature of the method
    return scoped


def while_open(method: _Method) -> _Method:
    """Every public method's wrapper. After :meth:`AsyncGuardedMemory.aclose` (of this memory
    or of the one it was scoped from), a call raises :class:`ClosedError` and does nothing, as
    the sync twin does. A decision-log database that cannot be reached (PostgreSQL restarting,
    failing over, every pooled connection in use) is a retryable
    :class:`DatabaseUnavailableError`, with SQLAlchemy's error as its cause: it reached callers
    as SQLAlchemy's own exception, which no ``except MirageError`` caught."""

    @functools.wraps(method)
    async def checked(self: AsyncGuardedMemory, /, *args: Any, **kwargs: Any) -> Any:
        if self.closed:
            raise ClosedError()
        try:
            return await method(self, *args, **kwargs)
        except DATABASE_DOWN as exc:  # an outage: retryable; a log it cannot use: not
            raise database_error(exc) from exc

    return cast("_Method", checked)


def _candidate(candidate: str | Candidate, i: int) -> Candidate:
    """A caller's candidate; a text that states nothing (empty, invisible characters,
    punctuation alone) is an :class:`InputError` naming it, and nothing is written."""
    if isinstance(candidate, Candidate):
        return candidate
    try:
        return Candidate(text=candidate)
    except ValidationError as exc:
        raise InputError(f"candidates[{i}] {validation_message(exc)}") from exc


def verbatim_decisions(turns: Sequence[Turn], policy: Policy) -> list[Decision]:
    """``add(infer=False)``: each user message is a stated fact citing itself; assistant and tool
    messages are not the user's words (generated); system messages and messages without a letter
    or digit (empty, invisible characters, punctuation: :func:`has_text`) are skipped."""
    decisions: list[Decision] = []
    for t in turns:
        if t.role is Role.SYSTEM or not has_text(t.content):
            continue
        stated = t.role is Role.USER
        provenance = Provenance.STATED if stated else Provenance.GENERATED
        decisions.append(
            Decision(
                candidate=Candidate(text=t.content, claimed_source_turn_id=t.id)
                if stated
                else Candidate(text=t.content),
                provenance=provenance,
                action=Action.STORE if stated else policy.action_for(provenance),
                source_turn_id=t.id if stated else None,
                similarity=1.0 if stated else 0.0,
                evidence_span=t.content if stated else None,
                score=None,
                threshold=None,
                profile_id=None,
                calibrated=False,
                reasons=[reason(ReasonCode.VERBATIM_USER_MESSAGE, turn_id=t.id)]
                if stated
                else [reason(ReasonCode.NOT_USER_WORDS, role=t.role.value)],
            )
        )
    return decisions


class AsyncGuardedMemory(BaseGuardedMemory):
    """Async drop-in for ``mem0.AsyncMemory`` / ``mem0.Memory`` with the guard in the write path.

    Built with :meth:`from_settings` / :meth:`from_config` it owns what they built and closes it
    on :meth:`aclose` (or ``async with``); components passed to the constructor stay open.
    """

    def __init__(
        self,
        *,
        backend: MemoryBackend,
        guard: Guard,
        extractor: Extractor | None = None,
        decision_log: DecisionLog | None = None,
        metrics: GuardMetrics | None = None,
        tenant: str = DEFAULT_TENANT,
        isolated: bool = False,
    ) -> None:
        self.backend = backend
        self.guard = guard
        self.extractor = extractor
        self.decision_log = decision_log
        self.metrics = metrics
        self.tenancy = Tenancy(backend, decision_log, tenant, isolated)
        self._resources = AsyncExitStack()
        self._closed = False
        self._parent: AsyncGuardedMemory | None = None  # the memory for_tenant scoped this from
        self._reconciliation = _Reconciliation()

    @classmethod
    def _from_components(cls, parts: Components, resources: AsyncExitStack) -> Self:
        memory = cls(
            backend=parts.backend,
            guard=parts.guard,
            extractor=parts.extractor,
            decision_log=parts.decision_log,
            metrics=parts.metrics,
        )
        memory._resources = resources
        # before its first write or read (the sidecar: at start-up)
        memory._reconciliation = _Reconciliation(needed=True, grace_s=parts.reconcile_grace_s)
        return memory

    @property
    def _needs_reconcile(self) -> bool:
        return self._reconciliation.needed

    @_needs_reconcile.setter
    def _needs_reconcile(self, needed: bool) -> None:
        self._reconciliation.needed = needed

    @property
    def tenant(self) -> str:
        return self.tenancy.tenant

    @property
    def isolated(self) -> bool:
        return self.tenancy.isolated

    @property
    def closed(self) -> bool:
        return self._closed or (self._parent is not None and self._parent.closed)

    def for_tenant(self, tenant: str, *, isolated: bool = True) -> Self:
        """The same components, scoped to one tenant (owns nothing: close the parent)."""
        scoped = type(self)(
            backend=self.backend,
            guard=self.guard,
            extractor=self.extractor,
            decision_log=self.decision_log,
            metrics=self.metrics,
            tenant=tenant,
            isolated=isolated,
        )
        scoped._parent = self
        scoped._reconciliation = self._reconciliation  # one reconciliation for the family
        return scoped

    # ------------------------------------------------------------------ writes
    @while_open
    @tenant_caches
    async def add(
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
        """Guarded ``Memory.add``; returns ``{"results", "decisions", "turns"}``. ``user_name``
        (not Mem0's): the user's own name, so an extracted fact that names the user does not
        count as asserting a name the user never said."""
        if timestamp is not None or expiration_date is not None:
            raise InputError("timestamp / expiration_date are not supported by guarded memory")
        if memory_type is not None:
            raise InputError("procedural memories are not guarded: use mem0 directly for them")
        if prompt is not None:
            raise InputError(
                "custom extraction prompts are not accepted: the guard's extraction prompt is "
                "versioned and calibrated (see prompts/extract_candidates.md)"
            )
        scope = scope_of(user_id, agent_id, run_id)
        meta = caller_metadata(metadata)
        turns = await self._turns(messages, scope)
        said = {t.role for t in turns if has_text(t.content)}
        if not said - {Role.SYSTEM}:  # nothing to extract or store
            message = ONLY_SYSTEM if said else NOTHING_TO_WRITE
            return {**add_result([], turns), "message": message}
        if infer:
            writer_model, decisions = await self._inferred(turns, user_name)
        else:
            writer_model, decisions = None, self._verbatim(turns)
        return await self._write(decisions, scope, meta, turns, writer_model)

    @while_open
    @tenant_caches
    async def remember(
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
        """Guarded write of caller-given candidates (an agent's save-memory tool): no extraction
        call; the conversation is the evidence. Returns what :meth:`add` returns."""
        scope = scope_of(user_id, agent_id, run_id)
        meta = caller_metadata(metadata)
        turns = await self._turns(messages, scope)
        cands = [_candidate(c, i) for i, c in enumerate(candidates)]
        decisions = await self.guard.atag(
            turns, cands, writer_model=writer_model, audit=audit, user_name=user_name
        )
        return await self._write(decisions, scope, meta, turns, writer_model)

    async def _turns(self, messages: Any, scope: MemoryScope) -> list[Turn]:
        turns = to_turns(messages)
        check_turns(turns, self.guard.limits)  # before the writer model or the encoder
        if self.decision_log is not None:
            await anyio.to_thread.run_sync(self.decision_log.check_turns, self.tenant, scope, turns)
        return turns

    async def _inferred(
        self, turns: Sequence[Turn], user_name: str | None = None
    ) -> tuple[str, list[Decision]]:
        if self.extractor is None:
            raise ConfigError(
                "add(infer=True) needs a writer model: set MIRAGE_WRITER_MODEL or pass "
                "writer_llm=..., or call add(infer=False)"
            )
        start = time.perf_counter()
        try:
            result = await self.extractor.extract(turns)
        except LLMError as exc:
            if self.metrics:
                self.metrics.on_error("extract", exc)
            raise
        finally:
            if self.metrics:
                self.metrics.on_stage("extract", time.perf_counter() - start)
        model = self.extractor.model
        decisions = await self.guard.atag(
            turns,
            result.candidates,
            writer_model=model,
            audit=result.audit,
            user_name=user_name,
            audit_prompt=result.prompt_ref if result.audit is not None else None,
        )
        return model, decisions

    def _verbatim(self, turns: Sequence[Turn]) -> list[Decision]:
        decisions = verbatim_decisions(turns, self.guard.policy)
        if self.metrics:  # counted as the log and the pollution report count them
            self.metrics.on_decisions(decisions, writer_model=None)
        return decisions

    async def _write(
        self,
        decisions: Sequence[Decision],
        scope: MemoryScope,
        meta: dict[str, Any],
        turns: Sequence[Turn],
        writer_model: str | None,
    ) -> dict[str, Any]:
        """Write approved facts one by one, then log; on any failure undo what was written."""
        async with GuardedWrite(
            self.backend,
            self.decision_log,
            tenant=self.tenant,
            scope=scope,
            caller_metadata=meta,
            metrics=self.metrics,
        ) as write:
            if any(d.status is not None for d in decisions):
                await write.check_store()
                await self._reconcile_once()
            await write.begin(turns, decisions, writer_model)
            written = [await write.store(d) for d in decisions]
            result = add_result(written, turns)
            await write.record(turns, written, writer_model, reply=result)
        log.info(
            "guarded write: tenant=%s turns=%d decisions=%d written=%d already stored=%d",
            self.tenant, len(turns), len(decisions),
            sum(1 for w in written if w.memory_id and not w.already_stored),
            sum(1 for w in written if w.already_stored),
        )  # fmt: skip
        return result

    # ------------------------------------------------------------------ reads
    @while_open
    async def search(
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
        reject_kwargs(kwargs, "search")
        if explain or reference_date is not None or show_expired:
            raise InputError("explain / reference_date / show_expired are not supported here")
        if not isinstance(query, str) or not query.strip() or not well_formed(query):
            raise InputError("query must be a non-empty string without a lone surrogate")
        if threshold is None:  # Mem0 takes None for its default (0.1)
            threshold = 0.1
        if not isinstance(threshold, int | float) or not 0.0 <= threshold <= 1.0 or top_k < 1:
            raise InputError("threshold must be in [0, 1] and top_k >= 1")
        statuses = statuses_for(
            include_hypotheses=include_hypotheses, include_quarantined=include_quarantined
        )
        f = self.tenancy.filters(filters, statuses)
        await self._reconcile_before_read()
        items = await self.backend.search(
            query.strip(), filters=f, top_k=top_k, threshold=threshold
        )
        return {"results": [present(i) for i in items if self.tenancy.visible(i, statuses)]}

    @while_open
    async def get_all(
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
        reject_kwargs(kwargs, "get_all")
        if show_expired:
            raise InputError("show_expired is not supported here")
        if top_k < 1:
            raise InputError("top_k must be >= 1")
        statuses = statuses_for(
            include_hypotheses=include_hypotheses, include_quarantined=include_quarantined
        )
        f = self.tenancy.filters(filters, statuses)
        await self._reconcile_before_read()
        items = await self.backend.get_all(filters=f, top_k=top_k)
        return {"results": [present(i) for i in items if self.tenancy.visible(i, statuses)]}

    @while_open
    async def get(self, memory_id: str) -> Item | None:
        """``Memory.get``: the item whatever its status (its ``status`` field says which)."""
        await self._reconcile_before_read()
        item = await self.backend.get(memory_id)
        if item is None or not self.tenancy.mine(item):
            return None
        return present(item)

    @while_open
    async def history(self, memory_id: str) -> list[Item]:
        """``Memory.history``: ADD / UPDATE / DELETE events, also of a deleted memory."""
        await self._reconcile_before_read()
        await self.tenancy.require_owned(memory_id, allow_deleted=True)
        return await self.backend.history(memory_id)

    # ------------------------------------------------------------------ changes
    @while_open
    @tenant_caches
    async def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = UNSET,
        data: str | None = None,
    ) -> dict[str, Any]:
        """``Memory.update``. New text is tagged against the memory's conversation like a write
        (:func:`~._edit.guarded_edit`: its provenance and status follow, the decision is logged,
        the answer carries it); provenance, status and tenant cannot be set by the caller."""
        if expiration_date is not UNSET:
            raise InputError("expiration_date is not supported by guarded memory")
        text = text if text is not None else data
        if text is None and metadata is None:
            raise InputError("at least one of text or metadata must be provided")
        if text is not None and not has_text(text):
            raise InputError("text must not be empty: it has no letter or digit")
        if text is not None and not well_formed(text):
            raise InputError("text holds a lone surrogate (half a character): not storable")
        meta = caller_metadata(metadata) if metadata is not None else None
        item = await self.backend.get(memory_id)
        if item is None or not self.tenancy.mine(item):
            raise MemoryNotFoundError(memory_id)
        if text is None:
            await self.backend.update(memory_id, text=None, metadata=meta)
            return {"message": "Memory updated successfully!"}
        return await guarded_edit(
            item=item,
            text=text,
            caller_metadata=meta,
            backend=self.backend,
            guard=self.guard,
            decision_log=self.decision_log,
            tenant=self.tenant,
        )

    @while_open
    async def delete(self, memory_id: str) -> dict[str, str]:
        """``Memory.delete`` of one of this tenant's memories."""
        await self.tenancy.require_owned(memory_id)
        await self._deleted([memory_id], "delete")  # first: see _deleted
        await self.backend.delete(memory_id)
        return {"message": "Memory deleted successfully!"}

    @while_open
    async def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Delete every memory of a scope that belongs to this tenant (any status): what the
        store holds for it, listed from the store (not from the decision log)."""
        scope = scope_of(user_id, agent_id, run_id)
        filters = {**scope.as_kwargs(), TENANT_KEY: self.tenant}
        seen: set[str] = set()
        while True:
            batch = await self.backend.get_all(filters=filters, top_k=_DELETE_BATCH)
            ids = [str(i["id"]) for i in batch if self.tenancy.mine(i) and str(i["id"]) not in seen]
            if not ids:
                break
            seen.update(ids)
            await self._deleted(ids, "delete_all")  # first: see _deleted
            await self._delete_each(ids)
        return {"message": "Memories deleted successfully!"}

    @while_open
    async def entities(self) -> list[dict[str, Any]]:
        """The users, agents and runs this tenant has memories of, any status, with how many
        each and when the first and last was stored (what ``MemoryClient.users()`` lists; not
        ``mem0.Memory``'s). Read from the store by the tenant key; a store that cannot list
        across scopes is read scope by scope, each scope the decision log knows."""
        await self._reconcile_before_read()
        try:
            items = await self.backend.scan(filters={TENANT_KEY: self.tenant}, limit=_ENTITIES_MAX)
        except ConfigError:
            if self.decision_log is None:
                raise
            box = outbox_for(self.decision_log)
            items = []
            for scope in await anyio.to_thread.run_sync(box.scopes, self.tenant):
                filters = {**scope.as_kwargs(), TENANT_KEY: self.tenant}
                items += await self.backend.get_all(filters=filters, top_k=_ENTITIES_MAX)
        found: dict[tuple[str, str], dict[str, Any]] = {}
        seen: set[str] = set()
        for item in items:
            if not self.tenancy.mine(item) or str(item["id"]) in seen:
                continue
            seen.add(str(item["id"]))
            for kind, key in ENTITY_KINDS.items():
                name = field_value(item, key)
                if not name:
                    continue
                entry = found.setdefault(
                    (kind, str(name)),
                    {"id": f"{kind}:{name}", "name": str(name), "type": kind,
                     "total_memories": 0, "created_at": None, "updated_at": None},
                )  # fmt: skip
                entry["total_memories"] += 1
                for field, pick in (("created_at", min), ("updated_at", max)):
                    at = item.get(field)
                    if at:
                        entry[field] = pick(at, entry[field]) if entry[field] else at
        return [found[k] for k in sorted(found)]

    @while_open
    async def reset(self) -> None:
        """Wipe the store; a tenant-isolated memory deletes everything the store holds for its
        tenant (listed from the store by the tenant key, whatever the scope, so a memory the
        decision log does not know is deleted too), then every id the log knows."""
        # recorded first (see _deleted) and again at the end: a memory written while the reset
        # runs is deleted by it, and is covered only by a mark as late as its deletion
        if not self.isolated:
            await self._deleted(["*"], "reset", tenant="*")
            await self.backend.reset()
            await self._deleted(["*"], "reset", tenant="*")
            return
        await self._deleted(["*"], "reset")
        try:
            while True:
                batch = await self.backend.scan(
                    filters={TENANT_KEY: self.tenant}, limit=_DELETE_BATCH
                )
                ids = [str(i["id"]) for i in batch if self.tenancy.mine(i)]
                if not ids:
                    break
                if await self._delete_each(ids) == len(ids):
                    raise BackendError(f"reset could not delete {len(ids)} memories")
        except ConfigError:  # a store that cannot list across scopes: every scope ever used
            assert self.decision_log is not None  # isolation needs one
            box = outbox_for(self.decision_log)
            for scope in await anyio.to_thread.run_sync(box.scopes, self.tenant):
                await self.delete_all(**scope.as_kwargs())
        for memory_id in await self.tenancy.written_ids():  # and what the log knows of
            item = await self.backend.get(memory_id)
            if item is not None and self.tenancy.mine(item):
                await self._delete_each([memory_id])
        await self._deleted(["*"], "reset")

    async def _delete_each(self, ids: Sequence[str]) -> int:
        """Delete each id; returns how many could not be deleted (logged with their ids)."""
        failed: list[str] = []
        for memory_id in ids:
            try:
                await self.backend.delete(memory_id)
            except MemoryNotFoundError:
                continue
            except Exception:  # keep deleting the rest
                failed.append(memory_id)
        if failed:
            log.error("could not delete: tenant=%s ids=%s", self.tenant, ",".join(failed))
        return len(failed)

    async def _deleted(self, ids: Sequence[str], cause: str, *, tenant: str | None = None) -> None:
        """Record deletions made on purpose (``mirage doctor`` does not report them as lost).

        Called before the store deletes anything: with the log's database down, nothing is
        deleted and the caller gets a retryable error. Recorded after, a deletion the store had
        made was reported as failed, its retry answered "not found", and doctor listed the
        memory as lost. A recorded memory the store then fails to delete stays listed as
        stored, and a retry records it again."""
        if self.decision_log is None or not ids:
            return
        box = outbox_for(self.decision_log)
        who = tenant or self.tenant
        await anyio.to_thread.run_sync(lambda: box.deleted(who, ids, cause))

    # ------------------------------------------------------------------ consistency
    @while_open
    async def reconcile(self, *, older_than_s: float = 0.0) -> ReconcileReport:
        """Resolve every write intent pending for ``older_than_s`` (a crash left it): complete
        it if all its facts are stored, else remove them (:mod:`._reconcile`)."""
        if self.decision_log is None:
            return ReconcileReport()
        report = await reconcile(self.backend, self.decision_log, older_than_s=older_than_s)
        self._needs_reconcile = False
        return report

    @while_open
    async def adopt(self, *, status: AdoptAs = "hypothesis", dry_run: bool = False) -> AdoptReport:
        """Take the memories Mem0 stored in this memory's store before the guard (they carry no
        tenant, so reads and ``delete_all`` do not see them) into this memory's tenant, as
        hypotheses (default) or quarantined, never as stated facts (:mod:`._adopt`)."""
        return await adopt(
            self.backend,
            self.decision_log,
            tenant=self.tenancy.tenant,
            status=status,
            dry_run=dry_run,
        )

    async def _reconcile_once(self) -> None:
        """Built by :meth:`from_settings` / :meth:`from_config`: reconcile before the first
        write the intents of writers that died (on SQLite every pending one; on a shared
        database those older than the idempotency lease: a younger one may be another
        process's live write)."""
        state = self._reconciliation
        if state.needed:
            async with state.lock:
                if state.needed:
                    await self.reconcile(older_than_s=state.grace_s)

    async def _reconcile_before_read(self) -> None:
        """The same reconciliation before the first read: a fact of a write that died half-way
        was readable until the first write removed it. A read stays available when the
        reconciliation fails: logged, and reads try again only after ``_RECONCILE_RETRY_S``
        (every read would first wait on a database that is down)."""
        state = self._reconciliation
        if not state.needed or time.monotonic() < state.retry_at:
            return
        try:
            await self._reconcile_once()
        except MirageError as exc:
            state.retry_at = time.monotonic() + _RECONCILE_RETRY_S
            log.warning("reconciliation before a read failed (%s): retried in %g s",
                        type(exc).__name__, _RECONCILE_RETRY_S)  # fmt: skip

    # ------------------------------------------------------------------ lifetime
    async def aclose(self) -> None:
        """Close what :meth:`from_settings` / :meth:`from_config` built, in reverse order
        (components passed in stay open). Idempotent."""
        self._closed = True
        await self._resources.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


__all__ = ["AsyncGuardedMemory", "verbatim_decisions"]
