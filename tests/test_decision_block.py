"""The decision block: the first thing the terminal, Markdown and HTML reports say is what the numbers decide (each
system better, worse or inconclusive against the baseline, with Δ and its interval, the queries that would settle
an inconclusive one, the gates that failed, the eval set's caveats, the test, sides and correction), declared once
(evalbridge.views.decision) and the same in every format."""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

import evalbridge as eb
from evalbridge.decisions.compare import compare_systems
from evalbridge.decisions.gates import check_gates, parse_gates
from evalbridge.decisions.power import queries_needed
from evalbridge.reports.report import Report, render
from evalbridge.views.decision import decision_lines

from dl19_decision import dl19_config

FORMATS = ("terminal", "markdown", "html")


def _runs(data: st.DataObject, queries: int) -> dict[str, dict[str, dict[str, float]]]:
    """Three systems ranking the same three documents per query in an order drawn per query."""
    orders = st.permutations(["d1", "d2", "d3"])
    return {name: {f"q{i}": dict(zip(data.draw(orders), (0.9, 0.5, 0.1))) for i in range(queries)}
            for name in ("base", "a", "b")}


def _decision_first(text: str, fmt: str) -> list[str]:
    """The block's lines as the format shows them, checked to come before any table of numbers."""
    head = {"terminal": "Decision:", "markdown": "## Decision", "html": ">Decision</h2>"}[fmt]
    table = {"terminal": "\nsystem ", "markdown": "## Systems x metrics", "html": 'id="summary"'}[fmt]
    assert head in text and text.index(head) < text.index(table)
    return text.split(head, 1)[1].split(table, 1)[0].splitlines()


@settings(max_examples=12, deadline=None)
@given(data=st.data(), queries=st.integers(8, 20))
def test_each_format_says_first_which_systems_are_better_and_which_are_inconclusive(data: st.DataObject,
                                                                                   queries: int) -> None:
    qrels = {f"q{i}": {"d1": 2, "d2": 1, "d3": 0} for i in range(queries)}
    results = {name: eb.evaluate(qrels, run, ["nDCG@3", "P@1"]) for name, run in _runs(data, queries).items()}
    comparison = compare_systems(results, ["nDCG@3", "P@1"], baseline="base", n_resamples=200)
    report = Report(results=results, comparison=comparison)
    lines = decision_lines(report.decision, report.digits)
    for row in comparison.rows:
        word = "inconclusive against" if not row.significant else "better than" if row.delta > 0 else "worse than"
        said = [line for line in lines if line.startswith(f"{row.system}: {word} base on ")]
        assert len(said) == 1 and f"{row.metric} (Δ {row.delta:+.4f} [" in said[0]
        for other in {"inconclusive against", "better than", "worse than"} - {word}:
            assert not any(line.startswith(f"{row.system}: {other} base on ") and f" {row.metric} (Δ" in line
                           for line in lines)
    assert lines[-1].startswith("Δ = system - baseline") or lines[-1].startswith("queries needed")
    assert any("two-sided paired t-test, Holm-corrected over 4 comparisons, alpha 0.05" in line for line in lines)
    for fmt in FORMATS:
        shown = "\n".join(_decision_first(render(report, fmt), fmt))
        for line in lines:
            assert (html.escape(line) if fmt == "html" else line.replace("<", "&lt;")) in shown or \
                eb.reports.renderers.markdown.markdown_text(line) in shown
    _decision_in_json(report, comparison)


def _decision_in_json(report: Report, comparison: Any) -> None:
    """report.json's second key (after the title) is the decision: one verdict per comparison row, the same outcome,
    Δ and interval, and the rule the other formats say."""
    data = json.loads(render(report, "json"))
    assert list(data)[:2] == ["title", "decision"]
    verdicts = data["decision"]["verdicts"]
    assert [(v["system"], v["metric"]) for v in verdicts] == [(r.system, r.metric) for r in comparison.rows]
    for v, row in zip(verdicts, comparison.rows):
        word = "inconclusive" if not row.significant else "better" if row.delta > 0 else "worse"
        assert v["outcome"] == word and v["delta"] == pytest.approx(row.delta)
        assert v["baseline"] == "base" and v["ci_low"] <= v["ci_high"]
    assert data["decision"]["rule"] == report.decision.rule


def test_an_inconclusive_comparison_says_how_many_queries_would_settle_it() -> None:
    """Without a power analysis, the count for the observed Δ with sd = Δ / d_z, as queries_needed gives it."""
    qrels = {f"q{i}": {"d1": 1, "d2": 0} for i in range(10)}
    base = {q: {"d2": 0.9, "d1": 0.1} for q in qrels}
    system = {q: ({"d1": 0.9, "d2": 0.1} if i < 2 else {"d2": 0.9, "d1": 0.1}) for i, q in enumerate(qrels)}
    results = {"base": eb.evaluate(qrels, base, ["P@1"]), "new": eb.evaluate(qrels, system, ["P@1"])}
    comparison = compare_systems(results, ["P@1"], baseline="base", n_resamples=200)
    row = comparison.rows[0]
    assert not row.significant
    needed = queries_needed(abs(row.delta), sd=abs(row.delta / row.effect_size), alpha=0.05, power=0.8)
    verdict = Report(results=results, comparison=comparison).decision.verdicts[0]
    assert verdict.outcome == "inconclusive" and verdict.queries_needed == needed
    assert f"{needed:,} queries would settle it" in Report(results=results, comparison=comparison).to_text()


def test_a_failed_gate_is_in_the_decision_block_of_every_format() -> None:
    qrels = {f"q{i}": {"d1": 1, "d2": 0} for i in range(6)}
    run = {q: {"d2": 0.9, "d1": 0.1} for q in qrels}
    results = {"only": eb.evaluate(qrels, run, ["P@1"])}
    gates = check_gates(parse_gates({"P@1": ">= 0.5"}), results)
    report = Report(results=results, gates=gates)
    for fmt in FORMATS:
        block = "\n".join(_decision_first(render(report, fmt), fmt))
        assert "gates: 0 passed, 1 failed, 0 inconclusive; the run fails" in block
        assert "gate FAILED" in block and "P@1" in block
    decided = json.loads(render(report, "json"))["decision"]
    assert "0 passed, 1 failed, 0 inconclusive; the run fails" in decided["gates"]
    assert len(decided["failed"]) == 1 and "P@1" in decided["failed"][0]


def test_a_hostile_system_name_is_escaped_in_the_decision_block() -> None:
    qrels = {f"q{i}": {"d1": 1, "d2": 0} for i in range(8)}
    good = {q: {"d1": 0.9, "d2": 0.1} for q in qrels}
    bad = {q: {"d2": 0.9, "d1": 0.1} for q in qrels}
    name = "<img src=x onerror=alert(1)>"
    results = {"base": eb.evaluate(qrels, bad, ["P@1"]), name: eb.evaluate(qrels, good, ["P@1"])}
    report = Report(results=results, comparison=compare_systems(results, ["P@1"], baseline="base", n_resamples=200))
    for fmt in ("markdown", "html"):
        block = "\n".join(_decision_first(render(report, fmt), fmt))
        assert "<img" not in block and "&lt;img" in block


@pytest.mark.slow
def test_the_dl19_decision_says_splade_is_better_and_names_the_caveats(tmp_path: Path) -> None:
    """The DL19 config: SPLADE++ better than BM25 on all four metrics; BM25+RM3 inconclusive on nDCG@10 with
    the power analysis's count; the failed gate; the diagnosis's judged share and the labels' source."""
    report = eb.run_config(eb.load_config(dl19_config(tmp_path)), write=False).report
    lines = decision_lines(report.decision, report.digits)
    splade = next(line for line in lines if line.startswith("splade-pp-ed: better than bm25 on "))
    assert all(f"{m} (Δ +" in splade for m in ("nDCG@10", "R@100", "AP", "RR@10"))
    rm3 = next(line for line in lines if line.startswith("bm25-rm3: inconclusive against bm25 on "))
    row = report.analyses["power"].get("bm25-rm3", "nDCG@10", "bm25")
    assert f"nDCG@10 (Δ {row.delta:+.4f}" in rm3 and f"{row.queries_needed:,} queries would settle it" in rm3
    assert any(line.startswith("gate FAILED") and "bm25-rm3" in line for line in lines)
    assert any(line.startswith("caveat: judged share: ") for line in lines)
    assert any(line.startswith("caveat: the labels are the judgements in ") and "qrels.dl19-passage" in line
               for line in lines)
    for fmt in FORMATS:
        assert _decision_first(render(report, fmt), fmt)
