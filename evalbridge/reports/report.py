"""Reports: the systems x metrics table in five formats, per-query files, provenance, atomic writes.

A :class:`Report` gathers what one evaluation produced (each system's
:class:`~evalbridge.results.Results`, the comparison with the baseline, gates, cross-checks,
provenance); :data:`RENDERERS` turns it into text: ``terminal``, ``markdown``, ``csv``,
``json`` and ``latex``. In the tables a mean is followed by ``▲`` (``\\uparrow`` in LaTeX)
when it is significantly above the baseline and ``▼`` when significantly below, after the
multiple-comparison correction; with ``markers="letters"`` each system gets a letter instead
and a mean carries, as a superscript, the letters of the systems it is significantly better
than (ranx's style). The RAG quality bands (poor / fair / good / excellent per metric)
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

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EvalbridgeError, InputError
from ..metrics.spec import Metric, parse_metric
from .latex import latex_escape as _latex
from .writing import atomic_file, write_file_atomic
from ..stats.compare import MARKER_STYLES

__all__ = ["Report", "render", "render_terminal", "render_markdown", "render_html", "RENDERERS", "QUALITY_BANDS", "BAND_NAMES", "band_of", "means_frame",
           "per_query_frame", "system_json", "write_atomic", "atomic_path", "file_sha256", "write_per_query",
           "jsonable", "report_dict", "make_provenance", "label_of"]

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


def band_of(metric: Metric | str, value: float, bands: Mapping[str, Sequence[float]] = QUALITY_BANDS) -> str | None:
    """The quality band of a mean: looked up by canonical metric string, then by family name.

    >>> band_of("ndcg@10", 0.7308), band_of("P@5", 0.4), band_of("map", 0.9)
    ('good', 'poor', None)
    """
    metric = parse_metric(metric)
    bounds = bands.get(str(metric), bands.get(metric.name))
    if bounds is None or not math.isfinite(value):
        return None
    return BAND_NAMES[sum(value >= b for b in bounds)]


def label_of(results: Any, spec: str | Metric) -> str:
    """The label of ``spec`` as ``results`` evaluated it: ``P(rel=2)@5`` for ``P@5`` at level 2.

    >>> import evalbridge as eb
    >>> label_of(eb.evaluate({"q": {"a": 2}}, {"q": {"a": 1.0}}, "precision@5", min_relevance=2), "P@5")
    'P(rel=2)@5'
    """
    return str(_resolved(results, spec))


def _resolved(results: Any, spec: str | Metric) -> Metric:
    """``spec`` as ``results`` evaluated it (e.g. with the evaluation's relevance level)."""
    metric = parse_metric(spec)
    values = getattr(results, "values", {})
    if metric not in values and hasattr(results, "resolve"):
        metric = results.resolve(metric)
    return metric


@dataclass(frozen=True)
class Report:
    """Everything one evaluation produced, ready to render.

    Attributes:
        results: system name -> :class:`~evalbridge.results.Results`, in display order.
        metrics: the metric specs to show (default: the first system's metrics).
        title: a heading.
        comparison: a :class:`~evalbridge.stats.compare.Comparison` against the baseline, or None.
        gates: :class:`~evalbridge.stats.gates.GateResult` list.
        crosscheck: system name -> cross-check report (``.ok``, ``.differences``, ``.unexplained``,
            ``to_markdown()``, ``to_dict()``).
        bands: metric or family -> (fair, good, excellent) lower bounds, or None for no bands.
        provenance: JSON-ready provenance (versions, conventions, config, input sha256, query counts).
        digits: decimals shown in text tables.
        markers: significance markers in the tables, a key of
            :data:`~evalbridge.stats.compare.MARKER_STYLES`: ``arrows`` (▲ / ▼ against the
            baseline) or ``letters`` (ranx's superscript letters).
    """

    results: Mapping[str, Any]
    metrics: Sequence[str | Metric] = ()
    title: str = "evalbridge report"
    comparison: Any = None
    gates: Sequence[Any] = ()
    crosscheck: Mapping[str, Any] = field(default_factory=dict)
    bands: Mapping[str, Sequence[float]] | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    digits: int = 4
    markers: str = "arrows"

    def __post_init__(self) -> None:
        if not self.results:
            raise InputError("a report needs at least one system's results.")
        if self.markers not in MARKER_STYLES:
            raise InputError(f"unknown marker style {self.markers!r}; choose one of "
                             f"{', '.join(map(repr, MARKER_STYLES))}.")
        if not self.metrics:
            first = next(iter(self.results.values()))
            object.__setattr__(self, "metrics", tuple(first.metrics))

    @property
    def labels(self) -> list[str]:
        """Column labels: each metric as the first system resolved it (e.g. ``P(rel=2)@10``)."""
        first = next(iter(self.results.values()))
        return [label_of(first, m) for m in self.metrics]

    def marker(self, system: str, label: str, *, up: str = UP, down: str = DOWN, fmt: str = "terminal") -> str:
        """The significance marker of a cell ('' when not significant or no comparison).

        With ``markers="letters"``: the letters of the systems it is significantly better than,
        as a superscript in ``fmt`` (``terminal``, ``markdown`` or ``latex``).
        """
        if self.comparison is not None and self.markers == "letters":
            return self.comparison.marker(system, label, style="letters", fmt=fmt)
        row = self.comparison.get(system, label) if self.comparison is not None else None
        if row is None or not row.significant:
            return ""
        return up if row.delta > 0 else down if row.delta < 0 else ""

    @property
    def failed_gates(self) -> list[Any]:
        return [g for g in self.gates if not g.passed]

    @property
    def crosscheck_ok(self) -> bool:
        return all(check.ok for check in self.crosscheck.values())

    def render(self, fmt: str) -> str:
        """The report in one of :data:`RENDERERS` (``terminal``, ``markdown``, ``csv``, ``json``, ``latex``)."""
        return render(self, fmt)

    def to_text(self) -> str:
        """The plain-text view (what ``print(report)`` shows): table, legend, provenance, cross-checks, gates."""
        return render_terminal(self)

    def to_markdown(self) -> str:
        """The full report in GitHub Markdown."""
        return render_markdown(self)

    def to_html(self) -> str:
        """The report as an HTML fragment (what Jupyter shows): table with significance markers, comparison,
        gates, cross-checks, and the provenance as a footnote."""
        return render_html(self)

    def __str__(self) -> str:
        return self.to_text()

    def __repr__(self) -> str:
        first = next(iter(self.results.values()))
        text = (f"Report({self.title!r}: {len(self.results)} system{'s' if len(self.results) != 1 else ''} x "
                f"{len(self.metrics)} metric{'s' if len(self.metrics) != 1 else ''}, "
                f"{first.provenance.queries_evaluated} queries")
        if self.comparison is not None:
            text += f", baseline {self.comparison.baseline!r}"
        if self.gates:
            text += f", gates {len(self.gates) - len(self.failed_gates)}/{len(self.gates)} passed"
        if self.crosscheck:
            text += f", cross-check {'ok' if self.crosscheck_ok else 'NOT ok'}"
        return text + ")"

    def _repr_html_(self) -> str:
        return self.to_html()


def means_frame(report: Report):  # noqa: ANN201 - pandas.DataFrame
    """Systems x metrics means as a DataFrame (index ``system``)."""
    import pandas as pd

    rows = {system: [res[m] for m in report.metrics] for system, res in report.results.items()}
    frame = pd.DataFrame.from_dict(rows, orient="index", columns=report.labels)
    frame.index.name = "system"
    return frame


def per_query_frame(results: Mapping[str, Any]):  # noqa: ANN201 - pandas.DataFrame
    """Per-query values of every system, tidy: columns ``system``, ``query_id``, then one per metric."""
    import pandas as pd

    frames = [res.per_query.reset_index().assign(system=system) for system, res in results.items()]
    frame = pd.concat(frames, ignore_index=True)
    return frame[["system", "query_id", *[c for c in frame.columns if c not in ("system", "query_id")]]]


def system_json(results: Any, provenance: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One system's means shaped like the LLM-judge guide's ``{"metrics": {...}}``, plus its provenance."""
    data: dict[str, Any] = {"metrics": results.means}
    if provenance is not None:
        data["provenance"] = dict(provenance)
    return data


def _number(value: float, digits: int) -> str:
    return "nan" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _p(value: float) -> str:
    if value is None or not math.isfinite(value):
        return "nan"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


def _means(report: Report) -> dict[str, list[float]]:
    """System -> its mean of each metric (in :attr:`Report.labels` order): what the text, Markdown and
    HTML tables show, without pandas (no DataFrame is needed to lay out a few numbers)."""
    return {system: [math.nan if res[m] is None else float(res[m]) for m in report.metrics]
            for system, res in report.results.items()}


def _cells(report: Report, *, up: str = UP, down: str = DOWN,
           best: Callable[[str], str] | None = None, fmt: str = "terminal") -> list[list[str]]:
    means = _means(report)
    letters = report.comparison.letters if report.comparison is not None and report.markers == "letters" else {}
    numbers = [[v for v in column if not math.isnan(v)] for column in zip(*means.values())]
    top = [max(column) if column else None for column in numbers]  # NaN skipped, as a column's max
    rows = []
    for system, values in means.items():
        row = [f"{system} ({letters[system]})" if system in letters else str(system)]
        for label, value, highest in zip(report.labels, values, top):
            text = _number(value, report.digits) + report.marker(system, label, up=up, down=down, fmt=fmt)
            if best is not None and len(means) > 1 and value == highest:
                text = best(text)
            row.append(text)
        rows.append(row)
    return rows


def _comparison_rows(report: Report) -> list[list[str]]:
    d = report.digits
    rows = []
    for r in report.comparison.rows:
        rows.append([r.metric, r.system, f"{r.delta:+.{d}f}", f"[{_number(r.ci_low, d)}, {_number(r.ci_high, d)}]",
                     _number(r.effect_size, 2), f"{r.wins}/{r.ties}/{r.losses}", _p(r.p_t),
                     _p(r.p_randomization), _p(r.p_adjusted), "yes" if r.significant else "no"])
    return rows


_COMPARISON_HEADERS = ("metric", "system", "Δ", "CI", "d_z", "W/T/L", "p (t)", "p (rand.)", "p adj.", "sig.")


def _band_rows(report: Report) -> list[list[str]]:
    labelled = [(i, m, label) for i, (m, label) in enumerate(zip(report.metrics, report.labels))
                if band_of(m, 0.0, report.bands or {}) is not None]
    if not labelled:
        return []
    return [["system", *[label for _, _, label in labelled]]] + [
        [str(system), *[band_of(m, values[i], report.bands) for i, m, _ in labelled]]
        for system, values in _means(report).items()]


def _legend(report: Report) -> str:
    if report.comparison is None:
        return ""
    return f"{MARKER_STYLES[report.markers].legend}: {report.comparison.describe()}"


def _queries_line(report: Report) -> list[str]:
    lines = []
    for system, res in report.results.items():
        p = res.provenance
        lines.append(f"{system}: {p.queries_evaluated} queries evaluated, {len(p.missing_from_run)} missing from "
                     f"the run, {len(p.ignored_run_only)} run-only ignored")
    return lines


def render_terminal(report: Report) -> str:
    """A short plain-text view: the table, the legend, cross-check and gate lines."""
    from tabulate import tabulate

    lines = [report.title, tabulate(_cells(report), headers=["system", *report.labels], tablefmt="simple",
                                     disable_numparse=True)]
    if report.comparison is not None:
        lines.append(_legend(report))
    bands = _band_rows(report) if report.bands else []
    if bands:
        lines += ["", "RAG quality bands (poor / fair / good / excellent; thresholds in docs/config.md):",
                  tabulate(bands[1:], headers=bands[0], tablefmt="simple")]
    first = next(iter(report.results.values())).provenance
    if len(report.results) == 1:
        lines += ["", first.summary()]
    else:
        lines += ["", f"backend {first.backend} {first.backend_version}; ties {first.conventions.ties}; "
                      f"relevance level {first.relevance_level:g}", *_queries_line(report)]
    for system, check in report.crosscheck.items():
        lines.append(f"cross-check {system}: {_crosscheck_line(check)}")
    failed = report.failed_gates
    lines += [gate.reason for gate in failed]
    if report.gates:
        baseline = report.comparison.baseline if report.comparison is not None else None
        exempt = baseline is not None and baseline not in {g.system for g in report.gates}
        lines.append(f"gates: {len(report.gates) - len(failed)}/{len(report.gates)} passed"
                     + ("" if failed else f" ({', '.join(sorted({str(g.gate.metric) for g in report.gates}))})")
                     + (f"; the baseline {baseline!r} is not gated (gates compare the other systems with it)"
                        if exempt else ""))
    return "\n".join(lines) + "\n"


def _crosscheck_line(check: Any) -> str:
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


def render_markdown(report: Report) -> str:
    """The full report in GitHub Markdown: table, comparison, bands, gates, cross-checks, provenance."""
    from tabulate import tabulate

    out = [f"# {report.title}", "", "## Systems x metrics", "",
           tabulate(_cells(report), headers=["system", *report.labels], tablefmt="github", disable_numparse=True)]
    if report.comparison is not None:
        out += ["", _legend(report), "", "## Comparison with the baseline", "",
                tabulate(_comparison_rows(report), headers=_COMPARISON_HEADERS, tablefmt="github",
                         disable_numparse=True),
                "", f"Δ = system - baseline; CI: {report.comparison.confidence:.0%} paired bootstrap (BCa); "
                    "d_z = mean(Δ) / sd(Δ); W/T/L = queries above / equal / below the baseline."]
    bands = _band_rows(report) if report.bands else []
    if bands:
        out += ["", "## Quality bands", "", tabulate(bands[1:], headers=bands[0], tablefmt="github"),
                "", "Bands: " + "; ".join(f"{k}: fair >= {b[0]:g}, good >= {b[1]:g}, excellent >= {b[2]:g}"
                                          for k, b in report.bands.items())]
    if report.gates:
        out += ["", "## Gates", "", tabulate([[g.system, str(g.gate.metric), g.gate.text, _number(g.value, 4),
                                               _number(g.threshold, 4), "pass" if g.passed else "**FAIL**"]
                                              for g in report.gates],
                                             headers=("system", "metric", "gate", "value", "threshold", "result"),
                                             tablefmt="github", disable_numparse=True)]
    for system, check in report.crosscheck.items():
        out += ["", f"## Cross-check: {system}", "", check.to_markdown().strip()]
    out += ["", "## Provenance", "", *[f"- {line}" for line in _queries_line(report)], "",
            "```json", json.dumps(jsonable(report.provenance), indent=2, sort_keys=False), "```"]
    return "\n".join(out) + "\n"


def _html_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """An HTML table; the cells are HTML already (callers escape what they did not write)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="evalbridge-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def render_html(report: Report) -> str:
    """An HTML fragment (Jupyter's view): the systems x metrics table with significance markers (best
    mean in bold), the comparison, gates and cross-checks, then the provenance as a footnote."""
    from html import escape

    up = f'<span title="significantly above the baseline" style="color: #1a7f37">{UP}</span>'
    down = f'<span title="significantly below the baseline" style="color: #cf222e">{DOWN}</span>'
    cells = _cells(report, up=up, down=down, best=lambda t: f"<strong>{t}</strong>")
    out = [f"<h4>{escape(report.title)}</h4>",
           _html_table(["system", *map(escape, report.labels)], [[escape(r[0]), *r[1:]] for r in cells])]
    if report.comparison is not None:
        out.append(f"<p>{up}/{down} {escape(_legend(report).split(' ', 1)[1])}</p>")
        out += ["<details><summary>comparison with the baseline</summary>",
                _html_table(list(map(escape, _COMPARISON_HEADERS)),
                            [list(map(escape, row)) for row in _comparison_rows(report)]), "</details>"]
    bands = _band_rows(report) if report.bands else []
    if bands:
        out.append(_html_table(list(map(escape, bands[0])), [[escape(str(c)) for c in row] for row in bands[1:]]))
    if report.gates:
        failed = report.failed_gates
        out.append(f"<p>gates: {len(report.gates) - len(failed)}/{len(report.gates)} passed</p>")
        out += [f"<p><strong>FAIL</strong> {escape(g.reason)}</p>" for g in failed]
    for system, check in report.crosscheck.items():
        out.append(f"<p>cross-check {escape(system)}: {escape(_crosscheck_line(check))}</p>")
    first = next(iter(report.results.values())).provenance
    notes = [first.summary()] if len(report.results) == 1 else [
        f"backend {first.backend} {first.backend_version}; ties {first.conventions.ties}; relevance level "
        f"{first.relevance_level:g}", *_queries_line(report)]
    footnote = "<br>".join(map(escape, notes))
    if report.provenance:
        footnote += ("<details><summary>provenance</summary><pre>"
                     + escape(json.dumps(jsonable(report.provenance), indent=2)) + "</pre></details>")
    out.append(f'<div class="evalbridge-provenance" style="font-size: smaller">{footnote}</div>')
    return '<div class="evalbridge-report">' + "".join(out) + "</div>"


def render_csv(report: Report) -> str:
    """Systems x metrics means as CSV (full precision), then each system's query counts: evaluated,
    missing from the run, run-only ignored (the rest of the provenance goes to ``provenance.json``)."""
    frame = means_frame(report)
    for column, field in (("queries_evaluated", "queries_evaluated"), ("missing_from_run", "missing_from_run"),
                          ("ignored_run_only", "ignored_run_only")):
        counts = {s: getattr(r.provenance, field) for s, r in report.results.items()}
        frame[column] = [c if isinstance(c, int) else len(c) for c in counts.values()]
    return frame.to_csv(lineterminator="\n")


def jsonable(value: Any) -> Any:
    """``value`` as strict JSON data: nan/inf -> None, numpy scalars -> numbers, paths -> str."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return jsonable(value.item())
    return value


def report_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict."""
    labels = report.labels
    data: dict[str, Any] = {
        "title": report.title,
        "metrics": labels,
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
                         "systems": {row[0]: dict(zip(_band_rows(report)[0][1:], row[1:]))
                                     for row in _band_rows(report)[1:]}}
    if report.gates:
        data["gates"] = [g.to_dict() for g in report.gates]
    if report.crosscheck:
        data["crosscheck"] = {s: c.to_dict() for s, c in report.crosscheck.items()}
    data["provenance"] = report.provenance
    return jsonable(data)


def render_json(report: Report) -> str:
    """The whole report as JSON (nan and inf as null)."""
    return json.dumps(report_dict(report), indent=2, allow_nan=False) + "\n"




def render_latex(report: Report) -> str:
    """A booktabs table (best value per metric in bold), provenance as ``%`` comments."""
    rows = _cells(report, up=r"$^{\uparrow}$", down=r"$^{\downarrow}$", best=lambda t: rf"\textbf{{{t}}}", fmt="latex")
    lines = [f"% {report.title}"]
    lines += [f"% {line}" for line in json.dumps(jsonable(report.provenance), sort_keys=False).splitlines()]
    lines += [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * len(report.labels) + "}",
              r"\toprule", " & ".join(["System", *map(_latex, report.labels)]) + r" \\", r"\midrule"]
    lines += [" & ".join([_latex(row[0]), *row[1:]]) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    caption = _latex(report.title)
    if report.comparison is not None:
        caption += f". {MARKER_STYLES[report.markers].latex_legend}: {_latex(report.comparison.describe())}"
    lines += [rf"\caption{{{caption}}}", r"\end{table}"]
    return "\n".join(lines) + "\n"


#: format name -> renderer(report) -> str
RENDERERS: Mapping[str, Callable[[Report], str]] = {
    "terminal": render_terminal,
    "markdown": render_markdown,
    "csv": render_csv,
    "json": render_json,
    "latex": render_latex,
}
#: format name -> file suffix
SUFFIXES: Mapping[str, str] = {"terminal": ".txt", "markdown": ".md", "csv": ".csv", "json": ".json", "latex": ".tex"}


def render(report: Report, fmt: str) -> str:
    """Render ``report`` in one of :data:`RENDERERS`."""
    try:
        renderer = RENDERERS[fmt]
    except KeyError:
        raise InputError(f"unknown report format {fmt!r}; choose one of {', '.join(RENDERERS)}.") from None
    return renderer(report)


def atomic_path(path: str | os.PathLike) -> contextlib.AbstractContextManager[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically.

    If the block raises, the temporary file is removed and ``path`` is left untouched. This is
    :func:`evalbridge.reports.writing.atomic_file` (fsync, umask permissions, the user's path in errors).
    """
    return atomic_file(path)


def write_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` atomically: :func:`evalbridge.reports.writing.write_file_atomic`."""
    return write_file_atomic(path, data)


def write_per_query(results: Mapping[str, Any], path: str | os.PathLike, *, fmt: str,
                    provenance: Mapping[str, Any] | None = None) -> Path:
    """Per-query values of every system as ``csv`` or ``parquet`` (provenance in the parquet metadata)."""
    frame = per_query_frame(results)
    if fmt == "csv":
        return write_atomic(path, frame.to_csv(index=False, lineterminator="\n"))
    if fmt == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(frame, preserve_index=False)
        meta = dict(table.schema.metadata or {})
        meta[b"evalbridge.provenance"] = json.dumps(jsonable(dict(provenance or {}))).encode()
        with atomic_path(path) as tmp:
            pq.write_table(table.replace_schema_metadata(meta), tmp)
        return Path(path)
    raise InputError(f"unknown per-query format {fmt!r}; choose 'csv' or 'parquet'.")


def make_provenance(results: Mapping[str, Any], *, inputs: Mapping[str, Any] | None = None,
                    backends: Sequence[str] = (), config: Mapping[str, Any] | None = None,
                    seed: int | None = None, metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """The provenance block of a report: versions, conventions, inputs, query counts.

    Args:
        results: system -> :class:`~evalbridge.results.Results` (conventions and counts are read from it).
        inputs: input name -> ``{"path", "format", "sha256"}``.
        backends: every backend involved (the evaluating one first); each one's version is recorded,
            ``unavailable`` when its library is not installed.
        config: the config's name, sha256 and settings, when there is one.
        seed: the seed of the random steps.
        metrics: the metric labels (default: the first system's evaluated metrics).
    """
    import platform

    import evalbridge

    from ..backends import get_backend

    first = next(iter(results.values())).provenance
    versions = {}
    for name in dict.fromkeys([first.backend, *backends]):
        try:
            versions[name] = get_backend(name).version()
        except (ImportError, EvalbridgeError):
            versions[name] = "unavailable"
    conventions = first.conventions
    data: dict[str, Any] = {
        "evalbridge_version": evalbridge.__version__,
        "python": platform.python_version(),
        "backend": first.backend,
        "backend_versions": versions,
        "conventions": {"ties": conventions.ties, "score_precision": conventions.score_precision,
                        "missing_queries": conventions.missing_queries},
        "relevance_level": first.relevance_level,
        "metrics": [str(m) for m in (metrics or next(iter(results.values())).metrics)],
        "config": dict(config) if config is not None else None,
        "inputs": dict(inputs or {}),
        "queries": {name: {"evaluated": r.provenance.queries_evaluated,
                           "missing_from_run": len(r.provenance.missing_from_run),
                           "ignored_run_only": len(r.provenance.ignored_run_only)} for name, r in results.items()},
        "bridges": {name: list(r.provenance.bridges) for name, r in results.items() if r.provenance.bridges},
        "seed": seed,
    }
    return data


#: Bytes of a file mapped and hashed at a time by :func:`file_sha256` (a multiple of ``mmap.ALLOCATIONGRANULARITY``).
_HASH_WINDOW = 1 << 24


def file_sha256(path: str | os.PathLike) -> str:
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
