"""Judging batches: a pool written out for a judge, and the graded pairs read back (the ``judgements`` format).

The batch (:func:`write_batch`) is JSON Lines, one object per (query, doc) pair, the shape an LLM-judge tool
consumes one item at a time (UMBRELA's input is one query and one passage)::

    {"query_id": "1037798", "query": "who is robert gray", "doc_id": "7067032", "passage": "Robert Gray ..."}

``query`` / ``passage`` are the texts from a topics file and a corpus (:func:`evalbridge.io.texts.read_texts`),
or null when none was given. The judge answers with the same objects and a grade, and may say who it is::

    {"query_id": "1037798", "doc_id": "7067032", "grade": 2, "judge": "umbrela-gpt4o"}

Those graded pairs are the ``judgements`` format of the registry: ``eb.read_qrels("graded.jsonl")`` (recognised by
its ``judge`` or ``passage`` field, or named: ``format="judgements"``) gives qrels whose
:attr:`~evalbridge.model.data.Qrels.judged_by` says who gave each grade (the ``judge`` field, else the ``judge_name``
option, else ``judge``); other fields (the texts) are ignored. Writing qrels in this format writes the source of
every grade beside it, so merged judgements keep their provenance on disk.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.values import check_value
from .policies import as_id, policy_options
from .text import Lines, open_text, replacing

if TYPE_CHECKING:
    from ..model.data import Qrels

__all__ = ["write_batch", "write_pairs", "read_judgements", "write_judgements", "BATCH_FIELDS", "GRADE_FIELDS", "FORMATS"]

#: the fields of one item of a judging batch, in order
BATCH_FIELDS = ("query_id", "query", "doc_id", "passage")
#: field names of the grade in graded pairs (the first one present is taken; two present is refused)
GRADE_FIELDS = ("grade", "relevance", "judgement", "judgment", "label")
DEFAULT_JUDGE = "judge"


def _texts_for(ids: list[str], texts: Mapping[str, str] | None, what: str, option: str) -> list[str | None]:
    if texts is None:
        return [None] * len(ids)
    missing = sorted({i for i in ids if i not in texts})
    if missing:
        shown = ", ".join(map(repr, missing[:3])) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
        raise InputError(f"{len(missing)} {what} of the pool have no text in the {option} given: {shown}.",
                         fix=f"give a {option} that holds every {what} (or none: the batch then says null).")
    return [texts[i] for i in ids]


def write_batch(pool: Any, path: str | Path, *, depth: int | None = None, queries: Any = None,
                documents: Any = None) -> Path:
    """Write the pool at ``depth`` (default: the deepest) as a judging batch (see the module docstring).

    Args:
        pool: what :func:`evalbridge.pool` returned.
        path: the JSON Lines file to write (gzip when it ends in ``.gz``).
        queries: the query texts: a topics file, BEIR ``queries.jsonl``, a RAG log, or a mapping id -> text.
        documents: the document texts: BEIR ``corpus.jsonl``, a RAG log, or a mapping id -> text.

    Raises:
        InputError: a pair whose query or document has no text in the file given.
    """
    return write_pairs([(q, d) for q, d, _ in pool.pairs(depth)], path, queries=queries, documents=documents)


def write_pairs(pairs: Sequence[tuple[str, str]], path: str | Path, *, queries: Any = None,
                documents: Any = None) -> Path:
    """Write ``(query id, doc id)`` pairs as a judging batch (see the module docstring), in their order, with the
    texts of ``queries`` and ``documents`` as :func:`write_batch`.

    Raises:
        InputError: a pair whose query or document has no text in the file given.
    """
    from .texts import read_texts

    query_texts = None if queries is None else read_texts(queries, kind="queries")
    doc_texts = None if documents is None else read_texts(documents, kind="documents")
    asked = _texts_for([q for q, _ in pairs], query_texts, "queries", "topics")
    passages = _texts_for([d for _, d in pairs], doc_texts, "documents", "corpus")
    target = Path(path)
    with replacing(target) as temporary, open_text(temporary) as f:  # the old batch stays whole until then
        for (qid, doc), query, passage in zip(pairs, asked, passages):
            f.write(json.dumps({"query_id": qid, "query": query, "doc_id": doc, "passage": passage},
                               ensure_ascii=False, allow_nan=False) + "\n")
    return target


def read_judgements(path: str | Path, options: Mapping[str, Any]) -> Qrels:
    """Graded pairs (JSON Lines) as qrels whose ``judged_by`` says who gave each grade."""
    from ..model.data import Qrels

    ids = options.get("ids")
    grade_field = options.get("grade")
    judge_field = options.get("judge", "judge")
    default_judge = str(options.get("judge_name") or DEFAULT_JUDGE)
    data: dict[Any, dict[Any, Any]] = {}
    judged_by: dict[Any, dict[Any, str]] = {}
    lines: dict[tuple[Any, Any], int] = {}
    reader = Lines(path)
    for n, line in reader:
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as error:
            raise InputError(f"not a JSON object: {error}.", source=str(path), line=n,
                             fix="one JSON object per line (JSON Lines).") from None
        if not isinstance(obj, dict):
            raise InputError(f"a line holds a {type(obj).__name__}, not a graded pair.", source=str(path), line=n)
        for field in ("query_id", "doc_id"):
            if field not in obj or obj[field] is None:
                raise InputError(f"the graded pair has no {field!r}.", source=str(path), line=n,
                                 fix="each line is {\"query_id\", \"doc_id\", \"grade\"[, \"judge\"]}.")
        found = [grade_field] if grade_field is not None else [f for f in GRADE_FIELDS if f in obj]
        if len(found) != 1 or found[0] not in obj:
            problem = "no grade" if not found or found[0] not in obj else \
                f"several fields could be the grade: {', '.join(map(repr, found))}"
            raise InputError(f"the graded pair has {problem} (looked for {', '.join(GRADE_FIELDS)}).", source=str(path),
                             line=n, query_id=str(obj["query_id"]),
                             fix="give each pair its grade, or name the field: grade='...'.")
        qid, doc = as_id(obj["query_id"], ids), as_id(obj["doc_id"], ids)  # ints stay ints: their kind is checked
        value = check_value(obj[found[0]], label=f"grade of doc {doc!r}:", source=str(path), line=n, query_id=str(qid))
        if (qid, doc) in lines:
            raise InputError(f"doc {doc!r} is graded twice for query {qid!r}, on lines {lines[qid, doc]} and {n}.",
                             source=str(path), line=n, query_id=str(qid),
                             fix="keep one grade per pair (to combine two judges, merge_judgements their files).")
        lines[qid, doc] = n
        data.setdefault(qid, {})[doc] = value
        judge = obj.get(judge_field)
        judged_by.setdefault(qid, {})[doc] = str(judge) if judge not in (None, "") else default_judge
    if not data:
        raise InputError("the file holds no graded pair.", source=str(path), fix="check the path.")
    return Qrels(data, source=str(path), notes=reader.notes, judged_by=judged_by)


def write_judgements(qrels: Qrels, path: str | Path) -> None:
    """One ``{"query_id", "doc_id", "grade", "judge"}`` per line; ``judge`` from ``judged_by`` (null when unknown)."""
    with open_text(path) as f:
        for qid, docs in qrels.items():
            sources = qrels.judged_by.get(qid, {})
            f.write("".join(json.dumps({"query_id": qid, "doc_id": doc, "grade": grade, "judge": sources.get(doc)},
                                       ensure_ascii=False, allow_nan=False) + "\n" for doc, grade in docs.items()))


def _sniff(first: bytes) -> bool:
    """Graded pairs (or a batch): the first line is an object with query_id and doc_id and a judge or a passage."""
    line = first.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and {"query_id", "doc_id"} <= obj.keys() and bool({"judge", "passage"} & obj.keys())


def _formats() -> tuple[Any, ...]:
    from .registry import Format, Parsed

    return (
        Format("judgements", "JSON Lines of graded pairs {query_id, doc_id, grade, judge}: who gave each grade kept",
               frozenset({"qrels"}),
               lambda source, kind, options: Parsed(qrels=read_judgements(Path(source), options)),
               suffixes=(".jsonl", ".ndjson"),
               options={"grade": "the field holding the grade (default: one of grade, relevance, judgement, label)",
                        "judge": "the field naming who gave the grade (default: judge)",
                        "judge_name": "who gave the grades of pairs without a judge field (default: judge)",
                        **policy_options("ids")},
               write=lambda obj, path, options: write_judgements(obj, path), sniff=_sniff, sniffed_only=True,
               example='eb.read_qrels("graded.jsonl", format="judgements")'),
    )


FORMATS = _formats()
