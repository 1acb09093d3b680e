"""Fusion of several runs into one through ranx: ``fuse(runs, method="rrf", ...)``, a :class:`Run` named by its recipe.

Every fusion method of ranx (:data:`METHODS`: RRF, CombSUM / CombMNZ / CombANZ / CombMAX / CombMIN / CombMED /
CombGMNZ, weighted sums, ISR, Borda and Condorcet and their weighted forms, RBC, the trained probabilistic ones...)
over any runs evalbridge reads, each normalised first as ranx normalises (:data:`NORMS`; ``min-max`` by default,
as ranx's ``fuse``). A method's parameters are given (``params={"k": 60}``, ``params={"weights": [0.3, 0.7]}``)
or learnt by ranx's ``optimize_fusion`` on a training split of the queries (``qrels=`` and ``train=``, the query
ids it may see, and ``metric=`` in ranx's spelling); the methods that must be trained (:data:`TRAINED`) need one.

The fused run is ranx's: the same scores as ``ranx.fuse`` on ranx's own ``Run`` objects, but for one difference,
named here. ranx ranks each input run by sorting its scores with an unstable sort, so equal scores meet the
rank-based methods (RRF, ISR, Borda, ...) in an order of ranx's making; here they meet them in evalbridge's order
(trec_eval's rule: score descending, then doc id descending, :func:`evalbridge.common.ranking.rank`), the order every
evaluation of the inputs used. Without tied scores in the inputs the two are the same run. The fused run's own ties
are ordered by the same rule wherever it is evaluated.

Its name is its recipe (``rrf(bm25, splade; k=60)``, ``wsum[min-max](bm25, splade; weights=0.3, 0.7)``), and its
notes say how its parameters were chosen (given, ranx's default, or learnt on n training queries: evaluate it on the
others, :meth:`Run.notes`).

Example:
    >>> a = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
    >>> b = {"q1": {"d2": 0.9, "d3": 0.8, "d4": 0.1}}
    >>> fused = fuse({"bm25": a, "dense": b}, method="rrf")
    >>> fused.name, [doc for doc, _ in sorted(fused["q1"].items(), key=lambda x: -x[1])]
    ('rrf(bm25, dense; k=60)', ['d2', 'd3', 'd1', 'd4'])
"""

from __future__ import annotations

import math

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from ..common.parameters import OneOf, Rule, Text, check_parameters, rule_table
from ..common.ranking import rank
from ..errors import InputError
from ..model.data import Run

__all__ = ["fuse", "METHODS", "NORMS", "TRAINED", "FUSION_PARAMETERS"]

#: ranx's fusion methods -> the parameters each takes (those without a default must be given or learnt)
METHODS: Mapping[str, tuple[str, ...]] = {
    "anz": (), "bordafuse": (), "condorcet": (), "isr": (), "log_isr": (), "max": (), "med": (), "min": (),
    "mnz": (), "sum": (),
    "gmnz": ("gamma",), "logn_isr": ("sigma",), "rbc": ("phi",), "rrf": ("k",),
    "mixed": ("weights",), "w_bordafuse": ("weights",), "w_condorcet": ("weights",), "wmnz": ("weights",),
    "wsum": ("weights",),
    "bayesfuse": ("log_odds",), "mapfuse": ("map_scores",), "posfuse": ("probs",), "probfuse": ("probs",),
    "segfuse": ("probs",), "slidefuse": ("probs", "w"),
}
#: the methods whose parameters come from training on judged queries (probabilities, log-odds, MAP scores)
TRAINED = ("bayesfuse", "mapfuse", "posfuse", "probfuse", "segfuse", "slidefuse")
#: ranx's parameter defaults, used when neither given nor learnt
DEFAULTS: Mapping[str, Mapping[str, Any]] = {"rrf": {"k": 60}, "logn_isr": {"sigma": 0.01}}
#: ranx's score normalisations (None: the scores as they are)
NORMS = ("min-max", "max", "sum", "zmuv", "rank", "borda", "min-max-inverted", None)
#: One rule per scalar keyword of :func:`fuse` (a ``fusion:`` section's keys; its ``norm`` may also be null: none)
FUSION_PARAMETERS: Mapping[str, Rule] = rule_table(
    OneOf("method", tuple(METHODS), default="rrf", fix="choose one of ranx's methods, e.g. rrf or wsum."),
    OneOf("norm", tuple(n for n in NORMS if n is not None), default="min-max",
          fix="choose one of ranx's normalisations (min-max is its default), or null for none."),
    Text("metric", default="ndcg@10", fix="name what the training maximises in ranx's spelling, e.g. ndcg@10."),
)
#: the methods whose parameters ranx's optimize_fusion searches (with a progress bar, turned off here); the other
#: trained methods are fitted in one pass
_SEARCHED = ("gmnz", "logn_isr", "mixed", "probfuse", "rbc", "rrf", "slidefuse", "w_bordafuse", "w_condorcet", "wmnz",
             "wsum")
#: the methods that read ranks only, for which a normalisation changes nothing (the recipe leaves it out)
RANK_BASED = ("bordafuse", "condorcet", "isr", "log_isr", "logn_isr", "rbc", "rrf", "w_bordafuse", "w_condorcet",
              "posfuse", "probfuse", "segfuse", "slidefuse")


def _named(runs: Mapping[str, Any] | Sequence[Any]) -> dict[str, Run]:
    from ..evaluation.evaluating import as_run

    if isinstance(runs, Mapping):
        items = [(str(name), as_run(run, copy=False)) for name, run in runs.items()]
    elif isinstance(runs, (str, bytes)):
        raise InputError("fuse takes several runs (a list, or a mapping name -> run); got one string.",
                         fix="give fuse({'bm25': 'bm25.run', 'splade': 'splade.run'}).")
    else:
        read = [as_run(run, copy=False) for run in runs]
        items = [(run.name or f"run{i + 1}", run) for i, run in enumerate(read)]
    named = dict(items)
    if len(named) != len(items):
        raise InputError(f"two runs share a name ({', '.join(n for n, _ in items)}); the recipe names each part.",
                         fix="give the runs as a mapping of distinct names, fuse({'bm25': ..., 'splade': ...}).")
    if len(named) < 2:
        raise InputError(f"fusion combines at least two runs; got {len(named)}.", fix="give two or more runs.")
    first, *others = named.items()
    for name, run in others:
        if set(run) != set(first[1]):
            only_a = sorted(set(first[1]) - set(run))
            only_b = sorted(set(run) - set(first[1]))
            raise InputError(
                f"runs {first[0]!r} and {name!r} rank different queries ({len(only_a)} only in {first[0]!r}: "
                f"{', '.join(only_a[:3])}; {len(only_b)} only in {name!r}: {', '.join(only_b[:3])}); ranx fuses runs "
                f"over one set of queries.", fix="keep the queries every run ranks in each run before fusing.")
    return named


def _to_ranx(run: Run) -> Any:
    """ranx's ``Run`` of ``run``, each query's documents in evalbridge's order: what ``ranx.Run(dict)`` builds
    (ranx's own numba helpers, the queries sorted by id), but for its sort of each query by score, unstable on
    equal scores, replaced by :func:`evalbridge.common.ranking.rank`."""
    import numpy as np
    import ranx
    from numba.typed import List as TypedList
    from ranx.data_structures.common import create_bulk, sort_dict_by_key

    queries = [q for q in run if run[q]]
    orders = [rank(run[q]) for q in queries]
    width = max(len(doc) for order in orders for doc in order)
    docs = TypedList([np.array(order, dtype=f"<U{width}") for order in orders])
    scores = TypedList([np.array([run[q][doc] for doc in order], dtype=np.float64)
                        for q, order in zip(queries, orders)])
    converted = ranx.Run(name=run.name)
    converted.run = sort_dict_by_key(create_bulk(TypedList(queries), docs, scores))
    converted.sorted = True
    return converted


def _recipe(method: str, norm: str | None, names: Sequence[str], params: Mapping[str, Any]) -> str:
    shown = []
    for key, value in params.items():
        if isinstance(value, (int, float)):
            shown.append(f"{key}={value:g}")
        elif isinstance(value, (list, tuple)) and all(isinstance(v, (int, float)) for v in value):
            shown.append(f"{key}=" + ", ".join(f"{v:g}" for v in value))
        else:
            shown.append(f"{key} trained")
    normed = "" if method in RANK_BASED or norm is None else f"[{norm}]"
    return f"{method}{normed}({', '.join(names)}{'; ' if shown else ''}{'; '.join(shown)})"


def fuse(runs: Mapping[str, Any] | Sequence[Any], *, method: str = "rrf", norm: str | None = "min-max",
         params: Mapping[str, Any] | None = None, qrels: Any = None, train: Sequence[str] | None = None,
         metric: str = "ndcg@10", name: str | None = None) -> Run:
    """Fuse ``runs`` into one run (see the module docstring).

    Args:
        runs: a mapping name -> run, or a sequence of runs (named by their own names), each anything evalbridge
            reads as a run (a file, a table, a dict, a :class:`Run`, a ranx ``Run``); all over the same queries.
        method: one of :data:`METHODS` (ranx's names).
        norm: one of :data:`NORMS`, applied to every run first (``min-max``: ranx's default).
        params: the method's parameters (:data:`METHODS`), given.
        qrels, train: judgements and the ids of the queries the parameters are learnt on (ranx's
            ``optimize_fusion``), instead of ``params``; evaluate the fused run on the other queries.
        metric: what the training maximises, in ranx's spelling (``ndcg@10``, ``map@100``, ``recall@1000``).
        name: the fused run's name (default: its recipe).

    Returns:
        The fused :class:`Run`, over every query of the inputs.

    Raises:
        InputError: fewer than two runs, runs over different queries, an unknown method or normalisation, params
            and a training split both or neither where the method needs them, training queries without judgements.
    """
    import ranx

    # the declared rules of every door (a fusion: section's keys, the command's flags): one message for a bad value
    check_parameters(FUSION_PARAMETERS, {"method": method, "metric": metric, **({} if norm is None else {"norm": norm})})
    named = _named(runs)
    given = dict(params or {})
    unknown = sorted(set(given) - set(METHODS[method]))
    if unknown:
        raise InputError(f"{method} takes {', '.join(METHODS[method]) or 'no parameter'}; got {', '.join(unknown)}.",
                         fix=f"give params with the keys {', '.join(METHODS[method]) or '(none)'}.")
    _check_weights(given, list(named))
    if qrels is not None or train is not None:
        _check_metric(metric)
    converted = [_to_ranx(run) for run in named.values()]
    notes: list[str] = []
    if qrels is not None or train is not None:
        if not METHODS[method]:
            raise InputError(f"{method} has no parameter to learn; a training split changes nothing.",
                             fix="leave qrels and train out, or choose a method with parameters (wsum, rrf, ...).")
        if given:
            raise InputError("fuse takes params or a training split (qrels and train) to learn them, not both.",
                             fix="leave params out to learn them, or qrels and train out to use them.")
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="unsafe cast")
            given = _learnt(list(named.values()), qrels, train, method, norm, metric)
        notes.append(f"parameters learnt by ranx's optimize_fusion on {len(train or ())} training queries "
                     f"({metric}): evaluate the fused run on the others")
    else:
        missing = [p for p in METHODS[method] if p not in given and p not in DEFAULTS.get(method, {})]
        if missing:
            raise InputError(
                f"{method} needs {', '.join(missing)}" + (", learnt from judged queries" if method in TRAINED else "")
                + "; none was given.",
                fix=f"give params={{{', '.join(repr(p) + ': ...' for p in missing)}}}, or qrels= and train= (the "
                    f"ids of training queries) for ranx to learn them.")
        given = {**DEFAULTS.get(method, {}), **given}
        notes.append("parameters " + ("given" if params else "ranx's defaults") if METHODS[method] else
                     "no parameter")
    with warnings.catch_warnings():  # ranx's min-max normalisation casts a count unsafely (numba warns, harmless)
        warnings.filterwarnings("ignore", message="unsafe cast")
        fused = ranx.fuse(converted, norm=norm, method=method, params=given)
    recipe = _recipe(method, norm, list(named), given)
    notes.append("the inputs' tied scores ranked by evalbridge's rule (score, then doc id descending), not ranx's sort")
    return Run(fused.to_dict(), name=name or recipe, notes=(f"fused: {recipe}", *notes))


def _check_weights(params: Mapping[str, Any], names: Sequence[str]) -> None:
    """``weights``: one number per run, in the runs' order (ranx pairs them with the runs one by one, so a list of
    another length would weigh some runs by nothing, and one number is no list)."""
    if "weights" not in params:
        return
    weights = params["weights"]
    numbers = isinstance(weights, Sequence) and not isinstance(weights, (str, bytes)) and all(
        isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) for w in weights)
    if not numbers or len(weights) != len(names):
        raise InputError(f"weights takes one number per run ({len(names)}: {', '.join(names)}); got {weights!r:.60}.",
                         fix=f"give e.g. weights={[round(1 / len(names), 2)] * len(names)}, in the runs' order.")


def _check_metric(metric: str) -> None:
    """What the training maximises, in ranx's spelling, checked before any work by ranx's own reading of it (its
    error would otherwise come from inside its search)."""
    from ranx.meta.evaluate import extract_metric_and_params
    from ranx.metrics import metric_switch

    try:
        metric_switch(extract_metric_and_params(metric)[0])
    except (ValueError, IndexError):
        raise InputError(f"metric {metric!r} is not a measure ranx can train on.",
                         fix="name one in ranx's spelling: ndcg@10, map@100, recall@1000, precision@10, mrr, "
                             "r-precision, hits, hit_rate, f1, ndcg_burges, bpref.") from None


def _learnt(runs: list[Run], qrels: Any, train: Sequence[str] | None, method: str, norm: str | None,
            metric: str) -> dict[str, Any]:
    """The method's parameters learnt by ranx on the training queries (their judgements and the runs' rankings)."""
    import ranx

    from ..evaluation.evaluating import as_qrels
    from ..io.objects import to_ranx
    from ..model.data import Qrels

    if qrels is None or train is None or isinstance(train, (str, bytes)):
        raise InputError("learning fusion parameters needs the judgements (qrels=) and the training queries' ids "
                         "(train=, a list).", fix="give qrels=... and train=[query ids], or params=.")
    judged = as_qrels(qrels, copy=False)
    queries = list(dict.fromkeys(map(str, train)))
    absent = [q for q in queries if not judged.get(q) or q not in runs[0]]
    if absent or not queries:
        raise InputError(f"{len(absent)} training queries are not both judged and ranked ({', '.join(absent[:3])})"
                         if absent else "the training split holds no query.",
                         fix="train on queries the qrels judge and every run ranks.")
    train_qrels = to_ranx(Qrels({q: judged[q] for q in queries}))
    train_runs = [_to_ranx(Run({q: run[q] for q in queries}, name=run.name)) for run in runs]
    quiet = {"show_progress": False} if method in _SEARCHED else {}
    best = ranx.optimize_fusion(qrels=train_qrels, runs=train_runs, norm=norm, method=method, metric=metric, **quiet)
    return dict(best)
