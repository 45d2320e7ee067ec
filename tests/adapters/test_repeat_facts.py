"""A fact the scope already holds, with the same status, is not written again (Mem0 skips such a
repeat by its hash); the decision is still logged, pointing at the memory that holds it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

from mirage_guard.adapters import AsyncGuardedMemory
from mirage_guard.adapters._decision_log import DecisionLog, DecisionQuery
from mirage_guard.adapters._outbox import Outbox, WriteIntent, _IntentRow, outbox_for
from mirage_guard.adapters._reconcile import reconcile
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.adapters._write import GuardedWrite, fact_key
from mirage_guard.guard import Guard, GuardSettings
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore

Build = Callable[..., AsyncGuardedMemory]
TURNS = [{"id": "t1", "role": "user", "content": "I keep bees on the roof."}]


class Killed(BaseException):
    """The process died here: no undo, no reply."""


@contextmanager
def _crash_before_done(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Writes in the block die after their store writes, before their done transaction."""

    async def no_undo(self: GuardedWrite) -> None:
        return None

    def die(*args: Any, **kwargs: Any) -> None:
        raise Killed

    with monkeypatch.context() as m:
        m.setattr(GuardedWrite, "undo", no_undo)
        m.setattr(Outbox, "complete", die)
        yield


def _texts(store: InMemoryStore) -> list[str]:
    return sorted(i["memory"] for i in store.items.values())


@pytest.mark.parametrize(
    ("text", "same"),
    [
        ("Keeps bees on the roof", True),
        ("keeps  bees on the roof.", True),
        ("KEEPS BEES ON THE ROOF!", True),
        ("Keeps bees on the roof garden", False),
        ("Keeps no bees on the roof", False),
    ],
)
def test_fact_key_ignores_case_spacing_and_a_closing_stop_only(text: str, same: bool) -> None:
    assert (fact_key(text) == fact_key("Keeps bees on the roof")) is same


async def test_a_repeated_fact_is_not_written_again(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    memory = build_memory()
    first = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    [item] = first["results"]
    again = await memory.remember(TURNS, ["keeps bees on the roof."], user_id="alice")
    assert again["results"] == []  # no ADD, as Mem0 answers a repeat
    [decision] = again["decisions"]
    assert decision["already_stored"] is True
    assert decision["memory_id"] == item["id"]
    assert decision["status"] == "fact"
    assert _texts(store) == ["Keeps bees on the roof"]
    logged = decision_log.query("default", DecisionQuery(limit=10))
    assert [d.memory_id for d in logged] == [item["id"], item["id"]]  # both decisions kept


async def test_a_verbatim_message_sent_twice_is_stored_once(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    await memory.add(TURNS, user_id="alice", infer=False)
    again = await memory.add(TURNS, user_id="alice", infer=False)
    assert again["results"] == []
    assert _texts(store) == ["I keep bees on the roof."]


async def test_another_scope_tenant_status_or_text_is_written(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    for call in (
        memory.remember(TURNS, ["Keeps bees on the roof"], user_id="bob"),  # another user
        memory.for_tenant("acme").remember(TURNS, ["Keeps bees on the roof"], user_id="alice"),
        memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice", run_id="r1"),
        memory.remember(TURNS, ["Keeps bees on the roof garden"], user_id="alice"),
    ):
        result = await call
        assert len(result["results"]) == 1, result["decisions"]
    # a quarantined copy of a stored fact is another status: written (invisible to search)
    quarantined = await memory.remember(TURNS, ["Has two sisters in Porto"], user_id="alice")
    assert quarantined["decisions"][0]["status"] == "quarantined"
    assert len(store.items) == 6


async def test_a_session_copy_is_not_the_users_fact(
    build_memory: Build, store: InMemoryStore
) -> None:
    """A filter on user_id alone also finds the user's run-scoped items: the fact said in a
    session must not stop the user-level write, or deleting the session would delete the
    user's only copy (found by a tester through the sidecar)."""
    memory = build_memory()
    await memory.add(TURNS, user_id="alice", run_id="session-1", infer=False)
    long_term = await memory.add(TURNS, user_id="alice", infer=False)
    assert len(long_term["results"]) == 1
    await memory.delete_all(run_id="session-1")
    left = await memory.get_all(filters={"user_id": "alice"})
    assert [r["memory"] for r in left["results"]] == ["I keep bees on the roof."]
    assert left["results"][0].get("run_id") is None


async def test_the_same_fact_sent_at_once_is_stored_once(
    build_memory: Build, store: InMemoryStore
) -> None:
    """Writes to one scope look for repeats and store under one lock in a process."""
    memory = build_memory()
    results: list[dict[str, Any]] = []

    async def send() -> None:
        results.append(await memory.add(TURNS, user_id="alice", infer=False))

    async with anyio.create_task_group() as tg:
        for _ in range(5):
            tg.start_soon(send)
    assert _texts(store) == ["I keep bees on the roof."]
    assert sorted(len(r["results"]) for r in results) == [0, 0, 0, 0, 1]


async def test_an_edited_fact_is_found_by_its_new_text(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    first = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    memory_id = first["results"][0]["id"]
    edited = await memory.update(memory_id, text="Keeps bees on the roof of the house")
    assert edited["decision"]["status"] == "fact"
    again = await memory.remember(TURNS, ["keeps bees on the roof of the house"], user_id="alice")
    assert again["decisions"][0]["memory_id"] == memory_id  # the new text's repeat
    old_text = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    assert len(old_text["results"]) == 1  # the old text is no longer stored: written again


async def test_a_deleted_or_moved_memory_is_no_repeat(
    build_memory: Build, store: InMemoryStore
) -> None:
    """The decision log names where a fact was stored; the store must still hold it there."""
    memory = build_memory()
    first = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    await memory.delete(first["results"][0]["id"])
    again = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    assert len(again["results"]) == 1  # the first is gone: written again
    store.items[again["results"][0]["id"]]["metadata"]["status"] = "hypothesis"  # changed since
    third = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    assert len(third["results"]) == 1


async def test_without_a_decision_log_nothing_is_a_repeat(
    settings: GuardSettings, store: InMemoryStore
) -> None:
    memory = AsyncGuardedMemory(
        backend=store, guard=Guard.from_settings(settings, embedder=HashingEmbedder())
    )
    for _ in range(2):
        await memory.add(TURNS, user_id="alice", infer=False)
    assert len(store.items) == 2


async def test_a_repeat_and_a_new_fact_in_one_write(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    memory = build_memory()
    await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    turns = [*TURNS, {"id": "t2", "role": "user", "content": "My sister lives in Porto."}]
    result = await memory.remember(
        turns, ["Keeps bees on the roof", "Sister lives in Porto"], user_id="alice"
    )
    assert [r["memory"] for r in result["results"]] == ["Sister lives in Porto"]
    assert [d["already_stored"] for d in result["decisions"]] == [True, False]
    assert len(store.items) == 2
    assert outbox_for(decision_log).pending() == []


async def test_a_fact_said_twice_in_one_write_is_written_once(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    result = await memory.remember(
        TURNS, ["Keeps bees on the roof", "keeps bees on the roof."], user_id="alice"
    )
    [item] = result["results"]
    assert [d["already_stored"] for d in result["decisions"]] == [False, True]
    assert [d["memory_id"] for d in result["decisions"]] == [item["id"], item["id"]]
    assert _texts(store) == ["Keeps bees on the roof"]


async def test_an_intent_keeps_its_repeats_through_a_crash(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The intent names the repeats (of a stored fact, and of an earlier fact of the same
    write): reconciliation completes the write without looking for them among its own store
    writes, and logs them with the memory that holds their fact."""
    memory = build_memory()
    first = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    held = first["results"][0]["id"]
    turns = [*TURNS, {"id": "t2", "role": "user", "content": "My sister lives in Porto."}]

    with _crash_before_done(monkeypatch), pytest.raises(Killed):
        await memory.remember(
            turns,
            ["Keeps bees on the roof", "Sister lives in Porto", "Sister lives in Porto."],
            user_id="alice",
        )
    [intent] = outbox_for(decision_log).pending()  # read back from the database
    assert intent.existing == {0: held}
    assert intent.repeats == {2: 1}
    assert list(intent.planned_keys().values()) == [1]
    report = await reconcile(store, decision_log)
    assert len(report.completed) == 1
    [porto] = [i for i in store.items if i != held]
    logged = decision_log.query("default", DecisionQuery(limit=10))
    assert sorted(str(d.memory_id) for d in logged) == sorted([held, held, porto, porto])
    assert len(store.items) == 2


def test_an_intent_written_before_repeats_existed_reads_back_without_any(
    decision_log: DecisionLog,
) -> None:
    """A pending intent an older release committed (no ``existing`` in its payload) loads."""
    box = outbox_for(decision_log)
    intent = WriteIntent.plan(
        tenant="t", scope=MemoryScope(user_id="a"), turns=[], decisions=[], writer_model=None,
        call=None, existing={0: "m-1"}, repeats={2: 1},
    )  # fmt: skip
    box.begin(intent)
    with decision_log._session() as session:
        row = session.get(_IntentRow, intent.id)
        assert row is not None
        assert row.payload["existing"] == {"0": "m-1"}
        assert row.payload["repeats"] == {"2": 1}
        row.payload = {k: v for k, v in row.payload.items() if k not in ("existing", "repeats")}
    [loaded] = box.pending()
    assert (loaded.existing, loaded.repeats) == ({}, {})


async def test_a_fact_of_an_unfinished_write_is_no_repeat(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another replica's write that has stored its fact but not finished may still fail and
    delete it: a write that took that fact for its own would then have stored nothing. Only a
    finished write has decision rows, so it is never looked up."""
    memory = build_memory()

    with _crash_before_done(monkeypatch), pytest.raises(Killed):
        await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    [pending] = outbox_for(decision_log).pending()
    result = await memory.remember(TURNS, ["Keeps bees on the roof"], user_id="alice")
    assert len(result["results"]) == 1  # written: the other copy may yet be undone
    assert result["decisions"][0]["already_stored"] is False
    assert outbox_for(decision_log).pending() == [pending]  # still open: not in the log yet
