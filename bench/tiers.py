"""Benchmark the tiers of many systems: 100 systems x 5,000 queries x 1,000 resamples (issue 36), against its floor.

Usage::

    .venv/bin/python bench/tiers.py                                   # 100 x 5,000 x 1,000, ~1-2 min
    .venv/bin/python bench/tiers.py --systems 20 --queries 1000       # smaller, on a busy machine

Goal (issue 36): tiers and rank intervals of 100 systems x 5,000 queries x 1,000 resamples <= 30 s on two cores,
peak memory growth <= 1 GiB; the ratio to the floor in the same run.

The per-query values are uniform noise around a mean rising with the system (so the tiers overlap, as on a
leaderboard), as ``{system: {metric: {query: value}}}`` dicts, built before the clock starts. Each row runs in a
fresh worker process:

* ``tiers randomization``: ``evalbridge.decisions.tiers.tiers`` with the randomised Tukey HSD (the default), and the rank
  intervals' bootstrap;
* ``tiers bootstrap``: the same with the bootstrap of the maximum statistic (one set of resamples for both);
* ``topic set size``: ``eb.topic_set_size`` of the same values (V_E, then the three sizes at minD 0.01);
* ``floor``: what any implementation of the two must do: drawing the same permutations (``rng.permuted`` of the
  matrix, once a resample) and the same bootstrap indices, and one BLAS product of the counts with the scores.

Wall time (median of ``--repeat`` workers) and peak memory growth (``VmHWM`` reset through ``/proc/self/clear_refs``,
minus the RSS before the call, as in ``bench/run.py``). Results go to ``bench/results/tiers-<date>.md``; speed is
never asserted in the unit tests.
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

from run import interleaved, measured, written  # noqa: E402 - bench/ is on the path

MODES = ("tiers randomization", "tiers bootstrap", "topic set size", "floor")


def inputs(systems: int, queries: int) -> dict[str, dict[str, dict[str, float]]]:
    rng = np.random.default_rng(0)
    x = rng.random((systems, queries)) * 0.5 + np.linspace(0, 0.1, systems)[:, None]
    ids = [f"q{q:05d}" for q in range(queries)]
    return {f"s{i:03d}": {"nDCG@10": dict(zip(ids, row.tolist()))} for i, row in enumerate(x)}


def floor(results: dict[str, dict[str, dict[str, float]]], resamples: int) -> Any:
    from evalbridge.stats.tiers import bootstrap_means

    x = np.array([list(r["nDCG@10"].values()) for r in results.values()])
    rng = np.random.default_rng(1)
    for _ in range(resamples):
        rng.permuted(x, axis=0)
    return bootstrap_means(x, n_resamples=resamples, seed=0)


def work(mode: str, systems: int, queries: int, resamples: int) -> dict[str, float]:
    from evalbridge.decisions.tiers import tiers
    from evalbridge.decisions.topic_set_size import topic_set_size

    results = inputs(systems, queries)
    few = {k: results[k] for k in list(results)[:3]}
    tiers(few, n_resamples=10), topic_set_size(few)      # warm-up: imports (scipy), first allocations
    calls = {"floor": lambda: floor(results, resamples),
             "topic set size": lambda: topic_set_size(results, min_difference=0.01)}
    return measured(calls.get(mode, lambda: tiers(results, method=mode.split()[1], n_resamples=resamples)))[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, default=100)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=1, help="workers per row (median)")
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = ["--systems", str(args.systems), "--queries", str(args.queries), "--resamples", str(args.resamples)]
    if args.worker:
        print(json.dumps(work(args.worker, args.systems, args.queries, args.resamples)))
        return
    seconds, peak, _ = interleaved(__file__, MODES, sizes, args.repeat)
    lines = ["| row | wall (median) | x floor | peak growth |", "|---|---|---|---|"]
    lines += [f"| {mode} | {seconds[mode]:.2f} s | {seconds[mode] / seconds['floor']:.2f} | {peak[mode]:,.0f} MiB |"
              for mode in MODES]
    size = (f"{args.systems} systems x {args.queries:,} queries x {args.resamples:,} resamples, one metric; goal: "
            f"tiers <= 30 s, peak growth <= 1 GiB")
    written("tiers", "tiers bench", size, lines, args.repeat)


if __name__ == "__main__":
    main()
