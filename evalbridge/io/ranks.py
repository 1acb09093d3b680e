"""Ranks: a column or field holding each document's rank (1 = best) turned into scores, and ranks mistaken for scores.

Every format that names its columns or fields takes a ``rank`` role beside ``score`` (``rank=`` in Python,
``--columns rank=position``, ``columns: {rank: position}``); the mapping format takes ``rank=True`` (its
values are ranks). A rank is a whole number >= 1, given once per query; the scores are
``max_rank + 1 - rank`` per query, as the MS MARCO reader makes them: strictly decreasing down the
ranking, so every backend sees the order the ranks give. The notes of the run say so.

Two ways a rank passes for a score are stopped here:

* a column whose name says rank or position (``rank``, ``position``, ``doc_rank``...) named as the score is
  refused, with the fix (``rank=...``): scores are higher-is-better, ranks lower-is-better, and the ranking
  would be reversed (:func:`refuse_as_score`);
* integer scores that rise with the row order in every query (1, 2, 3...) are read, with an
  :class:`~evalbridge.errors.EvalbridgeWarning` and a note (:func:`rising_note`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InputError, warn
from ..common.values import check_value
from ..common.wording import option

if TYPE_CHECKING:
    import numpy as np

    from ..model.columnar import RowTable

__all__ = ["says_rank", "refuse_as_score", "rank_value", "scores_from_ranks", "table_from_ranks", "note",
           "rising_note", "rising_in_rows", "rising_in_lists", "warn_rising"]

#: The words that make a column name say rank (its last word: ``doc_rank``, ``position``; not ``rank_score``).
RANK_WORDS = frozenset({"rank", "ranking", "position", "pos"})


def says_rank(name: object) -> bool:
    """True when the last word of ``name`` says rank or position (``rank``, ``Rank``, ``doc_rank``, ``docRank``).

    >>> [says_rank(n) for n in ("rank", "docRank", "position", "rank_score", "score", "bm25")]
    [True, True, True, False, False, False]
    """
    words = re.findall(r"[a-z]+|[0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", str(name)).lower())
    return bool(words) and words[-1] in RANK_WORDS


def refuse_as_score(name: str, *, where: str | None, what: str = "column") -> None:
    """Refuse ``name``, named as the score, when it says rank (see the module docstring)."""
    if says_rank(name):
        raise InputError(f"the {what} {name!r} is named as the score, but its name says rank: scores are higher-is-"
                         f"better and ranks lower-is-better, so the ranking would be reversed.", source=where,
                         fix=f"use {option('rank', name, column=True)}: its values then become scores max_rank + 1 - "
                             f"rank per query.")


def note(name: str) -> str:
    """The note of a run whose scores come from ranks."""
    return f"ranks ({name}) turned into scores max_rank + 1 - rank per query"


def rank_value(value: object, *, label: str = "rank", at: str = "", source: str | None = None,
               line: int | None = None, query_id: str | None = None) -> int:
    """A rank: a whole number >= 1 (an int, or a float that is one)."""
    number = check_value(value, label=label, at=at, source=source, line=line, query_id=query_id)
    if number < 1 or number != int(number):
        raise InputError(f"{label} {value!r}{' in ' + at if at else ''} is not a whole number >= 1.", source=source,
                         line=line, query_id=query_id, fix="ranks start at 1 (the best document); 0-based ranks: add 1.")
    return int(number)


def scores_from_ranks(ranks: Mapping[Any, int], *, where: str | None = None, query_id: str | None = None,
                      place: Callable[[Any], str] = lambda doc: f"doc {doc!r}") -> dict[Any, float]:
    """``{doc: max_rank + 1 - rank}`` of one query's ``{doc: rank}``; a rank given twice is refused."""
    seen: dict[int, Any] = {}
    for doc, rank in ranks.items():
        if rank in seen:
            raise InputError(f"rank {rank} is given twice ({place(seen[rank])} and {place(doc)}).", source=where,
                             query_id=query_id, fix="each document of a query has its own rank.")
        seen[rank] = doc
    top = max(ranks.values(), default=0) + 1
    return {doc: float(top - rank) for doc, rank in ranks.items()}


def table_from_ranks(rows: RowTable, *, place: Callable[[int], tuple[str | None, int | None, str]]) -> RowTable:
    """The rows with their ranks (whole numbers >= 1, checked by the caller) turned into scores
    ``max_rank + 1 - rank`` per query, in columns; a rank given twice in a query is refused, ``place(row)``
    giving (source, line, "row n") of a row."""
    import dataclasses

    import numpy as np

    from ..model.columnar import per_row

    ranks = rows.values
    n = len(ranks)
    if n == 0:
        return rows
    repeat = _repeated_rank(rows)
    if repeat is not None:
        first, second = repeat
        source, line, _ = place(second)
        qid = rows.query_ids[int(rows.codes(np.array([second]))[0])]
        at = f"rows {first} and {second}" if source is None else f"lines {place(first)[1]} and {line}"
        raise InputError(f"rank {int(ranks[second])} is given twice ({at}).", source=source,
                         line=line, query_id=qid, fix="each document of a query has its own rank.")
    block_max = np.maximum.reduceat(ranks, rows.block_start)
    query_max = np.zeros(len(rows.query_ids), dtype=np.float64)
    np.maximum.at(query_max, rows.block_code, block_max)
    scores = per_row(query_max[rows.block_code], rows.block_lengths, n)  # (a new array: changed in place)
    scores += 1.0
    scores -= ranks
    scores.flags.writeable = False
    integral = np.broadcast_to(np.False_, (n,))
    return dataclasses.replace(rows, values=scores, integral=integral)


def _repeated_rank(rows: RowTable) -> tuple[int, int] | None:
    """(first row, repeat) of a rank given twice in one query, or None. One pass when each query is one block
    of rising (or falling) ranks, the usual layout; else one sort of (query, rank) keys."""
    import numpy as np

    ranks = rows.values
    if len(rows.block_start) == len(rows.query_ids) and (_monotone(ranks, rows.block_start, 1.0)
                                                          or _monotone(ranks, rows.block_start, -1.0)):
        return None  # each query one block, its ranks rising (or falling): each rank once
    codes = rows.codes()
    key = codes.astype(np.float64) * (float(ranks.max()) + 1.0) + ranks
    order = np.argsort(key, kind="stable")
    same = np.flatnonzero(key[order][1:] == key[order][:-1])
    if len(same) == 0:
        return None
    pairs = np.stack([order[same], order[same + 1]], axis=1)
    pairs.sort(axis=1)
    i = int(np.argmin(pairs[:, 1]))
    return int(pairs[i, 0]), int(pairs[i, 1])


def _monotone(values: np.ndarray, block_start: np.ndarray, sign: float) -> bool:
    """True when ``values`` rise (``sign`` 1) or fall (-1) strictly inside every block (one temporary array)."""
    import numpy as np

    step = np.diff(values)
    step[block_start[1:] - 1] = sign  # the step from one block to the next does not count
    if sign < 0:
        np.negative(step, out=step)
    return bool(np.all(step > 0))


def rising_note(name: str, fix: str | None = None) -> str:
    """The note (and warning) of integer scores that rise with the row order of every query; ``fix``: how the
    ranks are named (default: the rank role naming the column ``name``)."""
    return (f"the scores ({name}) are whole numbers that rise with the row order in every query (1, 2, 3...), as "
            f"ranks do; they are read as scores (higher is better). If they are ranks, use "
            f"{fix or option('rank', name, column=True)}")


def rising_in_rows(rows: RowTable) -> bool:
    """True when the (integer) values rise strictly with the row order in every query, one of which has two rows
    or more; only for tables whose queries are one block each (else the row order within a query is not
    that of the blocks)."""
    if len(rows.block_start) != len(rows.query_ids) or rows.n_rows == len(rows.query_ids):
        return False
    return _monotone(rows.values, rows.block_start, 1.0)


def rising_in_lists(queries: Iterable[Iterable[float]]) -> bool:
    """:func:`rising_in_rows` for rows given query by query (JSON Lines, RAG logs): whole numbers rising in
    every query, one of which has two values or more."""
    longer = False
    for values in queries:
        values = list(values)
        if any(v != int(v) for v in values) or any(b <= a for a, b in zip(values, values[1:])):
            return False
        longer = longer or len(values) > 1
    return longer


def warn_rising(name: str, *, stacklevel: int = 2, fix: str | None = None) -> str:
    """Warn that the scores look like ranks (:func:`rising_note`) and return the note."""
    text = rising_note(name, fix)
    warn(text + ".")
    return text
