"""``Results``: the one type ``evaluate`` returns, whatever was asked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from .metrics.spec import Metric, parse_metric
from .model import Conventions

__all__ = ["Results", "Provenance"]


@dataclass(frozen=True)
class Provenance:
    """Where the numbers come from, and which queries they cover.

    Attributes:
        backend, backend_version: who computed the per-query values.
        conventions: ties, score precision and missing-query policy used.
        relevance_level: ``rel`` of binary metrics that did not set their own.
        queries_evaluated: queries in the mean.
        missing_from_run: qrels queries absent from the run (scored 0, or left out
            of the mean with ``missing_queries="drop"``).
        ignored_run_only: run queries absent from the qrels, left out.
        bridges: every translation applied so that a backend computes exactly what
            was asked (e.g. grades scaled to integers).
        removed_beyond_depth: documents below ``conventions.depth`` left out of the rankings.
        removed_unjudged: documents without a judgement (or with a negative grade) left out
            with ``conventions.judged_only``.
        notes: anything else worth knowing about the input (e.g. qrels or a run with no query).
    """

    backend: str
    backend_version: str
    conventions: Conventions
    relevance_level: float
    queries_evaluated: int
    missing_from_run: tuple[str, ...] = ()
    ignored_run_only: tuple[str, ...] = ()
    bridges: tuple[str, ...] = ()
    evalbridge_version: str = ""
    removed_beyond_depth: int = 0
    removed_unjudged: int = 0
    notes: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for the foot of a table."""
        c = self.conventions
        text = (f"backend {self.backend} {self.backend_version}; {self.queries_evaluated} queries; "
                f"{len(self.missing_from_run)} missing from run ("
                f"{'scored 0' if c.missing_queries == 'zero' else 'left out'}); "
                f"{len(self.ignored_run_only)} run-only ignored; ties {c.ties}; relevance level "
                f"{self.relevance_level:g}")
        if c.score_precision != "float64":
            text += f"; scores as {c.score_precision}"
        if c.depth is not None:
            text += f"; depth {c.depth}: {self.removed_beyond_depth} documents below it left out"
        if c.judged_only:
            text += f"; judged only: {self.removed_unjudged} unjudged documents left out"
        return text + "".join(f"; {b}" for b in (*self.notes, *self.bridges))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("missing_from_run", "ignored_run_only", "bridges", "notes"):
            data[name] = list(getattr(self, name))
        return data


@dataclass(frozen=True)
class Results:
    """Per-query values and means of a set of metrics, with their provenance.

    Index it with any spelling of a metric: ``results["ndcg@10"]``,
    ``results["nDCG@10"]`` and ``results["ndcg_cut_10"]`` are the same mean.

    Attributes:
        metrics: the metrics computed, as resolved (e.g. with the relevance level).
        values: metric -> query id -> value, one entry per evaluated query.
        provenance: see :class:`Provenance`.
    """

    metrics: tuple[Metric, ...]
    values: Mapping[Metric, Mapping[str, float]]
    provenance: Provenance
    resolve: Callable[[Metric], Metric] = field(default=lambda m: m, repr=False, compare=False)

    def _key(self, key: str | Metric) -> Metric:
        metric = parse_metric(key)
        if metric not in self.values:
            metric = self.resolve(metric)
        if metric not in self.values:
            raise KeyError(f"{str(key)!r} was not evaluated; available: {', '.join(map(str, self.metrics))}")
        return metric

    def __getitem__(self, key: str | Metric) -> float:
        """The mean of one metric over the evaluated queries."""
        return self.mean(key)

    def __contains__(self, key: object) -> bool:
        try:
            self._key(key)  # type: ignore[arg-type]
        except (KeyError, ValueError):
            return False
        return True

    def mean(self, key: str | Metric) -> float:
        """The mean of one metric over the evaluated queries (NaN when no query was evaluated)."""
        per_query = self.values[self._key(key)]
        return math.fsum(per_query.values()) / len(per_query) if per_query else math.nan

    def query(self, key: str | Metric) -> dict[str, float]:
        """query id -> value of one metric."""
        return dict(self.values[self._key(key)])

    @property
    def means(self) -> dict[str, float]:
        """Canonical metric string -> mean, in the order asked."""
        return {str(m): self.mean(m) for m in self.metrics}

    @property
    def query_ids(self) -> list[str]:
        return list(self.values[self.metrics[0]]) if self.metrics else []

    @property
    def per_query(self):  # noqa: ANN201 - pandas.DataFrame, imported lazily
        """A pandas DataFrame: one row per query id, one column per metric."""
        import pandas as pd

        frame = pd.DataFrame({str(m): pd.Series(self.values[m], dtype="float64") for m in self.metrics})
        frame.index = frame.index.astype(str)
        frame.index.name = "query_id"
        return frame

    def to_dict(self) -> dict[str, Any]:
        """``{"metrics": {...}, "per_query": {qid: {...}}, "provenance": {...}}`` (JSON-ready)."""
        per_query: dict[str, dict[str, float]] = {}
        for metric in self.metrics:
            for qid, value in self.values[metric].items():
                per_query.setdefault(qid, {})[str(metric)] = value
        return {"metrics": self.means, "per_query": per_query, "provenance": self.provenance.to_dict()}

    def table(self, *, digits: int = 4, fmt: str = "simple") -> str:
        """The means as a text table (any ``tabulate`` format, e.g. ``github``)."""
        from tabulate import tabulate

        rows = [(str(m), m.info.title, round(self.mean(m), digits)) for m in self.metrics]
        return tabulate(rows, headers=("metric", "what", "mean"), tablefmt=fmt, floatfmt=f".{digits}f")

    def __str__(self) -> str:
        return f"{self.table()}\n{self.provenance.summary()}"

    def __repr__(self) -> str:
        means = ", ".join(f"{k}={v:.4f}" for k, v in self.means.items())
        return f"Results({means}; {self.provenance.queries_evaluated} queries, backend={self.provenance.backend})"
