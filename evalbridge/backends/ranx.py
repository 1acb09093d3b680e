"""The ranx backend.

Native behaviour (:data:`CONVENTIONS`): ``ranx.Qrels`` silently truncates float grades
(7.5 -> 7); a ``Run`` orders tied scores by insertion order for small tie groups and
arbitrarily (numba argsort) for larger ones, and the raw-dict path reverses insertion order;
``evaluate`` raises when the query sets differ unless ``make_comparable=True`` (then missing
queries score 0); a level suffix ``-lN`` also zeroes lower grades in nDCG. The first call
JIT-compiles for ~30-50 s on a cold numba cache.

The bridged call evalbridge makes uses ranx's raw-dict path, which keeps float grades: both
dicts are built with the same query order (ranx pairs them by position, not by key), ties
are replaced by rank-derived scores, and empty queries get placeholders (ranx rejects them).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from itertools import chain
from operator import methodcaller
from types import ModuleType
from typing import Any, Callable

from ..common.ranking import has_ties
from ..metrics.spec import Metric
from ..model.data import Qrels, Run, rows_of
from ..model.settings import ORDERED_TIES, Settings
from . import _bridge
from ._bridge import NativeConventions, Task
from .base import Backend, Capabilities, Fault

NAME = "ranx"
INSTALL = "pip install ranx"

CONVENTIONS = NativeConventions(
    ties="input", score_precision="float64", missing_queries="zero", empty_qrels="keep", grades="truncate",
    level_scope="all", tie_order="insertion or numba argsort order",
    notes=("Qrels truncates float grades", "ties: insertion order, arbitrary for large tie groups",
           "query sets must match (make_comparable=True: missing queries score 0)",
           "-lN also zeroes lower grades in nDCG", "first call JIT-compiles (~30 s)"))

#: How grades reach the library in the call evalbridge makes ("int": bridged to integers).
BRIDGED_GRADES = "float"

#: Tied scores are re-scored n..1 in the requested order; a library ranks one order, so no ``average``.
TIES = ORDERED_TIES

#: What ranx has beyond the families every library has (:data:`._bridge.COMMON_CAPABILITIES`).
CAPABILITIES: dict[str, Mapping[str, Any]] = {
    "DCG": {"rel": "positive", "gain": ("linear", "exp"), "discount": ("log2",), "gains": "nonnegative"},
    "Hits": {"rel": "positive"},
    "F1": {"rel": "positive"},
    "RBP": {"rel": "positive", "p": "fraction", "weights": ("binary", "raw")},
}
MISSING: dict[str, str] = {}

def _level(metric: Metric) -> float:
    rel = metric.arguments.get("rel")
    return 1 if rel is None else rel


def _batch_zeroed(qrels: Qrels, qid: str, metric: Metric, truncate: bool) -> bool:
    """True when ``qid`` comes at or after a query without a relevant judgement in ranx's batch
    (the qrels' order: ranx evaluates every qrels query, in order)."""
    level = _level(metric)
    for other, grades in qrels.items():
        if not any((int(g) if truncate else g) >= level for g in grades.values()):
            return True
        if other == qid:
            return False
    return False


def _no_nonrelevant(qrels: Qrels, qid: str, metric: Metric, truncate: bool) -> bool:
    """True when ranx sees no judged non-relevant doc for ``qid`` (grades below the level, negative included)."""
    level = _level(metric)
    return not any((int(g) if truncate else g) < level for g in qrels.get(qid, {}).values())


def _nan_when_relevant_retrieved(value: float, qrels: Qrels, qid: str, run: Run, metric: Metric,
                                 truncate: bool) -> float:
    """ranx divides by min(R, N) = 0 for each relevant doc retrieved: NaN when there is one."""
    if not _no_nonrelevant(qrels, qid, metric, truncate):
        return value
    level, grades = _level(metric), qrels.get(qid, {})
    found = any((int(grades[d]) if truncate else grades[d]) >= level for d in run.get(qid, {}) if d in grades)
    return math.nan if found else value


#: What ranx computes in its own way, that a cross-check verifies by emulating it in the reference
#: (:mod:`evalbridge.cross_check.checking`): metric family -> the faults. The bridged call
#: (:func:`compute` with ``native=False``) works around each of them (:func:`_bpref_rows`).
KNOWN_FAULTS: dict[str, tuple[Fault, ...]] = {
    "Bpref": (
        Fault("ranx_bpref_negative",
              "known library fault: ranx's bpref counts negative grades as judged non-relevant (trec_eval skips "
              "them as unjudged)",
              applies=lambda qrels, qid, metric, truncate: any(g < 0 for g in qrels.get(qid, {}).values()),
              qrels=lambda grades: {d: 0 if g < 0 else g for d, g in grades.items()}),
        Fault("ranx_bpref_nan",
              "known library fault: ranx's bpref is NaN for a query without a judged non-relevant doc (0 / 0; "
              "AmenRa/ranx#66)", applies=_no_nonrelevant, value=_nan_when_relevant_retrieved),
        Fault("ranx_bpref_batch",
              "known library fault: ranx's bpref is 0 for a query at or after one without a relevant doc in its "
              "batch (a division by zero stops its numba loop)", applies=_batch_zeroed,
              value=lambda value, qrels, qid, run, metric, truncate:
              0.0 if _batch_zeroed(qrels, qid, metric, truncate) else value),
    ),
}


def _at(task: Task) -> str:
    return f"@{task.k}" if task.k else ""


#: metric family -> ranx metric name (the ``-lN`` suffix is added by :func:`metric_name`).
NATIVE_NAMES: dict[str, Callable[[Task], str]] = {
    "P": lambda t: f"precision@{t.k}",
    "R": lambda t: f"recall@{t.k}",
    "RR": lambda t: "mrr" + _at(t),
    "AP": lambda t: "map" + _at(t),
    "nDCG": lambda t: ("ndcg_burges" if t.gain == "exp" else "ndcg") + _at(t),
    "DCG": lambda t: ("dcg_burges" if t.gain == "exp" else "dcg") + _at(t),
    "Rprec": lambda t: "r-precision",
    "Success": lambda t: "hit_rate" + _at(t),
    "Bpref": lambda t: "bpref",
    "Hits": lambda t: "hits" + _at(t),
    "F1": lambda t: "f1" + _at(t),
    "RBP": lambda t: "rbp." + repr(float(t.metric.get("p")))[2:],
}


def metric_name(task: Task) -> str:
    """The ranx metric for ``task``: ``precision@5``, ``ndcg_burges@10``, ``map@100-l2``.

    >>> from evalbridge.metrics.spec import parse_metric
    >>> metric_name(Task(parse_metric("P(rel=2)@5"), level=2, k=5))
    'precision@5-l2'
    """
    name = NATIVE_NAMES[task.metric.name](task)
    return name if task.level == 1 else f"{name}-l{task.level}"


def _library() -> ModuleType:
    return _bridge.import_library(NAME, "ranx", INSTALL)


def version() -> str:
    return _bridge.library_version("ranx")


def _ranx_order(run: Mapping[str, Mapping[str, float]]) -> dict[str, list[str]]:
    """Each non-empty query's doc ids in the order ranx ranks them when given ``ranx.Run`` objects.

    ``ranx.Run`` sorts on construction and ``make_comparable`` sorts again; numba's argsort is
    not stable beyond 15 elements, so large tie groups end in yet another order. The same two
    numba sorts run on flat arrays (:mod:`._ranx_sort`; building the ``ranx.Run`` costs 30x
    more). ranx sorts every query independently, so any subset of queries gives the same order.
    """
    _library()  # a clear error if ranx (and with it numba) is missing
    import numpy as np

    from ._ranx_sort import ranx_positions

    data = rows_of(run)  # the plain rows inside a Run
    queries = [q for q, docs in data.items() if docs]
    rows = list(map(data.__getitem__, queries))
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, rows), dtype=np.int64, count=len(rows)), out=offsets[1:])
    scores = np.fromiter(chain.from_iterable(map(methodcaller("values"), rows)), dtype=np.float64,
                         count=int(offsets[-1]))
    ordered = list(map(list(chain.from_iterable(rows)).__getitem__, ranx_positions(scores, offsets).tolist()))
    bounds = offsets.tolist()
    return {q: ordered[a:b] for q, a, b in zip(queries, bounds, bounds[1:])}


def native_ranking(run: Run) -> Run:
    """``run`` with every query's documents in the order ranx itself ranks them (see :func:`_ranx_order`)."""
    order = _ranx_order(run)
    rows = {q: {d: scores[d] for d in order.get(q, ())} for q, scores in run.items()}
    return Run(rows, name=run.name, copy=False)  # rows built here: wrapped, not copied again


def _native_scores(run: Run, queries: list[str]) -> dict[str, Mapping[str, float]]:
    """The scores of ``queries`` present in the run, those with ties replaced by ``n..1`` in the
    order ``ranx.Run`` objects give them: ranx's raw-dict path then ranks as the objects do."""
    tied = [q for q in queries if run.get(q) and has_ties(run[q])]
    orders = _ranx_order({q: run[q] for q in tied}) if tied else {}
    return {q: _bridge.rank_scores(orders[q]) if q in orders else run[q] for q in queries if q in run}


def _evaluate(ranx: ModuleType, qrels: Mapping[str, Mapping[str, Any]], run: Mapping[str, Mapping[str, float]],
              names: list[str], **options: Any) -> dict[str, Any]:
    """``ranx.evaluate`` per query: metric name -> one value per query, in the run's query order
    (``options``: ranx's, e.g. ``make_comparable``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings on every call
        # With one metric ranx 0.3.21 looks its result up under the name without "@k" (KeyError),
        # so it always gets at least two.
        result: dict[str, Any] = ranx.evaluate(qrels, run, names if len(names) > 1 else names * 2,
                                               return_mean=False, save_results_in_run=False, **options)
    return result


def _bpref_rows(qrels: dict[str, dict[str, Any]], level: int) -> tuple[list[str], dict[str, dict[str, Any]], list[str]]:
    """The queries and judgements of a bridged bpref call, and notes on what was changed.

    ranx's bpref differs from trec_eval's in three ways (:data:`KNOWN_FAULTS`), each bridged here:
    negative grades, which ranx counts as judged non-relevant, are dropped (trec_eval skips them as
    unjudged); a query with no judged non-relevant document, where ranx divides 0 by 0, gets one
    non-relevant judgement no run retrieves (it changes nothing in trec_eval's formula); a query
    with no relevant document is left out of the call and scored 0, since in ranx it zeroes the
    queries after it in the batch.
    """
    order, rows, negative, padded, skipped = [], {}, 0, 0, 0
    for qid, grades in qrels.items():
        row = {doc: g for doc, g in grades.items() if g >= 0}
        negative += len(grades) - len(row)
        if not any(g >= level for g in row.values()):
            skipped += 1
            continue
        if not any(g < level for g in row.values()):
            row[_bridge.PLACEHOLDER_JUDGED] = 0
            padded += 1
        order.append(qid)
        rows[qid] = row
    notes = []
    if negative:
        notes.append(f"{negative} negative grades dropped (ranx counts them as judged non-relevant, trec_eval as unjudged)")
    if padded:
        notes.append(f"{padded} queries without a judged non-relevant doc given one (ranx gives NaN there)")
    if skipped:
        notes.append(f"{skipped} queries without a relevant doc scored 0 outside the call (in ranx they zero the "
                     f"queries after them)")
    return order, rows, notes


def _plan(metric: Metric, info: _bridge.GradeInfo, depth: int, native: bool) -> tuple[Task, list[str]]:
    binary_rbp = metric.name == "RBP" and metric.get("weights") == "binary"
    return _bridge.plan(NAME, metric, info, grades="truncate" if native else BRIDGED_GRADES, native_exp=True,
                        graded_level=True, rr_cutoff=True, success_cutoff=True, depth=depth,
                        binarise="ranx's rbp weighs documents by their grade" if binary_rbp else None,
                        cut_families=frozenset({"RBP"}))


def _call(ranx: ModuleType, group: _bridge.Group, batch: _bridge.Batch) -> dict[Metric, dict[str, float]]:
    """One ``ranx.evaluate``; ranx pairs qrels and run by position, in the run's query order."""
    names = {task.metric: metric_name(task) for task in group.tasks}
    result = _evaluate(ranx, batch.qrels, batch.run, list(dict.fromkeys(names.values())))
    return {metric: dict(zip(batch.run, map(float, result[name]))) for metric, name in names.items()}


def _batches(library: _bridge.Library, request: _bridge.Request) -> Callable[[_bridge.Group], _bridge.Batch]:
    """The batch of each group: bpref's own (``group.extra``, see :func:`_bpref_rows`), the native one, or
    ranx's raw-dict path with every bridge (no all-negative guard: ranx does not crash on those)."""
    qrels, run, conventions, queries = request.qrels, request.run, request.conventions, request.queries
    if request.native:
        # What ranx.Qrels/ranx.Run objects with make_comparable=True give, through the raw-dict path
        # (building the objects costs 3-4x the evaluation): grades truncated as ranx.Qrels does
        # (before any bridge, which then sees the grades ranx would), ties in the objects' order,
        # every qrels query scored (a query missing from the run gets a placeholder: 0).
        # tests/test_backends.py holds it to the objects.
        truncated = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
        native_scores = _native_scores(run, list(qrels))
        order = list(qrels)

        def native(group: _bridge.Group) -> _bridge.Batch:
            run_dict, _ = _bridge.prepare_run(native_scores, order, requested=CONVENTIONS.conventions, native=None,
                                              cut=group.cut, placeholders=True)
            return _bridge.Batch(_bridge.prepare_qrels(truncated, group.grades, order, placeholders=True), run_dict,
                                 order)
        return native

    def bridged(group: _bridge.Group) -> _bridge.Batch:
        if not group.extra:
            return _bridge.bridged_batch(request, group, guard_negative=False)
        prepared = _bridge.prepare_qrels(qrels, group.grades, queries, placeholders=True)
        order, qrels_dict, notes = _bpref_rows(prepared, group.level)
        run_dict, rescored = _bridge.prepare_run(run, order, requested=conventions, native=CONVENTIONS, cut=group.cut,
                                                 placeholders=True)
        return _bridge.Batch(qrels_dict, run_dict, queries, rescored, tuple(notes), default=0.0)
    return bridged


LIBRARY = _bridge.Library(
    name=NAME, load=_library, native=lambda metric: CONVENTIONS, plan=_plan, call=_call,
    group=lambda task, native: task.metric.name == "Bpref" and not native,  # bpref: calls of its own
    batches=_batches, guard_negative=False, empty_rankings=True,
    empty_note="empty queries given a placeholder (ranx rejects empty queries)")


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = Settings(), *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values from ranx.

    Args:
        native: False (what :func:`evalbridge.evaluate` uses): ranx's raw-dict path with
            float grades kept and every bridge applied, for the queries in both inputs.
            True: what a ranx user gets from ``ranx.Qrels``/``ranx.Run`` objects and
            ``make_comparable=True`` (float grades truncated, ties in ranx's order, queries
            missing from the run scored 0), computed through the raw-dict path.
    """
    return _bridge.compute(LIBRARY, qrels, run, metrics, conventions, native=native)


BACKEND = Backend(name=NAME, version=version, library="ranx", conventions=CONVENTIONS,
                  capabilities=Capabilities({**_bridge.COMMON_CAPABILITIES, **CAPABILITIES}, MISSING), ties=TIES,
                  compute=compute, bridged_grades=BRIDGED_GRADES, known_faults=KNOWN_FAULTS,
                  native_ranking=native_ranking)
