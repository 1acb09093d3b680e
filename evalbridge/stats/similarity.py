"""How far two runs' rankings moved, query by query, without judgements: RBO with ties, Jaccard at k, tau, tau_AP.

For every query both runs rank, :func:`similarity` gives

* rank-biased overlap (:func:`evalbridge.stats.rbo.rbo`) of the two rankings as their scores order them, tied
  scores kept as tie groups and treated as ``ties`` says (``w``, ``a``: the default, ties as uncertainty, the
  expected RBO over their orders; ``b``), at persistence ``p``: ``rbo`` (extrapolated), ``rbo_min`` /
  ``rbo_max`` (its bounds), ``rbo_res`` (max - min: what the depth of the lists leaves unknown);
* ``jaccard``: the share of the union of the two top ``k`` lists (ordered by the tie rule of the rankings,
  :func:`evalbridge.common.ranking.rank`) that both hold;
* ``tau`` (Kendall's tau-b) and ``tau_ap`` (A's order judging B's, ties as Urbano & Marrero's tau_AP_b) over the
  documents both runs retrieved (:mod:`evalbridge.stats.system_order`); nan with fewer than two of them.

``depth`` cuts both rankings first, as an evaluation would. The overall value of each measure is its mean over
the queries (a single query's overall value is that query's). Queries only one run holds have no value: they are
counted (``unpaired``), and :func:`similarity` refuses them unless ``unpaired="count"``.

Example:
    >>> s = similarity({"q1": {"a": 3, "b": 2, "c": 1}}, {"q1": {"b": 3, "a": 2, "d": 1}}, p=0.9, k=2)
    >>> s.queries, round(s.rbo[0], 4), s.jaccard[0], s.tau[0]
    (('q1',), 0.63, 1.0, -1.0)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import InputError
from ..common.parameters import Interval, OneOf, check_parameters, rule_table
from ..common.ranking import rank, rank_groups
from .rbo import RBO_VARIANTS, jaccard, rbo
from .system_order import tau_ap, tau_b

__all__ = ["Similarity", "similarity", "SIMILARITY_PARAMETERS", "MEASURES"]

#: the similarity's own parameters, declared once (the Python API, the command line and a config check them)
SIMILARITY_PARAMETERS = rule_table(
    Interval("p", float, 0, 1, closed="neither", default=0.9,
             fix="the persistence of rank-biased overlap, e.g. 0.9 (the top 10 hold 65% of the weight)."),
    OneOf("ties", RBO_VARIANTS, default="a",
          fix="w (tied documents are equal), a (their order is unknown: the expected RBO over their orders) or "
              "b (a, corrected for what the ties lose)."),
)

#: the per-query measures, in the order of every table
MEASURES = ("rbo", "rbo_min", "rbo_max", "rbo_res", "jaccard", "tau", "tau_ap")


@dataclass(frozen=True)
class Similarity:
    """Each measure of :data:`MEASURES` for every query both runs rank (columns of equal length, the least
    similar query first: lowest ``rbo``, then query id), and their means (:meth:`overall`).

    ``p``, ``ties`` (the RBO variant), ``k`` (of Jaccard), ``order`` (the tie rule of the top-k lists),
    ``depth``: how they were computed; ``shared``: the documents both runs retrieved, per query;
    ``unpaired``: queries only one run ranks (no value)."""

    p: float
    ties: str
    k: int
    order: str
    depth: int | None
    queries: tuple[str, ...]
    rbo: tuple[float, ...]
    rbo_min: tuple[float, ...]
    rbo_max: tuple[float, ...]
    rbo_res: tuple[float, ...]
    jaccard: tuple[float, ...]
    tau: tuple[float, ...]
    tau_ap: tuple[float, ...]
    shared: tuple[int, ...]
    unpaired: int = 0

    def overall(self) -> dict[str, float]:
        """Each measure's mean over the queries (nan values left out; nan when none is left)."""
        means = {}
        for name in MEASURES:
            values = [v for v in getattr(self, name) if not math.isnan(v)]
            means[name] = math.fsum(values) / len(values) if values else math.nan
        return means

    def rows(self) -> list[tuple[Any, ...]]:
        """One ``(query, *MEASURES, shared)`` row per query, in order."""
        return list(zip(self.queries, *(getattr(self, name) for name in MEASURES), self.shared))

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "overall": self.overall()}


def _cut(scores: Mapping[str, float], order: list[str], depth: int | None) -> Mapping[str, float]:
    return scores if depth is None or len(order) <= depth else {d: scores[d] for d in order[:depth]}


def similarity(run_a: Mapping[str, Mapping[str, float]], run_b: Mapping[str, Mapping[str, float]], *,
               p: float = 0.9, ties: str = "a", k: int = 10, order: str = "docid_desc",
               score_precision: str = "float64", depth: int | None = None, unpaired: str = "refuse") -> Similarity:
    """How far run B's rankings moved from run A's (see the module docstring).

    Args:
        run_a, run_b: query id -> doc id -> score (a :class:`~evalbridge.model.data.Run` or plain dicts).
        p, ties: the persistence and the treatment of ties of RBO (:data:`SIMILARITY_PARAMETERS`).
        k: the depth of Jaccard's top-k lists.
        order, score_precision, depth: how scores become rankings (the evaluation's tie rule, precision and cut).
        unpaired: ``refuse`` (default) queries only one run ranks, or ``count`` them and leave them out.

    Raises:
        InputError: a bad parameter; queries only one run ranks, or none that both rank (``unpaired="refuse"``).
    """
    check_parameters(SIMILARITY_PARAMETERS, {"p": p, "ties": ties})
    if order == "average":
        raise InputError("the top-k lists of Jaccard need one order of each ranking; ties='average' gives none.",
                         fix="order the rankings by a tie rule (docid_desc); RBO keeps the ties as ties.")
    both = [q for q in run_a if q in run_b and run_a[q] and run_b[q]]
    lonely = sorted(q for q in {*run_a, *run_b} - set(both))
    if lonely and unpaired == "refuse":
        only_a = [q for q in lonely if run_a.get(q)]
        only_b = [q for q in lonely if run_b.get(q)]
        raise InputError(
            f"the two runs rank different queries: {len(only_a)} only in A ({', '.join(only_a[:3])}"
            f"{', ...' if len(only_a) > 3 else ''}), {len(only_b)} only in B ({', '.join(only_b[:3])}"
            f"{', ...' if len(only_b) > 3 else ''}); a query one run does not rank has no similarity.",
            fix="compare runs over the same queries (keep the queries both rank), or give qrels to diff the "
                "metrics under the evaluation's missing-query policy.")
    if not both and unpaired == "refuse":
        raise InputError("the two runs share no query with documents: there is nothing to compare.",
                         fix="check that both runs use the same query ids.")
    rows: list[tuple[Any, ...]] = []
    for q in both:
        a, b = run_a[q], run_b[q]
        top_a = rank(a, ties=order, score_precision=score_precision)
        top_b = rank(b, ties=order, score_precision=score_precision)
        a, b = _cut(a, top_a, depth), _cut(b, top_b, depth)
        top = k if depth is None else min(k, depth)
        found = rbo(rank_groups(a, score_precision=score_precision),
                    rank_groups(b, score_precision=score_precision), p=p, ties=ties)
        common = [d for d in a if d in b]
        tau = tau_ap_value = math.nan
        if len(common) >= 2:
            xa, xb = [a[d] for d in common], [b[d] for d in common]
            tau = tau_b(xa, xb)
            tau_ap_value = tau_ap(xa, xb)
        rows.append((q, found.ext, found.min, found.max, found.res, jaccard(top_a[:top], top_b[:top]), tau,
                     tau_ap_value, len(common)))
    rows.sort(key=lambda r: (r[1], r[0]))
    columns = list(zip(*rows)) or [()] * (len(MEASURES) + 2)
    return Similarity(p=p, ties=ties, k=k, order=order, depth=depth, queries=tuple(columns[0]),
                      **{name: tuple(map(float, columns[i])) for i, name in enumerate(MEASURES, start=1)},
                      shared=tuple(columns[-1]), unpaired=len(lonely))
