"""Paired comparison of systems on per-query values.

Every system is compared with one baseline, metric by metric, on the queries both
were evaluated on. For each (system, metric) pair:

* ``delta`` = mean(system) - mean(baseline) = mean(d), with d_q = system_q - baseline_q;
* a two-sided p-value from the paired t-test (:func:`scipy.stats.ttest_rel`,
  t = mean(d) / (sd(d) / sqrt(n))) and from Fisher's randomization test
  (:func:`scipy.stats.permutation_test`, ``permutation_type="samples"``: the sign of
  each d_q is flipped at random; exact when 2^n <= ``n_resamples``);
* a bootstrap confidence interval of ``delta`` (:func:`scipy.stats.bootstrap`,
  ``paired=True``, BCa);
* the effect size d_z = mean(d) / sd(d) (Cohen's d for paired samples);
* win / tie / loss counts: queries where the system is above / equal to / below the baseline.

The p-values of the chosen test are corrected for multiple comparisons over the whole
family (every system x metric): Holm (family-wise error) or Benjamini-Hochberg (false
discovery rate, :func:`scipy.stats.false_discovery_control`). Every random step is seeded.

Example:
    >>> base = {"q1": 0.2, "q2": 0.4, "q3": 0.1, "q4": 0.3}
    >>> new = {"q1": 0.5, "q2": 0.6, "q3": 0.2, "q4": 0.3}
    >>> win_tie_loss(list(new.values()), list(base.values()))
    (3, 1, 0)
    >>> holm([0.01, 0.04, 0.03, 0.005])
    [0.03, 0.06, 0.06, 0.02]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError, MetricSpecError
from ..metrics.spec import parse_metric

__all__ = ["paired_t_test", "randomization_test", "bootstrap_ci", "holm", "benjamini_hochberg",
           "effect_size", "win_tie_loss", "PairedComparison", "Comparison", "compare_systems",
           "TESTS", "CORRECTIONS"]


def _differences(a: Sequence[float], b: Sequence[float]):  # noqa: ANN202 - numpy array
    import numpy as np

    x, y = np.asarray(a, dtype="float64"), np.asarray(b, dtype="float64")
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"paired values must be two lists of the same length; got {x.shape} and {y.shape}.",
                         fix="compare systems on the same queries, in the same order.")
    return x, y, x - y


def paired_t_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the paired t-test of ``a`` against ``b`` (:func:`scipy.stats.ttest_rel`).

    t = mean(d) / (sd(d) / sqrt(n)) with d = a - b and n - 1 degrees of freedom.
    When every difference is 0 the p-value is 1 (scipy returns nan); with fewer than
    two pairs it is nan.

    >>> round(paired_t_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3]), 4)
    0.0354
    """
    from scipy.stats import ttest_rel

    x, y, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # constant non-zero differences: t = +-inf, p = 0
        return float(ttest_rel(x, y).pvalue)


def _mean_difference(x, y, axis: int = -1):  # noqa: ANN001, ANN202 - numpy arrays
    return (x - y).mean(axis=axis)


def randomization_test(a: Sequence[float], b: Sequence[float], *, n_resamples: int = 10_000,
                       seed: int = 0) -> float:
    """Two-sided p-value of Fisher's paired randomization test (:func:`scipy.stats.permutation_test`).

    Under the null hypothesis the labels "a" and "b" of each query are exchangeable, so each
    pair is swapped at random (``permutation_type="samples"``); the p-value is the share of
    swaps whose |mean(d)| is at least the observed one. With 2^n <= ``n_resamples`` every
    swap is enumerated (exact test); otherwise ``n_resamples`` random swaps are drawn from a
    generator seeded with ``seed``.

    >>> randomization_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3])
    0.125
    """
    import numpy as np
    from scipy.stats import permutation_test

    x, y, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    result = permutation_test((x, y), _mean_difference, permutation_type="samples", vectorized=True,
                              n_resamples=n_resamples, alternative="two-sided",
                              rng=np.random.default_rng(seed))
    return float(result.pvalue)


def bootstrap_ci(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0, method: str = "BCa") -> tuple[float, float]:
    """Bootstrap confidence interval of mean(a - b) over paired queries (:func:`scipy.stats.bootstrap`).

    Queries are resampled with replacement, keeping each pair together (``paired=True``).
    When every difference is the same value c the interval is (c, c); with fewer than two
    pairs it is (nan, nan).

    >>> low, high = bootstrap_ci([0.5, 0.6, 0.2, 0.4, 0.3], [0.2, 0.4, 0.1, 0.3, 0.3], n_resamples=999)
    >>> bool(low < 0.16 < high)
    True
    """
    import numpy as np
    from scipy.stats import bootstrap

    x, y, d = _differences(a, b)
    if len(d) < 2:
        return (math.nan, math.nan)
    if np.ptp(d) == 0:
        return (float(d[0]), float(d[0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BCa's DegenerateDataWarning on tiny samples: the interval is nan
        result = bootstrap((x, y), _mean_difference, paired=True, vectorized=True, n_resamples=n_resamples,
                           confidence_level=confidence, method=method, rng=np.random.default_rng(seed))
    low, high = result.confidence_interval
    return (float(low), float(high))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error rate).

    With the m p-values sorted ascending, p_(1) <= ... <= p_(m):
    adj_(i) = max_{j <= i} min(1, (m - j + 1) * p_(j)); then back in the input order.
    A nan p-value is left out of the family and stays nan.

    >>> holm([0.01, 0.04, 0.03, 0.005])
    [0.03, 0.06, 0.06, 0.02]
    """
    values = list(map(float, pvalues))
    index = sorted((i for i, p in enumerate(values) if not math.isnan(p)), key=values.__getitem__)
    adjusted = list(values)
    running = 0.0
    for rank, i in enumerate(index):
        running = max(running, min(1.0, (len(index) - rank) * values[i]))
        adjusted[i] = round(running, 15)
    return adjusted


def benjamini_hochberg(pvalues: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values (false discovery rate), :func:`scipy.stats.false_discovery_control`.

    adj_(i) = min_{j >= i} min(1, m * p_(j) / j) over the ascending p-values. nan stays nan.

    >>> [round(p, 4) for p in benjamini_hochberg([0.01, 0.04, 0.03, 0.005])]
    [0.02, 0.04, 0.04, 0.02]
    """
    from scipy.stats import false_discovery_control

    values = list(map(float, pvalues))
    index = [i for i, p in enumerate(values) if not math.isnan(p)]
    adjusted = list(values)
    if index:
        for i, p in zip(index, false_discovery_control([values[i] for i in index], method="bh")):
            adjusted[i] = float(p)
    return adjusted


def _no_correction(pvalues: Sequence[float]) -> list[float]:
    return list(map(float, pvalues))


def effect_size(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's d for paired samples, d_z = mean(d) / sd(d) with d = a - b and sd with n - 1.

    0 when every difference is 0; +-inf when every difference is the same non-zero value;
    nan with fewer than two pairs.

    >>> round(effect_size([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3]), 4)
    1.8278
    """
    import numpy as np

    _, _, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    mean, sd = float(d.mean()), float(np.std(d, ddof=1))
    if sd == 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / sd


def win_tie_loss(a: Sequence[float], b: Sequence[float], *, tolerance: float = 0.0) -> tuple[int, int, int]:
    """Queries where ``a`` beats, ties (|a - b| <= ``tolerance``) and loses to ``b``.

    >>> win_tie_loss([0.5, 0.3, 0.1], [0.2, 0.3, 0.4])
    (1, 1, 1)
    """
    _, _, d = _differences(a, b)
    wins, losses = int((d > tolerance).sum()), int((d < -tolerance).sum())
    return wins, len(d) - wins - losses, losses


#: test name -> p-value function (a, b, n_resamples, seed)
TESTS: Mapping[str, Callable[..., float]] = {
    "t": lambda a, b, n_resamples, seed: paired_t_test(a, b),
    "randomization": lambda a, b, n_resamples, seed: randomization_test(a, b, n_resamples=n_resamples, seed=seed),
}
#: correction name -> adjusted p-values
CORRECTIONS: Mapping[str, Callable[[Sequence[float]], list[float]]] = {
    "holm": holm, "bh": benjamini_hochberg, "none": _no_correction,
}


@dataclass(frozen=True)
class PairedComparison:
    """One system against the baseline on one metric (see the module docstring for each field)."""

    metric: str
    system: str
    baseline: str
    n: int
    baseline_mean: float
    system_mean: float
    delta: float
    ci_low: float
    ci_high: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    p_t: float
    p_randomization: float
    p_adjusted: float
    significant: bool


@dataclass(frozen=True)
class Comparison:
    """Every system against the baseline, with the settings used.

    Attributes:
        rows: one :class:`PairedComparison` per (metric, system), metrics in the order asked.
        baseline: the system the others are compared with.
        test: the test whose p-values are corrected and decide significance (``t`` or ``randomization``).
        correction: ``holm``, ``bh`` or ``none``, over all rows.
        alpha: significance level applied to the corrected p-values.
    """

    rows: tuple[PairedComparison, ...]
    baseline: str
    test: str
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int

    def get(self, system: str, metric: str) -> PairedComparison | None:
        """The row of ``system`` on ``metric`` (any spelling of the metric), or None."""
        try:
            wanted = str(parse_metric(metric))
        except MetricSpecError:
            wanted = metric
        return next((r for r in self.rows if r.system == system and r.metric in (metric, wanted)), None)

    def to_frame(self):  # noqa: ANN201 - pandas.DataFrame
        """The rows as a DataFrame, one column per field."""
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.rows])

    def settings(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "test": self.test, "correction": self.correction, "alpha": self.alpha,
                "confidence": self.confidence, "n_resamples": self.n_resamples, "seed": self.seed}

    def to_dict(self) -> dict[str, Any]:
        """``{"settings": {...}, "rows": [...]}``, JSON-ready (nan and inf become None)."""
        def clean(value: Any) -> Any:
            return None if isinstance(value, float) and not math.isfinite(value) else value

        return {"settings": self.settings(),
                "rows": [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows]}

    def describe(self) -> str:
        """One sentence saying how significance was decided."""
        test = {"t": "paired t-test", "randomization": "Fisher randomization test"}[self.test]
        fix = {"holm": ", Holm-corrected", "bh": ", Benjamini-Hochberg-corrected", "none": ""}[self.correction]
        return (f"vs baseline {self.baseline!r}: {test}{fix} over {len(self.rows)} comparisons, "
                f"alpha {self.alpha:g}; {self.confidence:.0%} bootstrap CI of the difference; seed {self.seed}")


def _per_query(results: Any, metric: Any) -> dict[str, float]:
    if hasattr(results, "query"):
        return results.query(metric)
    return dict(results[str(metric)])


def compare_systems(results: Mapping[str, Any], metrics: Sequence[Any], *, baseline: str, test: str = "t",
                    correction: str = "holm", alpha: float = 0.05, confidence: float = 0.95,
                    n_resamples: int = 10_000, seed: int = 0, labels: Sequence[str] | None = None) -> Comparison:
    """Compare every system with ``baseline`` on each metric, paired by query id.

    Args:
        results: system name -> :class:`~evalbridge.results.Results` (or metric -> {query id: value}).
        metrics: the metrics to compare (any spelling, as evaluated).
        baseline: name of the baseline system in ``results``.
        test: ``t`` (paired t-test) or ``randomization`` (Fisher); decides significance.
        correction: ``holm``, ``bh`` (Benjamini-Hochberg) or ``none``, over every (system, metric).
        alpha: significance level of the corrected p-values.
        confidence: level of the bootstrap confidence interval of the difference.
        n_resamples: resamples of the randomization test and of the bootstrap.
        seed: seed of every random generator.
        labels: the name of each metric in the rows (default ``str(metric)``), e.g. as the first
            system resolved it (``P(rel=2)@10``) while each system is read with the spec as asked.

    Raises:
        InputError: unknown baseline, test or correction, or no query in common.

    Example:
        >>> base = {"P@1": {"q1": 0.0, "q2": 1.0, "q3": 0.0}}
        >>> new = {"P@1": {"q1": 1.0, "q2": 1.0, "q3": 1.0}}
        >>> row = compare_systems({"base": base, "new": new}, ["P@1"], baseline="base").rows[0]
        >>> round(row.delta, 4), (row.wins, row.ties, row.losses), round(row.p_t, 4)
        (0.6667, (2, 1, 0), 0.1835)
    """
    for name, value, allowed in (("test", test, TESTS), ("correction", correction, CORRECTIONS)):
        if value not in allowed:
            raise InputError(f"unknown {name} {value!r}; choose one of {', '.join(map(repr, allowed))}.")
    if baseline not in results:
        raise InputError(f"the baseline {baseline!r} is not one of the systems ({', '.join(map(repr, results))}).",
                         fix="set the baseline to the name of one of the runs.")
    rows: list[dict[str, Any]] = []
    raw: list[float] = []
    labels = list(labels) if labels is not None else [str(m) for m in metrics]
    if len(labels) != len(metrics):
        raise InputError(f"got {len(labels)} labels for {len(metrics)} metrics.")
    for metric, label in zip(metrics, labels):
        base = _per_query(results[baseline], metric)
        for system, other in results.items():
            if system == baseline:
                continue
            values = _per_query(other, metric)
            common = [q for q in base if q in values]
            if not common:
                raise InputError(f"{system!r} and the baseline {baseline!r} have no query in common for {metric}.",
                                 fix="evaluate both systems on the same qrels.")
            a, b = [values[q] for q in common], [base[q] for q in common]
            low, high = bootstrap_ci(a, b, confidence=confidence, n_resamples=n_resamples, seed=seed)
            wins, ties, losses = win_tie_loss(a, b)
            p = {name: function(a, b, n_resamples, seed) for name, function in TESTS.items()}
            mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
            rows.append(dict(metric=label, system=system, baseline=baseline, n=len(common),
                             baseline_mean=mean_b, system_mean=mean_a, delta=mean_a - mean_b, ci_low=low,
                             ci_high=high, effect_size=effect_size(a, b), wins=wins, ties=ties, losses=losses,
                             p_t=p["t"], p_randomization=p["randomization"]))
            raw.append(p[test])
    adjusted = CORRECTIONS[correction](raw)
    final = tuple(PairedComparison(**row, p_adjusted=p_adj, significant=bool(p_adj <= alpha))
                  for row, p_adj in zip(rows, adjusted))
    return Comparison(rows=final, baseline=baseline, test=test, correction=correction, alpha=alpha,
                      confidence=confidence, n_resamples=n_resamples, seed=seed)
