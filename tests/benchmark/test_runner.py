"""Every stage end to end on a small subset with the offline provider; kill and resume."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from mirage_guard.benchmark import metrics
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._records import (
    AccumRoundRecord,
    GuardTagRecord,
    JudgeRecord,
    JudgeTarget,
    ProbeRecord,
    SelfAuditRecord,
    TaskRecord,
)
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import JudgeOutput
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard._domain import Action, Candidate, Decision, Label, Turn
from mirage_guard.guard.errors import ConfigError, LLMRateLimitError, LLMUnavailableError
from mirage_guard.guard.llm import Message
from tests.benchmark.small_run import FAST, small_config
from tests.fakes.bench import (
    JUDGE,
    SUBJECTS,
    CallLog,
    SimulatedKill,
    offline_rule,
    real_guard,
    recording_provider,
)

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]


def _unit_lines(run_dir: Path) -> Counter[str]:
    """How many lines each unit has across all record files."""
    counts: Counter[str] = Counter()
    for path in (run_dir / "records").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            try:
                counts[json.loads(line)["unit"]] += 1
            except json.JSONDecodeError:
                continue  # the torn line a kill leaves
    return counts


def _contains(exc: BaseException, kind: type[BaseException]) -> bool:
    if isinstance(exc, kind):
        return True
    return any(_contains(e, kind) for e in getattr(exc, "exceptions", ()))


async def test_every_stage_end_to_end(tmp_path: Path, make_run: MakeRun) -> None:
    run, log = make_run(tmp_path / "run")
    summary = await run.run()
    rd = RunDirectory(tmp_path / "run")
    personas = {p.persona_id: p for p in run.personas}
    assert sorted(p.group.value for p in run.personas) == ["counter", "neutral", "stereotypical"]

    tasks = rd.records(TaskRecord)
    audits = rd.records(SelfAuditRecord)
    probes = rd.records(ProbeRecord)
    judged = rd.records(JudgeRecord)
    rounds = rd.records(AccumRoundRecord)
    tags = rd.records(GuardTagRecord)
    # 2 models x 3 personas x 2 tasks; probe per (model, persona); accum 2 policies x 2 arms x 8
    assert (len(tasks), len(audits), len(probes), len(tags)) == (12, 12, 6, 12)
    assert len(rounds) == 2 * 1 * 2 * 2 * 8
    targets = Counter(r.target for r in judged)
    assert targets == {JudgeTarget.TASK: 12, JudgeTarget.PROBE: 6, JudgeTarget.MEMORY: 8}
    assert all(r.ok for r in [*tasks, *audits, *probes, *judged, *rounds, *tags])
    assert summary.errors == 0
    assert summary.units_done == sum(_unit_lines(tmp_path / "run").values())
    assert max(_unit_lines(tmp_path / "run").values()) == 1

    # judge: independent model, evidence = the 3 facts; grounded claims link to a fact
    for r in judged:
        assert r.judge == JUDGE
        assert r.model in SUBJECTS
        if r.target is not JudgeTarget.MEMORY:
            assert r.evidence_turn_ids == personas[r.persona_id].turn_ids
        for c in r.claims:
            if c.label is Label.GROUNDED:
                assert c.source_turn_id in r.evidence_turn_ids
    claim_ids = [c.claim_id for r in judged for c in r.claims]
    assert len(claim_ids) == len(set(claim_ids))
    assert {c.label for r in judged for c in r.claims} == set(Label)

    # guard arm on task claims: one decision per judged claim, stated ones stored
    by_prefix = {(r.model, r.persona_id, r.task): r for r in judged if r.target is JudgeTarget.TASK}
    for tag in tags:
        source = by_prefix[(tag.model, tag.persona_id, tag.task)]
        assert [d.claim_id for d in tag.decisions] == [c.claim_id for c in source.claims]
    actions = Counter(d.action for t in tags for d in t.decisions)
    assert actions[Action.STORE] > 0
    assert actions[Action.QUARANTINE] > 0

    # accum: 8 rounds per chain, reveals at 3 and 7, a correction at 5 that names a held entry
    chains: dict[tuple[str, str, bool], list[AccumRoundRecord]] = {}
    for r in rounds:
        chains.setdefault((r.model, r.policy.value, r.guarded), []).append(r)
    for chain in chains.values():
        chain.sort(key=lambda r: r.round)
        assert [r.round for r in chain] == list(range(1, 9))
        assert [bool(r.revealed) for r in chain] == [
            True,
            False,
            True,
            False,
            True,
            False,
            True,
            False,
        ]
        assert chain[4].contradicted in {e.text for e in chain[3].memory}
        assert chain[4].contradicted in chain[4].user_message
    unguarded = [r for r in rounds if not r.guarded]
    guarded = [r for r in rounds if r.guarded]
    assert all(not r.dropped_by_guard for r in unguarded)
    assert any(r.dropped_by_guard for r in guarded)
    assert all(e.provenance is not None for r in guarded for e in r.memory)

    # the calls: subjects generate at 0.7, the judge at 0, self-audit is the same conversation
    assert set(log.by_model) == {*SUBJECTS, JUDGE}
    a = next(r for r in audits if r.model == SUBJECTS[0])
    t = next(r for r in tasks if (r.model, r.persona_id, r.task) == (a.model, a.persona_id, a.task))
    assert a.claims
    assert t.output

    # metrics from the records agree with an independent recomputation
    analysis = analyse(tmp_path / "run")
    task_judged = [r for r in judged if r.target is JudgeTarget.TASK]
    per_model = {
        m: [c.label for r in task_judged if r.model == m for c in r.claims] for m in SUBJECTS
    }
    assert analysis.oi_micro == pytest.approx(100 * metrics.oi_micro(per_model))
    assert analysis.oi_macro == pytest.approx(
        50 * (metrics.oi_rate(per_model[SUBJECTS[0]]) + metrics.oi_rate(per_model[SUBJECTS[1]]))
    )
    row = analysis.models[0]
    assert row.judge.oi == pytest.approx(row.judge.stereotype + row.judge.fabricated)
    assert row.gap == pytest.approx(row.judge.oi - row.self_oi)
    assert sum(row.accuracy.values()) == pytest.approx(100.0)
    assert row.probe_task_gap == pytest.approx(row.judge.oi - row.probe_error)
    assert analysis.group_delta == pytest.approx(
        analysis.by_group["stereotypical"].oi - analysis.by_group["counter"].oi
    )
    assert {g.path for g in analysis.guard} >= {"task claims", "accum memory (retain)"}
    task_guard = next(g for g in analysis.guard if g.path == "task claims")
    assert task_guard.pollution_with < task_guard.pollution_without
    assert task_guard.facts_with < task_guard.facts_without
    assert len(analysis.accum) == 2 * 2 * 2
    assert all(len(a.sizes) == 8 for a in analysis.accum)
    acc = analysis.accounting
    assert acc.calls - acc.cached_calls == len(log.fingerprints)


async def test_kill_midway_and_resume_repeats_no_call(tmp_path: Path, make_run: MakeRun) -> None:
    full, full_log = make_run(tmp_path / "full")
    await full.run()
    total = len(full_log.fingerprints)
    assert len(set(full_log.fingerprints)) == total

    first, first_log = make_run(tmp_path / "run", kill_after=total // 2)
    with pytest.raises(BaseException) as killed:  # noqa: PT011 - a group wrapping the kill
        await first.run()
    assert _contains(killed.value, SimulatedKill)
    assert len(first_log.fingerprints) == total // 2
    # a kill can also tear the last line being written
    for path in (tmp_path / "run" / "records").glob("*.jsonl"):
        with path.open("a") as f:
            f.write('{"unit":"torn')

    second, second_log = make_run(tmp_path / "run")
    summary = await second.run()
    assert not set(first_log.fingerprints) & set(second_log.fingerprints)
    assert sorted(first_log.fingerprints + second_log.fingerprints) == sorted(full_log.fingerprints)
    assert summary.units_resumed > 0
    assert _unit_lines(tmp_path / "run") == _unit_lines(tmp_path / "full")
    assert RunDirectory(tmp_path / "run").read_manifest().resumed_at

    third, third_log = make_run(tmp_path / "run")
    await third.run()
    assert third_log.fingerprints == []


async def test_resume_refuses_another_configuration(tmp_path: Path, make_run: MakeRun) -> None:
    run, _ = make_run(tmp_path / "run", small_config(stages=["probe"]))
    await run.run()
    other, _ = make_run(tmp_path / "run", small_config(stages=["probe"], seed=7))
    with pytest.raises(ConfigError, match="another configuration"):
        await other.run()


def _judge_breaks_for(
    persona_id: str,
) -> Callable[[Sequence[Message], type[BaseModel] | None], str]:
    base = offline_rule(JUDGE)

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        if schema is JudgeOutput and f"[{persona_id}-t1]" in messages[-1].content:
            return '{"claims": [{"text": "x", "label": "MAYBE"}]}'
        return base(messages, schema)

    return rule


async def test_malformed_judge_output_is_a_final_error_record(
    tmp_path: Path, make_run: MakeRun, small_personas: list[Persona]
) -> None:
    config = small_config(stages=["task", "judge"], models=[SUBJECTS[0]], guard="off")
    victim = small_personas[0].persona_id
    run, _ = make_run(tmp_path / "run", config, rules={JUDGE: _judge_breaks_for(victim)})
    summary = await run.run()
    judged = RunDirectory(tmp_path / "run").records(JudgeRecord)
    broken = [r for r in judged if not r.ok]
    assert broken
    assert all(r.persona_id == victim for r in broken)
    assert all(
        r.error and r.error.type == "UnparsableOutputError" and not r.error.retryable
        for r in broken
    )
    assert summary.errors == len(broken)
    assert all(len(r.calls) == 1 for r in broken)  # the unparsable answer was still paid for
    assert analyse(tmp_path / "run").failed_units == len(broken)
    again, log = make_run(tmp_path / "run", config)
    await again.run()
    assert log.fingerprints == []  # a final error is not redone


async def test_rate_limits_are_retried_and_transient_failures_resumed(
    tmp_path: Path, make_run: MakeRun
) -> None:
    config = small_config(
        stages=["task"], models=[SUBJECTS[0]], limit=1, tasks=["gift"], guard="off"
    )
    answers = offline_rule(SUBJECTS[0])
    failures: list[str] = []

    def flaky(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        if len(failures) < 1:
            failures.append("429")
            raise LLMRateLimitError("slow down", model=SUBJECTS[0], retry_after=0.0)
        return answers(messages, schema)

    run, log = make_run(tmp_path / "a", config, rules={SUBJECTS[0]: flaky})
    await run.run()
    assert failures == ["429"]
    assert [r.ok for r in RunDirectory(tmp_path / "a").records(TaskRecord)] == [True]

    def down(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        raise LLMUnavailableError("502", model=SUBJECTS[0])

    run, _ = make_run(tmp_path / "b", config, rules={SUBJECTS[0]: down})
    await run.run()
    [failed] = RunDirectory(tmp_path / "b").records(TaskRecord)
    assert failed.error is not None
    assert failed.error.retryable
    resumed, log = make_run(tmp_path / "b", config)
    await resumed.run()
    [fixed] = RunDirectory(tmp_path / "b").records(TaskRecord)
    assert fixed.ok
    assert len(log.fingerprints) == 1
    assert fixed.output


class _CountingGuard:
    """The real guard, counting candidates it is asked to tag."""

    def __init__(self) -> None:
        self.inner = real_guard()
        self.tagged = 0

    def describe(self) -> dict[str, object]:
        return self.inner.describe()

    async def atag(
        self,
        turns: Sequence[Turn],
        candidates: Sequence[Candidate],
        *,
        writer_model: str | None = None,
    ) -> list[Decision]:
        self.tagged += len(candidates)
        return await self.inner.atag(turns, candidates, writer_model=writer_model)

    def close(self) -> None:
        self.inner.close()


async def test_a_rerun_on_the_same_cache_calls_neither_models_nor_the_guard(
    tmp_path: Path, small_personas: list[Persona]
) -> None:
    guards: list[_CountingGuard] = []

    def factory() -> _CountingGuard:
        guards.append(_CountingGuard())
        return guards[-1]

    logs = []
    for name in ("first", "again"):
        log = CallLog()
        run = BenchmarkRun(
            small_config(),
            tmp_path / name,
            provider=recording_provider(log),
            options=FAST,
            guard_factory=factory,
            personas=small_personas,
            cache_dir=tmp_path / "cache",
        )
        summary = await run.run()
        logs.append((log, summary))
    assert guards[0].tagged > 0
    assert guards[1].tagged == 0
    assert logs[0][0].fingerprints
    assert logs[1][0].fingerprints == []
    assert logs[1][1].accounting.cached_calls == logs[1][1].accounting.calls
    assert _unit_lines(tmp_path / "first") == _unit_lines(tmp_path / "again")
    first = RunDirectory(tmp_path / "first").records(GuardTagRecord)
    again = RunDirectory(tmp_path / "again").records(GuardTagRecord)
    assert sorted(r.model_dump_json(exclude={"calls"}) for r in first) == sorted(
        r.model_dump_json(exclude={"calls"}) for r in again
    )


def test_family_of_uses_declared_families_else_the_name() -> None:
    from mirage_guard.benchmark._analysis import family_of

    assert family_of("openai/gpt-4o-mini", {}) == "gpt"
    assert family_of("hosted_vllm/Qwen/Qwen3-8B", {}) == "qwen"
    assert family_of("x/my-model", {"x/my-model": "acme"}) == "acme"
