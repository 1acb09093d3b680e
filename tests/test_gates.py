"""Quality gates (evalbridge.decisions.gates): parsing, pass/fail, which systems they cover."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as hs

import evalbridge as eb
from evalbridge.decisions.gates import check_gates, evaluate_gate, parse_gate, parse_gates


@pytest.mark.parametrize("expression, op, value, relative", [
    (">= 0.80", ">=", 0.8, False),
    (">0.5", ">", 0.5, False),
    ("<= 1", "<=", 1.0, False),
    ("< .25", "<", 0.25, False),
    ("== 1e-1", "==", 0.1, False),
    (">= baseline - 0.01", ">=", -0.01, True),
    (">= baseline+0.02", ">=", 0.02, True),
    ("> BASELINE", ">", 0.0, True),
])
def test_parse_gate_reads_operator_and_threshold(expression, op, value, relative):
    """Every operator, absolute and baseline-relative thresholds."""
    gate = parse_gate("ndcg@10", expression)
    assert (gate.op, gate.relative) == (op, relative)
    assert gate.value == pytest.approx(value)
    assert str(gate.metric) == "nDCG@10"


@pytest.mark.parametrize("expression", ["0.8", ">= ", "=> 0.8", ">= baseline * 0.9", "at least 0.8", 0.8, None])
def test_parse_gate_refuses_unreadable_expressions(expression):
    """Anything outside the grammar is an InputError with an example."""
    with pytest.raises(eb.InputError, match="e.g. '>= 0.80'"):
        parse_gate("P@5", expression)


def test_parse_gate_refuses_unknown_metric():
    """The metric is parsed as a spec: a typo is a MetricSpecError with a suggestion."""
    with pytest.raises(eb.MetricSpecError, match="did you mean"):
        parse_gate("ndgc@10", ">= 0.5")


def test_parse_gates_expands_lists_and_system_prefixes():
    """A list gives one gate per expression; 'system: metric' targets one system."""
    gates = parse_gates({"recall@5": ">= 0.8", "dense: ndcg@10": [">= baseline", "<= 1"]})
    assert [(g.system, str(g.metric), g.text) for g in gates] == [
        (None, "R@5", ">= 0.8"), ("dense", "nDCG@10", ">= baseline"), ("dense", "nDCG@10", "<= 1")]


def test_gate_at_the_boundary_passes_despite_rounding():
    """A mean of 0.7999999999999999 (float noise) passes '>= 0.8'; 0.7999 does not."""
    gate = parse_gate("P@5", ">= 0.8")
    assert evaluate_gate(gate, "s", value=0.1 * 8 - 1e-16).passed
    assert evaluate_gate(gate, "s", value=(0.7 + 0.1)).passed
    assert not evaluate_gate(gate, "s", value=0.7999).passed


@given(hs.floats(0, 1), hs.floats(0, 1))
def test_absolute_gate_agrees_with_the_comparison(value, threshold):
    """'>= t' passes exactly when value >= t (up to the 1e-12 slack); '< t' is its complement."""
    ge = evaluate_gate(parse_gate("P@1", f">= {threshold!r}"), "s", value=value)
    lt = evaluate_gate(parse_gate("P@1", f"< {threshold!r}"), "s", value=value)
    if abs(value - threshold) > 1e-11:
        assert ge.passed == (value >= threshold)
        assert lt.passed == (value < threshold)


def test_relative_gate_uses_the_baseline_value():
    """'>= baseline - 0.01' passes 0.495 against 0.5 and fails 0.48; the reason names both numbers."""
    results = {"bm25": {"nDCG@10": 0.5}, "ok": {"nDCG@10": 0.495}, "bad": {"nDCG@10": 0.48}}
    out = check_gates(parse_gates({"ndcg@10": ">= baseline - 0.01"}), results, baseline="bm25")
    assert [(r.system, r.passed) for r in out] == [("ok", True), ("bad", False)]
    assert out[1].threshold == pytest.approx(0.49)
    assert out[1].reason == "gate FAILED: bad nDCG@10 = 0.4800, needs >= 0.49 (>= baseline - 0.01)"


def test_gates_skip_the_baseline_unless_named_or_alone():
    """Gates without a system cover every non-baseline system; a lone system is gated itself."""
    results = {"base": {"P@5": 0.1}, "new": {"P@5": 0.9}}
    assert [r.system for r in check_gates(parse_gates({"P@5": ">= 0.5"}), results, baseline="base")] == ["new"]
    named = check_gates(parse_gates({"base: P@5": ">= 0.5"}), results, baseline="base")
    assert [(r.system, r.passed) for r in named] == [("base", False)]
    alone = check_gates(parse_gates({"P@5": ">= 0.5"}), {"only": {"P@5": 0.2}})
    assert [(r.system, r.passed) for r in alone] == [("only", False)]


def test_gates_read_results_objects_with_any_spelling():
    """A Results object is read through its metric lookup (aliases, relevance level)."""
    res = eb.evaluate({"q1": {"d1": 1, "d2": 1}}, {"q1": {"d1": 0.9, "d3": 0.5}}, ["precision@2", "mrr"])
    out = check_gates(parse_gates({"P@2": ">= 0.5", "recip_rank": "== 1"}), {"sys": res})
    assert [r.passed for r in out] == [True, True]


@pytest.mark.parametrize("gates, baseline, message", [
    ({"P@5": ">= baseline"}, None, "relative to the baseline"),
    ({"ghost: P@5": ">= 0.1"}, None, "names system 'ghost'"),
    ({"R@100": ">= 0.1"}, None, "R@100 was not evaluated"),
])
def test_check_gates_errors_name_the_problem(gates, baseline, message):
    """No baseline for a relative gate, unknown system, metric not evaluated: InputError."""
    with pytest.raises(eb.InputError, match=message):
        check_gates(parse_gates(gates), {"a": {"P@5": 0.5}, "b": {"P@5": 0.5}}, baseline=baseline)


def test_a_gate_on_official_is_refused_with_the_fix_at_the_python_and_config_doors(tmp_path) -> None:  # noqa: ANN001
    """``official`` names a set of measures, and a gate is on one metric: ``check_gates`` and a config's ``gates:``
    refuse it with the same words and the fix (gate each measure by name); a metric labelled ``official`` is
    gated as any label."""
    with pytest.raises(eb.InputError) as python:
        check_gates({"official": ">= 0.1"}, {"a": {"P@1": 1.0}})
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 1 a\n")
    (tmp_path / "c.yaml").write_text("qrels: q.txt\nruns: {a: a.run}\nmetrics: [P@1]\ngates: {official: '>= 0.1'}\n")
    with pytest.raises(eb.InputError) as config:
        eb.load_config(tmp_path / "c.yaml")
    said = str(python.value)
    assert said.startswith("a gate is on one metric, and 'official' names a dataset's set of official measures.")
    assert "Fix: gate each measure by its name, e.g. {'nDCG@10': '>= 0.1'}" in said
    assert str(config.value).endswith(f"c.yaml:4: gates.official: {said}")
    assert [g.passed for g in check_gates(parse_gates({"official": ">= 0.5"}, labels=["official"]),
                                          {"a": {"official": 1.0}})] == [True]
