"""The ``html`` format: a report as one self-contained page (styles, plots as inline SVG, a sorting script; no
network), and a result's tables as an HTML fragment (what a notebook shows: :func:`html_table`).

The page holds what the other formats hold, for a reader in a browser: the systems x metrics table with the
significance markers and each mean's confidence interval, the comparison with the baseline, the gates and their
outcome, the quality bands, per metric the distribution of the per-query values and the per-query differences
with the baseline (the plots of :mod:`evalbridge.reports.plots`, as inline SVG) with summary statistics and the
queries that moved most, the cross-check, the sections placed after it (the agreement of judges) and the
provenance. Every table sorts by a
click on its heading. Nothing grows with the number of queries but the plots' fixed number of marks and the
top-:data:`TOP` lists: a page of 100,000 queries is as long as one of 40.

Offline by construction: the page's Content-Security-Policy allows no source but itself (``default-src 'none'``),
its one script by its sha256, and images only as ``data:``; so a browser fetches nothing even if a name were
ever written unescaped. Every name (system, metric label, query id, title) is escaped with :func:`html.escape`.

The page's sections are :data:`SECTIONS`, in order: a new section (a run diff, slices) is one function
``(report) -> HTML`` and one entry there.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...common.json_data import json_value
from ...views.formats import ReportFormat, show
from ...views.sections import AFTER_CROSSCHECK, AMONG_SECTIONS, report_sections
from ..report import (COMPARISON_HEADERS, UP, DOWN, Report, band_rows, cells, comparison_rows, crosscheck_line,
                      legend, queries_lines)
from ...views.table import Marks, Table, number, p_value

__all__ = ["FORMAT", "render_page", "render_notebook", "html_table", "SECTIONS", "Section", "TOP"]

#: how HTML writes ▲, ▼ and superscript letters
HTML_MARKS = Marks("▲", "▼", lambda s: f"<sup>{s}</sup>" if s else "")

#: queries listed per (system, metric) in a top list: the largest gains and losses against the baseline
TOP = 10
#: rows of a cross-check's differences shown (the rest are in report.json)
DIFFERENCES_SHOWN = 50


def _e(text: object) -> str:
    """Any name or text as HTML text (quotes too: safe in an attribute)."""
    return html.escape(str(text), quote=True)


# ---------------------------------------------------------------- a result's table (the notebook view)

def html_table(table: Table) -> str:
    """One table as an HTML fragment: the title in bold, the table (a right-aligned column's cells styled so; none
    without columns), the footnotes in small print below it."""
    right = [a == "right" for a in table.align] or [False] * len(table.headers)
    head = "".join(f"<th>{h}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f'<td style="text-align: right">{cell}</td>' if r else f"<td>{cell}</td>"
                                    for cell, r in zip(row, right)) + "</tr>" for row in table.rows)
    title = f"<p><b>{table.title}</b></p>" if table.title else ""
    notes = f"<p><small>{'<br>'.join(table.footnotes)}</small></p>" if table.footnotes else ""
    grid = f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>" if table.headers else ""
    return f"{title}{grid}{notes}\n"


def render_notebook(report: Report) -> str:
    """A report's notebook view (Jupyter's ``_repr_html_``), an HTML fragment: the systems x metrics table with
    significance markers (best mean in bold), the comparison, gates and cross-checks, then the provenance as a
    footnote; the report's sections placed after the cross-checks (:data:`evalbridge.views.sections.PLACES`) under
    their headings before it. Its tables are :func:`html_table`'s, as every result's notebook view."""

    up = f'<span title="significantly above the baseline" style="color: #1a7f37">{UP}</span>'
    down = f'<span title="significantly below the baseline" style="color: #cf222e">{DOWN}</span>'
    left, right = ("left",), ("right",)
    out = [f"<h4>{_e(report.title)}</h4>"]
    if report.results:
        rows = cells(report, up=up, down=down, best=lambda t: f"<strong>{t}</strong>")
        out.append(html_table(Table(("system", *map(_e, report.labels)), tuple((_e(r[0]), *r[1:]) for r in rows),
                                    left + right * len(report.labels))))
    if report.comparison is not None:
        out.append(f"<p>{up}/{down} {_e(legend(report).split(' ', 1)[1])}</p>")
        out += ["<details><summary>comparison with the baseline</summary>",
                html_table(Table(tuple(map(_e, COMPARISON_HEADERS)),
                                 tuple(tuple(map(_e, row)) for row in comparison_rows(report)),
                                 left * 2 + right * (len(COMPARISON_HEADERS) - 2))), "</details>"]
    bands = band_rows(report) if report.bands else []
    if bands:
        out.append(html_table(Table(tuple(_e(c) for c in bands[0]), tuple(tuple(_e(c) for c in row)
                                                                       for row in bands[1:]))))
    if report.gates:
        from ...decisions.gates import gate_summary

        failed = report.failed_gates
        out.append(f"<p>gates: {_e(gate_summary(report.gates))}</p>")
        out += [f"<p><strong>FAIL</strong> {_e(g.reason)}</p>" for g in failed]
    for system, check in report.crosscheck.items():
        out.append(f"<p>cross-check {_e(system)}: {_e(crosscheck_line(check))}</p>")
    for section in report_sections(report, AFTER_CROSSCHECK):
        out += [f"<h4>{_e(section.title)}</h4>", show(section.tables(FORMAT), FORMAT.name)]
    first = next(iter(report.results.values())).provenance if report.results else None
    notes = [] if first is None else [first.summary()] if len(report.results) == 1 else [
        f"backend {first.backend} {first.backend_version}; ties {first.settings.ties}; relevance level "
        f"{first.relevance_level:g}", *queries_lines(report)]
    footnote = "<br>".join(map(_e, notes))
    if report.provenance:
        footnote += ("<details><summary>provenance</summary><pre>"
                     + _e(json.dumps(json_value(report.provenance), indent=2)) + "</pre></details>")
    out.append(f'<div class="evalbridge-provenance" style="font-size: smaller">{footnote}</div>')
    return '<div class="evalbridge-report">' + "".join(out) + "</div>"


# ---------------------------------------------------------------- the page's cells and tables

def _value(value: Any) -> str:
    """A number's sort key as an attribute: its shortest exact spelling; '' for nan / inf / None."""
    return repr(float(value)) if value is not None and math.isfinite(float(value)) else ""


def num(value: Any, text: str, *, extra: str = "", cls: str = "num") -> str:
    """A table cell holding a number: ``text`` shown, the exact value in ``data-value`` (what sorting reads)."""
    return f'<td class="{cls}" data-value="{_value(value)}">{text}{extra}</td>'


def cell(text: object) -> str:
    """A table cell holding text (escaped)."""
    return f"<td>{_e(text)}</td>"


def table(headers: Sequence[str], rows: Iterable[Iterable[str]], *, cls: str = "", caption: str = "") -> str:
    """A sortable table: ``headers`` are text (escaped here), ``rows`` are cells made by :func:`num` / :func:`cell`."""
    head = "".join(f'<th scope="col">{_e(h)}</th>' for h in headers)
    body = "".join(f"<tr>{''.join(row)}</tr>" for row in rows)
    caption = f"<caption>{caption}</caption>" if caption else ""
    return (f'<table class="sortable {cls}">{caption}<thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def _frame_table(frame: Any, *, limit: int | None = None, digits: int = 4) -> str:
    """A pandas DataFrame's first ``limit`` rows as a sortable table (numbers with their exact values)."""
    import numbers

    shown = frame if limit is None else frame.head(limit)
    rows = []
    for record in shown.itertuples(index=False):
        rows.append([num(v, number(float(v), digits) if isinstance(v, float) else _e(v))
                     if isinstance(v, numbers.Real) and not isinstance(v, bool) else cell("" if v is None else v)
                     for v in record])
    return table([str(c) for c in frame.columns], rows)


# ---------------------------------------------------------------- sections

@dataclass(frozen=True)
class Section:
    """One section of the page: its anchor, its heading, and its body (HTML; '' when the report has nothing
    for it, and the section is then left out). ``collapsed``: shown closed, its heading the summary of a
    ``<details>`` that opens it (long sections: run diffs, per-query tables); ``parts``: instead of one body, one
    section per part (anchor, title, body, collapsed), each with an entry in the navigation (the analyses' sections)."""

    anchor: str
    title: str
    body: Callable[[Report], str]
    collapsed: bool = False
    parts: Callable[[Report], list[tuple[str, str, str, bool]]] | None = None


def _decision(report: Report) -> str:
    """What the numbers decide (:mod:`evalbridge.views.decision`), a list of sentences: what is decided, then what it
    stands on (caveats, rule) in a ``<details>`` shown open, which the page's script folds on a narrow screen so that
    the verdicts fit its first screen."""
    from ...views.decision import decision_parts

    decided, grounds = decision_parts(report.decision, report.digits)
    if not (decided or grounds):
        return ""
    caveats = len(report.decision.caveats)
    said = f"{caveats} caveat{'s' if caveats != 1 else ''} and how it was decided" if caveats else "how it was decided"
    folded = (f'<details class="grounds" open><summary>{said}</summary><ul>{_items(grounds)}</ul></details>'
              if grounds else "")
    return f'<div class="decision"><ul>{_items(decided)}</ul>{folded}</div>'


def _hover(report: Report, query: str, delta: float) -> str:
    """What a plotted query says on hover: its id and Δ, and its text on the next line when the report has it."""
    text = report.topics.get(query)
    return f"{query}: Δ {delta:+.{report.digits}f}" + (f"\n{text}" if text else "")


def _items(lines: Iterable[str]) -> str:
    return "".join(f"<li>{_e(line)}</li>" for line in lines)


def _summary(report: Report) -> str:
    """Systems x metrics: each mean with its significance marker and, with a comparison, its interval (a page of a
    comparison alone: the comparison's means)."""
    comparison = report.comparison
    up = f'<span class="up" title="significantly above the baseline">{UP}</span>'
    down = f'<span class="down" title="significantly below the baseline">{DOWN}</span>'
    if report.results:
        labels = report.labels
        means = {s: [res[m] for m in report.metrics] for s, res in report.results.items()}
        counts = {s: res.provenance.queries_evaluated for s, res in report.results.items()}

        def marker(system: str, label: str) -> str:
            return report.marker(system, label, up=up, down=down, fmt="html")
    elif comparison is not None:
        labels = list(comparison.metrics)
        intervals = {(i.system, i.metric): i for i in comparison.intervals}
        means = {s: [intervals[s, m].mean if (s, m) in intervals else math.nan for m in labels]
                 for s in comparison.systems}
        counts = {s: max((i.n for i in comparison.intervals if i.system == s), default=0) for s in comparison.systems}

        def marker(system: str, label: str) -> str:
            text = comparison.marker(system, label, style=comparison.marker_style(report.markers), fmt="html")
            return text.replace(UP, up).replace(DOWN, down)
    else:
        return ""
    letters = comparison.letters if comparison is not None and report.markers == "letters" else {}
    finite = [[v for v in column if v is not None and math.isfinite(v)] for column in zip(*means.values())]
    best = [max(column) if column and len(means) > 1 else None for column in finite]
    rows = []
    for system, values in means.items():
        letter = f' <span class="letter">({_e(letters[system])})</span>' if system in letters else ""
        row = [f'<th scope="row"><span class="name">{_e(system)}</span>{letter}</th>']
        for label, value, top in zip(labels, values, best):
            interval = comparison.interval(system, label) if comparison is not None else None
            ci = (f' <span class="ci">[{number(interval.ci_low, report.digits)}, '
                  f'{number(interval.ci_high, report.digits)}]</span>') if interval is not None else ""
            row.append(num(value, f'<span class="mean">{number(value, report.digits)}</span>',
                           extra=marker(system, label) + ci,
                           cls="num best" if top is not None and value == top else "num"))
        row.append(num(counts[system], str(counts[system])))
        rows.append(row)
    notes = [_e(legend(report))] if comparison is not None else []
    if comparison is not None:
        notes.append(f"[low, high]: each mean's {comparison.confidence:.0%} {_e(comparison.ci_method)} bootstrap "
                     "confidence interval.")
    notes.append("The best mean of each metric is in bold. Click a heading to sort.")
    return (table(["system", *labels, "queries"], rows, cls="summary")
            + "".join(f'<p class="note">{n}</p>' for n in notes))


def _comparison(report: Report) -> str:
    """Each system against the baseline, per metric: Δ, its interval, effect size, W/T/L and the p-values."""
    comparison = report.comparison
    if comparison is None:
        return ""
    d = report.digits
    rows = [[cell(r.metric), cell(r.system), cell(r.baseline), num(r.delta, f"{r.delta:+.{d}f}"),
             f"<td>[{number(r.ci_low, d)}, {number(r.ci_high, d)}]</td>", num(r.effect_size, number(r.effect_size, 2)),
             cell(f"{r.wins}/{r.ties}/{r.losses}"), num(r.p_t, p_value(r.p_t)),
             num(r.p_randomization, p_value(r.p_randomization)), num(r.p_adjusted, p_value(r.p_adjusted)),
             f'<td class="{"sig" if r.significant else ""}">{"yes" if r.significant else "no"}</td>']
            for r in comparison.rows]
    return (table(["metric", "system", "baseline", "Δ", "CI of Δ", "d_z", "W/T/L", "p (t)", "p (rand.)", "p adj.",
                   "significant"], rows, cls="comparison")
            + f'<p class="note">{_e(comparison.describe())}. Δ = system - baseline; d_z = mean(Δ) / sd(Δ); '
              "W/T/L = queries above / equal to / below the baseline.</p>")


#: a gate's outcome and verdict -> (its cell's class, its text)
_OUTCOMES = {("passed", True): ("pass", "pass"), ("failed", False): ("fail", "FAIL"),
             ("inconclusive", False): ("fail", "INCONCLUSIVE (fails)"),
             ("inconclusive", True): ("inconclusive", "inconclusive (let pass)")}


def _gates(report: Report) -> str:
    """Every gate with its value, threshold and outcome (and, for a gate that knows about noise, what the noise
    says)."""
    if not report.gates:
        return ""
    from ...decisions.gates import gate_summary

    failed = len(report.failed_gates)
    noisy = any(g.noise for g in report.gates)
    rows = []
    for g in report.gates:
        kind, text = _OUTCOMES[g.outcome, g.passed]
        rows.append([cell(g.system), cell(g.metric), cell(g.gate.text), num(g.value, number(g.value, report.digits)),
                     num(g.threshold, number(g.threshold, 6)), f'<td class="{kind}">{text}</td>',
                     *([cell(g.noise)] if noisy else [])])
    verdict = f'<p class="verdict {"fail" if failed else "pass"}">gates: {_e(gate_summary(report.gates))}</p>'
    return verdict + table(["system", "metric", "gate", "value", "threshold", "outcome", *(["noise"] * noisy)], rows,
                           cls="gates")


def _tables(tables: Iterable[Table]) -> str:
    """Tables a result declares (:mod:`evalbridge.views.table`), written by :func:`html_table`, sortable, each
    title a heading."""
    from dataclasses import replace

    return "".join((f"<h3>{t.title}</h3>" if t.title else "")
                   + html_table(replace(t, title="")).replace("<table>", '<table class="sortable">', 1) for t in tables)


def _analyses(report: Report, place: str = AMONG_SECTIONS) -> list[tuple[str, str, str, bool]]:
    """Each section of the analyses at ``place`` (:func:`evalbridge.views.sections.report_sections`: standings, each
    run diff, power, diagnosis, ...; after the cross-checks, the agreement) as (anchor, title, body, collapsed), but
    those the page draws in a section of its own (:data:`SECTIONS`: the tiers with their plot, the slices)."""
    own = {page.anchor for page in SECTIONS}
    parts = []
    for i, section in enumerate(report_sections(report, place)):
        if section.key in own:
            continue
        parts.append((f"{section.key}-{i}", section.title, _tables(section.tables(FORMAT)), section.folded))
    return parts


def _tiers(report: Report) -> str:
    """The tiers no simultaneous test separates, each system's rank interval, and their plot."""
    found = report.analyses.get("tiers")
    if found is None:
        return ""
    from ...views.tiers import tiers_tables
    from ..plots import rank_intervals_figure

    return _svg(rank_intervals_figure(found)) + _tables(tiers_tables(found, FORMAT))


def _slices(report: Report) -> str:
    """The numbers the runs logged (latency, cost) and the per-slice means and differences."""
    from ...views.slices import report_tables

    return _tables(report_tables(report, FORMAT))


def _bands(report: Report) -> str:
    """The quality band of each mean (poor / fair / good / excellent)."""
    bands = band_rows(report) if report.bands else []
    if not bands:
        return ""
    rows = [[cell(row[0]), *[f'<td class="band-{_e(b)}">{_e(b)}</td>' for b in row[1:]]] for row in bands[1:]]
    thresholds = "; ".join(f"{k}: fair >= {b[0]:g}, good >= {b[1]:g}, excellent >= {b[2]:g}"
                           for k, b in (report.bands or {}).items())
    return table([str(h) for h in bands[0]], rows, cls="bands") + f'<p class="note">{_e(thresholds)}</p>'


def _svg(figure: Any) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (the same every time: fixed ids, no date)."""
    from matplotlib import rc_context

    buffer = io.StringIO()
    with rc_context({"svg.hashsalt": "evalbridge", "svg.fonttype": "path"}):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    start, end = text.index("<metadata>"), text.index("</metadata>") + len("</metadata>")
    return _named(text[text.index("<svg"):start] + text[end:])  # the metadata: matplotlib's name, address and RDF terms


def _named(svg: str) -> str:
    """Each bar named by its id (:data:`evalbridge.reports.plots.NAMED`) given its name as a hover title."""
    import re

    from ..plots import NAMED

    def title(found: re.Match[str]) -> str:
        return f'<g id="{found[1]}"><title>{_e(bytes.fromhex(found[2]).decode("utf-8"))}</title>'

    return re.sub(f'<g id="({NAMED}[0-9]+-[0-9]+)-([0-9a-f]*)">', title, svg)


def _quantiles(values: Any) -> list[float]:
    """mean, median, 10th and 90th percentile, min, max of a numpy array (nan when empty)."""
    import numpy as np

    if not len(values):
        return [math.nan] * 6
    p10, median, p90 = np.percentile(values, [10, 50, 90])
    return [math.fsum(values) / len(values), float(median), float(p10), float(p90), float(values.min()),
            float(values.max())]


def _per_metric(report: Report) -> str:
    """Per metric: statistics of each system's per-query values, their distribution, the per-query differences
    with the baseline, and the queries that moved most."""
    import numpy as np

    from ..plots import differences_figure, distribution_figure

    if not report.results:
        return ""
    baseline = report.comparison.baseline if report.comparison is not None else None
    if baseline not in report.results:
        baseline = None
    parts = []
    for request, label in zip(report.names, report.labels):
        values = {s: res.values[res.request(label).metric] for s, res in report.results.items()}
        arrays = {s: np.fromiter(v.values(), dtype=np.float64, count=len(v)) for s, v in values.items()}
        rows = [[f'<th scope="row">{_e(s)}</th>', num(len(a), str(len(a))),
                 *[num(q, number(q, report.digits)) for q in _quantiles(a)],
                 num(float((a == 0).mean()) if len(a) else math.nan,
                     f"{(a == 0).mean():.1%}" if len(a) else "nan")] for s, a in arrays.items()]
        evaluated = f'<p class="note">as evaluated: {_e(request.metric)}</p>' if str(request.metric) != label else ""
        parts.append(f'<details class="metric"><summary><h3>{_e(label)}</h3></summary>{evaluated}'
                     + table(["system", "queries", "mean", "median", "10th pct", "90th pct", "min", "max", "= 0"],
                             rows, cls="stats"))
        figures = [distribution_figure(values, label)]
        if baseline is not None and len(values) > 1:
            figures.append(differences_figure(values, baseline, label,
                                              named=lambda query, delta: _hover(report, query, delta)))
        parts.append('<div class="plots">' + "".join(f"<figure>{_svg(f)}</figure>" for f in figures) + "</div>")
        if baseline is not None:
            parts.append(_moved(values, baseline, label, report.digits))
        parts.append("</details>")
    return "".join(parts)


def _moved(values: Mapping[str, Mapping[str, float]], baseline: str, label: str, digits: int) -> str:
    """Per other system: the :data:`TOP` queries it gains most on against the baseline, and the :data:`TOP` it
    loses most on (equal differences in the order the queries were evaluated)."""
    import numpy as np

    from ..plots import differences

    base = values[baseline]
    blocks = []
    for system, own in values.items():
        if system == baseline:
            continue
        shared, deltas = differences(own, base)
        gains = [i for i in np.argsort(-deltas, kind="stable")[:TOP] if deltas[i] > 0]
        losses = [i for i in np.argsort(deltas, kind="stable")[:TOP] if deltas[i] < 0]
        for title, chosen in (("largest gains", gains), ("largest losses", losses)):
            rows = [[cell(shared[i]), num(base[shared[i]], number(base[shared[i]], digits)),
                     num(own[shared[i]], number(own[shared[i]], digits)),
                     num(float(deltas[i]), f"{deltas[i]:+.{digits}f}")] for i in chosen]
            caption = f"{_e(system)} vs {_e(baseline)}: {title} ({len(rows)} of {len(shared)} queries)"
            blocks.append(table(["query", baseline, system, "Δ"], rows, cls="moved", caption=caption))
    if not blocks:
        return ""
    return (f"<details><summary>queries that moved most on {_e(label)} (top {TOP} each way)</summary>"
            + "".join(blocks) + "</details>")


def _crosscheck(report: Report) -> str:
    """Per system: the verdict, the agreement per backend and metric, unsupported pairs, the first differences."""
    parts = []
    for system, check in report.crosscheck.items():
        parts.append(f'<h3>{_e(system)}</h3><p class="verdict {"pass" if check.ok else "fail"}">'
                     f"{_e(crosscheck_line(check))}</p>")
        if getattr(check, "agreement", None) is not None and not check.agreement.empty:
            parts.append(_frame_table(check.agreement, digits=report.digits))
        if check.unsupported:
            parts.append(table(["backend", "metric", "unsupported because"],
                               [[cell(b), cell(m), cell(r)] for (b, m), r in check.unsupported.items()]))
        if not check.differences.empty:
            more = len(check.differences) - DIFFERENCES_SHOWN
            parts.append(_frame_table(check.differences, limit=DIFFERENCES_SHOWN, digits=report.digits))
            if more > 0:
                parts.append(f'<p class="note">{more} more differences in report.json.</p>')
    return "".join(parts)


def _provenance(report: Report) -> str:
    """Query counts and warnings per system, then the whole provenance as JSON."""
    lines = "".join(f"<li>{_e(line)}</li>" for line in queries_lines(report))
    data = json.dumps(json_value(report.provenance), indent=2, sort_keys=False)
    return ((f"<ul>{lines}</ul>" if lines else "")
            + f"<details><summary>provenance (JSON)</summary><pre>{_e(data)}</pre></details>")


#: The page's sections, in order. A new one is a function (report) -> HTML ('' when the report has nothing for it)
#: and one entry here.
SECTIONS: tuple[Section, ...] = (
    Section("decision", "Decision", _decision),
    Section("summary", "Systems x metrics", _summary),
    Section("comparison", "Comparison with the baseline", _comparison),
    Section("gates", "Gates", _gates),
    Section("bands", "Quality bands", _bands),
    Section("metrics", "Per metric: distributions, differences, queries", _per_metric),
    Section("tiers", "Tiers and rank intervals", _tiers, collapsed=True),
    Section("analyses", "Across the systems, run diffs, power, diagnosis", str, parts=_analyses),
    Section("slices", "Slices and logged numbers", _slices, collapsed=True),
    Section("crosscheck", "Cross-check", _crosscheck, collapsed=True),
    Section("after_crosscheck", "The sections placed after the cross-check", str,
            parts=lambda report: _analyses(report, AFTER_CROSSCHECK)),
    Section("provenance", "Provenance", _provenance, collapsed=True),
)


# ---------------------------------------------------------------- the page

_STYLE = """
:root { color-scheme: light; --line: #d0d7de; --muted: #57606a; --up: #1a7f37; --down: #cf222e; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1f2328;
       margin: 0 auto; max-width: 1200px; padding: 0 24px 48px; background: #fff; }
header { border-bottom: 1px solid var(--line); margin-bottom: 8px; }
h1 { font-size: 24px; margin: 24px 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 19px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 16px; margin: 20px 0 6px; overflow-wrap: anywhere; }
nav { display: flex; flex-wrap: wrap; gap: 2px 14px; padding-bottom: 8px; }
nav a { color: #0969da; text-decoration: none; }
p, li, summary, caption { overflow-wrap: anywhere; }
.decision { background: #f6f8fa; border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; margin: 8px 0; }
.decision ul { margin: 0; padding-left: 16px; } .decision li { margin: 3px 0; }
.decision details { margin: 4px 0 0; } .decision summary { font-size: 13px; }
summary h2, summary h3 { display: inline; border: 0; }
.note, .meta { color: var(--muted); font-size: 13px; margin: 4px 0; }
table { border-collapse: collapse; margin: 8px 0 4px; font-variant-numeric: tabular-nums; }
main table { display: block; overflow-x: auto; max-width: 100%; }
caption { text-align: left; font-weight: 600; padding: 6px 0 4px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top;
         overflow-wrap: break-word; max-width: 28em; }
thead th { background: #f6f8fa; cursor: pointer; user-select: none; white-space: nowrap; }
thead th::after { content: " \\2195"; color: #8c959f; font-size: 11px; }
thead th[aria-sort="ascending"]::after { content: " \\25B2"; color: #1f2328; }
thead th[aria-sort="descending"]::after { content: " \\25BC"; color: #1f2328; }
td.num { text-align: right; white-space: nowrap; }
td.best .mean { font-weight: 700; }
.ci { color: var(--muted); font-size: 12px; }
.up { color: var(--up); } .down { color: var(--down); }
.pass { color: var(--up); font-weight: 600; } .fail { color: var(--down); font-weight: 700; }
.inconclusive { color: #9a6700; font-weight: 600; }
.sig { font-weight: 600; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; }
figure { margin: 8px 0; min-width: 0; max-width: 100%; }
figure svg { max-width: 100%; height: auto; }
details { margin: 8px 0; } summary { cursor: pointer; color: #0969da; }
pre { background: #f6f8fa; padding: 10px; overflow-x: auto; font-size: 12px; max-width: 100%; }
@media (max-width: 600px) {
  body { padding: 0 10px 32px; } h1 { font-size: 20px; margin-top: 12px; } h2 { margin-top: 20px; }
  nav { flex-wrap: nowrap; overflow-x: auto; white-space: nowrap; }
  .decision { font-size: 13px; line-height: 1.35; padding: 6px 8px; } .decision ul { padding-left: 14px; }
}
"""

#: sorts a table by the column whose heading is clicked (or Enter / Space on it): numbers by their data-value (or
#: their text, when a cell is a plain number), then text by its content; a second click reverses; empty values last.
#: A link to a section (the navigation's, or the page opened at #anchor) opens the collapsed sections holding it.
_SCRIPT = r"""
(function () {
  function reveal() {
    var target = location.hash ? document.getElementById(decodeURIComponent(location.hash.slice(1))) : null;
    if (!target) { return; }
    for (var node = target; node; node = node.parentElement) { if (node.tagName === "DETAILS") { node.open = true; } }
    var inner = target.querySelector(":scope > details");
    if (inner) { inner.open = true; }
    target.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  if (window.matchMedia("(max-width: 600px)").matches) {
    document.querySelectorAll("details.grounds").forEach(function (d) { d.open = false; });
  }
  reveal();
  function key(cell) {
    var value = cell.getAttribute("data-value");
    if (value !== null) { return value === "" ? null : parseFloat(value); }
    var text = cell.textContent.trim();
    return /^[-+]?(\d|\.\d)[\d.]*(e[-+]?\d+)?$/i.test(text) ? parseFloat(text) : text;
  }
  function compare(a, b) {
    if (a === null || b === null) { return a === b ? 0 : a === null ? 1 : -1; }
    if (typeof a !== typeof b) { return typeof a === "number" ? -1 : 1; }
    if (typeof a === "number") { return a - b; }
    return a.localeCompare(b);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var headings = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headings, function (heading, column) {
      heading.tabIndex = 0;
      function sort() {
        var ascending = heading.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headings, function (h) { h.removeAttribute("aria-sort"); });
        heading.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.map.call(body.rows, function (row, index) {
          return { row: row, key: key(row.cells[column]), index: index };
        });
        rows.sort(function (a, b) {
          var order = compare(a.key, b.key);
          if (a.key === null || b.key === null) { return order || a.index - b.index; }
          return (ascending ? order : -order) || a.index - b.index;
        });
        rows.forEach(function (r) { body.appendChild(r.row); });
      }
      heading.addEventListener("click", sort);
      heading.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
      });
    });
  });
})();
"""


def _policy() -> str:
    """The page's Content-Security-Policy: nothing from anywhere, its own styles, its one script by hash."""
    digest = base64.b64encode(hashlib.sha256(_SCRIPT.encode("utf-8")).digest()).decode("ascii")
    return (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{digest}'; "
            "base-uri 'none'; form-action 'none'")


def _shown(report: Report) -> Iterable[tuple[str, str, str, bool]]:
    """The page's sections that have a body: (anchor, title, body, collapsed), a section with parts one per part."""
    for section in SECTIONS:
        if section.parts is not None:
            yield from (part for part in section.parts(report) if part[2])
            continue
        body = section.body(report)
        if body:
            yield section.anchor, section.title, body, section.collapsed


def render_page(report: Report) -> str:
    """The whole report as one self-contained HTML page (see the module docstring)."""
    from ..._version import __version__

    shown = [*_shown(report)]
    nav = "".join(f'<a href="#{anchor}">{_e(title)}</a>' for anchor, title, _, _ in shown)
    first = next(iter(report.results.values()), None)
    what = (f"{len(report.results)} system{'s' if len(report.results) != 1 else ''} x {len(report.labels)} "
            f"metric{'s' if len(report.labels) != 1 else ''}, {first.provenance.queries_evaluated} queries evaluated"
            if first is not None else
            f"{len(report.comparison.systems)} systems x {len(report.comparison.metrics)} metrics compared"
            if report.comparison is not None else
            "; ".join(s.title for s in report_sections(report, AFTER_CROSSCHECK) + report_sections(report)))
    sections = "".join(f'<section id="{anchor}"><details><summary><h2>{_e(title)}</h2></summary>{body}</details>'
                       f"</section>" if collapsed else f'<section id="{anchor}"><h2>{_e(title)}</h2>{body}</section>'
                       for anchor, title, body, collapsed in shown)
    return ("<!DOCTYPE html>\n"
            f'<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{_policy()}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="evalbridge {_e(__version__)}">'
            f"<title>{_e(report.title)}</title><style>{_STYLE}</style></head>\n"
            f'<body><header><h1>{_e(report.title)}</h1><p class="meta">{_e(what)}; evalbridge {_e(__version__)}</p>'
            f"<nav>{nav}</nav></header>\n<main>{sections}</main>\n<script>{_SCRIPT}</script></body></html>\n")


FORMAT = ReportFormat(
    name="html",
    suffix=".html",
    title="one self-contained HTML page (works offline): sortable tables, plots as inline SVG, gates, cross-check, "
          "provenance",
    render=render_page,
    order=60,
    table=html_table,
    marks=HTML_MARKS,
    escape=html.escape,
    typeset=True,
    notebook=render_notebook,
)
