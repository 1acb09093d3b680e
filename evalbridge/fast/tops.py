"""Many runs' first documents as codes into one table of (query, doc) pairs: what pooling and the diagnostics read.

A :class:`TopLists` holds, for every system and query, the first ``depth`` documents of its ranking as row
numbers of one :class:`~evalbridge.model.columnar.RowTable` of distinct (query, doc) pairs, :attr:`TopLists.pairs`.
Everything a test collection's diagnostics ask of many runs is then a dense array operation over those
codes, with no Python object per document and no search:

* how many systems hold a pair in their first k: ``np.bincount`` of the codes (:meth:`TopLists.holders`);
  the pool at depth k is the pairs held at least once, a pair "only this run contributed" is held once;
* the grade of every ranked document: the qrels matched once to the pairs table (the hash pairing of
  :mod:`.rows`), then ``grades[codes]`` (:func:`pair_grades`);
* one system's first documents as a columnar :class:`~evalbridge.model.data.Run` that ``evaluate`` reads
  (:meth:`TopLists.run`), its scores minus the rank, so every metric with a cut-off at most ``depth`` is
  exactly the metric of the full run.

Two builders: :func:`from_runs` ranks mappings (``Run``, dicts) with :func:`evalbridge.common.ranking.rank`, one
query at a time; :func:`from_ranked` reads runs given as arrays (one row of doc codes and one of scores per
query, as a generator or a columnar store has them) one run at a time and keeps only the first ``depth`` of
each: a row already in rank order (the usual case) is sliced, not sorted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..model.columnar import RowTable
from ..errors import InputError
from .columns import Columns
from .rows import pair, table_from_blocks, table_from_mapping

if TYPE_CHECKING:
    import pyarrow as pa

    from ..model.data import Qrels, Run

__all__ = ["TopLists", "Judged", "from_runs", "from_ranked", "pair_grades", "qrels_table"]


@dataclass(frozen=True, eq=False)
class TopLists(Mapping[str, "Run"]):
    """The first documents of several systems' rankings over the same queries; a mapping system name ->
    its first documents as a columnar ``Run`` (:meth:`run`), so any verb that takes runs takes it.

    Attributes:
        systems: the system names, in the order of :attr:`codes`' first axis.
        pairs: every (query, doc) some system ranks within :attr:`depth`, once; its ``query_ids`` are the
            queries (second axis of :attr:`codes`), its values 0.
        codes: integers (systems, queries, depth): the row of :attr:`pairs` at each rank, ``-1`` past the end
            of a list (a system that ranked fewer documents, or none, for that query).
    """

    systems: tuple[str, ...]
    pairs: RowTable
    codes: np.ndarray

    @property
    def depth(self) -> int:
        """The documents kept per ranking."""
        return int(self.codes.shape[2])

    @property
    def query_ids(self) -> tuple[str, ...]:
        return self.pairs.query_ids

    def holders(self, depth: int | None = None) -> np.ndarray:
        """int64 per pair: how many systems rank it within ``depth`` (all kept ranks when None)."""
        codes = self.codes if depth is None else self.codes[:, :, :depth]
        counts: np.ndarray = np.bincount(codes[codes >= 0], minlength=self.pairs.n_rows)
        return counts

    def lengths(self) -> np.ndarray:
        """int64 (systems, queries): the documents kept of each ranking."""
        lengths: np.ndarray = np.count_nonzero(self.codes >= 0, axis=2).astype(np.int64)
        return lengths

    def run(self, system: int, queries: np.ndarray | None = None, *, name: str | None = None) -> Run:
        """System number ``system``'s first documents as a columnar ``Run`` (of the query indices ``queries``, all
        when None; queries it ranked nothing for are left out). Scores are minus the rank (-1.0, -2.0, ...)."""
        from ..model.data import Run

        pairs = self.pairs
        chosen = np.arange(len(pairs.query_ids)) if queries is None else np.asarray(queries, dtype=np.int64)
        codes = self.codes[system, chosen]
        length = np.count_nonzero(codes >= 0, axis=1)
        kept = length > 0
        rows = codes[codes >= 0]  # lists are contiguous from rank 1: row-major order is rank order per query
        starts = np.r_[0, np.cumsum(length[kept])[:-1]].astype(np.int64)
        ranks = np.arange(rows.size, dtype=np.int64) - np.repeat(starts, length[kept]) + 1
        query_ids = tuple(pairs.query_ids[i] for i in chosen[kept].tolist())
        table = RowTable(query_ids, starts, np.arange(len(query_ids), dtype=np.int64),
                         pairs.docs.take(rows), _frozen(-ranks.astype(np.float64)), np.broadcast_to(np.True_, rows.shape),
                         _frozen(pairs.hashes[rows]), pairs.query_kind, pairs.doc_kind)
        return Run(table, name=name if name is not None else self.systems[system])

    def __getitem__(self, name: str) -> Run:
        if name not in self.systems:
            raise KeyError(name)
        return self.run(self.systems.index(name))

    def __iter__(self) -> Iterator[str]:
        return iter(self.systems)

    def __len__(self) -> int:
        return len(self.systems)


def _frozen(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def qrels_table(qrels: Qrels) -> RowTable:
    """The qrels' rows as a table (their own when columnar)."""
    from ..model.data import rows_of

    table = qrels.columnar
    if table is None:
        table = table_from_mapping(rows_of(qrels), query_kind=(qrels.query_id_kind or ("str",))[0],
                                   doc_kind=(qrels.doc_id_kind or ("str",))[0])
    return table


def pair_grades(tops: TopLists, judged: RowTable) -> tuple[np.ndarray, np.ndarray]:
    """(the grade of every pair of ``tops``, float64, NaN where unjudged; the row of ``judged`` holding each
    pair, -1 where none), matched once through the hashes of :func:`.rows.pair`: the pairs are paired as a
    qrels whose grades are their row numbers + 1 with ``judged`` as a run whose scores are its row numbers."""
    pairs = tops.pairs
    numbered = RowTable(pairs.query_ids, pairs.block_start, pairs.block_code, pairs.docs,
                        np.arange(1, pairs.n_rows + 1, dtype=np.float64), pairs.integral, pairs.hashes,
                        pairs.query_kind, pairs.doc_kind)
    rows = RowTable(judged.query_ids, judged.block_start, judged.block_code, judged.docs,
                    np.arange(judged.n_rows, dtype=np.float64), judged.integral, judged.hashes,
                    judged.query_kind, judged.doc_kind)
    columns = pair(numbered, rows)
    pair_rows = columns.hit_grade.astype(np.int64) - 1
    judged_rows = columns.hit_score.astype(np.int64)
    grades = np.full(pairs.n_rows, np.nan)
    grades[pair_rows] = judged.values[judged_rows]
    row_of = np.full(pairs.n_rows, -1, dtype=np.int64)
    row_of[pair_rows] = judged_rows
    return grades, row_of


def _pairs_table(query_ids: Sequence[str], query_of_pair: np.ndarray, docs: pa.Array) -> RowTable:
    """The pairs table: pairs sorted by query index, one block per query holding any."""
    import pyarrow as pa

    n = len(query_of_pair)
    starts = np.r_[0, np.flatnonzero(query_of_pair[1:] != query_of_pair[:-1]) + 1].astype(np.int64) if n else \
        np.zeros(0, np.int64)
    return table_from_blocks(query_ids, pa.array(list(query_ids), type=pa.string()), starts,
                             query_of_pair[starts].astype(np.int64), docs, np.zeros(n), True)


def from_runs(runs: Mapping[str, Any], depth: int, *, ties: str = "docid_desc",
              score_precision: str = "float64") -> TopLists:
    """The first ``depth`` documents of each run (a ``Run`` or ``{query: {doc: score}}``), ranked as
    :func:`evalbridge.common.ranking.rank` ranks them (``ties="average"`` orders no tie group: the lists then follow
    trec_eval's order, ``docid_desc``); the queries are those of any run, in order of first appearance.

    Example:
        >>> t = from_runs({"a": {"q1": {"x": 0.9, "y": 0.5}}, "b": {"q1": {"y": 0.7, "z": 0.1}}}, 2)
        >>> t.pairs.docs.to_pylist(), t.codes.tolist(), t.holders().tolist()
        (['x', 'y', 'z'], [[[0, 1]], [[1, 2]]], [1, 2, 1])
    """
    import pyarrow as pa

    from ..common.ranking import rank

    order = ties if ties in ("docid_desc", "docid_asc", "input") else "docid_desc"
    names = tuple(runs)
    query_ids: dict[str, int] = {}
    ranked: list[dict[str, list[str]]] = []
    for name in names:
        lists = {}
        for qid, scores in runs[name].items():
            lists[str(qid)] = rank(scores, ties=order, score_precision=score_precision)[:depth]
            query_ids.setdefault(str(qid), len(query_ids))
        ranked.append(lists)
    vocab: dict[str, dict[str, int]] = {qid: {} for qid in query_ids}
    for lists in ranked:
        for qid, docs in lists.items():
            seen = vocab[qid]
            for doc in docs:
                seen.setdefault(doc, len(seen))
    first = np.cumsum([0, *map(len, vocab.values())])
    codes = np.full((len(names), len(query_ids), depth), -1, dtype=np.int64)
    for s, lists in enumerate(ranked):
        for qid, docs in lists.items():
            q = query_ids[qid]
            codes[s, q, :len(docs)] = [first[q] + vocab[qid][d] for d in docs]
    query_of_pair = np.repeat(np.arange(len(query_ids), dtype=np.int64), np.diff(first))
    docs = pa.array([d for seen in vocab.values() for d in seen], type=pa.string())
    return TopLists(names, _pairs_table(tuple(query_ids), query_of_pair, docs), _frozen(codes))


def _first_in_order(docs: np.ndarray, scores: np.ndarray, depth: int, doc_order: np.ndarray, ties: str) -> np.ndarray:
    """The first ``depth`` doc codes of each row (score descending, ties by doc id as ``doc_order`` ranks the
    codes): the rows already so are sliced; only the others are sorted."""
    width = docs.shape[1]
    top = np.full((docs.shape[0], depth), -1, dtype=np.int64)
    top[:, :min(width, depth)] = docs[:, :depth]
    if width < 2:
        return top
    step = scores[:, 1:] - scores[:, :-1]
    bad = step > 0
    if ties != "input":
        tied = np.flatnonzero(step == 0)  # flat indices: only the tied neighbours' doc ids are compared
        if len(tied):
            left = docs[:, :-1].ravel()[tied]
            right = docs[:, 1:].ravel()[tied]
            out_of_order = doc_order[right] > doc_order[left] if ties == "docid_desc" else \
                doc_order[right] < doc_order[left]
            bad.ravel()[tied[out_of_order]] = True
    rows = np.flatnonzero(bad.any(axis=1))
    for r in rows.tolist():
        key = doc_order[docs[r]] if ties != "input" else np.arange(width)
        key = -key if ties == "docid_desc" else key
        top[r, :min(width, depth)] = docs[r][np.lexsort((key, -scores[r]))][:depth]
    return top


def from_ranked(ranked: Iterable[tuple[str, np.ndarray, np.ndarray]], *, query_ids: Sequence[str], doc_ids: pa.Array,
                depth: int, ties: str = "docid_desc") -> TopLists:
    """The first ``depth`` documents of runs given as arrays, one run at a time.

    Args:
        ranked: (system name, doc codes, scores) per run: int arrays (queries, documents) of indices into
            ``doc_ids``, and the scores (same shape), one row per query of ``query_ids``. A row may come in
            any order; one already in rank order is not sorted. Use ``-1`` codes with ``-inf`` scores to pad a
            shorter list. Runs are read one after another, so a generator holds one in memory at a time.
        query_ids: the query of each row.
        doc_ids: the doc id of each code (a pyarrow string array).
        depth: the documents kept per ranking.
        ties: order of equal scores, as ``evaluate``'s (``average``: trec_eval's order).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    ties = ties if ties in ("docid_desc", "docid_asc", "input") else "docid_desc"
    n_docs = len(doc_ids)
    doc_order = np.empty(n_docs + 1, dtype=np.int64)  # the last entry: the padding code -1
    doc_order[np.asarray(pc.sort_indices(doc_ids))] = np.arange(n_docs)
    doc_order[-1] = -1
    names, kept = [], []
    code_type = np.int32 if n_docs < 2 ** 31 else np.int64
    for name, docs, scores in ranked:
        docs, scores = np.asarray(docs), np.asarray(scores)
        if docs.shape != scores.shape or docs.ndim != 2 or docs.shape[0] != len(query_ids):
            raise InputError(f"run {name!r}: doc codes and scores must both be (queries, documents) arrays with "
                             f"{len(query_ids)} rows; got {docs.shape} and {scores.shape}.")
        names.append(str(name))
        kept.append(_first_in_order(docs, scores, depth, doc_order, ties).astype(code_type))
    n_queries = len(query_ids)
    query_of_pair, doc_of_pair, codes = _pair_codes(kept, n_queries, depth)
    return TopLists(tuple(names), _pairs_table(tuple(map(str, query_ids)), query_of_pair,
                                               doc_ids.take(pa.array(doc_of_pair))), _frozen(codes))


def _pair_codes(kept: list[np.ndarray], n_queries: int, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query and doc code of every distinct pair, ordered by query then doc code; the pair of every kept rank,
    (systems, queries, depth), -1 where none) of each run's kept doc codes (queries, depth).

    One sort per query of its systems x depth entries, each entry's doc code and position packed into one
    int64 (a row of 10,000 sorts in cache; one sort of all 50M entries would not), a block of queries at a time
    (the block's arrays about 64 MiB, whatever the number of queries)."""
    n_systems = len(kept)
    width = n_systems * depth
    if n_systems == 0 or n_queries == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.full((n_systems, n_queries, depth), -1, np.int64)
    bits = max(1, width.bit_length())
    mask = (1 << bits) - 1
    empty = np.iinfo(np.int64).max
    codes = np.full((n_systems, n_queries, depth), -1, dtype=np.int32 if n_systems * n_queries * depth < 2 ** 31
                    else np.int64)
    queries, docs_of_pairs, first = [], [], 0
    step = max(1, (64 * 2 ** 20) // (8 * width))  # queries per block: each block's arrays stay near 64 MiB
    for start in range(0, n_queries, step):
        stop = min(n_queries, start + step)
        packed = np.empty((stop - start, width), dtype=np.int64)
        for s, docs in enumerate(kept):  # (queries, depth) into the row segment of system s
            block = packed[:, s * depth:(s + 1) * depth]
            part = docs[start:stop]
            block[:] = (part.astype(np.int64) << bits) | np.arange(s * depth, (s + 1) * depth, dtype=np.int64)
            block[part < 0] = empty
        packed.sort(axis=1)
        valid = packed != empty
        doc = packed >> bits
        new = valid.copy()
        new[:, 1:] &= doc[:, 1:] != doc[:, :-1]
        pair = np.cumsum(new, axis=None).reshape(new.shape) - 1 + first
        row, col = np.nonzero(valid)
        position = packed[row, col] & mask
        codes[position // depth, start + row, position % depth] = pair[row, col]
        queries.append(np.repeat(np.arange(start, stop, dtype=np.int64), new.sum(axis=1)))
        docs_of_pairs.append(doc[new])
        first += int(new.sum())
    return np.concatenate(queries), np.concatenate(docs_of_pairs), codes


class Judged:
    """The qrels' rows grouped by query, for the kernels: each query's grades (R, the ideal ranking) and the
    grade of every pair of a :class:`TopLists` (its hits), matched once. ``rows``: a mask of the qrels rows the
    metric reads (all when None; the rows of grade 0 are left out of R and the ideal ranking alike)."""

    def __init__(self, tops: TopLists, table: RowTable, row_code: np.ndarray, grades: np.ndarray,
                 rows: np.ndarray | None = None) -> None:
        self.tops, self.table, self.grades = tops, table, grades
        chosen = np.arange(table.n_rows) if rows is None else np.flatnonzero(rows)  # the rows the kernels read
        self.order = chosen[np.argsort(row_code[chosen], kind="stable")]          # query by query (qrels order)
        counts = np.bincount(row_code[chosen], minlength=len(table.query_ids))
        self.starts = np.r_[0, np.cumsum(counts)].astype(np.int64)
        position = {q: i for i, q in enumerate(tops.query_ids)}
        self.in_tops = np.array([position.get(q, -1) for q in table.query_ids], dtype=np.int64)

    def columns(self, system: int, queries: np.ndarray, depth: int, *, unjudged: np.ndarray | None = None,
                removed_rows: np.ndarray | None = None) -> Columns:
        """The kernels' :class:`Columns` of system ``system``'s first ``depth`` documents over the qrels queries
        ``queries`` (indices into the table's queries, in that order); ``unjudged``: pairs taken as unjudged and
        ``removed_rows``: qrels rows left out (one run's own relevant documents, for leave-one-run-out)."""
        n = len(queries)
        where = self.in_tops[queries]
        lists = np.full((n, depth), -1, dtype=np.int64)
        lists[where >= 0] = self.tops.codes[system][where[where >= 0], :depth]
        valid = lists >= 0
        lengths = valid.sum(axis=1)
        row, rank = np.nonzero(valid)
        scores = -(rank + 1).astype(np.float64)
        grade = self.grades[lists[valid]]
        if unjudged is not None:
            grade = np.where(unjudged[lists[valid]], np.nan, grade)
        judged = ~np.isnan(grade)
        hits, zeros = np.flatnonzero(judged & (grade != 0)), np.flatnonzero(judged & (grade == 0))
        width = self.starts[queries + 1] - self.starts[queries]
        first = np.repeat(self.starts[queries] - np.r_[0, np.cumsum(width)[:-1]], width)
        rows = self.order[first + np.arange(int(width.sum()))]
        keep = np.ones(len(rows), dtype=bool) if removed_rows is None else ~np.isin(rows, removed_rows)
        judged_counts = np.bincount(np.repeat(np.arange(n), width)[keep], minlength=n)
        docs = self.tops.pairs.docs
        pair_of = lists[valid]

        def doc_ids(index: np.ndarray) -> list[str]:
            found: list[str] = docs.take(pair_of[np.asarray(index, dtype=np.int64)]).to_pylist()
            return found

        return Columns(
            query_ids=[self.table.query_ids[i] for i in queries.tolist()],
            offsets=np.r_[0, np.cumsum(lengths)].astype(np.int64), scores=scores,
            judged_offsets=np.r_[0, np.cumsum(judged_counts)].astype(np.int64), judged=self.table.values[rows[keep]],
            hit_query=row[hits], hit_score=scores[hits], hit_grade=grade[hits], doc_ids=doc_ids,
            hit_doc_ids=lambda h: doc_ids(hits[h]), zero_query=row[zeros], zero_score=scores[zeros],
            zero_doc_ids=lambda z: doc_ids(zeros[z]))
