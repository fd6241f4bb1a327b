"""A reference rater (a human) against another (a judge), item by item.

Every function takes two 1-D arrays of the same length and first drops the pairs where either
rating is missing (NaN), so ``n`` is always the number of complete pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar

from physgrade.stats.describe import Z95, mean, proportion
from physgrade.stats.estimate import Estimate

TOO_FEW_FOR_CI = "a confidence interval needs at least {} pairs"


def complete_pairs(reference: ArrayLike, other: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """The two ratings of every pair where neither is missing."""
    x = np.asarray(reference, dtype=float)
    y = np.asarray(other, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"paired ratings must be two 1-D arrays of the same length, got shapes "
                         f"{x.shape} and {y.shape}")
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]


def confusion_matrix(reference: ArrayLike, other: ArrayLike, categories: ArrayLike) -> np.ndarray:
    """Counts of (reference, other) rating pairs: rows are reference values, columns other values
    (a report counts thousands of these tables: a count of codes, not a library call each)."""
    x, y = complete_pairs(reference, other)
    labels = np.asarray(categories, dtype=float)
    unknown = np.setdiff1d(np.concatenate([x, y]), labels)
    if unknown.size:
        raise ValueError(f"rating {unknown[0]:g} is not one of the categories "
                         f"{', '.join(f'{c:g}' for c in labels)}")
    order = np.argsort(labels)
    row, column = (order[np.searchsorted(labels[order], ratings)] for ratings in (x, y))
    size = len(labels)
    return np.bincount(row * size + column, minlength=size * size).reshape(size, size)


@dataclass(frozen=True, slots=True)
class Bias:
    """How the other rater leans: mean difference, and the shares above and below the reference."""

    difference: Estimate   # mean(other - reference), t-based CI
    lenient: Estimate      # share of pairs with other > reference, Wilson CI
    strict: Estimate       # share of pairs with other < reference, Wilson CI


def bias(reference: ArrayLike, other: ArrayLike) -> Bias:
    x, y = complete_pairs(reference, other)
    return Bias(mean(y - x), proportion(int(np.sum(y > x)), len(x)), proportion(int(np.sum(y < x)), len(x)))


@dataclass(frozen=True, slots=True)
class McNemar:
    """Exact McNemar test of paired yes/no outcomes (do the two raters say yes equally often?)."""

    table: list[list[int]]   # rows reference yes/no, columns other yes/no
    n: int
    p_value: float | None
    reason: str | None = None


def mcnemar_exact(reference: ArrayLike, other: ArrayLike) -> McNemar:
    x, y = complete_pairs(reference, other)
    if not np.isin(np.concatenate([x, y]), (0.0, 1.0)).all():
        raise ValueError("McNemar's test needs yes/no outcomes (1/0 or True/False)")
    yes_x, yes_y = x == 1, y == 1
    table = [[int(np.sum(yes_x & yes_y)), int(np.sum(yes_x & ~yes_y))],
             [int(np.sum(~yes_x & yes_y)), int(np.sum(~yes_x & ~yes_y))]]
    if not len(x):
        return McNemar(table, 0, None, "no item has both outcomes")
    return McNemar(table, len(x), float(mcnemar(table, exact=True).pvalue))


@dataclass(frozen=True, slots=True)
class SignTest:
    """Exact two-sided sign test: is the other rater above the reference as often as below?"""

    n: int       # complete pairs, ties included
    above: int   # other > reference
    below: int   # other < reference
    p_value: float | None
    reason: str | None = None


def sign_test(reference: ArrayLike, other: ArrayLike) -> SignTest:
    x, y = complete_pairs(reference, other)
    above, below = int(np.sum(y > x)), int(np.sum(y < x))
    if not len(x):
        return SignTest(0, 0, 0, None, "no item has both ratings")
    if not above + below:  # every pair tied: nothing points either way
        return SignTest(len(x), 0, 0, 1.0)
    return SignTest(len(x), above, below, float(stats.binomtest(above, above + below).pvalue))


def pearson(x: ArrayLike, y: ArrayLike) -> Estimate:
    a, b = complete_pairs(x, y)
    if (problem := _correlation_problem(a, b)) is not None:
        return problem
    result = stats.pearsonr(a, b)
    if len(a) < 4:
        return Estimate(result.statistic, None, len(a), TOO_FEW_FOR_CI.format(4))
    return Estimate(result.statistic, tuple(result.confidence_interval(0.95)), len(a))


def spearman(x: ArrayLike, y: ArrayLike) -> Estimate:
    """Spearman's rho; CI by Fisher's z with the Bonett & Wright (2000) standard error."""
    a, b = complete_pairs(x, y)
    if (problem := _correlation_problem(a, b)) is not None:
        return problem
    rho = float(stats.spearmanr(a, b).statistic)
    if len(a) < 4:
        return Estimate(rho, None, len(a), TOO_FEW_FOR_CI.format(4))
    half = Z95 * np.sqrt((1 + rho ** 2 / 2) / (len(a) - 3))
    with np.errstate(divide="ignore"):  # rho = +-1 maps to an infinite z and back to +-1
        z = np.arctanh(rho)
    return Estimate(rho, (np.tanh(z - half), np.tanh(z + half)), len(a))


def mean_absolute_difference(x: ArrayLike, y: ArrayLike) -> Estimate:
    """Mean |y - x| with a t-based CI (its lower end kept at 0, which the mean cannot go below)."""
    a, b = complete_pairs(x, y)
    return mean(np.abs(b - a), bounds=(0.0, np.inf))


def _correlation_problem(a: np.ndarray, b: np.ndarray) -> Estimate | None:
    if len(a) < 2:
        return Estimate.unavailable(len(a), "a correlation needs at least 2 pairs")
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return Estimate.unavailable(len(a), "one of the two raters gave the same rating to every item, "
                                            "so the correlation is undefined")
    return None
