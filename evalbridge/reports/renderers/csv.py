"""The ``csv`` report format: systems x metrics means at full precision (and ``comparison.csv``)."""

from __future__ import annotations

from collections.abc import Mapping

from ..formats import ReportFormat
from ..report import Report, means_frame

__all__ = ["FORMAT", "render_csv"]


def render_csv(report: Report) -> str:
    """Systems x metrics means as CSV (full precision), then each system's query counts: evaluated,
    missing from the run, run-only ignored (the rest of the provenance goes to ``provenance.json``)."""
    frame = means_frame(report)
    for column, field in (("queries_evaluated", "queries_evaluated"), ("missing_from_run", "missing_from_run"),
                          ("ignored_run_only", "ignored_run_only")):
        counts = {s: getattr(r.provenance, field) for s, r in report.results.items()}
        frame[column] = [c if isinstance(c, int) else len(c) for c in counts.values()]
    return str(frame.to_csv(lineterminator="\n"))


def comparison_csv(report: Report) -> Mapping[str, str]:
    """In a report folder, with a comparison: ``comparison.csv``, one row per (metric, system) compared."""
    if report.comparison is None:
        return {}
    return {"comparison.csv": report.comparison.to_frame().to_csv(index=False, lineterminator="\n")}


FORMAT = ReportFormat(
    name="csv",
    suffix=".csv",
    title="CSV, one row per system (and `comparison.csv` when there is a comparison)",
    render=render_csv,
    order=30,
    extra_files=comparison_csv,
)
