"""How much two rankings of documents overlap, without judgements: rank-biased overlap with ties, and Jaccard at k.

Rank-biased overlap (Webber, Moffat & Zobel, TOIS 2010) weighs the agreement A_d of the two top-d lists by
p^(d-1): RBO = (1 - p) sum_d p^(d-1) A_d. Two finite rankings S (the shorter, s items) and L (l items) leave the
agreement beyond what they show unknown; the four scores bound and estimate it: ``min`` (no further overlap),
``max`` (every unseen item overlaps), ``ext`` (the agreement seen extrapolated), ``res`` = max - min.

Ties follow Corsi & Urbano, "The Treatment of Ties in Rank-Biased Overlap" (SIGIR 2024). An item of a tie group
spanning ranks t+1 .. t+g of a ranking contributes c(d) to that ranking's top d:

* ``ties="w"`` (a tie is an equality): c(d) = 1 from d = t+1 on; the agreement at depth d is the overlap over
  the mean size of the two top-d lists, 2 X_d / (|S_d| + |L_d|), where a group counts whole once it starts;
* ``ties="a"`` (a tie is uncertainty; the expected RBO over every order of the tied items):
  c(d) = min(1, (d - t) / g) for d > t, and A_d = X_d / d;
* ``ties="b"`` (``a`` corrected by the information the ties lose, so that RBO^b(X, X) = 1):
  the same c(d), and A_d = X_d / sqrt(sum c_S(d)^2) / sqrt(sum c_L(d)^2);

with X_d = sum over the items of both rankings of c_S(d) c_L(d). Beyond depth s the shorter ranking is taken to
go on with d items (so |S_d| = d), its unseen items overlapping nothing (``min``), the items only L holds in
L's order (``max``), or each unseen depth matching L's items at the agreement seen at depth s (``ext``); the
tail beyond depth l has the closed forms of the paper. Without ties the three variants are one, and Webber's.

Each contribution is a ramp from 0 to 1 over the group's ranks, so every sum over items is a count of the
items whose ramp is complete plus the ramps' few partial terms: O(n) for untied rankings, O(n + sum g^2) with
tie groups of size g, never an items x depths matrix.

Example (the authors' README: red, then blue and green tied, ...; p = 0.95):
    >>> x = [["red"], ["blue", "green"], ["yellow"], ["pink"]]
    >>> y = [["blue", "red"], ["white"], ["yellow", "black", "purple"], ["green"]]
    >>> [round(v, 7) for v in rbo(x, y, p=0.95, ties="a")[:4]]
    [0.6922853, 0.3310519, 0.8930692, 0.5620173]
    >>> round(rbo(x, y, p=0.95, ties="w").ext, 7), round(rbo(x, y, p=0.95, ties="b").ext, 7)
    (0.7068257, 0.7207131)
    >>> jaccard(["a", "b", "c"], ["b", "c", "d"])
    0.5
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = ["RBO", "RBO_VARIANTS", "rbo", "jaccard"]

#: the treatments of ties (Corsi & Urbano 2024): w = equality, a = uncertainty averaged, b = a corrected
RBO_VARIANTS = ("w", "a", "b")

_Ints = npt.NDArray[np.int64]
_Floats = npt.NDArray[np.float64]


class RBO(NamedTuple):
    """The four scores of one pair of rankings: ``ext`` (extrapolated), ``min`` and ``max`` (the bounds),
    ``res`` = max - min (what the lists' depth leaves unknown); ``variant``: the treatment of ties."""

    ext: float
    min: float
    max: float
    res: float
    variant: str


class _Flat(NamedTuple):
    """A ranking flattened: each item's code, the 0-based rank its tie group starts at, and the group's size."""

    codes: _Ints
    top: _Ints
    size: _Ints


def _flatten(groups: Sequence[Sequence[Hashable]], index: dict[Hashable, int]) -> _Flat:
    codes: list[int] = []
    tops: list[int] = []
    sizes: list[int] = []
    for group in groups:
        start, g = len(codes), len(group)
        if g == 0:
            raise ValueError("a ranking's tie group is empty; every group holds at least one item.")
        for item in group:
            codes.append(index.setdefault(item, len(index)))
        tops += [start] * g
        sizes += [g] * g
    flat = _Flat(np.asarray(codes, dtype=np.int64), np.asarray(tops, dtype=np.int64),
                 np.asarray(sizes, dtype=np.int64))
    if len(np.unique(flat.codes)) != len(flat.codes):
        raise ValueError("an item appears twice in one ranking; each item holds one rank.")
    return flat


def _ramp(top: _Ints, size: _Ints, depth: _Ints) -> _Floats:
    """c(d) of items (top, size) at depths d: 0 up to d = top, rising to 1 at d = top + size."""
    return np.clip((depth - top) / size, 0.0, 1.0)


def _sum_over_depths(low: _Ints, high: _Ints, l: int, partial: Callable[[_Ints, _Ints], _Floats]) -> _Floats:
    """For d = 1..l, sum over items of a term that is 1 from d = high on, 0 up to d = low, and
    ``partial(rows, d)`` in between."""
    complete = np.bincount(np.minimum(high, l + 1), minlength=l + 2).cumsum()[1:l + 1].astype(np.float64)
    width = np.clip(high - low - 1, 0, None)
    if not width.any():
        return complete
    rows = np.repeat(np.arange(len(low)), width)
    depth = np.arange(rows.size) - np.repeat(np.cumsum(width) - width, width) + low[rows] + 1
    keep = depth <= l
    rows, depth = rows[keep], depth[keep]
    return complete + np.bincount(depth, weights=partial(rows, depth), minlength=l + 1)[1:l + 1]


def _overlap(s_top: _Ints, s_size: _Ints, l_top: _Ints, l_size: _Ints, l: int) -> _Floats:
    """X_d = sum over items of c_S(d) c_L(d), d = 1..l."""
    return _sum_over_depths(np.maximum(s_top, l_top), np.maximum(s_top + s_size, l_top + l_size), l,
                            lambda i, d: _ramp(s_top[i], s_size[i], d) * _ramp(l_top[i], l_size[i], d))


def _mass(top: _Ints, size: _Ints, l: int, power: int) -> _Floats:
    """sum over items of c(d) ** power, d = 1..l."""
    return _sum_over_depths(top, top + size, l, lambda i, d: _ramp(top[i], size[i], d) ** power)


def rbo(x: Sequence[Sequence[Hashable]], y: Sequence[Sequence[Hashable]], *, p: float, ties: str = "a") -> RBO:
    """Rank-biased overlap of two rankings given as tie groups in rank order (``[["a"], ["b", "c"]]``: b and c
    tied at ranks 2-3), with persistence ``p`` in (0, 1) and the treatment of ties ``ties`` (see the module
    docstring). Symmetric in ``x`` and ``y``.

    Raises:
        ValueError: p outside (0, 1), an unknown variant, an empty ranking or group, an item twice in a ranking.
    """
    if not 0 < p < 1 or isinstance(p, bool) or not math.isfinite(p):
        raise ValueError(f"p must be between 0 and 1 (exclusive); got {p!r}.")
    if ties not in RBO_VARIANTS:
        raise ValueError(f"unknown treatment of ties {ties!r}; choose one of {', '.join(map(repr, RBO_VARIANTS))}.")
    index: dict[Hashable, int] = {}
    fx, fy = _flatten(x, index), _flatten(y, index)
    short, long = (fy, fx) if len(fx.codes) >= len(fy.codes) else (fx, fy)
    s, l = len(short.codes), len(long.codes)
    if s == 0:
        raise ValueError("RBO compares two rankings that each hold at least one item.")
    if ties == "w":  # an item counts whole from its group's first rank on
        short, long = short._replace(size=np.ones_like(short.size)), long._replace(size=np.ones_like(long.size))
    depth = np.arange(1, l + 1, dtype=np.float64)

    # items of both, in the shorter ranking's order; the longer's own items in its order
    where_long = np.full(len(index), -1, dtype=np.int64)
    where_long[long.codes] = np.arange(l)
    shared = where_long[short.codes]
    in_both = shared >= 0
    si, li = np.flatnonzero(in_both), shared[in_both]
    seen = _overlap(short.top[si], short.size[si], long.top[li], long.size[li], l)
    only_long = np.ones(l, dtype=bool)
    only_long[li] = False
    u_top, u_size = long.top[only_long], long.size[only_long]

    if ties == "w":
        count_long = _mass(long.top, long.size, l, 1)
        count_short = np.minimum(_mass(short.top, short.size, l, 1), s)
        first = 2 / (count_short[:s] + count_long[:s])
        second = 2 / (depth[s:] + count_long[s:])
    elif ties == "a":
        first, second = 1 / depth[:s], 1 / depth[s:]
    else:
        norm_long = np.sqrt(_mass(long.top, long.size, l, 2))
        first = 1 / np.sqrt(_mass(short.top, short.size, l, 2)[:s]) / norm_long[:s]
        second = 1 / np.sqrt(depth[s:]) / norm_long[s:]
    agreement_first = seen[:s] * first
    at_s = float(agreement_first[-1])

    # beyond depth s: the j-th item only L holds taken to enter S at rank s + j + 1 (max), or L's own items
    # matched at the agreement seen at depth s, each at its mean contribution (ext)
    k = min(l - s, len(u_top))
    unseen_max = _overlap(s + np.arange(k), np.ones(k, dtype=np.int64), u_top[:k], u_size[:k], l)[s:]
    started = _mass(u_top, np.ones_like(u_size), l, 1)[s:]
    mean_unseen = np.divide(_mass(u_top, u_size, l, 1)[s:], started, out=np.zeros(l - s), where=started > 0)
    unseen_ext = (depth[s:] - s) * at_s * mean_unseen

    weights = p ** depth
    head = float(np.dot(agreement_first, weights[:s]))
    x_l = float(seen[-1])
    tail_min = x_l * (math.log(1 / (1 - p)) - float(np.sum(weights / depth)))
    f = l + s - x_l
    beyond = np.arange(l + 1, f + 1, dtype=np.float64)
    tail_max = float(np.sum((2 * beyond - l - s + x_l) / beyond * p ** beyond)) + p ** (f + 1) / (1 - p)
    tail_ext = (x_l + (l - s) * at_s) / l * p ** (l + 1) / (1 - p)
    scale = (1 - p) / p

    def score(unseen: _Floats | float, tail: float) -> float:
        return scale * (head + float(np.dot((seen[s:] + unseen) * second, weights[s:])) + tail)

    low, high = score(0.0, tail_min), score(unseen_max, tail_max)
    return RBO(ext=score(unseen_ext, tail_ext), min=low, max=high, res=high - low, variant=ties)


def jaccard(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """|A & B| / |A | B| of two lists of items (two top-k lists); nan when both are empty."""
    sa, sb = set(a), set(b)
    union = len(sa | sb)
    return len(sa & sb) / union if union else math.nan
