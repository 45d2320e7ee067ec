"""``mirage adopt``: take the memories Mem0 stored before the guard into a tenant.

Registered lazily on the root CLI (``_main.LAZY_SUBAPPS``). It opens the store and the decision
log from settings, as ``mirage doctor`` does (with the embedded stores, stop the sidecar first).
An app built on ``GuardedMemory.from_config(...)`` with its own store calls
``memory.adopt()`` instead.
"""

from __future__ import annotations

import json
from contextlib import closing
from typing import Annotated

import anyio
import typer
from sqlalchemy.exc import SQLAlchemyError

from mirage_guard.adapters._adopt import AdoptAs, AdoptReport, adopt
from mirage_guard.adapters._decision_log import DecisionLog
from mirage_guard.adapters._scope import DEFAULT_TENANT
from mirage_guard.adapters.cli._doctor import check_store_named, store_of, unreadable
from mirage_guard.adapters.cli._main import error_line, user_errors
from mirage_guard.guard.errors import ConfigError
from mirage_guard.guard.settings import GuardSettings

app = typer.Typer(
    help="Take the memories Mem0 stored before the guard into a tenant.\n\n"
    "A store Mem0 wrote to before the guard holds memories without a tenant or status: guarded "
    "reads leave them out and delete_all leaves them in the store. Adopting one tags it with "
    "the tenant and a status and logs a decision for it. Never as a stated fact (nothing is "
    "left to check it against): a hypothesis (read with include_hypotheses) or quarantined.\n\n"
    "Exit status: 0 done (or nothing to adopt); 2 when it cannot run (a decision log or a "
    "store it cannot open)."
)


@app.callback(invoke_without_command=True)
def adopt_command(
    status: Annotated[
        AdoptAs,
        typer.Option("--as", help="what an adopted memory becomes (never a stated fact)"),
    ] = "hypothesis",
    tenant: Annotated[
        str, typer.Option(help="the tenant that owns them (the sidecar's API key's tenant)")
    ] = DEFAULT_TENANT,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="count what would be adopted; change nothing")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Tag every store item without a tenant with ``--tenant`` and ``--as``; items the guard
    wrote are never touched, and a second run adopts only what is still untagged."""
    try:
        report = _adopt(status, tenant, dry_run)
    except user_errors() as exc:
        typer.echo(error_line(exc), err=True)
        raise typer.Exit(2) from exc
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
        return
    verb = "would adopt" if dry_run else "adopted"
    left = f"; left {len(report.skipped)} (no text, or no user / agent / run id)"
    typer.echo(
        f"{report.found} store item(s) without a tenant; {verb} {len(report.adopted)} into "
        f"tenant {report.tenant!r} as {report.status}{left if report.skipped else ''}"
    )


def _adopt(status: AdoptAs, tenant: str, dry_run: bool) -> AdoptReport:
    settings = GuardSettings.from_env()
    url = settings.resolved_database_url()
    check_store_named(settings)  # before a log is made for it
    tenants = set(settings.tenant_keys().values())
    if tenants and tenant not in tenants:  # adopted there, no API key could ever read them
        raise ConfigError(
            f"tenant {tenant!r} is no API key's (MIRAGE_API_KEYS names {len(tenants)} "
            "tenant(s)): pass --tenant with the one whose clients own these memories"
        )
    # created when missing: an app moving from Mem0 runs this before the guard has logged a
    # thing (``doctor`` refuses a missing log instead: it checks a deployment that ran)
    log = DecisionLog.from_settings(settings)
    try:
        return anyio.run(_run, settings, log, status, tenant, dry_run)
    except SQLAlchemyError as exc:
        raise unreadable(url, exc) from exc


async def _run(
    settings: GuardSettings, log: DecisionLog, status: AdoptAs, tenant: str, dry_run: bool
) -> AdoptReport:
    with closing(log):
        backend = store_of(settings)
        try:
            return await adopt(backend, log, tenant=tenant, status=status, dry_run=dry_run)
        finally:
            await backend.aclose()
