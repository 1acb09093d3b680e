"""Kendall's tau and tau_ap between two orderings of the same systems (evalbridge.stats.system_order):
tau against scipy's kendalltau and a hand count, tau_ap against a direct implementation of Yilmaz, Aslam &
Robertson (SIGIR 2008) and hand-computed cases."""

from __future__ import annotations

import math
from itertools import combinations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import kendalltau

from evalbridge.errors import InputError
from evalbridge.evalsets.ranking_agreement import tau_ap as agreement_tau_ap
from evalbridge.stats.system_order import kendall_tau, ranking, settled, tau_ap


# -- tau_ap -------------------------------------------------------------------------------------------------

def yilmaz(truth: list[float], estimate: list[float]) -> float:
    """tau_ap as written in Yilmaz et al. (2008), for lists without ties: walk the estimated ranking,
    C(i) = items above rank i that the truth also puts above the item at rank i."""
    order = sorted(range(len(estimate)), key=lambda i: -estimate[i])
    n = len(order)
    total = sum(sum(truth[order[j]] > truth[order[i]] for j in range(i)) / i for i in range(1, n))
    return 2 / (n - 1) * total - 1


def test_tau_ap_hand_computed_swaps_at_the_top_and_at_the_bottom():
    """Truth A > B > C > D. Swapping A and B: C(i) = 0/1, 2/2, 3/3, tau_ap = 2/3 * 2 - 1 = 1/3; swapping C
    and D: C(i) = 1/1, 2/2, 2/3, tau_ap = 2/3 * 8/3 - 1 = 7/9. Kendall's tau is 2/3 for both."""
    truth = [4, 3, 2, 1]
    assert tau_ap(truth, [3, 4, 2, 1]) == pytest.approx(1 / 3, abs=1e-15)
    assert tau_ap(truth, [4, 3, 1, 2]) == pytest.approx(7 / 9, abs=1e-15)
    assert kendalltau(truth, [3, 4, 2, 1]).statistic == pytest.approx(kendalltau(truth, [4, 3, 1, 2]).statistic)


def test_tau_ap_is_asymmetric():
    """Truth A > B > C, estimate B > C > A: C walks B, C (B above: correct, 1/1), A (B, C above: both wrong,
    0/2): tau_ap = 2/2 * 1 - 1 = 0. Roles swapped, walking A, B (A above B: wrong, 0/1), C (A wrong, B right,
    1/2): tau_ap = 0.5 - 1 = -0.5. The symmetric variant is their mean, -0.25."""
    x, y = [3, 2, 1], [1, 3, 2]
    assert tau_ap(x, y) == pytest.approx(0.0, abs=1e-15)
    assert tau_ap(y, x) == pytest.approx(-0.5, abs=1e-15)
    assert tau_ap(x, y, symmetric=True) == pytest.approx(-0.25, abs=1e-15)


@given(st.integers(3, 14).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n - 1))))
def test_tau_ap_of_one_adjacent_swap_equals_tau_only_in_the_middle(case):
    """Swapping ranks k and k+1 of N items: only the item moved down loses one correct item above it, so
    tau_ap = 1 - 2 / (k (N - 1)), while tau = 1 - 4 / (N (N - 1)) wherever the swap is: equal exactly when
    k = N / 2, lower above the middle (errors at the top cost more), higher below."""
    n, k = case
    truth = list(range(n, 0, -1))
    estimate = list(truth)
    estimate[k - 1], estimate[k] = estimate[k], estimate[k - 1]
    value, tau = tau_ap(truth, estimate), kendalltau(truth, estimate).statistic
    assert value == pytest.approx(1 - 2 / (k * (n - 1)), abs=1e-12)
    assert tau == pytest.approx(1 - 4 / (n * (n - 1)), abs=1e-12)
    assert (value > tau + 1e-12, abs(value - tau) <= 1e-12, value < tau - 1e-12) == (2 * k > n, 2 * k == n, 2 * k < n)


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=12, unique=True).flatmap(
    lambda xs: st.tuples(st.just(xs), st.permutations(xs))))
def test_tau_ap_without_ties_is_yilmaz_formula_and_in_range(lists):
    """Without ties tau_ap is the paper's formula, lies in [-1, 1], is 1 for the same order and -1 reversed (scores
    equal to 12 significant digits tie, system_order.settled: such draws are not without ties)."""
    truth, estimate = lists
    assume(len(set(settled(truth))) == len(truth))
    assert tau_ap(truth, estimate) == pytest.approx(yilmaz(truth, estimate), abs=1e-12)
    assert -1 - 1e-12 <= tau_ap(truth, estimate) <= 1 + 1e-12
    assert tau_ap(truth, truth) == 1.0
    assert tau_ap(truth, [-x for x in truth]) == pytest.approx(-1.0, abs=1e-12)


@given(st.lists(st.integers(0, 3), min_size=2, max_size=12))
def test_tau_ap_of_identical_orderings_is_one_even_with_ties(scores):
    assume(len(set(scores)) > 1)
    assert tau_ap(scores, list(scores)) == 1.0 and tau_ap(scores, scores, symmetric=True) == 1.0


def test_tau_ap_with_ties_in_the_estimate_compares_across_tie_groups_only():
    """Truth A > B > C, estimate A > B = C: B and C are not compared; each has one item above it (A),
    correctly above in the truth: tau_ap = 2 * mean(1, 1) - 1 = 1. All tied: nan."""
    assert tau_ap([3, 2, 1], [2, 1, 1]) == 1.0
    assert math.isnan(tau_ap([3, 2, 1], [1, 1, 1])) and math.isnan(tau_ap([1], [1]))
    with pytest.raises(InputError, match="same length"):
        tau_ap([1, 2], [1, 2, 3])


@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=12).flatmap(
    lambda xs: st.tuples(st.just(xs), st.permutations(xs))))
def test_kendall_tau_is_scipys_tau_b_and_the_concordant_share_without_ties(lists):
    """tau-b and its p-value are scipy's; without ties tau = (concordant - discordant) / pairs, counted by hand."""
    a, b = ([float(f"{v:.12g}") for v in xs] for xs in lists)   # told apart at 12 significant digits
    assume(len(set(a)) > 1)
    tau, p = kendall_tau(a, b)
    expected = kendalltau(a, b)
    assert tau == pytest.approx(expected.statistic, abs=1e-12) and p == pytest.approx(expected.pvalue, abs=1e-12)
    if len(set(a)) == len(a):
        signs = [((a[i] > a[j]) - (a[i] < a[j])) * ((b[i] > b[j]) - (b[i] < b[j])) for i, j in combinations(range(len(a)), 2)]
        assert tau == pytest.approx((sum(s > 0 for s in signs) - sum(s < 0 for s in signs)) / len(signs), abs=1e-12)


def test_means_that_differ_only_by_floating_point_rounding_tie_in_every_order_measure():
    """0.1 + 0.2 and 0.3 are one mean added in two orders: no measure of the orderings reads an order into it."""
    rounded, exact = [0.1 + 0.2, 0.3, 0.1], [0.3, 0.3, 0.1]
    assert rounded[0] != rounded[1]
    assert kendall_tau(rounded, [1, 2, 3]) == kendall_tau(exact, [1, 2, 3])
    assert tau_ap(rounded, [1, 2, 3]) == tau_ap(exact, [1, 2, 3])
    assert tau_ap([3, 2, 1], rounded) == tau_ap([3, 2, 1], exact)
    assert ranking(["a", "b", "c"], [0.3, 0.1 + 0.2, 0.1]) == ("a", "b", "c")


def test_kendall_tau_of_a_constant_side_or_one_system_is_nan():
    assert all(math.isnan(v) for v in kendall_tau([1, 1, 1], [1, 2, 3]))
    assert all(math.isnan(v) for v in kendall_tau([1], [2]))
    with pytest.raises(InputError, match="same length"):
        kendall_tau([1, 2], [1, 2, 3])


def test_the_agreement_module_uses_the_one_tau_ap():
    assert agreement_tau_ap is tau_ap


def test_ranking_puts_the_best_mean_first_and_keeps_the_given_order_of_equal_means():
    assert ranking(["a", "b", "c", "d"], [0.2, 0.5, 0.2, math.nan]) == ("b", "a", "c", "d")


def test_tau_ap_counts_a_tie_of_the_truth_broken_by_the_estimate_as_not_correct():
    """As Urbano & Marrero's tau_AP_b: truth A = B > C, estimate A > B > C. Walking the estimate, B has A
    above it, tied in the truth: not correct (0/1); C has A and B above it, both above in the truth (2/2):
    tau_ap = 2 * mean(0, 1) - 1 = 0. The other way, A and B tie in the estimate and are not compared; C has
    2/2: tau_ap = 1. Symmetric: 0.5."""
    truth, estimate = [3, 3, 1], [3, 2, 1]
    assert tau_ap(truth, estimate) == pytest.approx(0.0, abs=1e-15)
    assert tau_ap(estimate, truth) == 1.0
    assert tau_ap(truth, estimate, symmetric=True) == pytest.approx(0.5, abs=1e-15)
