"""Properties every reference metric must have, checked on hypothesis-generated qrels and runs."""

from __future__ import annotations

import copy

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge import Metric, evaluate
from strategies import DOCS, metrics, qrels_and_run, query_case, ranked_from_scores

#: any kind of data: int grades (with -1, trec_eval's "unjudged") or float LLM scores, tied scores or not
any_data = st.tuples(st.booleans(), st.booleans()).flatmap(
    lambda flags: qrels_and_run(float_grades=flags[0], negative=not flags[0], ties=flags[1]))


def per_query(qrels: dict, run: dict, metric: Metric | str, **kwargs) -> dict[str, float]:
    """query id -> value of one metric, from the reference backend, at relevance level 1 unless told (the
    properties hold at any level; float grades need one stated, evalbridge does not guess it)."""
    kwargs.setdefault("min_relevance", 1)
    return evaluate(qrels, run, metric, **kwargs).query(metric)


@given(any_data, metrics(names=("P", "R", "RR", "AP", "nDCG", "Rprec", "Success")))
def test_every_metric_is_between_0_and_1(data, metric: Metric) -> None:
    """Every normalised metric lies in [0, 1] for every query, whatever the grades and ties."""
    qrels, run = data
    for value in per_query(qrels, run, metric).values():
        assert 0.0 <= value <= 1.0 + 1e-12


@given(any_data, metrics(names=("DCG",)))
def test_dcg_is_non_negative(data, metric: Metric) -> None:
    """DCG is not normalised but never negative (grades <= 0 gain nothing)."""
    qrels, run = data
    assert all(v >= 0.0 for v in per_query(qrels, run, metric).values())


@given(query_case(float_grades=False, negative=True), st.booleans(), metrics(names=("nDCG",)))
def test_ideal_ranking_gives_ndcg_one(case, float_grades: bool, metric: Metric) -> None:
    """Ranking the judged docs by grade gives nDCG = 1 for every gain, discount, ideal and cutoff."""
    judged, _ = case
    if float_grades:
        judged = {d: g * 0.37 for d, g in judged.items()}
    level = metric.get("rel")
    assume(any(g > 0 and (level is None or g >= level) for g in judged.values()))
    run = {"q1": {d: float(g) for d, g in judged.items()}}
    assert per_query({"q1": judged}, run, metric)["q1"] == pytest.approx(1.0, rel=1e-12)


@given(query_case(min_retrieved=1), metrics(names=("nDCG",)))
def test_ndcg_ideal_run_is_one_for_any_run_sorted_by_grade(case, metric: Metric) -> None:
    """With the ideal taken from the run, any retrieved list sorted by grade scores 1 (if it gains)."""
    judged, ranking = case
    metric = metric.replace(ideal="run")
    grades = {d: judged.get(d, 0) for d in ranking}
    level = metric.get("rel")
    assume(any(g > 0 and (level is None or g >= level) for g in grades.values()))
    run = {"q1": {d: float(g) for d, g in grades.items()}}
    assert per_query({"q1": judged}, run, metric)["q1"] == pytest.approx(1.0, rel=1e-12)


@given(qrels_and_run(), metrics(cutoff=True, max_k=8), st.lists(st.sampled_from(DOCS), unique=True, min_size=1))
def test_appending_docs_below_rank_k_changes_no_cutoff_metric(data, metric: Metric, extra: list[str]) -> None:
    """Docs added below rank k change no @k metric, except nDCG(ideal=run), whose ideal can only grow."""
    qrels, run = data
    longer = copy.deepcopy(run)
    for qid, scores in longer.items():
        if len(scores) >= metric.k:
            low = min(scores.values())
            for i, doc in enumerate(d for d in extra if d not in scores):
                scores[doc] = low - 1.0 - i
    before, after = per_query(qrels, run, metric), per_query(qrels, longer, metric)
    for qid in before:
        if metric.name == "nDCG" and metric.get("ideal") == "run":
            # documents 000 and 002 (../shared/seeds) sort the whole retrieved list for the ideal: more docs, higher ideal
            assert after[qid] <= before[qid] + 1e-12
        else:
            assert after[qid] == before[qid]


def test_ndcg_ideal_run_depends_on_docs_below_k() -> None:
    """The explicit exception: a highly relevant doc appended at rank 2 lowers nDCG(ideal=run)@1 from 1 to 1/3."""
    qrels = {"q1": {"a": 1, "b": 3}}
    short, longer = {"q1": {"a": 2.0}}, {"q1": {"a": 2.0, "b": 1.0}}
    assert per_query(qrels, short, "nDCG(ideal=run)@1")["q1"] == 1.0
    assert per_query(qrels, longer, "nDCG(ideal=run)@1")["q1"] == pytest.approx(1 / 3)
    assert per_query(qrels, short, "nDCG@1")["q1"] == per_query(qrels, longer, "nDCG@1")["q1"] == pytest.approx(1 / 3)


@given(qrels_and_run(max_grade=1), metrics(names=("AP",)))
def test_weighted_graded_map_equals_map_on_binary_qrels(data, metric: Metric) -> None:
    """On 0/1 grades, AP(weights=graded) (max grade 1, so every weight is 1) is plain AP."""
    qrels, run = data
    binary = metric.replace(weights=None, max_grade=None)
    graded = binary.replace(weights="graded")
    assert per_query(qrels, run, graded) == per_query(qrels, run, binary)


@given(any_data, st.integers(1, 15), st.sampled_from([1, 2, 0.5, 7]))
def test_precision_times_k_counts_relevant_in_top_k(data, k: int, level) -> None:  # noqa: ANN001
    """P@k * k is the number of docs with grade >= level in the top k (trec_eval order, ties by doc id desc)."""
    qrels, run = data
    values = per_query(qrels, run, f"P@{k}", min_relevance=level)
    for qid, value in values.items():
        top = ranked_from_scores(run[qid])[:k]
        count = sum(qrels[qid].get(d, 0) >= level for d in top)
        assert value * k == pytest.approx(count)


@given(qrels_and_run(float_grades=True, missing=True, run_only=True, ties=True), st.booleans())
def test_evaluate_never_mutates_its_inputs(data, drop: bool) -> None:
    """evaluate leaves the caller's dicts exactly as they were, values and order."""
    qrels, run = data
    before = copy.deepcopy((qrels, run))
    order = [(q, list(d)) for q, d in qrels.items()], [(q, list(d)) for q, d in run.items()]
    evaluate(qrels, run, ["P@3", "R@5", "RR", "AP", "wmap@10", "nDCG(gain=exp,ideal=run)@5", "Rprec", "Success@2"],
             min_relevance=2.5, missing_queries="drop" if drop else "zero")
    assert (qrels, run) == before
    assert order == ([(q, list(d)) for q, d in qrels.items()], [(q, list(d)) for q, d in run.items()])


@given(any_data, metrics(names=("nDCG",)), st.sampled_from([0.1, 0.5, 2, 3, 10]))
def test_linear_ndcg_is_scale_invariant_in_the_grades(data, metric: Metric, factor: float) -> None:
    """Multiplying every grade by c > 0 leaves linear-gain nDCG unchanged (any discount, ideal, cutoff)."""
    qrels, run = data
    metric = metric.replace(gain=None, rel=None)
    scaled = {q: {d: g * factor for d, g in docs.items()} for q, docs in qrels.items()}
    original, rescaled = per_query(qrels, run, metric), per_query(scaled, run, metric)
    assert rescaled == pytest.approx(original, rel=1e-9, abs=1e-12)


@given(any_data, metrics(names=("AP",)))
def test_ap_normalised_by_retrieved_is_at_least_ap_normalised_by_r(data, metric: Metric) -> None:
    """Dividing by the relevant docs found (<= R) never gives less than dividing by R."""
    qrels, run = data
    by_r = per_query(qrels, run, metric.replace(norm="R"))
    by_retrieved = per_query(qrels, run, metric.replace(norm="retrieved"))
    for qid in by_r:
        assert by_retrieved[qid] >= by_r[qid] - 1e-12


@given(any_data, st.integers(1, 15))
def test_success_at_k_is_one_exactly_when_rr_at_k_is_positive(data, k: int) -> None:
    """A hit in the top k (Success@k = 1) is the same event as a positive RR@k."""
    qrels, run = data
    success, rr = per_query(qrels, run, f"Success@{k}"), per_query(qrels, run, f"RR@{k}")
    assert {q: v == 1.0 for q, v in success.items()} == {q: v > 0 for q, v in rr.items()}


@given(any_data, st.integers(1, 14))
def test_recall_never_decreases_with_k(data, k: int) -> None:
    """R@(k+1) >= R@k: looking further down the ranking cannot lose relevant docs."""
    qrels, run = data
    low, high = per_query(qrels, run, f"R@{k}"), per_query(qrels, run, f"R@{k + 1}")
    assert all(high[q] >= low[q] for q in low)


@given(qrels_and_run(missing=True), metrics(names=("P", "RR", "AP", "nDCG", "Success")))
def test_missing_queries_score_zero_or_leave_the_mean(data, metric: Metric) -> None:
    """``zero`` scores qrels queries absent from the run as 0; ``drop`` averages over the others only."""
    qrels, run = data
    zero = evaluate(qrels, run, metric, missing_queries="zero")
    drop = evaluate(qrels, run, metric, missing_queries="drop")
    missing = [q for q in qrels if q not in run]
    assert set(zero.query(metric)) == set(qrels)
    assert set(drop.query(metric)) == set(qrels) - set(missing)
    assert all(zero.query(metric)[q] == 0.0 for q in missing)
    assert zero[metric] * len(qrels) == pytest.approx(drop[metric] * (len(qrels) - len(missing)))
    assert zero.provenance.missing_from_run == drop.provenance.missing_from_run == tuple(missing)


@given(any_data, metrics(names=("P", "R", "RR", "AP", "Rprec", "Success", "nDCG")), st.sampled_from([0, 0.0, 1, 2, 7.5]))
def test_level_carried_by_the_qrels_equals_level_passed_to_evaluate(data, metric: Metric, level: float) -> None:
    """``Qrels(..., min_relevance=L)`` gives the same numbers as ``evaluate(..., min_relevance=L)``, for L = 0 too."""
    qrels, run = data
    carried = evaluate(eb.Qrels(qrels, min_relevance=level), run, metric)
    passed = evaluate(qrels, run, metric, min_relevance=level)
    assert carried.query(metric) == passed.query(metric)
    assert carried.provenance.relevance_level == passed.provenance.relevance_level == level


def test_results_resolve_graded_ap_with_the_top_grade_only_when_it_was_asked() -> None:
    """AP(weights=graded) takes the qrels' top grade (computed only when such a metric is asked):
    the results answer to the spelling without max_grade, and a graded AP not asked is not there."""
    qrels, run = {"q1": {"a": 3, "b": 1}}, {"q1": {"a": 0.2, "b": 0.9}}
    graded = evaluate(qrels, run, ["AP(weights=graded)", "P@1"])
    assert [str(m) for m in graded.metrics] == ["AP(max_grade=3,weights=graded)", "P@1"]
    assert graded["AP(weights=graded)"] == graded["AP(weights=graded,max_grade=3)"] == (1 / 3 / 1 + 2 / 2) / 2
    plain = evaluate(qrels, run, ["P@1"])
    assert "AP(weights=graded)" not in plain
    with pytest.raises(KeyError, match="was not evaluated"):
        plain["AP(weights=graded)"]


@given(st.lists(st.lists(st.sampled_from(["q1", "q2", "q3"]), unique=True), min_size=1, max_size=3))
def test_zero_policy_gives_every_qrels_query_in_qrels_order(key_lists: list[list[str]]) -> None:
    """fill_missing: each metric's values hold every qrels query, in qrels order, 0 where absent,
    whatever order or subset each metric came with (an empty one included)."""
    from evalbridge.evaluation.evaluating import fill_missing
    from evalbridge.metrics.spec import parse_metric

    qrels = eb.Qrels({"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}})
    names = ["P@1", "P@2", "P@3"]
    values = {parse_metric(n): {q: 0.5 for q in keys} for n, keys in zip(names, key_lists)}
    expected = {m: {q: per_query.get(q, 0.0) for q in qrels} for m, per_query in values.items()}
    fill_missing(values, qrels, "zero")
    assert {m: list(v.items()) for m, v in values.items()} == {m: list(v.items()) for m, v in expected.items()}
