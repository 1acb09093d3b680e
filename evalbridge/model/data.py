"""The canonical data model: ``Qrels`` and ``Run`` (the settings of an evaluation are :mod:`evalbridge.model.settings`).

``Qrels`` maps query id -> doc id -> grade and ``Run`` maps query id -> doc id ->
score. Both are immutable read-only mappings whose ids are always ``str``.
Grades may be floats (LLM-judge scores) and are never truncated. Every adapter
in evalbridge ends by building one of these, so validation lives here once.

Two representations, one mapping API: ``dict`` rows (what Python code builds), or a
:class:`~evalbridge.model.columnar.RowTable` (what the readers of large files and tables build, and what
the fast backend reads without converting: :attr:`Qrels.columnar`). A columnar object builds its
``dict`` rows the first time something needs them (``qrels["q1"]``, ``items()``, ``to_dict()``), once;
``len``, iteration, ``in`` and ``keys()`` never need them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, KeysView, Mapping
from itertools import chain
from dataclasses import dataclass
from numbers import Integral, Real
from operator import methodcaller
from types import MappingProxyType
from typing import Any, TypeVar, cast

from .checks import freeze_plain
from .columnar import RowTable
from ..errors import InputError
from ..common.values import check_value

__all__ = ["Qrels", "Run", "rows_of", "check_level", "with_str_ids"]

def check_level(value: object, what: str = "min_relevance") -> float:
    """A relevance level must be a finite real number (it may be a float, e.g. 7.5)."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise InputError(f"{what} must be a finite number; got {value!r}.", fix=f"pass e.g. {what}=2 or 7.5.")
    return cast(float, value)  # a numbers.Real (int, float, numpy): typing has no numeric tower for the ABCs


def _id_kind(key: object) -> str:
    if isinstance(key, str):
        return "str"
    if isinstance(key, Integral) and not isinstance(key, bool):
        return "int"
    return type(key).__name__


def _ids_to_str(keys: Any, what: str, where: str | None) -> tuple[str, ...]:
    """Check ids are all str or all int, and describe the kind for mismatch checks."""
    kinds = set(map(type, keys))
    if kinds <= {str}:
        return ("str",) if kinds else ()
    found = {_id_kind(k) for k in keys}
    bad = found - {"str", "int"}
    if bad:
        example = next(k for k in keys if _id_kind(k) in bad)
        raise InputError(f"{what} ids must be str or int; got {type(example).__name__} {example!r}.",
                         source=where, fix=f"convert the {what} ids to strings.")
    if len(found) > 1:
        s = next(k for k in keys if isinstance(k, str))
        i = next(k for k in keys if _id_kind(k) == "int")
        raise InputError(f"{what} ids mix int and str (e.g. {i!r} and {s!r}).", source=where,
                         fix=f"use one type for every {what} id, e.g. str() each id, or read ids as strings with ids='str'.")
    return tuple(sorted(found))


def _number(value: object, *, what: str, qid: str, doc: str, where: str | None) -> int | float:
    """An int or a finite float, by the one rule of :mod:`evalbridge.common.values` (no bool, no int beyond float64)."""
    return check_value(value, label=f"{what} of doc {doc!r}:", source=where, query_id=qid)


def _finite_sum(values: Any) -> bool:
    """True when the sum of int / float ``values`` is finite (an int beyond float64 makes it overflow)."""
    try:
        return math.isfinite(sum(values))
    except OverflowError:
        return False


#: validated rows, the kinds of the query ids and of the doc ids (``("str",)``, ``("int",)`` or ``()``)
_Frozen = tuple[dict[str, Mapping[str, Any]], tuple[str, ...], tuple[str, ...]]


def _freeze(data: object, *, what: str, where: str | None,
            copy: bool = True) -> _Frozen:
    """Validate a dict-of-dicts and return (read-only rows, query id kind, doc id kind); the rows
    are copies unless ``copy`` is False and they are plain dicts of plain values."""
    if isinstance(data, _Base):
        return dict(data._data), data.query_id_kind, data.doc_id_kind
    plain = freeze_plain(data, copy) if isinstance(data, dict) else None  # C-level checks only
    if plain is not None:
        return plain
    if not isinstance(data, Mapping):
        raise InputError(f"expected a mapping query id -> {{doc id: {what}}}; got {type(data).__name__}.",
                         source=where, fix="pass a dict of dicts, or use one of the adapters (from_labels, "
                                           "from_pairs, read_qrels, ...).")
    qkind = _ids_to_str(list(data), "query", where)
    doc_kinds: set[str] = set()
    frozen: dict[str, Mapping[str, Any]] = {}
    for qid, docs in data.items():
        sqid = str(qid)
        if not isinstance(docs, Mapping):
            raise InputError(f"expected a mapping doc id -> {what}; got {type(docs).__name__} {docs!r:.60}.",
                             source=where, query_id=sqid,
                             fix="for a ranked list of doc ids or labels use from_pairs / from_labels.")
        docs = dict(docs)
        doc_kinds.update(_ids_to_str(list(docs), "doc", where))
        values = docs.values()
        # Fast path: plain int/float values whose sum is finite are all finite.
        if not set(map(type, values)) <= {int, float} or not _finite_sum(values):
            docs = {d: _number(v, what=what, qid=sqid, doc=str(d), where=where) for d, v in docs.items()}
        if doc_kinds and doc_kinds != {"str"}:
            docs = {str(d): v for d, v in docs.items()}
        frozen[sqid] = docs
    if len(doc_kinds) > 1:
        raise InputError("doc ids mix int and str across queries.", source=where,
                         fix="use one type for every doc id, e.g. str() each id, or read ids as strings with ids='str'.")
    return frozen, qkind, tuple(sorted(doc_kinds))


_Read = TypeVar("_Read", bound="_Base")


def with_str_ids(obj: _Read) -> _Read:
    """``obj`` with its query and doc ids recorded as strings (the ``ids="str"`` read policy): ids read as
    ints, already held as ``str``, then meet the str ids of the other side (``1`` is ``'1'``); noted."""
    kinds = {name: ("str",) if getattr(obj, name) else () for name in ("query_id_kind", "doc_id_kind")}
    if all(getattr(obj, name) == kind for name, kind in kinds.items()):
        return obj
    state = {name: getattr(obj, name) for name in obj._state}
    state.update(kinds, _table=obj._table, _rows=obj._rows,
                 notes=(*obj.notes, "int ids read as strings (ids='str')"))
    return cast(_Read, _restore(type(obj), state))


def _restore(cls: type[_Base], state: dict[str, Any]) -> _Base:
    """A ``Qrels``/``Run`` rebuilt from :meth:`_Base.__reduce__`'s state, without validating again (the
    rows were validated when the object was first built, and pickling keeps them as they are)."""
    obj = object.__new__(cls)
    for name, value in state.items():
        object.__setattr__(obj, name, value)
    return obj


class _Base(Mapping[str, Mapping[str, Any]]):
    """What ``Qrels`` and ``Run`` share: validated rows (``dict`` rows or a :class:`RowTable`) shown
    read-only, and value semantics.

    Travelling: ``pickle``, ``copy.copy`` and ``copy.deepcopy`` go through :meth:`__reduce__`, so
    the copy is as immutable as the original. ``copy.copy`` shares the rows (nothing mutates them);
    ``copy.deepcopy`` and a pickle round trip copy them, so a copy of an object built with
    ``copy=False`` no longer shows later changes to the caller's dicts. A columnar object travels
    as its table (its dict rows, a cache, are rebuilt on demand).

    Equality and hash: two objects of the same class are equal when their rows are equal and so
    are the settings that change what they evaluate to (:attr:`Qrels.min_relevance`,
    :attr:`Run.name`); ``source`` (where the rows came from) is not compared, nor is the form the
    rows are held in (dicts or columns). A plain mapping with the same rows compares equal, as the
    ``Mapping`` contract says. A ``Qrels`` never equals a ``Run``. The hash is computed from the
    rows on first use and kept (the object is immutable; an object built with ``copy=False`` must
    not outlive changes to the caller's dicts).
    """

    __slots__ = ("_rows", "_table", "query_id_kind", "doc_id_kind", "source", "notes", "_hash")
    _rows: dict[str, dict[str, Any]] | None
    _table: RowTable | None
    query_id_kind: tuple[str, ...]
    doc_id_kind: tuple[str, ...]
    source: str | None
    notes: tuple[str, ...]
    _hash: int
    _what = "value"
    #: attributes, beyond the rows, that take part in equality (set by each subclass)
    _compared: tuple[str, ...] = ()
    #: what a pickle or a copy carries besides the rows (caches such as the hash are rebuilt)
    _state: tuple[str, ...] = ("query_id_kind", "doc_id_kind", "source", "notes")

    def __init__(self, data: object, *, source: str | None = None, copy: bool = True,
                 notes: tuple[str, ...] = (), allow_empty: bool = False) -> None:
        table = data._table if isinstance(data, _Base) else data if isinstance(data, RowTable) else None
        if table is not None:  # columnar: shared as it is (its arrays are read-only)
            rows = None
            if isinstance(data, _Base):
                qkind, dkind = data.query_id_kind, data.doc_id_kind
            else:
                qkind, dkind = (table.query_kind,), (table.doc_kind,) if table.n_rows else ()
            empty = not table.query_ids
        else:
            rows, qkind, dkind = _freeze(data, what=self._what, where=source, copy=copy)
            empty = not rows
        if empty and not allow_empty:
            raise InputError(f"the {type(self).__name__.lower()} has no queries.", source=source,
                             fix=f"check that the input holds at least one query with {self._what}s.")
        if isinstance(data, _Base):
            source = source if source is not None else data.source
            notes = tuple(dict.fromkeys((*data.notes, *notes)))
        for name, value in (("query_id_kind", qkind), ("doc_id_kind", dkind), ("source", source),
                            ("notes", tuple(notes)), ("_rows", rows), ("_table", table)):
            object.__setattr__(self, name, value)

    @property
    def columnar(self) -> RowTable | None:
        """The columnar form the rows were read into (the fast backend reads it as it is), or None
        for rows given as dicts."""
        return self._table

    @property
    def _data(self) -> dict[str, dict[str, Any]]:
        """The ``dict`` rows, built from the table on first use when the object is columnar."""
        rows = self._rows
        if rows is None:
            rows = self._row_table.rows()
            object.__setattr__(self, "_rows", rows)
        return rows

    @property
    def _row_table(self) -> RowTable:
        """The table of an object without dict rows (one of ``_rows`` and ``_table`` is always set)."""
        if self._table is None:
            raise AttributeError(f"this {type(self).__name__} holds dict rows, not a table")
        return self._table

    def _ids(self) -> Mapping[str, Any]:
        """The query ids as mapping keys, without building dict rows."""
        return self._rows if self._rows is not None else self._row_table.ids

    # ``_data`` holds plain dicts that nothing mutates; callers see them read-only, wrapped on
    # access (wrapping 100K rows up front costs 0.1 s that most calls never use).
    def __getitem__(self, qid: str) -> Mapping[str, Any]:
        return MappingProxyType(self._data[qid])

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids())

    def __len__(self) -> int:
        return len(self._ids())

    def __contains__(self, qid: object) -> bool:  # the dict's own lookup, not Mapping's try/except
        return qid in self._ids()

    def get(self, qid: str, default: Any = None) -> Any:
        row = self._data.get(qid)
        return default if row is None else MappingProxyType(row)

    def keys(self) -> KeysView[str]:  # the dict's own view: set operations and lookups at C speed
        return self._ids().keys()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    @property
    def n_rows(self) -> int:
        """Number of (query, doc) pairs."""
        if self._table is not None:
            return self._table.n_rows
        return sum(map(len, self._data.values()))

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """A plain, mutable dict-of-dicts copy."""
        return {q: dict(d) for q, d in self._data.items()}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} queries, {self.n_rows} rows)"

    def __reduce__(self) -> tuple[Any, tuple[type[_Base], dict[str, Any]]]:
        """Pickles (and copies) carry the table when there is one, else the dict rows."""
        state = {name: getattr(self, name) for name in self._state}
        state.update(_table=self._table, _rows=self._rows if self._table is None else None)
        return _restore, (type(self), state)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Base):
            if type(other) is not type(self):
                return NotImplemented  # a Qrels is not a Run: Python falls back to identity
            return (all(getattr(self, a) == getattr(other, a) for a in self._compared)
                    and self._data == other._data)
        if isinstance(other, Mapping):
            try:
                return self._data == {q: dict(docs) for q, docs in other.items()}
            except (TypeError, ValueError):  # rows that are not mappings: not the same rows
                return False
        return NotImplemented

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            pass
        value = hash(frozenset((qid, frozenset(docs.items())) for qid, docs in self._data.items()))
        object.__setattr__(self, "_hash", value)
        return value


class Qrels(_Base):
    """Relevance judgements: query id -> doc id -> grade (int or float, never truncated).

    Args:
        data: a mapping ``{query_id: {doc_id: grade}}``; ids may be str or int
            (converted with ``str``), grades any finite real number. Or a
            :class:`~evalbridge.model.columnar.RowTable` (kept as it is: the columnar form), or a ``Qrels``.
        min_relevance: optional relevance level carried with the data (as LLM-graded
            data sets carry it): binary metrics that do not set ``rel`` count a doc
            as relevant when ``grade >= min_relevance``. ``None`` means 1.
        source: where the data came from, used in error messages.
        notes: what reading the data did to it (e.g. a byte order mark removed, fields ignored),
            carried into the provenance of every evaluation.
        copy: ``False`` wraps plain ``dict`` rows read-only instead of copying them (about a
            third of the cost at 10M rows, and their memory). The object then shows later changes
            to ``data``: for an input used within one call, as :func:`evalbridge.evaluate` does.
        allow_empty: accept a mapping with no query (:func:`evalbridge.evaluate` does, and says so
            in the provenance); by default an empty input is refused as a likely mistake.
        topics: the text of each query, where the input holds it (a LlamaIndex dataset's ``queries``):
            kept as :attr:`topics` (read-only, empty when the input had none); not compared.
        judged_by: who gave each grade, ``{query id: {doc id: source}}`` (``human``, a judge's name), where the
            input says it (a file of graded pairs with a judge field, :func:`evalbridge.merge_judgements`): kept as
            :attr:`judged_by` (read-only, empty when unknown); not compared.
        strata: the stratum each judged pair was sampled from, ``{query id: {doc id: stratum}}``, where the input
            says it (a stratified sample of the pool, ``format="sample_eval"``): kept as :attr:`strata`, read by
            ``xinfAP`` and ``infNDCG`` (read-only, empty when unknown); not compared.

    Example:
        >>> qrels = Qrels({"q1": {"d1": 2, "d2": 0}})
        >>> qrels["q1"]["d1"], qrels.max_grade
        (2, 2)
    """

    __slots__ = ("min_relevance", "_grades", "_topics", "_judged_by", "_strata")
    min_relevance: float | None
    _grades: frozenset[float]
    _topics: dict[str, str]
    _judged_by: dict[str, dict[str, str]]
    _strata: dict[str, dict[str, str]]
    _what = "grade"
    _compared = ("min_relevance",)
    _state = (*_Base._state, "min_relevance", "_topics", "_judged_by", "_strata")

    def __init__(self, data: object, *, min_relevance: float | None = None, source: str | None = None,
                 copy: bool = True, notes: tuple[str, ...] = (), allow_empty: bool = False,
                 topics: Mapping[str, str] | None = None,
                 judged_by: Mapping[str, Mapping[str, str]] | None = None,
                 strata: Mapping[str, Mapping[str, str]] | None = None) -> None:
        if strata is None and isinstance(data, Qrels):
            strata = data._strata
        if min_relevance is None and isinstance(data, Qrels):
            min_relevance = data.min_relevance
        if topics is None and isinstance(data, Qrels):
            topics = data._topics
        if judged_by is None and isinstance(data, Qrels):
            judged_by = data._judged_by
        if min_relevance is not None:
            check_level(min_relevance)
        object.__setattr__(self, "min_relevance", min_relevance)
        object.__setattr__(self, "_topics", {str(q): str(t) for q, t in (topics or {}).items()})
        object.__setattr__(self, "_judged_by", {str(q): {str(d): str(who) for d, who in docs.items()}
                                                for q, docs in (judged_by or {}).items()})
        object.__setattr__(self, "_strata", {str(q): {str(d): str(s) for d, s in docs.items()}
                                             for q, docs in (strata or {}).items()})
        super().__init__(data, source=source, copy=copy, notes=notes, allow_empty=allow_empty)

    @property
    def strata(self) -> Mapping[str, Mapping[str, str]]:
        """Query id -> doc id -> the stratum of the pool the pair was sampled from, where the input said it
        (``format="sample_eval"``); empty otherwise. Read-only; not part of equality."""
        return MappingProxyType({q: MappingProxyType(docs) for q, docs in self._strata.items()})

    @property
    def judged_by(self) -> Mapping[str, Mapping[str, str]]:
        """Query id -> doc id -> who gave the grade (``human``, a judge's name), where the input said it; empty
        otherwise. Read-only; not part of equality."""
        return MappingProxyType({q: MappingProxyType(docs) for q, docs in self._judged_by.items()})

    @property
    def topics(self) -> Mapping[str, str]:
        """Query id -> the query's text, where the input held the texts (a LlamaIndex dataset's
        ``queries``); empty otherwise. Read-only; not part of equality."""
        return MappingProxyType(self._topics)

    @property
    def grades(self) -> frozenset[float]:
        """Every distinct grade in the qrels (computed once: the qrels are immutable). Where an ``int`` and an
        equal ``float`` are both grades (``2`` and ``2.0``), the ``int`` stands for both, whatever their order."""
        try:
            return self._grades
        except AttributeError:
            pass
        if self._table is not None:
            grades = self._table.distinct_values()
        else:
            values = list(chain.from_iterable(map(methodcaller("values"), self._data.values())))
            grades = frozenset(filter(int.__instancecheck__, values)) | frozenset(values)  # (| keeps the left's of equal ones)
        object.__setattr__(self, "_grades", grades)
        return grades

    @property
    def max_grade(self) -> float:
        """The top grade of the scale: the largest grade in the whole qrels (0 if none)."""
        return max(self.grades, default=0)

    @property
    def is_integral(self) -> bool:
        """True when every grade is a whole number (what trec_eval-based backends need)."""
        return self.fractional_grade is None

    @property
    def fractional_grade(self) -> float | None:
        """The smallest grade that is not a whole number (``7.5``), or None when every grade is one."""
        return min((g for g in self.grades if not float(g).is_integer()), default=None)


class Run(_Base):
    """Retrieval output: query id -> doc id -> score (higher is better).

    The order of documents comes only from the scores (see :mod:`evalbridge.common.ranking`);
    adapters for rank-ordered input emit strictly decreasing scores.

    Args:
        data: a mapping ``{query_id: {doc_id: score}}``; scores must be finite. Or a
            :class:`~evalbridge.model.columnar.RowTable`, or a ``Run`` (its rows are shared, not copied).
        name: the system's name, used in reports.
        source: where the data came from, used in error messages.
        copy: ``False`` wraps plain ``dict`` rows instead of copying them (see :class:`Qrels`).
        allow_empty: accept a run with no query (see :class:`Qrels`).
        logged: what the input logged of each question beside the ranking (a RAG log's slice labels and
            numbers such as ``latency_ms``): field -> {query id: labels (a tuple of texts) or a number}; kept as
            :attr:`logged` (read-only, empty when the input had none); not compared.
    """

    __slots__ = ("name", "_logged")
    name: str | None
    _logged: dict[str, dict[str, Any]]
    _what = "score"
    _compared = ("name",)
    _state = (*_Base._state, "name", "_logged")

    def __init__(self, data: object, *, name: str | None = None, source: str | None = None,
                 copy: bool = True, notes: tuple[str, ...] = (), allow_empty: bool = False,
                 logged: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        object.__setattr__(self, "name", name if name is not None else getattr(data, "name", None))
        if logged is None and isinstance(data, Run):
            logged = data._logged
        object.__setattr__(self, "_logged", {str(f): {str(q): v for q, v in values.items()}
                                             for f, values in (logged or {}).items()})
        super().__init__(data, source=source, copy=copy, notes=notes, allow_empty=allow_empty)

    @property
    def logged(self) -> Mapping[str, Mapping[str, Any]]:
        """Field -> {query id: value}: what the input logged of each question beside the ranking (a RAG log's
        slice labels, as tuples of texts, and numbers such as ``latency_ms``); empty otherwise. Read-only; not
        part of equality."""
        return MappingProxyType({f: MappingProxyType(v) for f, v in self._logged.items()})


def rows_of(data: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Mapping[str, Any]]:
    """The ``dict`` rows inside a :class:`Qrels` or :class:`Run` (built once from a columnar table), shared:
    neither copied nor wrapped read-only, for code that reads every row at C speed (the engine, ranx's
    order of tied documents) and never changes them. Any other mapping is returned as it is.

    Example:
        >>> rows_of(Run({"q1": {"d1": 0.5}}))
        {'q1': {'d1': 0.5}}
    """
    return data._data if isinstance(data, _Base) else data
