"""Each section of a config read and checked into its part of :class:`~evalbridge.config.layout.Config`: the
settings, the inputs (through the format registry), metrics, cross-check, comparison, gates,
bands, output, Spark, slices and tracking; :func:`evalbridge.config.schema.validate` puts them together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import EvalbridgeError, InputError
from ..metrics.requests import FIX as LABEL_FIX, MetricRequest, add_request, find_request, request
from ..metrics.spec import Metric, parse_metric
from ..model.settings import ROWS, Row, Settings
from ..common.parameters import Boolean, Interval, OneOf, Text
from ..common.wording import option
from .checking import RULES, Checker, dotted, suggest
from .layout import (COMPARISON_KEYS, ComparisonSettings, CrossCheckSettings, OutputSettings,
                     PlotSettings, SliceSettings, SparkSettings)
from ..stats.statistics import Statistics
from .sources import Source, check_source

if TYPE_CHECKING:
    from ..io.yamldata import KeyPath

__all__ = ["read_settings", "read_policies", "read_source", "read_official", "read_metrics", "read_supported",
           "read_name", "read_crosscheck", "read_comparison", "read_gates", "read_bands", "read_output",
           "read_spark", "read_slices", "read_tracking"]


def read_settings(check: Checker, spec: Mapping[str, Any]) -> Settings:
    """The settings (:class:`~evalbridge.model.settings.Settings`, one top-level key each, :data:`~evalbridge.model.settings.ROWS`),
    each value checked by its row's rule and named by its key and line; a key left out keeps its default."""
    values = {name: _SETTING_CHECKS[type(row.rule)](check, row, spec[name]) for name, row in ROWS.items()
              if name in spec and not (row.optional and spec[name] is None)}
    return Settings(**values)


def _one_of(check: Checker, row: Row, value: Any) -> Any:
    return check.choice(value, (row.name,), row.rule.choices)  # type: ignore[union-attr]  # (a OneOf row)


def _registered(check: Checker, row: Row, value: Any) -> Any:
    """A name of a registry (``backend``: :data:`evalbridge.backends.BACKENDS`), or the rule's own check."""
    from ..backends import BACKENDS

    return check.choice(value, (row.name,), list(BACKENDS)) if row.registry else _ruled(check, row, value)


def _ruled(check: Checker, row: Row, value: Any) -> Any:
    path = (row.name,)
    return row.rule.check(value, source=check.locator.source, line=check.locator.line(path),
                          key=check.locator.label(path))


#: How a setting's value is checked in a config, by the kind of its rule (a choice is told the closest one).
_SETTING_CHECKS: Mapping[type, Callable[[Checker, Row, Any], Any]] = MappingProxyType({
    OneOf: _one_of, Text: _registered, Interval: _ruled,
    Boolean: lambda check, row, value: check.boolean(value, (row.name,)),
})


def read_policies(settings: Settings) -> dict[str, str]:
    """The read policies set at the top level (``ids:``, ``duplicates:``): every source takes them unless it sets
    its own."""
    return {name: value for name, value in settings.read_options().items()}


def read_source(check: Checker, value: Any, path: KeyPath, folder: Path, kind: str, engine: str,
            policies: Mapping[str, str] | None = None) -> Source:
    """A config source, checked against the format registry (see :mod:`.sources`): a file (a folder of
    Parquet files too with ``engine: spark``), inline ``data``, or a ``table`` of Spark's catalog.
    ``policies``: the top-level read policies (``ids``, ``duplicates`` for runs), unless the source sets its own."""
    from ..io import get_format
    from ..io.registry import prefixed

    key = dotted(path)
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


def read_official(check: Checker, value: Any, path: tuple[Any, ...],
                  *qrels: Source | None) -> tuple[Any, tuple[str, ...]]:
    """A metrics key (``metrics:``, a section's ``metric:``) with ``official`` (alone or in the list) replaced by the
    official measures of the first of ``qrels`` that is a dataset (``irds:<id>``), by the Python API's one rule
    (:func:`evalbridge.io.datasets.with_official`), and the note saying which (none when not asked): the config holds
    it (:attr:`~evalbridge.config.layout.Config.official`). Refused, with the fix, when none is a dataset."""
    from ..io.datasets import with_official

    named = [source.named for source in qrels if source is not None and source.format == "irds"]
    try:
        taken, notes = with_official(value, *named)
    except EvalbridgeError as error:
        said, _, fix = str(error).partition(" Fix: ")
        raise check.fail(path, said, fix=fix or "name the metrics, e.g. metrics: [nDCG@10, AP].") from None
    return taken, tuple(notes)


def read_metrics(check: Checker, value: Any, path: tuple[Any, ...] = ("metrics",)) -> tuple[MetricRequest, ...]:
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


def read_supported(check: Checker, metrics: Sequence[Metric], backend: str, path: tuple[Any, ...]) -> None:
    """Refuse a metric the backend cannot compute, naming where it was asked."""
    from ..backends import get_backend, unsupported

    module = get_backend(backend)
    for i, metric in enumerate(metrics):
        reason = unsupported(module, metric)
        if reason is not None:
            raise check.fail(path + (i,), f"backend {backend!r} cannot compute {metric}: {reason}",
                             fix=f"use {option('backend', 'auto')} or reference, or run `evalbridge metrics` for who "
                                 f"supports what.")


def read_name(check: Checker, name: Any, path: KeyPath, what: str) -> str:
    """A system, judge or report name as text, checked by the one rule of :mod:`evalbridge.common.names`."""
    from ..common.names import name_problem

    text = str(name)
    problem = name_problem(text, what)
    if problem is not None:
        raise check.fail(path, problem[0], fix=problem[1])
    return text


def read_crosscheck(check: Checker, value: Any) -> CrossCheckSettings | None:
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


def read_comparison(check: Checker, value: Any, runs: Mapping[str, Source], seed: int = 0) -> ComparisonSettings | None:
    """``comparison:``: the baseline and the statistics of the tests (with the config's ``seed``)."""
    if value is None:
        return None
    spec = check.mapping(value, ("comparison",), ("baseline", *COMPARISON_KEYS), "{baseline: bm25, test: t, correction: holm, alpha: 0.05}")
    if not runs:
        raise check.fail(("comparison",), "a comparison needs at least two runs; the config has none.",
                         fix="add runs:, or remove the comparison section.")
    baseline = spec.get("baseline", next(iter(runs)))
    check.choice(baseline, ("comparison", "baseline"), list(runs))
    if len(runs) < 2:
        raise check.fail(("comparison",), "a comparison needs at least two runs.",
                         fix="add another run, or " + ("remove the comparison section." if check.locator.source
                                                       else f"leave out {check.locator.label(('comparison', 'baseline'))}."))
    return ComparisonSettings(baseline=baseline, statistics=Statistics(seed=seed, **{
        key: check.rule(spec[key], ("comparison", key), f"comparison.{key}") for key in COMPARISON_KEYS if key in spec}))


def read_gates(check: Checker, value: Any, metrics: Sequence[MetricRequest], runs: Mapping[str, Source],
           comparison: ComparisonSettings | None) -> tuple[Any, ...]:
    if value is None:
        return ()
    from ..decisions.gates import check_reachable, parse_gates

    spec = check.mapping(value, ("gates",), None, "{recall@5: '>= 0.80', ndcg@10: '>= baseline - 0.01'}")
    out = []
    for key, expressions in spec.items():
        try:
            gates = parse_gates({key: expressions}, labels=[r.label for r in metrics])
        except EvalbridgeError as error:
            raise check.fail(("gates", key), str(error))
        for gate in gates:
            request = find_request(metrics, gate.metric)
            if request is None:
                raise check.fail(("gates", key), f"{gate.metric} is not one of the metrics "
                                                 f"({', '.join(r.label for r in metrics)}).",
                                 fix=f"add {gate.metric} to metrics, or gate a metric that is evaluated (by its "
                                     f"label or any spelling).")
            if isinstance(gate.metric, str):  # a label: its metric's bounds (a metric's were checked when parsed)
                try:
                    check_reachable(gate, request.metric)
                except EvalbridgeError as error:
                    raise check.fail(("gates", key), str(error))
            if gate.system is not None and gate.system not in runs:
                raise check.fail(("gates", key), f"system {gate.system!r} is not one of the runs.",
                                 fix=f"{suggest(gate.system, list(runs))}Runs: {', '.join(runs)}.")
            if gate.relative and comparison is None:
                raise check.fail(("gates", key), f"{gate.text!r} is relative to the baseline, but there is none.",
                                 fix="add comparison: {baseline: <run name>}.")
        out += gates
    return tuple(out)


def read_bands(check: Checker, value: Any, labels: Sequence[str] = ()) -> Mapping[str, tuple[float, float, float]] | None:
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


def _plots(check: Checker, value: Any) -> PlotSettings | None:
    if value is None or value is False:
        return None
    if value is True:
        return PlotSettings()
    from ..reports.plots import FORMATS, curve_variant

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


def read_output(check: Checker, value: Any, folder: Path, default_dir: str | None) -> OutputSettings:
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


def read_spark(check: Checker, value: Any, engine: str) -> SparkSettings | None:
    """``spark:`` (only with ``engine: spark``, whose pyspark is checked here, before anything runs)."""
    if engine != "spark":
        if value is not None:
            raise check.fail(("spark",), "it sets the Spark engine, and this evaluation runs locally.",
                             fix=f"add {option('engine', 'spark')}, or remove {check.locator.label(('spark',))}.")
        return None
    from ..errors import BackendUnavailableError
    from ..io.spark_tables import INSTALL_HINT, pyspark_sql

    try:
        pyspark_sql()
    except BackendUnavailableError as error:
        raise check.fail(("engine",), str(error).split(" Fix: ")[0], fix=INSTALL_HINT) from None
    spec = check.mapping(value or {}, ("spark",), ("master", "buckets"), "{master: 'local[4]', buckets: 64}")
    buckets = spec.get("buckets")
    return SparkSettings(
        master=check.string(spec.get("master", SparkSettings.master), ("spark", "master")),
        buckets=None if buckets is None else check.rule(buckets, ("spark", "buckets"), "spark.buckets"))


def read_slices(check: Checker, value: Any, folder: Path) -> SliceSettings | None:
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


def read_tracking(check: Checker, value: Any) -> Mapping[str, Mapping[str, Any]]:
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


def _output_dir(check: Checker, written: str, folder: Path) -> Path:
    """``output.dir`` (:func:`evalbridge.reports.writing.resolve_output_dir`): inside the config's folder
    unless absolute."""
    from ..reports.writing import resolve_output_dir

    try:
        return resolve_output_dir(folder, written)
    except InputError as error:
        raise check.fail(("output", "dir"), str(error)) from None
