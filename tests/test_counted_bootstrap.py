"""The counted bootstrap (slices' intervals) gives the gathered bootstrap's numbers, and slices test many pairs at once."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from evalbridge.errors import InputError
from evalbridge.stats.paired_tests import TESTS, mean_ci, randomization_test, randomization_tests
from evalbridge.stats.resampling import bootstrap_intervals, bootstrap_means, counted_means
from evalbridge.evaluation.slices import MIN_QUERIES, slice_labels, slice_table

EPS = float(np.finfo(np.float64).eps)


@hs.composite
def columns(draw: hs.DrawFn, *, grid: bool, min_queries: int = 1) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """k columns over n queries (1 to 40, as few as a small slice has) and some differences of their pairs.

    ``grid``: values j / 64 in [0, 1] (every sum of at most 40 of them is exact, whatever the order of the
    additions: the two ways of summing give the same float); else any float of [-1e3, 1e3]. A column may be
    constant."""
    k, n = draw(hs.integers(1, 5)), draw(hs.integers(min_queries, 40))
    value = hs.integers(0, 64).map(lambda j: j / 64) if grid else hs.floats(-1e3, 1e3)
    rows = []
    for _ in range(k):
        if draw(hs.booleans()) and draw(hs.booleans()):
            rows.append([draw(value)] * n)
        else:
            rows.append(draw(hs.lists(value, min_size=n, max_size=n)))
    pairs = draw(hs.lists(hs.tuples(hs.integers(0, k - 1), hs.integers(0, k - 1)), max_size=4))
    return np.array(rows, dtype=np.float64), pairs


def _tolerance(x: np.ndarray) -> float:
    """Two sums of n terms in different orders differ by at most 2 (n - 1) eps n max|x|; over n, then doubled
    for a difference of two means."""
    return 4 * x.shape[1] * EPS * max(1.0, float(np.abs(x).max()))


@settings(max_examples=80, deadline=None)
@given(columns(grid=True), hs.integers(1, 700), hs.integers(0, 2 ** 32 - 1), hs.sampled_from([1, 2000, 10 ** 9]),
       hs.sampled_from([1, 2]))
def test_counted_means_are_the_gathered_ones_bit_for_bit_when_the_sums_are_exact(case, n_resamples, seed, memory,
                                                                                 threads) -> None:
    """Property: the same resamples, the same counts, so on values
    whose sums are exact every mean and every difference is the gathered float, whatever the batches and threads."""
    x, pairs = case
    counted = counted_means(x, pairs, n_resamples=n_resamples, seed=seed, memory=memory, threads=threads)
    gathered = bootstrap_means(x, pairs, n_resamples=n_resamples, seed=seed)
    assert counted.shape == (len(x) + len(pairs), n_resamples)
    assert np.array_equal(counted, gathered)


@settings(max_examples=80, deadline=None)
@given(columns(grid=False), hs.integers(1, 700), hs.integers(0, 2 ** 32 - 1), hs.sampled_from([1, 2000, 10 ** 9]),
       hs.sampled_from([1, 2]))
def test_counted_means_equal_the_gathered_ones_to_rounding_on_any_values(case, n_resamples, seed, memory,
                                                                         threads) -> None:
    """Property: on any floats the two differ only by the order of the additions."""
    x, pairs = case
    counted = counted_means(x, pairs, n_resamples=n_resamples, seed=seed, memory=memory, threads=threads)
    gathered = bootstrap_means(x, pairs, n_resamples=n_resamples, seed=seed)
    np.testing.assert_allclose(counted, gathered, rtol=0, atol=_tolerance(x))


@settings(max_examples=60, deadline=None)
@given(columns(grid=True), hs.integers(1, 1500), hs.integers(0, 2 ** 32 - 1), hs.sampled_from([0.8, 0.95]),
       hs.sampled_from(["BCa", "percentile"]))
def test_counted_intervals_are_the_gathered_ones_when_the_sums_are_exact(case, n_resamples, seed, confidence,
                                                                          method) -> None:
    """Property: the same bootstrap means give the same intervals, BCa's ties with the observed mean included;
    one query gives (nan, nan), a constant column (c, c), as the gathered path does."""
    x, pairs = case
    settings_ = dict(confidence=confidence, n_resamples=n_resamples, seed=seed, method=method)
    counted = bootstrap_intervals(x, pairs, counted=True, **settings_)
    gathered = bootstrap_intervals(x, pairs, **settings_)
    assert len(counted) == len(x) + len(pairs)
    np.testing.assert_array_equal(counted, gathered)


@settings(max_examples=60, deadline=None)
@given(columns(grid=False, min_queries=2), hs.integers(20, 1500), hs.integers(0, 2 ** 32 - 1))
def test_counted_intervals_equal_the_gathered_ones_to_rounding_on_any_values(case, n_resamples, seed) -> None:
    """Property: percentile ends are order statistics, which move no more than the means do; BCa's ends too
    when no bootstrap mean is within rounding of the observed one (else BCa's z0 may count such a tie on the
    other side: its quantile levels then move by at most (ties) / (2 n_resamples))."""
    x, pairs = case
    delta = _tolerance(x)
    for method in ("percentile", "BCa"):
        counted = bootstrap_intervals(x, pairs, counted=True, confidence=0.9, n_resamples=n_resamples, seed=seed,
                                      method=method)
        gathered = bootstrap_intervals(x, pairs, confidence=0.9, n_resamples=n_resamples, seed=seed, method=method)
        theta = bootstrap_means(x, pairs, n_resamples=n_resamples, seed=seed)
        assert len(counted) == len(gathered) == len(theta)
        for got, want, distribution, column in zip(counted, gathered, theta, [*x, *(x[i] - x[j] for i, j in pairs)]):
            tie = np.abs(distribution - np.mean(column)).min() <= 2 * delta
            if method == "percentile" or not tie:
                np.testing.assert_allclose(got, want, rtol=0, atol=delta)


def test_a_slice_of_one_or_two_queries_and_a_constant_one_get_the_intervals_of_their_queries() -> None:
    values = {"q1": 0.25, "q2": 0.75, "q3": 0.5, "q4": 0.5, "q5": 0.125}
    labels = {"q1": "two", "q2": "two", "q3": "flat", "q4": "flat", "q5": "one"}
    table = slice_table({"run": {"m": values}}, slice_labels(labels), n_resamples=999, seed=4)
    assert (table.mean("two", "m").ci_low, table.mean("two", "m").ci_high) == mean_ci([0.25, 0.75], n_resamples=999,
                                                                                      seed=4)
    assert (table.mean("flat", "m").ci_low, table.mean("flat", "m").ci_high) == (0.5, 0.5)
    one = table.mean("one", "m")
    assert one.n == 1 and math.isnan(one.ci_low) and math.isnan(one.ci_high)


@settings(max_examples=50, deadline=None)
@given(hs.integers(1, 5), hs.integers(0, 30), hs.integers(1, 3000), hs.integers(0, 2 ** 32 - 1))
def test_pairs_tested_together_get_each_pairs_own_randomization_p_value(p, n, n_resamples, seed) -> None:
    """Property: one set of swaps for every pair gives each pair's p-value as its own test would, bit for bit,
    unchanged pairs (p = 1) and fewer than two queries (nan) included."""
    rng = np.random.default_rng(seed % 997)
    a = np.round(rng.random((p, n)), 1)
    b = np.round(rng.random((p, n)), 1)
    if p > 1:
        b[0] = a[0]
    together = randomization_tests(a, b, n_resamples=n_resamples, seed=seed)
    alone = [randomization_test(x, y, n_resamples=n_resamples, seed=seed) for x, y in zip(a, b)]
    assert np.array_equal(together, alone, equal_nan=True)
    assert TESTS["randomization"].pvalues(a, b, n_resamples, seed) == together


def test_slices_tested_with_the_randomization_test_give_each_pairs_own_p_value() -> None:
    n = 3 * MIN_QUERIES
    rng = np.random.default_rng(8)
    runs = {name: {m: {f"q{i}": float(v) for i, v in enumerate(np.round(rng.random(n), 1))} for m in ("P", "R")}
            for name in ("base", "one", "two")}
    labels = {f"q{i}": "big" if i < 2 * MIN_QUERIES else "rest" for i in range(n)}
    table = slice_table(runs, slice_labels(labels), pairs=[("one", "base"), ("two", "base")], test="randomization",
                        pvalues=TESTS["randomization"].pvalues, n_resamples=500, seed=2)
    assert len(table.differences) == 2 * 2 * 2
    for d in table.differences:
        qids = sorted(q for q in labels if labels[q] == d.slice)
        expected = randomization_test([runs[d.system][d.metric][q] for q in qids],
                                      [runs[d.baseline][d.metric][q] for q in qids], n_resamples=500, seed=2)
        assert d.tested and d.p_value == expected


def test_several_pairs_of_one_slice_need_pairs_of_the_same_shape() -> None:
    with pytest.raises(InputError, match="same shape"):
        randomization_tests(np.zeros((2, 3)), np.zeros((2, 4)))


@settings(max_examples=40, deadline=None)
@given(hs.lists(hs.tuples(hs.integers(0, 64).map(lambda j: j / 64), hs.integers(0, 64).map(lambda j: j / 64),
                          hs.booleans(), hs.sampled_from(["a", "b"])), min_size=1, max_size=30),
       hs.randoms(use_true_random=False))
def test_systems_evaluated_on_other_queries_or_in_another_order_get_the_means_of_their_own_queries(rows, rnd) -> None:
    """Property: a system evaluated on fewer queries, or listing them in another order, gets each slice's mean and
    interval over the slice's queries it has, and the difference is taken over the queries both have."""
    base = {f"q{i}": x for i, (x, _, _, _) in enumerate(rows)}
    kept = [(f"q{i}", y) for i, (_, y, keep, _) in enumerate(rows) if keep]
    rnd.shuffle(kept)
    new = dict(kept)
    labels = {f"q{i}": label for i, (_, _, _, label) in enumerate(rows)}
    table = slice_table({"base": {"m": base}, "new": {"m": new}}, slice_labels(labels), pairs=[("new", "base")],
                        n_resamples=200, seed=1)
    for mean in table.means:
        own = {"base": base, "new": new}[mean.system]
        qids = sorted(q for q in own if labels[q] == mean.slice)
        assert mean.n == len(qids)
        if qids:
            assert mean.mean == math.fsum(own[q] for q in qids) / len(qids)
            assert (mean.ci_low, mean.ci_high) == pytest.approx(mean_ci([own[q] for q in qids], n_resamples=200,
                                                                        seed=1), nan_ok=True)
    for d in table.differences:
        qids = sorted(q for q in new if labels[q] == d.slice)
        assert d.n == len(qids)
        if qids:
            assert d.delta == pytest.approx(math.fsum(new[q] - base[q] for q in qids) / len(qids), abs=1e-12)
