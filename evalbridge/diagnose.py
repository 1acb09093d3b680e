"""Small detectors the cross-check uses to decide which causes are worth verifying, and the
bridges use to decide which queries to re-score.

Each is a pure function over one query's data. A detector only says that a cause is
*possible*; :mod:`evalbridge.cross_check` then verifies it by re-running the reference.
"""

from __future__ import annotations

from collections.abc import Mapping

from .ranking import tie_groups, to_float32

__all__ = ["has_ties", "float32_collisions", "fractional_grades"]


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
