"""Large RAG logs (JSON Lines) read with orjson into columnar ``Qrels`` / ``Run``: the fast path of :mod:`.rag`.

:func:`read_log_columns` reads exactly what :func:`evalbridge.io.rag.read_log` reads, and returns
``None`` for anything it might read differently or that is an error there (the caller then runs
``read_log``, whose messages name the line and the field). What it accepts, per question:

* a JSON object (orjson; it refuses what ``json`` accepts but JSON does not: NaN, lone surrogates)
  whose fields are picked as ``read_log`` picks them (the same function, the same notes);
* a str or an int question id (all of one kind), given once;
* retrieved: a list of str doc ids, or of objects whose id sub-field is a str (and whose score
  sub-field, when there is one, is a finite number below 2**53); no doc twice (found by the
  table's hashes);
* relevant: a list of str ids, or an object ``{doc: finite number}``.

Why orjson: it parses 2-3 times faster than ``json`` (which also builds every string of the log,
the cost that remains), and it reads bytes. ``json`` drops nothing silently but keeps the last of
two equal keys in an object, which ``read_log`` refuses: here the keys of every object of a line
are counted and compared with the ``"...":`` occurrences in its bytes (a key ends with a quote,
optional whitespace and a colon; anywhere else that sequence lies inside a string), so a line
with a key given twice, or with such a string, goes to ``read_log``. orjson reads integers beyond
64 bits as floats: such a value is beyond 2**53 and declined, or a float id, declined too.

The doc ids of each question go into one Arrow array per line, and the rows into a
:class:`~evalbridge.columnar.RowTable` (no Python object per row survives the line).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from itertools import chain, repeat
from operator import countOf, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .text import BOM, read_bytes

if TYPE_CHECKING:
    from ..model import Qrels, Run

__all__ = ["read_log_columns", "LARGE_BYTES"]

#: A log smaller than this is read by ``read_log`` (importing numpy and pyarrow costs more).
LARGE_BYTES = 4 << 20
#: The end of a key: its closing quote, optional whitespace, the colon.
_KEY_END = re.compile(rb'"[ \t\r\n]*:')
_SCALARS = frozenset({str, int, float, bool, type(None)})
_NUMBERS = frozenset({int, float})
#: Values below this magnitude are held exactly by float64 (the engine's columns).
_EXACT = 2.0 ** 53


class _Decline(Exception):
    """Something ``read_log`` might read differently, or reports: leave the log to it."""


def _keys(value: Any) -> int:
    """The number of keys of every object inside ``value`` (lists of scalars or flat objects at C speed)."""
    kind = type(value)
    if kind is dict:
        inner = value.values()
        n = len(value)
        return n if set(map(type, inner)) <= _SCALARS else n + sum(map(_keys, inner))
    if kind is list:
        kinds = set(map(type, value))
        if kinds <= _SCALARS:
            return 0
        if kinds == {dict} and set(map(type, chain.from_iterable(map(dict.values, value)))) <= _SCALARS:
            return sum(map(len, value))
        return sum(map(_keys, value))
    return 0


def _unique_keys(raw: bytes, obj: dict[str, Any]) -> bool:
    """True when no object of the line gives a key twice: its keys are as many as its key ends.

    Every key ends in ``"``, optional whitespace and ``:``; inside a string that sequence can only
    follow an escaped quote. So the key ends counted in the bytes are the keys written plus such
    strings, and equal to the keys parsed only when no key was dropped (and no string holds one)."""
    parsed = _keys(obj)
    if raw.count(b'":') == parsed and b'" ' not in raw and b'"\t' not in raw and b'"\r' not in raw:
        return True  # no whitespace before a colon: the plain count is the count of key ends
    return len(_KEY_END.findall(raw)) == parsed


def _finite(values: list[Any]) -> bool:
    """Every value an int or a float (not a bool), finite and below 2**53 in magnitude."""
    if not set(map(type, values)) <= _NUMBERS:
        return False
    try:
        return not values or (math.isfinite(sum(values)) and max(map(abs, values)) < _EXACT)
    except OverflowError:
        return False


def _lines(data: bytes) -> list[bytes]:
    """The lines of a JSON Lines text as ``read_log`` sees them (universal newlines: ``\\r\\n`` is
    one line end; a lone ``\\r``, also one there, declines)."""
    if data.count(b"\r") != data.count(b"\r\n"):
        raise _Decline
    return data.split(b"\n")


def read_log_columns(source: str | Path, *, query: str | None = None, retrieved: str | None = None,
                     doc: str | None = None, score: str | None = None, relevant: str | None = None,
                     min_relevance: float | None = None, name: str | None = None,
                     large_only: bool = True) -> tuple[Qrels, Run] | None:
    """``(qrels, run)`` of a JSON Lines RAG log as columnar objects, or None (see the module docstring).

    Takes the options of :func:`evalbridge.io.rag.read_log`; ``large_only`` declines a file smaller
    than :data:`LARGE_BYTES`.
    """
    path = Path(source)
    if not path.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        return None
    try:
        if not path.is_file() or (large_only and path.stat().st_size < LARGE_BYTES):
            return None
        import orjson  # noqa: F401 - missing: read_log
        import pyarrow  # noqa: F401
    except (OSError, ImportError):
        return None
    try:
        return _read(path, query, retrieved, doc, score, relevant, min_relevance, name)
    except (_Decline, InputError, KeyError, TypeError, ValueError, OverflowError):
        return None


def _read(path: Path, query: str | None, retrieved: str | None, doc: str | None, score: str | None,
          relevant: str | None, min_relevance: float | None, name: str | None) -> tuple[Qrels, Run]:
    import numpy as np
    import orjson
    import pyarrow as pa

    from ..engine.rows import shared_hash, table_from_blocks
    from ..model import Qrels, Run
    from .rag import _choose, _get

    data = read_bytes(path)
    if data.startswith(BOM):
        data = data[len(BOM):]
    names: dict[str, str] | None = None
    picked: list[str] = []
    ignored: dict[str, int] = {}
    top: set[str] = set()
    score_field, doc_field = score, doc
    if doc_field is not None and "." in doc_field or score_field is not None and "." in score_field:
        raise _Decline  # dotted sub-fields: read_log
    qids: list[Any] = []
    seen: set[Any] = set()
    run_docs: list[Any] = []
    run_values: list[Any] = []
    run_lengths: list[int] = []
    gold_docs: list[Any] = []
    gold_values: list[Any] = []
    gold_lengths: list[int] = []
    gold_ints: list[bool] = []
    loads, string = orjson.loads, pa.string()
    for n, raw in enumerate(_lines(data), 1):
        if not raw.strip():
            continue
        obj = loads(raw)
        if type(obj) is not dict or not _unique_keys(raw, obj):
            raise _Decline
        where = f"{path}:{n}"
        if names is None:
            names = {}
            for role, given in (("query", query), ("retrieved", retrieved), ("relevant", relevant)):
                names[role], note = _choose(obj, role, given, where)
                if note:
                    picked.append(note)
            top = {field.split(".", 1)[0] for field in names.values()}
            get_query, get_ranked, get_gold = (itemgetter(names[r]) if "." not in names[r] else
                                               (lambda o, f=names[r]: _get(o, f)) for r in ("query", "retrieved",
                                                                                            "relevant"))
        for key in obj:
            if key not in top:
                ignored[key] = ignored.get(key, 0) + 1
        qid, ranked, gold = get_query(obj), get_ranked(obj), get_gold(obj)
        if type(qid) not in (str, int) or qid in seen or type(ranked) is not list:
            raise _Decline
        seen.add(qid)
        qids.append(qid)
        kinds = set(map(type, ranked))
        if kinds == {dict}:
            if doc_field is None:
                doc_field, note = _choose(ranked[0], "doc", None, where)
                if note:
                    picked.append(note)
                if "." in doc_field:
                    raise _Decline
            if score_field is None and all(map(dict.__contains__, ranked, repeat("score"))):
                score_field = "score"
                picked.append("score=score")
            ids = list(map(itemgetter(doc_field), ranked))
            if not set(map(type, ids)) <= {str}:
                raise _Decline
            if score_field:
                scores = list(map(itemgetter(score_field), ranked))
                if not _finite(scores):
                    raise _Decline
                run_values.append(np.array(scores, dtype=np.float64))
            else:
                run_values.append(np.arange(len(ranked), 0, -1, dtype=np.float64))
        elif kinds <= {str}:
            ids = ranked
            run_values.append(np.arange(len(ranked), 0, -1, dtype=np.float64))
        else:
            raise _Decline
        run_docs.append(pa.array(ids, type=string))
        run_lengths.append(len(ids))
        kind = type(gold)
        if kind is dict:
            grades = list(gold.values())
            if not _finite(grades):
                raise _Decline
            ints = countOf(map(type, grades), int)
            gold_docs.append(pa.array(list(gold), type=string))
            gold_values.append(np.array(grades, dtype=np.float64))
            gold_ints.append(ints == len(grades) if ints in (0, len(grades)) else
                             np.fromiter(map(int.__instancecheck__, grades), dtype=bool, count=len(grades)))
            gold_lengths.append(len(grades))
        elif kind is list:
            if not set(map(type, gold)) <= {str}:
                raise _Decline
            unique = list(dict.fromkeys(gold))
            if unique and min_relevance is not None and min_relevance > 1:
                raise _Decline
            gold_docs.append(pa.array(unique, type=string))
            gold_values.append(np.ones(len(unique), dtype=np.float64))
            gold_ints.append(True)
            gold_lengths.append(len(unique))
        else:
            raise _Decline
    if names is None or len(set(map(type, qids))) != 1:
        raise _Decline  # no question (an error), or str and int question ids (an error in Qrels)
    query_kind = "int" if type(qids[0]) is int else "str"
    query_ids = list(map(str, qids)) if query_kind == "int" else qids
    notes: list[str] = []
    if picked:
        notes.append(f"RAG log fields picked by name: {', '.join(picked)}")
    if ignored:
        notes.append("RAG log fields ignored: " + ", ".join(f"{k} ({c} questions)" for k, c in ignored.items()))
    ids_array = pa.array(query_ids, type=string)

    def table(docs: list[Any], values: list[np.ndarray], lengths: list[int], integral: Any) -> Any:
        size = np.array(lengths, dtype=np.int64)
        keep = size > 0
        rows = table_from_blocks(query_ids, ids_array, (np.cumsum(size) - size)[keep], np.flatnonzero(keep),
                                 pa.chunked_array(docs, type=string), np.concatenate(values) if values else
                                 np.zeros(0), integral, query_kind=query_kind)
        if shared_hash(rows):
            raise _Decline  # a doc retrieved twice (read_log names it), or a collision
        return rows

    if all(flag is True for flag in gold_ints):  # (one flag per question)
        gold_integral: Any = True
    elif all(flag is False for flag in gold_ints):
        gold_integral = False
    else:
        gold_integral = np.concatenate([np.broadcast_to(f, (k,)) if np.ndim(f) == 0 else f
                                        for f, k in zip(gold_ints, gold_lengths)])
    where = str(path)
    return (Qrels(table(gold_docs, gold_values, gold_lengths, gold_integral), min_relevance=min_relevance,
                  source=where, notes=tuple(notes)),
            Run(table(run_docs, run_values, run_lengths, False), name=name, source=where, notes=tuple(notes)))
