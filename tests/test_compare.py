"""System comparison: paired tests, corrections, effect sizes, win/tie/loss (evalbridge.decisions.compare)."""

from __future__ import annotations

import math
import random
import re
import warnings

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import assume, given, settings
from hypothesis import strategies as hs
from strategies import qrels_and_run

import evalbridge as eb
from evalbridge.decisions.compare import compare_systems
from evalbridge.stats.paired_tests import (
    COMPARISON_PARAMETERS, MAX_RESAMPLES, benjamini_hochberg, bonferroni, bootstrap_ci, check_comparison_parameters,
    effect_size, holm, mean_ci, paired_t_test, randomization_test, wilcoxon_test, win_tie_loss,
)
from evalbridge.stats.resampling import (
    bootstrap_intervals, bootstrap_means, jackknife_acceleration, randomization_pvalues,
)

A = [0.52, 0.31, 0.88, 0.10, 0.45, 0.67, 0.29, 0.73, 0.05, 0.61, 0.40, 0.83]
B = [0.41, 0.35, 0.70, 0.12, 0.30, 0.55, 0.29, 0.60, 0.01, 0.66, 0.22, 0.70]

values = hs.lists(hs.floats(0, 1, allow_nan=False), min_size=3, max_size=30)


def test_paired_t_test_equals_scipy_ttest_rel():
    """The t-test p-value is scipy.stats.ttest_rel's."""
    assert paired_t_test(A, B) == pytest.approx(st.ttest_rel(A, B).pvalue, rel=1e-12)


def test_paired_t_test_matches_hand_computed_value():
    """d = (.3, .2, .1, .1): t = 3.65563 with 3 df; closed-form t(3) CDF gives two-sided p = 0.0353528."""
    t = 0.175 / (math.sqrt(0.0275 / 3) / 2)
    theta = math.atan(t / math.sqrt(3))
    expected = 1 - 2 * (theta + math.sin(theta) * math.cos(theta)) / math.pi  # 2 (1 - F_3(t))
    assert expected == pytest.approx(0.0353528, abs=1e-7)
    assert paired_t_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3]) == pytest.approx(expected, rel=1e-9)


def test_identical_systems_have_p_value_one_and_no_effect():
    """Zero differences everywhere: p = 1 for both tests, effect 0, CI (0, 0), every query a tie."""
    assert paired_t_test(A, A) == 1.0
    assert randomization_test(A, A) == 1.0
    assert effect_size(A, A) == 0.0
    assert bootstrap_ci(A, A) == (0.0, 0.0)
    assert win_tie_loss(A, A) == (0, len(A), 0)


def test_randomization_test_equals_scipy_permutation_test_with_same_seed():
    """The randomization p-value is scipy.stats.permutation_test's (samples permutation, seeded)."""
    expected = st.permutation_test((np.array(A), np.array(B)), lambda x, y, axis: np.mean(x - y, axis=axis),
                                   permutation_type="samples", vectorized=True, n_resamples=2000,
                                   rng=np.random.default_rng(7)).pvalue
    assert randomization_test(A, B, n_resamples=2000, seed=7) == pytest.approx(expected, rel=1e-12)


def test_randomization_test_is_exact_for_few_queries():
    """With 4 queries all 16 sign flips are enumerated: only 2 reach |mean d|, so p = 2/16."""
    assert randomization_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3], n_resamples=100) == 0.125


def test_randomization_test_is_reproducible_with_a_seed():
    """Same seed, same p-value; the Monte-Carlo p-value is close to the t-test's on a clear effect."""
    rng = random.Random(1)
    a = [rng.random() for _ in range(40)]
    b = [x - 0.05 + rng.gauss(0, 0.1) for x in a]
    first = randomization_test(a, b, n_resamples=3000, seed=3)
    assert first == randomization_test(a, b, n_resamples=3000, seed=3)
    assert abs(first - paired_t_test(a, b)) < 0.05


def test_bootstrap_ci_equals_scipy_bootstrap_paired():
    """The CI is scipy.stats.bootstrap's paired BCa interval of the mean difference."""
    res = st.bootstrap((np.array(A), np.array(B)), lambda x, y, axis: np.mean(x - y, axis=axis), paired=True,
                       vectorized=True, n_resamples=3000, confidence_level=0.9, rng=np.random.default_rng(5))
    low, high = bootstrap_ci(A, B, confidence=0.9, n_resamples=3000, seed=5)
    assert (low, high) == pytest.approx(tuple(res.confidence_interval), rel=1e-12)
    assert low < np.mean(np.array(A) - np.array(B)) < high


def test_holm_matches_hand_computed_values():
    """Holm on (.01, .04, .03, .005): sorted x4, x3, x2, x1 with running max -> (.03, .06, .06, .02)."""
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.2]) == pytest.approx([0.5, 0.4])  # 0.2*2 = 0.4, then max(0.4, 0.5*1)
    assert holm([0.6, 0.4, 0.9]) == pytest.approx([1.0, 1.0, 1.0])  # capped at 1


def test_holm_leaves_nan_out_of_the_family():
    """A nan p-value stays nan and does not count in m."""
    out = holm([0.01, math.nan, 0.02])
    assert math.isnan(out[1]) and out[0] == pytest.approx(0.02) and out[2] == pytest.approx(0.02)


@given(hs.lists(hs.floats(0, 1), min_size=1, max_size=20))
def test_holm_is_between_raw_and_bonferroni(ps):
    """p <= Holm(p) <= min(1, m p), and Holm keeps the order of the p-values."""
    adjusted = holm(ps)
    for p, a in zip(ps, adjusted):
        assert p - 1e-12 <= a <= min(1.0, len(ps) * p) + 1e-12
    order = sorted(range(len(ps)), key=ps.__getitem__)
    assert all(adjusted[i] <= adjusted[j] + 1e-12 for i, j in zip(order, order[1:]))


def test_benjamini_hochberg_matches_hand_computed_values():
    """BH on (.01, .04, .03, .005): m p / rank = (.02, .04, .04, .02) after the step-up minimum."""
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert benjamini_hochberg([0.01, 0.04]) == pytest.approx(list(st.false_discovery_control([0.01, 0.04])))


def test_effect_size_is_mean_over_sd_of_differences():
    """d_z = mean(d) / sd(d, ddof=1), checked with numpy; constant non-zero differences give inf."""
    d = np.array(A) - np.array(B)
    assert effect_size(A, B) == pytest.approx(d.mean() / d.std(ddof=1))
    assert effect_size([1, 2, 3], [0, 1, 2]) == math.inf


@given(values, hs.randoms())
def test_win_tie_loss_counts_every_query_once(a, rnd):
    """wins + ties + losses = n, and swapping the systems swaps wins and losses."""
    b = [rnd.choice([x, rnd.random()]) for x in a]
    w, t, l = win_tie_loss(a, b)
    assert w + t + l == len(a)
    assert win_tie_loss(b, a) == (l, t, w)


def test_unequal_lengths_are_refused():
    """Paired values must have the same length."""
    with pytest.raises(eb.InputError, match="same length"):
        paired_t_test([0.1, 0.2], [0.1])


def _fake(values_by_metric):
    return {m: dict(zip([f"q{i}" for i in range(len(v))], v)) for m, v in values_by_metric.items()}


def test_compare_systems_rows_hold_every_statistic():
    """One row per (metric, system) with scipy's p-values, effect size, CI and W/T/L."""
    systems = {"base": _fake({"P@1": B, "nDCG@10": A}), "new": _fake({"P@1": A, "nDCG@10": B})}
    cmp = compare_systems(systems, ["P@1", "nDCG@10"], baseline="base", n_resamples=999, seed=1)
    row = cmp.get("new", "P@1")
    assert row.delta == pytest.approx(np.mean(A) - np.mean(B))
    assert row.p_t == pytest.approx(st.ttest_rel(A, B).pvalue)
    assert (row.wins, row.ties, row.losses) == win_tie_loss(A, B)
    assert row.effect_size == pytest.approx(effect_size(A, B))
    assert cmp.get("new", "ndcg@10").delta == pytest.approx(-row.delta)
    assert len(cmp.rows) == 2 and cmp.get("base", "P@1") is None


def test_compare_systems_applies_the_correction_over_the_whole_family():
    """p_adjusted is Holm over every (system, metric) of the chosen test; significance at alpha."""
    rng = random.Random(2)
    base = [rng.random() for _ in range(30)]
    systems = {"base": _fake({"m1": base, "m2": base}),
               "good": _fake({"m1": [x + 0.1 for x in base], "m2": [x + rng.gauss(0, 0.05) for x in base]}),
               "same": _fake({"m1": [x + rng.gauss(0, 0.1) for x in base], "m2": base})}
    cmp = compare_systems(systems, ["m1", "m2"], baseline="base", correction="holm", alpha=0.05)
    raw = [r.p_t for r in cmp.rows]
    assert [r.p_adjusted for r in cmp.rows] == pytest.approx(holm(raw))
    assert cmp.get("good", "m1").significant and not cmp.get("same", "m2").significant
    bh = compare_systems(systems, ["m1", "m2"], baseline="base", correction="bh", test="randomization",
                         n_resamples=500)
    assert [r.p_adjusted for r in bh.rows] == pytest.approx(benjamini_hochberg([r.p_randomization
                                                                               for r in bh.rows]))


def test_compare_systems_pairs_queries_by_id():
    """Queries are matched by id (not position) and only common queries count."""
    base = {"m": {"q1": 0.0, "q2": 1.0, "q3": 0.5}}
    other = {"m": {"q3": 0.5, "q2": 1.0, "q1": 1.0, "q9": 0.0}}
    row = compare_systems({"b": base, "o": other}, ["m"], baseline="b").rows[0]
    assert (row.n, row.wins, row.ties, row.losses) == (3, 1, 2, 0)


@pytest.mark.parametrize("kwargs, message", [
    ({"baseline": "nope"}, "baseline 'nope'"),
    ({"baseline": "b", "test": "sign"}, "test must be one of 't', 'randomization', 'wilcoxon'"),
    ({"baseline": "b", "correction": "sidak"}, "correction must be one of 'holm', 'bh', 'bonferroni', 'none'"),
    ({"baseline": ["b", "b"]}, "named twice"),
])
def test_compare_systems_refuses_bad_settings(kwargs, message):
    """Unknown baseline, test or correction: InputError naming the value."""
    with pytest.raises(eb.InputError, match=message):
        compare_systems({"b": {"m": {"q": 1.0}}, "o": {"m": {"q": 1.0}}}, ["m"], **kwargs)


def test_comparison_to_dict_is_json_ready():
    """nan and inf become None in to_dict (valid JSON)."""
    import json

    cmp = compare_systems({"b": {"m": {"q": 1.0}}, "o": {"m": {"q": 0.0}}}, ["m"], baseline="b")
    text = json.dumps(cmp.to_dict(), allow_nan=False)
    assert '"p_t": null' in text


@settings(max_examples=25, deadline=None)
@given(hs.lists(hs.tuples(hs.floats(0, 1), hs.floats(0, 1)), min_size=3, max_size=25))
def test_t_test_p_value_matches_scipy_on_random_pairs(pairs):
    """Property: whenever scipy gives a finite p-value it trusts, ours is the same.

    Differences that cancel catastrophically (scipy warns of precision loss) prove nothing
    either way and are not compared.
    """
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            expected = st.ttest_rel(a, b).pvalue
        except RuntimeWarning:
            assume(False)
    if np.isfinite(expected):
        assert paired_t_test(a, b) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.slow
def test_t_test_agrees_with_ranx_compare():
    """ranx.compare's Student t p-values and W/T/L equal ours on tie-free runs (ranx imports numba: slow)."""
    ranx = pytest.importorskip("ranx")
    rng = random.Random(11)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{q}": {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(docs, 8)} for q in range(25)}
    runs = {}
    for name in ("one", "two"):
        scores = {}
        for q in qrels:
            ranked = rng.sample(docs, 15)
            scores[q] = {d: float(15 - i) + rng.random() / 10 for i, d in enumerate(ranked)}
        runs[name] = scores
    metrics = ["ndcg@10", "precision@5", "mrr"]
    report = ranx.compare(ranx.Qrels(qrels), [ranx.Run(runs["one"], name="one"), ranx.Run(runs["two"], name="two")],
                          metrics, stat_test="student")
    ours = {name: eb.evaluate(qrels, run, ["nDCG@10", "P@5", "RR"]) for name, run in runs.items()}
    cmp = compare_systems(ours, ["nDCG@10", "P@5", "RR"], baseline="one", correction="none", n_resamples=200)
    for theirs, mine in zip(metrics, ["nDCG@10", "P@5", "RR"]):
        row = cmp.get("two", mine)
        assert row.p_t == pytest.approx(float(report.comparisons[("one", "two")][theirs]["p_value"]), rel=1e-9)
        wtl = report.win_tie_loss[("two", "one")][theirs]
        assert (row.wins, row.ties, row.losses) == (wtl["W"], wtl["T"], wtl["L"])


# ---------------------------------------------------------------- batched resampling = scipy, bounded memory


def _mean_difference(x, y, axis):
    return np.mean(x - y, axis=axis)


#: per-query values as metrics give them: a coarse grid (many ties and zero differences) or any float
grid_values = hs.sampled_from([0.0, 0.1, 0.2, 1 / 3, 0.5, 2 / 3, 0.9, 1.0])
paired_values = hs.integers(2, 30).flatmap(lambda n: hs.tuples(
    hs.lists(grid_values | hs.floats(0, 1), min_size=n, max_size=n),
    hs.lists(grid_values | hs.floats(0, 1), min_size=n, max_size=n)))


@settings(max_examples=60)
@given(paired_values, hs.integers(1, 3000), hs.integers(0, 2 ** 32), hs.sampled_from([10 ** 9, 4096, 200]))
def test_randomization_p_value_is_scipys_for_any_seed_and_batch_size(pair, n_resamples, seed, memory):
    """Property: the batched p-value equals scipy.stats.permutation_test's, bit for bit, whatever the batch size.

    Same seed, same sign flips, same sums (sequential over queries, as in scipy's layout), same
    tolerance for ties: exact equality, also for the exact test (2^n <= n_resamples) and with the
    smallest batches (memory=200 bytes: two resamples per batch).
    """
    x, y = map(np.array, pair)
    d = x - y
    assume(d.any())
    expected = st.permutation_test((x, y), _mean_difference, permutation_type="samples", vectorized=True,
                                   n_resamples=n_resamples, rng=np.random.default_rng(seed)).pvalue
    got = randomization_pvalues(d[None, :], n_resamples=n_resamples, seed=seed, memory=memory)[0]
    assert got == expected


def test_sign_flips_are_the_draws_scipy_makes():
    """scipy swaps a pair when ``rng.permuted`` reorders [0, 1]: exactly when the 32-bit draw is even.

    This is the one fact about numpy's generator the batched test relies on; if numpy changed it,
    this test (and the one above) would fail rather than the p-values drifting silently.
    """
    pairs = np.tile(np.arange(2, dtype=np.int8), (50, 300, 1))
    swapped_by_scipy = np.random.default_rng(11).permuted(pairs, axis=-1)[..., 0] == 1
    draws = np.random.default_rng(11).integers(0, 2 ** 32, size=(50, 300), dtype=np.uint32)
    assert np.array_equal(swapped_by_scipy, draws % 2 == 0)


def test_randomization_rows_share_the_sign_flips_of_separate_scipy_calls():
    """Several differences in one call: each p-value equals its own seeded scipy call (the same flips)."""
    rng = np.random.default_rng(4)
    x = np.round(rng.random((7, 40)), 1)
    y = np.round(rng.random(40), 1)
    got = randomization_pvalues(x - y, n_resamples=4000, seed=9, memory=50_000)
    for row, p in zip(x, got):
        assert p == st.permutation_test((row, y), _mean_difference, permutation_type="samples", vectorized=True,
                                        n_resamples=4000, rng=np.random.default_rng(9)).pvalue


@settings(max_examples=40)
@given(paired_values, hs.integers(1, 2000), hs.integers(0, 2 ** 32), hs.sampled_from([0.8, 0.9, 0.95, 0.99]),
       hs.sampled_from([10 ** 9, 300]))
def test_bootstrap_intervals_are_scipys(pair, n_resamples, seed, confidence, memory):
    """Property: the batched intervals equal scipy.stats.bootstrap's for the same seed.

    Paired difference (``paired=True``) and each system's own mean (one sample): the same
    resamples and the same means, so the percentile ends are identical; BCa's acceleration comes
    from the closed-form jackknife instead of n leave-one-out means, equal to rounding, so the BCa
    ends agree to 1e-12 (relative; a few ulps near 0). Where a bootstrap mean equals the observed one up to
    rounding but not exactly, scipy's bias correction puts it on one side by the accident of the rounding and
    ours counts it as a tie (the intervals then do not depend on the order of the additions): BCa is
    compared there with the tie counted half (scipy's distribution, the tolerant count).
    """
    x, y = map(np.array, pair)
    assume(np.ptp(x - y) > 0 and np.ptp(x) > 0)
    for method in ("percentile", "BCa"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy's DegenerateDataWarning: the interval is nan for both
            paired = st.bootstrap((x, y), _mean_difference, paired=True, vectorized=True, n_resamples=n_resamples,
                                  confidence_level=confidence, method=method, rng=np.random.default_rng(seed))
            single = st.bootstrap((x,), np.mean, vectorized=True, n_resamples=n_resamples,
                                  confidence_level=confidence, method=method, rng=np.random.default_rng(seed))
        mean_x, _, difference = bootstrap_intervals(np.stack([x, y]), [(0, 1)], confidence=confidence,
                                                    n_resamples=n_resamples, seed=seed, method=method, memory=memory)
        for got, want, result, column, scale in (
                (difference, paired.confidence_interval, paired, x - y, np.abs(x).max() + np.abs(y).max()),
                (mean_x, single.confidence_interval, single, x, np.abs(x).max())):
            width = _tie_width(len(x), scale)
            if method == "percentile":
                assert got == tuple(map(float, want))
            elif not _rounding_ties(result.bootstrap_distribution, column.mean(), width):
                np.testing.assert_allclose(got, tuple(want), rtol=1e-12, atol=1e-15)
            else:
                np.testing.assert_allclose(got, _bca_counting_ties(result.bootstrap_distribution, column,
                                                                   confidence, width), rtol=1e-12, atol=1e-15)


def _tie_width(n: int, scale: float) -> float:
    """How close to the observed mean a bootstrap mean of n values of at most ``scale`` ties it up to rounding:
    4 n eps scale, bootstrap_intervals' documented rule (an absolute 1e-9 took means of values near 1e-12, whole
    steps of the distribution apart, for ties)."""
    return 4 * n * float(np.finfo(np.float64).eps) * scale


def _rounding_ties(distribution: np.ndarray, observed: float, width: float) -> bool:
    """Whether a bootstrap mean is within ``width`` of the observed one without being equal to it."""
    close = np.abs(distribution - observed) <= width
    return bool(np.any(close & (distribution != observed)))


def _bca_counting_ties(distribution: np.ndarray, column: np.ndarray, confidence: float,
                       width: float) -> tuple[float, float]:
    """BCa (Efron and Tibshirani 14.3) over scipy's bootstrap means, z0 counting the means within ``width`` of the
    observed one as ties, a from the n leave-one-out means."""
    from scipy.special import ndtr, ndtri

    observed, n = column.mean(), len(column)
    below = np.count_nonzero(distribution < observed - width)
    share = (below + np.count_nonzero(distribution <= observed + width)) / (2 * len(distribution))
    leave_one_out = (column.sum() - column) / (n - 1)
    u = leave_one_out.mean() - leave_one_out
    a = np.sum(u ** 3) / (6 * np.sum(u ** 2) ** 1.5)
    z0, z = ndtri(share), ndtri((1 - confidence) / 2)
    low, high = ndtr(z0 + (z0 + z) / (1 - a * (z0 + z))), ndtr(z0 + (z0 - z) / (1 - a * (z0 - z)))
    if not (np.isfinite(low) and np.isfinite(high)):
        return math.nan, math.nan
    return tuple(float(v) for v in np.quantile(distribution, [low, high]))  # type: ignore[return-value]


def test_bootstrap_means_do_not_depend_on_the_batch_size():
    """One resample per batch or all at once: the same bootstrap distribution, value for value."""
    values = np.random.default_rng(2).random((3, 50))
    whole = bootstrap_means(values, [(0, 1), (2, 0)], n_resamples=777, seed=5, memory=10 ** 9)
    tiny = bootstrap_means(values, [(0, 1), (2, 0)], n_resamples=777, seed=5, memory=1)
    assert whole.shape == (5, 777) and np.array_equal(whole, tiny)


@settings(max_examples=25, deadline=None)
@given(hs.integers(2, 5), hs.integers(2, 60), hs.integers(1, 600), hs.integers(0, 2 ** 32), hs.sampled_from([1, 3000]))
def test_columns_shared_between_threads_give_the_one_thread_numbers_and_scipys(metrics, n, n_resamples, seed, memory):
    """Property: with the columns of several metrics (linked groups) and the rows of several differences shared
    between two threads, every bootstrap mean and every randomization p-value is the one-thread value, bit for
    bit, and the p-values stay scipy's (the same draws, the same sums in the same order)."""
    rng = np.random.default_rng(seed % 1000)
    values = np.round(rng.random((3 * metrics, n)), 1)
    differences = [(3 * m + s, 3 * m) for m in range(metrics) for s in (1, 2)]
    one = bootstrap_means(values, differences, n_resamples=n_resamples, seed=seed, memory=memory, threads=1)
    two = bootstrap_means(values, differences, n_resamples=n_resamples, seed=seed, memory=memory, threads=2)
    assert np.array_equal(one, two)
    d = np.stack([values[i] - values[j] for i, j in differences])
    shared = randomization_pvalues(d, n_resamples=n_resamples, seed=seed, memory=memory, threads=2)
    assert np.array_equal(shared, randomization_pvalues(d, n_resamples=n_resamples, seed=seed, memory=memory,
                                                        threads=1))
    i, j = differences[-1]
    if d[-1].any():
        assert shared[-1] == st.permutation_test((values[i], values[j]), _mean_difference, permutation_type="samples",
                                                 vectorized=True, n_resamples=n_resamples,
                                                 rng=np.random.default_rng(seed)).pvalue


def test_jackknife_acceleration_equals_the_leave_one_out_means():
    """a from U_i = x_i - mean(x) equals a from the n leave-one-out means (Efron & Tibshirani 14.15)."""
    x = np.random.default_rng(8).random(25) ** 3
    n = len(x)
    loo = np.array([np.delete(x, i).mean() for i in range(n)])
    u = (n - 1) * (loo.mean() - loo)
    expected = np.sum(u ** 3) / (6 * np.sum(u ** 2) ** 1.5)
    assert jackknife_acceleration(x) == pytest.approx(expected, rel=1e-10)
    # hand-computed: x = (0, 0, 0, 1), U = (-.25, -.25, -.25, .75): a = .375 / (6 * .75^1.5) = 0.0962250
    assert jackknife_acceleration([0, 0, 0, 1]) == pytest.approx(0.375 / (6 * 0.75 ** 1.5))


def _peak(function):
    """Peak memory (tracemalloc, which sees numpy's buffers) allocated while ``function`` runs."""
    import tracemalloc

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        function()
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_resampling_memory_is_bounded_by_the_budget_not_by_resamples_times_queries():
    """2,000 queries x 20,000 resamples is 320 MB as one scipy array; with a 1 MiB budget the batched
    randomization test stays under 2 MiB, and the bootstrap under 2 MiB plus its 3 x 20,000 means."""
    d = np.random.default_rng(0).random((2, 2000)) - 0.5
    budget = 2 ** 20
    assert _peak(lambda: randomization_pvalues(d, n_resamples=20_000, seed=0, memory=budget)) < 2 * budget
    means = 3 * 20_000 * 8
    assert _peak(lambda: bootstrap_means(d, [(0, 1)], n_resamples=20_000, seed=0, memory=budget)) < 2 * budget + means


def test_mean_ci_equals_scipy_bootstrap_of_the_mean():
    """One system's interval is scipy.stats.bootstrap((values,), np.mean) with the same seed: the same bootstrap
    means and BCa, except that A's values (hundredths) give bootstrap means equal to the observed mean up to
    rounding, which scipy puts on one side by the accident of the rounding and mean_ci counts as ties (scipy's
    own interval is 0.0004 away; with the ties counted half, scipy's distribution gives mean_ci's)."""
    res = st.bootstrap((np.array(A),), np.mean, vectorized=True, n_resamples=2500, confidence_level=0.9,
                       rng=np.random.default_rng(3))
    width = _tie_width(len(A), max(A))
    assert _rounding_ties(res.bootstrap_distribution, np.mean(A), width)
    assert mean_ci(A, confidence=0.9, n_resamples=2500, seed=3) == pytest.approx(
        _bca_counting_ties(res.bootstrap_distribution, np.array(A), 0.9, width), rel=1e-12)
    assert mean_ci(A, confidence=0.9, n_resamples=2500, seed=3) != pytest.approx(tuple(res.confidence_interval),
                                                                                  abs=1e-4)
    assert mean_ci([0.5] * 6) == (0.5, 0.5)
    assert all(math.isnan(v) for v in mean_ci([0.5]))


# ---------------------------------------------------------------- Wilcoxon, Bonferroni

def test_wilcoxon_matches_hand_computed_exact_p_and_leaves_zero_differences_out():
    """d = (.3, .2, .1, .1, .8): all five positive, no tie among... ranks 1.5, 1.5 tie -> scipy's normal
    approximation; d = (.3, .2, .1, .4, .8): no ties, all positive, so W- = 0 and the exact two-sided
    p = 2 / 2^5 = 0.0625. Zero differences appended change nothing (left out before ranking)."""
    a, b = [0.5, 0.6, 0.2, 0.8, 0.9], [0.2, 0.4, 0.1, 0.4, 0.1]
    assert wilcoxon_test(a, b) == pytest.approx(2 / 32)
    assert wilcoxon_test(a + [0.3, 0.7], b + [0.3, 0.7]) == pytest.approx(2 / 32)
    assert wilcoxon_test(A, A) == 1.0 and math.isnan(wilcoxon_test([0.1], [0.2]))


@pytest.mark.slow
@settings(max_examples=25)
@given(hs.integers(2, 11).flatmap(lambda n: hs.tuples(hs.lists(grid_values | hs.floats(0, 1), min_size=n, max_size=n),
                                                       hs.lists(grid_values, min_size=n, max_size=n))) | paired_values)
def test_wilcoxon_equals_scipy_wilcoxon(pair):
    """Property: whenever some difference is not 0, the p-value is scipy.stats.wilcoxon's (zero_method="wilcox").

    Small samples with zero or tied differences take our vectorised enumeration of the sign flips
    (scipy's own loop over them is what makes this test slow); the rest is scipy's call itself.
    """
    x, y = pair
    assume(any(u != v for u, v in zip(x, y)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = st.wilcoxon(x, y, zero_method="wilcox").pvalue
    assert wilcoxon_test(x, y) == pytest.approx(expected, rel=1e-12, nan_ok=True)


def test_bonferroni_matches_hand_computed_values():
    """m = 4: (.01, .04, .03, .3) x 4 = (.04, .16, .12, 1 capped); nan stays nan and is not counted."""
    assert bonferroni([0.01, 0.04, 0.03, 0.3]) == pytest.approx([0.04, 0.16, 0.12, 1.0])
    out = bonferroni([0.01, math.nan])
    assert out[0] == pytest.approx(0.01) and math.isnan(out[1])


#: p-values from 1e-300 to 1: the smallest ones are what a strong difference over many queries gives
tiny_to_one = hs.one_of(hs.floats(0, 1), hs.floats(1e-300, 1e-12), hs.sampled_from([0.0, 1e-20, 4.9e-16, 1.0]))


@given(hs.lists(tiny_to_one, min_size=1, max_size=25))
def test_holm_and_bonferroni_are_statsmodels_multipletests_to_the_last_bit(ps):
    """Property: the adjusted p-values are statsmodels' (``multipletests``, holm and bonferroni) exactly, tiny ones
    included: a p-value of 1e-20 in a family of 4 adjusts to 4e-20, not to 0.

    statsmodels' Holm calls ``gc.collect()`` on every call (0.15 s in a heap as large as the whole suite's): the
    oracle runs with that call made a no-op, which changes none of its numbers."""
    from unittest import mock

    from statsmodels.stats.multitest import multipletests

    with mock.patch("gc.collect"):
        for name, ours in (("holm", holm), ("bonferroni", bonferroni)):
            assert ours(ps) == [float(p) for p in multipletests(ps, method=name)[1]]


def test_an_adjusted_p_value_below_5e_16_is_not_zero():
    """Four p-values with one of 1e-20: Holm and Bonferroni give 4e-20 (the float product), never 0.0."""
    assert holm([1e-20, 0.2, 0.3, 0.4])[0] == 4e-20
    assert bonferroni([1e-20, 0.2, 0.3, 0.4])[0] == 4e-20


@given(hs.lists(hs.floats(0, 1), min_size=1, max_size=20))
def test_bonferroni_is_at_least_holm(ps):
    """Holm is uniformly more powerful than Bonferroni: p <= Holm(p) <= Bonferroni(p)."""
    for p, h, b in zip(ps, holm(ps), bonferroni(ps)):
        assert p - 1e-12 <= h <= b + 1e-12


# ---------------------------------------------------------------- one declared rule per parameter

@pytest.mark.parametrize("name, value", [
    ("alpha", 0), ("alpha", 1), ("alpha", 1.5), ("alpha", math.nan), ("alpha", True), ("alpha", "0.05"),
    ("confidence", 0.0), ("confidence", 95), ("n_resamples", 0), ("n_resamples", MAX_RESAMPLES + 1),
    ("n_resamples", 10 ** 12), ("n_resamples", 1e4), ("seed", -1), ("seed", 1.5), ("seed", None),
    ("test", "wilcox"), ("correction", "fdr"), ("ci_method", "bca"),
])
def test_comparison_parameters_refuse_bad_values_with_the_rule_and_the_value(name, value):
    """Every bad value is refused by its one rule, with what was expected and what was got."""
    rule = COMPARISON_PARAMETERS[name]
    with pytest.raises(eb.InputError, match=rf"{name} must be {re.escape(rule.describe())}; got "):
        check_comparison_parameters(**{name: value})


def test_comparison_parameters_accept_their_defaults_and_say_where_an_error_is():
    """Defaults pass; numpy integers are converted; a config file's place and key are in the message."""
    defaults = {name: rule.default for name, rule in COMPARISON_PARAMETERS.items()}
    assert check_comparison_parameters(**defaults) == defaults
    assert type(check_comparison_parameters(seed=np.int64(3))["seed"]) is int
    with pytest.raises(eb.InputError, match=r"eval\.yaml:9: comparison\.n_resamples must be an integer in "
                                            r"\[1, 1000000\]; got 1000000000000\. Fix: "):
        COMPARISON_PARAMETERS["n_resamples"].check(10 ** 12, source="eval.yaml", line=9, key="comparison.n_resamples")


def test_huge_n_resamples_is_refused_before_any_work():
    """n_resamples = 10^12 (once a 14.6 TiB allocation) is refused with the bound, by every entry point."""
    for call in (lambda: randomization_test(A, B, n_resamples=10 ** 12),
                 lambda: bootstrap_ci(A, B, n_resamples=10 ** 12),
                 lambda: compare_systems({"b": _fake({"m": B}), "o": _fake({"m": A})}, ["m"], n_resamples=10 ** 12)):
        with pytest.raises(eb.InputError, match=r"n_resamples must be an integer in \[1, 1000000\]"):
            call()


# ---------------------------------------------------------------- pairs, families, letters, tables

def _systems(n_queries=40, seed=3):
    """Four systems on two metrics: 'best' >> 'good' >> 'base', 'noise' = base + noise."""
    rng = np.random.default_rng(seed)
    base = rng.random(n_queries) * 0.5
    values = {"base": base, "good": base + 0.15 + rng.normal(0, 0.03, n_queries),
              "best": base + 0.4 + rng.normal(0, 0.03, n_queries), "noise": base + rng.normal(0, 0.1, n_queries)}
    return {name: _fake({"m1": list(v), "m2": list(v * 0.5)}) for name, v in values.items()}


def test_every_row_is_the_scipy_result_for_its_pair():
    """Each row's randomization p-value and bootstrap CI are the seeded scipy calls on that pair's values."""
    systems = _systems()
    cmp = compare_systems(systems, ["m1", "m2"], baseline="base", n_resamples=1500, seed=4, test="randomization")
    def in_id_order(values: dict) -> np.ndarray:  # queries are resampled in the order of their ids
        return np.array([values[q] for q in sorted(values)])

    for row in cmp.rows:
        a, b = (in_id_order(systems[s][row.metric]) for s in (row.system, row.baseline))
        p = st.permutation_test((a, b), _mean_difference, permutation_type="samples", vectorized=True,
                                n_resamples=1500, rng=np.random.default_rng(4)).pvalue
        ci = st.bootstrap((a, b), _mean_difference, paired=True, vectorized=True, n_resamples=1500,
                          rng=np.random.default_rng(4)).confidence_interval
        assert row.p_randomization == p
        assert (row.ci_low, row.ci_high) == pytest.approx(tuple(ci), rel=1e-12)
        assert row.p_wilcoxon == pytest.approx(st.wilcoxon(a, b).pvalue, rel=1e-12)
    for interval in cmp.intervals:
        values = in_id_order(systems[interval.system][interval.metric])
        ci = st.bootstrap((values,), np.mean, vectorized=True, n_resamples=1500,
                          rng=np.random.default_rng(4)).confidence_interval
        assert (interval.ci_low, interval.ci_high) == pytest.approx(tuple(ci), rel=1e-12)
        assert interval.mean == pytest.approx(values.mean()) and interval.n == 40


@settings(max_examples=25, deadline=None)
@given(order=hs.permutations(range(40)))
def test_the_order_results_list_their_queries_in_changes_no_number(order: list) -> None:
    """Local results list queries in qrels order, Spark's sorted by id: one seed, one set of numbers."""
    systems = _systems()
    shuffled = {name: {m: {f"q{i}": values[m][f"q{i}"] for i in order} for m in values}
                for name, values in systems.items()}
    options = dict(baseline="base", n_resamples=300, seed=9, test="randomization")
    assert compare_systems(shuffled, ["m1"], **options).rows == compare_systems(systems, ["m1"], **options).rows
    assert compare_systems(shuffled, ["m1"], **options).intervals == \
        compare_systems(systems, ["m1"], **options).intervals


def test_all_pairs_compares_each_pair_once_and_corrects_over_the_whole_family():
    """baseline=None: 4 systems give 6 pairs x 2 metrics = 12 rows, later system vs earlier; Holm over all 12."""
    cmp = compare_systems(_systems(), ["m1", "m2"], n_resamples=200)
    assert len(cmp.rows) == 12 and cmp.baselines == () and cmp.baseline is None
    assert {(r.system, r.baseline) for r in cmp.rows} == {("good", "base"), ("best", "base"), ("noise", "base"),
                                                          ("best", "good"), ("noise", "good"), ("noise", "best")}
    assert [r.p_adjusted for r in cmp.rows] == pytest.approx(holm([r.p_t for r in cmp.rows]))
    assert "all pairs" in cmp.describe() and "12 comparisons (6 pairs x 2 metrics" in cmp.describe()


def test_several_baselines_compare_each_pair_once():
    """baseline=[base, good]: base vs the 3 others, then good vs best and noise (good vs base is not repeated)."""
    cmp = compare_systems(_systems(), ["m1"], baseline=["base", "good"], correction="bonferroni", n_resamples=200)
    assert [(r.system, r.baseline) for r in cmp.rows] == [("good", "base"), ("best", "base"), ("noise", "base"),
                                                          ("best", "good"), ("noise", "good")]
    assert [r.p_adjusted for r in cmp.rows] == pytest.approx(bonferroni([r.p_t for r in cmp.rows]))
    assert "vs baselines 'base', 'good'" in cmp.describe()


def test_letters_mark_the_systems_a_cell_is_significantly_better_than():
    """Like ranx: base = a, good = b, best = c, noise = d; best beats a, b and d; good beats a and d;
    a and d beat nobody."""
    cmp = compare_systems(_systems(), ["m1"], n_resamples=200)
    assert cmp.letters == {"base": "a", "good": "b", "best": "c", "noise": "d"}
    assert cmp.better_than("best", "m1") == ("base", "good", "noise")
    assert cmp.better_than("good", "m1") == ("base", "noise")
    assert cmp.better_than("base", "m1") == () and cmp.better_than("noise", "m1") == ()
    assert cmp.marker("best", "m1", style="letters") == "ᵃᵇᵈ"
    assert cmp.marker("best", "m1", style="letters", fmt="latex") == "$^{abd}$"
    assert cmp.marker("best", "m1", style="letters", fmt="html") == "<sup>abd</sup>"


@settings(max_examples=30)
@given(hs.integers(2, 5).flatmap(lambda k: hs.lists(hs.lists(hs.floats(0, 1), min_size=12, max_size=12),
                                                    min_size=k, max_size=k)),
       hs.lists(hs.sampled_from([0.0, 0.3, 0.6]), min_size=5, max_size=5))
def test_better_than_is_a_strict_order_of_significant_wins(columns, shifts):
    """Property: a system never beats itself, and never beats a system that beats it, on any comparison."""
    systems = {f"s{i}": _fake({"m": [v + shift for v in column]})
               for i, (column, shift) in enumerate(zip(columns, shifts))}
    cmp = compare_systems(systems, ["m"], correction="none", n_resamples=50)
    for s in systems:
        assert s not in cmp.better_than(s, "m")
        for t in cmp.better_than(s, "m"):
            assert s not in cmp.better_than(t, "m")


def test_comparison_renders_tables_with_markers_and_a_footnote():
    """print, Markdown, LaTeX and HTML show every system's mean with its markers, the test and the provenance."""
    qrels = {f"q{i}": {"d1": 1, "d2": 1} for i in range(8)}
    runs = {"bm25": {q: {"d3": 0.9, "d1": 0.5} for q in qrels}, "dense": {q: {"d1": 0.9, "d2": 0.8} for q in qrels}}
    cmp = eb.compare(qrels, runs, ["P@1", "RR"], baseline="bm25", test="randomization", n_resamples=500)
    text = str(cmp)
    assert "1.0000▲" in text and "randomization" in text and "Holm" in text and "backend" in text
    assert "a" in text.splitlines()[2].split() and "bm25" in text
    assert "1.0000ᵃ" in cmp.to_markdown(markers="letters") and cmp.to_markdown().startswith("|")
    latex = cmp.to_latex()
    assert r"\toprule" in latex and r"1.0000$^{\uparrow}$" in latex and r"\caption{$\uparrow$/$\downarrow$" in latex
    assert "<table>" in cmp._repr_html_() and "<small>" in cmp._repr_html_()
    assert repr(cmp) == ("Comparison(2 systems x 2 metrics, baselines=['bm25'], test='randomization', "
                         "correction='holm': 2/2 significant at 0.05)")
    systems = cmp.to_frame(table="systems")
    assert list(systems["letter"]) == ["a", "b", "a", "b"] and {"mean", "ci_low", "ci_high"} <= set(systems)
    with pytest.raises(eb.InputError, match="unknown marker style"):
        cmp.to_markdown(markers="stars")


@settings(max_examples=25)
@given(hs.text(hs.characters(exclude_categories=("Cs",)), min_size=1, max_size=8))
def test_a_system_name_stays_in_its_cell_in_every_table_format(name):
    """Property: whatever a system is called (pipes, backslashes, line breaks, LaTeX specials, markup), the
    Markdown table keeps its columns, the text table its rows, the LaTeX and HTML tables escape it."""
    import html

    from evalbridge.common.escaping import latex_escape

    other = "base" if name != "base" else "other"
    cmp = compare_systems({other: _fake({"m": [0.0, 0.5, 1.0]}), name: _fake({"m": [1.0, 0.5, 0.0]})}, ["m"],
                          correction="none", n_resamples=20)
    table = cmp.to_markdown().split("\n\n")[0].split("\n")
    assert len(table) == 4 and all(row.replace("\\|", "").count("|") == 4 for row in table)
    assert len(str(cmp).split("\n\n")[0].split("\n")) == 4
    assert f" & {latex_escape(name)} & " in cmp.to_latex()
    assert f"<td>{html.escape(name)}</td>" in cmp.to_html()


def test_report_marks_significance_with_letters_on_request():
    """Report(markers="letters"): systems get their letter, cells carry superscripts; the default stays arrows."""
    from evalbridge.reports.report import Report, render

    qrels = {f"q{i}": {"d1": 1, "d2": 1} for i in range(8)}
    runs = {"bm25": {q: {"d3": 0.9, "d1": 0.5} for q in qrels}, "dense": {q: {"d1": 0.9, "d2": 0.8} for q in qrels}}
    results = {name: eb.evaluate(qrels, run, ["P@1"]) for name, run in runs.items()}
    cmp = compare_systems(results, ["P@1"], baseline="bm25", n_resamples=200)
    letters = Report(results=results, comparison=cmp, markers="letters")
    terminal = render(letters, "terminal")
    assert "dense (b)" in terminal and "1.0000ᵃ" in terminal and "superscript letters" in terminal
    assert r"1.0000$^{a}$" in render(letters, "latex")
    assert "1.0000▲" in render(Report(results=results, comparison=cmp), "markdown")
    with pytest.raises(eb.InputError, match="unknown marker style"):
        Report(results=results, comparison=cmp, markers="stars")


def test_unpaired_queries_are_counted_not_dropped_silently():
    """A system evaluated on fewer queries: its pair uses the common ones and counts the others."""
    base = {"m": {"q1": 0.0, "q2": 1.0, "q3": 0.5, "q4": 0.2}}
    other = {"m": {"q1": 1.0, "q2": 1.0, "q9": 0.0}}
    cmp = compare_systems({"b": base, "o": other}, ["m"], baseline="b", n_resamples=100)
    row = cmp.rows[0]
    assert (row.n, row.unpaired) == (2, 3)   # q3, q4 only in b; q9 only in o
    assert cmp.interval("b", "m").n == 4 and cmp.interval("o", "m").n == 3
    assert "3 (pair, metric, query) values without a partner" in cmp.describe()


def test_compare_does_not_change_its_inputs():
    """The per-query mappings given are left as they were."""
    import copy

    systems = _systems()
    before = copy.deepcopy(systems)
    compare_systems(systems, ["m1", "m2"], n_resamples=100)
    assert systems == before


@settings(max_examples=15)
@given(qrels_and_run(max_queries=6), qrels_and_run(max_queries=6))
def test_one_call_compare_equals_evaluate_then_compare_systems(first, second):
    """Property: eb.compare(qrels, runs, ...) = evaluate each run, then compare_systems with resolved labels."""
    qrels, run_a = first
    _, run_b = second
    run_b = {q: scores for q, scores in run_b.items() if q in qrels}
    metrics = ["P@2", "nDCG@3"]
    cmp = eb.compare(qrels, {"a": run_a, "b": run_b}, metrics, baseline="a", n_resamples=50, seed=1)
    results = {name: eb.evaluate(qrels, run, metrics) for name, run in (("a", run_a), ("b", run_b))}
    expected = compare_systems(results, metrics, baseline="a", n_resamples=50, seed=1)
    assert cmp.to_dict() == expected.to_dict()


def test_one_call_compare_refuses_bad_arguments_before_evaluating():
    """A single run, an unknown baseline or a bad alpha fail at once, with the fix."""
    qrels = {"q1": {"d1": 1}}
    run = {"q1": {"d1": 1.0}}
    with pytest.raises(eb.InputError, match="at least two systems"):
        eb.compare(qrels, {"only": run}, ["P@1"])
    with pytest.raises(eb.InputError, match="baseline 'bm26'"):
        eb.compare(qrels, {"bm25": run, "dense": run}, ["P@1"], baseline="bm26")
    with pytest.raises(eb.InputError, match=r"alpha must be a number in \(0, 1\)"):
        eb.compare(qrels, {"bm25": run, "dense": run}, ["P@1"], alpha=5)


@pytest.mark.slow
def test_letters_and_all_pairs_agree_with_ranx_compare():
    """ranx.compare (Student t, no correction, max_p) marks the same letters and the same all-pairs p-values."""
    ranx = pytest.importorskip("ranx")
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{q}": {d: rng.choice([0, 1, 1, 2]) for d in rng.sample(docs, 8)} for q in range(40)}
    runs = {}
    for name, skill in (("one", 0.0), ("two", 1.0), ("three", 3.0)):
        runs[name] = {q: {d: float(rng.random() + skill * qrels[q].get(d, 0)) for d in rng.sample(docs, 15)}
                      for q in qrels}
    report = ranx.compare(ranx.Qrels(qrels), [ranx.Run(r, name=n) for n, r in runs.items()], ["ndcg@10"],
                          stat_test="student", max_p=0.05)
    cmp = eb.compare(qrels, runs, ["nDCG@10"], correction="none", alpha=0.05, n_resamples=100)
    for row in cmp.rows:
        theirs = report.comparisons[(row.system, row.baseline)]["ndcg@10"]["p_value"]
        assert row.p_t == pytest.approx(float(theirs), rel=1e-9)
    for name in runs:
        assert "".join(cmp.letters[s] for s in cmp.better_than(name, "nDCG@10")) == \
            report.get_superscript_for_latex(name, "ndcg@10")


@settings(max_examples=80, deadline=None)
@given(hs.integers(2, 40).flatmap(lambda n: hs.lists(hs.lists(grid_values, min_size=n, max_size=n), min_size=2,
                                                     max_size=3)),
       hs.integers(1, 1500), hs.integers(0, 2 ** 32), hs.sampled_from(["BCa", "percentile"]))
def test_bootstrap_intervals_do_not_depend_on_the_order_of_the_additions(rows, n_resamples, seed, method):
    """Property: gathered (each resample's values summed in the resample's order) or counted (how often each
    query was drawn, times its value), the same resamples give the same intervals to rounding, tied values
    included: BCa's bias correction counts a bootstrap mean equal to the observed one up to rounding as a tie."""
    x = np.array(rows)
    differences = [(i, j) for i in range(len(x)) for j in range(len(x)) if i != j]
    options = dict(confidence=0.95, n_resamples=n_resamples, seed=seed, method=method)
    gathered = bootstrap_intervals(x, differences, **options)
    counted = bootstrap_intervals(x, differences, counted=True, **options)
    np.testing.assert_allclose(counted, gathered, rtol=0, atol=1e-12)
