"""Bytes and text of input files, the same way for every format.

* gzip is recognised by its magic bytes (never by the name alone), and a truncated or corrupt
  gzip stream is an :class:`~evalbridge.errors.InputError` naming the file;
* a leading UTF-8 byte order mark is removed (it is never part of a query id) and recorded:
  :func:`read_text` and :class:`Lines` say so in their ``notes``;
* text must be UTF-8: an invalid byte is reported with the number of the line that holds it
  (found by scanning the raw lines again, only when the error happens);
* writers open ``.gz`` paths as gzip, and write a file whole or not at all (:func:`replacing`).

Every reader in :mod:`evalbridge.io` goes through these functions, so a BOM, a bad byte or a
broken archive gives the same message whatever the format.
"""

from __future__ import annotations

import contextlib
import gzip
import os
import secrets
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Literal

from ..errors import InputError

__all__ = ["GZIP_MAGIC", "BOM", "is_gzip", "not_a_file", "file_error", "NOT_A_FILE", "NOT_A_FILE_FIX", "read_bytes", "read_text", "Lines", "open_text", "replacing", "head",
           "bad_utf8_line", "BOM_NOTE"]

GZIP_MAGIC = b"\x1f\x8b"
BOM = b"\xef\xbb\xbf"
BOM_NOTE = "a UTF-8 byte order mark at the start of the file was removed"
_BROKEN_GZIP = (EOFError, gzip.BadGzipFile, zlib.error)


#: the fault of a path that is not a regular file, in the words every door uses (the door adds where it looked)
NOT_A_FILE = {"missing": "the file does not exist", "folder": "this is a folder, not a file"}
#: and its fix
NOT_A_FILE_FIX = {"missing": "check the path", "folder": "give the path of a file inside it"}


def not_a_file(path: str | os.PathLike[str]) -> str | None:
    """``"missing"`` or ``"folder"`` when ``path`` cannot be read as an input file, else None."""
    file = Path(path)
    return None if file.is_file() else "folder" if file.is_dir() else "missing"


def file_error(path: str | os.PathLike[str], fault: str) -> InputError:
    """The error of a path that is not a regular file (``fault`` from :func:`not_a_file`)."""
    return InputError(f"{NOT_A_FILE[fault]}.", source=str(path), fix=f"{NOT_A_FILE_FIX[fault]}.")


def _missing(path: Path) -> InputError:
    return file_error(path, "missing")


def is_gzip(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with the gzip magic bytes."""
    try:
        with open(path, "rb") as raw:
            return raw.read(2) == GZIP_MAGIC
    except FileNotFoundError:
        raise _missing(Path(path)) from None
    except IsADirectoryError:
        raise file_error(path, "folder") from None


def _broken_gzip(path: Path, error: BaseException) -> InputError:
    return InputError(f"the gzip file is truncated or corrupt ({type(error).__name__}: {error}).", source=str(path),
                      fix="download or compress the file again; `gzip -t FILE` checks it.")


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, decompressed when it is gzip."""
    path = Path(path)
    if not is_gzip(path):
        return path.read_bytes()
    try:
        return gzip.decompress(path.read_bytes())
    except _BROKEN_GZIP as error:
        raise _broken_gzip(path, error) from None


def head(path: str | os.PathLike[str], size: int = 1 << 16) -> bytes:
    """The first ``size`` bytes of the (decompressed) file, for format detection."""
    path = Path(path)
    try:
        if is_gzip(path):
            with gzip.open(path, "rb") as f:
                return f.read(size)
        with open(path, "rb") as f:
            return f.read(size)
    except _BROKEN_GZIP as error:
        raise _broken_gzip(path, error) from None


def bad_utf8_line(data: bytes) -> tuple[int, str] | None:
    """``(line number, reason)`` of the first line of ``data`` that is not UTF-8, or None."""
    for n, line in enumerate(data.split(b"\n"), 1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as error:
            return n, f"byte 0x{line[error.start]:02x} at column {error.start + 1} is not UTF-8"
    return None


def _decode_error(path: Path, data: bytes) -> InputError:
    found = bad_utf8_line(data)
    line, reason = found if found is not None else (None, "the text is not UTF-8")
    return InputError(f"the file is not UTF-8 text: {reason}.", source=str(path), line=line,
                      fix="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).")


def read_text(path: str | os.PathLike[str]) -> tuple[str, tuple[str, ...]]:
    """The whole file as text (gzip and BOM handled) and the notes of what was done to it."""
    path = Path(path)
    data = read_bytes(path)
    notes: tuple[str, ...] = ()
    if data.startswith(BOM):
        data, notes = data[len(BOM):], (BOM_NOTE,)
    try:
        return data.decode("utf-8"), notes
    except UnicodeDecodeError:
        raise _decode_error(path, data) from None


class Lines:
    """The lines of a text file, streamed: ``for n, line in Lines(path)`` (numbers start at 1).

    A BOM on the first line is removed and noted in :attr:`notes`; an invalid UTF-8 byte or a
    broken gzip stream raises :class:`InputError` naming the right line.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.notes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[tuple[int, str]]:
        gzipped = is_gzip(self.path)
        n = 0
        try:
            with (gzip.open(self.path, "rt", encoding="utf-8", newline=None) if gzipped
                  else open(self.path, encoding="utf-8")) as f:
                for n, line in enumerate(f, 1):
                    if n == 1 and line.startswith("\ufeff"):
                        line = line[1:]
                        self.notes = (BOM_NOTE,)
                    yield n, line
        except UnicodeDecodeError:
            raise _decode_error(self.path, read_bytes(self.path)) from None
        except _BROKEN_GZIP as error:
            raise _broken_gzip(self.path, error) from None


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (its name ends with ``path``'s, so writers that read the suffix
    behave) that replaces ``path`` once the block is done: a reader sees the old file or the new one, and after a
    failure (an error, a full disk, Ctrl-C) ``path`` is as it was and the temporary file is gone. A symlink's
    target is replaced (the link stays); a path that is not a regular file (a FIFO, ``/dev/stdout``) is written
    in place, as a stream. The command line's outputs add their checks on top
    (:func:`evalbridge.reports.writing.atomic_file`)."""
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    with contextlib.suppress(OSError):
        if not stat.S_ISREG(os.stat(target).st_mode):
            yield target
            return
    temporary = target.with_name(f".tmp-{secrets.token_hex(4)}-{target.name[-200:]}")
    try:
        yield temporary
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def open_text(path: str | os.PathLike[str], mode: Literal["w"] = "w") -> IO[str]:
    """Open a UTF-8 text file for writing (gzip when the name ends in ``.gz``), ``\\n`` line ends."""
    if mode != "w":
        raise ValueError("open_text only opens files for writing; read with Lines or read_text")
    path = Path(path)
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "wt", encoding="utf-8", newline="\n")
    return open(path, "w", encoding="utf-8", newline="\n")
