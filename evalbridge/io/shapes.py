"""Adapters for the informal shapes RAG code uses: ``(Qrels, Run)`` from lists and dicts.

One named function per shape, never guessing which shape an input is:

* :func:`from_labels`: rank-ordered relevance labels per query, ``{"q1": [1, 0, 1]}``;
* :func:`from_pairs`: ``(retrieved, relevant)`` pairs, ``[(["d3", "d1"], {"d1"})]``;
* :func:`from_records`: ``{"q1": {"retrieved": [...], "relevant": {...}}}``;
* :func:`from_graded`: LLM-judge grades ``{"q1": {"d1": 7.5}}`` plus retrieved lists.

Rank order becomes run scores that strictly decrease (``n, n-1, ..., 1`` for ``n``
documents), so every backend sees the same order with no ties. A list of queries
(instead of a dict) gets the query ids ``"q1", "q2", ...`` in order. Every adapter
ends by building :class:`~evalbridge.model.data.Qrels` and :class:`~evalbridge.model.data.Run`,
which validate the numbers and turn ids into ``str``.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence
from numbers import Integral, Real
from types import MappingProxyType
from typing import Any, Protocol, TypeGuard

from ..errors import InputError
from ..model.data import Qrels, Run, check_level
from .policies import as_id, dropped_note, keep_first

__all__ = ["from_labels", "from_pairs", "from_records", "from_graded", "relevant_qrels", "read_id_lists",
           "is_id_lists", "str_id_rows", "LISTS_READ_AS",
           "UNRETRIEVED_PREFIX"]

#: Doc ids of the relevant documents :func:`from_labels` adds for ``n_relevant``.
UNRETRIEVED_PREFIX = "_unretrieved_"

#: The keys of one record in :func:`from_records`.
RECORD_KEYS = ("retrieved", "relevant")


# ---------------------------------------------------------------- shared helpers

class _ToList(Protocol):
    def tolist(self) -> Any: ...


def _is_numpy(value: object) -> TypeGuard[_ToList]:
    return type(value).__module__.split(".")[0] == "numpy" and hasattr(value, "tolist")


def _as_list(value: object) -> list[Any] | None:
    """``value`` as a list when it is an ordered sequence (list, tuple, numpy array), else ``None``."""
    if _is_numpy(value):
        value = value.tolist()
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes, bytearray)):
        return list(value)
    return None


def _queries(data: object, what: str, example: str) -> list[tuple[Any, Any]]:
    """``(query id, item)`` pairs of a dict keyed by query id, or of a list (ids ``q1``, ``q2``, ...)."""
    if isinstance(data, Mapping):
        items = list(data.items())
    else:
        values = _as_list(data)
        if values is None:
            raise InputError(f"{what} must be a dict keyed by query id or a list of queries; got "
                             f"{type(data).__name__} {data!r:.60}.", fix=f"pass e.g. {example}.")
        items = [(f"q{i}", value) for i, value in enumerate(values, 1)]
    if not items:
        raise InputError(f"{what} holds no queries.", fix=f"pass at least one query, e.g. {example}.")
    return items


def _doc_id(value: object, qid: object, where: str, ids: str | None = None) -> str | int:
    value = as_id(value, ids)
    if isinstance(value, str) or (isinstance(value, Integral) and not isinstance(value, bool)):
        return str(value) if isinstance(value, str) else int(value)
    raise InputError(f"doc id {where} must be a str or an int; got {type(value).__name__} {value!r:.60}.",
                     query_id=str(qid), fix="use strings (or ints) as doc ids.")


class _IdKinds:
    """Remembers where the first str and the first int doc id were seen, to refuse a mix of both."""

    def __init__(self) -> None:
        self.first: dict[type, tuple[object, object, str]] = {}

    def see(self, doc: str | int, qid: object, where: str) -> None:
        self.first.setdefault(type(doc), (doc, qid, where))

    def check(self) -> None:
        if len(self.first) > 1:
            (s, sq, sw), (i, iq, iw) = self.first[str], self.first[int]
            raise InputError(
                f"doc ids mix str and int: {s!r} (query {str(sq)!r}, {sw}) and {i!r} (query {str(iq)!r}, {iw}); "
                f"evalbridge does not guess that 1 and '1' are the same document.",
                fix="use one type for every doc id, e.g. str() each id, or read every id as a string with ids='str'.")


def _ranked_scores(retrieved: object, qid: object, kinds: _IdKinds, ids: str | None = None,
                   duplicates: str | None = None, dropped: list[int] | None = None) -> dict[str | int, float]:
    """Doc id -> strictly decreasing score (``n`` .. ``1``) for a rank-ordered list of doc ids; under
    ``duplicates="first"`` a repeat is dropped (counted in ``dropped``) and ``n`` counts the docs kept."""
    docs = _as_list(retrieved)
    if docs is None:
        hint = ("a set has no order" if isinstance(retrieved, (set, frozenset))
                else "a dict of scores is already a run: use Run({query: {doc: score}})"
                if isinstance(retrieved, Mapping) else "pass a list of doc ids, best first")
        raise InputError(f"retrieved must be a rank-ordered list of doc ids; got {type(retrieved).__name__} "
                         f"{retrieved!r:.60}.", query_id=str(qid), fix=f"{hint}.")
    seen_at: dict[str | int, int] = {}
    for rank, value in enumerate(docs, 1):
        doc = _doc_id(value, qid, f"at rank {rank} of retrieved", ids)
        if doc in seen_at:
            if keep_first(duplicates) and dropped is not None:
                dropped[0] += 1
                continue
            raise InputError(f"doc {doc!r} is retrieved twice, at ranks {seen_at[doc]} and {rank}.",
                             query_id=str(qid), fix="remove the duplicate from the ranked list, or keep the first "
                                                    "occurrence of each document with duplicates='first'.")
        seen_at[doc] = rank
        kinds.see(doc, qid, f"retrieved rank {rank}")
    n = len(seen_at)
    return {doc: float(n - i) for i, doc in enumerate(seen_at)}


def _relevant_grades(relevant: object, qid: object, kinds: _IdKinds, level: float,
                     ids: str | None = None) -> dict[str | int, Any]:
    """Doc id -> grade: a dict keeps its grades, a list/set/tuple gives grade 1 to each doc."""
    if isinstance(relevant, Mapping):
        grades = {}
        for doc, grade in relevant.items():
            doc = _doc_id(doc, qid, "in relevant", ids)
            if doc in grades:
                raise InputError(f"doc {doc!r} is judged twice (ids='str' reads 1 and '1' as one id).",
                                 query_id=str(qid), fix="keep one judgement per document.")
            kinds.see(doc, qid, "relevant")
            grades[doc] = grade
        return grades
    docs = list(relevant) if isinstance(relevant, (set, frozenset)) else _as_list(relevant)
    if docs is None:
        raise InputError(f"relevant must be a list/set/tuple of doc ids or a dict {{doc: grade}}; got "
                         f"{type(relevant).__name__} {relevant!r:.60}.", query_id=str(qid),
                         fix="use [] for a query without relevant documents.")
    if docs and level > 1:
        raise InputError(f"relevant is a list (every doc gets grade 1) but min_relevance={level:g} would count "
                         f"none of them as relevant.", query_id=str(qid),
                         fix="give grades with a dict {doc: grade}, or leave min_relevance out.")
    grades = {}
    for doc in docs:
        doc = _doc_id(doc, qid, "in relevant", ids)
        kinds.see(doc, qid, "relevant")
        grades[doc] = 1
    return grades


def _level(min_relevance: float | None) -> float:
    return 1 if min_relevance is None else check_level(min_relevance)


def _build(items: list[tuple[Any, Any, Any]], min_relevance: float | None, ids: str | None = None,
           duplicates: str | None = None) -> tuple[Qrels, Run]:
    """``(Qrels, Run)`` from ``(query id, retrieved, relevant)`` triples."""
    level = _level(min_relevance)
    kinds = _IdKinds()
    qrels, run = {}, {}
    dropped = [0]
    for qid, retrieved, relevant in items:
        qid = as_id(qid, ids)
        run[qid] = _ranked_scores(retrieved, qid, kinds, ids, duplicates, dropped)
        qrels[qid] = _relevant_grades(relevant, qid, kinds, level, ids)
    kinds.check()
    return Qrels(qrels, min_relevance=min_relevance), Run(run, notes=dropped_note(dropped[0]))


# ---------------------------------------------------------------- from_labels

def _label(value: object, qid: object, position: int) -> int | float:
    """A relevance label as int (ints and bools) or float (finite reals)."""
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real) and math.isfinite(value):
        return float(value)
    raise InputError(f"label at position {position} is {type(value).__name__} {value!r:.60}, not a finite number.",
                     query_id=str(qid), fix="labels must be numbers (0/1 or grades) in rank order, one per "
                                            "retrieved document.")


def _n_relevant_table(n_relevant: object, qids: list[Any], labels_is_mapping: bool) -> dict[Any, Any]:
    """``n_relevant`` as a dict query id -> int (queries left out get no unretrieved docs)."""
    if n_relevant is None:
        return {}
    if isinstance(n_relevant, Mapping):
        table = dict(n_relevant)
        known = set(qids)
        unknown = [q for q in table if q not in known]
        if unknown:
            raise InputError(f"n_relevant names query {unknown[0]!r}, which is not in the labels (queries: "
                             f"{', '.join(map(repr, qids[:5]))}{', ...' if len(qids) > 5 else ''}).",
                             fix="key n_relevant by the same query ids as the labels.")
    else:
        counts = _as_list(n_relevant)
        if counts is None or labels_is_mapping:
            raise InputError(f"n_relevant must be a dict query id -> int"
                             f"{'' if labels_is_mapping else ' or a list aligned with the labels'}; got "
                             f"{type(n_relevant).__name__} {n_relevant!r:.60}.",
                             fix="key n_relevant by query id, e.g. {'q1': 3}.")
        if len(counts) != len(qids):
            raise InputError(f"n_relevant has {len(counts)} entries but there are {len(qids)} queries.",
                             fix="give one count per query, in the same order as the labels.")
        table = dict(zip(qids, counts))
    for qid, count in table.items():
        if isinstance(count, bool) or not isinstance(count, Integral) or count < 0:
            raise InputError(f"n_relevant must be a whole number >= 0; got {count!r}.", query_id=str(qid),
                             fix="give the number of relevant documents the query has in the collection.")
    return table


def from_labels(labels: Any, n_relevant: Any = None, *, min_relevance: float | None = None) -> tuple[Qrels, Run]:
    """``(Qrels, Run)`` from rank-ordered relevance labels, one list per query.

    The documents of a query get the doc ids ``d1, d2, ...`` by rank and the
    run scores ``n, n-1, ..., 1``. Every label goes into the qrels, so a ``0`` is a
    judged non-relevant document. Labels may be binary or graded, ints or floats;
    ``True``/``False`` count as 1/0. An empty list is a query that retrieved nothing.

    Without ``n_relevant`` the labels are all the qrels know: a relevant document
    that was not retrieved is invisible, so recall, AP and the nDCG ideal are
    optimistic. ``n_relevant`` (the number of relevant documents each query really
    has) fixes that by adding the missing ones as unretrieved relevant documents
    with ids ``_unretrieved_1, _unretrieved_2, ...`` and grade 1 (or
    ``min_relevance`` when that is above 1, so that they count as relevant).

    Args:
        labels: ``{query_id: [label, ...]}``, or a list of label lists (query ids
            ``q1, q2, ...``). Labels are in rank order, best first.
        n_relevant: optional ``{query_id: int}``, or with a list of label lists a
            list of ints in the same order. A query left out gets no extra documents.
        min_relevance: the relevance level stored on the qrels: binary metrics count
            a label as relevant when ``label >= min_relevance`` (default 1). It is
            also the level ``n_relevant`` counts at.

    Returns:
        ``(qrels, run)``.

    Raises:
        InputError: a label that is not a finite number (names query, position and
            value), or ``n_relevant`` smaller than the relevant labels retrieved.

    Example:
        >>> qrels, run = from_labels({"q1": [1, 0, 1]}, n_relevant={"q1": 3})
        >>> dict(qrels["q1"]), dict(run["q1"])
        ({'d1': 1, 'd2': 0, 'd3': 1, '_unretrieved_1': 1}, {'d1': 3.0, 'd2': 2.0, 'd3': 1.0})
    """
    level = _level(min_relevance)
    items = _queries(labels, "labels", "{'q1': [1, 0, 1]}")
    wanted = _n_relevant_table(n_relevant, [q for q, _ in items], isinstance(labels, Mapping))
    phantom_grade = level if level > 1 else 1
    qrels, run = {}, {}
    for qid, values in items:
        values_list = _as_list(values)
        if values_list is None:
            raise InputError(f"labels must be a list of numbers in rank order; got {type(values).__name__} "
                             f"{values!r:.60}.", query_id=str(qid),
                             fix="for {doc: grade} dicts use Qrels(...) or from_graded; for doc ids use from_pairs.")
        grades = [_label(value, qid, position) for position, value in enumerate(values_list, 1)]
        n = len(grades)
        qrels[qid] = {f"d{i}": grade for i, grade in enumerate(grades, 1)}
        run[qid] = {f"d{i}": float(n - i + 1) for i in range(1, n + 1)}
        if qid in wanted:
            found = sum(grade >= level for grade in grades)
            missing = wanted[qid] - found
            if missing < 0:
                raise InputError(f"n_relevant is {wanted[qid]} but the labels already hold {found} relevant "
                                 f"documents (label >= {level:g}).", query_id=str(qid),
                                 fix="n_relevant counts every relevant document of the query, retrieved or not.")
            qrels[qid].update({f"{UNRETRIEVED_PREFIX}{i}": phantom_grade for i in range(1, missing + 1)})
    return Qrels(qrels, min_relevance=min_relevance), Run(run)


# ---------------------------------------------------------------- pairs and records

def from_pairs(pairs: Any, *, min_relevance: float | None = None, ids: str | None = None,
               duplicates: str | None = None) -> tuple[Qrels, Run]:
    """``(Qrels, Run)`` from ``(retrieved, relevant)`` pairs, one per query.

    ``retrieved`` is the ranked list of doc ids (best first); it becomes run scores
    ``n, n-1, ..., 1``. ``relevant`` is a list, set or tuple of doc ids (each gets
    grade 1) or a dict ``{doc_id: grade}``. Retrieved documents that are not in
    ``relevant`` are unjudged.

    Args:
        pairs: ``{query_id: (retrieved, relevant)}``, or a list of pairs (query ids
            ``q1, q2, ...``).
        min_relevance: relevance level stored on the qrels (default 1).
        ids: ``"str"`` reads every id as a string (int and str ids may then mix).
        duplicates: ``"first"`` keeps the first occurrence of a doc retrieved twice
            (the repeats are counted in ``run.notes``); default: refused.

    Raises:
        InputError: a doc id retrieved twice (names both ranks), doc ids that mix
            str and int, or a malformed pair.

    Example:
        >>> qrels, run = from_pairs([(["doc1", "doc2", "doc3"], ["doc1", "doc6"])])
        >>> dict(qrels["q1"]), dict(run["q1"])
        ({'doc1': 1, 'doc6': 1}, {'doc1': 3.0, 'doc2': 2.0, 'doc3': 1.0})
    """
    items = []
    for qid, pair in _queries(pairs, "pairs", "[(['d1', 'd2'], ['d2'])]"):
        parts = None if isinstance(pair, Mapping) else _as_list(pair)
        if parts is None or len(parts) != 2:
            hint = ("for {'retrieved': ..., 'relevant': ...} use from_records" if isinstance(pair, Mapping)
                    else "give each query a (retrieved, relevant) pair")
            raise InputError(f"expected a (retrieved, relevant) pair; got {type(pair).__name__} {pair!r:.60}.",
                             query_id=str(qid), fix=f"{hint}.")
        items.append((qid, *parts))
    return _build(items, min_relevance, ids, duplicates)


def _record(record: object, qid: object) -> tuple[Any, Any]:
    """``(retrieved, relevant)`` of one record, refusing unknown and missing keys."""
    if not isinstance(record, Mapping):
        raise InputError(f"a record must be a dict with keys {', '.join(RECORD_KEYS)}; got "
                         f"{type(record).__name__} {record!r:.60}.", query_id=str(qid),
                         fix="write {'retrieved': [doc, ...], 'relevant': {doc: grade}}.")
    for key in record:
        if key not in RECORD_KEYS:
            close = difflib.get_close_matches(str(key), RECORD_KEYS, n=1, cutoff=0.0)
            raise InputError(f"unknown key {key!r} in the record; the keys are {', '.join(map(repr, RECORD_KEYS))}.",
                             query_id=str(qid), fix=f"did you mean {close[0]!r}?")
    for key in RECORD_KEYS:
        if key not in record:
            raise InputError(f"the record has no {key!r} key.", query_id=str(qid),
                             fix="give both keys; use an empty list for a query without retrieved or relevant "
                                 "documents.")
    return record["retrieved"], record["relevant"]


def from_records(records: Any, *, min_relevance: float | None = None, ids: str | None = None,
                 duplicates: str | None = None) -> tuple[Qrels, Run]:
    """``(Qrels, Run)`` from ``{query_id: {"retrieved": [...], "relevant": ...}}`` records.

    The same as :func:`from_pairs` with named keys: ``retrieved`` is the ranked
    list of doc ids and ``relevant`` a list/set of doc ids or a dict ``{doc: grade}``.

    Args:
        records: a dict keyed by query id, or a list of records (ids ``q1, q2, ...``).
        min_relevance: relevance level stored on the qrels (default 1).
        ids, duplicates: as :func:`from_pairs`.

    Raises:
        InputError: an unknown key (with the closest valid key), a missing key, or
            anything :func:`from_pairs` refuses.

    Example:
        >>> qrels, run = from_records({"q1": {"retrieved": ["doc2", "doc1"], "relevant": {"doc1": 3}}})
        >>> dict(qrels["q1"]), dict(run["q1"])
        ({'doc1': 3}, {'doc2': 2.0, 'doc1': 1.0})
    """
    items = [(qid, *_record(record, qid))
             for qid, record in _queries(records, "records", "{'q1': {'retrieved': [...], 'relevant': [...]}}")]
    return _build(items, min_relevance, ids, duplicates)


def from_graded(judgments: Any, retrieved: Any = None, *, min_relevance: float, ids: str | None = None,
                duplicates: str | None = None) -> tuple[Qrels, Run]:
    """``(Qrels, Run)`` from graded judgments (e.g. LLM-judge scores 0-10) and retrieved lists.

    Grades are kept exactly (7.5 stays 7.5, for nDCG gains), and ``min_relevance``
    is stored on the qrels, so binary metrics (P, recall, AP, RR, ...) count a
    document as relevant when ``grade >= min_relevance``.

    Args:
        judgments: ``{query_id: {doc_id: grade}}``; or, with ``retrieved`` left
            out, records ``{query_id: {"retrieved": [...], "relevant": {doc: grade}}}``
            as in :func:`from_records`.
        retrieved: ``{query_id: [doc_id, ...]}``, best first. Both arguments may
            instead be lists aligned by position (query ids ``q1, q2, ...``).
            A query judged but not retrieved is missing from the run, and a query
            retrieved but not judged is missing from the qrels; ``evaluate``
            reports both in its provenance.
        min_relevance: the relevance level (required: there is no safe default for
            a 0-10 scale).
        ids, duplicates: as :func:`from_pairs`.

    Example:
        >>> qrels, run = from_graded({"q1": {"A": 8.0, "B": 6.5}}, {"q1": ["B", "X", "A"]}, min_relevance=7)
        >>> qrels.min_relevance, dict(qrels["q1"]), dict(run["q1"])
        (7, {'A': 8.0, 'B': 6.5}, {'B': 3.0, 'X': 2.0, 'A': 1.0})
    """
    check_level(min_relevance)
    if retrieved is None:
        return from_records(judgments, min_relevance=min_relevance, ids=ids, duplicates=duplicates)
    if isinstance(judgments, Mapping) != isinstance(retrieved, Mapping):
        raise InputError("judgments and retrieved must both be dicts keyed by query id, or both lists aligned by "
                         f"position; got {type(judgments).__name__} and {type(retrieved).__name__}.",
                         fix="key both by query id.")
    kinds = _IdKinds()
    qrels = {}
    for qid, grades in _queries(judgments, "judgments", "{'q1': {'doc1': 7.5}}"):
        if not isinstance(grades, Mapping):
            raise InputError(f"judgments must map each query to a dict {{doc_id: grade}}; got "
                             f"{type(grades).__name__} {grades!r:.60}.", query_id=str(qid),
                             fix="write {'q1': {'doc1': 7.5, 'doc2': 3.0}}.")
        qrels[as_id(qid, ids)] = _relevant_grades(grades, qid, kinds, 1, ids)
    dropped = [0]
    run = {as_id(qid, ids): _ranked_scores(docs, qid, kinds, ids, duplicates, dropped)
           for qid, docs in _queries(retrieved, "retrieved", "{'q1': ['doc1', 'doc2']}")}
    kinds.check()
    return Qrels(qrels, min_relevance=min_relevance), Run(run, notes=dropped_note(dropped[0]))


# ---------------------------------------------------------------- the formats

def ranked_run(retrieved: Any, *, ids: str | None = None, duplicates: str | None = None) -> Run:
    """A run from ``{query_id: [doc_id, ...]}`` ranked lists (best first), scores ``n..1`` (``ids``,
    ``duplicates``: as :func:`from_pairs`)."""
    kinds = _IdKinds()
    dropped = [0]
    run = {as_id(qid, ids): _ranked_scores(docs, qid, kinds, ids, duplicates, dropped)
           for qid, docs in _queries(retrieved, "retrieved", "{'q1': ['doc1', 'doc2']}")}
    kinds.check()
    return Run(run, notes=dropped_note(dropped[0]))


def relevant_qrels(relevant: Any, *, ids: str | None = None, topics: Mapping[Any, Any] | None = None,
                   source: str | None = None, notes: tuple[str, ...] = ()) -> Qrels:
    """Binary qrels from relevant doc id lists ``{query_id: [doc_id, ...]}`` (LlamaIndex's
    ``relevant_docs``): grade 1 each; an empty list is a query with no relevant document.

    Example:
        >>> dict(relevant_qrels({"q1": ["d1", "d4"]})["q1"])
        {'d1': 1, 'd4': 1}
    """
    kinds = _IdKinds()
    qrels = {as_id(qid, ids): _relevant_grades(docs, qid, kinds, 1, ids)
             for qid, docs in _queries(relevant, "relevant", "{'q1': ['doc1', 'doc2']}")}
    kinds.check()
    return Qrels(qrels, source=source, notes=notes, topics=topics, allow_empty=False)


def str_id_rows(data: Any, ids: str | None) -> Any:
    """``{query_id: {doc_id: value}}`` with int ids read as strings under ``ids="str"`` (1 and ``'1'`` of
    one query then one id: refused as a document given twice); ``data`` as it is otherwise."""
    if ids != "str" or not isinstance(data, Mapping):
        return data
    rows: dict[Any, Any] = {}
    for qid, docs in data.items():
        if not isinstance(docs, Mapping):
            return data  # the model's own error says what is wrong
        key = as_id(qid, ids)
        if key in rows:
            raise InputError(f"query {key!r} is given twice (ids='str' reads 1 and '1' as one id).",
                             query_id=str(key), fix="keep one entry per query.")
        row: dict[Any, Any] = {}
        for doc, value in docs.items():
            doc = as_id(doc, ids)
            if doc in row:
                raise InputError(f"doc {doc!r} is given twice (ids='str' reads 1 and '1' as one id).",
                                 query_id=str(key), fix="keep one value per document.")
            row[doc] = value
        rows[key] = row
    return rows


def is_id_lists(data: object) -> bool:
    """True for ``{query_id: [...]}``, every value a list: relevant ids (qrels) or a ranking (run)."""
    return isinstance(data, Mapping) and bool(data) and all(isinstance(v, list) for v in data.values())


#: the note of id lists read as qrels or as a run, by kind
LISTS_READ_AS = MappingProxyType({"qrels": "lists read as relevant doc ids (grade 1 each)",
                                  "run": "lists read as ranked doc ids, best first (scores n..1)"})


def read_id_lists(data: Any, kind: str, options: Mapping[str, Any], *, source: str | None = None) -> Qrels | Run:
    """``{query_id: [doc_id, ...]}`` as the kind asked: relevant ids (qrels) or a ranking (run), noted."""
    if kind == "qrels":
        return relevant_qrels(data, ids=options.get("ids"), source=source, notes=(LISTS_READ_AS["qrels"],))
    run = ranked_run(data, ids=options.get("ids"), duplicates=options.get("duplicates"))
    return Run(run, source=source, notes=(LISTS_READ_AS["run"],))


def data_file(path: Any) -> Any:
    """The Python data of a ``.json`` / ``.yaml`` file (duplicate keys and alias bombs refused), for the
    inline formats read from a file."""
    from .yamldata import load_data_file

    return load_data_file(path)


def _data(source: Any) -> Any:
    import os

    return data_file(source) if isinstance(source, (str, os.PathLike)) else source


def _pair(build: Any) -> Any:
    def read(source: Any, kind: str, options: Any) -> Any:
        from .registry import Parsed

        qrels, run = build(_data(source), **options)
        return Parsed(qrels=qrels, run=run)
    return read


def _read_graded(source: Any, kind: str, options: Any) -> Any:
    from .registry import Parsed

    data, where = _data(source), str(source) if isinstance(source, str) else None
    if is_id_lists(data):  # {query: [doc, ...]}: relevant ids, grade 1 each
        return Parsed(qrels=relevant_qrels(data, ids=options.get("ids"), source=where,
                                           notes=(LISTS_READ_AS["qrels"],)))
    return Parsed(qrels=Qrels(str_id_rows(data, options.get("ids")), min_relevance=options.get("min_relevance"),
                              source=where))


def _read_relevant(source: Any, kind: str, options: Any) -> Any:
    from .registry import Parsed

    return Parsed(qrels=relevant_qrels(_data(source), ids=options.get("ids"),
                                       source=str(source) if isinstance(source, str) else None))


def _read_ranked(source: Any, kind: str, options: Any) -> Any:
    from .registry import Parsed

    return Parsed(run=ranked_run(_data(source), **options))


def _formats() -> tuple[Any, ...]:
    from .registry import Format, policy_options

    level = {"min_relevance": "relevance level stored on the qrels (default 1)"}
    lists = policy_options("ids", "duplicates")
    data = (".yaml", ".yml")
    return (
        Format("labels", "0/1 or graded labels in rank order, per query", frozenset(), _pair(from_labels),
               paired=True, options={**level, "n_relevant": "relevant documents per query, retrieved or not"},
               inline=True, example='eb.from_labels({"q1": [1, 0, 1]}, n_relevant={"q1": 3})'),
        Format("pairs", "(retrieved ids, relevant ids) pairs, per query", frozenset(), _pair(from_pairs),
               paired=True, options={**level, **lists}, inline=True, whole_judgements=True,
               example='eb.from_pairs([(["d3", "d1"], {"d1"})])'),
        Format("records", "records {retrieved: [...], relevant: [...] or {doc: grade}}, per query", frozenset(),
               _pair(from_records), paired=True, options={**level, **lists}, inline=True, whole_judgements=True,
               example='eb.from_records({"q1": {"retrieved": ["d3", "d1"], "relevant": {"d1": 2}}})'),
        Format("graded", "grades {query: {doc: grade}} (e.g. LLM-judge scores)", frozenset({"qrels"}), _read_graded,
               suffixes=data, options={**level, **policy_options("ids")}, inline=True,
               example='eb.from_graded({"q1": {"d1": 7.5}}, {"q1": ["d1"]}, min_relevance=7)'),
        Format("relevant", "relevant doc id lists {query: [doc, ...]}, grade 1 each", frozenset({"qrels"}),
               _read_relevant, options=policy_options("ids"), inline=True,
               example='eb.read_qrels({"q1": ["d1", "d4"]}, format="relevant")'),
        Format("ranked", "ranked doc id lists {query: [doc, ...]}, best first", frozenset({"run"}), _read_ranked,
               suffixes=data, options=lists, inline=True, example='eb.read_run({"q1": ["d3", "d1"]}, format="ranked")'),
    )


FORMATS = _formats()
