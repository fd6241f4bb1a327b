"""Agreement coefficients: published values, hand-worked cases, library cross-checks, degenerate input."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats import inter_rater
from statsmodels.stats.proportion import proportion_confint

from physgrade.stats.agreement import (
    COEFFICIENTS,
    ac2_difference,
    agreement,
    alpha_of_profiles,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    percent_agreement,
)
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import ALL_AGREE, Estimate

nan = np.nan

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", 4 coders x 12 units (as in
# /work/shared/reference/agreement.md). The R package irrCAC ships the same table as cac.raw4raters.
KRIPPENDORFF_2011 = np.array([
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]).T  # items x raters

# Fleiss (1971) as shown on Wikipedia: how many of 14 raters put each subject in categories 1..5.
FLEISS_1971 = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])

# irrCAC's cont3x3abstractors: 100 pregnancies classified by two abstractors (rows: abstractor 1).
ABSTRACTORS = np.array([[13, 0, 0], [0, 20, 7], [0, 4, 56]])


def from_table(table: np.ndarray, values=(1.0, 2.0, 3.0)) -> np.ndarray:
    """A two-rater contingency table as a ratings matrix (one row per counted item)."""
    return np.array([(values[i], values[j]) for i in range(len(table)) for j in range(len(table))
                     for _ in range(table[i, j])])


def from_counts(counts: np.ndarray) -> np.ndarray:
    """Category counts per subject as a ratings matrix (rater identity does not matter for Fleiss)."""
    return np.array([np.repeat(np.arange(1.0, counts.shape[1] + 1), row) for row in counts])


def wilson(share: float, n: float) -> tuple[float, float]:
    """Wilson's 95% interval of ``share`` at a sample size ``n`` that may be fractional."""
    return proportion_confint(share * n, n, alpha=0.05, method="wilson")


def t_se(estimate: Estimate, rated_items: int) -> float:
    """The standard error behind an analytic interval, from its lower end (the upper may be clipped)."""
    return (estimate.value - estimate.ci95[0]) / stats.t.ppf(0.975, rated_items - 1)


# --- Estimate -----------------------------------------------------------------------------------

def test_estimate_as_dict_holds_plain_floats_and_is_json():
    e = Estimate(np.float64(0.5), (np.float64(0.25), np.float64(0.75)), np.int64(12))
    assert e.as_dict() == {"value": 0.5, "ci95": [0.25, 0.75], "n": 12, "reason": None}
    assert type(e.value) is float and type(e.ci95[0]) is float and type(e.n) is int
    assert json.loads(json.dumps(Estimate.unavailable(0, "no pairs").as_dict())) == {
        "value": None, "ci95": None, "n": 0, "reason": "no pairs"}


def test_estimate_refuses_nan_and_silent_unavailability():
    with pytest.raises(ValueError):
        Estimate(float("nan"), None, 3)
    with pytest.raises(ValueError):
        Estimate(0.5, (float("nan"), 1.0), 3)
    with pytest.raises(ValueError):
        Estimate(None, None, 3)  # unavailable needs a reason


def test_estimate_text():
    assert Estimate(0.7431, (0.6123, 0.8741), 50).text() == "0.743 [0.612, 0.874]"
    assert Estimate(0.847, (0.801, 0.886), 550).text(percent=True) == "84.7% [80.1, 88.6]"
    assert Estimate.unavailable(5, "only one category").text() == "n/a (only one category)"
    assert Estimate(1.0, None, 1, "a confidence interval needs at least 2 items").text(2) == (
        "1.00 (no interval)")
    assert Estimate(1.0, None, 1205, ALL_AGREE).text() == "1.000 (all agree, n = 1,205)"
    assert Estimate(1.0, None, 5, ALL_AGREE).as_dict() == {"value": 1.0, "ci95": None, "n": 5,
                                                           "reason": ALL_AGREE}


# --- published values ---------------------------------------------------------------------------

@pytest.mark.parametrize("level, published", [
    ("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)])
def test_krippendorff_2011(level, published):
    alpha = krippendorff_alpha(KRIPPENDORFF_2011, level)
    assert alpha.value == pytest.approx(published, abs=5e-4)
    assert alpha.n == 11  # unit 12 has a single rating: no pair
    assert alpha.ci95[0] < alpha.value <= alpha.ci95[1]


def test_fleiss_1971():
    kappa = fleiss_kappa(from_counts(FLEISS_1971))
    assert kappa.value == pytest.approx(0.20993, abs=5e-6)
    assert kappa.n == 10


def test_irrcac_raw4raters():
    # kgwet/irrCAC README.md (and vignette overview): pa.coeff.raw, gwet.ac1.raw and fleiss.kappa.raw
    # on cac.raw4raters, i.e. KRIPPENDORFF_2011. All 12 units are rated, so the t interval has 11 df.
    # (Percent agreement's interval is a share's, not irrCAC's: see the test after this one.)
    pa, ac1, kappa = (f(KRIPPENDORFF_2011) for f in (percent_agreement, gwet_ac1, fleiss_kappa))
    assert pa.value == pytest.approx(0.8181818, abs=1e-7)
    assert ac1.value == pytest.approx(0.77544, abs=5e-6)
    assert t_se(ac1, 12) == pytest.approx(0.14295, abs=5e-6)
    assert ac1.ci95 == pytest.approx((0.461, 1.0), abs=5e-4)
    assert kappa.value == pytest.approx(0.76117, abs=5e-6)
    assert t_se(kappa, 12) == pytest.approx(0.15302, abs=5e-6)
    assert kappa.ci95 == pytest.approx((0.424, 1.0), abs=5e-4)
    # krippen.alpha.raw(cac.raw4raters): 0.74342
    assert krippendorff_alpha(KRIPPENDORFF_2011).value == pytest.approx(0.74342, abs=5e-6)


def test_percent_agreement_is_a_share_of_pairs_clustered_in_items():
    # The 11 units rated twice hold 3, 6, 6, 6, 6, 6, 6, 6, 6, 3 and 1 pairs (55), of which all
    # agree but on unit 2 (3 of 6), 6 (0 of 6) and 8 (3 of 6): shares averaging 9/11. Their
    # variance (divisor 11) is 8.5/11 - (9/11)^2 = 12.5/121, so n_eff = (18/121) / (12.5/1331)
    # = 15.84, between the 11 units and their 55 pairs.
    pa = percent_agreement(KRIPPENDORFF_2011)
    assert pa.value == pytest.approx(9 / 11) and pa.n == 11
    assert pa.ci95 == pytest.approx(wilson(9 / 11, 15.84), abs=1e-9)


def test_irrcac_raw4raters_weighted():
    # kgwet/irrCAC inst/doc/weighting.html: gwet.ac1.raw(cac.raw4raters, weights = "quadratic")
    # gives AC2 0.914, se 0.10396, (0.685, 1), with pa 0.9753788.
    quadratic = gwet_ac2(KRIPPENDORFF_2011, "quadratic")
    assert quadratic.value == pytest.approx(0.914, abs=5e-4)
    assert t_se(quadratic, 12) == pytest.approx(0.10396, abs=5e-6)
    assert quadratic.ci95 == pytest.approx((0.685, 1.0), abs=5e-4)
    # Linear weights: afergadis/irrCAC (a Python port of irrCAC checked against it),
    # test/unit/irrCAC/raw/test_gwet.py: AC2 0.859, se 0.117, CI (0.600, 1).
    linear = gwet_ac2(KRIPPENDORFF_2011, "linear")
    assert linear.value == pytest.approx(0.859, abs=5e-4)
    assert t_se(linear, 12) == pytest.approx(0.117, abs=5e-4)
    assert linear.ci95 == pytest.approx((0.600, 1.0), abs=5e-4)


def test_irrcac_contingency_table_cont3x3abstractors():
    ratings = from_table(ABSTRACTORS)
    # kgwet/irrCAC README.md: kappa2.table 0.7964094 (se 0.05891072), scott2.table 0.7962397 (Fleiss'
    # kappa of 2 raters is Scott's pi), gwet.ac1.table 0.8493305 (se 0.04321747), pa2.table 0.89
    # (se 0.03128898), krippen2.table 0.7972585.
    kappa = cohen_kappa(ratings)
    assert kappa.value == pytest.approx(0.7964094, abs=1e-7)
    assert (kappa.ci95[1] - kappa.ci95[0]) / 2 == pytest.approx(stats.norm.ppf(0.975) * 0.05891072, abs=1e-7)
    assert fleiss_kappa(ratings).value == pytest.approx(0.7962397, abs=1e-7)
    assert krippendorff_alpha(ratings).value == pytest.approx(0.7972585, abs=1e-7)
    # The table functions divide the variance by n where the raw-data ones divide by n - 1.
    ac1 = gwet_ac1(ratings)
    assert ac1.value == pytest.approx(0.8493305, abs=1e-7)
    assert t_se(ac1, 100) * np.sqrt(99 / 100) == pytest.approx(0.04321747, abs=1e-8)
    # Percent agreement of two raters is a share of items: 89 of 100, with Wilson's interval.
    pa = percent_agreement(ratings)
    assert pa.value == pytest.approx(0.89, abs=1e-12)
    assert pa.ci95 == pytest.approx(proportion(89, 100).ci95, abs=1e-9)
    # kgwet/irrCAC inst/doc/weighting.html, weights = quadratic.weights(1:3): kappa2.table 0.8921569
    # (se 0.03535151), gwet.ac1.table 0.9402369 (se 0.01792019), pa2.table 0.9725, and
    # krippen2.table 0.8926487 (quadratic weights on 1:3 are alpha's interval metric).
    kappa = cohen_kappa(ratings, "quadratic")
    assert kappa.value == pytest.approx(0.8921569, abs=1e-7)
    assert (kappa.ci95[1] - kappa.ci95[0]) / 2 == pytest.approx(stats.norm.ppf(0.975) * 0.03535151, abs=1e-7)
    ac2 = gwet_ac2(ratings, "quadratic")
    assert ac2.value == pytest.approx(0.9402369, abs=1e-7)
    assert t_se(ac2, 100) * np.sqrt(99 / 100) == pytest.approx(0.01792019, abs=1e-8)
    assert krippendorff_alpha(ratings, "interval").value == pytest.approx(0.8926487, abs=1e-7)


# --- hand-worked cases --------------------------------------------------------------------------

# Two raters, yes = 1 / no = 0: 6 items both yes, 2 both no, 1 yes/no, 1 no/yes.
TWO_BY_TWO = from_table(np.array([[2, 1], [1, 6]]), values=(0.0, 1.0))


def test_two_by_two_by_hand():
    # p_a = 8/10. Both raters say yes 7 times in 10, so pi_yes = 0.7, pi_no = 0.3.
    # AC1: p_e = T/(q(q-1)) * sum pi(1-pi) = 2/2 * (0.21 + 0.21) = 0.42; (0.8-0.42)/0.58 = 19/29.
    # Fleiss (Scott) and Cohen: p_e = 0.7^2 + 0.3^2 = 0.58; (0.8-0.58)/0.42 = 11/21.
    # Alpha: coincidences yes-yes 12, no-no 4, yes-no 2 + 2; n_yes 14, n_no 6, N 20:
    # 1 - (N-1) * 4 / (2 * 14 * 6) = 1 - 76/168 = 23/42.
    assert percent_agreement(TWO_BY_TWO).value == pytest.approx(0.8)
    assert gwet_ac1(TWO_BY_TWO).value == pytest.approx(19 / 29)
    assert fleiss_kappa(TWO_BY_TWO).value == pytest.approx(11 / 21)
    assert cohen_kappa(TWO_BY_TWO).value == pytest.approx(11 / 21)
    assert krippendorff_alpha(TWO_BY_TWO).value == pytest.approx(23 / 42)


def test_percent_agreement_interval_by_hand():
    # Items agree 8 times and disagree twice: Wilson's interval of 8 of 10, centre
    # (0.8 + z^2/20) / (1 + z^2/10) = 0.71674, half-width z / (1 + z^2/10) *
    # sqrt(0.016 + z^2/400) = 0.22658.
    pa = percent_agreement(TWO_BY_TWO)
    assert pa.ci95 == pytest.approx((0.49016, 0.94332), abs=5e-5)
    assert pa.n == 10


def test_percent_agreement_interval_stays_a_share():
    # One agreeing item of three: Wilson's 1 of 3 stays inside 0..1 where a t interval would
    # reach -1.10; Fleiss' kappa, a coefficient, can go below 0.
    pa = percent_agreement(np.array([[1, 1], [1, 2], [2, 1]], dtype=float))
    assert pa.value == pytest.approx(1 / 3)
    assert pa.ci95 == pytest.approx((0.06149, 0.79234), abs=5e-5)
    assert fleiss_kappa(np.array([[1, 1], [1, 2], [2, 1]], dtype=float)).ci95[0] < 0


def test_percent_agreement_with_missing_ratings_by_hand():
    ratings = np.array([[1, 1, 1], [1, 1, nan], [1, 2, nan], [2, nan, nan], [1, 2, 2]])
    # Per item: 3/3 pairs agree, 1/1, 0/1, (one rating: no pair, left out), 1/3 -> (1+1+0+1/3)/4.
    pa = percent_agreement(ratings)
    assert pa.value == pytest.approx(7 / 12)
    assert pa.n == 4


def test_gwet_ac2_by_hand():
    ratings = np.array([[0, 0], [1, 1], [2, 2], [0, 1]], dtype=float)
    # Linear weights on 0, 1, 2: w(0,1) = w(1,2) = 0.5, w(0,2) = 0; their sum T = 3 + 4 * 0.5 = 5.
    # p_a = (1 + 1 + 1 + 0.5) / 4 = 0.875. pi = (1.5, 1.5, 1) / 4 = (0.375, 0.375, 0.25);
    # sum pi(1-pi) = 0.65625; p_e = 5/(3*2) * 0.65625 = 0.546875; AC2 = 0.328125/0.453125 = 21/29.
    assert gwet_ac2(ratings, "linear").value == pytest.approx(21 / 29)
    # Quadratic: w(0,1) = w(1,2) = 0.75, T = 6; p_a = 3.75/4 = 0.9375; p_e = 6/6 * 0.65625;
    # AC2 = 0.28125/0.34375 = 9/11.
    assert gwet_ac2(ratings, "quadratic").value == pytest.approx(9 / 11)
    # The weights use the category values: on 0, 1, 4 the near miss (0, 1) is worth 1 - 1/4.
    spaced = np.where(ratings == 2, 4.0, ratings)
    assert gwet_ac2(spaced, "linear").value != pytest.approx(21 / 29)


def test_categories_matter_for_gwet_chance_agreement():
    ratings = np.array([[0, 0], [1, 1], [1, 1], [0, 1]], dtype=float)
    # Observed 0/1: q = 2, pi = (3/8, 5/8), p_e = 2 * 15/64 = 0.46875; p_a = 0.75 -> 0.470588.
    # On the scale 0, 1, 2: q = 3, pi(2) = 0, p_e = 3/6 * 2 * 15/64 = 0.234375 -> 0.673469.
    assert gwet_ac1(ratings).value == pytest.approx((0.75 - 0.46875) / 0.53125)
    assert gwet_ac1(ratings, categories=(0, 1, 2)).value == pytest.approx((0.75 - 0.234375) / 0.765625)


# --- cross-checks with other libraries ----------------------------------------------------------

@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_cohen_kappa_matches_sklearn(weights):
    rng = np.random.default_rng(7)
    truth = rng.integers(0, 4, 200)
    ratings = np.column_stack([truth, np.clip(truth + rng.integers(-1, 2, 200), 0, 3)]).astype(float)
    ratings[rng.random(ratings.shape) < 0.1] = nan
    complete = ratings[~np.isnan(ratings).any(1)]
    ours = cohen_kappa(ratings, weights)
    assert ours.value == pytest.approx(cohen_kappa_score(complete[:, 0], complete[:, 1], weights=weights))
    assert ours.n == len(complete)
    assert ours.ci95[0] < ours.value < ours.ci95[1]


def test_fleiss_kappa_matches_statsmodels_on_complete_data():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 4, 60)
    ratings = np.column_stack([np.where(rng.random(60) < 0.7, truth, rng.integers(0, 4, 60))
                               for _ in range(5)]).astype(float)
    table, _ = inter_rater.aggregate_raters(ratings)
    assert fleiss_kappa(ratings).value == pytest.approx(inter_rater.fleiss_kappa(table))
    published = from_counts(FLEISS_1971)
    assert fleiss_kappa(published).value == pytest.approx(inter_rater.fleiss_kappa(FLEISS_1971))


# --- Krippendorff's alpha: the vectorised form and the bootstrap ---------------------------------

def profiles_of(ratings: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Category counts of the items rated twice, their distinct profiles, and each item's profile."""
    counts = np.stack([(ratings == v).sum(1) for v in values], axis=1)
    counts = counts[counts.sum(1) >= 2]
    profiles, inverse = np.unique(counts, axis=0, return_inverse=True)
    return counts, profiles, inverse.ravel()


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_vectorised_alpha_equals_krippendorff_package_on_published_data(level):
    values = np.arange(1.0, 6.0)
    _, profiles, inverse = profiles_of(KRIPPENDORFF_2011, values)
    ours = alpha_of_profiles(profiles, np.bincount(inverse)[None, :], values, level)
    assert ours[0] == pytest.approx(krippendorff.alpha(KRIPPENDORFF_2011.T, level_of_measurement=level))


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_alpha_equals_krippendorff_package_on_random_data(level, seed):
    rng = np.random.default_rng(seed)
    values = np.array([0.0, 1.0, 3.0, 7.0, 8.0])  # unevenly spaced, one never used below
    ratings = rng.choice(values[:4], size=(300, 2 + seed)).astype(float)
    ratings[rng.random(ratings.shape) < 0.3] = nan
    _, profiles, inverse = profiles_of(ratings, values)
    ours = alpha_of_profiles(profiles, np.bincount(inverse)[None, :], values, level)
    expected = krippendorff.alpha(ratings.T, value_domain=values, level_of_measurement=level)
    assert ours[0] == pytest.approx(expected, rel=1e-10)
    assert krippendorff_alpha(ratings, level, categories=values).value == pytest.approx(expected)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_each_resample_is_alpha_of_items_drawn_with_replacement(level):
    rng = np.random.default_rng(11)
    values = np.arange(0.0, 4.0)
    ratings = rng.integers(0, 4, size=(80, 3)).astype(float)
    ratings[rng.random(ratings.shape) < 0.2] = nan
    counts, profiles, inverse = profiles_of(ratings, values)
    pairable = ratings[(~np.isnan(ratings)).sum(1) >= 2]
    draws = [rng.integers(0, len(counts), len(counts)) for _ in range(5)]
    ours = alpha_of_profiles(profiles, np.stack([np.bincount(inverse[d], minlength=len(profiles))
                                                 for d in draws]), values, level)
    expected = [krippendorff.alpha(pairable[d].T, value_domain=values, level_of_measurement=level)
                for d in draws]
    assert ours == pytest.approx(expected)


def test_alpha_of_profiles_is_undefined_when_a_resample_has_one_value():
    profiles = np.array([[2, 0], [0, 2]])
    alphas = alpha_of_profiles(profiles, np.array([[3, 0], [2, 1]]), np.array([0.0, 1.0]), "nominal")
    assert np.isnan(alphas[0]) and alphas[1] == pytest.approx(1.0)


def test_alpha_interval_agrees_with_a_plain_bootstrap_loop():
    # The 2.5th and 97.5th percentiles of alpha over items drawn with replacement, the slow way.
    rng = np.random.default_rng(8)
    truth = rng.integers(0, 3, 300)
    ratings = np.column_stack([np.where(rng.random(300) < 0.7, truth, rng.integers(0, 3, 300))
                               for _ in range(3)]).astype(float)
    ratings[rng.random(ratings.shape) < 0.1] = nan
    loop = [krippendorff.alpha(ratings[rng.integers(0, 300, 300)].T, value_domain=[0, 1, 2],
                               level_of_measurement="ordinal") for _ in range(2000)]
    ours = krippendorff_alpha(ratings, "ordinal", resamples=4000)
    assert ours.ci95 == pytest.approx(tuple(np.percentile(loop, [2.5, 97.5])), abs=0.01)


def test_alpha_bootstrap_is_reproducible_and_seeded():
    rng = np.random.default_rng(5)
    ratings = rng.integers(0, 3, size=(500, 2)).astype(float)
    ratings[:300, 1] = ratings[:300, 0]
    first = krippendorff_alpha(ratings, "ordinal", resamples=300, seed=4)
    assert krippendorff_alpha(ratings, "ordinal", resamples=300, seed=4) == first
    other = krippendorff_alpha(ratings, "ordinal", resamples=300, seed=5)
    assert other.value == first.value and other.ci95 != first.ci95
    assert first.ci95[0] < first.value < first.ci95[1]
    assert first.ci95[1] - first.ci95[0] < 0.2
    none = krippendorff_alpha(ratings, "ordinal", resamples=0)
    assert none.value == first.value and none.ci95 is None and "resamples" in none.reason


# --- agreement() and degenerate input ------------------------------------------------------------

def test_agreement_reports_every_coefficient_in_order():
    two = agreement(TWO_BY_TWO, "ordinal", categories=(0, 1))
    assert tuple(two) == COEFFICIENTS
    assert all(e.value is not None for e in two.values())
    four = agreement(KRIPPENDORFF_2011, "interval")
    assert tuple(four) == COEFFICIENTS
    assert four["krippendorff_alpha"].value == pytest.approx(0.849, abs=5e-4)
    for name in ("cohen_kappa", "cohen_kappa_linear", "cohen_kappa_quadratic"):
        assert four[name].value is None and "2 raters" in four[name].reason
    nominal = agreement(TWO_BY_TWO, "nominal")
    for name in ("cohen_kappa_linear", "cohen_kappa_quadratic", "gwet_ac2_linear", "gwet_ac2_quadratic"):
        assert nominal[name].value is None and "nominal" in nominal[name].reason
    assert nominal["krippendorff_alpha"].value == pytest.approx(23 / 42)


def test_items_nobody_rated_change_nothing():
    padded = np.vstack([KRIPPENDORFF_2011, np.full((5, 4), nan)])
    assert agreement(padded, "ordinal") == agreement(KRIPPENDORFF_2011, "ordinal")


@pytest.mark.parametrize("ratings", [
    np.empty((0, 2)),                # no items
    np.full((4, 2), nan),            # every rating missing
    np.array([[1, nan], [nan, 2]]),  # nobody rated an item twice
], ids=["no items", "all missing", "no pairs"])
def test_nothing_to_compare_is_unavailable_everywhere(ratings):
    for name, estimate in agreement(ratings, "ordinal").items():
        assert estimate.value is None and estimate.ci95 is None, name
        assert estimate.n == 0 and estimate.reason, name


def test_one_category_only():
    ratings = np.full((5, 2), 2.0)
    results = agreement(ratings, "ordinal")
    assert results["percent_agreement"].value == 1.0
    for name in COEFFICIENTS[1:]:
        assert results[name].value is None and "one category" in results[name].reason, name
        assert results[name].n == 5, name
    # With the whole scale given, AC1's chance agreement is defined (and 0); kappa's stays 1.
    on_scale = agreement(ratings, "ordinal", categories=(0, 1, 2))
    assert on_scale["gwet_ac1"].value == 1.0 and on_scale["gwet_ac2_linear"].value == 1.0
    assert on_scale["fleiss_kappa"].value is None and on_scale["cohen_kappa"].value is None
    assert on_scale["krippendorff_alpha"].value is None


def test_a_single_item_has_a_value_but_no_interval():
    results = agreement(np.array([[1.0, 2.0]]), "ordinal")
    for name in COEFFICIENTS[1:]:
        assert results[name].value is not None and results[name].ci95 is None, name
        assert results[name].n == 1 and "at least 2" in results[name].reason, name
    # A share has Wilson's interval even of one item (0 of 1: 0 to 79.3%).
    assert results["percent_agreement"].ci95 == pytest.approx(proportion(0, 1).ci95)
    # Two ratings of one item on the scale 1, 2: they disagree, and chance says 1/2.
    assert gwet_ac1(np.array([[1.0, 2.0]])).value == -1.0


# Five items, two raters, every item agreeing on a 0-2 scale that uses all three values.
ALL_AGREEING = np.array([[0, 0], [1, 1], [2, 2], [1, 1], [0, 0]], dtype=float)


@pytest.mark.parametrize("name", COEFFICIENTS[1:])
def test_every_item_agreeing_gives_no_interval_and_says_why(name):
    # Each formula gives [1, 1] here (a variance of 0, every bootstrap resample 1): no interval,
    # one reason for all, and the text shows the n that says how little 5 items prove.
    found = agreement(ALL_AGREEING, "ordinal", categories=(0, 1, 2))[name]
    assert found.value == pytest.approx(1.0, abs=1e-12) and found.n == 5
    assert found.ci95 is None and found.reason == ALL_AGREE
    assert found.text() == "1.000 (all agree, n = 5)"


def test_every_item_agreeing_with_a_missing_rating_still_all_agree():
    # An item rated once holds no pair and does not break the rule; a disagreeing one does.
    ratings = np.vstack([np.column_stack([ALL_AGREEING, ALL_AGREEING[:, 0]]), [[2, nan, 0]]])
    for name in ("fleiss_kappa", "gwet_ac1", "gwet_ac2_linear", "krippendorff_alpha"):
        assert agreement(ratings[:-1], "ordinal")[name].reason == ALL_AGREE, name
        assert agreement(ratings, "ordinal")[name].ci95 is not None, name
    single = np.vstack([ratings[:-1], [[2, nan, nan]]])
    assert agreement(single, "ordinal")["gwet_ac1"].reason == ALL_AGREE


def test_percent_agreement_of_items_that_all_agree_keeps_a_wilson_interval():
    pa = percent_agreement(ALL_AGREEING)
    assert pa.value == 1.0 and pa.n == 5
    assert pa.ci95 == pytest.approx(proportion(5, 5).ci95, abs=1e-12)
    assert pa.ci95[0] == pytest.approx(5 / (5 + stats.norm.ppf(0.975) ** 2), abs=1e-9)


def test_all_agree_comes_before_the_bootstrap_and_covers_the_ac2_difference():
    # A draft's alpha (no resamples) already says the items all agree: no interval to wait for.
    assert krippendorff_alpha(ALL_AGREEING, "ordinal", resamples=0).reason == ALL_AGREE
    difference = ac2_difference(ALL_AGREEING, ALL_AGREEING, categories=(0, 1, 2))
    assert difference.value == 0.0 and difference.ci95 is None and difference.reason == ALL_AGREE


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="not one of the categories"):
        percent_agreement(TWO_BY_TWO, categories=(0, 2))
    with pytest.raises(ValueError, match="ascending"):
        gwet_ac1(TWO_BY_TWO, categories=(1, 0))
    with pytest.raises(ValueError, match="scale"):
        agreement(TWO_BY_TWO, "ranked")
    with pytest.raises(ValueError, match="weights"):
        gwet_ac2(TWO_BY_TWO, "cubic")
    with pytest.raises(ValueError, match="negative"):
        krippendorff_alpha(TWO_BY_TWO - 1, "ratio")
    with pytest.raises(ValueError, match="2-D"):
        fleiss_kappa(np.array([1.0, 2.0]))
