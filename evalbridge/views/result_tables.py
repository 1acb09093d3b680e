"""How Results and a CrossCheck show themselves: the means table and the provenance line, the cross-check's
agreement, unsupported pairs and differences, as text, Markdown and notebook HTML.

:class:`~evalbridge.results.Results` and :class:`~evalbridge.cross_check.CrossCheck` are below this module: it
reads them and never imports them; their ``__str__``, ``table``, ``to_markdown`` and ``_repr_html_`` are one-line
calls into the functions here.
"""

from __future__ import annotations

from html import escape
from typing import Any

__all__ = ["results_table", "results_text", "results_html", "crosscheck_text", "crosscheck_markdown",
           "crosscheck_html"]

#: A Results, a CrossCheck, a MetricRequest, as the functions here read them.
AnyResult = Any

#: the columns of a cross-check's differences (``CrossCheck.differences``)
_DIFFERENCES = ("metric", "query_id", "backend", "reference", "value", "cause")


def _what(request: AnyResult) -> str:
    """The metric's title, and the metric as evaluated when its label says something else."""
    title = request.metric.info.title
    return str(title if request.label == str(request.metric) else f"{title}: {request.metric}")


# -- Results --------------------------------------------------------------------------------------------

def results_table(results: AnyResult, *, digits: int = 4, fmt: str = "simple") -> str:
    """The means as a text table (any ``tabulate`` format, e.g. ``github``)."""
    from tabulate import tabulate

    rows = [(r.label, _what(r), round(results.mean(r.metric), digits)) for r in results.requests]
    return str(tabulate(rows, headers=("metric", "what", "mean"), tablefmt=fmt, floatfmt=f".{digits}f"))


def results_text(results: AnyResult) -> str:
    """``print(results)``: the means table, then the provenance line."""
    return f"{results_table(results)}\n{results.provenance.summary()}"


def results_html(results: AnyResult) -> str:
    """Jupyter's view: the means as an HTML table, the provenance as its footnote."""
    rows = "".join(f"<tr><td>{escape(r.label)}</td><td>{escape(_what(r))}</td>"
                   f'<td style="text-align: right">{results.mean(r.metric):.4f}</td></tr>' for r in results.requests)
    return (f'<div class="evalbridge-results"><table><thead><tr><th>metric</th><th>what</th><th>mean</th></tr>'
            f'</thead><tbody>{rows}</tbody></table><p class="evalbridge-provenance" style="font-size: smaller">'
            f'{escape(results.provenance.summary())}</p></div>')


# -- CrossCheck -----------------------------------------------------------------------------------------

def _mode(check: AnyResult) -> str:
    return "canonicalised inputs" if check.canonicalised else "each library's own conventions"


def crosscheck_markdown(check: AnyResult, *, digits: int = 4) -> str:
    """The agreement table, then the differences, as GitHub markdown."""
    from tabulate import tabulate

    parts = [f"## Cross-check ({_mode(check)}, atol={check.atol:g}, reference column: {check.reference_backend}): "
             f"{'OK' if check.ok else 'UNEXPLAINED differences'}",
             tabulate(check.agreement.values.tolist(), headers=list(check.agreement.columns), tablefmt="github")]
    if check.unsupported:
        parts.append(tabulate([(b, m, r) for (b, m), r in check.unsupported.items()],
                              headers=("backend", "metric", "unsupported because"), tablefmt="github"))
    if not check.differences.empty:
        parts.append(tabulate(check.differences.values.tolist(), headers=list(_DIFFERENCES), tablefmt="github",
                              floatfmt=f".{digits}f"))
    return "\n\n".join(parts) + "\n"


def crosscheck_text(check: AnyResult) -> str:
    """``print(check)``: one line per backend and metric, then the differences."""
    text = "\n".join(check.summary_lines())
    if not check.differences.empty:
        from tabulate import tabulate

        text += "\n" + tabulate(check.differences.values.tolist(), headers=list(_DIFFERENCES), floatfmt=".4f")
    return str(text)


def crosscheck_html(check: AnyResult, *, max_rows: int = 20) -> str:
    """Jupyter's view: verdict, agreement, unsupported pairs, the first differences; settings as a footnote."""
    verdict = "OK: every difference explained" if check.ok else f"{len(check.unexplained)} UNEXPLAINED differences"
    parts = [f"<p><strong>Cross-check: {escape(verdict)}</strong></p>", check.agreement.to_html(index=False, border=0)]
    if check.unsupported:
        rows = "".join(f"<tr><td>{escape(b)}</td><td>{escape(m)}</td><td>{escape(r)}</td></tr>"
                       for (b, m), r in check.unsupported.items())
        parts.append(f"<table><thead><tr><th>backend</th><th>metric</th><th>unsupported because</th></tr>"
                     f"</thead><tbody>{rows}</tbody></table>")
    if not check.differences.empty:
        more = len(check.differences) - max_rows
        parts.append(check.differences.head(max_rows).to_html(index=False, border=0, float_format="{:.4f}".format,
                                                              na_rep="none"))
        if more > 0:
            parts.append(f"<p>... {more} more differences in <code>.differences</code></p>")
    c = check.settings
    notes = [f"{_mode(check)}; atol {check.atol:g}; reference column: {check.reference_backend}; ties {c.ties}; "
             f"scores as {c.score_precision}; missing queries {c.missing_queries}"]
    notes += [f"{backend} bridges: {'; '.join(applied)}" for backend, applied in check.bridges.items() if applied]
    footnote = "<br>".join(map(escape, notes))
    return (f'<div class="evalbridge-crosscheck">{"".join(parts)}'
            f'<p class="evalbridge-provenance" style="font-size: smaller">{footnote}</p></div>')
