"""The public verb ``evaluate``, and the preparation every verb shares: coerce inputs, check their ids,
resolve settings, ask a backend, apply the missing-query policy once.

``evaluate`` and :func:`evalbridge.crosscheck` prepare their inputs with the same functions below.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from itertools import filterfalse
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .backends import get_backend, unsupported
from .errors import InputError, UnsupportedMetricError
from .metrics.spec import Metric, parse_metrics
from .metrics.resolution import check_max_grade, needs_max_grade, relevance_level, resolve_metric
from .model import Conventions, Qrels, Run, check_level
from .progress import Steps, steps

if TYPE_CHECKING:
    from .results import Results

__all__ = ["evaluate", "as_qrels", "as_run", "check_compatible", "relevance_level", "needs_max_grade",
           "resolve_metric", "check_max_grade", "check_supported", "fill_missing"]


def as_qrels(obj: Any, *, copy: bool = True) -> Qrels:
    """``obj`` as :class:`Qrels`: a Qrels, a dict of dicts, or any format :mod:`evalbridge.io.objects` reads.
    ``copy=False``: a dict of dicts is wrapped, not copied (for use within one call)."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Run):
        return Qrels(obj, copy=copy)
    from .io import to_qrels

    return to_qrels(obj)


def as_run(obj: Any, *, copy: bool = True) -> Run:
    """``obj`` as :class:`Run`: a Run, a dict of dicts, or any format :mod:`evalbridge.io.objects` reads.
    ``copy=False``: a dict of dicts is wrapped, not copied (for use within one call)."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Qrels):
        return Run(obj, copy=copy)
    from .io import to_run

    return to_run(obj)


def _examples(ids: Iterable[str], n: int = 3) -> str:
    ids = list(ids)
    shown = ", ".join(map(repr, ids[:n]))
    return shown + (f" (+{len(ids) - n} more)" if len(ids) > n else "")


def check_compatible(qrels: Qrels, run: Run) -> None:
    """Refuse id sets that cannot be what the user meant: int vs str ids, or no query in common."""
    for what, qk, rk in (("query", qrels.query_id_kind, run.query_id_kind),
                         ("doc", qrels.doc_id_kind, run.doc_id_kind)):
        if qk and rk and qk != rk:
            raise InputError(
                f"{what} ids are {'/'.join(qk)} in the qrels but {'/'.join(rk)} in the run (e.g. 1 vs '1'); "
                f"evalbridge does not guess that they are the same ids.",
                fix=f"give both the same id type, e.g. convert every {what} id with str().")
    if not any(qid in run for qid in qrels):
        raise InputError(
            f"no query id is in both the qrels ({_examples(qrels)}) and the run ({_examples(run)}).",
            fix="check that both files describe the same topics, with the same id spelling.")


def check_supported(backend: str, metrics: Iterable[Metric], qrels: Qrels, conventions: Conventions) -> None:
    """Refuse, in one error naming every reason, the metrics backend ``backend`` cannot compute exactly
    on these qrels under these conventions (see :func:`evalbridge.backends.unsupported`)."""
    module = get_backend(backend)
    reasons = {m: r for m in metrics if (r := unsupported(module, m, qrels, conventions=conventions)) is not None}
    if reasons:
        lines = "; ".join(f"{m}: {r.rstrip('.')}" for m, r in reasons.items())
        raise UnsupportedMetricError(f"backend {backend!r} cannot compute {lines}. "
                                     f"Fix: use backend='reference', or run `evalbridge metrics` for who supports what.")


def fill_missing(values: dict[Metric, dict[str, float]], qrels: Qrels, policy: str) -> None:
    """Apply the missing-query policy in place: ``zero`` gives every qrels query absent from the values 0."""
    if policy != "zero":
        return
    order = list(qrels)
    seen: list[str] | None = None  # keys found equal to ``order``: others with the same id objects compare by identity
    for metric, per_query in values.items():
        keys = list(per_query)
        if keys == seen or (len(keys) == len(order) and keys == order):  # nothing to fill or reorder
            seen = keys
            continue
        values[metric] = {q: per_query.get(q, 0.0) for q in order}


def evaluate(qrels: Any, run: Any, metrics: str | Metric | Iterable[str | Metric], *,
             backend: str = "auto", min_relevance: float | None = None, ties: str = "docid_desc",
             score_precision: str = "float64", missing_queries: str = "zero",
             progress: bool = False) -> Results:
    """Evaluate a run against relevance judgements.

    Args:
        qrels: :class:`Qrels`, ``{query_id: {doc_id: grade}}`` or any input
            :func:`evalbridge.io.objects.to_qrels` reads (DataFrame, file path, ranx...).
        run: :class:`Run`, ``{query_id: {doc_id: score}}`` or any input ``to_run`` reads.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``).
        backend: ``auto`` (default: the pure-Python ``reference`` for small inputs, the numpy
            engine ``fast`` for large ones; the provenance names the one used), or another
            name in :data:`evalbridge.backends.BACKENDS`, or ``spark``: Spark DataFrames
            (``query_id, doc_id, relevance`` / ``score``) are evaluated on Spark by
            :func:`evalbridge.spark.evaluate`, whatever ``auto`` would choose. With ``auto``/``fast``, large TREC
            files are read with pyarrow straight into columns (the strict reader is used
            whenever that path meets anything unusual, so errors still name ``file:line``).
        min_relevance: relevance level of binary metrics that do not set ``rel``
            (default: the qrels' own ``min_relevance``, else 1). nDCG ignores it, as trec_eval does.
        ties: how tied scores are ranked: ``docid_desc`` (trec_eval), ``docid_asc`` or ``input``
            (the order the documents were given in); or ``average``: every metric is its
            expected value over all orders of each group of tied documents, computed exactly
            (:mod:`evalbridge.metrics.tie_aware`), so no tie rule decides the value. ``average``
            is computed by the reference (``auto`` chooses it); other backends refuse it.
        score_precision: ``float64`` or ``float32`` (trec_eval <= 9).
        missing_queries: ``zero`` scores qrels queries absent from the run as 0;
            ``drop`` leaves them out of the mean. Both are counted in the provenance.
        progress: show a progress bar on stderr (reading, computing, assembling) when it is a
            terminal; never drawn on a pipe, a file or in a notebook (see :mod:`evalbridge.progress`).

    Returns:
        :class:`~evalbridge.results.Results`, whatever was asked.

    Example:
        >>> res = evaluate({"q1": {"d1": 1, "d2": 1}}, {"q1": {"d1": 0.9, "d3": 0.5}}, ["P@2", "mrr"])
        >>> res["P@2"], res["RR"]
        (0.5, 1.0)
    """
    with steps(3, enabled=progress) as bar:
        bar.step("reading the qrels and the run")
        return _evaluate(qrels, run, metrics, bar, backend=backend, min_relevance=min_relevance, ties=ties,
                         score_precision=score_precision, missing_queries=missing_queries)


def _evaluate(qrels: Any, run: Any, metrics: str | Metric | Iterable[str | Metric], bar: Steps, *, backend: str,
              min_relevance: float | None, ties: str, score_precision: str, missing_queries: str):  # noqa: ANN202
    from .results import Provenance, Results

    if backend == "spark" or _is_spark_frame(qrels) or _is_spark_frame(run):
        return _evaluate_on_spark(qrels, run, metrics, backend=backend, min_relevance=min_relevance, ties=ties,
                                  score_precision=score_precision, missing_queries=missing_queries)
    conventions = Conventions(ties=ties, score_precision=score_precision, missing_queries=missing_queries)
    # columns only for the fast engine, hence only under a tie policy it follows
    columnar = _read_columnar(qrels, run, backend) if conventions.ties in get_backend("fast").TIES else None
    # The rows are wrapped, not copied: nothing built from them outlives this call.
    qrels, run = columnar if columnar is not None else (as_qrels(qrels, copy=False), as_run(run, copy=False))
    if backend == "auto":
        from .backends.auto import choose

        backend = choose(qrels, run, ties=conventions.ties)
    check_compatible(qrels, run)
    level = relevance_level(qrels, min_relevance)
    asked = parse_metrics(metrics)
    top = qrels.max_grade if any(map(needs_max_grade, asked)) else None  # a pass over every grade
    wanted = list(dict.fromkeys(resolve_metric(m, level=level, max_grade=top) for m in asked))
    for metric in wanted:
        check_max_grade(metric, qrels)
    check_supported(backend, wanted, qrels, conventions)
    module = get_backend(backend)
    bar.step(f"computing {len(wanted)} metric{'s' if len(wanted) > 1 else ''} with {backend}")
    values, bridges = module.compute(qrels, run, wanted, conventions)

    bar.step("assembling the results")
    missing = tuple(filterfalse(run.keys().__contains__, qrels))
    fill_missing(values, qrels, conventions.missing_queries)
    provenance = Provenance(
        backend=backend, backend_version=module.version(), conventions=conventions, relevance_level=level,
        queries_evaluated=len(values[wanted[0]]), missing_from_run=missing,
        ignored_run_only=tuple(filterfalse(qrels.keys().__contains__, run)), bridges=tuple(bridges),
        evalbridge_version=__version__)
    return Results(metrics=tuple(wanted), values=values, provenance=provenance, max_grade=top)


def _read_columnar(qrels: Any, run: Any, backend: str):  # noqa: ANN202 - (QrelsView, RunView) | None
    """Two TREC file paths read by pyarrow into columns for the fast engine, or ``None``."""
    if backend not in ("auto", "fast") or not all(isinstance(x, (str, os.PathLike)) for x in (qrels, run)):
        return None
    from .io import resolve
    from .io._arrow_trec import read_trec_views

    if resolve(qrels, kind="qrels").name != "trec" or resolve(run, kind="run").name != "trec":
        return None
    return read_trec_views(qrels, run, large_only=backend == "auto")


# --------------------------------------------------------------------------- Spark DataFrames
# Kept apart: everything above works on data in memory; Spark DataFrames go to evalbridge.spark whole.

def _is_spark_frame(obj: Any) -> bool:
    """True for a Spark DataFrame (classic or Spark Connect), told by its class's module: pyspark is not imported."""
    return type(obj).__module__.startswith("pyspark.sql")


def _evaluate_on_spark(qrels: Any, run: Any, metrics: str | Metric | Iterable[str | Metric], *, backend: str,
                       **options: Any):  # noqa: ANN202 - Results
    """:func:`evalbridge.spark.evaluate`'s Results, its cached table released; an error naming
    ``evalbridge.spark.evaluate`` when the per-query table is too large to collect."""
    if backend not in ("auto", "spark"):
        raise InputError(f"Spark DataFrames are evaluated by the Spark engine; backend={backend!r} computes in "
                         f"memory.", fix="leave backend='auto' (or 'spark'), or bring the DataFrames to the driver "
                                         "first (e.g. .toPandas()).")
    from . import spark

    evaluation = spark.evaluate(qrels, run, metrics, **options)
    try:
        return evaluation.require_results()
    finally:
        evaluation.unpersist()
