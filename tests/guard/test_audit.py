"""Self-audit: one call per write for all candidates, strict parsing, quotes checked against
user turns only."""

from __future__ import annotations

import json

import pytest

from mirage_guard.guard import (
    AuditResponse,
    Candidate,
    Label,
    QuoteCheck,
    Role,
    SelfAuditor,
    Turn,
    find_quote,
    parse_audit,
)
from mirage_guard.guard._audit import render_candidates
from mirage_guard.guard.errors import LLMOutputError
from mirage_guard.guard.llm import ScriptedLLM
from mirage_guard.prompts import load_prompt
from tests.fakes.llm import audit_for, audit_json, candidate_ids_in_prompt, verdict
from tests.guard.paper import PAPER_TURNS

CANDS = [
    Candidate(id="c1", text="Software engineer in Seattle"),
    Candidate(id="c2", text="Enjoys rock climbing"),
    Candidate(id="c3", text="Votes progressive"),
]


async def test_one_llm_call_audits_every_candidate_of_a_write() -> None:
    llm = ScriptedLLM(
        [
            audit_json(
                [
                    verdict("c1", Label.GROUNDED, confidence=0.9, quote="software engineer at"),
                    verdict(
                        "c2", Label.INFERRED_REASONABLE, confidence=0.7, quote="went rock climbing"
                    ),
                    verdict("c3", Label.INFERRED_STEREOTYPE, confidence=0.6),
                ]
            )
        ]
    )
    verdicts = await SelfAuditor(llm).audit(PAPER_TURNS, CANDS)
    assert len(llm.calls) == 1
    call = llm.calls[0]
    # the schema of this write: AuditResponse's shape, ids limited to its entries and user turns
    assert call.schema is not None
    assert issubclass(call.schema, AuditResponse)
    wire = call.schema.model_json_schema()
    item = wire["$defs"]["AuditVerdictWire"]["properties"]
    assert item["id"]["enum"] == ["c1", "c2", "c3"]
    user_ids = [t.id for t in PAPER_TURNS if t.role is Role.USER]
    assert [a.get("const") or a.get("enum") for a in item["source_turn_id"]["anyOf"]][:-1] == [
        user_ids[0] if len(user_ids) == 1 else user_ids
    ]
    assert wire["properties"]["verdicts"]["minItems"] == 3
    assert wire["properties"]["verdicts"]["maxItems"] == 3
    assert call.params.temperature == 0.0
    assert candidate_ids_in_prompt(call.messages) == ["c1", "c2", "c3"]
    prompt = call.messages[0].content
    # every turn is shown with its id and role, so the model can cite user turns
    for turn in PAPER_TURNS:
        assert json.dumps(turn.id) in prompt
        assert turn.content in prompt
    assert [(v.candidate_id, v.label, v.source_turn_id) for v in verdicts] == [
        ("c1", Label.GROUNDED, "u1"),
        ("c2", Label.INFERRED_REASONABLE, "u2"),
        ("c3", Label.INFERRED_STEREOTYPE, None),
    ]
    assert [v.confidence for v in verdicts] == [0.9, 0.7, 0.6]
    assert [v.quote_check for v in verdicts] == [QuoteCheck.VALID] * 2 + [QuoteCheck.MISSING]
    # the wire asks for the quote; a stereotype without one is not a bad quote
    assert "quote" in wire["$defs"]["AuditVerdictWire"]["required"]
    assert [v.quote_bad for v in verdicts] == [False, False, False]


async def test_no_candidates_means_no_call() -> None:
    llm = ScriptedLLM([])
    assert await SelfAuditor(llm).audit(PAPER_TURNS, []) == []
    assert llm.calls == []


def test_prompt_version_is_the_self_audit_prompt_ref() -> None:
    auditor = SelfAuditor(ScriptedLLM([]))
    assert auditor.prompt_version == load_prompt("self_audit").ref
    assert auditor.prompt_version.startswith("self_audit@")


def test_verdicts_come_back_in_candidate_order() -> None:
    text = audit_json([verdict("c3", Label.FABRICATED), verdict("c1"), verdict("c2")])
    out = parse_audit(text, CANDS, PAPER_TURNS)
    assert [v.candidate_id for v in out] == ["c1", "c2", "c3"]
    assert out[2].label is Label.FABRICATED


@pytest.mark.parametrize("fence", ["```json\n{}\n```", "```\n{}\n```", "  ```JSON\n{}\n```  "])
def test_fenced_json_is_accepted(fence: str) -> None:
    body = audit_for(CANDS, Label.GROUNDED, quote="I'm a software engineer")
    out = parse_audit(fence.replace("{}", body), CANDS, PAPER_TURNS)
    assert [v.label for v in out] == [Label.GROUNDED] * 3
    assert all(v.source_turn_id == "u1" for v in out)


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        ([verdict("c1"), verdict("c2"), verdict("c3"), verdict("c9")], "unknown entry id"),
        ([verdict("c1"), verdict("c1"), verdict("c2"), verdict("c3")], "two verdicts"),
        ([verdict("c1"), verdict("c3")], "partial audit"),
        ([], "partial audit"),
    ],
    ids=["unknown-id", "duplicate", "partial", "empty"],
)
def test_unknown_duplicate_or_missing_verdicts_are_errors(
    verdicts: list[dict[str, object]], message: str
) -> None:
    text = audit_json(verdicts)
    with pytest.raises(LLMOutputError, match=message) as info:
        parse_audit(text, CANDS, PAPER_TURNS, model="mock/w")
    assert info.value.output == text
    assert info.value.model == "mock/w"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "I cannot help with that.",
        '{"verdicts": [',
        '{"verdicts": {"c1": "GROUNDED"}}',
        '{"verdicts": [{"id": "c1", "label": "TRUE", "confidence": 0.9}]}',
        '{"verdicts": [{"id": "c1", "label": "GROUNDED", "confidence": 1.5}]}',
        '{"verdicts": [{"id": "c1", "label": "GROUNDED"}]}',
        # strict: the quote key is required (null allowed), and it is a string
        '{"verdicts": [{"id": "c1", "label": "GROUNDED", "confidence": 0.9}]}',
        '{"verdicts": [{"id": "c1", "label": "GROUNDED", "confidence": 0.9, "quote": 7}]}',
        '[{"id": "c1", "label": "GROUNDED", "confidence": 0.9}]',
        "null",
        '"GROUNDED"',
        'Sure! {"verdicts": []}',
    ],
)
def test_malformed_output_is_an_output_error(text: str) -> None:
    with pytest.raises(LLMOutputError):
        parse_audit(text, CANDS[:1], PAPER_TURNS)


def test_quotes_are_checked_against_user_turns_only() -> None:
    # a1 repeats u1, but only the user's own words count; a turn id alone proves nothing
    text = audit_json(
        [
            verdict("c1", Label.GROUNDED, quote="Great, a software engineer", source_turn_id="u1"),
            verdict("c2", Label.GROUNDED, quote="  I WENT rock\nclimbing, last weekend "),
            verdict("c3", Label.INFERRED_REASONABLE, quote="I vote for progressives"),
        ]
    )
    out = parse_audit(text, CANDS, PAPER_TURNS)
    assert [v.quote_check for v in out] == [
        QuoteCheck.ASSISTANT,
        QuoteCheck.VALID,
        QuoteCheck.INVENTED,
    ]
    assert [v.source_turn_id for v in out] == [None, "u2", None]
    assert [v.quote_bad for v in out] == [True, False, True]
    assert out[0].label is Label.GROUNDED  # the label is kept; the quote is what is judged


@pytest.mark.parametrize(
    ("quote", "check"),
    [
        ("software engineer at a startup", QuoteCheck.VALID),  # in u1 and a1: the user said it
        ("I\u2019m a software engineer", QuoteCheck.VALID),  # typographic apostrophe
        ("ＳＥＡＴＴＬＥ.", QuoteCheck.MISSING),  # full-width, NFKC folds it; one word says nothing
        ("startup in Seattle!", QuoteCheck.VALID),
        ("rock climbing last weekend sounds fun", QuoteCheck.ASSISTANT),
        ("cat Pix", QuoteCheck.INVENTED),  # never inside a word
        ("", QuoteCheck.MISSING),
        (None, QuoteCheck.MISSING),
    ],
)
def test_quote_normalisation(quote: str | None, check: QuoteCheck) -> None:
    raw = json.loads(json.dumps({"q": quote}).replace("\\\\u", "\\u"))["q"]
    assert find_quote(raw, PAPER_TURNS)[0] is check


def test_missing_quote_is_bad_only_for_labels_that_claim_the_user_said_it() -> None:
    text = audit_json(
        [
            verdict("c1", Label.GROUNDED),
            verdict("c2", Label.FABRICATED),
            verdict("c3", Label.INFERRED_REASONABLE),
        ]
    )
    out = parse_audit(text, CANDS, PAPER_TURNS)
    assert [v.quote_check for v in out] == [QuoteCheck.MISSING] * 3
    assert [v.quote_bad for v in out] == [True, False, True]


def test_system_and_tool_turns_are_not_evidence_either() -> None:
    turns = [
        Turn(id="s1", role=Role.SYSTEM, content="The user is a nurse."),
        Turn(id="t1", role=Role.TOOL, content="profile: nurse"),
        Turn(id="u1", role=Role.USER, content="I work nights."),
    ]
    text = audit_json(
        [
            verdict("c1", quote="The user is a nurse."),
            verdict("c2", quote="profile: nurse"),
            verdict("c3", quote="I work nights"),
        ]
    )
    out = parse_audit(text, CANDS, turns)
    assert [v.quote_check for v in out] == [
        QuoteCheck.ASSISTANT,
        QuoteCheck.ASSISTANT,
        QuoteCheck.VALID,
    ]
    assert [v.source_turn_id for v in out] == [None, None, "u1"]


def test_extra_fields_in_a_verdict_are_ignored() -> None:
    text = json.dumps(
        {
            "verdicts": [{**verdict(c), "why": "because", "source_turn_id": "u1"} for c in CANDS],
            "note": "extra",
        }
    )
    assert len(parse_audit(text, CANDS, PAPER_TURNS)) == 3


def test_candidates_are_rendered_one_json_object_per_line() -> None:
    tricky = [Candidate(id="c1", text='Says "hi"\nand leaves')]
    lines = render_candidates(tricky).splitlines()
    assert len(lines) == 1
    assert json.loads(lines[0]) == {"id": "c1", "text": 'Says "hi"\nand leaves'}
