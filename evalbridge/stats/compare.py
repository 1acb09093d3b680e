"""Paired comparison of systems on per-query values, in one call.

``eb.compare(qrels, {"bm25": run_a, "dense": run_b}, metrics, baseline="bm25")`` evaluates each
run and compares them; :func:`compare_systems` does the comparison from results already
computed. Which pairs are compared:

* ``baseline="bm25"``: every other system against that baseline;
* ``baseline=["bm25", "dense"]``: every system against each baseline (each pair once);
* ``baseline=None``: all pairs, as ranx's ``compare``.

For each pair (system, baseline) and metric, on the queries both were evaluated on:

* ``delta`` = mean(system) - mean(baseline) = mean(d), with d_q = system_q - baseline_q;
* two-sided p-values of the paired t-test (:func:`scipy.stats.ttest_rel`,
  t = mean(d) / (sd(d) / sqrt(n))), of Fisher's randomization test (each d_q's sign flipped at
  random; scipy's ``permutation_test``, batched in :mod:`evalbridge.stats.resampling`) and of
  the Wilcoxon signed-rank test (:func:`scipy.stats.wilcoxon`, zero differences left out);
* a bootstrap confidence interval of ``delta`` (BCa or percentile, batched);
* the effect size d_z = mean(d) / sd(d) (Cohen's d for paired samples);
* win / tie / loss counts: queries where the system is above / equal to / below the baseline.

Each system also gets a bootstrap confidence interval of its own mean, per metric. The
p-values of the chosen test are corrected over the whole family, every (pair, metric)
compared: Holm or Bonferroni (family-wise error) or Benjamini-Hochberg (false discovery
rate). Every random step is seeded. Tables mark significance with arrows against the
baseline, or with ranx's superscript letters: each system gets a letter, and a cell carries
the letters of the systems it is significantly better than.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError, MetricSpecError
from ..metrics.requests import MetricRequest, MetricsArg, bad_metrics, find_request, metric_requests, request
from ..metrics.spec import Metric, parse_metric
from .parameters import Interval, OneOf, Rule, check_parameters, rule_table
from .resampling import DEFAULT_MEMORY

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from typing_extensions import Unpack

    from ..settings import Keywords, Settings

    from .slices import Slices

__all__ = ["paired_t_test", "randomization_test", "wilcoxon_test", "bootstrap_ci", "mean_ci", "holm",
           "benjamini_hochberg", "bonferroni", "effect_size", "win_tie_loss", "PairedComparison",
           "SystemInterval", "Comparison", "compare_systems", "compare", "TESTS", "CORRECTIONS",
           "COMPARISON_PARAMETERS", "check_comparison_parameters", "MAX_RESAMPLES"]

#: the most resamples accepted: the Monte-Carlo p-value is then within about +-0.0004 of the exact one at p = 0.05
MAX_RESAMPLES = 1_000_000


def _differences(a: Sequence[float], b: Sequence[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    import numpy as np

    x, y = np.asarray(a, dtype="float64"), np.asarray(b, dtype="float64")
    if x.shape != y.shape or x.ndim != 1:
        raise InputError(f"paired values must be two lists of the same length; got {x.shape} and {y.shape}.",
                         fix="compare systems on the same queries, in the same order.")
    for side, values in (("first", x), ("second", y)):
        _check_finite(values, f"values of the {side} list", lambda i: f"value {i}")
    return x, y, x - y


def _check_finite(values: np.ndarray, whose: str, name: Callable[[int], str]) -> None:
    """Refuse NaN and infinite per-query values: a mean, a test or an interval over them means nothing
    (scipy's t-test gives p = 0 for an infinite difference, and the resampling tests count NaN as no change)."""
    import numpy as np

    finite = np.isfinite(values)
    if not finite.all():
        i = int(np.flatnonzero(~finite)[0])
        count = int(np.count_nonzero(~finite))
        raise InputError(f"the {whose} include {count} value{'s' if count > 1 else ''} that {'are' if count > 1 else 'is'} "
                         f"not a finite number ({name(i)}: {float(values[i])!r}); no mean, test or interval is "
                         f"computed over them.",
                         fix="compare finite per-query values: drop the queries whose metric is undefined, or give "
                             "them a value (0.0 for a query with nothing relevant, as evaluate does).")


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


def randomization_test(a: Sequence[float], b: Sequence[float], *, n_resamples: int = 10_000,
                       seed: int = 0) -> float:
    """Two-sided p-value of Fisher's paired randomization test, scipy's ``permutation_test`` in batches.

    Under the null hypothesis the labels "a" and "b" of each query are exchangeable, so each
    pair is swapped at random (the sign of d_q = a_q - b_q flipped); the p-value is
    2 min(P(t <= t_obs), P(t >= t_obs)) over the swaps, t = mean of the signed d. With
    2^n <= ``n_resamples`` every swap is enumerated (exact test); otherwise ``n_resamples``
    random swaps are drawn from ``numpy.random.default_rng(seed)``: the same swaps and the same
    p-value as :func:`scipy.stats.permutation_test` (``permutation_type="samples"``), in
    bounded memory (:func:`evalbridge.stats.resampling.randomization_pvalues`). 1 when every
    difference is 0; nan with fewer than two pairs.

    >>> randomization_test([0.5, 0.6, 0.2, 0.4], [0.2, 0.4, 0.1, 0.3])
    0.125
    """
    from .resampling import randomization_pvalues

    settings = check_comparison_parameters(n_resamples=n_resamples, seed=seed)
    _, _, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    return float(randomization_pvalues(d[None, :], **settings)[0])


def wilcoxon_test(a: Sequence[float], b: Sequence[float]) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of ``a`` against ``b``, :func:`scipy.stats.wilcoxon`'s.

    The ranks of |d_q| (d = a - b, ties averaged) are summed over the positive d: W+. Zero
    differences (ties between the systems, frequent with metrics such as P@10) are left out
    before ranking (``zero_method="wilcox"``: Wilcoxon's rule, the default of scipy and of
    PyTerrier); the W/T/L counts say how many. scipy's ``method="auto"``: the exact
    distribution for up to 50 differences when none is 0 and no |d| is tied; with zeros or ties,
    every sign flip of the d (exact) for up to 13 queries, else the normal approximation. The
    13-query case is computed here with one matrix product over the 2^m sign patterns of the
    m non-zero d (scipy evaluates them one by one, about 3 s a pair); the p-value is scipy's
    (W+ is a sum of half-integer ranks, exact in floating point). 1 when every difference is 0;
    nan with fewer than two pairs.

    >>> round(wilcoxon_test([0.5, 0.6, 0.2, 0.8, 0.9], [0.2, 0.4, 0.1, 0.4, 0.1]), 4)   # all 5 positive: 2/32
    0.0625
    """
    import numpy as np
    from scipy.stats import rankdata, wilcoxon

    x, y, d = _differences(a, b)
    if len(d) < 2:
        return math.nan
    if not d.any():
        return 1.0
    nonzero = d[d != 0]
    magnitude = np.abs(nonzero)
    if len(d) <= 13 and (len(nonzero) < len(d) or len(np.unique(magnitude)) < len(magnitude)):
        ranks = rankdata(magnitude)
        observed = float(ranks[nonzero > 0].sum())
        patterns = (np.arange(2 ** len(nonzero))[:, None] >> np.arange(len(nonzero))) & 1
        null = patterns @ ranks
        gamma = abs(np.finfo(np.float64).eps * 100 * observed)
        less = np.count_nonzero(null <= observed + gamma) / len(null)
        greater = np.count_nonzero(null >= observed - gamma) / len(null)
        return float(min(1.0, 2 * min(less, greater)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns that the normal approximation is used for few values
        return float(wilcoxon(x, y, zero_method="wilcox", alternative="two-sided").pvalue)


def bootstrap_ci(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95,
                 n_resamples: int = 10_000, seed: int = 0, method: str = "BCa") -> tuple[float, float]:
    """Bootstrap confidence interval of mean(a - b) over paired queries, scipy's ``bootstrap`` in batches.

    Queries are resampled with replacement, keeping each pair together; ``method`` ``BCa``
    (bias-corrected and accelerated) or ``percentile``. The resamples are those of
    :func:`scipy.stats.bootstrap` (``paired=True``) with ``numpy.random.default_rng(seed)``, in
    bounded memory (:func:`evalbridge.stats.resampling.bootstrap_intervals`). When every
    difference is the same value c the interval is (c, c); with fewer than two pairs (nan, nan).

    >>> low, high = bootstrap_ci([0.5, 0.6, 0.2, 0.4, 0.3], [0.2, 0.4, 0.1, 0.3, 0.3], n_resamples=999)
    >>> bool(low < 0.16 < high)
    True
    """
    import numpy as np

    from .resampling import bootstrap_intervals

    settings = check_comparison_parameters(confidence=confidence, n_resamples=n_resamples, seed=seed,
                                           ci_method=method)
    x, y, _ = _differences(a, b)
    intervals = bootstrap_intervals(np.stack([x, y]), [(0, 1)], confidence=settings["confidence"],
                                    n_resamples=settings["n_resamples"], seed=settings["seed"],
                                    method=settings["ci_method"])
    return intervals[2]


def mean_ci(values: Sequence[float], *, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0,
            method: str = "BCa") -> tuple[float, float]:
    """Bootstrap confidence interval of the mean of one system's per-query values.

    The resamples and the interval are those of ``scipy.stats.bootstrap((values,), numpy.mean)``
    with ``numpy.random.default_rng(seed)``, in bounded memory. (c, c) when every value is c;
    (nan, nan) with fewer than two values.

    >>> low, high = mean_ci([0.2, 0.4, 0.1, 0.3, 0.9, 0.5], n_resamples=999)
    >>> bool(low < 0.4 < high)
    True
    """
    import numpy as np

    from .resampling import bootstrap_intervals

    settings = check_comparison_parameters(confidence=confidence, n_resamples=n_resamples, seed=seed,
                                           ci_method=method)
    x = np.asarray(values, dtype="float64")
    if x.ndim != 1:
        raise InputError(f"expected one list of per-query values; got an array of shape {x.shape}.")
    return bootstrap_intervals(x[None, :], confidence=settings["confidence"], n_resamples=settings["n_resamples"],
                               seed=settings["seed"], method=settings["ci_method"])[0]


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


def bonferroni(pvalues: Sequence[float]) -> list[float]:
    """Bonferroni adjusted p-values (family-wise error rate): adj_i = min(1, m * p_i).

    m counts the p-values that are not nan; nan stays nan.

    >>> bonferroni([0.01, 0.04, float("nan"), 0.3])
    [0.03, 0.12, nan, 0.9]
    """
    values = list(map(float, pvalues))
    m = sum(not math.isnan(p) for p in values)
    return [p if math.isnan(p) else round(min(1.0, m * p), 15) for p in values]


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


@dataclass(frozen=True)
class PairedTest:
    """A paired significance test: its title, the row field holding its p-value, one pair's p-value."""

    title: str
    field: str
    pvalue: Callable[[Sequence[float], Sequence[float], int, int], float]


@dataclass(frozen=True)
class Correction:
    """A multiple-comparison correction: its title and the adjusted p-values of a family."""

    title: str
    adjust: Callable[[Sequence[float]], list[float]]


#: test name -> the test (each pair's p-value of each test is in the rows; this one decides significance)
TESTS: Mapping[str, PairedTest] = {
    "t": PairedTest("paired t-test", "p_t", lambda a, b, n_resamples, seed: paired_t_test(a, b)),
    "randomization": PairedTest("Fisher randomization test", "p_randomization",
                                lambda a, b, n_resamples, seed: randomization_test(a, b, n_resamples=n_resamples,
                                                                                   seed=seed)),
    "wilcoxon": PairedTest("Wilcoxon signed-rank test", "p_wilcoxon",
                           lambda a, b, n_resamples, seed: wilcoxon_test(a, b)),
}
#: correction name -> the correction, applied over every (pair, metric) compared
CORRECTIONS: Mapping[str, Correction] = {
    "holm": Correction("Holm-corrected", holm),
    "bh": Correction("Benjamini-Hochberg-corrected", benjamini_hochberg),
    "bonferroni": Correction("Bonferroni-corrected", bonferroni),
    "none": Correction("uncorrected", _no_correction),
}
#: bootstrap interval methods (see :func:`evalbridge.stats.resampling.bootstrap_intervals`)
CI_METHODS = ("BCa", "percentile")

#: One rule per comparison parameter, shared by the Python API, the CLI and the config file:
#: ``COMPARISON_PARAMETERS["alpha"].check(value, source=path, line=n, key="comparison.alpha")``
#: returns the value or raises :class:`~evalbridge.errors.InputError`; ``.default`` and
#: ``.describe()`` give the default and the accepted values for help texts.
COMPARISON_PARAMETERS: Mapping[str, Rule] = rule_table(
    OneOf("test", tuple(TESTS), default="t"),
    OneOf("correction", tuple(CORRECTIONS), default="holm"),
    Interval("alpha", float, 0, 1, closed="neither", default=0.05,
             fix="the significance level is a probability, e.g. 0.05 or 0.01."),
    Interval("confidence", float, 0, 1, closed="neither", default=0.95,
             fix="the confidence level is a probability, e.g. 0.95."),
    Interval("n_resamples", int, 1, MAX_RESAMPLES, closed="both", default=10_000,
             fix=f"10000 resamples give a p-value within about +-0.004 of the exact one at p = 0.05; "
                 f"{MAX_RESAMPLES} (the most accepted) within about +-0.0004."),
    Interval("seed", int, 0, None, closed="left", default=0, fix="use a whole number such as 0 or 42."),
    OneOf("ci_method", CI_METHODS, default="BCa"),
)


def check_comparison_parameters(**values: Any) -> dict[str, Any]:
    """Check the given comparison parameters with :data:`COMPARISON_PARAMETERS` (converted values back).

    >>> check_comparison_parameters(alpha=0.01, n_resamples=1000)
    {'alpha': 0.01, 'n_resamples': 1000}
    >>> check_comparison_parameters(n_resamples=10 ** 12)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: n_resamples must be an integer in [1, 1000000]; got 1000000000000. Fix: ...
    """
    return check_parameters(COMPARISON_PARAMETERS, values)


@dataclass(frozen=True)
class PairedComparison:
    """One system against one baseline on one metric (see the module docstring for each field).

    ``n`` queries have a value for both; ``unpaired`` queries have a value for only one of
    them and are left out of this pair (0 when both were evaluated on the same queries).
    """

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
    p_wilcoxon: float
    p_adjusted: float
    significant: bool
    unpaired: int = 0


@dataclass(frozen=True)
class SystemInterval:
    """One system's mean on one metric over its ``n`` queries, with its bootstrap confidence interval."""

    metric: str
    system: str
    n: int
    mean: float
    ci_low: float
    ci_high: float


def _letter(i: int) -> str:
    """a, b, ..., z, aa, ab, ... (a system's letter by position)."""
    return _letter(i // 26 - 1) + chr(ord("a") + i % 26) if i >= 26 else chr(ord("a") + i)


@dataclass(frozen=True)
class Comparison:
    """Systems compared pair by pair, with the settings used.

    ``print(comparison)`` shows the systems x metrics table of means with significance
    markers and a footnote (test, correction, provenance); ``to_markdown()``, ``to_latex()``,
    ``to_html()`` (and the notebook view) the same table in other formats; ``to_frame()`` one
    row per (pair, metric), ``to_frame(table="systems")`` each system's mean and interval.

    Attributes:
        rows: one :class:`PairedComparison` per (metric, pair), metrics in the order asked.
        intervals: one :class:`SystemInterval` per (metric, system).
        systems: the system names, in the order given (their letters: a, b, c, ...).
        metrics: the metric labels (the user's labels, else the spellings asked).
        baselines: the systems the others were compared with; empty when all pairs were compared.
        test: the test whose corrected p-values decide significance (a key of :data:`TESTS`).
        correction: a key of :data:`CORRECTIONS`, applied over every row.
        alpha: significance level of the corrected p-values.
        confidence, n_resamples, seed, ci_method: the bootstrap's and the randomization test's settings.
        provenance: one line per system saying how its values were computed (when known).
        names: each label with the spelling asked and the metric as the first system evaluated it
            (empty when the systems' values were plain mappings keyed by something else than a metric).
        slices: per-slice means and differences against the baseline (:mod:`evalbridge.stats.slices`)
            when ``slices=`` was given, else None.
    """

    rows: tuple[PairedComparison, ...]
    intervals: tuple[SystemInterval, ...]
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    baselines: tuple[str, ...]
    test: str
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int
    ci_method: str = "BCa"
    provenance: tuple[str, ...] = ()
    names: tuple[MetricRequest, ...] = ()
    slices: Slices | None = None

    @property
    def baseline(self) -> str | None:
        """The first baseline (the one arrows refer to), or None when all pairs were compared."""
        return self.baselines[0] if self.baselines else None

    @property
    def letters(self) -> dict[str, str]:
        """system -> its letter (a, b, c, ... in the order of :attr:`systems`)."""
        return {system: _letter(i) for i, system in enumerate(self.systems)}

    def _metric(self, metric: str | Metric | MetricRequest) -> tuple[str, ...]:
        """The label(s) of the rows ``metric`` names: a label, the spelling asked, the canonical string or any
        other spelling of a metric compared."""
        found = find_request(self.names, metric)
        if found is not None:
            return (found.label,)
        if isinstance(metric, MetricRequest):
            metric = metric.label
        try:
            return (str(metric), str(parse_metric(metric)))
        except MetricSpecError:
            return (str(metric),)

    def get(self, system: str, metric: str | Metric | MetricRequest, *, baseline: str | None = None) -> PairedComparison | None:
        """The row of ``system`` against ``baseline`` (default: the first baseline, or the first system
        when all pairs were compared) on ``metric`` (any spelling), or None."""
        wanted = self._metric(metric)
        against = baseline or self.baseline or self.systems[0]
        return next((r for r in self.rows if r.system == system and r.baseline == against and r.metric in wanted),
                    None)

    def interval(self, system: str, metric: str | Metric | MetricRequest) -> SystemInterval | None:
        """``system``'s mean and confidence interval on ``metric`` (any spelling), or None."""
        wanted = self._metric(metric)
        return next((r for r in self.intervals if r.system == system and r.metric in wanted), None)

    def better_than(self, system: str, metric: str | Metric | MetricRequest) -> tuple[str, ...]:
        """The systems ``system`` is significantly better than on ``metric``, in the order of :attr:`systems`."""
        wanted = self._metric(metric)
        beaten = set()
        for r in self.rows:
            if r.metric in wanted and r.significant:
                if r.system == system and r.delta > 0:
                    beaten.add(r.baseline)
                elif r.baseline == system and r.delta < 0:
                    beaten.add(r.system)
        return tuple(s for s in self.systems if s in beaten)

    def marker(self, system: str, metric: str | Metric | MetricRequest, *, style: str = "arrows", fmt: str = "terminal") -> str:
        """A cell's significance marker in a style of :data:`~evalbridge.reports.markers.MARKER_STYLES` and an
        output format.

        ``arrows``: ▲ / ▼ when significantly above / below the baseline; ``letters``: the letters of
        the systems it is significantly better than, as a superscript.
        """
        from ..reports.markers import marker
        from ..reports.formats import table_format

        return marker(self, system, metric, self.marker_style(style), table_format(fmt).marks)

    def marker_style(self, markers: str | None) -> str:
        """The marker style ``markers`` names (default: ``arrows`` with one baseline, else ``letters``)."""
        from ..reports.markers import MARKER_STYLES

        style = markers or ("arrows" if len(self.baselines) == 1 else "letters")
        if style not in MARKER_STYLES:
            raise InputError(f"unknown marker style {style!r}; choose one of {', '.join(map(repr, MARKER_STYLES))}.")
        return style

    def to_frame(self, *, table: str = "pairs") -> pd.DataFrame:
        """``pairs``: one row per (metric, pair), one column per field; ``systems``: one row per
        (metric, system) with its mean, interval and letter."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        return pd.DataFrame(_FRAMES[table](self))

    def settings(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "baselines": list(self.baselines), "test": self.test,
                "correction": self.correction, "alpha": self.alpha, "confidence": self.confidence,
                "n_resamples": self.n_resamples, "seed": self.seed, "ci_method": self.ci_method}

    def to_dict(self) -> dict[str, Any]:
        """``{"settings", "rows", "intervals", "provenance"}``, JSON-ready (nan and inf become None)."""
        def clean(value: Any) -> Any:
            return None if isinstance(value, float) and not math.isfinite(value) else value

        return {"settings": self.settings(),
                "rows": [{k: clean(v) for k, v in asdict(r).items()} for r in self.rows],
                "intervals": [{k: clean(v) for k, v in asdict(r).items()} for r in self.intervals],
                "names": [r.to_dict() for r in self.names],
                "provenance": list(self.provenance)}

    def describe(self) -> str:
        """One sentence saying how significance was decided, and over which family."""
        pairs = len(self.rows) // max(1, len(self.metrics))
        if not self.baselines:
            who = "all pairs"
        elif len(self.baselines) == 1:
            who = f"vs baseline {self.baselines[0]!r}"
        else:
            who = f"vs baselines {', '.join(map(repr, self.baselines))}"
        unpaired = sum(r.unpaired for r in self.rows)
        text = (f"{who}: {TESTS[self.test].title}, {CORRECTIONS[self.correction].title} over {len(self.rows)} "
                f"comparisons ({pairs} pairs x {len(self.metrics)} metrics: every comparison made), "
                f"alpha {self.alpha:g}; {self.confidence:.0%} {self.ci_method} bootstrap CIs "
                f"({self.n_resamples} resamples); seed {self.seed}")
        if unpaired:
            text += f"; {unpaired} (pair, metric, query) values without a partner left out of their pair"
        return text

    def footnote(self, *, markers: str | None = None) -> list[str]:
        """The lines under a table: what the markers mean, :meth:`describe`, the provenance."""
        from ..reports.markers import MARKER_STYLES

        return [MARKER_STYLES[self.marker_style(markers)].legend, self.describe(), *self.provenance]

    def table(self, *, fmt: str = "terminal", markers: str | None = None, digits: int = 4) -> str:
        """The systems x metrics table of means with significance markers, and its footnote.

        ``fmt``: an output format that writes tables (``terminal``, ``markdown``, ``latex``, ``html``);
        ``markers``: a key of :data:`~evalbridge.reports.markers.MARKER_STYLES` (default: ``arrows`` with
        one baseline, else ``letters``).
        """
        from ..reports.comparison_table import comparison_table

        return comparison_table(self, fmt, markers, digits)

    def to_markdown(self, *, markers: str | None = None, digits: int = 4) -> str:
        """:meth:`table` in GitHub Markdown."""
        return self.table(fmt="markdown", markers=markers, digits=digits)

    def to_latex(self, *, markers: str | None = None, digits: int = 4) -> str:
        """:meth:`table` as a booktabs LaTeX table, the footnote in the caption."""
        return self.table(fmt="latex", markers=markers, digits=digits)

    def to_html(self, *, markers: str | None = None, digits: int = 4) -> str:
        """:meth:`table` as an HTML table, the footnote below it."""
        return self.table(fmt="html", markers=markers, digits=digits)

    def _repr_html_(self) -> str:
        return self.table(fmt="html")

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        significant = sum(r.significant for r in self.rows)
        who = f"baselines={list(self.baselines)}" if self.baselines else "all pairs"
        return (f"Comparison({len(self.systems)} systems x {len(self.metrics)} metrics, {who}, test={self.test!r}, "
                f"correction={self.correction!r}: {significant}/{len(self.rows)} significant at {self.alpha:g})")


def _pair_records(comparison: Comparison) -> list[dict[str, Any]]:
    return [asdict(r) for r in comparison.rows]


def _system_records(comparison: Comparison) -> list[dict[str, Any]]:
    letters = comparison.letters
    return [{**asdict(r), "letter": letters[r.system]} for r in comparison.intervals]


#: to_frame(table) -> the records of that table
_FRAMES: Mapping[str, Callable[[Comparison], list[dict[str, Any]]]] = {
    "pairs": _pair_records, "systems": _system_records,
}


# ---------------------------------------------------------------- computing a comparison

def _per_query(results: Any, metric: Any) -> Mapping[str, float]:
    from ..results import Results

    if not isinstance(results, (Results, Mapping)):
        raise InputError(f"a system's results must be Results or {{metric: {{query: value}}}}; got "
                         f"{type(results).__name__} {results!r:.60}.", fix="pass what evaluate() returns.")
    try:
        if isinstance(results, Results):
            return results.query(metric)
        given: Mapping[str, float] = results[metric.asked if isinstance(metric, MetricRequest) else str(metric)]
        return given
    except KeyError:
        got = results.metrics if isinstance(results, Results) else results
        name = metric.label if isinstance(metric, MetricRequest) else str(metric)
        raise InputError(f"no per-query values for {name!r}; got {', '.join(map(str, got))}.",
                         fix="evaluate every system on the metrics compared.") from None


def _systems(names: Sequence[str]) -> tuple[str, ...]:
    """The system names, refused when fewer than two."""
    if len(names) < 2:
        raise InputError(f"a comparison needs at least two systems; got {len(names)} ({', '.join(map(repr, names))}).",
                         fix="pass a mapping of two or more system names to their results (or runs).")
    return tuple(names)


def _baselines(baseline: str | Sequence[str] | None, names: Sequence[str]) -> tuple[str, ...]:
    chosen = () if baseline is None else (baseline,) if isinstance(baseline, str) else tuple(baseline)
    for name in chosen:
        if name not in names:
            raise InputError(f"the baseline {name!r} is not one of the systems ({', '.join(map(repr, names))}).",
                             fix="set the baseline to the name of one of the runs.")
    if len(set(chosen)) != len(chosen):
        raise InputError(f"a baseline is named twice in {list(chosen)}.")
    if baseline is not None and not chosen:
        raise InputError("baseline=[] names no baseline.", fix="use baseline=None to compare all pairs.")
    return chosen


def _pairs(names: Sequence[str], baselines: Sequence[str]) -> list[tuple[str, str]]:
    """(system, baseline) pairs: each system against each baseline, or all pairs (later vs earlier); each pair once."""
    if not baselines:
        return [(names[j], names[i]) for j in range(len(names)) for i in range(j)]
    seen: set[frozenset[str]] = set()
    pairs = []
    for base in baselines:
        for system in names:
            key = frozenset((system, base))
            if system != base and key not in seen:
                seen.add(key)
                pairs.append((system, base))
    return pairs


class _Group:
    """Columns over one ordered set of queries: they share resamples (bootstrap) and sign flips."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.columns: list[Any] = []          # base value arrays, each of length n
        self.index: dict[tuple[int, str], int] = {}   # (metric index, system) -> column
        self.units: dict[int, tuple[list[int], list[tuple[int, int]]]] = {}  # metric -> (columns, differences)

    def column(self, metric: int, system: str, values: Any) -> int:
        key = (metric, system)
        if key not in self.index:
            self.index[key] = len(self.columns)
            self.columns.append(values)
            self.units.setdefault(metric, ([], []))[0].append(self.index[key])
        return self.index[key]

    def difference(self, metric: int, i: int, j: int) -> None:
        self.units.setdefault(metric, ([], []))[1].append((i, j))


def _resample(group: _Group, *, confidence: float, n_resamples: int, seed: int, method: str,
              memory: int) -> tuple[dict[int, tuple[float, float]], dict[tuple[int, int], tuple[float, float]],
                                    dict[tuple[int, int], float]]:
    """Bootstrap intervals of every column and difference of a group, and randomization p-values.

    Metrics are taken together as long as their bootstrap means fit in ``memory``; each batch of
    metrics draws the same resamples (same seed), so the split changes nothing.
    """
    import numpy as np

    from .resampling import bootstrap_intervals, randomization_pvalues

    columns: dict[int, tuple[float, float]] = {}
    differences: dict[tuple[int, int], tuple[float, float]] = {}
    per_metric = max(1, memory // max(1, 8 * n_resamples * max(len(c) + len(d) for c, d in group.units.values())))
    units = list(group.units.values())
    for start in range(0, len(units), per_metric):
        chosen = units[start:start + per_metric]
        order = [c for cols, _ in chosen for c in cols]
        position = {c: k for k, c in enumerate(order)}
        pairs = [(i, j) for _, diffs in chosen for i, j in diffs]
        intervals = bootstrap_intervals(np.stack([group.columns[c] for c in order]),
                                        [(position[i], position[j]) for i, j in pairs], confidence=confidence,
                                        n_resamples=n_resamples, seed=seed, method=method, memory=memory)
        columns.update(zip(order, intervals[:len(order)]))
        differences.update(zip(pairs, intervals[len(order):]))
    pairs = [pair for _, diffs in units for pair in diffs]
    pvalues: dict[tuple[int, int], float] = {}
    if pairs and group.n >= 2:
        d = np.stack([group.columns[i] - group.columns[j] for i, j in pairs])
        pvalues = dict(zip(pairs, map(float, randomization_pvalues(d, n_resamples=n_resamples, seed=seed,
                                                                   memory=memory))))
        pvalues.update({pair: 1.0 for pair, row in zip(pairs, d) if not row.any()})
    return columns, differences, pvalues


def _provenance(results: Mapping[str, Any]) -> tuple[str, ...]:
    """One line per distinct provenance summary, naming the systems it covers."""
    from ..results import Results

    systems: dict[str, list[str]] = {}
    for name, res in results.items():
        if isinstance(res, Results):
            systems.setdefault(res.provenance.summary(), []).append(name)
    return tuple(f"{', '.join(names)}: {summary}" for summary, names in systems.items())


def compare_systems(results: Mapping[str, Any], metrics: Sequence[Any], *, baseline: str | Sequence[str] | None = None,
                    test: str = "t", correction: str = "holm", alpha: float = 0.05, confidence: float = 0.95,
                    n_resamples: int = 10_000, seed: int = 0, ci_method: str = "BCa",
                    labels: Sequence[str] | None = None, slices: Any = None) -> Comparison:
    """Compare systems pair by pair on each metric, paired by query id.

    Args:
        results: system name -> :class:`~evalbridge.results.Results` (or metric -> {query id: value}),
            in display order (the order of the letters).
        metrics: the metrics to compare (any spelling, as evaluated), a mapping label -> spec, or
            :class:`~evalbridge.metrics.requests.MetricRequest` values; the rows are named by each label
            (default: the spelling given), and :attr:`Comparison.names` records each label's metric.
        baseline: one system name (every other system against it), several (every system against
            each, each pair once), or None (all pairs, as ranx's ``compare``).
        test: a key of :data:`TESTS` (``t``, ``randomization``, ``wilcoxon``); decides significance.
        correction: ``holm``, ``bh`` (Benjamini-Hochberg), ``bonferroni`` or ``none``, over every
            (pair, metric) compared.
        alpha: significance level of the corrected p-values.
        confidence: level of the bootstrap confidence intervals (each system's mean, each difference).
        n_resamples: resamples of the randomization test and of the bootstrap.
        seed: seed of every random generator.
        ci_method: ``BCa`` or ``percentile``.
        labels: the name of each metric in the rows, overriding the labels of ``metrics``.
        slices: per-slice means and differences in :attr:`Comparison.slices`: a mapping query id -> label(s),
            a field the systems' RAG logs kept, or a (query table, column) pair
            (:mod:`evalbridge.stats.slices`); each system against the baseline(s) on every slice with
            ``test``, Benjamini-Hochberg over every (slice, pair, metric) tested.

    Every parameter is checked with :data:`COMPARISON_PARAMETERS`. Memory does not grow with
    ``n_resamples`` x queries: the resampling runs in batches
    (:mod:`evalbridge.stats.resampling`); the randomization p-values and bootstrap intervals
    are scipy's for the same seed, over the queries in the order of their ids (so the order in which
    ``results`` list them changes nothing).

    Raises:
        InputError: a bad setting, an unknown baseline, fewer than two systems, or a pair without
            any query in common.

    Example:
        >>> base = {"P@1": {"q1": 0.0, "q2": 1.0, "q3": 0.0}}
        >>> new = {"P@1": {"q1": 1.0, "q2": 1.0, "q3": 1.0}}
        >>> row = compare_systems({"base": base, "new": new}, ["P@1"], baseline="base").rows[0]
        >>> round(row.delta, 4), (row.wins, row.ties, row.losses), round(row.p_t, 4)
        (0.6667, (2, 1, 0), 0.1835)
    """
    import numpy as np

    settings = check_comparison_parameters(test=test, correction=correction, alpha=alpha, confidence=confidence,
                                           n_resamples=n_resamples, seed=seed, ci_method=ci_method)
    if not isinstance(results, Mapping):
        raise InputError(f"results must be a mapping of system names to their results; got "
                         f"{type(results).__name__} {results!r:.60}.",
                         fix="pass e.g. {'bm25': eb.evaluate(qrels, bm25, metrics), 'dense': ...}.")
    names = _systems(list(results))
    baselines = _baselines(baseline, names)
    metrics = _requests(metrics)
    if not metrics:
        raise InputError("no metric to compare.", fix="name at least one metric, e.g. ['ndcg@10'].")
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(metrics):
            raise InputError(f"got {len(labels)} labels for {len(metrics)} metrics.")
        metrics = [request(m, label=label) if isinstance(m, MetricRequest) else m for m, label in zip(metrics, labels)]
    else:
        labels = [m.label if isinstance(m, MetricRequest) else str(m) for m in metrics]
    pairs = _pairs(names, baselines)

    groups: dict[tuple[str, ...], _Group] = {}
    own: dict[tuple[int, str], tuple[_Group, int, Any]] = {}       # per-system columns
    paired: dict[tuple[int, str, str], tuple[_Group, int, int, int]] = {}   # pair columns, unpaired count
    for m, metric in enumerate(metrics):
        maps = {name: _per_query(results[name], metric) for name in names}
        # Queries are resampled in the order of their ids, not in the order an evaluation listed them (qrels
        # order locally, sorted by Spark): the same seed gives the same numbers for the same values.
        ids = {name: tuple(sorted(maps[name])) for name in names}
        arrays = {name: np.fromiter(map(maps[name].__getitem__, ids[name]), dtype=np.float64, count=len(ids[name]))
                  for name in names}
        for name in names:
            _check_finite(arrays[name], f"per-query values of {name!r} for {labels[m]}",
                          lambda i: f"query {ids[name][i]!r}")  # (called here, before name changes)
            group = groups.setdefault(ids[name], _Group(len(ids[name])))
            own[m, name] = (group, group.column(m, name, arrays[name]), arrays[name])
        for system, base in pairs:
            if ids[system] == ids[base]:
                common, x, y = ids[base], arrays[system], arrays[base]
            else:
                common = tuple(q for q in ids[base] if q in maps[system])
                x = np.fromiter(map(maps[system].__getitem__, common), dtype=np.float64, count=len(common))
                y = np.fromiter(map(maps[base].__getitem__, common), dtype=np.float64, count=len(common))
            if not common:
                raise InputError(f"{system!r} and {base!r} have no query in common for {labels[m]}.",
                                 fix="evaluate both systems on the same qrels.")
            group = groups.setdefault(common, _Group(len(common)))
            i, j = group.column(m, system, x), group.column(m, base, y)
            group.difference(m, i, j)
            paired[m, system, base] = (group, i, j, len(ids[system]) + len(ids[base]) - 2 * len(common))

    options = dict(confidence=settings["confidence"], n_resamples=settings["n_resamples"], seed=settings["seed"],
                   method=settings["ci_method"], memory=DEFAULT_MEMORY)
    done = {id(group): _resample(group, **options) for group in groups.values()}

    intervals = []
    for m, label in enumerate(labels):
        for name in names:
            group, column, values = own[m, name]
            low, high = done[id(group)][0][column]
            intervals.append(SystemInterval(metric=label, system=name, n=len(values),
                                            mean=math.fsum(values) / len(values), ci_low=low, ci_high=high))
    rows: list[dict[str, Any]] = []
    for m, label in enumerate(labels):
        for system, base in pairs:
            group, i, j, unpaired = paired[m, system, base]
            a, b = group.columns[i], group.columns[j]
            low, high = done[id(group)][1][i, j]
            mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
            wins, ties, losses = win_tie_loss(a, b)
            rows.append(dict(metric=label, system=system, baseline=base, n=len(a), baseline_mean=mean_b,
                             system_mean=mean_a, delta=mean_a - mean_b, ci_low=low, ci_high=high,
                             effect_size=effect_size(a, b), wins=wins, ties=ties, losses=losses,
                             p_t=paired_t_test(a, b), p_randomization=done[id(group)][2].get((i, j), math.nan),
                             p_wilcoxon=wilcoxon_test(a, b), unpaired=unpaired))
    chosen = TESTS[settings["test"]].field
    adjusted = CORRECTIONS[settings["correction"]].adjust([row[chosen] for row in rows])
    final = tuple(PairedComparison(**row, p_adjusted=p, significant=bool(p <= settings["alpha"]))
                  for row, p in zip(rows, adjusted))
    sliced = None
    if slices is not None:
        from .slices import slice_labels, slice_table

        sliced = slice_table({name: {label: _per_query(results[name], metric) for label, metric in zip(labels, metrics)}
                              for name in names}, slice_labels(slices), pairs=pairs if baselines else (),
                             test=settings["test"], pvalue=TESTS[settings["test"]].pvalue,
                             adjust=CORRECTIONS["bh"].adjust, alpha=settings["alpha"],
                             confidence=settings["confidence"], n_resamples=settings["n_resamples"],
                             seed=settings["seed"], ci_method=settings["ci_method"])
    return Comparison(rows=final, intervals=tuple(intervals), systems=names, metrics=tuple(labels),
                      baselines=baselines, test=settings["test"], correction=settings["correction"],
                      alpha=settings["alpha"], confidence=settings["confidence"],
                      n_resamples=settings["n_resamples"], seed=settings["seed"], ci_method=settings["ci_method"],
                      provenance=_provenance(results), names=_names(results[names[0]], metrics, labels),
                      slices=sliced)


def _requests(metrics: Any) -> list[Any]:
    """``metrics`` as requests (:func:`~evalbridge.metrics.requests.metric_requests`), or as given when they
    are keys of plain mappings rather than metrics."""
    if isinstance(metrics, (str, Metric, MetricRequest)):
        metrics = [metrics]
    if not isinstance(metrics, (Mapping, Iterable)) or isinstance(metrics, (bytes, bytearray)):
        raise bad_metrics(metrics)
    if not isinstance(metrics, Mapping):
        metrics = list(metrics)
        if not metrics:
            return []
    try:
        return list(metric_requests(metrics))
    except MetricSpecError:
        return list(metrics)


def _names(first: Any, metrics: Sequence[Any], labels: Sequence[str]) -> tuple[MetricRequest, ...]:
    """Each label with the spelling asked and the metric as ``first`` (a system's results) evaluated it."""
    from ..results import Results

    if not all(isinstance(m, MetricRequest) for m in metrics):
        return ()
    out = []
    for m, label in zip(metrics, labels):
        metric = first.request(m).metric if isinstance(first, Results) else m.metric
        out.append(MetricRequest(label, m.asked, metric))
    return tuple(out)


def compare(qrels: Any, runs: Mapping[str, Any], metrics: MetricsArg, *,
            baseline: str | Sequence[str] | None = None, test: str = "t", correction: str = "holm",
            alpha: float = 0.05, confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0,
            ci_method: str = "BCa", settings: Settings | None = None, slices: Any = None,
            **keywords: Unpack[Keywords]) -> Comparison:
    """Evaluate every run against ``qrels`` and compare them, in one call.

    ``runs`` maps system names to runs (anything :func:`evalbridge.evaluate` reads: dicts,
    :class:`~evalbridge.Run`, TREC file paths, DataFrames...), in display order. Each run is
    evaluated with the same settings (``settings=Settings(...)`` or its keywords, as ``evaluate``), then
    :func:`compare_systems` compares them (``baseline`` ... ``ci_method``, see there); each metric
    is named by its label (``metrics={"precision@10": "P@10"}``), else by the spelling asked, and
    :attr:`Comparison.names` records the metric as evaluated (``P(rel=2)@10``). ``slices``: per-slice
    means and differences (see :func:`compare_systems`); a field name reads the labels the runs' RAG logs kept.

    >>> import evalbridge as eb
    >>> qrels = {f"q{i}": {"d1": 1, "d2": 1} for i in range(6)}
    >>> runs = {"bm25": {q: {"d3": 0.9, "d1": 0.5} for q in qrels},
    ...         "dense": {q: {"d1": 0.9, "d2": 0.8} for q in qrels}}
    >>> cmp = eb.compare(qrels, runs, ["P@1", "RR"], baseline="bm25", test="randomization")
    >>> [(r.metric, r.delta, round(r.p_randomization, 4)) for r in cmp.rows]
    [('P@1', 1.0, 0.0312), ('RR', 0.5, 0.0312)]
    """
    from ..evaluation import evaluate
    from ..settings import settings_of

    chosen = settings_of(settings, keywords)
    parameters = check_comparison_parameters(test=test, correction=correction, alpha=alpha, confidence=confidence,
                                           n_resamples=n_resamples, seed=seed, ci_method=ci_method)
    if not isinstance(runs, Mapping):
        raise InputError(f"runs must be a mapping of system names to runs; got {type(runs).__name__}.",
                         fix="pass e.g. {'bm25': run_a, 'dense': run_b}.")
    _baselines(baseline, _systems(list(runs)))
    wanted = metric_requests(metrics)
    results = {name: evaluate(qrels, run, wanted, settings=chosen) for name, run in runs.items()}
    if isinstance(slices, str):
        from ..model import Run
        from .slices import slice_labels

        slices = slice_labels(slices, [run for run in runs.values() if isinstance(run, Run)])
    return compare_systems(results, wanted, baseline=baseline, slices=slices, **parameters)
