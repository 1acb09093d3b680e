"""Judging batches: a pool written out for a judge, and the graded pairs read back (the ``judgements`` format).

The batch (:func:`write_batch`) is JSON Lines, one object per (query, doc) pair, the shape an LLM-judge tool
consumes one item at a time (UMBRELA's input is one query and one passage)::

    {"query_id": "1037798", "query": "who is robert gray", "doc_id": "7067032", "passage": "Robert Gray ..."}

``query`` / ``passage`` are the texts from a topics file and a corpus (:func:`evalbridge.io.texts.read_texts`),
or null when none was given. The judge answers with the same objects and a grade, and may say who it is::

    {"query_id": "1037798", "doc_id": "7067032", "grade": 2, "judge": "umbrela-gpt4o"}

A stratified pool's batch (``pool(..., strata=)``, Yilmaz, Kanoulas and Aslam 2008) holds every pooled pair with
its stratum and inclusion rate (its query's sampled over pooled pairs of the stratum); the sampled pairs, to be
judged, come first, then the pairs pooled but not sampled (``"sampled": false``, no texts), which the estimates
need to know the strata's sizes::

    {"query_id": "1037798", "query": "...", "doc_id": "7067032", "passage": "...", "stratum": "11-100", "rate": 0.1, "sampled": true}
    {"query_id": "1037798", "query": null, "doc_id": "4112851", "passage": null, "stratum": "11-100", "rate": 0.1, "sampled": false}

Read back, a pair not sampled has grade -1 (pooled, not judged, as ``format="sample_eval"`` writes it; a grade a
judge gave it anyway is left out, and the qrels' notes say how many), and the qrels carry each pair's stratum
(:attr:`~evalbridge.model.data.Qrels.strata`). Every line of such a file has its stratum and rate, and each query's
stratum holds the share of sampled pairs its rate says: a batch that lost or gained lines is refused.

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
#: the fields a stratified sample's batch adds to each pair: its stratum, its inclusion rate, whether it is sampled
DESIGN_FIELDS = ("stratum", "rate", "sampled")
#: the grade of a pair pooled but not sampled (as format="sample_eval" writes it)
NOT_SAMPLED = -1


def _texts_for(ids: list[str], texts: Mapping[str, str] | None, what: str, option: str,
               dataset: str | None = None) -> list[str | None]:
    """The text of each id; ``dataset``: the texts are that dataset's topics (not a file given), named when one is
    missing."""
    if texts is None:
        return [None] * len(ids)
    missing = sorted({i for i in ids if i not in texts})
    if missing:
        shown = ", ".join(map(repr, missing[:3])) + (f" (+{len(missing) - 3} more)" if len(missing) > 3 else "")
        if dataset is not None:
            raise InputError(f"{len(missing)} {what} of the pool are not among the topics of {dataset} (read from "
                             f"ir_datasets' cache, as no topics were given): {shown}.",
                             fix="give topics that hold every query of the runs (pool --topics FILE, a config's "
                                 "pool: {topics: FILE}, write_batch(queries=...)), or pool the dataset's queries only "
                                 "(--queries qrels, pool: {queries: qrels}).")
        raise InputError(f"{len(missing)} {what} of the pool have no text in the {option} given: {shown}.",
                         fix=f"give a {option} that holds every {what} (or none: the batch then says null).")
    return [texts[i] for i in ids]


def write_batch(pool: Any, path: str | Path, *, depth: int | None = None, queries: Any = None,
                documents: Any = None, topics_of: str | None = None) -> Path:
    """Write the pool at ``depth`` (default: the deepest) as a judging batch (see the module docstring).

    Args:
        pool: what :func:`evalbridge.pool` returned.
        path: the JSON Lines file to write (gzip when it ends in ``.gz``).
        queries: the query texts: a topics file, BEIR ``queries.jsonl``, a RAG log, or a mapping id -> text.
        documents: the document texts: BEIR ``corpus.jsonl``, a RAG log, or a mapping id -> text.
        topics_of: the dataset (``irds:<id>``) whose topics ``queries`` are (:attr:`Qrels.topics`), named when a
            query of the pool has no text there.

    Raises:
        InputError: a pair whose query or document has no text in the file given (or the dataset's topics).
    """
    if pool.strata:
        if depth is not None and depth != pool.depths[-1]:
            raise InputError(f"a stratified pool's batch is the whole sample, to depth {pool.depths[-1]}; got "
                             f"depth={depth!r}.", fix="leave depth out.")
        sample = pool.sample()
        return write_pairs([(q, d) for q, d, *_ in sample], path, queries=queries, documents=documents,
                           design=[tuple(rest) for _, _, *rest in sample], topics_of=topics_of)
    return write_pairs([(q, d) for q, d, _ in pool.pairs(depth)], path, queries=queries, documents=documents,
                       topics_of=topics_of)


def write_pairs(pairs: Sequence[tuple[str, str]], path: str | Path, *, queries: Any = None,
                documents: Any = None, design: Sequence[tuple[Any, ...]] | None = None,
                topics_of: str | None = None) -> Path:
    """Write ``(query id, doc id)`` pairs as a judging batch (see the module docstring), in their order, with the
    texts of ``queries`` and ``documents`` as :func:`write_batch`; ``design`` gives each pair's ``(stratum, rate,
    sampled)`` of a stratified sample (a pair not sampled is written without texts).

    Raises:
        InputError: a pair whose query or document has no text in the file given.
    """
    from .texts import read_texts

    designs: Sequence[tuple[Any, ...] | None] = design if design is not None else [None] * len(pairs)
    judged = [pair for pair, d in zip(pairs, designs) if d is None or d[2]]
    query_texts = None if queries is None else read_texts(queries, kind="queries")
    doc_texts = None if documents is None else read_texts(documents, kind="documents")
    asked = iter(_texts_for([q for q, _ in judged], query_texts, "queries", "topics", topics_of))
    passages = iter(_texts_for([d for _, d in judged], doc_texts, "documents", "corpus"))
    target = Path(path)
    with replacing(target) as temporary, open_text(temporary) as f:  # the old batch stays whole until then
        for (qid, doc), drawn in zip(pairs, designs):
            texts = (next(asked), next(passages)) if drawn is None or drawn[2] else (None, None)
            line: dict[str, Any] = {"query_id": qid, "query": texts[0], "doc_id": doc, "passage": texts[1]}
            if drawn is not None:
                line.update(zip(DESIGN_FIELDS, drawn))
            f.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")
    return target


class _Design:
    """The strata of a stratified sample's batch read line by line (:data:`DESIGN_FIELDS`), checked once all is read:
    every line has a stratum and a rate, each query's stratum one rate, its sampled share of pairs."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.strata: dict[Any, dict[Any, str]] = {}
        self.groups: dict[tuple[Any, str], list[Any]] = {}  # (query, stratum) -> [first line, rate, pooled, sampled]
        self.stratified: bool | None = None
        self.ignored = 0

    def _fail(self, message: str, n: int, qid: Any, fix: str) -> InputError:
        return InputError(message, source=self.source, line=n, query_id=str(qid), fix=fix)

    def read(self, obj: Mapping[str, Any], n: int, qid: Any, doc: Any) -> bool:
        """Record the line's stratum and rate; whether its pair is to be graded (True unless it is not sampled)."""
        stratum = obj.get("stratum")
        if self.stratified is None:
            self.stratified = stratum is not None
        if (stratum is not None) != self.stratified:
            raise self._fail(f"doc {doc!r} {'has' if stratum is not None else 'has no'} stratum where the lines "
                             f"before {'have none' if stratum is not None else 'have one'}.", n, qid,
                             "a stratified sample's batch gives every pair its stratum and rate, as pool(..., "
                             "strata=) wrote it; a plain batch gives none.")
        if stratum is None:
            return True
        rate, sampled = obj.get("rate"), obj.get("sampled", True)
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
            raise self._fail(f"doc {doc!r} of stratum {stratum!r} has {'no rate' if rate is None else f'rate {rate!r}'}"
                             f"; a stratified sample's estimates need each pair's inclusion rate, in (0, 1].", n, qid,
                             "keep the batch's rate field in the graded pairs (as pool(..., strata=) wrote it).")
        if not isinstance(sampled, bool):
            raise self._fail(f"doc {doc!r} has sampled {sampled!r}; it is true or false.", n, qid,
                             "keep the batch's sampled field in the graded pairs.")
        self.strata.setdefault(qid, {})[doc] = str(stratum)
        group = self.groups.setdefault((qid, str(stratum)), [n, float(rate), 0, 0])
        if group[1] != float(rate):
            raise self._fail(f"stratum {stratum!r} of query {qid!r} has rate {group[1]!r} on line {group[0]} and "
                             f"{rate!r} here; one stratum of a query has one rate.", n, qid,
                             "keep the rates the batch gave.")
        group[2] += 1
        group[3] += sampled
        if not sampled:
            self.ignored += any(field in obj and obj[field] is not None for field in GRADE_FIELDS)
        return sampled

    def checked(self) -> tuple[str, ...]:
        """The notes of a sample whose strata hold the share of sampled pairs their rates say (else refused)."""
        for (qid, stratum), (n, rate, pooled, sampled) in self.groups.items():
            if abs(sampled / pooled - rate) > 1e-9:
                raise self._fail(f"stratum {stratum!r} of query {qid!r} says rate {rate:g} from line {n} on, but holds "
                                 f"{sampled} sampled of {pooled} pooled pairs ({sampled / pooled:.4g}): lines were "
                                 f"lost or added.", n, qid,
                                 "merge the whole graded batch, every line pool(..., strata=) wrote (the pairs not "
                                 "sampled too).")
        if self.ignored:
            return (f"{self.ignored} grades of pairs pooled but not sampled were left out (the sample's rates "
                    f"hold only for the sampled pairs)",)
        return ()


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
    design = _Design(str(path))
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
        qid, doc = as_id(obj["query_id"], ids), as_id(obj["doc_id"], ids)  # ints stay ints: their kind is checked
        if design.read(obj, n, qid, doc):
            found = [grade_field] if grade_field is not None else [f for f in GRADE_FIELDS if f in obj]
            if len(found) != 1 or found[0] not in obj:
                problem = "no grade" if not found or found[0] not in obj else \
                    f"several fields could be the grade: {', '.join(map(repr, found))}"
                raise InputError(f"the graded pair has {problem} (looked for {', '.join(GRADE_FIELDS)}).",
                                 source=str(path), line=n, query_id=str(obj["query_id"]),
                                 fix="give each pair its grade, or name the field: grade='...'.")
            value = check_value(obj[found[0]], label=f"grade of doc {doc!r}:", source=str(path), line=n,
                                query_id=str(qid))
            if design.strata and value < 0:
                raise InputError(f"doc {doc!r} is sampled and its grade is {value!r}; a negative grade means pooled, "
                                 f"not sampled.", source=str(path), line=n, query_id=str(qid),
                                 fix="grade a sampled pair on the scale (0 and up), or mark it \"sampled\": false.")
        else:
            value = NOT_SAMPLED
        if (qid, doc) in lines:
            raise InputError(f"doc {doc!r} is graded twice for query {qid!r}, on lines {lines[qid, doc]} and {n}.",
                             source=str(path), line=n, query_id=str(qid),
                             fix="keep one grade per pair (to combine two judges, merge_judgements their files).")
        lines[qid, doc] = n
        data.setdefault(qid, {})[doc] = value
        judge = obj.get(judge_field)
        if value != NOT_SAMPLED or not design.strata:
            judged_by.setdefault(qid, {})[doc] = str(judge) if judge not in (None, "") else default_judge
    if not data:
        raise InputError("the file holds no graded pair.", source=str(path), fix="check the path.")
    return Qrels(data, source=str(path), notes=(*reader.notes, *design.checked()), judged_by=judged_by,
                 strata=design.strata or None)


def write_judgements(qrels: Qrels, path: str | Path) -> None:
    """One ``{"query_id", "doc_id", "grade", "judge"}`` per line; ``judge`` from ``judged_by`` (null when unknown);
    qrels with strata add each pair's stratum, rate and whether it is sampled (a pair not sampled: grade null)."""
    with open_text(path) as f:
        for qid, docs in qrels.items():
            sources = qrels.judged_by.get(qid, {})
            strata = qrels.strata.get(str(qid), {})
            rates = _rates(docs, strata)
            for doc, grade in docs.items():
                line = {"query_id": qid, "doc_id": doc, "grade": grade, "judge": sources.get(doc)}
                if strata:
                    sampled = grade >= 0
                    line.update(grade=grade if sampled else None, stratum=strata.get(str(doc)),
                                rate=rates.get(strata.get(str(doc))), sampled=sampled)
                f.write(json.dumps(line, ensure_ascii=False, allow_nan=False) + "\n")


def _rates(docs: Mapping[Any, Any], strata: Mapping[Any, str]) -> dict[str | None, float]:
    """Each stratum's inclusion rate in one query: its sampled over its pooled pairs."""
    counts: dict[str | None, list[int]] = {}
    for doc, grade in docs.items():
        count = counts.setdefault(strata.get(str(doc)), [0, 0])
        count[0] += grade >= 0
        count[1] += 1
    return {stratum: sampled / pooled for stratum, (sampled, pooled) in counts.items()}


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
