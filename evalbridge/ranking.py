"""The one place that turns scores into a ranking.

trec_eval's rule is the default: score descending, ties broken by doc id
descending (byte-wise, ``comp_sim_docno`` in ``form_res_rels.c``). Other tie
policies exist so the reference can reproduce what other backends do.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping

__all__ = ["rank", "to_float32", "tie_groups"]


def to_float32(values: list[float]) -> list[float]:
    """Round scores to the nearest C ``float``, as trec_eval <= 9 stores them."""
    return array("f", values).tolist()


def rank(scores: Mapping[str, float], *, ties: str = "docid_desc", score_precision: str = "float64") -> list[str]:
    """Doc ids of one query in rank order.

    Args:
        scores: doc id -> score (higher ranks first).
        ties: ``docid_desc`` (trec_eval), ``docid_asc`` (ir-measures msmarco provider)
            or ``input`` (mapping order, i.e. the order the documents were given).
        score_precision: ``float32`` compares scores as C floats (trec_eval <= 9).

    Example:
        >>> rank({"a": 1.0, "b": 2.0, "c": 1.0})
        ['b', 'c', 'a']
        >>> rank({"a": 1.0, "b": 2.0, "c": 1.0}, ties="input")
        ['b', 'a', 'c']
    """
    docs = list(scores)
    values = list(scores.values())
    if score_precision == "float32":
        values = to_float32(values)
    if ties == "docid_desc":
        order = sorted(zip(values, docs), reverse=True)
        return [d for _, d in order]
    if ties == "docid_asc":
        return [d for _, d in sorted(zip((-v for v in values), docs))]
    if ties == "input":
        return [docs[i] for i in sorted(range(len(docs)), key=lambda i: -values[i])]
    raise ValueError(f"unknown tie policy {ties!r}")


def tie_groups(scores: Mapping[str, float], *, score_precision: str = "float64") -> list[list[str]]:
    """Groups of two or more doc ids that share a score (after rounding to ``score_precision``)."""
    values = list(scores.values())
    if score_precision == "float32":
        values = to_float32(values)
    groups: dict[float, list[str]] = {}
    for doc, value in zip(scores, values):
        groups.setdefault(value, []).append(doc)
    return [g for g in groups.values() if len(g) > 1]
