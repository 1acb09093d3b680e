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
from typing import Any

from ..errors import InputError
from ..common.wording import option
from . import distances, ranks

__all__ = ["CANDIDATES", "ROLE_OPTIONS", "ORDER_ROLES", "SCORED", "order_role", "scoring_notes", "pick"]

#: role -> the column names it is known by, in no particular priority (any two present is ambiguous).
CANDIDATES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "query": ("query_id", "qid", "query-id", "queryid", "query", "topic", "topic_id", "question_id"),
    "doc": ("doc_id", "docid", "corpus-id", "corpus_id", "docno", "doc", "document_id", "passage_id", "pid"),
    "grade": ("relevance", "rel", "grade", "label", "judgement", "judgment", "judge_score", "score"),
    "score": ("score", "sim", "similarity", "rank_score"),
    "rank": ("rank", "position"),  # runs, when no column looks like the score (io/ranks.py)
    "distance": ("distance", "_distance", "dist"),  # runs, likewise (io/distances.py)
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
    "distance": "runs: the column / field holding the distance (lower is better, as vector stores return it), read "
                "as scores -distance",
})
#: the roles that order a run, one of which a run is read by: higher-is-better, 1 = best, lower-is-better
ORDER_ROLES = ("score", "rank", "distance")
#: the words of every note saying a run's values were turned into scores (:func:`.ranks.note`, :func:`.distances.note`)
SCORED = "turned into scores"


def scoring_notes(notes: Sequence[str]) -> tuple[str, ...]:
    """The notes of a run that say how its values became scores (ranks, distances): what the provenance of an
    evaluation records of its run."""
    return tuple(n for n in notes if SCORED in n)


def order_role(names: Mapping[str, str], kind: str) -> str:
    """The value role of the columns :func:`pick` chose: ``rank`` or ``distance`` when one was picked, else the
    value role of ``kind`` (``grade`` / ``score``)."""
    return next((role for role in ORDER_ROLES[1:] if role in names), VALUE_ROLE[kind])


def refuse_as_score(name: str, *, where: str | None, what: str = "column") -> None:
    """Refuse ``name``, named as the score, when it says rank or distance (:mod:`.ranks`, :mod:`.distances`)."""
    ranks.refuse_as_score(name, where=where, what=what)
    distances.refuse_as_score(name, where=where, what=what)


def check_order(given: Mapping[str, Any], kind: str, *, where: str | None, what: str = "column") -> None:
    """Refuse ``rank`` or ``distance`` for qrels, two of ``score`` / ``rank`` / ``distance`` at once, and a
    score whose name says rank or distance."""
    value = VALUE_ROLE[kind]
    named = [role for role in ORDER_ROLES if given.get(role) is not None]
    for role in named:
        if role != "score" and kind != "run":
            raise InputError(f"option {role!r} names the {role} {what} of runs, but {kind} are read here.",
                             source=where, fix=f"use {value}= instead.")
    if len(named) > 1:
        both = " and ".join(f"{role}={given[role]!r}" for role in named)
        raise InputError(f"{'both ' if len(named) == 2 else ''}{both} are given; a run is ordered by one of them.",
                         source=where, fix=f"give either {' or '.join(f'{role}=' for role in named)}.")
    if "score" in named and kind == "run":
        refuse_as_score(given["score"], where=where, what=what)


def _run_order(have: Sequence[str], given: Mapping[str, str], *, where: str | None, what: str) -> str:
    """The role that orders a run no score was named for: the rank or distance named; else ``score`` when a column
    looks like one; else ``rank`` or ``distance`` when one column looks like it (two: refused, naming both)."""
    named = [role for role in ORDER_ROLES[1:] if role in given]
    if named:
        return named[0]
    if any(c in have for c in CANDIDATES["score"]):
        return "score"
    found = {role: next(c for c in CANDIDATES[role] if c in have)
             for role in ORDER_ROLES[1:] if any(c in have for c in CANDIDATES[role])}
    if len(found) > 1:
        columns = ", ".join(f"{role}={name!r}" for role, name in found.items())
        raise InputError(f"no {what} looks like the score, and several could order the run ({columns}); the "
                         f"{what}s are {', '.join(map(repr, have))}.", source=where,
                         fix=f"name the one to rank by: {' or '.join(option(r, column=True) for r in found)}.")
    return next(iter(found), "score")


def pick(available: Sequence[str], kind: str, given: Mapping[str, str], *, where: str | None,
         what: str = "column") -> tuple[dict[str, str], tuple[str, ...]]:
    """``({role: name}, notes)`` for ``query``, ``doc`` and the value role of ``kind``: for a run ``rank`` or
    ``distance`` instead of ``score`` when one is named (or no column looks like the score and one like the rank
    or the distance); a column whose name says rank or distance named as the score is refused (:mod:`.ranks`,
    :mod:`.distances`).

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
    check_order(given, kind, where=where, what=what)
    have = [str(c) for c in available]
    if kind == "run" and "score" not in given:
        value = _run_order(have, given, where=where, what=what)
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
            ranks = (f" (a column of ranks, 1 = best: {option('rank', column=True)}; of distances, lower is better: "
                     f"{option('distance', column=True)})" if role == "score" else "")
            raise InputError(f"{problem}; the {what}s are {', '.join(map(repr, have))}.", source=where,
                             fix=f"{hint}name it: {option(role, column=True)}{ranks}.")
        chosen[role] = found[0]
        picked.append(f"{role}={found[0]}")
    notes = (f"{what}s picked by name: {', '.join(picked)}",) if picked else ()
    return chosen, notes
