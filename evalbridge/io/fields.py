"""Which column (or JSON field) holds what: the names people use, and how one is picked.

Tables (CSV, TSV, Parquet, DataFrames, Arrow, Polars) and JSON Lines rows hold one (query, doc,
value) per row. The user may name the columns (``query=``, ``doc=``, ``grade=`` / ``score=``);
otherwise each role takes the one column among its usual names (:data:`CANDIDATES`), and the
choice is recorded in the notes of what was read. Two usual names present for one role (e.g.
``qid`` and ``query_id``) is an error that lists them, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType

from ..errors import InputError
from ..common.wording import option
from .ranks import refuse_as_score

__all__ = ["CANDIDATES", "ROLE_OPTIONS", "pick"]

#: role -> the column names it is known by, in no particular priority (any two present is ambiguous).
CANDIDATES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "query": ("query_id", "qid", "query-id", "queryid", "query", "topic", "topic_id", "question_id"),
    "doc": ("doc_id", "docid", "corpus-id", "corpus_id", "docno", "doc", "document_id", "passage_id", "pid"),
    "grade": ("relevance", "rel", "grade", "label", "judgement", "judgment", "judge_score", "score"),
    "score": ("score", "sim", "similarity", "rank_score"),
    "rank": ("rank", "position"),  # runs, when no column looks like the score (io/ranks.py)
})

#: value role of each kind
VALUE_ROLE = MappingProxyType({"qrels": "grade", "run": "score"})
#: the options that name columns, with their meaning
ROLE_OPTIONS: Mapping[str, str] = MappingProxyType({
    "query": "the column / field holding the query id",
    "doc": "the column / field holding the doc id",
    "grade": "qrels: the column / field holding the relevance grade",
    "score": "runs: the column / field holding the score",
    "rank": "runs: the column / field holding the rank (1 = best), read as scores max_rank + 1 - rank per query",
})


def pick(available: Sequence[str], kind: str, given: Mapping[str, str], *, where: str | None,
         what: str = "column") -> tuple[dict[str, str], tuple[str, ...]]:
    """``({role: name}, notes)`` for ``query``, ``doc`` and the value role of ``kind``: for a run ``rank``
    instead of ``score`` when the ranks are named (or no column looks like the score and one like the rank);
    a column whose name says rank named as the score is refused (:mod:`.ranks`).

    Raises:
        InputError: a named column that is missing (with the closest names), no usual name for a
            role, or several.
    """
    import difflib

    value = VALUE_ROLE[kind]
    other = VALUE_ROLE["run" if kind == "qrels" else "qrels"]
    if other in given and value not in given:
        raise InputError(f"option {other!r} names the {other} {what} of {'runs' if other == 'score' else 'qrels'}, "
                         f"but {kind} are read here.", source=where, fix=f"use {value}= instead.")
    if "rank" in given:
        if kind != "run":
            raise InputError(f"option 'rank' names the rank {what} of runs, but {kind} are read here.", source=where,
                             fix=f"use {value}= instead.")
        if "score" in given:
            raise InputError(f"both score={given['score']!r} and rank={given['rank']!r} are given; a run is "
                             f"ordered by one of them.", source=where, fix="give either score= or rank=.")
    have = [str(c) for c in available]
    if kind == "run":
        if "score" in given:
            refuse_as_score(given["score"], where=where, what=what)
        elif "rank" in given or (not any(c in have for c in CANDIDATES["score"])
                                 and any(c in have for c in CANDIDATES["rank"])):
            value = "rank"
    chosen: dict[str, str] = {}
    picked: list[str] = []
    for role in ("query", "doc", value):
        name = given.get(role)
        if name is not None:
            if name not in have:
                close = difflib.get_close_matches(str(name), have, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                raise InputError(f"there is no {what} {name!r} (the {what}s are {', '.join(map(repr, have))}).",
                                 source=where, fix=f"{hint}name the {what}s with {role}=....")
            chosen[role] = name
            continue
        found = [c for c in CANDIDATES[role] if c in have and c not in chosen.values()]
        if len(found) != 1:
            problem = (f"no {what} looks like the {role} ({', '.join(CANDIDATES[role])} were looked for)"
                       if not found else f"several {what}s could be the {role}: {', '.join(map(repr, found))}")
            close = [] if found else difflib.get_close_matches(CANDIDATES[role][0], have, n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            ranks = f" (a column of ranks, 1 = best: {option('rank', column=True)})" if role == "score" else ""
            raise InputError(f"{problem}; the {what}s are {', '.join(map(repr, have))}.", source=where,
                             fix=f"{hint}name it: {option(role, column=True)}{ranks}.")
        chosen[role] = found[0]
        picked.append(f"{role}={found[0]}")
    notes = (f"{what}s picked by name: {', '.join(picked)}",) if picked else ()
    return chosen, notes
