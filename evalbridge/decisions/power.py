"""Statistical power of paired comparisons: the smallest difference an eval set can detect, the queries needed.

For a pair of systems on one metric the per-query differences d_q = system_q - baseline_q have a
standard deviation s over the n queries both were evaluated on. For a true mean difference delta the
standardised effect is d_z = delta / s, and a test's power at level alpha is:

* paired t-test (``test="t"``): the noncentral t, T ~ t'(n - 1, d_z sqrt(n)) against the critical
  value c = t_(1 - alpha / sides)(n - 1): power = P(T > c) (+ P(T < -c) two-sided), statsmodels'
  ``TTestPower``;
* Fisher's randomization test (``test="randomization"``): it flips the signs of the d_q, so it rejects when
  W = sum(d) / sqrt(sum(d^2)) is beyond the critical value w of W over the sign flips (W's permutation
  distribution, which depends only on the magnitudes |d_q| / sqrt(sum(d^2))). W is a monotone function of
  the t statistic, t = sqrt(n - 1) W / sqrt(n - W^2), so with normal differences the power is the noncentral
  t's beyond t* = sqrt(n - 1) w / sqrt(n - w^2): P(T > t*) (+ P(T < -t*) two-sided). On small sets (up to
  :data:`SMALL_SET` queries) w is read from the permutation distribution itself: for 256 draws of normal
  magnitudes, the least W the test rejects at alpha / sides among every sign vector (up to 13 queries) or
  8,192 drawn ones, the power averaged over them; so its discreteness counts (0 when the test's smallest
  p-value, sides / 2^n, is above alpha: fewer than 6 queries at 0.05, two-sided). On larger sets w is the
  normal quantile z_(1 - alpha / sides). Checked against a simulation of the test itself (normal
  differences, 8 to 43 queries) in the tests; a normal approximation with W's denominator held at its
  expectation, used before, detected a too large effect on small sets (power 0.97 at 8 queries, not 0.8).

The **minimum detectable effect** (MDE) is the smallest delta whose power reaches ``power`` (0.8)
with the n queries at hand; the **queries needed** for a target effect are the smallest n whose power
reaches it, the per-query spread s staying what was observed (the target: the observed difference
unless ``effect=`` names one). The Wilcoxon signed-rank test has no such closed form here: its power is
refused, and a compare report with ``test: wilcoxon`` states the t-test's (the report says which).

Example:
    >>> round(detectable_effect(sd=0.2, n=50), 4)     # nDCG@10 differences with sd 0.2 over 50 questions
    0.0808
    >>> queries_needed(0.02, sd=0.2)                  # to detect 0.02 with 80% power
    787
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.parameters import Interval, OneOf, Rule, check_parameters, rule_table
from ..stats.statistics import Statistics, statistics_for

if TYPE_CHECKING:
    import pandas as pd

    from ..model.settings import Settings

__all__ = ["POWER_TESTS", "POWER_PARAMETERS", "PowerRow", "PowerAnalysis", "power", "power_at", "detectable_effect",
           "queries_needed", "MAX_QUERIES"]

#: the tests whose power has a closed form here (the keys of compare's TESTS but Wilcoxon)
POWER_TESTS = ("t", "randomization")
#: the most queries a search for the queries needed looks at; beyond, the target is called out of reach
MAX_QUERIES = 10 ** 9

#: One rule per power parameter, for the Python API, the command line and a config's ``power:`` section.
POWER_PARAMETERS: Mapping[str, Rule] = rule_table(
    OneOf("test", POWER_TESTS, default="t"),
    Interval("alpha", float, 0, 1, closed="neither", default=0.05,
             fix="the significance level is a probability, e.g. 0.05 or 0.01."),
    Interval("power", float, 0, 1, closed="neither", default=0.8,
             fix="the power is a probability, e.g. 0.8 or 0.9."),
    Interval("effect", float, 0, None, closed="neither", default=None,
             fix="the target effect is a difference of means in the metric's units, e.g. 0.01."),
    Interval("sides", int, 1, 2, closed="both", default=2, fix="1 (one-sided) or 2 (two-sided)."),
)


#: up to this many queries the randomization test's critical value comes from its permutation distribution
SMALL_SET = 50
#: draws of the per-query magnitudes whose permutation distributions are averaged over, on a small set
_MAGNITUDES = 256
#: sign vectors of a permutation distribution: every one up to 13 queries, else this many drawn
_SIGN_VECTORS = 2 ** 13


def _beyond(dz: Any, n: Any, critical: Any, sides: int) -> Any:
    """P(T > critical) (+ P(T < -critical) two-sided), T the noncentral t with n - 1 degrees of freedom and
    noncentrality ``dz`` sqrt(n): the paired t-test's power at ``dz`` (>= 0) when it rejects beyond
    ``critical`` (arrays broadcast)."""
    import numpy as np
    from scipy.special import nctdtr

    noncentrality = dz * np.sqrt(n)
    # scipy's nctdtr gives nan far in the lower tail (noncentrality well above the point, d_z >= 0 here),
    # where the probability is below 1e-300: 0
    out = 1 - np.nan_to_num(nctdtr(n - 1, noncentrality, critical), nan=0.0)
    return out + np.nan_to_num(nctdtr(n - 1, noncentrality, -critical), nan=0.0) if sides == 2 else out


@functools.lru_cache(maxsize=1024)
def _critical_w(n: int, level: float) -> tuple[float, ...]:
    """The least W = sum(d) / sqrt(sum(d^2)) the randomization test rejects at one-sided ``level`` over ``n``
    queries, from the permutation distribution of W for each of :data:`_MAGNITUDES` draws of normal magnitudes
    (every sign vector, or :data:`_SIGN_VECTORS` drawn); (inf,) when the test cannot reject at all."""
    import numpy as np

    rng = np.random.default_rng(n)
    magnitudes = np.abs(rng.standard_normal((_MAGNITUDES, n)))
    magnitudes /= np.sqrt(np.sum(magnitudes ** 2, axis=1, keepdims=True))
    if 2 ** n <= _SIGN_VECTORS:
        signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2.0 - 1
    else:
        signs = rng.integers(0, 2, (_SIGN_VECTORS, n)) * 2.0 - 1
    null = np.sort(magnitudes @ signs.T, axis=1)
    rejected = math.floor(level * len(signs) * (1 + 1e-12))   # the most sign vectors at or beyond a rejected W
    if rejected < 1:
        return (math.inf,)
    return tuple(map(float, null[:, len(signs) - rejected]))


def _randomization_power(dz: Any, n: Any, alpha: float, sides: int) -> Any:
    """The randomization test's power at ``dz`` (>= 0) with ``n`` queries (see the module docstring)."""
    import numpy as np
    from scipy.special import ndtri

    dz, n = np.broadcast_arrays(np.asarray(dz, dtype=float), np.asarray(n, dtype=float))
    out = np.zeros(dz.shape)

    def at(w: Any, dz: Any, n: Any) -> Any:
        with np.errstate(invalid="ignore", divide="ignore"):
            critical = np.where(w * w < n, np.sqrt(n - 1) * w / np.sqrt(np.maximum(n - w * w, 0.0)), np.inf)
        return _beyond(dz, n, critical, sides)

    large = n > SMALL_SET
    out[large] = at(float(ndtri(1 - alpha / sides)), dz[large], n[large])
    for count in np.unique(n[~large]):
        chosen = n == count
        w = np.asarray(_critical_w(int(count), alpha / sides))
        out[chosen] = at(w[None, :], dz[chosen][:, None], count).mean(axis=1)
    return out


def _power(dz: Any, n: Any, test: str, alpha: float, sides: int) -> Any:
    """Power at standardised effect ``dz`` (>= 0) with ``n`` queries (arrays broadcast)."""
    import numpy as np
    from scipy.special import stdtrit

    dz, n = np.asarray(dz, dtype=float), np.asarray(n, dtype=float)
    if test == "t":
        return _beyond(dz, n, stdtrit(n - 1, 1 - alpha / sides), sides)
    return _randomization_power(dz, n, alpha, sides)


def _check(test: str, alpha: float, power: float, sides: int) -> tuple[str, float, float, int]:
    checked = check_parameters(POWER_PARAMETERS, dict(test=test, alpha=alpha, power=power, sides=sides))
    return checked["test"], checked["alpha"], checked["power"], checked["sides"]


def power_at(effect: float, *, sd: float, n: int, test: str = "t", alpha: float = 0.05, sides: int = 2) -> float:
    """The power of ``test`` to detect a mean difference ``effect`` with ``n`` queries whose differences have
    standard deviation ``sd``.

    >>> round(power_at(0.0808, sd=0.2, n=50), 3)
    0.8
    """
    test, alpha, _, sides = _check(test, alpha, 0.5, sides)
    if n < 2:
        return math.nan
    if sd == 0:
        return 1.0 if effect != 0 else alpha
    return float(_power(abs(effect) / sd, n, test, alpha, sides))


def _guess(alpha: float, power: float, sides: int) -> float:
    """z_(1 - alpha / sides) + z_power: the normal approximation's d_z sqrt(n) at the power asked."""
    from scipy.special import ndtri

    return float(ndtri(1 - alpha / sides) + ndtri(power))


def _standardised_mde(n: Any, test: str, alpha: float, power: float, sides: int) -> Any:
    """The smallest d_z with power >= ``power`` at each n (bisection on all n at once, to 2^-50 of the bracket,
    which starts at twice the normal approximation's answer and doubles while it falls short)."""
    import numpy as np

    n = np.asarray(n, dtype=float)
    low, high = np.zeros_like(n), 2 * max(_guess(alpha, power, sides), 0.1) / np.sqrt(n)
    for _ in range(64):
        short = _power(high, n, test, alpha, sides) < power
        if not short.any():
            break
        low, high = np.where(short, high, low), np.where(short, high * 2, high)
    never = _power(high, n, test, alpha, sides) < power
    for _ in range(50):
        middle = (low + high) / 2
        enough = _power(middle, n, test, alpha, sides) >= power
        low, high = np.where(enough, low, middle), np.where(enough, middle, high)
    return np.where(never, np.inf, high)


def detectable_effect(*, sd: float, n: int, test: str = "t", alpha: float = 0.05, power: float = 0.8,
                      sides: int = 2) -> float:
    """The minimum detectable effect: the smallest mean difference ``test`` detects with probability
    ``power`` at level ``alpha`` over ``n`` queries whose differences have standard deviation ``sd``
    (0 when sd is 0: any difference is detected; inf when no difference is: the randomization test
    over so few queries that its smallest p-value is above ``alpha``; nan with fewer than two queries).

    >>> round(detectable_effect(sd=1.0, n=30), 4)   # statsmodels: TTestPower().solve_power(nobs=30, power=.8)
    0.5292
    """
    test, alpha, power, sides = _check(test, alpha, power, sides)
    if n < 2:
        return math.nan
    return 0.0 if sd == 0 else float(_standardised_mde(n, test, alpha, power, sides)) * sd


def _needed(dz: Any, test: str, alpha: float, power: float, sides: int) -> Any:
    """The smallest whole n >= 2 with power >= ``power`` at each d_z (> 0), or 0 beyond :data:`MAX_QUERIES`
    (bisection between whole numbers from twice the normal approximation's answer, doubled while short)."""
    import numpy as np

    dz = np.asarray(dz, dtype=float)
    low = np.ones(dz.shape)                                  # power(low) < power <= power(high); n = 1 is no test
    high = np.clip(np.ceil(2 * (max(_guess(alpha, power, sides), 0.1) / dz) ** 2), 2, MAX_QUERIES)
    while True:
        short = (_power(dz, high, test, alpha, sides) < power) & (high < MAX_QUERIES)
        if not short.any():
            break
        low, high = np.where(short, high, low), np.where(short, np.minimum(high * 2, MAX_QUERIES), high)
    reached = _power(dz, high, test, alpha, sides) >= power
    while ((high - low) > 1).any():
        middle = np.floor((low + high) / 2)
        enough = _power(dz, middle, test, alpha, sides) >= power
        low, high = np.where(enough, low, middle), np.where(enough, middle, high)
    return np.where(reached, high, 0).astype(np.int64)


def queries_needed(effect: float, *, sd: float, test: str = "t", alpha: float = 0.05, power: float = 0.8,
                   sides: int = 2) -> int | None:
    """The fewest queries (at least 2) for ``test`` to detect a mean difference ``effect`` with probability
    ``power``, the differences' standard deviation being ``sd``; None when ``effect`` is 0 or out of reach
    (more than :data:`MAX_QUERIES`).

    >>> queries_needed(0.5, sd=1.0)   # statsmodels: TTestPower().solve_power(0.5, power=.8) = 33.37
    34
    """
    test, alpha, power, sides = _check(test, alpha, power, sides)
    if effect == 0 or not math.isfinite(effect):
        return None
    if sd == 0:
        return 2
    found = int(_needed(abs(effect) / sd, test, alpha, power, sides))
    return found or None


@dataclass(frozen=True)
class PowerRow:
    """One system against one baseline on one metric.

    Attributes:
        metric, system, baseline: what was compared (the metric's label).
        n: the queries both were evaluated on.
        delta: the observed mean difference, system - baseline.
        sd: the standard deviation of the per-query differences (n - 1 in the denominator).
        mde: the minimum detectable effect at ``n`` (metric units; 0 when sd is 0, nan with n < 2).
        effect: the target effect the queries are counted for (the analysis's, else ``|delta|``).
        power_at_effect: the power at ``n`` to detect ``effect``.
        queries_needed: the fewest queries to detect ``effect`` with the analysis's power; None when the
            effect is 0 or out of reach.
    """

    metric: str
    system: str
    baseline: str
    n: int
    delta: float
    sd: float
    mde: float
    effect: float
    power_at_effect: float
    queries_needed: int | None


@dataclass(frozen=True)
class PowerAnalysis:
    """The power of a comparison, pair by pair and metric by metric, with its settings.

    Attributes:
        rows: one :class:`PowerRow` per (metric, pair), metrics in the order asked.
        test: ``t`` or ``randomization`` (see the module docstring).
        alpha, power, sides: the level, the power aimed at, one- or two-sided.
        effect: the target effect given, or None (each row's observed ``|delta|``).
    """

    rows: tuple[PowerRow, ...]
    test: str
    alpha: float
    power: float
    effect: float | None = None
    sides: int = 2

    def get(self, system: str, metric: str, baseline: str | None = None) -> PowerRow | None:
        """The row of ``system`` on ``metric`` (by label), against ``baseline`` (default: the first found)."""
        for row in self.rows:
            if row.system == system and row.metric == metric and baseline in (None, row.baseline):
                return row
        return None

    def to_frame(self) -> pd.DataFrame:
        """One row per (metric, pair): the fields of :class:`PowerRow`."""
        import pandas as pd

        return pd.DataFrame([asdict(row) for row in self.rows], columns=list(PowerRow.__dataclass_fields__))

    def __str__(self) -> str:
        from ..views.power_view import render_power

        return render_power(self, "terminal")

    def to_markdown(self) -> str:
        from ..views.power_view import render_power

        return render_power(self, "markdown")

    def _repr_html_(self) -> str:
        from ..views.power_view import render_power

        return render_power(self, "html")

    def to_dict(self) -> dict[str, Any]:
        return {"test": self.test, "alpha": self.alpha, "power": self.power, "effect": self.effect,
                "sides": self.sides, "rows": [asdict(row) for row in self.rows]}


def _differences(maps: Mapping[str, Mapping[str, float]], pairs: Sequence[tuple[str, str]]) -> list[Any]:
    """The per-query differences system - baseline of each pair, on their common queries. A system listing the
    same queries in the same order as the first (what one evaluation of each gives) is read once, by value."""
    import numpy as np

    order: list[str] = list(next(iter(maps.values())))
    same = {name: list(values) == order for name, values in maps.items()}
    read = {name: np.fromiter(values.values(), dtype=np.float64, count=len(values))
            for name, values in maps.items() if same[name]}
    out = []
    for system, base in pairs:
        if same[system] and same[base]:
            out.append(read[system] - read[base])
            continue
        a, b = maps[system], maps[base]
        common = [q for q in b if q in a]
        x = np.fromiter(map(a.__getitem__, common), dtype=np.float64, count=len(common))
        out.append(x - np.fromiter(map(b.__getitem__, common), dtype=np.float64, count=len(common)))
    return out


def analyse(differences: Sequence[Any], *, test: str, alpha: float, power: float, effect: float | None,
            sides: int = 2) -> list[tuple[int, float, float, float, float, float, int | None]]:
    """(n, delta, sd, mde, effect, power at effect, queries needed) of each array of per-query differences,
    solved for all of them at once."""
    import numpy as np

    n = np.array([len(d) for d in differences], dtype=float)
    delta = np.array([d.mean() if len(d) else math.nan for d in differences])
    sd = np.array([d.std(ddof=1) if len(d) > 1 else math.nan for d in differences])
    valid = n >= 2
    target = np.abs(delta) if effect is None else np.full(len(n), float(effect))
    mde = np.full(len(n), math.nan)
    needed = np.zeros(len(n), dtype=np.int64)
    reach = np.full(len(n), math.nan)
    spread = valid & (sd > 0)
    if spread.any():
        counts, where = np.unique(n[spread], return_inverse=True)    # the pairs share a few query counts
        mde[spread] = _standardised_mde(counts, test, alpha, power, sides)[where] * sd[spread]
        dz = target[spread] / sd[spread]
        reach[spread] = _power(dz, n[spread], test, alpha, sides)
        aimed = dz > 0
        found = np.zeros(int(spread.sum()), dtype=np.int64)
        if aimed.any():
            found[aimed] = _needed(dz[aimed], test, alpha, power, sides)
        needed[spread] = found
    flat = valid & (sd == 0)
    mde[flat] = 0.0
    reach[flat] = np.where(target[flat] > 0, 1.0, alpha)
    needed[flat] = np.where(target[flat] > 0, 2, 0)
    return [(int(n[i]), float(delta[i]), float(sd[i]), float(mde[i]), float(target[i]), float(reach[i]),
             int(needed[i]) or None) for i in range(len(n))]


def power(results: Mapping[str, Any], metrics: Any = None, *, baseline: str | Sequence[str] | None = None,
          statistics: Statistics | None = None, test: str | None = None, alpha: float | None = None,
          power: float = 0.8, effect: float | None = None, sides: int | None = None, qrels: Any = None,
          settings: Settings | None = None) -> PowerAnalysis:
    """How small a difference the eval set can detect, and how many queries a target difference needs.

    Args:
        results: system name -> :class:`~evalbridge.evaluation.results.Results` (or metric -> {query id: value}), as
            :func:`~evalbridge.decisions.compare.compare_systems` takes them; pairs are formed the same way. With
            ``qrels``, runs too (anything :func:`evalbridge.evaluate` reads), evaluated against ``qrels`` with
            ``metrics`` and ``settings`` first, as ``compare`` does.
        metrics: the metrics (any spelling, labels, or a mapping label -> spec); default: every metric of
            the first system.
        baseline: one system, several, or None (all pairs), as in ``compare``.
        statistics: the test, level and sides (:class:`~evalbridge.Statistics`); ``test``, ``alpha`` and ``sides``
            given replace its fields. Power is exact (no resampling, no correction, no interval): any other field
            away from its default is refused, not ignored.
        test: ``t`` (noncentral t, statsmodels' ``TTestPower``) or ``randomization`` (Fisher's randomization
            test: its permutation distribution on small sets, see the module docstring); the Wilcoxon test is
            refused (no closed form).
        alpha: the level of the test (two-sided unless ``sides=1``).
        power: the probability of detecting the effect, 0.8 by default.
        effect: the target difference the queries are counted for, in the metric's units (default: each
            pair's observed ``|delta|``).
        qrels, settings: the judgements the runs among ``results`` are evaluated against, and how.

    Raises:
        InputError: a bad setting, an unknown baseline, fewer than two systems, a pair without common
            queries, or non-finite per-query values.

    Example:
        >>> base = {"P@1": {f"q{i}": float(i % 2) for i in range(40)}}
        >>> new = {"P@1": {f"q{i}": float(i % 3 > 0) for i in range(40)}}
        >>> row = power({"base": base, "new": new}, ["P@1"], baseline="base", effect=0.05).rows[0]
        >>> row.n, round(row.mde, 3), row.queries_needed
        (40, 0.318, 1540)
    """
    from .compare import _baselines, _pairs, _per_query, _requests, _systems
    from ..stats.paired_tests import check_finite

    chosen = statistics_for("power", statistics, {"test": test, "alpha": alpha, "sides": sides},
                            uses={"test": POWER_TESTS, "alpha": None, "sides": None},
                            why="its answer is exact: no resampling, no correction, no interval",
                            fixes={"test": "the Wilcoxon signed-rank test's power has no closed form here: ask for "
                                           "test='t' (noncentral t) or test='randomization'; the t-test's power is "
                                           "a close guide for the Wilcoxon test on per-query metric differences."})
    checked = check_parameters(POWER_PARAMETERS, dict(test=chosen.test, alpha=chosen.alpha, power=power,
                                                      sides=chosen.sides))
    if effect is not None:
        effect = check_parameters(POWER_PARAMETERS, dict(effect=effect))["effect"]
    if not isinstance(results, Mapping):
        raise InputError(f"results must be a mapping of system names to their results; got "
                         f"{type(results).__name__} {results!r:.60}.",
                         fix="pass e.g. {'bm25': eb.evaluate(qrels, bm25, metrics), 'dense': ...}.")
    names = _systems(list(results))
    pairs = _pairs(names, _baselines(baseline, names))
    from ..io.datasets import with_official

    metrics = with_official(metrics, qrels)[0]  # "official": the measures of the qrels' dataset
    if qrels is not None:
        from ..evaluation.evaluating import evaluate_each

        if metrics is None:
            raise InputError("runs evaluated for their power need the metrics.", fix="pass e.g. metrics=['ndcg@10'].")
        results = evaluate_each(qrels, results, _requests(metrics), settings=settings)
    if metrics is None:
        from ..evaluation.results import Results

        first = results[names[0]]
        metrics = list(first.requests) if isinstance(first, Results) else list(first)
    requests = _requests(metrics)
    if not requests:
        raise InputError("no metric to analyse.", fix="name at least one metric, e.g. ['ndcg@10'].")
    labels = [getattr(m, "label", str(m)) for m in requests]
    keys, differences = [], []
    for metric, label in zip(requests, labels):
        maps = {name: _per_query(results[name], metric) for name in names}
        for (system, base), d in zip(pairs, _differences(maps, pairs)):
            if not len(d):
                raise InputError(f"{system!r} and {base!r} have no query in common for {label}.",
                                 fix="evaluate both systems on the same qrels.")
            check_finite(d, f"per-query differences of {system!r} and {base!r} for {label}",
                          lambda i: f"difference {i}")
            keys.append((label, system, base))
            differences.append(d)
    solved = analyse(differences, test=checked["test"], alpha=checked["alpha"], power=checked["power"],
                     effect=effect, sides=checked["sides"])
    rows = tuple(PowerRow(label, system, base, *numbers) for (label, system, base), numbers in zip(keys, solved))
    return PowerAnalysis(rows=rows, test=checked["test"], alpha=checked["alpha"], power=checked["power"],
                         effect=effect, sides=checked["sides"])
