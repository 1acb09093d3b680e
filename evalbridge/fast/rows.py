"""Columnar rows (:class:`~evalbridge.model.columnar.RowTable`): built from arrays, checked, and paired into :class:`Columns`.

Every columnar door builds its table here: the TREC reader (:mod:`evalbridge.io._arrow_trec`),
tables and table files (:mod:`evalbridge.io.tables`), large RAG logs (:mod:`evalbridge.io._rag_columns`); and
:func:`pair` lays out a qrels table and a run table for the kernels, as :func:`.from_mappings` does
for ``dict`` rows (same queries, same rows, same order).

The speed tricks, all vectorised (no Python code per row; per query only where said):

* **Blocks.** Query ids are compared only where they change: a table is cut into blocks of
  adjacent rows of one query, and each block's id gets a code through Arrow's hash table
  (``dictionary_encode`` over the blocks, never over the rows).
* **Hashes from the strings alone.** Each row gets a 64-bit hash: the hash of its query id's bytes,
  then every 8-byte word of its doc id folded in. Nothing in it depends on another table, so two
  tables read apart (``read_qrels``, then ``read_run``) pair through their hashes; and hashes are
  the same in every process (a pickled table pairs with one read later).
* **Duplicates by sorting each query's hashes side by side** (:func:`shared_hash`): rows of a grid,
  one query a row, when each query is one block, by the top 32 bits of the hashes first (0.04 s
  for 7,000 queries of 1,000 rows; one sort of all 7M 64-bit hashes takes 0.13 s).
  A shared hash is a duplicate (query, doc) or a collision: a reader either declines (the TREC
  fast path: the strict reader then reports the duplicate with its line numbers) or confirms it on
  the strings (:func:`first_duplicate`).
* **Matching** (:func:`pair`): a bit table indexed by the top bits of the qrels' hashes lets through
  a few percent of the run's rows; those are looked up among the qrels' sorted hashes, and every
  equal hash is confirmed on the query and the doc id strings, so a collision costs time, never a
  wrong match.
* **Slices.** Hashing, the duplicate check and the matching go through the rows a slice of 64K at a
  time: what a pass touches stays in the cache. Hashing and the duplicate check share their slices
  between threads (:func:`evalbridge.common.parallel.each`): on 2 idle cores 7M doc ids hash in 38 ms instead
  of 62, and the duplicate check takes 29 ms instead of 43.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from operator import countOf
from typing import Any

import numpy as np

from ..common.parallel import each
from ..model.columnar import RowTable, per_row
from ..model.data import rows_of
from .columns import EXACT_LIMIT, Columns
from .placing import stable_order

__all__ = ["build_table", "table_from_blocks", "table_from_mapping", "shared_hash", "duplicate_pairs", "first_duplicate",
           "pair", "columns_of", "string_offsets", "hash_strings", "EXACT_LIMIT"]

#: Masks keeping the first k bytes of a little-endian word, k = 0..8.
_KEEP = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Odd multipliers of the hash (each a bijection of the 64-bit words), and the seed of every query hash.
_SPREAD, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)
_SEED = np.uint64(0x243F6A8885A308D3)


# ---------------------------------------------------------------- strings as numbers

def string_offsets(array: Any) -> np.ndarray:
    """The offsets (``len + 1``) of a pyarrow string / binary array: a numpy view of its buffer."""
    import pyarrow as pa

    wide = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    return np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32, count=len(array) + 1,
                         offset=array.offset * (8 if wide else 4))


#: Rows are hashed, checked and matched this many at a time: their bytes and hashes stay in the cache
#: between the passes (hashing 7M ids costs 0.57 s at once, 0.1 s in slices).
_SLICE = 1 << 16


def _fold(h: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> None:
    """Fold every 8-byte word of each string into ``h`` (in place, one entry per string); the strings
    are ``data[offsets[i]:offsets[i + 1]]``."""
    base, end = int(offsets[0]), int(offsets[-1])
    starts, lengths = offsets[:-1] - base, np.diff(offsets)
    longest = int(lengths.max()) if len(lengths) else 0
    if longest == 0:  # empty strings only: each folds in its one word, empty, as beside longer strings
        h *= _MIX
        return
    padded = np.zeros(end - base + longest + 8, dtype=np.uint8)  # every word read below lies inside
    padded[:end - base] = data[base:end]
    words = np.ndarray(shape=(end - base + longest,), dtype=np.uint64, buffer=padded, strides=(1,))
    word = words[starts]  # one pass for ids of up to 8 bytes
    word &= _KEEP[np.minimum(lengths, 8)]  # the bytes of this string only
    h ^= word
    h *= _MIX
    for at in range(8, longest, 8):  # the next words, of the strings that have them only: a string's
        rows = np.flatnonzero(lengths > at)  # hash must not depend on the other strings of the array
        word = words[starts[rows] + at]
        word &= _KEEP[np.minimum(lengths[rows] - at, 8)]
        h[rows] = (h[rows] ^ word) * _MIX


def hash_strings(h: np.ndarray, array: Any) -> np.ndarray:
    """Fold the bytes of every string of ``array`` (a pyarrow string array, chunked or not) into
    ``h``, one entry per string, in place, a slice of strings at a time; returns ``h``."""
    import pyarrow as pa

    jobs = []
    at = 0
    for chunk in array.chunks if isinstance(array, pa.ChunkedArray) else [array]:
        data = chunk.buffers()[2]
        data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        offsets = string_offsets(chunk)
        jobs += [(h[at + start:at + min(start + _SLICE, len(chunk))], offsets[start:start + _SLICE + 1], data)
                 for start in range(0, len(chunk), _SLICE)]
        at += len(chunk)

    each(_fold, jobs)
    return h


def _query_seeds(ids: Any) -> np.ndarray:
    """The hash of each query id (a pyarrow string array), spread over all 64 bits."""
    h = hash_strings(np.full(len(ids), _SEED, dtype=np.uint64), ids)
    h ^= h >> np.uint64(29)
    h *= _SPREAD
    h ^= h >> np.uint64(32)
    return h


def _read_only(*arrays: np.ndarray) -> None:
    for array in arrays:
        array.flags.writeable = False


# ---------------------------------------------------------------- building tables

def table_from_blocks(query_ids: Sequence[str], query_array: Any, block_start: np.ndarray, block_code: np.ndarray,
                      docs: Any, values: np.ndarray, integral: np.ndarray | bool, *, query_kind: str = "str",
                      doc_kind: str = "str") -> RowTable:
    """A :class:`RowTable` from blocks already found.

    Args:
        query_ids: every query, in order of first appearance.
        query_array: the same ids as a pyarrow string array (hashed).
        block_start, block_code: the first row and the query code of each block.
        docs: the doc ids (pyarrow string array; chunks are combined).
        values: float64 values (finite, below 2**53 in magnitude: the caller checks).
        integral: per row (or for all rows): the value is an int.
    """
    import pyarrow as pa

    if isinstance(docs, pa.ChunkedArray):  # one array: take() on 244 chunks costs 4x more (8 ms for 30K of 7M)
        docs = docs.combine_chunks() if docs.num_chunks != 1 else docs.chunk(0)
    n = len(values)
    values = np.ascontiguousarray(values, dtype=np.float64)
    block_start = np.ascontiguousarray(block_start, dtype=np.int64)
    block_code = np.ascontiguousarray(block_code, dtype=np.int64)
    lengths = np.diff(np.r_[block_start, n])
    hashes = per_row(_query_seeds(query_array)[block_code], lengths, n)  # (a new array: folded in place below)
    hash_strings(hashes, docs)
    flags = np.broadcast_to(np.bool_(integral), (n,)) if np.ndim(integral) == 0 else np.asarray(integral, dtype=bool)
    _read_only(values, block_start, block_code, hashes, flags)
    return RowTable(tuple(query_ids), block_start, block_code, docs, values, flags, hashes, query_kind, doc_kind)


def _codes(queries: Any) -> tuple[Any, np.ndarray, np.ndarray]:
    """(distinct ids in order of first appearance as a pyarrow array, block starts, block codes) of one
    query id per row: a string array, or a dictionary array (e.g. read so by Arrow's CSV reader, or
    a pandas categorical), chunked or not."""
    import pyarrow as pa
    import pyarrow.compute as pc

    chunked = isinstance(queries, pa.ChunkedArray)
    if pa.types.is_dictionary(queries.type):
        if chunked:
            queries = pa.chunked_array(queries.chunks, queries.type).unify_dictionaries() \
                if queries.num_chunks > 1 else queries
            dictionary = queries.chunk(0).dictionary if queries.num_chunks else pa.array([], pa.string())
            codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in queries.chunks]) \
                if queries.num_chunks else np.zeros(0, np.int32)
        else:
            dictionary, codes = queries.dictionary, queries.indices.to_numpy(zero_copy_only=False)
        starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1].astype(np.int64) if len(codes) else \
            np.zeros(0, np.int64)
        raw = codes[starts].astype(np.int64)
        used, first = np.unique(raw, return_index=True)
        in_order = used[np.argsort(first)]  # dictionary codes in order of first appearance
        recode = np.zeros(len(dictionary), dtype=np.int64)
        recode[in_order] = np.arange(len(in_order))
        return dictionary.take(pa.array(in_order)), starts, recode[raw]
    if chunked:
        queries = queries.combine_chunks() if queries.num_chunks != 1 else queries.chunk(0)
    n = len(queries)
    if n == 0:
        return pa.array([], pa.string()), np.zeros(0, np.int64), np.zeros(0, np.int64)
    change = pc.not_equal(queries.slice(1), queries.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.r_[0, np.flatnonzero(change) + 1].astype(np.int64)
    encoded = queries.take(starts).dictionary_encode()  # codes in order of first appearance
    return encoded.dictionary, starts, encoded.indices.to_numpy().astype(np.int64)


def build_table(queries: Any, docs: Any, values: np.ndarray, integral: np.ndarray | bool, *,
                query_kind: str = "str", doc_kind: str = "str") -> RowTable:
    """A :class:`RowTable` from one query id per row, the doc ids and the values.

    Args:
        queries: a pyarrow string array, or a dictionary array of strings (chunked or not).
        docs, values, integral: as :func:`table_from_blocks`.

    Blocks of equal adjacent query ids are found by comparing neighbours (their dictionary codes
    when there are some), and coded by Arrow's hash table over the blocks only. Duplicates are not
    checked here: see :func:`shared_hash`.
    """
    distinct, starts, codes = _codes(queries)
    return table_from_blocks(distinct.to_pylist(), distinct, starts, codes, docs, values, integral,
                             query_kind=query_kind, doc_kind=doc_kind)


def table_from_mapping(rows: Mapping[str, Mapping[str, Any]], *, query_kind: str = "str",
                       doc_kind: str = "str") -> RowTable:
    """A :class:`RowTable` of ``dict`` rows (validated ones: str ids, finite numbers), for pairing them
    with a columnar table. Values beyond 2**53 raise ``OverflowError`` (the reference takes those).

    Example:
        >>> t = table_from_mapping({"q1": {"a": 2, "b": 0.5}, "q2": {}})
        >>> t.query_ids, t.docs.to_pylist(), t.rows()
        (('q1', 'q2'), ['a', 'b'], {'q1': {'a': 2, 'b': 0.5}, 'q2': {}})
    """
    import pyarrow as pa

    query_ids = list(rows)
    lengths = np.fromiter(map(len, rows.values()), dtype=np.int64, count=len(query_ids))
    n = int(lengths.sum())
    docs = pa.array(list(chain.from_iterable(rows.values())), type=pa.string())
    numbers = list(chain.from_iterable(map(Mapping.values, rows.values())))
    values = np.array(numbers, dtype=np.float64) if n else np.zeros(0, dtype=np.float64)
    if n and not float(np.max(np.abs(values))) < EXACT_LIMIT:
        raise OverflowError("values beyond 2**53 are compared exactly by the reference")
    integral = np.fromiter(map(int.__instancecheck__, numbers), dtype=bool, count=n) \
        if countOf(map(type, numbers), float) != n else False
    keep = lengths > 0
    block_start = (np.cumsum(lengths) - lengths)[keep]
    return table_from_blocks(query_ids, pa.array(query_ids, type=pa.string()), block_start,
                             np.flatnonzero(keep), docs, values, integral, query_kind=query_kind, doc_kind=doc_kind)


# ---------------------------------------------------------------- duplicates

def shared_hash(table: RowTable) -> bool:
    """True when two rows of one query share a hash: a duplicate (query, doc), or a collision.

    The rows of each query are put side by side first when a query is in several blocks (a table
    in no order: one stable radix pass over the query codes, :func:`.stable_order`). When the queries
    then have about the same number of rows, each is sorted on its own, as the rows of a grid (n log L
    instead of n log n), a few thousand rows at a time, by the top 32 bits of the hashes: rows of
    32-bit keys sort 3.5 times faster than of 64-bit ones, and a step whose keys tie somewhere (once
    in ten thousand queries of 1,000 rows) is sorted again by the whole hashes (0.04 s instead of
    0.14 s for 7,000 blocks of 1,000; 7M rows in no order: 0.2 s instead of 0.44 s). Otherwise all
    hashes are sorted together, and rows of two queries may share a hash too (a collision: reported
    as well, on the safe side)."""
    lengths = table.block_lengths
    hashes = table.hashes
    if len(lengths) == 0:
        return False
    if len(table.query_ids) < len(lengths):  # a query in several blocks: its rows side by side
        codes = table.codes()
        hashes = hashes[stable_order(codes, len(table.query_ids))]
        lengths = np.bincount(codes, minlength=len(table.query_ids))
        lengths = lengths[lengths > 0]
    width = int(lengths.max())
    if len(lengths) * width > 1.25 * table.n_rows:
        ordered = np.sort(hashes)
        return bool(np.any(ordered[1:] == ordered[:-1]))
    per = max(1, _SLICE // width)  # blocks per step
    starts = np.cumsum(lengths) - lengths
    steps = [(hashes[int(starts[first]):int(starts[first]) + int(lengths[first:first + per].sum())],
              lengths[first:first + per], width) for first in range(0, len(lengths), per)]
    return any(each(_tie_in_step, steps))


def _tie_in_step(part: np.ndarray, size: np.ndarray, width: int) -> bool:
    """True when two hashes of one block of ``part`` are equal (blocks of ``size`` rows): by their top 32
    bits first, then, where those tie, by the whole hashes."""
    return _tie_in_rows((part >> np.uint64(32)).astype(np.uint32), size, width, np.uint32) and \
        _tie_in_rows(part, size, width, np.uint64)


def _tie_in_rows(keys: np.ndarray, size: np.ndarray, width: int, dtype: type) -> bool:
    """True when two keys of one block are equal: ``keys`` holds blocks of ``size`` rows, sorted side by
    side as the rows of a grid ``width`` wide (shorter blocks padded with distinct keys)."""
    grid: np.ndarray = np.empty((len(size), width), dtype=dtype)
    if np.all(size == width):
        grid[:] = keys.reshape(grid.shape)
    else:  # distinct padding: equal to a key only by chance (then a tie is reported: the caller checks again)
        grid[:] = (np.iinfo(dtype).max - np.arange(grid.size, dtype=np.uint64)).astype(dtype).reshape(grid.shape)
        grid[np.arange(width) < size[:, None]] = keys
    grid.sort(axis=1)
    return bool(np.any(grid[:, 1:] == grid[:, :-1]))


def _same(a: RowTable, a_rows: np.ndarray, b: RowTable, b_rows: np.ndarray, b_to_a: np.ndarray | None) -> np.ndarray:
    """Mask: row ``a_rows[i]`` of ``a`` and row ``b_rows[i]`` of ``b`` hold the same query and the same doc id
    (``b_to_a`` maps ``b``'s query codes to ``a``'s; None when ``a`` is ``b``)."""
    import pyarrow.compute as pc

    b_codes = b.codes(b_rows)
    same: np.ndarray = a.codes(a_rows) == (b_codes if b_to_a is None else b_to_a[b_codes])
    if len(a_rows):
        same &= pc.equal(a.docs.take(a_rows), b.docs.take(b_rows)).to_numpy(zero_copy_only=False)
    return same


def duplicate_pairs(table: RowTable) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows holding the same (query, doc): ``(first rows, repeat rows)``, int64, the first
    row of each pair before its repeat (empty when there is none). Rows sharing a hash are told apart
    on the strings, so a collision is never reported."""
    empty = np.zeros(0, dtype=np.int64)
    if not shared_hash(table):
        return empty, empty
    order = np.argsort(table.hashes, kind="stable")
    ordered = table.hashes[order]
    equal = np.flatnonzero(ordered[1:] == ordered[:-1])
    starts = equal[np.r_[True, equal[1:] != equal[:-1] + 1]]
    first: list[int] = []
    second: list[int] = []
    for start in starts.tolist():  # runs of equal hashes: rare, enumerated in Python
        stop = start + 1
        while stop < len(ordered) and ordered[stop] == ordered[start]:
            stop += 1
        members = sorted(order[start:stop].tolist())
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                first.append(a)
                second.append(b)
    a_rows, b_rows = np.array(first, dtype=np.int64), np.array(second, dtype=np.int64)
    found = np.flatnonzero(_same(table, a_rows, table, b_rows, None))
    return a_rows[found], b_rows[found]


def first_duplicate(table: RowTable) -> tuple[int, int] | None:
    """``(first row, repeat row)`` of the first (query, doc) given twice, in row order (the earliest
    repeat, with the first row of its pair), or None (see :func:`duplicate_pairs`)."""
    first, repeat_rows = duplicate_pairs(table)
    if len(repeat_rows) == 0:
        return None
    repeat_row = int(repeat_rows.min())
    return int(first[repeat_rows == repeat_row].min()), repeat_row


# ---------------------------------------------------------------- pairing

def _group(table: RowTable, group_of_code: np.ndarray, n_groups: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Rows whose query is evaluated, grouped by ``group_of_code[code]`` (-1: left out), in row order
    within a group (None: all rows, as they are), and the group offsets. Whole blocks are moved."""
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    if len(table.block_start) > table.n_rows // 4:  # blocks of a row or two (rows in no order): move rows
        row_group = group_of_code[table.codes()]
        rows = np.flatnonzero(row_group >= 0)
        kept = row_group[rows]
        np.cumsum(np.bincount(kept, minlength=n_groups), out=offsets[1:])
        return rows[stable_order(kept, n_groups)], offsets
    block_group = group_of_code[table.block_code]
    lengths = table.block_lengths
    keep = block_group >= 0
    kept = block_group[keep]
    np.cumsum(np.bincount(kept, weights=lengths[keep], minlength=n_groups).astype(np.int64), out=offsets[1:])
    if np.all(kept[1:] > kept[:-1]):  # one block per query, in group order: no move
        if keep.all():
            return None, offsets
        order = np.flatnonzero(keep)
    else:
        order = np.flatnonzero(keep)[stable_order(kept, n_groups)]
    size, start = lengths[order], table.block_start[order]
    rows = np.repeat(start - np.r_[0, np.cumsum(size)[:-1]], size) + np.arange(int(size.sum()), dtype=np.int64)
    return rows, offsets


#: qrels table -> its sorted hashes and their bit table (a qrels table is paired with every run of a comparison)
_SORTED: weakref.WeakKeyDictionary[RowTable, tuple[np.ndarray, np.ndarray, np.ndarray, np.uint64, bool]] = \
    weakref.WeakKeyDictionary()


def _sorted_hashes(table: RowTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.uint64, bool]:
    """(order, hashes in order, bit table of their top bits, shift, whether two rows share a hash) of a
    qrels table, kept while it lives."""
    cache = _SORTED.get(table)
    if cache is None:
        order = np.argsort(table.hashes)
        ordered = table.hashes[order]
        bits = min(24, max(16, len(ordered).bit_length() + 6))
        shift = np.uint64(64 - bits)
        bitmap = np.zeros(1 << bits, dtype=bool)
        bitmap[(ordered >> shift).view(np.int64)] = True
        shared = bool(np.any(ordered[1:] == ordered[:-1]))
        cache = _SORTED[table] = (order, ordered, bitmap, shift, shared)
    return cache


def _candidates(hashes: np.ndarray, at: int, bitmap: np.ndarray, shift: np.uint64,
                ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, from ``at``, whose hash's top bits are in ``bitmap``; where each would be among the
    qrels' ``ordered`` hashes) of one slice of a run's ``hashes``."""
    rows = np.flatnonzero(bitmap[(hashes >> shift).view(np.int64)])
    return rows + at, np.searchsorted(ordered, hashes[rows], side="left")


def _matches(qrels: RowTable, run: RowTable, run_to_qrels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(qrels rows, run rows)`` holding the same (query, doc)."""
    order, ordered, bitmap, shift, shared = _sorted_hashes(qrels)
    if len(ordered) == 0 or run.n_rows == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    found = each(_candidates, [(run.hashes[at:at + _SLICE], at, bitmap, shift, ordered)
                               for at in range(0, run.n_rows, _SLICE)])  # a slice at a time: no 7M-row temporaries
    r_rows, low = (np.concatenate(parts) for parts in zip(*found))
    value = run.hashes[r_rows]
    if shared:  # equal hashes in the qrels (collisions across queries): every one is a candidate
        width = np.searchsorted(ordered, value, side="right") - low
        r_rows = np.repeat(r_rows, width)
        at = np.repeat(low - np.r_[0, np.cumsum(width)[:-1]], width) + np.arange(int(width.sum()), dtype=np.int64)
    else:  # (one search: a hash is there once or not at all)
        low = np.minimum(low, len(ordered) - 1)
        found = ordered[low] == value
        r_rows, at = r_rows[found], low[found]
    q_rows = order[at]
    same = _same(qrels, q_rows, run, r_rows, run_to_qrels)
    return q_rows[same], r_rows[same]


def pair(qrels: RowTable, run: RowTable) -> Columns:
    """The engine's :class:`Columns` of a qrels table and a run table: what :func:`.from_mappings` gives
    for their ``dict`` rows (the queries of the qrels that the run has, in qrels order; each
    query's rows in row order; the hits and the docs judged 0 in qrels order), with no Python object
    per row.

    Example:
        >>> from evalbridge.fast.rows import table_from_mapping as t
        >>> c = pair(t({"q1": {"a": 2, "b": 0}, "q2": {"c": 1}}), t({"q1": {"a": 0.5, "x": 0.9}}))
        >>> c.query_ids, c.scores.tolist(), c.hit_grade.tolist()
        (['q1'], [0.5, 0.9], [2.0])
    """
    position = {qid: i for i, qid in enumerate(qrels.query_ids)}
    run_to_qrels = np.fromiter(map(position.get, run.query_ids, repeat(-1)), dtype=np.int64,
                               count=len(run.query_ids))
    n_judged = len(qrels.query_ids)
    in_run = np.zeros(n_judged, dtype=bool)
    in_run[run_to_qrels[run_to_qrels >= 0]] = True
    evaluated = np.flatnonzero(in_run)
    index = np.full(n_judged + 1, -1, dtype=np.int64)  # the last entry: for -1 (not in the qrels)
    index[evaluated] = np.arange(len(evaluated))
    query_ids = [qrels.query_ids[i] for i in evaluated.tolist()]
    rows, offsets = _group(run, index[run_to_qrels], len(evaluated))
    judged_rows, judged_offsets = _group(qrels, index[:-1], len(evaluated))
    q_rows, r_rows = _matches(qrels, run, run_to_qrels)
    match_query = index[run_to_qrels[run.codes(r_rows)]]
    # Matches in qrels order, as from_mappings gives them: by query, then by qrels row (the rows of a
    # query keep their row order in the columns). They come in run order: sorted unless already so.
    if len(q_rows) > 1 and not (np.all(match_query[1:] >= match_query[:-1]) and
                                np.all((q_rows[1:] > q_rows[:-1]) | (match_query[1:] != match_query[:-1]))):
        in_order = np.lexsort((q_rows, match_query))
        q_rows, r_rows, match_query = q_rows[in_order], r_rows[in_order], match_query[in_order]
    grade = qrels.values[q_rows]
    nonzero = grade != 0
    zero_rows, zero_query = r_rows[~nonzero], match_query[~nonzero]  # retrieved and judged 0: hits for the
    r_rows, grade, hit_query = r_rows[nonzero], grade[nonzero], match_query[nonzero]  # metrics that read judgements
    docs = run.docs

    def doc_ids(selected: np.ndarray) -> list[str]:
        ids: list[str] = docs.take(selected if rows is None else rows[selected]).to_pylist()  # pyarrow: untyped
        return ids

    def pool_rows() -> np.ndarray:
        """Rows of these columns whose doc is judged for some query of the qrels (BEIR's pool, for ``Hole``)."""
        import pyarrow.compute as pc

        ranked = docs if rows is None else docs.take(rows)
        return np.flatnonzero(pc.is_in(ranked, value_set=pc.unique(qrels.docs)).to_numpy(zero_copy_only=False))

    return Columns(
        query_ids=query_ids, offsets=offsets, scores=run.values if rows is None else run.values[rows],
        judged_offsets=judged_offsets,
        judged=qrels.values if judged_rows is None else qrels.values[judged_rows], hit_query=hit_query,
        hit_score=run.values[r_rows], hit_grade=grade,
        doc_ids=doc_ids, hit_doc_ids=lambda hits: docs.take(r_rows[hits]).to_pylist(),
        zero_query=zero_query, zero_score=run.values[zero_rows],
        zero_doc_ids=lambda z: docs.take(zero_rows[z]).to_pylist(), pool_rows=pool_rows)


def columns_of(qrels: Any, run: Any) -> Columns:
    """The :class:`Columns` of a ``Qrels`` and a ``Run``: paired tables when either is columnar (the
    other's ``dict`` rows become a table), :func:`.from_mappings` when both hold ``dict`` rows.

    Raises:
        OverflowError: a value float64 cannot hold (the caller leaves those to the reference).
    """
    from .columns import from_mappings

    tables = (qrels.columnar, run.columnar)
    if tables == (None, None):
        return from_mappings(qrels, run)
    q, r = (t if t is not None else table_from_mapping(rows_of(x)) for t, x in zip(tables, (qrels, run)))
    return pair(q, r)
