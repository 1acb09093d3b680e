"""Every worked example with numbers in the user's documents (``../shared/seeds/*.txt``, in Chinese).

Each test is named after its seed. The expected values are worked out by hand in the
test (the arithmetic is written out), and where a seed ships Python functions they are
copied verbatim below and used as an independent oracle. Inputs go through the
adapters a RAG user would call (``from_labels``, ``from_pairs``, ``from_records``,
``from_graded``).

Numbers that are only results of the seeds' papers or projects cannot be recomputed
from anything in the seeds, so they are not tested: seed 000's HaluBench table (MAP@3
0.724 / 0.768 / 0.897, NDCG@3 0.732 / 0.783 / 0.915), seed 001's rating tables and
"industry benchmarks", seed 003's illustrative JSON output (precision@5 0.45, ...), and
seed 004's MedCorpus tables (NDCG@10 0.9044, MAP@10 0.5357, P@1 0.9279, ...).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalbridge as eb
from strategies import DOCS, judged_list, label_lists

# --------------------------------------------------------------------------------------------
# The seeds' own functions, copied verbatim (comments included): independent oracles.
# --------------------------------------------------------------------------------------------

# seed 000 ------------------------------------------------------------------------------------


def calculate_ap(relevant_indices, k=3):
    """计算单个查询的AP值（k=3为论文实验设定的截断长度）"""
    ap = 0
    relevant_count = 0
    for i in range(min(k, len(relevant_indices))):
        if relevant_indices[i] == 1:
            relevant_count += 1
            ap += relevant_count / (i + 1)  # 累加位置i的准确率
    return ap / max(1, sum(relevant_indices[:k]))  # 归一化处理

def calculate_map(query_results):
    """计算所有查询的MAP值
    query_results格式: {query_id: list(0/1), ...}，0表示不相关，1表示相关
    """
    ap_values = [calculate_ap(rels) for rels in query_results.values()]
    return sum(ap_values) / len(ap_values)


def calculate_dcg(relevant_scores, k=3):
    """计算DCG值（k=3为论文实验设定的截断长度）"""
    dcg = 0
    for i in range(min(k, len(relevant_scores))):
        rel = relevant_scores[i]
        dcg += rel / math.log2(i + 2)  # i从0开始，对应log2(i+1)的分母为i+2
    return dcg

def calculate_ndcg(relevant_scores, k=3):
    """计算NDCG值"""
    dcg = calculate_dcg(relevant_scores, k)
    ideal_relevant = sorted(relevant_scores, reverse=True)  # 理想排序
    idcg = calculate_dcg(ideal_relevant, k)
    return dcg / max(1e-9, idcg)  # 避免除零错误

def calculate_average_ndcg(query_results, k=3):
    """计算所有查询的平均NDCG值"""
    ndcg_values = [calculate_ndcg(rels, k) for rels in query_results.values()]
    return sum(ndcg_values) / len(ndcg_values)


# seed 001 ------------------------------------------------------------------------------------


def calculate_precision_at_k(retrieved_docs, relevant_docs, k):
    """
    计算Precision@K

    Args:
        retrieved_docs: 检索结果列表（按相关性排序）
        relevant_docs: 相关文档列表
        k: 评估的Top-K数量

    Returns:
        float: Precision@K分数 (0-1)
    """
    if k == 0 or len(retrieved_docs) == 0:
        return 0.0

    retrieved_k = set(retrieved_docs[:k])
    relevant_set = set(relevant_docs)

    hits = len(retrieved_k & relevant_set)
    return hits / k


def calculate_recall_at_k(retrieved_docs, relevant_docs, k):
    """
    计算Recall@K

    Args:
        retrieved_docs: 检索结果列表
        relevant_docs: 相关文档列表
        k: 评估的Top-K数量

    Returns:
        float: Recall@K分数 (0-1)
    """
    if len(relevant_docs) == 0:
        return 0.0

    retrieved_k = set(retrieved_docs[:k])
    relevant_set = set(relevant_docs)

    hits = len(retrieved_k & relevant_set)
    return hits / len(relevant_set)


def calculate_mrr(retrieved_docs, relevant_docs):
    """
    计算MRR (Mean Reciprocal Rank)

    Args:
        retrieved_docs: 检索结果列表
        relevant_docs: 相关文档列表

    Returns:
        float: MRR分数 (0-1)
    """
    relevant_set = set(relevant_docs)

    for i, doc in enumerate(retrieved_docs, 1):
        if doc in relevant_set:
            return 1.0 / i

    return 0.0

def calculate_mrr_batch(queries_results):
    """
    计算多个查询的平均MRR

    Args:
        queries_results: [(retrieved_docs, relevant_docs), ...]

    Returns:
        float: 平均MRR分数
    """
    if not queries_results:
        return 0.0

    mrr_sum = sum(
        calculate_mrr(retrieved, relevant)
        for retrieved, relevant in queries_results
    )

    return mrr_sum / len(queries_results)


def calculate_dcg_at_k(retrieved_docs, relevance_scores, k):
    """
    计算DCG@K

    Args:
        retrieved_docs: 检索结果列表
        relevance_scores: {doc_id: relevance_score}
        k: 评估的Top-K数量

    Returns:
        float: DCG@K分数
    """
    dcg = 0.0
    for i, doc in enumerate(retrieved_docs[:k], 1):
        rel = relevance_scores.get(doc, 0)
        dcg += rel / math.log2(i + 1)
    return dcg

def calculate_ndcg_at_k(retrieved_docs, relevance_scores, k):
    """
    计算NDCG@K

    Args:
        retrieved_docs: 检索结果列表
        relevance_scores: {doc_id: relevance_score}
        k: 评估的Top-K数量

    Returns:
        float: NDCG@K分数 (0-1)
    """
    # 计算实际DCG
    dcg = calculate_dcg_at_k(retrieved_docs, relevance_scores, k)

    # 计算理想DCG (按相关性排序)
    ideal_docs = sorted(
        relevance_scores.keys(),
        key=lambda x: relevance_scores[x],
        reverse=True
    )
    idcg = calculate_dcg_at_k(ideal_docs, relevance_scores, k)

    if idcg == 0:
        return 0.0

    return dcg / idcg


def calculate_hit_rate_at_k(queries_results, k):
    """
    计算Hit Rate@K

    Args:
        queries_results: [(retrieved_docs, relevant_docs), ...]
        k: 评估的Top-K数量

    Returns:
        float: Hit Rate@K分数 (0-1)
    """
    if not queries_results:
        return 0.0

    hits = 0
    for retrieved, relevant in queries_results:
        retrieved_k = set(retrieved[:k])
        relevant_set = set(relevant)

        if len(retrieved_k & relevant_set) > 0:
            hits += 1

    return hits / len(queries_results)


# seed 002 ------------------------------------------------------------------------------------


def generate_tweetid_gain(file_path):
    data_dict = {}
    with open(file_path, 'r', errors='ignore') as f:
        for line in f:
            result = line.strip().split(' ')    # 171 Q0 305345146675949568 0
            query_id = result[0]                # 查询id
            docu_id = result[2]                 # 文档id
            rel = int(result[3])                # 文档相关性
            if query_id not in data_dict:       # 为每个query建立列表，记录query查询回来的排序后的文档以及相关性
                data_dict[query_id] = []
            if rel > 0:                         # 记录文档id和相关性
                data_dict[query_id].append([docu_id,rel])
            else:
                data_dict[query_id].append([docu_id,0])
    return data_dict

# 平均精度均值
def MAP_eval(data_dict):
    MAP = 0
    for query_result in data_dict:
        data = data_dict[query_result]              # 一条查询对应的所有文档及其相关性 query_id[[doc_id,rel]，[doc_id,rel],.....]
        AP = 0                                      # 初始化每一条query的AP为0
        Rank = []                                   # Rank记录每一条query中相关文档出现的位置，方便用来计算AP
        for result in data:                         # [doc_id,rel]
            rel = result[1]
            if(rel > 0):
                index = data.index(result) + 1      # 记录该doc是第几个出现的
                Rank.append(index)
        # print(Rank)
        num_related_doc = len(Rank)                 # 总的相关文档数
        i = 1
        for index in Rank:
            precision = i / index                   # 计算精度
            # print("precision= ",precision)
            AP += precision
            i += 1
        AP /= num_related_doc                       # 计算AP
        # print(AP)
        MAP += AP
    MAP = MAP / len(data_dict)                      # 计算所有query的AP,得到MAP
    return MAP

# 平均倒数排名,对比MAP，当返回的相关结果较少时，使用它更加合适
def MRR_eval(data_dict):
    MRR = 0
    for query_id in data_dict:                      # query_id
        data = data_dict[query_id]                  # 一条查询对应的所有文档及其相关性 query_id[[doc_id,rel]，[doc_id,rel],.....]
        RR = 0                                      # 初始化每一条query的RR为0
        for result in data:                         # [doc_id,rel]
            rel = result[1]
            if(rel > 0):
                index = data.index(result) + 1      # 记录该doc是第几个出现的相关文档
                RR = 1 / index                      # 计算RR
                MRR += RR
                break

    MRR = MRR / len(data_dict)                      # 计算所有query的RR,得到MRR
    return MRR

# 归一化折损累积增益,
def NDCG_eval(data_dict):
    NDCG = 0
    for query_id in data_dict:
        data = data_dict[query_id]                                      # 一条查询对应的所有文档及其相关性 query_id[[doc_id,rel]，[doc_id,rel],.....]
        CG = 0                                                          # 初始化每一条query的CG为0
        DCG = 0                                                         # 初始化每一条query的CG为0
        IDCG = 0                                                        # 初始化每一条query的IDCG为0
        # 计算DCG
        i = 1
        for result in data:                                             # [doc_id,rel]
            rel = result[1]
            CG +=  rel                                                  # CGn = sum(rel(i))
            if i == 1:
                DCG = rel                                               # DCGn = rel1 + sum(2-n)rel(i) / log2(i)
            else:
                DCG += (rel / math.log2(i))
            i += 1

        # 计算IDCG
        sorted_data = sorted(data, key = lambda x:x[1],reverse = True)  # 按照文档评分rel排序
        i = 1
        for result in sorted_data:                                      # [doc_id,rel]
            rel = result[1]
            # IDCG += ((2 ** rel - 1) / math.log2(i + 1))
            if i == 1:
                IDCG = rel                                              # IDCGn = rel1 + sum(2-n)rel(i) / log2(i)
            else:
                IDCG += (rel / math.log2(i))
            i += 1

        NDCG += DCG / IDCG

    NDCG = NDCG / len(data_dict)                                        # 计算NDCG
    return NDCG


# seed 004 ------------------------------------------------------------------------------------


def average_precision(gt_rels, pred_docs, k):
    """
    计算 Average Precision@k (考虑多级相关性 0/1/2)

    多级相关性权重设置（统一标准）:
    - rel=2 权重: 1.0
    - rel=1 权重: 0.5
    - rel=0 权重: 0.0
    """
    score = 0.0
    num_relevant = 0

    for i, doc in enumerate(pred_docs[:k], 1):
        rel = gt_rels.get(doc, 0)
        if rel > 0:  # 相关文档
            num_relevant += 1
            precision_at_i = num_relevant / i
            # 按相关性等级加权: rel=2权重1.0, rel=1权重0.5
            score += precision_at_i * (rel / 2.0)

    # 归一化：除以总相关文档数
    total_relevant = sum(1 for r in gt_rels.values() if r > 0)
    return score / total_relevant if total_relevant > 0 else 0.0


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------

LOG2_3 = math.log2(3)


def mean(qrels, run, metric: str, **kwargs) -> float:
    """The mean of one metric from the reference backend."""
    return eb.evaluate(qrels, run, metric, **kwargs)[metric]


def per_query(qrels, run, metric: str, **kwargs) -> dict[str, float]:
    """query id -> value of one metric from the reference backend."""
    return eb.evaluate(qrels, run, metric, **kwargs).query(metric)


# --------------------------------------------------------------------------------------------
# seed 000: MAP@3 and NDCG@3 on three binary label lists (hybrid retrieval paper)
# --------------------------------------------------------------------------------------------

SEED000_QUERIES = {"q1": [1, 0, 1], "q2": [1, 1, 0], "q3": [0, 1, 1]}


def test_seed000_map3_relevant_retrieved_norm_is_29_over_36() -> None:
    """MAP@3 with AP divided by the relevant docs in the top 3: (5/6 + 1 + 7/12) / 3 = 29/36 = 0.806."""
    qrels, run = eb.from_labels(SEED000_QUERIES)
    expected = ((1 / 1 + 2 / 3) / 2 + (1 / 1 + 2 / 2) / 2 + (1 / 2 + 2 / 3) / 2) / 3
    assert expected == pytest.approx(29 / 36)
    value = mean(qrels, run, "AP(norm=retrieved)@3")
    assert value == pytest.approx(expected)
    assert value == pytest.approx(calculate_map(SEED000_QUERIES))
    assert f"{value:.3f}" == "0.806"


def test_seed000_ndcg3_ideal_from_list_is_0871() -> None:
    """NDCG@3 with the ideal sorted from each list (linear gain, log2(i+1) discount) averages to 0.871."""
    qrels, run = eb.from_labels(SEED000_QUERIES)
    idcg = 1 + 1 / LOG2_3
    expected = ((1 + 1 / 2) / idcg + 1.0 + (1 / LOG2_3 + 1 / 2) / idcg) / 3
    value = mean(qrels, run, "nDCG(ideal=run)@3")
    assert value == pytest.approx(expected)
    assert value == pytest.approx(calculate_average_ndcg(SEED000_QUERIES))
    assert f"{value:.3f}" == "0.871"


def test_seed000_binary_labels_make_exp_and_linear_gain_equal() -> None:
    """The seed's formula says 2^rel - 1 but its code uses rel: on 0/1 labels both give 0.871."""
    qrels, run = eb.from_labels(SEED000_QUERIES)
    assert mean(qrels, run, "nDCG(gain=exp,ideal=run)@3") == pytest.approx(mean(qrels, run, "nDCG(ideal=run)@3"))


def test_seed000_norm_r_and_norm_retrieved_differ_on_a_longer_list() -> None:
    """On [1, 0, 1, 0, 1] at k=3: /relevant retrieved = (1 + 2/3)/2 = 0.833 (the seed), /R = (1 + 2/3)/3 = 0.556."""
    labels = {"q1": [1, 0, 1, 0, 1]}
    qrels, run = eb.from_labels(labels)
    by_retrieved = mean(qrels, run, "AP(norm=retrieved)@3")
    by_r = mean(qrels, run, "AP(norm=R)@3")
    assert by_retrieved == pytest.approx((1 + 2 / 3) / 2) == pytest.approx(calculate_ap(labels["q1"], k=3))
    assert by_r == pytest.approx((1 + 2 / 3) / 3)
    assert by_r == mean(qrels, run, "AP@3") == mean(qrels, run, "map@3")  # norm=R is the default (trec_eval)


def test_seed000_ideal_from_list_and_from_qrels_differ_on_a_longer_list() -> None:
    """On [0, 0, 1, 1] at k=3 the seed sorts the whole list for the ideal; that is ideal=run, not ideal=qrels
    restricted to the top 3."""
    labels = {"q1": [0, 0, 1, 1]}
    qrels, run = eb.from_labels(labels)
    value = mean(qrels, run, "nDCG(ideal=run)@3")
    assert value == pytest.approx((1 / 2) / (1 + 1 / LOG2_3)) == pytest.approx(calculate_ndcg(labels["q1"], k=3))


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), label_lists(max_grade=1), min_size=1),
       st.integers(1, 6))
def test_seed000_calculate_ap_agrees_with_ap_norm_retrieved(labels: dict, k: int) -> None:
    """On random 0/1 label lists the seed's calculate_ap(k) is AP(norm=retrieved)@k, query by query."""
    qrels, run = eb.from_labels(labels)
    values = per_query(qrels, run, f"AP(norm=retrieved)@{k}")
    assert values == pytest.approx({q: calculate_ap(ls, k=k) for q, ls in labels.items()})


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), label_lists(max_grade=3), min_size=1),
       st.integers(1, 6))
def test_seed000_calculate_ndcg_agrees_with_ndcg_ideal_run(labels: dict, k: int) -> None:
    """On random graded label lists the seed's calculate_ndcg(k) is nDCG(ideal=run)@k, query by query."""
    qrels, run = eb.from_labels(labels)
    values = per_query(qrels, run, f"nDCG(ideal=run)@{k}")
    assert values == pytest.approx({q: calculate_ndcg(ls, k=k) for q, ls in labels.items()})


# --------------------------------------------------------------------------------------------
# seed 001: P@K, Recall@K, MRR, NDCG@K, Hit Rate in a RAG guide
# --------------------------------------------------------------------------------------------

FIVE = ["doc1", "doc2", "doc3", "doc4", "doc5"]


def test_seed001_precision_at_5_is_04_and_recall_at_5_is_05() -> None:
    """doc1..doc5 against relevant doc1, doc3, doc6, doc7: P@5 = 2/5 = 0.4, Recall@5 = 2/4 = 0.5."""
    qrels, run = eb.from_pairs([(FIVE, ["doc1", "doc3", "doc6", "doc7"])])
    assert mean(qrels, run, "P@5") == 0.4
    assert mean(qrels, run, "Recall@5") == 0.5


@pytest.mark.parametrize(("k", "expected"), [(1, 1 / 1), (3, 2 / 3), (5, 2 / 5)])
def test_seed001_precision_at_1_3_5_is_1_0667_04(k: int, expected: float) -> None:
    """doc1..doc5 against doc1, doc3, doc6: P@1 = 1, P@3 = 2/3, P@5 = 2/5, as the seed's function prints."""
    relevant = ["doc1", "doc3", "doc6"]
    qrels, run = eb.from_pairs([(FIVE, relevant)])
    assert mean(qrels, run, f"P@{k}") == pytest.approx(expected)
    assert expected == pytest.approx(calculate_precision_at_k(FIVE, relevant, k))


@pytest.mark.parametrize(("k", "expected"), [(1, 1 / 5), (3, 2 / 5), (5, 2 / 5)])
def test_seed001_recall_at_1_3_5_is_02_04_04(k: int, expected: float) -> None:
    """doc1..doc3 against five relevant docs: Recall@1 = 0.2, @3 = 0.4, @5 = 0.4 (only 3 retrieved)."""
    retrieved, relevant = ["doc1", "doc2", "doc3"], ["doc1", "doc3", "doc6", "doc7", "doc8"]
    qrels, run = eb.from_pairs([(retrieved, relevant)])
    assert mean(qrels, run, f"R@{k}") == pytest.approx(expected)
    assert expected == pytest.approx(calculate_recall_at_k(retrieved, relevant, k))


def test_seed001_annual_leave_precision_at_5_is_04() -> None:
    """Enterprise KB: 2 of the 5 retrieved docs are relevant, P@5 = 0.4 (60% of the context is noise)."""
    retrieved = ["HR手册第3章", "员工福利政策", "公司简介", "薪资制度", "考勤制度"]
    relevant = ["HR手册第3章", "员工福利政策", "假期管理规定"]
    qrels, run = eb.from_pairs({"年假政策": (retrieved, relevant)})
    assert mean(qrels, run, "P@5") == 0.4 == calculate_precision_at_k(retrieved, relevant, 5)


def test_seed001_redis_recall_at_5_is_025() -> None:
    """Tech docs: 2 of 8 relevant Redis docs in the top 5, Recall@5 = 0.25."""
    relevant = ["Redis配置指南", "Redis性能优化", "Redis集群配置", "Redis持久化", "Redis安全配置", "Redis监控",
                "Redis故障排查", "Redis最佳实践"]
    retrieved = ["Redis配置指南", "Redis性能优化", "MySQL配置", "Nginx配置", "Docker配置"]
    qrels, run = eb.from_pairs([(retrieved, relevant)])
    assert mean(qrels, run, "recall@5") == 0.25 == calculate_recall_at_k(retrieved, relevant, 5)


def test_seed001_single_query_mrr_is_one_third() -> None:
    """doc2, doc3, doc1, doc4 with doc1 relevant (rank 3): RR = 1/3 = 0.333."""
    retrieved, relevant = ["doc2", "doc3", "doc1", "doc4"], ["doc1", "doc5"]
    qrels, run = eb.from_pairs([(retrieved, relevant)])
    assert mean(qrels, run, "mrr") == pytest.approx(1 / 3) == pytest.approx(calculate_mrr(retrieved, relevant))


SEED001_MRR_BATCH = [
    (["doc1", "doc2", "doc3"], ["doc1", "doc4"]),  # MRR = 1.0
    (["doc2", "doc3", "doc1"], ["doc1", "doc4"]),  # MRR = 0.33
    (["doc2", "doc3", "doc4"], ["doc1", "doc5"]),  # MRR = 0.0
]


def test_seed001_batch_mrr_is_0444() -> None:
    """Three queries with RR 1, 1/3 and 0: MRR = (1 + 1/3 + 0) / 3 = 0.444."""
    qrels, run = eb.from_pairs(SEED001_MRR_BATCH)
    assert per_query(qrels, run, "RR") == pytest.approx({"q1": 1.0, "q2": 1 / 3, "q3": 0.0})
    value = mean(qrels, run, "MRR")
    assert value == pytest.approx(4 / 9) == pytest.approx(calculate_mrr_batch(SEED001_MRR_BATCH))
    assert f"{value:.3f}" == "0.444"


def test_seed001_customer_service_mrr_is_044() -> None:
    """Returns FAQ: the guide is at rank 1, rank 3, and missing: average MRR prints as 0.44."""
    relevant = ["退货流程指南"]
    pairs = {"如何退货？": (["退货流程指南", "售后政策", "物流信息"], relevant),
             "退货流程是什么？": (["售后政策", "物流信息", "退货流程指南"], relevant),
             "怎么申请退款？": (["售后政策", "物流信息", "联系客服"], relevant)}
    qrels, run = eb.from_pairs(pairs)
    value = mean(qrels, run, "mrr")
    assert value == pytest.approx((1.0 + 1 / 3 + 0.0) / 3)
    assert f"{value:.2f}" == "0.44"


def test_seed001_hit_rate_at_3_is_0667() -> None:
    """Two of three queries have a relevant doc in the top 3: Hit Rate@3 = 0.667."""
    pairs = [(["doc1", "doc2", "doc3"], ["doc1", "doc4"]),
             (["doc2", "doc3", "doc4"], ["doc1", "doc5"]),
             (["doc5", "doc2", "doc3"], ["doc5", "doc6"])]
    qrels, run = eb.from_pairs(pairs)
    value = mean(qrels, run, "hit_rate@3")
    assert value == pytest.approx(2 / 3) == pytest.approx(calculate_hit_rate_at_k(pairs, k=3))
    assert f"{value:.3f}" == "0.667"


def test_seed001_faq_hit_rate_at_3_is_60_percent() -> None:
    """Password FAQ: 3 of 5 queries find their guide in the top 3 (lists of 2 docs): Hit Rate@3 = 60%."""
    results = [(["密码重置指南", "账号安全"], ["密码重置指南"]),
               (["账号安全", "密码重置指南"], ["密码重置指南"]),
               (["密码重置指南", "找回密码"], ["密码重置指南"]),
               (["账号安全", "登录问题"], ["账号解锁流程"]),
               (["账号安全", "登录问题"], ["登录故障排查"])]
    qrels, run = eb.from_pairs(results)
    value = mean(qrels, run, "Success@3")
    assert value == pytest.approx(0.6) == pytest.approx(calculate_hit_rate_at_k(results, k=3))
    assert f"{value:.1%}" == "60.0%"


SEED001_GRADES = {"doc1": 3, "doc2": 1, "doc3": 2, "doc4": 0, "doc5": 3}


@pytest.mark.parametrize("k", [1, 3, 5])
def test_seed001_ndcg_linear_gain_ideal_from_qrels_at_1_3_5(k: int) -> None:
    """Grades 3/1/2/0/3 in rank order, linear gain, ideal 3,3,2,1 from the judgements: 1.000, 0.786, 0.916."""
    qrels, run = eb.from_pairs([(FIVE, SEED001_GRADES)])
    dcg = [3, 3 + 1 / LOG2_3, 3 + 1 / LOG2_3 + 2 / 2, 3 + 1 / LOG2_3 + 2 / 2 + 0 / math.log2(5),
           3 + 1 / LOG2_3 + 2 / 2 + 0 / math.log2(5) + 3 / math.log2(6)]
    idcg = [3, 3 + 3 / LOG2_3, 3 + 3 / LOG2_3 + 2 / 2, 3 + 3 / LOG2_3 + 2 / 2 + 1 / math.log2(5),
            3 + 3 / LOG2_3 + 2 / 2 + 1 / math.log2(5)]
    expected = dcg[k - 1] / idcg[k - 1]
    assert mean(qrels, run, f"ndcg@{k}") == pytest.approx(expected)
    assert expected == pytest.approx(calculate_ndcg_at_k(FIVE, SEED001_GRADES, k))
    assert f"{expected:.3f}" == {1: "1.000", 3: "0.786", 5: "0.916"}[k]


def test_seed001_dcg_at_5_is_5791() -> None:
    """The seed's DCG@5 printout: 3 + 1/log2(3) + 2/2 + 0 + 3/log2(6) = 5.791."""
    qrels, run = eb.from_pairs([(FIVE, SEED001_GRADES)])
    value = mean(qrels, run, "DCG@5")
    assert value == pytest.approx(calculate_dcg_at_k(FIVE, SEED001_GRADES, 5))
    assert f"{value:.3f}" == "5.791"


def test_seed001_paper_ndcg_at_5_is_0971() -> None:
    """Papers graded 3, 3, 0, 2, 1 in rank order: DCG 6.141 / IDCG 6.323 (ideal 3, 3, 2, 1, 0) = 0.971."""
    retrieved = ["paper1", "paper2", "paper3", "paper4", "paper5"]
    grades = {"paper1": 3, "paper2": 3, "paper3": 0, "paper4": 2, "paper5": 1}
    qrels, run = eb.from_pairs({"深度学习在自然语言处理中的应用": (retrieved, grades)})
    expected = (3 + 3 / LOG2_3 + 0 / 2 + 2 / math.log2(5) + 1 / math.log2(6)) / (
        3 + 3 / LOG2_3 + 2 / 2 + 1 / math.log2(5) + 0 / math.log2(6))
    value = mean(qrels, run, "NDCG@5")
    assert value == pytest.approx(expected) == pytest.approx(calculate_ndcg_at_k(retrieved, grades, 5))
    assert f"{value:.3f}" == "0.971"


SEED001_RECORDS = {
    'q1': {
        'retrieved': ['doc1', 'doc2', 'doc3', 'doc4', 'doc5'],
        'relevant': {'doc1': 3, 'doc3': 2, 'doc6': 1}
    },
    'q2': {
        'retrieved': ['doc2', 'doc3', 'doc1', 'doc5', 'doc4'],
        'relevant': {'doc1': 3, 'doc2': 2}
    }
}
SEED001_EVALUATOR_METRICS = ['precision@5', 'recall@5', 'mrr', 'ndcg@5', 'hit_rate@5']


def test_seed001_retrieval_evaluator_values_by_hand() -> None:
    """The seed's RetrievalEvaluator data: P@5 0.4, R@5 (2/3 + 1)/2, MRR 1, nDCG@5 0.831, hit rate 1."""
    qrels, run = eb.from_records(SEED001_RECORDS)
    res = eb.evaluate(qrels, run, SEED001_EVALUATOR_METRICS)
    ndcg_q1 = (3 + 2 / 2) / (3 + 2 / LOG2_3 + 1 / 2)
    ndcg_q2 = (2 + 3 / 2) / (3 + 2 / LOG2_3)
    expected = {"precision@5": 0.4, "recall@5": (2 / 3 + 1) / 2, "mrr": 1.0,
                "ndcg@5": (ndcg_q1 + ndcg_q2) / 2, "hit_rate@5": 1.0}
    assert {m: res[m] for m in SEED001_EVALUATOR_METRICS} == pytest.approx(expected)
    assert f"{res['ndcg@5']:.3f}" == "0.831"


@pytest.mark.slow
def test_seed001_retrieval_evaluator_agrees_with_ranx() -> None:
    """The seed's RetrievalEvaluator class (verbatim, defined here so ranx is imported only by this test)
    and evalbridge give the same five means."""
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

    scores = RetrievalEvaluator().evaluate(SEED001_RECORDS)
    res = eb.evaluate(*eb.from_records(SEED001_RECORDS), SEED001_EVALUATOR_METRICS)
    assert {m: res[m] for m in SEED001_EVALUATOR_METRICS} == pytest.approx({m: float(v) for m, v in scores.items()})


@pytest.mark.slow
def test_seed001_ranx_ndcg_example_agrees() -> None:
    """The seed's ranx nDCG@1/3/5 example (qrels without doc4) gives evalbridge's values."""
    pytest.importorskip("ranx")
    from ranx import Qrels, Run, evaluate

    qrels = {'q1': {'doc1': 3, 'doc2': 1, 'doc3': 2, 'doc5': 3}}
    run = {'q1': {'doc1': 0.9, 'doc2': 0.8, 'doc3': 0.7, 'doc4': 0.6, 'doc5': 0.5}}
    ranx_scores = evaluate(Qrels(qrels), Run(run), ['ndcg@1', 'ndcg@3', 'ndcg@5'])
    ours = eb.evaluate(qrels, run, ['ndcg@1', 'ndcg@3', 'ndcg@5'])
    assert {m: ours[m] for m in ranx_scores} == pytest.approx({m: float(v) for m, v in ranx_scores.items()})


pairs_with_grades = st.lists(
    st.tuples(st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=10),
              st.dictionaries(st.sampled_from(DOCS), st.integers(0, 3), max_size=8)),
    min_size=1, max_size=4)


@given(pairs_with_grades, st.integers(1, 8))
def test_seed001_functions_agree_with_reference_on_random_pairs(pairs: list, k: int) -> None:
    """The seed's P@K, Recall@K, MRR, NDCG@K (linear, ideal from qrels) and Hit Rate@K match evalbridge."""
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


# --------------------------------------------------------------------------------------------
# seed 002: MAP / MRR / NDCG of a course experiment over judged ranked lists
# --------------------------------------------------------------------------------------------


def test_seed002_mrr_is_01125() -> None:
    """First relevant at rank 4 (q1) and 5 (q4), none for q2 and q3: (1/4 + 0 + 0 + 1/5) / 4 = 0.1125."""
    labels = {"q1": [0, 0, 0, 1], "q2": [0, 0, 0, 0, 0], "q3": [0, 0, 0], "q4": [0, 0, 0, 0, 1]}
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "MRR") == pytest.approx(0.1125)
    data = {q: [[f"d{i}", g] for i, g in enumerate(ls, 1)] for q, ls in labels.items()}
    assert MRR_eval(data) == pytest.approx(0.1125)


def test_seed002_mrr_counts_queries_that_retrieved_nothing_only_with_missing_zero() -> None:
    """q2 and q3 "retrieved no documents": scored 0 they give 0.1125; left out of the mean, 0.225."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}, "q4": {"e": 1}}
    run = {"q1": {"x1": 4, "x2": 3, "x3": 2, "a": 1}, "q4": {"x1": 5, "x2": 4, "x3": 3, "x4": 2, "e": 1}}
    assert mean(qrels, run, "RR", missing_queries="zero") == pytest.approx(0.1125)
    assert mean(qrels, run, "RR", missing_queries="drop") == pytest.approx(0.225)


def test_seed002_ndcg_eval_uses_the_jarvelin_kekalainen_discount() -> None:
    """Grades 3, 2, 0, 1: DCG = 3 + 2/log2(2) + 0 + 1/log2(4) = 5.5, ideal 3 + 2 + 1/log2(3): 0.977;
    the usual log2(i+1) discount gives another number."""
    qrels, run = eb.from_labels({"q1": [3, 2, 0, 1]})
    expected = (3 + 2 / 1 + 0 / LOG2_3 + 1 / 2) / (3 + 2 / 1 + 1 / LOG2_3 + 0 / 2)
    value = mean(qrels, run, "nDCG(discount=jk,ideal=run)")
    assert value == pytest.approx(expected)
    assert value == pytest.approx(NDCG_eval({"q1": [["d1", 3], ["d2", 2], ["d3", 0], ["d4", 1]]}))
    assert mean(qrels, run, "ndcg_jk(ideal=run)") == value
    assert mean(qrels, run, "nDCG(ideal=run)") != pytest.approx(value)


def test_seed002_map_eval_divides_by_the_relevant_docs_retrieved() -> None:
    """Grades 0, 2, 0, 1, 1: AP = (1/2 + 2/4 + 3/5) / 3 = 0.5333 (every grade > 0 relevant)."""
    qrels, run = eb.from_labels({"q1": [0, 2, 0, 1, 1]})
    value = mean(qrels, run, "AP(norm=retrieved)")
    assert value == pytest.approx((1 / 2 + 2 / 4 + 3 / 5) / 3)
    assert value == pytest.approx(MAP_eval({"q1": [["d1", 0], ["d2", 2], ["d3", 0], ["d4", 1], ["d5", 1]]}))


def _seed002_data(labels: dict) -> dict:
    """Seed 002's data_dict shape: query id -> [[doc id, rel], ...] in rank order."""
    return {q: [[f"d{i}", g] for i, g in enumerate(ls, 1)] for q, ls in labels.items()}


seed002_queries = st.dictionaries(st.sampled_from(["171", "172", "173", "174"]), judged_list(max_grade=3),
                                  min_size=1)


@given(seed002_queries)
def test_seed002_map_eval_agrees_with_ap_norm_retrieved(labels: dict) -> None:
    """On random graded judged lists (each with a relevant doc) MAP_eval is the mean of AP(norm=retrieved)."""
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "AP(norm=retrieved)") == pytest.approx(MAP_eval(_seed002_data(labels)))


@given(seed002_queries)
def test_seed002_ndcg_eval_agrees_with_jk_discount_ideal_from_list(labels: dict) -> None:
    """On random graded judged lists NDCG_eval is the mean of nDCG(discount=jk,ideal=run)."""
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "nDCG(discount=jk,ideal=run)") == pytest.approx(NDCG_eval(_seed002_data(labels)))


@given(st.dictionaries(st.sampled_from(["171", "172", "173"]), judged_list(need_relevant=False), min_size=1))
def test_seed002_mrr_eval_agrees_with_rr(labels: dict) -> None:
    """On random judged lists, with or without a relevant doc, MRR_eval is the mean of RR."""
    qrels, run = eb.from_labels(labels)
    assert mean(qrels, run, "RR") == pytest.approx(MRR_eval(_seed002_data(labels)))


def test_seed002_judged_list_file_gives_the_seed_numbers(tmp_path) -> None:  # noqa: ANN001
    """A ``qid Q0 docid rel`` file read by read_judged_list gives MAP_eval, MRR_eval and NDCG_eval's numbers."""
    lines = ["171 Q0 305345146675949568 0", "171 Q0 305345146675949569 2", "171 Q0 305345146675949570 1",
             "171 Q0 305345146675949571 0", "172 Q0 305345146675949600 1", "172 Q0 305345146675949601 0",
             "173 Q0 305345146675949700 0", "173 Q0 305345146675949701 0", "173 Q0 305345146675949702 3",
             "173 Q0 305345146675949703 -1"]
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = generate_tweetid_gain(str(path))
    qrels, run = eb.read_judged_list(path)
    res = eb.evaluate(qrels, run, ["AP(norm=retrieved)", "RR", "nDCG(discount=jk,ideal=run)"])
    assert res["AP(norm=retrieved)"] == pytest.approx(MAP_eval(data))
    assert res["RR"] == pytest.approx(MRR_eval(data))
    assert res["nDCG(discount=jk,ideal=run)"] == pytest.approx(NDCG_eval(data))


# --------------------------------------------------------------------------------------------
# seed 003: metrics of an evaluate.py over LLM scores 0-10 with a min_relevance threshold
# --------------------------------------------------------------------------------------------

LETTERS = list("ABCDEFGHIJ")


def test_seed003_precision_at_10_is_04() -> None:
    """Top 10 = A..J, LLM score >= 7 for A, C, E, G only: P@10 = 4/10 = 0.4."""
    judgments = {"not vegan": {"A": 9.0, "B": 6.9, "C": 8.0, "D": 3.0, "E": 7.0, "G": 7.5, "Z": 2.0}}
    qrels, run = eb.from_graded(judgments, {"not vegan": LETTERS}, min_relevance=7.0)
    assert mean(qrels, run, "P@10") == pytest.approx(0.4)


def test_seed003_precision_at_5_is_04_when_a_and_c_are_the_top5_hits() -> None:
    """P@5 = 2/5 = 0.4 "assuming A and C" are the relevant docs in the top 5 (G and I lower down)."""
    qrels, run = eb.from_pairs({"not vegan": (LETTERS, ["A", "C", "G", "I"])})
    assert mean(qrels, run, "P@5") == pytest.approx(0.4)
    assert mean(qrels, run, "P@10") == pytest.approx(0.4)


def test_seed003_literal_example_has_e_at_rank_5_so_precision_at_5_is_06() -> None:
    """Taken literally (A..J with A, C, E, G relevant), E is 5th, so P@5 is 3/5: the seed's 0.4 needs its assumption."""
    qrels, run = eb.from_pairs({"not vegan": (LETTERS, ["A", "C", "E", "G"])})
    assert mean(qrels, run, "P@5") == pytest.approx(0.6)


def test_seed003_recall_at_10_is_06() -> None:
    """Relevant A..E, top 10 = A, C, E, F..L: 3 of 5 found, Recall@10 = 0.6."""
    retrieved = ["A", "C", "E", "F", "G", "H", "I", "J", "K", "L"]
    qrels, run = eb.from_pairs({"not vegan": (retrieved, ["A", "B", "C", "D", "E"])})
    assert mean(qrels, run, "Recall@10") == pytest.approx(0.6)


def test_seed003_ndcg10_exp_gain_on_llm_scores_is_0654() -> None:
    """Scores A 8, B 7, C 6, D 5; top 10 C, E, A, F, B, G, H, I, J, D; gain 2^s - 1, ideal from the judgements:
    DCG@10 = 63 + 255/2 + 127/log2(6) + 31/log2(11) = 248.6, IDCG@10 = 255 + 127/log2(3) + 63/2 + 31/log2(5)
    = 380.0, nDCG@10 = 0.654. (The seed writes 248.7 and 380.3 from rounded terms; the ratio is the same.)"""
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


def test_seed003_ndcg_ignores_min_relevance_and_keeps_float_grades() -> None:
    """The threshold only binarises P/R/AP/RR/coverage; nDCG uses the raw float scores (7.5 stays 7.5)."""
    judgments = {"q": {"a": 7.5, "b": 2.5}}
    qrels, run = eb.from_graded(judgments, {"q": ["b", "a"]}, min_relevance=7.0)
    expected = (2.5 + 7.5 / LOG2_3) / (7.5 + 2.5 / LOG2_3)
    assert mean(qrels, run, "nDCG") == pytest.approx(expected)
    assert mean(qrels, run, "nDCG", min_relevance=1) == pytest.approx(expected)


def test_seed003_average_precision_is_0756() -> None:
    """Relevant A, B, C; ranking A, X, B, Y, C, Z: AP = (1/1 + 2/3 + 3/5) / 3 = 0.756."""
    qrels, run = eb.from_pairs({"not vegan": (["A", "X", "B", "Y", "C", "Z"], ["A", "B", "C"])})
    value = mean(qrels, run, "average_precision")
    assert value == pytest.approx((1 + 2 / 3 + 3 / 5) / 3)
    assert f"{value:.3f}" == "0.756"


def test_seed003_mrr_is_0444() -> None:
    """First relevant at rank 3, at rank 1, and none: MRR = (0.333 + 1 + 0) / 3 = 0.444."""
    pairs = [(["x", "y", "a"], ["a"]), (["a", "x"], ["a"]), (["x", "y"], ["a"])]
    qrels, run = eb.from_pairs(pairs)
    value = mean(qrels, run, "reciprocal_rank")
    assert value == pytest.approx(4 / 9)
    assert f"{value:.3f}" == "0.444"


def test_seed003_coverage_at_10_is_08() -> None:
    """10 queries, 8 with a relevant doc in their top 10: Coverage@10 = 0.8."""
    hit = [f"x{i}" for i in range(9)] + ["rel"]           # relevant at rank 10: a hit
    miss = [f"x{i}" for i in range(10)] + ["rel"]         # relevant at rank 11: no hit
    pairs = {f"q{i}": (hit if i < 8 else miss, ["rel"]) for i in range(10)}
    qrels, run = eb.from_pairs(pairs)
    assert mean(qrels, run, "coverage@10") == pytest.approx(0.8)
    assert mean(qrels, run, "coverage@11") == 1.0


def test_seed003_min_relevance_counts_scores_at_or_above_the_threshold() -> None:
    """score >= min_relevance is relevant (7.0 counts, 6.99 does not), whether set by from_graded, Qrels or evaluate."""
    judgments = {"q": {"a": 9.0, "b": 7.0, "c": 6.99, "d": 3.0}}
    retrieved = {"q": ["c", "b", "d", "a"]}
    qrels, run = eb.from_graded(judgments, retrieved, min_relevance=7.0)
    assert mean(qrels, run, "P@4") == 0.5                  # b and a
    assert mean(qrels, run, "RR") == 0.5                   # b at rank 2; c (6.99) is not relevant
    assert mean(qrels, run, "R@2") == 0.5
    plain = {"q": {"c": 4.0, "b": 3.0, "d": 2.0, "a": 1.0}}
    assert mean(eb.Qrels(judgments, min_relevance=7.0), plain, "P@4") == 0.5
    assert mean(judgments, plain, "P@4", min_relevance=7.0) == 0.5
    assert mean(judgments, plain, "P@4", min_relevance=6.99) == 0.75
    assert mean(qrels, run, "P@4", min_relevance=9.5) == 0.0  # evaluate's level overrides the data's


# --------------------------------------------------------------------------------------------
# seed 004: weighted-graded MAP@10, exp-gain NDCG@10 and P@1 on 0/1/2 relevance (MedCorpus)
# --------------------------------------------------------------------------------------------


def test_seed004_weighted_graded_map_hand_example() -> None:
    """Ranking d1(2), d2(0), d3(1), d4(2) with R = 4 judged relevant (d5 graded 1 unretrieved):
    AP = (1/1 * 1.0 + 2/3 * 0.5 + 3/4 * 1.0) / 4 = 0.5208."""
    gt = {"d1": 2, "d2": 0, "d3": 1, "d4": 2, "d5": 1}
    pred = ["d1", "d2", "d3", "d4"]
    qrels, run = eb.from_pairs({"q": (pred, gt)})
    expected = (1 / 1 * 1.0 + 2 / 3 * 0.5 + 3 / 4 * 1.0) / 4
    assert mean(qrels, run, "AP(weights=graded)@10") == pytest.approx(expected)
    assert mean(qrels, run, "wmap@10") == pytest.approx(expected)
    assert expected == pytest.approx(average_precision(gt, pred, 10))
    assert mean(qrels, run, "map@10") == pytest.approx((1 + 2 / 3 + 3 / 4) / 4)  # unweighted differs


def test_seed004_exp_gain_maps_grade_2_to_3_and_grade_1_to_1() -> None:
    """DCG with gain 2^rel - 1: a grade-2 doc at rank 1 gains 3, a grade-1 doc gains 1, grade 0 nothing."""
    for grade, gain in ((2, 3.0), (1, 1.0), (0, 0.0)):
        qrels, run = eb.from_pairs({"q": (["a"], {"a": grade, "z": 1})})
        assert mean(qrels, run, "DCG(gain=exp)@1") == gain


def test_seed004_ndcg10_exp_gain_hand_example() -> None:
    """Ranking grades 1, 2, 0, 2 (of judged 2, 2, 1): DCG = 1 + 3/log2(3) + 0 + 3/log2(5), IDCG = 3 + 3/log2(3) + 1/2."""
    qrels, run = eb.from_pairs({"q": (["a", "b", "c", "d"], {"a": 1, "b": 2, "c": 0, "d": 2})})
    expected = (1 + 3 / LOG2_3 + 3 / math.log2(5)) / (3 + 3 / LOG2_3 + 1 / 2)
    assert mean(qrels, run, "ndcg_burges@10") == pytest.approx(expected)
    assert mean(qrels, run, "nDCG(gain=exp)@10") == pytest.approx(expected)


def test_seed004_precision_at_1_counts_any_grade_above_zero() -> None:
    """P@1 treats rel > 0 as relevant: grade 1 at rank 1 gives 1.0 (at level 2 it would give 0)."""
    qrels, run = eb.from_pairs({"q1": (["a", "b"], {"a": 1, "b": 2}), "q2": (["c"], {"c": 0, "d": 2})})
    assert per_query(qrels, run, "P@1") == {"q1": 1.0, "q2": 0.0}
    assert mean(qrels, run, "P(rel=2)@1") == 0.0


graded_case = st.tuples(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 2), min_size=1, max_size=12),
                        st.lists(st.sampled_from(DOCS), unique=True, min_size=1, max_size=14))


@given(st.lists(graded_case, min_size=1, max_size=4), st.integers(1, 12))
def test_seed004_average_precision_agrees_with_graded_ap_on_random_data(cases: list, k: int) -> None:
    """On random 0/1/2 data the seed's average_precision (weight rel/2) is AP(weights=graded,max_grade=2)@k."""
    qrels, run = eb.from_pairs([(pred, gt) for gt, pred in cases])
    values = per_query(qrels, run, f"AP(weights=graded,max_grade=2)@{k}")
    assert values == pytest.approx({f"q{i}": average_precision(gt, pred, k) for i, (gt, pred) in enumerate(cases, 1)})
    if qrels.max_grade == 2:  # the default max grade is the top of the qrels' scale
        assert per_query(qrels, run, f"wmap@{k}") == pytest.approx(values)
