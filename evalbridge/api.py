"""The public verbs: ``evaluate`` (and, built on it, the cross-check)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ._version import __version__
from .backends import get_backend, unsupported
from .errors import InputError, UnsupportedMetricError
from .spec import Metric, parse_metrics
from .types import Conventions, Qrels, Run, check_level

__all__ = ["evaluate", "as_qrels", "as_run", "resolve_metric", "check_compatible"]


def as_qrels(obj: Any) -> Qrels:
    """``obj`` as :class:`Qrels`: a Qrels, a dict of dicts, or any format :mod:`evalbridge.interop` reads."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Run):
        return Qrels(obj)
    from .interop import to_qrels

    return to_qrels(obj)


def as_run(obj: Any) -> Run:
    """``obj`` as :class:`Run`: a Run, a dict of dicts, or any format :mod:`evalbridge.interop` reads."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Qrels):
        return Run(obj)
    from .interop import to_run

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


def resolve_metric(metric: Metric, *, level: float, max_grade: float) -> Metric:
    """Make the evaluation-wide settings explicit in a metric.

    A binary metric without ``rel`` takes the evaluation's relevance ``level``;
    ``AP(weights=graded)`` without ``max_grade`` takes the top grade of the qrels.
    """
    if metric.info.binary and metric.get("rel") is None and level != 1:
        metric = metric.replace(rel=level)
    if metric.name == "AP" and metric.get("weights") == "graded" and metric.get("max_grade") is None:
        metric = metric.replace(max_grade=max_grade if max_grade > 0 else 1)
    return metric


def evaluate(qrels: Any, run: Any, metrics: str | Metric | Iterable[str | Metric], *,
             backend: str = "reference", min_relevance: float | None = None, ties: str = "docid_desc",
             score_precision: str = "float64", missing_queries: str = "zero"):  # noqa: ANN201 - Results
    """Evaluate a run against relevance judgements.

    Args:
        qrels: :class:`Qrels`, ``{query_id: {doc_id: grade}}`` or any input
            :func:`evalbridge.interop.to_qrels` reads (DataFrame, file path, ranx...).
        run: :class:`Run`, ``{query_id: {doc_id: score}}`` or any input ``to_run`` reads.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``).
        backend: ``reference`` (default) or another name in :data:`evalbridge.backends.BACKENDS`.
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

    qrels, run = as_qrels(qrels), as_run(run)
    check_compatible(qrels, run)
    conventions = Conventions(ties=ties, score_precision=score_precision, missing_queries=missing_queries)
    # `is not None`, not `or`: a level of 0 (every grade >= 0 relevant) is a real choice
    level = min_relevance if min_relevance is not None else (
        qrels.min_relevance if qrels.min_relevance is not None else 1)
    if min_relevance is not None:
        check_level(min_relevance)
    top = qrels.max_grade

    def resolve(metric: Metric) -> Metric:
        return resolve_metric(metric, level=level, max_grade=top)

    wanted = list(dict.fromkeys(resolve(m) for m in parse_metrics(metrics)))
    for metric in wanted:
        cap = metric.get("max_grade") if metric.name == "AP" else None
        if cap is not None and top > cap:
            raise InputError(f"{metric}: the qrels hold grade {top:g} above max_grade={cap:g}, so weights would "
                             f"exceed 1.", fix=f"set max_grade to at least {top:g}, or leave it out.")
    module = get_backend(backend)
    reasons = {m: r for m in wanted if (r := unsupported(module, m, qrels)) is not None}
    if reasons:
        lines = "; ".join(f"{m}: {r.rstrip('.')}" for m, r in reasons.items())
        raise UnsupportedMetricError(f"backend {backend!r} cannot compute {lines}. "
                                     f"Fix: use backend='reference', or run `evalbridge metrics` for who supports what.")
    values, bridges = module.compute(qrels, run, wanted, conventions)

    missing = tuple(q for q in qrels if q not in run)
    if missing and conventions.missing_queries == "zero":
        for metric in wanted:
            per_query = values[metric]
            values[metric] = {q: per_query.get(q, 0.0) for q in qrels}
    provenance = Provenance(
        backend=backend, backend_version=module.version(), conventions=conventions, relevance_level=level,
        queries_evaluated=len(values[wanted[0]]), missing_from_run=missing,
        ignored_run_only=tuple(q for q in run if q not in qrels), bridges=tuple(bridges),
        evalbridge_version=__version__)
    return Results(metrics=tuple(wanted), values=values, provenance=provenance, resolve=resolve)
