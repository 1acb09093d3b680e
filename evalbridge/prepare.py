"""Preparing an evaluation, shared by every verb: coerce inputs, check their ids, resolve settings.

Sits between the inputs/metrics layers and the backends, so that ``evaluate`` and the
cross-check prepare their inputs the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .errors import InputError
from .spec import Metric
from .types import Qrels, Run, check_level

__all__ = ["as_qrels", "as_run", "check_compatible", "relevance_level", "needs_max_grade", "resolve_metric",
           "check_max_grade", "fill_missing"]


def as_qrels(obj: Any, *, copy: bool = True) -> Qrels:
    """``obj`` as :class:`Qrels`: a Qrels, a dict of dicts, or any format :mod:`evalbridge.interop` reads.
    ``copy=False``: a dict of dicts is wrapped, not copied (for use within one call)."""
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Run):
        return Qrels(obj, copy=copy)
    from .interop import to_qrels

    return to_qrels(obj)


def as_run(obj: Any, *, copy: bool = True) -> Run:
    """``obj`` as :class:`Run`: a Run, a dict of dicts, or any format :mod:`evalbridge.interop` reads.
    ``copy=False``: a dict of dicts is wrapped, not copied (for use within one call)."""
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Mapping) and not isinstance(obj, Qrels):
        return Run(obj, copy=copy)
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
