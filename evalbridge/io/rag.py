"""RAG logs: one JSON object per question, holding what was retrieved and what is relevant.

The shapes RAG teams log, read as they are (``.jsonl``, one object per line, or a ``.json`` list)::

    {"question_id": "q1", "question": "...", "retrieved_ids": ["d3", "d1"], "relevant_ids": ["d1"]}
    {"id": "q1", "contexts": [{"doc_id": "d3", "score": 0.9}, ...], "ground_truth": {"d1": 7.5}}

Options name the fields (dotted paths reach into nested objects, e.g. ``retrieval.contexts``):

* ``query``: the question id (default: the one of ``query_id``, ``qid``, ``question_id``, ``id``);
* ``retrieved``: the ranked list, best first: doc ids, or objects whose ``doc`` sub-field is the id
  (default ``doc_id`` / ``id`` / ``docid``) and whose optional ``score`` sub-field is the score
  (default: ``score`` when every retrieved object of the log has one, the list order, scores n..1, when
  none has; decided once for the whole log, and a log with both is refused), or whose ``rank`` sub-field
  (``rank=``, 1 = best; default ``rank`` or ``position`` when the objects have one and no score, checked
  against the scores when they have both) gives scores ``max_rank + 1 - rank``, or whose ``distance``
  sub-field (``distance=``, lower is better) gives scores ``-distance``;
  default field: the one of ``retrieved``, ``retrieved_ids``, ``contexts``, ``results``, ``docs``;
* ``relevant``: a list / set of ids (grade 1 each) or an object ``{doc_id: grade}`` (default: the one
  of ``relevant``, ``relevant_ids``, ``ground_truth``, ``gold``, ``qrels``);
* ``min_relevance``: the relevance level stored on the qrels (LLM grades: e.g. 7 on 0-10).

The fields picked by default are named in the notes of the result (``Qrels.notes``); two
candidates present for one role is an error listing them. Other fields (``question``,
``answer``, ...) are ignored and counted in the notes. Several logs of the same questions give one
qrels and several runs: :func:`read_logs`.

A large ``.jsonl`` log is read by :mod:`._rag_columns` (orjson, columnar rows) whenever it reads
exactly what the loop below reads; anything unusual, and every error, is left to this loop.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model.data import Qrels, Run, check_level
from ._rag_fields import DEFAULTS, PRESETS, RANK_FIELDS, Logged, choose_field as _choose, get_path as _get, preset_of
from ..common.values import check_value
from . import distances
from .ranks import note as ranks_note, rank_value, rising_in_lists, scores_from_ranks, warn_rising
from ..common.wording import option
from .policies import as_id, dropped_note, keep_first, policy_options
from .text import Lines, read_text

__all__ = ["read_log", "read_logs", "DEFAULTS", "FIELDS", "FORMATS"]

#: the options that name fields (roles of ``--columns`` and a config's ``columns:`` too)
FIELDS: Mapping[str, str] = {
    "query": "the field holding the question id",
    "retrieved": "the field holding the ranked list (ids, or objects with an id and a score)",
    "doc": "the id sub-field of retrieved objects",
    "score": "the score sub-field of retrieved objects (default: 'score' when every object of the log has one)",
    "rank": "the rank sub-field of retrieved objects (1 = best), read as scores max_rank + 1 - rank per question "
            "(default: 'rank' or 'position' when every retrieved object has it and none a score)",
    "distance": "the distance sub-field of retrieved objects (lower is better), read as scores -distance",
    "relevant": "the field holding the relevant ids (list) or grades ({doc: grade})",
    "slice": "the field holding the question's slice label (a text, or a list of texts), kept for slices",
    "preset": f"the tool whose field names the log uses: {', '.join(PRESETS)} (default: the one that fits, when the "
              f"usual names do not)",
    "numbers": "the fields holding numbers per question, comma-separated (default: those of latency_ms, latency, "
               "latency_s, cost, cost_usd, tokens, total_tokens, prompt_tokens, completion_tokens present)",
}
OPTIONS: Mapping[str, str] = {
    **FIELDS,
    "min_relevance": "the relevance level stored on the qrels (e.g. 7 for 0-10 LLM grades)",
    **policy_options("ids", "duplicates"),
}


def _objects(source: Any) -> Iterator[tuple[str, Any]]:
    """``(where, object)`` of every question: file lines, a JSON list, or a Python list."""
    from .jsonl import loads

    if isinstance(source, (str, Path)):
        path = Path(source)
        first = path.name.lower().removesuffix(".gz")
        if first.endswith(".json"):
            text, _ = read_text(path)
            data = loads(text, source=str(path))
            if not isinstance(data, list):
                raise InputError(f"a .json RAG log is a list of question objects; got a {type(data).__name__}.",
                                 source=str(path), fix="write [ {...}, {...} ], or one object per line in a .jsonl.")
            for i, obj in enumerate(data, 1):
                yield f"{path} (question {i})", obj
            return
        for n, line in Lines(path):
            if line.strip():
                yield f"{path}:{n}", loads(line, source=str(path), line=n)
        return
    if isinstance(source, Sequence) and not isinstance(source, (str, bytes)):
        for i, obj in enumerate(source, 1):
            yield f"question {i}", obj
        return
    raise InputError(f"a RAG log is a file or a list of question objects; got {type(source).__name__}.",
                     fix="pass the path of a .jsonl / .json file, or a list of dicts.")


def _number(value: Any, what: str, where: str, qid: str) -> float | int:
    return check_value(value, label=what, source=where, query_id=qid)


def _doc_id(value: Any, where: str, qid: str, what: str, ids: str | None = None) -> str | int:
    value = as_id(value, ids)
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise InputError(f"{what} {value!r} is not a doc id (str or int).", source=where, query_id=qid,
                     fix="doc ids are strings (or integers); for objects name the id sub-field with doc='...'.")


_BY = {"score": "the 'score' field of its retrieved objects", "order": "its list order (no retrieved item has a 'score')",
       "rank": "the rank field of its retrieved objects"}
_MIXED_FIX = ("give every retrieved object a 'score' (or name the field: score='...'), or none: every question is "
              "then ranked by its list order.")


class _Order:
    """How a log ranks its retrieved lists, decided once for the whole log: by the score sub-field named
    (``score=``), by the rank sub-field named (``rank=``), by the distance sub-field named (``distance=``, lower is
    better), or, none named, by ``score`` when every retrieved object of the log has one, by ``rank`` (or
    ``position``) when every one has that and none a score, and by the list order when none has either. A log (or
    a list) ranked two ways is refused, and so are objects whose score and rank order them differently."""

    def __init__(self, score: str | None, rank: str | None, distance: str | None = None) -> None:
        from .fields import check_order

        given = {role: field for role, field in (("score", score), ("rank", rank), ("distance", distance))
                 if field is not None}
        check_order(given, "run", where=None, what="field")
        self.auto = not given
        self.mode: str | None = next(iter(given), None)
        self.field = given.get(self.mode) if self.mode is not None else None
        self.first: tuple[Any, str] | None = None

    def of(self, ranked: list[Any], objects: bool, qid: Any, where: str) -> str:
        """``score``, ``rank``, ``distance`` or ``order``: how the (non-empty) list ``ranked`` of question ``qid``
        is ranked."""
        if not self.auto:
            if not objects:
                raise InputError(f"{self.mode}={self.field!r} names a sub-field of retrieved objects, but this question "
                                 f"retrieved plain ids.", source=where, query_id=str(qid),
                                 fix=f"log objects {{doc_id, {self.field}}}, or leave {self.mode}= out to rank by the "
                                     f"list order.")
            return str(self.mode)
        has = sum(1 for item in ranked if "score" in item) if objects else 0
        if 0 < has < len(ranked):
            raise InputError(f"{has} of the {len(ranked)} retrieved objects have a 'score' field: the list cannot be "
                             f"ranked by it.", source=where, query_id=str(qid), fix=_MIXED_FIX)
        key = next((k for k in RANK_FIELDS if any(k in item for item in ranked)), None) if objects else None
        if key is not None:
            self._check_rank_field(ranked, key, bool(has), qid, where)
        here = "score" if has else "rank" if key is not None else "order"
        if self.mode is None:
            self.mode, self.field, self.first = here, ("score" if has else key), (qid, where)
        elif here != self.mode and self.first is not None:
            first_qid, first_where = self.first
            raise InputError(f"question {qid!r} is ranked by {_BY[here]}, but question {first_qid!r} ({first_where}) "
                             f"by {_BY[self.mode]}: one log is ranked one way.", source=where, query_id=str(qid),
                             fix=_MIXED_FIX)
        elif here == "rank" and key != self.field:
            raise InputError(f"question {qid!r} ranks its retrieved objects by {key!r}, but question "
                             f"{self.first[0] if self.first else '?'!r} by {self.field!r}.", source=where,
                             query_id=str(qid), fix=f"name the rank field: {option('rank', self.field, column=True)}.")
        return here

    @staticmethod
    def _check_rank_field(ranked: list[Any], key: str, scored: bool, qid: Any, where: str) -> None:
        """A rank field no field was named for: on every object, and agreeing with the scores when they are there
        (a rank that disagrees with them is not ignored: which one ranks the list is for the user to say)."""
        count = sum(1 for item in ranked if key in item)
        if count < len(ranked):
            raise InputError(f"{count} of the {len(ranked)} retrieved objects have a {key!r} field: the list cannot "
                             f"be ranked by it, and it cannot be ignored.", source=where, query_id=str(qid),
                             fix=f"give every retrieved object a {key!r} (then {option('rank', key, column=True)} "
                                 f"ranks by it), or none.")
        if not scored:
            return
        pairs = [(rank_value(item[key], label=f"retrieved item {i}'s {key}", source=where, query_id=str(qid)),
                  _number(item["score"], "score", where, str(qid))) for i, item in enumerate(ranked, 1)]
        by_rank = sorted(pairs)
        if any(later[1] > earlier[1] for earlier, later in zip(by_rank, by_rank[1:])):
            raise InputError(f"the retrieved objects' {key!r} and 'score' fields order them differently: one of "
                             f"them would be ignored.", source=where, query_id=str(qid),
                             fix=f"name the one that ranks the list: {option('score', 'score', column=True)} or "
                                 f"{option('rank', key, column=True)}.")


def read_log(source: Any, *, query: str | None = None, retrieved: str | None = None, doc: str | None = None,
             score: str | None = None, rank: str | None = None, distance: str | None = None,
             relevant: str | None = None, min_relevance: float | None = None, name: str | None = None, ids: str | None = None,
             duplicates: str | None = None, slice: str | None = None, numbers: str | None = None,
             preset: str | None = None) -> tuple[Qrels, Run]:
    """``(qrels, run)`` of one RAG log (see the module docstring for the shapes and options).

    ``ids="str"`` reads every id as a string (an int ``chunk_id`` then meets the string ids of the
    relevant list); ``duplicates="first"`` keeps the first occurrence of a document retrieved twice
    (the dropped ones are counted in the notes). Either makes the strict reader read the log.

    Example:
        >>> log = [{"question_id": "q1", "question": "annual leave?", "retrieved_ids": ["d3", "d1"],
        ...         "relevant_ids": ["d1"]}]
        >>> qrels, run = read_log(log)
        >>> dict(run["q1"]), dict(qrels["q1"]), qrels.notes[0]
        ({'d3': 2.0, 'd1': 1.0}, {'d1': 1}, 'RAG log fields picked by name: query=question_id, retrieved=retrieved_ids, relevant=relevant_ids')
    """
    if min_relevance is not None:
        check_level(min_relevance)
    if isinstance(source, (str, Path)) and ids is None and not keep_first(duplicates) and distance is None:
        from ._rag_columns import read_log_columns

        fast = read_log_columns(source, query=query, retrieved=retrieved, doc=doc, score=score, rank=rank,
                                relevant=relevant, min_relevance=min_relevance, name=name, slice=slice,
                                numbers=numbers, preset=preset)
        if fast is not None:
            return fast
    qrels: dict[Any, dict[Any, Any]] = {}
    run: dict[Any, dict[Any, float]] = {}
    seen: dict[Any, str] = {}
    names: dict[str, str] | None = None
    logged: Logged | None = None
    picked: list[str] = []
    ignored: dict[str, int] = {}
    order = _Order(score, rank, distance)
    integers = True  # every score an int (scores that rise down every list are ranks: warned about)
    dropped = 0
    for where, obj in _objects(source):
        if not isinstance(obj, Mapping):
            raise InputError(f"expected a question object; got {type(obj).__name__} {obj!r:.60}.", source=where,
                             fix="one JSON object per question.")
        if names is None:
            names = {}
            preset = preset_of(obj, preset, where)
            for role, given in (("query", query), ("retrieved", retrieved), ("relevant", relevant)):
                names[role], note = _choose(obj, role, given, where, preset)
                if note:
                    picked.append(note)
            logged = Logged(obj, slice=slice, numbers=numbers, where=where)
        values = {}
        for role, field in names.items():
            try:
                values[role] = _get(obj, field)
            except KeyError:
                raise InputError(f"the question has no {field!r} field ({role}); it has "
                                 f"{', '.join(map(repr, obj))}.", source=where,
                                 fix="give every question the same fields, e.g. an empty list.") from None
        top = {field.split(".", 1)[0] for field in names.values()} | logged.top  # type: ignore[union-attr]
        for key in obj:
            if key not in top:
                ignored[key] = ignored.get(key, 0) + 1
        qid = as_id(values["query"], ids)
        if not isinstance(qid, (str, int)) or isinstance(qid, bool):
            raise InputError(f"the question id {qid!r} is not a str or an int.", source=where,
                             fix=f"the {names['query']!r} field holds the id.")
        if qid in seen:
            raise InputError(f"question {qid!r} appears twice ({seen[qid]} and {where}).", source=where,
                             query_id=str(qid), fix="keep one entry per question.")
        seen[qid] = where
        logged.take(obj, qid, where)  # type: ignore[union-attr]
        ranked = values["retrieved"]
        if not isinstance(ranked, list):
            raise InputError(f"{names['retrieved']!r} must be a list, best first; got {type(ranked).__name__}.",
                             source=where, query_id=str(qid), fix="name the ranked list with retrieved='...'.")
        objects = bool(ranked) and all(isinstance(item, Mapping) for item in ranked)
        if objects and doc is None:
            doc, note = _choose(ranked[0], "doc", None, where)
            if note:
                picked.append(note)
        mode = order.of(ranked, objects, qid, where) if ranked else "order"
        if ranked and mode in ("score", "rank") and order.auto and f"{mode}={order.field}" not in picked:
            picked.append(f"{mode}={order.field}")
        scores: dict[Any, Any] = {}
        for position, item in enumerate(ranked, 1):
            if objects and doc is not None:  # objects: the doc field was chosen above
                try:
                    did = _doc_id(_get(item, doc), where, str(qid), f"retrieved item {position}'s id", ids)
                    value = (_number(_get(item, str(order.field)), "score", where, str(qid)) if mode == "score"
                             else rank_value(_get(item, str(order.field)), label=f"retrieved item {position}'s rank",
                                             source=where, query_id=str(qid)) if mode == "rank"
                             else distances.score_of(_number(_get(item, str(order.field)), "distance", where,
                                                             str(qid))) if mode == "distance"
                             else float(len(ranked) - position + 1))
                except KeyError as error:
                    raise InputError(f"retrieved item {position} has no {error.args[0]!r} field.", source=where,
                                     query_id=str(qid), fix="give every retrieved object the same fields.") from None
            else:
                did = _doc_id(item, where, str(qid), f"retrieved item {position}", ids)
                value = float(len(ranked) - position + 1)
            if did in scores:
                if keep_first(duplicates):
                    dropped += 1
                    continue
                raise InputError(f"doc {did!r} is retrieved twice.", source=where, query_id=str(qid),
                                 fix="remove the duplicate from the ranked list, or keep the first occurrence "
                                     "of each document with duplicates='first'.")
            scores[did] = value
        if len(scores) < len(ranked) and mode == "order":  # repeats dropped: scores n..1 over the docs kept
            scores = {did: float(len(scores) - i) for i, did in enumerate(scores)}
        if ranked and mode == "rank":
            scores = scores_from_ranks(scores, where=where, query_id=str(qid))
        integers = integers and all(type(v) is int for v in scores.values())
        scores = {d: float(v) for d, v in scores.items()}
        gold = values["relevant"]
        if isinstance(gold, Mapping):
            grades = {}
            for d, g in gold.items():
                did = _doc_id(d, where, str(qid), "relevant doc", ids)
                if did in grades:
                    raise InputError(f"doc {did!r} is judged twice (ids='str' reads 1 and '1' as one id).",
                                     source=where, query_id=str(qid), fix="keep one grade per document.")
                grades[did] = _number(g, "grade", where, str(qid))
        elif isinstance(gold, list):
            grades = {}
            for d in gold:
                grades[_doc_id(d, where, str(qid), "relevant doc", ids)] = 1
            if grades and min_relevance is not None and min_relevance > 1:
                raise InputError(f"{names['relevant']!r} is a list (every doc gets grade 1) but min_relevance="
                                 f"{min_relevance:g} would count none of them as relevant.", source=where,
                                 query_id=str(qid), fix="log grades as {doc: grade}, or leave min_relevance out.")
        else:
            raise InputError(f"{names['relevant']!r} must be a list of ids or an object {{doc: grade}}; got "
                             f"{type(gold).__name__}.", source=where, query_id=str(qid),
                             fix="use [] for a question without relevant documents.")
        run[qid], qrels[qid] = scores, grades
    if names is None or logged is None:
        raise InputError("the log holds no question.", source=str(source) if isinstance(source, (str, Path)) else None,
                         fix="one object per question.")
    notes: list[str] = []
    if picked:
        notes.append(f"RAG log fields picked by name: {', '.join(picked)}")
    if logged.note:
        notes.append(logged.note)
    if order.mode == "rank":
        notes.append(ranks_note(str(order.field)))
    elif order.mode == "distance":
        notes.append(distances.note(str(order.field)))
    elif order.mode == "score" and integers and rising_in_lists(scores.values() for scores in run.values()):
        notes.append(warn_rising(order.field or "score", stacklevel=3))
    if ignored:
        notes.append("RAG log fields ignored: " + ", ".join(f"{k} ({n} questions)" for k, n in ignored.items()))
    origin = str(source) if isinstance(source, (str, Path)) else None
    return (Qrels(qrels, min_relevance=min_relevance, source=origin, notes=tuple(notes)),
            Run(run, name=name, source=origin, notes=(*notes, *dropped_note(dropped)), logged=logged.result()))


def read_logs(logs: Mapping[str, Any], **options: Any) -> tuple[Qrels, dict[str, Run]]:
    """One qrels and a run per system from several logs of the same questions.

    The logs must agree on the judgements of every question they share; a question judged in one
    log only is kept (its run in the other logs is missing, and counted so by ``evaluate``).

    Raises:
        InputError: two logs grade the same (question, doc) differently.
    """
    from .registry import check_same_judgements

    if not isinstance(logs, Mapping):
        raise InputError(f"read_logs reads {{system name: log}}; got {type(logs).__name__} {logs!r:.60}.",
                         fix="pass e.g. {'bm25': 'bm25.jsonl', 'dense': 'dense.jsonl'}.")
    merged: dict[str, dict[str, Any]] = {}
    judged: dict[str, Qrels] = {}
    runs: dict[str, Run] = {}
    notes: list[str] = []
    level = options.get("min_relevance")
    for system, source in logs.items():
        judged[system], runs[system] = read_log(source, name=system, **options)
        notes += [n for n in judged[system].notes if n not in notes]
    check_same_judgements(judged)
    for qrels in judged.values():
        for qid, grades in qrels.items():
            merged.setdefault(qid, dict(grades))
    return Qrels(merged, min_relevance=level, notes=tuple(notes)), runs


# ---------------------------------------------------------------- the format

def _sniff_lines(first: bytes) -> bool:
    from .jsonl import _first_object

    row = _first_object(first)
    return isinstance(row, dict) and any(isinstance(v, list) for v in row.values())


def _sniff_list(first: bytes) -> bool:
    """A JSON list of objects."""
    text = first.lstrip(b"\xef\xbb\xbf \t\r\n")
    return text.startswith(b"[") and text[1:].lstrip().startswith(b"{")


def _read(source: Any, kind: str, options: Mapping[str, Any]) -> Any:
    from .registry import Parsed

    qrels, run = read_log(source, **options)
    return Parsed(qrels=qrels, run=run)


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    return (
        Format("rag", "RAG log: one object per question (ids, retrieved list, relevant ids or grades)", frozenset(),
               _read, paired=True, suffixes=(".jsonl", ".ndjson", ".json"), options=OPTIONS,
               sniff=lambda first: _sniff_lines(first) or _sniff_list(first), accepts=None, inline=True,
               whole_judgements=True,
               example='eb.read_pair("rag_log.jsonl", retrieved="contexts", relevant="ground_truth")'),
    )


FORMATS = _formats()
