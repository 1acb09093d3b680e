"""The ``latex`` report format: a booktabs table for a paper."""

from __future__ import annotations

import json
from typing import Any

from ...views.formats import ReportFormat
from ...common.escaping import latex_escape as _latex
from ...common.names import one_line
from ...views.markers import MARKER_STYLES
from ...views.sections import section_tables
from ...common.json_data import json_value
from ..report import Report, cells
from ...views.table import Marks, Table, number

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
    """A booktabs table (best value per metric in bold), provenance as ``%`` comments; with an agreement,
    a table of the judge agreement and one of the ranking agreement; then the report's sections
    (:mod:`evalbridge.views.sections`), each headed by a ``%`` comment."""
    lines = [f"% {one_line(report.title)}"]  # a line break in the title must not end the comment
    lines += [f"% {line}" for line in json.dumps(json_value(report.provenance), sort_keys=False).splitlines()]
    if report.results:
        lines += _results(report)
    if report.agreement is not None:
        lines += _agreement(report.agreement)
    lines += section_tables(report, "latex", lambda title: ["", f"% {one_line(title)}"])
    return "\n".join(lines) + "\n"


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


def _agreement(agreement: Any) -> list[str]:
    """The judge agreement (measure, value) and, with runs, one row per metric of the ranking agreement."""
    judges, ranking = agreement.judges, agreement.ranking
    a, b = (_latex(n) for n in judges.names)
    measures = [("pairs judged by both", str(judges.shared_pairs)),
                (f"pairs only in {a} / only in {b}", f"{judges.only_in_a} / {judges.only_in_b}"),
                ("exact agreement", number(judges.observed_agreement, 4)),
                ("Cohen's kappa", number(judges.cohen_kappa, 4)),
                ("quadratic-weighted kappa", number(judges.weighted_kappa, 4)),
                (f"Krippendorff's alpha ({judges.alpha_level})", number(judges.krippendorff_alpha, 4)),
                ("binary kappa at the relevance level", number(judges.binary_kappa, 4))]
    lines = [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{lr}", r"\toprule", r"Measure & Value \\",
             r"\midrule", *[rf"{name} & {value} \\" for name, value in measures], r"\bottomrule", r"\end{tabular}",
             rf"\caption{{Agreement of {b} with {a} over the (query, document) pairs both judged}}", r"\end{table}"]
    if ranking.rows:
        lines += [r"\begin{table}[t]", r"\centering", r"\begin{tabular}{lrrrr}", r"\toprule",
                  r"Metric & Kendall $\tau$ & $\tau_{AP}$ & significant " + f"{a} / {b}" + r" & flipped \\",
                  r"\midrule"]
        lines += [rf"{_latex(row.metric)} & {number(row.kendall_tau, 4)} & {number(row.tau_ap, 4)} & "
                  rf"{row.significant_a} / {row.significant_b} & {row.flipped} \\" for row in ranking.rows]
        lines += [r"\bottomrule", r"\end{tabular}",
                  rf"\caption{{Ranking of {len(ranking.rows[0].systems)} systems under {a} and under {b}; "
                  rf"{_latex(ranking.describe())}}}", r"\end{table}"]
    return lines


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
