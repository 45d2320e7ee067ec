"""Fitting: features -> logistic models -> thresholds for a declared objective, with CIs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import cohen_kappa_score, f1_score, precision_recall_curve, roc_auc_score
from sklearn.preprocessing import StandardScaler

from mirage_guard.guard.errors import InputError
from mirage_guard.guard.scoring import LogisticModel

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_OBJECTIVE = re.compile(r"^(recall|precision)>=(0(?:\.\d+)?|1(?:\.0+)?)$")
_TARGET = re.compile(r"^target-(recall|precision)=(0(?:\.\d+)?|1(?:\.0+)?)$")
_MAXIMISED = ("f1", "kappa")


@dataclass(frozen=True)
class Objective:
    """How a threshold is chosen: ``recall>=0.9`` (alias ``target-recall=0.9``) catches at least
    90 % of positives at the best precision (and vice versa for precision); ``max-f1`` and
    ``max-kappa`` maximise F1 or Cohen's kappa of the binary decision."""

    metric: str
    target: float

    @classmethod
    def parse(cls, text: str) -> Objective:
        spec = text.replace(" ", "").lower()
        m = _OBJECTIVE.match(spec) or _TARGET.match(spec)
        if m:
            return cls(m.group(1), float(m.group(2)))
        if spec.startswith("max-") and spec[4:] in _MAXIMISED:
            return cls(spec[4:], 1.0)
        raise InputError(
            "objective must look like 'recall>=0.9', 'target-precision=0.9', 'max-f1' or "
            f"'max-kappa', not {text!r}"
        )

    def __str__(self) -> str:
        if self.metric in _MAXIMISED:
            return f"max-{self.metric}"
        return f"{self.metric}>={self.target:g}"


# what 0 and 1 mean in the two models a profile fits (named when the data hold one of them)
OI_CLASSES = ("not over-inference (GROUNDED or INFERRED_REASONABLE)", "over-inference")
STATED_CLASSES = ("INFERRED_REASONABLE", "GROUNDED")


def fit_logistic(
    rows: Sequence[Mapping[str, float]],
    y: Sequence[int],
    features: Sequence[str],
    *,
    c: float = 1.0,
    classes: tuple[str, str] = ("class 0", "class 1"),
) -> LogisticModel:
    """A balanced logistic model of ``y`` on ``features``. ``classes`` names what 0 and 1 mean,
    for the error when the data hold only one of them."""
    if len(set(y)) < 2:
        present = 1 if y and y[0] == 1 else 0
        raise InputError(
            f"fitting needs both classes in the data: all {len(y)} claims are "
            f"{classes[present]}, none is {classes[1 - present]}"
            if y
            else "fitting needs both classes in the data: there are no claims"
        )
    x = np.asarray([[r[f] for f in features] for r in rows], dtype=np.float64)
    scaler = StandardScaler().fit(x)
    scale = np.where(scaler.scale_ == 0, 1.0, scaler.scale_)
    z = (x - scaler.mean_) / scale
    clf = LogisticRegression(C=c, max_iter=5000, class_weight="balanced").fit(z, np.asarray(y))
    return LogisticModel(
        features=list(features),
        mean=[float(v) for v in scaler.mean_],
        scale=[float(v) for v in scale],
        coef=[float(v) for v in clf.coef_[0]],
        intercept=float(clf.intercept_[0]),
    )


def choose_threshold(p: FloatArray, y: IntArray, objective: Objective) -> float:
    """The threshold that meets the objective with the best value of the other metric (or
    that maximises F1 / kappa)."""
    if objective.metric in _MAXIMISED:
        return _maximising_threshold(p, y, objective.metric)
    precision, recall, thresholds = precision_recall_curve(y, p)
    # precision/recall have one more entry than thresholds (the end point); drop it
    precision, recall = precision[:-1], recall[:-1]
    if objective.metric == "recall":
        ok = recall >= objective.target
        if not ok.any():
            return float(thresholds.min())
        best = np.argmax(np.where(ok, precision, -1.0))
    else:
        ok = precision >= objective.target
        if not ok.any():
            return float(thresholds.max())
        best = np.argmax(np.where(ok, recall, -1.0))
    return float(thresholds[best])


def _maximising_threshold(p: FloatArray, y: IntArray, metric: str) -> float:
    """The candidate threshold (each distinct score) with the best F1 or kappa; ties go to the
    higher threshold (fewer claims flagged)."""
    best_value, best_threshold = -np.inf, float(np.max(p)) if len(p) else 0.5
    for t in np.unique(p)[::-1]:
        pred = (p >= t).astype(np.int64)
        if metric == "f1":
            value = float(f1_score(y, pred, zero_division=0))
        else:
            value = float(cohen_kappa_score(y, pred)) if len(set(pred.tolist())) > 1 else 0.0
        if value > best_value:
            best_value, best_threshold = value, float(t)
    return best_threshold


def precision_recall_at(p: FloatArray, y: IntArray, threshold: float) -> tuple[float, float]:
    pred = p >= threshold
    tp = float(np.sum(pred & (y == 1)))
    precision = tp / max(float(pred.sum()), 1.0)
    recall = tp / max(float((y == 1).sum()), 1.0)
    return precision, recall


def cluster_bootstrap(
    p: FloatArray,
    y: IntArray,
    clusters: Sequence[str],
    threshold: float,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    also: Mapping[str, FloatArray] | None = None,
) -> dict[str, list[float]]:
    """95 % percentile CIs for AUROC, precision and recall, resampling whole conversations (a
    resample without both classes counts for none, one with no claim at or above ``threshold``
    not for precision, which it leaves undefined);
    ``also``: other rankings of the same rows, whose AUROC CI comes as ``auroc_<name>`` from the
    same resamples."""
    rng = np.random.default_rng(seed)
    ids = list(dict.fromkeys(clusters))  # first-appearance order: figures never depend on names
    index = {c: np.flatnonzero(np.asarray(clusters) == c) for c in ids}
    others = dict(also or {})
    stats: dict[str, list[float]] = {"auroc": [], "precision": [], "recall": []}
    stats.update({f"auroc_{name}": [] for name in others})
    for _ in range(n_boot):
        pick = rng.choice(len(ids), size=len(ids), replace=True)
        rows = np.concatenate([index[ids[i]] for i in pick])
        yb, pb = y[rows], p[rows]
        if len(set(yb.tolist())) < 2:
            continue
        stats["auroc"].append(float(roc_auc_score(yb, pb)))
        for name, q in others.items():
            stats[f"auroc_{name}"].append(float(roc_auc_score(yb, q[rows])))
        prec, rec = precision_recall_at(pb, yb, threshold)
        if (pb >= threshold).any():  # no claim above the threshold: precision is undefined
            stats["precision"].append(prec)
        stats["recall"].append(rec)
    return {
        k: [float(np.percentile(v, 2.5)), float(np.percentile(v, 97.5))]
        if v
        else [float("nan")] * 2
        for k, v in stats.items()
    }
