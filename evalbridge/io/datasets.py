"""Datasets by name: ``irds:<dataset id>`` reads a benchmark's qrels through ir_datasets, as ir-measures' CLI does.

``eb.read_qrels("irds:msmarco-passage/trec-dl-2019/judged")``, ``evalbridge eval irds:msmarco-passage/trec-dl-2019/judged
run.txt`` and ``qrels: irds:msmarco-passage/trec-dl-2019/judged`` in a config read the same qrels: the registry gives
any string starting with :data:`PREFIX` to the format declared here (:attr:`~evalbridge.io.registry.Format.prefix`).

ir_datasets reads its own cache (``IR_DATASETS_HOME``, by default ``~/.ir_datasets``) and downloads what is not
there. When the download fails (no network, a file that is only handed out by its owners), the error names the file
ir_datasets wants (its address and checksum) and the path to put it at; an unknown dataset id gets the closest
names; a missing ir_datasets gets the command that installs it. No exception of ir_datasets reaches the user, and its
log lines are held back while it reads (they are said in the error when the read fails).

ir_datasets is imported only inside the functions here (``evalbridge[datasets]``).
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import os
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import Any

from ..errors import BackendUnavailableError, InputError

__all__ = ["PREFIX", "INSTALL_HINT", "OFFICIAL", "read_dataset", "dataset_id", "official_metrics", "FORMATS"]

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
    qrels = parsed.qrels
    return Parsed(qrels=type(qrels)(qrels, source=f"{PREFIX}{name}", notes=qrels.notes, copy=False))


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


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    return (
        Format("irds", "the qrels of a dataset of ir_datasets, named irds:ID", frozenset({"qrels"}), read_dataset,
               named=True, prefix=PREFIX,
               example='eb.read_qrels("irds:msmarco-passage/trec-dl-2019/judged")'),
    )


FORMATS = _formats()
