"""The decision block, the first thing every report format shows: what a :class:`~evalbridge.decisions.decision.Decision`
says, in the words of the decision vocabulary, as plain sentences (names as given: a format escapes them).

:func:`decision_lines` declares the block once: its heading (:data:`TITLE`) and its lines, which the terminal,
Markdown and HTML formats write as a list (the page folds the caveats and rule on a narrow screen,
:func:`decision_parts`).
"""

from __future__ import annotations

from typing import Any

from .table import number, p_value

__all__ = ["TITLE", "decision_lines", "decision_parts"]

#: the block's heading in every format
TITLE = "Decision"

#: A Decision (read, never imported: this module is below the type it shows).
AnyDecision = Any

#: a verdict's outcome -> how its sentence says it
_SAID = {"better": "better than", "worse": "worse than", "inconclusive": "inconclusive against"}


def _delta(v: Any, digits: int) -> str:
    return (f"Δ {v.delta:+.{digits}f} [{number(v.ci_low, digits)}, {number(v.ci_high, digits)}], "
            f"p adj. {p_value(v.p_adjusted)}")


def _settles(v: Any) -> str:
    if v.queries_needed is not None:
        return f"; {v.queries_needed:,} queries would settle it"
    return "; no difference observed" if v.delta == 0 else "; no number of queries would tell a difference this small"


def _verdicts(decision: AnyDecision, digits: int) -> list[str]:
    """One sentence per system, baseline and outcome: ``splade: better than bm25 on nDCG@10 (Δ +0.2250 [...]), AP
    (...)``; the inconclusive ones with the queries that would settle each."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for v in decision.verdicts:
        extra = _settles(v) if v.outcome == "inconclusive" else ""
        groups.setdefault((v.system, v.outcome, v.baseline), []).append(f"{v.metric} ({_delta(v, digits)}{extra})")
    order = {"better": 0, "worse": 1, "inconclusive": 2}
    return [f"{system}: {_SAID[outcome]} {baseline} on {', '.join(parts)}"
            for (system, outcome, baseline), parts in sorted(groups.items(), key=lambda g: order[g[0][1]])]


def decision_parts(decision: AnyDecision, digits: int = 4) -> tuple[list[str], list[str]]:
    """The block's two parts: what is decided (the verdicts, better, worse, inconclusive, then the gates and each
    failed one) and what it stands on (the caveats, then how significance and the queries needed were decided)."""
    if decision.empty:
        return [], []
    decided = _verdicts(decision, digits)
    if decision.gates is not None:
        decided.append(f"gates: {decision.gates}")
        decided += list(decision.failed)
    grounds = [f"caveat: {c}" for c in decision.caveats]
    grounds += [text for text in (decision.rule, decision.settle) if text]
    return decided, grounds


def decision_lines(decision: AnyDecision, digits: int = 4) -> list[str]:
    """The block's lines, in order (:func:`decision_parts`, one after the other); none when nothing is decided."""
    decided, grounds = decision_parts(decision, digits)
    return decided + grounds
