"""``mirage guard eval``: the guard's real decisions scored against labelled claims."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.calibration import (
    AgreementReport,
    ClaimDiff,
    EvalReport,
    SuiteRow,
    TextVariant,
    default_sets,
    render_markdown,
    run_agreement,
    run_diff,
    run_eval,
    run_suite,
    second_labels_path,
    suite_table,
    write_begin,
)
from mirage_guard.guard import ReasonCode
from mirage_guard.guard.errors import MirageError

app = typer.Typer(help="Tag and evaluate with the guard.", no_args_is_help=True)
console = Console()

SupportDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="a claim-support model folder of `mirage calibrate train-support` to score with "
        "(default: MIRAGE_SUPPORT_DIR, else the shipped one); --profile-dir must hold the "
        "evidence profile fitted with it"
    ),
]


ProfileDirOpt = Annotated[
    Path | None,
    typer.Option(
        help="directory with per-model profiles", exists=True, file_okay=False, dir_okay=True
    ),
]


PerClaimOpt = Annotated[
    Path | None,
    typer.Option(
        help="also write every claim's decision (label, provenance, source turn, score, "
        "reasons) as JSON Lines to this file, for error analysis"
    ),
]


def _per_claim_written(path: Path | None, reports: list[EvalReport]) -> None:
    if path is None:
        return
    n = sum(r.n for r in reports)
    wrong = sum(
        count for r in reports for gold, preds in r.confusion.items()
        for pred, count in preds.items() if pred != gold
    )  # fmt: skip
    console.print(
        f"wrote {n} claims ({wrong} with another provenance than their label) to "
        f"{escape(str(path))}"
    )


@contextmanager
def _typed_errors() -> Iterator[None]:
    """A typed error (a profile fitted for another model, a broken model folder, bad input) is
    one line and exit status 1, not a traceback."""
    try:
        yield
    except MirageError as exc:
        console.print(f"[red]error:[/] {escape(str(exc))}")
        raise typer.Exit(1) from exc


@app.command("eval")
def guard_eval(
    data: Annotated[
        Path | None, typer.Option(help="labelled claims JSONL (default: packaged claims)")
    ] = None,
    personas: Annotated[Path | None, typer.Option(help="personas JSONL for persona_id")] = None,
    split: Annotated[str | None, typer.Option(help="only this split, e.g. dev")] = None,
    profile_dir: ProfileDirOpt = None,
    writer_model: Annotated[
        str | None, typer.Option(help="evaluate WITH this model's self-audit (needs keys)")
    ] = None,
    verdicts: Annotated[
        Path | None, typer.Option(help="self-audit verdicts JSONL instead of live calls")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
    conversations: Annotated[
        Path | None, typer.Option(help="conversations JSONL for conversation_id claims")
    ] = None,
    variant: Annotated[
        TextVariant, typer.Option(help="score the claims as written, hedge-free or hedged")
    ] = TextVariant.AS_WRITTEN,
    support_dir: SupportDirOpt = None,
    per_claim: PerClaimOpt = None,
    typographic: Annotated[
        bool,
        typer.Option(
            "--typographic", help="type the apostrophes in claims and turns as phones do (’)"
        ),
    ] = False,
    chat_lines: Annotated[
        bool,
        typer.Option(
            "--chat-lines",
            help="type each stop between two sentences of a user turn as a line break",
        ),
    ] = False,
) -> None:
    """AUROC, binary kappa, provenance accuracy, per-class P/R and source-turn accuracy.

    ``--data`` takes a claims file or a set folder (claims.jsonl + conversations.jsonl).
    """
    if writer_model and verdicts:
        raise typer.BadParameter(
            "give --writer-model (live calls) or --verdicts (whose lines name their model), "
            "not both"
        )
    with _typed_errors():
        report = run_eval(
            data=data,
            personas=personas,
            split=split,
            profile_dir=profile_dir,
            writer_model=writer_model,
            verdicts=verdicts,
            conversations=conversations,
            variant=variant,
            support_dir=support_dir,
            per_claim=per_claim,
            typographic=typographic,
            chat_lines=chat_lines,
        )
    if as_json:
        console.print_json(report.model_dump_json())  # NaN (no figure) as null
    else:
        _print_report(report)
        _per_claim_written(per_claim, [report])
    if writer_model and verdicts is None and _every_audit_failed(report):
        typer.echo(
            f"error: every self-audit call to {writer_model} failed (reason self_audit_failed on "
            "each claim): these figures are the evidence-only guard failing closed, not a "
            "measurement of this model's self-audit",
            err=True,
        )
        raise typer.Exit(1)


def _every_audit_failed(report: EvalReport) -> bool:
    failed = report.by_reason.get(ReasonCode.SELF_AUDIT_FAILED.value)
    return failed is not None and failed.n == report.n


def _print_report(report: EvalReport) -> None:
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
    table.add_row(
        "AUROC of the decisions (rules, then score)",
        f"{report.auroc_decisions:.3f} [{report.auroc_decisions_ci[0]:.3f}, "
        f"{report.auroc_decisions_ci[1]:.3f}]",
    )
    table.add_row("binary kappa (generated vs not)", f"{report.kappa_binary:.3f}")
    table.add_row("3-way provenance accuracy", f"{report.provenance_accuracy:.3f}")
    table.add_row(
        "over-inference stored as a stated fact (share of over-inference)",
        f"{report.oi_stored_as_fact} ({report.oi_stored_as_fact_share:.3f})",
    )
    table.add_row(
        "  share of the stated facts that are over-inference",
        f"{report.stored_facts_oi_share:.3f}",
    )
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
    console.print(_confusion_table(report.confusion))
    console.print(_reason_table(report))


def _confusion_table(confusion: dict[str, dict[str, int]]) -> Table:
    table = Table(title="confusion (rows: labels, columns: guard)")
    table.add_column("")
    for pred in confusion:
        table.add_column(pred, justify="right")
    for gold, preds in confusion.items():
        table.add_row(gold, *(str(v) for v in preds.values()))
    return table


def _reason_table(report: EvalReport) -> Table:
    """How often the decisions that carry each reason code (a rule, a score) match the label."""
    table = Table(title="decisions per reason code")
    table.add_column("reason code")
    table.add_column("decisions", justify="right")
    table.add_column("3-way accuracy", justify="right")
    for code, score in report.by_reason.items():
        table.add_row(code, str(score.n), f"{score.provenance_accuracy:.3f}")
    return table


# the metric column of `eval-suite`'s printed tables: its names wrap at this width
METRIC_WIDTH = 36


def suite_chunks(
    names: Sequence[str], columns: Sequence[Sequence[str]], width: int
) -> list[list[int]]:
    """The sets (``names``, each with its cells ``columns[i]``) in groups, by index and in order,
    whose columns fit ``width`` characters beside the metric column; every set gets a group,
    however narrow the console."""
    chunks: list[list[int]] = []
    used = width  # start a new group at the first set
    for i, (name, cells) in enumerate(zip(names, columns, strict=True)):
        longest_word = max((len(w) for w in name.split()), default=1)
        column = max([longest_word, *(len(c) for c in cells)]) + 3  # padding and border
        if chunks and used + column <= width:
            chunks[-1].append(i)
            used += column
        else:
            chunks.append([i])
            used = METRIC_WIDTH + 4 + column
    return chunks


def suite_tables(rows: Sequence[SuiteRow], width: int) -> list[Table]:
    """`eval-suite`'s tables for a console ``width`` wide: one per group of sets that fits it
    (:func:`suite_chunks`), as fifty columns squeezed into one table print as empty slivers."""
    body = suite_table(rows)
    columns = [[cells[i] for _, cells in body] for i in range(len(rows))]
    tables = []
    for part in suite_chunks([r.set for r in rows], columns, width):
        table = Table(title=escape(f"guard eval-suite (profile {rows[0].report.profile_id})"))
        table.add_column("metric", max_width=METRIC_WIDTH)
        for i in part:
            table.add_column(escape(rows[i].set), justify="right")
        for name, cells in body:
            table.add_row(escape(name), *(cells[i] for i in part))
        tables.append(table)
    return tables


@app.command("eval-suite")
def guard_eval_suite(
    begin: Annotated[
        Path | None,
        typer.Option(
            help="BEGIN dev TSV (e.g. ../shared/data/begin/dev_05_24_21.tsv), read in place"
        ),
    ] = None,
    heldout: Annotated[
        Path | None, typer.Option(help="folder of held-out sets (default: the packaged ones)")
    ] = None,
    profile_dir: ProfileDirOpt = None,
    markdown: Annotated[Path | None, typer.Option(help="also write the tables as Markdown")] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="also write JSON")] = None,
    n_boot: Annotated[int, typer.Option(help="bootstrap resamples for the AUROC CI")] = 1000,
    support_dir: SupportDirOpt = None,
    per_claim: PerClaimOpt = None,
    stale_pairs: Annotated[
        bool,
        typer.Option(
            help="also score the stale / holds triples of benchmark/data/stale_pairs (a later "
            "sentence that changes a fact or leaves it), as the set 'stale triples'"
        ),
    ] = True,
) -> None:
    """Every labelled set side by side: dev, hedge-free dev, each held-out set, the stale
    triples, BEGIN dev."""
    from mirage_guard.calibration import build_eval_guard

    with _typed_errors():
        guard = build_eval_guard(profile_dir=profile_dir, support_dir=support_dir)
    try:
        with _typed_errors():
            rows = run_suite(
                guard, default_sets(begin=begin, heldout=heldout, stale_pairs=stale_pairs),
                n_boot=n_boot, per_claim=per_claim,
            )  # fmt: skip
    finally:
        guard.close()
    for table in suite_tables(rows, console.width):
        console.print(table)
    command = "mirage guard eval-suite" + (f" --begin {begin}" if begin else "")
    if markdown is not None:
        markdown.write_text(render_markdown(rows, command=command), encoding="utf-8")
    if json_out is not None:
        payload = [json.loads(r.model_dump_json()) for r in rows]  # NaN (no figure) as null
        json_out.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    _per_claim_written(per_claim, [r.report for r in rows])


@app.command("agreement")
def guard_agreement(
    labels: Annotated[
        Path | None,
        typer.Option(
            help="other annotators' labels, JSON Lines (default: the packaged second labels of "
            "benchmark/data/second_labels/)"
        ),
    ] = None,
    heldout: Annotated[
        Path | None,
        typer.Option(help="folder of the sets the labels name (default: the packaged held-out)"),
    ] = None,
    profile_dir: ProfileDirOpt = None,
    support_dir: SupportDirOpt = None,
    only: Annotated[
        list[str] | None,
        typer.Option("--set", help="only the labels of this set (repeat for several)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """How far two other annotators agree with a set's labels, and the guard with each of them.

    The 3-way agreement of two people is the most a guard's 3-way accuracy can mean on those
    claims: where they differ, no guard matches both.
    """
    with _typed_errors():
        report = run_agreement(
            labels=labels or second_labels_path(),
            root=heldout,
            profile_dir=profile_dir,
            support_dir=support_dir,
            sets=only or (),
        )
    if as_json:
        console.print_json(report.model_dump_json())  # NaN (no figure) as null
        return
    for table in agreement_tables(report):
        console.print(table)


def _short(pair: str) -> str:
    return pair.replace("annotator ", "")


def agreement_tables(report: AgreementReport) -> list[Table]:
    """What ``guard agreement`` prints: each pair of labellers, the guard among the people, and
    the agreement per set."""
    unsure = ", ".join(f"{k} {v:.0%}" for k, v in report.unsure_share.items())
    pairs = Table(
        title=escape(
            f"agreement on {report.n} claims of {len(report.sets)} sets (marked not sure: {unsure})"
        )
    )
    pairs.caption = (
        "1, 2: the annotators; κ gen: Cohen's κ of generated or not; same turn: of the claims "
        "both link to a turn"
    )
    pairs.add_column("labellers", no_wrap=True)
    for col in ("n", "3-way", "κ 3-way", "κ gen", "4-way", "same turn (n)"):
        pairs.add_column(col, justify="right", no_wrap=True)
    for p in report.pairs:
        pairs.add_row(
            _short(f"{p.a} / {p.b}"), str(p.n), f"{p.three_way:.3f}", f"{p.kappa_three_way:.3f}",
            f"{p.kappa_binary:.3f}", "-" if p.four_way is None else f"{p.four_way:.3f}",
            f"{p.source_turn:.3f} ({p.source_turn_n})",
        )  # fmt: skip
    guard = Table(title="the guard's 3-way accuracy among the people")
    guard.add_column("claims")
    guard.add_column("n", justify="right")
    guard.add_column("accuracy", justify="right")
    for name, g in (
        (f"all three people agree ({report.unanimous_share:.0%})", report.guard_when_unanimous),
        ("the people differ (against the authors)", report.guard_when_split),
        ("against the tag two of the three give", report.guard_vs_majority),
    ):
        guard.add_row(name, str(g.n), f"{g.accuracy:.3f}")
    per_set = Table(title="3-way agreement per set (1, 2: the annotators)")
    per_set.add_column("set", no_wrap=True)
    names = list(next(iter(report.by_set.values())))
    for name in names:
        per_set.add_column(_short(name), justify="right", no_wrap=True)
    for name, cells in report.by_set.items():
        per_set.add_row(name, *(f"{cells[k]:.2f}" for k in names))
    return [pairs, guard, per_set]


@app.command("diff")
def guard_diff(
    before: Annotated[Path, typer.Argument(help="a --per-claim file of the first run")],
    after: Annotated[Path, typer.Argument(help="a --per-claim file of the second run")],
    group: Annotated[
        list[str] | None,
        typer.Option(help="NAME=SET[,SET...]: also a row for these sets pooled (repeatable)"),
    ] = None,
    per_set: Annotated[
        bool, typer.Option(help="a row per set (--no-per-set: only the groups and all)")
    ] = True,
    moved: Annotated[
        int, typer.Option(min=0, help="also list up to this many claims whose provenance moved")
    ] = 0,
    moved_in: Annotated[
        list[str] | None,
        typer.Option(
            help="list moved claims only of this set or --group (repeatable; default every "
            "set): keep a set you must not read out of the list"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the comparison as JSON")] = False,
) -> None:
    """Two runs of `guard eval` / `eval-suite --per-claim` on the same claims, claim by claim.

    For each set (and each --group): 3-way accuracy before and after, the claims that moved to
    their label and away from it with an exact McNemar p-value (is the change more than a few
    rows?), generated claims stored as stated, and stated or inferred claims linked to their
    labelled turn.
    """
    with _typed_errors():
        report = run_diff(before, after, group or (), moved_in or ())
    if as_json:
        console.print_json(report.model_dump_json())  # NaN (no figure) as null
        return
    console.print(diff_table(report, per_set=per_set))
    if report.only_before or report.only_after:
        console.print(
            f"not compared: {report.only_before} claims only in the first file, "
            f"{report.only_after} only in the second"
        )
    if moved:
        console.print(moved_table(report, limit=moved))


def diff_table(report: ClaimDiff, *, per_set: bool = True) -> Table:
    """What ``guard diff`` prints: a row per set (unless ``per_set`` is off), per group, all."""
    table = Table(
        title="the same claims, first run → second run", box=box.SIMPLE_HEAD, pad_edge=False
    )
    table.caption = (
        "to/away: claims the second run gets right and the first wrong, and the reverse; p: "
        "exact McNemar; gen→stated: generated claims stored as stated; turn ±: the change in "
        "stated or inferred claims linked to their labelled turn"
    )
    table.add_column("set", overflow="fold", min_width=14)
    for col in ("n", "3-way", "to/away", "p", "gen→stated", "turn ±"):
        table.add_column(col, justify="right", no_wrap=True)
    for g in (g for g in report.groups if per_set or g.kind != "set"):
        table.add_row(
            escape(g.name), str(g.n), f"{g.accuracy_before:.3f}→{g.accuracy_after:.3f}",
            f"{g.to_label}/{g.away}", "<0.001" if g.p_value < 0.001 else f"{g.p_value:.3f}",
            f"{g.generated_as_stated_before}→{g.generated_as_stated_after}",
            f"{g.source_turn_hits_after - g.source_turn_hits_before:+d}",
        )  # fmt: skip
    return table


def moved_table(report: ClaimDiff, *, limit: int) -> Table:
    """The first ``limit`` claims whose provenance differs between the two runs."""
    shown = min(limit, len(report.moved))
    table = Table(
        title=f"claims that moved ({shown} of {len(report.moved)})",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    table.add_column("set", overflow="fold", min_width=12)
    table.add_column("claim", overflow="fold", min_width=20)
    table.add_column("label", no_wrap=True)
    table.add_column("first → second", no_wrap=True)
    for m in report.moved[:limit]:
        table.add_row(escape(m.set), escape(m.text), m.expected, f"{m.before} → {m.after}")
    return table


@app.command("convert-begin")
def guard_convert_begin(
    tsv: Annotated[Path, typer.Argument(help="a BEGIN TSV (dev_05_24_21.tsv)")],
    out: Annotated[Path, typer.Option("--out", "-o", help="labelled claims JSONL to write")],
) -> None:
    """BEGIN -> labelled claims: entailment GROUNDED, hallucination/contradiction FABRICATED."""
    n, seen = write_begin(tsv, out)
    kept = ", ".join(f"{k} {v}" for k, v in sorted(seen.items()))
    console.print(f"wrote {n} claims to {escape(str(out))} (BEGIN labels read: {kept})")
