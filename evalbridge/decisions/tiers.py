"""``Tiers``: many systems' tiers and rank intervals, metric by metric, from per-query values already computed.

:func:`tiers` reads ``{system: Results}`` or ``{system: {metric: {query: value}}}``, builds each metric's systems x
queries matrix on the queries every system has (:func:`score_matrix`, in the order of their ids, so the draws do not
depend on the order the values came in) and runs the numeric core of :mod:`evalbridge.stats.tiers` on it: the
simultaneous tests of every pair, the tiers no test separates and each system's rank interval from the bootstrap over
the queries. A :class:`Tiers` is data; :mod:`evalbridge.views.tiers` declares its tables and every output format
writes them (:meth:`evalbridge.decisions.comparison.Comparison.tiers` is the door from a comparison).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..common.json_data import json_ready
from ..common.parameters import check_parameters
from ..errors import InputError
from ..stats.paired_tests import check_finite
from ..stats.statistics import Statistics, statistics_for
from ..stats.tiers import (TIERS_PARAMETERS, bootstrap_means, by_mean, hsd_pvalues, min_ranks, rank_intervals,
                           tiers_of)
from ..views.table import Shown
from .standings import metric_names, metric_values

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

__all__ = ["tiers", "score_matrix", "Tiers", "TierRow", "TierPair"]


@dataclass(frozen=True)
class TierRow:
    """One system on one metric: its mean over the ``n`` queries, its rank (1 = best), its rank interval from the
    bootstrap, and its tier letters."""

    metric: str
    system: str
    mean: float
    rank: int
    rank_low: int
    rank_high: int
    tier: str


@dataclass(frozen=True)
class TierPair:
    """One pair on one metric: Δ = system - other, the simultaneous test's p-value, separated when p <= alpha."""

    metric: str
    system: str
    other: str
    delta: float
    p_value: float
    significant: bool


@dataclass(frozen=True)
class Tiers(Shown):
    """Many systems' tiers and rank intervals, metric by metric (see the module docstring).

    Attributes:
        rows: one :class:`TierRow` per (metric, system), each metric's systems from the best.
        pairs: one :class:`TierPair` per (metric, pair of systems), in the order the systems were given.
        systems, metrics: in the order given.
        method: a key of :data:`TIER_METHODS`; alpha: the family-wise level over each metric's pairs.
        confidence: of the rank intervals; n_resamples, seed: of the resampling (the permutations and the bootstrap).
        n: the queries every system was evaluated on, per metric; unpaired: the queries left out because some
            system has no value for them, per metric.
    """

    rows: tuple[TierRow, ...]
    pairs: tuple[TierPair, ...]
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    method: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int
    n: tuple[int, ...]
    unpaired: tuple[int, ...]

    def to_frame(self, *, table: str = "systems") -> pd.DataFrame:
        """``systems``: one row per (metric, system): ``metric``, ``system``, ``mean``, ``rank``, ``rank_low``,
        ``rank_high``, ``tier``; ``pairs``: one row per (metric, pair) with its p-value."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        record, fields = _FRAMES[table]
        return pd.DataFrame([asdict(r) for r in record(self)], columns=fields)

    def get(self, system: str, metric: str) -> TierRow | None:
        """The row of ``system`` on ``metric`` (by label), or None."""
        return next((r for r in self.rows if r.system == system and r.metric == metric), None)

    def table(self, fmt: str = "terminal") -> str:
        """The tiers as text: ``json`` or any output format that writes tables (:mod:`evalbridge.views.tiers`)."""
        from ..views.tiers import render_tiers

        return render_tiers(self, fmt)

    def describe(self) -> str:
        """One sentence saying how the tiers were decided."""
        from ..views.tiers import describe

        return describe(self)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (NaN becomes None)."""
        return json_ready(asdict(self))


_FRAMES: Mapping[str, tuple[Callable[[Tiers], Sequence[Any]], list[str]]] = {
    "systems": (lambda t: t.rows, list(TierRow.__dataclass_fields__)),
    "pairs": (lambda t: t.pairs, list(TierPair.__dataclass_fields__)),
}


def score_matrix(results: Mapping[str, Any], metric: str) -> tuple[np.ndarray, list[str], int]:
    """(the systems x queries matrix of ``metric``, its queries: those every system has, in the order of their ids;
    the queries left out because some system has no value for them), from ``{system: Results}`` or ``{system:
    {metric: {query: value}}}``. Refused: fewer than two shared queries, a value that is not a finite number."""
    import numpy as np

    systems = tuple(results)
    per_system = [metric_values(results[s], metric) for s in systems]
    common = sorted(q for q in per_system[0] if all(q in v for v in per_system[1:]))
    every = set().union(*(set(v) for v in per_system))
    if len(common) < 2:
        raise InputError(f"metric {metric!r}: the systems share {len(common)} quer"
                         f"{'y' if len(common) == 1 else 'ies'} ({len(every)} in all); two or more queries every "
                         f"system was evaluated on are needed.", fix="evaluate every system on the same queries.")
    x = np.array([[v[q] for q in common] for v in per_system], dtype=np.float64)
    check_finite(x.ravel(), f"values of {metric!r}",
                 lambda i: f"system {systems[i // len(common)]!r}, query {common[i % len(common)]!r}")
    return x, common, len(every) - len(common)


#: the fields of Statistics tiers honours (any alpha, confidence, n_resamples and seed; two sides); a test, a correction
#: or an interval method away from its default is refused, not ignored
_USES: Mapping[str, tuple[Any, ...] | None] = {"alpha": None, "confidence": None, "n_resamples": None, "seed": None,
                                               "sides": (2,)}


def tiers(results: Mapping[str, Any], metrics: Sequence[str] | None = None, *, method: str = "randomization",
          statistics: Statistics | None = None, alpha: float | None = None, confidence: float | None = None,
          n_resamples: int | None = None, seed: int | None = None) -> Tiers:
    """Tiers and rank intervals of every system, for every metric (default: the first system's labels), from
    per-query values already computed, on the queries every system has (:mod:`evalbridge.stats.tiers`).

    ``statistics`` (:class:`~evalbridge.Statistics`, default: its defaults) gives the family-wise ``alpha``, the
    rank intervals' ``confidence``, ``n_resamples`` and ``seed``, each replaced by its keyword when given. ``method`` is
    the test, simultaneous over all pairs (no correction), and the rank intervals are percentiles: a ``test``,
    ``correction`` or ``ci_method`` away from its default, and ``sides=1``, are refused, never ignored."""
    chosen = statistics_for("tiers", statistics, {"alpha": alpha, "confidence": confidence,
                                                  "n_resamples": n_resamples, "seed": seed}, uses=_USES,
                            why="its test is method=, simultaneous over every pair, so it needs no correction, and "
                                "its rank intervals are the bootstrap's percentiles",
                            fixes={"sides": "leave sides at 2 (a one-sided question is a power analysis's: eb.power)."})
    checked = check_parameters(TIERS_PARAMETERS, {"method": method,
                                                  **chosen.keywords("alpha", "confidence", "n_resamples", "seed")})
    systems = tuple(results)
    if len(systems) < 2:
        raise InputError(f"tiers compare two systems or more; got {len(systems)}.",
                         fix="give the results of every system to compare.")
    names = metric_names(results[systems[0]], metrics)
    rows: list[TierRow] = []
    pairs: list[TierPair] = []
    counts, unpaired = [], []
    for metric in names:
        x, common, left_out = score_matrix(results, metric)
        counts.append(len(common))
        unpaired.append(left_out)
        boot = bootstrap_means(x, n_resamples=checked["n_resamples"], seed=checked["seed"])
        p = hsd_pvalues(x, method=checked["method"], n_resamples=checked["n_resamples"], seed=checked["seed"],
                        boot=boot)
        means = x.mean(axis=1)
        letters = tiers_of(means, p, alpha=checked["alpha"])
        ranks = min_ranks(means)[0]
        low, high = rank_intervals(boot, confidence=checked["confidence"])
        for i in by_mean(means).tolist():
            rows.append(TierRow(metric, systems[i], float(means[i]), int(ranks[i]), int(low[i]), int(high[i]),
                                letters[i]))
        for i in range(len(systems)):
            for j in range(i + 1, len(systems)):
                pairs.append(TierPair(metric, systems[i], systems[j], float(means[i] - means[j]), float(p[i, j]),
                                      bool(p[i, j] <= checked["alpha"])))
    return Tiers(tuple(rows), tuple(pairs), systems, names, checked["method"], checked["alpha"],
                 checked["confidence"], checked["n_resamples"], checked["seed"], tuple(counts), tuple(unpaired))
