"""Agreement coefficients over a ratings matrix: one row per item, one column per rater, NaN = missing.

Fleiss' kappa and Gwet's AC1/AC2 are one implementation of Gwet's general framework (Gwet 2014,
Handbook of Inter-Rater Reliability, 4th ed.; the R package irrCAC), because it is the one that
allows any number of raters, missing ratings and weights, and gives every coefficient an analytic
variance. Cohen's kappa is statsmodels', Krippendorff's alpha the krippendorff package's; alpha's
confidence interval is a bootstrap over items, computed for all resamples at once so that a
report of a hundred alphas on tens of thousands of items stays quick. Percent agreement is a
share, and gets a share's Wilson interval, which never shrinks to a point
(:func:`~physgrade.stats.describe.clustered_proportion`).

When every item agrees, the coefficients' intervals have no width (their variance is 0, every
bootstrap resample gives the same value), which would read as certainty: they are reported with
their value and n but no interval, and the reason :data:`~physgrade.stats.estimate.ALL_AGREE`.

``categories`` are the possible values of the scale, ascending (e.g. (0, 1, 2) for a criterion
scored 0-2); None means the values observed. They matter for chance agreement and for weights.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

import krippendorff
import numpy as np
from numpy.typing import ArrayLike
from statsmodels.stats import inter_rater

from physgrade.stats.describe import clustered_proportion, t95
from physgrade.stats.estimate import ALL_AGREE, Estimate
from physgrade.stats.paired import Z95, confusion_matrix

Scale = Literal["nominal", "ordinal", "interval", "ratio"]
SCALES: tuple[Scale, ...] = ("nominal", "ordinal", "interval", "ratio")
COEFFICIENTS = ("percent_agreement", "cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic",
                "fleiss_kappa", "gwet_ac1", "gwet_ac2_linear", "gwet_ac2_quadratic", "krippendorff_alpha")
WEIGHTS = ("linear", "quadratic")

NO_PAIRS = "no item was rated by two raters"
ONE_CATEGORY = "every rating is in one category, so chance agreement is 1"
TOO_FEW_FOR_CI = "a confidence interval needs at least 2 items"


def percent_agreement(ratings: ArrayLike, categories: ArrayLike | None = None) -> Estimate:
    """Share of agreeing pairs of ratings on an item, averaged over items rated at least twice,
    with the Wilson interval of a share clustered in items (the rating pairs of one item go
    together), not Gwet's analytic one, which has no width when every item agrees."""
    data = _matrix(ratings)
    counts = _counts(data, _scale(data, categories))
    counts = counts[counts.sum(1) >= 2]  # only items rated twice hold pairs
    if not len(counts):
        return Estimate.unavailable(0, NO_PAIRS)
    ratings_per_item = counts.sum(1)
    return clustered_proportion((counts * (counts - 1)).sum(1) // 2,
                                ratings_per_item * (ratings_per_item - 1) // 2)


def cohen_kappa(ratings: ArrayLike, weights: str | None = None,
                categories: ArrayLike | None = None) -> Estimate:
    """Cohen's kappa of exactly two raters (columns), optionally weighted; normal-theory 95% CI."""
    _check_weights(weights, allow_none=True)
    data = _matrix(ratings)
    if data.shape[1] != 2:
        return Estimate.unavailable(0, f"Cohen's kappa compares exactly 2 raters, not {data.shape[1]}")
    values = _scale(data, categories)
    pairs = data[~np.isnan(data).any(1)]
    n = len(pairs)
    if not n:
        return Estimate.unavailable(0, "no item was rated by both raters")
    if len(np.unique(pairs)) < 2:
        return Estimate.unavailable(n, ONE_CATEGORY)
    table = confusion_matrix(pairs[:, 0], pairs[:, 1], values)
    # 1-D weights are the category values: statsmodels turns them into |k - l| or (k - l)^2 distances.
    # Its z test (unused here) divides by zero when kappa's variance under the null is 0.
    with np.errstate(divide="ignore", invalid="ignore"):
        result = inter_rater.cohens_kappa(table, weights=values if weights else None, wt=weights)
    if n < 2:
        return Estimate(result.kappa, None, n, TOO_FEW_FOR_CI)
    if _every_item_agrees(pairs):
        return Estimate(result.kappa, None, n, ALL_AGREE)
    half = Z95 * np.sqrt(max(result.var_kappa, 0.0))
    return Estimate(result.kappa, _clipped(result.kappa, half), n)


def fleiss_kappa(ratings: ArrayLike, categories: ArrayLike | None = None) -> Estimate:
    """Fleiss' kappa, generalised by Gwet to items rated by different numbers of raters."""
    return _gwet_framework(ratings, categories, None, "fleiss")


def gwet_ac1(ratings: ArrayLike, categories: ArrayLike | None = None) -> Estimate:
    """Gwet's AC1, which stays meaningful when one category dominates (the "kappa paradox")."""
    return _gwet_framework(ratings, categories, None, "gwet")


def gwet_ac2(ratings: ArrayLike, weights: str = "linear", categories: ArrayLike | None = None) -> Estimate:
    """Gwet's AC2: AC1 with partial credit for near misses on an ordered scale."""
    _check_weights(weights, allow_none=False)
    return _gwet_framework(ratings, categories, weights, "gwet")


#: Why alpha has no interval when no bootstrap was asked for.
NO_RESAMPLES = "no bootstrap resamples were requested"


def krippendorff_alpha(ratings: ArrayLike, level: str = "nominal", categories: ArrayLike | None = None,
                       resamples: int = 1000, seed: int = 0) -> Estimate:
    """Krippendorff's alpha at a level of measurement; percentile bootstrap CI over items."""
    if not _is_scale(level):
        raise ValueError(f"unknown level of measurement {level!r}; use one of {', '.join(SCALES)}")
    data = _matrix(ratings)
    values = _scale(data, categories)
    if level == "ratio" and values.size and values[0] < 0:
        raise ValueError("ratings on a ratio scale cannot be negative")
    counts = _counts(data, values)
    counts = counts[counts.sum(1) >= 2]  # only items rated twice hold pairs of values
    n = len(counts)
    if not n:
        return Estimate.unavailable(0, NO_PAIRS)
    if np.count_nonzero(counts.sum(0)) < 2:
        return Estimate.unavailable(n, "every rating is in one category, so expected disagreement is 0")
    value = krippendorff.alpha(reliability_data=data.T, value_domain=values, level_of_measurement=level)
    if n < 2:
        return Estimate(value, None, n, TOO_FEW_FOR_CI)
    if _every_item_agrees(data):
        return Estimate(value, None, n, ALL_AGREE)
    if resamples < 1:
        return Estimate(value, None, n, NO_RESAMPLES)
    # Items with the same ratings profile are interchangeable, so a resample is just how many
    # items of each profile it drew: one multinomial draw per resample.
    profiles, multiplicity = _profiles(counts)
    drawn = np.random.default_rng(seed).multinomial(n, multiplicity / n, size=resamples)
    alphas = alpha_of_profiles(profiles, drawn, values, level)
    alphas = alphas[~np.isnan(alphas)]
    if not alphas.size:
        return Estimate(value, None, n, "alpha is undefined in every bootstrap resample")
    return Estimate(value, tuple(np.percentile(alphas, [2.5, 97.5])), n)


def _is_scale(name: str) -> TypeGuard[Scale]:
    return name in SCALES


def agreement(ratings: ArrayLike, scale: str, categories: ArrayLike | None = None,
              resamples: int = 1000, seed: int = 0) -> dict[str, Estimate]:
    """Every coefficient of COEFFICIENTS, in that order, those that do not apply with a reason."""
    if scale not in SCALES:
        raise ValueError(f"unknown scale {scale!r}; use one of {', '.join(SCALES)}")
    ordered = scale != "nominal"
    unordered = Estimate.unavailable(0, "weights need an ordered scale, and this one is nominal")
    return {
        "percent_agreement": percent_agreement(ratings, categories),
        "cohen_kappa": cohen_kappa(ratings, None, categories),
        "cohen_kappa_linear": cohen_kappa(ratings, "linear", categories) if ordered else unordered,
        "cohen_kappa_quadratic": cohen_kappa(ratings, "quadratic", categories) if ordered else unordered,
        "fleiss_kappa": fleiss_kappa(ratings, categories),
        "gwet_ac1": gwet_ac1(ratings, categories),
        "gwet_ac2_linear": gwet_ac2(ratings, "linear", categories) if ordered else unordered,
        "gwet_ac2_quadratic": gwet_ac2(ratings, "quadratic", categories) if ordered else unordered,
        "krippendorff_alpha": krippendorff_alpha(ratings, scale, categories, resamples, seed),
    }


def alpha_of_profiles(profiles: np.ndarray, drawn: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha for each row of ``drawn`` (how many items of each profile), NaN if undefined.

    A profile is an item's category counts (how many raters chose each value), m ratings in all,
    m >= 2. Its coincidences are c_k c_l / (m - 1) for k != l; same-value coincidences never count,
    as every metric puts a value at distance 0 from itself. With n_v the value totals of a
    resample and N their sum, alpha = 1 - (N - 1) sum(o * d) / sum_kl(n_k n_l d_kl).
    """
    first, second = np.triu_indices(len(values), k=1)
    pair_coincidences = 2 * profiles[:, first] * profiles[:, second] / (profiles.sum(1) - 1)[:, None]
    totals = drawn @ profiles
    size = totals.sum(1)
    if level == "ordinal":
        # Krippendorff's ordinal distance is the squared gap between the values' mid-ranks, which
        # depend on the resample's own value totals.
        mid = np.cumsum(totals, axis=1) - totals / 2
        observed = ((drawn @ pair_coincidences) * (mid[:, first] - mid[:, second]) ** 2).sum(1)
        centre = (totals * mid).sum(1, keepdims=True) / size[:, None]
        expected = 2 * size * (totals * (mid - centre) ** 2).sum(1)  # = sum_kl n_k n_l (mid_k - mid_l)^2
    else:
        distance = _distances(values, level)
        observed = drawn @ (pair_coincidences @ distance[first, second])
        expected = ((totals @ distance) * totals).sum(1)
    defined = np.count_nonzero(totals, axis=1) >= 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(defined, 1 - (size - 1) * observed / expected, np.nan)


def _profiles(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``counts`` and how many times each occurs (np.unique(axis=0), 10x faster)."""
    ordered = counts[np.lexsort(counts.T[::-1])]
    first = np.flatnonzero(np.r_[True, (ordered[1:] != ordered[:-1]).any(1)])
    return ordered[first], np.diff(np.r_[first, len(ordered)])


def _distances(values: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's squared distances between category values (nominal, interval or ratio)."""
    a, b = values[:, None], values[None, :]
    if level == "nominal":
        return (a != b).astype(float)
    if level == "interval":
        return (a - b) ** 2
    total = a + b
    return np.divide(a - b, total, out=np.zeros(total.shape), where=total != 0) ** 2


def _gwet_framework(ratings: ArrayLike, categories: ArrayLike | None, weights: str | None,
                    chance: str) -> Estimate:
    """A chance-corrected coefficient (p_a - p_e) / (1 - p_e) with Gwet's linearised variance:
    sum_i (c_i - c)^2 / (n (n - 1)) over the n rated items (see :func:`_linearised`)."""
    parts = _linearised(ratings, categories, weights, chance)
    if isinstance(parts, Estimate):
        return parts
    coefficient, per_item, n_pairable = parts
    if n_pairable < 2:
        return Estimate(coefficient, None, n_pairable, TOO_FEW_FOR_CI)
    if _every_item_agrees(_matrix(ratings)):
        return Estimate(coefficient, None, n_pairable, ALL_AGREE)
    n = len(per_item)
    se = np.sqrt(((per_item - coefficient) ** 2).sum() / (n * (n - 1)))
    half = t95(n - 1) * se
    return Estimate(coefficient, _clipped(coefficient, half), n_pairable)


def ac2_difference(first: ArrayLike, second: ArrayLike, weights: str = "linear",
                   categories: ArrayLike | None = None) -> Estimate:
    """Gwet's AC2 of ``second`` minus that of ``first``: two ratings matrices of the same items
    (row i of each is the same item, every rating given), such as a reference beside a judge
    before and after a change of its prompt. The interval comes from the items' paired
    linearised values, which allows for the two coefficients sharing items (Gwet 2016, "Testing
    the difference of correlated agreement coefficients for statistical significance",
    Educational and Psychological Measurement 76(4))."""
    _check_weights(weights, allow_none=False)
    a, b = _matrix(first), _matrix(second)
    if a.shape != b.shape or np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("both matrices must rate the same items, with every rating given")
    values = _scale(np.vstack([a, b]), categories)
    before, after = (_linearised(side, values, weights, "gwet") for side in (a, b))
    for undefined in (before, after):
        if isinstance(undefined, Estimate):
            return Estimate.unavailable(undefined.n, undefined.reason or NO_PAIRS)
    assert not isinstance(before, Estimate) and not isinstance(after, Estimate)
    (c_a, l_a, n), (c_b, l_b, _) = before, after
    difference = c_b - c_a
    if n < 2:
        return Estimate(difference, None, n, TOO_FEW_FOR_CI)
    if _every_item_agrees(a) and _every_item_agrees(b):
        return Estimate(difference, None, n, ALL_AGREE)
    se = np.sqrt((((l_b - l_a) - difference) ** 2).sum() / (n * (n - 1)))
    half = t95(n - 1) * se
    return Estimate(difference, (max(difference - half, -2.0), min(difference + half, 2.0)), n)


def _linearised(ratings: ArrayLike, categories: ArrayLike | None, weights: str | None,
                chance: str) -> tuple[float, np.ndarray, int] | Estimate:
    """A coefficient of Gwet's framework, each rated item's linearised value, and how many
    items were rated at least twice; or why the coefficient is undefined.

    p_a averages, over items rated at least twice, the weighted share of agreeing rating pairs;
    p_e is sum_kl w_kl pi_k pi_l (Fleiss) or T_w / (q (q - 1)) * sum_k pi_k (1 - pi_k) (Gwet),
    pi_k being the mean over rated items of the share of their ratings in category k.
    """
    data = _matrix(ratings)
    values = _scale(data, categories)
    counts = _counts(data, values)
    counts = counts[counts.sum(1) > 0]  # an item nobody rated takes no part
    per_item = counts.sum(1)
    pairable = per_item >= 2
    n_pairable = int(pairable.sum())
    if not n_pairable:
        return Estimate.unavailable(0, NO_PAIRS)
    q = len(values)
    if chance == "gwet" and q < 2:
        return Estimate.unavailable(n_pairable, "only one category, so chance agreement is undefined")
    w = _weights(values, weights)
    agreeing = (counts * (counts @ w.T - 1)).sum(1)
    pa_item = np.where(pairable, agreeing / np.maximum(per_item * (per_item - 1), 1), 0.0)
    pa = pa_item.sum() / n_pairable
    pi = (counts / per_item[:, None]).mean(0)
    if chance == "fleiss":
        pe, pe_item = pi @ w @ pi, counts @ ((w + w.T) @ pi / 2) / per_item
    else:
        factor = w.sum() / (q * (q - 1))
        pe, pe_item = factor * (pi * (1 - pi)).sum(), factor * (counts @ (1 - pi)) / per_item
    if pe > 1 - 1e-12:
        return Estimate.unavailable(n_pairable, ONE_CATEGORY)
    coefficient = (pa - pe) / (1 - pe)
    n = len(counts)
    linearised = ((n / n_pairable) * (pa_item - pe * pairable) / (1 - pe)
                  - 2 * (1 - coefficient) * (pe_item - pe) / (1 - pe))
    return float(coefficient), linearised, n_pairable


def _every_item_agrees(data: np.ndarray) -> bool:
    """Whether every item rated at least twice got one rating from all its raters (and some item
    was): the one rule by which every coefficient here reports :data:`ALL_AGREE`."""
    rated = data[(~np.isnan(data)).sum(1) >= 2]
    return bool(len(rated)) and bool((np.nanmax(rated, 1) == np.nanmin(rated, 1)).all())


def _weights(values: np.ndarray, kind: str | None) -> np.ndarray:
    """Agreement weights: 1 for the same category, falling with the distance between values."""
    if kind is None or len(values) < 2:
        return np.eye(len(values))
    distance = np.abs(values[:, None] - values[None, :]) / (values[-1] - values[0])
    return 1 - distance if kind == "linear" else 1 - distance ** 2


def _check_weights(weights: str | None, allow_none: bool) -> None:
    if weights in WEIGHTS or (allow_none and weights is None):
        return
    raise ValueError(f"unknown weights {weights!r}; use {' or '.join(WEIGHTS)}")


def _matrix(ratings: ArrayLike) -> np.ndarray:
    data = np.asarray(ratings, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"ratings must be a 2-D array (items x raters), not {data.ndim}-D")
    return data


def _scale(data: np.ndarray, categories: ArrayLike | None) -> np.ndarray:
    """The category values: those given (checked against the ratings) or those observed."""
    observed = np.unique(data[~np.isnan(data)])
    if categories is None:
        return observed
    values = np.asarray(categories, dtype=float)
    if values.ndim != 1 or not np.isfinite(values).all() or (np.diff(values) <= 0).any():
        raise ValueError("categories must be distinct numbers in ascending order")
    unknown = np.setdiff1d(observed, values)
    if unknown.size:
        raise ValueError(f"rating {unknown[0]:g} is not one of the categories "
                         f"{', '.join(f'{v:g}' for v in values)}")
    return values


def _counts(data: np.ndarray, values: np.ndarray) -> np.ndarray:
    """How many raters put each item in each category: an items x categories matrix."""
    items, raters = np.nonzero(~np.isnan(data))
    cells = items * len(values) + np.searchsorted(values, data[items, raters])
    return np.bincount(cells, minlength=len(data) * len(values)).reshape(len(data), len(values))


def _clipped(centre: float, half: float) -> tuple[float, float]:
    """The interval centre ± half, cut to the coefficient's range, -1..1."""
    return max(centre - half, -1.0), min(centre + half, 1.0)
