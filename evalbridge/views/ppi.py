"""What a :class:`~evalbridge.evalsets.prediction_powered.PredictionPowered` and its ``LabelPlan`` show, as tables.

:func:`ppi_tables` declares two tables: the systems' means (the prediction-powered estimate and interval beside
the human sample's interval and the judge-only number, and how much narrower the interval is), then the
differences against the baseline in the comparison's vocabulary (Δ = system - baseline, its interval, p, the
corrected p and whether it is significant, the test and correction named under the table). :func:`plan_tables`
declares the human labels each estimate needs with the judge and without. Every output format that writes
tables writes them (:func:`evalbridge.views.formats.show`); JSON is ``to_dict()``. Names are escaped by the format.
"""

from __future__ import annotations

from typing import Any

from ..common.json_data import json_text
from .formats import aligned, show, table_format
from .table import Table, number, p_value

__all__ = ["ppi_tables", "plan_tables", "render_ppi", "render_plan"]

#: A PredictionPowered / LabelPlan (read, never imported: this module is below the types it shows).
AnyResult = Any


def _interval(low: float, high: float, digits: int) -> str:
    return f"[{number(low, digits)}, {number(high, digits)}]"


def _narrower(r: Any) -> str:
    classical = r.classical_high - r.classical_low
    return number((r.high - r.low) / classical, 2) if classical > 0 else "nan"


def ppi_tables(result: AnyResult, fmt: Any, digits: int = 4) -> tuple[Table, ...]:
    """The means and (with a baseline) the differences of ``result`` as tables of ``fmt``."""
    e = fmt.escape
    level = f"{100 * result.confidence:g}%"
    units = "queries" if result.unit == "query" else "pairs"
    sample = (f"{result.labelled} of {result.items} {units} labelled by humans, every one by the judge "
              f"({result.queries} queries)")
    means = [r for r in result.rows if r.kind == "mean"]
    tables = [Table(
        headers=(fmt.heading("system"), fmt.heading("metric"), "estimate", f"{level} interval", "human only",
                 f"{level} interval, human only", "judge only", "width ratio", "judge weight"),
        rows=tuple((e(r.system), e(r.metric), number(r.estimate, digits), _interval(r.low, r.high, digits),
                    number(r.classical, digits), _interval(r.classical_low, r.classical_high, digits),
                    number(r.judge_only, digits), _narrower(r), number(r.weight, 2)) for r in means),
        align=aligned(fmt, 2, 7),
        title=e(f"Prediction-powered estimates (PPI++): {sample}"),
        footnotes=(e("estimate: the judge's mean corrected by the human sample, the judge's weight tuned for power "
                     "(0: the human sample alone); human only: Student's t on the human sample; judge only: the "
                     "judge's labels alone, uncorrected; width ratio: the interval's width over the human-only "
                     "one's (below 1: what the judge's labels bought)."),))]
    differences = [r for r in result.rows if r.kind == "difference"]
    if differences:
        tables.append(Table(
            headers=(fmt.heading("system"), fmt.heading("baseline"), fmt.heading("metric"), "Δ", f"{level} interval",
                     "p", "p corrected", "significant", "Δ human only", "p human only", "Δ judge only"),
            rows=tuple((e(r.system), e(str(r.baseline)), e(r.metric), number(r.estimate, digits),
                        _interval(r.low, r.high, digits), p_value(r.p), p_value(r.p_adjusted),
                        "yes" if r.significant else "no", number(r.classical, digits), p_value(r.classical_p),
                        number(r.judge_only, digits)) for r in differences),
            align=aligned(fmt, 3, 8),
            title=e(f"Differences against the baseline (Δ = system - baseline), {sample}"),
            footnotes=(e(f"significant: {result.test} p below alpha = {result.alpha:g}, over the "
                         f"{len(differences)} differences; human only: paired Student's t on the human sample."),)))
    return tuple(tables)


def plan_tables(plan: AnyResult, fmt: Any, digits: int = 4) -> tuple[Table, ...]:
    """The human labels each estimate of ``plan`` needs, with the judge and without, as a table of ``fmt``."""
    e = fmt.escape
    units = "queries" if plan.unit == "query" else "pairs"
    goal = (f"an interval {100 * plan.confidence:g}% no wider than the target" if plan.goal == "width" else
            f"detecting the target difference with power {plan.power:g} at alpha {plan.alpha:g}")
    costs = plan.cost_human is not None

    def count(n: int | None) -> str:
        return f"more than the {plan.items} there are" if n is None else str(n)

    rows = tuple((e(r.system), e(r.metric), r.kind, number(r.target, digits), count(r.with_judge),
                  count(r.human_only)) + ((number(r.cost_with_judge, 2), number(r.cost_human_only, 2)) if costs
                                           else ()) for r in plan.rows)
    headers = (fmt.heading("system"), fmt.heading("metric"), "estimate", "target", f"human {units}, with the judge",
               f"human {units}, human only") + (("cost, with the judge", "cost, human only") if costs else ())
    return (Table(
        headers=headers, rows=rows, align=aligned(fmt, 3, len(headers) - 3),
        title=e(f"Human labels needed for {goal} ({plan.labelled} labelled so far)"),
        footnotes=(e("With the judge: PPI++ with the judge labelling every item, its correlation with the humans as "
                     "measured on the labelled sample (normal approximation). Items chosen by priority "
                     "(next_to_label) are not a random sample: the intervals assume the humans' items were drawn at "
                     "random.") + (e(f" Costs: {plan.cost_human:g} per human label, {plan.cost_llm or 0:g} per judge "
                                     f"label ({plan.judge_labels} judge labels).") if costs else ""),)),)


def render_ppi(result: AnyResult, fmt: str = "terminal") -> str:
    """``result`` as text: ``json`` (its ``to_dict()``) or any format that writes tables (the plan it carries
    after the estimates)."""
    if fmt == "json":
        return json_text(result.to_dict())
    shown = show(ppi_tables(result, table_format(fmt)), fmt)
    return shown if result.planned is None else shown + "\n" + render_plan(result.planned, fmt)


def render_plan(plan: AnyResult, fmt: str = "terminal") -> str:
    """``plan`` as text: ``json`` (its ``to_dict()``) or any format that writes tables."""
    if fmt == "json":
        return json_text(plan.to_dict())
    return show(plan_tables(plan, table_format(fmt)), fmt)
