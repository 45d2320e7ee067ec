"""Property-based fuzzing of every LLM-output parser, alone and through the Guard.

Whatever a model answers, a parser returns a complete valid result or raises LLMOutputError,
nothing else; and junk from the auditor never turns a candidate into a stored fact.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from mirage_guard.guard import (
    Action,
    AuditFailure,
    AuditMode,
    AuditResponse,
    Guard,
    Label,
    Provenance,
    Reason,
    ReasonCode,
    SelfAuditor,
    parse_audit,
)
from mirage_guard.guard.errors import LLMError, LLMOutputError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.extraction import CandidateExtractor, ExtractionOutput
from mirage_guard.guard.llm import FunctionLLM, Message, ScriptedLLM, parse_json_output
from tests.calibration.factories import make_profile
from tests.fakes.embedder import HashingEmbedder
from tests.guard.paper import (
    PAPER_TURNS,
    STATED,
    STEREOTYPE,
    UNSUPPORTED,
    USER_TURN_IDS,
    WRITER_A,
    audit_profile,
)

FUZZ = settings(
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
CANDS = [STATED, UNSUPPORTED, STEREOTYPE]
CAND_IDS = [c.id for c in CANDS]
TURN_IDS = [t.id for t in PAPER_TURNS]
LABELS = [lbl.value for lbl in Label]

# Integers stay below the 4300-digit limit of int(): that case is pinned down on its own below.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
confidences = (
    st.floats(min_value=0, max_value=1) | st.floats(allow_nan=True) | st.sampled_from([0, 1, -1, 2])
)


def verdicts_like(ids: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "id": st.sampled_from([*ids, "c-unknown", ""]) | st.text(max_size=6) | json_values,
            "label": st.sampled_from([*LABELS, "grounded", "STATED", ""]) | json_values,
            "confidence": confidences | json_values,
        },
        optional={
            "source_turn_id": st.sampled_from([*TURN_IDS, "u9", None]) | json_values,
            "reason": json_values,
        },
    )


def valid_verdict(cid: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "id": st.just(cid),
            "label": st.sampled_from(LABELS),
            "confidence": st.floats(min_value=0, max_value=1),
            "source_turn_id": st.sampled_from([*TURN_IDS, "u9", None]),
        }
    )


@st.composite
def near_valid(draw: st.DrawFn, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Valid items, or the same with one field of one item replaced, dropped or duplicated."""
    items = [dict(i) for i in items]
    how = draw(st.sampled_from(["keep", "keep", "keep", "field", "drop", "duplicate"]))
    if not items or how == "keep":
        return items
    i = draw(st.integers(min_value=0, max_value=len(items) - 1))
    if how == "drop":
        del items[i]
    elif how == "duplicate":
        items.append(dict(items[i]))
    else:
        key = draw(st.sampled_from(sorted(items[i])))
        items[i][key] = draw(json_values)
    return items


def near_valid_audit(ids: Sequence[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Every id once, in any order, then maybe one thing broken."""
    complete = (
        st.permutations(list(ids))
        .flatmap(lambda order: st.tuples(*[valid_verdict(cid) for cid in order]))
        .flatmap(lambda vs: near_valid(list(vs)))
    )
    return st.fixed_dictionaries({"verdicts": complete}, optional={"x": json_values})


def audit_like(ids: Sequence[str]) -> st.SearchStrategy[Any]:
    verdict_lists = st.lists(verdicts_like(ids), max_size=len(ids) + 2)
    return (
        near_valid_audit(ids)
        | st.fixed_dictionaries({"verdicts": verdict_lists}, optional={"x": json_values})
        | json_values
    )


valid_claim = st.fixed_dictionaries(
    {
        "text": st.text(min_size=1, max_size=30),
        "source_turn_id": st.sampled_from([*TURN_IDS, "u9", None]),
        "label": st.sampled_from(LABELS),
        "confidence": st.floats(min_value=0, max_value=1),
    }
)
near_valid_claims = st.fixed_dictionaries(
    {"claims": st.lists(valid_claim, max_size=5).flatmap(near_valid)},
    optional={"extra": json_values},
)
claims_like = near_valid_claims | json_values


@st.composite
def wire(draw: st.DrawFn, structures: st.SearchStrategy[Any]) -> str:
    """An LLM answer: a JSON-ish structure, maybe fenced, wrapped in prose or cut short."""
    body = json.dumps(draw(structures))  # NaN / Infinity tokens included: models emit them
    shape = draw(
        st.sampled_from(
            ["{}", "{}", "```json\n{}\n```", "```\n{}\n```", "  {}  ", "Sure: {}", "```{}"]
        )
    )
    text = shape.replace("{}", body)
    if draw(st.integers(min_value=0, max_value=3)) == 0:
        text = text[: draw(st.integers(min_value=0, max_value=len(text)))]
    return text


answers = (
    st.text()
    | wire(audit_like(CAND_IDS))
    | wire(claims_like)
    | st.text().map(lambda t: f"```json\n{t}\n```")
)


def half_and_half(a: st.SearchStrategy[str], b: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Draw from ``a`` or ``b`` with equal odds (``a | b`` flattens and dilutes ``b``)."""
    return st.booleans().flatmap(lambda first: a if first else b)


AUDIT_ANSWERS = half_and_half(answers, wire(near_valid_audit(CAND_IDS)))
EXTRACTION_ANSWERS = half_and_half(answers, wire(near_valid_claims))


def _check_audit(out: list[Any]) -> None:
    assert [v.candidate_id for v in out] == CAND_IDS  # complete, in candidate order
    for v in out:
        assert isinstance(v.label, Label)
        assert 0.0 <= v.confidence <= 1.0
        assert v.source_turn_id is None or v.source_turn_id in USER_TURN_IDS


@FUZZ
@given(text=AUDIT_ANSWERS)
@example(text='{"verdicts": []}')
@example(text="```")
@example(text="[" * 5000)
def test_parse_audit_returns_complete_verdicts_or_output_error(text: str) -> None:
    try:
        out = parse_audit(text, CANDS, PAPER_TURNS, model="mock/fuzz")
    except LLMOutputError as exc:
        error = exc
    else:
        _check_audit(out)
        return
    assert error.output == text
    assert error.model == "mock/fuzz"


@FUZZ
@given(text=st.one_of(AUDIT_ANSWERS, EXTRACTION_ANSWERS))
def test_parse_json_output_returns_the_schema_or_output_error(text: str) -> None:
    for schema in (AuditResponse, ExtractionOutput):
        try:
            out = parse_json_output(text, schema)
        except LLMOutputError:
            continue
        assert isinstance(out, schema)


class _Loose(BaseModel):
    x: int


@FUZZ
@given(obj=json_values | st.fixed_dictionaries({"x": json_values}))
def test_parse_json_output_is_json_then_the_schema_nothing_more(obj: Any) -> None:
    try:
        expected: _Loose | None = _Loose.model_validate(obj)
    except ValidationError:
        expected = None
    text = json.dumps(obj)
    if expected is None:
        with pytest.raises(LLMOutputError):
            parse_json_output(text, _Loose)
    else:
        assert parse_json_output(text, _Loose) == expected


def _extract(text: str) -> Any:
    extractor = CandidateExtractor(ScriptedLLM([text], model="mock/extract"), inline_audit=True)

    async def run() -> Any:
        return await extractor.extract(PAPER_TURNS)

    return anyio.run(run)


@FUZZ
@given(text=EXTRACTION_ANSWERS)
@example(text='{"claims": []}')
def test_extraction_returns_valid_candidates_or_output_error(text: str) -> None:
    try:
        result = _extract(text)
    except LLMOutputError:
        return
    assert result.audit is not None
    assert len(result.audit) == len(result.candidates)
    texts = [c.text.casefold() for c in result.candidates]
    assert len(set(texts)) == len(texts)
    for cand, verdict in zip(result.candidates, result.audit, strict=True):
        assert cand.text  # non-empty after pydantic's whitespace strip
        assert verdict.candidate_id == cand.id
        assert cand.claimed_source_turn_id is None or cand.claimed_source_turn_id in USER_TURN_IDS
        assert 0.0 <= verdict.confidence <= 1.0


# ----------------------------------------------------------------- through the Guard

GUARD_FUZZ = settings(FUZZ, max_examples=60)

_LINKER = EvidenceLinker(HashingEmbedder())


def _guard(text: str, *, calibrated: bool, on_failure: AuditFailure) -> tuple[Guard, FunctionLLM]:
    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        return text

    llm = FunctionLLM(rule, model=WRITER_A)
    guard = Guard(
        linker=_LINKER,
        evidence_profile=make_profile(),
        auditor=SelfAuditor(llm),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=audit_profile(WRITER_A) if calibrated else None,
        on_audit_failure=on_failure,
        writer_model=WRITER_A,
    )
    return guard, llm


def _parses(text: str) -> bool:
    try:
        parse_audit(text, CANDS, PAPER_TURNS)
    except LLMOutputError:
        return False
    return True


@GUARD_FUZZ
@given(text=AUDIT_ANSWERS, calibrated=st.booleans())
def test_junk_audit_never_yields_a_stored_fact(text: str, calibrated: bool) -> None:
    guard, llm = _guard(text, calibrated=calibrated, on_failure=AuditFailure.QUARANTINE)
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert len(llm.calls) == 1
    by_id = {d.candidate.id: d for d in decisions}
    # unsupported candidates are never facts, whatever the audit says
    assert by_id[UNSUPPORTED.id].action is not Action.STORE
    assert by_id[STEREOTYPE.id].action is not Action.STORE
    for d in decisions:
        if d.provenance is not Provenance.GENERATED:
            assert d.source_turn_id in USER_TURN_IDS
    if _parses(text):
        assert [d.audit for d in decisions] == parse_audit(text, CANDS, PAPER_TURNS)
    else:
        assert all(d.action is Action.QUARANTINE for d in decisions)
        assert all(not d.calibrated for d in decisions)
        failed = Reason(code=ReasonCode.SELF_AUDIT_FAILED, params={"error": "LLMOutputError"})
        assert all(failed in d.reasons for d in decisions)


@GUARD_FUZZ
@given(text=AUDIT_ANSWERS)
def test_junk_audit_with_on_failure_error_raises_typed(text: str) -> None:
    guard, _ = _guard(text, calibrated=False, on_failure=AuditFailure.ERROR)
    try:
        decisions = guard.tag(PAPER_TURNS, CANDS)
    except LLMError as exc:
        error: LLMError = exc
    else:
        assert _parses(text)
        assert len(decisions) == len(CANDS)
        return
    assert isinstance(error, LLMOutputError)
    assert not _parses(text)


# ----------------------------------------------------------------- known core bug

HUGE_INT = "7" * 5000


@pytest.mark.parametrize(
    "text",
    [
        HUGE_INT,
        '{"verdicts": [{"id": "c-job", "label": "GROUNDED", "confidence": ' + HUGE_INT + "}]}",
    ],
    ids=["bare", "in-verdict"],
)
def test_huge_integer_output_is_an_output_error(text: str) -> None:
    with pytest.raises(LLMOutputError):
        parse_json_output(text, AuditResponse)


def test_huge_integer_audit_output_fails_closed_through_the_guard() -> None:
    guard, _ = _guard(HUGE_INT, calibrated=False, on_failure=AuditFailure.QUARANTINE)
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert all(d.action is Action.QUARANTINE for d in decisions)
