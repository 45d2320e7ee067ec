"""``mirage bench collapse``: run, report, judge-sample, judge-agreement (persona collapse)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, NoReturn
from urllib.parse import urlsplit

import anyio
import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.adapters._label_sample import check_out
from mirage_guard.benchmark import (
    ProviderFactory,
    RunSummary,
    RuntimeOptions,
    is_offline,
    litellm_provider,
)
from mirage_guard.benchmark.collapse import (
    CollapseConfig,
    CollapseRun,
    Condition,
    MemoryArm,
    PersonaThresholds,
    agreement_as_json,
    collapse_offline_llm,
    compare_ratings,
    draw_blind_sample,
    judge_ratings,
    read_ratings,
    write_collapse_report,
    write_sample,
)
from mirage_guard.guard.errors import InputError, MirageError
from mirage_guard.guard.llm import LLMClient, missing_provider_keys

app = typer.Typer(
    help="Persona collapse: does a model take the stance an advice situation needs?",
    no_args_is_help=True,
)
console = Console()


def fail(message: str) -> NoReturn:
    """``error: message`` on one line (never wrapped, brackets printed as they are), exit 1."""
    console.print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(1)


def check_sample_out(out: Path, *, overwrite: bool) -> None:
    """``report label-sample``'s refusal, before anything is drawn (a folder, or a file whose
    hand-filled labels would be lost unless ``overwrite``), as one line and exit 1."""
    try:
        check_out(out, overwrite=overwrite)
    except InputError as exc:
        fail(str(exc))


_FLAG_OF = {
    "mock_latency_s": "--mock-latency-ms",
    "task_stop": "--stop",
    "families": "--family",
    "mapping": "--h-band/--e-band",
}
"""Fields of a run's config or options whose flag is not the field's name with dashes."""


def invalid_options(exc: ValidationError) -> str:
    """The first error of a config or options model, on one line, named by its flag."""
    first = exc.errors()[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    if not first["loc"]:
        return message
    field = str(first["loc"][0])
    return f"{_FLAG_OF.get(field, '--' + field.replace('_', '-'))}: {message}"


def missing_keys(models: list[str], options: RuntimeOptions) -> dict[str, list[str]]:
    """Provider env vars litellm says are missing, per model (mock/ models skip). A model with
    its own ``--api-base`` is checked too, with that endpoint: litellm's ``openai/`` client
    needs OPENAI_API_KEY even for a local server (it stopped the run with a traceback after the
    first calls), ``ollama/`` needs nothing more and ``hosted_vllm/`` needs none."""
    missing: dict[str, list[str]] = {}
    for model in models:
        if is_offline(model):
            continue
        keys = missing_provider_keys(model, options.api_base_for(model))
        if keys:
            missing[model] = keys
    return missing


def runtime_options(**values: object) -> RuntimeOptions:
    """The run's options, or one line naming the flag out of range, exit 1."""
    try:
        return RuntimeOptions.model_validate(values)
    except ValidationError as exc:
        fail(invalid_options(exc))


def split_values(values: list[str] | None) -> list[str]:
    return [part.strip() for v in values or [] for part in v.split(",") if part.strip()]


def parse_api_bases(values: list[str] | None) -> tuple[str | None, dict[str, str]]:
    """``URL`` (for every hosted_vllm/... model) and ``MODEL=URL`` items; an item that is
    neither is an :class:`InputError` naming it (before any call: it was sent as a URL)."""
    shared: str | None = None
    per_model: dict[str, str] = {}
    for value in split_values(values):
        head = value.split("://", 1)[0]
        model, url = value.split("=", 1) if "=" in head else ("*", value)
        parts = urlsplit(url)
        if not model or parts.scheme not in ("http", "https") or not parts.netloc:
            raise InputError(
                f"--api-base: {value!r} is neither a URL (e.g. http://host:8000/v1) nor MODEL=URL"
            )
        if model == "*":
            shared = url
        else:
            per_model[model] = url
    return shared, per_model


def collapse_provider(options: RuntimeOptions) -> ProviderFactory:
    """``mock/...`` models answer by the collapse mock rule; every other string goes to litellm."""
    real = litellm_provider(options)

    def factory(model: str) -> LLMClient:
        if is_offline(model):
            return collapse_offline_llm(model, latency_s=options.mock_latency_s)
        return real(model)

    return factory


def _thresholds(h_band: float | None, e_band: float | None) -> PersonaThresholds | None:
    if h_band is None and e_band is None:
        return None
    default = PersonaThresholds()
    return PersonaThresholds(
        h_band=default.h_band if h_band is None else h_band,
        e_band=default.e_band if e_band is None else e_band,
    )


def _print_summary(summary: RunSummary) -> None:
    table = Table(title=f"run {summary.run_dir}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    acc = summary.accounting
    table.add_row("units done / resumed", f"{summary.units_done} / {summary.units_resumed}")
    table.add_row("failed units", str(summary.errors))
    table.add_row("LLM calls (cache hits)", f"{acc.calls} ({acc.cached_calls})")
    table.add_row("tokens in / out", f"{acc.prompt_tokens:,} / {acc.completion_tokens:,}")
    table.add_row("cost USD", acc.cost_summary())
    console.print(table)
    for message in summary.error_messages[:10]:
        console.print(f"[yellow]failed:[/] {message}")


@app.command("run")
def run(
    models: Annotated[
        list[str],
        typer.Option(
            "--models",
            help="subject models, litellm strings, comma-separated or repeated (mock/... offline)",
        ),
    ],
    judge: Annotated[str, typer.Option(help="independent judge model (temperature 0)")],
    run_dir: Annotated[
        Path | None,
        typer.Option("--run-dir", help="run directory; one with the same config is resumed"),
    ] = None,
    contexts: Annotated[
        list[str] | None, typer.Option(help="contexts to ask (default: all 14)")
    ] = None,
    limit: Annotated[
        int | None, typer.Option(help="at most this many situations per context")
    ] = None,
    conditions: Annotated[
        list[str] | None, typer.Option(help="instruct, plan_first, oracle; default all")
    ] = None,
    memory: Annotated[
        list[str] | None,
        typer.Option(help="memory arms: none, resample, clean, polluted, guarded; default none"),
    ] = None,
    memory_condition: Annotated[
        Condition, typer.Option(help="the condition the memory arms are asked under")
    ] = Condition.INSTRUCT,
    memory_claims: Annotated[
        int, typer.Option(help="over-inferred claims in a polluted memory")
    ] = 6,
    memory_split: Annotated[
        str, typer.Option(help="MirageBench personas of this claims split (dev; 'all' for every)")
    ] = "dev",
    situations_file: Annotated[Path | None, typer.Option(help="situations JSONL")] = None,
    reference_file: Annotated[Path | None, typer.Option(help="reference distributions")] = None,
    h_band: Annotated[float, typer.Option(help="Technician iff |H| <= h_band and ...")] = 0.25,
    e_band: Annotated[
        float, typer.Option(help="... |E| <= e_band (recorded in the manifest)")
    ] = 0.25,
    seed: Annotated[int, typer.Option(help="sampling seed (part of every cache key)")] = 0,
    concurrency: Annotated[int, typer.Option(help="in-flight calls per subject model")] = 8,
    judge_concurrency: Annotated[int, typer.Option(help="in-flight judge calls")] = 8,
    api_base: Annotated[
        list[str] | None,
        typer.Option(
            help="URL of the vLLM server for every hosted_vllm/... model "
            "(e.g. http://host:8000/v1), or MODEL=URL for one model; repeatable"
        ),
    ] = None,
    max_tokens: Annotated[
        int,
        typer.Option(
            help="answer length cap per call (answers, plans, judge); an answer cut at it is a "
            "failed unit. Part of the run's config hash"
        ),
    ] = 1024,
    retry_failed: Annotated[
        bool,
        typer.Option(
            help="on resume, redo every failed unit (truncated, empty, unparsable), "
            "not only the transient ones"
        ),
    ] = False,
    cache_dir: Annotated[
        Path | None, typer.Option(help="call cache shared across runs (default RUN_DIR/cache)")
    ] = None,
    mock_latency_ms: Annotated[float, typer.Option(help="latency of mock/... models, ms")] = 0.0,
    check_keys: Annotated[
        bool, typer.Option(help="refuse to start when a provider's API key is missing")
    ] = True,
) -> None:
    """Run (or resume) the persona-collapse diagnostic."""
    try:
        config = CollapseConfig(
            models=split_values(models),
            judge=judge,
            contexts=split_values(contexts),
            limit=limit,
            conditions=[Condition(c) for c in split_values(conditions)] or list(Condition),
            memory=[MemoryArm(m) for m in split_values(memory)] or [MemoryArm.NONE],
            memory_condition=memory_condition,
            memory_claims=memory_claims,
            memory_split=None if memory_split == "all" else memory_split,
            situations_file=str(situations_file) if situations_file else None,
            reference_file=str(reference_file) if reference_file else None,
            mapping=PersonaThresholds(h_band=h_band, e_band=e_band),
            seed=seed,
            max_tokens=max_tokens,
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
        progress=False,
        mock_latency_s=mock_latency_ms / 1000,
        retry_failed=retry_failed,
    )
    everyone = [*config.models, config.judge]
    if check_keys:
        absent = missing_keys(everyone, options)
        for model, keys in absent.items():
            console.print(f"[red]error:[/] {model} needs {' or '.join(keys) or 'credentials'}")
        if absent:
            console.print("set the keys (or pass --no-check-keys to try anyway)")
            raise typer.Exit(2)
    target = run_dir or Path("runs") / datetime.now(UTC).strftime("collapse-%Y%m%d-%H%M%S")
    try:
        runner = CollapseRun(
            config,
            target,
            provider=collapse_provider(options),
            options=options,
            cache_dir=cache_dir,
            offline_models=[m for m in everyone if is_offline(m)],
        )
        summary = anyio.run(runner.run)
    except MirageError as exc:
        fail(str(exc))
    _print_summary(summary)
    console.print(f"report: mirage bench collapse report {target}")


@app.command("report")
def report(
    run_dir: Annotated[Path, typer.Argument(help="a collapse run directory")],
    out: Annotated[
        Path | None, typer.Option(help="output directory (default RUN_DIR/report)")
    ] = None,
    h_band: Annotated[
        float | None, typer.Option(help="override the run's Technician |H| band")
    ] = None,
    e_band: Annotated[
        float | None, typer.Option(help="override the run's Technician |E| band")
    ] = None,
    resamples: Annotated[int, typer.Option(help="bootstrap resamples")] = 2000,
) -> None:
    """Markdown + one self-contained HTML page with the persona-share chart + cells.csv."""
    try:
        files = write_collapse_report(
            run_dir, out, thresholds=_thresholds(h_band, e_band), resamples=resamples
        )
    except MirageError as exc:
        fail(str(exc))
    console.print(f"markdown: {files.markdown}")
    console.print(f"html:     {files.html}")
    console.print(f"cells:    {files.leaderboard}")


@app.command("judge-sample")
def judge_sample(
    run_dir: Annotated[Path, typer.Argument(help="a collapse run directory with scores")],
    out: Annotated[Path, typer.Option(help="blind sample JSONL")] = Path("collapse_sample.jsonl"),
    per_persona: Annotated[int, typer.Option(help="answers per judged persona")] = 20,
    seed: Annotated[int, typer.Option(help="sampling seed")] = 0,
    overwrite: Annotated[
        bool, typer.Option(help="replace --out if it exists (its ratings are lost)")
    ] = False,
) -> None:
    """A stratified blind sample of answers (no model, condition or judge score) to rate."""
    check_sample_out(out, overwrite=overwrite)
    try:
        items = draw_blind_sample(run_dir, per_persona=per_persona, seed=seed)
        write_sample(items, out)
    except (MirageError, OSError) as exc:
        fail(str(exc))
    console.print(
        f"{len(items)} answers written to {out}: fill in 'persona' (Healer, Stoic, Technician, "
        "Enabler, Doomer) or 'H' and 'E' in [-1, 1], then run "
        f"mirage bench collapse judge-agreement {out} --run-dir {run_dir}"
    )


@app.command("judge-agreement")
def judge_agreement(
    rated: Annotated[Path, typer.Argument(help="the sample with human ratings filled in")],
    run_dir: Annotated[Path, typer.Option(help="the run whose judge to compare")],
    out: Annotated[Path | None, typer.Option(help="also write the figures as JSON")] = None,
) -> None:
    """Cohen's κ over the five personas, per-class F1, confusion, Pearson r of H and E."""
    try:
        result = compare_ratings(read_ratings(rated), judge_ratings(run_dir))
    except MirageError as exc:
        fail(str(exc))
    table = Table(title=f"judge vs human on {result.n} answers")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("accuracy (5 personas)", f"{result.accuracy:.3f}")
    table.add_row("Cohen's κ (5 personas)", f"{result.kappa:.3f}")
    for axis, r in (("H", result.pearson_h), ("E", result.pearson_e)):
        table.add_row(f"Pearson r of {axis}", "–" if r is None else f"{r:.3f}")
    for label, score in result.per_class.items():
        table.add_row(f"F1 {label} (n={int(score['support'])})", f"{score['f1']:.3f}")
    console.print(table)
    confusion = Table(title="confusion (rows human, columns judge)")
    confusion.add_column("")
    for c in result.classes:
        confusion.add_column(c, justify="right")
    for c, row in zip(result.classes, result.confusion, strict=True):
        confusion.add_row(c, *map(str, row))
    console.print(confusion)
    if out:
        out.write_text(agreement_as_json(result), encoding="utf-8")
