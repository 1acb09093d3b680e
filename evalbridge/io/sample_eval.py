"""Stratified pool samples as NIST's ``sample_eval.pl`` reads them: ``topic 0 doc stratum rel`` lines.

Each line is one pooled document of a topic, with the stratum of the pool it was drawn from and its grade;
a pooled document that was not sampled for judging has a negative grade (``-1``), so each stratum's
sampling rate is known (its sampled docs over its pooled docs). Read as :class:`~evalbridge.model.data.Qrels`
whose :attr:`~evalbridge.model.data.Qrels.strata` says each pair's stratum (what ``xinfAP`` and ``infNDCG``
read), and written back the same way. Only an explicit ``format="sample_eval"`` reads it: five columns
mean nothing else that a suffix could tell.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..common.values import parse
from ..errors import InputError
from ..model.data import Qrels
from .text import Lines, open_text

__all__ = ["read_sample", "write_sample", "COLUMNS", "WHOLE", "FORMATS"]

COLUMNS = ("topic", "iter", "doc", "stratum", "rel")

#: the stratum of a pair written without one: the whole pool, judged wholly
WHOLE = "1"


def read_sample(path: str | os.PathLike[str]) -> Qrels:
    """Read a stratified sample (``topic 0 doc stratum rel``, plain or gzip) as qrels with their strata.

    Raises:
        InputError: a line without five columns, a grade that is not a finite number, a document listed
            twice for one topic (both line numbers), or no data line at all; each names ``file:line``.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "sample.txt"
        >>> _ = path.write_text("q1 0 d1 1 2\\nq1 0 d2 2 -1\\n")
        >>> qrels = read_sample(path)
        >>> dict(qrels["q1"]), dict(qrels.strata["q1"])
        ({'d1': 2, 'd2': -1}, {'d1': '1', 'd2': '2'})
    """
    path = Path(path)
    grades: dict[str, dict[str, int | float]] = {}
    strata: dict[str, dict[str, str]] = {}
    first: dict[tuple[str, str], int] = {}
    lines = Lines(path)
    for n, line in lines:
        words = line.split()
        if not words or words[0][0] == "#":
            continue
        if len(words) != len(COLUMNS):
            raise InputError(f"expected {len(COLUMNS)} columns ({' '.join(COLUMNS)}), got {len(words)}: "
                             f"{' '.join(words)!r:.120}.", source=str(path), line=n,
                             fix="a stratified sample line is `topic 0 doc stratum rel` (rel -1: pooled, not "
                                 "sampled); plain qrels are format='trec'.")
        qid, _, doc, stratum, rel = words
        if (qid, doc) in first:
            raise InputError(f"doc {doc!r} appears twice for topic {qid!r}, on lines {first[qid, doc]} and {n}.",
                             source=str(path), line=n, query_id=qid,
                             fix="list each pooled document once per topic, in one stratum.")
        first[qid, doc] = n
        grades.setdefault(qid, {})[doc] = parse(rel, label="the relevance grade", source=str(path), line=n)
        strata.setdefault(qid, {})[doc] = stratum
    if not grades:
        raise InputError("the file has no sample lines (only blank lines or comments).", source=str(path),
                         fix="check the path: a stratified sample has one `topic 0 doc stratum rel` line per "
                             "pooled document.")
    return Qrels(grades, source=str(path), notes=lines.notes, strata=strata)


def write_sample(qrels: Qrels, path: str | os.PathLike[str]) -> None:
    """Write qrels with their strata as ``topic 0 doc stratum rel`` lines (gzip when ``path`` ends in ``.gz``).

    A pair without a stratum (qrels judged wholly, not sampled) is written in stratum :data:`WHOLE`, judged at
    rate 1: its estimates are then AP and nDCG.
    """
    from .trec import _number, check_ids

    with open_text(path, "w") as f:
        for qid, docs in qrels.items():
            check_ids("qrels", qid, docs)
            strata = qrels.strata.get(qid, {})
            for doc, grade in docs.items():
                stratum = strata.get(doc, WHOLE)
                check_ids("strata", qid, {stratum: grade})
                f.write(f"{qid} 0 {doc} {stratum} {_number(grade)}\n")


def _read(path: Any, kind: str, options: Mapping[str, Any]) -> Any:
    from .registry import Parsed

    return Parsed(qrels=read_sample(path))


def _write(obj: Any, path: Path, options: Mapping[str, Any]) -> None:
    if not isinstance(obj, Qrels):
        raise InputError("format='sample_eval' holds judgements (a stratified sample of the pool), and a run "
                         "is being written.", fix="write the run with format='trec'.")
    write_sample(obj, path)


def _formats() -> tuple[Any, ...]:
    from .registry import Format

    return (
        Format("sample_eval", "stratified pool sample `topic 0 doc stratum rel` (NIST sample_eval.pl; rel -1: "
                              "pooled, not sampled)", frozenset({"qrels"}), _read, write=_write,
               example='eb.read_qrels("sample.qrels", format="sample_eval")'),
    )


FORMATS = _formats()
