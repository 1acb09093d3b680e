"""``Comparison``: the value :func:`evalbridge.compare` returns (one row per pair and metric, each system's
interval, the settings), how it is read (:meth:`Comparison.get`, ``interval``, ``better_than``, ``marker``,
``standings``, ``tiers``), and its tables, shown by :mod:`evalbridge.reports` in any output format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InputError, MetricSpecError
from ..common.json_data import json_ready
from ..metrics.requests import MetricRequest, find_request
from ..metrics.spec import Metric, parse_metric
from ..stats.paired_tests import CORRECTIONS, TESTS
from ..stats.tiers import letter

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation.slices import Slices
    from .standings import Standings
    from ..stats.statistics import Statistics
    from .tiers import Tiers

__all__ = ["PairedComparison", "SystemInterval", "Comparison"]


@dataclass(frozen=True)
class PairedComparison:
    """One system against one baseline on one metric (see the module docstring for each field).

    ``n`` queries have a value for both; ``unpaired`` queries have a value for only one of
    them and are left out of this pair (0 when both were evaluated on the same queries).
    """

    metric: str
    system: str
    baseline: str
    n: int
    baseline_mean: float
    system_mean: float
    delta: float
    ci_low: float
    ci_high: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    p_t: float
    p_randomization: float
    p_wilcoxon: float
    p_adjusted: float
    significant: bool
    unpaired: int = 0


@dataclass(frozen=True)
class SystemInterval:
    """One system's mean on one metric over its ``n`` queries, with its bootstrap confidence interval."""

    metric: str
    system: str
    n: int
    mean: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class Comparison:
    """Systems compared pair by pair, with the settings used.

    ``print(comparison)`` shows the systems x metrics table of means with significance
    markers and a footnote (test, correction, provenance); ``to_markdown()``, ``to_latex()``,
    ``to_html()`` (and the notebook view) the same table in other formats; ``to_frame()`` one
    row per (pair, metric), ``to_frame(table="systems")`` each system's mean and interval.

    Attributes:
        rows: one :class:`PairedComparison` per (metric, pair), metrics in the order asked.
        intervals: one :class:`SystemInterval` per (metric, system).
        systems: the system names, in the order given (their letters: a, b, c, ...).
        metrics: the metric labels (the user's labels, else the spellings asked).
        baselines: the systems the others were compared with; empty when all pairs were compared.
        test: the test whose corrected p-values decide significance (a key of :data:`TESTS`).
        correction: a key of :data:`CORRECTIONS`, applied over every row.
        alpha: significance level of the corrected p-values.
        confidence, n_resamples, seed, ci_method: the bootstrap's and the randomization test's settings.
        provenance: one line per system saying how its values were computed (when known).
        names: each label with the spelling asked and the metric as the first system evaluated it
            (empty when the systems' values were plain mappings keyed by something else than a metric).
        slices: per-slice means and differences against the baseline (:mod:`evalbridge.evaluation.slices`)
            when ``slices=`` was given, else None.
        values: system -> metric label -> (its query ids in order, their values as a float64 array): the values
            compared, which :meth:`standings` reads (not in :meth:`to_dict`, not compared by ``==``).
    """

    rows: tuple[PairedComparison, ...]
    intervals: tuple[SystemInterval, ...]
    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    baselines: tuple[str, ...]
    test: str
    correction: str
    alpha: float
    confidence: float
    n_resamples: int
    seed: int
    ci_method: str = "BCa"
    provenance: tuple[str, ...] = ()
    names: tuple[MetricRequest, ...] = ()
    slices: Slices | None = None
    values: Mapping[str, Mapping[str, tuple[tuple[str, ...], Any]]] = field(default_factory=dict, repr=False,
                                                                             compare=False)

    @property
    def baseline(self) -> str | None:
        """The first baseline (the one arrows refer to), or None when all pairs were compared."""
        return self.baselines[0] if self.baselines else None

    @property
    def letters(self) -> dict[str, str]:
        """system -> its letter (a, b, c, ... in the order of :attr:`systems`)."""
        return {system: letter(i) for i, system in enumerate(self.systems)}

    def _metric(self, metric: str | Metric | MetricRequest) -> tuple[str, ...]:
        """The label(s) of the rows ``metric`` names: a label, the spelling asked, the canonical string or any
        other spelling of a metric compared."""
        found = find_request(self.names, metric)
        if found is not None:
            return (found.label,)
        if isinstance(metric, MetricRequest):
            metric = metric.label
        try:
            return (str(metric), str(parse_metric(metric)))
        except MetricSpecError:
            return (str(metric),)

    def get(self, system: str, metric: str | Metric | MetricRequest, *, baseline: str | None = None) -> PairedComparison | None:
        """The row of ``system`` against ``baseline`` (default: the first baseline, or the first system
        when all pairs were compared) on ``metric`` (any spelling), or None."""
        wanted = self._metric(metric)
        against = baseline or self.baseline or self.systems[0]
        return next((r for r in self.rows if r.system == system and r.baseline == against and r.metric in wanted),
                    None)

    def interval(self, system: str, metric: str | Metric | MetricRequest) -> SystemInterval | None:
        """``system``'s mean and confidence interval on ``metric`` (any spelling), or None."""
        wanted = self._metric(metric)
        return next((r for r in self.intervals if r.system == system and r.metric in wanted), None)

    def better_than(self, system: str, metric: str | Metric | MetricRequest) -> tuple[str, ...]:
        """The systems ``system`` is significantly better than on ``metric``, in the order of :attr:`systems`."""
        wanted = self._metric(metric)
        beaten = set()
        for r in self.rows:
            if r.metric in wanted and r.significant:
                if r.system == system and r.delta > 0:
                    beaten.add(r.baseline)
                elif r.baseline == system and r.delta < 0:
                    beaten.add(r.system)
        return tuple(s for s in self.systems if s in beaten)

    def marker(self, system: str, metric: str | Metric | MetricRequest, *, style: str = "arrows", fmt: str = "terminal") -> str:
        """A cell's significance marker in a style of :data:`~evalbridge.views.markers.MARKER_STYLES` and an
        output format.

        ``arrows``: ▲ / ▼ when significantly above / below the baseline; ``letters``: the letters of
        the systems it is significantly better than, as a superscript.
        """
        from ..views.markers import marker
        from ..views.formats import table_format

        return marker(self, system, metric, self.marker_style(style), table_format(fmt).marks)

    def marker_style(self, markers: str | None) -> str:
        """The marker style ``markers`` names (default: ``arrows`` with one baseline, else ``letters``)."""
        from ..views.markers import MARKER_STYLES

        style = markers or ("arrows" if len(self.baselines) == 1 else "letters")
        if style not in MARKER_STYLES:
            raise InputError(f"unknown marker style {style!r}; choose one of {', '.join(map(repr, MARKER_STYLES))}.")
        return style

    def standings(self, *, hardest: int = 10) -> Standings:
        """Every system beside every other, query by query, from the values compared: win / tie / loss of every
        pair (all pairs, whatever the baselines), the ``hardest`` queries (the lowest mean over the systems) and
        each system's rank on every query, per metric (:func:`evalbridge.decisions.standings.standings`; the queries
        in the order of their ids).

        >>> import evalbridge as eb
        >>> cmp = eb.compare(None, {"bm25": {"P@1": {"q1": 0.0, "q2": 1.0}}, "dense": {"P@1": {"q1": 1.0, "q2": 1.0}}},
        ...                  ["P@1"], n_resamples=100)
        >>> s = cmp.standings()
        >>> [(p.system, p.other, p.wins, p.ties, p.losses) for p in s.pairs], s.hardest[0].query
        ([('dense', 'bm25', 1, 1, 0)], 'q1')
        """
        from .standings import standings

        return standings(self._per_system(), list(self.metrics), hardest=hardest)

    def _per_system(self) -> dict[str, dict[str, dict[str, float]]]:
        """system -> metric label -> query -> value: the values compared."""
        if not self.values:
            raise InputError("this comparison holds no per-query values to stand the systems side by side.",
                             fix="compare with eb.compare(qrels, runs, metrics) or eb.compare(None, results, metrics).")
        return {system: {label: dict(zip(ids, values.tolist())) for label, (ids, values) in metrics.items()}
                for system, metrics in self.values.items()}

    def tiers(self, *, method: str = "randomization", statistics: Statistics | None = None,
              alpha: float | None = None, confidence: float | None = None, n_resamples: int | None = None,
              seed: int | None = None) -> Tiers:
        """Every system's tier and rank interval, per metric, from the values compared: simultaneous tests of all
        pairs (``method``: ``randomization``, Carterette's randomised Tukey HSD; ``bootstrap``, the bootstrap of the
        maximum statistic; ``tukey``, Tukey's HSD), tiers no test separates and each system's rank interval from the
        bootstrap over the queries every system has (:func:`evalbridge.decisions.tiers.tiers`). ``alpha``,
        ``confidence``, ``n_resamples`` and ``seed`` are ``statistics``' (default: the comparison's), each replaced by
        its keyword when given.

        >>> import evalbridge as eb
        >>> values = {"q1": 0.1, "q2": 0.2, "q3": 0.3, "q4": 0.2}
        >>> cmp = eb.compare(None, {s: {"P@1": {q: v + shift for q, v in values.items()}}
        ...                         for s, shift in (("bm25", 0.0), ("dense", 0.5), ("hybrid", 0.51))},
        ...                  ["P@1"], n_resamples=100)
        >>> t = cmp.tiers(n_resamples=200)
        >>> [(r.system, r.tier, r.rank_low, r.rank_high) for r in t.rows]
        [('hybrid', 'a', 1, 1), ('dense', 'a', 2, 2), ('bm25', 'b', 3, 3)]
        """
        from ..stats.statistics import Statistics
        from .tiers import tiers

        base = statistics if statistics is not None else Statistics(
            alpha=self.alpha, confidence=self.confidence, n_resamples=self.n_resamples, seed=self.seed)
        return tiers(self._per_system(), list(self.metrics), method=method, statistics=base, alpha=alpha,
                     confidence=confidence, n_resamples=n_resamples, seed=seed)

    def to_frame(self, *, table: str = "pairs") -> pd.DataFrame:
        """``pairs``: one row per (metric, pair), one column per field; ``systems``: one row per
        (metric, system) with its mean, interval and letter."""
        import pandas as pd

        if table not in _FRAMES:
            raise InputError(f"unknown table {table!r}; choose one of {', '.join(map(repr, _FRAMES))}.")
        return pd.DataFrame(_FRAMES[table](self))

    def settings(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "baselines": list(self.baselines), "test": self.test,
                "correction": self.correction, "alpha": self.alpha, "confidence": self.confidence,
                "n_resamples": self.n_resamples, "seed": self.seed, "ci_method": self.ci_method}

    def to_dict(self) -> dict[str, Any]:
        """``{"settings", "rows", "intervals", "provenance"}``, JSON-ready (:func:`~evalbridge.common.json_data.json_ready`)."""
        return json_ready({"settings": self.settings(), "rows": [asdict(r) for r in self.rows],
                           "intervals": [asdict(r) for r in self.intervals],
                           "names": [r.to_dict() for r in self.names], "provenance": list(self.provenance)})

    def describe(self) -> str:
        """One sentence saying how significance was decided, and over which family."""
        pairs = len(self.rows) // max(1, len(self.metrics))
        if not self.baselines:
            who = "all pairs"
        elif len(self.baselines) == 1:
            who = f"vs baseline {self.baselines[0]!r}"
        else:
            who = f"vs baselines {', '.join(map(repr, self.baselines))}"
        unpaired = sum(r.unpaired for r in self.rows)
        text = (f"{who}: two-sided {TESTS[self.test].title}, {CORRECTIONS[self.correction].title} over {len(self.rows)} "
                f"comparisons ({pairs} pairs x {len(self.metrics)} metrics: every comparison made), "
                f"alpha {self.alpha:g}; {self.confidence:.0%} {self.ci_method} bootstrap CIs "
                f"({self.n_resamples} resamples); seed {self.seed}")
        if unpaired:
            text += f"; {unpaired} (pair, metric, query) values without a partner left out of their pair"
        return text

    def footnote(self, *, markers: str | None = None) -> list[str]:
        """The lines under a table: what the markers mean, :meth:`describe`, the provenance."""
        from ..views.markers import MARKER_STYLES

        return [MARKER_STYLES[self.marker_style(markers)].legend, self.describe(), *self.provenance]

    def table(self, *, fmt: str = "terminal", markers: str | None = None, digits: int = 4) -> str:
        """The systems x metrics table of means with significance markers, and its footnote.

        ``fmt``: an output format that writes tables (``terminal``, ``markdown``, ``latex``, ``html``);
        ``markers``: a key of :data:`~evalbridge.views.markers.MARKER_STYLES` (default: ``arrows`` with
        one baseline, else ``letters``).
        """
        from ..views.comparison_table import comparison_table

        return comparison_table(self, fmt, markers, digits)

    def to_markdown(self, *, markers: str | None = None, digits: int = 4) -> str:
        """:meth:`table` in GitHub Markdown."""
        return self.table(fmt="markdown", markers=markers, digits=digits)

    def to_latex(self, *, markers: str | None = None, digits: int = 4) -> str:
        """:meth:`table` as a booktabs LaTeX table, the footnote in the caption."""
        return self.table(fmt="latex", markers=markers, digits=digits)

    def to_html(self, *, markers: str | None = None, digits: int = 4) -> str:
        """:meth:`table` as an HTML table, the footnote below it (the notebook view). The whole page of a
        comparison is its report's: ``Report(results={}, comparison=cmp).to_html(path)``."""
        return self.table(fmt="html", markers=markers, digits=digits)

    def _repr_html_(self) -> str:
        return self.table(fmt="html")

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        significant = sum(r.significant for r in self.rows)
        who = f"baselines={list(self.baselines)}" if self.baselines else "all pairs"
        return (f"Comparison({len(self.systems)} systems x {len(self.metrics)} metrics, {who}, test={self.test!r}, "
                f"correction={self.correction!r}: {significant}/{len(self.rows)} significant at {self.alpha:g})")


def _pair_records(comparison: Comparison) -> list[dict[str, Any]]:
    return [asdict(r) for r in comparison.rows]


def _system_records(comparison: Comparison) -> list[dict[str, Any]]:
    letters = comparison.letters
    return [{**asdict(r), "letter": letters[r.system]} for r in comparison.intervals]


#: to_frame(table) -> the records of that table
_FRAMES: Mapping[str, Callable[[Comparison], list[dict[str, Any]]]] = {
    "pairs": _pair_records, "systems": _system_records,
}
