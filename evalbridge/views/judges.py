"""What a :class:`~evalbridge.evalsets.judges.JudgeReport` shows, as tables.

:func:`judges_tables` declares the judges side by side (best first: kappas, the mean grade shift, the pairs with
grades outside the humans' scale, and with runs the system order's tau and tau_AP against the humans' and the pairs
whose significance flips), then per judge its confusion table with each grade's precision and recall, its
calibration curve and, with runs, each system's mean under the judge beside the humans'. Every output format that
writes tables writes them (:func:`evalbridge.views.formats.show`); JSON is ``to_dict()``. Names are escaped.
"""

from __future__ import annotations

from typing import Any

from ..common.json_data import json_text
from .formats import aligned, show, table_format
from .table import Table, number

__all__ = ["judges_tables", "render_judges"]

#: A JudgeReport (read, never imported: this module is below the type it shows).
AnyReport = Any


def judges_tables(report: AnyReport, fmt: Any, digits: int = 4) -> tuple[Table, ...]:
    """The judges side by side, then each judge's confusion, calibration and system means, as tables of ``fmt``."""
    e = fmt.escape
    runs = bool(report.metrics)
    headers = (fmt.heading("judge"), "pairs", "kappa", "linear kappa", "quadratic kappa", "shift (judge - human)",
               "out-of-scale pairs") + (("metric", "Kendall's tau", "tau_AP", "flipped pairs") if runs else ())
    rows = []
    for card in report.cards:
        row = card.summary()
        outside = ", ".join(f"{n} x {g:g}" for g, n in card.out_of_scale.items()) or "0"
        rows.append((e(card.judge), str(row["pairs"]), number(card.kappa, digits), number(card.linear_kappa, digits),
                     number(card.quadratic_kappa, digits), number(card.shift, digits), e(outside))
                    + ((e(str(row["metric"])), number(row["kendall_tau"], digits), number(row["tau_ap"], digits),
                        str(row["flipped"])) if runs else ()))
    scale = ", ".join(f"{g:g}" for g in report.scale)
    notes = [e(f"Ranked by {report.ranked_by}. Every kappa is Cohen's over the pairs both labelled, {report.human}'s "
               f"grades the rows; shift: the judge's mean grade minus {report.human}'s over those pairs.")]
    for card in (c for c in report.cards if c.out_of_scale):
        qid, doc, grade = card.out_of_scale_example
        notes.append(e(f"{card.judge} gives grades outside {report.human}'s scale ({scale}): "
                       f"{', '.join(f'{g:g} on {n} pairs' for g, n in card.out_of_scale.items())} (e.g. query {qid}, "
                       f"doc {doc}: {grade:g}); kept as their own columns of its confusion table, not dropped."))
    if runs:
        notes.append(e(f"tau_AP: AP correlation of the judge's system order with {report.human}'s as the truth; flipped:"
                       f" pairs of systems significant under one side and not, or reversed, under the other "
                       f"({report.test} test, two-sided, Holm-corrected over the pairs, alpha = {report.alpha:g})."))
    tables = [Table(headers=headers, rows=tuple(rows), align=aligned(fmt, 1, len(headers) - 1),
                    title=e(f"Judges against {report.human} ({len(report.cards)} judges)"), footnotes=tuple(notes))]
    for card in report.cards:
        a = card.agreement
        tables.append(Table(
            headers=(fmt.heading(f"{report.human} \\ {card.judge}"), *map(e, a.labels_b), "recall"),
            rows=tuple((e(label), *map(str, counts), number(recall, digits))
                       for label, counts, recall in zip(a.labels_a, a.confusion, card.recall))
            + (("precision", *(number(p, digits) for p in card.precision), ""),),
            align=aligned(fmt, 1, len(a.labels_b) + 1),
            title=e(f"{card.judge}: confusion with {report.human} (rows {report.human}, columns the judge)")))
        tables.append(Table(
            headers=(fmt.heading("judge grade"), "pairs", "judge mean", f"{report.human} mean",
                     f"{report.human} relevant (>= {report.level:g})"),
            rows=tuple((e(label), str(n), number(jm, digits), number(hm, digits), number(share, digits))
                       for label, n, jm, hm, share in card.calibration),
            align=aligned(fmt, 1, 4), title=e(f"{card.judge}: calibration against {report.human}")))
        for order in card.orders:
            tables.append(Table(
                headers=(fmt.heading("system"), f"mean, {report.human}", f"mean, {card.judge}", "Δ (judge - human)"),
                rows=tuple((e(system), number(h, digits), number(j, digits), number(j - h, digits))
                           for system, h, j in zip(order.systems, order.means_a, order.means_b)),
                align=aligned(fmt, 1, 3),
                title=e(f"{card.judge}: {order.metric} of each system (tau {number(order.kendall_tau, digits)}, "
                        f"tau_AP {number(order.tau_ap, digits)}, {order.flipped} flipped pairs)")))
        if card.noise is not None:
            tables.append(_noise_table(report, card, fmt, digits))
    return tuple(tables)


def _noise_table(report: AnyReport, card: Any, fmt: Any, digits: int) -> Table:
    """A judge run several times: its label noise, and each system's metric with the noise in its interval."""
    e, noise = fmt.escape, card.noise
    level = noise.intervals[0].confidence if noise.intervals else 0.95
    return Table(
        headers=(fmt.heading("system"), "metric", "mean over label sets", f"{level:.0%} interval, with label noise",
                 "queries alone", "widening"),
        rows=tuple((e(u.system), e(u.metric), number(u.expected, digits),
                    f"[{number(u.ci_low, digits)}, {number(u.ci_high, digits)}]",
                    f"[{number(u.query_ci_low, digits)}, {number(u.query_ci_high, digits)}]",
                    number(u.widening, 2)) for u in noise.intervals),
        align=aligned(fmt, 2, 4),
        title=e(f"{card.judge}: label noise over {noise.labellings} label sets (re-runs): {noise.pairs} pairs graded "
                f"by all, {number(noise.disagreement, digits)} of them not graded alike, Cohen's kappa between two "
                f"sets {number(noise.kappa, digits)}"),
        footnotes=(e("Each interval is a bootstrap over queries and label sets (evalbridge.uncertain); 'queries "
                     "alone' fixes the labels at their mean; widening: how many times wider the label noise makes "
                     "it."),))


def render_judges(report: AnyReport, fmt: str = "terminal") -> str:
    """``report`` as text: ``json`` (its ``to_dict()``) or any format that writes tables."""
    if fmt == "json":
        return json_text(report.to_dict())
    return show(judges_tables(report, table_format(fmt)), fmt)
