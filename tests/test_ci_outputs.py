"""CI outputs hold whatever the names are: JUnit XML, GitHub annotations and Markdown tables from any
unicode system name; the pytest plugin against broken configs; assert_retrieval's own frames hidden."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.reports.report import Report
from evalbridge.reports.renderers.markdown import render_markdown
from evalbridge.decisions.gates import evaluate_gate, parse_gate
from evalbridge.ci.testing import github_annotations, junit_xml

pytest_plugins = ["pytester"]

QRELS = {"q1": {"d1": 1}, "q2": {"d2": 1}}
RUN = {"q1": {"d1": 0.9, "x": 0.1}, "q2": {"x": 0.8, "d2": 0.2}}
names = st.text(min_size=1, max_size=30)


def _gates(system: str) -> list:
    return [evaluate_gate(parse_gate("P@1", ">= 0.5"), system, value=0.5),
            evaluate_gate(parse_gate("ndcg@10", ">= baseline - 0.01"), system, value=0.2, baseline_value=0.5)]


@given(system=names, suite=names)
def test_any_system_name_gives_junit_xml_that_parses_back(system: str, suite: str) -> None:
    root = ElementTree.fromstring(junit_xml(_gates(system), suite=suite))
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 2 and [c.find("failure") is None for c in cases] == [True, False]


#: one workflow command: ::level properties::message, properties key=value joined by ","
COMMAND = re.compile(r"::(error|notice) (?P<props>[^:\r\n]*)::(?P<message>[^\r\n]*)")


def _unescape(text: str) -> str:
    return re.sub(r"%(25|0D|0A|3A|2C)", lambda m: {"25": "%", "0D": "\r", "0A": "\n", "3A": ":", "2C": ","}[m[1]],
                  text)


@given(system=names, file=names)
def test_any_system_name_gives_one_github_command_per_gate(system: str, file: str) -> None:
    text = github_annotations(_gates(system), file=file)
    lines = text.split("\n")[:-1]  # the runner reads lines ending at \n or \r (not U+0085 / U+2028)
    assert len(lines) == 2 and text.endswith("\n") and "\r" not in text
    for line in lines:
        match = COMMAND.fullmatch(line)
        assert match is not None, line
        props = dict(p.split("=", 1) for p in match["props"].split(","))
        assert set(props) == {"file", "title"}
        assert _unescape(props["file"]) == file and system in _unescape(props["title"])
        assert system in _unescape(match["message"])


def _cells(row: str) -> list[str]:
    """The cells of a GitHub Markdown table row, as GitHub splits it: a backslash escapes the next character."""
    cells, cell, escaped = [], "", False
    for char in row.strip(" \t"):
        if escaped or char == "\\":
            cell, escaped = cell + char, not escaped and char == "\\"
        elif char == "|":
            cells, cell = [*cells, cell], ""
        else:
            cell += char
    return cells[1:]


@given(system=names)
def test_any_system_name_keeps_the_markdown_table_shape(system: str) -> None:
    results = eb.evaluate(QRELS, RUN, ["P@1", "ndcg@10"])
    report = Report({system: results, "other": results}, title=system, gates=_gates(system))
    text = render_markdown(report)
    tables = [line for line in re.split(r"\r\n|\r|\n", text) if line.startswith("|")]  # CommonMark's line ends
    header = tables[0]
    systems = tables[2:4]
    assert len(_cells(header)) == 3 and all(len(_cells(row)) == 3 for row in systems), text
    gates = [line for line in tables if "0.5000" in line or "0.2000" in line][-2:]
    assert all(len(_cells(row)) == 6 for row in gates), text


CONFIG = """\
title: faq
runs:
  faq:
    format: pairs
    data:
      q1: [[d1, d3], [d1]]
      q2: [[d3, d2], [d2]]
metrics: [mrr, P@1]
{gates}
"""


@pytest.mark.parametrize(("text", "said"), [
    (CONFIG.format(gates="gates: {mrr: '>= 0.5'}").replace("metrics:", "metrcs:"), "metrcs"),
    ("runs: [unclosed\n", "eval.yaml:"),
    (None, "eval.yaml"),
    ("title: x\nqrels: missing.txt\nruns: {a: missing.run}\nmetrics: [mrr]\ngates: {mrr: '>= 0.5'}\n", "missing"),
])
def test_a_broken_config_is_one_failing_item_with_the_message(pytester: pytest.Pytester, text: str | None,
                                                              said: str) -> None:
    if text is not None:
        pytester.makefile(".yaml", eval=text)
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest("-p", "no:randomly", "--evalbridge-config", "eval.yaml", "-rf")
    result.assert_outcomes(passed=1, failed=1)
    assert "INTERNALERROR" not in result.stdout.str()
    result.stdout.fnmatch_lines([f"*evalbridge: error: *{said}*"])


def test_a_config_without_gates_says_so(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", eval=CONFIG.format(gates=""))
    result = pytester.runpytest("-p", "no:randomly", "--evalbridge-config", "eval.yaml", "-rs")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(["*no gates in eval.yaml*"])


def test_collect_only_counts_what_it_lists(pytester: pytest.Pytester) -> None:
    pytester.makefile(".yaml", eval=CONFIG.format(gates="gates: {mrr: '>= 0.5', P@1: ['>= 0.1', '>= 0.9']}"))
    pytester.makepyfile(test_other="def test_other():\n    pass\n")
    result = pytester.runpytest("-p", "no:randomly", "--evalbridge-config", "eval.yaml", "--collect-only", "-q")
    listed = [line for line in result.stdout.lines if "::" in line]
    assert len(listed) == 4, result.stdout.str()
    result.stdout.fnmatch_lines(["*4 tests collected*"])
    run = pytester.runpytest("-p", "no:randomly", "--evalbridge-config", "eval.yaml")
    run.assert_outcomes(passed=3, failed=1)


def test_a_failing_assert_retrieval_shows_the_callers_line_not_evalbridges_source(
        pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_gate="""
        from evalbridge.ci.testing import assert_retrieval

        def test_gate():
            assert_retrieval({"q1": {"d1": 1}}, {"q1": {"x": 0.9, "d1": 0.1}}, {"recall@1": ">= 0.5"}, name="dense")
    """)
    result = pytester.runpytest("-p", "no:randomly")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "FAILED  dense recall@1 = 0.0000, needs >= 0.5: short by 0.5000" in out
    assert "def assert_retrieval" not in out and "check_gates(" not in out, out


def test_annotations_leave_json_stdout_alone(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    import json

    config = tmp_path / "eval.yaml"
    config.write_text(CONFIG.format(gates="gates: {mrr: '>= 0.5'}"))
    code = main(["run", str(config), "--no-write", "--format", "json", "--annotations", "github"])
    captured = capsys.readouterr()
    assert code == 0 and json.loads(captured.out)["gates"][0]["passed"] is True
    assert captured.err.startswith("::notice file=")


def test_junit_inside_the_report_folder_is_refused_before_any_work(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    config = tmp_path / "eval.yaml"
    config.write_text(CONFIG.format(gates="gates: {mrr: '>= 0.5'}") + "output:\n  dir: reports/demo\n")
    code = main(["run", str(config), "--junit", str(tmp_path / "reports" / "demo" / "gates.xml")])
    assert code == 2 and "lies inside the output folder" in capsys.readouterr().err
    assert not (tmp_path / "reports").exists()


@pytest.mark.parametrize(("config", "said"), [
    ('title: x\nruns:\n  "bm25\\n::warning::injected":\n    format: pairs\n    data: {q1: [[d1], [d1]]}\n'
     'metrics: [mrr]\n', r"runs.bm25\\n::warning::injected.*the system name .* holds a control character \('\\n' at "
                         r"position 4\).*Fix: remove it \(e.g. 'bm25 ::warning::injected'\)"),
    ('title: "a\\x1b[31mred"\nruns:\n  bm25:\n    format: pairs\n    data: {q1: [[d1], [d1]]}\nmetrics: [mrr]\n',
     r"eval.yaml:1: title: the report title name .*holds a control character \('\\x1b'"),
    ('title: x\nruns:\n  bm25:\n    format: pairs\n    data: {q1: [[d1], [d1]]}\n'
     'metrics: [{metric: mrr, label: "m\\trr"}]\n', r"the metric label name 'm\\trr' holds a control character"),
])
def test_a_name_with_a_control_character_is_refused_at_the_config_door(tmp_path: Path, config: str,
                                                                        said: str) -> None:
    from evalbridge.config import load_configs

    (tmp_path / "eval.yaml").write_text(config)
    with pytest.raises(eb.InputError, match=said):
        load_configs(tmp_path / "eval.yaml")


def test_a_label_with_a_control_character_is_refused_at_the_python_door() -> None:
    with pytest.raises(eb.InputError, match=r"the metric label name 'P\\n5' holds a control character"):
        eb.evaluate(QRELS, RUN, {"P\n5": "P@5"})


@pytest.mark.parametrize("name", ["../x", "a/b", "a\\b", ".hidden"])
def test_a_system_name_that_would_climb_or_hide_as_a_file_is_refused_with_the_fix(tmp_path: Path, name: str,
                                                                                   capsys: pytest.CaptureFixture) -> None:
    config = tmp_path / "eval.yaml"
    config.write_text(CONFIG.replace("  faq:", f"  {json_quote(name)}:").format(gates="")
                      + "output:\n  dir: reports/demo\n  system_json: true\n")
    code = main(["run", str(config), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "Fix: rename it" in err and ("path separator" in err or "leading dot" in err), err
    assert not (tmp_path / "reports").exists() or not list((tmp_path / "reports").rglob("*.json"))


def json_quote(text: str) -> str:
    import json

    return json.dumps(text)


def _unescaped_ampersands(row: str) -> int:
    return len(re.findall(r"(?<!\\)&", row))


@given(system=names)
def test_any_system_name_keeps_the_latex_csv_and_html_shapes(system: str) -> None:
    import csv
    import io
    from html import escape

    from evalbridge.common.escaping import csv_cell
    from evalbridge.reports.renderers.csv import render_csv
    from evalbridge.reports.renderers.latex import render_latex

    results = eb.evaluate(QRELS, RUN, ["P@1", "ndcg@10"])
    report = Report({system: results, "other": results}, title=system)
    plain = render_latex(Report({"x": results, "other": results}, title="x"))
    latex = render_latex(report)
    rows = [line for line in latex.split("\n") if line.endswith(r"\\")]
    assert len(rows) == 3 and all(_unescaped_ampersands(row) == 2 for row in rows), rows
    assert latex.count("\n") == plain.count("\n") and not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", latex)
    table = list(csv.reader(io.StringIO(render_csv(report))))
    assert table[1][0] == csv_cell(system) and len(table[1]) == len(table[0])  # a formula is neutralised
    from evalbridge.reports.renderers.terminal import render_terminal

    terminal = render_terminal(report).split("\n")
    assert terminal[4].startswith("other") and not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", "\n".join(terminal))
    html, plain_html = report._repr_html_(), Report({"x": results, "other": results}, title="x")._repr_html_()
    assert f"<td>{escape(system)}</td>" in html  # the name is one cell's text, escaped
    assert all(html.count(tag) == plain_html.count(tag) for tag in ("<tr>", "<td>", "<th>", "<h4>", "<table"))


def test_a_gate_line_says_whether_the_gap_is_within_noise_when_the_statistics_know() -> None:
    """With a comparison (paired test, bootstrap intervals) the line says within or beyond noise; without, nothing."""
    from evalbridge.decisions.gates import check_gates, parse_gates
    from evalbridge.ci.testing import gate_line

    qrels = {f"q{i}": {"d1": 1} for i in range(12)}
    good = {f"q{i}": {"d1": 0.9, "x": 0.1} for i in range(12)}
    noisy = {f"q{i}": ({"d1": 0.9, "x": 0.1} if i % 2 else {"x": 0.9, "d1": 0.1}) for i in range(12)}
    results = {"bm25": eb.evaluate(qrels, good, ["P@1"]), "dense": eb.evaluate(qrels, noisy, ["P@1"])}
    comparison = eb.compare(qrels, {"bm25": good, "dense": noisy}, ["P@1"], baseline="bm25", n_resamples=2000)
    absolute, relative = check_gates(parse_gates({"dense: P@1": [">= 0.55", ">= baseline - 0.1"]}), results,
                                     baseline="bm25")
    assert gate_line(absolute, comparison).endswith("within noise: the threshold is inside the 95% CI "
                                                    f"[{comparison.interval('dense', 'P@1').ci_low:.4f}, "
                                                    f"{comparison.interval('dense', 'P@1').ci_high:.4f}]")
    assert "beyond noise: the difference from bm25 is significant (p = " in gate_line(relative, comparison)
    assert "noise" not in gate_line(absolute)
