"""The tables of an agreement between two sets of judgements, declared once and shown as text, Markdown and HTML.

:class:`~evalbridge.stats.agreement.JudgeAgreement` (summary, confusion, per category),
:class:`~evalbridge.stats.ranking_agreement.RankingAgreement` (one row per metric) and
:class:`~evalbridge.stats.agreement.Agreement` (both) show themselves through the functions here; this module
reads them and never imports them (they are below it).
"""

from __future__ import annotations

import math
from html import escape
from collections.abc import Callable, Mapping
from typing import Any

from ..parameters import check_choice
from .table import number

__all__ = ["judges_text", "judges_markdown", "judges_html", "ranking_text", "ranking_markdown", "ranking_html",
           "agreement_text", "agreement_markdown", "agreement_html", "FORMATS", "render_agreement"]

#: A JudgeAgreement, a RankingAgreement, an Agreement, as the functions here read them.
AnyAgreement = Any


def _tabulate(rows: Any, headers: Any, tablefmt: str, colalign: Any = None) -> str:
    from tabulate import tabulate

    return str(tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True, colalign=colalign))


# -- judge agreement ------------------------------------------------------------------------------------

def _summary_rows(judges: AnyAgreement) -> list[tuple[str, str]]:
    a, b = judges.names
    rows = [("pairs judged by both", f"{judges.shared_pairs} ({judges.shared_queries} queries)"),
            (f"pairs only in {a} / only in {b}", f"{judges.only_in_a} / {judges.only_in_b} (not compared)")]
    if judges.queries_only_in_a or judges.queries_only_in_b:
        rows.append((f"queries only in {a} / only in {b}",
                     f"{len(judges.queries_only_in_a)} / {len(judges.queries_only_in_b)}"))
    scale = judges.scale_a if judges.scale_a == judges.scale_b else f"{a}: {judges.scale_a}; {b}: {judges.scale_b}"
    rows += [("categories", scale),
             ("exact agreement", number(judges.observed_agreement)),
             ("Cohen's kappa", number(judges.cohen_kappa)),
             ("quadratic-weighted kappa", number(judges.weighted_kappa)),
             (f"Krippendorff's alpha ({judges.alpha_level})", number(judges.krippendorff_alpha)),
             (f"mean difference ({b} - {a})", "nan" if math.isnan(judges.mean_difference)
              else f"{judges.mean_difference:+.4f} categories"),
             (f"relevant ({a} >= {judges.level_a:g}, {b} >= {judges.level_b:g})",
              f"agreement {number(judges.binary_agreement)}, kappa {number(judges.binary_kappa)}")]
    return rows


def _judge_tables(judges: AnyAgreement, fmt: str) -> list[tuple[str, str]]:
    a, b = judges.names
    confusion = [[label, *row] for label, row in zip(judges.labels_a, judges.confusion)]
    per_grade = [[r["label_a"] if r["label_a"] == r["label_b"] else f"{r['label_a']} / {r['label_b']}",
                  r["a"], r["b"], r["both"], number(r["specific_agreement"]), number(r["kappa"])]
                 for r in judges.per_grade_rows()]
    right = ("right",) * max(len(judges.labels_b), 5)
    return [(f"Confusion (rows: {a}, columns: {b})",
             _tabulate(confusion, [f"{a} \\ {b}", *judges.labels_b], fmt, ("left", *right[:len(judges.labels_b)]))),
            ("Per category", _tabulate(per_grade, ["category", a, b, "both", "specific agreement", "kappa"], fmt,
                                       ("left", *right[:5])))]


def judges_markdown(judges: AnyAgreement) -> str:
    """A Markdown section: the summary, the confusion table, the per-category table, the notes."""
    a, b = judges.names
    parts = [f"### Agreement of {b} with {a}", _tabulate(_summary_rows(judges), ["", ""], "github")]
    for title, table in _judge_tables(judges, "github"):
        parts += [f"**{title}**", table]
    parts += [f"- {note}" for note in judges.notes]
    return "\n\n".join(parts) + "\n"


def judges_text(judges: AnyAgreement) -> str:
    """Plain text: the summary, the confusion table, the per-category table, the notes."""
    a, b = judges.names
    parts = [f"Agreement of {b} with {a}", _tabulate(_summary_rows(judges), (), "plain")]
    for title, table in _judge_tables(judges, "simple"):
        parts += [f"{title}\n{table}"]
    parts += [f"note: {note}" for note in judges.notes]
    return "\n\n".join(parts)


def judges_html(judges: AnyAgreement) -> str:
    """The notebook view: the summary, the confusion table, the per-category table, the notes."""
    a, b = judges.names
    parts = [f"<h4>Agreement of {escape(b)} with {escape(a)}</h4>", _tabulate(_summary_rows(judges), (), "html")]
    for title, table in _judge_tables(judges, "html"):
        parts.append(f"<p><b>{escape(title)}</b></p>{table}")
    parts += [f"<p>{escape(note)}</p>" for note in judges.notes]
    return "\n".join(parts)


# -- ranking agreement ----------------------------------------------------------------------------------

_NO_RUNS = "no runs given: the ranking agreement needs at least two systems"


def _ranking_table(ranking: AnyAgreement, fmt: str) -> str:
    a, b = ranking.names
    rows = [[row.metric, " > ".join(row.ranking("a")), " > ".join(row.ranking("b")),
             number(row.kendall_tau), number(row.tau_ap), number(row.tau_ap_symmetric),
             f"{row.significant_a} / {row.significant_b}",
             f"{row.count('reversed')} / {row.count('lost')} / {row.count('gained')}",
             number(row.flipped_share, 2)] for row in ranking.rows]
    headers = ["metric", f"ranking under {a}", f"ranking under {b}", "Kendall tau", "tau_ap", "tau_ap (sym.)",
               f"significant {a} / {b}", "reversed / lost / gained", "flipped share"]
    return _tabulate(rows, headers, fmt, ("left", "left", "left", *("right",) * 6))


def ranking_markdown(ranking: AnyAgreement) -> str:
    """A Markdown section: one row per metric, then how significance was decided."""
    a, b = ranking.names
    if not ranking.rows:
        return f"### Ranking agreement\n\n{_NO_RUNS}\n"
    return f"### Ranking of the systems under {a} and under {b}\n\n{_ranking_table(ranking, 'github')}\n\n" \
           f"{ranking.describe()}\n"


def ranking_text(ranking: AnyAgreement) -> str:
    """Plain text: one row per metric, then how significance was decided."""
    a, b = ranking.names
    if not ranking.rows:
        return f"Ranking agreement: {_NO_RUNS}"
    return f"Ranking of the systems under {a} and under {b}\n\n{_ranking_table(ranking, 'simple')}\n" \
           f"{ranking.describe()}"


def ranking_html(ranking: AnyAgreement) -> str:
    """The notebook view: one row per metric, then how significance was decided."""
    if not ranking.rows:
        return f"<p>{escape(_NO_RUNS)}</p>"
    return f"{_ranking_table(ranking, 'html')}<p>{escape(ranking.describe())}</p>"


# -- both -----------------------------------------------------------------------------------------------

def agreement_text(agreement: AnyAgreement) -> str:
    return f"{judges_text(agreement.judges)}\n\n{ranking_text(agreement.ranking)}"


def agreement_markdown(agreement: AnyAgreement) -> str:
    a, b = agreement.judges.names
    return f"## Agreement between the judgements {a} and {b}\n\n{judges_markdown(agreement.judges)}\n" \
           f"{ranking_markdown(agreement.ranking)}"


def agreement_html(agreement: AnyAgreement) -> str:
    return f"{judges_html(agreement.judges)}\n{ranking_html(agreement.ranking)}"


#: output format -> an :class:`~evalbridge.stats.agreement.Agreement` in it (``Agreement.render(fmt)``)
FORMATS: Mapping[str, Callable[[AnyAgreement], str]] = {
    "text": agreement_text, "markdown": agreement_markdown, "json": lambda agreement: str(agreement.to_json()),
}


def render_agreement(agreement: AnyAgreement, fmt: str) -> str:
    """``agreement`` as ``text``, ``markdown`` or ``json``."""
    check_choice(fmt, FORMATS, "format")
    return FORMATS[fmt](agreement)
