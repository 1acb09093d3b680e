"""The reference implementation: one readable, pure function per metric over one query.

Each function takes

* ``retrieved``: the grade of each retrieved document, in rank order (0 for
  unjudged documents), as produced by :func:`evalbridge.ranking.rank`;
* ``judged``: the grades of every judged document of the query (the qrels row);

and the metric's options as keywords. ``k=None`` means the whole ranking.
``rel`` is the relevance level: a document is relevant when ``grade >= rel``.
These functions are the documented definition of every metric; faster engines
and other backends are tested against them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["precision", "recall", "reciprocal_rank", "average_precision", "ndcg", "dcg", "gain_of", "discount_of",
           "r_precision", "success", "KERNELS"]

Grades = Sequence[float]


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
            total += hits / i * (g / max_grade if weights == "graded" else 1.0)
    denominator = hits if norm == "retrieved" else sum(g >= rel for g in judged)
    return total / denominator if denominator else 0.0


def gain_of(grade: float, gain: str, rel: float | None) -> float:
    """The gain of one grade: ``grade`` (linear) or ``2^grade - 1`` (exp); 0 at or below 0 and below ``rel``."""
    if grade <= 0 or (rel is not None and grade < rel):
        return 0.0
    return 2.0 ** grade - 1.0 if gain == "exp" else float(grade)


def discount_of(rank: int, discount: str) -> float:
    """The discount of a 1-based rank: ``1/log2(rank + 1)`` (log2) or Jarvelin-Kekalainen's (jk)."""
    if discount == "jk":
        return 1.0 if rank <= 2 else 1.0 / math.log2(rank)
    return 1.0 / math.log2(rank + 1)


def dcg(retrieved: Grades, judged: Grades, *, k: int | None = None, gain: str = "linear",
        discount: str = "log2", rel: float | None = None) -> float:
    """DCG@k = sum_{i <= k} gain(grade_i) * discount(i).

    ``gain``: ``linear`` g = grade, ``exp`` g = 2^grade - 1; grades <= 0 (and below
    ``rel`` when given, ranx's ``-l``) gain nothing. ``discount``: ``log2`` 1/log2(i+1)
    (trec_eval, ranx, ir-measures); ``jk`` the original Jarvelin-Kekalainen form,
    rel_1 + sum_{i >= 2} rel_i / log2(i) (the graded-relevance guide).

    >>> dcg([3, 2], [3, 2])
    4.2618595071429155
    """
    return sum(gain_of(g, gain, rel) * discount_of(i, discount) for i, g in enumerate(retrieved[:k], start=1))


def ndcg(retrieved: Grades, judged: Grades, *, k: int | None = None, gain: str = "linear",
         ideal: str = "qrels", discount: str = "log2", rel: float | None = None) -> float:
    """nDCG@k = DCG@k / IDCG@k; 0 when IDCG@k = 0.

    IDCG is the DCG of the best ordering of the judged grades (``ideal=qrels``,
    trec_eval) or of the retrieved documents' grades (``ideal=run``, seeds 000 and 002:
    the whole retrieved list is sorted, so it depends on the run's depth).

    >>> round(ndcg([6.0, 0, 8.0, 0, 7.0, 0, 0, 0, 0, 5.0], [8.0, 7.0, 6.0, 5.0], k=10, gain="exp"), 3)
    0.654
    """
    pool = judged if ideal == "qrels" else retrieved
    best = sorted(pool, reverse=True)
    idcg = dcg(best, best, k=k, gain=gain, discount=discount, rel=rel)
    if idcg == 0:
        return 0.0
    return dcg(retrieved, judged, k=k, gain=gain, discount=discount, rel=rel) / idcg


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


#: Metric name -> function. The function receives every option of the metric
#: (``Metric.settings``) plus ``k`` when the metric takes a cutoff.
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
