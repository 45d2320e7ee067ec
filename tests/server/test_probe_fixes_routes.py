"""What the probe of 2026-12 found in the sidecar's Mem0 routes: an entity id with "/" could be
written but not deleted, "." and ".." were taken as ids though no client can name them in a path,
batch routes answered 404, which the client reads as a missing memory, two
message shapes Mem0 takes failed the whole write, and Mem0's own metadata keys were dropped."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tests.fakes.mem0 import InMemoryStore
from tests.server.sidecar_setup import KEYS, A

Client = Callable[..., TestClient]


def _add(client: TestClient, content: str, headers: dict[str, str] = A, **extra: Any) -> Any:
    body = {"messages": [{"role": "user", "content": content}], "infer": False, **extra}
    return client.post("/v3/memories/add/", json=body, headers=headers)


def _entity(kind: str, name: str) -> str:
    """The path ``MemoryClient.delete_users`` requests (each part quoted with ``safe=""``)."""
    return f"/v2/entities/{quote(kind, safe='')}/{quote(name, safe='')}/"


def _users(store: InMemoryStore) -> list[str]:
    return sorted(str(i.get("user_id")) for i in store.items.values())


def test_an_entity_id_with_a_slash_is_deleted_and_only_that_one(
    make_client: Client, store: InMemoryStore
) -> None:
    """The client sends "team/alice" as team%2Falice, which reached the router decoded and
    matched no route (404, the client's MemoryNotFoundError)."""
    client = make_client(api_keys=KEYS)
    for user in ("team/alice", "team", "alice", "a/b/c"):
        assert _add(client, "I like owls.", user_id=user).status_code == 200
    r = client.delete(_entity("user", "team/alice"), headers=A)
    assert r.status_code == 200, r.text
    assert _users(store) == ["a/b/c", "alice", "team"]
    assert client.delete(_entity("user", "a/b/c"), headers=A).status_code == 200
    assert _users(store) == ["alice", "team"]
    assert _add(client, "I run a bot.", agent_id="bots/one").status_code == 200
    assert client.delete(_entity("agent", "bots/one"), headers=A).status_code == 200
    assert _users(store) == ["alice", "team"]


def test_the_mem0_client_deletes_such_users_and_reads_the_new_answers(
    sidecar_url: str, store: InMemoryStore
) -> None:
    """What the probe ran: the official client on a real server (uvicorn decodes a path once;
    the test client decodes it twice, so "x%2Fy" is only told from "x/y" here)."""
    from mem0 import MemoryClient
    from mem0.exceptions import MemoryError as Mem0Error
    from mem0.exceptions import MemoryNotFoundError

    client = MemoryClient(host=sidecar_url, api_key="key-a")
    for user in ("team/alice", "team", "x%2Fy", "x/y"):
        client.add("I like owls.", user_id=user, infer=False)
    client.delete_users(user_id="team/alice")
    assert _users(store) == ["team", "x%2Fy", "x/y"]
    client.delete_users(user_id="x%2Fy")
    assert _users(store) == ["team", "x/y"]
    client.delete_users(user_id="nobody")  # nothing to delete: 200, as before
    memory_id = client.get_all(filters={"user_id": "team"})["results"][0]["id"]
    with pytest.raises(Mem0Error, match=re.escape("/v1/memories/{id}/")) as caught:
        client.batch_delete([{"memory_id": memory_id}])
    assert not isinstance(caught.value, MemoryNotFoundError)
    assert caught.value.debug_info["status_code"] == 501
    client.reset()  # every entity of the tenant, each by its path
    assert store.items == {}


@pytest.mark.parametrize("dots", [".", ".."])
def test_a_dot_segment_is_no_id(make_client: Client, store: InMemoryStore, dots: str) -> None:
    """A client's URL handling drops "." and ".." from a path: what was filed under one could
    not be deleted by id. Refused wherever an id is taken; nothing is written or read."""
    client = make_client(api_keys=KEYS)
    for extra in ({"user_id": dots}, {"filters": {"agent_id": dots}}, {"run_id": dots}):
        r = _add(client, "I like owls.", **extra)
        assert r.status_code == 422, r.text
        assert "dot segment" in r.json()["error"]["message"]
    turn = {"id": dots, "role": "user", "content": "I like owls."}
    body = {"messages": [turn], "user_id": "u", "infer": False}
    r = client.post("/memories", json=body, headers=A)
    assert r.status_code == 422
    assert store.items == {}
    r = client.post("/v3/memories/", json={"filters": {"user_id": dots}}, headers=A)
    assert r.status_code == 422
    for route in ("/memories", "/v1/memories/"):
        r = client.delete(route, params={"user_id": dots}, headers=A)
        assert (r.status_code, r.json()["error"]["type"]) == (400, "invalid_input"), r.text
        assert "dot segment" in r.json()["error"]["message"]
    r = client.delete(f"/v2/entities/user/{dots.replace('.', '%2E')}/", headers=A)
    assert r.status_code in (400, 404)  # never a deletion


@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_batch_routes_answer_501_naming_the_per_memory_routes(
    make_client: Client, store: InMemoryStore, method: str
) -> None:
    """They answered 404, which `MemoryClient.batch_update` / `batch_delete` read as a
    missing memory."""
    client = make_client(api_keys=KEYS)
    memory_id = _add(client, "I have a boat.", user_id="u").json()["results"][0]["id"]
    before = {k: dict(v) for k, v in store.items.items()}
    body = {"memories": [{"memory_id": memory_id, "text": "I have a car."}]}
    r = client.request(method, "/v1/batch/", json=body, headers=A)
    assert r.status_code == 501, r.text
    error = r.json()["error"]
    assert (error["type"], error["retryable"]) == ("not_configured", False)
    assert "/v1/memories/{id}/" in error["message"]
    assert r.json()["detail"] == error["message"]
    assert store.items == before
    assert client.request(method, "/v1/batch/", json=body).status_code == 401  # auth first


def test_a_named_message_and_a_tool_call_without_content_are_accepted(
    make_client: Client, store: InMemoryStore
) -> None:
    """Each was a 422 for the whole write. A null content is skipped (as Mem0 and the drop-in
    skip it); ``name`` is accepted and not kept (the guard has no actor)."""
    client = make_client(api_keys=KEYS)
    messages = [
        {"role": "assistant", "content": None},
        {"role": "user", "content": "I am a nurse.", "name": "alice"},
    ]
    r = client.post(
        "/v3/memories/add/",
        json={"messages": messages, "user_id": "m", "infer": False},
        headers=A,
    )
    assert r.status_code == 200, r.text
    assert [m["memory"] for m in r.json()["results"]] == ["I am a nurse."]
    assert [t["role"] for t in r.json()["turns"]] == ["user"]
    (item,) = store.items.values()
    assert "alice" not in str(item)
    only_calls = {"messages": [{"role": "assistant", "content": None}], "user_id": "m"}
    r = client.post("/memories", json={**only_calls, "infer": False}, headers=A)
    assert (r.status_code, r.json()["results"]) == (200, [])
    assert len(store.items) == 1
    bad = {"messages": [{"role": "user", "content": "x", "name": 3}], "user_id": "m"}
    assert client.post("/memories", json=bad, headers=A).status_code == 422


def test_an_openai_format_history_with_tool_calls_is_accepted(
    make_client: Client, store: InMemoryStore
) -> None:
    """A history sent as an OpenAI chat holds ``tool_calls`` on an assistant message and
    ``tool_call_id`` on a tool result; each was a 422 for the whole write ("extra inputs are not
    permitted"). Both are ignored, as Mem0 ignores them."""
    client = make_client(api_keys=KEYS)
    call = {"id": "call_1", "type": "function",
            "function": {"name": "weather", "arguments": "{\"city\": \"Porto\"}"}}  # fmt: skip
    messages = [
        {"role": "user", "content": "I live in Porto."},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "sunny, 21C", "tool_call_id": "call_1"},
    ]
    r = client.post("/v3/memories/add/", headers=A,
                    json={"messages": messages, "user_id": "t", "infer": False})  # fmt: skip
    assert r.status_code == 200, r.text
    # verbatim, as every infer=False write: the user's words a fact, a tool's result not the
    # user's (quarantined, as an assistant's words are)
    stored = [(m["memory"], m["status"]) for m in r.json()["results"]]
    assert stored == [("I live in Porto.", "fact"), ("sunny, 21C", "quarantined")]
    assert "call_1" not in str(list(store.items.values()))
    bad = {"messages": [{"role": "tool", "content": "x", "tool_call_id": 3}], "user_id": "t"}
    assert client.post("/memories", json=bad, headers=A).status_code == 422


@pytest.mark.parametrize("key", ["data", "hash", "role", "id", "actor_id"])
def test_mem0s_own_metadata_keys_are_refused_not_dropped(
    make_client: Client, store: InMemoryStore, key: str
) -> None:
    client = make_client(api_keys=KEYS)
    r = _add(client, "I collect stamps.", user_id="u", metadata={key: "EVIL"})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "invalid_input"
    assert repr(key) in r.json()["error"]["message"]
    assert store.items == {}
    memory_id = _add(client, "I collect stamps.", user_id="u").json()["results"][0]["id"]
    r = client.put(f"/v1/memories/{memory_id}/", json={"metadata": {key: "EVIL"}}, headers=A)
    assert (r.status_code, r.json()["error"]["type"]) == (400, "invalid_input"), r.text
    assert "EVIL" not in str(store.items)


def test_content_as_openai_parts_is_read_and_an_image_part_refused(
    make_client: Client, store: InMemoryStore
) -> None:
    """A message whose content is a list of parts (OpenAI's form) was a 422 for the whole write
    (the drop-in: "message content must be a string"). Its text parts are read, joined by line
    breaks, as Mem0 stores them; an image part is refused (the guard reads no image), and
    nothing is written."""
    client = make_client(api_keys=KEYS)
    parts = [{"type": "text", "text": "I paint."}, {"type": "text", "text": "I live in Porto."}]
    body = {"messages": [{"role": "user", "content": parts}], "user_id": "p", "infer": False}
    r = client.post("/v3/memories/add/", json=body, headers=A)
    assert r.status_code == 200, r.text
    assert [m["memory"] for m in r.json()["results"]] == ["I paint.\nI live in Porto."]
    image = {"type": "image_url", "image_url": {"url": "https://example.invalid/cat.png"}}
    body["messages"] = [{"role": "user", "content": [parts[0], image]}]
    r = client.post("/v3/memories/add/", json=body, headers=A)
    assert r.status_code == 400, r.text
    assert "'image_url' part: only text parts are read" in r.json()["error"]["message"]
    assert len(store.items) == 1
