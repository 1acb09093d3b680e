"""The one place that turns scores into a ranking.

trec_eval's rule is the default: score descending, ties broken by doc id
descending (byte-wise, ``comp_sim_docno`` in ``form_res_rels.c``). Other tie
policies exist so the reference can reproduce what other backends do; ``ties="average"``
orders no tie group at all: :func:`rank_groups` gives the groups, and
:mod:`evalbridge.metrics.tie_aware` averages over their orders.

The detectors at the end (ties, float32 collisions, fractional grades) tell the cross-check which
causes are worth verifying and the bridges which queries to re-score; each only says that a cause
is *possible*, :mod:`evalbridge.cross_check.checking` verifies it by re-running the reference.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping

__all__ = ["rank", "rank_groups", "to_float32", "tie_groups", "has_ties", "float32_collisions", "fractional_grades"]


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
    if ties == "average":
        raise ValueError("ties='average' ranks no single order: rank_groups gives the tie groups to average over")
    raise ValueError(f"unknown tie policy {ties!r}")


def rank_groups(scores: Mapping[str, float], *, score_precision: str = "float64") -> list[list[str]]:
    """Doc ids of one query as tie groups in rank order: every document in exactly one group, the
    groups by score descending, the documents of a group (equal scores after rounding to
    ``score_precision``) in input order. What ``ties="average"`` averages over.

    Example:
        >>> rank_groups({"a": 1.0, "b": 2.0, "c": 1.0})
        [['b'], ['a', 'c']]
    """
    values = list(scores.values())
    if score_precision == "float32":
        values = to_float32(values)
    groups: dict[float, list[str]] = {}
    for doc, value in zip(scores, values):
        groups.setdefault(value, []).append(doc)
    return [groups[value] for value in sorted(groups, reverse=True)]


def tie_groups(scores: Mapping[str, float], *, score_precision: str = "float64") -> list[list[str]]:
    """Groups of two or more doc ids that share a score (after rounding to ``score_precision``), in rank order."""
    return [g for g in rank_groups(scores, score_precision=score_precision) if len(g) > 1]


def has_ties(scores: Mapping[str, float], *, score_precision: str = "float64") -> bool:
    """True when two documents share a score (after rounding to ``score_precision``).

    >>> has_ties({"a": 1.0, "b": 1.0}), has_ties({"a": 1.0, "b": 2.0})
    (True, False)
    """
    values = scores.values() if score_precision != "float32" else to_float32(list(scores.values()))
    return len(set(values)) < len(scores)  # as tie_groups: equal values (0.0 == -0.0) share a group


def float32_collisions(scores: Mapping[str, float]) -> list[list[str]]:
    """Groups of documents whose scores differ in float64 but are equal as C floats.

    >>> float32_collisions({"a": 0.9752302811, "b": 0.9752302801, "c": 0.5})
    [['a', 'b']]
    """
    values = list(scores.values())
    if len(set(to_float32(values))) == len(set(values)):  # rounding merged no two distinct scores
        return []
    groups = []
    for group in tie_groups(scores, score_precision="float32"):
        if len({scores[d] for d in group}) > 1:
            groups.append(group)
    return groups


def fractional_grades(grades: Mapping[str, float]) -> list[str]:
    """Doc ids whose grade is not a whole number (what ranx's ``Qrels`` truncates).

    >>> fractional_grades({"a": 7.5, "b": 2})
    ['a']
    """
    return [d for d, g in grades.items() if not float(g).is_integer()]
