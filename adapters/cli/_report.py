"""``mirage report pollution``: the memory-pollution report built from the decision log."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from sqlalchemy.exc import SQLAlchemyError

from mirage_guard.adapters._pollution_report import (
    load_decisions,
    mask_url,
    parse_when,
    regenerate_commands,
    summarize,
    write_report,
)
from mirage_guard.adapters._profile_drift import profile_drift
from mirage_guard.guard.errors import InputError, MirageError
from mirage_guard.guard.scoring import ProfileStore
from mirage_guard.guard.settings import GuardSettings

app = typer.Typer(help="Reports built from the decision log.", no_args_is_help=True)


@app.command("pollution")
def report_pollution(
    database_url: Annotated[
        str | None,
        typer.Option(
            help="decision log URL (default: MIRAGE_DATABASE_URL, else decisions.db in "
            "MIRAGE_DATA_DIR)"
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option(help="HTML file to write; the .md and .json go next to it")
    ] = Path("pollution.html"),
    since: Annotated[
        str | None,
        typer.Option(help="from this ISO date/time (UTC if no offset) or span back: 24h, 7d"),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option(help="up to this ISO date/time (a bare date includes the whole day)"),
    ] = None,
    profile_dir: Annotated[
        Path | None,
        typer.Option(help="calibration profiles, for the drift lines (default MIRAGE_PROFILE_DIR)"),
    ] = None,
    drift_window: Annotated[
        int | None,
        typer.Option(min=10, help="scores per drift window (default MIRAGE_DRIFT_WINDOW)"),
    ] = None,
) -> None:
    """Memory-pollution report from the decision log: HTML page, Markdown and JSON, with one
    line per writer model on its calibration profile's drift ("profile for M is stale since")."""
    now = datetime.now(UTC)
    try:
        lo = parse_when(since, now) if since else None
        hi = parse_when(until, now, end_of_day=True) if until else None
        if lo is not None and hi is not None and lo > hi:
            raise InputError(f"--since ({lo.isoformat()}) is after --until ({hi.isoformat()})")
        settings = GuardSettings()
        url = database_url or settings.resolved_database_url()
        rows = load_decisions(url, lo, hi)
        summary = summarize(rows, since=lo, until=hi)
        profiles = ProfileStore(profile_dir or settings.profile_dir).all()
        drift = profile_drift(rows, profiles, window=drift_window or settings.drift_window)
        summary = summary.model_copy(update={"profile_drift": drift})
    except MirageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    except (SQLAlchemyError, ImportError) as exc:  # unreachable server, missing driver
        where = mask_url(database_url or GuardSettings().resolved_database_url())
        typer.echo(
            f"error: cannot read the decision log at {where}: {type(exc).__name__}", err=True
        )
        raise typer.Exit(code=2) from exc
    regen = regenerate_commands(
        database_url=database_url,
        out=out,
        since_arg=since,
        until_arg=until,
        since=lo,
        until=hi,
        last_decision_at=summary.last_decision_at,
    )
    files = write_report(summary, out, regen, mask_url(url))
    what = "no decisions in this window" if summary.is_empty else f"{summary.decisions} decisions"
    typer.echo(f"{what}: wrote {files.html}, {files.markdown}, {files.json}")
