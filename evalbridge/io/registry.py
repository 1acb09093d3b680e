"""The registry of input/output formats: every format declared once, as data.

A :class:`Format` says what a format is called, which file suffixes may hold it, what it holds
(qrels, a run, either, or both at once), the options it takes (column or field names, ...), how
to recognise it from a file's first bytes when a suffix is shared, and its reader and writer.
Each format module of :mod:`evalbridge.io` declares its formats in a ``FORMATS`` tuple;
:data:`MODULES` lists those modules, and :func:`formats` gathers them.

Every door resolves an input through :func:`resolve` and reads it with :func:`load`: the Python
API (``read_qrels``, ``read_run``, ``read_pair``, ``evaluate(path, ...)``), the command line and
config files. So one path means one thing everywhere:

* an explicit ``format=`` wins;
* an in-memory object goes to the first format whose ``accepts`` takes it (Qrels / Run, dict of
  dicts, DataFrames, Arrow and Polars tables, ranx objects, rows of tuples...);
* a string starting with a format's ``prefix`` names an input of that format (``irds:<dataset id>``);
* a path goes by its suffix (``.gz`` aside): a suffix held by one format picks it; a suffix held
  by several (``.tsv``, ``.jsonl``, ``.json``) is decided by each candidate's ``sniff`` of the
  first bytes, in order, and when none matches by the format whose first suffix it is (``tsv``
  for ``.tsv``: its reader then says what is wrong); a file with no known suffix is TREC.

Example:
    >>> [f.name for f in formats().values()][:3]
    ['trec', 'judged_list', 'sample_eval']
    >>> resolve("runs/bm25.run", kind="run").name
    'trec'
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InputError
from .text import file_error, not_a_file, replacing
from .policies import EVERY_FORMAT, POLICIES, policy_options

if TYPE_CHECKING:
    from ..model.data import Qrels, Run

__all__ = ["Format", "Parsed", "Kind", "LEVEL_OPTION", "formats", "get_format", "resolve", "load", "read_qrels",
           "read_run", "read_pair", "write", "suffix_of", "output_format", "check_options", "read_into_columns", "MODULES",
           "check_same_judgements", "POLICIES", "policy_options", "prefixed", "check_prefixed"]

Kind = Literal["qrels", "run", "pair"]

#: The modules that declare formats (a ``FORMATS`` tuple each), in resolution order.
MODULES = ("trec", "sample_eval", "judging", "retrieval_logs", "jsonl", "rag", "tables", "spark_tables", "datasets", "shapes", "objects")


#: The option of every format that reads judgements: the relevance level of binary metrics, stored on the
#: qrels read (:func:`load` stores it; a format whose reader stores it itself declares it in its ``options``).
LEVEL_OPTION: Mapping[str, str] = MappingProxyType(
    {"min_relevance": "the relevance level stored on the qrels (LLM grades 0-10: e.g. 7)"})


@dataclass(frozen=True)
class Parsed:
    """What a reader got from one input: qrels, a run, or both (formats that hold both)."""

    qrels: Qrels | None = None
    run: Run | None = None


Reader = Callable[[Any, str, Mapping[str, Any]], Parsed]
Writer = Callable[[Any, Path, Mapping[str, Any]], None]
#: ``spark(session, origin) -> DataFrame``: the input as Spark reads it (columns not yet picked).
SparkReader = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Format:
    """One input/output format.

    Attributes:
        name: the name users write (``format: csv``, ``--format csv``).
        title: a few words for tables.
        holds: ``{"qrels"}``, ``{"run"}`` or ``{"qrels", "run"}`` (one file holds either).
        paired: one input holds both the qrels and a run (RAG logs, label lists, judged lists).
        read: ``read(source, kind, options) -> Parsed``; ``kind`` is ``qrels``, ``run`` or ``pair``.
        suffixes: file suffixes that may hold the format (lower case, ``.gz`` removed first).
        options: option name -> what it sets; any other option is refused.
        write: ``write(obj, path, options)`` for a Qrels or a Run, or None (not writable).
        sniff: ``sniff(first bytes) -> bool``, deciding between formats that share a suffix.
        accepts: ``accepts(obj) -> bool`` for in-memory objects (None: files or data only).
        inline: the format is Python data (labels, pairs...) a config can give inline with ``data:``.
        example: a one-line example for the docs.
        spark: how Spark reads the input itself with ``engine: spark`` (``spark-table``: a table of the
            session's catalog; ``parquet``: a file or a folder of files), or None: the input is read
            here, by ``read``, and handed to Spark (:mod:`evalbridge.io.spark_tables`).
        named: a string given to the format is a name it looks up (a table), not a file path.
        prefix: a string starting with it names an input of this format wherever a path is taken
            (``irds:`` for a dataset of ir_datasets; :func:`prefixed`), or "" (none).
        read_columns: ``read_columns(source, kind) -> Parsed | None``: the input read into columns
            whatever its size, or None where the columnar reader declines it (see :func:`load`'s
            ``prefer_columns``); None for a format with one reader (tables are columnar at any size).
        whole_judgements: a paired format whose input holds every judgement of each of its questions (a
            RAG log's relevant list, pairs, records), so several inputs over the same questions must judge
            each alike (:func:`check_same_judgements`); label lists and judged lists judge only what they
            retrieved.
        sniffed_only: the format reads a file of its suffixes only when its ``sniff`` recognises it (graded
            pairs among JSON Lines), never as the suffix's reader of last resort, whose errors then say what
            is wrong.
    """

    name: str
    title: str
    holds: frozenset[str]
    read: Reader
    paired: bool = False
    suffixes: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    write: Writer | None = None
    sniff: Callable[[bytes], bool] | None = None
    accepts: Callable[[object], bool] | None = None
    inline: bool = False
    example: str = ""
    spark: SparkReader | None = None
    named: bool = False
    prefix: str = ""
    read_columns: Callable[[Any, str], Parsed | None] | None = None
    whole_judgements: bool = False
    sniffed_only: bool = False

    @property
    def takes(self) -> Mapping[str, str]:
        """Every option the format takes: its own, :data:`LEVEL_OPTION` wherever it reads judgements, and the
        read policies every format takes (``ids``, :data:`evalbridge.io.policies.EVERY_FORMAT`)."""
        level = {} if not self.can_read("qrels") or "min_relevance" in self.options else LEVEL_OPTION
        return MappingProxyType({**self.options, **level, **policy_options(*EVERY_FORMAT)})

    def can_read(self, kind: str) -> bool:
        """True when the format can give ``kind`` (a paired format gives either part, or both)."""
        return self.paired or kind in self.holds

    @property
    def describes(self) -> str:
        """What one input of this format holds, in words."""
        if self.paired:
            return "qrels and run"
        return " or ".join(k for k in ("qrels", "run") if k in self.holds)


@cache
def formats() -> Mapping[str, Format]:
    """Every registered format by name, in resolution order (modules imported on first call)."""
    table: dict[str, Format] = {}
    for module in MODULES:
        for fmt in importlib.import_module(f"{__package__}.{module}").FORMATS:
            if fmt.name in table:
                raise RuntimeError(f"format {fmt.name!r} is declared twice")
            table[fmt.name] = fmt
    return MappingProxyType(table)


def get_format(name: str, *, kind: str | None = None) -> Format:
    """The format called ``name`` (checked to give ``kind`` when given)."""
    table = formats()
    fmt = table.get(name) if isinstance(name, str) else None
    if fmt is None:
        close = difflib.get_close_matches(str(name), list(table), n=1, cutoff=0.5)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise InputError(f"unknown format {name!r}.", fix=f"{hint}choose one of {', '.join(table)} "
                                                        f"(`evalbridge formats` describes each).")
    if kind is not None and not fmt.can_read(kind):
        others = [n for n, f in table.items() if f.can_read(kind)]
        raise InputError(f"format {name!r} holds {fmt.describes}, not {kind}.",
                         fix=f"formats that hold {kind}: {', '.join(others)}.")
    return fmt


def suffix_of(path: str | os.PathLike[str]) -> str:
    """The suffix that names a file's format: the last one, ``.gz`` removed, lower case.

    >>> suffix_of("qrels/test.tsv.gz"), suffix_of("run.bm25"), suffix_of("qrels")
    ('.tsv', '.bm25', '')
    """
    suffixes = [s.lower() for s in Path(str(path)).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def _is_path(obj: object) -> bool:
    return isinstance(obj, (str, os.PathLike))


def prefixed(obj: object) -> Format | None:
    """The format whose ``prefix`` starts ``obj`` (``irds:msmarco-passage/trec-dl-2019`` -> ``irds``), else None:
    the one place a name that is not a file is told from a path, for every door."""
    if not isinstance(obj, str):
        return None
    return next((f for f in formats().values() if f.prefix and obj.startswith(f.prefix)), None)


def check_prefixed(obj: object, format: str | None) -> None:
    """Refuse a prefixed name (``irds:...``) given with another format: it names no file that format could read."""
    named = prefixed(obj)
    if named is not None and format is not None and format != named.name:
        raise InputError(f"{obj!r} names an input of format {named.name!r} ({named.title}), not a {format} file.",
                         fix=f"remove the format (or give format {named.name!r}).")


def _resolve_path(path: str | os.PathLike[str], kind: str, options: Mapping[str, Any]) -> Format:
    from .text import head

    table = formats()
    named = prefixed(path)
    if named is not None:
        if not named.can_read(kind):
            raise InputError(f"{path!r} is read as format {named.name!r} ({named.title}), which holds "
                             f"{named.describes}, not {kind}.", fix=f"give it where the {named.describes} are read.")
        return named
    suffix = suffix_of(path)
    candidates = [f for f in table.values() if suffix in f.suffixes and f.can_read(kind)]
    if not candidates:
        return table["trec"]
    # options some of them take pick among those (a RAG log's relevant= names a RAG log); none: the reader says so
    candidates = [f for f in candidates if all(o in f.takes for o in options)] or candidates
    if len(candidates) == 1:
        return candidates[0]
    first = head(path)
    for fmt in candidates:
        if fmt.sniff is not None and fmt.sniff(first):
            return fmt
    # Nothing matched: the format whose own suffix this is reads the file, and its errors say what is wrong.
    usual = [f for f in candidates if not f.sniffed_only] or candidates
    return next((f for f in usual if f.suffixes[0] == suffix), usual[0])


def resolve(obj: Any, *, kind: str, format: str | None = None, options: Mapping[str, Any] | None = None) -> Format:
    """The format of ``obj`` (a path or an in-memory object) when read as ``kind``; ``options``: the options
    given (column and field names...): among the formats a file's suffix may hold, those that take every one
    of them are tried first, so ``relevant=`` reads a JSON Lines file as a RAG log at every door."""
    if format is not None:
        check_prefixed(obj, format)
        return get_format(format, kind=kind)
    if _is_path(obj):
        return _resolve_path(obj, kind, {k: v for k, v in (options or {}).items() if v is not None})
    for fmt in formats().values():
        if fmt.accepts is not None and fmt.accepts(obj):
            if not fmt.can_read(kind):
                raise InputError(f"got {fmt.title} where {kind} was expected.",
                                 fix=f"pass the {kind} here; {fmt.name} inputs hold {fmt.describes}.")
            return fmt
    accepted = [f.title for f in formats().values() if f.accepts is not None]
    raise InputError(f"cannot read {kind} from {type(obj).__name__} {obj!r:.60}.",
                     fix=f"pass a file path, or one of: {', '.join(accepted)}; for label lists or (retrieved, "
                         f"relevant) pairs use from_labels / from_pairs.")


def check_options(fmt: Format, options: Mapping[str, Any]) -> None:
    """Refuse an option ``fmt`` does not take, naming the formats that take it, and a read policy
    (:data:`POLICIES`) given a value it does not have."""
    for option, value in options.items():
        if option in POLICIES and value is not None and value not in POLICIES[option][0]:
            choices = POLICIES[option][0]
            raise InputError(f"{option}={value!r} is not one of {', '.join(map(repr, choices))}.",
                             fix=f"{option}: {POLICIES[option][1]}.")
        if option not in fmt.takes:
            takers = [n for n, f in formats().items() if option in f.takes]
            where = f" (it applies to {', '.join(takers)})" if takers else ""
            known = f"its options are {', '.join(fmt.takes)}" if fmt.takes else "it takes no options"
            raise InputError(f"option {option!r} does not apply to format {fmt.name!r}{where}; {known}.",
                             fix="remove the option or name another format.")


def load(obj: Any, kind: str, *, format: str | None = None, prefer_columns: bool = False, **options: Any) -> Parsed:
    """Read ``obj`` as ``kind`` (``qrels``, ``run`` or ``pair``) through its format; with ``prefer_columns``,
    by the format's columnar reader whatever the input's size, where it has one and takes the input
    (the same values either way)."""
    given = {k: v for k, v in options.items() if v is not None}
    fmt = resolve(obj, kind=kind, format=format, options=given)
    check_options(fmt, given)
    level = given.pop("min_relevance", None) if "min_relevance" not in fmt.options else None
    if level is not None and kind == "run":
        raise InputError(f"min_relevance={level!r} is a level of judgements, and a run is being read.",
                         fix="give min_relevance where the qrels are read, or to the evaluation.")
    if kind == "qrels" and given.get("duplicates", "error") != "error":
        raise InputError("duplicates='first' applies to runs and ranked lists, not to qrels: which of two "
                         "judgements of a document is right is not for evalbridge to pick.",
                         fix="remove the repeated judgements from the qrels, or the option.")
    fault = not_a_file(obj) if _is_path(obj) and not fmt.accepts and not fmt.named else None
    if fault is not None:
        raise file_error(obj, fault)
    # a policy every format takes goes to the readers that list it (their ids may be ints), else is applied below
    passed = {k: v for k, v in given.items() if k not in EVERY_FORMAT or k in fmt.options}
    columnar = fmt.read_columns(obj, kind) if prefer_columns and fmt.read_columns is not None and not passed else None
    parsed = columnar if columnar is not None else fmt.read(obj, kind, MappingProxyType(passed))
    if kind == "pair" and (parsed.qrels is None or parsed.run is None):
        raise InputError(f"format {fmt.name!r} holds {fmt.describes}, not both qrels and a run.",
                         fix="read the qrels and the run separately (read_qrels, read_run).")
    if level is not None and parsed.qrels is not None:
        from ..model.data import Qrels

        parsed = Parsed(Qrels(parsed.qrels, min_relevance=level, copy=False), parsed.run)
    if given.get("ids") == "str":
        from ..model.data import with_str_ids

        parsed = Parsed(qrels=None if parsed.qrels is None else with_str_ids(parsed.qrels),
                        run=None if parsed.run is None else with_str_ids(parsed.run))
    return parsed


def read_qrels(obj: Any, *, format: str | None = None, prefer_columns: bool = False, **options: Any) -> Qrels:
    """Read :class:`~evalbridge.model.data.Qrels` from a path or an object, in any registered format.

    Args:
        obj: a path (format from the suffix, see :func:`resolve`) or an object (Qrels, dict of
            dicts, pandas / Arrow / Polars table, ranx Qrels, ir-measures rows, ``(qid, docid, grade)``
            tuples...).
        format: a registered format name, to override the detection.
        prefer_columns: read a file into columns whatever its size (TREC files are, from 4 MB on,
            without it): for qrels evaluated against a large run (see :func:`read_into_columns`), which
            the engine then pairs table to table. The same values either way.
        options: the format's options, e.g. ``query=``, ``doc=``, ``grade=`` (column or field names).

    Raises:
        InputError: an unknown format or option, an unreadable input (with file:line), bad values.

    Example:
        >>> read_qrels({"q1": {"d1": 1}})
        Qrels(1 queries, 1 rows)
    """
    obj = os.fspath(obj) if isinstance(obj, os.PathLike) else obj
    qrels = load(obj, "qrels", format=format, prefer_columns=prefer_columns, **options).qrels
    if qrels is None:
        raise InputError(f"{obj!r:.60} holds no qrels.", fix="pass the qrels here.")
    return qrels


def read_run(obj: Any, *, format: str | None = None, name: str | None = None, **options: Any) -> Run:
    """Read a :class:`~evalbridge.model.data.Run` from a path or an object, in any registered format.

    Args:
        obj: as :func:`read_qrels` (a run instead of qrels).
        format: a registered format name, to override the detection.
        name: the system's name (default: what the input says, e.g. a TREC run's tag).
        options: the format's options, e.g. ``query=``, ``doc=``, ``score=``.
    """
    from ..model.data import Run

    obj = os.fspath(obj) if isinstance(obj, os.PathLike) else obj
    run = load(obj, "run", format=format, **options).run
    if run is None:
        raise InputError(f"{obj!r:.60} holds no run.", fix="pass the run here.")
    return run if name is None or name == run.name else Run(run, name=name)


def read_pair(obj: Any, *, format: str | None = None, name: str | None = None,
              **options: Any) -> tuple[Qrels, Run]:
    """``(qrels, run)`` from one input that holds both: a RAG log, a judged list, label lists...

    Example:
        >>> qrels, run = read_pair({"q1": [1, 0, 1]}, format="labels")
        >>> dict(run["q1"])
        {'d1': 3.0, 'd2': 2.0, 'd3': 1.0}
    """
    from ..model.data import Run

    parsed = load(obj, "pair", format=format, **options)
    qrels, run = parsed.qrels, parsed.run
    if qrels is None or run is None:  # never: load refuses a "pair" read that did not give both
        raise InputError(f"{obj!r:.60} holds no qrels and run.", fix="read the qrels and the run separately.")
    return qrels, run if name is None else Run(run, name=name)


#: the fault of an input holding its own judgements given beside qrels, at every door
BESIDE_QRELS = "holds its own judgements, and qrels are given too"


def check_not_beside_qrels(run: Any) -> None:
    """Refuse, as the run of an evaluation with qrels, a path whose format holds its own judgements (a RAG log,
    a judged list): whose judgements count would be a guess. ``read_run(path)`` still reads its ranking alone.

    Raises:
        InputError: naming the file and both ways out.
    """
    if not _is_path(run):
        return
    try:
        fmt = resolve(run, kind="run")
    except (InputError, OSError):
        return  # the reader says what is wrong with it
    if fmt.paired:
        raise InputError(f"format {fmt.name!r} {BESIDE_QRELS}; evalbridge does not choose which judge.",
                         source=os.fspath(run), fix="evaluate it alone: evaluate(*read_pair(path), metrics); or judge its "
                                                    "ranking by these qrels: evaluate(qrels, read_run(path), metrics).")


def check_same_judgements(judged: Mapping[str, Qrels]) -> None:
    """Refuse inputs over the same questions that judge a question they share differently (several RAG logs
    of one test set are several systems against one set of judgements); ``judged``: input name -> its qrels.

    Raises:
        InputError: naming both inputs, the question and a document judged differently.
    """
    first: dict[str, tuple[str, Mapping[str, float]]] = {}
    for name, qrels in judged.items():
        if any(qrels == other for other in judged.values() if other is not qrels):
            continue  # equal to another input, checked through that one
        for qid, grades in qrels.items():
            seen, theirs = first.setdefault(qid, (name, grades))
            if seen == name or dict(theirs) == dict(grades):
                continue
            doc = next(d for d in sorted({*theirs, *grades}) if theirs.get(d) != grades.get(d))
            said = {n: "no judgement" if g.get(doc) is None else f"grade {g[doc]:g}" for n, g in
                    ((seen, theirs), (name, grades))}
            raise InputError(f"{seen} and {name} judge this question differently: doc {doc!r} has "
                             f"{said[seen]} in {seen}, {said[name]} in {name}.", query_id=str(qid),
                             fix="systems compared over the same questions need one set of judgements: give every "
                                 "input the same relevant documents, or evaluate each alone.")


def read_into_columns(obj: Any) -> bool:
    """True when ``obj``, an input about to be read (or already read), is or will be columnar: a
    columnar Qrels / Run, or a file large enough for the columnar readers. The qrels evaluated against
    such a run are worth reading into columns too (``read_qrels(prefer_columns=True)``): pyarrow is
    imported for the run anyway, and two tables pair without turning dict rows into one (a 950 KB
    qrels file beside a 7M-row run: 50 ms less).

    Decided from the input alone, before anything is read, never from what happens to be imported."""
    from ..model.data import Qrels, Run
    from ._arrow_trec import worth_reading

    if isinstance(obj, (Qrels, Run)):
        return obj.columnar is not None
    return _is_path(obj) and worth_reading(obj)


def output_format(path: str | os.PathLike[str], kind: str) -> Format:
    """The format ``path``'s suffix names for writing ``kind``: the first writable one, else TREC."""
    suffix = suffix_of(path)
    writable = [f for f in formats().values() if suffix in f.suffixes and f.write is not None and kind in f.holds]
    return writable[0] if writable else formats()["trec"]


def write(obj: Qrels | Run, path: str | os.PathLike[str], *, format: str | None = None, **options: Any) -> Path:
    """Write qrels or a run to ``path`` in ``format`` (default: from the suffix, else TREC).

    Raises:
        InputError: the format cannot be written, or cannot hold what ``obj`` is.
    """
    from ..model.data import Qrels, Run

    if not isinstance(obj, (Qrels, Run)):
        raise InputError(f"write() writes Qrels or a Run; got {type(obj).__name__} {obj!r:.60}.",
                         fix="read it first: eb.read_qrels(obj) or eb.read_run(obj).")
    if not isinstance(path, (str, os.PathLike)):
        raise InputError(f"write() needs a path to write to; got {type(path).__name__} {path!r:.60}.",
                         fix="pass a file path such as 'run.txt'.")
    kind = "qrels" if isinstance(obj, Qrels) else "run"
    fmt = get_format(format) if format is not None else output_format(path, kind)
    if fmt.write is None or kind not in fmt.holds:
        names = [n for n, f in formats().items() if f.write is not None and kind in f.holds]
        raise InputError(f"format {fmt.name!r} cannot be written with {kind}.",
                         fix=f"formats that can: {', '.join(names)}.")
    given = {k: v for k, v in options.items() if v is not None}
    check_options(fmt, given)
    target = Path(path)
    with replacing(target) as temporary:  # written whole or not at all: the old file stays until then
        fmt.write(obj, temporary, MappingProxyType(given))
    return target
