"""Bridges to the formats of other tools: DataFrames, JSON/JSONL, files, ranx, ir-measures.

:func:`to_qrels` / :func:`to_run` turn any supported object into
:class:`~evalbridge.model.Qrels` / :class:`~evalbridge.model.Run`, choosing the
converter from a table of ``(accepts, convert)`` pairs (first match wins):

=====================================  ===============================================
input                                  read as
=====================================  ===============================================
``Qrels`` / ``Run``                    returned as is
a mapping ``{qid: {doc: value}}``      dict of dicts
``str`` / ``Path``                     ``.json``: dict of dicts; ``.jsonl``: one object
                                       per line; anything else: TREC (:mod:`.trec`);
                                       ``.gz`` is read transparently
pandas ``DataFrame``                   long format, one row per (query, doc)
ranx ``Qrels`` / ``Run``               their ``to_dict()``
iterable of ir-measures namedtuples    ``Qrel(query_id, doc_id, relevance, iteration)``
                                       / ``ScoredDoc(query_id, doc_id, score)``
=====================================  ===============================================

And the way back: :func:`to_dataframe`, :func:`to_ranx`, :func:`to_ir_measures`,
:func:`write_json`, :func:`write_jsonl`. pandas, ranx and ir_measures are imported
only inside the functions that need them; their objects are recognised by the
module of their type, without importing the library.
"""

from __future__ import annotations

import difflib
import itertools
import json
import math
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from .errors import InputError
from .model import Qrels, Run

__all__ = ["to_qrels", "to_run", "to_dataframe", "to_ranx", "to_ir_measures", "write_json", "write_jsonl"]


class _Kind(NamedTuple):
    """What differs between reading qrels and reading a run."""

    name: str  # "qrels" or "run"
    cls: type  # Qrels or Run
    value: str  # the value's name in long formats: "relevance" or "score"
    ranx_type: str  # class name in ranx
    irm_type: str  # namedtuple name in ir-measures


_QRELS = _Kind("qrels", Qrels, "relevance", "Qrels", "Qrel")
_RUN = _Kind("run", Run, "score", "Run", "ScoredDoc")


def _library(obj: object) -> str:
    """Top-level package that defines ``type(obj)`` (``"pandas"``, ``"ranx"``, ...)."""
    return type(obj).__module__.split(".")[0]


def _build(kind: _Kind, data: object, source: str | None = None, **extra: Any) -> Qrels | Run:
    return kind.cls(data, source=source, **extra)


# ---------------------------------------------------------------- converters

def _from_evalbridge(obj: Qrels | Run, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    if not isinstance(obj, kind.cls):
        other = "run" if kind is _QRELS else "qrels"
        raise InputError(f"got a {type(obj).__name__} where {kind.name} were expected.",
                         fix=f"pass the {kind.name} here and the {other} in its own argument.")
    return obj


def _from_mapping(obj: Mapping, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    return _build(kind, obj)


def _read_json(path: Path, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    """A JSON file holding one object ``{qid: {doc: value}}``."""
    from .trec import open_text

    with open_text(path) as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as error:
            raise InputError(f"invalid JSON: {error.msg}.", source=str(path), line=error.lineno,
                             fix=f"the file must hold one object {{query_id: {{doc_id: {kind.value}}}}}.") from None
    return _build(kind, data, source=str(path))


def _jsonl_field(row: Mapping, key: str, path: Path, n: int) -> Any:
    if key not in row:
        close = difflib.get_close_matches(key, [str(k) for k in row], n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(f"the object has no {key!r} key (keys: {', '.join(map(repr, row))}).", source=str(path),
                         line=n, fix=f"{hint}name the keys with to_qrels/to_run(path, query=..., doc=..., "
                                     f"grade=/score=...).")
    return row[key]


def _read_jsonl(path: Path, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    """A JSON Lines file: one object per line with query id, doc id and value keys."""
    from .trec import open_text

    query, doc, value = columns["query"], columns["doc"], columns[kind.value]
    data: dict[Any, dict[Any, Any]] = {}
    lines: dict[tuple[Any, Any], int] = {}
    with open_text(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as error:
                raise InputError(f"invalid JSON: {error.msg}: {line.strip()!r:.80}.", source=str(path), line=n,
                                 fix="write one JSON object per line.") from None
            if not isinstance(row, Mapping):
                raise InputError(f"expected a JSON object, got {type(row).__name__} {row!r:.60}.", source=str(path),
                                 line=n, fix=f"write {{{query!r}: ..., {doc!r}: ..., {value!r}: ...}} per line.")
            qid, did, number = (_jsonl_field(row, key, path, n) for key in (query, doc, value))
            if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number):
                raise InputError(f"{value} {number!r} is not a finite number.", source=str(path), line=n,
                                 query_id=str(qid), fix=f"give every row a numeric {value!r}.")
            key = (qid, did)
            if key in lines:
                raise InputError(f"doc {did!r} appears twice for query {qid!r}, on lines {lines[key]} and {n}.",
                                 source=str(path), line=n, query_id=str(qid), fix="remove the duplicate line.")
            lines[key] = n
            data.setdefault(qid, {})[did] = number
    if not data:
        raise InputError("the file has no JSON objects.", source=str(path), fix="check the path.")
    return _build(kind, data, source=str(path))


def _read_trec(path: Path, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    from .trec import read_qrels, read_run

    return read_qrels(path) if kind is _QRELS else read_run(path)


#: file extension (after removing ``.gz``) -> reader; anything else is TREC.
_PATH_READERS: dict[str, Callable[[Path, _Kind, dict[str, str]], Qrels | Run]] = {
    ".json": _read_json,
    ".jsonl": _read_jsonl,
}


def _from_path(obj: str | os.PathLike, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    path = Path(obj)
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    reader = _PATH_READERS.get(suffixes[-1] if suffixes else "", _read_trec)
    return reader(path, kind, columns)


def _from_dataframe(df: Any, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    """Long format: one row per (query, doc), columns named by ``columns``."""
    names = [columns["query"], columns["doc"], columns[kind.value]]
    have = list(df.columns)
    for name in names:
        if name not in have:
            close = difflib.get_close_matches(str(name), [str(c) for c in have], n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(f"the DataFrame has no column {name!r}; its columns are {have}.",
                             fix=f"{hint}name the columns with query=..., doc=..., "
                                 f"{'grade' if kind is _QRELS else 'score'}=....")
    for name in names:
        missing = df[name].isna()
        if missing.any():
            row = missing.idxmax()
            raise InputError(f"column {name!r} is missing a value in row {row!r}.",
                             fix="drop or fill the incomplete rows first.")
    queries, docs, values = (df[name].tolist() for name in names)
    data: dict[Any, dict[Any, Any]] = {}
    for qid, doc, value in zip(queries, docs, values):
        data.setdefault(qid, {})[doc] = value
    if sum(map(len, data.values())) != len(queries):
        duplicated = df[df.duplicated(names[:2], keep=False)]
        pairs = list(dict.fromkeys(zip(duplicated[names[0]].tolist(), duplicated[names[1]].tolist())))
        shown = ", ".join(f"({q!r}, {d!r})" for q, d in pairs[:3]) + (" ..." if len(pairs) > 3 else "")
        raise InputError(f"{len(pairs)} (query, doc) pairs appear on more than one row: {shown} "
                         f"(rows {list(duplicated.index[:6])}).",
                         fix="drop the duplicates (e.g. df.drop_duplicates([query, doc])) after choosing which to "
                             "keep.")
    if not data:
        raise InputError("the DataFrame has no rows.", fix="pass a DataFrame with one row per (query, doc).")
    return _build(kind, data)


def _from_ranx(obj: Any, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    if type(obj).__name__ != kind.ranx_type:
        raise InputError(f"got a ranx {type(obj).__name__} where {kind.name} were expected.",
                         fix=f"pass a ranx {kind.ranx_type}.")
    extra = {"name": obj.name} if kind is _RUN else {}
    return _build(kind, obj.to_dict(), **extra)


def _from_namedtuples(obj: Iterable, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    """Rows with ``query_id``, ``doc_id`` and ``relevance``/``score`` fields (ir-measures, ir_datasets)."""
    rows = iter(obj)
    first = next(rows, None)
    fields = getattr(first, "_fields", ())
    if first is None or not {"query_id", "doc_id", kind.value} <= set(fields):
        got = "an empty iterable" if first is None else f"{type(obj).__name__} of {type(first).__name__}"
        raise InputError(f"cannot read {kind.name} from {got}.", fix=_accepted(kind))
    data: dict[Any, dict[Any, Any]] = {}
    for row in itertools.chain([first], rows):
        docs = data.setdefault(row.query_id, {})
        if row.doc_id in docs:
            raise InputError(f"doc {row.doc_id!r} appears twice for query {row.query_id!r}.",
                             query_id=str(row.query_id), fix="remove the duplicate row.")
        docs[row.doc_id] = getattr(row, kind.value)
    return _build(kind, data)


def _is_path(obj: object) -> bool:
    return isinstance(obj, (str, os.PathLike))


def _is_iterable(obj: object) -> bool:
    return isinstance(obj, Iterable) and not isinstance(obj, (str, bytes, bytearray, Mapping))


#: ``(accepts, convert)``: the first converter whose predicate accepts the object is used.
_CONVERTERS: tuple[tuple[Callable[[object], bool], Callable[..., Qrels | Run]], ...] = (
    (lambda obj: isinstance(obj, (Qrels, Run)), _from_evalbridge),
    (lambda obj: isinstance(obj, Mapping), _from_mapping),
    (_is_path, _from_path),
    (lambda obj: _library(obj) == "pandas" and type(obj).__name__ == "DataFrame", _from_dataframe),
    (lambda obj: _library(obj) == "ranx" and type(obj).__name__ in ("Qrels", "Run"), _from_ranx),
    (_is_iterable, _from_namedtuples),
)


def _accepted(kind: _Kind) -> str:
    return (f"pass {kind.cls.__name__}, a dict {{query_id: {{doc_id: {kind.value}}}}}, a file path (TREC, .json, "
            f".jsonl), a pandas DataFrame (long format), a ranx {kind.ranx_type}, or ir-measures {kind.irm_type} "
            f"rows; for label lists or (retrieved, relevant) pairs use from_labels / from_pairs.")


def _convert(obj: object, kind: _Kind, columns: dict[str, str]) -> Qrels | Run:
    for accepts, convert in _CONVERTERS:
        if accepts(obj):
            return convert(obj, kind, columns)
    raise InputError(f"cannot read {kind.name} from {type(obj).__name__} {obj!r:.60}.", fix=_accepted(kind))


def to_qrels(obj: Any, *, query: str = "query_id", doc: str = "doc_id", grade: str = "relevance") -> Qrels:
    """Read :class:`~evalbridge.model.Qrels` from any supported object (see the module table).

    Args:
        obj: the qrels: a Qrels, dict of dicts, path, DataFrame, ranx Qrels or
            ir-measures ``Qrel`` rows.
        query, doc, grade: column names of a DataFrame / keys of a JSONL file.

    Raises:
        InputError: an unsupported object (the message lists the accepted ones),
            missing columns or keys, duplicate (query, doc) rows, bad values.

    Example:
        >>> to_qrels({"q1": {"d1": 1}})
        Qrels(1 queries, 1 rows)
    """
    return _convert(obj, _QRELS, {"query": query, "doc": doc, "relevance": grade})


def to_run(obj: Any, *, query: str = "query_id", doc: str = "doc_id", score: str = "score") -> Run:
    """Read a :class:`~evalbridge.model.Run` from any supported object (see the module table).

    Args:
        obj: the run: a Run, dict of dicts, path, DataFrame, ranx Run or
            ir-measures ``ScoredDoc`` rows.
        query, doc, score: column names of a DataFrame / keys of a JSONL file.

    Raises:
        InputError: as :func:`to_qrels`.
    """
    return _convert(obj, _RUN, {"query": query, "doc": doc, "score": score})


# ---------------------------------------------------------------- the way back

def _kind_of(obj: object, action: str) -> _Kind:
    if isinstance(obj, Qrels):
        return _QRELS
    if isinstance(obj, Run):
        return _RUN
    raise InputError(f"{action} needs a Qrels or a Run; got {type(obj).__name__}.",
                     fix="convert first with to_qrels(...) or to_run(...).")


def _rows(obj: Qrels | Run) -> tuple[list[str], list[str], list[Any]]:
    queries = [qid for qid, docs in obj.items() for _ in range(len(docs))]
    docs = [doc for values in obj.values() for doc in values]
    values = [value for values in obj.values() for value in values.values()]
    return queries, docs, values


def to_dataframe(obj: Qrels | Run) -> Any:
    """A pandas DataFrame in long format: ``query_id``, ``doc_id``, ``relevance`` or ``score``.

    One row per (query, doc), in stored order; a query without documents has no row.
    """
    import pandas as pd

    kind = _kind_of(obj, "to_dataframe")
    queries, docs, values = _rows(obj)
    return pd.DataFrame({"query_id": queries, "doc_id": docs, kind.value: values})


def to_ranx(obj: Qrels | Run) -> Any:
    """A ranx ``Qrels`` or ``Run`` holding the same data.

    ranx stores grades as integers and would silently truncate 7.5 to 7, so
    non-integral grades are refused instead.

    Raises:
        InputError: a grade that is not a whole number, or no query with documents
            (ranx cannot hold that).
    """
    kind = _kind_of(obj, "to_ranx")
    data = obj.to_dict()
    if kind is _QRELS:
        for qid, docs in data.items():
            bad = next((d for d, g in docs.items() if not float(g).is_integer()), None)
            if bad is not None:
                raise InputError(f"grade {docs[bad]!r} of doc {bad!r} is not a whole number; ranx would truncate it "
                                 f"to {int(docs[bad])}.", query_id=qid,
                                 fix="binarise with a threshold or scale the grades to integers first, or evaluate "
                                     "with a backend that keeps float grades.")
            data[qid] = {d: int(g) for d, g in docs.items()}
    if not any(data.values()):
        raise InputError(f"ranx cannot hold {kind.name} in which no query has documents.",
                         fix="add at least one (query, doc) pair.")
    import ranx

    if kind is _QRELS:
        return ranx.Qrels(data)
    return ranx.Run(data, name=obj.name)


def to_ir_measures(obj: Qrels | Run) -> list:
    """A list of ir-measures namedtuples: ``Qrel(query_id, doc_id, relevance, "0")`` or ``ScoredDoc``.

    Grades are passed as they are; ir-measures' pytrec_eval provider accepts only
    integer grades.
    """
    import ir_measures

    kind = _kind_of(obj, "to_ir_measures")
    make = getattr(ir_measures, kind.irm_type)
    return [make(qid, doc, value) for qid, docs in obj.items() for doc, value in docs.items()]


def write_json(obj: Qrels | Run, path: str | os.PathLike) -> None:
    """Write ``{query_id: {doc_id: value}}`` as one JSON object (gzip when ``path`` ends in ``.gz``)."""
    from .trec import open_text

    _kind_of(obj, "write_json")
    with open_text(path, "w") as f:
        json.dump(obj.to_dict(), f, allow_nan=False, ensure_ascii=False)
        f.write("\n")


def write_jsonl(obj: Qrels | Run, path: str | os.PathLike) -> None:
    """Write one ``{"query_id", "doc_id", "relevance"|"score"}`` object per line (gzip for ``.gz``)."""
    from .trec import open_text

    kind = _kind_of(obj, "write_jsonl")
    with open_text(path, "w") as f:
        for qid, docs in obj.items():
            f.write("".join(json.dumps({"query_id": qid, "doc_id": doc, kind.value: value}, allow_nan=False,
                                       ensure_ascii=False) + "\n" for doc, value in docs.items()))
