"""JSON files: ``{qid: {doc: value}}`` objects (``json``) and one row per line (``jsonl``).

* ``json``: one object ``{query_id: {doc_id: grade or score}}``, as ranx and pytrec_eval hold them;
* ``jsonl``: one object per line with a query id, a doc id and a value (field names as in
  :mod:`.fields`, or named with ``query=``, ``doc=``, ``grade=`` / ``score=``), the shape of
  Hugging Face datasets' JSON Lines exports (``query-id, corpus-id, score`` in BEIR).

A JSON Lines file whose objects hold a *list* of retrieved documents is a RAG log (:mod:`.rag`),
and a ``.json`` file holding a list is one too: the registry tells them apart by their first bytes.
Strictness: duplicate keys in an object, duplicate (query, doc) rows, a non-numeric or non-finite
value, invalid UTF-8 (file:line), a BOM (removed and noted).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model import Qrels, Run
from . import fields
from ..values import check_value
from .text import Lines, open_text, read_text

__all__ = ["read_json", "read_jsonl", "write_json", "write_jsonl", "strict_object", "FORMATS"]

_KIND: dict[str, type[Qrels] | type[Run]] = {"qrels": Qrels, "run": Run}


class _Duplicate(ValueError):
    pass


def strict_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` refusing a key given twice (``json`` keeps the last one silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def loads(text: str, *, source: str, line: int | None = None) -> Any:
    """``json.loads`` with duplicate keys refused and errors as :class:`InputError` (file:line)."""
    try:
        return json.loads(text, object_pairs_hook=strict_object)
    except _Duplicate as error:
        raise InputError(f"the key {error.args[0]!r} appears twice in one JSON object.", source=source, line=line,
                         fix="keep one of them; JSON readers would silently keep the last.") from None
    except json.JSONDecodeError as error:
        raise InputError(f"invalid JSON: {error.msg}.", source=source,
                         line=line if line is not None else error.lineno,
                         fix="check the file is JSON (one value) or JSON Lines (one object per line).") from None


def read_json(path: Path, kind: str) -> Qrels | Run:
    """A JSON file holding one object ``{query_id: {doc_id: value}}``."""
    text, notes = read_text(path)
    data = loads(text, source=str(path))
    if not isinstance(data, dict):
        raise InputError(f"expected one JSON object {{query_id: {{doc_id: value}}}}; got a {type(data).__name__}.",
                         source=str(path), fix="a list of question objects is a RAG log: format='rag'.")
    return _KIND[kind](data, source=str(path), notes=notes)


def read_jsonl(path: Path, kind: str, options: Mapping[str, Any]) -> Qrels | Run:
    """A JSON Lines file: one object per line with a query id, a doc id and a value."""
    data: dict[Any, dict[Any, Any]] = {}
    lines: dict[tuple[Any, Any], int] = {}
    names: dict[str, str] | None = None
    notes: tuple[str, ...] = ()
    reader = Lines(path)
    for n, line in reader:
        if not line.strip():
            continue
        row = loads(line, source=str(path), line=n)
        if not isinstance(row, dict):
            raise InputError(f"expected a JSON object, got {type(row).__name__} {row!r:.60}.", source=str(path),
                             line=n, fix="write one object {query_id: ..., doc_id: ..., value: ...} per line.")
        if names is None:
            names, notes = fields.pick(list(row), kind, options, where=f"{path}:{n}", what="field")
            value_name = names[fields.VALUE_ROLE[kind]]
        try:
            qid, did, number = row[names["query"]], row[names["doc"]], row[names[fields.VALUE_ROLE[kind]]]
        except KeyError as error:
            import difflib

            close = difflib.get_close_matches(str(error.args[0]), [str(k) for k in row], n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(f"the object has no {error.args[0]!r} key (keys: {', '.join(map(repr, row))}).",
                             source=str(path), line=n, fix=f"{hint}give every line the same fields.") from None
        number = check_value(number, label=value_name, source=str(path), line=n, query_id=str(qid))
        key = (qid, did)
        if key in lines:
            raise InputError(f"doc {did!r} appears twice for query {qid!r}, on lines {lines[key]} and {n}.",
                             source=str(path), line=n, query_id=str(qid), fix="remove the duplicate line.")
        lines[key] = n
        data.setdefault(qid, {})[did] = number
    if not data:
        raise InputError("the file has no JSON objects.", source=str(path), fix="check the path.")
    return _KIND[kind](data, source=str(path), notes=(*reader.notes, *notes))


def write_json(obj: Qrels | Run, path: str | Path) -> None:
    """Write ``{query_id: {doc_id: value}}`` as one JSON object (gzip when ``path`` ends in ``.gz``)."""
    with open_text(path) as f:
        json.dump(obj.to_dict(), f, allow_nan=False, ensure_ascii=False)
        f.write("\n")


def write_jsonl(obj: Qrels | Run, path: str | Path) -> None:
    """Write one ``{"query_id", "doc_id", "relevance"|"score"}`` object per line (gzip for ``.gz``)."""
    value = "relevance" if isinstance(obj, Qrels) else "score"
    with open_text(path) as f:
        for qid, docs in obj.items():
            f.write("".join(json.dumps({"query_id": qid, "doc_id": doc, value: v}, allow_nan=False,
                                       ensure_ascii=False) + "\n" for doc, v in docs.items()))


# ---------------------------------------------------------------- the formats

def _first_object(first: bytes) -> Any:
    line = first.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    try:
        return json.loads(line)
    except ValueError:
        return None


def _sniff_rows(first: bytes) -> bool:
    """JSON Lines rows: the first line is an object without list or object values."""
    row = _first_object(first)
    return isinstance(row, dict) and not any(isinstance(v, (list, dict)) for v in row.values())


def _sniff_object(first: bytes) -> bool:
    """One JSON object (a ``.json`` file holding a list of questions is a RAG log)."""
    return first.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def _read(reader: Any) -> Any:
    def read(path: Any, kind: str, options: Mapping[str, Any]) -> Any:
        from .registry import Parsed

        obj = reader(Path(path), kind, options)
        return Parsed(qrels=obj) if kind == "qrels" else Parsed(run=obj)
    return read


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    both = frozenset({"qrels", "run"})
    return (
        Format("json", "JSON object {query_id: {doc_id: value}}", both,
               _read(lambda path, kind, options: read_json(path, kind)), suffixes=(".json",),
               write=lambda obj, path, options: write_json(obj, path), sniff=_sniff_object,
               example='eb.to_run("run.json")'),
        Format("jsonl", "JSON Lines, one {query_id, doc_id, value} per line", both, _read(read_jsonl),
               suffixes=(".jsonl", ".ndjson"), options=fields.ROLE_OPTIONS,
               write=lambda obj, path, options: write_jsonl(obj, path), sniff=_sniff_rows,
               example='eb.to_run("run.jsonl")'),
    )


FORMATS = _formats()
