"""report.html read in headless Chromium (Debian's ``chromium``, driven by Playwright) at 1400 and 400 CSS pixels:
every section has a working link in the navigation, the page never scrolls sideways (wide tables scroll inside
their box), collapsed sections open (by a click and by a link), every bar of the per-query differences names its
query on hover, and the page of the DL19 decision config (three systems, comparison, diffs, slices, gates, power,
diagnosis) is at most 8,000 px tall before any section is opened, its decision block on the first screen."""

from __future__ import annotations

from collections import Counter
import re
from pathlib import Path
from typing import Any

import pytest

import evalbridge as eb
from evalbridge.reports.report import Report

from dl19_decision import DL19, dl19_config

WIDTHS = (1400, 400)
#: the height of the first screen at each width (a laptop's window, a phone's)
SCREEN = {1400: 900, 400: 800}
#: the tallest the DL19 decision page may be at 1400 px, every collapsed section closed
TALLEST = 8000


@pytest.fixture(scope="module")
def dl19(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The DL19 decision config's report as report.html."""
    folder = tmp_path_factory.mktemp("dl19")
    report: Report = eb.run_config(eb.load_config(dl19_config(folder)), write=False).report
    return report.to_html(folder / "report.html")


def _open(browser: Any, path: Path, width: int) -> Any:
    page = browser.new_page(viewport={"width": width, "height": SCREEN[width]})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(path.resolve().as_uri(), wait_until="load")
    page.errors = errors
    return page


def _overflow(page: Any) -> tuple[int, int]:
    return page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")  # type: ignore[no-any-return]


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_every_section_is_linked_and_the_page_never_scrolls_sideways(browser: Any, dl19: Path, width: int) -> None:
    page = _open(browser, dl19, width)
    sections = page.evaluate("() => Array.from(document.querySelectorAll('main > section')).map(s => s.id)")
    links = page.evaluate("() => Array.from(document.querySelectorAll('nav a')).map(a => a.getAttribute('href'))")
    assert links == [f"#{anchor}" for anchor in sections] and len(sections) >= 10
    assert {"decision", "summary", "comparison", "gates", "metrics", "slices", "provenance"} <= set(sections)
    assert all(any(s.startswith(f"{key}-") for s in sections) for key in ("diffs", "power", "diagnosis"))
    scroll, viewport = _overflow(page)
    assert scroll <= viewport
    # opened, every section still fits: its wide tables scroll inside their own box
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    scroll, viewport = _overflow(page)
    assert scroll <= viewport
    assert page.errors == []
    page.close()


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_a_section_link_opens_its_collapsed_section_and_a_click_opens_it_too(browser: Any, dl19: Path,
                                                                           width: int) -> None:
    page = _open(browser, dl19, width)
    collapsed = page.evaluate("() => Array.from(document.querySelectorAll('main > section > details')).map("
                              "d => d.parentElement.id)")
    assert any(a.startswith("diffs-") for a in collapsed) and "provenance" in collapsed
    first, last = next(a for a in collapsed if a.startswith("diffs-")), collapsed[-1]
    details = f"#{first} > details"
    assert not page.eval_on_selector(details, "d => d.open")
    page.click(f'nav a[href="#{first}"]')
    page.wait_for_function(f"() => document.querySelector('{details}').open")
    top = page.eval_on_selector(f"#{first}", "s => s.getBoundingClientRect().top")
    assert -2 <= top < SCREEN[width] / 2  # the link took the reader there
    assert page.eval_on_selector(f"{details} table", "t => t.getBoundingClientRect().height") > 0
    summary = f"#{last} > details > summary"
    page.click(summary)
    assert page.eval_on_selector(f"#{last} > details", "d => d.open")
    scroll, viewport = _overflow(page)
    assert scroll <= viewport and page.errors == []
    page.close()


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_the_dl19_decision_page_is_short_and_opens_on_the_decision(browser: Any, dl19: Path, width: int) -> None:
    """At most 8,000 px at 1400 px with every section closed; the decision block whole on the first screen at both
    widths: at 1400 with its caveats and rule open, at 400 (a phone) with them folded under a summary that counts the
    caveats (one tap opens them)."""
    page = _open(browser, dl19, width)
    height = page.evaluate("() => document.documentElement.scrollHeight")
    if width == 1400:
        assert height <= TALLEST
    box = page.eval_on_selector("#decision", "s => { const r = s.getBoundingClientRect(); return [r.top, r.bottom]; }")
    assert 0 <= box[0] and box[1] <= SCREEN[width], box
    shown = page.inner_text("#decision")
    assert "splade-pp-ed: better than bm25 on nDCG@10" in shown and "gate FAILED" in shown
    grounds = "#decision details.grounds"
    assert page.eval_on_selector(grounds, "d => d.open") == (width == 1400)
    assert re.search(r"\d caveats? and how it was decided", page.inner_text(f"{grounds} > summary"))
    page.click(f"{grounds} > summary")
    assert page.eval_on_selector(grounds, "d => d.open") == (width != 1400)
    page.close()


@pytest.mark.slow
def test_every_bar_of_the_per_query_differences_names_its_query_on_hover(browser: Any, dl19: Path) -> None:
    """43 queries, two systems against BM25, four metrics: every bar has a title naming one query id with its Δ,
    each query once per panel."""
    qids = {line.split()[0] for line in (DL19 / "qrels.dl19-passage.txt").read_text().splitlines()}
    page = _open(browser, dl19, 1400)
    titles = page.evaluate("() => Array.from(document.querySelectorAll('svg g[id^=\"evalbridge-named-\"] > title'))"
                           ".map(t => [t.parentElement.id, t.textContent])")
    named = []
    for _, text in titles:
        found = re.fullmatch(r"(\S+): Δ [+-]\d\.\d{4}", text)
        assert found is not None, text
        named.append(found[1])
    assert Counter(named) == {q: 2 * 4 for q in qids}  # two panels (systems) per metric, four metrics
    page.close()
