"""Power of paired comparisons (evalbridge.decisions.power): statsmodels' TTestPower as the oracle of the t-test,
a simulation of the randomization test itself as the oracle of its approximation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.decisions.power import detectable_effect, power_at, queries_needed
from evalbridge.stats.resampling import randomization_pvalues

TTestPower = pytest.importorskip("statsmodels.stats.power", reason="statsmodels is the test oracle "
                                 "(pip install 'evalbridge[test]')").TTestPower
ALTERNATIVE = {2: "two-sided", 1: "larger"}


@settings(max_examples=80, deadline=None)
@given(hs.floats(0.01, 2.0), hs.integers(2, 5000), hs.sampled_from([0.01, 0.05, 0.1]), hs.sampled_from([1, 2]))
def test_t_power_is_statsmodels_ttestpower(effect, n, alpha, sides):
    """Property: the paired t-test's power (noncentral t) equals statsmodels' TTestPower.power wherever that
    is a number (statsmodels gives nan when the noncentral t's tail underflows; ours is then 1)."""
    expected = TTestPower().power(effect, n, alpha, alternative=ALTERNATIVE[sides])
    got = power_at(effect, sd=1.0, n=n, alpha=alpha, sides=sides)
    if math.isfinite(expected):
        assert got == pytest.approx(expected, abs=1e-12)
    assert 0 <= got <= 1


@settings(max_examples=40, deadline=None)
@given(hs.integers(3, 100_000), hs.sampled_from([0.01, 0.05]), hs.sampled_from([0.5, 0.8, 0.9]),
       hs.sampled_from([1, 2]), hs.floats(0.01, 0.5))
def test_minimum_detectable_effect_has_the_power_asked_and_is_statsmodels_solution(n, alpha, target, sides, sd):
    """Property: statsmodels' power at the MDE is the power asked (to 1e-9), and the MDE is statsmodels'
    solve_power for the effect size (times sd) to that solver's tolerance (brentq's, about 1e-4 relative at
    thousands of queries; our bisection runs to 1e-12) wherever that solver reached the power it was asked."""
    mde = detectable_effect(sd=sd, n=n, alpha=alpha, power=target, sides=sides)
    oracle = TTestPower().power(mde / sd, n, alpha, alternative=ALTERNATIVE[sides])
    if math.isfinite(oracle):
        assert oracle == pytest.approx(target, abs=1e-9)
    assert power_at(mde, sd=sd, n=n, alpha=alpha, sides=sides) == pytest.approx(target, abs=1e-9)
    expected = TTestPower().solve_power(nobs=n, alpha=alpha, power=target, alternative=ALTERNATIVE[sides])
    solved = TTestPower().power(expected, n, alpha, alternative=ALTERNATIVE[sides])
    if abs(solved - target) < 1e-6:   # statsmodels' solver converged (at n = 3 it can stop at power 0.40 for 0.5)
        assert mde / sd == pytest.approx(expected, rel=1e-3)


@settings(max_examples=40, deadline=None)
@given(hs.floats(0.02, 1.5), hs.sampled_from([0.01, 0.05]), hs.sampled_from([0.8, 0.9]), hs.sampled_from([1, 2]))
def test_queries_needed_is_the_first_whole_number_of_queries_with_the_power(effect, alpha, target, sides):
    """Property: the queries needed are the smallest n with power >= the target (one fewer falls short), which
    is statsmodels' solved nobs rounded up."""
    n = queries_needed(effect, sd=1.0, alpha=alpha, power=target, sides=sides)
    assert n is not None and n >= 2
    assert power_at(effect, sd=1.0, n=n, alpha=alpha, sides=sides) >= target
    if n > 2:
        assert power_at(effect, sd=1.0, n=n - 1, alpha=alpha, sides=sides) < target
    solved = TTestPower().solve_power(effect, alpha=alpha, power=target, alternative=ALTERNATIVE[sides])
    assert abs(n - math.ceil(solved)) <= (1 if abs(solved - round(solved)) < 1e-3 else 0)


def test_golden_values_of_statsmodels():
    """Hand-read from statsmodels 0.14/0.15: TTestPower().solve_power(0.5, power=0.8) = 33.37 -> 34 queries;
    solve_power(nobs=30, power=0.8) = 0.52924."""
    assert queries_needed(0.5, sd=1.0) == 34
    assert detectable_effect(sd=1.0, n=30) == pytest.approx(0.52924, abs=1e-5)


def test_randomization_power_matches_a_simulation_of_the_test():
    """The randomization test's MDE at 60 queries, from skewed per-query differences (many ties at 0, as
    metrics give): shifting resampled centred differences by the MDE, 400 simulated eval sets are each run
    through the randomization test itself (2,000 sign flips); the share rejected at 0.05 is 0.8 within
    three binomial standard errors (0.06)."""
    rng = np.random.default_rng(12)
    observed = np.where(rng.random(60) < 0.4, 0.0, rng.gamma(1.5, 0.1, 60) - 0.1)
    sd = float(observed.std(ddof=1))
    mde = detectable_effect(sd=sd, n=60, test="randomization")
    centred = observed - observed.mean()
    simulated = rng.choice(centred, (400, 60)) + mde
    rejected = float(np.mean(randomization_pvalues(simulated, n_resamples=2000, seed=3) <= 0.05))
    assert abs(rejected - 0.8) < 3 * math.sqrt(0.8 * 0.2 / 400)
    # and the same simulation at half the MDE has far less power: the number is not a constant
    half = float(np.mean(randomization_pvalues(rng.choice(centred, (400, 60)) + mde / 2, n_resamples=2000,
                                               seed=3) <= 0.05))
    assert half < 0.5


@pytest.mark.parametrize("n", [8, 12, 20, 43])
def test_randomization_power_on_small_sets_is_the_simulated_tests(n: int) -> None:
    """On small sets the randomization test's MDE comes from its permutation distribution: 3,000 simulated eval
    sets of n normal per-query differences (sd 1) shifted by the MDE, each run through the test itself (every
    sign flip, or 2,000 drawn), are rejected at 0.05 in a share 0.8 +- 0.03 (a normal approximation reported
    MDEs the test detected with power 0.97 at 8 queries, 0.93 at 12, 0.87 at 20); and the queries needed for
    that MDE are n."""
    mde = detectable_effect(sd=1.0, n=n, test="randomization")
    simulated = np.random.default_rng(n).standard_normal((3000, n)) + mde
    rejected = float(np.mean(randomization_pvalues(simulated, n_resamples=2000, seed=n) <= 0.05))
    assert abs(rejected - 0.8) <= 0.03
    assert power_at(mde, sd=1.0, n=n, test="randomization") == pytest.approx(0.8, abs=1e-9)
    assert queries_needed(mde * (1 + 1e-9), sd=1.0, test="randomization") == n


def _results(n: int = 200, seed: int = 0) -> dict[str, dict[str, dict[str, float]]]:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    out = {}
    for s, gain in (("bm25", 0.0), ("dense", 0.03), ("hybrid", 0.05)):
        values = np.clip(base + gain + rng.normal(0, 0.1, n), 0, 1)
        out[s] = {"nDCG@10": {f"q{i}": float(v) for i, v in enumerate(values)},
                  "P@10": {f"q{i}": round(float(v), 1) for i, v in enumerate(values)}}
    return out


def test_power_of_a_comparison_is_each_pair_and_metric_from_its_differences():
    """eb.power: one row per (metric, pair) as compare forms them; n, delta and sd of the per-query differences,
    the MDE and the queries needed for the observed |delta| by default, for a given effect when asked."""
    results = _results()
    analysis = eb.power(results, ["nDCG@10", "P@10"], baseline="bm25")
    assert [(r.metric, r.system, r.baseline) for r in analysis.rows] == [
        ("nDCG@10", "dense", "bm25"), ("nDCG@10", "hybrid", "bm25"), ("P@10", "dense", "bm25"),
        ("P@10", "hybrid", "bm25")]
    row = analysis.get("dense", "nDCG@10")
    ids = list(results["bm25"]["nDCG@10"])
    d = np.array([results["dense"]["nDCG@10"][q] - results["bm25"]["nDCG@10"][q] for q in ids])
    assert (row.n, row.delta, row.sd) == (200, pytest.approx(d.mean()), pytest.approx(d.std(ddof=1)))
    assert row.mde == pytest.approx(detectable_effect(sd=row.sd, n=200))
    assert row.effect == pytest.approx(abs(d.mean()))
    assert row.queries_needed == queries_needed(abs(d.mean()), sd=row.sd)
    targeted = eb.power(results, ["nDCG@10"], baseline="bm25", effect=0.01, power=0.9, alpha=0.01)
    assert targeted.get("dense", "nDCG@10").queries_needed == queries_needed(0.01, sd=row.sd, power=0.9, alpha=0.01)
    assert len(eb.power(results, ["P@10"]).rows) == 3   # all pairs without a baseline
    assert list(analysis.to_frame().columns)[:3] == ["metric", "system", "baseline"]


@settings(max_examples=30, deadline=None)
@given(hs.floats(0.01, 1.0), hs.integers(3, 10_000), hs.integers(2, 1_000_000), hs.sampled_from(["t", "randomization"]))
def test_more_queries_detect_smaller_differences(sd, n, more, test):
    """Property: the MDE shrinks as queries are added; the queries needed for the MDE at n are at most n. The
    randomization test over 5 queries or fewer detects nothing at 0.05 (its smallest p-value is 2/32): inf."""
    small, large = sorted((n, n + more))
    assert detectable_effect(sd=sd, n=large, test=test) <= detectable_effect(sd=sd, n=small, test=test)
    mde = detectable_effect(sd=sd, n=small, test=test)
    assert math.isinf(mde) == (test == "randomization" and small <= 5)
    if math.isfinite(mde):
        needed = queries_needed(mde * (1 + 1e-9), sd=sd, test=test)
        assert needed is not None and needed <= small


def test_degenerate_inputs_say_what_they_mean():
    """Constant differences: any difference is detected (MDE 0, 2 queries); no difference to detect: None;
    the Wilcoxon test and bad settings are refused with the fix."""
    same = {"a": {"m": {"q1": 0.5, "q2": 0.6, "q3": 0.7}}, "b": {"m": {"q1": 0.4, "q2": 0.5, "q3": 0.6}}}
    row = eb.power(same, ["m"], baseline="a").rows[0]
    assert (row.mde, row.queries_needed) == (0.0, 2)
    assert queries_needed(0.0, sd=0.2) is None
    with pytest.raises(InputError, match="Wilcoxon"):
        eb.power(same, ["m"], test="wilcoxon")
    with pytest.raises(InputError, match="power"):
        eb.power(same, ["m"], power=1.5)
