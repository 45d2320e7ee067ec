"""One contract for every MemoryBackend: the in-memory fake, embedded Mem0 and the remote backend.

Subjects:
- ``fake``: ``tests.fakes.mem0.InMemoryStore``;
- ``remote-fake``: ``RemoteMem0Backend`` over httpx (ASGI) to the fake REST app over that store;
- ``embedded`` (slow): ``Mem0Backend``, real mem0ai + embedded Qdrant + MiniLM;
- ``remote-mem0`` (slow): ``RemoteMem0Backend`` over httpx (ASGI) to Mem0's OSS REST routes
  (``tests.fakes.mem0_oss_server``) over a real embedded ``mem0.Memory`` + MiniLM;
- ``pgvector`` (slow, postgres): ``Mem0Backend.pgvector``, real mem0ai on a real PostgreSQL +
  pgvector server (``tests/postgres.py``) + MiniLM.

Where the fake and the real stores disagree, the fake is wrong: fix it, not the contract.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from mirage_guard.adapters import (
    TENANT_KEY,
    Mem0Backend,
    MemoryBackend,
    MemoryScope,
    RemoteMem0Backend,
)
from mirage_guard.guard.errors import BackendUnavailableError, MemoryNotFoundError
from mirage_guard.guard.evidence import MiniLMEmbedder, shared_minilm
from tests.fakes.mem0 import InMemoryStore, mem0_rest_app
from tests.fakes.mem0_oss_server import mem0_oss_app

ALICE = MemoryScope(user_id="alice")
BOB = MemoryScope(user_id="bob")
UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"  # a well-formed id no store has
# the metadata the guard writes on every item: strings, a float and a None
META = {
    "provenance": "stated",
    "source_turn_id": None,
    "guard_score": 0.25,
    "profile_id": "evidence-only",
    "status": "fact",
    TENANT_KEY: "default",
}


@dataclass
class Subject:
    backend: MemoryBackend
    # makes the store unreachable and returns the backend to call (the same or a new one)
    unreachable: Callable[[], Awaitable[MemoryBackend]]


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return shared_minilm()


def _remote_to(app: Any) -> RemoteMem0Backend:
    return RemoteMem0Backend("http://mem0.test", transport=httpx.ASGITransport(app=app))


async def _nowhere() -> MemoryBackend:
    return RemoteMem0Backend("http://127.0.0.1:9", timeout_s=2.0)  # nothing listens on port 9


@pytest.fixture(
    params=[
        "fake",
        "remote-fake",
        pytest.param("embedded", marks=pytest.mark.slow),
        pytest.param("remote-mem0", marks=pytest.mark.slow),
        pytest.param("pgvector", marks=[pytest.mark.slow, pytest.mark.postgres]),
    ]
)
async def subject(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Subject]:
    kind: str = request.param
    opened: list[MemoryBackend] = []
    if kind in ("fake", "remote-fake"):
        store = InMemoryStore()

        async def down() -> MemoryBackend:
            store.down = True
            return store

        if kind == "fake":
            subject = Subject(store, down)
        else:
            subject = Subject(_remote_to(mem0_rest_app(store)), _nowhere)
    elif kind == "pgvector":
        url = request.getfixturevalue("postgres_url")
        shared = Mem0Backend.pgvector(
            url, tmp_path / "mem0", embedder=request.getfixturevalue("minilm")
        )

        async def closed_pool() -> MemoryBackend:
            await shared.aclose()  # a store that cannot serve any more
            return shared

        subject = Subject(shared, closed_pool)
    else:
        embedder = request.getfixturevalue("minilm")
        embedded = Mem0Backend.embedded(tmp_path / "mem0", embedder=embedder)
        opened.append(embedded)
        if kind == "embedded":

            async def closed() -> MemoryBackend:
                await embedded.aclose()  # a store that cannot serve any more
                return embedded

            subject = Subject(embedded, closed)
        else:
            subject = Subject(_remote_to(mem0_oss_app(embedded.memory)), _nowhere)
    opened.insert(0, subject.backend)
    yield subject
    for backend in opened:
        await backend.aclose()


async def _add(backend: MemoryBackend, text: str, scope: MemoryScope = ALICE, **meta: Any) -> str:
    (item,) = await backend.add([{"role": "user", "content": text}], scope=scope,
                                metadata={**META, **meta})  # fmt: skip
    assert item["memory"] == text
    return str(item["id"])


async def test_add_stores_each_message_verbatim_and_metadata_round_trips(
    subject: Subject,
) -> None:
    b = subject.backend
    items = await b.add(
        [{"role": "user", "content": "I like tea"}, {"role": "user", "content": "I walk to work"}],
        scope=ALICE,
        metadata=META,
    )
    assert [i["memory"] for i in items] == ["I like tea", "I walk to work"]
    assert all(i["event"] == "ADD" for i in items)
    got = await b.get(str(items[0]["id"]))
    assert got is not None
    assert (got["id"], got["memory"], got["user_id"]) == (items[0]["id"], "I like tea", "alice")
    assert got["metadata"] == META  # every key back, None and float included, nothing added
    assert got["created_at"]


async def test_get_of_an_unknown_id_is_none(subject: Subject) -> None:
    assert await subject.backend.get(UNKNOWN_ID) is None


async def test_get_all_filters_by_scope_and_metadata(subject: Subject) -> None:
    b = subject.backend
    fact = await _add(b, "likes green tea")
    hidden = await _add(b, "tea lover", status="quarantined")
    await _add(b, "likes coffee", scope=BOB)
    everything = await b.get_all(filters={"user_id": "alice"}, top_k=10)
    assert {i["id"] for i in everything} == {fact, hidden}
    facts = await b.get_all(filters={"user_id": "alice", "status": {"in": ["fact"]}}, top_k=10)
    assert [i["id"] for i in facts] == [fact]
    mine = await b.get_all(filters={"user_id": "alice", TENANT_KEY: "other"}, top_k=10)
    assert mine == []
    assert len(await b.get_all(filters={"user_id": "alice"}, top_k=1)) == 1


async def test_search_ranks_best_first_within_the_filters(subject: Subject) -> None:
    b = subject.backend
    tea = await _add(b, "likes green tea")
    await _add(b, "walks to work every day")
    await _add(b, "green tea lover", status="quarantined")
    await _add(b, "likes green tea", scope=BOB)
    f = {"user_id": "alice", "status": {"in": ["fact"]}}
    found = await b.search("green tea", filters=f, top_k=5, threshold=0.0)
    assert found[0]["id"] == tea
    assert {i["user_id"] for i in found} == {"alice"}
    assert {i["metadata"]["status"] for i in found} == {"fact"}
    scores = [i["score"] for i in found]
    assert scores == sorted(scores, reverse=True)
    strict = await b.search("green tea", filters=f, top_k=5, threshold=0.5)
    assert [i["id"] for i in strict] == [tea]
    assert all(i["score"] >= 0.5 for i in strict)
    assert len(await b.search("green tea", filters=f, top_k=1, threshold=0.0)) == 1


async def test_update_replaces_text_merges_metadata_and_is_in_the_history(
    subject: Subject,
) -> None:
    b = subject.backend
    memory_id = await _add(b, "likes green tea")
    await b.update(memory_id, text="likes black tea", metadata=None)
    await b.update(memory_id, text=None, metadata={"status": "hypothesis", "note": "x"})
    got = await b.get(memory_id)
    assert got is not None
    assert got["memory"] == "likes black tea"
    assert got["metadata"] == {**META, "status": "hypothesis", "note": "x"}
    events = await b.history(memory_id)
    assert [e["event"] for e in events] == ["ADD", "UPDATE", "UPDATE"]
    assert (events[1]["old_memory"], events[1]["new_memory"]) == (
        "likes green tea",
        "likes black tea",
    )
    assert all(e["memory_id"] == memory_id for e in events)


async def test_delete_removes_the_item_and_keeps_its_history(subject: Subject) -> None:
    b = subject.backend
    memory_id = await _add(b, "likes green tea")
    await b.delete(memory_id)
    assert await b.get(memory_id) is None
    assert [e["event"] for e in await b.history(memory_id)] == ["ADD", "DELETE"]
    assert await b.history(UNKNOWN_ID) == []


async def test_changing_an_unknown_id_is_memory_not_found(subject: Subject) -> None:
    b = subject.backend
    memory_id = await _add(b, "likes green tea")
    await b.delete(memory_id)
    for missing in (UNKNOWN_ID, memory_id):  # never existed, and deleted
        with pytest.raises(MemoryNotFoundError):
            await b.delete(missing)
        with pytest.raises(MemoryNotFoundError):
            await b.update(missing, text="x", metadata=None)


async def test_delete_all_removes_one_scope_and_reset_everything(subject: Subject) -> None:
    b = subject.backend
    await _add(b, "likes green tea")
    await _add(b, "walks to work")
    bobs = await _add(b, "likes coffee", scope=BOB)
    await b.delete_all(ALICE)
    assert await b.get_all(filters={"user_id": "alice"}, top_k=10) == []
    assert [i["id"] for i in await b.get_all(filters={"user_id": "bob"}, top_k=10)] == [bobs]
    await b.reset()
    assert await b.get_all(filters={"user_id": "bob"}, top_k=10) == []
    assert await b.get(bobs) is None


async def test_an_unreachable_store_is_backend_unavailable(subject: Subject) -> None:
    memory_id = await _add(subject.backend, "likes green tea")
    b = await subject.unreachable()
    calls: list[Callable[[], Awaitable[Any]]] = [
        b.ping,
        lambda: b.add([{"role": "user", "content": "x"}], scope=ALICE),
        lambda: b.get(memory_id),
        lambda: b.get_all(filters={"user_id": "alice"}, top_k=10),
        lambda: b.search("tea", filters={"user_id": "alice"}, top_k=5, threshold=0.0),
        lambda: b.update(memory_id, text="x", metadata=None),
        lambda: b.delete(memory_id),
        lambda: b.delete_all(ALICE),
        lambda: b.history(memory_id),
        b.reset,
    ]
    for call in calls:
        with pytest.raises(BackendUnavailableError):
            await call()
    if b is not subject.backend:
        await b.aclose()
