"""The `mirage` command line: one root, one sub-app per domain idea."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.benchmark import bench_app, perf_harness
from mirage_guard.calibration._cli import app as calibrate_app
from mirage_guard.guard._pollution_report import report_pollution
from mirage_guard.guard.server.cli import perf_sidecar, serve

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

app = typer.Typer(
    help="mirage-guard: provenance guard for LLM memory writes, and the MirageBench benchmark.",
    no_args_is_help=True,
)
guard_app = typer.Typer(help="Tag and evaluate with the guard.", no_args_is_help=True)
perf_app = typer.Typer(help="Speed benchmarks that print figures.", no_args_is_help=True)
app.add_typer(guard_app, name="guard")
app.add_typer(perf_app, name="perf")
app.add_typer(calibrate_app, name="calibrate")
app.add_typer(bench_app, name="bench")
app.command("serve")(serve)
perf_app.command("sidecar")(perf_sidecar)
perf_app.command("harness")(perf_harness)
report_app = typer.Typer(help="Reports built from the decision log.", no_args_is_help=True)
app.add_typer(report_app, name="report")
report_app.command("pollution")(report_pollution)
console = Console()


@app.command()
def demo(
    data_dir: Annotated[
        Path | None, typer.Option(help="embedded store directory (default: a temp dir)")
    ] = None,
) -> None:
    """The guard on embedded defaults: no keys, no servers."""
    from mirage_guard.guard._demo import run_demo

    run_demo(console, data_dir)


@guard_app.command("eval")
def guard_eval(
    data: Annotated[
        Path | None, typer.Option(help="labelled claims JSONL (default: packaged claims)")
    ] = None,
    personas: Annotated[Path | None, typer.Option(help="personas JSONL for persona_id")] = None,
    split: Annotated[str | None, typer.Option(help="only this split, e.g. dev")] = None,
    profile_dir: Annotated[
        Path | None, typer.Option(help="directory with per-model profiles")
    ] = None,
    writer_model: Annotated[
        str | None, typer.Option(help="evaluate WITH this model's self-audit (needs keys)")
    ] = None,
    verdicts: Annotated[
        Path | None, typer.Option(help="self-audit verdicts JSONL instead of live calls")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """AUROC, binary kappa, provenance accuracy, per-class P/R and source-turn accuracy."""
    from mirage_guard.guard._evaluate import run_eval

    report = run_eval(
        data=data,
        personas=personas,
        split=split,
        profile_dir=profile_dir,
        writer_model=writer_model,
        verdicts=verdicts,
    )
    if as_json:
        console.print_json(json.dumps(report.model_dump(mode="json")))
        return
    table = Table(
        title=escape(f"guard eval on {report.data} (n={report.n}, profile {report.profile_id})")
    )
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("OI share (labels)", f"{report.oi_share:.3f}")
    table.add_row(
        "AUROC of OI score",
        f"{report.auroc:.3f} [{report.auroc_ci[0]:.3f}, {report.auroc_ci[1]:.3f}]",
    )
    table.add_row("binary kappa (generated vs not)", f"{report.kappa_binary:.3f}")
    table.add_row("3-way provenance accuracy", f"{report.provenance_accuracy:.3f}")
    for name, c in report.per_class.items():
        table.add_row(
            f"  {name}: precision / recall (n={c.support})", f"{c.precision:.3f} / {c.recall:.3f}"
        )
    table.add_row(
        f"source_turn_id accuracy (n={report.source_turn_n})", f"{report.source_turn_accuracy:.3f}"
    )
    table.add_row(
        f"  ... among claims the guard linked (n={report.source_turn_linked_n})",
        f"{report.source_turn_accuracy_when_linked:.3f}",
    )
    table.add_row("calibrated decisions", f"{report.calibrated_share:.3f}")
    console.print(table)


@perf_app.command("evidence")
def perf_evidence(
    n: Annotated[int, typer.Option(help="facts per run")] = 2000,
    runs: Annotated[int, typer.Option(help="runs; the median is reported")] = 5,
    batch: Annotated[int, typer.Option(help="facts per guarded write")] = 10,
) -> None:
    """Guard evidence-path facts/s vs raw encoder sentences/s on the same texts."""
    from mirage_guard.guard._perf import measure_evidence

    result = measure_evidence(n=n, runs=runs, batch=batch)
    table = Table(title=f"evidence path, {n} facts x {runs} runs (median), {batch} facts/write")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("raw encoder sentences/s", f"{result.encoder_per_s:,.1f}")
    table.add_row("guard facts/s (link + score + policy)", f"{result.guard_per_s:,.1f}")
    table.add_row("ratio guard / encoder", f"{result.ratio:.3f}")
    table.add_row("torch threads", str(result.threads))
    console.print(table)


def main() -> None:  # pragma: no cover - console entry
    app()
