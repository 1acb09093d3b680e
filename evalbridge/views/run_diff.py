"""The tables of a run diff (:class:`~evalbridge.decisions.diffing.RunDiff`) and of many systems' standings
(:class:`~evalbridge.decisions.standings.Standings`), declared once and written by every output format that writes
tables (terminal, Markdown, LaTeX, HTML: :func:`evalbridge.views.formats.show`); JSON is their ``to_dict()``.

A diff shows, in this order: the means and how many queries rose, fell or stayed (with judgements); how far
the rankings moved (RBO with its bounds, Jaccard at k, tau and tau_AP: overall, then the :data:`ROWS` least
similar queries); B as a reproduction of A per metric (RMSE, effect ratio, delta RI); for each metric the
:data:`ROWS` largest drops and gains; each query shown in detail with the documents that entered or left the
top k (grade, rank in A and B), the unjudged ones, and the largest rank moves. Names (systems, metrics,
query and doc ids) are escaped by the format.
"""

from __future__ import annotations

from typing import Any

from .formats import ReportFormat, aligned, show, table_format
from .table import Table, number
from ..common.json_data import json_text

__all__ = ["diff_tables", "standings_tables", "render_diff", "render_standings", "ROWS"]

#: A RunDiff / Standings (read, never imported: this module is below the types it shows).
AnyDiff = Any
AnyStandings = Any

#: the largest drops (and gains) of each metric the tables list; every query is in JSON and to_frame()
ROWS = 5

#: the similarity's per-query measures, in its table's order
_MEASURES = ("rbo", "rbo_min", "rbo_max", "rbo_res", "jaccard", "tau", "tau_ap")

_KINDS = (("left", "left the top {k}"), ("entered", "entered the top {k}"),
          ("unjudged_entered", "entered, unjudged"), ("unjudged_left", "left, unjudged"), ("moves", "moved"))


def _signed(value: float) -> str:
    text = number(value)
    return text if text == "nan" or text.startswith("-") else "+" + text


def _rank(value: int | None) -> str:
    return "-" if value is None else str(value)


def _grade(value: float | None) -> str:
    return "unjudged" if value is None else f"{value:g}"


def _title(d: AnyDiff) -> str:
    c = d.conventions
    return (f"diff {d.systems[0]} -> {d.systems[1]}: top {d.k}, ties {c.ties}"
            + (f", depth {c.depth}" if c.depth is not None else "") + (", judged only" if c.judged_only else ""))



#: what each RBO variant takes a tie for (Corsi & Urbano, SIGIR 2024)
_VARIANTS = {"w": "tied documents are equal", "a": "the order of tied documents is unknown: the expected RBO over "
             "their orders", "b": "as a, corrected for what the ties lose (a ranking against itself scores 1)"}


def _similarity_table(d: AnyDiff, fmt: ReportFormat) -> Table:
    e, s = fmt.escape, d.similarity
    overall = s.overall()
    rows = [(e(f"overall (mean of {len(s.queries)})"), *(number(overall[m]) for m in _MEASURES), "")]
    rows += [(e(q), *map(number, values[:-1]), str(values[-1])) for q, *values in s.rows()[:ROWS]]
    return Table(
        headers=(fmt.heading("query"), "rbo", "min", "max", "res", f"jaccard@{s.k}", "tau", "tau_ap", "shared"),
        rows=tuple(rows), align=aligned(fmt, 1, 8),
        title=e(f"how far the rankings moved: RBO^{s.ties} at p={s.p:g} (and its bounds), the least similar "
                f"queries first"),
        footnotes=tuple(map(e, (
            f"RBO^{s.ties}: {_VARIANTS[s.ties]}; min and max bound it, res = max - min is what the lists' depth "
            f"leaves unknown; jaccard@{s.k}: the top {s.k} lists' overlap (ties: {s.order}); tau and tau_ap over the "
            "documents both retrieved (shared).",
            *((f"{s.unpaired} queries only one run ranks have no value.",) if s.unpaired else ()),
            f"every query: to_frame(table='similarity') or JSON ({len(s.queries)} queries)."))))


def _reproduction_table(d: AnyDiff, fmt: ReportFormat) -> Table:
    e = fmt.escape
    a, b = map(e, d.systems)
    return Table(
        headers=(fmt.heading("metric"), "queries", "rmse", "effect ratio", "delta RI"),
        rows=tuple((e(r.metric), str(r.n), number(r.rmse), number(r.effect_ratio), number(r.delta_ri))
                   for r in d.reproduction),
        align=aligned(fmt, 1, 4), title=e(f"{b} as a reproduction of {a} (Breuer et al., SIGIR 2020)"),
        footnotes=(e("rmse of the per-query values (0: every value reproduced); effect ratio (1: the effect over the "
                     "baseline reproduced whole) and delta RI (0: the relative improvement reproduced) need the two "
                     "baselines (nan without)."),))


def diff_tables(d: AnyDiff, fmt: ReportFormat) -> tuple[Table, ...]:
    """Every table of ``d``, as text of ``fmt``."""
    e = fmt.escape
    a, b = map(e, d.systems)
    empty = (e("no query changed: the same metric values and the same top k everywhere."),) if d.empty else ()
    tables = [Table(
        headers=(fmt.heading("metric"), a, b, "delta", "rose", "fell", "same", "queries"),
        rows=tuple((e(m.metric), number(m.a), number(m.b), _signed(m.delta), str(m.improved), str(m.worsened),
                    str(m.unchanged), str(m.n)) for m in d.means),
        align=aligned(fmt, 1, 7), title=e(_title(d)), footnotes=empty)] if d.means else []
    if d.similarity is not None:
        table = _similarity_table(d, fmt)
        tables.append(table if d.means else Table(table.headers, table.rows, table.align,
                                                  e(_title(d)) + ": " + table.title, (*empty, *table.footnotes)))
    if d.reproduction:
        tables.append(_reproduction_table(d, fmt))
    for c in d.changes:
        rows = list(zip(c.queries, c.a, c.b, c.delta))
        picked = [r for r in rows[:ROWS] if r[3] < 0] + [r for r in reversed(rows[-ROWS:]) if r[3] > 0]
        if picked:
            tables.append(Table(
                headers=(fmt.heading("query"), a, b, "delta"),
                rows=tuple((e(q), number(x), number(y), _signed(z)) for q, x, y, z in picked),
                align=aligned(fmt, 1, 3),
                title=e(f"{c.metric}: the largest drops and gains (of {len(rows)} queries)")))
    for q in d.queries:
        rows_q = tuple((e(title.format(k=d.k)), e(c.doc), e(_grade(c.grade)), _rank(c.rank_a), _rank(c.rank_b),
                        "" if c.move is None else f"{c.move:+d}")
                       for kind, title in _KINDS for c in getattr(q, kind))
        head = "; ".join(f"{m} {number(x)} -> {number(y)} ({_signed(y - x)})" for m, x, y in q.values) or \
            f"RBO {number(d.similarity.rbo[d.similarity.queries.index(q.query)])}"
        tables.append(Table(
            headers=(fmt.heading("change"), fmt.heading("doc"), fmt.heading("grade"), "rank " + a, "rank " + b,
                     fmt.heading("move")),
            rows=rows_q, align=aligned(fmt, 3, 3), title=e(f"query {q.query}: {head}"),
            footnotes=() if rows_q else (e(f"the same top {d.k}, in the same order"),)))
    tables[-1] = Table(tables[-1].headers, tables[-1].rows, tables[-1].align, tables[-1].title,
                       (*tables[-1].footnotes, *map(e, d.provenance)))
    return tuple(tables)


def standings_tables(s: AnyStandings, fmt: ReportFormat) -> tuple[Table, ...]:
    """Every table of ``s`` (win / tie / loss, hardest queries, mean ranks), as text of ``fmt``."""
    e = fmt.escape
    systems = tuple(map(e, s.systems))
    hard = {h.query for h in s.hardest}
    placed = {r.metric: {q: {system: ranks[i] for system, ranks in r.ranks} for i, q in enumerate(r.queries)
                         if q in hard} for r in s.ranks}
    return (
        Table(headers=(fmt.heading("metric"), fmt.heading("system"), fmt.heading("against"), "wins", "ties",
                       "losses"),
              rows=tuple((e(p.metric), e(p.system), e(p.other), str(p.wins), str(p.ties), str(p.losses))
                         for p in s.pairs),
              align=aligned(fmt, 3, 3),
              title=e("win / tie / loss of every pair: the queries where the system is above, equal to, below the "
                      "other")),
        Table(headers=(fmt.heading("metric"), fmt.heading("query"), "mean", *systems),
              rows=tuple((e(h.metric), e(h.query), number(h.mean),
                          *(f"{number(v)} ({placed[h.metric][h.query][system]:g})" for system, v in h.values))
                         for h in s.hardest),
              align=aligned(fmt, 2, 1 + len(systems)),
              title=e("the hardest queries: the lowest mean over the systems (each system's value and rank)")),
        Table(headers=(fmt.heading("metric"), *systems),
              rows=tuple((e(r.metric), *(number(m, 2) for _, m in r.mean_ranks)) for r in s.ranks),
              align=aligned(fmt, 1, len(systems)),
              title=e("mean rank over the queries (1 = best; equal values share their places)"),
              footnotes=(e(f"queries every system was evaluated on: {', '.join(map(str, s.n))}"),)),
    )


def _json(data: dict[str, Any]) -> str:
    return json_text(data)


def render_diff(d: AnyDiff, fmt: str = "terminal") -> str:
    """``d`` as text: ``json`` (every query of every metric), or any format that writes tables."""
    if fmt == "json":
        return _json(d.to_dict())
    return show(diff_tables(d, table_format(fmt)), fmt)


def render_standings(s: AnyStandings, fmt: str = "terminal") -> str:
    """``s`` as text: ``json``, or any format that writes tables."""
    if fmt == "json":
        return _json(s.to_dict())
    return show(standings_tables(s, table_format(fmt)), fmt)
