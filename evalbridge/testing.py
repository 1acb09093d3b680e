"""Retrieval quality gates inside a test suite and a CI job.

* :func:`assert_retrieval`: evaluate a run and check gates in one call; a failure raises an
  ``AssertionError`` whose message is the readable gate lines (not a dump of objects);
* :func:`junit_xml`: gate results as a JUnit XML report (one test case per gate and system), which
  CI servers display;
* :func:`github_annotations`: one ``::error`` / ``::notice`` line per gate for GitHub Actions.

The pytest plugin (:mod:`evalbridge.pytest_plugin`, registered as ``pytest11``) turns each gate of a
config into a test item (``pytest --evalbridge-config configs/rag.yaml``) and gives tests the
``assert_retrieval`` fixture.

Example:
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    >>> run = {"q1": {"d1": 0.9, "d3": 0.1}, "q2": {"d3": 0.8, "d2": 0.2}}
    >>> _ = assert_retrieval(qrels, run, {"mrr": ">= 0.7"})
    >>> assert_retrieval(qrels, run, {"recall@1": ">= 0.8"})
    Traceback (most recent call last):
    ...
    AssertionError: 1 of 1 retrieval gates failed:
      FAILED  system R@1 = 0.5000, needs >= 0.8 (>= 0.8)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from xml.etree import ElementTree

from .errors import InputError
from .stats.gates import GateResult, check_gates, parse_gates

__all__ = ["assert_retrieval", "gate_lines", "junit_xml", "github_annotations"]

#: the system names :func:`assert_retrieval` gives the run and the baseline in its messages
SYSTEM, BASELINE = "system", "baseline"


def gate_lines(results: Sequence[GateResult]) -> list[str]:
    """One readable line per gate result, failures first."""
    ordered = sorted(results, key=lambda r: r.passed)
    return [f"{'passed' if r.passed else 'FAILED'}  {r.system} {r.metric} = {r.value:.4f}, needs "
            f"{r.gate.op} {r.threshold:.6g} ({r.gate.text.strip()})" for r in ordered]


def assert_retrieval(qrels: Any, run: Any, gates: Mapping[str, str | Iterable[str]], *, baseline: Any = None,
                     **options: Any) -> list[GateResult]:
    """Evaluate ``run`` (and ``baseline``) and check ``gates``; raise ``AssertionError`` if one fails.

    Args:
        qrels, run: anything :func:`evalbridge.evaluate` reads.
        gates: ``{metric: expression or [expressions]}``, e.g. ``{"ndcg@10": ">= 0.80",
            "recall@5": ">= baseline - 0.01"}`` (see :mod:`evalbridge.stats.gates`).
        baseline: the run relative gates compare with (required when a gate says ``baseline``).
        options: passed to :func:`evalbridge.evaluate` (``min_relevance=``, ``ties=``...).

    Returns:
        Every :class:`~evalbridge.stats.gates.GateResult` (all passed).

    Raises:
        AssertionError: a gate failed; the message lists every gate, failures first.
        InputError: a gate cannot be read, or is relative and no baseline was given.
    """
    from .evaluation import evaluate

    parsed = parse_gates(gates)
    if any(g.relative for g in parsed) and baseline is None:
        raise InputError("a gate is relative to the baseline, but no baseline run was given.",
                         fix="pass baseline=<the baseline run>, or write an absolute threshold.")
    metrics = list(dict.fromkeys(g.metric for g in parsed))
    results = {SYSTEM: evaluate(qrels, run, metrics, **options)}
    if baseline is not None:
        results[BASELINE] = evaluate(qrels, baseline, metrics, **options)
    checked = [r for r in check_gates(parsed, results, baseline=BASELINE if baseline is not None else None)]
    failed = [r for r in checked if not r.passed]
    if failed:
        lines = gate_lines(checked)
        raise AssertionError(f"{len(failed)} of {len(checked)} retrieval gates failed:\n  " + "\n  ".join(lines))
    return checked


def junit_xml(results: Sequence[GateResult], *, suite: str = "evalbridge gates") -> str:
    """The gate results as a JUnit XML document: one ``testcase`` per (gate, system), failures with their line."""
    failures = sum(not r.passed for r in results)
    root = ElementTree.Element("testsuites")
    node = ElementTree.SubElement(root, "testsuite", name=suite, tests=str(len(results)), failures=str(failures),
                                  errors="0", skipped="0")
    for result, line in zip(results, (gate_lines([r])[0] for r in results)):
        case = ElementTree.SubElement(node, "testcase", classname=f"{suite}.{result.system}",
                                      name=f"{result.metric} {result.gate.text.strip()}")
        if not result.passed:
            failure = ElementTree.SubElement(case, "failure", message=line, type="GateFailed")
            failure.text = line
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _escape(text: str) -> str:
    """GitHub's workflow-command escaping of a message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotations(results: Sequence[GateResult], *, file: str | None = None) -> str:
    """One GitHub Actions workflow command per gate: ``::error`` for a failure, ``::notice`` for a pass."""
    where = f" file={file}," if file else " "  # workflow command syntax: ::error file=F,title=T::message
    out = []
    for result, line in zip(results, (gate_lines([r])[0] for r in results)):
        level = "notice" if result.passed else "error"
        out.append(f"::{level}{where}title=evalbridge gate {result.system} {result.metric}::{_escape(line)}")
    return "\n".join(out) + ("\n" if out else "")
