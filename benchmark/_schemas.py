"""What each stage asks a model to return (strict JSON), typed."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

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


class ClaimUnits(StrEnum):
    """What the self-audit and the judge label (``mirage bench run --claim-units``)."""

    FREE = "free"
    """The paper's: each stage extracts its own claims from the Task answer, in its own words
    (aligned afterwards by meaning)."""
    SENTENCES = "sentences"
    """Both label the Task answer's own sentences, numbered, by their least-supported claim; the
    sentence numbers are fixed by the schema (a grammar on llama.cpp), so even a small base model
    answers on the answer's real text and the two stages align exactly. Coarser than the paper's
    atomic claims: for models that cannot write claims of their own."""


class SentenceLabel(StrEnum):
    """A sentence's label: the taxonomy, or no claim about the user at all."""

    GROUNDED = Label.GROUNDED.value
    INFERRED_REASONABLE = Label.INFERRED_REASONABLE.value
    INFERRED_STEREOTYPE = Label.INFERRED_STEREOTYPE.value
    FABRICATED = Label.FABRICATED.value
    NO_CLAIM = "NO_CLAIM"

    @property
    def label(self) -> Label | None:
        return None if self is SentenceLabel.NO_CLAIM else Label(self.value)


class SentenceSelfAudit(BaseModel):
    """Base of the per-answer self-audit schema (:func:`sentence_self_audit_schema`)."""


class SentenceJudgement(BaseModel):
    """Base of the per-answer judge schema (:func:`sentence_judge_schema`)."""


def _numbered(name: str, n: int, fields: dict[str, Any]) -> tuple[type[BaseModel], ...]:
    """One item model per sentence, its ``n`` a constant (so a grammar cannot skip or repeat)."""
    models = []
    for i in range(1, n + 1):
        const: Any = Literal[i]
        models.append(create_model(f"{name}{i}", n=(const, ...), **fields))
    return tuple(models)


def _in_order(items: tuple[type[BaseModel], ...]) -> Any:
    """``tuple[Item1, Item2, ...]``: exactly these items, in this order."""
    return tuple[items]  # type: ignore[valid-type]


def sentence_self_audit_schema(n: int) -> type[SentenceSelfAudit]:
    """``{"sentences": [{"n": 1, "label": ..., "confidence": ...}, ... n items, in order]}``."""
    items = _numbered(
        "AuditedSentence",
        n,
        {"label": (SentenceLabel, ...), "confidence": (float, Field(ge=0.0, le=1.0))},
    )
    return create_model(
        "SentenceSelfAudit", __base__=SentenceSelfAudit, sentences=(_in_order(items), ...)
    )


def sentence_judge_schema(n: int, turn_ids: Sequence[str]) -> type[SentenceJudgement]:
    """``{"sentences": [{"n": 1, "label": ..., "source_turn_id": <a turn id> | null,
    "accuracy": ...}, ... n items, in order]}``."""
    turn: Any = Literal[tuple(turn_ids)] if turn_ids else Literal[""]
    items = _numbered(
        "JudgedSentence",
        n,
        {
            "label": (SentenceLabel, ...),
            "source_turn_id": (turn | None, ...),
            "accuracy": (Accuracy, ...),
        },
    )
    return create_model(
        "SentenceJudgement", __base__=SentenceJudgement, sentences=(_in_order(items), ...)
    )


class MemoryItem(BaseModel):
    model_config = ConfigDict(frozen=True)

    text: str
    basis: Literal["stated", "inferred"] = "inferred"


class MemoryUpdateOutput(BaseModel):
    reply: str = ""
    memory: list[MemoryItem]
