"""Renders a run diff (:class:`~evalbridge.diffing.RunDiff`) and many systems' standings
(:class:`~evalbridge.stats.standings.Standings`) as terminal text, Markdown, JSON and HTML.

Every view shows the same parts in the same order: the means and how many queries rose, fell or stayed;
for each metric the largest drops and gains; then each query shown in detail with the documents that
entered or left the top k (grade, rank in A and B), the unjudged ones, and the largest rank moves. Names
(systems, metrics, query and doc ids) are data: escaped in every format.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from ..diffing import QueryDiff, RunDiff
from ..names import one_line
from ..stats.standings import Standings
from .renderers.markdown import markdown_text

__all__ = ["render_diff", "render_standings", "DIFF_VIEWS", "STANDINGS_VIEWS", "ROWS"]

#: the largest drops (and gains) of each metric listed by the text views; every query is in JSON and to_frame()
ROWS = 5

_HEADS = ("", "doc", "grade", "rank A", "rank B", "move")
_WHAT = (("left", "left the top {k}"), ("entered", "entered the top {k}"),
         ("unjudged_entered", "entered, unjudged"), ("unjudged_left", "left, unjudged"), ("moves", "moved most"))


def _number(value: float | None, digits: int = 4, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _rank(value: int | None) -> str:
    return "-" if value is None else str(value)


def _grade(value: float | None) -> str:
    return "unjudged" if value is None else f"{value:g}"


def _move(value: int | None) -> str:
    return "" if value is None else f"{value:+d}"


def _mean_rows(d: RunDiff) -> list[list[str]]:
    return [[m.metric, _number(m.a), _number(m.b), _number(m.delta, signed=True), str(m.improved), str(m.worsened),
             str(m.unchanged), str(m.n)] for m in d.means]


def _mean_heads(d: RunDiff) -> list[str]:
    return ["metric", d.systems[0], d.systems[1], "delta", "rose", "fell", "same", "queries"]


def _extremes(d: RunDiff) -> list[tuple[str, list[list[str]]]]:
    """Per metric, the :data:`ROWS` largest drops then gains: (title, rows of query, a, b, delta)."""
    parts = []
    for c in d.changes:
        rows = list(zip(c.queries, c.a, c.b, c.delta))
        drops = [r for r in rows[:ROWS] if r[3] < 0]
        gains = [r for r in reversed(rows[-ROWS:]) if r[3] > 0]
        if drops or gains:
            parts.append((f"{c.metric}: the largest drops and gains (of {len(rows)} queries)",
                          [[q, _number(a), _number(b), _number(x, signed=True)] for q, a, b, x in (*drops, *gains)]))
    return parts


def _documents(q: QueryDiff, k: int) -> list[list[str]]:
    rows = []
    for kind, title in _WHAT:
        for c in getattr(q, kind):
            rows.append([title.format(k=k), c.doc, _grade(c.grade), _rank(c.rank_a), _rank(c.rank_b), _move(c.move)])
    return rows


def _query_head(q: QueryDiff) -> str:
    return "; ".join(f"{m} {_number(a)} -> {_number(b)} ({_number(b - a, signed=True)})" for m, a, b in q.values)


def _title(d: RunDiff) -> str:
    c = d.conventions
    return (f"diff {d.systems[0]} -> {d.systems[1]}: top {d.k}, ties {c.ties}"
            + (f", depth {c.depth}" if c.depth is not None else "") + (", judged only" if c.judged_only else ""))


def diff_terminal(d: RunDiff) -> str:
    """Plain text (what ``evalbridge diff`` prints)."""
    from tabulate import tabulate

    def table(rows: Sequence[Sequence[str]], heads: Sequence[str]) -> str:
        return tabulate([[one_line(x) for x in r] for r in rows], headers=[one_line(h) for h in heads],
                        tablefmt="simple", disable_numparse=True)

    lines = [one_line(_title(d)), table(_mean_rows(d), _mean_heads(d))]
    if d.empty:
        lines.append("no query changed: the same metric values and the same top k everywhere.")
    for title, rows in _extremes(d):
        lines += ["", one_line(title), table(rows, ["query", d.systems[0], d.systems[1], "delta"])]
    for q in d.queries:
        lines += ["", one_line(f"query {q.query}: {_query_head(q)}")]
        docs = _documents(q, d.k)
        lines.append(table(docs, _HEADS) if docs else "  the same top k (in the same order)")
    lines += ["", *map(one_line, d.provenance)]
    return "\n".join(lines) + "\n"


def _md_table(rows: Sequence[Sequence[str]], heads: Sequence[str]) -> str:
    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(markdown_text(c) for c in cells) + " |"

    return "\n".join([row(heads), "|" + "---|" * len(heads), *map(row, rows)])


def diff_markdown(d: RunDiff) -> str:
    """GitHub Markdown: the same parts as the terminal view."""
    parts = [f"## {markdown_text(_title(d))}", _md_table(_mean_rows(d), _mean_heads(d))]
    if d.empty:
        parts.append("No query changed: the same metric values and the same top k everywhere.")
    for title, rows in _extremes(d):
        parts += [f"### {markdown_text(title)}", _md_table(rows, ["query", *d.systems, "delta"])]
    for q in d.queries:
        parts.append(f"### Query {markdown_text(q.query)}\n\n{markdown_text(_query_head(q))}")
        docs = _documents(q, d.k)
        parts.append(_md_table(docs, _HEADS) if docs else "The same top k, in the same order.")
    parts.append("\n".join(f"- {markdown_text(p)}" for p in d.provenance))
    return "\n\n".join(parts) + "\n"


def diff_json(d: RunDiff) -> str:
    """Everything (:meth:`RunDiff.to_dict`), every query of every metric included."""
    return json.dumps(d.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _html_table(rows: Sequence[Sequence[str]], heads: Sequence[str]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in heads)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def diff_html(d: RunDiff) -> str:
    """An HTML fragment (the notebook view)."""
    parts = [f"<h3>{html.escape(_title(d))}</h3>", _html_table(_mean_rows(d), _mean_heads(d))]
    if d.empty:
        parts.append("<p>No query changed: the same metric values and the same top k everywhere.</p>")
    for title, rows in _extremes(d):
        parts += [f"<h4>{html.escape(title)}</h4>", _html_table(rows, ["query", *d.systems, "delta"])]
    for q in d.queries:
        parts.append(f"<h4>query {html.escape(q.query)}</h4><p>{html.escape(_query_head(q))}</p>")
        docs = _documents(q, d.k)
        parts.append(_html_table(docs, _HEADS) if docs else "<p>The same top k, in the same order.</p>")
    parts.append("".join(f'<p style="font-size: smaller">{html.escape(p)}</p>' for p in d.provenance))
    return '<div class="evalbridge-diff">' + "".join(parts) + "</div>"


#: format name -> renderer of a run diff
DIFF_VIEWS: dict[str, Callable[[RunDiff], str]] = {
    "terminal": diff_terminal, "markdown": diff_markdown, "json": diff_json, "html": diff_html,
}


def render_diff(d: RunDiff, fmt: str = "terminal") -> str:
    """``d`` in the format called ``fmt`` (a key of :data:`DIFF_VIEWS`)."""
    return _view(DIFF_VIEWS, fmt)(d)


def _view(table: dict[str, Callable[[Any], str]], fmt: str) -> Callable[[Any], str]:
    from ..errors import InputError

    if fmt not in table:
        raise InputError(f"unknown format {fmt!r} for this view; choose one of {', '.join(table)}.")
    return table[fmt]


# --------------------------------------------------------------------------- many systems

def _pair_rows(s: Standings) -> list[list[str]]:
    return [[p.metric, p.system, p.other, str(p.wins), str(p.ties), str(p.losses)] for p in s.pairs]


_PAIR_HEADS = ["metric", "system", "against", "wins", "ties", "losses"]


def _hard_rows(s: Standings) -> list[list[str]]:
    return [[h.metric, h.query, _number(h.mean), *(_number(v) for _, v in h.values)] for h in s.hardest]


def _rank_rows(s: Standings) -> list[list[str]]:
    return [[r.metric, *(f"{m:.2f}" for _, m in r.mean_ranks)] for r in s.ranks]


def _standings_parts(s: Standings) -> list[tuple[str, list[list[str]], list[str]]]:
    return [("win / tie / loss of every pair (queries where the system is above / equal to / below the other)",
             _pair_rows(s), _PAIR_HEADS),
            ("the hardest queries (lowest mean over the systems)", _hard_rows(s),
             ["metric", "query", "mean", *s.systems]),
            ("mean rank per query (1 = best; equal values share their places)", _rank_rows(s),
             ["metric", *s.systems])]


def standings_terminal(s: Standings) -> str:
    from tabulate import tabulate

    lines: list[str] = []
    for title, rows, heads in _standings_parts(s):
        lines += [title, tabulate([[one_line(c) for c in r] for r in rows], headers=[one_line(h) for h in heads],
                                  tablefmt="simple", disable_numparse=True), ""]
    return "\n".join(lines)


def standings_markdown(s: Standings) -> str:
    return "\n\n".join(f"### {markdown_text(title)}\n\n{_md_table(rows, heads)}"
                       for title, rows, heads in _standings_parts(s)) + "\n"


def standings_json(s: Standings) -> str:
    return json.dumps(s.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def standings_html(s: Standings) -> str:
    return '<div class="evalbridge-standings">' + "".join(
        f"<h4>{html.escape(title)}</h4>{_html_table(rows, heads)}" for title, rows, heads in _standings_parts(s)
    ) + "</div>"


#: format name -> renderer of standings
STANDINGS_VIEWS: dict[str, Callable[[Standings], str]] = {
    "terminal": standings_terminal, "markdown": standings_markdown, "json": standings_json, "html": standings_html,
}


def render_standings(s: Standings, fmt: str = "terminal") -> str:
    """``s`` in the format called ``fmt`` (a key of :data:`STANDINGS_VIEWS`)."""
    return _view(STANDINGS_VIEWS, fmt)(s)

