"""Numbers: the one rule by which every format reads a grade, a score or a rank.

A number written as text (TREC, CSV / TSV, a text column of a Parquet file or a DataFrame) is a plain
ASCII decimal: an optional sign, digits with an optional point, an optional exponent (``2``, ``-0.5``,
``.5``, ``1e-3``). Python's ``float()`` and Arrow's parsers each accept more, and differently: spaces
around the digits (``" 2"``), ``_`` between them (``1_000``), digits of other scripts (``٢``), ``nan``
and ``inf``, ``Infinity``. Each is refused, with the reason and the fix (:func:`parse` for one token,
:func:`parse_column` for an Arrow column at once: the same pattern, :data:`DECIMAL`).

A number given as a value (JSON, a DataFrame's numeric column, a Python mapping) is an ``int`` or a
``float``, never a ``bool`` (``True`` is not a grade), finite, and within float64's range: an int such
as ``10**400`` is refused, not turned into ``inf`` or an ``OverflowError`` (:func:`check_value`).

Example:
    >>> parse("1e-3", label="the score"), parse("7", label="the grade")
    (0.001, 7)
    >>> parse("1_000", label="the score")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: the score '1_000' is not a number: it has '_' in it. Fix: write it without '_' (1000, not 1_000).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

from ..errors import InputError

__all__ = ["DECIMAL", "INTEGER", "parse", "parse_column", "check_value", "reason", "number_error"]

#: A number as text: sign, digits with an optional point, optional exponent; ASCII only (RE2 and ``re`` alike).
DECIMAL = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
#: An integer token (read as ``int``, never rounded through a float).
INTEGER = r"^[+-]?[0-9]+$"
_DECIMAL = re.compile(DECIMAL, re.ASCII)
_INTEGER = re.compile(INTEGER, re.ASCII)
_NOT_FINITE = frozenset({"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})
#: What a float64 holds: a larger number is refused rather than read as ``inf``.
_LARGEST = 2 ** 1024


def _non_ascii_digit(token: str) -> bool:
    return any(c.isdigit() and not c.isascii() for c in token)


#: (the test, why the token is refused, the fix), the first that holds is said.
_REASONS: tuple[tuple[Callable[[str], bool], str, str], ...] = (
    (lambda t: "\x00" in t, "is not a number: it holds a NUL byte",
     "remove the NUL bytes (a file saved as UTF-16, or binary data, holds them)."),
    (lambda t: t.strip().lower() in ("true", "false"), "is not a number: it is a boolean", "give 1 or 0 instead of true / false."),
    (lambda t: t.strip().lower() in _NOT_FINITE, "is not a finite number", "remove the row or give it a finite value."),
    (lambda t: any(c.isspace() for c in t), "is not a number: it has spaces in it", "remove the spaces around and inside the number."),
    (lambda t: "_" in t, "is not a number: it has '_' in it", "write it without '_' (1000, not 1_000)."),
    (_non_ascii_digit, "is not a number: it has digits other than 0-9", "write it with the ASCII digits 0-9."),
    (lambda t: t == "", "is not a number: it is empty", "give every row a value."),
    (lambda t: True, "is not a number: it is not a decimal number", "write a plain decimal number such as 2, 0.5 or 1e-3."),
)
_OVERFLOW = ("is too large: beyond the largest number a float holds (about 1.8e308)",
             "scale the values down, or give them as ranks (rank=...).")


def reason(token: str) -> tuple[str, str]:
    """(what is wrong with ``token``, the fix) for a token :data:`DECIMAL` does not match."""
    return next((why, fix) for test, why, fix in _REASONS if test(token))


def number_error(label: str, shown: str, why: str, fix: str, *, at: str = "", source: str | None = None,
                 line: int | None = None, query_id: str | None = None) -> InputError:
    """The one message of a value that is not a number: ``<label> <shown> [in <at>] <what is wrong>.``"""
    shown = shown if len(shown) <= 60 else f"{shown[:50]}...{shown[-6:]}"
    return InputError(f"{label} {shown}{' in ' + at if at else ''} {why}.", source=source, line=line,
                      query_id=query_id, fix=fix)


def parse(token: str, *, label: str, at: str = "", source: str | None = None, line: int | None = None,
          query_id: str | None = None) -> int | float:
    """The number ``token`` writes: ``int`` for an integer token, else ``float``; never truncated.

    Raises:
        InputError: ``token`` is not a plain decimal number, or is beyond float64's range.
    """
    where: dict[str, Any] = dict(at=at, source=source, line=line, query_id=query_id)
    if _DECIMAL.fullmatch(token) is None:
        raise number_error(label, repr(token), *reason(token), **where)
    if _INTEGER.fullmatch(token) is not None:
        value: int | float = int(token)
        if abs(value) < _LARGEST:
            return value
    else:
        value = float(token)
        if math.isfinite(value):
            return value
    raise number_error(label, repr(token), *_OVERFLOW, **where)


def check_value(value: object, *, label: str, at: str = "", source: str | None = None, line: int | None = None,
                query_id: str | None = None) -> int | float:
    """``value`` (already a number: JSON, a Python mapping) as an ``int`` or a ``float``, checked.

    Raises:
        InputError: a bool, a text, anything that is not a real number, NaN / inf, an int beyond float64.
    """
    where: dict[str, Any] = dict(at=at, source=source, line=line, query_id=query_id)
    if isinstance(value, bool):
        raise number_error(label, repr(value), "is not a number: it is a boolean", "give 1 or 0 instead of true / false.", **where)
    if isinstance(value, Integral):
        if abs(int(value)) < _LARGEST:
            return int(value)
        raise number_error(label, f"{str(int(value))[:12]}... ({len(str(abs(int(value))))} digits)", *_OVERFLOW, **where)
    if isinstance(value, Real):
        number = float(value)
        if math.isfinite(number):
            return number
        raise number_error(label, repr(value), "is not a finite number", "remove the row or give it a finite value.", **where)
    if isinstance(value, str):
        if _DECIMAL.fullmatch(value) is None and any(c.isdigit() for c in value):  # 1_000, 1:30 (YAML leaves them)
            raise number_error(label, repr(value), *reason(value), **where)
        raise number_error(label, repr(value), "is not a number: it is a text",
                           "write numbers without quotes (2, not \"2\").", **where)
    raise number_error(label, f"{type(value).__name__} {value!r:.40}", "is not a number",
                       "give grades, scores and ranks as int or float.", **where)


def parse_column(column: Any, *, label: str, where: Callable[[int], dict[str, Any]]) -> tuple[Any, bool]:
    """(a numeric Arrow column, whether it holds integers) of a column of number tokens, by :data:`DECIMAL`.

    Integer columns become int64 (beyond int64: float64), the others float64; a token that is not a number,
    or a number beyond float64, raises the :func:`parse` error for its row, ``where(row)`` giving its place
    (``at``, ``source``, ``line``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def refuse_overflow(values: Any) -> None:
        finite = pc.is_finite(values)
        if not pc.all(finite).as_py():
            row = pc.index(finite, False).as_py()
            raise number_error(label, repr(column[row].as_py()), *_OVERFLOW, **where(row))

    matched = pc.match_substring_regex(column, DECIMAL)
    if not pc.all(matched).as_py():
        row = pc.index(matched, False).as_py()
        if row:  # the first refused row is the one said, whichever the rule
            refuse_overflow(pc.cast(column.slice(0, row), pa.float64()))
        token = column[row].as_py()
        raise number_error(label, repr(token), *reason(token), **where(row))
    if pc.all(pc.match_substring_regex(column, INTEGER)).as_py():
        try:
            return pc.cast(pc.utf8_ltrim(column, characters="+"), pa.int64()), True  # Arrow reads no '+' as int
        except pa.ArrowInvalid:
            pass  # beyond int64: float64 below
    values = pc.cast(column, pa.float64())
    refuse_overflow(values)
    return values, False
