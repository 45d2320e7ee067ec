"""A model's self-audit of its Task outputs, aligned claim by claim with the judge's labels.

The paper could not align the two: the self-audit and the judge each extract their own claims
from the same output, in their own words, and the run stores no shared claim id (judge claims
are ``<model>/<persona>/<task>[/s<n>]/cNN``; self-audit claims carry no id). What the two do
share is the unit, (model, persona, task, sample), and the claim's meaning. So within each unit
the claims are paired one to one by the semantic similarity of their texts (the
:class:`SemanticMatcher`, an optimal assignment over the similarity matrix), and a pair counts
only when it clears the matcher's threshold. Every claim that finds no partner is counted, on
either side, so a caller can see how much of the run the alignment covers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field
from scipy.optimize import linear_sum_assignment

from mirage_guard.benchmark._matching import SemanticMatcher
from mirage_guard.benchmark._records import (
    JudgeRecord,
    JudgeTarget,
    Record,
    SelfAuditRecord,
    TaskRecord,
)
from mirage_guard.benchmark._rundir import RunDirectory
from mirage_guard.benchmark._schemas import ClaimUnits
from mirage_guard.benchmark._stages import normalise
from mirage_guard.benchmark.personas import Persona, PersonaGroup, load_personas
from mirage_guard.guard import Label
from mirage_guard.guard.errors import InputError
from mirage_guard.prompts import load_prompt

UnitKey = tuple[str, str, str, int]  # (model, persona_id, task, sample)


class AlignedClaim(BaseModel):
    """One judge claim with the model's own label for the same claim."""

    claim_id: str = Field(description="the judge's claim id")
    model: str
    persona_id: str
    group: PersonaGroup
    task: str
    sample: int
    text: str = Field(description="the judge's wording of the claim")
    judge_label: Label
    source_turn_id: str | None
    audit_text: str
    audit_label: Label
    audit_confidence: float
    similarity: float


class AlignmentCounts(BaseModel):
    """How much of one model's run the alignment covers (every figure a count)."""

    task_outputs: int = Field(default=0, description="the model's Task outputs (units that ran)")
    failed_units: dict[str, int] = Field(
        default_factory=dict,
        description="the model's failed Task, self-audit and Task-judge units, by "
        "'<stage> <error type>' (a failed Task unit has nothing to self-audit or judge)",
    )
    judged_units: int = 0
    audited_units: int = 0
    units_with_both: int = 0
    judge_claims: int = 0
    audit_claims: int = 0
    aligned: int = 0
    unaligned_judge_claims: int = Field(
        default=0, description="judge claims with no self-audit partner (counted unaligned)"
    )
    unaligned_audit_claims: int = 0
    claims_of_unknown_personas: int = Field(
        default=0, description="aligned pairs dropped: the persona's turns are not in the file"
    )


class SelfAuditAlignment(BaseModel):
    model: str
    prompt_version: str = Field(description="the run's self-audit prompt (name@hash)")
    matcher: str
    threshold: float
    counts: AlignmentCounts
    claims: list[AlignedClaim]
    turns: dict[str, list[tuple[str, str]]] = Field(
        description="persona id -> its revealed facts as (turn id, text), the user turns"
    )


def self_audit_prompt_ref(run: RunDirectory) -> str:
    """``bench_self_audit@<version>`` as the run recorded it (the profile's prompt key);
    ``bench_self_audit_sentences@...`` for a ``--claim-units sentences`` run."""
    manifest = run.read_manifest()
    name = (
        "bench_self_audit_sentences"
        if manifest.config.claim_units is ClaimUnits.SENTENCES
        else "bench_self_audit"
    )
    version = manifest.prompts.get(name)
    return f"{name}@{version}" if version else load_prompt(name).ref


def run_models(run_dir: str | Path) -> list[str]:
    return list(RunDirectory(run_dir).read_manifest().config.models)


def align_self_audit(
    run_dir: str | Path,
    model: str,
    *,
    personas: Sequence[Persona] | None = None,
    matcher: SemanticMatcher | None = None,
) -> SelfAuditAlignment:
    """Pair ``model``'s self-audit claims with the judge's claims of the same Task outputs.

    ``personas``: where the evidence turns come from (default: the run's persona file, else the
    packaged personas). Only unguarded Task judgements are used (the judge of the output the
    model wrote and audited).
    """
    run = RunDirectory(run_dir)
    manifest = run.read_manifest()
    if model not in manifest.config.models:
        raise InputError(
            f"{model!r} is not a subject model of this run (models: "
            f"{', '.join(manifest.config.models)})"
        )
    matcher = matcher or SemanticMatcher()
    people = (
        list(personas) if personas is not None else load_personas(manifest.config.personas_file)
    )
    known = {p.persona_id: p for p in people}
    judge_records = [
        r for r in run.records(JudgeRecord) if r.model == model and r.target is JudgeTarget.TASK
    ]
    audit_records = [r for r in run.records(SelfAuditRecord) if r.model == model]
    tasks = [r for r in run.records(TaskRecord) if r.model == model]
    judged = {_key(r): r for r in judge_records if r.ok and r.task is not None}
    audits = {_key(r): r for r in audit_records if r.ok}
    counts = AlignmentCounts(
        task_outputs=sum(r.ok for r in tasks),
        failed_units=_failures([*tasks, *audit_records, *judge_records]),
        judged_units=len(judged),
        audited_units=len(audits),
        units_with_both=len(judged.keys() & audits.keys()),
        judge_claims=sum(len(r.claims) for r in judged.values()),
        audit_claims=sum(len(r.claims) for r in audits.values()),
    )
    claims: list[AlignedClaim] = []
    for key in sorted(judged.keys() & audits.keys()):
        pairs = _pair(judged[key], audits[key], matcher)
        if judged[key].persona_id not in known:
            counts.claims_of_unknown_personas += len(pairs)
            continue
        claims.extend(pairs)
    counts.aligned = len(claims)
    counts.unaligned_judge_claims = counts.judge_claims - len(claims)
    counts.unaligned_audit_claims = counts.audit_claims - len(claims)
    turns = {
        pid: [(f.turn_id, f.text) for f in known[pid].revealed_facts]
        for pid in sorted({c.persona_id for c in claims})
    }
    return SelfAuditAlignment(
        model=model,
        prompt_version=self_audit_prompt_ref(run),
        matcher=matcher.name,
        threshold=matcher.threshold,
        counts=counts,
        claims=claims,
        turns=turns,
    )


def _failures(records: Sequence[Record]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for r in records:
        if r.error is not None:
            key = f"{r.kind} {r.error.type}"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _key(record: JudgeRecord | SelfAuditRecord) -> UnitKey:
    assert record.task is not None
    return (record.model, record.persona_id, record.task.value, record.sample)


def _pair(
    judged: JudgeRecord, audit: SelfAuditRecord, matcher: SemanticMatcher
) -> list[AlignedClaim]:
    """One-to-one pairs: identical texts (after normalising) first, then the assignment that
    maximises total similarity; a pair below the matcher's threshold is no pair."""
    left = [c.text for c in judged.claims]
    right = [c.text for c in audit.claims]
    if not left or not right:
        return []
    # an empty text embeds to a zero vector (NaN similarity): it matches nothing
    sims = np.nan_to_num(np.asarray(matcher.similarity(left, right), dtype=np.float64), nan=0.0)
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            if normalise(a) == normalise(b):
                sims[i, j] = max(sims[i, j], 1.0)
    rows, cols = linear_sum_assignment(sims, maximize=True)
    out: list[AlignedClaim] = []
    for i, j in sorted(zip(rows.tolist(), cols.tolist(), strict=True)):
        if sims[i, j] < matcher.threshold:
            continue
        jc, ac = judged.claims[i], audit.claims[j]
        out.append(
            AlignedClaim(
                claim_id=jc.claim_id,
                model=judged.model,
                persona_id=judged.persona_id,
                group=judged.group,
                task=_key(judged)[2],
                sample=judged.sample,
                text=jc.text,
                judge_label=jc.label,
                source_turn_id=jc.source_turn_id,
                audit_text=ac.text,
                audit_label=ac.label,
                audit_confidence=ac.confidence,
                similarity=round(float(min(sims[i, j], 1.0)), 4),
            )
        )
    return out
