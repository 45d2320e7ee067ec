"""Memories Mem0 stored before the guard: invisible to guarded reads and left in the store by
``delete_all`` until adopted; adopted as hypotheses or quarantined (never stated facts), with a
decision row each, so ``mirage doctor`` finds no orphan and ``delete_all`` erases them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from mirage_guard.adapters import (
    TENANT_KEY,
    AsyncGuardedMemory,
    DecisionLog,
    GuardedMemory,
    MemoryScope,
    embedded_mem0_config,
)
from mirage_guard.adapters._doctor import examine
from mirage_guard.adapters.cli import app as root
from mirage_guard.guard import Guard, GuardSettings
from mirage_guard.guard.errors import BackendError, ConfigError
from mirage_guard.guard.evidence import shared_minilm
from mirage_guard.guard.llm import ScriptedLLM
from tests.fakes.mem0 import InMemoryStore

Build = Callable[..., AsyncGuardedMemory]
ANN = MemoryScope(user_id="ann")


async def _legacy(store: InMemoryStore) -> list[str]:
    """What mem0.Memory.add(..., infer=False) leaves: text and scope, no tenant, no status."""
    out = []
    for text, scope in (
        ("I am allergic to penicillin.", ANN),
        ("I live in Oslo.", MemoryScope(user_id="ann", run_id="s1")),
    ):
        (item,) = await store.add([{"role": "user", "content": text}], scope=scope)
        out.append(item["id"])
    return out


async def _all(memory: AsyncGuardedMemory, **statuses: bool) -> list[tuple[str, str]]:
    found = await memory.get_all(filters={"user_id": "ann"}, **statuses)
    return sorted((i["memory"], i["status"]) for i in found["results"])


async def test_adopted_memories_are_hypotheses_read_and_erased_like_the_guards(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    await _legacy(store)
    memory = build_memory()
    assert await _all(memory, include_hypotheses=True, include_quarantined=True) == []
    await memory.delete_all(user_id="ann")
    assert len(store.items) == 2  # "deleted", yet both stayed: the bug this fixes

    dry = await memory.adopt(dry_run=True)
    assert (dry.found, len(dry.adopted), dry.dry_run) == (2, 2, True)
    assert all(TENANT_KEY not in (i.get("metadata") or {}) for i in store.items.values())

    report = await memory.adopt()
    assert (report.tenant, report.status, len(report.adopted)) == ("default", "hypothesis", 2)
    assert await _all(memory) == []  # never a stated fact
    assert await _all(memory, include_hypotheses=True) == [
        ("I am allergic to penicillin.", "hypothesis"),
        ("I live in Oslo.", "hypothesis"),
    ]
    rows = decision_log.all_decisions()
    assert sorted(r.memory_id or "" for r in rows) == sorted(store.items)
    assert {(r.provenance, r.reasons[0].code) for r in rows} == {("generated", "adopted")}
    health = await examine(store, decision_log)
    assert (health.problems, health.foreign) == (0, 0)

    again = await memory.adopt()
    assert (again.found, again.adopted) == (0, [])  # the guard's own items are never touched
    await memory.delete_all(user_id="ann")
    assert store.items == {}


async def test_adopted_as_quarantined_and_into_a_tenant(
    build_memory: Build, store: InMemoryStore
) -> None:
    await _legacy(store)
    report = await build_memory().for_tenant("acme").adopt(status="quarantined")
    assert len(report.adopted) == 2
    assert {i["metadata"][TENANT_KEY] for i in store.items.values()} == {"acme"}
    assert await _all(build_memory(), include_quarantined=True) == []  # not the default tenant's
    acme = build_memory().for_tenant("acme")
    assert [s for _, s in await _all(acme, include_quarantined=True)] == ["quarantined"] * 2
    with pytest.raises(ConfigError, match="not 'fact'"):
        await acme.adopt(status="fact")  # type: ignore[arg-type]


async def test_two_adoptions_at_once_give_each_memory_to_one_tenant(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog
) -> None:
    """Each wrote its row and the last tag won: one memory, rows for two tenants (and the first
    tenant's ownership list named the other's memory)."""
    await _legacy(store)
    memory = build_memory()
    async with anyio.create_task_group() as tg:
        for tenant in ("acme", "beta"):
            tg.start_soon(memory.for_tenant(tenant).adopt)
    owners = {i["metadata"][TENANT_KEY] for i in store.items.values()}
    assert len(owners) == 1
    assert {r.tenant for r in decision_log.all_decisions()} == owners


async def test_a_crash_between_the_row_and_the_tag_leaves_no_orphan(
    build_memory: Build, store: InMemoryStore, decision_log: DecisionLog, monkeypatch: Any
) -> None:
    """The row is written first: a store that fails on the tag leaves the item untagged (adopted
    by the next run), never a tagged item without a row, which ``doctor --repair`` deletes."""
    ids = await _legacy(store)
    memory = build_memory()
    real_update = store.update

    async def failing(memory_id: str, **kw: Any) -> None:
        if memory_id == ids[1]:
            raise BackendError("the store went away")
        await real_update(memory_id, **kw)

    monkeypatch.setattr(store, "update", failing)
    with pytest.raises(BackendError):
        await memory.adopt()
    health = await examine(store, decision_log)
    assert [h.orphans for h in health.tenants] == [[]]
    assert health.foreign == 1
    monkeypatch.setattr(store, "update", real_update)
    report = await memory.adopt()
    assert report.adopted == [ids[1]]
    assert (await examine(store, decision_log)).foreign == 0


@pytest.mark.slow
def test_mirage_adopt_on_a_store_mem0_wrote(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The migration as a user runs it: mem0.Memory wrote to the embedded store; `mirage adopt`
    (real Qdrant and MiniLM under MIRAGE_DATA_DIR, no decision log yet) takes its memories in,
    and the drop-in then reads them as hypotheses; `mirage doctor` finds nothing wrong."""
    from mirage_guard.adapters._mem0 import _import_mem0

    mem0 = _import_mem0(data_dir)
    plain = mem0.Memory.from_config(embedded_mem0_config(data_dir))
    plain.add("I am allergic to penicillin.", user_id="ann", infer=False)
    plain.add("I keep bees.", user_id="bob", agent_id="garden", infer=False)
    plain.vector_store.client.close()  # embedded Qdrant admits one client at a time
    monkeypatch.setenv("MIRAGE_DATA_DIR", str(data_dir))
    assert not (data_dir / "decisions.db").exists()

    dry = CliRunner().invoke(root, ["adopt", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "2 store item(s) without a tenant; would adopt 2 into tenant 'default'" in dry.output
    done = CliRunner().invoke(root, ["adopt", "--json"])
    assert done.exit_code == 0, done.output
    assert len(json.loads(done.output)["adopted"]) == 2
    doctor = CliRunner().invoke(root, ["doctor"])
    assert doctor.exit_code == 0, doctor.output

    settings = GuardSettings(data_dir=data_dir)
    with GuardedMemory.from_settings(
        settings, writer_llm=ScriptedLLM([], model="mock/w"),
        guard=Guard.from_settings(settings, embedder=shared_minilm()),
    ) as memory:  # fmt: skip
        assert memory.get_all(filters={"user_id": "ann"})["results"] == []
        (item,) = memory.get_all(filters={"user_id": "ann"}, include_hypotheses=True)["results"]
        assert (item["memory"], item["status"]) == ("I am allergic to penicillin.", "hypothesis")
        memory.delete_all(user_id="bob")
        assert memory.get_all(filters={"user_id": "bob"}, include_hypotheses=True)["results"] == []
