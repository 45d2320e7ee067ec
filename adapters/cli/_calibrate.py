"""`mirage calibrate ...`: fit, audit, compare and list calibration profiles."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mirage_guard.adapters._bench_calibration import (
    FromBench,
    alignment_table,
    figures_table,
    transfer_rich,
    write_report,
)
from mirage_guard.adapters.cli._guard import SupportDirOpt, _print_report, _typed_errors
from mirage_guard.benchmark import SemanticMatcher, load_personas, run_models
from mirage_guard.calibration import (
    DEFAULT_FLOORS,
    Example,
    FeatureTable,
    HeldOutGuard,
    JudgedClaims,
    Objective,
    PairReport,
    PairSide,
    TrainConfig,
    TrainHalf,
    authored_side,
    check_not_an_input,
    check_writable,
    choose_threshold,
    collect_verdicts,
    conversation_key,
    cross_validate,
    decide_all,
    evaluate,
    featurize,
    file_sha256,
    fit_profile,
    guard_metrics,
    held_out_metrics,
    heldout_guard_eval,
    labelled_set_pairs,
    load_authored,
    load_examples,
    load_verdicts,
    oi_scores,
    packaged,
    pair_report,
    precision_recall_at,
    quick_sets,
    read_verdict_file,
    render_support_report,
    resolve_data,
    resolve_precision,
    run_stated_floor,
    run_support_report,
    save_verdicts,
    score_claims,
    summarize_scores,
    train_half,
    train_support,
    write_pairs,
    write_whole,
)
from mirage_guard.guard import (
    AuditMode,
    AuditVerdict,
    Guard,
    GuardSettings,
    SelfAuditor,
    profile_embedders,
    settings_limits,
    settings_policy,
)
from mirage_guard.guard.errors import InputError, MirageError
from mirage_guard.guard.evidence import (
    ClaimSupport,
    CrossSupportModel,
    EvidenceLinker,
    TokenAligner,
    shared_minilm,
    shipped_linker,
)
from mirage_guard.guard.llm import RetryingLLM, SamplingParams, create_llm, mode_of
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode, ProfileStore

app = typer.Typer(help="Fit per-model calibration profiles; refuse cross-model reuse.")
console = Console()

PairsOpt = Annotated[
    Path | None,
    typer.Option("--pairs", help="folder of hand-written support pairs (default: packaged)"),
]
DataOpt = Annotated[
    Path | None, typer.Option("--data", help="labelled claims JSONL (default: packaged)")
]
PersonasOpt = Annotated[
    Path | None, typer.Option("--personas", help="personas JSONL for persona_id claims")
]


def _objective(value: str) -> str:
    """A threshold objective checked before any work (a usage error, not a traceback)."""
    try:
        Objective.parse(value)
    except InputError as exc:
        raise typer.BadParameter(str(exc)) from exc
    return value


# the over-inference threshold: what it must meet on the fitting claims
OiObjectiveOpt = Annotated[
    str, typer.Option(callback=_objective, help="e.g. recall>=0.9 (see --stated-objective)")
]
# the gate of a stated fact: a claim is stored as one only above the threshold that meets this
# on the fitting claims (stricter: fewer facts, fewer of them wrong)
StatedObjectiveOpt = Annotated[
    str,
    typer.Option(
        callback=_objective,
        help="what the stated-vs-inferred threshold must meet on the fitting claims, e.g. "
        "precision>=0.95 (stricter: fewer claims stored as facts)",
    ),
]


def _linker(support_dir: Path | None = None) -> EvidenceLinker:
    """The shipped linker, with the claim-support model of ``support_dir`` (default:
    ``MIRAGE_SUPPORT_DIR``) when one is given."""
    return shipped_linker(support_dir=support_dir or GuardSettings.from_env().support_dir)


def _with_held_out(
    profile: CalibrationProfile, split: str, scored: dict[str, float | list[float]]
) -> CalibrationProfile:
    """The profile with its held-out figures recorded next to the training ones."""
    held_out = {f"{split}_{k}": v for k, v in scored.items()}
    return profile.model_copy(update={"metrics": {**profile.metrics, **held_out}})


def _show_metrics(title: str, metrics: dict[str, float | list[float]]) -> None:
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in metrics.items():
        shown = f"[{v[0]:.3f}, {v[1]:.3f}]" if isinstance(v, list) else f"{v:.3f}"
        table.add_row(k, shown)
    console.print(table)


SHIPPED_PROFILE = Path("guard/scoring/profiles/evidence-only.json")
SHIPPED_SUPPORT = Path("guard/evidence/support_cross")


def _in_checkout(out: Path, shipped: Path) -> None:
    """The default ``--out`` regenerates a shipped file of the repository: refused anywhere but
    a checkout's root (it made a stray ``guard/...`` tree in the user's directory)."""
    if out == shipped and not shipped.parent.is_dir():
        raise InputError(
            f"--out defaults to the shipped {shipped}, which only a checkout of the repository "
            "has: run this from its root to regenerate it, or pass --out"
        )


@app.command("fit-evidence")
def fit_evidence(
    data: DataOpt = None,
    personas: PersonasOpt = None,
    out: Annotated[Path, typer.Option(help="where to write the profile")] = SHIPPED_PROFILE,
    split: Annotated[str, typer.Option(help="split to fit on")] = "train",
    eval_split: Annotated[str, typer.Option(help="split to report on")] = "dev",
    oi_objective: OiObjectiveOpt = "recall>=0.8",
    stated_objective: StatedObjectiveOpt = "precision>=0.85",
    support_dir: Annotated[
        Path | None,
        typer.Option(
            help="a claim-support model folder of `train-support` to fit the profile for "
            "(default: MIRAGE_SUPPORT_DIR, else the shipped one); the profile records its sha256"
        ),
    ] = None,
) -> None:
    """Fit the evidence-only profile (no LLM) on labelled claims. This made the shipped one.

    On the train split it fits on the profile half only: the claim-support model learned from the
    other half, so its outputs are weighed as they come out on conversations it never saw.
    """
    _in_checkout(out, SHIPPED_PROFILE)
    check_writable(out, "the profile")
    path = data or packaged("claims.jsonl")
    try:
        linker = _linker(support_dir)
    except MirageError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    examples = load_examples(path, personas=personas, split=split)
    if split == "train":
        examples = train_half(examples, TrainHalf.PROFILE)
    table = featurize(examples, linker)
    profile = fit_profile(
        table,
        mode=ProfileMode.EVIDENCE,
        data_path=path,
        split=split,
        embedder=linker.embedder.name,
        oi_objective=oi_objective,
        stated_objective=stated_objective,
        support_model=linker.support_sha256,
    )
    held_out = featurize(load_examples(path, personas=personas, split=eval_split), linker)
    scored = summarize_scores(profile, held_out)
    profile = _with_held_out(profile, eval_split, scored)
    write_whole(
        out, [profile.model_dump_json(indent=2)], "the profile"
    )  # a reload never reads half
    _show_metrics(f"evidence-only profile -> {out}", dict(profile.metrics))


@app.command("stated-floor")
def stated_floor_cmd(
    data: Annotated[
        Path | None,
        typer.Option(help="your labelled claims: a claims file or a set folder (as guard eval)"),
    ] = None,
    personas: PersonasOpt = None,
    split: Annotated[str | None, typer.Option(help="only this split, e.g. dev")] = None,
    conversations: Annotated[
        Path | None, typer.Option(help="conversations JSONL for conversation_id claims")
    ] = None,
    profile_dir: Annotated[
        Path | None,
        typer.Option(
            help="directory with the profiles the guard runs with",
            exists=True,
            file_okay=False,
        ),
    ] = None,
    support_dir: SupportDirOpt = None,
    verdicts: Annotated[
        Path | None, typer.Option(help="self-audit verdicts JSONL (its model's profile decides)")
    ] = None,
    floor: Annotated[
        list[float] | None,
        typer.Option(
            help="a floor to measure (repeatable; default 0.6 0.7 0.8 0.85 0.9 0.95); no floor "
            "is always measured too"
        ),
    ] = None,
    target_precision: Annotated[
        float,
        typer.Option(
            help="the share of stored stated facts that must be labelled stated (0-1]: the "
            "lowest floor that meets it is recommended"
        ),
    ] = 0.9,
    n_boot: Annotated[int, typer.Option(min=1, help="bootstrap resamples for the CIs")] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Measure MIRAGE_STATED_MIN, the floor on P(stated), on your own labelled claims.

    Each floor's decisions are made by the real guard (the one `guard eval` runs, with every
    word rule): how many claims it stores as stated facts, how many of them are labelled stated
    (with a 95 % CI over conversations), the stated recall, the generated and inferred claims
    stored as facts, and 3-way accuracy. Recommends the lowest floor whose stated precision meets
    --target-precision; set it with MIRAGE_STATED_MIN.
    """
    with _typed_errors():
        report = run_stated_floor(
            data=data,
            personas=personas,
            split=split,
            conversations=conversations,
            profile_dir=profile_dir,
            support_dir=support_dir,
            verdicts=verdicts,
            floors=floor or DEFAULT_FLOORS,
            target_precision=target_precision,
            n_boot=n_boot,
        )
    if as_json:
        console.print_json(report.model_dump_json())
        return
    counts = ", ".join(f"{k} {v}" for k, v in report.labelled.items())
    table = Table(
        title=escape(
            f"stated floor on {report.data} (n={report.n}: {counts}; profile "
            f"{report.profile_id}, its threshold {report.profile_threshold:.3f})"
        )
    )
    table.caption = (
        "stated: claims stored as stated facts; prec.: the share of them labelled stated "
        "(95 % CI over conversations); recall: of the claims labelled stated; gen. / inf.: "
        "claims labelled generated / inferred stored as stated; 3-way: 3-way accuracy"
    )
    # short headers: the rows fit an 80-column console whole (longer ones cut the floor to "0.…")
    for column in ("floor", "stated", "prec.", "95 % CI", "recall", "gen.", "inf.", "3-way"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in report.rows:
        lo, hi = row.precision_ci
        table.add_row(
            "none" if row.floor is None else f"{row.floor:.2f}",
            str(row.stated),
            f"{row.precision:.3f}",
            f"[{lo:.3f}, {hi:.3f}]",
            f"{row.recall:.3f}",
            str(row.generated_as_stated),
            str(row.inferred_as_stated),
            f"{row.accuracy:.3f}",
        )
    console.print(table)
    target = f"stated precision >= {report.target_precision:g}"
    if not report.reached:
        console.print(f"[yellow]no floor measured reaches {target}[/]")
    elif report.recommended is None:
        console.print(f"{target} without a floor: leave MIRAGE_STATED_MIN unset")
    else:
        console.print(f"{target}: MIRAGE_STATED_MIN={report.recommended:g}")


@app.command("train-support")
def train_support_cmd(
    out: Annotated[Path, typer.Option(help="model folder to write")] = SHIPPED_SUPPORT,
    data: DataOpt = None,
    personas: PersonasOpt = None,
    epochs: Annotated[int, typer.Option(help="passes over the pairs")] = TrainConfig().epochs,
    limit: Annotated[int | None, typer.Option(help="first N pairs only (tests)")] = None,
    pairs: PairsOpt = None,
    extra_pairs: Annotated[
        list[Path] | None,
        typer.Option(
            help="another folder of hand-written pairs to train on too (repeatable; e.g. "
            "benchmark/data/support_pairs/next; the shipped weights used none)"
        ),
    ] = None,
    authored_repeat: Annotated[
        int,
        typer.Option(
            min=1,
            help="times each hand-written pair (and what the rules make of it) is seen per epoch",
        ),
    ] = TrainConfig().authored_repeat,
    other_messages: Annotated[
        int,
        typer.Option(
            min=0,
            help="per hand-written message, this many claims of other messages (sharing none of "
            "its content words) as unsupported pairs (the shipped weights: 0)",
        ),
    ] = TrainConfig().other_messages,
    seed: Annotated[
        int,
        typer.Option(
            help="seed of the rule-made pairs, the shuffling and the head's start (the shipped "
            "weights: 13); retrains differ by seed more than many changes do, so compare a "
            "change over several"
        ),
    ] = TrainConfig().seed,
    subject_forms: Annotated[
        bool,
        typer.Option(
            help="give every bare memory entry in the pairs a subject drawn from none, 'User', "
            "'The user' and 'You', the same mix in every class"
        ),
    ] = TrainConfig().subject_forms,
    name_subjects: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="this share of the bare memory entries in the pairs get a first name as "
            "subject, read as the user's ('Kofi works nights'; the shipped weights: 0)",
        ),
    ] = TrainConfig().name_subjects,
    nearest_negatives: Annotated[
        bool,
        typer.Option(
            "--nearest-negatives/--random-negatives",
            help="read each fabricated or stereotyped claim of the labelled data against the user "
            "turns nearest to it, as the guard picks them, or against a random turn of its "
            "conversation (the shipped weights: random)",
        ),
    ] = TrainConfig().nearest_negatives,
    swapped_words: Annotated[
        bool,
        typer.Option(
            help="add each claim with a word of a closed class its turn says (a relative, a "
            "pet, a diet, a field of study, ...) swapped for another of the class, as "
            "contradicted (the shipped weights: none)"
        ),
    ] = TrainConfig().swapped_words,
    precision: Annotated[
        str,
        typer.Option(
            help="fp32 (how the shipped weights were made), bf16, or auto (bf16 where the CPU "
            "has bf16 units: AMX or AVX512-BF16)"
        ),
    ] = TrainConfig().precision,
    layers: Annotated[
        int,
        typer.Option(
            min=1,
            max=6,
            help="encoder layers of the model trained (MiniLM has 6; fewer is faster, each layer "
            "about a sixth of a pair's time)",
        ),
    ] = TrainConfig().layers,
    frozen_layers: Annotated[
        int,
        typer.Option(
            min=0,
            max=6,
            help="keep the embeddings and the first N encoder layers as MiniLM has them (the "
            "shipped weights: 0, every layer learns)",
        ),
    ] = TrainConfig().frozen_layers,
    teacher: Annotated[
        Path | None,
        typer.Option(
            help="a trained support-model folder (e.g. the shipped one) to distil: the model "
            "starts from --layers of its layers and learns its class probabilities too"
        ),
    ] = None,
    distill_weight: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="with --teacher: weight of its probabilities")
    ] = TrainConfig().distill_weight,
    temperature: Annotated[
        float, typer.Option(min=0.1, help="with --teacher: softening of its probabilities")
    ] = TrainConfig().temperature,
) -> None:
    """Fine-tune the claim-support cross-encoder on the support half of the train split and the
    train side of the hand-written pairs (deterministic, 12-20 min on 2 idle cores); measure it on
    the pairs' test side. This made the shipped one."""
    _in_checkout(out, SHIPPED_SUPPORT)
    try:
        resolve_precision(precision)
    except InputError as exc:
        raise typer.BadParameter(str(exc), param_hint="--precision") from exc
    path = data or packaged("claims.jsonl")
    examples = train_half(load_examples(path, personas=personas, split="train"), TrainHalf.SUPPORT)
    cfg = TrainConfig(
        epochs=epochs,
        authored_repeat=authored_repeat,
        precision=precision,
        other_messages=other_messages,
        seed=seed,
        subject_forms=subject_forms,
        name_subjects=name_subjects,
        nearest_negatives=nearest_negatives,
        swapped_words=swapped_words,
        layers=layers,
        frozen_layers=frozen_layers,
        teacher="" if teacher is None else str(teacher),
        distill_weight=distill_weight,
        temperature=temperature,
    )
    authored = load_authored(pairs) + [p for f in extra_pairs or [] for p in load_authored(f)]
    result = train_support(examples, out, data_path=path, cfg=cfg, limit=limit, authored=authored)
    console.print(
        f"{result.n_pairs} pairs {result.per_class} in {result.seconds:.0f} s -> {result.out} "
        f"({result.size_bytes / 1e6:.1f} MB, sha256 {result.sha256})"
    )
    if result.authored_test is not None:
        _show_pair_report("hand-written test pairs (never trained on)", result.authored_test)


@app.command("pair-report")
def pair_report_cmd(
    support_dir: Annotated[
        Path | None, typer.Option(help="support model folder (default: the shipped one)")
    ] = None,
    pairs: PairsOpt = None,
    side: Annotated[PairSide, typer.Option(help="which side of the hand-written pairs")] = (
        PairSide.TEST
    ),
) -> None:
    """How a support model reads the hand-written pairs: accuracy, per-class P/R/F1, confusion."""
    chosen = authored_side(load_authored(pairs), side)
    report = pair_report(CrossSupportModel(support_dir), chosen)
    _show_pair_report(f"hand-written pairs, {side.value} side", report)


def _show_pair_report(title: str, r: PairReport) -> None:
    console.print(f"{title}: n={r.n} accuracy {r.accuracy:.3f} macro-F1 {r.macro_f1:.3f}")
    table = Table("class", "P", "R", "F1", "n", *(f"-> {c}" for c in r.confusion))
    for name, f in r.per_class.items():
        row = [str(v) for v in r.confusion[name].values()]
        table.add_row(name, f"{f.precision:.3f}", f"{f.recall:.3f}", f"{f.f1:.3f}",
                      str(f.support), *row)  # fmt: skip
    console.print(table)
    cases = Table("case", "n", "accuracy")
    for case, (n, acc) in r.by_case.items():
        cases.add_row(case, str(n), f"{acc:.2f}")
    console.print(cases)


@app.command("labelled-pairs")
def labelled_pairs_cmd(
    data: Annotated[
        list[Path],
        typer.Option(help="a labelled set folder (claims.jsonl + conversations.jsonl); repeatable"),
    ],
    out: Annotated[Path, typer.Option(help="folder to write part_<set>.jsonl files into")],
    support_dir: Annotated[
        Path | None,
        typer.Option(help="claim-support model the linker reads with (default: the shipped one)"),
    ] = None,
) -> None:
    """Turn labelled sets into (user turn, claim, class) pairs for `train-support --extra-pairs`.

    GROUNDED -> entailed and INFERRED_REASONABLE -> inferable against their source turn; other
    claims against the turn the guard links them to. A set used so is training data from then on.
    """
    try:
        linker = _linker(support_dir)
        for folder in data:
            pairs = labelled_set_pairs(folder, linker)
            path = out / f"part_{folder.name}.jsonl"
            write_pairs(pairs, path)
            counts = Counter(p.label for p in pairs)
            console.print(f"{path}: {len(pairs)} pairs {dict(sorted(counts.items()))}")
    except MirageError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc


@app.command("support-report")
def support_report(
    support_dir: Annotated[
        Path | None, typer.Option(help="support model folder (default: the shipped one)")
    ] = None,
    sets: Annotated[list[str] | None, typer.Option("--set", help="only these sets")] = None,
    out: Annotated[Path | None, typer.Option(help="also write the table here (markdown)")] = None,
) -> None:
    """Current features vs +A (token alignment) vs +C (cross-encoder); fitted on train only."""
    emb = shared_minilm()
    support = ClaimSupport(CrossSupportModel(support_dir), TokenAligner())
    rows = run_support_report(EvidenceLinker(emb, support=support), sets=quick_sets(sets))
    table = render_support_report(rows)
    console.print(table)
    if out is not None:
        out.write_text(table + "\n\nRegenerate: `mirage calibrate support-report`\n", "utf-8")


@app.command("audit")
def audit(
    writer_model: Annotated[
        str,
        typer.Option(
            "--writer-model",
            "--model",
            help="litellm model string of the model to calibrate: the writer (it audits itself) "
            "or an independent auditor (MIRAGE_AUDITOR_MODEL)",
        ),
    ],
    out: Annotated[Path, typer.Option(help="verdicts JSONL to write")],
    data: DataOpt = None,
    personas: PersonasOpt = None,
    api_base: Annotated[str | None, typer.Option(help="e.g. a vLLM server URL")] = None,
    concurrency: int = 4,
    max_tokens: Annotated[
        int | None, typer.Option(help="cap each answer (a weak model may never stop)")
    ] = None,
    timeout_s: Annotated[
        float, typer.Option("--timeout", help="seconds one conversation's audit may take")
    ] = 120.0,
    as_auditor: Annotated[
        bool,
        typer.Option(
            "--as-auditor",
            help='ask with the independent auditor\'s prompt ("another assistant wrote ..."): '
            "for a model the guard runs as MIRAGE_AUDITOR_MODEL; default: the self-audit prompt",
        ),
    ] = False,
) -> None:
    """Ask the model to audit every labelled claim (one call per conversation).

    The profile fitted on these verdicts is keyed by this model and the prompt: the self-audit
    prompt for a writer auditing its own memories (MIRAGE_WRITER_MODEL), ``--as-auditor`` for an
    independent auditor of another writer's (MIRAGE_AUDITOR_MODEL). It is used for no other.

    OUT is written whole at the end; when no call gave a verdict it is left as it was (exit 1).
    """
    check_not_an_input(out, [data or packaged("claims.jsonl"), personas], "the verdicts")
    check_writable(out, "the verdicts")  # before any call, not after them all
    examples = load_examples(data, personas=personas)
    auditor = (SelfAuditor.independent if as_auditor else SelfAuditor)(
        RetryingLLM(create_llm(writer_model, api_base=api_base, timeout_s=timeout_s)),
        timeout_s=timeout_s,
        params=SamplingParams(temperature=0.0, max_tokens=max_tokens),
    )
    verdicts, failed = anyio.run(
        lambda: collect_verdicts(examples, auditor, concurrency=concurrency)
    )
    mode = mode_of(writer_model, api_base)
    for conv_id, why in list(failed.items())[:20]:
        console.print(f"  failed {conv_id}: {why}", markup=False)
    save_verdicts(
        out,
        verdicts,
        writer_model=writer_model,
        prompt_version=auditor.prompt_version,
        structured_output=mode.value if mode else None,
        mode=ProfileMode.SELF_AUDIT_SEPARATE,
    )
    console.print(
        f"{len(verdicts)} verdicts from {writer_model} -> {out}; "
        f"{len(failed)} conversation(s) failed (not retried into the file); "
        f"structured output: {mode.value if mode else 'not decided'}"
    )


@app.command("fit")
def fit(
    verdicts: Annotated[Path, typer.Option(help="verdicts JSONL from `mirage calibrate audit`")],
    profile_dir: Annotated[Path, typer.Option(help="where profiles are kept")],
    data: DataOpt = None,
    personas: PersonasOpt = None,
    mode: Annotated[
        ProfileMode | None,
        typer.Option(
            help="the audit mode the labels are of (default: as the verdicts file records, "
            "else self_audit_separate)"
        ),
    ] = None,
    oi_objective: OiObjectiveOpt = "recall>=0.9",
    stated_objective: StatedObjectiveOpt = "precision>=0.85",
) -> None:
    """Fit a per-model self-audit profile (evidence + the model's own labels).

    The verdicts come from `mirage calibrate audit` (the labelled claims of --data), or from
    `mirage report label-sample --verdicts-out` (your own traffic's labels, separate or inline;
    --data is then the sample, labelled). Held-out figures: the dev split's claims when some
    have verdicts, else cross-validation (up to 5 folds), each user (a sample's group_id) or
    conversation whole in one fold; on them, the guard's own decisions with the profile (each
    fold with the profile fitted on the others), reported as `guard eval` reports a set."""
    read = read_verdict_file(verdicts)
    recorded = read.mode
    if mode is not None and recorded is not None and mode is not recorded:
        raise typer.BadParameter(
            f"the verdicts in {verdicts} are labels of {recorded.value}, not {mode.value}",
            param_hint="--mode",
        )
    mode = mode or recorded or ProfileMode.SELF_AUDIT_SEPARATE
    if not mode.uses_audit:
        raise typer.BadParameter("use `fit-evidence` for the evidence-only profile")
    by_claim, writer_model, prompt_version = read.verdicts, read.writer_model, read.prompt_version
    path = data or packaged("claims.jsonl")
    labelled = load_examples(path, personas=personas)
    claims_file, _ = resolve_data(path)  # a set folder's claims: what the profile records
    examples = [e for e in labelled if e.claim.claim_id in by_claim]
    if not examples:
        raise InputError(f"no labelled claim of {path} has a verdict in {verdicts}")
    if len(examples) < len(labelled) and data is not None:
        console.print(
            f"{len(labelled) - len(examples)} of the {len(labelled)} labelled claims of {path} "
            f"have no verdict in {verdicts}: left out of the fit",
            markup=False,
        )
    # a label from the decision log was given on its write's turns: read only those, as the
    # guard did (the sample shows the labeller the whole conversation)
    examples = [_on_write_turns(e, read.turn_ids.get(e.claim.claim_id)) for e in examples]
    earlier = [
        e
        for e in examples
        if e.claim.source_turn_id and e.claim.source_turn_id not in {t.id for t in e.turns}
    ]
    if earlier:
        console.print(
            f"{len(earlier)} stated or inferred claim(s) cite a turn outside the write they were "
            f"decided on (first: {earlier[0].claim.claim_id}, turn "
            f"{earlier[0].claim.source_turn_id}): the guard, reading that write's turns, had "
            "no such evidence; the fit keeps them as labelled",
            markup=False,
        )
    train = [e for e in examples if e.claim.split != "dev"]
    dev = [e for e in examples if e.claim.split == "dev"]
    linker = _linker()
    fit_mode = mode

    def fit_on(table: FeatureTable) -> CalibrationProfile:
        return fit_profile(
            table,
            mode=fit_mode,
            data_path=claims_file,
            split="train",
            embedder=linker.embedder.name,
            writer_model=writer_model,
            prompt_version=prompt_version,
            oi_objective=oi_objective,
            stated_objective=stated_objective,
            support_model=linker.support_sha256,
        )

    table = featurize(train, linker, by_claim)
    profile = fit_on(table)
    try:
        evidence = _evidence_profile(profile_dir, linker)
        settings = GuardSettings.from_env()

        def guard_for(fitted: CalibrationProfile) -> Guard:
            return _audit_guard(linker, evidence, fitted, settings)

        _say_in_sample(evidence, claims_file, dev or examples)
        if dev:
            scored = summarize_scores(profile, featurize(dev, linker, by_claim))
            profile = _with_held_out(profile, "dev", scored)
            profile = _guard_on_dev(profile, dev, by_claim, guard_for(profile), path)
        else:  # never the train claims' own figures as "dev": AUROC 1.000 on what it fitted
            profile = _cross_validated(profile, table, linker, by_claim, evidence, oi_objective)
            held = heldout_guard_eval(
                table, by_claim, fit=fit_on, guard_for=guard_for, data=f"{path.name}, held out"
            )
            profile = _guard_held_out(profile, held)
    except MirageError as exc:  # the fit stands: saved, with the figures computed so far
        console.print(
            f"warning: the figures on claims the profile was not fitted on could not all be "
            f"computed ({type(exc).__name__}: {exc}); the profile is saved with those that were",
            markup=False,
        )
    saved = ProfileStore(profile_dir).save(profile)
    _show_metrics(f"{profile.profile_id} -> {saved}", dict(profile.metrics))


def _audit_guard(
    linker: EvidenceLinker,
    evidence: CalibrationProfile,
    profile: CalibrationProfile,
    settings: GuardSettings,
) -> Guard:
    """The guard a deployment runs with ``profile`` (the evidence profile of the profile
    directory, the policy and request limits of the environment), given the labels with each
    write (the labeller's own verdicts: no model is called), in the profile's audit mode.
    ProfileMismatchError when no guard of this version would use ``profile`` (inline labels of
    an older extraction prompt)."""
    return Guard(
        linker=linker,
        evidence_profile=evidence,
        policy=settings_policy(settings),
        limits=settings_limits(settings),
        audit_mode=AuditMode.INLINE
        if profile.mode is ProfileMode.SELF_AUDIT_INLINE
        else AuditMode.SEPARATE,
        audit_profile=profile,
        writer_model=profile.writer_model,
    )


def _say_in_sample(evidence: CalibrationProfile, path: Path, judged: Sequence[Example]) -> None:
    """Warn when the evidence profile the guard runs with was fitted on claims the guard's
    figures are computed on (the packaged claims' train split, without dev verdicts)."""
    fitted = evidence.fitted_on
    seen = [e for e in judged if fitted.split in ("all", e.claim.split)]
    if not seen or not path.is_file() or fitted.sha256 != file_sha256(path):
        return
    console.print(
        f"warning: the evidence-only profile the guard runs with ({evidence.profile_id}) was "
        f"fitted on the {fitted.split} split of {path.name}, which holds {len(seen)} of the "
        f"{len(judged)} claims the guard's figures are computed on: those figures "
        "(dev_guard_* / heldout_guard_*, and heldout_evidence_*) are partly in-sample",
        markup=False,
    )


def _guard_on_dev(
    profile: CalibrationProfile,
    dev: list[Example],
    by_claim: dict[str, AuditVerdict],
    guard: Guard,
    path: Path,
) -> CalibrationProfile:
    """The dev claims decided by the guard with the new profile (``dev_guard_*``), shown as
    `guard eval` shows a labelled set."""
    try:
        decisions = anyio.run(partial(decide_all, guard, dev, by_claim))
    finally:
        guard.close()
    report = evaluate(dev, decisions, data=f"{path.name} [dev]")
    _print_report(report)
    return profile.model_copy(
        update={"metrics": {**profile.metrics, **guard_metrics(report, "dev")}}
    )


def _guard_held_out(profile: CalibrationProfile, held: HeldOutGuard) -> CalibrationProfile:
    """The guard's cross-validated figures (``heldout_guard_*``), shown as `guard eval` shows a
    labelled set, with the folds that could not be fitted."""
    for why in held.skipped:
        console.print(f"warning: the guard's held-out figures: {why}", markup=False)
    if held.report is None:
        console.print(
            "no held-out guard figures: too few users or conversations, or no fold could be "
            "fitted; label more",
            markup=False,
        )
        return profile
    console.print(
        f"the guard on each of {held.n_folds} folds, with the audit profile fitted on the "
        f"others ({held.report.n} claims):",
        markup=False,
    )
    _print_report(held.report)
    return profile.model_copy(
        update={"metrics": {**profile.metrics, **guard_metrics(held.report, "heldout")}}
    )


def _on_write_turns(example: Example, turn_ids: Sequence[str] | None) -> Example:
    """The example with only the turns of the write its label was given on (as it is when none
    are recorded, or none of them is in the sample's conversation)."""
    if not turn_ids:
        return example
    wanted = set(turn_ids)
    kept = tuple(t for t in example.turns if t.id in wanted)
    if not kept or len(kept) == len(example.turns):
        return example
    return replace(example, turns=kept, conversation_id=conversation_key(kept))


def _cross_validated(
    profile: CalibrationProfile,
    table: FeatureTable,
    linker: EvidenceLinker,
    by_claim: dict[str, AuditVerdict],
    evidence: CalibrationProfile,
    oi_objective: str,
) -> CalibrationProfile:
    """No dev split (your own labelled traffic, or verdicts on train claims only): held-out
    figures by K-fold cross-validation (K = 5, or the number of groups when fewer), each group
    (a claim's ``group_id``: one user of a traffic sample; else its conversation) whole in one
    fold. ``heldout_combined_*``: a logistic model on the evidence features and the label,
    refitted on each fold's training groups (without the quote features, the quote checks and
    the word rules); ``heldout_self_audit_*`` / ``heldout_evidence_*``: the label or the evidence
    alone. The guard's own figures on the same folds are :func:`heldout_guard_eval`'s."""
    claims = JudgedClaims(
        writer_model=profile.writer_model or "",
        prompt_version=profile.prompt_version or "",
        examples=table.examples,
        verdicts=by_claim,
    )
    cv = cross_validate(
        score_claims(claims, linker, evidence, table),  # the fit's features, not linked again
        Objective.parse(oi_objective),
    )
    figures = cv.figures
    if figures.note:
        console.print(
            f"no claim of a dev split has a verdict and no held-out figure could be computed "
            f"({figures.note.replace('personas', 'groups (users or conversations)')}): the "
            "figures below are the fit's own, in-sample",
            markup=False,
        )
        return profile
    console.print(
        f"no claim of a dev split has a verdict: held-out figures by {figures.n_folds}-fold "
        f"cross-validation over {figures.n_personas} groups (users, or conversations), each "
        "whole in one fold (heldout_combined_*: the profile's model of the evidence and the label "
        "refitted per fold, without the quote checks and word rules; heldout_self_audit_* / "
        "heldout_evidence_*: the label or the evidence alone; heldout_guard_*: the guard's own "
        "decisions, below)",
        markup=False,
    )
    combined = figures.paths["combined"]
    if combined.auroc is None or combined.n_scored < figures.n_claims:
        console.print(
            f"warning: the held-out combined figures scored {combined.n_scored} of "
            f"{figures.n_claims} claims"
            + (" and have no AUROC (a test fold with one class only)" if combined.auroc is None
               else "")
            + ": too few groups or over-inferences to measure this profile; label more",
            markup=False,
        )  # fmt: skip
    return profile.model_copy(update={"metrics": {**profile.metrics, **held_out_metrics(cv)}})


@app.command("compare")
def compare(
    profile: Annotated[Path, typer.Option(help="profile JSON fitted for model A")],
    verdicts: Annotated[Path, typer.Option(help="verdicts JSONL of model B")],
    data: DataOpt = None,
    personas: PersonasOpt = None,
) -> None:
    """What happens when model A's threshold is applied to model B (analysis only).

    The guard itself refuses such reuse; this shows why.
    """
    prof = CalibrationProfile.model_validate_json(profile.read_text(encoding="utf-8"))
    by_claim, model_b, _ = load_verdicts(verdicts)
    examples = [e for e in load_examples(data, personas=personas) if e.claim.claim_id in by_claim]
    linker = _linker()
    table = featurize(examples, linker, by_claim)
    p = oi_scores(prof, table)
    y = table.y_oi
    objective = Objective.parse(prof.objective.split(";")[0].removeprefix("oi:"))
    fitted_here = choose_threshold(p, y, objective)
    result = Table(title=f"{prof.writer_model}'s profile applied to {model_b}'s self-audit")
    for col in ("threshold", "from", "precision", "recall", "objective"):
        result.add_column(col)
    for label, thr in ((f"{prof.writer_model}'s", prof.oi_threshold), ("refit here", fitted_here)):
        prec, rec = precision_recall_at(p, y, thr)
        result.add_row(f"{thr:.3f}", label, f"{prec:.3f}", f"{rec:.3f}", str(objective))
    console.print(result)


@app.command("from-bench")
def from_bench(
    run_dir: Annotated[Path, typer.Argument(help="a `mirage bench run` directory")],
    model: Annotated[
        list[str] | None, typer.Option("--model", help="subject model to fit (repeatable)")
    ] = None,
    compare: Annotated[
        bool, typer.Option("--compare", help="fit every model of the run + the transfer table")
    ] = False,
    profile_dir: Annotated[
        Path | None, typer.Option(help="write each model's profile here (as MIRAGE_PROFILE_DIR)")
    ] = None,
    objective: Annotated[
        str, typer.Option(help="max-f1 | max-kappa | target-precision=0.9 | target-recall=0.9")
    ] = "max-f1",
    personas_file: Annotated[
        Path | None, typer.Option(help="the run's personas (default: as its manifest says)")
    ] = None,
    out_dir: Annotated[
        Path | None, typer.Option(help="figures as JSON + markdown (default RUN_DIR/calibration)")
    ] = None,
    n_boot: Annotated[int, typer.Option(help="bootstrap resamples for the AUROC CI")] = 1000,
    held_out_only: Annotated[
        bool,
        typer.Option(
            "--held-out-only",
            help="leave out personas the shipped evidence profile was fitted on",
        ),
    ] = False,
) -> None:
    """Fit a writer model's self-audit profile from a MirageBench run: its own self-audit
    labels against the judge's, aligned claim by claim; figures held out by persona."""
    try:
        models = _bench_models(run_dir, model, compare)
        linker = _linker()
        job = FromBench(
            linker=linker,
            evidence_profile=_evidence_profile(),
            objective=Objective.parse(objective),
            matcher=_matcher(linker),
            personas=load_personas(personas_file) if personas_file else None,
            profile_dir=profile_dir,
            n_boot=n_boot,
            held_out_only=held_out_only,
        )
        report = job.run(run_dir, models, compare=compare)
    except MirageError as exc:
        console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(1) from exc
    wide = Console(width=max(console.width, 150))
    wide.print(alignment_table(report))
    for result in report.models:
        wide.print(figures_table(result))
        if result.evidence_training_claims:
            console.print(
                f"[yellow]{result.model}: {result.evidence_training_claims} claim(s) are about "
                "personas the shipped evidence profile was fitted on: "
                + (
                    "left out (--held-out-only)[/]"
                    if report.held_out_only
                    else "the evidence figures on them are not held out (--held-out-only)[/]"
                )
            )
        if result.figures.note:
            console.print(f"[yellow]{result.model}: {result.figures.note} (figures n/a)[/]")
        if result.error:
            console.print(f"[red]{result.model}: no profile:[/] {result.error}")
        elif result.profile_path:
            console.print(
                f"{result.model}: threshold {result.threshold:.3f} ({report.objective}) -> "
                f"{result.profile_path}"
            )
        else:
            console.print(
                f"{result.model}: threshold {result.threshold:.3f} ({report.objective}); "
                "not written (give --profile-dir)"
            )
        if result.never_stated:
            console.print(
                f"[yellow]{result.model}: the judge labelled none of its non-OI claims "
                "GROUNDED, so its profile never tags a claim stated (what it passes is stored "
                "as a hypothesis)[/]"
            )
    if report.transfer:
        Console(width=max(console.width, 200)).print(transfer_rich(report))
    if report.offline_models:
        console.print(
            f"[yellow]offline mock models in this run: {', '.join(report.offline_models)} "
            "(a pipeline check, not a measurement)[/]"
        )
    command = " ".join(
        [
            f"mirage calibrate from-bench {run_dir}",
            *(f"--model {m}" for m in model or []),
            *(["--compare"] if compare else []),
            f"--objective {objective}",
            *([f"--personas-file {personas_file}"] if personas_file else []),
            *(["--held-out-only"] if held_out_only else []),
        ]
    )
    json_path, md_path = write_report(report, out_dir or run_dir / "calibration", command)
    console.print(f"figures: {json_path}, {md_path}")
    if any(r.error for r in report.models) and not compare:
        raise typer.Exit(1)


def _evidence_profile(
    profile_dir: Path | None = None, linker: EvidenceLinker | None = None
) -> CalibrationProfile:
    """The evidence-only profile a guard with this profile directory (and ``linker``'s
    embedder) runs with: one fitted into the directory wins over the shipped one."""
    embedders = profile_embedders(linker.embedder) if linker is not None else None
    return ProfileStore(profile_dir).evidence_only(embedders)


def _matcher(linker: EvidenceLinker) -> SemanticMatcher:
    """Claims are paired with the linker's own embedder (MiniLM: loaded once, not twice)."""
    return SemanticMatcher(linker.embedder)


def _bench_models(run_dir: Path, model: list[str] | None, compare: bool) -> list[str]:
    known = run_models(run_dir)
    if compare:
        chosen = list(model) if model else known
        if len(chosen) < 2:
            raise InputError(f"--compare needs two models or more, not {', '.join(chosen)}")
        return chosen
    if not model:
        raise InputError(f"give --model (one of: {', '.join(known)}) or --compare")
    return list(model)


@app.command("list")
def list_profiles(
    profile_dir: Annotated[
        Path | None, typer.Option(help="extra profile directory", exists=True, file_okay=False)
    ] = None,
) -> None:
    """Profiles the guard can use (shipped + PROFILE_DIR)."""
    table = Table(title="calibration profiles")
    cols = ("profile_id", "mode", "writer_model", "prompt", "held out: AUROC / 3-way", "threshold")
    for col in cols:
        table.add_column(col, overflow="fold")  # a long id or model wraps, never cut to "…"
    for p in ProfileStore(profile_dir).all():
        table.add_row(
            p.profile_id,
            p.mode.value,
            p.writer_model or "any",
            p.prompt_version or "-",
            held_out_figures(p.metrics),
            f"{p.oi_threshold:.3f}",
        )
    console.print(table)


def held_out_figures(metrics: Mapping[str, float | list[float]]) -> str:
    """What ``calibrate list`` says of a profile on claims it was not fitted on: the guard's
    AUROC and 3-way accuracy with it on the dev split, else cross-validated (a fit on traffic,
    or on train claims only). Without them (a profile fitted before they were recorded, or a
    fit that could not compute them: it said why) the profile's own AUROC, saying so."""
    for split, how in (("dev", "dev"), ("heldout", "cross-validated")):
        auroc, three = metrics.get(f"{split}_guard_auroc"), metrics.get(f"{split}_guard_three_way")
        if isinstance(three, float):
            shown = f"{auroc:.3f}" if isinstance(auroc, float) else "n/a"
            return f"{shown} / {three:.3f} ({how}, the guard)"
    dev, cv = metrics.get("dev_auroc"), metrics.get("heldout_combined_auroc")
    if isinstance(dev, float):
        return f"{dev:.3f} / - (dev, the profile)"
    if isinstance(cv, float):
        return f"{cv:.3f} / - (cross-validated, the profile)"
    return "-"


# `mirage calibrate job` (audit + fit + reload, for the scheduled jobs) lives in its own module
from mirage_guard.adapters.cli import _calibrate_job as _calibrate_job  # noqa: E402
