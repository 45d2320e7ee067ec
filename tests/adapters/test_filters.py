"""Mem0's filter language through the guarded memory: checked before a store reads it (a top-level
AND joined to the top, the platform's ``{"AND": [{"user_id": ...}]}`` read as the scope, the
guard's own keys refused anywhere), and evaluated the same way on returned items.

Until 2026-12-07 the sidecar refused every operator and AND / OR / NOT, and the drop-in passed
them to Mem0 unchecked: ``{"AND": [{"status": "quarantined"}]}`` or an AND naming ``topic`` twice
silently matched nothing or the wrong items."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from mirage_guard.adapters import TENANT_KEY, AsyncGuardedMemory, MemoryScope, RemoteMem0Backend
from mirage_guard.adapters._filters import checked_filters, matches
from mirage_guard.adapters._tenancy import GUARD_FILTER_KEYS
from mirage_guard.guard.errors import InputError, LimitExceededError
from tests.fakes.mem0 import InMemoryStore, mem0_rest_app

Build = Callable[..., AsyncGuardedMemory]

ITEMS = [
    ("I like green tea.", {"topic": "food", "n": 1}),
    ("I have a dog named Rex.", {"topic": "pets", "n": 5}),
    ("I live in Porto.", {"topic": "place", "n": 9, "note": "Moved here in Spring"}),
]


def _item(text: str, meta: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {"memory": text, "metadata": meta, **top}


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"n": {"gt": 3}}, ["dog", "Porto"]),
        ({"n": {"gte": 5, "lt": 9}}, ["dog"]),
        ({"topic": {"in": ["food", "pets"]}}, ["tea", "dog"]),
        ({"topic": {"nin": ["food", "pets"]}}, ["Porto"]),
        ({"topic": {"ne": "food"}}, ["dog", "Porto"]),
        ({"note": {"contains": "spring"}}, ["Porto"]),  # read loosely: never narrower than a store
        ({"OR": [{"topic": "food"}, {"n": {"gt": 8}}]}, ["tea", "Porto"]),
        ({"NOT": [{"topic": "food"}, {"topic": "pets"}]}, ["Porto"]),
        ({"AND": [{"topic": "pets"}, {"n": 5}]}, ["dog"]),
        ({"n": {"gt": "3"}}, []),  # a string is no number: nothing, not a TypeError
    ],
)
def test_matches_reads_the_language_as_the_stores_do(
    filters: dict[str, Any], expected: list[str]
) -> None:
    items = [_item(t, m) for t, m in ITEMS]
    hits = [i["memory"] for i in items if matches(i, filters)]
    assert [next(w for w in expected if w in h) for h in hits] == expected


def test_dates_compare_as_instants_across_zones() -> None:
    item = _item("x", {}, created_at="2026-12-07T10:00:00-08:00")  # Mem0 writes US/Pacific
    assert matches(item, {"created_at": {"gte": "2026-12-07T17:30:00Z"}})
    assert not matches(item, {"created_at": {"gt": "2026-12-07T18:00:00+00:00"}})


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        # the Mem0 platform's form: the scope inside a top-level AND
        ({"AND": [{"user_id": "alex"}, {"topic": "food"}]}, {"user_id": "alex", "topic": "food"}),
        # a range split over two AND items is one range
        (
            {"user_id": "a", "AND": [{"n": {"gte": 5}}, {"n": {"lt": 9}}]},
            {"user_id": "a", "n": {"gte": 5, "lt": 9}},
        ),
        ({"user_id": "a", "AND": [{"user_id": "a"}]}, {"user_id": "a"}),
        ({"user_id": "a", "AND": [{"user_id": " a "}]}, {"user_id": "a"}),  # trimmed alike
        (
            {"user_id": "a", "OR": [{"topic": "x"}], "NOT": [{"n": 1}]},
            {"user_id": "a", "OR": [{"topic": "x"}], "NOT": [{"n": 1}]},
        ),
    ],
)
def test_a_top_level_and_joins_the_top_level(
    filters: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert checked_filters(filters, GUARD_FILTER_KEYS) == expected


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        ({"user_id": "a", "AND": [{"topic": "food"}, {"topic": "pets"}]}, "given twice"),
        ({"user_id": "a", "AND": [{"user_id": "b"}]}, "given twice"),
        ({"user_id": "a", "OR": [{"user_id": "b"}]}, "is the scope, not a condition"),
        ({"user_id": "a", "NOT": [{"run_id": "r"}]}, "is the scope, not a condition"),
        ({"user_id": "a", "OR": [{TENANT_KEY: "other"}]}, "API key"),
        ({"user_id": "a", "AND": [{"status": "quarantined"}]}, "include_hypotheses"),
        ({"user_id": "a", "NOT": [{"status": {"in": ["fact"]}}]}, "include_hypotheses"),
        ({"user_id": "a", "OR": [{"AND": [{"n": 1}]}]}, "cannot be nested"),
        ({"user_id": "a", "OR": []}, "non-empty list"),
        ({"user_id": "a", "OR": {"topic": "x"}}, "non-empty list"),
        ({"user_id": "a", "OR": [{}]}, "non-empty dict"),
        ({"user_id": "a", "n": {"between": [1, 2]}}, "unknown filter operator 'between'"),
        ({"user_id": "a", "n": {}}, "empty operator dict"),
        ({"user_id": "a", "n": {"gt": 3, "in": [5]}}, "one operator per key (gt, in given)"),
        # embedded Qdrant read only the first of these: eq and ne together matched topic == a
        ({"user_id": "a", "t": {"eq": "a", "ne": "a"}}, "one operator per key"),
        ({"user_id": "a", "AND": [{"t": {"in": ["a", "b"]}}, {"t": {"ne": "a"}}]}, "one operator"),
        ({"user_id": "a", "t": "*"}, "'*' is not read alike"),
        ({"user_id": "a", "NOT": [{"private": "*"}]}, "'*' is not read alike"),
        # a path into the store's payload, not a key: '"status"' reached the status field
        ({"user_id": "a", '"status"': "quarantined"}, "is not a metadata key"),
        ({"user_id": "a", "NOT": [{"metadata.status": "fact"}]}, "is not a metadata key"),
        ({"user_id": "a", "status ": "fact"}, "is not a metadata key"),
        ({"user_id": "a", "t": {"in": ["a", 1]}}, "strings or of integers, not both"),
        ({"user_id": "a", "n": {"gt": float("nan")}}, "a finite number"),
        ({"user_id": "a", "n": {"gt": 1e400}}, "a finite number"),
        ({"user_id": "a", "n": {"gt": 10**400}}, "a finite number"),
        ({"user_id": "a", "n": 10**400}, "finite and at most 2**53"),
        ({"user_id": "a", "d": {"gte": "20240101"}}, "ISO 8601 date"),  # a number to Qdrant
        ({"user_id": "a", "d": {"gte": "2024-01-01T10"}}, "ISO 8601 date"),
        ({"user_id": "a", "d": {"gte": "2024-02-30"}}, "is not a date"),
        ({"user_id": "a", "n": {"in": []}}, "non-empty list"),
        ({"user_id": "a", "n": {"in": 5}}, "non-empty list"),
        ({"user_id": "a", "ok": {"in": [True]}}, "a boolean: use an equality"),
        ({"user_id": "a", "n": {"gt": "soon"}}, "a finite number or an ISO 8601 date"),
        ({"user_id": "a", "note": {"contains": " "}}, "non-empty string"),
        ({"user_id": "a", "n": {"eq": 7.5}}, "not a float"),
        ({"user_id": "a", "OR": [{"n": {"in": [7.5]}}]}, "not a float"),
        ({"user_id": "a", "n": [1, 2]}, "a condition is a string"),
        ({"user_id": "a", "n": None}, "a condition is a string"),
    ],
)
def test_what_a_store_would_misread_is_refused_naming_where(
    filters: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError) as err:
        checked_filters(filters, GUARD_FILTER_KEYS)
    assert message in str(err.value)


async def _stored(memory: AsyncGuardedMemory, user_id: str = "alice") -> None:
    for text, meta in ITEMS:
        await memory.add([{"role": "user", "content": text}], user_id=user_id, metadata=meta,
                         infer=False)  # fmt: skip


async def test_the_guarded_memory_reads_the_language_and_keeps_its_own_narrowing(
    build_memory: Build,
) -> None:
    memory = build_memory()
    await _stored(memory)
    await _stored(memory, user_id="bob")

    async def texts(filters: dict[str, Any], **kw: Any) -> list[str]:
        listed = await memory.get_all(filters=filters, **kw)
        return sorted(i["memory"] for i in listed["results"])

    platform = {"AND": [{"user_id": "alice"}, {"n": {"gte": 5}}]}
    assert await texts(platform) == ["I have a dog named Rex.", "I live in Porto."]
    found = await memory.search("where does the user live", filters=platform, threshold=0.0)
    assert {i["user_id"] for i in found["results"]} == {"alice"}
    either = {"user_id": "alice", "OR": [{"topic": "food"}, {"n": {"gt": 8}}]}
    assert await texts(either) == ["I like green tea.", "I live in Porto."]
    # the status stays the guard's to narrow, inside OR as at the top
    with pytest.raises(InputError, match="include_hypotheses"):
        await texts({"user_id": "alice", "OR": [{"status": "quarantined"}]})
    with pytest.raises(InputError, match="one of user_id"):
        await texts({"OR": [{"topic": "food"}]})


async def test_a_remote_store_that_ignores_filters_is_filtered_again(store: InMemoryStore) -> None:
    """The remote backend reads every operator of the language on what a server returns (it
    raised "filter operator 'gt' is not supported here")."""
    remote = RemoteMem0Backend(
        "http://mem0.test", transport=httpx.ASGITransport(app=mem0_rest_app(store))
    )
    for text, meta in ITEMS:
        await remote.add([{"role": "user", "content": text}], scope=MemoryScope(user_id="alice"),
                         metadata=meta)  # fmt: skip
    store.apply_filters = False
    f = {"user_id": "alice", "n": {"gt": 3}, "NOT": [{"topic": "place"}]}
    assert [i["memory"] for i in await remote.get_all(filters=f, top_k=10)] == [
        "I have a dog named Rex."
    ]
    await remote.aclose()


@pytest.mark.parametrize(
    ("filters", "limit"),
    [
        ({"user_id": "a", "OR": [{"t": f"v{i}"} for i in range(21)]}, "filter OR items"),
        ({"user_id": "a", "t": {"in": [f"v{i}" for i in range(101)]}}, "filter in values"),
        ({"user_id": "a", **{f"k{i}": i for i in range(51)}}, "filter conditions"),
        # an OR of 20 items of 500 keys each was 20 conditions, not 10,000
        (
            {"user_id": "a", "OR": [{f"k{j}": j for j in range(3)} for _ in range(17)]},
            "filter conditions",
        ),
    ],
)
def test_a_filter_too_large_for_the_store_is_refused_before_it(
    filters: dict[str, Any], limit: str
) -> None:
    """An OR of 15,000 items over 60 memories held embedded Qdrant's one lock for 8 s (every
    tenant waited); a filter is now bounded, each limit named."""
    with pytest.raises(LimitExceededError) as err:
        checked_filters(filters, GUARD_FILTER_KEYS)
    assert err.value.limit == limit


def test_filters_that_are_not_a_dict_are_an_input_error() -> None:
    with pytest.raises(InputError, match="filters must be a dict"):
        checked_filters(["user_id"], GUARD_FILTER_KEYS)  # type: ignore[arg-type]


async def test_what_a_mem0_app_passes_to_reads(build_memory: Build) -> None:
    """An app written against mem0.Memory: an integer user id (add files it as "42"), a
    threshold of None (Mem0's default), and Mem0 1.x's limit= (which Mem0 2.x ignores, returning
    20) told to use top_k=."""
    memory = build_memory()
    await memory.add([{"role": "user", "content": "I like tea."}], user_id=42, infer=False)  # type: ignore[arg-type]
    listed = await memory.get_all(filters={"user_id": 42})
    assert [i["memory"] for i in listed["results"]] == ["I like tea."]
    found = await memory.search("tea", filters={"user_id": "42"}, threshold=None)
    assert [i["memory"] for i in found["results"]] == ["I like tea."]
    for call in (memory.search("tea", filters={"user_id": "42"}, limit=1),
                 memory.get_all(filters={"user_id": "42"}, limit=1)):  # fmt: skip
        with pytest.raises(InputError, match="takes top_k=, not limit="):
            await call
