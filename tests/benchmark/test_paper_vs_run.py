"""The report's 'Paper vs this run' table and the judge-vs-human figures inside the report."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from mirage_guard.benchmark._analysis import analyse
from mirage_guard.benchmark._judge_validation import HUMAN_LABELS_FILE, draw_sample, judge_labels
from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._paper import paper_numbers, paper_vs_run
from mirage_guard.benchmark._report import write_report
from mirage_guard.benchmark._runner import BenchmarkRun
from mirage_guard.benchmark.personas import Persona
from mirage_guard.guard import Label
from tests.benchmark.small_run import small_config
from tests.fakes.bench import CallLog
from tests.fakes.embedder import HashingEmbedder

MakeRun = Callable[..., tuple[BenchmarkRun, CallLog]]
MATCHER = SemanticMatcher(HashingEmbedder())


async def test_paper_vs_run_marks_a_mock_subset_not_comparable(
    tmp_path: Path, make_run: MakeRun, small_personas: list[Persona]
) -> None:
    config = small_config(stages=["task", "self_audit", "judge", "probe"], guard="off")
    run, _ = make_run(tmp_path / "run", config)
    await run.run()
    # a "human" who agrees with the judge except on one claim, saved where the report looks
    sample = draw_sample(tmp_path / "run", per_class=3, personas=small_personas)
    judged = judge_labels(tmp_path / "run")
    rows = []
    for i, item in enumerate(sample):
        label = judged[item.item_id]
        if i == 0:
            label = Label.FABRICATED if label is Label.INFERRED_STEREOTYPE else label
            label = Label.INFERRED_STEREOTYPE if label is judged[item.item_id] else label
        rows.append({**item.model_dump(mode="json"), "label": label.value})
    (tmp_path / "run" / HUMAN_LABELS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))

    analysis = analyse(tmp_path / "run", matcher=MATCHER)
    table = {r.figure: r for r in paper_vs_run(analysis)}
    macro = table["OI macro, %"]
    assert macro.paper == str(paper_numbers()["abstract"]["oi_macro_percent"])
    assert macro.run == f"{analysis.oi_macro:.1f}"
    assert not macro.comparable
    assert "offline mock" in macro.why_not
    assert "persona subset" in macro.why_not
    assert table["judge OI Qwen3-8B, %"].run == "not run"
    assert not any(r.comparable for r in table.values())
    # every published aggregate has a row
    for figure in (
        "Spearman ρ self vs judge (p)",
        "models with within-model AUROC > 0.75",
        "cross-model mean stereotype share, %",
        "per-model Δ range, points (models with Δ > 0)",
        "probe error range, %",
        "judge vs human κ 4-class / binary",
        "judge vs human FABRICATED recall",
        "judged claims (Task outputs)",
    ):
        assert figure in table
    assert analysis.judge_agreement is not None
    assert analysis.judge_agreement.n == len(rows)
    assert analysis.judge_agreement.disagreements == 1
    md = write_report(tmp_path / "run", matcher=MATCHER).markdown.read_text()
    assert "## Paper vs this run" in md
    assert "## Judge vs human" in md
    assert "## Self-audit vs judge on the same outputs" in md
    assert "## Not computed" in md
