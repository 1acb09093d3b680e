"""Fisher's randomization test and bootstrap intervals in batches: memory bounded, scipy's numbers.

:func:`scipy.stats.permutation_test` and :func:`scipy.stats.bootstrap` (``vectorized=True``)
hold an ``n_resamples x n_queries`` array, and BCa's jackknife an ``n x n`` one: 3.6 GB for
one metric at 5,000 queries, terabytes when ``n_resamples`` is large. Here the resamples are
drawn and reduced in batches of ``B`` rows, with ``B`` chosen so that a batch's arrays fit in
``memory`` bytes (:data:`DEFAULT_MEMORY`); only the ``n_resamples`` bootstrap means of each
column are kept (and nothing for the randomization test, whose p-value is a count).

Same numbers as scipy. For a seed, each function draws the random numbers scipy draws with
``rng=numpy.random.default_rng(seed)``, in the same order, and reduces them with the same
floating-point operations, so on any input that fits scipy's way the results are scipy's:

* randomization (``permutation_type="samples"``, statistic mean(x - y)): scipy swaps each pair
  with ``rng.permuted`` on ``[0, 1]``, which takes one 32-bit draw per (resample, query) and
  swaps when it is even; here the same draws come from ``rng.integers(0, 2**32, dtype=uint32)``
  (the tests check both against each other and against scipy). scipy's statistic of a resample is the
  sequential sum over queries of +-d_q, divided by n (here a product, made exact where it counts: below);
  the observed one is numpy's mean of d; the p-value counts with scipy's tolerance (100 eps |observed|).
  Exact (all 2^n sign vectors) when 2^n <= ``n_resamples``, as scipy.
* bootstrap: ``rng.integers(0, n, (B, n))`` per batch (the draws do not depend on ``B``), each
  resample's mean taken by numpy over the gathered row, as scipy's; the percentile interval is
  :func:`scipy.stats.quantile` of those means. BCa (Efron and Tibshirani 1993, 14.3) needs the
  jackknife acceleration a = sum(U^3) / (6 (sum U^2)^(3/2)); for a mean the jackknife values
  have a closed form, U_i = (n - 1)(mean of the leave-one-out means - leave-one-out mean i)
  = x_i - mean(x), so no ``n x n`` array is built. scipy computes U from the n leave-one-out
  means; the two agree to rounding (about 1e-15), so BCa ends agree with scipy's to about 1e-12,
  percentile ends exactly. One exception, deliberate: a bootstrap mean equal to the observed mean up to
  rounding (tied values added in another order) is a tie in BCa's ``z0`` here, where scipy's exact
  comparison puts it on one side by the accident of the rounding.

One set of draws serves every column of the same length: the columns given together (every
system and every difference of a metric, every metric of a comparison) see the same resamples,
exactly as separate scipy calls seeded alike would.

Matrix products, scipy's numbers. The sums are matrix products (BLAS, float64): a batch of B sign vectors
as a ``(B, n)`` matrix of +-1 times the ``(n, p)`` differences, and a batch of B bootstrap resamples turned
into how often each drew each query, a ``(B, n)`` matrix of counts, times the ``(n, k)`` columns (a
difference's mean is the difference of two sums over n, so the differences cost nothing). Per batch that is
B x n draws and one product, where summing resample by resample takes B x n x (columns + differences)
steps. A product adds in another order than scipy's sums, so its values differ from theirs by rounding, at
most 2 (n + 2) eps max|x| for a mean (any order of n additions is that close); but a p-value only counts
statistics on either side of two thresholds, and an interval reads only a few order statistics of the
bootstrap means and, for BCa, which side of the observed mean each is on. The few statistics that fall within
that bound of a threshold, or of an order statistic an interval reads, are computed again scipy's way (the
signs added query after query; the resample drawn again from its generator's state, gathered and summed by
numpy): every count and every order statistic is then scipy's, so the p-values and intervals are, bit for
bit, whatever order BLAS adds in and however many threads share the work.

Counted bootstrap as it is (:func:`counted_means`, ``counted=True``): the means of the products without that
last step, equal to :func:`bootstrap_means`' up to the order of the additions (bit for bit when every sum is
exact, e.g. values k / 2^j on few queries), and so are the intervals: BCa's ``z0`` counts a bootstrap mean
that ties the observed mean up to rounding as a tie, whichever way its sum was added
(:func:`bootstrap_intervals`); per-slice intervals (:mod:`evalbridge.evaluation.slices`) take them.

Example:
    >>> import numpy as np
    >>> d = np.array([[0.3, 0.2, 0.1, 0.1]])
    >>> randomization_pvalues(d, n_resamples=100, seed=0)   # exact: only (+ + + +) of 16 reaches t_obs
    array([0.125])
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import nullcontext
from typing import Any

from ..common.parallel import workers
from ..errors import InputError

__all__ = ["DEFAULT_MEMORY", "PARALLEL_WORK", "randomization_pvalues", "bootstrap_means", "counted_means",
           "bootstrap_intervals", "jackknife_acceleration", "batch_rows"]

#: bytes a batch's arrays may take (indices, gathered values, signs); results come on top
DEFAULT_MEMORY = 128 * 2 ** 20
#: below this many (resample, query, column) steps a call runs on one thread: handing batches over costs more
PARALLEL_WORK = 50_000_000
#: scipy's relative tolerance for null statistics equal to the observed one (``permutation_test``)
_TOLERANCE_EPS = 100
#: a bootstrap mean within this many n eps max|x| of the observed mean ties it (BCa's ``z0``): a sum of n values
#: of at most max|x| is exact to (n - 1) eps n max|x| whatever the order of its additions (twice for a difference)
_TIE_ROUNDING = 4


def batch_rows(n: int, bytes_per_value: int, memory: int) -> int:
    """Resamples per batch: as many rows of ``n`` values of ``bytes_per_value`` bytes as fit in ``memory``.

    >>> batch_rows(100_000, 8 * 7, 128 * 2 ** 20)
    23
    """
    return max(1, memory // max(1, n * bytes_per_value))


#: bytes a batch aims at when that is below ``memory``: the bootstrap's gathered rows are written
#: and read again at once, which is fastest while they stay in the processor's cache
_CACHE = 4 * 2 ** 20
#: resamples per batch of a matrix product at least (a product of fewer rows costs more per resample)
_COUNTED_ROWS = 64
#: draws per chunk of a counted bootstrap at least (each chunk's generator state is kept, to draw it again)
_CHUNK = 2 ** 17
#: generator states a counted bootstrap keeps at most (about 600 bytes each; chunks grow past this many)
_STATES = 2 ** 14


def _sign_bits(n: int, total: int, *, exact: bool, seed: int, rows: int) -> Iterator[Any]:
    """Batches of sign vectors as ``(b, n)`` uint32 arrays of 0 (the pair is swapped) and 1 (kept).

    Monte Carlo: the draws scipy's ``permutation_test(permutation_type="samples")`` makes with
    ``default_rng(seed)``, in its order: one 32-bit draw per (resample, query), swapped when even.
    Exact: every vector once, vector c's bit q being bit q of c (the order does not matter).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    shifts = np.arange(n, dtype=np.uint64)[None, :]
    for start in range(0, total, rows):
        b = min(rows, total - start)
        if exact:
            codes = np.arange(start, start + b, dtype=np.uint64)[:, None]
            yield ((codes >> shifts) & np.uint64(1)).astype(np.uint32)
        else:
            draws = rng.integers(0, 2 ** 32, size=(b, n), dtype=np.uint32)
            np.bitwise_and(draws, 1, out=draws)
            yield draws


def _sequential_sums(signs: Any, d: Any) -> Any:
    """sum_q s_q d_q of each row pair, added one query after the other in query order (scipy's order): the
    products of +-1 are exact, and ``add.accumulate`` adds strictly in sequence."""
    import numpy as np

    return np.add.accumulate(signs * d, axis=-1)[..., -1]


def randomization_pvalues(differences: Any, *, n_resamples: int, seed: int,
                          memory: int = DEFAULT_MEMORY, threads: int | None = None) -> Any:
    """Two-sided p-values of Fisher's paired randomization test, one per row of ``differences``.

    ``differences`` is a ``(p, n)`` array, row k = x_k - y_k over n paired queries. Under the
    null hypothesis each d_q is as likely to be -d_q; with t(s) = sum_q s_q d_q / n for a sign
    vector s and t_obs = mean(d):

        p = min(1, 2 min((#{t(s) <= t_obs + g} + a) / (N + a), (#{t(s) >= t_obs - g} + a) / (N + a)))

    with g = 100 eps |t_obs| (ties up to rounding), over the N = 2^n vectors (a = 0) when
    2^n <= ``n_resamples``, else over ``n_resamples`` random ones (a = 1): scipy's
    ``permutation_test``. Every row sees the same sign vectors.

    The sums of a batch of B sign vectors against every row are one matrix product (BLAS: the ``(B, n)`` 0/1
    matrix of the pairs kept times the ``(n, p)`` differences, s . d = 2 (kept . d) - sum d), whose additions
    come in another order than scipy's sequential sum over the queries: each is within 2 n eps sum|d| of the
    sequential one (any order of n additions is within n eps / 2 sum|d| of the exact sum). Only a statistic that close to t_obs + g or t_obs - g could count differently, and those few
    are added again in scipy's order (query after query); so every count, and every p-value, is the one the
    sequential sums give, bit for bit (scipy's), whatever the order BLAS adds in and however many threads it
    uses. Memory: the B x n draws and their floats (12 bytes each, B = :func:`batch_rows`), twice when a thread
    reduces one batch while the next is drawn (``threads``: default, as many as the cores allow; 1: none);
    nothing grows with ``n_resamples``.

    >>> import numpy as np
    >>> # d = (.3, .2, .1, .1): of the 16 sign vectors only (+ + + +) has t >= t_obs, so p = 2 (1/16)
    >>> randomization_pvalues(np.array([[0.3, 0.2, 0.1, 0.1]]), n_resamples=99, seed=0)
    array([0.125])
    """
    import numpy as np
    from threadpoolctl import threadpool_limits

    d = np.ascontiguousarray(differences, dtype=np.float64)
    if d.ndim != 2:
        raise InputError(f"differences must be a (p, n) array; got shape {d.shape}.")
    p, n = d.shape
    observed = d.mean(axis=-1)  # numpy's pairwise mean of each row, as scipy's observed statistic
    eps = np.finfo(np.float64).eps
    gamma = np.abs(eps * _TOLERANCE_EPS * observed)
    exact = n < 63 and 2 ** n <= n_resamples
    total = 2 ** n if exact else n_resamples
    large = total * n * p >= PARALLEL_WORK
    rows = max(1, min(total, batch_rows(n, 2 * 12, memory), max(_COUNTED_ROWS, batch_rows(n, 12, _CACHE))))
    low, high = observed + gamma, observed - gamma
    # 2 (product of the kept) - (sum of all) and the sequential sum differ by at most 4 n u sum|d| = 2 n eps sum|d|
    # (each sum of n terms is within n u sum|d| of the exact one, whatever its order), their quotients by n by that
    # over n and a rounding of the quotient; twice that is the margin
    margin = 4 * (n + 2) * eps * np.abs(d).sum(axis=1) / n + 4 * eps * np.abs(observed)
    columns = d.T   # (n, p), read as such by BLAS without a copy
    totals = d.sum(axis=1)
    less, greater = np.zeros(p, dtype=np.int64), np.zeros(p, dtype=np.int64)

    def count(bits: Any) -> None:
        """The counts of every row over one batch of sign vectors (``bits``: 1 kept, 0 swapped)."""
        null = bits.astype(np.float64) @ columns   # sum of the kept d_q: the sum of s_q d_q is twice it - sum d_q
        null *= 2
        null -= totals
        null /= n
        near = (np.abs(null - low) <= margin) | (np.abs(null - high) <= margin)
        if near.any():   # too close to call: the sequential sums decide
            r, k = np.nonzero(near)
            null[r, k] = _sequential_sums(bits[r] * 2.0 - 1.0, d[k]) / n
        less[:] += np.count_nonzero(null <= low, axis=0)
        greater[:] += np.count_nonzero(null >= high, axis=0)

    batches = _sign_bits(n, total, exact=exact, seed=seed, rows=rows)
    # one BLAS thread for the large: the products are many and small, the cores draw and multiply side by side
    with threadpool_limits(1, user_api="blas") if large else nullcontext(), \
            workers(2, threads if threads is not None or large else 1) as pool:
        if pool is None:
            for bits in batches:
                count(bits)
        else:   # the next batch is drawn while a thread counts the last one
            pending: Any = None
            for bits in batches:
                if pending is not None:
                    pending.result()
                pending = pool.submit(count, bits)
            if pending is not None:
                pending.result()
    adjustment = 0 if exact else 1
    p_less = (less + adjustment) / (total + adjustment)
    p_greater = (greater + adjustment) / (total + adjustment)
    return np.clip(np.minimum(p_less, p_greater) * 2, 0.0, 1.0)


def _components(k: int, differences: Sequence[tuple[int, int]]) -> list[list[int]]:
    """The rows linked by differences, as groups (each row once, in order of first appearance)."""
    parent = list(range(k))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in differences:
        parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(k):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def bootstrap_means(values: Any, differences: Sequence[tuple[int, int]] = (), *, n_resamples: int, seed: int,
                    memory: int = DEFAULT_MEMORY, threads: int | None = None) -> Any:
    """Bootstrap distributions of the mean of each row of ``values`` and of each difference of rows.

    ``values`` is ``(k, n)``: k columns over the same n queries; ``differences`` lists row pairs
    (i, j) whose paired difference values[i] - values[j] is resampled too. Returns a
    ``(k + len(differences), n_resamples)`` array: row r, column b = the mean over the b-th
    resample of the queries (drawn with replacement, the same resamples for every row, the ones
    scipy's ``bootstrap`` draws with ``default_rng(seed)``), computed as scipy does: numpy's
    mean of the gathered row, a difference being the subtraction of two gathered rows (scipy's
    x[i] - y[i]). Columns linked by differences are gathered one group at a time; memory per
    batch: ``(c + 2) x B x n`` 8-byte values, c the largest linked group, B at most what fits
    in ``memory`` (and in a few MiB of cache, which is faster).

    Linked groups are independent: on several cores (``threads``: default, as many as the cores allow;
    1: none) each batch's groups are shared between threads while the next batch's resamples are drawn,
    two batches in flight, each group with its own buffers per batch in flight (c becomes twice the sum of
    the groups' sizes). Every mean is the same operations on the same draws, so the numbers do not change.
    """
    import numpy as np

    x = np.ascontiguousarray(values, dtype=np.float64)
    k, n = x.shape
    components = _components(k, differences)
    slot = {i: position for members in components for position, i in enumerate(members)}
    linked = [[(r, i, j) for r, (i, j) in enumerate(differences, start=k) if i in members] for members in components]
    work = n_resamples * n * (k + len(differences))
    with workers(len(components), threads if threads is not None or work >= PARALLEL_WORK else 1) as pool:
        # one set of buffers, or, when the components are shared between threads, one per component and per batch
        # in flight (two: the threads take the next batch's components while the last of this one's finish, so a
        # number of components that is no multiple of the threads does not leave a thread idle at every batch)
        flight = 2 if pool is not None else 1
        sets = len(components) * flight if pool is not None else 1
        width = [len(members) for members in components] * flight if pool is not None else [max(map(len, components))]
        per_cell = 8 * (sum(width) + 2 * sets + (flight - 1) * 3)    # + the indices of the batches in flight
        rows = max(1, min(batch_rows(n, per_cell, memory), batch_rows(n, per_cell // sets, _CACHE), n_resamples))
        gathered = [np.empty((w, rows, n)) for w in width]
        scratch = [np.empty((rows, n)) for _ in width]
        rng = np.random.default_rng(seed)
        theta = np.empty((k + len(differences), n_resamples))

        def means(c: int, index: Any, start: int, b: int, buffers: int) -> None:
            """The bootstrap means of component c's columns and differences over one batch of resamples, in the
            buffers numbered ``buffers``."""
            own, spare = gathered[buffers], scratch[buffers]
            for i in components[c]:
                row = own[slot[i], :b]
                np.take(x[i], index, out=row, mode="wrap")  # "raise" would copy ``out``; indices are in range
                theta[i, start:start + b] = np.add.reduce(row, axis=-1) / n   # row.mean(), without its overhead
            for r, i, j in linked[c]:
                np.subtract(own[slot[i], :b], own[slot[j], :b], out=spare[:b])
                theta[r, start:start + b] = np.add.reduce(spare[:b], axis=-1) / n

        in_flight: list[list[Any]] = []
        for turn, start in enumerate(range(0, n_resamples, rows)):
            b = min(rows, n_resamples - start)
            index = rng.integers(0, n, (b, n))   # (while the threads reduce the batches in flight)
            if pool is None:
                for c in range(len(components)):
                    means(c, index, start, b, 0)
                continue
            if len(in_flight) == flight:   # this batch reuses the buffers of the oldest one: wait for it
                for job in in_flight.pop(0):
                    job.result()
            first = (turn % flight) * len(components)
            in_flight.append([pool.submit(means, c, index, start, b, first + c) for c in range(len(components))])
        for jobs in in_flight:
            for job in jobs:
                job.result()
    return theta


class _Draws:
    """Where each resample's draws start in the stream of a counted bootstrap, to draw a few of them again.

    The resamples are drawn in chunks of a few rows (``default_rng(seed).integers(0, n, (rows, n))``, one
    stream); ``states[c]`` is the generator's state before chunk c, whose first resample is ``firsts[c]``.
    """

    def __init__(self, n: int, total: int) -> None:
        self.n, self.total = n, total
        self.firsts: list[int] = []
        self.states: list[Any] = []

    def rows(self, resamples: Iterable[int]) -> Iterator[tuple[int, Any]]:
        """``(resample, its n query indices)`` for each of ``resamples``, drawn again chunk by chunk."""
        import bisect

        import numpy as np

        by_chunk: dict[int, list[int]] = {}
        for r in sorted(set(resamples)):
            by_chunk.setdefault(bisect.bisect_right(self.firsts, r) - 1, []).append(r)
        for c, wanted in by_chunk.items():
            first = self.firsts[c]
            end = self.firsts[c + 1] if c + 1 < len(self.firsts) else self.total
            rng = np.random.Generator(np.random.PCG64())
            rng.bit_generator.state = self.states[c]
            drawn = rng.integers(0, self.n, (end - first, self.n))
            for r in wanted:
                yield r, drawn[r - first]


def _counted(x: Any, differences: Sequence[tuple[int, int]], *, n_resamples: int, seed: int, memory: int,
             threads: int | None) -> tuple[Any, _Draws]:
    """The counted bootstrap means (:func:`counted_means`) and where each resample was drawn (:class:`_Draws`)."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    k, n = x.shape
    large = n_resamples * n * k >= PARALLEL_WORK
    # per resample and query: its draw (for this batch and the next) and its count
    rows = max(1, min(n_resamples, batch_rows(n, 3 * 8, memory), max(_COUNTED_ROWS, batch_rows(n, 3 * 8, _CACHE))))
    chunk = min(rows, max(-(-_CHUNK // n), -(-n_resamples // _STATES)))
    theta = np.empty((k + len(differences), n_resamples))   # the columns' sums first, their means at the end
    counts = np.empty((rows, n))
    record = _Draws(n, n_resamples)

    def add(chunks: list[Any], start: int, b: int) -> None:
        """The sums of every column over one batch of resamples (``chunks``: their draws, a few rows each)."""
        at = 0
        for drawn in chunks:
            c = len(drawn)
            drawn += (np.arange(c) * n)[:, None]
            counts[at:at + c] = np.bincount(drawn.ravel(), minlength=c * n).reshape(c, n)
            at += c
        np.matmul(x, counts[:b].T, out=theta[:k, start:start + b])

    rng = np.random.default_rng(seed)
    # one BLAS thread for the large: the products are many and small, and BLAS's own threads, waiting on each
    # other at every product, cost far more than they share (many times more on a busy machine); the draws of
    # the next batch and the counting of the last one use the cores instead
    with threadpool_limits(1, user_api="blas") if large else nullcontext(), \
            workers(2, threads if threads is not None or large else 1) as pool:
        pending: Any = None
        for start in range(0, n_resamples, rows):
            b = min(rows, n_resamples - start)
            chunks = []
            for first in range(start, start + b, chunk):
                record.firsts.append(first)
                record.states.append(rng.bit_generator.state)
                chunks.append(rng.integers(0, n, (min(chunk, start + b - first), n)))
            if pending is not None:
                pending.result()
            if pool is None:
                add(chunks, start, b)
            else:
                pending = pool.submit(add, chunks, start, b)
        if pending is not None:
            pending.result()
    for r, (i, j) in enumerate(differences, start=k):
        np.subtract(theta[i], theta[j], out=theta[r])
    theta /= n
    return theta, record


def counted_means(values: Any, differences: Sequence[tuple[int, int]] = (), *, n_resamples: int, seed: int,
                  memory: int = DEFAULT_MEMORY, threads: int | None = None) -> Any:
    """:func:`bootstrap_means` by counting: the same ``(k + len(differences), n_resamples)`` array, the same
    resamples (``default_rng(seed).integers(0, n, (B, n))``), each mean summed as ``counts @ values`` (see the
    module docstring), equal to rounding.

    A batch of B resamples takes B x n 8-byte counts and, for it and the next batch, B x n 8-byte draws; B
    as many as fit in ``memory`` and in a few MiB of cache, but at least :data:`_COUNTED_ROWS` when ``memory``
    allows. On several cores (``threads``: default, as many as the cores allow; 1: none) the next batch is
    drawn while a thread counts and multiplies the last one.

    >>> import numpy as np
    >>> x = np.array([[0.0, 0.5, 1.0], [0.25, 0.25, 0.75]])
    >>> bool((counted_means(x, [(0, 1)], n_resamples=50, seed=1)
    ...       == bootstrap_means(x, [(0, 1)], n_resamples=50, seed=1)).all())   # exact sums: the same numbers
    True
    """
    import numpy as np

    x = np.ascontiguousarray(values, dtype=np.float64)
    return _counted(x, differences, n_resamples=n_resamples, seed=seed, memory=memory, threads=threads)[0]


def _gathered(x: Any, differences: Sequence[tuple[int, int]], draws: _Draws, wanted: Mapping[int, set[int]]) -> \
        Iterator[tuple[int, int, float]]:
    """``(row, resample, mean)`` for each resample of ``wanted`` (resample -> rows of the means array: a column, or
    k + a difference), the mean computed as :func:`bootstrap_means` does (the gathered values, numpy's sum)."""
    import numpy as np

    k, n = x.shape
    for r, index in draws.rows(wanted):
        for row in sorted(wanted[r]):
            if row < k:
                gathered = np.take(x[row], index[None, :])
            else:
                i, j = differences[row - k]
                gathered = np.take(x[i], index[None, :]) - np.take(x[j], index[None, :])
            yield row, r, float((np.add.reduce(gathered, axis=-1) / n)[0])


def jackknife_acceleration(sample: Any) -> float:
    """BCa's acceleration of the mean from the jackknife, in closed form.

    a = sum U^3 / n^3 / (6 (sum U^2 / n^2)^(3/2)), U_i = (n - 1)(mean_j theta_(j) - theta_(i)) where
    theta_(i) is the mean without x_i; for the mean U_i = x_i - mean(x) exactly, so the n
    leave-one-out means (an n x n array in scipy) are never built. nan when every x_i is equal.

    >>> # U = (-.25, -.25, -.25, .75): a = (0.375 / 64) / (6 (0.75 / 16)^(3/2)) = 0.096225
    >>> round(jackknife_acceleration([0.0, 0.0, 0.0, 1.0]), 6)
    0.096225
    """
    import numpy as np

    x = np.asarray(sample, dtype=np.float64)
    n = float(len(x))
    u = x - x.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(1 / 6 * (np.sum(u ** 3) / n ** 3) / (np.sum(u ** 2) / n ** 2) ** (3 / 2))


def bootstrap_intervals(values: Any, differences: Sequence[tuple[int, int]] = (), *, confidence: float,
                        n_resamples: int, seed: int, method: str = "BCa", counted: bool = False,
                        memory: int = DEFAULT_MEMORY, threads: int | None = None) -> list[tuple[float, float]]:
    """Two-sided bootstrap confidence intervals of the mean of each row and of each difference.

    Rows and differences as :func:`bootstrap_means`; the result lists the k rows' intervals,
    then the differences'. ``method``: ``percentile`` (the alpha/2 and 1 - alpha/2 quantiles of
    the bootstrap means, alpha = 1 - ``confidence``) or ``BCa`` (bias-corrected and accelerated:
    quantiles Phi(z0 + (z0 + z)/(1 - a (z0 + z))) for z = +-z_(alpha/2), z0 = Phi^-1 of the share
    of bootstrap means below the observed one, ties counting half, a = :func:`jackknife_acceleration`).
    A bootstrap mean that equals the observed one up to the rounding of its sum (within 4 n eps max|x|, max|x|
    the largest value of the row, or the sum of the two rows' for a difference) is a tie: a mean of tied values
    (0.1 + 0.2 + 0.3 against 0.3 + 0.2 + 0.1) lands on either side of the observed one depending only on the
    order of the additions, so the gathered and the counted means (``counted``) give the same interval, equal
    to rounding (scipy compares exactly: its BCa can move by a whole step of the bootstrap distribution there).
    Conventions kept from evalbridge's earlier scipy-based code: a constant column gives (c, c)
    (scipy: nan and a warning), fewer than two queries (nan, nan); a degenerate BCa (every
    bootstrap mean on one side) gives (nan, nan), as scipy.

    The intervals are those of the gathered means (:func:`bootstrap_means`, scipy's), bit for bit, at the cost
    of the counted ones: an interval reads only a few of the bootstrap means (the order statistics its quantiles
    interpolate, and whether each mean is below the observed one for BCa), and a counted mean is within
    2 (n + 2) eps max|x| of the gathered one. So the means are counted (:func:`counted_means`), and the few
    that fall that close to a threshold of BCa's count or to an order statistic the quantiles read are drawn
    again (their generator states are kept) and gathered: every count and every order statistic is then the
    gathered means' (an order statistic moves by no more than the means do). ``counted=True`` takes the counted
    means as they are (equal to rounding). Non-finite values take the gathered means.
    """
    import numpy as np
    from scipy.special import ndtr, ndtri
    from scipy.stats import quantile

    x = np.ascontiguousarray(values, dtype=np.float64)
    k, n = x.shape
    columns = [x[j] for j in range(k)] + [x[i] - x[j] for i, j in differences]
    if n < 2:
        return [(float("nan"), float("nan"))] * len(columns)
    draws: _Draws | None = None
    if counted or not np.isfinite(x).all():
        theta = (counted_means if counted else bootstrap_means)(x, differences, n_resamples=n_resamples, seed=seed,
                                                                 memory=memory, threads=threads)
    else:
        theta, draws = _counted(x, differences, n_resamples=n_resamples, seed=seed, memory=memory, threads=threads)
    alpha = (1 - confidence) / 2
    largest = np.abs(x).max(axis=1)
    scales = np.array([*largest, *(largest[i] + largest[j] for i, j in differences)])
    eps = np.finfo(np.float64).eps
    # a counted mean and the gathered one are within 2 (n + 2) eps scale (twice that: a margin)
    near = 4 * (n + 2) * eps * scales
    constant = [bool(np.ptp(column) == 0) for column in columns]

    rows = [row for row in range(len(columns)) if not constant[row]]
    observed = {row: columns[row].mean() for row in rows}
    tie = {row: _TIE_ROUNDING * n * eps * scales[row] for row in rows}
    probabilities: dict[int, Any] = {}
    large = n_resamples * n * k >= PARALLEL_WORK
    # what follows the resampling shares the cores too: the means drawn again (two halves of the resamples) and
    # the jackknife of each column
    with workers(2, threads if threads is not None or large else 1) as pool:

        def side_by_side(function: Callable[..., Any], jobs: Sequence[tuple[Any, ...]]) -> list[Any]:
            return list(pool.map(lambda job: function(*job), jobs)) if pool is not None else \
                [function(*job) for job in jobs]

        def gather(thresholds: Mapping[int, Any]) -> None:
            """The means within ``near`` of any of their row's ``thresholds``, gathered (when they were counted)."""
            if draws is None:
                return
            wanted: dict[int, set[int]] = {}
            for row, points in thresholds.items():
                close = np.abs(theta[row][:, None] - np.asarray(points, dtype=np.float64)[None, :]) <= near[row]
                for r in np.flatnonzero(close.any(axis=1)).tolist():
                    wanted.setdefault(r, set()).add(row)

            def again(part: list[int]) -> None:
                for row, r, mean in _gathered(x, differences, draws, {r: wanted[r] for r in part}):
                    theta[row, r] = mean

            chosen = sorted(wanted)
            half = (len(chosen) + 1) // 2
            side_by_side(again, [(chosen[:half],), (chosen[half:],)])

        if method == "percentile":
            probabilities = {row: np.asarray([alpha, 1 - alpha]) for row in rows}
        else:
            accelerations = side_by_side(jackknife_acceleration, [(columns[row],) for row in rows])
            gather({row: (observed[row] - tie[row], observed[row] + tie[row]) for row in rows})
            z = float(ndtri(alpha))
            for row, a in zip(rows, accelerations):
                distribution = theta[row]
                share = (np.count_nonzero(distribution < observed[row] - tie[row])
                         + np.count_nonzero(distribution <= observed[row] + tie[row])) / (2 * n_resamples)
                with np.errstate(invalid="ignore", divide="ignore"):
                    z0 = ndtri(share)
                    probabilities[row] = np.asarray([ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))),
                                                     ndtr(z0 + (z0 - z) / (1 - a * (z0 - z)))])
        if draws is not None:   # the order statistics the quantiles interpolate (one more each side: a margin)
            reads = {}
            for row in rows:
                ps = probabilities[row][np.isfinite(probabilities[row])]
                at = np.floor((n_resamples - 1) * ps).astype(np.int64)
                positions = np.unique(np.clip(np.concatenate([at + shift for shift in (-1, 0, 1, 2)]), 0,
                                              n_resamples - 1))
                if len(positions):
                    reads[row] = np.partition(theta[row], positions)[positions]
            gather(reads)
    out = []
    for row, column in enumerate(columns):
        if constant[row]:
            out.append((float(column[0]), float(column[0])))
            continue
        low, high = quantile(theta[row], probabilities[row])
        out.append((float(low), float(high)))
    return out
