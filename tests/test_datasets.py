"""Datasets by name (``irds:<dataset id>``): read by ir_datasets' real loader from its cache, at every door.

ir_datasets binds its cache folder (``IR_DATASETS_HOME``) when it is imported, so every test that reads through it
runs in a fresh interpreter whose ``IR_DATASETS_HOME`` is a temporary folder. The TREC DL 2019 passage qrels of
``../shared/data/real/`` are put where ir_datasets keeps ``msmarco-passage/trec-dl-2019``'s qrels (the file
``2019qrels-pass.txt``, md5 2f4be390198da108f6845c822e5ada14, cached as ``msmarco-passage/trec-dl-2019/qrels``).
A dataset that is not cached makes ir_datasets try to download it: the tests send every request to a closed
port of the loopback interface (``HTTPS_PROXY``), so the download fails at once and nothing leaves the machine.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ir_datasets", reason="ir_datasets is installed by `make test` (evalbridge[datasets])")

DATASET = "msmarco-passage/trec-dl-2019/judged"
TESTS = Path(__file__).resolve().parent
#: a port of the loopback interface where nothing listens: a download through it is refused at once
CLOSED = "http://127.0.0.1:9"


@pytest.fixture
def dl19(shared: Path) -> Path:
    """The TREC DL 2019 passage folder of ``../shared/data/real``."""
    return shared / "data" / "real" / "trec-dl-2019-passage"


def _cache(home: Path, qrels: Path) -> Path:
    """``home`` as ir_datasets' cache holding the TREC DL 2019 passage qrels ``qrels`` (nothing else)."""
    target = home / "msmarco-passage" / "trec-dl-2019" / "qrels"
    target.parent.mkdir(parents=True)
    shutil.copyfile(qrels, target)
    return home


def _fresh(code: str, home: Path, cwd: Path) -> dict:
    """Run ``code`` in a fresh interpreter with ``home`` as ir_datasets' cache and no way out of the machine;
    return the JSON it prints last."""
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "HTTPS_PROXY": CLOSED, "HTTP_PROXY": CLOSED,
           "https_proxy": CLOSED, "http_proxy": CLOSED,
           "PYTHONPATH": os.pathsep.join((str(TESTS), str(TESTS.parent)))}  # this checkout's evalbridge
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=env,
                          cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_dl19_judged_read_by_name_equals_the_file_and_ir_datasets_published_counts(tmp_path: Path, dl19: Path) -> None:
    """``read_qrels("irds:msmarco-passage/trec-dl-2019/judged")`` through ir_datasets' own loader gives the qrels
    of the file (same queries, documents and grades), and the counts ir_datasets publishes for the dataset
    (its metadata: 9260 judgements, by grade 5158 / 1601 / 1804 / 697, 43 judged queries)."""
    code = f"""
import json, collections, ir_datasets, evalbridge as eb
by_name = eb.read_qrels("irds:{DATASET}")
from_file = eb.read_qrels({str(dl19 / "qrels.dl19-passage.txt")!r})
dataset = ir_datasets.load("{DATASET}")
grades = collections.Counter(str(g) for docs in by_name.values() for g in docs.values())
print(json.dumps({{"same": {{q: dict(d) for q, d in by_name.items()}} == {{q: dict(d) for q, d in from_file.items()}},
                  "rows": sum(len(d) for d in by_name.values()), "queries": len(by_name), "grades": grades,
                  "source": by_name.source, "published": dataset.qrels_metadata(),
                  "published_queries": dataset.queries_count()}}))
"""
    got = _fresh(code, _cache(tmp_path / "irds", dl19 / "qrels.dl19-passage.txt"), tmp_path)
    assert got["same"]
    assert got["source"] == f"irds:{DATASET}"
    assert got["rows"] == got["published"]["count"] == 9260
    assert got["grades"] == got["published"]["fields"]["relevance"]["counts_by_value"]
    assert got["queries"] == got["published_queries"] == 43


def test_the_three_doors_read_the_same_dataset_by_name(tmp_path: Path, dl19: Path) -> None:
    """``irds:<id>`` as the API's qrels, the CLI's QRELS and a config's ``qrels:`` gives the same means at each
    door, and the same as the qrels file itself."""
    run, qrels = dl19 / "run.bm25.top100.txt", dl19 / "qrels.dl19-passage.txt"
    code = f"""
import json
from doors import Case, through_doors, assert_same
files = {{"bm25.run": open({str(run)!r}).read(), "qrels.txt": open({str(qrels)!r}).read()}}
by_name = through_doors(Case(files=files, qrels="irds:{DATASET}", runs=("bm25.run",), metrics=("nDCG@10", "AP")),
                        "by_name")
assert_same(by_name)
by_file = through_doors(Case(files=files, qrels="qrels.txt", runs=("bm25.run",), metrics=("nDCG@10", "AP")),
                        "by_file")
print(json.dumps({{door: [d.code, d.means, d.message] for door, d in by_name.items()}} |
                 {{"file": by_file["api"].means}}))
"""
    (tmp_path / "by_name").mkdir()
    (tmp_path / "by_file").mkdir()
    got = _fresh(code, _cache(tmp_path / "irds", qrels), tmp_path)
    assert [got[door][0] for door in ("api", "cli", "config")] == [0, 0, 0], got
    assert got["api"][1] == got["cli"][1] == got["config"][1] == got["file"]
    assert got["file"]["bm25"]["nDCG@10"] == pytest.approx(0.5058, abs=5e-5)  # Anserini's BM25 (default) on DL19


def test_a_dataset_not_cached_names_the_file_ir_datasets_wants_and_where_to_put_it(tmp_path: Path) -> None:
    """With an empty cache and no network, every door exits 2 with one message: the dataset, the file's address
    and checksum, and the path to put it at; no traceback, no exception or log line of ir_datasets."""
    code = f"""
import json
from doors import Case, through_doors, assert_same
doors = through_doors(Case(files={{"bm25.run": "q1 Q0 d1 1 1.0 x\\n"}}, qrels="irds:{DATASET}", runs=("bm25.run",),
                           metrics=("AP",)), "case")
assert_same(doors, says=("is not in ir_datasets' cache", "2f4be390198da108f6845c822e5ada14"))
print(json.dumps({{door: [d.code, d.message] for door, d in doors.items()}}))
"""
    (tmp_path / "case").mkdir()
    home = tmp_path / "empty"
    env = {**os.environ, "IR_DATASETS_HOME": str(home), "HTTPS_PROXY": CLOSED, "HTTP_PROXY": CLOSED,
           "https_proxy": CLOSED, "http_proxy": CLOSED}
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    got = _fresh(code, home, tmp_path)
    wanted = str(home / "msmarco-passage" / "trec-dl-2019" / "qrels")
    for door, (code_, message) in got.items():
        assert code_ == 2, (door, message)
        assert f"put that file at {wanted}" in message and DATASET in message, (door, message)
        assert "Traceback" not in message and "RuntimeError" not in message and "[INFO]" not in message
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "eval", f"irds:{DATASET}", "bm25.run", "-m", "AP"],
                         capture_output=True, text=True, timeout=240, env=env, cwd=tmp_path / "case")
    assert cli.returncode == 2
    assert cli.stderr.startswith("evalbridge: error: ") and cli.stderr.count("\n") <= 1, cli.stderr  # one line


def test_an_unknown_dataset_id_gets_the_close_names(tmp_path: Path) -> None:
    code = f"""
import json, evalbridge as eb
try:
    eb.read_qrels("irds:msmarco-passage/trec-dl-2019/judgd")
except eb.InputError as error:
    print(json.dumps({{"message": str(error)}}))
"""
    got = _fresh(code, tmp_path / "empty", tmp_path)
    assert "ir_datasets has no dataset 'msmarco-passage/trec-dl-2019/judgd'" in got["message"]
    assert f"did you mean '{DATASET}'" in got["message"]


def test_without_ir_datasets_the_error_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """The extra is optional: without it, the message names the install command (no ImportError of Python's)."""
    import evalbridge as eb
    from evalbridge.errors import EvalbridgeError

    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # `import ir_datasets` now raises ImportError
    with pytest.raises(EvalbridgeError, match=r"pip install 'evalbridge\[datasets\]'"):
        eb.read_qrels(f"irds:{DATASET}")


def test_a_dataset_by_name_is_qrels_not_a_run() -> None:
    import evalbridge as eb

    with pytest.raises(eb.InputError, match="holds qrels, not run"):
        eb.read_run(f"irds:{DATASET}")


def test_naming_a_dataset_imports_nothing_until_it_is_read(tmp_path: Path) -> None:
    """Resolving ``irds:...`` (the registry, a config's validation) does not import ir_datasets."""
    code = """
import json, sys
from evalbridge.io import resolve
name = resolve("irds:msmarco-passage/trec-dl-2019/judged", kind="qrels").name
print(json.dumps({"format": name, "imported": "ir_datasets" in sys.modules}))
"""
    assert _fresh(code, tmp_path / "empty", tmp_path) == {"format": "irds", "imported": False}


def test_a_dataset_by_name_given_another_format_is_refused_alike_at_every_door(tmp_path: Path) -> None:
    """``irds:...`` with ``format: trec`` (``--qrels-format trec``) names no TREC file: refused with the fix, never
    read as a missing file; nothing is imported from ir_datasets to say so."""
    from doors import Case, assert_same, through_doors

    doors = through_doors(Case(files={"bm25.run": "q1 Q0 d1 1 1.0 x\n"}, qrels=f"irds:{DATASET}", runs=("bm25.run",),
                               metrics=("AP",), qrels_options={"format": "trec"}), tmp_path)
    assert_same(doors, says=("names an input of format 'irds'", "remove the format"))
    assert {door.code for door in doors.values()} == {2}


def test_convert_writes_a_dataset_by_name_as_a_qrels_file(tmp_path: Path, dl19: Path) -> None:
    """``evalbridge convert irds:<id> qrels.txt`` needs no ``--kind``: a dataset is qrels; the file written holds
    the dataset's qrels."""
    code = f"""
import json, subprocess, sys
import evalbridge as eb
done = subprocess.run([sys.executable, "-m", "evalbridge", "convert", "irds:{DATASET}", "out.txt"],
                      capture_output=True, text=True)
same = done.returncode == 0 and eb.read_qrels("out.txt") == eb.read_qrels({str(dl19 / "qrels.dl19-passage.txt")!r})
print(json.dumps({{"code": done.returncode, "err": done.stderr, "same": same}}))
"""
    got = _fresh(code, _cache(tmp_path / "irds", dl19 / "qrels.dl19-passage.txt"), tmp_path)
    assert got["code"] == 0 and got["same"], got


def test_official_takes_the_dataset_s_official_measures_with_the_published_values(tmp_path: Path, dl19: Path) -> None:
    """``metrics: official`` (a config) and ``-m official`` (the command line) on ``irds:`` DL19 passage evaluate
    ir_datasets' official measures, nDCG@10, RR(rel=2) and AP(rel=2): BM25's nDCG@10 is Anserini's published
    0.5058; the other two equal the same metrics named by hand on the qrels file."""
    run, qrels = dl19 / "run.bm25.top100.txt", dl19 / "qrels.dl19-passage.txt"
    code = f"""
import json, subprocess, sys
import evalbridge as eb
open("eval.yaml", "w").write("qrels: irds:{DATASET}\\nruns: {{bm25: {run}}}\\nmetrics: official\\n")
report = eb.run_config(eb.load_config("eval.yaml"), write=False).report
by_hand = eb.evaluate(eb.read_qrels({str(qrels)!r}), eb.read_run({str(run)!r}), ["nDCG@10", "RR(rel=2)", "AP(rel=2)"])
done = subprocess.run([sys.executable, "-m", "evalbridge", "eval", "irds:{DATASET}", {str(run)!r}, "-m", "official",
                       "--format", "json"], capture_output=True, text=True)
print(json.dumps({{"config": dict(report.results["bm25"].means), "by_hand": dict(by_hand.means),
                  "cli": done.stdout, "code": done.returncode, "err": done.stderr,
                  "title": json.loads(done.stdout)["title"] if done.returncode == 0 else None}}))
"""
    got = _fresh(code, _cache(tmp_path / "irds", qrels), tmp_path)
    assert list(got["config"]) == ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]
    assert got["config"] == got["by_hand"]
    assert got["config"]["nDCG@10"] == pytest.approx(0.5058, abs=5e-5)  # Anserini's BM25 (default) on DL19
    assert got["code"] == 0, got["err"]
    assert all(f'"{label}"' in got["cli"] for label in got["config"]), got["cli"]
    assert got["title"] == f"evalbridge eval irds:{DATASET}"  # the report is titled by the dataset's id


def test_official_without_a_dataset_is_refused_with_the_fix(tmp_path: Path) -> None:
    import evalbridge as eb

    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 1.0 x\n")
    (tmp_path / "eval.yaml").write_text("qrels: q.txt\nruns: {a: r.txt}\nmetrics: [official]\n")
    with pytest.raises(eb.InputError, match="not a dataset of ir_datasets"):
        eb.load_config(tmp_path / "eval.yaml")


def test_official_at_the_python_door_says_which_measures_it_took(tmp_path: Path, dl19: Path) -> None:
    """``eb.evaluate("irds:<id>", run, "official")`` (and qrels read from the dataset, ``official`` in a list) takes
    the same measures as the config and the command line, with the published BM25 nDCG@10, and its provenance says
    which; a config without a title is titled by its dataset."""
    run, qrels = dl19 / "run.bm25.top100.txt", dl19 / "qrels.dl19-passage.txt"
    code = f"""
import json
import evalbridge as eb
alone = eb.evaluate("irds:{DATASET}", {str(run)!r}, "official")
listed = eb.evaluate(eb.read_qrels("irds:{DATASET}"), {str(run)!r}, ["P@10", "official"])
compared = eb.compare("irds:{DATASET}", {{"a": {str(run)!r}, "b": {str(run)!r}}}, "official", n_resamples=50)
diffed = eb.diff("irds:{DATASET}", {str(run)!r}, {str(run)!r}, "official")
named = eb.compare("irds:{DATASET}", {{"a": {str(run)!r}, "b": {str(run)!r}}}, ["nDCG@10"], n_resamples=50)
open("eval.yaml", "w").write("qrels: irds:{DATASET}\\nruns: {{bm25: {run}}}\\nmetrics: official\\n")
report = eb.run_config(eb.load_config("eval.yaml"), write=False).report
print(json.dumps({{"alone": dict(alone.means), "notes": list(alone.provenance.notes), "listed": list(listed.means),
                  "config": dict(report.results["bm25"].means), "title": report.title,
                  "compared": [row.metric for row in compared.rows], "said": {{"compare": list(compared.provenance),
                  "diff": list(diffed.provenance), "named": list(named.provenance)}}}}))
"""
    got = _fresh(code, _cache(tmp_path / "irds", qrels), tmp_path)
    assert got["alone"] == got["config"] and list(got["alone"]) == ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]
    assert got["alone"]["nDCG@10"] == pytest.approx(0.5058, abs=5e-5)  # Anserini's BM25 (default) on DL19
    assert got["listed"] == ["P@10", "nDCG@10", "RR(rel=2)", "AP(rel=2)"]
    assert f"metrics: the official measures of irds:{DATASET} (ir_datasets): nDCG@10, RR(rel=2), AP(rel=2)" \
        in got["notes"]
    assert got["title"] == f"irds:{DATASET}"
    assert got["compared"] == ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]  # eb.compare takes it too
    took = f"metrics: the official measures of irds:{DATASET} (ir_datasets): nDCG@10, RR(rel=2), AP(rel=2)"
    # compare's and diff's provenance say which first, once; metrics named are not said to be official
    assert got["said"]["compare"][0] == got["said"]["diff"][0] == took
    assert [line for said in got["said"].values() for line in said].count(took) == 2


def test_official_at_the_python_door_without_a_dataset_is_refused_with_the_fix() -> None:
    import evalbridge as eb

    with pytest.raises(eb.InputError, match="not a dataset of ir_datasets.*Fix: read the qrels as irds:"):
        eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "official")


def _cache_with_topics(home: Path, dl19: Path) -> Path:
    """``home`` as ir_datasets' cache holding DL19 passage's qrels and its topics (``queries.tsv``: id, tab, text)."""
    _cache(home, dl19 / "qrels.dl19-passage.txt")
    shutil.copyfile(dl19 / "topics.dl19-passage.txt", home / "msmarco-passage" / "trec-dl-2019" / "queries.tsv")
    return home


def test_a_dataset_s_grade_meanings_and_topics_reach_every_report_and_the_judging_batch(tmp_path: Path,
                                                                                       dl19: Path) -> None:
    """From ir_datasets' cache, offline: what DL19's grades mean (its qrels_defs) in the decision block of the
    terminal, Markdown, HTML and JSON reports; its topics as the texts of ``pool --batch`` and of the page's hover
    names of the plotted queries. With no topics in the cache nothing is downloaded: the batch says null."""
    runs = {name: str(dl19 / f"run.{name}.top100.txt") for name in ("bm25", "splade-pp-ed")}
    config = (f"qrels: irds:{DATASET}\nruns: {json.dumps(runs)}\nmetrics: [nDCG@10]\n"
              "comparison: {baseline: bm25, n_resamples: 200}\n")
    code = f"""
import json, subprocess, sys
import evalbridge as eb
from evalbridge.io.datasets import grade_meanings
def cli(*args):
    done = subprocess.run([sys.executable, "-m", "evalbridge", *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout
shown = {{fmt: cli("eval", "irds:{DATASET}", {runs["bm25"]!r}, "-m", "official", "--format", fmt)
         for fmt in ("terminal", "markdown", "html", "json")}}
cli("pool", "irds:{DATASET}", {runs["bm25"]!r}, "--depth", "100", "--batch", "batch.jsonl")
batch = [json.loads(line) for line in open("batch.jsonl")]
open("eval.yaml", "w").write({config!r})
report = eb.run_config(eb.load_config("eval.yaml"), write=False).report
print(json.dumps({{"shown": shown, "batch": batch, "meanings": grade_meanings("irds:{DATASET}"),
                  "page": report.render("html"), "topics": dict(report.topics)}}))
"""
    home = _cache_with_topics(tmp_path / "irds", dl19)
    got = _fresh(code, home, tmp_path)
    meanings = got["meanings"]
    assert meanings["0"].startswith("Irrelevant: ") and meanings["3"].startswith("Perfectly relevant: ")
    assert list(meanings) == ["0", "1", "2", "3"]
    said = f"its grades mean: {' '.join(f'{g} = {m}' for g, m in meanings.items())}"
    for fmt, text in got["shown"].items():
        if fmt == "json":
            caveats = json.loads(text)["decision"]["caveats"]
            assert any(c.endswith(said) and f"irds:{DATASET}" in c for c in caveats), caveats
        else:
            head = text[:text.index("nDCG@10")]  # the decision block comes before the tables
            assert ("Perfectly relevant: The passage is dedicated to the query" in head
                    and "Irrelevant: The passage has nothing to do with the query." in head), (fmt, head[:2000])
    topics = {line.split("\t")[0]: line.split("\t", 1)[1] for line in
              (dl19 / "topics.dl19-passage.txt").read_text(encoding="utf-8").splitlines()}
    assert got["batch"] and all(item["query"] == topics[item["query_id"]] for item in got["batch"])
    assert got["topics"] == topics
    for qid in list(topics)[:5]:
        assert re.search(f"<title>{qid}: Δ [+-]\\d\\.\\d{{4}}\\n{re.escape(html.escape(topics[qid]))}</title>",
                         got["page"]), qid
    (home / "msmarco-passage" / "trec-dl-2019" / "queries.tsv").unlink()
    bare = _fresh(code, home, tmp_path)
    assert bare["batch"] and all(item["query"] is None for item in bare["batch"]) and bare["topics"] == {}


#: the official measures of DL19 passage, as ir_datasets lists them, and what every door says it took
OFFICIAL = ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]
TOOK = f"metrics: the official measures of irds:{DATASET} (ir_datasets): nDCG@10, RR(rel=2), AP(rel=2)"


def _judgements(tmp_path: Path, dl19: Path) -> dict[str, str]:
    """Two more sets of judgements of DL19's pairs: ``other`` (every 7th grade set to 0, a second judge) and
    ``human`` (every 3rd query whole, a human sample), written beside the test."""
    lines = (dl19 / "qrels.dl19-passage.txt").read_text(encoding="utf-8").splitlines()
    other = [" ".join(line.split()[:3] + ["0"]) if i % 7 == 0 else line for i, line in enumerate(lines)]
    sampled = sorted({line.split()[0] for line in lines})[::3]
    (tmp_path / "other.txt").write_text("\n".join(other) + "\n")
    (tmp_path / "human.txt").write_text("\n".join(l for l in lines if l.split()[0] in sampled) + "\n")
    return {"other": str(tmp_path / "other.txt"), "human": str(tmp_path / "human.txt")}


def test_official_at_every_verb_s_python_door_takes_the_dataset_s_measures(tmp_path: Path, dl19: Path) -> None:
    """Every verb that takes judgements and metrics takes ``"official"`` of qrels read from a dataset (the one rule
    of evaluate): power of runs, diagnose, what_changed, agree with runs, ppi, judges with runs, uncertain, diff;
    each measures DL19's nDCG@10, RR(rel=2) and AP(rel=2), whichever of its judgements is the dataset."""
    given = _judgements(tmp_path, dl19)
    runs = {"bm25": str(dl19 / "run.bm25.top100.txt"), "splade": str(dl19 / "run.splade-pp-ed.top100.txt")}
    code = f"""
import json, warnings
import evalbridge as eb
warnings.simplefilter("ignore")
DS, runs, other, human = "irds:{DATASET}", {runs!r}, {given["other"]!r}, {given["human"]!r}
took = {{
    "power": [r.metric for r in eb.power(runs, "official", qrels=DS).rows],
    "diagnose": list(eb.diagnose(DS, runs, "official", trials=20).metrics),
    "what_changed": [r.metric for r in eb.what_changed(other, DS, runs, "official", n_resamples=50).ranking.rows],
    "agree": [r.metric for r in eb.agree(DS, other, runs, "official", n_resamples=50).ranking.rows],
    "ppi": list(eb.ppi(other, DS, runs, ["official"], baseline="bm25").metrics),
    "judges": list(eb.judges(DS, {{"j": other}}, runs, "official", n_resamples=50).metrics),
    "uncertain": list(eb.uncertain(runs["bm25"], "official", judges={{"a": other, "b": DS}}, draws=5,
                                   n_resamples=50).metrics),
    "diff": list(eb.diff(eb.read_qrels(DS), runs["bm25"], runs["splade"], "official").metrics),
}}
print(json.dumps(took))
"""
    took = _fresh(code, _cache(tmp_path / "irds", dl19 / "qrels.dl19-passage.txt"), tmp_path)
    assert took == dict.fromkeys(took, OFFICIAL) and len(took) == 8, took


def _verbs(q: dict, run: dict) -> dict:
    import evalbridge as eb

    runs = {"a": run, "b": run}
    return {"power": lambda: eb.power(runs, "official", qrels=q), "diagnose": lambda: eb.diagnose(q, runs, "official"),
            "what_changed": lambda: eb.what_changed(q, q, runs, ["official"]),
            "agree": lambda: eb.agree(q, q, runs, "official"), "ppi": lambda: eb.ppi(q, q, runs, "official"),
            "judges": lambda: eb.judges(q, {"j": q}, runs, "official"), "diff": lambda: eb.diff(q, run, run, "official"),
            "uncertain": lambda: eb.uncertain(run, "official", judges={"a": q, "b": q})}


@pytest.mark.parametrize("verb", list(_verbs({}, {})))
def test_official_at_a_verb_without_a_dataset_is_refused_as_evaluate_refuses_it(verb: str) -> None:
    import evalbridge as eb

    q, run = {"q1": {"d1": 1, "d2": 0}, "q2": {"d1": 1}}, {"q1": {"d1": 1.0, "d2": 0.5}, "q2": {"d1": 0.3}}
    with pytest.raises(eb.InputError) as refused:
        _verbs(q, run)[verb]()
    with pytest.raises(eb.InputError) as evaluated:
        eb.evaluate(q, run, "official")
    assert str(refused.value) == str(evaluated.value)
    assert "not a dataset of ir_datasets" in str(refused.value) and "Fix: read the qrels as irds:" in str(refused.value)


def test_minus_m_official_at_every_command_takes_the_measures_and_says_so_once(tmp_path: Path, dl19: Path) -> None:
    """``-m official`` at every command that evaluates judgements (power, tiers, design, diagnose, changed, ppi, diff,
    uncertain, judges, check, agree, eval) takes DL19's official measures and says which once, in the Python door's
    words: on stderr beside a command's own table, in the decision block of a report (eval, agree) and nowhere
    else. Without a dataset, exit 2 with evaluate's refusal and fix."""
    given = _judgements(tmp_path, dl19)
    bm25, splade = str(dl19 / "run.bm25.top100.txt"), str(dl19 / "run.splade-pp-ed.top100.txt")
    ds, few = f"irds:{DATASET}", ["--n-resamples", "50"]
    commands = {
        "power": ["power", ds, bm25, splade], "tiers": ["tiers", ds, bm25, splade, *few],
        "design": ["design", ds, bm25, splade], "diagnose": ["diagnose", ds, bm25, splade, "--trials", "20"],
        "changed": ["changed", given["other"], ds, bm25, splade, *few],
        "ppi": ["ppi", ds, bm25, splade, "--human", given["human"]], "diff": ["diff", ds, bm25, splade],
        "uncertain": ["uncertain", bm25, "--judges", ds, given["other"], "--draws", "5", *few],
        "judges": ["judges", ds, f"j={given['other']}", "--runs", bm25, splade, *few],
        "check": ["check", ds, bm25], "agree": ["agree", ds, given["other"], bm25, splade, *few],
        "eval": ["eval", ds, bm25, splade],
    }
    code = f"""
import json, subprocess, sys
def cli(args):
    done = subprocess.run([sys.executable, "-m", "evalbridge", *args, "-m", "official"], capture_output=True,
                          text=True)
    return {{"code": done.returncode, "out": done.stdout, "err": done.stderr}}
shown = {{name: cli(args) for name, args in {commands!r}.items()}}
shown["refused"] = cli(["power", {str(dl19 / "qrels.dl19-passage.txt")!r}, {bm25!r}, {splade!r}])
print(json.dumps(shown))
"""
    shown = _fresh(code, _cache(tmp_path / "irds", dl19 / "qrels.dl19-passage.txt"), tmp_path)
    refused = shown.pop("refused")
    for name, done in shown.items():
        assert done["code"] == 0, (name, done["err"])
        assert "RR(rel=2)" in done["out"] and "AP(rel=2)" in done["out"], (name, done["out"][:800])
        said = done["out"].count(TOOK) + done["err"].count(TOOK)
        assert said == 1, (name, said, done["err"][-800:])
        if name in ("eval", "agree"):  # the report's decision block says it, before the tables
            assert TOOK in done["out"][:done["out"].index("system")], name
    assert refused["code"] == 2
    assert "--metrics: 'official' takes the official measures of a dataset, and the qrels are not a dataset" \
           in refused["err"] and "Fix: read the qrels as irds:" in refused["err"], refused["err"]


def test_metrics_official_in_every_config_section_takes_the_measures_and_the_report_says_so_once(
        tmp_path: Path, dl19: Path) -> None:
    """``official`` in a config's sections (``diagnose: {metric}``, ``uncertain: {metric}``, ``changed: {metrics}``,
    ``agreement: {metrics}``) takes the measures of the dataset among their judgements, as the verbs do; the
    report's decision says which once, in the Python door's words (terminal, Markdown, HTML and report.json); a
    section's ``official`` without a dataset is refused at its key with the fix."""
    given = _judgements(tmp_path, dl19)
    runs = {"bm25": str(dl19 / "run.bm25.top100.txt"), "splade": str(dl19 / "run.splade-pp-ed.top100.txt")}
    config = (f"qrels: irds:{DATASET}\nruns: {json.dumps(runs)}\nmetrics: [P@10]\n"
              "diagnose: {metric: official, trials: 20}\n"
              f"uncertain: {{metric: official, judges: {{a: {given['other']}, b: irds:{DATASET}}}, draws: 5, "
              "n_resamples: 50}\n"
              f"changed: {{before: {given['other']}, metrics: official, n_resamples: 50}}\n"
              f"agreement: {{judges: {{a: irds:{DATASET}, b: {given['other']}}}, runs: [bm25, splade], metrics: official, n_resamples: 50}}\n")
    code = f"""
import json
import evalbridge as eb
open("eval.yaml", "w").write({config!r})
config = eb.load_config("eval.yaml")
report = eb.run_config(config, write=False).report
a = report.analyses
held = {{"config": list(config.official),
         "sections": {{key: list(config.analyses[key].official) for key in ("diagnose", "uncertain", "changed",
                                                                         "agreement")}},
         "recorded": report.provenance["official"],
         "in_settings": [key for key in ("diagnose", "uncertain", "changed", "agreement")
                         if "official" in report.provenance["config"][key]]}}
open("bad.yaml", "w").write({config.replace(f"qrels: irds:{DATASET}", "qrels: " + given["human"])
                                    .replace(f"b: irds:{DATASET}", "b: " + given["human"])
                                    .replace(f"a: irds:{DATASET}", "a: " + given["human"])
                                    .replace("metric: official, trials", "metric: P@10, trials")!r})
try:
    eb.load_config("bad.yaml")
    refused = None
except eb.InputError as error:
    refused = str(error)
print(json.dumps({{"took": {{"diagnose": list(a["diagnose"].metrics), "uncertain": list(a["uncertain"]["bm25"].metrics),
                           "changed": [r.metric for r in a["changed"].ranking.rows],
                           "agreement": [r.metric for r in report.agreement.ranking.rows]}},
                  "caveats": list(report.decision.caveats),
                  "shown": {{fmt: report.render(fmt) for fmt in ("terminal", "markdown", "html", "json")}},
                  "refused": refused, "held": held}}))
"""
    got = _fresh(code, _cache(tmp_path / "irds", dl19 / "qrels.dl19-passage.txt"), tmp_path)
    assert got["took"] == dict.fromkeys(got["took"], OFFICIAL), got["took"]
    # the note is data: each section's settings hold theirs, the config holds them once, the provenance records that
    assert got["held"]["sections"] == dict.fromkeys(got["held"]["sections"], [TOOK]), got["held"]
    assert got["held"]["config"] == got["held"]["recorded"] == [TOOK] and got["held"]["in_settings"] == []
    assert got["caveats"].count(TOOK) == 1, got["caveats"]
    assert got["shown"]["terminal"].count(TOOK) == 1
    assert json.loads(got["shown"]["json"])["decision"]["caveats"].count(TOOK) == 1
    for fmt, record in (("markdown", "## Provenance"), ("html", 'id="provenance"')):  # the provenance's record aside
        text = got["shown"][fmt]
        assert text[:text.index(record)].count(TOOK) == 1, fmt
    assert got["refused"] is not None and "bad.yaml:7: agreement.metrics: " in got["refused"] \
        and "not a dataset of ir_datasets" in got["refused"] and "Fix: read the qrels as irds:" in got["refused"]


def test_pool_of_the_runs_queries_on_a_dataset_names_its_topics_when_one_has_no_text(tmp_path: Path,
                                                                                   dl19: Path) -> None:
    """``pool irds:… RUN --queries runs --batch`` with no ``--topics``, where a run answers a query the dataset's
    topics lack: exit 2, the message names the dataset's topics (not "the topics given", none were) and the fix
    (``--topics``, or ``--queries qrels``), and no batch is written."""
    run = tmp_path / "run.txt"
    bm25 = (dl19 / "run.bm25.top100.txt").read_text(encoding="utf-8")
    run.write_text(bm25 + "".join(f"999999 Q0 d{i} {i} {1 - i / 100} extra\n" for i in range(1, 4)))
    code = f"""
import json, os, subprocess, sys
done = subprocess.run([sys.executable, "-m", "evalbridge", "pool", "irds:{DATASET}", {str(run)!r}, "--queries", "runs",
                       "--depth", "10", "--batch", "batch.jsonl"], capture_output=True, text=True)
print(json.dumps({{"code": done.returncode, "err": done.stderr, "batch": os.path.exists("batch.jsonl")}}))
"""
    got = _fresh(code, _cache_with_topics(tmp_path / "irds", dl19), tmp_path)
    assert got["code"] == 2 and not got["batch"], got
    assert f"are not among the topics of irds:{DATASET}" in got["err"] and "'999999'" in got["err"], got["err"]
    assert "topics given" not in got["err"]
    assert "--topics" in got["err"] and "--queries qrels" in got["err"], got["err"]
    config = (f"qrels: irds:{DATASET}\nruns: {{extra: {run}}}\nmetrics: [nDCG@10]\n"
              "pool: {depth: 10, queries: runs, batch: config-batch.jsonl}\n")
    code = f"""
import json, os
import evalbridge as eb
open("eval.yaml", "w").write({config!r})
try:
    eb.run_config(eb.load_config("eval.yaml"))
    said = None
except eb.InputError as error:
    said = str(error)
print(json.dumps({{"said": said, "batch": os.path.exists("config-batch.jsonl")}}))
"""
    by_config = _fresh(code, _cache_with_topics(tmp_path / "irds-config", dl19), tmp_path)
    assert by_config["said"] is not None and not by_config["batch"], by_config
    assert f"are not among the topics of irds:{DATASET}" in by_config["said"] and "pool: {topics: FILE}" \
        in by_config["said"], by_config["said"]


def test_official_with_the_human_sample_from_a_dataset_takes_its_measures_at_the_three_doors(tmp_path: Path,
                                                                                            dl19: Path) -> None:
    """The judge's labels in a file and the human sample from a dataset: eb.ppi(judge, "irds:...", runs,
    "official"), evalbridge ppi JUDGE RUN... --human irds:... -m official and a config's metrics: official with
    ppi: {human: irds:...} take the dataset's measures (the qrels first, then the human side, as eb.ppi's one rule)
    and give the same estimates; the command says which once."""
    given = _judgements(tmp_path, dl19)
    bm25, splade = str(dl19 / "run.bm25.top100.txt"), str(dl19 / "run.splade-pp-ed.top100.txt")
    config = (f"qrels: {given['other']}\nruns: {{bm25: {bm25}, splade: {splade}}}\nmetrics: official\n"
              f"ppi: {{human: 'irds:{DATASET}'}}\n")
    code = f"""
import json, subprocess, sys, warnings
import evalbridge as eb
warnings.simplefilter("ignore")
runs = {{"bm25": eb.read_run({bm25!r}), "splade": eb.read_run({splade!r})}}
api = eb.ppi(eb.read_qrels({given['other']!r}), "irds:{DATASET}", runs, "official", baseline="bm25").to_dict()
done = subprocess.run([sys.executable, "-m", "evalbridge", "ppi", {given['other']!r}, "bm25=" + {bm25!r},
                       "splade=" + {splade!r}, "--human", "irds:{DATASET}", "-m", "official", "--format", "json"],
                      capture_output=True, text=True)
open("eval.yaml", "w").write({config!r})
report = eb.run_config(eb.load_config("eval.yaml"), write=False).report
print(json.dumps({{"api": api, "code": done.returncode, "out": done.stdout, "err": done.stderr,
                  "config": report.analyses["ppi"].to_dict()}}))
"""
    got = _fresh(code, _cache(tmp_path / "irds", dl19 / "qrels.dl19-passage.txt"), tmp_path)
    assert got["code"] == 0, got["err"]
    assert json.loads(got["out"]) == got["api"] == got["config"]
    assert got["api"]["metrics"] == ["nDCG@10", "RR(rel=2)", "AP(rel=2)"]
    assert got["err"].count(TOOK) == 1, got["err"]
