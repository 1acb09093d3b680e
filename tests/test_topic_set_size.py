"""Collection design (Sakai's topic set size design): the queries a paired t-test, a one-way ANOVA and a confidence
interval need, against statsmodels' power classes, the chi distribution's mean, Sakai's own approximations (his Excel
tools' formulas) and his book's variance estimate; bad input refused."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.decisions.power import queries_needed
from evalbridge.decisions.topic_set_size import anova_queries, ci_queries, topic_set_size
from test_tiers import SAKAI_TABLE_5_1

requirements = st.tuples(st.sampled_from([0.01, 0.05, 0.1]), st.sampled_from([0.1, 0.2, 0.3]),
                         st.floats(0.02, 0.3), st.floats(0.005, 0.15))


@settings(max_examples=60, deadline=None)
@given(requirements)
def test_the_t_test_size_is_the_first_with_statsmodels_power(requirement) -> None:  # noqa: ANN001
    from statsmodels.stats.power import TTestPower

    alpha, beta, difference, variance = requirement
    n = topic_set_size([[0.0, 0.0], [0.0, 0.0]], alpha=alpha, beta=beta, min_difference=difference).rows[0].t_test
    assert n == 2   # no variance: the fewest queries of any test
    size = queries_needed(difference, sd=math.sqrt(2 * variance), alpha=alpha, power=1 - beta)
    effect = difference / math.sqrt(2 * variance)
    power = TTestPower().power
    assume(not math.isnan(power(effect, size, alpha)))     # statsmodels' nct gives nan far in its tail (d ~ 3)
    assert size is not None and power(effect, size, alpha) >= 1 - beta
    assert size == 2 or power(effect, size - 1, alpha) < 1 - beta


@settings(max_examples=60, deadline=None)
@given(requirements, st.integers(2, 30))
def test_the_anova_size_is_the_first_with_statsmodels_power(requirement, systems) -> None:  # noqa: ANN001
    """statsmodels' FTestAnovaPower over nobs = m n values in m groups, Cohen's f^2 = Delta / m with
    Delta = minD^2 / (2 sigma^2): the same noncentral F (noncentrality n Delta, m - 1 and m (n - 1) df)."""
    from statsmodels.stats.power import FTestAnovaPower

    alpha, beta, difference, variance = requirement
    n = anova_queries(difference, variance=variance, systems=systems, alpha=alpha, beta=beta)
    f = math.sqrt(difference ** 2 / (2 * variance) / systems)
    power = FTestAnovaPower().power
    assert n is not None and power(f, systems * n, alpha, systems) >= 1 - beta
    assert n == 2 or power(f, systems * (n - 1), alpha, systems) < 1 - beta


@settings(max_examples=60, deadline=None)
@given(requirements)
def test_the_ci_size_is_the_first_whose_expected_width_is_under_the_cap(requirement) -> None:  # noqa: ANN001
    """The expected width 2 t sigma_t E[chi_(n-1)] / sqrt(n (n - 1)), E[chi] from scipy's chi distribution."""
    from scipy.stats import chi, t

    alpha, _, width, variance = requirement
    n = ci_queries(width, variance=variance, alpha=alpha)

    def expected(k: int) -> float:
        return 2 * t.isf(alpha / 2, k - 1) * math.sqrt(2 * variance) * chi(k - 1).mean() / math.sqrt(k * (k - 1))

    assert n is not None and expected(n) <= width * (1 + 1e-9)
    assert n == 2 or expected(n - 1) > width * (1 - 1e-9)


def sakai_excel_t_test(alpha: float, beta: float, effect: float) -> int:
    """Sakai's samplesizeTTEST2 (his book, ch. 6; the 2016 paper's t-test design): the normal approximation of the
    noncentral t's power, 1 - beta ~ Phi(u(-w)) + 1 - Phi(u(w)), u(x) = (x (1 - 1 / (4 phi)) - sqrt(n) effect) /
    sqrt(1 + x^2 / (2 phi)), w = t_(alpha/2)(phi), phi = n - 1; searched from n' = ((z_(alpha/2) + z_beta) /
    effect)^2 + z_(alpha/2)^2 / 2."""
    from scipy.stats import norm, t

    def power(n: int) -> float:
        phi = n - 1
        w = t.isf(alpha / 2, phi)

        def u(x: float) -> float:
            return (x * (1 - 1 / (4 * phi)) - math.sqrt(n) * effect) / math.sqrt(1 + x ** 2 / (2 * phi))

        return float(norm.cdf(u(-w)) + 1 - norm.cdf(u(w)))

    n = max(2, math.ceil(((norm.isf(alpha / 2) + norm.isf(beta)) / effect) ** 2 + norm.isf(alpha / 2) ** 2 / 2))
    while power(n) < 1 - beta:
        n += 1
    while n > 2 and power(n - 1) >= 1 - beta:
        n -= 1
    return n


@pytest.mark.parametrize("alpha", [0.01, 0.05])
@pytest.mark.parametrize("beta", [0.1, 0.2])
@pytest.mark.parametrize("effect", [0.1, 0.2, 0.3, 0.5, 1.0])
def test_the_t_test_sizes_are_within_one_query_of_sakais_excel_tool(alpha, beta, effect) -> None:  # noqa: ANN001
    exact = queries_needed(effect, sd=1.0, alpha=alpha, power=1 - beta)
    assert exact is not None and abs(exact - sakai_excel_t_test(alpha, beta, effect)) <= 1


def test_sakais_table_reads_the_same_from_a_matrix_and_from_per_query_values() -> None:
    """Sakai's book, Table 5.1 (3 systems x 20 topics): V_E = 0.0219 as the book gives it."""
    matrix = topic_set_size(SAKAI_TABLE_5_1, min_difference=0.1)
    row = matrix.rows[0]
    assert round(row.variance, 4) == 0.0219 and (row.systems, row.queries, row.df) == (3, 20, 38)
    values = {s: {"AP": {f"t{q:02d}": v for q, v in enumerate(scores)}} for s, scores in zip("xyz", SAKAI_TABLE_5_1)}
    by_values = eb.topic_set_size(values, min_difference=0.1)
    assert by_values.rows[0] == type(row)("AP", *(getattr(row, k) for k in ("systems", "queries", "variance", "df",
                                                                             "t_test", "anova", "ci")))
    assert row.t_test == queries_needed(0.1, sd=math.sqrt(2 * row.variance))
    assert row.anova == anova_queries(0.1, variance=row.variance, systems=3)
    assert row.ci == ci_queries(0.1, variance=row.variance)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.02, 0.2), st.floats(1.1, 3.0))
def test_a_larger_difference_never_needs_more_queries(difference, factor) -> None:  # noqa: ANN001
    small, large = (topic_set_size(SAKAI_TABLE_5_1, min_difference=d).rows[0] for d in (difference, difference * factor))
    assert large.t_test <= small.t_test and large.anova <= small.anova and large.ci <= small.ci


def test_the_design_shows_in_every_format() -> None:
    d = topic_set_size({"a|b": {"m": {"q1": 0.1, "q2": 0.5, "q3": 0.3}}, "c": {"m": {"q1": 0.2, "q2": 0.2, "q3": 0.6}}},
                       min_difference=0.1, ci_width=0.2, systems=10)
    for fmt in ("terminal", "markdown", "html", "latex"):
        text = d.table(fmt)
        assert "paired t-test" in text and "10 systems" in text
    assert "a\\|b" not in d.table("markdown")   # metrics are named, not systems
    assert json.loads(d.table("json"))["rows"][0]["t_test"] == d.rows[0].t_test
    assert list(d.to_frame().columns) == ["metric", "systems", "queries", "variance", "df", "t_test", "anova", "ci"]


def test_all_equal_values_need_the_fewest_queries_and_say_why() -> None:
    d = topic_set_size([[0.5] * 4] * 3)
    assert (d.rows[0].variance, d.rows[0].t_test, d.rows[0].anova, d.rows[0].ci) == (0.0, 2, 2, 2)


def test_systems_on_different_queries_are_designed_on_the_queries_they_share() -> None:
    d = topic_set_size({"a": {"m": {"q1": 0.1, "q2": 0.5, "q3": 0.3}}, "b": {"m": {"q2": 0.2, "q3": 0.6, "q4": 0.1}}})
    assert d.rows[0].queries == 2 and d.unpaired == (2,)
    assert "2 queries without a value for every system left out" in d.table()


@pytest.mark.parametrize(("scores", "options", "message"), [
    ([[0.1, 0.2, 0.3]], {}, "two systems or more"),
    ([[0.1], [0.2]], {}, "two queries or more"),
    ([[0.1, math.nan], [0.2, 0.3]], {}, "system 0, query 1"),
    ({"a": {"m": {"q1": 0.1}}, "b": {"m": {"q2": 0.1}}}, {}, "share 0 queries"),
    ({}, {}, "no system"),
    ([[0.1, 0.2], [0.3, 0.4]], {"alpha": 0}, "alpha"),
    ([[0.1, 0.2], [0.3, 0.4]], {"min_difference": -0.1}, "min_difference"),
    ([[0.1, 0.2], [0.3, 0.4]], {"systems": 1}, "systems"),
])
def test_bad_input_is_refused_with_what_to_do(scores, options, message) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match=message) as caught:
        topic_set_size(scores, **options)
    assert "Fix:" in str(caught.value)


def test_a_requirement_out_of_reach_is_none_not_a_number() -> None:
    assert ci_queries(1e-9, variance=1.0) is None
    assert topic_set_size(np.array([[0.0, 1.0], [1.0, 0.0]]), min_difference=1e-7).rows[0].t_test is None


@pytest.mark.parametrize("verb", ["topic_set_size", "tiers"])
def test_values_without_the_metric_name_are_refused_with_the_shape_to_give(verb):
    """{system: {query: value}} (one metric, unnamed) is refused with the shape that names it, not a TypeError."""
    from evalbridge.decisions.tiers import tiers

    values = {"a": {"q1": 0.1, "q2": 0.3, "q3": 0.2}, "b": {"q1": 0.2, "q2": 0.5, "q3": 0.4}}
    call = {"topic_set_size": eb.topic_set_size, "tiers": tiers}[verb]
    with pytest.raises(eb.InputError, match=r"without the metric's name .*'q1': 0\.1.*Fix: name the metric"):
        call(values)
