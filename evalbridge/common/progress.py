"""Progress bars for long calls: drawn with rich, only on a terminal, only when asked.

A long call (``evaluate`` of a 7M-row run, a cross-check, a comparison at 100k queries) takes
``progress: bool = False`` and announces its steps::

    from evalbridge.common.progress import steps

    def long_call(..., progress: bool = False):
        with steps(3, enabled=progress) as bar:
            bar.step("reading the inputs")
            ...
            bar.step("computing nDCG@10 on fast")
            ...
            bar.step("assembling the results")
            ...

* Nothing is drawn unless ``enabled`` is true **and** the stream (``sys.stderr`` by default) is
  a terminal: a pipe, a file, a CI log or a Jupyter cell never receive a bar (nor an escape
  code). When nothing is drawn, rich is not even imported and ``step`` costs one method call.
* The bar is transient: it disappears when the call ends and leaves the terminal as it was.
* Calls nest: a call made while another call's bar is shown (``evaluate`` inside a config run,
  ``crosscheck`` inside a loop) adds its own line under it, removed when it ends.
* A caller that drives its own steps through a callback ``on_step(description, done, total)``
  (as :func:`evalbridge.config.run_config` does) gets one from :func:`callback`.

The CLI turns progress on when stderr is a terminal; the Python API leaves it off unless asked.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TextIO

__all__ = ["Steps", "steps", "callback", "is_terminal"]

#: ``on_step(description, done, total)``: what a drawing backend is told before each step.
OnStep = Callable[[str, int, int], None]

#: the rich ``Progress`` being drawn, so that nested calls add a line to it instead of a second display
_ACTIVE: ContextVar[Any] = ContextVar("evalbridge_progress", default=None)


class Steps:
    """The steps of one call; :meth:`step` starts the next one (a no-op when nothing is drawn).

    Attributes:
        total: the number of steps announced.
        done: the steps finished so far.
    """

    __slots__ = ("total", "done", "_on_step")

    def __init__(self, total: int, on_step: OnStep | None = None) -> None:
        self.total, self.done, self._on_step = total, 0, on_step

    def step(self, description: str) -> None:
        """Start the next step: the bar shows ``description`` and the steps finished before it."""
        if self._on_step is not None:
            self._on_step(description, self.done, self.total)
        self.done = min(self.done + 1, self.total)

    @property
    def shown(self) -> bool:
        """True when a bar is drawn."""
        return self._on_step is not None


def is_terminal(stream: TextIO) -> bool:
    """True when ``stream`` is an open terminal (a closed or detached stream is not)."""
    try:
        return stream.isatty()
    except (ValueError, OSError):  # closed or detached
        return False


@contextlib.contextmanager
def callback(enabled: bool, *, total: int | None = None, stream: TextIO | None = None) -> Iterator[OnStep | None]:
    """An ``on_step(description, done, total)`` callback drawing a bar on ``stream`` (default ``sys.stderr``),
    or ``None`` when ``enabled`` is false or ``stream`` is not a terminal.

    ``total`` may be left out and given by each call of ``on_step``.
    """
    stream = sys.stderr if stream is None else stream
    if not enabled or not is_terminal(stream):
        yield None
        return
    active = _ACTIVE.get()
    if active is not None:  # a bar is already drawn: one more line in it
        task = active.add_task("starting", total=total)
        try:
            yield _updater(active, task)
        finally:
            active.remove_task(task)
        return
    from rich.console import Console
    from rich.errors import LiveError
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=Console(file=stream), transient=True)
    try:
        bar.start()
    except LiveError:  # another thread draws a bar on this console: this call stays silent
        yield None
        return
    token = _ACTIVE.set(bar)
    try:
        yield _updater(bar, bar.add_task("starting", total=total))
    finally:
        _ACTIVE.reset(token)
        bar.stop()


def _updater(bar: Any, task: Any) -> OnStep:
    def on_step(description: str, done: int, total: int) -> None:
        bar.update(task, description=description, completed=done, total=total, refresh=True)  # steps are few: draw each

    return on_step


@contextlib.contextmanager
def steps(total: int, *, enabled: bool, stream: TextIO | None = None) -> Iterator[Steps]:
    """The :class:`Steps` of a call of ``total`` steps, drawn as a bar on ``stream`` (default ``sys.stderr``)
    when ``enabled`` and ``stream`` is a terminal, silent otherwise.

    Example:
        >>> import io
        >>> with steps(2, enabled=True, stream=io.StringIO()) as bar:  # not a terminal: nothing drawn
        ...     bar.step("reading"); bar.step("computing")
        >>> bar.done, bar.shown
        (2, False)
    """
    with callback(enabled, total=total, stream=stream) as on_step:
        yield Steps(total, on_step)
