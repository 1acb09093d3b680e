"""The public verb ``evaluate``: prepare the inputs, ask a backend, apply the missing-query policy once."""

from __future__ import annotations

import os
from collections.abc import Iterable
from itertools import filterfalse
from typing import Any

from ._version import __version__
from .backends import get_backend, unsupported
from .errors import UnsupportedMetricError
from .prepare import (as_qrels, as_run, check_compatible, check_max_grade, fill_missing, needs_max_grade,
                      relevance_level, resolve_metric)
from .spec import Metric, parse_metrics
from .types import Conventions

__all__ = ["evaluate", "as_qrels", "as_run"]


def evaluate(qrels: Any, run: Any, metrics: str | Metric | Iterable[str | Metric], *,
             backend: str = "auto", min_relevance: float | None = None, ties: str = "docid_desc",
             score_precision: str = "float64", missing_queries: str = "zero"):  # noqa: ANN201 - Results
    """Evaluate a run against relevance judgements.

    Args:
        qrels: :class:`Qrels`, ``{query_id: {doc_id: grade}}`` or any input
            :func:`evalbridge.interop.to_qrels` reads (DataFrame, file path, ranx...).
        run: :class:`Run`, ``{query_id: {doc_id: score}}`` or any input ``to_run`` reads.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``).
        backend: ``auto`` (default: the pure-Python ``reference`` for small inputs, the numpy
            engine ``fast`` for large ones; the provenance names the one used), or another
            name in :data:`evalbridge.backends.BACKENDS`. With ``auto``/``fast``, large TREC
            files are read with pyarrow straight into columns (the strict reader is used
            whenever that path meets anything unusual, so errors still name ``file:line``).
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

    columnar = _read_columnar(qrels, run, backend)
    # The rows are wrapped, not copied: nothing built from them outlives this call.
    qrels, run = columnar if columnar is not None else (as_qrels(qrels, copy=False), as_run(run, copy=False))
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


def _read_columnar(qrels: Any, run: Any, backend: str):  # noqa: ANN202 - (QrelsView, RunView) | None
    """Two TREC file paths read by pyarrow into columns for the fast engine, or ``None``."""
    if backend not in ("auto", "fast") or not all(isinstance(x, (str, os.PathLike)) for x in (qrels, run)):
        return None
    from .engine.arrow_io import read_trec_views

    return read_trec_views(qrels, run, large_only=backend == "auto")
