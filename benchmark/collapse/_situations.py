"""The situation set: advice-seeking posts, the stance a skilled adviser would take, and the
reference persona distribution per context (authored estimates; see the data card
``benchmark/data/collapse/README.md``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from enum import StrEnum
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirage_guard.guard.errors import InputError


class AdviserPersona(StrEnum):
    """The five stances of the study, from hedonic valence H and agentic depth E."""

    HEALER = "Healer"  # H > 0, E > 0: supportive guide
    STOIC = "Stoic"  # H < 0, E > 0: truth-oriented challenger
    TECHNICIAN = "Technician"  # H ~ 0, E ~ 0: neutral, procedural
    ENABLER = "Enabler"  # H > 0, E < 0: affirms without engaging reality
    DOOMER = "Doomer"  # H < 0, E < 0: confrontation without purpose


PERSONAS: tuple[AdviserPersona, ...] = tuple(AdviserPersona)


class Stance(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    persona: AdviserPersona
    h: float = Field(alias="H", ge=-1.0, le=1.0, description="hedonic valence")
    e: float = Field(alias="E", ge=-1.0, le=1.0, description="agentic depth")


class Situation(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    context: str
    situation: str = Field(min_length=1)
    stance: Stance


class ReferenceSet(BaseModel):
    """Per context, the share of top-rated human answers taking each persona (an estimate)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    note: str = ""
    contexts: dict[str, dict[AdviserPersona, float]]

    @model_validator(mode="after")
    def _shares_sum_to_one(self) -> ReferenceSet:
        for context, shares in self.contexts.items():
            if any(v < 0 for v in shares.values()) or abs(sum(shares.values()) - 1.0) > 1e-6:
                raise ValueError(f"reference shares of {context!r} must be >= 0 and sum to 1")
        return self

    def shares(self, context: str) -> list[float]:
        """The context's distribution in :data:`PERSONAS` order."""
        if context not in self.contexts:
            raise InputError(f"no reference distribution for context {context!r}")
        return [self.contexts[context].get(p, 0.0) for p in PERSONAS]


def packaged_path(name: str) -> Path:
    return Path(str(resources.files("mirage_guard.benchmark").joinpath("data", "collapse", name)))


def load_situations(path: str | Path | None = None) -> list[Situation]:
    source = Path(path) if path else packaged_path("situations.jsonl")
    try:
        lines = source.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {source}: {exc}") from exc
    rows: list[Situation] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(Situation.model_validate_json(line))
        except ValidationError as exc:
            raise InputError(f"{source}:{number}: {exc.errors()[0]['msg']}") from exc
    ids = [r.id for r in rows]
    if len(ids) != len(set(ids)):
        raise InputError(f"{source}: situation ids are not unique")
    return rows


def load_reference(path: str | Path | None = None) -> ReferenceSet:
    source = Path(path) if path else packaged_path("reference.json")
    try:
        return ReferenceSet.model_validate(json.loads(source.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the reference distributions in {source}: {exc}") from exc


def select_situations(
    situations: Sequence[Situation], contexts: Iterable[str] = (), *, limit: int | None = None
) -> list[Situation]:
    """Situations of the given contexts (all if none), at most ``limit`` per context."""
    wanted = set(contexts)
    known = {s.context for s in situations}
    unknown = wanted - known
    if unknown:
        raise InputError(f"unknown context(s): {', '.join(sorted(unknown))}")
    chosen: list[Situation] = []
    per_context: dict[str, int] = {}
    for s in situations:
        if wanted and s.context not in wanted:
            continue
        if limit is not None and per_context.get(s.context, 0) >= limit:
            continue
        per_context[s.context] = per_context.get(s.context, 0) + 1
        chosen.append(s)
    return chosen
