"""The settings of one evaluation made explicit in its metrics: the relevance level and the top grade.

Shared by every verb (:func:`evalbridge.evaluate`, the cross-check, the Spark engine) and by
:class:`~evalbridge.results.Results`, which resolves the spelling a user asks for the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from ..errors import InputError
from ..model import check_level
from .spec import Metric

__all__ = ["USES_MAX_GRADE", "needs_max_grade", "resolve_metric", "relevance_level", "check_max_grade"]


class Judgements(Protocol):
    """What the settings read from the qrels: a :class:`~evalbridge.model.Qrels`, or the Spark engine's
    view of a qrels DataFrame."""

    @property
    def min_relevance(self) -> float | None: ...

    @property
    def max_grade(self) -> float: ...


#: Families whose ``max_grade`` (when not set) is the top grade of the qrels, and when they use it.
USES_MAX_GRADE: dict[str, Callable[[Metric], bool]] = {
    "AP": lambda metric: metric.get("weights") == "graded",
    "ERR": lambda metric: True,
}


def needs_max_grade(metric: Metric) -> bool:
    """True for ``AP(weights=graded)`` and ``ERR`` without ``max_grade``: they take the top grade of the qrels."""
    uses = USES_MAX_GRADE.get(metric.name)
    return uses is not None and uses(metric) and metric.get("max_grade") is None


def resolve_metric(metric: Metric, *, level: float, max_grade: float | None) -> Metric:
    """Make the evaluation-wide settings explicit in a metric.

    A binary metric without ``rel`` takes the evaluation's relevance ``level``;
    ``AP(weights=graded)`` and ``ERR`` without ``max_grade`` take ``max_grade``, the top grade of the
    qrels (``None``: no metric asked needed it, so it was not computed; the metric stays as it is).
    """
    if metric.info.binary and metric.get("rel") is None and level != 1:
        metric = metric.replace(rel=level)
    if max_grade is not None and needs_max_grade(metric):
        metric = metric.replace(max_grade=max_grade if max_grade > 0 else 1)
    return metric


def relevance_level(qrels: Judgements, min_relevance: float | None) -> float:
    """The level of binary metrics: ``min_relevance`` if given, else the qrels' own, else 1."""
    if min_relevance is not None:
        return check_level(min_relevance)
    return qrels.min_relevance if qrels.min_relevance is not None else 1


def check_max_grade(metric: Metric, qrels: Judgements) -> None:
    """Refuse ``AP(weights=graded, max_grade=m)`` and ``ERR(max_grade=m)`` when the qrels hold grades above ``m``
    (weights, or ERR's stopping probabilities, would exceed 1)."""
    cap = metric.get("max_grade") if metric.name in USES_MAX_GRADE else None
    if cap is not None and (top := qrels.max_grade) > cap:
        what = "stopping probabilities" if metric.name == "ERR" else "weights"
        raise InputError(f"{metric}: the qrels hold grade {top:g} above max_grade={cap:g}, so {what} would "
                         f"exceed 1.", fix=f"set max_grade to at least {top:g}, or leave it out.")
