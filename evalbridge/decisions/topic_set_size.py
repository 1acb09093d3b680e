"""Collection design: how many queries a test collection needs to tell systems apart (Sakai's topic set size design).

Sakai ("Topic set size design", Information Retrieval Journal 19, 2016, after Nagata's sample size design) reads a
systems x queries matrix of an existing collection or a pilot, estimates the within-system variance sigma^2 by
V_E, the residual mean square of the two-way ANOVA without replication (systems x queries,
:func:`evalbridge.stats.tiers.two_way_residual`), and gives the number of queries n needed for three requirements
at level ``alpha`` and type II error ``beta`` (power 1 - beta):

* **paired t-test**: detect a difference ``min_difference`` between two systems. The per-query differences of two
  systems have variance sigma_t^2 = 2 sigma^2 (the query's effect cancels), and n is the fewest queries whose
  two-sided paired t-test reaches power 1 - beta at the standardised effect min_difference / sigma_t (the
  noncentral t, :func:`evalbridge.decisions.power.queries_needed`: statsmodels' ``TTestPower``);
* **one-way ANOVA** over ``systems`` (m, default: the matrix's): detect a range ``min_difference`` between the best
  and the worst of m systems. The least favourable configuration (two systems min_difference apart, the others
  midway) gives Delta = min_difference^2 / (2 sigma^2) and the noncentrality n Delta; n is the fewest queries with
  P(F'(m - 1, m(n - 1), n Delta) > F_(1 - alpha)(m - 1, m(n - 1))) >= 1 - beta (statsmodels' ``FTestAnovaPower``
  with nobs = m n and effect size f = sqrt(Delta / m));
* **confidence interval**: the 100(1 - alpha)% interval of the difference of two systems' means, t_(alpha/2)(n - 1)
  sqrt(V_t / n) each side, has an expected width no larger than ``ci_width`` (default: ``min_difference``):
  2 t_(alpha/2)(n - 1) E[sqrt(V_t)] / sqrt(n) <= ci_width with E[sqrt(V_t)] = sigma_t sqrt(2 / (n - 1))
  Gamma(n / 2) / Gamma((n - 1) / 2).

Sakai's Excel tools approximate the noncentral t and F distributions by normal ones; the numbers here are the exact
distributions' (scipy), so a size may be one or two queries from his tools' (the tests check both). A design whose
variance is 0 (every system a constant shift of another, or all values equal) needs the fewest queries any test has,
2; a requirement beyond :data:`~evalbridge.decisions.power.MAX_QUERIES` queries is out of reach (None).

Example:
    >>> import numpy as np
    >>> scores = np.array([[0.7, 0.3, 0.2, 0.6, 0.4], [0.5, 0.1, 0.0, 0.2, 0.4], [0.0, 0.0, 0.2, 0.1, 0.3]])
    >>> d = topic_set_size(scores, min_difference=0.1)
    >>> d.rows[0].t_test, d.rows[0].anova, d.rows[0].ci
    (45, 54, 86)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.json_data import json_ready
from ..common.parameters import Interval, Rule, check_parameters, rule_table
from ..views.table import Shown
from .power import MAX_QUERIES, queries_needed
from .standings import metric_names
from ..stats.tiers import two_way_residual
from .tiers import score_matrix

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TOPIC_SET_PARAMETERS", "TopicSetRow", "TopicSetSize", "topic_set_size", "anova_queries", "ci_queries"]

#: One rule per parameter of :func:`topic_set_size`, for every door.
TOPIC_SET_PARAMETERS: Mapping[str, Rule] = rule_table(
    Interval("alpha", float, 0, 1, closed="neither", default=0.05,
             fix="the significance level is a probability, e.g. 0.05 or 0.01."),
    Interval("beta", float, 0, 1, closed="neither", default=0.2,
             fix="the type II error is a probability, e.g. 0.2 (power 0.8)."),
    Interval("min_difference", float, 0, None, closed="neither", default=0.05,
             fix="the minimum detectable difference is a difference of means in the metric's units, e.g. 0.05."),
    Interval("ci_width", float, 0, None, closed="neither", default=None,
             fix="the cap on the confidence interval's width is in the metric's units, e.g. 0.05."),
    Interval("systems", int, 2, None, closed="left", default=None,
             fix="the one-way ANOVA compares two systems or more, e.g. systems=10."),
)


def _smallest(enough: Any, start: int = 2) -> int | None:
    """The smallest whole n >= ``start`` with ``enough(n)`` (an increasing condition), or None beyond MAX_QUERIES:
    doubling, then bisection between whole numbers."""
    if enough(start):
        return start
    low, high = start, start * 2
    while not enough(high):
        if high >= MAX_QUERIES:
            return None
        low, high = high, min(high * 2, MAX_QUERIES)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if enough(middle) else (middle, high)
    return high


def anova_queries(min_difference: float, *, variance: float, systems: int, alpha: float = 0.05,
                  beta: float = 0.2) -> int | None:
    """The fewest queries for the one-way ANOVA over ``systems`` systems to detect a range ``min_difference`` with
    power 1 - ``beta`` at level ``alpha``, the within-system variance being ``variance`` (see the module docstring).

    >>> anova_queries(0.1, variance=0.05, systems=5)   # statsmodels' FTestAnovaPower: nobs 601.5 = 5 x 120.3
    121
    """
    from scipy.special import fdtri, ncfdtr

    if variance == 0:
        return 2
    delta = min_difference ** 2 / (2 * variance)

    def enough(n: int) -> bool:    # scipy's special functions: ncf.sf and f.isf without their ~15 ms a call
        dfn, dfd = systems - 1, systems * (n - 1)
        return bool(1 - ncfdtr(dfn, dfd, n * delta, float(fdtri(dfn, dfd, 1 - alpha))) >= 1 - beta)

    return _smallest(enough)


def ci_queries(width: float, *, variance: float, alpha: float = 0.05) -> int | None:
    """The fewest queries whose 100(1 - ``alpha``)% confidence interval of a difference of two systems' means has an
    expected width of at most ``width``, the within-system variance being ``variance`` (see the module docstring).

    >>> ci_queries(0.1, variance=0.05)
    156
    """
    from scipy.special import gammaln
    from scipy.stats import t

    if variance == 0:
        return 2
    sd = math.sqrt(2 * variance)

    def enough(n: int) -> bool:
        expected_sd = sd * math.sqrt(2 / (n - 1)) * math.exp(gammaln(n / 2) - gammaln((n - 1) / 2))
        return bool(2 * t.isf(alpha / 2, n - 1) * expected_sd / math.sqrt(n) <= width)

    return _smallest(enough)


@dataclass(frozen=True)
class TopicSetRow:
    """One metric's design.

    Attributes:
        metric: the metric's label.
        systems, queries: the matrix the variance was estimated from (the queries every system has).
        variance: V_E, the residual mean square of the two-way ANOVA without replication; df its degrees of freedom.
        t_test, anova, ci: the queries the paired t-test, the one-way ANOVA over ``anova_systems`` systems and the
            confidence interval need (None: out of reach).
    """

    metric: str
    systems: int
    queries: int
    variance: float
    df: int
    t_test: int | None
    anova: int | None
    ci: int | None


@dataclass(frozen=True)
class TopicSetSize(Shown):
    """The queries a collection needs, metric by metric, with the requirements asked (see the module docstring).

    Attributes:
        rows: one :class:`TopicSetRow` per metric.
        alpha, beta: the level and the type II error (power 1 - beta).
        min_difference: the minimum detectable difference (t-test) and range (ANOVA), in the metric's units.
        ci_width: the cap on the expected width of the confidence interval.
        anova_systems: the systems the one-way ANOVA compares (None: each matrix's own count).
        unpaired: the queries left out of each metric's matrix because some system has no value for them.
    """

    rows: tuple[TopicSetRow, ...]
    alpha: float
    beta: float
    min_difference: float
    ci_width: float
    anova_systems: int | None = None
    unpaired: tuple[int, ...] = ()

    def get(self, metric: str) -> TopicSetRow | None:
        """The row of ``metric`` (by label), or None."""
        return next((r for r in self.rows if r.metric == metric), None)

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: the fields of :class:`TopicSetRow`."""
        import pandas as pd

        return pd.DataFrame([asdict(r) for r in self.rows], columns=list(TopicSetRow.__dataclass_fields__))

    def table(self, fmt: str = "terminal") -> str:
        """The design as text: ``json`` or any output format that writes tables
        (:mod:`evalbridge.views.topic_set_size`)."""
        from ..views.topic_set_size import render_topic_set_size

        return render_topic_set_size(self, fmt)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready."""
        return json_ready(asdict(self))


def _matrices(scores: Any, metrics: Sequence[str] | None) -> list[tuple[str, Any, int]]:
    """(metric label, systems x queries matrix, queries left out) of each metric: a matrix given as is (label
    ``scores``), or per-query values ``{system: Results}`` / ``{system: {metric: {query: value}}}``."""
    if not isinstance(scores, Mapping):
        import numpy as np

        return [("scores" if not metrics else str(metrics[0]), np.asarray(scores, dtype=np.float64), 0)]
    if not scores:
        raise InputError("topic set size design reads a systems x queries matrix; got no system.",
                         fix="give the per-query values of every system of an existing collection or a pilot.")
    names = metric_names(scores[next(iter(scores))], metrics)
    out = []
    for metric in names:
        x, common, unpaired = score_matrix(scores, metric)
        out.append((metric, x, unpaired))
    return out


def topic_set_size(scores: Any, metrics: Sequence[str] | None = None, *, alpha: float = 0.05, beta: float = 0.2,
                   min_difference: float = 0.05, ci_width: float | None = None,
                   systems: int | None = None) -> TopicSetSize:
    """The queries a collection needs for a paired t-test, a one-way ANOVA over ``systems`` systems (default: those
    of the matrix) and a confidence interval no wider than ``ci_width`` (default: ``min_difference``), from the
    variance of a systems x queries matrix (``scores``: an array, or per-query values of every system, each metric
    its own matrix; see the module docstring)."""
    given = {"alpha": alpha, "beta": beta, "min_difference": min_difference, "ci_width": ci_width, "systems": systems}
    checked = {name: None for name in given} | check_parameters(
        TOPIC_SET_PARAMETERS, {name: value for name, value in given.items() if value is not None})
    width = checked["ci_width"] if checked["ci_width"] is not None else checked["min_difference"]
    rows, unpaired = [], []
    for metric, x, left_out in _matrices(scores, metrics):
        variance, df = two_way_residual(x)
        m, n = x.shape
        a, b, d = checked["alpha"], checked["beta"], checked["min_difference"]
        rows.append(TopicSetRow(
            metric, m, n, variance, df,
            queries_needed(d, sd=math.sqrt(2 * variance), alpha=a, power=1 - b),
            anova_queries(d, variance=variance, systems=checked["systems"] or m, alpha=a, beta=b),
            ci_queries(width, variance=variance, alpha=a)))
        unpaired.append(left_out)
    return TopicSetSize(tuple(rows), checked["alpha"], checked["beta"], checked["min_difference"], width,
                        checked["systems"], tuple(unpaired))
