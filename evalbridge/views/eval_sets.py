"""The tables of a pool (:class:`~evalbridge.evalsets.pooling.Pool`) and of what new judgements changed
(:class:`~evalbridge.evalsets.changes.JudgementChange`), declared once and written by every output format that writes
tables (:func:`evalbridge.views.formats.show`); ``json`` is their ``to_dict()``.

A pool shows its size at each depth, then per run its unjudged pairs in its first d and its Judged@k now and
once each pool is judged. What changed shows the one-line answer (would we ship the same system?), the judgements
counted, then per metric the means before and after, the orderings, tau and tau_ap, and every significance
decision that moved.
"""

from __future__ import annotations

from typing import Any

from .formats import ReportFormat, aligned, show, table_format
from .table import Table, number
from ..common.json_data import json_text

__all__ = ["pool_tables", "change_tables", "render_pool", "render_change", "pool_dict"]

AnyPool = Any
AnyChange = Any



def pool_dict(p: AnyPool) -> dict[str, Any]:
    """The pool's counts, JSON-ready (the pairs themselves: ``pairs_frame()`` or a judging batch)."""
    return {"depths": list(p.depths), "k": p.k, "queries": p.queries, "n_queries": len(p.query_ids),
            "unpooled_queries": p.unpooled_queries, "ties": p.ties,
            "size": {str(d): p.size(d) for d in p.depths},
            "runs": {s: {"unjudged": {str(d): p.unjudged(s, d) for d in p.depths},
                         f"Judged@{p.k}": p.judged_at_k(s),
                         f"Judged@{p.k} after": {str(d): p.judged_at_k(s, after=d) for d in p.depths}}
                     for s in p.systems},
            **({"strata": [{"stratum": name, **row} for name, row in p.strata_frame().to_dict("index").items()],
                "seed": p.seed} if p.strata else {})}


def pool_tables(p: AnyPool, fmt: ReportFormat) -> tuple[Table, ...]:
    e = fmt.escape
    scope = "the qrels' queries" if p.queries == "qrels" else "every query the runs answer"
    notes = (e(f"{p.unpooled_queries} queries only the runs answer are not pooled (queries='runs' pools them)."),) \
        if p.unpooled_queries else ()
    sizes = Table(headers=(fmt.heading("depth"), "pairs pooled" if p.strata else "pairs to judge", "queries with some"),
                  rows=tuple((str(d), str(p.size(d)), str(int((p.by_query[:, j] > 0).sum())))
                             for j, d in enumerate(p.depths)),
                  align=aligned(fmt, 1, 2), title=e(f"pool of {len(p.systems)} runs over {len(p.query_ids)} queries "
                                                   f"({scope}), ties {p.ties}"), footnotes=notes)
    runs = Table(headers=(fmt.heading("system"), *(f"unjudged@{d}" for d in p.depths), f"Judged@{p.k} now",
                          *(f"after depth {d}" for d in p.depths)),
                 rows=tuple((e(s), *(str(p.unjudged(s, d)) for d in p.depths), number(p.judged_at_k(s)),
                             *(number(p.judged_at_k(s, after=d)) for d in p.depths)) for s in p.systems),
                 align=aligned(fmt, 1, 2 * len(p.depths) + 1),
                 title=e(f"per run: unjudged pairs in its first d, and its mean Judged@{p.k} once each pool is judged"))
    if not p.strata:
        return sizes, runs
    frame = p.strata_frame()
    strata = Table(headers=(fmt.heading("stratum (best ranks)"), "rate", "pooled", "sampled", "queries"),
                   rows=tuple((e(name), number(row.rate), str(row.pooled), str(row.sampled), str(row.queries))
                              for name, row in zip(frame.index, frame.itertuples())),
                   align=aligned(fmt, 1, 4),
                   title=e(f"stratified sample: each query's pairs of a stratum sampled at its rate (seed {p.seed}); "
                           f"the batch holds each pair's stratum and inclusion rate, for xinfAP and infNDCG"))
    return sizes, strata, runs


def render_pool(p: AnyPool, fmt: str) -> str:
    if fmt == "json":
        return json_text(pool_dict(p))
    return show(pool_tables(p, table_format(fmt)), fmt)


def _signed(value: float) -> str:
    text = number(value)
    return text if text == "nan" or text.startswith("-") else "+" + text


def change_tables(c: AnyChange, fmt: ReportFormat) -> tuple[Table, ...]:
    e = fmt.escape
    j = c.judgements
    tables = [Table(headers=(fmt.heading("judgements"), "before", "after", "added", "removed", "grade changed"),
                    rows=(("pairs", str(j["before"]), str(j["after"]), str(j["added"]), str(j["removed"]),
                           str(j["changed"])),),
                    align=aligned(fmt, 1, 5), title=e(c.answer))]
    for row in c.ranking.rows:
        tables.append(Table(
            headers=(fmt.heading("system"), "before", "after", "delta"),
            rows=tuple((e(s), number(a), number(b), _signed(b - a)) for s, a, b in
                       zip(row.systems, row.means_a, row.means_b)),
            align=aligned(fmt, 1, 3),
            title=e(f"{row.metric}: ranking before {' > '.join(row.ranking('a'))}; after "
                    f"{' > '.join(row.ranking('b'))}"),
            footnotes=(e(f"Kendall's tau {number(row.kendall_tau)}, tau_ap {number(row.tau_ap)} "
                         f"({c.ranking.names[c.ranking.truth]} as the truth: the fuller judgements); significant "
                         f"pairs before {row.significant_a}, after {row.significant_b}; delta = after - before"),)))
        moved = [p for p in row.pairs if p.outcome != "neither"]
        if moved:
            tables.append(Table(
                headers=(fmt.heading("system - baseline"), "delta before", "p before", "delta after", "p after",
                         "decision"),
                rows=tuple((e(f"{p.system_1} - {p.system_2}"), _signed(p.delta_a), number(p.p_a), _signed(p.delta_b),
                            number(p.p_b), e(p.outcome)) for p in moved),
                align=aligned(fmt, 1, 4) + (("left",) if fmt.typeset else ()),
                title=e(f"{row.metric}: every pair significant before or after ({c.ranking.describe()})")))
    return tuple(tables)


def render_change(c: AnyChange, fmt: str) -> str:
    if fmt == "json":
        return json_text(c.to_dict())
    return show(change_tables(c, table_format(fmt)), fmt)
