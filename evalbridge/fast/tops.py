"""Many runs' first documents as codes into one table of (query, doc) pairs: what pooling and the diagnostics read.

A :class:`TopLists` holds, for every system and query, the first ``depth`` documents of its ranking as row
numbers of one :class:`~evalbridge.columnar.RowTable` of distinct (query, doc) pairs, :attr:`TopLists.pairs`.
Everything a test collection's diagnostics ask of many runs is then a dense array operation over those
codes, with no Python object per document and no search:

* how many systems hold a pair in their first k: ``np.bincount`` of the codes (:meth:`TopLists.holders`);
  the pool at depth k is the pairs held at least once, a pair "only this run contributed" is held once;
* the grade of every ranked document: the qrels matched once to the pairs table (the hash pairing of
  :mod:`.rows`), then ``grades[codes]`` (:func:`pair_grades`);
* one system's first documents as a columnar :class:`~evalbridge.model.Run` that ``evaluate`` reads
  (:meth:`TopLists.run`), its scores minus the rank, so every metric with a cut-off at most ``depth`` is
  exactly the metric of the full run.

Two builders: :func:`from_runs` ranks mappings (``Run``, dicts) with :func:`evalbridge.ranking.rank`, one
query at a time; :func:`from_ranked` reads runs given as arrays (one row of doc codes and one of scores per
query, as a generator or a columnar store has them) one run at a time and keeps only the first ``depth`` of
each: a row already in rank order (the usual case) is sliced, not sorted.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..columnar import RowTable
from ..errors import InputError
from .rows import pair, table_from_blocks, table_from_mapping

if TYPE_CHECKING:
    import pyarrow as pa

    from ..model import Qrels, Run

__all__ = ["TopLists", "from_runs", "from_ranked", "pair_grades", "qrels_table"]


@dataclass(frozen=True, eq=False)
class TopLists(Mapping[str, "Run"]):
    """The first documents of several systems' rankings over the same queries; a mapping system name ->
    its first documents as a columnar ``Run`` (:meth:`run`), so any verb that takes runs takes it.

    Attributes:
        systems: the system names, in the order of :attr:`codes`' first axis.
        pairs: every (query, doc) some system ranks within :attr:`depth`, once; its ``query_ids`` are the
            queries (second axis of :attr:`codes`), its values 0.
        codes: int64 (systems, queries, depth): the row of :attr:`pairs` at each rank, ``-1`` past the end
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
        from ..model import Run

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
    from ..model import rows_of

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
    :func:`evalbridge.ranking.rank` ranks them (``ties="average"`` orders no tie group: the lists then follow
    trec_eval's order, ``docid_desc``); the queries are those of any run, in order of first appearance.

    Example:
        >>> t = from_runs({"a": {"q1": {"x": 0.9, "y": 0.5}}, "b": {"q1": {"y": 0.7, "z": 0.1}}}, 2)
        >>> t.pairs.docs.to_pylist(), t.codes.tolist(), t.holders().tolist()
        (['x', 'y', 'z'], [[[0, 1]], [[1, 2]]], [1, 2, 1])
    """
    import pyarrow as pa

    from ..ranking import rank

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
    top = docs[:, :depth].copy()
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
        top[r] = docs[r][np.lexsort((key, -scores[r]))][:depth]
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
    for name, docs, scores in ranked:
        docs, scores = np.asarray(docs), np.asarray(scores)
        if docs.shape != scores.shape or docs.ndim != 2 or docs.shape[0] != len(query_ids):
            raise InputError(f"run {name!r}: doc codes and scores must both be (queries, documents) arrays with "
                             f"{len(query_ids)} rows; got {docs.shape} and {scores.shape}.")
        names.append(str(name))
        kept.append(_first_in_order(docs, scores, depth, doc_order, ties).astype(np.int64))
    n_queries = len(query_ids)
    keys = np.stack(kept) if kept else np.zeros((0, n_queries, depth), np.int64)
    valid = keys >= 0
    flat = np.where(valid, keys + np.arange(n_queries, dtype=np.int64)[None, :, None] * (n_docs + 1), -1)
    unique, inverse = np.unique(flat[valid], return_inverse=True)
    codes = np.full(keys.shape, -1, dtype=np.int64)
    codes[valid] = inverse
    docs_of_pair = doc_ids.take(pa.array(unique % (n_docs + 1)))
    return TopLists(tuple(names), _pairs_table(tuple(map(str, query_ids)), unique // (n_docs + 1), docs_of_pair),
                    _frozen(codes))
