"""The table of a collection design (:class:`~evalbridge.decisions.topic_set_size.TopicSetSize`), written by every output
format that writes tables (terminal, Markdown, LaTeX, HTML: :func:`evalbridge.views.formats.show`); JSON is its
``to_dict()``. Names (metrics) are escaped by the format."""

from __future__ import annotations

from typing import Any

from ..common.json_data import json_text
from .formats import ReportFormat, aligned, show, table_format
from .table import Table, number

__all__ = ["topic_set_tables", "render_topic_set_size"]

#: A TopicSetSize (read, never imported: this module is below the type it shows).
AnyDesign = Any


def _count(value: int | None) -> str:
    return "out of reach" if value is None else f"{value:,}"


def topic_set_tables(d: AnyDesign, fmt: ReportFormat) -> tuple[Table, ...]:
    """One table: each metric's variance estimate and the queries each requirement needs."""
    e = fmt.escape
    anova = f"{d.anova_systems} systems" if d.anova_systems is not None else "all systems"
    left_out = sum(d.unpaired)
    return (Table(
        headers=(fmt.heading("metric"), "systems", "queries", "V_E", "paired t-test", f"ANOVA ({anova})",
                 f"CI width <= {d.ci_width:g}"),
        rows=tuple((e(r.metric), str(r.systems), str(r.queries), number(r.variance, 6), _count(r.t_test),
                    _count(r.anova), _count(r.ci)) for r in d.rows),
        align=aligned(fmt, 1, 6),
        title=e(f"topic set size design: the queries needed to detect a difference of {d.min_difference:g} "
                f"(alpha {d.alpha:g}, power {1 - d.beta:g})"),
        footnotes=tuple(e(line) for line in (
            "V_E: the residual variance of the two-way ANOVA without replication (systems x queries) of the matrix "
            "given, Sakai's estimate of the within-system variance; paired t-test: two systems differing by the "
            "difference; ANOVA: the best and the worst of the systems that far apart; CI: the expected width of the "
            f"{1 - d.alpha:.0%} interval of a difference (Sakai, Information Retrieval Journal 2016; exact "
            "noncentral t and F).",
            *([f"{left_out} queries without a value for every system left out of the matrices."] if left_out else ()),
        ))),)


def render_topic_set_size(d: AnyDesign, fmt: str = "terminal") -> str:
    """``d`` as text: ``json``, or any format that writes tables."""
    if fmt == "json":
        return json_text(d.to_dict())
    return show(topic_set_tables(d, table_format(fmt)), fmt)
