"""RemoteMem0Backend against a fake Mem0 OSS REST server (in-process ASGI transport)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from mirage_guard.adapters import MemoryScope, RemoteMem0Backend
from mirage_guard.guard.errors import BackendError, BackendUnavailableError, MemoryNotFoundError
from tests.fakes.mem0 import InMemoryStore, mem0_rest_app

SCOPE = MemoryScope(user_id="alice")


@pytest.fixture
async def remote(store: InMemoryStore) -> AsyncIterator[RemoteMem0Backend]:
    backend = RemoteMem0Backend(
        "http://mem0.test", api_key="k", transport=httpx.ASGITransport(app=mem0_rest_app(store))
    )
    yield backend
    await backend.aclose()


async def test_every_route_round_trips(remote: RemoteMem0Backend, store: InMemoryStore) -> None:
    (item,) = await remote.add(
        [{"role": "user", "content": "likes green tea"}],
        scope=SCOPE,
        metadata={"status": "fact", "provenance": "stated"},
    )
    memory_id = item["id"]
    assert store.items[memory_id]["metadata"]["provenance"] == "stated"

    got = await remote.get(memory_id)
    assert got is not None
    assert got["memory"] == "likes green tea"
    assert [i["id"] for i in await remote.get_all(filters={"user_id": "alice"}, top_k=10)] == [
        memory_id
    ]
    found = await remote.search("green tea", filters={"user_id": "alice"}, top_k=5, threshold=0.1)
    assert [i["id"] for i in found] == [memory_id]

    await remote.update(memory_id, text="likes black tea", metadata=None)
    assert [e["event"] for e in await remote.history(memory_id)] == ["ADD", "UPDATE"]
    await remote.delete(memory_id)
    assert await remote.get(memory_id) is None
    with pytest.raises(MemoryNotFoundError):
        await remote.delete(memory_id)

    await remote.add([{"role": "user", "content": "x"}], scope=SCOPE)
    await remote.delete_all(SCOPE)
    assert store.items == {}
    await remote.add([{"role": "user", "content": "y"}], scope=SCOPE)
    await remote.reset()
    assert store.items == {}


async def test_filters_are_enforced_even_if_the_server_ignores_them(
    remote: RemoteMem0Backend, store: InMemoryStore
) -> None:
    await remote.add([{"role": "user", "content": "tea"}], scope=SCOPE, metadata={"status": "fact"})
    await remote.add(
        [{"role": "user", "content": "tea lover"}], scope=SCOPE, metadata={"status": "quarantined"}
    )
    store.apply_filters = False
    f = {"user_id": "alice", "status": {"in": ["fact"]}}
    assert [i["memory"] for i in await remote.get_all(filters=f, top_k=10)] == ["tea"]
    found = await remote.search("tea", filters=f, top_k=10, threshold=0.0)
    assert [i["memory"] for i in found] == ["tea"]


async def test_server_errors_and_unreachable_servers_are_unavailable(
    remote: RemoteMem0Backend, store: InMemoryStore
) -> None:
    store.down = True
    with pytest.raises(BackendUnavailableError):
        await remote.add([{"role": "user", "content": "x"}], scope=SCOPE)

    nowhere = RemoteMem0Backend("http://127.0.0.1:9", timeout_s=2.0)
    try:
        with pytest.raises(BackendUnavailableError):
            await nowhere.get("abc")
        with pytest.raises(BackendUnavailableError):
            await nowhere.ping()
    finally:
        await nowhere.aclose()


async def test_an_upstream_that_rewrites_facts_is_refused_and_undone(
    build_memory: Any,
) -> None:
    deleted: list[str] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path == "/memories":
            # ignores infer=false: runs its own extraction and splits the fact in two
            return httpx.Response(200, json={"results": [{"id": "m1"}, {"id": "m2"}]})
        if request.method == "DELETE":
            deleted.append(request.url.path.rsplit("/", 1)[-1])
            return httpx.Response(200, json={"message": "deleted"})
        return httpx.Response(200, json={})

    remote = RemoteMem0Backend("http://mem0.test", transport=httpx.MockTransport(upstream))
    memory = build_memory(backend=remote)
    with pytest.raises(BackendError, match="2 items for one fact"):
        await memory.add("I like tea and coffee", user_id="alice", infer=False)
    assert sorted(deleted) == ["m1", "m2"]
    await remote.aclose()
