"""LaTeX escaping, shared by every table evalbridge writes as LaTeX (reports, comparisons)."""

from __future__ import annotations

__all__ = ["latex_escape"]

_LATEX_ESCAPES = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    r"""``text`` with LaTeX's special characters escaped.

    >>> latex_escape("P_5 & 50%")
    'P\\_5 \\& 50\\%'
    """
    return "".join(_LATEX_ESCAPES.get(c, c) for c in str(text))
