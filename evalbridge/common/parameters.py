"""Declared constraints on parameters: one rule per parameter, checked the same way everywhere.

A rule knows its parameter's name, what it accepts, its default, and the fix to suggest; the
Python API, the command line and the config file all call :meth:`Interval.check` /
:meth:`OneOf.check` (through a table such as
:data:`evalbridge.stats.paired_tests.COMPARISON_PARAMETERS`), so a value is refused with the same
message wherever it comes from. Only the standard library is imported.

Example:
    >>> rule = Interval("alpha", float, 0, 1, closed="neither", default=0.05, fix="use e.g. 0.05.")
    >>> rule.check(0.01)
    0.01
    >>> rule.describe()
    'a number in (0, 1)'
    >>> rule.check(1.5, source="eval.yaml", line=7, key="comparison.alpha")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: eval.yaml:7: comparison.alpha must be a number in (0, 1); got 1.5. Fix: use e.g. 0.05.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypedDict, TypeVar, Union

from ..errors import InputError

__all__ = ["Interval", "OneOf", "Text", "Boolean", "Rule", "rule_table", "check_parameters", "check_choice", "Row",
           "declared", "rows_of", "value_of"]

#: closed= value -> (low end included, high end included)
_CLOSED: Mapping[str, tuple[bool, bool]] = {
    "both": (True, True), "left": (True, False), "right": (False, True), "neither": (False, False),
}
#: accepted Python type -> (numbers ABC it must be an instance of, words for the message)
_KINDS: Mapping[type, tuple[type[numbers.Real], str]] = {int: (numbers.Integral, "an integer"),
                                                         float: (numbers.Real, "a number")}


class _Where(TypedDict):
    """Where a value was read, for the message (``_fail``'s keywords)."""

    source: str | None
    line: int | None
    key: str | None


def _fail(rule_name: str, wanted: str, value: Any, fix: str, *, source: str | None, line: int | None,
          key: str | None) -> InputError:
    return InputError(f"{key or rule_name} must be {wanted}; got {value!r}.", source=source, line=line, fix=fix)


@dataclass(frozen=True)
class Interval:
    """A number (``int`` or ``float``) between two bounds; ``None`` is an open-ended side.

    ``bool`` is refused even though Python counts it as an int, and so are nan and
    infinities; an ``int`` parameter refuses floats (``1e4`` -> write ``10000``).
    """

    name: str
    kind: type
    low: float | None
    high: float | None
    closed: str = "both"
    default: Any = None
    fix: str = ""

    def describe(self) -> str:
        """The accepted values in words, e.g. ``an integer in [1, 1000000]``."""
        left, right = _CLOSED[self.closed]
        low = "-inf" if self.low is None else f"{self.low:g}" if self.kind is float else f"{self.low}"
        high = "inf" if self.high is None else f"{self.high:g}" if self.kind is float else f"{self.high}"
        if self.high is None and self.low is None:
            return f"a finite {'number' if self.kind is float else 'integer'}"
        if self.high is None and self.low is not None:
            return f"{_KINDS[self.kind][1]} {'>=' if left else '>'} {low}"
        return f"{_KINDS[self.kind][1]} in {'[' if left else '('}{low}, {high}{']' if right else ')'}"

    def check(self, value: Any, *, source: str | None = None, line: int | None = None,
              key: str | None = None) -> Any:
        """``value`` converted to the rule's type, or :class:`InputError` naming the parameter.

        ``source`` / ``line`` say where the value was read (a config file), ``key`` how the
        user spelled the parameter there (``comparison.alpha``, ``--alpha``).
        """
        abc, _ = _KINDS[self.kind]
        where: _Where = {"source": source, "line": line, "key": key}
        if isinstance(value, bool) or not isinstance(value, abc):
            raise _fail(self.name, self.describe(), value, self.fix, **where)
        if self.kind is float and not math.isfinite(float(value)):
            raise _fail(self.name, self.describe(), value, self.fix, **where)
        left, right = _CLOSED[self.closed]
        number = self.kind(value)
        too_low = self.low is not None and (number < self.low if left else number <= self.low)
        too_high = self.high is not None and (number > self.high if right else number >= self.high)
        if too_low or too_high:
            raise _fail(self.name, self.describe(), value, self.fix, **where)
        return number


@dataclass(frozen=True)
class OneOf:
    """One of a fixed set of strings (matched exactly)."""

    name: str
    choices: tuple[str, ...]
    default: Any = None
    fix: str = ""

    def describe(self) -> str:
        return "one of " + ", ".join(map(repr, self.choices))

    def check(self, value: Any, *, source: str | None = None, line: int | None = None,
              key: str | None = None) -> Any:
        """``value`` itself when it is one of the choices, else :class:`InputError`."""
        if not isinstance(value, str) or value not in self.choices:
            raise _fail(self.name, self.describe(), value, self.fix or f"choose {self.describe()}.",
                        source=source, line=line, key=key)
        return value


@dataclass(frozen=True)
class Text:
    """A non-empty string on one line (a URI, a name): no control characters; an ``os.PathLike`` is taken as its path.

    >>> Text("uri").check("sqlite:///mlflow.db")
    'sqlite:///mlflow.db'
    >>> Text("uri", fix="e.g. sqlite:///mlflow.db.").check("", key="--mlflow")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: --mlflow must be a non-empty text on one line; got ''. Fix: e.g. sqlite:///mlflow.db.
    """

    name: str
    default: Any = None
    fix: str = ""

    def describe(self) -> str:
        return "a non-empty text on one line"

    def check(self, value: Any, *, source: str | None = None, line: int | None = None,
              key: str | None = None) -> Any:
        """``value`` as a string, or :class:`InputError` naming the parameter."""
        import os

        text = os.fspath(value) if isinstance(value, os.PathLike) else value
        if not isinstance(text, str) or not text.strip() or any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise _fail(self.name, self.describe(), value, self.fix or "give it as text.", source=source,
                        line=line, key=key)
        return text


@dataclass(frozen=True)
class Boolean:
    """``True`` or ``False`` (nothing else: not 1, not ``"yes"``).

    >>> Boolean("judged_only").check("yes")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: judged_only must be True or False; got 'yes'.
    """

    name: str
    default: Any = False
    fix: str = ""

    def describe(self) -> str:
        return "True or False"

    def check(self, value: Any, *, source: str | None = None, line: int | None = None,
              key: str | None = None) -> Any:
        """``value`` itself when it is a ``bool``, else :class:`InputError`."""
        if not isinstance(value, bool):
            raise InputError(f"{key or self.name} must be {self.describe()}; got {value!r}.", source=source,
                             line=line, fix=self.fix or None)
        return value


Rule = Union[Interval, OneOf, Text, Boolean]


def rule_table(*rules: Rule) -> Mapping[str, Rule]:
    """``{rule.name: rule}``, in the order given (each name once)."""
    table = {rule.name: rule for rule in rules}
    if len(table) != len(rules):
        raise ValueError("two rules share a name")  # a programming error, not user input
    return table


def check_parameters(table: Mapping[str, Rule], values: Mapping[str, Any]) -> dict[str, Any]:
    """Every value checked by its rule (converted, e.g. ``numpy.int64`` -> ``int``); unknown names refused.

    >>> table = rule_table(Interval("seed", int, 0, None, closed="left", default=0))
    >>> check_parameters(table, {"seed": 3})
    {'seed': 3}
    """
    unknown = [name for name in values if name not in table]
    if unknown:
        raise InputError(f"unknown parameter {unknown[0]!r}; expected one of {', '.join(table)}.")
    return {name: table[name].check(value) for name, value in values.items()}


def check_choice(value: object, allowed: Iterable[str], what: str) -> None:
    """Refuse a value that is not one of the names of a table (a test, a level, a format), naming them."""
    names = list(allowed)
    if value not in names:
        raise InputError(f"unknown {what} {value!r}; choose one of {', '.join(map(repr, names))}.")


@dataclass(frozen=True)
class Row:
    """One field of a frozen value of options (:class:`~evalbridge.Settings`, :class:`~evalbridge.Statistics`) as
    every door shows it: the flags of the command line and the keys of a config are generated from these rows.

    Attributes:
        name: the Python keyword and the config key (``min_relevance``); the flag is ``--min-relevance``.
        rule: what a value may be (checked when the value is built, and by the config validator).
        help: what it does, in the command line's help and the config reference.
        optional: ``None`` is a value (no level given, no depth: the default decides).
        metavar: the placeholder of its value in the command line's help (``LEVEL``).
        reads: a read policy, applied where inputs are read (``ids``, ``duplicates``).
        registry: the names are those of a registry a door checks (``backend``).
    """

    name: str
    rule: Rule
    help: str
    optional: bool = False
    metavar: str | None = None
    reads: bool = False
    registry: bool = False

    @property
    def flag(self) -> str:
        """The command-line flag (``--min-relevance``)."""
        return "--" + self.name.replace("_", "-")


def declared(default: Any, rule: Rule, help: str, **row: Any) -> Any:  # noqa: A002 - argparse's word
    """A dataclass field and its :class:`Row` (kept in the field's metadata)."""
    return dataclasses.field(default=default, metadata={"row": Row(rule.name, rule, help, **row)})


def rows_of(cls: type) -> Mapping[str, Row]:
    """Field name -> its :class:`Row`, in the order of the dataclass ``cls``'s fields."""
    return MappingProxyType({f.name: f.metadata["row"] for f in dataclasses.fields(cls)})


_Value = TypeVar("_Value")


def value_of(cls: type[_Value], base: _Value | None, keywords: Mapping[str, Any] | None, *, what: str,
             argument: str, example: str) -> _Value:
    """``base`` (default: every default of ``cls``) with ``keywords`` over it; a keyword that is no field of ``cls``
    is refused with the closest name, as a misspelt keyword would be.

    Args:
        what: a field in messages (``setting``).
        argument: the keyword the value is given as (``settings``).
        example: a value of ``cls`` as written in Python, for the fix (``ties='docid_desc', ...``).
    """
    if base is not None and not isinstance(base, cls):
        raise InputError(f"{argument} must be an evalbridge.{cls.__name__}; got {type(base).__name__} {base!r:.60}.",
                         fix=f"pass {argument}=evalbridge.{cls.__name__}({example}), or the {what}s as keywords.")
    given = dict(keywords or {})
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    unknown = [name for name in given if name not in names]
    if unknown:
        close = difflib.get_close_matches(unknown[0], names, n=1, cutoff=0.5)
        raise InputError(f"unknown {what} {unknown[0]!r}; expected one of {', '.join(names)}.",
                         fix=f"did you mean {close[0]!r}?" if close else f"see help(evalbridge.{cls.__name__}).")
    start = base if base is not None else cls()
    return dataclasses.replace(start, **given) if given else start  # type: ignore[type-var]
