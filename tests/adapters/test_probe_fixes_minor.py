"""The drop-in's side of the smaller things the probe of 2026-12 found: a float equality filter
reached the vector store and came back as its internals ("3 validation errors for
MatchValue"), a filter on the tenant key was told to filter by status, and an oversized write's
sentence count named a number that was not the request's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.adapters import TENANT_KEY, AsyncGuardedMemory, GuardedMemory
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import InputError, LimitExceededError
from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.mem0 import InMemoryStore

Build = Callable[..., AsyncGuardedMemory]
FLOAT_REFUSED = "an equality filter takes a string, an integer or a boolean, not a float"


@pytest.mark.parametrize(
    "value", [7.5, 7.0, float("nan"), {"eq": 7.5}, {"ne": 7.5}, {"in": [7.5, 8]}, {"nin": [7.5]}]
)
async def test_a_float_equality_filter_is_refused_before_the_store(
    build_memory: Build, value: Any
) -> None:
    """The fake store matches a float like any value; both real stores cannot (Qdrant) or
    cannot reliably (pgvector, 1e+16): the refusal is the guard's, before any store."""
    memory = build_memory()
    await memory.add("I have a boat.", user_id="u", infer=False, metadata={"length_m": 7.5})
    await memory.add("I have two oars.", user_id="u", infer=False, metadata={"oars": 2})
    filters = {"user_id": "u", "length_m": value}
    with pytest.raises(InputError, match=FLOAT_REFUSED):
        await memory.get_all(filters=filters)
    with pytest.raises(InputError, match=FLOAT_REFUSED):
        await memory.search("boat", filters=filters)
    by_int = await memory.get_all(filters={"user_id": "u", "oars": 2})
    assert [m["memory"] for m in by_int["results"]] == ["I have two oars."]
    assert (await memory.get_all(filters={"user_id": "u", "oars": {"in": [2, 3]}}))["results"]


def test_qdrant_cannot_match_a_float() -> None:
    """Why the float is refused rather than passed on: Qdrant's match condition takes a string,
    an integer or a boolean (a float fails its validation inside the store)."""
    from pydantic import ValidationError
    from qdrant_client.models import MatchValue

    with pytest.raises(ValidationError):
        MatchValue(value=7.5)  # type: ignore[arg-type]
    assert MatchValue(value=7).value == 7


async def test_a_filter_on_the_tenant_key_says_where_the_tenant_comes_from(
    build_memory: Build,
) -> None:
    memory = build_memory()
    with pytest.raises(InputError, match="the tenant is the API key's") as raised:
        await memory.get_all(filters={"user_id": "u", TENANT_KEY: "other"})
    assert "status" not in str(raised.value)
    with pytest.raises(InputError, match="include_hypotheses"):
        await memory.get_all(filters={"user_id": "u", "status": "fact"})


async def test_a_write_far_over_the_sentence_limit_says_more_than_the_limit(
    build_memory: Build, store: InMemoryStore
) -> None:
    memory = build_memory()
    content = " ".join(f"S{j}." for j in range(100))
    messages = [{"role": "user", "content": content}] * 200  # 20,000 sentences
    with pytest.raises(LimitExceededError) as raised:
        await memory.add(messages, user_id="u", infer=False)
    assert str(raised.value) == "request over the sentences limit: more than 2000"
    assert (raised.value.limit, raised.value.value, raised.value.maximum) == (
        "sentences",
        None,
        2000,
    )
    assert store.items == {}


@pytest.fixture
def embedded(data_dir: Path) -> Iterator[GuardedMemory]:
    from mirage_guard.guard.evidence import shared_minilm

    settings = GuardSettings(data_dir=data_dir)
    m = GuardedMemory.from_settings(
        settings,
        writer_llm=ScriptedLLM([], model="mock/writer"),
        guard=Guard.from_settings(settings, embedder=shared_minilm()),
    )
    yield m
    m.close()


@pytest.mark.slow
def test_on_embedded_qdrant_a_float_filter_is_refused_in_plain_words(
    embedded: GuardedMemory,
) -> None:
    embedded.add("I have a boat.", user_id="u", infer=False, metadata={"length_m": 7.5})
    embedded.add("I have two oars.", user_id="u", infer=False, metadata={"oars": 2})
    with pytest.raises(InputError, match=FLOAT_REFUSED) as raised:
        embedded.get_all(filters={"user_id": "u", "length_m": 7.5})
    assert "MatchValue" not in str(raised.value)
    by_int = embedded.get_all(filters={"user_id": "u", "oars": 2})
    assert [m["memory"] for m in by_int["results"]] == ["I have two oars."]
