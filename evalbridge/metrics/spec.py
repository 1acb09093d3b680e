"""Metric specs: one grammar for every ecosystem's spelling, and an immutable ``Metric`` value.

Grammar (case-insensitive; no ``eval``, no ``ast``)::

    spec    := name [ "(" option ("," option)* ")" ] [ "@" k ] [ "-l" level ]
    option  := key "=" value            (value may be quoted)
    value   := word | number | "{" [ number ":" number ("," number ":" number)* ] "}"

``name`` is a canonical name or any alias in :data:`evalbridge.metrics.catalogue.ALIASES`
(ranx ``ndcg_burges``, ir-measures ``nDCG``, trec_eval ``ndcg_cut_10``, RAG ``hit_rate``...).
The ranx level suffix ``-l2`` is the same as ``rel=2``. Every ``Metric`` has one
canonical string: ``str(parse_metric(s))`` is a fixed point.

Example:
    >>> str(parse_metric("ndcg_burges@10"))
    'nDCG(gain=exp)@10'
    >>> parse_metric("map@100-l2") == parse_metric("AP(rel=2)@100")
    True
    >>> str(parse_metric("nDCG(gains={2: 3, 0: 0, 1: 1})@10"))
    'nDCG(gains={0:0,1:1,2:3})@10'
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Iterable, Protocol, TypeVar

from .catalogue import (ALIASES, MAPPINGS, METRICS, NUMERIC, OPTION_ALIASES, TREC_MEASURES, TREC_NAMES, TREC_UNSUPPORTED,
                        MetricInfo)
from ..errors import InputError, MetricSpecError, UnsupportedMetricError

__all__ = ["Metric", "GainMap", "parse_metric", "parse_metrics", "by_metric"]

_SPEC = re.compile(
    r"(?P<name>[A-Za-z][A-Za-z0-9_\-]*?)\s*"
    r"(?:\((?P<opts>[^()]*)\))?\s*"
    r"(?:@\s*(?P<k>[^\s()@]+?))?\s*"
    r"(?:-l\s*(?P<level>[^\s()@]+))?",
    re.IGNORECASE,  # the grammar is case-insensitive, the ranx level suffix too ("MAP@100-L2")
)
_TREC = re.compile(r"(?P<base>[a-z_]+?)_(?P<k>\d+)")
#: trec_eval's nDCG with a gain map, as ``-m ndcg.1=3,2=9`` and as printed (``ndcg_1=3,2=9``)
_TREC_GAINS = re.compile(r"ndcg[._](?P<pairs>-?[\d.]+=-?[\d.]+(?:,-?[\d.]+=-?[\d.]+)*)")
_TREC_UNSUPPORTED = tuple((re.compile(pattern), reason) for pattern, reason in TREC_UNSUPPORTED)


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _suggest(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or an empty string."""
    candidates = list(candidates)
    low = word.lower()
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(low, list(lowered), n=1, cutoff=0.5)
    close = close or [c for c in lowered if c and (low.startswith(c) or c.startswith(low))][:1]
    return f" (did you mean {lowered[close[0]]!r}?)" if close else ""


class GainMap(Mapping[float, float]):
    """An immutable, hashable ``{grade: gain}`` map (the ``gains`` option), printed ``{0:0,1:1,2:3}``.

    Keys and values are finite numbers (whole floats become ints, as everywhere in a spec).

    >>> gains = GainMap({2: 3.0, 0: 0, 1: 1})
    >>> str(gains), gains[2], gains.get(5)
    ('{0:0,1:1,2:3}', 3, None)
    >>> GainMap.parse("{0: -1, 1: 2.5}") == GainMap({0: -1, 1: 2.5})
    True
    """

    __slots__ = ("_items", "_lookup")
    _items: tuple[tuple[float, float], ...]
    _lookup: dict[float, float]

    def __init__(self, items: Mapping[Any, Any]) -> None:
        clean = {}
        for key, value in dict(items).items():
            grade, gain = _finite(key, "a grade"), _finite(value, "a gain")
            clean[grade] = gain
        object.__setattr__(self, "_items", tuple(sorted(clean.items())))
        object.__setattr__(self, "_lookup", dict(self._items))

    @classmethod
    def parse(cls, text: str) -> GainMap:
        """``{grade: gain, ...}`` as written in a spec."""
        body = text.strip()
        if not (body.startswith("{") and body.endswith("}")):
            raise MetricSpecError(f"a gain map is written {{grade: gain, ...}}, e.g. {{0:0,1:1,2:3}}; got {text!r}.")
        pairs = {}
        for part in filter(None, (p.strip() for p in body[1:-1].split(","))):
            grade, sep, gain = part.partition(":")
            if not sep:
                raise MetricSpecError(f"entry {part!r} of the gain map {text!r} must be grade:gain, e.g. 2:3.")
            key = _finite(grade.strip().strip("'\""), "a grade")
            if key in pairs:
                raise MetricSpecError(f"grade {grade.strip()} is given twice in the gain map {text!r}.")
            pairs[key] = _finite(gain.strip(), "a gain")
        return cls(pairs)

    def __getitem__(self, grade: float) -> float:
        return self._lookup[grade]

    def __iter__(self) -> Iterator[float]:
        return iter(self._lookup)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GainMap) and self._items == other._items

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("GainMap is immutable")

    def __reduce__(self) -> tuple[type[GainMap], tuple[dict[float, float]]]:
        """Pickled as its pairs and rebuilt through ``__init__`` (the default would set attributes)."""
        return (GainMap, (dict(self._items),))

    def __str__(self) -> str:
        return "{" + ",".join(f"{_format_number(k)}:{_format_number(v)}" for k, v in self._items) + "}"

    def __repr__(self) -> str:
        return f"GainMap({self})"


def _finite(value: Any, what: str) -> int | float:
    """A finite number, whole floats as ints (``"2"`` -> 2, ``2.0`` -> 2, ``2.5`` -> 2.5)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        number = float(value)
    except (TypeError, ValueError):
        raise MetricSpecError(f"{what} in a gain map must be a number; got {value!r}.") from None
    if not math.isfinite(number):
        raise MetricSpecError(f"{what} in a gain map must be finite; got {value!r}.")
    return int(number) if number.is_integer() else number


def _coerce_option(info: MetricInfo, key: str, value: Any) -> Any:
    metric = info.name
    if key in MAPPINGS:
        if value is None or isinstance(value, GainMap):
            gains = value
        elif isinstance(value, str):
            gains = GainMap.parse(value)
        elif isinstance(value, Mapping):
            gains = GainMap(value)
        else:
            raise MetricSpecError(f"option {key!r} of {metric} must be a map {{grade: gain}}, e.g. {{0:0,1:1,2:3}}; "
                                  f"got {value!r}.")
        return gains if gains else None  # an empty map changes nothing: the default
    if key in NUMERIC:
        if value is None:
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise MetricSpecError(f"option {key!r} of {metric} must be a number; got {value!r}.") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise MetricSpecError(f"option {key!r} of {metric} must be finite; got {value!r}.")
        if key == "max_grade" and number <= 0:
            raise MetricSpecError(f"option 'max_grade' of {metric} must be > 0; got {value!r}.")
        if key == "p" and not 0 < number < 1:
            raise MetricSpecError(f"option 'p' (persistence) of {metric} must be between 0 and 1 (exclusive); "
                                  f"got {value!r}. Fix: write e.g. {metric}(p=0.8).")
        return int(number) if number.is_integer() else number
    allowed = info.allowed(key) or ()
    for choice in allowed:
        if str(value).lower() == choice.lower():
            return choice
    raise MetricSpecError(f"option {key!r} of {metric} must be one of {', '.join(allowed)}; got {value!r}"
                          f"{_suggest(str(value), allowed)}.")


@dataclass(frozen=True)
class Metric:
    """An immutable, hashable metric: family name, cutoff and non-default options.

    Construct it directly (``Metric("nDCG", 10, {"gain": "exp"})``) or with
    :func:`parse_metric`. Options equal to their default are dropped, so two
    metrics that mean the same thing compare equal and print the same.
    """

    name: str
    k: int | None = None
    options: Any = ()

    def __post_init__(self) -> None:
        info = METRICS.get(self.name)
        if info is None:
            raise MetricSpecError(f"unknown metric {self.name!r}{_suggest(self.name, METRICS)}.")
        k = self.k
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, int):
                raise MetricSpecError(f"the cutoff k of {self.name} must be a positive integer; got {k!r}.")
            if k < 1:
                raise MetricSpecError(f"the cutoff k of {self.name} must be a positive integer; got {k}. "
                                      f"Fix: write e.g. {self.name}@10.")
        if info.cutoff == "required" and k is None:
            raise MetricSpecError(f"{self.name} needs a cutoff; write e.g. {self.name}@10.")
        if info.cutoff == "none" and k is not None:
            raise MetricSpecError(f"{self.name} takes no cutoff; got @{k}. Fix: write {self.name}.")
        given = dict(self.options)
        clean: dict[str, Any] = {}
        for key, value in given.items():
            if key not in info.options:
                takers = sorted(m for m, i in METRICS.items() if key in i.options)
                hint = f" ({key!r} applies to {', '.join(takers)})" if takers else _suggest(key, info.options)
                raise MetricSpecError(f"{self.name} has no option {key!r}{hint}; " + (
                    f"its options are {', '.join(info.options)}." if info.options else "it takes no option."))
            value = _coerce_option(info, key, value)
            if value != info.options[key]:
                clean[key] = value
        if "max_grade" in clean and "weights" in info.options and clean.get("weights", "binary") != "graded":
            raise MetricSpecError(f"option 'max_grade' of {self.name} only applies with weights=graded.")
        if self.name == "ERR" and "gains" in clean and not all(0 <= g <= 1 for g in clean["gains"].values()):
            raise MetricSpecError(f"the gains of ERR are stopping probabilities and must lie in [0, 1]; got "
                                  f"{clean['gains']}. Fix: e.g. ERR(gains={{0:0,1:0.25,2:0.75}}).")
        object.__setattr__(self, "options", tuple(sorted(clean.items())))

    def get(self, key: str) -> Any:
        """The value of an option, its default when not set."""
        return dict(self.options).get(key, METRICS[self.name].options[key])

    @property
    def settings(self) -> dict[str, Any]:
        """Every option with its value (defaults included)."""
        return {**METRICS[self.name].options, **dict(self.options)}

    @property
    def arguments(self) -> dict[str, Any]:
        """The keyword arguments of the metric's kernel: every option, a binary level resolved to 1
        when unset, and ``k`` for a metric with a cutoff.

        >>> parse_metric("P@5").arguments
        {'rel': 1, 'k': 5}
        """
        kwargs = self.settings
        if self.info.binary and kwargs["rel"] is None:
            kwargs["rel"] = 1
        if self.info.cutoff != "none":
            kwargs["k"] = self.k
        return kwargs

    @property
    def info(self) -> MetricInfo:
        return METRICS[self.name]

    @property
    def bounds(self) -> tuple[float, float]:
        """The values the metric takes, ``(low, high)`` (its family's :attr:`MetricInfo.bounds`), or
        ``(-inf, inf)`` under an option that unbounds the family (``RBP(weights=raw)``, a gain map)."""
        import math

        for condition in self.info.unbounded_with:
            key, sep, value = condition.partition("=")
            current = self.get(key)
            if (str(current) == value) if sep else current is not None:
                return -math.inf, math.inf
        return self.info.bounds

    @property
    def inputs(self) -> tuple[str, ...]:
        """The per-document inputs its kernel reads (see :attr:`MetricInfo.inputs <evalbridge.metrics.catalogue.MetricInfo>`).

        >>> parse_metric("nDCG@10").inputs, parse_metric("nDCG(gains={0:1})@10").inputs, parse_metric("Bpref").inputs
        ((), ('in_qrels',), ('in_qrels',))
        """
        extra = [name for option, names in self.info.inputs_with.items() if dict(self.options).get(option) is not None
                 for name in names]
        return tuple(dict.fromkeys([*self.info.inputs, *extra]))

    @classmethod
    def parse(cls, spec: str | Metric) -> Metric:
        """The metric a spec names, in any spelling (:func:`parse_metric`): ``Metric.parse("ndcg@10")``."""
        return parse_metric(spec)

    def replace(self, *, k: Any = ..., **options: Any) -> Metric:
        """A copy with a new cutoff and/or options (``None`` resets an option to its default)."""
        merged = dict(self.options)
        for key, value in options.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return Metric(self.name, self.k if k is ... else k, merged)

    def __str__(self) -> str:
        text = self.name
        if self.options:
            text += "(" + ",".join(f"{key}={_format_number(v) if key in NUMERIC else v}"
                                   for key, v in self.options) + ")"
        if self.k is not None:
            text += f"@{self.k}"
        return text

    def __repr__(self) -> str:
        return f"Metric({str(self)!r})"


def _resolve_name(name: str) -> tuple[str, dict[str, Any], int | None]:
    if name in TREC_MEASURES:  # trec_eval's spelling, exactly: trec_eval's measure
        canonical, preset = TREC_MEASURES[name]
        return canonical, dict(preset), None
    low = name.lower()
    if low in ALIASES:
        canonical, preset = ALIASES[low]
        return canonical, dict(preset), None
    for canonical in METRICS:
        if low == canonical.lower():
            return canonical, {}, None
    trec = _TREC.fullmatch(low)
    if trec and trec["base"] in TREC_NAMES:
        canonical, preset = ALIASES[TREC_NAMES[trec["base"]]]
        return canonical, dict(preset), int(trec["k"])
    known = sorted({*METRICS, *ALIASES})
    raise MetricSpecError(f"unknown metric {name!r}{_suggest(name, known)}. "
                          f"Known names: {', '.join(METRICS)} and their aliases (see `evalbridge metrics`).")


def _split_options(text: str) -> list[str]:
    """``text`` split on the commas outside braces (a gain map holds commas of its own)."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _parse_options(text: str, spec: str) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in _split_options(text))):
        key, sep, value = part.partition("=")
        if not sep:
            raise MetricSpecError(f"option {part!r} in {spec!r} must be written key=value, e.g. gain=exp.")
        key, value = key.strip().lower(), value.strip().strip("'\"")
        if key in OPTION_ALIASES:
            key, values = OPTION_ALIASES[key]
            value = values.get(value.lower(), value)
        if key in options:
            raise MetricSpecError(f"option {key!r} is given twice in {spec!r}.")
        options[key] = value
    return options


def parse_metric(spec: str | Metric) -> Metric:
    """Parse a metric string (any known spelling) into a :class:`Metric`.

    A trec_eval measure name means the measure trec_eval prints under it (``rbp`` is
    ``RBP(p=0.9,rel=1,weights=graded)``, ``ndcg_1=3,2=9`` is ``nDCG(gains={1:3,2:9})``); one evalbridge
    does not compute (``gm_map``, ``iprec_at_recall_0.10``...) is refused, with the reason.

    Raises:
        MetricSpecError: unknown name or option, bad value or cutoff; the message
            names the closest valid spelling.
        UnsupportedMetricError: a trec_eval measure evalbridge does not compute
            (:data:`evalbridge.metrics.catalogue.TREC_UNSUPPORTED`).
    """
    if isinstance(spec, Metric):
        return spec
    if not isinstance(spec, str):
        raise MetricSpecError(f"a metric must be a string like 'nDCG@10'; got {type(spec).__name__} {spec!r}.")
    text = spec.strip()
    for pattern, reason in _TREC_UNSUPPORTED:
        if pattern.fullmatch(text):
            raise UnsupportedMetricError(f"{text!r}: {reason}.")
    gains = _TREC_GAINS.fullmatch(text)
    if gains:
        return Metric("nDCG", None, {"gains": "{" + gains["pairs"].replace("=", ":") + "}"})
    match = _SPEC.fullmatch(text)
    if match is None:
        raise MetricSpecError(f"cannot parse metric {spec!r}; expected Name(key=value,...)@k, e.g. "
                              f"'nDCG(gain=exp)@10', 'P(rel=2)@5', 'map@100-l2'.")
    name, options, k = _resolve_name(match["name"])
    for key, value in _parse_options(match["opts"] or "", spec).items():
        if key in options and str(options[key]).lower() != str(value).lower():
            fix = (f" Fix: {match['name']!r} is trec_eval's measure, {Metric(name, None, options)}; write "
                   f"{name}(...) for other options." if match["name"] in TREC_MEASURES else "")
            raise MetricSpecError(f"{match['name']!r} already means {key}={options[key]}; "
                                  f"{key}={value} contradicts it in {spec!r}.{fix}")
        options[key] = value
    if match["k"] is not None:
        if k is not None:
            raise MetricSpecError(f"{spec!r} gives the cutoff twice.")
        try:
            k = int(match["k"])
        except ValueError:
            raise MetricSpecError(f"the cutoff in {spec!r} must be a positive integer; got {match['k']!r}.") from None
    if match["level"] is not None:
        if "rel" in options:
            raise MetricSpecError(f"{spec!r} sets the relevance level twice (rel= and -l).")
        options["rel"] = match["level"]
    return Metric(name, k, options)


def parse_metrics(specs: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    """Parse one spec or many; duplicates (same canonical metric) are kept once, in order."""
    if isinstance(specs, (str, Metric)):
        specs = [specs]
    if not isinstance(specs, Iterable) or isinstance(specs, (bytes, bytearray)):
        raise MetricSpecError(f"metrics must be a metric like 'nDCG@10' or a list of them; got "
                              f"{type(specs).__name__} {specs!r:.60}.")
    seen: dict[Metric, None] = {}
    for spec in specs:
        seen.setdefault(parse_metric(spec), None)
    if not seen:
        raise MetricSpecError("no metric was asked for; pass e.g. ['nDCG@10', 'P@5'].")
    return list(seen)


class _OfOneMetric(Protocol):
    @property
    def metric(self) -> str: ...


_Found = TypeVar("_Found", bound=_OfOneMetric)


def by_metric(found: Sequence[_Found], metric: str, what: tuple[str, str]) -> _Found:
    """The one of ``found`` (each an analysis of one metric, labelled by its canonical spelling) of ``metric``, in
    any spelling (``ndcg@10`` is ``nDCG@10``); refused naming ``what`` (the noun and its participle: ``("diagnosis",
    "diagnosed")``) and the metrics there are."""
    labels = [f.metric for f in found]
    wanted = metric if metric in labels else str(parse_metric(metric))
    for f in found:
        if f.metric == wanted:
            return f
    raise InputError(f"no {what[0]} of {metric!r}; the metrics {what[1]} are {', '.join(labels)}.")
