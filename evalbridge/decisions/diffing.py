"""Where two runs differ: the queries ranked by the change of each metric, and the documents behind each change.

``eb.diff(qrels, run_a, run_b, metrics, k=10)`` evaluates each run once (:func:`evalbridge.evaluate`, with the
same options) and compares them query by query:

* for every metric, every query both runs were evaluated on, ranked by its change ``b - a`` (the largest
  drop first): :attr:`RunDiff.changes`;
* for the queries that moved most (the ``queries`` largest drops and the ``queries`` largest gains of each
  metric; ``queries=None``: every query whose metrics or top ``k`` differ), what happened in the top ``k``:
  the judged documents that entered or left it (grade, rank in A, rank in B), the unjudged documents that
  entered (or left) it, and the largest rank moves of the documents that stayed in it:
  :attr:`RunDiff.queries`.

Without judgements (``eb.diff(None, run_a, run_b, p=0.9, ties="a")``) a diff says how far the rankings moved:
:attr:`RunDiff.similarity` holds, per query and overall, rank-biased overlap with ties (``rbo`` and its
``rbo_min`` / ``rbo_max`` / ``rbo_res``; ``ties`` is then the RBO variant ``w``, ``a`` or ``b``, the rankings'
tie rule staying trec_eval's), Jaccard at ``k``, Kendall's tau and tau_AP over the shared documents
(:mod:`evalbridge.stats.similarity`); the queries shown in detail are the least similar ones. With judgements it
holds them when asked (``similarity=True``: it ranks every query of both runs again), and always
:attr:`RunDiff.reproduction`, how closely B reproduces A per metric: the RMSE of the per-query values and, given
``baselines=(baseline_of_a, baseline_of_b)``, the effect ratio and the delta relative
improvement (:mod:`evalbridge.stats.reproduction`, as repro_eval computes them).

The metric values are evaluate's own per-query values, never recomputed; the rankings follow the same rules as
the evaluation (:func:`evalbridge.common.ranking.rank` with the tie rule and score precision asked, then ``depth`` and
``judged_only`` as :func:`evalbridge.evaluation.cutting.cut_run` applies them). ``ties="average"`` ranks no single order
(a tie group across rank ``k`` is in the top ``k`` in some orders only), so a diff refuses it.

A :class:`RunDiff` is data: :mod:`evalbridge.views.run_diff` declares its tables, which every output format
writes (``print(d)``, ``d.to_markdown()``, ``d.table("json")``, the notebook view); :meth:`RunDiff.to_frame`
gives them to pandas.

Example:
    >>> qrels = {"q1": {"a": 2, "b": 1}, "q2": {"c": 1}}
    >>> old = {"q1": {"a": 3.0, "x": 2.0, "b": 1.0}, "q2": {"c": 2.0, "y": 1.0}}
    >>> new = {"q1": {"x": 3.0, "a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "z": 1.0}}
    >>> d = diff(qrels, old, new, "P@1", k=1)
    >>> d.changes[0].queries, d.changes[0].delta
    (('q1', 'q2'), (-1.0, 0.0))
    >>> q = d.query("q1")
    >>> [(c.doc, c.grade, c.rank_a, c.rank_b) for c in q.left], [c.doc for c in q.unjudged_entered]
    ([('a', 2.0, 1, 2)], ['x'])
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from ..errors import InputError
from ..evaluation.evaluating import as_qrels, as_run, evaluate
from ..metrics.requests import MetricsArg
from ..model.data import Qrels, Run
from ..evaluation.results import CONVENTIONS
from ..model.settings import Keywords, Settings, settings_of
from ..common.ranking import rank
from ..common.wording import option
from ..common.parameters import Interval, check_parameters, rule_table
from ..views.table import Shown
from ..common.json_data import json_ready

if TYPE_CHECKING:
    import pandas as pd
    from typing_extensions import Unpack

    from ..evaluation.results import Results
    from ..stats.similarity import Similarity

__all__ = ["diff", "diff_results", "RunDiff", "MetricChanges", "QueryDiff", "DocChange", "MeanChange",
           "ReproductionRow", "DIFF_PARAMETERS", "RBO_TIES"]

#: the values of ``ties`` that name an RBO variant (:data:`evalbridge.stats.rbo.RBO_VARIANTS`) rather than a tie rule
RBO_TIES = ("w", "a", "b")

#: the diff's own parameters, declared once: the Python API, ``evalbridge diff`` and a config's ``diff:`` check
#: them with these rules (``queries`` may also be None: every query that changed)
DIFF_PARAMETERS = rule_table(
    Interval("k", int, 1, None, closed="left", default=10, fix="the top of the rankings compared, e.g. 10."),
    Interval("queries", int, 0, None, closed="left", default=10,
             fix="how many of the largest drops and gains to show, e.g. 10 (None in Python: every changed query)."),
    Interval("moves", int, 0, None, closed="left", default=3, fix="how many of the largest rank moves, e.g. 3."),
)

#: the names of the two runs when they carry none
DEFAULT_NAMES = ("A", "B")


@dataclass(frozen=True)
class DocChange:
    """One document of one query: its grade (None: unjudged), its rank in each run (1-based, as evaluated;
    None: not retrieved, or cut by ``depth`` / ``judged_only``) and ``move`` = rank_a - rank_b (positive: it
    rose in B; None unless ranked in both)."""

    doc: str
    grade: float | None
    rank_a: int | None
    rank_b: int | None
    move: int | None


@dataclass(frozen=True)
class MetricChanges:
    """One metric's values for every query both runs were evaluated on, ranked by ``delta`` = b - a
    (the largest drop first, then query id); columns of equal length."""

    metric: str
    queries: tuple[str, ...]
    a: tuple[float, ...]
    b: tuple[float, ...]
    delta: tuple[float, ...]


@dataclass(frozen=True)
class MeanChange:
    """One metric's means over the ``n`` paired queries, and how many queries rose, fell or stayed;
    ``unpaired``: queries evaluated for one run only (``missing_queries="drop"``), left out."""

    metric: str
    n: int
    a: float
    b: float
    delta: float
    improved: int
    worsened: int
    unchanged: int
    unpaired: int


@dataclass(frozen=True)
class ReproductionRow:
    """One metric's reproduction measures of B against A over the ``n`` paired queries: ``rmse`` of the per-query
    values; ``effect_ratio`` and ``delta_ri`` of B's improvement over its baseline against A's over its own (nan
    without baselines, or when A has no effect / a baseline's mean is 0)."""

    metric: str
    n: int
    rmse: float
    effect_ratio: float
    delta_ri: float


@dataclass(frozen=True)
class QueryDiff:
    """One query's change: each metric's ``(metric, a, b)``, and its top ``k`` compared (see :class:`DocChange`).

    ``entered`` / ``left``: judged documents in B's / A's top k only; ``unjudged_entered`` /
    ``unjudged_left``: the same without a judgement; ``moves``: the documents in both top k lists whose
    rank changed, the largest ``|move|`` first (at most ``moves`` of them).
    """

    query: str
    values: tuple[tuple[str, float, float], ...]
    entered: tuple[DocChange, ...]
    left: tuple[DocChange, ...]
    unjudged_entered: tuple[DocChange, ...]
    unjudged_left: tuple[DocChange, ...]
    moves: tuple[DocChange, ...]


@dataclass(frozen=True)
class RunDiff(Shown):
    """Two runs compared query by query (see the module docstring).

    Attributes:
        systems: the names of run A and run B.
        k: the top of the rankings compared.
        metrics: the metric labels, in the order asked.
        means: one :class:`MeanChange` per metric.
        changes: one :class:`MetricChanges` per metric.
        queries: the queries shown in detail (:class:`QueryDiff`), the largest drop of the first metric first.
        conventions: the tie rule, precision, depth and judged-only setting of both rankings.
        provenance: how each run's values were computed (one line each).
        similarity: how far the rankings moved, per query and overall, without judgements (None when not asked).
        reproduction: one :class:`ReproductionRow` per metric (empty without judgements).
    """

    systems: tuple[str, str]
    k: int
    metrics: tuple[str, ...]
    means: tuple[MeanChange, ...]
    changes: tuple[MetricChanges, ...]
    queries: tuple[QueryDiff, ...]
    conventions: Settings
    provenance: tuple[str, ...] = ()
    similarity: Similarity | None = None
    reproduction: tuple[ReproductionRow, ...] = ()

    def query(self, query_id: str) -> QueryDiff | None:
        """The detail of one query, or None when it is not among :attr:`queries`."""
        return next((q for q in self.queries if q.query == query_id), None)

    def metric(self, label: str) -> MetricChanges:
        """The changes of the metric labelled ``label``."""
        for changes in self.changes:
            if changes.metric == label:
                return changes
        raise KeyError(f"{label!r} was not compared; available: {', '.join(self.metrics)}")

    @property
    def empty(self) -> bool:
        """True when no metric changed on any query and no top k differs (a run against itself)."""
        return (not self.queries and all(m.improved == m.worsened == 0 for m in self.means)
                and (self.similarity is None or all(v == 1 for v in self.similarity.jaccard)))

    def to_frame(self, *, table: str = "queries") -> pd.DataFrame:
        """``queries``: one row per (metric, query) with a, b and delta, in rank order; ``documents``: one row
        per document of a query shown in detail, with its kind (entered, left, unjudged_entered,
        unjudged_left, moved), grade and ranks; ``means``: one row per metric; ``similarity``: one row per query
        (rbo, rbo_min, rbo_max, rbo_res, jaccard, tau, tau_ap, shared documents); ``reproduction``: one row per
        metric."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        return pd.DataFrame(_FRAMES[table](self), columns=_COLUMNS[table])

    def table(self, fmt: str = "terminal") -> str:
        """The diff as text: ``json`` or any output format that writes tables (:mod:`evalbridge.views.run_diff`)."""
        from ..views.run_diff import render_diff

        return render_diff(self, fmt)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (NaN becomes None)."""
        data = asdict(self)
        data["conventions"] = {key: getattr(self.conventions, key) for key in CONVENTIONS}
        data["similarity"] = None if self.similarity is None else self.similarity.to_dict()
        return json_ready(data)


_KINDS = ("entered", "left", "unjudged_entered", "unjudged_left", "moves")

_COLUMNS = {
    "queries": ["metric", "query", "a", "b", "delta"],
    "documents": ["query", "kind", "doc", "grade", "rank_a", "rank_b", "move"],
    "means": ["metric", "n", "a", "b", "delta", "improved", "worsened", "unchanged", "unpaired"],
    "similarity": ["query", "rbo", "rbo_min", "rbo_max", "rbo_res", "jaccard", "tau", "tau_ap", "shared"],
    "reproduction": ["metric", "n", "rmse", "effect_ratio", "delta_ri"],
}


def _query_rows(d: RunDiff) -> list[tuple[Any, ...]]:
    return [(c.metric, *row) for c in d.changes for row in zip(c.queries, c.a, c.b, c.delta)]


def _document_rows(d: RunDiff) -> list[tuple[Any, ...]]:
    return [(q.query, kind, c.doc, c.grade, c.rank_a, c.rank_b, c.move)
            for q in d.queries for kind in _KINDS for c in getattr(q, kind)]


def _mean_rows(d: RunDiff) -> list[tuple[Any, ...]]:
    return [tuple(asdict(m).values()) for m in d.means]


def _similarity_rows(d: RunDiff) -> list[tuple[Any, ...]]:
    return [] if d.similarity is None else d.similarity.rows()


def _reproduction_rows(d: RunDiff) -> list[tuple[Any, ...]]:
    return [tuple(asdict(r).values()) for r in d.reproduction]


_FRAMES = {"queries": _query_rows, "documents": _document_rows, "means": _mean_rows, "similarity": _similarity_rows,
           "reproduction": _reproduction_rows}


def diff(qrels: Any, run_a: Any, run_b: Any, metrics: MetricsArg | None = None, *, k: int = 10,
         queries: int | None = 10, moves: int = 3, names: Sequence[str] | None = None, p: float = 0.9,
         similarity: bool | None = None, baselines: Sequence[Any] | None = None, settings: Settings | None = None,
         **keywords: Unpack[Keywords]) -> RunDiff:
    """Compare run B with run A query by query (see the module docstring).

    Args:
        qrels, run_a, run_b, metrics: as :func:`evalbridge.evaluate` takes them (files, tables, dicts, ...);
            ``qrels=None`` (and no metrics): the rankings compared without judgements. ``"official"``, with qrels
            of a dataset, takes its official measures, as ``evaluate``, and the first line of the provenance says which.
        k: the top of the rankings whose documents are compared (and Jaccard's depth).
        queries: how many of the largest drops and of the largest gains of each metric are shown in detail
            (without judgements: the least similar queries); None: every query whose metrics or top ``k`` differ.
        moves: how many of the largest rank moves each query shows.
        names: the names of the two runs (default: their own names, else ``A`` and ``B``).
        p: the persistence of rank-biased overlap (0.9: the top 10 hold 65% of its weight).
        similarity: compare the rankings (RBO, Jaccard, tau, tau_AP per query); None: without judgements only.
        baselines: with judgements, the baseline of A and the baseline of B (two runs, as ``run_a`` is taken):
            the effect ratio and delta relative improvement of B's effect against A's.
        settings, **keywords: :func:`evalbridge.evaluate`'s settings (:class:`~evalbridge.model.settings.Settings`, whole
            or as keywords), applied to both runs alike; ``ties`` may also be an RBO variant (:data:`RBO_TIES`:
            ``w`` ties are equalities, ``a`` the default, their order is unknown, ``b`` a corrected), the rankings
            then keeping trec_eval's tie rule for their top k.

    Returns:
        :class:`RunDiff`.
    """
    from ..stats.similarity import SIMILARITY_PARAMETERS, similarity as similarity_of

    asked = dict(keywords)
    variant = str(asked.pop("ties")) if asked.get("ties") in RBO_TIES else "a"
    chosen = settings_of(settings, cast("Keywords", asked))
    check_parameters(SIMILARITY_PARAMETERS, {"p": p, "ties": variant})
    _check_options(k=k, queries=queries, moves=moves, ties=chosen.ties)
    run_a = as_run(run_a, copy=False, ids=chosen.ids, duplicates=chosen.duplicates)
    run_b = as_run(run_b, copy=False, ids=chosen.ids, duplicates=chosen.duplicates)
    systems = _names(names, run_a, run_b)
    if qrels is None:
        if metrics is not None or baselines is not None:
            raise InputError("metrics and baselines need judgements, and this diff has none (qrels=None).",
                             fix="give the qrels to diff the metrics, or leave metrics and baselines out to compare "
                                 "the rankings alone.")
        if similarity is False:
            raise InputError("a diff without judgements compares the rankings alone; similarity=False leaves nothing.",
                             fix="give the qrels and metrics, or leave similarity out.")
        found = similarity_of(run_a, run_b, p=p, ties=variant, k=k, order=chosen.ties,
                              score_precision=chosen.score_precision, depth=chosen.depth)
        return _unjudged(run_a, run_b, found, systems, chosen, k=k, queries=queries, moves=moves)
    from ..io.datasets import with_official

    metrics, official = with_official(metrics, qrels)  # "official": the measures of the qrels' dataset
    if metrics is None:
        raise InputError("a diff with judgements compares metrics, and none was given.",
                         fix="name the metrics (e.g. 'nDCG@10'), or pass qrels=None to compare the rankings alone.")
    columns = run_a.columnar is not None or run_b.columnar is not None
    qrels = as_qrels(qrels, copy=False, prefer_columns=columns, ids=chosen.ids)
    results_a = evaluate(qrels, run_a, metrics, settings=chosen)
    results_b = evaluate(qrels, run_b, metrics, settings=chosen)
    compared = similarity_of(run_a, run_b, p=p, ties=variant, k=k, order=chosen.ties,
                             score_precision=chosen.score_precision, depth=chosen.depth, unpaired="count") \
        if similarity else None
    base = None
    if baselines is not None:
        if isinstance(baselines, (str, bytes)) or len(baselines) != 2:
            raise InputError("baselines must be two runs: the baseline of A, then the baseline of B.",
                             fix="give baselines=(baseline_of_a, baseline_of_b).")
        base = tuple(evaluate(qrels, as_run(b, copy=False, ids=chosen.ids, duplicates=chosen.duplicates), metrics,
                              settings=chosen) for b in baselines)
    diffed = diff_results(qrels, run_a, run_b, results_a, results_b, k=k, queries=queries, moves=moves,
                          names=systems, similarity=compared, baselines=base)
    return replace(diffed, provenance=(*official, *diffed.provenance))  # its first lines say what official took


def _unjudged(run_a: Run, run_b: Run, found: Similarity, systems: tuple[str, str], conventions: Settings, *, k: int,
              queries: int | None, moves: int) -> RunDiff:
    """A diff without judgements: the similarity, and the top k of the least similar queries."""
    judged = Qrels({}, allow_empty=True)
    details: list[QueryDiff] = []
    step = len(found.queries) if queries is None else max(2 * queries, 16)
    for start in range(0, len(found.queries), step):  # the least similar first, until ``queries`` have moved
        batch = list(found.queries[start:start + step])
        rows = _Rows(judged, run_a, run_b, batch)
        details += [d for d in (_query_diff(q, rows, (), conventions, k, moves) for q in batch) if _moved(d)]
        if queries is not None and len(details) >= queries:
            break
    return RunDiff(systems=systems, k=k, metrics=(), means=(), changes=(),
                   queries=tuple(details if queries is None else details[:queries]), conventions=conventions,
                   provenance=(f"{systems[0]} and {systems[1]}: rankings compared without judgements",),
                   similarity=found)


def _check_options(*, k: Any, queries: Any, moves: Any, ties: str) -> None:
    check_parameters(DIFF_PARAMETERS, {"k": k, "moves": moves, **({} if queries is None else {"queries": queries})})
    if ties == "average":
        raise InputError(f"{option('ties', 'average')} ranks no single order, so which documents are in the top k is "
                         f"not one answer; a diff compares rankings.",
                         fix=f"diff with a tie rule ({option('ties', 'docid_desc')}, trec_eval's); the metric values "
                             f"under 'average' are in the evaluation's results.")


def diff_results(qrels: Qrels, run_a: Run, run_b: Run, results_a: Results, results_b: Results, *, k: int = 10,
                 queries: int | None = 10, moves: int = 3, names: Sequence[str] | None = None,
                 similarity: Similarity | None = None, baselines: Sequence[Results] | None = None) -> RunDiff:
    """:func:`diff` from results already computed by :func:`evalbridge.evaluate` of ``run_a`` and ``run_b``
    (with the same metrics and conventions): what a config run uses against its baseline. ``similarity``: the
    rankings' (:func:`evalbridge.stats.similarity.similarity`), shown beside; ``baselines``: the results of A's and
    B's baselines, for the effect ratio and delta RI."""
    conventions = results_a.provenance.settings
    _check_options(k=k, queries=queries, moves=moves, ties=conventions.ties)
    if results_b.provenance.settings != conventions or results_a.labels != results_b.labels:
        raise InputError("the two results were computed with different metrics or conventions; a diff compares "
                         "like with like.", fix="evaluate both runs with the same metrics and options.")
    systems = _names(names, run_a, run_b)
    changes, means, reproduction = [], [], []
    for request in results_a.requests:
        values_a, values_b = results_a.values[request.metric], results_b.values[results_b.request(request.label).metric]
        found, mean = _changes(request.label, values_a, values_b)
        changes.append(found)
        means.append(mean)
        reproduction.append(_reproduction(request.label, values_a, values_b, baselines))
    shown = _shown(changes, queries)
    if queries is None:
        ranked = [q for q in dict.fromkeys(q for c in changes for q in c.queries) if q not in set(shown)]
        rows = _Rows(qrels, run_a, run_b, [*shown, *ranked])
        shown += [q for q in sorted(ranked) if _top(rows.a[q], rows.grades[q], conventions, k)
                  != _top(rows.b[q], rows.grades[q], conventions, k)]
    else:
        rows = _Rows(qrels, run_a, run_b, shown)
    where = [{q: i for i, q in enumerate(c.queries)} for c in changes] if shown else []
    details = tuple(_query_diff(q, rows, _values(q, changes, where), conventions, k, moves) for q in shown)
    if queries is None:
        details = tuple(d for d in details if any(a != b for _, a, b in d.values) or _moved(d))
    return RunDiff(systems=systems, k=k, metrics=results_a.labels, means=tuple(means), changes=tuple(changes),
                   queries=details, conventions=conventions,
                   provenance=(f"{systems[0]}: {results_a.provenance.summary()}",
                               f"{systems[1]}: {results_b.provenance.summary()}"),
                   similarity=similarity, reproduction=tuple(reproduction))


def _paired(a: Mapping[str, float], b: Mapping[str, float]) -> tuple[Any, Any]:
    import numpy as np

    both = [q for q in a if q in b]
    return (np.fromiter((a[q] for q in both), dtype=np.float64, count=len(both)),
            np.fromiter((b[q] for q in both), dtype=np.float64, count=len(both)))


def _reproduction(label: str, a: Mapping[str, float], b: Mapping[str, float],
                  baselines: Sequence[Results] | None) -> ReproductionRow:
    """B's per-query values as a reproduction of A's (RMSE over the paired queries); with the two baselines, B's
    effect over its baseline against A's over its own."""
    from ..stats.reproduction import delta_relative_improvement, effect_ratio, rmse

    va, vb = _paired(a, b)
    if not len(va):
        return ReproductionRow(label, 0, math.nan, math.nan, math.nan)
    ratio = delta = math.nan
    if baselines is not None:
        base_a, base_b = (r.values[r.request(label).metric] for r in baselines)
        oa, ob = _paired(a, base_a)
        ra, rb = _paired(b, base_b)
        if len(oa) and len(ra):
            ratio, delta = effect_ratio(oa, ob, ra, rb), delta_relative_improvement(oa, ob, ra, rb)
    return ReproductionRow(label, len(va), rmse(va, vb), ratio, delta)


def _names(names: Sequence[str] | None, run_a: Run, run_b: Run) -> tuple[str, str]:
    if names is not None:
        if isinstance(names, str) or len(names) != 2:
            raise InputError(f"names must be two names, one per run; got {names!r}.", fix="give names=('old', 'new').")
        return str(names[0]), str(names[1])
    a, b = run_a.name or DEFAULT_NAMES[0], run_b.name or DEFAULT_NAMES[1]
    return (a, b) if a != b else DEFAULT_NAMES


def _changes(label: str, a: Mapping[str, float], b: Mapping[str, float]) -> tuple[MetricChanges, MeanChange]:
    """One metric's paired values, ranked by change (numpy: 100k queries in milliseconds)."""
    import numpy as np

    paired = [q for q in a if q in b]
    unpaired = len(a) + len(b) - 2 * len(paired)
    va = np.fromiter((a[q] for q in paired), dtype=np.float64, count=len(paired))
    vb = np.fromiter((b[q] for q in paired), dtype=np.float64, count=len(paired))
    delta = vb - va
    ids = np.array(paired, dtype=object)
    order = np.lexsort((ids, delta)) if len(paired) else np.zeros(0, dtype=np.int64)
    changes = MetricChanges(label, tuple(ids[order].tolist()), tuple(va[order].tolist()), tuple(vb[order].tolist()),
                            tuple(delta[order].tolist()))
    n = len(paired)
    mean_a = math.fsum(va.tolist()) / n if n else math.nan
    mean_b = math.fsum(vb.tolist()) / n if n else math.nan
    improved, worsened = int((delta > 0).sum()), int((delta < 0).sum())
    return changes, MeanChange(label, n, mean_a, mean_b, mean_b - mean_a, improved, worsened,
                               n - improved - worsened, unpaired)


def _shown(changes: list[MetricChanges], queries: int | None) -> list[str]:
    """The queries shown in detail: each metric's ``queries`` largest drops and gains (changed queries only),
    in the order of the first metric's changes then the others'."""
    picked: dict[str, None] = {}
    for c in changes:
        drops = [q for q, d in zip(c.queries, c.delta) if d < 0]
        gains = [q for q, d in zip(reversed(c.queries), reversed(c.delta)) if d > 0]
        if queries is not None:
            drops, gains = drops[:queries], gains[:queries]
        picked.update(dict.fromkeys(drops))
        picked.update(dict.fromkeys(reversed(gains)))
    first = {q: i for i, q in enumerate(changes[0].queries)} if changes else {}
    return sorted(picked, key=lambda q: first.get(q, len(first)))


@dataclass(frozen=True)
class _Rows:
    """The rows of the queries a diff details, and only those: a columnar qrels or run (a large file) gives them
    without building the dict rows of every query."""

    grades: dict[str, Mapping[str, float]]
    a: dict[str, Mapping[str, float]]
    b: dict[str, Mapping[str, float]]

    def __init__(self, qrels: Qrels, run_a: Run, run_b: Run, queries: Sequence[str]) -> None:
        for name, data in (("grades", qrels), ("a", run_a), ("b", run_b)):
            object.__setattr__(self, name, _rows_of(data, queries))


def _rows_of(data: Qrels | Run, queries: Sequence[str]) -> dict[str, Mapping[str, float]]:
    """query -> its rows (an empty mapping when it has none), for ``queries`` only."""
    table = data.columnar
    if table is None or not queries:
        return {q: data.get(q) or {} for q in queries}
    import numpy as np
    import pyarrow as pa

    index = {q: i for i, q in enumerate(table.query_ids)}
    blocks = np.flatnonzero(np.isin(table.block_code, [index[q] for q in queries if q in index]))
    starts, lengths = table.block_start[blocks], table.block_lengths[blocks]
    rows = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
    found: dict[str, dict[str, float]] = {q: {} for q in queries}
    ids = table.query_ids
    for code, doc, value in zip(np.repeat(table.block_code[blocks], lengths).tolist(),
                                table.docs.take(pa.array(rows)).to_pylist(), table.values[rows].tolist()):
        found[ids[code]][doc] = value
    return dict(found)


def _ranks(scores: Mapping[str, float], grades: Mapping[str, float], conventions: Settings) -> dict[str, int]:
    """doc -> 1-based rank in one query's ranking as the metrics saw it (tie rule, precision, then ``depth`` and
    ``judged_only``, as :func:`evalbridge.evaluation.cutting.cut_run`)."""
    if not scores:
        return {}
    order = rank(scores, ties=conventions.ties, score_precision=conventions.score_precision)
    if conventions.depth is not None:
        order = order[:conventions.depth]
    if conventions.judged_only:
        order = [doc for doc in order if grades.get(doc, -1) >= 0]
    return {doc: i for i, doc in enumerate(order, start=1)}


def _top(scores: Mapping[str, float], grades: Mapping[str, float], conventions: Settings, k: int) -> list[str]:
    return [doc for doc, r in _ranks(scores, grades, conventions).items() if r <= k]


def _values(query: str, changes: list[MetricChanges], where: list[dict[str, int]]
            ) -> tuple[tuple[str, float, float], ...]:
    """Each metric's ``(metric, a, b)`` of one query (NaN when the query is not paired for that metric)."""
    found = []
    for c, index in zip(changes, where):
        i = index.get(query)
        found.append((c.metric, c.a[i], c.b[i]) if i is not None else (c.metric, math.nan, math.nan))
    return tuple(found)


def _query_diff(query: str, rows: _Rows, values: tuple[tuple[str, float, float], ...], conventions: Settings,
                k: int, moves: int) -> QueryDiff:
    grades = rows.grades[query]
    ra, rb = _ranks(rows.a[query], grades, conventions), _ranks(rows.b[query], grades, conventions)

    def doc(d: str) -> DocChange:
        a, b = ra.get(d), rb.get(d)
        grade = grades.get(d)
        return DocChange(d, None if grade is None else float(grade), a, b, None if a is None or b is None else a - b)

    top_a = [d for d, r in ra.items() if r <= k]
    top_b = [d for d, r in rb.items() if r <= k]
    in_a, in_b = set(top_a), set(top_b)
    entered = [doc(d) for d in top_b if d not in in_a]
    left = [doc(d) for d in top_a if d not in in_b]
    both = [doc(d) for d in top_a if d in in_b and ra[d] != rb[d]]
    both.sort(key=lambda c: (-abs(c.move or 0), c.rank_a or 0))
    return QueryDiff(query, values,
                     entered=tuple(c for c in entered if c.grade is not None),
                     left=tuple(c for c in left if c.grade is not None),
                     unjudged_entered=tuple(c for c in entered if c.grade is None),
                     unjudged_left=tuple(c for c in left if c.grade is None),
                     moves=tuple(both[:moves]))


def _moved(detail: QueryDiff) -> bool:
    return any((detail.entered, detail.left, detail.unjudged_entered, detail.unjudged_left, detail.moves))
