"""Vectorised metric kernels over placed hits; the definitions are :mod:`evalbridge.metrics.reference`.

Each kernel returns one float64 per evaluated query. With ``rel > 0`` only hits can be
relevant, so a kernel touches O(hits) values; with ``rel <= 0`` a retrieved unjudged doc
(grade 0) is relevant too, and the kernel runs over every ranked row instead.

Sums are ``bincount`` over rows in rank order, which adds the same terms in the same order
as the reference's loops; gains and discounts are the reference's own functions evaluated
once per distinct grade and rank. So the values equal the reference's, not just nearly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..metrics.reference import discount_of, gain_of
from ..metrics.spec import Metric
from ..model import Conventions
from .columns import Columns
from .ranking import Placed, place_hits

__all__ = ["Context", "KERNELS", "evaluate_columns"]


class Context:
    """What every metric of one evaluation shares: the placed hits and per-query qrels counts."""

    def __init__(self, columns: Columns, placed: Placed) -> None:
        self.columns, self.placed = columns, placed
        self.n = columns.n_queries
        self.judged_query = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(columns.judged_offsets))
        self._dense: Placed | None = None
        self._relevant: dict[float, np.ndarray] = {}

    def rows(self, rel: float | None) -> Placed:
        """The rows that can matter at level ``rel``: the hits, or every row when ``rel <= 0``."""
        if rel is None or rel > 0:
            return self.placed
        if self._dense is None:
            self._dense = self.placed.dense()
        return self._dense

    def n_relevant(self, rel: float) -> np.ndarray:
        """R per query: judged documents with ``grade >= rel`` (float64)."""
        if rel not in self._relevant:
            mask = self.columns.judged >= rel
            self._relevant[rel] = np.bincount(self.judged_query[mask], minlength=self.n).astype(np.float64)
        return self._relevant[rel]

    def per_query(self, query: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Sum (or count) per query, added in row order."""
        return np.bincount(query, weights=weights, minlength=self.n).astype(np.float64)


def _top(rows: Placed, k: int | None, rel: float | None = None) -> np.ndarray:
    """Mask of rows ranked within k (and relevant at ``rel`` when given)."""
    mask = np.ones(len(rows.pos), dtype=bool) if k is None else rows.pos <= k
    if rel is not None:
        mask &= rows.grade >= rel
    return mask


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.zeros_like(numerator)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def precision(ctx: Context, *, k: int, rel: float = 1) -> np.ndarray:
    """P@k = |relevant in top k| / k."""
    rows = ctx.rows(rel)
    return ctx.per_query(rows.query[_top(rows, k, rel)]) / k


def recall(ctx: Context, *, k: int | None, rel: float = 1) -> np.ndarray:
    """R@k = |relevant in top k| / R; 0 when R = 0."""
    rows = ctx.rows(rel)
    return _divide(ctx.per_query(rows.query[_top(rows, k, rel)]), ctx.n_relevant(rel))


def success(ctx: Context, *, k: int | None = None, rel: float = 1) -> np.ndarray:
    """Success@k = 1 if a relevant doc is in the top k, else 0."""
    rows = ctx.rows(rel)
    return (ctx.per_query(rows.query[_top(rows, k, rel)]) > 0).astype(np.float64)


def reciprocal_rank(ctx: Context, *, k: int | None = None, rel: float = 1) -> np.ndarray:
    """RR@k = 1 / rank of the first relevant doc within k; 0 if none."""
    rows = ctx.rows(rel)
    found = np.flatnonzero(_top(rows, k, rel))
    query = rows.query[found]
    first = np.r_[True, query[1:] != query[:-1]] if len(query) else np.zeros(0, dtype=bool)
    out = np.zeros(ctx.n, dtype=np.float64)
    out[query[first]] = 1.0 / rows.pos[found[first]]
    return out


def _hits_so_far(query: np.ndarray) -> np.ndarray:
    """1, 2, 3... restarting at each new query (``query`` is sorted)."""
    index = np.arange(len(query), dtype=np.int64)
    start = np.r_[True, query[1:] != query[:-1]] if len(query) else np.zeros(0, dtype=bool)
    return index - np.maximum.accumulate(np.where(start, index, 0)) + 1


def average_precision(ctx: Context, *, k: int | None = None, rel: float = 1, norm: str = "R",
                      weights: str = "binary", max_grade: float | None = None) -> np.ndarray:
    """AP@k = (1/N) sum over relevant ranks i <= k of P@i * w_i (see :func:`evalbridge.metrics.reference.average_precision`)."""
    if weights == "graded" and not max_grade:
        raise ValueError("weights=graded needs max_grade > 0")
    rows = ctx.rows(rel)
    found = np.flatnonzero(_top(rows, k, rel))
    query, pos = rows.query[found], rows.pos[found]
    hits = _hits_so_far(query)
    terms = hits / pos
    terms = terms * (rows.grade[found] / max_grade if weights == "graded" else 1.0)
    total = ctx.per_query(query, terms)
    denominator = ctx.per_query(query) if norm == "retrieved" else ctx.n_relevant(rel)
    return _divide(total, denominator)


def r_precision(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """Rprec = |relevant in top R| / R; 0 when R = 0."""
    rows = ctx.rows(rel)
    n_relevant = ctx.n_relevant(rel)
    mask = (rows.grade >= rel) & (rows.pos <= n_relevant[rows.query])
    return _divide(ctx.per_query(rows.query[mask]), n_relevant)


def _gains(grades: np.ndarray, gain: str, rel: float | None) -> np.ndarray:
    """The reference's gain of each grade, computed once per distinct grade."""
    values, inverse = np.unique(grades, return_inverse=True)
    table = np.array([gain_of(g, gain, rel) for g in values.tolist()], dtype=np.float64)
    return table[inverse.reshape(-1)]


def _discounts(pos: np.ndarray, discount: str) -> np.ndarray:
    """The reference's discount of each rank, computed once per distinct rank."""
    values, inverse = np.unique(pos, return_inverse=True)
    table = np.array([discount_of(i, discount) for i in values.tolist()], dtype=np.float64)
    return table[inverse.reshape(-1)]


def _dcg(ctx: Context, query: np.ndarray, pos: np.ndarray, grade: np.ndarray, *, k: int | None, gain: str,
         discount: str, rel: float | None) -> np.ndarray:
    mask = np.ones(len(pos), dtype=bool) if k is None else pos <= k
    query, pos, grade = query[mask], pos[mask], grade[mask]
    return ctx.per_query(query, _gains(grade, gain, rel) * _discounts(pos, discount))


def dcg(ctx: Context, *, k: int | None = None, gain: str = "linear", discount: str = "log2",
        rel: float | None = None) -> np.ndarray:
    """DCG@k = sum over i <= k of gain(grade_i) * discount(i)."""
    rows = ctx.placed
    return _dcg(ctx, rows.query, rows.pos, rows.grade, k=k, gain=gain, discount=discount, rel=rel)


def ndcg(ctx: Context, *, k: int | None = None, gain: str = "linear", ideal: str = "qrels",
         discount: str = "log2", rel: float | None = None) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k, the ideal from the qrels or the run's grades; 0 when IDCG = 0."""
    rows = ctx.placed
    actual = _dcg(ctx, rows.query, rows.pos, rows.grade, k=k, gain=gain, discount=discount, rel=rel)
    if ideal == "qrels":
        query, grade = ctx.judged_query, ctx.columns.judged
    else:
        query, grade = rows.query, rows.grade
    best = np.lexsort((-grade, query))
    query, grade = query[best], grade[best]
    best_dcg = _dcg(ctx, query, _hits_so_far(query), grade, k=k, gain=gain, discount=discount, rel=rel)
    return _divide(actual, best_dcg)


#: Metric name -> kernel; each takes the same keywords as its reference in :mod:`evalbridge.metrics.reference`.
KERNELS: dict[str, Callable[..., np.ndarray]] = {
    "P": precision,
    "R": recall,
    "RR": reciprocal_rank,
    "AP": average_precision,
    "nDCG": ndcg,
    "DCG": dcg,
    "Rprec": r_precision,
    "Success": success,
}


def evaluate_columns(columns: Columns, metrics: Sequence[Metric],
                     conventions: Conventions = Conventions()) -> dict[Metric, np.ndarray]:
    """Per-query values (in ``columns.query_ids`` order) of every metric; the ranking is done once.

    Example:
        >>> from evalbridge.engine import from_mappings
        >>> from evalbridge.metrics.spec import parse_metric
        >>> cols = from_mappings({"q1": {"a": 1, "c": 1}}, {"q1": {"a": 0.9, "b": 0.5, "c": 0.1}})
        >>> evaluate_columns(cols, [parse_metric("P@2")])[parse_metric("P@2")].tolist()
        [0.5]
    """
    ctx = Context(columns, place_hits(columns, ties=conventions.ties, score_precision=conventions.score_precision))
    return {metric: KERNELS[metric.name](ctx, **metric.arguments) for metric in metrics}
