"""eb.ppi on the LLMJudge labels: equal to ppi_py and scipy on evaluate's own per-query values and on the pairs'
shares, intervals that cover the all-human value, narrower than the human sample's, and bad input refused."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.stats.ppi import ppi_mean

ppi_py = pytest.importorskip("ppi_py")
scipy_stats = pytest.importorskip("scipy.stats")

#: the judge of the tests: Cohen's kappa 0.286 against the humans on the 0-3 scale (scikit-learn, 4,423 pairs)
JUDGE = "willia-umbrela1"
#: three "systems": each ranks a query's judged passages by another judge's grade, ties broken at random
SYSTEMS = ("TREMA-nuggets", "NISTRetrieval-instruct0", "h2oloo-fewself")


@pytest.fixture(scope="module")
def llmjudge(shared: Path) -> dict:
    folder = shared / "data" / "real" / "llmjudge"
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    human = eb.read_qrels(folder / "human.test.qrels")
    judge = eb.read_qrels(folder / "judges" / f"{JUDGE}.qrels")
    runs = {}
    for i, name in enumerate(SYSTEMS):
        grades = eb.read_qrels(folder / "judges" / f"{name}.qrels")
        rng = np.random.default_rng(i)
        runs[name] = {q: {d: float(g) + rng.random() for d, g in sorted(docs.items())} for q, docs in grades.items()}
    return {"folder": folder, "human": human, "judge": judge, "runs": runs}


def _sample_queries(human, count: int, seed: int) -> dict:
    queries = sorted(human)
    chosen = np.random.default_rng(seed).choice(len(queries), count, replace=False)
    return {queries[i]: dict(human[queries[i]]) for i in chosen}


def _sample_pairs(human, count: int, seed: int) -> dict:
    pairs = [(q, d) for q in human for d in human[q]]
    out: dict = {}
    for i in np.random.default_rng(seed).choice(len(pairs), count, replace=False):
        q, d = pairs[i]
        out.setdefault(q, {})[d] = human[q][d]
    return out


METRICS = ["P(rel=2)@10", "nDCG@10", "RR(rel=2)"]


def test_by_query_the_estimates_equal_ppi_py_on_evaluate_s_per_query_values(llmjudge) -> None:
    d = llmjudge
    sample = _sample_queries(d["human"], 12, seed=3)
    result = eb.ppi(d["judge"], sample, d["runs"], METRICS, baseline=SYSTEMS[0])
    labelled = sorted(sample, key=list(d["judge"]).index)
    for metric in METRICS:
        by_judge = {s: eb.evaluate(d["judge"], run, metric).query(metric) for s, run in d["runs"].items()}
        by_human = {s: eb.evaluate(sample, run, metric).query(metric) for s, run in d["runs"].items()}
        for system in SYSTEMS:
            f_all = np.array([by_judge[system][q] for q in d["judge"]])
            f = np.array([by_judge[system][q] for q in labelled])
            y = np.array([by_human[system][q] for q in labelled])
            for difference in (False, True):
                if difference:
                    if system == SYSTEMS[0]:
                        continue
                    base = SYSTEMS[0]
                    f_all = f_all - np.array([by_judge[base][q] for q in d["judge"]])
                    f = f - np.array([by_judge[base][q] for q in labelled])
                    y = y - np.array([by_human[base][q] for q in labelled])
                row = result.row(system, metric, difference=difference)
                low, high = ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05)
                assert row.estimate == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, f_all))),
                                                     abs=1e-12)
                assert (row.low, row.high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))),
                                                            abs=1e-12)
                assert row.p == pytest.approx(float(np.squeeze(ppi_py.ppi_mean_pval(y, f, f_all, lam=row.weight))),
                                              abs=1e-12)
                interval = scipy_stats.ttest_1samp(y, 0.0).confidence_interval(0.95)
                assert (row.classical_low, row.classical_high) == pytest.approx((interval.low, interval.high),
                                                                                abs=1e-12)
                assert row.judge_only == pytest.approx(f_all.mean(), abs=1e-12)
                if difference:        # the human sample's difference is scipy's paired t-test
                    paired = scipy_stats.ttest_rel(y + np.array([by_human[SYSTEMS[0]][q] for q in labelled]),
                                                   np.array([by_human[SYSTEMS[0]][q] for q in labelled]))
                    assert row.classical_p == pytest.approx(paired.pvalue, abs=1e-9)
    ps = [r.p for r in result.rows if r.kind == "difference"]
    holm = scipy_stats.false_discovery_control  # noqa: F841 - Holm is checked through the order below
    order = np.argsort(ps)
    adjusted = np.maximum.accumulate([min(1.0, (len(ps) - k) * ps[i]) for k, i in enumerate(order)])
    rows = [r for r in result.rows if r.kind == "difference"]
    for k, i in enumerate(order):
        assert rows[i].p_adjusted == pytest.approx(adjusted[k], abs=1e-12)
        assert rows[i].significant == (adjusted[k] < 0.05)


def _shares(judge, run: dict, grades: dict, k: int, metric: str) -> dict:
    """Each judged pair's share of its query's P(rel=2)@k or DCG@k (linear gains), written out here: an
    oracle independent of evalbridge's metric code (the runs hold no ties)."""
    out = {}
    for q, docs in judge.items():
        ranked = sorted(run.get(q, {}), key=lambda doc: -run[q][doc])[:k]
        rank = {doc: i + 1 for i, doc in enumerate(ranked)}
        for doc in docs:
            g = grades.get((q, doc))
            if g is None:
                continue
            at = rank.get(doc)
            if at is None:
                out[q, doc] = 0.0
            elif metric == "P":
                out[q, doc] = (g >= 2) / k
            else:
                out[q, doc] = g / math.log2(at + 1)
    return out


def test_by_pair_the_estimates_equal_ppi_py_on_the_pairs_shares(llmjudge) -> None:
    d = llmjudge
    sample = _sample_pairs(d["human"], 400, seed=5)
    result = eb.ppi(d["judge"], sample, d["runs"], ["P(rel=2)@10", "DCG@10"], baseline=SYSTEMS[0], unit="pair")
    pairs = [(q, doc) for q in d["judge"] for doc in d["judge"][q]]
    labelled = [p for p in pairs if p[0] in sample and p[1] in sample[p[0]]]
    scale = len(pairs) / len(d["judge"])
    judge_grades = {p: d["judge"][p[0]][p[1]] for p in pairs}
    human_grades = {p: sample[p[0]][p[1]] for p in labelled}
    arrays = {}
    for system, run in d["runs"].items():
        for label, family in (("P(rel=2)@10", "P"), ("DCG@10", "DCG")):
            by_judge = _shares(d["judge"], run, judge_grades, 10, family)
            by_human = _shares(d["judge"], run, human_grades, 10, family)
            arrays[system, label] = (scale * np.array([by_human[p] for p in labelled]),
                                     scale * np.array([by_judge[p] for p in labelled]),
                                     scale * np.array([by_judge[p] for p in pairs]))
            # the shares add up to the metric evaluated under the judge's labels
            assert arrays[system, label][2].mean() == pytest.approx(
                eb.evaluate(d["judge"], run, label).means[label], rel=1e-12)
    for row in result.rows:
        y, f, f_all = arrays[row.system, row.metric]
        if row.kind == "difference":
            by, bf, bf_all = arrays[row.baseline, row.metric]
            y, f, f_all = y - by, f - bf, f_all - bf_all
        low, high = ppi_py.ppi_mean_ci(y, f, f_all, alpha=0.05)
        assert (row.estimate, row.low, row.high) == pytest.approx(
            (float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, f, f_all))), float(np.squeeze(low)),
             float(np.squeeze(high))), abs=1e-10)
        interval = scipy_stats.ttest_1samp(y, 0.0).confidence_interval(0.95)
        assert (row.classical_low, row.classical_high) == pytest.approx((interval.low, interval.high), abs=1e-10)


@pytest.fixture(scope="module")
def every_pair(llmjudge) -> tuple[np.ndarray, np.ndarray]:
    """Every pair's share under the humans and under the judge, for each estimate (every pair labelled): metrics
    at 100, which most judged pairs reach (at 10 a sample of 200 pairs holds a dozen that count, too few for
    a normal interval: 89% coverage)."""
    d = llmjudge
    runs = {name: d["runs"][name] for name in SYSTEMS[:2]}
    whole = eb.ppi(d["judge"], d["human"], runs, ["P(rel=2)@100", "DCG@100"], baseline=SYSTEMS[0], unit="pair")
    return np.array(whole.samples.human), np.array(whole.samples.judge)


def test_95_percent_intervals_cover_the_all_human_value_and_are_narrower_than_the_human_sample_s(every_pair) -> None:
    human, judge = every_pair
    truth = human.mean(axis=1)
    rng = np.random.default_rng(0)
    for n in (100, 200, 400):
        covered, ratio = [], []
        for _ in range(150):
            chosen = rng.choice(judge.shape[1], n, replace=False)
            for e in range(len(truth)):
                y, f = human[e, chosen], judge[e, chosen]
                estimate = ppi_mean(y, f, judge[e])
                covered.append(estimate.low <= truth[e] <= estimate.high)
                ratio.append(estimate.se / (np.std(y) / math.sqrt(n)))
        assert 0.92 <= np.mean(covered) <= 0.98, (n, np.mean(covered))
        assert np.mean(ratio) < 0.9, (n, np.mean(ratio))      # the judge (kappa 0.29) buys a narrower interval


def test_the_result_is_a_frame_json_and_tables_in_every_format(llmjudge) -> None:
    d = llmjudge
    result = eb.ppi(d["judge"], _sample_queries(d["human"], 8, seed=1), d["runs"], ["nDCG@10"], baseline=SYSTEMS[0])
    frame = result.to_frame()
    assert list(frame.columns[:7]) == ["system", "metric", "kind", "baseline", "estimate", "low", "high"]
    assert len(frame) == len(SYSTEMS) + len(SYSTEMS) - 1
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["rows"][0]["estimate"] == frame["estimate"][0]
    assert data["test"] == "prediction-powered z-test, two-sided, Holm-corrected"
    for fmt in ("terminal", "markdown", "latex", "html"):
        text = result.table(fmt)
        assert "h2oloo-fewself" in text and ("Δ" in text or "\\Delta" in text or "&#916;" in text)
    assert json.loads(result.table("json")) == data


def test_the_plan_needs_fewer_human_labels_with_the_judge_and_matches_the_sample_at_hand(llmjudge) -> None:
    d = llmjudge
    result_sample = _sample_pairs(d["human"], 600, seed=2)
    result = eb.ppi(d["judge"], result_sample, d["runs"], ["P(rel=2)@10"], unit="pair")
    row = result.rows[0]
    # the width reached now, asked as a target: about the labels at hand (the judge's variance pooled)
    plan = result.plan(width=row.high - row.low, cost_human=1.0, cost_llm=0.01)
    first = plan.rows[0]
    assert first.with_judge is not None and abs(first.with_judge - 600) <= 60
    assert first.human_only is not None and first.human_only > first.with_judge
    assert first.cost_with_judge == pytest.approx(first.with_judge + 0.01 * 4423)
    assert first.cost_human_only == pytest.approx(first.human_only)
    assert "human pairs, with the judge" in plan.table()
    with pytest.raises(InputError, match="without a baseline"):
        result.plan(difference=0.02)
    # the next pairs to label are pairs some run ranks within 10, where a label can move the estimate
    tops = {(q, doc) for run in d["runs"].values() for q, docs in run.items()
            for doc in sorted(docs, key=lambda x: -docs[x])[:10]}
    for by in ("judge", "systems"):
        chosen = result.next_to_label(50, by=by)
        assert len(set(chosen)) == 50 and set(chosen) <= tops
        assert not any(q in result_sample and doc in result_sample[q] for q, doc in chosen)


def test_the_next_batch_is_read_back_by_merge_and_grows_the_sample(llmjudge, tmp_path: Path) -> None:
    d = llmjudge
    sample = _sample_queries(d["human"], 6, seed=4)
    result = eb.ppi(d["judge"], sample, d["runs"], ["nDCG@10"], baseline=SYSTEMS[0])
    for by in ("judge", "systems"):
        chosen = result.next_to_label(3, by=by)
        assert len(chosen) == 3 and not {q for q, _ in chosen} & set(sample)
    batch = result.write_batch(tmp_path / "batch.jsonl", 3)
    items = [json.loads(line) for line in batch.read_text().splitlines()]
    queries = {item["query_id"] for item in items}
    assert len(queries) == 3 and all(set(item) == {"query_id", "query", "doc_id", "passage"} for item in items)
    assert len(items) == sum(len(d["judge"][q]) for q in queries)        # a query is labelled whole
    graded = tmp_path / "graded.jsonl"      # the humans answer the batch
    graded.write_text("".join(json.dumps({"query_id": i["query_id"], "doc_id": i["doc_id"],
                                          "grade": d["human"][i["query_id"]][i["doc_id"]], "judge": "assessor"}) + "\n"
                              for i in items))
    merged = eb.merge_judgements(sample, graded, names=("human", None))
    again = eb.ppi(d["judge"], merged, d["runs"], ["nDCG@10"], baseline=SYSTEMS[0])
    assert again.labelled == 9


def test_bad_input_is_refused_with_the_value_and_the_fix(llmjudge, tmp_path: Path) -> None:
    d = llmjudge
    runs = d["runs"]
    sample = _sample_queries(d["human"], 5, seed=0)
    stray = {**sample, "q-new": {"p1": 1}}
    with pytest.raises(InputError, match="no label from the judge.*'p1'.*Fix: give the judge's labels"):
        eb.ppi(d["judge"], stray, runs, "P@10")
    one = dict(list(sample.items())[:1])
    with pytest.raises(InputError, match="holds 1 query: an interval needs at least two"):
        eb.ppi(d["judge"], one, runs, "P@10")
    llama = eb.read_qrels(d["folder"] / "judges" / "RMITIR-llama70B.qrels")
    with pytest.raises(InputError, match=r"outside the scale 0\.\.3 of the human labels: 5 .*Fix: map the grades"):
        eb.ppi(llama, sample, runs, "P@10")
    duplicated = tmp_path / "judge.qrels"
    lines = (d["folder"] / "judges" / f"{JUDGE}.qrels").read_text().splitlines()
    duplicated.write_text("\n".join(lines + [lines[0]]) + "\n")
    with pytest.raises(InputError, match=rf"judge.qrels:{len(lines) + 1}.*appears twice.*Fix: remove the duplicate"):
        eb.ppi(str(duplicated), sample, runs, "P@10")
    q = next(iter(sample))
    partial = {**sample, q: dict(list(sample[q].items())[:3])}
    with pytest.raises(InputError, match="labelled whole.*Fix: label the query's every judged pair, or sample by pair"):
        eb.ppi(d["judge"], partial, runs, "P@10")
    with pytest.raises(InputError, match="nDCG is not.*Fix: sample by query"):
        eb.ppi(d["judge"], sample, runs, "nDCG@10", unit="pair")
    with pytest.raises(InputError, match="DCG@10 of 'TREMA-nuggets' is not the sum of its pairs' shares"):
        eb.ppi(d["judge"], sample, runs, "DCG@10", unit="pair", judged_only=True)   # a pair alone is ranked first
    with pytest.raises(InputError, match="baseline 'bm25' is not one of the systems"):
        eb.ppi(d["judge"], sample, runs, "P@10", baseline="bm25")
    with pytest.raises(InputError, match=r"scale must be the lowest and the highest grade.*got \(3, 0\)"):
        eb.ppi(d["judge"], sample, runs, "P@10", scale=(3, 0))
    with pytest.raises(InputError, match="unit must be one of"):
        eb.ppi(d["judge"], sample, runs, "P@10", unit="document")


def test_an_estimate_resting_on_few_labelled_items_that_count_is_warned_about(llmjudge) -> None:
    d = llmjudge
    sparse = _sample_pairs(d["human"], 200, seed=6)       # about a dozen of them within some run's first 10
    with pytest.warns(eb.EvalbridgeWarning, match=r"only \d+ of the 200 human-labelled pairs .* or sample by query"):
        eb.ppi(d["judge"], sparse, d["runs"], ["P(rel=2)@10"], unit="pair")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", eb.EvalbridgeWarning)
        eb.ppi(d["judge"], sparse, d["runs"], ["P(rel=2)@100"], unit="pair")


@st.composite
def _tied_cases(draw: st.DrawFn) -> tuple[dict, dict, dict]:
    """A judge's and humans' grades of the same pairs (every pair labelled) and a run with tied scores."""
    judge, human, run = {}, {}, {}
    for q in range(draw(st.integers(2, 4))):
        docs = [f"d{j}" for j in range(draw(st.integers(1, 7)))]
        judge[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in docs}
        human[f"q{q}"] = {d: draw(st.integers(0, 3)) for d in docs}
        ranked = draw(st.lists(st.sampled_from(docs + ["u1", "u2"]), unique=True, max_size=8))
        run[f"q{q}"] = {d: float(draw(st.integers(0, 3))) for d in ranked}
    return judge, human, run


@pytest.mark.filterwarnings("ignore::evalbridge.errors.EvalbridgeWarning")   # a few pairs: warned, rightly
@settings(max_examples=80, deadline=None)
@given(_tied_cases(), st.sampled_from(["docid_desc", "docid_asc", "input", "average"]),
       st.sampled_from(["float64", "float32"]), st.sampled_from(["P(rel=2)@3", "DCG@2", "DCG", "P@1"]))
def test_by_pair_the_shares_add_up_to_evaluate_under_every_tie_policy(case, ties, precision, metric) -> None:
    judge, human, run = case
    options = {"ties": ties, "score_precision": precision}
    result = eb.ppi(judge, human, {"r": run}, [metric], unit="pair", scale=(0, 3), **options)
    row = result.rows[0]
    assert row.judge_only == pytest.approx(eb.evaluate(judge, run, metric, **options).means[metric], abs=1e-12)
    # every pair labelled: the human sample's mean is the metric under the human labels
    assert row.classical == pytest.approx(eb.evaluate(human, run, metric, **options).means[metric], abs=1e-12)
