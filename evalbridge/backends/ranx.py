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

import warnings
from collections.abc import Mapping, Sequence
from types import ModuleType
from itertools import chain
from operator import methodcaller
from typing import Any, Callable

from ..ranking import has_ties
from ..metrics.spec import Metric
from ..model import ORDERED_TIES, Conventions, Qrels, Run
from . import _bridge
from ._bridge import GradeKey, NativeConventions, Task

NAME = "ranx"
INSTALL = "pip install ranx"

CONVENTIONS = NativeConventions(
    ties="input", score_precision="float64", missing_queries="zero", empty_qrels="keep", grades="truncate",
    level_scope="all",
    notes=("Qrels truncates float grades", "ties: insertion order, arbitrary for large tie groups",
           "query sets must match (make_comparable=True: missing queries score 0)",
           "-lN also zeroes lower grades in nDCG", "first call JIT-compiles (~30 s)"))

#: How grades reach the library in the call evalbridge makes ("int": bridged to integers).
BRIDGED_GRADES = "float"

#: Tied scores are re-scored n..1 in the requested order; a library ranks one order, so no ``average``.
TIES = ORDERED_TIES

CAPABILITIES = {
    "P": {"rel": "positive"},
    "R": {"rel": "positive"},
    "RR": {"rel": "positive"},
    "AP": {"rel": "positive", "norm": ("R",), "weights": ("binary",)},
    "nDCG": {"rel": "positive", "gain": ("linear", "exp"), "ideal": ("qrels",), "discount": ("log2",),
             "gains": "nonnegative"},
    "DCG": {"rel": "positive", "gain": ("linear", "exp"), "discount": ("log2",), "gains": "nonnegative"},
    "Rprec": {"rel": "positive"},
    "Success": {"rel": "positive"},
    "Bpref": {"rel": "positive"},
    "Hits": {"rel": "positive"},
    "F1": {"rel": "positive"},
    "RBP": {"rel": "positive", "p": "fraction", "weights": ("binary", "raw")},
}
MISSING: dict[str, str] = {}

#: What ranx computes in its own way, that a cross-check verifies by emulating it in the reference
#: (:mod:`evalbridge.cross_check`): metric family -> the faults, by name. The bridged call
#: (:func:`compute` with ``native=False``) works around each of them.
KNOWN_FAULTS: dict[str, tuple[str, ...]] = {
    "Bpref": ("ranx_bpref_negative", "ranx_bpref_nan", "ranx_bpref_batch"),
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

    data = getattr(run, "_data", run)  # the plain rows inside a Run
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba type-safety warnings on every call
        # With one metric ranx 0.3.21 looks its result up under the name without "@k" (KeyError),
        # so it always gets at least two.
        result: dict[str, Any] = ranx.evaluate(qrels, run, names if len(names) > 1 else names * 2, return_mean=False,
                               save_results_in_run=False, **options)
    return result


def _bpref_rows(qrels: dict[str, dict[str, float]],
                level: int) -> tuple[list[str], dict[str, dict[str, float]], list[str]]:
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


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Conventions = Conventions(), *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values from ranx.

    Args:
        native: False (what :func:`evalbridge.evaluate` uses): ranx's raw-dict path with
            float grades kept and every bridge applied, for the queries in both inputs.
            True: what a ranx user gets from ``ranx.Qrels``/``ranx.Run`` objects and
            ``make_comparable=True`` (float grades truncated, ties in ranx's order, queries
            missing from the run scored 0), computed through the raw-dict path.
    """
    ranx = _library()
    info = _bridge.GradeInfo.of(qrels)
    queries = _bridge.common_queries(qrels, run)
    notes: list[str] = []
    groups: dict[tuple[GradeKey, int, int | None, bool], list[Task]] = {}
    for metric in metrics:
        binary_rbp = metric.name == "RBP" and metric.get("weights") == "binary"
        task, more = _bridge.plan(NAME, metric, info, grades="truncate" if native else BRIDGED_GRADES, native_exp=True,
                                  graded_level=True, rr_cutoff=True, success_cutoff=True, depth=_bridge.depth(run),
                                  binarise="ranx's rbp weighs documents by their grade" if binary_rbp else None,
                                  cut_families=frozenset({"RBP"}))
        notes += more
        # bpref gets calls of its own, where its bridges apply (see _bpref_rows)
        groups.setdefault((*task.group, metric.name == "Bpref" and not native), []).append(task)
    values: dict[Metric, dict[str, float]] = {m: {} for m in metrics}
    rescored = 0
    if native:
        # What ranx.Qrels/ranx.Run objects with make_comparable=True give, through the raw-dict path
        # (building the objects costs 3-4x the evaluation): grades truncated as ranx.Qrels does
        # (before any bridge, which then sees the grades ranx would), ties in the objects' order,
        # every qrels query scored (a query missing from the run gets a placeholder: 0).
        # tests/test_backends.py holds it to the objects.
        truncated = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
        native_scores = _native_scores(run, list(qrels))
    for (grades, level, cut, bpref), members in groups.items():
        names = {task.metric: metric_name(task) for task in members}
        unique = list(dict.fromkeys(names.values()))
        if bpref:
            qrels_dict = _bridge.prepare_qrels(qrels, grades, queries, placeholders=True)
            order, qrels_dict, more = _bpref_rows(qrels_dict, level)
            notes += [f"{task.metric}: {note}" for task in members for note in more]
            run_dict, count = _bridge.prepare_run(run, order, requested=conventions, native=CONVENTIONS, cut=cut,
                                                  placeholders=True)
            rescored = max(rescored, count)
            result = _evaluate(ranx, qrels_dict, run_dict, unique) if order else {n: [] for n in unique}
            for metric, name in names.items():
                got = dict(zip(order, map(float, result[name])))
                values[metric] = {q: got.get(q, 0.0) for q in queries}
            continue
        if native:
            order = list(qrels)
            qrels_dict = _bridge.prepare_qrels(truncated, grades, order, placeholders=True)
            run_dict, _ = _bridge.prepare_run(native_scores, order, requested=CONVENTIONS.conventions, native=None,
                                              cut=cut, placeholders=True)
            result = _evaluate(ranx, qrels_dict, run_dict, unique) if order else {n: [] for n in unique}
        else:
            qrels_dict = _bridge.prepare_qrels(qrels, grades, queries, placeholders=True)
            run_dict, count = _bridge.prepare_run(run, queries, requested=conventions, native=CONVENTIONS, cut=cut,
                                                  placeholders=True)
            rescored = max(rescored, count)
            result = _evaluate(ranx, qrels_dict, run_dict, unique) if queries else {n: [] for n in unique}
            order = queries
        for metric, name in names.items():
            values[metric] = {q: float(v) for q, v in zip(order, result[name]) if q in qrels}
    if rescored:
        notes.append(f"scores replaced by rank-derived values n..1 in {rescored} queries with tied scores "
                     f"(order: ties {conventions.ties}, {conventions.score_precision})")
    if not native and any(not qrels[q] or not run[q] for q in queries):
        notes.append("empty queries given a placeholder (ranx rejects empty queries)")
    return values, _bridge.merge_notes(notes)
