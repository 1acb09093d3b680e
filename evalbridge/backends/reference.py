"""The reference backend: :mod:`evalbridge.metrics.reference` driven over every query.

Readable rather than fast; it can follow any :class:`~evalbridge.model.Conventions`,
which is how the cross-check reproduces what another backend does.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._version import __version__
from ..metrics.reference import KERNELS
from ..ranking import rank
from ..metrics.spec import Metric
from ..model import Conventions, Qrels, Run

NAME = "reference"
CONVENTIONS = Conventions()
#: The reference computes every metric with every option.
CAPABILITIES: dict = {}


def version() -> str:
    return __version__


def compute(qrels: Qrels, run: Run, metrics: Sequence[Metric],
            conventions: Conventions = CONVENTIONS) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Per-query values of ``metrics`` over the queries in both ``qrels`` and ``run``.

    Each query is ranked once and every metric reads that ranking.
    """
    calls = [(metric, KERNELS[metric.name], metric.arguments) for metric in metrics]
    values: dict[Metric, dict[str, float]] = {metric: {} for metric in metrics}
    for qid, grades in qrels.items():
        scores = run.get(qid)
        if scores is None:
            continue
        ranking = rank(scores, ties=conventions.ties, score_precision=conventions.score_precision)
        retrieved = [grades.get(doc, 0) for doc in ranking]
        judged = list(grades.values())
        for metric, kernel, kwargs in calls:
            values[metric][qid] = kernel(retrieved, judged, **kwargs)
    return values, []
