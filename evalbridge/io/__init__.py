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

from .registry import (Format, formats, get_format, load, read_into_columns, read_pair, read_qrels, read_run, resolve,
                       suffix_of, write)

__all__ = ["Format", "formats", "get_format", "load", "resolve", "suffix_of", "read_qrels", "read_run", "read_pair", "write",
           "read_into_columns"]
