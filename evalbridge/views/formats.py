"""The output formats, one registry: name -> how a report and a result's tables are written; a format is one file.

Every module of :mod:`evalbridge.reports.renderers` declares one :class:`ReportFormat` as its ``FORMAT``;
:func:`output_formats` collects them (on first use, in their declared ``order``). A format writes a whole
report (``render``), one table of a result (``table``: what ``print(comparison)``, ``to_markdown()``,
``to_latex()`` and the notebook view show), or both. The report formats (:func:`report_formats`, those with a
``render``) are what every door offers: ``evalbridge eval --format`` / ``run --format`` (the renderer), ``evalbridge check
--format`` (the formats that declare how a cross-check is shown), the config's ``output.formats`` (the
schema takes its choices from here) and the pipeline's report folder (``report`` + the suffix, plus the
format's extra files). Adding a format means adding one module to ``reports/renderers/``, nothing else.

Example:
    >>> [(f.name, f.suffix) for f in report_formats().values()]  # doctest: +NORMALIZE_WHITESPACE
    [('terminal', '.txt'), ('markdown', '.md'), ('csv', '.csv'), ('json', '.json'), ('latex', '.tex'), ('html', '.html')]
    >>> report_format("docx")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: unknown report format 'docx'; choose one of terminal, markdown, csv, json, latex, html.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, cast

from ..errors import EvalbridgeError, InputError
from .table import TEXT_MARKS, Marks, Table, columns

__all__ = ["ReportFormat", "report_formats", "report_format", "output_formats", "output_format", "table_format",
           "render", "show", "shown_formats", "check_formats", "no_extra_files", "tables_only", "notebook"]


#: A report (:class:`evalbridge.reports.report.Report`) as the renderers receive it. The registry names no type of
#: report.py: report.py renders through this table, and the renderers (above both) import what they show from it.
AnyReport = Any


def no_extra_files(report: AnyReport) -> Mapping[str, str]:
    """The extra files of a format that writes only ``report`` + its suffix: none."""
    return {}


def tables_only(report: AnyReport) -> str:
    """The ``render`` of a format that writes a result's tables and no report: no door offers it for a report."""
    raise EvalbridgeError("this format writes a result's tables, not a report; choose one of report_formats().")


@dataclass(frozen=True)
class ReportFormat:
    """One output format: what every door needs to know of it.

    Attributes:
        name: the name users give (``--format NAME``, ``output.formats: [NAME]``, ``comparison.table(fmt=NAME)``).
        suffix: the suffix of its file in a report folder (``report`` + suffix).
        title: one line saying what it is (for listings).
        render: the whole report as text in this format; :func:`tables_only` when the format writes only a
            result's tables (then no door offers it as a report format).
        order: its place in listings, choices and help (ascending).
        check: how ``evalbridge check --format NAME`` shows a report that holds a cross-check, or None
            when ``check`` does not offer this format.
        extra_files: file name -> text of the other files this format adds to a report folder
            (``csv`` adds ``comparison.csv`` when there is a comparison).
        table: one :class:`~evalbridge.views.table.Table` (title, rows, footnotes) as text in this format, or
            None when results are not shown in it.
        marks: how it writes ▲ / ▼ and superscript letters in a cell.
        escape: a name (system, metric label) as text of this format, safe in a cell.
        heading: a column heading of evalbridge's own (``system``) as this format writes it.
        typeset: True when the format lays a table out by its columns' alignment itself (LaTeX, HTML); the
            plain-text formats then keep tabulate's layout of text.
        notebook: a report's notebook view (Jupyter's ``_repr_html_``: a fragment, not the page), or None
            when the format gives none; :func:`notebook` finds the format that does.
    """

    name: str
    suffix: str
    title: str
    render: Callable[[AnyReport], str]
    order: int
    check: Callable[[AnyReport], str] | None = None
    extra_files: Callable[[AnyReport], Mapping[str, str]] = no_extra_files
    table: Callable[[Table], str] | None = None
    marks: Marks = TEXT_MARKS
    escape: Callable[[str], str] = str
    heading: Callable[[str], str] = str
    typeset: bool = False
    notebook: Callable[[AnyReport], str] | None = None


_PACKAGE = "evalbridge.reports.renderers"


@functools.cache
def output_formats() -> Mapping[str, ReportFormat]:
    """Every output format, by name, in their declared order: the ``FORMAT`` of each module of
    :mod:`evalbridge.reports.renderers` (read once; ``output_formats.cache_clear()`` reads them again)."""
    package = importlib.import_module(_PACKAGE)
    found: dict[str, tuple[ReportFormat, str]] = {}
    for module in pkgutil.iter_modules(package.__path__):
        name = f"{_PACKAGE}.{module.name}"
        declared = vars(importlib.import_module(name)).get("FORMAT")
        if not isinstance(declared, ReportFormat):
            raise EvalbridgeError(f"{name} declares no report format: every module of {_PACKAGE} needs "
                                  f"FORMAT = ReportFormat(...); got {type(declared).__name__}.")
        if declared.name in found:
            raise EvalbridgeError(f"report format {declared.name!r} is declared twice: by {found[declared.name][1]} "
                                  f"and by {name}; rename one.")
        found[declared.name] = (declared, name)
    ordered = sorted((fmt for fmt, _ in found.values()), key=lambda f: (f.order, f.name))
    return MappingProxyType({f.name: f for f in ordered})


def report_formats() -> Mapping[str, ReportFormat]:
    """The report formats (those that write a whole report), by name, in their declared order."""
    return MappingProxyType({name: f for name, f in output_formats().items() if f.render is not tables_only})


def output_format(name: str) -> ReportFormat:
    """The output format called ``name``, whatever it writes; an InputError naming the choices if none."""
    formats = output_formats()
    try:
        return formats[name]
    except KeyError:
        raise InputError(f"unknown format {name!r}; choose one of {', '.join(map(repr, formats))}.") from None


def table_format(name: str) -> ReportFormat:
    """The format called ``name`` if it writes a result's tables; else an InputError naming those that do."""
    tables = [n for n, f in output_formats().items() if f.table is not None]
    if name not in tables:
        raise InputError(f"unknown format {name!r}; choose one of {', '.join(map(repr, tables))}.")
    return output_formats()[name]


def show(tables: Table | Sequence[Table], fmt: str) -> str:
    """One table, or several one after the other (a blank line between two: a Markdown table ends only there),
    as text in the format called ``fmt``."""
    write = cast(Callable[[Table], str], table_format(fmt).table)
    return "\n".join(write(t) for t in ([tables] if isinstance(tables, Table) else tables))


def shown_formats() -> list[str]:
    """The formats a result that shows itself (``result.table(fmt)``) is written in: every format that writes
    tables, and json (its ``to_dict()``)."""
    return [name for name, f in output_formats().items() if f.table is not None or name == "json"]


def aligned(fmt: ReportFormat, left: int, right: int) -> tuple[str, ...]:
    """``left`` text columns then ``right`` number columns, in a format that lays columns out by their alignment
    (``typeset``); none in plain text (tabulate's layout: a number with a marker keeps its digits in line)."""
    return columns(left, right) if fmt.typeset else ()


def report_format(name: str) -> ReportFormat:
    """The report format called ``name``; an :class:`~evalbridge.errors.InputError` naming the choices if none."""
    formats = report_formats()
    try:
        return formats[name]
    except KeyError:
        raise InputError(f"unknown report format {name!r}; choose one of {', '.join(formats)}.") from None


def render(report: AnyReport, fmt: str) -> str:
    """``report`` as text in the format called ``fmt``."""
    return report_format(fmt).render(report)


def notebook(report: AnyReport) -> str:
    """``report``'s notebook view (``Report._repr_html_``), written by the format that declares one (``html``)."""
    views = [fmt.notebook for fmt in output_formats().values() if fmt.notebook is not None]
    if not views:
        raise EvalbridgeError(f"no output format declares a notebook view; the html format of {_PACKAGE} does.")
    return views[0](report)


def check_formats() -> tuple[str, ...]:
    """The formats ``evalbridge check --format`` offers: those that declare how a cross-check is shown."""
    return tuple(name for name, fmt in report_formats().items() if fmt.check is not None)
