"""Mem0's filter language on every sidecar route that filters, with the drop-in's checks (400
naming where) and the sidecar's key rules (422) at every level of the filter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mirage_guard.adapters import TENANT_KEY
from tests.server.sidecar_setup import KEYS, A, B

Client = Callable[..., TestClient]


def _add(client: TestClient, content: str, headers: dict[str, str], **extra: Any) -> None:
    body = {"messages": [{"role": "user", "content": content}], "infer": False, **extra}
    assert client.post("/v3/memories/add/", json=body, headers=headers).is_success


@pytest.fixture
def client(make_client: Client) -> TestClient:
    client = make_client(api_keys=KEYS)
    _add(client, "I like green tea.", A, user_id="u", metadata={"topic": "food", "n": 1})
    _add(client, "I have a dog named Rex.", A, user_id="u", metadata={"topic": "pets", "n": 5})
    _add(client, "I live in Porto.", A, user_id="u", metadata={"topic": "place", "n": 9})
    _add(client, "I live in Oslo.", B, user_id="u", metadata={"topic": "place", "n": 9})
    return client


def _texts(r: Any) -> list[str]:
    assert r.status_code == 200, r.text
    return sorted(m["memory"] for m in r.json()["results"])


def test_every_filtering_route_reads_operators_and_logical_lists(client: TestClient) -> None:
    platform = {"AND": [{"user_id": "u"}, {"n": {"gte": 5}}]}
    want = ["I have a dog named Rex.", "I live in Porto."]  # not tenant B's Oslo
    assert _texts(client.post("/v3/memories/", json={"filters": platform}, headers=A)) == want
    search = {"query": "home", "filters": platform, "threshold": 0.0}
    assert _texts(client.post("/v3/memories/search/", json=search, headers=A)) == want
    oss = {"query": "home", "user_id": "u", "threshold": 0.0,
           "filters": {"OR": [{"topic": "food"}, {"n": {"gt": 8}}]}}  # fmt: skip
    assert _texts(client.post("/search", json=oss, headers=A)) == [
        "I like green tea.",
        "I live in Porto.",
    ]


@pytest.mark.parametrize(
    ("filters", "status", "message"),
    [
        ({"user_id": "u", "OR": [{TENANT_KEY: "tenant-b"}]}, 400, "API key"),
        ({"user_id": "u", "NOT": [{"status": "fact"}]}, 400, "include_hypotheses"),
        ({"user_id": "u", "AND": [{"topic": "a"}, {"topic": "b"}]}, 400, "given twice"),
        ({"user_id": "u", "OR": [{"user_id": "v"}]}, 400, "is the scope"),
        ({"user_id": "u", "n": {"between": [1, 2]}}, 400, "unknown filter operator"),
        ({"user_id": "u", "OR": [{"a.b": 1}]}, 422, "filter key 'a.b' is not supported"),
        ({"user_id": "u", "OR": [{"t": i} for i in range(21)]}, 413, "filter OR items limit"),
        ({"user_id": "u", "topic": {"eq": "food", "ne": "food"}}, 400, "one operator per key"),
        ({"user_id": "u", "AND": [{"app_id": "x"}]}, 422, "app_id is not a scope here"),
    ],
)
def test_what_would_be_misread_is_refused_and_names_where(
    client: TestClient, filters: dict[str, Any], status: int, message: str
) -> None:
    r = client.post("/v3/memories/", json={"filters": filters}, headers=A)
    assert r.status_code == status, r.text
    assert message in r.json()["error"]["message"]
