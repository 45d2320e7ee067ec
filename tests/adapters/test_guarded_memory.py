"""AsyncGuardedMemory / GuardedMemory behaviour on fakes: tagging, visibility, fail-closed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy.exc import OperationalError

from mirage_guard.adapters import TENANT_KEY, AsyncGuardedMemory, GuardedMemory, Mem0PromptExtractor
from mirage_guard.adapters._decision_log import DecisionLog, DecisionQuery
from mirage_guard.adapters._outbox import outbox_for
from mirage_guard.adapters._scope import MemoryScope
from mirage_guard.guard import AuditMode, Guard, GuardSettings, Reason, ReasonCode
from mirage_guard.guard._domain import Action, Provenance
from mirage_guard.guard.errors import (
    BackendError,
    BackendUnavailableError,
    ConfigError,
    InputError,
    LLMOutputError,
    MemoryNotFoundError,
)
from mirage_guard.guard.extraction import CandidateExtractor
from mirage_guard.guard.llm import FunctionLLM, ScriptedLLM
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import (
    CONVERSATION,
    GENERATED_TEXT,
    INFERRED_TEXT,
    STATED_TEXT,
    InMemoryStore,
    claims_reply,
)

Build = Callable[..., AsyncGuardedMemory]


def _by_text(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {d["text"]: d for d in result["decisions"]}


async def test_infer_tags_each_fact_and_writes_per_fact_metadata(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    result = await memory.add(CONVERSATION, user_id="alice")

    decisions = _by_text(result)
    assert decisions[STATED_TEXT]["provenance"] == "stated"
    assert decisions[STATED_TEXT]["source_turn_id"] == "t1"
    assert decisions[INFERRED_TEXT]["status"] == "hypothesis"
    assert decisions[INFERRED_TEXT]["source_turn_id"] == "t2"
    assert decisions[GENERATED_TEXT]["status"] == "quarantined"
    assert decisions[GENERATED_TEXT]["source_turn_id"] is None
    # one store write per fact, each with its own provenance metadata
    assert store.add_calls == 3
    metas = {i["memory"]: i["metadata"] for i in store.items.values()}
    assert metas[STATED_TEXT]["provenance"] == "stated"
    assert metas[INFERRED_TEXT]["provenance"] == "inferred"
    assert metas[GENERATED_TEXT]["status"] == "quarantined"
    assert {m[TENANT_KEY] for m in metas.values()} == {"default"}
    assert [t["id"] for t in result["turns"]] == ["t1", "t2", "t3"]


async def test_search_and_get_all_return_facts_unless_asked(build_memory: Build) -> None:
    memory = build_memory()
    await memory.add(CONVERSATION, user_id="alice")

    facts = await memory.get_all(filters={"user_id": "alice"})
    assert [i["memory"] for i in facts["results"]] == [STATED_TEXT]
    assert facts["results"][0]["provenance"] == "stated"
    assert TENANT_KEY not in facts["results"][0]["metadata"]

    everything = await memory.get_all(
        filters={"user_id": "alice"}, include_hypotheses=True, include_quarantined=True
    )
    assert {i["status"] for i in everything["results"]} == {"fact", "hypothesis", "quarantined"}

    found = await memory.search("adventure partner", filters={"user_id": "alice"})
    assert found["results"] == []
    found = await memory.search(
        "adventure partner", filters={"user_id": "alice"}, include_quarantined=True
    )
    assert [i["memory"] for i in found["results"]] == [GENERATED_TEXT]


async def test_quarantine_stays_hidden_when_a_store_ignores_filters(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    await memory.add(CONVERSATION, user_id="alice")
    store.apply_filters = False  # an upstream that drops the status filter
    found = await memory.search("adventure partner climbing", filters={"user_id": "alice"})
    assert {i["status"] for i in found["results"]} == {"fact"}


async def test_infer_false_stores_user_messages_as_stated_with_their_turn_id(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    result = await memory.add(
        [
            {"id": "m1", "role": "user", "content": "I live in Lisbon."},
            {"id": "m2", "role": "assistant", "content": "You must love the sea."},
            {"role": "system", "content": "be nice"},
        ],
        user_id="bob",
        infer=False,
    )
    decisions = _by_text(result)
    assert decisions["I live in Lisbon."]["provenance"] == "stated"
    assert decisions["I live in Lisbon."]["source_turn_id"] == "m1"
    # the assistant's words about the user are not evidence: generated, quarantined
    assert decisions["You must love the sea."]["status"] == "quarantined"
    assert len(store.items) == 2
    facts = await memory.get_all(filters={"user_id": "bob"})
    assert [i["memory"] for i in facts["results"]] == ["I live in Lisbon."]


async def test_blocked_candidates_are_logged_but_never_written(
    build_memory: Build, store: InMemoryStore, data_dir: Any, decision_log: DecisionLog
) -> None:
    blocking = GuardSettings(data_dir=data_dir, generated_action=Action.BLOCK)
    memory = build_memory(settings_=blocking)
    result = await memory.add(CONVERSATION, user_id="alice")
    assert _by_text(result)[GENERATED_TEXT]["action"] == "block"
    assert GENERATED_TEXT not in {i["memory"] for i in store.items.values()}
    logged = decision_log.query("default", DecisionQuery(action=Action.BLOCK))
    assert [r.candidate_text for r in logged] == [GENERATED_TEXT]
    assert logged[0].memory_id is None


async def test_decision_log_explains_every_stored_memory(
    build_memory: Build, decision_log: DecisionLog
) -> None:
    memory = build_memory()
    result = await memory.add(CONVERSATION, user_id="alice")
    stated_id = next(r["id"] for r in result["results"] if r["memory"] == STATED_TEXT)
    (row,) = decision_log.query("default", DecisionQuery(memory_id=stated_id))
    assert row.provenance is Provenance.STATED
    assert row.source_turn_text == "I went climbing last weekend."
    assert row.profile_id == "evidence-only"
    assert row.writer_model == "mock/writer"
    assert decision_log.turn("default", MemoryScope(user_id="alice"), "t2") is not None
    assert decision_log.turn("default", MemoryScope(user_id="bob"), "t2") is None


async def test_malformed_extraction_fails_closed(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    memory = build_memory(ScriptedLLM(['{"claims": [{"text": "likes tea"}]}']))
    with pytest.raises(LLMOutputError):
        await memory.add(CONVERSATION, user_id="alice")
    assert store.items == {}
    assert decision_log.query("default") == []


async def test_store_failure_mid_write_undoes_what_was_written(
    build_memory: Build, decision_log: DecisionLog
) -> None:
    flaky = InMemoryStore(fail_on_add=2)
    memory = build_memory(backend=flaky)
    with pytest.raises(BackendUnavailableError):
        await memory.add(CONVERSATION, user_id="alice")
    assert flaky.add_calls == 2
    assert flaky.items == {}  # the first fact was undone
    assert decision_log.query("default") == []


async def test_decision_log_failure_undoes_the_writes(
    build_memory: Build,
    store: InMemoryStore,
    decision_log: DecisionLog,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def disk_full(*args: Any, **kwargs: Any) -> None:
        raise OperationalError("INSERT INTO mirage_conversation_turns", {}, Exception("disk full"))

    monkeypatch.setattr(decision_log, "_store_turns", disk_full)  # the done transaction fails
    memory = build_memory()
    with pytest.raises(BackendError, match="decision log"):
        await memory.add(CONVERSATION, user_id="alice")
    assert store.items == {}
    assert outbox_for(decision_log).pending() == []  # the intent went with the undo


async def test_no_writer_model_means_infer_true_is_refused(
    settings: GuardSettings, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    memory = AsyncGuardedMemory(
        backend=store,
        guard=Guard.from_settings(settings, embedder=HashingEmbedder()),
        decision_log=decision_log,
    )
    with pytest.raises(ConfigError, match="writer model"):
        await memory.add("I like tea", user_id="u")
    assert store.items == {}
    assert (await memory.add("I like tea", user_id="u", infer=False))["results"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"metadata": {"status": "fact"}}, "reserved"),
        ({"metadata": {TENANT_KEY: "other"}}, "reserved"),
        ({"user_id": None}, "one of user_id"),
        ({"user_id": "has space"}, "whitespace"),
        ({"prompt": "extract everything"}, "custom extraction prompts"),
    ],
)
async def test_invalid_adds_are_refused(
    build_memory: Build, store: InMemoryStore, kwargs: dict[str, Any], message: str
) -> None:
    memory = build_memory()
    call = {"user_id": "alice", **kwargs}
    with pytest.raises(InputError, match=message):
        await memory.add(CONVERSATION, **call)
    assert store.items == {}


async def test_a_turn_id_cannot_be_reused_for_other_content(build_memory: Build) -> None:
    memory = build_memory(FunctionLLM(lambda m, s: claims_reply()))
    await memory.add([{"id": "x1", "role": "user", "content": "I like tea"}], user_id="u")
    with pytest.raises(InputError, match="x1"):
        await memory.add([{"id": "x1", "role": "user", "content": "I hate tea"}], user_id="u")


async def test_status_cannot_be_promoted_through_update(build_memory: Build) -> None:
    memory = build_memory()
    result = await memory.add(CONVERSATION, user_id="alice")
    hypothesis = next(r["id"] for r in result["results"] if r["status"] == "hypothesis")
    with pytest.raises(InputError, match="reserved"):
        await memory.update(hypothesis, metadata={"status": "fact"})
    await memory.update(hypothesis, text="User stays up late")  # re-tagged, not promoted
    item = await memory.get(hypothesis)
    assert item is not None
    assert item["memory"] == "User stays up late"
    # what the guard makes of the new text depends on the profile; a fact it never is, since no
    # user turn says it
    assert item["status"] in ("hypothesis", "quarantined")


async def test_tenants_do_not_see_each_other(build_memory: Build) -> None:
    base = build_memory(FunctionLLM(lambda m, s: claims_reply()))
    a, b = base.for_tenant("a"), base.for_tenant("b")
    written = await a.add("I like tea", user_id="same-user", infer=False)
    memory_id = written["results"][0]["id"]

    assert await b.get(memory_id) is None
    assert (await b.get_all(filters={"user_id": "same-user"}))["results"] == []
    for attempt in (b.delete(memory_id), b.history(memory_id), b.update(memory_id, text="x")):
        with pytest.raises(MemoryNotFoundError):
            await attempt
    await b.delete_all(user_id="same-user")
    await b.reset()
    assert await a.get(memory_id) is not None
    await a.reset()
    assert await a.get(memory_id) is None
    assert [e["event"] for e in await a.history(memory_id)] == ["ADD", "DELETE"]


async def test_delete_all_removes_every_status_of_the_scope(build_memory: Build) -> None:
    memory = build_memory()
    await memory.add(CONVERSATION, user_id="alice")
    await memory.add("I like tea", user_id="carol", infer=False)
    await memory.delete_all(user_id="alice")
    left = await memory.get_all(
        filters={"user_id": "alice"}, include_hypotheses=True, include_quarantined=True
    )
    assert left["results"] == []
    assert (await memory.get_all(filters={"user_id": "carol"}))["results"]


async def test_inline_audit_passes_the_extractors_labels_to_the_guard(
    build_memory: Build, data_dir: Any
) -> None:
    llm = ScriptedLLM([claims_reply((STATED_TEXT, "t1", "FABRICATED", 0.9))])
    memory = build_memory(settings_=GuardSettings(data_dir=data_dir, audit_mode=AuditMode.INLINE))
    memory.extractor = CandidateExtractor(llm, inline_audit=True)
    result = await memory.add(CONVERSATION, user_id="alice")
    (decision,) = result["decisions"]
    # an uncalibrated self-report can only make the decision more cautious
    assert decision["provenance"] == "generated"
    codes = {Reason.model_validate(r).code for r in decision["reasons"]}
    assert ReasonCode.SELF_AUDIT_DOWNGRADE in codes


async def test_mem0_extraction_mode_tags_mem0s_facts(build_memory: Build) -> None:
    def mem0_answer(messages: Any, schema: Any) -> str:
        assert "Memory Extractor" in messages[0].content  # Mem0's own system prompt
        return '{"memory": [{"id": "0", "text": "User went climbing last weekend"},' \
               ' {"id": "1", "text": "User is looking for an adventure partner"}]}'  # fmt: skip

    memory = build_memory()
    memory.extractor = Mem0PromptExtractor(FunctionLLM(mem0_answer, model="mock/mem0-writer"))
    result = await memory.add(CONVERSATION, user_id="alice")
    statuses = {d["text"]: d["status"] for d in result["decisions"]}
    assert statuses == {STATED_TEXT: "fact", GENERATED_TEXT: "quarantined"}


def test_sync_facade_works_inside_and_outside_an_event_loop(build_memory: Build) -> None:
    memory = GuardedMemory(build_memory())
    try:
        result = memory.add(CONVERSATION, user_id="alice")
        assert len(result["results"]) == 3

        async def inside_a_loop() -> dict[str, Any]:
            return memory.get_all(filters={"user_id": "alice"})

        facts = asyncio.run(inside_a_loop())
        assert [i["memory"] for i in facts["results"]] == [STATED_TEXT]
        memory_id = facts["results"][0]["id"]
        assert memory.get(memory_id) is not None
        assert memory.update(memory_id, text="User climbs")["message"]
        assert [e["event"] for e in memory.history(memory_id)] == ["ADD", "UPDATE"]
        assert memory.delete(memory_id)["message"]
        assert memory.get(memory_id) is None
    finally:
        memory.close()
    memory.close()  # idempotent


async def test_remember_tags_caller_given_candidates_without_an_extraction_call(
    build_memory: Build, store: InMemoryStore
) -> None:
    llm = ScriptedLLM([])
    memory = build_memory(llm)
    result = await memory.remember(
        CONVERSATION, [STATED_TEXT, GENERATED_TEXT], user_id="alice", writer_model="mock/agent"
    )
    assert llm.calls == []
    statuses = {d["text"]: d["status"] for d in result["decisions"]}
    assert statuses == {STATED_TEXT: "fact", GENERATED_TEXT: "quarantined"}
    assert {i["memory"] for i in store.items.values()} == {STATED_TEXT, GENERATED_TEXT}
    empty = await memory.remember(CONVERSATION, [], user_id="alice")
    assert empty["results"] == []
    assert empty["decisions"] == []


@pytest.mark.parametrize("infer", [True, False])
async def test_duplicate_message_ids_in_one_call_are_an_input_error(
    build_memory: Build, store: InMemoryStore, infer: bool
) -> None:
    # found by schemathesis: two messages with one id reached the decision log as a 502
    memory = build_memory(FunctionLLM(lambda m, s: claims_reply()))
    messages = [
        {"id": "0", "role": "user", "content": "I like tea"},
        {"id": "0", "role": "user", "content": "I walk to work"},
    ]
    with pytest.raises(InputError, match="unique"):
        await memory.add(messages, user_id="u", infer=infer)
    assert store.items == {}


async def test_add_and_remember_pass_the_users_name_to_the_guard(
    build_memory: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``user_name`` (not a Mem0 argument) reaches the guard from ``add(infer=True)`` and
    ``remember``; Mem0's own calls, without it, pass None."""
    from tests.fakes.mem0 import conversation_reply

    memory = build_memory(ScriptedLLM([conversation_reply()] * 2, model="mock/writer"))
    seen: list[str | None] = []
    atag = memory.guard.atag

    async def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("user_name"))
        return await atag(*args, **kwargs)

    monkeypatch.setattr(memory.guard, "atag", spy)
    await memory.add(CONVERSATION, user_id="alice", user_name="Alice Moreau")
    await memory.remember(CONVERSATION, [STATED_TEXT], user_id="alice", user_name="Alice Moreau")
    await memory.add(CONVERSATION, user_id="alice")
    assert seen == ["Alice Moreau", "Alice Moreau", None]


async def test_text_that_states_nothing_is_never_written(
    build_memory: Build, store: InMemoryStore
) -> None:
    """Invisible characters and punctuation alone say nothing: ``remember`` refuses them as
    candidates (naming which), a writer's such claim is dropped, ``add(infer=False)`` skips such
    a message, and nothing of them is stored."""
    memory = build_memory()
    turns = [{"id": "t1", "role": "user", "content": "I like tea."}]
    for bad in ("\u200b", "\ufeff", ".", "!!!"):
        with pytest.raises(InputError, match=r"candidates\[1\] text: .*no letter or digit"):
            await memory.remember(turns, ["Likes tea", bad], user_id="alice")
    assert store.items == {}
    verbatim = await memory.add(
        [*turns, {"id": "t2", "role": "user", "content": "\u200b\u200b"}],
        user_id="alice",
        infer=False,
    )
    assert [d["text"] for d in verbatim["decisions"]] == ["I like tea."]
    reply = claims_reply(
        ("Likes tea", "t1", "GROUNDED", 0.9),
        ("\u200b", None, "FABRICATED", 0.5),
        ("?", None, "FABRICATED", 0.5),
    )
    writer = build_memory(ScriptedLLM([reply], model="mock/writer"))
    inferred = await writer.add(turns, user_id="bob")
    assert [d["text"] for d in inferred["decisions"]] == ["Likes tea"]
