"""Small estimators with 95% intervals: a share, a mean, and differences of means.

Reports show every share and mean with its n and interval, so that a 100% on three responses
does not read like a 100% on three thousand. Input too thin for an interval gives an
:class:`Estimate` that says why, never a 0 or a NaN that could pass for a result.

The t intervals take optional ``bounds``, the range the true value cannot leave (0..1 for a
mean share): an interval is cut to it, which keeps its coverage and spares readers a 130% score.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from physgrade.stats.estimate import Estimate

#: Confidence level of every interval here.
LEVEL = 0.95
#: The normal quantile of a two-sided interval at :data:`LEVEL` (1.96), for normal (z) intervals.
Z95 = float(stats.norm.ppf(0.5 + LEVEL / 2))

Bounds = tuple[float, float] | None


@lru_cache(maxsize=None)
def t95(df: float) -> float:
    """The t quantile of a two-sided interval at :data:`LEVEL` with ``df`` degrees of freedom
    (a report asks for it thousands of times, for few distinct ``df``)."""
    return float(stats.t.ppf(0.5 + LEVEL / 2, df))


def proportion(successes: int, n: int) -> Estimate:
    """``successes`` out of ``n`` with the Wilson interval, which stays inside 0..1 and keeps a
    sensible width at 0%, 100% and small n (where the textbook Wald interval collapses)."""
    if not 0 <= successes <= n:
        raise ValueError(f"a share needs 0 <= successes <= n, not {successes} of {n}")
    if n == 0:
        return Estimate.unavailable(0, "no cases")
    low, high = proportion_confint(successes, n, alpha=1 - LEVEL, method="wilson")
    return Estimate(successes / n, (float(low), float(high)), n)


def mean(values: ArrayLike, bounds: Bounds = None) -> Estimate:
    """The mean with its t interval; NaN (a value nobody gave) is left out."""
    return _t_estimate(_present(values), bounds)


def mean_difference(a: ArrayLike, b: ArrayLike, bounds: Bounds = None) -> Estimate:
    """The mean of the PAIRED differences ``a[i] - b[i]`` with its t interval; a pair with a NaN
    on either side is left out, and n counts the pairs."""
    a_values, b_values = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a_values.shape != b_values.shape:
        raise ValueError(f"paired values must come in pairs: {len(a_values)} against {len(b_values)}")
    d = a_values - b_values
    return _t_estimate(d[~np.isnan(d)], bounds)


def welch_difference(a: ArrayLike, b: ArrayLike, bounds: Bounds = None) -> Estimate:
    """``mean(a) - mean(b)`` for two INDEPENDENT groups, with Welch's t interval (the groups may
    differ in spread and size); NaN is left out, and n counts both groups together."""
    x, y = _present(a), _present(b)
    n = len(x) + len(y)
    if not len(x) or not len(y):
        return Estimate.unavailable(n, "one group is empty")
    value = float(x.mean() - y.mean())
    if len(x) < 2 or len(y) < 2:
        return Estimate(value, None, n, "a group with one value: no interval")
    if np.ptp(x) == 0 and np.ptp(y) == 0:
        return Estimate(value, None, n, "no spread within either group: no interval")
    spread_x, spread_y = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    df = (spread_x + spread_y) ** 2 / (spread_x ** 2 / (len(x) - 1) + spread_y ** 2 / (len(y) - 1))
    return _interval(value, np.sqrt(spread_x + spread_y), df, n, bounds)


def _present(values: ArrayLike) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x[~np.isnan(x)]


def _t_estimate(x: np.ndarray, bounds: Bounds) -> Estimate:
    """The mean of ``x`` with its one-sample t interval, or why there is none."""
    n = len(x)
    if n == 0:
        return Estimate.unavailable(0, "no values")
    value = float(x.mean())
    if n == 1:
        return Estimate(value, None, 1, "a confidence interval needs at least 2 values")
    if np.ptp(x) == 0:
        return Estimate(value, None, n, "all values are equal, so there is no interval")
    return _interval(value, x.std(ddof=1) / np.sqrt(n), n - 1, n, bounds)


def _interval(value: float, standard_error: float, df: float, n: int, bounds: Bounds) -> Estimate:
    """``value`` with its t interval (computed here rather than by scipy's t tests, which warn
    about precision when a group's values are all equal although the interval is well defined)."""
    half = t95(df) * standard_error
    found = Estimate(value, (value - half, value + half), n)
    return found.within(*bounds) if bounds else found
