"""The ``markdown`` report format: the full report in GitHub Markdown."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ...common.escaping import markdown_text
from ...common.json_data import json_value
from ...views.decision import TITLE, decision_lines
from ...views.formats import ReportFormat
from ..report import COMPARISON_HEADERS, Report, band_rows, cells, comparison_rows, legend, \
    queries_lines
from ...views.sections import AFTER_CROSSCHECK, section_tables
from ...views.table import Table, number
from .terminal import text_table

__all__ = ["FORMAT", "render_markdown", "markdown_text", "markdown_table"]


#: a gate's outcome and verdict -> its cell in the Gates table
_OUTCOMES = {("passed", True): "pass", ("failed", False): "**FAIL**", ("inconclusive", False): "**INCONCLUSIVE** (fails)",
             ("inconclusive", True): "inconclusive (let pass)"}


def _outcome(gate: Any) -> str:
    return _OUTCOMES[gate.outcome, gate.passed]


def render_markdown(report: Report) -> str:
    """The full report in GitHub Markdown: the decision, table, comparison, bands, gates, sections, cross-checks, the
    sections placed after them, provenance."""
    from tabulate import tabulate

    md = markdown_text
    out = [f"# {md(report.title)}"]
    decided = decision_lines(report.decision, report.digits)
    if decided:
        out += ["", f"## {TITLE}", "", *(f"- {md(line)}" for line in decided)]
    if report.results:
        out += ["", "## Systems x metrics", "",
                tabulate([[md(c) for c in row] for row in cells(report)], headers=["system", *map(md, report.labels)],
                         tablefmt="github", disable_numparse=True)]
    if report.comparison is not None:
        out += ["", md(legend(report)), "", "## Comparison with the baseline", "",
                tabulate([[md(c) for c in row] for row in comparison_rows(report)], headers=COMPARISON_HEADERS,
                         tablefmt="github",
                         disable_numparse=True),
                "", f"Δ = system - baseline; CI: {report.comparison.confidence:.0%} paired bootstrap (BCa); "
                    "d_z = mean(Δ) / sd(Δ); W/T/L = queries above / equal / below the baseline."]
    bands = band_rows(report) if report.bands else []
    if bands:
        out += ["", "## Quality bands", "", tabulate([[md(c) for c in row] for row in bands[1:]],
                                                     headers=[md(h) for h in bands[0]], tablefmt="github",
                                                     disable_numparse=True),
                "", "Bands: " + "; ".join(f"{k}: fair >= {b[0]:g}, good >= {b[1]:g}, excellent >= {b[2]:g}"
                                          for k, b in (report.bands or {}).items())]
    if report.gates:
        out += ["", "## Gates", "", tabulate([[md(g.system), md(g.metric), md(g.gate.text), number(g.value, 4),
                                               number(g.threshold, 4), _outcome(g)]
                                              for g in report.gates],
                                             headers=("system", "metric", "gate", "value", "threshold", "result"),
                                             tablefmt="github", disable_numparse=True)]
        out += [""] * any(g.noise for g in report.gates) + [f"- {md(g.system)} {md(g.metric)}: {md(g.noise)}"
                                                           for g in report.gates if g.noise]
    out += section_tables(report, "markdown", _heading)
    for system, check in report.crosscheck.items():
        out += ["", f"## Cross-check: {md(system)}", "", check.to_markdown().strip()]
    out += section_tables(report, "markdown", _heading, place=AFTER_CROSSCHECK)
    queries = [f"- {md(line)}" for line in queries_lines(report)]
    out += ["", "## Provenance", "", *(queries + [""] if queries else []),
            "```json", json.dumps(json_value(report.provenance), indent=2, sort_keys=False), "```"]
    return "\n".join(out) + "\n"


def _heading(title: str) -> list[str]:
    """A section's heading, a blank line either side."""
    return ["", f"## {title}", ""]


def markdown_table(table: Table) -> str:
    """One table in GitHub Markdown: its title, a blank line (a title line would otherwise be read as the table's
    first row), the table, a blank line, the footnotes."""
    return text_table(replace(table, title=f"{table.title}\n") if table.title and table.headers else table, "github")


def check_markdown(report: Report) -> str:
    """``evalbridge check --format markdown``: the cross-check in GitHub Markdown."""
    return str(next(iter(report.crosscheck.values())).to_markdown())


FORMAT = ReportFormat(
    name="markdown",
    suffix=".md",
    title="GitHub Markdown, the whole report (comparison, bands, gates, cross-checks, provenance)",
    render=render_markdown,
    order=20,
    check=check_markdown,
    table=markdown_table,
    escape=markdown_text,
)
