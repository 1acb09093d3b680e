"""The settings of one evaluation made explicit in its metrics: the relevance level and the top grade.

The one rule for graded judgements lives here (:func:`relevance_level`): grades that are not whole numbers
(LLM judges' 0-10 scores) and grades that look like a rating (a 1-5 rating, integer 0-10 scores:
:func:`rating_scale`) give binary metrics no level to guess, whatever door they came through.

Shared by every verb (:func:`evalbridge.evaluate`, the cross-check, the Spark engine: each calls
:func:`resolve_metrics` once) and by :class:`~evalbridge.evaluation.results.Results`, which resolves the spelling a
user asks for the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..errors import InputError
from ..model.data import check_level
from ..common.wording import option
from .requests import MetricRequest
from .spec import Metric

__all__ = ["USES_MAX_GRADE", "needs_max_grade", "resolve_metric", "relevance_level", "rating_scale", "JUDGED_TOP",
           "RATING_GRADES", "check_max_grade", "Resolved",
           "resolve_metrics"]


class Judgements(Protocol):
    """What the settings read from the qrels: a :class:`~evalbridge.model.data.Qrels`, or the Spark engine's
    view of a qrels DataFrame."""

    @property
    def min_relevance(self) -> float | None: ...

    @property
    def max_grade(self) -> float: ...

    @property
    def fractional_grade(self) -> float | None: ...

    @property
    def grades(self) -> Collection[float]: ...


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


#: the top grade of judged pools (TREC's 0-3 and 0-4, with -1 or -2 for spam): a grade above it is a rating's or a
#: score's (a 1-5 rating's 5, a 0-10 judge score's 7)
JUDGED_TOP = 4
#: distinct grades, every one at or above level 1, from which the grades are a rating (1-5) and not a pool listing
#: only its relevant documents (one grade, as BEIR and MS MARCO do; up to three, as a TREC 0-3 pool's 1, 2, 3)
RATING_GRADES = 4


def rating_scale(grades: Collection[float]) -> str | None:
    """Why whole-number ``grades`` look like a rating rather than a judged pool, said for a message, or None.

    Level 1 is right for a judged pool: grades 0-3 or 0-4 (negative for spam), or qrels listing only their
    relevant documents with one grade (BEIR, MS MARCO) or up to three (1, 2, 3). It is wrong for a rating,
    where every document has a grade and the low ones mean "not relevant": :data:`RATING_GRADES` distinct
    grades or more and none below 1 (a 1-5 rating), or a grade above :data:`JUDGED_TOP` (a 1-5 rating's 5, a
    0-10 score).

    >>> [rating_scale(g) is not None for g in ({0, 1, 2, 3}, {1}, {1, 2, 3}, {-2, 0, 4}, {1, 2, 3, 4}, {0, 7, 10})]
    [False, False, False, False, True, True]
    """
    if not grades:
        return None
    if len(grades) >= RATING_GRADES and min(grades) >= 1:
        ordered = sorted(grades)
        shown = ", ".join(f"{g:g}" for g in ordered[:8]) + (", ..." if len(ordered) > 8 else "")
        return f"grades {shown}: several, none below 1, as in a 1-5 rating"
    if (top := max(grades)) > JUDGED_TOP:
        return f"grades up to {top:g}, above the 0-{JUDGED_TOP} of judged pools, as in a 1-5 rating or a 0-10 score"
    return None


def relevance_level(qrels: Judgements, min_relevance: float | None, metrics: Iterable[Metric] = ()) -> float:
    """The level of binary metrics: ``min_relevance`` if given, else the qrels' own, else 1.

    Level 1 is a default for the whole-number grades of a judged pool only. With a binary metric among
    ``metrics`` that sets no ``rel`` of its own, and no level given or carried, the qrels are refused when they
    hold a grade such as 7.5 (an LLM judge's 0-10 score) or grades that look like a rating
    (:func:`rating_scale`: a 1-5 rating, integer 0-10 scores), since counting every grade >= 1 as relevant is
    rarely what such a scale means. Graded metrics (nDCG, DCG, ERR) use the grades themselves and need no level.

    Raises:
        InputError: fractional grades or a rating without a level, naming the metrics and the fix at every door.
    """
    if min_relevance is not None:
        return check_level(min_relevance)
    if qrels.min_relevance is not None:
        return qrels.min_relevance
    binary = [m for m in metrics if m.info.binary and m.get("rel") is None]
    if binary and (grade := qrels.fractional_grade) is not None:
        raise _no_level(f"grades that are not whole numbers (e.g. {grade:g}; top grade {qrels.max_grade:g})",
                        qrels.max_grade, binary)
    if binary and (rating := rating_scale(qrels.grades)) is not None:
        raise _no_level(f"grades that look like a rating, not judged relevance ({rating})", qrels.max_grade, binary)
    return 1


def _no_level(held: str, top: float, binary: list[Metric]) -> InputError:
    example = float(f"{0.7 * top:.1g}") if top > 0 else 1.0  # an example on the qrels' own scale: 7 for 0-10
    level = int(example) if example.is_integer() else example
    names = ", ".join(map(str, dict.fromkeys(binary)))
    return InputError(
        f"the qrels hold {held}, and {names} "
        f"need{'s' if len(binary) == 1 else ''} a relevance level to tell relevant from not: evalbridge does "
        f"not guess one (level 1 would count every grade >= 1 as relevant).",
        fix=f"state the level from which a grade is relevant, {option('min_relevance', level)} (or per "
            f"metric, e.g. {binary[0].replace(rel=level)}); graded metrics such as nDCG need no level.")


def check_max_grade(metric: Metric, qrels: Judgements) -> None:
    """Refuse ``AP(weights=graded, max_grade=m)`` and ``ERR(max_grade=m)`` when the qrels hold grades above ``m``
    (weights, or ERR's stopping probabilities, would exceed 1)."""
    cap = metric.get("max_grade") if metric.name in USES_MAX_GRADE else None
    if cap is not None and (top := qrels.max_grade) > cap:
        what = "stopping probabilities" if metric.name == "ERR" else "weights"
        raise InputError(f"{metric}: the qrels hold grade {top:g} above max_grade={cap:g}, so {what} would "
                         f"exceed 1.", fix=f"set max_grade to at least {top:g}, or leave it out.")


@dataclass(frozen=True)
class Resolved:
    """The metrics of one evaluation as it computes them (:func:`resolve_metrics`).

    Attributes:
        metrics: each distinct metric asked, resolved (:func:`resolve_metric`), in the order asked.
        requests: each request with its metric resolved; labels and spellings unchanged, so the names of
            the outputs do not depend on the level or the top grade.
        level: the relevance level of binary metrics (:func:`relevance_level`).
        max_grade: the top grade of the qrels when a metric asked needed it, else ``None`` (not computed).
    """

    metrics: tuple[Metric, ...]
    requests: tuple[MetricRequest, ...]
    level: float
    max_grade: float | None


def resolve_metrics(qrels: Judgements, requests: Sequence[MetricRequest], *,
                    min_relevance: float | None) -> Resolved:
    """The relevance level, the top grade (read only when a metric needs it: a pass over every grade, a
    Spark job for a DataFrame) and every metric asked resolved with them, each checked against the grades
    (:func:`check_max_grade`): the metric preparation of every verb, written once.

    Example:
        >>> from evalbridge.metrics.requests import metric_requests
        >>> from evalbridge.model.data import Qrels
        >>> found = resolve_metrics(Qrels({"q": {"a": 3}}), metric_requests(["P@5", "ERR"]), min_relevance=2)
        >>> [str(m) for m in found.metrics], found.max_grade
        (['P(rel=2)@5', 'ERR(max_grade=3)'], 3)
    """
    asked = list(dict.fromkeys(r.metric for r in requests))
    level = relevance_level(qrels, min_relevance, asked)
    top = qrels.max_grade if any(map(needs_max_grade, asked)) else None
    metrics = tuple(dict.fromkeys(resolve_metric(m, level=level, max_grade=top) for m in asked))
    for metric in metrics:
        check_max_grade(metric, qrels)
    named = tuple(r.with_metric(resolve_metric(r.metric, level=level, max_grade=top)) for r in requests)
    return Resolved(metrics, named, level, top)
