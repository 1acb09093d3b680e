"""What a test collection's diagnosis shows: each finding, and one sentence of what it means for a decision.

:func:`meanings` reads a :class:`~evalbridge.diagnostics.Diagnosis` (data only) and says, per finding, what
the user should do with it; :func:`render_text` lays the numbers and those sentences out as text.
"""

from __future__ import annotations

import math
from typing import Any

from ..names import one_line

__all__ = ["meanings", "render_text", "SECTIONS"]

#: the findings, in the order shown
SECTIONS = ("discriminative_power", "swap", "pool_bias", "saturation", "judged", "agreement")
#: a share of judged documents below this at the metric's depth is called a hole
JUDGED_ENOUGH = 0.9
#: a share of saturated or tied queries above this is called saturation
SATURATED = 0.2


def _pct(value: float) -> str:
    return "nan" if not math.isfinite(value) else f"{100 * value:.1f}%"


def _power(d: Any) -> str:
    p = d.discriminative_power
    head = (f"{p.significant} of {p.pairs} system pairs ({_pct(p.share)}) differ significantly on {d.metric} "
            f"({p.test} test, {p.correction} correction, alpha {p.alpha:g}): ")
    if p.share >= 0.5:
        return head + "these queries separate most systems, so a pair found not significant is close indeed."
    return head + ("most pairs cannot be told apart with these queries: add queries before trusting the order "
                   "of close systems.")


def _swap(d: Any) -> str:
    s = d.swap
    head = f"Over {s.trials} random splits into halves of {s.half} queries, {_pct(s.rate)} of pair orders swapped: "
    if s.stable_delta is None:
        return head + "even the largest differences swap more than 5% of the time, so no order of these systems is settled."
    if s.stable_delta == 0:
        return head + "every difference, however small, kept its sign in at least 95% of the splits."
    return head + (f"differences of {s.stable_delta:g} and more kept their sign in at least 95% of the splits; a "
                   f"smaller difference should not decide which system to ship.")


def _bias(d: Any) -> str:
    b = d.pool_bias
    worst = b.largest
    if worst is None or worst.unique_relevant == 0 or worst.delta == 0:
        return (f"No run found a relevant document (grade >= {b.level:g}) in its first {b.depth} that no other run "
                f"found: a new run like these is judged as fairly as they are.")
    return (f"Without the {worst.unique_relevant} relevant documents only it found (first {b.depth}), {one_line(worst.system)} "
            f"falls from {worst.score:.4f} to {worst.score_without:.4f} (rank {worst.rank} -> {worst.rank_without}): "
            f"a new system unlike the pooled ones may be under-scored by about that much until its documents are judged.")


def _saturation(d: Any) -> str:
    s = d.saturation
    if not s.tied:
        return f"No query of {s.queries} is scored alike by every system: every query helps tell the systems apart."
    head = (f"Of {s.queries} queries, every system answers {len(s.perfect)} perfectly and scores {len(s.tied)} "
            f"alike: ")
    if s.queries and len(s.tied) / s.queries > SATURATED:
        return head + "too many queries tell no system apart; add harder queries before comparing close systems."
    return head + "those queries do not count in any comparison; the others carry every decision."


def _judged(d: Any) -> str:
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


def _agreement(d: Any) -> str:
    a = d.agreement
    if a is None:
        return ""
    kappa = a.cohen_kappa
    head = f"The two sets of judgements agree with Cohen's kappa {kappa:.3f} on {a.shared_pairs} pairs: "
    if math.isfinite(kappa) and kappa >= 0.6:
        return head + "substantial agreement; either set should lead to the same decisions."
    return head + "the decision may depend on who judged; check the ranking of systems under both before shipping."


_SENTENCES = {"discriminative_power": _power, "swap": _swap, "pool_bias": _bias, "saturation": _saturation,
              "judged": _judged, "agreement": _agreement}


def meanings(d: Any) -> dict[str, str]:
    """Finding -> one sentence of what it means for the user's decision (the agreement only when given)."""
    out = {name: _SENTENCES[name](d) for name in SECTIONS}
    return {name: text for name, text in out.items() if text}


def render_text(d: Any) -> str:
    """The diagnosis as plain text: the systems' means, each run's pool bias, then the meaning of each finding."""
    names = [one_line(name) for name in d.systems]
    width = max(len("system"), *map(len, names))
    lines = [f"Diagnosis of {d.queries} queries, {len(d.systems)} systems, {d.metric}", ""]
    lines.append(f"{'system':<{width}}  {'mean':>8}  {'unique rel':>10}  {'without':>8}  {'rank':>9}")
    for name, mean, bias in zip(names, d.means, d.pool_bias.runs):
        lines.append(f"{name:<{width}}  {mean:8.4f}  {bias.unique_relevant:>10}  {bias.score_without:8.4f}  "
                     f"{f'{bias.rank} -> {bias.rank_without}':>9}")
    lines.append("")
    lines.extend(f"- {text}" for text in meanings(d).values())
    return "\n".join(lines)
