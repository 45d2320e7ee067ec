"""--samples N: N Task outputs per unit, each its own call, judged and audited on its own; the
report gives each sample's OI, their mean and a t-interval."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._config import Stage
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import JudgeRecord, SelfAuditRecord, TaskRecord
from mirage_guard.benchmark._report import write_report
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun, unit_count
from mirage_guard.guard.llm import Message
from tests.benchmark.small_run import small_config
from tests.fakes.bench import SUBJECTS, CallLog, offline_rule
from tests.fakes.embedder import HashingEmbedder

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]
SUBJECT = SUBJECTS[0]


def test_single_sample_configs_keep_their_hash() -> None:
    one = small_config()
    before = one.model_dump(mode="json")
    # what a config was before --samples (and --stop, --claim-units)
    del before["samples"], before["task_stop"], before["claim_units"]
    blob = json.dumps(before, sort_keys=True).encode()
    assert one.config_hash() == hashlib.sha256(blob).hexdigest()[:16]
    assert one.config_hash() != small_config(samples=2).config_hash()
    assert one.config_hash() == small_config(samples=1).config_hash()


def test_mean_ci_by_hand() -> None:
    mean, lo, hi = m.mean_ci([40.0, 44.0, 42.0])
    assert mean == pytest.approx(42.0)
    # t(0.975, 2) = 4.3027; sd = 2; half = 4.3027 * 2 / sqrt(3)
    assert hi - mean == pytest.approx(4.3027 * 2 / 3**0.5, rel=1e-3)
    assert lo == pytest.approx(2 * mean - hi)


async def test_two_samples_are_two_calls_judged_and_audited_apart(
    tmp_path: Path, make_run: MakeRun
) -> None:
    answer = offline_rule(SUBJECT)
    task_calls: Counter[str] = Counter()

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        if schema is None:  # a Task call: each sample is asked for separately
            task_calls[messages[-1].content] += 1
        return answer(messages, schema)

    config = small_config(
        stages=["task", "self_audit", "judge"], models=[SUBJECT], guard="off", samples=2
    )
    run, _ = make_run(tmp_path / "run", config, rules={SUBJECT: rule})
    summary = await run.run()
    assert summary.errors == 0
    rd = RunDirectory(tmp_path / "run")
    tasks = rd.records(TaskRecord)
    assert len(tasks) == 3 * 2 * 2  # personas x tasks x samples
    assert Counter(t.sample for t in tasks) == {1: 6, 2: 6}
    assert set(task_calls.values()) == {2}  # the same request, asked twice (not a cache hit)
    judged = [r for r in rd.records(JudgeRecord) if r.task is not None]
    assert Counter(r.sample for r in judged) == {1: 6, 2: 6}
    assert Counter(r.sample for r in rd.records(SelfAuditRecord)) == {1: 6, 2: 6}
    assert len({c.claim_id for r in judged for c in r.claims}) == sum(len(r.claims) for r in judged)
    assert unit_count(config, 3)[Stage.TASK] == 12

    (row,) = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder())).models
    per_sample = [
        100 * m.oi_rate(c.label for r in judged if r.sample == k for c in r.claims) for k in (1, 2)
    ]
    assert row.oi_by_sample == pytest.approx(per_sample)
    mean, lo, hi = m.mean_ci(per_sample)
    assert row.oi_sample_mean == pytest.approx(mean)
    assert row.oi_sample_ci == pytest.approx((lo, hi), nan_ok=True)
    assert row.same_units == 12  # self-audit and judge joined per sample
    md = write_report(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder())).markdown
    assert "## Samples" in md.read_text()
