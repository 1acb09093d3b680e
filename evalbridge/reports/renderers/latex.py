"""The ``latex`` report format: a booktabs table for a paper."""

from __future__ import annotations

import json

from ...stats.compare import MARKER_STYLES
from ..formats import ReportFormat
from ...latex import latex_escape as _latex
from ..report import Report, cells, jsonable

__all__ = ["FORMAT", "render_latex"]


def render_latex(report: Report) -> str:
    """A booktabs table (best value per metric in bold), provenance as ``%`` comments."""
    rows = cells(report, up=r"$^{\uparrow}$", down=r"$^{\downarrow}$", best=lambda t: rf"\textbf{{{t}}}", fmt="latex")
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


FORMAT = ReportFormat(
    name="latex",
    suffix=".tex",
    title="a LaTeX booktabs table (best mean in bold), the provenance as `%` comments",
    render=render_latex,
    order=50,
)
