"""The tables of Results and of a CrossCheck, declared once: the means with the provenance as footnote; the
cross-check's agreement per backend and metric, its unsupported pairs and its differences, its settings as footnote.

Every output format that writes tables writes them (:func:`evalbridge.views.formats.show`): ``print``, Markdown,
LaTeX and the notebook view. :class:`~evalbridge.evaluation.results.Results` and :class:`~evalbridge.cross_check.checking.CrossCheck`
are below this module: it reads them and never imports them; their ``table``, ``__str__``, ``to_markdown`` and
``_repr_html_`` are one-line calls into :func:`render_results` and :func:`render_crosscheck`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .formats import ReportFormat, show, table_format
from .table import Table, columns, number

__all__ = ["results_tables", "render_results", "crosscheck_tables", "render_crosscheck", "DIFFERENCES"]

#: A Results, a CrossCheck, a MetricRequest, as the functions here read them.
AnyResult = Any

#: the columns of a cross-check's differences (``CrossCheck.differences``)
DIFFERENCES = ("metric", "query_id", "backend", "reference", "value", "cause")
#: the columns of a cross-check's agreement (``CrossCheck.agreement``)
_AGREEMENT = ("backend", "metric", "queries", "agree", "explained", "unexplained")


def _what(request: AnyResult) -> str:
    """The metric's title, and the metric as evaluated when its label says something else."""
    title = request.metric.info.title
    return str(title if request.label == str(request.metric) else f"{title}: {request.metric}")


# -- Results --------------------------------------------------------------------------------------------

def results_tables(results: AnyResult, fmt: ReportFormat, digits: int = 4) -> tuple[Table, ...]:
    """One table: each metric's label, what it is, its mean; the provenance summary under it."""
    e = fmt.escape
    return (Table(headers=tuple(map(fmt.heading, ("metric", "what", "mean"))),
                  rows=tuple((e(r.label), e(_what(r)), number(results.mean(r.metric), digits))
                             for r in results.requests),
                  align=columns(2, 1), footnotes=(e(results.provenance.summary()),)),)


def render_results(results: AnyResult, fmt: str = "terminal", digits: int = 4) -> str:
    """``results`` as text in the output format called ``fmt``."""
    return show(results_tables(results, table_format(fmt), digits), fmt)


# -- CrossCheck -----------------------------------------------------------------------------------------

def _mode(check: AnyResult) -> str:
    return "canonicalised inputs" if check.canonicalised else "each library's own conventions"


def crosscheck_tables(check: AnyResult, fmt: ReportFormat, *, digits: int = 4,
                      max_rows: int | None = None) -> tuple[Table, ...]:
    """The agreement per backend and metric under the verdict, the pairs not computed, the differences (the
    first ``max_rows``, None: all); the settings and the bridges applied under the last table."""
    e, heading = fmt.escape, fmt.heading
    verdict = "OK: every difference explained" if check.ok else f"{len(check.unexplained)} UNEXPLAINED differences"
    tables = [Table(headers=tuple(map(heading, _AGREEMENT)),
                    rows=tuple((e(str(row.backend)), e(str(row.metric)),
                                *map(str, (row.queries, row.agree, row.explained, row.unexplained)))
                               for row in check.agreement.itertuples(index=False)),
                    align=columns(2, 4),
                    title=e(f"Cross-check ({_mode(check)}, atol={check.atol:g}, reference column: "
                            f"{check.reference_backend}): {verdict}"))]
    if check.unsupported:
        tables.append(Table(headers=tuple(map(heading, ("backend", "metric", "unsupported because"))),
                            rows=tuple((e(b), e(m), e(r)) for (b, m), r in check.unsupported.items())))
    notes = []
    if not check.differences.empty:
        shown = check.differences if max_rows is None else check.differences.head(max_rows)
        tables.append(Table(headers=tuple(map(heading, DIFFERENCES)),
                            rows=tuple((e(str(m)), e(str(q)), e(str(b)), number(ref, digits), number(v, digits), e(c))
                                       for m, q, b, ref, v, c in shown.itertuples(index=False)),
                            align=(*columns(3, 2), "left")))
        if len(check.differences) > len(shown):
            notes.append(f"... {len(check.differences) - len(shown)} more differences in .differences")
    c = check.settings
    notes.append(f"{_mode(check)}; atol {check.atol:g}; reference column: {check.reference_backend}; ties {c.ties}; "
                 f"scores as {c.score_precision}; missing queries {c.missing_queries}")
    notes += [f"{backend} bridges: {'; '.join(applied)}" for backend, applied in check.bridges.items() if applied]
    return (*tables[:-1], replace(tables[-1], footnotes=tuple(map(e, notes))))


def render_crosscheck(check: AnyResult, fmt: str = "terminal", *, digits: int = 4, max_rows: int | None = None) -> str:
    """``check`` as text in the output format called ``fmt``."""
    return show(crosscheck_tables(check, table_format(fmt), digits=digits, max_rows=max_rows), fmt)
