"""Benchmark the run diff: issue 26's size, 100,000 queries x 5 systems x 5 metrics, against evaluating the runs.

Usage::

    .venv/bin/python bench/diff.py                    # 100,000 queries x depth 100 (10M rows per run), ~2-4 min
    .venv/bin/python bench/diff.py --queries 10000    # smaller, on a busy machine

Goal (issue 26): the diff <= 2 x the time of evaluating the runs, peak memory <= 1.5 x; ratios in one run.

The qrels and a baseline run come from ``bench/data.py`` (fixed seed); the four other systems rank the same
documents with noise added to the scores (so their top 10s differ). Every run is a columnar ``Run`` (what the
readers of large TREC files build). Each row runs in a fresh worker process: the inputs are built there (not
timed), then

* ``evaluate``: ``eb.evaluate`` of the five runs (the results kept, as a report keeps them);
* ``diff report``: what a config's ``diff:`` section costs: ``eb.evaluate`` of the five runs once each, then
  ``diff_results`` of every other system against the baseline (the default 10 largest drops and gains of each
  metric detailed);
* ``eb.diff x 4``: four calls of ``eb.diff(qrels, baseline, system)``: each evaluates both of its runs.

Wall time (median of ``--repeat`` workers) and peak memory growth (``VmHWM`` reset through
``/proc/self/clear_refs``, minus the RSS before the call, as in ``bench/run.py``). Results go to
``bench/results/diff-<date>.md``; speed is never asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import against, interleaved, measured, written  # noqa: E402 - bench/ is on the path

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
SYSTEMS = 5
MODES = ("evaluate", "diff report", "eb.diff x 4")


def _strings(prefix: str, numbers: np.ndarray) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.scalar(prefix), pa.array(numbers).cast(pa.string()), "")


def inputs(queries: int, depth: int) -> tuple[Any, list[Any]]:
    """The qrels and the five columnar runs (``s0`` the baseline)."""
    from data import generate

    from evalbridge.fast.rows import build_table
    from evalbridge.model.data import Qrels, Run

    data = generate(queries, depth, seed=0)
    qrels = Qrels(build_table(_strings("q", data.qrels_query), _strings("d", data.qrels_doc),
                              data.qrels_grade.astype(np.float64), True))
    query, doc = _strings("q", data.run_query), _strings("d", data.run_doc)
    rng = np.random.default_rng(1)
    runs = []
    for s in range(SYSTEMS):
        scores = data.run_score if s == 0 else np.round(data.run_score + rng.normal(0, 0.3, data.run_rows), 6)
        runs.append(Run(build_table(query, doc, scores, False), name=f"s{s}"))
    return qrels, runs


def work(mode: str, queries: int, depth: int) -> dict[str, float]:
    import warnings

    import evalbridge as eb
    from evalbridge.decisions.diffing import diff_results

    warnings.simplefilter("ignore")
    qrels, runs = inputs(queries, depth)
    eb.evaluate(qrels, runs[0], METRICS)  # warm-up: imports, first allocations

    def report() -> list:
        results = [eb.evaluate(qrels, run, METRICS) for run in runs]
        return [diff_results(qrels, runs[0], run, results[0], res) for run, res in zip(runs[1:], results[1:])]

    calls = {"evaluate": lambda: [eb.evaluate(qrels, run, METRICS) for run in runs], "diff report": report}
    return measured(calls.get(mode, lambda: [eb.diff(qrels, runs[0], run, METRICS) for run in runs[1:]]))[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2, help="workers per row (median)")
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.queries, args.depth)))
        return
    seconds, peak, _ = interleaved(__file__, MODES, ["--queries", str(args.queries), "--depth", str(args.depth)],
                                   args.repeat)
    lines = against(seconds, peak, MODES, "evaluate")
    size = (f"{args.queries:,} queries x depth {args.depth} ({args.queries * args.depth / 1e6:,.0f}M rows per run) x "
            f"{SYSTEMS} systems x {len(METRICS)} metrics, columnar runs; goal: diff <= 2.0 x evaluate, peak <= 1.5 x")
    written("diff", "run diff bench", size, lines, args.repeat)


if __name__ == "__main__":
    main()
