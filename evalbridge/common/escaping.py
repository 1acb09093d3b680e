"""Names and messages made safe for where they are shown, one function per destination: LaTeX, Markdown, a CSV
cell a spreadsheet opens, a line of a message (a terminal, a CI log). Every format and every door escapes
through these.

A name may hold any printable text (:mod:`evalbridge.names`); what each destination would read as markup is
escaped here: LaTeX's specials, Markdown's table pipes and raw HTML (``<img onerror=...>`` is text, not an
image), a CSV cell that a spreadsheet would run as a formula, and a control character in a message (a line
break there would start a new log line: a GitHub workflow command such as ``::error::`` could be injected).
"""

from __future__ import annotations

import re

from .names import CONTROL as _CONTROL

__all__ = ["latex_escape", "markdown_text", "csv_cell", "message_text"]

_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                  # control characters (a line break would end a row, the others are invalid in TeX): a space
                  **{chr(c): " " for c in (*range(0x20), *range(0x7F, 0xA0))}}

#: Markdown: a backslash and a pipe would end a table cell; <, > and & would open raw HTML or an entity
_MARKDOWN_ESCAPES = {"\\": "\\\\", "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;"}

#: the first characters that make a spreadsheet (Excel, LibreOffice, Google Sheets) read a cell as a formula
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _visible(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped.

    >>> latex_escape("P_5 & 50%")
    'P\\_5 \\& 50\\%'
    >>> latex_escape("bm25\n\nrm3")
    'bm25  rm3'
    """
    return "".join(_LATEX_ESCAPES.get(c, c) for c in str(text))


def markdown_text(text: object) -> str:
    r"""A name as Markdown inline text (a table cell, a heading): backslashes and pipes escaped, ``<``, ``>`` and
    ``&`` as HTML entities (GitHub shows them as the characters; raw HTML in a name stays text), line breaks as
    spaces, other control characters as visible escapes (``\x01`` would otherwise turn a table row into a
    separating line), so a name never ends a cell, a row or a heading, nor opens a tag.

    >>> print(markdown_text("bm25|rm3 \\ v2\nfinal\x01"))
    bm25\|rm3 \\ v2 final\x01
    >>> print(markdown_text("<img src=x onerror=alert(1)> & co"))
    &lt;img src=x onerror=alert(1)&gt; &amp; co
    """
    escaped = "".join(_MARKDOWN_ESCAPES.get(c, c) for c in re.sub(r"[\r\n]+", " ", str(text)))
    return _CONTROL.sub(_visible, escaped)


def csv_cell(text: str) -> str:
    """A text cell of a CSV file that a spreadsheet opens as text: one starting with ``=``, ``+``, ``-``, ``@``, a
    tab or a carriage return (a formula: ``=HYPERLINK(...)``, ``@SUM(...)``) gets a leading ``'``, as OWASP
    advises; a plain number (``-0.5``, ``+3``) is left as it is.

    >>> csv_cell("=HYPERLINK(\\"http://x\\")"), csv_cell("-0.5"), csv_cell("-1+cmd|' /C calc'!A0"), csv_cell("bm25")
    ('\\'=HYPERLINK("http://x")', '-0.5', "'-1+cmd|' /C calc'!A0", 'bm25')
    """
    if text.startswith(_FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def message_text(text: str) -> str:
    r"""A message as one line of a terminal or a CI log: every control character (a line break, an escape
    sequence) as its visible escape, so nothing in a name, a key or a path starts a line of its own.

    >>> print(message_text("unknown key 'a\n::error::x'"))
    unknown key 'a\n::error::x'
    """
    return _CONTROL.sub(_visible, str(text))
