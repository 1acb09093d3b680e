"""Tie-aware metrics: the expected value of every metric over all orders of each tie group.

When a run gives several documents the same score, any order among them is as justified as any
other, and a metric computed under one order (trec_eval's doc id rule, insertion order...) carries
some *tie luck*. Under ``ties="average"`` a metric is instead the expected value over every order
of each tie group, each group's internal order uniformly random and the groups independent (the
convention of McSherry & Najork 2008, *Computing information retrieval performance measures
efficiently in the presence of tied scores*, and of scikit-learn's ``ndcg_score``). Every value
here is computed exactly, in closed form, never by sampling.

Each function takes

* ``groups``: the retrieved documents' grades as tie groups in rank order (``[[3], [0, 1, 1], [2]]``:
  one document first, then three tied, then one), as produced by
  :func:`evalbridge.ranking.rank_groups`; a ranking without ties is a list of one-element groups,
  and the value is then the :mod:`evalbridge.metrics.reference` value, bit for bit;
* ``judged``: the grades of every judged document of the query;

and the same options as the reference function of the same name. Sums over a group's members
are exactly rounded (``math.fsum``), so the order the members are given in never changes a bit.

Notation for one group: it holds ``n`` documents, ``r`` of them relevant (``grade >= rel``), and
follows ``s`` documents ranked before it, so it occupies ranks ``s+1 .. s+n``; ``c`` of those ranks
lie within the cutoff ``k`` (``c = n`` without a cutoff, ``0 <= c <= n``). ``A`` is the number of
relevant documents in the groups before it. At most one group *straddles* the cutoff (``0 < c < n``).

A metric without an exact formula here is refused under ``ties="average"`` (:func:`unsupported`),
never approximated: a new metric gets a function in :data:`KERNELS` or stays refused.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING

from ..errors import UnsupportedMetricError
from .reference import dcg_overflow, discounted, discount_of, exp_shift, gain_of

if TYPE_CHECKING:
    from .spec import Metric

__all__ = ["precision", "recall", "reciprocal_rank", "average_precision", "ndcg", "dcg", "r_precision",
           "success", "hypergeometric", "KERNELS", "unsupported"]

Groups = Sequence[Sequence[float]]


def _layout(groups: Groups, k: int | None) -> Iterator[tuple[int, int, int, Sequence[float]]]:
    """``(s, n, c, grades)`` for each non-empty group, in rank order (see the module docstring)."""
    s = 0
    for group in groups:
        n = len(group)
        if n == 0:
            continue
        yield s, n, n if k is None else max(0, min(n, k - s)), group
        s += n


def _expected_hits(groups: Groups, k: int | None, rel: float) -> Fraction:
    """E[|relevant in the top k|] = sum over groups of c * r / n, exactly.

    The ``c`` ranks of a group within the cutoff receive a uniformly random ``c``-subset of its
    ``n`` documents, so the relevant ones among them are hypergeometric with mean ``c * r / n``
    (``r`` itself for a group wholly inside the cutoff).
    """
    whole, straddling = 0, Fraction(0)
    for _, n, c, group in _layout(groups, k):
        if c == 0:
            break
        r = sum(g >= rel for g in group)
        if c == n:
            whole += r
        else:
            straddling = Fraction(c * r, n)
    return whole + straddling


def precision(groups: Groups, judged: Sequence[float], *, k: int, rel: float = 1) -> float:
    """E[P@k] = (1/k) * sum over groups of c * r / n (hypergeometric mean; exact rational).

    >>> precision([[1], [0, 1, 0]], [1, 1], k=2)  # (1 + 1 * 1/3) / 2
    0.6666666666666666
    """
    return float(_expected_hits(groups, k, rel) / k)


def recall(groups: Groups, judged: Sequence[float], *, k: int | None, rel: float = 1) -> float:
    """E[R@k] = (1/R) * sum over groups of c * r / n, R = |{judged grade >= rel}|; 0 when R = 0.

    >>> recall([[0, 1]], [1, 1, 1], k=1)  # (1 * 1/2) / 3
    0.16666666666666666
    """
    n_relevant = sum(g >= rel for g in judged)
    return float(_expected_hits(groups, k, rel) / n_relevant) if n_relevant else 0.0


def r_precision(groups: Groups, judged: Sequence[float], *, rel: float = 1) -> float:
    """E[Rprec] = E[P@R], R = |{judged grade >= rel}|: :func:`precision` with k = R; 0 when R = 0.

    >>> r_precision([[1, 0], [1]], [1, 1])  # the top 2 hold the tied pair: 1 relevant of 2 -> 1/2
    0.5
    """
    n_relevant = sum(g >= rel for g in judged)
    return float(_expected_hits(groups, n_relevant, rel) / n_relevant) if n_relevant else 0.0


def success(groups: Groups, judged: Sequence[float], *, k: int | None = None, rel: float = 1) -> float:
    """E[Success@k] = P(some relevant document in the top k).

    1 if a group wholly within the cutoff holds a relevant document; otherwise only the
    straddling group can supply one, and it fails when its ``c`` ranks within the cutoff all
    receive non-relevant documents, i.e. its ``r`` relevant ones all land in its other ``n - c``::

        P(none) = C(n - r, c) / C(n, c) = C(n - c, r) / C(n, r)
                = perm(n - r, c) / perm(n, c) = perm(n - c, r) / perm(n, r)

    (0 when c > n - r), the form with min(r, c) factors. E = (perm(n, m) - perm(n - r', m)) /
    perm(n, m) is one division of exact integers, so the float is the correctly rounded value.

    >>> success([[0, 0, 1]], [1], k=1)  # 1 - 2/3
    0.3333333333333333
    """
    for _, n, c, group in _layout(groups, k):
        if c == 0:
            break
        r = sum(g >= rel for g in group)
        if r == 0:
            continue
        if c == n or c > n - r:
            return 1.0
        drawn, other = (c, r) if c <= r else (r, c)
        every = math.perm(n, drawn)
        return (every - math.perm(n - other, drawn)) / every
    return 0.0


def reciprocal_rank(groups: Groups, judged: Sequence[float], *, k: int | None = None, rel: float = 1) -> float:
    """E[RR@k] = sum_j P(J = j) / (s + j) over the first group holding a relevant document.

    Groups before it hold no relevant document, and every document after it ranks lower, so the
    first relevant document is that group's, at rank ``s + J``; ``J`` is the rank within the group
    of the first of its ``r`` relevant documents among ``n``::

        P(J = j) = C(n - j, r - 1) / C(n, r)
                 = [prod_{i=0}^{j-2} (n - r - i) / (n - i)] * r / (n - j + 1),   j = 1 .. n - r + 1

    (the first j - 1 ranks non-relevant, then a relevant one), computed by that recurrence so no
    binomial coefficient is formed; only ``s + j <= k`` counts (RR@k is 0 beyond the cutoff).

    >>> reciprocal_rank([[0, 1]], [1])  # (1/2) / 1 + (1/2) / 2
    0.75
    """
    for s, n, c, group in _layout(groups, k):
        if c == 0:
            return 0.0
        r = sum(g >= rel for g in group)
        if r == 0:
            continue
        total, none_yet = 0.0, 1.0  # none_yet = P(J > j - 1)
        for j in range(1, min(c, n - r + 1) + 1):
            total += none_yet * r / (n - j + 1) / (s + j)
            none_yet *= (n - r - j + 1) / (n - j + 1)
            if none_yet == 0.0:  # underflow: the remaining terms are below float resolution
                break
        return total
    return 0.0


def _refuse_judgement_inputs(name: str, in_qrels: object) -> None:
    if in_qrels is not None:
        raise UnsupportedMetricError(
            f"{name}: the tie-aware {name} takes no per-document judgement input (in_qrels): it has no exact "
            f"formula for unjudged retrieved documents under ties='average'. Fix: use ties='docid_desc', "
            f"'docid_asc' or 'input', or a metric without a gain map.")


def _scaled_dcg(groups: Groups, k: int | None, gain: str, discount: str, rel: float | None,
                gains: Mapping[float, float] | None, shift: int) -> float:
    """E[DCG@k] / 2^shift (see :func:`evalbridge.metrics.reference.exp_shift`)."""
    total = 0.0
    for s, n, c, group in _layout(groups, k):
        if c == 0:
            break
        # exactly rounded: any order of the group gives the same bits
        group_gain = math.fsum(gain_of(g, gain, rel, gains=gains, shift=shift) for g in group)
        if group_gain:
            total += group_gain * (sum(discount_of(s + p, discount) for p in range(1, c + 1)) / n)
    return total


def dcg(groups: Groups, judged: Sequence[float], *, k: int | None = None, gain: str = "linear",
        discount: str = "log2", rel: float | None = None, gains: Mapping[float, float] | None = None,
        in_qrels: Sequence[bool] | None = None) -> float:
    """E[DCG@k] = sum over groups of (sum of the group's gains) * (1/n) * sum_{p=1}^{c} discount(s + p).

    DCG is linear in each document's discount and each document of a group is equally likely at
    each of its ranks, so it gets the mean discount of the group's ranks, ranks beyond the cutoff
    counting 0 (McSherry & Najork 2008; scikit-learn's ``_tie_averaged_dcg``). Gains (a ``gains``
    map included) and discounts as in :func:`evalbridge.metrics.reference.dcg`; exp gains are summed
    divided by ``2^shift`` as there, so no intermediate overflows. ``in_qrels`` (unjudged retrieved
    documents) is refused: :func:`unsupported` refuses the metrics that read it.

    >>> dcg([[1, 0]], [1])  # gain 1 at rank 1 or 2: (1 + 1/log2(3)) / 2
    0.8154648767857288
    """
    _refuse_judgement_inputs("DCG", in_qrels)
    shift = exp_shift(judged) if gain == "exp" else 0
    total = _scaled_dcg(groups, k, gain, discount, rel, gains, shift)
    try:
        return math.ldexp(total, shift)
    except OverflowError:
        raise dcg_overflow(total, shift) from None


def ndcg(groups: Groups, judged: Sequence[float], *, k: int | None = None, gain: str = "linear",
         ideal: str = "qrels", discount: str = "log2", rel: float | None = None,
         gains: Mapping[float, float] | None = None, in_qrels: Sequence[bool] | None = None) -> float:
    """E[nDCG@k] = E[DCG@k] / IDCG@k; 0 when IDCG@k = 0.

    IDCG does not depend on the order of tied documents: it sorts the judged grades' gains
    (``ideal=qrels``) or the multiset of retrieved gains (``ideal=run``), so the expectation of
    the ratio is the ratio of the expectation. IDCG is the reference's, computed the same way
    (both sums divided by the same ``2^shift``, so exp gains never overflow).

    >>> round(ndcg([[1, 0]], [1]), 6)  # E[DCG] / 1
    0.815465
    """
    _refuse_judgement_inputs("nDCG", in_qrels)
    shift = exp_shift(judged) if gain == "exp" else 0
    if ideal == "run":
        pool = [gain_of(g, gain, rel, gains=gains, shift=shift) for group in groups for g in group]
    elif gains is None:  # the gain grows with the grade: only the k best grades can enter the ideal
        pool = [gain_of(g, gain, rel, shift=shift) for g in sorted(judged, reverse=True)[:k]]
    else:
        pool = [gain_of(g, gain, rel, gains=gains, shift=shift) for g in judged]
    idcg = discounted(sorted((g for g in pool if g > 0), reverse=True), k, discount)
    if idcg == 0:
        return 0.0
    return _scaled_dcg(groups, k, gain, discount, rel, gains, shift) / idcg


def hypergeometric(n: int, r: int, c: int) -> list[tuple[int, float]]:
    """``(h, P(H = h))`` for H = the relevant documents among ``c`` drawn from ``n`` holding ``r``.

    P(H = h) = C(r, h) C(n - r, c - h) / C(n, c), h = max(0, c - n + r) .. min(r, c), computed
    without a binomial coefficient: unnormalised weights start at 1 on the mode and follow the
    ratio of consecutive terms,

        P(h + 1) / P(h) = (r - h)(c - h) / ((h + 1)(n - r - c + h + 1)),

    outwards (so far tails underflow to 0 harmlessly), then are divided by their sum.

    >>> [(h, round(p, 4)) for h, p in hypergeometric(4, 2, 2)]
    [(0, 0.1667), (1, 0.6667), (2, 0.1667)]
    """
    low, high = max(0, c - n + r), min(r, c)
    mode = min(max((c + 1) * (r + 1) // (n + 2), low), high)
    weights = {mode: 1.0}
    for h in range(mode, high):
        weights[h + 1] = weights[h] * (r - h) * (c - h) / ((h + 1) * (n - r - c + h + 1))
    for h in range(mode, low, -1):
        weights[h - 1] = weights[h] * h * (n - r - c + h) / ((r - h + 1) * (c - h + 1))
    total = math.fsum(weights.values())
    return [(h, weights[h] / total) for h in range(low, high + 1)]


def average_precision(groups: Groups, judged: Sequence[float], *, k: int | None = None, rel: float = 1,
                      norm: str = "R", weights: str = "binary", max_grade: float | None = None) -> float:
    """E[AP@k], with AP@k = (1/N) * sum_{i relevant, rank_i <= k} w_i * P@rank_i (as the reference).

    Write ``X = sum_i w_i * [rank_i <= k] * (1 + |{j relevant: rank_j < rank_i}|) / rank_i``, so AP = X / N.
    Relevant documents of earlier groups always rank before ``i``, those of later groups never;
    ``i``'s own group puts it at rank ``s + p``, ``p`` uniform on ``1 .. n``, and given ``p`` each of
    the group's other ``r - 1`` relevant documents is before it with probability ``(p - 1)/(n - 1)``.
    Hence, with ``W`` the sum of the group's relevant weights,

        E[X_group] = (W / n) * sum_{p=1}^{c} (A + 1 + (p - 1)(r - 1)/(n - 1)) / (s + p).

    ``norm=R``: N = R is fixed, E[AP] = sum of E[X_group] / R.

    ``norm=retrieved``: N = |relevant in the top k| varies only with the straddling group, through
    H = its relevant documents within the cutoff, hypergeometric (n, r, c) (:func:`hypergeometric`).
    Groups wholly inside the cutoff are independent of H; given H = h, the straddling group's
    relevant ranks within the cutoff are a uniform h-subset of its ``c`` ranks, each relevant
    document equally likely to be among them, so

        E[X_straddling | H = h] = (W / r) * (h / c) * sum_{p=1}^{c} (A + 1 + (p - 1)(h - 1)/(c - 1)) / (s + p)

    and E[AP] = sum_h P(H = h) * (E[X_inside] + E[X_straddling | H = h]) / (A + h), terms with
    A + h = 0 being 0 (no relevant document retrieved). Without a straddling group N is fixed.

    >>> average_precision([[1, 0]], [1])  # relevant at rank 1 or 2: (1 + 1/2) / 2
    0.75
    """
    if weights == "graded" and not max_grade:
        raise ValueError("weights=graded needs max_grade > 0")
    inside, before = 0.0, 0  # E[X] of the groups wholly within the cutoff; A
    straddling: tuple[int, int, int, int, float] | None = None
    for s, n, c, group in _layout(groups, k):
        if c == 0:
            break
        relevant = [g for g in group if g >= rel]
        if not relevant:
            continue
        r = len(relevant)
        weight = math.fsum(g / max_grade if weights == "graded" and max_grade else 1.0 for g in relevant)
        if n == 1:  # the reference's own arithmetic: P@i * w_i
            inside += (before + 1) / (s + 1) * weight
        elif c == n or norm == "R":
            inside += weight / n * math.fsum((before + 1 + (p - 1) * (r - 1) / (n - 1)) / (s + p)
                                             for p in range(1, c + 1))
            if c < n:
                break
        else:
            straddling = (s, n, c, r, weight)
            break
        before += r
    if norm == "R":
        n_relevant = sum(g >= rel for g in judged)
        return inside / n_relevant if n_relevant else 0.0
    if straddling is None:
        return inside / before if before else 0.0
    s, n, c, r, weight = straddling
    first = math.fsum(1 / (s + p) for p in range(1, c + 1))
    later = math.fsum((p - 1) / (s + p) for p in range(1, c + 1))
    terms = []
    for h, probability in hypergeometric(n, r, c):
        if before + h == 0:
            continue
        own = weight / r * h / c * ((before + 1) * first + ((h - 1) / (c - 1) * later if c > 1 else 0.0))
        terms.append(probability * (inside + own) / (before + h))
    return math.fsum(terms)


#: Metric name -> tie-aware function, with the same options as the reference function.
KERNELS: dict[str, Callable[..., float]] = {
    "P": precision,
    "R": recall,
    "RR": reciprocal_rank,
    "AP": average_precision,
    "nDCG": ndcg,
    "DCG": dcg,
    "Rprec": r_precision,
    "Success": success,
}


def unsupported(metric: str | Metric) -> str | None:
    """Why ``metric`` (a family name or a :class:`~evalbridge.metrics.spec.Metric`) cannot be computed
    under ``ties="average"``, or ``None`` when it can.

    A family without a function in :data:`KERNELS` is refused; so is a metric whose kernel reads
    per-document judgement inputs (:attr:`Metric.inputs <evalbridge.metrics.spec.Metric.inputs>`:
    ``in_qrels``, ``in_pool``; e.g. DCG/nDCG with a ``gains`` map, which give unjudged documents no
    gain), since the tie-aware functions see only grades.

    >>> unsupported("nDCG") is None
    True
    """
    name = metric if isinstance(metric, str) else metric.name
    if name not in KERNELS:
        return (f"{name} has no exact tie-aware formula, so ties='average' (the expected value over every "
                f"order of tied documents) cannot compute it; use ties='docid_desc', 'docid_asc' or 'input'.")
    inputs = () if isinstance(metric, str) else metric.inputs
    if inputs:
        return (f"{metric} reads per-document judgement inputs ({', '.join(inputs)}), which have no exact "
                f"tie-aware formula, so ties='average' (the expected value over every order of tied "
                f"documents) cannot compute it; use ties='docid_desc', 'docid_asc' or 'input'"
                + (", or drop the gains map." if not isinstance(metric, str) and "gains" in dict(metric.options)
                   else "."))
    return None
