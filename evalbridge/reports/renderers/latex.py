"""The ``latex`` report format: a booktabs table for a paper."""

from __future__ import annotations

import json

from ...views.formats import ReportFormat
from ...common.escaping import latex_escape as _latex
from ...common.names import one_line
from ...views.markers import MARKER_STYLES
from ...views.sections import AFTER_CROSSCHECK, section_tables
from ...common.json_data import json_value
from ..report import Report, cells
from ...views.table import Marks, Table

__all__ = ["FORMAT", "render_latex", "latex_table"]

#: how LaTeX writes ▲, ▼, superscript letters, and ▲/▼ in a legend
LATEX_MARKS = Marks(r"$^{\uparrow}$", r"$^{\downarrow}$", lambda s: f"$^{{{s}}}$" if s else "",
                    r"$\uparrow$/$\downarrow$")


def latex_table(table: Table) -> str:
    """One table as a booktabs ``table`` float: columns laid out by their alignment, the title and footnotes
    as its caption (sentences ended by a full stop). A table without columns is its caption's text alone."""
    caption = [line for line in (table.title, *table.footnotes) if line]
    if not table.headers:
        return f"{'. '.join(caption)}.\n" if caption else ""
    spec = "".join("r" if a == "right" else "l" for a in table.align) or "l" * len(table.headers)
    lines = [r"\begin{table}[t]", r"\centering", rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(table.headers) + r" \\", r"\midrule", *[" & ".join(row) + r" \\" for row in table.rows],
             r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{'. '.join(caption)}.}}")
    return "\n".join([*lines, r"\end{table}"]) + "\n"


def _heading(text: str) -> str:
    """A heading of evalbridge's own as a paper writes it: ``system`` -> ``System``."""
    return text[:1].upper() + text[1:]


def render_latex(report: Report) -> str:
    """A booktabs table (best value per metric in bold), provenance as ``%`` comments; then the report's sections
    (:mod:`evalbridge.views.sections`), each headed by a ``%`` comment: those placed after the cross-checks first
    (LaTeX shows no cross-check; JSON holds them there too), then the others."""
    lines = [f"% {one_line(report.title)}"]  # a line break in the title must not end the comment
    lines += [f"% {line}" for line in json.dumps(json_value(report.provenance), sort_keys=False).splitlines()]
    if report.results:
        lines += _results(report)
    lines += section_tables(report, "latex", _comment, place=AFTER_CROSSCHECK)
    lines += section_tables(report, "latex", _comment)
    return "\n".join(lines) + "\n"


def _comment(title: str) -> list[str]:
    """A section's heading: a ``%`` comment after a blank line."""
    return ["", f"% {one_line(title)}"]


def _results(report: Report) -> list[str]:
    rows = cells(report, up=LATEX_MARKS.up, down=LATEX_MARKS.down, best=lambda t: rf"\textbf{{{t}}}", fmt="latex")
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{l" + "r" * len(report.labels) + "}",
             r"\toprule", " & ".join(["System", *map(_latex, report.labels)]) + r" \\", r"\midrule"]
    lines += [" & ".join([_latex(row[0]), *row[1:]]) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    caption = _latex(report.title)
    if report.comparison is not None:
        caption += f". {MARKER_STYLES[report.markers].latex_legend}: {_latex(report.comparison.describe())}"
    return [*lines, rf"\caption{{{caption}}}", r"\end{table}"]


FORMAT = ReportFormat(
    name="latex",
    suffix=".tex",
    title="a LaTeX booktabs table (best mean in bold), the provenance as `%` comments",
    render=render_latex,
    order=50,
    table=latex_table,
    marks=LATEX_MARKS,
    escape=_latex,
    heading=_heading,
    typeset=True,
)
