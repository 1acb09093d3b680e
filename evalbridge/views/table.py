"""What a result shows, as data: its tables (headers, rows, alignment, title, footnotes), the one number formatter.

A result type (``Comparison``, the agreements, ``Results``, ``CrossCheck``, ``Report``) never writes a format: it
declares :class:`Table` values, and each output format of :mod:`evalbridge.views.formats` writes them
(``FORMAT.table``). The cells are text in the format they are written in: a name escaped by the format
(``FORMAT.escape``), a significance marker in its marks (``FORMAT.marks``), a number through :func:`number`.
This module imports nothing of evalbridge, so every layer may declare its tables with it.

Example:
    >>> number(0.123456), number(float("nan")), number(None, 2), number(1, 2)
    ('0.1235', 'nan', 'nan', '1.00')
    >>> p_value(0.00001), p_value(0.0312)
    ('<0.0001', '0.0312')
    >>> unicode_superscript("ab")
    'ᵃᵇ'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Table", "Marks", "Shown", "columns", "number", "p_value", "unicode_superscript", "TEXT_MARKS"]


@dataclass(frozen=True)
class Table:
    """One table a result shows.

    Attributes:
        headers: one heading per column, as text of the format.
        rows: the cells, as text of the format (names escaped, numbers through :func:`number`, markers in the
            format's marks).
        align: ``"left"`` or ``"right"`` per column (:func:`columns`); empty: every column as the format lays
            out text.
        title: a line above the table (empty: none).
        footnotes: the lines under the table (what the markers mean, how a number was decided).
    """

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    align: tuple[str, ...] = ()
    title: str = ""
    footnotes: tuple[str, ...] = ()


def columns(left: int, right: int) -> tuple[str, ...]:
    """A table's alignment: ``left`` columns of text, then ``right`` columns of numbers."""
    return ("left",) * left + ("right",) * right


def number(value: float | None, digits: int = 4) -> str:
    """A number as a table shows it: ``digits`` decimals; ``nan`` for a missing, nan or infinite value."""
    return "nan" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def p_value(value: float | None) -> str:
    """A p-value as a table shows it: four decimals, ``<0.0001`` below that, ``nan`` when there is none."""
    if value is None or not math.isfinite(value):
        return "nan"
    return "<0.0001" if value < 1e-4 else f"{value:.4f}"


_SUPERSCRIPT_LETTERS = dict(zip("abcdefghijklmnopqrstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖ\U000107a5ʳˢᵗᵘᵛʷˣʸᶻ"))


def unicode_superscript(letters: str) -> str:
    """Lower-case letters as Unicode superscript letters (how plain text and Markdown write them)."""
    return "".join(map(_SUPERSCRIPT_LETTERS.__getitem__, letters))


@dataclass(frozen=True)
class Marks:
    """How one output format writes a significance marker: ▲ / ▼, superscript letters, and ▲/▼ in a legend."""

    up: str
    down: str
    superscript: Callable[[str], str]
    legend: str = "▲/▼"


#: the marks of plain text and Markdown
TEXT_MARKS = Marks("▲", "▼", unicode_superscript)


class Shown:
    """A result that shows itself through its ``table(fmt)`` (text in any format that writes tables, or json):
    printed, in Markdown and in a notebook alike."""

    def table(self, fmt: str = "terminal") -> str:
        raise NotImplementedError

    def to_markdown(self) -> str:
        return self.table("markdown")

    def _repr_html_(self) -> str:
        return self.table("html")

    def __str__(self) -> str:
        return self.table()
