"""``Results``: the one type ``evaluate`` returns, whatever was asked."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..metrics.requests import MetricRequest, find_request
from ..metrics.spec import Metric, parse_metric
from ..errors import InputError
from ..model.settings import Settings

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Results", "Provenance", "MetricMeans", "NumberSummary", "summarise_numbers"]


#: The settings a results file records under ``conventions`` (how rankings and means were formed).
CONVENTIONS = ("ties", "score_precision", "missing_queries", "judged_only", "depth", "no_relevant")


@dataclass(frozen=True)
class Provenance:
    """Where the numbers come from, and which queries they cover.

    Attributes:
        backend, backend_version: who computed the per-query values.
        settings: the :class:`~evalbridge.model.settings.Settings` of the evaluation (``backend`` as asked: the one
            used is :attr:`backend`).
        relevance_level: ``rel`` of binary metrics that did not set their own.
        queries_evaluated: queries in the mean.
        missing_from_run: qrels queries absent from the run (scored 0, or left out
            of the mean with ``missing_queries="drop"``).
        ignored_run_only: run queries absent from the qrels, left out.
        bridges: every translation applied so that a backend computes exactly what
            was asked (e.g. grades scaled to integers).
        removed_beyond_depth: documents below ``settings.depth`` left out of the rankings.
        removed_unjudged: documents without a judgement (or with a negative grade) left out
            with ``settings.judged_only``.
        notes: anything else worth knowing about the input (e.g. qrels or a run with no query).
        without_relevant: qrels queries with no judgement at or above the relevance level (scored 0, left out
            of the mean with ``settings.no_relevant="drop"``).
        warnings: what was also said as an :class:`~evalbridge.errors.EvalbridgeWarning` (retrieved and
            judged ids that do not meet, with examples and the likely cause).
    """

    backend: str
    backend_version: str
    settings: Settings
    relevance_level: float
    queries_evaluated: int
    missing_from_run: tuple[str, ...] = ()
    ignored_run_only: tuple[str, ...] = ()
    bridges: tuple[str, ...] = ()
    evalbridge_version: str = ""
    removed_beyond_depth: int = 0
    removed_unjudged: int = 0
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    without_relevant: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for the foot of a table."""
        c = self.settings
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
        if self.without_relevant:
            text += (f"; {len(self.without_relevant)} without a relevant judgement ("
                     f"{'left out' if c.no_relevant == 'drop' else 'scored 0'})")
        return text + "".join(f"; {b}" for b in (*self.notes, *self.bridges)) + "".join(
            f"; warning: {w}" for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; the settings of the ranking and the mean under ``conventions``, as results files have them."""
        data = {("conventions" if name == "settings" else name):
                ({key: getattr(self.settings, key) for key in CONVENTIONS} if name == "settings" else value)
                for name, value in asdict(self).items()}
        for name in ("missing_from_run", "ignored_run_only", "bridges", "notes", "warnings", "without_relevant"):
            data[name] = list(getattr(self, name))
        return data


@dataclass(frozen=True)
class NumberSummary:
    """One number a run logged per question (``latency_ms``, tokens, cost), over the questions that logged it:
    their count, mean, median (p50) and 95th percentile (p95; numpy's linear interpolation between the two
    nearest values)."""

    field: str
    n: int
    mean: float
    p50: float
    p95: float


def summarise_numbers(logged: Mapping[str, Mapping[str, Any]]) -> tuple[NumberSummary, ...]:
    """A :class:`NumberSummary` of every field of numbers in ``logged`` (field -> {query id: value}); fields of
    labels (tuples of texts) are left out.

    >>> summarise_numbers({"latency_ms": {"q1": 10, "q2": 30, "q3": 20}, "topic": {"q1": ("billing",)}})
    (NumberSummary(field='latency_ms', n=3, mean=20.0, p50=20.0, p95=29.0),)
    """
    out = []
    for name, values in logged.items():
        numbers = [v for v in values.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if not numbers or len(numbers) != len(values):
            continue
        import numpy as np

        p50, p95 = (float(x) for x in np.percentile(np.asarray(numbers, dtype=np.float64), [50, 95]))
        out.append(NumberSummary(name, len(numbers), math.fsum(numbers) / len(numbers), p50, p95))
    return tuple(out)


@dataclass(frozen=True, eq=False)
class Results:
    """Per-query values and means of a set of metrics, with their provenance.

    Index it with the metric's label, the spelling asked or any other spelling: ``results["ndcg@10"]``,
    ``results["nDCG@10"]`` and ``results["ndcg_cut_10"]`` are the same mean. :attr:`means`,
    :attr:`per_query` and :meth:`to_dict` are keyed by each metric's label (the user's label, else the
    spelling asked: :class:`~evalbridge.metrics.requests.MetricRequest`), never by the metric as
    resolved, so ``min_relevance=7`` does not turn the key ``precision@5`` into ``P(rel=7)@5``.

    A ``Results`` is an immutable value: ``values`` is read-only, it pickles and copies (to a
    ``multiprocessing`` pool, joblib, a cache) and two results are equal when their metrics,
    values and provenance are equal (the hash reads the metrics and the provenance).

    Attributes:
        metrics: the metrics computed, as resolved (e.g. with the relevance level).
        values: metric -> query id -> value, one entry per evaluated query (read-only).
        provenance: see :class:`Provenance`.
        max_grade: the top grade of the qrels when a metric asked needed it (``AP(weights=graded)``
            without ``max_grade``), else None; with ``provenance.relevance_level`` it is what
            :meth:`resolve` needs to find a metric asked in another spelling.
        requests: each metric asked, named (label, spelling asked, metric as evaluated), in the order
            asked; default: one per metric, named by its canonical string.
        numbers: the numbers the run logged per question (a RAG log's ``latency_ms``, tokens, cost), each
            summarised (:class:`NumberSummary`); empty when it logged none.
        slices: per-slice means, counts and intervals (:class:`~evalbridge.evaluation.slices.Slices`) when
            ``slices=`` was given, else None.
    """

    metrics: tuple[Metric, ...]
    values: Mapping[Metric, Mapping[str, float]]
    provenance: Provenance
    max_grade: float | None = None
    requests: tuple[MetricRequest, ...] = ()
    numbers: tuple[NumberSummary, ...] = ()
    slices: Any = None  # a slices.Slices (not imported: results stand below it, it reads query tables through io)

    def __post_init__(self) -> None:
        # Copied, then shown read-only: nothing the caller keeps can change a Results (or its cached frame).
        object.__setattr__(self, "metrics", tuple(self.metrics))
        object.__setattr__(self, "values", MappingProxyType({m: MappingProxyType(dict(v))
                                                             for m, v in self.values.items()}))
        requests = tuple(self.requests) or tuple(MetricRequest(str(m), str(m), m) for m in self.metrics)
        unknown = [r.label for r in requests if r.metric not in self.values]
        if unknown:
            raise InputError(f"the metrics asked as {', '.join(map(repr, unknown))} have no values in these results.",
                             fix="give a request for each metric evaluated, with the metric as evaluated.")
        object.__setattr__(self, "requests", requests)

    def __reduce__(self) -> tuple[type[Results], tuple[Any, ...]]:
        """Pickle and copy as the constructor's arguments (the cached frame is not carried)."""
        return (type(self), (self.metrics, {m: dict(v) for m, v in self.values.items()}, self.provenance,
                             self.max_grade, self.requests, self.numbers, self.slices))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Results):
            return NotImplemented
        return (self.metrics == other.metrics and self.requests == other.requests
                and self.provenance == other.provenance and self.values == other.values)

    def __hash__(self) -> int:
        return hash((self.metrics, self.requests, self.provenance))

    def resolve(self, key: str | Metric) -> Metric:
        """``key`` as this evaluation resolved it: ``P@5`` -> ``P(rel=2)@5`` at relevance level 2.

        >>> from evalbridge import evaluate
        >>> str(evaluate({"q": {"a": 2}}, {"q": {"a": 1.0}}, "P@5", min_relevance=2).resolve("precision@5"))
        'P(rel=2)@5'
        """
        from ..metrics.resolution import resolve_metric

        return resolve_metric(parse_metric(key), level=self.provenance.relevance_level, max_grade=self.max_grade)

    def request(self, key: str | Metric | MetricRequest) -> MetricRequest:
        """The metric asked that ``key`` names: its label, the spelling asked, its canonical string (as
        evaluated), or any other spelling of it (resolved as this evaluation resolved it).

        >>> from evalbridge import evaluate
        >>> res = evaluate({"q": {"a": 2}}, {"q": {"a": 1.0}}, {"precision@5": "P@5"}, min_relevance=2)
        >>> [res.request(k).label for k in ("precision@5", "P@5", "P(rel=2)@5", "P_5")]
        ['precision@5', 'precision@5', 'precision@5', 'precision@5']

        Raises:
            KeyError: no metric asked has that name.
        """
        found = find_request(self.requests, key, self.resolve)
        if found is None:
            raise KeyError(f"{str(key)!r} was not evaluated; available: {', '.join(self.labels)}")
        return found

    @property
    def labels(self) -> tuple[str, ...]:
        """The label of each metric asked, in order: the keys of :attr:`means` and :attr:`per_query`."""
        return tuple(r.label for r in self.requests)

    def _key(self, key: str | Metric | MetricRequest) -> Metric:
        return self.request(key).metric

    def __getitem__(self, key: str | Metric | MetricRequest) -> float:
        """The mean of one metric over the evaluated queries."""
        return self.mean(key)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, (str, Metric)):  # parse_metric's refusal, caught below
            return False
        try:
            self._key(key)
        except (KeyError, ValueError):
            return False
        return True

    def mean(self, key: str | Metric | MetricRequest) -> float:
        """The mean of one metric over the evaluated queries (NaN when no query was evaluated)."""
        per_query = self.values[self._key(key)]
        return math.fsum(per_query.values()) / len(per_query) if per_query else math.nan

    def query(self, key: str | Metric | MetricRequest) -> dict[str, float]:
        """query id -> value of one metric (a new dict)."""
        return dict(self.values[self._key(key)])

    @property
    def means(self) -> dict[str, float]:
        """Label -> mean, in the order asked: a dict (a :class:`MetricMeans`) whose keys are the labels (the
        user's, else the spelling asked), in which any other name of a metric (canonical string, any
        spelling) finds its mean too.

        >>> from evalbridge import evaluate
        >>> means = evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["hit_rate@5"]).means
        >>> means, means["Success@5"]
        ({'hit_rate@5': 1.0}, 1.0)
        """
        return MetricMeans({r.label: self.mean(r.metric) for r in self.requests}, self)

    @property
    def query_ids(self) -> list[str]:
        return list(self.values[self.metrics[0]]) if self.metrics else []

    @property
    def per_query(self) -> pd.DataFrame:
        """A pandas DataFrame: one row per query id, one column per metric.

        Built on first access and kept; each access returns a copy of it, so changing the frame
        never changes the ``Results``. With pandas >= 3 (copy-on-write) the copy is shallow and
        costs microseconds whatever the size (data are copied only if the frame is written to);
        with pandas 2 it is a deep copy.
        """
        frame: pd.DataFrame | None = self.__dict__.get("_per_query")
        if frame is None:
            frame = _per_query_frame(self.requests, self.values)
            self.__dict__["_per_query"] = frame  # a cache, not a field: not compared, pickled or copied
        return frame.copy(deep=not _copy_on_write())

    def to_dict(self) -> dict[str, Any]:
        """``{"metrics": {label: mean}, "per_query": {qid: {label: value}}, "names": [{"label", "asked",
        "metric"}], "provenance": {...}}`` (JSON-ready); ``names`` records each label's metric as evaluated."""
        per_query: dict[str, dict[str, float]] = {}
        for r in self.requests:
            for qid, value in self.values[r.metric].items():
                per_query.setdefault(qid, {})[r.label] = value
        return {"metrics": dict(self.means), "per_query": per_query, "names": [r.to_dict() for r in self.requests],
                "provenance": self.provenance.to_dict()}

    def table(self, fmt: str = "terminal", *, digits: int = 4) -> str:
        """The means as a table in an output format that writes tables (``terminal``, ``markdown``, ``latex``,
        ``html``), the provenance summary under it."""
        from ..views.result_tables import render_results

        return render_results(self, fmt, digits)

    def to_markdown(self) -> str:
        return self.table("markdown")

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        means = list(self.means.items())
        shown = ", ".join(f"{k}={v:.4f}" for k, v in means[:_REPR_METRICS])
        if len(means) > _REPR_METRICS:
            shown += f", ... (+{len(means) - _REPR_METRICS} metrics)"
        return f"Results({shown}; {self.provenance.queries_evaluated} queries, backend={self.provenance.backend})"

    def _repr_html_(self) -> str:
        """Jupyter's view: the means as an HTML table, the provenance as its footnote."""
        return self.table("html")


#: metrics shown by ``repr(results)`` before "+N metrics"
_REPR_METRICS = 6


class MetricMeans(dict[str, float]):
    """:attr:`Results.means`: a plain ``dict`` label -> mean (it compares, prints and serialises as one) in
    which any other name of a metric asked (spelling asked, canonical string as evaluated, any spelling)
    also finds its mean: ``means["Success@5"]`` when ``hit_rate@5`` was asked."""

    def __init__(self, means: Mapping[str, float], results: Results) -> None:
        super().__init__(means)
        self._results = results

    def __missing__(self, key: str) -> float:
        try:
            return self[self._results.request(key).label]
        except (KeyError, ValueError):
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or key in self._results

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (dict(self), self._results))


def _per_query_frame(requests: tuple[MetricRequest, ...], values: Mapping[Metric, Mapping[str, float]]) -> pd.DataFrame:
    """The per-query DataFrame of :attr:`Results.per_query` (index ``query_id``, one float column per label)."""
    import pandas as pd

    frame = pd.DataFrame({r.label: pd.Series(dict(values[r.metric]), dtype="float64") for r in requests})
    frame.index = frame.index.astype(str)
    frame.index.name = "query_id"
    return frame


def _copy_on_write() -> bool:
    """True when pandas copies on write (always from pandas 3), so a shallow copy is a safe copy."""
    import pandas as pd

    return int(pd.__version__.split(".", 1)[0]) >= 3 or pd.get_option("mode.copy_on_write") is True
