"""Distances: a column or field holding each document's distance to the query (lower is better) turned into scores.

Vector stores return distances (L2, cosine distance): the nearest document has the smallest value, so a
distance read as a score (higher is better) reverses every ranking. Every format that names its columns or
fields takes a ``distance`` role beside ``score`` and ``rank`` (``distance=`` in Python, ``--columns
distance=dist``, ``columns: {distance: dist}``); the mapping and JSON formats take ``distance=True`` (their
values are distances). The one rule, written here once for every reader: the score of a document is
``-distance`` (:func:`score_of`), exact in floating point, so ties stay ties and the order is the distances'
order reversed; the notes of the run say so (:func:`note`), and they reach the provenance of every evaluation.

A column whose name says distance (``distance``, ``_distance``, ``cosine_distance``, ``dist``) named as the score
is refused with the fix (:func:`refuse_as_score`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.wording import option

if TYPE_CHECKING:
    from ..model.columnar import RowTable

__all__ = ["DISTANCE_WORDS", "says_distance", "refuse_as_score", "score_of", "scores_from_distances",
           "table_from_distances", "note"]

#: The words that make a column name say distance (its last word: ``cosine_distance``, ``_distance``, ``dist``).
DISTANCE_WORDS = frozenset({"distance", "distances", "dist"})


def says_distance(name: object) -> bool:
    """True when the last word of ``name`` says distance (``distance``, ``_distance``, ``l2Distance``, ``dist``).

    >>> [says_distance(n) for n in ("distance", "_distance", "l2Distance", "dist", "score", "distance_score")]
    [True, True, True, True, False, False]
    """
    words = re.findall(r"[a-z]+|[0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", str(name)).lower())
    return bool(words) and words[-1] in DISTANCE_WORDS


def refuse_as_score(name: str, *, where: str | None, what: str = "column") -> None:
    """Refuse ``name``, named as the score, when it says distance (see the module docstring)."""
    if says_distance(name):
        raise InputError(f"the {what} {name!r} is named as the score, but its name says distance: scores are "
                         f"higher-is-better and distances lower-is-better, so the ranking would be reversed.",
                         source=where, fix=f"use {option('distance', name, column=True)}: its values then become "
                                           f"scores -distance.")


def score_of(distance: float) -> float:
    """The score of a distance: ``-distance`` (``0.0 - d``, so a distance 0 is the score 0.0, not -0.0)."""
    return 0.0 - float(distance)


def scores_from_distances(distances: Mapping[Any, float]) -> dict[Any, float]:
    """``{doc: -distance}`` of one query's ``{doc: distance}``."""
    return {doc: score_of(value) for doc, value in distances.items()}


def table_from_distances(rows: RowTable) -> RowTable:
    """The rows with their distances turned into scores ``-distance``, in columns."""
    import numpy as np

    scores = np.subtract(0.0, rows.values)
    scores.flags.writeable = False
    return dataclasses.replace(rows, values=scores, integral=np.broadcast_to(np.False_, (len(scores),)))


def note(name: str) -> str:
    """The note of a run whose scores come from distances."""
    return f"distances ({name}) turned into scores -distance (the nearest document ranks first)"
