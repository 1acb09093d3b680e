"""Where the Spark engine's time goes: the JVM -> Python Arrow hand-off, measured per variant.

Usage::

    .venv/bin/python bench/spark_handoff.py --queries 10000      # 1M run rows, local[2]

Every variant runs the same co-grouped ``applyInArrow`` as :mod:`evalbridge.spark` (qrels and run
grouped by ``pmod(xxhash64(query_id), buckets)``), with a Python function that only counts the rows it
receives, so the time is Spark's: read the Parquet files, shuffle into buckets, convert the rows to
Arrow and hand them to the Python workers. The variants change what crosses the boundary:

* ``strings``: query id and doc id as strings, score / grade as doubles (what evalbridge sent before);
* ``query hashed``: the query id as its 64-bit ``xxhash64``, the doc id as a string;
* ``both hashed``: query id and doc id as 64-bit hashes;
* ``both hashed, float32``: and the score / grade as 32-bit floats (only to see what the dtype costs:
  evalbridge never narrows a score);
* ``no score``: query id and doc id as strings and nothing else (what the ids alone cost);
* ``...: shuffle + sort only, no Python``: the same shuffle into buckets and sort by bucket in the JVM,
  rows written to Spark's ``noop`` sink: what the hand-off costs before Arrow and Python;
* ``...: run as read, no shuffle``: the run's rows handed to Python workers as Spark read them
  (``mapInArrow`` over the scan's partitions, a function that counts rows): the least any design that
  computes in Python workers pays, even one over data already laid out by query; and the same scan in
  the JVM alone (``noop`` sink); and the qrels and the run as one ``unionByName``, repartitioned by query
  id (whole queries per partition, no sort) and handed over by ``mapInArrow``: the other way to bring
  a query's judgements and results together.

Each variant runs ``--reps`` times, interleaved, and the median is printed with the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--buckets", type=int, nargs="+", default=[32])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--memory", default="2g")
    parser.add_argument("--variants", nargs="+", default=None)
    args = parser.parse_args()

    import pyarrow as pa
    from pyspark.sql import functions as F

    from spark import parquet_files, start_spark

    qrels_path, run_path = parquet_files(args.queries, args.depth)
    spark = start_spark(args.cores, args.partitions, args.memory)
    spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", "1000000")
    qrels, run = spark.read.parquet(str(qrels_path)), spark.read.parquet(str(run_path))
    n_rows = run.count()

    def rows(q: pa.Table, r: pa.Table) -> pa.Table:
        return pa.table({"n": [q.num_rows + r.num_rows]})

    def count_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield pa.RecordBatch.from_pydict({"n": [sum(batch.num_rows for batch in batches)]})

    h = F.xxhash64
    variants = {
        "strings": (["query_id", "doc_id", "relevance"], ["query_id", "doc_id", "score"]),
        "query hashed": ([h("query_id").alias("q"), "doc_id", "relevance"], [h("query_id").alias("q"), "doc_id", "score"]),
        "both hashed": ([h("query_id").alias("q"), h("doc_id").alias("d"), "relevance"],
                        [h("query_id").alias("q"), h("doc_id").alias("d"), "score"]),
        "both hashed, float32": ([h("query_id").alias("q"), h("doc_id").alias("d"), F.col("relevance").cast("float")],
                                 [h("query_id").alias("q"), h("doc_id").alias("d"), F.col("score").cast("float")]),
        "no score": (["query_id", "doc_id"], ["query_id", "doc_id"]),
    }
    chosen = {k: v for k, v in variants.items() if args.variants is None or k in args.variants}
    jvm_only = {"strings": variants["strings"], "both hashed": variants["both hashed"]}
    times: dict[tuple[str, int], list[float]] = {}
    spark.range(8).repartition(2).rdd.map(lambda x: x).count()  # Python workers up
    for rep in range(args.reps + 1):  # the first round warms up and is not counted
        for b in args.buckets:
            bucket = F.pmod(F.xxhash64(F.col("query_id")), F.lit(b)).alias("bucket")
            for name, (q_cols, r_cols) in chosen.items():
                t = time.perf_counter()
                (qrels.select(bucket, *q_cols).groupBy("bucket")
                 .cogroup(run.select(bucket, *r_cols).groupBy("bucket"))
                 .applyInArrow(rows, "n long").collect())
                if rep:
                    times.setdefault((name, b), []).append(time.perf_counter() - t)
                    print(f"  rep {rep}: {name}, {b} buckets: {times[(name, b)][-1]:.2f} s", flush=True)
            for name, (q_cols, r_cols) in jvm_only.items():
                if args.variants is not None and name not in args.variants:
                    continue
                # The same shuffle into buckets and sort by bucket that the cogroup needs, in the JVM only
                # (the noop sink reads every row): what is left of the hand-off is Arrow and Python.
                t = time.perf_counter()
                for frame, cols in ((qrels, q_cols), (run, r_cols)):
                    (frame.select(bucket, *cols).repartition(args.partitions, "bucket").sortWithinPartitions("bucket")
                     .write.format("noop").mode("overwrite").save())
                if rep:
                    key = (f"{name}: shuffle + sort only, no Python", b)
                    times.setdefault(key, []).append(time.perf_counter() - t)
                    print(f"  rep {rep}: {key[0]}, {b} buckets: {times[key][-1]:.2f} s", flush=True)
        for name, (_, r_cols) in jvm_only.items():
            if args.variants is not None and name not in args.variants:
                continue
            q_cols = variants[name][0]
            union = (qrels.select(*q_cols, F.lit(0).alias("side")).toDF("q", "d", "v", "side")
                     .unionByName(run.select(*r_cols, F.lit(1).alias("side")).toDF("q", "d", "v", "side")))
            for what, go in (("run as read, no shuffle, to Python", lambda cols=r_cols: run.select(*cols).mapInArrow(
                                 count_batches, "n long").collect()),
                             ("qrels + run as one union, repartitioned by query, to Python (no cogroup, no sort)",
                              lambda u=union: u.repartition(args.partitions, "q").mapInArrow(
                                  count_batches, "n long").collect()),
                             ("run as read, no shuffle, JVM only", lambda cols=r_cols: run.select(*cols).write.format(
                                 "noop").mode("overwrite").save())):
                t = time.perf_counter()
                go()
                if rep:
                    key = (f"{name}: {what}", 0)
                    times.setdefault(key, []).append(time.perf_counter() - t)
                    print(f"  rep {rep}: {key[0]}: {times[key][-1]:.2f} s", flush=True)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\n{n_rows:,} run rows, Spark {spark.version} local[{args.cores}], load average {load}")
    print("| what crosses to Python | buckets | median hand-off (function counts rows) | runs |")
    print("|---|---|---|---|")
    for (name, b), ts in times.items():
        print(f"| {name} | {b or '-'} | {statistics.median(ts):.2f} s | {', '.join(f'{t:.2f}' for t in ts)} |")
    spark.stop()
    import shutil

    from spark import LOCAL_DIR

    shutil.rmtree(LOCAL_DIR, ignore_errors=True)  # this run's shuffle files and spills


if __name__ == "__main__":
    main()
