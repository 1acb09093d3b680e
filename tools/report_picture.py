"""The pictures of report.html in README.md (docs/img/report.png) and docs/outputs.md (docs/img/page-1400.png and
docs/img/page-400.png: the first screen at 1400 and at 400 CSS pixels), taken in headless Chromium from real data.

Runs ``configs/dl19.yaml`` (the TREC DL 2019 passage runs under ``examples/``: BM25, BM25+RM3, SPLADE++ ED,
43 judged queries, a comparison with BM25 and the published scores as gates) without writing its report folder,
renders the report as report.html (:meth:`evalbridge.Report.to_html`) into a temporary folder, opens it in
Debian's Chromium driven by Playwright, and photographs the top of the page in each window.

Usage::

    python tools/report_picture.py                       # rewrite docs/img/report.png and the page pictures
    python tools/report_picture.py --out /tmp/report.png # the README's picture somewhere else (page pictures beside it)
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "dl19.yaml"
OUT = ROOT / "docs" / "img" / "report.png"
#: the browser window photographed (CSS pixels): the summary table, the comparison and the gates
WINDOW = {"width": 1280, "height": 1000}
#: the pictures of docs/outputs.md: file name -> the window (a laptop's, a phone's)
PAGES = {"page-1400.png": {"width": 1400, "height": 900}, "page-400.png": {"width": 400, "height": 800}}


def picture(browser: Any, out: Path, pages: bool = False) -> Path:
    """Render configs/dl19.yaml as report.html and photograph the top of it in ``browser`` (a Playwright
    browser) into ``out``; with ``pages``, also each window of :data:`PAGES` into its file beside ``out``."""
    import evalbridge as eb

    report = eb.run_config(eb.load_config(CONFIG), write=False).report
    shots = {out: WINDOW} | ({out.parent / name: window for name, window in PAGES.items()} if pages else {})
    with tempfile.TemporaryDirectory() as folder:
        page_path = report.to_html(Path(folder) / "report.html")
        out.parent.mkdir(parents=True, exist_ok=True)
        for path, window in shots.items():
            page = browser.new_page(viewport=window)
            page.goto(page_path.resolve().as_uri(), wait_until="load")
            page.screenshot(path=str(path))
            page.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT, help=f"the PNG to write (default: {OUT.relative_to(ROOT)})")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium",
                        help="the Chromium executable (default: chromium on the PATH)")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=args.chromium)
        try:
            picture(browser, args.out, pages=True)
        finally:
            browser.close()
    print(f"wrote {args.out} and {', '.join(PAGES)} beside it", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
