"""`mirage calibrate stated-floor`: the floor on P(stated) (``MIRAGE_STATED_MIN``) measured on an
operator's own labelled claims, and the lowest one whose stored facts are right often enough."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import numpy as np
from pydantic import BaseModel

from mirage_guard.calibration._data import Example, load_examples, packaged
from mirage_guard.calibration._eval import decide_all
from mirage_guard.calibration._evaluate import build_eval_guard, with_verdicts
from mirage_guard.calibration._fit import cluster_bootstrap, precision_recall_at
from mirage_guard.guard import AuditVerdict, Decision, Guard, Provenance
from mirage_guard.guard.errors import InputError

# the floors measured when none are given: the README's two (0.8, 0.9) and a grid around them
DEFAULT_FLOORS: tuple[float, ...] = (0.6, 0.7, 0.8, 0.85, 0.9, 0.95)


class FloorRow(BaseModel):
    """What one floor does to a labelled set. ``floor`` None: no floor (the profile's threshold)."""

    floor: float | None
    stated: int  # claims stored as stated facts
    precision: float  # of those, the share labelled stated (0.0 when none is stored)
    precision_ci: tuple[float, float]  # 95 %, resampling whole conversations
    recall: float  # of the claims labelled stated, the share stored as stated
    generated_as_stated: int  # claims labelled generated stored as stated facts
    inferred_as_stated: int
    accuracy: float  # 3-way provenance accuracy (a held-back stated claim counts as wrong)


class FloorReport(BaseModel):
    data: str
    n: int
    labelled: dict[str, int]  # claims per labelled provenance
    profile_id: str
    profile_threshold: float  # a floor at or below it changes nothing
    target_precision: float
    rows: list[FloorRow]
    # the lowest floor whose stated precision meets the target (None with ``reached``: no floor
    # is needed; not ``reached``: no floor measured meets it)
    recommended: float | None
    reached: bool


def floor_row(
    floor: float | None,
    examples: Sequence[Example],
    decisions: Mapping[str, Decision],
    *,
    n_boot: int = 1000,
) -> FloorRow:
    """The figures of one floor's decisions against the labels."""
    gold = [e.claim.label.provenance for e in examples]
    pred = [decisions[e.claim.claim_id].provenance for e in examples]
    pairs = Counter(zip(gold, pred, strict=True))
    stated = Provenance.STATED
    as_stated = np.asarray([p is stated for p in pred], dtype=np.float64)
    is_stated = np.asarray([g is stated for g in gold], dtype=np.int64)
    # 0.0 precision when nothing is stored as stated; the bootstrap leaves such resamples out
    precision, recall = precision_recall_at(as_stated, is_stated, 0.5)
    ci = cluster_bootstrap(
        as_stated, is_stated, [e.conversation_id for e in examples], 0.5, n_boot=n_boot
    )["precision"]
    return FloorRow(
        floor=floor,
        stated=int(as_stated.sum()),
        precision=precision,
        precision_ci=(ci[0], ci[1]),
        recall=recall,
        generated_as_stated=pairs[(Provenance.GENERATED, stated)],
        inferred_as_stated=pairs[(Provenance.INFERRED, stated)],
        accuracy=sum(n for (g, p), n in pairs.items() if g is p) / len(examples),
    )


def choose_floor(rows: Sequence[FloorRow], target: float) -> tuple[float | None, bool]:
    """(the lowest floor whose stated precision meets ``target``, whether one does). No floor
    (``floor`` None) comes first: if it meets the target, none is recommended."""
    ordered = sorted(rows, key=lambda r: -1.0 if r.floor is None else r.floor)
    for row in ordered:
        if row.stated and row.precision >= target:
            return row.floor, True
    return None, False


def check_floors(floors: Sequence[float]) -> tuple[float, ...]:
    """The floors to measure, ascending and once each; a floor outside (0, 1] is refused."""
    bad = [f for f in floors if not 0.0 < f <= 1.0]
    if bad:
        raise InputError(f"a floor on P(stated) is in (0, 1]: got {bad[0]}")
    return tuple(sorted(set(floors)))


async def sweep(
    guard: Guard,
    examples: Sequence[Example],
    floors: Sequence[float],
    verdicts: Mapping[str, AuditVerdict] | None = None,
    *,
    n_boot: int = 1000,
) -> list[FloorRow]:
    """Every claim decided with no floor, then with each floor, by guards that share ``guard``'s
    models (one set of models loaded, the claims linked once per floor; the support model reads
    each write's pairs once, on the first pass, and its readings are reused after)."""
    rows: list[FloorRow] = []
    with guard.linker.support.remembering():
        for floor in (None, *floors):
            policy = guard.policy.model_copy(update={"stated_min": floor})
            scoped = guard.with_policy(policy)
            try:
                decisions = await decide_all(scoped, examples, verdicts)
            finally:
                scoped.close()
            rows.append(floor_row(floor, examples, decisions, n_boot=n_boot))
    return rows


def run_stated_floor(
    *,
    data: Path | None,
    personas: Path | None = None,
    split: str | None = None,
    conversations: Path | None = None,
    profile_dir: Path | None = None,
    support_dir: Path | None = None,
    verdicts: Path | None = None,
    floors: Sequence[float] = DEFAULT_FLOORS,
    target_precision: float = 0.9,
    n_boot: int = 1000,
) -> FloorReport:
    """Measure each floor on one labelled set (the claims and conversations `guard eval` reads)
    and recommend the lowest that meets ``target_precision``."""
    if not 0.0 < target_precision <= 1.0:
        raise InputError(f"the target precision is in (0, 1]: got {target_precision}")
    wanted = check_floors(floors)
    path = data or packaged("claims.jsonl")
    examples = load_examples(path, personas=personas, conversations=conversations, split=split)
    examples, by_claim, model, prompt = with_verdicts(examples, verdicts)
    if not examples:
        where = f" in split {split!r}" if split else ""
        covered = f" with a verdict in {verdicts}" if verdicts is not None else ""
        raise InputError(f"{path}: no labelled claims{where}{covered}")
    guard = build_eval_guard(
        profile_dir=profile_dir,
        writer_model=None,
        verdicts=by_claim,
        verdict_model=model,
        verdict_prompt=prompt,
        support_dir=support_dir,
    )
    try:
        rows = anyio.run(lambda: sweep(guard, examples, wanted, by_claim, n_boot=n_boot))
        # the profile the decisions were made with: the verdicts' model's, when there are some
        profile = guard.audit_profile or guard.evidence_profile
    finally:
        guard.close()
    recommended, reached = choose_floor(rows, target_precision)
    counted = Counter(e.claim.label.provenance for e in examples)
    labelled = {p.value: counted[p] for p in Provenance}
    return FloorReport(
        data=path.name + (f" [{split}]" if split else ""),
        n=len(examples),
        labelled=labelled,
        profile_id=profile.profile_id,
        profile_threshold=profile.stated_threshold,
        target_precision=target_precision,
        rows=rows,
        recommended=recommended,
        reached=reached,
    )
