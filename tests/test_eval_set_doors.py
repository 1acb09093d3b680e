"""The eval-set loop at its two doors (the Python API and the command line: ``evalbridge pool``, ``merge``,
``changed``) on TREC DL 2019: the same pool, the same batch file, the same merged judgements and sources, the same
answer; bad input exits 2 with the file and the fix, never a traceback. A config's ``changed:`` section gives what
``changed`` gives, in its report, and a config's ``pool: {batch}`` writes the batch ``pool --batch`` writes. (A
config run has no merge step: a loop that asks a judge between two runs of evalbridge is not one configured
evaluation.)"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest
from doors import cli

import evalbridge as eb
from evalbridge.io.judging import write_batch

DL19 = "data/real/trec-dl-2019-passage"
RUNS = ("run.bm25.top100.txt", "run.splade-pp-ed.top100.txt", "run.bm25-rm3.top100.txt")


@pytest.fixture()
def loop(shared: Path, tmp_path: Path) -> dict[str, Path]:
    """A DL 2019 qrels file with a fifth of its judgements removed, the runs and topics, in one folder."""
    folder = shared / DL19
    rng = random.Random(7)
    kept = [line for line in (folder / "qrels.dl19-passage.txt").read_text().splitlines() if rng.random() > 0.2]
    (tmp_path / "partial.txt").write_text("\n".join(kept) + "\n")
    return {"qrels": tmp_path / "partial.txt", "full": folder / "qrels.dl19-passage.txt",
            "topics": folder / "topics.dl19-passage.txt", **{f"run{i}": folder / r for i, r in enumerate(RUNS)}}


def test_pool_at_both_doors_gives_the_same_counts_and_the_same_batch(loop, tmp_path):
    runs = [loop["run0"], loop["run1"], loop["run2"]]
    code, out, err = cli("pool", loop["qrels"], *runs, "--depth", "10", "20", "--format", "json",
                         "--batch", tmp_path / "cli.jsonl", "--topics", loop["topics"])
    assert code == 0, err
    names = {Path(r).name.removesuffix(".txt"): eb.read_run(r) for r in runs}
    api = eb.pool(loop["qrels"], names, depth=[10, 20])
    assert json.loads(out) == json.loads(json.dumps(api.to_dict()))
    write_batch(api, tmp_path / "api.jsonl", queries=loop["topics"])
    assert (tmp_path / "cli.jsonl").read_text() == (tmp_path / "api.jsonl").read_text()


def test_a_pool_with_nothing_judged_yet_is_the_same_at_both_doors(loop, tmp_path):
    """`evalbridge pool --unjudged RUN...` (no QRELS) is eb.pool of empty qrels over every query the runs answer:
    the same counts, every pooled pair in the batch."""
    runs = [loop["run0"], loop["run1"]]
    code, out, err = cli("pool", "--unjudged", *runs, "--depth", "5", "--format", "json",
                         "--batch", tmp_path / "cli.jsonl", "--topics", loop["topics"])
    assert code == 0, err
    names = {Path(r).name.removesuffix(".txt"): eb.read_run(r) for r in runs}
    api = eb.pool(eb.Qrels({}, allow_empty=True), names, depth=5, queries="runs")
    assert json.loads(out) == json.loads(json.dumps(api.to_dict()))
    write_batch(api, tmp_path / "api.jsonl", queries=loop["topics"])
    assert (tmp_path / "cli.jsonl").read_text() == (tmp_path / "api.jsonl").read_text()
    lines = (tmp_path / "cli.jsonl").read_text().splitlines()
    assert len(lines) == api.size() and len(lines) >= 5 * len({json.loads(line)["query_id"] for line in lines})


@pytest.mark.parametrize("judged", [True, False], ids=["judgements", "nothing-judged"])
def test_a_config_pool_of_its_own_runs_is_the_command_line_pool(loop, tmp_path, judged):
    """``pool: {runs: {...}, judgements: ...}`` (runs and judgements of its own, in a config without runs or
    metrics; no judgements: nothing judged yet, every query a run answers pooled) reports the pool ``evalbridge pool
    [--unjudged] RUN...`` shows, and writes its batch byte for byte; ``queries: qrels`` without judgements is refused
    at both doors."""
    runs = {f"r{i}": loop[f"run{i}"] for i in range(3)}
    given = ("pool", *((loop["qrels"],) if judged else ("--unjudged",)), *(f"{n}={p}" for n, p in runs.items()))
    code, out, err = cli(*given, "--depth", "5", "10", "--format", "json", "--batch", tmp_path / "cli.jsonl",
                         "--topics", loop["topics"])
    assert code == 0, err
    config = tmp_path / "pool.yaml"
    config.write_text("pool: {runs: {" + ", ".join(f"{n}: {p}" for n, p in runs.items()) + "}, depth: [5, 10], "
                      + (f"judgements: {loop['qrels']}, " if judged else "") + f"batch: config.jsonl, topics: "
                      f"{loop['topics']}}}\noutput: {{dir: reports, formats: [json]}}\n")
    outcome = eb.run_config(eb.load_config(config))
    assert json.loads(out) == json.loads(json.dumps(outcome.report.analyses["pool"].to_dict()))
    assert (tmp_path / "config.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
    provenance = json.loads((tmp_path / "reports" / "report.json").read_text())["provenance"]
    assert provenance["config"]["pool"]["runs"] == list(runs) and "pool.runs.r0" in provenance["inputs"]
    if not judged:
        config.write_text(f"pool: {{runs: {{r0: {loop['run0']}}}, queries: qrels}}\n")
        with pytest.raises(eb.InputError, match="contradicts"):
            eb.load_config(config)
        assert cli("pool", "--unjudged", loop["run0"], "--queries", "qrels")[0] == 2


def test_a_pooled_run_that_holds_its_own_judgements_is_refused_at_both_doors(tmp_path):
    """A RAG log's labels would be dropped by a pool of its own runs (its judged pairs counted as unjudged): refused
    at the command line and in a config, naming the run and the fix."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"user_input": "q one", "retrieved_contexts": ["a", "b"],
                               "reference_contexts": ["a"]}) + "\n")
    code, out, err = cli("pool", "--unjudged", log, "--run-format", "rag", "--depth", "2")
    assert code == 2 and out == "" and "holds its own judgements" in err and "Fix:" in err
    config = tmp_path / "pool.yaml"
    config.write_text(f"pool: {{runs: {{log: {{path: {log}, format: rag}}}}}}\n")
    with pytest.raises(eb.InputError, match="holds its own judgements"):
        eb.load_config(config)


def test_a_depth_that_is_the_strata_ends_is_taken_at_every_door_and_another_is_refused(loop, tmp_path):
    """eb.pool takes a depth beside the strata when it is the strata's ends and refuses another; the command line and
    a config's pool: say the same."""
    strata = {"1-10": 1, "11-20": 0.5}
    api = eb.pool(loop["qrels"], {"r0": eb.read_run(loop["run0"])}, depth=[10, 20], strata=strata, seed=5)
    code, out, err = cli("pool", loop["qrels"], f"r0={loop['run0']}", "--depth", "10", "20", "--strata", "1-10:1",
                         "11-20:0.5", "--seed", "5", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == json.loads(json.dumps(api.to_dict()))
    with pytest.raises(eb.InputError, match="depth 5 is given too"):
        eb.pool(loop["qrels"], {"r0": eb.read_run(loop["run0"])}, depth=5, strata=strata)
    code, _, err = cli("pool", loop["qrels"], loop["run0"], "--depth", "5", "--strata", "1-10:1", "11-20:0.5")
    assert code == 2 and "depth 5 is given too" in err
    config = _pool_config(tmp_path, loop, "{depth: 5, strata: {1-10: 1, 11-20: 0.5}}")
    with pytest.raises(eb.InputError, match="depth 5 is given too"):
        eb.load_config(config)


def test_merge_and_changed_at_both_doors_agree(loop, tmp_path):
    full = eb.read_qrels(loop["full"])
    api_pool = eb.pool(loop["qrels"], {f"r{i}": eb.read_run(loop[f"run{i}"]) for i in range(3)}, depth=10)
    graded = tmp_path / "graded.jsonl"
    graded.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "grade": full[q].get(d, 0), "judge": "replay"})
                              + "\n" for q, d, _ in api_pool.pairs()))
    code, _, err = cli("merge", loop["qrels"], graded, "-o", tmp_path / "merged.jsonl", "--names", "nist", "x")
    assert code == 0, err
    api = eb.merge_judgements(loop["qrels"], graded, names=("nist", "x"))
    from_cli = eb.read_qrels(tmp_path / "merged.jsonl")
    assert from_cli == api
    assert {q: dict(d) for q, d in from_cli.judged_by.items()} == {q: dict(d) for q, d in api.judged_by.items()}
    assert set(v for d in api.judged_by.values() for v in d.values()) == {"nist", "replay"}
    runs = [loop["run0"], loop["run1"], loop["run2"]]
    code, out, err = cli("changed", loop["qrels"], tmp_path / "merged.jsonl", *runs, "-m", "nDCG@10", "AP",
                         "--min-relevance", "2", "--format", "json")
    assert code == 0, err
    change = eb.what_changed(loop["qrels"], api, {Path(r).name.removesuffix(".txt"): r for r in runs},
                             ["nDCG@10", "AP"], min_relevance=2)
    assert json.loads(out) == json.loads(change.render("json"))
    # the config door: changed: {before} against the config's qrels (after), in the report as one section
    (tmp_path / "eval.yaml").write_text(json.dumps({
        "qrels": str(tmp_path / "merged.jsonl"), "min_relevance": 2, "metrics": ["nDCG@10"],
        "runs": {Path(r).name.removesuffix(".txt"): str(r) for r in runs},
        "changed": {"before": str(loop["qrels"]), "metrics": ["nDCG@10", "AP"]}}))
    outcome = eb.run_config(eb.load_config(tmp_path / "eval.yaml"), write=False)
    from evalbridge.reports.report import render, report_dict
    from evalbridge.views.formats import report_format

    assert report_dict(outcome.report)["changed"] == json.loads(change.render("json"))
    for fmt in ("terminal", "markdown", "latex", "html"):
        assert "What the judgements changed" in render(outcome.report, fmt) and change.answer in render(outcome.report,
                                                                                                       fmt), fmt
    files = report_format("csv").extra_files(outcome.report)
    assert {"changed_means.csv", "changed_orders.csv"} <= set(files)


@pytest.mark.parametrize("argv, message", [
    (("merge", "{qrels}", "{graded}", "-o", "{qrels}"), "would destroy the input"),
    (("merge", "{qrels}", "{graded}"), "none is named"),
    (("pool", "{qrels}", "{run0}", "--depth", "0"), "positive integer"),
    (("pool", "{qrels}", "{run0}", "--topics", "{topics}"), "--batch"),
    (("pool", "{run0}"), "--unjudged"),
    (("pool", "--unjudged", "{run0}", "--queries", "qrels"), "contradicts"),
    (("changed", "{qrels}", "{qrels}", "{run0}"), "two runs or more"),
    (("merge", "{qrels}", "{conflict}", "-o", "{out}"), "prefer="),
])
def test_bad_input_exits_2_with_the_fix_and_no_traceback(loop, tmp_path, argv, message):
    graded = tmp_path / "graded.jsonl"
    graded.write_text('{"query_id": "19335", "doc_id": "new-doc", "grade": 1, "judge": "j"}\n')
    first = loop["qrels"].read_text().splitlines()[0].split()
    conflict = tmp_path / "conflict.jsonl"
    conflict.write_text(json.dumps({"query_id": first[0], "doc_id": first[2], "grade": int(first[3]) + 1,
                                    "judge": "j"}) + "\n")
    paths = {**{k: str(v) for k, v in loop.items()}, "graded": str(graded), "conflict": str(conflict),
             "out": str(tmp_path / "o.jsonl")}
    code, out, err = cli(*(a.format(**paths) for a in argv))
    assert code == 2 and message in err and "Traceback" not in err


def _pool_config(folder: Path, loop: dict[str, Path], pool: str, extra: str = "") -> Path:
    """A config pooling the three runs against the partial qrels; its ``pool:`` section is line 6."""
    config = folder / "eval.yaml"
    config.write_text(f"qrels: {loop['qrels']}\n"
                      f"runs: {{r0: {loop['run0']}, r1: {loop['run1']}, r2: {loop['run2']}}}\n"
                      "metrics: [nDCG@10]\n"
                      "seed: 5\n"
                      "output: {dir: reports, formats: [json]}\n"
                      f"pool: {pool}\n{extra}")
    return config


@pytest.mark.parametrize("shape, flags, kwargs", [
    ("depth: [10, 20]", ("--depth", "10", "20"), {"depth": [10, 20]}),
    ("strata: {1-10: 1, 11-50: 0.2}", ("--strata", "1-10:1", "11-50:0.2", "--seed", "5"),
     {"strata": {"1-10": 1, "11-50": 0.2}, "seed": 5}),
], ids=["depths", "strata"])
def test_a_config_pool_batch_is_the_batch_of_the_command_line_and_of_write_batch(loop, tmp_path, shape, flags,
                                                                                 kwargs):
    """``pool: {batch, topics}`` writes, byte for byte, what ``evalbridge pool ... --batch --topics`` and
    ``write_batch(eb.pool(...), queries=topics)`` write for the same inputs; ``--no-write`` and ``write=False``
    write no batch (and no report)."""
    runs = {f"r{i}": loop[f"run{i}"] for i in range(3)}
    code, _, err = cli("pool", loop["qrels"], *(f"{name}={path}" for name, path in runs.items()), *flags,
                       "--batch", tmp_path / "cli.jsonl", "--topics", loop["topics"])
    assert code == 0, err
    write_batch(eb.pool(loop["qrels"], runs, **kwargs), tmp_path / "api.jsonl", queries=loop["topics"])
    config = _pool_config(tmp_path, loop, f"{{{shape}, batch: out/batch.jsonl, topics: {loop['topics']}}}")
    code, _, err = cli("run", config, "--no-write", "--format", "json")
    assert code == 0, err
    outcome = eb.run_config(eb.load_config(config), write=False)
    assert not (tmp_path / "out").exists() and not (tmp_path / "reports").exists() and outcome.files == ()
    code, _, err = cli("run", config, "--format", "json")
    assert code == 0, err
    written = (tmp_path / "out" / "batch.jsonl").read_bytes()
    assert written == (tmp_path / "cli.jsonl").read_bytes() == (tmp_path / "api.jsonl").read_bytes()
    assert "batch.jsonl (pool.batch)" in err
    outcome = eb.run_config(eb.load_config(config))
    assert tmp_path / "out" / "batch.jsonl" in outcome.files and (tmp_path / "out" / "batch.jsonl").read_bytes() == \
        written
    assert all(json.loads(line)["query"] for line in written.decode().splitlines()
               if json.loads(line).get("sampled", True))
    provenance = json.loads((tmp_path / "reports" / "report.json").read_text())["provenance"]
    assert provenance["config"]["pool"]["batch"] == "out/batch.jsonl" and "pool.topics" in provenance["inputs"]


@pytest.mark.parametrize("batch, words", [
    ("{qrels}", "would destroy the input"),
    ("{topics}", "would destroy the input"),
    ("{run1}", "would destroy the input"),
    ("eval.yaml", "would destroy the input"),
    ("reports/batch.jsonl", "inside the output folder"),
    ("folder", "folder"),
    ("fifo", "FIFO"),
], ids=["qrels", "topics", "run", "config", "in-report-folder", "folder", "fifo"])
def test_a_config_batch_that_is_an_input_or_not_a_regular_file_is_refused_before_any_work(loop, tmp_path, batch,
                                                                                          words):
    """Exit 2 naming the config's file:line and pool.batch, the fix, no traceback; nothing is written or replaced."""
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    given = batch.format(**{k: str(v) for k, v in loop.items()})
    config = _pool_config(tmp_path, loop, f"{{depth: 10, batch: {given}, topics: {loop['topics']}}}")
    before = {path: path.read_bytes() for path in (*loop.values(), config)}
    code, out, err = cli("run", config)
    assert code == 2 and f"{config}:6: pool.batch: " in err and words in err and "Fix: " in err, err
    assert "Traceback" not in err
    with pytest.raises(eb.InputError, match=f"eval.yaml:6: pool.batch: .*{words}"):
        eb.run_config(eb.load_config(config))
    assert {path: path.read_bytes() for path in before} == before and not (tmp_path / "reports").exists()


def test_config_texts_without_a_batch_are_refused_naming_the_key(loop, tmp_path):
    config = _pool_config(tmp_path, loop, f"{{depth: 10, topics: {loop['topics']}}}")
    code, _, err = cli("run", config, "--no-write")
    assert code == 2 and f"{config}:6: pool.topics: " in err and "Fix: add batch:" in err, err


def test_a_config_batch_of_a_dataset_by_name_carries_its_cached_topics(loop, tmp_path, shared):
    """With ``qrels: irds:...``, the batch's queries are the topics ir_datasets' cache holds, as ``evalbridge pool
    irds:... --batch`` has them (a fresh interpreter: ir_datasets binds its cache folder when imported)."""
    pytest.importorskip("ir_datasets", reason="ir_datasets is installed by `make test` (evalbridge[datasets])")
    import shutil
    import subprocess
    import sys

    dl19 = shared / DL19
    cache = tmp_path / "irds" / "msmarco-passage" / "trec-dl-2019"
    cache.mkdir(parents=True)
    shutil.copyfile(dl19 / "qrels.dl19-passage.txt", cache / "qrels")
    shutil.copyfile(dl19 / "topics.dl19-passage.txt", cache / "queries.tsv")
    (tmp_path / "eval.yaml").write_text(f"qrels: irds:msmarco-passage/trec-dl-2019/judged\n"
                                        f"runs: {{bm25: {loop['run0']}}}\nmetrics: [nDCG@10]\n"
                                        "pool: {depth: 100, batch: config.jsonl}\n")
    closed = "http://127.0.0.1:9"  # nothing is downloaded: a request would go to a closed port
    env = {**os.environ, "IR_DATASETS_HOME": str(tmp_path / "irds"), "HTTPS_PROXY": closed, "HTTP_PROXY": closed,
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    for argv in (["run", "eval.yaml", "--no-write", "-q"],  # --no-write: the config writes no batch
                 ["pool", "irds:msmarco-passage/trec-dl-2019/judged", f"bm25={loop['run0']}", "--depth", "100",
                  "--batch", "cli.jsonl"],
                 ["run", "eval.yaml", "-q"]):
        done = subprocess.run([sys.executable, "-m", "evalbridge", *argv], capture_output=True, text=True, env=env,
                              cwd=tmp_path, timeout=240)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "config.jsonl").exists() == (argv[-1] == "-q" and "--no-write" not in argv)
    topics = dict(line.split("\t", 1) for line in (dl19 / "topics.dl19-passage.txt").read_text().splitlines())
    batch = [json.loads(line) for line in (tmp_path / "config.jsonl").read_text().splitlines()]
    assert batch and all(item["query"] == topics[item["query_id"]] for item in batch)
    assert (tmp_path / "config.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()
