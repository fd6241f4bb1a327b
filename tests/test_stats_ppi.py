"""Corrected estimates on simulated studies with a known truth: they reproduce ppi_py, their
intervals cover the truth, they beat the experts alone when the judge is informative, weights
undo a stratified draw, and the planning numbers deliver the width they promise."""

from __future__ import annotations

import math

import numpy as np
import ppi_py
import pytest
from ppi_py.ppi import _calc_lam_glm

from physgrade.stats.describe import Z95
from physgrade.stats.ppi import Corrected, classical_mean, difference, needed, ppi_mean


def lenient_judge(rng: np.random.Generator, truth: np.ndarray, leniency: float = 0.5,
                  slips: float = 0.05) -> np.ndarray:
    """A judge that calls a wrong final answer correct with probability ``leniency`` and a right
    one wrong with probability ``slips``: more "correct" than the truth, correlated with it."""
    lenient = rng.random(len(truth)) < leniency
    slipped = rng.random(len(truth)) < slips
    return np.where(truth == 1, ~slipped, lenient).astype(float)


def study(seed: int, population: int = 4000, rate: float = 0.6, graded: int = 150,
          leniency: float = 0.5):
    """Truth and judge on a population; a uniformly random sample of it graded by experts.
    Returns (labels, judged on them, judged on the rest, the population's true mean)."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(population) < rate).astype(float)
    judged = lenient_judge(rng, truth, leniency)
    order = rng.permutation(population)
    sample, rest = order[:graded], order[graded:]
    return truth[sample], judged[sample], judged[rest], float(truth.mean())


def half_width(estimate: Corrected) -> float:
    return (estimate.ci95[1] - estimate.ci95[0]) / 2


def ppi_py_lam(y, y_hat, y_hat_unlabeled, w=None, w_unlabeled=None) -> float:
    """The lam ppi_py tunes inside ppi_mean_ci, worked out with its own helper."""
    w = np.ones(len(y)) if w is None else w / w.sum() * len(y)
    w_unlabeled = (np.ones(len(y_hat_unlabeled)) if w_unlabeled is None
                   else w_unlabeled / w_unlabeled.sum() * len(y_hat_unlabeled))
    pilot = ppi_py.ppi_mean_pointestimate(y, y_hat, y_hat_unlabeled, lam=1, w=w,
                                          w_unlabeled=w_unlabeled)
    return float(_calc_lam_glm(w * (y - pilot), w * (y_hat - pilot),
                               w_unlabeled * (y_hat_unlabeled - pilot), np.eye(1), clip=True))


# -- the same numbers as ppi_py ------------------------------------------------------------------

@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam", [None, 1.0, 0.0])
def test_corrected_estimates_match_ppi_py(weighted, lam):
    rng = np.random.default_rng(7)
    y, y_hat, y_hat_unlabeled, _ = study(3, graded=120)
    # Scores in 0..1 rather than 0/1 too: the formulas must not lean on binary data.
    y_hat = np.clip(y_hat * 0.8 + rng.normal(0, 0.1, len(y_hat)), 0, 1)
    y_hat_unlabeled = np.clip(y_hat_unlabeled * 0.8 + rng.normal(0, 0.1, len(y_hat_unlabeled)),
                              0, 1)
    w = rng.uniform(0.5, 4, len(y)) if weighted else None
    w_unlabeled = rng.uniform(0.5, 4, len(y_hat_unlabeled)) if weighted else None

    got = ppi_mean(y, y_hat, y_hat_unlabeled, w, w_unlabeled, lam=lam)

    value = ppi_py.ppi_mean_pointestimate(y, y_hat, y_hat_unlabeled, lam=lam, w=w,
                                          w_unlabeled=w_unlabeled)
    low, high = ppi_py.ppi_mean_ci(y, y_hat, y_hat_unlabeled, alpha=0.05, lam=lam, w=w,
                                   w_unlabeled=w_unlabeled)
    assert got.value == pytest.approx(float(np.squeeze(value)), abs=1e-9)
    assert got.ci95 == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)
    expected_lam = ppi_py_lam(y, y_hat, y_hat_unlabeled, w, w_unlabeled) if lam is None else lam
    assert got.lam == pytest.approx(expected_lam, abs=1e-9)
    assert 0 < got.lam < 1 if lam is None else True  # a tuned lam that is neither bound
    assert (got.n, got.n_unlabeled) == (len(y), len(y_hat_unlabeled))


@pytest.mark.parametrize("weighted", [False, True])
def test_the_experts_alone_match_ppi_py_classical_interval(weighted):
    y, _, _, _ = study(5, graded=80)
    w = np.random.default_rng(2).uniform(1, 5, len(y)) if weighted else None
    got = classical_mean(y, w)
    low, high = ppi_py.classical_mean_ci(y, w=w, alpha=0.05)
    weights = np.ones(len(y)) if w is None else w / w.mean()
    assert got.value == pytest.approx(float(np.mean(weights * y)), abs=1e-9)
    assert got.ci95 == pytest.approx((float(low), float(high)), abs=1e-9)
    assert got.n == len(y)


def test_lam_zero_is_the_experts_alone_and_effective_n_counts_their_grades():
    y, y_hat, y_hat_unlabeled, _ = study(11)
    got = ppi_mean(y, y_hat, y_hat_unlabeled, lam=0.0)
    experts = classical_mean(y)
    assert got.value == pytest.approx(experts.value)
    assert got.ci95 == pytest.approx(experts.ci95)
    assert got.effective_n == pytest.approx(len(y))
    assert got.estimate().value == got.value and got.estimate().ci95 == got.ci95
    assert got.estimate().n == len(y)


# -- validity and power ------------------------------------------------------------------------

def test_the_interval_covers_the_truth_in_at_least_90_of_100_studies():
    covered, judge_alone_covered = 0, 0
    for seed in range(100):
        y, y_hat, y_hat_unlabeled, truth = study(1000 + seed, population=2000, graded=100)
        got = ppi_mean(y, y_hat, y_hat_unlabeled)
        covered += got.ci95[0] <= truth <= got.ci95[1]
        judge = classical_mean(np.concatenate([y_hat, y_hat_unlabeled]))
        judge_alone_covered += judge.ci95[0] <= truth <= judge.ci95[1]
    assert covered >= 90
    # The simulated judge is lenient enough that its own interval misses: the test has teeth.
    assert judge_alone_covered <= 10


def test_an_informative_judge_narrows_the_interval_and_a_noise_judge_does_not():
    informative_ratio, noise_ratio, noise_lams = [], [], []
    for seed in range(20):
        y, y_hat, y_hat_unlabeled, _ = study(seed, graded=200, leniency=0.2)
        got = ppi_mean(y, y_hat, y_hat_unlabeled)
        experts = classical_mean(y)
        informative_ratio.append(half_width(got) / (experts.ci95[1] - experts.value))
        assert got.effective_n > got.n
        assert got.lam > 0.5

        rng = np.random.default_rng(500 + seed)
        noise = (rng.random(len(y)) < 0.7).astype(float)
        noise_unlabeled = (rng.random(len(y_hat_unlabeled)) < 0.7).astype(float)
        got = ppi_mean(y, noise, noise_unlabeled)
        noise_ratio.append(half_width(got) / (experts.ci95[1] - experts.value))
        noise_lams.append(got.lam)
    assert max(informative_ratio) < 0.85 and np.mean(informative_ratio) < 0.75
    assert 0.97 < np.mean(noise_ratio) < 1.03
    assert np.mean(noise_lams) < 0.1


def test_inclusion_weights_undo_a_stratified_draw():
    """Two strata of equal size; 4 of 5 expert grades come from the one where models do well
    and the judge errs little. Unweighted, that stratum counts four times too much."""
    rng = np.random.default_rng(42)
    size = 10_000
    truth = np.concatenate([rng.random(size) < 0.8, rng.random(size) < 0.3]).astype(float)
    judged = np.concatenate([lenient_judge(rng, truth[:size], 0.1),
                             lenient_judge(rng, truth[size:], 0.6)])
    population_mean = float(truth.mean())
    draws = [rng.choice(size, 400, replace=False), size + rng.choice(size, 100, replace=False)]
    sample = np.concatenate(draws)
    probability = np.concatenate([np.full(400, 400 / size), np.full(100, 100 / size)])
    rest = np.setdiff1d(np.arange(2 * size), sample)

    weighted = ppi_mean(truth[sample], judged[sample], judged[rest], weights=1 / probability)
    unweighted = ppi_mean(truth[sample], judged[sample], judged[rest])
    assert abs(weighted.value - population_mean) < 0.03
    assert weighted.ci95[0] <= population_mean <= weighted.ci95[1]
    assert unweighted.value - population_mean > 0.08
    assert not unweighted.ci95[0] <= population_mean <= unweighted.ci95[1]

    experts_weighted = classical_mean(truth[sample], 1 / probability)
    experts_unweighted = classical_mean(truth[sample])
    assert abs(experts_weighted.value - population_mean) < 0.03
    assert experts_unweighted.value - population_mean > 0.15


def test_a_difference_of_two_models_adds_the_standard_errors_in_quadrature():
    a = ppi_mean(*study(1, rate=0.7)[:3])
    b = ppi_mean(*study(2, rate=0.4)[:3])
    got = difference(a, b)
    se = math.sqrt(a.se ** 2 + b.se ** 2)
    assert got.value == pytest.approx(a.value - b.value)
    assert got.ci95 == pytest.approx((a.value - b.value - Z95 * se, a.value - b.value + Z95 * se))
    assert got.n == a.n + b.n
    assert got.ci95[0] > 0  # 0.7 against 0.4 on 150 grades each: clearly apart


# -- planning ----------------------------------------------------------------------------------

def test_the_planned_number_of_grades_gives_the_promised_half_width():
    target = 0.03
    population = 40_000
    pilot = study(77, population=population, graded=300, leniency=0.3)
    plan = needed(pilot[0], pilot[1], pilot[2], target)
    assert plan.reason is None and plan.corrected is not None and plan.experts_only is not None
    assert plan.experts_only > 1.5 * plan.corrected
    assert plan.corrected > 1.5 * 300  # the target is well beyond the pilot's own width

    corrected_widths, experts_widths = [], []
    for seed in range(20):
        y, y_hat, y_hat_unlabeled, _ = study(900 + seed, population=population,
                                             graded=plan.corrected, leniency=0.3)
        corrected_widths.append(half_width(ppi_mean(y, y_hat, y_hat_unlabeled)))
        y_experts = study(900 + seed, population=population, graded=plan.experts_only)[0]
        experts = classical_mean(y_experts)
        experts_widths.append(experts.ci95[1] - experts.value)
    assert np.mean(corrected_widths) == pytest.approx(target, rel=0.15)
    assert np.mean(experts_widths) == pytest.approx(target, rel=0.15)


def test_few_judge_only_responses_leave_little_to_gain_but_never_cost_grades():
    y, y_hat, y_hat_unlabeled, _ = study(8, graded=400, leniency=0.05)
    many = needed(y, y_hat, y_hat_unlabeled, 0.02)
    few = needed(y, y_hat, y_hat_unlabeled[:100], 0.02)
    assert few.experts_only == many.experts_only == math.ceil((Z95 * y.std() / 0.02) ** 2)
    assert many.corrected < 0.5 * many.experts_only
    # lam falls as the grades outnumber the judge-only responses, down to the experts alone.
    assert many.corrected < few.corrected <= few.experts_only
    assert few.corrected > 0.8 * few.experts_only


def test_planning_needs_grades_with_some_spread():
    plan = needed([1, 1, 1], [1, 0, 1], [1, 0, 1, 1], 0.05)
    assert plan.corrected is None and plan.experts_only is None and "all equal" in plan.reason
    plan = needed([1], [1], [1, 0, 1, 1], 0.05)
    assert plan.corrected is None and plan.experts_only is None and "at least 2" in plan.reason
    with pytest.raises(ValueError, match="half-width"):
        needed([1, 0, 1], [1, 0, 1], [1, 0], 0.0)


# -- edge cases --------------------------------------------------------------------------------

def test_a_judge_without_spread_gets_lam_zero_and_the_experts_estimate():
    y = np.array([1, 0, 1, 1, 0, 1], dtype=float)
    got = ppi_mean(y, np.ones(6), np.ones(50))
    assert got.lam == 0.0
    assert got.value == pytest.approx(y.mean())
    assert all(math.isfinite(x) for x in (got.value, got.se, got.effective_n, *got.ci95))


def test_no_spread_anywhere_gives_no_interval_rather_than_a_false_certainty():
    got = ppi_mean([1, 1, 1], [1, 1, 1], [1, 1, 1, 1])
    assert got.se == 0 and got.effective_n == 3
    shown = got.estimate()
    assert shown.value == 1.0 and shown.ci95 is None and shown.reason
    perfect = ppi_mean([1, 0, 1], [1, 0, 1], [1, 1, 1, 1, 1], lam=1.0)
    assert perfect.se == 0 and perfect.effective_n == 8  # as good as grading all eight
    assert difference(got, got).ci95 is None


def test_unusable_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="at least 2 expert grades"):
        ppi_mean([1], [1], [0, 1])
    with pytest.raises(ValueError, match="pair up"):
        ppi_mean([1, 0, 1], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="judge-only"):
        ppi_mean([1, 0, 1], [1, 0, 1], [])
    with pytest.raises(ValueError, match="missing"):
        ppi_mean([1, float("nan"), 1], [1, 0, 1], [0, 1])
    with pytest.raises(ValueError, match="positive"):
        ppi_mean([1, 0, 1], [1, 0, 1], [0, 1], weights=[1, 0, 2])
    with pytest.raises(ValueError, match="3 weights_unlabeled for 2"):
        ppi_mean([1, 0, 1], [1, 0, 1], [0, 1], weights_unlabeled=[1, 1, 1])


def test_the_experts_alone_with_too_few_grades_say_why():
    assert classical_mean([]).value is None and classical_mean([]).reason
    one = classical_mean([1.0])
    assert one.value == 1.0 and one.ci95 is None and "at least 2" in one.reason
    equal = classical_mean([0.0, 0.0, 0.0])
    assert equal.value == 0.0 and equal.ci95 is None and "equal" in equal.reason


def test_effective_n_never_exceeds_every_response_graded():
    # Three grades that happen to match a judge who is right most of the time: the tuned lam
    # makes the variance ratio overshoot, but grading everything is the most it can be worth.
    labels = np.array([1.0, 0.0, 1.0])
    judged_unlabeled = np.tile([1.0, 0.0, 1.0, 1.0], 50)
    found = ppi_mean(labels, labels + [0.0, 0.0, -0.001], judged_unlabeled)
    assert float(np.var(labels)) / found.se ** 2 > len(labels) + len(judged_unlabeled)
    assert found.effective_n == len(labels) + len(judged_unlabeled)
