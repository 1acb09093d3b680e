"""Benchmark slices: issue 26's size, 100,000 queries x 5 systems x 5 metrics, against evaluating the runs.

Usage::

    .venv/bin/python bench/slices.py                              # 100,000 queries x depth 100, 10,000 resamples
    .venv/bin/python bench/slices.py --test randomization         # the randomization test on each slice
    .venv/bin/python bench/slices.py --queries 10000              # smaller, on a busy machine

Goal (issue 26): slices <= 2 x the time of evaluating the runs, peak memory <= 1.5 x; ratios in one run.

The qrels and the five columnar runs are ``bench/diff.py``'s (``bench/data.py``, fixed seed). The queries are
in 8 slices of unequal sizes (one label each), and one query in ten in none. Each row runs in a fresh worker
process: the inputs are built there (not timed), then

* ``evaluate``: ``eb.evaluate`` of the five runs (the results kept, as a report keeps them);
* ``slices``: the same, then what a config's ``slices:`` section adds to a comparison
  (:func:`evalbridge.evaluation.slices.slice_table`: every slice's means and bootstrap intervals for every system and
  metric, every other system against the baseline with its interval and the comparison's test (``--test``,
  default the t-test), Benjamini-Hochberg) at the comparison's default 10,000 resamples.

Wall time (median of ``--repeat`` workers) and peak memory growth (``VmHWM`` reset, minus the RSS before the
call, as ``bench/run.py``). Results go to ``bench/results/slices-<date>.md``; speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from diff import METRICS, SYSTEMS, inputs  # noqa: E402 - bench/ is on the path
from run import against, interleaved, measured, written  # noqa: E402

MODES = ("evaluate", "slices")
SLICES = 8


def work(mode: str, queries: int, depth: int, resamples: int, test: str) -> dict[str, float]:
    import warnings

    import evalbridge as eb
    from evalbridge.decisions.compare import CORRECTIONS, TESTS
    from evalbridge.evaluation.slices import SliceLabels, slice_table

    warnings.simplefilter("ignore")
    qrels, runs = inputs(queries, depth)
    # slice k holds the queries whose number modulo 36 falls in [k(k+1)/2, (k+1)(k+2)/2): sizes 1..8 of 36,
    # the rest (modulo 36 >= 36 - ... none) spread; one in ten in no slice
    labels = {}
    for i, qid in enumerate(qrels):
        if i % 10 == 9:
            continue
        r = i % 36
        labels[qid] = (f"slice{next(k for k in range(SLICES) if r < (k + 1) * (k + 2) // 2 or k == SLICES - 1)}",)
    groups = SliceLabels(labels, "bench")
    eb.evaluate(qrels, runs[0], METRICS)  # warm-up: imports, first allocations

    def call() -> object:
        results = [eb.evaluate(qrels, run, METRICS) for run in runs]
        if mode != "slices":
            return results
        values = {f"s{s}": {r.label: res.values[r.metric] for r in res.requests} for s, res in enumerate(results)}
        return slice_table(values, groups, pairs=[(f"s{s}", "s0") for s in range(1, SYSTEMS)], test=test,
                           pvalues=TESTS[test].pvalues, adjust=CORRECTIONS["bh"].adjust, n_resamples=resamples)

    return measured(call)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2, help="workers per row (median)")
    parser.add_argument("--test", choices=("t", "randomization", "wilcoxon"), default="t",
                        help="the comparison's test of each slice's differences")
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.queries, args.depth, args.resamples, args.test)))
        return
    seconds, peak, _ = interleaved(__file__, MODES, ["--queries", str(args.queries), "--depth", str(args.depth),
                                                     "--resamples", str(args.resamples), "--test", args.test],
                                   args.repeat)
    lines = against(seconds, peak, MODES, "evaluate")
    size = (f"{args.queries:,} queries x depth {args.depth} x {SYSTEMS} systems x {len(METRICS)} metrics, "
            f"{SLICES} slices, {args.resamples:,} resamples, {args.test} test; goal: slices <= 2.0 x evaluate, peak <= 1.5 x")
    test = "" if args.test == "t" else f"-{args.test}"
    written(f"slices-{args.queries}-{args.resamples}{test}", "slices bench", size, lines, args.repeat)


if __name__ == "__main__":
    main()
