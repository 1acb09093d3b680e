"""Settings applied once, before any backend: judged-only evaluation (trec_eval ``-J``), the depth
cut (``-M``), and evaluations over an empty run or empty qrels."""

from __future__ import annotations

import copy
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from strategies import metrics, qrels_and_run, ranked_from_scores

ALL_METRICS = metrics(max_k=12, gains=True)


def ranked(*docs: str) -> dict[str, float]:
    return {doc: float(len(docs) - i) for i, doc in enumerate(docs)}


# ---------------------------------------------------------------- judged_only

def test_judged_only_removes_unjudged_and_negative_grades_before_every_metric() -> None:
    """Qrels a=1, b=0, c=-1; run x, a, y, c, b. trec_eval -J keeps a and b (c is "unjudged", grade -1):
    the condensed ranking a, b gives P@2 = 1/2, RR = 1, Judged@2 = 1; three documents are left out."""
    qrels, run = {"q": {"a": 1, "b": 0, "c": -1}}, {"q": ranked("x", "a", "y", "c", "b")}
    res = eb.evaluate(qrels, run, ["P@2", "RR", "Judged@2", "NumRet"], judged_only=True)
    assert res.means == {"P@2": 0.5, "RR": 1.0, "Judged@2": 1.0, "NumRet": 2.0}
    assert res.provenance.settings.judged_only and res.provenance.removed_unjudged == 3
    assert "judged only: 3 unjudged documents left out" in res.provenance.summary()
    assert eb.evaluate(qrels, run, "RR").means == {"RR": 0.5}


@settings(max_examples=60)
@given(qrels_and_run(negative=True, ties=True, max_queries=4, run_only=True), ALL_METRICS,
       st.sampled_from(["docid_desc", "docid_asc", "input"]))
def test_judged_only_on_fully_judged_input_changes_nothing(data: tuple, metric: eb.Metric, ties: str) -> None:
    """When every retrieved document has a judgement >= 0, judged_only=True gives the same values."""
    qrels, run = data
    judged = {q: {d: s for d, s in docs.items() if qrels.get(q, {}).get(d, -1) >= 0} for q, docs in run.items()}
    assume(any(judged.values()))
    plain = eb.evaluate(qrels, judged, metric, ties=ties)
    condensed = eb.evaluate(qrels, judged, metric, ties=ties, judged_only=True)
    assert condensed.values == plain.values
    assert condensed.provenance.removed_unjudged == 0


@settings(max_examples=60)
@given(qrels_and_run(negative=True, ties=True, max_queries=4), ALL_METRICS)
def test_judged_only_equals_deleting_the_unjudged_documents_by_hand(data: tuple, metric: eb.Metric) -> None:
    """The condensed list is the run without its unjudged documents, on every backend path (reference, fast)."""
    qrels, run = data
    deleted = {q: {d: s for d, s in docs.items() if qrels[q].get(d, -1) >= 0} for q, docs in run.items()}
    for backend in ("reference", "fast"):
        assert eb.evaluate(qrels, run, metric, judged_only=True, backend=backend).values == \
            eb.evaluate(qrels, deleted, metric, backend=backend).values


@settings(max_examples=60)
@given(qrels_and_run(negative=True, max_queries=4), st.sampled_from([1, 2]))
def test_judged_only_equals_pytrec_eval_judged_docs_only_flag(data: tuple, level: int) -> None:
    """pytrec_eval's own ``judged_docs_only_flag`` (trec_eval -J, an independent implementation) gives the
    reference's values for P@5, map, ndcg, bpref, Rprec and num_ret."""
    import pytrec_eval

    qrels, run = data
    run = {q: ranked(*ranked_from_scores(docs)) for q, docs in run.items()}
    measures = {"P_5": "P@5", "map": "AP", "ndcg": "nDCG", "bpref": "Bpref", "Rprec": "Rprec", "num_ret": "NumRet"}
    # a query judged only negative crashes trec_eval 9; an extra non-relevant judgement changes no value
    safe = {q: d if any(g >= 0 for g in d.values()) else {**d, "unretrieved": 0} for q, d in qrels.items() if d}
    theirs = pytrec_eval.RelevanceEvaluator(safe, set(measures), relevance_level=level,
                                            judged_docs_only_flag=1).evaluate(run)
    res = eb.evaluate(qrels, run, list(measures.values()), judged_only=True, min_relevance=level)
    for qid, values in theirs.items():
        for name, spec in measures.items():
            assert res.query(spec)[qid] == pytest.approx(values[name], abs=1e-12), (qid, name)


def test_judged_only_makes_judged_one_and_never_mutates_the_run() -> None:
    """Judged@k is 1 wherever something judged remains; the caller's dicts are untouched."""
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": ranked("x", "a", "y", "b")}
    before = copy.deepcopy(run)
    assert eb.evaluate(qrels, run, "Judged@10", judged_only=True)["Judged@10"] == 1.0
    assert run == before


# ---------------------------------------------------------------- depth

@settings(max_examples=60)
@given(qrels_and_run(ties=True, max_queries=4, run_only=True), ALL_METRICS, st.integers(1, 8))
def test_depth_is_trec_eval_m_cutting_each_ranking_after_sorting(data: tuple, metric: eb.Metric, depth: int) -> None:
    """depth=N equals evaluating the first N documents of each ranking in trec_eval's order (score
    descending, doc id descending), cut by the test's own oracle sort."""
    qrels, run = data
    cut = {q: {d: docs[d] for d in ranked_from_scores(docs)[:depth]} for q, docs in run.items()}
    res = eb.evaluate(qrels, run, metric, depth=depth)
    assert res.values == eb.evaluate(qrels, cut, metric).values
    evaluated = [q for q in qrels if q in run]
    assert res.provenance.removed_beyond_depth == sum(max(len(run[q]) - depth, 0) for q in evaluated)


def test_depth_applies_before_judged_only_as_in_trec_eval() -> None:
    """trec_eval cuts at -M before -J removes unjudged documents: run x (unjudged), a, b with depth 2
    keeps x, a, then judged_only keeps a: NumRet = 1 (judged first, then cut, would give a, b: 2)."""
    qrels, run = {"q": {"a": 1, "b": 1}}, {"q": ranked("x", "a", "b")}
    res = eb.evaluate(qrels, run, ["NumRet", "R@10"], depth=2, judged_only=True)
    assert res.means == {"NumRet": 1.0, "R@10": 0.5}
    assert (res.provenance.removed_beyond_depth, res.provenance.removed_unjudged) == (1, 1)
    assert "depth 2: 1 documents below it left out" in res.provenance.summary()


def test_depth_follows_the_tie_rule() -> None:
    """Three tied documents, depth 1: the one kept is the first under the evaluation's tie rule."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    assert eb.evaluate(qrels, run, "Hits", depth=1, ties="docid_asc")["Hits"] == 1.0
    assert eb.evaluate(qrels, run, "Hits", depth=1)["Hits"] == 0.0  # doc id descending keeps c


@pytest.mark.parametrize(("options", "message"), [
    ({"depth": 0}, "depth must be an integer >= 1"),
    ({"depth": 2.5}, "depth must be an integer >= 1"),
    ({"depth": True}, "depth must be an integer >= 1"),
    ({"judged_only": "yes"}, "judged_only must be True or False"),
])
def test_bad_depth_or_judged_only_is_refused_with_a_fix(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1", **options)


def test_crosscheck_cuts_the_run_once_for_every_backend() -> None:
    """judged_only and depth reach the cross-check: every library sees the condensed, cut run and agrees."""
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}}
    run = {"q1": ranked("x", "a", "y", "b", "c"), "q2": ranked("z", "d")}
    check = eb.crosscheck(qrels, run, ["P@2", "Bpref", "NumRet", "nDCG@3"], backends=["pytrec_eval", "ir_measures"],
                          judged_only=True, depth=4)
    assert check.ok and check.differences.empty
    assert check.settings.judged_only and check.settings.depth == 4
    assert check.values["pytrec_eval"][eb.Metric.parse("NumRet")] == {"q1": 2.0, "q2": 1.0}


# ---------------------------------------------------------------- empty inputs

@pytest.mark.parametrize("backend", ["reference", "fast", "pytrec_eval", "ir_measures"])
def test_an_empty_run_scores_every_qrels_query_zero_as_missing(backend: str) -> None:
    """A run with no query at all: every qrels query is missing, scored as retrieving nothing (0, ir-measures'
    behaviour; NumRel is still R, as trec_eval -c prints num_rel), and the provenance says why; with missing_queries='drop' nothing is left and the means are NaN."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 2}}
    res = eb.evaluate(qrels, {}, ["P@1", "nDCG@5", "NumRel"], backend=backend)
    assert res.query("P@1") == {"q1": 0.0, "q2": 0.0} and res.query("NumRel") == {"q1": 1.0, "q2": 1.0}
    assert res.provenance.missing_from_run == ("q1", "q2") and res.provenance.queries_evaluated == 2
    assert any("the run holds no query" in note for note in res.provenance.notes)
    dropped = eb.evaluate(qrels, {}, "P@1", missing_queries="drop", backend=backend)
    assert dropped.query("P@1") == {} and math.isnan(dropped["P@1"])


@pytest.mark.parametrize("backend", ["reference", "fast", "pytrec_eval", "ir_measures"])
def test_empty_qrels_give_an_empty_result_with_a_note(backend: str) -> None:
    """Qrels with no query: nothing to evaluate; the result holds no query, its means are NaN, the run's
    queries are counted as ignored, and the note says so (no exception)."""
    res = eb.evaluate({}, {"q1": {"a": 1.0}}, ["P@1", "Bpref"], backend=backend)
    assert res.query_ids == [] and math.isnan(res["P@1"])
    assert res.provenance.ignored_run_only == ("q1",)
    assert "the qrels hold no query: nothing was evaluated" in res.provenance.summary()
    assert res.to_dict()["provenance"]["notes"] == list(res.provenance.notes)


def test_disjoint_non_empty_inputs_are_still_refused() -> None:
    """Only emptiness is accepted: two inputs that share no query id are most likely a spelling mismatch."""
    with pytest.raises(InputError, match="no query id is in both"):
        eb.evaluate({"q1": {"a": 1}}, {"Q1": {"a": 1.0}}, "P@1")


def test_the_model_still_refuses_empty_inputs_unless_asked() -> None:
    """Qrels({}) is most likely a mistake (e.g. a filter that matched nothing); allow_empty=True accepts it."""
    with pytest.raises(InputError, match="has no queries"):
        eb.Qrels({})
    assert len(eb.Run({}, allow_empty=True)) == 0
