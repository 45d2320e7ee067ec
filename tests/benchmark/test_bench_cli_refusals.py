"""`mirage bench` refuses bad input in one line `error: ...` (exit 1), leaves nothing behind, and
never loses hand-made labels: existing samples, duplicate models, bad flags, a persona-collapse
run where a MirageBench run is expected, damaged records, inconsistent label files.

The commands are invoked on the `bench` sub-app itself, so what is checked is its own handling,
not a catch-all of the root command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from mirage_guard.adapters.cli._bench import app as bench
from mirage_guard.benchmark._cache import DiskCache
from mirage_guard.benchmark._config import RunConfig
from mirage_guard.benchmark._judge_validation import judge_labels
from mirage_guard.benchmark._records import TaskRecord
from mirage_guard.benchmark._rundir import RunDirectory
from tests.benchmark.small_run import PERSONAS_FILE

RUNNER = CliRunner()
RUN_ARGS = [
    *("--judge", "mock/judge", "--personas-file", str(PERSONAS_FILE)),
    *("--tasks", "gift", "--stages", "task,judge", "--limit", "3", "--no-progress"),
]


def _one_error_line(result: Result) -> str:
    """The output, asserted to be exactly one line ``error: ...`` with exit status 1."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), result.exception  # no traceback
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: "), result.output
    return lines[0]


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("bench") / "run"
    result = RUNNER.invoke(
        bench, ["run", "--models", "mock/alpha", *RUN_ARGS, "--run-dir", str(run_dir)]
    )
    assert result.exit_code == 0, result.output
    return run_dir


@pytest.fixture(scope="module")
def collapse_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("collapse") / "run"
    args = [
        *("collapse", "run", "--models", "mock/a", "--judge", "mock/j"),
        *("--contexts", "grief", "--limit", "2", "--run-dir", str(run_dir)),
    ]
    result = RUNNER.invoke(bench, args)
    assert result.exit_code == 0, result.output
    return run_dir


# -- 1. a sample file holding labels is never overwritten by default --------------------------


def test_judge_sample_refuses_an_existing_sample_unless_overwrite(
    bench_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    labelled = '{"item_id": "item-1", "label": "GROUNDED"}\n'
    Path("judge_sample.jsonl").write_text(labelled, encoding="utf-8")  # the default --out
    args = ["judge-sample", str(bench_run), "--per-class", "5"]
    line = _one_error_line(RUNNER.invoke(bench, args))
    assert "judge_sample.jsonl exists (labels in it would be lost): pass --overwrite" in line
    assert Path("judge_sample.jsonl").read_text(encoding="utf-8") == labelled

    replaced = RUNNER.invoke(bench, [*args, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    rows = Path("judge_sample.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows
    assert all(json.loads(r)["label"] is None for r in rows)


def test_collapse_judge_sample_refuses_an_existing_sample_unless_overwrite(
    collapse_run: Path, tmp_path: Path
) -> None:
    rated = tmp_path / "rated.jsonl"
    rated.write_text('{"item_id": "a-1", "persona": "Healer"}\n', encoding="utf-8")
    args = ["collapse", "judge-sample", str(collapse_run), "--out", str(rated)]
    line = _one_error_line(RUNNER.invoke(bench, args))
    assert "rated.jsonl exists (labels in it would be lost): pass --overwrite" in line
    assert "Healer" in rated.read_text(encoding="utf-8")

    replaced = RUNNER.invoke(bench, [*args, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert "Healer" not in rated.read_text(encoding="utf-8")


def test_judge_sample_refuses_a_directory_as_out(bench_run: Path, tmp_path: Path) -> None:
    line = _one_error_line(
        RUNNER.invoke(bench, ["judge-sample", str(bench_run), "--out", str(tmp_path)])
    )
    assert "is a directory" in line


# -- 2. a model named twice would be ranked twice ----------------------------------------------


@pytest.mark.parametrize(
    "models", [["mock/writer-a,mock/writer-a"], ["mock/writer-a", "--models", " mock/writer-a"]]
)
def test_run_refuses_a_model_named_twice(tmp_path: Path, models: list[str]) -> None:
    run_dir = tmp_path / "run"
    line = _one_error_line(
        RUNNER.invoke(bench, ["run", "--models", *models, *RUN_ARGS, "--run-dir", str(run_dir)])
    )
    assert "'mock/writer-a' is named twice" in line
    assert _tree(tmp_path) == []
    with pytest.raises(ValueError, match="named twice"):
        RunConfig(models=["mock/x", "mock/x"], judge="mock/judge")


def test_a_persona_collapse_run_refuses_a_model_named_twice(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["collapse", "run", "--models", "mock/a,mock/a", "--judge", "mock/j"]
    line = _one_error_line(RUNNER.invoke(bench, [*args, "--run-dir", str(run_dir)]))
    assert "'mock/a' is named twice" in line
    assert _tree(tmp_path) == []


# -- 3. bad input: one line, nothing left behind ----------------------------------------------


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--personas", "nosuch"], "error: unknown persona ids or groups: nosuch"),
        (["--concurrency", "0"], "error: --concurrency: Input should be greater than"),
        (["--judge-concurrency", "0"], "error: --judge-concurrency: Input should be greater"),
        (["--mock-latency-ms", "-5"], "error: --mock-latency-ms: Input should be greater"),
    ],
)
def test_run_bad_input_is_one_line_and_leaves_nothing(
    tmp_path: Path, extra: list[str], message: str
) -> None:
    run_dir = tmp_path / "run"
    args = ["run", "--models", "mock/alpha", *RUN_ARGS, *extra, "--run-dir", str(run_dir)]
    line = _one_error_line(RUNNER.invoke(bench, args))
    assert line.startswith(message)
    assert _tree(tmp_path) == []


def test_run_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n", encoding="utf-8")
    args = ["run", "--models", "mock/alpha", *RUN_ARGS, "--run-dir", str(a_file)]
    line = _one_error_line(RUNNER.invoke(bench, args))
    assert line == f"error: {a_file} is a file, not a run directory"
    assert _tree(tmp_path) == ["notes.txt"]
    assert a_file.read_text(encoding="utf-8") == "mine\n"


# -- 4. a persona-collapse run given where a MirageBench run is expected -----------------------


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{run}"],
        ["judge-sample", "{run}", "--out", "{tmp}/sample.jsonl"],
        ["judge-agreement", "{tmp}/labels.jsonl", "--run-dir", "{run}"],
        ["run", "--models", "mock/alpha", *RUN_ARGS, "--run-dir", "{run}"],
    ],
    ids=["report", "judge-sample", "judge-agreement", "run"],
)
def test_a_persona_collapse_run_is_named_as_such(
    collapse_run: Path, tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "labels.jsonl").write_text('{"item_id": "a", "label": "GROUNDED"}\n')
    before = _tree(collapse_run), _tree(tmp_path)
    args = [a.format(run=collapse_run, tmp=tmp_path) for a in command]
    line = _one_error_line(RUNNER.invoke(bench, args))
    assert line == (
        f"error: {collapse_run} holds a persona-collapse run, not a MirageBench run "
        "(see mirage bench collapse --help)"
    )
    assert (_tree(collapse_run), _tree(tmp_path)) == before


def test_a_manifest_of_another_shape_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"config": {}}', encoding="utf-8")
    line = _one_error_line(RUNNER.invoke(bench, ["report", str(tmp_path)]))
    assert line.startswith(f"error: {tmp_path} is not a MirageBench run: manifest.json: ")


# -- 5. a damaged records line is named, a torn last line is not --------------------------------


def test_report_warns_about_a_corrupt_middle_line(bench_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(bench_run, run_dir, ignore=shutil.ignore_patterns("report"))
    tasks = run_dir / "records" / "task.jsonl"
    lines = tasks.read_text(encoding="utf-8").splitlines()
    assert len(lines) >= 3
    lines[1] = lines[1][:-40] + "#garbage"
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with (run_dir / "records" / "judge.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"unit":"torn')  # the torn last line a killed run leaves: not worth a word

    result = RUNNER.invoke(bench, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    warnings = [w for w in result.output.splitlines() if w.startswith("warning:")]
    assert warnings[0] == (
        f"warning: {run_dir / 'records' / 'task.jsonl'}:2: not a JSON record, "
        "left out of every figure"
    )
    assert warnings[1].startswith("warning: 1 unreadable records line(s) skipped")
    assert len(warnings) == 2
    analysis = json.loads((run_dir / "report" / "analysis.json").read_text(encoding="utf-8"))
    assert analysis["skipped_lines"] == ["records/task.jsonl:2: not a JSON record"]
    assert "records/task.jsonl:2" in (run_dir / "report" / "report.md").read_text()


def test_a_clean_run_and_a_torn_last_line_skip_silently(bench_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(bench_run, run_dir, ignore=shutil.ignore_patterns("report"))
    with (run_dir / "records" / "task.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"unit":"task|mock/alpha|st')
    rd = RunDirectory(run_dir)
    assert len(rd.records(TaskRecord)) == 3
    assert rd.skipped_lines == []


# -- 6. judge-agreement: labels out of the taxonomy, conflicting or unknown items -------------


@pytest.fixture
def labelled(bench_run: Path) -> list[dict[str, object]]:
    judged = judge_labels(bench_run)
    return [{"item_id": item, "label": label.value} for item, label in sorted(judged.items())]


def _agreement(run_dir: Path, path: Path, rows: list[dict[str, object]]) -> Result:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return RUNNER.invoke(bench, ["judge-agreement", str(path), "--run-dir", str(run_dir)])


def test_judge_agreement_refuses_a_label_outside_the_taxonomy(
    bench_run: Path, tmp_path: Path, labelled: list[dict[str, object]]
) -> None:
    rows = [*labelled, {**labelled[0], "label": "MAYBE"}]
    line = _one_error_line(_agreement(bench_run, tmp_path / "h.jsonl", rows))
    assert line.startswith(f"error: {tmp_path / 'h.jsonl'}:{len(rows)}: label: Input should be")


def test_judge_agreement_refuses_an_item_labelled_two_ways(
    bench_run: Path, tmp_path: Path, labelled: list[dict[str, object]]
) -> None:
    item = labelled[0]["item_id"]
    other = "FABRICATED" if labelled[0]["label"] != "FABRICATED" else "GROUNDED"
    rows = [*labelled, {"item_id": item, "label": other}]
    line = _one_error_line(_agreement(bench_run, tmp_path / "h.jsonl", rows))
    assert f"item {item!r} is labelled {other} here and {labelled[0]['label']} on line 1" in line
    same = _agreement(bench_run, tmp_path / "same.jsonl", [*labelled, labelled[0]])
    assert same.exit_code == 0, same.output  # the same label twice is one label


def test_judge_agreement_refuses_an_item_the_run_never_judged(
    bench_run: Path, tmp_path: Path, labelled: list[dict[str, object]]
) -> None:
    rows = [*labelled, {"item_id": "item-from-another-run", "label": "GROUNDED"}]
    line = _one_error_line(_agreement(bench_run, tmp_path / "h.jsonl", rows))
    assert "item 'item-from-another-run' of the labelled sample has no judge label" in line
    ok = _agreement(bench_run, tmp_path / "ok.jsonl", labelled)
    assert ok.exit_code == 0, ok.output
    assert f"judge vs human on {len(labelled)} claims" in ok.output


def test_collapse_run_dir_that_is_a_file_is_one_line(tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n", encoding="utf-8")
    args = [
        *("collapse", "run", "--models", "mock/a", "--judge", "mock/j"),
        *("--contexts", "grief", "--limit", "1", "--run-dir", str(a_file)),
    ]
    line = _one_error_line(RUNNER.invoke(bench, args))
    assert line == f"error: {a_file} is a file, not a run directory"
    assert _tree(tmp_path) == ["notes.txt"]


# -- a model's text holding U+2028 or U+0085 (JSON leaves them unescaped) is one line ---------


def test_a_record_with_unicode_line_separators_is_read_whole(
    bench_run: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    shutil.copytree(bench_run, run_dir, ignore=shutil.ignore_patterns("report"))
    tasks = run_dir / "records" / "task.jsonl"
    rows = [json.loads(line) for line in tasks.read_text(encoding="utf-8").split("\n") if line]
    rows[0]["output"] = "first\u2028second\x85third"
    tasks.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    rd = RunDirectory(run_dir)
    outputs = {r.unit: r.output for r in rd.records(TaskRecord)}
    assert len(outputs) == 3
    assert outputs[rows[0]["unit"]] == "first\u2028second\x85third"
    assert rd.skipped_lines == []


def test_a_cached_completion_with_unicode_line_separators_is_a_hit(tmp_path: Path) -> None:
    body = json.dumps({"text": "a\u2028b\x85c"}, ensure_ascii=False)
    cache = DiskCache(tmp_path)
    cache.put_json("k", body)
    cache.close()
    assert json.loads(DiskCache(tmp_path).get_json("k") or "null") == {"text": "a\u2028b\x85c"}


def test_judge_agreement_reads_a_claim_with_unicode_line_separators(
    bench_run: Path, tmp_path: Path, labelled: list[dict[str, object]]
) -> None:
    rows = [{**labelled[0], "claim": "likes\u2028tea\x85a lot"}, *labelled[1:]]
    path = tmp_path / "h.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    result = RUNNER.invoke(bench, ["judge-agreement", str(path), "--run-dir", str(bench_run)])
    assert result.exit_code == 0, result.output
    assert f"judge vs human on {len(labelled)} claims" in result.output
