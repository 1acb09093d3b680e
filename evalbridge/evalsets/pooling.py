"""``pool()``: the unjudged (query, doc) pairs in the first d documents of any run (depth pooling), and what judging them gives.

Depth pooling as TREC builds its judgement pools: the pool at depth d is the union over the runs of each run's
first d documents per query; here only the pairs the qrels do not judge yet are in it, since those are what a
judge has to grade. Several depths at once give nested pools (the pool at 10 is inside the pool at 20), each
pair carrying the best rank any run gives it, so one call answers "how many pairs to judge at depth 10, 20, 50?".

Stratified (``strata=``, :mod:`evalbridge.evalsets.stratified`): the pool is cut into rank strata, each sampled at
its rate (seeded), so the judging batch holds each pair's stratum and inclusion rate and the graded batch, merged,
gives qrels whose strata ``xinfAP`` and ``infNDCG`` read (Yilmaz, Kanoulas and Aslam, SIGIR 2008).

Counted per run (unjudged pairs in its first d), per query (pool pairs), and, per run, how much its ``Judged@k``
(:mod:`evalbridge.metrics.catalogue`'s ``Judged``: the share of its first k documents that have a judgement)
would gain once the pool at each depth is judged. The ranking of each run is :mod:`evalbridge.common.ranking`'s
(ties by doc id, trec_eval's order by default), computed over columns (:mod:`evalbridge.fast.pooling`).

Example:
    >>> qrels = {"q1": {"a": 1}, "q2": {"c": 0}}
    >>> runs = {"x": {"q1": {"a": 3, "b": 2, "e": 1}, "q2": {"c": 2, "d": 1}}, "y": {"q1": {"e": 2, "a": 1}}}
    >>> result = pool(qrels, runs, depth=2)
    >>> result.pairs()
    [('q1', 'e', 1), ('q1', 'b', 2), ('q2', 'd', 2)]
    >>> result.unjudged("x"), result.judged_at_k("x"), result.judged_at_k("x", after=2)
    (2, 0.5, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING, Any

from ..common.parameters import Interval, OneOf, rule_table
from ..errors import InputError
from .stratified import STRATA_EXAMPLE, Drawn, Stratum, check_strata, draw_strata

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from ..model.settings import Settings

__all__ = ["pool", "Pool", "QUERY_SCOPES", "POOL_TIES", "POOL_PARAMETERS", "check_depths"]

#: which queries are pooled: the queries of the qrels (the eval set), or every query any run answers
QUERY_SCOPES: Mapping[str, str] = {
    "qrels": "the queries of the qrels (the eval set); queries only the runs answer are counted, not pooled",
    "runs": "every query any run answers, in the order first met (TREC's and trectools' pools)",
}
#: the tie orders a pool can follow: one order, so each run's first d is one set of documents
POOL_TIES = ("docid_desc", "docid_asc", "input")


@dataclass(frozen=True, eq=False)
class Pool:
    """What :func:`pool` found.

    Attributes:
        systems: the runs pooled, in the order given.
        depths: the pool depths, ascending; the pool at the last depth holds every pair.
        k: the cutoff of ``Judged@k`` (default: the deepest depth).
        query_ids: the queries pooled (``queries``: which, see :data:`QUERY_SCOPES`).
        pair_query: int64, per pair the index of its query in ``query_ids``; pairs ordered by query, best rank,
            then the first run (in the order given) to place the pair within the deepest depth, and its rank there.
        pair_docs: the doc id of each pair (a pyarrow string array: millions of pairs stay columns).
        pair_rank: int64, the best rank any run gives the pair (1-based): it is in the pool at depth d when <= d.
        pair_runs: int64, how many runs place the pair within the deepest depth.
        unjudged_by_run: int64 (runs, depths): unjudged pairs in each run's first d documents.
        by_query: int64 (queries, depths): pool pairs of each query at each depth.
        judged_before: float64 (runs,): each run's mean ``Judged@k`` now (a query it does not answer counts 0,
            as in :func:`evalbridge.evaluate`).
        judged_after: float64 (runs, depths): its mean ``Judged@k`` once the pool at each depth is judged.
        unpooled_queries: queries only the runs answer, left out by ``queries="qrels"`` (how many).
        ties: the tie order of the rankings.
        strata: the rank strata of a stratified pool (empty: the pool is judged wholly).
        seed: the seed its sample was drawn from.
        drawn: per pair its stratum, whether it is sampled and its inclusion rate (None: no strata).
    """

    systems: tuple[str, ...]
    depths: tuple[int, ...]
    k: int
    query_ids: tuple[str, ...]
    queries: str
    pair_query: np.ndarray
    pair_docs: Any
    pair_rank: np.ndarray
    pair_runs: np.ndarray
    unjudged_by_run: np.ndarray
    by_query: np.ndarray
    judged_before: np.ndarray
    judged_after: np.ndarray
    unpooled_queries: int = 0
    ties: str = "docid_desc"
    strata: tuple[Stratum, ...] = ()
    seed: int = 0
    drawn: Drawn | None = None

    def _depth(self, depth: int | None) -> int:
        if depth is None:
            return len(self.depths) - 1
        if depth not in self.depths:
            raise InputError(f"depth {depth!r} was not pooled; pooled depths: {', '.join(map(str, self.depths))}.",
                             fix=f"pass one of them, or pool again with depth=[..., {depth}].")
        return self.depths.index(depth)

    def _system(self, system: str) -> int:
        if system not in self.systems:
            raise InputError(f"no run {system!r} was pooled; runs: {', '.join(self.systems)}.")
        return self.systems.index(system)

    def size(self, depth: int | None = None) -> int:
        """Pairs in the pool at ``depth`` (default: the deepest)."""
        d = self.depths[self._depth(depth)]
        return int((self.pair_rank <= d).sum())

    def pairs(self, depth: int | None = None) -> list[tuple[str, str, int]]:
        """``(query id, doc id, best rank)`` of every pair in the pool at ``depth`` (default: the deepest), in order."""
        d = self.depths[self._depth(depth)]
        keep = (self.pair_rank <= d).nonzero()[0]
        docs = self.pair_docs.take(keep).to_pylist() if len(keep) else []
        return [(self.query_ids[q], doc, r) for q, doc, r in zip(self.pair_query[keep].tolist(), docs,
                                                                 self.pair_rank[keep].tolist())]

    def unjudged(self, system: str, depth: int | None = None) -> int:
        """Unjudged pairs in ``system``'s first ``depth`` documents (default: the deepest)."""
        return int(self.unjudged_by_run[self._system(system), self._depth(depth)])

    def judged_at_k(self, system: str, *, after: int | None = None) -> float:
        """``system``'s mean ``Judged@k`` now, or once the pool at depth ``after`` is judged."""
        i = self._system(system)
        return float(self.judged_before[i] if after is None else self.judged_after[i, self._depth(after)])

    def gain(self, system: str, depth: int | None = None) -> float:
        """How much ``system``'s mean ``Judged@k`` rises once the pool at ``depth`` (default: the deepest) is judged."""
        return self.judged_at_k(system, after=self.depths[self._depth(depth)]) - self.judged_at_k(system)

    def pairs_frame(self, depth: int | None = None) -> pd.DataFrame:
        """One row per pair in the pool at ``depth``: query_id, doc_id, best_rank, runs (how many place it within
        the deepest depth) and depth (the smallest pooled depth it is in); a stratified pool adds stratum, rate
        (the pair's inclusion probability) and sampled."""
        import numpy as np
        import pandas as pd

        d = self.depths[self._depth(depth)]
        keep = np.flatnonzero(self.pair_rank <= d)
        rank = self.pair_rank[keep]
        depths = np.asarray(self.depths)
        ids = np.asarray(self.query_ids, dtype=object)
        frame = pd.DataFrame({"query_id": ids[self.pair_query[keep]] if len(keep) else [],
                              "doc_id": self.pair_docs.take(keep).to_pylist() if len(keep) else [],
                              "best_rank": rank, "runs": self.pair_runs[keep],
                              "depth": depths[np.searchsorted(depths, rank)]})
        if self.drawn is not None:
            names = np.asarray([s.name for s in self.strata], dtype=object)
            frame["stratum"] = names[self.drawn.stratum[keep]] if len(keep) else []
            frame["rate"] = self.drawn.rate[keep]
            frame["sampled"] = self.drawn.sampled[keep]
        return frame

    def sample(self) -> list[tuple[str, str, str, float, bool]]:
        """``(query id, doc id, stratum, inclusion rate, sampled)`` of every pair of a stratified pool, the sampled
        ones first (each part in the pool's order): what its judging batch holds.

        Raises:
            InputError: the pool has no strata.
        """
        import numpy as np

        if self.drawn is None:
            raise InputError("the pool has no strata, so nothing is sampled: every pair is to be judged.",
                             fix=f"pool with strata=, e.g. {{'1-10': 1, '11-100': 0.1}} (--strata {STRATA_EXAMPLE}).")
        drawn = self.drawn
        order = np.concatenate((np.flatnonzero(drawn.sampled), np.flatnonzero(~drawn.sampled)))
        docs = self.pair_docs.take(order).to_pylist() if len(order) else []
        names = [s.name for s in self.strata]
        return [(self.query_ids[q], doc, names[s], r, bool(k)) for q, doc, s, r, k in zip(
            self.pair_query[order].tolist(), docs, drawn.stratum[order].tolist(), drawn.rate[order].tolist(),
            drawn.sampled[order].tolist())]

    def strata_frame(self) -> pd.DataFrame:
        """One row per stratum of a stratified pool: its rate, its pairs pooled and sampled, and the queries that
        have some (empty without strata)."""
        import numpy as np
        import pandas as pd

        rows = []
        for i, s in enumerate(self.strata):
            mine = self.drawn.stratum == i if self.drawn is not None else np.zeros(0, dtype=bool)
            rows.append({"stratum": s.name, "rate": s.rate, "pooled": int(mine.sum()),
                         "sampled": int((mine & self.drawn.sampled).sum()) if self.drawn is not None else 0,
                         "queries": len(np.unique(self.pair_query[mine]))})
        return pd.DataFrame(rows, columns=["stratum", "rate", "pooled", "sampled", "queries"]).set_index("stratum")

    def runs_frame(self) -> pd.DataFrame:
        """One row per run: unjudged pairs in its first d for each depth, Judged@k now and after each depth."""
        import pandas as pd

        data: dict[str, Any] = {"system": list(self.systems)}
        for j, d in enumerate(self.depths):
            data[f"unjudged@{d}"] = self.unjudged_by_run[:, j]
        data[f"Judged@{self.k}"] = self.judged_before
        for j, d in enumerate(self.depths):
            data[f"Judged@{self.k} after depth {d}"] = self.judged_after[:, j]
        return pd.DataFrame(data).set_index("system")

    def queries_frame(self) -> pd.DataFrame:
        """One row per query: its pool pairs at each depth."""
        import pandas as pd

        data = {f"pool@{d}": self.by_query[:, j] for j, d in enumerate(self.depths)}
        return pd.DataFrame(data, index=pd.Index(list(self.query_ids), name="query_id"))

    def to_dict(self) -> dict[str, Any]:
        """The counts, JSON-ready (sizes, per run unjudged and Judged@k now and after); the pairs: :meth:`pairs_frame`."""
        from ..views.eval_sets import pool_dict

        return pool_dict(self)

    def render(self, fmt: str = "terminal") -> str:
        """The pool's tables in any format that writes tables (``terminal``, ``markdown``, ``html``...), or ``json``."""
        from ..views.eval_sets import render_pool

        return render_pool(self, fmt)

    def __str__(self) -> str:
        return self.render("terminal")

    def _repr_html_(self) -> str:
        return self.render("html")

    def __repr__(self) -> str:
        sizes = ", ".join(f"{self.size(d)} at depth {d}" for d in self.depths)
        sampled = f"; {int(self.drawn.sampled.sum())} sampled in {len(self.strata)} strata" \
            if self.drawn is not None else ""
        return f"Pool({len(self.systems)} runs, {len(self.query_ids)} queries; unjudged pairs: {sizes}{sampled})"


#: the verb's own parameters that a rule declares (the config's ``pool:`` keys too); depth and strata: their checks
POOL_PARAMETERS = rule_table(
    Interval("k", int, 1, None, default=None, fix="k is the cutoff of Judged@k, a whole number >= 1, e.g. 10."),
    OneOf("queries", tuple(QUERY_SCOPES), default="qrels",
          fix="; ".join(f"{name}: {what}" for name, what in QUERY_SCOPES.items())),
)


def check_depths(depth: object, *, source: str | None = None, line: int | None = None,
                 key: str | None = None) -> tuple[int, ...]:
    """The pool depths ``depth`` gives (one or several positive integers), ascending; refused naming where."""
    values = [depth] if isinstance(depth, Integral) or isinstance(depth, bool) else depth
    if not isinstance(values, Sequence) or isinstance(values, str) or not values or any(
            isinstance(d, bool) or not isinstance(d, Integral) or d < 1 for d in values):
        raise InputError(f"{key or 'depth'} must be a positive integer (documents per query and run) or a list of "
                         f"them; got {depth!r}.", source=source, line=line, fix="pass e.g. 10 or [10, 20, 50].")
    return tuple(sorted({int(d) for d in values}))


def _runs_in_turn(runs: object) -> list[tuple[str | None, Callable[[], Any]]]:
    """``(name or None, how to get it)`` of each run, none taken yet: a mapping or a sequence whose items are made
    when asked for (runs read from files, a ``TopLists``) gives one at a time (a list of runs is named by each
    run's tag once read)."""
    if isinstance(runs, Mapping):
        return [(str(name), partial(runs.__getitem__, name)) for name in runs]
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Sequence):
        raise InputError(f"runs must map a name to each run, or be a list of runs; got {type(runs).__name__}.",
                         fix='e.g. runs={"bm25": "run.bm25.txt", "splade": splade_run}.')
    return [(None, partial(runs.__getitem__, i)) for i in range(len(runs))]


def pool(qrels: Any, runs: Mapping[str, Any] | Sequence[Any], depth: int | Sequence[int] | None = None, *,
         k: int | None = None, queries: str = "qrels", strata: Any = None, seed: int = 0,
         settings: Settings | None = None, ties: str | None = None, score_precision: str | None = None,
         ids: str | None = None, duplicates: str | None = None) -> Pool:
    """The unjudged (query, doc) pairs in the first ``depth`` documents of any run, and what judging them gives.

    Args:
        qrels: the judgements so far (anything :func:`evalbridge.read_qrels` reads; may hold no query when
            nothing is judged yet, with ``queries="runs"``).
        runs: name -> run, or a list of runs (named by their tag); any input :func:`evalbridge.read_run` reads.
        depth: the pool depth, or several (nested pools, each pair tagged with the best rank any run gives it);
            default 10, or the strata's ends.
        k: the cutoff of ``Judged@k`` reported per run now and after judging each pool (default: the deepest depth).
        queries: ``qrels`` (the eval set's queries) or ``runs`` (every query any run answers); see
            :data:`QUERY_SCOPES`.
        strata: rank strata with their inclusion rates, ``{"1-10": 1, "11-100": 0.1, "101-1000": 0.02}``
            (:func:`~evalbridge.evalsets.stratified.check_strata`): each query's pairs of each stratum (by their best
            rank) sampled at its rate, the pool's depths being the strata's ends; the judging batch then records
            each pair's stratum and rate, and the graded batch merged gives qrels for ``xinfAP`` / ``infNDCG``.
        seed: the seed of the strata's sample (the same pool and seed draw the same sample).
        settings: a :class:`~evalbridge.model.settings.Settings`; of its fields, ``ties`` and ``score_precision`` rank
            each run (``average`` puts no order on tied documents, so it cannot say which of them are in the first
            d: refused), ``ids`` and ``duplicates`` read the inputs; the others decide no pool (its ``depth``, the
            cut of an evaluation, is not the pool's depth).
        ties, score_precision, ids, duplicates: those settings as keywords (given ones replace ``settings``'
            fields), as :func:`evalbridge.evaluate` takes them.

    Raises:
        InputError: no run, bad depth / k / scope / ties / strata / seed, unreadable inputs.
    """
    from ..evaluation.evaluating import as_qrels, as_run, check_compatible
    from ..fast.pooling import pool_tables, table_of
    from ..model.data import Qrels
    from ..model.settings import settings_of

    given = {"ties": ties, "score_precision": score_precision, "ids": ids, "duplicates": duplicates}
    chosen = settings_of(settings, {name: value for name, value in given.items() if value is not None})
    ties, score_precision = chosen.ties, chosen.score_precision
    chosen_strata = check_strata(strata, key="strata") if strata is not None else ()
    if isinstance(seed, bool) or not isinstance(seed, Integral) or seed < 0:
        raise InputError(f"seed must be a whole number >= 0; got {seed!r}.", fix="e.g. seed=0.")
    ends = tuple(s.high for s in chosen_strata)
    depths = ends if chosen_strata and depth is None else check_depths(10 if depth is None else depth)
    if chosen_strata and depths != ends:
        raise InputError(f"the strata end at ranks {', '.join(map(str, ends))}, which are the pool's depths; "
                         f"depth {', '.join(map(str, depths))} is given too.",
                         fix="leave depth out: a stratified pool is pooled to each stratum's end.")
    if k is None:
        k = depths[-1]
    k = POOL_PARAMETERS["k"].check(k)
    queries = POOL_PARAMETERS["queries"].check(queries)
    if ties not in POOL_TIES:
        raise InputError(f"a pool needs one order of each run's documents; ties={ties!r} "
                         f"{'puts tied documents in no order' if ties == 'average' else 'is no tie order'}.",
                         fix=f"pass ties= one of {', '.join(map(repr, POOL_TIES))} (docid_desc is trec_eval's order).")
    inputs = _runs_in_turn(runs)
    if not inputs:
        raise InputError("no run to pool.", fix="pass one run or more.")
    judged = as_qrels(qrels, ids=chosen.ids) if qrels is not None else \
        Qrels({}, allow_empty=True)
    if queries == "qrels" and not len(judged):
        raise InputError("the qrels hold no query, so there is no eval set to pool for.",
                         fix="pool every query the runs answer: queries='runs' (--queries runs).")
    if queries == "runs":  # the queries are known once every run is read: a first pass reads only them
        query_ids = tuple(dict.fromkeys(q for _, get in inputs
                                        for q in as_run(get(), ids=chosen.ids, duplicates=chosen.duplicates)))
    else:
        query_ids = tuple(judged)
    names: list[str] = []
    unpooled: dict[str, None] = {}

    def tables() -> Iterator[Any]:  # one run read at a time: only its first rows stay (fast.pooling)
        for name, get in inputs:
            run = as_run(get(), ids=chosen.ids, duplicates=chosen.duplicates)
            name = name if name is not None else run.name or f"run{len(names) + 1}"
            if name in names:
                raise InputError(f"two runs are both called {name!r}.", fix="pass a mapping {name: run}.")
            names.append(name)
            if queries == "qrels":
                check_compatible(judged, run)  # ids that never meet are refused as evaluate refuses them
                unpooled.update(dict.fromkeys(q for q in run if q not in judged))
            table = table_of(run)
            del run  # the run is let go before the next one is read
            yield table

    columns = pool_tables(table_of(judged), tables(), query_ids, depths, int(k), ties=ties,
                          score_precision=score_precision)
    drawn = draw_strata(columns.pair_query, columns.pair_rank, chosen_strata, seed=int(seed)) \
        if chosen_strata else None
    return Pool(systems=tuple(names), depths=depths, k=int(k), query_ids=query_ids, queries=queries,
                pair_query=columns.pair_query, pair_docs=columns.pair_docs, pair_rank=columns.pair_rank,
                pair_runs=columns.pair_runs, unjudged_by_run=columns.unjudged, by_query=columns.by_query,
                judged_before=columns.judged_before, judged_after=columns.judged_after, unpooled_queries=len(unpooled),
                ties=ties, strata=chosen_strata, seed=int(seed), drawn=drawn)
