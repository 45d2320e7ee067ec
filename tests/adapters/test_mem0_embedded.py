"""GuardedMemory on a real embedded Mem0 store (Qdrant on disk) with the real MiniLM embedder."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.adapters import TENANT_KEY, GuardedMemory, Mem0Backend, embedded_mem0_config
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._embedding import Mem0Embedding
from mirage_guard.guard import Action, Guard, GuardSettings
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import MiniLMEmbedder, shared_minilm
from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.mem0 import (
    CONVERSATION,
    GENERATED_TEXT,
    MINILM_INFERRED_TEXT,
    STATED_TEXT,
    claims_reply,
    conversation_reply,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    return shared_minilm()


def _memory(settings: GuardSettings, minilm: MiniLMEmbedder, replies: list[str]) -> GuardedMemory:
    return GuardedMemory.from_settings(
        settings,
        writer_llm=ScriptedLLM(replies, model="mock/writer"),
        guard=Guard.from_settings(settings, embedder=minilm),
    )


@pytest.fixture
def memory(data_dir: Path, minilm: MiniLMEmbedder) -> Iterator[GuardedMemory]:
    m = _memory(
        GuardSettings(data_dir=data_dir), minilm, [conversation_reply(MINILM_INFERRED_TEXT)]
    )
    yield m
    m.close()


def _stored(memory: GuardedMemory, memory_id: str) -> dict[str, Any]:
    backend = memory.inner.backend
    assert isinstance(backend, Mem0Backend)
    raw: dict[str, Any] = backend.memory.get(memory_id)
    return raw


def test_stated_inferred_generated_become_fact_hypothesis_quarantine(
    memory: GuardedMemory,
) -> None:
    result = memory.add(CONVERSATION, user_id="alice")
    by_text = {r["memory"]: r for r in result["results"]}
    assert by_text[STATED_TEXT]["status"] == "fact"
    assert by_text[STATED_TEXT]["source_turn_id"] == "t1"
    assert by_text[MINILM_INFERRED_TEXT]["status"] == "hypothesis"
    assert by_text[MINILM_INFERRED_TEXT]["source_turn_id"] == "t2"
    assert by_text[GENERATED_TEXT]["status"] == "quarantined"

    # per-fact metadata really sits in the Mem0 store, next to each vector
    raw = _stored(memory, by_text[MINILM_INFERRED_TEXT]["id"])
    assert raw["metadata"]["provenance"] == "inferred"
    assert raw["metadata"]["profile_id"] == "evidence-only"
    assert raw["metadata"][TENANT_KEY] == "default"
    assert 0.0 <= raw["metadata"]["guard_score"] <= 1.0
    # the store embeds through the guard's (cached) MiniLM and commits in WAL mode
    backend = memory.inner.backend
    assert isinstance(backend, Mem0Backend)
    assert isinstance(backend.memory.embedding_model, Mem0Embedding)
    assert backend.memory.db.connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"

    found = memory.search("what does the user do on weekends?", filters={"user_id": "alice"})
    assert [i["memory"] for i in found["results"]] == [STATED_TEXT]
    found = memory.search(
        "adventure partner",
        filters={"user_id": "alice"},
        include_hypotheses=True,
        include_quarantined=True,
    )
    assert found["results"][0]["memory"] == GENERATED_TEXT
    listed = memory.get_all(filters={"user_id": "alice"}, include_hypotheses=True)
    assert {i["memory"] for i in listed["results"]} == {STATED_TEXT, MINILM_INFERRED_TEXT}


def test_a_writers_negated_and_compound_facts_are_not_stored_as_facts(
    data_dir: Path, minilm: MiniLMEmbedder
) -> None:
    """The issue's case through ``add(infer=True)``: from the single turn "I live in Lisbon."
    a writer returns a negation and two compounds with an unsaid part, all labelled GROUNDED;
    only what the user said is stored as a fact."""
    said = "User lives in Lisbon."
    reply = claims_reply(
        ("User does not live in Lisbon.", "t1", "GROUNDED", 0.9),
        ("User lives in Lisbon and is a vegan.", "t1", "GROUNDED", 0.9),
        ("User lives in Lisbon, is divorced.", "t1", "GROUNDED", 0.9),
        (said, "t1", "GROUNDED", 0.95),
    )
    memory = _memory(GuardSettings(data_dir=data_dir), minilm, [reply])
    try:
        result = memory.add([{"id": "t1", "role": "user", "content": "I live in Lisbon."}],
                            user_id="alice")  # fmt: skip
    finally:
        memory.close()
    status = {r["memory"]: r["status"] for r in result["results"]}
    assert status.pop(said) == "fact"
    assert len(status) == 3
    assert set(status.values()) == {"quarantined"}


def test_policy_is_configurable_block_and_quarantine_inferred(
    data_dir: Path, minilm: MiniLMEmbedder
) -> None:
    strict = GuardSettings(
        data_dir=data_dir, generated_action=Action.BLOCK, inferred_action=Action.QUARANTINE
    )
    memory = _memory(strict, minilm, [conversation_reply(MINILM_INFERRED_TEXT)])
    try:
        result = memory.add(CONVERSATION, user_id="alice")
        statuses = {d["text"]: (d["action"], d["status"]) for d in result["decisions"]}
        assert statuses[STATED_TEXT] == ("store", "fact")
        assert statuses[MINILM_INFERRED_TEXT] == ("quarantine", "quarantined")
        assert statuses[GENERATED_TEXT] == ("block", None)
        everything = memory.get_all(
            filters={"user_id": "alice"}, include_hypotheses=True, include_quarantined=True
        )
        assert {i["memory"] for i in everything["results"]} == {STATED_TEXT, MINILM_INFERRED_TEXT}
    finally:
        memory.close()


def test_verbatim_writes_update_history_delete_and_persistence(
    data_dir: Path, minilm: MiniLMEmbedder
) -> None:
    settings = GuardSettings(data_dir=data_dir)
    memory = _memory(settings, minilm, [])
    try:
        added = memory.add(
            [{"id": "v1", "role": "user", "content": "I am allergic to peanuts."}],
            user_id="bob",
            infer=False,
        )
        (item,) = added["results"]
        assert (item["provenance"], item["source_turn_id"]) == ("stated", "v1")
        memory.update(item["id"], text="I am allergic to peanuts and cashews.")
        events = [e["event"] for e in memory.history(item["id"])]
        assert events == ["ADD", "UPDATE"]
    finally:
        memory.close()

    reopened = _memory(settings, minilm, [])
    try:
        got = reopened.get(item["id"])
        assert got is not None
        assert got["memory"] == "I am allergic to peanuts and cashews."
        assert got["status"] == "fact"
        reopened.delete(item["id"])
        assert reopened.get(item["id"]) is None
        log = DecisionLog.from_settings(settings)
        assert log.memory_ids("default") == [item["id"]]
        log.close()
    finally:
        reopened.close()


def test_from_config_keeps_the_users_own_mem0_configuration(
    data_dir: Path, minilm: MiniLMEmbedder
) -> None:
    config = embedded_mem0_config(data_dir / "my-mem0", collection="my_memories")
    memory = GuardedMemory.from_config(
        config,
        settings=GuardSettings(data_dir=data_dir),
        writer_llm=ScriptedLLM([conversation_reply(MINILM_INFERRED_TEXT)], model="mock/writer"),
    )
    try:
        memory.add(CONVERSATION, user_id="alice")
        backend = memory.inner.backend
        assert isinstance(backend, Mem0Backend)
        assert backend.memory.collection_name == "my_memories"
        facts = memory.get_all(filters={"user_id": "alice"})
        assert [i["memory"] for i in facts["results"]] == [STATED_TEXT]
    finally:
        memory.close()
    assert (data_dir / "my-mem0" / "qdrant").is_dir()


def test_mem0s_wildcard_is_no_user_id(memory: GuardedMemory) -> None:
    """Mem0's stores read a filter value of "*" as "any value": as a user_id it read and
    deleted every user's memories. It is refused as an id, and nothing is read or deleted."""
    memory.add([{"role": "user", "content": "I like tea"}], user_id="alice", infer=False)
    memory.add([{"role": "user", "content": "I like chess"}], user_id="bob", infer=False)
    for call in (
        lambda: memory.get_all(filters={"user_id": "*"}),
        lambda: memory.search("tea", filters={"user_id": "*"}),
        lambda: memory.delete_all(user_id="*"),
        lambda: memory.add([{"role": "user", "content": "I am everyone"}], user_id="*"),
        lambda: memory.get_all(filters={"user_id": "alice", "agent_id": "*"}),
    ):
        with pytest.raises(InputError, match="Mem0's match-any wildcard"):
            call()
    for user, text in (("alice", "I like tea"), ("bob", "I like chess")):
        stored = memory.get_all(filters={"user_id": user})["results"]
        assert [r["memory"] for r in stored] == [text]


def test_a_fact_sent_again_is_stored_once_on_real_qdrant(memory: GuardedMemory) -> None:
    """The repeat is found through the store's own search (MiniLM vectors in Qdrant)."""
    turns = [{"id": "t1", "role": "user", "content": "I keep bees on the roof."}]
    first = memory.add(turns, user_id="alice", infer=False)
    again = memory.add(turns, user_id="alice", infer=False)
    assert again["results"] == []
    assert again["decisions"][0]["already_stored"] is True
    assert again["decisions"][0]["memory_id"] == first["results"][0]["id"]
    memory.remember(turns, ["Keeps bees on the roof", "keeps bees on the roof."], user_id="alice")
    memory.remember(turns, ["keeps bees on the roof"], user_id="alice")
    memory.add(turns, user_id="bob", infer=False)
    alice = memory.get_all(filters={"user_id": "alice"})["results"]
    assert sorted(r["memory"] for r in alice) == [
        "I keep bees on the roof.",
        "Keeps bees on the roof",
    ]
    assert len(memory.get_all(filters={"user_id": "bob"})["results"]) == 1
