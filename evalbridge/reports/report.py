"""Reports: what one evaluation produced, the parts every format shows, its provenance (per-query files: per_query.py).

A :class:`Report` gathers what one evaluation produced (each system's
:class:`~evalbridge.evaluation.results.Results`, the comparison with the baseline, gates, cross-checks,
provenance); the report formats (:mod:`evalbridge.views.formats`, one module each in
:mod:`evalbridge.reports.renderers`: ``terminal``, ``markdown``, ``csv``, ``json``, ``latex``) turn it
into text from the parts defined here (the cells with their markers, the comparison rows, the bands).
In the tables a mean is followed by ``▲`` (``\\uparrow`` in LaTeX) when it is significantly above the
baseline and ``▼`` when significantly below, after the multiple-comparison correction; with
``markers="letters"`` each system gets a letter instead and a mean carries, as a superscript, the
letters of the systems it is significantly better than (ranx's style). The RAG quality bands (poor / fair / good / excellent per metric)
are an optional extra table.

Every file is written atomically (:mod:`evalbridge.reports.writing`): to a temporary file in the
same directory, flushed, then ``os.replace``, so an interrupted run never leaves a half-written report.

Example:
    >>> import evalbridge as eb
    >>> res = eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 0.9, "d2": 0.5}}, ["P@2", "RR"])
    >>> print(render(Report(results={"bm25": res}), "csv"), end="")
    system,P@2,RR,queries_evaluated,missing_from_run,ignored_run_only
    bm25,0.5,1.0,1,0,0
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EvalbridgeError, InputError
from ..common.json_data import json_value
from ..metrics.requests import MetricRequest
from ..metrics.spec import Metric, parse_metric
from ..views.formats import notebook, report_format
from .writing import output_file, write_file_atomic
from ..views.markers import MARKER_STYLES
from ..views.sections import AFTER_CROSSCHECK, report_data
from ..views.table import number, p_value

if TYPE_CHECKING:
    import pandas as pd

    from ..cross_check.checking import CrossCheck
    from ..evaluation.results import Results
    from ..decisions.comparison import Comparison
    from ..decisions.decision import Decision
    from ..decisions.gates import GateResult
    from ..evaluation.slices import Slices

__all__ = ["Report", "render", "QUALITY_BANDS", "BAND_NAMES", "band_of", "means_frame", "system_json",
           "file_sha256", "report_dict", "make_provenance"]

#: The RAG quality bands (P@K, Recall@K, MRR, NDCG@K): lower bounds of fair, good and excellent.
#: A value gets the highest band whose lower bound it reaches (so 0.85 is excellent for P@K).
QUALITY_BANDS: Mapping[str, tuple[float, float, float]] = {
    "P": (0.5, 0.7, 0.85),
    "R": (0.6, 0.75, 0.85),
    "RR": (0.4, 0.6, 0.8),
    "nDCG": (0.5, 0.7, 0.85),
}
BAND_NAMES = ("poor", "fair", "good", "excellent")
UP, DOWN = "▲", "▼"


def band_of(metric: Metric | str | MetricRequest, value: float,
            bands: Mapping[str, Sequence[float]] = QUALITY_BANDS) -> str | None:
    """The quality band of a mean: looked up by canonical metric string, then by family name; for a metric
    asked (a :class:`~evalbridge.metrics.requests.MetricRequest`) by its label first, then by the metric as
    evaluated and as asked.

    >>> band_of("ndcg@10", 0.7308), band_of("P@5", 0.4), band_of("map", 0.9)
    ('good', 'poor', None)
    """
    if isinstance(metric, MetricRequest):
        keys = [metric.label, str(metric.metric), str(parse_metric(metric.asked)), metric.metric.name]
    else:
        parsed = parse_metric(metric)
        keys = [str(parsed), parsed.name]
    bounds = next((bands[k] for k in keys if k in bands), None)
    if bounds is None or not math.isfinite(value):
        return None
    return BAND_NAMES[sum(value >= b for b in bounds)]


@dataclass(frozen=True)
class Report:
    """Everything one evaluation produced, ready to render.

    Attributes:
        results: system name -> :class:`~evalbridge.evaluation.results.Results`, in display order.
        metrics: the metrics to show, by any name the first system's results know (a label, the spelling
            asked, any spelling); default: every metric the first system was asked.
        title: a heading.
        comparison: a :class:`~evalbridge.decisions.comparison.Comparison` against the baseline, or None.
        gates: :class:`~evalbridge.decisions.gates.GateResult` list.
        crosscheck: system name -> cross-check report (``.ok``, ``.differences``, ``.unexplained``,
            ``to_markdown()``, ``to_dict()``).
        bands: metric or family -> (fair, good, excellent) lower bounds, or None for no bands.
        provenance: JSON-ready provenance (versions, conventions, config, input sha256, query counts).
        digits: decimals shown in text tables.
        markers: significance markers in the tables, a key of
            :data:`~evalbridge.views.markers.MARKER_STYLES`: ``arrows`` (▲ / ▼ against the
            baseline) or ``letters`` (ranx's superscript letters).
        A report of an agreement alone (``analyses={"agreement": ...}``), or of a comparison alone
            (``Report(results={}, comparison=cmp)``), has no ``results``.
        standings: the systems' :class:`~evalbridge.decisions.standings.Standings` (win / tie / loss of every pair,
            the hardest queries, ranks per query) when the report compares systems, else None.
        slices: per-slice means, intervals and differences against the baseline
            (:class:`~evalbridge.evaluation.slices.Slices`, ``slices:`` of a config), or None.
        analyses: analysis key -> its result, for each analysis of a config
            (:data:`evalbridge.config.analyses.ANALYSES`) it holds, in their order: ``agreement`` (an
            :class:`~evalbridge.evalsets.agreement.Agreement` of two sets of judgements, ``evalbridge agree``),
            ``diff`` (system -> its
            :class:`~evalbridge.decisions.diffing.RunDiff` against the baseline), ``power``
            (:class:`~evalbridge.decisions.power.PowerAnalysis`: the smallest difference each pair and metric can
            detect), ``tiers`` (:class:`~evalbridge.decisions.tiers.Tiers`: the tiers no simultaneous test separates, rank
            intervals), ``topic_set_size`` (:class:`~evalbridge.decisions.topic_set_size.TopicSetSize`), ``diagnose`` (:class:`~evalbridge.evalsets.diagnostics.Diagnosis`), ``uncertain`` (system -> its
            :class:`~evalbridge.evalsets.uncertainty.Uncertainty`), ``changed``
            (:class:`~evalbridge.evalsets.changes.JudgementChange`); each shows through its view
            (:data:`evalbridge.views.sections.VIEWS`).
        topics: query id -> its text, where the judgements came with them (a dataset's topics): the page names
            each plotted query by its id and text.
    """

    results: Mapping[str, Results]
    metrics: Sequence[str | Metric | MetricRequest] = ()
    title: str = "evalbridge report"
    comparison: Comparison | None = None
    gates: Sequence[GateResult] = ()
    crosscheck: Mapping[str, CrossCheck] = field(default_factory=dict)
    bands: Mapping[str, Sequence[float]] | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    digits: int = 4
    markers: str = "arrows"
    standings: Any = None
    slices: Slices | None = None
    analyses: Mapping[str, Any] = field(default_factory=dict)
    topics: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.results and not self.analyses and self.comparison is None:
            raise InputError("a report needs at least one system's results, a comparison, or an analysis's result "
                             "(an agreement).")
        if self.markers not in MARKER_STYLES:
            raise InputError(f"unknown marker style {self.markers!r}; choose one of "
                             f"{', '.join(map(repr, MARKER_STYLES))}.")
        if not self.metrics and self.results:
            first = next(iter(self.results.values()))
            object.__setattr__(self, "metrics", tuple(first.requests))

    @property
    def agreement(self) -> Any:
        """The :class:`~evalbridge.evalsets.agreement.Agreement` of two sets of judgements (``agreement:``), or None."""
        return self.analyses.get("agreement")

    @property
    def names(self) -> list[MetricRequest]:
        """Each metric shown, as the first system's results name it: label, spelling asked, metric as evaluated;
        none without results (a report of an agreement alone)."""
        first = next(iter(self.results.values()), None)
        return [first.request(m) for m in self.metrics] if first is not None else []

    @property
    def labels(self) -> list[str]:
        """Column labels: each metric's label (the user's, else the spelling asked), whatever the settings."""
        return [r.label for r in self.names]

    def marker(self, system: str, label: str, *, up: str = UP, down: str = DOWN, fmt: str = "terminal") -> str:
        """The significance marker of a cell ('' when not significant or no comparison); ``label`` is any
        name of the metric (its label, spelling asked, canonical string).

        With ``markers="letters"``: the letters of the systems it is significantly better than,
        as a superscript in ``fmt`` (``terminal``, ``markdown`` or ``latex``).
        """
        if self.comparison is None:
            return ""
        first = next(iter(self.results.values()))
        key = first.request(label) if label in first else label
        if self.markers == "letters":
            return self.comparison.marker(system, key, style="letters", fmt=fmt)
        row = self.comparison.get(system, key)
        if row is None or not row.significant:
            return ""
        return up if row.delta > 0 else down if row.delta < 0 else ""

    @property
    def decision(self) -> Decision:
        """What the numbers decide (:func:`evalbridge.decisions.decision.decide`): the first block of every format."""
        from ..decisions.decision import decide

        return decide(results=self.results, comparison=self.comparison, gates=self.gates, analyses=self.analyses,
                      provenance=self.provenance)

    @property
    def failed_gates(self) -> list[Any]:
        return [g for g in self.gates if not g.passed]

    @property
    def crosscheck_ok(self) -> bool:
        return all(check.ok for check in self.crosscheck.values())

    def render(self, fmt: str) -> str:
        """The report in a registered format (:func:`evalbridge.views.formats.report_formats`: ``terminal``,
        ``markdown``, ``csv``, ``json``, ``latex``)."""
        return render(self, fmt)

    def to_text(self) -> str:
        """The plain-text view (what ``print(report)`` shows): table, legend, provenance, cross-checks, gates."""
        return render(self, "terminal")

    def to_markdown(self) -> str:
        """The full report in GitHub Markdown."""
        return render(self, "markdown")

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the report to ``path`` as one self-contained HTML page (the ``html`` format: it works offline,
        its tables sort, its plots are inline); returns ``path``. A path that is an input-like non-regular file
        (a FIFO, a device, a folder) or read-only is refused before anything is rendered.

        The notebook view (``_repr_html_``) is a fragment, not this page."""
        output_file(path)
        return write_file_atomic(path, render(self, "html"))

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        first = next(iter(self.results.values()), None)
        text = (f"Report({self.title!r}: {len(self.results)} system{'s' if len(self.results) != 1 else ''} x "
                f"{len(self.metrics)} metric{'s' if len(self.metrics) != 1 else ''}"
                + (f", {first.provenance.queries_evaluated} queries" if first is not None else ""))
        if self.comparison is not None:
            text += f", baseline {self.comparison.baseline!r}"
        if self.gates:
            from ..decisions.gates import gate_summary

            text += f", gates: {gate_summary(self.gates)}"
        if self.crosscheck:
            text += f", cross-check {'ok' if self.crosscheck_ok else 'NOT ok'}"
        if self.agreement is not None:
            text += f", agreement of {' and '.join(self.agreement.judges.names)}"
        return text + ")"

    def _repr_html_(self) -> str:
        """Jupyter's view, an HTML fragment: table with significance markers, comparison, gates, cross-checks,
        and the provenance as a footnote (the notebook view of :func:`evalbridge.views.formats.notebook`)."""
        return notebook(self)


def means_frame(report: Report) -> pd.DataFrame:
    """Systems x metrics means as a DataFrame (index ``system``)."""
    import pandas as pd

    rows = {system: [res[m] for m in report.metrics] for system, res in report.results.items()}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=report.labels)
    frame.index.name = "system"
    return frame


def system_json(results: Any, provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One system's means shaped like the LLM-judge guide's ``{"metrics": {...}}``, plus its provenance."""
    data: dict[str, Any] = {"metrics": results.means}
    if provenance is not None:
        data["provenance"] = dict(provenance)
    return data


def render(report: Report, fmt: str) -> str:
    """``report`` in the registered format ``fmt`` (:func:`evalbridge.views.formats.render`)."""
    return report_format(fmt).render(report)


# The parts of a report that the formats (evalbridge.reports.renderers) show, each computed here once.

def _means(report: Report) -> dict[str, list[float]]:
    """System -> its mean of each metric (in :attr:`Report.labels` order): what the text, Markdown and
    HTML tables show, without pandas (no DataFrame is needed to lay out a few numbers)."""
    return {system: [math.nan if res[m] is None else float(res[m]) for m in report.metrics]
            for system, res in report.results.items()}


def cells(report: Report, *, up: str = UP, down: str = DOWN,
          best: Callable[[str], str] | None = None, fmt: str = "terminal") -> list[list[str]]:
    means = _means(report)
    letters = report.comparison.letters if report.comparison is not None and report.markers == "letters" else {}
    numbers = [[v for v in column if not math.isnan(v)] for column in zip(*means.values())]
    top = [max(column) if column else None for column in numbers]  # NaN skipped, as a column's max
    rows = []
    for system, values in means.items():
        row = [f"{system} ({letters[system]})" if system in letters else str(system)]
        for label, value, highest in zip(report.labels, values, top):
            text = number(value, report.digits) + report.marker(system, label, up=up, down=down, fmt=fmt)
            if best is not None and len(means) > 1 and value == highest:
                text = best(text)
            row.append(text)
        rows.append(row)
    return rows


def comparison_rows(report: Report) -> list[list[str]]:
    d = report.digits
    rows: list[list[str]] = []
    if report.comparison is None:  # never: called for reports with a comparison
        return rows
    for r in report.comparison.rows:
        rows.append([r.metric, r.system, f"{r.delta:+.{d}f}", f"[{number(r.ci_low, d)}, {number(r.ci_high, d)}]",
                     number(r.effect_size, 2), f"{r.wins}/{r.ties}/{r.losses}", p_value(r.p_t),
                     p_value(r.p_randomization), p_value(r.p_adjusted), "yes" if r.significant else "no"])
    return rows


COMPARISON_HEADERS = ("metric", "system", "Δ", "CI (unadjusted)", "d_z", "W/T/L", "p (t)", "p (rand.)", "p adj.",
                      "sig.")


def band_rows(report: Report) -> list[list[str | None]]:
    """A header row, then per system its band per metric (None for a mean that is not finite)."""
    labelled = [(i, r, label) for i, (r, label) in enumerate(zip(report.names, report.labels))
                if band_of(r, 0.0, report.bands or {}) is not None]
    if not labelled:
        return []
    header: list[str | None] = ["system", *[label for _, _, label in labelled]]
    return [header] + [[str(system), *[band_of(r, values[i], report.bands or {}) for i, r, _ in labelled]]
                       for system, values in _means(report).items()]


def legend(report: Report) -> str:
    if report.comparison is None:
        return ""
    return f"{MARKER_STYLES[report.markers].legend}: {report.comparison.describe()}"


def queries_lines(report: Report) -> list[str]:
    lines = []
    for system, res in report.results.items():
        p = res.provenance
        lines.append(f"{system}: {p.queries_evaluated} queries evaluated, {len(p.missing_from_run)} missing from "
                     f"the run, {len(p.ignored_run_only)} run-only ignored"
                     + (f", {len(p.without_relevant)} without a relevant judgement" if p.without_relevant else ""))
        lines += [f"{system}: warning: {w}" for w in p.warnings]
    return lines


def crosscheck_line(check: Any) -> str:
    """``OK: pytrec_eval 1245/1245 agree; ranx 1240/1245 agree, 5 explained`` (per backend, all metrics)."""
    parts = []
    agreement = getattr(check, "agreement", None)
    if agreement is not None and not agreement.empty:
        totals = agreement.groupby("backend", sort=False)[["queries", "agree", "explained", "unexplained"]].sum()
        for backend, row in totals.iterrows():
            text = f"{backend} {row.agree}/{row.queries} agree"
            text += f", {row.explained} explained" if row.explained else ""
            text += f", {row.unexplained} UNEXPLAINED" if row.unexplained else ""
            parts.append(text)
    else:
        parts.append(f"{len(check.differences)} differences, {len(check.unexplained)} unexplained")
    unsupported = len(getattr(check, "unsupported", {}) or {})
    if unsupported:
        parts.append(f"{unsupported} (backend, metric) pairs unsupported")
    return ("OK: " if check.ok else "NOT OK: ") + "; ".join(parts)




def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    labels = report.labels
    decision = report.decision
    data: dict[str, Any] = {
        "title": report.title,
        **({} if decision.empty else {"decision": decision.to_dict()}),  # first, as every format opens with it
        "metrics": labels,
        "names": [r.to_dict() for r in report.names],
        "systems": {s: {"metrics": {lab: r[m] for m, lab in zip(report.metrics, labels)},
                        "queries": {"evaluated": r.provenance.queries_evaluated,
                                    "missing_from_run": len(r.provenance.missing_from_run),
                                    "ignored_run_only": len(r.provenance.ignored_run_only)}}
                    for s, r in report.results.items()},
    }
    if report.comparison is not None:
        data["comparison"] = report.comparison.to_dict()
    if report.bands:
        data["bands"] = {"thresholds": {k: list(v) for k, v in report.bands.items()},
                         "systems": {row[0]: dict(zip(band_rows(report)[0][1:], row[1:]))
                                     for row in band_rows(report)[1:]}}
    if report.gates:
        data["gates"] = [g.to_dict() for g in report.gates]
    if report.crosscheck:
        data["crosscheck"] = {s: c.to_dict() for s, c in report.crosscheck.items()}
    data |= report_data(report, AFTER_CROSSCHECK)
    if report.standings is not None:
        data["standings"] = report.standings.to_dict()
    data |= report_data(report)
    if any(r.numbers for r in report.results.values()):
        from ..views.slices import fronts

        for s, r in report.results.items():
            data["systems"][s]["numbers"] = {n.field: {"n": n.n, "mean": n.mean, "p50": n.p50, "p95": n.p95}
                                             for n in r.numbers}
        data["quality_vs_cost"] = fronts(report.results, labels)
    if report.slices is not None:
        data["slices"] = report.slices.to_dict()
    data["provenance"] = report.provenance
    out: dict[str, Any] = json_value(data)
    return out


def make_provenance(results: Mapping[str, Any], *, inputs: Mapping[str, Any] | None = None,
                    backends: Sequence[str] = (), config: Mapping[str, Any] | None = None,
                    seed: int | None = None, metrics: Sequence[str] | None = None,
                    conventions: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance block of a report: versions, conventions, inputs, query counts.

    Args:
        results: system -> :class:`~evalbridge.evaluation.results.Results` (conventions and counts are read from it).
        inputs: input name -> ``{"path", "format", "sha256"}``.
        backends: every backend involved (the evaluating one first); each one's version is recorded,
            ``unavailable`` when its library is not installed.
        config: the config's name, sha256 and settings, when there is one.
        seed: the seed of the random steps.
        metrics: the metric labels (default: the first system's labels).
        conventions: ``{ties, score_precision, missing_queries}`` when no system was evaluated (a report
            of an agreement alone); otherwise they are read from the results.
    """
    import platform

    from .._version import __version__
    from ..backends import get_backend

    first = next(iter(results.values())).provenance if results else None
    versions = {}
    for name in dict.fromkeys([*([first.backend] if first is not None else []), *backends]):
        try:
            versions[name] = get_backend(name).version()
        except (ImportError, EvalbridgeError):
            versions[name] = "unavailable"
    if first is not None:
        c = first.settings
        conventions = {"ties": c.ties, "score_precision": c.score_precision, "missing_queries": c.missing_queries,
                       "no_relevant": c.no_relevant}
    data: dict[str, Any] = {
        "evalbridge_version": __version__,
        "python": platform.python_version(),
        "backend": first.backend if first is not None else next(iter(backends), None),
        "backend_versions": versions,
        "conventions": dict(conventions) if conventions is not None else None,
        "relevance_level": first.relevance_level if first is not None else None,
        "metrics": list(metrics or (next(iter(results.values())).labels if results else ())),
        "config": dict(config) if config is not None else None,
        "inputs": dict(inputs or {}),
        "queries": {name: {"evaluated": r.provenance.queries_evaluated,
                           "missing_from_run": len(r.provenance.missing_from_run),
                           "ignored_run_only": len(r.provenance.ignored_run_only),
                           "without_relevant": len(r.provenance.without_relevant)} for name, r in results.items()},
        "bridges": {name: list(r.provenance.bridges) for name, r in results.items() if r.provenance.bridges},
        "warnings": {name: list(r.provenance.warnings) for name, r in results.items() if r.provenance.warnings},
        "seed": seed,
    }
    return data


#: Bytes of a file mapped and hashed at a time by :func:`file_sha256` (a multiple of ``mmap.ALLOCATIONGRANULARITY``).
_HASH_WINDOW = 1 << 24


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file's bytes.

    The file is mapped into memory 16 MiB at a time and each window hashed in place (no copy of the
    bytes: 10% less CPU than reading them; one window mapped at a time: the process's resident memory
    does not grow by the file's size). ``hashlib`` lets go of the GIL meanwhile, so other threads run.
    What is not a regular file (a pipe) is read in blocks."""
    import mmap
    import stat

    window = _HASH_WINDOW
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
            return digest.hexdigest()
        for offset in range(0, status.st_size, window):
            with mmap.mmap(handle.fileno(), min(window, status.st_size - offset), access=mmap.ACCESS_READ,
                           offset=offset) as mapped:
                digest.update(mapped)
    return digest.hexdigest()
