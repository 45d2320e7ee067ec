"""A self-audit that can be checked: the writer quotes the user, the guard looks the quote up.

Scripted writers give the same labels and differ only in how they quote: honestly, inventing
words, quoting the assistant, or not at all. A label whose quote does not check out counts
against the claim (never stated, never a lower score than the evidence alone gives); a verified
quote counts for it only under a profile that measured this writer's quotes and trusts them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
import respx

from mirage_guard.guard import (
    Action,
    AuditMode,
    Candidate,
    Decision,
    Guard,
    Label,
    Provenance,
    QuoteCheck,
    ReasonCode,
    SelfAuditor,
)
from mirage_guard.guard.errors import LLMOutputError
from mirage_guard.guard.extraction import CandidateExtractor
from mirage_guard.guard.llm import LiteLLMClient, ScriptedLLM, StructuredMode, mode_of
from mirage_guard.guard.scoring import (
    QUOTE_FEATURES,
    CalibrationProfile,
    LogisticModel,
    ProfileMode,
    QuoteTrust,
)
from tests.calibration.factories import make_profile
from tests.fakes.llm import QuoteStyle, labelling_llm
from tests.guard import test_structured_output as ladder
from tests.guard.paper import PAPER_TURNS, SELF_AUDIT_REF, STATED, WRITER_A
from tests.guard.test_structured_output import BASE, LLAMA_CPP_REFUSAL, MODEL, URL, _ok

pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")
respx_llama = ladder.http  # the ladder tests' respx server (litellm builds every request)

# said in u1 in other words: the evidence alone reads it as linked, not a restatement
PARAPHRASE = Candidate(id="c-works", text="Works as a software engineer")
BAD_QUOTE_REASON = {
    "invented": ReasonCode.AUDIT_QUOTE_INVALID,
    "assistant": ReasonCode.AUDIT_QUOTE_ASSISTANT,
    "none": ReasonCode.AUDIT_QUOTE_MISSING,
}
STYLES: tuple[QuoteStyle, ...] = ("honest", "invented", "assistant", "none")


def _model(weights: dict[str, float], intercept: float) -> LogisticModel:
    names = list(weights)
    return LogisticModel(
        features=names, mean=[0.0] * len(names), scale=[1.0] * len(names),
        coef=[weights[n] for n in names], intercept=intercept,
    )  # fmt: skip


def _strict_evidence() -> CalibrationProfile:
    """Stated only for a near-verbatim restatement (lexical containment above 0.83)."""
    base = make_profile()
    return base.model_copy(update={"stated_model": _model({"lex_containment": 12.0}, -10.0)})


def _quote_profile(trust: QuoteTrust | None, *, reads_quotes: bool = True) -> CalibrationProfile:
    """A writer profile whose stated model also believes a GROUNDED label (weight 4) and a
    verified quote (weight 4): fooled on its own by a GROUNDED label with a bad quote."""
    quote_w = dict.fromkeys(QUOTE_FEATURES, 0.0) if reads_quotes else {}
    base = make_profile(
        ProfileMode.SELF_AUDIT_SEPARATE, writer_model=WRITER_A, prompt_version=SELF_AUDIT_REF
    )
    return base.model_copy(
        update={
            "oi_model": _model({"sim_max": -12.0, "audit_oi": 8.0, **quote_w}, 4.0),
            "stated_model": _model(
                {
                    "lex_containment": 12.0,
                    "audit_grounded": 4.0,
                    **quote_w,
                    **({"quote_valid": 4.0} if reads_quotes else {}),
                },
                -10.0,
            ),
            "quote_trust": trust,
        }
    )


TRUSTED = QuoteTrust(n=40, valid_share=0.95, agreement_valid=0.9, trust=0.855)
DISTRUSTED = QuoteTrust(n=40, valid_share=0.2, agreement_valid=0.9, agreement_bad=0.4, trust=0.18)


def _decide(
    make_guard: Callable[..., Guard],
    style: QuoteStyle,
    candidate: Candidate,
    *,
    audit_profile: CalibrationProfile | None = None,
) -> Decision:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A, quoting=style)
    guard = make_guard(
        auditor=SelfAuditor(llm),
        audit_mode=AuditMode.SEPARATE,
        audit_profile=audit_profile,
        writer_model=WRITER_A,
    )
    try:
        [decision] = guard.tag(PAPER_TURNS, [candidate])
    finally:
        guard.close()
    assert len(llm.calls) == 1  # still one call per write
    return decision


def _codes(d: Decision) -> list[ReasonCode]:
    return [r.code for r in d.reasons]


@pytest.mark.parametrize("style", STYLES)
def test_without_a_profile_a_bad_quote_is_never_a_stated_fact(
    make_guard: Callable[..., Guard], style: QuoteStyle
) -> None:
    # the evidence alone reads STATED as a restatement of u1; the writer says GROUNDED too
    d = _decide(make_guard, style, STATED)
    assert d.audit is not None
    if style == "honest":
        assert d.audit.quote_check is QuoteCheck.VALID
        assert d.audit.source_turn_id == "u1"
        assert (d.provenance, d.action) == (Provenance.STATED, Action.STORE)
        assert ReasonCode.AUDIT_QUOTE_VERIFIED in _codes(d)
        assert not set(BAD_QUOTE_REASON.values()) & set(_codes(d))
    else:
        assert d.audit.quote_bad
        assert d.provenance is Provenance.INFERRED  # counted against: a hypothesis at most
        assert d.action is Action.STORE_AS_HYPOTHESIS
        assert BAD_QUOTE_REASON[style] in _codes(d)
        assert ReasonCode.AUDIT_QUOTE_VERIFIED not in _codes(d)
        assert d.source_turn_id == "u1"  # the evidence's own link stays


@pytest.mark.parametrize("style", STYLES)
def test_a_trusted_profile_lets_only_a_verified_quote_count_for_the_claim(
    linker: object, style: QuoteStyle
) -> None:
    evidence = _strict_evidence()

    def make_guard(**kwargs: object) -> Guard:
        return Guard(linker=linker, evidence_profile=evidence, **kwargs)  # type: ignore[arg-type]

    d = _decide(make_guard, style, PARAPHRASE, audit_profile=_quote_profile(TRUSTED))
    assert d.calibrated
    if style == "honest":
        # the writer quoted u1 and the profile trusts its quotes: the label counts for it
        assert d.provenance is Provenance.STATED
        assert ReasonCode.AUDIT_QUOTE_VERIFIED in _codes(d)
    else:
        # the same label with a bad quote would have fooled the fitted model alone (its
        # P(stated) is 0.5 at the threshold); it may never do better than the evidence
        assert d.provenance is Provenance.INFERRED
        assert BAD_QUOTE_REASON[style] in _codes(d)
    # the evidence alone, for comparison
    plain = make_guard(audit_mode=AuditMode.OFF)
    try:
        [alone] = plain.tag(PAPER_TURNS, [PARAPHRASE])
    finally:
        plain.close()
    assert alone.provenance is Provenance.INFERRED
    assert d.score is not None
    assert alone.score is not None
    if style != "honest":
        assert d.score >= alone.score  # never a lower P(over-inference) than the evidence gives


@pytest.mark.parametrize(
    ("trust", "reads_quotes"),
    [(DISTRUSTED, True), (None, True), (None, False)],
    ids=["low-trust", "trust-absent", "profile-from-before-quotes"],
)
def test_an_untrusted_writer_s_verified_quote_does_not_raise_the_claim(
    linker: object, trust: QuoteTrust | None, reads_quotes: bool
) -> None:
    evidence = _strict_evidence()

    def make_guard(**kwargs: object) -> Guard:
        return Guard(linker=linker, evidence_profile=evidence, **kwargs)  # type: ignore[arg-type]

    profile = _quote_profile(trust, reads_quotes=reads_quotes)
    assert not profile.trusts_quotes
    d = _decide(make_guard, "honest", PARAPHRASE, audit_profile=profile)
    assert d.audit is not None
    assert d.audit.quote_check is QuoteCheck.VALID
    assert d.provenance is Provenance.INFERRED
    assert ReasonCode.AUDIT_QUOTES_UNTRUSTED in _codes(d)


def test_a_quote_the_model_attributes_to_a_user_turn_id_is_still_checked(
    make_guard: Callable[..., Guard],
) -> None:
    # the writer names u1 as its source but quotes the assistant's words from a1
    llm = labelling_llm(Label.GROUNDED, model=WRITER_A, quoting="assistant", source_turn_id="u1")
    guard = make_guard(
        auditor=SelfAuditor(llm), audit_mode=AuditMode.SEPARATE, writer_model=WRITER_A
    )
    try:
        [d] = guard.tag(PAPER_TURNS, [STATED])
    finally:
        guard.close()
    assert d.audit is not None
    assert (d.audit.quote_check, d.audit.source_turn_id) == (QuoteCheck.ASSISTANT, None)
    assert d.provenance is not Provenance.STATED


def test_old_profile_json_without_quote_trust_loads_and_does_not_trust_quotes() -> None:
    profile = make_profile(
        ProfileMode.SELF_AUDIT_SEPARATE, writer_model=WRITER_A, prompt_version=SELF_AUDIT_REF
    )
    raw = profile.model_dump(mode="json")
    raw.pop("quote_trust")
    loaded = CalibrationProfile.model_validate(raw)
    assert loaded.quote_trust is None
    assert not loaded.trusts_quotes


# ---------------------------------------------------------------- inline audit (extraction)


async def test_inline_extraction_quotes_are_checked_like_a_separate_audit(
    make_guard: Callable[..., Guard],
) -> None:
    reply = json.dumps(
        {
            "claims": [
                {"text": STATED.text, "source_turn_id": "u1", "label": "GROUNDED",
                 "confidence": 0.9, "quote": "software engineer at a startup in Seattle"},
                {"text": "Software engineer at a startup", "source_turn_id": "u1",
                 "label": "GROUNDED", "confidence": 0.9, "quote": "Great, a software engineer"},
                {"text": "Startup engineer in Seattle", "source_turn_id": "u1",
                 "label": "GROUNDED", "confidence": 0.9, "quote": "I build rockets in Seattle"},
                {"text": "Engineer at a Seattle startup", "source_turn_id": "u1",
                 "label": "GROUNDED", "confidence": 0.9},
            ]
        }
    )  # fmt: skip
    llm = ScriptedLLM([reply], model=WRITER_A)
    result = await CandidateExtractor(llm, inline_audit=True).extract(list(PAPER_TURNS))
    assert result.audit is not None
    assert [v.quote for v in result.audit][1:3] == [
        "Great, a software engineer",
        "I build rockets in Seattle",
    ]
    guard = make_guard(audit_mode=AuditMode.INLINE, writer_model=WRITER_A)
    try:
        decisions = await guard.atag(PAPER_TURNS, result.candidates, audit=result.audit)
    finally:
        guard.close()
    assert len(llm.calls) == 1  # the labels and quotes came with the extraction: no extra call
    checks = [d.audit.quote_check if d.audit else None for d in decisions]
    assert checks == [
        QuoteCheck.VALID,
        QuoteCheck.ASSISTANT,
        QuoteCheck.INVENTED,
        QuoteCheck.MISSING,
    ]
    assert [d.provenance is Provenance.STATED for d in decisions[1:]] == [False] * 3
    styles: tuple[QuoteStyle, ...] = ("assistant", "invented", "none")
    for style, d in zip(styles, decisions[1:], strict=True):
        assert BAD_QUOTE_REASON[style] in _codes(d)


# ---------------------------------------------------------------- structured-output ladder


def _audit_answer(quote: str | None, *, with_quote_key: bool = True) -> str:
    item: dict[str, object] = {"id": STATED.id, "label": "GROUNDED", "confidence": 0.9}
    if with_quote_key:
        item["quote"] = quote
    return json.dumps({"verdicts": [item]})


async def test_quote_travels_down_the_ladder_to_the_grammar_rung(
    respx_llama: respx.MockRouter,
) -> None:
    seen: list[dict[str, Any]] = []

    def llama_cpp(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append(body)
        if (body.get("response_format") or {}).get("type") not in (None, "text", "json_object"):
            return httpx.Response(500, json=LLAMA_CPP_REFUSAL)
        return httpx.Response(200, json=_ok(_audit_answer("I'm a software engineer")))

    respx_llama.post(URL).mock(side_effect=llama_cpp)
    auditor = SelfAuditor(LiteLLMClient(MODEL, api_base=BASE))
    [v] = await auditor.audit(PAPER_TURNS, [STATED])
    assert [b["response_format"]["type"] for b in seen] == ["json_schema", "json_object"]
    grammar_rung = seen[1]["response_format"]["schema"]
    for schema in (seen[0]["response_format"]["json_schema"]["schema"], grammar_rung):
        wire = schema["$defs"]["AuditVerdictWire"]
        assert "quote" in wire["required"]  # the grammar makes the model write it
    bounded = seen[0]["response_format"]["json_schema"]["schema"]["$defs"]["AuditVerdictWire"]
    assert {"type": "string", "maxLength": 400} in bounded["properties"]["quote"]["anyOf"]
    # the grammar rung drops length bounds (llama.cpp unrolls them into rules it cannot parse)
    assert "maxLength" not in json.dumps(grammar_rung)
    assert (v.quote_check, v.source_turn_id) == (QuoteCheck.VALID, "u1")


@pytest.mark.parametrize(
    ("answer", "check"),
    [
        (f"```json\n{_audit_answer('startup in Seattle')}\n```", QuoteCheck.VALID),
        (_audit_answer("I love Seattle startups"), QuoteCheck.INVENTED),
        (_audit_answer(None), QuoteCheck.MISSING),
        (_audit_answer(None, with_quote_key=False), None),  # strict: the key is required
        (f"Here you go: {_audit_answer('startup in Seattle')}", None),  # prose around JSON
    ],
    ids=["fenced-valid", "invented", "null", "no-quote-key", "prose"],
)
async def test_text_mode_parses_quotes_strictly(
    respx_llama: respx.MockRouter, answer: str, check: QuoteCheck | None
) -> None:
    def no_response_format(request: httpx.Request) -> httpx.Response:
        if "response_format" in json.loads(request.content):
            return httpx.Response(
                400, json={"error": {"message": "response_format is not supported", "code": 400}}
            )
        return httpx.Response(200, json=_ok(answer))

    respx_llama.post(URL).mock(side_effect=no_response_format)
    auditor = SelfAuditor(LiteLLMClient(MODEL, api_base=BASE))
    if check is None:
        with pytest.raises(LLMOutputError):
            await auditor.audit(PAPER_TURNS, [STATED])
        return
    [v] = await auditor.audit(PAPER_TURNS, [STATED])
    assert mode_of(MODEL, BASE) is StructuredMode.TEXT
    assert v.quote_check is check
