"""Score drift: do live scores still look like the scores a profile was fitted on?

A profile keeps the calibrated P(over-inference) it gave its own fitting data as counts in fixed
bins over [0, 1] (:class:`ScoreDistribution`). Live scores of the same profile are compared with
it by the population stability index (PSI) over a sliding window: 0 for the same shape, > 0.1 a
moderate shift, > 0.25 (:data:`PSI_STALE`) a shift large enough that the profile's thresholds no
longer mean what they meant at fit time. A profile fitted before distributions were stored has
none: its drift is *unknown* (``None``), never 0.

Pure numpy (the sidecar loads no scipy); thread-safe :class:`DriftMonitor` for the edge.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from mirage_guard.guard.scoring._profile import CalibrationProfile

FloatArray = npt.NDArray[np.float64]

SCORE_BINS = 10
PSI_STALE = 0.25  # the usual "significant shift" cut of the population stability index
DRIFT_WINDOW = 500  # live scores per writer model compared with the fitted distribution
DRIFT_MIN_SCORES = 100  # fewer live scores than this: drift unknown (too noisy to tell)
_EPS = 1e-4  # share given to an empty bin, so one empty bin does not make PSI infinite


class ScoreDistribution(BaseModel):
    """Counts of scores in equal-width bins over [0, 1] (``edges`` has one more entry)."""

    model_config = ConfigDict(frozen=True)

    edges: tuple[float, ...]
    counts: tuple[int, ...]
    split: str = Field(default="train", description="which data the scores were computed on")

    @model_validator(mode="after")
    def _shape(self) -> ScoreDistribution:
        if len(self.edges) != len(self.counts) + 1 or len(self.counts) < 2:
            raise ValueError("a score distribution needs >= 2 bins and len(edges) == bins + 1")
        if any(b <= a for a, b in zip(self.edges, self.edges[1:], strict=False)):
            raise ValueError("bin edges must increase")
        if min(self.counts) < 0 or sum(self.counts) == 0:
            raise ValueError("counts must be >= 0 and not all 0")
        return self

    @property
    def n(self) -> int:
        return sum(self.counts)


def score_distribution(
    scores: Sequence[float] | FloatArray, *, bins: int = SCORE_BINS, split: str = "train"
) -> ScoreDistribution:
    """The distribution a profile stores: ``scores`` counted in ``bins`` bins over [0, 1]."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts = bin_counts(np.asarray(scores, dtype=np.float64), edges)
    return ScoreDistribution(
        edges=tuple(round(float(e), 6) for e in edges),
        counts=tuple(int(c) for c in counts),
        split=split,
    )


def bin_counts(scores: FloatArray, edges: Sequence[float] | FloatArray) -> npt.NDArray[np.int64]:
    """Counts per bin; scores outside [edges[0], edges[-1]] go to the first/last bin."""
    clipped = np.clip(scores, edges[0], edges[-1])
    counts, _ = np.histogram(clipped, bins=np.asarray(edges, dtype=np.float64))
    return counts.astype(np.int64)


def psi(expected: npt.ArrayLike, actual: npt.ArrayLike) -> float:
    """Population stability index of two count vectors over the same bins."""
    e = np.asarray(expected, dtype=np.float64)
    a = np.asarray(actual, dtype=np.float64)
    e = np.clip(e / e.sum(), _EPS, None)
    a = np.clip(a / a.sum(), _EPS, None)
    return float(np.sum((a - e) * np.log(a / e)))


def rolling_psi(reference: ScoreDistribution, scores: Sequence[float], window: int) -> FloatArray:
    """PSI of every window of ``window`` consecutive scores (result[i]: the window ending at
    score ``i + window - 1``); empty when there are fewer scores than one window."""
    x = np.asarray(scores, dtype=np.float64)
    if len(x) < window or window < 1:
        return np.zeros(0, dtype=np.float64)
    edges = np.asarray(reference.edges)
    bins = np.clip(np.searchsorted(edges, np.clip(x, edges[0], edges[-1]), side="right") - 1,
                   0, len(reference.counts) - 1)  # fmt: skip
    onehot = np.zeros((len(x) + 1, len(reference.counts)), dtype=np.int64)
    onehot[np.arange(1, len(x) + 1), bins] = 1
    cum = np.cumsum(onehot, axis=0)
    windows = cum[window:] - cum[:-window]
    return np.asarray([psi(reference.counts, w) for w in windows], dtype=np.float64)


class DriftStatus(StrEnum):
    OK = "ok"
    STALE = "stale"  # PSI above the threshold: refit the profile
    UNKNOWN = "unknown"  # no fitted distribution in the profile, or too few live scores yet


class DriftReading(BaseModel):
    """The drift of one writer model's live scores against its active profile."""

    model_config = ConfigDict(frozen=True)

    model: str
    profile_id: str
    profile_hash: str
    psi: float | None
    scores: int
    status: DriftStatus
    why_unknown: str | None = None


class _Track:
    def __init__(self, profile: CalibrationProfile, window: int) -> None:
        self.profile_id = profile.profile_id
        self.profile_hash = profile.content_hash
        self.reference = profile.score_distribution
        self.scores: deque[float] = deque(maxlen=window)


class DriftMonitor:
    """Sliding windows of live scores, one per writer model, each against the profile that
    scores that model's writes. Scores of any other profile are ignored; tracking another
    profile (a reload) starts a new window."""

    def __init__(
        self,
        *,
        window: int = DRIFT_WINDOW,
        min_scores: int = DRIFT_MIN_SCORES,
        threshold: float = PSI_STALE,
    ) -> None:
        if window < 1 or not 1 <= min_scores <= window:
            raise ValueError("need 1 <= min_scores <= window")
        self.window = window
        self.min_scores = min_scores
        self.threshold = threshold
        self._tracks: dict[str, _Track] = {}
        self._lock = threading.Lock()

    def track(self, model: str, profile: CalibrationProfile) -> None:
        with self._lock:
            current = self._tracks.get(model)
            if current is None or current.profile_hash != profile.content_hash:
                self._tracks[model] = _Track(profile, self.window)

    def models(self) -> list[str]:
        with self._lock:
            return sorted(self._tracks)

    def observe(self, model: str, profile_id: str | None, scores: Sequence[float]) -> bool:
        """Add scores made by ``profile_id`` for ``model``; False when that is not the tracked
        profile (nothing added)."""
        with self._lock:
            track = self._tracks.get(model)
            if track is None or track.profile_id != profile_id:
                return False
            track.scores.extend(float(s) for s in scores)
            return True

    def reading(self, model: str) -> DriftReading | None:
        with self._lock:
            track = self._tracks.get(model)
            if track is None:
                return None
            live = np.asarray(track.scores, dtype=np.float64)
            return self._read(model, track, live)

    def _read(self, model: str, track: _Track, live: FloatArray) -> DriftReading:
        base = {
            "model": model,
            "profile_id": track.profile_id,
            "profile_hash": track.profile_hash,
            "scores": len(live),
        }
        if track.reference is None:
            why = "the profile stores no fitted score distribution (fitted before drift checks)"
            return DriftReading(**base, psi=None, status=DriftStatus.UNKNOWN, why_unknown=why)
        if len(live) < self.min_scores:
            why = f"{len(live)} live scores, fewer than {self.min_scores}"
            return DriftReading(**base, psi=None, status=DriftStatus.UNKNOWN, why_unknown=why)
        value = psi(track.reference.counts, bin_counts(live, track.reference.edges))
        status = DriftStatus.STALE if value > self.threshold else DriftStatus.OK
        return DriftReading(**base, psi=value, status=status)
