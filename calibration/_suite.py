"""`mirage guard eval-suite`: the guard on every labelled set, side by side.

Sets: the packaged dev split as written and in its hedge-free form (hand-written flat twins), each
held-out set under ``benchmark/data/heldout/`` (written by authors who never saw the features;
never used for fitting) as written and hedge-stripped, the stale / holds triples of
``benchmark/data/stale_pairs/`` (a later sentence that changes a fact or leaves it), and BEGIN
dev when its TSV is given (external, read where it lies). One guard (one profile) scores them
all.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio
from pydantic import BaseModel

from mirage_guard.calibration._begin import write_begin
from mirage_guard.calibration._cues import CueBaseline
from mirage_guard.calibration._data import TextVariant, load_examples, packaged
from mirage_guard.calibration._eval import (
    ClaimRow,
    EvalReport,
    GroupScore,
    check_writable,
    claim_rows,
    decide_all,
    evaluate,
    write_claim_rows,
)
from mirage_guard.calibration._stale_pairs import (
    stale_pairs_folder,
    triple_files,
    write_triples_set,
)
from mirage_guard.guard import Guard, markdown_table


@dataclass(frozen=True)
class EvalSet:
    """One labelled set to score: a claims file or a set folder, a split and a text variant."""

    name: str
    path: Path
    split: str | None = None
    variant: TextVariant = TextVariant.AS_WRITTEN
    origin: str = "project"


def heldout_root() -> Path:
    return packaged("heldout")


STALE_SET = "stale triples"


def default_sets(
    *, begin: Path | None = None, heldout: Path | None = None, stale_pairs: bool = True
) -> list[EvalSet]:
    claims = packaged("claims.jsonl")
    sets = [
        EvalSet("dev", claims, split="dev"),
        EvalSet("dev (hedge-free)", claims, split="dev", variant=TextVariant.FLAT),
    ]
    root = heldout or heldout_root()
    if root.is_dir():
        for folder in sorted(p for p in root.iterdir() if (p / "claims.jsonl").is_file()):
            sets.append(EvalSet(folder.name, folder, origin="held-out"))
            sets.append(
                EvalSet(
                    f"{folder.name} (hedge-free)", folder, variant=TextVariant.FLAT,
                    origin="held-out",
                )
            )  # fmt: skip
    if stale_pairs and triple_files(stale_pairs_folder()):
        sets.append(EvalSet(STALE_SET, stale_pairs_folder(), origin="held-out"))
    if begin is not None:
        sets.append(EvalSet("BEGIN dev", begin, origin="external"))
    return sets


class SuiteRow(BaseModel):
    """One set's figures, and what surface cues alone would score on it."""

    set: str
    origin: str
    variant: str
    report: EvalReport
    cue_auroc_oi: float
    cue_auroc_inferred: float


def run_suite(
    guard: Guard, sets: Sequence[EvalSet], *, n_boot: int = 1000, per_claim: Path | None = None
) -> list[SuiteRow]:
    """Score every set with the same guard; BEGIN's TSV and the stale triples are converted on
    the fly, never stored.

    The cue-only baseline is fitted on the packaged train split as written. ``per_claim``: also
    write every claim's decision there, each row naming its set.
    """
    if per_claim is not None:
        check_writable(per_claim, "the per-claim rows")
    claims: list[ClaimRow] = []
    cues = CueBaseline(load_examples(packaged("claims.jsonl"), split="train"))
    rows: list[SuiteRow] = []
    with tempfile.TemporaryDirectory(prefix="mirage-eval-") as tmp:
        for s in sets:
            path = s.path
            if path.suffix == ".tsv":
                path = Path(tmp) / f"{path.stem}.jsonl"
                write_begin(s.path, path)
            elif path.is_dir() and triple_files(path):
                path = Path(tmp) / "stale_triples.jsonl"
                write_triples_set(s.path, path)
            examples = load_examples(path, split=s.split, variant=s.variant)
            decisions = anyio.run(decide_all, guard, examples)
            claims += claim_rows(examples, decisions, data=s.name)
            rows.append(
                SuiteRow(
                    set=s.name,
                    origin=s.origin,
                    variant=s.variant.value,
                    report=evaluate(examples, decisions, data=s.name, n_boot=n_boot),
                    cue_auroc_oi=cues.auroc_oi(examples),
                    cue_auroc_inferred=cues.auroc_inferred(examples),
                )
            )
    if per_claim is not None:
        write_claim_rows(per_claim, claims)
    return rows


def _f(v: float) -> str:
    return "–" if v != v else f"{v:.3f}"  # nan -> dash


def suite_table(rows: Sequence[SuiteRow]) -> list[tuple[str, list[str]]]:
    """(metric, one cell per set): the side-by-side table `eval-suite` prints."""
    out: list[tuple[str, list[str]]] = [
        ("origin", [r.origin for r in rows]),
        ("claims (OI share)", [f"{r.report.n} ({r.report.oi_share:.2f})" for r in rows]),
        ("AUROC [95 % CI]", [
            f"{_f(r.report.auroc)} [{_f(r.report.auroc_ci[0])}, {_f(r.report.auroc_ci[1])}]"
            for r in rows
        ]),
        ("AUROC of the decisions (rules, then score) [95 % CI]", [
            f"{_f(r.report.auroc_decisions)} [{_f(r.report.auroc_decisions_ci[0])}, "
            f"{_f(r.report.auroc_decisions_ci[1])}]"
            for r in rows
        ]),
        ("binary κ", [_f(r.report.kappa_binary) for r in rows]),
        ("3-way accuracy", [_f(r.report.provenance_accuracy) for r in rows]),
        ("over-inference stored as stated (share)", [
            f"{r.report.oi_stored_as_fact} ({_f(r.report.oi_stored_as_fact_share)})" for r in rows
        ]),
        ("stated facts that are over-inference", [
            _f(r.report.stored_facts_oi_share) for r in rows
        ]),
    ]  # fmt: skip
    for cls in ("stated", "inferred", "generated"):
        out.append(
            (
                f"{cls} P / R / F1",
                [
                    f"{_f(c.precision)} / {_f(c.recall)} / {_f(c.f1)}"
                    for c in (r.report.per_class[cls] for r in rows)
                ],
            )
        )
    out += [
        ("source_turn_id accuracy", [_f(r.report.source_turn_accuracy) for r in rows]),
        ("cue-only AUROC (OI)", [_f(r.cue_auroc_oi) for r in rows]),
        ("cue-only AUROC (inferred vs stated)", [_f(r.cue_auroc_inferred) for r in rows]),
    ]
    return out


def confusion_lines(row: SuiteRow) -> list[str]:
    """The 3x3 confusion matrix as Markdown (rows: labels, columns: the guard)."""
    cols = list(row.report.confusion)
    body = [[gold, *(str(preds[c]) for c in cols)] for gold, preds in row.report.confusion.items()]
    title = f"**{row.set}** (rows: label, columns: guard)"
    return [title, "", *markdown_table(["", *cols], body, align_right=True)]


def _per_key_lines(
    rows: Sequence[SuiteRow],
    groups: Callable[[EvalReport], dict[str, GroupScore]],
    first: str,
    title: str,
) -> list[str]:
    """One Markdown table: a row per key of ``groups(report)``, a column per as-written set."""
    tagged = [r for r in rows if groups(r.report) and r.variant == "as-written"]
    if not tagged:
        return []
    names = sorted({k for r in tagged for k in groups(r.report)})
    body = []
    for name in names:
        cells = [name]
        for r in tagged:
            s = groups(r.report).get(name)
            cells.append("–" if s is None else f"{s.provenance_accuracy:.2f} ({s.n})")
        body.append(cells)
    return [title, "", *markdown_table([first, *(r.set for r in tagged)], body, align_right=True)]


def phenomenon_lines(rows: Sequence[SuiteRow]) -> list[str]:
    """3-way accuracy per tested case, across the sets that tag their claims with one."""
    return _per_key_lines(
        rows, lambda r: r.by_phenomenon, "case", "3-way accuracy per tested case (n in brackets)"
    )


def reason_lines(rows: Sequence[SuiteRow]) -> list[str]:
    """3-way accuracy of the decisions that carry each reason code: how often a rule is right."""
    return _per_key_lines(
        rows, lambda r: r.by_reason, "reason code",
        "3-way accuracy of the decisions that carry each reason code (n in brackets)",
    )  # fmt: skip


def render_markdown(rows: Sequence[SuiteRow], *, command: str) -> str:
    body = [[name, *cells] for name, cells in suite_table(rows)]
    table = markdown_table(["metric", *(r.set for r in rows)], body, align_right=True)
    parts = [*table, "", f"Regenerate: `{command}`", ""]
    for r in rows:
        parts += [*confusion_lines(r), ""]
    parts += phenomenon_lines(rows)
    parts += ["", *reason_lines(rows)]
    return "\n".join(parts)
