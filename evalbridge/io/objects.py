"""In-memory objects as inputs, and the way back to other tools' objects.

Formats (see :mod:`.registry`), recognised by type:

* ``evalbridge``: :class:`~evalbridge.model.data.Qrels` / :class:`~evalbridge.model.data.Run`, returned as they are;
* ``mapping``: a dict of dicts ``{query_id: {doc_id: value}}`` (ranx's and pytrec_eval's shape);
* ``ranx``: ranx ``Qrels`` / ``Run`` objects (their ``to_dict()``);
* ``rows``: an iterable of rows: ir-measures / ir_datasets namedtuples (``Qrel(query_id, doc_id,
  relevance, iteration)``, ``ScoredDoc(query_id, doc_id, score)``) or plain ``(qid, docid, value)``
  tuples. Duplicate (query, doc) rows are refused, as everywhere.

And the way back: :func:`to_dataframe`, :func:`to_ranx`, :func:`to_ir_measures`. pandas, ranx and
ir_measures are imported only inside the functions that need them; their objects are recognised by
the module that defines their type.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import InputError
from ..model.data import Qrels, Run

if TYPE_CHECKING:
    from .registry import Parsed

__all__ = ["to_dataframe", "to_ranx", "to_ir_measures", "FORMATS"]


class _Kind(NamedTuple):
    """What differs between reading qrels and reading a run."""

    name: str  # "qrels" or "run"
    cls: type[Qrels] | type[Run]
    value: str  # the value's name in long formats: "relevance" or "score"
    ranx_type: str  # class name in ranx
    irm_type: str  # namedtuple name in ir-measures


_QRELS = _Kind("qrels", Qrels, "relevance", "Qrels", "Qrel")
_RUN = _Kind("run", Run, "score", "Run", "ScoredDoc")
_KINDS = {"qrels": _QRELS, "run": _RUN}


def _library(obj: object) -> str:
    """Top-level package that defines ``type(obj)`` (``"pandas"``, ``"ranx"``, ...)."""
    return type(obj).__module__.split(".")[0]


def _parsed(obj: Qrels | Run) -> Parsed:
    from .registry import Parsed

    return Parsed(qrels=obj) if isinstance(obj, Qrels) else Parsed(run=obj)


# ---------------------------------------------------------------- readers

def _read_evalbridge(obj: Qrels | Run, kind: str, options: Any) -> Any:
    wanted = _KINDS[kind]
    if not isinstance(obj, wanted.cls):
        other = "run" if wanted is _QRELS else "qrels"
        raise InputError(f"got a {type(obj).__name__} where {wanted.name} were expected.",
                         fix=f"pass the {wanted.name} here and the {other} in its own argument.")
    return _parsed(obj)


def _read_mapping(obj: Mapping[Any, Any], kind: str, options: Any) -> Any:
    """A dict of dicts (``{query: [doc, ...]}`` id lists: :mod:`.shapes`); with ``rank=True`` (runs) its values
    are ranks, 1 = best (:mod:`.ranks`), with ``distance=True`` distances, lower is better (:mod:`.distances`)."""
    from .shapes import is_id_lists, read_id_lists, str_id_rows

    if is_id_lists(obj):  # {query: [doc, ...]}: relevant ids (qrels) or a ranking (run)
        return _parsed(read_id_lists(obj, kind, {k: v for k, v in options.items() if k not in VALUE_ROLES}))
    return _parsed(read_values(str_id_rows(obj, options.get("ids")), kind, options))


#: the options of a mapping's values: ranks (1 = best) or distances (lower is better) instead of scores
VALUE_ROLES: Mapping[str, str] = {
    "rank": "runs: the values are ranks (1 = best), read as scores max_rank + 1 - rank (rank=True; on the command "
            "line and in a config columns rank=values)",
    "distance": "runs: the values are distances (lower is better), read as scores -distance (distance=True; on the "
                "command line and in a config columns distance=values)",
}


def values_option(role: str) -> str:
    """How the values of a mapping are said to be ``role`` (``rank``, ``distance``) at the current door:
    ``rank=True`` in Python, ``--run-columns rank=values``, ``columns: {rank: values}``."""
    from ..common.wording import current, option

    return option(role, True) if current() == "python" else option(role, "values", column=True)


def read_values(rows: Any, kind: str, options: Mapping[str, Any], *, source: str | None = None,
                notes: tuple[str, ...] = (), stacklevel: int = 6) -> Qrels | Run:
    """``{query: {doc: value}}`` as qrels, or as a run whose values are scores, ranks (``rank``) or distances
    (``distance``), each ``True`` or ``"values"`` (the name of a mapping's only column); whole numbers that rise
    with the order of every query, read as scores, are warned about (:func:`.ranks.warn_rising`; ``stacklevel``
    frames up from here: read_run's caller when the registry's reader calls this)."""
    from . import distances, ranks
    from .fields import check_order

    given = {role: options[role] for role in VALUE_ROLES if options.get(role) is not None}
    for role, value in given.items():
        if value is not True and value != "values":
            raise InputError(f"{role}={value!r}: the values of {{query: {{doc: value}}}} have no column name; "
                             f"{values_option(role)} says they are {role}s.", source=source,
                             fix=f"write {values_option(role)}, or leave it out when the values are scores.")
    if given and kind != "run":
        role = next(iter(given))
        raise InputError(f"{values_option(role)} applies to runs (values that are {role}s), but qrels are read "
                         f"here.", source=source, fix="leave it out: the values of qrels are grades.")
    check_order({role: "values" for role in given}, kind, where=source, what="values")
    if kind != "run":
        return Qrels(rows, source=source, notes=notes)
    run = Run(rows, source=source, notes=notes)  # the ids and values checked as every run's
    if "rank" in given:
        scores = {qid: ranks.scores_from_ranks({doc: ranks.rank_value(value, source=source, query_id=str(qid))
                                                for doc, value in docs.items()}, where=source, query_id=str(qid))
                  for qid, docs in rows.items()}
        return Run(scores, source=source, notes=(*notes, ranks.note("the values")))
    if "distance" in given:
        scores = {qid: distances.scores_from_distances(docs) for qid, docs in rows.items()}
        return Run(scores, source=source, notes=(*notes, distances.note("the values")))
    warned = rising_values(rows, stacklevel=stacklevel)
    return run if warned is None else Run(run, source=source, notes=(*notes, warned))


def rising_values(rows: Mapping[Any, Mapping[Any, Any]], *, stacklevel: int) -> str | None:
    """Warn when the values of ``{query: {doc: value}}``, read as scores, are whole numbers (ints) rising with the
    order of every query, as ranks do (:func:`.ranks.warn_rising`, the fix in the door's words); the note, or None.
    One pass that stops at the first value that is no int, or the first query whose values do not rise."""
    from . import ranks

    if all(type(v) is int for docs in rows.values() for v in docs.values()) \
            and ranks.rising_in_lists(docs.values() for docs in rows.values()):
        return ranks.warn_rising("the values", stacklevel=stacklevel, fix=values_option("rank"))
    return None


def _read_ranx(obj: Any, kind: str, options: Any) -> Any:
    wanted = _KINDS[kind]
    if type(obj).__name__ != wanted.ranx_type:
        raise InputError(f"got a ranx {type(obj).__name__} where {wanted.name} were expected.",
                         fix=f"pass a ranx {wanted.ranx_type}.")
    extra = {"name": obj.name} if wanted is _RUN else {}
    return _parsed(wanted.cls(obj.to_dict(), **extra))


def _read_rows(obj: Iterable[Any], kind: str, options: Any) -> Any:
    """Rows with ``query_id``, ``doc_id`` and ``relevance``/``score`` fields, or ``(qid, docid, value)`` tuples."""
    wanted = _KINDS[kind]
    rows = iter(obj)
    first = next(rows, None)
    if first is None:
        raise InputError(f"cannot read {wanted.name} from an empty iterable.",
                         fix=f"give at least one (query_id, doc_id, {wanted.value}) row.")
    fields = getattr(first, "_fields", None)
    if fields is not None:
        if not {"query_id", "doc_id", wanted.value} <= set(fields):
            raise InputError(f"cannot read {wanted.name} from {type(first).__name__} rows (fields "
                             f"{', '.join(fields)}).", fix=f"pass ir-measures {wanted.irm_type} rows.")

        row_type = type(first)

        def unpack(row: Any) -> tuple[Any, Any, Any]:
            if type(row) is not row_type:
                raise InputError(f"the rows mix {row_type.__name__} and {type(row).__name__} ({row!r:.60}).",
                                 fix=f"give every row as ir-measures {wanted.irm_type}, or every row as a "
                                     f"(query_id, doc_id, {wanted.value}) tuple.")
            return row.query_id, row.doc_id, getattr(row, wanted.value)
    elif isinstance(first, tuple) and len(first) == 3:
        def unpack(row: Any) -> tuple[Any, Any, Any]:
            if not isinstance(row, tuple) or len(row) != 3:
                raise InputError(f"expected (query_id, doc_id, value) tuples; got {row!r:.60}.",
                                 fix="give every row three values.")
            return row
    else:
        hint = " (a list of question objects is a RAG log: read it with format='rag')" \
            if isinstance(first, Mapping) else ""
        raise InputError(f"cannot read {wanted.name} from rows like {first!r:.60}{hint}.",
                         fix=f"give (query_id, doc_id, {wanted.value}) tuples or ir-measures {wanted.irm_type} rows.")
    from .policies import as_id, dropped_note, keep_first

    ids, first_kept = options.get("ids"), keep_first(options.get("duplicates")) and wanted is _RUN
    data: dict[Any, dict[Any, Any]] = {}
    dropped = 0
    for n, row in enumerate(itertools.chain([first], rows)):
        qid, doc, value = unpack(row)
        qid, doc = as_id(qid, ids), as_id(doc, ids)
        docs = data.setdefault(qid, {})
        if doc in docs:
            if first_kept:
                dropped += 1
                continue
            raise InputError(f"doc {doc!r} appears twice for query {qid!r} (row {n}).", query_id=str(qid),
                             fix="remove the duplicate row" + (", or keep the first with duplicates='first'."
                                                               if wanted is _RUN else "."))
        docs[doc] = value
    return _parsed(wanted.cls(data, notes=dropped_note(dropped)))


def _is_rows(obj: object) -> bool:
    if not isinstance(obj, Iterable) or isinstance(obj, (str, bytes, bytearray, Mapping)):
        return False
    return _library(obj) not in ("pandas", "polars", "pyarrow", "numpy")


def _formats() -> tuple[Any, ...]:
    from .registry import Format, policy_options

    both = frozenset({"qrels", "run"})
    policies = policy_options("ids", "duplicates")
    return (
        Format("evalbridge", "evalbridge Qrels / Run", both, _read_evalbridge,
               accepts=lambda obj: isinstance(obj, (Qrels, Run)), example='eb.Qrels({"q1": {"d1": 2, "d2": 0}})'),
        Format("mapping", "dict of dicts {query_id: {doc_id: grade or score}}", both, _read_mapping,
               accepts=lambda obj: isinstance(obj, Mapping), inline=True,
               options={**policies, **VALUE_ROLES},
               example='eb.read_run({"q1": {"d1": 0.9, "d2": 0.4}})'),
        Format("ranx", "ranx Qrels / Run objects", both, _read_ranx,
               accepts=lambda obj: _library(obj) == "ranx" and type(obj).__name__ in ("Qrels", "Run"),
               example='eb.read_qrels(ranx.Qrels({"q1": {"d1": 1}}))'),
        Format("rows", "ir-measures / ir_datasets rows, or (query_id, doc_id, value) tuples", both, _read_rows,
               accepts=_is_rows, options=policies, example='eb.read_run([("q1", "d1", 0.9), ("q1", "d2", 0.4)])'),
    )


FORMATS = _formats()


# ---------------------------------------------------------------- the way back

def _kind_of(obj: object, action: str) -> _Kind:
    if isinstance(obj, Qrels):
        return _QRELS
    if isinstance(obj, Run):
        return _RUN
    raise InputError(f"{action} needs a Qrels or a Run; got {type(obj).__name__}.",
                     fix="convert first with read_qrels(...) or read_run(...).")


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

    if isinstance(obj, Qrels):  # kind is _QRELS
        return ranx.Qrels(data)
    return ranx.Run(data, name=obj.name)


def to_ir_measures(obj: Qrels | Run) -> list[Any]:
    """A list of ir-measures namedtuples: ``Qrel(query_id, doc_id, relevance, "0")`` or ``ScoredDoc``.

    Grades are passed as they are; ir-measures' pytrec_eval provider accepts only
    integer grades.
    """
    import ir_measures

    kind = _kind_of(obj, "to_ir_measures")
    make = getattr(ir_measures, kind.irm_type)
    return [make(qid, doc, value) for qid, docs in obj.items() for doc, value in docs.items()]
