"""Depth pooling over columns: each run's first d documents per query, which of them are unjudged, and their union.

A run is read one table at a time (:class:`~evalbridge.model.columnar.RowTable`: one hash, one score and one doc id per
row) and only its first ``max(depths, k)`` rows per query are kept, so 100 runs of 5M rows never sit in memory
side by side. The rank of a row follows :mod:`evalbridge.common.ranking`'s rules: a query whose rows are in rank order
is not sorted (:func:`~.placing._sort_unsorted`); ties are ordered by doc id only in the tie groups that start
within the kept rows. A (query, doc) pair is judged when the qrels table holds it: matched by the 64-bit hashes
of the two strings, every match confirmed on the strings. The union is grown run by run (:class:`_Union`): each
run's unjudged rows within the pool depth are looked up among the pairs so far by hash, confirmed on the strings
(two pairs sharing a hash are kept apart), and counted; the run is then let go. What stays is one entry per pair
(query, best rank, runs, doc id, hash), never an array over every run's rows.

numpy and pyarrow are imported by this module: import it only where a pool is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model.columnar import RowTable
from .placing import _sort_unsorted, prepare_scores, stable_order

__all__ = ["PoolColumns", "top_rows", "table_of", "pool_tables"]


@dataclass(frozen=True, eq=False)
class PoolColumns:
    """The pool of several runs as columns.

    Attributes:
        pair_query, pair_docs, pair_rank, pair_runs: one entry per unjudged pair in some run's first
            ``max(depths)``, ordered by query, best rank, then the first run (in the order given) to hold it within
            ``max(depths)`` and its rank there: its query index, doc id (a pyarrow string array), best rank over the
            runs and the number of runs holding it within ``max(depths)``.
        unjudged: int64 (runs, depths): unjudged pairs in each run's first d.
        by_query: int64 (queries, depths): pool pairs of each query at each depth.
        judged_before: float64 (runs,): Judged@k of each run, averaged over the queries.
        judged_after: float64 (runs, depths): Judged@k of each run once the pool at depth d is judged.
    """

    pair_query: np.ndarray
    pair_docs: Any
    pair_rank: np.ndarray
    pair_runs: np.ndarray
    unjudged: np.ndarray
    by_query: np.ndarray
    judged_before: np.ndarray
    judged_after: np.ndarray


def table_of(obj: Any) -> RowTable:
    """The :class:`RowTable` of a ``Qrels`` / ``Run``: its own when columnar, else built from its dict rows."""
    from ..model.data import rows_of
    from .rows import table_from_mapping

    table = obj.columnar
    return table if table is not None else table_from_mapping(rows_of(obj))


def _order_ties(table: RowTable, rows: np.ndarray, scores: np.ndarray, code: np.ndarray, pos: np.ndarray,
                keep: int, ties: str) -> None:
    """Order by doc id (``docid_desc`` / ``docid_asc``), in place, the tie groups that start in the first ``keep``."""
    tied = (scores[1:] == scores[:-1]) & (code[1:] == code[:-1])
    if not tied.any():
        return
    start = np.r_[True, ~tied]
    group = np.cumsum(start) - 1
    size = np.bincount(group)
    need = (size > 1) & (pos[start] < keep)
    members = np.flatnonzero(need[group])
    if not len(members):
        return
    import pyarrow as pa
    import pyarrow.compute as pc

    table_of_ties = pa.table({"g": pa.array(group[members]), "d": table.docs.take(pa.array(rows[members]))})
    order = pc.sort_indices(table_of_ties, sort_keys=[("g", "ascending"), ("d", "descending" if ties == "docid_desc"
                                                                           else "ascending")])
    rows[members] = rows[members][order.to_numpy()]


def _prefix(starts: np.ndarray, lengths: np.ndarray, scores: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    """``(index, segment)``: the positions of each segment's first ``keep`` entries (segments ranked, laid out from
    ``starts`` in ``scores``' layout), a tie group that crosses ``keep`` taken whole (its doc ids decide which of its
    documents make the cut); and the segment of each position."""
    take = np.minimum(lengths, keep)
    longer = np.flatnonzero(lengths > keep)
    cut = starts[longer] + keep
    for s, at in zip(longer[scores[cut] == scores[cut - 1]].tolist(), cut[scores[cut] == scores[cut - 1]].tolist()):
        segment = -scores[int(starts[s]):int(starts[s] + lengths[s])]  # ascending
        take[s] = np.searchsorted(segment, -scores[at - 1], side="right")
    segment_of = np.repeat(np.arange(len(starts), dtype=np.int64), take)
    within = np.arange(int(take.sum()), dtype=np.int64) - np.repeat(np.cumsum(take) - take, take)
    return np.repeat(starts, take) + within, segment_of


def top_rows(table: RowTable, keep: int, code_of: Mapping[str, int], n_queries: int, *, ties: str = "docid_desc",
             score_precision: str = "float64") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(code, rank, rows, lengths)`` of the first ``keep`` rows of each query of ``code_of`` in ``table``, and
    the rows of each query. A table whose queries are one block each, in rank order (a TREC run), is read only in
    its first ``keep`` rows per query; any other is sorted first."""
    local = np.fromiter((code_of.get(q, -1) for q in table.query_ids), dtype=np.int64, count=len(table.query_ids))
    scores = prepare_scores(table.values, score_precision)
    starts, sizes = table.block_start, table.block_lengths
    block_code = local[table.block_code] if len(local) else np.zeros(0, dtype=np.int64)
    rising = scores[1:] > scores[:-1]
    rising[starts[1:] - 1] = False
    if len(np.unique(table.block_code)) == len(starts) and not rising.any():  # ranked already, a block per query
        scope = np.flatnonzero(block_code >= 0)
        index, segment = _prefix(starts[scope], sizes[scope], scores, keep)
        rows, code, pos = index, block_code[scope][segment], index - starts[scope][segment]
        lengths = np.bincount(block_code[scope], weights=sizes[scope], minlength=n_queries).astype(np.int64)
    else:
        codes = local[table.codes()] if len(local) else np.zeros(0, dtype=np.int64)
        rows = np.flatnonzero(codes >= 0)
        code = codes[rows]
        if len(code) > 1 and not np.all(code[1:] >= code[:-1]):
            order = stable_order(code, n_queries)
            rows, code = rows[order], code[order]
        lengths = np.bincount(code, minlength=n_queries).astype(np.int64)
        offsets = np.zeros(n_queries + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        ranked_scores = scores[rows]
        ranked = _sort_unsorted(ranked_scores, offsets)
        if ranked is not None:
            rows, ranked_scores = rows[ranked], ranked_scores[ranked]
        index, code = _prefix(offsets[:-1], lengths, ranked_scores, keep)
        rows, pos = rows[index], index - offsets[code]
    if ties != "input":
        _order_ties(table, rows, scores[rows], code, pos, keep, ties)
    first = pos < keep
    return code[first], pos[first] + 1, rows[first], lengths


class _Judged:
    """Which (query, doc) pairs of a run's rows the qrels hold: by hash, confirmed on the strings."""

    def __init__(self, qrels: RowTable, code_of: Mapping[str, int]) -> None:
        self.qrels = qrels
        self.order = np.argsort(qrels.hashes, kind="stable")
        self.sorted = qrels.hashes[self.order]
        local = np.fromiter((code_of.get(q, -1) for q in qrels.query_ids), dtype=np.int64,
                            count=len(qrels.query_ids))
        self.code = local[qrels.codes()] if len(local) else np.zeros(0, dtype=np.int64)

    def __call__(self, run: RowTable, rows: np.ndarray, code: np.ndarray) -> np.ndarray:
        import pyarrow as pa
        import pyarrow.compute as pc

        judged = np.zeros(len(rows), dtype=bool)
        if not len(self.sorted) or not len(rows):
            return judged
        hashes = run.hashes[rows]
        needles = np.argsort(hashes)  # looked up in order: the binary searches walk memory forward
        at = np.empty(len(hashes), dtype=np.int64)
        at[needles] = np.minimum(np.searchsorted(self.sorted, hashes[needles]), len(self.sorted) - 1)
        found = np.flatnonzero(self.sorted[at] == hashes)
        q_rows = self.order[at[found]]
        same = pc.equal(run.docs.take(pa.array(rows[found])), self.qrels.docs.take(pa.array(q_rows)))
        same = same.to_numpy(zero_copy_only=False) & (self.code[q_rows] == code[found])
        judged[found[same]] = True
        shared = np.flatnonzero(~same)  # the hash is the qrels', the strings not: maybe another row of that hash
        if len(shared):
            hash_of = hashes[found[shared]]
            lo, hi = np.searchsorted(self.sorted, hash_of), np.searchsorted(self.sorted, hash_of, side="right")
            several = np.flatnonzero(hi - lo > 1)
            if len(several):
                pairs = set(zip(self.code.tolist(), self.qrels.docs.to_pylist()))
                docs = run.docs.take(pa.array(rows[found[shared[several]]])).to_pylist()
                for i, doc in zip(found[shared[several]].tolist(), docs):
                    judged[i] = (int(code[i]), doc) in pairs
        return judged


@dataclass(frozen=True, eq=False)
class _Kept:
    """What pooling reads of one run once its table is dropped: its unjudged rows in the first ``keep`` (query
    index, rank, pair hash, doc id; ordered by query, then rank), its judged documents per query in the first k,
    and its rows per query."""

    code: np.ndarray
    rank: np.ndarray
    hashes: np.ndarray
    docs: Any
    judged_k: np.ndarray
    lengths: np.ndarray


def _keep(run: RowTable, judged_of: _Judged, keep: int, k: int, code_of: Mapping[str, int], n_queries: int,
          ties: str, score_precision: str) -> _Kept:
    import pyarrow as pa

    code, rank, rows, lengths = top_rows(run, keep, code_of, n_queries, ties=ties, score_precision=score_precision)
    judged = judged_of(run, rows, code)
    judged_k = np.bincount(code[judged & (rank <= k)], minlength=n_queries).astype(np.float64)
    open_rows = np.flatnonzero(~judged)
    docs = run.docs.take(pa.array(rows[open_rows]))
    return _Kept(code[open_rows].astype(np.int32), rank[open_rows].astype(np.int32), run.hashes[rows[open_rows]], docs,
                 judged_k, lengths)


class _Growing:
    """A column grown at its end; its capacity grows by half when full, so appending run after run stays linear."""

    def __init__(self, dtype: Any) -> None:
        self.data = np.zeros(0, dtype=dtype)
        self.size = 0

    def append(self, values: np.ndarray) -> None:
        if self.size + len(values) > len(self.data):
            bigger = np.empty(max(self.size + len(values), len(self.data) * 3 // 2), dtype=self.data.dtype)
            bigger[:self.size] = self.data[:self.size]
            self.data = bigger
        self.data[self.size:self.size + len(values)] = values
        self.size += len(values)

    @property
    def values(self) -> np.ndarray:
        return self.data[:self.size]


class _Union:
    """The pool's (query, doc) pairs so far, grown run by run: no array over every run's rows is ever made.

    A pair is numbered when a row within the pool depth first holds it (runs in the order given, each run's rows by
    query then rank), so its number orders pairs as their first row does. Per pair: its query, best rank, the runs
    holding it within the pool depth, and its doc id (one chunk per run: the pairs that run was first to hold). A
    sorted column of pair hashes, one entry per hash, finds the pair of a row; every match is confirmed on the
    strings, and a pair whose hash an earlier pair already has (a 64-bit collision) is found in :attr:`apart`."""

    def __init__(self) -> None:
        self.hashes = np.zeros(0, dtype=np.uint64)  # sorted; one entry per hash: the first pair seen with it
        self.ids = np.zeros(0, dtype=np.int32)      # the pair of each entry of ``hashes``
        self.apart: dict[tuple[int, str], int] = {}  # (query, doc) -> pair, for pairs sharing their hash
        self.code, self.best, self.runs = _Growing(np.int32), _Growing(np.int32), _Growing(np.int32)
        self.chunks: list[Any] = []

    @property
    def size(self) -> int:
        return self.code.size

    def find(self, code: np.ndarray, hashes: np.ndarray, docs: Any,
             needles: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(pair, held)`` of each row (query index, pair hash, doc id): its pair (-1 where none yet), and whether
        its hash is some pair's already. ``needles``: the rows in hash order, when known."""
        import pyarrow as pa
        import pyarrow.compute as pc

        ids = np.full(len(hashes), -1, dtype=np.int64)
        held = np.zeros(len(hashes), dtype=bool)
        if not len(self.hashes) or not len(hashes):
            return ids, held
        needles = np.argsort(hashes) if needles is None else needles  # in order: the searches walk memory forward
        at = np.empty(len(hashes), dtype=np.int64)
        at[needles] = np.minimum(np.searchsorted(self.hashes, hashes[needles]), len(self.hashes) - 1)
        hit = np.flatnonzero(self.hashes[at] == hashes)
        held[hit] = True
        pair_of = self.ids[at[hit]].astype(np.int64)
        by_pair = np.argsort(pair_of)  # the pairs' doc ids taken in their order: each chunk read forward
        stored = pa.chunked_array(self.chunks, type=pa.string()).take(pa.array(pair_of[by_pair]))
        same = np.empty(len(hit), dtype=bool)
        same[by_pair] = pc.equal(stored, docs.take(pa.array(hit[by_pair]))).to_numpy(zero_copy_only=False)
        same &= self.code.values[pair_of] == code[hit]
        ids[hit[same]] = pair_of[same]
        if self.apart and not same.all():  # the hash is another pair's: maybe one kept apart
            other = hit[~same]
            for i, doc in zip(other.tolist(), docs.take(pa.array(other)).to_pylist()):
                ids[i] = self.apart.get((int(code[i]), doc), -1)
        return ids, held

    def add(self, code: np.ndarray, rank: np.ndarray, hashes: np.ndarray, docs: Any) -> np.ndarray:
        """Count one run's rows within the pool depth (ordered by query then rank; no pair twice, as in any
        :class:`RowTable`): each row's pair gets its rank if better and one run more; a pair not held yet is
        numbered. The pair of each row."""
        import pyarrow as pa

        needles = np.argsort(hashes)
        ids, held = self.find(code, hashes, docs, needles)
        old = np.flatnonzero(ids >= 0)
        pairs = ids[old]  # each pair once: a run holds no pair twice
        self.best.values[pairs] = np.minimum(self.best.values[pairs], rank[old])
        self.runs.values[pairs] += 1
        new = np.flatnonzero(ids < 0)
        first = self.size
        if first + len(new) > np.iinfo(self.ids.dtype).max:
            self.ids = self.ids.astype(np.int64)
        ids[new] = first + np.arange(len(new))
        self.code.append(code[new])
        self.best.append(rank[new])
        self.runs.append(np.ones(len(new), dtype=np.int32))
        self.chunks.append(docs.take(pa.array(new)))
        # a new pair enters the sorted hashes when its hash is no other pair's (one held, or a new one met first)
        rows = needles[ids[needles] >= first]  # the new pairs' rows in hash order
        ordered = hashes[rows]
        lead = np.r_[True, ordered[1:] != ordered[:-1]] & ~held[rows] if len(rows) else np.zeros(0, dtype=bool)
        for i, doc in zip(rows[~lead].tolist(), docs.take(pa.array(rows[~lead])).to_pylist()):
            self.apart[(int(code[i]), doc)] = int(ids[i])
        at = np.searchsorted(self.hashes, ordered[lead])
        self.hashes = np.insert(self.hashes, at, ordered[lead])
        self.ids = np.insert(self.ids, at, ids[rows[lead]].astype(self.ids.dtype))
        return ids

    def docs(self) -> Any:
        import pyarrow as pa

        return pa.chunked_array(self.chunks, type=pa.string())


def _mean_share(found: np.ndarray, shown: np.ndarray) -> float:
    """Mean over the queries of found / shown (0 where nothing is shown); nan over no query."""
    if not len(shown):
        return float("nan")
    share = np.divide(found, shown, out=np.zeros(len(shown)), where=shown > 0)
    return float(share.mean())


def pool_tables(qrels: RowTable, runs: Iterable[RowTable], query_ids: Sequence[str], depths: Sequence[int], k: int,
                *, ties: str = "docid_desc", score_precision: str = "float64") -> PoolColumns:
    """The pool of ``runs`` at each depth over ``query_ids`` (see :class:`PoolColumns`); ``depths`` ascending.

    The runs are taken one at a time (an iterator may read each as it goes), and each is let go once counted:
    its unjudged rows in the first ``max(depths[-1], k)`` update the union (:class:`_Union`) and its own counts.
    What a run keeps until the end is what its ``Judged@k`` after judging needs and cannot know yet: the pairs of
    its rows ranked below the shallowest depth within k (none when ``k`` is at most that depth)."""
    import pyarrow as pa

    code_of = {q: i for i, q in enumerate(query_ids)}
    n_queries, n_depths, deepest, shallowest = len(query_ids), len(depths), max(depths), min(depths)
    judged_of = _Judged(qrels, code_of)
    union = _Union()
    unjudged, judged_before, sure, shown, later = [], [], [], [], []
    deeper: list[tuple[int, _Kept]] = []  # rows within k but below the pool depth: their pairs are looked up at the end
    for run in runs:
        kept = _keep(run, judged_of, max(deepest, k), k, code_of, n_queries, ties, score_precision)
        del run  # let go of its table before the next run is read
        unjudged.append(np.searchsorted(np.sort(kept.rank), np.asarray(depths), side="right"))
        shown.append(np.minimum(kept.lengths, k).astype(np.float64))
        judged_before.append(_mean_share(kept.judged_k, shown[-1]))
        # a row within k and the shallowest depth counts at every depth: its pair's best rank is at most its own
        sure.append(kept.judged_k + np.bincount(kept.code[kept.rank <= min(k, shallowest)], minlength=n_queries))
        member = np.flatnonzero(kept.rank <= deepest)
        docs = kept.docs if len(member) == len(kept.rank) else kept.docs.take(pa.array(member))
        pairs = union.add(kept.code[member], kept.rank[member], kept.hashes[member], docs)
        unsure = (kept.rank[member] > shallowest) & (kept.rank[member] <= k)
        later.append(pairs[unsure].astype(np.int32 if union.size < 2 ** 31 else np.int64))
        beyond = np.flatnonzero((kept.rank > deepest) & (kept.rank <= k))
        if len(beyond):
            deeper.append((len(later) - 1, _Kept(kept.code[beyond], kept.rank[beyond], kept.hashes[beyond],
                                                 kept.docs.take(pa.array(beyond)), kept.judged_k, kept.lengths)))
        del kept, member, pairs, docs
    for i, rows in deeper:  # a row deeper than the pool is in a pair some run holds within the pool depth, or none
        found, _ = union.find(rows.code, rows.hashes, rows.docs)
        later[i] = np.r_[later[i], found[found >= 0]].astype(later[i].dtype)
    del deeper
    code, best, n_runs = union.code.values, union.best.values, union.runs.values
    judged_after = np.zeros((len(later), n_depths), dtype=np.float64)
    for i, pairs in enumerate(later):
        for j, d in enumerate(depths):
            gained = np.bincount(code[pairs[best[pairs] <= d]], minlength=n_queries)
            judged_after[i, j] = _mean_share(sure[i] + gained, shown[i])
    by_query = np.zeros((n_queries, n_depths), dtype=np.int64)
    for j, d in enumerate(depths):
        by_query[:, j] = np.bincount(code[best <= d], minlength=n_queries)
    # the pairs by query, best rank, then the first run (and row) to hold them: one key when it fits in 63 bits
    n_pairs, span_rank = union.size, int(best.max(initial=0)) + 1
    if n_queries * span_rank * (n_pairs + 1) < 2 ** 62:
        order = np.argsort((code.astype(np.int64) * span_rank + best) * n_pairs + np.arange(n_pairs))
    else:
        order = np.lexsort((np.arange(n_pairs), best, code))
    taken = union.docs().take(pa.array(order))
    return PoolColumns(pair_query=code[order].astype(np.int64), pair_docs=taken.combine_chunks(),
                       pair_rank=best[order].astype(np.int64), pair_runs=n_runs[order].astype(np.int64),
                       unjudged=np.array(unjudged, dtype=np.int64).reshape(len(later), n_depths), by_query=by_query,
                       judged_before=np.array(judged_before, dtype=np.float64), judged_after=judged_after)
