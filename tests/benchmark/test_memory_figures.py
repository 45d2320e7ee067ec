"""Accum as the paper fits it and the guard's effect on memory, on hand-built records."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._memory_figures import (
    accum_rows,
    memory_guard_rows,
    task_guard_rows,
)
from mirage_guard.benchmark._records import (
    AccumRoundRecord,
    GuardClaimDecision,
    GuardTagRecord,
    JudgeClaimRecord,
    JudgeRecord,
    JudgeTarget,
    RetentionPolicy,
    SelfAuditRecord,
    StoredMemoryItem,
)
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import SelfAuditClaim
from mirage_guard.benchmark._tasks import Task
from mirage_guard.benchmark.personas import Persona, PersonaGroup
from mirage_guard.guard import Action, Label, Provenance
from tests.benchmark.small_run import FAST, small_config
from tests.fakes.bench import CallLog, real_guard, recording_provider

# -- a table embedder: each text is one of a few topics -------------------------------------

TOPICS = {
    "home": np.array([1.0, 0.0, 0.0]),
    "home-other": np.array([0.6, 0.8, 0.0]),  # same topic, other content: cosine 0.6
    "hobby": np.array([0.0, 0.0, 1.0]),
}


class TableEmbedder:
    """Texts map to fixed unit vectors by their first word (``home: ...``)."""

    name = "test/table"
    dimension = 3

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([TOPICS[t.split(":")[0]] for t in texts]).astype(np.float32)


MATCHER = SemanticMatcher(TableEmbedder(), threshold=0.75)


def _entry(text: str, basis: str = "inferred") -> StoredMemoryItem:
    return StoredMemoryItem(text=text, basis=basis)  # type: ignore[arg-type]


def _round(
    persona: str, n: int, memory: list[StoredMemoryItem], **extra: object
) -> AccumRoundRecord:
    return AccumRoundRecord(
        unit=f"accum|m|{persona}|retain|noguard|r{n}",
        model="m",
        persona_id=persona,
        group=PersonaGroup.NEUTRAL,
        policy=RetentionPolicy.RETAIN,
        guarded=False,
        round=n,
        user_turn_id=f"{persona}-r{n}",
        user_message="...",
        memory=memory,
        **extra,  # type: ignore[arg-type]
    )


# -- Accum ----------------------------------------------------------------------------------


def test_pooled_fit_is_one_regression_over_all_points_not_a_mean_of_r2() -> None:
    a = [1.0, 3.0, 5.0, 7.0]  # perfectly linear
    b = [4.0, 4.0, 9.0, 9.0]  # a step, far from the first curve
    fit = m.pooled_accumulation([a, b])
    x = np.array([1, 2, 3, 4, 1, 2, 3, 4], dtype=float)
    y = np.array(a + b)
    slope, intercept = np.polyfit(x, y, 1)
    r2 = 1 - ((y - (slope * x + intercept)) ** 2).sum() / ((y - y.mean()) ** 2).sum()
    assert fit.slope == pytest.approx(slope)
    assert fit.r2 == pytest.approx(r2)
    assert fit.acc == pytest.approx(np.mean([(7 - 1) / 3, (9 - 4) / 3]))
    per_curve = np.mean([m.accumulation(a).r2, m.accumulation(b).r2])
    assert abs(fit.r2 - per_curve) > 0.1  # the old mean-of-R² is another number


def test_a_reworded_entry_is_not_a_removal_but_a_topic_change_is() -> None:
    memories = [["home: lives alone"], ["home: lives on their own"], ["hobby: hikes"]]
    assert m.removal_rate(memories) == 1.0  # exact strings: every rewording is a removal
    assert m.removal_rate_matched(memories, MATCHER.held) == pytest.approx(0.5)


def test_accum_rows_inferred_curve_and_reveal_revision() -> None:
    chain = [
        _round("p1", 1, [_entry("hobby: likes hiking", "stated")]),
        _round("p1", 2, [_entry("hobby: likes hiking", "stated"), _entry("home: lives alone")]),
        # a later revealed fact about the home, at odds with the inference: it is dropped
        _round(
            "p1",
            3,
            [_entry("hobby: likes hiking", "stated"), _entry("home-other: lives with parents")],
            revealed=["home-other: My living situation: I live with my parents."],
        ),
    ]
    other = [
        _round("p2", 1, [_entry("hobby: a")]),
        _round("p2", 2, [_entry("hobby: a"), _entry("home: b")]),
        _round("p2", 3, [_entry("hobby: a"), _entry("home: b"), _entry("home-other: c")]),
    ]
    (row,) = accum_rows([*chain, *other], MATCHER)
    assert row.personas == 2
    assert row.sizes == [1.0, 2.0, 2.5]
    assert row.inferred_sizes == [0.5, 1.5, 2.0]
    pooled = m.pooled_accumulation([[1, 2, 2], [1, 2, 3]])
    assert row.r2 == pytest.approx(pooled.r2)
    inferred = m.pooled_accumulation([[0, 1, 1], [1, 2, 3]])
    assert row.inferred_slope == pytest.approx(inferred.slope)
    assert row.inferred_r2 == pytest.approx(inferred.r2)
    # p1 round 3: "home: lives alone" is at odds with the revealed home fact (cosine 0.6) and
    # gone; p2 revealed nothing
    assert (row.reveal_conflicts, row.reveal_revision_rate) == (1, 100.0)
    assert "test/table" in row.matching


def test_explicit_correction_revision_by_semantic_match() -> None:
    chain = [
        _round("p1", 1, [_entry("home: lives alone")]),
        # the model keeps the corrected belief, reworded: not a revision
        _round("p1", 2, [_entry("home: lives by themselves")], contradicted="home: lives alone"),
    ]
    (row,) = accum_rows(chain, MATCHER)
    assert row.revision_rate == 0.0
    (exact,) = accum_rows(chain, SemanticMatcher(TableEmbedder(), threshold=1.01))
    assert exact.revision_rate == 100.0  # what exact matching would have claimed


def test_a_corrected_entry_that_comes_back_later_is_not_revised() -> None:
    """The README's definition: no *later* entry matches. Only the correction round's memory
    was read, so an entry dropped there and stored again two rounds later counted as revised
    (a release engineer's run showed 100 % where it was 50 %)."""
    back = [
        _round("p1", 1, [_entry("home: lives alone")]),
        _round("p1", 2, [_entry("hobby: hikes")], contradicted="home: lives alone"),
        _round("p1", 3, [_entry("hobby: hikes")]),
        _round("p1", 4, [_entry("hobby: hikes"), _entry("home: lives by themselves")]),
    ]
    gone = [
        _round("p2", 1, [_entry("home: lives alone")]),
        _round("p2", 2, [_entry("hobby: hikes")], contradicted="home: lives alone"),
        _round("p2", 3, [_entry("hobby: hikes")]),
        _round("p2", 4, [_entry("hobby: hikes")]),
    ]
    (row,) = accum_rows([*back, *gone], MATCHER)
    assert row.revision_rate == 50.0


# -- the guard on task claims ----------------------------------------------------------------

LABELS = [Label.GROUNDED, Label.INFERRED_REASONABLE, Label.INFERRED_STEREOTYPE, Label.FABRICATED]
ACTIONS = [Action.STORE, Action.STORE_AS_HYPOTHESIS, Action.STORE_AS_HYPOTHESIS, Action.QUARANTINE]
TEXTS = ["home: a", "hobby: b", "home-other: c", "hobby: d"]


def _task_records() -> tuple[GuardTagRecord, JudgeRecord, SelfAuditRecord]:
    base = {"model": "m", "persona_id": "p1", "group": PersonaGroup.NEUTRAL, "task": Task.GIFT}
    claims = [
        JudgeClaimRecord(claim_id=f"c{i}", text=t, label=lab)
        for i, (t, lab) in enumerate(zip(TEXTS, LABELS, strict=True))
    ]
    judged = JudgeRecord(unit="judge|x", judge="j", target=JudgeTarget.TASK, claims=claims, **base)
    tag = GuardTagRecord(
        unit="guard|x",
        decisions=[
            GuardClaimDecision(
                claim_id=c.claim_id,
                judge_label=c.label,
                provenance=Provenance.STATED if a is Action.STORE else Provenance.INFERRED,
                action=a,
                source_turn_id="t1",
                score=0.5,
            )
            for c, a in zip(claims, ACTIONS, strict=True)
        ],
        **base,
    )
    # the model's own audit: calls the home claim fabricated, the stereotype reasonable; it does
    # not mention the last claim ("hobby" matches the hobby claim b best)
    audit = SelfAuditRecord(
        unit="self_audit|x",
        claims=[
            SelfAuditClaim(text="home: a", label=Label.FABRICATED),
            SelfAuditClaim(text="home-other: c", label=Label.INFERRED_REASONABLE),
        ],
        **base,
    )
    return tag, judged, audit


def test_task_pollution_for_facts_facts_plus_hypotheses_and_self_audit_filter() -> None:
    tag, judged, audit = _task_records()
    (row,) = task_guard_rows([tag], [judged], [audit], MATCHER)
    assert row.pollution_without == 50.0  # 2 of 4 claims are S or F
    assert row.pollution_with == 0.0  # facts: the grounded claim only
    assert row.facts_with == 1
    # facts + hypotheses: grounded, reasonable, stereotype -> 1 of 3 is OI
    assert row.pollution_with_hypotheses == pytest.approx(100 / 3)
    assert row.stored_with_hypotheses == 3
    # self-audit filter drops the grounded claim (self-labelled F) and keeps the rest
    assert row.stored_self_audit == 3
    assert row.pollution_self_audit == pytest.approx(200 / 3)
    assert row.grounded_retention_self_audit == 0.0
    assert row.grounded_retention_with == 100.0
    assert row.self_audit_matched == 50.0  # a and c matched; b and d not


def test_memory_pollution_counts_hypotheses_when_judged() -> None:
    def judged(guarded: bool, scope: str, labels: list[Label]) -> JudgeRecord:
        return JudgeRecord(
            unit=f"judge|{guarded}|{scope}",
            model="m",
            persona_id="p1",
            group=PersonaGroup.NEUTRAL,
            judge="j",
            target=JudgeTarget.MEMORY,
            policy=RetentionPolicy.RETAIN,
            guarded=guarded,
            memory_scope=scope,  # type: ignore[arg-type]
            evidence_turn_ids=["t1", "t2", "t3"],
            claims=[
                JudgeClaimRecord(claim_id=f"c{i}", text="x", label=lab, source_turn_id="t1")
                for i, lab in enumerate(labels)
            ],
        )

    records = [
        judged(False, "facts", [Label.GROUNDED, Label.FABRICATED, Label.FABRICATED]),
        judged(True, "facts", [Label.GROUNDED]),
        judged(True, "facts+hypotheses", [Label.GROUNDED, Label.FABRICATED]),
    ]
    (row,) = memory_guard_rows(records)
    assert row.pollution_without == pytest.approx(200 / 3)
    assert row.pollution_with == 0.0
    assert row.pollution_with_hypotheses == 50.0
    assert row.stored_with_hypotheses == 2


async def test_guarded_accum_judges_facts_and_facts_plus_hypotheses(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    """A guard that keeps everything as a hypothesis: the memory is judged twice when guarded."""

    class Hypothesising:
        def __init__(self) -> None:
            self.inner = real_guard()

        async def atag(self, turns, candidates, *, writer_model=None):  # type: ignore[no-untyped-def]
            decisions = await self.inner.atag(turns, candidates, writer_model=writer_model)
            return [
                d.model_copy(
                    update={
                        "action": Action.STORE_AS_HYPOTHESIS,
                        "provenance": Provenance.INFERRED,
                        "source_turn_id": d.source_turn_id or turns[0].id,
                    }
                )
                for d in decisions
            ]

        def close(self) -> None:
            self.inner.close()

    config = small_config(
        stages=["accum", "judge"], models=["mock/subject-a"], limit=1, accum_rounds=2
    )
    run = BenchmarkRun(
        config,
        tmp_path / "run",
        provider=recording_provider(CallLog()),
        options=FAST,
        guard_factory=Hypothesising,
        personas=small_personas,
    )
    await run.run()
    memory = [r for r in RunDirectory(tmp_path / "run").records(JudgeRecord) if r.memory_scope]
    scopes = sorted((r.guarded, r.memory_scope) for r in memory)
    assert scopes == [
        (False, "facts"),
        (False, "facts"),
        (True, "facts"),
        (True, "facts"),
        (True, "facts+hypotheses"),
        (True, "facts+hypotheses"),
    ]
