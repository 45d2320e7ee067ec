"""Judge validation, the paper's protocol: a stratified blind sample, then agreement with humans.

``judge-sample`` draws up to N claims per judge class from a run's judge records and writes them
*without* the judge's label, shuffled, for annotators to fill in ``label``. ``judge-agreement``
joins the annotated file with the judge's labels (from the run, or any other labels file, so it
works for any judge) and reports Cohen's κ (4-class and binary), per-class F1 and the confusion
matrix.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._records import JudgeRecord, JudgeTarget
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark.personas import Persona, load_personas
from mirage_guard.guard import Label
from mirage_guard.guard.errors import InputError, validation_message


class BlindItem(BaseModel):
    """One claim to label by hand. ``label`` is for the annotator to fill in."""

    model_config = ConfigDict(extra="allow")

    item_id: str
    persona_id: str
    task: str | None
    evidence: list[str]
    claim: str
    label: Label | None = None


class LabelRow(BaseModel):
    model_config = ConfigDict(extra="allow")

    item_id: str
    label: Label | None = None


def blind_item_id(claim_id: str, salt: str) -> str:
    """An opaque item id: claim ids name the subject model, which annotators must not see."""
    return "item-" + hashlib.sha256(f"{salt}\x00{claim_id}".encode()).hexdigest()[:16]


def _salt(run: RunDirectory) -> str:
    """Per run (config hash + start time), so ids cannot be recomputed from model names alone."""
    manifest = run.read_manifest()
    return f"{manifest.config_hash}:{manifest.started_at}"


def judge_labels(run_dir: str | Path) -> dict[str, Label]:
    """Blind item id -> the judge's label, for every Task and Probe claim of a run."""
    run = RunDirectory(run_dir)
    salt = _salt(run)
    return {
        blind_item_id(c.claim_id, salt): c.label
        for r in run.records(JudgeRecord)
        if r.ok and r.target is not JudgeTarget.MEMORY
        for c in r.claims
    }


def draw_sample(
    run_dir: str | Path,
    *,
    per_class: int = 100,
    seed: int = 0,
    personas: list[Persona] | None = None,
) -> list[BlindItem]:
    run = RunDirectory(run_dir)
    manifest = run.read_manifest()
    salt = _salt(run)
    known = {p.persona_id: p for p in (personas or load_personas(manifest.config.personas_file))}
    by_label: dict[Label, list[BlindItem]] = defaultdict(list)
    for record in run.records(JudgeRecord):
        if not record.ok or record.target is not JudgeTarget.TASK:
            continue
        persona = known.get(record.persona_id)
        if persona is None:
            raise InputError(f"persona {record.persona_id!r} of the run is not in the persona file")
        evidence = [f"[{f.turn_id}] {f.text}" for f in persona.revealed_facts]
        for c in record.claims:
            by_label[c.label].append(
                BlindItem(
                    item_id=blind_item_id(c.claim_id, salt),
                    persona_id=record.persona_id,
                    task=record.task.value if record.task else None,
                    evidence=evidence,
                    claim=c.text,
                )
            )
    rng = random.Random(seed)
    sample: list[BlindItem] = []
    for label in m.LABELS:
        pool = sorted(by_label[label], key=lambda item: item.item_id)
        sample += rng.sample(pool, min(per_class, len(pool)))
    rng.shuffle(sample)
    return sample


def write_jsonl(items: list[BlindItem], path: str | Path) -> None:
    Path(path).write_text(
        "".join(item.model_dump_json() + "\n" for item in items), encoding="utf-8"
    )


def read_labels(path: str | Path) -> dict[str, Label]:
    """item_id -> label from a JSONL file; rows without a label are skipped. An item labelled
    twice with different labels is an :class:`InputError` naming it (twice alike is one label)."""
    out: dict[str, Label] = {}
    first_line: dict[str, int] = {}
    # "\n" only: a claim's text may hold U+2028 or U+0085, which splitlines() would cut at
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = LabelRow.model_validate_json(line)
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: {validation_message(exc)}") from exc
        if row.label is None:
            continue
        earlier = out.get(row.item_id)
        if earlier is not None and earlier is not row.label:
            raise InputError(
                f"{path}:{number}: item {row.item_id!r} is labelled {row.label.value} here and "
                f"{earlier.value} on line {first_line[row.item_id]}"
            )
        out[row.item_id] = row.label
        first_line.setdefault(row.item_id, number)
    return out


class AgreementReport(BaseModel):
    n: int
    missing_in_judge: int
    accuracy: float
    kappa: float
    accuracy_binary: float
    kappa_binary: float
    per_class: dict[str, dict[str, float]]
    confusion: list[list[int]]
    classes: list[str]
    disagreements: int = 0
    adjacent_disagreement_share: float = float("nan")
    stereotype_fabricated_confusions: int = 0


def compare(
    human: dict[str, Label], judge: dict[str, Label], *, allow_missing: bool = False
) -> AgreementReport:
    """Judge vs human on the items both labelled. A human-labelled item the judge has no label
    for (a sample of another run, an edited id) is an :class:`InputError` naming it, unless
    ``allow_missing`` (then it is counted in ``missing_in_judge``)."""
    missing = sorted(set(human) - set(judge))
    if missing and not allow_missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise InputError(
            f"item {missing[0]!r}{more} of the labelled sample has no judge label: "
            "was the sample drawn from another run?"
        )
    shared = sorted(set(human) & set(judge))
    if not shared:
        raise InputError("no labelled item of the sample has a judge label to compare with")
    result = m.agreement([human[i] for i in shared], [judge[i] for i in shared])
    structure = m.disagreement_structure(result.confusion)
    return AgreementReport(
        disagreements=structure.disagreements,
        adjacent_disagreement_share=structure.adjacent_share,
        stereotype_fabricated_confusions=structure.stereotype_fabricated,
        n=result.n,
        missing_in_judge=len(missing),
        accuracy=result.accuracy,
        kappa=result.kappa,
        accuracy_binary=result.accuracy_binary,
        kappa_binary=result.kappa_binary,
        per_class={label.value: score._asdict() for label, score in result.per_class.items()},
        confusion=result.confusion,
        classes=[label.value for label in m.LABELS],
    )


HUMAN_LABELS_FILE = "human_labels.jsonl"
"""A run's annotated blind sample, if saved as ``RUN_DIR/human_labels.jsonl``: the report then
shows the judge's agreement with it."""


def run_agreement(run_dir: str | Path) -> AgreementReport | None:
    """Judge vs the run's own human labels (``RUN_DIR/human_labels.jsonl``), if present."""
    path = Path(run_dir) / HUMAN_LABELS_FILE
    if not path.is_file():
        return None
    return compare(read_labels(path), judge_labels(run_dir))


def agreement_json(report: AgreementReport) -> str:
    return json.dumps(report.model_dump(), indent=2)
