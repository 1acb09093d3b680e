"""Retrieval quality gates inside a test suite and a CI job.

* :func:`assert_retrieval`: evaluate a run and check gates in one call; a failure raises an
  ``AssertionError`` whose message is one line per gate, in the metric keys and system names the
  caller wrote, with the gap to each threshold (its own frames are hidden from pytest's traceback);
* :func:`junit_xml`: gate results as a JUnit XML report (one test case per gate and system), which
  CI servers display; any name becomes valid XML 1.0 (characters XML cannot hold are written as
  ``\\xNN`` escapes);
* :func:`github_annotations`: one ``::error`` / ``::notice`` workflow command per gate for GitHub
  Actions, escaped by GitHub's rules (a name cannot end a command or start another).

The pytest plugin (:mod:`evalbridge.ci.pytest_plugin`, registered as ``pytest11``) turns each gate of a
config into a test item (``pytest --evalbridge-config configs/rag.yaml``) and gives tests the
``assert_retrieval`` fixture.

Example:
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> run = {"q1": {"d1": 0.9, "d3": 0.1}, "q2": {"d3": 0.8, "d2": 0.2}}
    >>> _ = assert_retrieval(qrels, run, {"mrr": ">= 0.7"})
    >>> assert_retrieval(qrels, run, {"recall@1": ">= 0.8"}, name="dense")
    Traceback (most recent call last):
    ...
    AssertionError: 1 of 1 retrieval gates failed:
      FAILED  dense recall@1 = 0.5000, needs >= 0.8: short by 0.3000
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from xml.etree import ElementTree

from ..errors import InputError
from ..decisions.gates import GateResult, check_gates, parse_gates

__all__ = ["assert_retrieval", "gate_line", "gate_lines", "gate_noise", "junit_xml", "github_annotations"]

#: the system names :func:`assert_retrieval` gives the run and the baseline when they have none
SYSTEM, BASELINE = "system", "baseline"

#: operator -> the margin by which a value clears its threshold (negative: the gap a failure falls short by)
_MARGINS = {">=": lambda v, t: v - t, ">": lambda v, t: v - t, "<=": lambda v, t: t - v, "<": lambda v, t: t - v,
            "==": lambda v, t: -abs(v - t)}


def gate_noise(result: GateResult, comparison: Any = None) -> str:
    """Whether a gate's gap is within noise, when the report's statistics know it; ``""`` when they do not.

    ``comparison`` is the report's :class:`~evalbridge.decisions.comparison.Comparison` (a config with
    ``comparison:``). A relative gate is read against the paired test of the system and its baseline
    (significant or not, after the correction); an absolute one against the system's bootstrap interval
    (the threshold inside it: the gap is within noise). Without a comparison there is nothing to say.
    """
    if comparison is None:
        return ""
    if result.gate.relative:
        row = comparison.get(result.system, result.metric)
        if row is None:
            return ""
        verdict = "beyond noise: the difference" if row.significant else "within noise: the difference"
        return (f"; {verdict} from {row.baseline} is {'' if row.significant else 'not '}significant "
                f"(p = {row.p_adjusted:.3g})")
    interval = comparison.interval(result.system, result.metric)
    if interval is None:
        return ""
    inside = interval.ci_low <= result.threshold <= interval.ci_high
    return (f"; {'within' if inside else 'beyond'} noise: the threshold is {'inside' if inside else 'outside'} the "
            f"{comparison.confidence:.0%} CI [{interval.ci_low:.4f}, {interval.ci_high:.4f}]")


def gate_line(result: GateResult, comparison: Any = None) -> str:
    """One readable line: status, system, metric, value, the threshold (and the gate as written when it
    is relative), the gap: how far a failure falls short, how much a pass has to spare, and whether the
    gap is within noise when ``comparison`` (the report's statistics) knows it (:func:`gate_noise`).

    >>> from evalbridge.decisions.gates import evaluate_gate, parse_gate
    >>> gate_line(evaluate_gate(parse_gate("ndcg@10", ">= baseline - 0.01"), "dense", value=0.45,
    ...                         baseline_value=0.5))
    'FAILED  dense nDCG@10 = 0.4500, needs >= 0.49 (>= baseline - 0.01): short by 0.0400'
    """
    if result.gate.confidence is not None:   # a gate that knows about noise: its interval against its margin
        verdict = "passed" if result.passed else "FAILED"
        status = {"passed": "passed", "failed": "FAILED"}.get(result.outcome, f"INCONCLUSIVE ({verdict})")
        return f"{status}  {result.system} {result.metric}: {result.noise}"
    shown = f" ({result.gate.text.strip()})" if result.gate.relative else ""
    margin = _MARGINS[result.gate.op](result.value, result.threshold)
    gap = f"{abs(margin):.4f} to spare" if result.passed else f"short by {abs(margin):.4f}"
    if result.passed and result.gate.op == "==":
        gap = "equal"
    return (f"{'passed' if result.passed else 'FAILED'}  {result.system} {result.metric} = {result.value:.4f}, "
            f"needs {result.gate.op} {result.threshold:.6g}{shown}: {gap}{gate_noise(result, comparison)}")


def gate_lines(results: Sequence[GateResult]) -> list[str]:
    """One readable line per gate result (:func:`gate_line`), failures first."""
    return [gate_line(r) for r in sorted(results, key=lambda r: r.passed)]


def _name_of(run: Any, given: str | None, default: str) -> str:
    """The name a message gives a run: the one given, else a :class:`~evalbridge.model.data.Run`'s own, else ``default``."""
    from ..model.data import Run

    if given is not None:
        return given
    if isinstance(run, Run) and run.name:
        return run.name
    return default


def assert_retrieval(qrels: Any, run: Any, gates: Mapping[str, str | Iterable[str]], *, baseline: Any = None,
                     name: str | None = None, baseline_name: str | None = None, on_inconclusive: str = "fail",
                     **options: Any) -> list[GateResult]:
    """Evaluate ``run`` (and ``baseline``) and check ``gates``; raise ``AssertionError`` if one fails.

    Args:
        qrels, run: anything :func:`evalbridge.evaluate` reads.
        gates: ``{metric: expression or [expressions]}``, e.g. ``{"ndcg@10": ">= 0.80",
            "recall@5": ">= baseline - 0.01"}`` (see :mod:`evalbridge.decisions.gates`). Messages name each
            metric as its key spells it.
        baseline: the run relative gates compare with (required when a gate says ``baseline``).
        name, baseline_name: the systems' names in messages (default: a :class:`~evalbridge.model.data.Run`'s
            own name, else ``system`` / ``baseline``).
        on_inconclusive: what a gate with a level (``">= baseline - 0.01 at 95%"``) does when the eval set
            cannot decide it: ``fail`` (default) or ``pass`` (its line still says INCONCLUSIVE).
        options: passed to :func:`evalbridge.evaluate` (``min_relevance=``, ``ties=``...).

    Returns:
        Every :class:`~evalbridge.decisions.gates.GateResult` (all passed).

    Raises:
        AssertionError: a gate failed; the message has one line per gate, failures first, with the gap.
            Under pytest the traceback stops at the caller's line (``__tracebackhide__``). No significance
            test is run here, so the lines do not say whether a gap is within noise (the pytest plugin's
            items do, for a config with ``comparison:``; :func:`gate_noise`).
        InputError: a gate cannot be read, or is relative and no baseline was given.
    """
    __tracebackhide__ = True
    from ..evaluation.evaluating import evaluate

    spelled = list(dict.fromkeys(str(key).rpartition(":")[2].strip() for key in gates))
    parsed = parse_gates(gates, labels=spelled)
    if any(g.relative for g in parsed) and baseline is None:
        raise InputError("a gate is relative to the baseline, but no baseline run was given.",
                         fix="pass baseline=<the baseline run>, or write an absolute threshold.")
    metrics = {text: text for text in spelled}
    system = _name_of(run, name, SYSTEM)
    results = {system: evaluate(qrels, run, metrics, **options)}
    base = None
    if baseline is not None:
        base = _name_of(baseline, baseline_name, BASELINE)
        if base == system:
            system, base = SYSTEM, BASELINE
            results = {system: results.popitem()[1]}
        results[base] = evaluate(qrels, baseline, metrics, **options)
    checked = check_gates(parsed, results, baseline=base, on_inconclusive=on_inconclusive)
    failed = [r for r in checked if not r.passed]
    if failed:
        raise AssertionError(f"{len(failed)} of {len(checked)} retrieval gates failed:\n  "
                             + "\n  ".join(gate_lines(checked)))
    return checked


#: code points XML 1.0 cannot hold (https://www.w3.org/TR/xml/#charsets): C0 controls but tab, newline and
#: carriage return; surrogates; U+FFFE and U+FFFF
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """``text`` with every character XML 1.0 cannot hold written as a visible escape (``\\x01``)."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def junit_xml(results: Sequence[GateResult], *, suite: str = "evalbridge gates") -> str:
    """The gate results as a JUnit XML document: one ``testcase`` per (gate, system), failures with their line
    (``type="GateInconclusive"`` for an inconclusive gate that fails the run; one let pass is ``skipped``).

    Every name is data: any text (control characters included) gives a document an XML parser reads.
    """
    failures = sum(not r.passed for r in results)
    skipped = sum(r.passed and r.inconclusive for r in results)
    root = ElementTree.Element("testsuites")
    node = ElementTree.SubElement(root, "testsuite", name=_xml(suite), tests=str(len(results)),
                                  failures=str(failures), errors="0", skipped=str(skipped))
    for result in results:
        line = _xml(gate_line(result))
        case = ElementTree.SubElement(node, "testcase", classname=_xml(f"{suite}.{result.system}"),
                                      name=_xml(f"{result.metric} {result.gate.text.strip()}"))
        if not result.passed:
            failure = ElementTree.SubElement(case, "failure", message=line,
                                             type="GateInconclusive" if result.inconclusive else "GateFailed")
            failure.text = line
        elif result.inconclusive:   # let pass by on_inconclusive: shown as skipped, the line says why
            ElementTree.SubElement(case, "skipped", message=line).text = line
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _escape_data(text: str) -> str:
    """GitHub's escaping of a workflow command's message (``escapeData`` of @actions/core)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    """GitHub's escaping of a workflow command's property value (``escapeProperty`` of @actions/core)."""
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(results: Sequence[GateResult], *, file: str | None = None) -> str:
    """One GitHub Actions workflow command per gate: ``::error`` for a failure, ``::notice`` for a pass,
    ``::warning`` for an inconclusive gate let pass (``on_inconclusive="pass"``).

    Property values (``file``, ``title``) and messages are escaped by GitHub's rules, so a name with
    ``,``, ``::``, ``%`` or a newline stays inside its own annotation.

    >>> from evalbridge.decisions.gates import evaluate_gate, parse_gate
    >>> print(github_annotations([evaluate_gate(parse_gate("P@1", ">= 0.5"), "a,b::c", value=0.4)]), end="")
    ::error title=evalbridge gate a%2Cb%3A%3Ac P@1::FAILED  a,b::c P@1 = 0.4000, needs >= 0.5: short by 0.1000
    """
    out = []
    for result in results:
        properties = {"file": file, "title": f"evalbridge gate {result.system} {result.metric}"}
        shown = ",".join(f"{key}={_escape_property(value)}" for key, value in properties.items() if value)
        level = "error" if not result.passed else "warning" if result.inconclusive else "notice"
        out.append(f"::{level} {shown}::{_escape_data(gate_line(result))}")
    return "\n".join(out) + ("\n" if out else "")
