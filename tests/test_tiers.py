"""Tiers and rank intervals of many systems: the simultaneous tests of all pairs against independent
implementations of their papers' algorithms and statsmodels' Tukey HSD, the letters against the maximal cliques of
the pairs no test separates, the rank intervals against a plain-numpy bootstrap, and bad input refused."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.reports.report import Report
from evalbridge.decisions.tiers import tiers
from evalbridge.stats.tiers import bootstrap_means, hsd_pvalues, min_ranks, rank_intervals, tiers_of, two_way_residual

#: Table 5.1 of Sakai's book (Laboratory Experiments in Information Retrieval): three systems on 20 topics
SAKAI_TABLE_5_1 = (
    (0.70, 0.30, 0.20, 0.60, 0.40, 0.40, 0.00, 0.70, 0.10, 0.30, 0.50, 0.40, 0.00, 0.60, 0.50, 0.30, 0.10, 0.50, 0.20,
     0.10),
    (0.50, 0.10, 0.00, 0.20, 0.40, 0.30, 0.00, 0.50, 0.30, 0.30, 0.40, 0.40, 0.10, 0.40, 0.20, 0.10, 0.10, 0.60, 0.30,
     0.20),
    (0.00, 0.00, 0.20, 0.10, 0.30, 0.30, 0.10, 0.20, 0.40, 0.40, 0.40, 0.30, 0.30, 0.20, 0.20, 0.20, 0.10, 0.50, 0.40,
     0.30),
)

#: matrices of eighths (the oracles below compute in exact fractions; ties of the resampled ranges are common)
eighths = st.integers(2, 5).flatmap(lambda m: st.integers(2, 9).flatmap(lambda n: st.lists(
    st.lists(st.integers(0, 8).map(lambda k: k / 8), min_size=n, max_size=n), min_size=m, max_size=m)))


def _generators(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    first, second = np.random.SeedSequence(seed).spawn(2)
    return np.random.default_rng(first), np.random.default_rng(second)


def carterette_randomised_hsd(x: list[list[float]], resamples: int, seed: int) -> list[list[float]]:
    """Carterette (TOIS 2012), the randomised Tukey HSD, written out loop by loop: for each trial, shuffle the systems'
    values within every topic, take the largest and smallest mean; a pair's p-value is the share of trials whose
    max - min reaches the pair's |difference| (counting the observed arrangement: (1 + hits) / (1 + trials)).
    The shuffles: one permutation of the systems per topic, the ones ``rng.permuted`` of the first generator draws."""
    m, n = len(x), len(x[0])
    exact = [[Fraction(v) for v in row] for row in x]
    rng, _ = _generators(seed)
    ranges = []
    for _ in range(resamples):
        where = rng.permuted(np.repeat(np.arange(m)[:, None], n, axis=1), axis=0)
        means = [sum(exact[int(where[i][q])][q] for q in range(n)) / n for i in range(m)]
        ranges.append(max(means) - min(means))
    observed = [sum(row) / n for row in exact]
    return [[1.0 if i == j else (1 + sum(r >= abs(observed[i] - observed[j]) for r in ranges)) / (1 + resamples)
             for j in range(m)] for i in range(m)]


def max_statistic_bootstrap(x: list[list[float]], resamples: int, seed: int) -> tuple[list[list[float]], np.ndarray]:
    """The bootstrap of the maximum statistic in plain numpy: resample the topics with replacement (the second
    generator's ``integers(0, n, size=(resamples, n))``), centre each system's mean on its observed one; a pair's
    p-value is the share of resamples whose largest centred difference reaches the pair's |difference|."""
    a = np.array(x)
    m, n = a.shape
    _, rng = _generators(seed)
    picked = rng.integers(0, n, size=(resamples, n))
    means = a[:, picked].mean(axis=2).T                       # (resamples, systems)
    exact = [[Fraction(v) for v in row] for row in x]
    observed = [sum(row) / n for row in exact]
    ranges = []
    for draw in picked.tolist():
        centred = [sum(exact[i][q] for q in draw) / n - observed[i] for i in range(m)]
        ranges.append(max(centred) - min(centred))
    p = [[1.0 if i == j else (1 + sum(r >= abs(observed[i] - observed[j]) for r in ranges)) / (1 + resamples)
          for j in range(m)] for i in range(m)]
    return p, means


def maximal_cliques_letters(means: list[float], separated: list[list[bool]]) -> list[str]:
    """Compact letter display by brute force: every maximal set of systems no two of which are separated is a letter,
    lettered in the order of its best system's place by mean (ties: the given order)."""
    m = len(means)
    order = sorted(range(m), key=lambda i: (-means[i], i))
    place = {s: k for k, s in enumerate(order)}
    cliques = [set(c) for size in range(m, 0, -1) for c in itertools.combinations(range(m), size)
               if all(not separated[i][j] for i, j in itertools.combinations(c, 2))]
    maximal = [c for c in cliques if not any(c < other for other in cliques)]
    maximal.sort(key=lambda c: sorted(place[s] for s in c))
    return ["".join(chr(ord("a") + k) for k, c in enumerate(maximal) if i in c) for i in range(m)]


@settings(max_examples=40, deadline=None)
@given(eighths, st.integers(0, 3))
def test_randomised_hsd_equals_carterettes_algorithm_written_out(x, seed) -> None:  # noqa: ANN001
    assert hsd_pvalues(x, method="randomization", n_resamples=60, seed=seed).tolist() == \
        carterette_randomised_hsd(x, 60, seed)


@settings(max_examples=40, deadline=None)
@given(eighths, st.integers(0, 3))
def test_max_statistic_bootstrap_and_rank_intervals_equal_a_plain_numpy_bootstrap(x, seed) -> None:  # noqa: ANN001
    p, means = max_statistic_bootstrap(x, 80, seed)
    assert hsd_pvalues(x, method="bootstrap", n_resamples=80, seed=seed).tolist() == p
    assert np.array_equal(bootstrap_means(x, n_resamples=80, seed=seed), means)
    ranks = np.array([[1 + sum(other > row[i] for other in row) for i in range(len(row))] for row in means])
    for confidence in (0.5, 0.9, 0.95):
        low, high = rank_intervals(means, confidence=confidence)
        ordered = np.sort(ranks, axis=0)      # inverted CDF: the smallest rank whose share reaches the level
        assert low.tolist() == ordered[math.ceil((1 - confidence) / 2 * len(ranks)) - 1].tolist()
        assert high.tolist() == ordered[math.ceil((1 + confidence) / 2 * len(ranks)) - 1].tolist()


def test_classical_tukey_equals_statsmodels_with_the_two_way_residual() -> None:
    """statsmodels' ``tukeyhsd`` (what ``pairwise_tukeyhsd`` runs) given the means, the topics, V_E and the
    residual's (m - 1)(n - 1) degrees of freedom (it takes df per group: df_total = m * df)."""
    from statsmodels.sandbox.stats.multicomp import tukeyhsd

    rng = np.random.default_rng(7)
    for m, n in ((3, 20), (5, 12), (8, 40)):
        x = rng.normal(0, 0.2, (m, n)) + rng.normal(0, 0.3, n)[None, :] + np.linspace(0, 0.15, m)[:, None]
        variance, df = two_way_residual(x)
        result = tukeyhsd(x.mean(axis=1), n, variance, df=df / m)
        (first, second), pvalues = result[0], result[8]
        ours = hsd_pvalues(x, method="tukey")
        assert np.allclose(ours[first, second], pvalues, rtol=1e-9, atol=1e-12)


def test_classical_tukey_of_sakais_table_equals_statsmodels_pairwise_on_the_adjusted_scores() -> None:
    """On Sakai's Table 5.1: V_E = 0.0219 as his book gives it; and pairwise_tukeyhsd on the scores with the topic
    effect removed (x_iq - mean_q + mean) gives the same differences and, with its one-way df = m(n - 1) in place of
    (m - 1)(n - 1), the studentized ranges scaled by sqrt of the two residual variances' ratio."""
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    x = np.array(SAKAI_TABLE_5_1)
    variance, df = two_way_residual(x)
    assert round(variance, 4) == 0.0219 and df == 38
    adjusted = x - x.mean(axis=0, keepdims=True) + x.mean()
    groups = np.repeat(["a", "b", "c"], x.shape[1])
    result = pairwise_tukeyhsd(adjusted.ravel(), groups)
    means = x.mean(axis=1)
    assert np.allclose(result.meandiffs, [means[1] - means[0], means[2] - means[0], means[2] - means[1]])
    one_way = variance * df / (3 * (x.shape[1] - 1))
    assert np.allclose(result.std_pairs, math.sqrt(one_way / x.shape[1]))


def test_randomised_and_bootstrap_hsd_approach_the_classical_test_on_normal_scores() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(0, 0.2, (4, 120)) + np.array([0, 0.02, 0.05, 0.06])[:, None] + rng.normal(0, 0.3, 120)[None, :]
    classical = hsd_pvalues(x, method="tukey")
    for method in ("randomization", "bootstrap"):
        assert np.abs(hsd_pvalues(x, method=method, n_resamples=20_000, seed=1) - classical).max() < 0.03


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=2, max_size=7), st.integers(0, 6))
def test_letters_are_the_maximal_sets_no_test_separates(means, threshold) -> None:  # noqa: ANN001
    """A simultaneous test separates a pair by |difference of means| alone (a larger one is never less separated):
    then the tiers are the maximal cliques of the pairs it leaves together, and two systems share a letter exactly
    when they are not separated."""
    m = len(means)
    separated = [[abs(means[i] - means[j]) > threshold for j in range(m)] for i in range(m)]
    p = [[0.01 if separated[i][j] else 0.5 for j in range(m)] for i in range(m)]
    letters = tiers_of(means, p, alpha=0.05)
    assert list(letters) == maximal_cliques_letters(means, separated)
    for i, j in itertools.combinations(range(m), 2):
        assert bool(set(letters[i]) & set(letters[j])) == (not separated[i][j])


@settings(max_examples=30, deadline=None)
@given(eighths, st.sampled_from(["randomization", "bootstrap", "tukey"]))
def test_pvalues_are_symmetric_probabilities_and_shift_free(x, method) -> None:  # noqa: ANN001
    p = hsd_pvalues(x, method=method, n_resamples=50, seed=0)
    assert np.array_equal(p, p.T) and (np.diag(p) == 1).all() and (p <= 1).all()
    assert method == "tukey" or (p > 0).all()      # a resample test counts the observed arrangement
    assert np.allclose(hsd_pvalues(np.array(x) + 0.25, method=method, n_resamples=50, seed=0), p)


def test_min_ranks_share_the_best_place_of_equal_means() -> None:
    assert min_ranks([[0.3, 0.5, 0.3, 0.1], [0.1 + 0.2, 0.3, 0.2, 0.0]]).tolist() == [[2, 1, 2, 4], [1, 1, 3, 4]]


def _results(matrix: list[list[float]] | np.ndarray,
             names: tuple[str, ...] | None = None) -> dict[str, dict[str, dict[str, float]]]:
    names = names or tuple(f"s{i}" for i in range(len(matrix)))
    return {name: {"ndcg": {f"q{q:03d}": float(v) for q, v in enumerate(row)}} for name, row in zip(names, matrix)}


def test_tiers_of_the_results_read_the_shared_queries_and_order_each_metric_from_the_best() -> None:
    x = np.array(SAKAI_TABLE_5_1)
    t = tiers(_results(x, ("A", "B", "C")), n_resamples=2000, seed=4)
    frame = t.to_frame()
    assert list(frame.columns[:2]) == ["metric", "system"] and {"tier", "rank_low", "rank_high"} <= set(frame.columns)
    assert frame["system"].tolist() == ["A", "B", "C"]          # means 0.345, 0.29, 0.255
    p = hsd_pvalues(x, n_resamples=2000, seed=4)
    assert t.to_frame(table="pairs")["p_value"].tolist() == [p[0, 1], p[0, 2], p[1, 2]]
    assert frame["tier"].tolist() == list(tiers_of(x.mean(axis=1), p))
    low, high = rank_intervals(bootstrap_means(x, n_resamples=2000, seed=4))
    assert frame["rank_low"].tolist() == low.tolist() and frame["rank_high"].tolist() == high.tolist()
    assert (frame["rank_low"] <= frame["rank"]).all() and (frame["rank"] <= frame["rank_high"]).all()


def test_comparison_tiers_take_the_comparisons_settings_and_show_in_every_report_format() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((4, 30)) * 0.5 + np.array([0.0, 0.02, 0.2, 0.3])[:, None]
    names = ("bm25", "dense|x", "hybrid", "rerank")
    cmp = eb.compare(None, _results(x, names), ["ndcg"], n_resamples=500, seed=3, alpha=0.01)
    t = cmp.tiers()
    assert (t.n_resamples, t.seed, t.alpha, t.confidence) == (500, 3, 0.01, 0.95)
    assert t == tiers(_results(x, names), ["ndcg"], n_resamples=500, seed=3, alpha=0.01)
    report = Report(results={}, comparison=cmp, analyses={"tiers": t})
    for fmt in ("terminal", "markdown", "html", "latex"):
        text = report.render(fmt) if fmt != "latex" else t.table("latex")
        assert "rank interval" in text and "dense" in text
    assert "dense\\|x" in report.render("markdown")
    assert json.loads(report.render("json"))["tiers"] == json.loads(t.table("json"))
    assert report.render("html").count("<svg") >= 1
    from evalbridge.views.sections import section_files

    files = section_files(report, "csv")
    assert files["tiers_systems"][0].equals(t.to_frame()) and files["tiers_pairs"][0].equals(t.to_frame(table="pairs"))


def test_all_equal_values_make_one_tier_and_every_rank_first() -> None:
    t = tiers(_results([[0.5] * 6] * 4), n_resamples=200)
    assert {r.tier for r in t.rows} == {"a"} and {(r.rank, r.rank_low, r.rank_high) for r in t.rows} == {(1, 1, 1)}
    assert {p.p_value for p in t.pairs} == {1.0} and not any(p.significant for p in t.pairs)
    assert all(p.p_value == 1.0 for p in tiers(_results([[0.5] * 6] * 4), method="tukey").pairs)


def test_systems_on_different_queries_are_tiered_on_the_queries_they_share() -> None:
    results = _results([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]])
    del results["s1"]["ndcg"]["q000"]
    t = tiers(results, n_resamples=100)
    assert t.n == (3,) and t.unpaired == (1,)
    assert "1 without a value for every system, left out" in t.table()


@pytest.mark.parametrize(("results", "message"), [
    ({"a": {"ndcg": {"q1": 0.1, "q2": 0.2}}}, "two systems or more; got 1"),
    ({"a": {"ndcg": {"q1": 0.1}}, "b": {"ndcg": {"q1": 0.2}}}, "share 1 query"),
    ({"a": {"ndcg": {"q1": 0.1, "q2": 0.2}}, "b": {"ndcg": {"q3": 0.2, "q4": 0.1}}}, "share 0 queries (4 in all)"),
    ({"a": {"ndcg": {"q1": 0.1, "q2": math.nan}}, "b": {"ndcg": {"q1": 0.2, "q2": 0.1}}}, "system 'a', query 'q2'"),
])
def test_bad_input_is_refused_with_what_to_do(results, message) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        tiers(results)
    assert "Fix:" in str(caught.value)


@pytest.mark.parametrize(("scores", "message"), [
    ([[0.1, 0.2, 0.3]], "two systems or more"), ([[0.1], [0.2]], "two queries or more"),
    ([0.1, 0.2], "matrix"), ([[0.1, math.inf], [0.2, 0.3]], "system 0, query 1"),
])
def test_the_numeric_core_refuses_what_it_cannot_test(scores, message) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match=message):
        hsd_pvalues(scores)


def test_an_unknown_method_or_level_names_the_choices() -> None:
    with pytest.raises(InputError, match="method"):
        tiers(_results([[0.1, 0.2], [0.3, 0.4]]), method="scheffe")
    with pytest.raises(InputError, match="alpha"):
        tiers(_results([[0.1, 0.2], [0.3, 0.4]]), alpha=1.5)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([0.01, 0.05, 0.1]), st.sampled_from([0.8, 0.95]), st.integers(20, 200), st.integers(0, 9))
def test_a_statistics_value_gives_the_same_tiers_as_its_keywords(alpha, confidence, resamples, seed) -> None:  # noqa: ANN001
    results = _results(np.array(SAKAI_TABLE_5_1))
    chosen = eb.Statistics(alpha=alpha, confidence=confidence, n_resamples=resamples, seed=seed)
    assert tiers(results, statistics=chosen) == tiers(results, alpha=alpha, confidence=confidence,
                                                      n_resamples=resamples, seed=seed)
    assert tiers(results, statistics=chosen, seed=seed + 1).seed == seed + 1      # a keyword replaces its field


def test_one_sided_tiers_are_refused() -> None:
    with pytest.raises(InputError, match="sides=1"):
        tiers(_results([[0.1, 0.2], [0.3, 0.4]]), statistics=eb.Statistics(sides=1))


@pytest.mark.parametrize("field, value", [("test", "wilcoxon"), ("correction", "bh"), ("ci_method", "percentile")])
def test_a_test_correction_or_interval_method_tiers_cannot_honour_is_refused(field: str, value: str) -> None:
    """tiers' test is method= (simultaneous over every pair: no correction), its rank intervals percentiles: a
    Statistics asking for another test, correction or interval method is refused with the fix, never ignored."""
    with pytest.raises(InputError, match=rf"tiers does not use {field}.*{field}={value!r}") as raised:
        tiers(_results([[0.1, 0.2], [0.3, 0.4]]), statistics=eb.Statistics(**{field: value}))
    assert "Fix:" in str(raised.value)
    assert tiers(_results([[0.1, 0.2], [0.3, 0.4]]), statistics=eb.Statistics(), n_resamples=50).method == "randomization"
