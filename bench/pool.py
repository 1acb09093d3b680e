"""Benchmark depth pooling (``eb.pool``): issue 27's size, 100 runs x 5,000 queries x depth 1,000, pooled at depth 100.

Usage::

    .venv/bin/python bench/pool.py                          # 100 runs x 5,000 queries x 1,000 (500M run rows)
    .venv/bin/python bench/pool.py --runs 10 --queries 1000 # smaller, on a busy machine

Each run is a columnar ``Run`` (what the readers of large TREC files build) made on demand from a fixed seed
when ``pool`` asks for it, so, as with runs read from files one at a time, only one run's 5M rows exist at
once. Every query's documents come from its own 3,000 candidates (the runs overlap as real runs do), scores
descending with a tie group in one query of four; the qrels judge 100 of each query's candidates. The time
includes building each run (its doc ids, hashes): the time spent making runs inside the call is measured as
they are made and subtracted, so the row says what pooling costs on top of having the runs. Peak memory is VmHWM
growth over the process before the call (qrels made, imports done); the floor beside it is the growth of making
and holding one run alone (what any use of these runs costs, pooled or not). Results go to
``bench/results/pool-<date>.md``; speed is never asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CANDIDATES = 3000


def _strings(prefix: str, numbers: np.ndarray) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pa.scalar(prefix), pa.array(numbers).cast(pa.string()), "")


def make_run(seed: int, queries: int, depth: int) -> Any:
    """One columnar run: per query ``depth`` of its candidates, scores descending (ties in a quarter of them)."""
    from evalbridge.fast.rows import build_table
    from evalbridge.model.data import Run

    rng = np.random.default_rng(seed)
    picks = np.argsort(rng.random((queries, CANDIDATES)), axis=1)[:, :depth]
    docs = (np.arange(queries)[:, None] * CANDIDATES + picks).reshape(-1)
    scores = np.tile(np.linspace(depth, 1, depth), queries)
    position = np.tile(np.arange(depth), queries)
    tied = np.repeat(rng.random(queries) < 0.25, depth) & (position % 10 < 3)  # ranks 10i+1..10i+3 tie
    group_start = np.arange(len(scores)) - position % 10
    scores[tied] = scores[group_start[tied]]
    query_of = np.repeat(np.arange(queries), depth)
    table = build_table(_strings("q", query_of), _strings("d", docs), scores, False)
    return Run(table, name=f"run{seed}")


def make_qrels(queries: int) -> Any:
    from evalbridge.fast.rows import build_table
    from evalbridge.model.data import Qrels

    rng = np.random.default_rng(12345)
    judged = np.sort(np.argsort(rng.random((queries, CANDIDATES)), axis=1)[:, :100], axis=1)
    docs = (np.arange(queries)[:, None] * CANDIDATES + judged).reshape(-1)
    grades = rng.integers(0, 3, len(docs)).astype(np.float64)
    table = build_table(_strings("q", np.repeat(np.arange(queries), 100)), _strings("d", docs), grades, True)
    return Qrels(table)


class LazyRuns(Sequence[Any]):
    """The runs, each made when asked for (as a list of file paths is read one at a time)."""

    def __init__(self, n: int, queries: int, depth: int) -> None:
        self.n, self.queries, self.depth = n, queries, depth
        self.making = 0.0  # seconds spent making runs

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self.n))]
        if not 0 <= i < self.n:
            raise IndexError(i)
        start = time.perf_counter()
        run = make_run(i, self.queries, self.depth)
        self.making += time.perf_counter() - start
        return run


def peak_kib() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--queries", type=int, default=5000)
    parser.add_argument("--depth", type=int, default=1000, help="documents per query in each run")
    parser.add_argument("--pool-depth", type=int, default=100)
    args = parser.parse_args()
    import evalbridge as eb

    qrels = make_qrels(args.queries)
    runs = LazyRuns(args.runs, args.queries, args.depth)
    make_run(999, args.queries, args.depth)  # warm-up: imports, first allocations
    Path("/proc/self/clear_refs").write_text("5")
    rss_before = peak_kib()
    held = make_run(998, args.queries, args.depth)
    floor = (peak_kib() - rss_before) / 1024
    del held
    Path("/proc/self/clear_refs").write_text("5")
    rss_before = peak_kib()
    start = time.perf_counter()
    result = eb.pool(qrels, runs, depth=args.pool_depth)
    total = time.perf_counter() - start
    peak = (peak_kib() - rss_before) / 1024
    pooling, per_run = total - runs.making, runs.making / args.runs
    rows = args.runs * args.queries * args.depth
    line = (f"| pool, {args.runs} runs x {args.queries:,} queries x {args.depth:,} ({rows / 1e6:,.0f}M rows), depth "
            f"{args.pool_depth} | {total:.1f} s with the runs made on demand ({per_run:.2f} s each) | "
            f"{pooling:.1f} s | {peak:,.0f} MiB | {floor:,.0f} MiB | {result.size():,} pairs |")
    header = ("| row | wall | pooling alone | peak growth | floor: one run made and held | pool |\n"
              "|---|---|---|---|---|---|\n")
    print(header + line)
    out = HERE / "results" / f"pool-{datetime.date.today().isoformat()}.md"
    out.write_text(f"# eb.pool bench, {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC\n\n"
                   f"{header}{line}\n")


if __name__ == "__main__":
    main()
