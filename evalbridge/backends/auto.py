"""The default backend: the pure-Python reference for small inputs, the fast engine for large ones.

Both compute the same numbers (the fast engine is tested per query against the reference), so
the choice is only about time: the reference needs no import at all, which wins for a RAG-sized
evaluation in a fresh process; the engine needs numpy (about 0.06 s to import) and wins from
some ten thousand run rows on. :func:`evalbridge.evaluate` records the backend actually used in
the provenance.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .._version import __version__
from ..metrics.spec import Metric
from ..model import Conventions, Qrels, Run

NAME = "auto"
CONVENTIONS = Conventions()
#: Whatever is chosen computes every metric with every option.
CAPABILITIES: dict = {}

#: Run rows from which the fast engine is used when numpy is not imported yet (its import is
#: repaid there) and when it already is.
THRESHOLD_COLD = 100_000
THRESHOLD_WARM = 5_000


def version() -> str:
    return __version__


def choose(qrels: Qrels, run: Run) -> str:
    """``"fast"`` or ``"reference"`` for this input.

    Example:
        >>> choose(Qrels({"q1": {"d1": 1}}), Run({"q1": {"d1": 0.5}}))
        'reference'
    """
    threshold = THRESHOLD_WARM if "numpy" in sys.modules else THRESHOLD_COLD  # (columnar inputs imported it)
    return "fast" if run.n_rows >= threshold else "reference"


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric],
            conventions: Conventions = CONVENTIONS) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """The chosen backend's ``compute`` (see :func:`choose`)."""
    from . import get_backend

    return get_backend(choose(qrels, run)).compute(qrels, run, metrics, conventions)
