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
    A report of an agreement alone gives the judge agreement's measures (one row, ``b vs a``)."""
    if not report.results and report.agreement is not None:
        return csv_text(report.agreement.judges.to_frame())
    frame = means_frame(report)
    for column, field in (("queries_evaluated", "queries_evaluated"), ("missing_from_run", "missing_from_run"),
                          ("ignored_run_only", "ignored_run_only")):
        counts = {s: getattr(r.provenance, field) for s, r in report.results.items()}
        frame[column] = [c if isinstance(c, int) else len(c) for c in counts.values()]
    return csv_text(frame)


def extra_csv_files(report: Report) -> Mapping[str, str]:
    """In a report folder: ``comparison.csv`` with a comparison (one row per (metric, system) compared);
    ``agreement.csv`` (and ``agreement_ranking.csv`` with runs) with an agreement; and the data of each of the
    report's sections (:func:`evalbridge.views.sections.report_sections`) at full precision: ``standings_pairs.csv``,
    ``standings_hardest.csv``, ``standings_mean_ranks.csv``, ``standings_ranks.csv`` (every system's rank on every
    query), ``diff_means.csv``, ``diff_queries.csv``, ``diff_documents.csv`` (every run diff, each row saying whose),
    ``power.csv``, ``tiers_systems.csv``, ``tiers_pairs.csv``, ``topic_set_size.csv``, ``slices_means.csv``, ``slices_differences.csv``, ``logged.csv`` (each system's logged numbers),
    ``diagnosis_systems.csv``, ``diagnosis_swaps.csv``, ``diagnosis_findings.csv``, ``uncertainty.csv``."""
    import pandas as pd

    from ...views.sections import section_files

    files = {}
    if report.comparison is not None:
        files["comparison.csv"] = csv_text(report.comparison.to_frame(), index=False)
    if report.agreement is not None:
        files["agreement.csv"] = csv_text(report.agreement.judges.to_frame())
        if report.agreement.ranking.rows:
            files["agreement_ranking.csv"] = csv_text(report.agreement.ranking.to_frame())
    for stem, frames in section_files(report, FORMAT.name).items():
        files[f"{stem}.csv"] = csv_text(pd.concat(frames, ignore_index=True), index=False)
    return files


FORMAT = ReportFormat(
    name="csv",
    suffix=".csv",
    title="CSV, one row per system (and `comparison.csv` with a comparison, `agreement.csv` with an agreement, a "
          "file per table of the standings, run diffs and power)",
    render=render_csv,
    order=30,
    extra_files=extra_csv_files,
)
