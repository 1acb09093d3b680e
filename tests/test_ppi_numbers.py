"""The prediction-powered numbers (evalbridge.stats.ppi) equal ppi_py's on the same arrays; the classical ones scipy's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from evalbridge.stats.ppi import classical_mean, labels_needed, power_tuned_weight, ppi_mean, ppi_variance

ppi_py = pytest.importorskip("ppi_py")
scipy_stats = pytest.importorskip("scipy.stats")


@st.composite
def _samples(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Human values of n labelled items, the judge's of the same items, and the judge's of every item."""
    total = draw(st.integers(6, 60))
    n = draw(st.integers(3, total))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    truth = rng.choice(draw(st.sampled_from([[0.0, 1.0], [0.0, 1.0, 2.0, 3.0], [0.0, 0.1, 0.5, 0.7, 1.0]])),
                       size=total)
    noise = draw(st.sampled_from([0.0, 0.3, 1.0, 3.0]))
    judge = truth + noise * rng.normal(size=total) + draw(st.floats(-0.5, 0.5))
    labelled = rng.choice(total, size=n, replace=False)
    return truth[labelled], judge[labelled], judge


@settings(max_examples=150, deadline=None)
@given(_samples(), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_the_power_tuned_estimate_and_interval_equal_ppi_py(sample, confidence) -> None:
    y, f, f_all = sample
    assume(np.var(np.concatenate([f, f_all])) > 0)      # a judge whose values never vary: ppi_py divides 0 by 0
    mine = ppi_mean(y, f, f_all, confidence=confidence)
    theirs = ppi_py.ppi_mean_ci(y, f, f_all, alpha=1 - confidence)
    assert mine.estimate == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, f_all))), abs=1e-12)
    assert (mine.low, mine.high) == pytest.approx((float(theirs[0][0]), float(theirs[1][0])), abs=1e-12)
    # the p-value of the same estimator: ppi_py's with the same (clipped) weight
    p = ppi_py.ppi_mean_pval(y, f, f_all, null=0, lam=mine.weight)
    assert mine.p == pytest.approx(float(np.squeeze(p)), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_samples(), st.sampled_from([0.0, 0.5, 1.0]))
def test_a_fixed_weight_gives_ppi_py_s_interval_at_that_weight(sample, weight) -> None:
    y, f, f_all = sample
    mine = ppi_mean(y, f, f_all, weight=weight)
    low, high = ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05, lam=weight)
    assert (mine.low, mine.high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_samples())
def test_the_tuned_weight_is_ppi_py_s_clipped_weight(sample) -> None:
    y, f, f_all = sample
    from ppi_py.ppi import _calc_lam_glm

    expected = float(_calc_lam_glm(y - y.mean(), f - y.mean(), f_all - y.mean(), np.eye(1), clip=True)) \
        if np.var(np.concatenate([f, f_all])) > 0 else 0.0
    # Where ppi_py's weight is 0/0 (nan: a judge whose values do not vary, up to rounding), evalbridge gives the judge
    # no weight: the estimate is then the human sample's own, as the docstring of power_tuned_weight says.
    assert power_tuned_weight(y, f, f_all) == pytest.approx(0.0 if np.isnan(expected) else expected, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_samples(), st.sampled_from([0.9, 0.95]))
def test_the_classical_interval_is_scipy_s_t_interval(sample, confidence) -> None:
    y = sample[0]
    mine = classical_mean(y, confidence=confidence)
    if np.std(y) == 0:
        assert mine.low == mine.high == mine.estimate
        return
    test = scipy_stats.ttest_1samp(y, 0.0)
    interval = test.confidence_interval(confidence)
    assert (mine.low, mine.high) == pytest.approx((interval.low, interval.high), abs=1e-12)
    assert mine.p == pytest.approx(test.pvalue, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(_samples())
def test_the_variance_formula_is_the_squared_standard_error_at_the_sample_s_own_moments(sample) -> None:
    y, f, f_all = sample
    var_f = float(np.var(np.concatenate([f, f_all]), ddof=1))
    assume(var_f > 0)
    cov = float(np.mean((y - y.mean()) * (f - f.mean())))
    # the se^2 the estimator reports, with its own weight, against the formula where var(y - w f) and var(f_all)
    # are the sample's: equal when f over the sample has the variance of f over everything
    w = power_tuned_weight(y, f, f_all)
    se2 = ppi_mean(y, f, f_all).se ** 2
    direct = float(np.var(y - w * f)) / len(y) + w ** 2 * float(np.var(f_all)) / len(f_all)
    assert se2 == pytest.approx(direct, rel=1e-12)
    # the formula (moments of one sample, so var(y - w f) >= 0 for every w) is decreasing in n
    grid = np.arange(2, 200)
    values = ppi_variance(grid, var_y=float(np.var(y)), cov=cov, var_f=float(np.var(f)), total=200)
    assert np.all(np.diff(values) <= 1e-15)


@given(st.floats(0.01, 4.0), st.floats(-0.99, 0.99), st.integers(10, 100_000), st.floats(1e-6, 0.5))
def test_the_labels_needed_are_the_fewest_that_reach_the_variance(var_y, rho, total, target) -> None:
    var_f = 1.3
    cov = rho * math.sqrt(var_y * var_f)
    n = labels_needed(target, var_y=var_y, cov=cov, var_f=var_f, total=total)
    if n is None:
        assert ppi_variance(total, var_y=var_y, cov=cov, var_f=var_f, total=total) > target
        return
    assert ppi_variance(n, var_y=var_y, cov=cov, var_f=var_f, total=total) <= target
    if n > 2:
        assert ppi_variance(n - 1, var_y=var_y, cov=cov, var_f=var_f, total=total) > target
    alone = labels_needed(target, var_y=var_y)
    assert alone is not None and n <= alone       # the judge never costs human labels
    assert alone == 2 or var_y / (alone - 1) > target >= var_y / alone
