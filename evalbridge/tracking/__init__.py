"""Experiment trackers, one table: what an evaluation logs (params, metrics, artifacts), and who logs it.

What is logged is decided here, once, for every tracker (:func:`tracked_runs`): one parent run per evaluation
(the settings and versions that decide the numbers, the input hashes, ``provenance.json`` and the report files
of :data:`REPORT_ARTIFACTS`) and one nested run per system (the same params, that system's input hash and query
counts, the mean of every metric, its per-query table). A tracker is one module of this package declaring
``TRACKER = Tracker(...)`` (its name, the pip extra that installs its library, its options as declared rules, and
the function that sends the runs), listed in :data:`MODULES`. Every door reads this table: :func:`log` (behind
``eb.log_mlflow``), the config's ``tracking:`` section (:mod:`evalbridge.config.schema` takes its keys and rules
from here) and the command line's ``--mlflow`` flags. No tracker library is imported until a run is logged.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..errors import BackendUnavailableError, InputError

if TYPE_CHECKING:
    from ..reports.report import Report
    from ..evaluation.results import Results
    from ..common.parameters import Rule

__all__ = ["Tracker", "RunLog", "Tracked", "trackers", "get_tracker", "tracked_runs", "log", "log_mlflow",
           "tracking_key", "bounded_key", "MAX_KEY", "REPORT_ARTIFACTS", "MODULES"]

#: the tracker modules of this package, each declaring ``TRACKER``
MODULES = ("mlflow",)

#: report formats logged beside ``provenance.json`` as ``report`` + their suffix, when the format registry has them
#: (the ``html`` page: ``report.html``)
REPORT_ARTIFACTS = ("html",)


@dataclass(frozen=True)
class RunLog:
    """One run as a tracker receives it.

    Attributes:
        name: the run's name (the evaluation's title, or the system's name).
        params: name -> value (text), the keys already valid for every tracker (:func:`tracking_key`); a key
            longer than :data:`MAX_KEY` is shortened around a stable hash (:func:`bounded_key`).
        metrics: name -> value (the means, keyed by :func:`tracking_key` of each metric's label), bounded alike.
        files: artifact file name -> a function writing it at the path given.
        tags: name -> text (what a number cannot say: a gate's outcome, the test that decided), bounded alike.
    """

    name: str
    params: Mapping[str, str]
    metrics: Mapping[str, float] = field(default_factory=dict)
    files: Mapping[str, Callable[[Path], None]] = field(default_factory=dict)
    tags: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:  # every name within the trackers' limit (bounded_key), whoever made the run
        for name in ("params", "metrics", "tags"):
            object.__setattr__(self, name, MappingProxyType({bounded_key(k): v
                                                             for k, v in getattr(self, name).items()}))


@dataclass(frozen=True)
class Tracked:
    """Where an evaluation was logged: the tracker, its location, the parent run and each system's run."""

    tracker: str
    uri: str
    experiment: str
    parent: str
    runs: Mapping[str, str]


@dataclass(frozen=True)
class Tracker:
    """One experiment tracker.

    Attributes:
        name: ``tracking: {NAME: {...}}``, ``--NAME``, ``eb.log_NAME``.
        title: one line saying what it is.
        module: the library it imports (checked installed before anything is computed).
        extra: the pip extra of evalbridge that installs it (``pip install 'evalbridge[EXTRA]'``).
        options: option -> its rule (:mod:`evalbridge.common.parameters`); the first is the one ``--NAME`` sets,
            the others ``--NAME-OPTION``.
        required: the options that must be given.
        send: logs a parent run and its nested runs with the options given, and says where.
    """

    name: str
    title: str
    module: str
    extra: str
    options: Mapping[str, Rule]
    required: tuple[str, ...]
    send: Callable[[RunLog, Mapping[str, RunLog], Mapping[str, Any]], Tracked]

    @property
    def fix(self) -> str:
        return f"pip install 'evalbridge[{self.extra}]'"

    def require(self) -> None:
        """:class:`BackendUnavailableError` with the fix when the library is not installed (nothing is imported)."""
        import importlib.util

        if importlib.util.find_spec(self.module) is None:
            raise BackendUnavailableError(f"logging to {self.title} needs the {self.module} package, which is not "
                                          f"installed. Fix: {self.fix}")

    def check(self, options: Mapping[str, Any], *, where: Callable[[str], str] = str) -> dict[str, Any]:
        """The options checked by their rules (unknown and missing ones refused); ``where(option)`` names an option
        in messages (``tracking.mlflow.uri``, ``--mlflow``)."""
        unknown = [key for key in options if key not in self.options]
        if unknown:
            raise InputError(f"{where(unknown[0])}: unknown option of {self.title}.",
                             fix=f"its options are {', '.join(self.options)}.")
        missing = [key for key in self.required if options.get(key) is None]
        if missing:
            raise InputError(f"{self.title} needs {where(missing[0])}.", fix=f"give e.g. {_EXAMPLES[missing[0]]}.")
        return {key: self.options[key].check(value, key=where(key)) for key, value in options.items()
                if value is not None}


#: an example of each option, for messages
_EXAMPLES: Mapping[str, str] = MappingProxyType({"uri": "sqlite:///mlflow.db or file:///tmp/mlruns"})


def trackers() -> Mapping[str, Tracker]:
    """Every tracker, by name: the ``TRACKER`` of each module of :data:`MODULES` (its library is not imported)."""
    found = {}
    for name in MODULES:
        tracker: Tracker = importlib.import_module(f".{name}", __name__).TRACKER
        found[tracker.name] = tracker
    return MappingProxyType(found)


def get_tracker(name: str) -> Tracker:
    table = trackers()
    if name not in table:
        raise InputError(f"unknown tracker {name!r}.", fix=f"choose one of {', '.join(table)}.")
    return table[name]


#: what a tracker accepts in a param or metric name: word characters, ``_ - . space : /`` (MLflow's rule)
_FORBIDDEN = re.compile(r"[^\w.\- :/]")
#: characters with a readable spelling in a name (\0 marks where a separator goes)
_SPELLED = {"@": "\0at\0", "+": "plus", "%": "pct", "<": "lt", ">": "gt"}
#: a separator put in (not the label's own underscores): runs of them are one, and none is kept beside a space,
#: a dot, a slash or an end
_PUT_IN = re.compile("\0+")
_BESIDE_BOUNDARY = re.compile("(?<![^\\s./])\0|\0(?![^\\s./])")
#: the longest param or metric name MLflow takes
MAX_KEY = 250


def tracking_key(label: str) -> str:
    """A metric label (or a slice's, an input's name) as a name every tracker accepts, readable: ``@`` becomes
    ``_at_``, ``+`` ``plus``, ``%`` ``pct``, ``<`` / ``>`` ``lt`` / ``gt``, each run of other characters outside
    ``[\\w.- :/]`` one ``_`` (none beside a space, a dot or an end), and ``/`` is kept only between two names.

    >>> [tracking_key(k) for k in ("nDCG@10", "P(rel=2)@5", "hit rate", "a//b", "long (7+)", "my_metric_")]
    ['nDCG_at_10', 'P_rel_2_at_5', 'hit rate', 'a/b', 'long 7plus', 'my_metric_']
    """
    text = _FORBIDDEN.sub("\0", "".join(_SPELLED.get(c, c) for c in label.replace("\0", " ")))
    text = _BESIDE_BOUNDARY.sub("", _PUT_IN.sub("\0", text)).replace("\0", "_")
    return "/".join(part for part in text.split("/") if part not in ("", ".", "..")) or "_"


def bounded_key(key: str) -> str:
    """``key`` when it fits MLflow's :data:`MAX_KEY` characters; else its start and its end around a stable hash of
    the whole (``slice.<a long name>...-1a2b3c4d-....AP``), so the name stays readable and unique.

    >>> bounded_key("nDCG_at_10"), len(bounded_key("slice." + "x" * 300 + ".AP"))
    ('nDCG_at_10', 250)
    """
    if len(key) <= MAX_KEY:
        return key
    import hashlib

    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
    tail = 80
    return f"{key[:MAX_KEY - tail - 10]}-{digest}-{key[-tail:]}"


def _keys(labels: list[str]) -> dict[str, str]:
    """label -> :func:`tracking_key`, refusing two labels that would log under one name."""
    keys: dict[str, str] = {}
    for label in labels:
        key = tracking_key(label)
        other = next((k for k, v in keys.items() if v == key), None)
        if other is not None:
            raise InputError(f"the metrics {other!r} and {label!r} would both be logged as {key!r}.",
                             fix="give them labels that differ in letters or digits, e.g. "
                                 "{'ndcg_cut10': 'nDCG@10', ...}.")
        keys[label] = key
    return keys


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _flat(prefix: str, value: Any, out: dict[str, str]) -> None:
    """``{a: {b: 1}}`` as ``{prefix.a.b: "1"}`` (lists and scalars as JSON text)."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            _flat(f"{prefix}.{tracking_key(str(key))}" if prefix else tracking_key(str(key)), item, out)
    else:
        out[prefix] = _text(value)


def _report(evaluation: Report | Results | Mapping[str, Results], title: str | None) -> Report:
    from ..reports.report import Report, make_provenance
    from ..evaluation.results import Results

    if isinstance(evaluation, Report):
        report = evaluation
    elif isinstance(evaluation, Results):
        report = Report(results={"system": evaluation})
    elif isinstance(evaluation, Mapping) and evaluation and all(isinstance(r, Results) for r in evaluation.values()):
        report = Report(results=dict(evaluation))
    else:
        raise InputError(f"what is logged is a Report, a Results or a {{system: Results}} mapping; got "
                         f"{type(evaluation).__name__} {evaluation!r:.60}.",
                         fix="pass eb.evaluate(...)'s result, {'bm25': results, ...}, or run_config(...).report.")
    if not report.results:
        raise InputError("the report holds no system's results (an agreement alone): there is nothing to log.")
    changes: dict[str, Any] = {}
    if not report.provenance:
        changes["provenance"] = make_provenance(report.results)
    if title is not None:
        changes["title"] = title
    if changes:
        from dataclasses import replace

        report = replace(report, **changes)
    return report


#: the provenance entries that decide the numbers or say what was read, logged as params of every run
_PARAMS = ("evalbridge_version", "python", "backend", "backend_versions", "conventions", "relevance_level", "seed",
           "engine")
#: the settings of a config that decide numbers (the rest, such as the gates, are in provenance.json)
_SETTINGS = ("min_relevance", "judged_only", "depth", "comparison", "crosscheck")


def tracked_runs(evaluation: Report | Results | Mapping[str, Results], *,
                 title: str | None = None) -> tuple[RunLog, dict[str, RunLog]]:
    """What every tracker logs of an evaluation: the parent run and one run per system (in the report's order).

    Params (every run): the metrics as evaluated (``metric.<key>``: label -> metric), the versions (evalbridge,
    Python, each backend's library), the conventions and settings that decide the numbers, the sha256 of every
    input (``input.<key>.sha256``, as the provenance records it); a system's run adds its own ``system``, input
    and query counts. Metrics: a system's means, keyed by :func:`tracking_key` of the label; with slices its
    per-slice means (``slice.<slice>.<label>``); each number its run logged (``logged.<field>.mean`` / ``p50`` /
    ``p95``). Artifacts: the parent holds ``provenance.json`` and ``report.html``; a system's run holds its
    ``per_query.csv`` (query_id, one column per metric label).
    """
    from ..views.formats import report_formats
    from ..reports.report import report_dict

    report = _report(evaluation, title)
    provenance = dict(report_dict(report)["provenance"])
    keys = _keys(list(report.labels))
    params: dict[str, str] = {}
    for request in report.names:
        params[f"metric.{keys[request.label]}"] = f"{request.label} = {request.metric}"
    for name in _PARAMS:
        if provenance.get(name) is not None:
            _flat(name, provenance[name], params)
    settings = (provenance.get("config") or {})
    for name in _SETTINGS:
        if name in settings:
            _flat(f"settings.{name}", settings[name], params)
    inputs = provenance.get("inputs") or {}
    for key, found in inputs.items():
        if isinstance(found, Mapping) and found.get("sha256") is not None:
            params[f"input.{tracking_key(key)}.sha256"] = str(found["sha256"])
    invocation = provenance.get("invocation")
    if isinstance(invocation, Mapping) and invocation.get("sha256") is not None:
        params["config.sha256"] = str(invocation["sha256"])

    def _write_provenance(path: Path) -> None:
        path.write_text(json.dumps(provenance, indent=2, allow_nan=False, default=str) + "\n", encoding="utf-8")

    files: dict[str, Callable[[Path], None]] = {"provenance.json": _write_provenance}
    available = report_formats()
    for name in REPORT_ARTIFACTS:
        if name in available:
            files[f"report{available[name].suffix}"] = _report_writer(available[name].render, report)
    metrics, tags = _decision(report, keys)
    parent = RunLog(name=report.title, params=MappingProxyType(params), metrics=MappingProxyType(metrics),
                    files=MappingProxyType(files), tags=MappingProxyType(tags))
    systems = {}
    counts = provenance.get("queries") or {}
    for system, results in report.results.items():
        own = dict(params)
        own["system"] = system
        for count, value in (counts.get(system) or {}).items():
            own[f"queries.{count}"] = str(value)
        source = inputs.get(f"runs.{system}")
        if isinstance(source, Mapping) and source.get("sha256") is not None:
            own["input.sha256"] = str(source["sha256"])
        means = {keys[label]: float(mean) for label, mean in results.means.items() if label in keys}
        means.update(_slice_means(report, system, keys))
        means.update((f"logged.{tracking_key(n.field)}.{stat}", float(getattr(n, stat)))
                     for n in results.numbers for stat in ("mean", "p50", "p95"))
        systems[system] = RunLog(name=system, params=MappingProxyType(own), metrics=MappingProxyType(means),
                                 files=MappingProxyType({"per_query.csv": _per_query_writer(results)}))
    return parent, systems


#: a gate's operator as a word in its name (``>=`` would lose its ``=``)
_OPERATOR_WORDS = MappingProxyType({">=": "ge", ">": "gt", "<=": "le", "<": "lt", "==": "eq"})


#: what the parent run logs of each gate: the verdict the run counts (1 or 0), the value against the threshold, and
#: for a gate that knows about noise the mean difference, its one-sided bounds and the queries it would need
_GATE_NUMBERS = ("passed", "value", "threshold", "difference", "ci_low", "ci_high", "queries_needed")


class _Names:
    """Names made of parts (a system, a metric's label, a statistic), each part a :func:`tracking_key` joined with
    dots; two different parts that would log under one name are refused."""

    def __init__(self, keys: Mapping[str, str]) -> None:
        self.keys, self.seen = keys, dict[str, tuple[str, ...]]()

    def __call__(self, *parts: str) -> str:
        name = ".".join(self.keys.get(part) or tracking_key(part) for part in parts)
        other = self.seen.setdefault(name, parts)
        if other != parts:
            raise InputError(f"{' / '.join(other)!r} and {' / '.join(parts)!r} would both be logged as {name!r}.",
                             fix="give the systems (or metrics) names that differ in letters or digits.")
        return name


def _decision(report: Report, keys: Mapping[str, str]) -> tuple[dict[str, float], dict[str, str]]:
    """What the parent run holds of the decision: metrics and tags, named so that they sort and filter in a
    tracker's UI (``diff.<system>.<metric>.delta``).

    Metrics: each system's means (``mean.<system>.<metric>``); each difference against a baseline (``diff.<system>
    .<metric>``: ``delta`` = system - baseline, ``ci_low`` / ``ci_high`` its unadjusted interval, ``p_adjusted``,
    ``significant`` 1 or 0, ``wins`` / ``ties`` / ``losses`` from the system's side; ``<system> vs <baseline>`` for
    a baseline after the first); each gate (``gate.<system>.<metric>.<expression>``: ``passed`` 1 or 0, what the
    run counts, ``value``, ``threshold``, and for a gate at a level ``difference``, ``ci_low`` / ``ci_high``,
    ``queries_needed``), ``gates.failed``; the analyses' headline numbers
    (:func:`evalbridge.views.sections.report_headlines`: ``power.<system>.<metric>.detectable``, ``ppi...``).
    Numbers that are not finite (a p-value of one query) are left out. Tags: each gate's outcome (``passed``,
    ``failed``, ``inconclusive``), ``decision.gates`` (``passed`` or ``failed``) and ``decision.significance`` (the
    test, its sides, the correction and alpha: what every ``significant`` means)."""
    from ..views.sections import report_headlines

    name = _Names(keys)
    metrics: dict[str, float] = {}
    tags: dict[str, str] = {}
    for system, results in report.results.items():
        metrics |= {name("mean", system, label): float(results.means[label]) for label in keys
                    if label in results.means}
    comparison = report.comparison
    if comparison is not None:
        tags["decision.significance"] = comparison.describe()
        for row in comparison.rows:
            pair = row.system if row.baseline == comparison.baseline else f"{row.system} vs {row.baseline}"
            for stat in ("delta", "ci_low", "ci_high", "p_adjusted", "significant", "wins", "ties", "losses"):
                metrics[name("diff", pair, row.metric, stat)] = float(getattr(row, stat))
    for gate in report.gates:
        expression = f"{_OPERATOR_WORDS[gate.gate.op]} {gate.gate.text.strip()[len(gate.gate.op):].strip()}"
        where = ("gate", gate.system, gate.metric, expression)
        metrics |= {name(*where, stat): float(getattr(gate, stat)) for stat in _GATE_NUMBERS
                    if getattr(gate, stat) is not None}
        tags[name(*where)] = gate.outcome
    if report.gates:
        metrics["gates.failed"] = float(len(report.failed_gates))
        tags["decision.gates"] = "failed" if report.failed_gates else "passed"
    metrics |= {name(*parts): float(value) for parts, value in report_headlines(report).items()}
    return {key: value for key, value in metrics.items() if math.isfinite(value)}, tags


def _slice_means(report: Report, system: str, keys: Mapping[str, str]) -> dict[str, float]:
    """A system's per-slice means (``slice.<slice>.<metric>``) when the report has slices; two slices that would
    log under one name are refused."""
    if report.slices is None:
        return {}
    names: dict[str, str] = {}
    for name in report.slices.names:
        key = tracking_key(name)
        if key in names.values():
            other = next(k for k, v in names.items() if v == key)
            raise InputError(f"the slices {other!r} and {name!r} would both be logged as {key!r}.",
                             fix="give the slices labels that differ in letters or digits.")
        names[name] = key
    return {f"slice.{names[m.slice]}.{keys[m.metric]}": m.mean for m in report.slices.means
            if m.system == system and m.metric in keys and math.isfinite(m.mean)}


def _report_writer(render: Callable[[Report], str], report: Report) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_text(render(report), encoding="utf-8")
    return write


def _per_query_writer(results: Results) -> Callable[[Path], None]:
    """``per_query.csv`` as the report folder writes it (:func:`evalbridge.reports.per_query.write_frame`)."""
    def write(path: Path) -> None:
        from ..reports.per_query import write_frame

        write_frame(results.per_query.reset_index(), path, fmt="csv")
    return write


def log(tracker: str, evaluation: Report | Results | Mapping[str, Results], options: Mapping[str, Any], *,
        title: str | None = None, where: Callable[[str], str] = str) -> Tracked:
    """Log an evaluation with one tracker: its options checked by their declared rules, its library checked
    installed, then the runs of :func:`tracked_runs` sent."""
    chosen = get_tracker(tracker)
    checked = chosen.check(options, where=where)
    chosen.require()
    parent, systems = tracked_runs(evaluation, title=title)
    return chosen.send(parent, systems, checked)


def log_mlflow(evaluation: Report | Results | Mapping[str, Results], *, uri: str | os.PathLike[str],
               experiment: str | None = None, run_name: str | None = None) -> Tracked:
    """Log an evaluation to MLflow: one parent run, one nested run per system (see :func:`tracked_runs`).

    Args:
        evaluation: a :class:`~evalbridge.reports.report.Report` (``run_config(...).report``), a
            :class:`~evalbridge.evaluation.results.Results` or ``{system: Results}``.
        uri: the tracking store (``sqlite:///mlflow.db``, ``file:///path/mlruns``, ``http://host:5000``).
        experiment: the experiment's name (created when missing; default MLflow's ``Default``).
        run_name: the parent run's name (default the report's title).

    Returns:
        :class:`Tracked`: the parent run's id and each system's run id.

    Raises:
        BackendUnavailableError: mlflow is not installed (``pip install 'evalbridge[mlflow]'``).
        InputError: a bad option, or a store MLflow cannot open.
    """
    return log("mlflow", evaluation, {"uri": uri, "experiment": experiment, "run_name": run_name})
