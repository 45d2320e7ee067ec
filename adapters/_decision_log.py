"""Decision log and turn store (SQLAlchemy 2; a SQLite file by default, any database URL).

Every decision the guard makes is kept with the turns it refers to, so ``GET /v1/decisions``
can explain why any memory was stored (or not): which turn supports it, its score, the threshold
and profile that decided it, and the id of the memory that was written.
Idempotency keys of the sidecar live here too, so a retried add returns the first answer.

On PostgreSQL the log is shared by every replica of the sidecar, so nothing here relies on a
process-local lock: an idempotency key is *claimed* with one ``INSERT ... ON CONFLICT DO
NOTHING`` (exactly one request in the whole deployment wins it), turns are inserted the same way,
and the tables are created under an advisory lock (replicas start together).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import (
    JSON,
    Boolean,
    ColumnElement,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    Select,
    String,
    Text,
    create_engine,
    delete,
    event,
    func,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import URL, Connection, CursorResult, Engine, make_url
from sqlalchemy.exc import (
    ArgumentError,
    DisconnectionError,
    IntegrityError,
    InterfaceError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.orm import (
    DeclarativeBase,
    Mapped,
    Session,
    mapped_column,
    relationship,
    sessionmaker,
)

from mirage_guard.adapters._scope import DEFAULT_TENANT, MemoryScope
from mirage_guard.adapters._time import as_utc
from mirage_guard.guard import (
    Action,
    AuditSource,
    AuditVerdict,
    Decision,
    Provenance,
    Reason,
    Role,
    Turn,
    as_reasons,
)
from mirage_guard.guard.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigError,
    DatabaseUnavailableError,
    IdempotencyConflictError,
    IdempotencyInProgressError,
    InputError,
)
from mirage_guard.guard.settings import GuardSettings

_log = logging.getLogger("mirage.decisions")

# What SQLAlchemy raises when the log's database cannot be reached (refused, dropped, failed
# over, every pooled connection in use): the drop-in raises DatabaseUnavailableError for these,
# the sidecar answers 503 ``database_unavailable``; both say a retry can help.
DATABASE_DOWN: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    DisconnectionError,
    PoolTimeoutError,
)
# ... except what SQLite also reports as an OperationalError but no retry mends: a log file of
# another schema or none (tables dropped, a wrong file), a damaged file, one it may not write
_SQLITE_NOT_AN_OUTAGE = re.compile(
    r"no such (table|column)|has no column named|malformed|not a database|readonly database",
    re.IGNORECASE,
)


def database_down(exc: BaseException) -> bool:
    """Whether ``exc`` says the log's database cannot be reached now (retry later), not that it
    is not a log this version can use (a retry fails the same way)."""
    if not isinstance(exc, DATABASE_DOWN):
        return False
    driver = getattr(exc, "orig", None)
    return not (isinstance(driver, sqlite3.Error) and _SQLITE_NOT_AN_OUTAGE.search(str(driver)))


def database_error(exc: BaseException) -> BackendError:
    """The drop-in's error for a failure of the log's database: the retryable
    :class:`DatabaseUnavailableError` for an outage, a :class:`BackendError` naming SQLite's
    complaint (a schema or file the log cannot use) otherwise."""
    if database_down(exc):
        return DatabaseUnavailableError()
    return BackendError(f"the decision log's database cannot be used: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    """The first line of what the database driver said (SQLAlchemy's wrapper adds the SQL)."""
    driver = getattr(exc, "orig", None) or exc
    return (str(driver).splitlines() or [""])[0][:200]


class _Base(DeclarativeBase):
    pass


class _TurnRow(_Base):
    # turn ids are the caller's ("t1"), so they are unique per tenant AND conversation (a scope
    # key of user, agent and run ids); the table of earlier versions, keyed by tenant and id
    # alone, was "mirage_turns" and is no longer read
    __tablename__ = "mirage_conversation_turns"

    tenant: Mapped[str] = mapped_column(String(200), primary_key=True)
    conversation: Mapped[str] = mapped_column(String(700), primary_key=True)
    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    role: Mapped[str] = mapped_column(String(20))
    content: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str | None] = mapped_column(String(200), index=True)
    agent_id: Mapped[str | None] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class _DecisionRow(_Base):
    __tablename__ = "mirage_decisions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    tenant: Mapped[str] = mapped_column(String(200), index=True)
    user_id: Mapped[str | None] = mapped_column(String(200), index=True)
    agent_id: Mapped[str | None] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(200))
    request_id: Mapped[str] = mapped_column(String(64), index=True)
    candidate_id: Mapped[str] = mapped_column(String(200))
    candidate_text: Mapped[str] = mapped_column(Text)
    provenance: Mapped[str] = mapped_column(String(20), index=True)
    action: Mapped[str] = mapped_column(String(32), index=True)
    status: Mapped[str | None] = mapped_column(String(20))
    source_turn_id: Mapped[str | None] = mapped_column(String(200))
    similarity: Mapped[float] = mapped_column(Float)
    score: Mapped[float | None] = mapped_column(Float)
    threshold: Mapped[float | None] = mapped_column(Float)
    profile_id: Mapped[str | None] = mapped_column(String(200))
    calibrated: Mapped[bool] = mapped_column(Boolean)
    # reason codes and their parameters, [{"code": ..., "params": {...}}]; older rows hold words
    reasons: Mapped[list[Any]] = mapped_column(JSON)
    memory_id: Mapped[str | None] = mapped_column(String(64), index=True)
    writer_model: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    # the audit label the decision was made with, and whose it is: written with the row, never
    # loaded with it (a reader granted the older tables only still reads decisions); read by
    # DecisionLog.query and DecisionLog.decisions(audits=True)
    audit: Mapped[_AuditRow | None] = relationship(lazy="raise")


AUDIT_TABLE = "mirage_decision_audits"


class _AuditRow(_Base):
    # a table of its own, not columns of mirage_decisions: a log created before it gains the
    # table when a writer opens it (CREATE TABLE IF NOT EXISTS); its older decisions have none
    __tablename__ = AUDIT_TABLE

    decision_id: Mapped[int] = mapped_column(
        ForeignKey("mirage_decisions.id", ondelete="CASCADE"), primary_key=True
    )
    labeller_model: Mapped[str] = mapped_column(String(200), index=True)
    prompt_version: Mapped[str] = mapped_column(String(200))
    mode: Mapped[str] = mapped_column(String(32))
    label: Mapped[str] = mapped_column(String(40))
    confidence: Mapped[float] = mapped_column(Float)
    quote: Mapped[str | None] = mapped_column(Text)
    quote_check: Mapped[str | None] = mapped_column(String(20))
    source_turn_id: Mapped[str | None] = mapped_column(String(200))
    # the ids of the turns of the write the label was given on (what the guard and the labeller
    # saw; the turn store holds the whole conversation)
    turn_ids: Mapped[list[str]] = mapped_column(JSON)


def audit_row(decision: Decision, turns: Sequence[Turn]) -> _AuditRow | None:
    """The decision's audit label as a row, when the guard knows whose label it is (a label a
    caller passed in with no model or prompt vouching for it is not kept: no profile could be
    fitted on it). ``turns``: the write's."""
    v, source = decision.audit, decision.audit_source
    if v is None or source is None:
        return None
    return _AuditRow(
        labeller_model=source.model,
        prompt_version=source.prompt_version,
        mode=source.mode,
        label=v.label.value,
        confidence=v.confidence,
        quote=v.quote,
        quote_check=v.quote_check.value if v.quote_check else None,
        source_turn_id=v.source_turn_id,
        turn_ids=[t.id for t in turns],
    )


class _IdempotencyRow(_Base):
    # a key is claimed (owner set, no response) before its request runs, answered after; the
    # table of earlier versions, answers only, was "mirage_idempotency" and is no longer read
    __tablename__ = "mirage_idempotency_keys"

    tenant: Mapped[str] = mapped_column(String(200), primary_key=True)
    key: Mapped[str] = mapped_column(String(200), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    owner: Mapped[str | None] = mapped_column(String(32))  # the request holding it, unanswered
    response: Mapped[str | None] = mapped_column(Text)
    claimed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


@dataclass(frozen=True)
class KeyClaim:
    """What :meth:`DecisionLog.claim` found for an idempotency key.

    - ``response`` set: the key was answered before; replay it.
    - ``token`` set: this caller holds the key; run the request, then ``save_reply`` (or
      ``release`` it if the request failed). ``taken_over`` is the token of an earlier holder
      whose lease ran out (it died mid-request).
    - neither: another request holds the key right now (``busy``).
    """

    token: str | None = None
    response: dict[str, Any] | None = None
    taken_over: str | None = None

    @property
    def busy(self) -> bool:
        return self.token is None and self.response is None


# fields of a DecisionSummary a decision row holds in other columns, or not at all (whether the
# write found its fact already stored: the row's memory_id is that memory either way)
NOT_COLUMNS: set[str] = {"text", "reasons", "already_stored"}


class WrittenDecision(BaseModel):
    """A decision and the id of the memory written for it (None when blocked), or of the memory
    that already held the same fact (``already_stored``: nothing was written)."""

    model_config = ConfigDict(frozen=True)

    decision: Decision
    memory_id: str | None = None
    already_stored: bool = False


class LoggedAudit(BaseModel):
    """The audit label a logged decision was made with (``verdict``, its ``candidate_id`` the
    decision's) and whose label it is (``source``)."""

    model_config = ConfigDict(frozen=True)

    source: AuditSource
    verdict: AuditVerdict
    turn_ids: list[str] = Field(
        default_factory=list, description="the turns of the write the label was given on"
    )


class LoggedDecision(BaseModel):
    """One row of the decision log, as ``GET /v1/decisions`` returns it."""

    model_config = ConfigDict(frozen=True)

    id: int
    tenant: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    request_id: str
    candidate_id: str
    candidate_text: str
    provenance: Provenance
    action: Action
    status: str | None
    source_turn_id: str | None
    source_turn_text: str | None = Field(
        default=None, description="text of the supporting turn, resolved from the turn store"
    )
    similarity: float
    score: float | None
    threshold: float | None
    profile_id: str | None
    calibrated: bool
    reasons: list[Reason]
    memory_id: str | None
    writer_model: str | None
    created_at: datetime
    audit: LoggedAudit | None = Field(
        default=None,
        description="the self-audit label it was decided with and whose it is (model, prompt, "
        "mode); none when the audit was off, failed, or passed in by a caller",
    )

    _reasons = field_validator("reasons", mode="before")(as_reasons)


class DecisionQuery(BaseModel):
    """Filters of a decision-log query."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str | None = None
    provenance: Provenance | None = None
    action: Action | None = None
    memory_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(default=100, ge=1, le=1000)
    offset: int = Field(default=0, ge=0)


class DecisionLog:
    """Decisions, turns and idempotency keys in one SQL database."""

    def __init__(self, url: str, *, echo: bool = False, creates_audit_table: bool = True) -> None:
        """``creates_audit_table=False``: a reading tool's open (`mirage report`, `doctor`), which
        never adds the audit labels' table to an older log (it may be read-only)."""
        parsed = sqlalchemy_url(url)
        connect_args: dict[str, Any] = {}
        engine_args: dict[str, Any] = {}
        self.dialect = parsed.get_backend_name()
        if self.dialect == "sqlite":
            connect_args["check_same_thread"] = False
            file = sqlite_file(parsed)
            if file is not None:
                file.parent.mkdir(parents=True, exist_ok=True)
        else:  # a server: connections drop (restarts, failover), reconnect instead of failing
            engine_args.update(pool_pre_ping=True, pool_size=8, max_overflow=8)
        self.url = url
        self.engine: Engine = create_engine(
            parsed, echo=echo, connect_args=connect_args, **engine_args
        )
        if self.dialect == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        _create_tables(self.engine)
        # the audit labels' table, added after the others: a log of an older version gains it
        # when a writer opens it; one that cannot (a read-only file, a role without CREATE) keeps
        # working without labels, said once
        self.keeps_audits = _audit_table(self.engine, create=creates_audit_table)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        self._lock_engine: Engine | None = None
        self._lock_engine_guard = threading.Lock()

    @classmethod
    def from_settings(cls, settings: GuardSettings | None = None) -> DecisionLog:
        """The log at the settings' URL; one SQLAlchemy cannot open is a :class:`ConfigError`
        naming ``MIRAGE_DATABASE_URL`` (its text names the scheme, never the password)."""
        url = (settings or GuardSettings.from_env()).resolved_database_url()
        try:
            return cls(url)
        except (ArgumentError, NoSuchModuleError) as exc:
            raise ConfigError(f"MIRAGE_DATABASE_URL: SQLAlchemy cannot open it: {exc}") from exc
        except DATABASE_DOWN as exc:  # it creates its tables: the server must answer
            raise database_error(exc) from exc

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    # ------------------------------------------------------------------ writes
    def record(
        self,
        *,
        tenant: str,
        scope: MemoryScope,
        turns: Sequence[Turn],
        written: Sequence[WrittenDecision],
        request_id: str,
        writer_model: str | None,
    ) -> None:
        """Store the turns of one write and every decision made on it, in one transaction."""
        now = datetime.now(UTC)
        with self._session() as session:
            self._store_turns(session, tenant, scope, turns, now)
            for w in written:
                row = w.decision.summary(w.memory_id)
                session.add(
                    _DecisionRow(
                        tenant=tenant,
                        user_id=scope.user_id,
                        agent_id=scope.agent_id,
                        run_id=scope.run_id,
                        request_id=request_id,
                        writer_model=writer_model,
                        created_at=now,
                        candidate_text=row.text,
                        reasons=[r.as_stored() for r in row.reasons],
                        audit=audit_row(w.decision, turns) if self.keeps_audits else None,
                        **row.model_dump(mode="json", exclude=NOT_COLUMNS),
                    )
                )

    def check_turns(self, tenant: str, scope: MemoryScope, turns: Sequence[Turn]) -> None:
        """Raise InputError if a turn id is already stored with other content in this
        conversation (ids are stable within one; two users may both have a "t1")."""
        with self._sessions() as session:
            self._conflicts(session, tenant, scope, turns)

    def _conflicts(
        self, session: Session, tenant: str, scope: MemoryScope, turns: Sequence[Turn]
    ) -> set[str]:
        ids = [t.id for t in turns]
        if not ids:
            return set()
        rows = session.scalars(
            select(_TurnRow).where(
                _TurnRow.tenant == tenant,
                _TurnRow.conversation == scope.key(),
                _TurnRow.id.in_(ids),
            )
        ).all()
        known = {r.id: r for r in rows}
        for t in turns:
            row = known.get(t.id)
            if row is not None and (row.content != t.content or row.role != t.role.value):
                raise InputError(f"turn id {t.id!r} was already used for a different message")
        return set(known)

    def _store_turns(
        self,
        session: Session,
        tenant: str,
        scope: MemoryScope,
        turns: Sequence[Turn],
        now: datetime,
    ) -> None:
        known = self._conflicts(session, tenant, scope, turns)
        new = [t for t in turns if t.id not in known]
        # a conversation's turns are read back by created_at (``turns``), and the guard reads
        # their order (a later correction makes an earlier fact stale): the turns of one write
        # get one microsecond each, the last at ``now``, so they never tie (tied, they came back
        # in the order of their ids as strings: "t1", "t10", "t2")
        rows = [
            {
                "tenant": tenant,
                "conversation": scope.key(),
                "id": t.id,
                "role": t.role.value,
                "content": t.content,
                "user_id": scope.user_id,
                "agent_id": scope.agent_id,
                "run_id": scope.run_id,
                "created_at": now - timedelta(microseconds=len(new) - 1 - i),
            }
            for i, t in enumerate(new)
        ]
        if rows:
            # another replica may store the same turn between the check and here: keep the
            # first, then check again that it is the same message
            session.connection().execute(self._insert_ignoring_duplicates(_TurnRow), rows)
            self._conflicts(session, tenant, scope, turns)

    def _insert_ignoring_duplicates(self, table: type[_Base]) -> Any:
        if self.dialect == "postgresql":
            return postgresql.insert(table).on_conflict_do_nothing()
        if self.dialect == "sqlite":
            return sqlite.insert(table).on_conflict_do_nothing()
        return insert(table)  # another database: a duplicate fails the write (IntegrityError)

    def _insert_key(self, session: Session, values: dict[str, Any]) -> bool:
        """Insert an idempotency row unless the key exists; True if this call inserted it."""
        if self.dialect in ("postgresql", "sqlite"):
            stmt = self._insert_ignoring_duplicates(_IdempotencyRow).returning(
                _IdempotencyRow.owner
            )
            return session.connection().execute(stmt, values).first() is not None
        try:
            with session.begin_nested():
                session.connection().execute(insert(_IdempotencyRow), values)
        except IntegrityError:
            return False
        return True

    # ------------------------------------------------------------------ reads
    def query(self, tenant: str, q: DecisionQuery | None = None) -> list[LoggedDecision]:
        q = q or DecisionQuery()
        stmt = select(_DecisionRow).where(_DecisionRow.tenant == tenant)
        if q.user_id is not None:
            stmt = stmt.where(_DecisionRow.user_id == q.user_id)
        if q.provenance is not None:
            stmt = stmt.where(_DecisionRow.provenance == q.provenance.value)
        if q.action is not None:
            stmt = stmt.where(_DecisionRow.action == q.action.value)
        if q.memory_id is not None:
            stmt = stmt.where(_DecisionRow.memory_id == q.memory_id)
        if q.since is not None:
            stmt = stmt.where(_DecisionRow.created_at >= as_utc(q.since))
        if q.until is not None:
            stmt = stmt.where(_DecisionRow.created_at <= as_utc(q.until))
        stmt = stmt.order_by(_DecisionRow.id.desc()).limit(q.limit).offset(q.offset)
        with self._sessions() as session:
            rows = session.scalars(stmt).all()
            turn_ids = {r.source_turn_id for r in rows if r.source_turn_id}
            texts: dict[tuple[str, str], str] = {}
            if turn_ids:
                for t in session.scalars(
                    select(_TurnRow).where(_TurnRow.tenant == tenant, _TurnRow.id.in_(turn_ids))
                ):
                    texts[(t.conversation, t.id)] = t.content
            audits = self._audits(session, [r.id for r in rows])
            return [
                _logged(r, texts.get((_conversation(r), r.source_turn_id or "")), audits.get(r.id))
                for r in rows
            ]

    def all_decisions(
        self,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[LoggedDecision]:
        """Read-only: decisions of every tenant in [since, until], oldest first (for reports).

        Turn texts are not resolved (``source_turn_text`` stays None).
        """
        stmt = _in_window(select(_DecisionRow), since, until).order_by(_DecisionRow.id.asc())
        if limit is not None:
            stmt = stmt.limit(limit)
        with self._sessions() as session:
            return [_logged(r, None) for r in session.scalars(stmt).all()]

    def decision_ids(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        tenant: str | None = None,
        writer_model: str | None = None,
    ) -> list[int]:
        """Read-only: the ids of the decisions in [since, until] (of one tenant and writer
        model when given), ascending."""
        stmt = _in_window(select(_DecisionRow.id), since, until)
        if tenant is not None:
            stmt = stmt.where(_DecisionRow.tenant == tenant)
        if writer_model is not None:
            stmt = stmt.where(_DecisionRow.writer_model == writer_model)
        with self._sessions() as session:
            return list(session.scalars(stmt.order_by(_DecisionRow.id.asc())).all())

    def decisions(self, ids: Sequence[int], *, audits: bool = False) -> list[LoggedDecision]:
        """Read-only: the decisions with these ids, in the order given (an unknown id is
        skipped); turn texts are not resolved. ``audits``: with their audit labels (a role
        that may not read the labels' table gets an :class:`InputError` saying so)."""
        if not ids:
            return []
        with self._sessions() as session:
            rows = {
                r.id: r
                for r in session.scalars(select(_DecisionRow).where(_DecisionRow.id.in_(ids)))
            }
            labels = self._audits(session, list(rows), reader=True) if audits else {}
            return [_logged(rows[i], None, labels.get(i)) for i in ids if i in rows]

    def _audits(
        self, session: Session, ids: Sequence[int], *, reader: bool = False
    ) -> dict[int, _AuditRow]:
        """The audit labels of these decisions, by decision id (none in a log without the
        table). ``reader``: a database error is an :class:`InputError` naming the table (the
        role reading the log may not read it) instead of the error itself."""
        if not ids or not self.keeps_audits:
            return {}
        stmt = select(_AuditRow).where(_AuditRow.decision_id.in_(ids))
        try:
            found = list(session.scalars(stmt))
        except SQLAlchemyError as exc:
            if not reader or database_down(exc):
                raise
            raise InputError(
                f"cannot read the self-audit labels in table {AUDIT_TABLE} ({_first_line(exc)}): "
                "the role "
                "reading the log needs SELECT on it too"
            ) from exc
        return {a.decision_id: a for a in found}

    def turn(self, tenant: str, scope: MemoryScope, turn_id: str) -> Turn | None:
        """One stored turn of a conversation."""
        with self._sessions() as session:
            row = session.get(_TurnRow, (tenant, scope.key(), turn_id))
            if row is None:
                return None
            return Turn(id=row.id, role=Role(row.role), content=row.content)

    def turns(self, tenant: str, scope: MemoryScope, until: datetime | None = None) -> list[Turn]:
        """Every stored turn of a conversation, oldest first (the evidence for an edit); with
        ``until``, those the log held then (a decision's time: the turns its write stored, and
        earlier ones)."""
        stmt = select(_TurnRow).where(
            _TurnRow.tenant == tenant, _TurnRow.conversation == scope.key()
        )
        if until is not None:
            stmt = stmt.where(_TurnRow.created_at <= as_utc(until))
        with self._sessions() as session:
            return [
                Turn(id=r.id, role=Role(r.role), content=r.content)
                for r in session.scalars(stmt.order_by(_TurnRow.created_at.asc())).all()
            ]

    def memory_ids(self, tenant: str) -> list[str]:
        """Every memory id ever written for a tenant (a tenant-scoped reset deletes these)."""
        stmt = (
            select(_DecisionRow.memory_id)
            .where(_DecisionRow.tenant == tenant, _DecisionRow.memory_id.is_not(None))
            .distinct()
        )
        with self._sessions() as session:
            return [m for m in session.scalars(stmt) if m]

    def stored_facts(
        self, tenant: str, scope: MemoryScope, lowered: Sequence[str]
    ) -> list[tuple[str, str, str]]:
        """(candidate text, status, memory id) of the decisions that stored a memory in exactly
        ``scope`` whose text, lower-cased, is one of ``lowered``; newest first. Only finished
        writes have rows, and a row's memory may have been deleted or edited since: the caller
        checks the store."""
        if not lowered:
            return []
        where: list[ColumnElement[bool]] = [
            _DecisionRow.tenant == tenant,
            _DecisionRow.memory_id.is_not(None),
            _DecisionRow.status.is_not(None),
            func.lower(_DecisionRow.candidate_text).in_(sorted(set(lowered))),
        ]
        for column, value in (
            (_DecisionRow.user_id, scope.user_id),
            (_DecisionRow.agent_id, scope.agent_id),
            (_DecisionRow.run_id, scope.run_id),
        ):
            where.append(column.is_(None) if value is None else column == value)
        stmt = (
            select(_DecisionRow.candidate_text, _DecisionRow.status, _DecisionRow.memory_id)
            .where(*where)
            .order_by(_DecisionRow.id.desc())
        )
        with self._sessions() as session:
            return [(str(t), str(st), str(m)) for t, st, m in session.execute(stmt)]

    # ------------------------------------------------------------------ idempotency
    def replay(self, tenant: str, key: str, request_hash: str) -> dict[str, Any] | None:
        """The stored response for an idempotency key, or None if the key is new or its
        request is still running."""
        with self._sessions() as session:
            row = session.get(_IdempotencyRow, (tenant, key))
            if row is None:
                return None
            _same_request(row, request_hash)
            return None if row.response is None else _response(row.response)

    def claim(self, tenant: str, key: str, request_hash: str, *, lease_s: float) -> KeyClaim:
        """Claim an idempotency key for one request, atomically across every process sharing
        this database (see :class:`KeyClaim`). A claim older than ``lease_s`` with no answer
        belonged to a request that died; it is taken over (compare-and-set on its owner)."""
        token = uuid.uuid4().hex
        now = datetime.now(UTC)
        with self._session() as session:
            values = {
                "tenant": tenant,
                "key": key,
                "request_hash": request_hash,
                "owner": token,
                "response": None,
                "claimed_at": now,
                "created_at": now,
            }
            if self._insert_key(session, values):
                return KeyClaim(token=token)
            row = session.get(_IdempotencyRow, (tenant, key), populate_existing=True)
            if row is None:  # released between the insert and the read: the caller retries
                return KeyClaim()
            _same_request(row, request_hash)
            if row.response is not None:
                return KeyClaim(response=_response(row.response))
            if as_utc(row.claimed_at) > now - timedelta(seconds=lease_s):
                return KeyClaim()
            stale = row.owner
            taken = session.connection().execute(
                update(_IdempotencyRow)
                .where(*_held_claim(tenant, key, stale))
                .values(owner=token, claimed_at=now)
            )
            if _rowcount(taken) == 1:
                return KeyClaim(token=token, taken_over=stale)
            return KeyClaim()

    def release(self, tenant: str, key: str, token: str) -> None:
        """Give up a claim whose request failed (nothing of it was kept): a retry runs again."""
        with self._session() as session:
            session.execute(delete(_IdempotencyRow).where(*_held_claim(tenant, key, token)))

    def save_reply(
        self,
        tenant: str,
        key: str,
        request_hash: str,
        response: dict[str, Any],
        *,
        token: str | None = None,
    ) -> None:
        """Keep the response to an idempotent request (what :meth:`replay` returns later).
        With the ``token`` of a :meth:`claim`, answers that claim; it must still be held."""
        now = datetime.now(UTC)
        body = json.dumps(response)
        if token is not None:
            with self._session() as session:
                answered = session.connection().execute(
                    update(_IdempotencyRow)
                    .where(*_held_claim(tenant, key, token))
                    .values(response=body, owner=None)
                )
                if _rowcount(answered) == 1:
                    return
            raise IdempotencyConflictError(
                "this Idempotency-Key was taken over by another request (its lease ran out)"
            )
        try:
            with self._session() as session:
                session.add(
                    _IdempotencyRow(
                        tenant=tenant,
                        key=key,
                        request_hash=request_hash,
                        owner=None,
                        response=body,
                        claimed_at=now,
                        created_at=now,
                    )
                )
        except IntegrityError as exc:
            raise IdempotencyConflictError(
                "this Idempotency-Key was used concurrently by another request"
            ) from exc

    def ping(self) -> None:
        """Raise if the database cannot be reached (readiness)."""
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def scope_lock(self, tenant: str, scope_key: str) -> ScopeLock | None:
        """A :class:`ScopeLock` on PostgreSQL (replicas share it); None on SQLite."""
        if self.dialect != "postgresql":
            return None
        return ScopeLock(self.lock_engine(), scope_lock_key(tenant, scope_key))

    def lock_engine(self) -> Engine:
        """The engine whose connections hold scope locks (PostgreSQL), apart from the log's:
        a held lock keeps its connection for the whole write, and the write needs the log's."""
        with self._lock_engine_guard:
            if self._lock_engine is None:
                self._lock_engine = create_engine(
                    self.engine.url, pool_pre_ping=True, pool_size=16, max_overflow=48,
                    pool_timeout=10.0,
                )  # fmt: skip
            return self._lock_engine

    def close(self) -> None:
        self.engine.dispose()
        if self._lock_engine is not None:
            self._lock_engine.dispose()


class ScopeLock:
    """A write's hold on one tenant's scope across replicas: a PostgreSQL session-level advisory
    lock on a connection of its own, held from the repeat lookup until the write's decision
    rows are committed, so a replica never stores a fact another is storing in the same scope
    (the per-process lock covers one process only). A replica that dies drops its connection,
    and PostgreSQL releases its locks. On SQLite (one host) :meth:`DecisionLog.scope_lock`
    gives none. Its connections come from a pool of their own (:meth:`DecisionLog.lock_engine`):
    taken from the log's pool, 16 writes to 16 scopes held every connection and none could write
    its decision rows."""

    def __init__(self, engine: Engine, key: int) -> None:
        self._engine = engine
        self._key = key
        self._conn: Connection | None = None

    def try_acquire(self) -> bool:
        try:
            conn = self._engine.connect()
        except PoolTimeoutError as exc:  # every lock connection held: as busy as a held lock
            raise BackendUnavailableError(
                "every scope-lock connection is in use (too many writes at once); retry later"
            ) from exc
        try:
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self._key})
                       .scalar_one())  # fmt: skip
            conn.commit()
        except BaseException:
            conn.invalidate()  # the lock may be held on it: never back into the pool
            conn.close()
            raise
        if got:
            self._conn = conn
        else:
            conn.close()
        return got

    def release(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        try:
            conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
            conn.commit()
        except Exception:
            conn.invalidate()  # closed, not pooled: PostgreSQL drops the lock with the session
        finally:
            conn.close()


def log_write_failed(exc: Exception) -> BackendError:
    """The error a write or an edit raises when its decision rows cannot be written (its store
    changes are undone on the way out): retryable when the database cannot be reached, as every
    other call of the drop-in and the sidecar say; a BackendError naming the cause otherwise."""
    if isinstance(exc, DATABASE_DOWN):
        return database_error(exc)
    return BackendError(f"decision log write failed: {type(exc).__name__}")


def scope_lock_key(tenant: str, scope_key: str) -> int:
    """A signed 64-bit advisory-lock key for a tenant's scope (sha256, so keys do not collide
    in practice and no text reaches the lock table)."""
    digest = hashlib.sha256(f"mirage-scope\0{tenant}\0{scope_key}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


async def hold_scope(
    log: DecisionLog, tenant: str, scope_key: str, *, wait_s: float, poll_s: float = 0.02
) -> ScopeLock | None:
    """The scope's cross-replica lock (None on SQLite), waiting up to ``wait_s`` while another
    replica's write holds it; then BackendUnavailableError (503: retry)."""
    lock = log.scope_lock(tenant, scope_key)
    if lock is None:
        return None
    deadline = anyio.current_time() + wait_s
    while not await anyio.to_thread.run_sync(lock.try_acquire):
        if anyio.current_time() >= deadline:
            raise BackendUnavailableError(
                f"another replica has been writing to this scope for {wait_s:g} s; retry later"
            )
        await anyio.sleep(poll_s)
    return lock


async def let_go(lock: ScopeLock | None) -> None:
    """Release a lock :func:`hold_scope` gave, shielded: a cancelled write still lets its scope
    go (its connection would otherwise hold the lock until the pool closed it)."""
    if lock is not None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(lock.release)


async def claim_key(
    log: DecisionLog,
    tenant: str,
    key: str,
    request_hash: str,
    *,
    lease_s: float,
    wait_s: float,
    poll_s: float = 0.1,
) -> KeyClaim:
    """:meth:`DecisionLog.claim`, waiting up to ``wait_s`` while another request (in this
    process or another replica) holds the key; then IdempotencyInProgressError (retry later)."""
    deadline = anyio.current_time() + wait_s
    while True:
        claim = await anyio.to_thread.run_sync(
            functools.partial(log.claim, tenant, key, request_hash, lease_s=lease_s)
        )
        if not claim.busy:
            return claim
        if anyio.current_time() >= deadline:
            raise IdempotencyInProgressError(
                "another request with this Idempotency-Key is still running; retry later"
            )
        await anyio.sleep(poll_s)


def sqlalchemy_url(url: str) -> URL:
    """A database URL for SQLAlchemy: ``postgresql://`` (libpq's form, what Mem0's pgvector and
    ``psql`` take) uses psycopg 3, the driver of the ``postgres`` extra."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def sqlite_file(url: URL) -> Path | None:
    """The file of a SQLite URL (None: in memory): its database, or for a URI filename
    (``sqlite:///file:/path/log.db?mode=ro&uri=true``) the path inside it."""
    db = url.database
    if not db or db == ":memory:":
        return None
    if str(url.query.get("uri", "")).lower() in ("true", "1") and db.startswith("file:"):
        path = db.removeprefix("file:").removeprefix("//")
        return None if not path or path == ":memory:" else Path(path)
    return Path(db)


_SCHEMA_LOCK = 0x6D697261  # "mira": one replica creates the tables while the others wait


def _create_tables(engine: Engine, names: Sequence[str] | None = None) -> None:
    """Create the log's tables that are missing (``names``: only these; default every table but
    the audit labels')."""
    tables = [
        t
        for t in _Base.metadata.sorted_tables
        if (t.name in names if names is not None else t.name != AUDIT_TABLE)
    ]
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
            _Base.metadata.create_all(conn, tables=tables)
        return
    for attempt in range(5):  # SQLite: processes opening one new file race on CREATE TABLE
        try:
            _Base.metadata.create_all(engine, tables=tables)
            return
        except OperationalError as exc:
            if "already exists" not in str(exc) or attempt == 4:
                raise


def _audit_table(engine: Engine, *, create: bool) -> bool:
    """Whether decisions' audit labels can be kept in (``create``: written to) this log: its
    table is there (created first when ``create``), with every column this version writes, and
    on PostgreSQL this role may read it (and write it, when ``create``). A log where they cannot
    (read-only, a role without CREATE or without the grant, a table of another shape) is used
    without labels: a warning, never a failure to start or a failed write."""
    try:
        if create:
            _create_tables(engine, [AUDIT_TABLE])
        why = _audit_table_unusable(engine, write=create)
    except SQLAlchemyError as exc:
        if database_down(exc):
            raise
        why = _first_line(exc)
    if why is None:
        return True
    if create or why != "no such table":  # a reader of an older log: nothing to say
        _log.warning(
            "the decision log's table %s cannot be used (%s): decisions are logged without "
            "their self-audit labels, so `mirage report label-sample --verdicts-out` has none "
            "to write; as the log's owner, create it (open the log once with a role that may) "
            "and GRANT SELECT, INSERT ON %s to the role the guard connects as",
            AUDIT_TABLE,
            why,
            AUDIT_TABLE,
        )
    return False


def _audit_table_unusable(engine: Engine, *, write: bool) -> str | None:
    """Why the audit labels' table cannot be used (None: it can)."""
    found = inspect(engine)
    if not found.has_table(AUDIT_TABLE):
        return "no such table"
    columns = {c["name"] for c in found.get_columns(AUDIT_TABLE)}
    missing = sorted(set(_AuditRow.__table__.columns.keys()) - columns)
    if missing:
        return f"it has no column {', '.join(missing)}"
    if engine.dialect.name != "postgresql":
        return None
    wanted = ("SELECT", "INSERT") if write else ("SELECT",)
    with engine.connect() as conn:
        denied = [
            w
            for w in wanted
            if not conn.execute(
                text("SELECT has_table_privilege(current_user, :t, :p)"),
                {"t": AUDIT_TABLE, "p": w},
            ).scalar()
        ]
    return f"this role has no {' or '.join(denied)} privilege on it" if denied else None


def _held_claim(tenant: str, key: str, owner: str | None) -> tuple[ColumnElement[bool], ...]:
    """The row of a key still claimed by ``owner`` and not answered yet."""
    return (
        _IdempotencyRow.tenant == tenant,
        _IdempotencyRow.key == key,
        _IdempotencyRow.owner == owner,
        _IdempotencyRow.response.is_(None),
    )


def _rowcount(result: CursorResult[Any]) -> int:
    return int(result.rowcount)


def _same_request(row: _IdempotencyRow, request_hash: str) -> None:
    if row.request_hash != request_hash:
        raise IdempotencyConflictError(
            "this Idempotency-Key was already used for a different request"
        )


def _response(body: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(body)
    return data


# how long a new connection keeps trying to switch a file another connection holds to WAL
_WAL_SWITCH_S = 10.0


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # replicas opening one new file together: switching it to WAL needs the file to itself, and
    # SQLite answers "database is locked" at once instead of waiting (seen in CI), so retry
    deadline = time.monotonic() + _WAL_SWITCH_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


_S = TypeVar("_S", bound=Select[Any])


def _in_window(stmt: _S, since: datetime | None, until: datetime | None) -> _S:
    """``stmt`` limited to decisions made in [since, until]."""
    if since is not None:
        stmt = stmt.where(_DecisionRow.created_at >= as_utc(since))
    if until is not None:
        stmt = stmt.where(_DecisionRow.created_at <= as_utc(until))
    return stmt


def _conversation(row: _DecisionRow) -> str:
    return MemoryScope(user_id=row.user_id, agent_id=row.agent_id, run_id=row.run_id).key()


def _logged(
    row: _DecisionRow, turn_text: str | None, audit: _AuditRow | None = None
) -> LoggedDecision:
    return LoggedDecision(
        id=row.id,
        tenant=row.tenant,
        user_id=row.user_id,
        agent_id=row.agent_id,
        run_id=row.run_id,
        request_id=row.request_id,
        candidate_id=row.candidate_id,
        candidate_text=row.candidate_text,
        provenance=Provenance(row.provenance),
        action=Action(row.action),
        status=row.status,
        source_turn_id=row.source_turn_id,
        source_turn_text=turn_text,
        similarity=row.similarity,
        score=row.score,
        threshold=row.threshold,
        profile_id=row.profile_id,
        calibrated=row.calibrated,
        reasons=list(row.reasons),
        memory_id=row.memory_id,
        writer_model=row.writer_model,
        created_at=as_utc(row.created_at),
        audit=_logged_audit(audit, row.candidate_id) if audit is not None else None,
    )


def _logged_audit(a: _AuditRow, candidate_id: str) -> LoggedAudit:
    return LoggedAudit(
        source=AuditSource(model=a.labeller_model, prompt_version=a.prompt_version, mode=a.mode),
        verdict=AuditVerdict(
            candidate_id=candidate_id,
            label=a.label,
            confidence=a.confidence,
            source_turn_id=a.source_turn_id,
            quote=a.quote,
            quote_check=a.quote_check,
        ),
        turn_ids=list(a.turn_ids or []),
    )


__all__ = [
    "AUDIT_TABLE",
    "DATABASE_DOWN",
    "DEFAULT_TENANT",
    "DecisionLog",
    "DecisionQuery",
    "KeyClaim",
    "LoggedAudit",
    "LoggedDecision",
    "MemoryScope",
    "ScopeLock",
    "WrittenDecision",
    "claim_key",
    "database_down",
    "database_error",
    "hold_scope",
    "let_go",
    "log_write_failed",
    "sqlalchemy_url",
    "sqlite_file",
]
