"""The config validator: a raw description (a YAML document, or what a command line gives) checked into one
:class:`~evalbridge.config.layout.Config`, section by section (:mod:`.sections`), each value by its one rule.

A config file (YAML) and a command line (``evalbridge eval`` / ``check``) describe the same thing, a
:class:`Config`; both are checked by :func:`validate`, so a value has one rule and one message wherever
it is given. Only the way a setting is *named* in messages differs: ``file:line`` and the key path for a
YAML document (:class:`~evalbridge.config.checking.YamlLocator`), the flag for a command line
(:class:`~evalbridge.config.checking.FlagLocator`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..io.registry import BESIDE_QRELS
from ..common.wording import option
from .checking import Checker, Locator
from .analyses import ANALYSES, TOP_KEYS, Given, read_analyses
from .layout import ENGINES, Config, OfficialNotes
from .sections import (read_bands, read_comparison, read_crosscheck, read_gates, read_metrics,
                       read_name, read_official, read_output, read_policies, read_settings, read_slices, read_source,
                       read_spark, read_supported, read_tracking)

if TYPE_CHECKING:
    from ..io.yamldata import KeyPath
    from .sources import Source

__all__ = ["validate", "with_tracking"]


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
)


def _default_title(stem: str, qrels: Source | None) -> str:
    """A config's title when it gives none: the dataset its qrels name (``irds:<id>``), else its file's stem."""
    return qrels.written if qrels is not None and qrels.named is not None and qrels.written else stem


def _on_spark(check: Checker, config: Config) -> None:
    """Refuse, before anything runs, what ``engine: spark`` does not compute (each with its key's line)."""
    analyses = tuple(((a.key,), lambda c, key=a.key: key in c.analyses, a.spark) for a in ANALYSES if a.spark)
    for key, asked, why in (*_NOT_ON_SPARK, *analyses):
        if asked(config):
            raise check.fail(key, f"{why}, so it cannot be combined with {option('engine', 'spark')}.",
                             fix=f"remove {check.locator.label(key)}, or use {option('engine', 'local')}.")
    for i, asked in enumerate(config.metrics):
        if "in_pool" in asked.metric.inputs:
            raise check.fail(("metrics", i), f"{asked.label} reads the pool (the docs judged for any query), but the Spark "
                                             f"engine evaluates each bucket of queries with only their own judgements.",
                             fix=f"evaluate this metric with {option('engine', 'local')}.")


def with_tracking(config: Config, given: Mapping[str, Mapping[str, Any]], locator: Locator) -> Config:
    """``config`` with the tracking options of a command line (``evalbridge run --mlflow URI``) over its own
    ``tracking:`` section, the whole section checked again by the one validator (messages name the flags)."""
    from dataclasses import replace

    raw = {name: dict(options) for name, options in (config.raw.get("tracking") or {}).items()}
    for name, options in given.items():
        raw.setdefault(name, {}).update({k: v for k, v in options.items() if v is not None})
    return replace(config, tracking=read_tracking(Checker(locator), raw or None))


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
    check = Checker(locator)
    spec = check.mapping(raw, (), list(TOP_KEYS), "{qrels: qrels.txt, runs: {bm25: bm25.run}, metrics: [nDCG@10]}")
    # a section that names its own judgements and runs (the agreement's) may be the whole config
    alone = [a.key for a in ANALYSES if a.alone is not None and spec.get(a.key) is not None and a.alone(spec[a.key])
             ] if "runs" not in spec else []
    # one that needs no runs (the judges' labels alone) keeps the config's qrels
    runless = [a.key for a in ANALYSES if a.runs_optional and spec.get(a.key) is not None] if "runs" not in spec \
        else []
    for required in ("runs", "metrics") if not alone and not runless else ():
        if required not in spec:
            raise check.fail((), f"the config has no {required!r} key.",
                             fix="every config needs runs: and metrics:, or a section that names its own runs ("
                                 + ", ".join(f"{a.key}:" for a in ANALYSES if a.alone is not None)
                                 + "; see docs/config.md).")
    if alone and not runless and spec.get("qrels") is not None:
        raise check.fail(("qrels",), f"qrels are given but no runs to evaluate with them (the {alone[0]} section "
                                     f"names its own inputs).",
                         fix=f"add runs:, or remove qrels: (give the judgements in the {alone[0]} section, if it "
                             f"takes any).")
    runs_spec = check.mapping(spec.get("runs", {}), ("runs",), None, "{bm25: runs/bm25.txt}")
    if not runs_spec and not alone and not runless:
        raise check.fail(("runs",), "no run is given.", fix="add at least one: runs: {bm25: runs/bm25.txt}.")
    engine = check.choice(spec.get("engine", "local"), ("engine",), list(ENGINES))
    spark = read_spark(check, spec.get("spark"), engine)
    settings = read_settings(check, spec)
    policies = read_policies(settings)
    runs = {read_name(check, name, ("runs", name), "system"): read_source(check, value, ("runs", name), folder, "run", engine,
                                                                  policies)
            for name, value in runs_spec.items()}
    qrels = read_source(check, spec["qrels"], ("qrels",), folder, "qrels", engine, policies) \
        if spec.get("qrels") is not None else None
    for name, source in runs.items():
        paired = source.carries_qrels
        if paired and qrels is not None:
            raise check.fail(("runs", name, "format"), f"format {source.format!r} {BESIDE_QRELS} "
                                                       f"({'the top-level qrels:' if check.locator.source else 'QRELS'})"
                                                       f"; evalbridge does not choose which judge.",
                             fix=("remove qrels:" if check.locator.source else "evaluate it alone, without QRELS")
                                 + ", or give this run in a run format (trec, json, ranked, ...).")
        if not paired and qrels is None:
            raise check.fail(("runs", name), f"format {source.format!r} is a run without judgements, and the "
                                             f"config has no qrels.", fix="add qrels: <path to the qrels>.")
    judged = [read_source(check, section[key], (analysis.key, key), folder, "qrels", engine, policies)
              for analysis in ANALYSES if isinstance(section := spec.get(analysis.key), Mapping)
              for key in analysis.official if section.get(key) is not None]  # (ppi's human, as eb.ppi takes it)
    asked, official = read_official(check, spec["metrics"], ("metrics",), qrels, *judged) if "metrics" in spec \
        else (None, ())
    metrics = read_metrics(check, asked, ("metrics",)) if "metrics" in spec else ()
    backend = settings.backend
    read_supported(check, [r.metric for r in metrics], backend, ("metrics",))
    seed = check.rule(spec.get("seed", 0), ("seed",), "seed")
    comparison = read_comparison(check, spec.get("comparison"), runs, seed)
    from ..decisions.gates import ON_INCONCLUSIVE
    stem = (path.stem if path is not None else "evalbridge") + (f"-{document + 1}" if count > 1 else "")
    config = Config(
        path=path, document=document, title=read_name(check, spec.get("title") or _default_title(stem, qrels), ("title",), "report title"),
        runs=MappingProxyType(runs),
        metrics=metrics, qrels=qrels, settings=settings, crosscheck=read_crosscheck(check, spec.get("crosscheck")),
        comparison=comparison,
        gates=read_gates(check, spec.get("gates"), metrics, runs, comparison),
        on_inconclusive=check.choice(spec.get("on_inconclusive", "fail"), ("on_inconclusive",), ON_INCONCLUSIVE),
        bands=read_bands(check, spec.get("bands"), [r.label for r in metrics]),
        output=read_output(check, spec.get("output"), folder, default_dir.format(stem=stem) if default_dir else None),
        seed=seed, engine=engine, spark=spark, tracking=read_tracking(check, spec.get("tracking")),
        slices=read_slices(check, spec.get("slices"), folder),
        analyses=read_analyses(check, spec, Given(folder=folder, qrels=qrels, runs=MappingProxyType(runs),
                                                  metrics=metrics, policies=policies, comparison=comparison,
                                                  backend=backend)),
        raw=MappingProxyType(dict(spec)))
    sections = [note for settings in config.analyses.values() if isinstance(settings, OfficialNotes)
                for note in settings.official]  # what official took in metrics:, then in each section, each once
    config = replace(config, official=tuple(dict.fromkeys([*official, *sections])))
    if engine == "spark":
        _on_spark(check, config)
    if config.tracking and not config.runs:
        raise check.fail(("tracking",), "a tracker logs the systems' means and per-query values, and this config "
                                        "evaluates no system (an agreement alone).",
                         fix="add runs:, or remove tracking:.")
    return config
