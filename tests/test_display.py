"""How Results, CrossCheck and Report show themselves: a short repr, a readable str, and HTML in Jupyter
(checked by executing a notebook and reading the HTML it displayed)."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge.reports.report import Report
from evalbridge.decisions.compare import compare_systems

QRELS = {f"q{i}": {"d1": 1, "d2": i % 3, "d3": 0} for i in range(12)}
RUNS = {"bm25": {q: {"d3": 0.9, "d1": 0.5, "d2": 0.1} for q in QRELS},
        "dense<v2>": {q: {"d1": 0.9, "d2": 0.8, "d3": 0.1} for q in QRELS}}
METRICS = ["P@1", "nDCG@3", "RR"]


@pytest.fixture(scope="module")
def results() -> dict[str, eb.Results]:
    return {name: eb.evaluate(QRELS, run, METRICS) for name, run in RUNS.items()}


@pytest.fixture(scope="module")
def report(results) -> Report:  # noqa: ANN001
    comparison = compare_systems(results, METRICS, baseline="bm25", n_resamples=200)
    return Report(results=results, title="bm25 & dense", comparison=comparison, provenance={"seed": 0})


def test_results_repr_is_one_short_line_even_with_many_metrics() -> None:
    """repr names the first metrics, counts the others, and gives queries and backend on one line."""
    many = [f"P@{k}" for k in range(1, 21)]
    text = repr(eb.evaluate(QRELS, RUNS["bm25"], many))
    assert "\n" not in text and len(text) < 160
    assert text.startswith("Results(P@1=0.0000, P@2=0.5000") and "(+14 metrics)" in text
    assert text.endswith("12 queries, backend=reference)")


def test_results_str_is_the_table_then_the_provenance(results) -> None:  # noqa: ANN001
    """print(results) shows one row per metric with its mean, then the provenance line."""
    lines = str(results["bm25"]).splitlines()
    assert lines[0].split() == ["metric", "what", "mean"]
    assert [line.split()[0] for line in lines[2:5]] == ["P@1", "nDCG@3", "RR"]
    assert lines[-1] == results["bm25"].provenance.summary()


def test_results_html_is_a_table_of_means_with_the_provenance_as_footnote(results) -> None:  # noqa: ANN001
    """_repr_html_ holds an HTML table with each metric and mean, then the escaped provenance summary."""
    html = results["bm25"]._repr_html_()
    assert "<table>" in html and "<td>nDCG@3</td>" in html
    assert f'<td style="text-align: right">{results["bm25"]["RR"]:.4f}</td>' in html
    footnote = f"<small>{escape(results['bm25'].provenance.summary())}</small>"
    assert "backend reference" in footnote and html.index("</table>") < html.index(footnote)


def test_report_str_is_the_terminal_rendering_and_repr_one_line(report) -> None:  # noqa: ANN001
    """print(report) is what the terminal renderer prints, never dataclass reprs; repr is one short line."""
    assert str(report) == report.to_text() == eb.reports.report.render(report, "terminal")
    assert "PairedComparison(" not in str(report) and "Results(" not in str(report)
    assert repr(report) == "Report('bm25 & dense': 2 systems x 3 metrics, 12 queries, baseline 'bm25')"
    assert report.to_markdown() == report.render("markdown")


def test_report_html_marks_significance_escapes_names_and_ends_with_the_provenance(report) -> None:  # noqa: ANN001
    """The HTML table has a ▲ where the comparison says significantly above, system names and the title
    are escaped, and the provenance (with the JSON block) closes the fragment."""
    html = report._repr_html_()
    assert "dense&lt;v2&gt;" in html and "bm25 &amp; dense" in html and "<v2>" not in html
    significant = [r for r in report.comparison.rows if r.significant and r.delta > 0]
    assert significant  # dense ranks the relevant d1 first: clearly better than bm25
    row = re.search(r"<tr><td>dense&lt;v2&gt;</td>(.*?)</tr>", html).group(1)
    assert row.count("▲") == len(significant)
    assert html.rindex("evalbridge-provenance") > html.rindex("</table>")
    assert "&quot;seed&quot;: 0" in html


def test_crosscheck_html_shows_agreement_differences_and_settings() -> None:
    """A cross-check with a tie difference shows its verdict, the agreement table, the difference with its
    cause, and the settings (conventions, reference column) as footnote."""
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"a": 0.5, "b": 0.5}}, ["RR"], backends=["pytrec_eval"],
                          ties="input")
    html = check._repr_html_()
    assert "OK: every difference explained" in html
    assert "<th>agree</th>" in html and "ties broken differently" in html
    assert "reference column: reference; ties input" in html
    assert repr(check) == "CrossCheck(ok=True, differences=1, unexplained=0, unsupported=0)"


NOTEBOOK_CELLS = [
    "import evalbridge as eb\n"
    "from evalbridge.reports.report import Report\n"
    "qrels = {'q1': {'d1': 1, 'd2': 2}, 'q2': {'d3': 1}}\n"
    "run = {'q1': {'d2': 0.9, 'd1': 0.5}, 'q2': {'d4': 0.9, 'd3': 0.2}}",
    "results = eb.evaluate(qrels, run, ['P@1', 'nDCG@2'])\nresults",
    "eb.crosscheck(qrels, run, ['P@1'], backends=['pytrec_eval'])",
    "Report(results={'bm25': results}, title='tiny notebook')",
]


@pytest.mark.slow
def test_a_notebook_displays_results_crosscheck_and_report_as_html(tmp_path: Path) -> None:
    """Executed by a real kernel, each object's last-expression output carries text/html with its table and
    the provenance footnote, and a short text/plain."""
    import nbformat

    from test_notebooks import execute

    path = tmp_path / "display.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS]), path)
    cells = execute(path, tmp_path).cells
    outputs = [cell.outputs[0]["data"] for cell in cells[1:]]
    results, check, report = outputs
    assert "<td>nDCG@2</td>" in results["text/html"]
    assert re.search(r"</table><p><small>backend reference [^<]*; 2 queries;", results["text/html"])
    assert results["text/plain"].startswith("Results(P@1=0.5000, nDCG@2=")
    assert "<th>agree</th>" in check["text/html"]
    assert re.search(r"</table><p><small>each library&#x27;s own conventions; atol", check["text/html"])
    assert check["text/plain"].startswith("CrossCheck(ok=True")
    assert "tiny notebook" in report["text/html"] and "<th>P@1</th>" in report["text/html"]
    assert "evalbridge-provenance" in report["text/html"] and "2 queries" in report["text/html"]
    assert report["text/plain"] == "Report('tiny notebook': 1 system x 2 metrics, 2 queries)"
