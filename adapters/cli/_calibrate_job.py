"""``mirage calibrate job``: the scheduled calibration of the configured writer model.

What the Helm CronJob (deploy/helm/mirage-guard/templates/calibration-cronjob.yaml) and the
compose ``calibrate`` service run: ``mirage calibrate audit`` of the labelled claims by
MIRAGE_WRITER_MODEL (by MIRAGE_AUDITOR_MODEL when an independent auditor is configured: the
model whose labels the guard scores), ``mirage calibrate fit`` into MIRAGE_PROFILE_DIR (the
volume the sidecar reads), then ``POST /v1/admin/profiles/reload`` on the sidecar with a key
of MIRAGE_ADMIN_KEYS, which swaps the new profile in (or refuses it, keeping the old one).
Registered on the ``calibrate`` sub-app by the last line of ``_calibrate.py``.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit, urlunsplit

import httpx
import typer

from mirage_guard.adapters.cli._calibrate import (
    OiObjectiveOpt,
    StatedObjectiveOpt,
    app,
    audit,
    console,
    fit,
)
from mirage_guard.guard.settings import AuditMode, GuardSettings

RELOAD_PATH = "/v1/admin/profiles/reload"


def job_problems(settings: GuardSettings) -> list[str]:
    """Why the configured guard cannot be calibrated by this job (empty: it can)."""
    problems = []
    if not settings.audit_labeller()[0]:
        problems.append(
            "MIRAGE_WRITER_MODEL is not set (nor MIRAGE_AUDITOR_MODEL): there is no model to "
            "calibrate"
        )
    if settings.profile_dir is None:
        problems.append("MIRAGE_PROFILE_DIR is not set: the profile would go nowhere")
    if settings.audit_mode is not AuditMode.SEPARATE:
        problems.append(
            f"MIRAGE_AUDIT_MODE is {settings.audit_mode.value!r}: this job fits a "
            "self_audit_separate profile, which the guard uses only with 'separate'"
            + (
                " (an inline profile is fitted on your own labelled traffic: `mirage report "
                "label-sample --verdicts-out`, then `mirage calibrate fit`)"
                if settings.audit_mode is AuditMode.INLINE
                else ""
            )
        )
    return problems


def reload_sidecar(base_url: str, settings: GuardSettings, *, timeout_s: float = 60.0) -> str:
    """Ask the sidecar to reload its profiles; returns its answer (raises on failure)."""
    keys = settings.admin_key_list()
    if not keys:
        raise ValueError("reloading the sidecar needs MIRAGE_ADMIN_KEYS (its admin key)")
    response = httpx.post(
        base_url.rstrip("/") + RELOAD_PATH,
        headers={"Authorization": f"Bearer {keys[0]}"},
        timeout=timeout_s,
    )
    response.raise_for_status()
    return response.text


def each_address(base_url: str) -> list[str]:
    """``base_url`` once per address its host resolves to (a headless Service: one per pod)."""
    parts = urlsplit(base_url)
    if not parts.hostname:
        raise ValueError(f"no host in {base_url!r}")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    addresses = sorted({str(info[4][0]) for info in infos})
    return [
        urlunsplit(
            (parts.scheme, f"[{a}]:{port}" if ":" in a else f"{a}:{port}", parts.path, "", "")
        )
        for a in addresses
    ]


@app.command("job")
def job(
    reload_url: Annotated[
        str | None,
        typer.Option(
            help="sidecar base URL to reload after the fit (POST /v1/admin/profiles/reload "
            "with the first key of MIRAGE_ADMIN_KEYS); unset = no reload"
        ),
    ] = None,
    work_dir: Annotated[Path, typer.Option(help="where the verdicts JSONL goes (scratch)")] = Path(
        "/tmp/mirage-calibration"
    ),
    oi_objective: OiObjectiveOpt = "recall>=0.9",
    stated_objective: StatedObjectiveOpt = "precision>=0.85",
    concurrency: Annotated[int, typer.Option(min=1, help="self-audit calls in flight")] = 4,
    max_tokens: Annotated[
        int | None, typer.Option(help="cap each self-audit answer (a weak model may never stop)")
    ] = 1024,
    data: Annotated[
        Path | None, typer.Option("--data", help="labelled claims JSONL (default: packaged)")
    ] = None,
    reload_each_address: Annotated[
        bool,
        typer.Option(
            help="reload every address the --reload-url host resolves to (a headless Service: "
            "every replica), not just one"
        ),
    ] = False,
) -> None:
    """Calibrate the configured writer model: audit + fit into MIRAGE_PROFILE_DIR + reload.

    Reads MIRAGE_WRITER_MODEL, MIRAGE_WRITER_API_BASE, MIRAGE_PROFILE_DIR, MIRAGE_AUDIT_MODE
    (must be 'separate') and MIRAGE_ADMIN_KEYS, like the sidecar it calibrates. With
    MIRAGE_AUDITOR_MODEL (and MIRAGE_AUDITOR_API_BASE) set, the independent auditor is
    calibrated instead: it is the model whose labels the guard scores.
    """
    settings = GuardSettings.from_env()
    problems = job_problems(settings)
    if problems:
        for p in problems:
            typer.echo(f"error: {p}", err=True)
        raise typer.Exit(code=2)
    model, api_base = settings.audit_labeller()
    assert model is not None
    assert settings.profile_dir is not None
    work_dir.mkdir(parents=True, exist_ok=True)
    verdicts = work_dir / "verdicts.jsonl"
    audit(
        writer_model=model,
        out=verdicts,
        data=data,
        api_base=api_base,
        concurrency=concurrency,
        max_tokens=max_tokens,
        as_auditor=settings.auditor_model is not None,  # the prompt the guard will ask it with
    )
    fit(
        verdicts=verdicts,
        profile_dir=settings.profile_dir,
        data=data,
        oi_objective=oi_objective,
        stated_objective=stated_objective,
    )
    if reload_url is None or not settings.admin_key_list():
        console.print(
            "profile saved, sidecar not asked to reload (needs --reload-url and "
            "MIRAGE_ADMIN_KEYS): POST /v1/admin/profiles/reload or send it SIGHUP",
            markup=False,
        )
        return
    try:
        urls = each_address(reload_url) if reload_each_address else [reload_url]
    except (OSError, ValueError) as exc:
        typer.echo(
            f"error: the profile is saved, but {reload_url} did not resolve: {exc}", err=True
        )
        raise typer.Exit(code=1) from exc
    failed = 0
    for url in urls:
        try:
            answer = reload_sidecar(url, settings)
        except httpx.HTTPError as exc:
            failed += 1
            typer.echo(f"error: the profile is saved, but {url} did not reload it: {exc}", err=True)
            continue
        console.print(f"sidecar reloaded ({url}): {answer}", markup=False)
    if failed or not urls:
        raise typer.Exit(code=1)
