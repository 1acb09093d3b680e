"""The reference backend: :mod:`evalbridge.metrics.reference` driven over every query.

Readable rather than fast; it can follow any :class:`~evalbridge.model.settings.Settings`,
which is how the cross-check reproduces what another backend does. Under ``ties="average"``
each query's tie groups (:func:`evalbridge.common.ranking.rank_groups`) go to the tie-aware functions
of :mod:`evalbridge.metrics.tie_aware` instead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

from .._version import __version__
from ..errors import InputError, UnsupportedMetricError
from ..metrics.reference import FUNCTIONS
from ..common.ranking import rank, rank_groups
from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..model.settings import Settings, TIE_POLICIES
from .base import Backend, Capabilities

NAME = "reference"
CONVENTIONS = Settings()

#: Kernel input (:data:`evalbridge.metrics.catalogue.INPUTS`) -> how it is built from one query's
#: ranking, its judgements, the pool (every doc judged for some query) and the query's strata.
INPUTS: dict[str, Callable[[list[str], Mapping[str, float], Collection[str], Mapping[str, str]], list[Any]]] = {
    "in_qrels": lambda ranking, grades, pool, strata: [doc in grades for doc in ranking],
    "in_pool": lambda ranking, grades, pool, strata: [doc in pool for doc in ranking],
    "stratum": lambda ranking, grades, pool, strata: [strata.get(doc) if doc in grades else None for doc in ranking],
    "judged_strata": lambda ranking, grades, pool, strata: [strata.get(doc) for doc in grades],
}
_NO_STRATA: Mapping[str, str] = {}


def version() -> str:
    return __version__


def pool_of(qrels: Qrels) -> frozenset[str]:
    """Every doc id judged for some query (BEIR's "annotated corpus")."""
    return frozenset().union(*qrels.values())


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = CONVENTIONS, *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values of ``metrics`` over the queries in both ``qrels`` and ``run``.

    Each query is ranked once and every metric reads that ranking (and the inputs its family
    declares, built once per query). ``native`` changes nothing: the reference has no conventions
    of its own, it follows ``conventions``.

    Raises:
        UnsupportedMetricError: under ``ties="average"``, a metric without a tie-aware formula.
        InputError: under ``ties="average"``, a tie group too large for the exact ERR or infAP
            (:data:`evalbridge.metrics.tie_aware.MAX_GROUP_STEPS`).
    """
    if conventions.ties == "average":
        return _compute_averaged(qrels, run, metrics, conventions), []
    calls = [(metric, FUNCTIONS[metric.name], metric.arguments, metric.inputs) for metric in metrics]
    needed, pool = _inputs_of(qrels, [inputs for *_, inputs in calls])
    values: dict[Metric, dict[str, float]] = {metric: {} for metric in metrics}
    every_strata = qrels.strata  # built once: a read-only view of every query's
    for qid, grades, scores in _evaluated(qrels, run):
        ranking = rank(scores, ties=conventions.ties, score_precision=conventions.score_precision)
        retrieved = [grades.get(doc, 0) for doc in ranking]
        judged = list(grades.values())
        strata = every_strata.get(qid, _NO_STRATA)
        built = {name: INPUTS[name](ranking, grades, pool, strata) for name in needed}
        for metric, kernel, kwargs, inputs in calls:
            values[metric][qid] = _value(metric, qid, kernel, retrieved, judged, kwargs, inputs, built)
    return values, []


def _compute_averaged(qrels: Qrels, run: Run, metrics: Sequence[Metric],
                      conventions: Settings) -> dict[Metric, dict[str, float]]:
    """``compute`` under ``ties="average"``: each metric's expected value over every order of each tie group.

    A query without tied scores has one order: the reference functions compute it (the tie-aware
    ones give the same value, bit for bit, more slowly; tests/test_tie_aware.py holds them equal).
    """
    from ..metrics import tie_aware  # 800 lines the default ties never read

    for metric in metrics:
        reason = tie_aware.unsupported(metric)
        if reason is not None:
            raise UnsupportedMetricError(f"{metric}: {reason}")
    calls = [(metric, tie_aware.FUNCTIONS[metric.name], FUNCTIONS[metric.name], metric.arguments, metric.inputs)
             for metric in metrics]
    needed, pool = _inputs_of(qrels, [inputs for *_, inputs in calls])
    values: dict[Metric, dict[str, float]] = {metric: {} for metric in metrics}
    for qid, grades, scores in _evaluated(qrels, run):
        ranked = rank_groups(scores, score_precision=conventions.score_precision)
        groups = [[grades.get(doc, 0) for doc in group] for group in ranked]
        judged = list(grades.values())
        tied = len(groups) != len(scores)
        if tied:  # the tie groups, and each input in their shape
            retrieved: list[Any] = groups
            built: dict[str, list[Any]] = {name: [INPUTS[name](group, grades, pool, _NO_STRATA) for group in ranked]
                                           for name in needed}
        else:
            retrieved = [grade for (grade,) in groups]
            built = {name: INPUTS[name]([doc for (doc,) in ranked], grades, pool, _NO_STRATA) for name in needed}
        for metric, averaged, kernel, kwargs, inputs in calls:
            values[metric][qid] = _value(metric, qid, averaged if tied else kernel, retrieved, judged, kwargs,
                                         inputs, built)
    return values


def _inputs_of(qrels: Qrels, read: Sequence[Sequence[str]]) -> tuple[list[str], frozenset[str]]:
    """The kernel inputs some metric reads (``read``: each metric's inputs; in :data:`INPUTS` order), and the pool
    when one of them needs it."""
    needed = [name for name in INPUTS if any(name in inputs for inputs in read)]
    return needed, pool_of(qrels) if "in_pool" in needed else frozenset()


def _evaluated(qrels: Qrels, run: Run) -> Iterator[tuple[str, Mapping[str, float], Mapping[str, float]]]:
    """``(query id, grades, scores)`` of each qrels query the run has, in qrels order."""
    for qid, grades in qrels.items():
        scores = run.get(qid)
        if scores is not None:
            yield qid, grades, scores


def _value(metric: Metric, qid: str, kernel: Callable[..., float], retrieved: list[Any], judged: list[float],
           kwargs: Mapping[str, Any], inputs: Sequence[str], built: Mapping[str, list[Any]]) -> float:
    """One metric's value over one query: its options plus the inputs it reads; its errors name the query."""
    if inputs:
        kwargs = {**kwargs, **{name: built[name] for name in inputs}}
    try:
        return kernel(retrieved, judged, **kwargs)
    except InputError as error:
        raise InputError(f"{metric}: {error}", query_id=qid) from None


#: Every metric with every option, under every tie policy (under ``average``: the metrics of
#: :data:`evalbridge.metrics.tie_aware.FUNCTIONS`), following the conventions it is given.
BACKEND = Backend(name=NAME, version=version, library=None, conventions=None, capabilities=Capabilities.every(),
                  ties=TIE_POLICIES, compute=compute)
