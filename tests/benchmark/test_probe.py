"""Probe: four-way labels from the model's own probe; probe error as benchmark/README.md defines."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from pydantic import BaseModel

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import JudgeRecord, JudgeTarget, ProbeRecord
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark._schemas import ProbeOutput
from mirage_guard.guard.llm import Message
from mirage_guard.prompts import load_prompt
from tests.benchmark.small_run import small_config
from tests.fakes.bench import SUBJECTS, CallLog, offline_rule
from tests.fakes.embedder import HashingEmbedder

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]
SUBJECT = SUBJECTS[0]


def test_probe_self_error_rate_by_hand() -> None:
    bases = ["stated"] * 6 + ["reasonable"] * 2 + ["stereotypical", "fabricated"]
    assert m.probe_self_error_rate(bases) == pytest.approx(0.2)
    assert math.isnan(m.probe_self_error_rate([]))
    assert math.isnan(m.probe_self_error_rate(["directly_stated", "inferred"]))  # legacy 2-way


def test_the_probe_prompt_asks_for_the_four_labels() -> None:
    text = load_prompt("bench_probe").render(facts="- I am a nurse.")
    for label in ("stated", "reasonable", "stereotypical", "fabricated"):
        assert f"`{label}`" in text


async def test_probe_error_is_the_models_own_s_and_f_share(
    tmp_path: Path, make_run: MakeRun
) -> None:
    answer = offline_rule(SUBJECT)

    def rule(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        if schema is ProbeOutput:
            items = [
                {"claim": "works as a nurse", "basis": "stated", "reason": "said so"},
                {"claim": "works shifts", "basis": "reasonable", "reason": "nurses do"},
                {"claim": "is caring", "basis": "stereotypical", "reason": "nurses are"},
                {"claim": "has a cat", "basis": "fabricated", "reason": "a guess"},
            ]
            return json.dumps({"items": items})
        return answer(messages, schema)

    config = small_config(stages=["probe", "task", "judge"], models=[SUBJECT], guard="off")
    run, _ = make_run(tmp_path / "run", config, rules={SUBJECT: rule})
    await run.run()
    rd = RunDirectory(tmp_path / "run")
    assert all(len(r.items) == 4 for r in rd.records(ProbeRecord))
    probe_judged = [r for r in rd.records(JudgeRecord) if r.target is JudgeTarget.PROBE]
    assert probe_judged
    (row,) = analyse(tmp_path / "run", matcher=SemanticMatcher(HashingEmbedder())).models
    assert row.probe_error == pytest.approx(50.0)  # 2 of 4 items, by the model's own labels
    judge_probe = m.probe_error_rate(c.label for r in probe_judged for c in r.claims)
    assert row.probe_judge_oi == pytest.approx(100 * judge_probe)
    assert row.probe_task_gap == pytest.approx(row.judge.oi - 50.0)
