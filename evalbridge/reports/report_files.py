"""What a config run's report folder holds: the report in each format, provenance, per-query files, plots.

:func:`write_report_folder` writes them as one transaction (:class:`~evalbridge.reports.report_folder.ReportFolder`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..common.json_data import json_text
from ..views.formats import report_format
from ..views.sections import AFTER_CROSSCHECK, report_sections
from .per_query import PER_QUERY_FORMATS, write_frame, write_per_query
from .report import report_dict, system_json
from .report_folder import ReportFolder
from .writing import unique_file_names

if TYPE_CHECKING:
    from .report import Report

#: a config's ``output:`` (:class:`evalbridge.config.layout.OutputSettings`: read, never imported, the config being
#: above the reports)
AnyOutput = Any

__all__ = ["write_report_folder"]


def write_report_folder(report: Report, output: AnyOutput, folder: Path,
                        curves: Mapping[str, Any]) -> list[Path]:
    """Write the report folder whole: into a hidden sibling first, swapped in when complete, under a lock
    (:class:`~evalbridge.reports.report_folder.ReportFolder`); system and metric file names checked unique first."""
    from .plots import plot_cutoff_curves, plot_differences, plot_distribution

    systems = unique_file_names(report.results, suffix=".json")
    stems = unique_file_names(dict.fromkeys([*report.labels, *curves]), what="metric label")
    with ReportFolder(folder) as out:
        formats = [report_format(name) for name in output.formats]
        for shown in formats:
            out.write_text(f"report{shown.suffix}", shown.render(report))
        for shown in formats:  # after every report file, as before: comparison.csv (csv with a comparison)
            for file, text in shown.extra_files(report).items():
                out.write_text(file, text)
        out.write_text("provenance.json", json_text(report_dict(report)["provenance"]))
        for section in report_sections(report, AFTER_CROSSCHECK) + report_sections(report):  # a section's per query
            if section.per_query is None:
                continue
            for fmt in output.per_query:
                name = f"{section.key}_per_query{PER_QUERY_FORMATS[fmt].suffix}"
                write_frame(section.per_query(), out.path_for(name), fmt=fmt, provenance=report.provenance)
        for fmt in output.per_query if report.results else ():
            write_per_query(report.results, out.path_for(f"per_query{PER_QUERY_FORMATS[fmt].suffix}"), fmt=fmt,
                            provenance=report.provenance)
        if output.system_json:
            for name, res in report.results.items():
                data = system_json(res, {**report.provenance, "system": name})
                out.write_text(f"systems/{systems[name]}", json_text(data))
        plots = output.plots
        if plots is not None:
            plots_dir = out.dir_for("plots")
            baseline = report.comparison.baseline if report.comparison is not None else None
            for metric, label in zip(report.metrics, report.labels):
                values = {name: res.query(metric) for name, res in report.results.items()}
                if plots.distribution:
                    plot_distribution(values, label, plots_dir / f"distribution_{stems[label]}", formats=plots.formats)
                if plots.differences and baseline is not None:   # a config's comparison always has one
                    plot_differences(values, baseline, label,
                                     plots_dir / f"difference_{stems[label]}", formats=plots.formats)
            for label, (variant, by_system) in curves.items():
                plot_cutoff_curves(by_system, variant, plots_dir / f"curve_{stems[label]}", formats=plots.formats)
    return list(out.files)
