"""Half a character (a lone surrogate, as a JSON escape "\\ud83d" or a cut string leaves it) is
an InputError wherever a caller's text enters, and nothing is written.

Before 2026-12-07 such text raised a raw pydantic ValidationError, a UnicodeEncodeError from
the decision log, or a BackendError (a caller's input reported as a store failure)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.adapters import AsyncGuardedMemory
from mirage_guard.guard import GuardSettings, well_formed
from mirage_guard.guard.errors import InputError
from tests.fakes.embedder import HashingEmbedder
from tests.fakes.mem0 import InMemoryStore

HALF = "\ud83d"  # the first half of an emoji
Call = Callable[[AsyncGuardedMemory, str], Awaitable[Any]]
USER = {"user_id": "u1"}

CALLS: dict[str, Call] = {
    "a message": lambda m, _: m.remember(f"I like tea {HALF}", ["Likes tea"], **USER),
    "a candidate": lambda m, _: m.remember("I like tea", [f"Likes tea {HALF}"], **USER),
    "an assistant message": lambda m, _: m.add(
        [{"role": "assistant", "content": f"yum {HALF}"}], infer=False, **USER
    ),
    "a message id": lambda m, _: m.add(
        [{"id": f"t{HALF}", "role": "user", "content": "I like tea"}], infer=False, **USER
    ),
    "an edit": lambda m, mid: m.update(mid, text=f"Likes tea {HALF}"),
    "a query": lambda m, _: m.search(f"tea {HALF}", filters=USER),
    "a user id": lambda m, _: m.add("I like tea", user_id=f"u{HALF}", infer=False),
    "metadata": lambda m, _: m.add("I like tea", infer=False, metadata={"k": [HALF]}, **USER),
    "a filter": lambda m, _: m.get_all(filters={"user_id": f"u{HALF}"}),
}


def test_well_formed() -> None:
    assert well_formed("I like tea 🍵 and 日本茶")
    assert not well_formed(f"tea {HALF}")


@pytest.mark.parametrize("name", sorted(CALLS))
async def test_half_a_character_is_an_input_error_and_nothing_is_written(
    tmp_path: Path, name: str
) -> None:
    store = InMemoryStore()
    memory = AsyncGuardedMemory.from_settings(
        GuardSettings(data_dir=tmp_path), embedder=HashingEmbedder(), backend=store
    )
    async with memory:
        added = await memory.add("I like tea", infer=False, **USER)
        before = dict(store.items)
        with pytest.raises(InputError):
            await CALLS[name](memory, added["results"][0]["id"])
        assert store.items == before
