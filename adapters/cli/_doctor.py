"""``mirage doctor``: report (and with ``--repair`` fix) what a crash can leave behind.

Registered lazily on the root CLI (``_main.LAZY_SUBAPPS``). It opens the store and the decision
log from settings, like the sidecar: with the embedded stores, stop the sidecar first (embedded
Qdrant admits one process). Its exit status tells a finding from trouble (:class:`DoctorExit`):
a check it cannot run is its own one-line error with status 2, so the root group's handler,
which gives 1 to every command, never sees it.
"""

from __future__ import annotations

import json
from contextlib import closing
from enum import IntEnum
from typing import Annotated

import anyio
import typer
from rich.console import Console
from rich.table import Table
from sqlalchemy.exc import SQLAlchemyError

from mirage_guard.adapters._backend import MemoryBackend
from mirage_guard.adapters._decision_log import DecisionLog, sqlalchemy_url
from mirage_guard.adapters._doctor import DoctorReport, examine, repair
from mirage_guard.adapters._mem0 import Mem0Backend
from mirage_guard.adapters._pollution_report import mask_url, open_decision_log
from mirage_guard.adapters._remote import RemoteMem0Backend
from mirage_guard.adapters.cli._main import error_line, user_errors
from mirage_guard.guard.errors import ConfigError, MirageError
from mirage_guard.guard.settings import GuardSettings

app = typer.Typer(
    help="Check that the store is explained by the decision log.\n\n"
    "Orphans (stored memories without a decision row), pending write intents and decision rows "
    "whose memory is gone, per tenant.\n\n"
    "Exit status: 0 when there is no problem; 1 while any problem remains (after --repair: one "
    "it could not fix); 2 when it cannot check: no decision log where MIRAGE_DATABASE_URL or "
    "MIRAGE_DATA_DIR point (nothing is created), a log it cannot read, a store it cannot open "
    "or reach (one line error: ... on stderr), or a usage error."
)
console = Console()


class DoctorExit(IntEnum):
    """``mirage doctor``'s exit status. As for grep and diff, 2 is trouble, not a finding: a
    script can tell "problems remain" from "could not check"."""

    NO_PROBLEMS = 0
    PROBLEMS_REMAIN = 1
    CANNOT_CHECK = 2  # also click's status for a usage error (an unknown option, a bad value)


@app.callback(invoke_without_command=True)
def doctor(
    fix: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="reconcile pending write intents, delete orphan memories, record lost ones",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
    older_than: Annotated[
        float | None,
        typer.Option(
            "--older-than",
            help="seconds: repair only intents at least this old (default: 0 on SQLite, "
            "MIRAGE_IDEMPOTENCY_LEASE_S on a database live replicas share)",
        ),
    ] = None,
) -> None:
    """Orphans (stored memories without a decision row), pending write intents and decision
    rows whose memory is gone, per tenant; the exit status is a :class:`DoctorExit` (the help
    text, in ``app``, says which is which)."""
    try:
        report = _check(fix, older_than)
    except user_errors() as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(DoctorExit.CANNOT_CHECK.value) from exc
    if as_json:
        typer.echo(_json(report))
    else:
        _print(report, repaired=fix)
    status = DoctorExit.PROBLEMS_REMAIN if report.problems else DoctorExit.NO_PROBLEMS
    raise typer.Exit(status.value)


def _check(fix: bool, older_than: float | None) -> DoctorReport:
    """The report (or the repair) on the deployment the settings name; one of
    :func:`user_errors` when there is nothing to check against or it cannot be read."""
    settings = GuardSettings.from_env()
    url = settings.resolved_database_url()
    check_store_named(settings, log_opened=False)  # a shared log needs a shared store
    log = open_log(url)  # before the store: a mistyped data dir creates nothing
    try:
        return anyio.run(_run, settings, log, fix, older_than)
    except SQLAlchemyError as exc:  # the server went away, a table it cannot read
        raise unreadable(url, exc) from exc


def open_log(url: str) -> DecisionLog:
    """The deployment's decision log; a :class:`ConfigError` when there is none (a mistyped
    MIRAGE_DATA_DIR, or a directory that was never served from) or it cannot be opened."""
    try:
        return open_decision_log(url, where_set="MIRAGE_DATABASE_URL or MIRAGE_DATA_DIR")
    except MirageError:
        raise
    except (SQLAlchemyError, ImportError) as exc:  # not a database, unknown dialect, no driver
        raise unreadable(url, exc) from exc


def unreadable(url: str, exc: Exception) -> ConfigError:
    return ConfigError(f"cannot read the decision log at {mask_url(url)}: {type(exc).__name__}")


async def _run(
    settings: GuardSettings, log: DecisionLog, fix: bool, older_than: float | None
) -> DoctorReport:
    """The report (or the repair) on the store of ``settings``; ``log`` is closed at the end."""
    with closing(log):
        backend = store_of(settings)
        try:
            if not fix:
                return await examine(backend, log)
            if older_than is None:
                shared = log.engine.dialect.name != "sqlite"
                older_than = settings.idempotency_lease_s if shared else 0.0
            return await repair(backend, log, older_than_s=older_than)
        finally:
            await backend.aclose()


def store_of(settings: GuardSettings) -> MemoryBackend:
    """The store the settings name (the upstream Mem0 server, or Mem0 on pgvector or embedded),
    never a new one (:func:`check_store_named`)."""
    check_store_named(settings)
    if settings.upstream_url:
        return RemoteMem0Backend(settings.upstream_url)
    return Mem0Backend.from_settings(settings)


def check_store_named(settings: GuardSettings, *, log_opened: bool = True) -> None:
    """ConfigError when the settings name no existing store: the log is on a database replicas
    share and no shared store is named (MIRAGE_VECTOR_STORE_URL forgotten in a Job opened an
    empty embedded store, every memory read as gone, and ``--repair`` recorded them all as
    lost), or (once the log is opened: its errors come first) the embedded store was never
    created under MIRAGE_DATA_DIR. Opens nothing."""
    if settings.upstream_url or settings.vector_store_url:
        return
    log_url = settings.resolved_database_url()
    if sqlalchemy_url(log_url).get_backend_name() == "postgresql":
        raise ConfigError(
            f"the decision log is at {mask_url(log_url)}, which replicas share, but no shared "
            "store is named: set MIRAGE_VECTOR_STORE_URL (or MIRAGE_UPSTREAM_URL) as the "
            "sidecar has it"
        )
    if log_opened and not (settings.data_dir / "qdrant").is_dir():
        raise ConfigError(
            f"no embedded store under MIRAGE_DATA_DIR ({settings.data_dir}): nothing was "
            "created; point MIRAGE_DATA_DIR (or MIRAGE_VECTOR_STORE_URL) at the deployment's"
        )


def _json(report: DoctorReport) -> str:
    data = report.model_dump(mode="json")
    data["problems"] = report.problems
    for tenant, health in zip(data["tenants"], report.tenants, strict=True):
        tenant["problems"] = health.problems
    return json.dumps(data, indent=2)


def _print(report: DoctorReport, *, repaired: bool) -> None:
    table = Table(title="mirage doctor: store vs decision log")
    for col in ("tenant", "memories", "logged", "orphans", "pending intents", "gone"):
        table.add_column(col, justify="left" if col == "tenant" else "right")
    for h in report.tenants:
        table.add_row(
            h.tenant,
            str(h.memories),
            str(h.logged),
            _count(h.orphans),
            _count(h.pending_intents),
            _count(h.gone),
        )
    console.print(table)
    if report.foreign:
        console.print(
            f"{report.foreign} store item(s) carry no tenant (Mem0 wrote them, not the guard): "
            "left (`mirage adopt` takes them into a tenant)"
        )
    if repaired:
        done = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report.repaired.items())
        console.print(f"repaired: {done}")
    if report.undo_failed:
        console.print(f"[red]could not delete: {','.join(report.undo_failed)}[/red]")
    for h in report.tenants:
        for label, ids in (("orphan", h.orphans), ("pending intent", h.pending_intents),
                           ("gone", h.gone)):  # fmt: skip
            if ids:
                console.print(f"{h.tenant}: {label} ids: {', '.join(ids[:20])}"
                              + (" ..." if len(ids) > 20 else ""))  # fmt: skip
    verdict = "no problems" if not report.problems else f"{report.problems} problem(s) remain"
    hint = "" if not report.problems or repaired else " (run `mirage doctor --repair`)"
    console.print(f"{verdict}{hint}")


def _count(ids: list[str]) -> str:
    return f"[red]{len(ids)}[/red]" if ids else "0"
