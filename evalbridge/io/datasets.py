"""Datasets by name: ``irds:<dataset id>`` reads a benchmark's qrels through ir_datasets, as ir-measures' CLI does.

``eb.read_qrels("irds:msmarco-passage/trec-dl-2019/judged")``, ``evalbridge eval irds:msmarco-passage/trec-dl-2019/judged
run.txt`` and ``qrels: irds:msmarco-passage/trec-dl-2019/judged`` in a config read the same qrels: the registry gives
any string starting with :data:`PREFIX` to the format declared here (:attr:`~evalbridge.io.registry.Format.prefix`).

ir_datasets reads its own cache (``IR_DATASETS_HOME``, by default ``~/.ir_datasets``) and downloads what is not
there. When the download fails (no network, a file that is only handed out by its owners), the error names the file
ir_datasets wants (its address and checksum) and the path to put it at; an unknown dataset id gets the closest
names; a missing ir_datasets gets the command that installs it. No exception of ir_datasets reaches the user, and its
log lines are held back while it reads (they are said in the error when the read fails).

The dataset's own conventions come with it: its topics (the query texts, kept as the qrels'
:attr:`~evalbridge.model.data.Qrels.topics` when ir_datasets' cache holds them: never downloaded for that), the
measures it lists as official (:func:`official_metrics`, ``metrics: official``) and what its grades mean
(:func:`grade_meanings`).

ir_datasets is imported only inside the functions here (``evalbridge[datasets]``).
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any

from ..errors import BackendUnavailableError, InputError

__all__ = ["PREFIX", "INSTALL_HINT", "OFFICIAL", "read_dataset", "dataset_id", "official_metrics", "with_official",
           "official_note", "grade_meanings", "FORMATS"]

#: what starts the name of a dataset of ir_datasets wherever a path is taken
PREFIX = "irds:"
INSTALL_HINT = "pip install 'evalbridge[datasets]'"
#: the metric spec that stands for a dataset's official measures (``metrics: official``, ``-m official``)
OFFICIAL = "official"


def dataset_id(source: Any) -> str:
    """The dataset id of ``source`` (``irds:<id>`` or the bare id given with ``format="irds"``)."""
    if not isinstance(source, (str, os.PathLike)):
        raise InputError(f"a dataset of ir_datasets is named by a string such as "
                         f"'{PREFIX}msmarco-passage/trec-dl-2019/judged'; got {type(source).__name__} {source!r:.60}.")
    text = os.fspath(source)
    name = text[len(PREFIX):] if text.startswith(PREFIX) else text
    if not name.strip():
        raise InputError(f"{text!r} names no dataset.", fix=f"write e.g. {PREFIX}msmarco-passage/trec-dl-2019/judged.")
    return name


def _ir_datasets() -> Any:  # noqa: ANN401 - the ir_datasets module
    try:
        import ir_datasets
    except ImportError:
        raise BackendUnavailableError(f"reading a dataset by name ({PREFIX}...) needs ir_datasets, which is not "
                                      f"installed. Fix: {INSTALL_HINT}") from None
    return ir_datasets


class _Held(logging.Filter):
    """ir_datasets' log records while it reads, kept (to be said in an error) instead of printed."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        self.messages.append(record.getMessage())
        return False


@contextlib.contextmanager
def _quiet() -> Iterator[_Held]:
    """ir_datasets' logger (every module of it logs to ``ir_datasets``) prints nothing while it reads."""
    logger = logging.getLogger("ir_datasets")
    held = _Held()
    logger.addFilter(held)
    try:
        yield held
    finally:
        logger.removeFilter(held)


def _wanted_download(trace: TracebackType | None) -> Any:  # noqa: ANN401 - ir_datasets' Download
    """The ir_datasets ``Download`` whose fetching failed: the innermost frame running one of its methods."""
    from ir_datasets.util.download import Download

    found = None
    while trace is not None:
        owner = trace.tb_frame.f_locals.get("self")
        if isinstance(owner, Download):
            found = owner
        trace = trace.tb_next
    return found


def _not_cached(name: str, download: Any, home: Any) -> InputError:  # noqa: ANN401
    """The error of a dataset whose file is neither in ir_datasets' cache (``home``) nor downloadable here."""
    mirrors = [m.url for m in download.mirrors if isinstance(getattr(m, "url", None), str)]
    source = f" (from {mirrors[0]}{', md5 ' + download.expected_md5 if download.expected_md5 else ''})" \
        if mirrors else ""
    return InputError(f"dataset {name!r} is not in ir_datasets' cache ({home}), and ir_datasets could not download "
                      f"the file it wants{source}.",
                      fix=f"put that file at {download._cache_path}, or run once where the network is reachable "
                          f"(ir_datasets downloads it there), or point IR_DATASETS_HOME at a cache that holds it.")


def _load(irds: Any, name: str) -> Any:  # noqa: ANN401 - module, Dataset
    try:
        return irds.load(name)
    except KeyError:
        known = list(irds.registry._registered)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(map(repr, close))}? " if close else ""
        raise InputError(f"ir_datasets has no dataset {name!r}.",
                         fix=f"{hint}the ids are listed at ir-datasets.com (e.g. msmarco-passage/trec-dl-2019/judged)."
                         ) from None


def read_dataset(source: Any, kind: str, options: Mapping[str, Any]) -> Any:  # noqa: ANN401 - Parsed
    """The qrels of the ir_datasets dataset ``source`` names, read by ir_datasets' own loader."""
    from .objects import _read_rows
    from .registry import Parsed

    name = dataset_id(source)
    irds = _ir_datasets()
    with _quiet() as held:
        dataset = _load(irds, name)
        if not dataset.has_qrels():
            raise InputError(f"dataset {name!r} of ir_datasets has no qrels.",
                             fix="name a dataset with relevance judgements (e.g. a test subset such as "
                                 "msmarco-passage/trec-dl-2019/judged).")
        try:
            parsed = _read_rows(dataset.qrels_iter(), "qrels", options)
        except InputError:
            raise
        except Exception as error:  # noqa: BLE001 - any failure of ir_datasets becomes one message
            download = _wanted_download(error.__traceback__)
            if download is not None:
                try:
                    refusal = _not_cached(name, download, irds.util.home_path())
                except AttributeError:  # an ir_datasets whose Download keeps these elsewhere (checked on 0.6)
                    refusal = InputError(f"dataset {name!r} is not in ir_datasets' cache ({irds.util.home_path()}), "
                                         f"and ir_datasets could not download it.",
                                         fix="run once where the network is reachable, or point IR_DATASETS_HOME "
                                             "at a cache that holds it.")
                raise refusal from None
            said = held.messages[-1] if held.messages else (str(error).splitlines() or [type(error).__name__])[0]
            raise InputError(f"ir_datasets could not read the qrels of {name!r}: {said}.",
                             fix="check ir_datasets' cache (IR_DATASETS_HOME), or read the qrels file directly.") from None
        topics = _cached_topics(dataset, parsed.qrels.keys())
    qrels = parsed.qrels
    return Parsed(qrels=type(qrels)(qrels, source=f"{PREFIX}{name}", notes=qrels.notes, copy=False, topics=topics))


def _caches(handler: Any) -> list[Any]:  # noqa: ANN401 - an ir_datasets handler
    """The files of ir_datasets' cache (its ``Cache`` objects) that ``handler`` reads, found through the handlers
    it wraps (a judged subset filters the queries of its parent, which read a file, which ir_datasets downloads
    and keeps; checked on 0.6)."""
    from ir_datasets.util.fileio import Cache

    found: list[Any] = []
    seen: set[int] = set()
    todo = [handler]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or len(seen) > 200:
            continue
        seen.add(id(obj))
        if isinstance(obj, Cache):
            found.append(obj)
        elif type(obj).__module__.startswith("ir_datasets") and hasattr(obj, "__dict__"):
            todo += [v for v in vars(obj).values() if type(v).__module__.startswith("ir_datasets")]
    return found


def _cached_topics(dataset: Any, queries: Iterable[Any]) -> dict[str, str] | None:  # noqa: ANN401 - a Dataset
    """The text of each query of ``queries`` from the dataset's topics, read only when ir_datasets' cache holds
    their files already (never a download: the texts are for reading, the qrels are what was asked); None when the
    dataset has no topics or they are not cached."""
    if not dataset.has_queries():
        return None
    files = _caches(dataset.queries_handler())
    if not files or not all(f.path(force=False).exists() for f in files):
        return None
    wanted = {str(q) for q in queries}
    try:  # every query type of ir_datasets says its text (the title of TREC topics, ...) by default_text()
        found = {str(q.query_id): str(q.default_text()) for q in dataset.queries_iter() if str(q.query_id) in wanted}
    except Exception:  # noqa: BLE001 - the topics are extra: when ir_datasets cannot read them, the qrels stand
        return None
    return found or None


def grade_meanings(source: Any) -> dict[str, str]:  # noqa: ANN401 - irds:<id>
    """What each grade of the dataset's qrels means, as ir_datasets documents it (``qrels_defs()``: DL19 passage's
    ``0`` "Irrelevant: The passage has nothing to do with the query." ... ``3`` "Perfectly relevant: ..."), by grade;
    read from ir_datasets' package, no download; empty when it says nothing."""
    name = dataset_id(source)
    irds = _ir_datasets()
    with _quiet():
        dataset = _load(irds, name)
        defined = dataset.qrels_defs() if dataset.has_qrels() else {}
    return {str(grade): str(meaning) for grade, meaning in sorted((defined or {}).items())}


def official_metrics(source: Any) -> tuple[str, ...]:  # noqa: ANN401 - irds:<id>
    """The measures ir_datasets lists as the official ones of the dataset ``source`` names (its documentation's
    ``official_measures``, in ir-measures' spelling, which evalbridge reads: DL19 passage's ``nDCG@10``,
    ``RR(rel=2)``, ``AP(rel=2)``); read from ir_datasets' package, no download."""
    name = dataset_id(source)
    irds = _ir_datasets()
    with _quiet():
        dataset = _load(irds, name)
        documentation = dataset.documentation() if hasattr(dataset, "documentation") else {}
    found = tuple(str(m) for m in (documentation or {}).get("official_measures") or ())
    if not found:
        raise InputError(f"ir_datasets lists no official measures for {name!r}.",
                         fix="name the metrics, e.g. metrics: [nDCG@10, AP].")
    return found


def _asks_official(metrics: Any) -> bool:  # noqa: ANN401 - any metrics argument
    if isinstance(metrics, str):
        return metrics == OFFICIAL
    return isinstance(metrics, (list, tuple)) and OFFICIAL in metrics


def _dataset_of(qrels: Any) -> str | None:  # noqa: ANN401 - any qrels argument
    """``irds:<id>`` when ``qrels`` names a dataset or was read from one (its ``source``), else None."""
    source = qrels if isinstance(qrels, (str, os.PathLike)) else getattr(qrels, "source", None)
    text = os.fspath(source) if isinstance(source, (str, os.PathLike)) else ""
    return text if text.startswith(PREFIX) else None


def official_note(source: str, measures: tuple[str, ...]) -> str:
    """What a result says of the measures ``official`` took."""
    return f"metrics: the official measures of {source} (ir_datasets): {', '.join(measures)}"


def with_official(metrics: Any, *qrels: Any) -> tuple[Any, tuple[str, ...]]:  # noqa: ANN401 - MetricsArg, any qrels
    """``metrics`` with :data:`OFFICIAL` (alone or in a list) replaced by the official measures of the dataset the
    qrels name or were read from (:func:`official_metrics`; of several sets of judgements, the first that names a
    dataset), and the note saying which (none when not asked). Every verb that takes qrels and metrics, and every
    door (a config's ``metrics: official``, ``-m official``), takes ``official`` through this one rule.

    Raises:
        InputError: ``official`` asked of qrels that are not a dataset of ir_datasets, with the fix.
    """
    if not _asks_official(metrics):
        return metrics, ()
    source = next((found for given in qrels if (found := _dataset_of(given)) is not None), None)
    if source is None:
        raise InputError(f"{OFFICIAL!r} takes the official measures of a dataset, and the qrels are not a dataset of "
                         f"ir_datasets.", fix=f"read the qrels as {PREFIX}<dataset id>, or name the metrics, e.g. "
                                              f"['nDCG@10', 'AP'].")
    measures = official_metrics(source)
    entries = [metrics] if isinstance(metrics, str) else list(metrics)
    taken = [m for entry in entries for m in (measures if entry == OFFICIAL else (entry,))]
    return taken, (official_note(source, measures),)


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    return (
        Format("irds", "the qrels of a dataset of ir_datasets, named irds:ID", frozenset({"qrels"}), read_dataset,
               named=True, prefix=PREFIX,
               example='eb.read_qrels("irds:msmarco-passage/trec-dl-2019/judged")'),
    )


FORMATS = _formats()
