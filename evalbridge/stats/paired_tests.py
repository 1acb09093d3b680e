"""The paired tests of two systems' per-query values, the multiple-comparison corrections, effect size and
win / tie / loss, each one function, and the one rule of every comparison parameter.

The tests and corrections are tables (:data:`TESTS`, :data:`CORRECTIONS`) that :func:`evalbridge.compare` reads;
every random step is seeded and batched with bounded memory (:mod:`evalbridge.stats.resampling`).

Example:
    >>> base = {"q1": 0.2, "q2": 0.4, "q3": 0.1, "q4": 0.3}
    >>> new = {"q1": 0.5, "q2": 0.6, "q3": 0.2, "q4": 0.3}
    >>> win_tie_loss(list(new.values()), list(base.values()))
    (3, 1, 0)
    >>> holm([0.01, 0.04, 0.03, 0.005])
    [0.03, 0.06, 0.06, 0.02]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.parameters import Interval, OneOf, Rule, check_parameters, rule_table

if TYPE_CHECKING:
    import numpy as np

__all__ = ["paired_t_test", "randomization_test", "randomization_tests", "wilcoxon_test", "bootstrap_ci", "mean_ci",
           "holm", "benjamini_hochberg", "bonferroni", "effect_size", "win_tie_loss", "PairedTest", "Correction", "TESTS",
           "CORRECTIONS", "CI_METHODS", "COMPARISON_PARAMETERS", "check_comparison_parameters", "MAX_RESAMPLES",
           "check_finite"]

#: the most resamples accepted: the Monte-Carlo p-value is then within about +-0.0004 of the exact one at p = 0.05
MAX_RESAMPLES = 1_000_000


def _differences(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    x, y = np.asarray(a, dtype="float64"), np.asarray(b, dtype="float64")
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"paired values must be two lists of the same length; got {x.shape} and {y.shape}.",
                         fix="compare systems on the same queries, in the same order.")
    for side, values in (("first", x), ("second", y)):
        check_finite(values, f"values of the {side} list", lambda i: f"value {i}")
    return x, y, x - y


def check_finite(values: np.ndarray, whose: str, name: Callable[[int], str]) -> None:
    """Refuse NaN and infinite per-query values: a mean, a test or an interval over them means nothing
    (scipy's t-test gives p = 0 for an infinite difference, and the resampling tests count NaN as no change)."""
    import numpy as np

    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        count = int(np.count_nonzero(~finite))
        raise InputError(f"the {whose} include {count} value{'s' if count > 1 else ''} that {'are' if count > 1 else 'is'} "
                         f"not a finite number ({name(i)}: {float(values[i])!r}); no mean, test or interval is "
                         f"computed over them.",
                         fix="compare finite per-query values: drop the queries whose metric is undefined, or give "
                             "them a value (0.0 for a query with nothing relevant, as evaluate does).")


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test of ``a`` against ``b`` (:func:`scipy.stats.ttest_rel`).

    t = mean(d) / (sd(d) / sqrt(n)) with d = a - b and n - 1 degrees of freedom.
    When every difference is 0 the p-value is 1 (scipy returns nan); with fewer than
    two pairs it is nan.

    >>> round(paired_t_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3]), 4)
    0.0354
    """
    from scipy.stats import ttest_rel

    x, y, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant non-zero differences: t = +-inf, p = 0
        return float(ttest_rel(x, y).pvalue)


def randomization_test(a: Sequence[float], b: Sequence[float], *, n_resamples: int = 10_000,
                       seed: int = 0) -> float:
    """Two-sided p-value of Fisher's paired randomization test, scipy's ``permutation_test`` in batches.

    Under the null hypothesis the labels "a" and "b" of each query are exchangeable, so each
    pair is swapped at random (the sign of d_q = a_q - b_q flipped); the p-value is
    2 min(P(t <= t_obs), P(t >= t_obs)) over the swaps, t = mean of the signed d. With
    2^n <= ``n_resamples`` every swap is enumerated (exact test); otherwise ``n_resamples``
    random swaps are drawn from ``numpy.random.default_rng(seed)``: the same swaps and the same
    p-value as :func:`scipy.stats.permutation_test` (``permutation_type="samples"``), in
    bounded memory (:func:`evalbridge.stats.resampling.randomization_pvalues`). 1 when every
    difference is 0; nan with fewer than two pairs.

    >>> randomization_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3])
    0.125
    """
    from .resampling import randomization_pvalues

    settings = check_comparison_parameters(n_resamples=n_resamples, seed=seed)
    _, _, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    return float(randomization_pvalues(d[None, :], **settings)[0])


def randomization_tests(a: Any, b: Any, *, n_resamples: int = 10_000, seed: int = 0) -> list[float]:
    """:func:`randomization_test` of each row of ``a`` against the same row of ``b`` (two ``(p, n)`` arrays: p
    pairs over the same n queries), with one set of swaps for every row: the same p-values as row by row, the
    swaps drawn once.

    >>> randomization_tests([[0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3]], [[0.2, 0.4, 0.1, 0.3]] * 2)   # 2nd: no change
    [0.125, 1.0]
    """
    import numpy as np

    from .resampling import randomization_pvalues

    settings = check_comparison_parameters(n_resamples=n_resamples, seed=seed)
    x, y = np.asarray(a, dtype="float64"), np.asarray(b, dtype="float64")
    if x.shape != y.shape or x.ndim != 2:
        raise InputError(f"paired values must be two (pairs, queries) arrays of the same shape; got {x.shape} and "
                         f"{y.shape}.", fix="compare systems on the same queries, in the same order.")
    for side, values in (("first", x), ("second", y)):
        check_finite(values.ravel(), f"values of the {side} lists", lambda i: f"value {i % x.shape[1]}")
    d = x - y
    if d.shape[1] < 2:
        return [math.nan] * len(d)
    out = np.ones(len(d))
    moved = d.any(axis=1)
    if moved.any():
        out[moved] = randomization_pvalues(d[moved], **settings)
    return [float(p) for p in out]


def wilcoxon_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of ``a`` against ``b``, :func:`scipy.stats.wilcoxon`'s.

    The ranks of |d_q| (d = a - b, ties averaged) are summed over the positive d: W+. Zero
    differences (ties between the systems, frequent with metrics such as P@10) are left out
    before ranking (``zero_method="wilcox"``: Wilcoxon's rule, the default of scipy and of
    PyTerrier); the W/T/L counts say how many. scipy's ``method="auto"``: the exact
    distribution for up to 50 differences when none is 0 and no |d| is tied; with zeros or ties,
    every sign flip of the d (exact) for up to 13 queries, else the normal approximation. The
    13-query case is computed here with one matrix product over the 2^m sign patterns of the
    m non-zero d (scipy evaluates them one by one, about 3 s a pair); the p-value is scipy's
    (W+ is a sum of half-integer ranks, exact in floating point). 1 when every difference is 0;
    nan with fewer than two pairs.

    >>> round(wilcoxon_test([0.5, 0.6, 0.2, 0.8, 0.9], [0.2, 0.4, 0.1, 0.4, 0.1]), 4)   # all 5 positive: 2/32
    0.0625
    """
    import numpy as np
    from scipy.stats import rankdata, wilcoxon

    x, y, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    nonzero = d[d != 0]
    magnitude = np.abs(nonzero)
    if len(d) <= 13 and (len(nonzero) < len(d) or len(np.unique(magnitude)) < len(magnitude)):
        ranks = rankdata(magnitude)
        observed = float(ranks[nonzero > 0].sum())
        patterns = (np.arange(2 ** len(nonzero))[:, None] >> np.arange(len(nonzero))) & 1
        null = patterns @ ranks
        gamma = abs(np.finfo(np.float64).eps * 100 * observed)
        less = np.count_nonzero(null <= observed + gamma) / len(null)
        greater = np.count_nonzero(null >= observed - gamma) / len(null)
        return float(min(1.0, 2 * min(less, greater)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that the normal approximation is used for few values
        return float(wilcoxon(x, y, zero_method="wilcox", alternative="two-sided").pvalue)


def bootstrap_ci(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0, method: str = "BCa") -> tuple[float, float]:
    """Bootstrap confidence interval of mean(a - b) over paired queries, scipy's ``bootstrap`` in batches.

    Queries are resampled with replacement, keeping each pair together; ``method`` ``BCa``
    (bias-corrected and accelerated) or ``percentile``. The resamples are those of
    :func:`scipy.stats.bootstrap` (``paired=True``) with ``numpy.random.default_rng(seed)``, in
    bounded memory (:func:`evalbridge.stats.resampling.bootstrap_intervals`). When every
    difference is the same value c the interval is (c, c); with fewer than two pairs (nan, nan).

    >>> low, high = bootstrap_ci([0.5, 0.6, 0.2, 0.4, 0.3], [0.2, 0.4, 0.1, 0.3, 0.3], n_resamples=999)
    >>> bool(low < 0.16 < high)
    True
    """
    import numpy as np

    from .resampling import bootstrap_intervals

    settings = check_comparison_parameters(confidence=confidence, n_resamples=n_resamples, seed=seed,
                                           ci_method=method)
    x, y, _ = _differences(a, b)
    intervals = bootstrap_intervals(np.stack([x, y]), [(0, 1)], confidence=settings["confidence"],
                                    n_resamples=settings["n_resamples"], seed=settings["seed"],
                                    method=settings["ci_method"])
    return intervals[2]


def mean_ci(values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0,
            method: str = "BCa") -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of one system's per-query values.

    The resamples and the interval are those of ``scipy.stats.bootstrap((values,), numpy.mean)``
    with ``numpy.random.default_rng(seed)``, in bounded memory. (c, c) when every value is c;
    (nan, nan) with fewer than two values.

    >>> low, high = mean_ci([0.2, 0.4, 0.1, 0.3, 0.9, 0.5], n_resamples=999)
    >>> bool(low < 0.4 < high)
    True
    """
    import numpy as np

    from .resampling import bootstrap_intervals

    settings = check_comparison_parameters(confidence=confidence, n_resamples=n_resamples, seed=seed,
                                           ci_method=method)
    x = np.asarray(values, dtype="float64")
    if x.ndim != 1:
        raise InputError(f"expected one list of per-query values; got an array of shape {x.shape}.")
    return bootstrap_intervals(x[None, :], confidence=settings["confidence"], n_resamples=settings["n_resamples"],
                               seed=settings["seed"], method=settings["ci_method"])[0]


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error rate).

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m):
    adj_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j)); then back in the input order, each value the float
    product (no rounding: a p-value of 1e-20 adjusts to 4e-20, not 0), as statsmodels' ``multipletests``.
    A nan p-value is left out of the family and stays nan.

    >>> holm([0.01, 0.04, 0.03, 0.005])
    [0.03, 0.06, 0.06, 0.02]
    """
    values = list(map(float, pvalues))
    index = sorted((i for i, p in enumerate(values) if not math.isnan(p)), key=values.__getitem__)
    adjusted = list(values)
    running = 0.0
    for rank, i in enumerate(index):
        running = max(running, min(1.0, (len(index) - rank) * values[i]))
        adjusted[i] = running
    return adjusted


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), :func:`scipy.stats.false_discovery_control`.

    adj_(i) = min_{j >= i} min(1, m * p_(j) / j) over the ascending p-values. nan stays nan.

    >>> [round(p, 4) for p in benjamini_hochberg([0.01, 0.04, 0.03, 0.005])]
    [0.02, 0.04, 0.04, 0.02]
    """
    from scipy.stats import false_discovery_control

    values = list(map(float, pvalues))
    index = [i for i, p in enumerate(values) if not math.isnan(p)]
    adjusted = list(values)
    if index:
        for i, p in zip(index, false_discovery_control([values[i] for i in index], method="bh")):
            adjusted[i] = float(p)
    return adjusted


def bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Bonferroni adjusted p-values (family-wise error rate): adj_i = min(1, m * p_i), the float product (no
    rounding), as statsmodels' ``multipletests``.

    m counts the p-values that are not nan; nan stays nan.

    >>> bonferroni([0.01, 0.04, float("nan"), 0.25])
    [0.03, 0.12, nan, 0.75]
    """
    values = list(map(float, pvalues))
    m = sum(not math.isnan(p) for p in values)
    return [p if math.isnan(p) else min(1.0, m * p) for p in values]


def _no_correction(pvalues: Sequence[float]) -> list[float]:
    return list(map(float, pvalues))


def effect_size(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's d for paired samples, d_z = mean(d) / sd(d) with d = a - b and sd with n - 1.

    0 when every difference is 0; +-inf when every difference is the same non-zero value;
    nan with fewer than two pairs.

    >>> round(effect_size([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3]), 4)
    1.8278
    """
    import numpy as np

    _, _, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    mean, sd = float(d.mean()), float(np.std(d, ddof=1))
    if sd == 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / sd


def win_tie_loss(a: Sequence[float], b: Sequence[float], *, tolerance: float = 0.0) -> tuple[int, int, int]:
    """Queries where ``a`` beats, ties (|a - b| <= ``tolerance``) and loses to ``b``.

    >>> win_tie_loss([0.5, 0.3, 0.1], [0.2, 0.3, 0.4])
    (1, 1, 1)
    """
    _, _, d = _differences(a, b)
    wins, losses = int((d > tolerance).sum()), int((d < -tolerance).sum())
    return wins, len(d) - wins - losses, losses


@dataclass(frozen=True)
class PairedTest:
    """A paired significance test: its title, the row field holding its p-value, one pair's p-value."""

    title: str
    field: str
    pvalue: Callable[[Sequence[float], Sequence[float], int, int], float]
    #: the p-values of many pairs over the same queries at once (rows of two (pairs, queries) arrays), the same
    #: numbers as ``pvalue`` row by row; None: ``pvalue`` row by row (a test that resamples draws once instead)
    together: Callable[[Any, Any, int, int], list[float]] | None = None

    def pvalues(self, a: Any, b: Any, n_resamples: int, seed: int) -> list[float]:
        """The p-value of each row of ``a`` against the same row of ``b`` (pairs over the same queries)."""
        if self.together is not None:
            return self.together(a, b, n_resamples, seed)
        return [self.pvalue(x, y, n_resamples, seed) for x, y in zip(a, b)]


@dataclass(frozen=True)
class Correction:
    """A multiple-comparison correction: its title and the adjusted p-values of a family."""

    title: str
    adjust: Callable[[Sequence[float]], list[float]]


#: test name -> the test (each pair's p-value of each test is in the rows; this one decides significance)
TESTS: Mapping[str, PairedTest] = {
    "t": PairedTest("paired t-test", "p_t", lambda a, b, n_resamples, seed: paired_t_test(a, b)),
    "randomization": PairedTest("Fisher randomization test", "p_randomization",
                                lambda a, b, n_resamples, seed: randomization_test(a, b, n_resamples=n_resamples,
                                                                                   seed=seed),
                                lambda a, b, n_resamples, seed: randomization_tests(a, b, n_resamples=n_resamples,
                                                                                    seed=seed)),
    "wilcoxon": PairedTest("Wilcoxon signed-rank test", "p_wilcoxon",
                           lambda a, b, n_resamples, seed: wilcoxon_test(a, b)),
}
#: correction name -> the correction, applied over every (pair, metric) compared
CORRECTIONS: Mapping[str, Correction] = {
    "holm": Correction("Holm-corrected", holm),
    "bh": Correction("Benjamini-Hochberg-corrected", benjamini_hochberg),
    "bonferroni": Correction("Bonferroni-corrected", bonferroni),
    "none": Correction("uncorrected", _no_correction),
}
#: bootstrap interval methods (see :func:`evalbridge.stats.resampling.bootstrap_intervals`)
CI_METHODS = ("BCa", "percentile")

#: One rule per comparison parameter, shared by the Python API, the CLI and the config file:
#: ``COMPARISON_PARAMETERS["alpha"].check(value, source=path, line=n, key="comparison.alpha")``
#: returns the value or raises :class:`~evalbridge.errors.InputError`; ``.default`` and
#: ``.describe()`` give the default and the accepted values for help texts.
COMPARISON_PARAMETERS: Mapping[str, Rule] = rule_table(
    OneOf("test", tuple(TESTS), default="t"),
    OneOf("correction", tuple(CORRECTIONS), default="holm"),
    Interval("alpha", float, 0, 1, closed="neither", default=0.05,
             fix="the significance level is a probability, e.g. 0.05 or 0.01."),
    Interval("confidence", float, 0, 1, closed="neither", default=0.95,
             fix="the confidence level is a probability, e.g. 0.95."),
    Interval("n_resamples", int, 1, MAX_RESAMPLES, closed="both", default=10_000,
             fix=f"10000 resamples give a p-value within about +-0.004 of the exact one at p = 0.05; "
                 f"{MAX_RESAMPLES} (the most accepted) within about +-0.0004."),
    Interval("seed", int, 0, None, closed="left", default=0, fix="use a whole number such as 0 or 42."),
    OneOf("ci_method", CI_METHODS, default="BCa"),
)


def check_comparison_parameters(**values: Any) -> dict[str, Any]:
    """Check the given comparison parameters with :data:`COMPARISON_PARAMETERS` (converted values back).

    >>> check_comparison_parameters(alpha=0.01, n_resamples=1000)
    {'alpha': 0.01, 'n_resamples': 1000}
    >>> check_comparison_parameters(n_resamples=10 ** 12)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: n_resamples must be an integer in [1, 1000000]; got 1000000000000. Fix: ...
    """
    return check_parameters(COMPARISON_PARAMETERS, values)
