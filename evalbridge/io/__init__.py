"""Every input and output format, in one place: the registry (:mod:`.registry`) and one module per family.

* :mod:`.trec`: TREC qrels, runs and judged ranked lists (strict reader; :mod:`._arrow_trec` is its
  pyarrow fast path for large files, into columns, used only where it reads exactly what the strict
  reader would);
* :mod:`.jsonl`: ``{qid: {doc: value}}`` JSON and JSON Lines rows;
* :mod:`.rag`: RAG logs, one object per question, with field mapping (:mod:`._rag_columns`: large JSON
  Lines logs through orjson into columns, on the same terms);
* :mod:`.tables`: CSV / TSV / Parquet files (BEIR, MS MARCO) and pandas / Arrow / Polars tables, read
  into columns;
* :mod:`.shapes`: label lists, (retrieved, relevant) pairs, records, graded dicts, ranked lists;
* :mod:`.objects`: Qrels / Run, dicts of dicts, ranx objects, ir-measures rows and tuples; the way back;
* :mod:`.text`: bytes and text of files (gzip, BOM, UTF-8 with the right line), shared by all.

``evalbridge formats`` lists the registry; ``docs/inputs.md`` has a section per format.
"""

from __future__ import annotations

import os
from typing import Any

from ..model import Qrels, Run
from .registry import (Format, formats, get_format, load, read_into_columns, read_pair, resolve, suffix_of, to_qrels,
                       to_run, write)

__all__ = ["Format", "formats", "get_format", "load", "resolve", "suffix_of", "to_qrels", "to_run", "read_pair", "write",
           "read_qrels", "read_run", "read_judged_list", "read_into_columns"]


def read_qrels(path: str | os.PathLike[str], *, format: str | None = None, **options: Any) -> Qrels:
    """Read qrels from a file, in any registered format (TREC unless the suffix or ``format`` says otherwise).

    Example:
        >>> import pathlib, tempfile
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> _ = path.write_text("q1 0 d1 2\\n")
        >>> read_qrels(path)["q1"]["d1"]
        2
    """
    return to_qrels(os.fspath(path), format=format, **options)


def read_run(path: str | os.PathLike[str], *, format: str | None = None, name: str | None = None,
             **options: Any) -> Run:
    """Read a run from a file, in any registered format (TREC unless the suffix or ``format`` says otherwise).

    With TREC runs the rank column is ignored, as trec_eval does: the order comes from the scores;
    ``extra_columns="ignore"`` drops words after the sixth.
    """
    return to_run(os.fspath(path), format=format, name=name, **options)


def read_judged_list(path: str | os.PathLike[str]) -> tuple[Qrels, Run]:
    """``(qrels, run)`` from a judged ranked list: ``qid Q0 docid rel`` lines in rank order."""
    return read_pair(os.fspath(path), format="judged_list")
