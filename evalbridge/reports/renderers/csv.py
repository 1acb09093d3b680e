"""The ``csv`` report format: systems x metrics means at full precision (and one file per table of the rest)."""

from __future__ import annotations

from collections.abc import Mapping

from ...views.formats import ReportFormat
from ..per_query import csv_text
from ..report import Report, means_frame

__all__ = ["FORMAT", "render_csv"]


def render_csv(report: Report) -> str:
    """Systems x metrics means as CSV (full precision), then each system's query counts: evaluated,
    missing from the run, run-only ignored (the rest of the provenance goes to ``provenance.json``).
    A report without systems' results gives its first section's first file (an agreement alone: the judge
    agreement's measures, one row ``b vs a``)."""
    if not report.results:
        sections = _section_files(report)
        if sections:
            return next(iter(sections.values()))
    frame = means_frame(report)
    for column, field in (("queries_evaluated", "queries_evaluated"), ("missing_from_run", "missing_from_run"),
                          ("ignored_run_only", "ignored_run_only")):
        counts = {s: getattr(r.provenance, field) for s, r in report.results.items()}
        frame[column] = [c if isinstance(c, int) else len(c) for c in counts.values()]
    return csv_text(frame)


def extra_csv_files(report: Report) -> Mapping[str, str]:
    """In a report folder: ``comparison.csv`` with a comparison (one row per (metric, system) compared), and the
    data of each of the report's sections (:func:`evalbridge.views.sections.report_sections`) at full precision:
    ``agreement.csv`` (and ``agreement_ranking.csv`` with runs) with an agreement, ``standings_pairs.csv``,
    ``standings_hardest.csv``, ``standings_mean_ranks.csv``, ``standings_ranks.csv`` (every system's rank on every
    query), ``diff_means.csv``, ``diff_queries.csv``, ``diff_documents.csv`` (every run diff, each row saying whose),
    ``power.csv``, ``tiers_systems.csv``, ``tiers_pairs.csv``, ``topic_set_size.csv``, ``slices_means.csv``, ``slices_differences.csv``, ``logged.csv`` (each system's logged numbers),
    ``diagnosis_systems.csv``, ``diagnosis_swaps.csv``, ``diagnosis_findings.csv``, ``uncertainty.csv``."""
    files = {}
    if report.comparison is not None:
        files["comparison.csv"] = csv_text(report.comparison.to_frame(), index=False)
    return files | _section_files(report)


def _section_files(report: Report) -> dict[str, str]:
    """The data of the report's sections: file name -> its CSV (the frames of one stem one after the other)."""
    import pandas as pd

    from ...views.sections import section_files

    return {f"{stem}.csv": csv_text(pd.concat(frames, ignore_index=True), index=False)
            for stem, frames in section_files(report, FORMAT.name).items()}


FORMAT = ReportFormat(
    name="csv",
    suffix=".csv",
    title="CSV, one row per system (and `comparison.csv` with a comparison, `agreement.csv` with an agreement, a "
          "file per table of the standings, run diffs and power)",
    render=render_csv,
    order=30,
    extra_files=extra_csv_files,
)
