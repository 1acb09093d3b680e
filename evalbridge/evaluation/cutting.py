"""The cut every evaluation makes before a backend sees the run: ``depth`` and ``judged_only`` (trec_eval -M, -J).

:func:`evalbridge.evaluation.evaluating.prepare` applies it to the run in memory, and the Spark engine to each bucket's rows
(:mod:`evalbridge.spark`), so both cut the same documents.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import InputError
from ..model.data import Qrels, Run
from ..common.ranking import rank, rank_groups
from ..model.settings import Settings

__all__ = ["Cut", "cut_run"]


@dataclass(frozen=True)
class Cut:
    """The run as the metrics see it (:func:`cut_run`), and what was removed to get it."""

    run: Run
    beyond_depth: int = 0
    unjudged: int = 0


def cut_run(qrels: Qrels, run: Run, conventions: Settings) -> Cut:
    """Apply ``depth`` and ``judged_only`` once, before any backend, as trec_eval applies ``-M`` and ``-J``.

    Each evaluated query's ranking (under ``conventions``' tie rule and precision) is cut after
    ``depth`` documents, then, with ``judged_only``, loses every document without a judgement or
    with a negative grade. What remains keeps its scores and input order, so any backend ranks it
    as before; the counts of removed documents go to the provenance. Queries absent from the qrels
    are left as they are (they are ignored, and counted as such).

    Example:
        >>> qrels = Qrels({"q": {"a": 1, "b": -1, "c": 0}})
        >>> run = Run({"q": {"a": 4.0, "x": 3.0, "b": 2.0, "c": 1.0}})
        >>> cut = cut_run(qrels, run, Settings(judged_only=True, depth=3))
        >>> dict(cut.run["q"]), cut.beyond_depth, cut.unjudged
        ({'a': 4.0}, 1, 2)
    """
    depth, judged_only = conventions.depth, conventions.judged_only
    if depth is None and not judged_only:
        return Cut(run)
    rows: dict[str, Mapping[str, float]] = {}
    beyond = unjudged = 0
    for qid, scores in run.items():
        grades = qrels.get(qid)
        if grades is None:
            rows[qid] = scores
            continue
        kept = scores
        if depth is not None and len(scores) > depth:
            top = _top(scores, depth, conventions, qid)
            kept = {doc: score for doc, score in scores.items() if doc in top}
            beyond += len(scores) - depth
        if judged_only:
            before = len(kept)
            kept = {doc: score for doc, score in kept.items() if grades.get(doc, -1) >= 0}
            unjudged += before - len(kept)
        rows[qid] = kept
    return Cut(Run(rows, name=run.name, source=run.source, allow_empty=True, logged=run.logged), beyond, unjudged)


def _top(scores: Mapping[str, float], depth: int, conventions: Settings, qid: str) -> set[str]:
    """The ``depth`` best documents of one query. Under ``ties="average"`` no order is chosen: the cut
    must fall between two tie groups (then every order keeps the same documents), else it is refused."""
    if conventions.ties != "average":
        return set(rank(scores, ties=conventions.ties, score_precision=conventions.score_precision)[:depth])
    top: set[str] = set()
    for group in rank_groups(scores, score_precision=conventions.score_precision):
        if len(top) + len(group) > depth:
            if len(top) < depth:
                raise InputError(
                    f"depth={depth} cuts a group of {len(group)} documents tied at ranks {len(top) + 1}-"
                    f"{len(top) + len(group)}: which of them stay would depend on an order, and ties='average' "
                    f"averages over every order of the metrics, not of the cut.", query_id=qid,
                    fix=f"use depth={len(top)} or {len(top) + len(group)} (the edges of that group), or a tie rule "
                        f"(ties='docid_desc', as trec_eval -M).")
            break
        top.update(group)
    return top
