"""The decision log shared by replicas: idempotency claims, turns and schema creation are correct
across processes without any process-local lock (SQLite file and a real PostgreSQL server).

Two :class:`DecisionLog` objects on one database stand for two replicas: each has its own engine
and connection pool, so nothing in Python serialises them; only the database does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import anyio
import pytest

from mirage_guard.adapters import DecisionLog, KeyClaim, MemoryScope, WrittenDecision
from mirage_guard.adapters._decision_log import claim_key, hold_scope
from mirage_guard.guard._domain import Role, Turn
from mirage_guard.guard.errors import (
    BackendUnavailableError,
    IdempotencyConflictError,
    IdempotencyInProgressError,
    InputError,
)

ALICE = MemoryScope(user_id="alice")


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'log.db'}"
    url: str = request.getfixturevalue("postgres_url")
    return url


@pytest.fixture
def replicas(url: str) -> Iterator[Callable[[], DecisionLog]]:
    opened: list[DecisionLog] = []

    def open_one() -> DecisionLog:
        opened.append(DecisionLog(url))
        return opened[-1]

    yield open_one
    for log in opened:
        log.close()


def _race(n: int, fn: Callable[[int], KeyClaim]) -> list[KeyClaim]:
    start = threading.Barrier(n)

    def run(i: int) -> KeyClaim:
        start.wait()
        return fn(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(run, range(n)))


def test_tables_are_created_by_replicas_starting_together(url: str) -> None:
    start = threading.Barrier(4)

    def open_one(_: int) -> DecisionLog:
        start.wait()
        return DecisionLog(url)

    with ThreadPoolExecutor(4) as pool:
        logs = list(pool.map(open_one, range(4)))
    for log in logs:
        log.ping()
        log.close()


def test_one_claim_wins_a_key_across_replicas(replicas: Callable[[], DecisionLog]) -> None:
    a, b = replicas(), replicas()
    claims = _race(12, lambda i: (a if i % 2 else b).claim("acme", "k1", "h", lease_s=60))
    owners = [c for c in claims if c.token is not None]
    assert len(owners) == 1
    assert all(c.busy for c in claims if c is not owners[0])
    (owner,) = owners
    assert owner.token is not None
    a.save_reply("acme", "k1", "h", {"results": ["m1"]}, token=owner.token)
    assert b.claim("acme", "k1", "h", lease_s=60) == KeyClaim(response={"results": ["m1"]})
    assert a.replay("acme", "k1", "h") == {"results": ["m1"]}
    with pytest.raises(IdempotencyConflictError):
        b.claim("acme", "k1", "another body", lease_s=60)
    # keys are per tenant
    assert b.claim("other", "k1", "h", lease_s=60).token is not None


def test_a_released_key_runs_again(replicas: Callable[[], DecisionLog]) -> None:
    a, b = replicas(), replicas()
    first = a.claim("acme", "k", "h", lease_s=60)
    assert first.token is not None
    assert b.claim("acme", "k", "h", lease_s=60).busy
    a.release("acme", "k", first.token)
    assert b.claim("acme", "k", "h", lease_s=60).token is not None


def test_a_dead_owner_is_taken_over_once_its_lease_ran_out(
    replicas: Callable[[], DecisionLog],
) -> None:
    a, b = replicas(), replicas()
    dead = a.claim("acme", "k", "h", lease_s=60)
    assert dead.token is not None
    assert b.claim("acme", "k", "h", lease_s=60).busy  # still within its lease
    time.sleep(0.6)
    # its lease (0.5 s) ran out; the winner's fresh claim holds against the others
    takeovers = _race(6, lambda i: (a if i % 2 else b).claim("acme", "k", "h", lease_s=0.5))
    winners = [c for c in takeovers if c.token is not None]
    assert len(winners) == 1
    assert winners[0].taken_over == dead.token
    # the dead owner cannot answer any more: its answer would be a second write
    with pytest.raises(IdempotencyConflictError):
        a.save_reply("acme", "k", "h", {"results": []}, token=dead.token)
    assert winners[0].token is not None
    b.save_reply("acme", "k", "h", {"results": ["m2"]}, token=winners[0].token)
    assert a.replay("acme", "k", "h") == {"results": ["m2"]}


async def test_claim_key_waits_for_the_holder_then_replays(
    replicas: Callable[[], DecisionLog],
) -> None:
    a, b = replicas(), replicas()
    held = a.claim("acme", "k", "h", lease_s=60)
    assert held.token is not None
    token = held.token

    async def answer_later() -> None:
        await anyio.sleep(0.3)
        await anyio.to_thread.run_sync(
            lambda: a.save_reply("acme", "k", "h", {"results": ["m"]}, token=token)
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(answer_later)
        got = await claim_key(b, "acme", "k", "h", lease_s=60, wait_s=30, poll_s=0.05)
    assert got.response == {"results": ["m"]}
    a.claim("acme", "busy", "h", lease_s=60)
    with pytest.raises(IdempotencyInProgressError) as info:
        await claim_key(b, "acme", "busy", "h", lease_s=60, wait_s=0.2, poll_s=0.05)
    assert info.value.retryable


def test_the_same_turn_stored_by_two_replicas_is_kept_once(
    replicas: Callable[[], DecisionLog],
) -> None:
    a, b = replicas(), replicas()
    turn = Turn(id="t1", role=Role.USER, content="I like tea")

    def record(i: int) -> KeyClaim:
        (a if i % 2 else b).record(
            tenant="acme",
            scope=ALICE,
            turns=[turn],
            written=list[WrittenDecision](),
            request_id=f"r{i}",
            writer_model=None,
        )
        return KeyClaim()

    _race(8, record)
    assert a.turns("acme", ALICE) == [turn]
    with pytest.raises(InputError):
        b.record(
            tenant="acme",
            scope=ALICE,
            turns=[Turn(id="t1", role=Role.USER, content="I like coffee")],
            written=[],
            request_id="r-x",
            writer_model=None,
        )


def test_a_conversations_turns_come_back_in_the_order_they_were_written(
    replicas: Callable[[], DecisionLog],
) -> None:
    """The guard reads the order (a later correction makes an earlier fact stale), and turn ids
    need not sort as strings: twelve turns written at once came back "t1", "t10", "t11", ..."""
    log = replicas()
    first = [Turn(id=f"t{i}", role=Role.USER, content=f"message {i}") for i in range(1, 13)]
    log.record(
        tenant="acme", scope=ALICE, turns=first, written=[], request_id="r1", writer_model=None
    )
    # a Mem0 client sends the whole history again with two new turns
    later = [*first, *(Turn(id=f"t{i}", role=Role.USER, content=f"message {i}") for i in (13, 14))]
    log.record(
        tenant="acme", scope=ALICE, turns=later, written=[], request_id="r2", writer_model=None
    )
    assert [t.id for t in replicas().turns("acme", ALICE)] == [f"t{i}" for i in range(1, 15)]


@pytest.mark.postgres
async def test_a_scope_is_held_by_one_replica_at_a_time(postgres_url: str) -> None:
    """Two replicas writing to one scope: the second waits for the first's lock (its store writes
    and decision rows), then takes it; another scope or tenant is never held up; a lock is gone
    with its connection when a replica dies."""
    a, b = DecisionLog(postgres_url), DecisionLog(postgres_url)
    try:
        held = await hold_scope(a, "t", ALICE.key(), wait_s=1.0)
        assert held is not None
        with pytest.raises(BackendUnavailableError, match="another replica"):
            await hold_scope(b, "t", ALICE.key(), wait_s=0.2)
        for tenant, scope in (("t", MemoryScope(user_id="bob")), ("u", ALICE)):
            other = await hold_scope(b, tenant, scope.key(), wait_s=0.0)
            assert other is not None
            other.release()
        held.release()
        again = await hold_scope(b, "t", ALICE.key(), wait_s=0.0)
        assert again is not None
        assert again._conn is not None
        again._conn.invalidate()  # the replica holding it dies: its session ends, and its lock
        taken = await hold_scope(a, "t", ALICE.key(), wait_s=1.0)
        assert taken is not None
        taken.release()
    finally:
        a.close()
        b.close()


def test_sqlite_needs_no_lock_across_replicas(tmp_path: Path) -> None:
    log = DecisionLog(f"sqlite:///{tmp_path / 'log.db'}")
    assert log.scope_lock("t", ALICE.key()) is None
    log.close()


@pytest.mark.postgres
async def test_scope_locks_do_not_starve_the_log_of_connections(postgres_url: str) -> None:
    """Each held lock keeps a connection for its write; taken from the log's pool (8 + 8), 16
    writes to 16 scopes held all of them and every write timed out on its decision rows."""
    log = DecisionLog(postgres_url)
    try:
        held = [await hold_scope(log, "t", f"user:{i}", wait_s=1.0) for i in range(24)]
        assert all(h is not None for h in held)
        start = time.perf_counter()
        with ThreadPoolExecutor(8) as pool:  # the writes' own log work, while every lock is held
            list(pool.map(lambda i: log.turns("t", MemoryScope(user_id=f"u{i}")), range(24)))
        assert time.perf_counter() - start < 5.0
        for h in held:
            assert h is not None
            h.release()
    finally:
        log.close()
