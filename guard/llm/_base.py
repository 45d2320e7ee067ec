"""The one seam to language models: ``LLMClient.complete``."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer

from mirage_guard.guard.errors import LLMOutputError

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class SamplingParams(BaseModel):
    """Everything that changes a model's output besides the messages (part of cache keys)."""

    model_config = ConfigDict(frozen=True)

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    # the answer ends where one of these would begin (a base model on a chat endpoint may never
    # end its answer on its own); None sends no ``stop`` and keeps cache keys made before it
    stop: tuple[str, ...] | None = None

    @field_serializer("stop")
    def _stop_as_list(self, stop: tuple[str, ...] | None) -> list[str] | None:
        return None if stop is None else list(stop)

    def key_fields(self) -> dict[str, Any]:
        """The fields a cache key holds: ``stop`` only when set (older keys stay valid)."""
        data = self.model_dump()
        if data["stop"] is None:
            del data["stop"]
        return data


class Completion(BaseModel):
    text: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    cost_usd: float | None = None
    finish_reason: str | None = None
    cached: bool = False
    # how the answer was asked for: json_schema / json_object / text (None: no schema asked)
    structured_mode: str | None = None

    def parse(self, schema: type[T]) -> T:
        """Parse the text as JSON for ``schema``; tolerate a fenced block, nothing else. An
        answer the provider cut at its token cap says so (else it reads as bad JSON)."""
        return self.read(lambda text: parse_json_output(text, schema, model=self.model))

    def read(self, reader: Callable[[str], R]) -> R:
        """``reader(text)``: an :class:`LLMOutputError` it raises on an answer the provider cut
        at its token cap says so (else it reads as bad JSON or a partial answer)."""
        try:
            return reader(self.text)
        except LLMOutputError as exc:
            if self.finish_reason != "length":
                raise
            raise LLMOutputError(
                f"the answer was cut at the token cap (finish_reason=length: raise max_tokens): "
                f"{exc}",
                model=self.model,
                output=self.text,
            ) from exc


def parse_json_output(text: str, schema: type[T], *, model: str | None = None) -> T:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`")
        if body.lower().startswith("json"):
            body = body[4:]
    try:
        data: Any = json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise LLMOutputError(f"output is not JSON: {exc}", model=model, output=text) from exc
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        raise LLMOutputError(
            f"output does not match {schema.__name__}: {exc.error_count()} error(s)",
            model=model,
            output=text,
        ) from exc


class LLMClient(ABC):
    """A language model. One required async method; everything else is optional."""

    model: str

    @abstractmethod
    async def complete(
        self,
        messages: Sequence[Message],
        *,
        schema: type[BaseModel] | None = None,
        params: SamplingParams | None = None,
    ) -> Completion:
        """Return the model's answer. ``schema`` asks for strict JSON output of that shape."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook with a safe default
        """Release resources (optional)."""
