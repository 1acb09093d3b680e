"""The ids of qrels and runs as messages show them: the first few, as the user wrote them, and the error of ids of
two kinds (int on one side, str on the other), for every door that pairs judgements with rankings."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from .data import Qrels, Run

__all__ = ["seen_ids", "shown_ids", "kinds_error"]


def seen_ids(data: Qrels | Run, what: str, n: int = 3) -> list[str]:
    """The first ``n`` query ids (``what="query"``) or doc ids of ``data``, as text."""
    if what == "query":
        return list(itertools.islice(data, n))
    docs: list[str] = []
    for qid in data:
        docs += [d for d in itertools.islice(data[qid], n - len(docs)) if d not in docs]
        if len(docs) >= n:
            break
    return docs


def shown_ids(ids: Iterable[str], kind: tuple[str, ...]) -> str:
    """Ids as the user wrote them: integers bare (``1``), texts quoted (``'1'``)."""
    return ", ".join(i if kind == ("int",) else repr(i) for i in ids)


def kinds_error(what: str, sides: Sequence[tuple[str, tuple[str, ...], list[str]]], fix: str) -> InputError:
    """The error of int ids on one side and str ids on the other: each side's kind and the ids it holds (as the
    user wrote them), and whether they would meet as text. ``sides``: (name, kind, first ids) twice."""
    (a, ka, ia), (b, kb, ib) = sides
    meet = set(ia) & set(ib)
    hint = f" (as text they meet: {shown_ids(sorted(meet)[:3], ('str',))})" if meet else ""
    return InputError(f"{what} ids are {'/'.join(ka)} in {a} ({shown_ids(ia, ka)}) but {'/'.join(kb)} in {b} "
                      f"({shown_ids(ib, kb)}){hint}; evalbridge does not guess that they are the same ids.", fix=fix)
