"""Exceptions raised by evalbridge.

Every error subclasses a builtin (``ValueError``, ``ImportError``) so existing
``except`` clauses keep working, and every message says what was expected, what
was got, where (file:line, query id), and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "EvalbridgeError",
    "InputError",
    "MetricSpecError",
    "UnsupportedMetricError",
    "BackendUnavailableError",
    "EvalbridgeWarning",
    "OutputError",
    "warn",
]


class EvalbridgeError(Exception):
    """Base class of every error evalbridge raises on purpose."""


class InputError(EvalbridgeError, ValueError):
    """Input data (qrels, run, labels, files) is malformed or inconsistent."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 query_id: str | None = None, fix: str | None = None) -> None:
        where = []
        if source is not None:
            where.append(f"{source}:{line}" if line is not None else str(source))
        if query_id is not None:
            where.append(f"query {query_id!r}")
        text = f"{', '.join(where)}: {message}" if where else message
        if fix:
            text += f" Fix: {fix}"
        super().__init__(text)
        self.source, self.line, self.query_id, self.fix = source, line, query_id, fix


class MetricSpecError(EvalbridgeError, ValueError):
    """A metric string or option could not be understood."""


class UnsupportedMetricError(EvalbridgeError, ValueError):
    """A backend cannot compute a metric exactly as asked."""


class BackendUnavailableError(EvalbridgeError, ImportError):
    """The library behind a backend is not installed."""


class EvalbridgeWarning(UserWarning):
    """Input that was read but probably does not mean what was meant (ids that never meet, ranks as scores).

    A warning, not an error: the numbers are computed, and the message says what looks wrong and how to check it.
    The command line prints it once on stderr; results note it in their provenance.
    """


def warn(text: str) -> None:
    """Warn ``text`` as an :class:`EvalbridgeWarning` pointing at the caller's line: the first frame outside
    evalbridge, however deep inside the library the warning is found (``compare``, ``diff``, a reader...)."""
    import sys
    import warnings

    frame, level = sys._getframe(1), 2  # stacklevel 2: warn's caller
    while frame.f_back is not None and str(frame.f_globals.get("__name__", "")).partition(".")[0] == "evalbridge":
        frame, level = frame.f_back, level + 1
    warnings.warn(EvalbridgeWarning(text), stacklevel=level)


class OutputError(EvalbridgeError, OSError):
    """An output could not be written (disk full, permissions, a read-only file system).

    The message names the user's path and the fix; ``errno`` and ``filename`` are those of the
    failure, so ``except OSError`` still catches it. Nothing was replaced: the previous file or
    report folder is as it was.
    """

    def __init__(self, message: str, *, filename: str | None = None, code: int | None = None,
                 fix: str | None = None) -> None:
        super().__init__(message + (f" Fix: {fix}" if fix else ""))
        self.errno, self.filename, self.fix = code, filename, fix

    def __str__(self) -> str:
        return str(self.args[0])
