"""Write intents and reconciliation (issue 9.2), in-process: a crash is simulated by a process
that stops between the store writes and the done transaction (undo never runs), on the fake
store and a real SQLite decision log. The subprocess kill -9 test is tests/server/."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from mirage_guard.adapters import TENANT_KEY, AsyncGuardedMemory
from mirage_guard.adapters._backend import WRITE_KEY
from mirage_guard.adapters._decision_log import DecisionLog, DecisionQuery, _IdempotencyRow
from mirage_guard.adapters._doctor import examine, repair
from mirage_guard.adapters._outbox import IdempotentCall, Outbox, idempotent_call, outbox_for
from mirage_guard.adapters._reconcile import reconcile
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.adapters._write import GuardedWrite
from mirage_guard.guard.errors import BackendUnavailableError
from tests.fakes.mem0 import InMemoryStore

Build = Callable[..., AsyncGuardedMemory]
TWO_FACTS = [
    {"id": "t1", "role": "user", "content": "I keep bees on the roof."},
    {"id": "t2", "role": "user", "content": "My sister lives in Porto."},
]


class Killed(BaseException):
    """The process died here: no undo, no reply."""


@pytest.fixture
def crash_before_done(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every guarded write dies after its store writes, before its done transaction."""

    async def no_undo(self: GuardedWrite) -> None:
        return None

    def die(*args: Any, **kwargs: Any) -> None:
        raise Killed

    monkeypatch.setattr(GuardedWrite, "undo", no_undo)
    monkeypatch.setattr(Outbox, "complete", die)


def _claim(log: DecisionLog, tenant: str, key: str) -> IdempotentCall:
    claim = log.claim(tenant, key, "h", lease_s=120)
    assert claim.token is not None
    return IdempotentCall(key=key, request_hash="h", token=claim.token)


def _decision_memory_ids(log: DecisionLog, tenant: str) -> set[str]:
    return {d.memory_id for d in log.query(tenant, DecisionQuery(limit=1000)) if d.memory_id}


async def test_an_intent_is_committed_before_the_first_store_write(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog, crash_before_done: None
) -> None:
    memory = build_memory()
    with pytest.raises(Killed):
        await memory.add(TWO_FACTS, user_id="alice", infer=False)
    [intent] = outbox_for(decision_log).pending()
    assert intent.tenant == "default"
    assert intent.scope == MemoryScope(user_id="alice")
    assert [t.id for t in intent.turns] == ["t1", "t2"]
    planned = intent.planned_keys()
    assert len(planned) == 2
    stored = {i["metadata"][WRITE_KEY] for i in store.items.values()}
    assert stored == set(planned)  # every stored fact carries its write key
    assert decision_log.query("default") == []  # not yet explained: the crash came first


async def test_reconcile_completes_an_intent_whose_facts_are_all_stored(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = build_memory()
    call = _claim(decision_log, "default", "key-1")
    with monkeypatch.context() as m:
        m.setattr(GuardedWrite, "undo", lambda self: _nothing())
        m.setattr(Outbox, "complete", lambda *a, **k: (_ for _ in ()).throw(Killed))
        with idempotent_call(call), pytest.raises(Killed):
            await memory.add(TWO_FACTS, user_id="alice", infer=False)
    report = await reconcile(store, decision_log)
    assert len(report.completed) == 1
    assert report.clean
    assert outbox_for(decision_log).pending() == []
    assert _decision_memory_ids(decision_log, "default") == set(store.items)
    replay = decision_log.replay("default", "key-1", "h")  # the retry gets the reply
    assert replay is not None
    assert {r["id"] for r in replay["results"]} == set(store.items)


async def _nothing() -> None:
    return None


async def test_reconcile_removes_a_partial_write_and_frees_its_key(
    build_memory: Build, decision_log: DecisionLog, crash_before_done: None
) -> None:
    store = InMemoryStore(fail_on_add=2)  # the second fact never reaches the store
    memory = build_memory(backend=store)
    call = _claim(decision_log, "default", "key-2")
    with idempotent_call(call), pytest.raises(BackendUnavailableError):
        await memory.add(TWO_FACTS, user_id="alice", infer=False)
    assert len(store.items) == 1  # an orphan, were it not for the intent
    store.fail_on_add = None
    report = await reconcile(store, decision_log)
    assert len(report.removed) == 1
    assert store.items == {}
    assert outbox_for(decision_log).pending() == []
    with decision_log._sessions() as session:  # a retry may run again at once
        assert session.get(_IdempotencyRow, ("default", "key-2")) is None


async def test_a_retried_key_removes_what_its_dead_attempt_stored_before_writing_again(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = build_memory()
    with monkeypatch.context() as m:
        m.setattr(GuardedWrite, "undo", lambda self: _nothing())
        m.setattr(Outbox, "complete", lambda *a, **k: (_ for _ in ()).throw(Killed))
        with idempotent_call(IdempotentCall(key="key-3", request_hash="h")), pytest.raises(Killed):
            await memory.add(TWO_FACTS, user_id="alice", infer=False)
    first = set(store.items)
    # no reconciliation ran (a replica still up); the key's lease ran out and this retry holds it
    call = IdempotentCall(key="key-3", request_hash="h")
    with idempotent_call(call):
        result = await memory.add(TWO_FACTS, user_id="alice", infer=False)
    assert call.answered
    texts = sorted(i["memory"] for i in store.items.values())
    assert texts == sorted(t["content"] for t in TWO_FACTS)  # once each
    assert not first & set(store.items)
    assert _decision_memory_ids(decision_log, "default") == set(store.items)
    assert json.loads(json.dumps(result))["results"]


async def test_done_transaction_answers_the_key_with_the_reply(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    memory = build_memory()
    call = _claim(decision_log, "default", "key-4")
    with idempotent_call(call):
        result = await memory.add(TWO_FACTS, user_id="alice", infer=False)
    assert call.answered
    assert decision_log.replay("default", "key-4", "h") == json.loads(json.dumps(result))
    assert outbox_for(decision_log).pending() == []
    [request_id] = {d.request_id for d in decision_log.query("default")}
    assert len(request_id) == 32  # the intent's id


async def test_tenant_reset_deletes_what_the_store_holds_not_only_what_the_log_knows(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    tenant_a = build_memory().for_tenant("tenant-a")
    tenant_b = build_memory().for_tenant("tenant-b")
    await tenant_a.add(TWO_FACTS, user_id="alice", infer=False)
    await tenant_b.add(TWO_FACTS, user_id="bob", infer=False)
    # an orphan of tenant-a the log never heard of (e.g. left by an older version's crash)
    await store.add(
        [{"role": "user", "content": "orphan"}],
        scope=MemoryScope(user_id="carol"),
        metadata={TENANT_KEY: "tenant-a", "status": "fact"},
    )
    await tenant_a.reset()
    left = [i["metadata"][TENANT_KEY] for i in store.items.values()]
    assert left == ["tenant-b", "tenant-b"]


async def test_release_dead_claims_frees_keys_of_requests_that_stored_nothing(
    decision_log: DecisionLog, store: InMemoryStore
) -> None:
    _claim(decision_log, "default", "key-5")
    report = await reconcile(store, decision_log)
    assert report.released_keys == 1
    assert decision_log.claim("default", "key-5", "h", lease_s=120).token is not None


async def test_doctor_reports_each_kind_of_problem_and_repair_fixes_them(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = build_memory().for_tenant("tenant-a")
    kept = await memory.add(TWO_FACTS, user_id="alice", infer=False)
    # a pending intent (the writer died after its store writes)
    with monkeypatch.context() as m:
        m.setattr(GuardedWrite, "undo", lambda self: _nothing())
        m.setattr(Outbox, "complete", lambda *a, **k: (_ for _ in ()).throw(Killed))
        with pytest.raises(Killed):
            await memory.add([{"id": "t9", "role": "user", "content": "I fly kites."}],
                             user_id="alice", infer=False)  # fmt: skip
    # an orphan (no decision row, no intent) and a memory deleted behind the guard's back
    [orphan] = await store.add(
        [{"role": "user", "content": "unexplained"}],
        scope=MemoryScope(user_id="alice"),
        metadata={TENANT_KEY: "tenant-a", "status": "fact"},
    )
    lost = kept["results"][0]["id"]
    del store.items[lost]
    deleted = kept["results"][1]["id"]
    await memory.delete(deleted)  # on purpose: not a problem
    await store.add([{"role": "user", "content": "not ours"}], scope=MemoryScope(user_id="x"))

    found = await examine(store, decision_log)
    [health] = found.tenants
    assert health.orphans == [orphan["id"]]
    assert len(health.pending_intents) == 1
    assert health.gone == [lost]
    assert found.foreign == 1
    assert found.problems == 3

    fixed = await repair(store, decision_log)
    assert fixed.problems == 0
    assert fixed.repaired["orphans_deleted"] == 1
    assert fixed.repaired["intents_completed"] == 1  # its one fact was stored: completed
    assert fixed.repaired["gone_recorded"] == 1
    assert orphan["id"] not in store.items
    assert (await examine(store, decision_log)).problems == 0
