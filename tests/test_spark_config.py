"""Spark at every door: ``engine: spark`` in a config, ``--engine spark`` on `evalbridge eval`, and the
``spark-table`` format / Parquet folders read by Spark give the local engine's numbers.

The tests that run Spark jobs share the one ``local[2]`` session of conftest.py's ``spark`` fixture: it
is the active session, so ``engine: spark`` evaluates on it instead of starting another. The checks
of the configuration itself (what ``engine: spark`` refuses, and where) need no Spark.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge import spark as es
from evalbridge.cli import EXIT_BAD_INPUT, main
from evalbridge.config import load_config
from evalbridge.config.schema import _NOT_ON_SPARK
from evalbridge.errors import InputError
from evalbridge.config.pipeline import run_config
from evalbridge.reports.report import render

pytestmark = pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning")

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10", "P(rel=2)@10", "nDCG(gain=exp)@10"]


def _write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config, indent=1))  # JSON is YAML: one key per line, so lines are known
    return path


def _values(outcome: Any) -> dict[str, dict[str, dict[str, float]]]:
    """system -> metric -> query -> value, from a pipeline outcome."""
    return {name: {str(m): dict(res.values[m]) for m in res.metrics} for name, res in outcome.report.results.items()}


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# --------------------------------------------------------------------------- on the shared local Spark

@pytest.mark.slow
def test_config_on_spark_gives_the_local_engines_json_metric_values(spark: Any, dl19: Path, tmp_path: Path) -> None:
    """The DL19 qrels and two runs (TREC files, read here and handed to Spark), evaluated with engine: spark
    and with engine: local: the JSON report's metric values are equal, bit for bit, and so is every
    query's value, in the same order, so the comparison (tests, bootstrap intervals) is equal too; the
    provenance names the engine, Spark's version, the master, whose session, the buckets."""
    base = {"qrels": str(dl19 / "qrels.dl19-passage.txt"), "metrics": METRICS,
            "comparison": {"baseline": "bm25", "n_resamples": 1000},
            "runs": {"bm25": str(dl19 / "run.bm25.top100.txt"), "splade": str(dl19 / "run.splade-pp-ed.top100.txt")}}
    on_spark = run_config(load_config(_write(tmp_path / "spark.yaml", {
        **base, "engine": "spark", "spark": {"buckets": 3}})), write=False)
    local = run_config(load_config(_write(tmp_path / "local.yaml", base)), write=False)
    spark_json, local_json = (json.loads(render(o.report, "json")) for o in (on_spark, local))
    assert spark_json["systems"] == local_json["systems"]
    assert spark_json["systems"]["splade"]["metrics"]["nDCG@10"] > 0.7  # the numbers are there, not empty
    assert _values(on_spark) == _values(local)
    assert [list(v) for v in _values(on_spark)["bm25"].values()] == [list(v) for v in _values(local)["bm25"].values()]
    assert spark_json["comparison"]["rows"] == local_json["comparison"]["rows"]
    assert spark_json["comparison"]["intervals"] == local_json["comparison"]["intervals"]
    assert spark_json["provenance"]["engine"] == {"name": "spark", "spark_version": spark.version,
                                                  "master": "local[2]", "session": "the active session",
                                                  "buckets": 3}
    assert local_json["provenance"]["engine"] == {"name": "local"}
    assert spark_json["provenance"]["config"]["engine"] == "spark"


@pytest.mark.slow
def test_parquet_folders_and_catalog_tables_are_read_by_spark(spark: Any, dl19: Path, tmp_path: Path) -> None:
    """Qrels given as a table of the session's catalog and a run as a folder of Parquet files (as Spark
    writes them), both with their own column names: Spark reads them, and every value is the local one."""
    qrels, run = eb.read_qrels(dl19 / "qrels.dl19-passage.txt"), eb.read_run(dl19 / "run.bm25-rm3.top100.txt")
    q_rows = [(q, d, float(g)) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, float(s)) for q, docs in run.items() for d, s in docs.items()]
    spark.createDataFrame(q_rows, "qid string, docno string, rel double").createOrReplaceTempView("dl19_qrels")
    spark.createDataFrame(r_rows, "topic string, pid string, sim double").repartition(3).write.parquet(
        str(tmp_path / "bm25rm3"))
    config = load_config(_write(tmp_path / "lake.yaml", {
        "engine": "spark", "metrics": METRICS,
        "qrels": {"table": "dl19_qrels", "columns": {"query": "qid", "doc": "docno", "grade": "rel"}},
        "runs": {"rm3": {"path": "bm25rm3", "format": "parquet",
                         "columns": {"query": "topic", "doc": "pid", "score": "sim"}}}}))
    assert (config.qrels.format, config.qrels.table, config.runs["rm3"].path.is_dir()) == (
        "spark-table", "dl19_qrels", True)
    outcome = run_config(config, write=False)
    local = eb.evaluate(qrels, run, METRICS, backend="fast")
    got = outcome.report.results["rm3"]
    assert {str(m): dict(got.values[m]) for m in got.metrics} == {str(m): dict(local.values[m]) for m in local.metrics}
    assert got.means == local.means
    inputs = json.loads(render(outcome.report, "json"))["provenance"]["inputs"]
    assert inputs["qrels"]["table"] == "dl19_qrels" and inputs["runs.rm3"]["folder"] is True
    assert inputs["runs.rm3"]["files"] >= 3


@pytest.mark.slow
def test_engine_spark_gives_one_result_at_the_command_line_in_a_config_and_in_python(
        spark: Any, dl19: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """`evalbridge eval --engine spark`, `evalbridge run` of a config with engine: spark, and
    evalbridge.spark.evaluate in Python give the same means and per-query values."""
    qrels, run = dl19 / "qrels.dl19-passage.txt", dl19 / "run.bm25.top100.txt"
    capsys.readouterr()
    code = main(["eval", str(qrels), str(run), "-m", *METRICS, "--engine", "spark", "--spark-buckets", "4",
                 "--format", "json", "-q"])
    assert code == 0
    via_cli = json.loads(capsys.readouterr().out)
    _write(tmp_path / "eval.yaml", {"qrels": str(qrels), "runs": {"bm25": str(run)}, "metrics": METRICS,
                                    "engine": "spark", "spark": {"buckets": 4}})
    assert main(["run", str(tmp_path / "eval.yaml"), "--format", "json", "--no-write"]) == 0
    via_config = json.loads(capsys.readouterr().out)
    q, r = eb.read_qrels(qrels), eb.read_run(run)
    frames = (spark.createDataFrame([(a, b, float(c)) for a, docs in q.items() for b, c in docs.items()],
                                    "query_id string, doc_id string, relevance double"),
              spark.createDataFrame([(a, b, float(c)) for a, docs in r.items() for b, c in docs.items()],
                                    "query_id string, doc_id string, score double"))
    in_python = es.evaluate(*frames, METRICS, buckets=4)
    in_python.unpersist()
    (system,) = via_cli["systems"]
    assert via_cli["systems"][system]["metrics"] == via_config["systems"]["bm25"]["metrics"] == in_python.means
    assert via_cli["provenance"]["engine"] == via_config["provenance"]["engine"]
    assert via_cli["provenance"]["config"]["spark"] == {"master": "local[*]", "buckets": 4}


def test_an_unknown_table_names_the_config_line_and_the_closest_table(spark: Any, tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    """A misspelt table fails when the evaluation reads it: file:line of the source, its key, the closest
    table of the catalog; `evalbridge run` exits 2."""
    spark.createDataFrame([("q1", "d1", 1.0)], "query_id string, doc_id string, relevance double") \
        .createOrReplaceTempView("judgements_2024")
    spark.createDataFrame([("q1", "d1", 0.5)], "query_id string, doc_id string, score double") \
        .createOrReplaceTempView("bm25_2024")
    path = _write(tmp_path / "lake.yaml", {"engine": "spark", "metrics": ["P@1"], "qrels": {"table": "judgments_2024"},
                                            "runs": {"bm25": {"table": "bm25_2024"}}})
    with pytest.raises(InputError) as info:
        run_config(load_config(path), write=False)
    error = info.value
    assert (error.source, error.line) == (str(path), _line_of(path, '"qrels"'))
    assert "qrels (spark-table)" in str(error) and "no table 'judgments_2024'" in str(error)
    assert "did you mean 'judgements_2024'" in str(error)
    capsys.readouterr()
    assert main(["run", str(path), "--no-write", "-q"]) == EXIT_BAD_INPUT
    assert f"{path}:{_line_of(path, chr(34) + 'qrels' + chr(34))}" in capsys.readouterr().err


def test_a_spark_table_read_in_python_is_collected_from_the_active_session(spark: Any) -> None:
    """Outside engine: spark, eb.read_run(name, format="spark-table") reads the table of the active session
    into memory, as any table."""
    spark.createDataFrame([("q1", "d1", 0.5), ("q1", "d2", 0.25)], "qid string, docno string, sim double") \
        .createOrReplaceTempView("small_run")
    assert eb.read_run("small_run", format="spark-table") == eb.Run({"q1": {"d1": 0.5, "d2": 0.25}})


# --------------------------------------------------------------------------- the configuration, no Spark

@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 r\n")
    return tmp_path


def test_a_spark_table_without_engine_spark_is_refused_at_its_line(files: Path, capsys: pytest.CaptureFixture) -> None:
    """table: in a local evaluation: refused when the config is loaded (file:line of the table key, the
    fix), and `evalbridge run` exits 2 before anything runs."""
    path = _write(files / "eval.yaml", {"qrels": "qrels.txt", "metrics": ["P@1"],
                                        "runs": {"bm25": {"table": "lake.bm25"}}})
    with pytest.raises(InputError, match="a spark-table is read and evaluated by Spark") as info:
        load_config(path)
    assert (info.value.source, info.value.line) == (str(path), _line_of(path, '"table"'))
    assert "runs.bm25.table" in str(info.value) and "add engine: spark" in info.value.fix
    capsys.readouterr()
    assert main(["run", str(path), "--no-write"]) == EXIT_BAD_INPUT
    assert "add engine: spark" in capsys.readouterr().err


def test_engine_spark_without_pyspark_is_refused_at_the_engine_line(files: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture) -> None:
    """engine: spark where pyspark cannot be imported: the error names the engine key's line and the install."""
    monkeypatch.setitem(sys.modules, "pyspark", None)
    path = _write(files / "eval.yaml", {"qrels": "qrels.txt", "runs": {"r": "run.txt"}, "metrics": ["P@1"],
                                        "engine": "spark"})
    with pytest.raises(InputError, match="needs pyspark, which is not installed") as info:
        load_config(path)
    assert (info.value.line, info.value.fix) == (_line_of(path, '"engine"'), es.INSTALL_HINT)
    capsys.readouterr()
    assert main(["eval", str(files / "qrels.txt"), str(files / "run.txt"), "-m", "P@1", "--engine", "spark"]) \
        == EXIT_BAD_INPUT
    assert "--engine" in capsys.readouterr().err


@pytest.mark.parametrize("key, value", [
    (("backend",), "reference"), (("ties",), "average"), (("no_relevant",), "drop"),
    (("crosscheck",), True), (("output", "plots"), {"curves": ["nDCG"]}),
])
def test_what_the_spark_engine_does_not_compute_is_refused_at_its_key(files: Path, key: tuple, value: Any) -> None:
    """Every setting in the table of what engine: spark refuses is refused at its own key's line, naming it."""
    config: dict[str, Any] = {"qrels": "qrels.txt", "runs": {"r": "run.txt"}, "metrics": ["P@1"], "engine": "spark"}
    config[key[0]] = value if len(key) == 1 else {key[1]: value}
    path = _write(files / "eval.yaml", config)
    with pytest.raises(InputError, match="cannot be combined with engine: spark") as info:
        load_config(path)
    assert info.value.line == _line_of(path, f'"{key[-1]}"' if key[-1] != "plots" else '"curves"')
    assert {k[0] for k, _, _ in _NOT_ON_SPARK} >= {key[0]}


@settings(max_examples=25)
@given(master=st.sampled_from(["local[*]", "local[3]", "spark://host:7077", "yarn"]),
       buckets=st.one_of(st.none(), st.integers(-3, 500)))
def test_spark_settings_are_checked_by_the_declared_rule(master: str, buckets: int | None, tmp_path_factory: Any) -> None:
    """spark: {master, buckets}: any master string is kept; buckets follow the one declared rule (an integer
    >= 1), refused at the buckets key otherwise; spark: without engine: spark is refused."""
    folder = tmp_path_factory.mktemp("cfg")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    (folder / "run.txt").write_text("q1 Q0 d1 1 1.0 r\n")
    spark_settings = {"master": master, **({} if buckets is None else {"buckets": buckets})}
    config = {"qrels": "qrels.txt", "runs": {"r": "run.txt"}, "metrics": ["P@1"], "engine": "spark",
              "spark": spark_settings}
    path = _write(folder / "eval.yaml", config)
    if buckets is not None and buckets < 1:
        with pytest.raises(InputError, match="buckets") as info:
            load_config(path)
        assert info.value.line == _line_of(path, '"buckets"')
    else:
        loaded = load_config(path)
        assert (loaded.engine, loaded.spark.master, loaded.spark.buckets) == ("spark", master, buckets)
    local = _write(folder / "local.yaml", {**config, "engine": "local"})
    with pytest.raises(InputError, match="spark: it sets the Spark engine"):
        load_config(local)


def test_a_folder_is_read_only_by_spark_and_only_as_parquet(files: Path) -> None:
    """A folder as a source: refused in a local evaluation (a file is expected), and with engine: spark
    unless its format is one Spark reads (parquet), with the fix."""
    (files / "lake").mkdir()
    local = _write(files / "local.yaml", {"qrels": "qrels.txt", "runs": {"r": "lake"}, "metrics": ["P@1"]})
    with pytest.raises(InputError, match="lake: this is a folder, not a file"):
        load_config(local)
    spark_trec = _write(files / "spark.yaml", {"qrels": "qrels.txt", "runs": {"r": {"path": "lake", "format": "trec"}},
                                               "metrics": ["P@1"], "engine": "spark"})
    with pytest.raises(InputError, match="is a folder; Spark reads folders of parquet files") as info:
        load_config(spark_trec)
    assert info.value.fix.startswith("add format: parquet")
    no_format = _write(files / "bare.yaml", {"qrels": "qrels.txt", "runs": {"r": "lake"}, "metrics": ["P@1"],
                                             "engine": "spark"})
    with pytest.raises(InputError, match="its name does not say its format"):
        load_config(no_format)
    (files / "runs.parquet").mkdir()
    named = _write(files / "named.yaml", {"qrels": "qrels.txt", "runs": {"r": "runs.parquet"}, "metrics": ["P@1"],
                                          "engine": "spark"})
    assert load_config(named).runs["r"].format == "parquet"


@pytest.mark.slow
def test_without_an_active_session_evalbridge_starts_one_on_the_master_given(files: Path) -> None:
    """`evalbridge eval --engine spark --spark-master local[1]` in a fresh process (no active session) starts
    a session on that master, with one shuffle partition per core (so 4 buckets), and says so."""
    import shutil
    import subprocess

    if shutil.which("java") is None:
        pytest.skip("Java is absent: Spark needs Java 17 or 21")
    done = subprocess.run([sys.executable, "-m", "evalbridge", "eval", "qrels.txt", "run.txt", "-m", "P@1", "RR",
                           "--engine", "spark", "--spark-master", "local[1]", "--format", "json", "-q"],
                          cwd=files, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["provenance"]["engine"] == {"name": "spark", "spark_version": report["provenance"]["engine"][
        "spark_version"], "master": "local[1]", "session": "started by evalbridge", "buckets": 4}
    assert report["systems"]["run"]["metrics"] == {"P@1": 1.0, "RR": 1.0}  # q1's only doc, d1, is relevant
