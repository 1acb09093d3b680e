"""Vectorised metric kernels over placed hits; the definitions are :mod:`evalbridge.metrics.reference`.

Each kernel returns one float64 per evaluated query. With ``rel > 0`` only hits can be
relevant, so a kernel touches O(hits) values; with ``rel <= 0`` a retrieved unjudged doc
(grade 0) is relevant too, and the kernel runs over every ranked row instead.

Sums are ``bincount`` over rows in rank order, which adds the same terms in the same order
as the reference's loops; gains and discounts are the reference's own functions evaluated
once per distinct grade and rank. So the values equal the reference's, not just nearly.

The metrics that read judgements (``Judged``, ``Bpref``, ``infAP``, ``RBP_resid``, gain maps)
place the retrieved docs judged 0 too (:meth:`Context.judged`), and ``Hole`` the docs judged for
any query (:meth:`Context.pooled`); both are placed only when such a metric is asked.
"""

from __future__ import annotations

import math
from dataclasses import replace
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..metrics.catalogue import functions_of
from ..metrics.reference import (INFAP_EPSILON, SAMPLE_EVAL_DEPTH, dcg_overflow, discount_of, err_probability,
                                 rbp_weight)
from ..metrics.spec import Metric
from ..model.settings import Settings
from .columns import Columns
from .placing import Placed, Ranking, place_hits, prepare_ranking

__all__ = ["Context", "KERNELS", "evaluate_columns"]


class Context:
    """What every metric of one evaluation shares: the placed hits and per-query qrels counts."""

    def __init__(self, columns: Columns, placed: Placed, ranking: Ranking,
                 conventions: Settings = Settings()) -> None:
        self.columns, self.placed, self.ranking, self.conventions = columns, placed, ranking, conventions
        self.n = columns.n_queries
        self.judged_query = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(columns.judged_offsets))
        self._dense: Placed | None = None
        self._relevant: dict[float, np.ndarray] = {}
        self._judged: Placed | None = None
        self._pooled: Placed | None = None
        self._top: np.ndarray | None = None

    def _place(self, columns: Columns) -> Placed:
        return place_hits(columns, ties=self.conventions.ties, score_precision=self.conventions.score_precision,
                          ranking=self.ranking)

    def judged(self) -> Placed:
        """Every retrieved doc with a judgement (any grade, 0 included), in rank order."""
        if self._judged is None:
            self._judged = self._place(self.columns.judged_hits())
        return self._judged

    def pooled(self) -> Placed:
        """Every retrieved doc judged for some query of the qrels, in rank order (grade 1)."""
        if self._pooled is None:
            self._pooled = self._place(self.columns.pool_hits())
        return self._pooled

    def stratified(self) -> tuple[Placed, np.ndarray, np.ndarray]:
        """The retrieved judged docs in rank order (:meth:`judged`), the stratum code of each, and the stratum
        code of every qrels row (:attr:`Columns.judged_strata`), for the stratified-sample estimates."""
        columns = self.columns
        codes = columns.judged_strata
        if codes is None or columns.judged_index is None or (codes < 0).any():
            raise InputError("the qrels hold no stratum for some judged document, and xinfAP / infNDCG estimate "
                             "from a stratified sample.",
                             fix="read the stratified sample with format='sample_eval' (`topic 0 doc stratum rel`).")
        hits = columns.judged_hits()
        placed = self._place(replace(hits, hit_grade=codes[columns.judged_index].astype(np.float64)))
        return self.judged(), placed.grade.astype(np.int64), codes

    def strata_counts(self, codes: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """Per query and stratum (n x strata), the qrels rows (those of ``mask``) of each stratum."""
        width = int(codes.max()) + 1 if len(codes) else 1
        keys = self.judged_query * width + codes
        counted = np.bincount(keys if mask is None else keys[mask], minlength=self.n * width)
        return counted.reshape(self.n, width).astype(np.float64)

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per query, the judgements for which ``mask`` (over ``columns.judged``) holds (float64)."""
        return np.bincount(self.judged_query[mask], minlength=self.n).astype(np.float64)

    def top_grade(self) -> np.ndarray:
        """Per query, the largest judged grade (-inf when the query has none)."""
        if self._top is None:
            self._top = np.full(self.n, -np.inf)
            np.maximum.at(self._top, self.judged_query, self.columns.judged)
        return self._top

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


def _table(values: np.ndarray, function: Callable[[float], float]) -> np.ndarray:
    """``function`` (a reference function) of each value, evaluated once per distinct value."""
    distinct, inverse = np.unique(values, return_inverse=True)
    table = np.array([function(v) for v in distinct.tolist()], dtype=np.float64)
    return table[inverse.reshape(-1)]


def _discounts(pos: np.ndarray, discount: str) -> np.ndarray:
    """The reference's discount of each rank, computed once per distinct rank."""
    return _table(pos, lambda i: discount_of(int(i), discount))


def _shifts(ctx: Context, gain: str) -> np.ndarray:
    """Per query, the power of two exp gains are divided by (:func:`~evalbridge.metrics.reference.exp_shift`)."""
    if gain != "exp":
        return np.zeros(ctx.n, dtype=np.int64)
    top = ctx.top_grade()
    return np.floor(np.where(top > 0, top, 0.0)).astype(np.int64)


def _gain_rows(grades: np.ndarray, query: np.ndarray, shifts: np.ndarray, *, gain: str, rel: float | None,
               gains: Mapping[float, float] | None) -> np.ndarray:
    """:func:`~evalbridge.metrics.reference.gain_of` of judged rows, each divided by its query's ``2^shift``:
    exp gains as ``ldexp(2^frac, whole - shift) - 2^-shift`` with ``2^frac`` from Python (as the
    reference), mapped and linear gains as ``ldexp(gain, -shift)``; ``ldexp`` is exact in both."""
    if len(grades) == 0:
        return np.zeros(0, dtype=np.float64)
    shift = shifts[query]
    distinct, inverse = np.unique(grades, return_inverse=True)
    inverse = inverse.reshape(-1)
    exp = np.zeros(len(distinct), dtype=bool)
    value = np.zeros(len(distinct), dtype=np.float64)  # the mapped or linear gain, or 2^frac for exp
    whole = np.zeros(len(distinct), dtype=np.int64)
    for i, g in enumerate(distinct.tolist()):
        if rel is not None and g < rel:
            continue
        if gains is not None and g in gains:
            value[i] = float(gains[g])
        elif g > 0 and gain == "exp":
            exp[i], whole[i] = True, math.floor(g)
            value[i] = 2.0 ** (g - whole[i])
        elif g > 0:
            value[i] = float(g)
    if gain != "exp":  # linear gains and gain maps are never divided (shift 0): the table itself
        linear: np.ndarray = value[inverse]
        return linear
    out: np.ndarray = np.ldexp(value[inverse], np.where(exp[inverse], whole[inverse] - shift, -shift))
    is_exp = exp[inverse]
    out[is_exp] -= np.ldexp(1.0, -shift[is_exp])
    return out


def _dcg_rows(ctx: Context, gains: Mapping[float, float] | None) -> Placed:
    """The rows whose gain may not be 0: the hits, or every judged doc when a gain map may give 0 a gain."""
    return ctx.judged() if gains is not None else ctx.placed


def _sum_discounted(ctx: Context, query: np.ndarray, pos: np.ndarray, gain: np.ndarray, discount: str) -> np.ndarray:
    keep = gain != 0
    return ctx.per_query(query[keep], gain[keep] * _discounts(pos[keep], discount))


def _actual(ctx: Context, rows: Placed, shifts: np.ndarray, k: int | None, discount: str,
            options: dict[str, Any]) -> np.ndarray:
    """DCG@k of the ranking, divided by 2^shift: the gains of the rows ranked within k only."""
    top = _top(rows, k)
    query, pos = rows.query[top], rows.pos[top]
    return _sum_discounted(ctx, query, pos, _gain_rows(rows.grade[top], query, shifts, **options), discount)


def _ideal(ctx: Context, query: np.ndarray, grade: np.ndarray, shifts: np.ndarray, k: int | None, discount: str,
           options: dict[str, Any]) -> np.ndarray:
    """IDCG@k divided by 2^shift: the positive gains of each query's ``grade`` rows, best first. Without a
    gain map the gain grows with the grade, so the rows are sorted by grade and only the top k get a gain."""
    if options["gains"] is None:
        best = np.lexsort((-grade, query))
        query, grade = query[best], grade[best]
        pos = _hits_so_far(query)
        top = pos <= k if k is not None else slice(None)
        query, pos, gain = query[top], pos[top], _gain_rows(grade[top], query[top], shifts, **options)
        return _sum_discounted(ctx, query, pos, np.where(gain > 0, gain, 0.0), discount)
    gain = _gain_rows(grade, query, shifts, **options)
    positive = gain > 0
    query, gain = query[positive], gain[positive]
    best = np.lexsort((-gain, query))
    query, gain = query[best], gain[best]
    pos = _hits_so_far(query)
    top = pos <= k if k is not None else slice(None)
    return _sum_discounted(ctx, query[top], pos[top], gain[top], discount)


def dcg(ctx: Context, *, k: int | None = None, gain: str = "linear", discount: str = "log2",
        rel: float | None = None, gains: Mapping[float, float] | None = None) -> np.ndarray:
    """DCG@k = sum over i <= k of gain(grade_i) * discount(i), exp gains summed divided by 2^shift."""
    shifts = _shifts(ctx, gain)
    scaled = _actual(ctx, _dcg_rows(ctx, gains), shifts, k, discount, {"gain": gain, "rel": rel, "gains": gains})
    with np.errstate(over="ignore"):
        out: np.ndarray = np.ldexp(scaled, shifts)
    overflow = np.flatnonzero(np.isinf(out) & np.isfinite(scaled))
    if len(overflow):
        q = int(overflow[0])
        raise _QueryError(q, dcg_overflow(float(scaled[q]), int(shifts[q])))
    return out


def ndcg(ctx: Context, *, k: int | None = None, gain: str = "linear", ideal: str = "qrels",
         discount: str = "log2", rel: float | None = None, gains: Mapping[float, float] | None = None) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k, the ideal from the positive gains of the qrels or of the run; 0 when IDCG = 0."""
    rows = _dcg_rows(ctx, gains)
    shifts = _shifts(ctx, gain)
    options = {"gain": gain, "rel": rel, "gains": gains}
    actual = _actual(ctx, rows, shifts, k, discount, options)
    if ideal == "qrels":
        best = _ideal(ctx, ctx.judged_query, ctx.columns.judged, shifts, k, discount, options)
    else:
        best = _ideal(ctx, rows.query, rows.grade, shifts, k, discount, options)
    return _divide(actual, best)


class _QueryError(Exception):
    """A kernel's :class:`InputError` about query ``index`` (named, with the metric, by :func:`evaluate_columns`)."""

    def __init__(self, index: int, error: InputError) -> None:
        super().__init__(index, error)
        self.index, self.error = index, error


def _running(query: np.ndarray, flag: np.ndarray) -> np.ndarray:
    """Per row (rows sorted by query), how many earlier rows of its query have ``flag`` (int64)."""
    counts: np.ndarray = np.cumsum(flag, dtype=np.int64) - flag
    if len(query) == 0:
        return counts
    start = np.r_[True, query[1:] != query[:-1]]
    base = np.maximum.accumulate(np.where(start, np.arange(len(query)), 0))
    before: np.ndarray = counts - counts[base]
    return before


def judged_share(ctx: Context, *, k: int | None = None) -> np.ndarray:
    """Judged@k = |judged in top k| / min(k, |retrieved|); 0 when nothing is retrieved."""
    rows = ctx.judged()
    found = ctx.per_query(rows.query[_top(rows, k)])
    shown = rows.lengths.astype(np.float64) if k is None else np.minimum(rows.lengths, k).astype(np.float64)
    return _divide(found, shown)


def hole(ctx: Context, *, k: int) -> np.ndarray:
    """Hole@k = |docs in the top k judged for no query| / k."""
    rows = ctx.pooled()
    shown = np.minimum(rows.lengths, k).astype(np.float64)
    share: np.ndarray = (shown - ctx.per_query(rows.query[_top(rows, k)])) / k
    return share


def bpref(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """bpref as trec_eval (see :func:`evalbridge.metrics.reference.bpref`)."""
    judged = ctx.columns.judged
    n_relevant = ctx.count((judged >= 0) & (judged >= rel))
    n_nonrelevant = ctx.count((judged >= 0) & (judged < rel))
    rows = ctx.judged()
    keep = rows.grade >= 0
    query, grade = rows.query[keep], rows.grade[keep]
    nonrelevant = grade < rel
    above = _running(query, nonrelevant)
    relevant = ~nonrelevant
    query, above = query[relevant], above[relevant].astype(np.float64)
    r, n = n_relevant[query], n_nonrelevant[query]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(above > 0, 1.0 - np.minimum(above, r) / np.minimum(n, r), 1.0)
    return _divide(ctx.per_query(query, terms), n_relevant)


def inferred_ap(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """infAP as trec_eval (see :func:`evalbridge.metrics.reference.inferred_ap`)."""
    judged = ctx.columns.judged
    n_relevant = ctx.count((judged >= 0) & (judged >= rel))
    rows = ctx.judged()
    query, grade, pos = rows.query, rows.grade, rows.pos
    pooled, nonrelevant = grade < 0, (grade >= 0) & (grade < rel)
    relevant = ~pooled & ~nonrelevant
    r_above = _running(query, relevant)[relevant]
    n_above = _running(query, nonrelevant)[relevant]
    u_above = _running(query, pooled)[relevant]
    query, j = query[relevant], (pos[relevant] - 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r_above + n_above + u_above) / j)
                 * ((r_above + INFAP_EPSILON) / ((r_above + n_above) + 2 * INFAP_EPSILON)))
    terms = np.where(j == 0, 1.0, terms)
    return _divide(ctx.per_query(query, terms), n_relevant)


def _scaled(counts: np.ndarray, pooled: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """Per query, sum over the strata of counts * pooled / sampled (strata with no sampled doc skipped)."""
    total = np.zeros(counts.shape[0])
    for k in range(counts.shape[1]):
        total += _divide(counts[:, k] * pooled[:, k], sampled[:, k])
    return total


def stratified_ap(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """xinfAP as NIST's sample_eval.pl (see :func:`evalbridge.metrics.reference.stratified_ap`)."""
    rows, stratum, codes = ctx.stratified()
    judged = ctx.columns.judged
    pooled = ctx.strata_counts(codes)
    sampled = ctx.strata_counts(codes, judged >= 0)
    n_relevant = _scaled(ctx.strata_counts(codes, (judged >= 0) & (judged >= rel)), pooled, sampled)
    query, grade, pos = rows.query, rows.grade, rows.pos.astype(np.float64)
    relevant = (grade >= 0) & (grade >= rel)
    estimate = np.zeros(len(query))
    for k in range(pooled.shape[1]):
        in_k = stratum == k
        d = _running(query, in_k).astype(np.float64)
        n = _running(query, in_k & (grade >= 0)).astype(np.float64)
        r = _running(query, in_k & relevant).astype(np.float64)
        estimate += np.where(d > 0, d * (r + INFAP_EPSILON) / (n + 3 * INFAP_EPSILON), 0.0)
    precision = 1 / pos + estimate / pos
    width = pooled.shape[1]
    sums = np.bincount(query[relevant] * width + stratum[relevant], weights=precision[relevant],
                       minlength=ctx.n * width).reshape(ctx.n, width)
    return _divide(_scaled(sums, pooled, sampled), n_relevant)


def stratified_ndcg(ctx: Context, *, rel: float | None = None) -> np.ndarray:
    """infNDCG as NIST's sample_eval.pl (see :func:`evalbridge.metrics.reference.stratified_ndcg`)."""
    rows, stratum, codes = ctx.stratified()
    judged = ctx.columns.judged
    pooled = ctx.strata_counts(codes)
    sampled = ctx.strata_counts(codes, judged >= 0)
    gainful = (judged > 0) if rel is None else (judged > 0) & (judged >= rel)
    discounts = np.r_[0.0, np.cumsum(1.0 / np.log2(np.arange(2, SAMPLE_EVAL_DEPTH + 2)))]
    ideal, start = np.zeros(ctx.n), np.zeros(ctx.n, dtype=np.int64)
    for grade in sorted(set(judged[gainful].tolist()), reverse=True):
        estimated = _scaled(ctx.strata_counts(codes, gainful & (judged == grade)), pooled, sampled)
        end = start + np.floor(estimated + 0.5).astype(np.int64)
        ideal += grade * (discounts[np.minimum(end, SAMPLE_EVAL_DEPTH)] - discounts[np.minimum(start, SAMPLE_EVAL_DEPTH)])
        start = end
    query, grade_of, pos = rows.query, rows.grade, rows.pos.astype(np.float64)
    width = pooled.shape[1]
    keys = query * width + stratum
    gains = (grade_of > 0) if rel is None else (grade_of > 0) & (grade_of >= rel)
    gain = np.bincount(keys[gains], weights=grade_of[gains] / np.log2(pos[gains] + 1), minlength=ctx.n * width)
    retrieved = np.bincount(keys, minlength=ctx.n * width).astype(np.float64)
    retrieved_sampled = np.bincount(keys[grade_of >= 0], minlength=ctx.n * width).astype(np.float64)
    shape = (ctx.n, width)
    estimate = _scaled(gain.reshape(shape), retrieved.reshape(shape), retrieved_sampled.reshape(shape))
    return _divide(estimate, ideal)


def _sequential(ctx: Context, query: np.ndarray, step: Callable[[np.ndarray, np.ndarray], None]) -> None:
    """Call ``step(rows, queries)`` for the first row of every query, then the second... (rows sorted
    by query): one vectorised call per rank of a row within its query, so running products are
    multiplied in the reference's order."""
    nth = _hits_so_far(query) - 1
    order = np.argsort(nth, kind="stable")
    bounds = np.searchsorted(nth[order], np.arange(int(nth.max()) + 2)) if len(query) else [0]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        rows = order[lo:hi]
        step(rows, query[rows])


def expected_reciprocal_rank(ctx: Context, *, k: int | None = None, rel: float | None = None,
                             max_grade: float | None = None, gains: Mapping[float, float] | None = None) -> np.ndarray:
    """ERR@k = sum over i <= k of R_i / i * prod over j < i of (1 - R_j)."""
    if not max_grade:
        raise ValueError("ERR needs max_grade > 0")
    rows = _dcg_rows(ctx, gains)
    r = _table(rows.grade, lambda g: err_probability(g, max_grade=max_grade, rel=rel, gains=gains))
    mask = (r != 0) & _top(rows, k)
    query, pos, r = rows.query[mask], rows.pos[mask].astype(np.float64), r[mask]
    total, decay = np.zeros(ctx.n), np.ones(ctx.n)

    def step(at: np.ndarray, queries: np.ndarray) -> None:
        total[queries] += r[at] * decay[queries] / pos[at]
        decay[queries] *= 1.0 - r[at]

    _sequential(ctx, query, step)
    return total


def _powers(pos: np.ndarray, p: float) -> np.ndarray:
    """``p ** (pos - 1)`` as the reference computes it, once per distinct rank."""
    return _table(pos, lambda i: p ** (int(i) - 1))


def rank_biased_precision(ctx: Context, *, k: int | None = None, rel: float = 1, p: float = 0.8,
                          weights: str = "binary") -> np.ndarray:
    """RBP@k = (1 - p) * sum over i <= k of w_i * p^(i-1)."""
    rows = ctx.rows(rel)
    top = np.where(np.isinf(ctx.top_grade()), 0.0, ctx.top_grade())  # the reference's max(judged, default=0)
    mask = _top(rows, k)
    query, pos, grade = rows.query[mask], rows.pos[mask], rows.grade[mask]
    if weights == "graded":
        w = np.where((grade >= rel) & (grade > 0), grade / np.maximum(1.0, top[query]), 0.0)
    else:
        w = _table(grade, lambda g: rbp_weight(g, rel=rel, weights=weights, top=1))
    keep = w != 0
    return (1 - p) * ctx.per_query(query[keep], w[keep] * _powers(pos[keep], p))


def rbp_residual(ctx: Context, *, k: int | None = None, p: float = 0.8) -> np.ndarray:
    """trec_eval's rbp_resid: p^n + (1 - p) * sum over unjudged i <= k of p^(i-1), when some doc is unjudged."""
    dense = ctx.placed.dense()
    offsets = np.zeros(ctx.n + 1, dtype=np.int64)
    np.cumsum(dense.lengths, out=offsets[1:])
    unjudged = np.ones(len(dense.pos), dtype=bool)
    judged = ctx.judged()
    known = judged.grade >= 0
    unjudged[offsets[judged.query[known]] + judged.pos[known] - 1] = False
    unjudged &= _top(dense, k)
    query, pos = dense.query[unjudged], dense.pos[unjudged]
    shown = dense.lengths if k is None else np.minimum(dense.lengths, k)
    tail = _table(shown, lambda n: p ** int(n))
    total = tail + (1 - p) * ctx.per_query(query, _powers(pos, p))
    return np.where(ctx.per_query(query) > 0, total, 0.0)


def _found(ctx: Context, k: int | None, rel: float) -> np.ndarray:
    rows = ctx.rows(rel)
    return ctx.per_query(rows.query[_top(rows, k, rel)])


def f1(ctx: Context, *, k: int | None = None, rel: float = 1) -> np.ndarray:
    """F1@k = 2 * |relevant in top k| / (k + R); without k, k = |retrieved|."""
    found = _found(ctx, k, rel)
    shown = ctx.placed.lengths.astype(np.float64) if k is None else np.full(ctx.n, float(k))
    return _divide(2 * found, shown + ctx.n_relevant(rel)) * (found > 0)


def capped_recall(ctx: Context, *, k: int, rel: float = 1) -> np.ndarray:
    """R_cap@k = |relevant in top k| / min(k, R); 0 when R = 0."""
    return _divide(_found(ctx, k, rel), np.minimum(ctx.n_relevant(rel), k))


def hits(ctx: Context, *, k: int | None = None, rel: float = 1) -> np.ndarray:
    """Hits@k = |relevant in top k|."""
    return _found(ctx, k, rel)


def num_ret(ctx: Context) -> np.ndarray:
    """NumRet = |retrieved|."""
    return ctx.placed.lengths.astype(np.float64)


def num_rel(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """NumRel = R."""
    return ctx.n_relevant(rel).copy()


def set_precision(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """SetP = |relevant retrieved| / |retrieved|."""
    return _divide(_found(ctx, None, rel), ctx.placed.lengths.astype(np.float64))


def set_recall(ctx: Context, *, rel: float = 1) -> np.ndarray:
    """SetR = |relevant retrieved| / R."""
    return _divide(_found(ctx, None, rel), ctx.n_relevant(rel))


#: Metric family -> kernel (the function its catalogue entry names); each takes the same keywords as its
#: reference in :mod:`evalbridge.metrics.reference` (the per-document inputs aside: the kernels read them
#: from the :class:`Context`).
KERNELS: dict[str, Callable[..., np.ndarray]] = functions_of(globals())


def evaluate_columns(columns: Columns, metrics: Sequence[Metric],
                     conventions: Settings = Settings()) -> dict[Metric, np.ndarray]:
    """Per-query values (in ``columns.query_ids`` order) of every metric; the ranking is done once.

    Example:
        >>> from evalbridge.fast import from_mappings
        >>> from evalbridge.metrics.spec import parse_metric
        >>> cols = from_mappings({"q1": {"a": 1, "c": 1}}, {"q1": {"a": 0.9, "b": 0.5, "c": 0.1}})
        >>> evaluate_columns(cols, [parse_metric("P@2")])[parse_metric("P@2")].tolist()
        [0.5]
    """
    ranking = prepare_ranking(columns, conventions.score_precision)
    ctx = Context(columns, place_hits(columns, ties=conventions.ties, score_precision=conventions.score_precision,
                                      ranking=ranking), ranking, conventions)
    out = {}
    for metric in metrics:
        try:
            out[metric] = KERNELS[metric.name](ctx, **metric.arguments)
        except _QueryError as failed:  # the reference backend's message, word for word
            raise InputError(f"{metric}: {failed.error}", query_id=columns.query_ids[failed.index]) from None
    return out
