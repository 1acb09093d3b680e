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
from ..common.wording import option
from ..model.data import Qrels, Run
from . import distances, fields
from ..common.values import check_value
from .ranks import note as ranks_note, rank_value, rising_in_lists, scores_from_ranks, warn_rising
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


def read_json(path: Path, kind: str, options: Mapping[str, Any] | None = None) -> Qrels | Run:
    """A JSON file holding one object ``{query_id: {doc_id: value}}``, or ``{query_id: [doc_id, ...]}``
    lists: relevant ids (grade 1 each) read as qrels, a ranking (best first) read as a run."""
    from .objects import VALUE_ROLES, read_values
    from .shapes import is_id_lists, read_id_lists, str_id_rows

    options = options or {}
    text, notes = read_text(path)
    data = loads(text, source=str(path))
    if not isinstance(data, dict):
        raise InputError(f"expected one JSON object {{query_id: {{doc_id: value}}}}; got a {type(data).__name__}.",
                         source=str(path), fix=f"a list of question objects is a RAG log: {option('format', 'rag')}.")
    if is_id_lists(data):
        read = read_id_lists(data, kind, {k: v for k, v in options.items() if k not in VALUE_ROLES},
                             source=str(path))
        return _KIND[kind](read, notes=notes)
    return read_values(str_id_rows(data, options.get("ids")), kind, options, source=str(path), notes=notes,
                       stacklevel=7)


#: the keys of a LlamaIndex dataset JSON (``EmbeddingQAFinetuneDataset.save_json``): the ones read, the ones kept aside
LLAMAINDEX_KEYS = ("queries", "relevant_docs")
LLAMAINDEX_OTHER = ("corpus", "mode")


def read_llamaindex(source: Any, options: Mapping[str, Any]) -> Qrels:
    """A LlamaIndex retrieval dataset (``{"queries": {id: text}, "corpus": {id: text}, "relevant_docs":
    {query id: [doc id, ...]}}``, as ``EmbeddingQAFinetuneDataset.save_json`` writes it): its
    ``relevant_docs`` as binary qrels (grade 1 each), its ``queries`` kept as :attr:`Qrels.topics`. The
    corpus texts are not read (noted with their count)."""
    from .shapes import data_file, relevant_qrels

    where = str(source) if not isinstance(source, Mapping) else None
    data = source if isinstance(source, Mapping) else data_file(source)
    if not isinstance(data, Mapping) or any(key not in data for key in LLAMAINDEX_KEYS):
        keys = ", ".join(map(repr, data)) if isinstance(data, Mapping) else type(data).__name__
        raise InputError(f"a LlamaIndex dataset holds {', '.join(map(repr, LLAMAINDEX_KEYS))} (and 'corpus'); "
                         f"got {keys:.120}.", source=where,
                         fix="give the file EmbeddingQAFinetuneDataset.save_json wrote, or relevant lists "
                             "{query: [doc, ...]} with format 'relevant'.")
    unknown = [key for key in data if key not in (*LLAMAINDEX_KEYS, *LLAMAINDEX_OTHER)]
    if unknown:
        raise InputError(f"unknown key {unknown[0]!r} in a LlamaIndex dataset (its keys: "
                         f"{', '.join(LLAMAINDEX_KEYS + LLAMAINDEX_OTHER)}).", source=where,
                         fix="remove the key, or read relevant_docs alone with format 'relevant'.")
    queries = data["queries"]
    if not isinstance(queries, Mapping) or not all(isinstance(text, str) for text in queries.values()):
        raise InputError("'queries' of a LlamaIndex dataset maps each query id to its text.", source=where,
                         fix="write {\"queries\": {\"q1\": \"what is ...?\"}, ...}.")
    corpus = data.get("corpus") or {}
    notes: tuple[str, ...] = (f"LlamaIndex dataset: relevant_docs read as qrels (grade 1 each), the {len(queries)} queries' texts "
             f"kept as qrels.topics, the corpus ({len(corpus)} texts) not read",)
    unjudged = sum(1 for qid in queries if qid not in data["relevant_docs"])
    if unjudged:
        notes += (f"{unjudged} of the queries have no relevant_docs entry",)
    return relevant_qrels(data["relevant_docs"], ids=options.get("ids"), topics=queries, source=where, notes=notes)


def read_jsonl(path: Path, kind: str, options: Mapping[str, Any]) -> Qrels | Run:
    """A JSON Lines file: one object per line with a query id, a doc id and a value."""
    from .policies import as_id, dropped_note, keep_first

    ids, first_kept = options.get("ids"), keep_first(options.get("duplicates"))
    data: dict[Any, dict[Any, Any]] = {}
    lines: dict[tuple[Any, Any], int] = {}
    dropped = 0
    rank_lines: dict[tuple[Any, int], int] = {}
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
            role = fields.order_role(names, kind)
            value_name = names[role]
        try:
            qid, did, number = row[names["query"]], row[names["doc"]], row[value_name]
        except KeyError as error:
            import difflib

            close = difflib.get_close_matches(str(error.args[0]), [str(k) for k in row], n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise InputError(f"the object has no {error.args[0]!r} key (keys: {', '.join(map(repr, row))}).",
                             source=str(path), line=n, fix=f"{hint}give every line the same fields.") from None
        if role == "rank":
            number = rank_value(number, label=value_name, source=str(path), line=n, query_id=str(qid))
        else:
            number = check_value(number, label=value_name, source=str(path), line=n, query_id=str(qid))
        qid, did = as_id(qid, ids), as_id(did, ids)
        key = (qid, did)
        if key in lines:
            if first_kept:
                dropped += 1
                continue
            raise InputError(f"doc {did!r} appears twice for query {qid!r}, on lines {lines[key]} and {n}.",
                             source=str(path), line=n, query_id=str(qid),
                             fix="remove the duplicate line" + (", or keep the first with duplicates='first'."
                                                                if kind == "run" else "."))
        if role == "rank":
            first = rank_lines.setdefault((qid, number), n)
            if first != n:
                raise InputError(f"rank {number} is given twice for query {qid!r}, on lines {first} and {n}.",
                                 source=str(path), line=n, query_id=str(qid),
                                 fix="each document of a query has its own rank.")
        lines[key] = n
        data.setdefault(qid, {})[did] = number
    if not data:
        raise InputError("the file has no JSON objects.", source=str(path), fix="check the path.")
    if role == "rank":
        data = {qid: scores_from_ranks(docs) for qid, docs in data.items()}  # (each rank once: checked above)
        notes = (*notes, ranks_note(value_name))
    elif role == "distance":
        data = {qid: distances.scores_from_distances(docs) for qid, docs in data.items()}
        notes = (*notes, distances.note(value_name))
    elif kind == "run" and all(type(v) is int for docs in data.values() for v in docs.values()) \
            and rising_in_lists(docs.values() for docs in data.values()):
        notes = (*notes, warn_rising(value_name, stacklevel=4))
    return _KIND[kind](data, source=str(path), notes=(*reader.notes, *notes, *dropped_note(dropped)))


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


def _sniff_llamaindex(first: bytes) -> bool:
    """A LlamaIndex dataset: one object whose first key is ``queries``."""
    text = first.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"{") and text[1:].lstrip().startswith(b'"queries"')


def _sniff_object(first: bytes) -> bool:
    """One JSON object (a ``.json`` file holding a list of questions is a RAG log; one whose first key is
    ``queries`` a LlamaIndex dataset)."""
    return first.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{") and not _sniff_llamaindex(first)


def _read(reader: Any) -> Any:
    def read(path: Any, kind: str, options: Mapping[str, Any]) -> Any:
        from .registry import Parsed

        obj = reader(Path(path), kind, options)
        return Parsed(qrels=obj) if kind == "qrels" else Parsed(run=obj)
    return read


def _formats() -> tuple[Any, ...]:
    from .objects import VALUE_ROLES
    from .registry import Format, Parsed, policy_options

    both = frozenset({"qrels", "run"})
    policies = policy_options("ids", "duplicates")
    return (
        Format("json", "JSON object {query_id: {doc_id: value}} or {query_id: [doc_id, ...]}", both,
               _read(read_json), suffixes=(".json",), options={**policies, **VALUE_ROLES},
               write=lambda obj, path, options: write_json(obj, path), sniff=_sniff_object,
               example='eb.read_run("run.json")'),
        Format("llamaindex", "LlamaIndex dataset JSON {queries, corpus, relevant_docs}: qrels, queries as topics",
               frozenset({"qrels"}), lambda source, kind, options: Parsed(qrels=read_llamaindex(source, options)),
               suffixes=(".json",), options=policy_options("ids"), sniff=_sniff_llamaindex, inline=True,
               example='eb.read_qrels("llamaindex_dataset.json")'),
        Format("jsonl", "JSON Lines, one {query_id, doc_id, value} per line", both, _read(read_jsonl),
               suffixes=(".jsonl", ".ndjson"), options={**fields.ROLE_OPTIONS, **policies},
               write=lambda obj, path, options: write_jsonl(obj, path), sniff=_sniff_rows,
               example='eb.read_run("run.jsonl")'),
    )


FORMATS = _formats()
