"""GuardedWrite: the one place that undoes a failed guarded write."""

from __future__ import annotations

import logging
from collections.abc import Callable

import anyio
import pytest

from mirage_guard.adapters import AsyncGuardedMemory, MemoryScope
from mirage_guard.adapters._write import GuardedWrite
from mirage_guard.guard import Action, Candidate, Decision, Provenance
from mirage_guard.guard.errors import BackendUnavailableError
from tests.fakes.mem0 import CONVERSATION, InMemoryStore

SCOPE = MemoryScope(user_id="alice")


def _fact(text: str) -> Decision:
    return Decision(
        candidate=Candidate(text=text),
        provenance=Provenance.STATED,
        action=Action.STORE,
        source_turn_id="t1",
        similarity=1.0,
        evidence_span=text,
        score=None,
        threshold=None,
        profile_id=None,
        calibrated=False,
    )


async def _write_then_fail(store: InMemoryStore, texts: list[str], ids: list[str]) -> None:
    async with GuardedWrite(store, None, tenant="t", scope=SCOPE) as write:
        for text in texts:
            ids.append(str((await write.store(_fact(text))).memory_id))
        assert len(store.items) == len(texts)
        raise RuntimeError("boom")


class _Undeletable(InMemoryStore):
    async def delete(self, memory_id: str) -> None:
        raise BackendUnavailableError("the store went away")


async def test_a_failed_block_deletes_every_item_it_created() -> None:
    store = InMemoryStore()
    with pytest.raises(RuntimeError, match="boom"):
        await _write_then_fail(store, ["likes tea", "walks to work"], [])
    assert store.items == {}
    assert [[e["event"] for e in events] for events in store.events.values()] == [
        ["ADD", "DELETE"], ["ADD", "DELETE"]
    ]  # fmt: skip


async def test_cancellation_mid_write_still_undoes() -> None:
    store = InMemoryStore()
    with anyio.CancelScope() as cancel:
        async with GuardedWrite(store, None, tenant="t", scope=SCOPE) as write:
            await write.store(_fact("likes tea"))
            cancel.cancel()
            await anyio.sleep_forever()
    assert cancel.cancelled_caught
    assert store.items == {}


async def test_items_that_cannot_be_undone_are_logged_with_their_ids(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = _Undeletable()
    ids: list[str] = []
    with caplog.at_level(logging.ERROR, logger="mirage.memory"), pytest.raises(RuntimeError):
        await _write_then_fail(store, ["likes tea"], ids)
    (record,) = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert ids[0] in record.getMessage()
    assert "could not be undone" in record.getMessage()


async def test_a_memory_whose_undo_fails_raises_the_original_error(
    build_memory: Callable[..., AsyncGuardedMemory], caplog: pytest.LogCaptureFixture
) -> None:
    store = _Undeletable(fail_on_add=2)
    memory = build_memory(backend=store)
    with (
        caplog.at_level(logging.ERROR, logger="mirage.memory"),
        pytest.raises(BackendUnavailableError, match="during the write"),
    ):
        await memory.add(CONVERSATION, user_id="alice")
    (left,) = store.items
    assert any(left in r.getMessage() for r in caplog.records)
