"""Benchmark a test collection's loop at TREC scale: 100 runs x 5,000 queries x depth 1,000 (500M pairs), pooled at
depth 100, judged, and diagnosed, in one process (issue 27's goal: within 120 s and 4 GiB on 2 cores).

Usage::

    .venv/bin/python bench/diagnose.py                       # the goal's size
    .venv/bin/python bench/diagnose.py --queries 500         # smaller, on a busy machine

The runs are generated with numpy, one at a time (seed 7), as a retriever hands them over: per query 1,000 doc
codes into a 1M-document corpus in rank order, with their scores; they are read into
:class:`evalbridge.fast.tops.TopLists` (:func:`~evalbridge.fast.tops.from_ranked`), which keeps each run's first 100
(only those matter for the pool at 100 and a metric at 10). How a run is made: a shared "good" order of the query's
documents (the first 5-60 relevant, graded 3/2/1) that the run enters a few places late and perturbs by swapping
neighbours, interleaved with documents of its own family of runs (20 families of 5 runs, each run shifted a little
within its family, 2% of them relevant): the pool has ~1,500 pairs per query and some relevant documents are found
by one run only, so the leave-one-run-out bias has something to find.

Timed, in one process: reading the runs (generation timed apart, by generating them once without reading),
``eb.pool`` at depth 100 (skipped, and said, when the verb is not there), the judge (the generator's grades of the
pooled pairs, as a columnar Qrels), and ``eb.diagnose(qrels, tops, "nDCG@10", pool_depth=100)``. Peak memory is the
process's ``ru_maxrss``. The result is printed and written to ``bench/results/diagnose-<date>.md``. Speed is never
asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import datetime
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

CORPUS = 1_000_000
STEP = 104_729          # prime, coprime with CORPUS: (a + i * STEP) mod CORPUS never repeats within a query
FAMILIES = 20
OWN_START = 1_100       # local indices of a family's own documents start here (the good order stays below)


def doc_code(query: np.ndarray, local: np.ndarray) -> np.ndarray:
    return (query * 7_919 + local * STEP) % CORPUS


def local_index(query: np.ndarray, code: np.ndarray) -> np.ndarray:
    return ((code - query * 7_919) * pow(STEP, -1, CORPUS)) % CORPUS


def grade_of(query: np.ndarray, local: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """The generator's truth: the first R_q of the good order graded 3/2/1 by thirds; 2% of the families' own
    documents graded 1; everything else 0."""
    r = relevant[query]
    good = np.where(local < r, 3 - (3 * local) // np.maximum(r, 1), 0)
    own = (local >= OWN_START) & ((local * 2_654_435_761) % 50 == 0)
    return np.where(local < OWN_START, good, own.astype(np.int64))


def runs(n_runs: int, n_queries: int, depth: int, seed: int = 7) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """(name, doc codes, scores) of each run, generated when asked (one run in memory at a time)."""
    rng = np.random.default_rng(seed)
    query = np.arange(n_queries, dtype=np.int64)[:, None]
    scores = np.broadcast_to(np.arange(depth, 0, -1, dtype=np.float32), (n_queries, depth))
    for s in range(n_runs):
        noise = 0.1 + 0.5 * rng.random()            # share of ranks holding the family's own documents
        late = int(rng.integers(0, 8))              # how far into the good order the run enters
        own = rng.random((n_queries, depth)) < noise
        in_good = np.cumsum(~own, axis=1) - 1 + rng.integers(0, late + 1, size=(n_queries, 1))
        family = s % FAMILIES
        in_own = OWN_START + family * 997 + (s // FAMILIES) * 7 + np.cumsum(own, axis=1) - 1
        local = np.where(own, in_own, in_good)
        swap = rng.random((n_queries, depth // 2)) < 0.3   # neighbours swapped: ranks 2k and 2k + 1
        pairs = local.reshape(n_queries, depth // 2, 2)
        pairs[swap] = pairs[swap][:, ::-1]
        yield f"run{s:03d}", doc_code(query, local).astype(np.int32), scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--depth", type=int, default=1_000)
    parser.add_argument("--pool-depth", type=int, default=100)
    parser.add_argument("--no-pool", action="store_true", help="leave eb.pool out (to time the rest alone)")
    args = parser.parse_args()

    import pyarrow as pa
    import pyarrow.compute as pc

    import evalbridge as eb
    from evalbridge.fast.tops import from_ranked

    query_ids = [f"q{i}" for i in range(args.queries)]
    doc_ids = pc.binary_join_element_wise("d", pc.utf8_lpad(pa.array(np.arange(CORPUS)).cast(pa.string()), 7, "0"), "")
    relevant = np.random.default_rng(11).integers(5, 61, size=args.queries)

    start = time.perf_counter()
    for _ in runs(args.runs, args.queries, args.depth):
        pass
    generating = time.perf_counter() - start

    timings: dict[str, float] = {}
    peaks: dict[str, float] = {"generating": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20}
    start = time.perf_counter()
    tops = from_ranked(runs(args.runs, args.queries, args.depth), query_ids=query_ids, doc_ids=doc_ids,
                       depth=args.pool_depth)
    timings["read the runs (first 100 kept), generation excluded"] = time.perf_counter() - start - generating
    peaks["read the runs (first 100 kept), generation excluded"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20

    start = time.perf_counter()
    pool_verb = getattr(eb, "pool", None) if "pool" in eb.__all__ and not args.no_pool else None
    if pool_verb is not None:
        empty = eb.Qrels({q: {} for q in query_ids}, allow_empty=True)
        pooled = pool_verb(empty, tops, depth=args.pool_depth)
        n_pool = len(pooled.pair_docs)
        timings[f"eb.pool at depth {args.pool_depth}"] = time.perf_counter() - start
        peaks[f"eb.pool at depth {args.pool_depth}"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    else:
        n_pool = int(np.count_nonzero(tops.holders(args.pool_depth)))
        timings["eb.pool left out (pool counted from the TopLists)"] = time.perf_counter() - start
        peaks["eb.pool left out (pool counted from the TopLists)"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20

    start = time.perf_counter()
    pairs = tops.pairs
    q_index = pairs.codes()
    code = pc.cast(pc.utf8_slice_codeunits(pairs.docs, 1), pa.int64()).to_numpy()
    grades = grade_of(q_index, local_index(q_index, code), relevant)
    qrels = eb.read_qrels(pa.table({"query_id": pa.array(query_ids).take(pa.array(q_index)), "doc_id": pairs.docs,
                                  "relevance": pa.array(grades)}))
    timings["judge the pool (synthetic grades -> columnar Qrels)"] = time.perf_counter() - start
    peaks["judge the pool (synthetic grades -> columnar Qrels)"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20

    start = time.perf_counter()
    diagnosis = eb.diagnose(qrels, tops, "nDCG@10", pool_depth=args.pool_depth)
    timings["eb.diagnose(nDCG@10)"] = time.perf_counter() - start
    peaks["eb.diagnose(nDCG@10)"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # KiB -> GiB

    total = sum(timings.values())
    lines = [f"# diagnose bench, {datetime.date.today()}",
             "",
             f"{args.runs} runs x {args.queries} queries x depth {args.depth} ({args.runs * args.queries * args.depth:,} "
             f"pairs generated), pool depth {args.pool_depth}: {n_pool:,} pooled pairs, {qrels.n_rows:,} judgements, "
             f"{sum(r.unique_relevant for r in diagnosis.pool_bias.runs):,} relevant documents found by one run only.",
             "",
             "| step | seconds | peak GiB so far |", "|---|---|---|",
             f"| generating the runs (not part of the command) | {generating:.1f} | {peaks['generating']:.2f} |",
             *(f"| {name} | {seconds:.1f} | {peaks[name]:.2f} |" for name, seconds in timings.items()),
             f"| **the command (every step above but generation)** | **{total:.1f}** (goal 120) | **{peak:.2f}** (goal 4) |",
             "", "```", str(diagnosis).split("\n\n")[-1], "```"]
    text = "\n".join(lines)
    print(text)
    out = HERE / "results" / f"diagnose-{datetime.date.today()}.md"
    out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
