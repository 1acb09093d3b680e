"""Benchmark reading retrieval logs as runs (issue 37): 1M hits as Elasticsearch and Qdrant responses against the
same rows as JSON Lines ``{query_id, doc_id, score}``.

Usage::

    .venv/bin/python bench/retrieval_logs.py                  # 10,000 queries x 100 hits (1M), ~1-2 min
    .venv/bin/python bench/retrieval_logs.py --queries 1000   # smaller, on a busy machine

Goal (issue 37): ``read_run`` of each log <= 1.3 x ``read_run`` of the same rows as JSON Lines; ratios in one run.

The rows come from ``bench/data.py`` (fixed seed; each query's hits sorted by score, best first, as an engine
returns them). The files, written before any clock starts:

* ``rows.jsonl``: one ``{"query_id", "doc_id", "score"}`` per line (the ``jsonl`` format);
* ``es.jsonl``: one ``_search`` response per line, the query id in a ``qid`` field beside ``took`` and ``hits``,
  each hit ``{"_index", "_id", "_score", "_source": {"title"}}`` (read with ``query="qid"``);
* ``qdrant.jsonl``: one points/search response per line ``{"qid", "result": [{"id", "version", "score",
  "payload"}], "status", "time"}``, integer point ids (read with ``query="qid"``).

Each row runs in a fresh worker process (interleaved, ``--repeat`` times): evalbridge imported and the file read
once into the page cache and its first line read as a warm-up (the imports) before the clock, then one timed
``eb.read_run``; wall time, median of the workers, and
peak memory growth (``VmHWM`` reset through ``/proc/self/clear_refs``, as in ``bench/run.py``). Results go to
``bench/results/retrieval-logs-<date>.md``; speed is never asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import interleaved, measured, written  # noqa: E402 - bench/ is on the path

ROWS = {"JSON Lines rows": ("rows.jsonl", {}), "elasticsearch": ("es.jsonl", {"query": "qid"}),
        "qdrant": ("qdrant.jsonl", {"query": "qid"})}


def write_files(folder: Path, queries: int, depth: int) -> None:
    """The same rows in the three files (see the module docstring)."""
    import numpy as np
    from data import generate

    data = generate(queries, depth, seed=0)
    order = np.lexsort((-data.run_score, data.run_query))
    query, doc, score = data.run_query[order], data.run_doc[order], data.run_score[order]
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    ends = np.r_[starts[1:], len(query)]
    with open(folder / "rows.jsonl", "w") as rows, open(folder / "es.jsonl", "w") as es, \
            open(folder / "qdrant.jsonl", "w") as qd:
        for start, end in zip(starts, ends):
            qid = f"q{query[start]}"
            docs, scores = doc[start:end].tolist(), score[start:end].tolist()
            rows.write("".join(json.dumps({"query_id": qid, "doc_id": f"d{d}", "score": s}) + "\n"
                               for d, s in zip(docs, scores)))
            hits = [{"_index": "passages", "_id": f"d{d}", "_score": s, "_source": {"title": f"passage {d}"}}
                    for d, s in zip(docs, scores)]
            es.write(json.dumps({"qid": qid, "took": 3, "timed_out": False,
                                 "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
                                 "hits": {"total": {"value": len(hits), "relation": "eq"}, "max_score": scores[0],
                                          "hits": hits}}) + "\n")
            points = [{"id": int(d), "version": 1, "score": s, "payload": {"title": f"passage {d}"}}
                      for d, s in zip(docs, scores)]
            qd.write(json.dumps({"qid": qid, "result": points, "status": "ok", "time": 0.002}) + "\n")


def work(row: str, folder: Path) -> dict[str, float]:
    import warnings

    import evalbridge as eb

    warnings.simplefilter("ignore")
    name, options = ROWS[row]
    path = folder / name
    warm = folder / f"warm-{row.replace(' ', '-')}.jsonl"  # the first line alone: imports and first allocations
    with open(path) as f:
        warm.write_text(f.readline())
    eb.read_run(warm, **options)
    path.read_bytes()  # into the page cache
    numbers, run = measured(lambda: eb.read_run(path, **options))
    return {**numbers, "rows": run.n_rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3, help="workers per row (median)")
    parser.add_argument("--worker", choices=list(ROWS), help=argparse.SUPPRESS)
    parser.add_argument("--folder", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, Path(args.folder))))
        return
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        write_files(folder, args.queries, args.depth)
        sizes = {row: (folder / name).stat().st_size / 2 ** 20 for row, (name, _) in ROWS.items()}
        seconds, peak, found = interleaved(__file__, ROWS, ["--folder", str(folder)], args.repeat)
    hits = {r: int(rows[0]["rows"]) for r, rows in found.items()}
    base = "JSON Lines rows"
    lines = ["| row | file | hits read | wall (median) | x JSON Lines | peak growth | x JSON Lines |",
             "|---|---|---|---|---|---|---|"]
    for row in ROWS:
        lines.append(f"| `read_run`, {row} | {sizes[row]:,.0f} MiB | {hits[row]:,} | {seconds[row]:.2f} s | "
                     f"**{seconds[row] / seconds[base]:.2f}** | {peak[row]:,.0f} MiB | {peak[row] / peak[base]:.2f} |")
    size = (f"{args.queries:,} queries x {args.depth} hits ({args.queries * args.depth:,} rows); goal: each log "
            f"<= 1.3 x the JSON Lines rows")
    written("retrieval-logs", "retrieval logs bench", size, lines, args.repeat)


if __name__ == "__main__":
    main()
