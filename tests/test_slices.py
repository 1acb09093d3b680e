"""Slices: per-slice means, counts, intervals and differences against the baseline; the numbers RAG logs keep."""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import evalbridge as eb
from evalbridge.stats.paired_tests import benjamini_hochberg, mean_ci, paired_t_test
from evalbridge.evaluation.slices import MIN_QUERIES, slice_labels, slice_table

LABELS = ("billing", "tech", "en", "de")


@st.composite
def values_and_labels(draw: st.DrawFn, *, partition: bool) -> tuple[dict[str, float], dict[str, object]]:
    """Per-query values and labels: exactly one label per query (``partition``), else zero to three."""
    n = draw(st.integers(1, 30))
    values = {f"q{i}": draw(st.floats(0, 1, allow_nan=False)) for i in range(n)}
    if partition:
        labels: dict[str, object] = {q: draw(st.sampled_from(LABELS)) for q in values}
    else:
        labels = {q: draw(st.lists(st.sampled_from(LABELS), max_size=3, unique=True)) for q in values}
    return values, labels


@settings(max_examples=60, deadline=None)
@given(values_and_labels(partition=True))
def test_slices_that_partition_the_queries_weighted_by_their_counts_give_the_overall_mean(case) -> None:
    values, labels = case
    table = slice_table({"run": {"m": values}}, slice_labels(labels), n_resamples=50)
    assert sum(table.counts) == len(values) and table.unsliced == ()
    weighted = math.fsum(m.mean * m.n for m in table.means) / len(values)
    assert weighted == pytest.approx(math.fsum(values.values()) / len(values), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(values_and_labels(partition=False))
def test_a_query_in_two_slices_counts_in_both_and_a_query_in_none_is_reported(case) -> None:
    values, labels = case
    table = slice_table({"run": {"m": values}}, slice_labels(labels), n_resamples=50)
    for name, count in zip(table.names, table.counts):
        assert count == sum(name in labels[q] for q in values)  # type: ignore[operator]
        members = [values[q] for q in values if name in labels[q]]  # type: ignore[operator]
        assert table.mean(name, "m").mean == pytest.approx(math.fsum(members) / len(members), abs=1e-12)
    assert table.unsliced == tuple(q for q in values if not labels[q])


def test_a_slice_interval_is_the_bootstrap_interval_of_its_queries() -> None:
    values = {f"q{i}": (i * 7 % 11) / 10 for i in range(24)}
    labels = {q: "odd" if int(q[1:]) % 2 else "even" for q in values}
    table = slice_table({"run": {"m": values}}, slice_labels(labels), n_resamples=999, seed=3)
    odd = [values[q] for q in sorted(q for q in values if labels[q] == "odd")]
    row = table.mean("odd", "m")
    assert (row.ci_low, row.ci_high) == pytest.approx(mean_ci(odd, n_resamples=999, seed=3), abs=1e-12)


def test_differences_are_tested_per_slice_and_corrected_by_benjamini_hochberg_over_slices_and_metrics() -> None:
    n = 30
    base = {"P": {f"q{i}": (i % 5) / 5 for i in range(n)}, "R": {f"q{i}": (i % 3) / 3 for i in range(n)}}
    new = {"P": {q: min(1.0, v + (0.2 if int(q[1:]) % 2 else 0.0)) for q, v in base["P"].items()},
           "R": {q: v * 0.9 for q, v in base["R"].items()}}
    labels = {f"q{i}": "big" if i < 24 else "small" for i in range(n)}
    cmp = eb.compare(None, {"base": base, "new": new}, ["P", "R"], baseline="base", slices=labels,
                             n_resamples=200)
    sliced = cmp.slices
    assert sliced is not None and sliced.too_small == ("small",) and MIN_QUERIES > 6
    tested = [d for d in sliced.differences if d.tested]
    assert {(d.slice, d.metric) for d in tested} == {("big", "P"), ("big", "R")}
    qids = sorted(q for q in labels if labels[q] == "big")
    expected = [paired_t_test([new[m][q] for q in qids], [base[m][q] for q in qids]) for m in ("P", "R")]
    assert [d.p_value for d in tested] == pytest.approx(expected)
    assert [d.p_adjusted for d in tested] == pytest.approx(benjamini_hochberg(expected))
    small = [d for d in sliced.differences if d.slice == "small"]
    assert all(not d.tested and math.isnan(d.p_value) and not d.significant for d in small)
    assert small[0].delta == pytest.approx(math.fsum(new["P"][f"q{i}"] - base["P"][f"q{i}"] for i in range(24, 30)) / 6)


def test_slice_labels_are_refused_with_the_query_and_the_fix() -> None:
    with pytest.raises(eb.InputError, match=r"query 'q1'.*not a text.*Fix"):
        slice_labels({"q1": 3})
    with pytest.raises(eb.InputError, match="control character"):
        slice_labels({"q1": "bil\nling"})
    with pytest.raises(eb.InputError, match=r"slices='topic' names a field of a RAG log.*slice='topic'"):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"], slices="topic")
    with pytest.raises(eb.InputError, match="slices takes a mapping"):
        slice_labels(42)


def test_results_with_slices_travel() -> None:
    res = eb.evaluate({"q1": {"a": 1}, "q2": {"a": 1}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}}, ["P@1"],
                      slices={"q1": "x", "q2": "x"})
    again = pickle.loads(pickle.dumps(res))
    assert again.slices is not None and again.slices.means[0].mean == 1.0 and again.slices.counts == (2,)


# ---------------------------------------------------------------- RAG logs: slice labels and numbers

def _log(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(n: int, shift: int = 0) -> list[dict[str, object]]:
    return [{"question_id": f"q{i}", "category": ["billing", "en"] if i % 3 == 0 else "tech",
             "latency_ms": 100 + 10 * i + shift, "cost": 0.001 * (i + shift),
             "retrieved_ids": ["d1", "d2"] if (i + shift) % 2 else ["d2", "d1"], "relevant_ids": ["d1"]}
            for i in range(n)]


def test_a_rag_log_keeps_its_slice_field_and_its_numbers_alike_in_both_readers(tmp_path: Path) -> None:
    from evalbridge.io._rag_columns import read_log_columns

    path = _log(tmp_path / "log.jsonl", _rows(6))
    _, strict = eb.read_pair(path, slice="category", ids="str", format="rag")  # ids= makes the strict reader read it
    fast = read_log_columns(path, slice="category", large_only=False)
    assert fast is not None
    for run in (strict, fast[1]):
        assert dict(run.logged["category"]) == {"q0": ("billing", "en"), "q1": ("tech",), "q2": ("tech",),
                                                "q3": ("billing", "en"), "q4": ("tech",), "q5": ("tech",)}
        assert dict(run.logged["latency_ms"]) == {f"q{i}": 100 + 10 * i for i in range(6)}
        assert "RAG log numbers picked by name: latency_ms, cost" in run.notes
    _, named = eb.read_pair(path, numbers="cost", format="rag")
    assert set(named.logged) == {"cost"}


@pytest.mark.parametrize("value, says", [("12ms", "not a decimal number"), (True, "boolean"), ("NaN", "NaN")])
def test_a_bad_number_in_a_log_names_the_line_the_question_the_value_and_the_fix(tmp_path: Path, value: object,
                                                                                  says: str) -> None:
    rows = _rows(4)
    rows[2]["latency_ms"] = value
    path = _log(tmp_path / "log.jsonl", rows)
    with pytest.raises(eb.InputError) as caught:
        eb.read_pair(path, format="rag")
    text = str(caught.value)
    assert f"{path}:3" in text and "query 'q2'" in text and "latency_ms" in text and "Fix:" in text
    assert says.lower() in text.lower()


def test_a_bad_slice_label_in_a_log_names_the_line(tmp_path: Path) -> None:
    rows = _rows(3)
    rows[1]["category"] = {"a": 1}
    with pytest.raises(eb.InputError, match=r"log.jsonl:2, query 'q1': the slice field 'category'"):
        eb.read_pair(_log(tmp_path / "log.jsonl", rows), slice="category", format="rag")


def test_evaluate_summarises_the_numbers_a_log_kept_and_slices_by_its_field(tmp_path: Path) -> None:
    qrels, run = eb.read_pair(_log(tmp_path / "log.jsonl", _rows(20)), slice="category", format="rag")
    res = eb.evaluate(qrels, run, ["RR"], slices="category")
    latency = {s.field: s for s in res.numbers}["latency_ms"]
    values = sorted(100 + 10 * i for i in range(20))
    # p95 by hand: numpy's linear rule, position 0.95 * 19 = 18.05 between 280 and 290
    assert (latency.n, latency.mean, latency.p50, latency.p95) == (20, 195.0, 195.0, pytest.approx(280.5))
    assert values[18] == 280
    assert res.slices is not None and res.slices.by == "category"
    assert dict(zip(res.slices.names, res.slices.counts)) == {"billing": 7, "en": 7, "tech": 13}


# ---------------------------------------------------------------- TREC DL 2019: golden values by hand

def _first_words(dl19: Path) -> dict[str, str]:
    """Each DL 2019 question's slice by its first word: what / how / other."""
    out = {}
    for line in (dl19 / "topics.dl19-passage.txt").read_text(encoding="utf-8").splitlines():
        qid, text = line.split("\t", 1)
        word = text.split()[0].lower()
        out[qid] = word if word in ("what", "how") else "other"
    return out


def test_dl19_slices_by_a_column_of_a_query_table_match_pytrec_eval_grouped_by_hand(dl19: Path,
                                                                                   tmp_path: Path) -> None:
    import pytrec_eval

    kinds = _first_words(dl19)
    table = tmp_path / "queries.csv"
    table.write_text("query_id,kind\n" + "".join(f"{q},{k}\n" for q, k in kinds.items()), encoding="utf-8")
    runs = {name: dl19 / f"run.{name}.top100.txt" for name in ("bm25", "splade-pp-ed")}
    cmp = eb.compare(dl19 / "qrels.dl19-passage.txt", runs, ["ndcg_cut_10"], baseline="bm25",
                     slices=(str(table), "kind"), n_resamples=500)
    sliced = cmp.slices
    assert sliced is not None
    assert dict(zip(sliced.names, sliced.counts)) == {"other": 26, "what": 13, "how": 4}
    assert sliced.too_small == ("how",) and sliced.unsliced == ()

    qrels = eb.read_qrels(dl19 / "qrels.dl19-passage.txt").to_dict()
    oracle = {}
    for name, path in runs.items():
        run = eb.read_run(path).to_dict()
        per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut"}).evaluate(run)
        oracle[name] = {q: per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in qrels}
    for kind in ("what", "how", "other"):
        qids = [q for q in qrels if kinds[q] == kind]
        for name in runs:
            by_hand = sum(oracle[name][q] for q in qids) / len(qids)
            assert sliced.mean(kind, "ndcg_cut_10", name).mean == pytest.approx(by_hand, abs=1e-9)
        diff = next(d for d in sliced.differences if d.slice == kind)
        a, b = [oracle["splade-pp-ed"][q] for q in sorted(qids)], [oracle["bm25"][q] for q in sorted(qids)]
        assert diff.delta == pytest.approx(sum(a) / len(a) - sum(b) / len(b), abs=1e-9)
        if kind != "how":
            assert diff.p_value == pytest.approx(paired_t_test(a, b), rel=1e-9)
    # the slices partition the questions: their means weighted by their counts give the published 0.5058 / 0.7308
    for name, published in (("bm25", 0.5058), ("splade-pp-ed", 0.7308)):
        rows = [sliced.mean(k, "ndcg_cut_10", name) for k in sliced.names]
        assert sum(r.mean * r.n for r in rows) / 43 == pytest.approx(published, abs=5e-5)


# ---------------------------------------------------------------- the doors: config runs, reports

def _two_logs(folder: Path) -> dict[str, Path]:
    logs = {"bm25": _log(folder / "bm25.jsonl", _rows(30)), "dense": _log(folder / "dense.jsonl", _rows(30, 1))}
    return logs


def _config_report(folder: Path, config: str) -> dict[str, object]:
    from doors import cli

    (folder / "eval.yaml").write_text(config, encoding="utf-8")
    code, out, err = cli("run", str(folder / "eval.yaml"), "--no-write", "--format", "json")
    assert code == 0, err
    report: dict[str, object] = json.loads(out)
    return report


def test_a_config_slices_by_a_field_of_the_logs_as_the_python_api_does(tmp_path: Path) -> None:
    logs = _two_logs(tmp_path)
    report = _config_report(tmp_path, "runs: {bm25: bm25.jsonl, dense: dense.jsonl}\nmetrics: [RR, P@1]\n"
                                      "comparison: {baseline: bm25, n_resamples: 300}\nslices: category\n")
    qrels, runs = eb.read_logs({k: str(v) for k, v in logs.items()}, slice="category")
    cmp = eb.compare(qrels, runs, ["RR", "P@1"], baseline="bm25", n_resamples=300, slices="category")
    assert cmp.slices is not None
    assert report["slices"] == json.loads(json.dumps(cmp.slices.to_dict()))
    systems = report["systems"]
    # 100, 110, ..., 390: p95 at position 0.95 * 29 = 27.55, between 370 and 380 (numpy's linear rule)
    assert systems["bm25"]["numbers"]["latency_ms"] == {"n": 30, "mean": 245.0, "p50": 245.0,  # type: ignore[index]
                                                        "p95": pytest.approx(375.5)}
    rr = {s: systems[s]["metrics"]["RR"] for s in ("bm25", "dense")}  # type: ignore[index]
    cost = {s: systems[s]["numbers"]["cost"]["mean"] for s in ("bm25", "dense")}  # type: ignore[index]
    assert cost["dense"] > cost["bm25"]
    expected = ["bm25", "dense"] if rr["dense"] > rr["bm25"] else ["bm25"]
    assert report["quality_vs_cost"]["cost"]["RR"] == expected  # type: ignore[index]


def test_a_config_slices_by_a_column_of_a_query_table_without_a_comparison(tmp_path: Path) -> None:
    _two_logs(tmp_path)
    (tmp_path / "queries.tsv").write_text("qid\tlang\n" + "".join(f"q{i}\t{'de' if i < 12 else 'en'}\n"
                                                                  for i in range(28)), encoding="utf-8")
    report = _config_report(tmp_path, "runs: {bm25: bm25.jsonl, dense: dense.jsonl}\nmetrics: [RR]\n"
                                      "slices: {by: lang, file: queries.tsv}\n")
    sliced = report["slices"]
    assert sliced["counts"] == {"de": 12, "en": 16} and sliced["differences"] == []  # type: ignore[index]
    assert sliced["unsliced"] == {"count": 2, "queries": ["q28", "q29"]}  # type: ignore[index]


def test_pareto_front_marks_the_systems_no_other_beats_on_quality_and_cost() -> None:
    from evalbridge.stats.pareto import pareto_front

    assert pareto_front({"a": (0.5, 1.0), "b": (0.5, 1.0)}) == ("a", "b")  # equal: neither beats the other
    assert pareto_front({"a": (0.5, 1.0), "b": (0.6, 1.0), "c": (0.7, 0.5)}) == ("c",)
    assert pareto_front({"a": (float("nan"), 1.0), "b": (0.1, 9.0)}) == ("b",)


def test_reports_show_slices_and_logged_numbers_in_every_format(tmp_path: Path) -> None:
    logs = _two_logs(tmp_path)
    qrels, runs = eb.read_logs({k: str(v) for k, v in logs.items()}, slice="category")
    results = {name: eb.evaluate(qrels, run, ["RR"]) for name, run in runs.items()}
    cmp = eb.compare(None, results, ["RR"], baseline="bm25", n_resamples=200,
                             slices=dict(runs["bm25"].logged["category"]))
    report = eb.Report(results=results, comparison=cmp, slices=cmp.slices)
    from evalbridge.reports.report import render

    text, md, latex, html = (render(report, fmt) for fmt in ("terminal", "markdown", "latex", "html"))
    for shown in (text, md, latex, html):
        assert "Quality vs latency" in shown and "Slices by a mapping" in shown and "not tested" not in shown
        assert "Pareto front" in shown and "Benjamini-Hochberg" in shown
    assert "## Slices and logged numbers" in md and "Slices: differences against the baseline" in md
    # a CSV report folder holds them at full precision, one file per table
    import io

    import pandas as pd
    from evalbridge.views.formats import report_format

    files = {name: pd.read_csv(io.StringIO(text)) for name, text in report_format("csv").extra_files(report).items()}
    means = files["slices_means.csv"]
    assert len(means) == len(cmp.slices.means)
    assert list(means["mean"]) == pytest.approx([m.mean for m in cmp.slices.means], abs=1e-15)
    assert len(files["slices_differences.csv"]) == len(cmp.slices.differences)
    latency = {(name, n.field): n.p95 for name, r in results.items() for n in r.numbers}
    logged = files["logged.csv"]
    assert {(s, f): v for s, f, v in zip(logged["system"], logged["field"], logged["p95"])} == pytest.approx(latency)


def test_the_three_doors_give_the_same_slices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from doors import cli

    logs = _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    qrels, runs = eb.read_logs({k: v.name for k, v in logs.items()}, slice="category")
    api = eb.compare(qrels, runs, ["RR"], baseline="bm25", n_resamples=300, slices="category").slices
    assert api is not None
    code, out, err = cli("eval", "bm25.jsonl", "dense.jsonl", "-m", "RR", "--baseline", "bm25", "--n-resamples", "300",
                         "--slice-by", "category", "--format", "json")
    assert code == 0, err
    (tmp_path / "eval.yaml").write_text("runs: {bm25: bm25.jsonl, dense: dense.jsonl}\nmetrics: [RR]\n"
                                        "comparison: {baseline: bm25, n_resamples: 300}\nslices: category\n")
    code, config, err = cli("run", "eval.yaml", "--no-write", "--format", "json")
    assert code == 0, err
    expected = json.loads(json.dumps(api.to_dict()))
    assert json.loads(out)["slices"] == expected == json.loads(config)["slices"]


def test_a_bad_slice_source_is_refused_alike_at_the_doors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from doors import cli

    _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("eval", "bm25.jsonl", "-m", "RR", "--slices-file", "queries.csv")
    assert code == 2 and "--slices-file is given without --slice-by" in err and "Traceback" not in err
    (tmp_path / "queries.csv").write_text("id_of_query,kind\nq1,a\n")
    code, _, err = cli("eval", "bm25.jsonl", "-m", "RR", "--slice-by", "kind", "--slices-file", "queries.csv")
    assert code == 2 and "look like the query id" in err and "Traceback" not in err
    with pytest.raises(eb.InputError, match="look like the query id"):
        eb.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["RR"], slices=("queries.csv", "kind"))


def test_a_bad_number_in_a_log_is_refused_alike_at_the_three_doors(tmp_path: Path) -> None:
    from doors import Case, assert_same, through_doors

    rows = _rows(4)
    rows[3]["cost"] = "0,5"
    text = "".join(json.dumps(r) + "\n" for r in rows)
    doors = through_doors(Case(files={"log.jsonl": text}, qrels=None, runs=("log.jsonl",), metrics=("RR",)),
                          tmp_path)
    assert_same(doors, says=("log.jsonl:4", "'q3'", "'cost'", "'0,5'"))


def test_per_slice_means_and_logged_numbers_are_mlflow_metrics(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mlflow", reason="the mlflow extra is not installed (make test installs it)")
    from mlflow.tracking import MlflowClient

    from doors import cli

    logs = _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    code, _, err = cli("eval", "bm25.jsonl", "dense.jsonl", "-m", "RR", "--baseline", "bm25", "--n-resamples", "200",
                       "--slice-by", "category", "--mlflow", uri, "--mlflow-experiment", "sliced", "-q")
    assert code == 0, err
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("sliced").experiment_id
    children = client.search_runs([experiment], filter_string="tags.mlflow.parentRunId IS NOT NULL")
    logged = {run.info.run_name: run.data.metrics for run in children}
    qrels, runs = eb.read_logs({k: v.name for k, v in logs.items()}, slice="category")
    for name, run in runs.items():
        res = eb.evaluate(qrels, run, ["RR"], slices="category")
        assert res.slices is not None
        expected = {f"slice.{m.slice}.RR": m.mean for m in res.slices.means}
        assert {k: v for k, v in logged[name].items() if k.startswith("slice.")} == pytest.approx(expected)
        latency = next(n for n in res.numbers if n.field == "latency_ms")
        assert logged[name]["logged.latency_ms.p95"] == pytest.approx(latency.p95)
        assert logged[name]["RR"] == pytest.approx(res["RR"])


def test_slices_show_themselves_in_every_table_format() -> None:
    values = {"base": {"RR": {f"q{i}": (i % 4) / 4 for i in range(24)}},
              "new": {"RR": {f"q{i}": ((i + 1) % 4) / 4 for i in range(24)}}}
    labels = {f"q{i}": "a|b" if i < 12 else "tiny" for i in range(16)}
    cmp = eb.compare(None, values, ["RR"], baseline="base", slices=labels, n_resamples=100)
    sliced = cmp.slices
    assert sliced is not None
    text, md, html = str(sliced), sliced.to_markdown(), sliced._repr_html_()
    assert "Slices by a mapping" in text and "not tested" in text and "8 queries are in no slice" in text
    assert "a\\|b" in md and "a|b" not in md.replace("a\\|b", "")  # a name never splits a Markdown row
    assert "<table" in html and json.loads(sliced.table("json"))["counts"] == {"a|b": 12, "tiny": 4}


def test_the_logged_numbers_and_labels_survive_the_cut_of_depth_and_judged_only(tmp_path: Path) -> None:
    qrels, run = eb.read_pair(_log(tmp_path / "log.jsonl", _rows(12)), slice="category", format="rag")
    plain = eb.evaluate(qrels, run, ["RR"], slices="category")
    cut = eb.evaluate(qrels, run, ["RR"], depth=1, judged_only=True, ids="str", slices="category")
    assert cut.numbers == plain.numbers and len(cut.numbers) == 2
    assert cut.slices is not None and plain.slices is not None and cut.slices.counts == plain.slices.counts


#: per-query values with many ties: tied sums added in two orders are where the intervals used to part
tied = st.sampled_from([0.0, 0.1, 0.2, 0.3, 1 / 3, 0.55, 0.7, 1.0])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 25).flatmap(lambda n: st.tuples(st.lists(tied, min_size=n, max_size=n),
                                                     st.lists(tied, min_size=n, max_size=n))),
       st.integers(0, 2 ** 16), st.sampled_from(["BCa", "percentile"]))
def test_a_slice_of_every_query_gives_the_comparisons_intervals_ties_included(pair, seed, method) -> None:
    """Property: one slice holding every query has the comparison's intervals (the difference's and each
    system's), to rounding, although the slice adds its bootstrap means by counting and the comparison by
    gathering: a bootstrap mean that ties the observed one up to rounding counts as a tie in BCa's bias
    correction whichever way it was added (with an exact comparison the two parted by up to 0.17 on four
    queries)."""
    new, base = ({f"q{i}": v for i, v in enumerate(side)} for side in pair)
    cmp = eb.compare(None, {"base": {"m": base}, "new": {"m": new}}, ["m"], baseline="base",
                     slices={q: "all" for q in new}, n_resamples=500, seed=seed, ci_method=method)
    assert cmp.slices is not None
    (row,), (difference,) = cmp.rows, cmp.slices.differences
    assert (difference.ci_low, difference.ci_high) == pytest.approx((row.ci_low, row.ci_high), abs=1e-12,
                                                                    nan_ok=True)
    for interval in cmp.intervals:
        mean = cmp.slices.mean("all", "m", interval.system)
        assert (mean.ci_low, mean.ci_high) == pytest.approx((interval.ci_low, interval.ci_high), abs=1e-12,
                                                            nan_ok=True)


def test_the_slices_say_their_test_its_sides_their_own_family_and_that_the_interval_is_unadjusted() -> None:
    """Beside the comparison (Holm over its family), the slices' differences name their test and sides, their
    own Benjamini-Hochberg family, and label the interval beside the corrected p-value as unadjusted."""
    values = {f"q{i}": (i % 5) / 5 for i in range(24)}
    new = {q: min(1.0, v + 0.2 * (int(q[1:]) % 2)) for q, v in values.items()}
    cmp = eb.compare(None, {"base": {"m": values}, "new": {"m": new}}, ["m"], baseline="base",
                     slices={q: "odd" if int(q[1:]) % 2 else "even" for q in values}, n_resamples=100)
    assert cmp.slices is not None
    text = cmp.slices.table()
    assert "95% CI (unadjusted)" in text and "two-sided t test" in text and "a family of its own" in text
