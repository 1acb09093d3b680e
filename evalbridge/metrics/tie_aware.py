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
  :func:`evalbridge.common.ranking.rank_groups`; a ranking without ties is a list of one-element groups,
  and the value is then the :mod:`evalbridge.metrics.reference` value, bit for bit;
* ``judged``: the grades of every judged document of the query;

and the same options as the reference function of the same name. The per-document inputs a family
declares (``in_qrels``, ``in_pool``: see :mod:`evalbridge.metrics.reference`) come in the shape of
``groups``, one flag per document: a document of a tie group is its grade and its flags together.
Sums over a group's members are exactly rounded (``math.fsum``) or read counts only, and ERR sorts
a group's stopping probabilities first, so the order the members are given in never changes a bit.

The notation for one group (``s``, ``n``, ``r``, ``c``, ``A``, the group that *straddles* the cutoff) and
the distributions within it are :mod:`evalbridge.metrics.tie_groups`'s.

Three kinds of formula cover the catalogue: order-free metrics (NumRet, NumRel, SetP, SetR) are
the reference's value; metrics linear in per-rank indicators or weights (P, R, Rprec, Hits, F1,
R_cap, Judged, Hole, DCG, RBP) spread each group's total over the mean weight of its ranks; the
others condition on the exact distribution of what lands above a document (hypergeometric and
uniform counts: RR, Success, AP, bpref, infAP, RBP_resid; elementary symmetric means: ERR).

A metric without an exact formula here is refused under ``ties="average"`` (:func:`unsupported`),
never approximated: a new family gets a function here, of the name its catalogue entry gives
(:attr:`~evalbridge.metrics.catalogue.MetricInfo.function`), or is declared ``tie_aware=False`` and
stays refused. ERR and infAP refuse, with an :class:`~evalbridge.errors.InputError`, a single tie
group that would take more than
:data:`MAX_GROUP_STEPS` steps (thousands of tied documents with as many relevant ones).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from . import reference as _reference
from .catalogue import functions_of
from .reference import discounted, dcg_overflow, discount_of, err_probability, exp_shift, gain_of, rbp_weight
from .tie_groups import (MAX_GROUP_STEPS, GroupFlags, Groups, err_group, expected_hits, expected_marked, flagged,
                         hypergeometric, infap_group, infap_single, layout, some_in_top)

if TYPE_CHECKING:
    from .spec import Metric

__all__ = ["precision", "recall", "reciprocal_rank", "average_precision", "ndcg", "dcg", "r_precision",
           "success", "judged_share", "hole", "bpref", "inferred_ap", "expected_reciprocal_rank",
           "rank_biased_precision", "rbp_residual", "f1", "capped_recall", "hits", "num_ret", "num_rel",
           "set_precision", "set_recall", "hypergeometric", "FUNCTIONS", "MAX_GROUP_STEPS", "unsupported"]


def precision(groups: Groups, judged: Sequence[float], *, k: int, rel: float = 1) -> float:
    """E[P@k] = (1/k) * sum over groups of c * r / n (hypergeometric mean; exact rational).

    >>> precision([[1], [0, 1, 0]], [1, 1], k=2)  # (1 + 1 * 1/3) / 2
    0.6666666666666666
    """
    return float(expected_hits(groups, k, rel) / k)


def recall(groups: Groups, judged: Sequence[float], *, k: int | None, rel: float = 1) -> float:
    """E[R@k] = (1/R) * sum over groups of c * r / n, R = |{judged grade >= rel}|; 0 when R = 0.

    >>> recall([[0, 1]], [1, 1, 1], k=1)  # (1 * 1/2) / 3
    0.16666666666666666
    """
    n_relevant = sum(g >= rel for g in judged)
    return float(expected_hits(groups, k, rel) / n_relevant) if n_relevant else 0.0


def r_precision(groups: Groups, judged: Sequence[float], *, rel: float = 1) -> float:
    """E[Rprec] = E[P@R], R = |{judged grade >= rel}|: :func:`precision` with k = R; 0 when R = 0.

    >>> r_precision([[1, 0], [1]], [1, 1])  # the top 2 hold the tied pair: 1 relevant of 2 -> 1/2
    0.5
    """
    n_relevant = sum(g >= rel for g in judged)
    return float(expected_hits(groups, n_relevant, rel) / n_relevant) if n_relevant else 0.0


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
    return some_in_top([[g >= rel for g in group] for group in groups], k)


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
    for s, n, c, group in layout(groups, k):
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


def _scaled_dcg(items: Sequence[Sequence[tuple[float, bool]]], k: int | None, gain: str, discount: str,
                rel: float | None, gains: Mapping[float, float] | None, shift: int) -> float:
    """E[DCG@k] / 2^shift (see :func:`evalbridge.metrics.reference.exp_shift`); unjudged documents gain 0."""
    total = 0.0
    for s, n, c, group in layout(items, k):
        if c == 0:
            break
        # exactly rounded: any order of the group gives the same bits
        group_gain = math.fsum(gain_of(g, gain, rel, gains=gains, shift=shift) for g, judged in group if judged)
        if group_gain:
            total += group_gain * (sum(discount_of(s + p, discount) for p in range(1, c + 1)) / n)
    return total


def dcg(groups: Groups, judged: Sequence[float], *, k: int | None = None, gain: str = "linear",
        discount: str = "log2", rel: float | None = None, gains: Mapping[float, float] | None = None,
        in_qrels: GroupFlags | None = None) -> float:
    """E[DCG@k] = sum over groups of (sum of the group's gains) * (1/n) * sum_{p=1}^{c} discount(s + p).

    DCG is linear in each document's discount and each document of a group is equally likely at
    each of its ranks, so it gets the mean discount of the group's ranks, ranks beyond the cutoff
    counting 0 (McSherry & Najork 2008; scikit-learn's ``_tie_averaged_dcg``). Gains (a ``gains``
    map included) and discounts as in :func:`evalbridge.metrics.reference.dcg`; exp gains are summed
    divided by ``2^shift`` as there, so no intermediate overflows. ``in_qrels`` (read with a gain
    map), grouped as ``groups``, gives the unjudged documents gain 0: still a per-document gain.

    >>> dcg([[1, 0]], [1])  # gain 1 at rank 1 or 2: (1 + 1/log2(3)) / 2
    0.8154648767857288
    """
    shift = exp_shift(judged) if gain == "exp" else 0
    total = _scaled_dcg(flagged(groups, in_qrels, "in_qrels"), k, gain, discount, rel, gains, shift)
    try:
        return math.ldexp(total, shift)
    except OverflowError:
        raise dcg_overflow(total, shift) from None


def ndcg(groups: Groups, judged: Sequence[float], *, k: int | None = None, gain: str = "linear",
         ideal: str = "qrels", discount: str = "log2", rel: float | None = None,
         gains: Mapping[float, float] | None = None, in_qrels: GroupFlags | None = None) -> float:
    """E[nDCG@k] = E[DCG@k] / IDCG@k; 0 when IDCG@k = 0.

    IDCG does not depend on the order of tied documents: it sorts the judged grades' gains
    (``ideal=qrels``) or the multiset of retrieved gains (``ideal=run``, unjudged documents gaining 0),
    so the expectation of the ratio is the ratio of the expectation. IDCG is the reference's, computed
    the same way (both sums divided by the same ``2^shift``, so exp gains never overflow).

    >>> round(ndcg([[1, 0]], [1]), 6)  # E[DCG] / 1
    0.815465
    """
    shift = exp_shift(judged) if gain == "exp" else 0
    items = flagged(groups, in_qrels, "in_qrels")
    if ideal == "run":
        pool = [gain_of(g, gain, rel, gains=gains, shift=shift) if flag else 0.0
                for group in items for g, flag in group]
    elif gains is None:  # the gain grows with the grade: only the k best grades can enter the ideal
        pool = [gain_of(g, gain, rel, shift=shift) for g in sorted(judged, reverse=True)[:k]]
    else:
        pool = [gain_of(g, gain, rel, gains=gains, shift=shift) for g in judged]
    idcg = discounted(sorted((g for g in pool if g > 0), reverse=True), k, discount)
    if idcg == 0:
        return 0.0
    return _scaled_dcg(items, k, gain, discount, rel, gains, shift) / idcg


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
    for s, n, c, group in layout(groups, k):
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


def judged_share(groups: Groups, judged: Sequence[float], *, k: int | None = None, in_qrels: GroupFlags) -> float:
    """E[Judged@k] = (1/min(k, L)) * sum over groups of c * j / n, ``j`` the group's judged documents,
    ``L`` the number retrieved; 0 when nothing is retrieved.

    The denominator does not depend on the order, and the count is linear in each document's
    indicator "judged and within the top k" (:func:`~evalbridge.metrics.tie_groups.expected_marked`); an exact rational.

    >>> judged_share([[1], [0, 0]], [1, 0], k=2, in_qrels=[[True], [True, False]])  # (1 + 1/2) / 2
    0.75
    """
    length = sum(map(len, in_qrels))
    shown = length if k is None else min(k, length)
    return float(expected_marked(in_qrels, k) / shown) if shown else 0.0


def hole(groups: Groups, judged: Sequence[float], *, k: int, in_pool: GroupFlags) -> float:
    """E[Hole@k] = (1/k) * sum over groups of c * u / n, ``u`` the group's documents judged for no query.

    Linear in each document's indicator "unpooled and within the top k"
    (:func:`~evalbridge.metrics.tie_groups.expected_marked`).

    >>> hole([[0, 0]], [1], k=1, in_pool=[[True, False]])  # one unpooled doc of 2 takes rank 1 half the time
    0.5
    """
    return float(expected_marked([[not pooled for pooled in group] for group in in_pool], k) / k)


def hits(groups: Groups, judged: Sequence[float], *, k: int | None = None, rel: float = 1) -> float:
    """E[Hits@k] = sum over groups of c * r / n (hypergeometric mean, exact rational).

    >>> hits([[1, 0, 0]], [1], k=1)
    0.3333333333333333
    """
    return float(expected_hits(groups, k, rel))


def capped_recall(groups: Groups, judged: Sequence[float], *, k: int, rel: float = 1) -> float:
    """E[R_cap@k] = E[|relevant in the top k|] / min(k, R); 0 when R = 0 (a fixed denominator).

    >>> capped_recall([[1, 0]], [1, 1, 1], k=1)  # (1/2) / min(1, 3)
    0.5
    """
    n_relevant = sum(g >= rel for g in judged)
    return float(expected_hits(groups, k, rel) / min(k, n_relevant)) if n_relevant else 0.0


def f1(groups: Groups, judged: Sequence[float], *, k: int | None = None, rel: float = 1) -> float:
    """E[F1@k] = 2 * E[|relevant in the top k|] / (k + R), ``k`` the number retrieved without a cutoff.

    F1@k = 2 * hits / (k + R) has a denominator no order changes (the reference's 0 for no hit is
    this formula's value too), so the expectation is that of the hits.

    >>> f1([[1, 0]], [1], k=1)  # 2 * (1/2) / (1 + 1)
    0.5
    """
    expected = expected_hits(groups, k, rel)
    if not expected:
        return 0.0
    return float(2 * expected / ((k if k is not None else sum(map(len, groups))) + sum(g >= rel for g in judged)))


def num_ret(groups: Groups, judged: Sequence[float]) -> float:
    """NumRet = |retrieved|: no order changes it.

    >>> num_ret([[1, 0], [0]], [1])
    3.0
    """
    return _reference.num_ret(_flat(groups), judged)


def num_rel(groups: Groups, judged: Sequence[float], *, rel: float = 1) -> float:
    """NumRel = R: read from the judgements only.

    >>> num_rel([[0, 0]], [2, 1, 0], rel=1)
    2.0
    """
    return _reference.num_rel(_flat(groups), judged, rel=rel)


def set_precision(groups: Groups, judged: Sequence[float], *, rel: float = 1) -> float:
    """SetP = |relevant retrieved| / |retrieved|: a set measure without a cutoff, no order changes it.

    >>> set_precision([[1, 0], [0, 1]], [1, 1])
    0.5
    """
    return _reference.set_precision(_flat(groups), judged, rel=rel)


def set_recall(groups: Groups, judged: Sequence[float], *, rel: float = 1) -> float:
    """SetR = |relevant retrieved| / R: a set measure without a cutoff, no order changes it.

    >>> set_recall([[1, 0, 0]], [1, 1])
    0.5
    """
    return _reference.set_recall(_flat(groups), judged, rel=rel)


def _flat(groups: Groups) -> list[float]:
    return [g for group in groups for g in group]


def rank_biased_precision(groups: Groups, judged: Sequence[float], *, k: int | None = None, rel: float = 1,
                          p: float = 0.8, weights: str = "binary") -> float:
    """E[RBP@k] = (1 - p) * sum over groups of (sum of the group's weights) * (1/n) * sum_{j=0}^{c-1} p^(s+j).

    RBP is linear in each document's rank weight ``p^(rank - 1)``, and each document of a group takes
    each of its ranks with probability 1/n (ranks beyond the cutoff weigh 0): the group's weights
    (:func:`~evalbridge.metrics.reference.rbp_weight`, ``top`` the query's top judged grade) spread
    over the mean rank weight of its ranks, as DCG's gains over its discounts.

    >>> round(rank_biased_precision([[1, 0]], [1], p=0.5), 6)  # (1 - 0.5) * (1 + 0.5) / 2
    0.375
    """
    top = max(judged, default=0)
    total = 0.0
    for s, n, c, group in layout(groups, k):
        if c == 0:
            break
        weight = math.fsum(rbp_weight(g, rel=rel, weights=weights, top=top) for g in group)
        if weight:
            total += weight * (sum(p ** (s + j) for j in range(c)) / n)
    return (1 - p) * total


def rbp_residual(groups: Groups, judged: Sequence[float], *, k: int | None = None, p: float = 0.8,
                 in_qrels: GroupFlags | None = None) -> float:
    """E[RBP_resid@k] = P(U > 0) * p^L + (1 - p) * sum over groups of (u / n) * sum_{j=0}^{c-1} p^(s+j).

    The residual is ``1[U > 0] * (p^L + (1 - p) * S)``, ``U`` the unjudged documents (no judgement, or a
    negative grade) in the top k, ``S`` the sum of their rank weights ``p^(rank - 1)``, ``L = min(k,
    |retrieved|)``. ``S`` is 0 whenever ``U`` is, so the indicator drops from the second term, which
    is linear (as RBP, ``u`` a group's unjudged documents); ``P(U > 0)`` is 1 once a group wholly
    inside the cutoff holds an unjudged document, else that of the straddling group,
    ``1 - C(n - u, c) / C(n, c)`` (as :func:`success`).

    >>> rbp_residual([[1, 0]], [1], p=0.5, in_qrels=[[True, False]])  # 0.25 + 0.5 * (1 + 0.5) / 2
    0.625
    """
    unjudged = [[not flag or g < 0 for g, flag in group] for group in flagged(groups, in_qrels, "in_qrels")]
    some = some_in_top(unjudged, k)
    if not some:
        return 0.0
    total: float = 0  # an int 0 as the reference's sum() starts from: the same bits without ties
    for s, n, c, group in layout(unjudged, k):
        if c == 0:
            break
        u = sum(group)
        if u:
            total += u * sum(p ** (s + j) for j in range(c)) / n
    length = sum(map(len, groups))
    shown = length if k is None else min(k, length)
    if some == 1.0:  # the reference's arithmetic, bit for bit without ties
        return p ** shown + (1 - p) * total
    return some * p ** shown + (1 - p) * total


def bpref(groups: Groups, judged: Sequence[float], *, rel: float = 1, in_qrels: GroupFlags | None = None) -> float:
    """E[bpref] = (1/R) * sum over groups of r * (1/(m + 1)) * sum_{x=0}^{m} t(A + x).

    ``t(a) = 1 - min(a, R) / min(N, R)`` (1 when a = 0) is the term of a judged relevant document with
    ``a`` judged non-relevant documents above it (:func:`evalbridge.metrics.reference.bpref`). Only the
    order of judged documents with a grade >= 0 matters (the others are skipped); a group holds ``r``
    relevant and ``m`` non-relevant ones, and ``A`` non-relevant ones rank in earlier groups. For one
    relevant document of the group, its order among itself and the ``m`` non-relevant ones is uniform
    over the ``m + 1`` places whatever the other relevant ones do, so ``x``, the non-relevant ones of
    its group above it, is uniform on ``0 .. m``; linearity over the ``r`` relevant documents gives the
    sum above. No cutoff: bpref reads the whole ranking.

    Buckley and Voorhees' ranking n r n r with the middle two tied (R = 2, N = 3): the first relevant
    document has 1 or 2 non-relevant above it, (1/2 + 0) / 2 = 1/4, the last always 2, term 0:

    >>> bpref([[0], [1, 0], [1]], [1, 1, 0, 0, 0])  # (1/4 + 0) / 2
    0.125
    """
    n_relevant = sum(g >= 0 and g >= rel for g in judged)
    n_nonrelevant = sum(0 <= g < rel for g in judged)
    if not n_relevant:
        return 0.0

    def term(above: int) -> float:
        return 1.0 - min(above, n_relevant) / min(n_nonrelevant, n_relevant) if above else 1.0

    total, above = 0.0, 0
    for group in flagged(groups, in_qrels, "in_qrels"):
        kept = [g for g, flag in group if flag and g >= 0]
        r = sum(g >= rel for g in kept)
        m = len(kept) - r
        if r:
            total += r * math.fsum(term(above + x) for x in range(m + 1)) / (m + 1)
        above += m
    return total / n_relevant


def expected_reciprocal_rank(groups: Groups, judged: Sequence[float], *, k: int | None = None,
                             rel: float | None = None, max_grade: float | None = None,
                             gains: Mapping[float, float] | None = None,
                             in_qrels: GroupFlags | None = None) -> float:
    """E[ERR@k], exactly: the earlier groups' stopping factor times each group's own expected term.

    ERR@k = sum_i (1/i) R_i prod_{m<i} (1 - R_m) (:func:`evalbridge.metrics.reference.expected_reciprocal_rank`,
    ``R`` = :func:`~evalbridge.metrics.reference.err_probability`, 0 for unjudged documents). A whole
    earlier group multiplies every later term by the product of its ``1 - R``, which no order
    changes; so E[ERR] = sum over groups of D * E[T], ``D`` the product over the earlier groups and
    ``T = sum_{j=1}^{c} R_(j) prod_{m<j} (1 - R_(m)) / (s + j)`` the group's own part, ``(j)`` its
    j-th document in a uniformly random order.

    The group's own E[T] is :func:`~evalbridge.metrics.tie_groups.err_group`'s, exactly (above
    :data:`MAX_GROUP_STEPS` steps an InputError; a cutoff bounds it). A group of one
    document is the reference's own arithmetic.

    Grades 2 and 0 tied, max_grade 2 (R = 3/4 and 0): (3/4) / 1 or (3/4) / 2, so E = 9/16:

    >>> expected_reciprocal_rank([[2, 0]], [2], max_grade=2)
    0.5625
    """
    if not max_grade:
        raise ValueError("ERR needs max_grade > 0")
    total, decay = 0.0, 1.0
    for s, n, c, group in layout(flagged(groups, in_qrels, "in_qrels"), k):
        if c == 0:
            break
        stops = sorted(r for r in (err_probability(g, max_grade=max_grade, rel=rel, gains=gains)
                                   for g, flag in group if flag) if r)  # sorted: the same bits in any order
        if not stops:
            continue
        if n == 1:  # the reference's own arithmetic
            (r,) = stops
            total += r * decay / (s + 1)
            decay *= 1.0 - r
            continue
        total += decay * err_group(stops, n, s, c)
        decay *= math.prod(1.0 - r for r in stops)
    return total


#: From how many steps (positions times support) :func:`inferred_ap` follows a group's chain with numpy
#: (:func:`~evalbridge.metrics.tie_groups.infap_group`):
#: about 3x faster on large groups, 3x slower on small ones (measured on Robust04-sized groups).
NUMPY_CHAIN_STEPS = 2_000


def inferred_ap(groups: Groups, judged: Sequence[float], *, rel: float = 1,
                in_qrels: GroupFlags | None = None) -> float:
    """E[infAP] = (1/R) * sum over groups of (relevant in the group) * E[the term of one of them].

    trec_eval's term of a judged relevant document at 0-based rank j with ``r``, ``n``, ``u`` judged
    relevant, non-relevant and pooled (negative grade) documents above it
    (:func:`evalbridge.metrics.reference.inferred_ap`) simplifies to

        T = (1 + (r + n + u) * rho) / (j + 1),   rho = (r + e) / (r + n + 2e)

    (1 at j = 0, where r = n = u = 0). In a group of ``b`` documents judged with a grade >= 0 (``r_g``
    relevant, ``m`` non-relevant) and ``f`` fillers (``u_g`` pooled, the others unjudged), after ``s``
    documents of which ``A_r``, ``A_n``, ``A_u`` judged (``A`` in all): the order of the ``b`` judged
    ones is uniform and independent of where the fillers fall, so for one relevant document

    * its position ``P`` in the group is uniform on 1 .. n (n = b + f), and ``t``, the judged
      documents of its group among the P - 1 above it, is hypergeometric (n - 1, b - 1, P - 1),
      followed along P as a chain (one more document above it: judged with probability
      (b - 1 - t) / (n - P), a filler otherwise);
    * given t, ``h`` of them are relevant, hypergeometric (b - 1, r_g - 1, t) (the judged documents'
      order is uniform, whatever the fillers do);
    * the P - 1 - t fillers above it hold u_g / f of pooled ones in expectation, and T is linear in u.

    With j = s + P - 1, r = A_r + h, n = A_n + t - h, u = A_u + (pooled fillers above it), so

        E[T] = (1/n) sum_P 1/(s + P) sum_t P(t | P) [ S1(t) + (u_g / f) (P - 1 - t) S2(t) ],
        S1(t) = sum_h P(h | t) (1 + (A + t) rho_h),   S2(t) = sum_h P(h | t) rho_h,

    about n * min(b, f + 1) + 3 b min(r_g, m + 1) steps per group (above :data:`MAX_GROUP_STEPS` an InputError). A
    group of one document is the reference's own arithmetic.

    A relevant and a non-relevant document tied at the top: T = 1 at rank 1, or (1 + 1 * e / (1 + 2e)) / 2
    at rank 2, so E = (1 + 1/2 + e / (2 + 4e)) / 2 = 0.75 + 2.5e-6 (up to e^2):

    >>> round(inferred_ap([[1, 0]], [1, 0]), 7)
    0.7500025
    """
    n_relevant = sum(g >= 0 and g >= rel for g in judged)
    if not n_relevant:
        return 0.0
    total, s, relevant, nonrelevant, pooled = 0.0, 0, 0, 0, 0
    for group in flagged(groups, in_qrels, "in_qrels"):
        r = sum(flag and g >= 0 and g >= rel for g, flag in group)
        m = sum(flag and 0 <= g < rel for g, flag in group)
        u = sum(flag and g < 0 for g, flag in group)
        if r and len(group) == 1:
            total += infap_single(s, relevant, nonrelevant, pooled)
        elif r:
            total += r * infap_group(s, (relevant, nonrelevant, pooled), r, m, u, len(group) - r - m - u,
                                   numpy_from=NUMPY_CHAIN_STEPS)
        s, relevant, nonrelevant, pooled = s + len(group), relevant + r, nonrelevant + m, pooled + u
    return total / n_relevant


#: Metric family -> tie-aware function (the function its catalogue entry names), with the same options as
#: the reference function; a family declared ``tie_aware=False`` has none.
FUNCTIONS: dict[str, Callable[..., float]] = functions_of(globals())


def unsupported(metric: str | Metric) -> str | None:
    """Why ``metric`` (a family name or a :class:`~evalbridge.metrics.spec.Metric`) cannot be computed
    under ``ties="average"``, or ``None`` when it can.

    A family without a function in :data:`FUNCTIONS` is refused (every family of the catalogue has one;
    a new family declared ``tie_aware=False`` stays refused until it gets its exact formula). The functions take the per-document
    judgement inputs a family declares (``in_qrels``, ``in_pool``) in the shape of the tie groups.

    >>> unsupported("nDCG") is None
    True
    """
    name = metric if isinstance(metric, str) else metric.name
    if name not in FUNCTIONS:
        return (f"{name} has no exact tie-aware formula, so ties='average' (the expected value over every "
                f"order of tied documents) cannot compute it; use ties='docid_desc', 'docid_asc' or 'input'.")
    return None
