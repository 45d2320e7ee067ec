"""Evaluation of the guard on labelled claims (what `mirage guard eval` prints)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel
from sklearn.metrics import cohen_kappa_score, precision_recall_fscore_support, roc_auc_score

from mirage_guard.calibration._data import Example, group_by_conversation
from mirage_guard.calibration._fit import FloatArray, cluster_bootstrap
from mirage_guard.guard import (
    AuditVerdict,
    Decision,
    Guard,
    Label,
    Provenance,
    Reason,
    ReasonCode,
)
from mirage_guard.guard.errors import InputError

PROVENANCES = (Provenance.STATED, Provenance.INFERRED, Provenance.GENERATED)


class ClassScore(BaseModel):
    precision: float
    recall: float
    f1: float
    support: int


class GroupScore(BaseModel):
    n: int
    provenance_accuracy: float


class EvalReport(BaseModel):
    data: str
    profile_id: str
    n: int
    oi_share: float
    auroc: float
    auroc_ci: list[float]
    kappa_binary: float
    provenance_accuracy: float
    per_class: dict[str, ClassScore]
    source_turn_accuracy: float
    source_turn_n: int
    source_turn_accuracy_when_linked: float
    source_turn_linked_n: int
    calibrated_share: float
    # AUROC of the guard's decisions as a ranking (:func:`decision_ranking`): the claims a word
    # rule makes generated first, then every claim by its score. ``auroc`` is the score's alone
    auroc_decisions: float = float("nan")
    auroc_decisions_ci: list[float] = [float("nan"), float("nan")]
    # gold provenance -> predicted provenance -> count (rows: what the labels say)
    confusion: dict[str, dict[str, int]] = {}
    # per tested case (claims that name a `phenomenon`): n and 3-way accuracy
    by_phenomenon: dict[str, GroupScore] = {}
    # per reason code the decisions carry (a rule that fired, a score that decided): n and the
    # 3-way accuracy of those decisions, so a labelled set shows how often each rule is right
    by_reason: dict[str, GroupScore] = {}
    # the error that pollutes a memory: over-inference (labelled generated) the guard stores as
    # a stated fact. The count, its share of the over-inference claims, and the share of the
    # claims stored as stated facts that are over-inference (nan when there are none)
    oi_stored_as_fact: int = 0
    oi_stored_as_fact_share: float = float("nan")
    stored_facts_oi_share: float = float("nan")


async def decide_all(
    guard: Guard,
    examples: Sequence[Example],
    verdicts: Mapping[str, AuditVerdict] | None = None,
) -> dict[str, Decision]:
    """Run the real guard over each conversation's claims (one write per conversation)."""
    out: dict[str, Decision] = {}
    for group in group_by_conversation(examples).values():
        audit = [verdicts[e.claim.claim_id] for e in group] if verdicts is not None else None
        decisions = await guard.atag(
            group[0].turns, [e.candidate for e in group], audit=audit, user_name=group[0].user_name
        )
        for ex, d in zip(group, decisions, strict=True):
            out[ex.claim.claim_id] = d
    return out


def evaluate(
    examples: Sequence[Example], decisions: Mapping[str, Decision], *, data: str, n_boot: int = 1000
) -> EvalReport:
    decs = [decisions[e.claim.claim_id] for e in examples]
    y = np.asarray([int(e.is_oi) for e in examples], dtype=np.int64)
    scores = np.asarray([d.score if d.score is not None else 1.0 for d in decs], dtype=np.float64)
    pred_oi = np.asarray([int(d.provenance is Provenance.GENERATED) for d in decs])
    gold_prov = [e.claim.label.provenance.value for e in examples]
    pred_prov = [d.provenance.value for d in decs]
    p, r, f, s = precision_recall_fscore_support(
        gold_prov, pred_prov, labels=[v.value for v in PROVENANCES], zero_division=0
    )
    linked = [
        (e, d) for e, d in zip(examples, decs, strict=True)
        if e.claim.label in (Label.GROUNDED, Label.INFERRED_REASONABLE)
    ]  # fmt: skip
    turn_hits = sum(1 for e, d in linked if d.source_turn_id == e.claim.source_turn_id)
    guard_linked = [(e, d) for e, d in linked if d.source_turn_id is not None]
    linked_hits = sum(1 for e, d in guard_linked if d.source_turn_id == e.claim.source_turn_id)
    threshold = decs[0].threshold if decs and decs[0].threshold is not None else 0.5
    clusters = [e.conversation_id for e in examples]
    ranked = decision_ranking(decs)
    ci = cluster_bootstrap(
        scores, y, clusters, threshold, n_boot=n_boot, also={"decisions": ranked}
    )
    both = len(set(y.tolist())) == 2
    confusion = confusion_matrix(gold_prov, pred_prov)
    leaked, n_oi, n_stored = stored_as_fact(confusion)
    return EvalReport(
        data=data,
        profile_id=str(decs[0].profile_id) if decs else "",
        n=len(examples),
        oi_share=float(y.mean()),
        auroc=float(roc_auc_score(y, scores)) if both else float("nan"),
        auroc_ci=ci["auroc"],
        auroc_decisions=float(roc_auc_score(y, ranked)) if both else float("nan"),
        auroc_decisions_ci=ci["auroc_decisions"],
        kappa_binary=_kappa(y, pred_oi),
        provenance_accuracy=float(
            np.mean([a == b for a, b in zip(gold_prov, pred_prov, strict=True)])
        ),
        per_class={
            v.value: ClassScore(
                precision=float(p[i]), recall=float(r[i]), f1=float(f[i]), support=int(s[i])
            )
            for i, v in enumerate(PROVENANCES)
        },
        source_turn_accuracy=turn_hits / len(linked) if linked else float("nan"),
        source_turn_n=len(linked),
        source_turn_accuracy_when_linked=linked_hits / len(guard_linked)
        if guard_linked
        else float("nan"),
        source_turn_linked_n=len(guard_linked),
        calibrated_share=float(np.mean([d.calibrated for d in decs])),
        confusion=confusion,
        by_phenomenon=_by_phenomenon(examples, gold_prov, pred_prov),
        by_reason=_by_reason(decs, gold_prov, pred_prov),
        oi_stored_as_fact=leaked,
        oi_stored_as_fact_share=leaked / n_oi if n_oi else float("nan"),
        stored_facts_oi_share=leaked / n_stored if n_stored else float("nan"),
    )


def _kappa(y: npt.ArrayLike, pred: npt.ArrayLike) -> float:
    """Cohen's kappa of the binary decision; NaN when labels and decisions are all one and the
    same class (no agreement beyond chance to measure: scikit-learn divides by zero)."""
    if len({*np.asarray(y).tolist(), *np.asarray(pred).tolist()}) < 2:
        return float("nan")
    return float(cohen_kappa_score(y, pred, labels=[0, 1]))


def stored_as_fact(confusion: dict[str, dict[str, int]]) -> tuple[int, int, int]:
    """(over-inference claims stored as stated facts, over-inference claims, claims stored as
    stated facts), read from a :func:`confusion_matrix`."""
    stated, generated = Provenance.STATED.value, Provenance.GENERATED.value
    n_stored = sum(preds[stated] for preds in confusion.values())
    return confusion[generated][stated], sum(confusion[generated].values()), n_stored


def decided_by_rule(decision: Decision) -> bool:
    """The guard made the claim generated without its over-inference score deciding it: a word
    rule (denied, retracted, another person's fact, ...) or no evidence to score it by."""
    return decision.provenance is Provenance.GENERATED and all(
        r.code is not ReasonCode.OVER_INFERENCE_SCORE for r in decision.reasons
    )


def decision_ranking(decisions: Sequence[Decision]) -> FloatArray:
    """Each decision's place in the ranking of the guard's decisions: the claims it makes
    generated by a word rule first (their score plus one), then every claim by its
    over-inference score (an undecidable score as 1.0). The score alone leaves out what the rules
    decide: a claim a later turn retracts may score 0.1 and be blocked. Its AUROC is what a
    reviewer's queue ordered by the guard's output separates, the score's AUROC what the
    calibrated profile alone does; both are reported."""
    return np.asarray(
        [(1.0 if d.score is None else d.score) + float(decided_by_rule(d)) for d in decisions],
        dtype=np.float64,
    )


def _scored(hits: dict[str, list[bool]]) -> dict[str, GroupScore]:
    """Per key, how many claims and the share whose provenance matched their label."""
    return {
        k: GroupScore(n=len(v), provenance_accuracy=sum(v) / len(v))
        for k, v in sorted(hits.items())
    }


def _by_reason(
    decisions: Sequence[Decision], gold: Sequence[str], pred: Sequence[str]
) -> dict[str, GroupScore]:
    """Every reason code but the profile's (on every decision), once per decision."""
    hits: dict[str, list[bool]] = {}
    for d, g, p in zip(decisions, gold, pred, strict=True):
        for code in dict.fromkeys(r.code for r in d.reasons):
            if code is not ReasonCode.SCORED_WITH_PROFILE:
                hits.setdefault(code.value, []).append(g == p)
    return _scored(hits)


def _by_phenomenon(
    examples: Sequence[Example], gold: Sequence[str], pred: Sequence[str]
) -> dict[str, GroupScore]:
    hits: dict[str, list[bool]] = {}
    for e, g, p in zip(examples, gold, pred, strict=True):
        if e.claim.phenomenon:
            hits.setdefault(e.claim.phenomenon, []).append(g == p)
    return _scored(hits)


def confusion_matrix(gold: Sequence[str], pred: Sequence[str]) -> dict[str, dict[str, int]]:
    """gold provenance -> predicted provenance -> count, every cell present."""
    out = {g.value: dict.fromkeys((p.value for p in PROVENANCES), 0) for g in PROVENANCES}
    for g, p in zip(gold, pred, strict=True):
        out[g][p] += 1
    return out


class ClaimRow(BaseModel):
    """One labelled claim and the guard's decision about it: a row of ``--per-claim``.

    ``expected`` is the provenance the label maps to, ``provenance`` the guard's; the source-turn
    fields are compared only for claims whose label needs a source turn (stated, inferred), as
    the report's source-turn accuracy does. ``reasons`` are the decision's, with their text.
    """

    set: str
    claim_id: str
    conversation_id: str
    text: str
    label: str
    expected: str
    provenance: str
    correct: bool
    action: str
    score: float | None
    threshold: float | None
    expected_source_turn_id: str | None
    source_turn_id: str | None
    source_turn_correct: bool | None
    expected_turn_text: str | None
    evidence_span: str | None
    similarity: float
    phenomenon: str | None
    audit_label: str | None
    reasons: list[Reason]


def claim_rows(
    examples: Sequence[Example], decisions: Mapping[str, Decision], *, data: str
) -> list[ClaimRow]:
    """The per-claim rows of one scored set, in the order of ``examples``."""
    rows: list[ClaimRow] = []
    for e in examples:
        d = decisions[e.claim.claim_id]
        expected = Label(e.claim.label).provenance
        linked = expected is not Provenance.GENERATED
        gold_turn = e.claim.source_turn_id
        rows.append(
            ClaimRow(
                set=data,
                claim_id=e.claim.claim_id,
                conversation_id=e.conversation_id,
                text=e.claim.text,
                label=e.claim.label_as_written or e.claim.label.value,
                expected=expected.value,
                provenance=d.provenance.value,
                correct=d.provenance is expected,
                action=d.action.value,
                score=d.score,
                threshold=d.threshold,
                expected_source_turn_id=gold_turn,
                source_turn_id=d.source_turn_id,
                source_turn_correct=(d.source_turn_id == gold_turn) if linked else None,
                expected_turn_text=next((t.content for t in e.turns if t.id == gold_turn), None),
                evidence_span=d.evidence_span,
                similarity=d.similarity,
                phenomenon=e.claim.phenomenon,
                audit_label=d.audit.label.value if d.audit is not None else None,
                reasons=list(d.reasons),
            )
        )
    return rows


def _partial(path: Path) -> Path:
    return path.with_name(f".{path.name}.partial")


def check_not_an_input(out: Path, inputs: Iterable[Path | None], what: str) -> None:
    """An :class:`InputError` when ``out`` is one of the command's ``inputs`` (a file, or a file
    of an input folder): writing it would replace the data it reads, labels included."""
    target = out.resolve()
    for given in inputs:
        if given is None:
            continue
        files = [given, *given.iterdir()] if given.is_dir() else [given]
        if any(f.resolve() == target for f in files):
            raise InputError(
                f"{out} is an input of this command ({given}): write {what} to another file "
                "(nothing was written)"
            )


def check_writable(path: Path, what: str) -> None:
    """Fail before a long run, not after it, when ``what`` cannot be written to ``path``."""
    if path.is_dir():
        raise InputError(f"{path} is a directory: {what} need a file name")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _partial(path).touch()
        _partial(path).unlink()
    except OSError as exc:
        raise InputError(f"cannot write {what} to {path}: {exc}") from exc


def write_whole(path: Path, lines: Iterable[str], what: str) -> None:
    """Lines to ``path``, written whole or not at all (a temporary file renamed into place);
    an :class:`InputError` naming ``what`` and the path when it cannot be written."""
    partial = _partial(path)
    try:
        partial.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
        os.replace(partial, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise InputError(f"cannot write {what} to {path}: {exc}") from exc


def write_claim_rows(path: Path, rows: Sequence[ClaimRow]) -> None:
    """JSON Lines, written whole or not at all."""
    write_whole(path, (r.model_dump_json() for r in rows), "the per-claim rows")
