"""Quality gates: thresholds on mean metric values that a CI job can fail on.

A gate is a metric and an expression::

    expression := OP ( NUMBER | "baseline" [ ("+" | "-") NUMBER ] )
    OP         := ">=" | ">" | "<=" | "<" | "=="

``"recall@5": ">= 0.80"`` needs mean R@5 of at least 0.80; ``"ndcg@10": ">= baseline - 0.01"``
needs nDCG@10 within 0.01 of the baseline system's. A metric may carry several
expressions (a list), and may be named by its label (``"precision@5": ">= 0.5"`` when the metrics
were ``{"precision@5": "P@5"}``) or any spelling. The key may name one system, ``"dense: ndcg@10"``; otherwise the
gate applies to every system except the baseline (every system when there is none).
Values are compared with a slack of 1e-12 so that a mean printed as 0.8000 passes ``>= 0.8``.

Example:
    >>> gate = parse_gate("ndcg@10", ">= baseline - 0.01")
    >>> result = evaluate_gate(gate, "dense", value=0.495, baseline_value=0.5)
    >>> result.passed, result.threshold
    (True, 0.49)
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Callable

from ..errors import InputError
from ..metrics.spec import Metric, parse_metric

__all__ = ["Gate", "GateResult", "parse_gate", "parse_gates", "evaluate_gate", "check_gates", "OPERATORS"]

#: operator spelling -> comparison (value, threshold) -> bool
OPERATORS: Mapping[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}
#: how the 1e-12 slack is applied, per operator: favour passing on rounding noise
_SLACK = {">=": 1, ">": 0, "<=": -1, "<": 0, "==": 0}
EPSILON = 1e-12

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_EXPRESSION = re.compile(rf"\s*(?P<op>>=|<=|==|>|<)\s*(?:(?P<base>baseline)\s*(?:(?P<sign>[+-])\s*"
                         rf"(?P<offset>{_NUMBER}))?|(?P<number>{_NUMBER}))\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Gate:
    """One threshold on one metric.

    Attributes:
        metric: the metric (canonical string via ``str``), or the label of a metric asked as written.
        op: one of :data:`OPERATORS`.
        value: the absolute threshold, or the offset added to the baseline's value.
        relative: True when the threshold is ``baseline + value``.
        system: the one system the gate applies to, or None for every system under test.
        text: the expression as written.
    """

    metric: Metric | str
    op: str
    value: float
    relative: bool = False
    system: str | None = None
    text: str = ""

    def threshold(self, baseline_value: float | None = None) -> float:
        """The number the metric is compared with."""
        if not self.relative:
            return self.value
        if baseline_value is None:
            raise InputError(f"gate {self.metric} {self.text!r} is relative to the baseline, but there is none.",
                             fix="set comparison.baseline in the config, or write an absolute threshold.")
        return baseline_value + self.value

    def __str__(self) -> str:
        return f"{self.system + ': ' if self.system else ''}{self.metric} {self.text}"


@dataclass(frozen=True)
class GateResult:
    """A gate applied to one system; ``label`` names its metric as the reports do (the metric's label,
    else the spelling asked; default: the gate's metric)."""

    gate: Gate
    system: str
    value: float
    threshold: float
    passed: bool
    label: str = ""

    @property
    def metric(self) -> str:
        """The metric's name in the reports: :attr:`label`, else the gate's metric."""
        return self.label or str(self.gate.metric)

    @property
    def reason(self) -> str:
        """One line: what was measured against what."""
        status = "passed" if self.passed else "FAILED"
        return (f"gate {status}: {self.system} {self.metric} = {self.value:.4f}, needs "
                f"{self.gate.op} {self.threshold:.6g} ({self.gate.text.strip()})")

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "metric": self.metric, "expression": self.gate.text,
                "value": self.value, "threshold": self.threshold, "passed": self.passed}


def parse_gate(metric: str | Metric, expression: str, *, system: str | None = None,
               labels: Iterable[str] = ()) -> Gate:
    """Parse one gate, e.g. ``parse_gate("recall@5", ">= 0.80")``; ``metric`` may be one of ``labels``
    (the labels of the metrics asked), kept as written.

    Raises:
        InputError: the expression does not follow the grammar in the module docstring.
        MetricSpecError: the metric string is neither a label nor a metric.
    """
    spec = metric.strip() if isinstance(metric, str) and metric.strip() in set(labels) else parse_metric(metric)
    match = _EXPRESSION.fullmatch(str(expression)) if isinstance(expression, (str, int, float)) else None
    if match is None:
        raise InputError(f"cannot read gate {expression!r} for {spec}; expected an operator and a number or "
                         f"'baseline', e.g. '>= 0.80' or '>= baseline - 0.01'.",
                         fix="quote the expression in YAML and start it with one of " + ", ".join(OPERATORS) + ".")
    if match["base"]:
        offset = float(match["offset"] or 0.0) * (-1 if match["sign"] == "-" else 1)
        return Gate(spec, match["op"], offset, True, system, str(expression))
    return Gate(spec, match["op"], float(match["number"]), False, system, str(expression))


def parse_gates(gates: Mapping[str, str | Iterable[str]], *, labels: Iterable[str] = ()) -> list[Gate]:
    """Parse a ``{metric: expression or [expressions]}`` mapping; a key ``"system: metric"`` targets one system;
    a metric may be one of ``labels`` (see :func:`parse_gate`).

    >>> [str(g) for g in parse_gates({"recall@5": ">= 0.8", "dense: ndcg@10": [">= baseline", "<= 1"]})]
    ['R@5 >= 0.8', 'dense: nDCG@10 >= baseline', 'dense: nDCG@10 <= 1']
    """
    if not isinstance(gates, Mapping):
        raise InputError(f"gates must be a mapping {{metric: expression}}; got {type(gates).__name__} {gates!r:.60}.",
                         fix="write e.g. {'recall@5': '>= 0.8', 'dense: ndcg@10': ['>= baseline']}.")
    parsed = []
    labels = list(labels)
    for key, expressions in gates.items():
        system, _, metric = str(key).rpartition(":")
        if isinstance(expressions, (str, int, float)):
            expressions = [expressions]
        for expression in expressions:
            parsed.append(parse_gate(metric.strip(), expression, system=system.strip() or None, labels=labels))
    return parsed


def evaluate_gate(gate: Gate, system: str, *, value: float, baseline_value: float | None = None) -> GateResult:
    """Apply ``gate`` to one system's mean ``value``."""
    threshold = gate.threshold(baseline_value)
    passed = OPERATORS[gate.op](value + _SLACK[gate.op] * EPSILON, threshold)
    if gate.op == "==":
        passed = abs(value - threshold) <= EPSILON
    return GateResult(gate, system, float(value), float(threshold), bool(passed))


def _label(results: Any, metric: Metric | str) -> str:
    """The gate's metric as the reports name it: the label in ``results`` (a Results), else as written."""
    from ..results import Results

    return results.request(metric).label if isinstance(results, Results) else str(metric)


def _mean(results: Any, metric: Metric | str) -> float:
    from ..results import Results

    if isinstance(results, Results):
        return results.mean(metric)
    if isinstance(metric, str) and metric in results:
        return float(results[metric])
    by_canonical = {str(parse_metric(k)): v for k, v in results.items()}
    try:
        return float(by_canonical[str(metric)])
    except KeyError:
        raise InputError(f"the gate metric {metric} was not evaluated; evaluated: {', '.join(by_canonical)}.",
                         fix=f"add {metric} to the metrics.") from None


def check_gates(gates: Iterable[Gate], results: Mapping[str, Any], *, baseline: str | None = None) -> list[GateResult]:
    """Apply every gate to the systems it covers.

    Args:
        gates: parsed gates (:func:`parse_gates`).
        results: system name -> :class:`~evalbridge.results.Results` or ``{metric: mean}``.
        baseline: the baseline system: relative gates compare with it, and gates without a
            system apply to every other system.

    Returns:
        One :class:`GateResult` per (gate, system), in order.

    Example:
        >>> out = check_gates(parse_gates({"P@5": ">= 0.5"}), {"a": {"P@5": 0.6}, "b": {"P@5": 0.4}})
        >>> [r.passed for r in out]
        [True, False]
    """
    if isinstance(gates, (str, Mapping)) or not isinstance(gates, Iterable):
        raise InputError(f"gates must be parsed gates; got {type(gates).__name__} {gates!r:.60}.",
                         fix="parse them first: check_gates(parse_gates({'recall@5': '>= 0.8'}), results).")
    if not isinstance(results, Mapping):
        raise InputError(f"results must be a mapping of system names to their results; got "
                         f"{type(results).__name__} {results!r:.60}.", fix="pass e.g. {'bm25': results}.")
    if baseline is not None and baseline not in results:
        raise InputError(f"the baseline {baseline!r} is not one of the systems ({', '.join(results)}).")
    out = []
    for gate in gates:
        if gate.system is not None and gate.system not in results:
            raise InputError(f"gate {gate} names system {gate.system!r}, which is not one of {', '.join(results)}.")
        targets = [gate.system] if gate.system else [s for s in results if s != baseline or len(results) == 1]
        base = _mean(results[baseline], gate.metric) if gate.relative and baseline is not None else None
        for system in targets:
            result = evaluate_gate(gate, system, value=_mean(results[system], gate.metric), baseline_value=base)
            out.append(replace(result, label=_label(results[system], gate.metric)))
    return out
