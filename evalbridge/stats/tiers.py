"""Tiers and rank intervals of many systems: simultaneous tests of all pairs, tiers no test separates, rank intervals.

For one metric, a ``scores`` matrix (m systems x n queries, every system on the same queries) is read three ways,
each controlling the family-wise error over all m(m - 1) / 2 pairs at once (:data:`TIER_METHODS`):

* ``randomization``: the randomised Tukey HSD (Carterette, "Multiple testing in statistical analysis of
  systems-based information retrieval experiments", TOIS 2012). Under the null hypothesis that no system differs,
  the m values of each query are exchangeable: each resample shuffles them across the systems, query by query
  (``rng.permuted(scores, axis=0)``, ``rng = numpy.random.default_rng`` of the first child of
  ``SeedSequence(seed)``), and records the range of the shuffled means, max - min. The p-value of a pair is the share
  of resamples whose range reaches the pair's observed |difference of means|, counted as scipy's
  ``permutation_test`` counts (the observed arrangement is one of the arrangements: (1 + hits) / (1 + resamples));
* ``bootstrap``: the bootstrap of the maximum statistic. Each resample draws n queries with replacement (the
  second child of ``SeedSequence(seed)``) and records the range of the centred means, max_i (mean*_i - mean_i) -
  min_i (mean*_i - mean_i): the largest deviation of any pair's difference from its observed value. The p-value
  is counted the same way (single-step max-T, Westfall and Young's, unstudentised like Tukey's range);
* ``tukey``: Tukey's HSD, the studentized range q = |difference| / sqrt(V_E / n) with V_E the residual mean square
  of the two-way ANOVA without replication (systems x queries, (m - 1)(n - 1) degrees of freedom; Sakai's
  "Statistical Reform in Information Retrieval?" and his book use it so), p = P(Q_{m, df} >= q) by
  :data:`scipy.stats.studentized_range` (about 30 ms a pair with finite df: meant for a handful of systems).

Each p-value depends on the pair only through its |difference of means|, so with the systems ordered by mean
the pairs no test separates (p > alpha) form runs: a **tier** is a maximal run of consecutive systems, no two of them
separated; tiers are named a, b, c, ... from the best and each system shows the letters of the tiers it belongs to
(a compact letter display: two systems share a letter exactly when no test separates them).

Each system's **rank interval** comes from the bootstrap over queries (the same resamples as ``bootstrap``, drawn
for every method): on each resample the systems are ranked by mean (1 = best; means equal to 12 significant digits
share the best of their places), and the interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2``
quantiles of each system's ranks (``numpy.quantile(..., method="inverted_cdf")``: ranks that occurred).

This module is the numeric core (:func:`hsd_pvalues`, :func:`tiers_of`, :func:`rank_intervals`: numpy arrays in and
out); :func:`evalbridge.decisions.tiers.tiers` reads per-query values into these matrices and returns a ``Tiers``.

Example:
    >>> import numpy as np
    >>> scores = np.array([[0.9, 0.8, 0.7, 0.9], [0.5, 0.4, 0.6, 0.5], [0.5, 0.5, 0.5, 0.4]])
    >>> p = hsd_pvalues(scores, method="tukey")
    >>> tiers_of(scores.mean(axis=1), p, alpha=0.05)
    ('a', 'b', 'b')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..common.parameters import OneOf, Rule, check_parameters, rule_table
from ..errors import InputError
from .paired_tests import COMPARISON_PARAMETERS, check_finite

if TYPE_CHECKING:
    import numpy as np

__all__ = ["TIER_METHODS", "TIERS_PARAMETERS", "letter", "two_way_residual", "hsd_pvalues", "bootstrap_means",
           "tiers_of", "rank_intervals", "min_ranks", "by_mean"]

#: the simultaneous tests of all pairs (see the module docstring; :mod:`evalbridge.views.tiers` titles them)
TIER_METHODS = ("randomization", "bootstrap", "tukey")

#: One rule per parameter of :func:`tiers` (alpha, confidence, n_resamples and seed are the comparison's rules).
TIERS_PARAMETERS: Mapping[str, Rule] = rule_table(
    OneOf("method", TIER_METHODS, default="randomization"),
    *(COMPARISON_PARAMETERS[name] for name in ("alpha", "confidence", "n_resamples", "seed")),
)

#: relative tolerance under which a resample's range counts as reaching an observed difference (scipy's
#: permutation_test uses the same idea: the same number summed in another order must count)
_TOLERANCE = 1e-12
#: the most query indices one batch of bootstrap resamples holds (bounded memory: 32 MiB of int64)
_BATCH = 1 << 22


def letter(i: int) -> str:
    """a, b, ..., z, aa, ab, ... (the letter of the i-th system, or tier, from 0)."""
    return letter(i // 26 - 1) + chr(ord("a") + i % 26) if i >= 26 else chr(ord("a") + i)


def _matrix(scores: Any) -> np.ndarray:
    """``scores`` as a float64 (systems, queries) matrix of finite values, at least two of each."""
    import numpy as np

    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2:
        raise InputError(f"tiers read a (systems, queries) matrix; got an array of shape {x.shape}.",
                         fix="give one row per system, one column per query.")
    m, n = x.shape
    if m < 2:
        raise InputError(f"tiers compare two systems or more; got {m}.", fix="give every system to compare.")
    if n < 2:
        raise InputError(f"tiers need two queries or more (the queries are what is resampled); got {n}.",
                         fix="compare the systems on more queries.")
    check_finite(x.ravel(), "per-query values", lambda i: f"system {i // n}, query {i % n}")
    return x


def two_way_residual(scores: Any) -> tuple[float, int]:
    """V_E, the residual mean square of the two-way ANOVA without replication (systems x queries), and its degrees
    of freedom (m - 1)(n - 1): sum of (x_iq - mean_i - mean_q + mean)^2 / df.

    >>> v, df = two_way_residual([[0.7, 0.3, 0.2], [0.5, 0.1, 0.0], [0.0, 0.0, 0.2]])
    >>> round(v, 4), df
    (0.0411, 4)
    """
    x = _matrix(scores)
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    df = (x.shape[0] - 1) * (x.shape[1] - 1)
    return float((residual ** 2).sum() / df), df


def _children(seed: int) -> tuple[Any, Any]:
    """The generators of the permutations and of the bootstrap: the two children of ``SeedSequence(seed)``."""
    import numpy as np

    first, second = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(first), np.random.default_rng(second)


def bootstrap_means(scores: Any, *, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, systems): each system's mean on each bootstrap resample of the queries. Resample b draws n
    query indices from the second child of ``SeedSequence(seed)`` (``rng.integers(0, n, size=(n_resamples, n))``,
    drawn in batches that continue one stream); the means are the counts of each query times the scores, one BLAS
    product a batch."""
    import numpy as np

    x = _matrix(scores)
    m, n = x.shape
    _, rng = _children(seed)
    out = np.empty((n_resamples, m))
    step = max(1, min(n_resamples, _BATCH // n))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        drawn = rng.integers(0, n, size=(rows, n))
        drawn += (np.arange(rows) * n)[:, None]
        counts = np.bincount(drawn.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
        out[start:start + rows] = counts @ x.T
    out /= n
    return out


def _counted(ranges: np.ndarray, differences: np.ndarray) -> np.ndarray:
    """(1 + resamples whose range reaches each |difference|) / (1 + resamples), ``differences`` of any shape."""
    import numpy as np

    wanted = np.abs(differences) * (1 - _TOLERANCE)
    ordered = np.sort(ranges)
    hits = len(ordered) - np.searchsorted(ordered, wanted.ravel(), side="left")
    out: np.ndarray = ((1 + hits) / (1 + len(ordered))).reshape(differences.shape)
    return out


def _randomization_ranges(x: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    import numpy as np

    rng, _ = _children(seed)
    n = x.shape[1]
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        means = rng.permuted(x, axis=0).sum(axis=1) / n
        out[b] = means.max() - means.min()
    return out


def hsd_pvalues(scores: Any, *, method: str = "randomization", n_resamples: int = 10_000, seed: int = 0,
                boot: np.ndarray | None = None) -> np.ndarray:
    """The (systems, systems) matrix of p-values of every pair by ``method`` (a key of :data:`TIER_METHODS`; see the
    module docstring), 1 on the diagonal. ``boot``: the :func:`bootstrap_means` of the same scores, seed and
    resamples when already drawn (``bootstrap`` reads them)."""
    import numpy as np

    x = _matrix(scores)
    checked = check_parameters(TIERS_PARAMETERS, {"method": method, "n_resamples": n_resamples, "seed": seed})
    means = x.mean(axis=1)
    differences = means[:, None] - means[None, :]
    if checked["method"] == "tukey":
        from scipy.stats import studentized_range

        variance, df = two_way_residual(x)
        m, n = x.shape
        p = np.ones((m, m))
        upper = np.triu_indices(m, 1)
        d = np.abs(differences[upper])
        if variance <= 0:   # no residual at all: every difference is exact, any non-zero one is separated
            p[upper] = np.where(d > _TOLERANCE * np.abs(means).max(), 0.0, 1.0)
        else:
            q = d / math.sqrt(variance / n)
            p[upper] = np.clip(studentized_range.sf(q, m, df), 0.0, 1.0)
        p.T[upper] = p[upper]
        return p
    if checked["method"] == "bootstrap":
        drawn = boot if boot is not None else bootstrap_means(x, n_resamples=checked["n_resamples"],
                                                              seed=checked["seed"])
        centred = drawn - means[None, :]
        ranges = centred.max(axis=1) - centred.min(axis=1)
    else:
        ranges = _randomization_ranges(x, checked["n_resamples"], checked["seed"])
    p = _counted(ranges, differences)
    np.fill_diagonal(p, 1.0)
    return p


def by_mean(means: np.ndarray) -> np.ndarray:
    """The systems' positions from the highest mean (equal means in the order given)."""
    import numpy as np

    return np.argsort(-means, kind="stable")


def tiers_of(means: Any, pvalues: Any, *, alpha: float = 0.05) -> tuple[str, ...]:
    """Each system's tier letters (compact letter display) from its mean and the pairs' p-values (separated: p <=
    alpha): with the systems ordered by mean, every maximal run of consecutive systems no two of which are separated
    is a tier, lettered a, b, ... from the best; a system shows the letters of its tiers (comma-separated when there
    are more than 26 tiers, whose letters have two characters).

    >>> tiers_of([0.5, 0.4, 0.3], [[1, 0.2, 0.01], [0.2, 1, 0.3], [0.01, 0.3, 1]])
    ('a', 'ab', 'b')
    """
    import numpy as np

    mu = np.asarray(means, dtype=np.float64)
    separated = np.asarray(pvalues, dtype=np.float64) <= alpha
    m = len(mu)
    order = by_mean(mu)
    apart = separated[np.ix_(order, order)]
    # ends[i]: the last position of the longest run from i in which no two systems are separated
    ends = np.empty(m, dtype=np.int64)
    for i in range(m):
        j = i
        while j + 1 < m and not apart[i:j + 1, j + 1].any():
            j += 1
        ends[i] = j
    runs = [(i, int(ends[i])) for i in range(m) if i == 0 or ends[i] > ends[i - 1]]
    names = [letter(t) for t in range(len(runs))]
    glue = "" if len(runs) <= 26 else ","
    by_position = [glue.join(names[t] for t, (first, last) in enumerate(runs) if first <= k <= last) for k in range(m)]
    out = [""] * m
    for k, system in enumerate(order.tolist()):
        out[system] = by_position[k]
    return tuple(out)


def min_ranks(means: Any) -> np.ndarray:
    """Each row's ranks (1 = the highest value; values equal to 12 significant digits share the best of their
    places: 1 + the number of values above), rows of any count."""
    import numpy as np

    values = np.atleast_2d(np.asarray(means, dtype=np.float64))
    rows, m = values.shape
    order = np.argsort(-values, axis=1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=1)
    scale = np.maximum(np.abs(ordered[:, :-1]), np.abs(ordered[:, 1:]))
    starts = np.ones((rows, m), dtype=bool)
    starts[:, 1:] = (ordered[:, :-1] - ordered[:, 1:]) > _TOLERANCE * scale
    first = np.maximum.accumulate(np.where(starts, np.arange(m), 0), axis=1)
    ranks = np.empty((rows, m), dtype=np.int64)
    np.put_along_axis(ranks, order, first + 1, axis=1)
    return ranks


def rank_intervals(boot: Any, *, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """(low, high): each system's rank interval from its ranks over the bootstrap means ``boot`` (resamples,
    systems): the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles, ``method="inverted_cdf"``."""
    import numpy as np

    ranks = min_ranks(boot)
    low, high = np.quantile(ranks, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0, method="inverted_cdf")
    return low.astype(np.int64), high.astype(np.int64)
