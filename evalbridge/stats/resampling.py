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
  (the tests check both against each other and against scipy). A resample's statistic is the
  sequential sum over queries of +-d_q, divided by n, as scipy's does; the observed one is
  numpy's mean of d; the p-value counts with scipy's tolerance (100 eps |observed|).
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

Counted bootstrap (:func:`counted_means`, ``counted=True``): the same resamples, each turned into how often
it drew each query, so that a batch of B resamples is a ``(B, n)`` matrix of counts and every column's
resample sums are one matrix product (BLAS) of the counts with the ``(n, k)`` columns; a difference's mean
is the difference of two sums over n, so the differences cost nothing. Per batch that is B x n draws and
counts and a product, where the gather takes B x n x (columns + differences) steps. The means equal
:func:`bootstrap_means`' up to the order of the additions (bit for bit when every sum is exact, e.g. values
k / 2^j on few queries), and so are the intervals: BCa's ``z0`` counts a bootstrap mean that ties the
observed mean up to rounding as a tie, whichever way its sum was added (:func:`bootstrap_intervals`). Not
scipy's operations:
:mod:`evalbridge.decisions.compare` keeps the gather; per-slice intervals (:mod:`evalbridge.evaluation.slices`) count.

Example:
    >>> import numpy as np
    >>> d = np.array([[0.3, 0.2, 0.1, 0.1]])
    >>> randomization_pvalues(d, n_resamples=100, seed=0)   # exact: only (+ + + +) of 16 reaches t_obs
    array([0.125])
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import nullcontext
from typing import Any

from ..common.parallel import workers
from ..errors import InputError

__all__ = ["DEFAULT_MEMORY", "randomization_pvalues", "bootstrap_means", "counted_means", "bootstrap_intervals",
           "jackknife_acceleration", "batch_rows"]

#: bytes a batch's arrays may take (indices, gathered values, signs); results come on top
DEFAULT_MEMORY = 128 * 2 ** 20
#: below this many (resample, query, column) steps a call runs on one thread: handing batches over costs more
_PARALLEL_WORK = 50_000_000
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


def _signs(n: int, total: int, *, exact: bool, seed: int, rows: int, buffers: int = 1) -> Iterator[tuple[Any, int]]:
    """Batches of sign vectors as ``(n, b')`` float arrays of +-1 (-1 = the pair is swapped), with b.

    Monte Carlo: the draws scipy's ``permutation_test(permutation_type="samples")`` makes with
    ``default_rng(seed)``, in its order: one 32-bit draw per (resample, query), swapped when even.
    Exact: every vector once (order does not matter). A batch has at least two columns (a lone
    last one gets a dummy second, which the caller does not count): the sums over queries then run
    sequentially, in query order, as in scipy's (n, B) layout. The ``buffers`` arrays are reused in turn
    from batch to batch (20 bytes per query and resample for one; with two, a batch can be read while the
    next is drawn).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    shifts = np.arange(n, dtype=np.uint64)[:, None]
    full = [np.empty((n, max(2, min(rows, total)))) for _ in range(buffers)]
    for turn, start in enumerate(range(0, total, rows)):
        b = min(rows, total - start)
        signs = full[turn % buffers] if b == full[0].shape[1] else np.ones((n, max(b, 2)))
        if exact:
            codes = np.arange(start, start + b, dtype=np.uint64)[None, :]
            signs[:, :b] = (codes >> shifts) & np.uint64(1)
        else:
            draws = rng.integers(0, 2 ** 32, size=(b, n), dtype=np.uint32)
            np.bitwise_and(draws, 1, out=draws)
            signs[:, :b] = draws.T
            del draws
        signs[:, :b] *= 2   # 1 (odd draw: kept) -> +1, 0 (even draw: swapped) -> -1
        signs[:, :b] -= 1
        yield signs, b


def randomization_pvalues(differences: Any, *, n_resamples: int, seed: int,
                          memory: int = DEFAULT_MEMORY, threads: int | None = None) -> Any:
    """Two-sided p-values of Fisher's paired randomization test, one per row of ``differences``.

    ``differences`` is a ``(p, n)`` array, row k = x_k - y_k over n paired queries. Under the
    null hypothesis each d_q is as likely to be -d_q; with t(s) = sum_q s_q d_q / n for a sign
    vector s and t_obs = mean(d):

        p = min(1, 2 min((#{t(s) <= t_obs + g} + a) / (N + a), (#{t(s) >= t_obs - g} + a) / (N + a)))

    with g = 100 eps |t_obs| (ties up to rounding), over the N = 2^n vectors (a = 0) when
    2^n <= ``n_resamples``, else over ``n_resamples`` random ones (a = 1): scipy's
    ``permutation_test``. Every row sees the same sign vectors. Each t(s) is one
    ``einsum`` over the queries (a sequential sum in query order, scipy's own order, without
    the product array). Memory: the ``(n, B)`` signs (B = :func:`batch_rows`), twice when two
    threads share the rows; nothing grows with ``n_resamples``. Several rows are split between two
    threads (``threads``: default, as many as the cores allow; 1: none) while the next signs are
    drawn: each row's sums are the same operations in the same order, so the p-values do not change.

    >>> import numpy as np
    >>> # d = (.3, .2, .1, .1): of the 16 sign vectors only (+ + + +) has t >= t_obs, so p = 2 (1/16)
    >>> randomization_pvalues(np.array([[0.3, 0.2, 0.1, 0.1]]), n_resamples=99, seed=0)
    array([0.125])
    """
    import numpy as np

    d = np.ascontiguousarray(differences, dtype=np.float64)
    if d.ndim != 2:
        raise InputError(f"differences must be a (p, n) array; got shape {d.shape}.")
    p, n = d.shape
    observed = d.mean(axis=-1)  # numpy's pairwise mean of each row, as scipy's observed statistic
    gamma = np.abs(np.finfo(np.float64).eps * _TOLERANCE_EPS * observed)
    exact = n < 63 and 2 ** n <= n_resamples
    total = 2 ** n if exact else n_resamples
    parts = [np.ascontiguousarray(d[k::2].T) for k in range(min(2, p))] if p > 1 else [np.ascontiguousarray(d.T)]
    rows = max(2, batch_rows(n, 20 if len(parts) == 1 else 36, memory))
    low, high = (observed + gamma)[:, None], (observed - gamma)[:, None]
    less, greater = np.zeros(p, dtype=np.int64), np.zeros(p, dtype=np.int64)

    def count(k: int, signs: Any, b: int) -> None:
        """The counts of the rows k, k + 2, ... (part k) over one batch of sign vectors."""
        null = np.einsum("qb,qp->pb", signs, parts[k], optimize=False)[:, :b] / n
        less[k::len(parts)] += np.count_nonzero(null <= low[k::len(parts)], axis=1)
        greater[k::len(parts)] += np.count_nonzero(null >= high[k::len(parts)], axis=1)

    batches = _signs(n, total, exact=exact, seed=seed, rows=rows, buffers=2 if len(parts) > 1 else 1)
    with workers(len(parts), threads if threads is not None or total * n * p >= _PARALLEL_WORK else 1) as pool:
        if pool is None:
            for signs, b in batches:
                for k in range(len(parts)):
                    count(k, signs, b)
        else:  # a batch's signs are drawn (into the other buffer) while the threads count the last one's
            pending: list[Any] = []
            for signs, b in batches:
                for job in pending:
                    job.result()
                pending = [pool.submit(count, k, signs, b) for k in range(len(parts))]
            for job in pending:
                job.result()
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
    with workers(len(components), threads if threads is not None or work >= _PARALLEL_WORK else 1) as pool:
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


#: resamples per batch of the counted bootstrap at least (a matrix product of fewer rows costs more per count)
_COUNTED_ROWS = 64


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
    from threadpoolctl import threadpool_limits

    x = np.ascontiguousarray(values, dtype=np.float64)
    k, n = x.shape
    large = n_resamples * n * k >= _PARALLEL_WORK
    rows = max(1, min(n_resamples, batch_rows(n, 3 * 8, memory), max(_COUNTED_ROWS, batch_rows(n, 3 * 8, _CACHE))))
    theta = np.empty((k + len(differences), n_resamples))   # the columns' sums first, their means at the end
    counts = np.empty((rows, n))

    def add(index: Any, start: int, b: int) -> None:
        """The sums of every column over one batch of resamples (``index``: their draws)."""
        for r in range(b):
            counts[r] = np.bincount(index[r], minlength=n)
        theta[:k, start:start + b] = x @ counts[:b].T

    rng = np.random.default_rng(seed)
    # one BLAS thread for the large: the products are many and small, and BLAS's own threads, waiting on each
    # other at every product, cost far more than they share (many times more on a busy machine); the draws of
    # the next batch and the counting of the last one use the cores instead
    with threadpool_limits(1, user_api="blas") if large else nullcontext(), \
            workers(2, threads if threads is not None or large else 1) as pool:
        pending: Any = None
        for start in range(0, n_resamples, rows):
            b = min(rows, n_resamples - start)
            index = rng.integers(0, n, (b, n))
            if pending is not None:
                pending.result()
            if pool is None:
                add(index, start, b)
            else:
                pending = pool.submit(add, index, start, b)
        if pending is not None:
            pending.result()
    for r, (i, j) in enumerate(differences, start=k):
        np.subtract(theta[i], theta[j], out=theta[r])
    theta /= n
    return theta


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
    """
    import numpy as np
    from scipy.special import ndtr, ndtri
    from scipy.stats import quantile

    x = np.ascontiguousarray(values, dtype=np.float64)
    k, n = x.shape
    columns = [x[j] for j in range(k)] + [x[i] - x[j] for i, j in differences]
    if n < 2:
        return [(float("nan"), float("nan"))] * len(columns)
    theta = (counted_means if counted else bootstrap_means)(x, differences, n_resamples=n_resamples, seed=seed,
                                                             memory=memory, threads=threads)
    alpha = (1 - confidence) / 2
    largest = np.abs(x).max(axis=1)
    scales = [*largest, *(largest[i] + largest[j] for i, j in differences)]
    out = []
    for column, distribution, scale in zip(columns, theta, scales):
        if np.ptp(column) == 0:
            out.append((float(column[0]), float(column[0])))
            continue
        if method == "percentile":
            probabilities = np.asarray([alpha, 1 - alpha])
        else:
            observed = column.mean()
            tie = _TIE_ROUNDING * n * np.finfo(np.float64).eps * scale
            share = (np.count_nonzero(distribution < observed - tie)
                     + np.count_nonzero(distribution <= observed + tie)) / (2 * n_resamples)
            with np.errstate(invalid="ignore", divide="ignore"):
                z0 = ndtri(share)
                a = jackknife_acceleration(column)
                z = float(ndtri(alpha))
                probabilities = np.asarray([ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))),
                                            ndtr(z0 + (z0 - z) / (1 - a * (z0 - z)))])
        low, high = quantile(distribution, probabilities)
        out.append((float(low), float(high)))
    return out
