"""``mirage bench``: run, report, judge-sample, judge-agreement."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import anyio
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.adapters.cli._collapse import app as collapse_app
from mirage_guard.adapters.cli._collapse import (
    check_sample_out,
    fail,
    invalid_options,
    missing_keys,
    parse_api_bases,
    runtime_options,
    split_values,
)
from mirage_guard.benchmark import (
    BenchmarkRun,
    ClaimUnits,
    GuardArm,
    ProviderFactory,
    RetentionPolicy,
    RichProgress,
    RunConfig,
    RunSummary,
    RuntimeOptions,
    Stage,
    agreement_json,
    compare,
    draw_sample,
    is_offline,
    judge_labels,
    litellm_provider,
    load_personas,
    offline_llm,
    parse_tasks,
    read_labels,
    write_jsonl,
    write_report,
)
from mirage_guard.guard.errors import InputError, MirageError
from mirage_guard.guard.llm import LLMClient, missing_provider_keys
from mirage_guard.guard.settings import AuditMode, GuardSettings

app = typer.Typer(
    help="MirageBench: measure over-inference of any litellm model, with and without the guard.",
    no_args_is_help=True,
)
app.add_typer(collapse_app, name="collapse")
console = Console()


def _families(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in split_values(values):
        model, sep, family = item.rpartition("=")
        if not sep or not model or not family:
            raise InputError(f"--family takes MODEL=FAMILY, got {item!r}")
        out[model] = family
    return out


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def parse_stops(values: list[str] | None) -> list[str]:
    r"""``--stop`` values with ``\n``, ``\t``, ``\r`` and ``\\`` read as the characters they name
    (a shell passes "\n\n" as four characters)."""
    return [re.sub(r"\\([ntr\\])", lambda m: _ESCAPES[m[1]], v) for v in values or []]


def provider_for(options: RuntimeOptions) -> ProviderFactory:
    """``mock/...`` models are answered offline; every other string goes to litellm."""
    real = litellm_provider(options)

    def factory(model: str) -> LLMClient:
        if is_offline(model):
            return offline_llm(model, latency_s=options.mock_latency_s)
        return real(model)

    return factory


def _print_summary(summary: RunSummary) -> None:
    table = Table(title=f"run {summary.run_dir}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("units done / resumed", f"{summary.units_done} / {summary.units_resumed}")
    table.add_row("failed units", str(summary.errors))
    table.add_row(
        "LLM calls (cache hits)", f"{summary.accounting.calls} ({summary.accounting.cached_calls})"
    )
    table.add_row(
        "tokens in / out",
        f"{summary.accounting.prompt_tokens:,} / {summary.accounting.completion_tokens:,}",
    )
    table.add_row("cost USD", summary.accounting.cost_summary())
    console.print(table)
    for message in summary.error_messages[:10]:
        console.print(f"[yellow]failed:[/] {message}")


@app.command("run")
def run(
    models: Annotated[
        list[str],
        typer.Option(
            "--models",
            help="subject models, litellm strings, comma-separated or repeated "
            "(hosted_vllm/... for a vLLM server; mock/... for the offline mock)",
        ),
    ],
    judge: Annotated[str, typer.Option(help="independent judge model (temperature 0)")],
    run_dir: Annotated[
        Path | None,
        typer.Option(
            "--run-dir", help="run directory; an existing one with the same config is resumed"
        ),
    ] = None,
    personas: Annotated[
        list[str] | None,
        typer.Option(help="persona ids or groups (stereotypical, counter, neutral); default all"),
    ] = None,
    personas_file: Annotated[
        Path | None, typer.Option(help="personas JSONL (default: the packaged 150)")
    ] = None,
    tasks: Annotated[
        list[str] | None,
        typer.Option(help="gift, dating, itinerary, stressor, letter, apartment; default all"),
    ] = None,
    limit: Annotated[int | None, typer.Option(help="at most this many personas")] = None,
    seed: Annotated[int, typer.Option(help="sampling seed (part of every cache key)")] = 0,
    guard: Annotated[GuardArm, typer.Option(help="guard arm: off, on or both")] = GuardArm.OFF,
    stages: Annotated[
        list[str] | None, typer.Option(help="probe, task, self_audit, judge, accum; default all")
    ] = None,
    accum_personas: Annotated[int, typer.Option(help="personas in the Accum stage")] = 2,
    accum_rounds: Annotated[int, typer.Option(help="Accum rounds")] = 8,
    max_tokens: Annotated[
        int,
        typer.Option(
            help="answer length cap per call; an answer cut at it is a failed unit "
            "(GPT-5-family models count reasoning tokens against it)"
        ),
    ] = 2048,
    stop: Annotated[
        list[str] | None,
        typer.Option(
            help="a stop sequence for the Task answers, repeatable; \\n reads as a newline "
            '(e.g. --stop "\\n\\n" for a base model that never ends its answer). '
            "Part of the run's config hash; never sent to the JSON stages"
        ),
    ] = None,
    claim_units: Annotated[
        ClaimUnits,
        typer.Option(
            help="free: the self-audit and the judge each extract claims in their own words (the "
            "paper's); sentences: both label the Task answer's own numbered sentences, fixed by "
            "the schema (for small or base models that cannot write claims; coarser units)"
        ),
    ] = ClaimUnits.FREE,
    samples: Annotated[
        int, typer.Option(help="Task outputs per unit; the report gives mean and CI across them")
    ] = 1,
    retry_failed: Annotated[
        bool,
        typer.Option(
            help="on resume, redo every failed unit (truncated, unparsable, refused), "
            "not only the transient ones"
        ),
    ] = False,
    family: Annotated[
        list[str] | None,
        typer.Option(
            help="MODEL=FAMILY for the family-clustered CI (default: from the model name)"
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option(help="in-flight calls per subject model")] = 8,
    judge_concurrency: Annotated[int, typer.Option(help="in-flight judge calls")] = 8,
    api_base: Annotated[
        list[str] | None,
        typer.Option(
            help="URL of the vLLM server for every hosted_vllm/... model "
            "(e.g. http://host:8000/v1), or MODEL=URL for one model; repeatable"
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option(help="call cache shared across runs (default: RUN_DIR/cache)")
    ] = None,
    progress: Annotated[bool, typer.Option(help="rich progress bars")] = True,
    mock_latency_ms: Annotated[
        float, typer.Option(help="simulated latency of mock/... models, ms (dry runs)")
    ] = 0.0,
    check_keys: Annotated[
        bool, typer.Option(help="refuse to start when a provider's API key is missing")
    ] = True,
) -> None:
    """Run (or resume) MirageBench: Probe, Task, Self-audit, Judge, Accum (+ the guard arm)."""
    try:
        config = RunConfig(
            models=split_values(models),
            judge=judge,
            personas=split_values(personas),
            personas_file=str(personas_file) if personas_file else None,
            tasks=parse_tasks(tasks),
            limit=limit,
            seed=seed,
            guard=guard,
            stages=[Stage(s) for s in split_values(stages)] or list(Stage),
            accum_personas=accum_personas,
            accum_rounds=accum_rounds,
            max_tokens=max_tokens,
            task_stop=parse_stops(stop),
            claim_units=claim_units,
            samples=samples,
            accum_policies=list(RetentionPolicy),
            families=_families(family),
        )
    except ValidationError as exc:
        fail(invalid_options(exc))
    except (ValueError, MirageError) as exc:
        fail(str(exc))
    try:
        shared_base, per_model_base = parse_api_bases(api_base)
    except InputError as exc:
        fail(str(exc))
    options = runtime_options(
        concurrency=concurrency,
        judge_concurrency=judge_concurrency,
        api_base=shared_base,
        api_bases=per_model_base,
        progress=progress,
        mock_latency_s=mock_latency_ms / 1000,
        retry_failed=retry_failed,
    )
    absent = missing_keys([*config.models, config.judge], options) if check_keys else {}
    if check_keys:
        try:
            absent |= guard_labeller_keys(config.guard)
        except MirageError as exc:  # a MIRAGE_* setting that is not valid
            fail(str(exc))
    if absent:
        for model, keys in absent.items():
            console.print(f"[red]error:[/] {model} needs {' or '.join(keys) or 'credentials'}")
        console.print("set the keys (or pass --no-check-keys to try anyway)")
        raise typer.Exit(2)
    target = run_dir or Path("runs") / datetime.now(UTC).strftime("bench-%Y%m%d-%H%M%S")
    everyone = [*config.models, config.judge]
    try:
        runner = BenchmarkRun(
            config,
            target,
            provider=provider_for(options),
            options=options,
            cache_dir=cache_dir,
            progress=RichProgress() if progress else None,
            offline_models=[m for m in everyone if is_offline(m)],
        )
        summary = anyio.run(runner.run)
    except MirageError as exc:
        fail(str(exc))
    _print_summary(summary)
    console.print(f"report: mirage bench report {target}")


def guard_labeller_keys(arm: GuardArm) -> dict[str, list[str]]:
    """The provider keys the guard arm's self-audit model lacks: with MIRAGE_AUDIT_MODE=separate
    the guard arm calls MIRAGE_AUDITOR_MODEL (else MIRAGE_WRITER_MODEL) on every tagging, and
    without its key every guard decision would fail closed on ``self_audit_failed``: guard
    figures measuring nothing, in a run that exits 0."""
    if arm is GuardArm.OFF:
        return {}
    settings = GuardSettings.from_env()
    model, api_base = settings.audit_labeller()
    if settings.audit_mode is not AuditMode.SEPARATE or not model or is_offline(model):
        return {}
    keys = missing_provider_keys(model, api_base)
    who = "MIRAGE_AUDITOR_MODEL" if settings.auditor_model else "MIRAGE_WRITER_MODEL"
    return {f"{model} (the guard arm's self-audit, {who})": keys} if keys else {}


@app.command("report")
def report(
    run_dir: Annotated[Path, typer.Argument(help="a run directory")],
    out: Annotated[
        Path | None, typer.Option(help="output directory (default RUN_DIR/report)")
    ] = None,
) -> None:
    """Markdown + one self-contained HTML page with plots + a leaderboard CSV. A damaged
    records line (not a file's torn last line), or one that is not a valid record, is named
    with why in a warning and left out."""

    try:
        files = write_report(run_dir, out)
    except MirageError as exc:
        fail(str(exc))
    for line in files.skipped_lines:
        console.print(
            f"[yellow]warning:[/] {escape(str(run_dir / line))}, left out of every figure",
            soft_wrap=True,
        )
    if files.skipped_lines:
        console.print(
            f"[yellow]warning:[/] {len(files.skipped_lines)} unreadable records line(s) skipped "
            "(one per resume of a killed run is expected; more means a damaged file)",
            soft_wrap=True,
        )
    console.print(f"markdown:    {files.markdown}")
    console.print(f"html:        {files.html}")
    console.print(f"leaderboard: {files.leaderboard}")


@app.command("judge-sample")
def judge_sample(
    run_dir: Annotated[Path, typer.Argument(help="a run directory with judge records")],
    out: Annotated[Path, typer.Option(help="blind sample JSONL to write")] = Path(
        "judge_sample.jsonl"
    ),
    per_class: Annotated[int, typer.Option(help="claims per judge class")] = 100,
    seed: Annotated[int, typer.Option(help="sampling seed")] = 0,
    personas_file: Annotated[Path | None, typer.Option(help="personas JSONL")] = None,
    overwrite: Annotated[
        bool, typer.Option(help="replace --out if it exists (its labels are lost)")
    ] = False,
) -> None:
    """A stratified blind sample (without the judge's labels) for human annotation."""
    check_sample_out(out, overwrite=overwrite)
    try:
        people = load_personas(personas_file) if personas_file else None
        items = draw_sample(run_dir, per_class=per_class, seed=seed, personas=people)
        write_jsonl(items, out)
    except (MirageError, OSError) as exc:
        fail(str(exc))
    console.print(
        f"{len(items)} claims written to {out}: fill in each 'label' "
        "(GROUNDED, INFERRED_REASONABLE, INFERRED_STEREOTYPE, FABRICATED), then run "
        f"mirage bench judge-agreement {out} --run-dir {run_dir}"
    )


@app.command("judge-agreement")
def judge_agreement(
    labelled: Annotated[Path, typer.Argument(help="the sample with human labels filled in")],
    run_dir: Annotated[Path | None, typer.Option(help="run whose judge to compare")] = None,
    judge_labels_file: Annotated[
        Path | None,
        typer.Option("--judge-labels", help="or: any judge's labels as JSONL {item_id, label}"),
    ] = None,
    out: Annotated[Path | None, typer.Option(help="also write the figures as JSON")] = None,
) -> None:
    """Cohen's κ (4-class and binary), per-class F1 and confusion matrix, judge vs human."""

    if (run_dir is None) == (judge_labels_file is None):
        raise typer.BadParameter("give exactly one of --run-dir or --judge-labels")
    try:
        judge = judge_labels(run_dir) if run_dir else read_labels(judge_labels_file)  # type: ignore[arg-type]
        result = compare(read_labels(labelled), judge)
    except (MirageError, OSError) as exc:
        fail(str(exc))
    table = Table(title=f"judge vs human on {result.n} claims")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("accuracy 4-class", f"{result.accuracy:.3f}")
    table.add_row("Cohen's κ 4-class", f"{result.kappa:.3f}")
    table.add_row("accuracy binary (OI vs not)", f"{result.accuracy_binary:.3f}")
    table.add_row("Cohen's κ binary", f"{result.kappa_binary:.3f}")
    for label, score in result.per_class.items():
        table.add_row(f"F1 {label} (n={int(score['support'])})", f"{score['f1']:.3f}")
    console.print(table)
    confusion = Table(title="confusion (rows human, columns judge)")
    confusion.add_column("")
    for c in result.classes:
        confusion.add_column(c[:12], justify="right")
    for c, row in zip(result.classes, result.confusion, strict=True):
        confusion.add_row(c, *map(str, row))
    console.print(confusion)
    if out:
        out.write_text(agreement_json(result), encoding="utf-8")
