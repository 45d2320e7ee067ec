"""The drop-in's side of what the probe of 2026-12 found in the sidecar: "." and ".." taken as
scope ids (a client's URL handling drops them, so no client could delete what is filed under
one), and Mem0's own metadata keys (``data``, ``hash``, ``role``, ``id``, ``actor_id``)
accepted and then dropped by Mem0 without a word."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mirage_guard.adapters import AsyncGuardedMemory
from mirage_guard.adapters._tenancy import scope_of
from mirage_guard.guard.errors import InputError
from tests.fakes.mem0 import InMemoryStore

Build = Callable[..., AsyncGuardedMemory]


@pytest.mark.parametrize("dots", [".", ".."])
async def test_a_dot_segment_is_no_scope_id(
    build_memory: Build, store: InMemoryStore, dots: str
) -> None:
    with pytest.raises(InputError, match=r"run_id '\.\.?' is a URL dot segment"):
        scope_of("u", None, dots)
    memory = build_memory()
    scopes: list[dict[str, Any]] = [
        {"user_id": dots},
        {"agent_id": f" {dots} "},
        {"user_id": "u", "run_id": dots},
    ]
    for scope in scopes:
        with pytest.raises(InputError, match="dot segment"):
            await memory.add("I like owls.", infer=False, **scope)
        with pytest.raises(InputError, match="dot segment"):
            await memory.delete_all(**scope)
        with pytest.raises(InputError, match="dot segment"):
            await memory.get_all(filters=scope)
    assert store.items == {}
    assert scope_of("team/alice", "...", ".x").as_kwargs() == {
        "user_id": "team/alice",
        "agent_id": "...",
        "run_id": ".x",
    }  # only the two dot segments are refused


@pytest.mark.parametrize("key", ["data", "hash", "role", "id", "actor_id"])
async def test_mem0s_own_metadata_keys_are_refused_not_dropped(
    build_memory: Build, store: InMemoryStore, key: str
) -> None:
    memory = build_memory()
    with pytest.raises(InputError, match=f"reserved for the guard or Mem0: \\['{key}'\\]"):
        await memory.add("I collect stamps.", user_id="u", infer=False, metadata={key: "x"})
    assert store.items == {}
    added = await memory.add("I collect stamps.", user_id="u", infer=False, metadata={"k": "v"})
    memory_id = added["results"][0]["id"]
    with pytest.raises(InputError, match="reserved"):
        await memory.update(memory_id, metadata={key: "x"})
    item = await memory.get(memory_id)
    assert item is not None
    assert key not in item["metadata"]
    assert item["metadata"]["k"] == "v"
