"""Inputs Spark reads: a table of the session's catalog (``spark-table``), Parquet files and folders.

With ``engine: spark`` (a config) or ``--engine spark`` (``evalbridge eval``), every input of an
evaluation becomes a Spark DataFrame with the columns ``query_id, doc_id, relevance`` (qrels) or
``query_id, doc_id, score`` (runs), evaluated by :func:`evalbridge.spark.evaluate`:

* a format with a Spark reader (:attr:`~evalbridge.io.registry.Format.spark`) is read by Spark
  itself, on the executors: ``spark-table`` (``session.table(name)``) and ``parquet`` (a file, or a
  folder of files as Spark writes them, ``session.read.parquet``);
* any other format is read here, by its own reader (so every check and message is the usual
  one), and handed to Spark (``session.createDataFrame`` of an Arrow table).

Columns are picked as for any table (:func:`evalbridge.io.fields.pick`: ``query=``, ``doc=``,
``grade=`` / ``score=``, else the usual names). Outside ``engine: spark``, ``eb.read_run(name,
format="spark-table")`` reads a table of the active session into memory (it is collected).

pyspark is imported only inside the functions here.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ..errors import BackendUnavailableError, InputError
from . import fields

__all__ = ["active_session", "read_spark_table", "pick_columns", "local_frame", "FORMATS", "pyspark_sql",
           "quiet_pandas_warning", "MIN_PYSPARK", "INSTALL_HINT"]

#: ``cogroup(...).applyInArrow`` appeared in Spark 4.0.
MIN_PYSPARK = (4, 0)
INSTALL_HINT = "pip install 'evalbridge[spark]'  (pyspark >= 4.0, and Java 17 or 21 on the machine)"


def pyspark_sql() -> Any:  # noqa: ANN401 - the pyspark.sql module
    """pyspark.sql, or :class:`BackendUnavailableError` with the install hint."""
    try:
        import pyspark
        import pyspark.sql
    except ImportError:
        raise BackendUnavailableError(f"evalbridge.spark needs pyspark, which is not installed. Fix: {INSTALL_HINT}.") \
            from None
    found = tuple(int(p) for p in pyspark.__version__.split(".")[:2] if p.isdigit())
    if found < MIN_PYSPARK:
        raise BackendUnavailableError(
            f"evalbridge.spark needs pyspark >= {'.'.join(map(str, MIN_PYSPARK))} (cogroup(...).applyInArrow); "
            f"found {pyspark.__version__}. Fix: {INSTALL_HINT}.")
    return pyspark.sql


@contextmanager
def quiet_pandas_warning() -> Iterator[None]:
    """pyspark warns about the pandas version on Arrow paths too; evalbridge.spark does not use pandas."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
        yield

#: the column names every Spark input is given (what :func:`evalbridge.spark.evaluate` reads by default)
COLUMNS = {"query": "query_id", "doc": "doc_id", "grade": "relevance", "score": "score"}


def _spark_errors() -> tuple[type[BaseException], ...]:
    from pyspark.errors import PySparkException

    return (PySparkException,)


def active_session() -> Any:  # noqa: ANN401 - pyspark.sql.SparkSession
    """The active Spark session, or an :class:`InputError` saying how to get one."""

    sql = pyspark_sql()
    session = sql.SparkSession.getActiveSession()
    if session is None:
        raise InputError("a spark-table is read through the active Spark session, and there is none.",
                         fix="start one first (SparkSession.builder.getOrCreate()), or evaluate with engine: spark "
                             "(config) / --engine spark, which starts one.")
    return session


def read_spark_table(session: Any, name: Any) -> Any:  # noqa: ANN401 - SparkSession, DataFrame
    """``session.table(name)``, or an :class:`InputError` naming the catalog's closest tables."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"a spark-table is named by a non-empty string (catalog.schema.table); got {name!r}.",
                         fix="write e.g. table: lake.eval.qrels.")
    try:
        exists = session.catalog.tableExists(name)
    except _spark_errors() as error:
        raise InputError(f"{name!r} is not a table name Spark can read ({str(error).splitlines()[0]}).",
                         fix="write the table as catalog.schema.table or schema.table.") from None
    if not exists:
        try:
            known = [t.name if t.namespace is None or t.isTemporary else f"{'.'.join(t.namespace)}.{t.name}"
                     for t in session.catalog.listTables()]
        except _spark_errors():
            known = []
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.5)
        listed = ", ".join(sorted(known)[:10]) + (" ..." if len(known) > 10 else "") if known else "none"
        raise InputError(f"the Spark session has no table {name!r} (tables of the current database: {listed}).",
                         fix=(f"did you mean {close[0]!r}? " if close else "")
                             + "check the name, or the session's catalog and database (spark.catalog.setCurrentDatabase).")
    return session.table(name)


def pick_columns(frame: Any, kind: str, options: Mapping[str, Any], *, where: str | None) -> Any:  # noqa: ANN401
    """``frame`` with its query, doc and grade / score columns picked (:func:`.fields.pick`) and renamed
    to ``query_id, doc_id, relevance | score``; any other column is left out. ``ids="str"`` casts the id
    columns to strings; ``duplicates="first"`` is refused: a Spark table has no row order to tell which is first."""
    from pyspark.sql import functions as F

    if options.get("duplicates", "error") != "error":
        raise InputError("duplicates='first' keeps the first occurrence in the input's order, and a table Spark "
                         "reads has no row order.", source=where,
                         fix="drop the repeats in Spark first (e.g. keep the best score per (query, doc) with a "
                             "window), or read the input here (engine: local).")
    names, _ = fields.pick(frame.columns, kind, options, where=where)
    role = fields.order_role(names, kind)
    if role in ("rank", "distance"):
        raise InputError(f"the column {names[role]!r} holds {role}s, which the Spark engine does not read yet.",
                         source=where, fix=f"give the run's scores, or evaluate it locally (engine: local): every "
                                           f"local door reads {role}s ({role}=...).")
    value = fields.VALUE_ROLE[kind]
    as_str = options.get("ids") == "str"

    def column(role: str) -> Any:  # noqa: ANN401 - a pyspark Column
        picked = F.col(f"`{names[role]}`")
        return (picked.cast("string") if as_str and role != value else picked).alias(COLUMNS[role])
    return frame.select(*(column(role) for role in ("query", "doc", value)))


def local_frame(session: Any, data: Any) -> Any:  # noqa: ANN401 - SparkSession, Qrels | Run, DataFrame
    """A :class:`~evalbridge.model.data.Qrels` or :class:`~evalbridge.model.data.Run` read here, as a Spark DataFrame
    (``query_id, doc_id, relevance | score``; rows in the data's order, so ``ties: input`` keeps it)."""
    import pyarrow as pa

    from .tables import _frame

    table = _frame(data)
    value = table.column_names[2]  # grades / scores as doubles (as Spark reads them): no null type when empty
    table = table.set_column(2, value, table.column(value).cast(pa.float64()))
    with quiet_pandas_warning():
        return session.createDataFrame(table)


def _read_collected(name: Any, kind: str, options: Mapping[str, Any]) -> Any:  # noqa: ANN401
    """The in-memory door: a table of the active session, brought to this process and read as any table."""
    from ..model.data import Qrels, Run
    from .registry import Parsed
    from .tables import read_table

    frame = read_spark_table(active_session(), name)
    obj = read_table(frame.toArrow(), kind, options, source=None, header=False)
    return Parsed(qrels=obj if isinstance(obj, Qrels) else None, run=obj if isinstance(obj, Run) else None)


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    return (
        Format("spark-table", "table of the Spark session's catalog (`engine: spark` evaluates it on Spark)",
               frozenset({"qrels", "run"}), _read_collected, options=fields.ROLE_OPTIONS,
               spark=read_spark_table, named=True, example='eb.read_run("bm25_run", format="spark-table")'),
    )


FORMATS = _formats()
