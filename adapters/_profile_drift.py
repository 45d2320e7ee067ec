"""Calibration drift from the decision log: has a writer model's profile gone stale, and since when?

Every decision records the profile version that scored it (``scored_with_profile``: profile id
and content hash). Per writer model, the scores of the decisions made by its latest profile
version, in time order, are compared with the distribution that profile was fitted on, window by
window (PSI, :func:`mirage_guard.guard.scoring.rolling_psi`, the sidecar's gauge on the log).
When the latest window is over the threshold, the profile is *stale since* the end of the first
window of the run of over-threshold windows that reaches the present. A profile without a fitted
distribution, one not installed here, or too few scores: drift *unknown*, never 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, ConfigDict

from mirage_guard.adapters._time import as_utc
from mirage_guard.guard import ReasonCode
from mirage_guard.guard.scoring import (
    DRIFT_WINDOW,
    PSI_STALE,
    CalibrationProfile,
    DriftStatus,
    rolling_psi,
)

if TYPE_CHECKING:
    from mirage_guard.adapters._pollution import DecisionRecord


class ProfileDrift(BaseModel):
    """The drift of one writer model's latest profile version over the decision log."""

    model_config = ConfigDict(frozen=True)

    model: str
    profile_id: str
    profile_hash: str
    status: DriftStatus
    psi: float | None
    scores: int
    window: int
    threshold: float
    stale_since: datetime | None = None
    why_unknown: str | None = None

    def sentence(self) -> str:
        """The report line (rendered here, at the edge)."""
        which = f"{self.profile_id}@{self.profile_hash}"
        if self.status is DriftStatus.STALE and self.stale_since is not None:
            since = as_utc(self.stale_since).strftime("%Y-%m-%d %H:%M:%S UTC")
            return (
                f"profile for {self.model} is stale since {since} (PSI {self.psi:.3f} > "
                f"{self.threshold:g} over its last {self.window} scores; profile {which}): "
                "refit and reload it"
            )
        if self.status is DriftStatus.OK:
            return (
                f"profile for {self.model} still fits its live scores (PSI {self.psi:.3f} <= "
                f"{self.threshold:g} over its last {self.window} scores; profile {which})"
            )
        return f"drift of the profile for {self.model} is unknown: {self.why_unknown} ({which})"


def _scored_with(row: DecisionRecord) -> tuple[str, str] | None:
    for r in row.reasons:
        if r.code is ReasonCode.SCORED_WITH_PROFILE:
            pid, digest = r.params.get("profile_id"), r.params.get("profile_hash")
            if isinstance(pid, str) and isinstance(digest, str):
                return pid, digest
    return None


def profile_drift(
    rows: Sequence[DecisionRecord],
    profiles: Sequence[CalibrationProfile],
    *,
    window: int = DRIFT_WINDOW,
    threshold: float = PSI_STALE,
) -> list[ProfileDrift]:
    """One line per writer model whose decisions name the profile version that made them."""
    by_hash = {p.content_hash: p for p in profiles}
    by_model: dict[str, list[tuple[datetime, tuple[str, str], float]]] = defaultdict(list)
    for row in rows:
        key = _scored_with(row)
        if row.writer_model and key is not None and row.score is not None:
            by_model[row.writer_model].append((as_utc(row.created_at), key, row.score))
    return [
        _one(model, sorted(scored, key=lambda x: x[0]), by_hash, window, threshold)
        for model, scored in sorted(by_model.items())
    ]


def _one(
    model: str,
    scored: list[tuple[datetime, tuple[str, str], float]],
    by_hash: dict[str, CalibrationProfile],
    window: int,
    threshold: float,
) -> ProfileDrift:
    pid, digest = scored[-1][1]  # the latest profile version used for this model
    mine = [(ts, score) for ts, key, score in scored if key == (pid, digest)]
    n = len(mine)
    w = min(window, n)
    base = {"model": model, "profile_id": pid, "profile_hash": digest, "scores": n}
    base |= {"window": w, "threshold": threshold}
    profile = by_hash.get(digest)
    why: str | None = None
    if profile is None:
        why = "that profile version is not installed here (pass --profile-dir)"
    elif profile.score_distribution is None:
        why = "the profile stores no fitted score distribution (fitted before drift checks)"
    elif n < max(10, window // 5):
        why = f"{n} scores, fewer than {max(10, window // 5)}"
    if why is not None or profile is None or profile.score_distribution is None:
        return ProfileDrift(**base, status=DriftStatus.UNKNOWN, psi=None, why_unknown=why)
    series = rolling_psi(profile.score_distribution, [s for _, s in mine], w)
    last = float(series[-1])
    if last <= threshold:
        return ProfileDrift(**base, status=DriftStatus.OK, psi=last)
    below = np.flatnonzero(series <= threshold)
    first_over = int(below[-1]) + 1 if len(below) else 0
    since = mine[first_over + w - 1][0]  # the score that closed the first stale window
    return ProfileDrift(**base, status=DriftStatus.STALE, psi=last, stale_since=since)


__all__ = ["ProfileDrift", "profile_drift"]
