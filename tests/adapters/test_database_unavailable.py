"""The drop-in's decision-log database going away is a retryable ``DatabaseUnavailableError``.

It reached drop-in callers as SQLAlchemy's own ``OperationalError`` (only the sidecar mapped it,
to a 503), so an app's ``except MirageError`` missed it; and a write whose log rows failed was a
``BackendError`` that said no retry could help. Now every public method of the memory raises the
typed error with SQLAlchemy's as its cause, nothing is left written, and the sidecar answers 503
``database_unavailable`` for it wherever in a write the database went away.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from mirage_guard.adapters import AsyncGuardedMemory, GuardedMemory
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._outbox import outbox_for
from mirage_guard.guard.errors import (
    BackendError,
    BackendUnavailableError,
    DatabaseUnavailableError,
    MirageError,
)
from tests.fakes.mem0 import InMemoryStore

Build = Callable[..., AsyncGuardedMemory]
MESSAGES = [{"role": "user", "content": "I keep bees on my roof."}]


async def _stored(memory: AsyncGuardedMemory) -> str:
    """The id of the one fact of MESSAGES, stored while the log is up."""
    added = await memory.add(MESSAGES, user_id="alice", infer=False)
    return str(added["results"][0]["id"])


def _refused(*args: Any, **kwargs: Any) -> Any:
    raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))


def _pool_full(*args: Any, **kwargs: Any) -> Any:
    raise PoolTimeoutError("QueuePool limit of size 8 overflow 8 reached")


@pytest.mark.parametrize("down", [_refused, _pool_full], ids=["refused", "pool-full"])
async def test_an_add_while_the_log_is_down_is_retryable_and_typed(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
    down: Callable[..., Any],
) -> None:
    monkeypatch.setattr(decision_log, "_sessions", down)  # every query of the log
    memory = build_memory()
    with pytest.raises(DatabaseUnavailableError) as raised:
        await memory.add(MESSAGES, user_id="alice", infer=False)
    assert raised.value.retryable is True
    assert isinstance(raised.value, MirageError)
    assert isinstance(raised.value.__cause__, OperationalError | PoolTimeoutError)
    assert str(raised.value) == "the decision log's database is unavailable; retry later"
    assert store.items == {}


async def test_the_log_going_away_mid_write_undoes_it_and_says_retry(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The facts are in the store when the decision rows fail: they are removed, and the error
    says a retry can help (it was ``BackendError``, retryable false)."""
    monkeypatch.setattr(decision_log, "_store_turns", _refused)  # inside the done transaction
    memory = build_memory()
    with pytest.raises(DatabaseUnavailableError) as raised:
        await memory.add(MESSAGES, user_id="alice", infer=False)
    assert raised.value.retryable is True
    assert store.items == {}
    assert outbox_for(decision_log).pending() == []


async def test_a_log_failure_that_is_not_an_outage_stays_a_backend_error(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug, not an outage")

    monkeypatch.setattr(decision_log, "_store_turns", broken)
    memory = build_memory()
    with pytest.raises(BackendError, match="decision log write failed: RuntimeError") as raised:
        await memory.add(MESSAGES, user_id="alice", infer=False)
    assert not isinstance(raised.value, DatabaseUnavailableError)
    assert raised.value.retryable is False
    assert store.items == {}


async def test_every_call_that_reads_the_log_raises_the_typed_error(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = build_memory()
    memory_id = await _stored(memory)
    monkeypatch.setattr(decision_log, "_sessions", _refused)
    calls = {
        "update": lambda: memory.update(memory_id, "I keep three hives."),
        "delete": lambda: memory.delete(memory_id),
        "reconcile": lambda: memory.reconcile(),
    }
    for name, call in calls.items():
        with pytest.raises(DatabaseUnavailableError):
            await call()
        assert memory_id in store.items, name  # nothing was removed


def test_the_sync_drop_in_raises_it_too(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(decision_log, "_sessions", _refused)
    with GuardedMemory(build_memory()) as memory, pytest.raises(DatabaseUnavailableError):
        memory.add(MESSAGES, user_id="alice", infer=False)
    assert store.items == {}


@pytest.mark.slow
@pytest.mark.postgres
def test_a_postgresql_restart_under_the_drop_in(tmp_path: Path) -> None:
    """On a real PostgreSQL + pgvector: stopped under a running drop-in, an add fails with a
    retryable ``MirageError`` (the store or the log, whichever it reaches first), a call that
    reads only the log is a ``DatabaseUnavailableError``; once it is back, the add is stored."""
    from mirage_guard.adapters import LocalPostgres
    from mirage_guard.guard import GuardSettings

    root = Path(tempfile.mkdtemp(prefix="mirage-pg-dropin-"))  # not pytest's 0700 tmp
    pg = LocalPostgres(root=root, durable=False).start()
    try:
        url = pg.create_database("dropin")
        settings = GuardSettings(data_dir=tmp_path / "data", database_url=url, vector_store_url=url)
        with GuardedMemory.from_settings(settings) as memory:
            memory.add(MESSAGES, user_id="u", infer=False)
            pg.stop()
            with pytest.raises(MirageError) as raised:
                memory.add([{"role": "user", "content": "I sing in a choir."}], user_id="v",
                           infer=False)  # fmt: skip
            assert raised.value.retryable is True
            with pytest.raises(DatabaseUnavailableError):  # a call that reads the log alone
                memory.reconcile()
            pg.start()
            for _ in range(3):  # a pooled connection that died with the server: one retry
                try:
                    memory.add([{"role": "user", "content": "I sing in a choir."}],
                               user_id="v", infer=False)  # fmt: skip
                    break
                except (DatabaseUnavailableError, BackendUnavailableError):
                    continue
            listed = memory.get_all(filters={"user_id": "v"})["results"]
            assert [m["memory"] for m in listed] == ["I sing in a choir."]
    finally:
        pg.stop()
        shutil.rmtree(root, ignore_errors=True)


async def test_an_edit_whose_decision_row_fails_is_undone_and_retryable(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = build_memory()
    memory_id = await _stored(memory)
    monkeypatch.setattr(decision_log, "_store_turns", _refused)  # the edit's decision row
    with pytest.raises(DatabaseUnavailableError):
        await memory.update(memory_id, "I keep three hives.")
    assert store.items[memory_id]["memory"] == "I keep bees on my roof."  # undone


def test_opening_the_log_while_its_database_is_down_is_typed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mirage_guard.adapters import _decision_log
    from mirage_guard.guard import GuardSettings

    monkeypatch.setattr(_decision_log, "_create_tables", _refused)
    with pytest.raises(DatabaseUnavailableError):
        DecisionLog.from_settings(GuardSettings(data_dir=tmp_path))


class _WriteDuringReset(InMemoryStore):
    """Another request's write lands while a reset lists the store."""

    def __init__(self) -> None:
        super().__init__()
        self.during: Callable[[], Any] | None = None

    async def scan(self, *, filters: Any, limit: int) -> list[dict[str, Any]]:
        if self.during is not None:
            during, self.during = self.during, None
            await during()
        return await super().scan(filters=filters, limit=limit)


async def test_a_write_the_reset_deletes_is_not_reported_lost(
    build_memory: Build, decision_log: DecisionLog
) -> None:
    """The reset is recorded before it deletes (with the log down nothing is deleted) and again
    when it ends: a memory written while it ran is deleted by it, after the first mark."""
    from mirage_guard.adapters._doctor import examine

    store = _WriteDuringReset()
    memory = build_memory(backend=store)
    isolated = memory.for_tenant("acme")
    await isolated.add(MESSAGES, user_id="alice", infer=False)
    store.during = lambda: isolated.add(
        [{"role": "user", "content": "I sing in a choir."}], user_id="bob", infer=False
    )
    await isolated.reset()
    assert store.items == {}
    report = await examine(store, decision_log)
    assert [h.gone for h in report.tenants] == [[]]


async def test_a_log_sqlite_cannot_use_is_not_reported_as_an_outage(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    """SQLite says "no such table" (a log file of another schema, or its tables dropped) with
    the same OperationalError as an outage; a client told to retry retried forever."""
    import sqlite3

    path = decision_log.engine.url.database
    assert path is not None
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE mirage_decisions")
    memory = build_memory()
    with pytest.raises(BackendError, match="no such table: mirage_decisions") as raised:
        await memory.add(MESSAGES, user_id="alice", infer=False)
    assert not isinstance(raised.value, DatabaseUnavailableError)
    assert raised.value.retryable is False
    assert isinstance(raised.value.__cause__, OperationalError)
    assert store.items == {}  # nothing left written


@pytest.mark.parametrize(
    ("said", "down"),
    [
        ("database is locked", True),
        ("unable to open database file", True),
        ("disk I/O error", True),
        ("no such table: mirage_decisions", False),
        ("table mirage_decisions has no column named status", False),
        ("database disk image is malformed", False),
        ("file is not a database", False),
        ("attempt to write a readonly database", False),
    ],
)
def test_which_sqlite_errors_are_an_outage(said: str, down: bool) -> None:
    import sqlite3

    from mirage_guard.adapters._decision_log import database_down, database_error

    exc = OperationalError("INSERT ...", {}, sqlite3.OperationalError(said))
    assert database_down(exc) is down
    error = database_error(exc)
    assert isinstance(error, DatabaseUnavailableError) is down
    assert error.retryable is down
    if not down:
        assert said in str(error)
    # a server's refusal is an outage whatever it says (PostgreSQL's errors are not SQLite's)
    assert database_down(OperationalError("SELECT 1", {}, ConnectionRefusedError(said)))
