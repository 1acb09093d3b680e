"""What the library backends share: native conventions, the capability check and exact bridges.

A library backend never silently computes something other than what was asked. For each
metric it either says why it cannot (:func:`capability_problem`, :func:`grade_problem`) or
plans a :class:`Task`: the metric as the library can compute it, plus the exact bridges that
make the library's number equal the reference's:

* **rank-derived scores**: a query whose scores tie (at float32 for libraries that store C
  floats) is re-scored ``n, n-1, ..., 1`` in the order :func:`evalbridge.common.ranking.rank` gives
  under the requested :class:`~evalbridge.model.settings.Settings`; these values are exact in float32;
* **binarised grades** for binary metrics whose level is not an integer >= 1, or whose grades
  are floats on an integer-only library: ``grade -> 1 if grade >= rel else 0`` at level 1, and
  a negative grade stays -1 (P, R, RR, AP, Rprec and Success only ask "relevant or not"; bpref
  and infAP also ask "judged or not", and trec_eval reads a negative grade as "unjudged");
* **gains as grades** for nDCG/DCG: ``grade -> gain(grade)`` (``2^g - 1`` for exp gain, the gain
  map's value for the grades it lists, 0 below ``rel`` or at or below 0) and linear gain in the
  library, which computes ``sum gain / log2(i+1)``;
* **scaled grades**: linear-gain nDCG is scale-invariant (``nDCG(c * g) = nDCG(g)`` for ``c > 0``),
  so grades with finite decimals are multiplied by ``10^d`` to become integers. Exp gain is not
  scale-invariant, so exp-gain nDCG over float grades is refused by integer-only libraries;
* **cut rankings**: ``RR@k`` on a library without an RR cutoff sees each ranking cut at ``k``;
* **placeholders**: a query with no judgements gets one grade-0 judgement and an empty ranking
  one unjudged document (two different ids), so libraries that drop or reject such queries still
  score them 0 (every metric here is 0 for both, in the reference too, except the counts: NumRet
  of an empty ranking is set back to 0, see :data:`COUNTS_RETRIEVED`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as distribution_version
from operator import countOf
from types import ModuleType
from typing import Any

from ..common.ranking import float32_collisions, has_ties
from ..errors import BackendUnavailableError, UnsupportedMetricError
from ..common.ranking import rank
from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..model.settings import ORDERED_TIES, Settings
from .base import NativeConventions, capability_problem, integral_level

__all__ = ["NativeConventions", "Task", "GradeInfo", "capability_problem", "grade_problem", "plan",
           "prepare_qrels", "prepare_run", "merge_notes", "PLACEHOLDER", "PLACEHOLDER_JUDGED", "COUNTS_RETRIEVED",
           "empty_rankings"]

#: A doc id no real collection uses: the placeholder retrieved document of an empty ranking.
PLACEHOLDER = "\x00evalbridge-placeholder"
#: The placeholder judgement of a query without judgements (another id: it must not be retrieved).
PLACEHOLDER_JUDGED = "\x00evalbridge-placeholder-judged"
#: Families that count the retrieved documents, placeholder included: set back to 0 for an empty ranking.
COUNTS_RETRIEVED = frozenset({"NumRet"})
#: Largest power of ten used to turn finite-decimal grades into integers.
MAX_DECIMALS = 6
#: Largest integer grade (or gain) handed to an integer-only library (C ``int``).
MAX_INT_GRADE = 2**31 - 1


#: a qrels transform (:attr:`Task.grades`): ``("raw",)``, ``("binary", rel)`` or
#: ``("gain", gain, rel, scale, gains)``
GradeKey = tuple[Any, ...]
#: tasks with the same key share one library call (:attr:`Task.group`): grades, level, cut
GroupKey = tuple[GradeKey, int, "int | None"]


@dataclass(frozen=True)
class GradeInfo:
    """Facts about a qrels' grades that decide which bridges are needed."""

    integral: bool
    negative: bool
    fractional_positive: bool  # some grade in (0, 1)
    decimals: int | None       # digits needed to make every grade an integer; None if not finite
    max_grade: float

    @classmethod
    def of(cls, qrels: Qrels) -> GradeInfo:
        return cls.of_grades(qrels.grades)

    @classmethod
    def of_grades(cls, grades: Collection[float]) -> GradeInfo:
        integral = all(float(g).is_integer() for g in grades)
        return cls(integral=integral, negative=any(g < 0 for g in grades),
                   fractional_positive=any(0 < g < 1 for g in grades),
                   decimals=0 if integral else _decimals(grades), max_grade=max(grades, default=0))

    def with_gains(self, metric: Metric) -> GradeInfo:
        """The facts of the values a gains-as-grades bridge hands the library: the grades and the
        metric's gain map values (a map may turn integer grades into float or negative gains)."""
        gains = metric.get("gains") if "gains" in metric.info.options else None
        if not gains:
            return self
        values = set(gains.values())
        merged = GradeInfo.of_grades(values)
        decimals = (None if self.decimals is None or merged.decimals is None
                    else max(self.decimals, merged.decimals))
        return GradeInfo(integral=self.integral and merged.integral, negative=self.negative or merged.negative,
                         fractional_positive=self.fractional_positive or merged.fractional_positive,
                         decimals=decimals, max_grade=max(self.max_grade, merged.max_grade))


def _decimals(grades: Collection[float]) -> int | None:
    """Fewest decimal digits d such that every grade * 10^d is an integer (None if > MAX_DECIMALS)."""
    worst = 0
    for grade in grades:
        exponent = Decimal(repr(float(grade))).normalize().as_tuple().exponent
        worst = max(worst, -exponent if isinstance(exponent, int) else MAX_DECIMALS + 1)
    return worst if worst <= MAX_DECIMALS else None


@dataclass(frozen=True)
class Task:
    """One metric as the library will compute it.

    Attributes:
        metric: the metric as asked.
        grades: qrels transform: ``("raw",)``, ``("binary", rel)`` or ``("gain", gain, rel, scale)``.
        level: relevance level handed to the library (0: keep every gain, ranx ``-l0``).
        k: cutoff handed to the library (``None``: the whole ranking).
        gain: gain the library applies (``linear`` after a gains-as-grades transform).
        cut: rankings are cut at this depth before the library sees them (``None``: not cut).
    """

    metric: Metric
    grades: GradeKey = ("raw",)
    level: int = 1
    k: int | None = None
    gain: str = "linear"
    cut: int | None = None

    @property
    def group(self) -> GroupKey:
        """Tasks with the same group share one library call."""
        return (self.grades, self.level, self.cut)


def grade_problem(name: str, native_grades: str, metric: Metric, info: GradeInfo) -> str | None:
    """Why the grades of these qrels cannot be bridged exactly for ``metric``, or None."""
    if "gain" not in metric.info.options or native_grades in ("float", "truncate"):
        return None  # binary metrics and the counts are binarised when they must be
    gain = metric.get("gain")
    if gain == "exp" and not info.integral:
        return (f"exp-gain {metric.name} over float grades (e.g. {_example(info)}) is not scale-invariant, and "
                f"{name} takes integer grades only, so no exact bridge exists. Use backend='reference' or 'ranx'.")
    if gain == "exp" and info.max_grade > 30:
        return f"exp gain 2^{info.max_grade:g} - 1 does not fit the integer grades {name} takes."
    values = info.with_gains(metric)  # what the library is handed: grades, or the gains of a gain map
    if not values.integral:
        if metric.name != "nDCG":
            return f"{metric.name} over float grades is not scale-invariant and {name} takes integer grades only."
        if values.decimals is None:
            return (f"float grades or gains need more than {MAX_DECIMALS} decimals to become integers, so {name} "
                    f"(integer grades only) cannot compute {metric} exactly.")
        top = max(values.max_grade, 2 ** info.max_grade - 1 if gain == "exp" else 0)
        if top * 10 ** values.decimals > MAX_INT_GRADE:
            return f"float grades scaled by 10^{values.decimals} exceed the integer range of {name}."
    return None


def _example(info: GradeInfo) -> str:
    return f"grades up to {info.max_grade:g}"


def merge_notes(notes: list[str]) -> list[str]:
    """Merge ``"<metric>: <text>"`` notes with the same text into ``"<text>: m1, m2"``, keeping order."""
    merged: dict[str, list[str]] = {}
    for note in notes:
        head, sep, text = note.partition(": ")
        if sep and not head.startswith(("ir_measures", "scores", "queries", "empty")):
            merged.setdefault(text, []).append(head)
        else:
            merged.setdefault(note, [])
    return [f"{text} [{', '.join(heads)}]" if heads else text for text, heads in merged.items()]


def plan(name: str, metric: Metric, info: GradeInfo, *, grades: str, native_exp: bool,
         graded_level: bool, rr_cutoff: bool, success_cutoff: bool, depth: int,
         binarise: str | None = None, cut_families: frozenset[str] = frozenset()) -> tuple[Task, list[str]]:
    """The :class:`Task` for ``metric`` on backend ``name`` and the bridge notes it needs.

    Args:
        grades: the library's grade handling in the call evalbridge makes (see
            :class:`NativeConventions`).
        native_exp: the library has exp-gain nDCG/DCG.
        graded_level: the library can zero grades below an integer level in nDCG/DCG.
        rr_cutoff: the library has ``RR@k``.
        success_cutoff: the library has ``Success`` without a cutoff.
        depth: the longest ranking (for ``Success`` without a cutoff).
        binarise: why the grades of a binary metric must be binarised even at an integer level
            (e.g. ranx's ``rbp`` weighs documents by their grade), or None.
        cut_families: families the library has without a cutoff only, whose ``@k`` is their value on
            the ranking cut at k (ranx's ``rbp``): the rankings are cut.

    Raises:
        UnsupportedMetricError: no exact bridge exists (see :func:`grade_problem`).
    """
    problem = grade_problem(name, grades, metric, info)
    if problem:
        raise UnsupportedMetricError(f"{metric}: {problem}")
    notes: list[str] = []
    k = metric.k if metric.info.cutoff != "none" else None
    cut = None
    if k is not None and ((metric.name == "RR" and not rr_cutoff) or metric.name in cut_families):
        cut, k = k, None
        notes.append(f"{metric}: rankings cut at {cut} ({name} has no {metric.name} cutoff)")
    if metric.name == "Success" and k is None and not success_cutoff:
        k = max(depth, 1)
        notes.append(f"{metric}: computed as Success@{k}, the depth of the longest ranking")
    if "gain" not in metric.info.options:  # binary metrics, and the counts (any grade will do)
        rel = metric.get("rel") if "rel" in metric.info.options and metric.get("rel") is not None else 1
        integer_grades = info.integral or grades != "int"
        if integral_level(rel) and integer_grades and not binarise:
            return Task(metric, ("raw",), int(rel), k, cut=cut), notes
        why = (f"the level {rel:g} is not an integer >= 1" if not integral_level(rel)
               else f"{name} takes integer grades only" if not integer_grades else binarise)
        notes.append(f"{metric}: grades binarised (1 if grade >= {rel:g}, else 0; negative -1) because {why}")
        return Task(metric, ("binary", rel), 1, k, cut=cut), notes
    gain, rel, gains = metric.get("gain"), metric.get("rel"), metric.get("gains")
    clean = info.integral and not info.negative
    if grades == "truncate":  # ranx Qrels objects: the native call, floats cut by the library itself
        clean = not info.negative
    if clean and gains is None and (gain == "linear" or native_exp) and \
            (rel is None or (graded_level and integral_level(rel))):
        return Task(metric, ("raw",), int(rel) if rel is not None else 1, k, gain=gain, cut=cut), notes
    values = info.with_gains(metric)
    scale = 1
    # values.decimals is None only for grades grade_problem refused above
    if grades == "int" and not values.integral and values.decimals is not None and \
            (gain == "linear" or gains is not None):
        scale = 10 ** values.decimals
    what = "2^grade - 1" if gain == "exp" else "the grade"
    if gains is not None:
        what = f"the gain map {gains}, else {what}"
    note = f"{metric}: grades replaced by their gain ({what}; 0 at or below 0"
    note += f" or below {rel:g})" if rel is not None else ")"
    if scale != 1:
        note += f", times {scale} to make them integers (nDCG is scale-invariant)"
    notes.append(note)
    return Task(metric, ("gain", gain, rel, scale, gains), 0, k, gain="linear", cut=cut), notes


def _transform(grade: float, key: GradeKey) -> float:
    kind = key[0]
    if kind == "binary":
        return 1 if grade >= key[1] else (-1 if grade < 0 else 0)
    _, gain, rel, scale, gains = key
    if rel is not None and grade < rel:
        return 0
    if gains is not None and grade in gains:
        value = gains[grade]
    elif grade <= 0:
        return 0
    else:
        value = 2 ** grade - 1 if gain == "exp" else grade
    if scale != 1:
        return int(round(value * scale))
    return int(value) if float(value).is_integer() else float(value)


def prepare_qrels(qrels: Mapping[str, Mapping[str, float]], key: GradeKey, queries: list[str], *, placeholders: bool,
                  guard_negative: bool = False) -> dict[str, dict[str, Any]]:
    """``qrels`` restricted to ``queries`` (in that order), grades transformed by ``key``.

    Grades become plain ``int`` when integral (pytrec_eval rejects numpy scalars and floats).
    ``guard_negative``: a query whose judgements are all negative gets one grade-0 placeholder
    judgement, which changes no metric (it is never retrieved and not relevant): trec_eval 9
    (pytrec_eval-terrier 0.5.11) reads stale memory for such a query and crashes the process
    (e.g. ``{"q1": {"d": -1}, "q2": {...}}`` with P_5, map, ndcg, bpref, Rprec and num_ret).
    """
    out: dict[str, dict[str, Any]] = {}
    for qid in queries:
        docs = qrels.get(qid, {})
        if key[0] == "raw":
            row = {d: int(g) if float(g).is_integer() else float(g) for d, g in docs.items()}
        else:
            row = {d: _transform(g, key) for d, g in docs.items()}
        if not row and placeholders:
            row = {PLACEHOLDER_JUDGED: 0}
        elif row and guard_negative and not any(g >= 0 for g in row.values()):
            row[PLACEHOLDER_JUDGED] = 0
        out[qid] = row
    return out


def guarded(prepared: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """The queries of prepared qrels that ``guard_negative`` gave a placeholder judgement."""
    return {q for q, row in prepared.items() if PLACEHOLDER_JUDGED in row and len(row) > 1}


def guard_note(queries: set[str]) -> list[str]:
    """The note for :func:`guarded` queries."""
    return [f"{len(queries)} queries whose judgements are all negative given one grade-0 placeholder judgement "
            f"(trec_eval 9 crashes on them)"] if queries else []


def rank_scores(order: Sequence[str]) -> dict[str, float]:
    """Scores ``n..1`` that rank ``order`` as given under any tie rule.

    >>> rank_scores(["b", "a"])
    {'b': 2.0, 'a': 1.0}
    """
    return {doc: float(len(order) - i) for i, doc in enumerate(order)}


def prepare_run(run: Mapping[str, Mapping[str, float]], queries: list[str], *, requested: Settings, native: NativeConventions | None,
                cut: int | None = None, placeholders: bool = True) -> tuple[dict[str, dict[str, float]], int]:
    """Plain run dicts for ``queries`` (in that order) and how many queries were re-scored.

    With ``native`` given (a bridged call), a query whose order the library could get wrong
    (tied scores, at float32 if either side uses it) is re-scored ``n..1`` in the requested
    order. With ``native=None`` (the library's own behaviour) scores are passed as they are,
    and a cut uses ``requested`` (then the library's conventions) to rank.
    """
    if native is not None and requested.ties not in ORDERED_TIES:
        raise UnsupportedMetricError(f"a library ranks tied documents in one order; ties={requested.ties!r} cannot be "
                                     f"bridged to it. Fix: use backend='reference'.")
    out: dict[str, dict[str, float]] = {}
    rescored = 0
    precision = "float32" if "float32" in (requested.score_precision,
                                           native.score_precision if native else "float64") else "float64"
    ties_differ = native is not None and (native.ties != requested.ties or native.ties == "input")
    precision_differs = native is not None and native.score_precision != requested.score_precision
    for qid in queries:
        scores = run.get(qid, {})
        if (ties_differ and has_ties(scores, score_precision=precision)) or \
                (precision_differs and float32_collisions(scores)):
            row = rank_scores(rank(scores, ties=requested.ties, score_precision=requested.score_precision))
            rescored += 1
        elif countOf(map(type, scores.values()), float) == len(scores):  # already floats: copy at C speed
            row = dict(scores)
        else:
            row = {d: float(s) for d, s in scores.items()}
        if cut is not None and len(row) > cut:
            order = rank(row, ties=requested.ties, score_precision=requested.score_precision)[:cut]
            row = {doc: row[doc] for doc in order}
        if not row and placeholders:
            row = {PLACEHOLDER: 0.0}
        out[qid] = row
    return out, rescored


def empty_rankings(values: dict[Metric, dict[str, float]], run: Run, queries: list[str]) -> list[str]:
    """Set the counts of retrieved documents (:data:`COUNTS_RETRIEVED`) of the queries whose ranking
    was empty, and got the placeholder document, back to 0 (in place); the note saying so."""
    empty = [q for q in queries if not run.get(q)]
    counted = [m for m in values if m.name in COUNTS_RETRIEVED]
    for metric in counted:
        for qid in empty:
            if qid in values[metric]:
                values[metric][qid] = 0.0
    return [f"{m}: the placeholder of {len(empty)} empty rankings not counted" for m in counted if empty]


def common_queries(qrels: Qrels, run: Run) -> list[str]:
    """Query ids in both, in qrels order."""
    return [q for q in qrels if q in run]


def depth(run: Run) -> int:
    return max(map(len, run.values()), default=0)


def import_library(backend: str, module: str, install: str) -> ModuleType:
    """Import a backend's library on first use, or say how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise BackendUnavailableError(f"backend {backend!r} needs the {module} library. Fix: {install}") from None


@cache  # reading package metadata costs about 1.5 ms a call, and every evaluate asks
def library_version(*distributions: str) -> str:
    """The installed version of the first of ``distributions`` found, else ``"unknown"``."""
    for distribution in distributions:
        try:
            return distribution_version(distribution)
        except PackageNotFoundError:
            continue
    return "unknown"


# --------------------------------------------------------------------------- capabilities, written once

#: A binary metric at any level > 0 (levels that are not integers are bridged by binarising).
_BINARY: Mapping[str, Any] = {"rel": "positive"}
#: nDCG as trec_eval, ir-measures and ranx have it (exp gain: ranx natively, the others through gains as grades).
_NDCG: Mapping[str, Any] = {"rel": "positive", "gain": ("linear", "exp"), "ideal": ("qrels",), "discount": ("log2",),
                            "gains": "nonnegative"}
#: The families every library backend has, with the same options.
COMMON_CAPABILITIES: Mapping[str, Mapping[str, Any]] = {
    "P": _BINARY, "R": _BINARY, "RR": _BINARY,
    "AP": {"rel": "positive", "norm": ("R",), "weights": ("binary",)},
    "nDCG": _NDCG, "Rprec": _BINARY, "Success": _BINARY, "Bpref": _BINARY,
}
#: What trec_eval 9 computes, as pytrec_eval runs it and ir-measures' pytrec_eval provider asks it.
TREC_EVAL_CAPABILITIES: Mapping[str, Mapping[str, Any]] = {
    **COMMON_CAPABILITIES,
    "infAP": _BINARY,
    "Hits": {"rel": "positive", "cutoff": "none"},
    "F1": {"rel": "positive", "cutoff": "none"},
    "NumRet": {},
    "NumRel": _BINARY,
    "SetP": _BINARY,
    "SetR": _BINARY,
}


# --------------------------------------------------------------------------- the shared compute loop

@dataclass(frozen=True)
class Request:
    """One ``compute`` call on a library backend, as every batch of it sees it.

    Attributes:
        queries: the queries in both the qrels and the run, in qrels order.
        native: the library's own behaviour instead of the bridged one (see :class:`Library`).
    """

    qrels: Qrels
    run: Run
    conventions: Settings
    native: bool
    queries: list[str]


@dataclass(frozen=True)
class Group:
    """Tasks that share one library call: same extra key (:attr:`Library.group`), grades, level and cut."""

    extra: Any
    grades: tuple[Any, ...]
    level: int
    cut: int | None
    tasks: tuple[Task, ...]
    own: NativeConventions  # the library's conventions for these tasks


@dataclass(frozen=True)
class Batch:
    """The inputs of one library call and what to keep of its values.

    Attributes:
        qrels, run: plain dicts over the same queries (the run in the order the library pairs them).
        queries: the queries whose values are kept, in order.
        rescored: queries whose tied scores were replaced by rank-derived ones.
        notes: bridge notes, said of every metric of the group.
        default: value of a query in ``queries`` that the call leaves out (``None``: it gets no value).
    """

    qrels: dict[str, dict[str, Any]]
    run: dict[str, dict[str, float]]
    queries: list[str]
    rescored: int = 0
    notes: tuple[str, ...] = ()
    default: float | None = None


def bridged_batch(request: Request, group: Group, *, guard_negative: bool) -> Batch:
    """The batch most libraries get: the common queries with every bridge (``native=False``), or every qrels
    and run query with only the grade bridges (``native=True``); see :func:`prepare_qrels`, :func:`prepare_run`.
    An empty ranking always gets the placeholder document (pytrec_eval crashes on some, ranx rejects them)."""
    native, own = request.native, group.own
    q_ids, r_ids = (list(request.qrels), list(request.run)) if native else (request.queries, request.queries)
    qrels = prepare_qrels(request.qrels, group.grades, q_ids, placeholders=not native, guard_negative=guard_negative)
    run, rescored = prepare_run(request.run, r_ids, requested=own.conventions if native else request.conventions,
                                native=None if native else own, cut=group.cut, placeholders=True)
    return Batch(qrels, run, q_ids, rescored)


def _default_batches(library: Library, request: Request) -> Callable[[Group], Batch]:
    return lambda group: bridged_batch(request, group, guard_negative=library.guard_negative)


def _no_extra(task: Task, native: bool) -> Any:
    return None


def _no_notes(metrics: Sequence[Metric]) -> list[str]:
    return []


@dataclass(frozen=True)
class Library:
    """A library backend, reduced to its differences; :func:`compute` is the loop they share.

    The loop plans each metric (:attr:`plan`), groups the tasks that share a call, prepares each
    group's inputs (:attr:`batches`), calls the library (:attr:`call`) and gathers the bridge notes.

    Attributes:
        name: the backend name.
        load: imports the library (or raises :class:`~evalbridge.errors.BackendUnavailableError`).
        native: the library's conventions for a metric (ir-measures: its provider's).
        plan: ``(metric, grade facts, depth of the longest ranking, native) -> (task, notes)``: the
            library's options for :func:`plan`.
        call: ``(library module, group, batch) -> metric -> query id -> value``: the call into the library.
        group: an extra key that splits tasks into separate calls (ir-measures: the provider; ranx: bpref).
        batches: ``(library, request) -> (group -> batch)``, built once per call (state shared by its
            groups lives in the closure); default :func:`bridged_batch`.
        guard_negative: give all-negative queries a grade-0 judgement (trec_eval 9 crashes on them).
        empty_note: the note when a query has no judgement (or, with ``empty_rankings``, no document).
        empty_rankings: an empty ranking is bridged too (counted in ``empty_note``).
        leading_notes: notes said first (ir-measures: the provider of each metric).
    """

    name: str
    load: Callable[[], ModuleType]
    native: Callable[[Metric], NativeConventions]
    plan: Callable[[Metric, GradeInfo, int, bool], tuple[Task, list[str]]]
    call: Callable[[ModuleType, Group, Batch], Mapping[Metric, Mapping[str, float]]]
    group: Callable[[Task, bool], Any] = _no_extra
    batches: Callable[[Library, Request], Callable[[Group], Batch]] = _default_batches
    guard_negative: bool = True
    empty_note: str = "queries with no judgement given one grade-0 placeholder judgement"
    empty_rankings: bool = False
    leading_notes: Callable[[Sequence[Metric]], list[str]] = _no_notes


def compute(library: Library, qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings, *,
            native: bool) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values of ``metrics`` from ``library`` and the notes of every bridge applied: plan, group,
    prepare, call, notes. ``native``: the library's own behaviour (see each backend's ``compute``)."""
    module = library.load()
    info = GradeInfo.of(qrels)
    request = Request(qrels, run, conventions, native, common_queries(qrels, run))
    longest = depth(run)
    notes = library.leading_notes(metrics)
    groups: dict[tuple[Any, ...], list[Task]] = {}
    for metric in metrics:
        task, more = library.plan(metric, info, longest, native)
        notes += more
        groups.setdefault((library.group(task, native), *task.group), []).append(task)
    values: dict[Metric, dict[str, float]] = {m: {} for m in metrics}
    batch_of = library.batches(library, request)
    rescored = 0
    shielded: set[str] = set()
    for (extra, grades, level, cut), members in groups.items():
        group = Group(extra, grades, level, cut, tuple(members), library.native(members[0].metric))
        batch = batch_of(group)
        rescored = max(rescored, batch.rescored)
        if library.guard_negative:
            shielded |= guarded(batch.qrels)
        notes += [f"{task.metric}: {note}" for task in members for note in batch.notes]
        got = library.call(module, group, batch) if batch.run else None
        for task in members:
            per_query = got[task.metric] if got is not None else {}
            values[task.metric] = ({q: per_query[q] for q in batch.queries if q in per_query} if batch.default is None
                                   else {q: per_query.get(q, batch.default) for q in batch.queries})
    if rescored:
        notes.append(f"scores replaced by rank-derived values n..1 in {rescored} queries with tied scores "
                     f"(order: ties {conventions.ties}, {conventions.score_precision})")
    if not native and any(not qrels[q] or (library.empty_rankings and not run[q]) for q in request.queries):
        notes.append(library.empty_note)
    notes += empty_rankings(values, run, list(qrels) if native else request.queries) + guard_note(shielded)
    return values, merge_notes(notes)
