"""``mirage report pollution`` (the memory-pollution report) and ``mirage report label-sample``
(logged decisions as claims to label), both read from the decision log, and ``mirage report
label`` (labelling that sample at the terminal)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from sqlalchemy.exc import SQLAlchemyError

from mirage_guard.adapters._decision_log import AUDIT_TABLE
from mirage_guard.adapters._label_sample import (
    LabelSample,
    check_out,
    draw_label_sample,
    sample_verdicts,
    write_label_sample,
    write_sample_verdicts,
)
from mirage_guard.adapters._labeller import (
    ANSWERS,
    SOURCED,
    answer,
    read_claims,
    save,
    unlabelled,
)
from mirage_guard.adapters._pollution_report import (
    check_report_out,
    load_decisions,
    mask_url,
    open_decision_log,
    parse_when,
    regenerate_commands,
    summarize,
    write_report,
)
from mirage_guard.adapters._profile_drift import profile_drift
from mirage_guard.guard import Role
from mirage_guard.guard.errors import InputError, MirageError
from mirage_guard.guard.scoring import ProfileStore
from mirage_guard.guard.settings import GuardSettings

app = typer.Typer(
    help="Reports built from the decision log, and labelling the claims drawn from it.",
    no_args_is_help=True,
)

DatabaseUrl = Annotated[
    str | None,
    typer.Option(
        help="decision log URL (default: MIRAGE_DATABASE_URL, else decisions.db in MIRAGE_DATA_DIR)"
    ),
]
Since = Annotated[
    str | None,
    typer.Option(help="from this ISO date/time (UTC if no offset) or span back: 24h, 7d"),
]
Until = Annotated[
    str | None,
    typer.Option(help="up to this ISO date/time (a bare date includes the whole day)"),
]


def _window(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    """``--since`` / ``--until`` as instants; one after the other is refused."""
    now = datetime.now(UTC)
    lo = parse_when(since, now) if since else None
    hi = parse_when(until, now, end_of_day=True) if until else None
    if lo is not None and hi is not None and lo > hi:
        raise InputError(f"--since ({lo.isoformat()}) is after --until ({hi.isoformat()})")
    return lo, hi


@contextmanager
def _reading_log(database_url: str | None) -> Iterator[None]:
    """Bad input and a log that cannot be read end the command in one line, exit 2."""
    try:
        yield
    except MirageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    except (SQLAlchemyError, ImportError) as exc:  # unreachable server, missing driver
        where = mask_url(database_url or GuardSettings.from_env().resolved_database_url())
        typer.echo(
            f"error: cannot read the decision log at {where}: {type(exc).__name__}", err=True
        )
        raise typer.Exit(code=2) from exc


@app.command("pollution")
def report_pollution(
    database_url: DatabaseUrl = None,
    out: Annotated[
        Path,
        typer.Option(
            help="HTML file to write; the .md and .json go next to it (r.html, r.md or r.json "
            "all give r.html, r.md and r.json)"
        ),
    ] = Path("pollution.html"),
    since: Since = None,
    until: Until = None,
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
    check_report_out(out)  # a folder as --out is refused before the log is read
    with _reading_log(database_url):
        settings = GuardSettings.from_env()
        url = database_url or settings.resolved_database_url()
        lo, hi = _window(since, until)
        rows = load_decisions(url, lo, hi)
        summary = summarize(rows, since=lo, until=hi)
        profiles = ProfileStore(profile_dir or settings.profile_dir).all()
        drift = profile_drift(rows, profiles, window=drift_window or settings.drift_window)
        summary = summary.model_copy(update={"profile_drift": drift})
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


@app.command("label-sample")
def report_label_sample(
    out: Annotated[Path, typer.Option(help="JSON Lines file of claims to label")] = Path(
        "to_label.jsonl"
    ),
    n: Annotated[int, typer.Option("--n", min=1, help="claims to draw")] = 200,
    seed: Annotated[
        int, typer.Option(help="seed of the draw (same log and seed, same sample)")
    ] = 0,
    since: Since = None,
    until: Until = None,
    tenant: Annotated[str | None, typer.Option(help="one tenant's decisions only")] = None,
    writer_model: Annotated[
        str | None, typer.Option(help="one writer model's decisions only (litellm string)")
    ] = None,
    show_guard: Annotated[
        bool,
        typer.Option(
            help="add the guard's provenance, source turn, score and reasons under `guard` "
            "(for reviewing decisions; leave off to label blind)"
        ),
    ] = False,
    verdicts_out: Annotated[
        Path | None,
        typer.Option(
            help="also write the sampled decisions' self-audit labels (the writer's or the "
            "independent auditor's, separate or inline) to this verdicts file, for `mirage "
            "calibrate fit --verdicts FILE --data OUT` once OUT is labelled; only decisions "
            "made with such a label are drawn"
        ),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option(help="replace --out (and --verdicts-out) if it exists")
    ] = False,
    database_url: DatabaseUrl = None,
) -> None:
    """A seeded random sample of the guard's logged decisions, written as claims to label: fill
    each `label` (and `source_turn_id` for a stated or inferred one), then measure the guard on
    them with `mirage guard eval --data FILE` and choose a floor with `mirage calibrate
    stated-floor --data FILE`. With --verdicts-out, the labelled file also fits the audit's
    profile on your own traffic (`mirage calibrate fit`). The file holds your users' messages:
    keep it as you keep the log."""
    with _reading_log(database_url):
        url = database_url or GuardSettings.from_env().resolved_database_url()
        lo, hi = _window(since, until)
        check_out(out, overwrite=overwrite)
        if verdicts_out is not None:
            if verdicts_out.resolve() == out.resolve():
                raise InputError("--verdicts-out must be another file than --out")
            check_out(verdicts_out, overwrite=overwrite, flag="--verdicts-out", lost="the verdicts")
        log = open_decision_log(url)
        try:
            sample = draw_label_sample(
                log,
                n=n,
                seed=seed,
                since=lo,
                until=hi,
                tenant=tenant,
                writer_model=writer_model,
                show_guard=show_guard,
                with_audits=verdicts_out is not None,
            )
        finally:
            log.close()
        if not sample.rows:
            raise InputError(
                f"no decision to sample in {mask_url(url)} ({sample.considered} in the window, "
                f"{sample.verbatim} user messages stored verbatim, {sample.without_turns} "
                f"without their conversation{_unlabelled(sample) if verdicts_out else ''})"
            )
        audit = sample_verdicts(sample) if verdicts_out is not None else None
        write_label_sample(sample, out, overwrite=overwrite)
        if verdicts_out is not None and audit is not None:
            write_sample_verdicts(verdicts_out, *audit, overwrite=overwrite)
    left = []
    if sample.verbatim:
        left.append(f"{sample.verbatim} user messages stored verbatim")
    if sample.without_turns:
        left.append(f"{sample.without_turns} without their conversation")
    if sample.without_audit:
        left.append(f"{sample.without_audit} made without a self-audit label the log kept")
    skipped = f" (left out: {', '.join(left)})" if left else ""
    typer.echo(
        f"wrote {len(sample.rows)} of {sample.considered} decisions to {out}{skipped}; fill each "
        f"`label` (and `source_turn_id` for GROUNDED / INFERRED_REASONABLE), then run "
        f"`mirage guard eval --data {out}`"
    )
    if verdicts_out is not None and audit is not None:
        source, verdicts = audit
        typer.echo(
            f"wrote {len(verdicts)} self-audit labels of {source.model} ({source.mode}, prompt "
            f"{source.prompt_version}) to {verdicts_out}; once {out} is labelled, fit its "
            f"profile: `mirage calibrate fit --verdicts {verdicts_out} --data {out} "
            "--profile-dir DIR`"
        )


def _unlabelled(sample: LabelSample) -> str:
    """Why a sample drawn for the audit's fit left decisions out for having no label."""
    why = (
        "was the audit on (MIRAGE_AUDIT_MODE)?"
        if sample.keeps_audits
        else f"this log has no usable table {AUDIT_TABLE} (a version before labels were kept, "
        "or the guard's role may not write it: see its warning at start)"
    )
    return f", {sample.without_audit} made without a self-audit label the log kept: {why}"


_LABEL_PROMPT = "[s]tated [i]nferred [t]stereotype [g]enerated  [n]ext [b]ack [q]uit"


@app.command("label")
def report_label(
    file: Annotated[
        Path, typer.Argument(help="claims to label (as `mirage report label-sample` writes them)")
    ],
    last: Annotated[
        int, typer.Option(min=0, help="show only the last N turns of each conversation (0: all)")
    ] = 0,
) -> None:
    """Label a file of claims one by one: each claim is shown under its conversation (as it was
    when the claim was decided) and your answer is written to the file before the next is shown.
    A stated or inferred claim asks for the user turn it rests on. Lines already labelled are
    skipped; run it again to go on where you stopped."""
    try:
        rows = read_claims(file)
    except MirageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from exc
    order = unlabelled(rows)  # this session's claims, in file order; [b]ack walks it back
    console = Console(highlight=False)
    done: set[int] = set()  # claims labelled this session (one relabelled after [b] counts once)
    k = 0
    try:
        while k < len(order):
            i = order[k]
            _show_claim(console, rows, i, last)
            key = typer.prompt(_LABEL_PROMPT).strip().lower()
            if key == "q":
                break
            if key in ("b", "n"):
                if key == "b" and k == 0:
                    console.print("(the first claim of this session)")
                k = max(k - 1, 0) if key == "b" else k + 1
                continue
            if key not in ANSWERS:
                console.print(f"answer one of: {escape(_LABEL_PROMPT)}")
                continue
            label = ANSWERS[key]
            source = None
            if label in SOURCED:
                source = typer.prompt("source turn id", default="", show_default=False).strip()
            try:
                answer(rows[i], label, source or None)
            except InputError as exc:
                console.print(f"[red]{_shown(exc)}[/red]")
                continue
            save(file, rows)
            done.add(i)
            k += 1
    except typer.Abort:  # end of input or Ctrl-C: every answer given is already in the file
        console.print()
    left = len(unlabelled(rows))
    then = "label the rest, then run" if left else "now run"
    typer.echo(
        f"{len(done)} labelled this session, {left} of {len(rows)} still unlabelled in {file}; "
        f"{then} `mirage guard eval --data {file}`"
    )


def _show_claim(console: Console, rows: list[dict[str, Any]], i: int, last: int) -> None:
    row = rows[i]
    turns = row["turns"][-last:] if last else row["turns"]
    labelled = sum(r.get("label") is not None for r in rows)
    console.rule(f"claim {i + 1} of {len(rows)} ({labelled} labelled)")
    if len(turns) < len(row["turns"]):
        console.print(f"[dim]({len(row['turns']) - len(turns)} earlier turns not shown)[/dim]")
    for t in turns:
        role = str(t.get("role", ""))
        style = "bold" if role == Role.USER.value else "dim"
        line = f"{t['id']}  {role:<9} {t.get('content', '')}"
        console.print(f"[{style}]{_shown(line)}[/{style}]")
    if row.get("label") is not None:
        shown = f"labelled {row['label']} (source turn {row.get('source_turn_id')})"
        console.print(_shown(shown))
    console.print(f"[bold cyan]claim:[/bold cyan] {_shown(row['text'])}")


# C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional overrides
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _shown(text: object) -> str:
    """Text from the file as the terminal shows it: a control character (an ANSI escape, a
    carriage return, a bidi override) written out as ``\\x1b`` or ``\\u202e`` and never sent
    to the terminal, and Rich markup escaped."""

    def spelled(m: re.Match[str]) -> str:
        code = ord(m.group())
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return escape(_CONTROL.sub(spelled, str(text)))
