"""The configuration of one persona-collapse run (``mirage bench collapse run`` flags)."""

from __future__ import annotations

import hashlib
import json
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mirage_guard.benchmark.collapse._mapping import PersonaThresholds


class Condition(StrEnum):
    """Inference-time conditions of the study."""

    INSTRUCT = "instruct"  # the situation, as written
    PLAN_FIRST = "plan_first"  # the model plans its stance (H, E, approach), then answers
    ORACLE = "oracle"  # the reference (H, E) of the situation is injected as the plan


class MemoryArm(StrEnum):
    """What the assistant remembers about the user when it answers (linking the two studies)."""

    NONE = "none"  # no memory (the study's setting)
    RESAMPLE = "resample"  # no memory, asked again with seed + 1: the noise floor of a shift
    CLEAN = "clean"  # only what the user said: the 3 revealed facts of a MirageBench persona
    POLLUTED = "polluted"  # + over-inferred claims about that user, all stored as facts
    GUARDED = "guarded"  # the same candidates, stored as the guard decides

    @property
    def has_memory(self) -> bool:
        return self not in (MemoryArm.NONE, MemoryArm.RESAMPLE)


class CollapseConfig(BaseModel):
    """Everything that decides which calls a run makes; its hash pins a run directory.

    ``mapping`` (the persona thresholds) changes no call: it is recorded in the manifest but
    left out of the hash, and ``report --h-band/--e-band`` may override it.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    models: list[str] = Field(min_length=1, description="subject models (litellm strings)")
    judge: str = Field(description="independent judge model (litellm string)")
    contexts: list[str] = Field(default_factory=list, description="empty = every context")
    limit: int | None = Field(default=None, ge=1, description="at most this many per context")
    situations_file: str | None = None
    reference_file: str | None = None
    conditions: list[Condition] = Field(default_factory=lambda: list(Condition))
    memory: list[MemoryArm] = Field(default_factory=lambda: [MemoryArm.NONE])
    memory_condition: Condition = Field(
        default=Condition.INSTRUCT, description="the condition the memory arms are asked under"
    )
    personas_file: str | None = Field(default=None, description="MirageBench personas (memory)")
    claims_file: str | None = Field(default=None, description="MirageBench claims (memory)")
    memory_claims: int = Field(default=6, ge=1, description="over-inferred claims per memory")
    memory_split: str | None = Field(
        default="dev", description="personas whose claims are in this split (None = all)"
    )
    seed: int = 0
    answer_temperature: float = 0.7
    judge_temperature: float = 0.0
    max_tokens: int | None = Field(
        default=1024, ge=1, description="answer length cap per call; a cut answer fails its unit"
    )
    mapping: PersonaThresholds = Field(default_factory=PersonaThresholds)

    @model_validator(mode="after")
    def _check(self) -> CollapseConfig:
        if self.judge in self.models:
            raise ValueError(f"the judge {self.judge!r} must not also be a subject model")
        twice = sorted({m for m in self.models if self.models.count(m) > 1})
        if twice:  # its cells would count twice in every figure over models
            raise ValueError(f"subject model {twice[0]!r} is named twice: each model is rated once")
        if not self.conditions:
            raise ValueError("at least one condition")
        if any(m is not MemoryArm.NONE for m in self.memory) and (
            self.memory_condition not in self.conditions
        ):
            raise ValueError("the memory arms' condition must be one of the run's conditions")
        return self

    def arms(self) -> list[tuple[Condition, MemoryArm]]:
        """Every (condition, memory) pair the run asks: each condition without memory (if
        ``none`` is among the memory arms), and the memory arms under ``memory_condition``."""
        pairs: list[tuple[Condition, MemoryArm]] = []
        if MemoryArm.NONE in self.memory:
            pairs += [(c, MemoryArm.NONE) for c in self.conditions]
        pairs += [(self.memory_condition, m) for m in self.memory if m is not MemoryArm.NONE]
        return pairs

    def config_hash(self) -> str:
        blob = json.dumps(self.model_dump(mode="json", exclude={"mapping"}), sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]
