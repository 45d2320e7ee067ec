"""The guard's own figures on labelled claims that no profile it used was fitted on.

``mirage calibrate fit`` on labels without a dev split (a labelled sample of your own traffic)
has no claims to hold out but by cross-validation. Each fold is decided by the real guard
(evidence, word rules, self-audit labels, quote checks: :func:`decide_all`) with an audit profile
fitted, the way ``calibrate fit`` fits one, on the other folds only; the decisions of every fold
are then scored together as ``mirage guard eval`` scores a labelled set (:func:`evaluate`): 3-way
accuracy, binary kappa, per-class precision and recall, ``source_turn_id`` accuracy, the
over-inference stored as stated facts. The folds are the cross-validation's own
(:func:`persona_folds`): each user of a traffic sample (a claim's ``group_id``), else each
conversation, whole in one fold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import anyio

from mirage_guard.calibration._eval import EvalReport, decide_all, evaluate
from mirage_guard.calibration._jobs import FeatureTable
from mirage_guard.calibration._judged_fit import persona_folds
from mirage_guard.guard import AuditVerdict, Guard
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.scoring import CalibrationProfile


@dataclass(frozen=True)
class HeldOutGuard:
    """The pooled report of the folds that could be decided (None: no fold could), how many
    folds there were, and why each fold left out could not be fitted."""

    report: EvalReport | None
    n_folds: int
    skipped: list[str]


def subset(table: FeatureTable, rows: Sequence[int]) -> FeatureTable:
    """The rows ``rows`` of ``table``, features and checked verdicts with them."""
    return FeatureTable(
        examples=[table.examples[i] for i in rows],
        rows=[table.rows[i] for i in rows],
        linked_turn=[table.linked_turn[i] for i in rows] if table.linked_turn else [],
        verdicts=[table.verdicts[i] for i in rows] if table.verdicts else [],
    )


def heldout_guard_eval(
    table: FeatureTable,
    verdicts: Mapping[str, AuditVerdict],
    *,
    fit: Callable[[FeatureTable], CalibrationProfile],
    guard_for: Callable[[CalibrationProfile], Guard],
    data: str,
    n_boot: int = 1000,
) -> HeldOutGuard:
    """Decide each fold's claims with ``guard_for(fit(the other folds))`` and score them all.

    ``fit`` raises :class:`InputError` when a fold's training part cannot carry a profile (one
    class only): that fold is left out and said in ``skipped``. With fewer than two groups there
    is nothing to hold out (``n_folds`` 0, no report). The folds are those of
    :func:`persona_folds` (and so of ``calibrate fit``'s other cross-validated figures)."""
    groups = [e.claim.group_id or e.conversation_id for e in table.examples]
    folds = persona_folds(groups)
    fold_of = [folds[g] for g in groups]
    used = sorted(set(fold_of)) if len(set(fold_of)) >= 2 else []
    decisions = {}
    skipped: list[str] = []
    for fold in used:
        train = [i for i, f in enumerate(fold_of) if f != fold]
        test = [table.examples[i] for i, f in enumerate(fold_of) if f == fold]
        try:
            profile = fit(subset(table, train))
        except InputError as exc:
            skipped.append(f"fold {fold + 1} of {len(used)} ({len(test)} claims) left out: {exc}")
            continue
        guard = guard_for(profile)
        try:
            decisions.update(anyio.run(partial(decide_all, guard, test, verdicts)))
        finally:
            guard.close()
    scored = [e for e in table.examples if e.claim.claim_id in decisions]
    report = evaluate(scored, decisions, data=data, n_boot=n_boot) if scored else None
    return HeldOutGuard(report=report, n_folds=len(used), skipped=skipped)


def guard_metrics(report: EvalReport, prefix: str) -> dict[str, float | list[float]]:
    """The figures of a guard eval a profile records, as ``{prefix}_guard_...`` (a figure that
    could not be computed, such as AUROC on one class, is left out)."""
    classes = report.per_class
    stated, inferred = classes.get("stated"), classes.get("inferred")
    generated = classes.get("generated")
    figures: dict[str, float | list[float] | None] = {
        "n": float(report.n),
        "auroc": report.auroc,
        "auroc_ci": list(report.auroc_ci),
        "kappa": report.kappa_binary,
        "three_way": report.provenance_accuracy,
        "stated_precision": stated.precision if stated and stated.support else None,
        "inferred_f1": inferred.f1 if inferred and inferred.support else None,
        # over-inference caught: generated vs not, as the binary figures read it
        "generated_precision": generated.precision if generated and generated.support else None,
        "generated_recall": generated.recall if generated and generated.support else None,
        "generated_f1": generated.f1 if generated and generated.support else None,
        "source_turn": report.source_turn_accuracy,
        "oi_stored_as_fact_share": report.oi_stored_as_fact_share,
        "stored_facts_oi_share": report.stored_facts_oi_share,
    }
    out: dict[str, float | list[float]] = {}
    for key, value in figures.items():
        if isinstance(value, list):
            if all(math.isfinite(v) for v in value):
                out[f"{prefix}_guard_{key}"] = [float(v) for v in value]
        elif value is not None and math.isfinite(value):
            out[f"{prefix}_guard_{key}"] = float(value)
    return out
