"""How well a matrix of per-query values (systems x queries) tells the systems apart: discriminative power and swap rate.

* **discriminative power** (Sakai 2006): the share of system pairs whose difference is significant under
  the chosen paired test and correction (:mod:`evalbridge.stats.paired_tests`' tests and corrections);
* **swap rate** (Voorhees and Buckley 2002): the queries are split at random into two disjoint halves,
  ``trials`` times; a swap is a pair of systems ordered one way by one half and the other way by the other;
  the rate by the size of the difference says how large a difference this many queries can be trusted on.

:func:`evalbridge.diagnose` computes both over the values of the runs it evaluates; both read only the matrix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .paired_tests import CORRECTIONS, TESTS

if TYPE_CHECKING:
    import numpy as np

__all__ = ["discriminative_power", "swap_rate", "ranks", "settled", "DiscriminativePower", "SwapRate", "SwapBin",
           "SWAP_EDGES", "STABLE_SWAP_RATE"]

#: edges of the bins of |difference in one half| the swap rate is reported by
SWAP_EDGES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)
#: the largest swap rate a difference is called stable at
STABLE_SWAP_RATE = 0.05

@dataclass(frozen=True)
class DiscriminativePower:
    """Of ``pairs`` system pairs, ``significant`` differ at ``alpha`` under ``test`` with ``correction``."""

    test: str
    correction: str
    alpha: float
    pairs: int
    significant: int

    @property
    def share(self) -> float:
        return self.significant / self.pairs if self.pairs else math.nan


@dataclass(frozen=True)
class SwapBin:
    """Comparisons whose difference in the first half is in [low, high), and how many of them swapped."""

    low: float
    high: float
    comparisons: int
    swaps: int

    @property
    def rate(self) -> float:
        return self.swaps / self.comparisons if self.comparisons else math.nan


@dataclass(frozen=True)
class SwapRate:
    """Over ``trials`` random splits into two halves of ``half`` queries, ``swaps`` of ``comparisons``
    (pair, trial) ordered the pair one way in one half and the other way in the other.

    ``stable_delta``: the smallest bin edge from which on every bin swapped in at most 5% of its
    comparisons (None: not even the largest differences did)."""

    trials: int
    seed: int
    half: int
    comparisons: int
    swaps: int
    bins: tuple[SwapBin, ...]
    stable_delta: float | None

    @property
    def rate(self) -> float:
        return self.swaps / self.comparisons if self.comparisons else math.nan


def discriminative_power(values: np.ndarray, *, test: str, correction: str, alpha: float, n_resamples: int,
                         seed: int) -> DiscriminativePower:
    """Sakai's discriminative power of the rows of ``values`` (systems x queries)."""
    import numpy as np

    n = values.shape[0]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return DiscriminativePower(test, correction, alpha, 0, 0)
    if test == "randomization":  # every pair at once, as compare does (same signs for every pair)
        from .resampling import randomization_pvalues

        d = np.stack([values[i] - values[j] for i, j in pairs])
        p = randomization_pvalues(d, n_resamples=n_resamples, seed=seed)
        p[~d.any(axis=1)] = 1.0
        pvalues = [float(x) for x in p] if values.shape[1] >= 2 else [math.nan] * len(pairs)
    elif test == "t":
        pvalues = _t_pvalues(values, pairs)
    else:
        chosen = TESTS[test]
        pvalues = [chosen.pvalue(values[i], values[j], n_resamples, seed) for i, j in pairs]
    adjusted = CORRECTIONS[correction].adjust(pvalues)
    return DiscriminativePower(test, correction, alpha, len(pairs), sum(bool(p <= alpha) for p in adjusted))


def _t_pvalues(values: np.ndarray, pairs: list[tuple[int, int]]) -> list[float]:
    """:func:`~evalbridge.decisions.compare.paired_t_test` of every pair, scipy's ``ttest_rel`` over a batch of pairs at
    a time (the same operations along the query axis): 1 where every difference is 0, nan with fewer than 2."""
    import warnings as _w

    import numpy as np
    from scipy.stats import ttest_rel

    n = values.shape[1]
    if n < 2:
        return [math.nan] * len(pairs)
    out: list[float] = []
    first, second = (np.array(side, dtype=np.int64) for side in zip(*pairs))
    step = max(1, (64 * 2 ** 20) // (8 * 3 * n))
    for start in range(0, len(pairs), step):
        x, y = values[first[start:start + step]], values[second[start:start + step]]
        with _w.catch_warnings():
            _w.simplefilter("ignore", RuntimeWarning)  # constant non-zero differences: t = +-inf, p = 0
            p = np.asarray(ttest_rel(x, y, axis=1).pvalue, dtype=np.float64)
        p[~(x != y).any(axis=1)] = 1.0
        out.extend(p.tolist())
    return out


def swap_rate(values: np.ndarray, *, trials: int, seed: int, edges: tuple[float, ...] = SWAP_EDGES) -> SwapRate:
    """Voorhees and Buckley's swap rate of the rows of ``values`` (systems x queries) over random halves."""
    import numpy as np

    n_systems, n = values.shape
    half = n // 2
    first, second = np.triu_indices(n_systems, k=1)
    if half == 0 or len(first) == 0:
        return SwapRate(trials, seed, half, 0, 0, (), None)
    rng = np.random.default_rng(seed)
    counts, swaps = np.zeros(len(edges), np.int64), np.zeros(len(edges), np.int64)
    columns = np.ascontiguousarray(values.T)
    scale = max(1.0, float(np.abs(values).max()))
    step = max(1, (32 * 2 ** 20) // (8 * n))  # trials per batch: a (batch, queries) split matrix in 32 MiB
    for start in range(0, trials, step):
        batch = min(step, trials - start)
        order = rng.permuted(np.tile(np.arange(n), (batch, 1)), axis=1)
        split = np.zeros((batch, n))
        np.put_along_axis(split, order[:, :half], 1.0, axis=1)
        other = np.zeros((batch, n))
        np.put_along_axis(other, order[:, half:2 * half], 1.0, axis=1)
        mean_a, mean_b = split @ columns / half, other @ columns / half
        d_a, d_b = (settled(m[:, first] - m[:, second], scale) for m in (mean_a, mean_b))
        swapped = d_a * d_b < 0
        where = np.searchsorted(edges, np.abs(d_a), side="right") - 1
        counts += np.bincount(where.ravel(), minlength=len(edges))
        swaps += np.bincount(where[swapped], minlength=len(edges))
    bins = tuple(SwapBin(low, high, int(c), int(s))
                 for low, high, c, s in zip(edges, (*edges[1:], math.inf), counts.tolist(), swaps.tolist()))
    rates = [(edge, s / c) for edge, c, s in zip(edges, counts.tolist(), swaps.tolist()) if c]
    stable = [edge for k, (edge, _) in enumerate(rates) if all(r <= STABLE_SWAP_RATE for _, r in rates[k:])]
    return SwapRate(trials, seed, half, int(counts.sum()), int(swaps.sum()), bins, stable[0] if stable else None)


def settled(differences: np.ndarray, scale: float) -> np.ndarray:
    """Differences of means with the rounding of the summation order taken out: within 1e-12 of the values'
    scale is a tie (two systems whose per-query values sum alike are not ordered by the last bit)."""
    import numpy as np

    return np.where(np.abs(differences) <= 1e-12 * scale, 0.0, differences)


def ranks(means: np.ndarray) -> np.ndarray:
    """Rank of each system by its mean, 1 = best (ties, rounding aside, share the best rank)."""
    import numpy as np

    scale = max(1.0, float(np.abs(means).max())) if len(means) else 1.0
    return np.array([1 + int(np.count_nonzero(settled(means - m, scale) > 0)) for m in means.tolist()],
                    dtype=np.int64)

