"""How a config value is checked: each key's declared rule (:data:`RULES`), and where the value was given, named in
its message (``file:line`` and the key path of a YAML document, :class:`YamlLocator`; the flag of a command line,
:class:`FlagLocator`), so a value has one rule and one message wherever it is given.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InputError
from ..io.text import NOT_A_FILE, NOT_A_FILE_FIX, not_a_file
from ..io.yamldata import dotted
from ..model.settings import ROWS

if TYPE_CHECKING:
    from ..common.parameters import Rule
    from ..io.yamldata import KeyPath

__all__ = ["RULES", "YamlLocator", "FlagLocator", "Locator", "Checker", "dotted", "suggest"]


def _top() -> dict[str, Any]:
    from ..stats.paired_tests import COMPARISON_PARAMETERS as P

    return {**{name: row.rule for name, row in ROWS.items()}, "seed": P["seed"]}


def _crosscheck() -> dict[str, Any]:
    from ..common.parameters import Interval

    return {"crosscheck.atol": Interval("atol", float, 0, None, closed="left", fix="e.g. 1e-9.")}


def _comparison() -> dict[str, Any]:
    from ..stats.paired_tests import COMPARISON_PARAMETERS as P

    return {f"comparison.{name}": P[name] for name in ("test", "correction", "alpha", "confidence", "n_resamples")}






def _output() -> dict[str, Any]:
    from ..common.parameters import Interval, OneOf
    from ..reports.per_query import PER_QUERY_FORMATS
    from ..views.formats import report_formats

    return {"output.digits": Interval("digits", int, 0, 12, closed="both"),
            "output.plots.k": Interval("k", int, 1, None, closed="left"),
            "output.formats": OneOf("formats", tuple(report_formats())),
            "output.per_query": OneOf("per_query", tuple(PER_QUERY_FORMATS))}


def _spark() -> dict[str, Any]:
    from ..common.parameters import Interval

    return {"spark.buckets": Interval("buckets", int, 1, None, closed="left",
                                      fix="e.g. 4 x spark.sql.shuffle.partitions (the default).")}


def _tracking() -> dict[str, Any]:
    from ..tracking import trackers

    return {f"tracking.{name}.{key}": rule for name, tracker in trackers().items()
            for key, rule in tracker.options.items()}


#: config section ('' for the top-level keys) -> its keys' rules. The comparison's are
#: :data:`evalbridge.stats.paired_tests.COMPARISON_PARAMETERS` themselves, so the Python API, the command line and
#: configs refuse a value with one rule and one message; each section imports what declares its rules only when
#: one of its keys is checked (an ``evalbridge eval`` imports none of the modules of the agreement, the diff, the
#: diagnosis, the uncertainty or the power).
_SECTIONS: Mapping[str, Callable[[], dict[str, Any]]] = MappingProxyType({
    "": _top, "crosscheck": _crosscheck, "comparison": _comparison, "output": _output, "spark": _spark,
    "tracking": _tracking})


@functools.cache
def _declared(section: str) -> Mapping[str, Any]:
    """The rules of a section, gathered once (each is declared once and never changes)."""
    return MappingProxyType(_SECTIONS[section]())


#: the sections whose choices come from a registry read elsewhere (the output formats, which
#: ``views.formats.output_formats.cache_clear()`` reads again; the trackers): gathered afresh at each use
_LIVE = ("output", "tracking")


def _rules(section: str) -> Mapping[str, Any]:
    """The rules of a section (:data:`_LIVE` ones read afresh)."""
    return _SECTIONS[section]() if section in _LIVE else _declared(section)


class _LazyRules(Mapping[str, Any]):
    """Config key -> its rule, each section's gathered on first use (:data:`_SECTIONS`)."""

    def __getitem__(self, key: str) -> Any:
        head, dot, _ = key.partition(".")
        return _rules(head if dot else "")[key]

    def __iter__(self) -> Any:
        return (key for section in _SECTIONS for key in _rules(section))

    def __len__(self) -> int:
        return sum(len(_rules(section)) for section in _SECTIONS)


#: Config key -> the rule its values follow (each declared once; the CLI's flags map onto these keys).
RULES: Mapping[str, Any] = _LazyRules()


def suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.5)
    return f"did you mean {close[0]!r}? " if close else ""


class YamlLocator:
    """Where a key of a YAML document is: the file, the line, the key path (``comparison.alpha``)."""

    def __init__(self, source: str, lines: Mapping[KeyPath, int], document: int = 0) -> None:
        self.source, self.lines, self.document = source, lines, document

    def line(self, path: KeyPath) -> int | None:
        line, probe = None, path
        while line is None and probe:
            line, probe = self.lines.get(probe), probe[:-1]
        return line if line is not None else self.lines.get(())

    def label(self, path: KeyPath) -> str:
        prefix = f"document {self.document + 1}: " if self.document else ""
        return f"{prefix}{dotted(path)}"


class FlagLocator:
    """Where a setting of a command line is: its flag (``--alpha``), or the key path it fills."""

    source = None

    def __init__(self, flags: Mapping[KeyPath, str]) -> None:
        self.flags = flags

    def line(self, path: KeyPath) -> int | None:
        return None

    def label(self, path: KeyPath) -> str:
        probe = path
        while probe:
            if probe in self.flags:
                return self.flags[probe]
            probe = probe[:-1]
        return dotted(path)


class Locator(Protocol):
    """What :class:`YamlLocator` and :class:`FlagLocator` both tell about a key path."""

    @property
    def source(self) -> str | None: ...

    def line(self, path: KeyPath) -> int | None: ...

    def label(self, path: KeyPath) -> str: ...


class Checker:
    """Type and value checks that raise :class:`InputError` naming where the value was given: file:line and
    key path for a config, the flag for a command line."""

    def __init__(self, locator: Locator) -> None:
        self.locator = locator

    def fail(self, path: KeyPath, message: str, fix: str | None = None) -> InputError:
        return InputError(f"{self.locator.label(path)}: {message}", source=self.locator.source,
                          line=self.locator.line(path), fix=fix)

    def rule(self, value: Any, path: KeyPath, key: str) -> Any:
        """``value`` checked against the declared rule :data:`RULES` ``[key]`` (converted to its type)."""
        return self.checked(value, path, RULES[key])

    def checked(self, value: Any, path: KeyPath, rule: Rule) -> Any:
        """``value`` checked against ``rule`` (converted to its type), its place named as the locator names it."""
        return rule.check(value, source=self.locator.source, line=self.locator.line(path), key=self.locator.label(path))

    def mapping(self, value: Any, path: KeyPath, allowed: Sequence[str] | None, example: str) -> Mapping[str, Any]:
        """``value`` as a mapping whose keys are all in ``allowed`` (any key when None)."""
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping; got {type(value).__name__} {value!r:.60}.",
                            fix=f"write e.g. {example}.")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    raise self.fail(path + (key,), f"unknown key {key!r}.",
                                    fix=f"{suggest(key, allowed)}Allowed keys: {', '.join(allowed)}.")
        return value

    def choice(self, value: Any, path: KeyPath, allowed: Sequence[str]) -> str:
        if value not in allowed:
            raise self.fail(path, f"must be one of {', '.join(map(repr, allowed))}; got {value!r}.",
                            fix=f"{suggest(str(value), allowed)}".strip() or None)
        chosen: str = value  # one of the allowed strings
        return chosen

    def choices(self, value: Any, path: KeyPath, allowed: Sequence[str]) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise self.fail(path, f"expected a list of {', '.join(allowed)}; got {value!r}.")
        return tuple(self.choice(item, path + (i,), allowed) for i, item in enumerate(items))

    def number(self, value: Any, path: KeyPath, *, low: float | None = None, high: float | None = None,
               integer: bool = False, strict_low: bool = False) -> float:
        from ..common.parameters import Interval

        closed = ("neither" if strict_low else "left") if high is None else ("right" if strict_low else "both")
        rule = Interval(dotted(path), int if integer else float, low, high, closed=closed)
        number: float = rule.check(value, source=self.locator.source, line=self.locator.line(path),
                                   key=self.locator.label(path))
        return number

    def boolean(self, value: Any, path: KeyPath) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"must be true or false; got {value!r}.")
        return value

    def string(self, value: Any, path: KeyPath) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"must be a non-empty string; got {value!r}.")
        return value

    def existing_file(self, value: Any, path: KeyPath, folder: Path, *, folders: bool = False) -> Path:
        """The file ``value`` names (relative to ``folder``); a folder too when ``folders``."""
        text = self.string(value, path)
        target = (folder / Path(text).expanduser()).resolve()
        fault = not_a_file(target)
        if fault is not None and not (folders and fault == "folder"):
            hint = (f"{NOT_A_FILE_FIX[fault]}; paths are relative to the config file's folder."
                    if self.locator.source else f"{NOT_A_FILE_FIX[fault]} (relative to the working directory).")
            parent = target.parent
            if fault == "missing" and parent.is_dir():
                names = sorted(p.name for p in parent.iterdir())
                close = difflib.get_close_matches(target.name, names, n=1, cutoff=0.6)
                if close:
                    hint = f"did you mean {str(Path(text).parent / close[0])!r}? " + hint
            elif "robust04" in text:
                hint = "run `make demo-data` first (it extracts the Robust04 files into .cache/robust04). " + hint
            raise self.fail(path, f"{text}: {NOT_A_FILE[fault]} (looked for {target}).", fix=hint)
        from ..reports.writing import note_read

        note_read(target)  # no output of the command may replace it
        return target
