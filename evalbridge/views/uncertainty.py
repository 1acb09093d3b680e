"""What an :class:`~evalbridge.uncertainty.Uncertainty` shows: the expected value, both intervals, and what the labels add."""

from __future__ import annotations

import math
from typing import Any

from ..names import one_line

__all__ = ["meaning", "render_text"]


def meaning(u: Any) -> str:
    """One sentence: how much the uncertainty of the labels adds to that of the queries, for a decision."""
    widening = u.widening
    labels = f"{len(u.labellings)} judges" if isinstance(u.labellings, tuple) else f"{u.labellings} labellings drawn"
    if not math.isfinite(widening):
        return (f"Only the labels vary ({labels}): the queries alone leave no doubt, so the interval is the "
                f"labels' doubt entire.")
    if widening >= 1.25:
        return (f"The labels ({labels}) widen the interval {widening:.2f} times beyond the queries' own: a "
                f"difference inside it may be the judges' disagreement, not the systems'; firm up the labels first.")
    return (f"The labels ({labels}) widen the interval only {widening:.2f} times: the queries, not the judges, "
            f"limit what this measurement can decide.")


def render_text(u: Any) -> str:
    """The measurement as plain text."""
    level = f"{100 * u.confidence:g}%"
    return "\n".join([
        f"{one_line(u.metric)} of {one_line(u.system)} over {u.queries} queries, labels from {u.source}:",
        f"  expected {u.expected:.4f}",
        f"  {level} interval, queries and labels: [{u.ci_low:.4f}, {u.ci_high:.4f}]",
        f"  {level} interval, queries alone:      [{u.query_ci_low:.4f}, {u.query_ci_high:.4f}]",
        f"- {meaning(u)}",
    ])
