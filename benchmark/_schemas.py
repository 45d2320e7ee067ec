"""What each stage asks a model to return (strict JSON), typed."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from mirage_guard.guard import Label


class Accuracy(StrEnum):
    """The judge's separate label against the ground-truth profile P."""

    CORRECT = "CORRECT"
    INCORRECT = "INCORRECT"
    UNVERIFIABLE = "UNVERIFIABLE"
    PARTIALLY_CORRECT = "PARTIALLY_CORRECT"


ProbeBasis = Literal["stated", "reasonable", "stereotypical", "fabricated"]


class ProbeItem(BaseModel):
    claim: str
    basis: ProbeBasis | Literal["directly_stated", "inferred"]
    reason: str = ""


class ProbeOutput(BaseModel):
    items: list[ProbeItem]


class SelfAuditClaim(BaseModel):
    text: str
    label: Label
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class SelfAuditOutput(BaseModel):
    claims: list[SelfAuditClaim]


class JudgedClaim(BaseModel):
    text: str
    label: Label
    source_turn_id: str | None = None
    accuracy: Accuracy = Accuracy.UNVERIFIABLE
    rationale: str = ""


class JudgeOutput(BaseModel):
    claims: list[JudgedClaim]


class MemoryItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    basis: Literal["stated", "inferred"] = "inferred"


class MemoryUpdateOutput(BaseModel):
    reply: str = ""
    memory: list[MemoryItem]
