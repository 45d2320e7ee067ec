"""`mirage guard eval-suite`: the guard on every labelled set, side by side.

Sets: the packaged dev split as written and in its hedge-free form (hand-written flat twins), each
held-out set under ``benchmark/data/heldout/`` (written by authors who never saw the features;
never used for fitting) as written and hedge-stripped, and BEGIN dev when its TSV is given
(external, read where it lies). One guard (one profile) scores them all.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import anyio

from mirage_guard.calibration._begin import write_begin
from mirage_guard.calibration._data import TextVariant, load_examples, packaged
from mirage_guard.calibration._eval import EvalReport, decide_all, evaluate
from mirage_guard.guard import Guard


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


def default_sets(*, begin: Path | None = None, heldout: Path | None = None) -> list[EvalSet]:
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
    if begin is not None:
        sets.append(EvalSet("BEGIN dev", begin, origin="external"))
    return sets


def run_suite(guard: Guard, sets: Sequence[EvalSet], *, n_boot: int = 1000) -> list[EvalReport]:
    """Score every set with the same guard; BEGIN's TSV is converted on the fly, never stored."""
    reports: list[EvalReport] = []
    with tempfile.TemporaryDirectory(prefix="mirage-eval-") as tmp:
        for s in sets:
            path = s.path
            if path.suffix == ".tsv":
                path = Path(tmp) / f"{path.stem}.jsonl"
                write_begin(s.path, path)
            examples = load_examples(path, split=s.split, variant=s.variant)
            decisions = anyio.run(decide_all, guard, examples)
            reports.append(evaluate(examples, decisions, data=s.name, n_boot=n_boot))
    return reports
