"""Retrieval logs read as runs: search engine responses, vector store results, span tables and nested lists.

Each family is one format of the registry (so every door reads it, ``convert`` writes TREC from it, and its
``sniff`` recognises it among JSON files); none holds judgements, so each is a run beside the qrels:

* ``elasticsearch`` (also OpenSearch): ``_search`` responses ``{"took", "hits": {"hits": [{"_id", "_score"}]}}``,
  one document or one per line, and ``_msearch`` responses ``{"responses": [...]}`` (one query each);
* ``qdrant``: ``{"result": [...points], "status", "time"}`` of the search API, ``{"result": {"points": [...]}}``
  of the query API, their batch forms (a list of lists / of ``{"points"}``), and bare lists of points
  ``{"id", "score", "payload"}``; integer point ids are read as strings;
* ``chroma``: ``collection.query`` results, column lists per query ``{"ids": [[...]], "distances": [[...]]}``; the
  distances (lower is better) become scores ``-distance`` (:mod:`.distances`, the one rule of every format);
* ``openinference``: span tables of Arize Phoenix / OpenInference (JSON Lines or Parquet) whose retriever spans
  hold ``retrieval.documents``: a list of ``{"document.id", "document.score"}`` (nested ``{"document": {"id",
  "score"}}`` as span JSON writes it, or under ``attributes``; or flattened attributes
  ``retrieval.documents.0.document.id``, as OpenTelemetry SDKs hold them); spans without documents are skipped
  (counted);
* ``nested``: any log whose lines hold a list of retrieved objects (``retrieved=``, default as in RAG logs, and
  ``hits``, ``points``, ``matches``, ``documents``), each with an id and an optional score.

Options: ``query=`` names the field of the query id (a dotted path; in a batch, a field holding one id per
query); without it the query ids are the positions ``q1, q2, ...`` in file order (noted). ``doc=`` and ``score=``
name the id and score sub-fields of the retrieved objects (each family has its defaults). Ids are strings.
The list order is the engine's ranking: scores that fall down each list are read as they are; a list without
scores is ranked by its order (scores n..1, noted); scores that rise down the lists are distances, refused with
the fix; scores out of the list order are refused (a search sorted by another key gives null scores, and is
ranked by its list order).

JSON Lines are parsed with orjson (a line giving one key twice is found by counting its keys, and re-read by the
strict parser, which names it); the rows of each query become one dict at C speed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from itertools import islice
from operator import ge, itemgetter, le
from pathlib import Path
from typing import Any

from ..common.wording import option
from ..errors import InputError
from ..model.data import Run
from ._rag_fields import DEFAULTS, choose_field, get_path
from . import distances as _distances
from .fields import check_order as _check_roles
from .policies import dropped_note, keep_first, policy_options
from .text import Lines, read_text

__all__ = ["Family", "FAMILIES", "read_retrieval_log", "FORMATS"]

#: one ranked list found in a record: (where the query field is read, its index in a batch or None, the items of
#: an item family or the ids of a column family, the scores of a column family or None, a place in the record)
Found = tuple[Any, "int | None", list[Any], "list[Any] | None", str]
Lists = Callable[[Any, str], Iterator[Found]]


@dataclass(frozen=True)
class Family:
    """One log format: how its records hold ranked lists, and the sub-fields of its retrieved objects.

    Attributes:
        name, title, example: as :class:`evalbridge.io.registry.Format`.
        lists: ``lists(record, where) -> (holder, index, items, scores, place)`` of every ranked list of one
            record (a line, a JSON document, a table row); raises InputError for a record it cannot read.
        doc: the id sub-field of its retrieved objects (None: the family gives ids in columns).
        score: the score sub-field (None: the family gives scores in columns).
        sniff: recognises the family from a file's first bytes.
        suffixes: the file suffixes it may be read from.
        skips: what a record without a ranked list is (span tables: other spans), or "" (an error).
        distances: the values a column family gives are distances (lower is better: Chroma's), turned into scores.
    """

    name: str
    title: str
    lists: Lists
    doc: str | None
    score: str | None
    sniff: Callable[[bytes], bool]
    example: str
    suffixes: tuple[str, ...] = (".jsonl", ".ndjson", ".json")
    skips: str = ""
    distances: bool = False


def _keys(obj: Any) -> str:
    return ", ".join(map(repr, obj)) if isinstance(obj, Mapping) else type(obj).__name__


# ---------------------------------------------------------------- elasticsearch / opensearch

def _search_lists(obj: Any, where: str) -> Iterator[Found]:
    if not isinstance(obj, Mapping):
        raise InputError(f"expected a search response object; got {type(obj).__name__} {obj!r:.60}.", source=where,
                         fix="one _search response (or one _msearch response) per line, or a JSON list of them.")
    responses = obj.get("responses")
    if isinstance(responses, list):
        for i, response in enumerate(responses, 1):
            yield from _one_response(response, where, f"response {i}")
        return
    yield from _one_response(obj, where, "")


def _one_response(obj: Any, where: str, place: str) -> Iterator[Found]:
    at = f" ({place})" if place else ""
    if not isinstance(obj, Mapping):
        raise InputError(f"expected a search response object{at}; got {type(obj).__name__} {obj!r:.60}.",
                         source=where, fix="each response of an _msearch is an object {took, hits: {hits: [...]}}.")
    if "error" in obj:
        error = obj["error"]
        reason = error.get("reason", error.get("type")) if isinstance(error, Mapping) else error
        raise InputError(f"the search{at} failed: {reason!s:.120} (status {obj.get('status', '?')}).", source=where,
                         fix="run that query again, or remove its response: a failed search is not an empty ranking.")
    hits = obj.get("hits")
    ranked = hits.get("hits") if isinstance(hits, Mapping) else None
    if not isinstance(ranked, list):
        raise InputError(f"not a search response{at}: no hits.hits list (its keys: {_keys(obj):.120}).", source=where,
                         fix="give the body of a _search response {took, hits: {total, hits: [{_id, _score}]}}, or "
                             "an _msearch response {responses: [...]}.")
    yield obj, None, ranked, None, place


# ---------------------------------------------------------------- qdrant

def _points(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(p, Mapping) for p in value)


def _qdrant_lists(obj: Any, where: str) -> Iterator[Found]:
    if isinstance(obj, list):  # the client's points, dumped as a list
        if _points(obj):
            yield None, None, obj, None, ""
            return
    elif isinstance(obj, Mapping):
        status = obj.get("status")
        if isinstance(status, Mapping) and "error" in status:
            raise InputError(f"the Qdrant request failed: {status['error']!s:.120}.", source=where,
                             fix="run that query again, or remove its response: a failed search is not an empty "
                                 "ranking.")
        result = obj.get("result", obj)
        if isinstance(result, Mapping) and _points(result.get("points")):  # query API (or a QueryResponse dump)
            yield obj, None, result["points"], None, ""
            return
        if isinstance(result, list) and _points(result) and not any("points" in p for p in result):
            yield obj, None, result, None, ""  # search API
            return
        if isinstance(result, list) and result and all(isinstance(r, list) for r in result):
            for i, points in enumerate(result):  # search batch
                if not _points(points):
                    break
                yield obj, i, points, None, f"search {i + 1}"
            else:
                return
        elif isinstance(result, list) and result and all(isinstance(r, Mapping) and _points(r.get("points"))
                                                         for r in result):
            for i, response in enumerate(result):  # query batch
                yield obj, i, response["points"], None, f"query {i + 1}"
            return
    raise InputError(f"not a Qdrant search result: no list of points (it has {_keys(obj):.120}).", source=where,
                     fix="give the response of points/search {result: [{id, score, payload}], status, time}, of "
                         "points/query {result: {points: [...]}}, or of their batch forms.")


# ---------------------------------------------------------------- chroma

def _chroma_lists(obj: Any, where: str) -> Iterator[Found]:
    ids = obj.get("ids") if isinstance(obj, Mapping) else None
    if not isinstance(ids, list) or not all(isinstance(row, list) for row in ids):
        raise InputError(f"not a Chroma query result: no 'ids' list of lists (it has {_keys(obj):.120}).",
                         source=where, fix="give the result of collection.query(...): {ids: [[...]], distances: "
                                           "[[...]], ...}, one list per query.")
    distances = obj.get("distances")
    if distances is not None and (not isinstance(distances, list) or len(distances) != len(ids)
                                  or not all(isinstance(row, list) and len(row) == len(i)
                                             for row, i in zip(distances, ids))):
        raise InputError("'distances' does not hold one list per query, as long as its list of ids.", source=where,
                         fix="give the result of collection.query(...) as it is returned (include 'distances').")
    for i, row in enumerate(ids):
        yield obj, i, row, None if distances is None else distances[i], f"query {i + 1}"


# ---------------------------------------------------------------- openinference

#: where span rows keep their retrieved documents: nested span JSON, a flat attribute, a dataframe column
_DOCUMENT_PATHS = (("attributes", "retrieval", "documents"), ("attributes", "retrieval.documents"),
                   ("attributes.retrieval.documents",), ("retrieval.documents",), ("retrieval", "documents"))


#: a flattened attribute of one retrieved document, as OpenTelemetry SDKs hold them (``retrieval.documents.0.document.id``)
_FLAT_DOCUMENT = re.compile(r"(?:attributes\.)?retrieval\.documents\.(\d+)\.(document\.\w+)")


def _span_documents(obj: Mapping[str, Any]) -> Any:
    for path in _DOCUMENT_PATHS:
        value: Any = obj
        for part in path:
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is not None:
            return value
    attributes = obj.get("attributes")
    return _flat_documents(obj) or (_flat_documents(attributes) if isinstance(attributes, Mapping) else None)


def _flat_documents(attributes: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """The documents of flattened attributes, in the order of their index (None when there are none)."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        match = _FLAT_DOCUMENT.fullmatch(key) if isinstance(key, str) else None
        if match is not None:
            found.setdefault(int(match[1]), {})[match[2]] = value
    return [found[i] for i in sorted(found)] if found else None


def _span_lists(obj: Any, where: str) -> Iterator[Found]:
    if not isinstance(obj, Mapping):
        raise InputError(f"expected a span object; got {type(obj).__name__} {obj!r:.60}.", source=where,
                         fix="one span per line (Phoenix's span JSON), or a span table.")
    documents = _span_documents(obj)
    if documents is None:
        return  # not a retriever span
    if isinstance(documents, str):  # an attribute recorded as a JSON string
        from .jsonl import loads

        documents = loads(documents, source=where)
    if not _points(documents):
        raise InputError(f"retrieval.documents must be a list of document objects; got {documents!r:.60}.",
                         source=where, fix="each document is {document.id, document.score, document.content}.")
    yield obj, None, [_flat_document(d) for d in documents], None, ""


def _flat_document(document: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = document.get("document")
    if isinstance(inner, Mapping):  # {"document": {"id", "score"}}: span JSON
        return {f"document.{k}": v for k, v in inner.items()}
    return document


# ---------------------------------------------------------------- nested lists

#: the fields a nested log's retrieved list is known by: a RAG log's, and those of engines' own responses
NESTED_LISTS = (*DEFAULTS["retrieved"], "hits", "points", "matches", "documents")


def _nested_lists(retrieved: str | None) -> Lists:
    def lists(obj: Any, where: str) -> Iterator[Found]:
        if not isinstance(obj, Mapping):
            raise InputError(f"expected an object per query; got {type(obj).__name__} {obj!r:.60}.", source=where,
                             fix="one object per query {query_id, retrieved: [{id, score}, ...]}.")
        if retrieved is not None:
            try:
                items = get_path(obj, retrieved)
            except KeyError:
                raise InputError(f"the object has no {retrieved!r} field (it has {_keys(obj):.120}).", source=where,
                                 fix="give every query the same fields, e.g. an empty list.") from None
            field = retrieved
        else:
            found = [name for name in NESTED_LISTS if isinstance(obj.get(name), list)]
            if len(found) != 1:
                problem = "no field looks like the retrieved list" if not found else \
                    f"several fields could be the retrieved list: {', '.join(map(repr, found))}"
                raise InputError(f"{problem} (looked for {', '.join(NESTED_LISTS)}; the object has {_keys(obj):.120}).",
                                 source=where, fix="name the field: retrieved=... (dotted paths reach nested objects).")
            field = found[0]
            items = obj[field]
        if not _points(items):
            raise InputError(f"{field!r} must be a list of retrieved objects {{id, score}}; got {items!r:.60}.",
                             source=where, fix="a list of plain ids is a ranked list: read it as a RAG log or "
                                               "with format 'ranked'.")
        yield obj, None, items, None, ""
    return lists


def _nested_field(obj: Mapping[str, Any]) -> bool:
    lists = [name for name, value in obj.items() if _points(value) and value]
    return len(lists) == 1 and not any(name in obj for name in DEFAULTS["relevant"])


# ---------------------------------------------------------------- sniffing

def _first(first: bytes) -> Any:
    """The first JSON value of a file's first bytes (a JSON list or object, else its first line), or None."""
    import orjson

    text = first.lstrip(b"\xef\xbb\xbf \t\r\n")
    for candidate in (text, text.split(b"\n", 1)[0]):
        try:
            return orjson.loads(candidate)
        except ValueError:
            continue
    return None


def _sniffer(test: Callable[[Any], bool], prefix: bytes) -> Callable[[bytes], bool]:
    """A sniff: ``test`` of the first JSON value (of a JSON list: its first item), or, when the first bytes end
    inside it (a large response), ``prefix`` (a regular expression) at the start of the bytes."""
    pattern = re.compile(prefix)

    def sniff(first: bytes) -> bool:
        value = _first(first)
        if value is None:
            return pattern.match(first.lstrip(b"\xef\xbb\xbf \t\r\n")) is not None
        if isinstance(value, list) and value and isinstance(value[0], (Mapping, list)):
            value = value[0]
        return test(value)
    return sniff


def _is_search(obj: Any) -> bool:
    if not isinstance(obj, Mapping):
        return False
    hits = obj.get("hits")
    responses = obj.get("responses")
    return (isinstance(hits, Mapping) and isinstance(hits.get("hits"), list)) or \
        (isinstance(responses, list) and bool(responses) and isinstance(responses[0], Mapping)
         and ("hits" in responses[0] or "error" in responses[0]))


def _is_qdrant(obj: Any) -> bool:
    if isinstance(obj, list):  # a bare list of points: Qdrant's own fields
        return _points(obj) and bool(obj) and {"id", "score", "version"} <= obj[0].keys()
    if not isinstance(obj, Mapping) or "result" not in obj or not {"status", "time"} & obj.keys():
        return False
    result = obj["result"]
    return isinstance(result, (list, Mapping))


def _is_chroma(obj: Any) -> bool:
    return isinstance(obj, Mapping) and isinstance(obj.get("ids"), list) and bool({"distances", "included"} & obj.keys()) \
        and all(isinstance(row, list) for row in obj["ids"])


def _is_span(obj: Any) -> bool:
    if not isinstance(obj, Mapping):
        return False
    context = obj.get("context")
    return _span_documents(obj) is not None or (isinstance(context, Mapping) and "span_id" in context
                                                and bool({"span_kind", "attributes"} & obj.keys()))


def _is_nested(obj: Any) -> bool:
    return isinstance(obj, Mapping) and _nested_field(obj)


# ---------------------------------------------------------------- reading

def _records(source: Any) -> Iterator[tuple[str, Any]]:
    """``(where, record)``: the lines of JSON Lines, the items of a JSON list (or the one JSON document), the rows
    of a Parquet table, the items of a Python list (or the one mapping)."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        suffix = path.name.lower().removesuffix(".gz")
        if suffix.endswith((".parquet", ".pq")):
            yield from _parquet_rows(path)
            return
        if suffix.endswith(".json"):
            from .jsonl import loads

            text, _ = read_text(path)
            data = loads(text, source=str(path))
            if isinstance(data, list) and data and all(isinstance(x, (Mapping, list)) for x in data) \
                    and not _points_list(data):
                for i, record in enumerate(data, 1):
                    yield f"{path} (item {i})", record
            else:
                yield str(path), data
            return
        yield from _lines(path)
        return
    if isinstance(source, Mapping):
        yield "the log", source
        return
    if isinstance(source, list):
        for i, record in enumerate(source, 1):
            yield f"item {i}", record
        return
    raise InputError(f"a retrieval log is a file, a list of records or one record; got {type(source).__name__}.",
                     fix="pass the path of a .jsonl / .json / .parquet file.")


def _points_list(data: list[Any]) -> bool:
    """A JSON list that is itself one ranked list (Qdrant points), not a list of records."""
    return _points(data) and {"id", "score"} <= data[0].keys() and not any(isinstance(v, list) for v in data[0].values())


def _lines(path: Path) -> Iterator[tuple[str, Any]]:
    import orjson

    from ._rag_columns import _keys as count_keys, _unique_keys
    from .jsonl import loads

    for n, line in Lines(path):
        if not line.strip():
            continue
        raw = line.encode()
        try:
            record = orjson.loads(raw)
            strict = not _unique_keys(raw, count_keys(record))
        except orjson.JSONDecodeError:
            strict = True
        if strict:  # what orjson refuses or reads differently: the strict parser says what is wrong
            record = loads(line, source=str(path), line=n)
        yield f"{path}:{n}", record


def _parquet_rows(path: Path) -> Iterator[tuple[str, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"cannot read the Parquet file: {str(error)[:160]}.", source=str(path),
                         fix="give a Parquet file (a span table exported with pandas' to_parquet), or JSON Lines.") \
            from None
    for i, row in enumerate(table.to_pylist(), 1):
        yield f"{path} (row {i})", row


def _column(items: list[Any], field: str, what: str, where: str, qid: str) -> list[Any]:
    """The sub-field ``field`` of every item (C speed when it is one key everywhere)."""
    if "." not in field or all(field in item for item in items):
        try:
            return list(map(itemgetter(field), items))
        except KeyError:
            pass
    out = []
    for position, item in enumerate(items, 1):
        try:
            out.append(item[field] if field in item else get_path(item, field))
        except KeyError:
            raise InputError(f"retrieved item {position} has no {what} field {field!r} (it has {_keys(item):.120}).",
                             source=where, query_id=qid, fix=f"give every retrieved object the same fields, or "
                                                               f"name the {what} sub-field with {what}=...") from None
    return out


def _doc_ids(values: list[Any], where: str, qid: str) -> list[str]:
    kinds = set(map(type, values))
    if kinds <= {str}:
        return values
    if kinds <= {str, int}:
        return list(map(str, values))
    for position, value in enumerate(values, 1):
        if type(value) not in (str, int):
            raise InputError(f"retrieved item {position}'s id {value!r:.60} is not an id (a text or a whole number).",
                             source=where, query_id=qid, fix="name the id sub-field with doc=...")
    raise AssertionError  # pragma: no cover - one of the values above is not a str or an int


def _scores(values: list[Any], field: str, where: str, qid: str) -> list[float]:
    if set(map(type, values)) <= {int, float} and all(map(math.isfinite, values)):
        return values
    from ..common.values import check_value

    for position, value in enumerate(values, 1):
        check_value(value, label=f"retrieved item {position}'s {field!r}", source=where, query_id=qid)
    return values  # pragma: no cover - check_value refused one of them


def _check_order(scores: list[float], field: str, where: str, qid: str, far: bool = False) -> None:
    """The scores fall down the list (the engine's ranking): anything else is refused with the fix."""
    after = islice(scores, 1, None)
    if all(map(ge, scores, after)):
        return
    rising = all(map(le, scores, islice(scores, 1, None)))
    if rising and not far:
        raise InputError(f"the scores ({field}) rise down the list ({scores[0]:g}, {scores[1]:g}, ...): they are "
                         f"distances (lower is better), and read as scores the ranking would be reversed.",
                         source=where, query_id=qid, fix=f"name them as distances: {option('distance', field, column=True)}"
                                                         f" (their scores are then -distance).")
    if rising:
        raise InputError(f"the distances ({field}) fall down the list: they are scores (higher is better), and read "
                         f"as distances the ranking would be reversed.", source=where, query_id=qid,
                         fix=f"name them as scores: {option('score', field, column=True)}.")
    what = "distances" if far else "scores"
    raise InputError(f"the {what} ({field}) do not follow the list order: the engine ranked by something else "
                     f"(a sort), or the list was reordered.", source=where, query_id=qid,
                     fix="give the lists in the order the engine returned them; for a sorted search, remove the "
                         "scores (or leave them null): the list order then ranks.")


def read_retrieval_log(source: Any, family: Family, *, query: str | None = None, retrieved: str | None = None,
                       doc: str | None = None, score: str | None = None, distance: str | None = None,
                       name: str | None = None, duplicates: str | None = None) -> Run:
    """The :class:`~evalbridge.model.Run` of a retrieval log of ``family`` (see the module docstring).

    Raises:
        InputError: with file:line (and the query) for a record the family cannot read, a query id given twice,
            a doc retrieved twice in one list (unless ``duplicates="first"``), a missing or non-numeric score,
            scores that rise down a list or do not follow it.
    """
    lists = _nested_lists(retrieved) if family.name == "nested" else family.lists
    doc_field = doc if doc is not None else family.doc
    _check_roles({k: v for k, v in (("score", score), ("distance", distance)) if v is not None}, "run",
                 where=str(source) if isinstance(source, (str, Path)) else None, what="field")
    score_field = distance if distance is not None else score if score is not None else family.score
    far = distance is not None or family.distances  # the values are distances: scores -distance
    first = keep_first(duplicates)
    run: dict[str, dict[str, float]] = {}
    seen: dict[str, str] = {}
    ranked_by: tuple[str, str] | None = None  # (score or order, where) of the first non-empty list
    picked: list[str] = []
    dropped = skipped = position = 0
    for where, record in _records(source):
        found = False
        for holder, index, items, values, place in lists(record, where):
            found = True
            position += 1
            at = f"{where} ({place})" if place else where
            qid = _query_id(holder, index, query, position, at)
            if doc_field == "" and items:  # a nested log: the id sub-field picked by name, as a RAG log's
                doc_field, note = choose_field(items[0], "doc", None, at)
                picked.append(str(note))
            if doc_field:
                if not all(isinstance(item, Mapping) for item in items):
                    raise InputError("the retrieved items are not all objects.", source=at, query_id=qid,
                                     fix="each retrieved item is an object with an id and a score.")
                ids = _doc_ids(_column(items, doc_field, "doc", at, qid), at, qid)
                if score_field is None:
                    values = None
                else:
                    has = sum(1 for item in items if score_field in item) if "." not in score_field else len(items)
                    if has == 0 and score is None and distance is None:
                        values = None
                    elif has < len(items):
                        raise InputError(f"{has} of the {len(items)} retrieved objects have a {score_field!r} field: "
                                         f"the list cannot be ranked by it.", source=at, query_id=qid,
                                         fix="give every retrieved object a score, or none (the list order then "
                                             "ranks).")
                    else:
                        values = _column(items, score_field, "score", at, qid)
                        if all(v is None for v in values):  # a sorted search: null scores, the list order ranks
                            values = None
            elif doc_field is None:
                ids = _doc_ids(items, at, qid)
            else:
                ids = []
            mode = "order" if values is None else "score"
            if ids and ranked_by is None:
                ranked_by = (mode, at)
            elif ids and ranked_by is not None and ranked_by[0] != mode:
                raise InputError(f"this list is ranked by its {mode}, but the one at {ranked_by[1]} by its "
                                 f"{ranked_by[0]}: one log is ranked one way.", source=at, query_id=qid,
                                 fix="give every retrieved object a score, or none (the list order then ranks).")
            field = score_field or "distances"
            if values is None:
                scores: list[float] = [float(len(ids) - i) for i in range(len(ids))]
            else:
                scores = _scores(values, field, at, qid)
                if far:
                    scores = list(map(_distances.score_of, scores))
                _check_order(scores, field, at, qid, far)
            docs = dict(zip(reversed(ids), reversed(scores))) if first else dict(zip(ids, scores))
            if len(docs) < len(ids):
                if not first:
                    repeated = next(d for i, d in enumerate(ids) if d in ids[:i])
                    raise InputError(f"doc {repeated!r} is retrieved twice.", source=at, query_id=qid,
                                     fix="remove the repeat, or keep the first occurrence of each document with "
                                         "duplicates='first'.")
                dropped += len(ids) - len(docs)
                if values is None:
                    docs = {d: float(len(docs) - i) for i, d in enumerate(dict.fromkeys(ids))}
            if qid in seen:
                raise InputError(f"query {qid!r} appears twice ({seen[qid]} and {at}).", source=at, query_id=qid,
                                 fix="keep one ranked list per query.")
            seen[qid] = at
            run[qid] = docs
        if not found:
            if not family.skips:
                raise InputError("the record holds no ranked list.", source=where, fix="one response per line.")
            skipped += 1
    if not run:
        raise InputError(f"the log holds no ranked list{' (no ' + family.skips + ')' if skipped else ''}.",
                         source=str(source) if isinstance(source, (str, Path)) else None,
                         fix=f"check the path and the format ({family.title}).")
    notes = [f"{family.title}: {len(run)} ranked lists"]
    if query is None:
        notes.append("query ids are the positions q1, q2, ... in the log (name the field of the query id with "
                     "query=...)")
    if picked:
        notes.append(f"fields picked by name: {', '.join(dict.fromkeys(picked))}")
    if far and ranked_by is not None and ranked_by[0] == "score":
        notes.append(_distances.note(score_field or "distances"))
    if ranked_by is not None and ranked_by[0] == "order":
        notes.append("ranked by the list order (scores n..1): the retrieved objects have no score (or null ones)")
    if skipped:
        notes.append(f"{skipped} records skipped ({family.skips})")
    origin = str(source) if isinstance(source, (str, Path)) else None
    return Run(run, name=name, source=origin, copy=False, notes=(*notes, *dropped_note(dropped)))


def _query_id(holder: Any, index: int | None, query: str | None, position: int, where: str) -> str:
    if query is None:
        return f"q{position}"
    if holder is None:
        raise InputError(f"query={query!r} names a field, but this record is a bare list of results.", source=where,
                         fix="wrap each list as {query_id: ..., result: [...]}, or leave query= out (positions).")
    try:
        value = holder[query] if query in holder else get_path(holder, query)
    except KeyError:
        raise InputError(f"the record has no {query!r} field (it has {_keys(holder):.120}).", source=where,
                         fix="give every record its query id, or leave query= out (the ids are then positions).") \
            from None
    if index is not None and isinstance(value, list):
        if len(value) <= index:
            raise InputError(f"the {query!r} list holds {len(value)} query ids, fewer than the record's ranked lists.",
                             source=where, fix="give one query id per query of the batch.")
        value = value[index]
    if type(value) is int:
        return str(value)
    if type(value) is not str or not value:
        raise InputError(f"the query id {value!r:.60} ({query!r}) is not an id (a text or a whole number).",
                         source=where, fix=f"the {query!r} field holds the query id.")
    return value


# ---------------------------------------------------------------- the formats

#: the options of every family (roles of ``--columns`` and a config's ``columns:``)
OPTIONS: Mapping[str, str] = {
    "query": "the field of the query id (dotted path; default: the positions q1, q2, ...)",
    "doc": "the id sub-field of the retrieved objects",
    "score": "the score sub-field of the retrieved objects (none, or null: ranked by the list order)",
    "distance": "the distance sub-field of the retrieved objects (lower is better: Qdrant's Euclid and Manhattan "
                "collections), read as scores -distance",
    **policy_options("duplicates"),
}

#: the options naming sub-fields of retrieved objects: a family of column lists (Chroma's) has none
_SUB_FIELDS = ("doc", "score", "distance")

FAMILIES: tuple[Family, ...] = (
    Family("elasticsearch", "Elasticsearch / OpenSearch _search or _msearch responses (hits.hits[]._id/_score)",
           _search_lists, "_id", "_score",
           _sniffer(_is_search, rb'\{\s*"(took|timed_out|_shards|hits|responses)"\s*:'),
           'eb.read_run("responses.jsonl", query="qid")'),
    Family("qdrant", "Qdrant search / query results (points with id, score, payload)", _qdrant_lists, "id", "score",
           _sniffer(_is_qdrant, rb'\{\s*"result"\s*:\s*[\[{]'), 'eb.read_run("qdrant.jsonl")'),
    Family("chroma", "Chroma query results (column lists ids / distances per query; scores -distance)", _chroma_lists,
           None, None, _sniffer(_is_chroma, rb'\{\s*"ids"\s*:\s*\[\s*\['), 'eb.read_run("chroma.json")',
           distances=True),
    Family("openinference", "OpenInference / Arize Phoenix spans with retrieval.documents (JSONL or Parquet)",
           _span_lists, "document.id", "document.score", _sniffer(_is_span, rb'\{\s*"(name|context|span_kind)"'),
           'eb.read_run("spans.jsonl", query="attributes.metadata.query_id")',
           suffixes=(".jsonl", ".ndjson", ".json", ".parquet", ".pq"), skips="spans without retrieval.documents"),
    Family("nested", "JSON Lines with a list of retrieved objects {id, score} per query, no judgements",
           _nested_lists(None), "", "score", _sniffer(_is_nested, rb"(?!)"),
           'eb.read_run("results.jsonl", retrieved="results")'),
)


def _reader(family: Family) -> Any:
    def read(source: Any, kind: str, options: Mapping[str, Any]) -> Any:
        from .registry import Parsed

        return Parsed(run=read_retrieval_log(source, family, **options))
    return read


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    out = []
    for family in FAMILIES:
        options = {k: v for k, v in OPTIONS.items() if family.doc is not None or k not in _SUB_FIELDS}
        if family.name == "nested":
            options["retrieved"] = "the field holding the list of retrieved objects (dotted path)"
        out.append(Format(family.name, family.title, frozenset({"run"}), _reader(family), suffixes=family.suffixes,
                          options=options, sniff=family.sniff, sniffed_only=True, inline=True,
                          example=family.example))
    return tuple(out)


FORMATS = _formats()
