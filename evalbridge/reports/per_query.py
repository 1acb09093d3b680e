"""Per-query files: every system's per-query values as one tidy table, written as CSV or Parquet with the provenance.

The formats are one table (:data:`PER_QUERY_FORMATS`: suffix and writer), read by every door alike:
``output.per_query`` in configs, ``evalbridge eval --per-query PATH`` and the pipeline's report folder.
Every file is written atomically (:mod:`evalbridge.reports.writing`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.json_data import json_value
from .writing import atomic_file, write_file_atomic

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation.results import Results

__all__ = ["per_query_frame", "csv_text", "PerQueryFormat", "PER_QUERY_FORMATS", "per_query_format_of",
           "write_per_query", "write_frame"]


def per_query_frame(results: Mapping[str, Results]) -> pd.DataFrame:
    """Per-query values of every system, tidy: columns ``system``, ``query_id``, then one per metric."""
    import pandas as pd

    frames = [res.per_query.reset_index().assign(system=system) for system, res in results.items()]
    frame = pd.concat(frames, ignore_index=True)
    tidy: pd.DataFrame = frame[["system", "query_id", *[c for c in frame.columns if c not in ("system", "query_id")]]]
    return tidy


def csv_text(frame: Any, *, index: bool = True) -> str:
    """``frame`` as CSV with ``\\n`` line ends. Names are data: a text cell that a spreadsheet would run as a
    formula (``=...``, ``@...``) is neutralised (:func:`evalbridge.common.escaping.csv_cell`), and a field holding a
    carriage return is quoted like one holding a newline (Python's csv leaves a lone ``\\r`` bare with ``\\n``
    line ends, and readers take it as a line break), by quoting every text field of such a frame."""
    import csv

    from pandas.api.types import is_numeric_dtype

    from ..common.escaping import csv_cell

    def cell(value: Any) -> Any:
        return csv_cell(value) if isinstance(value, str) else value

    frame = frame.rename(index=cell, columns=cell)  # a copy: the caller's frame stays as it was
    for column in frame.columns:  # a text column is of dtype object, or str (pandas >= 3)
        if not is_numeric_dtype(frame[column]):
            frame[column] = frame[column].map(cell)
    texts = [*map(str, frame.index), *map(str, frame.columns),
             *(str(v) for column in frame.columns if not is_numeric_dtype(frame[column]) for v in frame[column])]
    quoting = csv.QUOTE_NONNUMERIC if any("\r" in text for text in texts) else csv.QUOTE_MINIMAL
    return str(frame.to_csv(index=index, lineterminator="\n", quoting=quoting))


def _per_query_csv(frame: Any, path: str | os.PathLike[str], provenance: Mapping[str, Any]) -> Path:
    """Per-query values as CSV (the provenance goes to ``provenance.json`` beside it)."""
    return write_file_atomic(path, csv_text(frame, index=False))


def _per_query_parquet(frame: Any, path: str | os.PathLike[str], provenance: Mapping[str, Any]) -> Path:
    """Per-query values as Parquet, the provenance in the file's metadata (``evalbridge.provenance``)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(frame, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[b"evalbridge.provenance"] = json.dumps(json_value(dict(provenance))).encode()
    with atomic_file(path) as tmp:
        pq.write_table(table.replace_schema_metadata(meta), tmp)
    return Path(path)


@dataclass(frozen=True)
class PerQueryFormat:
    """A format of the per-query file: its suffix and its writer ``write(frame, path, provenance) -> path``."""

    suffix: str
    write: Callable[[Any, str | os.PathLike[str], Mapping[str, Any]], Path]


#: per-query file format -> suffix and writer (``output.per_query``, ``evalbridge eval --per-query PATH``)
PER_QUERY_FORMATS: Mapping[str, PerQueryFormat] = {
    "csv": PerQueryFormat(".csv", _per_query_csv),
    "parquet": PerQueryFormat(".parquet", _per_query_parquet),
}


def per_query_format_of(path: str | os.PathLike[str]) -> str:
    """The per-query format a path names by its suffix (``.parquet``), else ``csv``.

    >>> per_query_format_of("out/per_query.parquet"), per_query_format_of("per_query.tsv")
    ('parquet', 'csv')
    """
    return next((name for name, f in PER_QUERY_FORMATS.items() if os.fspath(path).endswith(f.suffix)), "csv")


def write_per_query(results: Mapping[str, Any], path: str | os.PathLike[str], *, fmt: str,
                    provenance: Mapping[str, Any] | None = None) -> Path:
    """Per-query values of every system in a :data:`PER_QUERY_FORMATS` format (``csv``, or ``parquet`` with the
    provenance in its metadata)."""
    return write_frame(per_query_frame(results), path, fmt=fmt, provenance=provenance)


def write_frame(frame: Any, path: str | os.PathLike[str], *, fmt: str,
                provenance: Mapping[str, Any] | None = None) -> Path:
    """A DataFrame (its columns, not its index) in a :data:`PER_QUERY_FORMATS` format (``csv``, or
    ``parquet`` with the provenance in its metadata), written atomically."""
    if fmt not in PER_QUERY_FORMATS:
        raise InputError(f"unknown per-query format {fmt!r}; choose one of {', '.join(map(repr, PER_QUERY_FORMATS))}.")
    return PER_QUERY_FORMATS[fmt].write(frame, path, dict(provenance or {}))
