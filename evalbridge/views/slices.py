"""The tables of slices (:class:`~evalbridge.evaluation.slices.Slices`) and of the numbers runs logged (latency, cost)
beside quality, declared once and written by every format that writes tables; JSON is their ``to_dict()``.

Slices show, in this order: each slice's queries and each system's mean with its bootstrap interval, per
metric; the differences against the baseline with their interval, p-value and Benjamini-Hochberg adjusted
p-value (a slice too small to test says so); a footnote with the queries in no slice. The numbers show each
system's mean, p50 and p95 of every logged number, then one quality-vs-cost table per number marking the
systems no other system beats on both (:func:`evalbridge.stats.pareto.pareto_front`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .formats import ReportFormat, aligned, show, table_format
from .table import Table, number, p_value

__all__ = ["slice_tables", "number_tables", "report_tables", "fronts", "render_slices", "FRONT"]

#: the mark of a system on the quality-vs-cost front
FRONT = "*"



def slice_tables(s: Any, fmt: ReportFormat, digits: int = 4) -> tuple[Table, ...]:
    """The tables of a :class:`~evalbridge.evaluation.slices.Slices`, as text of ``fmt``."""
    e = fmt.escape
    systems = list(dict.fromkeys(m.system for m in s.means))
    metrics = list(dict.fromkeys(m.metric for m in s.means))
    level = f"{s.confidence:.0%}"
    means = {(m.slice, m.system, m.metric): m for m in s.means}
    rows = []
    for name, count in zip(s.names, s.counts):
        for metric in metrics:
            cells = [f"{number(means[name, x, metric].mean, digits)} [{number(means[name, x, metric].ci_low, digits)}, "
                     f"{number(means[name, x, metric].ci_high, digits)}]" for x in systems]
            rows.append((e(name), str(count), e(metric), *cells))
    unsliced = (f"{len(s.unsliced)} queries are in no slice"
                + (f" (e.g. {', '.join(map(e, s.unsliced[:5]))})" if s.unsliced else "") + ".")
    tables = [Table(headers=(fmt.heading("slice"), "queries", fmt.heading("metric"), *map(e, systems)),
                    rows=tuple(rows), align=aligned(fmt, 1, 2 + len(systems)),
                    title=f"Slices by {e(s.by)}: mean [{level} bootstrap interval]",
                    footnotes=(unsliced,))]
    if s.differences:
        drows = []
        for d in s.differences:
            verdict = ("not tested" if not d.tested else "significant" if d.significant else "not significant")
            drows.append((e(d.slice), str(d.n), e(d.metric), e(d.system), e(d.baseline), number(d.delta, digits),
                          f"[{number(d.ci_low, digits)}, {number(d.ci_high, digits)}]", p_value(d.p_value),
                          p_value(d.p_adjusted), verdict))
        notes = [f"Δ = system - baseline on the slice's queries; p: two-sided {s.test} test; p adj.: "
                 f"Benjamini-Hochberg over every (slice, system, metric) tested (a family of its own, not the "
                 f"comparison's), significant at {s.alpha:g}; the {level} CI is each difference's own, unadjusted."]
        if s.too_small:
            notes.append(f"Not tested: {', '.join(map(e, s.too_small))} (fewer than {s.min_queries} queries, too few "
                         f"for a test).")
        tables.append(Table(headers=(fmt.heading("slice"), "queries", fmt.heading("metric"), fmt.heading("system"),
                                     fmt.heading("baseline"), "Δ", f"{level} CI (unadjusted)", "p", "p adj.",
                                     "result"),
                            rows=tuple(drows), title="Slices: differences against the baseline",
                            footnotes=tuple(notes)))
    return tuple(tables)


def number_tables(results: Mapping[str, Any], labels: Sequence[str], fmt: ReportFormat,
                  digits: int = 4) -> tuple[Table, ...]:
    """The numbers each system's run logged (mean, p50, p95), and quality vs each number's mean with the front
    marked; none when no run logged a number."""
    e = fmt.escape
    fields = list(dict.fromkeys(n.field for r in results.values() for n in r.numbers))
    if not fields:
        return ()
    rows = [(e(system), e(n.field), str(n.n), number(n.mean, digits), number(n.p50, digits), number(n.p95, digits))
            for system, r in results.items() for n in r.numbers]
    tables = [Table(headers=(fmt.heading("system"), fmt.heading("field"), "n", "mean", "p50", "p95"),
                    rows=tuple(rows), align=aligned(fmt, 2, 4), title="Logged per question (latency, tokens, cost)")]
    for field, front in fronts(results, labels).items():
        cost = {s: next((n.mean for n in r.numbers if n.field == field), float("nan")) for s, r in results.items()}
        trows = [(e(s), number(cost[s], digits),
                  *(number(r[label], digits) + (f" {FRONT}" if s in front[label] else "") for label in labels))
                 for s, r in results.items()]
        tables.append(Table(headers=(fmt.heading("system"), f"mean {e(field)}", *map(e, labels)), rows=tuple(trows),
                            align=aligned(fmt, 1, 1 + len(labels)), title=f"Quality vs {e(field)}",
                            footnotes=(f"{FRONT} no other system is both better on the metric and lower on mean "
                                       f"{e(field)} (the Pareto front).",)))
    return tuple(tables)


def fronts(results: Mapping[str, Any], labels: Sequence[str]) -> dict[str, dict[str, list[str]]]:
    """Each logged number -> each metric -> the systems on the quality-vs-mean-cost front (JSON-ready)."""
    from ..stats.pareto import pareto_front

    fields = list(dict.fromkeys(n.field for r in results.values() for n in r.numbers))
    out: dict[str, dict[str, list[str]]] = {}
    for field in fields:
        cost = {s: next((n.mean for n in r.numbers if n.field == field), float("nan")) for s, r in results.items()}
        out[field] = {label: list(pareto_front({s: (r[label], cost[s]) for s, r in results.items()}))
                      for label in labels}
    return out


def report_tables(report: Any, fmt: ReportFormat) -> tuple[Table, ...]:
    """The tables a report adds for its logged numbers and its slices (none when it has neither)."""
    tables = number_tables(report.results, report.labels, fmt, report.digits)
    return tables + (slice_tables(report.slices, fmt, report.digits) if report.slices is not None else ())


def render_slices(s: Any, fmt: str = "terminal") -> str:
    """A :class:`~evalbridge.evaluation.slices.Slices` as text: ``json``, or any format that writes tables."""
    if fmt == "json":
        from ..common.json_data import json_text

        return json_text(s.to_dict())
    return show(slice_tables(s, table_format(fmt)), fmt)
