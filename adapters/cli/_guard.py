"""``mirage guard eval``: the guard's real decisions scored against labelled claims."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.calibration import run_eval

app = typer.Typer(help="Tag and evaluate with the guard.", no_args_is_help=True)
console = Console()


@app.command("eval")
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
