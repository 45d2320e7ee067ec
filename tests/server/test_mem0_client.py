"""The official ``mem0.MemoryClient``, unmodified, through the sidecar on a real uvicorn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mirage_guard.adapters.server import create_app
from mirage_guard.guard import GuardSettings
from tests.server.sidecar_setup import KEYS, echo_writer, on_loopback

pytestmark = pytest.mark.slow


@pytest.fixture
def sidecar_url(data_dir: Path) -> Iterator[str]:
    settings = GuardSettings(data_dir=data_dir, api_keys=KEYS)
    app = create_app(
        settings,
        writer_llm=echo_writer(),
    )  # the backend is built by the lifespan: embedded Mem0 + MiniLM under data_dir
    with on_loopback(app, lifespan="on") as url:
        yield url


def test_memory_client_add_search_get_update_delete_history(sidecar_url: str) -> None:
    from mem0 import MemoryClient
    from mem0.exceptions import MemoryNotFoundError

    client = MemoryClient(api_key="key-a", host=sidecar_url)
    added = client.add(
        [
            {"role": "user", "content": "I went rock climbing in Yosemite last weekend."},
            {"role": "assistant", "content": "You must be an adrenaline junkie!"},
        ],
        user_id="alice",
    )
    (fact,) = added["results"]  # the assistant's guess about the user is not written
    assert fact["provenance"] == "stated"
    assert fact["status"] == "fact"
    memory_id = fact["id"]

    found = client.search("outdoor hobbies", filters={"user_id": "alice"})
    assert [r["id"] for r in found["results"]] == [memory_id]
    assert client.get(memory_id)["memory"] == fact["memory"]
    listed = client.get_all(filters={"user_id": "alice"})
    assert [r["id"] for r in listed["results"]] == [memory_id]

    client.update(memory_id, text="User climbs in Yosemite")
    assert client.get(memory_id)["memory"] == "User climbs in Yosemite"
    assert [h["event"] for h in client.history(memory_id)] == ["ADD", "UPDATE"]

    other = MemoryClient(api_key="key-b", host=sidecar_url)
    with pytest.raises(MemoryNotFoundError):
        other.get(memory_id)

    client.delete(memory_id)
    with pytest.raises(MemoryNotFoundError):
        client.get(memory_id)
    assert [h["event"] for h in client.history(memory_id)] == ["ADD", "UPDATE", "DELETE"]

    client.add("I live in Lisbon.", user_id="alice", infer=False)
    client.delete_all(user_id="alice")
    assert client.get_all(filters={"user_id": "alice"})["results"] == []


def test_a_wrong_key_is_refused_at_construction(sidecar_url: str) -> None:
    from mem0 import MemoryClient

    with pytest.raises(ValueError, match="invalid API key"):
        MemoryClient(api_key="wrong", host=sidecar_url)


def test_memory_client_users_delete_users_and_reset(sidecar_url: str) -> None:
    """`users()`, `delete_users()` and `reset()` call the entity routes; each answered 404."""
    from mem0 import MemoryClient

    client = MemoryClient(api_key="key-a", host=sidecar_url)
    other = MemoryClient(api_key="key-b", host=sidecar_url)
    client.add("I live in Lisbon.", user_id="alice", infer=False)
    client.add("I grow tomatoes.", user_id="alice", infer=False)
    client.add("I play chess.", user_id="bob", agent_id="coach", infer=False)
    other.add("I keep bees.", user_id="carol", infer=False)

    users = client.users()
    assert [(e["type"], e["name"], e["total_memories"]) for e in users["results"]] == [
        ("agent", "coach", 1),
        ("user", "alice", 2),
        ("user", "bob", 1),
    ]
    assert users["count"] == 3
    assert all(e["created_at"] for e in users["results"])

    client.delete_users(user_id="alice")
    assert client.get_all(filters={"user_id": "alice"})["results"] == []
    assert [e["name"] for e in client.users()["results"]] == ["coach", "bob"]

    client.reset()
    assert client.users()["results"] == []
    assert [e["name"] for e in other.users()["results"]] == ["carol"]  # another tenant's stay


def test_memory_client_filters_in_mem0s_language(sidecar_url: str) -> None:
    """Operators, AND / OR / NOT and the platform's ``{"AND": [{"user_id": ...}]}`` reach the
    embedded store through the sidecar (every one was refused with 422 before 2026-12-07); a
    condition on the guard's own keys is refused with a 400 the client raises."""
    from mem0 import MemoryClient
    from mem0.exceptions import ValidationError

    client = MemoryClient(api_key="key-a", host=sidecar_url)
    for text, meta in [
        ("I like green tea.", {"topic": "food", "n": 1}),
        ("I have a dog named Rex.", {"topic": "pets", "n": 5}),
        ("I live in Porto.", {"topic": "place", "n": 9}),
    ]:
        client.add(text, user_id="alice", metadata=meta, infer=False)

    def listed(filters: dict[str, object]) -> list[str]:
        return sorted(r["memory"] for r in client.get_all(filters=filters)["results"])

    assert listed({"AND": [{"user_id": "alice"}, {"n": {"gte": 5}}]}) == [
        "I have a dog named Rex.",
        "I live in Porto.",
    ]
    assert listed({"user_id": "alice", "OR": [{"topic": "food"}, {"n": {"gt": 8}}]}) == [
        "I like green tea.",
        "I live in Porto.",
    ]
    assert listed({"user_id": "alice", "NOT": [{"topic": {"in": ["food", "pets"]}}]}) == [
        "I live in Porto."
    ]
    not_food = {"user_id": "alice", "topic": {"ne": "food"}}
    found = client.search("pets", filters=not_food, threshold=0.0)
    assert sorted(r["memory"] for r in found["results"]) == [
        "I have a dog named Rex.",
        "I live in Porto.",
    ]
    # embedded Qdrant: `contains` matches whole words; a date range compares instants
    assert listed({"user_id": "alice", "topic": {"contains": "pet"}}) == []
    assert len(listed({"user_id": "alice", "created_at": {"gte": "2020-01-01T00:00:00Z"}})) == 3
    assert listed({"user_id": "alice", "created_at": {"lt": "2020-01-01T00:00:00Z"}}) == []
    with pytest.raises(ValidationError, match="include_hypotheses"):
        client.get_all(filters={"user_id": "alice", "OR": [{"status": "quarantined"}]})
