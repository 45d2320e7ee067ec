"""What the judge and the Plan-First step must return (strict JSON), and typed parse errors."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mirage_guard.guard.errors import LLMOutputError

M = TypeVar("M", bound=BaseModel)


class StanceScore(BaseModel):
    """The judge's reading of one answer: H and E in [-1, 1], a short rationale; nothing else."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    h: float = Field(alias="H", ge=-1.0, le=1.0)
    e: float = Field(alias="E", ge=-1.0, le=1.0)
    rationale: str = Field(default="", max_length=2000)


class StancePlan(BaseModel):
    """Plan-First: the stance the model means to take, before it writes the answer."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    h: float = Field(alias="H", ge=-1.0, le=1.0)
    e: float = Field(alias="E", ge=-1.0, le=1.0)
    approach: str = Field(default="", max_length=2000)


class ScoreErrorCode(StrEnum):
    NOT_JSON = "not_json"
    NOT_OBJECT = "not_object"
    MISSING_FIELD = "missing_field"
    EXTRA_FIELD = "extra_field"
    OUT_OF_RANGE = "out_of_range"
    WRONG_TYPE = "wrong_type"


class StanceOutputError(LLMOutputError):
    """A judge or plan answer that does not fit its strict schema; ``code`` says how."""

    def __init__(
        self, code: ScoreErrorCode, message: str, *, model: str | None = None, output: str = ""
    ) -> None:
        self.code = code
        super().__init__(f"{code.value}: {message}", model=model, output=output)


_CODES: dict[str, ScoreErrorCode] = {
    "missing": ScoreErrorCode.MISSING_FIELD,
    "extra_forbidden": ScoreErrorCode.EXTRA_FIELD,
    "greater_than_equal": ScoreErrorCode.OUT_OF_RANGE,
    "less_than_equal": ScoreErrorCode.OUT_OF_RANGE,
    "string_too_long": ScoreErrorCode.OUT_OF_RANGE,
}


def _unfence(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").strip()
        if body.lower().startswith("json"):
            body = body[4:]
    return body


def parse_strict(text: str, schema: type[M], *, model: str | None = None) -> M:
    """Parse ``text`` as exactly one JSON object of ``schema`` (a fenced block is tolerated)."""
    try:
        data: Any = json.loads(_unfence(text))
    except (ValueError, RecursionError) as exc:
        raise StanceOutputError(
            ScoreErrorCode.NOT_JSON, str(exc), model=model, output=text
        ) from exc
    if not isinstance(data, dict):
        raise StanceOutputError(
            ScoreErrorCode.NOT_OBJECT, f"got {type(data).__name__}", model=model, output=text
        )
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        code = _CODES.get(first["type"], ScoreErrorCode.WRONG_TYPE)
        where = ".".join(str(p) for p in first["loc"])
        raise StanceOutputError(
            code, f"{schema.__name__}.{where}: {first['msg']}", model=model, output=text
        ) from exc
