"""Drafting new personas with a model (``bench_persona_generation`` prompt).

The shipped 150 personas were written by hand; this is for users who extend the set. A draft is
validated against the persona schema and must still be reviewed by a person before use.
"""

from __future__ import annotations

from mirage_guard.benchmark._cache import prompt_scope
from mirage_guard.benchmark.personas import Persona, PersonaGroup
from mirage_guard.guard.errors import LLMOutputError
from mirage_guard.guard.llm import LLMClient, Message, SamplingParams
from mirage_guard.prompts import load_prompt


async def draft_persona(
    llm: LLMClient,
    *,
    group: PersonaGroup,
    occupation: str,
    persona_id: str,
    temperature: float = 0.7,
) -> Persona:
    """One persona of ``group`` for ``occupation``; raises LLMOutputError if it is invalid."""
    prompt = load_prompt("bench_persona_generation")
    content = prompt.render(group=group.value, occupation=occupation, persona_id=persona_id)
    with prompt_scope(prompt):
        completion = await llm.complete(
            [Message(role="user", content=content)],
            schema=Persona,
            params=SamplingParams(temperature=temperature),
        )
    persona = completion.parse(Persona)
    if persona.persona_id != persona_id or persona.group is not group:
        raise LLMOutputError(
            f"draft is {persona.persona_id}/{persona.group.value}, "
            f"asked for {persona_id}/{group.value}",
            model=llm.model,
            output=completion.text,
        )
    return persona
