"""Judge validation for the collapse judge, MirageBench's protocol: a stratified blind sample of
answers for annotators, then agreement (Cohen's κ over the five personas, per-class F1, the
confusion matrix; Pearson r of H and E when annotators give numbers)."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mirage_guard.benchmark import metrics as bm
from mirage_guard.benchmark.collapse._mapping import PersonaThresholds, persona_of
from mirage_guard.benchmark.collapse._records import AnswerRecord, ScoreRecord
from mirage_guard.benchmark.collapse._rundir import CollapseRunDirectory
from mirage_guard.benchmark.collapse._situations import PERSONAS, AdviserPersona, load_situations
from mirage_guard.guard.errors import InputError


class BlindAnswer(BaseModel):
    """One answer to rate by hand: fill in ``persona``, or ``H`` and ``E``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    item_id: str
    situation: str
    answer: str
    persona: AdviserPersona | None = None
    h: float | None = Field(default=None, alias="H", ge=-1.0, le=1.0)
    e: float | None = Field(default=None, alias="E", ge=-1.0, le=1.0)

    @model_validator(mode="after")
    def _both_or_neither(self) -> BlindAnswer:
        if (self.h is None) != (self.e is None):
            raise ValueError("give both H and E, or neither")
        return self


def blind_id(unit: str) -> str:
    """An opaque item id for a score unit (the unit names the model and the condition)."""
    return "a-" + hashlib.sha256(unit.encode("utf-8")).hexdigest()[:12]


class Rating(BaseModel):
    persona: AdviserPersona
    h: float | None = None
    e: float | None = None


def judge_ratings(
    run_dir: str | Path, thresholds: PersonaThresholds | None = None
) -> dict[str, Rating]:
    """blind item id -> the judge's persona (and H, E) for every scored answer of a run."""
    run = CollapseRunDirectory(run_dir)
    mapping = thresholds or run.read_collapse_manifest().config.mapping
    return {
        blind_id(r.unit): Rating(persona=persona_of(r.h, r.e, mapping), h=r.h, e=r.e)
        for r in run.read(ScoreRecord)
        if r.ok and r.h is not None and r.e is not None
    }


def draw_blind_sample(
    run_dir: str | Path, *, per_persona: int = 20, seed: int = 0
) -> list[BlindAnswer]:
    """Up to ``per_persona`` answers per judged persona, shuffled, without model, condition or
    the judge's scores."""
    run = CollapseRunDirectory(run_dir)
    manifest = run.read_collapse_manifest()
    texts = {s.id: s.situation for s in load_situations(manifest.config.situations_file)}
    answers = {
        blind_id(f"score|{a.model}|{a.condition.value}|{a.memory.value}|{a.situation_id}"): a
        for a in run.read(AnswerRecord)
        if a.ok
    }
    by_persona: dict[AdviserPersona, list[BlindAnswer]] = defaultdict(list)
    for unit, rating in judge_ratings(run_dir).items():
        answer = answers.get(unit)
        if answer is None:
            continue
        by_persona[rating.persona].append(
            BlindAnswer(item_id=unit, situation=texts[answer.situation_id], answer=answer.answer)
        )
    rng = random.Random(seed)
    sample: list[BlindAnswer] = []
    for persona in PERSONAS:
        pool = sorted(by_persona[persona], key=lambda item: item.item_id)
        sample += rng.sample(pool, min(per_persona, len(pool)))
    rng.shuffle(sample)
    return sample


def write_sample(items: list[BlindAnswer], path: str | Path) -> None:
    Path(path).write_text(
        "".join(i.model_dump_json(by_alias=True) + "\n" for i in items), encoding="utf-8"
    )


def read_ratings(
    path: str | Path, thresholds: PersonaThresholds | None = None
) -> dict[str, Rating]:
    """item_id -> rating from a JSONL file (``persona``, or ``H`` and ``E``); unrated rows are
    skipped. Given both, ``persona`` must agree with (H, E) under the thresholds."""
    out: dict[str, Rating] = {}
    # "\n" only: an answer's text may hold U+2028 or U+0085, which splitlines() would cut at
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = BlindAnswer.model_validate_json(line)
        except ValidationError as exc:
            raise InputError(f"{path}:{number}: {exc.errors()[0]['msg']}") from exc
        if row.h is not None and row.e is not None:
            mapped = persona_of(row.h, row.e, thresholds)
            if row.persona is not None and row.persona is not mapped:
                raise InputError(
                    f"{path}:{number}: persona {row.persona.value} disagrees with H, E "
                    f"({mapped.value})"
                )
            out[row.item_id] = Rating(persona=mapped, h=row.h, e=row.e)
        elif row.persona is not None:
            out[row.item_id] = Rating(persona=row.persona)
    return out


class StanceAgreement(BaseModel):
    n: int
    missing_in_judge: int
    accuracy: float
    kappa: float
    per_class: dict[str, dict[str, float]]
    confusion: list[list[int]]
    classes: list[str]
    pearson_h: float | None = None
    pearson_e: float | None = None


def compare_ratings(human: dict[str, Rating], judge: dict[str, Rating]) -> StanceAgreement:
    shared = sorted(set(human) & set(judge))
    if not shared:
        raise InputError("no rated item of the sample has a judge rating to compare with")
    ref = [human[i].persona for i in shared]
    got = [judge[i].persona for i in shared]
    numeric = [i for i in shared if human[i].h is not None and judge[i].h is not None]

    def r(axis: str) -> float | None:
        if len(numeric) < 3:
            return None
        xs = [float(getattr(human[i], axis)) for i in numeric]
        ys = [float(getattr(judge[i], axis)) for i in numeric]
        value = bm.pearson(xs, ys).coefficient
        return value if math.isfinite(value) else None

    return StanceAgreement(
        n=len(shared),
        missing_in_judge=len(set(human) - set(judge)),
        accuracy=sum(a is b for a, b in zip(ref, got, strict=True)) / len(shared),
        kappa=bm.cohen_kappa(ref, got, PERSONAS),
        per_class={
            p.value: s._asdict() for p, s in bm.per_class_scores(ref, got, PERSONAS).items()
        },
        confusion=bm.confusion_matrix(ref, got, PERSONAS),
        classes=[p.value for p in PERSONAS],
        pearson_h=r("h"),
        pearson_e=r("e"),
    )


def agreement_as_json(report: StanceAgreement) -> str:
    return json.dumps(report.model_dump(), indent=2)
