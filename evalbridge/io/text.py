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
import re
import secrets
import stat
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Literal

from ..errors import InputError, OutputError

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; leftovers of a killed writer are not swept
    fcntl = None  # type: ignore[assignment]

__all__ = ["GZIP_MAGIC", "BOM", "is_gzip", "not_a_file", "file_error", "NOT_A_FILE", "NOT_A_FILE_FIX", "read_bytes", "read_text", "Lines", "open_text", "replacing", "fsync", "in_user_terms", "head",
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


#: the name of a file being written beside its target: ``.tmp-<8 hex>-<the target's name>``
_TEMPORARY = ".tmp-{token}-{name}"
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows only: no newline translation


#: any such name: a temporary file of an outer write (a writer handed the path an atomic write yielded)
_OURS = re.compile(r"\.tmp-[0-9a-f]{8}-")


def _temporary_names(target: Path) -> re.Pattern[str]:
    return re.compile(r"\.tmp-[0-9a-f]{8}-" + re.escape(target.name[-200:]) + r"\Z")


def fsync(path: Path, *, directory: bool = False) -> None:
    """Flush a file (or a folder's entries) to disk. Folders cannot be opened on Windows: skipped there."""
    if directory and os.name != "posix":
        return
    fd = os.open(path, os.O_RDONLY if os.name == "posix" else os.O_RDWR)  # Windows flushes only writable handles
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def in_user_terms(error: OSError, names: dict[str, str]) -> OSError:
    """``error`` with every temporary path replaced by the user's path (same errno, same traceback); an
    :class:`~evalbridge.errors.OutputError` already is."""
    if isinstance(error, OutputError):
        return error

    def swap(value: object) -> object:
        if not isinstance(value, (str, os.PathLike)):
            return value
        text = os.fspath(value)
        for temporary, shown in sorted(names.items(), key=lambda item: -len(item[0])):
            text = text.replace(temporary, shown)
        return text

    if error.errno is None:
        mapped = OSError(swap(str(error)))
    else:
        mapped = OSError(error.errno, swap(error.strerror), swap(error.filename), None, swap(error.filename2))
    return mapped.with_traceback(error.__traceback__)


def _sweep(target: Path) -> None:
    """Remove the temporary files a killed writer of ``target`` left beside it (``kill -9``, a crash, power lost):
    each writer holds a lock on its temporary file for as long as it writes (:func:`_held`), and the kernel lets go
    of it when the writer dies, so a temporary file of this target that nobody holds is a leftover. Without
    ``fcntl`` (Windows) nothing is swept."""
    if fcntl is None:
        return
    names = _temporary_names(target)
    try:
        found = [entry.path for entry in os.scandir(target.parent)
                 if entry.name.startswith(".tmp-") and names.match(entry.name)]
    except OSError:
        return
    for path in found:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # refused while its writer lives
            if os.fstat(fd).st_ino == os.lstat(path).st_ino:
                os.unlink(path)
        except OSError:
            pass
        finally:
            os.close(fd)


def _held(target: Path) -> tuple[Path, int]:
    """A new temporary file beside ``target`` (umask permissions) and an open descriptor holding its lock."""
    while True:
        temporary = target.with_name(_TEMPORARY.format(token=secrets.token_hex(4), name=target.name[-200:]))
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666)
        if fcntl is None:
            return temporary, fd
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits only while a sweep of another writer holds it, a moment
        try:
            if os.fstat(fd).st_ino == os.lstat(temporary).st_ino:
                return temporary, fd
        except FileNotFoundError:  # that sweep took it for a leftover before the lock: take another name
            pass
        os.close(fd)


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], *, check: Callable[[], object] | None = None) -> Iterator[Path]:
    """The one way evalbridge writes a file: yield a temporary path beside ``path`` (its name ends with
    ``path``'s, so writers that read the suffix behave: ``.gz``, ``.parquet``, a plot's format) that replaces
    ``path`` once the block is done. A reader sees the old file or the new one; after a failure (an error, a full
    disk, Ctrl-C) ``path`` is as it was and the temporary file is gone; after ``kill -9`` the temporary file is
    left, and the next write of ``path`` removes it (:func:`_sweep`).

    Missing parent folders are created; permissions come from the umask; the new file is flushed (``fsync``),
    ``check`` (if given) runs just before the replacement, and the folder's entry is flushed after. A symlink's
    target is replaced (the link stays); a path that is not a regular file (a FIFO, ``/dev/stdout``) is written in
    place, as a stream, and so is the temporary file of an outer write (the command line's batch, written by the
    Python API's writer into the temporary file it was given). An ``OSError`` names ``path``, never the temporary file. The command line's outputs add
    their checks and messages on top (:func:`evalbridge.reports.writing.atomic_file`).

    A named temporary file, not an unnamed one (Linux ``O_TMPFILE`` + ``linkat``): writers are given a path, and
    several choose what to write by its suffix, which ``/proc/self/fd/N`` has not."""
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    if _OURS.match(target.name):  # the temporary file of an outer write, which replaces its target whole
        yield target
        return
    try:
        mode: int | None = os.stat(target).st_mode
    except OSError:  # not there yet (or not reachable: the write below says why)
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        yield target  # outside any handler: an error of the writer's (a full device) reaches the caller as it is
        return
    names = {str(target): os.fspath(path)}
    fd = None
    try:
        os.makedirs(target.parent, mode=0o777, exist_ok=True)
        _sweep(target)
        temporary, fd = _held(target)
        names[str(temporary)] = os.fspath(path)
        try:
            yield temporary
            fsync(temporary)
            if check is not None:
                check()
            os.replace(temporary, target)
            fsync(target.parent, directory=True)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
    except OSError as error:
        raise in_user_terms(error, names) from None
    finally:
        if fd is not None:
            os.close(fd)


def open_text(path: str | os.PathLike[str], mode: Literal["w"] = "w") -> IO[str]:
    """Open a UTF-8 text file for writing (gzip when the name ends in ``.gz``), ``\\n`` line ends."""
    if mode != "w":
        raise ValueError("open_text only opens files for writing; read with Lines or read_text")
    path = Path(path)
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "wt", encoding="utf-8", newline="\n")
    return open(path, "w", encoding="utf-8", newline="\n")
