"""Gates in a test suite and in CI: assert_retrieval, the pytest plugin, JUnit XML, GitHub annotations."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.decisions.gates import check_gates, parse_gates
from evalbridge.ci.testing import assert_retrieval, github_annotations, junit_xml

REPO = Path(__file__).resolve().parents[1]
QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
GOOD = {"q1": {"d1": 0.9, "x": 0.1}, "q2": {"d2": 0.8, "x": 0.2}, "q3": {"x": 0.9, "d3": 0.5}}
BAD = {"q1": {"x": 0.9, "d1": 0.1}, "q2": {"d2": 0.8}, "q3": {"x": 0.9}}


def test_assert_retrieval_returns_the_results_when_every_gate_passes() -> None:
    """Passing gates return their results (MRR 0.8333 >= 0.8; P@1 of the run within 0.1 of the baseline's)."""
    results = assert_retrieval(QRELS, GOOD, {"mrr": ">= 0.8", "P@1": ">= baseline - 0.1"}, baseline=BAD)
    assert [r.passed for r in results] == [True, True]
    assert results[0].value == pytest.approx((1 + 1 + 0.5) / 3)


def test_a_failed_gate_raises_an_assertion_error_with_readable_lines_failures_first() -> None:
    """The message is the gate lines, failures first, not a dump of GateResult objects."""
    with pytest.raises(AssertionError) as raised:
        assert_retrieval(QRELS, BAD, {"mrr": ">= 0.1", "recall@1": ">= 0.9"})
    lines = str(raised.value).splitlines()
    assert lines[0] == "1 of 2 retrieval gates failed:"
    assert lines[1] == "  FAILED  system recall@1 = 0.3333, needs >= 0.9: short by 0.5667"
    assert lines[2] == "  passed  system mrr = 0.5000, needs >= 0.1: 0.4000 to spare"
    assert "GateResult" not in str(raised.value)


def test_messages_use_the_users_metric_keys_and_system_names() -> None:
    """The key as written (not the canonical R@1 / RR), the name given or the Run's own (not "system")."""
    with pytest.raises(AssertionError) as raised:
        assert_retrieval(QRELS, eb.Run(BAD, name="dense"), {"Recall@1": ">= baseline + 0.1", "MRR": ">= 0.9"},
                         baseline=eb.Run(GOOD, name="bm25"))
    lines = str(raised.value).splitlines()
    assert lines[1] == "  FAILED  dense Recall@1 = 0.3333, needs >= 0.766667 (>= baseline + 0.1): short by 0.4333"
    assert lines[2] == "  FAILED  dense MRR = 0.5000, needs >= 0.9: short by 0.4000"
    with pytest.raises(AssertionError, match="FAILED  my-run P@1 = 0.3333"):
        assert_retrieval(QRELS, BAD, {"P@1": ">= 0.5"}, name="my-run")


def test_a_relative_gate_without_a_baseline_is_refused() -> None:
    with pytest.raises(eb.InputError, match="no baseline run was given"):
        assert_retrieval(QRELS, GOOD, {"mrr": ">= baseline"})


def _results() -> list:
    results = {"a": eb.evaluate(QRELS, GOOD, ["P@1"]), "b": eb.evaluate(QRELS, BAD, ["P@1"])}
    return check_gates(parse_gates({"P@1": ">= 0.5"}), results)


def test_junit_xml_holds_one_case_per_gate_and_system_with_the_failures() -> None:
    """CI servers read JUnit XML: the counts, each case's name, the failure's message."""
    root = ElementTree.fromstring(junit_xml(_results()))
    suite = root.find("testsuite")
    assert suite is not None and (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = suite.findall("testcase")
    assert [c.get("classname") for c in cases] == ["evalbridge gates.a", "evalbridge gates.b"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("message", "").startswith("FAILED  b P@1 = 0.3333")


def test_github_annotations_are_workflow_commands() -> None:
    """One ::notice per passed gate and one ::error per failed one, with the file when given."""
    lines = github_annotations(_results(), file="configs/rag.yaml").splitlines()
    assert lines[0].startswith("::notice file=configs/rag.yaml,title=evalbridge gate a P@1::passed  a P@1")
    assert lines[1].startswith("::error file=configs/rag.yaml,title=evalbridge gate b P@1::FAILED  b P@1")
    odd = github_annotations(_results(), file="c:/a,b.yaml").splitlines()[0]
    assert odd.startswith("::notice file=c%3A/a%2Cb.yaml,title=")


def test_run_writes_junit_and_prints_annotations(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`evalbridge run CONFIG --junit PATH --annotations github` on the shipped FAQ example (its gates pass)."""
    junit = tmp_path / "gates.xml"
    code = main(["run", str(REPO / "configs" / "rag_pairs.yaml"), "--no-write", "--quiet", "--junit", str(junit),
                 "--annotations", "github"])
    err = capsys.readouterr().err
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and int(suite.get("tests", "0")) >= 1
    assert code == (1 if int(suite.get("failures", "0")) else 0)
    assert err.count("::notice ") + err.count("::error ") == int(suite.get("tests", "0"))


@pytest.mark.slow
def test_the_pytest_plugin_turns_each_gate_of_a_config_into_a_test_item(tmp_path: Path) -> None:
    """`pytest --evalbridge-config CONFIG` collects one item per gate and system; a failing gate fails its item."""
    strict = tmp_path / "strict.yaml"
    strict.write_text((REPO / "configs" / "rag_pairs.yaml").read_text().replace(
        'hit_rate@3: ">= 0.6"', 'hit_rate@3: ">= 0.99"').replace("../.cache", str(REPO / ".cache")))
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           "--evalbridge-config", str(strict), str(tmp_path / "test_nothing.py")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "evalbridge::" in done.stdout and "FAILED" in done.stdout and "needs >= 0.99" in done.stdout
