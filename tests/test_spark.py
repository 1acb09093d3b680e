"""The Spark engine (``evalbridge.spark``) gives the local engine's numbers per query, on a real local Spark.

Every test that runs Spark jobs shares one ``local[2]`` session (the ``spark`` fixture of conftest.py,
skipped only when Java is absent). A Spark evaluation costs seconds, so the property test evaluates
many generated cases at once: each case's queries get their own prefix, and queries are independent.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from strategies import qrels_and_run
from test_engine import TIES, any_metric

import evalbridge as eb
from evalbridge import spark as es
from evalbridge.evaluation.spark_buckets import exact_sum
from evalbridge.errors import BackendUnavailableError, EvalbridgeError, InputError, UnsupportedMetricError
from evalbridge.metrics.spec import Metric

#: pyspark warns about pandas >= 3 on paths that do not use pandas (createDataFrame from rows).
pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

QRELS_SCHEMA = "query_id string, doc_id string, relevance double"
RUN_SCHEMA = "query_id string, doc_id string, score double"


def frames(spark: Any, qrels: dict, run: dict, shuffle: random.Random | None = None) -> tuple[Any, Any]:  # noqa: ANN401
    """Spark DataFrames of dicts of dicts, one row per (query, doc), in dict order or shuffled."""
    q_rows = [(q, d, float(g)) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, float(s)) for q, docs in run.items() for d, s in docs.items()]
    if shuffle is not None:
        shuffle.shuffle(q_rows)
        shuffle.shuffle(r_rows)
    return spark.createDataFrame(q_rows, QRELS_SCHEMA), spark.createDataFrame(r_rows, RUN_SCHEMA)


def assert_same_as_local(got: es.SparkEvaluation, want: eb.Results) -> None:
    """Same metrics, same value for every query (bit for bit), same means, same query accounting."""
    results = got.require_results()
    assert results.metrics == want.metrics == got.metrics
    for metric in want.metrics:
        assert results.values[metric] == dict(want.values[metric]), metric
    assert got.means == want.means == results.means
    p, w = results.provenance, want.provenance
    assert sorted(p.missing_from_run) == sorted(w.missing_from_run)
    assert sorted(p.ignored_run_only) == sorted(w.ignored_run_only)
    assert (p.queries_evaluated, p.relevance_level) == (w.queries_evaluated, w.relevance_level)
    assert p.settings.replace(backend="auto") == w.settings.replace(backend="auto")  # (the local one names its backend)
    assert (got.provenance.queries_evaluated, got.provenance.missing_from_run, got.provenance.ignored_run_only) == (
        w.queries_evaluated, len(w.missing_from_run), len(w.ignored_run_only))
    assert p.warnings == got.provenance.warnings == w.warnings  # ids that never meet, said in the same words
    assert (p.removed_beyond_depth, p.removed_unjudged) == (w.removed_beyond_depth, w.removed_unjudged) == (
        got.provenance.removed_beyond_depth, got.provenance.removed_unjudged)


# --------------------------------------------------------------------------- no Spark needed

@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), max_size=60))
def test_exact_sum_rounds_to_what_fsum_gives(values: list[float]) -> None:
    """The exact sum of any finite floats (tiny, huge, negative, subnormal), rounded once, is math.fsum's."""
    total = exact_sum(np.array(values, dtype=np.float64))
    try:
        expected = math.fsum(values)
    except OverflowError:  # the exact sum is beyond float64: fsum refuses it, the fraction holds it
        assert abs(total) > sys.float_info.max
        return
    assert float(total) == expected


def test_missing_pyspark_raises_backend_unavailable_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pyspark the error says what to install, before anything else is looked at."""
    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(BackendUnavailableError, match=r"pip install 'evalbridge\[spark\]'"):
        es.evaluate(None, None, "P@5")  # type: ignore[arg-type]


def test_importing_the_spark_module_imports_neither_pyspark_nor_numpy() -> None:
    """`import evalbridge.spark` is cheap: pyspark (and numpy, pyarrow) only load when evaluate runs."""
    code = ("import sys, evalbridge.spark; "
            "print(sorted(m for m in ('pyspark', 'numpy', 'pyarrow', 'pandas') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip() == "[]"


def test_spark_backend_needs_spark_dataframes() -> None:
    """backend='spark' with dicts says what it needs instead of guessing."""
    with pytest.raises(InputError, match="two Spark DataFrames; the qrels is a builtins.dict"):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1", backend="spark")


# --------------------------------------------------------------------------- on a local Spark

@pytest.mark.slow
def test_dl19_runs_give_the_local_engines_values_per_query(spark: Any, shared: Path) -> None:
    """The three TREC DL 2019 passage runs (graded qrels, 43 judged queries): every query's value of
    eight metrics is the local engine's, bit for bit, under each tie policy."""
    folder = shared / "data" / "real" / "trec-dl-2019-passage"
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/trec-dl-2019-passage is absent: {folder} does not exist")
    qrels = eb.read_qrels(folder / "qrels.dl19-passage.txt")
    metrics = ["nDCG@10", "AP", "R@100", "RR@10", "P@10", "nDCG(gain=exp)@10", "P(rel=2)@10", "AP(weights=graded)"]
    runs = sorted(folder.glob("run.*.txt"))
    assert len(runs) == 3
    for path, ties in zip(runs, TIES):
        run = eb.read_run(path)
        got = es.evaluate(*frames(spark, qrels, run), metrics, ties=ties, buckets=5)
        assert_same_as_local(got, eb.evaluate(qrels, run, metrics, backend="fast", ties=ties))
        assert got.provenance.buckets == 5 and got.provenance.spark_version == spark.version
        got.unpersist()


#: Run in a fresh interpreter: a Spark Connect session (``remote("local[2]")``) starts its own server, which
#: cannot share this process's classic session. Prints the per-query values of each way in, as JSON.
CONNECT_SCRIPT = """
import json, os, sys
os.environ["PYSPARK_PYTHON"] = sys.executable
from pyspark.sql import SparkSession
import evalbridge as eb
from evalbridge import spark as es
folder, metrics = sys.argv[1], json.loads(sys.argv[2])
session = (SparkSession.builder.remote("local[2]").config("spark.sql.shuffle.partitions", "2")
           .config("spark.ui.showConsoleProgress", "false").getOrCreate())
qrels, run = eb.read_qrels(folder + "/qrels.dl19-passage.txt"), eb.read_run(folder + "/run.bm25.top100.txt")
q = session.createDataFrame([(a, b, float(c)) for a, d in qrels.items() for b, c in d.items()],
                            "query_id string, doc_id string, relevance double")
r = session.createDataFrame([(a, b, float(c)) for a, d in run.items() for b, c in d.items()],
                            "query_id string, doc_id string, score double")
direct = es.evaluate(q, r, metrics, buckets=3)
routed = eb.evaluate(q, r, metrics)
values = {"direct": direct.require_results().values, "routed": routed.values}
print(json.dumps({"kind": type(q).__module__, "buckets": direct.provenance.buckets,
                  **{way: {str(m): dict(v) for m, v in got.items()} for way, got in values.items()}}))
session.stop()
"""


@pytest.mark.slow
def test_spark_connect_dataframes_give_the_local_engines_values_per_query(shared: Path, tmp_path: Path) -> None:
    """DataFrames of a Spark Connect session (what Databricks and Spark 4 clients hand out), through
    evalbridge.spark.evaluate and through eb.evaluate's routing: every query's value is the local engine's."""
    import json
    import os
    import shutil

    pytest.importorskip("grpc", reason="Spark Connect needs pyspark[connect] (the spark extra installs it)")
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and Path(java_home, "bin", "java").exists()):
        pytest.skip("Java is absent (no `java` on PATH and no JAVA_HOME): Spark needs Java 17 or 21")
    folder = shared / "data" / "real" / "trec-dl-2019-passage"
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/trec-dl-2019-passage is absent: {folder} does not exist")
    metrics = ["nDCG@10", "AP", "R@100", "RR@10"]
    done = subprocess.run([sys.executable, "-c", CONNECT_SCRIPT, str(folder), json.dumps(metrics)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["kind"].startswith("pyspark.sql.connect") and got["buckets"] == 3
    want = eb.evaluate(eb.read_qrels(folder / "qrels.dl19-passage.txt"), eb.read_run(folder / "run.bm25.top100.txt"),
                       metrics, backend="fast")
    for metric in want.metrics:
        assert got["direct"][str(metric)] == dict(want.values[metric]), metric
        assert got["routed"][str(metric)] == dict(want.values[metric]), metric


@pytest.mark.slow
@settings(max_examples=4, phases=(Phase.explicit, Phase.reuse, Phase.generate))  # no shrinking: seconds per example
@given(cases=st.lists(qrels_and_run(max_queries=4, ties=True, float_grades=True, negative=True, missing=True,
                                    run_only=True, max_docs=12), min_size=1, max_size=30),
       metrics=st.lists(any_metric().filter(lambda m: "in_pool" not in m.inputs), min_size=1, max_size=5),
       ties=st.sampled_from(TIES),
       precision=st.sampled_from(("float64", "float32")), missing=st.sampled_from(("zero", "drop")),
       level=st.sampled_from((None, 2, 0.5)), buckets=st.integers(1, 7), shuffle=st.randoms(use_true_random=False),
       judged_only=st.booleans(), depth=st.sampled_from((None, 1, 3)))
def test_generated_sets_give_the_local_engines_values_per_query(
        spark: Any, cases: list[tuple[dict, dict]], metrics: list[Metric], ties: str, precision: str, missing: str,
        level: float | None, buckets: int, shuffle: random.Random, judged_only: bool, depth: int | None) -> None:
    """Ties, qrels queries missing from the run, run-only queries, float and negative grades, rows in any
    order, any metric and option, tie policy, precision, missing-query policy, relevance level, judged only
    and depth: the same values per query, means and counts as the local engine (many cases per Spark evaluation)."""
    qrels: dict[str, dict] = {}
    run: dict[str, dict] = {}
    for i, (case_qrels, case_run) in enumerate(cases):
        qrels.update({f"c{i}:{q}": docs for q, docs in case_qrels.items()})
        run.update({f"c{i}:{q}": docs for q, docs in case_run.items()})
    if ties == "input":  # the input order is the row order: keep each query's rows in dict order
        shuffle = None
    options = {"ties": ties, "score_precision": precision, "missing_queries": missing, "min_relevance": level,
               "judged_only": judged_only, "depth": depth}
    try:
        want = eb.evaluate(qrels, run, metrics, backend="reference", **options)
    except InputError as error:  # e.g. a grade above AP's max_grade: the same error from Spark
        with pytest.raises(InputError) as raised:
            es.evaluate(*frames(spark, qrels, run, shuffle), metrics, buckets=buckets, **options)
        assert str(raised.value) == str(error)
        return
    got = es.evaluate(*frames(spark, qrels, run, shuffle), metrics, buckets=buckets, **options)
    try:
        results = got.require_results()
        for metric in want.metrics:
            assert results.values[metric].keys() == want.values[metric].keys()
            for qid, value in want.values[metric].items():
                assert math.isclose(results.values[metric][qid], value, rel_tol=0, abs_tol=1e-12), (metric, qid)
        assert_same_as_local(got, eb.evaluate(qrels, run, metrics, backend="fast", **options))
        assert got.per_query.count() == len(want.values[want.metrics[0]])
    finally:
        got.unpersist()


@pytest.mark.slow
def test_too_many_queries_leave_results_out_and_routing_says_what_to_call(spark: Any) -> None:
    """Above collect_limit there is no Results, but the per-query DataFrame, the means and the counts are
    there; evalbridge.evaluate routes Spark DataFrames to the Spark engine and, when the table is too large
    to collect, names evalbridge.spark.evaluate."""
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}, "q3": {"d": 1}}
    run = {"q1": {"a": 0.5, "b": 0.9, "x": 0.7}, "q2": {"x": 1.0, "c": 1.0}, "q9": {"a": 1.0}}
    qrels_df, run_df = frames(spark, qrels, run)
    batch = spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", None)
    got = es.evaluate(qrels_df, run_df, ["P@2", "RR"], collect_limit=3)
    assert spark.conf.get("spark.sql.execution.arrow.maxRecordsPerBatch", None) == batch  # raised, then restored
    assert got.results is None and not got.collected
    assert (got.provenance.queries_evaluated, got.provenance.missing_from_run, got.provenance.ignored_run_only) == (
        3, 1, 1)
    # q1: b (grade 2) then x then a: P@2 = 1/2, RR = 1; q2: x and c tie, doc id descending puts x first:
    # P@2 = 1/2, RR = 1/2; q3 is missing from the run: 0 and 0.
    assert got.means == {"P@2": (0.5 + 0.5 + 0) / 3, "RR": (1 + 0.5 + 0) / 3}
    assert {row["query_id"]: (row["P@2"], row["RR"]) for row in got.per_query.collect()} == {
        "q1": (0.5, 1.0), "q2": (0.5, 0.5), "q3": (0.0, 0.0)}
    with pytest.raises(EvalbridgeError, match=r"more than collect_limit=3.*call evalbridge\.spark\.evaluate"):
        got.require_results()
    got.unpersist()
    routed = eb.evaluate(qrels_df, run_df, ["P@2", "RR"])
    assert routed.provenance.backend == "spark" and routed.means == got.means
    assert routed.query("RR") == {"q1": 1.0, "q2": 0.5, "q3": 0.0}
    with pytest.raises(InputError, match="Spark DataFrames are evaluated by the Spark engine"):
        eb.evaluate(qrels_df, run_df, "P@2", backend="ranx")


@pytest.mark.slow
@pytest.mark.parametrize(("rows", "message"), [
    ([("q1", "a", 1.0), ("q1", "a", 0.5)], r"the run DataFrame, query 'q1': doc 'a' is given twice.*Fix: keep one row"),
    ([("q1", "a", 1.0), ("q1", "b", float("nan"))], r"the run DataFrame, query 'q1': the score of doc 'b' is nan"),
])
def test_bad_rows_raise_input_errors_naming_query_and_doc(spark: Any, rows: list, message: str) -> None:
    """Problems found inside the workers come back as one InputError on the driver (no Spark traceback)."""
    qrels_df = spark.createDataFrame([("q1", "a", 1.0)], QRELS_SCHEMA)
    with pytest.raises(InputError, match=message):
        es.evaluate(qrels_df, spark.createDataFrame(rows, RUN_SCHEMA), "P@1")


def test_schema_problems_are_found_before_any_job(spark: Any) -> None:
    """Missing columns, wrong types and int vs str ids are read from the schemas; other column names
    are options."""
    qrels_df = spark.createDataFrame([("q1", "a", 1)], "qid string, docno string, label int")
    run_df = spark.createDataFrame([("q1", "a", 1.0)], "qid string, docno string, sim double")
    with pytest.raises(InputError, match=r"qrels DataFrame has no column 'query_id'.*Fix: .*pass query="):
        es.evaluate(qrels_df, run_df, "P@1")
    with pytest.raises(InputError, match=r"column 'qid' of the run DataFrame \(the score\) must hold numbers"):
        es.evaluate(qrels_df, run_df, "P@1", query="qid", doc="docno", relevance="label", score="qid")
    int_ids = spark.createDataFrame([(1, "a", 1.0)], "qid int, docno string, sim double")
    with pytest.raises(InputError, match=r"query ids are str in the qrels DataFrame but int in the run"):
        es.evaluate(qrels_df, int_ids, "P@1", query="qid", doc="docno", relevance="label", score="sim")
    with pytest.raises(InputError, match=r"buckets must be an integer >= 1; got 0"):
        es.evaluate(qrels_df, run_df, "P@1", buckets=0)


def test_metrics_reading_the_pool_are_refused_not_computed_from_one_bucket(spark: Any) -> None:
    """Hole needs the docs judged for any query; a bucket sees only its own queries' qrels rows."""
    qrels = spark.createDataFrame([("q1", "a", 1), ("q2", "b", 1)], ["query_id", "doc_id", "relevance"])
    run = spark.createDataFrame([("q1", "b", 1.0)], ["query_id", "doc_id", "score"])
    with pytest.raises(UnsupportedMetricError, match=r"Hole@3 reads the pool.*Fix: evaluate Hole@3 with evalbridge"):
        es.evaluate(qrels, run, ["P@1", "Hole@3"])


def test_ids_that_never_meet_are_warned_about_as_the_local_evaluation_does(spark: Any) -> None:  # noqa: ANN401
    """The EvalbridgeWarning of evaluate (counted, ids of both sides, the likely cause) on Spark, word for word."""
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}, "q3": {"d4": 2}}
    run = {"q1": {"d1 ": 0.9, "d2 ": 0.5}, "q2": {"d3 ": 0.7}, "q3": {"d4": 0.3}}
    with pytest.warns(eb.EvalbridgeWarning) as local:
        want = eb.evaluate(qrels, run, ["P@1", "nDCG@5"])
    with pytest.warns(eb.EvalbridgeWarning) as remote:
        got = es.evaluate(*frames(spark, qrels, run), ["P@1", "nDCG@5"])
    said = [str(w.message) for w in local.list if w.category is eb.EvalbridgeWarning]
    assert [str(w.message) for w in remote.list if w.category is eb.EvalbridgeWarning] == said
    assert said[0].startswith("2 of 3 evaluated queries have no judgement among their first 5 retrieved documents "
                              "('q1', 'q2')") and "white space" in said[0]
    assert got.provenance.warnings == tuple(said) and "warning: 2 of 3" in got.provenance.summary()
    assert_same_as_local(got, want)


def _nothing_cached(spark: Any) -> bool:  # noqa: ANN401
    """True when the session's cache manager holds no DataFrame (classic sessions)."""
    return bool(spark._jsparkSession.sharedState().cacheManager().isEmpty())


@pytest.mark.slow
def test_an_evaluation_leaves_nothing_cached_and_never_answers_from_an_earlier_one(spark: Any, tmp_path: Path) -> None:
    """The same Parquet folder read again after it was rewritten (the same plan) gives the new values, not
    those of an earlier call still cached; a collected evaluation leaves nothing cached, a large one only
    until ``unpersist()`` or the end of its ``with`` block."""
    assert _nothing_cached(spark)
    folder = str(tmp_path / "run.parquet")
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1, "d": 2}}
    first = {"q1": {"a": 0.9, "x": 0.5}, "q2": {"x": 0.9, "c": 0.1}}
    second = {"q1": {"x": 0.9, "b": 0.5}, "q2": {"d": 0.9, "c": 0.8}}
    qrels_df = frames(spark, qrels, first)[0]
    open_ones = []
    for run in (first, second):
        frames(spark, qrels, run)[1].write.mode("overwrite").parquet(folder)
        want = eb.evaluate(qrels, run, ["RR", "nDCG"]).means
        large = es.evaluate(qrels_df, spark.read.parquet(folder), ["RR", "nDCG"], collect_limit=1)
        assert not large.collected and large.means == want and not _nothing_cached(spark)
        open_ones.append(large)
        got = es.evaluate(qrels_df, spark.read.parquet(folder), ["RR", "nDCG"])
        assert got.collected and got.means == want
        assert {row["query_id"]: row["RR"] for row in got.per_query.collect()} == got.require_results().query("RR")
    assert open_ones[0].means != open_ones[1].means
    open_ones[0].unpersist()
    with open_ones[1]:
        assert not _nothing_cached(spark)
    assert _nothing_cached(spark)


#: Run in a fresh interpreter: a session made by the user whose Python workers (``spark.pyspark.python``)
#: lack pyarrow, numpy and evalbridge. Prints the error evaluate raised, as JSON.
WORKER_SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
session = (SparkSession.builder.master("local[1]").config("spark.pyspark.python", sys.argv[1])
           .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
           .config("spark.sql.shuffle.partitions", "1").config("spark.driver.host", "127.0.0.1")
           .config("spark.driver.bindAddress", "127.0.0.1").getOrCreate())
session.sparkContext.setLogLevel("OFF")
from evalbridge import spark as es
q = session.createDataFrame([("q1", "d1", 1.0)], "query_id string, doc_id string, relevance double")
r = session.createDataFrame([("q1", "d1", 1.0)], "query_id string, doc_id string, score double")
try:
    es.evaluate(q, r, ["P@1"])
    print(json.dumps({"type": None}))
except Exception as error:
    print(json.dumps({"type": type(error).__name__, "message": str(error),
                      "cached": session._jsparkSession.sharedState().cacheManager().isEmpty()}))
session.stop()
"""


@pytest.mark.slow
def test_workers_without_evalbridges_modules_get_an_error_naming_pyspark_python(tmp_path: Path) -> None:
    """A user's session whose Python workers cannot import pyarrow / numpy / evalbridge (here: this Python
    without its site-packages) gets a BackendUnavailableError naming PYSPARK_PYTHON and the fix, not a
    worker traceback."""
    import json
    import os
    import shutil

    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and Path(java_home, "bin", "java").exists()):
        pytest.skip("Java is absent (no `java` on PATH and no JAVA_HOME): Spark needs Java 17 or 21")
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    bare.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    done = subprocess.run([sys.executable, "-c", WORKER_SCRIPT, str(bare)], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["type"] == "BackendUnavailableError", got
    assert "Spark's Python workers cannot import" in got["message"] and str(bare) in got["message"]
    assert "Fix: run the workers with a Python that has them: set PYSPARK_PYTHON" in got["message"]
    assert "Traceback" not in got["message"] and got["cached"]


def test_a_rating_is_refused_without_a_level_on_spark_as_locally(spark: Any) -> None:
    """An LLM's 1-5 ratings as DataFrames: the local rule, the same message; at level 4, P@5 2/5 as locally."""
    rating = {"q1": {"a": 5, "b": 4, "c": 1, "d": 2, "e": 3}}
    run = {"q1": {"a": 5.0, "c": 4.0, "b": 3.0, "e": 2.0, "d": 1.0}}
    qrels_df, run_df = frames(spark, rating, run)
    with pytest.raises(InputError) as local:
        eb.evaluate(rating, run, "P@5")
    with pytest.raises(InputError) as on_spark:
        es.evaluate(qrels_df, run_df, "P@5")
    assert str(on_spark.value) == str(local.value) and "look like a rating" in str(local.value)
    assert es.evaluate(qrels_df, run_df, "P@5", min_relevance=4).means["P@5"] == pytest.approx(2 / 5)
