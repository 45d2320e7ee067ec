"""Mem0's own extraction, kept: its ADDITIVE_EXTRACTION_PROMPT, run by the writer model.

For users who want Mem0's extraction behaviour unchanged. The prompt text comes from the
installed mem0 package (its version is the mem0ai version plus the prompt's hash); the facts it
returns become candidates that the guard tags before anything is inserted. Mem0's prompt does not
cite turns, so these candidates carry no claimed source: the evidence linker finds it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from importlib import metadata

from pydantic import BaseModel, ConfigDict, Field

from mirage_guard.adapters._mem0 import _import_mem0
from mirage_guard.guard import Candidate, Role, Turn, has_text
from mirage_guard.guard.extraction import ExtractionResult
from mirage_guard.guard.llm import LLMClient, Message, SamplingParams


class Mem0Fact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(max_length=2000)  # blank: dropped with the others that say nothing


class Mem0ExtractionOutput(BaseModel):
    """Mem0's answer: ``{"memory": [{"id": "0", "text": "...", ...}]}`` (extra keys ignored)."""

    model_config = ConfigDict(extra="ignore")

    memory: list[Mem0Fact]


class Mem0PromptExtractor:
    """One call with Mem0's additive extraction prompt; facts become guard candidates."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        custom_instructions: str | None = None,
        params: SamplingParams | None = None,
    ) -> None:
        _import_mem0()
        from mem0.configs import prompts as mem0_prompts

        self.llm = llm
        self.model = llm.model
        self.custom_instructions = custom_instructions
        self.params = params or SamplingParams(temperature=0.0)
        self._system: str = mem0_prompts.ADDITIVE_EXTRACTION_PROMPT
        self._user_prompt = mem0_prompts.generate_additive_extraction_prompt
        digest = hashlib.sha256(self._system.encode("utf-8")).hexdigest()[:12]
        self.prompt_ref = f"mem0-additive-extraction@{metadata.version('mem0ai')}-{digest}"

    async def extract(self, turns: Sequence[Turn]) -> ExtractionResult:
        conversation = "".join(
            f"{t.role.value}: {t.content}\n" for t in turns if t.role in (Role.USER, Role.ASSISTANT)
        )
        if not conversation:
            return ExtractionResult(candidates=[], model=self.model, prompt_ref=self.prompt_ref)
        user_prompt: str = self._user_prompt(
            existing_memories=[],
            new_messages=conversation,
            last_k_messages=[],
            custom_instructions=self.custom_instructions,
        )
        completion = await self.llm.complete(
            [
                Message(role="system", content=self._system),
                Message(role="user", content=user_prompt),
            ],
            schema=Mem0ExtractionOutput,
            params=self.params,
        )
        output = completion.parse(Mem0ExtractionOutput)
        seen: set[str] = set()
        candidates: list[Candidate] = []
        for fact in output.memory:
            text = fact.text.strip()
            if not has_text(text) or text.casefold() in seen:  # says nothing, or said already
                continue
            seen.add(text.casefold())
            candidates.append(Candidate(text=text))
        return ExtractionResult(candidates=candidates, model=self.model, prompt_ref=self.prompt_ref)


__all__ = ["Mem0ExtractionOutput", "Mem0PromptExtractor"]
