"""TREC text files: qrels, runs and judged ranked lists, read and written.

Formats (whitespace-separated columns, tabs or spaces):

* qrels: ``qid iter docid rel`` (``iter`` is ignored, usually ``0``);
* run: ``qid Q0 docid rank score tag``. As in trec_eval the rank column is
  ignored: the order comes from the scores (see :mod:`evalbridge.ranking`);
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

import gzip
import math
import os
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Literal

from .errors import InputError
from .model import Qrels, Run

__all__ = ["read_qrels", "read_run", "read_judged_list", "write_qrels", "write_run", "open_text",
           "QRELS_COLUMNS", "RUN_COLUMNS"]

QRELS_COLUMNS = ("qid", "iter", "docid", "rel")
RUN_COLUMNS = ("qid", "Q0", "docid", "rank", "score", "tag")
_GZIP_MAGIC = b"\x1f\x8b"
_EXTRA_COLUMNS = ("error", "ignore")


def open_text(path: str | os.PathLike, mode: Literal["r", "w"] = "r") -> IO[str]:
    """Open a UTF-8 text file; gzip is detected by magic bytes (read) or a ``.gz`` suffix (write)."""
    path = Path(path)
    if mode == "w":
        if path.suffix.lower() == ".gz":
            return gzip.open(path, "wt", encoding="utf-8", newline="\n")
        return open(path, "w", encoding="utf-8", newline="\n")
    with open(path, "rb") as raw:
        gzipped = raw.read(2) == _GZIP_MAGIC
    return gzip.open(path, "rt", encoding="utf-8") if gzipped else open(path, encoding="utf-8")


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, words)`` of every line, for the slow paths that look for a line again."""
    with open_text(path) as f:
        yield from enumerate(map(str.split, f), 1)


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
                      fix="remove the duplicate line; evalbridge does not pick one silently.")


def _number_error(path: Path, n: int, what: str, token: str, fix: str) -> InputError:
    return InputError(f"the {what} {token!r} is not a finite number.", source=str(path), line=n, fix=fix)


def _no_data_error(path: Path, what: str) -> InputError:
    return InputError(f"the file has no {what} lines (only blank lines or comments).", source=str(path),
                      fix=f"check the path: a {what} file has one line per (query, document).")


def _decode_error(path: Path, n: int, error: UnicodeDecodeError) -> InputError:
    return InputError(f"the file is not UTF-8 text ({error.reason} after line {n}).", source=str(path), line=n + 1,
                      fix="re-save the file as UTF-8.")


def _grade(token: str, path: Path, n: int) -> int | float:
    """``int`` when the token is an integer, ``float`` otherwise; never truncated."""
    try:
        return int(token)
    except ValueError:
        pass
    try:
        value = float(token)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise _number_error(path, n, "relevance grade", token, "grades are numbers such as 0, 1, 2 or 7.5.")
    return value


def _read_grades(path: Path, what: str) -> dict[str, dict[str, int | float]]:
    """``{qid: {docid: grade}}`` of a 4-column file, in line order."""
    data: dict[str, dict[str, int | float]] = {}
    current, docs = None, {}
    n = 0
    try:
        with open_text(path) as f:
            for n, line in enumerate(f, 1):
                words = line.split()
                if len(words) != 4:
                    if not words or words[0][0] == "#":
                        continue
                    raise _column_error(path, n, words, QRELS_COLUMNS,
                                        "a qrels line is `qid 0 docid rel`; a run (6 columns) is read with read_run.")
                qid, _, doc, rel = words
                if qid != current:
                    if qid[0] == "#":  # a comment that happens to have 4 words
                        continue
                    current, docs = qid, data.setdefault(qid, {})
                if doc in docs:
                    raise _duplicate_error(path, n, qid, doc)
                docs[doc] = _grade(rel, path, n)
    except UnicodeDecodeError as error:
        raise _decode_error(path, n, error) from None
    if not data:
        raise _no_data_error(path, what)
    return data


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read a TREC qrels file (``qid iter docid rel``, plain or gzip).

    Args:
        path: the file (``str`` or ``Path``).

    Returns:
        :class:`~evalbridge.model.Qrels` (``source`` is the path).

    Raises:
        InputError: wrong column count, a grade that is not a finite number, a doc
            judged twice for one query (both line numbers), or no data line at all.
    """
    path = Path(path)
    return Qrels(_read_grades(path, "qrels"), source=str(path))


def read_judged_list(path: str | os.PathLike) -> tuple[Qrels, Run]:
    """Read a judged ranked list: ``qid Q0 docid rel`` lines in rank order (seed 002's format).

    Each line is one retrieved document with its grade. The grades become the
    qrels, and the line order within each query becomes run scores ``n, n-1, ..., 1``
    (strictly decreasing, so every backend sees the file's order).

    Args:
        path: the file (``str`` or ``Path``, plain or gzip).

    Returns:
        ``(qrels, run)``.
    """
    path = Path(path)
    grades = _read_grades(path, "judged list")
    run = {qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in grades.items()}
    return Qrels(grades, source=str(path)), Run(run, source=str(path))


def read_run(path: str | os.PathLike, *, name: str | None = None,
             extra_columns: Literal["error", "ignore"] = "error") -> Run:
    """Read a TREC run file (``qid Q0 docid rank score tag``, plain or gzip).

    The rank column is ignored, as trec_eval does: the scores are kept and the
    order comes from them.

    Args:
        path: the file (``str`` or ``Path``).
        name: the run's name; default the tag of the first line.
        extra_columns: ``"error"`` (default) refuses lines with more than 6 columns;
            ``"ignore"`` drops the extra trailing words, as trec_eval does.

    Returns:
        :class:`~evalbridge.model.Run` (``source`` is the path).

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
    fix_columns = "a run line is `qid Q0 docid rank score tag`; a qrels file (4 columns) is read with read_qrels."
    fix_extra = ("a run line is `qid Q0 docid rank score tag`; to drop extra trailing words, as trec_eval does, "
                 "pass extra_columns='ignore'.")
    data: dict[str, dict[str, float]] = {}
    current, docs, tag = None, {}, None
    n = 0
    try:
        with open_text(path) as f:
            for n, line in enumerate(f, 1):
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
                    raise _duplicate_error(path, n, qid, doc)
                try:
                    docs[doc] = float(score)
                except ValueError:
                    raise _number_error(path, n, "score", score, "column 5 holds the score.") from None
    except UnicodeDecodeError as error:
        raise _decode_error(path, n, error) from None
    if not data:
        raise _no_data_error(path, "run")
    for qid, docs in data.items():
        if not math.isfinite(sum(docs.values())):  # NaN, inf (or an overflowing sum, checked below)
            bad = next((d for d, s in docs.items() if not math.isfinite(s)), None)
            if bad is not None:
                line = _first_line(path, lambda w: w[0] == qid and w[2] == bad)
                raise _number_error(path, line, "score", str(docs[bad]),
                                    "scores must be finite: remove the document or give it a real score.")
    return Run(data, name=name if name is not None else tag, source=str(path))


# ---------------------------------------------------------------- writing

_WHITESPACE = re.compile(r"\s")


def _check_ids(what: str, qid: str, docs: Mapping[str, Any]) -> None:
    """Ids must be non-empty words, and a query id must not start with ``#`` (a comment)."""
    if not qid or _WHITESPACE.search(qid) or qid[0] == "#":
        raise InputError(f"query id {qid!r} cannot be written to a TREC file (empty, has whitespace, or starts "
                         f"with '#').", query_id=qid, fix="rename the query; TREC columns are whitespace-separated.")
    if "" in docs or _WHITESPACE.search("".join(docs)):
        bad = next(d for d in docs if not d or _WHITESPACE.search(d))
        raise InputError(f"doc id {bad!r} cannot be written to a TREC {what} file (empty or has whitespace).",
                         query_id=qid, fix="rename the document; TREC columns are whitespace-separated.")


def _number(value: int | float) -> str:
    """The shortest text that reads back as the same number (ints stay ints)."""
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def write_qrels(qrels: Qrels | Mapping, path: str | os.PathLike) -> None:
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
            _check_ids("qrels", qid, docs)
            f.write("".join(f"{qid} 0 {doc} {_number(grade)}\n" for doc, grade in docs.items()))


def write_run(run: Run | Mapping, path: str | os.PathLike, *, tag: str = "evalbridge") -> None:
    """Write a run as ``qid Q0 docid rank score tag`` lines, in rank order (gzip for ``.gz``).

    Documents are ranked by :func:`evalbridge.ranking.rank` (score descending, ties
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
    from .ranking import rank

    if not isinstance(tag, str) or not tag or _WHITESPACE.search(tag):
        raise InputError(f"the run tag must be one word; got {tag!r}.", fix="pass e.g. tag='bm25'.")
    run = run if isinstance(run, Run) else Run(run)
    with open_text(path, "w") as f:
        for qid, scores in run.items():
            _check_ids("run", qid, scores)
            f.write("".join(f"{qid} Q0 {doc} {i} {_number(scores[doc])} {tag}\n"
                            for i, doc in enumerate(rank(scores), 1)))
