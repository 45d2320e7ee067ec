"""The sync facade cannot drift from its async twin, and both keep ``mem0.Memory``'s signatures."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.adapters import AsyncGuardedMemory, GuardedMemory, RemoteMem0Backend
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.embedder import HashingEmbedder

# sync name -> async name, where the httpx convention names them differently
RENAMED = {"close": "aclose"}
MEM0_METHODS = ("add", "search", "get_all", "get", "update", "delete", "delete_all", "history",
                "reset")  # fmt: skip


def _public_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """Public instance methods and classmethods (properties are attributes, not methods)."""
    return {
        name: getattr(cls, name)
        for name, raw in inspect.getmembers_static(cls)
        if not name.startswith("_")
        and (inspect.isfunction(raw) or isinstance(raw, classmethod | staticmethod))
    }


def test_every_public_method_has_a_twin_with_the_same_signature() -> None:
    sync = _public_methods(GuardedMemory)
    async_ = _public_methods(AsyncGuardedMemory)
    assert {RENAMED.get(name, name) for name in sync} == set(async_)
    assert {"from_settings", "from_config", "for_tenant", "add", "remember"} <= set(sync)
    for name, fn in sync.items():
        twin = async_[RENAMED.get(name, name)]
        assert not inspect.iscoroutinefunction(fn), name
        # constructors and views do no I/O: sync on both sides; the rest is awaited on one
        blocking = name == "for_tenant" or inspect.ismethod(fn)  # ismethod: a bound classmethod
        assert inspect.iscoroutinefunction(twin) is not blocking, name
        assert inspect.signature(fn, eval_str=True) == inspect.signature(twin, eval_str=True), name


def _is_sentinel(value: Any) -> bool:
    return type(value) is object


@pytest.mark.parametrize("cls", [GuardedMemory, AsyncGuardedMemory])
@pytest.mark.parametrize("name", MEM0_METHODS)
def test_mem0_methods_keep_mem0s_parameters(cls: type, name: str) -> None:
    import mem0

    theirs = list(inspect.signature(getattr(mem0.Memory, name)).parameters.values())
    ours = list(inspect.signature(getattr(cls, name)).parameters.values())
    known = {p.name for p in theirs}
    # mem0's parameters, in mem0's order, of the same kind and with the same defaults ...
    assert [p.name for p in ours if p.name in known] == [p.name for p in theirs]
    by_name = {p.name: p for p in ours}
    for p in theirs:
        mine = by_name[p.name]
        assert mine.kind == p.kind, (name, p.name)
        if _is_sentinel(p.default):
            assert _is_sentinel(mine.default), (name, p.name)
        else:
            assert mine.default == p.default, (name, p.name)
    # ... and anything added is an optional keyword
    for p in ours:
        if p.name not in known:
            assert p.kind is inspect.Parameter.KEYWORD_ONLY, (name, p.name)
            assert p.default is not inspect.Parameter.empty, (name, p.name)


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records which built parts are closed, in order."""
    order: list[str] = []

    def record(label: str, original: Callable[..., Any]) -> Callable[..., Any]:
        if inspect.iscoroutinefunction(original):

            async def aclose(self: Any) -> None:
                order.append(label)
                await original(self)

            return aclose

        def close(self: Any) -> None:
            order.append(label)
            original(self)

        return close

    monkeypatch.setattr(Guard, "close", record("guard", Guard.close))
    monkeypatch.setattr(RemoteMem0Backend, "aclose", record("backend", RemoteMem0Backend.aclose))
    monkeypatch.setattr(DecisionLog, "close", record("decision_log", DecisionLog.close))
    monkeypatch.setattr(ScriptedLLM, "aclose", record("writer_llm", ScriptedLLM.aclose))
    return order


def _settings(data_dir: Path) -> GuardSettings:
    return GuardSettings(data_dir=data_dir, upstream_url="http://127.0.0.1:9")


async def test_aclose_closes_what_from_settings_built_in_reverse_order(
    data_dir: Path, closes: list[str]
) -> None:
    writer = ScriptedLLM([], model="mock/writer")  # passed in: stays the caller's
    memory = AsyncGuardedMemory.from_settings(
        _settings(data_dir), writer_llm=writer, embedder=HashingEmbedder()
    )
    assert isinstance(memory.backend, RemoteMem0Backend)
    async with memory:
        pass
    assert closes == ["decision_log", "backend", "guard"]
    await memory.aclose()  # idempotent
    assert closes == ["decision_log", "backend", "guard"]


def test_close_of_the_sync_twin_closes_the_same_parts(data_dir: Path, closes: list[str]) -> None:
    with GuardedMemory.from_settings(
        _settings(data_dir), embedder=HashingEmbedder(), linker_thread="pool"
    ) as memory:
        view = memory.for_tenant("t")
        view.close()  # a tenant view owns nothing
        assert closes == []
    assert closes == ["decision_log", "backend", "guard"]
    memory.close()
    assert closes == ["decision_log", "backend", "guard"]


def test_a_failed_composition_closes_what_it_had_built(data_dir: Path, closes: list[str]) -> None:
    broken = _settings(data_dir).model_copy(update={"database_url": "nosuchdb://x"})
    with pytest.raises(Exception, match="nosuchdb"):
        AsyncGuardedMemory.from_settings(broken, embedder=HashingEmbedder())
    assert closes == ["backend", "guard"]


async def test_a_failed_composition_inside_an_event_loop_closes_too(
    data_dir: Path, closes: list[str]
) -> None:
    broken = _settings(data_dir).model_copy(update={"database_url": "nosuchdb://x"})
    with pytest.raises(Exception, match="nosuchdb"):
        GuardedMemory.from_settings(broken, embedder=HashingEmbedder())
    assert closes == ["backend", "guard"]


def test_a_closed_memory_says_so(tmp_path: Path, recwarn: pytest.WarningsRecorder) -> None:
    """A call after close() raised `RuntimeError: Event loop is closed` and warned that a
    coroutine was never awaited; it is a typed error now, and nothing runs."""
    from mirage_guard.guard.errors import ClosedError
    from tests.fakes.mem0 import InMemoryStore

    store = InMemoryStore()
    memory = GuardedMemory.from_settings(
        GuardSettings(data_dir=tmp_path), embedder=HashingEmbedder(), backend=store
    )
    memory.close()
    with pytest.raises(ClosedError, match="closed"):
        memory.add([{"role": "user", "content": "I like tea"}], user_id="u1", infer=False)
    with pytest.raises(ClosedError):
        memory.get_all(filters={"user_id": "u1"})
    assert store.items == {}
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


async def test_the_async_twin_after_aclose_raises_closed_error_and_does_nothing(
    tmp_path: Path,
) -> None:
    """It used to raise BackendUnavailableError (retryable: a retry loop spun for ever) or
    InputError("this Guard is closed"), depending on the method."""
    from mirage_guard.guard.errors import ClosedError
    from tests.fakes.mem0 import InMemoryStore

    store = InMemoryStore()
    memory = AsyncGuardedMemory.from_settings(
        GuardSettings(data_dir=tmp_path), embedder=HashingEmbedder(), backend=store
    )
    view, other = memory.for_tenant("t"), memory.for_tenant("o")
    await other.aclose()  # a tenant view owns nothing: closing it leaves its parent open
    assert await memory.get_all(filters={"user_id": "u1"}) == {"results": []}
    with pytest.raises(ClosedError):
        await other.get("m1")
    await memory.aclose()
    calls = {
        "add": lambda m: m.add([{"role": "user", "content": "I like tea"}], user_id="u1"),
        "remember": lambda m: m.remember("I like tea", ["Likes tea"], user_id="u1"),
        "search": lambda m: m.search("tea", filters={"user_id": "u1"}),
        "get_all": lambda m: m.get_all(filters={"user_id": "u1"}),
        "get": lambda m: m.get("m1"),
        "history": lambda m: m.history("m1"),
        "update": lambda m: m.update("m1", text="Likes coffee"),
        "delete": lambda m: m.delete("m1"),
        "delete_all": lambda m: m.delete_all(user_id="u1"),
        "entities": lambda m: m.entities(),
        "reset": lambda m: m.reset(),
        "reconcile": lambda m: m.reconcile(),
    }
    for target in (memory, view):
        for name, call in calls.items():
            with pytest.raises(ClosedError) as info:
                await call(target)
            assert info.value.retryable is False, name
    assert store.items == {}
