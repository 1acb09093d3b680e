"""The read policies every door takes alike: ids read as strings, a repeated document kept at its first place.

Declared once, as settings (:data:`evalbridge.model.settings.ROWS`, read into :data:`POLICIES`: each option's choices
and meaning); the registry checks the values
(:func:`evalbridge.io.registry.check_options`) and the Python API (``read_run(..., duplicates="first")``),
the command line (``--ids str``, ``--duplicates first``) and configs (``ids: str``, ``duplicates: first``)
pass them to the format as options.

* ``ids="str"``: every query and doc id is read as a string, so an int id (a ``chunk_id`` column, a
  JSON number) meets the same id written as text on the other side. Every format takes it; the readers
  whose ids may be ints take it themselves (1 and ``'1'`` in one input are then one id: a repeat).
* ``duplicates="first"``: a document repeated in a ranked list or a run (a RAG log that retrieved one
  chunk twice) keeps its first occurrence (its first line, its best rank) and the others are dropped
  and counted in the notes; the default, ``"error"``, refuses the repeat. Taken by the formats that
  list it in their ``options``; qrels never take it (which grade is right is not for evalbridge to pick).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..model.settings import ROWS
from ..common.parameters import OneOf

__all__ = ["POLICIES", "EVERY_FORMAT", "policy_options", "as_id", "dropped_note", "keep_first"]

#: option -> (its choices, what it does): the read settings of :class:`evalbridge.model.settings.Settings`, declared there
POLICIES: Mapping[str, tuple[tuple[str, ...], str]] = MappingProxyType({
    name: (row.rule.choices, row.help) for name, row in ROWS.items() if row.reads and isinstance(row.rule, OneOf)})
#: the policies every format takes
EVERY_FORMAT = ("ids",)


def policy_options(*names: str) -> dict[str, str]:
    """``{option: what it does}`` of the read policies ``names``, for a format's ``options``."""
    return {name: POLICIES[name][1] for name in names}


def as_id(value: Any, ids: str | None) -> Any:
    """An id as read: ``str(value)`` under ``ids="str"``, else as it is (the reader checks its type)."""
    return str(value) if ids == "str" and isinstance(value, int) and not isinstance(value, bool) else value


def keep_first(duplicates: str | None) -> bool:
    """True when repeated documents keep their first occurrence (``duplicates="first"``)."""
    return duplicates == "first"


def dropped_note(dropped: int) -> tuple[str, ...]:
    """The note counting the repeats ``duplicates="first"`` dropped (none when nothing was dropped)."""
    if not dropped:
        return ()
    return (f"duplicates='first': {dropped} repeated document{'s' if dropped != 1 else ''} dropped "
            f"(the first occurrence of each kept)",)
