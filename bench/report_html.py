"""Benchmark report.html (the ``html`` report format): 5 systems x 5 metrics x 100,000 queries, time and size.

Usage::

    .venv/bin/python bench/report_html.py                    # 100,000 queries (issue 28's size), 3 repetitions
    .venv/bin/python bench/report_html.py --queries 10000    # smaller, on a busy machine

The per-query values are drawn at random (seed 11) in the shapes the metrics have (RR@10 in {0, 1, 1/2, ...,
1/10}, P@10 in tenths, nDCG@10 / AP / R@100 continuous with a share of zeros), so the box plots have the outliers
and ties real runs have; the results are built directly (rendering does not depend on how the values were
computed). A comparison with the first system (200 resamples: the page shows its intervals and markers; how many
resamples were drawn does not change the page's cost) and a gate per system are computed before the clock starts,
and matplotlib is imported and warmed up by one page of 1,000 queries. Timed, the median of ``--reps``:

* the page: ``render(report, "html")`` and the file written (:meth:`Report.to_html`);
* the anchors, on the same report: ``report.json`` (the whole report as JSON), and the plots the page holds
  written as SVG files the way ``output.plots`` writes them (:func:`plot_distribution` and :func:`plot_differences`
  of each metric): the ratios page / JSON and page / plots say what the page costs beyond them.

Results are printed and written to ``bench/results/report-html-<date>.md``. Speed is never asserted in the tests.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
SYSTEMS = ["bm25", "bm25+rm3", "splade", "colbert", "hybrid"]


def _values(metric: str, queries: int, rng: Any, shift: float) -> Any:
    """``queries`` per-query values shaped like ``metric``'s."""
    import numpy as np

    if metric == "RR@10":
        ranks = rng.geometric(0.45 + shift, queries)
        return np.where(ranks <= 10, 1.0 / ranks, 0.0)
    if metric == "P@10":
        return rng.binomial(10, 0.3 + shift, queries) / 10
    values = rng.beta(1.2 + 4 * shift, 2.0, queries)
    return np.where(rng.random(queries) < 0.1, 0.0, values)


def report(queries: int) -> Any:
    """A Report of the five systems (per-query values at random, seed 11), compared with the first, gated."""
    import numpy as np

    import evalbridge as eb
    from evalbridge.reports.report import Report
    from evalbridge.evaluation.results import Results
    from evalbridge.decisions.compare import compare_systems
    from evalbridge.decisions.gates import check_gates, parse_gates

    base = eb.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, METRICS)
    ids = [f"q{i}" for i in range(queries)]
    rng = np.random.default_rng(11)
    results = {}
    for n, system in enumerate(SYSTEMS):
        values = {m: dict(zip(ids, _values(r.label, queries, rng, 0.03 * n).tolist()))
                  for m, r in zip(base.metrics, base.requests)}
        results[system] = Results(base.metrics, values, replace(base.provenance, queries_evaluated=queries),
                                  requests=base.requests)
    comparison = compare_systems(results, METRICS, baseline=SYSTEMS[0], n_resamples=200, seed=11)
    gates = check_gates(parse_gates({"nDCG@10": ">= baseline"}), results, baseline=SYSTEMS[0])
    return Report(results=results, comparison=comparison, gates=gates,
                  title=f"{len(SYSTEMS)} systems x {len(METRICS)} metrics x {queries:,} queries")


def _median(reps: int, call: Any) -> tuple[float, float]:
    """(median wall seconds, median CPU seconds of this process) of ``reps`` calls: on a shared machine the CPU
    time says what the call costs, the wall time what it took."""
    wall, cpu = [], []
    for _ in range(reps):
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    from evalbridge.reports.plots import plot_differences, plot_distribution
    from evalbridge.reports.report import render

    report(1_000).to_html(Path(tempfile.mkdtemp(prefix="evalbridge-bench-html-")) / "warm.html")  # imports, fonts
    page_report = report(args.queries)
    folder = Path(tempfile.mkdtemp(prefix="evalbridge-bench-html-"))
    target = folder / "report.html"

    def plots() -> None:
        for label in page_report.labels:
            values = {s: r.query(label) for s, r in page_report.results.items()}
            plot_distribution(values, label, folder / f"distribution_{len(label)}", formats=("svg",))
            plot_differences(values, SYSTEMS[0], label, folder / f"difference_{len(label)}", formats=("svg",))

    page = _median(args.reps, lambda: page_report.to_html(target))
    size = target.stat().st_size
    rendered = _median(args.reps, lambda: render(page_report, "html"))
    json_time = _median(args.reps, lambda: render(page_report, "json"))
    plot_time = _median(args.reps, plots)
    load = os.getloadavg()[0]
    rows = [("report.html written (Report.to_html)", page),
            ("  of which rendered (render(report, 'html'))", rendered),
            ("anchor: report.json rendered", json_time),
            ("anchor: the page's plots written as SVG files (output.plots)", plot_time)]
    table = [f"| {what} | {wall:.2f} | {cpu:.2f} |" for what, (wall, cpu) in rows]
    table += [f"| report.html size | {size / 1e6:.2f} MB | |",
              f"| ratio page / report.json | {page[0] / json_time[0]:.0f} | {page[1] / json_time[1]:.0f} |",
              f"| ratio page / its plots as files | {page[0] / plot_time[0]:.2f} | {page[1] / plot_time[1]:.2f} |"]
    lines = [f"# report.html: {len(SYSTEMS)} systems x {len(METRICS)} metrics x {args.queries:,} queries", "",
             f"{datetime.datetime.now():%Y-%m-%d %H:%M}, load {load:.1f}, {os.cpu_count()} cores, "
             f"{args.reps} repetitions, medians", "", "| what | wall s | CPU s |", "|---|---|---|", *table, "",
             "goal (issue 28): report.html in <= 10 s and <= 5 MB at 100,000 queries"]
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"report-html-{datetime.date.today()}.md"
    out.write_text(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
