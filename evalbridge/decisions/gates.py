"""Quality gates: thresholds on mean metric values, or on their intervals, that a CI job can fail on.

A gate is a metric and an expression::

    expression := OP ( NUMBER | "baseline" [ ("+" | "-") NUMBER ] ) [ "at" NUMBER "%" ]
    OP         := ">=" | ">" | "<=" | "<" | "=="

``"recall@5": ">= 0.80"`` needs mean R@5 of at least 0.80; ``"ndcg@10": ">= baseline - 0.01"``
needs nDCG@10 within 0.01 of the baseline system's. A metric may carry several
expressions (a list), and may be named by its label (``"precision@5": ">= 0.5"`` when the metrics
were ``{"precision@5": "P@5"}``) or any spelling. The key may name one system, ``"dense: ndcg@10"``; otherwise the
gate applies to every system except the baseline (every system when there is none).
Values are compared with a slack of 1e-12 so that a mean printed as 0.8000 passes ``>= 0.8``.

**Gates that know about noise** end with ``at <level>%``. ``"ndcg@10": ">= baseline - 0.01 at 95%"`` is a
non-inferiority gate: over the queries both systems were evaluated on, the per-query differences d (system -
baseline) give the one-sided t interval of their mean, bounded below by L = mean(d) - t_(0.95, n-1) sd(d) / sqrt(n)
(above by U = mean(d) + t sd / sqrt(n)). The gate **passes** when L clears the margin (-0.01), **fails** when U
is below it (the system is worse than the margin, beyond noise), and is **inconclusive** otherwise: the eval
set cannot tell. ``">= baseline + 0.02 at 95%"`` (or ``"> baseline at 95%"``) is a superiority gate, the same
rule with a margin >= 0; ``<=`` / ``<`` gates swap the bounds. An absolute gate with a level (``"recall@5":
">= 0.8 at 95%"``) reads the interval of the system's own mean. An inconclusive result says the smallest distance
from the margin this eval set detects (the one-sided test at level 1 - 95%, power 0.8:
:func:`~evalbridge.decisions.power.detectable_effect`) and the queries needed to tell the observed distance from
the margin with that power (:func:`~evalbridge.decisions.power.queries_needed`). Whether an inconclusive gate fails
the run is declared (``on_inconclusive``: ``fail``, the default, or ``pass``).

Example:
    >>> gate = parse_gate("ndcg@10", ">= baseline - 0.01")
    >>> result = evaluate_gate(gate, "dense", value=0.495, baseline_value=0.5)
    >>> result.passed, result.threshold
    (True, 0.49)
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from ..errors import InputError
from ..io.datasets import OFFICIAL
from ..metrics.spec import Metric, parse_metric

if TYPE_CHECKING:
    from ..model.settings import Settings

__all__ = ["Gate", "GateResult", "parse_gate", "parse_gates", "evaluate_gate", "evaluate_noise_gate", "check_gates",
           "OPERATORS", "ON_INCONCLUSIVE", "OUTCOMES", "check_on_inconclusive", "gate_summary"]

#: operator spelling -> comparison (value, threshold) -> bool
OPERATORS: Mapping[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq,
}
#: how the 1e-12 slack is applied, per operator: favour passing on rounding noise
_SLACK = {">=": 1, ">": 0, "<=": -1, "<": 0, "==": 0}
EPSILON = 1e-12

_NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_EXPRESSION = re.compile(rf"\s*(?P<op>>=|<=|==|>|<)\s*(?:(?P<base>baseline)\s*(?:(?P<sign>[+-])\s*"
                         rf"(?P<offset>{_NUMBER}))?|(?P<number>{_NUMBER}))\s*(?:at\s+(?P<level>{_NUMBER})\s*%\s*)?",
                         re.IGNORECASE | re.ASCII)  # ASCII: a digit is 0-9 (float() would read '٠٫٥' too)
#: what an inconclusive gate does to the run: fail it (the default, what a CI job should do) or let it pass
ON_INCONCLUSIVE = ("fail", "pass")
#: the three outcomes of a gate
OUTCOMES = ("passed", "failed", "inconclusive")
#: the power an inconclusive gate's numbers are given for
GATE_POWER = 0.8


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
        confidence: the level of a gate that knows about noise (``at 95%`` -> 0.95), else None (a gate on means).
    """

    metric: Metric | str
    op: str
    value: float
    relative: bool = False
    system: str | None = None
    text: str = ""
    confidence: float | None = None

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
    else the spelling asked; default: the gate's metric).

    ``passed`` is the verdict the run counts (an inconclusive gate passes only with ``on_inconclusive="pass"``);
    ``outcome`` is what the data say: ``passed``, ``failed`` or ``inconclusive`` (a gate on means is never
    inconclusive). A gate that knows about noise also carries: ``n`` queries, ``difference`` (the mean of the
    per-query differences, or the system's mean for an absolute gate), ``margin`` (the threshold in those units),
    ``ci_low`` / ``ci_high`` (the one-sided bounds at the gate's level), ``detectable`` (the smallest distance
    from the margin the eval set detects with power 0.8) and ``queries_needed`` (to tell the observed distance
    from the margin with that power; None when there is no distance)."""

    gate: Gate
    system: str
    value: float
    threshold: float
    passed: bool
    label: str = ""
    outcome: str = ""
    n: int = 0
    difference: float = math.nan
    margin: float = math.nan
    ci_low: float = math.nan
    ci_high: float = math.nan
    detectable: float = math.nan
    queries_needed: int | None = None

    def __post_init__(self) -> None:
        if not self.outcome:
            object.__setattr__(self, "outcome", "passed" if self.passed else "failed")

    @property
    def metric(self) -> str:
        """The metric's name in the reports: :attr:`label`, else the gate's metric."""
        return self.label or str(self.gate.metric)

    @property
    def inconclusive(self) -> bool:
        """The eval set could not tell (whatever the run made of it: :attr:`passed`)."""
        return self.outcome == "inconclusive"

    @property
    def reason(self) -> str:
        """One line: what was measured against what."""
        status = {"passed": "passed", "failed": "FAILED", "inconclusive": "INCONCLUSIVE"}[self.outcome]
        if self.gate.confidence is None:
            return (f"gate {status}: {self.system} {self.metric} = {self.value:.4f}, needs "
                    f"{self.gate.op} {self.threshold:.6g} ({self.gate.text.strip()})")
        return f"gate {status}: {self.system} {self.metric}: {self.noise}"

    @property
    def noise(self) -> str:
        """A noise-aware gate's numbers in words: the interval against the margin, and when inconclusive the
        smallest detectable distance and the queries needed ("" for a gate on means)."""
        if self.gate.confidence is None:
            return ""
        what = "difference" if self.gate.relative else "mean"
        text = (f"{what} {self.difference:+.4f} over {self.n} queries, one-sided {self.gate.confidence:.0%} bounds "
                f"[{self.ci_low:+.4f}, {self.ci_high:+.4f}] against the margin {self.margin:+.4g} "
                f"({self.gate.text.strip()})")
        if self.outcome != "inconclusive":
            return text
        needed = (f"{self.queries_needed:,} queries would tell {abs(self.difference - self.margin):.4f} from the "
                  f"margin" if self.queries_needed else "no number of queries tells the observed difference from "
                  "the margin")
        from ..views.power_view import DECIDABLE

        return (f"{text}: the eval set cannot tell; {DECIDABLE} is {self.detectable:.4f} from the margin "
                f"(one-sided, power {GATE_POWER:.0%}); {needed}")

    def to_dict(self) -> dict[str, Any]:
        out = {"system": self.system, "metric": self.metric, "expression": self.gate.text,
               "value": self.value, "threshold": self.threshold, "passed": self.passed, "outcome": self.outcome}
        if self.gate.confidence is not None:
            out.update(confidence=self.gate.confidence, n=self.n, difference=self.difference, margin=self.margin,
                       ci_low=self.ci_low, ci_high=self.ci_high, detectable=self.detectable,
                       queries_needed=self.queries_needed)
        return out


def parse_gate(metric: str | Metric, expression: str, *, system: str | None = None,
               labels: Iterable[str] = ()) -> Gate:
    """Parse one gate, e.g. ``parse_gate("recall@5", ">= 0.80")``; ``metric`` may be one of ``labels``
    (the labels of the metrics asked), kept as written.

    Raises:
        InputError: the expression does not follow the grammar in the module docstring.
        MetricSpecError: the metric string is neither a label nor a metric.
    """
    if isinstance(metric, str) and metric.strip() == OFFICIAL and OFFICIAL not in set(labels):
        raise InputError(f"a gate is on one metric, and {OFFICIAL!r} names a dataset's set of official measures.",
                         fix=f"gate each measure by its name, e.g. {{'nDCG@10': {expression!r}}} (evaluated with "
                             f"{OFFICIAL!r}, the report says which measures the dataset took).")
    spec = metric.strip() if isinstance(metric, str) and metric.strip() in set(labels) else parse_metric(metric)
    if expression is None or isinstance(expression, bool) or (isinstance(expression, str) and not expression.strip()):
        raise InputError(f"the gate on {spec} is {'empty' if expression is not None else 'null'}: it says nothing "
                         f"to check.", fix="write an expression, e.g. '>= 0.80' or '>= baseline - 0.01', or remove the "
                                           "gate.")
    match = _EXPRESSION.fullmatch(str(expression)) if isinstance(expression, (str, int, float)) else None
    if match is None and isinstance(expression, str) and any(c.isdigit() and not c.isascii() for c in expression):
        raise InputError(f"cannot read gate {expression!r} for {spec}: it has digits other than 0-9.",
                         fix="write the number with the ASCII digits 0-9, e.g. '>= 0.80' or 'at 95%'.")
    if match is None:
        raise InputError(f"cannot read gate {expression!r} for {spec}; expected an operator and a number or "
                         f"'baseline', e.g. '>= 0.80' or '>= baseline - 0.01'.",
                         fix="quote the expression in YAML and start it with one of " + ", ".join(OPERATORS) + ".")
    confidence = None
    if match["level"] is not None:
        confidence = float(match["level"]) / 100
        if not 0.5 <= confidence < 1 or match["op"] == "==":
            raise InputError(f"cannot read gate {expression!r} for {spec}: "
                             + ("'==' has no interval to clear" if match["op"] == "==" else
                                f"the level {match['level']}% is not in [50%, 100%)") + ".",
                             fix="write a level such as 'at 95%' after '>=', '>', '<=' or '<'.")
    number = match["offset"] if match["base"] else match["number"]
    if number is not None and not math.isfinite(float(number)):
        raise InputError(f"cannot read gate {expression!r} for {spec}: {number} is beyond the largest number a float "
                         f"holds (about 1.8e308).", fix="write a threshold the metric can take.")
    if match["base"]:
        offset = float(match["offset"] or 0.0) * (-1 if match["sign"] == "-" else 1)
        gate = Gate(spec, match["op"], offset, True, system, str(expression), confidence)
    else:
        gate = Gate(spec, match["op"], float(match["number"]), False, system, str(expression), confidence)
    if isinstance(spec, Metric):
        check_reachable(gate, spec)
    return gate


def check_reachable(gate: Gate, metric: Metric) -> None:
    """Refuse a gate no value of ``metric`` can meet or miss (its :attr:`~evalbridge.Metric.bounds`): an absolute
    threshold outside them (``P@5 >= 2``, ``RR <= -1``), a difference from the baseline beyond their width
    (``nDCG@10 >= baseline - 5``: every system passes). A threshold on a bound itself (``<= 1``, ``> 1``) is kept."""
    low, high = metric.bounds
    if gate.relative:
        width = high - low
        if abs(gate.value) > width:
            raise InputError(f"the gate {metric} {gate.text!r} can never {'fail' if _always(gate) else 'pass'}: "
                             f"{metric} lies in [{_shown(low)}, {_shown(high)}], so a system and the baseline differ "
                             f"by {_shown(width)} at most.",
                             fix=f"write an offset within +-{_shown(width)}, e.g. '>= baseline - 0.01'.")
        return
    if low <= gate.value <= high:
        return
    never = gate.op == "==" or (gate.op in (">=", ">")) == (gate.value > high)
    raise InputError(f"the gate {metric} {gate.text!r} can never {'pass' if never else 'fail'}: {metric} lies in "
                     f"[{_shown(low)}, {_shown(high)}].",
                     fix=f"write a threshold within [{_shown(low)}, {_shown(high)}], e.g. "
                         f"'{gate.op} {_shown(min(max(0.8, low), high))}'.")


def _always(gate: Gate) -> bool:
    """A relative gate beyond the width: one that every system passes (``>= baseline - 5``)?"""
    return gate.op != "==" and (gate.op in (">=", ">")) == (gate.value < 0)


def _shown(number: float) -> str:
    return f"{number:g}"


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
        if isinstance(expressions, (str, int, float)) or expressions is None:
            expressions = [expressions]
        if not isinstance(expressions, (list, tuple)) or not expressions:
            raise InputError(f"the gates on {metric.strip()} are {expressions!r:.40}: "
                             f"{'no expression' if isinstance(expressions, (list, tuple)) else 'not an expression'}.",
                             fix=f"write one expression or a list of them, e.g. {metric.strip()}: '>= 0.80' or "
                                 f"['>= baseline - 0.01', '>= 0.5'], or remove the key.")
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


def gate_summary(results: Sequence[GateResult]) -> str:
    """The gates' count in words, each outcome apart, and what the inconclusive ones did to the run.

    >>> gate = parse_gate("ndcg@10", ">= 0.3")
    >>> outcomes = [("passed", True)] * 3 + [("failed", False)] + [("inconclusive", True)] * 2
    >>> gate_summary([GateResult(gate, "dense", 0.4, 0.3, ok, outcome=o) for o, ok in outcomes])
    '3 passed, 1 failed, 2 inconclusive (let pass: on_inconclusive is pass); the run fails'
    """
    counts = {outcome: sum(r.outcome == outcome for r in results) for outcome in OUTCOMES}
    text = f"{counts['passed']} passed, {counts['failed']} failed, {counts['inconclusive']} inconclusive"
    inconclusive = [r for r in results if r.inconclusive]
    if inconclusive:
        let_pass = all(r.passed for r in inconclusive)
        text += " (let pass: on_inconclusive is pass)" if let_pass else " (counted as failed: on_inconclusive is fail)"
    return text + ("; the run fails" if any(not r.passed for r in results) else "; the run passes")


def check_on_inconclusive(value: Any) -> str:
    """``value`` if it is one of :data:`ON_INCONCLUSIVE`, else refused with the choices."""
    if value not in ON_INCONCLUSIVE:
        raise InputError(f"on_inconclusive must be one of {', '.join(map(repr, ON_INCONCLUSIVE))}; got {value!r}.",
                         fix="'fail' (an inconclusive gate fails the run, as a CI job should) or 'pass'.")
    return str(value)


def evaluate_noise_gate(gate: Gate, system: str, values: Sequence[float] | Any, *, baseline_mean: float | None = None,
                        on_inconclusive: str = "fail") -> GateResult:
    """Apply a gate that knows about noise (``gate.confidence`` set) to per-query ``values``: the system's
    values minus the baseline's on their common queries for a relative gate (``baseline_mean``: the baseline's
    mean there, for the value and threshold shown), the system's own values for an absolute one.

    >>> gate = parse_gate("ndcg@10", ">= baseline - 0.01 at 95%")
    >>> evaluate_noise_gate(gate, "dense", [0.02, -0.01, 0.03, 0.0, 0.01] * 20, baseline_mean=0.5).outcome
    'passed'
    >>> result = evaluate_noise_gate(gate, "dense", [0.2, -0.3, 0.1, -0.1, 0.1] * 4, baseline_mean=0.5)
    >>> result.outcome, result.queries_needed
    ('inconclusive', 2084)
    """
    import numpy as np
    from scipy.special import stdtrit

    from .power import detectable_effect, queries_needed

    if gate.confidence is None:
        raise InputError(f"gate {gate} has no level; evaluate_gate applies it to a mean.")
    d = np.asarray(values, dtype=np.float64)
    if d.ndim != 1 or len(d) < 2 or not np.isfinite(d).all():
        raise InputError(f"gate {gate} needs at least two finite per-query values of {system!r}; got {len(d)}.",
                         fix="evaluate the system (and its baseline) on the same queries, two or more.")
    n, mean, sd = len(d), float(d.mean()), float(d.std(ddof=1))
    half = float(stdtrit(n - 1, gate.confidence)) * sd / math.sqrt(n)
    low, high = mean - half, mean + half
    margin = gate.value
    above = gate.op in (">=", ">")
    bound, other = (low, high) if above else (high, low)
    clears = OPERATORS[gate.op](bound + _SLACK[gate.op] * EPSILON, margin)
    misses = not OPERATORS[gate.op](other + _SLACK[gate.op] * EPSILON, margin)
    outcome = "passed" if clears else "failed" if misses else "inconclusive"
    alpha = 1 - gate.confidence
    detectable = detectable_effect(sd=sd, n=n, alpha=alpha, power=GATE_POWER, sides=1)
    needed = queries_needed(abs(mean - margin), sd=sd, alpha=alpha, power=GATE_POWER, sides=1)
    base = baseline_mean if gate.relative and baseline_mean is not None else 0.0
    check_on_inconclusive(on_inconclusive)
    return GateResult(gate, system, float(base + mean), float(base + margin),
                      outcome == "passed" or (outcome == "inconclusive" and on_inconclusive == "pass"),
                      outcome=outcome, n=n, difference=mean, margin=margin, ci_low=low, ci_high=high,
                      detectable=detectable, queries_needed=needed)


def _values(results: Any, metric: Metric | str, system: str) -> Mapping[str, float]:
    """A system's per-query values of ``metric`` (a noise-aware gate needs them: means are not enough)."""
    from ..evaluation.results import Results

    if isinstance(results, Results):
        return results.query(results.request(metric).metric)
    raise InputError(f"the gate on {metric} at a level needs the per-query values of {system!r}; got means only.",
                     fix="pass what evaluate() returns (Results), or drop 'at N%' to gate the mean.")


def _noise_gate(gate: Gate, system: str, results: Mapping[str, Any], baseline: str | None,
                on_inconclusive: str) -> GateResult:
    import numpy as np

    own = _values(results[system], gate.metric, system)
    if not gate.relative or baseline is None:
        return evaluate_noise_gate(gate, system, list(own.values()), on_inconclusive=on_inconclusive)
    base = _values(results[baseline], gate.metric, baseline)
    common = [q for q in base if q in own]
    y = np.fromiter(map(base.__getitem__, common), dtype=np.float64, count=len(common))
    x = np.fromiter(map(own.__getitem__, common), dtype=np.float64, count=len(common))
    return evaluate_noise_gate(gate, system, x - y, baseline_mean=math.fsum(y) / len(y) if len(y) else None,
                               on_inconclusive=on_inconclusive)


def _label(results: Any, metric: Metric | str) -> str:
    """The gate's metric as the reports name it: the label in ``results`` (a Results), else as written."""
    from ..evaluation.results import Results

    return results.request(metric).label if isinstance(results, Results) else str(metric)


def _mean(results: Any, metric: Metric | str) -> float:
    from ..evaluation.results import Results

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


def check_gates(gates: Iterable[Gate] | Mapping[str, str | Iterable[str]], results: Mapping[str, Any], *,
                baseline: str | None = None, on_inconclusive: str = "fail", qrels: Any = None,
                settings: Settings | None = None) -> list[GateResult]:
    """Apply every gate to the systems it covers.

    Args:
        gates: ``{metric: expression or [expressions]}`` as a config's ``gates:`` (read by :func:`parse_gates`),
            or gates already parsed.
        results: system name -> :class:`~evalbridge.evaluation.results.Results` or ``{metric: mean}`` (a gate with a
            level, ``at 95%``, needs the per-query values of Results).
        baseline: the baseline system: relative gates compare with it, and gates without a
            system apply to every other system.
        on_inconclusive: ``fail`` (default) or ``pass``: the verdict of a gate the eval set cannot decide.
        qrels, settings: with ``qrels``, ``results`` may hold runs too (anything :func:`evalbridge.evaluate`
            reads), evaluated against ``qrels`` with the gates' metrics and ``settings`` first, as ``compare``.

    It takes no :class:`~evalbridge.Statistics`: a gate with a level (``at 95%``) is its own test, the one-sided t
    interval at that level of one system (or one difference) against its margin, a contract of its own rather than
    one comparison of a family; no test, correction, resample or seed enters it, and its level is written in the
    gate, where the CI job reads it.

    Returns:
        One :class:`GateResult` per (gate, system), in order.

    Example:
        >>> out = check_gates({"P@5": ">= 0.5"}, {"a": {"P@5": 0.6}, "b": {"P@5": 0.4}})
        >>> [r.passed for r in out]
        [True, False]
    """
    if isinstance(gates, Mapping):
        gates = parse_gates(gates)
    if isinstance(gates, str) or not isinstance(gates, Iterable):
        raise InputError(f"gates must be a mapping of metrics to expressions; got {type(gates).__name__} {gates!r:.60}.",
                         fix="pass e.g. check_gates({'recall@5': '>= 0.8'}, results).")
    if not isinstance(results, Mapping):
        raise InputError(f"results must be a mapping of system names to their results; got "
                         f"{type(results).__name__} {results!r:.60}.", fix="pass e.g. {'bm25': results}.")
    if baseline is not None and baseline not in results:
        raise InputError(f"the baseline {baseline!r} is not one of the systems ({', '.join(results)}).")
    check_on_inconclusive(on_inconclusive)
    gates = list(gates)
    if qrels is not None:
        from ..evaluation.evaluating import evaluate_each

        results = evaluate_each(qrels, results, list(dict.fromkeys(str(g.metric) for g in gates)), settings=settings)
    out = []
    for gate in gates:
        if gate.system is not None and gate.system not in results:
            raise InputError(f"gate {gate} names system {gate.system!r}, which is not one of {', '.join(results)}.")
        targets = [gate.system] if gate.system else [s for s in results if s != baseline or len(results) == 1]
        base = _mean(results[baseline], gate.metric) if gate.relative and baseline is not None else None
        for system in targets:
            if gate.confidence is not None:
                if gate.relative and baseline is None:
                    gate.threshold(None)   # refused: relative to a baseline there is not
                result = _noise_gate(gate, system, results, baseline, on_inconclusive)
            else:
                result = evaluate_gate(gate, system, value=_mean(results[system], gate.metric), baseline_value=base)
            out.append(replace(result, label=_label(results[system], gate.metric)))
    return out
