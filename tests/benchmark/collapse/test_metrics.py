"""Collapse metrics recomputed against hand-computed values."""

from __future__ import annotations

import math

import pytest

from mirage_guard.benchmark.collapse import AdviserPersona as P
from mirage_guard.benchmark.collapse import PersonaThresholds, persona_of
from mirage_guard.benchmark.collapse import metrics as cm

H, S, T, EN, D = P.HEALER, P.STOIC, P.TECHNICIAN, P.ENABLER, P.DOOMER


def test_shares_follow_the_persona_order() -> None:
    assert cm.shares([H, H, S, D]) == [0.5, 0.25, 0.0, 0.0, 0.25]
    assert all(math.isnan(x) for x in cm.shares([]))


@pytest.mark.parametrize(
    ("distribution", "expected"),
    [
        ([1, 0, 0, 0, 0], 1.0),  # full collapse
        ([0.2] * 5, 5.0),  # uniform
        ([0.5, 0.5, 0, 0, 0], 2.0),
        # -(0.6 ln 0.6 + 2 * 0.2 ln 0.2) = 0.306495 + 0.643775 = 0.950271; e^0.950271 = 2.586409
        ([0.6, 0.2, 0.2, 0, 0], 2.586409),
        # 0.998 / 0.002: -(0.998 ln 0.998 + 0.002 ln 0.002) = 0.001998 + 0.012429 = 0.014427
        ([0.998, 0.002, 0, 0, 0], 1.014532),
    ],
)
def test_n_eff_of_known_distributions(distribution: list[float], expected: float) -> None:
    assert cm.n_eff(distribution) == pytest.approx(expected, abs=1e-6)


def test_n_eff_of_counts_is_normalised_and_empty_is_nan() -> None:
    assert cm.n_eff([3, 3, 0, 0, 0]) == pytest.approx(2.0)
    assert math.isnan(cm.n_eff([]))
    assert math.isnan(cm.n_eff([math.nan] * 5))


@pytest.mark.parametrize(
    ("p", "q", "expected"),
    [
        ([0.2] * 5, [0.2] * 5, 0.0),
        ([1, 0, 0, 0, 0], [0, 1, 0, 0, 0], 1.0),  # disjoint: 1 bit
        # M = (0.75, 0.25); KL(P|M) = log2(4/3) = 0.415037; KL(Q|M) = 0.5 log2(2/3) + 0.5 = 0.207519
        ([1, 0], [0.5, 0.5], 0.311278),
        # M = (0.5, 0.3, 0.2); worked out term by term in the next test
        ([0.8, 0.2, 0.0], [0.2, 0.4, 0.4], 0.363547),
    ],
)
def test_js_divergence_of_known_pairs(p: list[float], q: list[float], expected: float) -> None:
    assert cm.js_divergence(p, q) == pytest.approx(expected, abs=1e-6)
    assert cm.js_divergence(q, p) == pytest.approx(expected, abs=1e-6)


def test_js_hand_computation_of_the_three_point_pair() -> None:
    # the 0.363547 above: M = (0.5, 0.3, 0.2)
    kl_p = 0.8 * math.log2(0.8 / 0.5) + 0.2 * math.log2(0.2 / 0.3)
    kl_q = 0.2 * math.log2(0.2 / 0.5) + 0.4 * math.log2(0.4 / 0.3) + 0.4 * math.log2(0.4 / 0.2)
    assert (kl_p + kl_q) / 2 == pytest.approx(0.363547, abs=1e-6)


def test_js_is_nan_when_a_side_is_empty() -> None:
    assert math.isnan(cm.js_divergence([math.nan] * 5, [0.2] * 5))
    assert math.isnan(cm.js_divergence([0] * 5, [0.2] * 5))


def test_mixture_weights_contexts_by_answers() -> None:
    by_context = {"a": [1.0, 0, 0, 0, 0], "b": [0, 0, 1.0, 0, 0]}
    assert cm.mixture(by_context, {"a": 3, "b": 1}) == [0.75, 0, 0.25, 0, 0]


@pytest.mark.parametrize(
    ("h", "e", "expected"),
    [
        (0.25, 0.25, T),  # the band is inclusive
        (-0.25, -0.25, T),
        (0.0, 0.0, T),
        (0.26, 0.1, H),
        (-0.26, 0.1, S),
        (0.1, -0.26, EN),
        (-0.1, -0.26, D),
        (0.0, 0.8, H),  # 0 counts as the positive side
        (-0.01, 0.8, S),
        (0.8, 0.0, H),
        (0.8, -0.01, EN),
        (-0.8, -0.8, D),
    ],
)
def test_persona_mapping_boundaries(h: float, e: float, expected: P) -> None:
    assert persona_of(h, e) is expected


def test_persona_thresholds_are_configurable() -> None:
    wide = PersonaThresholds(h_band=0.5, e_band=0.1)
    assert persona_of(0.4, 0.05, wide) is T
    assert persona_of(0.4, 0.2, wide) is H  # outside the E band
    assert persona_of(0.4, 0.05) is H  # default band 0.25


def test_bootstrap_intervals_bracket_the_value_and_are_reproducible() -> None:
    answers = [H] * 12 + [S] * 5 + [T] * 3
    first = cm.n_eff_ci(answers, resamples=500, seed=3)
    again = cm.n_eff_ci(answers, resamples=500, seed=3)
    assert first == again
    assert first.value == pytest.approx(cm.n_eff([12, 5, 3, 0, 0]))
    assert first.low <= first.value <= first.high
    assert 1.0 <= first.low < first.high <= 3.0
    ref = [0.3, 0.3, 0.2, 0.1, 0.1]
    js = cm.js_ci(answers, ref, resamples=500, seed=3)
    assert js.value == pytest.approx(cm.js_divergence(cm.shares(answers), ref))
    assert js.low <= js.value <= js.high


def test_vectorised_bootstrap_statistic_matches_the_scalar_one() -> None:
    """A resample of the answers themselves: the CI of a one-persona-swapped sample moves."""
    collapsed = [H] * 19 + [S]
    ci = cm.n_eff_ci(collapsed, resamples=400, seed=0)
    assert ci.low == pytest.approx(1.0)  # some resamples hold no Stoic answer
    assert ci.high >= cm.n_eff([19, 1, 0, 0, 0])


def test_a_degenerate_sample_has_a_point_interval() -> None:
    assert cm.n_eff_ci([H] * 10) == cm.Interval(1.0, 1.0, 1.0)
    assert math.isnan(cm.n_eff_ci([H]).low)


def test_stance_confusion_by_hand() -> None:
    reference = [S, S, S, S, H, T]
    answered = [D, S, H, H, H, T]
    c = cm.stance_confusion(reference, answered)
    assert c.matrix[1] == [2, 1, 0, 0, 1]  # Stoic row: 2 Healer, 1 Stoic, 1 Doomer
    assert c.matrix[0] == [1, 0, 0, 0, 0]
    assert c.stoic_as_doomer == pytest.approx(0.25)
    assert c.doomer_of_challenging == pytest.approx(0.5)
    assert c.healer_of_stoic == pytest.approx(0.5)
    assert cm.stance_agreement(reference, answered) == pytest.approx(3 / 6)
    assert cm.changed_share(reference, answered) == pytest.approx(3 / 6)
