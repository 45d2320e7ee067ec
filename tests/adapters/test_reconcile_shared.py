"""Two processes with the drop-in on one PostgreSQL decision log: the first write of one of them
reconciles only write intents older than the idempotency lease, never another process's write
in flight (it took every pending intent for a dead writer's and removed the facts the other
process was still writing)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from mirage_guard.adapters import AsyncGuardedMemory, DecisionLog
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import HeldStore, InMemoryStore

pytestmark = pytest.mark.postgres


def _memory(url: str, data_dir: Path, store: InMemoryStore) -> AsyncGuardedMemory:
    settings = GuardSettings(data_dir=data_dir, database_url=url)
    return AsyncGuardedMemory.from_settings(
        settings,
        backend=store,
        decision_log=DecisionLog(url),
        guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
        writer_llm=ScriptedLLM([], model="mock/w"),
    )


async def test_a_first_write_leaves_another_processs_write_in_flight_alone(
    postgres_url: str, data_dir: Path
) -> None:
    store = HeldStore()
    a, b = _memory(postgres_url, data_dir, store), _memory(postgres_url, data_dir, store)
    a._needs_reconcile = False  # A is the process already running
    two = [{"role": "user", "content": "I keep bees."}, {"role": "user", "content": "I cycle."}]
    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: a.add(two, user_id="ann", infer=False))
        await store.first_stored.wait()  # A stored one fact of two; its intent is open
        store.hold = False
        await b.add([{"role": "user", "content": "I read."}], user_id="bob", infer=False)
        assert len(store.items) == 2  # B's first write left A's fact where it was
        store.go.set()
    assert sorted(i["memory"] for i in store.items.values()) == [
        "I cycle.",
        "I keep bees.",
        "I read.",
    ]
    for m in (a, b):
        await m.aclose()
