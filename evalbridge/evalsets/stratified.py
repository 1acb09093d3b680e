"""The strata of a stratified pool (Yilmaz, Kanoulas and Aslam, SIGIR 2008): rank ranges with inclusion rates, checked once, and the seeded draw of each stratum's sample.

A stratum is a range of best ranks (the best rank any pooled run gives a pair), e.g. ranks 1-10 judged wholly,
11-100 at a rate of 0.1 and 101-1000 at 0.02, as TREC's stratified pools are built. Each query's pairs of a
stratum are sampled without replacement, ``n = max(1, round(rate * D))`` of its ``D`` pairs (half up), so each
pair's inclusion probability is exactly ``n / D``: the rate the judging batch records for it, and what
``xinfAP`` / ``infNDCG`` read back from the sample (the sampled and the pooled pairs of each stratum, as NIST's
``sample_eval.pl`` does). Pairs judged before the pool was drawn are a stratum of their own, :data:`JUDGED`,
judged wholly.

The strata are written ``"LOW-HIGH": rate`` (a mapping) or ``LOW-HIGH:RATE`` (the command line's words); they
start at rank 1 and follow each other without a gap or an overlap.

Example:
    >>> strata = check_strata({"1-2": 1, "3-6": 0.5})
    >>> [(s.name, s.rate) for s in strata]
    [('1-2', 1.0), ('3-6', 0.5)]
    >>> import numpy as np
    >>> drawn = draw_strata(np.zeros(6, dtype="int64"), np.arange(1, 7), strata, seed=1)
    >>> drawn.stratum.tolist(), int(drawn.sampled.sum()), drawn.rate.tolist()
    ([0, 0, 1, 1, 1, 1], 4, [1.0, 1.0, 0.5, 0.5, 0.5, 0.5])
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Stratum", "Drawn", "JUDGED", "STRATA_EXAMPLE", "check_strata", "draw_strata", "sample_size"]

#: the stratum of the pairs judged before the sample was drawn (judged wholly: rate 1)
JUDGED = "judged"
#: the strata of the messages' fixes, as every door writes them
STRATA_EXAMPLE = "1-10:1 11-100:0.1 101-1000:0.02"
_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


@dataclass(frozen=True)
class Stratum:
    """Best ranks ``low`` to ``high`` (1-based, both included), each pair sampled at ``rate`` (in (0, 1])."""

    low: int
    high: int
    rate: float

    @property
    def name(self) -> str:
        """``LOW-HIGH``: the stratum's name in the batch, the qrels' strata and every table."""
        return f"{self.low}-{self.high}"


@dataclass(frozen=True, eq=False)
class Drawn:
    """The sample of a stratified pool, per pair (in the pool's order).

    Attributes:
        stratum: int64, the index of the pair's stratum in the strata.
        sampled: bool, whether the pair is in the sample (to be judged).
        rate: float64, the pair's inclusion probability: its query's sampled over pooled pairs of its stratum.
    """

    stratum: np.ndarray
    sampled: np.ndarray
    rate: np.ndarray


def _fail(value: Any, problem: str, *, source: str | None, line: int | None, key: str | None) -> InputError:
    return InputError(f"{key or 'strata'}: {problem}; got {value!r:.120}.", source=source, line=line,
                      fix=f"give rank ranges from 1 with their rates, e.g. {STRATA_EXAMPLE} (each range follows the "
                          f"last without a gap; a rate is in (0, 1], 1 judges the range wholly).")


def _pairs(value: Any, where: dict[str, Any]) -> list[tuple[Any, Any]]:
    """``(range, rate)`` of each stratum given: a mapping, or ``RANGE:RATE`` words."""
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _fail(value, "expected rank ranges with their rates", **where)
    found = []
    for word in value:
        if not isinstance(word, str) or word.count(":") != 1:
            raise _fail(word, "a stratum is written RANGE:RATE", **where)
        ranks, rate = word.split(":")
        try:
            found.append((ranks, float(rate)))
        except ValueError:
            raise _fail(word, f"the rate {rate!r} is not a number", **where) from None
    return found


def check_strata(value: Any, *, source: str | None = None, line: int | None = None,
                 key: str | None = None) -> tuple[Stratum, ...]:
    """The strata ``value`` gives (see the module docstring), checked: ranges from rank 1 on, neither gap nor
    overlap, rates in (0, 1].

    Raises:
        InputError: an unreadable range or rate, a rate outside (0, 1], strata that overlap, leave a gap or do not
            start at rank 1; the message names where (``source``, ``line``, ``key``), the value and the fix.
    """
    where: dict[str, Any] = {"source": source, "line": line, "key": key}
    given = _pairs(value, where)
    if not given:
        raise _fail(value, "no stratum is given", **where)
    strata = []
    for ranks, rate in given:
        match = _RANGE.match(str(ranks)) if isinstance(ranks, (str, Integral)) and not isinstance(ranks, bool) \
            else None
        if match is None:
            raise _fail(ranks, "a stratum's ranks are LOW-HIGH (e.g. 11-100) or one rank", **where)
        low, high = int(match[1]), int(match[2] or match[1])
        if low < 1 or high < low:
            raise _fail(ranks, "a stratum's ranks run from LOW to HIGH >= LOW, from rank 1 on", **where)
        if isinstance(rate, bool) or not isinstance(rate, Real) or not math.isfinite(rate) or not 0 < float(rate) <= 1:
            raise _fail(rate, f"the rate of ranks {low}-{high} is the share of its pairs sampled, in (0, 1]",
                        **where)
        strata.append(Stratum(low, high, float(rate)))
    strata.sort(key=lambda s: (s.low, s.high))
    expected = 1
    for s in strata:
        if s.low != expected:
            problem = (f"ranks {s.name} overlap the stratum before (it ends at {expected - 1})" if s.low < expected
                       else f"ranks {expected}-{s.low - 1} are in no stratum (a gap before {s.name})")
            raise _fail(value, problem, **where)
        expected = s.high + 1
    return tuple(strata)


def sample_size(pooled: int, rate: float) -> int:
    """How many of a stratum's ``pooled`` pairs of one query are sampled at ``rate``: ``round(rate * pooled)``
    half up, at least one (a stratum never goes unseen) and at most all."""
    return min(pooled, max(1, math.floor(rate * pooled + 0.5))) if pooled else 0


def draw_strata(pair_query: np.ndarray, pair_rank: np.ndarray, strata: Sequence[Stratum], *, seed: int) -> Drawn:
    """Each pair's stratum (by its best rank), and a simple random sample of each query's pairs of each stratum
    of :func:`sample_size`, drawn from ``seed`` (the same pairs and seed: the same sample).

    Pairs ranked beyond the last stratum are not pooled: refused (the pool's depth is the last stratum's end)."""
    import numpy as np

    query = np.asarray(pair_query, dtype="int64")
    rank = np.asarray(pair_rank, dtype="int64")
    highs = np.asarray([s.high for s in strata], dtype="int64")
    stratum = np.searchsorted(highs, rank, side="left")
    if len(rank) and (rank.min() < 1 or stratum.max() >= len(strata)):
        raise InputError(f"a pair has best rank {int(rank.max())}, beyond the last stratum ({strata[-1].name}).",
                         fix="pool to the last stratum's end (its depth).")
    groups = query * len(strata) + stratum
    keys, group, pooled = np.unique(groups, return_inverse=True, return_counts=True)
    rates = np.asarray([s.rate for s in strata])[keys % len(strata)]
    wanted = np.asarray([sample_size(int(d), float(r)) for d, r in zip(pooled, rates)], dtype="int64")
    draws = np.random.default_rng(seed).random(len(rank))
    order = np.lexsort((draws, group))
    first = np.concatenate(([0], np.cumsum(pooled)[:-1])).astype("int64")
    position = np.empty(len(rank), dtype="int64")
    position[order] = np.arange(len(rank)) - first[group[order]]
    sampled = position < wanted[group]
    return Drawn(stratum=stratum.astype("int64"), sampled=sampled,
                 rate=(wanted / pooled)[group] if len(rank) else np.zeros(0))
