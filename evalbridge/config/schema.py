"""The config schema: settings as frozen dataclasses, every constraint declared once, one validator.

A config file (YAML) and a command line (``evalbridge eval`` / ``check``) describe the same thing, a
:class:`Config`; both are checked by :func:`validate`, so a value has one rule and one message wherever
it is given. Only the way a setting is *named* in messages differs: ``file:line`` and the key path for a
YAML document (:class:`YamlLocator`), the flag for a command line (:class:`FlagLocator`).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from ..backends import CROSSCHECK_BACKENDS
from ..errors import EvalbridgeError, InputError
from ..io.registry import BESIDE_QRELS
from ..io.text import NOT_A_FILE, NOT_A_FILE_FIX, not_a_file
from ..settings import ROWS, Row, Settings
from ..stats.parameters import Boolean, Interval, OneOf, Text
from ..wording import option
from ..metrics.requests import FIX as LABEL_FIX, MetricRequest, add_request, find_request, request
from ..metrics.spec import Metric, parse_metric
from .sources import Source, check_source

if TYPE_CHECKING:
    from ..io.yamldata import KeyPath

__all__ = ["Config", "CrossCheckSettings", "ComparisonSettings", "DiffSettings", "SliceSettings", "AgreementSettings", "PlotSettings", "OutputSettings",
           "SparkSettings", "TOP_KEYS", "AGREEMENT_KEYS", "ENGINES", "RULES", "YamlLocator", "FlagLocator", "validate",
           "with_tracking"]

#: top-level key -> what it sets (docs/config.md has the full reference)
TOP_KEYS: Mapping[str, str] = MappingProxyType({
    "title": "heading of the reports",
    "qrels": "the relevance judgements (a path, or {path|data, format, ...})",
    "runs": "system name -> run (a path, or {path|data, format, ...})",
    "metrics": "metric specs, any spelling; an entry {metric: P@5, label: precision@5} names its outputs",
    # every setting of evalbridge.Settings is a key (a read policy, ids / duplicates, may be set by a source too)
    **{name: row.help for name, row in ROWS.items()},
    "crosscheck": "{backends, atol, canonicalise}: compare every value with other libraries",
    "comparison": "{baseline, test, correction, alpha, confidence, n_resamples}: paired significance tests",
    "diff": "true or {k, queries, moves}: every system against the baseline query by query (the documents that "
            "entered or left the top k)",
    "gates": "metric -> '>= 0.8' / '>= baseline - 0.01' (or a list); 'system: metric' targets one system; "
             "'>= baseline - 0.01 at 95%' gates the interval of the difference (pass, fail or inconclusive)",
    "on_inconclusive": "fail (default) or pass: what a gate with a level does to the run when the eval set cannot "
                       "decide it",
    "bands": "true (the RAG quality bands), false, or {metric or family: [fair, good, excellent]}",
    "output": "{dir, formats, per_query, system_json, plots, digits}",
    "seed": "seed of every random step (randomization test, bootstrap)",
    "agreement": "{judges, runs, metrics, bins, alpha_level, test, alpha, n_resamples}: two sets of judgements "
                 "compared, and the system rankings they induce",
    "engine": "where the numbers are computed: local (this process) or spark (a Spark session, evalbridge.spark)",
    "spark": "{master, buckets}: the session started when none is active (default local[*]), query buckets",
    "tracking": "{mlflow: {uri, experiment, run_name}}: log params, means and artifacts to an experiment tracker",
    "slices": "a field of the RAG logs (slices: category), or {by: COLUMN, file: QUERY TABLE}: per-slice means, "
              "intervals and differences against the baseline",
})

#: ``engine:`` -> where an evaluation runs (``--engine`` on the command line).
ENGINES: Mapping[str, str] = MappingProxyType({
    "local": "this process reads the inputs and computes every metric (the backend decides how)",
    "spark": "every input becomes a Spark DataFrame, evaluated by evalbridge.spark.evaluate on a Spark session",
})

#: ``agreement:`` key -> what it sets (docs/config.md has the full reference)
AGREEMENT_KEYS: Mapping[str, str] = MappingProxyType({
    "judges": "name -> qrels (a path, or {path|data, format, ...}): exactly two; the first is the reference",
    "runs": "the systems ranked under both: names of the config's runs, or name -> run (default: none)",
    "metrics": "the metrics the systems are ranked by (default: the config's metrics, else nDCG@10, P@10, AP)",
    "bins": "thresholds grouping grades into categories: a list (both judges) or judge -> list",
    "alpha_level": "level of measurement of Krippendorff's alpha: ordinal, interval or nominal",
    "test": "paired test deciding the significant differences: t or randomization",
    "alpha": "significance level of the Holm-adjusted p-values",
    "n_resamples": "resamples of the randomization test",
})


def _rules() -> Mapping[str, Any]:
    """Config key -> its rule: the comparison's are :data:`evalbridge.stats.paired_tests.COMPARISON_PARAMETERS`
    themselves, so the Python API, the command line and configs refuse a value with one rule and one message."""
    from ..reports.formats import report_formats
    from ..reports.report import PER_QUERY_FORMATS
    from ..stats.kappa import ALPHA_LEVELS
    from ..stats.ranking_agreement import TESTS as AGREEMENT_TESTS
    from ..stats.paired_tests import COMPARISON_PARAMETERS as P
    from ..diffing import DIFF_PARAMETERS
    from ..stats.parameters import Interval, OneOf
    from ..tracking import trackers

    return MappingProxyType({
        **{name: row.rule for name, row in ROWS.items()},
        "seed": P["seed"],
        "crosscheck.atol": Interval("atol", float, 0, None, closed="left", fix="e.g. 1e-9."),
        "comparison.test": P["test"], "comparison.correction": P["correction"], "comparison.alpha": P["alpha"],
        "comparison.confidence": P["confidence"], "comparison.n_resamples": P["n_resamples"],
        **{f"diff.{name}": rule for name, rule in DIFF_PARAMETERS.items()},
        "output.digits": Interval("digits", int, 0, 12, closed="both"),
        "output.plots.k": Interval("k", int, 1, None, closed="left"),
        "output.formats": OneOf("formats", tuple(report_formats())),
        "output.per_query": OneOf("per_query", tuple(PER_QUERY_FORMATS)),
        "agreement.alpha_level": OneOf("alpha_level", tuple(ALPHA_LEVELS), default="ordinal"),
        "agreement.test": OneOf("test", tuple(AGREEMENT_TESTS), default="t"),
        "agreement.alpha": P["alpha"], "agreement.n_resamples": P["n_resamples"],
        "spark.buckets": Interval("buckets", int, 1, None, closed="left",
                                  fix="e.g. 4 x spark.sql.shuffle.partitions (the default)."),
        **{f"tracking.{name}.{key}": rule for name, tracker in trackers().items()
           for key, rule in tracker.options.items()},
    })


class _LazyRules(Mapping[str, Any]):
    """:func:`_rules`, built on first use (the comparison module imports scipy lazily, but not for free)."""

    def __getitem__(self, key: str) -> Any:
        return _rules()[key]

    def __iter__(self) -> Any:
        return iter(_rules())

    def __len__(self) -> int:
        return len(_rules())


#: Config key -> the rule its values follow (each declared once; the CLI's flags map onto these keys).
RULES: Mapping[str, Any] = _LazyRules()


@dataclass(frozen=True)
class CrossCheckSettings:
    """``crosscheck:``: the libraries every value is compared with (see :func:`evalbridge.crosscheck`)."""

    backends: tuple[str, ...] = CROSSCHECK_BACKENDS
    atol: float = 1e-9
    canonicalise: bool = False


@dataclass(frozen=True)
class ComparisonSettings:
    """``comparison:``: paired tests of every system against ``baseline`` (see :mod:`evalbridge.stats.compare`)."""

    baseline: str
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 10_000


@dataclass(frozen=True)
class DiffSettings:
    """``diff:``: every other system against the baseline (the comparison's, else the first run), query by query
    (see :func:`evalbridge.diff`)."""

    k: int = 10
    queries: int = 10
    moves: int = 3


@dataclass(frozen=True)
class SliceSettings:
    """``slices:``: the queries grouped by a field of the RAG logs (``by``), or by the column ``by`` of the query
    table ``file`` (see :mod:`evalbridge.stats.slices`)."""

    by: str
    file: Path | None = None

    @property
    def source(self) -> Any:
        """What :func:`evalbridge.stats.slices.slice_labels` takes: the field, or (file, column)."""
        return self.by if self.file is None else (str(self.file), self.by)


@dataclass(frozen=True)
class AgreementSettings:
    """``agreement:``: two sets of judgements compared, and the system rankings they induce (see
    :func:`evalbridge.agree`). The conventions (backend, ``min_relevance``, ties, ``seed``...) are the config's."""

    judges: Mapping[str, Source]
    metrics: tuple[Metric, ...]
    runs: Mapping[str, Source] = field(default_factory=lambda: MappingProxyType({}))
    bins: Mapping[str, tuple[float, ...]] = field(default_factory=lambda: MappingProxyType({}))
    alpha_level: str = "ordinal"
    test: str = "t"
    alpha: float = 0.05
    n_resamples: int = 10_000

    @property
    def names(self) -> tuple[str, str]:
        """The two judges' names, the reference first."""
        first, second = self.judges
        return first, second


@dataclass(frozen=True)
class PlotSettings:
    """``output.plots:``: which figures, in which formats."""

    formats: tuple[str, ...] = ("png",)
    distribution: bool = True
    differences: bool = True
    curves: tuple[str, ...] = ()
    k: tuple[int, ...] = (1, 3, 5, 10, 20, 50, 100)


@dataclass(frozen=True)
class SparkSettings:
    """``spark:`` (with ``engine: spark``): the session evalbridge starts when none is active, and the buckets.

    Attributes:
        master: the master of that session (``local[*]``: every core of this machine).
        buckets: queries are hashed into this many buckets (None: :func:`evalbridge.spark.evaluate`'s default).
    """

    master: str = "local[*]"
    buckets: int | None = None


@dataclass(frozen=True)
class OutputSettings:
    """``output:``: where the reports go and in which formats."""

    dir: Path | None
    formats: tuple[str, ...] = ("markdown", "json", "csv")
    per_query: tuple[str, ...] = ("csv",)
    system_json: bool = True
    plots: PlotSettings | None = None
    digits: int = 4


@dataclass(frozen=True)
class Config:
    """One validated evaluation (one YAML document). Every field is documented in ``docs/config.md``."""

    path: Path | None
    title: str
    runs: Mapping[str, Source]
    metrics: tuple[MetricRequest, ...]
    output: OutputSettings
    qrels: Source | None = None
    settings: Settings = Settings()
    crosscheck: CrossCheckSettings | None = None
    comparison: ComparisonSettings | None = None
    diff: DiffSettings | None = None
    gates: tuple[Any, ...] = ()
    on_inconclusive: str = "fail"
    bands: Mapping[str, tuple[float, float, float]] | None = None
    seed: int = 0
    agreement: AgreementSettings | None = None
    engine: str = "local"
    spark: SparkSettings | None = None
    tracking: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    slices: SliceSettings | None = None
    document: int = 0
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def where(self) -> str:
        """``path`` or ``path (document n)`` for messages."""
        if self.path is None:
            return "command line"
        return f"{self.path} (document {self.document + 1})" if self.document else str(self.path)


# ---------------------------------------------------------------- validation helpers

def _dotted(path: KeyPath) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _suggest(word: str, choices: Sequence[str]) -> str:
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
        return f"{prefix}{_dotted(path)}"


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
        return _dotted(path)


class Locator(Protocol):
    """What :class:`YamlLocator` and :class:`FlagLocator` both tell about a key path."""

    @property
    def source(self) -> str | None: ...

    def line(self, path: KeyPath) -> int | None: ...

    def label(self, path: KeyPath) -> str: ...


class _Checker:
    """Type and value checks that raise :class:`InputError` naming where the value was given: file:line and
    key path for a config, the flag for a command line."""

    def __init__(self, locator: Locator) -> None:
        self.locator = locator

    def fail(self, path: KeyPath, message: str, fix: str | None = None) -> InputError:
        return InputError(f"{self.locator.label(path)}: {message}", source=self.locator.source,
                          line=self.locator.line(path), fix=fix)

    def rule(self, value: Any, path: KeyPath, key: str) -> Any:
        """``value`` checked against the declared rule :data:`RULES` ``[key]`` (converted to its type)."""
        return RULES[key].check(value, source=self.locator.source, line=self.locator.line(path),
                                key=self.locator.label(path))

    def mapping(self, value: Any, path: KeyPath, allowed: Sequence[str] | None, example: str) -> Mapping[str, Any]:
        """``value`` as a mapping whose keys are all in ``allowed`` (any key when None)."""
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping; got {type(value).__name__} {value!r:.60}.",
                            fix=f"write e.g. {example}.")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    raise self.fail(path + (key,), f"unknown key {key!r}.",
                                    fix=f"{_suggest(key, allowed)}Allowed keys: {', '.join(allowed)}.")
        return value

    def choice(self, value: Any, path: KeyPath, allowed: Sequence[str]) -> str:
        if value not in allowed:
            raise self.fail(path, f"must be one of {', '.join(map(repr, allowed))}; got {value!r}.",
                            fix=f"{_suggest(str(value), allowed)}".strip() or None)
        chosen: str = value  # one of the allowed strings
        return chosen

    def choices(self, value: Any, path: KeyPath, allowed: Sequence[str]) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise self.fail(path, f"expected a list of {', '.join(allowed)}; got {value!r}.")
        return tuple(self.choice(item, path + (i,), allowed) for i, item in enumerate(items))

    def number(self, value: Any, path: KeyPath, *, low: float | None = None, high: float | None = None,
               integer: bool = False, strict_low: bool = False) -> float:
        from ..stats.parameters import Interval

        closed = ("neither" if strict_low else "left") if high is None else ("right" if strict_low else "both")
        rule = Interval(_dotted(path), int if integer else float, low, high, closed=closed)
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
        return target


# ---------------------------------------------------------------- sections

def _settings(check: _Checker, spec: Mapping[str, Any]) -> Settings:
    """The settings (:class:`~evalbridge.settings.Settings`, one top-level key each, :data:`~evalbridge.settings.ROWS`),
    each value checked by its row's rule and named by its key and line; a key left out keeps its default."""
    values = {name: _SETTING_CHECKS[type(row.rule)](check, row, spec[name]) for name, row in ROWS.items()
              if name in spec and not (row.optional and spec[name] is None)}
    return Settings(**values)


def _one_of(check: _Checker, row: Row, value: Any) -> Any:
    return check.choice(value, (row.name,), row.rule.choices)  # type: ignore[union-attr]  # (a OneOf row)


def _registered(check: _Checker, row: Row, value: Any) -> Any:
    """A name of a registry (``backend``: :data:`evalbridge.backends.BACKENDS`), or the rule's own check."""
    from ..backends import BACKENDS

    return check.choice(value, (row.name,), list(BACKENDS)) if row.registry else _ruled(check, row, value)


def _ruled(check: _Checker, row: Row, value: Any) -> Any:
    path = (row.name,)
    return row.rule.check(value, source=check.locator.source, line=check.locator.line(path),
                          key=check.locator.label(path))


#: How a setting's value is checked in a config, by the kind of its rule (a choice is told the closest one).
_SETTING_CHECKS: Mapping[type, Callable[[_Checker, Row, Any], Any]] = MappingProxyType({
    OneOf: _one_of, Text: _registered, Interval: _ruled,
    Boolean: lambda check, row, value: check.boolean(value, (row.name,)),
})


def _policies(settings: Settings) -> dict[str, str]:
    """The read policies set at the top level (``ids:``, ``duplicates:``): every source takes them unless it sets
    its own."""
    return {name: value for name, value in settings.read_options().items()}


def _source(check: _Checker, value: Any, path: KeyPath, folder: Path, kind: str, engine: str,
            policies: Mapping[str, str] | None = None) -> Source:
    """A config source, checked against the format registry (see :mod:`.sources`): a file (a folder of
    Parquet files too with ``engine: spark``), inline ``data``, or a ``table`` of Spark's catalog.
    ``policies``: the top-level read policies (``ids``, ``duplicates`` for runs), unless the source sets its own."""
    from ..io import get_format
    from ..io.registry import prefixed

    key = _dotted(path)
    if isinstance(value, str):
        value = {"path": value}
    spec = check.mapping(value, path, None, "{path: run.txt, format: trec}")
    if sum(k in spec for k in _ORIGINS) != 1:
        raise check.fail(path, "give exactly one of 'path', 'data' and 'table'.",
                         fix="point to a file with path:, write the data inline with data: and a format, or name "
                             "a table of the Spark session's catalog with table: (engine: spark).")
    given, table = spec.get("path"), spec.get("table")
    options = {k: v for k, v in spec.items() if k not in (*_ORIGINS, "format")}
    for policy, choice in (policies or {}).items():
        if policy != "duplicates" or kind == "run":
            options.setdefault(policy, choice)
    spark = engine == "spark"
    named = given if prefixed(given) is not None else None  # irds:<dataset id>: a name, not a file
    file = check.existing_file(given, path + ("path",), folder, folders=spark) \
        if given is not None and named is None else None
    if table is not None:
        check.string(table, path + ("table",))
        if spec.get("format", "spark-table") != "spark-table":
            raise check.fail(path + ("format",), f"table: names a table of the Spark session's catalog, read as "
                                                 f"format 'spark-table'; got format {spec['format']!r}.",
                             fix="remove format:, or give the file with path: instead of table:.")
    fmt_name = "spark-table" if table is not None else spec.get("format")
    if file is not None and file.is_dir() and fmt_name is None:  # a folder: by its suffix (bm25.parquet/)
        from ..io import suffix_of

        suffix = suffix_of(file)
        fmt_name = next((n for n, f in _formats().items() if f.spark is not None and suffix in f.suffixes), None)
        if fmt_name is None:
            raise check.fail(path + ("path",), f"{given!r} is a folder, and its name does not say its format.",
                             fix="add format: parquet if it holds Parquet files, or give a file.")
    try:
        told = named if named is not None else file if file is None or file.is_file() else None
        fmt = check_source(fmt_name, kind, path=told,
                           has_data="data" in spec, options=options)
    except InputError as error:
        bad = next((k for k in ("format", *options) if k in spec and repr(k) in str(error)), None)
        raise check.fail(path + ((bad,) if bad else ("format",) if "format" in spec else ()), str(error)) from None
    where = path + (("format",) if "format" in spec else ("table",) if table is not None else ())
    if fmt == "spark-table" and table is None:
        raise check.fail(where, "format 'spark-table' reads a table of the Spark session's catalog, named by table:.",
                         fix="write e.g. {table: lake.eval.qrels} (engine: spark).")
    if fmt == "spark-table" and not spark:
        raise check.fail(where, "a spark-table is read and evaluated by Spark, and this evaluation runs locally.",
                         fix=f"add {option('engine', 'spark')}, or export the table to a file (e.g. Parquet) and "
                             f"give its path.")
    if file is not None and file.is_dir() and get_format(fmt).spark is None:
        readable = ", ".join(n for n, f in _formats().items() if f.spark is not None and n != "spark-table")
        raise check.fail(path + ("path",), f"{given!r} is a folder; Spark reads folders of {readable} files, and "
                                           f"the format here is {fmt!r}.",
                         fix=f"add format: {readable.split(', ')[0]} if the folder holds such files, or give a file.")
    return Source(key=key, format=fmt, path=file, data=spec.get("data"), table=table, named=named,
                  options=MappingProxyType(options), written=str(given) if given is not None else None,
                  line=check.locator.line(path))


def _formats() -> Mapping[str, Any]:
    from ..io import formats

    return formats()


#: the keys that say where a source's rows are (exactly one is given)
_ORIGINS = ("path", "data", "table")


def _metrics(check: _Checker, value: Any, path: tuple[Any, ...] = ("metrics",)) -> tuple[MetricRequest, ...]:
    """``metrics:``: a list of specs, each a string or ``{metric: spec, label: name}``, or a mapping
    ``{label: spec}``; named by :func:`evalbridge.metrics.requests.add_request` (one rule for every door)."""
    if isinstance(value, str):
        value = [value]
    entries: list[tuple[tuple[Any, ...], Any, str | None, tuple[Any, ...]]]
    if isinstance(value, Mapping) and value:  # {label: spec}
        entries = [(path + (label,), spec, label, path + (label,)) for label, spec in value.items()]
    elif isinstance(value, list) and value:
        entries = []
        for i, spec in enumerate(value):
            at, label = path + (i,), None
            if isinstance(spec, Mapping):
                check.mapping(spec, at, ("metric", "label"), "{metric: P@5, label: precision@5}")
                if "metric" not in spec:
                    raise check.fail(at, "an entry with a label needs its metric.",
                                     fix="write e.g. {metric: P@5, label: precision@5}.")
                label = check.string(spec["label"], at + ("label",)) if "label" in spec else None
                entries.append((at + ("metric",), spec["metric"], label, at + ("label",)))
            else:
                entries.append((at, spec, label, at))
    else:
        raise check.fail(path, f"expected a non-empty list of metric strings; got {value!r}.",
                         fix="write e.g. metrics: [nDCG@10, P@5, mrr], or [{metric: P@5, label: precision@5}].")
    out: list[MetricRequest] = []
    for where, spec, label, label_path in entries:
        try:
            item = request(str(spec) if isinstance(spec, (int, float)) else spec, label=label)
        except EvalbridgeError as error:
            raise check.fail(where, str(error), fix="run `evalbridge metrics` for every name and option.")
        reason = add_request(out, item)
        if reason is not None:
            raise check.fail(label_path, f"{reason}.", fix=LABEL_FIX)
    return tuple(out)


def _supported(check: _Checker, metrics: Sequence[Metric], backend: str, path: tuple[Any, ...]) -> None:
    """Refuse a metric the backend cannot compute, naming where it was asked."""
    from ..backends import get_backend, unsupported

    module = get_backend(backend)
    for i, metric in enumerate(metrics):
        reason = unsupported(module, metric)
        if reason is not None:
            raise check.fail(path + (i,), f"backend {backend!r} cannot compute {metric}: {reason}",
                             fix=f"use {option('backend', 'auto')} or reference, or run `evalbridge metrics` for who "
                                 f"supports what.")


def _name(check: _Checker, name: Any, path: KeyPath, what: str) -> str:
    """A system, judge or report name as text, checked by the one rule of :mod:`evalbridge.names`."""
    from ..names import name_problem

    text = str(name)
    problem = name_problem(text, what)
    if problem is not None:
        raise check.fail(path, problem[0], fix=problem[1])
    return text


def _agreement(check: _Checker, value: Any, folder: Path, runs: Mapping[str, Source],
               metrics: tuple[Metric, ...], policies: Mapping[str, str] | None = None) -> AgreementSettings | None:
    """``agreement:``: two judges (qrels sources), the runs ranked under both, the agreement's own options."""
    from ..stats.agreement import DEFAULT_METRICS, check_thresholds

    if value is None:
        return None
    path = ("agreement",)
    spec = check.mapping(value, path, list(AGREEMENT_KEYS),
                         "{judges: {human: qrels/human.txt, llm: qrels/llm.txt}, runs: [bm25, dense]}")
    if "judges" not in spec:
        raise check.fail(path, "the agreement section has no 'judges' key.",
                         fix="name the two sets of judgements: judges: {human: qrels/human.txt, llm: qrels/llm.txt}.")
    judges_spec = check.mapping(spec["judges"], path + ("judges",), None,
                                "{human: qrels/human.txt, llm: qrels/llm.txt}")
    if len(judges_spec) != 2:
        raise check.fail(path + ("judges",), f"expected exactly two sets of judgements; got {len(judges_spec)}"
                                             f"{' (' + ', '.join(map(str, judges_spec)) + ')' if judges_spec else ''}.",
                         fix="name both: judges: {human: qrels/human.txt, llm: qrels/llm.txt} (the first is the "
                             "reference).")
    judges = {_name(check, name, path + ("judges", name), "judge"):
              _source(check, source, path + ("judges", name), folder, "qrels", "local", policies)
              for name, source in judges_spec.items()}
    given = spec.get("runs")
    chosen: dict[str, Source] = {}
    if isinstance(given, list):
        for i, name in enumerate(given):
            if name not in runs:
                raise check.fail(path + ("runs", i), f"unknown run {name!r}: a name in a list refers to the "
                                                     f"config's runs ({', '.join(runs) or 'none'}).",
                                 fix=f"{_suggest(str(name), list(runs))}Or give the runs themselves: "
                                     f"runs: {{bm25: runs/bm25.txt}}.")
            chosen[str(name)] = runs[name]
    elif given is not None:
        for name, source in check.mapping(given, path + ("runs",), None, "{bm25: runs/bm25.txt}").items():
            chosen[_name(check, name, path + ("runs", name), "system")] = _source(
                check, source, path + ("runs", name), folder, "run", "local", policies)
    for name, source in chosen.items():
        if source.carries_qrels:
            raise check.fail(path + ("runs", name), f"format {source.format!r} holds its own judgements; the "
                                                    f"agreement ranks each run under both judges.",
                             fix="give this run in a run format (trec, json, ranked, ...).")
    if len(chosen) == 1:
        raise check.fail(path + ("runs",), f"ranking systems needs at least two runs; got one ({next(iter(chosen))}).",
                         fix="add another run, or leave runs out for the judge agreement alone.")
    asked = (tuple(r.metric for r in _metrics(check, spec["metrics"], path + ("metrics",))) if "metrics" in spec
             else metrics or tuple(parse_metric(m) for m in DEFAULT_METRICS))
    bins: dict[str, tuple[float, ...]] = {}
    given_bins = spec.get("bins")
    if given_bins is not None:
        per_judge = (given_bins if isinstance(given_bins, Mapping) else dict.fromkeys(judges, given_bins))
        for name, edges in per_judge.items():
            where = path + ("bins",) + ((name,) if isinstance(given_bins, Mapping) else ())
            if str(name) not in judges:
                raise check.fail(where, f"unknown judge {name!r}; the judges are {', '.join(judges)}.",
                                 fix=f"{_suggest(str(name), list(judges))}Key bins by a judge's name, or give one "
                                     f"list for both.")
            try:
                checked = check_thresholds(edges, "bins")
            except InputError as error:
                raise check.fail(where, str(error)) from None
            if checked is None:
                raise check.fail(where, "expected a list of thresholds; got null.", fix="write e.g. [2.5, 5, 7.5].")
            bins[str(name)] = checked
    return AgreementSettings(
        judges=MappingProxyType(judges), runs=MappingProxyType(chosen), metrics=asked, bins=MappingProxyType(bins),
        alpha_level=check.rule(spec.get("alpha_level", "ordinal"), path + ("alpha_level",), "agreement.alpha_level"),
        test=check.rule(spec.get("test", "t"), path + ("test",), "agreement.test"),
        alpha=check.rule(spec.get("alpha", 0.05), path + ("alpha",), "agreement.alpha"),
        n_resamples=check.rule(spec.get("n_resamples", 10_000), path + ("n_resamples",), "agreement.n_resamples"))


def _crosscheck(check: _Checker, value: Any) -> CrossCheckSettings | None:
    from ..backends import BACKENDS

    if value is None or value is False:
        return None
    if value is True:
        value = {}
    spec = check.mapping(value, ("crosscheck",), ("backends", "atol", "canonicalise"),
                         "{backends: [pytrec_eval, ranx, ir_measures], atol: 1.0e-9}")
    backends = CrossCheckSettings.backends
    if "backends" in spec:
        others = [b for b in BACKENDS if b != "reference"]
        backends = check.choices(spec["backends"], ("crosscheck", "backends"), others)
    atol = check.rule(spec.get("atol", 1e-9), ("crosscheck", "atol"), "crosscheck.atol")
    canonicalise = check.boolean(spec.get("canonicalise", False), ("crosscheck", "canonicalise"))
    return CrossCheckSettings(tuple(backends), float(atol), canonicalise)


def _comparison(check: _Checker, value: Any, runs: Mapping[str, Source]) -> ComparisonSettings | None:
    from ..stats.paired_tests import CORRECTIONS, TESTS

    if value is None:
        return None
    keys = ("baseline", "test", "correction", "alpha", "confidence", "n_resamples")
    spec = check.mapping(value, ("comparison",), keys, "{baseline: bm25, test: t, correction: holm, alpha: 0.05}")
    if not runs:
        raise check.fail(("comparison",), "a comparison needs at least two runs; the config has none.",
                         fix="add runs:, or remove the comparison section.")
    baseline = spec.get("baseline", next(iter(runs)))
    check.choice(baseline, ("comparison", "baseline"), list(runs))
    if len(runs) < 2:
        raise check.fail(("comparison",), "a comparison needs at least two runs.",
                         fix="add another run, or " + ("remove the comparison section." if check.locator.source
                                                       else f"leave out {check.locator.label(('comparison', 'baseline'))}."))
    return ComparisonSettings(
        baseline=baseline,
        test=check.rule(spec.get("test", "t"), ("comparison", "test"), "comparison.test"),
        correction=check.rule(spec.get("correction", "holm"), ("comparison", "correction"), "comparison.correction"),
        alpha=check.rule(spec.get("alpha", 0.05), ("comparison", "alpha"), "comparison.alpha"),
        confidence=check.rule(spec.get("confidence", 0.95), ("comparison", "confidence"), "comparison.confidence"),
        n_resamples=check.rule(spec.get("n_resamples", 10_000), ("comparison", "n_resamples"),
                               "comparison.n_resamples"))


def _diff(check: _Checker, value: Any, runs: Mapping[str, Source]) -> DiffSettings | None:
    if value is None or value is False:
        return None
    if value is True:
        value = {}
    spec = check.mapping(value, ("diff",), ("k", "queries", "moves"), "{k: 10, queries: 10, moves: 3}")
    if len(runs) < 2:
        raise check.fail(("diff",), "a diff compares a system with the baseline, and needs at least two runs.",
                         fix="add another run, or remove the diff section.")
    return DiffSettings(**{key: check.rule(spec.get(key, getattr(DiffSettings, key)), ("diff", key), f"diff.{key}")
                           for key in ("k", "queries", "moves")})


def _gates(check: _Checker, value: Any, metrics: Sequence[MetricRequest], runs: Mapping[str, Source],
           comparison: ComparisonSettings | None) -> tuple[Any, ...]:
    from ..stats.gates import parse_gates

    if value is None:
        return ()
    spec = check.mapping(value, ("gates",), None, "{recall@5: '>= 0.80', ndcg@10: '>= baseline - 0.01'}")
    out = []
    for key, expressions in spec.items():
        try:
            gates = parse_gates({key: expressions}, labels=[r.label for r in metrics])
        except EvalbridgeError as error:
            raise check.fail(("gates", key), str(error))
        for gate in gates:
            if find_request(metrics, gate.metric) is None:
                raise check.fail(("gates", key), f"{gate.metric} is not one of the metrics "
                                                 f"({', '.join(r.label for r in metrics)}).",
                                 fix=f"add {gate.metric} to metrics, or gate a metric that is evaluated (by its "
                                     f"label or any spelling).")
            if gate.system is not None and gate.system not in runs:
                raise check.fail(("gates", key), f"system {gate.system!r} is not one of the runs.",
                                 fix=f"{_suggest(gate.system, list(runs))}Runs: {', '.join(runs)}.")
            if gate.relative and comparison is None:
                raise check.fail(("gates", key), f"{gate.text!r} is relative to the baseline, but there is none.",
                                 fix="add comparison: {baseline: <run name>}.")
        out += gates
    return tuple(out)


def _bands(check: _Checker, value: Any, labels: Sequence[str] = ()) -> Mapping[str, tuple[float, float, float]] | None:
    from ..metrics.catalogue import METRICS
    from ..reports.report import QUALITY_BANDS

    if value is None or value is False:
        return None
    if value is True:
        return QUALITY_BANDS
    spec = check.mapping(value, ("bands",), None, "{nDCG: [0.5, 0.7, 0.85], recall@5: [0.6, 0.75, 0.85]}")
    out: dict[str, tuple[float, float, float]] = {}
    for key, bounds in spec.items():
        path = ("bands", key)
        if key in METRICS or key in labels:  # a family, or the label of a metric asked
            name = key
        else:
            try:
                name = str(parse_metric(key))
            except EvalbridgeError as error:
                raise check.fail(path, f"{error} (a band key is a metric family such as nDCG, a metric, or the label of a metric asked).")
        if not (isinstance(bounds, list) and len(bounds) == 3):
            raise check.fail(path, f"expected three increasing lower bounds [fair, good, excellent]; got {bounds!r}.")
        fair, good, excellent = (check.number(b, path + (i,)) for i, b in enumerate(bounds))
        values = (fair, good, excellent)
        if not values[0] <= values[1] <= values[2]:
            raise check.fail(path, f"the bounds must increase; got {list(values)}.")
        out[name] = values
    return MappingProxyType(out)


def _plots(check: _Checker, value: Any) -> PlotSettings | None:
    from ..reports.plots import FORMATS, curve_variant

    if value is None or value is False:
        return None
    if value is True:
        return PlotSettings()
    path = ("output", "plots")
    spec = check.mapping(value, path, ("formats", "distribution", "differences", "curves", "k"),
                         "{formats: [png], curves: [nDCG, P, R], k: [1, 5, 10, 20]}")
    curves = spec.get("curves", [])
    curves = [curves] if isinstance(curves, str) else curves
    if not isinstance(curves, list):
        raise check.fail(path + ("curves",), f"expected a list of metrics; got {curves!r}.")
    for i, spec_text in enumerate(curves):
        try:
            curve_variant(spec_text)
        except EvalbridgeError as error:
            raise check.fail(path + ("curves", i), f"{error} (a curve follows one metric variant over k, e.g. "
                                                   f"nDCG(gain=exp) or P(rel=2)).") from None
    ks = spec.get("k", list(PlotSettings.k))
    if not isinstance(ks, list) or not ks:
        raise check.fail(path + ("k",), f"expected a list of cutoffs; got {ks!r}.")
    ks = [check.rule(k, path + ("k", i), "output.plots.k") for i, k in enumerate(ks)]
    return PlotSettings(
        formats=check.choices(spec.get("formats", ["png"]), path + ("formats",), FORMATS),
        distribution=check.boolean(spec.get("distribution", True), path + ("distribution",)),
        differences=check.boolean(spec.get("differences", True), path + ("differences",)),
        curves=tuple(curves), k=tuple(sorted(set(ks))))


def _output(check: _Checker, value: Any, folder: Path, default_dir: str | None) -> OutputSettings:
    spec = check.mapping(value or {}, ("output",), ("dir", "formats", "per_query", "system_json", "plots", "digits"),
                         "{dir: reports/demo, formats: [markdown, json, csv, latex]}")
    given = spec.get("dir", default_dir)
    directory = None if given is None else _output_dir(check, check.string(given, ("output", "dir")), folder)
    return OutputSettings(
        dir=directory,
        formats=check.choices(spec.get("formats", list(OutputSettings.formats)), ("output", "formats"),
                              RULES["output.formats"].choices),
        per_query=check.choices(spec.get("per_query", list(OutputSettings.per_query)), ("output", "per_query"),
                                RULES["output.per_query"].choices),
        system_json=check.boolean(spec.get("system_json", True), ("output", "system_json")),
        plots=_plots(check, spec.get("plots")),
        digits=check.rule(spec.get("digits", 4), ("output", "digits"), "output.digits"))


def _spark(check: _Checker, value: Any, engine: str) -> SparkSettings | None:
    """``spark:`` (only with ``engine: spark``, whose pyspark is checked here, before anything runs)."""
    if engine != "spark":
        if value is not None:
            raise check.fail(("spark",), "it sets the Spark engine, and this evaluation runs locally.",
                             fix=f"add {option('engine', 'spark')}, or remove {check.locator.label(('spark',))}.")
        return None
    from ..errors import BackendUnavailableError
    from ..spark import INSTALL_HINT, _pyspark

    try:
        _pyspark()
    except BackendUnavailableError as error:
        raise check.fail(("engine",), str(error).split(" Fix: ")[0], fix=INSTALL_HINT) from None
    spec = check.mapping(value or {}, ("spark",), ("master", "buckets"), "{master: 'local[4]', buckets: 64}")
    buckets = spec.get("buckets")
    return SparkSettings(
        master=check.string(spec.get("master", SparkSettings.master), ("spark", "master")),
        buckets=None if buckets is None else check.rule(buckets, ("spark", "buckets"), "spark.buckets"))


#: What ``engine: spark`` does not compute: (key path, is it asked for?, why). evalbridge.spark evaluates
#: each bucket of queries alone, from the qrels and run rows of its own queries, in the fast backend.
_NOT_ON_SPARK: tuple[tuple[KeyPath, Any, str], ...] = (
    (("backend",), lambda c: c.settings.backend != "auto",
     "the Spark engine computes with evalbridge's fast backend in every bucket; backend: chooses a local backend"),
    (("no_relevant",), lambda c: c.settings.no_relevant != "zero",
     "the Spark engine scores queries without a relevant judgement 0 (no_relevant: zero)"),
    (("ties",), lambda c: c.settings.ties == "average",
     "ties: average is computed by the reference implementation, in memory"),
    (("crosscheck",), lambda c: c.crosscheck is not None,
     "the cross-check runs ranx, ir-measures and pytrec_eval on data in memory, and the inputs stay in Spark"),
    (("output", "plots", "curves"), lambda c: c.output.plots is not None and bool(c.output.plots.curves),
     "metric@k curves are computed from data in memory, and the inputs stay in Spark"),
    (("agreement",), lambda c: c.agreement is not None,
     "the agreement between judges is computed from judgements and runs in memory, and the inputs stay in Spark"),
)


def _on_spark(check: _Checker, config: Config) -> None:
    """Refuse, before anything runs, what ``engine: spark`` does not compute (each with its key's line)."""
    for key, asked, why in _NOT_ON_SPARK:
        if asked(config):
            raise check.fail(key, f"{why}, so it cannot be combined with {option('engine', 'spark')}.",
                             fix=f"remove {check.locator.label(key)}, or use {option('engine', 'local')}.")
    for i, asked in enumerate(config.metrics):
        if "in_pool" in asked.metric.inputs:
            raise check.fail(("metrics", i), f"{asked.label} reads the pool (the docs judged for any query), but the Spark "
                                             f"engine evaluates each bucket of queries with only their own judgements.",
                             fix=f"evaluate this metric with {option('engine', 'local')}.")


def _slices(check: _Checker, value: Any, folder: Path) -> SliceSettings | None:
    """``slices:``: a field of the RAG logs, or ``{by: column, file: query table}``."""
    if value is None:
        return None
    if isinstance(value, str):
        return SliceSettings(by=check.string(value, ("slices",)))
    spec = check.mapping(value, ("slices",), ["by", "file"], "{by: category, file: queries.csv}")
    if "by" not in spec:
        raise check.fail(("slices",), "slices: names no field or column.",
                         fix="write slices: category (a field of the RAG logs) or slices: {by: category, "
                             "file: queries.csv}.")
    by = check.string(spec["by"], ("slices", "by"))
    file = check.existing_file(spec["file"], ("slices", "file"), folder) if spec.get("file") is not None else None
    return SliceSettings(by=by, file=file)


def _tracking(check: _Checker, value: Any) -> Mapping[str, Mapping[str, Any]]:
    """``tracking:``: tracker -> its options, each checked by its rule in :data:`RULES` (declared by the tracker,
    :mod:`evalbridge.tracking`); the tracker's library is checked installed here, before anything runs."""
    from ..errors import BackendUnavailableError
    from ..tracking import trackers

    table = trackers()
    if value is None:
        return MappingProxyType({})
    spec = check.mapping(value, ("tracking",), list(table), "{mlflow: {uri: 'sqlite:///mlflow.db'}}")
    out: dict[str, Mapping[str, Any]] = {}
    for name, given in spec.items():
        tracker, path = table[name], ("tracking", name)
        options = check.mapping(given, path, list(tracker.options), "{uri: 'sqlite:///mlflow.db', experiment: dl19}")
        for key in tracker.required:
            if options.get(key) is None:
                raise check.fail(path + (key,), f"{tracker.title} needs its {key}.",
                                 fix=f"write e.g. {{{key}: 'sqlite:///mlflow.db'}}.")
        out[name] = MappingProxyType({key: check.rule(v, path + (key,), f"tracking.{name}.{key}")
                                      for key, v in options.items() if v is not None})
        try:
            tracker.require()
        except BackendUnavailableError as error:
            raise check.fail(path, str(error).split(" Fix: ")[0], fix=tracker.fix) from None
    return MappingProxyType(out)


def with_tracking(config: Config, given: Mapping[str, Mapping[str, Any]], locator: Locator) -> Config:
    """``config`` with the tracking options of a command line (``evalbridge run --mlflow URI``) over its own
    ``tracking:`` section, the whole section checked again by the one validator (messages name the flags)."""
    from dataclasses import replace

    raw = {name: dict(options) for name, options in (config.raw.get("tracking") or {}).items()}
    for name, options in given.items():
        raw.setdefault(name, {}).update({k: v for k, v in options.items() if v is not None})
    return replace(config, tracking=_tracking(_Checker(locator), raw or None))


def _output_dir(check: _Checker, written: str, folder: Path) -> Path:
    """``output.dir`` (:func:`evalbridge.reports.writing.resolve_output_dir`): inside the config's folder
    unless absolute."""
    from ..reports.writing import resolve_output_dir

    try:
        return resolve_output_dir(folder, written)
    except InputError as error:
        raise check.fail(("output", "dir"), str(error)) from None


def validate(raw: Any, *, locator: Locator, folder: Path, path: Path | None = None, document: int = 0,
             count: int = 1, default_dir: str | None = None) -> Config:
    """Check a raw description (a YAML document, or what a command line gives) and build its :class:`Config`.

    Args:
        raw: the settings, keyed as in a config file (``docs/config.md``).
        locator: names the place of each setting in messages (:class:`YamlLocator`, :class:`FlagLocator`).
        folder: the folder relative paths are read from (the config's, or the working directory).
        path: the config file (None for a command line).
        document, count: which YAML document of how many (for default names).
        default_dir: ``output.dir`` when not given (None: nothing is written unless asked).
    """
    from ..backends import BACKENDS

    check = _Checker(locator)
    spec = check.mapping(raw, (), list(TOP_KEYS), "{qrels: qrels.txt, runs: {bm25: bm25.run}, metrics: [nDCG@10]}")
    agreement_only = spec.get("agreement") is not None and "runs" not in spec
    for required in ("runs", "metrics") if not agreement_only else ():
        if required not in spec:
            raise check.fail((), f"the config has no {required!r} key.",
                             fix="every config needs runs: and metrics:, or an agreement: section "
                                 "(see docs/config.md).")
    if agreement_only and spec.get("qrels") is not None:
        raise check.fail(("qrels",), "qrels are given but no runs to evaluate with them (the agreement section "
                                     "names its own judges).",
                         fix="add runs:, or move these qrels into agreement.judges.")
    runs_spec = check.mapping(spec.get("runs", {}), ("runs",), None, "{bm25: runs/bm25.txt}")
    if not runs_spec and not agreement_only:
        raise check.fail(("runs",), "no run is given.", fix="add at least one: runs: {bm25: runs/bm25.txt}.")
    engine = check.choice(spec.get("engine", "local"), ("engine",), list(ENGINES))
    spark = _spark(check, spec.get("spark"), engine)
    settings = _settings(check, spec)
    policies = _policies(settings)
    runs = {_name(check, name, ("runs", name), "system"): _source(check, value, ("runs", name), folder, "run", engine,
                                                                  policies)
            for name, value in runs_spec.items()}
    qrels = _source(check, spec["qrels"], ("qrels",), folder, "qrels", engine, policies) \
        if spec.get("qrels") is not None else None
    for name, source in runs.items():
        if source.carries_qrels and qrels is not None:
            raise check.fail(("runs", name, "format"), f"format {source.format!r} {BESIDE_QRELS} "
                                                       f"({'the top-level qrels:' if check.locator.source else 'QRELS'})"
                                                       f"; evalbridge does not choose which judge.",
                             fix=("remove qrels:" if check.locator.source else "evaluate it alone, without QRELS")
                                 + ", or give this run in a run format (trec, json, ranked, ...).")
        if not source.carries_qrels and qrels is None:
            raise check.fail(("runs", name), f"format {source.format!r} is a run without judgements, and the "
                                             f"config has no qrels.", fix="add qrels: <path to the qrels>.")
    metrics = _metrics(check, spec["metrics"]) if "metrics" in spec else ()
    backend = settings.backend
    _supported(check, [r.metric for r in metrics], backend, ("metrics",))
    agreement = _agreement(check, spec.get("agreement"), folder, runs, tuple(r.metric for r in metrics), policies)
    if agreement is not None:
        _supported(check, agreement.metrics, backend, ("agreement", "metrics"))
    comparison = _comparison(check, spec.get("comparison"), runs)
    seed = check.rule(spec.get("seed", 0), ("seed",), "seed")
    from ..stats.gates import ON_INCONCLUSIVE
    stem = (path.stem if path is not None else "evalbridge") + (f"-{document + 1}" if count > 1 else "")
    config = Config(
        path=path, document=document, title=_name(check, spec.get("title") or stem, ("title",), "report title"),
        runs=MappingProxyType(runs),
        metrics=metrics, qrels=qrels, settings=settings, crosscheck=_crosscheck(check, spec.get("crosscheck")),
        comparison=comparison, agreement=agreement, diff=_diff(check, spec.get("diff"), runs),
        gates=_gates(check, spec.get("gates"), metrics, runs, comparison),
        on_inconclusive=check.choice(spec.get("on_inconclusive", "fail"), ("on_inconclusive",), ON_INCONCLUSIVE),
        bands=_bands(check, spec.get("bands"), [r.label for r in metrics]),
        output=_output(check, spec.get("output"), folder, default_dir.format(stem=stem) if default_dir else None),
        seed=seed, engine=engine, spark=spark, tracking=_tracking(check, spec.get("tracking")),
        slices=_slices(check, spec.get("slices"), folder), raw=MappingProxyType(dict(spec)))
    if engine == "spark":
        _on_spark(check, config)
    if config.diff is not None and engine == "spark":
        raise check.fail(("diff",), "a diff reads each ranking's documents in memory, and engine: spark keeps the runs "
                                    "in Spark.", fix="remove diff:, or evaluate with engine: local.")
    if config.tracking and not config.runs:
        raise check.fail(("tracking",), "a tracker logs the systems' means and per-query values, and this config "
                                        "evaluates no system (an agreement alone).",
                         fix="add runs:, or remove tracking:.")
    return config


