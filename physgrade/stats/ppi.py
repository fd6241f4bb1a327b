"""Means corrected by expert grades: prediction-powered inference, tuned (PPI++).

A judge scores every response; experts grade a random sample of them. The judge's mean alone is
biased (judges are lenient), the experts' mean alone is honest but wide. PPI++ (Angelopoulos,
Duchi and Zrnic 2023) takes the judge's mean over the judge-only responses and corrects it by
the judge's error measured on the expert-graded sample, scaled by a factor ``lam`` in 0..1 that
is tuned from the data so that the interval is as narrow as it can be: ``lam`` near 0 when the
judge tells nothing about the grades (the estimate is then the experts' own), near 1 when it
predicts them well.

The formulas are those of ``ppi_py`` 0.2.3 (``ppi_mean_pointestimate``, ``ppi_mean_ci`` with
the data-tuned, clipped ``lam``; ``classical_mean_ci``), written out here so that the core does
not depend on ppi_py and numba at run time; the tests compare both. Intervals are normal (z)
intervals at :data:`~physgrade.stats.describe.LEVEL`.

Weights are inclusion weights, 1 / the probability that a response was drawn (a stratified
sample); like ppi_py, each set of weights is rescaled to mean 1, so only their ratios matter.
Both rely on the expert-graded responses being a random sample of one population and the
judge-only responses being the rest of it: a hand-picked sample gives no valid interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from physgrade.stats.describe import Z95
from physgrade.stats.estimate import Estimate


@dataclass(frozen=True, slots=True)
class Corrected:
    """A PPI++ estimate of a mean, with what a reader needs to judge it."""

    value: float
    ci95: tuple[float, float]
    se: float
    #: Expert-graded (labelled) responses.
    n: int
    #: Judge-only responses.
    n_unlabeled: int
    #: The power-tuning parameter used: 0 = the experts alone, 1 = plain PPI.
    lam: float
    #: How many expert grades the experts' own (classical) interval would need to be as narrow,
    #: at most ``n + n_unlabeled`` (every response graded). When ``se`` is 0 it is ``n`` if the
    #: experts' grades have no spread either (nothing gained), else ``n + n_unlabeled`` (the
    #: judge reproduces the grades: as good as grading them all).
    effective_n: float

    def estimate(self) -> Estimate:
        """The value with its interval as an :class:`Estimate` (n = expert grades); an interval of
        width 0 (no spread anywhere) is reported as no interval, with the reason."""
        if self.se == 0:
            return Estimate(self.value, None, self.n, "no spread in the grades, so no interval")
        return Estimate(self.value, self.ci95, self.n)


@dataclass(frozen=True, slots=True)
class Needed:
    """Expert grades needed for a 95% interval of a given half-width; None when the grades so
    far cannot tell (fewer than 2, or no spread), and ``reason`` says so."""

    corrected: int | None
    experts_only: int | None
    reason: str | None = None


def classical_mean(labels: ArrayLike, weights: ArrayLike | None = None) -> Estimate:
    """The experts' (weighted) mean with the normal interval of ``ppi_py.classical_mean_ci``.

    No interval for fewer than 2 grades or grades with no spread (a width-0 interval at 100%
    would read as certainty); no value for no grades."""
    y = _values(labels, "expert grades")
    n = len(y)
    if n == 0:
        return Estimate.unavailable(0, "no expert grades")
    weighted = _weights(weights, n, "weights") * y
    value = float(weighted.mean())
    if n < 2:
        return Estimate(value, None, n, "a confidence interval needs at least 2 expert grades")
    se = float(weighted.std()) / math.sqrt(n)
    if se == 0:
        return Estimate(value, None, n, "all expert grades are equal, so there is no interval")
    return Estimate(value, (value - Z95 * se, value + Z95 * se), n)


def ppi_mean(labels: ArrayLike, judged_labeled: ArrayLike, judged_unlabeled: ArrayLike,
             weights: ArrayLike | None = None, weights_unlabeled: ArrayLike | None = None,
             lam: float | None = None) -> Corrected:
    """The PPI++ mean of the expert grades ``labels``, helped by the judge's scores on the same
    responses (``judged_labeled``, in the same order) and on the judge-only responses.

    ``lam`` None tunes it from the data as ppi_py does; 1 is plain PPI, 0 the experts alone.
    A judge whose scores have no spread gets ``lam`` 0 (it cannot help). Raises ValueError for
    input that gives no estimate: fewer than 2 expert grades, no judge-only responses, lengths
    that do not match, values that are not finite, weights that are not positive."""
    y, y_hat, y_hat_unlabeled, w, w_unlabeled = _prepared(
        labels, judged_labeled, judged_unlabeled, weights, weights_unlabeled)
    if lam is None:
        lam = _tuned_lam(y, y_hat, y_hat_unlabeled, w, w_unlabeled)
    elif not math.isfinite(lam):
        raise ValueError(f"lam must be a finite number, not {lam!r}")
    n, n_unlabeled = len(y), len(y_hat_unlabeled)
    imputed = w_unlabeled * lam * y_hat_unlabeled
    rectifier = w * (y - lam * y_hat)
    value = float(imputed.mean() + rectifier.mean())
    se = math.sqrt(imputed.var() / n_unlabeled + rectifier.var() / n)
    classical_variance = float((w * y).var())
    if se > 0:
        # No more than every response graded: a ratio past that is noise in the tuned lam.
        effective_n = min(classical_variance / se ** 2, float(n + n_unlabeled))
    else:
        effective_n = float(n if classical_variance == 0 else n + n_unlabeled)
    return Corrected(value, (value - Z95 * se, value + Z95 * se), se, n, n_unlabeled, float(lam),
                     effective_n)


def difference(a: Corrected, b: Corrected) -> Estimate:
    """``a - b`` for estimates from disjoint responses (two models), hence independent: the
    standard errors add in quadrature; n counts the expert grades of both."""
    value = a.value - b.value
    se = math.hypot(a.se, b.se)
    n = a.n + b.n
    if se == 0:
        return Estimate(value, None, n, "no spread in the grades, so no interval")
    return Estimate(value, (value - Z95 * se, value + Z95 * se), n)


def needed(labels: ArrayLike, judged_labeled: ArrayLike, judged_unlabeled: ArrayLike,
           half_width: float, weights: ArrayLike | None = None,
           weights_unlabeled: ArrayLike | None = None) -> Needed:
    """How many expert grades a 95% interval of ``half_width`` needs, corrected and from the
    experts alone, with the spreads estimated from the sample so far (at least 2 either way).

    Experts alone: n = (z sd / H)^2, sd the spread of the weighted grades. Corrected: the
    smallest n at which the variance :func:`ppi_mean` reports, with ``lam`` chosen for that n,
    is (H / z)^2. ``lam`` is chosen anew because the best ``lam`` falls as n grows against the
    N judge-only responses; with it the corrected number never exceeds the experts' (``lam`` 0
    is the experts alone). N is taken to stay as it is (true while experts grade a small share
    of the responses). Fewer than 2 grades, or grades that are all equal, give no numbers and
    a reason; other unusable input raises ValueError as in :func:`ppi_mean`, and so does a
    half-width that is not a positive number."""
    if not (math.isfinite(half_width) and half_width > 0):
        raise ValueError(f"the half-width must be a positive number, not {half_width!r}")
    if len(_values(labels, "expert grades")) < 2:
        return Needed(None, None, "at least 2 expert grades are needed to estimate the spread")
    y, y_hat, y_hat_unlabeled, w, w_unlabeled = _prepared(
        labels, judged_labeled, judged_unlabeled, weights, weights_unlabeled)
    graded, judge = w * y, w * y_hat
    spread = float(graded.var())
    if spread == 0:
        return Needed(None, None, "the expert grades so far are all equal, so their spread "
                                  "(and the number needed) cannot be estimated yet")
    target = (half_width / Z95) ** 2
    experts_only = max(2, math.ceil(spread / target))
    covariance = float(np.mean((graded - graded.mean()) * (judge - judge.mean())))
    judge_spread = float(judge.var())
    judge_only_spread = float((w_unlabeled * y_hat_unlabeled).var())
    n_unlabeled = len(y_hat_unlabeled)

    def variance(n: int) -> float:
        """ppi_mean's variance with n grades and the best lam in 0..1 for that n."""
        pooled = judge_spread + n * judge_only_spread / n_unlabeled
        lam = float(np.clip(covariance / pooled, 0.0, 1.0)) if pooled > 0 else 0.0
        rectifier = spread - 2 * lam * covariance + lam ** 2 * judge_spread
        return rectifier / n + lam ** 2 * judge_only_spread / n_unlabeled

    # The variance falls as n grows, and at experts_only it is within target (lam 0 is).
    low, high = 2, experts_only
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if variance(middle) <= target else (middle + 1, high)
    return Needed(low, experts_only)


def _tuned_lam(y: np.ndarray, y_hat: np.ndarray, y_hat_unlabeled: np.ndarray, w: np.ndarray,
               w_unlabeled: np.ndarray) -> float:
    """ppi_py's ``_calc_lam_glm`` for a mean (clipped to 0..1, optim_mode "overall"), with
    gradients taken at the plain PPI estimate; 0 when the judge's scores have no spread."""
    n, n_unlabeled = len(y), len(y_hat_unlabeled)
    pilot = (w_unlabeled * y_hat_unlabeled).mean() + (w * (y - y_hat)).mean()
    grads = w * (y - pilot)
    grads_hat = w * (y_hat - pilot)
    all_grads_hat = np.concatenate([grads_hat, w_unlabeled * (y_hat_unlabeled - pilot)])
    if np.ptp(all_grads_hat) == 0:
        return 0.0
    covariance = float(np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean())))
    spread = float(np.var(all_grads_hat, ddof=1))
    return float(np.clip(covariance / ((1 + n / n_unlabeled) * spread), 0.0, 1.0))


def _prepared(labels: ArrayLike, judged_labeled: ArrayLike, judged_unlabeled: ArrayLike,
              weights: ArrayLike | None, weights_unlabeled: ArrayLike | None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The checked arrays and normalised weights of :func:`ppi_mean` and :func:`needed`."""
    y = _values(labels, "expert grades")
    y_hat = _values(judged_labeled, "judge scores on the expert-graded responses")
    y_hat_unlabeled = _values(judged_unlabeled, "judge scores on the judge-only responses")
    if len(y) != len(y_hat):
        raise ValueError(f"{len(y)} expert grades against {len(y_hat)} judge scores on the same "
                         "responses: they must pair up")
    if len(y) < 2:
        raise ValueError(f"a corrected estimate needs at least 2 expert grades, not {len(y)}")
    if not len(y_hat_unlabeled):
        raise ValueError("a corrected estimate needs judge-only responses; with none, the "
                         "experts' own mean (classical_mean) is the estimate")
    return (y, y_hat, y_hat_unlabeled, _weights(weights, len(y), "weights"),
            _weights(weights_unlabeled, len(y_hat_unlabeled), "weights_unlabeled"))


def _values(values: ArrayLike, what: str) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"the {what} must be a flat list of numbers")
    if not np.isfinite(x).all():
        raise ValueError(f"the {what} contain a missing or infinite value; leave such "
                         "responses out")
    return x


def _weights(weights: ArrayLike | None, n: int, what: str) -> np.ndarray:
    """Inclusion weights rescaled to mean 1 (ppi_py's ``construct_weight_vector``); all 1
    when none are given."""
    if weights is None:
        return np.ones(n)
    w = _values(weights, what)
    if len(w) != n:
        raise ValueError(f"{len(w)} {what} for {n} responses")
    if n and (w <= 0).any():
        raise ValueError(f"the {what} must all be positive (1 / inclusion probability)")
    return w / w.sum() * n if n else w
