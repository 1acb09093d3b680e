"""Writing outputs without ever destroying data: guards, unique file names, checks of what is there, atomic files.

* :func:`guard_outputs` refuses an output that is an input (same path, ``..``, a symlink or a
  hard link to it), a folder output that contains an input, and two outputs that overlap.
* :func:`unique_file_names` gives each system a file name and refuses two names that would share
  one (``bm25_rm3`` and ``bm25-rm3``, or ``BM25`` and ``bm25`` on macOS / Windows file systems).
* :func:`output_file` / :func:`check_output_folder` / :func:`check_outputs` check an output before
  any work: a single file goes only onto a regular file (a symlink: the file it points to) or a
  new one, a report folder only onto a folder evalbridge wrote; FIFOs, devices, sockets, read-only
  files and folders are refused with the fix. ``-`` is standard output for single files.
* :func:`write_file_atomic` / :func:`atomic_file` write one file by the one atomic write,
  :func:`evalbridge.io.text.replacing` (a temporary file in the same folder, ``fsync``, then ``os.replace``; a
  reader sees the old file or the new one; a killed writer's leftover is swept by the next write), with the checks
  above before and just before the replacement. A failure (disk full, permissions) is an
  :class:`~evalbridge.errors.OutputError` naming the path and the fix.
* :func:`resolve_output_dir`: where a config's ``output.dir`` points (relative paths stay inside
  the config's folder; an absolute path is taken as is).
* :func:`one_command`: the block is one command: every file it reads (:func:`note_read`, called where a file is
  named: the config, its sources, a command line's files) is refused as an output by the checks above, wherever
  the file was named; and after Ctrl-C no output is replaced, even where Python swallowed the interrupt.

Files and folders get their permissions from the umask (``0o666`` / ``0o777`` minus the umask, as
any program's files), and every error names the user's path, never a temporary one.

A whole report folder is written by :class:`evalbridge.reports.report_folder.ReportFolder`.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import signal
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Union

from ..errors import InputError, OutputError
from ..io.text import fsync, in_user_terms, replacing

__all__ = ["guard_outputs", "unique_file_names", "slug", "write_file_atomic", "atomic_file", "resolve_output_dir",
           "output_file", "check_output_folder", "check_outputs", "STDOUT", "StrPath", "real_path", "shown_path",
           "output_error", "in_user_terms", "make_dirs", "create_file", "write_new", "fsync", "MARKER", "foreign_files",
           "one_command", "note_read", "interrupted"]

StrPath = Union[str, "os.PathLike[str]"]

#: The longest file name most file systems accept (bytes).
NAME_MAX = 255
_O_BINARY = getattr(os, "O_BINARY", 0)  # Windows only: no newline translation
#: The output path that means standard output (single-file outputs only).
STDOUT = "-"
#: The file a report folder holds last: it lists every file, and marks the folder as evalbridge's.
MARKER = ".evalbridge-report.json"


# ---------------------------------------------------------------- one command

#: the files the current command read (None outside :func:`one_command`: the Python API checks what it is given)
_READ: ContextVar[list[Path] | None] = ContextVar("evalbridge_read", default=None)
#: set by Ctrl-C (SIGINT) inside :func:`one_command`
_INTERRUPTED = threading.Event()


def note_read(*paths: StrPath) -> None:
    """Within :func:`one_command`, refuse ``paths`` (files the command reads) as any of its outputs."""
    read = _READ.get()
    if read is not None:
        read += [Path(p) for p in paths]


def interrupted() -> bool:
    """Whether Ctrl-C (SIGINT) came during the current :func:`one_command` block."""
    return _INTERRUPTED.is_set()


def _check_interrupt() -> None:
    """No output is replaced once the command was interrupted: Python may have swallowed the
    KeyboardInterrupt (raised inside a finaliser or an import's callback, it is only printed)."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


def _on_interrupt(signum: int, frame: object) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def one_command() -> Iterator[None]:
    """The block is one command (the CLI runs each in one): every file noted by :func:`note_read` is refused
    as an output (:func:`output_file`, :func:`check_output_folder`, so :func:`check_outputs`, every atomic
    write and every report folder), and Ctrl-C (SIGINT) ends it with KeyboardInterrupt, always: an interrupt
    Python swallowed stops the next output from being replaced, and the block still ends with KeyboardInterrupt
    (also when the swallowed interrupt broke something else, such as an import left half-done)."""
    token = _READ.set([])
    _INTERRUPTED.clear()
    previous = None
    if threading.current_thread() is threading.main_thread():  # signal handlers live in the main thread only
        previous = signal.signal(signal.SIGINT, _on_interrupt)
    try:
        yield
        _check_interrupt()
    except Exception as error:
        if _INTERRUPTED.is_set():
            raise KeyboardInterrupt from error
        raise
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
        _READ.reset(token)
        _INTERRUPTED.clear()


def _not_read(path: StrPath) -> None:
    """Refuse an output that is, or holds, a file the current command read; and any output after Ctrl-C."""
    _check_interrupt()
    read = _READ.get()
    if read:
        guard_outputs(read, [path])


# ---------------------------------------------------------------- guards

def real_path(path: StrPath) -> Path:
    """The absolute path with symlinks and ``..`` resolved (as far as the path exists)."""
    return Path(os.path.realpath(os.path.abspath(os.fspath(path))))


def _same_file(a: StrPath, b: StrPath) -> bool:
    """Whether two existing paths are one file (hard links, case-insensitive file systems); False if one is missing."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def shown_path(given: StrPath, real: Path) -> str:
    """``'run.txt'``, or ``'out/../run.txt' (that is /data/run.txt)`` when the path resolves elsewhere."""
    text = os.fspath(given)
    return repr(text) if os.path.join(os.getcwd(), text) == str(real) else f"{text!r} (that is {str(real)!r})"


def guard_outputs(inputs: Iterable[StrPath], outputs: Iterable[StrPath]) -> None:
    """Refuse outputs that would overwrite an input or each other; check before writing anything.

    ``inputs`` are every file read (the config file too); ``outputs`` every path about to be
    written, files and report folders alike (not ``-`` for standard output).

    An output is refused when it is an input (the same path, or one that resolves to it through
    ``..`` or symlinks, or a hard link to it), when it is a folder that contains an input (the
    folder is replaced whole), and when two outputs are the same file or one lies inside the other.

    Raises:
        InputError: naming the output and the input (or the two outputs), with the fix.

    >>> guard_outputs(["qrels.txt", "run.txt"], ["report.md", "reports/demo"])
    >>> guard_outputs(["qrels.txt", "run.txt"], ["run.txt"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: the output 'run.txt'... is the input 'run.txt'...: writing it would destroy the input. \
Fix: write the output to another path (e.g. -o report.md).
    """
    ins = [(p, real_path(p)) for p in inputs]
    outs = [(p, real_path(p)) for p in outputs]
    for n, (out, real_out) in enumerate(outs):
        for given, real_in in ins:
            if real_in == real_out or _same_file(out, given):
                raise InputError(f"the output {shown_path(out, real_out)} is the input {shown_path(given, real_in)}: "
                                 "writing it would destroy the input.",
                                 fix="write the output to another path (e.g. -o report.md).")
            if real_out in real_in.parents:
                raise InputError(f"the output folder {shown_path(out, real_out)} contains the input "
                                 f"{shown_path(given, real_in)}: the folder is replaced whole, which would delete it.",
                                 fix="write the reports to a folder of their own (e.g. output.dir: reports/demo).")
        for other, real_other in outs[:n]:
            if real_other == real_out or _same_file(out, other):
                raise InputError(f"two outputs are the same file: {shown_path(other, real_other)} and "
                                 f"{shown_path(out, real_out)}; one would overwrite the other.",
                                 fix="give each output its own path.")
            if real_other in real_out.parents or real_out in real_other.parents:
                outer, inner = (other, out) if real_other in real_out.parents else (out, other)
                raise InputError(f"the output {shown_path(inner, real_path(inner))} lies inside the output folder "
                                 f"{shown_path(outer, real_path(outer))}, which is replaced whole.",
                                 fix="write that output outside the report folder.")


def slug(text: str) -> str:
    """A file-name-safe version of a metric or system name.

    >>> slug("nDCG(gain=exp)@10")
    'nDCG-gain-exp-at-10'
    """
    return re.sub(r"[^A-Za-z0-9.]+", "-", str(text).replace("@", "-at-")).strip("-")


def unique_file_names(names: Iterable[str], *, slug: Callable[[str], str] = slug,
                      suffix: str = "", what: str = "system") -> dict[str, str]:
    """Each name -> ``slug(name) + suffix``; refuses two names that would write one file.

    ``names`` are system (or metric) names in order; a mapping gives its keys (``config.runs``);
    ``what`` names them in messages. File names are compared as they are and case-insensitively
    (macOS and Windows file systems treat ``BM25.json`` and ``bm25.json`` as one file).

    Raises:
        InputError: two names share a file name (both named, and the file), a name is given twice,
            a name holds a path separator or starts with a dot (a file name made from it would
            climb out or hide), or gives an empty, dot-only or too long file name.

    >>> unique_file_names(["../x"], suffix=".json")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: the system name '../x' holds a path separator; it names a file \
(x.json is made from it), where a separator or a leading dot would climb out of the folder or hide the file. \
Fix: rename it (e.g. 'x').

    >>> unique_file_names(["bm25", "dense@10"], suffix=".json")
    {'bm25': 'bm25.json', 'dense@10': 'dense-at-10.json'}
    >>> unique_file_names(["bm25_rm3", "bm25-rm3"], suffix=".json")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: the systems 'bm25_rm3' and 'bm25-rm3' would both be written to 'bm25-rm3.json'. \
Fix: rename one of them (e.g. 'bm25-rm3-2').
    """
    files: dict[str, str] = {}
    owners: dict[str, str] = {}  # casefolded file name -> the name that took it
    for name in names:
        if name in files:
            raise InputError(f"the system {name!r} is given twice.", fix="give each system a distinct name.")
        stem = slug(name)
        flaw = "a path separator" if "/" in name or "\\" in name else "a leading dot" if name.startswith(".") else ""
        if flaw:
            fixed = stem.lstrip(".-") or "bm25"
            raise InputError(f"the {what} name {name!r} holds {flaw}; it names a file ({fixed + suffix} is made from "
                             "it), where a separator or a leading dot would climb out of the folder or hide the file.",
                             fix=f"rename it (e.g. {fixed!r}).")
        if not stem.strip("."):
            raise InputError(f"the {what} name {name!r} gives no usable file name (got {stem!r}).",
                             fix="use letters or digits in the name (e.g. 'bm25').")
        file = stem + suffix
        if len(file.encode("utf-8")) > NAME_MAX:
            raise InputError(f"the system name {name[:40]!r}... is too long for a file name "
                             f"({len(file.encode('utf-8'))} bytes, at most {NAME_MAX}).", fix="shorten it.")
        key = file.casefold()
        if key in owners:
            other = owners[key]
            same = files[other] == file
            where = f"{file!r}" if same else (f"{files[other]!r} and {file!r}, one file on case-insensitive "
                                              "file systems (macOS, Windows)")
            raise InputError(f"the systems {other!r} and {name!r} would both be written to {where}.",
                             fix=f"rename one of them (e.g. {stem + '-2'!r}).")
        owners[key] = name
        files[name] = file
    return files


def resolve_output_dir(config_folder: StrPath, written_path: StrPath) -> Path:
    """The folder a config's ``output.dir`` names: relative to the config's folder, and inside it.

    ``~`` is expanded. A relative path must stay inside the config's folder (``reports/demo``,
    ``a/../reports``); one that climbs out with ``..`` is refused, and so is the config's folder
    itself (reports replace their folder whole). An absolute path is taken as it is: write
    ``/tmp/reports`` to write elsewhere on purpose. Symlinks are not resolved.

    Raises:
        InputError: an empty path, a path that leaves the config's folder, or the folder itself.

    >>> str(resolve_output_dir("/work/configs", "reports/../reports/demo"))
    '/work/configs/reports/demo'
    >>> str(resolve_output_dir("/work/configs", "/tmp/reports"))
    '/tmp/reports'
    >>> resolve_output_dir("/work/configs", "../reports/demo")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: output.dir '../reports/demo' leaves the config's folder '/work/configs' \
(it is '/work/reports/demo'). Fix: write a path inside that folder (e.g. reports/demo), or an absolute path \
to write elsewhere on purpose.
    """
    written = os.fspath(written_path)
    if not written.strip():
        raise InputError("output.dir is empty.", fix="write a folder, e.g. output.dir: reports/demo.")
    folder = Path(os.path.abspath(os.fspath(config_folder)))
    path = Path(written).expanduser()
    if path.is_absolute():
        return Path(os.path.normpath(path))
    resolved = Path(os.path.normpath(folder / path))
    if resolved == folder:
        raise InputError(f"output.dir {written!r} is the config's own folder {str(folder)!r}; the report folder "
                         "is replaced whole at each run.", fix="write a folder of its own, e.g. reports/demo.")
    if folder not in resolved.parents:
        raise InputError(f"output.dir {written!r} leaves the config's folder {str(folder)!r} "
                         f"(it is {str(resolved)!r}).",
                         fix="write a path inside that folder (e.g. reports/demo), or an absolute path to write "
                             "elsewhere on purpose.")
    return resolved


# ---------------------------------------------------------------- what is there

#: file types an output never replaces -> how a message names them
_NOT_FILES = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
              stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a folder"}


def _read_only(path: Path, mode: int) -> bool:
    """No write permission bit at all (read-only for everyone, root included), or none for this user."""
    return not mode & 0o222 or not os.access(path, os.W_OK)


def _check_parent(path: Path, shown: str) -> None:
    """Refuse when the nearest existing folder above ``path`` is not a folder or cannot take a new entry."""
    ancestor = path.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    try:
        mode = os.stat(ancestor).st_mode
    except OSError as error:
        raise InputError(f"cannot write {shown!r}: {str(ancestor)!r}: {error.strerror}.",
                         fix="write the output to another path.") from None
    if not stat.S_ISDIR(mode):
        raise InputError(f"cannot write {shown!r}: {str(ancestor)!r} is "
                         f"{_NOT_FILES.get(stat.S_IFMT(mode), 'a file')}, not a folder.",
                         fix="write the output to another path, or move that file away.")
    if _read_only(ancestor, mode):
        raise InputError(f"cannot write {shown!r}: the folder {str(ancestor)!r} is read-only.",
                         fix=f"make it writable (chmod u+w {str(ancestor)!r}), or write the output elsewhere.")


def output_file(path: StrPath) -> Path:
    """The file a single-file output writes, checked before any work is done.

    A new file, or an existing regular file that is writable, is written as it is; a symlink is
    followed: the file it points to is replaced and the link stays. Missing parent folders are
    created later (the nearest existing one must be a writable folder).

    Raises:
        InputError: the path (or a symlink's target) is a FIFO, a device, a socket or a folder
            (evalbridge writes only regular files: it replaces the file whole); the file is
            read-only; the folder that would hold it is read-only, or is a file. Each with the fix.

    >>> import os, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> os.mkfifo(folder / "pipe")
    >>> output_file(folder / "pipe")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: the output '...pipe' is a FIFO (named pipe); evalbridge writes only regular \
files (it replaces the file whole). Fix: write to a regular file (e.g. -o report.md), or to standard output with -o -.
    """
    shown = os.fspath(path)
    _not_read(shown)
    target = Path(os.path.realpath(shown)) if os.path.islink(shown) else Path(shown)
    via = f" (a symlink to {str(target)!r})" if target != Path(shown) else ""
    try:
        mode: int | None = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as error:  # a symlink loop, a folder we may not enter
        raise InputError(f"cannot write {shown!r}{via}: {error.strerror}.", fix="write the output to another path.") \
            from None
    if mode is not None:
        if stat.S_IFMT(mode) in _NOT_FILES:
            raise InputError(f"the output {shown!r}{via} is {_NOT_FILES[stat.S_IFMT(mode)]}; evalbridge writes only "
                             "regular files (it replaces the file whole).",
                             fix="write to a regular file (e.g. -o report.md), or to standard output with -o -.")
        if _read_only(target, mode):
            raise InputError(f"the output {shown!r}{via} is read-only.",
                             fix=f"make it writable (chmod u+w {shown!r}), or write the output to another path.")
    _check_parent(target, shown)
    return target


def foreign_files(folder: Path) -> list[str]:
    """Files in ``folder`` that evalbridge did not write (relative paths); ``[]`` when it may be replaced.

    A folder may be replaced when it is empty, when every file in it is listed in its marker, or
    when it is a report an earlier version wrote (a ``provenance.json`` of evalbridge, no marker).
    """
    found = sorted(Path(root, name).relative_to(folder).as_posix()
                   for root, _, files in os.walk(folder) for name in files)
    try:
        listed = json.loads((folder / MARKER).read_text(encoding="utf-8"))["files"]
        return [name for name in found if name not in {*listed, MARKER}]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:  # reports written before the marker existed
        provenance = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
        if isinstance(provenance, dict) and "evalbridge_version" in provenance:
            return []
    except (OSError, ValueError):
        pass
    return found


def check_output_folder(target: StrPath) -> None:
    """Refuse, before any work, a report folder that :class:`ReportFolder` would not replace.

    ``target`` may be missing (its nearest existing parent must be a writable folder), or a
    writable folder that is empty or that evalbridge wrote. A symlink to a folder is followed.

    Raises:
        InputError: ``target`` is ``-``, a file, a FIFO, a device or a socket; it is read-only (or its
            parent is); it holds files evalbridge did not write. Each with the fix.
    """
    shown, real = os.fspath(target), real_path(target)
    if shown == STDOUT:
        raise InputError("a report folder cannot go to standard output ('-').",
                         fix="name a folder (e.g. --output-dir reports/demo), or print one report with --format "
                             "and --no-write.")
    _not_read(shown)
    try:
        mode: int | None = os.stat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as error:
        raise InputError(f"cannot write the report folder {shown!r}: {error.strerror}.",
                         fix="write the reports to another folder (output.dir, --output-dir).") from None
    if mode is not None:
        if not stat.S_ISDIR(mode):
            raise InputError(f"the report folder {shown!r} is {_NOT_FILES.get(stat.S_IFMT(mode), 'a file')}.",
                             fix="write the reports to a folder (e.g. reports/demo), or move that file away.")
        if _read_only(real, mode):
            raise InputError(f"the report folder {shown!r} is read-only; it is replaced whole at each run.",
                             fix=f"make it writable (chmod u+w {shown!r}), or write the reports to another folder "
                                 "(output.dir, --output-dir).")
        foreign = foreign_files(real)
        if foreign:
            raise InputError(f"the folder {shown!r} holds files that evalbridge did not write ({', '.join(foreign[:3])}"
                             f"{', ...' if len(foreign) > 3 else ''}); a report folder is replaced whole, which would "
                             "delete them.",
                             fix="write the reports to a new or empty folder (output.dir, --output-dir), or move "
                                 "those files away.")
    _check_parent(real, shown)


def check_outputs(inputs: Iterable[StrPath], *, files: Iterable[StrPath | None] = (),
                  folders: Iterable[StrPath | None] = ()) -> None:
    """Every check an output needs, before any work: :func:`guard_outputs` (no output is an input or
    overlaps another), :func:`output_file` for each file, :func:`check_output_folder` for each folder,
    and at most one output on standard output (``-``). ``None`` entries are skipped.

    Raises:
        InputError: the first problem found, with the fix.
    """
    given = [f for f in files if f is not None]
    if sum(os.fspath(f) == STDOUT for f in given) > 1:
        raise InputError("more than one output goes to standard output ('-').",
                         fix="give the others a file path (e.g. -o report.md).")
    named = [f for f in given if os.fspath(f) != STDOUT]
    kept = [f for f in folders if f is not None]
    guard_outputs(inputs, [*named, *kept])
    for file in named:
        output_file(file)
    for folder in kept:
        check_output_folder(folder)


_FAILURES = {
    errno.ENOSPC: ("the disk is full", "free some space, or write the output to another disk."),
    errno.EDQUOT: ("the disk quota is used up", "free some space, or write the output to another disk."),
    errno.EFBIG: ("the file is larger than this system allows (ulimit -f, or the file system's limit)",
                  "raise the limit, or write the output to another file system."),
    errno.EACCES: ("permission denied", "make the folder writable for you, or write the output elsewhere."),
    errno.EPERM: ("the operation is not permitted", "make the folder writable for you, or write the output elsewhere."),
    errno.EROFS: ("the file system is read-only", "write the output to a writable disk."),
}


def output_error(error: OSError, shown: str) -> OutputError:
    """``error`` (already in the user's terms) as an :class:`OutputError` naming ``shown`` and the fix."""
    if isinstance(error, OutputError):
        return error
    what, fix = _FAILURES.get(error.errno or 0, (error.strerror or str(error),
                                                  "check that the folder exists and is writable and that the disk "
                                                  "has space."))
    filename = None if error.filename is None else os.fspath(error.filename)
    where = f" ({filename})" if filename and filename != shown else ""
    failure = OutputError(f"cannot write {shown!r}: {what}{where}; nothing was replaced.", filename=filename,
                          code=error.errno, fix=fix)
    return failure.with_traceback(error.__traceback__)


# ---------------------------------------------------------------- low-level helpers

def make_dirs(path: Path) -> None:
    """``mkdir -p`` with the umask's permissions (``0o777`` minus the umask)."""
    os.makedirs(path, mode=0o777, exist_ok=True)


def create_file(path: Path) -> None:
    """Create an empty file that must not exist yet, with the umask's permissions (``0o666`` minus the umask)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666))


def write_new(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


# ---------------------------------------------------------------- single files

@contextlib.contextmanager
def atomic_file(path: StrPath) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; when the block succeeds it replaces ``path`` atomically.

    ``path`` is checked first (:func:`output_file`): only a new or writable regular file is
    replaced, and a symlink's target is written (the link stays). ``-`` is standard output: the
    block writes a temporary file whose bytes then go to stdout.

    The temporary file exists (empty) and its name ends with the target's name, so writers that
    look at the suffix (``.gz``, ``.parquet``) behave. After the block it is flushed (``fsync``)
    and renamed over ``path``; a reader sees the old file or the new one. If the block raises,
    the temporary file is removed and ``path`` is left untouched. Missing parent folders are
    created. Permissions come from the umask; a failure is an
    :class:`~evalbridge.errors.OutputError` (an ``OSError``) naming ``path`` and the fix.
    """
    shown = os.fspath(path)
    if shown == STDOUT:
        with tempfile.TemporaryDirectory(prefix="evalbridge-") as folder:
            temporary = Path(folder, "stdout")
            temporary.touch()
            yield temporary
            data = temporary.read_bytes()
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = output_file(path)
    try:
        with replacing(target, check=lambda: output_file(path)) as temporary:  # checked again just before
            yield temporary
    except OSError as error:
        raise output_error(in_user_terms(error, {str(target): shown}), shown) from None


def write_file_atomic(path: StrPath, data: str | bytes) -> Path:
    """Write ``data`` (str as UTF-8) to ``path`` atomically (see :func:`atomic_file`); returns ``path``.

    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "out" / "report.md"
    >>> write_file_atomic(target, "# report\\n").read_text()
    '# report\\n'
    """
    with atomic_file(path) as temporary:
        temporary.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return Path(path)
