"""Adapters for RAG-style inputs: from_labels, from_pairs, from_records, from_graded."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.io.shapes import UNRETRIEVED_PREFIX, from_graded, from_labels, from_pairs, from_records
from evalbridge.errors import InputError
from evalbridge.common.ranking import rank
from evalbridge.model.data import Qrels, Run

labels_lists = st.lists(st.one_of(st.integers(-1, 3), st.floats(0, 10, allow_nan=False), st.booleans()),
                        max_size=12)
doc_ids = st.text("abcdefgh0123456789_-", min_size=1, max_size=6)


# ---------------------------------------------------------------- from_labels

def test_from_labels_judges_every_label_and_ranks_by_position():
    """Each label becomes a judged doc d1..dn, and the run ranks them in list order."""
    qrels, run = from_labels({"q1": [1, 0, 2]})
    assert dict(qrels["q1"]) == {"d1": 1, "d2": 0, "d3": 2}
    assert rank(run["q1"]) == ["d1", "d2", "d3"]
    assert isinstance(qrels, Qrels) and isinstance(run, Run)


@given(st.lists(labels_lists, min_size=1, max_size=5))
@settings(max_examples=60, deadline=None)
def test_from_labels_scores_strictly_decrease_so_every_tie_policy_keeps_list_order(lists):
    """Run scores are n..1, so docid_desc, docid_asc and input ties all give the list order."""
    qrels, run = from_labels(lists)
    assert list(qrels) == [f"q{i}" for i in range(1, len(lists) + 1)]
    for qid, labels in zip(qrels, lists):
        expected = [f"d{i}" for i in range(1, len(labels) + 1)]
        scores = list(run[qid].values())
        assert all(a > b for a, b in zip(scores, scores[1:]))
        for ties in ("docid_desc", "docid_asc", "input"):
            assert rank(run[qid], ties=ties) == expected
        assert list(qrels[qid].values()) == [int(v) if isinstance(v, bool) else v for v in labels]


def test_from_labels_list_input_gets_query_ids_in_order():
    """A list of label lists gets the query ids q1, q2, ... in order."""
    qrels, run = from_labels([[1], [0, 1]])
    assert list(qrels) == ["q1", "q2"] and list(run) == ["q1", "q2"]


def test_from_labels_accepts_bools_as_0_and_1():
    """True/False labels are the grades 1/0 (ints, not bools)."""
    qrels, _ = from_labels({"q1": [True, False]})
    assert list(qrels["q1"].values()) == [1, 0]
    assert all(type(g) is int for g in qrels["q1"].values())


def test_from_labels_keeps_float_grades_exactly():
    """Float grades such as 7.5 are not truncated."""
    qrels, _ = from_labels({"q1": [7.5, 0.25]})
    assert list(qrels["q1"].values()) == [7.5, 0.25]


def test_from_labels_accepts_tuples_and_numpy_arrays():
    """Tuples and numpy arrays of labels are read like lists."""
    np = pytest.importorskip("numpy")
    qrels, _ = from_labels(np.array([[1, 0], [0, 1]]))
    assert dict(qrels["q2"]) == {"d1": 0, "d2": 1}
    qrels, _ = from_labels({"a": (0, 1)})
    assert dict(qrels["a"]) == {"d1": 0, "d2": 1}


def test_from_labels_empty_list_is_a_query_that_retrieved_nothing():
    """An empty label list keeps the query, with no documents, and scores 0 (not dropped)."""
    qrels, run = from_labels({"q1": [1], "q2": []})
    assert dict(qrels["q2"]) == {} and dict(run["q2"]) == {}
    res = eb.evaluate(qrels, run, "P@1")
    assert res.query("P@1") == {"q1": 1.0, "q2": 0.0}


def test_from_labels_counts_empty_lists_as_queries_without_a_hit():
    """q1 relevant at rank 4, q2 and q3 nothing retrieved, q4 at rank 5 -> MRR 0.1125 (002_302ebfc17d0870d4.txt,
    §2 MRR, the worked example)."""
    qrels, run = from_labels({"q1": [0, 0, 0, 1], "q2": [], "q3": [], "q4": [0, 0, 0, 0, 1]})
    assert eb.evaluate(qrels, run, "mrr")["RR"] == pytest.approx(0.1125, abs=1e-12)


def test_from_labels_gives_map3_and_ndcg3_equal_to_the_formulas_worked_by_hand():
    """The query_results of 000_86ca3c6974105328.txt (§三.3) give MAP@3 and NDCG@3 equal to its formulas,
    worked by hand."""
    query_results = {"q1": [1, 0, 1], "q2": [1, 1, 0], "q3": [0, 1, 1]}
    res = eb.evaluate(*from_labels(query_results), ["map@3", "ndcg@3"])
    ap = {"q1": (1 / 1 + 2 / 3) / 2, "q2": (1 / 1 + 2 / 2) / 2, "q3": (1 / 2 + 2 / 3) / 2}
    ideal = 1 + 1 / math.log2(3)
    ndcg = {"q1": (1 + 1 / math.log2(4)) / ideal, "q2": 1.0, "q3": (1 / math.log2(3) + 1 / math.log2(4)) / ideal}
    assert res["AP@3"] == pytest.approx(sum(ap.values()) / 3, abs=1e-12)
    assert res["nDCG@3"] == pytest.approx(sum(ndcg.values()) / 3, abs=1e-12)


def test_from_labels_n_relevant_adds_unretrieved_relevant_docs():
    """n_relevant adds _unretrieved_i docs (grade 1) so recall and AP are not optimistic."""
    qrels, run = from_labels({"q1": [1, 0, 1]}, n_relevant={"q1": 4})
    assert {d: g for d, g in qrels["q1"].items() if d.startswith(UNRETRIEVED_PREFIX)} == \
        {"_unretrieved_1": 1, "_unretrieved_2": 1}
    assert "_unretrieved_1" not in run["q1"]
    res = eb.evaluate(qrels, run, ["recall@3", "ap"])
    assert res["R@3"] == pytest.approx(2 / 4)
    assert res["AP"] == pytest.approx((1 / 1 + 2 / 3) / 4)


def test_from_labels_n_relevant_list_is_aligned_with_a_list_of_labels():
    """With list input, n_relevant may be a list in the same order; equal counts add nothing."""
    qrels, _ = from_labels([[1, 0], [0, 0]], n_relevant=[1, 2])
    assert len(qrels["q1"]) == 2 and len(qrels["q2"]) == 4


def test_from_labels_unretrieved_docs_take_the_level_when_it_is_above_1():
    """With min_relevance=7 the added docs get grade 7, so they count as relevant."""
    qrels, _ = from_labels({"q1": [8.0, 2.0]}, n_relevant={"q1": 2}, min_relevance=7)
    assert qrels["q1"]["_unretrieved_1"] == 7 and qrels.min_relevance == 7


def test_from_labels_n_relevant_smaller_than_retrieved_relevant_raises():
    """n_relevant below the relevant labels already retrieved is an error naming the query and counts."""
    with pytest.raises(InputError, match=r"query 'q1'.*n_relevant is 1 .* 2 relevant"):
        from_labels({"q1": [1, 1, 0]}, n_relevant={"q1": 1})


@pytest.mark.parametrize("n_relevant, message", [
    ({"q9": 3}, "names query 'q9'"),
    ({"q1": -1}, "whole number >= 0"),
    ({"q1": 2.5}, "whole number >= 0"),
    ([1, 2], "2 entries but there are 1 queries"),
])
def test_from_labels_bad_n_relevant_raises(n_relevant, message):
    """Unknown queries, negative or fractional counts and misaligned lists are refused."""
    labels = [[1, 0]] if isinstance(n_relevant, list) else {"q1": [1, 0]}
    with pytest.raises(InputError, match=message):
        from_labels(labels, n_relevant=n_relevant)


def test_from_labels_n_relevant_list_with_dict_labels_raises():
    """A list of counts cannot be aligned with a dict of labels."""
    with pytest.raises(InputError, match="dict query id -> int"):
        from_labels({"q1": [1]}, n_relevant=[1])


@pytest.mark.parametrize("bad", ["1", None, float("nan"), float("inf"), [1], {"a": 1}])
def test_from_labels_non_number_label_names_query_position_and_value(bad):
    """A label that is not a finite number raises, naming the query id, position and value."""
    with pytest.raises(InputError) as info:
        from_labels({"q7": [1, bad, 0]})
    text = str(info.value)
    assert "query 'q7'" in text and "position 2" in text and repr(bad)[:10] in text


@pytest.mark.parametrize("bad, message", [
    ({"q1": {"d1": 1}}, "Qrels"),
    ({"q1": "101"}, "list of numbers"),
    ({}, "no queries"),
    ("1 0 1", "dict keyed by query id"),
])
def test_from_labels_wrong_shape_raises_with_a_pointer_to_the_right_adapter(bad, message):
    """Dicts of grades, strings and empty inputs are refused with a fix."""
    with pytest.raises(InputError, match=message):
        from_labels(bad)


# ---------------------------------------------------------------- from_pairs

def test_from_pairs_gives_precision_and_recall_of_a_ranked_list_against_a_relevant_set():
    """001_7752ff7570d0df9e.txt, §一 and §二: retrieved doc1..doc5, relevant doc1, doc3, doc6, doc7 -> P@5 0.4, Recall@5 0.5."""
    retrieved = ["doc1", "doc2", "doc3", "doc4", "doc5"]
    res = eb.evaluate(*from_pairs([(retrieved, ["doc1", "doc3", "doc6", "doc7"])]), ["P@5", "recall@5"])
    assert res["P@5"] == pytest.approx(0.4) and res["R@5"] == pytest.approx(0.5)


def test_from_pairs_gives_mrr_and_hit_rate_over_a_batch_of_questions():
    """The batches of 001_7752ff7570d0df9e.txt (§三 MRR, Hit Rate@K): MRR (1 + 1/3 + 0) / 3, and Hit Rate@3 = 2/3."""
    mrr_queries = [(["doc1", "doc2", "doc3"], ["doc1", "doc4"]), (["doc2", "doc3", "doc1"], ["doc1", "doc4"]),
                   (["doc2", "doc3", "doc4"], ["doc1", "doc5"])]
    assert eb.evaluate(*from_pairs(mrr_queries), "mrr")["RR"] == pytest.approx((1 + 1 / 3) / 3)
    hit_queries = [(["doc1", "doc2", "doc3"], ["doc1", "doc4"]), (["doc2", "doc3", "doc4"], ["doc1", "doc5"]),
                   (["doc5", "doc2", "doc3"], ["doc5", "doc6"])]
    assert eb.evaluate(*from_pairs(hit_queries), "hit_rate@3")["Success@3"] == pytest.approx(2 / 3)


@given(st.lists(st.tuples(st.lists(doc_ids, unique=True, max_size=8), st.sets(doc_ids, max_size=5)),
                min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_from_pairs_run_ranks_in_list_order_and_qrels_hold_the_relevant_set(pairs):
    """The run ranks the retrieved docs in list order; the qrels give grade 1 to exactly the relevant docs."""
    qrels, run = from_pairs(pairs)
    for (retrieved, relevant), qid in zip(pairs, qrels):
        assert rank(run[qid]) == retrieved
        assert dict(qrels[qid]) == {d: 1 for d in relevant}


def test_from_pairs_dict_input_and_graded_relevant_dict():
    """A dict keyed by query id keeps its ids; a relevant dict keeps its grades."""
    qrels, run = from_pairs({"a": (["x", "y"], {"y": 2, "z": 0})})
    assert dict(qrels["a"]) == {"y": 2, "z": 0} and rank(run["a"]) == ["x", "y"]


def test_from_pairs_duplicate_retrieved_doc_names_query_doc_and_both_ranks():
    """A doc retrieved twice raises, naming the query, the doc and both ranks."""
    with pytest.raises(InputError, match=r"query 'q2'.*'b' is retrieved twice, at ranks 2 and 4"):
        from_pairs([(["a"], []), (["a", "b", "c", "b"], ["a"])])


def test_from_pairs_str_and_int_doc_ids_mixed_raises():
    """A doc id that is a str in one place and an int elsewhere is refused, naming both."""
    with pytest.raises(InputError, match=r"mix str and int: '1' \(query 'q1', retrieved rank 1\) and 1 "
                                         r"\(query 'q1', relevant\)"):
        from_pairs([(["1", "2"], [1])])


@pytest.mark.parametrize("retrieved, fix", [
    ({"a", "b"}, "a set has no order"),
    ({"a": 0.5}, "already a run"),
    ("abc", "list of doc ids"),
])
def test_from_pairs_unordered_or_string_retrieved_raises(retrieved, fix):
    """Sets, dicts and strings have no rank order to read, so they are refused with a fix."""
    with pytest.raises(InputError, match=fix):
        from_pairs([(retrieved, ["a"])])


@pytest.mark.parametrize("pair, message", [
    (("a", "b", "c"), r"\(retrieved, relevant\) pair"),
    ({"retrieved": ["a"], "relevant": ["a"]}, "from_records"),
    ((["a"], "a"), "relevant must be a list/set/tuple"),
    ((["a"], None), "relevant must be"),
    (([1.5], []), "doc id at rank 1 of retrieved must be a str or an int; got float 1.5"),
])
def test_from_pairs_malformed_pair_raises(pair, message):
    """Pairs of the wrong length, record dicts, string/None relevant and float doc ids are refused."""
    with pytest.raises(InputError, match=message):
        from_pairs([pair])


def test_from_pairs_binary_list_with_level_above_1_raises():
    """A binary relevant list (grade 1) with min_relevance=2 would count nothing relevant: refused."""
    with pytest.raises(InputError, match="min_relevance=2"):
        from_pairs([(["a"], ["a"])], min_relevance=2)


# ---------------------------------------------------------------- from_records

GUIDE_RECORDS = {
    "q1": {"retrieved": ["doc1", "doc2", "doc3", "doc4", "doc5"], "relevant": {"doc1": 3, "doc3": 2, "doc6": 1}},
    "q2": {"retrieved": ["doc2", "doc3", "doc1", "doc5", "doc4"], "relevant": {"doc1": 3, "doc2": 2}},
}


def test_from_records_takes_graded_relevant_dicts_per_question():
    """The RetrievalEvaluator input of 001_7752ff7570d0df9e.txt gives P@5, recall@5, MRR, nDCG@5 and hit rate worked by hand."""
    res = eb.evaluate(*from_records(GUIDE_RECORDS), ["precision@5", "recall@5", "mrr", "ndcg@5", "hit_rate@5"])
    log2 = math.log2
    ndcg_q1 = (3 + 2 / log2(4)) / (3 + 2 / log2(3) + 1 / log2(4))
    ndcg_q2 = (2 + 3 / log2(4)) / (3 + 2 / log2(3))
    assert res["P@5"] == pytest.approx(0.4)
    assert res["R@5"] == pytest.approx((2 / 3 + 1) / 2)
    assert res["RR"] == pytest.approx(1.0)
    assert res["nDCG@5"] == pytest.approx((ndcg_q1 + ndcg_q2) / 2, abs=1e-12)
    assert res["Success@5"] == pytest.approx(1.0)


def test_from_records_unknown_key_suggests_the_closest():
    """A misspelt key raises with the closest valid key."""
    with pytest.raises(InputError, match=r"query 'q1'.*unknown key 'retreived'.*did you mean 'retrieved'"):
        from_records({"q1": {"retreived": ["a"], "relevant": []}})


def test_from_records_missing_key_raises():
    """A record without 'relevant' raises, saying how to write an empty one."""
    with pytest.raises(InputError, match=r"no 'relevant' key.*empty list"):
        from_records({"q1": {"retrieved": ["a"]}})


def test_from_records_non_dict_record_raises():
    """A record that is not a dict is refused."""
    with pytest.raises(InputError, match="a record must be a dict"):
        from_records({"q1": (["a"], ["a"])})


# ---------------------------------------------------------------- from_graded

LLM_GRADES = {"q1": {"A": 8.0, "B": 7.0, "C": 6.0, "D": 5.0}}
LLM_RETRIEVED = {"q1": ["C", "E", "A", "F", "B", "G", "H", "I", "J", "D"]}


def test_from_graded_keeps_llm_scores_as_grades_for_exponential_ndcg():
    """The LLM-graded example of 003_2568de527c81821d.txt (§3 NDCG@K): exponential-gain nDCG@10 as its formula gives (about 0.654)."""
    qrels, run = from_graded(LLM_GRADES, LLM_RETRIEVED, min_relevance=7)
    dcg = 63 / 1 + 255 / math.log2(4) + 127 / math.log2(6) + 31 / math.log2(11)
    idcg = 255 / 1 + 127 / math.log2(3) + 63 / math.log2(4) + 31 / math.log2(5)
    value = eb.evaluate(qrels, run, "ndcg_burges@10")["nDCG(gain=exp)@10"]
    assert value == pytest.approx(dcg / idcg, abs=1e-12)
    assert round(value, 3) == 0.654


def test_from_graded_binary_metrics_use_min_relevance():
    """With min_relevance=7 only A (8.0) and B (7.0) are relevant: P@10 = 0.2, recall@10 = 1."""
    qrels, run = from_graded(LLM_GRADES, LLM_RETRIEVED, min_relevance=7)
    assert qrels.min_relevance == 7
    res = eb.evaluate(qrels, run, ["P@10", "recall@10", "mrr"])
    assert res["P@10"] == pytest.approx(0.2) and res["R@10"] == pytest.approx(1.0)
    assert res["RR"] == pytest.approx(1 / 3)


def test_from_graded_keeps_float_grades_exactly():
    """LLM grades such as 7.5 are stored unchanged."""
    qrels, _ = from_graded({"q1": {"a": 7.5, "b": 0.1}}, {"q1": ["a"]}, min_relevance=5)
    assert dict(qrels["q1"]) == {"a": 7.5, "b": 0.1}


def test_from_graded_accepts_records_with_min_relevance():
    """Records with graded relevant dicts work too, storing min_relevance."""
    qrels, run = from_graded({"q1": {"retrieved": ["a", "b"], "relevant": {"b": 9.5}}}, min_relevance=7)
    assert qrels.min_relevance == 7 and dict(qrels["q1"]) == {"b": 9.5} and rank(run["q1"]) == ["a", "b"]


def test_from_graded_requires_min_relevance():
    """There is no default level for a 0-10 scale: min_relevance must be given."""
    with pytest.raises(TypeError):
        from_graded(LLM_GRADES, LLM_RETRIEVED)  # type: ignore[call-arg]
    with pytest.raises(InputError, match="finite number"):
        from_graded(LLM_GRADES, LLM_RETRIEVED, min_relevance=float("nan"))


def test_from_graded_dict_and_list_mixed_raises():
    """Judgments keyed by query id and retrieved lists by position cannot be aligned: refused."""
    with pytest.raises(InputError, match="both be dicts"):
        from_graded(LLM_GRADES, [["A"]], min_relevance=7)


def test_from_graded_non_dict_judgments_raises():
    """Judgments must map each query to {doc: grade}."""
    with pytest.raises(InputError, match=r"query 'q1'.*\{doc_id: grade\}"):
        from_graded({"q1": ["A", "B"]}, {"q1": ["A"]}, min_relevance=7)


def test_from_graded_nan_grade_names_query_and_doc():
    """A NaN grade is refused by the qrels, naming the query and the doc."""
    with pytest.raises(InputError, match=r"query 'q1'.*doc 'B'"):
        from_graded({"q1": {"A": 8.0, "B": float("nan")}}, {"q1": ["A"]}, min_relevance=7)


def _mean(qrels, run, metric: str, **kwargs) -> float:  # noqa: ANN001
    """The mean of one metric (the default backend)."""
    return eb.evaluate(qrels, run, metric, **kwargs)[metric]


def test_min_relevance_counts_scores_at_or_above_the_threshold_wherever_it_is_set() -> None:
    """score >= min_relevance is relevant (7.0 counts, 6.99 does not), whether set by from_graded, Qrels or evaluate.

    Reproduces 003_2568de527c81821d.txt, 基本概念 (score >= min_relevance is relevant).
    """
    judgments = {"q": {"a": 9.0, "b": 7.0, "c": 6.99, "d": 3.0}}
    retrieved = {"q": ["c", "b", "d", "a"]}
    qrels, run = eb.from_graded(judgments, retrieved, min_relevance=7.0)
    assert _mean(qrels, run, "P@4") == 0.5                  # b and a
    assert _mean(qrels, run, "RR") == 0.5                   # b at rank 2; c (6.99) is not relevant
    assert _mean(qrels, run, "R@2") == 0.5
    plain = {"q": {"c": 4.0, "b": 3.0, "d": 2.0, "a": 1.0}}
    assert _mean(eb.Qrels(judgments, min_relevance=7.0), plain, "P@4") == 0.5
    assert _mean(judgments, plain, "P@4", min_relevance=7.0) == 0.5
    assert _mean(judgments, plain, "P@4", min_relevance=6.99) == 0.75
    assert _mean(qrels, run, "P@4", min_relevance=9.5) == 0.0  # evaluate's level overrides the data's
