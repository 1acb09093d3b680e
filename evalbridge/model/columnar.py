"""The columnar form of a :class:`~evalbridge.model.data.Qrels` or :class:`~evalbridge.model.data.Run`: :class:`RowTable`.

A ``Qrels`` / ``Run`` holds its rows in one of two representations, with one mapping API:

* ``dict`` rows ``{query_id: {doc_id: value}}``, what Python code builds;
* a :class:`RowTable`: one (query, doc, value) per row, as arrays. The readers of large inputs
  build it (TREC files, CSV / TSV / Parquet files, pandas / Arrow / Polars tables, large RAG logs),
  and the fast backend pairs two of them without building any Python object per row
  (:func:`evalbridge.fast.rows.pair`).

A columnar object answers ``len``, iteration, ``in`` and ``keys()`` from :attr:`RowTable.query_ids`,
and builds its ``dict`` rows on first need (``qrels["q1"]``, ``items()``, ``to_dict()``), once.
The engine asks for the table through one member, ``Qrels.columnar`` / ``Run.columnar`` (``None``
for ``dict`` rows).

This module imports neither numpy nor pyarrow: a table is built by :mod:`evalbridge.fast.rows`,
which does, and only its methods here import them when called.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["RowTable", "per_row"]


def per_row(block_values: np.ndarray, block_lengths: np.ndarray, n_rows: int) -> np.ndarray:
    """One value per block repeated over its rows (``np.repeat``); the values themselves when every
    block is one row (a table in no order), where ``np.repeat`` costs 0.1 s for 7M rows."""
    import numpy as np

    return block_values if len(block_values) == n_rows else np.repeat(block_values, block_lengths)


@dataclass(frozen=True, eq=False)
class RowTable:
    """Rows ``(query id, doc id, value)`` as columns; built by :func:`evalbridge.fast.rows.build_table`.

    Rows of one query need not be adjacent: the table is cut into *blocks*, runs of adjacent rows
    of one query (a TREC file has one block per query; a shuffled DataFrame one per row).

    Attributes:
        query_ids: every query, in the order it first appears (a query may have no row: a RAG
            question with nothing relevant).
        block_start: int64, the first row of each block.
        block_code: int64, each block's query, as an index into ``query_ids``.
        docs: the doc id of every row (a pyarrow string array, one chunk, no nulls).
        values: float64, the grade or score of every row (finite, below 2**53 in magnitude).
        integral: bool per row: the value reads back as an ``int`` (an integer token of a TREC
            qrels file, an integer column); a zero-stride view when every row agrees.
        hashes: uint64 per row: a 64-bit hash of the query id and every byte of the doc id, made
            from those two strings only, so two tables built apart pair through their hashes (every
            match is then confirmed on the strings). No two rows of one query share a hash.
        query_kind, doc_kind: ``"str"``, or ``"int"`` when the ids were integers (kept as ``str``,
            as ``Qrels`` keeps int ids, so the id-type check of ``evaluate`` still sees them).

    Invariants (checked by the builders): no (query, doc) pair appears twice; every array is
    read-only and as long as the table (``block_*``: one entry per block).
    """

    query_ids: tuple[str, ...]
    block_start: np.ndarray
    block_code: np.ndarray
    docs: pa.Array
    values: np.ndarray
    integral: np.ndarray
    hashes: np.ndarray
    query_kind: str = "str"
    doc_kind: str = "str"

    @property
    def n_rows(self) -> int:
        """Number of (query, doc) rows."""
        return len(self.values)

    @cached_property
    def ids(self) -> dict[str, None]:
        """The query ids as dict keys (order kept): membership and key views at C speed."""
        return dict.fromkeys(self.query_ids)

    @cached_property
    def block_lengths(self) -> np.ndarray:
        """int64, the number of rows of each block."""
        import numpy as np

        lengths: np.ndarray = np.diff(np.r_[self.block_start, self.n_rows]).astype(np.int64)
        return lengths

    def codes(self, rows: np.ndarray | None = None) -> np.ndarray:
        """The query code (index into ``query_ids``) of the given rows, of every row when None."""
        import numpy as np

        if rows is None:
            return per_row(self.block_code, self.block_lengths, self.n_rows)
        return self.block_code[np.searchsorted(self.block_start, rows, side="right") - 1]

    def _python_values(self) -> list[int | float]:
        """Every value as the Python number a strict reader gives: ``int`` where :attr:`integral`."""
        import numpy as np

        integral = self.integral
        out: list[int | float]  # numpy's tolist() is typed Any
        if not integral.any():
            out = self.values.tolist()
        elif integral.all():
            out = self.values.astype(np.int64).tolist()
        else:
            mixed = np.array(self.values.tolist(), dtype=object)
            mixed[integral] = self.values[integral].astype(np.int64).tolist()
            out = mixed.tolist()
        return out

    def rows(self) -> dict[str, dict[str, int | float]]:
        """The ``dict`` rows ``{query_id: {doc_id: value}}``: queries in :attr:`query_ids` order, the docs
        of each query in row order. A new dict each call (``Qrels`` / ``Run`` keep theirs)."""
        docs, values = self.docs.to_pylist(), self._python_values()
        out: dict[str, dict[str, int | float]] = {qid: {} for qid in self.query_ids}
        ids = self.query_ids
        starts = self.block_start.tolist()
        for start, stop, code in zip(starts, starts[1:] + [self.n_rows], self.block_code.tolist()):
            out[ids[code]].update(zip(docs[start:stop], values[start:stop]))
        return out

    def distinct_values(self) -> frozenset[int | float]:
        """Every distinct value as a Python number: an ``int`` where some row holding it is integral."""
        import numpy as np

        ints = frozenset(np.unique(self.values[self.integral]).astype(np.int64).tolist())
        return ints | frozenset(np.unique(self.values[~self.integral]).tolist())  # (| keeps the left's of equal ones)

    def __repr__(self) -> str:
        return f"RowTable({len(self.query_ids)} queries, {self.n_rows} rows, {len(self.block_start)} blocks)"

    def __getstate__(self) -> dict[str, Any]:
        """What a pickle carries: the columns (caches such as :attr:`ids` are rebuilt on use)."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, value)
        for name in ("values", "integral", "hashes", "block_start", "block_code"):
            getattr(self, name).flags.writeable = False
