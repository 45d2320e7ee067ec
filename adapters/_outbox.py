"""Write intents (an outbox in the decision-log database): what makes a guarded write atomic.

A store write and a database commit cannot share a transaction, so a guarded write goes:

1. **intent** — one row committed *before* the first store write: tenant, scope, idempotency
   key, the turns, every decision and the *write key* each stored fact will carry in its
   metadata (``mirage_write = "<intent id>/<index>"``);
2. the store writes, each item tagged with its write key;
3. **done** — one transaction writes the turns and decision rows, answers the idempotency key
   and deletes the intent. Either all of it commits or none.

A crash between 1 and 3 leaves a pending intent, never an unexplained memory:
:func:`~._reconcile.reconcile` finds the items by their write keys and either completes the
intent (every planned fact is there: the decision rows are written from the intent, the key is
answered with the same reply) or removes what was written (and frees the key, so a retry runs
again). Works on any SQLAlchemy database the decision log runs on (SQLite, PostgreSQL).
"""

from __future__ import annotations

import contextvars
import json
import uuid
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import JSON, DateTime, String, Text, UniqueConstraint, delete, select, update
from sqlalchemy.orm import Mapped, Session, mapped_column

from mirage_guard.adapters._backend import WRITE_KEY
from mirage_guard.adapters._decision_log import (
    NOT_COLUMNS,
    DecisionLog,
    WrittenDecision,
    _Base,
    _DecisionRow,
    _IdempotencyRow,
    audit_row,
)
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard import Decision, Turn
from mirage_guard.guard.errors import IdempotencyConflictError

PENDING = "pending"
RESOLVING = "resolving"  # claimed by a reconciler


class _IntentRow(_Base):
    __tablename__ = "mirage_write_intents"
    __table_args__ = (UniqueConstraint("tenant", "idempotency_key", name="uq_intent_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    tenant: Mapped[str] = mapped_column(String(200), index=True)
    user_id: Mapped[str | None] = mapped_column(String(200))
    agent_id: Mapped[str | None] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(200))
    idempotency_key: Mapped[str | None] = mapped_column(String(200))
    request_hash: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16), index=True)
    # {"turns": [...], "decisions": [...], "writer_model": str | None}
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    note: Mapped[str | None] = mapped_column(Text)  # why a reconciler left it (ids, no text)


class _DeletionRow(_Base):
    # a memory deleted on purpose (delete, delete_all, reset): its decision rows stay as history
    # and `mirage doctor` does not report them as lost; memory_id "*" marks a reset of the
    # tenant (tenant "*": of the whole store) — every memory logged before it is gone on purpose
    __tablename__ = "mirage_memory_deletions"

    tenant: Mapped[str] = mapped_column(String(200), primary_key=True)
    memory_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    cause: Mapped[str] = mapped_column(String(32))
    deleted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass
class IdempotentCall:
    """The idempotency key a sidecar request holds while its write runs (set by the route).
    ``answered``: the write's done transaction stored the reply (the route must not again)."""

    key: str
    request_hash: str
    token: str | None = None  # the claim's owner token, when the key was claimed first
    answered: bool = False


_CALL: contextvars.ContextVar[IdempotentCall | None] = contextvars.ContextVar(
    "mirage_idempotent_call", default=None
)


@contextmanager
def idempotent_call(call: IdempotentCall) -> Iterator[IdempotentCall]:
    """Within this block a guarded write answers ``call`` in its done transaction."""
    reset = _CALL.set(call)
    try:
        yield call
    finally:
        _CALL.reset(reset)


def current_call() -> IdempotentCall | None:
    return _CALL.get()


class WriteIntent(BaseModel):
    """One planned guarded write, as committed before its first store write."""

    model_config = ConfigDict(frozen=True)

    id: str
    tenant: str
    scope: MemoryScope
    turns: list[Turn]
    decisions: list[Decision]
    writer_model: str | None = None
    idempotency_key: str | None = None
    request_hash: str | None = None
    # decision index -> the memory that already held that fact, or -> the earlier decision of
    # this write with the same fact: nothing is written for either
    existing: dict[int, str] = {}
    repeats: dict[int, int] = {}
    status: str = PENDING
    created_at: datetime | None = None
    note: str | None = None

    @classmethod
    def plan(
        cls,
        *,
        tenant: str,
        scope: MemoryScope,
        turns: Sequence[Turn],
        decisions: Sequence[Decision],
        writer_model: str | None,
        call: IdempotentCall | None,
        existing: Mapping[int, str] | None = None,
        repeats: Mapping[int, int] | None = None,
    ) -> WriteIntent:
        return cls(
            id=uuid.uuid4().hex,
            tenant=tenant,
            scope=scope,
            turns=list(turns),
            decisions=list(decisions),
            writer_model=writer_model,
            idempotency_key=call.key if call else None,
            request_hash=call.request_hash if call else None,
            existing=dict(existing or {}),
            repeats=dict(repeats or {}),
        )

    def write_key(self, index: int) -> str:
        return f"{self.id}/{index}"

    def planned_keys(self) -> dict[str, int]:
        """Write key -> decision index, for every decision that stores a fact (not one the scope
        already held)."""
        return {
            self.write_key(i): i
            for i, d in enumerate(self.decisions)
            if d.status is not None and i not in self.existing and i not in self.repeats
        }

    def held(self, written: Mapping[int, str]) -> dict[int, str]:
        """Decision index -> the memory holding its fact, given the ids ``written`` for the
        planned decisions: those plus the existing memories and the repeats' first ones."""
        held = {**written, **self.existing}
        held.update({i: written[j] for i, j in self.repeats.items() if j in written})
        return held


class IntentLostError(IdempotencyConflictError):
    """The intent of a running write was resolved by a reconciler (it was taken for dead)."""

    retryable = True


class Outbox:
    """The intents table of one decision log (created on first use)."""

    def __init__(self, log: DecisionLog) -> None:
        self.log = log
        for table in (_IntentRow.__table__, _DeletionRow.__table__):
            table.create(log.engine, checkfirst=True)  # type: ignore[attr-defined]

    def scopes(self, tenant: str) -> list[MemoryScope]:
        """Every user / agent / run scope a tenant's writes used (decision rows, intents)."""
        found: set[tuple[str | None, str | None, str | None]] = set()
        with self.log._sessions() as session:
            for table in (_DecisionRow, _IntentRow):
                cols = (table.user_id, table.agent_id, table.run_id)
                stmt = select(*cols).where(table.tenant == tenant).distinct()
                found.update((r[0], r[1], r[2]) for r in session.execute(stmt))
        scopes = [MemoryScope(user_id=u, agent_id=a, run_id=r) for u, a, r in sorted(
            found, key=lambda t: tuple(x or "" for x in t))]  # fmt: skip
        return [s for s in scopes if not s.is_empty()]

    # ------------------------------------------------------------------ deletions
    def deleted(self, tenant: str, memory_ids: Sequence[str], cause: str) -> None:
        """Record memories deleted on purpose (``"*"``: everything of ``tenant`` so far)."""
        now = datetime.now(UTC)
        with self.log._session() as session:
            for memory_id in dict.fromkeys(memory_ids):
                row = session.get(_DeletionRow, (tenant, memory_id))
                if row is None:
                    session.add(
                        _DeletionRow(
                            tenant=tenant, memory_id=memory_id, cause=cause, deleted_at=now
                        )
                    )
                else:
                    row.deleted_at, row.cause = now, cause

    def deletions(self) -> tuple[set[tuple[str, str]], dict[str, datetime]]:
        """(tenant, memory id) of every recorded deletion, and the last reset per tenant."""
        with self.log._sessions() as session:
            rows = session.scalars(select(_DeletionRow)).all()
        ids = {(r.tenant, r.memory_id) for r in rows if r.memory_id != "*"}
        resets = {r.tenant: r.deleted_at for r in rows if r.memory_id == "*"}
        return ids, resets

    # ------------------------------------------------------------------ writer side
    def begin(self, intent: WriteIntent) -> None:
        """Commit the intent (before the first store write)."""
        with self.log._session() as session:
            session.add(
                _IntentRow(
                    id=intent.id,
                    tenant=intent.tenant,
                    user_id=intent.scope.user_id,
                    agent_id=intent.scope.agent_id,
                    run_id=intent.scope.run_id,
                    idempotency_key=intent.idempotency_key,
                    request_hash=intent.request_hash,
                    status=PENDING,
                    payload={
                        "turns": [t.model_dump(mode="json") for t in intent.turns],
                        "decisions": [d.model_dump(mode="json") for d in intent.decisions],
                        "writer_model": intent.writer_model,
                        "existing": {str(i): m for i, m in intent.existing.items()},
                        "repeats": {str(i): j for i, j in intent.repeats.items()},
                    },
                    created_at=datetime.now(UTC),
                )
            )

    def for_key(self, tenant: str, key: str) -> WriteIntent | None:
        """The unresolved intent of an idempotency key (its writer died), if any."""
        with self.log._sessions() as session:
            row = session.scalars(
                select(_IntentRow).where(
                    _IntentRow.tenant == tenant, _IntentRow.idempotency_key == key
                )
            ).first()
            return _intent(row) if row is not None else None

    def complete(
        self,
        intent: WriteIntent,
        written: Sequence[WrittenDecision],
        reply: dict[str, Any],
        call: IdempotentCall | None,
        *,
        by_reconciler: bool = False,
    ) -> None:
        """The done transaction: turns, decision rows, the idempotency answer, intent deleted.

        Raises :class:`IntentLostError` (nothing committed) if the intent is no longer this
        caller's: a writer whose intent a reconciler claimed must not complete it too."""
        now = datetime.now(UTC)
        with self.log._session() as session:
            allowed = [RESOLVING] if by_reconciler else [PENDING]
            gone = session.execute(
                delete(_IntentRow).where(_IntentRow.id == intent.id, _IntentRow.status.in_(allowed))
            )
            if gone.rowcount != 1:  # type: ignore[attr-defined]
                raise IntentLostError("this write was resolved by start-up reconciliation")
            self.log._store_turns(session, intent.tenant, intent.scope, intent.turns, now)
            session.add_all(_decision_rows(intent, written, now, self.log.keeps_audits))
            if call is not None:
                _answer(session, intent.tenant, call, reply, now)
                call.answered = True

    def drop(self, intent_id: str, *, release_key: bool) -> None:
        """Forget an intent whose store writes were all removed; ``release_key``: free its
        unanswered idempotency key too, so a retry runs again."""
        with self.log._session() as session:
            row = session.get(_IntentRow, intent_id)
            if row is None:
                return
            if release_key and row.idempotency_key is not None:
                session.execute(
                    delete(_IdempotencyRow).where(
                        _IdempotencyRow.tenant == row.tenant,
                        _IdempotencyRow.key == row.idempotency_key,
                        _IdempotencyRow.response.is_(None),
                    )
                )
            session.delete(row)

    # ------------------------------------------------------------------ reconciler side
    def pending(self, *, older_than_s: float = 0.0, tenant: str | None = None) -> list[WriteIntent]:
        """Unresolved intents created at least ``older_than_s`` ago (oldest first)."""
        cutoff = datetime.now(UTC) - timedelta(seconds=older_than_s)
        stmt = select(_IntentRow).where(_IntentRow.created_at <= cutoff)
        if tenant is not None:
            stmt = stmt.where(_IntentRow.tenant == tenant)
        with self.log._sessions() as session:
            return [_intent(r) for r in session.scalars(stmt.order_by(_IntentRow.created_at))]

    def claim(self, intent_id: str, *, older_than_s: float = 0.0) -> bool:
        """Take an intent for resolution (compare-and-set): a pending one, or one another
        reconciler claimed at least ``older_than_s`` ago and did not finish."""
        now = datetime.now(UTC)
        cutoff = now - timedelta(seconds=older_than_s)
        with self.log._session() as session:
            taken = session.execute(
                update(_IntentRow)
                .where(
                    _IntentRow.id == intent_id,
                    (_IntentRow.status == PENDING)
                    | ((_IntentRow.status == RESOLVING) & (_IntentRow.claimed_at <= cutoff)),
                )
                .values(status=RESOLVING, claimed_at=now)
            )
            return bool(taken.rowcount == 1)  # type: ignore[attr-defined]

    def release_dead_claims(self, *, older_than_s: float, tenant: str | None = None) -> int:
        """Free idempotency keys claimed at least ``older_than_s`` ago, never answered, with no
        intent (their request died before it stored anything): a retry runs at once instead of
        waiting for the claim's lease. Returns how many."""
        cutoff = datetime.now(UTC) - timedelta(seconds=older_than_s)
        intents = select(_IntentRow.idempotency_key).where(
            _IntentRow.tenant == _IdempotencyRow.tenant,
            _IntentRow.idempotency_key == _IdempotencyRow.key,
        )
        stmt = delete(_IdempotencyRow).where(
            _IdempotencyRow.response.is_(None),
            _IdempotencyRow.claimed_at <= cutoff,
            ~intents.exists(),
        )
        if tenant is not None:
            stmt = stmt.where(_IdempotencyRow.tenant == tenant)
        with self.log._session() as session:
            return int(session.execute(stmt).rowcount)  # type: ignore[attr-defined]

    def leave(self, intent_id: str, note: str) -> None:
        """Give a claimed intent back as pending, with why (ids only, never memory text)."""
        with self.log._session() as session:
            session.execute(
                update(_IntentRow)
                .where(_IntentRow.id == intent_id)
                .values(status=PENDING, claimed_at=None, note=note[:2000])
            )


_OUTBOXES: weakref.WeakKeyDictionary[DecisionLog, Outbox] = weakref.WeakKeyDictionary()


def outbox_for(log: DecisionLog) -> Outbox:
    """The one :class:`Outbox` of a decision log (its table created once)."""
    box = _OUTBOXES.get(log)
    if box is None:
        box = _OUTBOXES[log] = Outbox(log)
    return box


def _intent(row: _IntentRow) -> WriteIntent:
    p = row.payload
    return WriteIntent(
        id=row.id,
        tenant=row.tenant,
        scope=MemoryScope(user_id=row.user_id, agent_id=row.agent_id, run_id=row.run_id),
        turns=[Turn.model_validate(t) for t in p.get("turns", [])],
        decisions=[Decision.model_validate(d) for d in p.get("decisions", [])],
        writer_model=p.get("writer_model"),
        existing={int(i): str(m) for i, m in (p.get("existing") or {}).items()},
        repeats={int(i): int(j) for i, j in (p.get("repeats") or {}).items()},
        idempotency_key=row.idempotency_key,
        request_hash=row.request_hash,
        status=row.status,
        created_at=row.created_at,
        note=row.note,
    )


def _decision_rows(
    intent: WriteIntent, written: Sequence[WrittenDecision], now: datetime, keeps_audits: bool
) -> list[_DecisionRow]:
    rows = []
    for w in written:
        row = w.decision.summary(w.memory_id)
        rows.append(
            _DecisionRow(
                tenant=intent.tenant,
                user_id=intent.scope.user_id,
                agent_id=intent.scope.agent_id,
                run_id=intent.scope.run_id,
                request_id=intent.id,
                writer_model=intent.writer_model,
                created_at=now,
                candidate_text=row.text,
                reasons=[r.as_stored() for r in row.reasons],
                audit=audit_row(w.decision, intent.turns) if keeps_audits else None,
                **row.model_dump(mode="json", exclude=NOT_COLUMNS),
            )
        )
    return rows


def _answer(
    session: Session, tenant: str, call: IdempotentCall, reply: dict[str, Any], now: datetime
) -> None:
    """Store ``reply`` for the call's key in the done transaction: the claim this request holds
    (``token``), an unanswered claim a dead request left (reconciler), or a new row."""
    row = session.get(_IdempotencyRow, (tenant, call.key), populate_existing=True)
    if row is None:
        session.add(
            _IdempotencyRow(
                tenant=tenant,
                key=call.key,
                request_hash=call.request_hash,
                owner=None,
                response=json.dumps(reply),
                claimed_at=now,
                created_at=now,
            )
        )
        return
    if row.response is not None or (call.token is not None and row.owner != call.token):
        raise IdempotencyConflictError(
            "this Idempotency-Key was taken over by another request (its lease ran out)"
        )
    if row.request_hash != call.request_hash:
        raise IdempotencyConflictError(
            "this Idempotency-Key was already used for a different request"
        )
    row.response = json.dumps(reply)
    row.owner = None


__all__ = [
    "WRITE_KEY",
    "IdempotentCall",
    "IntentLostError",
    "Outbox",
    "WriteIntent",
    "current_call",
    "idempotent_call",
    "outbox_for",
]
