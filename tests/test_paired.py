"""A human (reference) against a judge, item by item: hand-worked values and degenerate input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from physgrade.stats.paired import (
    bias,
    confusion_matrix,
    mcnemar_exact,
    mean_absolute_difference,
    pearson,
    sign_test,
    spearman,
)

nan = np.nan
Z = 1.959963984540054
EMPTY = ([], [])
ALL_MISSING = ([nan, nan, 1.0], [2.0, nan, nan])


def wilson(count: int, n: int) -> tuple[float, float]:
    """Wilson's score interval written out: (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)."""
    p = count / n
    centre = p + Z ** 2 / (2 * n)
    half = Z * np.sqrt(p * (1 - p) / n + Z ** 2 / (4 * n ** 2))
    return (centre - half) / (1 + Z ** 2 / n), (centre + half) / (1 + Z ** 2 / n)


def test_confusion_matrix_rows_are_the_reference():
    human = [0, 0, 1, 2, 2, nan]
    judge = [0, 1, 1, 2, 0, 1]
    # Pairs (0,0) (0,1) (1,1) (2,2) (2,0); the last item has no human rating.
    assert confusion_matrix(human, judge, (0, 1, 2)).tolist() == [[1, 1, 0], [0, 1, 0], [1, 0, 1]]
    assert confusion_matrix(human, judge, (0, 1, 2)).dtype.kind == "i"


def test_confusion_matrix_degenerate_and_bad_input():
    assert confusion_matrix(*EMPTY, (0, 1)).tolist() == [[0, 0], [0, 0]]
    assert confusion_matrix(*ALL_MISSING, (1, 2)).tolist() == [[0, 0], [0, 0]]
    assert confusion_matrix([1, 1], [1, 1], (1,)).tolist() == [[2]]
    assert confusion_matrix([1], [0], (0, 1)).tolist() == [[0, 0], [1, 0]]
    with pytest.raises(ValueError, match="not one of the categories"):
        confusion_matrix([0, 3], [0, 1], (0, 1, 2))  # never dropped silently
    with pytest.raises(ValueError, match="same length"):
        confusion_matrix([0, 1], [0], (0, 1))


def test_bias_by_hand():
    # judge - human = 1, 0, -2, 0: mean -0.25; s^2 = (1.25^2 + 0.25^2 + 1.75^2 + 0.25^2) / 3 = 4.75/3;
    # half-width t(0.975, 3) * s / 2 = 3.182446 * 1.258306 / 2 = 2.002245.
    result = bias([0, 1, 2, 2, nan], [1, 1, 0, 2, 2])
    assert result.difference.value == pytest.approx(-0.25)
    assert result.difference.ci95 == pytest.approx((-0.25 - 2.002245, -0.25 + 2.002245), abs=1e-6)
    assert result.difference.n == 4
    assert result.lenient.value == 0.25 and result.strict.value == 0.25
    assert result.lenient.ci95 == pytest.approx(wilson(1, 4))
    assert result.lenient.ci95 == pytest.approx((0.045587, 0.699358), abs=1e-6)


def test_wilson_interval_of_a_zero_share():
    # 0 of 10: the upper end is z^2 / (n + z^2) = 3.841459 / 13.841459.
    result = bias([0] * 10, [0] * 10)
    assert result.lenient.value == 0.0
    assert result.lenient.ci95 == pytest.approx((0.0, 0.277533), abs=1e-6)
    assert result.difference.value == 0.0 and result.difference.ci95 is None
    assert "all values are equal" in result.difference.reason


def test_bias_degenerate():
    for data in (EMPTY, ALL_MISSING):
        result = bias(*data)
        for estimate in (result.difference, result.lenient, result.strict):
            assert estimate.value is None and estimate.n == 0 and estimate.reason
    single = bias([1], [2])
    assert single.difference.value == 1.0 and single.difference.ci95 is None
    assert "at least 2" in single.difference.reason
    assert single.lenient.value == 1.0 and single.lenient.ci95 == pytest.approx(wilson(1, 1))


def test_mcnemar_exact_by_hand():
    human = [1] * 7 + [0, 0, nan]
    judge = [0] * 5 + [1, 1, 0, 0, 1]
    # Discordant pairs: 5 human-yes/judge-no, 0 the other way: p = 2 * (1/2)^5.
    result = mcnemar_exact(human, judge)
    assert result.table == [[2, 5], [0, 2]]
    assert result.n == 9 and result.p_value == pytest.approx(0.0625)
    assert mcnemar_exact([True, False], [True, False]).p_value == 1.0  # nothing discordant


def test_mcnemar_degenerate_and_bad_input():
    for data in (EMPTY, ALL_MISSING):
        result = mcnemar_exact(*data)
        assert result.p_value is None and result.n == 0 and result.reason
    assert mcnemar_exact([1], [0]).p_value == 1.0  # one discordant pair proves nothing
    with pytest.raises(ValueError, match="yes/no"):
        mcnemar_exact([0, 2], [0, 1])


def test_sign_test_by_hand():
    # The judge is above the human 6 times, below never, tied twice: p = 2 * (1/2)^6.
    result = sign_test([0, 0, 0, 1, 1, 1, 2, 2, nan], [1, 1, 2, 2, 2, 2, 2, 2, 0])
    assert (result.n, result.above, result.below) == (8, 6, 0)
    assert result.p_value == pytest.approx(0.03125)


def test_sign_test_degenerate():
    for data in (EMPTY, ALL_MISSING):
        result = sign_test(*data)
        assert result.p_value is None and result.n == 0 and result.reason
    tied = sign_test([1, 1, 1], [1, 1, 1])
    assert (tied.n, tied.above, tied.below, tied.p_value) == (3, 0, 0, 1.0)
    assert sign_test([0], [1]).p_value == 1.0


def test_pearson_against_fisher_z_by_hand():
    x, y = [1, 2, 3, 4, 5, 6, nan], [2, 1, 4, 3, 7, 5, 1]
    r = np.corrcoef([1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 7, 5])[0, 1]
    result = pearson(x, y)
    assert result.value == pytest.approx(r) and result.n == 6
    half = Z / np.sqrt(6 - 3)
    assert result.ci95 == pytest.approx((np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)))


def test_spearman_with_the_bonett_wright_interval_by_hand():
    # Ranks differ by 0, 1, 1, 0, 1, 1: rho = 1 - 6 * 4 / (6 * 35) = 0.885714.
    result = spearman([1, 2, 3, 4, 5, 6], [1, 3, 2, 4, 6, 5])
    rho = 1 - 24 / 210
    assert result.value == pytest.approx(rho)
    half = Z * np.sqrt((1 + rho ** 2 / 2) / 3)
    assert result.ci95 == pytest.approx((np.tanh(np.arctanh(rho) - half), np.tanh(np.arctanh(rho) + half)))
    perfect = spearman([1, 2, 3, 4], [10, 20, 30, 40])
    assert perfect.value == pytest.approx(1.0) and perfect.ci95 == pytest.approx((1.0, 1.0))


@pytest.mark.parametrize("correlation", [pearson, spearman])
def test_correlations_degenerate(correlation):
    for data in (EMPTY, ALL_MISSING):
        result = correlation(*data)
        assert result.value is None and result.reason
    single = correlation([1], [2])
    assert single.value is None and single.n == 1 and "2 pairs" in single.reason
    constant = correlation([1, 1, 1, 1], [1, 2, 3, 4])
    assert constant.value is None and constant.n == 4 and "same rating" in constant.reason
    three = correlation([1, 2, 3], [1, 3, 2])
    assert three.value == pytest.approx(0.5) and three.ci95 is None and "4 pairs" in three.reason


def test_mean_absolute_difference_by_hand():
    # |y - x| = 1, 0, 2, 0: mean 0.75; s^2 = (0.25^2 + 0.75^2 + 1.25^2 + 0.75^2) / 3 = 2.75/3;
    # half-width t(0.975, 3) * s / 2 = 3.182446 * 0.957427 / 2 = 1.523480. The lower end, -0.773,
    # would be below any possible mean absolute difference and is kept at 0.
    result = mean_absolute_difference([0, 1, 2, 2], [1, 1, 0, 2])
    assert result.value == pytest.approx(0.75)
    assert result.ci95 == pytest.approx((0.0, 0.75 + 1.523480), abs=1e-6)
    wide = mean_absolute_difference([0] * 20, [1, 2] * 10)
    half = stats.t.ppf(0.975, 19) * np.std([1, 2] * 10, ddof=1) / np.sqrt(20)
    assert wide.ci95 == pytest.approx((1.5 - half, 1.5 + half))


def test_mean_absolute_difference_degenerate():
    for data in (EMPTY, ALL_MISSING):
        result = mean_absolute_difference(*data)
        assert result.value is None and result.n == 0 and result.reason
    single = mean_absolute_difference([1], [3])
    assert single.value == 2.0 and single.ci95 is None and "at least 2" in single.reason
    same = mean_absolute_difference([2, 2, 2], [2, 2, 2])
    assert same.value == 0.0 and same.ci95 is None and "all values are equal" in same.reason
