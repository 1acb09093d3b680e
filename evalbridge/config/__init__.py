"""Config-driven evaluations: a YAML file -> validated, frozen settings -> one run with reports.

A config file holds one evaluation, or several as YAML documents separated by ``---``.
Everything is checked when the file is loaded, before any computing: unknown keys (with
the closest valid key), metric strings, backends, choices, numbers, the baseline, the
gates, and that every input file exists. Errors name the config file and line, the key
path (``runs.bm25.path``), the bad value and a fix. Only ``yaml.safe_load`` semantics
are used (no Python objects). Paths in a config are relative to the config file.

Every key is described in ``docs/config.md``. The smallest config::

    qrels: qrels.txt
    runs: {bm25: bm25.run}
    metrics: [nDCG@10, P@5]

Example:
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "eval.yaml").write_text(
    ...     "runs:\\n  rag: {format: labels, data: {q1: [1, 0, 1], q2: [0, 1, 0]}}\\nmetrics: [P@3, mrr]\\n")
    >>> config = load_config(folder / "eval.yaml")
    >>> [str(m) for m in config.metrics], list(config.runs)
    (['P@3', 'RR'], ['rag'])
    >>> outcome = run_config(config)
    >>> round(outcome.report.results["rag"]["P@3"], 4), outcome.exit_code
    (0.5, 0)
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..errors import EvalbridgeError, InputError
from ..metrics.spec import Metric, parse_metric
from .sources import Source, check_source, load_qrels, load_run

__all__ = ["Config", "Source", "CrossCheckSettings", "ComparisonSettings", "PlotSettings", "OutputSettings",
           "Outcome", "load_config", "load_configs", "run_config", "load_qrels", "load_run", "TOP_KEYS"]

#: top-level key -> what it sets (docs/config.md has the full reference)
TOP_KEYS: Mapping[str, str] = MappingProxyType({
    "title": "heading of the reports",
    "qrels": "the relevance judgements (a path, or {path|data, format, ...})",
    "runs": "system name -> run (a path, or {path|data, format, ...})",
    "metrics": "metric specs, any spelling",
    "backend": "who computes the numbers (auto, reference, fast, ranx, ir_measures, pytrec_eval)",
    "min_relevance": "relevance level of binary metrics that do not set rel (float grades allowed, e.g. 7)",
    "ties": "docid_desc (trec_eval), docid_asc or input",
    "score_precision": "float64, or float32 as trec_eval <= 9",
    "missing_queries": "zero (score 0) or drop (leave out of the mean)",
    "crosscheck": "{backends, atol, canonicalise}: compare every value with other libraries",
    "comparison": "{baseline, test, correction, alpha, confidence, n_resamples}: paired significance tests",
    "gates": "metric -> '>= 0.8' / '>= baseline - 0.01' (or a list); 'system: metric' targets one system",
    "bands": "true (seed 001's bands), false, or {metric or family: [fair, good, excellent]}",
    "output": "{dir, formats, per_query, system_json, plots, digits}",
    "seed": "seed of every random step (randomization test, bootstrap)",
})


_REPORT_FORMATS = ("terminal", "markdown", "json", "csv", "latex")
_PER_QUERY_FORMATS = ("csv", "parquet")


@dataclass(frozen=True)
class CrossCheckSettings:
    """``crosscheck:``: the libraries every value is compared with (see :func:`evalbridge.crosscheck`)."""

    backends: tuple[str, ...] = ("pytrec_eval", "ranx", "ir_measures")
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
class PlotSettings:
    """``output.plots:``: which figures, in which formats."""

    formats: tuple[str, ...] = ("png",)
    distribution: bool = True
    differences: bool = True
    curves: tuple[str, ...] = ()
    k: tuple[int, ...] = (1, 3, 5, 10, 20, 50, 100)


@dataclass(frozen=True)
class OutputSettings:
    """``output:``: where the reports go and in which formats."""

    dir: Path
    formats: tuple[str, ...] = ("markdown", "json", "csv")
    per_query: tuple[str, ...] = ("csv",)
    system_json: bool = True
    plots: PlotSettings | None = None
    digits: int = 4


@dataclass(frozen=True)
class Config:
    """One validated evaluation (one YAML document). Every field is documented in ``docs/config.md``."""

    path: Path
    title: str
    runs: Mapping[str, Source]
    metrics: tuple[Metric, ...]
    output: OutputSettings
    qrels: Source | None = None
    backend: str = "auto"
    min_relevance: float | None = None
    ties: str = "docid_desc"
    score_precision: str = "float64"
    missing_queries: str = "zero"
    crosscheck: CrossCheckSettings | None = None
    comparison: ComparisonSettings | None = None
    gates: tuple[Any, ...] = ()
    bands: Mapping[str, tuple[float, float, float]] | None = None
    seed: int = 0
    document: int = 0
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @property
    def where(self) -> str:
        """``path`` or ``path (document n)`` for messages."""
        return f"{self.path} (document {self.document + 1})" if self.document else str(self.path)


# ---------------------------------------------------------------- validation helpers

def _yaml_lines(text: str, source: str) -> list[dict[tuple, int]]:
    """Per document: key path -> line number. Also refuses duplicate keys (safe_load keeps the last silently)."""
    import yaml

    tables: list[dict[tuple, int]] = []

    def walk(node: Any, path: tuple, table: dict[tuple, int]) -> None:
        table.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key, value in node.value:
                name = key.value
                line = key.start_mark.line + 1
                if name in seen:
                    raise InputError(f"key {'.'.join(map(str, path + (name,)))!r} is given twice (lines "
                                     f"{seen[name]} and {line}).", source=source, line=line,
                                     fix="keep one of them.")
                seen[name] = line
                table[path + (name,)] = line
                walk(value, path + (name,), table)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, path + (i,), table)

    for document in yaml.compose_all(text, Loader=yaml.SafeLoader):
        table: dict[tuple, int] = {}
        if document is not None:
            walk(document, (), table)
        tables.append(table)
    return tables


def _dotted(path: tuple) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def _suggest(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.5)
    return f"did you mean {close[0]!r}? " if close else ""


class _Checker:
    """Type and value checks that raise :class:`InputError` naming file:line and the key path."""

    def __init__(self, source: str, lines: dict[tuple, int], document: int) -> None:
        self.source, self.lines, self.document = source, lines, document

    def fail(self, path: tuple, message: str, fix: str | None = None) -> InputError:
        line, probe = None, path
        while line is None and probe:
            line, probe = self.lines.get(probe), probe[:-1]
        prefix = f"document {self.document + 1}: " if self.document else ""
        return InputError(f"{prefix}{_dotted(path)}: {message}", source=self.source,
                          line=line if line is not None else self.lines.get(()), fix=fix)

    def mapping(self, value: Any, path: tuple, allowed: Sequence[str] | None, example: str) -> Mapping[str, Any]:
        """``value`` as a mapping whose keys are all in ``allowed`` (any key when None)."""
        if not isinstance(value, Mapping):
            raise self.fail(path, f"expected a mapping; got {type(value).__name__} {value!r:.60}.",
                            fix=f"write e.g. {example}.")
        for key in value if allowed is not None else ():
            if key not in allowed:
                raise self.fail(path + (key,), f"unknown key {key!r}.",
                                fix=f"{_suggest(key, allowed)}Allowed keys: {', '.join(allowed)}.")
        return value

    def choice(self, value: Any, path: tuple, allowed: Sequence[str]) -> str:
        if value not in allowed:
            raise self.fail(path, f"must be one of {', '.join(map(repr, allowed))}; got {value!r}.",
                            fix=f"{_suggest(str(value), allowed)}".strip() or None)
        return value

    def choices(self, value: Any, path: tuple, allowed: Sequence[str]) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list):
            raise self.fail(path, f"expected a list of {', '.join(allowed)}; got {value!r}.")
        return tuple(self.choice(item, path + (i,), allowed) for i, item in enumerate(items))

    def number(self, value: Any, path: tuple, *, low: float | None = None, high: float | None = None,
               integer: bool = False, strict_low: bool = False) -> float:
        kind = "a whole number" if integer else "a number"
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if ok and integer and not float(value).is_integer():
            ok = False
        if ok and low is not None and (value < low or (strict_low and value == low)):
            ok = False
        if ok and high is not None and value > high:
            ok = False
        if not ok:
            bounds = "" if low is None else f" {'>' if strict_low else '>='} {low:g}"
            bounds += "" if high is None else f"{' and' if bounds else ''} <= {high:g}"
            raise self.fail(path, f"must be {kind}{bounds}; got {value!r}.")
        return int(value) if integer else value

    def boolean(self, value: Any, path: tuple) -> bool:
        if not isinstance(value, bool):
            raise self.fail(path, f"must be true or false; got {value!r}.")
        return value

    def string(self, value: Any, path: tuple) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(path, f"must be a non-empty string; got {value!r}.")
        return value

    def existing_file(self, value: Any, path: tuple, folder: Path) -> Path:
        text = self.string(value, path)
        target = (folder / Path(text).expanduser()).resolve()
        if not target.is_file():
            hint = "check the path; paths are relative to the config file's folder."
            parent = target.parent
            if parent.is_dir():
                names = sorted(p.name for p in parent.iterdir())
                close = difflib.get_close_matches(target.name, names, n=1, cutoff=0.6)
                if close:
                    hint = f"did you mean {str(Path(text).parent / close[0])!r}? " + hint
            elif "robust04" in text:
                hint = "run `make demo-data` first (it extracts the Robust04 files into .cache/robust04). " + hint
            raise self.fail(path, f"file {text!r} does not exist (looked for {target}).", fix=hint)
        return target


# ---------------------------------------------------------------- sections

def _source(check: _Checker, value: Any, path: tuple, folder: Path, kind: str) -> Source:
    """A config source, checked against the format registry (see :mod:`.sources`)."""
    key = _dotted(path)
    if isinstance(value, str):
        value = {"path": value}
    spec = check.mapping(value, path, None, "{path: run.txt, format: trec}")
    if ("path" in spec) == ("data" in spec):
        raise check.fail(path, "give exactly one of 'path' and 'data'.",
                         fix="point to a file with path:, or write the data inline with data: and a format.")
    given = spec.get("path")
    options = {k: v for k, v in spec.items() if k not in ("path", "data", "format")}
    file = check.existing_file(given, path + ("path",), folder) if given is not None else None
    try:
        fmt = check_source(spec.get("format"), kind, path=file, has_data="data" in spec, options=options)
    except InputError as error:
        bad = next((k for k in ("format", *options) if k in spec and repr(k) in str(error)), None)
        raise check.fail(path + ((bad,) if bad else ("format",) if "format" in spec else ()), str(error)) from None
    return Source(key=key, format=fmt, path=file, data=spec.get("data"), options=MappingProxyType(options),
                  written=str(given) if given is not None else None)


def _metrics(check: _Checker, value: Any) -> tuple[Metric, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise check.fail(("metrics",), f"expected a non-empty list of metric strings; got {value!r}.",
                         fix="write e.g. metrics: [nDCG@10, P@5, mrr].")
    out: list[Metric] = []
    for i, spec in enumerate(value):
        try:
            metric = parse_metric(str(spec) if isinstance(spec, (int, float)) else spec)
        except EvalbridgeError as error:
            raise check.fail(("metrics", i), str(error), fix="run `evalbridge metrics` for every name and option.")
        if metric not in out:
            out.append(metric)
    return tuple(out)


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
    atol = check.number(spec.get("atol", 1e-9), ("crosscheck", "atol"), low=0)
    canonicalise = check.boolean(spec.get("canonicalise", False), ("crosscheck", "canonicalise"))
    return CrossCheckSettings(tuple(backends), float(atol), canonicalise)


def _comparison(check: _Checker, value: Any, runs: Mapping[str, Source]) -> ComparisonSettings | None:
    from ..stats.compare import CORRECTIONS, TESTS

    if value is None:
        return None
    keys = ("baseline", "test", "correction", "alpha", "confidence", "n_resamples")
    spec = check.mapping(value, ("comparison",), keys, "{baseline: bm25, test: t, correction: holm, alpha: 0.05}")
    baseline = spec.get("baseline", next(iter(runs)))
    check.choice(baseline, ("comparison", "baseline"), list(runs))
    if len(runs) < 2:
        raise check.fail(("comparison",), "a comparison needs at least two runs.",
                         fix="add another run, or remove the comparison section.")
    return ComparisonSettings(
        baseline=baseline,
        test=check.choice(spec.get("test", "t"), ("comparison", "test"), list(TESTS)),
        correction=check.choice(spec.get("correction", "holm"), ("comparison", "correction"), list(CORRECTIONS)),
        alpha=check.number(spec.get("alpha", 0.05), ("comparison", "alpha"), low=0, high=1, strict_low=True),
        confidence=check.number(spec.get("confidence", 0.95), ("comparison", "confidence"), low=0, high=1,
                                strict_low=True),
        n_resamples=check.number(spec.get("n_resamples", 10_000), ("comparison", "n_resamples"), low=1,
                                 integer=True))


def _gates(check: _Checker, value: Any, metrics: Sequence[Metric], runs: Mapping[str, Source],
           comparison: ComparisonSettings | None) -> tuple[Any, ...]:
    from ..stats.gates import parse_gates

    if value is None:
        return ()
    spec = check.mapping(value, ("gates",), None, "{recall@5: '>= 0.80', ndcg@10: '>= baseline - 0.01'}")
    out = []
    for key, expressions in spec.items():
        try:
            gates = parse_gates({key: expressions})
        except EvalbridgeError as error:
            raise check.fail(("gates", key), str(error))
        for gate in gates:
            if gate.metric not in metrics:
                raise check.fail(("gates", key), f"{gate.metric} is not one of the metrics "
                                                 f"({', '.join(map(str, metrics))}).",
                                 fix=f"add {gate.metric} to metrics, or gate a metric that is evaluated.")
            if gate.system is not None and gate.system not in runs:
                raise check.fail(("gates", key), f"system {gate.system!r} is not one of the runs.",
                                 fix=f"{_suggest(gate.system, list(runs))}Runs: {', '.join(runs)}.")
            if gate.relative and comparison is None:
                raise check.fail(("gates", key), f"{gate.text!r} is relative to the baseline, but there is none.",
                                 fix="add comparison: {baseline: <run name>}.")
        out += gates
    return tuple(out)


def _bands(check: _Checker, value: Any) -> Mapping[str, tuple[float, float, float]] | None:
    from ..metrics.catalogue import METRICS
    from ..reports.report import QUALITY_BANDS

    if value is None or value is False:
        return None
    if value is True:
        return QUALITY_BANDS
    spec = check.mapping(value, ("bands",), None, "{nDCG: [0.5, 0.7, 0.85], recall@5: [0.6, 0.75, 0.85]}")
    out = {}
    for key, bounds in spec.items():
        path = ("bands", key)
        if key in METRICS:
            name = key
        else:
            try:
                name = str(parse_metric(key))
            except EvalbridgeError as error:
                raise check.fail(path, f"{error} (a band key is a metric family such as nDCG, or a metric).")
        if not (isinstance(bounds, list) and len(bounds) == 3):
            raise check.fail(path, f"expected three increasing lower bounds [fair, good, excellent]; got {bounds!r}.")
        values = tuple(check.number(b, path + (i,)) for i, b in enumerate(bounds))
        if not values[0] <= values[1] <= values[2]:
            raise check.fail(path, f"the bounds must increase; got {list(values)}.")
        out[name] = values
    return MappingProxyType(out)


def _plots(check: _Checker, value: Any) -> PlotSettings | None:
    from ..metrics.catalogue import METRICS
    from ..reports.plots import FORMATS

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
        raise check.fail(path + ("curves",), f"expected a list of metric families; got {curves!r}.")
    for i, family in enumerate(curves):
        if family not in METRICS or METRICS[family].cutoff == "none":
            raise check.fail(path + ("curves", i), f"{family!r} is not a metric family with a cutoff.",
                             fix=f"{_suggest(str(family), list(METRICS))}use e.g. nDCG, P, R, AP, RR, Success.")
    ks = spec.get("k", list(PlotSettings.k))
    if not isinstance(ks, list) or not ks:
        raise check.fail(path + ("k",), f"expected a list of cutoffs; got {ks!r}.")
    ks = [check.number(k, path + ("k", i), low=1, integer=True) for i, k in enumerate(ks)]
    return PlotSettings(
        formats=check.choices(spec.get("formats", ["png"]), path + ("formats",), FORMATS),
        distribution=check.boolean(spec.get("distribution", True), path + ("distribution",)),
        differences=check.boolean(spec.get("differences", True), path + ("differences",)),
        curves=tuple(curves), k=tuple(sorted(set(ks))))


def _output(check: _Checker, value: Any, folder: Path, default_dir: str) -> OutputSettings:
    spec = check.mapping(value or {}, ("output",), ("dir", "formats", "per_query", "system_json", "plots", "digits"),
                         "{dir: ../reports/demo, formats: [markdown, json, csv, latex]}")
    directory = check.string(spec.get("dir", default_dir), ("output", "dir"))
    return OutputSettings(
        dir=(folder / Path(directory).expanduser()).resolve(),
        formats=check.choices(spec.get("formats", list(OutputSettings.formats)), ("output", "formats"),
                              _REPORT_FORMATS),
        per_query=check.choices(spec.get("per_query", list(OutputSettings.per_query)), ("output", "per_query"),
                                _PER_QUERY_FORMATS),
        system_json=check.boolean(spec.get("system_json", True), ("output", "system_json")),
        plots=_plots(check, spec.get("plots")),
        digits=check.number(spec.get("digits", 4), ("output", "digits"), low=0, high=12, integer=True))


def _validate(raw: Any, *, path: Path, lines: dict[tuple, int], document: int, count: int) -> Config:
    from ..backends import BACKENDS, get_backend, unsupported
    from ..model import MISSING_QUERY_POLICIES, SCORE_PRECISIONS, TIE_POLICIES

    check = _Checker(str(path), lines, document)
    spec = check.mapping(raw, (), list(TOP_KEYS), "{qrels: qrels.txt, runs: {bm25: bm25.run}, metrics: [nDCG@10]}")
    for required in ("runs", "metrics"):
        if required not in spec:
            raise check.fail((), f"the config has no {required!r} key.",
                             fix="every config needs runs: and metrics: (see docs/config.md).")
    folder = path.parent
    runs_spec = check.mapping(spec["runs"], ("runs",), None, "{bm25: runs/bm25.txt}")
    if not runs_spec:
        raise check.fail(("runs",), "no run is given.", fix="add at least one: runs: {bm25: runs/bm25.txt}.")
    runs = {str(name): _source(check, value, ("runs", name), folder, "run") for name, value in runs_spec.items()}
    qrels = _source(check, spec["qrels"], ("qrels",), folder, "qrels") if spec.get("qrels") is not None else None
    for name, source in runs.items():
        if source.carries_qrels and qrels is not None:
            raise check.fail(("runs", name, "format"), f"format {source.format!r} holds its own judgements, so the "
                                                       f"top-level qrels would be ignored.",
                             fix="remove qrels:, or give this run in a run format (trec, json, ranked, ...).")
        if not source.carries_qrels and qrels is None:
            raise check.fail(("runs", name), f"format {source.format!r} is a run without judgements, and the "
                                             f"config has no qrels.", fix="add qrels: <path to the qrels>.")
    metrics = _metrics(check, spec["metrics"])
    backend = check.choice(spec.get("backend", "auto"), ("backend",), list(BACKENDS))
    module = get_backend(backend)
    for i, metric in enumerate(metrics):
        reason = unsupported(module, metric)
        if reason is not None:
            raise check.fail(("metrics", i), f"backend {backend!r} cannot compute {metric}: {reason}",
                             fix="use backend: auto or reference, or run `evalbridge metrics` for who supports what.")
    min_relevance = spec.get("min_relevance")
    if min_relevance is not None:
        min_relevance = check.number(min_relevance, ("min_relevance",))
    comparison = _comparison(check, spec.get("comparison"), runs)
    seed = check.number(spec.get("seed", 0), ("seed",), low=0, integer=True)
    stem = path.stem + (f"-{document + 1}" if count > 1 else "")
    return Config(
        path=path, document=document, title=str(spec.get("title") or stem), runs=MappingProxyType(runs),
        metrics=metrics, qrels=qrels, backend=backend, min_relevance=min_relevance,
        ties=check.choice(spec.get("ties", "docid_desc"), ("ties",), TIE_POLICIES),
        score_precision=check.choice(spec.get("score_precision", "float64"), ("score_precision",), SCORE_PRECISIONS),
        missing_queries=check.choice(spec.get("missing_queries", "zero"), ("missing_queries",),
                                     MISSING_QUERY_POLICIES),
        crosscheck=_crosscheck(check, spec.get("crosscheck")), comparison=comparison,
        gates=_gates(check, spec.get("gates"), metrics, runs, comparison), bands=_bands(check, spec.get("bands")),
        output=_output(check, spec.get("output"), folder, f"reports/{stem}"), seed=seed,
        raw=MappingProxyType(dict(spec)))


def load_configs(path: str | os.PathLike) -> list[Config]:
    """Load and validate every evaluation (YAML document) in a config file.

    Raises:
        InputError: the file is missing or not YAML, or any setting is invalid (the message
            names file:line, the key path, the value and a fix).
    """
    import yaml

    path = Path(path).resolve() if Path(path).exists() else Path(path)
    if not path.is_file():
        raise InputError("the config file does not exist.", source=str(path),
                         fix="check the path; configs live in configs/*.yaml.")
    text = path.read_text(encoding="utf-8")
    try:
        documents = [d for d in yaml.safe_load_all(text)]
        lines = _yaml_lines(text, str(path))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise InputError(f"not valid YAML: {problem}.", source=str(path),
                         line=mark.line + 1 if mark is not None else None,
                         fix="check indentation and quote strings that start with special characters "
                             "(e.g. '>= 0.8').") from None
    kept = [(i, d) for i, d in enumerate(documents) if d is not None]
    if not kept:
        raise InputError("the config file is empty.", source=str(path), fix="see configs/*.yaml for examples.")
    configs = [_validate(d, path=path, lines=lines[i], document=i, count=len(kept)) for i, d in kept]
    dirs = [c.output.dir for c in configs]
    if len(set(dirs)) != len(dirs):
        raise InputError("two evaluations in the file write to the same output.dir.", source=str(path),
                         fix="give each document its own output: {dir: ...}.")
    return configs


def load_config(path: str | os.PathLike) -> Config:
    """Load and validate a config file that holds one evaluation (see :func:`load_configs`)."""
    configs = load_configs(path)
    if len(configs) != 1:
        raise InputError(f"the file holds {len(configs)} evaluations.", source=str(path),
                         fix="use load_configs() to get them all.")
    return configs[0]


# ---------------------------------------------------------------- running

@contextlib.contextmanager
def _reading(config: Config, source: Source) -> Iterator[None]:
    """Prefix an input error with the config and the key it comes from (inline data has no file of its own)."""
    try:
        yield
    except InputError as error:
        raise InputError(f"{source.key} ({source.format}): {error}", source=config.where) from None


@dataclass(frozen=True)
class Outcome:
    """What :func:`run_config` produced.

    Attributes:
        config: the evaluation.
        report: the :class:`~evalbridge.reports.report.Report` (results, comparison, gates, cross-checks).
        files: every file written.
    """

    config: Config
    report: Any
    files: tuple[Path, ...] = ()

    @property
    def failures(self) -> list[str]:
        """One line per failed gate and per system whose cross-check found unexplained differences."""
        lines = [g.reason for g in self.report.failed_gates]
        lines += [f"cross-check {system}: {len(check.unexplained)} unexplained difference(s)"
                  for system, check in self.report.crosscheck.items() if not check.ok]
        return lines

    @property
    def exit_code(self) -> int:
        """0 when every gate passed and every cross-check difference is explained, else 1."""
        return 1 if self.failures else 0


def _fingerprint(source: Source) -> dict[str, Any]:
    from ..reports.report import file_sha256

    if source.path is not None:
        return {"path": source.written, "format": source.format, "sha256": file_sha256(source.path)}
    import hashlib

    text = json.dumps(source.data, sort_keys=True, ensure_ascii=False, default=str)
    return {"path": None, "format": source.format, "inline": True,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _steps(config: Config) -> int:
    n = len(config.runs)
    plots = config.output.plots
    return (1 + n + (n if config.crosscheck else 0) + (1 if config.comparison else 0)
            + (n if plots and plots.curves else 0) + 1)


def run_config(config: Config, *, output_dir: str | os.PathLike | None = None,
               on_step: Callable[[str, int, int], None] | None = None, write: bool = True) -> Outcome:
    """Run one validated evaluation: load inputs, evaluate every system, cross-check, compare, gate, write.

    Args:
        config: from :func:`load_config`.
        output_dir: overrides ``output.dir``.
        on_step: called as ``on_step(description, done, total)`` before each step (progress bars).
        write: False computes everything but writes no file.

    Returns:
        :class:`Outcome`; ``exit_code`` is 1 when a gate failed or a cross-check found unexplained
        differences.
    """
    import evalbridge

    from ..stats.compare import compare_systems
    from ..stats.gates import check_gates
    from ..reports.report import Report, file_sha256, label_of, make_provenance

    total, done = _steps(config), 0

    def step(text: str) -> None:
        nonlocal done
        if on_step is not None:
            on_step(text, done, total)
        done += 1

    level = config.min_relevance
    step("reading the qrels")
    shared = None
    if config.qrels is not None:
        with _reading(config, config.qrels):
            shared = load_qrels(config.qrels, level)
    options = dict(backend=config.backend, min_relevance=level, ties=config.ties,
                   score_precision=config.score_precision, missing_queries=config.missing_queries)
    inputs, results, checks, pairs = {}, {}, {}, {}
    if config.qrels is not None:
        inputs["qrels"] = _fingerprint(config.qrels)
    for name, source in config.runs.items():
        step(f"evaluating {name}")
        with _reading(config, source):
            qrels, run = load_run(source, name, shared, level)
        pairs[name] = (qrels, run)
        inputs[source.key] = _fingerprint(source)
        results[name] = evalbridge.evaluate(qrels, run, config.metrics, **options)
    if config.crosscheck is not None:
        for name, (qrels, run) in pairs.items():
            step(f"cross-checking {name}")
            checks[name] = evalbridge.crosscheck(
                qrels, run, config.metrics, backends=config.crosscheck.backends, atol=config.crosscheck.atol,
                canonicalise=config.crosscheck.canonicalise, min_relevance=level, ties=config.ties,
                score_precision=config.score_precision, missing_queries=config.missing_queries)
    first = next(iter(results.values()))
    labels = [label_of(first, m) for m in config.metrics]
    comparison = None
    if config.comparison is not None:
        step("comparing with the baseline")
        c = config.comparison
        comparison = compare_systems(results, config.metrics, labels=labels, baseline=c.baseline, test=c.test,
                                     correction=c.correction, alpha=c.alpha, confidence=c.confidence,
                                     n_resamples=c.n_resamples, seed=config.seed)
    gates = check_gates(config.gates, results, baseline=config.comparison.baseline if config.comparison else None)
    provenance = make_provenance(
        results, inputs=inputs, backends=[config.backend, *(config.crosscheck.backends if config.crosscheck else ())],
        seed=config.seed, metrics=labels, config={"path": config.path.name, "document": config.document + 1,
                                  "sha256": file_sha256(config.path), "settings": dict(config.raw)})
    report = Report(results=results, metrics=config.metrics, title=config.title, comparison=comparison,
                    gates=tuple(gates), crosscheck=checks, bands=config.bands, provenance=provenance,
                    digits=config.output.digits)
    curves: dict[str, dict[str, dict[int, float]]] = {}
    plots = config.output.plots
    if plots and plots.curves:
        for name, (qrels, run) in pairs.items():
            step(f"metric@k curves of {name}")
            wanted = [f"{family}@{k}" for family in plots.curves for k in plots.k]
            res = evalbridge.evaluate(qrels, run, wanted, **options)
            for family in plots.curves:
                curves.setdefault(family, {})[name] = {k: res[f"{family}@{k}"] for k in plots.k}
    step("writing the reports")
    files = _write(report, config, Path(output_dir) if output_dir is not None else config.output.dir, curves) \
        if write else []
    return Outcome(config=config, report=report, files=tuple(files))


def _write(report: Any, config: Config, folder: Path, curves: Mapping[str, Any]) -> list[Path]:
    from ..reports.plots import plot_cutoff_curves, plot_differences, plot_distribution, slug
    from ..reports.report import SUFFIXES, jsonable, render, report_dict, system_json, write_atomic, write_per_query

    files = []
    for fmt in config.output.formats:
        files.append(write_atomic(folder / f"report{SUFFIXES[fmt]}", render(report, fmt)))
    if "csv" in config.output.formats and report.comparison is not None:
        files.append(write_atomic(folder / "comparison.csv",
                                  report.comparison.to_frame().to_csv(index=False, lineterminator="\n")))
    files.append(write_atomic(folder / "provenance.json",
                              json.dumps(report_dict(report)["provenance"], indent=2, allow_nan=False) + "\n"))
    for fmt in config.output.per_query:
        files.append(write_per_query(report.results, folder / f"per_query.{fmt}", fmt=fmt,
                                     provenance=report.provenance))
    if config.output.system_json:
        for name, res in report.results.items():
            data = system_json(res, {**report.provenance, "system": name})
            files.append(write_atomic(folder / "systems" / f"{slug(name)}.json",
                                      json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n"))
    plots = config.output.plots
    if plots is not None:
        out = folder / "plots"
        for metric, label in zip(report.metrics, report.labels):
            values = {name: res.query(metric) for name, res in report.results.items()}
            if plots.distribution:
                files += plot_distribution(values, label, out / f"distribution_{slug(label)}", formats=plots.formats)
            if plots.differences and report.comparison is not None:
                files += plot_differences(values, report.comparison.baseline, label,
                                          out / f"difference_{slug(label)}", formats=plots.formats)
        for family, by_system in curves.items():
            files += plot_cutoff_curves(by_system, family, out / f"curve_{slug(family)}", formats=plots.formats)
    return files

