"""TREC text files: qrels, runs and judged ranked lists, read and written.

Formats (whitespace-separated columns, tabs or spaces):

* qrels: ``qid iter docid rel`` (``iter`` is ignored, usually ``0``);
* run: ``qid Q0 docid rank score tag``. As in trec_eval the rank column is
  ignored: the order comes from the scores (see :mod:`evalbridge.common.ranking`);
* judged ranked list: ``qid Q0 docid rel`` in rank order (a qrels file whose
  line order is the ranking).

Blank lines are skipped, and a line whose first non-blank character is ``#`` is a
comment. A ``#`` inside a field belongs to the field (``CR#93E-1860`` is a doc id).
Gzip files are read transparently (detected by their magic bytes). Grades are
``int`` when the token is an integer and ``float`` otherwise, never truncated.
The readers are strict: every malformed line raises
:class:`~evalbridge.errors.InputError` naming ``file:line``, the value and a fix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from ..errors import InputError
from ..common.wording import place
from ..model.data import Qrels, Run
from ..common.values import parse
from .policies import dropped_note, keep_first
from .text import Lines, open_text

__all__ = ["check_ids", "check_tag", "read_qrels", "read_run", "read_judged_list", "write_qrels", "write_run", "QRELS_COLUMNS",
           "RUN_COLUMNS", "FORMATS"]

QRELS_COLUMNS = ("qid", "iter", "docid", "rel")
RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
_EXTRA_COLUMNS = ("error", "ignore")


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, words)`` of every line, for the slow paths that look for a line again."""
    for n, line in Lines(path):
        yield n, line.split()


def _first_line(path: Path, wanted: Callable[[list[str]], bool]) -> int | None:
    """Number of the first data line whose words satisfy ``wanted``."""
    for n, words in _lines(path):
        if words and words[0][0] != "#" and wanted(words):
            return n
    return None


def _column_error(path: Path, n: int, words: list[str], columns: tuple[str, ...], fix: str) -> InputError:
    return InputError(f"expected {len(columns)} columns ({' '.join(columns)}), got {len(words)}: "
                      f"{' '.join(words)!r:.120}.", source=str(path), line=n, fix=fix)


def _duplicate_error(path: Path, n: int, qid: str, doc: str) -> InputError:
    first = _first_line(path, lambda w: w[0] == qid and w[2] == doc)
    return InputError(f"doc {doc!r} appears twice for query {qid!r}, on lines {first} and {n}.",
                      source=str(path), line=n, query_id=qid,
                      fix="remove the duplicate line (in a run: or keep the first with duplicates='first'); "
                          "evalbridge does not pick one silently.")


def _no_data_error(path: Path, what: str) -> InputError:
    return InputError(f"the file has no {what} lines (only blank lines or comments).", source=str(path),
                      fix=f"check the path: a {what} file has one line per (query, document).")


def _grade(token: str, path: Path, n: int) -> int | float:
    """``int`` when the token is an integer, ``float`` otherwise; never truncated (:mod:`.numbers`)."""
    return parse(token, label="the relevance grade", source=str(path), line=n)


def _read_grades(path: Path, what: str) -> tuple[dict[str, dict[str, int | float]], tuple[str, ...]]:
    """``{qid: {docid: grade}}`` of a 4-column file, in line order."""
    data: dict[str, dict[str, int | float]] = {}
    current, docs = None, {}
    lines = Lines(path)
    for n, line in lines:
        words = line.split()
        if len(words) != 4:
            if not words or words[0][0] == "#":
                continue
            raise _column_error(path, n, words, QRELS_COLUMNS, "a qrels line is `qid 0 docid rel`" + (
                f"; this file looks like a run: {place('run')}." if len(words) == 6 else "."))
        qid, _, doc, rel = words
        if qid != current:
            if qid[0] == "#":  # a comment that happens to have 4 words
                continue
            current, docs = qid, data.setdefault(qid, {})
        if doc in docs:
            raise _duplicate_error(path, n, qid, doc)
        docs[doc] = _grade(rel, path, n)
    if not data:
        raise _no_data_error(path, what)
    return data, lines.notes


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a TREC qrels file (``qid iter docid rel``, plain or gzip).

    Args:
        path: the file (``str`` or ``Path``).

    Returns:
        :class:`~evalbridge.model.data.Qrels` (``source`` is the path).

    Raises:
        InputError: wrong column count, a grade that is not a finite number, a doc
            judged twice for one query (both line numbers), or no data line at all.
    """
    path = Path(path)
    grades, notes = _read_grades(path, "qrels")
    return Qrels(grades, source=str(path), notes=notes)


def read_judged_list(path: str | os.PathLike[str]) -> tuple[Qrels, Run]:
    """Read a judged ranked list: ``qid Q0 docid rel`` lines in rank order (a common RAG log format).

    Each line is one retrieved document with its grade. The grades become the
    qrels, and the line order within each query becomes run scores ``n, n-1, ..., 1``
    (strictly decreasing, so every backend sees the file's order).

    Args:
        path: the file (``str`` or ``Path``, plain or gzip).

    Returns:
        ``(qrels, run)``.
    """
    path = Path(path)
    grades, notes = _read_grades(path, "judged list")
    run = {qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in grades.items()}
    return Qrels(grades, source=str(path), notes=notes), Run(run, source=str(path), notes=notes)


def read_run(path: str | os.PathLike[str], *, name: str | None = None,
             extra_columns: Literal["error", "ignore"] = "error", duplicates: str | None = None) -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``, plain or gzip).

    The rank column is ignored, as trec_eval does: the scores are kept and the
    order comes from them.

    Args:
        path: the file (``str`` or ``Path``).
        name: the run's name; default the tag of the first line.
        extra_columns: ``"error"`` (default) refuses lines with more than 6 columns;
            ``"ignore"`` drops the extra trailing words, as trec_eval does.
        duplicates: ``"first"`` keeps the first line of a doc given twice for a query and
            counts the dropped lines in the notes; default: refused.

    Returns:
        :class:`~evalbridge.model.data.Run` (``source`` is the path).

    Raises:
        InputError: wrong column count, a score that is not a finite number
            (NaN/inf included), a doc retrieved twice for one query (both line
            numbers), or no data line at all.
    """
    if extra_columns not in _EXTRA_COLUMNS:
        raise InputError(f"extra_columns must be one of {', '.join(map(repr, _EXTRA_COLUMNS))}; "
                         f"got {extra_columns!r}.")
    path = Path(path)
    ignore_extra = extra_columns == "ignore"
    fix_columns = f"a run line is `qid Q0 docid rank score tag`; a qrels file (4 columns): {place('qrels')}."
    fix_extra = ("a run line is `qid Q0 docid rank score tag`; to drop extra trailing words, as trec_eval does, "
                 "pass extra_columns='ignore'.")
    data: dict[str, dict[str, float]] = {}
    current, docs, tag = None, {}, None
    dropped = 0
    lines = Lines(path)
    for n, line in lines:
        words = line.split()
        if len(words) != 6:
            if not words or words[0][0] == "#":
                continue
            if len(words) < 6 or not ignore_extra:
                raise _column_error(path, n, words, RUN_COLUMNS, fix_columns if len(words) < 6 else fix_extra)
            del words[6:]
        qid, _, doc, _, score, run_tag = words
        if qid != current:
            if qid[0] == "#":  # a comment that happens to have 6 words
                continue
            current, docs = qid, data.setdefault(qid, {})
            if tag is None:
                tag = run_tag
        if doc in docs:
            if keep_first(duplicates):
                dropped += 1
                continue
            raise _duplicate_error(path, n, qid, doc)
        docs[doc] = float(parse(score, label="the score", source=str(path), line=n))
    if not data:
        raise _no_data_error(path, "run")
    return Run(data, name=name if name is not None else tag, source=str(path),
               notes=(*lines.notes, *dropped_note(dropped)))


# ---------------------------------------------------------------- writing

_WHITESPACE = re.compile(r"\s")


def check_ids(what: str, qid: str, docs: Mapping[str, Any]) -> None:
    """Ids must be non-empty words, and a query id must not start with ``#`` (a comment)."""
    if not qid or _WHITESPACE.search(qid) or qid[0] in "#\ufeff":
        raise InputError(f"query id {qid!r} cannot be written to a TREC file (empty, has whitespace, or starts "
                         f"with '#' or a byte order mark).", query_id=qid,
                         fix="rename the query; TREC columns are whitespace-separated.")
    if "" in docs or _WHITESPACE.search("".join(docs)):
        bad = next(d for d in docs if not d or _WHITESPACE.search(d))
        raise InputError(f"doc id {bad!r} cannot be written to a TREC {what} file (empty or has whitespace).",
                         query_id=qid, fix="rename the document; TREC columns are whitespace-separated.")


def _number(value: int | float) -> str:
    """The shortest text that reads back as the same number (ints stay ints)."""
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def write_qrels(qrels: Qrels | Mapping[str, Mapping[str, float]], path: str | os.PathLike[str]) -> None:
    """Write qrels as ``qid 0 docid rel`` lines (gzip when ``path`` ends in ``.gz``).

    Grades are written exactly (``7.5``, ``2``); a query with no judgements has no
    line, so it does not survive a round trip.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
        >>> write_qrels({"q1": {"d1": 2, "d2": 7.5}}, path)
        >>> path.read_text()
        'q1 0 d1 2\\nq1 0 d2 7.5\\n'
    """
    qrels = qrels if isinstance(qrels, Qrels) else Qrels(qrels)
    with open_text(path, "w") as f:
        for qid, docs in qrels.items():
            check_ids("qrels", qid, docs)
            f.write("".join(f"{qid} 0 {doc} {_number(grade)}\n" for doc, grade in docs.items()))


def check_tag(tag: object) -> None:
    """A TREC run's tag, its sixth column: one word."""
    if not isinstance(tag, str) or not tag or _WHITESPACE.search(tag):
        raise InputError(f"the run tag must be one word; got {tag!r}.", fix="pass e.g. tag='bm25'.")


def write_run(run: Run | Mapping[str, Mapping[str, float]], path: str | os.PathLike[str], *,
              tag: str = "evalbridge") -> None:
    """Write a run as ``qid Q0 docid rank score tag`` lines, in rank order (gzip for ``.gz``).

    Documents are ranked by :func:`evalbridge.common.ranking.rank` (score descending, ties
    by doc id descending, as trec_eval reads them); ranks start at 1 and scores are
    written exactly.

    Example:
        >>> import tempfile, pathlib
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "run.txt"
        >>> write_run({"q1": {"a": 0.5, "b": 1.25}}, path, tag="bm25")
        >>> print(path.read_text(), end="")
        q1 Q0 b 1 1.25 bm25
        q1 Q0 a 2 0.5 bm25
    """
    from ..common.ranking import rank

    check_tag(tag)
    run = run if isinstance(run, Run) else Run(run)
    with open_text(path, "w") as f:
        for qid, scores in run.items():
            check_ids("run", qid, scores)
            f.write("".join(f"{qid} Q0 {doc} {i} {_number(scores[doc])} {tag}\n"
                            for i, doc in enumerate(rank(scores), 1)))


# ---------------------------------------------------------------- the formats

def _sniff(first: bytes) -> bool:
    """A TREC file: its first data line has 4 words ending in a number (qrels) or 6 with a number
    in the fifth (run)."""
    for raw in first.split(b"\n")[:50]:
        words = raw.split()
        if not words or words[0].startswith(b"#"):
            continue
        number = words[3] if len(words) == 4 else words[4] if len(words) == 6 else None
        try:
            return number is not None and float(number) == float(number)
        except ValueError:
            return False
    return False


def _read(path: Any, kind: str, options: Mapping[str, Any]) -> Any:
    """Large files through the columnar fast path (:func:`_read_columns`), which declines anything the
    strict readers above might read differently; everything else through those readers."""
    from .registry import Parsed

    if kind == "qrels":
        if options:
            raise InputError(f"option {next(iter(options))!r} applies to TREC runs, not qrels.", source=str(path))
        return _read_columns(path, kind, large_only=True) or Parsed(qrels=read_qrels(path))
    extra, duplicates = options.get("extra_columns", "error"), options.get("duplicates")
    if extra not in _EXTRA_COLUMNS or keep_first(duplicates):  # its error; repeats dropped by the strict reader
        return Parsed(run=read_run(path, extra_columns=extra, duplicates=duplicates))
    return _read_columns(path, kind, large_only=True) or Parsed(run=read_run(path, extra_columns=extra))


def _read_columns(path: Any, kind: str, *, large_only: bool = False) -> Any:
    """The file read into columns (whatever its size, unless ``large_only``), or None: the columnar
    reader declines it (:mod:`._arrow_trec`)."""
    from ._arrow_trec import read_qrels_columns, read_run_columns
    from .registry import Parsed

    if kind == "qrels":
        qrels = read_qrels_columns(path, large_only=large_only)
        return None if qrels is None else Parsed(qrels=qrels)
    run = read_run_columns(path, large_only=large_only)
    return None if run is None else Parsed(run=run)


def _read_judged(path: Any, kind: str, options: Mapping[str, Any]) -> Any:
    from .registry import Parsed

    qrels, run = read_judged_list(path)
    return Parsed(qrels=qrels, run=run)


def _write(obj: Any, path: Path, options: Mapping[str, Any]) -> None:
    if isinstance(obj, Qrels):
        write_qrels(obj, path)
    else:
        write_run(obj, path, tag=options.get("tag") or obj.name or "evalbridge")


def _formats() -> tuple[Any, ...]:
    from .registry import POLICIES, Format

    both = frozenset({"qrels", "run"})
    return (
        Format("trec", "TREC qrels `qid iter docid rel` / run `qid Q0 docid rank score tag`", both, _read,
               suffixes=("", ".txt", ".trec", ".qrels", ".run", ".res", ".tsv"),
               options={"extra_columns": "runs: 'error' (default) or 'ignore' words after the sixth, as trec_eval",
                        "tag": "writing a run: the tag column (default: the run's name)",
                        "duplicates": "runs: " + POLICIES["duplicates"][1]},
               write=_write, sniff=_sniff, example='eb.read_run("run.txt")', read_columns=_read_columns),
        Format("judged_list", "judged ranked list `qid Q0 docid rel`, lines in rank order", frozenset(),
               _read_judged, paired=True, example='eb.read_pair("judged.txt", format="judged_list")'),
    )


FORMATS = _formats()
