"""The ``terminal`` report format: a short plain-text view (what ``print(report)`` shows)."""

from __future__ import annotations

from ...common.names import one_line
from ...views.comparison_table import differences_view
from ...views.decision import TITLE, decision_lines
from ...views.formats import ReportFormat, show, table_format
from ..report import Report, band_rows, cells, crosscheck_line, legend, queries_lines
from ...views.sections import AFTER_CROSSCHECK, section_tables
from ...views.table import Table

__all__ = ["FORMAT", "render_terminal", "text_table"]


def text_table(table: Table, tablefmt: str = "simple") -> str:
    """One table as plain text (tabulate's ``tablefmt``): its title, the table, a blank line, the footnotes (a
    table without columns: its title and footnotes)."""
    from tabulate import tabulate

    lines = [table.title] if table.title else []
    if table.headers:
        lines.append(tabulate(table.rows, headers=table.headers, tablefmt=tablefmt, disable_numparse=True,
                              colalign=table.align or None))
    return "\n".join([*lines, *(["", *table.footnotes] if table.footnotes else [])]) + "\n"


def render_terminal(report: Report) -> str:
    """A short plain-text view: the decision (with the gates that failed), the table, the legend, cross-check and
    gate lines, then the sections placed after the cross-checks."""
    lines = [one_line(report.title)]
    decided = decision_lines(report.decision, report.digits)
    if decided:
        lines += ["", f"{TITLE}:", *(f"- {one_line(line)}" for line in decided), ""]
    if report.results:
        lines += _results(report)
    lines += section_tables(report, "terminal", lambda title: ["", title])
    for system, check in report.crosscheck.items():
        lines.append(f"cross-check {system}: {crosscheck_line(check)}")
    lines += [gate.reason for gate in report.failed_gates] if not decided else []  # else said in the decision
    lines += [f"{gate.reason} (let pass: on_inconclusive is pass)" for gate in report.gates
              if gate.passed and gate.inconclusive]
    if report.gates:
        from ...decisions.gates import gate_summary

        baseline = report.comparison.baseline if report.comparison is not None else None
        exempt = baseline is not None and baseline not in {g.system for g in report.gates}
        lines.append(f"gates ({', '.join(sorted({g.metric for g in report.gates}))}): {gate_summary(report.gates)}"
                     + (f"; the baseline {baseline!r} is not gated (gates compare the other systems with it)"
                        if exempt else ""))
    lines += section_tables(report, "terminal", lambda title: ["", title], place=AFTER_CROSSCHECK)
    return "\n".join(lines) + "\n"


def _results(report: Report) -> list[str]:
    """The systems x metrics table, legend, bands and query counts."""
    from tabulate import tabulate

    lines = [tabulate([[one_line(c) for c in row] for row in cells(report)],  # a name never breaks the table
                      headers=["system", *map(one_line, report.labels)], tablefmt="simple", disable_numparse=True)]
    if report.comparison is not None:
        lines += [legend(report), "",
                  show(differences_view(report.comparison, table_format("terminal"), report.digits), "terminal")]
    bands = band_rows(report) if report.bands else []
    if bands:
        lines += ["", "RAG quality bands (poor / fair / good / excellent; thresholds in docs/config.md):",
                  tabulate(bands[1:], headers=[str(h) for h in bands[0]], tablefmt="simple")]
    first = next(iter(report.results.values())).provenance
    if len(report.results) == 1:
        return [*lines, "", first.summary()]
    return [*lines, "", f"backend {first.backend} {first.backend_version}; ties {first.settings.ties}; "
                        f"relevance level {first.relevance_level:g}", *map(one_line, queries_lines(report))]


def check_terminal(report: Report) -> str:
    """``evalbridge check``'s view: the cross-check's own text (its per-backend table and differences)."""
    check = next(iter(report.crosscheck.values()))
    return str(check).rstrip("\n") + "\n"


FORMAT = ReportFormat(
    name="terminal",
    suffix=".txt",
    title="plain text, what a terminal shows (the table, legend, provenance summary, gates)",
    render=render_terminal,
    order=10,
    check=check_terminal,
    table=text_table,
    escape=one_line,
)
