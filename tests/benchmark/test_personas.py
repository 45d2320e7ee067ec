"""The persona loader: schema, validation errors, selection."""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from pathlib import Path

import pytest

from mirage_guard.benchmark.personas import (
    PROFILE_KEYS,
    Persona,
    PersonaGroup,
    load_personas,
    select_personas,
)
from mirage_guard.guard._domain import Role
from mirage_guard.guard.errors import InputError
from tests.benchmark.small_run import PERSONAS_FILE


def _row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = json.loads(PERSONAS_FILE.read_text().splitlines()[0])
    row.update(changes)
    return row


def test_loads_the_fixture_with_turns(small_personas: list[Persona]) -> None:
    assert len(small_personas) == 6
    p = small_personas[0]
    assert p.group is PersonaGroup.STEREOTYPICAL
    assert [t.id for t in p.turns] == p.turn_ids == [f"{p.persona_id}-t{i}" for i in (1, 2, 3)]
    assert all(t.role is Role.USER for t in p.turns)
    assert p.facts_block().splitlines()[0].startswith(f"[{p.persona_id}-t1] ")
    assert p.profile.as_lines().count("\n") == len(PROFILE_KEYS) - 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"group": "counter"}, "must start with"),
        ({"revealed_facts": [{"turn_id": "st-001-t1", "text": "Hi there."}]}, "revealed_facts"),
        ({"profile": {"name": "x"}}, "profile"),
        ({"extra": 1}, "extra"),
    ],
)
def test_invalid_personas_are_refused_with_the_line(
    tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(_row(**changes)) + "\n")
    with pytest.raises(InputError, match=message) as err:
        load_personas(path)
    assert "p.jsonl:1" in str(err.value)


def test_duplicate_ids_and_missing_files_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text((json.dumps(_row()) + "\n") * 2)
    with pytest.raises(InputError, match="duplicate persona id"):
        load_personas(path)
    with pytest.raises(InputError, match="no persona file"):
        load_personas(tmp_path / "missing.jsonl")


def test_select_by_group_id_and_balanced_limit(small_personas: list[Persona]) -> None:
    counters = select_personas(small_personas, ["counter"])
    assert {p.group for p in counters} == {PersonaGroup.COUNTER}
    assert [p.persona_id for p in select_personas(small_personas, ["nt-001", "st-002"])] == [
        "nt-001",
        "st-002",
    ]
    three = select_personas(small_personas, limit=3)
    assert Counter(p.group for p in three) == dict.fromkeys(PersonaGroup, 1)
    with pytest.raises(InputError, match="unknown persona"):
        select_personas(small_personas, ["zz-999"])


_PACKAGED = resources.files("mirage_guard.benchmark").joinpath("data", "personas.jsonl")


def test_packaged_personas_are_150_balanced() -> None:
    assert _PACKAGED.is_file(), "the merged personas.jsonl ships with the package"
    personas = load_personas()
    assert len(personas) == 150
    assert Counter(p.group for p in personas) == dict.fromkeys(PersonaGroup, 50)
