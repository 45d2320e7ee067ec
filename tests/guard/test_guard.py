"""The Guard pipeline with fakes: input checks, provenance, policy, metrics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import anyio
import pytest

from mirage_guard.adapters._prometheus import GuardMetrics
from mirage_guard.guard import (
    Action,
    AuditMode,
    AuditVerdict,
    Candidate,
    Decision,
    Guard,
    Label,
    Policy,
    Provenance,
    QuoteCheck,
    ReasonCode,
    Role,
    SelfAuditor,
    Turn,
)
from mirage_guard.guard.errors import InputError
from tests.calibration.factories import make_profile
from tests.fakes.llm import labelling_llm
from tests.guard.paper import PAPER_TURNS, STATED, STEREOTYPE, UNSUPPORTED, WRITER_B

CANDS = [STATED, UNSUPPORTED, STEREOTYPE]


def test_restatement_is_stated_and_stored_with_its_user_turn(
    make_guard: Callable[..., Guard],
) -> None:
    stated, unsupported, stereotype = make_guard().tag(PAPER_TURNS, CANDS)
    assert (stated.provenance, stated.action, stated.source_turn_id) == (
        Provenance.STATED,
        Action.STORE,
        "u1",
    )
    assert stated.evidence_span == PAPER_TURNS[0].content
    assert stated.score is not None
    assert stated.score < 0.5
    assert stated.threshold == 0.5
    for d in (unsupported, stereotype):
        assert d.provenance is Provenance.GENERATED
        assert d.action is Action.QUARANTINE
        assert d.source_turn_id is None
        assert ReasonCode.OVER_INFERENCE_SCORE in {r.code for r in d.reasons}


def test_decisions_keep_candidate_order_and_identity(make_guard: Callable[..., Guard]) -> None:
    reordered = [STEREOTYPE, STATED, UNSUPPORTED]
    decisions = make_guard().tag(PAPER_TURNS, reordered)
    assert [d.candidate for d in decisions] == reordered


def test_linked_but_not_restated_is_inferred_hypothesis(
    make_guard: Callable[..., Guard],
) -> None:
    # shares "rock climbing" with u2 (linked) but most of its words are new (not a restatement)
    cand = Candidate(id="c", text="Owns rock climbing shoes and chalk")
    [d] = make_guard().tag(PAPER_TURNS, [cand])
    assert d.provenance is Provenance.INFERRED
    assert d.source_turn_id == "u2"
    assert d.action is Action.STORE_AS_HYPOTHESIS
    assert d.memory_metadata()["status"] == "hypothesis"


def test_policy_is_applied(make_guard: Callable[..., Guard]) -> None:
    policy = Policy(inferred_action=Action.QUARANTINE, generated_action=Action.BLOCK)
    cand = Candidate(id="c", text="Owns rock climbing shoes and chalk")
    decisions = make_guard(policy=policy).tag(PAPER_TURNS, [STATED, cand, UNSUPPORTED])
    assert [d.action for d in decisions] == [Action.STORE, Action.QUARANTINE, Action.BLOCK]


def test_assistant_turns_are_never_evidence(make_guard: Callable[..., Guard]) -> None:
    turns = [
        Turn(id="u1", role=Role.USER, content="Can you suggest a gift for my brother?"),
        Turn(id="a1", role=Role.ASSISTANT, content="Sure! As a nurse you work night shifts."),
    ]
    [d] = make_guard().tag(turns, [Candidate(id="c", text="As a nurse you work night shifts")])
    assert d.provenance is Provenance.GENERATED
    assert d.source_turn_id is None
    assert d.action is not Action.STORE


def test_no_user_turn_means_every_candidate_is_generated(
    make_guard: Callable[..., Guard],
) -> None:
    turns = [t for t in PAPER_TURNS if t.role is Role.ASSISTANT]
    decisions = make_guard().tag(turns, CANDS)
    assert all(d.provenance is Provenance.GENERATED for d in decisions)
    assert all(ReasonCode.NO_USER_TURN in {r.code for r in d.reasons} for d in decisions)


def test_empty_write_returns_nothing(make_guard: Callable[..., Guard]) -> None:
    assert make_guard().tag(PAPER_TURNS, []) == []


@pytest.mark.parametrize(
    ("turns", "cands", "message"),
    [
        ([*PAPER_TURNS, PAPER_TURNS[0]], CANDS, "duplicate turn id"),
        (PAPER_TURNS, [STATED, STATED], "duplicate candidate id"),
    ],
    ids=["turn", "candidate"],
)
def test_duplicate_ids_are_input_errors(
    make_guard: Callable[..., Guard], turns: list[Turn], cands: list[Candidate], message: str
) -> None:
    guard = make_guard()
    with pytest.raises(InputError, match=message):
        guard.tag(turns, cands)
    with pytest.raises(InputError, match=message):
        guard.link(turns, cands)


def test_closed_guard_refuses_writes(make_guard: Callable[..., Guard]) -> None:
    guard = make_guard()
    guard.close()
    with pytest.raises(InputError, match="closed"):
        guard.tag(PAPER_TURNS, CANDS)


async def test_async_and_sync_agree(make_guard: Callable[..., Guard]) -> None:
    guard = make_guard()
    decisions = await guard.atag(PAPER_TURNS, CANDS)
    assert [(d.provenance, d.source_turn_id) for d in decisions] == [
        (Provenance.STATED, "u1"),
        (Provenance.GENERATED, None),
        (Provenance.GENERATED, None),
    ]


def test_inline_audit_verdicts_skip_the_llm(make_guard: Callable[..., Guard]) -> None:
    llm = labelling_llm(Label.GROUNDED, model=WRITER_B)
    guard = make_guard(
        auditor=SelfAuditor(llm), audit_mode=AuditMode.SEPARATE, writer_model=WRITER_B
    )
    inline = [
        AuditVerdict(candidate_id=c.id, label=Label.FABRICATED, confidence=0.9) for c in CANDS
    ]
    decisions = guard.tag(PAPER_TURNS, CANDS, audit=inline)
    assert llm.calls == []
    # the guard checks each quote itself: no quote here, so quote_check says MISSING
    assert [d.audit for d in decisions] == [
        v.model_copy(update={"quote_check": QuoteCheck.MISSING}) for v in inline
    ]
    # uncalibrated: the writer's own OI label only makes the decision more cautious
    assert decisions[0].provenance is Provenance.GENERATED


def test_metrics_count_decisions_and_uncalibrated(make_guard: Callable[..., Guard]) -> None:
    metrics = GuardMetrics()
    guard = make_guard(
        auditor=SelfAuditor(labelling_llm(Label.GROUNDED, model=WRITER_B)),
        audit_mode=AuditMode.SEPARATE,
        writer_model=WRITER_B,
        metrics=metrics,
    )
    guard.tag(PAPER_TURNS, CANDS)
    reg = metrics.registry
    labels = {"model": WRITER_B, "provenance": "generated", "action": "quarantine"}
    assert reg.get_sample_value("mirage_guard_decisions_total", labels) == 2.0
    stored = {"model": WRITER_B, "provenance": "stated", "action": "store"}
    assert reg.get_sample_value("mirage_guard_decisions_total", stored) == 1.0
    assert (
        reg.get_sample_value("mirage_guard_uncalibrated_decisions_total", {"model": WRITER_B})
        == 3.0
    )
    for stage in ("linker", "audit", "score"):
        count = reg.get_sample_value("mirage_guard_stage_seconds_count", {"stage": stage})
        assert count == 1.0, stage


def test_metrics_count_every_reason_by_code_and_the_floors_holds(
    make_guard: Callable[..., Guard],
) -> None:
    """mirage_guard_decision_reasons_total{model, code}: one count per reason a decision gives,
    so an operator sees how many facts MIRAGE_STATED_MIN holds back (below_stated_floor)."""
    metrics = GuardMetrics()
    plain = make_guard(metrics=metrics)
    strict = make_guard(metrics=metrics, policy=Policy(stated_min=1.0))
    decisions = [*plain.tag(PAPER_TURNS, CANDS), *strict.tag(PAPER_TURNS, CANDS)]
    reg = metrics.registry
    given = Counter(r.code.value for d in decisions for r in d.reasons)
    assert given["below_stated_floor"] >= 1  # the strict guard held a scored restatement back
    for code in ReasonCode:
        value = reg.get_sample_value(
            "mirage_guard_decision_reasons_total", {"model": "none", "code": code.value}
        )
        assert (value or 0.0) == given[code.value], code
    assert given["scored_with_profile"] == len(decisions) == 6


def test_describe_names_profiles_and_policy(make_guard: Callable[..., Guard]) -> None:
    info = make_guard().describe()
    assert info["evidence_profile"] == make_profile().profile_id
    assert info["audit_mode"] == "off"
    assert info["audit_profile"] is None
    assert info["policy"] == {
        "inferred_action": "store_as_hypothesis",
        "generated_action": "quarantine",
        "stated_min": None,
    }
    strict = make_guard(policy=Policy(stated_min=0.9)).describe()
    assert strict["policy"]["stated_min"] == 0.9  # the floor an operator set is shown


async def test_concurrent_writes_match_sequential_ones(make_guard: Callable[..., Guard]) -> None:
    guard = make_guard()
    writes = [
        (
            [
                Turn(
                    id=f"w{i}-u1",
                    role=Role.USER,
                    content=f"I adopted a dog named Rex{i} in {city}.",
                )
            ],
            [
                Candidate(id=f"w{i}-a", text=f"Has a dog named Rex{i}"),
                Candidate(id=f"w{i}-b", text="Has three older brothers"),
            ],
        )
        for i, city in enumerate(["Oslo", "Lima", "Pune", "Kyiv", "Accra", "Hanoi"] * 3)
    ]
    expected = [guard.link(turns, cands) for turns, cands in writes]
    results: dict[int, list[Decision]] = {}

    async def one(i: int) -> None:
        turns, cands = writes[i]
        results[i] = await guard.atag(turns, cands)

    async with anyio.create_task_group() as tg:
        for i in range(len(writes)):
            tg.start_soon(one, i)
    for i, (turns, _) in enumerate(writes):
        decisions = results[i]
        assert [d.source_turn_id for d in decisions] == [turns[0].id, None]
        assert [d.similarity for d in decisions] == [
            round(link.similarity, 4) for link in expected[i]
        ]
