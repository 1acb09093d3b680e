"""The ``json`` report format: the whole report as strict JSON."""

from __future__ import annotations


from ...views.formats import ReportFormat
from ..report import Report, report_dict
from ...common.json_data import json_text

__all__ = ["FORMAT", "render_json"]


def render_json(report: Report) -> str:
    """The whole report as JSON (nan and inf as null)."""
    return json_text(report_dict(report))


FORMAT = ReportFormat(
    name="json",
    suffix=".json",
    title="JSON, the whole report (nan and inf as null)",
    render=render_json,
    order=40,
    check=render_json,
)
