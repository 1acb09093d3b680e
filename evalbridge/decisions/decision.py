"""What a report's numbers decide: each system against the baseline, per metric, as better, worse or
inconclusive (and, when inconclusive, the queries that would settle it), the gates that failed, and the caveats of
the eval set that apply to every number (the judged share and pool bias of a diagnosis, queries without a relevant
judgement, warnings, where the labels come from).

:func:`decide` reads a :class:`~evalbridge.reports.report.Report`'s parts; :mod:`evalbridge.views.decision` says it
in words, the first block of every report format.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..stats.paired_tests import CORRECTIONS, TESTS
from .power import queries_needed

__all__ = ["Verdict", "Decision", "decide", "POWER"]

#: the power a comparison's "queries needed" aims at (a power analysis in the report uses its own)
POWER = 0.8
#: the power analysis's tests; a comparison decided by another test counts its queries by the paired t-test
_POWER_TESTS = ("t", "randomization")


@dataclass(frozen=True)
class Verdict:
    """One system against one baseline on one metric.

    Attributes:
        system, baseline, metric: what was compared (the metric's label).
        outcome: ``better`` or ``worse`` (significant, by the sign of delta) or ``inconclusive``.
        delta, ci_low, ci_high: Δ = system - baseline and its confidence interval.
        p_adjusted: the corrected p-value that decided.
        queries_needed: for an inconclusive comparison, the fewest queries that would detect a difference of the
            observed size with the power aimed at (None: decided, or no number of queries would).
    """

    system: str
    baseline: str
    metric: str
    outcome: str
    delta: float
    ci_low: float
    ci_high: float
    p_adjusted: float
    queries_needed: int | None = None


@dataclass(frozen=True)
class Decision:
    """What a report decides.

    Attributes:
        verdicts: one :class:`Verdict` per comparison with the baseline, in the comparison's order.
        rule: how significance was decided (test, sides, correction, level) and what the intervals are.
        settle: how the queries needed were counted (power, test, sides, level); '' without inconclusive verdicts.
        gates: the gates' summary (:func:`~evalbridge.decisions.gates.gate_summary`); None without gates.
        failed: the reason of each gate that failed.
        caveats: the eval set's caveats, each a sentence.
    """

    verdicts: tuple[Verdict, ...] = ()
    rule: str = ""
    settle: str = ""
    gates: str | None = None
    failed: tuple[str, ...] = ()
    caveats: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing to decide: no comparison, no gate, no caveat."""
        return not (self.verdicts or self.gates is not None or self.caveats)

    def to_dict(self) -> dict[str, Any]:
        return {"verdicts": [asdict(v) for v in self.verdicts], "rule": self.rule, "settle": self.settle,
                "gates": self.gates, "failed": list(self.failed), "caveats": list(self.caveats)}


def _outcome(row: Any) -> str:
    return "inconclusive" if not row.significant else "better" if row.delta > 0 else "worse"


def _needed(row: Any, comparison: Any, power: Any) -> int | None:
    """The queries that would settle an inconclusive row: the report's power analysis's count, else the count for
    the observed Δ with the spread of its per-query differences (sd = Δ / d_z)."""
    found = power.get(row.system, row.metric, row.baseline) if power is not None else None
    if found is not None:
        return found.queries_needed  # type: ignore[no-any-return]
    if not (math.isfinite(row.delta) and math.isfinite(row.effect_size)) or row.delta == 0 or row.effect_size == 0:
        return None
    test = comparison.test if comparison.test in _POWER_TESTS else "t"
    return queries_needed(abs(row.delta), sd=abs(row.delta / row.effect_size), test=test, alpha=comparison.alpha,
                          power=POWER, sides=2)


def _rule(comparison: Any) -> str:
    return (f"Δ = system - baseline with its {comparison.confidence:.0%} {comparison.ci_method} bootstrap interval; "
            f"significant: two-sided {TESTS[comparison.test].title}, {CORRECTIONS[comparison.correction].title} over "
            f"{len(comparison.rows)} comparisons, alpha {comparison.alpha:g}")


def _settle(comparison: Any, power: Any) -> str:
    if power is not None:
        sides = "two-sided" if power.sides == 2 else "one-sided"
        return (f"queries needed: to detect the observed Δ with power {power.power:.0%}, {sides} "
                f"{TESTS[power.test].title} at alpha {power.alpha:g} (the power analysis)")
    test = comparison.test if comparison.test in _POWER_TESTS else "t"
    return (f"queries needed: to detect the observed Δ with power {POWER:.0%}, two-sided {TESTS[test].title} at "
            f"alpha {comparison.alpha:g}, uncorrected")


def _share(value: float) -> str:
    return f"{100 * value:.1f}%"


def _diagnosis_caveats(found: Any) -> list[str]:
    """The judged share and the pool bias of a diagnosis (of several metrics: the first's; the judged share is the
    same for every metric, the pool bias the first metric's)."""
    d = found.diagnoses[0]
    out = []
    ranked = [(rank, share) for rank, share in enumerate(d.judged.share, 1) if share is not None]
    if ranked:
        (_, first), (deepest, last) = ranked[0], ranked[-1]
        out.append(f"judged share: {_share(first)} of the documents ranked first are judged, {_share(last)} at rank "
                   f"{deepest} ({_share(1 - last)} unjudged there, counted as not relevant)")
    worst = d.pool_bias.largest
    if worst is not None and worst.unique_relevant and worst.delta:
        out.append(f"pool bias: without the {worst.unique_relevant} relevant documents only it found (first "
                   f"{d.pool_bias.depth}), {worst.system} falls from {worst.score:.4f} to {worst.score_without:.4f}: "
                   "a system unlike the pooled ones may be under-scored by about that much")
    return out


def _provenance_caveats(results: Mapping[str, Any]) -> list[str]:
    out = []
    for system, res in results.items():
        p = res.provenance
        if p.without_relevant:
            out.append(f"{system}: {len(p.without_relevant)} of the queries have no relevant judgement ("
                       f"{'left out' if p.settings.no_relevant == 'drop' else 'scored 0'})")
        if p.removed_unjudged:
            out.append(f"{system}: {p.removed_unjudged} unjudged documents left out (judged only)")
        if p.warnings:
            out.append(f"{system}: {len(p.warnings)} warning{'s' if len(p.warnings) != 1 else ''} about the input "
                       "(see the provenance)")
    return out


def _labels(provenance: Mapping[str, Any]) -> list[str]:
    """Where the labels come from, when the provenance says (a config's qrels input), and what its grades mean when
    the source says (a dataset's documented grades)."""
    inputs = provenance.get("inputs")
    qrels = inputs.get("qrels") if isinstance(inputs, Mapping) else None
    if not isinstance(qrels, Mapping):
        return []
    where = qrels.get("path") or qrels.get("table")
    if not where:
        return []
    said = f"the labels are the judgements in {where}"
    grades = qrels.get("grades")
    if isinstance(grades, Mapping) and grades:
        said += f"; its grades mean: {' '.join(f'{g} = {m}' for g, m in grades.items())}"
    return [said]


def decide(*, results: Mapping[str, Any], comparison: Any = None, gates: Sequence[Any] = (),
           analyses: Mapping[str, Any] | None = None, provenance: Mapping[str, Any] | None = None) -> Decision:
    """What a report made of these parts decides (see the module docstring)."""
    from .gates import gate_summary

    analyses = analyses or {}
    power = analyses.get("power")
    verdicts: list[Verdict] = []
    rule = settle = ""
    if comparison is not None:
        for row in comparison.rows:
            outcome = _outcome(row)
            verdicts.append(Verdict(row.system, row.baseline, row.metric, outcome, row.delta, row.ci_low, row.ci_high,
                                    row.p_adjusted,
                                    _needed(row, comparison, power) if outcome == "inconclusive" else None))
        rule = _rule(comparison)
        settle = _settle(comparison, power) if any(v.outcome == "inconclusive" for v in verdicts) else ""
    official = (provenance or {}).get("official")  # the measures "official" took, in the Python door's words
    caveats = (_diagnosis_caveats(analyses["diagnose"]) if "diagnose" in analyses else []) \
        + _provenance_caveats(results) + _labels(provenance or {}) + [str(n) for n in official or ()]
    return Decision(tuple(verdicts), rule, settle, gate_summary(gates) if gates else None,
                    tuple(g.reason for g in gates if not g.passed), tuple(caveats))
