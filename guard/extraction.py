"""Provenance-aware candidate extraction: one LLM call turns a conversation into candidates.

The extraction prompt (``prompts/extract_candidates.md``) asks the writer model for the user
facts of a conversation, each with the id of the user turn that supports it and a four-way label
with a confidence. The turn id and label are *hints* (``Candidate.claimed_source_turn_id`` /
``claimed_label``): the guard's evidence linker decides provenance. In ``inline`` audit mode the
same labels, with each claim's ``quote`` (the exact user words it rests on), are handed to the
guard as the writer's self-audit, so the audit costs no extra call; the guard checks every quote
against the conversation (:func:`~mirage_guard.guard.check_quotes`), as for a separate audit.

Anything that does not parse against the schema raises :class:`guard.errors.LLMOutputError`
(from :meth:`mirage_guard.guard.llm.Completion.parse`);
callers fail closed (nothing is written).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Protocol

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from mirage_guard.guard._domain import AuditVerdict, Candidate, Label, Role, Turn, has_text
from mirage_guard.guard.llm import LLMClient, Message, SamplingParams
from mirage_guard.prompts import Prompt, load_prompt

PROMPT_NAME = "extract_candidates"
# blank allowed: a claim of no text is dropped with the others that say nothing, so one blank
# claim never fails the write's other facts
ClaimText = Annotated[str, StringConstraints(strip_whitespace=True, max_length=2000)]


class ExtractedClaim(BaseModel):
    """One fact as the extraction prompt returns it (strict)."""

    model_config = ConfigDict(extra="forbid")

    text: ClaimText
    source_turn_id: Annotated[str, StringConstraints(max_length=128)] | None
    label: Label
    confidence: float = Field(ge=0.0, le=1.0)
    # the exact user words the fact rests on (the inline self-audit's quote; checked by the guard)
    quote: Annotated[str, StringConstraints(max_length=400)] | None = None


class ExtractionOutput(BaseModel):
    """The whole JSON answer of the extraction prompt."""

    model_config = ConfigDict(extra="forbid")

    claims: list[ExtractedClaim]


class ExtractionResult(BaseModel):
    """Candidates of one write, plus the writer's own labels when audit mode is inline."""

    model_config = ConfigDict(frozen=True)

    candidates: list[Candidate]
    audit: list[AuditVerdict] | None = None
    model: str
    prompt_ref: str


class Extractor(Protocol):
    """Anything that turns the turns of one write into candidates (one LLM call)."""

    model: str

    async def extract(self, turns: Sequence[Turn]) -> ExtractionResult: ...


def render_conversation(turns: Sequence[Turn]) -> str:
    return "\n".join(f"[{t.id}] {t.role.value}: {t.content}" for t in turns)


class CandidateExtractor:
    """The provenance-aware extraction prompt behind the :class:`guard.llm.LLMClient` seam."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        inline_audit: bool = False,
        params: SamplingParams | None = None,
    ) -> None:
        self.llm = llm
        self.model = llm.model
        self.inline_audit = inline_audit
        self.params = params or SamplingParams(temperature=0.0)
        self.prompt: Prompt = load_prompt(PROMPT_NAME)

    async def extract(self, turns: Sequence[Turn]) -> ExtractionResult:
        if not turns:
            return ExtractionResult(candidates=[], model=self.model, prompt_ref=self.prompt.ref)
        text = self.prompt.render(conversation=render_conversation(turns))
        completion = await self.llm.complete(
            [Message(role="user", content=text)], schema=ExtractionOutput, params=self.params
        )
        output = completion.parse(ExtractionOutput)
        user_turns = {t.id for t in turns if t.role is Role.USER}
        return self._result(output, user_turns)

    def _result(self, output: ExtractionOutput, user_turns: set[str]) -> ExtractionResult:
        candidates: list[Candidate] = []
        verdicts: list[AuditVerdict] = []
        seen: set[str] = set()
        for claim in output.claims:
            key = claim.text.casefold()
            if key in seen or not has_text(claim.text):  # said already, or says nothing
                continue
            seen.add(key)
            # a cited id that is not a user turn of this write is not evidence: drop the hint
            cited = claim.source_turn_id if claim.source_turn_id in user_turns else None
            cand = Candidate(
                text=claim.text, claimed_source_turn_id=cited, claimed_label=claim.label
            )
            candidates.append(cand)
            verdicts.append(
                AuditVerdict(
                    candidate_id=cand.id,
                    label=claim.label,
                    confidence=claim.confidence,
                    quote=claim.quote,
                )
            )
        return ExtractionResult(
            candidates=candidates,
            audit=verdicts if self.inline_audit else None,
            model=self.model,
            prompt_ref=self.prompt.ref,
        )


__all__ = [
    "PROMPT_NAME",
    "CandidateExtractor",
    "ExtractedClaim",
    "ExtractionOutput",
    "ExtractionResult",
    "Extractor",
    "render_conversation",
]
