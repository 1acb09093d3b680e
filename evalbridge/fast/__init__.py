"""The fast backend: the reference metrics, computed over columns with numpy.

Design (measured in ``shared/research/performance-anchors.md``: the time goes into touching
Python objects and strings, not into arithmetic):

1. :mod:`.columns` flattens the input once: every run score of the evaluated queries into one
   float64 array (queries are contiguous segments), and only the *hits*, the retrieved docs
   with a non-zero grade, as small arrays. Unjudged documents are never looked up one by one.
2. :mod:`.ranking` places each hit in its query's ranking without sorting the run when it is
   already in rank order (the usual case), by a vectorised binary search; it resolves ties by
   doc id (or input order) only in tie groups whose documents carry different grades, the only
   ones where the tie order changes a metric.
3. :mod:`.kernels` computes every metric of :mod:`evalbridge.metrics.catalogue` from the placed hits
   with ``bincount``/``cumsum``: each metric costs O(hits), so twenty metrics cost little more
   than one. The results equal :mod:`evalbridge.metrics.reference` per query (same additions, in the
   same order).
4. :mod:`.rows` lays out two columnar inputs (:class:`~evalbridge.model.columnar.RowTable`, what the
   readers of large files and tables build) as the same :class:`Columns`, by 64-bit hashes of
   (query, doc) made from the strings alone, every match confirmed on the strings.

numpy is imported by these modules, so import them only where the engine is used.
"""

from __future__ import annotations

from .columns import Columns, from_mappings
from .kernels import evaluate_columns

__all__ = ["Columns", "from_mappings", "evaluate_columns"]
