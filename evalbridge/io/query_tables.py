"""Tables of queries (one row per query: its id and fields, such as a slice label), read by the formats' own rules.

A query table is a CSV / TSV file with a header, a Parquet file, a JSON Lines file (one object per query), or a
pandas / Arrow / Polars table in memory. It is read as every table of the format registry is
(:mod:`.tables`, :mod:`.jsonl`): CSV and TSV cells are text (``095`` stays ``095``: no type is guessed),
integer ids are written as ``str()`` writes them and float ids are refused (``95.0`` only looks like ``95``),
a file that is not its format (junk Parquet, a bad JSON line, invalid UTF-8) is an
:class:`~evalbridge.errors.InputError` naming the file and line and the fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["QueryTable", "read_query_table", "QUERY_TABLE_SUFFIXES"]

#: suffix -> the registry format a query table of that suffix is read as
QUERY_TABLE_SUFFIXES = {".csv": "csv", ".tsv": "tsv", ".txt": "tsv", ".parquet": "parquet", ".pq": "parquet",
                        ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass(frozen=True)
class QueryTable:
    """The columns of a query table, each a list of Python values (text for CSV / TSV cells), and where each row
    is (``lines``: the file line of each row, or None for a table in memory)."""

    columns: Mapping[str, Sequence[Any]]
    source: str | None
    lines: Sequence[int] | None

    def place(self, row: int) -> str:
        """``file:line`` of a 0-based row, or ``row N`` of a table in memory."""
        return f"{self.source}:{self.lines[row]}" if self.source and self.lines is not None else f"row {row + 1}"

    def ids(self, name: str) -> list[str | None]:
        """The query ids of the column ``name`` as text (None for an empty cell); float ids are refused."""
        out: list[str | None] = []
        for row, value in enumerate(self.columns[name]):
            if isinstance(value, bool) or isinstance(value, float):
                raise InputError(f"the query id {value!r} ({self.place(row)}) is not a text or an integer; an id "
                                 f"like 95.0 only looks like 95 or '095'.", source=self.source,
                                 fix="store the ids as text (e.g. df[col].astype(str) before the missing values "
                                     "turned the column into floats).")
            out.append(None if value is None or value == "" else str(value))
        return out


def _delimited(path: Path, delimiter: str) -> QueryTable:
    import pyarrow as pa
    from pyarrow import csv

    from .tables import _header
    from .text import BOM, bad_utf8_line, read_bytes

    data = read_bytes(path)
    if data.startswith(BOM):
        data = data[len(BOM):]
    if not data.strip():
        raise InputError("the query table is empty.", source=str(path),
                         fix="a header line (e.g. query_id,category), then one query per line.")
    bad = bad_utf8_line(data)
    if bad is not None:
        raise InputError(f"the file is not UTF-8 text: {bad[1]}.", source=str(path), line=bad[0],
                         fix="re-save the file as UTF-8.")
    names = _header(data, delimiter)
    try:
        table = csv.read_csv(pa.py_buffer(data), read_options=csv.ReadOptions(column_names=names, skip_rows=1),
                             parse_options=csv.ParseOptions(delimiter=delimiter),
                             convert_options=csv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                                strings_can_be_null=True, null_values=[""]))
    except pa.ArrowInvalid as error:
        shown = "TSV" if delimiter == "\t" else "CSV"
        raise InputError(f"not a {shown} query table: {str(error).splitlines()[0]}.", source=str(path),
                         fix=f"a header line, then one query per line, each with {len(names)} fields separated by "
                             f"{'a tab' if delimiter == chr(9) else 'commas'}.") from None
    return QueryTable({n: table.column(n).to_pylist() for n in names}, str(path),
                      list(range(2, table.num_rows + 2)))


def _parquet(path: Path) -> QueryTable:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"not a readable Parquet file ({str(error).splitlines()[0]}).", source=str(path),
                         fix="write the query table with pandas.to_parquet or pyarrow.parquet, or give it as "
                             "CSV / TSV / JSON Lines.") from None
    return QueryTable({str(n): table.column(n).to_pylist() for n in table.column_names}, str(path),
                      list(range(1, table.num_rows + 1)))


def _json_lines(path: Path) -> QueryTable:
    from .jsonl import loads
    from .text import Lines

    rows: list[Mapping[str, Any]] = []
    lines: list[int] = []
    for n, line in Lines(path):
        if not line.strip():
            continue
        obj = loads(line, source=str(path), line=n)
        if not isinstance(obj, dict):
            raise InputError(f"a line of the query table holds a {type(obj).__name__}, not a JSON object.",
                             source=str(path), line=n, fix="one JSON object per query, e.g. "
                                                           '{"query_id": "095", "category": "billing"}.')
        rows.append(obj)
        lines.append(n)
    if not rows:
        raise InputError("the query table is empty.", source=str(path), fix="one JSON object per query.")
    names = list(dict.fromkeys(k for row in rows for k in row))
    return QueryTable({n: [row.get(n) for row in rows] for n in names}, str(path), lines)


def read_query_table(table: Any) -> QueryTable:
    """A query table from a path (CSV, TSV, Parquet, JSON Lines; gzip too) or a pandas / Arrow / Polars table.

    Raises:
        InputError: a missing file, a suffix no query table has, a file that is not its format (file:line and
            the fix), an object that is no table.
    """
    if isinstance(table, (str, os.PathLike)):
        from .registry import suffix_of
        from .text import NOT_A_FILE, not_a_file

        path = Path(table)
        fault = not_a_file(path)
        if fault is not None:
            raise InputError(f"the query table cannot be read: {NOT_A_FILE[fault]}.", source=str(path),
                             fix="give the path of a CSV / TSV / Parquet / JSON Lines file of queries.")
        fmt = QUERY_TABLE_SUFFIXES.get(suffix_of(path))
        if fmt is None:
            raise InputError(f"the query table {path.name!r} is not a {', '.join(QUERY_TABLE_SUFFIXES)} file.",
                             source=str(path), fix="give the queries as a table with a header (e.g. queries.csv).")
        if fmt == "parquet":
            return _parquet(path)
        if fmt == "jsonl":
            return _json_lines(path)
        return _delimited(path, "," if fmt == "csv" else "\t")
    from .tables import to_arrow

    try:
        data = to_arrow(table)
    except (InputError, TypeError, ValueError):
        raise InputError(f"a query table is a file or a pandas / Arrow / Polars table; got {type(table).__name__}.",
                         fix="pass e.g. ('queries.csv', 'category').") from None
    return QueryTable({str(n): data.column(n).to_pylist() for n in data.column_names}, None, None)
