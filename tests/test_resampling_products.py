"""The resampling's matrix products give the numbers of the sums they replace: p-values and intervals bit for bit."""

from __future__ import annotations

import math

import numpy as np
import scipy.stats as st
from hypothesis import assume, given, settings
from hypothesis import strategies as hs
from scipy.special import ndtr, ndtri

from evalbridge.stats.resampling import bootstrap_intervals, bootstrap_means, jackknife_acceleration, \
    randomization_pvalues

EPS = float(np.finfo(np.float64).eps)

#: per-query values as metrics give them: a coarse grid (sums that tie exactly in many resamples) or any float
grid = hs.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 2 / 3, 0.9, 1.0])


@hs.composite
def matrices(draw: hs.DrawFn, *, rows: tuple[int, int], queries: tuple[int, int]) -> np.ndarray:
    """A (k, n) matrix: each row on the grid (ties everywhere), on a few values of [0, 1], any float of [0, 1], or
    the first row's values in another order (its differences with the first add up to 0 in exact arithmetic, so
    many null sums equal the observed one but for the rounding of the order of their additions)."""
    k, n = draw(hs.integers(*rows)), draw(hs.integers(*queries))
    out: list[list[float]] = []
    for _ in range(k):
        kind = draw(hs.sampled_from(["grid", "few", "any", "shuffled"] if out else ["grid", "few", "any"]))
        if kind == "shuffled":
            out.append(draw(hs.permutations(out[0])))
            continue
        if kind == "few":
            value = hs.sampled_from(draw(hs.lists(hs.floats(0, 1), min_size=1, max_size=3)))
        else:
            value = grid if kind == "grid" else hs.floats(0, 1)
        out.append(draw(hs.lists(value, min_size=n, max_size=n)))
    return np.array(out, dtype=np.float64)


def _mean_difference(x, y, axis):
    return np.mean(x - y, axis=axis)


@settings(max_examples=60, deadline=None)
@given(matrices(rows=(2, 4), queries=(2, 160)), hs.integers(1, 2500), hs.integers(0, 2 ** 32),
       hs.sampled_from([10 ** 9, 5000]), hs.sampled_from([1, 2]))
def test_randomization_p_values_from_the_product_are_scipys_bit_for_bit(x, n_resamples, seed, memory, threads):
    """Property: each p-value is scipy.stats.permutation_test's, exactly, on tied values too (a null statistic
    that equals the observed one in exact arithmetic is counted as scipy's sequential sum counts it, whatever order
    the product added in), at any batch size and thread count; the exact test (2^n <= n_resamples) as well."""
    d = x[1:] - x[0]
    got = randomization_pvalues(d, n_resamples=n_resamples, seed=seed, memory=memory, threads=threads)
    for row, p in zip(range(1, len(x)), got):
        assume(d[row - 1].any())
        expected = st.permutation_test((x[row], x[0]), _mean_difference, permutation_type="samples",
                                       vectorized=True, n_resamples=n_resamples,
                                       rng=np.random.default_rng(seed)).pvalue
        assert p == expected


def test_randomization_p_values_do_not_depend_on_the_threads_on_many_queries():
    """3,000 queries of tenths, two systems with the baseline's values in another order: many null sums equal the
    observed one, 0, in exact arithmetic and differ from it by the rounding of the order of their additions (about
    one resample in 300); one thread or two, and scipy, the same p-values."""
    rng = np.random.default_rng(5)
    first = np.round(rng.random(3000) * 10) / 10
    x = np.stack([first, rng.permutation(first), rng.permutation(first), np.round(rng.random(3000) * 10) / 10])
    d = x[1:] - x[0]
    one = randomization_pvalues(d, n_resamples=3000, seed=2, threads=1)
    two = randomization_pvalues(d, n_resamples=3000, seed=2, threads=2, memory=2 ** 20)
    assert np.array_equal(one, two)
    for row, p in zip(x[1:], one):
        assert p == st.permutation_test((row, x[0]), _mean_difference, permutation_type="samples", vectorized=True,
                                        n_resamples=3000, rng=np.random.default_rng(2)).pvalue


def _gathered_intervals(x: np.ndarray, differences: list[tuple[int, int]], *, confidence: float, n_resamples: int,
                        seed: int, method: str) -> list[tuple[float, float]]:
    """The intervals from the gathered bootstrap means (scipy's means), BCa's z0 counting the means within
    4 n eps scale of the observed one as ties: bootstrap_intervals' rule applied to bootstrap_means, written out."""
    from scipy.stats import quantile

    k, n = x.shape
    theta = bootstrap_means(x, differences, n_resamples=n_resamples, seed=seed, threads=1)
    largest = np.abs(x).max(axis=1)
    scales = [*largest, *(largest[i] + largest[j] for i, j in differences)]
    columns = [x[j] for j in range(k)] + [x[i] - x[j] for i, j in differences]
    alpha = (1 - confidence) / 2
    out = []
    for column, distribution, scale in zip(columns, theta, scales):
        if np.ptp(column) == 0:
            out.append((float(column[0]), float(column[0])))
            continue
        if method == "percentile":
            ps = np.asarray([alpha, 1 - alpha])
        else:
            observed, tie = column.mean(), 4 * n * EPS * scale
            share = (np.count_nonzero(distribution < observed - tie)
                     + np.count_nonzero(distribution <= observed + tie)) / (2 * n_resamples)
            with np.errstate(invalid="ignore", divide="ignore"):
                z0, a, z = ndtri(share), jackknife_acceleration(column), float(ndtri(alpha))
                ps = np.asarray([ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))), ndtr(z0 + (z0 - z) / (1 - a * (z0 - z)))])
        low, high = quantile(distribution, ps)
        out.append((float(low), float(high)))
    return out


def _same(got: list[tuple[float, float]], want: list[tuple[float, float]]) -> bool:
    """Equal floats, nan equal to nan."""
    return all((a == b) or (math.isnan(a) and math.isnan(b)) for g, w in zip(got, want) for a, b in zip(g, w)) \
        and len(got) == len(want)


@settings(max_examples=80, deadline=None)
@given(matrices(rows=(1, 3), queries=(2, 150)), hs.integers(1, 1500), hs.integers(0, 2 ** 32),
       hs.sampled_from(["BCa", "percentile"]), hs.sampled_from([0.8, 0.95]), hs.sampled_from([10 ** 9, 3000]),
       hs.sampled_from([1, 2]))
def test_bootstrap_intervals_from_counts_are_the_gathered_ones_bit_for_bit(x, n_resamples, seed, method, confidence,
                                                                          memory, threads):
    """Property: the intervals computed from counts (the means as a matrix product, the few a quantile or BCa's
    count reads near a threshold drawn again and gathered) are the gathered means' intervals, bit for bit, ties
    included, at any batch size and thread count."""
    differences = [(i, j) for i in range(len(x)) for j in range(len(x)) if i != j]
    options = dict(confidence=confidence, n_resamples=n_resamples, seed=seed, method=method)
    got = bootstrap_intervals(x, differences, memory=memory, threads=threads, **options)
    assert _same(got, _gathered_intervals(x, differences, **options))


def test_bootstrap_intervals_on_many_tied_queries_are_the_gathered_ones():
    """3,000 queries on a grid of tenths: many bootstrap means tie, some within rounding of an order statistic
    the quantiles read; counted and gathered give the same intervals, and the percentile ends are scipy's."""
    rng = np.random.default_rng(1)
    first = np.round(rng.random(3000) * 10) / 10
    x = np.stack([first, rng.permutation(first)])
    for method in ("BCa", "percentile"):
        options = dict(confidence=0.95, n_resamples=2000, seed=3, method=method)
        got = bootstrap_intervals(x, [(1, 0)], **options)
        assert _same(got, _gathered_intervals(x, [(1, 0)], **options))
    paired = st.bootstrap((x[1], x[0]), _mean_difference, paired=True, vectorized=True, n_resamples=2000,
                          method="percentile", rng=np.random.default_rng(3))
    assert got[2] == tuple(map(float, paired.confidence_interval))
