"""How two orderings of the same items agree: Kendall's tau (scipy, and tau_b in numpy) and the AP correlation tau_ap.

One home for what compares two rankings of systems (or of the documents two runs share, per query, in
:mod:`evalbridge.stats.similarity`), used by the agreement of two sets of judgements
(:mod:`evalbridge.evalsets.agreement`), by what new judgements changed (:mod:`evalbridge.evalsets.changes`) and by
the diagnostics of a test collection (swap rates, leave-one-run-out). Each function takes two score lists
of the same systems (their means under two conditions), highest first. Scores equal to 12 significant digits
are tied: two systems whose means differ only by floating-point rounding (the same sum added in another order)
are not ordered by that rounding.

Example:
    >>> round(kendall_tau([4, 3, 2, 1], [3, 4, 2, 1])[0], 4), round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4)
    (0.6667, 0.3333)
    >>> ranking(["bm25", "splade", "rm3"], [0.48, 0.73, 0.52])
    ('splade', 'rm3', 'bm25')
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

from ..errors import InputError

__all__ = ["kendall_tau", "tau_b", "tau_ap", "ranking", "settled"]

DIGITS = 12


def settled(scores: Sequence[float]) -> list[float]:
    """The scores to :data:`DIGITS` significant digits, the precision at which two means are told apart."""
    return [float(f"{float(v):.{DIGITS}g}") for v in scores]


def kendall_tau(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Kendall's tau-b between two score lists and its two-sided p-value (:func:`scipy.stats.kendalltau`);
    nan (both) when either side is constant or has fewer than two items."""
    from scipy.stats import kendalltau

    if len(a) != len(b):
        raise InputError(f"Kendall's tau compares two score lists of the same length; got {len(a)} and {len(b)}.")
    if len(a) < 2:
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # constant input: scipy warns and returns nan
        result = kendalltau(settled(a), settled(b))
    return float(result.statistic), float(result.pvalue)


def tau_b(a: Sequence[float], b: Sequence[float]) -> float:
    """Kendall's tau-b of two score lists (scipy's statistic without its p-value), in numpy over every pair: the
    concordant minus the discordant pairs over sqrt((pairs - ties in a) (pairs - ties in b)); nan with fewer than
    two items or when either side is constant. For the many short lists of a diff's queries (one per query), where
    scipy's call costs more than the pairs.

    >>> round(tau_b([4, 3, 2, 1], [3, 4, 2, 1]), 4), round(tau_b([1, 1, 2], [1, 2, 3]), 4)
    (0.6667, 0.8165)
    """
    import numpy as np

    x, y = np.asarray(settled(a), dtype="float64"), np.asarray(settled(b), dtype="float64")
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"Kendall's tau compares two score lists of the same length; got {x.shape} and {y.shape}.")
    n = len(x)
    if n < 2:
        return math.nan
    upper = np.triu_indices(n, k=1)
    sx, sy = np.sign(x[:, None] - x[None, :])[upper], np.sign(y[:, None] - y[None, :])[upper]
    pairs = n * (n - 1) / 2
    untied = (pairs - float(np.count_nonzero(sx == 0))) * (pairs - float(np.count_nonzero(sy == 0)))
    return float(np.dot(sx, sy)) / math.sqrt(untied) if untied > 0 else math.nan


def tau_ap(truth: Sequence[float], estimate: Sequence[float], *, symmetric: bool = False) -> float:
    """AP rank correlation (Yilmaz, Aslam & Robertson, SIGIR 2008) of the orderings of two score lists.

    Items are ordered by score, highest first. Walking down the ordering by ``estimate``, C(i) counts the
    items above rank i that ``truth`` also puts above the item at rank i:

        tau_ap = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1)  -  1

    Kendall's tau (without ties) is 2 sum C(i) / sum (i - 1) - 1: the same per-rank shares C(i) / (i - 1),
    weighted by the i - 1 pairs each rank holds. tau_ap weighs every rank alike, so the few pairs near the
    top count as much as the many near the bottom: swapping ranks k and k+1 gives tau_ap = 1 - 2 / (k (N - 1))
    against tau = 1 - 4 / (N (N - 1)) wherever the swap is. It is asymmetric (``truth`` judges the
    ``estimate``); ``symmetric=True`` averages both directions.

    Ties, as Urbano & Marrero (ICTIR 2017) do for tau_AP_b: the items tied in ``estimate`` are not
    compared with each other, i - 1 becomes the number of items strictly above the item's tie group,
    an item in the top group has no term and the sum is averaged over the others; a pair tied in
    ``truth`` but ordered in ``estimate`` is not counted as correct. Without ties this is the formula
    above; identical orderings give 1 and reversed ones -1, ties or not. nan with fewer than two items
    or when ``estimate`` ties them all.

    >>> round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4)  # top two swapped: C(i) = 0, 2, 3 of 1, 2, 3 above
    0.3333
    >>> round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 4)  # bottom two swapped: C(i) = 1, 2, 2 of 1, 2, 3
    0.7778
    """
    import numpy as np

    x, y = np.asarray(settled(truth), dtype="float64"), np.asarray(settled(estimate), dtype="float64")
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"tau_ap compares two score lists of the same length; got {x.shape} and {y.shape}.")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise InputError("tau_ap needs finite scores.")
    if symmetric:
        return (tau_ap(truth, estimate) + tau_ap(estimate, truth)) / 2
    above = y[None, :] > y[:, None]  # above[i, j]: j is strictly above i in the estimate
    correct = above & (x[None, :] > x[:, None])
    n_above = above.sum(axis=1)
    ranked = n_above > 0
    if not ranked.any():
        return math.nan
    return float(2 * np.mean(correct.sum(axis=1)[ranked] / n_above[ranked]) - 1)


def ranking(systems: Sequence[str], means: Sequence[float]) -> tuple[str, ...]:
    """The systems by mean, best first; equal means (to :data:`DIGITS` digits) keep the order given (a nan mean
    goes last)."""
    if len(systems) != len(means):
        raise InputError(f"{len(systems)} systems and {len(means)} means: one mean per system.")
    values = settled(means)
    order = sorted(range(len(systems)), key=lambda i: (math.isnan(values[i]), 0.0 if math.isnan(values[i])
                                                       else -values[i]))
    return tuple(systems[i] for i in order)
