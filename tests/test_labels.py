"""Stable metric names (issue 18): results, reports, JSON and gates keyed by the label asked for (else the
spelling asked), whatever the settings; the metric as evaluated recorded beside it; the three doors agree."""

from __future__ import annotations

import json
import pickle
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.config import load_config
from evalbridge.metrics.requests import metric_requests, split_label
from evalbridge.config.pipeline import run_config
from evalbridge.views.formats import report_formats
from evalbridge.reports.report import Report, render, report_dict
from evalbridge.decisions.compare import compare_systems
from evalbridge.decisions.gates import check_gates, parse_gates
from strategies import qrels_and_run

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d6 1\n"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d9 1 2.0 a\nq2 Q0 d4 2 1.0 a\nq3 Q0 d6 1 1.0 a\n"
RUN_B = "q1 Q0 d3 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq2 Q0 d4 1 2.0 b\nq2 Q0 d5 2 1.0 b\nq3 Q0 d7 1 1.0 b\n"
#: eight queries on which "dense" beats "bm25" on every query: d_q constant, so every test is significant
QRELS_8 = {f"q{i}": {"d1": 2, "d2": 1} for i in range(8)}
RUNS_8 = {"bm25": {q: {"d3": 0.9, "d1": 0.5} for q in QRELS_8},
          "dense": {q: {"d1": 0.9, "d2": 0.8} for q in QRELS_8}}


@pytest.fixture
def files(tmp_path):
    for name, text in (("qrels.txt", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
    return tmp_path


def test_means_are_keyed_by_the_spelling_asked_and_answer_to_the_canonical_string():
    """Asked hit_rate@5: means has 'hit_rate@5' (not Success@5), and Success@5 still finds the same mean."""
    res = eb.evaluate({"q": {"a": 1}}, {"q": {"b": 2.0, "a": 1.0}}, ["hit_rate@5", "mrr"])
    assert list(res.means) == ["hit_rate@5", "mrr"]
    assert res.means["Success@5"] == res.means["hit_rate@5"] == res["Success@5"] == 1.0
    assert res.means["RR"] == res.means.get("recip_rank") == 0.5 and "RR" in res.means
    assert res.means.get("P@5") is None and "P@5" not in res.means
    with pytest.raises(KeyError):
        res.means["P@5"]
    assert list(res.per_query.columns) == ["hit_rate@5", "mrr"]
    assert res.query("Success@5") == {"q": 1.0}


def test_user_labels_name_means_per_query_and_json_with_the_resolved_metric_beside():
    """metrics={label: spec}: every key is the label; to_dict records {label, asked, metric as evaluated}."""
    res = eb.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}},
                      {"precision@5": "P@5", "ndcg": "ndcg_burges@10"}, min_relevance=2)
    assert list(res.means) == ["precision@5", "ndcg"] and list(res.per_query.columns) == ["precision@5", "ndcg"]
    # P@5 at level 2: one of the two retrieved docs has grade >= 2, over k = 5
    assert res["precision@5"] == res["P@5"] == res["P(rel=2)@5"] == pytest.approx(1 / 5)
    data = res.to_dict()
    assert list(data["metrics"]) == ["precision@5", "ndcg"] and list(data["per_query"]["q"]) == ["precision@5", "ndcg"]
    assert data["names"] == [{"label": "precision@5", "asked": "P@5", "metric": "P(rel=2)@5"},
                             {"label": "ndcg", "asked": "ndcg_burges@10", "metric": "nDCG(gain=exp)@10"}]
    assert "precision@5" in str(res) and "P(rel=2)@5" in str(res)
    assert pickle.loads(pickle.dumps(res)) == res and pickle.loads(pickle.dumps(res.means)) == res.means


@settings(max_examples=40, deadline=None)
@given(qrels_and_run(float_grades=True), st.lists(st.sampled_from([0.5, 1, 2, 3.5, 7]), min_size=2, max_size=3),
       st.lists(st.sampled_from(["P@5", "precision@3", "recall@5", "mrr", "hit_rate@2", "map", "ndcg@5",
                                 "Bpref", "R_cap@4"]), min_size=1, max_size=4, unique=True))
def test_changing_min_relevance_never_changes_the_keys(data, levels, specs):
    """Whatever the relevance level, means, per-query columns, to_dict and the report JSON have the same keys,
    in the order asked; only the recorded metric changes with the level."""
    qrels, run = data
    for level in levels:
        res = eb.evaluate(qrels, run, specs, min_relevance=level)
        report = report_dict(Report(results={"s": res}))
        keys = (tuple(res.means), tuple(res.per_query.columns), tuple(res.to_dict()["metrics"]),
                tuple(report["metrics"]), tuple(report["systems"]["s"]["metrics"]),
                tuple(n["label"] for n in report["names"]))
        assert all(k == tuple(specs) for k in keys)
        for spec, name in zip(specs, report["names"]):
            assert name["metric"] == str(res.resolve(spec))


def test_significance_marker_is_kept_with_alias_names():
    """A comparison made with the alias ndcg_burges@10 marks ▲ in every report format, as to_frame says."""
    results = {name: eb.evaluate(QRELS_8, run, ["nDCG(gain=exp)@10", "P@1"]) for name, run in RUNS_8.items()}
    comparison = compare_systems(results, ["ndcg_burges@10", "P@1"], baseline="bm25")
    assert comparison.to_frame()["significant"].all()
    report = Report(results=results, comparison=comparison)
    dense = next(line for line in report.to_text().splitlines() if line.startswith("dense"))
    assert dense.count("▲") == 2
    assert report.to_markdown().count("▲") >= 2 and report._repr_html_().count("▲") >= 2
    assert render(report, "latex").count(r"$^{\uparrow}$") == 2
    assert comparison.get("dense", "nDCG(gain=exp)@10") is comparison.get("dense", "ndcg_burges@10")


def test_significance_marker_is_kept_with_labels_and_a_relevance_level():
    """compare() with labels at level 2: rows, markers and look-ups by label, spelling asked and resolved name."""
    comparison = eb.compare(QRELS_8, RUNS_8, {"precision@1": "P@1", "gain": "ndcg_burges@10"}, baseline="bm25",
                            min_relevance=2)
    assert comparison.metrics == ("precision@1", "gain")
    row = comparison.get("dense", "precision@1")
    assert row is comparison.get("dense", "P@1") is comparison.get("dense", "P(rel=2)@1") and row.significant
    assert comparison.to_dict()["names"][0] == {"label": "precision@1", "asked": "P@1", "metric": "P(rel=2)@1"}
    results = {n: eb.evaluate(QRELS_8, r, {"precision@1": "P@1", "gain": "ndcg_burges@10"}, min_relevance=2)
               for n, r in RUNS_8.items()}
    text = Report(results=results, comparison=comparison).to_text()
    assert "precision@1" in text and next(line for line in text.splitlines() if line.startswith("dense")).count("▲") == 2


def test_reports_in_every_format_use_the_label():
    """Text, Markdown, CSV, JSON, LaTeX and HTML headers carry the label, not the metric as resolved (which
    JSON records under ``names`` and the HTML page under each metric's heading, 'as evaluated')."""
    results = {n: eb.evaluate(QRELS_8, r, {"prec_one": "P@1"}, min_relevance=2) for n, r in RUNS_8.items()}
    report = Report(results=results)
    for fmt in report_formats():
        text = render(report, fmt)
        before_names = text.replace(r"\_", "_").split("names")[0].split("as evaluated")[0]
        assert "prec" in text and "P(rel=2)@1" not in before_names, fmt
    assert "prec_one" in report._repr_html_()


def test_gates_refer_to_the_label_and_report_it():
    """A gate on a label, and one on the canonical name of a labelled metric, both report the label."""
    results = {n: eb.evaluate(QRELS_8, r, {"precision@1": "P@1"}) for n, r in RUNS_8.items()}
    gates = parse_gates({"precision@1": ">= 0.5", "P@1": ">= baseline"}, labels=["precision@1"])
    out = check_gates(gates, results, baseline="bm25")
    assert [(g.metric, g.passed) for g in out] == [("precision@1", True), ("precision@1", True)]
    assert out[0].to_dict()["metric"] == "precision@1"
    with pytest.raises(eb.MetricSpecError):
        parse_gates({"precision_one": ">= 0.5"})  # not a label given, not a metric


def test_crosscheck_finds_a_metric_by_label_spelling_and_canonical_string():
    """CrossCheck.names records each label with the metric as checked; query() finds it by any of its names."""
    check = eb.crosscheck(QRELS_8, RUNS_8["dense"], {"precision@1": "P@1"}, backends=[])
    assert [n.to_dict() for n in check.names] == [{"label": "precision@1", "asked": "P@1", "metric": "P@1"}]
    assert check.query("precision@1") == check.query("P@1") == check.query("P_1") == {q: 1.0 for q in QRELS_8}


@pytest.mark.parametrize("metrics, message", [
    ({"a": "P@5", "P@5": "P@10"}, "is the name of another metric asked"),
    ([eb.Metric.parse("P@10"), "P@5"], None),
    ({"": "P@5"}, "non-empty string"),
])
def test_labels_that_would_make_a_name_ambiguous_are_refused(metrics, message):
    """A label equal to another metric's name, or an empty label, is an InputError; plain specs are fine."""
    if message is None:
        assert [r.label for r in metric_requests(metrics)] == ["P@10", "P@5"]
        return
    with pytest.raises(eb.InputError, match=message):
        metric_requests(metrics)


def test_the_same_metric_asked_twice_without_a_label_is_kept_once_and_found_by_both():
    """['P@5', 'precision@5']: one column, under the first spelling; both spellings find it."""
    res = eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@5", "precision@5"])
    assert list(res.means) == ["P@5"] and res["precision@5"] == 0.2


def test_command_line_label_is_split_before_any_parenthesis():
    """LABEL=SPEC on the command line; an '=' inside options is part of the spec."""
    assert split_label("precision@5=P@5") == ("precision@5", "P@5")
    assert split_label("P(rel=2)@5") == (None, "P(rel=2)@5")
    assert split_label("gain=nDCG(gain=exp)@10") == ("gain", "nDCG(gain=exp)@10")


def _keys(report: dict) -> tuple:
    return (report["metrics"], report["names"], {s: list(v["metrics"]) for s, v in report["systems"].items()},
            {s: v["metrics"] for s, v in report["systems"].items()})


def test_python_eval_and_config_run_give_identical_json_keys(files, capsys):
    """Labels given in Python, on `evalbridge eval -m LABEL=SPEC` and in a config's {metric, label} entries
    give the same report JSON keys, names and means."""
    specs = {"precision@2": "P@2", "ndcg_burges@3": "ndcg_burges@3", "rank": "mrr"}
    qrels, runs = files / "qrels.txt", {"a": files / "a.run", "b": files / "b.run"}
    python = report_dict(Report(results={n: eb.evaluate(qrels, r, specs, min_relevance=2) for n, r in runs.items()}))

    code = main(["eval", str(qrels), str(runs["a"]), str(runs["b"]), "--format", "json", "--min-relevance", "2",
                 "-m", "precision@2=P@2", "ndcg_burges@3", "rank=mrr"])
    assert code == 0
    cli = json.loads(capsys.readouterr().out)

    config = files / "eval.yaml"
    config.write_text(textwrap.dedent("""\
        qrels: qrels.txt
        runs: {a: a.run, b: b.run}
        min_relevance: 2
        metrics:
          - {metric: P@2, label: precision@2}
          - ndcg_burges@3
          - {metric: mrr, label: rank}
        """))
    run = report_dict(run_config(load_config(config), write=False).report)
    assert _keys(python) == _keys(cli) == _keys(run)
    assert python["metrics"] == ["precision@2", "ndcg_burges@3", "rank"]
    assert python["names"][0] == {"label": "precision@2", "asked": "P@2", "metric": "P(rel=2)@2"}


def test_config_mapping_form_and_gates_on_labels(files):
    """metrics: {label: spec} works like the list form, and a gate may name a label."""
    config = files / "eval.yaml"
    config.write_text("qrels: qrels.txt\nruns: {a: a.run, b: b.run}\nmetrics: {precision@2: P@2, rank: mrr}\n"
                      "comparison: {baseline: a, n_resamples: 100}\ngates: {rank: '>= 0.5'}\n")
    outcome = run_config(load_config(config), write=False)
    assert outcome.report.labels == ["precision@2", "rank"]
    assert [(g.system, g.metric) for g in outcome.report.gates] == [("b", "rank")]
    assert outcome.report.comparison.metrics == ("precision@2", "rank")


@pytest.mark.parametrize("metrics, line, message", [
    ("metrics:\n  - {metric: P@2, label: top}\n  - {metric: P@3, label: top}\n", 5, "given twice"),
    ("metrics:\n  - P@3\n  - {metric: P@2, label: P@3}\n", 5, "name of another metric"),
    ("metrics:\n  - {metric: P@2, lable: top}\n", 4, "unknown key 'lable'"),
    ("metrics:\n  - {label: top}\n", 4, "needs its metric"),
])
def test_config_label_errors_name_file_and_line(files, metrics, line, message):
    """A duplicate label, a label that is another metric's name, a misspelt key: InputError at file:line."""
    config = files / "eval.yaml"
    config.write_text("qrels: qrels.txt\nruns: {a: a.run}\n" + metrics)
    with pytest.raises(eb.InputError) as info:
        load_config(config)
    assert str(info.value).startswith(f"{config}:{line}:") and message in str(info.value)


def test_command_line_duplicate_label_names_the_flag(files, capsys):
    """-m a=P@2 a=P@3: exit code 2 and the message names --metrics."""
    code = main(["eval", str(files / "qrels.txt"), str(files / "a.run"), "-m", "a=P@2", "a=P@3"])
    err = capsys.readouterr().err
    assert code == 2 and "--metrics" in err and "given twice" in err


def test_bands_may_be_keyed_by_a_label(files):
    """bands: {label: bounds} in a config applies to that metric's column, named by its label."""
    config = files / "eval.yaml"
    config.write_text("qrels: qrels.txt\nruns: {a: a.run}\nmetrics: {top2: P@2}\nbands: {top2: [0.1, 0.2, 0.9]}\n")
    report = run_config(load_config(config), write=False).report
    data = report_dict(report)
    # run a: q1 P@2 = 1/2 (d1 relevant, d2 not), q2 = 1/2 (d9 unjudged, d4), q3 = 1/2 (d6 only): 0.5 -> good
    assert data["systems"]["a"]["metrics"] == {"top2": 0.5}
    assert data["bands"]["systems"] == {"a": {"top2": "good"}}
