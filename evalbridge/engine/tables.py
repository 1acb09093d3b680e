"""Two Arrow tables (qrels rows and run rows) laid out as :class:`~evalbridge.engine.Columns`.

:func:`columns_from_arrow` gives exactly what :func:`~evalbridge.engine.from_mappings` gives for the
equivalent dicts of dicts (every row added in table order): the evaluated queries in the order they
first appear in the qrels, each query's run rows in table order, its qrels rows in table order, the
hits (retrieved documents with a non-zero grade) in qrels order, the retrieved documents judged 0
(``zero_*``, for the metrics that read judgements) in qrels order, and the pooled run rows
(``pool_rows``: docs judged for some query of the qrels table, for ``Hole``). It reads any table, whatever the
row order (rows of one query need not be adjacent): DataFrames converted to Arrow, the buckets of
:mod:`evalbridge.spark`, Parquet files.

Everything is vectorised; nothing runs in Python per row or per query:

* query ids are compared as *blocks* of equal adjacent ids (the rows of a query usually are
  adjacent), and each block gets a code through Arrow's hash tables (``dictionary_encode``,
  ``index_in``) over the blocks, never over the rows;
* rows are grouped by query by moving whole blocks (a stable sort of the blocks, not of the rows);
* each row gets a 64-bit hash of (its query code, every byte of its doc id). Duplicate
  (query, doc) rows are found by sorting the hashes; the run's rows are matched to the judged
  ones through a bit table of the qrels' hashes and a binary search. Every equal hash is
  confirmed on the query codes and the doc id strings, so a hash collision costs time, never
  a wrong match.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from .columns import Columns

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["TablePair", "TableProblem", "pair_from_arrow", "columns_from_arrow"]

#: Odd multipliers of the hash (each a bijection of the 64-bit words).
_SPREAD, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)
#: Masks keeping the first k bytes of a little-endian word, k = 0..8.
_KEEP = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


class TableProblem(InputError):
    """Bad rows in a qrels or run table.

    Attributes:
        side: ``"qrels"`` or ``"run"``.
        detail: what is wrong, without the row numbers (they mean nothing to a caller whose
            rows were shuffled, e.g. in a Spark bucket).
        rows: the 0-based rows of the table concerned.
    """

    def __init__(self, side: str, detail: str, *, rows: Sequence[int] = (), query_id: str | None = None,
                 fix: str | None = None) -> None:
        at = f" (row{'s' if len(rows) > 1 else ''} {' and '.join(map(str, rows))})" if rows else ""
        super().__init__(detail + at, source=f"the {side} table", query_id=query_id, fix=fix)
        self.side, self.detail, self.rows = side, detail, tuple(rows)


@dataclass(frozen=True, eq=False)
class TablePair:
    """The columns of a qrels table and a run table, and the queries they do not share.

    Attributes:
        columns: the evaluated queries (in both tables), as :func:`~evalbridge.engine.from_mappings` gives them.
        missing_from_run: qrels queries absent from the run, in qrels order.
        run_only: run queries absent from the qrels, in run order.
    """

    columns: Columns
    missing_from_run: list[str]
    run_only: list[str]


def columns_from_arrow(qrels: pa.Table, run: pa.Table, *, query: str = "query_id", doc: str = "doc_id",
                       relevance: str = "relevance", score: str = "score") -> Columns:
    """Columns of a qrels table (``query, doc, relevance``) and a run table (``query, doc, score``).

    See :func:`pair_from_arrow`, which also returns the queries the tables do not share.

    Example:
        >>> import pyarrow as pa
        >>> qrels = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [2, 0, 1]})
        >>> run = pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "x"], "score": [0.5, 0.9]})
        >>> c = columns_from_arrow(qrels, run)
        >>> c.query_ids, c.scores.tolist(), c.hit_grade.tolist()
        (['q1'], [0.5, 0.9], [2.0])
    """
    return pair_from_arrow(qrels, run, query=query, doc=doc, relevance=relevance, score=score).columns


# --------------------------------------------------------------------------- one table, checked

@dataclass(frozen=True, eq=False)
class _Side:
    """One table: its query ids as blocks of equal adjacent ids, its doc ids and its values."""

    name: str
    block_start: np.ndarray  # int64, first row of each block
    block_ids: Any  # pa.Array of str: the query id of each block
    docs: Any  # pa.Array of str
    values: np.ndarray  # float64

    @property
    def n_rows(self) -> int:
        return len(self.values)

    @property
    def block_lengths(self) -> np.ndarray:
        return np.diff(np.r_[self.block_start, self.n_rows])


def _id_kind(dtype: pa.DataType) -> str | None:
    """``"str"`` for string ids (read as they are), ``"int"`` for integers (read as ``str()`` writes them)."""
    import pyarrow as pa

    if pa.types.is_dictionary(dtype):
        return _id_kind(dtype.value_type)
    for kind, test in (("str", pa.types.is_string), ("str", pa.types.is_large_string),
                       ("str", pa.types.is_string_view), ("int", pa.types.is_integer)):
        if test(dtype):
            return kind
    return None


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _column(table: pa.Table, side: str, name: str, role: str, option: str) -> pa.Array:
    if name not in table.column_names:
        raise TableProblem(side, f"no column {name!r} (the {role}); its columns are {table.column_names}.",
                           fix=f"rename the column, or pass {option}=<its name>.")
    column = table[name].combine_chunks()
    if column.null_count:
        row = _first(column.is_null().to_numpy(zero_copy_only=False))
        raise TableProblem(side, f"column {name!r} is empty (null) in {column.null_count} row(s).", rows=[row],
                           fix=f"drop those rows or fill in the {role}.")
    return column


def _ids(table: pa.Table, side: str, name: str, role: str, option: str) -> tuple[pa.Array, str]:
    """A column of ids as plain strings (offsets and bytes), and whether they were str or int."""
    import pyarrow as pa

    column = _column(table, side, name, role, option)
    kind = _id_kind(column.type)
    if kind is None:
        raise TableProblem(side, f"column {name!r} (the {role}) must hold strings or integers; got {column.type}.",
                           fix=f"convert the {role}s to strings.")
    if pa.types.is_dictionary(column.type):
        column = column.dictionary_decode()
    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = column.cast(pa.large_string() if pa.types.is_string_view(column.type) else pa.string())
    return column, kind


def _values(table: pa.Table, side: str, name: str, role: str, option: str, queries: pa.Array,
            docs: pa.Array) -> np.ndarray:
    import pyarrow as pa

    column = _column(table, side, name, role, option)
    if not (pa.types.is_integer(column.type) or pa.types.is_floating(column.type)
            or pa.types.is_boolean(column.type)):
        raise TableProblem(side, f"column {name!r} (the {role}) must hold numbers; got {column.type}.",
                           fix=f"convert the {role}s to float.")
    try:
        # safe: ints beyond 2**53 refused
        values: np.ndarray = column.cast(pa.float64()).to_numpy(zero_copy_only=False)
    except pa.ArrowInvalid as error:
        raise TableProblem(side, f"column {name!r} holds an integer float64 cannot hold exactly ({error}).",
                           fix=f"give the {role}s as floats, or keep them within 2**53.") from None
    bad = ~np.isfinite(values)
    if bad.any():
        row = _first(bad)
        raise TableProblem(side, f"the {role} of doc {docs[row].as_py()!r} is {values[row]}, not a finite number.",
                           rows=[row], query_id=queries[row].as_py(),
                           fix=f"remove the row or give it a finite {role}.")
    return values


def _blocks(ids: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Start row and id of every block of equal adjacent ids."""
    import pyarrow.compute as pc

    n = len(ids)
    if n == 0:
        return np.zeros(0, dtype=np.int64), ids
    change = pc.not_equal(ids.slice(1), ids.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.r_[0, np.flatnonzero(change) + 1].astype(np.int64)
    return starts, ids.take(starts)


def _read(table: pa.Table, side: str, query: str, doc: str, value: str, role: str,
          option: str) -> tuple[_Side, tuple[str, str]]:
    queries, query_kind = _ids(table, side, query, "query id", "query")
    docs, doc_kind = _ids(table, side, doc, "doc id", "doc")
    values = _values(table, side, value, role, option, queries, docs)
    start, block_ids = _blocks(queries)
    return _Side(side, start, block_ids, docs, values), (query_kind, doc_kind)


def _check_kinds(qrels: tuple[str, str], run: tuple[str, str]) -> None:
    """Refuse int ids on one side and str ids on the other, as :func:`evalbridge.evaluation.check_compatible`."""
    for what, q, r in zip(("query", "doc"), qrels, run):
        if q != r:
            raise InputError(f"{what} ids are {q} in the qrels table but {r} in the run table (e.g. 1 vs '1'); "
                             f"evalbridge does not guess that they are the same ids.",
                             fix=f"give both the same id type, e.g. cast every {what} id to string.")


# --------------------------------------------------------------------------- strings as numbers

def _string_buffers(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """int64 offsets (``len + 1``) and the bytes of a string array."""
    import pyarrow as pa

    wide = pa.types.is_large_string(array.type)
    buffers = array.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if wide else np.int32, count=len(array) + 1,
                            offset=array.offset * (8 if wide else 4)).astype(np.int64)
    data = np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


def _hash(seed: np.ndarray, ids: pa.Array) -> np.ndarray:
    """Per row: a 64-bit hash of (``seed``, every byte of the row's id), folded 8 bytes at a time."""
    h = seed.copy()
    offsets, data = _string_buffers(ids)
    starts, lengths = offsets[:-1], np.diff(offsets)
    longest = int(lengths.max()) if len(lengths) else 0
    if longest == 0:
        return h
    base = int(starts.min())
    padded = np.zeros(int(offsets[-1]) - base + longest + 8, dtype=np.uint8)  # every word read lies inside
    padded[:int(offsets[-1]) - base] = data[base:int(offsets[-1])]
    words = np.ndarray(shape=(len(padded) - 8,), dtype=np.uint64, buffer=padded, strides=(1,))
    starts = starts - base
    for at in range(0, longest, 8):  # words past an id's end are not folded: the hash is the id's own
        rows = None if at == 0 else np.flatnonzero(lengths > at)
        word = words[starts + at] if rows is None else words[starts[rows] + at]
        word &= _KEEP[np.minimum(lengths - at if rows is None else lengths[rows] - at, 8)]
        if rows is None:
            h ^= word
            h *= _MIX
        else:
            h[rows] = (h[rows] ^ word) * _MIX
    h ^= h >> np.uint64(31)
    h *= _SPREAD
    return h


def _seeds(codes: np.ndarray) -> np.ndarray:
    return (codes.astype(np.uint64) + np.uint64(1)) * _SPREAD


def _same(a_codes: np.ndarray, a_docs: pa.Array, a_rows: np.ndarray, b_codes: np.ndarray, b_docs: pa.Array,
          b_rows: np.ndarray) -> np.ndarray:
    """Mask: row ``a_rows[i]`` and row ``b_rows[i]`` have the same query code and the same doc id."""
    import pyarrow.compute as pc

    same: np.ndarray = a_codes[a_rows] == b_codes[b_rows]
    if len(a_rows):
        same &= pc.equal(a_docs.take(a_rows), b_docs.take(b_rows)).to_numpy(zero_copy_only=False)
    return same


def _any_equal(hashes: np.ndarray, offsets: np.ndarray | None = None) -> bool:
    """True when two of ``hashes`` are equal (a duplicate, or a collision).

    With ``offsets`` (the hashes grouped by query, which they include), each group is sorted on
    its own, side by side as the rows of a grid, when the groups are of similar lengths: many
    small sorts instead of one large one (0.03 s instead of 1 s for 100,000 groups of 100)."""
    if offsets is not None and len(offsets) > 1:
        lengths = np.diff(offsets)
        width = int(lengths.max())
        if 0 < width and (len(lengths) * width <= 1.25 * len(hashes)):
            grid = ~np.arange(len(lengths) * width, dtype=np.uint64).reshape(len(lengths), width)  # distinct padding
            grid[np.arange(width) < lengths[:, None]] = hashes
            grid.sort(axis=1)
            return bool(np.any(grid[:, 1:] == grid[:, :-1]))
    ordered = np.sort(hashes)
    return bool(np.any(ordered[1:] == ordered[:-1]))


def _check_distinct(side: _Side, codes: np.ndarray, hashes: np.ndarray, names: list[str]) -> None:
    """Raise :class:`TableProblem` naming the first (query, doc) given twice; equal hashes of
    different pairs (collisions) are confirmed away on the strings."""
    order = np.argsort(hashes, kind="stable")
    ordered = hashes[order]
    equal = np.flatnonzero(ordered[1:] == ordered[:-1])
    if len(equal) == 0:
        return
    # Every pair of rows within each run of equal hashes (runs of more than two are collisions or
    # repeated duplicates: rare, so the pairs are enumerated in Python).
    first, second = [], []
    group_starts = equal[np.r_[True, equal[1:] != equal[:-1] + 1]]
    for start in group_starts.tolist():
        stop = start + 1
        while stop < len(ordered) and ordered[stop] == ordered[start]:
            stop += 1
        members = order[start:stop].tolist()
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                first.append(min(a, b))
                second.append(max(a, b))
    a_rows, b_rows = np.array(first, dtype=np.int64), np.array(second, dtype=np.int64)
    duplicate = np.flatnonzero(_same(codes, side.docs, a_rows, codes, side.docs, b_rows))
    if len(duplicate) == 0:
        return
    pick = duplicate[np.argmin(b_rows[duplicate])]
    a, b = int(a_rows[pick]), int(b_rows[pick])
    what = "grade" if side.name == "qrels" else "score"
    raise TableProblem(side.name, f"doc {side.docs[a].as_py()!r} is given twice ({len(duplicate)} duplicate "
                       f"(query, doc) pair(s) in all).", rows=[a, b], query_id=names[int(codes[a])],
                       fix=f"keep one row per (query, doc): each document has one {what} per query.")


# --------------------------------------------------------------------------- the pair

def _group(side: _Side, block_codes: np.ndarray, index: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the evaluated queries grouped by ``index[code]`` (input order within a group, by
    moving whole blocks), and the group offsets."""
    block_group = index[block_codes]
    keep = np.flatnonzero(block_group >= 0)
    order = keep[np.argsort(block_group[keep], kind="stable")]
    lengths = side.block_lengths[order]
    starts = side.block_start[order]
    total = int(lengths.sum())
    rows = np.repeat(starts - np.r_[0, np.cumsum(lengths)[:-1]], lengths) + np.arange(total, dtype=np.int64)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(block_group[order], weights=lengths, minlength=n_groups).astype(np.int64),
              out=offsets[1:])
    return rows, offsets


def _match(qrels: _Side, q_codes: np.ndarray, q_hashes: np.ndarray, q_rows: np.ndarray, run: _Side,
           r_codes: np.ndarray, r_hashes: np.ndarray, r_rows: np.ndarray) -> np.ndarray:
    """For each of ``q_rows``: the run row with the same (query, doc), or -1.

    A bit table of the top bits of the qrels' hashes lets through few of the run's rows; those are
    looked up among the sorted qrels hashes and confirmed on the strings. Qrels hashes are distinct
    (checked before), except for collisions of different pairs, confirmed the same way.
    """
    found = np.full(len(q_rows), -1, dtype=np.int64)
    if len(q_rows) == 0 or len(r_rows) == 0:
        return found
    by_hash = np.argsort(q_hashes[q_rows], kind="stable")
    ordered = q_hashes[q_rows][by_hash]
    bits = min(26, max(16, len(ordered).bit_length() + 6))
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=bool)
    table[(ordered >> shift).astype(np.int64)] = True
    candidates = r_rows[table[(r_hashes[r_rows] >> shift).astype(np.int64)]]
    value = r_hashes[candidates]
    low = np.searchsorted(ordered, value, side="left")
    high = np.searchsorted(ordered, value, side="right")
    # Each candidate against each qrels row of equal hash (almost always one, or none).
    width = high - low
    cand = np.repeat(candidates, width)
    at = np.repeat(low - np.r_[0, np.cumsum(width)[:-1]], width) + np.arange(int(width.sum()), dtype=np.int64)
    judged = q_rows[by_hash[at]]
    same = _same(q_codes, qrels.docs, judged, r_codes, run.docs, cand)
    position = np.empty(len(qrels.values), dtype=np.int64)
    position[q_rows] = np.arange(len(q_rows), dtype=np.int64)
    found[position[judged[same]]] = cand[same]
    return found


def pair_from_arrow(qrels: pa.Table, run: pa.Table, *, query: str = "query_id", doc: str = "doc_id",
                    relevance: str = "relevance", score: str = "score") -> TablePair:
    """The engine's columns of a qrels table and a run table, and the queries they do not share.

    Args:
        qrels: one row per judged (query, doc): the columns ``query``, ``doc`` (strings, or
            integers read as ``str()`` reads them) and ``relevance`` (numbers, floats kept).
        run: one row per retrieved (query, doc): ``query``, ``doc`` and ``score``.
        query, doc, relevance, score: the column names.

    Raises:
        TableProblem: (an :class:`~evalbridge.errors.InputError`) a missing column, a null, a
            non-number, a score or grade that is not finite, or a (query, doc) given twice;
            the message names the row, the query id and the doc id.
        InputError: integer ids on one side and string ids on the other.

    Example:
        >>> import pyarrow as pa
        >>> qrels = pa.table({"query_id": ["q1", "q2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
        >>> run = pa.table({"query_id": ["q1", "q3"], "doc_id": ["a", "b"], "score": [0.5, 0.9]})
        >>> pair = pair_from_arrow(qrels, run)
        >>> pair.columns.query_ids, pair.missing_from_run, pair.run_only
        (['q1'], ['q2'], ['q3'])
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    q_side, q_kinds = _read(qrels, "qrels", query, doc, relevance, "grade", "relevance")
    r_side, r_kinds = _read(run, "run", query, doc, score, "score", "score")
    _check_kinds(q_kinds, r_kinds)
    if q_side.docs.type != r_side.docs.type:  # one string and one large string: compare as large strings
        q_side = _Side(q_side.name, q_side.block_start, q_side.block_ids, q_side.docs.cast(pa.large_string()),
                       q_side.values)
        r_side = _Side(r_side.name, r_side.block_start, r_side.block_ids, r_side.docs.cast(pa.large_string()),
                       r_side.values)
    r_blocks = r_side.block_ids.cast(q_side.block_ids.type)

    # Query codes: the qrels' queries 0..n-1 in first-appearance order, then the run-only ones.
    encoded = pc.dictionary_encode(q_side.block_ids)
    q_block_code = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    names = encoded.dictionary
    n_judged_queries = len(names)
    r_block_code = pc.index_in(r_blocks, value_set=names).fill_null(-1).to_numpy(zero_copy_only=False)
    r_block_code = r_block_code.astype(np.int64)
    outside = np.flatnonzero(r_block_code < 0)
    run_only = pc.dictionary_encode(r_blocks.take(outside))
    r_block_code[outside] = n_judged_queries + run_only.indices.to_numpy(zero_copy_only=False)
    all_names = names.to_pylist() + run_only.dictionary.to_pylist()

    q_codes = np.repeat(q_block_code, q_side.block_lengths)
    r_codes = np.repeat(r_block_code, r_side.block_lengths)
    q_hashes = _hash(_seeds(q_codes), q_side.docs)
    r_hashes = _hash(_seeds(r_codes), r_side.docs)

    in_run = np.zeros(n_judged_queries, dtype=bool)
    in_run[r_block_code[r_block_code < n_judged_queries]] = True
    evaluated = np.flatnonzero(in_run)
    index = np.full(len(all_names), -1, dtype=np.int64)
    index[evaluated] = np.arange(len(evaluated), dtype=np.int64)
    run_rows, offsets = _group(r_side, r_block_code, index, len(evaluated))
    judged_rows, judged_offsets = _group(q_side, q_block_code, index, len(evaluated))

    if _any_equal(q_hashes):
        _check_distinct(q_side, q_codes, q_hashes, all_names)
    ignored = np.flatnonzero(index[r_codes] < 0) if len(run_rows) < r_side.n_rows else run_rows[:0]
    if _any_equal(r_hashes[run_rows], offsets) or _any_equal(r_hashes[ignored]):
        _check_distinct(r_side, r_codes, r_hashes, all_names)

    grades = q_side.values[judged_rows]
    matched = _match(q_side, q_codes, q_hashes, judged_rows, r_side, r_codes, r_hashes, run_rows)
    hits = np.flatnonzero((matched >= 0) & (grades != 0))
    zeros = np.flatnonzero((matched >= 0) & (grades == 0))
    hit_run_rows = matched[hits]
    run_docs, judged_docs = r_side.docs, q_side.docs

    def pool_rows() -> np.ndarray:
        """Run rows (of the evaluated queries) whose doc is judged for some query of the qrels table."""
        pooled = pc.is_in(run_docs.take(run_rows), value_set=pc.unique(judged_docs))
        return np.flatnonzero(pooled.to_numpy(zero_copy_only=False))
    columns = Columns(
        query_ids=[all_names[i] for i in evaluated.tolist()], offsets=offsets, scores=r_side.values[run_rows],
        judged_offsets=judged_offsets, judged=grades,
        hit_query=np.searchsorted(judged_offsets, hits, side="right") - 1, hit_score=r_side.values[hit_run_rows],
        hit_grade=grades[hits],
        doc_ids=lambda rows: run_docs.take(run_rows[rows]).to_pylist(),
        hit_doc_ids=lambda h: judged_docs.take(judged_rows[hits[h]]).to_pylist(),
        zero_query=np.searchsorted(judged_offsets, zeros, side="right") - 1, zero_score=r_side.values[matched[zeros]],
        zero_doc_ids=lambda z: judged_docs.take(judged_rows[zeros[z]]).to_pylist(), pool_rows=pool_rows)
    return TablePair(columns=columns, missing_from_run=[all_names[i] for i in np.flatnonzero(~in_run).tolist()],
                     run_only=all_names[n_judged_queries:])
