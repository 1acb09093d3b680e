"""Gates that know about noise (``">= baseline - 0.01 at 95%"``): pass, fail or inconclusive from the one-sided
interval of the difference, on constructed data; the same outcome at every door (API, assert_retrieval, CLI,
config, JUnit, GitHub annotations, the pytest plugin)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest
from doors import cli
from hypothesis import given, settings
from hypothesis import strategies as hs
from scipy import stats

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.decisions.gates import check_gates, evaluate_noise_gate, parse_gate, parse_gates
from evalbridge.decisions.power import detectable_effect, queries_needed
from evalbridge.ci.testing import assert_retrieval, github_annotations, junit_xml

pytest_plugins = ["pytester"]

NON_INFERIOR = ">= baseline - 0.01 at 95%"


def _pair(n: int, wins: int, losses: int) -> tuple[dict, dict, dict]:
    """qrels and two runs over n queries: the baseline finds the relevant document first on every query but the
    first ``wins`` ones; the system finds it on every query but the last ``losses`` (P@1 per query is 0 or 1)."""
    qrels = {f"q{i:04d}": {"rel": 1} for i in range(n)}

    def run(hit: set[int]) -> dict:
        return {f"q{i:04d}": {"rel": 0.9 if i in hit else 0.1, "other": 0.5} for i in range(n)}

    base = run(set(range(wins, n)))
    system = run(set(range(n - losses)))
    return qrels, system, base


#: name -> (queries, system wins, system losses, outcome of the non-inferiority gate at margin 0.01, 95%)
CASES = {
    "pass": (400, 4, 2, "passed"),          # +0.005, one-sided bounds about [-0.005, +0.015]: clears -0.01
    "fail": (400, 0, 40, "failed"),         # -0.100, bounds about [-0.125, -0.075]: below the margin
    "inconclusive": (40, 1, 1, "inconclusive"),   # 0.000 over 40 queries, bounds about [-0.06, +0.06]
}


@pytest.mark.parametrize("case", list(CASES))
def test_non_inferiority_gate_has_three_outcomes_on_constructed_data(case: str) -> None:
    """The one-sided 95% t bounds of the per-query differences against the margin -0.01: the lower bound above
    it passes, the upper bound below it fails, the margin inside the interval is inconclusive."""
    n, wins, losses, outcome = CASES[case]
    qrels, system, base = _pair(n, wins, losses)
    results = {"bm25": eb.evaluate(qrels, base, ["P@1"]), "dense": eb.evaluate(qrels, system, ["P@1"])}
    (result,) = check_gates(parse_gates({"P@1": NON_INFERIOR}), results, baseline="bm25")
    d = np.zeros(n)
    d[:wins] += 1
    d[n - losses:] -= 1
    half = stats.t.ppf(0.95, n - 1) * d.std(ddof=1) / math.sqrt(n)
    assert (result.ci_low, result.ci_high) == (pytest.approx(d.mean() - half), pytest.approx(d.mean() + half))
    assert result.outcome == outcome and result.passed == (outcome == "passed")
    assert (result.n, result.difference, result.margin) == (n, pytest.approx(d.mean()), -0.01)
    assert result.value == pytest.approx(results["dense"].mean("P@1"))
    assert result.threshold == pytest.approx(results["bm25"].mean("P@1") - 0.01)
    if outcome == "inconclusive":   # what the eval set can detect, and the questions it would need
        assert result.detectable == pytest.approx(detectable_effect(sd=d.std(ddof=1), n=n, sides=1))
        assert result.queries_needed == queries_needed(abs(d.mean() + 0.01), sd=d.std(ddof=1), sides=1)
        assert "cannot tell" in result.reason and f"{result.queries_needed:,} queries" in result.reason


def test_superiority_and_upper_gates_read_the_other_side() -> None:
    """``> baseline at 95%`` (superiority) needs the lower bound above 0; ``<= baseline + 0.05 at 90%`` needs the
    upper bound at most 0.05 and fails when the lower bound is above it; an absolute gate reads the mean's
    interval."""
    d = np.array([0.02, 0.03, 0.01, 0.04, 0.02] * 20)
    assert evaluate_noise_gate(parse_gate("P@1", "> baseline at 95%"), "s", d).outcome == "passed"
    assert evaluate_noise_gate(parse_gate("P@1", "> baseline + 0.1 at 95%"), "s", d).outcome == "failed"
    assert evaluate_noise_gate(parse_gate("P@1", "<= baseline + 0.05 at 90%"), "s", d).outcome == "passed"
    assert evaluate_noise_gate(parse_gate("P@1", "< baseline + 0.01 at 90%"), "s", d).outcome == "failed"
    wide = np.array([0.3, -0.2, 0.1, -0.1, 0.0] * 4)
    assert evaluate_noise_gate(parse_gate("P@1", "> baseline at 95%"), "s", wide).outcome == "inconclusive"
    assert evaluate_noise_gate(parse_gate("P@1", ">= 0.5 at 95%"), "s", np.tile([0.8, 0.9, 1.0], 10)).outcome == "passed"
    assert evaluate_noise_gate(parse_gate("P@1", ">= 0.95 at 95%"), "s", np.tile([0.8, 0.9, 1.0], 10)).outcome == "failed"


@settings(max_examples=80, deadline=None)
@given(hs.lists(hs.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0]), min_size=2, max_size=200),
       hs.sampled_from([-0.05, -0.01, 0.0, 0.02]), hs.sampled_from([">=", ">", "<=", "<"]))
def test_a_stricter_level_never_turns_a_verdict_around(values: list[float], margin: float, op: str) -> None:
    """Property: the outcomes at 80% and 99% agree except that a decided gate may become inconclusive at the
    stricter level (never pass <-> fail); a passed gate's mean clears the margin; the bounds hold the mean."""
    text = f"{op} baseline {'-' if margin < 0 else '+'} {abs(margin)}"
    loose = evaluate_noise_gate(parse_gate("P@1", text + " at 80%"), "s", values)
    strict = evaluate_noise_gate(parse_gate("P@1", text + " at 99%"), "s", values)
    assert loose.ci_low <= loose.difference + 1e-12 and loose.difference <= loose.ci_high + 1e-12
    assert strict.outcome in (loose.outcome, "inconclusive")
    if strict.outcome == "passed":
        assert loose.outcome == "passed"
    if loose.outcome == "passed":
        above = op in (">=", ">")
        assert (loose.difference >= margin - 1e-12) if above else (loose.difference <= margin + 1e-12)
    assert {loose.outcome, strict.outcome} <= {"passed", "failed", "inconclusive"}


def test_the_policy_decides_what_an_inconclusive_gate_does_and_every_output_says_it() -> None:
    """on_inconclusive: fail (default) -> not passed, JUnit failure of type GateInconclusive, ::error; pass ->
    passed, JUnit skipped with the line, ::warning; names are escaped in both."""
    n, wins, losses, _ = CASES["inconclusive"]
    qrels, system, base = _pair(n, wins, losses)
    name = "dense,v2::<&>\x01"
    results = {"bm25": eb.evaluate(qrels, base, ["P@1"]), name: eb.evaluate(qrels, system, ["P@1"])}
    gates = parse_gates({"P@1": NON_INFERIOR})
    (failing,) = check_gates(gates, results, baseline="bm25")
    (letting,) = check_gates(gates, results, baseline="bm25", on_inconclusive="pass")
    assert (failing.outcome, failing.passed, letting.outcome, letting.passed) == (
        "inconclusive", False, "inconclusive", True)
    for result, kind in ((failing, "failure"), (letting, "skipped")):
        suite = ElementTree.fromstring(junit_xml([result]).split("\n", 1)[1])
        (case,) = suite.iter("testcase")
        (node,) = list(case)
        assert node.tag == kind and "INCONCLUSIVE" in node.get("message", "")
        if kind == "failure":
            assert node.get("type") == "GateInconclusive"
        assert suite.find("testsuite").get("skipped") == str(int(kind == "skipped"))
    assert github_annotations([failing]).startswith("::error title=evalbridge gate dense%2Cv2%3A%3A<&>")
    assert github_annotations([letting]).startswith("::warning ")
    assert github_annotations([letting]).count("\n") == 1
    with pytest.raises(InputError, match="on_inconclusive"):
        check_gates(gates, results, baseline="bm25", on_inconclusive="maybe")


def test_assert_retrieval_fails_an_inconclusive_gate_unless_told_to_let_it_pass() -> None:
    n, wins, losses, _ = CASES["inconclusive"]
    qrels, system, base = _pair(n, wins, losses)
    with pytest.raises(AssertionError, match=r"INCONCLUSIVE \(FAILED\)  dense P@1: difference \+0.0000 over 40"):
        assert_retrieval(qrels, system, {"P@1": NON_INFERIOR}, baseline=base, name="dense")
    (result,) = assert_retrieval(qrels, system, {"P@1": NON_INFERIOR}, baseline=base, on_inconclusive="pass")
    assert result.inconclusive and result.passed
    n, wins, losses, _ = CASES["pass"]
    qrels, system, base = _pair(n, wins, losses)
    assert assert_retrieval(qrels, system, {"P@1": NON_INFERIOR}, baseline=base)[0].outcome == "passed"


@pytest.mark.parametrize("expression, message", [
    ("== baseline at 95%", "'==' has no interval"), (">= baseline at 100%", "not in"), (">= baseline at 30%", "not in"),
])
def test_unreadable_levels_are_refused(expression: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_gate("P@1", expression)


def test_a_level_needs_per_query_values() -> None:
    with pytest.raises(InputError, match="per-query values"):
        check_gates(parse_gates({"P@1": ">= 0.5 at 95%"}), {"a": {"P@1": 0.6}})


def _files(folder: Path, case: str, policy: str | None) -> Path:
    n, wins, losses, _ = CASES[case]
    qrels, system, base = _pair(n, wins, losses)
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    for name, run in (("bm25", base), ("dense", system)):
        (folder / f"{name}.run").write_text("".join(f"{q} Q0 {d} {r} {s} {name}\n" for q, docs in run.items()
                                                    for r, (d, s) in enumerate(docs.items(), 1)))
    text = ("qrels: qrels.txt\nruns: {bm25: bm25.run, dense: dense.run}\nmetrics: [P@1]\n"
            "comparison: {baseline: bm25, n_resamples: 200}\n"
            f"gates: {{P@1: '{NON_INFERIOR}'}}\n" + (f"on_inconclusive: {policy}\n" if policy else ""))
    (folder / "eval.yaml").write_text(text)
    return folder / "eval.yaml"


@pytest.mark.parametrize("case, policy, flag, code", [
    ("inconclusive", None, None, 1), ("inconclusive", "pass", None, 0), ("inconclusive", None, "pass", 0),
    ("inconclusive", "pass", "fail", 1), ("pass", None, None, 0), ("fail", "pass", None, 1),
])
def test_every_door_gives_the_same_outcome(tmp_path: Path, case: str, policy: str | None, flag: str | None,
                                           code: int) -> None:
    """API (check_gates), config key on_inconclusive and the command line's --on-inconclusive (over the config):
    the same outcome in the JSON report, exit 1 when the gate counts as failed; the power section beside it."""
    config = _files(tmp_path, case, policy)
    argv = ["run", config, "--no-write", "--format", "json", *(["--on-inconclusive", flag] if flag else [])]
    got, out, err = cli(*argv)
    assert got == code, err
    (shown,) = json.loads(out)["gates"]
    results = {name: eb.evaluate(eb.read_qrels(str(tmp_path / "qrels.txt")), eb.read_run(str(tmp_path / f"{name}.run")),
                                 ["P@1"]) for name in ("bm25", "dense")}
    (api,) = check_gates(parse_gates({"P@1": NON_INFERIOR}), results, baseline="bm25",
                         on_inconclusive=flag or policy or "fail")
    assert (shown["outcome"], shown["passed"]) == (api.outcome, api.passed) == (CASES[case][3], code == 0)
    assert shown["ci_low"] == pytest.approx(api.ci_low) and shown["queries_needed"] == api.queries_needed
    power = json.loads(out)["power"]   # the compare report's power section is eb.power's, row for row
    api_power = eb.power(results, ["P@1"], baseline="bm25")
    assert power["test"] == api_power.test == "t" and len(power["rows"]) == len(api_power.rows) == 1
    for key in ("n", "delta", "sd", "mde", "queries_needed"):
        assert power["rows"][0][key] == pytest.approx(getattr(api_power.rows[0], key)), key
    if code:
        assert "gate" in err and ("INCONCLUSIVE" in err or "FAILED" in err)


def test_the_markdown_and_terminal_reports_show_the_outcome_and_the_power(tmp_path: Path) -> None:
    config = _files(tmp_path, "inconclusive", "pass")
    _, terminal, _ = cli("run", config, "--no-write")
    assert "INCONCLUSIVE" in terminal and "let pass" in terminal and "Power" in terminal
    _, markdown, _ = cli("run", config, "--no-write", "--format", "markdown")
    assert "inconclusive (let pass)" in markdown and "## Power" in markdown and "cannot tell" in markdown


def test_the_pytest_plugin_skips_an_inconclusive_gate_let_pass_and_fails_it_otherwise(
        pytester: pytest.Pytester) -> None:
    for policy, outcome in (("pass", {"skipped": 1}), (None, {"failed": 1})):
        config = _files(pytester.path, "inconclusive", policy)
        result = pytester.runpytest_inprocess(f"--evalbridge-config={config}", "-p", "no:randomly", "-rs")
        result.assert_outcomes(**outcome)
        result.stdout.fnmatch_lines(["*INCONCLUSIVE*cannot tell*"])
