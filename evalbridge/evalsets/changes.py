"""``what_changed()``: what new judgements changed in a decision: the systems' means, their order, every significance decision, and the system to ship.

The same runs are evaluated with the judgements before and after (new grades merged in, judgements removed), with
the same metrics and settings. Per metric: each system's mean before and after, Kendall's tau and tau_ap between
the two orderings (:mod:`evalbridge.stats.system_order`), and every pair of systems tested under each side
(:func:`evalbridge.evalsets.ranking_agreement.ranking_agreement`: the paired tests of :mod:`evalbridge.stats.paired_tests`, Holm
over the pairs of a metric) with what happened to it (``agree``, ``reversed``, ``lost``, ``gained``, ``neither``).
Then the question the team asks, answered in a line: would we ship the same system? (The best system by the first
metric before and after.)

Example:
    >>> runs = {"x": {"q1": {"a": 2, "b": 1}, "q2": {"c": 2}}, "y": {"q1": {"b": 2, "a": 1}, "q2": {"d": 2}}}
    >>> change = what_changed({"q1": {"a": 1}, "q2": {"c": 1}}, {"q1": {"a": 1, "b": 2}, "q2": {"c": 1, "d": 2}},
    ...                       runs, "nDCG@1")
    >>> change.ship_before, change.ship_after, change.same_ship
    ('x', 'y', False)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..stats.statistics import Statistics, statistics_for
from ..stats.system_order import ranking

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from ..model.settings import Keywords, Settings
    from .ranking_agreement import RankingAgreement

__all__ = ["what_changed", "JudgementChange"]


@dataclass(frozen=True)
class JudgementChange:
    """What the judgements after changed against the judgements before.

    Attributes:
        metric: the metric the ship decision is taken on (the first asked).
        systems: the systems, in the order given.
        ranking: per metric, the means before and after, tau, tau_ap, and every pair's significance under each
            side (:class:`~evalbridge.evalsets.ranking_agreement.RankingAgreement`, sides named ``before`` / ``after``).
        judgements: the number of (query, doc) judgements before and after, and how many grades changed, were
            added or were removed.
        ship_before, ship_after: the best system by ``metric`` under each side (None when the best two tie).
    """

    metric: str
    systems: tuple[str, ...]
    ranking: RankingAgreement
    judgements: Mapping[str, int]
    ship_before: str | None
    ship_after: str | None

    @property
    def same_ship(self) -> bool:
        """True when the same system is best before and after (and neither side ties at the top)."""
        return self.ship_before is not None and self.ship_before == self.ship_after

    @property
    def answer(self) -> str:
        """Would we ship the same system? One line."""
        row = self.ranking[self.metric]
        before = dict(zip(row.systems, row.means_a))
        after = dict(zip(row.systems, row.means_b))

        def said(system: str | None, means: Mapping[str, float]) -> str:
            return "a tie at the top" if system is None else f"{system} ({means[system]:.4f})"

        if self.same_ship:
            best = self.ship_before
            lead = next((p for p in row.pairs if best in (p.system_1, p.system_2) and not p.significant_b), None)
            caveat = "" if lead is None else (f", though its lead over "
                                              f"{p_other(lead, best)} is not significant after")
            return (f"Yes: {said(best, before)} is best on {self.metric} before and {said(best, after)} after"
                    f"{caveat}.")
        return (f"No: on {self.metric} the best system was {said(self.ship_before, before)} before and is "
                f"{said(self.ship_after, after)} after.")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the ship answer, the judgement counts and the ranking agreement (nan as None)."""
        return {"metric": self.metric, "systems": list(self.systems), "ship_before": self.ship_before,
                "ship_after": self.ship_after, "same_ship": self.same_ship, "answer": self.answer,
                "judgements": dict(self.judgements), "ranking": self.ranking.to_dict()}

    def render(self, fmt: str = "terminal") -> str:
        """The section in any format that writes tables (``terminal``, ``markdown``, ``html``...), or ``json``."""
        from ..views.eval_sets import render_change

        return render_change(self, fmt)

    def __str__(self) -> str:
        return self.render("terminal")

    def _repr_html_(self) -> str:
        return self.render("html")

    def to_markdown(self) -> str:
        return self.render("markdown")


def p_other(pair: Any, system: str | None) -> str:
    """The other system of a pair."""
    return str(pair.system_2 if pair.system_1 == system else pair.system_1)


def _best(systems: tuple[str, ...], means: Iterable[float]) -> str | None:
    values = list(means)
    order = ranking(systems, values)
    top = values[systems.index(order[0])]
    if len(order) > 1 and values[systems.index(order[1])] == top or math.isnan(top):
        return None
    return order[0]


def _counts(before: Any, after: Any) -> dict[str, int]:
    changed = added = removed = 0
    for qid in set(before) | set(after):
        a, b = before.get(qid, {}), after.get(qid, {})
        added += sum(d not in a for d in b)
        removed += sum(d not in b for d in a)
        changed += sum(d in b and b[d] != g for d, g in a.items())
    return {"before": before.n_rows, "after": after.n_rows, "changed": changed, "added": added, "removed": removed}


def what_changed(before: Any, after: Any, runs: Mapping[str, Any], metrics: str | Iterable[str] = "nDCG@10", *,
                 statistics: Statistics | None = None, test: str | None = None, alpha: float | None = None,
                 n_resamples: int | None = None, seed: int | None = None, settings: Settings | None = None, **keywords: Unpack[Keywords]) -> JudgementChange:
    """What ``after`` (e.g. :func:`evalbridge.merge_judgements`' output) changed against ``before`` for these runs.

    Args:
        before, after: two sets of judgements of the same eval set (anything :func:`evalbridge.read_qrels` reads).
        runs: system name -> run (two systems or more).
        metrics: the metrics; the first decides which system to ship.
        statistics: the tests (:class:`~evalbridge.Statistics`); ``test``, ``alpha``, ``n_resamples`` and ``seed``
            given replace its fields. Its tests are two-sided and Holm-corrected, without interval: ``sides=1``,
            another correction, ``test='wilcoxon'``, a ``confidence`` or ``ci_method`` away from its default are
            refused, not ignored.
        test, alpha, n_resamples, seed: the significance test of every pair (``t`` or ``randomization``), Holm
            over the pairs of each metric under each side, as :func:`evalbridge.evalsets.ranking_agreement.ranking_agreement`;
            each pair is a later run against an earlier one (delta = later - earlier: system - baseline, the first
            run the baseline of the others, as ``compare``), and each system's delta is after - before.
            tau_ap takes the fuller judgements (after, unless it holds fewer judged pairs) as the truth; the
            footnote and ``ranking.describe()`` say which.
        settings, keywords: how the runs are evaluated, as :func:`evalbridge.evaluate` (the same on both sides).

    Raises:
        InputError: fewer than two runs, a bad test or alpha, unreadable inputs.
    """
    from ..evaluation.evaluating import as_qrels, as_run, evaluate
    from ..model.settings import settings_of
    from .ranking_agreement import USES, WHY, ranking_agreement

    tests = statistics_for("what_changed", statistics, {"test": test, "alpha": alpha, "n_resamples": n_resamples,
                                                        "seed": seed}, uses=USES, why=WHY)
    chosen = settings_of(settings, keywords)
    if not isinstance(runs, Mapping) or len(runs) < 2:
        raise InputError(f"what changed for the decision needs two runs or more, by name; got "
                         f"{len(runs) if isinstance(runs, Mapping) else type(runs).__name__}.",
                         fix='pass runs={"bm25": "run.bm25.txt", "splade": "run.splade.txt"}.')
    from ..io.datasets import with_official

    metrics = with_official(metrics, after, before)[0]  # "official": the measures of the judgements' dataset
    asked = [metrics] if isinstance(metrics, str) else list(metrics)
    if not asked:
        raise InputError("no metric given.", fix='pass e.g. metrics="nDCG@10".')
    sides = [as_qrels(before, ids=chosen.ids), as_qrels(after, ids=chosen.ids)]
    for when, judged in zip(("before", "after"), sides):
        if not judged.n_rows:
            raise InputError(f"the judgements {when} hold no judgement: what changed has nothing to compare.",
                             source=judged.source,
                             fix=f"give the {when} judgements (qrels with one line per judged (query, document)).")
    results: list[dict[str, Any]] = [{}, {}]
    for name, given in runs.items():
        run = as_run(given, ids=chosen.ids, duplicates=chosen.duplicates)
        for side, out in zip(sides, results):
            out[str(name)] = evaluate(side, run, asked, settings=chosen)
    counts = _counts(sides[0], sides[1])
    # tau_ap's truth: the fuller set of judgements (after, unless it holds fewer judged pairs than before)
    agreement = ranking_agreement(results[0], results[1], metrics=asked, names=("before", "after"),
                                  **tests.keywords("test", "alpha", "n_resamples", "seed"),
                                  truth=1 if counts["after"] >= counts["before"] else 0)
    first = agreement.rows[0]
    return JudgementChange(metric=first.metric, systems=first.systems, ranking=agreement,
                           judgements=counts, ship_before=_best(first.systems, first.means_a),
                           ship_after=_best(first.systems, first.means_b))
