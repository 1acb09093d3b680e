"""The reference implementation: one readable, pure function per metric over one query.

Each function takes

* ``retrieved``: the grade of each retrieved document, in rank order (0 for
  unjudged documents), as produced by :func:`evalbridge.common.ranking.rank`;
* ``judged``: the grades of every judged document of the query (the qrels row);

and the metric's options as keywords. ``k=None`` means the whole ranking.
``rel`` is the relevance level: a document is relevant when ``grade >= rel``.

A grade of 0 cannot tell an unjudged document from one judged non-relevant. The families
that need to know (``Judged``, ``Bpref``, ``infAP``, ``RBP_resid``, and nDCG/DCG/ERR when a gain
map may give grade 0 a gain) declare it in the catalogue (:attr:`MetricInfo.inputs
<evalbridge.metrics.catalogue.MetricInfo>`, ``inputs_with``) and receive one more list, parallel
to ``retrieved``:

* ``in_qrels``: True when the document has a judgement for the query, whatever its grade
  (trec_eval's unjudged-in-pool documents have negative grades: judged here, and the metrics
  that follow trec_eval skip them as unjudged);
* ``in_pool`` (``Hole``): True when the document is judged for some query of the qrels;
* ``stratum`` (``xinfAP``, ``infNDCG``): the stratum of the pool the document belongs to in a stratified
  sample (:attr:`Qrels.strata <evalbridge.model.data.Qrels.strata>`), ``None`` outside the pool; with it
  ``judged_strata``, the stratum of each of ``judged`` (parallel to ``judged``, not to ``retrieved``).
  A pooled document that was not sampled has a negative grade, as in NIST's ``sample_eval.pl``.

``None`` for ``in_qrels`` means every retrieved document is judged. The other kernels are
unchanged and never see these lists. These functions are the documented definition of every
metric; faster engines and other backends are tested against them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from ..errors import InputError
from .catalogue import functions_of

__all__ = ["precision", "recall", "reciprocal_rank", "average_precision", "ndcg", "dcg", "gain_of", "discount_of",
           "discounted", "exp_shift", "dcg_overflow", "r_precision", "success", "judged_share", "hole", "bpref", "inferred_ap",
           "expected_reciprocal_rank", "err_probability", "rank_biased_precision", "rbp_weight", "rbp_residual",
           "f1", "capped_recall", "hits", "num_ret", "num_rel", "set_precision", "set_recall", "FUNCTIONS", "nothing_retrieved",
           "INFAP_EPSILON", "stratified_ap", "stratified_ndcg", "SAMPLE_EVAL_DEPTH"]

Grades = Sequence[float]
Flags = Sequence[bool]

#: trec_eval's ``INFAP_EPSILON`` (``trec_eval.h``).
INFAP_EPSILON = 0.00001

#: ``sample_eval.pl``'s ``$maxResultSize``: the ideal DCG of infNDCG counts at most this many ranks.
SAMPLE_EVAL_DEPTH = 1000


def precision(retrieved: Grades, judged: Grades, *, k: int, rel: float = 1) -> float:
    """P@k = |{i <= k : grade_i >= rel}| / k (the denominator is k even when fewer were retrieved).

    >>> precision([1, 0, 1, 0, 0], [1, 1, 1, 1], k=5)
    0.4
    """
    return sum(g >= rel for g in retrieved[:k]) / k


def recall(retrieved: Grades, judged: Grades, *, k: int | None, rel: float = 1) -> float:
    """R@k = |{i <= k : grade_i >= rel}| / R, with R = |{judged grade >= rel}|; 0 when R = 0.

    >>> recall([1, 0, 1, 0, 0], [1, 1, 1, 1], k=5)
    0.5
    """
    n_relevant = sum(g >= rel for g in judged)
    return sum(g >= rel for g in retrieved[:k]) / n_relevant if n_relevant else 0.0


def reciprocal_rank(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float = 1) -> float:
    """RR@k = 1 / min{i <= k : grade_i >= rel}; 0 when no relevant document is in the top k.

    >>> reciprocal_rank([0, 0, 1], [1])
    0.3333333333333333
    """
    for i, g in enumerate(retrieved[:k], start=1):
        if g >= rel:
            return 1.0 / i
    return 0.0


def average_precision(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float = 1,
                      norm: str = "R", weights: str = "binary", max_grade: float | None = None) -> float:
    """AP@k = (1/N) * sum_{i <= k, grade_i >= rel} P@i * w_i.

    * ``w_i = 1`` (``weights=binary``) or ``grade_i / max_grade`` (``weights=graded``,
      the MedCorpus convention: grade 2 -> 1.0, grade 1 -> 0.5 on a 0/1/2 scale);
    * ``N = R``, every judged relevant doc (``norm=R``, trec_eval ``map_cut``), or the
      number of relevant docs in the top k (``norm=retrieved``, the label-list guide, torchmetrics);
    * 0 when N = 0.

    >>> average_precision([1, 0, 1, 0, 1, 0], [1, 1, 1])  # the LLM-judge guide: (1 + 2/3 + 3/5) / 3
    0.7555555555555555
    """
    if weights == "graded" and not max_grade:
        raise ValueError("weights=graded needs max_grade > 0")
    total, hits = 0.0, 0
    for i, g in enumerate(retrieved[:k], start=1):
        if g >= rel:
            hits += 1
            total += hits / i * (g / max_grade if weights == "graded" and max_grade else 1.0)
    denominator = hits if norm == "retrieved" else sum(g >= rel for g in judged)
    return total / denominator if denominator else 0.0


def exp_shift(grades: Grades) -> int:
    """The power of two every exponential gain of a query is divided by: the integer part of its
    top positive grade (0 when none). ``2^grade - 1`` overflows float64 from grade 1024 on; divided
    by ``2^shift`` every gain is below 2, and nDCG, a ratio, does not change.

    >>> exp_shift([0, 3, 2.5]), exp_shift([-1, 0]), exp_shift([2000])
    (3, 0, 2000)
    """
    return math.floor(max((g for g in grades if g > 0), default=0))


def _exp_gain(grade: float, shift: int) -> float:
    """(2^grade - 1) / 2^shift for grade > 0, exactly as float64 rounds it: the whole powers of two
    are applied by ``ldexp`` (exact), so nothing overflows and nothing but the result is rounded."""
    whole = math.floor(grade)
    return math.ldexp(2.0 ** (grade - whole), whole - shift) - math.ldexp(1.0, -shift)


def gain_of(grade: float, gain: str, rel: float | None, *, gains: Mapping[float, float] | None = None,
            shift: int = 0) -> float:
    """The gain of one judged grade, divided by ``2^shift`` (see :func:`exp_shift`).

    0 below ``rel``; ``gains[grade]`` when a gain map lists the grade; else 0 at or below 0, and
    ``grade`` (linear) or ``2^grade - 1`` (exp).

    >>> gain_of(3, "exp", None), gain_of(3, "exp", None, shift=3), gain_of(2, "linear", None, gains={2: 9.5})
    (7.0, 0.875, 9.5)
    """
    if rel is not None and grade < rel:
        return 0.0
    if gains is not None and grade in gains:
        return math.ldexp(float(gains[grade]), -shift)
    if grade <= 0:
        return 0.0
    return _exp_gain(grade, shift) if gain == "exp" else math.ldexp(float(grade), -shift)


def discount_of(rank: int, discount: str) -> float:
    """The discount of a 1-based rank: ``1/log2(rank + 1)`` (log2) or Jarvelin-Kekalainen's (jk)."""
    if discount == "jk":
        return 1.0 if rank <= 2 else 1.0 / math.log2(rank)
    return 1.0 / math.log2(rank + 1)


def _flags(retrieved: Grades, in_qrels: Flags | None) -> Flags:
    return in_qrels if in_qrels is not None else [True] * len(retrieved)


def _gains(retrieved: Grades, in_qrels: Flags | None, gain: str, rel: float | None,
           gains: Mapping[float, float] | None, shift: int, k: int | None = None) -> list[float]:
    """The gain of each of the top k retrieved documents (0 for unjudged ones), divided by ``2^shift``."""
    if in_qrels is None:
        return [gain_of(g, gain, rel, gains=gains, shift=shift) for g in retrieved[:k]]
    return [gain_of(g, gain, rel, gains=gains, shift=shift) if judged else 0.0
            for g, judged in zip(retrieved[:k], in_qrels)]


def discounted(gains: Sequence[float], k: int | None, discount: str) -> float:
    """sum_{i <= k} gain_i * discount(i): the DCG of gains already in rank order (:func:`discount_of`)."""
    return sum(g * discount_of(i, discount) for i, g in enumerate(gains[:k], start=1))


def dcg(retrieved: Grades, judged: Grades, *, k: int | None = None, gain: str = "linear",
        discount: str = "log2", rel: float | None = None, gains: Mapping[float, float] | None = None,
        in_qrels: Flags | None = None) -> float:
    """DCG@k = sum_{i <= k} gain(grade_i) * discount(i).

    ``gain``: ``linear`` g = grade, ``exp`` g = 2^grade - 1; grades <= 0 (and below
    ``rel`` when given, ranx's ``-l``) gain nothing. ``gains``: a map ``{grade: gain}`` that
    replaces the gain of the grades it lists (floats and negative gains allowed, trec_eval's
    ``ndcg.1=3``); unjudged documents gain nothing. ``discount``: ``log2`` 1/log2(i+1)
    (trec_eval, ranx, ir-measures); ``jk`` the original Jarvelin-Kekalainen form,
    rel_1 + sum_{i >= 2} rel_i / log2(i) (the graded-relevance guide).

    Exponential gains are summed divided by ``2^shift`` (:func:`exp_shift`) and multiplied back at
    the end: the value is the float64 one wherever that is finite, and a sum beyond float64 raises
    :class:`~evalbridge.errors.InputError` instead of returning inf or NaN.

    >>> dcg([3, 2], [3, 2])
    4.2618595071429155
    >>> dcg([1023, 1023], [1023, 1023], gain="exp") == 2.0 ** 1023 * (1 + 1 / math.log2(3)) - (1 + 1 / math.log2(3))
    True
    """
    shift = exp_shift(judged) if gain == "exp" else 0
    total = discounted(_gains(retrieved, in_qrels, gain, rel, gains, shift, k), k, discount)
    try:
        return math.ldexp(total, shift)
    except OverflowError:
        raise dcg_overflow(total, shift) from None


def dcg_overflow(scaled: float, shift: int) -> InputError:
    """The error for a DCG of ``scaled * 2^shift``, beyond float64."""
    return InputError(f"DCG with exp gain is about 2^{shift + math.log2(abs(scaled)):.0f}, beyond the largest "
                      f"float64 (about 2^1024), for grades up to {shift}.",
                      fix="use nDCG (a ratio, computed without overflow), linear gain, or a gain map.")


def ndcg(retrieved: Grades, judged: Grades, *, k: int | None = None, gain: str = "linear",
         ideal: str = "qrels", discount: str = "log2", rel: float | None = None,
         gains: Mapping[float, float] | None = None, in_qrels: Flags | None = None) -> float:
    """nDCG@k = DCG@k / IDCG@k; 0 when IDCG@k = 0.

    IDCG is the DCG of the best ordering of the positive gains of the judged documents
    (``ideal=qrels``, trec_eval) or of the retrieved documents (``ideal=run``, seeds 000 and
    002: the whole retrieved list is sorted, so it depends on the run's depth). With a gain
    map that gives negative gains (trec_eval ``ndcg.0=-1``) the DCG, and nDCG, can be negative.
    Both sums are divided by the same ``2^shift`` (see :func:`dcg`), so exp gains never overflow:
    any grade gives a value in [0, 1].

    >>> round(ndcg([6.0, 0, 8.0, 0, 7.0, 0, 0, 0, 0, 5.0], [8.0, 7.0, 6.0, 5.0], k=10, gain="exp"), 3)
    0.654
    >>> ndcg([2000, 0], [2000, 1999], gain="exp") == 1 / (1 + 0.5 / math.log2(3))
    True
    """
    shift = exp_shift(judged) if gain == "exp" else 0
    actual = _gains(retrieved, in_qrels, gain, rel, gains, shift, k if ideal == "qrels" else None)
    if ideal == "run":
        pool = actual
    elif gains is None:  # the gain grows with the grade: only the k best grades can enter the ideal
        pool = [gain_of(g, gain, rel, shift=shift) for g in sorted(judged, reverse=True)[:k]]
    else:
        pool = [gain_of(g, gain, rel, gains=gains, shift=shift) for g in judged]
    best = sorted((g for g in pool if g > 0), reverse=True)
    idcg = discounted(best, k, discount)
    if idcg == 0:
        return 0.0
    return discounted(actual, k, discount) / idcg


def r_precision(retrieved: Grades, judged: Grades, *, rel: float = 1) -> float:
    """Rprec = P@R with R = |{judged grade >= rel}|; 0 when R = 0.

    >>> r_precision([1, 0, 0], [1, 1, 1])
    0.3333333333333333
    """
    n_relevant = sum(g >= rel for g in judged)
    return sum(g >= rel for g in retrieved[:n_relevant]) / n_relevant if n_relevant else 0.0


def success(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float = 1) -> float:
    """Success@k (hit rate, coverage) = 1 if some grade_i >= rel for i <= k, else 0.

    >>> success([0, 0, 1], [1], k=2)
    0.0
    """
    return 1.0 if any(g >= rel for g in retrieved[:k]) else 0.0


def _count(grades: Grades, rel: float) -> int:
    return sum(g >= rel for g in grades)


def judged_share(retrieved: Grades, judged: Grades, *, k: int | None = None, in_qrels: Flags) -> float:
    """Judged@k = |{i <= k : doc_i has a judgement}| / min(k, |retrieved|); 0 when nothing is retrieved.

    ir-measures' ``Judged``: any grade counts as a judgement, a negative one too, and a ranking
    shorter than k is divided by its length (so ``Hole@k`` is not ``1 - Judged@k``).

    >>> judged_share([1, 0, 0], [1, 0], k=10, in_qrels=[True, True, False])
    0.6666666666666666
    """
    top = in_qrels[:k]
    return sum(top) / len(top) if len(top) else 0.0


def hole(retrieved: Grades, judged: Grades, *, k: int, in_pool: Flags) -> float:
    """Hole@k = |{i <= k : doc_i is judged for no query of the qrels}| / k (BEIR).

    BEIR's pool is its "annotated corpus", every document judged for any query; the
    denominator is k even when fewer documents were retrieved.

    >>> hole([0, 0, 1], [1], k=5, in_pool=[False, True, True])
    0.2
    """
    return sum(not pooled for pooled in in_pool[:k]) / k


def bpref(retrieved: Grades, judged: Grades, *, rel: float = 1, in_qrels: Flags | None = None) -> float:
    """bpref = (1/R) * sum over judged relevant retrieved r of (1 - min(n_r, R) / min(N, R)).

    trec_eval's ``bpref`` (``m_bpref.c``): ``n_r`` counts the judged non-relevant documents
    (``0 <= grade < rel``) ranked above r, and the term is 1 when ``n_r = 0``; ``R`` counts the
    judged relevant documents, ``N`` the judged non-relevant ones. Unjudged documents, and
    negative grades (trec_eval's "in the pool but unjudged"), are skipped. 0 when R = 0.

    Buckley and Voorhees' example: R = 2, N = 3, ranking n r n r: (1 - 1/2) + (1 - 2/2), over 2:

    >>> bpref([0, 1, 0, 1], [1, 1, 0, 0, 0])
    0.25
    """
    n_relevant = sum(g >= 0 and g >= rel for g in judged)
    n_nonrelevant = sum(0 <= g < rel for g in judged)
    if not n_relevant:
        return 0.0
    total, above = 0.0, 0
    for g, is_judged in zip(retrieved, _flags(retrieved, in_qrels)):
        if not is_judged or g < 0:
            continue
        if g < rel:
            above += 1
        else:
            total += 1.0 - min(above, n_relevant) / min(n_nonrelevant, n_relevant) if above else 1.0
    return total / n_relevant


def inferred_ap(retrieved: Grades, judged: Grades, *, rel: float = 1, in_qrels: Flags | None = None) -> float:
    """infAP, exactly as trec_eval computes it (``m_infap.c``, Yilmaz and Aslam's estimate).

    For each judged relevant document at 0-based rank j: 1 if j = 0, else
    ``1/(j+1) + (j/(j+1)) * ((r + n + u) / j) * ((r + e) / (r + n + 2e))``, with r, n and u the
    judged relevant, judged non-relevant and negative-grade (pooled but unjudged) documents above
    it and e = 1e-5 (``INFAP_EPSILON``); the sum is divided by R. Documents without a judgement
    are skipped but still count in j. 0 when R = 0.

    Relevant at ranks 1 and 3, a non-relevant judged doc at rank 2: (1 + 1/3 + (2/3) * (2/2) *
    ((1 + e) / (2 + 2e))) / 2 = (1 + 2/3) / 2 up to e, AP's value, as on any fully judged ranking:

    >>> round(inferred_ap([1, 0, 1], [1, 1, 0]), 6)
    0.833333
    """
    n_relevant = sum(g >= 0 and g >= rel for g in judged)
    if not n_relevant:
        return 0.0
    total, relevant, nonrelevant, pooled = 0.0, 0, 0, 0
    for j, (g, is_judged) in enumerate(zip(retrieved, _flags(retrieved, in_qrels))):
        if not is_judged:
            continue
        if g < 0:
            pooled += 1
        elif g < rel:
            nonrelevant += 1
        else:
            relevant += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += (1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((relevant - 1 + nonrelevant + pooled) / fj)
                          * ((relevant - 1 + INFAP_EPSILON) / (relevant - 1 + nonrelevant + 2 * INFAP_EPSILON)))
    return total / n_relevant


class _Strata:
    """One query's stratified sample, per stratum: its pooled docs, the sampled ones (grade >= 0), the sampled
    relevant ones and the sampled docs of each positive grade (``sample_eval.pl``'s per-category counts)."""

    def __init__(self, judged: Grades, judged_strata: Sequence[str | None], relevant: Callable[[float], bool]) -> None:
        if len(judged_strata) != len(judged):
            raise InputError("the qrels hold no stratum for some judged document, and xinfAP / infNDCG estimate from "
                             "a stratified sample.",
                             fix="read the stratified sample with format='sample_eval' (`topic 0 doc stratum rel`).")
        self.pooled: dict[str, int] = {}
        self.sampled: dict[str, int] = {}
        self.relevant: dict[str, int] = {}
        self.graded: dict[float, float] = {}
        by_grade: dict[str, dict[float, int]] = {}
        for grade, stratum in zip(judged, judged_strata):
            if stratum is None:
                raise InputError("a judged document has no stratum, and xinfAP / infNDCG estimate from a stratified "
                                 "sample.", fix="read the stratified sample with format='sample_eval'.")
            self.pooled[stratum] = self.pooled.get(stratum, 0) + 1
            if grade >= 0:
                self.sampled[stratum] = self.sampled.get(stratum, 0) + 1
            if relevant(grade):
                self.relevant[stratum] = self.relevant.get(stratum, 0) + 1
                by_grade.setdefault(stratum, {})
                by_grade[stratum][grade] = by_grade[stratum].get(grade, 0) + 1
        for stratum, grades in by_grade.items():
            for grade, count in grades.items():
                self.graded[grade] = self.graded.get(grade, 0.0) + count * self.pooled[stratum] / self.sampled[stratum]

    def estimated_relevant(self) -> float:
        """R estimated: each stratum's sampled relevant docs scaled by its inverse sampling rate."""
        return sum(self.relevant.get(s, 0) * self.pooled[s] / self.sampled[s] for s in self.pooled if self.sampled.get(s))


def stratified_ap(retrieved: Grades, judged: Grades, *, rel: float = 1, stratum: Sequence[str | None],
                  judged_strata: Sequence[str | None]) -> float:
    """xinfAP (Yilmaz, Kanoulas and Aslam, SIGIR 2008), exactly as NIST's ``sample_eval.pl`` computes it.

    For the relevant sampled document at 1-based rank k the precision above it is estimated from the pooled
    documents above it: ``1/k + (1/k) * sum over strata s of d_s * (r_s + e) / (n_s + 3e)``, with d_s the pooled,
    n_s the sampled and r_s the sampled relevant docs of s above rank k, and e = 1e-5. xinfAP is
    ``sum over strata s of (D_s / N_s) * (the sum of those precisions in s) / R``, with D_s and N_s the pooled
    and sampled docs of the stratum and ``R = sum over s of R_s * D_s / N_s`` the estimated relevant docs. A
    fully judged stratum has D_s = N_s: judged wholly, xinfAP is AP up to e. 0 when R = 0.

    Two strata, the second sampled at one doc in two (``d4`` not judged, grade -1):

    >>> round(stratified_ap([1, 0, 1], [1, 0, 1, -1], stratum=["a", "a", "b"], judged_strata=["a", "a", "b", "b"]), 4)
    0.7778
    """
    pool = _Strata(judged, judged_strata, lambda g: g >= 0 and g >= rel)
    n_relevant = pool.estimated_relevant()
    if not n_relevant:
        return 0.0
    above: dict[str, list[int]] = {s: [0, 0, 0] for s in pool.pooled}  # pooled, sampled, relevant above
    precisions: dict[str, float] = {}
    for k, (g, s) in enumerate(zip(retrieved, stratum), start=1):
        if s is not None and g >= 0 and g >= rel:
            estimate = sum(d * (r + INFAP_EPSILON) / (n + 3 * INFAP_EPSILON) for d, n, r in above.values() if d)
            precisions[s] = precisions.get(s, 0.0) + 1 / k + estimate / k
            above[s][2] += 1
        if s is not None:
            above[s][0] += 1
            above[s][1] += g >= 0
    return sum(pool.pooled[s] / pool.sampled[s] * total for s, total in precisions.items()) / n_relevant


def stratified_ndcg(retrieved: Grades, judged: Grades, *, rel: float | None = None, stratum: Sequence[str | None],
                    judged_strata: Sequence[str | None]) -> float:
    """infNDCG (Yilmaz, Kanoulas and Aslam, SIGIR 2008), exactly as NIST's ``sample_eval.pl`` computes it.

    The DCG is estimated stratum by stratum: ``sum over s of d_s * G_s / n_s``, with G_s the discounted gain
    (grade / log2(rank + 1)) of the sampled docs of s retrieved, d_s and n_s the pooled and sampled docs of s
    retrieved. The ideal DCG ranks the estimated number of docs of each positive grade (each stratum's sampled
    docs of that grade times D_s / N_s over the strata, rounded half up) best grade first, at most
    :data:`SAMPLE_EVAL_DEPTH` ranks. Gains are linear, grades <= 0 (and below ``rel`` when given) gain nothing.
    Judged wholly, infNDCG is nDCG. 0 when the ideal DCG is 0.

    >>> round(stratified_ndcg([2, 0, 1], [2, 0, 1, -1], stratum=["a", "a", "b"], judged_strata=["a", "a", "b", "b"]), 4)
    0.7985
    """
    def gains(g: float) -> bool:
        return g > 0 and (rel is None or g >= rel)

    pool = _Strata(judged, judged_strata, gains)
    ideal, start = 0.0, 0
    for grade in sorted(pool.graded, reverse=True):
        count = math.floor(pool.graded[grade] + 0.5)
        for r in range(start + 1, min(start + count, SAMPLE_EVAL_DEPTH) + 1):
            ideal += grade / math.log2(r + 1)
        start += count
    if ideal == 0:
        return 0.0
    gain: dict[str, float] = {}
    retrieved_pool: dict[str, list[int]] = {}  # pooled, sampled
    for k, (g, s) in enumerate(zip(retrieved, stratum), start=1):
        if s is None:
            continue
        if gains(g):
            gain[s] = gain.get(s, 0.0) + g / math.log2(k + 1)
        counts = retrieved_pool.setdefault(s, [0, 0])
        counts[0] += 1
        counts[1] += g >= 0
    dcg_estimate = sum(retrieved_pool[s][0] * total / retrieved_pool[s][1] for s, total in gain.items())
    return dcg_estimate / ideal


def err_probability(grade: float, *, max_grade: float, rel: float | None = None,
                    gains: Mapping[float, float] | None = None) -> float:
    """ERR's stopping probability of a judged grade: ``gains[grade]`` when the map lists it, else
    ``(2^grade - 1) / 2^max_grade`` computed as ``2^(grade - max_grade) - 2^-max_grade`` (no
    overflow); 0 below ``rel`` and at or below 0.

    >>> err_probability(4, max_grade=4), err_probability(1, max_grade=4), err_probability(1, max_grade=4, gains={1: 0.5})
    (0.9375, 0.0625, 0.5)
    """
    if rel is not None and grade < rel:
        return 0.0
    if gains is not None and grade in gains:
        return float(gains[grade])
    if grade <= 0:
        return 0.0
    probability: float = 2.0 ** (grade - max_grade) - 2.0 ** -max_grade  # float ** float is typed Any
    return probability


def expected_reciprocal_rank(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float | None = None,
                             max_grade: float | None = None, gains: Mapping[float, float] | None = None,
                             in_qrels: Flags | None = None) -> float:
    """ERR@k = sum_{i <= k} (1/i) * R_i * prod_{j < i} (1 - R_j) (Chapelle et al., 2009).

    ``R`` is :func:`err_probability`; ``max_grade`` defaults (in ``evaluate``) to the top grade
    of the qrels; gdeval, ir-measures' ERR, uses 4. Unjudged documents have R = 0.

    Grades 2, 0, 1 with max_grade 2: R = 3/4, 0, 1/4, so 3/4 + (1/3) * (1/4) * (1/4):

    >>> expected_reciprocal_rank([2, 0, 1], [2, 1], max_grade=2)
    0.7708333333333334
    """
    if not max_grade:
        raise ValueError("ERR needs max_grade > 0")
    total, decay = 0.0, 1.0
    for i, (g, is_judged) in enumerate(zip(retrieved[:k], _flags(retrieved, in_qrels)), start=1):
        r = err_probability(g, max_grade=max_grade, rel=rel, gains=gains) if is_judged else 0.0
        if r:
            total += r * decay / i
            decay *= 1.0 - r
    return total


def rbp_weight(grade: float, *, rel: float, weights: str, top: float) -> float:
    """RBP's weight of a grade: 1 (binary), ``grade / max(1, top)`` (graded, ``top`` = the query's
    top grade), or ``grade`` (raw); 0 below ``rel`` (and at or below 0 for graded and raw).

    >>> [rbp_weight(3, rel=1, weights=w, top=3) for w in ("binary", "graded", "raw")]
    [1.0, 1.0, 3.0]
    """
    if grade < rel:
        return 0.0
    if weights == "binary":
        return 1.0
    if grade <= 0:
        return 0.0
    return grade / max(1, top) if weights == "graded" else float(grade)


def rank_biased_precision(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float = 1,
                          p: float = 0.8, weights: str = "binary") -> float:
    """RBP@k = (1 - p) * sum_{i <= k} w_i * p^(i-1) (Moffat and Zobel, 2008).

    ``w`` is :func:`rbp_weight`: ``binary`` (ir-measures ``RBP(rel=1)``), ``graded``: grade divided
    by the top grade of the query when that is above 1 (trec_eval 10's ``rbp``, which normalises
    its gains into [0, 1]), ``raw``: the grade itself (ranx ``rbp``, can exceed 1).

    The research notes' example, qrels a=3, b=1, run a, b, p = 0.8:

    >>> [round(rank_biased_precision([3, 1], [3, 1], p=0.8, weights=w), 4) for w in ("binary", "graded", "raw")]
    [0.36, 0.2533, 0.76]
    """
    top = max(judged, default=0)
    total = 0.0
    for i, g in enumerate(retrieved[:k], start=1):
        w = rbp_weight(g, rel=rel, weights=weights, top=top)
        if w:
            total += w * p ** (i - 1)
    return (1 - p) * total


def rbp_residual(retrieved: Grades, judged: Grades, *, k: int | None = None, p: float = 0.8,
                 in_qrels: Flags | None = None) -> float:
    """RBP residual, as trec_eval 10's ``rbp_resid``: how much RBP could still grow if every unjudged
    document (no judgement, or a negative grade) had weight 1, plus the tail beyond the ranking:

    ``p^n + (1 - p) * sum over unjudged i <= k of p^(i-1)``, n = min(k, |retrieved|), when some
    document of the top k is unjudged; 0 otherwise (trec_eval leaves the tail out then).

    >>> rbp_residual([1, 0, 0], [1], p=0.5, in_qrels=[True, False, True])
    0.375
    """
    ranked = list(zip(retrieved, _flags(retrieved, in_qrels)))[:k]
    unjudged = [i for i, (g, is_judged) in enumerate(ranked) if not is_judged or g < 0]
    if not unjudged:
        return 0.0
    return p ** len(ranked) + (1 - p) * sum(p ** i for i in unjudged)


def f1(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float = 1) -> float:
    """F1@k = 2 * P@k * R@k / (P@k + R@k) = 2 * |relevant in top k| / (k + R); without k, k is the number
    retrieved (trec_eval ``set_F``, ranx ``f1``); 0 when nothing relevant is in the top k.

    >>> f1([1, 0, 1, 0, 0], [1, 1, 1, 1], k=5)  # P = 0.4, R = 0.5
    0.4444444444444444
    """
    found = _count(retrieved[:k], rel)
    if not found:
        return 0.0
    return 2 * found / ((k if k is not None else len(retrieved)) + _count(judged, rel))


def capped_recall(retrieved: Grades, judged: Grades, *, k: int, rel: float = 1) -> float:
    """R_cap@k = |relevant in top k| / min(k, R) (BEIR); 0 when R = 0.

    >>> capped_recall([1, 0, 1], [1, 1, 1, 1], k=2)
    0.5
    """
    n_relevant = _count(judged, rel)
    return _count(retrieved[:k], rel) / min(k, n_relevant) if n_relevant else 0.0


def hits(retrieved: Grades, judged: Grades, *, k: int | None = None, rel: float = 1) -> float:
    """Hits@k = |relevant in top k| (a count; without k, trec_eval's ``num_rel_ret``).

    >>> hits([1, 0, 1], [1, 1, 1], k=2)
    1.0
    """
    return float(_count(retrieved[:k], rel))


def num_ret(retrieved: Grades, judged: Grades) -> float:
    """NumRet = |retrieved| (trec_eval's ``num_ret``).

    >>> num_ret([1, 0, 0], [1])
    3.0
    """
    return float(len(retrieved))


def num_rel(retrieved: Grades, judged: Grades, *, rel: float = 1) -> float:
    """NumRel = R = |judged grade >= rel| (trec_eval's ``num_rel``).

    >>> num_rel([], [2, 1, 0], rel=2)
    1.0
    """
    return float(_count(judged, rel))


def set_precision(retrieved: Grades, judged: Grades, *, rel: float = 1) -> float:
    """SetP = |relevant retrieved| / |retrieved|; 0 when nothing is retrieved (trec_eval ``set_P``).

    >>> set_precision([1, 0, 0, 1], [1, 1])
    0.5
    """
    return _count(retrieved, rel) / len(retrieved) if len(retrieved) else 0.0


def set_recall(retrieved: Grades, judged: Grades, *, rel: float = 1) -> float:
    """SetR = |relevant retrieved| / R; 0 when R = 0 (trec_eval ``set_recall``).

    >>> set_recall([1, 0, 0], [1, 1])
    0.5
    """
    n_relevant = _count(judged, rel)
    return _count(retrieved, rel) / n_relevant if n_relevant else 0.0


#: Metric family -> function (the function its catalogue entry names). The function receives every
#: option of the metric (``Metric.settings``), ``k`` when the metric takes a cutoff, and each input
#: its family declares for it (:attr:`Metric.inputs <evalbridge.metrics.spec.Metric.inputs>`).
FUNCTIONS: dict[str, Callable[..., float]] = functions_of(globals())


def nothing_retrieved(name: str, arguments: Mapping[str, object], inputs: Sequence[str], judged: Grades) -> float:
    """Metric ``name`` of a query that retrieved nothing (a qrels query missing from the run, scored as
    trec_eval ``-c`` does): its function over an empty ranking, 0 for every family but ``NumRel`` (R,
    a count of the judgements).

    >>> nothing_retrieved("NumRel", {"rel": 1}, (), [2, 1, 0]), nothing_retrieved("AP", {"rel": 1}, (), [1])
    (2.0, 0.0)
    """
    return float(FUNCTIONS[name]([], judged, **arguments, **{input_name: [] for input_name in inputs}))
