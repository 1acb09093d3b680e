"""A report folder written as one transaction: every file goes into a hidden sibling folder, which then replaces
the target whole.

:class:`ReportFolder`: a reader, or a crash at any point, sees the complete old folder or the complete new one,
never a mix, and nothing a previous run left stays inside. A lock file beside the target serialises two runs into
one folder. :func:`check_report_folder` refuses, before any work, a folder it would not replace.

Where the files of a report folder ``reports/demo`` live, and what is left beside it:

* ``reports/demo/``: the reports, plus ``.evalbridge-report.json`` listing every file written
  (evalbridge replaces a folder only when every file in it is listed there, or it is empty, or an
  earlier version wrote it: it never deletes a file someone else put there);
* ``reports/.demo.lock``: the lock file (empty; it stays, as lock files do);
* ``reports/.demo.tmp-<pid>-<token>`` and ``reports/.demo.old-<pid>-<token>`` exist only while a
  run writes, or after a run was killed; the next run into the same folder removes them (and
  restores the old folder if a kill struck between the two renames of the portable swap).

Example:
    >>> import pathlib, tempfile
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "reports"
    >>> with ReportFolder(target) as folder:
    ...     _ = folder.write_text("report.md", "# first run\\n")
    ...     _ = folder.write_text("systems/bm25.json", "{}\\n")
    >>> with ReportFolder(target) as folder:
    ...     _ = folder.write_text("report.md", "# second run\\n")
    >>> [p.name for p in folder.files], (target / "systems").exists()
    (['report.md'], False)
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import os
import re
import secrets
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..errors import InputError
from .writing import MARKER, StrPath, check_output_folder, foreign_files, fsync, in_user_terms, make_dirs, output_error, real_path, \
    shown_path, write_new

if TYPE_CHECKING:
    from filelock import BaseFileLock

__all__ = ["ReportFolder", "check_report_folder", "DEFAULT_WAIT"]

#: Seconds a run waits for another run writing into the same folder before giving up.
DEFAULT_WAIT = 60.0


def _fsync_tree(root: Path) -> None:
    for folder, _, files in os.walk(root, topdown=False):
        for name in files:
            fsync(Path(folder, name))
        fsync(Path(folder), directory=True)


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


@functools.lru_cache(maxsize=1)
def _renameat2() -> Callable[..., int] | None:
    """glibc's ``renameat2`` (Linux 3.15+, glibc 2.28+), or None where it does not exist."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one atomic step (Linux ``RENAME_EXCHANGE``).

    Returns False where the system or the file system cannot; :class:`ReportFolder` then swaps
    with two renames and recovers from a crash between them.
    """
    function = _renameat2()
    if function is None:
        return False
    import ctypes

    if function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), os.fspath(a), None, os.fspath(b))


def _siblings(real: Path, kind: str) -> list[Path]:
    """The temporary (``tmp``) or backup (``old``) siblings of a report folder, oldest first."""
    pattern = re.compile(rf"\.{re.escape(real.name)}\.{kind}-(\d+)-[0-9a-f]{{8}}")
    found = []
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(real.parent):
            if pattern.fullmatch(entry.name):
                with contextlib.suppress(FileNotFoundError):  # removed meanwhile by the run that made it
                    found.append((entry.stat(follow_symlinks=False).st_mtime_ns, Path(entry.path)))
    return [path for _, path in sorted(found)]


def _sibling(real: Path, kind: str) -> Path:
    return real.parent / f".{real.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def _holder(real: Path) -> str:
    """``' (process 1234)'`` for the run whose temporary folder is beside ``real``, else ``''``."""
    pids = [p.name.rsplit("-", 2)[-2] for p in _siblings(real, "tmp")]
    return f" (process {pids[-1]})" if pids else ""


def check_report_folder(target: StrPath) -> Path:
    """The report folder to read: ``target`` when it is complete, else an error that says why.

    Readers call this instead of opening ``target`` blindly: if a run was killed between the two
    renames of the portable swap, ``target`` is missing and the complete previous folder waits
    in a hidden sibling; the message names it.

    Raises:
        InputError: ``target`` is missing (with where the previous reports are, if anywhere), or
            a file listed in its ``.evalbridge-report.json`` is missing.
    """
    shown, real = Path(target), real_path(target)
    if real.is_dir():
        try:
            listed = json.loads((real / MARKER).read_text(encoding="utf-8"))["files"]
        except FileNotFoundError:
            return shown  # written by an earlier version, or not by evalbridge: nothing to check
        except (OSError, ValueError, KeyError, TypeError):
            raise InputError(f"the report folder {str(shown)!r} has an unreadable {MARKER}.",
                             fix="run the evaluation again to rewrite the folder.") from None
        missing = [name for name in listed if not (real / name).is_file()]
        if missing:
            raise InputError(f"the report folder {str(shown)!r} is incomplete: {', '.join(missing[:5])} "
                             f"{'is' if len(missing) == 1 else 'are'} missing (deleted after it was written).",
                             fix="run the evaluation again to rewrite the folder.")
        return shown
    backups = _siblings(real, "old")
    if backups:
        raise InputError(f"the report folder {str(shown)!r} is missing: a run was interrupted while replacing it; "
                         f"the previous reports are complete in {str(backups[-1])!r}.",
                         fix="run the evaluation again (it restores or replaces the folder), or rename that "
                             "folder back.")
    raise InputError(f"there is no report folder at {str(shown)!r}.", fix="run the evaluation first.")


class ReportFolder:
    """Write a report folder as one transaction; see the module docstring.

    Usage::

        with ReportFolder("reports/demo") as folder:
            folder.write_text("report.md", markdown)
            folder.write_bytes("report.json", data)
            figure.savefig(folder.path_for("plots/ndcg.png"))   # for writers that need a path
            plot_distribution(values, label, folder.dir_for("plots") / "distribution_P-at-5")
        folder.files   # the files written, as paths under reports/demo

    Entering takes the lock (``.demo.lock`` beside the folder), cleans what killed runs left
    (restoring the previous folder if a kill left only its backup), checks that the target may be
    replaced (missing, empty, or a report folder evalbridge wrote) and creates the hidden
    temporary sibling. Leaving without an exception writes ``.evalbridge-report.json`` (every
    file written), flushes every file and folder to disk and swaps the temporary folder in:
    one atomic ``renameat2(RENAME_EXCHANGE)`` on Linux, else two renames (target -> backup,
    temporary -> target) with recovery by the next run. Leaving with an exception removes the
    temporary folder and leaves the target untouched. It is not reentrant.

    Args:
        target: the report folder (the user's path; errors name it). A symlink to a folder is
            followed: the folder it points to is replaced and the link kept.
        wait: seconds to wait for another run writing into the same folder; ``0`` fails at
            once, ``None`` waits as long as it takes.

    Raises:
        InputError: another run holds the folder longer than ``wait``; the target is a file, or
            a folder of files evalbridge did not write; a relative name is absolute, climbs out
            with ``..``, or is written twice.
        OSError: the file system refused (full disk, permissions), naming the user's path.
    """

    def __init__(self, target: StrPath, *, wait: float | None = DEFAULT_WAIT) -> None:
        self.shown_path = Path(target)
        self.real_path = real_path(target)
        if self.real_path.name in ("", ".", ".."):
            raise InputError(f"{str(self.shown_path)!r} cannot be a report folder (it is {str(self.real_path)!r}).",
                             fix="write the reports to a folder of their own, e.g. reports/demo.")
        self._wait = wait
        self._lock: BaseFileLock | None = None
        self._temporary: Path | None = None
        self._taken: dict[str, str] = {}  # casefolded relative name -> relative name
        self._files: tuple[Path, ...] = ()
        self._recovered: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        """The report folder, as the user wrote it."""
        return self.shown_path

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file written (under :attr:`path`, sorted), once the folder is in place; ``()`` before."""
        return self._files

    @property
    def recovered(self) -> tuple[str, ...]:
        """What entering cleaned up after killed runs, one sentence each (for a log line)."""
        return self._recovered

    # ------------------------------------------------------------ the transaction

    def __enter__(self) -> ReportFolder:
        if self._lock is not None:
            raise InputError(f"the report folder {str(self.shown_path)!r} is already being written by this object.",
                             fix="use one `with ReportFolder(...)` block at a time.")
        names = {str(self.real_path): str(self.shown_path)}
        self._check_replaceable()  # refuse before leaving anything (a lock file, a parent folder) behind
        try:
            make_dirs(self.real_path.parent)
            self._lock = self._acquire()
        except OSError as error:
            raise output_error(in_user_terms(error, names), str(self.shown_path)) from None
        try:
            self._recovered = self._recover()
            self._check_replaceable()
            temporary = _sibling(self.real_path, "tmp")
            os.mkdir(temporary, 0o777)
            self._temporary = temporary
        except BaseException as error:
            self._release()
            if isinstance(error, OSError):
                raise output_error(in_user_terms(error, names), str(self.shown_path)) from None
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        temporary = self._temporary
        if temporary is None:  # __enter__ failed, or the block ran twice: nothing to commit or clean
            return
        names = {str(temporary): str(self.shown_path), str(self.real_path): str(self.shown_path)}
        try:
            if error is None:
                self._commit(temporary)
        except OSError as failure:
            raise output_error(in_user_terms(failure, names), str(self.shown_path)) from None
        finally:
            with contextlib.suppress(OSError):
                shutil.rmtree(temporary)
            self._temporary = None
            self._release()
        if isinstance(error, OSError):
            raise output_error(in_user_terms(error, names), str(self.shown_path)) from None

    def _acquire(self) -> BaseFileLock:
        from filelock import FileLock, Timeout

        lock = FileLock(self.real_path.parent / f".{self.real_path.name}.lock")
        try:
            lock.acquire(timeout=-1 if self._wait is None else self._wait)
        except Timeout:
            waited = "" if not self._wait else f"; waited {self._wait:g} s"
            raise InputError(f"another evalbridge run{_holder(self.real_path)} is writing the report folder "
                             f"{str(self.shown_path)!r}{waited}.",
                             fix="wait for it to finish, or write the reports to another folder "
                                 "(output.dir, --output-dir).") from None
        return lock

    def _release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def _recover(self) -> tuple[str, ...]:
        """Under the lock: restore the previous folder if only its backup is left, remove other leftovers."""
        done = []
        backups = _siblings(self.real_path, "old")
        if backups and not os.path.lexists(self.real_path):
            os.rename(backups[-1], self.real_path)
            fsync(self.real_path.parent, directory=True)
            done.append(f"restored {str(self.shown_path)!r} from the backup an interrupted run left")
            backups = backups[:-1]
        leftovers = [*backups, *_siblings(self.real_path, "tmp")]
        for leftover in leftovers:
            shutil.rmtree(leftover)
        if leftovers:
            done.append(f"removed {len(leftovers)} temporary folder(s) that interrupted runs left beside "
                        f"{str(self.shown_path)!r}")
        return tuple(done)

    def _check_replaceable(self) -> None:
        check_output_folder(self.shown_path)

    def _commit(self, temporary: Path) -> None:
        relative = sorted(Path(folder, name).relative_to(temporary).as_posix()
                          for folder, _, files in os.walk(temporary) for name in files)
        from .._version import __version__

        write_new(temporary / MARKER, (json.dumps({"written_by": f"evalbridge {__version__}", "files": relative},
                                                   indent=1) + "\n").encode("utf-8"))
        _fsync_tree(temporary)
        self._check_replaceable()
        if not os.path.lexists(self.real_path):
            os.rename(temporary, self.real_path)
        elif not _exchange(temporary, self.real_path):
            backup = _sibling(self.real_path, "old")
            os.rename(self.real_path, backup)
            try:
                os.rename(temporary, self.real_path)
            except OSError:
                os.rename(backup, self.real_path)
                raise
            fsync(self.real_path.parent, directory=True)
            shutil.rmtree(backup)
        # after an exchange, `temporary` holds the previous folder; __exit__ removes it
        fsync(self.real_path.parent, directory=True)
        self._files = tuple(self.shown_path / name for name in relative)

    # ------------------------------------------------------------ writing into it

    def _inside(self, relative: StrPath) -> tuple[Path, str]:
        """(temporary folder, relative posix path) after checking ``relative`` stays inside the folder."""
        temporary = self._temporary
        if temporary is None:
            raise InputError(f"the report folder {str(self.shown_path)!r} is not open for writing.",
                             fix="write inside `with ReportFolder(...) as folder:`.")
        path = Path(relative)
        if not path.parts or path.is_absolute() or path.drive or ".." in path.parts or path.as_posix() == MARKER:
            raise InputError(f"a report file name must be a relative path inside the report folder; got "
                             f"{os.fspath(relative)!r}.", fix="write e.g. 'report.md' or 'plots/ndcg.png'.")
        return temporary, path.as_posix()

    def _make(self, temporary: Path, folder: Path) -> None:
        try:
            make_dirs(folder)
        except OSError as error:
            raise in_user_terms(error, {str(temporary): str(self.shown_path)}) from None

    def path_for(self, relative: StrPath) -> Path:
        """A path (in the temporary folder) for a writer that needs one; parent folders are created.

        ``relative`` is relative to the report folder, e.g. ``plots/ndcg.png``; each name is given
        out once (also ignoring case). The path is temporary: show users ``folder.path / relative``,
        or :attr:`files` after the block.
        """
        temporary, text = self._inside(relative)
        key = text.casefold()
        if key in self._taken:
            raise InputError(f"two outputs would both be written to {str(self.shown_path / text)!r}"
                             + ("" if self._taken[key] == text else f" (as {self._taken[key]!r} and {text!r}, one "
                                "file on case-insensitive file systems)") + ".",
                             fix="give each output its own file name.")
        self._taken[key] = text
        self._make(temporary, (temporary / text).parent)
        return temporary / text

    def dir_for(self, relative: StrPath) -> Path:
        """A sub-folder (in the temporary folder, created) for writers that name their own files,
        e.g. ``plot_distribution(values, label, folder.dir_for("plots") / "distribution_nDCG-at-10")``.
        Every file written in it is in the marker and in :attr:`files` like the others."""
        temporary, text = self._inside(relative)
        self._make(temporary, temporary / text)
        return temporary / text

    def write_bytes(self, relative: StrPath, data: bytes) -> Path:
        """Write ``data`` to ``relative`` in the report folder; returns its final path (under :attr:`path`)."""
        path = self.path_for(relative)
        try:
            write_new(path, data)
        except OSError as error:
            raise in_user_terms(error, {str(self._temporary): str(self.shown_path)}) from None
        return self.shown_path / Path(relative).as_posix()

    def write_text(self, relative: StrPath, text: str, *, encoding: str = "utf-8") -> Path:
        """Write ``text`` (no newline translation) to ``relative``; returns its final path."""
        return self.write_bytes(relative, text.encode(encoding))
