"""Why a library's value differs from the reference's: its possible causes, kept when the reference reproduces it.

:func:`explain` gives each differing value of one backend its cause (the causes and tie luck are
described in :mod:`evalbridge.cross_check.checking`): the backend's conventions that differ from the requested
ones and could matter for the query (:class:`_Deviation`) are tried in combinations, smallest
first, each as a :class:`_Setting` the readable reference is re-run under, once per distinct
setting for every query and metric that tries it. :func:`same` is the one rule of agreement.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import combinations
from typing import TYPE_CHECKING, Callable

from ..metrics import tie_aware
from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..common.ranking import float32_collisions, fractional_grades, has_ties
from ..model.settings import Settings

if TYPE_CHECKING:
    from ..backends.base import Backend, Fault

__all__ = ["explain", "same"]


@dataclass(frozen=True)
class _Setting:
    """How the reference is re-run to emulate a backend for one query (``metric`` None: for
    several metrics at once)."""

    conventions: Settings
    metric: Metric | None
    truncate: bool = False
    native_order: bool = False
    drop_empty: bool = False
    zero_empty: bool = False
    faults: tuple[Fault, ...] = ()


@dataclass(frozen=True)
class _Deviation:
    """One way a backend differs from the requested conventions, and how to emulate it."""

    name: str
    cause: str
    apply: Callable[[_Setting], _Setting]


def _values(qrels: Qrels, run: Run, qids: list[str], setting: _Setting, metrics: list[Metric],
            native_run: Run | None) -> dict[Metric, dict[str, float | None]]:
    """The reference's value of each of ``qids`` for each of ``metrics`` under ``setting`` (its own
    metric aside; None: the query gets no value), in one call: each query is ranked once.

    ``native_run`` holds the queries' documents in the library's own order (see
    ``native_ranking``), used when ``setting.native_order`` is set.
    """
    from ..backends import reference

    fixed: dict[str, float | None] = {}
    judged: dict[str, dict[str, float]] = {}
    ranked: dict[str, dict[str, float]] = {}
    for qid in qids:
        grades = qrels.get(qid)
        if grades is None or (not grades and setting.drop_empty):
            fixed[qid] = None
            continue
        if not grades and setting.zero_empty:
            fixed[qid] = 0.0
            continue
        scores = run.get(qid)
        if scores is None:
            fixed[qid] = 0.0 if setting.conventions.missing_queries == "zero" else None
            continue
        judged[qid] = {d: int(g) for d, g in grades.items()} if setting.truncate else dict(grades)
        for fault in setting.faults:
            if fault.qrels is not None:
                judged[qid] = fault.qrels(judged[qid])
        # native_order is only offered for a query with documents, so it is in native_run
        ranked[qid] = dict(native_run[qid] if setting.native_order and native_run is not None else scores)
    values = reference.compute(Qrels(judged, copy=False), Run(ranked, copy=False), metrics,
                               setting.conventions)[0] if judged else {m: {} for m in metrics}
    for fault in setting.faults:  # faults are offered for one family at a time, so every metric here has them
        emulate = fault.value
        if emulate is not None:
            for metric in metrics:
                values[metric] = {q: emulate(v, qrels, q, run, metric, setting.truncate)
                                  for q, v in values[metric].items()}
    return {m: {**fixed, **values[m]} for m in metrics}


def same(a: float | None, b: float | None, atol: float) -> bool:
    """Whether two values of one query agree: within ``atol``, NaN with NaN, no value with no value."""
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= atol


def _deviations(backend: Backend, name: str, metric: Metric, asked: Metric, qrels: Qrels, run: Run, qid: str,
                requested: Settings, level: float) -> list[_Deviation]:
    """The backend's conventions that differ from the requested ones and could matter for this query."""
    native = backend.native_conventions(asked, requested)
    grades, scores = qrels.get(qid, {}), run.get(qid)
    found: list[_Deviation] = []
    # a library's zero fill is 0 for every metric, where evalbridge scores a query that retrieved nothing (NumRel: R)
    if scores is None and (native.missing_queries != requested.missing_queries or native.missing_queries == "zero"):
        verb = "drops" if native.missing_queries == "drop" else "scores 0 (every metric, NumRel too)"
        found.append(_Deviation("missing", f"missing-query policy: {name} {verb} queries absent from the run",
                                lambda s: replace(s, conventions=replace(s.conventions,
                                                                         missing_queries=native.missing_queries))))
    if not grades and native.empty_qrels == "drop":
        found.append(_Deviation("empty", f"missing-query policy: {name} drops queries with no judgement",
                                lambda s: replace(s, drop_empty=True)))
    if not grades and native.empty_qrels == "zero":
        found.append(_Deviation("empty", f"missing-query policy: {name} gives queries with no judgement 0 "
                                         f"without evaluating them (NumRet too)",
                                lambda s: replace(s, zero_empty=True)))
    if scores:
        if native.score_precision != requested.score_precision and float32_collisions(scores):
            found.append(_Deviation(
                "float32", f"float32 score collision: {name} stores scores as C floats, so scores that differ "
                           f"only beyond float32 precision tie",
                lambda s: replace(s, conventions=replace(s.conventions, score_precision=native.score_precision))))
        precision = "float32" if "float32" in (native.score_precision, requested.score_precision) else "float64"
        if has_ties(scores, score_precision=precision) and (native.ties != requested.ties or native.ties == "input"):
            reference = "averages over every order" if requested.ties == "average" else requested.ties
            if backend.native_ranking is not None:
                order = f" ({native.tie_order})" if native.tie_order else ""
                found.append(_Deviation(
                    "ties", f"ties broken differently: {name} keeps its own order of tied scores{order}, the "
                            f"reference {reference}",
                    lambda s: replace(s, native_order=True, conventions=replace(s.conventions, ties="input"))))
            else:
                found.append(_Deviation(
                    "ties", f"ties broken differently: {name} orders tied scores {native.ties}, the reference "
                            f"{reference}",
                    lambda s: replace(s, conventions=replace(s.conventions, ties=native.ties))))
    if native.grades == "truncate" and fractional_grades(grades):
        found.append(_Deviation("truncation", f"float grade truncation: {name} truncates float grades to integers",
                                lambda s: replace(s, truncate=True)))
    if metric != asked:
        found.append(_Deviation(
            "level", f"relevance threshold applied to nDCG: {name}'s level -l{level:g} also zeroes grades below "
                     f"{level:g} in {asked.name} (trec_eval ignores the level there)",
            lambda s: replace(s, metric=metric)))
    truncate = native.grades == "truncate"
    for fault in backend.known_faults.get(asked.name, ()):
        if fault.applies(qrels, qid, metric, truncate):
            found.append(_Deviation(fault.name, fault.cause, _with_fault(fault)))
    return found


def _with_fault(fault: Fault) -> Callable[[_Setting], _Setting]:
    """A setting's emulation with the library's known fault ``fault`` added."""
    return lambda s: replace(s, faults=(*s.faults, fault))


def _combinations(deviations: list[_Deviation]) -> Iterator[tuple[_Deviation, ...]]:
    """Every non-empty combination of ``deviations``, smallest first."""
    for size in range(1, len(deviations) + 1):
        yield from combinations(deviations, size)


def explain(backend: Backend, name: str, natives: dict[Metric, Metric], qrels: Qrels, run: Run,
            differing: dict[Metric, list[tuple[str, float | None, float | None]]], requested: Settings,
            level: float, atol: float) -> dict[Metric, list[tuple[str, bool]]]:
    """(cause, verified) for each differing ``(query id, reference, value)`` of one backend, by metric.

    Each value tries the combinations of its possible causes, smallest first, until the reference
    reproduces the backend's value; every round re-runs the reference once per distinct setting,
    for all the queries and metrics that try it.
    """
    native_run = _native_order(backend, run, differing)
    items = [(asked, qid, value) for asked, found in differing.items() for qid, _, value in found]
    found = [_deviations(backend, name, natives[asked], asked, qrels, run, qid, requested, level)
             for asked, qid, _ in items]
    tries = list(map(_combinations, found))
    causes: list[tuple[str, bool] | None] = [None] * len(items)
    verified: dict[int, _Setting] = {}  # item -> the setting that reproduced the backend's value
    pending = list(range(len(items)))
    while pending:
        rounds: dict[_Setting, list[tuple[int, Metric, tuple[_Deviation, ...]]]] = {}
        for i in pending:
            subset = next(tries[i], None)
            if subset is None:
                names = "; ".join(d.name for d in found[i])
                causes[i] = (f"suspected (not reproduced by the reference): {names}", False) if names \
                    else ("unexplained", False)
                continue
            setting = _Setting(requested, items[i][0])
            for deviation in subset:
                setting = deviation.apply(setting)
            metric = items[i][0] if setting.metric is None else setting.metric  # deviations keep a metric
            rounds.setdefault(replace(setting, metric=None), []).append((i, metric, subset))
        pending = []
        for setting, members in rounds.items():
            got = _values(qrels, run, list(dict.fromkeys(items[i][1] for i, _, _ in members)), setting,
                          list(dict.fromkeys(metric for _, metric, _ in members)), native_run)
            for i, metric, subset in members:
                _, qid, value = items[i]
                if same(got[metric][qid], value, atol):
                    causes[i] = ("; ".join(d.cause for d in subset), True)
                    verified[i] = replace(setting, metric=metric)
                else:
                    pending.append(i)
    references = [ref for found in differing.values() for _, ref, _ in found]
    for i, luck in _tie_luck(qrels, run, items, references, verified, requested, name, atol).items():
        cause = causes[i]
        if cause is not None:  # set for every verified item
            causes[i] = (f"{cause[0]}; {luck}", True)
    out: dict[Metric, list[tuple[str, bool]]] = {}
    for (asked, _, _), cause in zip(items, causes):  # every cause is set once nothing is pending
        out.setdefault(asked, []).append(cause if cause is not None else ("unexplained", False))
    return out


def _tie_luck(qrels: Qrels, run: Run, items: list[tuple[Metric, str, float | None]], references: list[float | None],
              verified: dict[int, _Setting], requested: Settings, name: str, atol: float) -> dict[int, str]:
    """For each verified item of a query with tied scores, how much of its difference is tie luck (when
    more than ``atol``).

    ``E_requested`` and ``E_backend`` are the reference under ``ties="average"``, with the requested
    conventions and with the verified setting's other conventions; the tie luck is
    ``(value - E_backend) - (reference - E_requested)``. Metrics without a tie-aware formula are skipped.
    """
    wanted: dict[_Setting, list[tuple[int, Metric, str]]] = {}
    for i, setting in verified.items():
        asked, qid, _ = items[i]
        precision = "float32" if "float32" in (setting.conventions.score_precision, requested.score_precision) \
            else "float64"
        if tie_aware.unsupported(asked) is not None or setting.metric is None or \
                not has_ties(run.get(qid) or {}, score_precision=precision):
            continue
        averaged = replace(setting, native_order=False, conventions=replace(setting.conventions, ties="average"))
        for role, chosen in (("backend", averaged), ("requested", _Setting(replace(requested, ties="average"), asked))):
            metric = asked if chosen.metric is None else chosen.metric  # both settings have one (checked above)
            wanted.setdefault(replace(chosen, metric=None), []).append((i, metric, role))
    expected: dict[int, dict[str, float | None]] = {}
    for setting, members in wanted.items():
        got = _values(qrels, run, list(dict.fromkeys(items[i][1] for i, _, _ in members)), setting,
                      list(dict.fromkeys(metric for _, metric, _ in members)), None)
        for i, metric, role in members:
            expected.setdefault(i, {})[role] = got[metric][items[i][1]]
    out: dict[int, str] = {}
    for i, found in expected.items():
        value, reference = items[i][2], references[i]
        mean_backend, mean_requested = found["backend"], found["requested"]
        if value is None or reference is None or mean_backend is None or mean_requested is None:
            continue
        luck = (value - mean_backend) - (reference - mean_requested)
        difference = value - reference
        if abs(luck) <= atol:
            continue
        share = "all" if abs(luck - difference) <= atol else f"{luck:+.4g}"
        text = (f"tie luck: {share} of the {difference:+.4g} difference (expected value over every order of the "
                f"tied documents: {mean_requested:.4g}")
        if abs(mean_backend - mean_requested) > atol:
            text += f", {mean_backend:.4g} with {name}'s other conventions"
        out[i] = text + ")"
    return out


def _native_order(backend: Backend, run: Run,
                  differing: dict[Metric, list[tuple[str, float | None, float | None]]]) -> Run | None:
    """The differing queries' documents in the library's own order, ranked in one call (or None)."""
    native_ranking = backend.native_ranking
    queries = dict.fromkeys(qid for found in differing.values() for qid, _, _ in found if run.get(qid))
    if native_ranking is None or not queries:
        return None
    ranked: Run = native_ranking(Run({qid: dict(run[qid]) for qid in queries}, copy=False))
    return ranked
