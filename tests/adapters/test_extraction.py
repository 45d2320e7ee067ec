"""CandidateExtractor: one call, strict schema, hints never trusted blindly, fail closed."""

from __future__ import annotations

import pytest

from mirage_guard.adapters import Mem0PromptExtractor
from mirage_guard.guard import Label, Role, Turn
from mirage_guard.guard.errors import LLMOutputError
from mirage_guard.guard.extraction import CandidateExtractor, ExtractionOutput
from mirage_guard.guard.llm import ScriptedLLM
from mirage_guard.prompts import load_prompt
from tests.fakes.mem0 import claims_reply

TURNS = [
    Turn(id="u1", role=Role.USER, content="I'm a nurse in Leeds."),
    Turn(id="a1", role=Role.ASSISTANT, content="You must be very caring."),
]


async def test_one_call_with_the_versioned_prompt_and_turn_ids() -> None:
    llm = ScriptedLLM([claims_reply(("User is a nurse", "u1", "GROUNDED", 0.9))])
    result = await CandidateExtractor(llm).extract(TURNS)

    (call,) = llm.calls
    assert call.schema is ExtractionOutput
    assert "[u1] user: I'm a nurse in Leeds." in call.messages[0].content
    assert "[a1] assistant: You must be very caring." in call.messages[0].content
    assert result.prompt_ref == load_prompt("extract_candidates").ref
    (cand,) = result.candidates
    assert (cand.text, cand.claimed_source_turn_id, cand.claimed_label) == (
        "User is a nurse", "u1", Label.GROUNDED,
    )  # fmt: skip
    assert result.audit is None  # labels are only hints unless the audit is inline


async def test_citations_of_assistant_or_unknown_turns_are_dropped_and_duplicates_merged() -> None:
    reply = claims_reply(
        ("User is caring", "a1", "INFERRED_STEREOTYPE", 0.8),
        ("User is a nurse", "u9", "GROUNDED", 0.9),
        ("user is a NURSE", "u1", "GROUNDED", 0.9),
    )
    result = await CandidateExtractor(ScriptedLLM([reply])).extract(TURNS)
    assert [c.claimed_source_turn_id for c in result.candidates] == [None, None]
    assert len(result.candidates) == 2


async def test_inline_mode_returns_the_labels_as_audit_verdicts() -> None:
    reply = claims_reply(("User is caring", None, "INFERRED_STEREOTYPE", 0.8))
    result = await CandidateExtractor(ScriptedLLM([reply]), inline_audit=True).extract(TURNS)
    assert result.audit is not None
    (verdict,) = result.audit
    assert verdict.candidate_id == result.candidates[0].id
    assert (verdict.label, verdict.confidence) == (Label.INFERRED_STEREOTYPE, 0.8)


@pytest.mark.parametrize(
    "reply",
    [
        "I think the user is a nurse",
        '{"claims": [{"text": "User is a nurse", "source_turn_id": "u1"}]}',
        '{"claims": [{"text": "x", "source_turn_id": null, "label": "MAYBE", "confidence": 1}]}',
        '{"claims": [{"text": "x", "source_turn_id": null, "label": "GROUNDED", '
        '"confidence": 1.5}]}',
        '{"claims": [], "extra": 1}',
    ],
)
async def test_anything_off_schema_fails_closed(reply: str) -> None:
    with pytest.raises(LLMOutputError):
        await CandidateExtractor(ScriptedLLM([reply])).extract(TURNS)


@pytest.mark.parametrize("blank", ["", "   ", "\u200b", "..."])
async def test_a_blank_claim_is_dropped_and_the_others_kept(blank: str) -> None:
    """One claim of no text used to fail the whole answer (its facts lost), "..." did not."""
    reply = claims_reply((blank, None, "GROUNDED", 1.0), ("User is a nurse", "u1", "GROUNDED", 0.9))
    result = await CandidateExtractor(ScriptedLLM([reply])).extract(TURNS)
    assert [c.text for c in result.candidates] == ["User is a nurse"]


async def test_a_blank_mem0_fact_is_dropped_and_the_others_kept() -> None:
    reply = '{"memory": [{"id": "0", "text": ""}, {"id": "1", "text": "User is a nurse"}]}'
    result = await Mem0PromptExtractor(ScriptedLLM([reply])).extract(TURNS)
    assert [c.text for c in result.candidates] == ["User is a nurse"]


async def test_no_turns_no_call() -> None:
    llm = ScriptedLLM([])
    result = await CandidateExtractor(llm).extract([])
    assert result.candidates == []
    assert llm.calls == []
