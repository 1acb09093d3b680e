"""The one run pipeline: a validated description (:class:`~evalbridge.config.schema.Config`) -> results -> reports.

``evalbridge run CONFIG``, ``evalbridge eval``, ``evalbridge check`` and the Python :func:`run_config`
all describe an evaluation as a ``Config`` (from a YAML file or from command-line flags, checked by one
schema, :mod:`evalbridge.config.schema`) and call :func:`run_config`: inputs are read through the format
registry (:mod:`evalbridge.io`), every system is evaluated, cross-checked, compared and gated the same
way, and one :class:`~evalbridge.reports.report.Report` comes out, rendered and written by the same code.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config.schema import Config
from .config.sources import Source
from .errors import InputError

__all__ = ["run_config", "Outcome", "settings_of"]


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


class _Hashes:
    """The sha256 of the input files, computed on one worker thread started before anything is read.

    ``hashlib`` (and reading a mapped file) lets go of the GIL, so the hashing runs while the
    readers parse (Arrow's CSV reader, numpy and orjson let go of it too): on a machine with a free
    core the provenance's hashes cost no wall time (0.2 s of CPU for a 255 MB run file)."""

    def __init__(self, paths: list[Path]) -> None:
        from concurrent.futures import ThreadPoolExecutor

        from .reports.report import file_sha256

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalbridge-sha256")
        self._futures = {path: self._pool.submit(file_sha256, path) for path in dict.fromkeys(paths)}
        self._pool.shutdown(wait=False)  # the thread ends once the queued files are hashed

    def __getitem__(self, path: Path) -> str:
        return self._futures[path].result()

    def cancel(self) -> None:
        """Drop the files not started yet (the run stopped on an error)."""
        for future in self._futures.values():
            future.cancel()


def _fingerprint(source: Source, hashes: _Hashes) -> dict[str, Any]:
    if source.path is not None:
        return {"path": source.written, "format": source.format, "sha256": hashes[source.path]}
    import hashlib

    text = json.dumps(source.data, sort_keys=True, ensure_ascii=False, default=str)
    return {"path": None, "format": source.format, "inline": True,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _steps(config: Config) -> int:
    n = len(config.runs)
    plots = config.output.plots
    return (1 + n + (n if config.crosscheck else 0) + (1 if config.comparison else 0)
            + (n if plots and plots.curves else 0) + 1)


def settings_of(config: Config) -> dict[str, Any]:
    """The description of the evaluation as the provenance records it: the same whichever door built it
    (a config file, ``evalbridge eval`` / ``check``, or Python), so equal evaluations give equal reports."""
    return {"title": config.title, "metrics": [str(m) for m in config.metrics], "backend": config.backend,
            "min_relevance": config.min_relevance, "ties": config.ties, "score_precision": config.score_precision,
            "missing_queries": config.missing_queries, "judged_only": config.judged_only, "depth": config.depth,
            "crosscheck": None if config.crosscheck is None else {
                "backends": list(config.crosscheck.backends), "atol": config.crosscheck.atol,
                "canonicalise": config.crosscheck.canonicalise},
            "comparison": None if config.comparison is None else dict(vars(config.comparison)),
            "gates": [str(g) for g in config.gates], "seed": config.seed}


def run_config(config: Config, *, output_dir: str | os.PathLike | None = None,
               on_step: Callable[[str, int, int], None] | None = None, write: bool = True) -> Outcome:
    """Run one validated evaluation: load inputs, evaluate every system, cross-check, compare, gate, write.

    Every door runs evaluations through this function: ``evalbridge run``, ``evalbridge eval`` and
    ``evalbridge check`` build a :class:`~evalbridge.config.schema.Config` (from a YAML file or from their
    flags, checked by the same schema) and call it.

    Args:
        config: from :func:`load_config`.
        output_dir: overrides ``output.dir``.
        on_step: called as ``on_step(description, done, total)`` before each step (progress bars).
        write: False computes everything but writes no file.

    Returns:
        :class:`Outcome`; ``exit_code`` is 1 when a gate failed or a cross-check found unexplained
        differences.
    """
    folder = Path(output_dir) if output_dir is not None else config.output.dir
    sources = [s.path for s in (config.qrels, *config.runs.values()) if s is not None and s.path is not None]
    if write and folder is not None:
        from .reports.writing import guard_outputs

        guard_outputs([*([config.path] if config.path is not None else []), *sources], [folder])
    hashes = _Hashes([*sources, *([config.path] if config.path is not None else [])])
    try:
        return _run(config, hashes, output_dir=output_dir, on_step=on_step, write=write)
    finally:
        hashes.cancel()


def _run(config: Config, hashes: _Hashes, *, output_dir: str | os.PathLike | None,
         on_step: Callable[[str, int, int], None] | None, write: bool) -> Outcome:
    """:func:`run_config` once the outputs are checked and the input files are being hashed."""
    import evalbridge

    from .config.sources import load_qrels, load_run
    from .stats.compare import compare_systems
    from .stats.gates import check_gates
    from .reports.report import Report, label_of, make_provenance

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
                   score_precision=config.score_precision, missing_queries=config.missing_queries,
                   judged_only=config.judged_only, depth=config.depth)
    results, checks, pairs = {}, {}, {}
    for name, source in config.runs.items():
        step(f"evaluating {name}")
        with _reading(config, source):
            qrels, run = load_run(source, name, shared, level)
        pairs[name] = (qrels, run)
        results[name] = evalbridge.evaluate(qrels, run, config.metrics, **options)
    # The hashes are asked for once everything is read and evaluated: meanwhile they were computed.
    inputs = {"qrels": _fingerprint(config.qrels, hashes)} if config.qrels is not None else {}
    inputs.update((source.key, _fingerprint(source, hashes)) for source in config.runs.values())
    if config.crosscheck is not None:
        for name, (qrels, run) in pairs.items():
            step(f"cross-checking {name}")
            checks[name] = evalbridge.crosscheck(
                qrels, run, config.metrics, backends=config.crosscheck.backends, atol=config.crosscheck.atol,
                canonicalise=config.crosscheck.canonicalise, min_relevance=level, ties=config.ties,
                score_precision=config.score_precision, missing_queries=config.missing_queries,
                judged_only=config.judged_only, depth=config.depth)
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
        seed=config.seed, metrics=labels, config=settings_of(config))
    provenance["invocation"] = ({"door": "command line"} if config.path is None else
                                {"door": "config", "path": config.path.name, "document": config.document + 1,
                                 "sha256": hashes[config.path]})
    report = Report(results=results, metrics=config.metrics, title=config.title, comparison=comparison,
                    gates=tuple(gates), crosscheck=checks, bands=config.bands, provenance=provenance,
                    digits=config.output.digits)
    curves: dict[str, tuple[Any, dict[str, dict[int, float]]]] = {}
    plots = config.output.plots
    if plots and plots.curves:
        from .reports.plots import curve_label, curve_variant, cutoff_curves

        first_results = next(iter(results.values()))
        variants = [curve_variant(spec, first_results) for spec in plots.curves]
        for name, (qrels, run) in pairs.items():
            step(f"metric@k curves of {name}")
            for variant in variants:
                curves.setdefault(curve_label(variant), (variant, {}))[1][name] = cutoff_curves(
                    qrels, run, variant, plots.k, **options)
    step("writing the reports")
    folder = Path(output_dir) if output_dir is not None else config.output.dir
    files = _write(report, config, folder, curves) if write and folder is not None else []
    return Outcome(config=config, report=report, files=tuple(files))


def _write(report: Any, config: Config, folder: Path, curves: Mapping[str, Any]) -> list[Path]:
    """Write the report folder whole: into a hidden sibling first, swapped in when complete, under a lock
    (:class:`~evalbridge.reports.writing.ReportFolder`); system and metric file names checked unique first."""
    from .reports.plots import plot_cutoff_curves, plot_differences, plot_distribution
    from .reports.report import SUFFIXES, jsonable, render, report_dict, system_json, write_per_query
    from .reports.writing import ReportFolder, unique_file_names

    systems = unique_file_names(report.results, suffix=".json")
    stems = unique_file_names(dict.fromkeys([*report.labels, *curves]))
    with ReportFolder(folder) as out:
        for fmt in config.output.formats:
            out.write_text(f"report{SUFFIXES[fmt]}", render(report, fmt))
        if "csv" in config.output.formats and report.comparison is not None:
            out.write_text("comparison.csv", report.comparison.to_frame().to_csv(index=False, lineterminator="\n"))
        out.write_text("provenance.json", json.dumps(report_dict(report)["provenance"], indent=2, allow_nan=False)
                       + "\n")
        for fmt in config.output.per_query:
            write_per_query(report.results, out.path_for(f"per_query.{fmt}"), fmt=fmt, provenance=report.provenance)
        if config.output.system_json:
            for name, res in report.results.items():
                data = system_json(res, {**report.provenance, "system": name})
                out.write_text(f"systems/{systems[name]}", json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n")
        plots = config.output.plots
        if plots is not None:
            plots_dir = out.dir_for("plots")
            for metric, label in zip(report.metrics, report.labels):
                values = {name: res.query(metric) for name, res in report.results.items()}
                if plots.distribution:
                    plot_distribution(values, label, plots_dir / f"distribution_{stems[label]}", formats=plots.formats)
                if plots.differences and report.comparison is not None:
                    plot_differences(values, report.comparison.baseline, label,
                                     plots_dir / f"difference_{stems[label]}", formats=plots.formats)
            for label, (variant, by_system) in curves.items():
                plot_cutoff_curves(by_system, variant, plots_dir / f"curve_{stems[label]}", formats=plots.formats)
    return list(out.files)
