"""The public verb ``evaluate``, and the preparation every verb shares: coerce inputs, check their ids,
cut the run, resolve the metrics, choose the backend (:func:`prepare`), then ask it and apply the
missing-query policy once.

``evaluate`` and :func:`evalbridge.crosscheck` call :func:`prepare`; the Spark engine, whose inputs
are DataFrames, shares its metric step (:func:`evalbridge.metrics.resolution.resolve_metrics`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from itertools import filterfalse
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .backends import get_backend, unsupported
from .errors import InputError, UnsupportedMetricError
from .metrics.requests import MetricRequest, MetricsArg, metric_requests
from .metrics.spec import Metric
from .metrics.resolution import Resolved, resolve_metrics
from .model import Conventions, Qrels, Run, check_level, rows_of
from .matching import probe, unmatched
from .progress import Steps, steps
from .ranking import rank, rank_groups
from .wording import option

if TYPE_CHECKING:
    from .results import Results

__all__ = ["evaluate", "prepare", "Prepared", "as_qrels", "as_run", "check_compatible", "check_supported",
           "fill_missing", "cut_run", "Cut", "empty_notes",
           "without_relevant", "drop_queries"]


def as_qrels(obj: Any, *, copy: bool = True, prefer_columns: bool = False) -> Qrels:
    """``obj`` as :class:`Qrels`: a Qrels, a dict of dicts, or anything the format registry reads
    (:func:`evalbridge.io.to_qrels`, with ``prefer_columns``). ``copy=False``: a dict of dicts is wrapped,
    not copied (for use within one call). An empty mapping is accepted (an evaluation over nothing,
    which its provenance says)."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Run):
        return Qrels(obj, copy=copy, allow_empty=True)
    from .io import to_qrels

    return to_qrels(obj, prefer_columns=prefer_columns)


def as_run(obj: Any, *, copy: bool = True) -> Run:
    """``obj`` as :class:`Run`: a Run, a dict of dicts, or anything the format registry reads
    (:func:`evalbridge.io.to_run`). ``copy=False``: a dict of dicts is wrapped, not copied. An empty
    mapping is accepted: a run that retrieved nothing, every qrels query missing from it."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Qrels):
        return Run(obj, copy=copy, allow_empty=True)
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
                fix=f"give both the same id type, e.g. convert every {what} id with str(), or read both with ids='str'.")
    if len(qrels) and len(run) and not any(qid in run for qid in qrels):  # empty inputs: see empty_notes
        raise InputError(
            f"no query id is in both the qrels ({_examples(qrels)}) and the run ({_examples(run)}).",
            fix="check that both files describe the same topics, with the same id spelling.")


def check_supported(backend: str, metrics: Iterable[Metric], qrels: Qrels, conventions: Conventions) -> None:
    """Refuse, in one error naming every reason, the metrics backend ``backend`` cannot compute exactly
    on these qrels under these conventions (see :func:`evalbridge.backends.unsupported`)."""
    declared = get_backend(backend)
    reasons = {m: r for m in metrics if (r := unsupported(declared, m, qrels, conventions=conventions)) is not None}
    if reasons:
        lines = "; ".join(f"{m}: {r.rstrip('.')}" for m, r in reasons.items())
        raise UnsupportedMetricError(f"backend {backend!r} cannot compute {lines}. "
                                     f"Fix: use backend='reference', or run `evalbridge metrics` for who supports what.")


@dataclass(frozen=True)
class Cut:
    """The run as the metrics see it (:func:`cut_run`), and what was removed to get it."""

    run: Run
    beyond_depth: int = 0
    unjudged: int = 0


def cut_run(qrels: Qrels, run: Run, conventions: Conventions) -> Cut:
    """Apply ``depth`` and ``judged_only`` once, before any backend, as trec_eval applies ``-M`` and ``-J``.

    Each evaluated query's ranking (under ``conventions``' tie rule and precision) is cut after
    ``depth`` documents, then, with ``judged_only``, loses every document without a judgement or
    with a negative grade. What remains keeps its scores and input order, so any backend ranks it
    as before; the counts of removed documents go to the provenance. Queries absent from the qrels
    are left as they are (they are ignored, and counted as such).

    Example:
        >>> qrels = Qrels({"q": {"a": 1, "b": -1, "c": 0}})
        >>> cut = cut_run(qrels, Run({"q": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}}), Conventions(judged_only=True, depth=3))
        >>> dict(cut.run["q"]), cut.beyond_depth, cut.unjudged
        ({'a': 4.0}, 1, 2)
    """
    depth, judged_only = conventions.depth, conventions.judged_only
    if depth is None and not judged_only:
        return Cut(run)
    rows: dict[str, Mapping[str, float]] = {}
    beyond = unjudged = 0
    for qid, scores in run.items():
        grades = qrels.get(qid)
        if grades is None:
            rows[qid] = scores
            continue
        kept = scores
        if depth is not None and len(scores) > depth:
            top = _top(scores, depth, conventions, qid)
            kept = {doc: score for doc, score in scores.items() if doc in top}
            beyond += len(scores) - depth
        if judged_only:
            before = len(kept)
            kept = {doc: score for doc, score in kept.items() if grades.get(doc, -1) >= 0}
            unjudged += before - len(kept)
        rows[qid] = kept
    return Cut(Run(rows, name=run.name, source=run.source, allow_empty=True), beyond, unjudged)


def _top(scores: Mapping[str, float], depth: int, conventions: Conventions, qid: str) -> set[str]:
    """The ``depth`` best documents of one query. Under ``ties="average"`` no order is chosen: the cut
    must fall between two tie groups (then every order keeps the same documents), else it is refused."""
    if conventions.ties != "average":
        return set(rank(scores, ties=conventions.ties, score_precision=conventions.score_precision)[:depth])
    top: set[str] = set()
    for group in rank_groups(scores, score_precision=conventions.score_precision):
        if len(top) + len(group) > depth:
            if len(top) < depth:
                raise InputError(
                    f"depth={depth} cuts a group of {len(group)} documents tied at ranks {len(top) + 1}-"
                    f"{len(top) + len(group)}: which of them stay would depend on an order, and ties='average' "
                    f"averages over every order of the metrics, not of the cut.", query_id=qid,
                    fix=f"use depth={len(top)} or {len(top) + len(group)} (the edges of that group), or a tie rule "
                        f"(ties='docid_desc', as trec_eval -M).")
            break
        top.update(group)
    return top


def empty_notes(qrels: Qrels, run: Run, policy: str) -> tuple[str, ...]:
    """What the provenance says of an evaluation over an empty input (nothing otherwise)."""
    if not len(qrels):
        return ("the qrels hold no query: nothing was evaluated, every mean is NaN",)
    if not len(run):
        return ("the run holds no query: every qrels query is missing from it and "
                + ("scores 0" if policy == "zero" else "is left out, so every mean is NaN"),)
    return ()


def fill_missing(values: dict[Metric, dict[str, float]], qrels: Qrels, policy: str) -> None:
    """Apply the missing-query policy in place: under ``zero`` every qrels query absent from the values is
    scored as a query that retrieved nothing (trec_eval ``-c``): 0 for every metric of the ranking, and its
    judgements' own count for ``NumRel`` (R, as trec_eval prints ``num_rel``), by the reference functions."""
    if policy != "zero":
        return
    order = list(qrels)
    seen: list[str] | None = None  # keys found equal to ``order``: others with the same id objects compare by identity
    empty: dict[str, dict[Metric, float]] = {}
    for metric, per_query in values.items():
        keys = list(per_query)
        if keys == seen or (len(keys) == len(order) and keys == order):  # nothing to fill or reorder
            seen = keys
            continue
        values[metric] = {q: per_query[q] if q in per_query else _nothing_retrieved(metric, qrels, q, empty)
                          for q in order}


def _nothing_retrieved(metric: Metric, qrels: Qrels, qid: str, cache: dict[str, dict[Metric, float]]) -> float:
    """``metric`` of query ``qid`` when nothing was retrieved (:func:`evalbridge.metrics.reference.nothing_retrieved`)."""
    from .metrics.reference import nothing_retrieved

    per_metric = cache.setdefault(qid, {})
    if metric not in per_metric:
        per_metric[metric] = nothing_retrieved(metric.name, metric.arguments, metric.inputs, list(qrels[qid].values()))
    return per_metric[metric]


@dataclass(frozen=True)
class Prepared:
    """One evaluation ready for a backend (:func:`prepare`).

    Attributes:
        qrels: the judgements, as :class:`Qrels`.
        run: the run as the metrics see it (``depth`` and ``judged_only`` applied).
        cut: what was removed from the run to get it (:class:`Cut`).
        resolved: the metrics as computed, with the relevance level and top grade
            (:class:`~evalbridge.metrics.resolution.Resolved`).
        backend: the backend that computes them (``auto`` decided: ``reference`` or ``fast``).
    """

    qrels: Qrels
    run: Run
    cut: Cut
    resolved: Resolved
    backend: str


def prepare(qrels: Any, run: Any, requests: tuple[MetricRequest, ...], *, backend: str,
            min_relevance: float | None, conventions: Conventions) -> Prepared:
    """The preparation every verb that evaluates in memory shares, in one order: coerce both inputs
    (the rows wrapped, not copied: nothing built from them outlives the verb's call; files and tables read
    by the format registry, large ones into columns, the qrels too when the run is read into columns), check
    their ids, cut the run (:func:`cut_run`), decide ``auto`` (:func:`evalbridge.backends.auto.choose`,
    from the cut run), resolve the metrics (:func:`~evalbridge.metrics.resolution.resolve_metrics`) and
    refuse those the backend cannot compute exactly (:func:`check_supported`).

    Example:
        >>> from evalbridge.metrics.requests import metric_requests
        >>> ready = prepare({"q": {"a": 2}}, {"q": {"a": 0.5, "b": 0.1}}, metric_requests("P@1"), backend="auto",
        ...                 min_relevance=2, conventions=Conventions(depth=1))
        >>> ready.backend, [str(m) for m in ready.resolved.metrics], ready.cut.beyond_depth
        ('reference', ['P(rel=2)@1'], 1)
    """
    if not isinstance(run, Mapping):  # a path: not one holding its own judgements (a RAG log...)
        from .io.registry import check_not_beside_qrels

        check_not_beside_qrels(run)
    qrels = as_qrels(qrels, copy=False, prefer_columns=_read_into_columns(run))
    run = as_run(run, copy=False)
    check_compatible(qrels, run)
    cut = cut_run(qrels, run, conventions)
    if backend == "auto":
        from .backends.auto import choose

        backend = choose(qrels, cut.run, ties=conventions.ties)
    resolved = resolve_metrics(qrels, requests, min_relevance=min_relevance)
    check_supported(backend, resolved.metrics, qrels, conventions)
    return Prepared(qrels, cut.run, cut, resolved, backend)


def without_relevant(qrels: Qrels, level: float, policy: str = "zero") -> tuple[str, ...]:
    """The qrels queries with no judgement at or above ``level``, in qrels order (the ``no_relevant`` policy's
    queries); with ``policy="error"``, an InputError naming them when there is one."""
    table = qrels.columnar
    if table is None:
        found = tuple(q for q, docs in rows_of(qrels).items() if not docs or max(docs.values()) < level)
    else:
        import numpy as np

        relevant = np.bincount(table.codes()[table.values >= level], minlength=len(table.query_ids))
        found = tuple(table.query_ids[i] for i in np.flatnonzero(relevant == 0).tolist())
    if found and policy == "error":
        raise InputError(
            f"{len(found)} of {len(qrels)} qrels quer{'y has' if len(found) == 1 else 'ies have'} no judgement at or "
            f"above the relevance level {level:g} ({_examples(found)}), and no_relevant is 'error'.",
            fix=f"judge a relevant document for each, or {option('no_relevant', 'drop')} to leave them out of the "
                f"means ({option('no_relevant', 'zero')}: score them 0).")
    return found


def drop_queries(values: dict[Metric, dict[str, float]], queries: Iterable[str]) -> None:
    """Leave ``queries`` out of every metric's values, in place (the ``no_relevant="drop"`` policy)."""
    gone = set(queries)
    if gone:
        for metric, per_query in values.items():
            values[metric] = {q: v for q, v in per_query.items() if q not in gone}


def evaluate(qrels: Any, run: Any, metrics: MetricsArg, *,
             backend: str = "auto", min_relevance: float | None = None, ties: str = "docid_desc",
             score_precision: str = "float64", missing_queries: str = "zero", judged_only: bool = False,
             depth: int | None = None, no_relevant: str = "zero", progress: bool = False) -> Results:
    """Evaluate a run against relevance judgements.

    Args:
        qrels: :class:`Qrels`, ``{query_id: {doc_id: grade}}`` or any input
            :func:`evalbridge.io.objects.to_qrels` reads (DataFrame, file path, ranx...).
        run: :class:`Run`, ``{query_id: {doc_id: score}}`` or any input ``to_run`` reads.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``), or a
            mapping label -> spec (``{"precision@5": "P@5", "ndcg": "nDCG(gain=exp)@10"}``): the results,
            reports and JSON are keyed by each label, else by the spelling asked
            (:mod:`evalbridge.metrics.requests`).
        backend: ``auto`` (default: the pure-Python ``reference`` for small inputs, the numpy
            engine ``fast`` for large ones; the provenance names the one used), or another
            name in :data:`evalbridge.backends.BACKENDS`, or ``spark``: Spark DataFrames
            (``query_id, doc_id, relevance`` / ``score``) are evaluated on Spark by
            :func:`evalbridge.spark.evaluate`, whatever ``auto`` would choose. Large TREC files
            and tables are read into columns, which ``auto`` and ``fast`` evaluate as they are
            (the strict reader takes any file that path finds unusual, so errors still name
            ``file:line``).
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
            A run with no query at all is every qrels query missing; qrels with no query give
            a result with no query (means NaN), and the provenance says so.
        judged_only: remove the documents without a judgement (or with a negative grade) from
            each ranking before any metric (trec_eval ``-J``); the number removed is in the provenance.
        depth: keep only the first ``depth`` documents of each ranking (trec_eval ``-M``), before
            ``judged_only``; the number removed is in the provenance.
        no_relevant: a qrels query with no judgement at or above the relevance level (torchmetrics'
            ``empty_target_action``): ``zero`` (default) keeps it, its metrics of relevance 0; ``drop``
            leaves it out of every mean; ``error`` refuses, naming it. Counted in the provenance.
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
                         score_precision=score_precision, missing_queries=missing_queries, judged_only=judged_only,
                         depth=depth, no_relevant=no_relevant)


def _evaluate(qrels: Any, run: Any, metrics: MetricsArg, bar: Steps, *, backend: str,
              min_relevance: float | None, ties: str, score_precision: str, missing_queries: str,
              judged_only: bool = False, depth: int | None = None, no_relevant: str = "zero") -> Results:
    from .results import Provenance, Results

    requests = metric_requests(metrics)
    if backend == "spark" or _is_spark_frame(qrels) or _is_spark_frame(run):
        if no_relevant != "zero":
            raise InputError(f"no_relevant={no_relevant!r} is not applied by the Spark engine yet.",
                             fix="leave no_relevant at 'zero' on Spark, or evaluate in memory.")
        return _evaluate_on_spark(qrels, run, requests, backend=backend, min_relevance=min_relevance, ties=ties,
                                  score_precision=score_precision, missing_queries=missing_queries)
    conventions = Conventions(ties=ties, score_precision=score_precision, missing_queries=missing_queries,
                              judged_only=judged_only, depth=depth, no_relevant=no_relevant)
    ready = prepare(qrels, run, requests, backend=backend, min_relevance=min_relevance, conventions=conventions)
    qrels, run, cut, resolved, backend = ready.qrels, ready.run, ready.cut, ready.resolved, ready.backend
    wanted = list(resolved.metrics)
    unjudged = without_relevant(qrels, resolved.level, conventions.no_relevant)
    chosen = get_backend(backend)
    bar.step(f"computing {len(wanted)} metric{'s' if len(wanted) > 1 else ''} with {backend}")
    values, bridges, judged = _compute(chosen, qrels, run, wanted, conventions)

    bar.step("assembling the results")
    warned = _warn_unmatched(qrels, run, judged)
    missing = tuple(filterfalse(run.keys().__contains__, qrels))
    fill_missing(values, qrels, conventions.missing_queries)
    if conventions.no_relevant == "drop":
        drop_queries(values, unjudged)
    provenance = Provenance(
        backend=backend, backend_version=chosen.version(), conventions=conventions, relevance_level=resolved.level,
        queries_evaluated=len(values[wanted[0]]), missing_from_run=missing,
        ignored_run_only=tuple(filterfalse(qrels.keys().__contains__, run)), bridges=tuple(bridges),
        evalbridge_version=__version__, removed_beyond_depth=cut.beyond_depth, removed_unjudged=cut.unjudged,
        notes=empty_notes(qrels, run, conventions.missing_queries), warnings=warned,
        without_relevant=unjudged)
    return Results(metrics=resolved.metrics, values=values, provenance=provenance, max_grade=resolved.max_grade,
                   requests=resolved.requests)


#: Backends that compute the matching probe (``Judged@k``) in the same pass as the metrics asked.
_PROBED = ("reference", "fast")


def _compute(chosen: Any, qrels: Qrels, run: Run, wanted: list[Metric], conventions: Conventions
             ) -> tuple[dict[Metric, dict[str, float]], list[str], tuple[Metric, dict[str, float]]]:
    """The backend's values of ``wanted`` and its bridges, and the probe of :mod:`evalbridge.matching` with its
    per-query values: one more metric of the same pass for the reference and the engine (hits already placed),
    a pass of ``auto``'s choice beside a library backend."""
    judged = probe(wanted)
    asked = judged in wanted
    if chosen.name in _PROBED:
        values, bridges = chosen.compute(qrels, run, wanted if asked else [*wanted, judged], conventions)
        return values, bridges, (judged, values[judged] if asked else values.pop(judged))
    values, bridges = chosen.compute(qrels, run, wanted, conventions)
    if asked:
        return values, bridges, (judged, values[judged])
    from .backends.auto import choose

    apart = get_backend(choose(qrels, run, ties=conventions.ties)).compute(qrels, run, [judged], conventions)[0]
    return values, bridges, (judged, apart[judged])


def _warn_unmatched(qrels: Qrels, run: Run, judged: tuple[Metric, dict[str, float]]) -> tuple[str, ...]:
    """Warn (:class:`~evalbridge.errors.EvalbridgeWarning`) when retrieved and judged ids do not meet; the text
    goes to the provenance too."""
    text = unmatched(qrels, run, judged[1], judged[0])
    if text is None:
        return ()
    import warnings

    from .errors import EvalbridgeWarning

    warnings.warn(text, EvalbridgeWarning, stacklevel=4)  # evaluate's caller
    return (text,)


def _read_into_columns(run: Any) -> bool:
    """:func:`evalbridge.io.read_into_columns` of a run, without importing the registry for data in memory."""
    if isinstance(run, Mapping) and not isinstance(run, Run):
        return False
    from .io import read_into_columns

    return read_into_columns(run)


# --------------------------------------------------------------------------- Spark DataFrames
# Kept apart: everything above works on data in memory; Spark DataFrames go to evalbridge.spark whole.

def _is_spark_frame(obj: Any) -> bool:
    """True for a Spark DataFrame (classic or Spark Connect), told by its class's module: pyspark is not imported."""
    return type(obj).__module__.startswith("pyspark.sql")


def _evaluate_on_spark(qrels: Any, run: Any, requests: tuple[MetricRequest, ...], *, backend: str,
                       **options: Any) -> Results:
    """:func:`evalbridge.spark.evaluate`'s Results, its cached table released; an error naming
    ``evalbridge.spark.evaluate`` when the per-query table is too large to collect."""
    if backend not in ("auto", "spark"):
        raise InputError(f"Spark DataFrames are evaluated by the Spark engine; backend={backend!r} computes in "
                         f"memory.", fix="leave backend='auto' (or 'spark'), or bring the DataFrames to the driver "
                                         "first (e.g. .toPandas()).")
    from . import spark

    evaluation = spark.evaluate(qrels, run, requests, **options)
    try:
        return evaluation.require_results()
    finally:
        evaluation.unpersist()
