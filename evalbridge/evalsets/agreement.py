"""Agreement between two sets of relevance judgements: human assessors and an LLM judge, two prompts,
two judges.

Two questions, two functions:

* :func:`agreement`: do the two judges give the same grades? Over the (query, doc) pairs that both
  judged: the confusion table of grades, Cohen's kappa (plain and quadratic-weighted), Krippendorff's
  alpha, the agreement on each grade, and the kappa of the binary decision "relevant at the level".
  Pairs judged by only one side are counted, never compared.
* :func:`~evalbridge.evalsets.ranking_agreement.ranking_agreement`: do the two sets of judgements rank the systems
  the same way? Per metric, Kendall's tau and tau_ap between the orderings of the systems by their mean, and how
  many significant differences between two systems flip from one set of judgements to the other.

:func:`agree` does both from two qrels and some runs; it is what ``evalbridge agree`` prints. The measures over
a confusion table (kappa, Krippendorff's alpha) are in :mod:`evalbridge.stats.kappa`; the tables are shown by
:mod:`evalbridge.views.agreement_tables`.

Example:
    >>> human = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 1, "d5": 0}}
    >>> judge = {"q1": {"d1": 2, "d2": 1, "d3": 1}, "q2": {"d4": 1, "d6": 2}}
    >>> result = agreement(human, judge, names=("human", "llm"))
    >>> result.shared_pairs, result.only_in_a, result.only_in_b
    (4, 1, 1)
    >>> round(result.cohen_kappa, 4), round(result.weighted_kappa, 4)  # p_o = 3/4, p_e = 7/16
    (0.5556, 0.6667)
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.json_data import json_ready
from ..views.table import Shown, number
from ..stats.kappa import ALPHA_LEVELS, cohen_kappa, krippendorff_alpha
from ..common.parameters import check_choice
from ..stats.statistics import Statistics, statistics_for
from .ranking_agreement import USES, WHY, RankingAgreement, check_names, ranking_agreement

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from typing_extensions import Unpack

    from ..model.data import Qrels
    from ..evaluation.results import Results
    from ..model.settings import Keywords, Settings

__all__ = ["agreement", "agree", "JudgeAgreement", "Agreement", "check_thresholds", "DEFAULT_METRICS",
           "MAX_CATEGORIES"]

#: the most categories a grade scale may have (integer grades 0-100 fit); beyond, group grades with ``bins``
MAX_CATEGORIES = 101
#: metrics :func:`agree` evaluates when none are given
DEFAULT_METRICS = ("nDCG@10", "P@10", "AP")


# -- judge agreement ------------------------------------------------------------------------------------

def check_thresholds(bins: Sequence[float] | None, what: str) -> tuple[float, ...] | None:
    """``bins`` as a tuple of strictly increasing finite thresholds (None stays None), else InputError."""
    if bins is None:
        return None
    if isinstance(bins, (str, bytes)) or not isinstance(bins, Iterable):
        raise InputError(f"{what} must be a list of thresholds; got {bins!r}.", fix=f"e.g. {what}=[2.5, 5, 7.5].")
    edges = tuple(bins)
    if not edges or any(isinstance(e, bool) or not isinstance(e, (int, float)) or not math.isfinite(e)
                        for e in edges):
        raise InputError(f"{what} must hold at least one finite number; got {list(edges)!r}.",
                         fix=f"e.g. {what}=[2.5, 5, 7.5]: grades below 2.5 are category 0, from 7.5 up 3.")
    if any(b <= a for a, b in zip(edges, edges[1:])):
        raise InputError(f"{what} must be strictly increasing; got {list(edges)!r}.")
    if len(edges) + 1 > MAX_CATEGORIES:
        raise InputError(f"{what} makes {len(edges) + 1} categories, more than {MAX_CATEGORIES}.")
    return edges


def _threshold_labels(edges: tuple[float, ...]) -> tuple[str, ...]:
    inner = tuple(f"[{low:g}, {high:g})" for low, high in zip(edges, edges[1:]))
    return (f"<{edges[0]:g}", *inner, f">={edges[-1]:g}")


@dataclass(frozen=True)
class _Scale:
    """How one judge's grades become categories: integer grades as they are (``edges`` None), or the
    number of thresholds a grade reaches (``edges`` = (t_1 < ... < t_m): category i for t_i <= g < t_i+1)."""

    edges: tuple[float, ...] | None
    low: int
    high: int

    def categories(self, grades: Any) -> Any:
        import numpy as np

        if self.edges is None:
            return np.asarray(grades, dtype="float64").astype("int64")
        return np.searchsorted(np.asarray(self.edges, dtype="float64"), np.asarray(grades, dtype="float64"),
                               side="right")

    def label(self, value: int) -> str:
        if self.edges is None or not 0 <= value <= len(self.edges):
            return str(value)
        return _threshold_labels(self.edges)[value]

    def describe(self) -> str:
        if self.edges is None:
            return f"grades as they are ({self.low} to {self.high})"
        if len(self.edges) == 1:
            return f"relevant from grade {self.edges[0]:g} (2 categories)"
        return f"binned at {', '.join(f'{e:g}' for e in self.edges)} ({len(self.edges) + 1} categories)"


def _first_non_integral(qrels: Qrels) -> tuple[str, str, float]:
    """The first (query, doc, grade) whose grade is not a whole number (the qrels hold one)."""
    return next((qid, doc, grade) for qid in qrels for doc, grade in qrels[qid].items()
                if not float(grade).is_integer())


def _scale(qrels: Qrels, edges: tuple[float, ...] | None, name: str, level: float | None,
           bins_name: str) -> _Scale:
    """The scale of one judge; ``level``: binarise there when the grades are not integers (else refuse)."""
    if edges is not None:
        return _Scale(edges, 0, len(edges))
    if qrels.is_integral:
        grades = [int(g) for g in qrels.grades]
        return _Scale(None, min(grades), max(grades))
    if level is not None:
        return _Scale((float(level),), 0, 1)
    qid, doc, grade = _first_non_integral(qrels)
    raise InputError(
        f"the judgements {name!r} hold non-integer grades (e.g. {grade!r} for doc {doc!r}), so they have no "
        f"categories to compare.", query_id=qid,
        fix=f"pass {bins_name}=[...] to group the grades (thresholds: {bins_name}=[2.5, 5, 7.5] makes 4 "
            f"categories of a 0-10 scale), or min_relevance=... to compare relevant / not relevant.")


@dataclass(frozen=True)
class JudgeAgreement(Shown):
    """How well two sets of judgements agree on the (query, doc) pairs that both judged.

    Attributes:
        names: what the two judgement sets are called in every rendering (``("a", "b")`` by default).
        shared_pairs: (query, doc) pairs judged by both; every measure below is over them.
        only_in_a, only_in_b: pairs judged by one side only (counted, never compared).
        shared_queries: queries with at least one judgement on each side.
        queries_only_in_a, queries_only_in_b: queries judged by one side only.
        categories: the category values of the grade scale (integer grades, or bin indices 0..m).
        labels_a, labels_b: how each side's categories read (``"2"``, ``"[2.5, 5)"``).
        scale_a, scale_b: how each side's grades became categories, in words.
        confusion: pairs per (category under a, category under b): rows a, columns b.
        observed_agreement: share of shared pairs in the same category.
        cohen_kappa: Cohen's kappa (see :func:`cohen_kappa`).
        weighted_kappa: quadratic-weighted kappa.
        krippendorff_alpha: Krippendorff's alpha at ``alpha_level`` (see :func:`krippendorff_alpha`).
        alpha_level: ``nominal``, ``ordinal`` or ``interval``.
        mean_difference: mean of (category under b - category under a): > 0 when b grades higher.
        level_a, level_b: relevance level of each side (grade >= level is relevant).
        binary_confusion: 2 x 2 table of (relevant under a, relevant under b), index 0 = not relevant.
        binary_kappa: Cohen's kappa of that table.
        notes: anything the reader should know (e.g. scales of different sizes).
        qrels: the two judgement sets (for :meth:`pairs`; not compared, not rendered).
    """

    names: tuple[str, str]
    shared_pairs: int
    only_in_a: int
    only_in_b: int
    shared_queries: int
    queries_only_in_a: tuple[str, ...]
    queries_only_in_b: tuple[str, ...]
    categories: tuple[int, ...]
    labels_a: tuple[str, ...]
    labels_b: tuple[str, ...]
    scale_a: str
    scale_b: str
    confusion: tuple[tuple[int, ...], ...]
    observed_agreement: float
    cohen_kappa: float
    weighted_kappa: float
    krippendorff_alpha: float
    alpha_level: str
    mean_difference: float
    level_a: float
    level_b: float
    binary_confusion: tuple[tuple[int, int], tuple[int, int]]
    binary_kappa: float
    notes: tuple[str, ...] = ()
    qrels: tuple[Any, Any] = field(default=(None, None), repr=False, compare=False)
    scales: tuple[Any, Any] = field(default=(None, None), repr=False, compare=False)

    @property
    def binary_agreement(self) -> float:
        """Share of shared pairs that both sides call relevant, or both not relevant."""
        (nn, nr), (rn, rr) = self.binary_confusion
        total = nn + nr + rn + rr
        return (nn + rr) / total if total else math.nan

    def measures(self) -> dict[str, float]:
        """Every summary number, by name (the columns of :meth:`to_frame`)."""
        return {"shared_pairs": self.shared_pairs, "only_in_a": self.only_in_a, "only_in_b": self.only_in_b,
                "observed_agreement": self.observed_agreement, "cohen_kappa": self.cohen_kappa,
                "weighted_kappa": self.weighted_kappa, "krippendorff_alpha": self.krippendorff_alpha,
                "mean_difference": self.mean_difference, "binary_agreement": self.binary_agreement,
                "binary_kappa": self.binary_kappa}

    def to_frame(self) -> pd.DataFrame:
        """One row (indexed ``"b vs a"``), one column per measure: concatenate several to compare judges."""
        import pandas as pd

        a, b = self.names
        return pd.DataFrame([self.measures()], index=pd.Index([f"{b} vs {a}"], name="judges"))

    def confusion_frame(self) -> pd.DataFrame:
        """The confusion table: rows are a's categories, columns b's (pairs in each cell)."""
        import pandas as pd

        a, b = self.names
        return pd.DataFrame(list(self.confusion), index=pd.Index(self.labels_a, name=a),
                            columns=pd.Index(self.labels_b, name=b))

    def per_grade(self) -> pd.DataFrame:
        """Agreement on each category: pairs a and b put there, pairs both put there, the specific agreement
        2 n_kk / (n_k+ + n_+k), and the kappa of "this category or not" (nan when no one used it)."""
        import pandas as pd

        return pd.DataFrame(self.per_grade_rows()).set_index("category")

    def per_grade_rows(self) -> list[dict[str, Any]]:
        rows = []
        table = self.confusion
        n = self.shared_pairs
        for k, value in enumerate(self.categories):
            in_a, in_b, both = sum(table[k]), sum(row[k] for row in table), table[k][k]
            two_by_two = [[both, in_a - both], [in_b - both, n - in_a - in_b + both]]
            rows.append({"category": value, "label_a": self.labels_a[k], "label_b": self.labels_b[k],
                         "a": in_a, "b": in_b, "both": both,
                         "specific_agreement": 2 * both / (in_a + in_b) if in_a + in_b else math.nan,
                         "kappa": cohen_kappa(two_by_two) if n else math.nan})
        return rows

    def pairs(self) -> pd.DataFrame:
        """Every judged pair: ``query_id, doc_id, grade_a, grade_b, category_a, category_b`` (nan on the side
        that did not judge it), shared pairs first: e.g. ``.query("category_a != category_b")``."""
        import numpy as np
        import pandas as pd

        qrels_a, qrels_b = self.qrels
        scale_a, scale_b = self.scales
        rows = []
        for qid in qrels_a:
            row_b = qrels_b.get(qid, {})
            rows += [(qid, doc, g, row_b.get(doc, math.nan)) for doc, g in qrels_a[qid].items()]
        for qid in qrels_b:
            row_a = qrels_a.get(qid, {})
            rows += [(qid, doc, math.nan, g) for doc, g in qrels_b[qid].items() if doc not in row_a]
        frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "grade_a", "grade_b"])
        for side, scale in (("a", scale_a), ("b", scale_b)):
            grades = frame[f"grade_{side}"].to_numpy(dtype="float64")
            known = ~np.isnan(grades)
            categories = np.zeros(len(frame), dtype="int64")
            categories[known] = scale.categories(grades[known])
            frame[f"category_{side}"] = pd.arrays.IntegerArray(categories, ~known)
        shared = frame["grade_a"].notna() & frame["grade_b"].notna()
        return pd.concat([frame[shared], frame[~shared]], ignore_index=True)

    def per_query(self) -> pd.DataFrame:
        """Per query: shared pairs, pairs only in a / b, and the share of shared pairs in the same category
        (exact) and on the same side of the relevance level (binary); worst queries first."""
        import pandas as pd

        frame = self.pairs()
        shared = frame.dropna(subset=["grade_a", "grade_b"])
        same = (shared["category_a"] == shared["category_b"]).astype("float64")
        binary = ((shared["grade_a"] >= self.level_a) == (shared["grade_b"] >= self.level_b)).astype("float64")
        out = pd.DataFrame({
            "shared": shared.groupby("query_id").size(),
            "only_in_a": frame[frame["grade_b"].isna()].groupby("query_id").size(),
            "only_in_b": frame[frame["grade_a"].isna()].groupby("query_id").size(),
            "observed_agreement": same.groupby(shared["query_id"]).mean(),
            "binary_agreement": binary.groupby(shared["query_id"]).mean(),
        })
        out[["shared", "only_in_a", "only_in_b"]] = out[["shared", "only_in_a", "only_in_b"]].fillna(0).astype("int64")
        out.index.name = "query_id"
        return out.sort_values(["observed_agreement", "shared"], na_position="last")

    def table(self, fmt: str = "terminal") -> str:
        """The summary, the confusion table, the per-category table and the notes, in an output format that writes
        tables (:mod:`evalbridge.views.agreement_tables`)."""
        from ..views.agreement_tables import render_judges

        return render_judges(self, fmt)

    def __repr__(self) -> str:
        a, b = self.names
        return (f"JudgeAgreement({b} vs {a}: {self.shared_pairs} shared pairs, {self.only_in_a} only in {a}, "
                f"{self.only_in_b} only in {b}; kappa {number(self.cohen_kappa)}, quadratic kappa "
                f"{number(self.weighted_kappa)}, alpha ({self.alpha_level}) {number(self.krippendorff_alpha)}, "
                f"binary kappa {number(self.binary_kappa)})")

    def to_dict(self) -> dict[str, Any]:
        """Every field (and :attr:`binary_agreement`) as JSON-ready values (nan becomes None)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        data["binary_agreement"] = self.binary_agreement
        return json_ready(data)


def _level(explicit: float | None, qrels: Qrels) -> float | None:
    """The relevance level set by the caller or carried by the qrels, or None."""
    from ..model.data import check_level

    if explicit is not None:
        return check_level(explicit)
    return qrels.min_relevance


def agreement(qrels_a: Any, qrels_b: Any, *, names: Sequence[str] = ("a", "b"), min_relevance: float | None = None,
              bins: Sequence[float] | None = None, bins_a: Sequence[float] | None = None,
              bins_b: Sequence[float] | None = None, alpha_level: str = "ordinal") -> JudgeAgreement:
    """Agreement between two sets of judgements over the (query, doc) pairs both judged.

    Grades become categories, the same way on both sides unless told otherwise:

    * integer grades (``0-3``) are their own categories, every integer from the lowest to the highest
      grade of either side (a grade no one used is an empty row);
    * ``bins`` (or ``bins_a`` / ``bins_b`` for one side, when the two judges use different scales, e.g.
      human 0-3 and LLM 0-10): thresholds t_1 < ... < t_m; a grade g is category i, the number of
      thresholds <= g. ``bins=[1, 2, 3]`` reproduces integer grades 0-3; ``bins_b=[2.5, 5, 7.5]`` maps
      a 0-10 score onto 0-3;
    * non-integer grades (LLM scores) without bins are compared as relevant / not relevant at the
      relevance level (``min_relevance``, or the level the qrels carry); with neither, InputError.

    Args:
        qrels_a, qrels_b: :class:`~evalbridge.model.data.Qrels`, ``{query_id: {doc_id: grade}}``, or any input
            :func:`evalbridge.evaluation.evaluating.as_qrels` reads. ``a`` is the reference (e.g. the human judges).
        names: how the two sides are called in every rendering.
        min_relevance: relevance level of both sides (grade >= level is relevant) for the binary kappa;
            default: each qrels' own ``min_relevance``, else 1.
        bins, bins_a, bins_b: thresholds grouping grades into categories (``bins`` for both sides).
        alpha_level: level of measurement of Krippendorff's alpha: ``ordinal`` (default: grades are ordered
            but their distances are not meaningful), ``interval`` (category values are distances) or ``nominal``.

    Returns:
        :class:`JudgeAgreement`.

    Raises:
        InputError: no pair judged by both, non-integer grades without bins or level, bad thresholds.
    """
    import numpy as np

    from ..evaluation.evaluating import as_qrels

    names = check_names(names)
    check_choice(alpha_level, ALPHA_LEVELS, "alpha_level")
    if bins is not None and (bins_a is not None or bins_b is not None):
        raise InputError("pass either bins (both sides) or bins_a / bins_b (one side each), not both.")
    edges_a = check_thresholds(bins if bins is not None else bins_a, "bins" if bins is not None else "bins_a")
    edges_b = check_thresholds(bins if bins is not None else bins_b, "bins" if bins is not None else "bins_b")
    qa, qb = as_qrels(qrels_a), as_qrels(qrels_b)
    for what, ka, kb in (("query", qa.query_id_kind, qb.query_id_kind), ("doc", qa.doc_id_kind, qb.doc_id_kind)):
        if ka and kb and ka != kb:
            from ..model.ids import kinds_error, seen_ids

            raise kinds_error(what, [(repr(names[0]), ka, seen_ids(qa, what)), (repr(names[1]), kb, seen_ids(qb, what))],
                              fix=f"give both the same id type, e.g. convert every {what} id with str().")
    for name, side in zip(names, (qa, qb)):
        if not side.n_rows:
            shown = f"{len(side)} quer{'y' if len(side) == 1 else 'ies'} without a judgement (e.g. " \
                    f"{', '.join(map(repr, list(side)[:3]))})" if len(side) else "no query"
            raise InputError(f"the judgements {name!r} hold no (query, doc, grade): {shown}; an agreement compares "
                             f"the pairs both sides judged.",
                             fix=f"give {name!r} its judgements (check the file, its format and column names).")
    explicit_a, explicit_b = _level(min_relevance, qa), _level(min_relevance, qb)
    level_a = explicit_a if explicit_a is not None else 1
    level_b = explicit_b if explicit_b is not None else 1
    scale_a = _scale(qa, edges_a, names[0], explicit_a, "bins_a" if bins is None else "bins")
    scale_b = _scale(qb, edges_b, names[1], explicit_b, "bins_b" if bins is None else "bins")
    binarised = [s for s, e in ((scale_a, edges_a), (scale_b, edges_b)) if s.edges is not None and e is None]
    if binarised:  # non-integer grades compared at the level: the other side too, unless it has bins
        if edges_a is None and scale_a.edges is None:
            scale_a = _Scale((float(level_a),), 0, 1)
        if edges_b is None and scale_b.edges is None:
            scale_b = _Scale((float(level_b),), 0, 1)

    grades_a: list[float] = []
    grades_b: list[float] = []
    only_a = only_b = shared_queries = 0
    for qid in qa:
        row_a = qa[qid]
        row_b = qb.get(qid)
        if row_b is None:
            only_a += len(row_a)
            continue
        before = len(grades_a)
        for doc, grade in row_a.items():
            other = row_b.get(doc)
            if other is None:
                only_a += 1
            else:
                grades_a.append(grade)
                grades_b.append(other)
        only_b += len(row_b) - (len(grades_a) - before)
        shared_queries += len(grades_a) > before
    only_b += sum(len(qb[qid]) for qid in qb if qid not in qa)
    if not grades_a:
        raise InputError(f"no (query, doc) pair is judged in both {names[0]!r} ({qa.n_rows} pairs, queries e.g. "
                         f"{', '.join(map(repr, list(qa)[:3]))}) and {names[1]!r} ({qb.n_rows} pairs, queries e.g. "
                         f"{', '.join(map(repr, list(qb)[:3]))}).",
                         fix="check that both judge the same topics and documents, with the same id spelling.")

    cat_a, cat_b = scale_a.categories(grades_a), scale_b.categories(grades_b)
    low, high = min(scale_a.low, scale_b.low), max(scale_a.high, scale_b.high)
    k = high - low + 1
    if k > MAX_CATEGORIES:
        raise InputError(f"the grades span {k} integer categories ({low} to {high}), more than {MAX_CATEGORIES}.",
                         fix="group them with bins=[...] thresholds.")
    table = np.bincount((cat_a - low) * k + (cat_b - low), minlength=k * k).reshape(k, k)
    values = np.arange(low, high + 1)
    rel_a = np.asarray(grades_a, dtype="float64") >= level_a
    rel_b = np.asarray(grades_b, dtype="float64") >= level_b
    binary = np.bincount(rel_a.astype("int64") * 2 + rel_b, minlength=4).reshape(2, 2)

    notes = []
    if (scale_a.low, scale_a.high) != (scale_b.low, scale_b.high):
        notes.append(f"the two scales differ ({names[0]}: {scale_a.low} to {scale_a.high}, {names[1]}: "
                     f"{scale_b.low} to {scale_b.high} categories); kappa and alpha compare category numbers, "
                     f"so map one scale onto the other with bins_a / bins_b if they do not mean the same.")
    if binarised:
        notes.append("non-integer grades without bins: both sides are compared as relevant / not relevant.")
    for name, edges, explicit in ((names[0], edges_a, explicit_a), (names[1], edges_b, explicit_b)):
        if edges is not None and explicit is None:
            notes.append(f"the relevance level of {name} is the default 1 on binned grades: give it its own "
                         f"(eb.Qrels(..., min_relevance=...)) or pass min_relevance for the binary kappa.")
    return JudgeAgreement(
        names=names, shared_pairs=len(grades_a), only_in_a=only_a, only_in_b=only_b, shared_queries=shared_queries,
        queries_only_in_a=tuple(q for q in qa if q not in qb), queries_only_in_b=tuple(q for q in qb if q not in qa),
        categories=tuple(int(v) for v in values), labels_a=tuple(scale_a.label(int(v)) for v in values),
        labels_b=tuple(scale_b.label(int(v)) for v in values), scale_a=scale_a.describe(),
        scale_b=scale_b.describe(), confusion=tuple(tuple(int(x) for x in row) for row in table),
        observed_agreement=float(np.trace(table)) / len(grades_a), cohen_kappa=cohen_kappa(table),
        weighted_kappa=cohen_kappa(table, weights="quadratic"),
        krippendorff_alpha=krippendorff_alpha(table, level=alpha_level, values=values), alpha_level=alpha_level,
        mean_difference=float(np.mean(cat_b - cat_a)), level_a=level_a, level_b=level_b,
        binary_confusion=((int(binary[0, 0]), int(binary[0, 1])), (int(binary[1, 0]), int(binary[1, 1]))),
        binary_kappa=cohen_kappa(binary), notes=tuple(notes), qrels=(qa, qb), scales=(scale_a, scale_b))


# -- both at once ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement(Shown):
    """What :func:`agree` returns: the judge agreement and the ranking agreement, rendered together.

    Attributes:
        judges: :class:`JudgeAgreement` of the two sets of judgements.
        ranking: :class:`RankingAgreement` of the runs (no rows when no runs were given).
        results_a, results_b: run name -> :class:`~evalbridge.evaluation.results.Results` under each set of judgements.
    """

    judges: JudgeAgreement
    ranking: RankingAgreement
    results_a: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    results_b: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def table(self, fmt: str = "terminal") -> str:
        """The judge agreement's tables, then the ranking agreement's, in an output format that writes tables."""
        from ..views.agreement_tables import render_both

        return render_both(self, fmt)

    def __repr__(self) -> str:
        return f"Agreement({self.judges!r}, {self.ranking!r})"

    def to_dict(self) -> dict[str, Any]:
        """``{"judges": {...}, "ranking": {...}, "means": {side: {run: {metric: mean}}}}``, JSON-ready."""
        a, b = self.judges.names
        means = {side: {name: res.means for name, res in results.items()}
                 for side, results in ((a, self.results_a), (b, self.results_b))}
        return json_ready({"judges": self.judges.to_dict(), "ranking": self.ranking.to_dict(), "means": means})

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def render(self, fmt: str = "text") -> str:
        """The whole agreement as ``text``, ``markdown`` or ``json`` (see
        :data:`evalbridge.views.agreement_tables.FORMATS`)."""
        from ..views.agreement_tables import render_agreement

        return render_agreement(self, fmt)


def agree(qrels_a: Any, qrels_b: Any, runs: Mapping[str, Any] | None = None,
          metrics: str | Iterable[str] = DEFAULT_METRICS, *, names: Sequence[str] = ("a", "b"),
          bins: Sequence[float] | None = None, bins_a: Sequence[float] | None = None,
          bins_b: Sequence[float] | None = None, alpha_level: str = "ordinal", statistics: Statistics | None = None,
          test: str | None = None, alpha: float | None = None, n_resamples: int | None = None,
          seed: int | None = None, settings: Settings | None = None,
          **keywords: Unpack[Keywords]) -> Agreement:
    """Judge agreement of two sets of judgements and, with runs, the agreement of the system rankings.

    Every run is evaluated under both sets of judgements with :func:`evalbridge.evaluate` (same metrics,
    backend and settings), then compared with :func:`ranking_agreement`.

    Args:
        qrels_a, qrels_b: the two sets of judgements (anything :func:`agreement` reads); a is the reference.
        runs: run name -> run (a :class:`~evalbridge.model.data.Run`, a dict of dicts, a path); none: only
            the judge agreement.
        metrics: the metrics the systems are ranked by.
        names, bins, bins_a, bins_b, alpha_level: see :func:`agreement`.
        settings, **keywords: the settings of both evaluations (:class:`~evalbridge.model.settings.Settings`, whole or
            as keywords), as :func:`evalbridge.evaluate`; ``min_relevance`` is also the level of the judges'
            binary kappa (:func:`agreement`; default: each qrels' own, else 1), ``ids`` and ``duplicates``
            read the inputs given as files.
        statistics: the tests of the rankings (:class:`~evalbridge.Statistics`); ``test``, ``alpha``, ``n_resamples``
            and ``seed`` given replace its fields (see :func:`ranking_agreement`). Its tests are two-sided and
            Holm-corrected, without interval: ``sides=1``, another correction, ``test='wilcoxon'``, a ``confidence``
            or ``ci_method`` away from its default are refused, not ignored.

    Returns:
        :class:`Agreement`; ``.render("text" | "markdown" | "json")``.
    """
    from ..evaluation.evaluating import as_qrels, as_run, evaluate
    from ..model.settings import settings_of

    chosen = settings_of(settings, keywords)
    min_relevance = chosen.min_relevance
    names = check_names(names)
    tests = statistics_for("agree", statistics, {"test": test, "alpha": alpha, "n_resamples": n_resamples,
                                                 "seed": seed}, uses=USES, why=WHY)
    chosen_tests = tests.keywords("test", "alpha", "n_resamples", "seed")
    if runs is not None and not isinstance(runs, Mapping):
        raise InputError(f"runs must map a name to each run; got {type(runs).__name__}.",
                         fix='e.g. runs={"bm25": "run.bm25.txt", "splade": splade_run}.')
    qa, qb = as_qrels(qrels_a, ids=chosen.ids), as_qrels(qrels_b, ids=chosen.ids)
    judges = agreement(qa, qb, names=names, min_relevance=min_relevance, bins=bins, bins_a=bins_a, bins_b=bins_b,
                       alpha_level=alpha_level)
    from ..io.datasets import with_official

    metrics = with_official(metrics, qrels_a, qrels_b)[0] if runs else metrics  # "official": the dataset's measures
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    results_a: dict[str, Any] = {}
    results_b: dict[str, Any] = {}
    for name, run in (runs or {}).items():
        run = as_run(run, ids=chosen.ids, duplicates=chosen.duplicates)
        for qrels, results in ((qa, results_a), (qb, results_b)):
            results[name] = evaluate(qrels, run, asked, settings=chosen)
    if results_a:
        ranking = ranking_agreement(results_a, results_b, metrics=asked, names=names, **chosen_tests)
    else:
        ranking = RankingAgreement(rows=(), names=names, **chosen_tests)
    return Agreement(judges=judges, ranking=ranking, results_a=results_a, results_b=results_b)
