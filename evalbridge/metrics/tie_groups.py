"""What lands where when one tie group's order is uniformly random: the exact distributions the tie-aware metrics read.

:mod:`evalbridge.metrics.tie_aware` computes each metric's expected value over every order of each
tie group; the counts and distributions it conditions on live here, written once: where each group
falls against the cutoff (:func:`layout`), expected counts of marked documents in the top k
(:func:`expected_marked`), the chance some marked document is there (:func:`some_in_top`), the
hypergeometric distribution (:func:`hypergeometric`), and the two group computations heavy enough to
be bounded (:data:`MAX_GROUP_STEPS`): ERR's elementary symmetric means (:func:`err_group`) and
infAP's chain over positions (:func:`infap_group`).

Notation for one group: it holds ``n`` documents, ``r`` of them relevant (``grade >= rel``), and
follows ``s`` documents ranked before it, so it occupies ranks ``s+1 .. s+n``; ``c`` of those ranks
lie within the cutoff ``k`` (``c = n`` without a cutoff, ``0 <= c <= n``). ``A`` is the number of
relevant documents in the groups before it. At most one group *straddles* the cutoff (``0 < c < n``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import TypeVar

from ..errors import InputError
from .reference import INFAP_EPSILON

__all__ = ["Groups", "GroupFlags", "layout", "expected_marked", "expected_hits", "some_drawn", "some_in_top",
           "flagged", "hypergeometric", "MAX_GROUP_STEPS", "err_group", "infap_single", "infap_group"]

Groups = Sequence[Sequence[float]]
#: Per-document flags (``in_qrels``, ``in_pool``) in the shape of the tie groups.
GroupFlags = Sequence[Sequence[bool]]
_Item = TypeVar("_Item")


def layout(groups: Sequence[Sequence[_Item]], k: int | None) -> Iterator[tuple[int, int, int, Sequence[_Item]]]:
    """``(s, n, c, group)`` for each non-empty group (of grades, flags or both), in rank order (see the
    module docstring)."""
    s = 0
    for group in groups:
        n = len(group)
        if n == 0:
            continue
        yield s, n, n if k is None else max(0, min(n, k - s)), group
        s += n


def expected_marked(marks: Sequence[Sequence[bool]], k: int | None) -> Fraction:
    """E[|marked documents in the top k|] = sum over groups of c * m / n, exactly (``m`` marked in a group).

    The ``c`` ranks of a group within the cutoff receive a uniformly random ``c``-subset of its
    ``n`` documents, so the marked ones among them are hypergeometric with mean ``c * m / n``
    (``m`` itself for a group wholly inside the cutoff). Every count that is a sum over the top k
    (hits, judged, unpooled documents) is linear in these indicators.
    """
    whole, straddling = 0, Fraction(0)
    for _, n, c, group in layout(marks, k):
        if c == 0:
            break
        m = sum(map(bool, group))
        if c == n:
            whole += m
        else:
            straddling = Fraction(c * m, n)
    return whole + straddling


def expected_hits(groups: Groups, k: int | None, rel: float) -> Fraction:
    """E[|relevant in the top k|] = sum over groups of c * r / n (:func:`expected_marked`)."""
    return expected_marked([[g >= rel for g in group] for group in groups], k)


def some_drawn(n: int, r: int, c: int) -> float:
    """P(at least one of ``r`` marked documents among ``c`` drawn from ``n``), correctly rounded
    (see :func:`~evalbridge.metrics.tie_aware.success`)."""
    if r == 0:
        return 0.0
    if c == n or c > n - r:
        return 1.0
    drawn, other = (c, r) if c <= r else (r, c)
    every = math.perm(n, drawn)
    return (every - math.perm(n - other, drawn)) / every


def some_in_top(marks: Sequence[Sequence[bool]], k: int | None) -> float:
    """P(some marked document in the top k): 1 once a group wholly inside holds one, else the
    straddling group's :func:`some_drawn`."""
    for _, n, c, group in layout(marks, k):
        if c == 0:
            break
        r = sum(map(bool, group))
        if r:
            return some_drawn(n, r, c)
    return 0.0


def flagged(groups: Groups, flags: GroupFlags | None, name: str) -> list[list[tuple[float, bool]]]:
    """Each document as ``(grade, flag)``, in the groups' shape; every flag True when ``flags`` is None
    (the reference's rule for ``in_qrels=None``: every retrieved document is judged)."""
    if flags is None:
        return [[(g, True) for g in group] for group in groups]
    if [len(f) for f in flags] != [len(g) for g in groups]:
        raise ValueError(f"{name} must hold one flag per document, in the tie groups' shape")
    return [list(zip(group, flag)) for group, flag in zip(groups, flags)]


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


#: Most elementary steps :func:`~evalbridge.metrics.tie_aware.expected_reciprocal_rank` and
#: :func:`~evalbridge.metrics.tie_aware.inferred_ap` spend on one tie group (a few seconds of pure Python);
#: a larger group is refused with an InputError saying why.
MAX_GROUP_STEPS = 4_000_000


def _too_large(name: str, steps: int, group: str, fix: str) -> InputError:
    return InputError(f"the exact tie-aware {name} of a tie group of {group} takes about {steps:,} steps, above "
                      f"the bound of {MAX_GROUP_STEPS:,} (tie_aware.MAX_GROUP_STEPS) evalbridge spends on one "
                      f"group under ties='average'.", fix=fix)


def err_group(stops: Sequence[float], n: int, s: int, c: int) -> float:
    """E[sum_{j=1}^{c} R_(j) prod_{m<j} (1 - R_(m)) / (s + j)] over the orders of one group of ``n``
    documents, ``stops`` the stopping probabilities of its documents that have one (the others have
    R = 0), ``(j)`` its j-th document in a uniformly random order; the group's own part of
    :func:`~evalbridge.metrics.tie_aware.expected_reciprocal_rank`.

    E[R_(j) prod_{m<j} (1 - R_(m))]: the j-th document has a stopping probability with chance q/n
    (``q`` of the group's ``n`` documents have one; R = 0 makes the term 0), and is then uniform among
    those ``q``; the ``j - 1`` documents before it hold ``h`` of the other ``q - 1``, hypergeometric
    (n - 1, q - 1, j - 1) (:func:`hypergeometric`; documents with R = 0 contribute factors of 1), and
    those ``h`` are a uniform h-subset of them. So the term is (q/n) sum_h P(h) * g_h with
    ``g_h`` = the mean over a stopping document x and an h-subset S of the others of
    R_x prod_S (1 - R). With ``p_h`` = the mean over h-subsets of prod (1 - R) (the elementary
    symmetric polynomials of the ``1 - R``, divided by their number of terms), merging a set T of
    ``N_T`` documents of one probability R (a = 1 - R, so p_i(T) = a^i) into the set S of ``N_S``
    merged so far splits an h-subset of the union into i from S and h - i from T, i hypergeometric:

        p_h(S + T) = sum_i Hyp(N, N_S, h)(i) p_i(S) a^(h-i)
        g_h(S + T) = (N_S / N) sum_i Hyp(N - 1, N_S - 1, h)(i) g_i(S) a^(h-i)
                     + (N_T / N) R sum_i Hyp(N - 1, N_S, h)(i) p_i(S) a^(h-i),   N = N_S + N_T

    (x in S, or x in T), sums of non-negative terms with no cancellation: about
    (D * min(q, c) + c) * min(q, c) steps for D distinct probabilities; a group needing more than
    :data:`MAX_GROUP_STEPS` is refused with an InputError (a cutoff bounds it).
    """
    q = len(stops)
    top = min(q - 1, c - 1)  # the most stopping documents that can precede one within the cutoff
    values = Counter(stops)
    steps = (len(values) * (top + 1) + c) * (top + 1)
    if steps > MAX_GROUP_STEPS:
        raise _too_large("ERR", steps, f"{n} documents, {q} of them with a stopping probability ({len(values)} "
                                       f"distinct), {c} within the cutoff",
                         "give ERR a cutoff (ERR@20), or break the ties with ties='docid_desc', 'docid_asc' or "
                         "'input'.")
    # p[h]: the mean of prod (1 - R) over the h-subsets of the documents merged so far; g[h]: the mean
    # over one of them, x, and an h-subset of the others of R_x * prod (1 - R); h = 0 .. top
    p, g, size = [1.0] + [0.0] * top, [0.0] * (top + 1), 0
    for r, count in sorted(values.items()):  # merge `count` documents of probability r at once
        a, merged = 1.0 - r, size + count
        power = [a ** i for i in range(top + 1)]
        new_p, new_g = [0.0] * (top + 1), [0.0] * (top + 1)
        for h in range(min(merged, top) + 1):
            new_p[h] = math.fsum(w * p[i] * power[h - i] for i, w in hypergeometric(merged, size, h))
            if h < merged:
                earlier = math.fsum(w * g[i] * power[h - i] for i, w in hypergeometric(merged - 1, size - 1, h)) \
                    if size else 0.0
                these = math.fsum(w * p[i] * power[h - i] for i, w in hypergeometric(merged - 1, size, h))
                new_g[h] = (size * earlier + count * r * these) / merged
        p, g, size = new_p, new_g, merged
    terms = []
    for j in range(1, c + 1):
        at_j = math.fsum(probability * g[h] for h, probability in hypergeometric(n - 1, q - 1, j - 1))
        terms.append(at_j / (s + j))
    return q / n * math.fsum(terms)


def infap_single(j: int, relevant: int, nonrelevant: int, pooled: int) -> float:
    """trec_eval's term of a judged relevant document at 0-based rank ``j``, with ``relevant``,
    ``nonrelevant`` and ``pooled`` judged documents above it, in the reference's arithmetic."""
    if j == 0:
        return 1.0
    fj = float(j)
    return (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((relevant + nonrelevant + pooled) / fj)
            * ((relevant + INFAP_EPSILON) / (relevant + nonrelevant + 2 * INFAP_EPSILON)))


def _chain_python(plain: list[float], ratio: list[float], share: float, s: int, b: int, f: int) -> list[float]:
    """The terms ``sum_t P(t | P) [plain(t) + share (P - 1 - t) ratio(t)] / (s + P)``, P = 1 .. b + f, with
    P(t | P) (t judged documents among the P - 1 above one judged document of its group) followed as a
    chain over its support: one more document above it is a filler or judged."""
    n, others, judged_others = b + f, b + f - 1, b - 1
    low, chance = 0, [1.0]  # P(t | P) for t = low .. low + len - 1
    terms = []
    for position in range(1, n + 1):
        drawn, left = position - 1, others - position + 1
        parts, step = [], [0.0] * (len(chance) + 1)
        for i, q in enumerate(chance):
            t = low + i
            parts.append(q * (plain[t] + share * (drawn - t) * ratio[t]))
            if left:
                step[i] += q * (f - drawn + t) / left
                step[i + 1] += q * (judged_others - t) / left
        terms.append(math.fsum(parts) / (s + position))
        if step[0] == 0.0 and len(step) > 1:  # no filler left once t = low: the support moves up
            step, low = step[1:], low + 1
        if step[-1] == 0.0 and len(step) > 1:  # every judged document already above it
            step.pop()
        chance = step
    return terms


def _chain_numpy(plain: list[float], ratio: list[float], share: float, s: int, b: int, f: int) -> list[float]:
    """:func:`_chain_python` with each step of the chain one numpy vector operation."""
    import numpy as np

    n, others, judged_others = b + f, b + f - 1, b - 1
    plains, ratios, ts = np.array(plain), np.array(ratio), np.arange(b)
    chance = np.zeros(b)  # P(t | P), t = 0 .. b - 1
    chance[0] = 1.0
    terms = []
    for position in range(1, n + 1):
        drawn, left = position - 1, others - position + 1
        low, high = max(0, drawn - f), min(judged_others, drawn) + 1  # the support of t
        q, t = chance[low:high], ts[low:high]
        terms.append(float(q @ (plains[low:high] + share * (drawn - t) * ratios[low:high])) / (s + position))
        if left:
            moved = q * (judged_others - t) / left
            chance[low:high] = q * (f - drawn + t) / left
            end = min(high + 1, b)
            chance[low + 1:end] += moved[:end - low - 1]
    return terms


def infap_group(s: int, before: tuple[int, int, int], r: int, m: int, u: int, z: int, *,
                numpy_from: int) -> float:
    """E[the term of one relevant document] of a group of ``r`` relevant, ``m`` non-relevant, ``u``
    pooled (negative grade) and ``z`` unjudged documents after ``s`` others, ``before`` = the
    (relevant, non-relevant, pooled) ones among those; see :func:`~evalbridge.metrics.tie_aware.inferred_ap`."""
    b, f = r + m, u + z
    n = b + f
    steps = n * min(b, f + 1) + 3 * b * min(r, m + 1)  # a (t, h) pair costs about three steps of the chain
    if steps > MAX_GROUP_STEPS:
        raise _too_large("infAP", steps, f"{n} documents ({r} relevant, {m} non-relevant, {f} pooled or unjudged)",
                         "break the ties with ties='docid_desc', 'docid_asc' or 'input', or use AP or bpref.")
    above_r, above_n, above_u = before
    above = above_r + above_n + above_u
    plain, ratio = [], []  # sum_h P(h | t) (1 + (A + t) rho_h) and sum_h P(h | t) rho_h, t = 0 .. b - 1
    for t in range(b):
        rhos = [(probability, (above_r + h + INFAP_EPSILON) / (above_r + above_n + t + 2 * INFAP_EPSILON))
                for h, probability in hypergeometric(b - 1, r - 1, t)]
        plain.append(math.fsum(probability * (1 + (above + t) * rho) for probability, rho in rhos))
        ratio.append(math.fsum(probability * rho for probability, rho in rhos))
    share = u / f if f else 0.0  # the pooled share of the fillers above it, in expectation
    chain = _chain_numpy if n * min(b, f + 1) > numpy_from else _chain_python
    terms = chain(plain, ratio, share, s, b, f)
    return math.fsum(terms) / n
