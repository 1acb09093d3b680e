"""LaTeX escaping, shared by every table evalbridge writes as LaTeX (reports, comparisons)."""

from __future__ import annotations

__all__ = ["latex_escape"]

_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                  # control characters (a line break would end a row, the others are invalid in TeX): a space
                  **{chr(c): " " for c in (*range(0x20), *range(0x7F, 0xA0))}}


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped.

    >>> latex_escape("P_5 & 50%")
    'P\\_5 \\& 50\\%'
    >>> latex_escape("bm25\n\nrm3")
    'bm25  rm3'
    """
    return "".join(_LATEX_ESCAPES.get(c, c) for c in str(text))
