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
the cost that remains), and it reads bytes. orjson keeps the last of two equal keys in an object,
which ``read_log`` refuses: here the keys of every object of a line are counted as it is read and
compared with the colons of its bytes (outside strings a colon only ends a key), so a line with a
key given twice goes to ``read_log`` (:func:`_unique_keys`). orjson reads integers beyond 64 bits
as floats: such a value is beyond 2**53 and declined, or a float id, declined too.

The doc ids of each question go into one Arrow array per line, and the rows into a
:class:`~evalbridge.model.columnar.RowTable` (no Python object per row survives the line).
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Mapping
from itertools import chain, repeat
from operator import countOf, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ._rag_fields import RANK_FIELDS
from .text import BOM, is_gzip

if TYPE_CHECKING:
    from ..model.data import Qrels, Run

__all__ = ["read_log_columns"]
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


def _unique_keys(raw: bytes, parsed: int) -> bool:
    """True when no object of the line gives a key twice, ``parsed`` being the keys of its parsed objects.

    Outside strings a colon only ends a key, so the colons of the line are the keys written plus
    those inside strings: equal to ``parsed`` only when no key was dropped. Where strings hold colons
    (URLs), key ends are counted instead: a quote, optional whitespace, a colon (inside a string
    that sequence can only follow an escaped quote, or open a string that starts with a colon:
    a line holding one is left to ``read_log``)."""
    return _colons(raw) == parsed or len(_KEY_END.findall(raw)) == parsed


class _Rows:
    """The rows of one side (qrels or run), gathered question by question: the doc ids of each question
    into an Arrow array at once (while its strings are in the cache: 0.35 s for 7M ids, 1.1 s in
    batches of 64K), the values into a float64 array a batch at a time."""

    BATCH = 1 << 16

    def __init__(self) -> None:
        import pyarrow as pa

        self.string = pa.string()
        self.values: list[Any] = []  # the values of the current batch (ints and floats, checked per question)
        self.ints: list[bool] = []  # per row: the value is an int (qrels only)
        self.lengths: list[int] = []  # rows per question
        self.doc_chunks: list[Any] = []
        self.value_chunks: list[Any] = []

    def add(self, docs: list[Any], values: Any) -> None:
        import pyarrow as pa

        array = pa.array(docs, type=self.string)  # (raises for an id that is not a str; None: a null)
        if array.null_count:
            raise _Decline
        self.doc_chunks.append(array)
        self.values += values
        self.lengths.append(len(docs))
        if len(self.values) >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        import numpy as np

        values = np.array(self.values, dtype=np.float64)  # (ints beyond float64 raise OverflowError)
        if len(values) and not float(np.abs(values).max()) < _EXACT:  # NaN and inf fail too
            raise _Decline
        self.value_chunks.append(values)
        self.values = []

    def table(self, query_ids: list[str], ids: Any, query_kind: str, integral: Any) -> Any:
        """The :class:`~evalbridge.model.columnar.RowTable` of the rows (declined when a query holds a doc twice)."""
        import numpy as np
        import pyarrow as pa

        from ..fast.rows import shared_hash, table_from_blocks

        self.flush()
        size = np.array(self.lengths, dtype=np.int64)
        keep = size > 0
        rows = table_from_blocks(query_ids, ids, (np.cumsum(size) - size)[keep], np.flatnonzero(keep),
                                 pa.chunked_array(self.doc_chunks, type=pa.string()),
                                 np.concatenate(self.value_chunks), integral, query_kind=query_kind)
        if shared_hash(rows):
            raise _Decline  # a doc retrieved twice (read_log names it), or a collision
        return rows


def _numbers(values: list[Any]) -> list[Any]:
    """``values`` when every one is an int or a float (not a bool); the batch checks that they are finite."""
    if not set(map(type, values)) <= _NUMBERS:
        raise _Decline
    return values


def _scores_from_ranks(ranks: list[Any]) -> list[int]:
    """``max_rank + 1 - rank`` of one list's ranks: ints >= 1, each once (anything else: read_log says what)."""
    if set(map(type, ranks)) != {int} or min(ranks) < 1 or len(set(ranks)) != len(ranks):
        raise _Decline
    top = max(ranks) + 1
    return [top - r for r in ranks]


def _colons(raw: bytes) -> int:
    import numpy as np

    return int(np.count_nonzero(np.frombuffer(raw, dtype=np.uint8) == 0x3A))


def read_log_columns(source: str | Path, *, query: str | None = None, retrieved: str | None = None,
                     doc: str | None = None, score: str | None = None, rank: str | None = None,
                     relevant: str | None = None,
                     min_relevance: float | None = None, name: str | None = None,
                     large_only: bool = True, slice: str | None = None,
                     numbers: str | None = None, preset: str | None = None) -> tuple[Qrels, Run] | None:
    """``(qrels, run)`` of a JSON Lines RAG log as columnar objects, or None (see the module docstring).

    Takes the options of :func:`evalbridge.io.rag.read_log`; ``large_only`` declines a file too small to
    be worth it (:func:`evalbridge.io._arrow_trec.large_enough`: importing numpy and pyarrow costs more).
    """
    path = Path(source)
    if not path.name.lower().removesuffix(".gz").endswith((".jsonl", ".ndjson")):
        return None
    try:
        from ._arrow_trec import large_enough

        if not path.is_file() or (large_only and not large_enough(path.stat().st_size)):
            return None
        import orjson  # noqa: F401 - missing: read_log
        import pyarrow  # noqa: F401
    except (OSError, ImportError):
        return None
    try:
        log = _Log(path, query=query, retrieved=retrieved, relevant=relevant, doc=doc, score=score, rank=rank,
                   min_relevance=min_relevance, slice=slice, numbers=numbers, preset=preset)
        with (gzip.open(path, "rb") if is_gzip(path) else open(path, "rb")) as lines:
            for n, raw in enumerate(lines, 1):
                if b"\r" in raw and (raw.count(b"\r") != 1 or not raw.endswith(b"\r\n")):
                    raise _Decline  # a lone CR: a line end for read_log, inside a line here
                if n == 1 and raw.startswith(BOM):
                    raw = raw[len(BOM):]
                if raw.strip():
                    log.question(raw, n)
        return log.result(name)
    except (_Decline, InputError, KeyError, TypeError, ValueError, OverflowError, OSError, EOFError, zlib.error):
        return None  # (pyarrow's errors are ValueError and TypeError)


class _Log:
    """One reading of a log: the fields picked (on the first question, as ``read_log`` picks them), the
    notes, and the rows of both sides."""

    def __init__(self, path: Path, *, query: str | None, retrieved: str | None, relevant: str | None,
                 doc: str | None, score: str | None, rank: str | None, min_relevance: float | None,
                 slice: str | None = None, numbers: str | None = None, preset: str | None = None) -> None:
        import orjson

        from .distances import says_distance
        from .ranks import says_rank

        if any(f is not None and "." in f for f in (doc, score, rank)) or score is not None and (
                says_rank(score) or says_distance(score)) or score is not None and rank is not None:
            raise _Decline  # dotted sub-fields, a rank or distance named as the score, both: read_log (and its errors)
        # how every list is ranked, decided once for the log as read_log decides it: "score", "rank", "order"
        self.auto = score is None and rank is None
        self.mode: str | None = "score" if score is not None else "rank" if rank is not None else None
        self.rank_field = rank
        self.get_rank: Any = itemgetter(rank) if rank is not None else None
        self.rising = True  # every list of scores so far: ints rising down the list (ranks passing for scores)
        self.longer = False
        self.path, self.given, self.min_relevance = path, {"query": query, "retrieved": retrieved,
                                                           "relevant": relevant}, min_relevance
        self.doc_field, self.score_field = doc, score
        self.get_doc: Any = itemgetter(doc) if doc is not None else None
        self.get_score: Any = None
        self.names: dict[str, str] = {}
        self.picked: list[str] = []
        self.ignored: dict[str, int] = {}
        self.qids: list[Any] = []
        self.seen: set[Any] = set()
        self.run, self.qrels = _Rows(), _Rows()
        self.loads = orjson.loads
        self.slice, self.numbers, self.preset = slice, numbers, preset
        self.logged: Any = None

    def _pick(self, obj: dict[str, Any], where: str) -> None:
        from ._rag_fields import Logged, choose_field as _choose, get_path as _get, preset_of

        preset = preset_of(obj, self.preset, where)
        for role, given in self.given.items():
            self.names[role], note = _choose(obj, role, given, where, preset)
            if note:
                self.picked.append(note)
        self.logged = Logged(obj, slice=self.slice, numbers=self.numbers, where=where)
        self.top = {field.split(".", 1)[0] for field in self.names.values()} | self.logged.top
        self.dotted = any("." in field for field in self.names.values())
        self.get_query, self.get_ranked, self.get_gold = (
            itemgetter(field) if "." not in field else (lambda o, f=field: _get(o, f))
            for field in (self.names["query"], self.names["retrieved"], self.names["relevant"]))

    def question(self, raw: bytes, n: int) -> None:
        """Read one line (one question) into the rows, or raise :class:`_Decline`."""
        obj = self.loads(raw)
        if type(obj) is not dict:
            raise _Decline
        if not self.names:
            self._pick(obj, f"{self.path}:{n}")
        keys = len(obj)  # the keys of every object of the line, counted as they are read
        for key, value in obj.items():
            if key not in self.top:
                self.ignored[key] = self.ignored.get(key, 0) + 1
                if type(value) in (dict, list):
                    keys += _keys(value)
        qid, ranked, gold = self.get_query(obj), self.get_ranked(obj), self.get_gold(obj)
        if type(qid) not in (str, int) or qid in self.seen or type(ranked) is not list:
            raise _Decline
        self.seen.add(qid)
        self.qids.append(qid)
        if self.logged.values:
            self.logged.take(obj, qid, f"{self.path}:{n}")
        keys += self._ranked(ranked, f"{self.path}:{n}") + self._relevant(gold)
        if not _unique_keys(raw, _keys(obj) if self.dotted else keys):
            raise _Decline  # a key given twice in an object (read_log refuses it), or a string it cannot tell

    def _ranked(self, ranked: list[Any], where: str) -> int:
        """Add a retrieved list to the run; the number of keys of its objects."""
        kinds = set(map(type, ranked))
        if kinds <= {str}:
            if ranked:
                if self.mode not in (None, "order"):
                    raise _Decline  # plain ids in a log ranked by a sub-field (read_log refuses it)
                self.mode = "order"
            self.run.add(ranked, range(len(ranked), 0, -1))
            return 0
        if kinds != {dict}:
            raise _Decline
        if self.get_doc is None:
            from ._rag_fields import choose_field as _choose

            self.doc_field, note = _choose(ranked[0], "doc", None, where)
            if note:
                self.picked.append(note)
            if "." in self.doc_field:
                raise _Decline
            self.get_doc = itemgetter(self.doc_field)
        if self.auto:
            if any(countOf(map(dict.__contains__, ranked, repeat(key)), True) for key in RANK_FIELDS):
                raise _Decline  # a rank field no option named: read_log uses it or refuses it
            has = countOf(map(dict.__contains__, ranked, repeat("score")), True)
            here = "score" if has == len(ranked) else "order" if has == 0 else None
            if here is None or self.mode not in (None, here):
                raise _Decline  # a list, or a log, ranked two ways (read_log refuses it)
            if self.mode is None and here == "score":
                self.score_field = "score"
                self.picked.append("score=score")
            self.mode = here
        if self.score_field and self.get_score is None:
            self.get_score = itemgetter(self.score_field)
        ids = list(map(self.get_doc, ranked))
        scores: Any
        if self.mode == "score":
            scores = _numbers(list(map(self.get_score, ranked)))
            if self.rising:
                self.rising = set(map(type, scores)) == {int} and all(map(int.__lt__, scores, scores[1:]))
                self.longer = self.longer or len(scores) > 1
        elif self.mode == "rank":
            scores = _scores_from_ranks(list(map(self.get_rank, ranked)))
        else:
            scores = range(len(ranked), 0, -1)
        self.run.add(ids, scores)
        keys = sum(map(len, ranked))  # objects holding only the id (and the score or rank) hold no other object
        return keys if keys == len(ranked) * (1 if self.mode == "order" else 2) else _keys(ranked)

    def _relevant(self, gold: Any) -> int:
        """Add the relevant ids or grades to the qrels; the number of keys of the object."""
        kind = type(gold)
        if kind is dict:
            grades = _numbers(list(gold.values()))
            self.qrels.add(list(gold), grades)
            self.qrels.ints += map(int.__instancecheck__, grades)
            return len(gold)
        if kind is not list or not set(map(type, gold)) <= {str}:
            raise _Decline
        unique = list(dict.fromkeys(gold))
        if unique and self.min_relevance is not None and self.min_relevance > 1:
            raise _Decline  # read_log refuses: no listed doc would count as relevant
        self.qrels.add(unique, repeat(1, len(unique)))
        self.qrels.ints += repeat(True, len(unique))
        return 0

    def result(self, name: str | None) -> tuple[Qrels, Run]:
        import numpy as np
        import pyarrow as pa

        from ..model.data import Qrels, Run

        if not self.names or len(set(map(type, self.qids))) != 1:
            raise _Decline  # no question (an error), or str and int question ids (an error in Qrels)
        query_kind = "int" if type(self.qids[0]) is int else "str"
        query_ids = list(map(str, self.qids)) if query_kind == "int" else self.qids
        notes: list[str] = []
        if self.picked:
            notes.append(f"RAG log fields picked by name: {', '.join(self.picked)}")
        if self.mode == "rank":
            from .ranks import note

            notes.append(note(str(self.rank_field)))
        elif self.mode == "score" and self.rising and self.longer:
            from .ranks import warn_rising

            notes.append(warn_rising(str(self.score_field), stacklevel=4))
        if self.logged.note:
            notes.append(self.logged.note)
        if self.ignored:
            notes.append("RAG log fields ignored: " + ", ".join(f"{k} ({c} questions)"
                                                               for k, c in self.ignored.items()))
        ids = pa.array(query_ids, type=pa.string())
        integral = np.array(self.qrels.ints, dtype=bool)
        where = str(self.path)
        return (Qrels(self.qrels.table(query_ids, ids, query_kind, bool(integral.all()) or integral),
                      min_relevance=self.min_relevance, source=where, notes=tuple(notes)),
                Run(self.run.table(query_ids, ids, query_kind, False), name=name, source=where, notes=tuple(notes),
                    logged=self.logged.result()))
