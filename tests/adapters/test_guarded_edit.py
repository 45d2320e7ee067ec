"""Updates never bypass the guard: new text is tagged against the memory's conversation."""

from __future__ import annotations

from collections.abc import Callable

from mirage_guard.adapters import AsyncGuardedMemory
from mirage_guard.adapters._decision_log import DecisionLog, DecisionQuery
from mirage_guard.guard import Action, GuardSettings, Provenance, ReasonCode
from tests.fakes.mem0 import CONVERSATION, STATED_TEXT, InMemoryStore

Build = Callable[..., AsyncGuardedMemory]


async def _stated_id(memory: AsyncGuardedMemory) -> str:
    result = await memory.add(CONVERSATION, user_id="alice")
    return next(r["id"] for r in result["results"] if r["memory"] == STATED_TEXT)


async def test_an_unsupported_edit_is_no_longer_a_stated_fact(
    build_memory: Build, decision_log: DecisionLog
) -> None:
    memory = build_memory()
    memory_id = await _stated_id(memory)
    answer = await memory.update(memory_id, text="User has two younger sisters")
    assert answer["decision"]["provenance"] == "generated"
    # not "updated successfully": the memory just left default reads, and the answer says so
    assert answer["message"] == (
        "Memory updated, but the conversation does not say the new text: it is now quarantined "
        "and left out of reads without include_quarantined=True"
    )
    item = await memory.get(memory_id)
    assert item is not None
    assert item["memory"] == "User has two younger sisters"
    assert (item["provenance"], item["status"], item["source_turn_id"]) == (
        "generated",
        "quarantined",
        None,
    )
    assert item["metadata"]["edited_by"] == "default"
    facts = await memory.get_all(filters={"user_id": "alice"})
    assert memory_id not in {r["id"] for r in facts["results"]}
    rows = decision_log.query("default", DecisionQuery(memory_id=memory_id))
    assert [r.provenance for r in rows] == [Provenance.GENERATED, Provenance.STATED]
    assert ReasonCode.EDITED in {r.code for r in rows[0].reasons}


async def test_an_edit_the_conversation_supports_stays_stated(build_memory: Build) -> None:
    memory = build_memory()
    memory_id = await _stated_id(memory)
    answer = await memory.update(memory_id, text="User went climbing last weekend.")
    assert answer["message"] == "Memory updated successfully!"
    item = await memory.get(memory_id)
    assert item is not None
    assert (item["provenance"], item["source_turn_id"]) == ("stated", "t1")
    await memory.update(memory_id, metadata={"note": "checked"})  # metadata only: not re-tagged
    item = await memory.get(memory_id)
    assert item is not None
    assert (item["provenance"], item["metadata"]["note"]) == ("stated", "checked")


async def test_a_blocked_edit_leaves_the_memory_as_it_was(
    build_memory: Build, data_dir: object, store: InMemoryStore
) -> None:
    memory = build_memory(settings_=GuardSettings(data_dir=data_dir, generated_action=Action.BLOCK))
    memory_id = await _stated_id(memory)
    answer = await memory.update(memory_id, text="User has two younger sisters")
    assert answer["message"].startswith("Memory not updated")
    item = await memory.get(memory_id)
    assert item is not None
    assert (item["memory"], item["provenance"]) == (STATED_TEXT, "stated")


async def test_an_edit_without_a_decision_log_fails_closed(store: InMemoryStore) -> None:
    from mirage_guard.guard import Guard
    from tests.fakes.embedder import HashingEmbedder

    memory = AsyncGuardedMemory(
        backend=store, guard=Guard.from_settings(GuardSettings(), embedder=HashingEmbedder())
    )
    result = await memory.add(CONVERSATION, user_id="alice", infer=False)
    memory_id = result["results"][0]["id"]
    await memory.update(memory_id, text="I went climbing last weekend.")  # its own words
    item = await memory.get(memory_id)
    assert item is not None
    assert item["provenance"] == "generated"  # no conversation to check it against


async def test_an_edit_is_tagged_against_the_turns_in_the_order_they_were_written(
    build_memory: Build,
) -> None:
    from mirage_guard.guard import Turn

    memory = build_memory()
    history = [
        {"id": f"m{i}", "role": "user", "content": f"Note {i}: I went climbing last weekend."}
        for i in range(1, 12)
    ]
    result = await memory.add(history, user_id="alice", infer=False)
    memory_id = result["results"][0]["id"]
    seen: list[list[str]] = []
    tag = memory.guard.atag

    async def spy(turns: list[Turn], *args: object, **kwargs: object) -> object:
        seen.append([t.id for t in turns])
        return await tag(turns, *args, **kwargs)  # type: ignore[arg-type]

    memory.guard.atag = spy  # type: ignore[method-assign]
    await memory.update(memory_id, text="User went climbing last weekend.")
    assert seen == [[f"m{i}" for i in range(1, 12)]]
