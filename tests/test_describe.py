"""The small estimators: values and intervals worked out by hand, and the degenerate cases."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from physgrade.stats.describe import clustered_proportion, mean, mean_difference, proportion, welch_difference

Z = 1.959963984540054  # the normal quantile of a 95% interval
T2 = 4.302652729911275  # the t quantile of a 95% interval with 2 degrees of freedom


def test_proportion_has_the_wilson_interval():
    # 4 of 5: centre (p + z²/2n) / (1 + z²/n), half-width z/(1 + z²/n) * sqrt(p(1-p)/n + z²/4n²).
    p, n = 0.8, 5
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    got = proportion(4, 5)
    assert got.value == 0.8 and got.n == 5 and got.reason is None
    assert got.ci95 == pytest.approx((centre - half, centre + half))


def wilson(p: float, n: float) -> tuple[float, float]:
    """Wilson's interval by its formula, for n that may be fractional (an effective n)."""
    centre = (p + Z**2 / (2 * n)) / (1 + Z**2 / n)
    half = Z / (1 + Z**2 / n) * math.sqrt(p * (1 - p) / n + Z**2 / (4 * n**2))
    return centre - half, centre + half


def test_all_agreeing_is_never_a_point():
    # At 100% Wilson's lower end is n / (n + z²): 38 / 41.84 and 30 / 33.84. A t interval over
    # 38 agreeing responses reads [100.0, 100.0].
    assert proportion(38, 38).ci95[0] == pytest.approx(0.90819, abs=1e-5)
    assert proportion(30, 30).ci95[0] == pytest.approx(0.88649, abs=1e-5)
    assert proportion(30, 30).ci95[1] == pytest.approx(1.0, abs=1e-12)


def test_clustered_share_of_single_outcomes_is_plain_wilson():
    # Clusters of one 0/1 outcome each: the effective n is the number of clusters.
    got = clustered_proportion([1, 0, 1, 1, 1, 0, 1], [1] * 7)
    assert got.value == pytest.approx(5 / 7) and got.n == 7
    assert got.ci95 == pytest.approx(proportion(5, 7).ci95, abs=1e-12)
    assert got.ci95 == pytest.approx(wilson(5 / 7, 7), abs=1e-9)
    # Clusters of several units that each agree wholly or not at all (shares 0 or 1) are as
    # informative as single outcomes: Wilson on the clusters again.
    whole = clustered_proportion([4, 0, 3, 5, 2, 0, 6], [4, 2, 3, 5, 2, 1, 6])
    assert whole.ci95 == pytest.approx(proportion(5, 7).ci95, abs=1e-9)


def test_clustered_share_lies_between_the_clusters_and_the_units():
    # Shares 1, 1/2, 3/4, 1/4 of 4 units each: p = 5/8, variance of the shares (divisor 4)
    # 5/64, of their mean 5/256; n_eff = (5/8)(3/8) / (5/256) = 12, between 4 clusters and
    # 16 units.
    got = clustered_proportion([4, 2, 3, 1], [4, 4, 4, 4])
    assert got.value == pytest.approx(0.625) and got.n == 4
    assert got.ci95 == pytest.approx(wilson(0.625, 12), abs=1e-9)
    width = got.ci95[1] - got.ci95[0]
    narrowest, widest = (high - low for low, high in (wilson(0.625, 16), wilson(0.625, 4)))
    assert narrowest < width < widest
    # Clusters that all have the same share count as their units.
    assert clustered_proportion([1, 1, 1], [2, 2, 2]).ci95 == pytest.approx(wilson(0.5, 6),
                                                                            abs=1e-9)


def test_clustered_share_at_the_ends_takes_the_clusters_as_its_n():
    # No spread at 100% or 0%: the cautious end, Wilson on the 5 clusters (not the 17 units).
    full = clustered_proportion([3, 4, 2, 5, 3], [3, 4, 2, 5, 3])
    assert full.value == 1.0 and full.n == 5
    assert full.ci95 == pytest.approx(proportion(5, 5).ci95, abs=1e-12)
    assert full.ci95[1] - full.ci95[0] > 0.4
    none = clustered_proportion([0, 0], [3, 1])
    assert none.value == 0.0 and none.ci95 == pytest.approx(proportion(0, 2).ci95, abs=1e-12)


def test_clustered_share_of_nothing_is_unavailable_and_nonsense_is_refused():
    got = clustered_proportion([], [])
    assert got.value is None and got.n == 0 and got.reason
    with pytest.raises(ValueError):
        clustered_proportion([3], [2])
    with pytest.raises(ValueError):
        clustered_proportion([0], [0])
    with pytest.raises(ValueError):
        clustered_proportion([1, 2], [3])


def test_proportion_at_zero_keeps_a_real_upper_bound():
    got = proportion(0, 4)
    assert got.value == 0.0
    assert got.ci95[0] == pytest.approx(0.0) and got.ci95[1] == pytest.approx(0.4899, abs=1e-4)


def test_proportion_of_nothing_is_unavailable_and_nonsense_is_refused():
    got = proportion(0, 0)
    assert got.value is None and got.ci95 is None and got.n == 0 and got.reason
    with pytest.raises(ValueError):
        proportion(3, 2)


def test_mean_has_the_t_interval_and_leaves_nan_out():
    # 1, 2, 3: mean 2, sd 1, standard error 1/sqrt(3), half-width t(2) / sqrt(3).
    got = mean([1.0, 2.0, math.nan, 3.0])
    assert got.value == 2.0 and got.n == 3
    assert got.ci95 == pytest.approx((2 - T2 / math.sqrt(3), 2 + T2 / math.sqrt(3)))


def test_mean_of_degenerate_input_says_why_there_is_no_interval():
    nothing = mean([math.nan])
    assert nothing.value is None and nothing.n == 0 and nothing.reason
    one = mean([0.7])
    assert one.value == 0.7 and one.ci95 is None and one.n == 1 and "at least 2" in one.reason
    same = mean([0.9, 0.9, 0.9])
    assert same.value == pytest.approx(0.9) and same.ci95 is None and same.n == 3
    assert "equal" in same.reason


def test_bounds_cut_the_interval_to_the_possible_range():
    # 0.7 and 0.9: standard error 0.1, t(1) = 12.706, so the raw interval is 0.8 ± 1.27.
    got = mean([0.7, 0.9], bounds=(0.0, 1.0))
    assert got.value == pytest.approx(0.8) and got.ci95 == (0.0, 1.0)
    assert mean([0.7, 0.9]).ci95 == pytest.approx((0.8 - 1.2706205, 0.8 + 1.2706205))


def test_mean_difference_is_paired():
    # Differences 2, 3, 2: mean 7/3, sd sqrt(1/3), standard error 1/3; the NaN pair is left out.
    got = mean_difference([3.0, 5.0, 4.0, math.nan], [1.0, 2.0, 2.0, 7.0])
    assert got.value == pytest.approx(7 / 3) and got.n == 3
    assert got.ci95 == pytest.approx((7 / 3 - T2 / 3, 7 / 3 + T2 / 3))
    with pytest.raises(ValueError, match="pairs"):
        mean_difference([1.0, 2.0], [1.0])


def test_welch_difference_matches_welchs_t_test():
    a, b = [1.0, 2.0, 3.0], [2.0, 5.0, 9.0, 1.0]
    got = welch_difference(a, b)
    assert got.value == pytest.approx(2.0 - 4.25) and got.n == 7
    expected = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert got.ci95 == pytest.approx((expected.low, expected.high))


@pytest.mark.filterwarnings("error")
def test_welch_with_one_constant_group_still_has_an_interval():
    # Spread only in b: variance 1, standard error sqrt(1/3), 2 degrees of freedom.
    got = welch_difference([1.0, 1.0, 1.0], [0.0, 1.0, 2.0])
    assert got.value == 0.0
    assert got.ci95 == pytest.approx((-T2 / math.sqrt(3), T2 / math.sqrt(3)))


def test_welch_of_degenerate_groups_says_why():
    empty = welch_difference([0.5, 0.7], [])
    assert empty.value is None and empty.n == 2 and empty.reason
    single = welch_difference([0.5, 0.7], [1.0])
    assert single.value == pytest.approx(-0.4) and single.ci95 is None and single.n == 3
    flat = welch_difference([0.5, 0.5], [1.0, 1.0])
    assert flat.value == pytest.approx(-0.5) and flat.ci95 is None and flat.reason
