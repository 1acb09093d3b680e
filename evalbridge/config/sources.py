"""Inputs of a config or a command line: one :class:`Source` per qrels or run, read through the format registry.

A source is a path (its format from the suffix, see :func:`evalbridge.io.resolve`), or a mapping
``{path | data | table, format, columns, <format options>}`` (``table``: a table of the Spark session's
catalog, with ``engine: spark``; :func:`load_frames` reads the sources of such an evaluation as Spark
DataFrames). ``columns: {query, doc, grade, score, retrieved, relevant}``
names the columns of a table / fields of JSON Lines rows and RAG logs (the same options as ``--columns`` on the command
line and ``query=``, ``doc=``... in Python). Every option is checked against the format's own list
in the registry, so a config, the CLI and the API accept exactly the same things.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import InputError
from ..io.fields import ROLE_OPTIONS
from ..io.rag import FIELDS

__all__ = ["Source", "source_from_path", "check_source", "load_qrels", "load_run", "load_frame", "load_frames", "COLUMN_ROLES"]

#: the roles ``columns:`` (and ``--columns``, ``--qrels-columns``, ``--run-columns``) may name: the options of the
#: formats that name a column of a table (:data:`evalbridge.io.fields.ROLE_OPTIONS`) or a field of a RAG log
#: (:data:`evalbridge.io.rag.FIELDS`), declared there once; each format takes its own (the registry checks).
COLUMN_ROLES = tuple(dict.fromkeys([*ROLE_OPTIONS, *FIELDS]))


@dataclass(frozen=True)
class Source:
    """One input: the qrels or one system's run.

    Attributes:
        key: its key path in the config (``qrels``, ``runs.bm25``) or its place on the command line.
        format: a registered format name (:func:`evalbridge.io.formats`).
        path: the file (absolute), or None for inline data.
        data: inline data (formats marked ``inline`` in the registry).
        options: the format's options (column names, ``n_relevant``, ...).
        written: the path as the user wrote it (for provenance and messages).
        table: the table of the Spark session's catalog (format ``spark-table``), or None.
        named: an input named, not a file (``irds:<dataset id>``: a format's prefix,
            :func:`evalbridge.io.registry.prefixed`), or None.
        line: the line of the config file that gives the source (None on a command line).
    """

    key: str
    format: str
    path: Path | None = None
    data: Any = None
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    written: str | None = None
    table: str | None = None
    line: int | None = None
    named: str | None = None

    @property
    def carries_qrels(self) -> bool:
        """True when the input holds its own judgements (RAG logs, label lists, judged lists...)."""
        from ..io import get_format

        return get_format(self.format).paired

    @property
    def origin(self) -> Any:
        """What the registry reads: the path, the table name, or the inline data."""
        for origin in (self.path, self.table, self.named):
            if origin is not None:
                return origin
        return self.data


def flatten_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Format options with ``columns: {query: ..}`` spread into ``query=...``."""
    flat = {k: v for k, v in options.items() if k != "columns"}
    flat.update(options.get("columns") or {})
    return flat


def check_source(fmt_name: str | None, kind: str, *, path: str | os.PathLike[str] | None, has_data: bool,
                 options: Mapping[str, Any]) -> str:
    """The format of a source (from the suffix when not given), checked against the registry.

    Raises:
        InputError: an unknown format, one that cannot hold ``kind``, inline data for a file format,
            or an option the format does not take (the message lists the formats that take it).
    """
    from ..io import formats, get_format, resolve
    from ..io.registry import check_options, check_prefixed

    wanted = "run" if kind == "run" else "qrels"
    check_prefixed(path, fmt_name)
    if fmt_name is None:
        if path is None:
            raise InputError("inline data needs a format.", fix="add e.g. format: labels.")
        fmt_name = resolve(os.fspath(path), kind=wanted, options=flatten_options(options)).name
    fmt = get_format(fmt_name, kind=wanted)
    if has_data and not fmt.inline:
        inline = ", ".join(n for n, f in formats().items() if f.inline and f.accepts is None)
        raise InputError(f"format {fmt.name!r} is read from a file; inline data is not supported.",
                         fix=f"write the data to a file and give its path (inline data: {inline}).")
    columns = options.get("columns")
    if columns is not None:
        if not isinstance(columns, Mapping):
            raise InputError(f"columns must be a mapping {{query: ..., doc: ..., grade or score: ...}}; got "
                             f"{columns!r}.")
        for role in columns:
            if role not in COLUMN_ROLES:
                raise InputError(f"columns has no role {role!r}; the roles are {', '.join(COLUMN_ROLES)}.")
    check_options(fmt, flatten_options(options))
    return fmt.name


def source_from_path(path: str, kind: str, fmt: str | None, key: str, *,
                     options: Mapping[str, Any] | None = None) -> Source:
    """A :class:`Source` for a command-line file (format from the suffix when not given)."""
    from ..io.registry import prefixed
    from ..io.text import file_error, not_a_file

    given = dict(options or {})
    if prefixed(path) is not None:
        name = check_source(fmt, kind, path=path, has_data=False, options=given)
        return Source(key=key, format=name, named=path, written=path, options=MappingProxyType(given))
    file = Path(path)
    fault = not_a_file(file)
    if fault is not None:
        raise file_error(path, fault)
    name = check_source(fmt, kind, path=file, has_data=False, options=given)
    from ..reports.writing import note_read

    note_read(file)  # no output of the command may replace it
    return Source(key=key, format=name, path=file.resolve(), written=path, options=MappingProxyType(given))


def _with_level(fmt_name: str, options: Mapping[str, Any], level: float | None) -> dict[str, Any]:
    from ..io import get_format

    flat = flatten_options(options)
    if level is not None and "min_relevance" in get_format(fmt_name).options:
        flat.setdefault("min_relevance", level)
    return flat


def load_qrels(source: Source, level: float | None, *, prefer_columns: bool = False) -> Any:
    """The :class:`~evalbridge.model.data.Qrels` a source describes (``level`` is stored on graded qrels;
    ``prefer_columns``: as :func:`evalbridge.io.read_qrels`, for qrels evaluated against large runs)."""
    from ..io import read_qrels

    return read_qrels(source.origin, format=source.format, prefer_columns=prefer_columns,
                    **_with_level(source.format, source.options, level))


def load_run(source: Source, name: str, qrels: Any, level: float | None,
             slice: str | None = None) -> tuple[Any, Any]:
    """(qrels, run) of one system: its own judgements for formats that hold them, else the shared ``qrels``.
    ``slice``: the field of slice labels (``slices:``), read by a format that takes it unless the source names
    its own."""
    from ..io import get_format, read_pair, read_run

    options = _with_level(source.format, source.options, level)
    if slice is not None and "slice" in get_format(source.format).options:
        options.setdefault("slice", slice)
    if source.carries_qrels:
        return read_pair(source.origin, format=source.format, name=name, **options)
    return qrels, read_run(source.origin, format=source.format, name=name, **options)



def load_frame(source: Source, kind: str, session: Any, level: float | None) -> tuple[Any, Any]:
    """One single-kind source as a Spark DataFrame (``query_id, doc_id, relevance`` / ``score``), for
    ``engine: spark``, and the :class:`~evalbridge.model.data.Qrels` when qrels were read here (their order
    of queries and the relevance level they carry, e.g. ``graded``'s ``min_relevance``), else None.

    A format with a Spark reader (``spark-table``, ``parquet``: a file or a folder) is read by Spark; any
    other is read here by its own reader (its usual checks and messages) and handed to Spark.
    """
    from ..io import get_format
    from ..io.spark_tables import local_frame, pick_columns

    fmt = get_format(source.format)
    if fmt.spark is not None:
        frame = pick_columns(fmt.spark(session, source.origin), kind, flatten_options(source.options),
                             where=source.written or source.table)
        return frame, None
    if kind == "qrels":
        qrels = load_qrels(source, level)
        return local_frame(session, qrels), qrels
    from ..io import read_run

    options = _with_level(source.format, source.options, level)
    return local_frame(session, read_run(source.origin, format=source.format, **options)), None


def load_frames(source: Source, qrels: Any, session: Any, level: float | None) -> tuple[Any, Any, Any]:
    """(qrels, run, its own Qrels or None) of one system as Spark DataFrames: its own judgements for formats
    that hold them (read here, so the Qrels too), else ``qrels`` (the shared DataFrame, from :func:`load_frame`)."""
    from ..io import read_pair
    from ..io.spark_tables import local_frame

    if source.carries_qrels:
        pair = read_pair(source.origin, format=source.format, **_with_level(source.format, source.options, level))
        return local_frame(session, pair[0]), local_frame(session, pair[1]), pair[0]
    frame, _ = load_frame(source, "run", session, level)
    return qrels, frame, None
