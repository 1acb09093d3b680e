"""Agreement between two sets of relevance judgements: human assessors and an LLM judge, two prompts,
two judges.

Two questions, two functions:

* :func:`agreement`: do the two judges give the same grades? Over the (query, doc) pairs that both
  judged: the confusion table of grades, Cohen's kappa (plain and quadratic-weighted), Krippendorff's
  alpha, the agreement on each grade, and the kappa of the binary decision "relevant at the level".
  Pairs judged by only one side are counted, never compared.
* :func:`ranking_agreement`: do the two sets of judgements rank the systems the same way? Per metric,
  Kendall's tau and tau_ap between the orderings of the systems by their mean, and how many significant
  differences between two systems flip from one set of judgements to the other.

:func:`agree` does both from two qrels and some runs; it is what ``evalbridge agree`` prints.

Krippendorff's alpha is computed here from the coincidence matrix (the formula is in
:func:`krippendorff_alpha`) rather than with the ``krippendorff`` package from PyPI: that package is
GPL-3.0 and evalbridge is Apache-2.0, so it is only a test dependency, and the tests check that both
give the same alpha at every level of measurement.

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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from itertools import combinations
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..metrics.spec import parse_metric
from .paired_tests import holm, paired_t_test, randomization_test
from .system_order import kendall_tau as _kendall_tau, tau_ap

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from typing_extensions import Unpack

    from ..model import Qrels
    from ..results import Results
    from ..settings import Keywords, Settings

__all__ = ["agreement", "ranking_agreement", "agree", "JudgeAgreement", "RankingAgreement",
           "MetricRankingAgreement", "PairOutcome", "Agreement", "cohen_kappa", "krippendorff_alpha",
           "tau_ap", "check_thresholds", "ALPHA_LEVELS", "KAPPA_WEIGHTS", "TESTS", "OUTCOMES", "FORMATS",
           "DEFAULT_METRICS", "MAX_CATEGORIES"]

#: the most categories a grade scale may have (integer grades 0-100 fit); beyond, group grades with ``bins``
MAX_CATEGORIES = 101
#: metrics :func:`agree` evaluates when none are given
DEFAULT_METRICS = ("nDCG@10", "P@10", "AP")


def _check_choice(value: object, allowed: Iterable[str], what: str) -> None:
    """Refuse a value that is not one of the names of a table (test, format, level...)."""
    names = list(allowed)
    if value not in names:
        raise InputError(f"unknown {what} {value!r}; choose one of {', '.join(map(repr, names))}.")


# -- agreement measures over a confusion table -------------------------------------------------------

def _disagreement_none(i: Any, j: Any) -> Any:
    return (i != j).astype("float64")


def _disagreement_linear(i: Any, j: Any) -> Any:
    return abs(i - j).astype("float64")


def _disagreement_quadratic(i: Any, j: Any) -> Any:
    return ((i - j) ** 2).astype("float64")


#: kappa weighting -> disagreement weight w_ij of categories i and j (their positions on the scale)
KAPPA_WEIGHTS: Mapping[str, Callable[[Any, Any], Any]] = {
    "none": _disagreement_none, "linear": _disagreement_linear, "quadratic": _disagreement_quadratic,
}


def _square(confusion: Any) -> np.ndarray:
    import numpy as np

    table = np.asarray(confusion, dtype="float64")
    if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] == 0:
        raise InputError(f"a confusion table must be square (k x k, k >= 1); got shape {table.shape}.",
                         fix="rows are the categories of judge a, columns the same categories of judge b.")
    if not np.isfinite(table).all() or (table < 0).any():
        raise InputError("a confusion table holds counts: finite numbers >= 0.")
    return table


def cohen_kappa(confusion: Any, *, weights: str = "none") -> float:
    """Cohen's kappa of a k x k confusion table (rows: judge a, columns: judge b, same ordered categories).

    With n_ij the pairs put in category i by a and j by b, n the total, n_i+ and n_+j the margins and
    disagreement weights w_ij:

        kappa_w = 1 - (sum_ij w_ij n_ij) / (sum_ij w_ij n_i+ n_+j / n)

    ``weights="none"`` (w_ij = 1 for i != j, 0 on the diagonal) is Cohen's (1960) kappa,
    (p_o - p_e) / (1 - p_e) with p_o = sum_i n_ii / n and p_e = sum_i n_i+ n_+i / n^2;
    ``linear`` (w_ij = |i - j|) and ``quadratic`` (w_ij = (i - j)^2) are Cohen's (1968) weighted kappa,
    i and j being the positions of the categories on the scale. nan when the expected disagreement is 0
    (both judges put every pair in the same single category, or the table is empty).

    >>> cohen_kappa([[20, 5], [10, 15]])  # p_o = 0.7, p_e = 0.5
    0.4
    """
    import numpy as np

    _check_choice(weights, KAPPA_WEIGHTS, "kappa weights")
    table = _square(confusion)
    n = float(table.sum())
    index = np.arange(table.shape[0])
    w = KAPPA_WEIGHTS[weights](index[:, None], index[None, :])
    expected = float((w * np.outer(table.sum(axis=1), table.sum(axis=0))).sum()) / n if n else 0.0
    if expected == 0:
        return math.nan
    return 1.0 - float((w * table).sum()) / expected


def _delta_nominal(values: Any, counts: Any) -> Any:
    return (values[:, None] != values[None, :]).astype("float64")


def _delta_ordinal(values: Any, counts: Any) -> Any:
    import numpy as np

    cumulative = np.concatenate(([0.0], np.cumsum(counts)))
    low = np.minimum.outer(np.arange(len(counts)), np.arange(len(counts)))
    high = np.maximum.outer(np.arange(len(counts)), np.arange(len(counts)))
    between = cumulative[high + 1] - cumulative[low]  # sum of n_g for g from low to high
    return (between - (counts[:, None] + counts[None, :]) / 2) ** 2


def _delta_interval(values: Any, counts: Any) -> Any:
    return (values[:, None] - values[None, :]) ** 2


#: level of measurement -> squared difference delta^2(c, k) of two categories (values, counts n_c)
ALPHA_LEVELS: Mapping[str, Callable[[Any, Any], Any]] = {
    "nominal": _delta_nominal, "ordinal": _delta_ordinal, "interval": _delta_interval,
}


def krippendorff_alpha(confusion: Any, *, level: str = "ordinal", values: Iterable[float] | None = None) -> float:
    """Krippendorff's alpha of two judges, from their k x k confusion table (no missing values).

    Each pair judged by both is a unit with two values, so the coincidence matrix is o = C + C^T
    (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"), with n_c = sum_k o_ck and
    n = sum_c n_c = 2 x pairs:

        alpha = 1 - D_o / D_e = 1 - (n - 1) sum_ck o_ck delta^2_ck / sum_ck n_c n_k delta^2_ck

    with delta^2_ck = [c != k] (``nominal``); (v_c - v_k)^2 over the category values v (``interval``);
    (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2 (``ordinal``, ranks only). ``values`` default to 0..k-1.
    nan when D_e = 0 (a single category used).

    >>> a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]  # Krippendorff (2011), binary data, two observers
    >>> b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    >>> table = [[sum(x == i and y == j for x, y in zip(a, b)) for j in (0, 1)] for i in (0, 1)]
    >>> round(krippendorff_alpha(table, level="nominal"), 3)
    0.095
    """
    import numpy as np

    _check_choice(level, ALPHA_LEVELS, "level of measurement")
    table = _square(confusion)
    v = np.arange(table.shape[0], dtype="float64") if values is None else np.asarray(values, dtype="float64")
    if v.shape != (table.shape[0],):
        raise InputError(f"got {v.size} category values for a {table.shape[0]} x {table.shape[0]} table.")
    coincidence = table + table.T
    counts = coincidence.sum(axis=1)
    n = float(counts.sum())
    delta = ALPHA_LEVELS[level](v, counts)
    expected = float((np.outer(counts, counts) * delta).sum())
    if expected == 0 or n < 2:
        return math.nan
    return 1.0 - (n - 1) * float((coincidence * delta).sum()) / expected


# -- judge agreement ------------------------------------------------------------------------------------

def _json_ready(data: dict[str, Any]) -> dict[str, Any]:
    """A dict with nan and inf as None and tuples as lists, for ``json.dumps(allow_nan=False)``."""
    return {key: _clean(value) for key, value in data.items()}


def _clean(value: Any) -> Any:
    """JSON-ready: nan and inf become None, tuples lists."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (tuple, list)):
        return [_clean(v) for v in value]
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def _fmt(value: float, digits: int = 4) -> str:
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


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
class JudgeAgreement:
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

        return pd.DataFrame(self._per_grade_rows()).set_index("category")

    def _per_grade_rows(self) -> list[dict[str, Any]]:
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

    def _summary_rows(self) -> list[tuple[str, str]]:
        a, b = self.names
        rows = [("pairs judged by both", f"{self.shared_pairs} ({self.shared_queries} queries)"),
                (f"pairs only in {a} / only in {b}", f"{self.only_in_a} / {self.only_in_b} (not compared)")]
        if self.queries_only_in_a or self.queries_only_in_b:
            rows.append((f"queries only in {a} / only in {b}",
                         f"{len(self.queries_only_in_a)} / {len(self.queries_only_in_b)}"))
        scale = self.scale_a if self.scale_a == self.scale_b else f"{a}: {self.scale_a}; {b}: {self.scale_b}"
        rows += [("categories", scale),
                 ("exact agreement", _fmt(self.observed_agreement)),
                 ("Cohen's kappa", _fmt(self.cohen_kappa)),
                 ("quadratic-weighted kappa", _fmt(self.weighted_kappa)),
                 (f"Krippendorff's alpha ({self.alpha_level})", _fmt(self.krippendorff_alpha)),
                 (f"mean difference ({b} - {a})", "nan" if math.isnan(self.mean_difference)
                  else f"{self.mean_difference:+.4f} categories"),
                 (f"relevant ({a} >= {self.level_a:g}, {b} >= {self.level_b:g})",
                  f"agreement {_fmt(self.binary_agreement)}, kappa {_fmt(self.binary_kappa)}")]
        return rows

    def _tables(self, fmt: str) -> list[tuple[str, str]]:
        from tabulate import tabulate

        a, b = self.names
        confusion = [[label, *row] for label, row in zip(self.labels_a, self.confusion)]
        per_grade = [[r["label_a"] if r["label_a"] == r["label_b"] else f"{r['label_a']} / {r['label_b']}",
                      r["a"], r["b"], r["both"], _fmt(r["specific_agreement"]), _fmt(r["kappa"])]
                     for r in self._per_grade_rows()]
        right = ("right",) * max(len(self.labels_b), 5)
        return [(f"Confusion (rows: {a}, columns: {b})",
                 tabulate(confusion, headers=[f"{a} \\ {b}", *self.labels_b], tablefmt=fmt, disable_numparse=True,
                          colalign=("left", *right[:len(self.labels_b)]))),
                ("Per category", tabulate(per_grade, headers=["category", a, b, "both", "specific agreement", "kappa"],
                                          tablefmt=fmt, disable_numparse=True, colalign=("left", *right[:5])))]

    def to_markdown(self) -> str:
        """A Markdown section: the summary, the confusion table, the per-category table, the notes."""
        from tabulate import tabulate

        a, b = self.names
        parts = [f"### Agreement of {b} with {a}",
                 tabulate(self._summary_rows(), headers=["", ""], tablefmt="github", disable_numparse=True)]
        for title, table in self._tables("github"):
            parts += [f"**{title}**", table]
        parts += [f"- {note}" for note in self.notes]
        return "\n\n".join(parts) + "\n"

    def __str__(self) -> str:
        from tabulate import tabulate

        a, b = self.names
        parts = [f"Agreement of {b} with {a}", tabulate(self._summary_rows(), tablefmt="plain", disable_numparse=True)]
        for title, table in self._tables("simple"):
            parts += [f"{title}\n{table}"]
        parts += [f"note: {note}" for note in self.notes]
        return "\n\n".join(parts)

    def _repr_html_(self) -> str:
        from html import escape

        from tabulate import tabulate

        a, b = self.names
        parts = [f"<h4>Agreement of {escape(b)} with {escape(a)}</h4>",
                 tabulate(self._summary_rows(), tablefmt="html", disable_numparse=True)]
        for title, table in self._tables("html"):
            parts.append(f"<p><b>{escape(title)}</b></p>{table}")
        parts += [f"<p>{escape(note)}</p>" for note in self.notes]
        return "\n".join(parts)

    def __repr__(self) -> str:
        a, b = self.names
        return (f"JudgeAgreement({b} vs {a}: {self.shared_pairs} shared pairs, {self.only_in_a} only in {a}, "
                f"{self.only_in_b} only in {b}; kappa {_fmt(self.cohen_kappa)}, quadratic kappa "
                f"{_fmt(self.weighted_kappa)}, alpha ({self.alpha_level}) {_fmt(self.krippendorff_alpha)}, "
                f"binary kappa {_fmt(self.binary_kappa)})")

    def to_dict(self) -> dict[str, Any]:
        """Every field (and :attr:`binary_agreement`) as JSON-ready values (nan becomes None)."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.compare}
        data["binary_agreement"] = self.binary_agreement
        return _json_ready(data)


def _check_names(names: Sequence[str]) -> tuple[str, str]:
    pair = tuple(names)
    if len(pair) != 2 or not all(isinstance(n, str) and n for n in pair) or pair[0] == pair[1]:
        raise InputError(f"names must be two different non-empty strings; got {names!r}.",
                         fix='e.g. names=("human", "llm").')
    return pair[0], pair[1]


def _level(explicit: float | None, qrels: Qrels) -> float | None:
    """The relevance level set by the caller or carried by the qrels, or None."""
    from ..model import check_level

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
        qrels_a, qrels_b: :class:`~evalbridge.model.Qrels`, ``{query_id: {doc_id: grade}}``, or any input
            :func:`evalbridge.evaluation.as_qrels` reads. ``a`` is the reference (e.g. the human judges).
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

    from ..evaluation import as_qrels

    names = _check_names(names)
    _check_choice(alpha_level, ALPHA_LEVELS, "alpha_level")
    if bins is not None and (bins_a is not None or bins_b is not None):
        raise InputError("pass either bins (both sides) or bins_a / bins_b (one side each), not both.")
    edges_a = check_thresholds(bins if bins is not None else bins_a, "bins" if bins is not None else "bins_a")
    edges_b = check_thresholds(bins if bins is not None else bins_b, "bins" if bins is not None else "bins_b")
    qa, qb = as_qrels(qrels_a), as_qrels(qrels_b)
    for what, ka, kb in (("query", qa.query_id_kind, qb.query_id_kind), ("doc", qa.doc_id_kind, qb.doc_id_kind)):
        if ka and kb and ka != kb:
            raise InputError(f"{what} ids are {'/'.join(ka)} in {names[0]!r} but {'/'.join(kb)} in {names[1]!r} "
                             f"(e.g. 1 vs '1'); evalbridge does not guess that they are the same ids.",
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


# -- ranking agreement ----------------------------------------------------------------------------------

def _p_t(a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int) -> float:
    return paired_t_test(a, b)


def _p_randomization(a: Sequence[float], b: Sequence[float], n_resamples: int, seed: int) -> float:
    return randomization_test(a, b, n_resamples=n_resamples, seed=seed)


#: test name -> two-sided p-value of a paired test (a, b, n_resamples, seed)
TESTS: Mapping[str, Callable[[Sequence[float], Sequence[float], int, int], float]] = {
    "t": _p_t, "randomization": _p_randomization,
}
#: (significant under a, significant under b, signs opposite) -> what happened to the pair
OUTCOMES: Mapping[tuple[bool, bool, bool], str] = {
    (True, True, False): "agree", (True, True, True): "reversed", (True, False, False): "lost",
    (False, True, False): "gained", (False, False, False): "neither",
}


@dataclass(frozen=True)
class PairOutcome:
    """Two systems compared on one metric under each set of judgements.

    ``delta_*`` = mean(system_1) - mean(system_2) over the queries both were evaluated on; ``p_*`` the
    Holm-adjusted p-value (over every pair of that metric under that set of judgements); ``outcome``:
    ``agree`` (significant under both, same sign), ``reversed`` (significant under both, opposite signs),
    ``lost`` (significant under a only), ``gained`` (under b only), ``neither``.
    """

    metric: str
    system_1: str
    system_2: str
    delta_a: float
    p_a: float
    significant_a: bool
    delta_b: float
    p_b: float
    significant_b: bool
    outcome: str


@dataclass(frozen=True)
class MetricRankingAgreement:
    """How the two sets of judgements rank the systems on one metric.

    Attributes:
        metric: the metric as asked; ``metric_a`` / ``metric_b`` as each evaluation resolved it.
        systems: the systems, in the order given; ``means_a`` / ``means_b`` their means.
        kendall_tau, kendall_p: Kendall's tau-b between the means and its p-value (scipy).
        tau_ap: AP correlation with a as the truth and b as the estimate; ``tau_ap_symmetric`` the mean of
            both directions (see :func:`tau_ap`).
        pairs: one :class:`PairOutcome` per pair of systems.
    """

    metric: str
    metric_a: str
    metric_b: str
    systems: tuple[str, ...]
    means_a: tuple[float, ...]
    means_b: tuple[float, ...]
    kendall_tau: float
    kendall_p: float
    tau_ap: float
    tau_ap_symmetric: float
    pairs: tuple[PairOutcome, ...]

    def count(self, outcome: str) -> int:
        """Pairs with this outcome (see :data:`OUTCOMES`)."""
        _check_choice(outcome, OUTCOMES.values(), "outcome")
        return sum(p.outcome == outcome for p in self.pairs)

    @property
    def significant_a(self) -> int:
        return sum(p.significant_a for p in self.pairs)

    @property
    def significant_b(self) -> int:
        return sum(p.significant_b for p in self.pairs)

    @property
    def flipped(self) -> int:
        """Pairs significant under one side that are reversed or not significant under the other."""
        return self.count("reversed") + self.count("lost") + self.count("gained")

    @property
    def flipped_share(self) -> float:
        """flipped / pairs significant under a or b (nan when none is)."""
        either = self.flipped + self.count("agree")
        return self.flipped / either if either else math.nan

    def ranking(self, side: str) -> tuple[str, ...]:
        """The systems by mean under ``"a"`` or ``"b"``, best first (equal means in the order given)."""
        means = {"a": self.means_a, "b": self.means_b}.get(side)
        if means is None:
            raise InputError(f"side must be 'a' or 'b'; got {side!r}.")
        order = sorted(range(len(self.systems)), key=lambda i: -means[i])
        return tuple(self.systems[i] for i in order)

    def summary(self) -> dict[str, Any]:
        """The row of :meth:`RankingAgreement.to_frame`."""
        return {"metric": self.metric, "systems": len(self.systems), "kendall_tau": self.kendall_tau,
                "kendall_p": self.kendall_p, "tau_ap": self.tau_ap, "tau_ap_symmetric": self.tau_ap_symmetric,
                "significant_a": self.significant_a, "significant_b": self.significant_b,
                "agree": self.count("agree"), "reversed": self.count("reversed"), "lost": self.count("lost"),
                "gained": self.count("gained"), "flipped_share": self.flipped_share}


def _check_significance(test: object, alpha: object) -> None:
    _check_choice(test, TESTS, "test")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise InputError(f"alpha (the significance level) must be a number between 0 and 1; got {alpha!r}.",
                         fix="e.g. alpha=0.05.")


@dataclass(frozen=True)
class RankingAgreement:
    """Per metric, how the systems rank under judgements a and under judgements b.

    Attributes:
        rows: one :class:`MetricRankingAgreement` per metric, in the order asked (empty when no runs were given).
        names: what the two sets of judgements are called.
        test: ``t`` (paired t-test) or ``randomization`` (Fisher), per pair of systems.
        alpha: significance level of the Holm-adjusted p-values (over the pairs of one metric, per side).
        n_resamples, seed: of the randomization test.
    """

    rows: tuple[MetricRankingAgreement, ...]
    names: tuple[str, str] = ("a", "b")
    test: str = "t"
    alpha: float = 0.05
    n_resamples: int = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        _check_significance(self.test, self.alpha)

    def __getitem__(self, metric: str) -> MetricRankingAgreement:
        """The row of one metric, by any spelling."""
        wanted = str(parse_metric(metric))
        for row in self.rows:
            if wanted in (row.metric, row.metric_a, row.metric_b):
                return row
        raise KeyError(f"{metric!r} was not compared; available: {', '.join(r.metric for r in self.rows)}")

    def to_frame(self) -> pd.DataFrame:
        """One row per metric: taus, pairs significant under each side, and what happened to them."""
        import pandas as pd

        frame = pd.DataFrame([row.summary() for row in self.rows],
                             columns=["metric", "systems", "kendall_tau", "kendall_p", "tau_ap", "tau_ap_symmetric",
                                      "significant_a", "significant_b", "agree", "reversed", "lost", "gained",
                                      "flipped_share"])
        return frame.set_index("metric")

    def pairs_frame(self) -> pd.DataFrame:
        """One row per (metric, pair of systems): deltas, adjusted p-values and the outcome."""
        import pandas as pd

        return pd.DataFrame([asdict(p) for row in self.rows for p in row.pairs],
                            columns=list(PairOutcome.__dataclass_fields__))

    def describe(self) -> str:
        """One sentence saying how significance was decided."""
        test = {"t": "paired t-test", "randomization": f"Fisher randomization test ({self.n_resamples} "
                                                       f"resamples, seed {self.seed})"}[self.test]
        return (f"significance: {test} per pair of systems, Holm-corrected over the pairs of each metric under "
                f"each set of judgements, alpha {self.alpha:g}; tau_ap takes {self.names[0]} as the truth")

    def _table_rows(self) -> list[list[str]]:
        rows = []
        for row in self.rows:
            rows.append([row.metric, " > ".join(row.ranking("a")), " > ".join(row.ranking("b")),
                         _fmt(row.kendall_tau), _fmt(row.tau_ap), _fmt(row.tau_ap_symmetric),
                         f"{row.significant_a} / {row.significant_b}",
                         f"{row.count('reversed')} / {row.count('lost')} / {row.count('gained')}",
                         _fmt(row.flipped_share, 2)])
        return rows

    def _headers(self) -> list[str]:
        a, b = self.names
        return ["metric", f"ranking under {a}", f"ranking under {b}", "Kendall tau", "tau_ap", "tau_ap (sym.)",
                f"significant {a} / {b}", "reversed / lost / gained", "flipped share"]

    def _table(self, fmt: str) -> str:
        from tabulate import tabulate

        return str(tabulate(self._table_rows(), headers=self._headers(), tablefmt=fmt, disable_numparse=True,
                            colalign=("left", "left", "left", *("right",) * 6)))

    def _empty(self) -> str:
        return "no runs given: the ranking agreement needs at least two systems"

    def to_markdown(self) -> str:
        """A Markdown section: one row per metric, then how significance was decided."""
        a, b = self.names
        if not self.rows:
            return f"### Ranking agreement\n\n{self._empty()}\n"
        table = self._table("github")
        return f"### Ranking of the systems under {a} and under {b}\n\n{table}\n\n{self.describe()}\n"

    def __str__(self) -> str:
        a, b = self.names
        if not self.rows:
            return f"Ranking agreement: {self._empty()}"
        table = self._table("simple")
        return f"Ranking of the systems under {a} and under {b}\n\n{table}\n{self.describe()}"

    def _repr_html_(self) -> str:
        from html import escape

        if not self.rows:
            return f"<p>{escape(self._empty())}</p>"
        table = self._table("html")
        return f"{table}<p>{escape(self.describe())}</p>"

    def __repr__(self) -> str:
        taus = ", ".join(f"{r.metric}: tau {_fmt(r.kendall_tau)}, tau_ap {_fmt(r.tau_ap)}, {r.flipped} flipped"
                         for r in self.rows)
        return f"RankingAgreement({self.names[1]} vs {self.names[0]}; {taus or 'no runs'})"

    def to_dict(self) -> dict[str, Any]:
        """``{"settings": {...}, "metrics": [...]}`` with every pair, JSON-ready (nan becomes None)."""
        settings = {"names": list(self.names), "test": self.test, "correction": "holm", "alpha": self.alpha,
                    "n_resamples": self.n_resamples, "seed": self.seed}
        return _json_ready({"settings": settings,
                       "metrics": [{**asdict(row), **row.summary(), "ranking_a": list(row.ranking("a")),
                                    "ranking_b": list(row.ranking("b"))} for row in self.rows]})


def _pair_p_values(per_query: list[dict[str, float]], pairs: list[tuple[int, int]], test: str, n_resamples: int,
                   seed: int) -> tuple[list[float], list[float]]:
    """Mean difference and raw p-value of each pair, on the queries both systems were evaluated on."""
    deltas, pvalues = [], []
    for i, j in pairs:
        common = [q for q in per_query[i] if q in per_query[j]]
        x, y = [per_query[i][q] for q in common], [per_query[j][q] for q in common]
        deltas.append(math.fsum(x) / len(x) - math.fsum(y) / len(y) if common else math.nan)
        pvalues.append(TESTS[test](x, y, n_resamples, seed) if len(common) >= 2 else math.nan)
    return deltas, pvalues


def _lookup(results: Results, metric: str, system: str, side: str) -> tuple[str, dict[str, float]]:
    if metric not in results:
        raise InputError(f"{metric} was not evaluated for system {system!r} under judgements {side!r} "
                         f"(evaluated: {', '.join(map(str, results.metrics))}).",
                         fix="evaluate every system with the same metrics under both sets of judgements.")
    return str(results.resolve(parse_metric(metric))), results.query(metric)


def ranking_agreement(results_a: Mapping[str, Results], results_b: Mapping[str, Results], *,
                      metrics: Iterable[str] | None = None, names: Sequence[str] = ("a", "b"), test: str = "t",
                      alpha: float = 0.05, n_resamples: int = 10_000, seed: int = 0) -> RankingAgreement:
    """Do two sets of judgements rank the same systems the same way?

    For each metric, the systems are ordered by their mean under judgements a and under b, and compared
    with Kendall's tau (:func:`scipy.stats.kendalltau`, tau-b) and tau_ap (:func:`tau_ap`, a as the truth;
    also its symmetric mean). Then every pair of systems is tested under each side (``test``, Holm over the
    pairs of the metric), and the pairs significant under a or b are sorted into ``agree`` / ``reversed`` /
    ``lost`` / ``gained``; ``flipped_share`` is the share that did not stay significant with the same sign.

    Args:
        results_a, results_b: system name -> :class:`~evalbridge.results.Results`, the same systems
            evaluated under judgements a and under judgements b (e.g. with :func:`evalbridge.evaluate`).
        metrics: the metrics to compare (any spelling, as evaluated); default: every metric of the first
            system under a.
        names: what the two sets of judgements are called.
        test: ``t`` (paired t-test) or ``randomization`` (Fisher), see :mod:`evalbridge.stats.compare`.
        alpha: significance level of the Holm-adjusted p-values.
        n_resamples, seed: of the randomization test.

    Raises:
        InputError: the two sides hold different systems, fewer than two systems, a metric not evaluated.

    Example:
        >>> import evalbridge as eb
        >>> qrels = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 1}}
        >>> runs = {"x": {"q1": {"d1": 2, "d9": 1}, "q2": {"d3": 1}}, "y": {"q1": {"d9": 2, "d2": 1}, "q2": {"d8": 1}},
        ...         "z": {"q1": {"d1": 2, "d2": 1}, "q2": {"d3": 1}}}
        >>> results = {name: eb.evaluate(qrels, run, "P@1") for name, run in runs.items()}
        >>> row = ranking_agreement(results, results).rows[0]
        >>> round(row.kendall_tau, 12), row.tau_ap, row.flipped
        (1.0, 1.0, 0)
    """
    names = _check_names(names)
    _check_significance(test, alpha)
    from ..results import Results

    for results, side in ((results_a, names[0]), (results_b, names[1])):
        if not isinstance(results, Mapping):
            raise InputError(f"the results under {side!r} must map each system name to its Results; got "
                             f"{type(results).__name__}.", fix="pass {name: eb.evaluate(qrels, run, metrics)}.")
        wrong = next((s for s, r in results.items() if not isinstance(r, Results)), None)
        if wrong is not None:
            raise InputError(f"system {wrong!r} under {side!r} is a {type(results[wrong]).__name__}, not the "
                             f"Results of eb.evaluate.", fix="pass {name: eb.evaluate(qrels, run, metrics)}.")
    systems = list(results_a)
    missing_b, missing_a = [s for s in systems if s not in results_b], [s for s in results_b if s not in results_a]
    if missing_a or missing_b:
        raise InputError(f"the two sides must hold the same systems; only under {names[0]!r}: {missing_b}, only "
                         f"under {names[1]!r}: {missing_a}.", fix="evaluate every run under both sets of judgements.")
    if len(systems) < 2:
        raise InputError(f"ranking systems needs at least two of them; got {len(systems)} ({systems}).",
                         fix="give two runs or more.")
    asked = [str(parse_metric(m)) for m in metrics] if metrics is not None else \
        [str(m) for m in results_a[systems[0]].metrics]
    if not asked:
        raise InputError("no metric to compare.", fix='pass metrics=["nDCG@10", ...].')
    pairs = list(combinations(range(len(systems)), 2))
    rows = []
    for metric in asked:
        sides = []
        for results, side in ((results_a, names[0]), (results_b, names[1])):
            looked = [_lookup(results[s], metric, s, side) for s in systems]
            per_query = [values for _, values in looked]
            means = [math.fsum(v.values()) / len(v) if v else 0.0 for v in per_query]
            deltas, raw = _pair_p_values(per_query, pairs, test, n_resamples, seed)
            sides.append((looked[0][0], means, deltas, holm(raw)))
        (label_a, means_a, deltas_a, p_a), (label_b, means_b, deltas_b, p_b) = sides
        outcomes = []
        for (i, j), da, pa, db, pb in zip(pairs, deltas_a, p_a, deltas_b, p_b):
            sig_a, sig_b = bool(pa <= alpha), bool(pb <= alpha)  # nan (too few queries) is not significant
            key = (sig_a, sig_b, sig_a and sig_b and (da > 0) != (db > 0))
            outcomes.append(PairOutcome(metric=metric, system_1=systems[i], system_2=systems[j], delta_a=da,
                                        p_a=pa, significant_a=sig_a, delta_b=db, p_b=pb, significant_b=sig_b,
                                        outcome=OUTCOMES[key]))
        tau, tau_p = _kendall_tau(means_a, means_b)
        rows.append(MetricRankingAgreement(
            metric=metric, metric_a=label_a, metric_b=label_b, systems=tuple(systems), means_a=tuple(means_a),
            means_b=tuple(means_b), kendall_tau=tau, kendall_p=tau_p, tau_ap=tau_ap(means_a, means_b),
            tau_ap_symmetric=tau_ap(means_a, means_b, symmetric=True), pairs=tuple(outcomes)))
    return RankingAgreement(rows=tuple(rows), names=names, test=test, alpha=float(alpha), n_resamples=n_resamples,
                            seed=seed)


# -- both at once ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Agreement:
    """What :func:`agree` returns: the judge agreement and the ranking agreement, rendered together.

    Attributes:
        judges: :class:`JudgeAgreement` of the two sets of judgements.
        ranking: :class:`RankingAgreement` of the runs (no rows when no runs were given).
        results_a, results_b: run name -> :class:`~evalbridge.results.Results` under each set of judgements.
    """

    judges: JudgeAgreement
    ranking: RankingAgreement
    results_a: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    results_b: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        return f"{self.judges}\n\n{self.ranking}"

    def __repr__(self) -> str:
        return f"Agreement({self.judges!r}, {self.ranking!r})"

    def to_markdown(self) -> str:
        a, b = self.judges.names
        return f"## Agreement between the judgements {a} and {b}\n\n{self.judges.to_markdown()}\n" \
               f"{self.ranking.to_markdown()}"

    def _repr_html_(self) -> str:
        return f"{self.judges._repr_html_()}\n{self.ranking._repr_html_()}"

    def to_dict(self) -> dict[str, Any]:
        """``{"judges": {...}, "ranking": {...}, "means": {side: {run: {metric: mean}}}}``, JSON-ready."""
        a, b = self.judges.names
        means = {side: {name: res.means for name, res in results.items()}
                 for side, results in ((a, self.results_a), (b, self.results_b))}
        return _json_ready({"judges": self.judges.to_dict(), "ranking": self.ranking.to_dict(), "means": means})

    def to_json(self, *, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def render(self, fmt: str = "text") -> str:
        """The whole agreement as ``text``, ``markdown`` or ``json`` (see :data:`FORMATS`)."""
        _check_choice(fmt, FORMATS, "format")
        return FORMATS[fmt](self)


#: output format -> renderer of an :class:`Agreement` (what ``evalbridge agree --format`` offers)
FORMATS: Mapping[str, Callable[[Agreement], str]] = {
    "text": Agreement.__str__, "markdown": Agreement.to_markdown, "json": Agreement.to_json,
}


def agree(qrels_a: Any, qrels_b: Any, runs: Mapping[str, Any] | None = None,
          metrics: str | Iterable[str] = DEFAULT_METRICS, *, names: Sequence[str] = ("a", "b"),
          bins: Sequence[float] | None = None, bins_a: Sequence[float] | None = None,
          bins_b: Sequence[float] | None = None, alpha_level: str = "ordinal", test: str = "t", alpha: float = 0.05,
          n_resamples: int = 10_000, seed: int = 0, settings: Settings | None = None,
          **keywords: Unpack[Keywords]) -> Agreement:
    """Judge agreement of two sets of judgements and, with runs, the agreement of the system rankings.

    Every run is evaluated under both sets of judgements with :func:`evalbridge.evaluate` (same metrics,
    backend and settings), then compared with :func:`ranking_agreement`.

    Args:
        qrels_a, qrels_b: the two sets of judgements (anything :func:`agreement` reads); a is the reference.
        runs: run name -> run (a :class:`~evalbridge.model.Run`, a dict of dicts, a path); none: only
            the judge agreement.
        metrics: the metrics the systems are ranked by.
        names, bins, bins_a, bins_b, alpha_level: see :func:`agreement`.
        settings, **keywords: the settings of both evaluations (:class:`~evalbridge.settings.Settings`, whole or
            as keywords), as :func:`evalbridge.evaluate`; ``min_relevance`` is also the level of the judges'
            binary kappa (:func:`agreement`; default: each qrels' own, else 1), ``ids`` and ``duplicates``
            read the inputs given as files.
        test, alpha, n_resamples, seed: see :func:`ranking_agreement`.

    Returns:
        :class:`Agreement`; ``.render("text" | "markdown" | "json")``.
    """
    from ..evaluation import as_qrels, as_run, evaluate
    from ..settings import settings_of

    chosen = settings_of(settings, keywords)
    min_relevance = chosen.min_relevance
    names = _check_names(names)
    _check_significance(test, alpha)
    if runs is not None and not isinstance(runs, Mapping):
        raise InputError(f"runs must map a name to each run; got {type(runs).__name__}.",
                         fix='e.g. runs={"bm25": "run.bm25.txt", "splade": splade_run}.')
    qa, qb = as_qrels(qrels_a, ids=chosen.ids), as_qrels(qrels_b, ids=chosen.ids)
    judges = agreement(qa, qb, names=names, min_relevance=min_relevance, bins=bins, bins_a=bins_a, bins_b=bins_b,
                       alpha_level=alpha_level)
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    results_a: dict[str, Any] = {}
    results_b: dict[str, Any] = {}
    for name, run in (runs or {}).items():
        run = as_run(run, ids=chosen.ids, duplicates=chosen.duplicates)
        for qrels, results in ((qa, results_a), (qb, results_b)):
            results[name] = evaluate(qrels, run, asked, settings=chosen)
    if results_a:
        ranking = ranking_agreement(results_a, results_b, metrics=asked, names=names, test=test, alpha=alpha,
                                    n_resamples=n_resamples, seed=seed)
    else:
        ranking = RankingAgreement(rows=(), names=names, test=test, alpha=alpha, n_resamples=n_resamples, seed=seed)
    return Agreement(judges=judges, ranking=ranking, results_a=results_a, results_b=results_b)
