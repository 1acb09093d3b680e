"""The tables of many systems' tiers and rank intervals (:class:`~evalbridge.decisions.tiers.Tiers`), declared once and
written by every output format that writes tables (terminal, Markdown, LaTeX, HTML:
:func:`evalbridge.views.formats.show`); JSON is its ``to_dict()``, a CSV folder its ``to_frame()`` tables.

Two tables: each system's mean, tier letters, rank and rank interval, metric by metric from the best; and, when
there are at most :data:`PAIRS_SHOWN` systems, every pair's difference and simultaneous p-value (with more, the
pairs are in the JSON and ``to_frame(table="pairs")``). Names (systems, metrics) are escaped by the format.
"""

from __future__ import annotations

from typing import Any

from ..common.json_data import json_text
from .formats import ReportFormat, aligned, show, table_format
from .table import Table, number, p_value

__all__ = ["tiers_tables", "render_tiers", "describe", "PAIRS_SHOWN"]

#: A Tiers (read, never imported: this module is below the type it shows).
AnyTiers = Any

#: the most systems whose pairs a text table lists (10 systems: 45 pairs a metric)
PAIRS_SHOWN = 10

#: method -> its title (evalbridge.stats.tiers.TIER_METHODS)
_TITLES = {"randomization": "randomised Tukey HSD (Carterette 2012)", "bootstrap": "bootstrap of the maximum statistic",
           "tukey": "Tukey's HSD (two-way ANOVA residual)"}


def describe(t: AnyTiers) -> str:
    """One sentence saying how the tiers of ``t`` were decided."""
    return (f"{_TITLES[t.method]} over all pairs of each metric, family-wise alpha {t.alpha:g}"
            + ("" if t.method == "tukey" else f", {t.n_resamples} resamples")
            + f"; {t.confidence:.0%} rank intervals from {t.n_resamples} bootstrap resamples of the queries; "
              f"seed {t.seed}")


def _queries(t: AnyTiers) -> str:
    parts = [f"{m}: {n} queries" + (f" ({u} without a value for every system, left out)" if u else "")
             for m, n, u in zip(t.metrics, t.n, t.unpaired)]
    return "queries every system was evaluated on: " + "; ".join(parts)


def tiers_tables(t: AnyTiers, fmt: ReportFormat) -> tuple[Table, ...]:
    """The systems' tiers and rank intervals, and (with few systems) every pair's p-value, as text of ``fmt``."""
    e = fmt.escape
    method = _TITLES[t.method]
    tables = [Table(
        headers=(fmt.heading("metric"), fmt.heading("system"), fmt.heading("tier"), "mean", "rank", "rank interval"),
        rows=tuple((e(r.metric), e(r.system), e(r.tier), number(r.mean), str(r.rank), f"{r.rank_low}-{r.rank_high}")
                   for r in t.rows),
        align=aligned(fmt, 3, 3),
        title=e(f"tiers: systems sharing a letter are not separated by the {method} at family-wise alpha "
                f"{t.alpha:g}; rank intervals at {t.confidence:.0%}"),
        footnotes=(e(describe(t)), e(_queries(t))))]
    if len(t.systems) <= PAIRS_SHOWN:
        tables.append(Table(
            headers=(fmt.heading("metric"), fmt.heading("system"), fmt.heading("other"), "Δ", "p", "separated"),
            rows=tuple((e(p.metric), e(p.system), e(p.other), number(p.delta), p_value(p.p_value),
                        "yes" if p.significant else "no") for p in t.pairs),
            align=aligned(fmt, 3, 3),
            title=e(f"every pair: Δ = system - other and the {method}'s p-value (separated: p <= {t.alpha:g})")))
    else:
        first = tables[0]
        tables[0] = Table(first.headers, first.rows, first.align, first.title,
                          (*first.footnotes, e(f"the p-values of the {len(t.pairs)} pairs: the JSON, the CSV "
                                               f"(tiers_pairs.csv) and to_frame(table='pairs').")))
    return tuple(tables)


def render_tiers(t: AnyTiers, fmt: str = "terminal") -> str:
    """``t`` as text: ``json``, or any format that writes tables."""
    if fmt == "json":
        return json_text(t.to_dict())
    return show(tiers_tables(t, table_format(fmt)), fmt)
