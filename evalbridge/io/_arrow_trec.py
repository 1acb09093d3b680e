"""TREC qrels and run files read by pyarrow into a columnar :class:`~evalbridge.model.data.Qrels` / ``Run``.

This is only a fast path, for each file on its own. :func:`read_qrels_columns` and
:func:`read_run_columns` accept a file only when the strict readers
(:func:`evalbridge.io.trec.read_qrels` / :func:`~evalbridge.io.trec.read_run`) would read exactly the
same data from it, and return ``None`` for anything unusual: comments, blank lines, tabs mixed with
spaces, empty fields, other whitespace, a UTF-8 BOM, duplicate (query, doc) pairs, non-finite
numbers, numbers beyond 2**53. The caller then uses the strict reader, whose errors name ``file:line``.

Whitespace, empty fields and lone CRs are checked on the file's bytes, once, before Arrow parses it
(:func:`_separators`: a slice of bytes at a time, in shares side by side on the machine's cores: 0.04 s
for 255 MB on two cores, the pages of the memory map faulted in included); Arrow then converts only the
columns kept (query id, doc id, score or grade): the rank, ``Q0``, ``iter`` and tag fields are split
off and never built (reading all six columns of a run costs 0.2 s more at 7M lines).

No dict-of-dicts is built: the rows become a :class:`~evalbridge.model.columnar.RowTable`
(:mod:`evalbridge.fast.rows`: blocks of lines of one query, doc ids in an Arrow string array, a
64-bit hash per row made from the query id and the doc id alone). A hash shared by two rows of one
query declines the file (a duplicate, which the strict reader reports with both line numbers, or
a collision, which it reads correctly). Pairing a qrels table with a run table is the engine's (:func:`evalbridge.fast.rows.pair`).
"""

from __future__ import annotations

import gzip
import mmap
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..common.values import DECIMAL, INTEGER
from .text import GZIP_MAGIC

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..model.columnar import RowTable
    from ..model.data import Qrels, Run

__all__ = ["read_qrels_columns", "read_run_columns", "large_enough", "worth_reading", "LARGE_BYTES"]

#: With ``large_only`` a file smaller than this goes to the ordinary readers instead (importing pyarrow
#: and numpy, about 0.2 s, costs more than reading a smaller file line by line). The size alone decides,
#: never what happens to be imported: the same file gives the same object in any process.
LARGE_BYTES = 4 << 20


def large_enough(size: int) -> bool:
    """True when a file of ``size`` bytes is worth the columnar path (see :data:`LARGE_BYTES`)."""
    return size >= LARGE_BYTES


#: Whitespace that ``str.split`` splits on in non-ASCII text: NEL, NBSP, U+1680, U+2000-U+200A/U+2028/U+2029/U+202F (all
#: begin with E2 80), U+205F, U+3000; and the BOM, which Arrow drops but Python keeps.
_OTHER_SPACE_UTF8 = (b"\xc2\x85", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f", b"\xe3\x80\x80",
                     b"\xef\xbb\xbf")
_QRELS = ("qid", "iter", "docid", "rel")
_RUN = ("qid", "Q0", "docid", "rank", "score", "tag")


def _QUERY_TYPE() -> Any:  # noqa: N802 - a type, built when pyarrow is imported
    """Query ids are read dictionary-encoded: Arrow's CSV reader codes them as it parses (one string per
    distinct id instead of one per line), and blocks of lines are found by comparing the codes."""
    import pyarrow as pa

    return pa.dictionary(pa.int32(), pa.string())


def _source(path: Path) -> tuple[bytes | mmap.mmap, Callable[[], bytes]]:
    """(the file's bytes, the whole text loader): a plain file memory-mapped (read by Arrow and by the byte
    check without a copy), a gzip file (by its magic bytes) decompressed here."""
    with path.open("rb") as f:
        if f.read(2) == GZIP_MAGIC:
            raw = gzip.decompress(path.read_bytes())
            return raw, lambda: raw
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ), path.read_bytes


def _delimiter(raw: bytes) -> bytes | None:
    """The delimiter of the first line (one space or one tab, not both), or None."""
    end = raw.find(b"\n")
    first = raw[:end if end >= 0 else len(raw)]
    tab, space = b"\t" in first, b" " in first
    if tab == space or raw.startswith(b"\xef\xbb\xbf"):
        return None
    return b"\t" if tab else b" "


#: The byte check reads this many bytes at a time (a slice and its masks stay in the cache: 0.04 s for 255 MB
#: on one core), and gives each thread this many bytes to check (:func:`evalbridge.common.parallel.each`).
_CHECK_SLICE = 1 << 20
_CHECK_SHARE = 32 << 20


def _separators(data: np.ndarray, crlf: bool) -> tuple[int, bool] | None:
    """(bytes below ``0x21``, whether a byte is ``>= 0x80``) of a file's bytes, or None when a field
    would be empty: two such bytes side by side, or one that begins the file or ends it (a final
    newline excepted), or when a CR ends a line alone. With ``crlf`` every CR must be followed by a
    newline (and follow a field): it ends a line with it, and is not counted; without, there is no CR.

    Arrow split every line into exactly as many fields as the format has, at single delimiters; so
    when the bytes below ``0x21`` are exactly those delimiters and one newline per line (the caller
    compares the count), no field holds a byte ``str.split`` would split on, and no field is empty: the
    strict reader sees the same words. The file is checked in shares of :data:`_CHECK_SHARE` bytes,
    side by side on the machine's cores."""
    from ..common.parallel import each

    n = len(data)
    if n == 0 or data[0] < 0x21 or (data[-1] < 0x21 and data[-1] != 0x0A):
        return None
    jobs = [(data, begin, min(n, begin + _CHECK_SHARE), crlf) for begin in range(0, n, _CHECK_SHARE)]
    shares = [share for share in each(_check_share, jobs) if share is not None]
    if len(shares) < len(jobs):
        return None  # a share found an empty field or a lone CR
    return sum(lows for lows, _ in shares), any(high for _, high in shares)


def _check_share(data: np.ndarray, begin: int, end: int, crlf: bool) -> tuple[int, bool] | None:
    """:func:`_separators` of ``data[begin:end]``, a slice at a time (the byte before ``begin`` tells
    whether the share's first byte ends a field that began before it)."""
    import numpy as np

    n = len(data)
    low = np.empty(_CHECK_SLICE + 1, dtype=bool)  # low[0]: the byte before the slice
    pair = np.empty(_CHECK_SLICE, dtype=bool)
    before = int(data[begin - 1]) if begin else 0
    low[0] = before < 0x21 and not (crlf and before == 0x0D)  # a CR of a CRLF is not counted
    lows = 0
    high = False
    for start in range(begin, end, _CHECK_SLICE):
        part = data[start:min(end, start + _CHECK_SLICE)]
        size = len(part)
        mask, both = low[1:size + 1], pair[:size]
        np.less(part, 0x21, out=mask)
        np.equal(part, 0x0D, out=both)
        if crlf:
            at = np.flatnonzero(both)
            if len(at) and (at[-1] + start + 1 >= n or np.any(data[at + start + 1] != 0x0A)):
                return None  # a CR that ends a line alone (Arrow's line end, not str.split's), or a field
            if np.any(data[at + start - 1] < 0x21):
                return None  # an empty field before the CR
            mask[at] = False
        elif both.any():
            return None  # a CR in a file whose lines end with a newline alone
        np.logical_and(low[:size], mask, out=both)
        if both.any():
            return None
        lows += int(np.count_nonzero(mask))
        high = high or int(part.max()) >= 0x80
        low[0] = mask[-1]
    return lows, high


def _utf8_words(text: Callable[[], bytes]) -> bool:
    """True when the file is UTF-8 without the Unicode whitespace ``str.split`` splits on (for files
    with bytes ``>= 0x80``)."""
    raw = text()
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any(seq in raw for seq in _OTHER_SPACE_UTF8)


def _table(source: pa.Buffer, delimiter: bytes, names: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """The columns named in ``types`` (the others are split off but never converted), or None when a
    line has another number of fields or a value does not convert."""
    import pyarrow as pa
    from pyarrow import csv

    try:
        return csv.read_csv(
            pa.BufferReader(source),
            read_options=csv.ReadOptions(column_names=list(names), block_size=_BLOCK),
            parse_options=csv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, escape_char=False,
                                           double_quote=False, newlines_in_values=False, ignore_empty_lines=False),
            convert_options=csv.ConvertOptions(column_types=types, include_columns=list(types), null_values=[],
                                               strings_can_be_null=False, quoted_strings_can_be_null=False,
                                               check_utf8=False))
    except (pa.ArrowException, ValueError):
        return None


#: Arrow's CSV block: 4 MiB instead of 1 MiB gives a quarter of the chunks (fewer to combine) and a faster read.
_BLOCK = 4 << 20


#: A number token and an integer token, by the one rule of every format (:mod:`evalbridge.common.values`): anything
#: else goes to the strict reader, which says what is wrong with it.
_DECIMAL, _INTEGER = DECIMAL, INTEGER


def _integral_grades(tokens: pa.StringArray) -> tuple[np.ndarray, np.ndarray | bool] | None:
    """(float64 grades, per-row "is an int") of the grade tokens, as the strict reader's ``int`` else
    ``float``; None when a token is not a plain decimal number (Arrow would read ``0x10`` as 16, Python
    refuses it; Python reads ``1_0`` as 10, Arrow refuses it)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pc.all(pc.match_substring_regex(tokens, _DECIMAL)).as_py():
        return None
    integral = pc.match_substring_regex(tokens, _INTEGER)
    try:
        if pc.all(integral).as_py():
            return pc.cast(tokens, pa.int64()).to_numpy().astype(np.float64), True
        return pc.cast(tokens, pa.float64()).to_numpy(), integral.to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _values(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray | bool] | None:
    """(float64 values, per-row "is an int") of the grades (text, parsed here) or the scores (float64),
    or None (a token Python reads otherwise, a number beyond 2**53)."""
    import numpy as np
    import pyarrow as pa

    from ..fast.rows import EXACT_LIMIT

    if pa.types.is_string(column.type):
        read = _integral_grades(column.combine_chunks())
        if read is None:
            return None
        values, integral = read
    else:
        values, integral = np.concatenate([chunk.to_numpy() for chunk in column.chunks]), False
    low, high = float(values.min()), float(values.max())  # NaN propagates; inf is not < EXACT_LIMIT
    return (values, integral) if max(-low, high) < EXACT_LIMIT else None


def worth_reading(path: str | os.PathLike[str], large_only: bool = True) -> bool:
    """A regular file, and (with ``large_only``) a large one: decided before pyarrow is imported, so a small
    file costs no import."""
    try:
        path = Path(path)
        return path.is_file() and (not large_only or large_enough(path.stat().st_size))
    except (OSError, ValueError):
        return False


def _read(path: str | os.PathLike[str], names: Sequence[str], types: dict[str, Any], value: str) -> \
        tuple[RowTable, list[bytes]] | None:
    """(rows, the words of the file's first line) of one file, or None.

    The bytes are checked first (:func:`_separators`); Arrow then converts only the query ids, the doc
    ids and ``value``, and every column but the query ids and the doc ids is let go before the rows are
    built."""
    path = Path(path)
    try:
        import pyarrow  # pyarrow missing: the strict reader
    except ImportError:
        return None
    import numpy as np

    from ..fast.rows import build_table, shared_hash

    try:
        if path.stat().st_size == 0:
            return None  # (nothing to map)
        source, text = _source(path)
        head = source[:1 << 16]
        line = head.split(b"\n", 1)[0]
        delimiter, crlf = _delimiter(head), line.endswith(b"\r")
        if delimiter is None or b"\n" not in head and len(head) < len(source):
            return None  # a first line longer than the head
        counts = _separators(np.frombuffer(source, dtype=np.uint8), crlf)
        if counts is None:
            return None  # an empty field, a lone CR
        ends_with_newline = source[-1:] == b"\n"
        table = _table(pyarrow.py_buffer(source), delimiter, names, types)
        del source
        lows, high = counts
        if table is None or table.num_rows == 0 or lows != len(names) * table.num_rows - (not ends_with_newline):
            return None  # a tab among spaces, a control character: a byte str.split splits on
        if high and not _utf8_words(text):
            return None  # not UTF-8, or Unicode whitespace
        first = line.rstrip(b"\r").split(delimiter)
        queries, docs, column = table["qid"], table["docid"], table[value]
        del table, text
        read = _values(column)
        del column
        if read is None:
            return None
        rows = build_table(queries, docs, *read)
        del queries, docs, read
        if any(qid[0] == "#" for qid in rows.query_ids) or shared_hash(rows):
            return None  # a comment line; a duplicate or a collision
    except (UnicodeDecodeError, pyarrow.ArrowException):
        return None
    except (OSError, EOFError, gzip.BadGzipFile):
        return None
    return rows, first


def read_qrels_columns(path: str | os.PathLike[str], *, large_only: bool = True) -> Qrels | None:
    """Columnar :class:`~evalbridge.model.data.Qrels` of a TREC qrels file, or None for the strict reader.

    Args:
        path: the file (plain or gzip), as :func:`evalbridge.io.trec.read_qrels` reads it.
        large_only: decline a file too small to be worth it (:func:`large_enough`).
    """
    if not worth_reading(path, large_only):
        return None
    import pyarrow as pa

    from ..model.data import Qrels

    read = _read(path, _QRELS, {"qid": _QUERY_TYPE(), "docid": pa.string(), "rel": pa.string()}, "rel")
    return None if read is None else Qrels(read[0], source=str(Path(path)))


def read_run_columns(path: str | os.PathLike[str], *, large_only: bool = True, name: str | None = None) -> Run | None:
    """Columnar :class:`~evalbridge.model.data.Run` of a TREC run file, or None for the strict reader.

    Args:
        path: the file (plain or gzip), as :func:`evalbridge.io.trec.read_run` reads it.
        large_only: decline a file too small to be worth it (:func:`large_enough`).
        name: the run's name; default the tag of its first line, as ``read_run``.
    """
    if not worth_reading(path, large_only):
        return None
    import pyarrow as pa

    from ..model.data import Run

    read = _read(path, _RUN, {"qid": _QUERY_TYPE(), "docid": pa.string(), "score": pa.float64()}, "score")
    if read is None:
        return None
    rows, first = read
    return Run(rows, name=name if name is not None else first[5].decode(),
               source=str(Path(path)))
