"""The significance-marker styles, one table: how a table's cell says that a mean differs significantly.

``arrows``: ▲ / ▼ when a system is significantly above / below the baseline; ``letters`` (ranx's style): each
system has a letter, and a mean carries as a superscript the letters of the systems it is significantly better
than. How a format writes ▲, ▼ and a superscript is the format's (``FORMAT.marks``,
:class:`evalbridge.views.table.Marks`); a style only decides which mark a cell gets.

Example:
    >>> from evalbridge.views.table import TEXT_MARKS
    >>> list(MARKER_STYLES), MARKER_STYLES["arrows"].legend
    (['arrows', 'letters'], '▲/▼ significantly above/below the baseline')
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .table import Marks

__all__ = ["MarkerStyle", "MARKER_STYLES", "marker"]

#: A comparison (:class:`evalbridge.decisions.comparison.Comparison`) as a style reads it: ``get(system, metric)``
#: (a row with ``significant`` and ``delta``), ``better_than(system, metric)``, ``letters``.
AnyComparison = Any


def _arrow(comparison: AnyComparison, system: str, metric: Any, marks: Marks) -> str:
    row = comparison.get(system, metric)
    if row is None or not row.significant or row.delta == 0:
        return ""
    return marks.up if row.delta > 0 else marks.down


def _letters(comparison: AnyComparison, system: str, metric: Any, marks: Marks) -> str:
    letters = comparison.letters
    return marks.superscript("".join(letters[s] for s in comparison.better_than(system, metric)))


@dataclass(frozen=True)
class MarkerStyle:
    """A way to mark significance in a table: its legend (text, LaTeX) and a cell's marker."""

    legend: str
    latex_legend: str
    marker: Callable[[AnyComparison, str, Any, Marks], str]


#: marker style -> how cells are marked: ``arrows`` against the baseline, or ranx's ``letters``
MARKER_STYLES: Mapping[str, MarkerStyle] = {
    "arrows": MarkerStyle("▲/▼ significantly above/below the baseline", r"$\uparrow$/$\downarrow$", _arrow),
    "letters": MarkerStyle("superscript letters: significantly better than the system with that letter",
                           "superscript letters: significantly better than the system with that letter", _letters),
}


def marker(comparison: AnyComparison, system: str, metric: Any, style: str, marks: Marks) -> str:
    """The marker of one cell (``system`` on ``metric``) in ``style``, written in ``marks``."""
    return MARKER_STYLES[style].marker(comparison, system, metric, marks)
