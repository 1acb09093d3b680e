"""Prediction-powered inference of a mean (PPI++): pure functions on numpy arrays, the numbers behind ``eb.ppi``.

Every item (a query, or a judged pair) has a judge's value ``f`` (the metric under the LLM's labels); a random
sample of ``n`` of the ``N`` items also has the human value ``y``. The power-tuned estimate of the mean of ``y``
(Angelopoulos, Duchi and Zrnic, "PPI++: Efficient Prediction-Powered Inference", 2023; the mean of
Angelopoulos et al., "Prediction-powered inference", Science 2023, when ``weight = 1``)::

    estimate = weight * mean(f over all N) + mean(y - weight * f over the n)
    se^2     = var(weight * f over all N) / N + var(y - weight * f over the n) / n      (variances divided by N, n)
    weight   = cov(y, f over the n) / ((1 + n / N) var(f over the n and the N together)), clipped to [0, 1]

the interval ``estimate -+ z se`` (normal quantile), its two-sided p-value against 0 from the same z. ``weight``
0 is the human sample alone, 1 plain PPI: the power-tuned weight is the variance-minimising one, so the
interval is never (asymptotically) wider than the human sample's. The unlabelled set is every item the judge
labelled, the sampled ones included (the judge-only number is the judge's mean over all items).

The classical interval (:func:`classical_mean`) is Student's t on the human sample alone (scipy's
``ttest_1samp(y).confidence_interval``). :func:`labels_needed` inverts the variance: with the weight tuned, the
variance at ``n`` labels is ``var(y) / n * (1 - rho^2 N / (N + n))`` (``rho`` the correlation of ``y`` and ``f``
on the sample; :func:`ppi_variance`), so the human labels needed for a target variance follow with and without the
judge.

Example:
    >>> import numpy as np
    >>> f = np.array([0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0])
    >>> e = ppi_mean(np.array([0.0, 1.0, 0.0, 0.0]), f[:4], f)
    >>> round(e.estimate, 4), round(e.weight, 4)      # ppi_py.ppi_mean_pointestimate: 0.2893
    (0.2893, 0.3143)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Estimate", "power_tuned_weight", "ppi_mean", "classical_mean", "ppi_variance", "labels_needed",
           "z_quantile", "MIN_LABELLED"]

#: the fewest labelled items an interval is computed from (a variance needs two)
MIN_LABELLED = 2


@dataclass(frozen=True)
class Estimate:
    """One estimated mean: the estimate, its interval at the confidence asked, its standard error, the weight
    given to the judge (``nan`` for the human sample alone) and the two-sided p-value of "the mean is 0"."""

    estimate: float
    low: float
    high: float
    se: float
    weight: float
    p: float


def z_quantile(confidence: float) -> float:
    """The normal quantile of a two-sided interval at ``confidence``: 1.96 at 0.95."""
    from scipy.special import ndtri

    return float(ndtri(0.5 + confidence / 2))


def _p_two_sided(estimate: float, se: float) -> float:
    from scipy.special import ndtr

    if se == 0:
        return 1.0 if estimate == 0 else 0.0
    return float(2 * ndtr(-abs(estimate) / se))


def power_tuned_weight(y: np.ndarray, f: np.ndarray, f_all: np.ndarray) -> float:
    """PPI++'s weight of the judge for a mean, clipped to [0, 1] (see the module docstring); 0 when the judge's
    values do not vary."""
    import numpy as np

    n, big_n = len(y), len(f_all)
    spread = float(np.var(np.concatenate([f, f_all]), ddof=1))
    if spread == 0 or n < MIN_LABELLED:
        return 0.0
    covariance = float(np.mean((y - y.mean()) * (f - f.mean())))
    return min(1.0, max(0.0, covariance / ((1 + n / big_n) * spread)))


def ppi_mean(y: np.ndarray, f: np.ndarray, f_all: np.ndarray, *, confidence: float = 0.95,
             weight: float | None = None) -> Estimate:
    """The prediction-powered estimate of the mean of ``y``: ``y`` and ``f`` the human and the judge's values of
    the labelled items (aligned), ``f_all`` the judge's values of every item; ``weight`` None: power-tuned."""
    import numpy as np

    lam = power_tuned_weight(y, f, f_all) if weight is None else weight
    rectifier = y - lam * f
    estimate = float(lam * f_all.mean() + rectifier.mean())
    se = math.sqrt(float(np.var(lam * f_all)) / len(f_all) + float(np.var(rectifier)) / len(y))
    half = z_quantile(confidence) * se
    return Estimate(estimate, estimate - half, estimate + half, se, lam, _p_two_sided(estimate, se))


def classical_mean(y: np.ndarray, *, confidence: float = 0.95) -> Estimate:
    """The mean of the human sample alone with Student's t interval (n - 1 degrees of freedom) and p-value."""
    import numpy as np
    from scipy.special import stdtr, stdtrit

    n = len(y)
    mean = float(y.mean())
    se = float(np.std(y, ddof=1)) / math.sqrt(n)
    if se == 0:
        return Estimate(mean, mean, mean, 0.0, math.nan, 1.0 if mean == 0 else 0.0)
    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * se
    return Estimate(mean, mean - half, mean + half, se, math.nan, float(2 * stdtr(n - 1, -abs(mean) / se)))


def ppi_variance(n: np.ndarray | float, *, var_y: float, cov: float, var_f: float, total: int) -> np.ndarray:
    """The variance of the power-tuned estimate with ``n`` human labels among ``total`` items, from the human
    values' variance ``var_y``, their covariance ``cov`` with the judge's and the judge's variance ``var_f``:
    ``(var_y - 2 w cov + w^2 var_f) / n + w^2 var_f / total`` at the tuned weight ``w = cov / ((1 + n / total)
    var_f)`` clipped to [0, 1] (unclipped: ``var_y / n * (1 - rho^2 total / (total + n))``)."""
    import numpy as np

    n = np.asarray(n, dtype=float)
    w = np.clip(cov / ((1 + n / total) * var_f), 0.0, 1.0) if var_f > 0 else np.zeros_like(n)
    return np.asarray((var_y - 2 * w * cov + w ** 2 * var_f) / n + w ** 2 * var_f / total)


def labels_needed(target_variance: float, *, var_y: float, cov: float = 0.0, var_f: float = 0.0,
                  total: int | None = None) -> int | None:
    """The fewest human labels (>= 2) whose estimate's variance is at most ``target_variance``: with the judge
    (``cov``, ``var_f`` as :func:`ppi_variance`, ``total`` the items it labelled) or, with ``var_f = 0``, the human
    sample alone (``total`` None: no bound on the sample). None when more than ``total`` labels would be needed."""
    if var_f == 0 or total is None:
        if target_variance <= 0:
            return None
        n = max(MIN_LABELLED, math.ceil(var_y / target_variance))
        while n > MIN_LABELLED and var_y / (n - 1) <= target_variance:    # the rounding of var_y / target
            n -= 1
        while var_y / n > target_variance:
            n += 1
        return None if total is not None and n > total else n

    def variance(m: int) -> float:
        return float(ppi_variance(m, var_y=var_y, cov=cov, var_f=var_f, total=total))

    if variance(MIN_LABELLED) <= target_variance:
        return MIN_LABELLED
    if variance(total) > target_variance:
        return None
    low, high = MIN_LABELLED, total          # variance(low) > target >= variance(high); decreasing in n
    while high - low > 1:
        middle = (low + high) // 2
        if variance(middle) <= target_variance:
            high = middle
        else:
            low = middle
    return high
