"""How a message names what the user can change, in the words of the door they came through.

One fault has one message at every door, but its fix is spelled as the user writes it there:

==============  =========================  ==========================  =====================================
door            a column or field          a setting                   where a file goes
==============  =========================  ==========================  =====================================
python          ``relevant='...'``         ``min_relevance=7``         ``read_run()`` / ``evaluate(qrels, run)``
command line    ``--columns relevant=...``  ``--min-relevance 7``      RUN after QRELS
config          ``columns: {relevant: ...}``  ``min_relevance: 7``     under ``runs:``
==============  =========================  ==========================  =====================================

The command line and the config pipeline open their door around their work (:func:`door`); Python is
the default. A message is worded when the error is raised, so whatever layer raises it inside the
block speaks the door's words, and a re-raised message keeps them.

Example:
    >>> option("min_relevance", 7), option("relevant", column=True)
    ('min_relevance=7', "relevant='...'")
    >>> with door("command line"):
    ...     option("min_relevance", 7), option("relevant", column=True)
    ('--min-relevance 7', '--columns relevant=...')
    >>> with door("config"):
    ...     option("min_relevance", 7), option("relevant", column=True)
    ('min_relevance: 7', 'columns: {relevant: ...}')
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["DOORS", "door", "side", "current", "option", "place"]

#: the doors a user comes through
DOORS = ("python", "command line", "config")

_DOOR: ContextVar[str] = ContextVar("evalbridge_door", default="python")
#: the side of the input being read (``qrels`` or ``run``), when a door reads one: its columns have their own flag
_SIDE: ContextVar[str | None] = ContextVar("evalbridge_side", default=None)

#: where a file of each kind goes, per door (the fix of a qrels read as a run, or the other way round)
_PLACES = {
    "python": {"qrels": "read it with read_qrels(): the qrels are evaluate()'s first argument",
               "run": "read it with read_run(): the run is evaluate()'s second argument"},
    "command line": {"qrels": "give it first, as QRELS (were QRELS and RUN swapped?)",
                     "run": "give it after QRELS, as a RUN (were QRELS and RUN swapped?)"},
    "config": {"qrels": "give it as qrels:", "run": "give it under runs:"},
}


@contextlib.contextmanager
def door(name: str) -> Iterator[None]:
    """Word every message raised inside the block for ``name`` (one of :data:`DOORS`)."""
    if name not in DOORS:
        raise ValueError(f"unknown door {name!r}; the doors are {', '.join(DOORS)}")
    token = _DOOR.set(name)
    try:
        yield
    finally:
        _DOOR.reset(token)


@contextlib.contextmanager
def side(kind: str) -> Iterator[None]:
    """Inside the block an input of ``kind`` (``qrels`` or ``run``) is read: the command line names its
    columns with ``--qrels-columns`` / ``--run-columns``."""
    token = _SIDE.set(kind)
    try:
        yield
    finally:
        _SIDE.reset(token)


def current() -> str:
    """The door the user came through (``python`` unless the command line or a config opened another)."""
    return _DOOR.get()


def option(name: str, value: object = "...", *, column: bool = False) -> str:
    """Option ``name`` set to ``value`` as the user writes it at the current door; ``column``: a column or
    field role (``query``, ``relevant``...), which the command line and configs give under ``columns``
    (``--qrels-columns`` / ``--run-columns`` while one side is read, :func:`side`); ``format`` is
    ``--qrels-format`` / ``--run-format`` on the command line."""
    shown = repr(value) if isinstance(value, str) and _DOOR.get() == "python" else str(value)
    if name == "format" and _DOOR.get() == "command line":  # each side has its own format flag
        return f"--{_SIDE.get() or 'run'}-format {shown}"
    spelled = {
        "python": f"{name}={shown}",
        "command line": f"--{_SIDE.get() or ''}{'-' if _SIDE.get() else ''}columns {name}={shown}" if column
        else f"--{name.replace('_', '-')} {shown}",
        "config": f"columns: {{{name}: {shown}}}" if column else f"{name}: {shown}",
    }
    return spelled[_DOOR.get()]


def place(kind: str) -> str:
    """Where an input of ``kind`` (``qrels`` or ``run``) goes at the current door."""
    return _PLACES[_DOOR.get()][kind]
