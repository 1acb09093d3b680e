"""Many systems side by side, query by query: win / tie / loss of every pair, the hardest queries, each system's rank.

:func:`standings` reads per-query values already computed (``{system: Results}`` or ``{system: {metric:
{query: value}}}``) and, for each metric, on the queries every system was evaluated on:

* win / tie / loss counts of every pair of systems (each unordered pair once: every system against each one
  listed before it, from the system's side, as ``compare``'s pairs: the earlier one is the baseline), by
  :func:`evalbridge.stats.paired_tests.win_tie_loss`;
* the hardest queries: the lowest mean over the systems (ties by query id), with each system's value;
* each system's rank on every query (1 = best; systems with equal values share the mean of their places,
  as :func:`scipy.stats.rankdata` ``method="average"``, so the ranks of a query always sum to
  n(n + 1) / 2), and each system's mean rank (the statistic of Friedman's test).

A :class:`Standings` is data; :mod:`evalbridge.views.run_diff` declares its tables, every output format writes them.

Example:
    >>> s = standings({"bm25": {"ndcg": {"q1": 0.2, "q2": 0.5, "q3": 0.1}},
    ...                "dense": {"ndcg": {"q1": 0.4, "q2": 0.5, "q3": 0.0}}}, hardest=2)
    >>> [(p.system, p.other, p.wins, p.ties, p.losses) for p in s.pairs]
    [('dense', 'bm25', 1, 1, 1)]
    >>> [(h.query, h.mean) for h in s.hardest]
    [('q3', 0.05), ('q1', 0.30000000000000004)]
    >>> s.ranks[0].ranks
    (('bm25', (2.0, 1.5, 1.0)), ('dense', (1.0, 1.5, 2.0)))
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..stats.paired_tests import win_tie_loss
from ..views.table import Shown
from ..common.json_data import json_ready

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["standings", "Standings", "PairRecord", "HardQuery", "QueryRanks", "metric_values", "metric_names"]


@dataclass(frozen=True)
class PairRecord:
    """On ``metric``: the queries where ``system`` is above (``wins``), equal to (``ties``) and below
    (``losses``) ``other``."""

    metric: str
    system: str
    other: str
    wins: int
    ties: int
    losses: int


@dataclass(frozen=True)
class HardQuery:
    """A query with one of the lowest means over the systems on ``metric``; ``values``: (system, value)."""

    metric: str
    query: str
    mean: float
    values: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class QueryRanks:
    """On ``metric``: each system's rank on each of ``queries`` (``ranks``: (system, one rank per query)) and its
    mean rank (``mean_ranks``: (system, mean))."""

    metric: str
    queries: tuple[str, ...]
    ranks: tuple[tuple[str, tuple[float, ...]], ...]
    mean_ranks: tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Standings(Shown):
    """Systems side by side (see the module docstring).

    Attributes:
        systems, metrics: in the order given.
        pairs: one :class:`PairRecord` per (metric, pair of systems).
        hardest: the ``hardest`` lowest-mean queries of each metric (:class:`HardQuery`), metric by metric.
        ranks: one :class:`QueryRanks` per metric.
        n: queries every system was evaluated on, per metric; ``unpaired``: queries left out because some
            system has no value for them, per metric.
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    pairs: tuple[PairRecord, ...]
    hardest: tuple[HardQuery, ...]
    ranks: tuple[QueryRanks, ...]
    n: tuple[int, ...]
    unpaired: tuple[int, ...]

    def to_frame(self, *, table: str = "pairs") -> pd.DataFrame:
        """``pairs`` (one row per metric and pair), ``hardest`` (one row per hard query and system: its mean over
        the systems, the system's value), ``ranks`` (one row per metric, query and system: its rank) or
        ``mean_ranks``. Long tables: a system's name is a value, never a column that could meet another's."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        return pd.DataFrame(_FRAMES[table](self))

    def table(self, fmt: str = "terminal") -> str:
        """The standings as text: ``json`` or any output format that writes tables (:mod:`evalbridge.views.run_diff`)."""
        from ..views.run_diff import render_standings

        return render_standings(self, fmt)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (NaN becomes None)."""
        return json_ready(asdict(self))


def _pair_rows(s: Standings) -> list[dict[str, Any]]:
    return [asdict(p) for p in s.pairs]


def _hard_rows(s: Standings) -> list[dict[str, Any]]:
    return [{"metric": h.metric, "query": h.query, "mean": h.mean, "system": system, "value": value}
            for h in s.hardest for system, value in h.values]


def _rank_rows(s: Standings) -> list[dict[str, Any]]:
    return [{"metric": r.metric, "query": q, "system": system, "rank": values[i]}
            for r in s.ranks for i, q in enumerate(r.queries) for system, values in r.ranks]


def _mean_rank_rows(s: Standings) -> list[dict[str, Any]]:
    return [{"metric": r.metric, "system": system, "mean_rank": mean} for r in s.ranks for system, mean in r.mean_ranks]


_FRAMES = {"pairs": _pair_rows, "hardest": _hard_rows, "ranks": _rank_rows, "mean_ranks": _mean_rank_rows}


def metric_values(per_system: Any, metric: str) -> Mapping[str, float]:
    """One system's per-query values of ``metric``: a Results (any name of a metric it evaluated) or a mapping."""
    values = getattr(per_system, "values", None)
    if values is not None and hasattr(per_system, "request"):
        try:
            return values[per_system.request(metric).metric]  # type: ignore[no-any-return]
        except KeyError:
            pass
    elif isinstance(per_system, Mapping) and metric in per_system:
        if not isinstance(per_system[metric], Mapping):
            raise InputError(f"the per-query values are {{query: value}} without the metric's name (e.g. "
                             f"{metric!r}: {per_system[metric]!r:.40}): each system's values are read as "
                             f"{{metric: {{query: value}}}}.",
                             fix='name the metric: {system: {"nDCG@10": {query: value}}}, or give each system\'s '
                                 'Results.')
        return per_system[metric]  # type: ignore[no-any-return]
    raise InputError(f"metric {metric!r} has no per-query values for one of the systems.",
                     fix="give every system's results for every metric compared.")


def metric_names(first: Any, metrics: Sequence[str] | None) -> tuple[str, ...]:
    if metrics is not None:
        return tuple(metrics)
    labels = getattr(first, "labels", None)
    return tuple(labels) if labels is not None else tuple(first)


def standings(results: Mapping[str, Any], metrics: Sequence[str] | None = None, *,
              hardest: int = 10) -> Standings:
    """Win / tie / loss of every pair, the ``hardest`` lowest-mean queries and each system's rank per query,
    for every metric (default: the first system's labels), from per-query values already computed."""
    import numpy as np
    from scipy.stats import rankdata

    systems = tuple(results)
    if len(systems) < 2:
        raise InputError(f"standings compare two systems or more; got {len(systems)}.",
                         fix="give the results of every system to compare.")
    if isinstance(hardest, bool) or not isinstance(hardest, int) or hardest < 0:
        raise InputError(f"hardest must be a whole number >= 0; got {hardest!r}.", fix="give e.g. hardest=10.")
    names = metric_names(results[systems[0]], metrics)
    pairs: list[PairRecord] = []
    hard: list[HardQuery] = []
    ranks: list[QueryRanks] = []
    counts, unpaired = [], []
    for metric in names:
        per_system = [metric_values(results[s], metric) for s in systems]
        common = [q for q in per_system[0] if all(q in v for v in per_system[1:])]
        every = set().union(*(set(v) for v in per_system))
        counts.append(len(common))
        unpaired.append(len(every) - len(common))
        table = np.array([[v[q] for q in common] for v in per_system], dtype=np.float64).reshape(len(systems), -1)
        for j in range(len(systems)):     # system j against each baseline i listed before it, from j's side
            for i in range(j):
                pairs.append(PairRecord(metric, systems[j], systems[i], *win_tie_loss(table[j], table[i])))
        mean = table.mean(axis=0) if len(common) else np.zeros(0)
        ids = np.array(common, dtype=object)
        for q in np.lexsort((ids, mean))[:hardest].tolist():
            hard.append(HardQuery(metric, common[q], float(mean[q]),
                                  tuple((s, float(table[i, q])) for i, s in enumerate(systems))))
        placed = rankdata(-table, axis=0, method="average") if len(common) else table
        ranks.append(QueryRanks(metric, tuple(common), tuple((s, tuple(placed[i].tolist())) for i, s in enumerate(systems)),
                                tuple((s, float(placed[i].mean()) if len(common) else math.nan)
                                      for i, s in enumerate(systems))))
    return Standings(systems, names, tuple(pairs), tuple(hard), tuple(ranks), tuple(counts), tuple(unpaired))
