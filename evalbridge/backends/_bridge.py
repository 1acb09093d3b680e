"""What the library backends share: native conventions, the capability check and exact bridges.

A library backend never silently computes something other than what was asked. For each
metric it either says why it cannot (:func:`capability_problem`, :func:`grade_problem`) or
plans a :class:`Task`: the metric as the library can compute it, plus the exact bridges that
make the library's number equal the reference's:

* **rank-derived scores**: a query whose scores tie (at float32 for libraries that store C
  floats) is re-scored ``n, n-1, ..., 1`` in the order :func:`evalbridge.ranking.rank` gives
  under the requested :class:`~evalbridge.model.Conventions`; these values are exact in float32;
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
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as distribution_version
from operator import countOf
from types import ModuleType
from typing import Any

from ..ranking import float32_collisions, has_ties
from ..errors import BackendUnavailableError, UnsupportedMetricError
from ..ranking import rank
from ..metrics.spec import Metric
from ..model import ORDERED_TIES, Conventions, Qrels, Run

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
class NativeConventions:
    """What a library does on its own, when given the data as is.

    Attributes:
        ties: order of tied scores: ``docid_desc`` (trec_eval), ``docid_asc`` (ir-measures'
            msmarco provider) or ``input`` (ranx ``Run``: insertion order for small tie
            groups, arbitrary, numba argsort order, for larger ones).
        score_precision: ``float32`` when the library stores scores as C floats.
        missing_queries: ``drop`` (a qrels query absent from the run gets no value) or ``zero``.
        empty_qrels: ``drop`` when a qrels query with no judgement gets no value, ``zero`` when it gets
            0 without being evaluated (ir-measures' default value), else ``keep`` (evaluated).
        grades: ``int`` (float grades raise), ``truncate`` (float grades silently cut to
            integers, ranx ``Qrels``) or ``float`` (kept).
        level_scope: ``binary`` when a relevance level only affects binary metrics (trec_eval),
            ``all`` when it also zeroes lower grades in nDCG/DCG (ranx ``-lN``).
        notes: other documented behaviours, for the differences table.
    """

    ties: str = "docid_desc"
    score_precision: str = "float64"
    missing_queries: str = "zero"
    empty_qrels: str = "keep"
    grades: str = "int"
    level_scope: str = "binary"
    notes: tuple[str, ...] = ()

    @property
    def conventions(self) -> Conventions:
        """The reference's :class:`Conventions` that emulate this library."""
        return Conventions(ties=self.ties, score_precision=self.score_precision,
                           missing_queries=self.missing_queries)


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


def capability_problem(name: str, capabilities: Mapping[str, Mapping[str, Any]], metric: Metric,
                       missing: Mapping[str, str] | None = None) -> str | None:
    """Why backend ``name`` cannot compute ``metric`` (by its declared capabilities), or None.

    ``capabilities`` maps a metric family to option -> allowed values, or to a marker: ``rel``
    ``"positive"`` (any level > 0), ``p`` ``"fraction"`` (written ``0.xx``), ``gains``
    ``"nonnegative"`` (no negative gain); ``"cutoff": "none"`` means the library has the family
    over the whole ranking only. An option not listed must keep its default. A metric that weighs
    documents by their grade (``weights`` other than ``binary``) cannot take a level that is not an
    integer, since the level bridge binarises the grades.
    """
    caps = capabilities.get(metric.name)
    if caps is None:
        reason = (missing or {}).get(metric.name)
        return reason or f"{name} has no {metric.info.title} ({metric.name})."
    rel = dict(metric.options).get("rel")
    weighs_grades = "weights" in metric.info.options and metric.get("weights") != "binary"
    if weighs_grades and rel is not None and not _integral_level(rel):
        return (f"{name} takes integer relevance levels, and {metric} weighs documents by their grade, so "
                f"the level {rel:g} cannot be bridged by binarising the grades.")
    if caps.get("cutoff") == "none" and metric.k is not None:
        return (f"{name} computes {metric.name} over the whole ranking only (trec_eval's set measures), "
                f"not {metric.name}@{metric.k}.")
    for option, value in metric.options:
        allowed = caps.get(option)
        if option == "rel" and allowed == "positive":
            if value <= 0:
                return (f"a relevance level of {value:g} (<= 0) cannot be expressed in {name}: it would count "
                        f"unjudged documents as relevant.")
            continue
        if allowed is None:
            return f"{name} cannot compute {metric.name} with {option}={value}."
        if allowed == "fraction":  # a persistence a library reads from its digits after "0."
            if not repr(float(value)).startswith("0."):
                return f"{name} reads {option} from the digits after '0.', so it cannot take {option}={value}."
            continue
        if allowed == "nonnegative":
            if any(gain < 0 for gain in value.values()):
                return (f"negative gains ({option}={value}) cannot be handed to {name} as grades: a negative grade "
                        f"means \"unjudged\" there, and the ideal DCG would change.")
            continue
        if value not in allowed:
            return (f"{name} computes {metric.name} with {option} in {{{', '.join(map(str, allowed))}}} only, "
                    f"not {option}={value}.")
    return None


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


def _integral_level(value: float | None) -> bool:
    return value is not None and float(value).is_integer() and value >= 1


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
        if _integral_level(rel) and integer_grades and not binarise:
            return Task(metric, ("raw",), int(rel), k, cut=cut), notes
        why = (f"the level {rel:g} is not an integer >= 1" if not _integral_level(rel)
               else f"{name} takes integer grades only" if not integer_grades else binarise)
        notes.append(f"{metric}: grades binarised (1 if grade >= {rel:g}, else 0; negative -1) because {why}")
        return Task(metric, ("binary", rel), 1, k, cut=cut), notes
    gain, rel, gains = metric.get("gain"), metric.get("rel"), metric.get("gains")
    clean = info.integral and not info.negative
    if grades == "truncate":  # ranx Qrels objects: the native call, floats cut by the library itself
        clean = not info.negative
    if clean and gains is None and (gain == "linear" or native_exp) and \
            (rel is None or (graded_level and _integral_level(rel))):
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


def prepare_run(run: Mapping[str, Mapping[str, float]], queries: list[str], *, requested: Conventions, native: NativeConventions | None,
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
