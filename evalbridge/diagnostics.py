"""Diagnostics of a test collection: can these judgements tell these systems apart, and do they favour some?

``eb.diagnose(qrels, runs, "nDCG@10")`` evaluates every run once and returns a :class:`Diagnosis`, data only
(:mod:`evalbridge.views.diagnosis` says what each number means for a decision):

* **discriminative power** (Sakai 2006): the share of system pairs whose difference is significant under
  the chosen paired test and correction (:mod:`evalbridge.stats.compare`'s tests and corrections);
* **swap rate** (Voorhees and Buckley 2002): the queries are split at random into two disjoint halves,
  ``trials`` times; a swap is a pair of systems ordered one way by one half and the other way by the other;
  the rate by the size of the difference says how large a difference this many queries can be trusted on;
* **pool bias**, leave one run out (Zobel 1998; Buckley et al. 2007): each run scored with the relevant
  documents only it contributed to the pool (within ``pool_depth``, relevant at the level) removed from the
  judgements, against its score with them. Only that run, on only the queries where it contributed such a
  document, is evaluated again;
* **saturation**: the queries every system answers perfectly (each reaches the metric's value for the ideal
  ranking of the judged documents) and those on which every system scores the same: they tell nothing apart;
* **judged share by rank**: of the documents the systems rank at 1, 2, ... ``pool_depth``, the share judged;
* **agreement** of two sets of judgements, where a second is given (:func:`evalbridge.stats.agreement.agreement`).

Runs come as a mapping name -> run (anything ``evaluate`` reads) or as
:class:`~evalbridge.fast.tops.TopLists` (many runs' first documents as arrays: the 100-run bench), whose
metrics must then have a cut-off within its depth.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .errors import InputError
from .settings import Settings, settings_of
from .stats.paired_tests import CORRECTIONS, TESTS, check_comparison_parameters
from .parameters import Interval, check_parameters, rule_table

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Unpack

    from .fast.tops import TopLists
    from .model import Qrels, Run
    from .settings import Keywords
    from .stats.agreement import JudgeAgreement

__all__ = ["diagnose", "Diagnosis", "DiscriminativePower", "SwapRate", "SwapBin", "RunBias", "PoolBias",
           "Saturation", "JudgedByRank", "SWAP_EDGES", "DIAGNOSIS_PARAMETERS"]

#: edges of the bins of |difference in one half| the swap rate is reported by
SWAP_EDGES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2)
#: the largest swap rate a difference is called stable at
STABLE_SWAP_RATE = 0.05

DIAGNOSIS_PARAMETERS = rule_table(
    Interval("pool_depth", int, 1, None, closed="left", default=100,
             fix="the depth the pool was (or would be) made at, e.g. 100."),
    Interval("trials", int, 1, 100_000, closed="both", default=1000,
             fix="the random splits of the queries into halves, e.g. 1000."),
)


@dataclass(frozen=True)
class DiscriminativePower:
    """Of ``pairs`` system pairs, ``significant`` differ at ``alpha`` under ``test`` with ``correction``."""

    test: str
    correction: str
    alpha: float
    pairs: int
    significant: int

    @property
    def share(self) -> float:
        return self.significant / self.pairs if self.pairs else math.nan


@dataclass(frozen=True)
class SwapBin:
    """Comparisons whose difference in the first half is in [low, high), and how many of them swapped."""

    low: float
    high: float
    comparisons: int
    swaps: int

    @property
    def rate(self) -> float:
        return self.swaps / self.comparisons if self.comparisons else math.nan


@dataclass(frozen=True)
class SwapRate:
    """Over ``trials`` random splits into two halves of ``half`` queries, ``swaps`` of ``comparisons``
    (pair, trial) ordered the pair one way in one half and the other way in the other.

    ``stable_delta``: the smallest bin edge from which on every bin swapped in at most 5% of its
    comparisons (None: not even the largest differences did)."""

    trials: int
    seed: int
    half: int
    comparisons: int
    swaps: int
    bins: tuple[SwapBin, ...]
    stable_delta: float | None

    @property
    def rate(self) -> float:
        return self.swaps / self.comparisons if self.comparisons else math.nan


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
class Diagnosis:
    """What :func:`diagnose` found (see the module docstring). ``means``: each system's mean, in
    ``systems`` order, over the ``queries`` queries every system was evaluated on."""

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

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (nan and infinity as None; the agreement as its own ``to_dict``)."""
        out = {name: getattr(self, name) for name in ("metric", "systems", "means", "queries")}
        for name in ("discriminative_power", "swap", "pool_bias", "saturation", "judged"):
            out[name] = asdict(getattr(self, name))
        out["discriminative_power"]["share"] = self.discriminative_power.share
        out["swap"]["rate"] = self.swap.rate
        for row, section in zip(out["pool_bias"]["runs"], self.pool_bias.runs):
            row["delta"] = section.delta
        out["agreement"] = None if self.agreement is None else self.agreement.to_dict()
        clean: dict[str, Any] = _finite(out)
        return clean

    def __str__(self) -> str:
        from .views.diagnosis import render_text

        return render_text(self)


def _finite(value: Any) -> Any:
    """``value`` with every nan or infinite float as None (JSON has neither), tuples as lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


# ------------------------------------------------------------------ the measures over a (systems, queries) matrix

def discriminative_power(values: np.ndarray, *, test: str, correction: str, alpha: float, n_resamples: int,
                         seed: int) -> DiscriminativePower:
    """Sakai's discriminative power of the rows of ``values`` (systems x queries)."""
    import numpy as np

    n = values.shape[0]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return DiscriminativePower(test, correction, alpha, 0, 0)
    if test == "randomization":  # every pair at once, as compare does (same signs for every pair)
        from .resampling import randomization_pvalues

        d = np.stack([values[i] - values[j] for i, j in pairs])
        p = randomization_pvalues(d, n_resamples=n_resamples, seed=seed)
        p[~d.any(axis=1)] = 1.0
        pvalues = [float(x) for x in p] if values.shape[1] >= 2 else [math.nan] * len(pairs)
    elif test == "t":
        pvalues = _t_pvalues(values, pairs)
    else:
        chosen = TESTS[test]
        pvalues = [chosen.pvalue(values[i], values[j], n_resamples, seed) for i, j in pairs]
    adjusted = CORRECTIONS[correction].adjust(pvalues)
    return DiscriminativePower(test, correction, alpha, len(pairs), sum(bool(p <= alpha) for p in adjusted))


def _t_pvalues(values: np.ndarray, pairs: list[tuple[int, int]]) -> list[float]:
    """:func:`~evalbridge.stats.compare.paired_t_test` of every pair, scipy's ``ttest_rel`` over a batch of pairs at
    a time (the same operations along the query axis): 1 where every difference is 0, nan with fewer than 2."""
    import warnings as _w

    import numpy as np
    from scipy.stats import ttest_rel

    n = values.shape[1]
    if n < 2:
        return [math.nan] * len(pairs)
    out: list[float] = []
    first, second = (np.array(side, dtype=np.int64) for side in zip(*pairs))
    step = max(1, (64 * 2 ** 20) // (8 * 3 * n))
    for start in range(0, len(pairs), step):
        x, y = values[first[start:start + step]], values[second[start:start + step]]
        with _w.catch_warnings():
            _w.simplefilter("ignore", RuntimeWarning)  # constant non-zero differences: t = +-inf, p = 0
            p = np.asarray(ttest_rel(x, y, axis=1).pvalue, dtype=np.float64)
        p[~(x != y).any(axis=1)] = 1.0
        out.extend(p.tolist())
    return out


def swap_rate(values: np.ndarray, *, trials: int, seed: int, edges: tuple[float, ...] = SWAP_EDGES) -> SwapRate:
    """Voorhees and Buckley's swap rate of the rows of ``values`` (systems x queries) over random halves."""
    import numpy as np

    n_systems, n = values.shape
    half = n // 2
    first, second = np.triu_indices(n_systems, k=1)
    if half == 0 or len(first) == 0:
        return SwapRate(trials, seed, half, 0, 0, (), None)
    rng = np.random.default_rng(seed)
    counts, swaps = np.zeros(len(edges), np.int64), np.zeros(len(edges), np.int64)
    columns = np.ascontiguousarray(values.T)
    scale = max(1.0, float(np.abs(values).max()))
    step = max(1, (32 * 2 ** 20) // (8 * n))  # trials per batch: a (batch, queries) split matrix in 32 MiB
    for start in range(0, trials, step):
        batch = min(step, trials - start)
        order = rng.permuted(np.tile(np.arange(n), (batch, 1)), axis=1)
        split = np.zeros((batch, n))
        np.put_along_axis(split, order[:, :half], 1.0, axis=1)
        other = np.zeros((batch, n))
        np.put_along_axis(other, order[:, half:2 * half], 1.0, axis=1)
        mean_a, mean_b = split @ columns / half, other @ columns / half
        d_a, d_b = (_settled(m[:, first] - m[:, second], scale) for m in (mean_a, mean_b))
        swapped = d_a * d_b < 0
        where = np.searchsorted(edges, np.abs(d_a), side="right") - 1
        counts += np.bincount(where.ravel(), minlength=len(edges))
        swaps += np.bincount(where[swapped], minlength=len(edges))
    bins = tuple(SwapBin(low, high, int(c), int(s))
                 for low, high, c, s in zip(edges, (*edges[1:], math.inf), counts.tolist(), swaps.tolist()))
    rates = [(edge, s / c) for edge, c, s in zip(edges, counts.tolist(), swaps.tolist()) if c]
    stable = [edge for k, (edge, _) in enumerate(rates) if all(r <= STABLE_SWAP_RATE for _, r in rates[k:])]
    return SwapRate(trials, seed, half, int(counts.sum()), int(swaps.sum()), bins, stable[0] if stable else None)


def _settled(differences: np.ndarray, scale: float) -> np.ndarray:
    """Differences of means with the rounding of the summation order taken out: within 1e-12 of the values'
    scale is a tie (two systems whose per-query values sum alike are not ordered by the last bit)."""
    import numpy as np

    return np.where(np.abs(differences) <= 1e-12 * scale, 0.0, differences)


def _ranks(means: np.ndarray) -> np.ndarray:
    """Rank of each system by its mean, 1 = best (ties, rounding aside, share the best rank)."""
    import numpy as np

    scale = max(1.0, float(np.abs(means).max())) if len(means) else 1.0
    return np.array([1 + int(np.count_nonzero(_settled(means - m, scale) > 0)) for m in means.tolist()],
                    dtype=np.int64)


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


def _level(qrels: Qrels, options: Settings) -> float:
    level = options.min_relevance
    if level is None:
        level = qrels.min_relevance
    return 1.0 if level is None else float(level)


def _metric(metric: Any) -> str:
    from .metrics.spec import Metric, parse_metric

    if isinstance(metric, Metric):
        return str(metric)
    if not isinstance(metric, str):
        raise InputError(f"diagnose takes one metric (a spec such as 'nDCG@10'); got {type(metric).__name__} "
                         f"{metric!r:.60}.", fix="diagnose one metric at a time.")
    parse_metric(metric)
    return metric


def _within_depth(metric: str, depth: int) -> None:
    from .metrics.spec import parse_metric

    k = parse_metric(metric).k
    if k is None or k > depth:
        raise InputError(f"the runs keep their first {depth} documents, so {metric} cannot be computed from them "
                         f"(it reads {'every ranked document' if k is None else f'the first {k}'}).",
                         fix=f"diagnose a metric with a cut-off of at most {depth}, e.g. nDCG@10 or AP@{depth}.")


def _per_query(qrels: Qrels, runs: list[Run], metric: str, options: Settings, *,
               quiet: bool = False) -> tuple[list[str], np.ndarray]:
    """(the queries every run was evaluated on, in the qrels' order; values systems x queries)."""
    import numpy as np

    from .evaluation import evaluate

    maps = [_quietly(qrels, run, metric, options) if quiet else evaluate(qrels, run, metric, settings=options).query(metric)
            for run in runs]
    common = set(maps[0]).intersection(*maps[1:]) if maps else set()
    ids = [q for q in maps[0] if q in common] if maps else []
    return ids, np.array([[m[q] for q in ids] for m in maps], dtype=np.float64).reshape(len(maps), len(ids))


def _saturation(collection: _Collection, ids: list[str], values: np.ndarray, metric: str,
                options: Settings) -> Saturation:
    import numpy as np

    from .evaluation import evaluate
    from .model import Run

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

    from .columnar import RowTable
    from .model import Qrels

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

    from .metrics.resolution import relevance_level
    from .metrics.spec import parse_metric

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
    from .errors import EvalbridgeWarning
    from .evaluation import evaluate

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
    judged_only, the fast backend or auto) and a metric that reads no judgement beyond the grades; else None."""
    from .fast.tops import Judged
    from .metrics.requests import metric_requests
    from .metrics.resolution import resolve_metrics

    if (options.missing_queries, options.no_relevant, options.judged_only) != ("zero", "zero", False) or \
            options.backend not in ("auto", "fast"):
        return None
    metric = resolve_metrics(collection.qrels, metric_requests([label]), min_relevance=options.min_relevance).metrics[0]
    if metric.inputs:
        return None
    depth = collection.tops.depth if options.depth is None else min(options.depth, collection.tops.depth)
    return metric, Judged(collection.tops, collection.table, collection.row_code, collection.grades,
                          collection.needed), depth


def _direct_values(direct: tuple[Any, Any, int], system: int, queries: np.ndarray, options: Settings,
                   **changes: Any) -> np.ndarray:
    from .fast.kernels import evaluate_columns

    metric, judged, depth = direct
    values: np.ndarray = evaluate_columns(judged.columns(system, queries, depth, **changes), [metric], options)[metric]
    return values


def _pool_bias(collection: _Collection, runs: list[Run] | None, ids: list[str], values: np.ndarray,
               metric: str, depth: int, level: float, options: Settings,
               direct: tuple[Any, Any, int] | None) -> PoolBias:
    import numpy as np

    from .model import Run

    tops = collection.tops
    codes = tops.codes[:, :, :depth]
    held_once = tops.holders(depth) == 1
    relevant = ~np.isnan(collection.grades) & (np.nan_to_num(collection.grades, nan=-np.inf) >= level)
    unique = np.zeros(tops.pairs.n_rows + 1, dtype=bool)  # the last entry: the padding code -1
    unique[:-1] = held_once & relevant & (collection.judged_row >= 0)
    position = {q: i for i, q in enumerate(ids)}
    means = values.mean(axis=1) if values.shape[1] else np.full(values.shape[0], np.nan)
    ranks = _ranks(means)
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
                           int(ranks[s]), int(_ranks(others)[s])))
    return PoolBias(depth, level, tuple(out))


def diagnose(qrels: Any, runs: Mapping[str, Any] | TopLists, metric: Any = "nDCG@10", *,
             judgements_b: Any = None, pool_depth: int = 100, trials: int = 1000, test: str = "t",
             correction: str = "holm", alpha: float = 0.05, n_resamples: int = 10_000, seed: int = 0,
             settings: Settings | None = None, **keywords: Unpack[Keywords]) -> Diagnosis:
    """Diagnose a test collection: ``qrels`` judged, ``runs`` the systems it is to tell apart.

    Args:
        qrels: the judgements (anything ``evaluate`` reads).
        runs: system name -> run (anything ``evaluate`` reads), at least two; or a
            :class:`~evalbridge.fast.tops.TopLists` (then ``metric`` needs a cut-off within its depth).
        metric: the one metric the systems are compared on.
        judgements_b: a second set of judgements of the same pairs (another judge): their agreement.
        pool_depth: the depth of the pool, for the documents a run contributed alone and the judged share.
        trials: random splits into halves for the swap rate.
        test, correction, alpha, n_resamples, seed: as :func:`evalbridge.compare`'s (``seed`` also draws the
            halves).
        settings, keywords: :func:`evalbridge.evaluate`'s settings (a :class:`~evalbridge.settings.Settings`, whole,
            or its fields as keywords, which replace those of ``settings``); every evaluation takes them.

    Raises:
        InputError: fewer than two runs, a bad option, or (TopLists) a metric without a cut-off within the depth.
    """
    import numpy as np

    from .evaluation import as_qrels, as_run
    from .fast.tops import TopLists, from_runs, pair_grades, qrels_table

    chosen = check_comparison_parameters(test=test, correction=correction, alpha=alpha, n_resamples=n_resamples,
                                         seed=seed)
    depth_and_trials = check_parameters(DIAGNOSIS_PARAMETERS, {"pool_depth": pool_depth, "trials": trials})
    pool_depth, trials = depth_and_trials["pool_depth"], depth_and_trials["trials"]
    label = _metric(metric)
    options = settings_of(settings, keywords)
    judgements = as_qrels(qrels, ids=options.ids)
    if isinstance(runs, TopLists):
        _within_depth(label, runs.depth)
        tops, listed = runs, None
        pool_depth = min(pool_depth, runs.depth)
        run_objects = []  # built only when the kernels cannot take the codes directly
    else:
        if not isinstance(runs, Mapping):
            raise InputError(f"runs must be a mapping of system names to runs; got {type(runs).__name__}.",
                             fix="pass e.g. {'bm25': run_a, 'dense': run_b}.")
        run_objects = listed = [as_run(run, ids=options.ids, duplicates=options.duplicates) for run in runs.values()]
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
    agreement = None
    if judgements_b is not None:
        from .stats.agreement import agreement as judge_agreement

        agreement = judge_agreement(judgements, judgements_b, min_relevance=options.min_relevance)
    means = values.mean(axis=1) if values.shape[1] else np.full(values.shape[0], np.nan)
    return Diagnosis(
        metric=label, systems=tops.systems, means=tuple(float(m) for m in means), queries=len(ids),
        discriminative_power=discriminative_power(values, test=chosen["test"], correction=chosen["correction"],
                                                  alpha=chosen["alpha"], n_resamples=chosen["n_resamples"],
                                                  seed=chosen["seed"]),
        swap=swap_rate(values, trials=trials, seed=chosen["seed"]),
        pool_bias=_pool_bias(collection, listed, ids, values, label, pool_depth,
                             _level(judgements, options), options, direct),
        saturation=_saturation(collection, ids, values, label, options),
        judged=_judged_by_rank(collection, pool_depth), agreement=agreement)
