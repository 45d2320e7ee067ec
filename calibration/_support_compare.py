"""`mirage calibrate support-report`: the claim-support signals measured against each other.

Every set is featurised once with the full linker (current features + method A, token alignment,
+ method C, the cross-encoder); then, for each feature set (current / +A / +C / +A+C), the two
logistic models of an evidence-only profile are fitted on the profile half of the TRAIN split only
and the guard's decision rule is applied on dev, hedge-free dev and every held-out set. Nothing is
tuned on the sets that are reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.metrics import cohen_kappa_score, f1_score, roc_auc_score

from mirage_guard.calibration._data import (
    Example,
    TrainHalf,
    load_examples,
    packaged,
    train_half,
)
from mirage_guard.calibration._jobs import FeatureTable, featurize, fit_profile
from mirage_guard.calibration._suite import EvalSet, default_sets
from mirage_guard.guard import Label
from mirage_guard.guard.evidence import PROFILE_FEATURES, SUPPORT_FEATURES, EvidenceLinker
from mirage_guard.guard.scoring import CalibrationProfile, ProfileMode

_ALIGN = tuple(f for f in SUPPORT_FEATURES if f.startswith("align_"))
_CROSS = tuple(f for f in SUPPORT_FEATURES if f.startswith("sup_"))
# what a profile reads today, without the claim-support features (the topic scores are not in it)
CURRENT = tuple(f for f in PROFILE_FEATURES if f not in SUPPORT_FEATURES)
FEATURE_SETS: dict[str, tuple[str, ...]] = {
    "current": CURRENT,
    "current+A": CURRENT + _ALIGN,
    "current+C": CURRENT + _CROSS,
    "current+A+C": CURRENT + _ALIGN + _CROSS,
}


@dataclass(frozen=True)
class Scores:
    auroc: float
    kappa: float
    acc3: float
    inferred_f1: float
    turn_acc: float
    n: int


def _provenance(label: Label) -> str:
    return label.provenance.value


def decide_rows(
    profile: CalibrationProfile, table: FeatureTable, *, require_support: bool, rule: str = ""
) -> tuple[np.ndarray, list[str]]:
    """P(OI) and the provenance the guard's rule gives (optionally: unsupported -> not stated)."""
    p_oi = profile.oi_model.predict_proba(profile.oi_model.matrix(table.rows))
    p_st = profile.stated_model.predict_proba(profile.stated_model.matrix(table.rows))
    out: list[str] = []
    for i, row in enumerate(table.rows):
        specifics = row["unsupported_names"] > 0 or row["unsupported_numbers"] > 0
        if require_support and "align_" in rule:
            specifics = specifics or row["align_unsupported_share"] > 0
        if require_support and "sup_" in rule:
            others = (row["sup_inferable"], row["sup_unsupported"], row["sup_contradicted"])
            specifics = specifics or row["sup_entailed"] < max(others)
        if table.linked_turn[i] is None or p_oi[i] >= profile.oi_threshold:
            out.append("generated")
        elif p_st[i] >= profile.stated_threshold and not specifics:
            out.append("stated")
        else:
            out.append("inferred")
    return p_oi, out


def score(
    examples: Sequence[Example], p_oi: np.ndarray, pred: Sequence[str], turns: Sequence[str | None]
) -> Scores:
    y = np.asarray([int(e.is_oi) for e in examples])
    gold = [_provenance(e.claim.label) for e in examples]
    pred_oi = np.asarray([int(p == "generated") for p in pred])
    linked = [
        i for i, e in enumerate(examples)
        if e.claim.label in (Label.GROUNDED, Label.INFERRED_REASONABLE)
    ]  # fmt: skip
    hits = sum(1 for i in linked if turns[i] == examples[i].claim.source_turn_id)
    return Scores(
        auroc=float(roc_auc_score(y, p_oi)) if len(set(y.tolist())) == 2 else float("nan"),
        kappa=float(cohen_kappa_score(y, pred_oi)),
        acc3=float(np.mean([g == p for g, p in zip(gold, pred, strict=True)])),
        inferred_f1=float(
            f1_score(gold, pred, labels=["inferred"], average="macro", zero_division=0)
        ),
        turn_acc=hits / len(linked) if linked else float("nan"),
        n=len(examples),
    )


def _with_turns(table: FeatureTable, turns: Sequence[str | None]) -> FeatureTable:
    return FeatureTable(examples=table.examples, rows=table.rows, linked_turn=list(turns))


def run_support_report(
    full: EvidenceLinker,
    *,
    sets: Sequence[EvalSet] | None = None,
) -> list[tuple[str, str, Scores]]:
    """(set, method, scores) for every set and feature set (A-only sets use bi-encoder turns)."""
    claims = packaged("claims.jsonl")
    sets = list(sets or default_sets(stale_pairs=False))
    train = featurize(train_half(load_examples(claims, split="train"), TrainHalf.PROFILE), full)
    rows: list[tuple[str, str, Scores]] = []
    profiles = {
        name: fit_profile(
            train, mode=ProfileMode.EVIDENCE, data_path=claims, split="train",
            embedder=full.embedder.name, feature_names=feats,
        )
        for name, feats in FEATURE_SETS.items()
    }  # fmt: skip
    train_set = EvalSet("train (fitted on)", claims, split="train")
    for s in [train_set, *sets]:
        examples = load_examples(s.path, split=s.split, variant=s.variant)
        full.switch_turns = True  # C rows: the support model's turn
        table = featurize(examples, full)
        full.switch_turns = False
        bi_turns = featurize(examples, full).linked_turn
        for name, profile in profiles.items():
            uses_c = name.endswith("C")
            t = table if uses_c else _with_turns(table, bi_turns)
            rule = ("align_" if "A" in name else "") + ("sup_" if "C" in name else "")
            for strict in (False, True) if rule else (False,):
                p_oi, pred = decide_rows(profile, t, require_support=strict, rule=rule)
                label = name + (" +rule" if strict else "")
                rows.append((s.name, label, score(t.examples, p_oi, pred, t.linked_turn)))
    return rows


def render_support_report(rows: Sequence[tuple[str, str, Scores]]) -> str:
    lines = [
        "| set | method | n | AUROC | κ | 3-way acc | inferred F1 | source turn acc |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for set_name, method, s in rows:
        lines.append(
            f"| {set_name} | {method} | {s.n} | {s.auroc:.3f} | {s.kappa:.2f} | {s.acc3:.3f} | "
            f"{s.inferred_f1:.3f} | {s.turn_acc:.3f} |"
        )
    return "\n".join(lines)


def quick_sets(names: Sequence[str] | None) -> list[EvalSet]:
    sets = default_sets(stale_pairs=False)
    if not names:
        return sets
    return [s for s in sets if s.name in names]
