"""ranx's order of a run's documents, computed the way ranx computes it, without ranx objects.

``ranx.Run`` sorts every query by descending score on construction (numba's ``np.argsort`` of
the negated scores, in insertion order) and ``make_comparable`` sorts the result again the same
way. numba's quicksort is not stable beyond 15 elements, so tied documents end in an order only
these two sorts reproduce. Building the ``ranx.Run`` (numba typed dicts, one per query) costs
about 30x the sorts themselves; this runs the same two argsorts on flat arrays. Imported only
where ranx (and so numba) is already in use. Compiled on first use: about 6 s on a cold numba
cache (here: 2 shared cores), then loaded from the cache beside this file.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def ranx_positions(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:  # pragma: no cover - compiled
    """Per query ``i`` (rows ``offsets[i]:offsets[i + 1]`` of ``scores``, float64), the row indices
    in the order ``ranx.Run(...).sort()`` leaves the documents."""
    out = np.empty(len(scores), dtype=np.int64)
    for q in range(len(offsets) - 1):
        lo, hi = offsets[q], offsets[q + 1]
        negated = -scores[lo:hi]
        first = np.argsort(negated)  # ranx.Run(): typed_list_argosrt([-v for v in values])
        second = np.argsort(negated[first])  # make_comparable's sort() of the sorted dict
        out[lo:hi] = lo + first[second]
    return out
