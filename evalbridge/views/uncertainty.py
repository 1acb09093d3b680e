"""What an :class:`~evalbridge.evalsets.uncertainty.Uncertainty` shows: the expected value, both intervals, what the labels add.

:func:`uncertainty_tables` declares one table of one or several measurements (a row each), written by every output
format that writes tables (:func:`evalbridge.views.formats.show`), with one sentence per row of what the labels'
uncertainty means for a decision (:func:`meaning`); JSON is ``to_dict()`` with that sentence. Names (system,
metric, judges) are escaped by the format.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .formats import show, table_format
from .table import Table, number
from ..common.json_data import json_text

__all__ = ["meaning", "uncertainty_tables", "render_uncertainty"]

#: An Uncertainty (read, never imported: this module is below the type it shows).
AnyUncertainty = Any


def _labels(u: AnyUncertainty) -> str:
    return f"{len(u.labellings)} judges" if isinstance(u.labellings, tuple) else f"{u.labellings} labellings drawn"


def meaning(u: AnyUncertainty) -> str:
    """One sentence: how much the uncertainty of the labels adds to that of the queries, for a decision."""
    widening = u.widening
    labels = _labels(u)
    if not math.isfinite(widening):
        return (f"Only the labels vary ({labels}): the queries alone leave no doubt, so the interval is the "
                f"labels' doubt entire.")
    if widening >= 1.25:
        return (f"The labels ({labels}) widen the interval {widening:.2f} times beyond the queries' own: a "
                f"difference inside it may be the judges' disagreement, not the systems'; firm up the labels first.")
    return (f"The labels ({labels}) widen the interval only {widening:.2f} times: the queries, not the judges, "
            f"limit what this measurement can decide.")


def uncertainty_tables(measured: Sequence[AnyUncertainty], fmt: Any, digits: int = 4) -> tuple[Table, ...]:
    """One table of ``measured`` (a row per measurement), as text of ``fmt``; each row's meaning a footnote."""
    if not measured:
        return ()
    e = fmt.escape
    levels = sorted({f"{100 * u.confidence:g}%" for u in measured})
    rows = tuple((e(u.system), e(u.metric), str(u.queries), e(f"{u.source}: {_labels(u)}"), number(u.expected, digits),
                  f"[{number(u.ci_low, digits)}, {number(u.ci_high, digits)}]",
                  f"[{number(u.query_ci_low, digits)}, {number(u.query_ci_high, digits)}]",
                  number(u.widening, 2) if math.isfinite(u.widening) else "labels only")
                 for u in measured)
    return (Table(
        headers=(fmt.heading("system"), fmt.heading("metric"), "queries", fmt.heading("labels"), "expected",
                 "interval, queries and labels", "interval, queries alone", "widening"),
        rows=rows, align=("left",) * 2 + ("right",) + ("left",) + ("right",) * 4 if fmt.typeset else (),
        title=e(f"The metric with the uncertainty of its labels ({' / '.join(levels)} bootstrap intervals)"),
        footnotes=tuple(e(f"{u.system}: {meaning(u)}") for u in measured)),)


def render_uncertainty(u: AnyUncertainty, fmt: str = "terminal") -> str:
    """``u`` (one measurement, or several metrics' with a metric column) as text: ``json`` (every number, each
    query's expected value and the meaning), or any format that writes tables."""
    return json_text(uncertainty_data(u)) if fmt == "json" else \
        show(uncertainty_tables(u.measured, table_format(fmt)), fmt)


def uncertainty_data(u: AnyUncertainty) -> Any:
    """The JSON of a measurement with its meaning (several metrics: ``metrics`` and one such object per metric in
    ``measured``)."""
    if len(u.measured) == 1:
        return {**u.to_dict(), "meaning": meaning(u)}
    return {"metrics": [one.metric for one in u.measured],
            "measured": [{**one.to_dict(), "meaning": meaning(one)} for one in u.measured]}
