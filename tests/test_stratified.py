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


# --- the sample drawn: pool(..., strata=), its batch, merged back ---------------------------------------------------

STRATA = {"1-10": 1.0, "11-50": 0.3, "51-100": 0.1}


def graded_batch(batch: Path, truth: eb.Qrels, out: Path) -> Path:
    """The batch graded by a judge who knows ``truth`` (a pair it does not judge: grade 0), sampled pairs only."""
    with out.open("w") as f:
        for line in batch.read_text().splitlines():
            obj = json.loads(line)
            if obj["sampled"]:
                obj.update(grade=truth.get(obj["query_id"], {}).get(obj["doc_id"], 0), judge="oracle")
            f.write(json.dumps(obj) + "\n")
    return out


def dl19_base(shared: Path) -> dict[str, dict[str, int]]:
    """The judgements so far: each DL19 query's first judged pair (a stratum of its own once merged)."""
    base: dict[str, dict[str, int]] = {}
    for line in (shared / DL19 / "qrels.dl19-passage.txt").read_text().splitlines():
        qid, _, doc, grade = line.split()
        base.setdefault(qid, {doc: int(grade)})
    return base


@pytest.mark.parametrize("backend", ["reference", "fast"])
def test_the_sample_pool_draws_scores_as_sample_eval_scores_it(shared, tmp_path, backend):
    """pool(strata=) over three DL19 runs, its batch graded from the DL19 qrels, merged into the judgements so far:
    the merged qrels written as format='sample_eval' and scored by NIST's sample_eval.pl give evalbridge's xinfAP and
    infNDCG, per query and on the mean, to 4 decimals; every line of the batch names its stratum and rate."""
    from evalbridge.io.judging import write_batch

    truth = eb.read_qrels(shared / DL19 / "qrels.dl19-passage.txt")
    runs = {name: shared / DL19 / name for name in (*RUNS, "run.bm25-rm3.top100.txt")}
    base = dl19_base(shared)
    found = eb.pool(base, runs, strata=STRATA, seed=5)
    assert found.depths == (10, 50, 100)
    batch = write_batch(found, tmp_path / "batch.jsonl")
    lines = [json.loads(line) for line in batch.read_text().splitlines()]
    assert {line["stratum"] for line in lines} == set(STRATA) and all(0 < line["rate"] <= 1 for line in lines)
    assert sum(line["sampled"] for line in lines) == found.strata_frame()["sampled"].sum() < len(lines)
    merged = eb.merge_judgements(base, eb.read_qrels(graded_batch(batch, truth, tmp_path / "graded.jsonl")))
    sample = eb.write(merged, tmp_path / "sample.qrels", format="sample_eval")
    for run in RUNS:
        oracle = sample_eval(shared, sample, runs[run])
        results = eb.evaluate(merged, runs[run], metrics=["xinfAP", "infNDCG"], backend=backend)
        for ours, theirs in (("xinfAP", "infAP"), ("infNDCG", "infNDCG")):
            values = results.query(ours)
            assert len(values) == 43
            for qid, value in values.items():
                assert round(value, 4) == pytest.approx(oracle[theirs, qid], abs=1.01e-4), (run, ours, qid)
            assert round(results.mean(ours), 4) == pytest.approx(oracle[theirs, "all"], abs=1.01e-4)


def test_xinfap_of_many_samples_averages_to_the_fully_judged_ap(shared):
    """Unbiasedness, loosely: the mean of MAP by xinfAP over 60 seeded samples of a stratified DL19 pool is within
    0.02 of the MAP of the pool judged wholly (measured: 0.5998 against 0.5940, a sample's spread 0.0125), and the
    stratum sampled wholly is in every sample."""
    import numpy as np

    from evalbridge.evalsets.stratified import check_strata, draw_strata

    truth = eb.read_qrels(shared / DL19 / "qrels.dl19-passage.txt")
    run = eb.read_run(shared / DL19 / RUNS[0])
    found = eb.pool(None, {"bm25": run}, strata=STRATA, queries="runs")
    pairs = found.pairs()
    grades = [truth.get(q, {}).get(d, 0) for q, d, _ in pairs]
    whole = eb.Qrels({q: {d: g for (qq, d, _), g in zip(pairs, grades) if qq == q} for q in found.query_ids})
    fully = eb.evaluate(whole, run, metrics=["AP"], backend="fast").mean("AP")
    strata = check_strata(STRATA)
    names = [s.name for s in strata]
    estimates = []
    for seed in range(60):
        drawn = draw_strata(found.pair_query, found.pair_rank, strata, seed=seed)
        sample: dict[str, dict[str, int]] = {}
        kinds: dict[str, dict[str, str]] = {}
        for (q, d, _), g, s, k in zip(pairs, grades, drawn.stratum.tolist(), drawn.sampled.tolist()):
            sample.setdefault(q, {})[d] = g if k else -1
            kinds.setdefault(q, {})[d] = names[s]
        assert drawn.sampled[drawn.stratum == 0].all()
        estimates.append(eb.evaluate(eb.Qrels(sample, strata=kinds), run, metrics=["xinfAP"],
                                     backend="fast").mean("xinfAP"))
    assert abs(np.mean(estimates) - fully) < 0.02, (np.mean(estimates), fully)
    assert np.std(estimates) > 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 40)), min_size=0, max_size=120),
       st.lists(st.floats(0.01, 1), min_size=3, max_size=3), st.integers(0, 2**31))
def test_each_query_stratum_holds_its_sample_size_and_the_rate_is_its_share(pairs, rates, seed):
    """Per query and stratum: n = max(1, round(rate * D)) pairs sampled, each pair's rate n / D; pairs drawn by
    rank into their stratum; the same seed draws the same sample."""
    import numpy as np

    from evalbridge.evalsets.stratified import check_strata, draw_strata, sample_size

    strata = check_strata({"1-5": rates[0], "6-20": rates[1], "21-40": rates[2]})
    query = np.asarray([q for q, _ in pairs], dtype="int64")
    rank = np.asarray([r for _, r in pairs], dtype="int64")
    drawn = draw_strata(query, rank, strata, seed=seed)
    again = draw_strata(query, rank, strata, seed=seed)
    assert (drawn.sampled == again.sampled).all()
    for i, s in enumerate(strata):
        assert ((rank >= s.low) & (rank <= s.high) == (drawn.stratum == i)).all()
        for q in set(query.tolist()):
            mine = (query == q) & (drawn.stratum == i)
            pooled = int(mine.sum())
            if pooled:
                assert int(drawn.sampled[mine].sum()) == sample_size(pooled, s.rate)
                assert np.allclose(drawn.rate[mine], sample_size(pooled, s.rate) / pooled)


@pytest.mark.parametrize(("strata", "words"), [
    ({"1-10": 1, "11-100": 0}, ["(0, 1]", "0"]),
    ({"1-10": 1, "11-100": 1.5}, ["(0, 1]", "1.5"]),
    ({"1-10": 1, "5-100": 0.5}, ["overlap", "5-100"]),
    ({"1-10": 1, "20-100": 0.5}, ["11-19", "gap"]),
    ({"2-10": 1}, ["1-1", "gap"]),
    ({"ten": 1}, ["LOW-HIGH", "ten"]),
    (["1-10:x"], ["not a number"]),
])
def test_bad_strata_are_refused_with_the_value_and_the_fix(strata, words):
    with pytest.raises(InputError) as caught:
        eb.pool({"q1": {"a": 1}}, {"x": {"q1": {"b": 1.0}}}, strata=strata)
    message = str(caught.value)
    assert "Fix" in message and "1-10:1 11-100:0.1" in message
    for word in words:
        assert word in message, message


def test_a_graded_batch_that_lost_its_rates_or_lines_is_refused_naming_file_and_line(tmp_path):
    from evalbridge.io.judging import write_batch

    runs = {"x": {"q1": {f"d{i}": 10.0 - i for i in range(8)}}}
    found = eb.pool(None, runs, strata={"1-2": 1, "3-8": 0.5}, queries="runs", seed=1)
    lines = [json.loads(line) for line in write_batch(found, tmp_path / "b.jsonl").read_text().splitlines()]
    for obj in lines:
        obj["grade"] = 1
    base = tmp_path / "base.txt"
    base.write_text("q1 0 zz 1\n")
    cases = {"no_rate.jsonl": [{k: v for k, v in o.items() if k != "rate" or i != 2} for i, o in enumerate(lines)],
             "lost.jsonl": lines[:-1], "mixed.jsonl": [*lines, {"query_id": "q1", "doc_id": "z", "grade": 1,
                                                                 "judge": "j"}]}
    expected = {"no_rate.jsonl": ("no_rate.jsonl:3", "no rate"), "lost.jsonl": ("lost.jsonl:", "lost or added"),
                "mixed.jsonl": ("mixed.jsonl:9", "has no stratum")}
    for name, objs in cases.items():
        path = tmp_path / name
        path.write_text("".join(json.dumps(o) + "\n" for o in objs))
        with pytest.raises(InputError) as caught:
            eb.merge_judgements(base, eb.read_qrels(path))
        for word in expected[name]:
            assert word in str(caught.value), (name, str(caught.value))
        out = subprocess.run([sys.executable, "-m", "evalbridge", "merge", str(base), str(path),
                              "-o", str(tmp_path / "m.jsonl")], capture_output=True, text=True)
        assert out.returncode == 2 and expected[name][0] in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_the_cli_pools_by_strata_as_the_api_does(tmp_path):
    """evalbridge pool --strata ... --seed ... --batch writes the API's batch; bad strata exit 2 with the fix."""
    from evalbridge.io.judging import write_batch

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d0 1\nq2 0 e0 0\n")
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {q[0].replace('q', 'd') if q == 'q1' else 'e'}{i} {i + 1} {20 - i} x\n"
                           for q in ("q1", "q2") for i in range(12)))
    api = write_batch(eb.pool(qrels, {"run": run}, strata={"1-3": 1, "4-12": 0.4}, seed=9), tmp_path / "api.jsonl")
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "pool", str(qrels), str(run), "--strata", "1-3:1",
                          "4-12:0.4", "--seed", "9", "--batch", str(tmp_path / "cli.jsonl"), "--format", "json"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert (tmp_path / "cli.jsonl").read_text() == api.read_text()
    assert json.loads(cli.stdout)["strata"][1]["stratum"] == "4-12"
    bad = subprocess.run([sys.executable, "-m", "evalbridge", "pool", str(qrels), str(run), "--strata", "1-3:1",
                          "5-12:0.4"], capture_output=True, text=True)
    assert bad.returncode == 2 and "4-4" in bad.stderr and "Fix" in bad.stderr and "Traceback" not in bad.stderr


def test_a_config_pool_section_draws_the_apis_sample(tmp_path, monkeypatch):
    """A config's pool: {strata} section (the config's qrels the judgements so far, its seed the sample's) reports
    the API's pool and strata in JSON and every text format; strata with a gap exit 2 naming the key and the fix."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d0 1\nq2 0 d0 0\n")
    for s in range(2):
        (tmp_path / f"s{s}.run").write_text("".join(f"{q} Q0 d{(i * (s + 2)) % 17} {i + 1} {30 - i} s{s}\n"
                                                    for q in ("q1", "q2") for i in range(15)))
    monkeypatch.chdir(tmp_path)
    runs = {f"s{s}": f"s{s}.run" for s in range(2)}
    config = {"qrels": "qrels.txt", "runs": runs, "metrics": ["nDCG@5"], "seed": 4,
              "pool": {"strata": {"1-3": 1, "4-15": 0.25}}}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    api = eb.pool("qrels.txt", runs, strata={"1-3": 1, "4-15": 0.25}, seed=4)
    out = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write", "--format", "json"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pool"] == json.loads(json.dumps(api.to_dict()))
    for fmt in ("terminal", "markdown", "latex", "html"):
        shown = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write", "--format", fmt],
                               capture_output=True, text=True)
        assert shown.returncode == 0 and "4-15" in shown.stdout, shown.stderr
    config["pool"] = {"strata": {"1-3": 1, "5-15": 0.25}}
    (tmp_path / "eval.yaml").write_text(json.dumps(config))
    bad = subprocess.run([sys.executable, "-m", "evalbridge", "run", "eval.yaml", "--no-write"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "pool.strata" in bad.stderr and "4-4" in bad.stderr and "Fix" in bad.stderr, \
        bad.stderr


def test_the_command_line_loop_pool_grade_merge_eval_gives_the_apis_estimates(tmp_path):
    """evalbridge pool --strata --batch, the batch graded, evalbridge merge -o merged.jsonl (the strata kept on disk)
    and evalbridge eval merged.jsonl RUN -m xinfAP infNDCG give the API's numbers on the same sample."""
    from evalbridge.io.judging import write_batch

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d0 1\nq2 0 d1 2\n")
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 d{(i * 7 + len(q)) % 40} {i + 1} {40 - i} x\n" for q in ("q1", "q2")
                           for i in range(30)))
    batch = tmp_path / "batch.jsonl"
    made = subprocess.run([sys.executable, "-m", "evalbridge", "pool", str(qrels), str(run), "--strata", "1-5:1",
                           "6-30:0.3", "--seed", "2", "--batch", str(batch), "-q"], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    graded = tmp_path / "graded.jsonl"
    with graded.open("w") as f:
        for line in map(json.loads, batch.read_text().splitlines()):
            if line["sampled"]:
                line.update(grade=int(line["doc_id"][1:]) % 3, judge="llm")
            f.write(json.dumps(line) + "\n")
    merged = tmp_path / "merged.jsonl"
    merging = subprocess.run([sys.executable, "-m", "evalbridge", "merge", str(qrels), str(graded), "-o", str(merged)],
                             capture_output=True, text=True)
    assert merging.returncode == 0, merging.stderr
    api_batch = write_batch(eb.pool(qrels, {"run": run}, strata={"1-5": 1, "6-30": 0.3}, seed=2), tmp_path / "a.jsonl")
    assert api_batch.read_text() == batch.read_text()
    api = eb.evaluate(eb.merge_judgements(qrels, eb.read_qrels(graded)), run, ["xinfAP", "infNDCG"])
    assert eb.read_qrels(merged).strata == eb.merge_judgements(qrels, eb.read_qrels(graded)).strata
    scored = subprocess.run([sys.executable, "-m", "evalbridge", "eval", str(merged), str(run), "-m", "xinfAP",
                             "infNDCG", "--format", "json"], capture_output=True, text=True)
    assert scored.returncode == 0, scored.stderr
    for metric in ("xinfAP", "infNDCG"):
        assert repr(api.mean(metric)) in scored.stdout, (metric, scored.stdout[:300])
