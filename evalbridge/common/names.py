"""Names are data: the one check of system, metric-label, judge and report names, at every door.

A name may hold any printable text (spaces, ``,``, ``:``, ``|``, ``%``, any script): every output
escapes it (GitHub workflow commands, JUnit XML, Markdown, LaTeX, CSV, HTML). It may not hold a
control character (a newline, a tab, ``\\x1b``...): they change what a terminal, a log or a CI
server shows. File names made from a name (``systems/<name>.json``, plot files) are checked by
:func:`evalbridge.reports.writing.unique_file_names`: no path separator, no leading dot.

>>> check_name("dense v2, rerank: top|10", "system")
'dense v2, rerank: top|10'
>>> check_name("bm25\\n::warning::injected", "system")
Traceback (most recent call last):
...
evalbridge.errors.InputError: the system name 'bm25\\n::warning::injected' holds a control character ('\\n' at \
position 4); a name is shown in reports, logs and CI annotations. Fix: remove it (e.g. 'bm25 ::warning::injected').
"""

from __future__ import annotations

import re

from ..errors import InputError

__all__ = ["check_name", "name_problem", "control_characters", "one_line", "CONTROL"]

#: Unicode control characters (category Cc): C0, DEL and C1
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


def control_characters(text: str) -> list[tuple[int, str]]:
    """``(position, character)`` of every control character in ``text``."""
    return [(m.start(), m.group()) for m in CONTROL.finditer(text)]


def one_line(text: str) -> str:
    """``text`` with every control character (line breaks too) as a space: for a name inside a comment or a
    log line that must stay one line.

    >>> one_line("bm25\\r\\n% injected")
    'bm25  % injected'
    """
    return CONTROL.sub(" ", text)


def name_problem(name: str, what: str) -> tuple[str, str] | None:
    """``(message, fix)`` when ``name`` holds a control character, else None (for checkers that say where)."""
    found = control_characters(name)
    if not found:
        return None
    position, char = found[0]
    cleaned = re.sub(r"\s+", " ", one_line(name)).strip() or "bm25"
    return (f"the {what} name {name!r} holds a control character ({char!r} at position {position}); a name is "
            "shown in reports, logs and CI annotations.", f"remove it (e.g. {cleaned!r}).")


def check_name(name: str, what: str) -> str:
    """``name`` when it holds no control character; else an :class:`InputError` naming it and the fix.

    ``what`` says what the name names (``system``, ``metric label``, ``judge``, ``report title``).
    """
    problem = name_problem(name, what)
    if problem is not None:
        raise InputError(problem[0], fix=problem[1])
    return name
