"""MirageBench personas: a 15-attribute ground-truth profile P and 3 revealed facts E each.

The packaged file ``benchmark/data/personas.jsonl`` holds the 150 hand-authored personas
(50 stereotypical, 50 counter-stereotypical, 50 neutral); its schema is described in
``benchmark/data/authoring/SPEC.md``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError, model_validator

from mirage_guard.guard import Role, Turn
from mirage_guard.guard.errors import InputError

NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

PERSONAS_RESOURCE = "personas.jsonl"
PROFILE_KEYS: tuple[str, ...] = (
    "name",
    "age",
    "gender",
    "occupation",
    "city",
    "education",
    "relationship_status",
    "living_situation",
    "hobbies",
    "personality",
    "political_leaning",
    "religion",
    "diet",
    "pets",
    "home_style",
)


class PersonaGroup(StrEnum):
    STEREOTYPICAL = "stereotypical"
    COUNTER = "counter"
    NEUTRAL = "neutral"

    @property
    def id_prefix(self) -> str:
        return {"stereotypical": "st", "counter": "ct", "neutral": "nt"}[self.value]


class RevealedFact(BaseModel):
    """One first-person sentence the user said, with the turn id claims link back to."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn_id: NonEmpty
    text: NonEmpty

    def as_turn(self) -> Turn:
        return Turn(id=self.turn_id, role=Role.USER, content=self.text)


class Profile(BaseModel):
    """Ground truth P. Used only for the judge's accuracy label, never as evidence."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: NonEmpty
    age: int
    gender: NonEmpty
    occupation: NonEmpty
    city: NonEmpty
    education: NonEmpty
    relationship_status: NonEmpty
    living_situation: NonEmpty
    hobbies: NonEmpty
    personality: NonEmpty
    political_leaning: NonEmpty
    religion: NonEmpty
    diet: NonEmpty
    pets: NonEmpty
    home_style: NonEmpty

    def as_lines(self) -> str:
        return "\n".join(f"- {key}: {getattr(self, key)}" for key in PROFILE_KEYS)


class Persona(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    persona_id: NonEmpty
    group: PersonaGroup
    profile: Profile
    revealed_facts: tuple[RevealedFact, RevealedFact, RevealedFact]

    @model_validator(mode="after")
    def _consistent_ids(self) -> Persona:
        if not self.persona_id.startswith(self.group.id_prefix + "-"):
            raise ValueError(
                f"persona {self.persona_id!r} of group {self.group.value} must start with "
                f"{self.group.id_prefix!r}-"
            )
        turn_ids = [f.turn_id for f in self.revealed_facts]
        if len(set(turn_ids)) != len(turn_ids):
            raise ValueError(f"persona {self.persona_id!r} repeats a revealed-fact turn id")
        return self

    @property
    def turns(self) -> list[Turn]:
        """The revealed facts as user turns (ids = the facts' turn ids)."""
        return [fact.as_turn() for fact in self.revealed_facts]

    @property
    def turn_ids(self) -> list[str]:
        return [fact.turn_id for fact in self.revealed_facts]

    def facts_block(self) -> str:
        """The facts as prompts show them: ``[turn_id] text`` one per line."""
        return "\n".join(f"[{f.turn_id}] {f.text}" for f in self.revealed_facts)


def _parse_lines(lines: Iterable[str], source: str) -> list[Persona]:
    personas: list[Persona] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            persona = Persona.model_validate(json.loads(line))
        except (json.JSONDecodeError, ValidationError) as exc:
            raise InputError(f"{source}:{number}: not a valid persona: {exc}") from exc
        if persona.persona_id in seen:
            raise InputError(f"{source}:{number}: duplicate persona id {persona.persona_id!r}")
        seen.add(persona.persona_id)
        personas.append(persona)
    return personas


def personas_file_sha256(path: str | Path | None = None) -> str | None:
    """sha256 of the persona file's bytes (``path``, else the packaged file; None if absent)."""
    if path is not None:
        file = Path(path)
        return hashlib.sha256(file.read_bytes()).hexdigest() if file.is_file() else None
    resource = resources.files("mirage_guard.benchmark").joinpath("data", PERSONAS_RESOURCE)
    return hashlib.sha256(resource.read_bytes()).hexdigest() if resource.is_file() else None


def personas_sha256(personas: Sequence[Persona]) -> str:
    """sha256 of the personas themselves (canonical JSON), however they were loaded."""
    blob = json.dumps([p.model_dump(mode="json") for p in personas], sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def load_personas(path: str | Path | None = None) -> list[Persona]:
    """Personas from ``path`` (JSONL), default the packaged ``benchmark/data/personas.jsonl``."""
    if path is not None:
        file = Path(path)
        if not file.is_file():
            raise InputError(f"no persona file at {file}")
        return _parse_lines(file.read_text(encoding="utf-8").splitlines(), str(file))
    resource = resources.files("mirage_guard.benchmark").joinpath("data", PERSONAS_RESOURCE)
    if not resource.is_file():
        raise InputError(
            "the packaged persona file benchmark/data/personas.jsonl is missing; "
            "pass --personas-file PATH"
        )
    return _parse_lines(resource.read_text(encoding="utf-8").splitlines(), PERSONAS_RESOURCE)


def select_personas(
    personas: Sequence[Persona],
    selectors: Sequence[str] | None = None,
    *,
    limit: int | None = None,
) -> list[Persona]:
    """Filter by ids or group names (``st-001``, ``counter``); keep file order; apply ``limit``.

    ``limit`` takes personas round-robin across groups so a small run stays balanced.
    """
    chosen = list(personas)
    if selectors:
        wanted = {s.strip() for s in selectors if s.strip()}
        groups = {g for g in PersonaGroup if g.value in wanted}
        ids = wanted - {g.value for g in groups}
        known = {p.persona_id for p in personas}
        unknown = sorted(ids - known)
        if unknown:
            raise InputError(f"unknown persona ids or groups: {', '.join(unknown)}")
        chosen = [p for p in chosen if p.persona_id in ids or p.group in groups]
    if limit is not None and limit < len(chosen):
        by_group: dict[PersonaGroup, list[Persona]] = {}
        for p in chosen:
            by_group.setdefault(p.group, []).append(p)
        picked: list[Persona] = []
        queues = [list(v) for v in by_group.values()]
        while len(picked) < limit:
            for queue in queues:
                if queue and len(picked) < limit:
                    picked.append(queue.pop(0))
        order = {p.persona_id: i for i, p in enumerate(chosen)}
        chosen = sorted(picked, key=lambda p: order[p.persona_id])
    return chosen


__all__ = [
    "PROFILE_KEYS",
    "Persona",
    "PersonaGroup",
    "Profile",
    "RevealedFact",
    "load_personas",
    "select_personas",
]
