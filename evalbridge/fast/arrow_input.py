"""Two Arrow tables (qrels rows and run rows) laid out as :class:`~evalbridge.fast.Columns`, for
:mod:`evalbridge.spark`'s buckets (and any caller holding Arrow tables of rows in any order).

A thin layer over :mod:`evalbridge.fast.rows`, which every columnar door uses: the columns are
checked here (present, no nulls, string or integer ids, finite numbers) with messages that name
the table rather than a file, each table becomes a :class:`~evalbridge.model.columnar.RowTable`
(:func:`~evalbridge.fast.rows.build_table`), a (query, doc) given twice is refused
(:func:`~evalbridge.fast.rows.duplicate_pairs`), and the two are paired
(:func:`~evalbridge.fast.rows.pair`). So :func:`columns_from_arrow` gives exactly what
:func:`~evalbridge.fast.from_mappings` gives for the equivalent dicts of dicts (every row added in
table order): the evaluated queries in the order they first appear in the qrels, each query's run
rows in table order, its qrels rows in table order, the hits (retrieved documents with a non-zero
grade) and the retrieved documents judged 0 (``zero_*``) in qrels order, and the pooled run rows
(``pool_rows``: docs judged for some query of the qrels table, for ``Hole``). Rows of one query
need not be adjacent. Nothing runs in Python per row or per query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from .columns import Columns

if TYPE_CHECKING:
    import pyarrow as pa

    from ..model.columnar import RowTable

__all__ = ["TablePair", "TableProblem", "pair_from_arrow", "columns_from_arrow"]

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
        columns: the evaluated queries (in both tables), as :func:`~evalbridge.fast.from_mappings` gives them.
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


def _read(table: pa.Table, side: str, query: str, doc: str, value: str, role: str, option: str) -> RowTable:
    """One table checked and built into a :class:`RowTable` (duplicates not checked yet)."""
    import pyarrow as pa

    from .rows import build_table

    queries, query_kind = _ids(table, side, query, "query id", "query")
    docs, doc_kind = _ids(table, side, doc, "doc id", "doc")
    values = _values(table, side, value, role, option, queries, docs)
    integral = pa.types.is_integer(table.schema.field(value).type)
    return build_table(queries, docs, values, integral, query_kind=query_kind, doc_kind=doc_kind)


def _check_distinct(rows: RowTable, side: str) -> None:
    """Raise :class:`TableProblem` naming the first (query, doc) given twice (the earliest repeat)."""
    from .rows import duplicate_pairs

    first, repeat = duplicate_pairs(rows)
    if len(repeat) == 0:
        return
    b = int(repeat.min())
    a = int(first[repeat == b].min())
    what = "grade" if side == "qrels" else "score"
    raise TableProblem(side, f"doc {rows.docs[a].as_py()!r} is given twice ({len(repeat)} duplicate "
                       f"(query, doc) pair(s) in all).", rows=[a, b],
                       query_id=rows.query_ids[int(rows.codes(np.array([a]))[0])],
                       fix=f"keep one row per (query, doc): each document has one {what} per query.")


def _check_kinds(qrels: RowTable, run: RowTable) -> None:
    """Refuse int ids on one side and str ids on the other (each side's first ids shown), as
    :func:`evalbridge.evaluation.evaluating.check_compatible`."""
    from ..model.ids import kinds_error

    for what, q, r in (("query", qrels.query_kind, run.query_kind), ("doc", qrels.doc_kind, run.doc_kind)):
        if q != r:
            seen = [list(dict.fromkeys(map(str, rows.query_ids[:3] if what == "query" else rows.docs[:3].to_pylist())))
                    for rows in (qrels, run)]
            raise kinds_error(what, [("the qrels table", (q,), seen[0]), ("the run table", (r,), seen[1])],
                              fix=f"give both the same id type, e.g. cast every {what} id to string.")


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
    from .rows import pair

    qrels_rows = _read(qrels, "qrels", query, doc, relevance, "grade", "relevance")
    run_rows = _read(run, "run", query, doc, score, "score", "score")
    _check_kinds(qrels_rows, run_rows)
    _check_distinct(qrels_rows, "qrels")
    _check_distinct(run_rows, "run")
    return TablePair(columns=pair(qrels_rows, run_rows),
                     missing_from_run=[q for q in qrels_rows.query_ids if q not in run_rows.ids],
                     run_only=[q for q in run_rows.query_ids if q not in qrels_rows.ids])
