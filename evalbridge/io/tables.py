"""Tables: CSV, TSV, Parquet files and pandas / Arrow / Polars tables in memory, one row per (query, doc).

Every table becomes an Arrow table first (files are read by ``pyarrow``; Polars converts without a
copy; pandas through ``pyarrow.Table.from_pandas``) and is read by one function, so every table
door has the same rules:

* columns are named with ``query=``, ``doc=``, ``grade=`` (qrels) / ``score=`` (runs), or picked
  among the usual names (:mod:`.fields`: BEIR's ``query-id, corpus-id, score`` included);
* ids are strings or integers, never floats (``1.0`` would only look like ``1``): a float id
  column is refused with the fix; values are finite numbers (integers stay integers);
* an empty cell, a duplicate (query, doc), an empty file or a file that is not the format gives
  an :class:`~evalbridge.errors.InputError` naming the file and line (or the table row);
* CSV / TSV text is UTF-8 (a BOM is removed and noted); gzip is read by its magic bytes;
* the result is columnar (a :class:`~evalbridge.model.columnar.RowTable`, checked with vectorised passes:
  no Python object per row), what the fast backend reads as it is.

Two more TSV shapes have no header: MS MARCO runs ``qid docid rank`` (``msmarco``: scores from
ranks, ``max_rank + 1 - rank`` per query) and TREC files (:mod:`.trec`); the registry tells them
apart from a header table by the first line.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model.data import Qrels, Run
from . import distances, fields, ranks
from .policies import dropped_note, keep_first
from .text import BOM, BOM_NOTE, bad_utf8_line, read_bytes

__all__ = ["read_table", "read_delimited", "read_parquet", "read_msmarco", "to_arrow", "write_table",
           "write_msmarco", "FORMATS"]

_KIND: dict[str, type[Qrels] | type[Run]] = {"qrels": Qrels, "run": Run}


def _where(source: str | None, row: int, header: bool) -> tuple[str | None, int | None, str]:
    """(source, line, text) of a 0-based data row: a file line, or a table row."""
    if source is None:
        return None, None, f"row {row}"
    return source, row + (2 if header else 1), ""


def _id_column(table: Any, name: str, source: str | None, header: bool) -> tuple[Any, str]:
    """The ids of a column as a pyarrow string (or dictionary of strings) array, and their kind:
    ``"str"``, or ``"int"`` for integers (written as ``str()`` writes them)."""
    import pyarrow as pa

    column = table.column(name)
    kind = column.type
    if pa.types.is_dictionary(kind) and not _is_text(kind.value_type):
        column = column.cast(kind.value_type)
        kind = kind.value_type
    if pa.types.is_floating(kind):
        values = column.to_pylist()
        bad = next((i for i, v in enumerate(values) if v is not None), 0)
        src, line, text = _where(source, bad, header)
        raise InputError(f"the id column {name!r} holds floats (e.g. {values[bad]!r}{' in ' + text if text else ''}); "
                         f"an id like 1.0 only looks like 1 or '1'.", source=src, line=line,
                         fix="store ids as strings (or integers), e.g. df[col].astype(str) before the missing values "
                             "turned the column into floats.")
    if pa.types.is_integer(kind):
        return column.cast(pa.string()), "int"
    if pa.types.is_string_view(kind):
        return column.cast(pa.large_string()), "str"
    if not (_is_text(kind) or pa.types.is_dictionary(kind)):
        raise InputError(f"the id column {name!r} holds {kind} values; ids are strings or integers.", source=source,
                         fix="convert the ids to strings.")
    return column, "str"


def _is_text(kind: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind))


def _value_column(table: Any, name: str, source: str | None, header: bool) -> tuple[Any, bool]:
    """The values of a column (a pyarrow numeric column, finite) and whether they are integers; text is
    read by the one number rule (:mod:`.numbers`), booleans are refused."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..common.values import number_error, parse_column

    def where(row: int) -> dict[str, Any]:
        src, line, text = _where(source, row, header)
        return {"at": text, "source": src, "line": line}

    column = table.column(name)
    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
        kind = column.type
    if _is_text(kind):  # text files: read as text, parsed here
        if pa.types.is_string_view(kind):
            column = column.cast(pa.large_string())
        column, integral = parse_column(column, label=name, where=where)
        return column, integral
    if pa.types.is_boolean(kind):
        raise number_error(name, repr(column[0].as_py()), "is not a number: the column holds booleans",
                           f"give the {name!r} column as numbers (1 / 0), e.g. df[{name!r}].astype(int).", **where(0))
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        raise InputError(f"the value column {name!r} holds {kind} values, not numbers.", source=source,
                         fix="give grades / scores as numbers.")
    if pa.types.is_floating(kind):
        finite = pc.is_finite(column)
        if not pc.all(finite).as_py():
            i = pc.index(finite, False).as_py()
            raise number_error(name, repr(column[i].as_py()), "is not a finite number",
                               "remove the row or give it a finite value.", **where(i))
        return column, False
    return column, True


def _check_ranks(values: Any, integral: bool, name: str, source: str | None, header: bool) -> None:
    """Ranks are whole numbers >= 1 (their row, value and fix otherwise); ``integral``: the column holds integers."""
    import numpy as np

    if len(values) == 0 or integral and float(values.min()) >= 1:
        return
    bad = (values < 1) | (values != np.floor(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        src, line, at = _where(source, row, header)
        value = values[row]
        ranks.rank_value(int(value) if value == int(value) else float(value), label=name, at=at, source=src,
                         line=line)


def _duplicate_error(rows: Any, first: int, repeat: int, source: str | None, header: bool) -> InputError:
    """The error naming the first (query, doc) given twice: both rows (tables) or lines (files)."""
    import numpy as np

    qid = rows.query_ids[int(rows.codes(np.array([repeat]))[0])]
    doc: Any = rows.docs[repeat].as_py()
    shown_qid: Any = int(qid) if rows.query_kind == "int" else qid
    doc = int(doc) if rows.doc_kind == "int" else doc
    src, line, _ = _where(source, repeat, header)
    at = f"rows {first} and {repeat}" if source is None else f"lines {_where(source, first, header)[1]} and {line}"
    return InputError(f"doc {doc!r} appears twice for query {shown_qid!r} ({at}).", source=src, line=line,
                      query_id=qid, fix="drop the duplicates (e.g. df.drop_duplicates([query, doc])) after choosing "
                                        "which to keep, or keep the first of each with duplicates='first' (runs); evalbridge does not "
                                        "pick one silently.")


def read_table(table: Any, kind: str, options: Mapping[str, Any], *, source: str | None = None,
               header: bool = True, notes: tuple[str, ...] = ()) -> Qrels | Run:
    """Qrels or a Run from an Arrow table with one row per (query, doc), in columns (no Python object
    per row): the result is columnar (:class:`~evalbridge.model.columnar.RowTable`), as the engine reads it.
    Integer values beyond 2**53, which float64 cannot hold exactly, are kept exactly in ``dict`` rows.
    ``ids="str"``: int id columns are recorded as strings; ``duplicates="first"``: the rows repeating an
    earlier (query, doc) are dropped, in columns, and counted in the notes."""
    import numpy as np
    import pyarrow as pa

    from ..fast.rows import EXACT_LIMIT, build_table, duplicate_pairs, first_duplicate

    if table.num_rows == 0:
        raise InputError("the table has no rows.", source=source,
                         fix="give one row per (query, doc); check the path or the filter before.")
    names, picked = fields.pick(table.column_names, kind, options, where=source)
    role = fields.order_role(names, kind)
    for name in (names["query"], names["doc"], names[role]):
        nulls = table.column(name).null_count
        if nulls:
            import pyarrow.compute as pc

            row = pc.index(pc.is_null(table.column(name)), True).as_py()
            src, line, where = _where(source, row, header)
            raise InputError(f"column {name!r} is empty{' in ' + where if where else ''}.", source=src, line=line,
                             fix="drop or fill the incomplete rows first.")
    queries, query_kind = _id_column(table, names["query"], source, header)
    docs, doc_kind = _id_column(table, names["doc"], source, header)
    if options.get("ids") == "str":
        query_kind = doc_kind = "str"
    column, integral = _value_column(table, names[role], source, header)
    values = np.asarray(column.cast(pa.float64(), safe=False).to_numpy(), dtype=np.float64)
    if role == "rank":
        _check_ranks(values, integral is True, names[role], source, header)
    if pa.types.is_dictionary(docs.type):
        docs = docs.cast(docs.type.value_type)
    rows = build_table(queries, docs, values, integral, query_kind=query_kind, doc_kind=doc_kind)
    duplicate = first_duplicate(rows)
    if duplicate is not None:
        if not keep_first(options.get("duplicates")):
            raise _duplicate_error(rows, *duplicate, source, header)
        repeats = np.unique(duplicate_pairs(rows)[1])
        keep = np.ones(table.num_rows, dtype=bool)
        keep[repeats] = False
        rest = {k: v for k, v in options.items() if k != "duplicates"}
        return read_table(table.filter(pa.array(keep)), kind, {**rest, **names}, source=source, header=header,
                          notes=(*notes, *picked, *dropped_note(len(repeats))))
    made = _KIND[kind]
    if role == "rank":
        rows = ranks.table_from_ranks(rows, place=lambda row: _where(source, row, header))
        return made(rows, source=source, notes=(*notes, *picked, ranks.note(names[role])))
    if role == "distance":
        rows = distances.table_from_distances(rows)
        return made(rows, source=source, notes=(*notes, *picked, distances.note(names[role])))
    if kind == "run" and integral is True and ranks.rising_in_rows(rows):
        picked = (*picked, ranks.warn_rising(names[role], stacklevel=4))
    if len(values) and not float(np.abs(values).max()) < EXACT_LIMIT:  # ints float64 cannot hold: dict rows
        exact: dict[Any, dict[Any, Any]] = {}
        for qid, doc, value in zip(table.column(names["query"]).to_pylist(), table.column(names["doc"]).to_pylist(),
                                   column.to_pylist()):
            exact.setdefault(qid, {})[doc] = value
        return made(exact, source=source, notes=(*notes, *picked))
    return made(rows, source=source, notes=(*notes, *picked))


# ---------------------------------------------------------------- files

def _header(data: bytes, delimiter: str) -> list[str]:
    """The column names of the first line (quoted names unquoted, as the CSV reader reads the rows)."""
    import csv as csv_module

    line = data.split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", errors="replace")
    return next(csv_module.reader([line], delimiter=delimiter))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_header(names: list[str], kind: str, options: Mapping[str, Any], source: str, delimiter: str) -> None:
    """Refuse a first line that is data, not column names (a BEIR qrels TSV saved without its
    ``query-id corpus-id score`` line): said as a missing header, with the header to add."""
    try:
        fields.pick(names, kind, options, where=source)
    except InputError:
        if not any(_is_number(name) for name in names):
            raise
        tab = delimiter == "\t"
        value = "score" if tab or kind == "run" else "relevance"
        header = delimiter.join(("query-id", "corpus-id", value) if tab else ("query_id", "doc_id", value))
        shown = ("<TAB>" if tab else delimiter).join(names)
        trec = (" (a TREC qrels file, `qid 0 docid rel`, is read as format trec)"
                if len(names) == 4 and kind == "qrels" else "")
        raise InputError(f"the file has no header line: its first line {shown!r:.80} is data, not column names{trec}.",
                         source=source, line=1,
                         fix=f"add a header line naming the columns as the first line, e.g. "
                             f"{header.replace(chr(9), '<TAB>')!r}{' (BEIR)' if tab else ''}.") from None


def read_delimited(path: Path, kind: str, options: Mapping[str, Any], *, delimiter: str) -> Qrels | Run:
    """A CSV / TSV file with a header line, every column read as text first."""
    import pyarrow as pa
    from pyarrow import csv

    data = read_bytes(path)
    notes: tuple[str, ...] = ()
    if data.startswith(BOM):
        data, notes = data[len(BOM):], (BOM_NOTE,)
    if not data.strip():
        raise InputError("the file is empty.", source=str(path),
                         fix="a table file has a header line (e.g. query_id,doc_id,score) and one row per (query, doc).")
    bad = bad_utf8_line(data)
    if bad is not None:
        raise InputError(f"the file is not UTF-8 text: {bad[1]}.", source=str(path), line=bad[0],
                         fix="re-save the file as UTF-8.")
    names = _header(data, delimiter)
    _check_header(names, kind, options, str(path), delimiter)
    try:
        table = csv.read_csv(pa.py_buffer(data), read_options=csv.ReadOptions(column_names=names, skip_rows=1),
                             parse_options=csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
                             convert_options=csv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                                strings_can_be_null=True,
                                                                null_values=[""]))
    except pa.ArrowInvalid as error:
        raise InputError(f"not a {'TSV' if delimiter == chr(9) else 'CSV'} table: {error}.", source=str(path),
                         fix=f"check the delimiter ({delimiter!r}) and that every line has {len(names)} fields.") \
            from None
    return read_table(table, kind, options, source=str(path), header=True, notes=notes)


def read_parquet(path: Path, kind: str, options: Mapping[str, Any]) -> Qrels | Run:
    """A Parquet file (Hugging Face datasets export theirs as Parquet)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"not a readable Parquet file ({error}).", source=str(path),
                         fix="check the path; write the file with pandas.to_parquet or pyarrow.parquet.") from None
    return read_table(table, kind, options, source=str(path), header=True)


def read_msmarco(path: Path, kind: str, options: Mapping[str, Any]) -> Run:
    """An MS MARCO run: ``qid<TAB>docid<TAB>rank`` lines, no header; scores ``max_rank + 1 - rank``."""
    from ..common.values import parse
    from .ranks import scores_from_ranks
    from .text import Lines

    ranks: dict[str, dict[str, int]] = {}
    lines = Lines(path)
    for n, line in lines:
        words = line.split()
        if not words:
            continue
        if len(words) != 3:
            raise InputError(f"expected 3 columns (qid docid rank), got {len(words)}: {line.strip()!r:.80}.",
                             source=str(path), line=n, fix="an MS MARCO run line is `qid<TAB>docid<TAB>rank`.")
        qid, doc, rank = words
        number = parse(rank, label="the rank", source=str(path), line=n, query_id=qid)
        if not isinstance(number, int) or number < 1:
            raise InputError(f"rank {rank!r} is not a whole number >= 1.", source=str(path), line=n, query_id=qid,
                             fix="column 3 holds the rank, starting at 1.")
        value = number
        docs = ranks.setdefault(qid, {})
        if doc in docs:
            raise InputError(f"doc {doc!r} appears twice for query {qid!r}.", source=str(path), line=n, query_id=qid,
                             fix="remove the duplicate line.")
        if value in docs.values():
            raise InputError(f"rank {value} is given twice for query {qid!r}.", source=str(path), line=n,
                             query_id=qid, fix="each document of a query has its own rank.")
        docs[doc] = value
    if not ranks:
        raise InputError("the file has no run lines.", source=str(path), fix="check the path.")
    scores = {qid: scores_from_ranks(docs) for qid, docs in ranks.items()}  # (ranks given twice: refused above)
    return Run(scores, source=str(path), notes=(*lines.notes, "MS MARCO ranks turned into scores max_rank + 1 - rank"))


# ---------------------------------------------------------------- in memory

def _library(obj: object) -> str:
    return type(obj).__module__.split(".")[0]


def to_arrow(obj: Any) -> Any:
    """An Arrow table from a pandas DataFrame, a Polars DataFrame or an Arrow table (or record batch)."""
    import pyarrow as pa

    library = _library(obj)
    if library == "polars":
        return obj.to_arrow()
    if isinstance(obj, pa.RecordBatch):
        return pa.Table.from_batches([obj])
    if isinstance(obj, pa.Table):
        return obj
    try:
        return pa.Table.from_pandas(obj, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as error:
        raise InputError(f"the DataFrame cannot be read as a table: {error}.",
                         fix="give each column one type (ids as str, values as numbers).") from None
    except OverflowError:  # an object column holding an int beyond 64 bits
        raise InputError("a column of the DataFrame holds an integer too large for a number (beyond 64 bits).",
                         fix="scores and grades are finite numbers: rescale the column, or drop the row.") from None


def _is_table(obj: object) -> bool:
    name, library = type(obj).__name__, _library(obj)
    return (library == "pandas" and name == "DataFrame") or (library == "polars" and name == "DataFrame") or (
        library == "pyarrow" and name in ("Table", "RecordBatch"))


# ---------------------------------------------------------------- writing

def _frame(obj: Qrels | Run) -> Any:
    import pyarrow as pa

    value = "relevance" if isinstance(obj, Qrels) else "score"
    queries = [qid for qid, docs in obj.items() for _ in range(len(docs))]
    docs = [doc for row in obj.values() for doc in row]
    values = [v for row in obj.values() for v in row.values()]
    return pa.table({"query_id": pa.array(queries, pa.string()), "doc_id": pa.array(docs, pa.string()),
                     value: pa.array(values)})


def write_table(obj: Qrels | Run, path: Path, *, fmt: str) -> None:
    """Write ``query_id, doc_id, relevance|score`` as CSV, TSV or Parquet."""
    import pyarrow.parquet as pq
    from pyarrow import csv

    table = _frame(obj)
    if fmt == "parquet":
        pq.write_table(table, path)
        return
    # quoted when needed, so ids with delimiters, quotes or newlines read back as written
    options = csv.WriteOptions(delimiter="\t" if fmt == "tsv" else ",", quoting_style="needed")
    if path.suffix.lower() == ".gz":
        import pyarrow as pa

        with pa.CompressedOutputStream(str(path), "gzip") as out:
            csv.write_csv(table, out, write_options=options)
        return
    csv.write_csv(table, path, write_options=options)


def write_msmarco(obj: Run, path: Path) -> None:
    """Write a run as ``qid<TAB>docid<TAB>rank`` lines, in rank order."""
    from ..common.ranking import rank
    from .text import open_text
    from .trec import check_ids

    with open_text(path) as f:
        for qid, scores in obj.items():
            check_ids("MS MARCO run", qid, scores)
            f.write("".join(f"{qid}\t{doc}\t{i}\n" for i, doc in enumerate(rank(scores), 1)))


# ---------------------------------------------------------------- the formats

def _sniff_header(first: bytes) -> bool:
    """A header line naming a query column and a doc column (tab-separated)."""
    line = first.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r").decode("utf-8", errors="replace")
    names = set(line.split("\t"))
    return bool(names & set(fields.CANDIDATES["query"])) and bool(names & set(fields.CANDIDATES["doc"]))


def _sniff_msmarco(first: bytes) -> bool:
    for raw in first.split(b"\n")[:20]:
        words = raw.split()
        if words:
            return len(words) == 3 and words[2].isdigit()
    return False


def _reader(read: Any) -> Any:
    def parsed(source: Any, kind: str, options: Mapping[str, Any]) -> Any:
        from .registry import Parsed

        obj = read(source, kind, options)
        return Parsed(qrels=obj) if kind == "qrels" else Parsed(run=obj)
    return parsed


def _writer(fmt: str) -> Any:
    return lambda obj, path, options: write_table(obj, path, fmt=fmt)


def _parquet_on_spark(session: Any, path: Any) -> Any:  # noqa: ANN401 - SparkSession, DataFrame
    """A Parquet file, or a folder of Parquet files (as Spark and data lakes write them), read by Spark
    (``engine: spark``; :mod:`.spark_tables` holds the rest of Spark's side of the inputs)."""
    from pyspark.errors import PySparkException

    try:
        return session.read.parquet(str(path))
    except PySparkException as error:
        raise InputError(f"Spark cannot read Parquet from {str(path)!r} ({str(error).splitlines()[0]}).",
                         source=str(path), fix="give a Parquet file or a folder of Parquet files.") from None


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    from .registry import policy_options

    both = frozenset({"qrels", "run"})
    roles = {**fields.ROLE_OPTIONS, **policy_options("ids", "duplicates")}
    return (
        Format("csv", "CSV with a header, one row per (query, doc)", both,
               _reader(lambda p, k, o: read_delimited(Path(p), k, o, delimiter=",")), suffixes=(".csv",),
               options=roles, write=_writer("csv"), example='eb.read_run("run.csv", query="qid", doc="docno")'),
        Format("tsv", "TSV with a header, one row per (query, doc)", both,
               _reader(lambda p, k, o: read_delimited(Path(p), k, o, delimiter="\t")), suffixes=(".tsv",),
               options=roles, write=_writer("tsv"), sniff=_sniff_header,
               example='eb.read_qrels("qrels.tsv")'),
        Format("beir", "BEIR qrels TSV `query-id corpus-id score` with its header", frozenset({"qrels"}),
               _reader(lambda p, k, o: read_delimited(Path(p), k, {"query": "query-id", "doc": "corpus-id",
                                                                   "grade": "score", **o}, delimiter="\t")),
               options={k: v for k, v in roles.items() if k not in fields.ORDER_ROLES[1:]},  # (qrels only)
               example='eb.read_qrels("qrels.tsv", format="beir")'),
        Format("msmarco", "MS MARCO run TSV `qid docid rank`, no header (scores from ranks)", frozenset({"run"}),
               _reader(lambda p, k, o: read_msmarco(Path(p), k, o)), suffixes=(".tsv",),
               write=lambda obj, path, options: write_msmarco(obj, path), sniff=_sniff_msmarco,
               example='eb.read_run("run.dev.tsv")'),
        Format("parquet", "Parquet table, one row per (query, doc)", both,
               _reader(lambda p, k, o: read_parquet(Path(p), k, o)), suffixes=(".parquet", ".pq"), options=roles,
               write=_writer("parquet"), example='eb.read_qrels("qrels.parquet")', spark=_parquet_on_spark),
        Format("table", "pandas / Polars DataFrame or Arrow table, one row per (query, doc)", both,
               _reader(lambda obj, k, o: read_table(to_arrow(obj), k, o, source=None, header=False)),
               options=roles, accepts=_is_table,
               example='eb.read_run(pd.DataFrame({"qid": ["q1", "q1"], "docno": ["d1", "d2"], "sim": [0.9, 0.4]}), query="qid", doc="docno", score="sim")'),
    )


FORMATS = _formats()
