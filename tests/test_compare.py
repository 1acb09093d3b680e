"""System comparison: paired tests, corrections, effect sizes, win/tie/loss (evalbridge.stats.compare)."""

from __future__ import annotations

import math
import random
import warnings

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import assume, given, settings
from hypothesis import strategies as hs

import evalbridge as eb
from evalbridge.stats.compare import (
    benjamini_hochberg, bootstrap_ci, compare_systems, effect_size, holm, paired_t_test, randomization_test,
    win_tie_loss,
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
    ({"baseline": "b", "test": "wilcoxon"}, "unknown test"),
    ({"baseline": "b", "correction": "bonferroni"}, "unknown correction"),
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
