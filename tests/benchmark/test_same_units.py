"""Self-audit vs judge OI over the same outputs; length vs OI on self-audit data."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import JudgeRecord, SelfAuditRecord, TaskRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import SelfAuditOutput
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard.llm import Message
from tests.benchmark.small_run import small_config
from tests.fakes.bench import SUBJECTS, CallLog, offline_rule
from tests.fakes.embedder import HashingEmbedder

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]
SUBJECT = SUBJECTS[0]


async def test_self_vs_judge_oi_over_the_same_outputs(
    tmp_path: Path, make_run: MakeRun, small_personas: list[Persona]
) -> None:
    answer = offline_rule(SUBJECT)

    # the first persona's facts appear in its prompts; the rule tells personas apart by them
    facts = " ".join(f.text for f in small_personas[0].revealed_facts)
    assert all(f.text not in facts for p in small_personas[1:3] for f in p.revealed_facts)

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        text = "".join(x.content for x in messages)
        if schema is SelfAuditOutput and small_personas[0].revealed_facts[0].text in text:
            return "not json"
        return answer(messages, schema)

    config = small_config(stages=["task", "self_audit", "judge"], models=[SUBJECT], guard="off")
    run, _ = make_run(tmp_path / "run", config, rules={SUBJECT: rule})
    await run.run()
    rd = RunDirectory(tmp_path / "run")
    audits = {(r.persona_id, r.task): r for r in rd.records(SelfAuditRecord) if r.ok}
    judged = [r for r in rd.records(JudgeRecord) if r.task is not None and r.ok]
    assert {p for p, _ in audits} == {p.persona_id for p in small_personas[1:3]}
    same = [r for r in judged if (r.persona_id, r.task) in audits]
    assert 0 < len(same) < len(judged)
    (row,) = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder())).models
    expected_self = m.oi_rate(c.label for r in same for c in audits[(r.persona_id, r.task)].claims)
    expected_judge = m.oi_rate(c.label for r in same for c in r.claims)
    assert row.same_units == len(same)
    assert row.self_oi == pytest.approx(100 * expected_self)
    assert row.judge_oi_same_units == pytest.approx(100 * expected_judge)
    assert row.gap == pytest.approx(100 * (expected_judge - expected_self))
    ratio = sum(len(r.claims) for r in same) / sum(
        len(audits[(r.persona_id, r.task)].claims) for r in same
    )
    assert row.judge_self_claim_ratio == pytest.approx(ratio)


async def test_length_vs_oi_on_self_audit_data(tmp_path: Path, make_run: MakeRun) -> None:
    config = small_config(stages=["task", "self_audit"], models=[SUBJECT], guard="off")
    run, _ = make_run(tmp_path / "run", config)
    await run.run()
    rd = RunDirectory(tmp_path / "run")
    words = {(r.persona_id, r.task): r.output_words for r in rd.records(TaskRecord)}
    pairs = [
        (float(words[(a.persona_id, a.task)]), 100 * m.oi_rate(c.label for c in a.claims))
        for a in rd.records(SelfAuditRecord)
        if a.claims
    ]
    analysis = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder()))
    expected = m.pearson([p[0] for p in pairs], [p[1] for p in pairs])
    assert analysis.length_vs_self_oi.n == len(pairs) > 2
    assert analysis.length_vs_self_oi.coefficient == pytest.approx(
        expected.coefficient, nan_ok=True
    )
    assert analysis.length_vs_oi.n == 0  # no judge stage: the judge-based r has no data
