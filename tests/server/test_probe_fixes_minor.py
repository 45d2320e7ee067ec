"""The smaller things the probe of 2026-12 found in the sidecar: a float filter answered with the
vector store's internals, ``/v1/decisions`` took ``*`` as a user id, a filter on the tenant key
was told to filter by status, ``get_all``'s page links echoed the ``Host`` header, an oversized
body's sentence count was a wrong number, and ``delete_all(filters=...)`` was refused with a
message that did not say which form works."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from mirage_guard.adapters import TENANT_KEY
from tests.fakes.mem0 import InMemoryStore
from tests.server.sidecar_setup import KEYS, A

Client = Callable[..., TestClient]
FLOAT_REFUSED = "an equality filter takes a string, an integer or a boolean, not a float"


def _add(client: TestClient, content: str, **extra: Any) -> Any:
    body = {"messages": [{"role": "user", "content": content}], "infer": False, **extra}
    return client.post("/v3/memories/add/", json=body, headers=A)


def _list(client: TestClient, filters: dict[str, Any], **params: Any) -> Any:
    return client.post("/v3/memories/", json={"filters": filters}, params=params, headers=A)


@pytest.mark.parametrize("value", [7.5, 7.0])
def test_a_float_equality_filter_is_refused_up_front_in_plain_words(
    make_client: Client, value: float
) -> None:
    """Embedded Qdrant cannot match a float (its error, "3 validation errors for MatchValue",
    was the answer); pgvector compares text, where 1e+16 is not 10000000000000000."""
    client = make_client(api_keys=KEYS)
    assert _add(client, "I have a boat.", user_id="u", metadata={"length_m": 7.5}).is_success
    assert _add(client, "I have two oars.", user_id="u", metadata={"oars": 2}).is_success
    for r in (
        _list(client, {"user_id": "u", "length_m": value}),
        client.post("/v3/memories/search/", headers=A,
                    json={"query": "boat", "filters": {"user_id": "u", "length_m": value}}),
    ):  # fmt: skip
        assert r.status_code == 400, r.text
        assert FLOAT_REFUSED in r.json()["detail"]
        assert "MatchValue" not in r.text
    by_int = _list(client, {"user_id": "u", "oars": 2})
    assert [m["memory"] for m in by_int.json()["results"]] == ["I have two oars."]


@pytest.mark.parametrize("user_id", ["*", ".", ".."])
def test_decisions_refuse_a_reserved_user_id(make_client: Client, user_id: str) -> None:
    client = make_client(api_keys=KEYS)
    assert _add(client, "I like tea.", user_id="u").is_success
    r = client.get("/v1/decisions", params={"user_id": user_id}, headers=A)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["type"] == "invalid_input"
    assert client.get("/v1/decisions", params={"user_id": "u"}, headers=A).json()["results"]


def test_a_filter_on_the_tenant_key_is_told_the_tenant_comes_from_the_key(
    make_client: Client,
) -> None:
    client = make_client(api_keys=KEYS)
    r = _list(client, {"user_id": "u", TENANT_KEY: "tenant-b"})
    assert r.status_code == 400
    detail = r.json()["detail"]
    assert "API key" in detail
    assert "status" not in detail
    status = _list(client, {"user_id": "u", "status": "hypothesis"})
    assert "include_hypotheses" in status.json()["detail"]  # status keeps its own message


def test_page_links_are_relative_and_never_echo_the_host_header(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client(api_keys=KEYS)
    first = _add(client, "I like tea.", user_id="u").json()["results"][0]["id"]
    for i in range(4):
        store.items[f"m{i}"] = {**store.items[first], "id": f"m{i}"}
    r = client.post("/v3/memories/", json={"filters": {"user_id": "u"}},
                    params={"page": 2, "page_size": 2},
                    headers={**A, "Host": "evil.example"})  # fmt: skip
    body = r.json()
    assert "evil.example" not in r.text
    for link, page in ((body["next"], "3"), (body["previous"], "1")):
        url = httpx.URL(link)
        assert (url.host, url.path) == ("", "/v3/memories/")
        assert dict(url.params) == {"page": page, "page_size": "2"}
    followed = client.post(body["next"], json={"filters": {"user_id": "u"}}, headers=A).json()
    assert (followed["count"], len(followed["results"]), followed["next"]) == (5, 1, None)


def test_a_body_far_over_the_sentence_limit_names_no_wrong_count(make_client: Client) -> None:
    """Counting stops at the first message past the limit, so the count it had (2,100 of
    20,000) was no number of the request's."""
    client = make_client(api_keys=KEYS)
    content = " ".join(f"S{j}." for j in range(100))
    r = client.post("/v3/memories/add/", headers=A, json={
        "messages": [{"role": "user", "content": content}] * 200, "user_id": "u", "infer": False,
    })  # fmt: skip
    assert r.status_code == 413
    assert r.json()["detail"] == "request over the sentences limit: more than 2000"


def test_delete_all_with_filters_is_refused_naming_the_form_that_works(
    sidecar_url: str, store: InMemoryStore
) -> None:
    """The client sends ``filters`` as ``str(dict)`` in the query string; it was refused (fail
    closed) as if no id had been given. Still refused, nothing deleted, with the working form."""
    from mem0 import MemoryClient
    from mem0.exceptions import ValidationError

    client = MemoryClient(host=sidecar_url, api_key="key-a")
    client.add("I like tea.", user_id="x", infer=False)
    with pytest.raises(ValidationError, match=r"delete_all\(user_id=\.\.\.\)"):
        client.delete_all(filters={"user_id": "x"})
    with pytest.raises(ValidationError, match="not filters="):  # with an id too: not a guess
        client.delete_all(user_id="x", filters={"user_id": "y"})
    assert len(store.items) == 1
    client.delete_all(user_id="x")
    assert store.items == {}


@pytest.mark.parametrize("since", ["20240101", "1700000000", "1700000000.5"])
def test_decisions_since_a_number_is_refused_not_read_as_1970(
    make_client: Client, since: str
) -> None:
    """`since=20240101` (a date without its dashes) was read as 20,240,101 seconds after 1970,
    so every decision came back; a number is refused, an ISO date is read."""
    client = make_client(api_keys=KEYS)
    assert _add(client, "I like tea.", user_id="u").is_success
    r = client.get("/v1/decisions", params={"since": since}, headers=A)
    assert r.status_code == 422, r.text
    assert "ISO 8601" in r.text
    ok = client.get("/v1/decisions", params={"since": "2024-01-01"}, headers=A)
    assert ok.status_code == 200
    assert len(ok.json()["results"]) == 1
