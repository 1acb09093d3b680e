"""The items of a prediction-powered evaluation and their values: each query's metric, or each judged pair's share.

Sampled by query, an item is a query and its values are :func:`evalbridge.evaluate`'s per-query values under the
judge's labels (every query) and under the humans' (the labelled queries). Sampled by pair, an item is a judged
pair and its value is its share of its query's metric: the metric of the query with that pair judged alone at its
grade (one evaluation of every such one-pair query per grade, the run kept down to the documents that can rank
within the deepest cut-off), times ``N / Q`` so that the mean over the ``N`` pairs is the mean over the ``Q``
queries; the shares of each query are checked to add up to the judge's evaluation of it. The checks of the two
sets of labels (:func:`check_labels`) are here too: they say which items there are.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from ..model.data import Qrels
    from ..model.settings import Settings

__all__ = ["Samples", "UNITS", "LINEAR", "item_values", "check_labels", "pairs_of", "where"]

#: sampling unit -> what was sampled
UNITS: Mapping[str, str] = {"query": "queries, each labelled whole", "pair": "judged pairs"}
#: metric family -> why it is a sum over pairs of (weight of the rank) x (fixed gain of the grade)
LINEAR: Mapping[str, str] = {"P": "a relevant document's share is 1/k when ranked within k",
                             "DCG": "a document's share is its grade's gain times its rank's discount"}

@dataclass(frozen=True)
class Samples:
    """What the plan and the next batch read: each row's human values of the labelled items (rows x n) and the
    judge's of every item (rows x N), the items (query, doc or None), the labelled ones, and every judged pair's
    grades (the judge's; the humans' or nan) with the item it belongs to, and each item's reach (0: its label can
    change no estimate)."""

    human: Any
    judge: Any
    items: tuple[tuple[str, str | None], ...]
    labelled: Any
    pair_item: Any
    pair_judge: Any
    pair_human: Any
    pairs: tuple[tuple[str, str], ...]
    reach: Any


def pairs_of(qrels: Qrels) -> dict[tuple[str, str], float]:
    return {(q, d): float(g) for q, docs in qrels.items() for d, g in docs.items()}


def where(qrels: Qrels) -> str:
    return f" ({qrels.source})" if qrels.source else ""


def check_labels(judge: Qrels, human: Qrels, unit: str, scale: tuple[float, float] | None) -> None:
    """Refuse human labels the judge never gave, grades on two scales, a query labelled in part (unit query)."""
    judged, labelled = pairs_of(judge), pairs_of(human)
    stray = [pair for pair in labelled if pair not in judged]
    if stray:
        q, d = stray[0]
        raise InputError(f"{len(stray)} human-labelled pair(s){where(human)} have no label from the judge"
                         f"{where(judge)}, e.g. doc {d!r} (human grade {labelled[q, d]:g}).", query_id=q,
                         fix="give the judge's labels of every pair (the judge labels them all, the humans a "
                             "sample of them), or drop those pairs from the human labels.")
    if scale is not None and not (isinstance(scale, (tuple, list)) and len(scale) == 2
                                  and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                                          for v in scale) and scale[0] < scale[1]):
        raise InputError(f"scale must be the lowest and the highest grade, two numbers, the first below the second; "
                         f"got {scale!r}.", fix="e.g. scale=(0, 3).")
    low, high = scale if scale is not None else (min(labelled.values()), max(labelled.values()))
    for name, qrels, grades in (("judge", judge, judged), ("human", human, labelled)):
        out = [(pair, g) for pair, g in grades.items() if not low <= g <= high]
        if out:
            (q, d), g = out[0]
            values = sorted({g for _, g in out})
            raise InputError(
                f"{len(out)} {name} grade(s){where(qrels)} lie outside the scale {low:g}..{high:g}"
                f"{'' if scale is not None else ' of the human labels'}: {', '.join(f'{v:g}' for v in values[:5])}"
                f" (e.g. doc {d!r}).", query_id=q,
                fix="map the grades onto one scale first (e.g. 5 -> 3), drop those pairs, or name the scale when "
                    "the human sample misses a grade: scale=(0, 3).")
    if unit == "query":
        for q, docs in human.items():
            missing = [d for d in judge.get(q, {}) if d not in docs]
            if missing:
                raise InputError(f"the humans labelled {len(docs)} of the judge's {len(judge[q])} pairs of the query "
                                 f"(e.g. doc {missing[0]!r} has no human label): sampled by query, each query is "
                                 f"labelled whole.", query_id=q,
                                 fix="label the query's every judged pair, or sample by pair: unit='pair'.")


def _check_linear(requests: Sequence[Any]) -> None:
    for r in requests:
        family = r.metric.name
        if family not in LINEAR:
            raise InputError(
                f"{r.label}: sampled by pair, a metric must be a sum over its pairs of a rank weight times a fixed "
                f"gain of the grade ({', '.join(f'{k}: {v}' for k, v in LINEAR.items())}); {family} is not "
                f"(a pair's label changes the share of others, e.g. through a normaliser or the first relevant rank).",
                fix="sample by query (unit='query'; any metric), or ask P@k or DCG@k.")


def _per_query(values: Mapping[str, float], ids: Sequence[str], what: str) -> list[float]:
    missing = [q for q in ids if q not in values]
    if missing:
        raise InputError(f"the evaluation {what} gives no value for {len(missing)} quer(ies), e.g. {missing[0]!r}: "
                         f"a setting left them out (no_relevant='skip'?).", query_id=missing[0],
                         fix="keep every query (no_relevant='zero', missing_queries='zero').")
    return [values[q] for q in ids]


def _query_values(judge: Qrels, human: Qrels, run: Any, requests: Sequence[Any], options: Settings,
                  ) -> dict[str, tuple[list[float], list[float]]]:
    """Each metric's per-query values under the judge (every query) and the humans (the labelled queries)."""
    from ..evaluation.evaluating import evaluate

    asked = {r.label: r.metric for r in requests}
    by_judge = evaluate(judge, run, asked, settings=options)
    by_human = evaluate(human, run, asked, settings=options)
    ids = list(judge)
    labelled = [q for q in ids if q in human]
    return {label: (_per_query(by_judge.query(label), ids, "under the judge's labels"),
                         _per_query(by_human.query(label), labelled, "under the human labels"))
                 for label in asked}


def _pair_shares(judge: Qrels, human: Qrels, run: Any, requests: Sequence[Any], options: Settings,
                 pairs: Sequence[tuple[str, str]]) -> dict[str, tuple[Any, Any, Any]]:
    """Each metric's share of every judged pair under the judge's grade, under the human's (labelled pairs; nan
    elsewhere) and how far its grade can move it (the largest share less the smallest): the metric of the pair's
    query with that pair judged alone at that grade (one evaluation per grade)."""
    import numpy as np

    from ..evaluation.evaluating import as_run, evaluate
    from ..model.data import Qrels as QrelsType, Run

    ranked = as_run(run, ids=options.ids, duplicates=options.duplicates)
    cuts = [r.metric.k for r in requests]
    deepest = None if any(k is None for k in cuts) else max(k for k in cuts if k is not None)
    # a score as the ranking compares it (every tie policy orders by it first): float32 rounds it
    compared = (lambda x: float(np.float32(x))) if options.score_precision == "float32" else float
    kept: dict[str, dict[str, float]] = {}
    for q in judge:
        scores = dict(ranked.get(q, {}))
        if deepest is not None and len(scores) > deepest:
            floor = sorted(map(compared, scores.values()), reverse=True)[deepest - 1]
            scores = {d: s for d, s in scores.items() if compared(s) >= floor}   # below: never within the cut
        kept[q] = scores
    inside = [i for i, (q, d) in enumerate(pairs) if d in kept[q]]
    asked = {r.label: r.metric for r in requests}
    judge_grades = pairs_of(judge)
    human_grades = pairs_of(human)
    grades = sorted(set(judge_grades.values()) | set(human_grades.values()))
    share = {label: np.zeros((len(grades), len(pairs))) for label in asked}
    if inside:
        run_rows = {}
        for j, i in enumerate(inside):      # a document ranked below the pair's never changes its share
            q, d = pairs[i]
            floor = compared(kept[q][d])
            run_rows[str(j)] = {doc: score for doc, score in kept[q].items() if compared(score) >= floor}
        for g, grade in enumerate(grades):
            qrels = QrelsType({str(j): {pairs[i][1]: grade} for j, i in enumerate(inside)},
                              min_relevance=judge.min_relevance)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")         # a pair judged alone, at grade 0, has nothing relevant
                result = evaluate(qrels, Run(run_rows), asked, settings=options)
            for label in asked:
                values = result.query(label)
                share[label][g, inside] = [values.get(str(j), 0.0) for j in range(len(inside))]
    index = {grade: g for g, grade in enumerate(grades)}
    by_judge = np.array([index[judge_grades[p]] for p in pairs])
    cols = np.arange(len(pairs))
    out = {}
    for label in asked:
        human_share = np.array([share[label][index[human_grades[p]], i] if p in human_grades else math.nan
                                for i, p in enumerate(pairs)])
        out[label] = (share[label][by_judge, cols], human_share, np.ptp(share[label], axis=0))
    return out


def _check_sum(judged: Any, pairs: Sequence[tuple[str, str]], queries: Sequence[str], evaluated: Sequence[float],
               system: str, metric: str) -> None:
    """The pairs' shares of each query add up to the query's value under the judge, or the metric is refused."""
    import numpy as np

    index = {q: i for i, q in enumerate(queries)}
    sums = np.bincount([index[q] for q, _ in pairs], weights=judged, minlength=len(queries))
    expected = np.asarray(evaluated, dtype=float)
    off = np.flatnonzero(~np.isclose(sums, expected, rtol=1e-9, atol=1e-12))
    if len(off):
        q = queries[int(off[0])]
        raise InputError(f"{metric} of {system!r} is not the sum of its pairs' shares under these settings: "
                         f"{expected[off[0]]:.6g} for the query, {sums[off[0]]:.6g} summed over its pairs "
                         f"(judged_only, depth or a no_relevant policy make a pair's share depend on the others).",
                         query_id=q, fix="sample by query (unit='query'), or drop the setting.")


def item_values(judge: Qrels, human: Qrels, runs: Mapping[str, Any], requests: Sequence[Any], options: Settings,
                unit: str) -> tuple[list[tuple[str, str | None]], Any, list[tuple[str, str]],
                                    dict[tuple[str, str], tuple[Any, Any]], Any]:
    """The items (``(query, None)`` or ``(query, doc)``), which are labelled (a boolean array), every judged pair,
    per (system, metric label) the humans' values of the labelled items and the judge's of every item, and each
    item's reach (1 for a query; for a pair, whether its grade can move any share: a pair no run ranks within a
    metric's cut-off has none)."""
    import numpy as np

    from ..evaluation.evaluating import evaluate

    queries = list(judge)
    pairs = [(q, d) for q in queries for d in judge[q]]
    rows: dict[tuple[str, str], tuple[Any, Any]] = {}
    if unit == "query":
        items: list[tuple[str, str | None]] = [(q, None) for q in queries]
        labelled = np.array([q in human for q in queries], dtype=bool)
        for system, run in runs.items():
            values = _query_values(judge, human, run, requests, options)
            for label, (judged, humans) in values.items():
                rows[system, label] = (np.array(humans), np.array(judged))
        return items, labelled, pairs, rows, np.ones(len(items))
    _check_linear(requests)
    human_pairs = pairs_of(human)
    labelled = np.array([p in human_pairs for p in pairs], dtype=bool)
    scale_up = len(pairs) / len(queries)
    reach = np.zeros(len(pairs))
    for system, run in runs.items():
        shares = _pair_shares(judge, human, run, requests, options, pairs)
        evaluated = evaluate(judge, run, {r.label: r.metric for r in requests}, settings=options)
        for label, (judged, humans, spread) in shares.items():
            reach = np.maximum(reach, spread > 0)
            _check_sum(judged, pairs, queries, _per_query(evaluated.query(label), queries, "under the judge's labels"),
                       system, label)
            rows[system, label] = (scale_up * humans[labelled], scale_up * judged)
    return list(pairs), labelled, pairs, rows, reach
