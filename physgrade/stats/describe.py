"""Small estimators with 95% intervals: a share, a mean, and differences of means.

Reports show every share and mean with its n and interval, so that a 100% on three responses
does not read like a 100% on three thousand. Input too thin for an interval gives an
:class:`Estimate` that says why, never a 0 or a NaN that could pass for a result.

A share never gets a t interval: a share of 0/1 outcomes gets Wilson's (:func:`proportion`),
which keeps a width at 0% and 100% where a t interval collapses to a point, and a share averaged
over clusters of outcomes gets Wilson's at an effective sample size (:func:`clustered_proportion`).

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

#: Why a share of nothing has no value.
NO_CASES = "no cases"


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
        return Estimate.unavailable(0, NO_CASES)
    return Estimate(successes / n, _wilson(successes, n), n)


def clustered_proportion(successes: ArrayLike, units: ArrayLike) -> Estimate:
    """The share of units that succeed in each cluster, averaged over the clusters (each counts
    once), with a Wilson interval that allows for the units of a cluster going together: the
    criteria of one response, the rating pairs of one item. ``successes[i]`` of ``units[i]``
    succeed in cluster i; n counts the clusters.

    Units of one cluster tell less than as many independent units (Kish's design effect), so
    the interval is Wilson's at an effective sample size, after Korn and Graubard (1998) for
    clustered survey proportions: n_eff = p (1 - p) / v, where v is the variance of the mean of the
    clusters' shares (divisor: the number of clusters, so that clusters of one 0/1 outcome give
    plain Wilson on the clusters), kept between the number of clusters and of units. At 0% or
    100% there is no spread to measure, and n_eff is the number of clusters, the cautious end;
    clusters that all have the same share in between count as independent units."""
    hits, sizes = np.asarray(successes, dtype=float), np.asarray(units, dtype=float)
    if hits.ndim != 1 or hits.shape != sizes.shape:
        raise ValueError(f"a clustered share needs successes and units per cluster, got shapes "
                         f"{hits.shape} and {sizes.shape}")
    if ((sizes < 1) | (hits < 0) | (hits > sizes)).any():
        raise ValueError("each cluster needs 0 <= successes <= units and at least one unit")
    clusters = len(sizes)
    if clusters == 0:
        return Estimate.unavailable(0, NO_CASES)
    shares = hits / sizes
    share = float(shares.mean())
    spread = float(shares.var()) / clusters
    total = float(sizes.sum())
    if share * (1 - share) == 0:
        effective = float(clusters)
    elif spread == 0:
        effective = total
    else:
        effective = min(max(share * (1 - share) / spread, clusters), total)
    return Estimate(share, _wilson(share * effective, effective), clusters)


def _wilson(successes: float, n: float) -> tuple[float, float]:
    """Wilson's interval of ``successes`` out of ``n`` (both may be fractional, as an
    effective sample size is)."""
    low, high = proportion_confint(successes, n, alpha=1 - LEVEL, method="wilson")
    return float(low), float(high)


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
