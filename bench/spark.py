"""Benchmark the Spark engine (``evalbridge.spark``) beside the local engine, on the same data, in one run.

Usage::

    .venv/bin/python bench/spark.py                      # 10M run rows (100,000 queries x 100), local[2]
    .venv/bin/python bench/spark.py --queries 10000      # 1M rows, for a quick look
    .venv/bin/python bench/spark.py --buckets 8 32 128   # one Spark evaluation per bucket count
    .venv/bin/python bench/spark.py --mllib              # evalbridge.spark beside Spark MLlib's RankingEvaluator

The data are :mod:`data`'s (fixed seed: graded qrels, ties in 25% of the queries, string ids), written
once as Parquet files (what a data lake holds) under ``$TMPDIR/evalbridge_bench/spark``. Both engines
read the same files and compute five metrics (nDCG@10, AP, R@100, RR@10, P@10):

* local: pyarrow reads the files, :func:`evalbridge.fast.arrow_input.columns_from_arrow` and
  :func:`evalbridge.fast.evaluate_columns` compute the per-query values, then the means;
* Spark: ``spark.read.parquet`` and :func:`evalbridge.spark.evaluate` (``collect_limit=0``: the
  per-query values stay in Spark, the exact means and counts come back).

The Spark session is started (and a first trivial job run, so the JVM and the Python workers are
up) before the clock starts; that start is printed separately. Each timing is the median of
``--reps`` runs in this process; the local engine's are interleaved with Spark's so that a busy
moment of a shared machine does not fall on one side only. The per-core ratio is
``Spark wall time x Spark cores / local wall time`` (the local engine uses one core). Results are
written to ``bench/results/spark-<date>.md``. Speed is never asserted in the unit tests.

``--mllib``: evalbridge.spark beside Spark MLlib's ``pyspark.ml.evaluation.RankingEvaluator`` on the same
Parquet files, the same run and the four measures MLlib has (``meanAveragePrecision``, ``precisionAtK``
at 10, ``recallAtK`` at 100, ``ndcgAtK`` at 10), written to ``bench/results/spark-mllib-<date>.md``. MLlib
needs one row per query first (a ``groupBy`` / ``collect_list`` of the run, sorted by score, and of the
relevant docs, joined), doc ids as doubles (here ``d123`` -> 123.0), and its nDCG is binary (every
relevant doc gains 1): evalbridge computes the same binary nDCG (``nDCG(gains={1:1,2:1,3:1})@10``), ties
broken by doc id ascending on both sides (``array_sort`` of ``(-score, doc_id)``), and the means of the
two are checked equal. MLlib's time includes that preparation (its input is cached once, then each
measure is one ``evaluate``); evalbridge's is one ``evaluate`` call (``collect_limit=0``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
CACHE = Path(tempfile.gettempdir()) / "evalbridge_bench" / "spark"


def parquet_files(n_queries: int, depth: int) -> tuple[Path, Path]:
    """``qrels.parquet`` and ``run.parquet`` of ``n_queries x depth`` run rows (written once)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    import data

    folder = CACHE / f"{n_queries}x{depth}"
    qrels_path, run_path = folder / "qrels.parquet", folder / "run.parquet"
    if run_path.exists():
        return qrels_path, run_path
    folder.mkdir(parents=True, exist_ok=True)
    d = data.generate(n_queries, depth, seed=7)

    def ids(prefix: str, numbers: object) -> pa.Array:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")

    pq.write_table(pa.table({"query_id": ids("q", d.qrels_query), "doc_id": ids("d", d.qrels_doc),
                             "relevance": pa.array(d.qrels_grade, pa.float64())}), qrels_path)
    # Row groups of about 1M rows: Spark reads them as separate splits, as it would a lake's files.
    pq.write_table(pa.table({"query_id": ids("q", d.run_query), "doc_id": ids("d", d.run_doc),
                             "score": pa.array(d.run_score, pa.float64())}), run_path, row_group_size=1 << 20)
    return qrels_path, run_path


def local_engine(qrels_path: Path, run_path: Path) -> dict[str, float]:
    """The local engine on the same files: pyarrow read, columns, metrics, exact means."""
    import math

    import pyarrow.parquet as pq

    from evalbridge.fast import evaluate_columns
    from evalbridge.fast.arrow_input import pair_from_arrow
    from evalbridge.metrics.spec import parse_metrics

    metrics = parse_metrics(METRICS)
    pair = pair_from_arrow(pq.read_table(qrels_path, use_threads=False), pq.read_table(run_path, use_threads=False))
    values = evaluate_columns(pair.columns, metrics)
    n = pair.columns.n_queries + len(pair.missing_from_run)  # missing queries score 0 (the default policy)
    return {str(m): math.fsum(v.tolist()) / n for m, v in values.items()}


#: Spark's scratch space (shuffle files, spills) for the benchmark: its own folder, removed at the end.
LOCAL_DIR = CACHE.parent / "spark-local"


def start_spark(cores: int, partitions: int, memory: str):  # noqa: ANN201 - SparkSession
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    LOCAL_DIR.mkdir(parents=True, exist_ok=True)
    session = (SparkSession.builder.master(f"local[{cores}]").appName("evalbridge-bench")
               .config("spark.local.dir", str(LOCAL_DIR))
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", memory).config("spark.sql.shuffle.partitions", str(partitions))
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    return session


def spark_breakdown(qrels_df, run_df, buckets: int) -> dict[str, float]:  # noqa: ANN001 - DataFrames
    """Seconds of what Spark does anyway, one run each: read the rows and shuffle them into buckets
    (``groupBy(bucket).count()``, no Python), and also hand every bucket to a Python worker as Arrow
    tables (a co-grouped ``applyInArrow`` whose function only counts rows)."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    bucket = F.pmod(F.xxhash64("query_id"), F.lit(buckets)).alias("bucket")

    def rows(qrels: pa.Table, run: pa.Table) -> pa.Table:
        return pa.table({"n": [qrels.num_rows + run.num_rows]})

    times = {}
    t = time.perf_counter()
    run_df.groupBy(bucket).count().collect()
    times["shuffle only (groupBy bucket count, JVM)"] = time.perf_counter() - t
    t = time.perf_counter()
    qrels_df.groupBy(bucket).cogroup(run_df.groupBy(bucket)).applyInArrow(rows, "n long").collect()
    times["shuffle + Arrow to Python workers (function counts rows)"] = time.perf_counter() - t
    for what, seconds in times.items():
        print(f"  {what}: {seconds:.2f} s", flush=True)
    return times


#: MLlib's RankingEvaluator measures -> (metricName, k) and the evalbridge metric that is the same number
MLLIB = {"meanAveragePrecision": (None, "AP"), "precisionAtK": (10, "P@10"), "recallAtK": (100, "R@100"),
         "ndcgAtK": (10, "nDCG(gains={1:1,2:1,3:1})@10")}


def mllib_means(qrels_df, run_df) -> dict[str, float]:  # noqa: ANN001 - DataFrames
    """MLlib's RankingEvaluator on the same data: one row per query (the run's doc ids by score, ties by doc id
    ascending; the relevant doc ids, grade >= 1), ids as doubles, then one evaluate per measure."""
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    def number(column):  # noqa: ANN001, ANN202 - MLlib takes doubles only: "d123" -> 123.0
        return F.substring(column, 2, 20).cast("double")

    ranked = F.array_sort(F.collect_list(F.struct((-F.col("score")).alias("s"), F.col("doc_id").alias("d"))))
    predicted = run_df.groupBy("query_id").agg(ranked.alias("r")).select(
        "query_id", F.transform("r", lambda x: number(x["d"])).alias("prediction"))
    relevant = qrels_df.where(F.col("relevance") >= 1).groupBy("query_id").agg(
        F.collect_list(number(F.col("doc_id"))).alias("label"))
    table = predicted.join(relevant, "query_id").persist()
    try:
        return {MLLIB[name][1]: RankingEvaluator(metricName=name, k=k or 10).evaluate(table)
                for name, (k, _) in MLLIB.items()}
    finally:
        table.unpersist()


def mllib_comparison(spark, qrels_df, run_df, n_rows: int, args: argparse.Namespace) -> None:  # noqa: ANN001
    """evalbridge.spark and MLlib's RankingEvaluator, interleaved, ``args.reps`` times; a result file."""
    from evalbridge import spark as eb_spark

    metrics = [metric for _, metric in MLLIB.values()]
    times: dict[str, list[float]] = {"evalbridge.spark": [], "MLlib RankingEvaluator": []}
    means: dict[str, dict[str, float]] = {}
    for rep in range(args.reps):
        t = time.perf_counter()
        result = eb_spark.evaluate(qrels_df, run_df, metrics, buckets=args.buckets[0], ties="docid_asc",
                                   collect_limit=0)
        times["evalbridge.spark"].append(time.perf_counter() - t)
        result.unpersist()
        means["evalbridge.spark"] = result.means
        t = time.perf_counter()
        means["MLlib RankingEvaluator"] = mllib_means(qrels_df, run_df)
        times["MLlib RankingEvaluator"].append(time.perf_counter() - t)
        print(f"  rep {rep + 1}: " + "; ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items()), flush=True)
    mine, theirs = (statistics.median(v) for v in times.values())
    same = all(abs(means["evalbridge.spark"][m] - means["MLlib RankingEvaluator"][m]) <= 1e-9 for m in metrics)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"evalbridge.spark {mine:.2f} s, MLlib {theirs:.2f} s: evalbridge.spark takes {mine / theirs:.2f}x MLlib's "
          f"time; means equal: {same}; load average {load}")
    print("MLlib needs a groupBy/collect_list per query first, doc ids as doubles, and has binary nDCG only")
    now = datetime.datetime.now()
    out = args.out or HERE / "results" / f"spark-mllib-{now:%Y-%m-%d}.md"
    lines = [
        f"# evalbridge.spark beside Spark MLlib's RankingEvaluator ({now:%Y-%m-%d %H:%M})", "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python "
        f"{platform.python_version()}; Spark {spark.version} (`local[{args.cores}]`, driver memory {args.memory}, "
        f"{args.partitions} shuffle partitions); load average at the end {load}.", "",
        f"Data: {args.queries:,} queries x {args.depth} docs = {n_rows:,} run rows (the same Parquet files for "
        f"both); medians of {args.reps} runs, interleaved. Measures: {', '.join(metrics)} (MLlib: "
        f"{', '.join(MLLIB)}); ties by doc id ascending on both sides.", "",
        "MLlib needs one row per query first (a `groupBy`/`collect_list` of the run sorted by score, and of the "
        "relevant docs, joined), doc ids as doubles, and has binary nDCG only (every relevant doc gains 1); its "
        "time includes that preparation. evalbridge.spark takes the rows as they are, in one call "
        f"({args.buckets[0]} buckets, `collect_limit=0`), and computes graded nDCG too.", "",
        "| engine | median wall time | all runs |", "|---|---|---|",
        *(f"| {k} | {statistics.median(v):.2f} s | {', '.join(f'{t:.2f}' for t in v)} s |" for k, v in times.items()),
        "", f"evalbridge.spark / MLlib: **{mine / theirs:.2f}x** the time. Means equal (within 1e-9): "
            f"{'yes' if same else 'NO'}.", "",
        "| measure | evalbridge.spark | MLlib |", "|---|---|---|",
        *(f"| {m} | {means['evalbridge.spark'][m]:.6f} | {means['MLlib RankingEvaluator'][m]:.6f} |" for m in metrics),
        ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"written: {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=8, help="spark.sql.shuffle.partitions")
    parser.add_argument("--buckets", type=int, nargs="+", default=[32])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--memory", default="6g", help="spark.driver.memory (local mode: the executor too)")
    parser.add_argument("--out", type=Path, default=None, help="result file (default bench/results/spark-<date>.md)")
    parser.add_argument("--mllib", action="store_true", help="evalbridge.spark beside MLlib's RankingEvaluator")
    args = parser.parse_args()

    print(f"data: {args.queries} queries x {args.depth} docs ...", flush=True)
    qrels_path, run_path = parquet_files(args.queries, args.depth)

    started = time.perf_counter()
    spark = start_spark(args.cores, args.partitions, args.memory)
    session_start = time.perf_counter() - started
    spark.range(args.cores * 4).repartition(args.cores).rdd.map(lambda x: x).count()  # Python workers up
    workers_up = time.perf_counter() - started
    print(f"Spark {spark.version} session start: {session_start:.1f} s (with a first job: {workers_up:.1f} s)",
          flush=True)

    from evalbridge import spark as eb_spark

    qrels_df, run_df = spark.read.parquet(str(qrels_path)), spark.read.parquet(str(run_path))
    n_rows = run_df.count()
    # Warm-up (not timed): the Python workers import numpy, pyarrow and evalbridge once.
    eb_spark.evaluate(qrels_df, run_df.limit(10_000), METRICS, buckets=args.cores, collect_limit=0).unpersist()
    if args.mllib:
        mllib_means(qrels_df, run_df.limit(10_000))  # warm-up of MLlib's path too
        mllib_comparison(spark, qrels_df, run_df, n_rows, args)
        spark.stop()
        return
    breakdown = spark_breakdown(qrels_df, run_df, args.buckets[0])
    local_times: list[float] = []
    spark_times: dict[int, list[float]] = {b: [] for b in args.buckets}
    local_means: dict[str, float] = {}
    spark_means: dict[int, dict[str, float]] = {}
    local_engine(qrels_path, run_path)  # warm-up: imports, page cache
    for rep in range(args.reps):
        t = time.perf_counter()
        local_means = local_engine(qrels_path, run_path)
        local_times.append(time.perf_counter() - t)
        print(f"  rep {rep + 1}: local {local_times[-1]:.2f} s", flush=True)
        for b in args.buckets:
            t = time.perf_counter()
            result = eb_spark.evaluate(qrels_df, run_df, METRICS, buckets=b, collect_limit=0)
            spark_times[b].append(time.perf_counter() - t)
            result.unpersist()
            spark_means[b] = result.means
            print(f"  rep {rep + 1}: spark, {b} buckets {spark_times[b][-1]:.2f} s", flush=True)
    spark.stop()
    import shutil

    shutil.rmtree(LOCAL_DIR, ignore_errors=True)  # this run's shuffle files and spills

    local = statistics.median(local_times)
    rows = []
    for b in args.buckets:
        wall = statistics.median(spark_times[b])
        ratio = wall * args.cores / local
        same = spark_means[b] == local_means
        rows.append((b, wall, ratio, n_rows / wall / args.cores, same))
        print(f"load average now: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"Spark {b} buckets: {wall:.2f} s wall, {n_rows / wall / args.cores / 1e3:.0f}k rows/s per core; "
              f"per-core ratio vs local {ratio:.2f} (goal <= 2); means equal to the local engine's: {same}")
    print(f"local engine: {local:.2f} s ({n_rows / local / 1e3:.0f}k rows/s, one core)")

    import numpy
    import pyarrow
    now = datetime.datetime.now()
    out = args.out or HERE / "results" / f"spark-{now:%Y-%m-%d}.md"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"# evalbridge Spark engine benchmark ({now:%Y-%m-%d %H:%M})", "",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; Python "
        f"{platform.python_version()}; Spark {spark.version} (`local[{args.cores}]`, driver memory {args.memory}, "
        f"{args.partitions} shuffle partitions, UI off); numpy {numpy.__version__}, pyarrow {pyarrow.__version__}; "
        f"load average at the end {load}.", "",
        f"Data: {args.queries:,} queries x {args.depth} docs = {n_rows:,} run rows (Parquet, string ids, graded "
        f"qrels, ties in 25% of the queries); five metrics ({', '.join(METRICS)}); medians of {args.reps} runs, "
        f"local and Spark interleaved.", "",
        f"Session start: {session_start:.1f} s ({workers_up:.1f} s with a first job that starts the Python "
        f"workers); not in the times below.", "",
        "| engine | buckets | median wall time | rows/s per core | per-core ratio vs local (goal <= 2) | "
        "means equal to local |",
        "|---|---|---|---|---|---|",
        f"| local (pyarrow read + columns + metrics, one core) | - | {local:.2f} s | {n_rows / local / 1e3:.0f}k | "
        f"1 | - |",
        *(f"| Spark `local[{args.cores}]` | {b} | {wall:.2f} s | {rate / 1e3:.0f}k | {ratio:.2f} | "
          f"{'yes' if same else 'NO'} |" for b, wall, ratio, rate, same in rows), "",
        f"What Spark costs before any metric ({args.buckets[0]} buckets, one run each): " + "; ".join(
            f"{what} {seconds:.2f} s" for what, seconds in breakdown.items()) + ".", "",
        f"All runs: local {', '.join(f'{t:.2f}' for t in local_times)} s; " + "; ".join(
            f"Spark {b} buckets {', '.join(f'{t:.2f}' for t in spark_times[b])} s" for b in args.buckets) + ".", ""]
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"written: {out}")


if __name__ == "__main__":
    main()
