"""The default backend: the pure-Python reference for small inputs, the fast backend for large ones.

Both compute the same numbers (the fast backend is tested per query against the reference), so
the choice is only about time, and it depends on the input alone: the number of run rows,
against one threshold, :data:`THRESHOLD`. What happens to be imported already never changes
the choice, so the same input gets the same backend (and the same provenance) in a fresh
script, a notebook or a worker process.

The threshold was measured (``bench/auto_threshold.py``; the table is in ``bench/README.md``):
in a process that already holds numpy and the engine, the engine is faster from a few thousand
rows on (2.6x at 10,000 rows of 10 documents per query); in a fresh process its first call also
imports numpy and the engine, about 75 ms of CPU, repaid only from 100,000-200,000 rows on.
The threshold keeps the worst case of both smallest: from 15,000 rows on, neither kind of
process takes more than 2.8x the time of the faster backend, nor loses more than about 75 ms
(20,000 does as well; a lower threshold slows fresh processes down more, a higher one warm
processes). :func:`evalbridge.evaluate` records the backend actually used in the provenance.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._version import __version__
from ..metrics.spec import Metric
from ..model.data import Qrels, Run
from ..model.settings import Settings, TIE_POLICIES
from .base import Backend, Capabilities

NAME = "auto"
CONVENTIONS = Settings()

#: Run rows from which the fast backend is used (see the module docstring for how it was measured).
THRESHOLD = 15_000


def version() -> str:
    return __version__


def choose(qrels: Qrels | Any, run: Run | Any, *, ties: str = "docid_desc") -> str:
    """``"fast"`` or ``"reference"`` for this input: ``fast`` from :data:`THRESHOLD` run rows on; always the
    reference for a tie policy the fast backend does not follow (``average``).

    Columnar inputs (:attr:`Run.columnar`) are chosen by size too: a small one builds its dict rows
    for the reference (a few milliseconds), a large one is read by the engine as it is.

    Example:
        >>> choose(Qrels({"q1": {"d1": 1}}), Run({"q1": {"d1": 0.5}}))
        'reference'
    """
    return choose_rows(run.n_rows, ties=ties)


def choose_rows(rows: int, *, ties: str = "docid_desc") -> str:
    """:func:`choose` for a run of ``rows`` rows (a verb that hands the kernels columns without building a run
    asks it so: the diagnosis over :class:`~evalbridge.fast.tops.TopLists`).

    Example:
        >>> choose_rows(THRESHOLD), choose_rows(THRESHOLD - 1), choose_rows(THRESHOLD, ties="average")
        ('fast', 'reference', 'reference')
    """
    from . import fast

    if ties not in fast.BACKEND.ties:
        return "reference"
    return "fast" if rows >= THRESHOLD else "reference"


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = CONVENTIONS, *,
            native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """The chosen backend's ``compute`` (see :func:`choose`; ``native`` changes nothing, both follow ``conventions``)."""
    from . import get_backend

    return get_backend(choose(qrels, run, ties=conventions.ties)).compute(qrels, run, metrics, conventions)


#: Whatever is chosen computes every metric with every option; every tie policy (a policy the fast
#: engine does not follow, ``average``, is left to the reference).
BACKEND = Backend(name=NAME, version=version, library=None, conventions=None, capabilities=Capabilities.every(),
                  ties=TIE_POLICIES, compute=compute)
