"""The ``html`` format: a result's tables as an HTML fragment (what a notebook shows)."""

from __future__ import annotations

import html

from ..formats import ReportFormat, tables_only
from ..views import Marks, Table

__all__ = ["FORMAT", "html_table"]

#: how HTML writes ▲, ▼ and superscript letters
HTML_MARKS = Marks("▲", "▼", lambda s: f"<sup>{s}</sup>" if s else "")


def html_table(table: Table) -> str:
    """One table as an HTML fragment: the title in bold, the table (a right-aligned column's cells styled so),
    the footnotes in small print below it."""
    right = [a == "right" for a in table.align] or [False] * len(table.headers)
    head = "".join(f"<th>{h}</th>" for h in table.headers)
    body = "".join("<tr>" + "".join(f'<td style="text-align: right">{cell}</td>' if r else f"<td>{cell}</td>"
                                    for cell, r in zip(row, right)) + "</tr>" for row in table.rows)
    title = f"<p><b>{table.title}</b></p>" if table.title else ""
    notes = f"<p><small>{'<br>'.join(table.footnotes)}</small></p>" if table.footnotes else ""
    return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}\n"


FORMAT = ReportFormat(
    name="html",
    suffix=".html",
    title="HTML",
    render=tables_only,
    order=60,
    table=html_table,
    marks=HTML_MARKS,
    escape=html.escape,
    typeset=True,
)
