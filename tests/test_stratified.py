"""Stratified judging (Yilmaz, Kanoulas and Aslam, SIGIR 2008): xinfAP and infNDCG from a stratified sample of the
pool read as format='sample_eval', held equal to NIST's sample_eval.pl per query on stratified samples of the TREC DL
2019 qrels, equal to AP and nDCG where every stratum is judged wholly; the sample file's errors at every door."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.metrics.reference import stratified_ap, stratified_ndcg

DL19 = "data/real/trec-dl-2019-passage"
SAMPLE_EVAL = "conformance/sample_eval/sample_eval.pl"
RUNS = ("run.bm25.top100.txt", "run.splade-pp-ed.top100.txt")


def stratified_sample(qrels: Path, out: Path, rates: dict[str, float], seed: int) -> Path:
    """Each judged pair of ``qrels`` put in a random stratum and kept with its stratum's rate (else grade -1)."""
    rng = random.Random(seed)
    names = sorted(rates)
    with out.open("w") as f:
        for line in qrels.read_text().splitlines():
            qid, _, doc, grade = line.split()
            stratum = rng.choice(names)
            f.write(f"{qid} 0 {doc} {stratum} {grade if rng.random() < rates[stratum] else -1}\n")
    return out


def sample_eval(shared: Path, sample: Path, run: Path) -> dict[tuple[str, str], float]:
    if shutil.which("perl") is None:
        pytest.skip("perl is absent: NIST's sample_eval.pl is the oracle")
    out = subprocess.run(["perl", str(shared / SAMPLE_EVAL), "-q", str(sample), str(run)], capture_output=True,
                         text=True, check=True).stdout
    return {(words[0], words[1]): float(words[2]) for words in map(str.split, out.splitlines())
            if words[0] in ("infAP", "infNDCG")}


@pytest.mark.parametrize("rates", [{"1": 1.0, "2": 0.5, "3": 0.2}, {"top": 1.0, "rest": 0.1}, {"all": 0.3}])
@pytest.mark.parametrize("backend", ["reference", "fast"])
def test_xinfap_and_infndcg_equal_sample_eval_on_dl19_samples(shared, tmp_path, rates, backend):
    """Per query and on the mean, to sample_eval.pl's 4 decimals, for two runs and three sampling designs."""
    sample = stratified_sample(shared / DL19 / "qrels.dl19-passage.txt", tmp_path / "sample.qrels", rates, seed=7)
    qrels = eb.read_qrels(sample, format="sample_eval")
    for run in RUNS:
        oracle = sample_eval(shared, sample, shared / DL19 / run)
        results = eb.evaluate(qrels, shared / DL19 / run, metrics=["xinfAP", "infNDCG"], backend=backend)
        for ours, theirs in (("xinfAP", "infAP"), ("infNDCG", "infNDCG")):
            values = results.query(ours)
            assert len(values) == 43
            for qid, value in values.items():
                assert round(value, 4) == pytest.approx(oracle[theirs, qid], abs=1.01e-4), (run, ours, qid)
            assert round(sum(values.values()) / len(values), 4) == pytest.approx(oracle[theirs, "all"], abs=1.01e-4)


def test_fully_judged_strata_give_ap_and_ndcg(shared, tmp_path):
    """Every stratum judged wholly: xinfAP is AP (up to sample_eval's 1e-5 smoothing) and infNDCG is nDCG, per query."""
    sample = stratified_sample(shared / DL19 / "qrels.dl19-passage.txt", tmp_path / "sample.qrels",
                               {"a": 1.0, "b": 1.0}, seed=3)
    qrels = eb.read_qrels(sample, format="sample_eval")
    run = shared / DL19 / RUNS[0]
    stratified = eb.evaluate(qrels, run, metrics=["xinfAP", "infNDCG"])
    plain = eb.evaluate(shared / DL19 / "qrels.dl19-passage.txt", run, metrics=["AP", "nDCG"])
    oracle = sample_eval(shared, sample, run)
    for qid, ap in plain.query("AP").items():
        assert stratified.query("xinfAP")[qid] == pytest.approx(ap, abs=1e-4)
        assert stratified.query("infNDCG")[qid] == pytest.approx(plain.query("nDCG")[qid], abs=1e-12)
        assert oracle["infAP", qid] == pytest.approx(ap, abs=1.01e-4)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0, 1, 2, 3]), st.sampled_from("ab")), min_size=1, max_size=30),
       st.integers(0, 30))
def test_one_fully_judged_stratum_is_ap_and_ndcg(judgements, retrieved_count):
    """A pool judged wholly: xinfAP equals AP up to the smoothing, infNDCG equals nDCG (any grades, any strata)."""
    judged = [g for g, _ in judgements]
    strata = [s for _, s in judgements]
    ranking = list(range(min(retrieved_count, len(judged))))
    retrieved = [judged[i] for i in ranking]
    from evalbridge.metrics.reference import average_precision, ndcg

    assert stratified_ap(retrieved, judged, stratum=[strata[i] for i in ranking], judged_strata=strata) == \
        pytest.approx(average_precision(retrieved, judged), abs=1e-4)
    assert stratified_ndcg(retrieved, judged, stratum=[strata[i] for i in ranking], judged_strata=strata) == \
        pytest.approx(ndcg(retrieved, judged), abs=1e-12)


def test_sample_round_trips_with_its_strata(tmp_path):
    qrels = eb.Qrels({"q1": {"d1": 2, "d2": -1}, "q2": {"d3": 0}}, strata={"q1": {"d1": "1", "d2": "2"},
                                                                            "q2": {"d3": "1"}})
    path = eb.write(qrels, tmp_path / "s.qrels", format="sample_eval")
    back = eb.read_qrels(path, format="sample_eval")
    assert back == qrels and back.strata == qrels.strata


@pytest.mark.parametrize(("text", "words"), [
    ("q1 0 d1 1\n", ["expected 5 columns", ":1"]),
    ("q1 0 d1 1 2\nq1 0 d1 2 0\n", ["twice", "lines 1 and 2", ":2"]),
    ("q1 0 d1 1 x\n", ["x", ":1"]),
    ("# nothing\n", ["no sample lines"]),
])
def test_bad_sample_files_name_file_line_and_fix(tmp_path, text, words):
    path = tmp_path / "bad.qrels"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        eb.read_qrels(path, format="sample_eval")
    message = str(caught.value)
    assert "bad.qrels" in message and "Fix" in message
    for word in words:
        assert word in message


def test_xinfap_without_strata_is_refused_with_the_fix(shared):
    with pytest.raises(InputError, match="format='sample_eval'"):
        eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, metrics=["xinfAP"])


def test_cli_and_config_agree_with_the_api(shared, tmp_path):
    """evalbridge eval --qrels-format sample_eval, and a config's qrels with format: sample_eval, give the API's
    numbers; a bad sample file exits 2 naming file:line."""
    sample = stratified_sample(shared / DL19 / "qrels.dl19-passage.txt", tmp_path / "sample.qrels",
                               {"1": 1.0, "2": 0.3}, seed=11)
    run = shared / DL19 / RUNS[0]
    api = eb.evaluate(eb.read_qrels(sample, format="sample_eval"), run, metrics=["xinfAP", "infNDCG"])
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "eval", str(sample), str(run), "--qrels-format",
                          "sample_eval", "--metrics", "xinfAP", "infNDCG", "--format", "json"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    text = cli.stdout
    for metric in ("xinfAP", "infNDCG"):
        assert repr(api.mean(metric)) in text, (metric, text[:400])
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 1 2\nq1 0 d2 3\n")
    failed = subprocess.run([sys.executable, "-m", "evalbridge", "eval", str(bad), str(run), "--qrels-format",
                             "sample_eval", "--metrics", "xinfAP"], capture_output=True, text=True)
    assert failed.returncode == 2 and "bad.qrels:2" in failed.stderr and "Traceback" not in failed.stderr
    json.dumps(api.query("xinfAP"))


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(
    st.sampled_from([f"d{i}" for i in range(12)]), st.tuples(st.sampled_from([-1, 0, 1, 2, 3]), st.sampled_from("xyz")),
    min_size=1, max_size=12), min_size=1, max_size=3),
    st.lists(st.floats(0, 3, allow_nan=False), min_size=12, max_size=12), st.sampled_from([None, 1, 2]))
def test_the_fast_kernels_equal_the_reference_per_query(sample, scores, rel):
    grades = {q: {d: g for d, (g, _) in docs.items()} for q, docs in sample.items()}
    strata = {q: {d: s for d, (_, s) in docs.items()} for q, docs in sample.items()}
    qrels = eb.Qrels(grades, strata=strata)
    run = {q: {f"d{i}": scores[(i * 7 + len(q)) % 12] for i in range(0, 12, 2 if q == "q2" else 1)} for q in grades}
    metrics = ["xinfAP", "infNDCG"] if rel is None else [f"xinfAP(rel={rel})", f"infNDCG(rel={rel})"]
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = eb.evaluate(qrels, run, metrics=metrics, backend="fast")
        theirs = eb.evaluate(qrels, run, metrics=metrics, backend="reference")
    for metric in metrics:
        fast, reference = ours.query(metric), theirs.query(metric)
        assert fast.keys() == reference.keys()
        for qid in fast:
            assert fast[qid] == pytest.approx(reference[qid], abs=1e-12), (metric, qid)
