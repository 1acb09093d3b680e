"""report.html, the ``html`` report format: one self-contained page, its numbers those of report.json, names
escaped, reachable from every door; then the same page opened in headless Chromium (Debian's ``chromium``,
driven by Playwright): no console error, no request leaving the file, sortable tables, a screenshot that is
not blank."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.reports.report import Report, render
from evalbridge.decisions.compare import compare_systems
from evalbridge.decisions.gates import check_gates, parse_gates

HOSTILE = ["<script>alert(1)</script>", "\"quoted' & <b>bold</b>", "</table><h1>x", "$\\frac{a}{b}$ cost $5"]
QRELS = {f"q{i}": {"d1": 1, "d2": i % 3, "d3": 0} for i in range(12)}
RUNS = {HOSTILE[0]: {q: {"d3": 0.9, "d1": 0.5, "d2": 0.1} for q in QRELS},
        HOSTILE[1]: {q: {"d1": 0.9, "d2": 0.8, "d3": 0.1} for q in QRELS},
        HOSTILE[2]: {q: {"d2": 0.9, "d1": 0.8 if int(q[1:]) % 2 else 0.0, "d3": 0.1} for q in QRELS}}
METRICS = {HOSTILE[3]: "nDCG@3", "P@1": "P@1", "RR": "RR"}


@pytest.fixture(scope="module")
def report() -> Report:
    results = {name: eb.evaluate(QRELS, run, METRICS) for name, run in RUNS.items()}
    comparison = compare_systems(results, list(METRICS), baseline=HOSTILE[0], n_resamples=200)
    gates = check_gates(parse_gates({"P@1": ">= 0.5"}), results, baseline=HOSTILE[0])
    return Report(results=results, title="<i>hostile</i> & \"names\"", comparison=comparison, gates=gates,
                  provenance={"seed": 0, "note": "</pre><script>alert(2)</script>"})


class _Page(HTMLParser):
    """Tags, script bodies and each table's text cells, as a browser's parser reads them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.scripts: list[str] = []
        self.tables: list[list[list[str]]] = []
        self._open: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._open.append(tag)
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        if self._open and self._open[-1] == tag:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._open and self._open[-1] == "script":
            self.scripts.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


def test_the_page_is_one_file_with_no_address_outside_it(report: Report) -> None:
    """Styles and the script are inline, every plot an inline <svg>; no src=, no link, no http(s) address, and a
    Content-Security-Policy that allows no source outside the page."""
    text = render(report, "html")
    page = _parse(text)
    assert page.tags.count("script") == 1 and "svg" in page.tags and "link" not in page.tags
    assert not re.search(r"\ssrc\s*=", text) and "@import" not in text and "url(http" not in text
    assert not re.search(r"https?://(?!www\.w3\.org/)", text)  # namespaces of the SVG elements only
    assert "default-src 'none'" in text and "'unsafe-inline'" not in text.split("script-src")[1].split(";")[0]


def test_hostile_names_stay_text_in_every_table(report: Report) -> None:
    """System names, a metric label, the title and the provenance with tags and quotes are text: the one
    script is the page's own, and the summary table has one row per system whose first cell is the name."""
    text = render(report, "html")
    page = _parse(text)
    assert len(page.scripts) == 1 and "alert" not in page.scripts[0]
    assert "<script>alert" not in text and "</table><h1>" not in text
    summary = page.tables[0]
    assert summary[0][:2] == ["system", HOSTILE[3]]
    assert [row[0] for row in summary[1:]] == list(RUNS)
    assert f"<title>{'&lt;i&gt;hostile&lt;/i&gt; &amp; &quot;names&quot;'}</title>" in text


def test_the_numbers_of_the_page_are_those_of_report_json(report: Report) -> None:
    """Each mean's data-value in the summary table is the JSON report's number, exactly; its text is that
    number to the report's digits."""
    data = json.loads(render(report, "json"))
    text = render(report, "html")
    summary = text.split('class="sortable summary"')[1].split("</table>")[0]
    rows = re.findall(r'<tr><th scope="row"><span class="name">(.*?)</span>.*?</th>(.*?)</tr>', summary)
    assert len(rows) == len(RUNS)
    import html

    for name, cells in rows:
        values = re.findall(r'data-value="([^"]*)"><span class="mean">([^<]*)</span>', cells)
        expected = data["systems"][html.unescape(name)]["metrics"]
        assert [float(v) for v, _ in values] == [expected[label] for label in data["metrics"]]
        assert [shown for _, shown in values] == [f"{expected[label]:.4f}" for label in data["metrics"]]


def test_every_door_writes_the_same_page(report: Report, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Report.to_html(path) (also of one system's results, or of a comparison alone), ``evalbridge eval --format
    html -o`` and a config's ``formats: [html]`` write the renderer's page; to_html refuses a folder (not a regular
    file) before rendering."""
    written = report.to_html(tmp_path / "page.html")
    assert written.read_text(encoding="utf-8") == render(report, "html")
    one = next(iter(report.results.values()))
    alone = Report(results={"<bm25>": one}, title="evalbridge: <bm25>").to_html(tmp_path / "one.html")
    assert alone.read_text(encoding="utf-8") == render(Report(results={"<bm25>": one}, title="evalbridge: <bm25>"),
                                                       "html")
    with pytest.raises(eb.InputError, match="folder"):
        report.to_html(tmp_path)
    # a comparison alone: its means, markers and intervals, and its pairs; the fragment without a path
    comparison = report.comparison
    assert comparison is not None and comparison.to_html().startswith("<table>")
    page = Report(results={}, comparison=comparison, title="evalbridge comparison").to_html(
        tmp_path / "comparison.html").read_text(encoding="utf-8")
    parsed = _parse(page)
    assert [row[0] for row in parsed.tables[0][1:]] == list(RUNS) and parsed.tables[0][0][1] == HOSTILE[3]
    for interval in comparison.intervals:
        assert f'data-value="{interval.mean!r}"><span class="mean">' in page
    assert page.count("▲") + page.count("▼") >= sum(r.significant and r.delta != 0 for r in comparison.rows)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "qrels.json").write_text(json.dumps(QRELS))
    for name, run in list(RUNS.items())[1:]:
        (tmp_path / f"{list(RUNS).index(name)}.json").write_text(json.dumps(run))
    assert main(["eval", "qrels.json", "1.json", "2.json", "-m", "P@1", "--format", "html", "-o", "cli.html"]) == 0
    config = tmp_path / "eval.yaml"
    (tmp_path / "queries.csv").write_text("query_id,kind\n" + "".join(f"{q},<k{int(q[1:]) % 2}>\n" for q in QRELS))
    config.write_text(json.dumps({"qrels": "qrels.json", "runs": {"1": "1.json", "2": "2.json"}, "metrics": ["P@1"],
                                  "comparison": {"baseline": "1", "n_resamples": 200}, "diff": True,
                                  "slices": {"by": "kind", "file": "queries.csv"},
                                  "output": {"dir": "out", "formats": ["html"]}}))
    outcome = eb.run_config(eb.load_config(config))
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert page == render(outcome.report, "html")
    # the sections of the analyses (each run diff) and of the slices, their tables sortable, names escaped
    assert outcome.report.analyses["diff"] and outcome.report.slices is not None
    for anchor in ("diffs-", "slices"):
        section = page.split(f'<section id="{anchor}')[1].split("</section>")[0]
        assert '<table class="sortable">' in section and "<table>" not in section
    assert "&lt;k0&gt;" in page and "<k0>" not in page
    assert _parse((tmp_path / "cli.html").read_text(encoding="utf-8")).tables[0][0] == ["system", "P@1", "queries"]


# ---------------------------------------------------------------- in a real browser



def _open(browser: Any, path: Path) -> tuple[Any, list[str], list[str]]:
    """The page at ``path`` loaded; (page, console errors and page errors, every address requested)."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    requested: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("dialog", lambda dialog: (errors.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    page.on("request", lambda request: requested.append(request.url))
    page.goto(path.resolve().as_uri(), wait_until="load")
    return page, errors, requested


@pytest.mark.slow
def test_in_chromium_the_page_loads_offline_with_the_json_numbers_and_sorts(report: Report, browser: Any,
                                                                          tmp_path: Path) -> None:
    """The page loads with no console error and no request but itself; the summary table's numbers (read by the
    browser) are report.json's; a click on a metric heading sorts the rows ascending by it, a second descending;
    the hostile names are shown as written; a full-page screenshot is written and is not blank."""
    path = report.to_html(tmp_path / "report.html")
    data = json.loads(render(report, "json"))
    page, errors, requested = _open(browser, path)
    assert errors == [] and requested == [path.resolve().as_uri()]
    read = page.evaluate("""() => Array.from(document.querySelectorAll("table.summary tbody tr")).map(row => ({
        name: row.querySelector(".name").textContent,
        values: Array.from(row.querySelectorAll("td")).map(td => td.getAttribute("data-value")),
        shown: Array.from(row.querySelectorAll("td .mean")).map(span => span.textContent)}))""")
    assert [r["name"] for r in read] == list(RUNS)
    for row in read:
        expected = data["systems"][row["name"]]["metrics"]
        assert [float(v) for v in row["values"][:len(METRICS)]] == [expected[m] for m in data["metrics"]]
        assert row["shown"] == [f"{expected[m]:.4f}" for m in data["metrics"]]
    label = "P@1"
    column = ["system", *data["metrics"], "queries"].index(label)
    heading = page.locator("table.summary thead th").nth(column)
    order = sorted(RUNS, key=lambda s: (data["systems"][s]["metrics"][label], list(RUNS).index(s)))
    names = "() => Array.from(document.querySelectorAll('table.summary tbody .name')).map(s => s.textContent)"
    heading.click()
    assert page.evaluate(names) == order and heading.get_attribute("aria-sort") == "ascending"
    heading.click()
    descending = sorted(RUNS, key=lambda s: (-data["systems"][s]["metrics"][label], list(RUNS).index(s)))
    assert page.evaluate(names) == descending and heading.get_attribute("aria-sort") == "descending"
    assert page.locator("h1").inner_text() == report.title
    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert errors == [] and requested == [path.resolve().as_uri()]
    _not_blank(shot)


def _not_blank(png: Path, *, full_page: bool = True) -> None:
    """The screenshot has text and plots: many colours, and a good share of pixels that are not background."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(png).convert("RGB"))
    assert (pixels.shape[0] > 900 if full_page else pixels.shape[0] == 1000) and pixels.shape[1] == 1280
    background = (pixels == pixels[0, 0]).all(axis=2)
    assert 0.02 < 1 - background.mean() < 0.9
    assert len(np.unique(pixels.reshape(-1, 3), axis=0)) > 64


@pytest.mark.slow
def test_the_readme_picture_is_taken_in_chromium_from_the_examples(browser: Any, tmp_path: Path) -> None:
    """tools/report_picture.py (``make report-picture``; its main launches Chromium as the fixture does) renders
    configs/dl19.yaml (the runs in examples/) as
    report.html and photographs it in Chromium: a PNG that is not blank; the README shows docs/img/report.png."""
    import sys

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tools"))
    try:
        import report_picture
    finally:
        sys.path.remove(str(root / "tools"))
    out = tmp_path / "report.png"
    assert report_picture.picture(browser, out) == out
    _not_blank(out, full_page=False)
    assert (root / "docs" / "img" / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert "](docs/img/report.png)" in (root / "README.md").read_text(encoding="utf-8")
