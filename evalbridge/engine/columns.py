"""The columnar form of one evaluation's input.

Only what the metrics need is kept: every run score (the ranking depends on all of them),
the qrels grades of each query (recall denominators, the ideal DCG), and the *hits*: the
retrieved documents whose grade is not 0. An unjudged document has grade 0, and a grade 0
counts for nothing in any metric unless ``rel <= 0``, which :mod:`.kernels` handles by
expanding the hits to every row; so the documents themselves are looked up only for hits
and, for tie breaking, for the members of tie groups that need it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from operator import methodcaller

import numpy as np

__all__ = ["Columns", "from_mappings", "EXACT_LIMIT"]

#: Numbers at or beyond this magnitude may be ints that float64 cannot hold exactly.
EXACT_LIMIT = 2.0 ** 53


@dataclass(frozen=True, eq=False)
class Columns:
    """Flat arrays for the queries that are in both the qrels and the run.

    Attributes:
        query_ids: the evaluated queries, in qrels order (the order of the results).
        offsets: int64, ``len(query_ids) + 1``: query ``i`` owns run rows ``offsets[i]:offsets[i + 1]``.
        scores: float64 score of every run row, in input order within each query.
        judged_offsets: int64: query ``i`` owns qrels grades ``judged_offsets[i]:judged_offsets[i + 1]``.
        judged: float64 grade of every qrels row of the evaluated queries.
        hit_query, hit_score, hit_grade: one entry per retrieved doc with a non-zero grade:
            its query index, its score in the run and its grade.
        doc_ids: global run row indices -> their doc ids (used to break ties).
        hit_doc_ids: hit indices -> their doc ids.
    """

    query_ids: Sequence[str]
    offsets: np.ndarray
    scores: np.ndarray
    judged_offsets: np.ndarray
    judged: np.ndarray
    hit_query: np.ndarray
    hit_score: np.ndarray
    hit_grade: np.ndarray
    doc_ids: Callable[[np.ndarray], list[str]]
    hit_doc_ids: Callable[[np.ndarray], list[str]]

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def exact(self) -> bool:
        """True when every score and grade is below 2**53 in magnitude, so float64 holds it exactly."""
        return all(len(a) == 0 or max(float(a.max()), -float(a.min())) < EXACT_LIMIT
                   for a in (self.scores, self.judged))


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def from_mappings(qrels: Mapping[str, Mapping[str, float]], run: Mapping[str, Mapping[str, float]]) -> Columns:
    """Columns of a qrels and a run given as mappings (e.g. :class:`~evalbridge.types.Qrels`, ``Run``).

    Cost: one C-level pass over the run's scores and a few C-level calls per query.

    Example:
        >>> c = from_mappings({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}, {"q1": {"a": 0.5, "x": 0.9}})
        >>> c.query_ids, c.scores.tolist(), c.hit_grade.tolist()
        (['q1'], [0.5, 0.9], [2.0])
    """
    qrels, run = getattr(qrels, "_data", qrels), getattr(run, "_data", run)  # the plain dicts inside
    query_ids = [q for q in qrels if q in run]
    ranked = list(map(run.__getitem__, query_ids))
    judged = list(map(qrels.__getitem__, query_ids))
    n = len(query_ids)
    offsets = _offsets(np.fromiter(map(len, ranked), dtype=np.int64, count=n))
    scores = np.fromiter(chain.from_iterable(map(methodcaller("values"), ranked)), dtype=np.float64,
                         count=int(offsets[-1]))
    judged_offsets = _offsets(np.fromiter(map(len, judged), dtype=np.int64, count=n))
    grades = np.fromiter(chain.from_iterable(map(methodcaller("values"), judged)), dtype=np.float64,
                         count=int(judged_offsets[-1]))

    # Hits: judged docs that were retrieved, found by C-level set intersection per query; their
    # grades and scores are read then, while the query's two rows are in the cache.
    hit_doc: list[str] = []
    hit_count: list[int] = []
    grades_found: list[float] = []
    scores_found: list[float] = []
    extend, count = hit_doc.extend, hit_count.append
    add_grades, add_scores = grades_found.extend, scores_found.extend
    for grades_of, scores_of in zip(judged, ranked):
        common = grades_of.keys() & scores_of.keys()
        extend(common)
        count(len(common))
        add_grades(map(grades_of.__getitem__, common))  # a set iterates in one order while unchanged
        add_scores(map(scores_of.__getitem__, common))
    hit_query = np.repeat(np.arange(n, dtype=np.int64), hit_count)
    hit_grade = np.fromiter(grades_found, dtype=np.float64, count=len(hit_doc))
    hit_score = np.fromiter(scores_found, dtype=np.float64, count=len(hit_doc))
    nonzero = np.flatnonzero(hit_grade != 0)
    if len(nonzero) < len(hit_doc):
        hit_doc = [hit_doc[i] for i in nonzero.tolist()]
        hit_query, hit_grade, hit_score = hit_query[nonzero], hit_grade[nonzero], hit_score[nonzero]

    def doc_ids(rows: np.ndarray) -> list[str]:
        """Doc ids of global run rows: one list of doc ids per query touched, then C-level lookups."""
        if len(rows) == 0:
            return []
        queries = np.searchsorted(offsets, rows, side="right") - 1
        order = None if np.all(queries[1:] >= queries[:-1]) else np.argsort(queries, kind="stable")
        if order is not None:
            queries, rows = queries[order], rows[order]
        cuts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1], True])
        local = (rows - offsets[queries]).tolist()
        found: list[str] = []
        for start, stop, query in zip(cuts[:-1].tolist(), cuts[1:].tolist(), queries[cuts[:-1]].tolist()):
            found.extend(map(list(ranked[query]).__getitem__, local[start:stop]))
        if order is None:
            return found
        out = np.empty(len(found), dtype=object)
        out[order] = found
        return out.tolist()

    return Columns(
        query_ids=query_ids, offsets=offsets, scores=scores, judged_offsets=judged_offsets, judged=grades,
        hit_query=hit_query, hit_score=hit_score, hit_grade=hit_grade, doc_ids=doc_ids,
        hit_doc_ids=lambda hits: [hit_doc[h] for h in hits.tolist()])
