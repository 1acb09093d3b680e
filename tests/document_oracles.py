"""The metric functions of the user's worked-example documents (``../shared/seeds/*.txt``, in Chinese),
copied verbatim (comments included): independent oracles for the tests that reproduce those examples
(``test_metrics_examples.py``, ``test_trec.py``). Not evalbridge code; kept exactly as the documents
wrote them, so their quirks (``max(1, ...)`` normalisation, the whole list as the ideal) are theirs.
"""

# ruff: noqa
from __future__ import annotations

import math

__all__ = ["calculate_ap", "calculate_map", "calculate_dcg", "calculate_ndcg", "calculate_average_ndcg",
           "calculate_precision_at_k", "calculate_recall_at_k", "calculate_mrr", "calculate_mrr_batch",
           "calculate_dcg_at_k", "calculate_ndcg_at_k", "calculate_hit_rate_at_k", "generate_tweetid_gain",
           "MAP_eval", "MRR_eval", "NDCG_eval", "average_precision"]


# 000_86ca3c6974105328.txt (notes on the hybrid-retrieval paper, §一.3 and §二.3)


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


# 001_7752ff7570d0df9e.txt (RAG guide, the Python实现 of each metric)


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


# 002_302ebfc17d0870d4.txt (course experiment, 实验基本原理相关算法详解)


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


# 004_a5f9bf9423829697.txt (MedCorpus evaluation standard, 代码实现示例)


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
