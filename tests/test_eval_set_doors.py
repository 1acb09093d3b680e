"""The eval-set loop at its two doors (the Python API and the command line: ``evalbridge pool``, ``merge``,
``changed``) on TREC DL 2019: the same pool, the same batch file, the same merged judgements and sources, the same
answer; bad input exits 2 with the file and the fix, never a traceback. A config's ``changed:`` section gives what
``changed`` gives, in its report. (A config run has no pool or merge step: a loop that asks a judge between two runs
of evalbridge is not one configured evaluation.)"""

from __future__ import annotations

import json
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
