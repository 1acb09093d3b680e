"""TREC qrels and run files read by pyarrow straight into :class:`~evalbridge.engine.Columns`.

This is only a fast path. :func:`read_trec_views` accepts a pair of files only when the strict
readers (:func:`evalbridge.io.trec.read_qrels` / :func:`~evalbridge.io.trec.read_run`) would read
exactly the same data from them, and returns ``None`` for anything unusual: comments, blank
lines, tabs mixed with spaces, empty fields, other whitespace, a UTF-8 BOM, duplicate
(query, doc) pairs, non-finite numbers, grades beyond 2**53. The caller then uses the strict
readers, whose errors name ``file:line``.

No dict-of-dicts is built: ids stay in Arrow string arrays. Query ids are looked up once per
block of lines. Each row gets a 64-bit hash of (query, every byte of its doc id). Duplicates are
found by sorting the hashes (per query when queries are blocks of lines): any hash shared within
the qrels, or within one query of the run, declines the pair (a duplicate, which the strict
readers report with both line numbers, or a collision, which they read correctly). The run's
rows are matched to the qrels' through those hashes, and every match is confirmed by comparing
the query codes and the doc id strings. A second thread checks the fields and sorts while this
one hashes and matches.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator, KeysView, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..engine.columns import EXACT_LIMIT, Columns
from .text import GZIP_MAGIC

__all__ = ["QrelsView", "RunView", "read_trec_views", "LARGE_BYTES"]

#: With ``large_only`` a run file smaller than this goes to the ordinary readers instead
#: (importing pyarrow and numpy costs more than reading a small file line by line).
LARGE_BYTES = 4 << 20

#: Whitespace that ``str.split`` splits on in non-ASCII text: NEL, NBSP, U+1680, U+2000-U+200A/U+2028/U+2029/U+202F (all
#: begin with E2 80), U+205F, U+3000; and the BOM, which Arrow drops but Python keeps.
_OTHER_SPACE_UTF8 = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80",
                     b"\xef\xbb\xbf")
_QRELS = ("qid", "iter", "docid", "rel")
#: Masks keeping the first k bytes of a little-endian word, k = 0..8.
_KEEP = np.array([(1 << (8 * k)) - 1 for k in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
#: Odd multipliers of the hash (each a bijection of the 64-bit words).
_SPREAD, _MIX = np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F)
_RUN = ("qid", "Q0", "docid", "rank", "score", "tag")


class _View:
    """The little of the :class:`~evalbridge.model.Qrels` / ``Run`` mapping API that ``evaluate`` reads:
    the query ids (in file order), membership, the id kinds and the source."""

    query_id_kind = ("str",)
    doc_id_kind = ("str",)

    def __init__(self, ids: Sequence[str], source: str) -> None:
        self._ids, self.source = dict.fromkeys(ids), source

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, qid: object) -> bool:
        return qid in self._ids

    def keys(self) -> KeysView[str]:
        return self._ids.keys()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} queries, {self.source})"


class QrelsView(_View):
    """Qrels read into columns; carries the engine's :class:`Columns` of the pair."""

    min_relevance = None

    def __init__(self, ids: Sequence[str], source: str, *, max_grade: float, columns: Columns) -> None:
        super().__init__(ids, source)
        self.max_grade, self.columns = max_grade, columns


class RunView(_View):
    """A run read into columns (its name is the tag of its first line, as ``read_run``)."""

    def __init__(self, ids: Sequence[str], source: str, *, name: str) -> None:
        super().__init__(ids, source)
        self.name = name


def _source(path: Path):  # noqa: ANN202 - (what pyarrow reads, the first 64 KiB, the whole text loader)
    """Arrow reads a plain file itself; a gzip file (by its magic bytes) is decompressed here."""
    import pyarrow as pa

    with path.open("rb") as f:
        head = f.read(1 << 16)
    if head[:2] == GZIP_MAGIC:
        raw = gzip.decompress(path.read_bytes())
        return pa.py_buffer(raw), raw[:1 << 16], lambda: raw
    return str(path), head, path.read_bytes


def _delimiter(raw: bytes) -> bytes | None:
    """The delimiter of the first line (one space or one tab, not both), or None."""
    end = raw.find(b"\n")
    first = raw[:end if end >= 0 else len(raw)]
    tab, space = b"\t" in first, b" " in first
    if tab == space or raw.startswith(b"\xef\xbb\xbf"):
        return None
    return b"\t" if tab else b" "


def _plain_fields(table, text: Callable[[], bytes]) -> bool:  # noqa: ANN001 - pa.Table
    """True when no field holds a byte ``str.split`` would split on (the other delimiter, a control
    character, Unicode whitespace) or an empty string, and the file is UTF-8."""
    import pyarrow as pa

    high = False
    for column in table.columns:
        for chunk in column.chunks:
            if not (pa.types.is_string(chunk.type) or pa.types.is_binary(chunk.type)):
                continue
            offsets = _offsets(chunk)
            if len(chunk) and not np.all(offsets[1:] > offsets[:-1]):
                return False
            data = chunk.buffers()[2]
            data = np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]] if data is not None else data
            if data is not None and len(data):
                if int(data.min()) < 0x21:
                    return False
                high = high or int(data.max()) >= 0x80
    if high:
        raw = text()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return not any(seq in raw for seq in _OTHER_SPACE_UTF8)
    return True


def _table(source, delimiter: bytes, names: Sequence[str], types: dict):  # noqa: ANN001, ANN202 - pa.Table | None
    import pyarrow as pa
    from pyarrow import csv

    try:
        return csv.read_csv(
            source,
            read_options=csv.ReadOptions(column_names=list(names)),
            parse_options=csv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, escape_char=False,
                                           double_quote=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=csv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                               quoted_strings_can_be_null=False, check_utf8=False))
    except (pa.ArrowException, ValueError):
        return None


def _offsets(array) -> np.ndarray:  # noqa: ANN001 - pa.StringArray / LargeStringArray
    """The int64 offsets of a string array (numpy view of its buffer, copied when int32)."""
    import pyarrow as pa

    wide = pa.types.is_large_string(array.type) or pa.types.is_large_binary(array.type)
    return np.frombuffer(array.buffers()[1], dtype=np.int64 if wide else np.int32, count=len(array) + 1,
                         offset=array.offset * (8 if wide else 4))


def _blocks(array) -> tuple[np.ndarray, list[str]]:  # noqa: ANN001 - pa.StringArray
    """Start row and value of every block of equal adjacent strings (e.g. a query's lines)."""
    import pyarrow.compute as pc

    n = len(array)
    change = pc.not_equal(array.slice(1), array.slice(0, n - 1)).to_numpy(zero_copy_only=False)
    starts = np.r_[0, np.flatnonzero(change) + 1].astype(np.int64)
    return starts, array.take(starts).to_pylist()


def _hash(h: np.ndarray, offsets: np.ndarray, data: np.ndarray) -> None:
    """Fold every 8-byte word of each id into ``h``, the per-row seed of its query: a 64-bit hash
    of (query, id). Equal hashes within a file make the caller decline the file; a match between
    the files is confirmed by comparing the strings."""
    starts, lengths = offsets[:-1], np.diff(offsets)
    longest = int(lengths.max()) if len(lengths) else 0
    padded = np.zeros(len(data) + longest + 8, dtype=np.uint8)  # every word read below lies inside
    padded[:len(data)] = data
    words = np.ndarray(shape=(len(data) + longest,), dtype=np.uint64, buffer=padded, strides=(1,))
    for at in range(0, longest, 8):  # one pass for ids of up to 8 bytes
        if at == 0:
            word = words[starts] & _KEEP[np.clip(lengths, 0, 8)]  # the bytes of this id only
            h ^= word
            h *= _MIX
            continue
        # Only ids that still have bytes here take this word: an id's hash must not depend on how long
        # the longest id of its file is, or the same (query, doc) hashes differently in the other file.
        live = np.flatnonzero(lengths > at)
        word = words[starts[live] + at] & _KEEP[np.clip(lengths[live] - at, 0, 8)]
        h[live] = (h[live] ^ word) * _MIX


@dataclass
class _File:
    """One TREC file as columns: its blocks of lines of one query, doc ids, hashes, the numbers,
    and the query ids in file order."""

    ids: list[str]
    block_start: np.ndarray
    block_code: np.ndarray
    docs: object
    hashes: np.ndarray
    values: np.ndarray
    first: dict[str, object]

    @property
    def n_rows(self) -> int:
        return len(self.values)

    @property
    def block_lengths(self) -> np.ndarray:
        return np.diff(np.r_[self.block_start, self.n_rows])

    def codes(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The query code of the given rows (of every row when None)."""
        if rows is None:
            return np.repeat(self.block_code, self.block_lengths)
        return self.block_code[np.searchsorted(self.block_start, rows, side="right") - 1]


def _read(path: Path, names: Sequence[str], value: str, types: dict, known: dict[str, int]) -> _File | None:
    """Read one file; ``known`` maps query ids to codes and is extended with new ones (in file order).
    The fields are checked on a second thread while this one hashes the ids."""
    source, head, text = _source(path)
    delimiter = _delimiter(head)
    table = _table(source, delimiter, names, types) if delimiter else None
    if table is None or table.num_rows == 0:
        return None
    with ThreadPoolExecutor(max_workers=1) as pool:
        plain = pool.submit(_plain_fields, table, text)
        try:
            file = _columns(table, names, value, known)
        except UnicodeDecodeError:  # (Arrow was told not to check UTF-8: _plain_fields does)
            file = None
        return file if plain.result() else None  # None: an empty field, other whitespace, not UTF-8


def _columns(table, names: Sequence[str], value: str, known: dict[str, int]) -> _File | None:  # noqa: ANN001
    starts, block_ids = _blocks(table["qid"].combine_chunks())
    if any(qid[0] == "#" for qid in block_ids):
        return None  # a comment line
    values = table[value].to_numpy()
    low, high = float(values.min()), float(values.max())  # NaN propagates; inf is not < EXACT_LIMIT
    if not max(-low, high) < EXACT_LIMIT:
        return None
    ids = list(dict.fromkeys(block_ids))
    for qid in ids:
        known.setdefault(qid, len(known))
    block_code = np.array([known[qid] for qid in block_ids], dtype=np.int64)
    hashes = np.repeat((block_code + 1).astype(np.uint64) * _SPREAD, np.diff(np.r_[starts, table.num_rows]))
    docs = table["docid"]
    at = 0
    for chunk in docs.chunks:  # chunk by chunk: no copy of the whole column
        data = chunk.buffers()[2]
        data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
        _hash(hashes[at:at + len(chunk)], _offsets(chunk), data)
        at += len(chunk)
    first = {name: table[name][0].as_py() for name in names}
    return _File(ids, starts, block_code, docs.combine_chunks(), hashes, values, first)  # (take is slow on chunks)


def _distinct(file: _File) -> bool:
    """True when no two rows of one query share a hash.

    When every query is one block of lines, the blocks are sorted side by side, as rows of a grid
    (n log L instead of n log n: 0.07 s instead of 0.13 s for 7,000 blocks of 1,000); otherwise all
    hashes are sorted together. Neighbours from two queries (a short block's padding included) are
    then equal only by a collision, which declines the file too."""
    lengths = file.block_lengths
    width = int(lengths.max())
    if len(np.unique(file.block_code)) < len(lengths) or len(lengths) * width > 1.25 * file.n_rows:
        ordered = np.sort(file.hashes)
    elif np.all(lengths == width):
        ordered = np.sort(file.hashes.reshape(len(lengths), width), axis=1).ravel()
    else:
        grid = ~np.arange(len(lengths) * width, dtype=np.uint64).reshape(len(lengths), width)  # distinct padding
        grid[np.arange(width) < lengths[:, None]] = file.hashes
        ordered = np.sort(grid, axis=1).ravel()
    return not np.any(ordered[1:] == ordered[:-1])


def _group(file: _File, index: np.ndarray, n_groups: int) -> tuple[np.ndarray | None, np.ndarray]:
    """Rows whose query is evaluated, grouped by ``index[code]`` (stable; None: all rows, as they are),
    and the group offsets. Decided per block of lines when each query is one block, in order."""
    block_group = index[file.block_code]
    lengths = file.block_lengths
    keep = block_group >= 0
    kept = block_group[keep]
    if np.all(kept[1:] > kept[:-1]):
        offsets = np.zeros(n_groups + 1, dtype=np.int64)
        np.cumsum(np.bincount(kept, weights=lengths[keep], minlength=n_groups).astype(np.int64), out=offsets[1:])
        if keep.all():
            return None, offsets
        size = lengths[keep]
        rows = np.repeat(file.block_start[keep] - np.r_[0, np.cumsum(size)[:-1]], size) + np.arange(int(size.sum()))
        return rows, offsets
    group = index[file.codes()]
    rows = np.flatnonzero(group >= 0)
    group = group[rows]
    if len(group) > 1 and not np.all(group[1:] >= group[:-1]):
        order = np.argsort(group, kind="stable")
        rows, group = rows[order], group[order]
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(group, minlength=n_groups), out=offsets[1:])
    return rows, offsets


def read_trec_views(qrels_path: str | os.PathLike, run_path: str | os.PathLike, *,
                    large_only: bool = False) -> tuple[QrelsView, RunView] | None:
    """``(qrels, run)`` views over columns read with pyarrow, or ``None`` to use the strict readers.

    Args:
        qrels_path, run_path: TREC files (plain or gzip), as :func:`evalbridge.io.trec.read_qrels`
            and :func:`~evalbridge.io.trec.read_run` read them.
        large_only: decline a run file smaller than :data:`LARGE_BYTES`.
    """
    qrels_path, run_path = Path(qrels_path), Path(run_path)
    try:
        if not (qrels_path.is_file() and run_path.is_file()):
            return None
        if large_only and run_path.stat().st_size < LARGE_BYTES:
            return None
        import pyarrow as pa
    except (OSError, ImportError):
        return None
    known: dict[str, int] = {}
    try:
        qrels = _read(qrels_path, _QRELS, "rel", {"qid": pa.string(), "iter": pa.binary(), "docid": pa.string(),
                                                  "rel": pa.float64()}, known)
        n_judged = len(known)
        run = None if qrels is None else _read(run_path, _RUN, "score", {
            "qid": pa.string(), "Q0": pa.binary(), "docid": pa.string(), "rank": pa.binary(), "score": pa.float64(),
            "tag": pa.binary()}, known)
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    columns = None if run is None else _pair(qrels, run, n_judged, len(known))
    if columns is None:
        return None
    top = float(qrels.values.max())
    return (QrelsView(qrels.ids, str(qrels_path), max_grade=int(top) if top.is_integer() else top, columns=columns),
            RunView(run.ids, str(run_path), name=bytes(run.first["tag"]).decode()))


def _pair(qrels: _File, run: _File, n_judged: int, n_known: int) -> Columns | None:
    """Match the run's rows to the qrels' and lay both out per evaluated query. None when two rows
    of the qrels, or two rows of one query of the run, share a hash: a duplicate (query, doc), which
    the strict readers report, or a collision."""
    with ThreadPoolExecutor(max_workers=1) as pool:  # the run's sort beside the matching
        distinct = pool.submit(_distinct, run)
        matched = _matches(qrels, run)
        if matched is None or not distinct.result():
            return None
    q_rows, r_rows = matched

    # Evaluated queries: the qrels' queries that the run has, in qrels order.
    in_run = np.zeros(n_judged, dtype=bool)
    in_run[run.block_code[run.block_code < n_judged]] = True
    evaluated = np.flatnonzero(in_run)
    index = np.full(n_known, -1, dtype=np.int64)
    index[evaluated] = np.arange(len(evaluated))
    query_ids = [qrels.ids[i] for i in evaluated.tolist()]
    rows, offsets = _group(run, index, len(evaluated))
    judged_rows, judged_offsets = _group(qrels, index, len(evaluated))

    grade = qrels.values[q_rows]
    nonzero = grade != 0
    q_rows, r_rows, grade = q_rows[nonzero], r_rows[nonzero], grade[nonzero]
    hit_query = index[run.codes(r_rows)]
    docs = run.docs

    def doc_ids(selected: np.ndarray) -> list[str]:
        return docs.take(selected if rows is None else rows[selected]).to_pylist()

    return Columns(
        query_ids=query_ids, offsets=offsets, scores=run.values if rows is None else run.values[rows],
        judged_offsets=judged_offsets,
        judged=qrels.values if judged_rows is None else qrels.values[judged_rows], hit_query=hit_query,
        hit_score=run.values[r_rows], hit_grade=grade,
        doc_ids=doc_ids, hit_doc_ids=lambda hits: docs.take(r_rows[hits]).to_pylist())


def _matches(qrels: _File, run: _File) -> tuple[np.ndarray, np.ndarray] | None:
    """``(qrels rows, run rows)`` of the same (query, doc); None when two qrels rows share a hash.

    A table indexed by the top bits of the qrels' hashes lets through a few percent of the run's
    rows; those are looked up among the sorted qrels hashes, and equal hashes are confirmed by
    the query codes and the doc id strings."""
    import pyarrow.compute as pc

    order = np.argsort(qrels.hashes)
    ordered = qrels.hashes[order]
    if np.any(ordered[1:] == ordered[:-1]):
        return None
    bits = min(24, max(16, len(ordered).bit_length() + 6))
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=bool)
    table[(ordered >> shift).view(np.int64)] = True
    r_rows = np.flatnonzero(table[(run.hashes >> shift).view(np.int64)])
    at = np.minimum(np.searchsorted(ordered, run.hashes[r_rows]), len(ordered) - 1)
    same = ordered[at] == run.hashes[r_rows]
    q_rows, r_rows = order[at[same]], r_rows[same]
    same = qrels.codes(q_rows) == run.codes(r_rows)
    if len(q_rows):
        same &= pc.equal(qrels.docs.take(q_rows), run.docs.take(r_rows)).to_numpy(zero_copy_only=False)
    return q_rows[same], r_rows[same]
