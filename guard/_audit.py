"""Self-audit: the writer model labels all candidates of one write in one call."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import anyio
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, create_model

from mirage_guard.guard._domain import AuditVerdict, Candidate, Label, Role, Turn
from mirage_guard.guard._quotes import check_quotes
from mirage_guard.guard.errors import LLMOutputError, LLMTimeoutError
from mirage_guard.guard.llm import LLMClient, Message, SamplingParams, parse_json_output
from mirage_guard.prompts import Prompt, load_prompt

# Bounded strings: a server that turns the schema into a grammar (llama.cpp) then cannot let a
# weak model spend its whole token budget inside one string.
WireId = Annotated[str, StringConstraints(max_length=128)]
WireQuote = Annotated[str, StringConstraints(max_length=400)]


class _WireVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: WireId
    label: Label
    confidence: float = Field(ge=0.0, le=1.0, strict=True)
    # the exact user words the label relies on; required (null when the label rests on none)
    quote: WireQuote | None


class AuditResponse(BaseModel):
    """The strict JSON schema the auditor asks for."""

    verdicts: list[_WireVerdict]


def audit_schema(candidates: Sequence[Candidate], turns: Sequence[Turn]) -> type[AuditResponse]:
    """The schema sent for one write: the same shape as :class:`AuditResponse`, with ``id``
    limited to this write's entry ids and ``source_turn_id`` to its user turn ids, one verdict
    per entry. A server that compiles the schema into a grammar (llama.cpp) then cannot answer
    with an id that does not exist; the answer is still parsed and checked by
    :func:`parse_audit`, whatever the server did with the schema."""
    ids = tuple(dict.fromkeys(c.id for c in candidates))
    user_ids = tuple(dict.fromkeys(t.id for t in turns if t.role is Role.USER))
    id_type: Any = Literal[ids]
    turn_type: Any = Literal[user_ids] if user_ids else None
    verdict = create_model(
        "AuditVerdictWire",
        __base__=_WireVerdict,
        id=(id_type, ...),
        source_turn_id=(turn_type | None, None),
    )
    n = len(ids)
    return create_model(
        "AuditResponse",
        __base__=AuditResponse,
        verdicts=(list[verdict], Field(min_length=n, max_length=n)),
    )


def render_conversation(turns: Sequence[Turn]) -> str:
    return "\n".join(
        json.dumps({"id": t.id, "role": t.role.value, "content": t.content}, ensure_ascii=False)
        for t in turns
    )


def render_candidates(candidates: Sequence[Candidate]) -> str:
    return "\n".join(
        json.dumps({"id": c.id, "text": c.text}, ensure_ascii=False) for c in candidates
    )


def parse_audit(
    text: str,
    candidates: Sequence[Candidate],
    turns: Sequence[Turn],
    *,
    model: str | None = None,
) -> list[AuditVerdict]:
    """Parse a self-audit answer. Anything but one valid verdict per candidate is an error.

    Every verdict must carry ``quote`` (null allowed). The guard looks the quote up in the
    conversation (:func:`~mirage_guard.guard.check_quotes`): ``quote_check`` says whether it is a
    user's words, and ``source_turn_id`` is the user turn it was found in; a turn id the model
    names is never taken on trust. Raises only :class:`LLMOutputError`.
    """
    response = parse_json_output(text, AuditResponse, model=model)
    wanted = [c.id for c in candidates]
    by_id: dict[str, _WireVerdict] = {}
    for v in response.verdicts:
        if v.id not in wanted:
            raise LLMOutputError(
                f"verdict for unknown entry id {v.id[:40]!r}", model=model, output=text
            )
        if v.id in by_id:
            raise LLMOutputError(f"two verdicts for entry {v.id[:40]!r}", model=model, output=text)
        by_id[v.id] = v
    missing = [cid for cid in wanted if cid not in by_id]
    if missing:
        raise LLMOutputError(
            f"partial audit: {len(missing)} of {len(wanted)} entries have no verdict",
            model=model,
            output=text,
        )
    verdicts = [
        AuditVerdict(
            candidate_id=cid,
            label=by_id[cid].label,
            confidence=by_id[cid].confidence,
            quote=by_id[cid].quote,
        )
        for cid in wanted
    ]
    return check_quotes(verdicts, turns)


SELF_AUDIT_PROMPT = "self_audit"
"""The writer labels its own memories ("You wrote the memory entries below")."""
INDEPENDENT_AUDIT_PROMPT = "audit_independent"
"""An independent auditor labels another model's ("Another assistant wrote ..."): the same
labels, schema and quote rule, told the truth about who wrote the entries. A profile is keyed by
its prompt version, so an auditor is calibrated with this prompt (`mirage calibrate audit
--as-auditor`)."""


class SelfAuditor:
    """Asks a model to label every candidate of a write, in ONE call: the writer itself (the
    default prompt) or an independent auditor (:meth:`independent`)."""

    def __init__(
        self,
        llm: LLMClient,
        *,
        timeout_s: float = 30.0,
        prompt: Prompt | None = None,
        params: SamplingParams | None = None,
    ) -> None:
        self.llm = llm
        self.timeout_s = timeout_s
        self.prompt = prompt or load_prompt(SELF_AUDIT_PROMPT)
        self.params = params or SamplingParams(temperature=0.0)

    @classmethod
    def independent(
        cls, llm: LLMClient, *, timeout_s: float = 30.0, params: SamplingParams | None = None
    ) -> SelfAuditor:
        """An auditor of memories another model wrote (:data:`INDEPENDENT_AUDIT_PROMPT`)."""
        prompt = load_prompt(INDEPENDENT_AUDIT_PROMPT)
        return cls(llm, timeout_s=timeout_s, prompt=prompt, params=params)

    @property
    def prompt_version(self) -> str:
        return self.prompt.ref

    async def audit(
        self, turns: Sequence[Turn], candidates: Sequence[Candidate]
    ) -> list[AuditVerdict]:
        if not candidates:
            return []
        content = self.prompt.render(
            conversation=render_conversation(turns), candidates=render_candidates(candidates)
        )
        with anyio.move_on_after(self.timeout_s) as scope:
            completion = await self.llm.complete(
                [Message(role="user", content=content)],
                schema=audit_schema(candidates, turns),
                params=self.params,
            )
        if scope.cancelled_caught:
            raise LLMTimeoutError(
                f"self-audit took longer than {self.timeout_s}s", model=self.llm.model
            )
        return completion.read(  # an answer cut at the token cap says so
            lambda text: parse_audit(text, candidates, turns, model=self.llm.model)
        )
