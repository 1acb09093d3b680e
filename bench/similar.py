"""Benchmark the two verbs of issue 36 items 3-4 against their peers: a diff without judgements and fusion.

Usage::

    .venv/bin/python bench/similar.py                    # 2,000 queries x depth 100, two runs
    .venv/bin/python bench/similar.py --queries 500      # smaller, on a busy machine

Rows, each in one process after a warm-up call (numba's and scipy's first-call costs are not timed), ratios in
the same run:

* ``diff without qrels``: ``eb.diff(None, a, b)`` (RBO^a with its bounds, Jaccard@10, tau_b and tau_AP of every
  query, the 10 least similar detailed), against the ``rbo`` package's ``rbo_ext`` on the same rankings (its
  untied extrapolation alone: the peer floor of one RBO per query) and against ranking both runs alone
  (``rank`` of every query: the floor of any per-query comparison);
* ``fuse rrf`` / ``fuse wsum``: ``evalbridge.transforms.fusion.fuse`` of the two runs against ``ranx.fuse`` on ranx ``Run`` objects built
  from the same dicts (the conversion counted on both sides).

Peak memory growth as in ``bench/run.py`` (``VmHWM`` reset, minus the RSS before the call). Results go to
``bench/results/similar-<date>.md``; speed is never asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import machine, repeated  # noqa: E402 - bench/ is on the path


def runs(queries: int, depth: int, seed: int = 0) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Two runs of the same queries: B re-scores A's documents with noise and swaps a fifth of them for new ones;
    scores on a grid of 1/1000, so some tie (as BM25's do)."""
    rng = random.Random(seed)
    a, b = {}, {}
    for q in range(queries):
        docs = [f"d{q}-{i}" for i in range(depth)]
        a[f"q{q}"] = {d: round(1 - i / depth + rng.random() * 0.01, 3) for i, d in enumerate(docs)}
        kept = [d for d in docs if rng.random() > 0.2] + [f"n{q}-{i}" for i in range(depth // 5)]
        b[f"q{q}"] = {d: round(rng.random(), 3) for d in kept[:depth]}
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    import ranx
    from rbo import RankingSimilarity

    import evalbridge as eb
    from evalbridge.common.ranking import rank
    from evalbridge.transforms.fusion import fuse

    a, b = runs(args.queries, args.depth)
    run_a, run_b = eb.Run(a, name="a"), eb.Run(b, name="b")
    orders = {q: (rank(a[q]), rank(b[q])) for q in a}
    rows = [
        ("diff without qrels", lambda: eb.diff(None, run_a, run_b, p=0.9, ties="a")),
        ("  peer: rbo package rbo_ext", lambda: [RankingSimilarity(x, y).rbo_ext(p=0.9) for x, y in orders.values()]),
        ("  floor: rank both runs", lambda: [(rank(a[q]), rank(b[q])) for q in a]),
        ("fuse rrf", lambda: fuse({"a": run_a, "b": run_b}, method="rrf")),
        ("  peer: ranx.fuse rrf", lambda: ranx.fuse([ranx.Run(a), ranx.Run(b)], method="rrf")),
        ("fuse wsum", lambda: fuse({"a": run_a, "b": run_b}, method="wsum", params={"weights": [0.5, 0.5]})),
        ("  peer: ranx.fuse wsum", lambda: ranx.fuse([ranx.Run(a), ranx.Run(b)], method="wsum",
                                                     params={"weights": [0.5, 0.5]})),
    ]
    measured = {name: repeated(call, args.repeat) for name, call in rows}
    peers = {"diff without qrels": "  peer: rbo package rbo_ext", "fuse rrf": "  peer: ranx.fuse rrf",
             "fuse wsum": "  peer: ranx.fuse wsum"}
    lines = [f"# similar: {args.queries} queries x depth {args.depth}, two runs ({datetime.date.today()})", "",
             machine(), f"load average before: {os.getloadavg()[0]:.1f}", "",
             "| row | time | vs peer | peak growth |", "|---|---|---|---|"]
    for name, (seconds, peak) in measured.items():
        ratio = f"{seconds / measured[peers[name]][0]:.2f}" if name in peers else ""
        lines.append(f"| {name} | {seconds:.3f} s | {ratio} | {peak:.0f} MiB |")
    floor = measured["  floor: rank both runs"][0]
    lines += ["", f"diff without qrels / ranking both runs: {measured['diff without qrels'][0] / floor:.1f}x",
              f"load average after: {os.getloadavg()[0]:.1f}"]
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"similar-{datetime.date.today()}.md"
    out.write_text(text)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
