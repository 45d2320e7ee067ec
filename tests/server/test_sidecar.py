"""The sidecar over HTTP (in-process): auth and tenants, limits, typed errors, faults, idempotency,
guard-native routes, metrics and logs."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.mem0 import (
    CONVERSATION,
    GENERATED_TEXT,
    STATED_TEXT,
    InMemoryStore,
    conversation_reply,
)
from tests.server.sidecar_setup import KEYS, A, B

Client = Callable[..., TestClient]
SECRET = "my-secret-diagnosis-is-hypothyroidism"


def _add(client: TestClient, headers: dict[str, str], content: str, **extra: Any) -> Any:
    body = {"messages": [{"role": "user", "content": content}], "user_id": "u1", **extra}
    return client.post("/memories", json=body, headers=headers)


def test_api_keys_are_required_in_any_header_mem0_clients_send(make_client: Client) -> None:
    client = make_client(api_keys=KEYS)
    missing = client.get("/v1/ping/")
    assert missing.status_code == 401
    assert missing.json()["error"]["type"] == "unauthorized"
    assert client.get("/v1/ping/", headers={"Authorization": "Token nope"}).status_code == 401
    for header in ("key-a", "Basic a2V5LWE="):  # no scheme, or one not read: said, key not echoed
        r = client.get("/v1/ping/", headers={"Authorization": header})
        assert r.status_code == 401
        assert "is not 'Token <key>' or 'Bearer <key>'" in r.json()["error"]["message"]
        assert header not in r.text
    for headers in (A, {"Authorization": "Bearer key-a"}, {"X-API-Key": "key-a"}):
        assert client.get("/v1/ping/", headers=headers).json()["status"] == "ok"
    assert client.get("/healthz").status_code == 200


def test_a_tenant_never_reads_or_changes_another_tenants_memories(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client(api_keys=KEYS)
    added = _add(client, A, "I like tea", infer=False).json()
    memory_id = added["results"][0]["id"]

    assert client.get(f"/memories/{memory_id}", headers=B).status_code == 404
    assert client.get(f"/v1/memories/{memory_id}/", headers=B).status_code == 404
    assert client.get(f"/memories/{memory_id}/history", headers=B).status_code == 404
    assert client.put(f"/memories/{memory_id}", json={"text": "x"}, headers=B).status_code == 404
    assert client.delete(f"/memories/{memory_id}", headers=B).status_code == 404
    assert client.get("/memories", params={"user_id": "u1"}, headers=B).json()["results"] == []
    search = {"query": "tea", "filters": {"user_id": "u1"}, "threshold": 0.0}
    assert client.post("/v3/memories/search/", json=search, headers=B).json()["results"] == []
    assert client.delete("/memories", params={"user_id": "u1"}, headers=B).status_code == 200
    assert client.post("/reset", headers=B).status_code == 200
    assert client.get("/v1/decisions", headers=B).json()["results"] == []

    assert memory_id in store.items
    assert client.get(f"/memories/{memory_id}", headers=A).json()["memory"] == "I like tea"
    assert len(client.get("/v1/decisions", headers=A).json()["results"]) == 1


def test_bodies_over_the_limit_are_refused_before_any_work(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client(max_body_bytes=2_000)
    big = _add(client, {}, "x" * 5_000, infer=False)
    assert big.status_code == 413
    assert big.json()["error"]["type"] == "payload_too_large"

    def chunks() -> Iterator[bytes]:
        yield b'{"messages": [{"role": "user", "content": "'
        for _ in range(10):
            yield b"y" * 500
        yield b'"}], "user_id": "u1", "infer": false}'

    streamed = client.post(
        "/memories", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert streamed.status_code == 413
    assert store.items == {}
    assert _add(client, {}, "small", infer=False).status_code == 200


def test_unknown_fields_on_write_routes_are_rejected_with_typed_errors(make_client: Client) -> None:
    client = make_client()
    r = _add(client, {}, "hi", surprise=True)
    assert r.status_code == 422
    body = r.json()
    assert body["error"]["type"] == "validation_error"
    assert body["error"]["fields"][0]["loc"] == ["body", "surprise"]
    r = client.put("/memories/abc", json={"text": "x", "status": "fact"})
    assert r.status_code == 422
    r = client.get("/memories/not-there")
    assert (r.status_code, r.json()["error"]["type"]) == (404, "memory_not_found")
    assert client.get("/nope").json()["error"]["type"] == "not_found"


def test_idempotency_key_makes_a_retry_return_the_first_answer(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client()
    headers = {"Idempotency-Key": "retry-1"}
    first = _add(client, headers, "I like tea")
    again = _add(client, headers, "I like tea")
    assert first.status_code == again.status_code == 200
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json() == first.json()
    assert len(store.items) == 1
    conflict = _add(client, headers, "I like coffee")
    assert (conflict.status_code, conflict.json()["error"]["type"]) == (409, "idempotency_conflict")
    assert len(store.items) == 1


def test_extractor_failure_fails_closed(make_client: Client, store: InMemoryStore) -> None:
    client = make_client(writer=ScriptedLLM(["not json at all"]))
    r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
    assert (r.status_code, r.json()["error"]["type"]) == (502, "model_output_invalid")
    assert store.items == {}
    assert client.get("/v1/decisions").json()["results"] == []


def test_writer_unavailable_is_503_and_retryable(make_client: Client) -> None:
    from mirage_guard.guard.errors import LLMUnavailableError

    client = make_client(writer=ScriptedLLM([LLMUnavailableError("down", model="w")]))
    r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
    assert r.status_code == 503
    assert r.json()["error"]["retryable"] is True
    assert r.headers["Retry-After"] == "1"


def test_upstream_down_mid_write_is_503_with_nothing_half_written(make_client: Client) -> None:
    flaky = InMemoryStore(fail_on_add=2)
    client = make_client(writer=ScriptedLLM([conversation_reply()]), backend=flaky)
    r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
    assert (r.status_code, r.json()["error"]["type"]) == (503, "upstream_unavailable")
    assert flaky.add_calls == 2
    assert flaky.items == {}
    assert client.get("/v1/decisions").json()["results"] == []


def test_readiness_follows_the_upstream(make_client: Client, store: InMemoryStore) -> None:
    client = make_client()
    assert client.get("/readyz").json() == {"status": "ready", "backend": "in-memory"}
    store.down = True
    assert client.get("/readyz").status_code == 503
    assert client.get("/healthz").status_code == 200


def test_add_reports_provenance_and_decisions_explain_it(make_client: Client) -> None:
    client = make_client(writer=ScriptedLLM([conversation_reply()]))
    added = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"}).json()
    statuses = {d["text"]: d["status"] for d in added["decisions"]}
    assert statuses[STATED_TEXT] == "fact"
    assert statuses[GENERATED_TEXT] == "quarantined"

    facts = client.get("/memories", params={"user_id": "u1"}).json()["results"]
    assert [(i["memory"], i["provenance"]) for i in facts] == [(STATED_TEXT, "stated")]
    everything = client.get(
        "/memories",
        params={"user_id": "u1", "include_hypotheses": True, "include_quarantined": True},
    ).json()["results"]
    assert len(everything) == 3

    generated = client.get("/v1/decisions", params={"provenance": "generated"}).json()["results"]
    assert [d["candidate_text"] for d in generated] == [GENERATED_TEXT]
    stated = client.get("/v1/decisions", params={"action": "store", "user_id": "u1"}).json()
    assert stated["results"][0]["source_turn_text"] == CONVERSATION[0]["content"]
    assert client.get("/v1/decisions", params={"user_id": "other"}).json()["results"] == []
    r = client.get("/v1/decisions", params={"since": "2999-01-01T00:00:00Z"})
    assert r.json()["results"] == []


def test_guard_tag_is_stateless(make_client: Client, store: InMemoryStore) -> None:
    client = make_client()
    body = {
        "turns": [{"id": "t1", "role": "user", "content": "I went climbing last weekend."}],
        "candidates": [
            {"id": "c1", "text": "User went climbing last weekend"},
            {"id": "c2", "text": "User is looking for an adventure partner"},
        ],
        "writer_model": "mock/any",
    }
    decisions = client.post("/v1/guard/tag", json=body).json()["decisions"]
    assert [(d["candidate"]["id"], d["provenance"]) for d in decisions] == [
        ("c1", "stated"),
        ("c2", "generated"),
    ]
    assert store.items == {}
    assert client.get("/v1/decisions").json()["results"] == []
    dup = {**body, "candidates": [body["candidates"][0], body["candidates"][0]]}
    assert client.post("/v1/guard/tag", json=dup).status_code == 400


def test_profiles_lists_the_guard_configuration(make_client: Client) -> None:
    body = make_client().get("/v1/profiles").json()
    assert body["guard"]["evidence_profile"] == "evidence-only"
    assert "evidence-only" in {p["profile_id"] for p in body["profiles"]}


def test_metrics_have_low_cardinality_labels_and_logs_carry_no_memory_text(
    make_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client()
    with caplog.at_level(logging.DEBUG):
        r = client.post(
            "/memories",
            json={"messages": [{"role": "user", "content": SECRET}], "user_id": "user-7731"},
        )
        assert r.status_code == 200
        client.post("/memories", json={"messages": [{"role": "user", "content": SECRET}]})
    info = [rec.getMessage() for rec in caplog.records if rec.levelno >= logging.INFO]
    assert info, "the sidecar logs its requests"
    assert not [m for m in info if SECRET in m]

    text = client.get("/metrics").text
    assert (
        'mirage_guard_decisions_total{action="store",model="mock/echo-writer",provenance="stated"}'
        in text
    )
    assert 'mirage_guard_memory_writes_total{status="fact"} 1.0' in text
    assert "user-7731" not in text
    assert SECRET not in text


def test_verbatim_writes_are_counted_with_their_reasons_as_the_report_counts_them(
    make_client: Client,
) -> None:
    """infer=False decisions used to reach only mirage_guard_decisions_total: no reasons, no
    uncalibrated count, though the decision log and the pollution report have both."""
    client = make_client()
    messages = [
        {"role": "user", "content": "I keep bees on my roof."},
        {"role": "assistant", "content": "You must like honey."},
    ]
    r = client.post("/memories", json={"messages": messages, "user_id": "u1", "infer": False})
    assert r.status_code == 200
    text = client.get("/metrics").text
    for line in (
        'mirage_guard_decision_reasons_total{code="verbatim_user_message",model="none"} 1.0',
        'mirage_guard_decision_reasons_total{code="not_user_words",model="none"} 1.0',
        'mirage_guard_uncalibrated_decisions_total{model="none"} 2.0',
    ):
        assert line in text


def _audit_fails(messages: Any, schema: Any) -> str:
    from mirage_guard.guard.extraction import ExtractionOutput

    if schema is ExtractionOutput:
        return conversation_reply()
    return "the auditor rambles instead of answering in JSON"


@pytest.mark.parametrize(("on_failure", "status"), [("quarantine", 200), ("error", 502)])
def test_self_audit_failure_fails_closed_as_configured(
    data_dir: Any, store: InMemoryStore, on_failure: str, status: int
) -> None:
    from mirage_guard.adapters.server import create_app
    from mirage_guard.guard import Guard, GuardSettings
    from mirage_guard.guard.llm import FunctionLLM
    from tests.fakes.embedder import HashingEmbedder

    settings = GuardSettings(data_dir=data_dir, audit_mode="separate", on_audit_failure=on_failure)
    writer = FunctionLLM(_audit_fails, model="mock/writer")
    app = create_app(
        settings,
        guard=Guard.from_settings(settings, writer_llm=writer, embedder=HashingEmbedder()),
        backend=store,
        writer_llm=writer,
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.post("/memories", json={"messages": CONVERSATION, "user_id": "u1"})
    assert r.status_code == status
    if status == 200:
        # nothing becomes a stated fact without the audit the configuration asked for
        assert {d["status"] for d in r.json()["decisions"]} == {"quarantined"}
        assert {i["metadata"]["status"] for i in store.items.values()} == {"quarantined"}
    else:
        assert r.json()["error"]["type"] == "model_output_invalid"
        assert store.items == {}


def test_an_unreachable_remote_mem0_is_503(make_client: Client) -> None:
    from mirage_guard.adapters import RemoteMem0Backend

    client = make_client(backend=RemoteMem0Backend("http://127.0.0.1:9", timeout_s=2.0))
    r = _add(client, {}, "I like tea", infer=False)
    assert (r.status_code, r.json()["error"]["type"]) == (503, "upstream_unavailable")
    assert client.get("/readyz").status_code == 503


def test_mem0s_wildcard_is_refused_as_an_id_on_every_route(
    make_client: Client, store: InMemoryStore
) -> None:
    """A user_id of "*" is Mem0's match-any filter value: it read and deleted every user's
    memories of a tenant. Every route refuses it as an id, in a body, a filter or a query."""
    client = make_client(api_keys=KEYS)
    for user in ("u1", "u2"):
        body = {"messages": [{"role": "user", "content": "I like tea"}], "infer": False}
        added = client.post("/memories", json={**body, "user_id": user}, headers=A)
        assert added.status_code == 200
    before = dict(store.items)
    msgs = [{"role": "user", "content": "I am everyone"}]
    refused = [
        client.post("/memories", json={"messages": msgs, "user_id": "*"}, headers=A),
        client.post("/v3/memories/add/", json={"messages": msgs, "filters": {"user_id": "*"}},
                    headers=A),
        client.post("/v3/memories/", json={"filters": {"user_id": "*"}}, headers=A),
        client.post("/v3/memories/", json={"filters": {"user_id": "u1", "agent_id": "*"}},
                    headers=A),
        client.post("/v3/memories/search/", json={"query": "tea", "filters": {"user_id": "*"}},
                    headers=A),
        client.post("/search", json={"query": "tea", "user_id": "*"}, headers=A),
        client.get("/memories", params={"user_id": "*"}, headers=A),
        client.delete("/memories", params={"user_id": "*"}, headers=A),
        client.delete("/v1/memories/", params={"user_id": "*"}, headers=A),
    ]  # fmt: skip
    for r in refused:
        assert r.status_code in (400, 422), (r.request.url, r.text)
        assert "wildcard" in r.text, r.text
    assert store.items == before


def test_reset_takes_no_body_and_a_body_naming_a_user_deletes_nothing(
    make_client: Client, store: InMemoryStore
) -> None:
    """POST /reset deletes every memory of the tenant. A body such as {"user_id": "x"} reads as
    a narrower reset; it was ignored and the whole tenant wiped. Now it is refused."""
    client = make_client(api_keys=KEYS)
    for user in ("keep_me", "x"):
        assert _add(client, A, "I like tea", infer=False, user_id=user).status_code == 200
    before = dict(store.items)
    for content in (b'{"user_id": "x"}', b'{"bogus": 1}', b"{not json", b"[]"):
        r = client.post(
            "/reset", content=content, headers={**A, "Content-Type": "application/json"}
        )
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "invalid_input"
        assert "DELETE /memories?user_id=" in r.json()["error"]["message"]
    assert store.items == before
    assert client.post("/reset", json={}, headers=A).status_code == 200
    assert store.items == {}


def test_get_all_pages_reach_every_memory_and_count_is_the_total(
    make_client: Client, store: InMemoryStore
) -> None:
    """`MemoryClient.get_all` pages: `count` is the scope's total on every page (it was the
    items up to the page), and pages go past the 1,000th memory (they stopped there, with no
    next page)."""
    client = make_client()
    first = _add(client, {}, "I like tea", infer=False).json()["results"][0]["id"]
    for i in range(1_079):  # copies of the stored fact, each its own memory of the same user
        store.items[f"m{i:04d}"] = {**store.items[first], "id": f"m{i:04d}"}
    seen: list[str] = []
    page, pages = 1, []
    while page:
        r = client.post("/v3/memories/", params={"page": page, "page_size": 100},
                        json={"filters": {"user_id": "u1"}})  # fmt: skip
        assert r.status_code == 200, r.text
        body = r.json()
        pages.append((body["count"], len(body["results"]), body["next"] is not None))
        seen += [m["id"] for m in body["results"]]
        page = page + 1 if body["next"] else 0
    assert pages == [(1_080, 100, True)] * 10 + [(1_080, 80, False)]
    assert len(set(seen)) == 1_080
    small = client.post("/v3/memories/", params={"page": 3, "page_size": 500},
                        json={"filters": {"user_id": "u1"}})  # fmt: skip
    assert small.status_code == 422  # page_size is at most 100, as before
    past = client.post("/v3/memories/", params={"page": 12, "page_size": 100},
                       json={"filters": {"user_id": "u1"}}).json()  # fmt: skip
    assert (past["count"], past["results"], past["next"]) == (1_080, [], None)


def test_entity_routes_refuse_what_is_not_a_scope_and_delete_nothing(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client(api_keys=KEYS)
    assert _add(client, A, "I like tea", infer=False).status_code == 200
    before = dict(store.items)
    for path in ("/v2/entities/app/u1/", "/v2/entities/org/u1/", "/v2/entities/user/*/"):
        r = client.delete(path, headers=A)
        assert r.status_code in (400, 422), r.text
    assert store.items == before
    listed = client.get("/v1/entities/", headers=A).json()
    assert [(e["type"], e["name"], e["total_memories"]) for e in listed["results"]] == [
        ("user", "u1", 1)
    ]
    assert client.get("/v1/entities/", headers=B).json()["results"] == []
    assert client.delete("/v2/entities/user/u1/", headers=B).status_code == 200  # not B's
    assert store.items == before
    app = client.post(
        "/v3/memories/", json={"filters": {"user_id": "u1", "app_id": "a"}}, headers=A
    )
    assert app.status_code == 422  # matched nothing, silently, read as a metadata key
    assert "app_id is not a scope here" in app.text
    assert client.delete("/v2/entities/user/u1/", headers=A).status_code == 200
    assert store.items == {}


def test_a_scope_id_given_twice_must_agree(make_client: Client, store: InMemoryStore) -> None:
    """A top-level user_id and filters.user_id that differ silently filed the memory (and read
    it) under the top-level one; now the request is refused and nothing is written."""
    client = make_client()
    msgs = [{"role": "user", "content": "I like tea"}]
    both = {"messages": msgs, "user_id": "a", "filters": {"user_id": "b"}, "infer": False}
    r = client.post("/v3/memories/add/", json=both)
    assert (r.status_code, r.json()["error"]["type"]) == (400, "invalid_input"), r.text
    assert "differ" in r.json()["error"]["message"]
    r = client.post("/search", json={"query": "tea", "user_id": "a", "filters": {"user_id": "b"}})
    assert r.status_code == 400
    assert store.items == {}
    same = {**both, "filters": {"user_id": "a"}}
    assert client.post("/v3/memories/add/", json=same).status_code == 200


def test_an_audit_verdict_for_no_candidate_is_refused(make_client: Client) -> None:
    """A verdict whose candidate_id no candidate has was dropped silently."""
    client = make_client()
    body = {
        "turns": [{"id": "t1", "role": "user", "content": "I like tea."}],
        "candidates": [{"id": "c1", "text": "Likes tea"}],
        "audit": [{"candidate_id": "c9", "label": "GROUNDED", "confidence": 0.9}],
    }
    r = client.post("/v1/guard/tag", json=body)
    assert (r.status_code, r.json()["error"]["type"]) == (400, "invalid_input"), r.text
    assert "'c9'" in r.json()["error"]["message"]
    body["audit"][0]["candidate_id"] = "c1"
    assert client.post("/v1/guard/tag", json=body).status_code == 200


def test_a_padded_id_in_a_query_is_trimmed_as_in_a_body(
    make_client: Client, store: InMemoryStore
) -> None:
    """A body's " u1 " is "u1"; the same id as a query parameter was a 422."""
    client = make_client()
    assert _add(client, {}, "I like tea", infer=False, user_id=" u1 ").status_code == 200
    listed = client.get("/memories", params={"user_id": " u1 "})
    assert [m["memory"] for m in listed.json()["results"]] == ["I like tea"]
    assert len(client.get("/v1/decisions", params={"user_id": " u1 "}).json()["results"]) == 1
    assert client.get("/memories", params={"user_id": "u 1"}).status_code == 422
    assert client.delete("/memories", params={"user_id": " u1 "}).status_code == 200
    assert store.items == {}


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/memories", '{"messages": [{"role": "user", "content": "tea \\ud83d"}], "user_id": "u"}'),
        ("/memories", '{"messages": "I like tea", "user_id": "u\\ud83d", "infer": false}'),
        ("/memories", '{"messages": "I like tea", "user_id": "u", "metadata": {"k": "\\ud83d"}}'),
        ("/search", '{"query": "tea \\ud83d", "user_id": "u"}'),
        ("/v1/guard/tag", '{"turns": [{"id": "t1", "role": "user", "content": "tea \\ud83d"}], '
                          '"candidates": [{"text": "Likes tea"}]}'),
    ],
)  # fmt: skip
def test_half_a_character_in_json_is_a_client_error(
    make_client: Client, store: InMemoryStore, path: str, body: str
) -> None:
    """A JSON escape of a lone surrogate is valid JSON and no storable text: 400 or 422, never
    a 5xx, and nothing is written."""
    r = make_client().post(path, content=body, headers={"content-type": "application/json"})
    assert r.status_code in (400, 422), r.text
    assert store.items == {}
