"""Metric tests: hand-computed cases and the paper's published numbers (0.1 tolerance)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from mirage_guard.benchmark import metrics as m
from mirage_guard.benchmark._paper import paper_numbers
from mirage_guard.guard._domain import Label

G, R, S, F = (
    Label.GROUNDED,
    Label.INFERRED_REASONABLE,
    Label.INFERRED_STEREOTYPE,
    Label.FABRICATED,
)
# the published figures only: benchmark/data/paper_numbers.json, a verbatim copy of the team's
# shared/data/paper_numbers.json (test_packaged_paper_numbers_are_the_shared_file checks it)
PAPER: dict[str, Any] = paper_numbers()
SHARED_PAPER_FILE = Path(__file__).resolve().parents[3] / "shared" / "data" / "paper_numbers.json"
ROUNDING = 0.1 + 1e-9  # published percentages are rounded to 0.1


def labels(g: int = 0, r: int = 0, s: int = 0, f: int = 0) -> list[Label]:
    return [G] * g + [R] * r + [S] * s + [F] * f


# -- hand-computed -----------------------------------------------------------------------------


def test_label_shares_and_oi_by_hand() -> None:
    shares = m.label_shares(labels(g=2, r=3, s=1, f=4))
    assert shares == (10, 0.2, 0.3, 0.1, 0.4)
    assert shares.oi == pytest.approx(0.5)
    assert math.isnan(m.oi_rate([]))


def test_macro_and_micro_differ_when_claim_counts_differ() -> None:
    # model a: 1 OI of 2 claims (50 %); model b: 2 OI of 8 claims (25 %)
    by_model = {"a": labels(g=1, f=1), "b": labels(g=5, r=1, s=1, f=1)}
    assert m.oi_macro(by_model) == pytest.approx((0.5 + 0.25) / 2)  # 37.5 %
    assert m.oi_micro(by_model) == pytest.approx(3 / 10)  # 30 %


def test_shares_by_key_and_group_delta() -> None:
    items = [("st", S), ("st", F), ("st", G), ("ct", G), ("ct", F), ("ct", R), ("ct", G)]
    by = m.shares_by(items)
    assert by["st"].oi == pytest.approx(2 / 3)
    assert by["ct"].oi == pytest.approx(1 / 4)
    assert m.group_delta(by["st"].oi, by["ct"].oi) == pytest.approx(2 / 3 - 1 / 4)


def test_spearman_by_hand_and_bootstrap_ci_contains_it() -> None:
    # ranks x: 1 2 3 4 5, ranks y: 5 4 3 1 2 -> d² = 16+4+0+9+9 = 38, ρ = 1 − 6·38/(5·24) = −0.9
    xs, ys = [10.0, 20.0, 30.0, 40.0, 50.0], [0.9, 0.8, 0.7, 0.1, 0.2]
    result = m.spearman(xs, ys)
    assert result.coefficient == pytest.approx(-0.9)
    assert result.n == 5
    assert 0 < result.p_value < 0.1
    lo, hi = m.bootstrap_spearman_ci(xs, ys, n_boot=500, seed=1)
    assert -1.0 <= lo <= -0.9 <= hi <= 1.0
    families = ["x", "x", "y", "z", "z"]
    flo, fhi = m.bootstrap_spearman_ci(xs, ys, clusters=families, n_boot=500, seed=1)
    assert -1.0 <= flo <= fhi <= 1.0
    assert m.bootstrap_spearman_ci(xs, ys, n_boot=200, seed=3) == m.bootstrap_spearman_ci(
        xs, ys, n_boot=200, seed=3
    )


def test_clustered_bootstrap_resamples_whole_families() -> None:
    xs, ys = [10.0, 20.0, 30.0, 40.0, 50.0], [0.9, 0.8, 0.7, 0.1, 0.2]
    # one family: every resample is the whole data set, so the CI collapses onto ρ itself
    lo, hi = m.bootstrap_spearman_ci(xs, ys, clusters=["f"] * 5, n_boot=50)
    assert lo == pytest.approx(-0.9)
    assert hi == pytest.approx(-0.9)
    with pytest.raises(ValueError, match="same length"):
        m.bootstrap_spearman_ci(xs, ys, clusters=["f"])


def test_probe_error_rate_is_the_oi_share_of_probe_items() -> None:
    assert m.probe_error_rate(labels(g=45, r=3, s=1, f=1)) == pytest.approx(0.04)


def test_auroc_by_hand() -> None:
    # positives 0.9, 0.4; negatives 0.5, 0.1: pairs won 0.9>0.5, 0.9>0.1, 0.4>0.1, lost 0.4<0.5
    assert m.auroc([0.9, 0.4, 0.5, 0.1], [True, True, False, False]) == pytest.approx(0.75)
    assert m.auroc([0.5, 0.5], [True, False]) == pytest.approx(0.5)  # a tie counts half
    assert math.isnan(m.auroc([0.1, 0.2], [True, True]))


def test_within_model_auroc_uses_above_median_judge_records() -> None:
    judge = [10.0, 20.0, 60.0, 80.0]  # median 40: records 3 and 4 are positives
    assert m.within_model_auroc([5.0, 1.0, 30.0, 50.0], judge) == pytest.approx(1.0)
    assert m.within_model_auroc([50.0, 30.0, 1.0, 5.0], judge) == pytest.approx(0.0)


def test_accumulation_fit_by_hand() -> None:
    fit = m.accumulation([3, 5, 7, 9, 11, 13, 15, 17])  # +2 per round, exactly linear
    assert fit.acc == pytest.approx(2.0)
    assert fit.slope == pytest.approx(2.0)
    assert fit.intercept == pytest.approx(1.0)
    assert fit.r2 == pytest.approx(1.0)
    bent = m.accumulation([1, 1, 1, 4])
    assert bent.acc == pytest.approx(1.0)  # (4 − 1)/3
    assert bent.slope == pytest.approx(0.9)  # OLS on x = 1..4
    assert bent.r2 == pytest.approx(0.6)  # SSres 1.8 / SStot 6.75 → 1 − 0.2667
    with pytest.raises(ValueError, match="two rounds"):
        m.accumulation([3])


def test_removal_and_revision_rates_by_hand() -> None:
    rounds = [["a", "b"], ["a", "b", "c"], ["a", "c", "d"]]
    assert m.removal_rate(rounds) == pytest.approx(1 / 5)  # b removed of 2 + 3 held
    assert m.revision_rate(["b", "x"], [["a"], ["x"]]) == pytest.approx(0.5)


def test_pearson_by_hand() -> None:
    assert m.pearson([1, 2, 3, 4], [2, 4, 6, 8]).coefficient == pytest.approx(1.0)
    assert math.isnan(m.pearson([1, 1, 1], [1, 2, 3]).coefficient)


def test_memory_pollution_and_grounded_retention() -> None:
    assert m.memory_pollution(labels(g=3, r=1, s=1, f=1)) == pytest.approx(2 / 6)
    stored = [(G, "t1"), (G, "t1"), (R, "t2"), (F, None), (G, "elsewhere")]
    assert m.grounded_retention(["t1", "t2", "t3"], stored) == pytest.approx(1 / 3)
    assert m.grounded_kept_share([G, G, F, G], [True, False, False, True]) == pytest.approx(2 / 3)


def test_agreement_by_hand() -> None:
    human = [G, G, R, S, F, F, F, R]
    judge = [G, R, R, S, F, S, F, R]
    a = m.agreement(human, judge)
    assert a.accuracy == pytest.approx(6 / 8)
    # 4-class: po = .75, pe = Σ row·col / n² = (2·1 + 2·3 + 1·2 + 3·2)/64 = 16/64
    assert a.kappa == pytest.approx((0.75 - 0.25) / 0.75)
    # binary OI: human FFFTTTTF, judge FFFTTTTF -> perfect
    assert a.accuracy_binary == 1.0
    assert a.kappa_binary == pytest.approx(1.0)
    assert a.per_class[R] == m.ClassScore(precision=2 / 3, recall=1.0, f1=0.8, support=2)
    assert a.per_class[G].recall == pytest.approx(0.5)
    assert a.confusion[0] == [1, 1, 0, 0]
    assert sum(map(sum, a.confusion)) == 8


def test_accuracy_shares_by_hand() -> None:
    shares = m.accuracy_shares(["CORRECT", "INCORRECT", "CORRECT", "UNVERIFIABLE"])
    assert shares == {"CORRECT": 0.5, "INCORRECT": 0.25, "UNVERIFIABLE": 0.25}
    assert m.accuracy_shares([]) == {}


def test_self_monitoring_gap() -> None:
    assert m.self_monitoring_gap(0.487, 0.130) == pytest.approx(0.357)


# -- the paper's numbers -----------------------------------------------------------------------


def test_packaged_paper_numbers_are_the_shared_file() -> None:
    if not SHARED_PAPER_FILE.is_file():
        pytest.skip(f"no shared figures at {SHARED_PAPER_FILE} (outside this checkout)")
    assert json.loads(SHARED_PAPER_FILE.read_text()) == PAPER
    assert PAPER["table1_judge_percent"]["rows"] == {}  # no per-model rows are published


def test_published_model_ois_lie_in_the_published_range() -> None:
    lo, hi = PAPER["abstract"]["oi_range_percent"]
    models = PAPER["table1_judge_percent"]["models_oi"]
    assert all(lo <= oi <= hi for oi in models.values())
    assert max(models, key=models.__getitem__) == "Qwen3-8B"  # worst
    assert min(models, key=models.__getitem__) == "Gemini-3.1-pro"  # best
    means = PAPER["table1_judge_percent"]["cross_model_means"]
    # S + F of the means is the macro OI within rounding of two published shares
    assert means["stereotype"] + means["fabricated"] == pytest.approx(
        PAPER["abstract"]["oi_macro_percent"], abs=2 * ROUNDING
    )


def test_paper_persona_groups_decompose_and_delta() -> None:
    groups = PAPER["persona_groups_percent"]
    for name in ("stereotypical", "counter_stereotypical", "neutral"):
        g = groups[name]
        claims = labels(
            s=round(g["stereotype"] * 10),
            f=round(g["fabricated"] * 10),
            g=1000 - round((g["stereotype"] + g["fabricated"]) * 10),
        )
        assert 100 * m.oi_rate(claims) == pytest.approx(g["oi"], abs=ROUNDING)
    delta = m.group_delta(groups["stereotypical"]["oi"], groups["counter_stereotypical"]["oi"])
    assert delta == pytest.approx(groups["delta_stereo_minus_counter_points"], abs=ROUNDING)


def test_paper_task_decompositions() -> None:
    tasks = PAPER["per_task_oi_percent"]
    for name in ("recommendation_letter",):
        t = tasks[name]
        assert t["stereotype"] + t["fabricated"] == pytest.approx(t["oi"], abs=ROUNDING)
    assert tasks["apartment"]["stereotype"] < tasks["apartment"]["oi"]
    ordered = [tasks["gift"], tasks["recommendation_letter"]["oi"], tasks["apartment"]["oi"]]
    assert ordered == sorted(ordered)  # the imagination gradient, on the published tasks
    lo, hi = tasks["oi_range_percent"]
    assert lo <= min(ordered)
    assert max(ordered) <= hi


def test_disagreement_structure_by_hand() -> None:
    # rows human, columns judge, order G R S F: 2 G->R (adjacent), 1 S->F (adjacent, S<->F),
    # 1 G->F (3 apart), 1 F->S (adjacent, S<->F)
    confusion = [[5, 2, 0, 1], [0, 4, 0, 0], [0, 0, 3, 1], [0, 0, 1, 6]]
    structure = m.disagreement_structure(confusion)
    assert structure.disagreements == 5
    assert structure.adjacent_share == pytest.approx(4 / 5)
    assert structure.stereotype_fabricated == 2


def test_paper_self_monitoring_gaps_have_opposite_signs() -> None:
    gaps = {
        model: m.self_monitoring_gap(v["judge"], v["self"])
        for model, v in PAPER["self_audit_oi_percent"].items()
    }
    assert gaps["Qwen3-8B"] == pytest.approx(35.7, abs=ROUNDING)
    assert gaps["Kimi-K2.5"] == pytest.approx(-15.1, abs=ROUNDING)


def test_paper_judge_vs_human_accuracy_is_consistent_with_its_disagreements() -> None:
    jh = PAPER["abstract"]["judge_vs_human"]
    # 400 claims, 41 disagreements -> 359 agreements = 89.75 % ≈ 0.898
    human = [G] * jh["claims"]
    judge = [F] * jh["disagreements"] + [G] * (jh["claims"] - jh["disagreements"])
    assert m.agreement(human, judge).accuracy == pytest.approx(jh["accuracy_4class"], abs=0.001)
