"""What runs in a Spark worker: one bucket of queries evaluated by the fast backend, cut as every evaluation cuts,
summed exactly (:mod:`evalbridge.spark` sends the buckets and reads the rows back on the driver).
"""

from __future__ import annotations

import json
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..metrics.spec import Metric
from ..model.settings import Settings

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["EVALUATED", "MISSING", "RUN_ONLY", "PROBLEM", "SUMMARY", "ORDER", "scored_statuses", "exact_sum",
           "output_schema", "evaluate_bucket"]

#: What a row of the bucket output is (``_status``): a query evaluated, a qrels query absent from
#: the run, a run query absent from the qrels, a problem with the input, a bucket's summary.
EVALUATED, MISSING, RUN_ONLY, PROBLEM, SUMMARY = 0, 1, 2, 3, 4


def scored_statuses(conventions: Settings) -> tuple[int, ...]:
    """The statuses of the rows in the mean: missing queries too when they score 0."""
    return (EVALUATED, MISSING) if conventions.missing_queries == "zero" else (EVALUATED,)


#: Name of the input-order column added to the run when ``ties="input"``.
ORDER = "__evalbridge_order"


def exact_sum(values: np.ndarray) -> Fraction:
    """The exact sum of float64 ``values`` (``float()`` of it is :func:`math.fsum` of them).

    Each value is ``m * 2**(e - 53)`` with an integer ``m`` (``frexp``); the ``m`` of equal ``e``
    are added as int64 in two 26-bit halves (exact for up to 2**36 values), the groups as Python
    ints. Vectorised: a Python step per distinct exponent, not per value.

    Example:
        >>> import math
        >>> import numpy as np
        >>> values = np.array([0.1, 0.2, 0.3, 1e-20])
        >>> float(exact_sum(values)) == math.fsum(values.tolist()), sum(values.tolist()) == math.fsum(values.tolist())
        (True, False)
    """
    import numpy as np

    values = values[values != 0]
    if len(values) == 0:
        return Fraction(0)
    mantissa, exponent = np.frexp(values)
    ints = (mantissa * 2.0 ** 53).astype(np.int64)
    order = np.argsort(exponent, kind="stable")
    exponent, ints = exponent[order], ints[order]
    starts = np.flatnonzero(np.r_[True, exponent[1:] != exponent[:-1]])
    high = np.add.reduceat(ints >> 26, starts).tolist()
    low = np.add.reduceat(ints & ((1 << 26) - 1), starts).tolist()
    exponents = exponent[starts].tolist()
    base: int = exponents[0]
    total = sum(((h << 26) + lo) << (e - base) for h, lo, e in zip(high, low, exponents))
    return Fraction(total) * Fraction(2) ** (base - 53)


def output_schema(n_metrics: int) -> Any:  # noqa: ANN401 - pyspark StructType
    from pyspark.sql.types import ByteType, DoubleType, StringType, StructField, StructType

    return StructType([StructField("query_id", StringType()), StructField("_status", ByteType()),
                       *(StructField(f"m{i}", DoubleType()) for i in range(n_metrics)),
                       StructField("_note", StringType())])


def _note_row(n_metrics: int, status: int, query_id: str | None, note: dict[str, Any]) -> pa.Table:
    import pyarrow as pa

    return pa.table({"query_id": pa.array([query_id], pa.string()), "_status": pa.array([status], pa.int8()),
                     **{f"m{i}": pa.array([None], pa.float64()) for i in range(n_metrics)},
                     "_note": pa.array([json.dumps(note)], pa.string())})


def evaluate_bucket(metrics: tuple[Metric, ...], conventions: Settings, names: tuple[str, str, str, str],
                     qrels: pa.Table, run: pa.Table) -> pa.Table:
    """Every metric of every query of one bucket: one row per query (evaluated, missing from the run,
    run-only) and a summary row (the counts, and the exact sum of each metric as a fraction), or
    one problem row when the bucket's input is bad. Notes travel as JSON in ``_note``."""
    import numpy as np
    import pyarrow as pa

    from ..fast import evaluate_columns
    from ..fast.arrow_input import TableProblem, pair_from_arrow

    query, doc, relevance, score = names
    if ORDER in run.column_names:
        run = run.sort_by(ORDER)
    n_metrics = len(metrics)
    try:
        pair = pair_from_arrow(qrels, run, query=query, doc=doc, relevance=relevance, score=score)
    except TableProblem as problem:
        return _note_row(n_metrics, PROBLEM, problem.query_id,
                         {"side": problem.side, "detail": problem.detail, "fix": problem.fix})
    try:
        columns, removed, emptied = _cut(pair.columns, qrels, run, names, conventions)
    except InputError as error:  # a depth that cuts a group of tied documents under ties="average"
        detail = str(error).removeprefix(f"query {error.query_id!r}: ").removesuffix(f" Fix: {error.fix}")
        return _note_row(n_metrics, PROBLEM, error.query_id, {"side": "run", "detail": detail, "fix": error.fix})
    values = evaluate_columns(columns, metrics, conventions)
    n = (pair.columns.n_queries, len(pair.missing_from_run), len(pair.run_only))
    status = np.repeat(np.array([EVALUATED, MISSING, RUN_ONLY], dtype=np.int8), n)
    scored = np.isin(status, scored_statuses(conventions))
    missing = (_nothing_retrieved(metrics, qrels, query, relevance, pair.missing_from_run)
               if n[1] and conventions.missing_queries == "zero" else {})
    columns, sums = {}, []
    for i, metric in enumerate(metrics):
        filled = np.zeros(len(status), dtype=np.float64)
        filled[:n[0]] = values[metric]
        if missing:
            filled[n[0]:n[0] + n[1]] = missing[metric]
        columns[f"m{i}"] = pa.array(filled, mask=~scored)
        sums.append(str(exact_sum(filled[scored])))
    query_ids = [*pair.columns.query_ids, *pair.missing_from_run, *pair.run_only]
    rows = pa.table({"query_id": pa.array(query_ids, pa.string()),
                     "_status": pa.array(status), **columns, "_note": pa.nulls(len(status), pa.string())})
    summary = {"counts": list(n), "sums": sums, "removed": list(removed), "emptied": emptied}
    return pa.concat_tables([rows, _note_row(n_metrics, SUMMARY, None, summary)])


def _cut(columns: Any, qrels: pa.Table, run: pa.Table, names: tuple[str, str, str, str],
         settings: Settings) -> tuple[Any, tuple[int, int], list[str]]:
    """The bucket's evaluated queries with ``depth`` and ``judged_only`` applied by the cut every evaluation
    makes (:func:`evalbridge.evaluation.cutting.cut_run`, on this bucket's rows), the counts it removed, and the queries
    it left with nothing retrieved (no warning of ids that never meet is about them, as locally)."""
    if (settings.depth is None and not settings.judged_only) or not columns.query_ids:
        return columns, (0, 0), []
    from ..evaluation.cutting import cut_run
    from ..fast import from_mappings
    from ..model.data import Qrels, Run

    query, doc, relevance, score = names
    evaluated = columns.query_ids
    judged: dict[str, dict[str, Any]] = {q: {} for q in evaluated}
    for qid, did, grade in zip(*(qrels[c].to_pylist() for c in (query, doc, relevance))):
        judged.get(str(qid), {})[str(did)] = grade
    ranked: dict[str, dict[str, Any]] = {q: {} for q in evaluated}
    for qid, did, value in zip(*(run[c].to_pylist() for c in (query, doc, score))):  # row order: ties="input"
        ranked.get(str(qid), {})[str(did)] = value
    cut = cut_run(Qrels(judged, copy=False, allow_empty=True), Run(ranked, copy=False, allow_empty=True),
                  settings)
    emptied = [q for q in evaluated if not cut.run[q]]
    return from_mappings(judged, cut.run), (cut.beyond_depth, cut.unjudged), emptied


def _nothing_retrieved(metrics: tuple[Metric, ...], qrels: pa.Table, query: str, relevance: str,
                       missing: list[str]) -> dict[Metric, list[float]]:
    """Each metric of the bucket's qrels queries absent from the run, as :func:`evalbridge.evaluate` scores
    them (:func:`evalbridge.metrics.reference.nothing_retrieved`: 0, and R for ``NumRel``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..metrics.reference import nothing_retrieved

    rows = qrels.filter(pc.is_in(qrels[query], value_set=pa.array(missing, pa.string())))
    grades: dict[str, list[float]] = {q: [] for q in missing}
    for qid, grade in zip(rows[query].to_pylist(), rows[relevance].to_pylist()):
        grades[qid].append(grade)
    return {m: [nothing_retrieved(m.name, m.arguments, m.inputs, grades[q]) for q in missing] for m in metrics}
