"""Every worked example with numbers in the user's documents (``../shared/seeds/*.txt``, in Chinese), reproduced
through the adapters a RAG user calls (``from_labels``, ``from_pairs``, ``from_records``, ``from_graded``).

Tests are named by the behaviour they show and grouped by metric family; each docstring names the document
and the example it reproduces. Expected values are worked out by hand in the test (the arithmetic is written
out), and where a document ships Python functions they serve as an independent oracle
(:mod:`document_oracles`, copied verbatim). The judged-list file example lives in ``test_trec.py``, the
relevance threshold of LLM scores in ``test_adapters.py``.

Numbers that are only results of the documents' papers or projects cannot be recomputed from anything in
them, so they are not tested: the HaluBench table of 000_86ca3c6974105328.txt (MAP@3 0.724 / 0.768 / 0.897,
NDCG@3 0.732 / 0.783 / 0.915), the rating tables and "industry benchmarks" of 001_7752ff7570d0df9e.txt, the
illustrative JSON output of 003_2568de527c81821d.txt (precision@5 0.45, ...), and the MedCorpus tables of
004_a5f9bf9423829697.txt (NDCG@10 0.9044, MAP@10 0.5357, P@1 0.9279, ...).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalbridge as eb
from document_oracles import (
    MAP_eval, MRR_eval, NDCG_eval, average_precision, calculate_ap, calculate_average_ndcg, calculate_dcg_at_k,
    calculate_hit_rate_at_k, calculate_map, calculate_mrr, calculate_mrr_batch, calculate_ndcg, calculate_ndcg_at_k,
    calculate_precision_at_k, calculate_recall_at_k,
)
from strategies import DOCS, judged_list, label_lists

LOG2_3 = math.log2(3)

def mean(qrels, run, metric: str, **kwargs) -> float:
    """The mean of one metric from the reference backend."""
    return eb.evaluate(qrels, run, metric, **kwargs)[metric]

def per_query(qrels, run, metric: str, **kwargs) -> dict[str, float]:
    """query id -> value of one metric from the reference backend."""
    return eb.evaluate(qrels, run, metric, **kwargs).query(metric)


# The documents' worked data.

PAPER_QUERIES = {"q1": [1, 0, 1], "q2": [1, 1, 0], "q3": [0, 1, 1]}

FIVE = ["doc1", "doc2", "doc3", "doc4", "doc5"]

GUIDE_MRR_BATCH = [
    (["doc1", "doc2", "doc3"], ["doc1", "doc4"]),  # MRR = 1.0
    (["doc2", "doc3", "doc1"], ["doc1", "doc4"]),  # MRR = 0.33
    (["doc2", "doc3", "doc4"], ["doc1", "doc5"]),  # MRR = 0.0
]

GUIDE_GRADES = {"doc1": 3, "doc2": 1, "doc3": 2, "doc4": 0, "doc5": 3}

GUIDE_RECORDS = {
    'q1': {
        'retrieved': ['doc1', 'doc2', 'doc3', 'doc4', 'doc5'],
        'relevant': {'doc1': 3, 'doc3': 2, 'doc6': 1}
    },
    'q2': {
        'retrieved': ['doc2', 'doc3', 'doc1', 'doc5', 'doc4'],
        'relevant': {'doc1': 3, 'doc2': 2}
    }
}

GUIDE_EVALUATOR_METRICS = ['precision@5', 'recall@5', 'mrr', 'ndcg@5', 'hit_rate@5']

pairs_with_grades = st.lists(
    st.tuples(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=10),
              st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), max_size=8)),
    min_size=1, max_size=4)

def _course_data(labels: dict) -> dict:
    """The course's data_dict shape: query id -> [[doc id, rel], ...] in rank order."""
    return {q: [[f"d{i}", g] for i, g in enumerate(ls, 1)] for q, ls in labels.items()}

course_queries = st.dictionaries(st.sampled_from(["171", "172", "173", "174"]), judged_list(max_grade=3),
                                  min_size=1)

LETTERS = list("ABCDEFGHIJ")

graded_case = st.tuples(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 2), min_size=1, max_size=12),
                        st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=14))


# ----------------------------------------------------------------------------------------------------
# Precision and recall
# ----------------------------------------------------------------------------------------------------


def test_precision_at_5_is_04_and_recall_at_5_is_05_with_two_of_four_relevant_found() -> None:
    """doc1..doc5 against relevant doc1, doc3, doc6, doc7: P@5 = 2/5 = 0.4, Recall@5 = 2/4 = 0.5.

    Reproduces 001_7752ff7570d0df9e.txt, §一 and §二, 计算示例.
    """
    qrels, run = eb.from_pairs([(FIVE, ["doc1", "doc3", "doc6", "doc7"])])
    assert mean(qrels, run, "P@5") == 0.4
    assert mean(qrels, run, "Recall@5") == 0.5


@pytest.mark.parametrize(("k", "expected"), [(1, 1 / 1), (3, 2 / 3), (5, 2 / 5)])
def test_precision_at_k_counts_the_hits_in_the_top_k_over_k(k: int, expected: float) -> None:
    """doc1..doc5 against doc1, doc3, doc6: P@1 = 1, P@3 = 2/3, P@5 = 2/5, as the document's function prints.

    Reproduces 001_7752ff7570d0df9e.txt, §一, Python实现, 使用示例.
    """
    relevant = ["doc1", "doc3", "doc6"]
    qrels, run = eb.from_pairs([(FIVE, relevant)])
    assert mean(qrels, run, f"P@{k}") == pytest.approx(expected)
    assert expected == pytest.approx(calculate_precision_at_k(FIVE, relevant, k))


@pytest.mark.parametrize(("k", "expected"), [(1, 1 / 5), (3, 2 / 5), (5, 2 / 5)])
def test_recall_at_k_stops_growing_past_the_end_of_a_short_ranking(k: int, expected: float) -> None:
    """doc1..doc3 against five relevant docs: Recall@1 = 0.2, @3 = 0.4, @5 = 0.4 (only 3 retrieved).

    Reproduces 001_7752ff7570d0df9e.txt, §二, Python实现, 使用示例.
    """
    retrieved, relevant = ["doc1", "doc2", "doc3"], ["doc1", "doc3", "doc6", "doc7", "doc8"]
    qrels, run = eb.from_pairs([(retrieved, relevant)])
    assert mean(qrels, run, f"R@{k}") == pytest.approx(expected)
    assert expected == pytest.approx(calculate_recall_at_k(retrieved, relevant, k))


def test_precision_at_5_of_a_knowledge_base_answer_is_its_relevant_share() -> None:
    """Enterprise KB: 2 of the 5 retrieved docs are relevant, P@5 = 0.4 (60% of the context is noise).

    Reproduces 001_7752ff7570d0df9e.txt, §一, RAG应用场景 (企业知识库问答).
    """
    retrieved = ["HR手册第3章", "员工福利政策", "公司简介", "薪资制度", "考勤制度"]
    relevant = ["HR手册第3章", "员工福利政策", "假期管理规定"]
    qrels, run = eb.from_pairs({"年假政策": (retrieved, relevant)})
    assert mean(qrels, run, "P@5") == 0.4 == calculate_precision_at_k(retrieved, relevant, 5)


def test_recall_at_5_is_the_share_of_all_relevant_docs_found() -> None:
    """Tech docs: 2 of 8 relevant Redis docs in the top 5, Recall@5 = 0.25.

    Reproduces 001_7752ff7570d0df9e.txt, §二, RAG应用场景 (技术文档检索).
    """
    relevant = ["Redis配置指南", "Redis性能优化", "Redis集群配置", "Redis持久化", "Redis安全配置", "Redis监控",
                "Redis故障排查", "Redis最佳实践"]
    retrieved = ["Redis配置指南", "Redis性能优化", "MySQL配置", "Nginx配置", "Docker配置"]
    qrels, run = eb.from_pairs([(retrieved, relevant)])
    assert mean(qrels, run, "recall@5") == 0.25 == calculate_recall_at_k(retrieved, relevant, 5)


def test_precision_at_10_over_llm_scores_counts_scores_at_or_above_the_threshold() -> None:
    """Top 10 = A..J, LLM score >= 7 for A, C, E, G only: P@10 = 4/10 = 0.4.

    Reproduces 003_2568de527c81821d.txt, §1 Precision@K, 例子.
    """
    judgments = {"not vegan": {"A": 9.0, "B": 6.9, "C": 8.0, "D": 3.0, "E": 7.0, "G": 7.5, "Z": 2.0}}
    qrels, run = eb.from_graded(judgments, {"not vegan": LETTERS}, min_relevance=7.0)
    assert mean(qrels, run, "P@10") == pytest.approx(0.4)


def test_precision_at_5_is_04_with_two_relevant_docs_in_the_top_5() -> None:
    """P@5 = 2/5 = 0.4 "assuming A and C" are the relevant docs in the top 5 (G and I lower down).

    Reproduces 003_2568de527c81821d.txt, §1 Precision@K, 例子 (assuming A and C).
    """
    qrels, run = eb.from_pairs({"not vegan": (LETTERS, ["A", "C", "G", "I"])})
    assert mean(qrels, run, "P@5") == pytest.approx(0.4)
    assert mean(qrels, run, "P@10") == pytest.approx(0.4)


def test_precision_at_5_counts_e_at_rank_5_when_the_example_is_taken_literally() -> None:
    """Taken literally (A..J with A, C, E, G relevant), E is 5th, so P@5 is 3/5: the document's 0.4 needs its assumption.

    Reproduces 003_2568de527c81821d.txt, §1 Precision@K, 例子.
    """
    qrels, run = eb.from_pairs({"not vegan": (LETTERS, ["A", "C", "E", "G"])})
    assert mean(qrels, run, "P@5") == pytest.approx(0.6)


def test_recall_at_10_is_three_of_five_relevant_docs_found() -> None:
    """Relevant A..E, top 10 = A, C, E, F..L: 3 of 5 found, Recall@10 = 0.6.

    Reproduces 003_2568de527c81821d.txt, §2 Recall@K, 例子.
    """
    retrieved = ["A", "C", "E", "F", "G", "H", "I", "J", "K", "L"]
    qrels, run = eb.from_pairs({"not vegan": (retrieved, ["A", "B", "C", "D", "E"])})
    assert mean(qrels, run, "Recall@10") == pytest.approx(0.6)


def test_precision_at_1_counts_any_grade_above_zero_at_level_1() -> None:
    """P@1 treats rel > 0 as relevant: grade 1 at rank 1 gives 1.0 (at level 2 it would give 0).

    Reproduces 004_a5f9bf9423829697.txt, P@1 (rel > 0 is relevant).
    """
    qrels, run = eb.from_pairs({"q1": (["a", "b"], {"a": 1, "b": 2}), "q2": (["c"], {"c": 0, "d": 2})})
    assert per_query(qrels, run, "P@1") == {"q1": 1.0, "q2": 0.0}
    assert mean(qrels, run, "P(rel=2)@1") == 0.0


# ----------------------------------------------------------------------------------------------------
# Reciprocal rank and MRR
# ----------------------------------------------------------------------------------------------------


def test_reciprocal_rank_is_one_over_the_rank_of_the_first_relevant_doc() -> None:
    """doc2, doc3, doc1, doc4 with doc1 relevant (rank 3): RR = 1/3 = 0.333.

    Reproduces 001_7752ff7570d0df9e.txt, §三, 计算示例 (单个查询).
    """
    retrieved, relevant = ["doc2", "doc3", "doc1", "doc4"], ["doc1", "doc5"]
    qrels, run = eb.from_pairs([(retrieved, relevant)])
    assert mean(qrels, run, "mrr") == pytest.approx(1 / 3) == pytest.approx(calculate_mrr(retrieved, relevant))


def test_mrr_averages_the_reciprocal_ranks_with_zero_for_a_miss() -> None:
    """Three queries with RR 1, 1/3 and 0: MRR = (1 + 1/3 + 0) / 3 = 0.444.

    Reproduces 001_7752ff7570d0df9e.txt, §三, Python实现, calculate_mrr_batch 使用示例.
    """
    qrels, run = eb.from_pairs(GUIDE_MRR_BATCH)
    assert per_query(qrels, run, "RR") == pytest.approx({"q1": 1.0, "q2": 1 / 3, "q3": 0.0})
    value = mean(qrels, run, "MRR")
    assert value == pytest.approx(4 / 9) == pytest.approx(calculate_mrr_batch(GUIDE_MRR_BATCH))
    assert f"{value:.3f}" == "0.444"


def test_mrr_of_a_customer_service_faq_with_one_miss_prints_044() -> None:
    """Returns FAQ: the guide is at rank 1, rank 3, and missing: average MRR prints as 0.44.

    Reproduces 001_7752ff7570d0df9e.txt, §三, RAG应用场景 (客服问答系统).
    """
    relevant = ["退货流程指南"]
    pairs = {"如何退货？": (["退货流程指南", "售后政策", "物流信息"], relevant),
             "退货流程是什么？": (["售后政策", "物流信息", "退货流程指南"], relevant),
             "怎么申请退款？": (["售后政策", "物流信息", "联系客服"], relevant)}
    qrels, run = eb.from_pairs(pairs)
    value = mean(qrels, run, "mrr")
    assert value == pytest.approx((1.0 + 1 / 3 + 0.0) / 3)
    assert f"{value:.2f}" == "0.44"


def test_mrr_scores_a_query_without_a_relevant_doc_zero() -> None:
    """First relevant at rank 4 (q1) and 5 (q4), none for q2 and q3: (1/4 + 0 + 0 + 1/5) / 4 = 0.1125.

    Reproduces 002_302ebfc17d0870d4.txt, §2 MRR, the worked example.
    """
    labels = {"q1": [0, 0, 0, 1], "q2": [0, 0, 0, 0, 0], "q3": [0, 0, 0], "q4": [0, 0, 0, 0, 1]}
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "MRR") == pytest.approx(0.1125)
    data = {q: [[f"d{i}", g] for i, g in enumerate(ls, 1)] for q, ls in labels.items()}
    assert MRR_eval(data) == pytest.approx(0.1125)


def test_queries_absent_from_the_run_score_zero_or_are_dropped_by_the_missing_query_policy() -> None:
    """q2 and q3 "retrieved no documents": scored 0 they give 0.1125; left out of the mean, 0.225.

    Reproduces 002_302ebfc17d0870d4.txt, §2 MRR, queries that retrieved no documents.
    """
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"e": 1}}
    run = {"q1": {"x1": 4, "x2": 3, "x3": 2, "a": 1}, "q4": {"x1": 5, "x2": 4, "x3": 3, "x4": 2, "e": 1}}
    assert mean(qrels, run, "RR", missing_queries="zero") == pytest.approx(0.1125)
    assert mean(qrels, run, "RR", missing_queries="drop") == pytest.approx(0.225)


@given(st.dictionaries(st.sampled_from(["171", "172", "173"]), judged_list(need_relevant=False), min_size=1))
def test_rr_equals_the_courses_mrr_eval_on_random_judged_lists(labels: dict) -> None:
    """On random judged lists, with or without a relevant doc, MRR_eval is the mean of RR.

    Reproduces 002_302ebfc17d0870d4.txt, §2 MRR, MRR_eval.
    """
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "RR") == pytest.approx(MRR_eval(_course_data(labels)))


def test_mrr_of_first_relevant_ranks_3_1_and_none_is_0444() -> None:
    """First relevant at rank 3, at rank 1, and none: MRR = (0.333 + 1 + 0) / 3 = 0.444.

    Reproduces 003_2568de527c81821d.txt, §5 MRR, 例子.
    """
    pairs = [(["x", "y", "a"], ["a"]), (["a", "x"], ["a"]), (["x", "y"], ["a"])]
    qrels, run = eb.from_pairs(pairs)
    value = mean(qrels, run, "reciprocal_rank")
    assert value == pytest.approx(4 / 9)
    assert f"{value:.3f}" == "0.444"


# ----------------------------------------------------------------------------------------------------
# Average precision
# ----------------------------------------------------------------------------------------------------


def test_map3_dividing_by_the_relevant_docs_retrieved_is_29_over_36() -> None:
    """MAP@3 with AP divided by the relevant docs in the top 3: (5/6 + 1 + 7/12) / 3 = 29/36 = 0.806.

    Reproduces 000_86ca3c6974105328.txt, §三.3, the simulated experiment data (q1-q3), MAP@3.
    """
    qrels, run = eb.from_labels(PAPER_QUERIES)
    expected = ((1 / 1 + 2 / 3) / 2 + (1 / 1 + 2 / 2) / 2 + (1 / 2 + 2 / 3) / 2) / 3
    assert expected == pytest.approx(29 / 36)
    value = mean(qrels, run, "AP(norm=retrieved)@3")
    assert value == pytest.approx(expected)
    assert value == pytest.approx(calculate_map(PAPER_QUERIES))
    assert f"{value:.3f}" == "0.806"


def test_ap_norm_retrieved_and_norm_r_differ_when_relevant_docs_lie_below_k() -> None:
    """On [1, 0, 1, 0, 1] at k=3: /relevant retrieved = (1 + 2/3)/2 = 0.833 (the document), /R = (1 + 2/3)/3 = 0.556.

    Reproduces 000_86ca3c6974105328.txt, §一.3 calculate_ap, normalisation by sum(relevant_indices[:k]).
    """
    labels = {"q1": [1, 0, 1, 0, 1]}
    qrels, run = eb.from_labels(labels)
    by_retrieved = mean(qrels, run, "AP(norm=retrieved)@3")
    by_r = mean(qrels, run, "AP(norm=R)@3")
    assert by_retrieved == pytest.approx((1 + 2 / 3) / 2) == pytest.approx(calculate_ap(labels["q1"], k=3))
    assert by_r == pytest.approx((1 + 2 / 3) / 3)
    assert by_r == mean(qrels, run, "AP@3") == mean(qrels, run, "map@3")  # norm=R is the default (trec_eval)


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), label_lists(max_grade=1), min_size=1),
       st.integers(1, 6))
def test_ap_norm_retrieved_equals_the_papers_calculate_ap_on_random_labels(labels: dict, k: int) -> None:
    """On random 0/1 label lists the document's calculate_ap(k) is AP(norm=retrieved)@k, query by query.

    Reproduces 000_86ca3c6974105328.txt, §一.3 calculate_ap.
    """
    qrels, run = eb.from_labels(labels)
    values = per_query(qrels, run, f"AP(norm=retrieved)@{k}")
    assert values == pytest.approx({q: calculate_ap(ls, k=k) for q, ls in labels.items()})


def test_ap_norm_retrieved_divides_by_the_relevant_docs_retrieved() -> None:
    """Grades 0, 2, 0, 1, 1: AP = (1/2 + 2/4 + 3/5) / 3 = 0.5333 (every grade > 0 relevant).

    Reproduces 002_302ebfc17d0870d4.txt, §1 MAP, MAP_eval.
    """
    qrels, run = eb.from_labels({"q1": [0, 2, 0, 1, 1]})
    value = mean(qrels, run, "AP(norm=retrieved)")
    assert value == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 3)
    assert value == pytest.approx(MAP_eval({"q1": [["d1", 0], ["d2", 2], ["d3", 0], ["d4", 1], ["d5", 1]]}))


@given(course_queries)
def test_ap_norm_retrieved_equals_the_courses_map_eval_on_random_judged_lists(labels: dict) -> None:
    """On random graded judged lists (each with a relevant doc) MAP_eval is the mean of AP(norm=retrieved).

    Reproduces 002_302ebfc17d0870d4.txt, §1 MAP, MAP_eval.
    """
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "AP(norm=retrieved)") == pytest.approx(MAP_eval(_course_data(labels)))


def test_average_precision_averages_precision_at_each_relevant_rank_over_r() -> None:
    """Relevant A, B, C; ranking A, X, B, Y, C, Z: AP = (1/1 + 2/3 + 3/5) / 3 = 0.756.

    Reproduces 003_2568de527c81821d.txt, §4 MAP, 例子.
    """
    qrels, run = eb.from_pairs({"not vegan": (["A", "X", "B", "Y", "C", "Z"], ["A", "B", "C"])})
    value = mean(qrels, run, "average_precision")
    assert value == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert f"{value:.3f}" == "0.756"


def test_graded_ap_weights_each_relevant_rank_by_grade_over_the_top_grade() -> None:
    """Ranking d1(2), d2(0), d3(1), d4(2) with R = 4 judged relevant (d5 graded 1 unretrieved):
    AP = (1/1 * 1.0 + 2/3 * 0.5 + 3/4 * 1.0) / 4 = 0.5208.

    Reproduces 004_a5f9bf9423829697.txt, MAP@10, 多级相关性权重 (rel=2: 1.0, rel=1: 0.5).
    """
    gt = {"d1": 2, "d2": 0, "d3": 1, "d4": 2, "d5": 1}
    pred = ["d1", "d2", "d3", "d4"]
    qrels, run = eb.from_pairs({"q": (pred, gt)})
    expected = (1 / 1 * 1.0 + 2 / 3 * 0.5 + 3 / 4 * 1.0) / 4
    assert mean(qrels, run, "AP(weights=graded)@10") == pytest.approx(expected)
    assert mean(qrels, run, "wmap@10") == pytest.approx(expected)
    assert expected == pytest.approx(average_precision(gt, pred, 10))
    assert mean(qrels, run, "map@10") == pytest.approx((1 + 2 / 3 + 3 / 4) / 4)  # unweighted differs


@given(st.lists(graded_case, min_size=1, max_size=4), st.integers(1, 12))
def test_graded_ap_with_max_grade_2_equals_the_standards_average_precision_on_random_data(cases: list, k: int) -> None:
    """On random 0/1/2 data the document's average_precision (weight rel/2) is AP(weights=graded,max_grade=2)@k.

    Reproduces 004_a5f9bf9423829697.txt, 代码实现示例, MAP@k 计算 (average_precision).
    """
    qrels, run = eb.from_pairs([(pred, gt) for gt, pred in cases])
    values = per_query(qrels, run, f"AP(weights=graded,max_grade=2)@{k}")
    assert values == pytest.approx({f"q{i}": average_precision(gt, pred, k) for i, (gt, pred) in enumerate(cases, 1)})
    if qrels.max_grade == 2:  # the default max grade is the top of the qrels' scale
        assert per_query(qrels, run, f"wmap@{k}") == pytest.approx(values)


# ----------------------------------------------------------------------------------------------------
# nDCG and DCG
# ----------------------------------------------------------------------------------------------------


def test_ndcg3_with_the_ideal_sorted_from_each_list_is_0871() -> None:
    """NDCG@3 with the ideal sorted from each list (linear gain, log2(i+1) discount) averages to 0.871.

    Reproduces 000_86ca3c6974105328.txt, §三.3, the simulated experiment data (q1-q3), NDCG@3.
    """
    qrels, run = eb.from_labels(PAPER_QUERIES)
    idcg = 1 + 1 / LOG2_3
    expected = ((1 + 1 / 2) / idcg + 1.0 + (1 / LOG2_3 + 1 / 2) / idcg) / 3
    value = mean(qrels, run, "nDCG(ideal=run)@3")
    assert value == pytest.approx(expected)
    assert value == pytest.approx(calculate_average_ndcg(PAPER_QUERIES))
    assert f"{value:.3f}" == "0.871"


def test_exp_and_linear_gains_agree_on_binary_labels() -> None:
    """The document's formula says 2^rel - 1 but its code uses rel: on 0/1 labels both give 0.871.

    Reproduces 000_86ca3c6974105328.txt, §二.2 formula (2^rel - 1) against §二.3 code (rel).
    """
    qrels, run = eb.from_labels(PAPER_QUERIES)
    assert mean(qrels, run, "nDCG(gain=exp,ideal=run)@3") == pytest.approx(mean(qrels, run, "nDCG(ideal=run)@3"))


def test_ndcg_ideal_run_sorts_the_whole_list_not_only_the_top_k() -> None:
    """On [0, 0, 1, 1] at k=3 the document sorts the whole list for the ideal; that is ideal=run, not ideal=qrels
    restricted to the top 3.

    Reproduces 000_86ca3c6974105328.txt, §二.3 calculate_ndcg, ideal = sorted(relevant_scores).
    """
    labels = {"q1": [0, 0, 1, 1]}
    qrels, run = eb.from_labels(labels)
    value = mean(qrels, run, "nDCG(ideal=run)@3")
    assert value == pytest.approx((1 / 2) / (1 + 1 / LOG2_3)) == pytest.approx(calculate_ndcg(labels["q1"], k=3))


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), label_lists(max_grade=3), min_size=1),
       st.integers(1, 6))
def test_ndcg_ideal_run_equals_the_papers_calculate_ndcg_on_random_labels(labels: dict, k: int) -> None:
    """On random graded label lists the document's calculate_ndcg(k) is nDCG(ideal=run)@k, query by query.

    Reproduces 000_86ca3c6974105328.txt, §二.3 calculate_ndcg.
    """
    qrels, run = eb.from_labels(labels)
    values = per_query(qrels, run, f"nDCG(ideal=run)@{k}")
    assert values == pytest.approx({q: calculate_ndcg(ls, k=k) for q, ls in labels.items()})


@pytest.mark.parametrize("k", [1, 3, 5])
def test_ndcg_with_linear_gain_takes_its_ideal_from_the_judgements(k: int) -> None:
    """Grades 3/1/2/0/3 in rank order, linear gain, ideal 3,3,2,1 from the judgements: 1.000, 0.786, 0.916.

    Reproduces 001_7752ff7570d0df9e.txt, NDCG@K, calculate_ndcg_at_k 使用示例.
    """
    qrels, run = eb.from_pairs([(FIVE, GUIDE_GRADES)])
    dcg = [3, 3 + 1 / LOG2_3, 3 + 1 / LOG2_3 + 2 / 2, 3 + 1 / LOG2_3 + 2 / 2 + 0 / math.log2(5),
           3 + 1 / LOG2_3 + 2 / 2 + 0 / math.log2(5) + 3 / math.log2(6)]
    idcg = [3, 3 + 3 / LOG2_3, 3 + 3 / LOG2_3 + 2 / 2, 3 + 3 / LOG2_3 + 2 / 2 + 1 / math.log2(5),
            3 + 3 / LOG2_3 + 2 / 2 + 1 / math.log2(5)]
    expected = dcg[k - 1] / idcg[k - 1]
    assert mean(qrels, run, f"ndcg@{k}") == pytest.approx(expected)
    assert expected == pytest.approx(calculate_ndcg_at_k(FIVE, GUIDE_GRADES, k))
    assert f"{expected:.3f}" == {1: "1.000", 3: "0.786", 5: "0.916"}[k]


def test_dcg_at_5_sums_linear_gains_over_log2_discounts() -> None:
    """The document's DCG@5 printout: 3 + 1/log2(3) + 2/2 + 0 + 3/log2(6) = 5.791.

    Reproduces 001_7752ff7570d0df9e.txt, NDCG@K, the DCG@5 printout.
    """
    qrels, run = eb.from_pairs([(FIVE, GUIDE_GRADES)])
    value = mean(qrels, run, "DCG@5")
    assert value == pytest.approx(calculate_dcg_at_k(FIVE, GUIDE_GRADES, 5))
    assert f"{value:.3f}" == "5.791"


def test_ndcg_at_5_of_a_graded_paper_search_is_0971() -> None:
    """Papers graded 3, 3, 0, 2, 1 in rank order: DCG 6.141 / IDCG 6.323 (ideal 3, 3, 2, 1, 0) = 0.971.

    Reproduces 001_7752ff7570d0df9e.txt, NDCG@K, RAG应用场景 (学术论文检索).
    """
    retrieved = ["paper1", "paper2", "paper3", "paper4", "paper5"]
    grades = {"paper1": 3, "paper2": 3, "paper3": 0, "paper4": 2, "paper5": 1}
    qrels, run = eb.from_pairs({"深度学习在自然语言处理中的应用": (retrieved, grades)})
    expected = (3 + 3 / LOG2_3 + 0 / 2 + 2 / math.log2(5) + 1 / math.log2(6)) / (
        3 + 3 / LOG2_3 + 2 / 2 + 1 / math.log2(5) + 0 / math.log2(6))
    value = mean(qrels, run, "NDCG@5")
    assert value == pytest.approx(expected) == pytest.approx(calculate_ndcg_at_k(retrieved, grades, 5))
    assert f"{value:.3f}" == "0.971"


def test_ndcg_with_the_jk_discount_reproduces_the_courses_ndcg_eval() -> None:
    """Grades 3, 2, 0, 1: DCG = 3 + 2/log2(2) + 0 + 1/log2(4) = 5.5, ideal 3 + 2 + 1/log2(3): 0.977;
    the usual log2(i+1) discount gives another number.

    Reproduces 002_302ebfc17d0870d4.txt, §3 NDCG, NDCG_eval.
    """
    qrels, run = eb.from_labels({"q1": [3, 2, 0, 1]})
    expected = (3 + 2 / 1 + 0 / LOG2_3 + 1 / 2) / (3 + 2 / 1 + 1 / LOG2_3 + 0 / 2)
    value = mean(qrels, run, "nDCG(discount=jk,ideal=run)")
    assert value == pytest.approx(expected)
    assert value == pytest.approx(NDCG_eval({"q1": [["d1", 3], ["d2", 2], ["d3", 0], ["d4", 1]]}))
    assert mean(qrels, run, "ndcg_jk(ideal=run)") == value
    assert mean(qrels, run, "nDCG(ideal=run)") != pytest.approx(value)


@given(course_queries)
def test_ndcg_jk_ideal_run_equals_the_courses_ndcg_eval_on_random_judged_lists(labels: dict) -> None:
    """On random graded judged lists NDCG_eval is the mean of nDCG(discount=jk,ideal=run).

    Reproduces 002_302ebfc17d0870d4.txt, §3 NDCG, NDCG_eval.
    """
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "nDCG(discount=jk,ideal=run)") == pytest.approx(NDCG_eval(_course_data(labels)))


def test_ndcg_at_10_with_exp_gain_on_llm_scores_is_0654() -> None:
    """Scores A 8, B 7, C 6, D 5; top 10 C, E, A, F, B, G, H, I, J, D; gain 2^s - 1, ideal from the judgements:
    DCG@10 = 63 + 255/2 + 127/log2(6) + 31/log2(11) = 248.6, IDCG@10 = 255 + 127/log2(3) + 63/2 + 31/log2(5)
    = 380.0, nDCG@10 = 0.654. (The document writes 248.7 and 380.3 from rounded terms; the ratio is the same.)

    Reproduces 003_2568de527c81821d.txt, §3 NDCG@K, 例子.
    """
    judgments = {"not vegan": {"A": 8.0, "B": 7.0, "C": 6.0, "D": 5.0}}
    retrieved = {"not vegan": ["C", "E", "A", "F", "B", "G", "H", "I", "J", "D"]}
    qrels, run = eb.from_graded(judgments, retrieved, min_relevance=7.0)
    dcg = 63 + 255 / 2 + 127 / math.log2(6) + 31 / math.log2(11)
    idcg = 255 + 127 / LOG2_3 + 63 / 2 + 31 / math.log2(5)
    res = eb.evaluate(qrels, run, ["nDCG(gain=exp)@10", "DCG(gain=exp)@10"])
    assert res["DCG(gain=exp)@10"] == pytest.approx(dcg)
    assert res["DCG(gain=exp)@10"] == pytest.approx(248.7, abs=0.15)
    assert idcg == pytest.approx(380.3, abs=0.35)
    assert res["nDCG(gain=exp)@10"] == pytest.approx(dcg / idcg)
    assert f"{res['nDCG(gain=exp)@10']:.3f}" == "0.654"


def test_ndcg_ignores_min_relevance_and_keeps_float_grades() -> None:
    """The threshold only binarises P/R/AP/RR/coverage; nDCG uses the raw float scores (7.5 stays 7.5).

    Reproduces 003_2568de527c81821d.txt, §3 NDCG@K, 解释 (raw LLM scores as gains).
    """
    judgments = {"q": {"a": 7.5, "b": 2.5}}
    qrels, run = eb.from_graded(judgments, {"q": ["b", "a"]}, min_relevance=7.0)
    expected = (2.5 + 7.5 / LOG2_3) / (7.5 + 2.5 / LOG2_3)
    assert mean(qrels, run, "nDCG") == pytest.approx(expected)
    assert mean(qrels, run, "nDCG", min_relevance=1) == pytest.approx(expected)


def test_exp_gain_maps_grade_2_to_3_and_grade_1_to_1() -> None:
    """DCG with gain 2^rel - 1: a grade-2 doc at rank 1 gains 3, a grade-1 doc gains 1, grade 0 nothing.

    Reproduces 004_a5f9bf9423829697.txt, NDCG@10, gain 2^rel - 1.
    """
    for grade, gain in ((2, 3.0), (1, 1.0), (0, 0.0)):
        qrels, run = eb.from_pairs({"q": (["a"], {"a": grade, "z": 1})})
        assert mean(qrels, run, "DCG(gain=exp)@1") == gain


def test_ndcg_burges_at_10_uses_exp_gains() -> None:
    """Ranking grades 1, 2, 0, 2 (of judged 2, 2, 1): DCG = 1 + 3/log2(3) + 0 + 3/log2(5), IDCG = 3 + 3/log2(3) + 1/2.

    Reproduces 004_a5f9bf9423829697.txt, NDCG@10.
    """
    qrels, run = eb.from_pairs({"q": (["a", "b", "c", "d"], {"a": 1, "b": 2, "c": 0, "d": 2})})
    expected = (1 + 3 / LOG2_3 + 3 / math.log2(5)) / (3 + 3 / LOG2_3 + 1 / 2)
    assert mean(qrels, run, "ndcg_burges@10") == pytest.approx(expected)
    assert mean(qrels, run, "nDCG(gain=exp)@10") == pytest.approx(expected)


# ----------------------------------------------------------------------------------------------------
# Hit rate and coverage
# ----------------------------------------------------------------------------------------------------


def test_hit_rate_is_the_share_of_queries_with_a_relevant_doc_in_the_top_k() -> None:
    """Two of three queries have a relevant doc in the top 3: Hit Rate@3 = 0.667.

    Reproduces 001_7752ff7570d0df9e.txt, Hit Rate@K, calculate_hit_rate_at_k 使用示例.
    """
    pairs = [(["doc1", "doc2", "doc3"], ["doc1", "doc4"]),
             (["doc2", "doc3", "doc4"], ["doc1", "doc5"]),
             (["doc5", "doc2", "doc3"], ["doc5", "doc6"])]
    qrels, run = eb.from_pairs(pairs)
    value = mean(qrels, run, "hit_rate@3")
    assert value == pytest.approx(2 / 3) == pytest.approx(calculate_hit_rate_at_k(pairs, k=3))
    assert f"{value:.3f}" == "0.667"


def test_hit_rate_at_3_counts_a_two_doc_ranking_that_holds_its_relevant_doc() -> None:
    """Password FAQ: 3 of 5 queries find their guide in the top 3 (lists of 2 docs): Hit Rate@3 = 60%.

    Reproduces 001_7752ff7570d0df9e.txt, Hit Rate@K, RAG应用场景 (密码重置 FAQ).
    """
    results = [(["密码重置指南", "账号安全"], ["密码重置指南"]),
               (["账号安全", "密码重置指南"], ["密码重置指南"]),
               (["密码重置指南", "找回密码"], ["密码重置指南"]),
               (["账号安全", "登录问题"], ["账号解锁流程"]),
               (["账号安全", "登录问题"], ["登录故障排查"])]
    qrels, run = eb.from_pairs(results)
    value = mean(qrels, run, "Success@3")
    assert value == pytest.approx(0.6) == pytest.approx(calculate_hit_rate_at_k(results, k=3))
    assert f"{value:.1%}" == "60.0%"


def test_coverage_at_10_counts_a_relevant_doc_at_rank_10_but_not_at_11() -> None:
    """10 queries, 8 with a relevant doc in their top 10: Coverage@10 = 0.8.

    Reproduces 003_2568de527c81821d.txt, §6 Coverage@K, 例子.
    """
    hit = [f"x{i}" for i in range(9)] + ["rel"]           # relevant at rank 10: a hit
    miss = [f"x{i}" for i in range(10)] + ["rel"]         # relevant at rank 11: no hit
    pairs = {f"q{i}": (hit if i < 8 else miss, ["rel"]) for i in range(10)}
    qrels, run = eb.from_pairs(pairs)
    assert mean(qrels, run, "coverage@10") == pytest.approx(0.8)
    assert mean(qrels, run, "coverage@11") == 1.0


# ----------------------------------------------------------------------------------------------------
# Several metrics at once (the guide's evaluator and functions)
# ----------------------------------------------------------------------------------------------------


def test_the_five_rag_metrics_of_two_graded_queries_match_the_hand_computation() -> None:
    """The document's RetrievalEvaluator data: P@5 0.4, R@5 (2/3 + 1)/2, MRR 1, nDCG@5 0.831, hit rate 1.

    Reproduces 001_7752ff7570d0df9e.txt, RetrievalEvaluator, its example data.
    """
    qrels, run = eb.from_records(GUIDE_RECORDS)
    res = eb.evaluate(qrels, run, GUIDE_EVALUATOR_METRICS)
    ndcg_q1 = (3 + 2 / 2) / (3 + 2 / LOG2_3 + 1 / 2)
    ndcg_q2 = (2 + 3 / 2) / (3 + 2 / LOG2_3)
    expected = {"precision@5": 0.4, "recall@5": (2 / 3 + 1) / 2, "mrr": 1.0,
                "ndcg@5": (ndcg_q1 + ndcg_q2) / 2, "hit_rate@5": 1.0}
    assert {m: res[m] for m in GUIDE_EVALUATOR_METRICS} == pytest.approx(expected)
    assert f"{res['ndcg@5']:.3f}" == "0.831"


@pytest.mark.slow
def test_the_guides_ranx_evaluator_gives_the_same_five_means() -> None:
    """The document's RetrievalEvaluator class (verbatim, defined here so ranx is imported only by this test)
    and evalbridge give the same five means.

    Reproduces 001_7752ff7570d0df9e.txt, RetrievalEvaluator (ranx).
    """
    pytest.importorskip("ranx")
    from ranx import Qrels, Run, evaluate

    class RetrievalEvaluator:
        """检索质量评估器"""

        def __init__(self):
            self.metrics = [
                'precision@5',
                'recall@5',
                'mrr',
                'ndcg@5',
                'hit_rate@5'
            ]

        def evaluate(self, queries_results):
            """
            评估检索质量

            Args:
                queries_results: {
                    'q1': {
                        'retrieved': ['doc1', 'doc2', ...],
                        'relevant': {'doc1': 3, 'doc2': 1, ...}
                    },
                    ...
                }

            Returns:
                dict: 评估结果
            """
            # 准备ranx格式数据
            qrels_dict = {}
            run_dict = {}

            for qid, data in queries_results.items():
                qrels_dict[qid] = data['relevant']
                run_dict[qid] = {
                    doc: 1.0 / (i + 1)
                    for i, doc in enumerate(data['retrieved'])
                }

            qrels = Qrels(qrels_dict)
            run = Run(run_dict)

            # 计算指标
            scores = evaluate(qrels, run, self.metrics)

            return scores

        def report(self, scores):
            """生成评估报告"""
            print("=" * 50)
            print("检索质量评估报告")
            print("=" * 50)

            for metric, score in scores.items():
                print(f"{metric:20s}: {score:.3f}")

            print("=" * 50)

    scores = RetrievalEvaluator().evaluate(GUIDE_RECORDS)
    res = eb.evaluate(*eb.from_records(GUIDE_RECORDS), GUIDE_EVALUATOR_METRICS)
    assert {m: res[m] for m in GUIDE_EVALUATOR_METRICS} == pytest.approx({m: float(v) for m, v in scores.items()})


@pytest.mark.slow
def test_ranx_ndcg_at_1_3_5_on_the_guides_example_equals_evalbridge() -> None:
    """The document's ranx nDCG@1/3/5 example (qrels without doc4) gives evalbridge's values.

    Reproduces 001_7752ff7570d0df9e.txt, NDCG@K, the ranx example.
    """
    pytest.importorskip("ranx")
    from ranx import Qrels, Run, evaluate

    qrels = {'q1': {'doc1': 3, 'doc2': 1, 'doc3': 2, 'doc5': 3}}
    run = {'q1': {'doc1': 0.9, 'doc2': 0.8, 'doc3': 0.7, 'doc4': 0.6, 'doc5': 0.5}}
    ranx_scores = evaluate(Qrels(qrels), Run(run), ['ndcg@1', 'ndcg@3', 'ndcg@5'])
    ours = eb.evaluate(qrels, run, ['ndcg@1', 'ndcg@3', 'ndcg@5'])
    assert {m: ours[m] for m in ranx_scores} == pytest.approx({m: float(v) for m, v in ranx_scores.items()})


@given(pairs_with_grades, st.integers(1, 8))
def test_the_guides_metric_functions_equal_the_reference_on_random_pairs(pairs: list, k: int) -> None:
    """The document's P@K, Recall@K, MRR, NDCG@K (linear, ideal from qrels) and Hit Rate@K match evalbridge.

    Reproduces 001_7752ff7570d0df9e.txt, the Python实现 of P@K, Recall@K, MRR, NDCG@K and Hit Rate@K.
    """
    qrels, run = eb.from_pairs(pairs)
    res = eb.evaluate(qrels, run, [f"P@{k}", f"R@{k}", "RR", f"nDCG@{k}", f"hit_rate@{k}"])
    relevant = [[d for d, g in grades.items() if g > 0] for _, grades in pairs]
    ids = [f"q{i}" for i in range(1, len(pairs) + 1)]
    oracle = {
        f"P@{k}": [calculate_precision_at_k(r, rel, k) for (r, _), rel in zip(pairs, relevant)],
        f"R@{k}": [calculate_recall_at_k(r, rel, k) for (r, _), rel in zip(pairs, relevant)],
        "RR": [calculate_mrr(r, rel) for (r, _), rel in zip(pairs, relevant)],
        f"nDCG@{k}": [calculate_ndcg_at_k(r, grades, k) for r, grades in pairs],
    }
    for metric, values in oracle.items():
        assert res.query(metric) == pytest.approx(dict(zip(ids, values)))
    assert res[f"hit_rate@{k}"] == pytest.approx(calculate_hit_rate_at_k(list(zip((r for r, _ in pairs), relevant)), k))
