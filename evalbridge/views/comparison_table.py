"""The table of a comparison, declared once: systems x metrics means with significance markers, and its footnote.

:class:`~evalbridge.decisions.comparison.Comparison` shows itself through :func:`comparison_table` in any output format
that writes tables (``print``, ``to_markdown``, ``to_latex``, ``to_html``, the notebook view).
"""

from __future__ import annotations

from typing import Any

from .formats import ReportFormat, aligned, show, table_format
from .markers import MARKER_STYLES, marker
from .table import Table, number, p_value

__all__ = ["comparison_table", "comparison_view", "differences_view"]

#: A :class:`~evalbridge.decisions.comparison.Comparison` (this module is below it: it reads, never imports, one).
AnyComparison = Any


def comparison_view(comparison: AnyComparison, fmt: ReportFormat, style: str, digits: int) -> Table:
    """The systems x metrics table of means (each with its marker in ``style``), as text of ``fmt``."""
    letters = comparison.letters
    rows = []
    for system in comparison.systems:
        row = [fmt.escape(letters[system]), fmt.escape(system)]
        for metric in comparison.metrics:
            summary = comparison.interval(system, metric)
            row.append(number(summary.mean if summary is not None else None, digits)
                       + marker(comparison, system, metric, style, fmt.marks))
        rows.append(tuple(row))
    legend = fmt.escape(MARKER_STYLES[style].legend).replace("▲/▼", fmt.marks.legend)
    return Table(headers=(fmt.escape(""), fmt.heading("system"), *map(fmt.escape, comparison.metrics)),
                 rows=tuple(rows),
                 align=aligned(fmt, 2, len(comparison.metrics)),
                 footnotes=(legend, *map(fmt.escape, [comparison.describe(), *comparison.provenance])))


def differences_view(comparison: AnyComparison, fmt: ReportFormat, digits: int) -> Table:
    """Every (system, baseline, metric) compared: Δ = system - baseline, its bootstrap interval (unadjusted: the
    corrected p-value beside it is over the whole family), the corrected p-value and the decision."""
    rows = tuple((fmt.escape(r.metric), fmt.escape(r.system), fmt.escape(r.baseline), f"{r.delta:+.{digits}f}",
                  f"[{number(r.ci_low, digits)}, {number(r.ci_high, digits)}]", p_value(r.p_adjusted),
                  "yes" if r.significant else "no") for r in comparison.rows)
    return Table(headers=(fmt.heading("metric"), fmt.heading("system"), fmt.heading("baseline"), "Δ",
                          fmt.escape(f"{comparison.confidence:.0%} CI (unadjusted)"), "p adj.", "sig."),
                 rows=rows, align=aligned(fmt, 3, 4),
                 title=fmt.escape("Δ = system - baseline; p adj. and sig. as the footnote above says"))


def comparison_table(comparison: AnyComparison, fmt: str, markers: str | None, digits: int) -> str:
    """``comparison``'s table in the output format called ``fmt`` (markers: a key of ``MARKER_STYLES``, default
    ``arrows`` with one baseline, else ``letters``); on a terminal the differences follow (:func:`differences_view`:
    the other formats of a report show them in their own section)."""
    written = table_format(fmt)
    means = comparison_view(comparison, written, comparison.marker_style(markers), digits)
    if fmt != "terminal":
        return show(means, fmt)
    return show([means, differences_view(comparison, written, digits)], fmt)
