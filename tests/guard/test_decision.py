"""The pure decision rule and its reason codes: scores + link + profile -> one Decision."""

from __future__ import annotations

import json
import math

import pytest

from mirage_guard.guard import (
    Action,
    AuditVerdict,
    Candidate,
    EvidenceLink,
    Label,
    Policy,
    Provenance,
    Reason,
    ReasonCode,
    decide,
    describe_reason_code,
    reason,
    render_reason,
)
from mirage_guard.guard.errors import LLMTimeoutError
from mirage_guard.guard.scoring import CalibrationProfile
from tests.calibration.factories import make_profile

CAND = Candidate(id="c1", text="Went rock climbing last weekend")
LINKED = EvidenceLink(turn_id="u2", similarity=0.91234, span="I went rock climbing")
UNLINKED = EvidenceLink(turn_id=None, similarity=0.1)


@pytest.fixture
def profile() -> CalibrationProfile:
    return make_profile()


def _codes(reasons: list[Reason]) -> list[ReasonCode]:
    return [r.code for r in reasons]


def test_a_low_oi_high_stated_linked_claim_is_a_stated_fact(profile: CalibrationProfile) -> None:
    d = decide(CAND, LINKED, p_oi=0.0, p_stated=1.0, profile=profile, policy=Policy())
    assert (d.provenance, d.action, d.source_turn_id) == (Provenance.STATED, Action.STORE, "u2")
    assert _codes(d.reasons) == [ReasonCode.SCORED_WITH_PROFILE, ReasonCode.STATED_SCORE]
    assert d.reasons[1].params == {"p_stated": 1.0, "threshold": profile.stated_threshold}
    assert d.similarity == 0.9123


def test_each_branch_has_its_code(profile: CalibrationProfile) -> None:
    cases = [
        (LINKED, math.nan, 0.5, ReasonCode.SCORE_UNDECIDABLE, Provenance.GENERATED),
        (UNLINKED, 0.0, 1.0, ReasonCode.NO_USER_TURN, Provenance.GENERATED),
        (LINKED, 1.0, 1.0, ReasonCode.OVER_INFERENCE_SCORE, Provenance.GENERATED),
        (LINKED, 0.0, 0.0, ReasonCode.LINKED_NOT_RESTATEMENT, Provenance.INFERRED),
    ]
    for link, p_oi, p_stated, code, provenance in cases:
        d = decide(CAND, link, p_oi=p_oi, p_stated=p_stated, profile=profile, policy=Policy())
        assert d.provenance is provenance
        assert code in _codes(d.reasons)
    undecidable = decide(
        CAND, LINKED, p_oi=math.nan, p_stated=0.5, profile=profile, policy=Policy()
    )
    assert undecidable.score is None


@pytest.mark.parametrize("text", ["User is", "Likes", "I like it", "the"])
def test_a_claim_that_says_nothing_is_no_fact_whatever_its_scores(
    profile: CalibrationProfile, text: str
) -> None:
    said = EvidenceLink(turn_id="u2", similarity=0.99, span="I like it, the user is happy")
    d = decide(Candidate(id="c", text=text), said, p_oi=0.0, p_stated=1.0, profile=profile,
               policy=Policy())  # fmt: skip
    assert (d.provenance, d.action, d.source_turn_id) == (
        Provenance.GENERATED,
        Action.QUARANTINE,
        None,
    )
    assert _codes(d.reasons) == [ReasonCode.SCORED_WITH_PROFILE, ReasonCode.NO_CONTENT]
    assert render_reason(d.reasons[1]) == (
        "no word of the claim says anything about the user: not a fact"
    )


def test_unsupported_specifics_keep_a_restatement_from_being_stated(
    profile: CalibrationProfile,
) -> None:
    link = LINKED.model_copy(update={"features": {"unsupported_names": 1.0}})
    d = decide(CAND, link, p_oi=0.0, p_stated=1.0, profile=profile, policy=Policy())
    assert d.provenance is Provenance.INFERRED
    assert _codes(d.reasons)[-2:] == [
        ReasonCode.LINKED_NOT_RESTATEMENT,
        ReasonCode.UNSUPPORTED_SPECIFICS,
    ]


def test_a_policy_floor_on_p_stated_makes_a_scored_restatement_a_hypothesis(
    profile: CalibrationProfile,
) -> None:
    between = (profile.stated_threshold + 0.9) / 2  # above the profile's threshold, below 0.9
    strict = Policy(stated_min=0.9)
    d = decide(CAND, LINKED, p_oi=0.0, p_stated=between, profile=profile, policy=strict)
    assert (d.provenance, d.action) == (Provenance.INFERRED, Action.STORE_AS_HYPOTHESIS)
    assert _codes(d.reasons)[1:] == [
        ReasonCode.LINKED_NOT_RESTATEMENT,
        ReasonCode.BELOW_STATED_FLOOR,
    ]
    assert d.reasons[2].params == {"p_stated": between, "floor": 0.9}
    assert render_reason(d.reasons[2]) == (
        f"P(stated)={between:.3f} is below the policy's floor 0.900: not a stated fact"
    )
    # without the floor the same scores store it as stated; above the floor it is stated, and
    # the reason gives the threshold it passed
    plain = decide(CAND, LINKED, p_oi=0.0, p_stated=between, profile=profile, policy=Policy())
    assert plain.provenance is Provenance.STATED
    above = decide(CAND, LINKED, p_oi=0.0, p_stated=0.95, profile=profile, policy=strict)
    assert above.provenance is Provenance.STATED
    assert above.reasons[1].params == {"p_stated": 0.95, "threshold": 0.9}
    # a floor under the profile's threshold changes nothing; a claim under both gets no floor
    # reason (the profile's score already said not stated)
    low = Policy(stated_min=profile.stated_threshold / 2)
    assert decide(CAND, LINKED, p_oi=0.0, p_stated=between, profile=profile, policy=low) == plain
    under = decide(CAND, LINKED, p_oi=0.0, p_stated=0.1, profile=profile, policy=strict)
    assert ReasonCode.BELOW_STATED_FLOOR not in _codes(under.reasons)


def test_a_floor_never_makes_a_decision_less_cautious(profile: CalibrationProfile) -> None:
    """The floor acts only where the scores would store a stated fact: a restatement with a
    glued-on name stays generated, whatever the floor (it must not become a hypothesis)."""
    glued = LINKED.model_copy(update={"unsaid_names": ("Leeds",)})
    cand = Candidate(id="c1", text="Went rock climbing last weekend in Leeds")
    between = (profile.stated_threshold + 0.9) / 2
    for policy in (Policy(), Policy(stated_min=0.9), Policy(stated_min=1.0)):
        d = decide(cand, glued, p_oi=0.0, p_stated=between, profile=profile, policy=policy)
        assert d.provenance is Provenance.GENERATED
        assert ReasonCode.GLUED_DETAIL in _codes(d.reasons)
        assert ReasonCode.BELOW_STATED_FLOOR not in _codes(d.reasons)


@pytest.mark.parametrize("bad", [-0.1, 1.5])
def test_a_floor_outside_zero_to_one_is_refused(bad: float) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Policy(stated_min=bad)


def test_uncalibrated_audit_only_downgrades_and_a_failed_audit_fails_closed(
    profile: CalibrationProfile,
) -> None:
    says_fabricated = AuditVerdict(candidate_id="c1", label=Label.FABRICATED, confidence=0.9)
    d = decide(
        CAND, LINKED, p_oi=0.0, p_stated=1.0, profile=profile, policy=Policy(),
        verdict=says_fabricated, calibrated=False, writer_model="mock/w",
    )  # fmt: skip
    assert d.provenance is Provenance.GENERATED
    assert reason(ReasonCode.UNCALIBRATED_WRITER, writer_model="mock/w") in d.reasons
    assert reason(ReasonCode.SELF_AUDIT_DOWNGRADE, label="FABRICATED") in d.reasons
    failed = decide(
        CAND, LINKED, p_oi=0.0, p_stated=1.0, profile=profile,
        policy=Policy(generated_action=Action.BLOCK), audit_error=LLMTimeoutError("slow"),
    )  # fmt: skip
    assert (failed.provenance, failed.action) == (Provenance.INFERRED, Action.QUARANTINE)
    assert failed.calibrated is False
    assert reason(ReasonCode.SELF_AUDIT_FAILED, error="LLMTimeoutError") in failed.reasons


def test_decide_is_pure(profile: CalibrationProfile) -> None:
    args = {"p_oi": 0.2, "p_stated": 0.3, "profile": profile, "policy": Policy()}
    first = decide(CAND, LINKED, **args)  # type: ignore[arg-type]
    assert decide(CAND, LINKED, **args) == first  # type: ignore[arg-type]


def test_every_code_renders_and_has_a_description() -> None:
    for code in ReasonCode:
        assert describe_reason_code(code)
        assert render_reason(Reason(code=code)), code  # missing params fall back to the code


def test_rendering_keeps_the_words_of_the_guard() -> None:
    assert render_reason(reason(ReasonCode.OVER_INFERENCE_SCORE, p_oi=0.8512, threshold=0.6)) == (
        "P(over-inference)=0.851 >= 0.600"
    )
    assert render_reason(reason(ReasonCode.UNCALIBRATED_WRITER, writer_model="m/x")) == (
        "no self-audit profile for model 'm/x' (the writer, or the independent auditor): "
        "evidence-only scoring (uncalibrated for this model)"
    )
    assert render_reason(Reason(code=ReasonCode.STATED_SCORE)) == "stated_score()"


def test_a_reason_round_trips_as_code_and_params_with_its_text_alongside() -> None:
    r = reason(ReasonCode.LINKED_NOT_RESTATEMENT, turn_id="u2")
    wire = json.loads(r.model_dump_json())
    assert wire == {
        "code": "linked_not_restatement",
        "params": {"turn_id": "u2"},
        "text": "linked to u2 but not a restatement",
    }
    assert Reason.model_validate(wire) == r
    assert r.as_stored() == {"code": "linked_not_restatement", "params": {"turn_id": "u2"}}
    words = reason(ReasonCode.UNSUPPORTED_SPECIFICS, words=["Boston", "two"])
    assert Reason.model_validate_json(words.model_dump_json()).params["words"] == ["Boston", "two"]
