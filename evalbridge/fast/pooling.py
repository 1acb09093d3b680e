"""Depth pooling over columns: each run's first d documents per query, which of them are unjudged, and their union.

A run is read one table at a time (:class:`~evalbridge.columnar.RowTable`: one hash, one score and one doc id per
row) and only its first ``max(depths, k)`` rows per query are kept, so 100 runs of 5M rows never sit in memory
side by side. The rank of a row follows :mod:`evalbridge.ranking`'s rules: a query whose rows are in rank order
is not sorted (:func:`~.placing._sort_unsorted`); ties are ordered by doc id only in the tie groups that start
within the kept rows. A (query, doc) pair is judged when the qrels table holds it: matched by the 64-bit hashes
of the two strings, every match confirmed on the strings. The union over runs is made on the hashes too, and
every pair of one hash is confirmed to be one (query, doc) pair (two pairs sharing a hash are split apart).

numpy and pyarrow are imported by this module: import it only where a pool is made.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..columnar import RowTable
from .placing import _sort_unsorted, prepare_scores, stable_order

__all__ = ["PoolColumns", "top_rows", "table_of", "pool_tables"]


@dataclass(frozen=True, eq=False)
class PoolColumns:
    """The pool of several runs as columns.

    Attributes:
        pair_query, pair_docs, pair_rank, pair_runs: one entry per unjudged pair in some run's first
            ``max(depths)``, ordered by query, best rank, then the first run to rank it so: its query index, doc id (a pyarrow string
            array), best rank over the runs and the number of runs that place it that high.
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
    from ..model import rows_of
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


def _split_collisions(inverse: np.ndarray, code: np.ndarray, docs: list[str], rows: np.ndarray,
                      n_pairs: int) -> tuple[np.ndarray, int]:
    """New pair ids for ``rows`` (the rows of the pair ids where two different pairs share one hash; ``docs``:
    their doc ids): the first (query, doc) of each such id keeps it, every other one gets a new id."""
    keys = [(int(inverse[r]), int(code[r]), doc) for r, doc in zip(rows.tolist(), docs)]
    kept: dict[int, tuple[int, str]] = {}
    new_id: dict[tuple[int, int, str], int] = {}
    for key in sorted(set(keys)):
        if kept.setdefault(key[0], key[1:]) == key[1:]:
            new_id[key] = key[0]
        else:
            new_id[key] = n_pairs
            n_pairs += 1
    inverse = inverse.copy()
    inverse[rows] = [new_id[key] for key in keys]
    return inverse, n_pairs


@dataclass(frozen=True, eq=False)
class _Kept:
    """What one run leaves behind once its table is dropped: its unjudged rows in the first ``keep`` (query
    index, rank, pair hash, doc id), its judged documents per query in the first k, and its rows per query."""

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


def _joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    """The parts end to end, each let go once copied (``parts`` is emptied): the peak is one copy, not two."""
    out = np.empty(sum(map(len, parts)), dtype=dtype)
    at = 0
    while parts:
        part = parts.pop(0)
        out[at:at + len(part)] = part
        at += len(part)
        del part
    return out


def _mean_share(found: np.ndarray, shown: np.ndarray) -> float:
    """Mean over the queries of found / shown (0 where nothing is shown); nan over no query."""
    if not len(shown):
        return float("nan")
    share = np.divide(found, shown, out=np.zeros(len(shown)), where=shown > 0)
    return float(share.mean())


def pool_tables(qrels: RowTable, runs: Iterable[RowTable], query_ids: Sequence[str], depths: Sequence[int], k: int,
                *, ties: str = "docid_desc", score_precision: str = "float64") -> PoolColumns:
    """The pool of ``runs`` at each depth over ``query_ids`` (see :class:`PoolColumns`); ``depths`` ascending.

    The runs are taken one at a time (an iterator may read each as it goes): of each, only its unjudged rows in
    the first ``max(depths[-1], k)`` are kept."""
    import pyarrow as pa
    import pyarrow.compute as pc

    code_of = {q: i for i, q in enumerate(query_ids)}
    n_queries, n_depths, deepest = len(query_ids), len(depths), max(depths)
    judged_of = _Judged(qrels, code_of)
    kept = []
    for run in runs:
        kept.append(_keep(run, judged_of, max(deepest, k), k, code_of, n_queries, ties, score_precision))
        del run  # let go of its table before the next run is read
    sizes = [len(c.code) for c in kept]
    kept_judged, kept_lengths = [c.judged_k for c in kept], [c.lengths for c in kept]
    codes, ranks, hash_parts = [c.code for c in kept], [c.rank for c in kept], [c.hashes for c in kept]
    docs = pa.chunked_array([chunk for c in kept for chunk in (c.docs.chunks if isinstance(c.docs, pa.ChunkedArray)
                                                              else [c.docs])], type=pa.string())
    del kept  # each run's doc ids now live in ``docs`` alone; its other columns in the lists, joined below
    code, rank, hashes = _joined(codes, np.int32), _joined(ranks, np.int32), _joined(hash_parts, np.uint64)
    member = rank <= deepest  # the pool's pairs come from these rows; the others (deeper than the pool) look them up
    by_hash = np.argsort(hashes)  # one sort; each hash group's first row, best rank and runs come by reduceat
    sorted_hashes = hashes[by_hash]
    starts = np.flatnonzero(np.r_[True, sorted_hashes[1:] != sorted_hashes[:-1]]) if len(hashes) else by_hash
    group = np.cumsum(np.r_[True, sorted_hashes[1:] != sorted_hashes[:-1]]) - 1 if len(hashes) else by_hash
    del sorted_hashes
    in_pool = member[by_hash]
    beyond = np.int64(len(hashes))
    if len(hashes):
        lead = np.minimum.reduceat(np.where(in_pool, by_hash, beyond), starts)  # first member row of each group
        group_best = np.minimum.reduceat(np.where(in_pool, rank[by_hash], np.iinfo(np.int64).max), starts)
        group_runs = np.add.reduceat(in_pool.astype(np.int64), starts)
    else:
        lead = group_best = group_runs = np.zeros(0, dtype=np.int64)
    pooled = lead < beyond  # a hash some row within the pool depth has
    number = np.cumsum(pooled) - 1
    inverse = np.empty(len(hashes), dtype=np.int64)
    inverse[by_hash] = np.where(pooled[group], number[group], -1)
    found = inverse >= 0
    n_pairs = int(pooled.sum())
    first, best, n_runs = lead[pooled], group_best[pooled], group_runs[pooled]
    # every row of one hash must be one (query, doc) pair: compare each with its neighbour in hash order (only rows
    # that share their hash with another are compared, and only they are taken)
    at = np.flatnonzero(group[1:] == group[:-1]) if len(group) else np.zeros(0, dtype=np.int64)
    later, earlier = by_hash[at + 1], by_hash[at]
    differ = ~pc.equal(docs.take(pa.array(later)), docs.take(pa.array(earlier))).to_numpy(zero_copy_only=False) \
        | (code[later] != code[earlier]) if len(at) else np.zeros(0, dtype=bool)
    same = np.ones(len(hashes), dtype=bool)
    same[later[differ]] = False
    same = same[found]
    rows = np.flatnonzero(found)
    if not same.all():  # two (query, doc) pairs share a 64-bit hash: split them apart, then count again
        suspects = rows[np.isin(inverse[rows], np.unique(inverse[rows[~same]]))]
        inverse, n_pairs = _split_collisions(inverse, code, docs.take(pa.array(suspects)).to_pylist(), suspects,
                                             n_pairs)
        # a deeper row whose (query, doc) no member has is in no pool
        first = np.full(n_pairs, len(hashes), dtype=np.int64)
        np.minimum.at(first, inverse[member], np.flatnonzero(member))
        orphan = (inverse >= 0) & (first[np.maximum(inverse, 0)] == len(hashes))
        inverse[orphan] = -1
        keep_ids = np.flatnonzero(first < len(hashes))
        renumber = np.full(n_pairs, -1, dtype=np.int64)
        renumber[keep_ids] = np.arange(len(keep_ids))
        inverse = np.where(inverse >= 0, renumber[np.maximum(inverse, 0)], -1)
        first, n_pairs = first[keep_ids], len(keep_ids)
        best = np.full(n_pairs, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(best, inverse[member], rank[member])
        n_runs = np.bincount(inverse[member], minlength=n_pairs).astype(np.int64)
    pair_code = code[first]
    # the pairs by query, best rank, then the first run (and row) to rank them so: one key when it fits in 63 bits
    span_rank, span_row = int(best.max(initial=0)) + 1, len(hashes) + 1
    if n_queries * span_rank * span_row < 2 ** 62:
        order = np.argsort((pair_code.astype(np.int64) * span_rank + best) * span_row + first)
    else:
        order = np.lexsort((first, best, pair_code))
    # per run: unjudged pairs in its first d; Judged@k now and once the pool at depth d is judged
    depth_arr = np.asarray(depths, dtype=np.int64)
    row_best = np.where(inverse >= 0, best[np.maximum(inverse, 0)], np.iinfo(np.int64).max)
    unjudged = np.zeros((len(sizes), n_depths), dtype=np.int64)
    judged_before = np.zeros(len(sizes), dtype=np.float64)
    judged_after = np.zeros((len(sizes), n_depths), dtype=np.float64)
    starts = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    for i, (lo, hi) in enumerate(zip(starts[:-1].tolist(), starts[1:].tolist())):
        own_rank, own_code, own_best = rank[lo:hi], code[lo:hi], row_best[lo:hi]
        unjudged[i] = np.searchsorted(np.sort(own_rank), depth_arr, side="right")
        shown = np.minimum(kept_lengths[i], k).astype(np.float64)
        judged_before[i] = _mean_share(kept_judged[i], shown)
        in_k = own_rank <= k
        for j, d in enumerate(depths):
            gained = np.bincount(own_code[in_k & (own_best <= d)], minlength=n_queries).astype(np.float64)
            judged_after[i, j] = _mean_share(kept_judged[i] + gained, shown)
    by_query = np.zeros((n_queries, n_depths), dtype=np.int64)
    for j, d in enumerate(depths):
        by_query[:, j] = np.bincount(pair_code[best <= d], minlength=n_queries)
    pair_code, best = pair_code.astype(np.int64), best.astype(np.int64)
    taken = docs.take(pa.array(first[order]))
    return PoolColumns(pair_query=pair_code[order],
                       pair_docs=taken.combine_chunks() if isinstance(taken, pa.ChunkedArray) else taken, pair_rank=best[order],
                       pair_runs=n_runs[order], unjudged=unjudged, by_query=by_query, judged_before=judged_before,
                       judged_after=judged_after)
