"""Prediction-powered evaluation: systems' metrics and differences from a judge's labels of every pair and humans' of a sample.

``eb.ppi(llm_qrels, human_qrels, runs, metrics, baseline=..., unit="query")`` returns a
:class:`PredictionPowered`, data only: for each system and metric the PPI++ estimate of the mean under the human
labels (:mod:`evalbridge.stats.ppi`: the judge's number corrected by the human sample, the judge's weight tuned
for power) with its interval, beside the classical interval of the human sample alone and the judge-only number;
and for each system against the baseline the same for the difference, with its p-value from the same estimator
and the correction named. The sampling unit decides what the items are:

* ``unit="query"``: the humans labelled every pair the judge labelled for a random sample of queries. Each
  query's metric is evaluated by :func:`evalbridge.evaluate` under the judge's labels (every query) and under
  the humans' (the sampled queries); any metric.
* ``unit="pair"``: the humans labelled a random sample of the judged pairs. A metric that is a sum over the
  ranked documents of a weight of the rank times a fixed gain of the grade (:data:`LINEAR`: P@k, DCG) is the sum
  of its pairs' shares, each the metric of its query with that pair judged alone (evaluated by
  :func:`evalbridge.evaluate`, once per grade); the system's mean is the mean of ``N / Q`` times the shares over
  the ``N`` judged pairs of ``Q`` queries. Other metrics are refused with the reason, and the sum of the shares is
  checked against the judge's evaluation of each query (settings under which it is not a sum are refused).

:meth:`PredictionPowered.plan` says how many human labels a target interval width or difference needs with and
without the judge (and what they cost); :meth:`PredictionPowered.next_to_label` which items to label next, and
:meth:`PredictionPowered.write_batch` writes them as a judging batch (:mod:`evalbridge.io.judging`) that
``merge_judgements`` reads back. Intervals assume the human sample was drawn at random: items chosen by priority
are not a random sample (the plan's footnote says so).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError, warn
from ..common.json_data import json_ready
from ..common.parameters import Interval, OneOf, check_parameters, rule_table
from ..model.settings import Settings, settings_of
from ..stats.paired_tests import CORRECTIONS
from ..stats.statistics import Statistics, statistics_for
from ..views.table import Shown
from .ppi_items import LINEAR, UNITS, Samples, check_labels, item_values, pairs_of, where

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from typing_extensions import Unpack

    from ..metrics.requests import MetricsArg
    from ..model.settings import Keywords

__all__ = ["ppi", "PredictionPowered", "PPIRow", "LabelPlan", "PlanRow", "PPI_PARAMETERS", "PLAN_PARAMETERS",
           "NEXT_PARAMETERS", "UNITS", "LINEAR", "TEST"]

#: the test behind every p-value of an estimate
TEST = "prediction-powered z-test"

PPI_PARAMETERS = rule_table(
    OneOf("unit", tuple(UNITS), default="query"),
    Interval("confidence", float, 0, 1, closed="neither", default=0.95, fix="a probability, e.g. 0.95."),
    Interval("alpha", float, 0, 1, closed="neither", default=0.05,
             fix="the significance level is a probability, e.g. 0.05 or 0.01."),
    OneOf("correction", tuple(CORRECTIONS), default="holm"),
)
PLAN_PARAMETERS = rule_table(
    Interval("width", float, 0, None, closed="neither", default=None,
             fix="the full width of the interval wanted, in the metric's units, e.g. 0.05."),
    Interval("difference", float, 0, None, closed="neither", default=None,
             fix="the difference of means to detect, in the metric's units, e.g. 0.02."),
    Interval("power", float, 0, 1, closed="neither", default=0.8, fix="a probability, e.g. 0.8."),
    Interval("cost_human", float, 0, None, closed="left", default=None, fix="the cost of one human label, e.g. 1.0."),
    Interval("cost_llm", float, 0, None, closed="left", default=None, fix="the cost of one judge label, e.g. 0.01."),
)
#: :meth:`PredictionPowered.next_to_label`'s (and ``write_batch``'s) count and order
NEXT_PARAMETERS = rule_table(
    Interval("count", int, 1, None, closed="left", fix="how many items to label next, e.g. 100."),
    OneOf("by", ("judge", "systems"), default="judge",
          fix="label next where the judge is least reliable (judge) or where the systems differ most (systems)."),
)
#: the fewest labelled items with a value other than 0 an estimate rests on without a warning (a normal interval
#: from fewer covers less than its level: bench/README.md, the coverage of P@10 sampled by pair)
MIN_COUNTING = 30


@dataclass(frozen=True)
class PPIRow:
    """One estimate: a system's mean of a metric (``kind="mean"``) or its difference against the baseline
    (``kind="difference"``, Δ = system - baseline).

    Attributes:
        estimate, low, high, se: the prediction-powered estimate, its interval at the confidence asked, its
            standard error; ``weight``: the judge's power-tuned weight (0: the human sample alone, 1: plain PPI).
        p: the two-sided p-value of "the mean (the difference) is 0" from the same estimator (:data:`TEST`);
            ``p_adjusted`` / ``significant``: after the correction, at alpha (differences only; None for means).
        classical, classical_low, classical_high, classical_p: the human sample alone (Student's t).
        judge_only: the judge's number: the mean over every item under the judge's labels.
    """

    system: str
    metric: str
    kind: str
    baseline: str | None
    estimate: float
    low: float
    high: float
    se: float
    weight: float
    p: float
    p_adjusted: float | None
    significant: bool | None
    classical: float
    classical_low: float
    classical_high: float
    classical_p: float
    judge_only: float

    @property
    def delta(self) -> float:
        """Δ = system - baseline (the estimate of a difference)."""
        return self.estimate


@dataclass(frozen=True)
class PredictionPowered(Shown):
    """Systems' metrics and differences estimated from a judge's labels and a human sample (module docstring).

    Attributes:
        unit: ``query`` or ``pair`` (:data:`UNITS`); ``items``: how many the judge labelled, ``labelled``: how many
            the humans did; ``queries``: the queries evaluated.
        metrics, systems, baseline: what was measured, of which runs, against which (None: no differences).
        confidence, alpha, correction: the intervals' level, the differences' significance level and correction.
        rows: every estimate: each system's mean per metric, then each difference.
        planned: the human labels a target needs, asked with the estimates (:meth:`with_plan`), shown after them
            (None: no plan asked).
    """

    unit: str
    metrics: tuple[str, ...]
    systems: tuple[str, ...]
    baseline: str | None
    items: int
    labelled: int
    queries: int
    confidence: float
    alpha: float
    correction: str
    rows: tuple[PPIRow, ...]
    samples: Samples = field(repr=False, compare=False)
    planned: LabelPlan | None = None

    @property
    def test(self) -> str:
        """The test and correction every "significant" names."""
        return f"{TEST}, two-sided, {CORRECTIONS[self.correction].title}"

    def row(self, system: str, metric: str, *, difference: bool = False) -> PPIRow:
        """The estimate of ``system``'s ``metric`` (its difference against the baseline with ``difference``)."""
        kind = "difference" if difference else "mean"
        for r in self.rows:
            if (r.system, r.metric, r.kind) == (system, metric, kind):
                return r
        raise KeyError(f"no {kind} of {system!r} on {metric!r}")

    def to_frame(self) -> pd.DataFrame:
        """One row per estimate: system, metric, kind (mean / difference), baseline, estimate, low, high and the
        rest of :class:`PPIRow`, in that order."""
        import pandas as pd

        names = list(PPIRow.__dataclass_fields__)
        return pd.DataFrame([[getattr(r, n) for n in names] for r in self.rows], columns=names)

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready (nan and infinity as None); the plan asked (:meth:`with_plan`) last."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__
                if name not in ("rows", "samples", "planned")}
        return json_ready({**data, "test": self.test,
                           "rows": [{n: getattr(r, n) for n in PPIRow.__dataclass_fields__} for r in self.rows],
                           **({"plan": self.planned.to_dict()} if self.planned is not None else {})})

    def table(self, fmt: str = "terminal") -> str:
        """The estimates (then the plan asked) as text: ``json`` or any format that writes tables
        (:mod:`evalbridge.views.ppi`)."""
        from ..views.ppi import render_ppi

        return render_ppi(self, fmt)

    def plan(self, *, width: float | None = None, difference: float | None = None, power: float = 0.8,
             cost_human: float | None = None, cost_llm: float | None = None) -> LabelPlan:
        """How many human labels (queries or pairs, the unit's) each estimate needs, with the judge and without.

        Args:
            width: the full width of the interval wanted (each mean and difference), in the metric's units.
            difference: the difference to detect at ``power`` with the test at ``alpha`` (differences only);
                neither: each difference's own estimate.
            cost_human, cost_llm: the cost of one human label and of one judge label (the judge labels every
                pair of the items: the unit's items, each query's judged pairs).
        """
        from ..stats.ppi import labels_needed, z_quantile

        import numpy as np

        given = {"width": width, "difference": difference, "power": power, "cost_human": cost_human,
                 "cost_llm": cost_llm}
        chosen = {**given, **check_parameters(PLAN_PARAMETERS, {k: v for k, v in given.items() if v is not None})}
        if width is not None and difference is not None:
            raise InputError("plan for a target width or a target difference, not both.",
                             fix="e.g. result.plan(width=0.05) or result.plan(difference=0.02).")
        if width is None and self.baseline is None:
            raise InputError("without a baseline there is no difference to plan for.",
                             fix="give a target width (plan(width=0.05)), or a baseline to eb.ppi.")
        s = self.samples
        judge_labels = len(s.pairs)
        rows = []
        z = z_quantile(self.confidence)
        for i, r in enumerate(self.rows):
            if width is None and r.kind == "mean":
                continue
            if width is not None:
                target, goal = (width / (2 * z)) ** 2, width
            else:
                goal = abs(r.estimate) if difference is None else difference
                z_power = z_quantile(2 * chosen["power"] - 1)   # the one-sided quantile at power
                target = (goal / (z_quantile(1 - self.alpha) + z_power)) ** 2 if goal > 0 else 0.0
            y, f_all = s.human[i], s.judge[i]
            f = f_all[s.labelled]
            var_y = float(np.var(y))
            var_f = float(np.var(np.concatenate([f, f_all]), ddof=1))
            cov = float(np.mean((y - y.mean()) * (f - f.mean())))
            if target <= 0:
                with_judge = alone = None
            else:
                with_judge = labels_needed(target, var_y=var_y, cov=cov, var_f=var_f, total=self.items)
                alone = labels_needed(target, var_y=var_y, total=self.items)
            rows.append(PlanRow(
                system=r.system, metric=r.metric, kind=r.kind, baseline=r.baseline, target=goal,
                with_judge=with_judge, human_only=alone,
                cost_with_judge=None if with_judge is None or chosen["cost_human"] is None else
                with_judge * chosen["cost_human"] + judge_labels * (chosen["cost_llm"] or 0.0),
                cost_human_only=None if alone is None or chosen["cost_human"] is None else alone * chosen["cost_human"]))
        return LabelPlan(unit=self.unit, goal="width" if width is not None else "difference", items=self.items,
                         labelled=self.labelled, judge_labels=judge_labels, confidence=self.confidence,
                         alpha=self.alpha, power=chosen["power"], cost_human=chosen["cost_human"],
                         cost_llm=chosen["cost_llm"], rows=tuple(rows))

    def with_plan(self, *, width: float | None = None, difference: float | None = None, power: float = 0.8,
                  cost_human: float | None = None, cost_llm: float | None = None) -> PredictionPowered:
        """These estimates carrying :meth:`plan` (its keywords), shown after them and under ``plan`` in
        ``to_dict()``: what ``evalbridge ppi --plan-width W`` and a config's ``ppi: {plan_width: W}`` show."""
        from dataclasses import replace

        return replace(self, planned=self.plan(width=width, difference=difference, power=power,
                                               cost_human=cost_human, cost_llm=cost_llm))

    def next_to_label(self, count: int, *, by: str = "judge") -> list[tuple[str, str | None]]:
        """The ``count`` unlabelled items to label next (``(query, doc)``; doc None: a whole query), most useful
        first: ``by="judge"`` where the judge is least reliable (the spread of the human grades the labelled pairs
        got for each judge grade, averaged over an item's pairs), ``by="systems"`` where the systems differ most
        (the largest judge-measured difference against the baseline, in standard deviations, over every metric;
        without a baseline the spread of the systems' values). A pair whose grade can change no estimate (no run
        ranks it within a metric's cut-off) comes last. Ties: in the order of the items."""
        import numpy as np

        check_parameters(NEXT_PARAMETERS, {"count": count, "by": by})
        s = self.samples
        score = (self._judge_doubt() if by == "judge" else self._systems_spread()) * s.reach
        open_items = np.flatnonzero(~s.labelled)
        order = open_items[np.argsort(-score[open_items], kind="stable")][:count]
        return [s.items[i] for i in order.tolist()]

    def _judge_doubt(self) -> np.ndarray:
        import numpy as np

        s = self.samples
        seen = ~np.isnan(s.pair_human)
        doubt = np.zeros(len(s.pair_judge))
        for grade in np.unique(s.pair_judge):
            at = s.pair_judge == grade
            humans = s.pair_human[at & seen]
            doubt[at] = float(np.var(humans)) if len(humans) > 1 else float(np.nanvar(s.pair_human[seen]))
        total = np.bincount(s.pair_item, weights=doubt, minlength=len(s.items))
        count = np.bincount(s.pair_item, minlength=len(s.items))
        return np.asarray(np.divide(total, count, out=np.zeros(len(s.items)), where=count > 0))

    def _systems_spread(self) -> np.ndarray:
        import numpy as np

        s = self.samples
        kind = "difference" if self.baseline is not None else "mean"
        chosen = [i for i, r in enumerate(self.rows) if r.kind == kind]
        values = s.judge[chosen]
        if kind == "mean":                       # the spread of the systems per metric, summed over the metrics
            by_metric = [values[[j for j, i in enumerate(chosen) if self.rows[i].metric == m]] for m in self.metrics]
            return np.asarray(sum(np.std(v, axis=0) for v in by_metric))
        sd = values.std(axis=1, keepdims=True)
        return np.asarray(np.max(np.abs(values) / np.where(sd > 0, sd, 1.0), axis=0))

    def write_batch(self, path: str | Path, count: int, *, by: str = "judge", queries: Any = None,
                    documents: Any = None) -> Path:
        """Write :meth:`next_to_label` as a judging batch (:func:`evalbridge.io.judging.write_pairs`): the chosen
        pairs, or every judged pair of the chosen queries (``unit="query"``: a query is labelled whole)."""
        from ..io.judging import write_pairs

        chosen = self.next_to_label(count, by=by)
        s = self.samples
        if self.unit == "pair":
            pairs = [(q, str(d)) for q, d in chosen]
        else:
            wanted = {q for q, _ in chosen}
            pairs = [(q, d) for q, d in s.pairs if q in wanted]
        return write_pairs(pairs, path, queries=queries, documents=documents)


@dataclass(frozen=True)
class PlanRow:
    """The human labels one estimate needs: ``with_judge`` (PPI++, the judge labelling every item) and
    ``human_only`` (the human sample alone); None: more than the items there are. Costs None without costs."""

    system: str
    metric: str
    kind: str
    baseline: str | None
    target: float
    with_judge: int | None
    human_only: int | None
    cost_with_judge: float | None
    cost_human_only: float | None


@dataclass(frozen=True)
class LabelPlan(Shown):
    """How many human labels a target width (``goal="width"``) or difference (``goal="difference"``, detected
    at ``power`` by the test at ``alpha``) needs, per estimate, with the judge and without (normal approximation,
    the variances and the judge's correlation with the humans as measured on the labelled sample)."""

    unit: str
    goal: str
    items: int
    labelled: int
    judge_labels: int
    confidence: float
    alpha: float
    power: float
    cost_human: float | None
    cost_llm: float | None
    rows: tuple[PlanRow, ...]

    def to_frame(self) -> pd.DataFrame:
        """One row per estimate: system, metric, kind, baseline, target, with_judge, human_only and the costs."""
        import pandas as pd

        names = list(PlanRow.__dataclass_fields__)
        return pd.DataFrame([[getattr(r, n) for n in names] for r in self.rows], columns=names)

    def to_dict(self) -> dict[str, Any]:
        """Every number, JSON-ready."""
        data = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "rows"}
        return json_ready({**data, "rows": [{n: getattr(r, n) for n in PlanRow.__dataclass_fields__}
                                            for r in self.rows]})

    def table(self, fmt: str = "terminal") -> str:
        """The plan as text: ``json`` or any format that writes tables (:mod:`evalbridge.views.ppi`)."""
        from ..views.ppi import render_plan

        return render_plan(self, fmt)


def _estimate(y: Any, f: Any, f_all: Any, confidence: float) -> tuple[Any, Any, float]:
    from ..stats.ppi import classical_mean, ppi_mean

    return ppi_mean(y, f, f_all, confidence=confidence), classical_mean(y, confidence=confidence), float(f_all.mean())


def _warn_if_few(keys: list[tuple[str, str, str]], human: list[Any], judge: list[Any], labelled: Any, unit: str,
                 confidence: float) -> None:
    """Warn when an estimate rests on fewer than :data:`MIN_COUNTING` labelled items whose value is not 0."""
    import numpy as np

    counting = [int(np.count_nonzero((y != 0) | (f[labelled] != 0))) for y, f in zip(human, judge)]
    worst = int(np.argmin(counting))
    if counting[worst] >= MIN_COUNTING:
        return
    system, metric, kind = keys[worst]
    units = "queries" if unit == "query" else "pairs"
    warn((
        f"{system} {metric} ({kind}): only {counting[worst]} of the {int(labelled.sum())} human-labelled {units} "
        f"have a value other than 0 under either labels: a normal interval from so few may cover less than its "
        f"{100 * confidence:g}% (on the LLMJudge labels, P@10 sampled by 200 random pairs, about a dozen that count, "
        f"covered 90%). Label more {units}" + ("" if unit == "query" else ", or sample by query") + "."))


def ppi(llm_qrels: Any, human_qrels: Any, runs: Mapping[str, Any], metrics: MetricsArg, *,
        baseline: str | None = None, unit: str = "query", scale: tuple[float, float] | None = None,
        statistics: Statistics | None = None, confidence: float | None = None, alpha: float | None = None,
        correction: str | None = None, settings: Settings | None = None,
        **keywords: Unpack[Keywords]) -> PredictionPowered:
    """Each system's ``metrics`` (and each difference against ``baseline``) estimated from the judge's labels of
    every pair (``llm_qrels``) and the humans' of a random sample (``human_qrels``), PPI++ (module docstring).

    Args:
        llm_qrels, human_qrels: anything :func:`evalbridge.read_qrels` reads; the human pairs a subset of the
            judge's, on one grade scale (the humans' range, or ``scale=(low, high)``).
        runs: system name -> run (anything :func:`evalbridge.evaluate` reads), in display order.
        metrics: one metric or several (``evaluate``'s ``metrics``); sampled by pair, :data:`LINEAR` only.
        baseline: the system every other is compared with (Δ = system - baseline); None: means only.
        unit: ``query`` (the humans labelled sampled queries whole) or ``pair`` (sampled pairs).
        statistics: the intervals' confidence, and the differences' alpha and correction
            (:class:`~evalbridge.Statistics`); ``confidence``, ``alpha`` and ``correction`` given replace its fields.
            Its intervals and tests are closed-form and two-sided: a ``test``, ``sides``, ``n_resamples``, ``seed``
            or ``ci_method`` away from its default is refused, not ignored.
        confidence: the intervals' level; alpha / correction: the differences' significance (the correction
            over every (system, metric) difference, :data:`~evalbridge.stats.paired_tests.CORRECTIONS`).
        settings, keywords: ``evaluate``'s settings (a ``Settings`` whole, or its fields as keywords).

    Raises:
        InputError: human labels for pairs the judge never labelled, grades outside the scale, a query labelled
            in part (by query), fewer than two labelled items, a metric that is not a sum over pairs (by pair), an
            unknown baseline or unit.
    """
    import numpy as np

    from ..evaluation.evaluating import as_qrels
    from ..metrics.requests import metric_requests

    tests = statistics_for("ppi", statistics, {"confidence": confidence, "alpha": alpha, "correction": correction},
                           uses={"confidence": None, "alpha": None, "correction": None, "sides": (2,)},
                           why="its intervals and tests are PPI++'s closed-form normal ones, two-sided, without "
                               "resampling")
    chosen = check_parameters(PPI_PARAMETERS, {"unit": unit, **tests.keywords("confidence", "alpha", "correction")})
    unit, confidence = chosen["unit"], chosen["confidence"]
    options = settings_of(settings, keywords)
    judge = as_qrels(llm_qrels, ids=options.ids)
    human = as_qrels(human_qrels, ids=options.ids)
    if not isinstance(runs, Mapping) or not runs:
        raise InputError("runs must map system names to runs.", fix="e.g. runs={'bm25': run_a, 'dense': run_b}.")
    runs = {str(name): run for name, run in runs.items()}
    systems = tuple(runs)
    if baseline is not None and baseline not in systems:
        raise InputError(f"baseline {baseline!r} is not one of the systems: {', '.join(map(repr, systems))}.",
                         fix="name one of the runs given.")
    if not pairs_of(human):
        raise InputError(f"the human labels{where(human)} hold no pair.", fix="give the human-labelled sample.")
    check_labels(judge, human, unit, scale)
    from ..io.datasets import with_official

    requests = metric_requests(with_official(metrics, human_qrels, llm_qrels)[0])  # "official": the dataset's
    labels = tuple(r.label for r in requests)
    queries = list(judge)
    items, labelled, pairs, rows_of, reach = item_values(judge, human, runs, requests, options, unit)
    n = int(labelled.sum())
    if n < 2:
        raise InputError(f"the human sample holds {n} {'query' if unit == 'query' else 'pair'}: an interval needs "
                         f"at least two.", fix="label at least two (a few dozen for a useful interval).")
    keys = [(s, m, "mean") for s in systems for m in labels]
    if baseline is not None:
        keys += [(s, m, "difference") for s in systems if s != baseline for m in labels]
    human_rows, judge_rows, results = [], [], []
    for s, m, kind in keys:
        y, f_all = rows_of[s, m]
        if kind == "difference" and baseline is not None:
            y, f_all = y - rows_of[baseline, m][0], f_all - rows_of[baseline, m][1]
        human_rows.append(y)
        judge_rows.append(f_all)
        results.append(_estimate(y, f_all[labelled], f_all, confidence))
    _warn_if_few(keys, human_rows, judge_rows, labelled, unit, confidence)
    differences = [i for i, k in enumerate(keys) if k[2] == "difference"]
    adjusted = dict(zip(differences, CORRECTIONS[chosen["correction"]].adjust([results[i][0].p for i in differences])))
    rows = tuple(PPIRow(system=s, metric=m, kind=kind, baseline=baseline if kind == "difference" else None,
                        estimate=e.estimate, low=e.low, high=e.high, se=e.se, weight=e.weight, p=e.p,
                        p_adjusted=adjusted.get(i), significant=None if i not in adjusted else adjusted[i] < chosen["alpha"],
                        classical=c.estimate, classical_low=c.low, classical_high=c.high, classical_p=c.p,
                        judge_only=only)
                 for i, ((s, m, kind), (e, c, only)) in enumerate(zip(keys, results)))
    judge_grades, human_grades = pairs_of(judge), pairs_of(human)
    item_of = {q: i for i, q in enumerate(queries)} if unit == "query" else None
    samples = Samples(
        human=human_rows, judge=np.array(judge_rows), items=tuple(items), labelled=labelled,
        pair_item=np.array([item_of[q] for q, _ in pairs] if item_of is not None else np.arange(len(pairs)),
                           dtype=np.int64),
        pair_judge=np.array([judge_grades[p] for p in pairs]),
        pair_human=np.array([human_grades.get(p, math.nan) for p in pairs]), pairs=tuple(pairs), reach=reach)
    return PredictionPowered(unit=unit, metrics=labels, systems=systems, baseline=baseline, items=len(items),
                             labelled=n, queries=len(queries), confidence=confidence, alpha=chosen["alpha"],
                             correction=chosen["correction"], rows=rows, samples=samples)
