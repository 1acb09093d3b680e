"""``eb.diagnose``: evaluates the runs of a test collection once and gathers its diagnosis (:class:`Diagnosis`).

``eb.diagnose(qrels, runs, "nDCG@10")`` (several metrics: ``["nDCG@10", "P@10"]``, a :class:`Diagnoses`) returns data
only (:mod:`evalbridge.views.diagnosis` says what each
number means for a decision):

* **discriminative power** and **swap rate** over the runs' per-query values
  (:mod:`evalbridge.stats.discrimination`);
* **pool bias**, leave one run out (Zobel 1998; Buckley et al. 2007): each run scored with the relevant
  documents only it contributed to the pool (within ``pool_depth``, relevant at the level) removed from the
  judgements, against its score with them. Only that run, on only the queries where it contributed such a
  document, is evaluated again;
* **saturation**: the queries every system answers perfectly (each reaches the metric's value for the ideal
  ranking of the judged documents) and those on which every system scores the same: they tell nothing apart;
* **judged share by rank**: of the documents the systems rank at 1, 2, ... ``pool_depth``, the share judged;
* where a second set of judgements is given: their **agreement** (:func:`evalbridge.evalsets.agreement.agreement`)
  and the **order of the systems** under each, Kendall's tau and tau_AP between the two
  (:mod:`evalbridge.stats.system_order`).

Runs come as a mapping name -> run (anything ``evaluate`` reads) or as
:class:`~evalbridge.fast.tops.TopLists` (many runs' first documents as arrays: the 100-run bench), whose
metrics must then have a cut-off within its depth.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

from ..errors import InputError
from ..common.json_data import json_ready
from ..common.parameters import Interval, check_parameters, rule_table
from ..model.settings import Settings, settings_of
from ..stats.discrimination import (SWAP_EDGES, DiscriminativePower, SwapBin, SwapRate, discriminative_power, ranks,
                                   swap_rate)
from ..stats.statistics import Statistics, statistics_for
from ..views.table import Shown

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from typing_extensions import Unpack

    from ..fast.tops import TopLists
    from ..metrics.spec import Metric
    from ..model.data import Qrels, Run
    from ..model.settings import Keywords
    from .agreement import JudgeAgreement

__all__ = ["diagnose", "Diagnosis", "Diagnoses", "DiscriminativePower", "SwapRate", "SwapBin", "RunBias", "PoolBias",
           "Saturation", "JudgedByRank", "SystemOrder", "SWAP_EDGES", "DIAGNOSIS_PARAMETERS", "discriminative_power",
           "swap_rate"]

DIAGNOSIS_PARAMETERS = rule_table(
    Interval("pool_depth", int, 1, None, closed="left", default=100,
             fix="the depth the pool was (or would be) made at, e.g. 100."),
    Interval("trials", int, 1, 100_000, closed="both", default=1000,
             fix="the random splits of the queries into halves, e.g. 1000."),
)


@dataclass(frozen=True)
class RunBias:
    """One run with and without the relevant documents only it contributed (``unique_relevant`` of them,
    over ``queries`` queries): its mean and its rank among the systems (1 = best) each way."""

    system: str
    unique_relevant: int
    queries: int
    score: float
    score_without: float
    rank: int
    rank_without: int

    @property
    def delta(self) -> float:
        return self.score_without - self.score


@dataclass(frozen=True)
class PoolBias:
    """Leave-one-run-out at ``depth`` with relevance at ``level``, one :class:`RunBias` per run."""

    depth: int
    level: float
    runs: tuple[RunBias, ...]

    @property
    def largest(self) -> RunBias | None:
        """The run that loses the most without its own relevant documents."""
        return min(self.runs, key=lambda r: (r.delta, r.system)) if self.runs else None


@dataclass(frozen=True)
class Saturation:
    """Of ``queries``, those every system answers perfectly (``perfect``, with something relevant) and
    those on which every system scores the same (``tied``, the perfect ones included)."""

    queries: int
    perfect: tuple[str, ...]
    tied: tuple[str, ...]


@dataclass(frozen=True)
class JudgedByRank:
    """``share[r - 1]``: of the ``documents[r - 1]`` documents ranked at rank r by some system for some query, the
    share judged (None when no system ranks that deep)."""

    depth: int
    share: tuple[float | None, ...]
    documents: tuple[int, ...]


@dataclass(frozen=True)
class SystemOrder:
    """The systems ordered by their means under each set of judgements: ``means_b`` (in the diagnosis' ``systems``
    order) under the second set, Kendall's tau-b between the two orders with its p-value (scipy), and tau_AP
    (Yilmaz et al. 2008) with the first set as the truth (:mod:`evalbridge.stats.system_order`)."""

    means_b: tuple[float, ...]
    queries_b: int
    kendall_tau: float
    kendall_p: float
    tau_ap: float


@dataclass(frozen=True)
class Diagnosis(Shown):
    """What :func:`diagnose` found (see the module docstring). ``means``: each system's mean, in
    ``systems`` order, over the ``queries`` queries every system was evaluated on; ``agreement`` and ``order``
    only where a second set of judgements was given. ``detectable``: the smallest difference this set can decide,
    power's minimum detectable effect (:func:`evalbridge.decisions.power.detectable_effect`: the diagnosis' test,
    the t-test's for Wilcoxon, two-sided at its alpha, power 0.8) from each pair's per-query differences, the
    median over the pairs that differ on some query (nan when none does)."""

    metric: str
    systems: tuple[str, ...]
    means: tuple[float, ...]
    queries: int
    discriminative_power: DiscriminativePower
    swap: SwapRate
    pool_bias: PoolBias
    saturation: Saturation
    judged: JudgedByRank
    agreement: JudgeAgreement | None = None
    order: SystemOrder | None = None
    detectable: float = math.nan

    @property
    def diagnoses(self) -> tuple[Diagnosis, ...]:
        """The diagnoses of each metric, as :class:`Diagnoses` has them: this one."""
        return (self,)

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (nan and infinity as None; the agreement as its own ``to_dict``)."""
        out = {name: getattr(self, name) for name in ("metric", "systems", "means", "queries", "detectable")}
        for name in ("discriminative_power", "swap", "pool_bias", "saturation", "judged"):
            out[name] = asdict(getattr(self, name))
        out["discriminative_power"]["share"] = self.discriminative_power.share
        out["swap"]["rate"] = self.swap.rate
        for row, section in zip(out["pool_bias"]["runs"], self.pool_bias.runs):
            row["delta"] = section.delta
        out["agreement"] = None if self.agreement is None else self.agreement.to_dict()
        out["order"] = None if self.order is None else asdict(self.order)
        return json_ready(out)

    def to_frame(self, *, table: str = "systems") -> pd.DataFrame:
        """``systems`` (a row per system: its mean, under the second judgements where given, its unique relevant
        documents, its mean and rank without them) or ``swaps`` (a row per bin of the difference in one half)."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        return pd.DataFrame(_FRAMES[table](self))

    def table(self, fmt: str = "terminal") -> str:
        """The diagnosis as text: ``json`` (every number and each finding's meaning) or any output format that
        writes tables (:mod:`evalbridge.views.diagnosis`)."""
        from ..views.diagnosis import render_diagnosis

        return render_diagnosis(self, fmt)


@dataclass(frozen=True)
class Diagnoses(Shown):
    """What :func:`diagnose` found for several metrics: one :class:`Diagnosis` per metric, in the order asked, each
    the diagnosis of that metric alone (the same numbers, the same seed); its tables and frames carry a ``metric``
    column."""

    diagnoses: tuple[Diagnosis, ...]

    @property
    def metrics(self) -> tuple[str, ...]:
        return tuple(d.metric for d in self.diagnoses)

    def __getitem__(self, metric: str) -> Diagnosis:
        """The diagnosis of ``metric`` (any spelling: ``ndcg@10`` is ``nDCG@10``)."""
        from ..metrics.spec import by_metric

        return by_metric(self.diagnoses, metric, ("diagnosis", "diagnosed"))

    def to_dict(self) -> dict[str, Any]:
        """Each metric's :meth:`Diagnosis.to_dict`, in order (``metrics``, ``diagnoses``)."""
        return {"metrics": list(self.metrics), "diagnoses": [d.to_dict() for d in self.diagnoses]}

    def to_frame(self, *, table: str = "systems") -> pd.DataFrame:
        """Every metric's :meth:`Diagnosis.to_frame`, one below the other, with a ``metric`` column first."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        return pd.DataFrame([{"metric": d.metric, **row} for d in self.diagnoses for row in _FRAMES[table](d)])

    def table(self, fmt: str = "terminal") -> str:
        """Every metric's diagnosis as text (:mod:`evalbridge.views.diagnosis`), its systems in one table."""
        from ..views.diagnosis import render_diagnosis

        return render_diagnosis(self, fmt)


def _system_rows(d: Diagnosis) -> list[dict[str, Any]]:
    return [{"system": name, "mean": mean, **({"mean_b": d.order.means_b[i]} if d.order is not None else {}),
             "unique_relevant": bias.unique_relevant, "mean_without": bias.score_without, "rank": bias.rank,
             "rank_without": bias.rank_without}
            for i, (name, mean, bias) in enumerate(zip(d.systems, d.means, d.pool_bias.runs))]


def _swap_rows(d: Diagnosis) -> list[dict[str, Any]]:
    return [{"low": b.low, "high": b.high, "comparisons": b.comparisons, "swaps": b.swaps, "rate": b.rate}
            for b in d.swap.bins]


_FRAMES = {"systems": _system_rows, "swaps": _swap_rows}


# ------------------------------------------------------------------ the driver

@dataclass(frozen=True)
class _Collection:
    """What every measure reads: the runs' first documents and the judgements matched to them."""

    tops: TopLists
    qrels: Qrels
    table: Any             # the qrels' RowTable
    row_code: np.ndarray   # the query code of each of its rows
    needed: np.ndarray     # its rows an evaluation of the metric reads (see _needed)
    grades: np.ndarray     # grade of every pair of tops (NaN: unjudged)
    judged_row: np.ndarray  # the qrels row of every pair (-1: unjudged)

    def judgements(self, keep: np.ndarray | None = None) -> Qrels:
        """The qrels of the rows needed (and in ``keep``), columnar."""
        mask = self.needed if keep is None else self.needed & keep
        return self.qrels if mask.all() and self.qrels.columnar is self.table else \
            _compact(self.table, self.row_code, mask, self.qrels)


def _level(qrels: Qrels, metric: str, options: Settings) -> float:
    """The relevance level of the pool bias: evaluate's own (:func:`~evalbridge.metrics.resolution.relevance_level`,
    so fractional grades and ratings without a level are refused here as they are by every evaluation)."""
    from ..metrics.resolution import relevance_level
    from ..metrics.spec import parse_metric

    return float(relevance_level(qrels, options.min_relevance, [parse_metric(metric)]))


def _metric(metric: Any) -> str:
    from ..metrics.spec import Metric, parse_metric

    if isinstance(metric, Metric):
        return str(metric)
    if not isinstance(metric, str):
        raise InputError(f"diagnose takes one metric (a spec such as 'nDCG@10'); got {type(metric).__name__} "
                         f"{metric!r:.60}.", fix="diagnose one metric at a time.")
    return str(parse_metric(metric))  # one spelling whichever door: ndcg@10 -> nDCG@10


def _within_depth(metric: str, depth: int) -> None:
    from ..metrics.spec import parse_metric

    k = parse_metric(metric).k
    if k is None or k > depth:
        raise InputError(f"the runs keep their first {depth} documents, so {metric} cannot be computed from them "
                         f"(it reads {'every ranked document' if k is None else f'the first {k}'}).",
                         fix=f"diagnose a metric with a cut-off of at most {depth}, e.g. nDCG@10 or AP@{depth}.")


def _per_query(qrels: Qrels, runs: list[Run], metric: str, options: Settings, *,
               quiet: bool = False) -> tuple[list[str], np.ndarray]:
    """(the queries every run was evaluated on, in the qrels' order; values systems x queries)."""
    import numpy as np

    from ..evaluation.evaluating import evaluate

    maps = [_quietly(qrels, run, metric, options) if quiet else evaluate(qrels, run, metric, settings=options).query(metric)
            for run in runs]
    common = set(maps[0]).intersection(*maps[1:]) if maps else set()
    ids = [q for q in maps[0] if q in common] if maps else []
    return ids, np.array([[m[q] for q in ids] for m in maps], dtype=np.float64).reshape(len(maps), len(ids))


def _order(means: np.ndarray, evaluated_b: tuple[list[str], np.ndarray]) -> SystemOrder:
    """The systems' order under the second set of judgements against their order under the first."""
    import numpy as np

    from ..stats.system_order import kendall_tau, tau_ap

    ids_b, values_b = evaluated_b
    means_b = values_b.mean(axis=1) if values_b.shape[1] else np.full(values_b.shape[0], np.nan)
    finite = bool(np.isfinite(means).all() and np.isfinite(means_b).all())
    tau, p = kendall_tau(means.tolist(), means_b.tolist())
    return SystemOrder(tuple(float(m) for m in means_b), len(ids_b), tau, p,
                       tau_ap(means.tolist(), means_b.tolist()) if finite else math.nan)


def _saturation(collection: _Collection, ids: list[str], values: np.ndarray, metric: str,
                options: Settings) -> Saturation:
    import numpy as np

    from ..evaluation.evaluating import evaluate
    from ..model.data import Run

    if not ids:
        return Saturation(0, (), ())
    # the judged documents ranked by their grade: the ideal ranking (its table is the qrels' own)
    judged = collection.judgements()
    ideal_map = _quietly(judged, Run(judged.columnar or collection.table, allow_empty=True), metric, options)
    ideal = np.array([ideal_map.get(q, 0.0) for q in ids])
    tied = np.all(values == values[:1], axis=0)
    perfect = (ideal > 0) & np.all(np.abs(values - ideal) <= 1e-12 * np.maximum(1.0, np.abs(ideal)), axis=0)
    return Saturation(len(ids), tuple(q for q, p in zip(ids, perfect.tolist()) if p),
                      tuple(q for q, t in zip(ids, tied.tolist()) if t))


def _judged_by_rank(collection: _Collection, depth: int) -> JudgedByRank:
    import numpy as np

    codes = collection.tops.codes[:, :, :depth]
    present = codes >= 0
    judged = present & ~np.isnan(collection.grades[np.where(present, codes, 0)])
    documents = present.sum(axis=(0, 1))
    share = [None if n == 0 else j / n for j, n in zip(judged.sum(axis=(0, 1)).tolist(), documents.tolist())]
    return JudgedByRank(depth, tuple(share), tuple(int(x) for x in documents.tolist()))


def _compact(table: Any, row_code: np.ndarray, keep: np.ndarray, qrels: Qrels) -> Qrels:
    """The qrels of the rows ``keep`` (a mask over ``table``'s rows), columnar, no string rebuilt; every query of
    ``table`` stays, with no row when none is kept."""
    import numpy as np
    import pyarrow as pa

    from ..model.columnar import RowTable
    from ..model.data import Qrels

    rows = np.flatnonzero(keep)
    code = row_code[rows]
    starts = np.r_[0, np.flatnonzero(code[1:] != code[:-1]) + 1].astype(np.int64) if len(rows) else \
        np.zeros(0, np.int64)
    integral = np.asarray(table.integral)[rows] if np.ndim(table.integral) else table.integral
    compact = RowTable(table.query_ids, starts, code[starts], table.docs.take(pa.array(rows)), table.values[rows],
                       integral, table.hashes[rows], table.query_kind, table.doc_kind)
    return Qrels(compact, min_relevance=qrels.min_relevance, allow_empty=True)


def _needed(table: Any, row_code: np.ndarray, qrels: Qrels, metric: str, options: Settings) -> np.ndarray:
    """The rows of ``table`` an evaluation of ``metric`` reads: all, or without the rows of grade 0 when the
    metric reads no judgement of grade 0 (no ``in_qrels`` / ``in_pool`` input, no gain map, a level above 0,
    no ``judged_only``), keeping one row of a query that has only such rows (it stays a query of the qrels).
    R, the ideal ranking and every hit are the same either way."""
    import numpy as np

    from ..metrics.resolution import relevance_level
    from ..metrics.spec import parse_metric

    parsed = parse_metric(metric)
    every: np.ndarray = np.ones(table.n_rows, dtype=bool)
    if parsed.inputs or options.judged_only or parsed.settings.get("gains") is not None:
        return every
    if parsed.info.binary:
        level = parsed.settings.get("rel")
        if (level if level is not None else relevance_level(qrels, options.min_relevance)) <= 0:
            return every
    keep: np.ndarray = table.values != 0
    has_kept = np.zeros(len(table.query_ids), dtype=bool)
    has_kept[row_code[keep]] = True
    first = np.r_[True, row_code[1:] != row_code[:-1]] if table.n_rows else np.zeros(0, dtype=bool)
    keep |= first & ~has_kept[row_code]
    return keep


def _quietly(qrels: Qrels, run: Run, metric: str, options: Settings) -> dict[str, float]:
    """Per-query values of an evaluation the diagnosis makes for itself (the ideal ranking, a run without its
    own relevant documents): what evaluate would warn of there is by construction, not the user's input."""
    from ..errors import EvalbridgeWarning
    from ..evaluation.evaluating import evaluate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalbridgeWarning)
        return evaluate(qrels, run, metric, settings=options).query(metric)


def _without(collection: _Collection, rows_out: np.ndarray, queries: list[str]) -> Qrels:
    """The qrels of ``queries`` only, without the rows ``rows_out``."""
    import numpy as np

    table = collection.table
    position = {q: i for i, q in enumerate(table.query_ids)}
    wanted = np.zeros(len(table.query_ids), dtype=bool)
    wanted[[position[q] for q in queries if q in position]] = True
    keep = wanted[collection.row_code]
    keep[rows_out] = False
    return collection.judgements(keep)


def _direct(collection: _Collection, label: str, options: Settings) -> tuple[Any, Any, int] | None:
    """(the metric as evaluate resolves it, the qrels grouped for the kernels, the depth) when a TopLists' runs
    can go to the kernels directly, with no Run built and no hash matching (the grades of every pair are known):
    settings whose effect the kernels' columns carry alone (missing queries and no-relevant ones scored 0, no
    judged_only), the backend evaluate would use for each run's rows the fast one (``auto`` decided by
    :func:`~evalbridge.evaluation.evaluating.backend_for`, evaluate's own decision, and checked as evaluate checks it)
    and a metric that reads no judgement beyond the grades; else None (each run is then evaluated as a Run)."""
    from ..evaluation.evaluating import backend_for, check_supported
    from ..fast.tops import Judged
    from ..metrics.requests import metric_requests
    from ..metrics.resolution import resolve_metrics

    if (options.missing_queries, options.no_relevant, options.judged_only) != ("zero", "zero", False):
        return None
    depth = collection.tops.depth if options.depth is None else min(options.depth, collection.tops.depth)
    per_run = collection.tops.lengths().clip(max=depth).sum(axis=1)  # each run's rows, cut at the depth
    if backend_for(options, int(per_run.min()) if len(per_run) else 0) != "fast":  # the smallest run decides
        return None
    metric = resolve_metrics(collection.qrels, metric_requests([label]), min_relevance=options.min_relevance).metrics[0]
    check_supported("fast", [metric], collection.qrels, options)
    if metric.inputs:
        return None
    return metric, Judged(collection.tops, collection.table, collection.row_code, collection.grades,
                          collection.needed), depth


def _direct_values(direct: tuple[Any, Any, int], system: int, queries: np.ndarray, options: Settings,
                   **changes: Any) -> np.ndarray:
    from ..fast.kernels import evaluate_columns

    metric, judged, depth = direct
    values: np.ndarray = evaluate_columns(judged.columns(system, queries, depth, **changes), [metric], options)[metric]
    return values


def _pool_bias(collection: _Collection, runs: list[Run] | None, ids: list[str], values: np.ndarray,
               metric: str, depth: int, level: float, options: Settings,
               direct: tuple[Any, Any, int] | None) -> PoolBias:
    import numpy as np

    from ..model.data import Run

    tops = collection.tops
    codes = tops.codes[:, :, :depth]
    held_once = tops.holders(depth) == 1
    relevant = ~np.isnan(collection.grades) & (np.nan_to_num(collection.grades, nan=-np.inf) >= level)
    unique = np.zeros(tops.pairs.n_rows + 1, dtype=bool)  # the last entry: the padding code -1
    unique[:-1] = held_once & relevant & (collection.judged_row >= 0)
    position = {q: i for i, q in enumerate(ids)}
    means = values.mean(axis=1) if values.shape[1] else np.full(values.shape[0], np.nan)
    placed = ranks(means)
    reduced = options.replace(no_relevant="zero")  # a query left with nothing relevant scores 0 there
    out = []
    for s, name in enumerate(tops.systems):
        mine = unique[codes[s]]                                   # (queries, depth)
        touched = np.flatnonzero(mine.any(axis=1))
        touched_ids = [tops.query_ids[i] for i in touched.tolist() if tops.query_ids[i] in position]
        without = values[s].copy()
        if touched_ids and direct is not None:
            pairs = codes[s][mine]
            unjudged = np.zeros(tops.pairs.n_rows, dtype=bool)
            unjudged[pairs] = True
            table_index = {q: i for i, q in enumerate(collection.table.query_ids)}
            chosen = np.array([table_index[q] for q in touched_ids], dtype=np.int64)
            again_values = _direct_values(direct, s, chosen, options, unjudged=unjudged,
                                          removed_rows=collection.judged_row[pairs])
            for q, value in zip(touched_ids, again_values.tolist()):
                without[position[q]] = value
        elif touched_ids:
            rows_out = collection.judged_row[codes[s][mine]]
            small_qrels = _without(collection, rows_out, touched_ids)
            if runs is None:
                run = tops.run(s, np.array([i for i in touched.tolist() if tops.query_ids[i] in position]))
            else:
                run = Run({q: runs[s][q] for q in touched_ids if q in runs[s]}, allow_empty=True)
            again = _quietly(small_qrels, run, metric, reduced)
            for q in touched_ids:
                without[position[q]] = again.get(q, 0.0)
        score_without = float(without.mean()) if len(without) else math.nan
        others = means.copy()
        others[s] = score_without
        out.append(RunBias(name, int(np.count_nonzero(mine)), len(touched_ids), float(means[s]), score_without,
                           int(placed[s]), int(ranks(others)[s])))
    return PoolBias(depth, level, tuple(out))


#: the fields of Statistics diagnose honours (any value of test, correction, alpha, n_resamples, seed; two sides)
_USES: Mapping[str, tuple[Any, ...] | None] = {"test": None, "correction": None, "alpha": None, "n_resamples": None,
                                               "seed": None, "sides": (2,)}


@overload
def diagnose(qrels: Any, runs: Mapping[str, Any] | TopLists, metric: Literal["official"], *,
             judgements_b: Any = None, pool_depth: int = 100, trials: int = 1000,
             statistics: Statistics | None = None, test: str | None = None, correction: str | None = None,
             alpha: float | None = None, n_resamples: int | None = None, seed: int | None = None,
             settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Diagnoses: ...


@overload
def diagnose(qrels: Any, runs: Mapping[str, Any] | TopLists, metric: str | Metric = "nDCG@10", *,
             judgements_b: Any = None, pool_depth: int = 100, trials: int = 1000,
             statistics: Statistics | None = None, test: str | None = None, correction: str | None = None,
             alpha: float | None = None, n_resamples: int | None = None, seed: int | None = None,
             settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Diagnosis: ...


@overload
def diagnose(qrels: Any, runs: Mapping[str, Any] | TopLists, metric: Sequence[str | Metric], *,
             judgements_b: Any = None, pool_depth: int = 100, trials: int = 1000,
             statistics: Statistics | None = None, test: str | None = None, correction: str | None = None,
             alpha: float | None = None, n_resamples: int | None = None, seed: int | None = None,
             settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Diagnoses: ...


def diagnose(qrels: Any, runs: Mapping[str, Any] | TopLists, metric: Any = "nDCG@10", *,
             judgements_b: Any = None, pool_depth: int = 100, trials: int = 1000,
             statistics: Statistics | None = None, test: str | None = None, correction: str | None = None,
             alpha: float | None = None, n_resamples: int | None = None, seed: int | None = None,
             settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Diagnosis | Diagnoses:
    """Diagnose a test collection: ``qrels`` judged, ``runs`` the systems it is to tell apart.

    Args:
        qrels: the judgements (anything ``evaluate`` reads).
        runs: system name -> run (anything ``evaluate`` reads), at least two; or a
            :class:`~evalbridge.fast.tops.TopLists` (then ``metric`` needs a cut-off within its depth).
        metric: the metric the systems are compared on; a list or tuple of metrics: each diagnosed as it would be
            alone (the inputs read once), a :class:`Diagnoses`.
        judgements_b: a second set of judgements of the same pairs (another judge): their agreement, and the
            systems' means under it with Kendall's tau and tau_AP between the two orders (``Diagnosis.order``).
        pool_depth: the depth of the pool, for the documents a run contributed alone and the judged share.
        trials: random splits into halves for the swap rate.
        statistics: the tests (:class:`~evalbridge.Statistics`), as :func:`evalbridge.compare`'s; ``test``,
            ``correction``, ``alpha``, ``n_resamples`` and ``seed`` given replace its fields (``seed`` also draws the
            halves). Its tests are two-sided and it draws no interval: ``sides=1``, a ``confidence`` or a
            ``ci_method`` away from its default is refused, not ignored.
        settings, keywords: :func:`evalbridge.evaluate`'s settings (a :class:`~evalbridge.model.settings.Settings`, whole,
            or its fields as keywords, which replace those of ``settings``); every evaluation takes them.

    Raises:
        InputError: fewer than two runs, a bad option, or (TopLists) a metric without a cut-off within the depth.
    """
    from ..io.datasets import with_official

    metric = with_official(metric, qrels, judgements_b)[0]  # "official": the measures of the qrels' dataset
    if isinstance(metric, (list, tuple)):
        return _several(qrels, runs, metric, judgements_b=judgements_b, pool_depth=pool_depth, trials=trials,
                        statistics=statistics_for("diagnose", statistics, {
                            "test": test, "correction": correction, "alpha": alpha, "n_resamples": n_resamples,
                            "seed": seed}, uses=_USES, why="its tests are two-sided and it draws no interval"),
                        settings=settings_of(settings, keywords))
    import numpy as np

    from ..evaluation.evaluating import as_qrels, as_run
    from ..fast.tops import TopLists, from_runs, pair_grades, qrels_table

    chosen = statistics_for("diagnose", statistics, {"test": test, "correction": correction, "alpha": alpha,
                                                     "n_resamples": n_resamples, "seed": seed},
                            uses=_USES, why="its tests are two-sided and it draws no interval").to_dict()
    depth_and_trials = check_parameters(DIAGNOSIS_PARAMETERS, {"pool_depth": pool_depth, "trials": trials})
    pool_depth, trials = depth_and_trials["pool_depth"], depth_and_trials["trials"]
    label = _metric(metric)
    options = settings_of(settings, keywords)
    judgements = as_qrels(qrels, ids=options.ids)
    if not judgements.n_rows:
        raise InputError("the qrels hold no judgement: a diagnosis of the collection has nothing to measure.",
                         source=judgements.source, fix="give the collection's judgements (one per judged (query, "
                                                       "document)).")
    if isinstance(runs, TopLists):
        _within_depth(label, runs.depth)
        tops, listed = runs, None
        # as deep as the longest ranking at most (the lists are padded with -1 up to their depth)
        pool_depth = max(1, min(pool_depth, int((runs.codes >= 0).sum(axis=2).max(initial=1))))
        run_objects = []  # built only when the kernels cannot take the codes directly
    else:
        if not isinstance(runs, Mapping):
            raise InputError(f"runs must be a mapping of system names to runs; got {type(runs).__name__}.",
                             fix="pass e.g. {'bm25': run_a, 'dense': run_b}.")
        run_objects = listed = [as_run(run, ids=options.ids, duplicates=options.duplicates) for run in runs.values()]
        # a pool deeper than every ranking is as deep as the longest (as for TopLists), and allocates no more
        longest = max((len(scores) for run in run_objects for scores in run.values()), default=1)
        pool_depth = max(1, min(pool_depth, longest))
        tops = from_runs(dict(zip(map(str, runs), run_objects)), pool_depth, ties=options.ties,
                         score_precision=options.score_precision)
    if len(tops.systems) < 2:
        raise InputError(f"diagnose needs at least two runs; got {len(tops.systems)}.",
                         fix="give every system the collection is to tell apart.")
    table = qrels_table(judgements)
    row_code = table.codes()
    grades, judged_row = pair_grades(tops, table)
    collection = _Collection(tops, judgements, table, row_code, _needed(table, row_code, judgements, label, options),
                             grades, judged_row)
    direct = _direct(collection, label, options) if listed is None else None
    if direct is not None:  # the kernels over the TopLists' codes: no Run built, no matching
        every = np.arange(len(table.query_ids), dtype=np.int64)
        ids = list(table.query_ids)
        values = np.array([_direct_values(direct, s, every, options) for s in range(len(tops.systems))])
    elif listed is None:  # the runs' first documents: the judgements the metric reads suffice, ids meet by construction
        ids, values = _per_query(collection.judgements(), [tops.run(s) for s in range(len(tops.systems))], label,
                                 options, quiet=True)
    else:
        ids, values = _per_query(judgements, run_objects, label, options)
    means = values.mean(axis=1) if values.shape[1] else np.full(values.shape[0], np.nan)
    agreement = order = None
    if judgements_b is not None:
        from .agreement import agreement as judge_agreement

        other = as_qrels(judgements_b, ids=options.ids)
        agreement = judge_agreement(judgements, other, min_relevance=options.min_relevance)
        order = _order(means, _per_query(other, run_objects or [tops.run(s) for s in range(len(tops.systems))], label,
                                         options))
    return Diagnosis(
        metric=label, systems=tops.systems, means=tuple(float(m) for m in means), queries=len(ids),
        discriminative_power=discriminative_power(values, test=chosen["test"], correction=chosen["correction"],
                                                  alpha=chosen["alpha"], n_resamples=chosen["n_resamples"],
                                                  seed=chosen["seed"]),
        swap=swap_rate(values, trials=trials, seed=chosen["seed"]),
        pool_bias=_pool_bias(collection, listed, ids, values, label, pool_depth,
                             _level(judgements, label, options), options, direct),
        saturation=_saturation(collection, ids, values, label, options),
        judged=_judged_by_rank(collection, pool_depth), agreement=agreement, order=order,
        detectable=_detectable(values, chosen["test"], chosen["alpha"]))


def _several(qrels: Any, runs: Mapping[str, Any] | TopLists, metrics: Sequence[Any], *, judgements_b: Any,
             pool_depth: int, trials: int, statistics: Statistics, settings: Settings) -> Diagnoses:
    """Each metric diagnosed as :func:`diagnose` diagnoses it alone, the inputs read once."""
    from ..evaluation.evaluating import as_qrels, as_run
    from ..fast.tops import TopLists

    if not metrics:
        raise InputError("diagnose was given no metric.", fix="name one or more, e.g. ['nDCG@10', 'P@10'].")
    labels = list(dict.fromkeys(_metric(m) for m in metrics))  # a metric asked again is kept once, as every verb does
    judgements = as_qrels(qrels, ids=settings.ids)
    other = None if judgements_b is None else as_qrels(judgements_b, ids=settings.ids)
    if not isinstance(runs, TopLists) and isinstance(runs, Mapping):
        runs = {name: as_run(run, ids=settings.ids, duplicates=settings.duplicates) for name, run in runs.items()}
    return Diagnoses(tuple(diagnose(judgements, runs, label, judgements_b=other, pool_depth=pool_depth, trials=trials,
                                    statistics=statistics, settings=settings) for label in labels))


def _detectable(values: np.ndarray, test: str, alpha: float) -> float:
    """The median over the pairs of systems (those differing on some query) of power's minimum detectable effect."""
    import numpy as np

    from ..decisions.power import POWER_PARAMETERS, POWER_TESTS, analyse

    k, n = values.shape
    differences = [values[j] - values[i] for j in range(k) for i in range(j)]
    differences = [d for d in differences if d.any()]
    if n < 2 or not differences:
        return math.nan
    solved = analyse(differences, test=test if test in POWER_TESTS else "t", alpha=alpha,
                     power=POWER_PARAMETERS["power"].default, effect=None)
    return float(np.median([mde for _, _, _, mde, *_ in solved]))
