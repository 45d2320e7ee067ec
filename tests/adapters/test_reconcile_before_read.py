"""A drop-in built after a crash reconciles before its first read, as before its first write: a
fact of a write that died half-way was readable (as a stated fact) until the first write
removed it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from mirage_guard.adapters import AsyncGuardedMemory, DecisionLog
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import DatabaseUnavailableError
from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import HeldStore, InMemoryStore

TWO = [{"role": "user", "content": "I keep bees."}, {"role": "user", "content": "I cycle."}]


def _memory(data_dir: Path, store: InMemoryStore, log: DecisionLog) -> AsyncGuardedMemory:
    settings = GuardSettings(data_dir=data_dir)
    return AsyncGuardedMemory.from_settings(
        settings,
        backend=store,
        decision_log=log,
        guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
        writer_llm=ScriptedLLM([], model="mock/w"),
    )


async def _crash_mid_write(store: HeldStore, log: DecisionLog, data_dir: Path) -> None:
    dying = _memory(data_dir, store, log)
    dying._needs_reconcile = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: dying.add(TWO, user_id="ann", infer=False))
        await store.first_stored.wait()
        tg.cancel_scope.cancel()
    store.hold = False
    assert [i["memory"] for i in store.items.values()] == ["I keep bees."]  # left behind


@pytest.mark.parametrize("read", ["get_all", "search", "get"])
async def test_the_first_read_after_a_crash_does_not_return_a_half_written_fact(
    data_dir: Path, read: str
) -> None:
    store = HeldStore(dead=True)
    log = DecisionLog(GuardSettings(data_dir=data_dir).resolved_database_url())
    await _crash_mid_write(store, log, data_dir)
    (left_id,) = store.items
    restarted = _memory(data_dir, store, log)
    if read == "get_all":
        assert (await restarted.get_all(filters={"user_id": "ann"}))["results"] == []
    elif read == "search":
        assert (await restarted.search("bees", filters={"user_id": "ann"}))["results"] == []
    else:
        assert await restarted.get(left_id) is None
    assert store.items == {}
    await restarted.aclose()
    log.close()


async def test_a_read_stays_available_when_the_reconciliation_fails(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryStore()
    log = DecisionLog(GuardSettings(data_dir=data_dir).resolved_database_url())
    memory = _memory(data_dir, store, log)
    calls: list[float] = []

    async def down(**kwargs: Any) -> Any:
        calls.append(kwargs["older_than_s"])
        raise DatabaseUnavailableError()

    monkeypatch.setattr(memory, "reconcile", down)
    assert (await memory.get_all(filters={"user_id": "ann"}))["results"] == []
    assert calls == [0.0]  # it was tried, and the read was answered anyway
    assert memory._needs_reconcile  # still to do
    await memory.get_all(filters={"user_id": "ann"})
    assert calls == [0.0]  # not before _RECONCILE_RETRY_S: a read does not wait on it each time
    await memory.aclose()
    log.close()


async def test_a_memory_scoped_with_for_tenant_reconciles_once_for_the_family(
    data_dir: Path,
) -> None:
    store = HeldStore(dead=True)
    log = DecisionLog(GuardSettings(data_dir=data_dir).resolved_database_url())
    await _crash_mid_write(store, log, data_dir)
    restarted = _memory(data_dir, store, log)
    scoped = restarted.for_tenant("default", isolated=False)
    assert (await scoped.get_all(filters={"user_id": "ann"}))["results"] == []
    assert store.items == {}
    assert not restarted._needs_reconcile  # the parent will not run it again
    await restarted.aclose()
    log.close()
