"""The systems no other system beats on two numbers at once (quality up, cost down): the Pareto front."""

from __future__ import annotations

import math
from collections.abc import Mapping

__all__ = ["pareto_front"]


def pareto_front(points: Mapping[str, tuple[float, float]]) -> tuple[str, ...]:
    """The systems no other system beats on both: ``points`` maps a system to (quality, cost), quality higher is
    better, cost lower is better; a system is on the front unless another has quality >= and cost <= with one of
    them strictly. Systems with a nan are left out. In the order given.

    >>> pareto_front({"bm25": (0.50, 10.0), "dense": (0.70, 40.0), "hybrid": (0.68, 55.0), "tiny": (0.40, 10.0)})
    ('bm25', 'dense')
    """
    finite = {s: p for s, p in points.items() if all(map(math.isfinite, p))}
    return tuple(s for s, (q, c) in finite.items()
                 if not any(q2 >= q and c2 <= c and (q2 > q or c2 < c) for t, (q2, c2) in finite.items() if t != s))
