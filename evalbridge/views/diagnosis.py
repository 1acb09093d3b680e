"""What a test collection's diagnosis shows: its tables in every format that writes tables, and one sentence per finding.

:func:`meanings` reads a :class:`~evalbridge.evalsets.diagnostics.Diagnosis` (data only) and says, per finding, what the
user should do with it; :func:`diagnosis_tables` declares its tables (the systems with their pool bias and, with a
second set of judgements, their mean under it; the swap rate by the size of the difference; each finding and its
meaning), written by every output format that writes tables (:func:`evalbridge.views.formats.show`); JSON is its
``to_dict()`` with the meanings. Names (systems, metric) are escaped by the format.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .agreement_tables import ENOUGH_AGREEMENT, agreement_word
from .formats import ReportFormat, show, table_format
from .power_view import DECIDABLE, TEST_TITLES
from .table import Table, number
from ..common.json_data import json_text

__all__ = ["meanings", "diagnosis_tables", "render_diagnosis", "SECTIONS", "TITLES", "SAME_ORDER"]

#: the findings, in the order shown
SECTIONS = ("discriminative_power", "swap", "pool_bias", "saturation", "judged", "agreement", "order")
#: how the findings table names each
TITLES = {"discriminative_power": "discriminative power", "swap": "swap rate", "pool_bias": "pool bias",
          "saturation": "saturation", "judged": "judged share", "agreement": "judge agreement",
          "order": "system order under both judgements"}
#: a share of judged documents below this at the metric's depth is called a hole
JUDGED_ENOUGH = 0.9
#: a share of saturated or tied queries above this is called saturation
SATURATED = 0.2
#: Kendall's tau (and tau_AP) from which two orders of systems are called the same (Voorhees 2000's 0.9)
SAME_ORDER = 0.9

#: A Diagnosis (read, never imported: this module is below the type it shows).
AnyDiagnosis = Any


def _pct(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{100 * value:.1f}%"


def _power(d: AnyDiagnosis) -> str:
    p = d.discriminative_power
    head = (f"{p.significant} of {p.pairs} system pairs ({_pct(p.share)}) differ significantly on {d.metric} "
            f"(two-sided {p.test} test, {p.correction} correction over the {p.pairs} pairs, alpha {p.alpha:g}): ")
    if p.share >= 0.5:
        return head + "these queries separate most systems, so a pair found not significant is close indeed."
    return head + ("most pairs cannot be told apart with these queries: add queries before trusting the order "
                   "of close systems.")


def _swap(d: AnyDiagnosis) -> str:
    s = d.swap
    head = f"Over {s.trials} random splits into halves of {s.half} queries, {_pct(s.rate)} of pair orders swapped: "
    if s.stable_delta is None:
        return head + ("even the largest differences swap more than 5% of the time between halves, so no order of "
                       f"these systems is settled by half the queries{_decidable(d)}")
    if s.stable_delta == 0:
        return head + f"every difference, however small, kept its sign in at least 95% of the splits{_decidable(d)}"
    return head + (f"differences of {s.stable_delta:g} and more kept their sign in at least 95% of the splits (of "
                   f"half the queries each){_decidable(d)}")


def _decidable(d: AnyDiagnosis) -> str:
    """The decision threshold the swap rate is read against: power's, over every query."""
    if not math.isfinite(d.detectable):
        return "."
    test = d.discriminative_power.test
    return (f"; with all {d.queries} queries, {DECIDABLE} is {number(d.detectable)} (power 80%, two-sided "
            f"{TEST_TITLES.get(test, 'paired t-test')} at {d.discriminative_power.alpha:g}, the median over the "
            f"pairs): a smaller difference should not decide which system to ship.")


def _bias(d: AnyDiagnosis) -> str:
    b = d.pool_bias
    worst = b.largest
    if worst is None or worst.unique_relevant == 0 or worst.delta == 0:
        return (f"No run found a relevant document (grade >= {b.level:g}) in its first {b.depth} that no other run "
                f"found: a new run like these is judged as fairly as they are.")
    return (f"Without the {worst.unique_relevant} relevant documents only it found (first {b.depth}), {worst.system} "
            f"falls from {worst.score:.4f} to {worst.score_without:.4f} (rank {worst.rank} -> {worst.rank_without}): "
            f"a new system unlike the pooled ones may be under-scored by about that much until its documents are judged.")


def _saturation(d: AnyDiagnosis) -> str:
    s = d.saturation
    if not s.tied:
        return f"No query of {s.queries} is scored alike by every system: every query helps tell the systems apart."
    head = (f"Of {s.queries} queries, every system answers {len(s.perfect)} perfectly and scores {len(s.tied)} "
            f"alike: ")
    if s.queries and len(s.tied) / s.queries > SATURATED:
        return head + "too many queries tell no system apart; add harder queries before comparing close systems."
    return head + "those queries do not count in any comparison; the others carry every decision."


def _judged(d: AnyDiagnosis) -> str:
    j = d.judged
    ranked = [(r, share) for r, share in enumerate(j.share, 1) if share is not None]
    if not ranked:
        return "No document was ranked, so nothing can be said of the judged share."
    (_, first), (deepest, last) = ranked[0], ranked[-1]
    head = f"{_pct(first)} of the documents ranked first are judged, {_pct(last)} at rank {deepest}: "
    if last < JUDGED_ENOUGH:
        return head + ("unjudged documents count as not relevant, so a system ranking unjudged documents is "
                       "under-scored; judge deeper, or compare with judged_only or bpref.")
    return head + "the metric reads judged documents almost only, so holes in the judgements barely move it."


def _agreement(d: AnyDiagnosis) -> str:
    a = d.agreement
    if a is None:
        return ""
    kappa = a.cohen_kappa
    head = (f"The two sets of judgements agree with Cohen's kappa {kappa:.3f} on {a.shared_pairs} pairs "
            f"({agreement_word(kappa)} agreement, 1 being perfect): ")
    if math.isfinite(kappa) and kappa >= ENOUGH_AGREEMENT:
        return head + "either set should lead to the same decisions."
    return head + "the decision may depend on who judged; check the ranking of systems under both before shipping."


def _best(systems: tuple[str, ...], means: tuple[float, ...]) -> str | None:
    """The one system with the highest mean (None: the best two tie, or no mean)."""
    ranked = sorted((m, s) for s, m in zip(systems, means) if math.isfinite(m))
    return None if not ranked or (len(ranked) > 1 and ranked[-1][0] == ranked[-2][0]) else ranked[-1][1]


def _order(d: AnyDiagnosis) -> str:
    o = d.order
    if o is None:
        return ""
    if not (math.isfinite(o.kendall_tau) and math.isfinite(o.tau_ap)):
        return ("Under one of the two sets of judgements every system has the same mean, so their orders cannot be "
                "compared: the decision rests on the other set alone.")
    head = (f"Ordered by their means under each set of judgements, the {len(d.systems)} systems have Kendall's tau "
            f"{number(o.kendall_tau, 3)} and tau_AP {number(o.tau_ap, 3)} (which weighs the top of the order most): ")
    if o.kendall_tau >= SAME_ORDER and o.tau_ap >= SAME_ORDER:
        return head + "the two sets order the systems alike, so the decision does not depend on which set is used."
    first, second = _best(d.systems, d.means), _best(d.systems, o.means_b)
    if first is not None and first == second:
        return head + (f"both put {first} first, so the choice of the best system stands, but the order of the "
                       f"others depends on who judged.")
    return head + (f"the best system differs ({first or 'a tie at the top'} under the first, {second or 'a tie at the top'} "
                   f"under the second): resolve the judges' disagreements before deciding which system to ship.")


def _found_bias(d: AnyDiagnosis) -> str:
    worst = d.pool_bias.largest
    if worst is None or worst.unique_relevant == 0 or worst.delta == 0:
        return "no run loses anything without its own relevant documents"
    return f"{worst.system} loses {number(-worst.delta)} (rank {worst.rank} -> {worst.rank_without})"


def _found_judged(d: AnyDiagnosis) -> str:
    ranked = [(r, share) for r, share in enumerate(d.judged.share, 1) if share is not None]
    return "nothing ranked" if not ranked else \
        f"{_pct(ranked[0][1])} at rank 1, {_pct(ranked[-1][1])} at rank {ranked[-1][0]}"


#: finding -> its numbers in a few words (the findings table)
_FOUND: dict[str, Callable[[AnyDiagnosis], str]] = {
    "discriminative_power": lambda d: (f"{d.discriminative_power.significant} of {d.discriminative_power.pairs} "
                                       f"pairs ({_pct(d.discriminative_power.share)})"),
    "swap": lambda d: (f"{_pct(d.swap.rate)} swapped; stable from "
                       f"{'no difference' if d.swap.stable_delta is None else f'{d.swap.stable_delta:g}'}"),
    "pool_bias": _found_bias,
    "saturation": lambda d: (f"{len(d.saturation.perfect)} perfect, {len(d.saturation.tied)} tied of "
                             f"{d.saturation.queries} queries"),
    "judged": _found_judged,
    "agreement": lambda d: f"Cohen's kappa {number(d.agreement.cohen_kappa, 3)} on {d.agreement.shared_pairs} pairs",
    "order": lambda d: f"Kendall's tau {number(d.order.kendall_tau, 3)}, tau_AP {number(d.order.tau_ap, 3)}",
}

_SENTENCES = {"discriminative_power": _power, "swap": _swap, "pool_bias": _bias, "saturation": _saturation,
              "judged": _judged, "agreement": _agreement, "order": _order}


def meanings(d: AnyDiagnosis) -> dict[str, str]:
    """Finding -> one sentence of what it means for the user's decision (the agreement and the order only when a
    second set of judgements was given); names as given (a format escapes them)."""
    out = {name: _SENTENCES[name](d) for name in SECTIONS}
    return {name: text for name, text in out.items() if text}


def _right(fmt: ReportFormat, left: int, right: int) -> tuple[str, ...]:
    return ("left",) * left + ("right",) * right if fmt.typeset else ()


def diagnosis_tables(d: AnyDiagnosis, fmt: ReportFormat, digits: int = 4) -> tuple[Table, ...]:
    """The tables of a diagnosis (``d.diagnoses``: one per metric), as text of ``fmt``: the systems, the swap rate by
    difference, the findings; for several metrics the systems of all in one table with a metric column, then each
    metric's swap rate and findings."""
    found = d.diagnoses
    if len(found) == 1:
        return _tables(found[0], fmt, digits)
    e = fmt.escape
    each = [_tables(one, fmt, digits, metric=True) for one in found]
    first = each[0][0]
    systems = Table(headers=(fmt.heading("metric"), *first.headers),
                    rows=tuple((e(one.metric), *row) for one, tables in zip(found, each) for row in tables[0].rows),
                    align=("left", *first.align) if first.align else (),
                    title=e(f"Diagnosis of {len(found)} metrics, {len(found[0].systems)} systems"),
                    footnotes=first.footnotes)
    return (systems, *(table for tables in each for table in tables[1:]))


def _tables(d: AnyDiagnosis, fmt: ReportFormat, digits: int, *, metric: bool = False) -> tuple[Table, ...]:
    """One metric's tables (``metric``: each title names it, as a table of several metrics' diagnoses shows)."""
    of = f" ({d.metric})" if metric else ""
    e = fmt.escape
    b = d.pool_bias
    under_b = () if d.order is None else ("mean (second judgements)",)
    rows = tuple((e(name), number(mean, digits), *((number(d.order.means_b[i], digits),) if d.order else ()),
                  str(bias.unique_relevant), number(bias.score_without, digits), e(f"{bias.rank} -> {bias.rank_without}"))
                 for i, (name, mean, bias) in enumerate(zip(d.systems, d.means, b.runs)))
    systems = Table(
        headers=(fmt.heading("system"), "mean", *under_b, "unique relevant", "mean without", e("rank -> without")),
        rows=rows, align=_right(fmt, 1, 4 + len(under_b)),
        title=e(f"Diagnosis of {d.queries} queries, {len(d.systems)} systems, {d.metric}"),
        footnotes=(e(f"unique relevant: the relevant documents (grade >= {b.level:g}) in the run's first {b.depth} "
                     f"that no other run has there; without: its mean and rank with them removed from the "
                     f"judgements."),))
    s = d.swap
    swaps = Table(
        headers=("difference in one half", "comparisons", "swaps", "rate"),
        rows=tuple((e(f"[{x.low:g}, {x.high:g})"), str(x.comparisons), str(x.swaps), e(_pct(x.rate))) for x in s.bins),
        align=_right(fmt, 1, 3),
        title=e(f"Swap rate by the difference in one half{of} ({s.trials} splits into halves of {s.half} queries, "
                f"seed {s.seed})"))
    findings = Table(headers=(fmt.heading("finding"), fmt.heading("found")),
                     rows=tuple((e(TITLES[name]), e(_FOUND[name](d))) for name in meanings(d)),
                     align=_right(fmt, 2, 0), title=e(f"What each finding means for the decision{of}"),
                     footnotes=tuple(e(f"{TITLES[name]}: {text}") for name, text in meanings(d).items()))
    return (systems, *((swaps,) if s.bins else ()), findings)


def render_diagnosis(d: AnyDiagnosis, fmt: str = "terminal") -> str:
    """``d`` as text: ``json`` (every number, and each finding's meaning), or any format that writes tables."""
    if fmt == "json":
        return json_text(diagnosis_data(d))
    return show(diagnosis_tables(d, table_format(fmt)), fmt)


def diagnosis_data(d: AnyDiagnosis) -> Any:
    """The JSON of a diagnosis, each finding's meaning beside its numbers (several metrics: ``metrics`` and one
    such object per metric in ``diagnoses``)."""
    found = d.diagnoses
    if len(found) == 1:
        return {**d.to_dict(), "meanings": meanings(d)}
    return {"metrics": [one.metric for one in found],
            "diagnoses": [{**one.to_dict(), "meanings": meanings(one)} for one in found]}
