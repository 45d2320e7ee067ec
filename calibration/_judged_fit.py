"""Per-model self-audit profiles from judged claims, with persona-held-out figures and the
cross-model transfer table.

Input: one writer model's claims, each with an independent judge's label (the gold) and the
model's own self-audit verdict, grouped by persona (a benchmark run supplies them; this package
does not read runs). Three scores are compared on the same claims:

- ``self_audit``: the model's own verdict alone (``audit_conf_oi``: 1 = surely OI);
- ``evidence``: the guard's evidence path alone (the shipped evidence-only profile on the
  linker's features against the persona's user turns; fitted elsewhere, applied as is);
- ``combined``: a logistic model on the evidence features plus the verdict (what a per-model
  self-audit profile is), fitted on the training personas of each fold.

Held-out figures come from K-fold cross-validation **by persona**: a persona's claims are all in
one fold, so no persona is both trained on and scored. A threshold is chosen on the training
folds for the declared objective and applied to the held-out fold. Anything that cannot be
computed honestly (too few personas, one class only) is ``None`` and shown as n/a.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from mirage_guard.calibration._data import Example
from mirage_guard.calibration._fit import (
    OI_CLASSES,
    FloatArray,
    IntArray,
    Objective,
    choose_threshold,
    cluster_bootstrap,
    fit_logistic,
)
from mirage_guard.calibration._jobs import FeatureTable, featurize, fit_profile
from mirage_guard.guard import AuditVerdict
from mirage_guard.guard.errors import InputError
from mirage_guard.guard.evidence import EvidenceLinker
from mirage_guard.guard.scoring import (
    AUDIT_FEATURES,
    CalibrationProfile,
    DataRef,
    LogisticModel,
    ProfileMode,
)

BoolArray = npt.NDArray[np.bool_]

PATHS = ("self_audit", "evidence", "combined")
MAX_FOLDS = 5


@dataclass(frozen=True)
class JudgedClaims:
    """One writer model's claims: judge label (gold) + the model's own verdict, by persona.

    ``examples[i].conversation_id`` is the persona id (the unit of the held-out split);
    ``verdicts`` is keyed by claim id.
    """

    writer_model: str
    prompt_version: str
    examples: list[Example]
    verdicts: dict[str, AuditVerdict]


@dataclass
class ScoredClaims:
    """Features and the two fixed scores of each claim, in ``examples`` order."""

    claims: JudgedClaims
    rows: list[dict[str, float]]
    y: IntArray
    personas: list[str]
    audit_score: FloatArray
    evidence_score: FloatArray
    features: list[str]

    @property
    def n(self) -> int:
        return len(self.rows)


def score_claims(
    claims: JudgedClaims,
    linker: EvidenceLinker,
    evidence_profile: CalibrationProfile,
    table: FeatureTable | None = None,
) -> ScoredClaims:
    """Link every claim to its persona's user turns (one linker call per persona); held out by
    the claim's ``group_id`` when it has one (a user of a traffic sample), else by persona.
    ``table``: these claims already featurized with these verdicts (not linked again)."""
    evidence_profile.check_embedder([linker.embedder.name])
    features = list(evidence_profile.oi_model.features) + list(AUDIT_FEATURES)
    if not claims.examples:
        empty = np.zeros(0, dtype=np.float64)
        return ScoredClaims(
            claims, [], np.zeros(0, dtype=np.int64), [], empty, empty.copy(), features
        )
    if table is None:
        table = featurize(claims.examples, linker, claims.verdicts)
    order = {e.claim.claim_id: i for i, e in enumerate(table.examples)}
    rows = [table.rows[order[e.claim.claim_id]] for e in claims.examples]
    model = evidence_profile.oi_model
    return ScoredClaims(
        claims=claims,
        rows=rows,
        y=np.asarray([int(e.is_oi) for e in claims.examples], dtype=np.int64),
        personas=[e.claim.group_id or e.conversation_id for e in claims.examples],
        audit_score=np.asarray([r["audit_conf_oi"] for r in rows], dtype=np.float64),
        evidence_score=model.predict_proba(model.matrix(rows)),
        features=features,
    )


def persona_folds(personas: Sequence[str], *, seed: int = 0) -> dict[str, int]:
    """Persona -> fold (K = min(5, personas)); every persona's claims stay in one fold."""
    ids = sorted(set(personas))
    k = min(MAX_FOLDS, len(ids))
    order = np.random.default_rng(seed).permutation(len(ids))
    return {ids[i]: int(rank % k) for rank, i in enumerate(order.tolist())} if k else {}


class PathFigures(BaseModel):
    """Held-out figures of one score path (``None`` = could not be computed: n/a)."""

    n_scored: int
    auroc: float | None = None
    auroc_ci: list[float] | None = None
    threshold: float | None = None
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None
    accuracy: float | None = None
    kappa: float | None = None


class ModelFigures(BaseModel):
    writer_model: str
    objective: str
    n_claims: int
    n_oi: int
    n_personas: int
    n_folds: int
    paths: dict[str, PathFigures]
    note: str | None = None


@dataclass
class FoldFit:
    """What the training personas of one fold gave: a combined model and per-path thresholds."""

    combined: LogisticModel | None = None
    thresholds: dict[str, float | None] = field(default_factory=dict)


@dataclass
class CrossValidated:
    scored: ScoredClaims
    folds: dict[str, int]
    fits: dict[int, FoldFit]
    oof_score: dict[str, FloatArray]
    oof_pred: dict[str, BoolArray]
    oof_decided: dict[str, BoolArray]
    figures: ModelFigures


def _both(y: IntArray) -> bool:
    return len(set(y.tolist())) == 2


def _fold_fit(scored: ScoredClaims, train: IntArray, objective: Objective, c: float) -> FoldFit:
    fit = FoldFit()
    y = scored.y[train]
    if not _both(y):
        fit.thresholds = dict.fromkeys(PATHS)
        return fit
    fit.thresholds["self_audit"] = choose_threshold(scored.audit_score[train], y, objective)
    fit.thresholds["evidence"] = choose_threshold(scored.evidence_score[train], y, objective)
    rows = [scored.rows[i] for i in train.tolist()]
    fit.combined = fit_logistic(rows, y.tolist(), scored.features, c=c, classes=OI_CLASSES)
    p = fit.combined.predict_proba(fit.combined.matrix(rows))
    fit.thresholds["combined"] = choose_threshold(p, y, objective)
    return fit


def _path_score(scored: ScoredClaims, path: str, idx: IntArray, fit: FoldFit) -> FloatArray | None:
    if path == "self_audit":
        return scored.audit_score[idx]
    if path == "evidence":
        return scored.evidence_score[idx]
    if fit.combined is None:
        return None
    rows = [scored.rows[i] for i in idx.tolist()]
    return fit.combined.predict_proba(fit.combined.matrix(rows))


def cross_validate(
    scored: ScoredClaims,
    objective: Objective,
    *,
    folds: Mapping[str, int] | None = None,
    c: float = 0.3,
    n_boot: int = 1000,
) -> CrossValidated:
    """Out-of-fold scores and decisions for every path, and the figures they give."""
    folds = dict(folds) if folds is not None else persona_folds(scored.personas)
    n = scored.n
    fold_of = np.asarray([folds.get(p, -1) for p in scored.personas], dtype=np.int64)
    used = sorted({int(f) for f in fold_of.tolist() if f >= 0})
    fits: dict[int, FoldFit] = {}
    oof_score = {p: np.full(n, np.nan) for p in PATHS}
    oof_pred = {p: np.zeros(n, dtype=bool) for p in PATHS}
    decided = {p: np.zeros(n, dtype=bool) for p in PATHS}
    for f in used if len(used) >= 2 else []:
        test = np.flatnonzero(fold_of == f)
        train = np.flatnonzero((fold_of != f) & (fold_of >= 0))
        fits[f] = fit = _fold_fit(scored, train, objective, c)
        for path in PATHS:
            s = _path_score(scored, path, test, fit)
            t = fit.thresholds.get(path)
            if s is None or t is None:
                continue
            oof_score[path][test] = s
            oof_pred[path][test] = s >= t
            decided[path][test] = True
    paths = {
        path: _figures(scored, oof_score[path], oof_pred[path], decided[path], n_boot)
        for path in PATHS
    }
    note = None
    if n == 0:
        note = "no aligned claims to score"
    elif len(set(scored.personas)) < 2:
        note = "held-out figures need claims of at least 2 personas"
    elif not _both(scored.y):
        note = "held-out figures need both OI and non-OI claims"
    figures = ModelFigures(
        writer_model=scored.claims.writer_model,
        objective=str(objective),
        n_claims=n,
        n_oi=int(scored.y.sum()),
        n_personas=len(set(scored.personas)),
        n_folds=len(used) if len(used) >= 2 else 0,
        paths=paths,
        note=note,
    )
    return CrossValidated(scored, folds, fits, oof_score, oof_pred, decided, figures)


def _figures(
    scored: ScoredClaims, score: FloatArray, pred: BoolArray, decided: BoolArray, n_boot: int
) -> PathFigures:
    idx = np.flatnonzero(decided)
    out = PathFigures(n_scored=len(idx))
    if len(idx) == 0:
        return out
    y, s, d = scored.y[idx], score[idx], pred[idx].astype(np.int64)
    out.accuracy = float(np.mean(d == y))
    tp = float(np.sum((d == 1) & (y == 1)))
    out.precision = tp / float(d.sum()) if d.sum() else None
    out.recall = tp / float(y.sum()) if y.sum() else None
    if out.precision is not None and out.recall is not None and out.precision + out.recall > 0:
        out.f1 = 2 * out.precision * out.recall / (out.precision + out.recall)
    elif y.sum():
        out.f1 = 0.0
    if _both(y):
        # one predicted class agrees only by chance: kappa is 0 by definition
        out.kappa = float(cohen_kappa_score(y, d)) if len(set(d.tolist())) == 2 else 0.0
    if _both(y):
        out.auroc = float(roc_auc_score(y, s))
        clusters = [scored.personas[i] for i in idx.tolist()]
        ci = cluster_bootstrap(s, y, clusters, 0.5, n_boot=n_boot)["auroc"]
        out.auroc_ci = ci if all(np.isfinite(ci)) else None
    return out


def fit_judged_profile(
    cv: CrossValidated,
    objective: Objective,
    *,
    embedder: str,
    data_path: Path,
    data: DataRef,
    c: float = 0.3,
    stated_objective: str = "precision>=0.85",
    support_model: str | None = None,
) -> CalibrationProfile:
    """The model's profile, fitted on every claim; held-out figures recorded in its metrics.
    ``support_model``: the sha256 of the claim-support model its evidence features came from
    (a guard with another refuses the profile).

    Raises :class:`InputError` (naming the model and the counts) when the claims cannot carry a
    fit: no claims, only one class among them (OI vs not), or no INFERRED_REASONABLE claim among
    the non-OI ones. Non-OI claims without a GROUNDED one give a profile that never tags a claim
    stated (:func:`~._jobs.is_never_stated`): the judge said nothing was stated, so nothing is.
    """
    scored = cv.scored
    model = scored.claims.writer_model
    n_oi = int(scored.y.sum())
    if scored.n == 0 or not _both(scored.y):
        raise InputError(
            f"cannot fit a profile for {model}: {scored.n} aligned claim(s), {n_oi} judged OI; "
            "a fit needs both OI and non-OI claims"
        )
    table = FeatureTable(examples=list(scored.claims.examples), rows=list(scored.rows))
    try:
        profile = fit_profile(
            table,
            mode=ProfileMode.SELF_AUDIT_SEPARATE,
            data_path=data_path,
            split=data.split,
            embedder=embedder,
            writer_model=model,
            prompt_version=scored.claims.prompt_version,
            oi_objective=str(objective),
            stated_objective=stated_objective,
            c=c,
            feature_names=scored.features[: -len(AUDIT_FEATURES)],
            never_stated_without_grounded=True,
            support_model=support_model,
        )
    except InputError as exc:
        non_oi = [e.claim.label.value for e in scored.claims.examples if not e.is_oi]
        raise InputError(
            f"cannot fit a profile for {model}: {exc} (its stated-vs-inferred model needs "
            f"INFERRED_REASONABLE among the {len(non_oi)} non-OI claims; GROUNDED: "
            f"{non_oi.count('GROUNDED')}, INFERRED_REASONABLE: "
            f"{non_oi.count('INFERRED_REASONABLE')})"
        ) from exc
    return profile.model_copy(
        update={"metrics": {**profile.metrics, **held_out_metrics(cv)}, "fitted_on": data}
    )


def held_out_metrics(cv: CrossValidated) -> dict[str, float | list[float]]:
    """The cross-validated figures of every path as a profile's metrics (``heldout_...``)."""
    held_out: dict[str, float | list[float]] = {}
    for path, figs in cv.figures.paths.items():
        for key, value in figs.model_dump(exclude={"threshold"}).items():
            if isinstance(value, list):
                held_out[f"heldout_{path}_{key}"] = [float(v) for v in value]
            elif value is not None:
                held_out[f"heldout_{path}_{key}"] = float(value)
    held_out["heldout_personas"] = float(cv.figures.n_personas)
    held_out["heldout_folds"] = float(cv.figures.n_folds)
    return held_out


TRANSFER_PATHS = ("self_audit", "combined")


class TransferRow(BaseModel):
    """Model ``source``'s held-out decision rule applied to model ``target``'s held-out claims.

    ``self_audit``: source's threshold on target's own verdict score; ``combined``: source's
    whole profile (weights and threshold) on target's features and verdicts. ``own`` is
    target's rule fitted on the same training personas. Drops are own - transferred.
    """

    source: str
    target: str
    path: str
    n: int
    source_threshold: float | None = None
    own_threshold: float | None = None
    accuracy_own: float | None = None
    accuracy_transfer: float | None = None
    accuracy_drop: float | None = None
    accuracy_drop_ci: list[float] | None = None
    f1_own: float | None = None
    f1_transfer: float | None = None
    f1_drop: float | None = None
    f1_drop_ci: list[float] | None = None


def _f1(y: IntArray, d: BoolArray) -> float | None:
    if not y.sum():
        return None
    tp = float(np.sum(d & (y == 1)))
    denom = float(d.sum()) + float(y.sum())
    return 2 * tp / denom if denom else None


def _drop(own: float | None, other: float | None) -> float | None:
    return own - other if own is not None and other is not None else None


def _mean_threshold(fits: Mapping[int, FoldFit], path: str) -> float | None:
    values = [t for f in fits.values() if (t := f.thresholds.get(path)) is not None]
    return float(np.mean(values)) if values else None


def transfer_table(
    models: Mapping[str, CrossValidated], *, n_boot: int = 1000
) -> list[TransferRow]:
    """Every ordered pair (source != target) and path; needs the same persona folds for all
    models (pass one ``persona_folds`` of every persona to each ``cross_validate``)."""
    rows: list[TransferRow] = []
    for source, a in models.items():
        for target, b in models.items():
            if source == target:
                continue
            for path in TRANSFER_PATHS:
                rows.append(_transfer(source, a, target, b, path, n_boot))
    return rows


def _transfer(
    source: str, a: CrossValidated, target: str, b: CrossValidated, path: str, n_boot: int
) -> TransferRow:
    scored = b.scored
    fold_of = np.asarray([b.folds.get(p, -1) for p in scored.personas], dtype=np.int64)
    pred = np.zeros(scored.n, dtype=bool)
    decided = np.zeros(scored.n, dtype=bool)
    for f in sorted(set(fold_of.tolist()) & set(a.fits)):
        test = np.flatnonzero(fold_of == f)
        fit = a.fits[f]
        s = _path_score(scored, path, test, fit)
        t = fit.thresholds.get(path)
        if s is None or t is None:
            continue
        pred[test] = s >= t
        decided[test] = True
    both = np.flatnonzero(decided & b.oof_decided[path])
    row = TransferRow(
        source=source,
        target=target,
        path=path,
        n=len(both),
        source_threshold=_mean_threshold(a.fits, path),
        own_threshold=_mean_threshold(b.fits, path),
    )
    if len(both) == 0:
        return row
    y = scored.y[both]
    own, other = b.oof_pred[path][both], pred[both]
    row.accuracy_own = float(np.mean(own == (y == 1)))
    row.accuracy_transfer = float(np.mean(other == (y == 1)))
    row.accuracy_drop = _drop(row.accuracy_own, row.accuracy_transfer)
    row.f1_own, row.f1_transfer = _f1(y, own), _f1(y, other)
    row.f1_drop = _drop(row.f1_own, row.f1_transfer)
    clusters = [scored.personas[i] for i in both.tolist()]
    row.accuracy_drop_ci, row.f1_drop_ci = _drop_cis(y, own, other, clusters, n_boot)
    return row


def _drop_cis(
    y: IntArray, own: BoolArray, other: BoolArray, clusters: Sequence[str], n_boot: int
) -> tuple[list[float] | None, list[float] | None]:
    """95 % percentile CIs of the accuracy and F1 drops, resampling whole personas."""
    ids = list(dict.fromkeys(clusters))
    if len(ids) < 2:
        return None, None
    index = [np.flatnonzero(np.asarray(clusters) == c) for c in ids]
    rng = np.random.default_rng(0)
    acc: list[float] = []
    f1: list[float] = []
    for _ in range(n_boot):
        rows = np.concatenate([index[i] for i in rng.choice(len(ids), size=len(ids))])
        yb, ob, tb = y[rows], own[rows], other[rows]
        acc.append(float(np.mean(ob == (yb == 1)) - np.mean(tb == (yb == 1))))
        d = _drop(_f1(yb, ob), _f1(yb, tb))
        if d is not None:
            f1.append(d)

    def ci(values: list[float]) -> list[float] | None:
        return (
            [float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))]
            if values
            else None
        )

    return ci(acc), ci(f1)
