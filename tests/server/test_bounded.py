"""The sidecar as a bounded system (issue 9): metric labels only from configuration, request
limits, per-user turn ids, edits that never bypass the guard, smaller operational failures."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from mirage_guard.guard.errors import ConfigError
from tests.fakes.mem0 import InMemoryStore
from tests.server.sidecar_setup import KEYS, A, B

Client = Callable[..., TestClient]


def _tag(client: TestClient, writer_model: str) -> Any:
    body = {
        "turns": [{"id": "t1", "role": "user", "content": "I went climbing last weekend."}],
        "candidates": [{"id": "c1", "text": "User went climbing last weekend"}],
        "writer_model": writer_model,
    }
    return client.post("/v1/guard/tag", json=body)


def test_metric_model_labels_come_only_from_configured_models(make_client: Client) -> None:
    client = make_client()
    for i in range(5):
        assert _tag(client, f"someone{i}@example.com").status_code == 200
    text = client.get("/metrics").text
    assert "example.com" not in text
    assert 'mirage_guard_decisions_total{action="store",model="other",provenance="stated"} 5.0' in (
        text
    )
    client.post("/memories", json={"messages": [{"role": "user", "content": "I am a nurse."}],
                                   "user_id": "u1"})  # fmt: skip
    text = client.get("/metrics").text
    assert 'model="mock/echo-writer"' in text  # the configured writer keeps its name


def test_turn_ids_are_scoped_per_user(make_client: Client) -> None:
    client = make_client()

    def add(user: str, content: str) -> Any:
        msg = {"role": "user", "content": content, "id": "t1"}
        return client.post("/memories", json={"messages": [msg], "user_id": user, "infer": False})

    assert add("alice", "I am a nurse.").status_code == 200
    assert add("bob", "I am a pilot.").status_code == 200  # was 400: "t1" already used
    assert add("alice", "I am a pilot.").status_code == 400  # one user's t1 stays stable
    decisions = client.get("/v1/decisions").json()["results"]
    texts = {(d["user_id"], d["source_turn_text"]) for d in decisions}
    assert texts == {("alice", "I am a nurse."), ("bob", "I am a pilot.")}


def test_put_retags_the_new_text_and_logs_it(make_client: Client) -> None:
    client = make_client()
    msg = {"role": "user", "content": "I went climbing last weekend.", "id": "t1"}
    added = client.post("/memories", json={"messages": [msg], "user_id": "u1", "infer": False})
    memory_id = added.json()["results"][0]["id"]
    for path in (f"/memories/{memory_id}", f"/v1/memories/{memory_id}/"):
        r = client.put(path, json={"text": "User has two younger sisters"})
        assert r.status_code == 200
        assert r.json()["decision"]["provenance"] == "generated"
        item = client.get(f"/memories/{memory_id}").json()
        assert (item["provenance"], item["status"]) == ("generated", "quarantined")
        facts = client.get("/memories", params={"user_id": "u1"}).json()["results"]
        assert facts == []
    rows = client.get("/v1/decisions", params={"memory_id": memory_id}).json()["results"]
    assert [r["provenance"] for r in rows] == ["generated", "generated", "stated"]
    assert rows[0]["reasons"][-1]["code"] == "edited"


def test_requests_over_the_limits_are_refused_before_any_work(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client(max_turn_chars=500, max_candidate_chars=100, max_sentences_per_request=20)
    long_turn = "I like tea. " * 50  # 600 characters
    many = " ".join(f"I like tea number {i}." for i in range(30))  # 30 sentences, < 500 chars
    cases = [
        ("turn_chars", {"turns": [{"id": "t1", "role": "user", "content": long_turn}]}),
        ("sentences", {"turns": [{"id": "t1", "role": "user", "content": many[:499]}]}),
        ("candidate_chars", {"turns": [{"id": "t1", "role": "user", "content": "I like tea."}],
                             "candidates": [{"id": "c1", "text": "x" * 101}]}),
    ]  # fmt: skip
    for limit, body in cases:
        body.setdefault("candidates", [{"id": "c1", "text": "User likes tea"}])
        r = client.post("/v1/guard/tag", json=body)
        assert r.status_code == 413, limit
        assert r.json()["error"]["type"] == "limit_exceeded"
        assert limit in r.json()["detail"]
    r = client.post(
        "/memories",
        json={"messages": [{"role": "user", "content": long_turn}], "user_id": "u1"},
    )
    assert r.status_code == 413
    assert store.items == {}
    assert client.get("/v1/decisions").json()["results"] == []
    text = client.get("/metrics").text
    assert "mirage_guard_decisions_total{" not in text  # nothing reached the guard's scoring


def test_empty_messages_answer_that_nothing_was_written(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client()
    # whitespace, and what `str.strip` keeps: zero-width spaces, a byte-order mark, punctuation
    for content in ("  ", "\u200b\u200b\u200b", "\ufeff", ".", "!!! ?"):
        for infer in (True, False):
            body = {"messages": [{"role": "user", "content": content}], "user_id": "u1",
                    "infer": infer}  # fmt: skip
            r = client.post("/memories", json=body)
            assert r.status_code == 200
            assert r.json()["results"] == []
            assert r.json()["message"] == "nothing was written: no message has any text"
    for infer in (True, False):
        body = {"messages": [{"role": "system", "content": "Be brief."}], "user_id": "u1",
                "infer": infer}  # fmt: skip
        r = client.post("/memories", json=body).json()
        assert (r["results"], r["decisions"]) == ([], [])
        assert r["message"].startswith("nothing was written: only system messages")
    assert store.items == {}


def test_text_that_states_nothing_is_never_a_stated_fact(
    make_client: Client, store: InMemoryStore
) -> None:
    """A zero-width space, a byte-order mark or punctuation alone was stored as a stated fact
    (by add, by an edit) and tagged stated by /v1/guard/tag: `str.strip` keeps them."""
    client = make_client()
    added = client.post(
        "/memories",
        json={"messages": [{"role": "user", "content": "I like tea"}, {"role": "user",
              "content": "\u200b"}], "user_id": "u1", "infer": False},
    )  # fmt: skip
    assert [m["memory"] for m in added.json()["results"]] == ["I like tea"]
    memory_id = added.json()["results"][0]["id"]
    for text in ("\u200b", "\ufeff", "..."):
        r = client.put(f"/memories/{memory_id}", json={"text": text})
        assert r.status_code == 400, r.text
        assert "no letter or digit" in r.json()["error"]["message"]
    assert client.get(f"/memories/{memory_id}").json()["memory"] == "I like tea"
    turns = [{"id": "t1", "role": "user", "content": "I like tea. Really!"}]
    for text in ("\u200b", "\ufeff", ".", "!", "-"):
        r = client.post("/v1/guard/tag", json={"turns": turns, "candidates": [{"text": text}]})
        assert r.status_code == 422, r.text
        assert "no letter or digit" in r.text
    ok = client.post("/v1/guard/tag", json={"turns": turns, "candidates": [{"text": "Likes tea"}]})
    assert ok.status_code == 200
    assert len(store.items) == 1


def test_clients_cannot_set_mem0_timestamps_in_metadata(
    make_client: Client, store: InMemoryStore
) -> None:
    client = make_client()
    for key in ("created_at", "updated_at", "expiration_date"):
        body = {
            "messages": [{"role": "user", "content": "I am a nurse."}],
            "user_id": "u1",
            "metadata": {key: "2001-01-01T00:00:00Z"},
        }
        r = client.post("/memories", json=body)
        assert r.status_code == 400, key
        assert key in r.json()["detail"]
    assert store.items == {}


def test_a_data_dir_that_stops_taking_writes_makes_the_sidecar_not_ready(
    make_client: Client, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    client = make_client(database_url="sqlite://")  # the log elsewhere: only the dir fails
    assert client.get("/readyz").status_code == 200
    moved = data_dir.with_name("moved-away")
    data_dir.rename(moved)
    data_dir.write_text("not a directory")  # every write under it now fails, as read-only would
    with caplog.at_level(logging.INFO, logger="mirage.server"):
        for _ in range(3):
            r = client.get("/readyz")
            assert r.status_code == 503
            assert "data directory unusable" in r.json()["detail"]
    lines = [rec.getMessage() for rec in caplog.records if rec.levelno >= logging.ERROR]
    assert len([m for m in lines if "not ready" in m and "MIRAGE_DATA_DIR" in m]) == 1
    data_dir.unlink()
    moved.rename(data_dir)
    assert client.get("/readyz").status_code == 200


def test_the_sidecar_refuses_to_start_on_a_full_disk(
    make_client: Client, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.INFO, logger="mirage.server"),
        pytest.raises(ConfigError, match="disk nearly full"),
    ):
        make_client(min_free_bytes=10**18)
    assert any("cannot start" in r.getMessage() for r in caplog.records)


def test_mem0_does_not_log_memory_text_at_info(caplog: pytest.LogCaptureFixture) -> None:
    from mirage_guard.adapters._mem0 import _import_mem0

    with caplog.at_level(logging.INFO):  # a server that logs at INFO (uvicorn's default)
        _import_mem0()
        assert not logging.getLogger("mem0.memory.main").isEnabledFor(logging.INFO)


JAPANESE_TURNS = [
    {"id": "t1", "role": "user", "content": "私は東京のソフトウェアエンジニアです。"},
    {"id": "t2", "role": "user", "content": "週末はボルダリングに行きました。"},
]


def test_languages_the_evidence_model_cannot_read_fail_closed(make_client: Client) -> None:
    client = make_client()
    cases = [
        (JAPANESE_TURNS, "内向的でパーティーが苦手", "ja"),  # a stereotype
        (JAPANESE_TURNS, "二人の妹がいる", "ja"),  # invented: two younger sisters
        (JAPANESE_TURNS, "週末はボルダリングに行きました", "ja"),  # even a restatement
        ([{"id": "t1", "role": "user", "content": "Es una persona muy cariñosa, dice mi madre."}],
         "Es una persona muy cariñosa", "es"),
    ]  # fmt: skip
    for turns, text, language in cases:
        body = {"turns": turns, "candidates": [{"id": "c1", "text": text}]}
        (d,) = client.post("/v1/guard/tag", json=body).json()["decisions"]
        assert (d["provenance"], d["action"]) == ("generated", "quarantine"), text
        assert d["reasons"][-1]["code"] == "unsupported_language"
        assert d["reasons"][-1]["params"]["language"] == language
    english = {
        "turns": [{"id": "t1", "role": "user", "content": "I went climbing last weekend."}],
        "candidates": [{"id": "c1", "text": "User went climbing last weekend"}],
    }
    (d,) = client.post("/v1/guard/tag", json=english).json()["decisions"]
    assert d["provenance"] == "stated"
    text = client.get("/metrics").text
    assert 'mirage_guard_unsupported_language_decisions_total{language="ja"} 3.0' in text
    assert 'mirage_guard_unsupported_language_decisions_total{language="es"} 1.0' in text


def test_verbatim_adds_in_another_language_are_not_stated(make_client: Client) -> None:
    client = make_client()
    r = client.post("/memories", json={"messages": JAPANESE_TURNS, "user_id": "u1", "infer": True})
    assert r.status_code == 200
    assert all(d["provenance"] != "stated" for d in r.json()["decisions"])
    assert client.get("/memories", params={"user_id": "u1"}).json()["results"] == []


def test_guard_tag_caches_are_per_tenant(make_client: Client) -> None:
    from mirage_guard.adapters.server._deps import Sidecar
    from tests.fakes.embedder import CountingEmbedder, HashingEmbedder

    counting = CountingEmbedder(HashingEmbedder())
    client = make_client(api_keys=KEYS)
    sidecar: Sidecar = client.app.state.sidecar  # type: ignore[attr-defined]
    sidecar.memory.guard.linker.embedder = counting  # count what the guard sends the encoder
    body = {
        "turns": [{"id": "t1", "role": "user", "content": "My sister lives in Lyon."}],
        "candidates": [{"id": "c1", "text": "Has a sister"}],
    }
    assert client.post("/v1/guard/tag", json=body, headers=B).status_code == 200
    counting.reset()
    assert client.post("/v1/guard/tag", json=body, headers=A).status_code == 200
    assert "My sister lives in Lyon." in counting.calls[0]  # encoded again for tenant A
    counting.reset()
    assert client.post("/v1/guard/tag", json=body, headers=A).status_code == 200
    assert counting.calls == [["Has a sister"]]  # A's own sentence is cached for A


def test_tag_takes_the_users_name(make_client: Client) -> None:
    """`user_name` on /v1/guard/tag: a claim that names the user asserts no unsaid name, so the
    name is not among the words the user never said; without it, it is."""
    client = make_client()
    body: dict[str, Any] = {
        "turns": [{"id": "t1", "role": "user", "content": "I went climbing last weekend."}],
        "candidates": [{"id": "c1", "text": "Last weekend Alice went climbing"}],
    }

    def unsaid(extra: dict[str, Any]) -> list[str]:
        r = client.post("/v1/guard/tag", json={**body, **extra})
        assert r.status_code == 200, r.text
        (d,) = r.json()["decisions"]
        return [
            w
            for x in d["reasons"]
            if x["code"] == "unsupported_content"
            for w in x["params"]["words"]
        ]

    assert "alice" in unsaid({})
    assert "alice" not in unsaid({"user_name": "Alice Moreau"})
    assert client.post("/v1/guard/tag", json={**body, "user_name": ""}).status_code == 422


def test_the_turn_limit_is_the_setting_on_every_route(
    make_client: Client, store: InMemoryStore
) -> None:
    """A fixed 20,000-character cap on the wire answered 422 before the setting was read: a
    raised MIRAGE_MAX_TURN_CHARS was ignored, and at the default a long turn got 422, not the
    413 `limit_exceeded` /v1/guard/tag gave for the same turn."""
    default = make_client()
    long_turn = "I like tea. " * 1_700  # 20,400 characters: over the default 20,000
    body = {"messages": [{"role": "user", "content": long_turn}], "user_id": "u1", "infer": False}
    for path in ("/memories", "/v3/memories/add/"):
        r = default.post(path, json=body)
        assert (r.status_code, r.json()["error"]["type"]) == (413, "limit_exceeded"), r.text
        assert "turn_chars" in r.json()["detail"]
    assert store.items == {}
    raised = make_client(max_turn_chars=50_000, max_sentences_per_request=5_000)
    stored = raised.post("/memories", json=body)
    assert stored.status_code == 200, stored.text
    assert [m["memory"] for m in stored.json()["results"]] == [long_turn.strip()]
    memory_id = stored.json()["results"][0]["id"]
    edit = raised.put(f"/memories/{memory_id}", json={"text": "Likes tea. " * 300})
    assert (edit.status_code, edit.json()["error"]["type"]) == (413, "limit_exceeded")
    assert "candidate_chars" in edit.json()["detail"]
