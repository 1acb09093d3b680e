"""The table of a power analysis (:class:`~evalbridge.decisions.power.PowerAnalysis`), written by every output format
that writes tables (terminal, Markdown, LaTeX, HTML: :func:`evalbridge.views.formats.show`); JSON is its
``to_dict()``. Names (systems, metrics) are escaped by the format."""

from __future__ import annotations

from typing import Any

from .formats import ReportFormat, aligned, show, table_format
from .table import Table, number

__all__ = ["power_tables", "render_power", "TEST_TITLES", "DECIDABLE"]

#: power test -> how the table names it
TEST_TITLES = {"t": "paired t-test", "randomization": "randomization test"}
#: the one name of power's minimum detectable effect, in power, the gates and the diagnosis alike
DECIDABLE = "the smallest difference this set can decide"


def _count(value: int | None) -> str:
    return "out of reach" if value is None else f"{value:,}"


def power_tables(analysis: Any, fmt: ReportFormat) -> tuple[Table, ...]:
    """One table: each pair and metric's queries, observed difference, spread, minimum detectable effect and the
    queries needed for the target effect."""
    e = fmt.escape
    target = "|Δ| observed" if analysis.effect is None else f"Δ = {analysis.effect:g}"
    return (Table(
        headers=(fmt.heading("metric"), fmt.heading("system"), fmt.heading("baseline"), "n", "Δ", "sd(Δ)",
                 "detectable", "power at target", "queries for target"),
        rows=tuple((e(r.metric), e(r.system), e(r.baseline), str(r.n), number(r.delta), number(r.sd), number(r.mde),
                    number(r.power_at_effect, 2), _count(r.queries_needed)) for r in analysis.rows),
        align=aligned(fmt, 3, 6),
        title=e(f"power: {DECIDABLE}, per pair ({TEST_TITLES[analysis.test]}, "
                f"{'two' if analysis.sides == 2 else 'one'}-sided alpha {analysis.alpha:g}, power {analysis.power:g}) "
                f"and the queries a target of {target} needs"),
        footnotes=(e(f"detectable: {DECIDABLE} (the minimum detectable effect with the queries at hand); sd(Δ): the "
                     "spread of the per-query differences the numbers come from."),)),)


def render_power(analysis: Any, fmt: str = "terminal") -> str:
    """``analysis`` as text: ``json``, or any format that writes tables."""
    if fmt == "json":
        from ..common.json_data import json_text

        return json_text(analysis.to_dict())
    return show(power_tables(analysis, table_format(fmt)), fmt)
