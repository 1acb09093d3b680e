"""The public verb ``evaluate``, and the preparation every verb shares: coerce inputs, check their ids,
resolve settings, ask a backend, apply the missing-query policy once.

``evaluate`` and :func:`evalbridge.crosscheck` prepare their inputs with the same functions below.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import filterfalse
from typing import Any

from ._version import __version__
from .backends import get_backend, unsupported
from .errors import InputError, UnsupportedMetricError
from .metrics.spec import Metric, parse_metrics
from .model import Conventions, Qrels, Run, check_level

__all__ = ["evaluate", "as_qrels", "as_run", "check_compatible", "relevance_level", "needs_max_grade",
           "resolve_metric", "check_max_grade", "fill_missing"]


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


def needs_max_grade(metric: Metric) -> bool:
    """True for ``AP(weights=graded)`` without ``max_grade``: it takes the top grade of the qrels."""
    return metric.name == "AP" and metric.get("weights") == "graded" and metric.get("max_grade") is None


def resolve_metric(metric: Metric, *, level: float, max_grade: float | None) -> Metric:
    """Make the evaluation-wide settings explicit in a metric.

    A binary metric without ``rel`` takes the evaluation's relevance ``level``;
    ``AP(weights=graded)`` without ``max_grade`` takes ``max_grade``, the top grade of the qrels
    (``None``: no metric asked needed it, so it was not computed; the metric stays as it is).
    """
    if metric.info.binary and metric.get("rel") is None and level != 1:
        metric = metric.replace(rel=level)
    if max_grade is not None and needs_max_grade(metric):
        metric = metric.replace(max_grade=max_grade if max_grade > 0 else 1)
    return metric


def relevance_level(qrels: Qrels, min_relevance: float | None) -> float:
    """The level of binary metrics: ``min_relevance`` if given, else the qrels' own, else 1."""
    if min_relevance is not None:
        return check_level(min_relevance)
    return qrels.min_relevance if qrels.min_relevance is not None else 1


def check_max_grade(metric: Metric, qrels: Qrels) -> None:
    """Refuse ``AP(weights=graded, max_grade=m)`` when the qrels hold grades above ``m``."""
    cap = metric.get("max_grade") if metric.name == "AP" else None
    if cap is not None and (top := qrels.max_grade) > cap:
        raise InputError(f"{metric}: the qrels hold grade {top:g} above max_grade={cap:g}, so weights would "
                         f"exceed 1.", fix=f"set max_grade to at least {top:g}, or leave it out.")


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
             score_precision: str = "float64", missing_queries: str = "zero"):  # noqa: ANN201 - Results
    """Evaluate a run against relevance judgements.

    Args:
        qrels: :class:`Qrels`, ``{query_id: {doc_id: grade}}`` or any input
            :func:`evalbridge.io.objects.to_qrels` reads (DataFrame, file path, ranx...).
        run: :class:`Run`, ``{query_id: {doc_id: score}}`` or any input ``to_run`` reads.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``).
        backend: ``auto`` (default: the pure-Python ``reference`` for small inputs, the numpy
            engine ``fast`` for large ones; the provenance names the one used), or another
            name in :data:`evalbridge.backends.BACKENDS`. Large TREC files and tables are read
            into columns, which ``auto`` and ``fast`` evaluate as they are (the strict reader
            takes any file that path finds unusual, so errors still name ``file:line``).
        min_relevance: relevance level of binary metrics that do not set ``rel``
            (default: the qrels' own ``min_relevance``, else 1). nDCG ignores it, as trec_eval does.
        ties: ``docid_desc`` (trec_eval), ``docid_asc`` or ``input``.
        score_precision: ``float64`` or ``float32`` (trec_eval <= 9).
        missing_queries: ``zero`` scores qrels queries absent from the run as 0;
            ``drop`` leaves them out of the mean. Both are counted in the provenance.

    Returns:
        :class:`~evalbridge.results.Results`, whatever was asked.

    Example:
        >>> res = evaluate({"q1": {"d1": 1, "d2": 1}}, {"q1": {"d1": 0.9, "d3": 0.5}}, ["P@2", "mrr"])
        >>> res["P@2"], res["RR"]
        (0.5, 1.0)
    """
    from .results import Provenance, Results

    # The rows are wrapped, not copied: nothing built from them outlives this call. Files and tables
    # are read by the format registry (large ones into columns, which the fast engine reads as they are).
    qrels, run = as_qrels(qrels, copy=False), as_run(run, copy=False)
    if backend == "auto":
        from .backends.auto import choose

        backend = choose(qrels, run)
    check_compatible(qrels, run)
    conventions = Conventions(ties=ties, score_precision=score_precision, missing_queries=missing_queries)
    level = relevance_level(qrels, min_relevance)
    asked = parse_metrics(metrics)
    top = qrels.max_grade if any(map(needs_max_grade, asked)) else None  # a pass over every grade

    def resolve(metric: Metric) -> Metric:
        return resolve_metric(metric, level=level, max_grade=top)

    wanted = list(dict.fromkeys(map(resolve, asked)))
    for metric in wanted:
        check_max_grade(metric, qrels)
    module = get_backend(backend)
    reasons = {m: r for m in wanted if (r := unsupported(module, m, qrels)) is not None}
    if reasons:
        lines = "; ".join(f"{m}: {r.rstrip('.')}" for m, r in reasons.items())
        raise UnsupportedMetricError(f"backend {backend!r} cannot compute {lines}. "
                                     f"Fix: use backend='reference', or run `evalbridge metrics` for who supports what.")
    values, bridges = module.compute(qrels, run, wanted, conventions)

    missing = tuple(filterfalse(run.keys().__contains__, qrels))
    fill_missing(values, qrels, conventions.missing_queries)
    provenance = Provenance(
        backend=backend, backend_version=module.version(), conventions=conventions, relevance_level=level,
        queries_evaluated=len(values[wanted[0]]), missing_from_run=missing,
        ignored_run_only=tuple(filterfalse(qrels.keys().__contains__, run)), bridges=tuple(bridges),
        evalbridge_version=__version__)
    return Results(metrics=tuple(wanted), values=values, provenance=provenance, resolve=resolve)
