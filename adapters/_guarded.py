"""``GuardedMemory`` / ``AsyncGuardedMemory``: drop-ins for ``mem0.Memory`` with the guard inside.

``add(..., infer=True)`` extracts candidates with the writer model (one call), lets the guard tag
each one stated / inferred / generated, and writes every approved fact on its own
(``infer=False``) with per-fact metadata: ``provenance``, ``source_turn_id``, ``guard_score``,
``profile_id``, ``status``. ``add(..., infer=False)`` stores each user message verbatim as a stated
fact with its own turn id (assistant/tool messages are not the user's words: generated).
``search`` / ``get_all`` return facts unless hypotheses or quarantined items are asked for.

Fail closed: if extraction, the guard, the store or the decision log fails, the add raises a
typed error and nothing it wrote is left behind.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from enum import StrEnum
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from mirage_guard.adapters._backend import (
    PROTECTED_KEYS,
    PROVENANCE_KEYS,
    SCOPE_KEYS,
    TENANT_KEY,
    Item,
    MemoryBackend,
    matches,
)
from mirage_guard.adapters._decision_log import (
    DEFAULT_TENANT,
    DecisionLog,
    MemoryScope,
    WrittenDecision,
)
from mirage_guard.adapters._embedding import CachingEmbedder
from mirage_guard.adapters._mem0 import Mem0Backend
from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.adapters._remote import RemoteMem0Backend
from mirage_guard.guard import (
    Action,
    AuditVerdict,
    Candidate,
    Decision,
    Guard,
    LinkerThread,
    MemoryStatus,
    Provenance,
    Role,
    Turn,
)
from mirage_guard.guard.errors import (
    BackendError,
    ConfigError,
    InputError,
    LLMError,
    MemoryNotFoundError,
)
from mirage_guard.guard.evidence import Embedder, shared_minilm
from mirage_guard.guard.extraction import CandidateExtractor, Extractor
from mirage_guard.guard.llm import LLMClient, RetryingLLM, create_llm
from mirage_guard.guard.settings import AuditMode, GuardSettings

T = TypeVar("T")
log = logging.getLogger("mirage.memory")

_UNSET: Any = object()
_DELETE_BATCH = 200


class ExtractionMode(StrEnum):
    GUARD = "guard"  # the provenance-aware prompt (prompts/extract_candidates.md)
    MEM0 = "mem0"  # Mem0's own additive extraction prompt; its facts are tagged before insert


def statuses_for(*, include_hypotheses: bool, include_quarantined: bool) -> list[str]:
    out = [MemoryStatus.FACT.value]
    if include_hypotheses:
        out.append(MemoryStatus.HYPOTHESIS.value)
    if include_quarantined:
        out.append(MemoryStatus.QUARANTINED.value)
    return out


def to_turns(messages: Any) -> list[Turn]:
    """Mem0's message forms (str, dict, list of dicts) as turns; a dict may carry its ``id``."""
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list | tuple):
        raise InputError("messages must be a str, a dict or a list of dicts")
    turns: list[Turn] = []
    for m in messages:
        if not isinstance(m, Mapping):
            raise InputError("every message must be a dict with role and content")
        content = m.get("content")
        if content is None:
            continue  # e.g. tool-call messages without text, as Mem0 skips them
        if not isinstance(content, str):
            raise InputError("message content must be a string")
        try:
            role = Role(str(m.get("role")))
        except ValueError as exc:
            raise InputError(f"unknown message role {m.get('role')!r}") from exc
        turn_id = m.get("id")
        if turn_id is not None and not (isinstance(turn_id, str) and turn_id.strip()):
            raise InputError("a message id must be a non-empty string")
        turns.append(Turn(id=turn_id, role=role, content=content) if turn_id else
                     Turn(role=role, content=content))  # fmt: skip
    ids = [t.id for t in turns]
    if len(ids) != len(set(ids)):
        raise InputError("message ids must be unique within one call")
    return turns


def present(item: Mapping[str, Any]) -> Item:
    """A store item as callers see it: provenance fields on top, tenant key removed."""
    out = dict(item)
    meta = dict(out.get("metadata") or {})
    meta.pop(TENANT_KEY, None)
    for key in PROVENANCE_KEYS:
        out[key] = meta.get(key)
    if meta:
        out["metadata"] = meta
    else:
        out.pop("metadata", None)
    return out


def decision_summary(w: WrittenDecision) -> dict[str, Any]:
    d = w.decision
    return {
        "candidate_id": d.candidate.id,
        "text": d.candidate.text,
        "provenance": d.provenance.value,
        "action": d.action.value,
        "status": d.status.value if d.status else None,
        "source_turn_id": d.source_turn_id,
        "score": d.score,
        "threshold": d.threshold,
        "profile_id": d.profile_id,
        "calibrated": d.calibrated,
        "reasons": list(d.reasons),
        "memory_id": w.memory_id,
    }


class AsyncGuardedMemory:
    """Async drop-in for ``mem0.AsyncMemory`` / ``mem0.Memory`` with the guard in the write path."""

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
        if isolated and decision_log is None:
            raise ConfigError("tenant isolation needs a decision log (it records memory ownership)")
        self.backend = backend
        self.guard = guard
        self.extractor = extractor
        self.decision_log = decision_log
        self.metrics = metrics
        self.tenant = tenant
        self.isolated = isolated
        self._owned: list[Any] = []

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_settings(
        cls,
        settings: GuardSettings | None = None,
        *,
        writer_llm: LLMClient | None = None,
        guard: Guard | None = None,
        backend: MemoryBackend | None = None,
        decision_log: DecisionLog | None = None,
        metrics: GuardMetrics | None = None,
        extraction: ExtractionMode = ExtractionMode.GUARD,
        embedder: Embedder | None = None,
        linker_thread: LinkerThread = "dedicated",
    ) -> AsyncGuardedMemory:
        """Build everything from :class:`GuardSettings`; what is built here is closed by close()."""
        s = settings or GuardSettings()
        owned: list[Any] = []
        if writer_llm is None and s.writer_model:
            writer_llm = RetryingLLM(create_llm(s.writer_model, api_base=s.writer_api_base))
            owned.append(writer_llm)
        # one MiniLM, one encode per text: the store reuses the guard's candidate vectors
        needs_model = guard is None or (backend is None and not s.upstream_url)
        shared = CachingEmbedder(embedder or shared_minilm()) if needs_model else None
        if guard is None:
            guard = Guard.from_settings(
                s,
                writer_llm=writer_llm,
                embedder=shared,
                metrics=metrics,
                linker_thread=linker_thread,
            )
            owned.append(guard)
        if backend is None:
            backend = (
                RemoteMem0Backend(s.upstream_url)
                if s.upstream_url
                else Mem0Backend.embedded(s.data_dir, embedder=shared)
            )
            owned.append(backend)
        if decision_log is None:
            decision_log = DecisionLog.from_settings(s)
            owned.append(decision_log)
        extractor = make_extractor(writer_llm, extraction, s) if writer_llm else None
        memory = cls(
            backend=backend,
            guard=guard,
            extractor=extractor,
            decision_log=decision_log,
            metrics=metrics,
        )
        memory._owned = owned
        return memory

    def for_tenant(self, tenant: str, *, isolated: bool = True) -> AsyncGuardedMemory:
        """The same components, scoped to one tenant (owns nothing: close the parent)."""
        return AsyncGuardedMemory(
            backend=self.backend,
            guard=self.guard,
            extractor=self.extractor,
            decision_log=self.decision_log,
            metrics=self.metrics,
            tenant=tenant,
            isolated=isolated,
        )

    # ------------------------------------------------------------------ add
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
    ) -> dict[str, Any]:
        """Guarded ``Memory.add``; returns ``{"results", "decisions", "turns"}``."""
        if timestamp is not None or expiration_date is not None:
            raise InputError("timestamp / expiration_date are not supported by guarded memory")
        if memory_type is not None:
            raise InputError("procedural memories are not guarded: use mem0 directly for them")
        if prompt is not None:
            raise InputError(
                "custom extraction prompts are not accepted: the guard's extraction prompt is "
                "versioned and calibrated (see prompts/extract_candidates.md)"
            )
        scope = self._scope(user_id, agent_id, run_id)
        caller_meta = self._caller_metadata(metadata)
        turns = await self._turns(messages)
        writer_model = self.extractor.model if infer and self.extractor else None
        decisions = await (self._inferred(turns) if infer else self._verbatim(turns))
        return await self._store(decisions, scope, caller_meta, turns, writer_model)

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
    ) -> dict[str, Any]:
        """Guarded write of caller-given candidates (an agent's save-memory tool): no extraction
        call; the conversation is the evidence. Returns what :meth:`add` returns."""
        scope = self._scope(user_id, agent_id, run_id)
        caller_meta = self._caller_metadata(metadata)
        turns = await self._turns(messages)
        cands = [c if isinstance(c, Candidate) else Candidate(text=c) for c in candidates]
        decisions = await self.guard.atag(turns, cands, writer_model=writer_model, audit=audit)
        return await self._store(decisions, scope, caller_meta, turns, writer_model)

    async def _turns(self, messages: Any) -> list[Turn]:
        turns = to_turns(messages)
        if self.decision_log is not None:
            await anyio.to_thread.run_sync(self.decision_log.check_turns, self.tenant, turns)
        return turns

    async def _store(
        self,
        decisions: Sequence[Decision],
        scope: MemoryScope,
        caller_meta: Mapping[str, Any],
        turns: Sequence[Turn],
        writer_model: str | None,
    ) -> dict[str, Any]:
        written = await self._write(decisions, scope, caller_meta, turns, writer_model)
        log.info(
            "guarded write: tenant=%s turns=%d decisions=%d written=%d",
            self.tenant, len(turns), len(decisions), sum(1 for w in written if w.memory_id),
        )  # fmt: skip
        return {
            "results": [
                {
                    "id": w.memory_id,
                    "memory": w.decision.candidate.text,
                    "event": "ADD",
                    **w.decision.memory_metadata(),
                }
                for w in written
                if w.memory_id
            ],
            "decisions": [decision_summary(w) for w in written],
            "turns": [{"id": t.id, "role": t.role.value} for t in turns],
        }

    async def _inferred(self, turns: Sequence[Turn]) -> list[Decision]:
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
                self.metrics.errors.labels(stage="extract", kind=type(exc).__name__).inc()
            raise
        finally:
            if self.metrics:
                self.metrics.stage_seconds.labels(stage="extract").observe(
                    time.perf_counter() - start
                )
        return await self.guard.atag(
            turns, result.candidates, writer_model=self.extractor.model, audit=result.audit
        )

    async def _verbatim(self, turns: Sequence[Turn]) -> list[Decision]:
        decisions: list[Decision] = []
        for t in turns:
            if t.role is Role.SYSTEM or not t.content.strip():
                continue
            if t.role is Role.USER:
                cand = Candidate(text=t.content, claimed_source_turn_id=t.id)
                decisions.append(
                    Decision(
                        candidate=cand,
                        provenance=Provenance.STATED,
                        action=Action.STORE,
                        source_turn_id=t.id,
                        similarity=1.0,
                        evidence_span=t.content,
                        score=None,
                        threshold=None,
                        profile_id=None,
                        calibrated=False,
                        reasons=["stored verbatim (infer=False): the user's own message"],
                    )
                )
            else:
                decisions.append(
                    Decision(
                        candidate=Candidate(text=t.content),
                        provenance=Provenance.GENERATED,
                        action=self.guard.policy.action_for(Provenance.GENERATED),
                        source_turn_id=None,
                        similarity=0.0,
                        evidence_span=None,
                        score=None,
                        threshold=None,
                        profile_id=None,
                        calibrated=False,
                        reasons=[f"{t.role.value} message (infer=False): not the user's words"],
                    )
                )
        if self.metrics:
            for d in decisions:
                self.metrics.decisions.labels(
                    model="none", provenance=d.provenance.value, action=d.action.value
                ).inc()
        return decisions

    async def _write(
        self,
        decisions: Sequence[Decision],
        scope: MemoryScope,
        caller_meta: Mapping[str, Any],
        turns: Sequence[Turn],
        writer_model: str | None,
    ) -> list[WrittenDecision]:
        """Write approved facts one by one, then log; on any failure undo what was written."""
        written: list[WrittenDecision] = []
        created: list[str] = []
        start = time.perf_counter()
        try:
            if any(d.status is not None for d in decisions):
                await self.backend.ping()
            for d in decisions:
                if d.status is None:
                    written.append(WrittenDecision(decision=d))
                    continue
                role = "user" if d.provenance is Provenance.STATED else "assistant"
                meta = {**caller_meta, **d.memory_metadata(), TENANT_KEY: self.tenant}
                items = await self.backend.add(
                    [{"role": role, "content": d.candidate.text}], scope=scope, metadata=meta
                )
                created.extend(str(i["id"]) for i in items if i.get("id"))
                if len(items) != 1 or not items[0].get("id"):
                    # e.g. an upstream that ignored infer=false and ran its own extraction
                    raise BackendError(f"the store wrote {len(items)} items for one fact")
                written.append(WrittenDecision(decision=d, memory_id=created[-1]))
            if self.decision_log is not None:
                try:
                    await anyio.to_thread.run_sync(
                        lambda: self._record(scope, turns, written, writer_model)
                    )
                except InputError:
                    raise
                except Exception as exc:  # database down or full: nothing may stay unexplained
                    raise BackendError(f"decision log write failed: {type(exc).__name__}") from exc
        except BaseException as exc:
            with anyio.CancelScope(shield=True):
                await self._undo(created)
            if self.metrics and isinstance(exc, Exception):
                self.metrics.errors.labels(stage="write", kind=type(exc).__name__).inc()
            raise
        if self.metrics:
            self.metrics.stage_seconds.labels(stage="write").observe(time.perf_counter() - start)
            for w in written:
                if w.memory_id and w.decision.status:
                    self.metrics.memory_writes.labels(status=w.decision.status.value).inc()
        return written

    def _record(
        self,
        scope: MemoryScope,
        turns: Sequence[Turn],
        written: Sequence[WrittenDecision],
        writer_model: str | None,
    ) -> None:
        assert self.decision_log is not None
        self.decision_log.record(
            tenant=self.tenant,
            scope=scope,
            turns=turns,
            written=written,
            request_id=uuid.uuid4().hex,
            writer_model=writer_model,
        )

    async def _undo(self, created: Sequence[str]) -> None:
        failed = 0
        for memory_id in created:
            try:
                await self.backend.delete(memory_id)
            except Exception:  # keep undoing the rest; report the count below
                failed += 1
        if created:
            log.warning(
                "guarded add failed: undid %d write(s), %d could not be undone",
                len(created) - failed, failed,
            )  # fmt: skip

    # ------------------------------------------------------------------ reads
    async def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: dict[str, Any] | None = None,
        threshold: float = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        include_hypotheses: bool = False,
        include_quarantined: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """``Memory.search``: facts only unless hypotheses / quarantined items are asked for."""
        self._reject_kwargs(kwargs, "search")
        if explain or reference_date is not None or show_expired:
            raise InputError("explain / reference_date / show_expired are not supported here")
        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be a non-empty string")
        if not 0.0 <= threshold <= 1.0 or top_k < 1:
            raise InputError("threshold must be in [0, 1] and top_k >= 1")
        statuses = statuses_for(
            include_hypotheses=include_hypotheses, include_quarantined=include_quarantined
        )
        f = self._filters(filters, statuses)
        items = await self.backend.search(
            query.strip(), filters=f, top_k=top_k, threshold=threshold
        )
        return {"results": [present(i) for i in items if self._visible(i, statuses)]}

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
        self._reject_kwargs(kwargs, "get_all")
        if show_expired:
            raise InputError("show_expired is not supported here")
        if top_k < 1:
            raise InputError("top_k must be >= 1")
        statuses = statuses_for(
            include_hypotheses=include_hypotheses, include_quarantined=include_quarantined
        )
        items = await self.backend.get_all(filters=self._filters(filters, statuses), top_k=top_k)
        return {"results": [present(i) for i in items if self._visible(i, statuses)]}

    async def get(self, memory_id: str) -> Item | None:
        """``Memory.get``: the item whatever its status (its ``status`` field says which)."""
        item = await self.backend.get(memory_id)
        if item is None or not self._mine(item):
            return None
        return present(item)

    async def history(self, memory_id: str) -> list[Item]:
        await self._require_owned(memory_id, allow_deleted=True)
        return await self.backend.history(memory_id)

    # ------------------------------------------------------------------ changes
    async def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, str]:
        """``Memory.update``; provenance, status and tenant cannot be changed through it."""
        if expiration_date is not _UNSET:
            raise InputError("expiration_date is not supported by guarded memory")
        text = text if text is not None else data
        if text is None and metadata is None:
            raise InputError("at least one of text or metadata must be provided")
        if text is not None and not text.strip():
            raise InputError("text must not be empty")
        caller_meta = self._caller_metadata(metadata) if metadata is not None else None
        await self._require_owned(memory_id)
        await self.backend.update(memory_id, text=text, metadata=caller_meta)
        return {"message": "Memory updated successfully!"}

    async def delete(self, memory_id: str) -> dict[str, str]:
        await self._require_owned(memory_id)
        await self.backend.delete(memory_id)
        return {"message": "Memory deleted successfully!"}

    async def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Delete every memory of a scope that belongs to this tenant (any status)."""
        scope = self._scope(user_id, agent_id, run_id)
        filters = {**scope.as_kwargs(), TENANT_KEY: self.tenant}
        seen: set[str] = set()
        while True:
            batch = await self.backend.get_all(filters=filters, top_k=_DELETE_BATCH)
            ids = [str(i["id"]) for i in batch if self._mine(i) and str(i["id"]) not in seen]
            if not ids:
                break
            for memory_id in ids:
                seen.add(memory_id)
                try:
                    await self.backend.delete(memory_id)
                except MemoryNotFoundError:
                    continue
        return {"message": "Memories deleted successfully!"}

    async def reset(self) -> None:
        """Wipe the store; a tenant-isolated memory deletes only what its tenant wrote."""
        if not self.isolated:
            await self.backend.reset()
            return
        assert self.decision_log is not None
        for memory_id in await anyio.to_thread.run_sync(self.decision_log.memory_ids, self.tenant):
            item = await self.backend.get(memory_id)
            if item is not None and self._mine(item):
                try:
                    await self.backend.delete(memory_id)
                except MemoryNotFoundError:
                    continue

    async def close(self) -> None:
        """Close what :meth:`from_settings` built (components passed in stay open)."""
        owned, self._owned = self._owned, []
        for part in reversed(owned):
            if isinstance(part, MemoryBackend | LLMClient):
                await (part.close() if isinstance(part, MemoryBackend) else part.aclose())
            else:
                part.close()

    async def __aenter__(self) -> AsyncGuardedMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _scope(user_id: str | None, agent_id: str | None, run_id: str | None) -> MemoryScope:
        values: dict[str, str | None] = {}
        for name, value in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)):
            if value is not None:
                value = str(value).strip()
                if not value or any(c.isspace() for c in value):
                    raise InputError(f"{name} must be a non-empty id without whitespace")
            values[name] = value
        scope = MemoryScope(**values)
        if scope.is_empty():
            raise InputError("one of user_id, agent_id or run_id is required")
        return scope

    @staticmethod
    def _caller_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
        if metadata is None:
            return {}
        if not isinstance(metadata, Mapping):
            raise InputError("metadata must be a dict")
        clash = PROTECTED_KEYS.intersection(metadata) | set(SCOPE_KEYS).intersection(metadata)
        if clash:
            raise InputError(f"metadata keys reserved for the guard: {sorted(clash)}")
        return dict(metadata)

    @staticmethod
    def _reject_kwargs(kwargs: Mapping[str, Any], method: str) -> None:
        if set(SCOPE_KEYS).intersection(kwargs):
            raise InputError(f"{method}() takes user_id / agent_id / run_id inside filters=")
        if kwargs:
            raise InputError(f"{method}() got unsupported arguments: {sorted(kwargs)}")

    def _filters(self, filters: Mapping[str, Any] | None, statuses: list[str]) -> dict[str, Any]:
        f = dict(filters or {})
        if TENANT_KEY in f or "status" in f:
            raise InputError(
                "filter by status with include_hypotheses / include_quarantined, not filters="
            )
        if not any(f.get(k) for k in SCOPE_KEYS):
            raise InputError("filters must contain one of user_id, agent_id, run_id")
        for k in SCOPE_KEYS:
            if k in f:
                if not isinstance(f[k], str):
                    raise InputError(f"filters[{k!r}] must be a string id")
                f[k] = self._scope(f[k], None, None).user_id
        f[TENANT_KEY] = self.tenant
        f["status"] = {"in": statuses}
        return f

    def _mine(self, item: Mapping[str, Any]) -> bool:
        return matches(item, {TENANT_KEY: self.tenant})

    def _visible(self, item: Mapping[str, Any], statuses: list[str]) -> bool:
        return matches(item, {TENANT_KEY: self.tenant, "status": {"in": statuses}})

    async def _require_owned(self, memory_id: str, *, allow_deleted: bool = False) -> None:
        item = await self.backend.get(memory_id)
        if item is not None:
            if self._mine(item):
                return
            raise MemoryNotFoundError(memory_id)
        if allow_deleted and self.decision_log is not None:
            ids = await anyio.to_thread.run_sync(self.decision_log.memory_ids, self.tenant)
            if memory_id in ids:
                return
        raise MemoryNotFoundError(memory_id)


def make_extractor(
    writer_llm: LLMClient, extraction: ExtractionMode, settings: GuardSettings
) -> Extractor:
    if extraction is ExtractionMode.MEM0:
        from mirage_guard.adapters._mem0_extraction import Mem0PromptExtractor

        return Mem0PromptExtractor(writer_llm)
    return CandidateExtractor(writer_llm, inline_audit=settings.audit_mode is AuditMode.INLINE)


class _LoopThread:
    """An event loop on a daemon thread, so the sync facade works inside or outside asyncio."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="mirage-guarded-memory", daemon=True
        )
        self._thread.start()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    @property
    def closed(self) -> bool:
        return self._loop.is_closed()

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


class GuardedMemory:
    """Synchronous drop-in for ``mem0.Memory`` (same methods and signatures)."""

    def __init__(self, memory: AsyncGuardedMemory) -> None:
        self._async = memory
        self._runner = _LoopThread()

    @classmethod
    def from_settings(
        cls,
        settings: GuardSettings | None = None,
        *,
        writer_llm: LLMClient | None = None,
        guard: Guard | None = None,
        backend: MemoryBackend | None = None,
        decision_log: DecisionLog | None = None,
        metrics: GuardMetrics | None = None,
        extraction: ExtractionMode = ExtractionMode.GUARD,
        embedder: Embedder | None = None,
    ) -> GuardedMemory:
        return cls(
            AsyncGuardedMemory.from_settings(
                settings,
                writer_llm=writer_llm,
                guard=guard,
                backend=backend,
                decision_log=decision_log,
                metrics=metrics,
                extraction=extraction,
                embedder=embedder,
            )
        )

    @classmethod
    def from_config(
        cls,
        config_dict: dict[str, Any],
        *,
        settings: GuardSettings | None = None,
        writer_llm: LLMClient | None = None,
        extraction: ExtractionMode = ExtractionMode.GUARD,
    ) -> GuardedMemory:
        """Like ``mem0.Memory.from_config``: your own Mem0 configuration (any vector store or
        embedder Mem0 supports) as the store, with the guard in front of it."""
        from mirage_guard.adapters._mem0 import _import_mem0

        s = settings or GuardSettings()
        mem0 = _import_mem0(s.data_dir)
        memory = cls.from_settings(
            s,
            writer_llm=writer_llm,
            backend=Mem0Backend(mem0.Memory.from_config(config_dict)),
            extraction=extraction,
        )
        memory._async._owned.append(memory._async.backend)  # built here: closed by close()
        return memory

    @property
    def inner(self) -> AsyncGuardedMemory:
        return self._async

    def _run(self, awaitable: Awaitable[T]) -> T:
        async def wrap() -> T:
            return await awaitable

        return self._runner.run(wrap())

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
    ) -> dict[str, Any]:
        return self._run(
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
    ) -> dict[str, Any]:
        """Guarded write of caller-given candidates (see :meth:`AsyncGuardedMemory.remember`)."""
        return self._run(
            self._async.remember(
                messages,
                candidates,
                user_id=user_id,
                agent_id=agent_id,
                run_id=run_id,
                metadata=metadata,
                writer_model=writer_model,
                audit=audit,
            )
        )

    def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: dict[str, Any] | None = None,
        threshold: float = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        include_hypotheses: bool = False,
        include_quarantined: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        return self._run(
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
        return self._run(
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
        return self._run(self._async.get(memory_id))

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: dict[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, str]:
        return self._run(
            self._async.update(
                memory_id, text=text, metadata=metadata, expiration_date=expiration_date, data=data
            )
        )

    def delete(self, memory_id: str) -> dict[str, str]:
        return self._run(self._async.delete(memory_id))

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        return self._run(self._async.delete_all(user_id=user_id, agent_id=agent_id, run_id=run_id))

    def history(self, memory_id: str) -> list[Item]:
        return self._run(self._async.history(memory_id))

    def reset(self) -> None:
        self._run(self._async.reset())

    def close(self) -> None:
        if self._runner.closed:
            return
        try:
            self._run(self._async.close())
        finally:
            self._runner.close()

    def __enter__(self) -> GuardedMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "AsyncGuardedMemory",
    "ExtractionMode",
    "GuardedMemory",
    "decision_summary",
    "make_extractor",
    "present",
    "statuses_for",
    "to_turns",
]
