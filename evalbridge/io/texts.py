"""The texts of queries and documents, by id, for a judging batch: TREC topics, BEIR JSON Lines, RAG logs.

:func:`read_texts` reads what a team has:

* TREC topics: ``qid<TAB>text`` lines (the MS MARCO / TREC DL topics files), or the SGML topics of the ad hoc
  tracks (``<top> <num> Number: 301 <title> ...``; the title is the query);
* JSON Lines with an id and a text per line: BEIR's ``queries.jsonl`` (``_id``, ``text``) and ``corpus.jsonl``
  (``_id``, ``title``, ``text``: a document is its title and its text, as BEIR's retrievers read it);
* a RAG log (one question per line with a list of retrieved objects): the question's text for queries, each
  retrieved object's text (``text``, ``content``, ``passage``...) for documents;
* a mapping id -> text, as it is.

The fields are found among the usual names (:data:`ID_FIELDS`, :data:`TEXT_FIELDS`) or named (``id=``,
``text=``). An id given twice with two texts is refused (file:line); the same text twice is kept once.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from ._rag_fields import DEFAULTS as RAG_FIELDS
from .text import Lines

__all__ = ["read_texts", "ID_FIELDS", "TEXT_FIELDS", "QUESTION_FIELDS", "KINDS"]

#: what the texts are of: the query side or the document side of a pair
KINDS = ("queries", "documents")
#: field names of an id, in JSON Lines of texts (BEIR's first)
ID_FIELDS = ("_id", "id", "query_id", "qid", "doc_id", "docid", "corpus-id", "corpus_id", "pid")
#: field names of a text
TEXT_FIELDS = ("text", "contents", "content", "passage", "body", "page_content")
#: field names of a question's text in a RAG log, or of a query in JSON Lines of queries
QUESTION_FIELDS = ("question", "query", "text")


def _one(obj: Mapping[str, Any], names: tuple[str, ...], given: str | None, what: str, where: str) -> str:
    if given is not None:
        if given not in obj:
            raise InputError(f"the field {given!r} named for the {what} is missing (the object has "
                             f"{', '.join(map(repr, obj))}).", source=where, fix="name a field the objects have.")
        return given
    found = [n for n in names if n in obj]
    if len(found) != 1:
        problem = f"no field looks like the {what}" if not found else \
            f"several fields could be the {what}: {', '.join(map(repr, found))}"
        raise InputError(f"{problem} (looked for {', '.join(names)}; the object has {', '.join(map(repr, obj))}).",
                         source=where, fix=f"name the field of the {what} (id= / text=).")
    return found[0]


def _objects(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    for n, line in Lines(path):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as error:
            raise InputError(f"not a JSON object: {error}.", source=f"{path}:{n}",
                             fix="one JSON object per line (JSON Lines).") from None
        if not isinstance(obj, dict):
            raise InputError(f"a line holds a {type(obj).__name__}, not a JSON object.", source=f"{path}:{n}")
        yield f"{path}:{n}", obj


def _id(value: Any, where: str) -> str:
    """An id of a JSON line as text: a string, or an integer as ``str()`` writes it; a float, a boolean or a
    container is refused (``95.0`` only looks like ``95``)."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return str(value)
    raise InputError(f"the id {value!r:.40} is not a text or an integer; an id like 95.0 only looks like 95 or '095'.",
                     source=where, fix='write the ids as JSON strings, e.g. "_id": "095".')


def _retrieved(obj: Mapping[str, Any]) -> str | None:
    """The field of a RAG log's retrieved list, when ``obj`` is one of its questions."""
    found = [n for n in RAG_FIELDS["retrieved"] if isinstance(obj.get(n), list)]
    return found[0] if len(found) == 1 else None


def _from_jsonl(path: Path, kind: str, id_field: str | None, text_field: str | None) -> Iterator[tuple[str, str, str]]:
    for where, obj in _objects(path):
        listed = _retrieved(obj)
        if listed is not None and kind == "documents":  # a RAG log: the texts of what it retrieved
            for i, item in enumerate(obj[listed]):
                if isinstance(item, Mapping):
                    here = f"{where} ({listed}[{i}])"
                    doc = item[_one(item, RAG_FIELDS["doc"], id_field, "document id", here)]
                    yield here, _id(doc, here), str(item[_one(item, TEXT_FIELDS, text_field, "document text", here)])
            continue
        if listed is not None:
            key = _one(obj, RAG_FIELDS["query"], id_field, "question id", where)
            yield where, _id(obj[key], where), str(obj[_one(obj, ("question", "query"), text_field, "question text", where)])
            continue
        key = _one(obj, ID_FIELDS, id_field, "id", where)
        names = QUESTION_FIELDS if kind == "queries" else TEXT_FIELDS
        text = str(obj[_one(obj, names, text_field, "text", where)])
        title = obj.get("title") if kind == "documents" and text_field is None else None
        yield where, _id(obj[key], where), f"{title} {text}" if isinstance(title, str) and title else text


_SGML = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*(\S+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<desc>|<narr>|<num>|</top>|$)", re.S | re.I)


def _from_text(path: Path) -> Iterator[tuple[str, str, str]]:
    lines = list(Lines(path))
    whole = "\n".join(line for _, line in lines)
    if re.search(r"<top>", whole, re.I):
        for i, block in enumerate(_SGML.findall(whole), 1):
            num, title = _NUM.search(block), _TITLE.search(block)
            if num is None or title is None:
                raise InputError(f"topic {i} has no <num> or no <title>.", source=str(path),
                                 fix="each <top> block needs <num> and <title>.")
            yield f"{path} (topic {i})", num.group(1), " ".join(title.group(1).split())
        return
    for n, line in lines:
        if not line.strip():
            continue
        qid, tab, text = line.partition("\t")
        if not tab or not qid.strip():
            raise InputError("a topics line is 'id<TAB>text'; this one has no tab.", source=f"{path}:{n}",
                             fix="separate the id and the text with a tab, or give JSON Lines (_id, text).")
        yield f"{path}:{n}", qid.strip(), text.strip()


def read_texts(source: Any, *, kind: str = "queries", id: str | None = None, text: str | None = None) -> dict[str, str]:
    """``{id: text}`` of the queries or the documents in ``source`` (see the module docstring).

    Args:
        source: a path (TREC topics, JSON Lines of texts, a RAG log) or a mapping id -> text.
        kind: ``queries`` or ``documents`` (a RAG log holds both; a BEIR corpus joins title and text).
        id, text: the fields holding the id and the text, when not one of the usual names.

    Raises:
        InputError: an unreadable file, a field not found (or several candidates), an id with two texts.

    Example:
        >>> read_texts({"q1": "do goldfish grow"})
        {'q1': 'do goldfish grow'}
    """
    if kind not in KINDS:
        raise InputError(f"kind must be one of {', '.join(map(repr, KINDS))}; got {kind!r}.")
    if isinstance(source, Mapping):
        return {str(k): str(v) for k, v in source.items()}
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"texts come from a file or a mapping id -> text; got {type(source).__name__}.",
                         fix="pass the path of a topics file, a queries.jsonl / corpus.jsonl, or a RAG log.")
    path = Path(source)
    if not path.is_file():
        raise InputError("the file of texts does not exist." if not path.exists() else "this is a folder, not a file.",
                         source=str(path), fix="check the path.")
    from .registry import suffix_of

    rows = _from_jsonl(path, kind, id, text) if suffix_of(path) in (".jsonl", ".ndjson", ".json") else _from_text(path)
    out: dict[str, str] = {}
    seen: dict[str, str] = {}
    for where, key, value in rows:
        if key in out and out[key] != value:
            raise InputError(f"id {key!r} has two texts: {out[key]!r:.60} ({seen[key]}) and {value!r:.60}.",
                             source=where, fix="give each id one text.")
        out.setdefault(key, value)
        seen.setdefault(key, where)
    if not out:
        raise InputError("the file holds no text.", source=str(path), fix="check the path.")
    return out
