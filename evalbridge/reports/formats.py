"""Report formats, declared once: name -> file suffix and renderer; a new format is one new file.

Every module of :mod:`evalbridge.reports.renderers` declares one :class:`ReportFormat` as its ``FORMAT``;
:func:`report_formats` collects them (on first use, in their declared ``order``), and every door reads
this one table: ``evalbridge eval --format`` / ``run --format`` (the renderer), ``evalbridge check
--format`` (the formats that declare how a cross-check is shown), the config's ``output.formats`` (the
schema takes its choices from here) and the pipeline's report folder (``report`` + the suffix, plus the
format's extra files). Adding a format means adding one module to ``reports/renderers/``, nothing else.

Example:
    >>> [(f.name, f.suffix) for f in report_formats().values()]  # doctest: +NORMALIZE_WHITESPACE
    [('terminal', '.txt'), ('markdown', '.md'), ('csv', '.csv'), ('json', '.json'), ('latex', '.tex')]
    >>> report_format("html")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: unknown report format 'html'; choose one of terminal, markdown, csv, json, latex.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ..errors import EvalbridgeError, InputError

__all__ = ["ReportFormat", "report_formats", "report_format", "render", "check_formats", "no_extra_files"]


#: A report (:class:`evalbridge.reports.report.Report`) as the renderers receive it. The registry names no type of
#: report.py: report.py renders through this table, and the renderers (above both) import what they show from it.
AnyReport = Any


def no_extra_files(report: AnyReport) -> Mapping[str, str]:
    """The extra files of a format that writes only ``report`` + its suffix: none."""
    return {}


@dataclass(frozen=True)
class ReportFormat:
    """One report format: what every door needs to know of it.

    Attributes:
        name: the name users give (``--format NAME``, ``output.formats: [NAME]``).
        suffix: the suffix of its file in a report folder (``report`` + suffix).
        title: one line saying what it is (for listings).
        render: the whole report as text in this format.
        order: its place in listings, choices and help (ascending).
        check: how ``evalbridge check --format NAME`` shows a report that holds a cross-check, or None
            when ``check`` does not offer this format.
        extra_files: file name -> text of the other files this format adds to a report folder
            (``csv`` adds ``comparison.csv`` when there is a comparison).
    """

    name: str
    suffix: str
    title: str
    render: Callable[[AnyReport], str]
    order: int
    check: Callable[[AnyReport], str] | None = None
    extra_files: Callable[[AnyReport], Mapping[str, str]] = no_extra_files


_PACKAGE = "evalbridge.reports.renderers"


@functools.cache
def report_formats() -> Mapping[str, ReportFormat]:
    """Every report format, by name, in their declared order: the ``FORMAT`` of each module of
    :mod:`evalbridge.reports.renderers` (read once; ``report_formats.cache_clear()`` reads them again)."""
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


def check_formats() -> tuple[str, ...]:
    """The formats ``evalbridge check --format`` offers: those that declare how a cross-check is shown."""
    return tuple(name for name, fmt in report_formats().items() if fmt.check is not None)
