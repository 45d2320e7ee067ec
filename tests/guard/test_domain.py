"""Domain model invariants: provenance, actions, and what may be stored as a fact."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from mirage_guard.guard import (
    LABEL_TO_PROVENANCE,
    Action,
    AuditVerdict,
    Candidate,
    Decision,
    Label,
    MemoryStatus,
    Policy,
    Provenance,
    Role,
    Turn,
    has_text,
)

CAND = Candidate(id="c1", text="Works as an ICU nurse")


def decision(**overrides: Any) -> Decision:
    fields: dict[str, Any] = {
        "candidate": CAND,
        "provenance": Provenance.STATED,
        "action": Action.STORE,
        "source_turn_id": "u1",
        "similarity": 0.8,
        "evidence_span": "I work nights in the ICU.",
        "score": 0.05,
        "threshold": 0.5,
        "profile_id": "evidence-only",
        "calibrated": True,
    }
    fields.update(overrides)
    return Decision(**fields)


@pytest.mark.parametrize("provenance", [Provenance.STATED, Provenance.INFERRED])
@pytest.mark.parametrize("missing", [None, ""])
def test_stated_and_inferred_need_a_source_turn(
    provenance: Provenance, missing: str | None
) -> None:
    action = Action.STORE if provenance is Provenance.STATED else Action.STORE_AS_HYPOTHESIS
    with pytest.raises(ValidationError, match="source_turn_id"):
        decision(provenance=provenance, action=action, source_turn_id=missing)


def test_generated_needs_no_source_turn() -> None:
    d = decision(provenance=Provenance.GENERATED, action=Action.QUARANTINE, source_turn_id=None)
    assert d.source_turn_id is None
    assert d.status is MemoryStatus.QUARANTINED


@pytest.mark.parametrize(
    ("provenance", "action"),
    [
        (Provenance.INFERRED, Action.STORE),
        (Provenance.GENERATED, Action.STORE),
    ],
)
def test_only_stated_may_be_stored_as_a_fact(provenance: Provenance, action: Action) -> None:
    with pytest.raises(ValidationError, match="only stated"):
        decision(provenance=provenance, action=action)


@pytest.mark.parametrize("action", [Action.STORE_AS_HYPOTHESIS, Action.QUARANTINE, Action.BLOCK])
def test_stated_is_always_stored(action: Action) -> None:
    with pytest.raises(ValidationError, match="stated decision must have action=store"):
        decision(provenance=Provenance.STATED, action=action)


def test_decision_is_frozen() -> None:
    d = decision()
    with pytest.raises(ValidationError):
        d.action = Action.QUARANTINE  # type: ignore[misc]


def test_label_to_provenance_mapping_is_total_and_exact() -> None:
    assert set(LABEL_TO_PROVENANCE) == set(Label)
    assert Label.GROUNDED.provenance is Provenance.STATED
    assert Label.INFERRED_REASONABLE.provenance is Provenance.INFERRED
    assert Label.INFERRED_STEREOTYPE.provenance is Provenance.GENERATED
    assert Label.FABRICATED.provenance is Provenance.GENERATED


def test_over_inference_is_stereotype_or_fabrication() -> None:
    assert {lbl for lbl in Label if lbl.is_over_inference} == {
        Label.INFERRED_STEREOTYPE,
        Label.FABRICATED,
    }
    # the OI classes are exactly those that map to `generated`
    assert {lbl for lbl in Label if lbl.provenance is Provenance.GENERATED} == {
        lbl for lbl in Label if lbl.is_over_inference
    }


def test_memory_metadata_of_a_stated_fact() -> None:
    d = decision(score=0.123456789)
    assert d.memory_metadata() == {
        "provenance": "stated",
        "source_turn_id": "u1",
        "guard_score": 0.1235,
        "profile_id": "evidence-only",
        "status": "fact",
    }


def test_memory_metadata_of_hypothesis_and_blocked() -> None:
    hyp = decision(provenance=Provenance.INFERRED, action=Action.STORE_AS_HYPOTHESIS)
    assert hyp.memory_metadata()["status"] == "hypothesis"
    assert hyp.memory_metadata()["provenance"] == "inferred"
    blocked = decision(
        provenance=Provenance.GENERATED, action=Action.BLOCK, source_turn_id=None, score=None
    )
    meta = blocked.memory_metadata()
    assert meta["status"] is None
    assert meta["guard_score"] is None
    assert meta["source_turn_id"] is None


def test_turns_and_candidates_reject_unknown_fields_and_blank_text() -> None:
    with pytest.raises(ValidationError):
        Turn(id="u1", role=Role.USER, content="hi", speaker="me")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        Candidate(text="   ")
    with pytest.raises(ValidationError):
        Turn(id="  ", role=Role.USER, content="hi")


def test_ids_are_generated_and_unique() -> None:
    assert Turn(role=Role.USER, content="a").id != Turn(role=Role.USER, content="a").id
    assert Candidate(text="x").id != Candidate(text="x").id


@pytest.mark.parametrize("confidence", [-0.01, 1.01])
def test_audit_verdict_confidence_is_a_probability(confidence: float) -> None:
    with pytest.raises(ValidationError):
        AuditVerdict(candidate_id="c1", label=Label.GROUNDED, confidence=confidence)


def test_policy_defaults_and_options() -> None:
    default = Policy()
    assert default.action_for(Provenance.STATED) is Action.STORE
    assert default.action_for(Provenance.INFERRED) is Action.STORE_AS_HYPOTHESIS
    assert default.action_for(Provenance.GENERATED) is Action.QUARANTINE
    strict = Policy(inferred_action=Action.QUARANTINE, generated_action=Action.BLOCK)
    assert strict.action_for(Provenance.INFERRED) is Action.QUARANTINE
    assert strict.action_for(Provenance.GENERATED) is Action.BLOCK


@pytest.mark.parametrize(
    "kwargs",
    [
        {"inferred_action": Action.STORE},
        {"inferred_action": Action.BLOCK},
        {"generated_action": Action.STORE},
        {"generated_action": Action.STORE_AS_HYPOTHESIS},
    ],
)
def test_policy_never_stores_unstated_as_fact(kwargs: dict[str, Action]) -> None:
    with pytest.raises(ValidationError):
        Policy(**kwargs)


def test_markdown_table_escapes_pipes_and_aligns() -> None:
    from mirage_guard.guard import markdown_table

    assert markdown_table(["a", "b"], [["x|y", "1"]], align_right=True) == [
        "| a | b |",
        "|---:|---:|",
        "| x\\|y | 1 |",
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Likes tea", True),
        ("Zoë", True),  # letters of any script
        ("東京に住んでいる", True),
        ("42", True),
        ("x", True),
        ("", False),
        ("   \n\t", False),
        ("\u200b\u200b", False),  # zero-width spaces: `str.strip` keeps them
        ("\ufeff", False),  # a byte-order mark
        ("\u2060\u00a0", False),  # a word joiner, a no-break space
        ("...", False),
        ("!!! ?", False),
        ("🎉", False),
    ],
)
def test_has_text_is_a_letter_or_digit_of_any_script(text: str, says: bool) -> None:
    assert has_text(text) is says
    if not says:
        with pytest.raises(ValidationError, match=r"no letter or digit|at least 1 character"):
            Candidate(text=text)
