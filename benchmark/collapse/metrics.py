"""Persona-collapse figures as pure functions: shares, N_eff, Jensen–Shannon divergence,
bootstrap intervals, the confusion against the reference stance.

Conventions: a distribution is a list of five shares in :data:`PERSONAS` order; N_eff uses the
natural logarithm (``exp`` of the Shannon entropy in nats: 1 = one persona, 5 = uniform); the
Jensen–Shannon divergence uses base 2, so it lies in [0, 1] (scipy's ``jensenshannon`` returns
the distance, its square root; we square it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.stats import bootstrap

from mirage_guard.benchmark.collapse._situations import PERSONAS, AdviserPersona
from mirage_guard.benchmark.metrics import confusion_matrix


class Interval(NamedTuple):
    value: float
    low: float
    high: float


def shares(personas: Sequence[AdviserPersona]) -> list[float]:
    """The persona distribution of some answers (NaNs when there are none)."""
    n = len(personas)
    if n == 0:
        return [math.nan] * len(PERSONAS)
    return [sum(p is q for p in personas) / n for q in PERSONAS]


def n_eff(distribution: Sequence[float]) -> float:
    """exp(Shannon entropy, nats); 0·log 0 = 0. NaN for an empty distribution."""
    p = np.asarray(distribution, dtype=float)
    if p.size == 0 or np.isnan(p).any() or p.sum() <= 0:
        return math.nan
    p = p / p.sum()
    nz = p[p > 0]
    return float(np.exp(-(nz * np.log(nz)).sum()))


def js_divergence(p: Sequence[float], q: Sequence[float]) -> float:
    """Jensen–Shannon divergence in bits, in [0, 1]; NaN if either side is empty."""
    a, b = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if np.isnan(a).any() or np.isnan(b).any() or a.sum() <= 0 or b.sum() <= 0:
        return math.nan
    return float(jensenshannon(a, b, base=2) ** 2)


def mixture(by_context: Mapping[str, Sequence[float]], counts: Mapping[str, int]) -> list[float]:
    """The reference of a set of answers: context distributions weighted by answer counts."""
    total = sum(counts.values())
    if total == 0:
        return [math.nan] * len(PERSONAS)
    out = np.zeros(len(PERSONAS))
    for context, n in counts.items():
        out += n * np.asarray(by_context[context], dtype=float)
    return [float(x) for x in out / total]


def _codes(personas: Sequence[AdviserPersona]) -> np.ndarray:
    index = {p: i for i, p in enumerate(PERSONAS)}
    return np.array([index[p] for p in personas], dtype=int)


def _shares_along(x: np.ndarray, axis: int) -> np.ndarray:
    onehot = x[..., None] == np.arange(len(PERSONAS))
    return np.asarray(onehot.mean(axis=axis if axis >= 0 else axis - 1))


def _n_eff_vec(x: np.ndarray, axis: int = -1) -> np.ndarray:
    p = _shares_along(x, axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.asarray(np.exp(-terms.sum(axis=-1)))


def _interval(
    personas: Sequence[AdviserPersona],
    statistic: Callable[[np.ndarray, int], np.ndarray],
    value: float,
    *,
    resamples: int,
    seed: int,
    level: float,
) -> Interval:
    if len(personas) < 2:
        return Interval(value, math.nan, math.nan)
    codes = _codes(personas)
    if (codes == codes[0]).all():
        return Interval(value, value, value)  # every resample is the same sample
    result = bootstrap(
        (codes,),
        statistic,
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        vectorized=True,
        random_state=np.random.default_rng(seed),
    )
    ci = result.confidence_interval
    return Interval(value, float(ci.low), float(ci.high))


def n_eff_ci(
    personas: Sequence[AdviserPersona],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """N_eff of the answers with a percentile bootstrap interval (answers resampled)."""
    return _interval(
        personas,
        _n_eff_vec,
        n_eff(shares(personas)),
        resamples=resamples,
        seed=seed,
        level=level,
    )


def js_ci(
    personas: Sequence[AdviserPersona],
    reference: Sequence[float],
    *,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """JS(answers, reference) with a percentile bootstrap interval; the reference is fixed."""
    q = np.asarray(reference, dtype=float)

    def statistic(x: np.ndarray, axis: int = -1) -> np.ndarray:
        p = _shares_along(x, axis)
        m = (p + q) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            kl_p = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0) / m), 0.0).sum(axis=-1)
            kl_q = np.where(q > 0, q * np.log2(np.where(q > 0, q, 1.0) / m), 0.0).sum(axis=-1)
        return np.asarray((kl_p + kl_q) / 2)

    return _interval(
        personas,
        statistic,
        js_divergence(shares(personas), reference),
        resamples=resamples,
        seed=seed,
        level=level,
    )


class StanceConfusion(NamedTuple):
    """Rows: the reference stance of the situation; columns: the persona of the answer."""

    matrix: list[list[int]]
    stoic_as_doomer: float  # share of reference-Stoic situations answered as Doomer
    doomer_of_challenging: float  # Doomer / (Stoic + Doomer) among answers to Stoic situations
    healer_of_stoic: float  # share of reference-Stoic situations answered as Healer


def stance_confusion(
    reference: Sequence[AdviserPersona], answered: Sequence[AdviserPersona]
) -> StanceConfusion:
    matrix = confusion_matrix(reference, answered, PERSONAS)
    row = matrix[PERSONAS.index(AdviserPersona.STOIC)]
    stoic_n = sum(row)
    s = row[PERSONAS.index(AdviserPersona.STOIC)]
    d = row[PERSONAS.index(AdviserPersona.DOOMER)]
    h = row[PERSONAS.index(AdviserPersona.HEALER)]
    return StanceConfusion(
        matrix=matrix,
        stoic_as_doomer=d / stoic_n if stoic_n else math.nan,
        doomer_of_challenging=d / (s + d) if s + d else math.nan,
        healer_of_stoic=h / stoic_n if stoic_n else math.nan,
    )


def stance_agreement(
    reference: Sequence[AdviserPersona], answered: Sequence[AdviserPersona]
) -> float:
    """Share of answers whose persona is the situation's reference stance."""
    n = len(reference)
    return sum(r is a for r, a in zip(reference, answered, strict=True)) / n if n else math.nan


def changed_share(before: Sequence[AdviserPersona], after: Sequence[AdviserPersona]) -> float:
    """Share of paired answers (same situation) whose persona differs between two arms."""
    n = len(before)
    return sum(a is not b for a, b in zip(before, after, strict=True)) / n if n else math.nan


__all__ = [
    "Interval",
    "StanceConfusion",
    "changed_share",
    "js_ci",
    "js_divergence",
    "mixture",
    "n_eff",
    "n_eff_ci",
    "shares",
    "stance_agreement",
    "stance_confusion",
]
