"""Objects that travel: Qrels, Run, Results, CrossCheck and Comparison pickle, copy and deep-copy, stay
immutable, compare and hash by value, and go through a multiprocessing pool (spawn)."""

from __future__ import annotations

import copy
import multiprocessing
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from strategies import qrels_and_run

ROUND_TRIPS = {
    "pickle": lambda obj: pickle.loads(pickle.dumps(obj)),
    "pickle protocol 2": lambda obj: pickle.loads(pickle.dumps(obj, protocol=2)),
    "copy": copy.copy,
    "deepcopy": copy.deepcopy,
}
METRICS = ["nDCG@5", "P(rel=2)@3", "AP", "RR", "Success@2"]


@pytest.mark.parametrize("how", ROUND_TRIPS)
@given(data=qrels_and_run(max_queries=4, float_grades=True), level=st.sampled_from([None, 1, 2.5]),
       name=st.sampled_from([None, "bm25"]))
@settings(max_examples=30)
def test_qrels_and_run_survive_pickle_copy_and_deepcopy(how, data, level, name) -> None:  # noqa: ANN001
    """The copy equals the original (rows, min_relevance, name, source, id kinds), hashes the same, and is
    still immutable."""
    qrels_dict, run_dict = data
    qrels = eb.Qrels(qrels_dict, min_relevance=level, source="qrels.txt")
    run = eb.Run(run_dict, name=name)
    for original in (qrels, run):
        again = ROUND_TRIPS[how](original)
        assert type(again) is type(original)
        assert again == original and hash(again) == hash(original)
        assert again.to_dict() == original.to_dict()
        assert (again.source, again.query_id_kind, again.doc_id_kind) == \
               (original.source, original.query_id_kind, original.doc_id_kind)
        with pytest.raises(AttributeError, match="immutable"):
            again.source = "elsewhere"
        with pytest.raises(TypeError):
            again[next(iter(again))]["d99"] = 1  # rows are read-only
    assert ROUND_TRIPS[how](qrels).min_relevance == level
    assert ROUND_TRIPS[how](run).name == name


def test_a_deep_copy_of_a_wrapped_input_no_longer_follows_the_callers_dict() -> None:
    """copy=False wraps the caller's rows (and shows later changes, as documented); a deep copy or a pickle
    round trip holds rows of its own, while copy.copy shares the rows like the original."""
    rows = {"q1": {"d1": 1, "d2": 0}}
    wrapped = eb.Qrels(rows, copy=False)
    deep, shallow, travelled = copy.deepcopy(wrapped), copy.copy(wrapped), pickle.loads(pickle.dumps(wrapped))
    rows["q1"]["d3"] = 2
    assert "d3" in wrapped["q1"] and "d3" in shallow["q1"]
    assert "d3" not in deep["q1"] and "d3" not in travelled["q1"]


def test_qrels_and_run_compare_by_rows_and_the_settings_that_change_an_evaluation() -> None:
    """Same rows: equal and same hash, whatever the source; a different min_relevance or run name makes them
    different; a plain dict with the same rows is equal (the Mapping contract); a Qrels never equals a Run."""
    rows = {"q1": {"d1": 1, "d2": 0}}
    assert eb.Qrels(rows, source="a") == eb.Qrels(rows, source="b")
    assert hash(eb.Qrels(rows, source="a")) == hash(eb.Qrels({"q1": {"d2": 0, "d1": 1.0}}))
    assert eb.Qrels(rows, min_relevance=2) != eb.Qrels(rows)
    assert eb.Run(rows, name="bm25") != eb.Run(rows, name="dense")
    assert eb.Qrels(rows) == rows and eb.Run(rows) == rows
    assert eb.Qrels(rows) != eb.Run(rows)
    assert eb.Qrels(rows) != {"q1": {"d1": 1}} and eb.Qrels(rows) != {"q1": 5}
    assert len({eb.Qrels(rows), eb.Qrels(dict(rows)), eb.Qrels({"q2": {"d1": 1}})}) == 2


@pytest.fixture(scope="module")
def results() -> eb.Results:
    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0}, "q2": {"d4": 1}, "q3": {"d5": 2}}
    run = {"q1": {"d2": 0.9, "d1": 0.8, "d3": 0.7}, "q2": {"d9": 0.5, "d4": 0.4}, "q9": {"d1": 1.0}}
    return eb.evaluate(qrels, run, METRICS + ["AP(weights=graded)"], min_relevance=2)


@pytest.mark.parametrize("how", ROUND_TRIPS)
def test_results_survive_pickle_copy_and_deepcopy_and_still_resolve_metric_spellings(results, how) -> None:  # noqa: ANN001
    """The copy is equal, hashes the same and answers every spelling the original answered, with the
    evaluation's relevance level (2) and top grade (2) applied: nothing of it lived in a closure."""
    again = ROUND_TRIPS[how](results)
    assert again == results and hash(again) == hash(results)
    assert again.means == results.means and again.provenance == results.provenance
    assert again["precision@3"] == results["P(rel=2)@3"]
    assert again["map"] == results["AP(rel=2)"]
    assert again["AP(weights=graded)"] == results["AP(rel=2,weights=graded,max_grade=2)"]
    assert again.per_query.equals(results.per_query)


def test_results_are_immutable(results) -> None:  # noqa: ANN001
    """Fields cannot be reassigned and the per-query values cannot be changed in place."""
    with pytest.raises(AttributeError):
        results.metrics = ()
    metric = results.metrics[0]
    with pytest.raises(TypeError):
        results.values[metric]["q1"] = 0.5
    with pytest.raises(TypeError):
        results.values[metric] = {}


def test_results_compare_by_metrics_values_and_provenance(results) -> None:  # noqa: ANN001
    """The same evaluation twice is equal (and hashes the same, so it can key a dict); another backend
    (provenance), other values or other metrics make a different Results."""
    qrels = {"q1": {"d1": 2, "d2": 1, "d3": 0}, "q2": {"d4": 1}, "q3": {"d5": 2}}
    run = {"q1": {"d2": 0.9, "d1": 0.8, "d3": 0.7}, "q2": {"d9": 0.5, "d4": 0.4}, "q9": {"d1": 1.0}}
    same = eb.evaluate(qrels, run, METRICS + ["AP(weights=graded)"], min_relevance=2)
    assert same == results and hash(same) == hash(results) and {results: 1}[same] == 1
    fast = eb.evaluate(qrels, run, METRICS + ["AP(weights=graded)"], min_relevance=2, backend="fast")
    assert fast.values == results.values and fast != results  # same numbers, another provenance
    other_run = {**run, "q2": {"d4": 0.9}}
    assert eb.evaluate(qrels, other_run, METRICS + ["AP(weights=graded)"], min_relevance=2) != results
    assert eb.evaluate(qrels, run, METRICS, min_relevance=2) != results
    assert results != results.means


def test_per_query_is_built_once_and_a_changed_copy_leaves_the_results_alone(results, monkeypatch) -> None:  # noqa: ANN001
    """The frame is built on first access only (counted), every access gives an equal frame, and writing
    to the frame a caller got never shows in the next access."""
    import evalbridge.evaluation.results as module

    fresh = copy.deepcopy(results)  # no cached frame yet
    calls = []
    build = module._per_query_frame

    def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        calls.append(1)
        return build(*args, **kwargs)

    monkeypatch.setattr(module, "_per_query_frame", counting)
    first = fresh.per_query
    first.iloc[0, 0] = -1.0
    first["extra"] = 1.0
    frames = [fresh.per_query for _ in range(50)]
    assert len(calls) == 1
    assert all(frame.equals(frames[0]) for frame in frames)
    assert "extra" not in frames[0] and frames[0].iloc[0, 0] != -1.0
    assert frames[0].to_dict("index") == {q: {r.label: fresh.values[r.metric][q] for r in fresh.requests}
                                          for q in fresh.query_ids}  # columns named by label (as asked)


def test_crosscheck_survives_pickle_copy_and_deepcopy() -> None:
    """A CrossCheck with a difference (ties) travels and compares equal; a different check does not."""
    qrels, run = {"q1": {"a": 1}}, {"q1": {"a": 0.5, "b": 0.5, "c": 0.5}}
    check = eb.crosscheck(qrels, run, ["RR"], backends=["pytrec_eval"], ties="input")
    assert not check.differences.empty
    for how in ROUND_TRIPS.values():
        again = how(check)
        assert again == check and hash(again) == hash(check)
        assert again.differences.equals(check.differences) and again.ok == check.ok
    with pytest.raises(AttributeError):
        check.atol = 1.0
    assert eb.crosscheck(qrels, run, ["RR"], backends=["pytrec_eval"]) != check


def test_comparison_survives_pickle_copy_and_deepcopy(results) -> None:  # noqa: ANN001
    """A Comparison of two systems travels and compares equal."""
    from evalbridge.decisions.compare import compare_systems

    qrels = {f"q{i}": {"d1": 1, "d2": i % 3} for i in range(12)}
    runs = {"a": {q: {"d1": 0.9, "d2": 0.1} for q in qrels}, "b": {q: {"d2": 0.9, "d1": 0.1} for q in qrels}}
    by_system = {name: eb.evaluate(qrels, run, ["P@1", "nDCG@2"]) for name, run in runs.items()}
    comparison = compare_systems(by_system, ["P@1", "nDCG@2"], baseline="a", n_resamples=200)
    for how in ROUND_TRIPS.values():
        again = how(comparison)
        assert again.to_dict() == comparison.to_dict()


def _chunks(qrels: dict, size: int) -> list[dict]:
    ids = list(qrels)
    return [{q: qrels[q] for q in ids[i:i + size]} for i in range(0, len(ids), size)]


def test_a_spawned_pool_evaluates_chunks_whose_merged_values_equal_one_evaluation() -> None:
    """Qrels and Run go to spawned workers (pickled), each evaluates a chunk of queries, the Results come back
    (pickled); merged, the per-query values equal a single evaluate over everything."""
    import random

    rng = random.Random(5)
    docs = [f"d{i}" for i in range(30)]
    qrels_rows = {f"q{i}": {d: rng.choice([0, 1, 2, 3]) for d in rng.sample(docs, 8)} for i in range(40)}
    run = eb.Run({q: {d: rng.random() for d in rng.sample(docs, 15)} for q in qrels_rows}, name="bm25")
    whole = eb.evaluate(qrels_rows, run, METRICS)
    jobs = [(eb.Qrels(chunk), run, METRICS) for chunk in _chunks(qrels_rows, 10)]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parts = pool.starmap(eb.evaluate, jobs)
    assert all(isinstance(part, eb.Results) for part in parts)
    for metric in whole.metrics:
        merged = {q: v for part in parts for q, v in part.values[metric].items()}
        assert merged == dict(whole.values[metric]), str(metric)


@pytest.mark.parametrize("how", ROUND_TRIPS)
def test_a_metric_with_a_gain_map_survives_pickle_copy_and_deepcopy(how: str) -> None:
    """Spark ships metrics to its workers by pickle: a GainMap (immutable) must rebuild, equal and hashable."""
    metric = eb.Metric.parse("nDCG(gains={0:0,1:1,2:3.5})@5")
    travelled = ROUND_TRIPS[how](metric)
    assert travelled == metric and hash(travelled) == hash(metric) and str(travelled) == str(metric)
    assert travelled.arguments["gains"][2] == 3.5
