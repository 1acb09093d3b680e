"""Writing outputs safely: never over an input, atomically, with the user's permissions.

(A first version: the report-folder transaction and the lock join it in the same module.)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from ..errors import InputError

__all__ = ["guard_outputs", "write_file_atomic"]


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def guard_outputs(inputs: Iterable[str | os.PathLike], outputs: Iterable[str | os.PathLike]) -> None:
    """Refuse an output path that is an input, or a folder output that holds an input."""
    ins = [Path(p) for p in inputs]
    for out in map(Path, outputs):
        for source in ins:
            inside = out.is_dir() and source.resolve().is_relative_to(out.resolve())
            if _same(out, source) or inside:
                raise InputError(f"the output {str(out)!r} would overwrite the input {str(source)!r}.",
                                 fix="write the output somewhere else; evalbridge never writes over its inputs.")


def write_file_atomic(path: str | os.PathLike, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder, then ``os.replace``;
    the file gets the permissions the umask gives a new file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-", suffix=f"-{target.name}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
    return target
