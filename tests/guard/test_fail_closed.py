"""Fail closed through the Guard: a failed self-audit never lets a candidate become a fact."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from pydantic import BaseModel

from mirage_guard.guard import (
    Action,
    AuditFailure,
    AuditMode,
    Guard,
    Label,
    Policy,
    Provenance,
    Reason,
    ReasonCode,
    SelfAuditor,
    render_reason,
)
from mirage_guard.guard.errors import (
    LLMError,
    LLMOutputError,
    LLMRateLimitError,
    LLMRefusalError,
    LLMTimeoutError,
    LLMUnavailableError,
)
from mirage_guard.guard.llm import FunctionLLM, LLMClient, Message, ScriptedLLM
from tests.fakes.llm import AUDIT_MODEL, audit_for, labelling_llm, raising_llm
from tests.guard.paper import PAPER_TURNS, STATED, STEREOTYPE, UNSUPPORTED, audit_profile

CANDS = [STATED, UNSUPPORTED, STEREOTYPE]


def slow_llm() -> FunctionLLM:
    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        return audit_for(CANDS, Label.GROUNDED, source_turn_id="u1")

    return FunctionLLM(rule, model=AUDIT_MODEL, latency_s=0.3)


FAILURES: dict[str, tuple[Callable[[], LLMClient], type[LLMError]]] = {
    "timeout-latency": (slow_llm, LLMTimeoutError),
    "timeout-raised": (
        lambda: raising_llm(LLMTimeoutError("slow", model=AUDIT_MODEL)),
        LLMTimeoutError,
    ),
    "rate-limit": (
        lambda: raising_llm(LLMRateLimitError("429", model=AUDIT_MODEL, retry_after=3)),
        LLMRateLimitError,
    ),
    "refusal": (
        lambda: raising_llm(LLMRefusalError("I can't", model=AUDIT_MODEL)),
        LLMRefusalError,
    ),
    "unavailable": (lambda: raising_llm(LLMUnavailableError("503")), LLMUnavailableError),
    "junk-json": (
        lambda: ScriptedLLM(['{"verdicts": [{"id": '], model=AUDIT_MODEL),
        LLMOutputError,
    ),
    "prose": (
        lambda: ScriptedLLM(["Sure, all of these look fine!"], model=AUDIT_MODEL),
        LLMOutputError,
    ),
    "partial": (
        lambda: ScriptedLLM(
            [audit_for(CANDS[:2], Label.GROUNDED, source_turn_id="u1")], model=AUDIT_MODEL
        ),
        LLMOutputError,
    ),
}


def audited_guard(
    make_guard: Callable[..., Guard], llm: LLMClient, on_failure: AuditFailure, **kwargs: object
) -> Guard:
    return make_guard(
        auditor=SelfAuditor(llm, timeout_s=0.02),
        audit_mode=AuditMode.SEPARATE,
        on_audit_failure=on_failure,
        writer_model=llm.model,
        **kwargs,
    )


def test_control_a_working_audit_stores_the_restatement(make_guard: Callable[..., Guard]) -> None:
    # without this control the fail-closed tests below could pass for the wrong reason
    llm = labelling_llm(Label.GROUNDED, source_turn_id="u1")
    guard = audited_guard(make_guard, llm, AuditFailure.QUARANTINE)
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert decisions[0].action is Action.STORE
    assert decisions[0].source_turn_id == "u1"
    assert len(llm.calls) == 1


@pytest.mark.parametrize("case", list(FAILURES))
def test_quarantine_mode_fails_closed(make_guard: Callable[..., Guard], case: str) -> None:
    build, error = FAILURES[case]
    guard = audited_guard(make_guard, build(), AuditFailure.QUARANTINE)
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert [d.candidate.id for d in decisions] == [c.id for c in CANDS]
    for d in decisions:
        assert d.action in (Action.QUARANTINE, Action.BLOCK)
        assert d.provenance is not Provenance.STATED
        assert d.calibrated is False
        assert d.audit is None
        failed = Reason(code=ReasonCode.SELF_AUDIT_FAILED, params={"error": error.__name__})
        assert failed in d.reasons, d.reasons
        assert f"self-audit failed ({error.__name__})" in render_reason(failed)
    # the evidence is still reported: the restatement stays linked to its user turn
    assert decisions[0].source_turn_id == "u1"
    assert decisions[0].provenance is Provenance.INFERRED


@pytest.mark.parametrize("case", list(FAILURES))
def test_error_mode_raises_the_typed_error(make_guard: Callable[..., Guard], case: str) -> None:
    build, error = FAILURES[case]
    guard = audited_guard(make_guard, build(), AuditFailure.ERROR)
    with pytest.raises(error):
        guard.tag(PAPER_TURNS, CANDS)


async def test_fail_closed_in_async_path_too(make_guard: Callable[..., Guard]) -> None:
    guard = audited_guard(
        make_guard, raising_llm(LLMRateLimitError("429")), AuditFailure.QUARANTINE
    )
    decisions = await guard.atag(PAPER_TURNS, CANDS)
    assert all(d.action is Action.QUARANTINE for d in decisions)


def test_blocking_policy_stays_blocking_on_audit_failure(make_guard: Callable[..., Guard]) -> None:
    guard = audited_guard(
        make_guard,
        raising_llm(LLMRefusalError("no")),
        AuditFailure.QUARANTINE,
        policy=Policy(generated_action=Action.BLOCK),
    )
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert decisions[0].action is Action.QUARANTINE
    assert [d.action for d in decisions[1:]] == [Action.BLOCK, Action.BLOCK]


def test_audit_failure_with_a_calibrated_profile_falls_back_closed(
    make_guard: Callable[..., Guard],
) -> None:
    llm = raising_llm(LLMTimeoutError("slow"))
    guard = audited_guard(
        make_guard, llm, AuditFailure.QUARANTINE, audit_profile=audit_profile(AUDIT_MODEL)
    )
    decisions = guard.tag(PAPER_TURNS, CANDS)
    assert all(d.action is not Action.STORE for d in decisions)
    assert all(d.profile_id == "evidence-only" for d in decisions)
    assert all(not d.calibrated for d in decisions)
