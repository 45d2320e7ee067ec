"""Labelled claims: the input format of `mirage guard eval` and `mirage calibrate fit`.

One JSON object per line. Either the conversation is inline::

    {"claim_id": "c1", "text": "Enjoys rock climbing", "label": "GROUNDED",
     "source_turn_id": "t2", "turns": [{"id": "t2", "role": "user", "content": "..."}]}

or the line names a ``persona_id`` whose revealed facts (user turns) come from a personas file
(the packaged MirageBench personas by default). ``label`` is the four-way taxonomy;
``source_turn_id`` is required for GROUNDED / INFERRED_REASONABLE. ``split`` is optional.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from mirage_guard.guard._domain import Candidate, Label, Role, Turn
from mirage_guard.guard.errors import InputError


class _Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")
    turn_id: str
    text: str


class _PersonaTurns(BaseModel):
    model_config = ConfigDict(extra="ignore")
    persona_id: str
    revealed_facts: list[_Fact]

    def turns(self) -> list[Turn]:
        return [Turn(id=f.turn_id, role=Role.USER, content=f.text) for f in self.revealed_facts]


class LabelledClaim(BaseModel):
    model_config = ConfigDict(extra="ignore")

    claim_id: str
    text: str
    label: Label
    source_turn_id: str | None = None
    persona_id: str | None = None
    task: str | None = None
    split: str | None = None
    attribute_kind: str | None = None
    turns: list[Turn] | None = None

    @model_validator(mode="after")
    def _check(self) -> LabelledClaim:
        if self.turns is None and self.persona_id is None:
            raise ValueError("a claim needs inline `turns` or a `persona_id`")
        linked = self.label in (Label.GROUNDED, Label.INFERRED_REASONABLE)
        if linked and not self.source_turn_id:
            raise ValueError(f"{self.label.value} claims need a source_turn_id")
        return self


@dataclass(frozen=True)
class Example:
    """One labelled claim with the conversation it is judged against."""

    claim: LabelledClaim
    conversation_id: str
    turns: tuple[Turn, ...]

    @property
    def candidate(self) -> Candidate:
        return Candidate(id=self.claim.claim_id, text=self.claim.text)

    @property
    def is_oi(self) -> bool:
        return self.claim.label.is_over_inference


def packaged(name: str) -> Path:
    return Path(str(resources.files("mirage_guard.benchmark").joinpath("data", name)))


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, object]]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{n}: not JSON ({exc.msg})") from exc
        if not isinstance(obj, dict):
            raise InputError(f"{path}:{n}: expected a JSON object")
        yield n, obj


def load_examples(
    path: Path | None = None,
    *,
    personas: Path | None = None,
    split: str | None = None,
) -> list[Example]:
    """Load labelled claims (default: the packaged ones), optionally one split only."""
    path = path or packaged("claims.jsonl")
    convs: dict[str, tuple[Turn, ...]] = {}
    persona_path = personas or packaged("personas.jsonl")
    out: list[Example] = []
    for n, obj in _read_jsonl(path):
        try:
            claim = LabelledClaim.model_validate(obj)
        except ValidationError as exc:
            raise InputError(f"{path}:{n}: {exc.errors()[0]['msg']}") from exc
        if split is not None and claim.split != split:
            continue
        if claim.turns is not None:
            conv_id = claim.persona_id or _conv_hash(claim.turns)
            turns = tuple(claim.turns)
        else:
            assert claim.persona_id is not None
            if not convs:
                convs = _load_persona_turns(persona_path)
            if claim.persona_id not in convs:
                raise InputError(f"{path}:{n}: unknown persona_id {claim.persona_id!r}")
            conv_id, turns = claim.persona_id, convs[claim.persona_id]
        user_ids = {t.id for t in turns if t.role is Role.USER}
        if claim.source_turn_id and claim.source_turn_id not in {t.id for t in turns}:
            raise InputError(f"{path}:{n}: source_turn_id {claim.source_turn_id!r} not in turns")
        if claim.source_turn_id and claim.source_turn_id not in user_ids:
            raise InputError(
                f"{path}:{n}: source_turn_id {claim.source_turn_id!r} is not a user turn "
                "(only what the user said is evidence)"
            )
        out.append(Example(claim=claim, conversation_id=conv_id, turns=turns))
    if not out:
        raise InputError(f"{path}: no labelled claims" + (f" in split {split!r}" if split else ""))
    return out


def _conv_hash(turns: Sequence[Turn]) -> str:
    return hashlib.sha1("|".join(t.id for t in turns).encode()).hexdigest()[:12]


def _load_persona_turns(path: Path) -> dict[str, tuple[Turn, ...]]:
    out: dict[str, tuple[Turn, ...]] = {}
    for n, obj in _read_jsonl(path):
        try:
            p = _PersonaTurns.model_validate(obj)
        except ValidationError as exc:
            raise InputError(f"{path}:{n}: {exc.errors()[0]['msg']}") from exc
        out[p.persona_id] = tuple(p.turns())
    return out


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def group_by_conversation(examples: Sequence[Example]) -> dict[str, list[Example]]:
    groups: dict[str, list[Example]] = {}
    for ex in examples:
        groups.setdefault(ex.conversation_id, []).append(ex)
    return groups
