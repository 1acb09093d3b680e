"""The fast backend: the reference metrics computed by the columnar fast backend.

Same numbers as :mod:`evalbridge.backends.reference` for every metric, option, tie policy
and score precision (tested per query), at numpy speed: see :mod:`evalbridge.fast`.
Scores or grades that float64 cannot hold exactly (ints beyond 2**53) are left to the
reference, which compares Python numbers exactly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._version import __version__
from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..model.settings import ORDERED_TIES, Settings
from .base import Backend, Capabilities

if TYPE_CHECKING:
    from ..fast.columns import Columns

NAME = "fast"
CONVENTIONS = Settings()
#: The engine places every document at one rank: ``ties="average"`` is the reference's (``auto`` picks it).
TIES = ORDERED_TIES


def version() -> str:
    import numpy

    return f"{__version__} (numpy {numpy.__version__})"


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = CONVENTIONS, *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values of ``metrics`` over the queries in both ``qrels`` and ``run`` (``native`` changes
    nothing: like the reference, the engine follows ``conventions``).

    Columnar inputs (``Qrels.columnar``, e.g. large TREC files or DataFrames) are paired as they
    are; ``dict`` rows are flattened once (:func:`evalbridge.fast.rows.columns_of`).
    """
    from ..fast import evaluate_columns
    from ..fast.rows import columns_of

    if conventions.ties not in TIES:
        from ..errors import UnsupportedMetricError

        raise UnsupportedMetricError(f"the fast backend ranks tied documents in one order; ties={conventions.ties!r} "
                                     f"is computed by the reference. Fix: use backend='reference' or 'auto'.")
    try:
        columns = columns_of(qrels, run)
    except OverflowError:
        columns = None
    if columns is not None and any("stratum" in metric.inputs for metric in metrics):
        columns = _with_strata(columns, qrels)
    if columns is None or not columns.exact:
        from . import reference

        return reference.compute(qrels, run, metrics, conventions)
    arrays = evaluate_columns(columns, metrics, conventions)
    return {metric: dict(zip(ids, values.tolist())) for ids in [_compact(columns.query_ids)]
            for metric, values in arrays.items()}, []


#: Like the reference, the engine computes every metric with every option.
BACKEND = Backend(name=NAME, version=version, library="numpy", conventions=None, capabilities=Capabilities.every(),
                  ties=TIES, compute=compute)


def _with_strata(columns: Columns, qrels: Qrels) -> Columns | None:
    """``columns`` with the stratum code of every qrels row (:attr:`Columns.judged_strata`), or None (the reference
    then computes): columns that did not keep the qrels row of each hit (read into columns by pyarrow)."""
    from dataclasses import replace
    from itertools import chain

    import numpy as np

    if columns.judged_index is None or columns.zero_query is None:
        return None
    strata = qrels.strata
    names = sorted({s for q in columns.query_ids for s in strata.get(q, {}).values()})
    code = {name: i for i, name in enumerate(names)}
    none: dict[str, str] = {}
    codes = np.fromiter(chain.from_iterable((code.get(strata.get(q, none).get(doc, ""), -1) for doc in qrels[q])
                                            for q in columns.query_ids), dtype=np.int64, count=len(columns.judged))
    return replace(columns, judged_strata=codes)


def _compact(ids: Sequence[str]) -> Sequence[str]:
    """Equal copies of ``ids`` side by side in memory, or ``ids`` if one holds a newline.

    The caller's id objects lie wherever its rows were built; each result dict reads every id's
    hash, and from scattered objects that costs a cache miss per id (at 100K queries from
    dicts: 40 ms per metric, 13 ms with copies made in one C-level pass).
    """
    copies = "\n".join(ids).split("\n")
    return copies if len(copies) == len(ids) else ids  # a newline in an id splits it in two
