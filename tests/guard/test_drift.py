"""Score drift: PSI of live scores against a profile's fitted distribution; unknown is not 0."""

from __future__ import annotations

import numpy as np
import pytest

from mirage_guard.guard.scoring import (
    CalibrationProfile,
    DriftMonitor,
    DriftStatus,
    ScoreDistribution,
    psi,
    rolling_psi,
    score_distribution,
)
from tests.calibration.factories import make_profile

RNG = np.random.default_rng(7)
FITTED = RNG.beta(2.0, 5.0, 4000)  # mostly low P(OI), as a healthy writer's fit data


def _profile_with(scores: np.ndarray | None) -> CalibrationProfile:
    base = make_profile()
    dist = None if scores is None else score_distribution(scores)
    return base.model_copy(update={"score_distribution": dist})


def test_distribution_counts_every_score_in_fixed_bins() -> None:
    dist = score_distribution([0.0, 0.05, 0.5, 0.99, 1.0, 1.7, -0.2], bins=4)
    assert dist.edges == (0.0, 0.25, 0.5, 0.75, 1.0)
    assert dist.counts == (3, 0, 1, 3)  # out-of-range scores land in the end bins
    assert dist.n == 7


def test_distribution_refuses_bad_shapes() -> None:
    with pytest.raises(ValueError, match="bins"):
        ScoreDistribution(edges=(0.0, 1.0), counts=(3,))
    with pytest.raises(ValueError, match="not all 0"):
        ScoreDistribution(edges=(0.0, 0.5, 1.0), counts=(0, 0))


def test_psi_is_zero_for_the_same_shape_and_grows_with_the_shift() -> None:
    ref = score_distribution(FITTED)
    same = score_distribution(RNG.beta(2.0, 5.0, 4000))
    shifted = score_distribution(RNG.beta(3.0, 4.0, 4000))
    flipped = score_distribution(RNG.beta(5.0, 2.0, 4000))
    assert psi(ref.counts, ref.counts) == 0.0
    small, mid, large = (psi(ref.counts, d.counts) for d in (same, shifted, flipped))
    assert small < 0.05 < mid < large
    assert large > 1.0
    # the definition: sum (a - e) ln(a / e) over bin shares (an empty bin counts as 1e-4)
    e = np.clip(np.asarray(ref.counts) / ref.n, 1e-4, None)
    a = np.clip(np.asarray(shifted.counts) / shifted.n, 1e-4, None)
    assert mid == pytest.approx(float(np.sum((a - e) * np.log(a / e))), rel=1e-6)


def test_rolling_psi_matches_psi_of_each_window() -> None:
    ref = score_distribution(FITTED)
    live = list(RNG.beta(2.0, 5.0, 150)) + list(RNG.beta(5.0, 2.0, 150))
    series = rolling_psi(ref, live, 100)
    assert len(series) == 201
    for i in (0, 57, 200):
        window = np.asarray(live[i : i + 100])
        expected = psi(ref.counts, np.histogram(window, bins=np.asarray(ref.edges))[0])
        assert series[i] == pytest.approx(expected)
    assert series[0] < 0.25 < series[-1]
    assert len(rolling_psi(ref, live[:99], 100)) == 0


def test_monitor_reports_stale_after_a_shift_and_ok_before() -> None:
    monitor = DriftMonitor(window=200, min_scores=50)
    profile = _profile_with(FITTED)
    monitor.track("m-a", profile)
    assert monitor.observe("m-a", profile.profile_id, RNG.beta(2.0, 5.0, 200).tolist())
    ok = monitor.reading("m-a")
    assert ok is not None
    assert ok.status is DriftStatus.OK
    assert ok.psi is not None
    assert ok.psi < 0.25
    assert (ok.profile_id, ok.profile_hash, ok.scores) == (
        profile.profile_id,
        profile.content_hash,
        200,
    )
    monitor.observe("m-a", profile.profile_id, RNG.beta(6.0, 1.5, 200).tolist())
    stale = monitor.reading("m-a")
    assert stale is not None
    assert stale.status is DriftStatus.STALE
    assert stale.psi is not None
    assert stale.psi > 0.25
    assert stale.scores == 200  # a sliding window: the old scores left it


def test_old_profile_without_a_distribution_reports_unknown_not_zero() -> None:
    monitor = DriftMonitor(window=100, min_scores=10)
    old = _profile_with(None)
    monitor.track("m-old", old)
    monitor.observe("m-old", old.profile_id, [0.9] * 100)
    reading = monitor.reading("m-old")
    assert reading is not None
    assert reading.status is DriftStatus.UNKNOWN
    assert reading.psi is None
    assert reading.why_unknown is not None
    assert "distribution" in reading.why_unknown


def test_too_few_scores_is_unknown_and_other_profiles_are_ignored() -> None:
    monitor = DriftMonitor(window=100, min_scores=20)
    profile = _profile_with(FITTED)
    monitor.track("m-a", profile)
    assert not monitor.observe("m-a", "another-profile", [0.5] * 50)
    assert not monitor.observe("m-unknown", profile.profile_id, [0.5] * 50)
    monitor.observe("m-a", profile.profile_id, [0.1] * 19)
    reading = monitor.reading("m-a")
    assert reading is not None
    assert (reading.status, reading.scores) == (DriftStatus.UNKNOWN, 19)
    assert monitor.reading("m-unknown") is None


def test_tracking_a_refitted_profile_starts_a_new_window() -> None:
    monitor = DriftMonitor(window=100, min_scores=10)
    first = _profile_with(FITTED)
    monitor.track("m-a", first)
    monitor.observe("m-a", first.profile_id, [0.9] * 50)
    monitor.track("m-a", first)  # the same profile again (a reload that changed nothing)
    assert (r := monitor.reading("m-a")) is not None
    assert r.scores == 50
    refit = _profile_with(RNG.beta(6.0, 1.5, 1000))  # same id, new content
    assert refit.profile_id == first.profile_id
    assert refit.content_hash != first.content_hash
    monitor.track("m-a", refit)
    assert (r := monitor.reading("m-a")) is not None
    assert (r.scores, r.profile_hash) == (0, refit.content_hash)
