"""Mem0's change history in PostgreSQL, so every replica answers ``history`` for every memory.

``mem0.Memory`` keeps its history (ADD / UPDATE / DELETE events, ``Memory.history``) in a SQLite
file through ``SQLiteManager``; on pgvector each replica would see only the changes made through
it. :class:`SQLHistory` has the same methods and stores them in two tables of any SQLAlchemy
database (``<collection>_history``, ``<collection>_messages``); :func:`use_sql_history` puts it
in a Memory in place of the SQLite manager (again after ``Memory.reset()``, which reopens SQLite).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    Column,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    delete,
    insert,
    select,
    text,
)
from sqlalchemy.engine import Engine

from mirage_guard.adapters._decision_log import sqlalchemy_url

_SCHEMA_LOCK = 0x6D306869  # "m0hi"


class SQLHistory:
    """``SQLiteManager``'s interface (what ``mem0.Memory`` calls on ``memory.db``) over SQL."""

    def __init__(self, url: str, *, prefix: str) -> None:
        self.engine: Engine = create_engine(
            sqlalchemy_url(url), pool_pre_ping=True, pool_size=4, max_overflow=4
        )
        meta = MetaData()
        self.history = Table(
            f"{prefix}_history",
            meta,
            Column("id", String(36), primary_key=True),
            Column("memory_id", String(64), index=True),
            Column("old_memory", Text),
            Column("new_memory", Text),
            Column("event", String(16)),
            Column("created_at", String(40)),
            Column("updated_at", String(40)),
            Column("is_deleted", Integer),
            Column("actor_id", String(200)),
            Column("role", String(20)),
            Column("seq", String(40)),  # insertion time: orders events with equal timestamps
        )
        self.messages = Table(
            f"{prefix}_messages",
            meta,
            Column("id", String(36), primary_key=True),
            Column("session_scope", String(700), index=True),
            Column("role", String(20)),
            Column("content", Text),
            Column("name", String(200)),
            Column("created_at", String(40)),
        )
        self._meta = meta
        with self.engine.begin() as conn:
            if conn.dialect.name == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK})
            meta.create_all(conn)
        self._open = True

    def _row(self, record: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": str(uuid.uuid4()),
            "memory_id": record.get("memory_id"),
            "old_memory": record.get("old_memory"),
            "new_memory": record.get("new_memory"),
            "event": record.get("event"),
            "created_at": record.get("created_at"),
            "updated_at": record.get("updated_at"),
            "is_deleted": int(record.get("is_deleted", 0) or 0),
            "actor_id": record.get("actor_id"),
            "role": record.get("role"),
            "seq": datetime.now(UTC).isoformat(),
        }

    def add_history(
        self,
        memory_id: str,
        old_memory: str | None,
        new_memory: str | None,
        event: str,
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
        is_deleted: int = 0,
        actor_id: str | None = None,
        role: str | None = None,
    ) -> None:
        self.batch_add_history(
            [
                {
                    "memory_id": memory_id,
                    "old_memory": old_memory,
                    "new_memory": new_memory,
                    "event": event,
                    "created_at": created_at,
                    "updated_at": updated_at,
                    "is_deleted": is_deleted,
                    "actor_id": actor_id,
                    "role": role,
                }
            ]
        )

    def batch_add_history(self, records: Sequence[dict[str, Any]]) -> None:
        if not records:
            return
        with self.engine.begin() as conn:
            conn.execute(insert(self.history), [self._row(r) for r in records])

    def get_history(self, memory_id: str) -> list[dict[str, Any]]:
        h = self.history
        stmt = select(h).where(h.c.memory_id == memory_id).order_by(h.c.seq.asc(), h.c.id.asc())
        with self.engine.connect() as conn:
            rows = conn.execute(stmt).mappings().all()
        return [
            {
                "id": r["id"],
                "memory_id": r["memory_id"],
                "old_memory": r["old_memory"],
                "new_memory": r["new_memory"],
                "event": r["event"],
                "created_at": r["created_at"],
                "updated_at": r["updated_at"],
                "is_deleted": bool(r["is_deleted"]),
                "actor_id": r["actor_id"],
                "role": r["role"],
            }
            for r in rows
        ]

    def save_messages(self, messages: Sequence[dict[str, Any]], session_scope: str) -> None:
        if not messages:
            return
        now = datetime.now(UTC).isoformat()
        m = self.messages
        with self.engine.begin() as conn:
            conn.execute(
                insert(m),
                [
                    {
                        "id": str(uuid.uuid4()),
                        "session_scope": session_scope,
                        "role": msg.get("role"),
                        "content": msg.get("content"),
                        "name": msg.get("name"),
                        "created_at": now,
                    }
                    for msg in messages
                ],
            )
            keep = (
                select(m.c.id)
                .where(m.c.session_scope == session_scope)
                .order_by(m.c.created_at.desc())
                .limit(10)
                .scalar_subquery()
            )
            conn.execute(delete(m).where(m.c.session_scope == session_scope, m.c.id.not_in(keep)))

    def get_last_messages(self, session_scope: str, limit: int = 10) -> list[dict[str, Any]]:
        m = self.messages
        stmt = (
            select(m.c.role, m.c.content, m.c.name, m.c.created_at)
            .where(m.c.session_scope == session_scope)
            .order_by(m.c.created_at.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(stmt).mappings().all()
        return [dict(r) for r in reversed(rows)]

    def reset(self) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(self.history))
            conn.execute(delete(self.messages))

    def close(self) -> None:
        if self._open:
            self._open = False
            self.engine.dispose()


def use_sql_history(memory: Any, history: SQLHistory) -> None:
    """Put ``history`` in ``memory`` in place of Mem0's SQLite history manager."""
    old = getattr(memory, "db", None)
    memory.db = history
    if old is not None and old is not history and hasattr(old, "close"):
        old.close()


__all__ = ["SQLHistory", "use_sql_history"]
