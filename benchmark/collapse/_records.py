"""What a collapse run writes: one append-only JSONL file per record kind, one line per unit."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from mirage_guard.benchmark._records import CallInfo, StageError
from mirage_guard.benchmark.collapse._config import Condition, MemoryArm
from mirage_guard.guard import Action, Label


class CollapseRecord(BaseModel):
    """Base of the collapse records: the unit, its calls and its outcome (as MirageBench's)."""

    model_config = ConfigDict(extra="forbid")

    kind: ClassVar[str] = "collapse"
    unit: str
    calls: list[CallInfo] = Field(default_factory=list)
    error: StageError | None = None
    attempt: int = Field(default=1, ge=1, description="try number (--retry-failed adds tries)")
    cache_try: int | None = Field(
        default=None,
        ge=1,
        description="the try number in its calls' cache keys: it moves past an answered failure "
        "only (None: a record from before the field, whose calls were keyed by attempt)",
    )

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def final(self) -> bool:
        return self.error is None or not self.error.retryable


class AnswerRecord(CollapseRecord):
    """A subject model's answer to one situation under one condition and memory arm."""

    kind: ClassVar[str] = "collapse_answer"
    model: str
    situation_id: str
    context: str
    condition: Condition
    memory: MemoryArm
    persona_id: str | None = Field(default=None, description="MirageBench persona of the memory")
    plan_h: float | None = None
    plan_e: float | None = None
    plan_approach: str = ""
    answer: str = ""


class ScoreRecord(CollapseRecord):
    """The judge's H and E for one answer (``model`` is the subject)."""

    kind: ClassVar[str] = "collapse_score"
    model: str
    judge: str
    situation_id: str
    context: str
    condition: Condition
    memory: MemoryArm
    h: float | None = None
    e: float | None = None
    rationale: str = ""


class MemoryEntry(BaseModel):
    text: str
    label: Label | None = Field(default=None, description="the packaged claim's label")
    status: str = Field(description="fact | hypothesis")
    action: Action | None = None


class MemoryRecord(CollapseRecord):
    """The memory one MirageBench persona ends up with, per memory arm (guarded: the guard's
    decisions on the same candidates)."""

    kind: ClassVar[str] = "collapse_memory"
    persona_id: str
    memory: MemoryArm
    entries: list[MemoryEntry] = Field(default_factory=list)


COLLAPSE_RECORD_TYPES: tuple[type[CollapseRecord], ...] = (AnswerRecord, ScoreRecord, MemoryRecord)
