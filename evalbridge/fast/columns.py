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
from dataclasses import dataclass, replace
from itertools import chain
from operator import attrgetter, methodcaller

import numpy as np

from ..model.data import rows_of

__all__ = ["Columns", "from_mappings", "EXACT_LIMIT"]

IdsOf = Callable[[np.ndarray], list[str]]

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
        zero_query, zero_score, zero_doc_ids: the same for the retrieved docs judged with grade 0,
            which no hit covers; the metrics that read judgements (Judged, Bpref...) place them too.
            ``None`` when the producer did not collect them (the pyarrow reader).
        pool_rows: global run row indices of the docs judged for some query of the qrels (BEIR's
            pool, for ``Hole``), computed when first asked; ``None`` when the producer cannot.
        judged_index: the qrels row (index into ``judged``) of each hit of :meth:`judged_hits`; ``None`` when the
            producer did not keep it.
        judged_strata: int64 code of the stratum of every qrels row (codes in the order of the strata's names, -1:
            none), for ``xinfAP`` and ``infNDCG``; ``None`` when the qrels have no strata.
    """

    query_ids: Sequence[str]
    offsets: np.ndarray
    scores: np.ndarray
    judged_offsets: np.ndarray
    judged: np.ndarray
    hit_query: np.ndarray
    hit_score: np.ndarray
    hit_grade: np.ndarray
    doc_ids: IdsOf
    hit_doc_ids: IdsOf
    zero_query: np.ndarray | None = None
    zero_score: np.ndarray | None = None
    zero_doc_ids: IdsOf | None = None
    pool_rows: Callable[[], np.ndarray] | None = None
    judged_index: np.ndarray | None = None
    judged_strata: np.ndarray | None = None

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def judged_hits(self) -> Columns:
        """These columns with every retrieved judged doc as a hit: the hits plus the grade-0 ones."""
        if self.zero_query is None or self.zero_score is None or self.zero_doc_ids is None:
            raise ValueError("these columns do not hold the retrieved docs judged 0 (read by pyarrow?); "
                             "build them with from_mappings")
        n_hits = len(self.hit_query)
        return replace(self, hit_query=np.concatenate([self.hit_query, self.zero_query]),
                       hit_score=np.concatenate([self.hit_score, self.zero_score]),
                       hit_grade=np.concatenate([self.hit_grade, np.zeros(len(self.zero_query))]),
                       hit_doc_ids=_concat_ids(self.hit_doc_ids, n_hits, self.zero_doc_ids))

    def pool_hits(self) -> Columns:
        """These columns with the pooled run rows (judged for some query) as hits, of grade 1."""
        if self.pool_rows is None:
            raise ValueError("these columns cannot tell which docs are judged for other queries")
        rows = self.pool_rows()
        return replace(self, hit_query=np.searchsorted(self.offsets, rows, side="right") - 1,
                       hit_score=self.scores[rows], hit_grade=np.ones(len(rows)),
                       hit_doc_ids=lambda h: self.doc_ids(rows[h]))

    @property
    def exact(self) -> bool:
        """True when every score and grade is below 2**53 in magnitude, so float64 holds it exactly."""
        return all(len(a) == 0 or max(float(a.max()), -float(a.min())) < EXACT_LIMIT
                   for a in (self.scores, self.judged))


def _concat_ids(first: IdsOf, n_first: int, second: IdsOf) -> IdsOf:
    """Doc ids of indices into ``first``'s rows followed by ``second``'s, in the order asked."""

    def ids(index: np.ndarray) -> list[str]:
        index = np.asarray(index, dtype=np.int64)
        out = np.empty(len(index), dtype=object)
        low = index < n_first
        for mask, lookup, shift in ((low, first, 0), (~low, second, n_first)):
            where = np.flatnonzero(mask)
            if len(where):
                found = np.empty(len(where), dtype=object)
                found[:] = lookup(index[where] - shift)
                out[where] = found
        return out.tolist()

    return ids


def _offsets(lengths: np.ndarray) -> np.ndarray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def _ids_at(query_rows: Sequence[Mapping[str, float]], offsets: np.ndarray) -> Callable[[np.ndarray], list[str]]:
    """Global row indices -> the keys at those rows: one list of keys per query touched, then
    C-level lookups (rows in any order)."""

    def ids(rows: np.ndarray) -> list[str]:
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
            found.extend(map(list(query_rows[query]).__getitem__, local[start:stop]))
        if order is None:
            return found
        out = np.empty(len(found), dtype=object)
        out[order] = found
        return out.tolist()

    return ids


def from_mappings(qrels: Mapping[str, Mapping[str, float]], run: Mapping[str, Mapping[str, float]]) -> Columns:
    """Columns of a qrels and a run given as mappings (e.g. :class:`~evalbridge.model.data.Qrels`, ``Run``).

    Cost: C-level passes over the run's scores and the qrels' rows; no Python code per query.

    Example:
        >>> c = from_mappings({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}, {"q1": {"a": 0.5, "x": 0.9}})
        >>> c.query_ids, c.scores.tolist(), c.hit_grade.tolist()
        (['q1'], [0.5, 0.9], [2.0])
    """
    qrels, run = rows_of(qrels), rows_of(run)  # the plain dicts inside
    query_ids = list(filter(run.keys().__contains__, qrels))
    ranked = list(map(run.__getitem__, query_ids))
    judged = list(map(qrels.__getitem__, query_ids))
    n = len(query_ids)
    offsets = _offsets(np.fromiter(map(len, ranked), dtype=np.int64, count=n))
    scores = np.fromiter(chain.from_iterable(map(methodcaller("values"), ranked)), dtype=np.float64,
                         count=int(offsets[-1]))
    judged_offsets = _offsets(np.fromiter(map(len, judged), dtype=np.int64, count=n))
    n_judged = int(judged_offsets[-1])
    grades = np.fromiter(chain.from_iterable(map(methodcaller("values"), judged)), dtype=np.float64,
                         count=n_judged)
    # The run's score of every judged doc, NaN (from None) where it was not retrieved: scores are
    # finite, so the hits (retrieved, grade not 0) are where both are set.
    found = np.fromiter(chain.from_iterable(map(map, map(attrgetter("get"), ranked), judged)), dtype=np.float64,
                        count=n_judged)
    retrieved = ~np.isnan(found)
    hits = np.flatnonzero(retrieved & (grades != 0))
    zeros = np.flatnonzero(retrieved & (grades == 0))
    judged_ids = _ids_at(judged, judged_offsets)

    def pool_rows() -> np.ndarray:
        pool = frozenset().union(*qrels.values())
        return np.flatnonzero(np.fromiter(map(pool.__contains__, chain.from_iterable(ranked)), dtype=bool,
                                          count=int(offsets[-1])))

    return Columns(
        query_ids=query_ids, offsets=offsets, scores=scores, judged_offsets=judged_offsets, judged=grades,
        hit_query=np.searchsorted(judged_offsets, hits, side="right") - 1, hit_score=found[hits],
        hit_grade=grades[hits], doc_ids=_ids_at(ranked, offsets), hit_doc_ids=lambda h: judged_ids(hits[h]),
        zero_query=np.searchsorted(judged_offsets, zeros, side="right") - 1, zero_score=found[zeros],
        zero_doc_ids=lambda z: judged_ids(zeros[z]), pool_rows=pool_rows, judged_index=np.concatenate([hits, zeros]))
