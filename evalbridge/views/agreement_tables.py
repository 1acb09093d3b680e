"""The tables of an agreement between two sets of judgements, declared once and written by every output format
that writes tables (:func:`evalbridge.views.formats.show`): text, Markdown, LaTeX, the notebook view.

:class:`~evalbridge.evalsets.agreement.JudgeAgreement` (summary, confusion, per category),
:class:`~evalbridge.evalsets.ranking_agreement.RankingAgreement` (one row per metric) and
:class:`~evalbridge.evalsets.agreement.Agreement` (both) show themselves through the functions here; this module
reads them and never imports them (they are below it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from ..common.parameters import check_choice
from .formats import ReportFormat, show, table_format
from .table import Table, columns, number

__all__ = ["judge_tables", "ranking_tables", "agreement_tables", "render_judges", "render_ranking", "render_both",
           "FORMATS", "render_agreement", "AGREEMENT_SCALE", "ENOUGH_AGREEMENT", "agreement_word"]

#: A JudgeAgreement, a RankingAgreement, an Agreement, as the functions here read them.
AnyAgreement = Any


# -- judge agreement ------------------------------------------------------------------------------------

#: the one scale every kappa and alpha is worded by (Landis & Koch 1977), each word from its lower bound up;
#: 1.0 alone is perfect
AGREEMENT_SCALE: tuple[tuple[float, str], ...] = (
    (-math.inf, "worse than chance"), (0.0, "slight"), (0.2, "fair"), (0.4, "moderate"), (0.6, "substantial"),
    (0.8, "almost perfect"), (1.0, "perfect"))
#: agreement from which either judge should lead to the same decisions (substantial or better on the scale)
ENOUGH_AGREEMENT = 0.6


def agreement_word(value: float) -> str:
    """A kappa's or an alpha's word on :data:`AGREEMENT_SCALE` ("undefined" for nan); 1 to rounding is perfect.

    >>> [agreement_word(v) for v in (1.0, 0.9999, 0.81, 0.6, 0.1, -0.2)]
    ['perfect', 'almost perfect', 'almost perfect', 'substantial', 'slight', 'worse than chance']
    """
    if not math.isfinite(value):
        return "undefined"
    return next(word for bound, word in reversed(AGREEMENT_SCALE) if value >= bound - 1e-12)


def _worded(value: float) -> str:
    """A kappa or an alpha with its word on the one scale (1 is perfect)."""
    return f"{number(value)} ({agreement_word(value)})" if math.isfinite(value) else number(value)


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
             ("Cohen's kappa", _worded(judges.cohen_kappa)),
             ("quadratic-weighted kappa", _worded(judges.weighted_kappa)),
             (f"Krippendorff's alpha ({judges.alpha_level})", _worded(judges.krippendorff_alpha)),
             (f"mean difference ({b} - {a})", "nan" if math.isnan(judges.mean_difference)
              else f"{judges.mean_difference:+.4f} categories"),
             (f"relevant ({a} >= {judges.level_a:g}, {b} >= {judges.level_b:g})",
              f"agreement {number(judges.binary_agreement)}, kappa {number(judges.binary_kappa)}")]
    return rows


def judge_tables(judges: AnyAgreement, fmt: ReportFormat) -> tuple[Table, ...]:
    """The summary (measure, value), the confusion table (rows: ``a``'s categories, columns: ``b``'s) and the
    table per category; the notes under the last."""
    e, heading = fmt.escape, fmt.heading
    a, b = judges.names
    per_grade = [(r["label_a"] if r["label_a"] == r["label_b"] else f"{r['label_a']} / {r['label_b']}",
                  str(r["a"]), str(r["b"]), str(r["both"]), number(r["specific_agreement"]), number(r["kappa"]))
                 for r in judges.per_grade_rows()]
    return (Table(headers=(heading("measure"), heading("value")),
                  rows=tuple((e(name), e(value)) for name, value in _summary_rows(judges)),
                  title=e(f"Agreement of {b} with {a}")),
            Table(headers=(e(f"{a} \\ {b}"), *map(e, judges.labels_b)),
                  rows=tuple((e(label), *map(str, row)) for label, row in zip(judges.labels_a, judges.confusion)),
                  align=columns(1, len(judges.labels_b)),
                  title=e(f"Confusion (rows: {a}, columns: {b})")),
            Table(headers=(heading("category"), e(a), e(b), "both", "specific agreement", "kappa"),
                  rows=tuple((e(label), *cells) for label, *cells in per_grade),
                  align=columns(1, 5), title="Per category", footnotes=tuple(map(e, judges.notes))))


# -- ranking agreement ----------------------------------------------------------------------------------

_NO_RUNS = "no runs given: the ranking agreement needs at least two systems"


def ranking_tables(ranking: AnyAgreement, fmt: ReportFormat) -> tuple[Table, ...]:
    """One row per metric: the two orders of the systems, Kendall tau, tau_ap, significant pairs and the pairs
    that flipped; how significance was decided under it. Without runs: the title and why there is no table."""
    e = fmt.escape
    a, b = ranking.names
    if not ranking.rows:
        return (Table(headers=(), rows=(), title="Ranking agreement", footnotes=(e(_NO_RUNS),)),)
    rows = tuple((e(row.metric), " > ".join(map(e, row.ranking("a"))), " > ".join(map(e, row.ranking("b"))),
                  number(row.kendall_tau), number(row.tau_ap), number(row.tau_ap_symmetric),
                  f"{row.significant_a} / {row.significant_b}",
                  f"{row.count('reversed')} / {row.count('lost')} / {row.count('gained')}",
                  number(row.flipped_share, 2)) for row in ranking.rows)
    return (Table(headers=(fmt.heading("metric"), e(f"ranking under {a}"), e(f"ranking under {b}"), "Kendall tau",
                           e("tau_ap"), e("tau_ap (sym.)"), e(f"significant {a} / {b}"), "reversed / lost / gained",
                           "flipped share"),
                  rows=rows, align=columns(3, 6),
                  title=e(f"Ranking of the systems under {a} and under {b}"), footnotes=(e(ranking.describe()),)),)


# -- both -----------------------------------------------------------------------------------------------

def agreement_tables(agreement: AnyAgreement, fmt: ReportFormat) -> tuple[Table, ...]:
    """The judge agreement's tables, then the ranking agreement's."""
    return (*judge_tables(agreement.judges, fmt), *ranking_tables(agreement.ranking, fmt))


def render_judges(judges: AnyAgreement, fmt: str = "terminal") -> str:
    """A :class:`~evalbridge.evalsets.agreement.JudgeAgreement` in an output format that writes tables."""
    return show(judge_tables(judges, table_format(fmt)), fmt)


def render_ranking(ranking: AnyAgreement, fmt: str = "terminal") -> str:
    """A :class:`~evalbridge.evalsets.ranking_agreement.RankingAgreement` in an output format that writes tables."""
    return show(ranking_tables(ranking, table_format(fmt)), fmt)


def render_both(agreement: AnyAgreement, fmt: str = "terminal") -> str:
    """An :class:`~evalbridge.evalsets.agreement.Agreement` in an output format that writes tables."""
    return show(agreement_tables(agreement, table_format(fmt)), fmt)


#: output format -> an :class:`~evalbridge.evalsets.agreement.Agreement` in it (``Agreement.render(fmt)``)
FORMATS: Mapping[str, Callable[[AnyAgreement], str]] = {
    "text": lambda agreement: render_both(agreement, "terminal"),
    "markdown": lambda agreement: render_both(agreement, "markdown"),
    "json": lambda agreement: str(agreement.to_json()),
}


def render_agreement(agreement: AnyAgreement, fmt: str) -> str:
    """``agreement`` as ``text``, ``markdown`` or ``json``."""
    check_choice(fmt, FORMATS, "format")
    return FORMATS[fmt](agreement)
