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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .analyses import ANALYSES, Context, analysis_outputs, analysis_settings, analysis_sources, analysis_steps
from .layout import Config
from .sources import Source
from ..errors import InputError
from ..model.settings import ROWS
from ..common.wording import door, side

if TYPE_CHECKING:
    from ..reports.report import Report
    from ..tracking import Tracked

__all__ = ["run_config", "Outcome", "settings_of", "input_sources", "check_section_outputs"]


@contextlib.contextmanager
def _reading(config: Config, source: Source) -> Iterator[None]:
    """An input error in the words of the door: the file as the user wrote it; from a config, prefixed with the
    config file, line and key it comes from (inline data has no file of its own)."""
    try:
        with side("run" if "runs" in source.key.split(".") else "qrels"):
            yield
    except InputError as error:
        text = str(error)
        if source.path is not None and source.written is not None:
            text = text.replace(str(source.path), source.written)
        if config.path is None:  # a command line: the reader's own message, naming the file
            raise InputError(text if source.written is None or source.written in text
                             else f"{source.written}: {text}") from None
        raise InputError(f"{source.key} ({source.format}): {text}", source=config.where, line=source.line) from None


@dataclass(frozen=True)
class Outcome:
    """What :func:`run_config` produced.

    Attributes:
        config: the evaluation.
        report: the :class:`~evalbridge.reports.report.Report` (results, comparison, gates, cross-checks).
        files: every file written.
        tracked: where the evaluation was logged (``tracking:``): each tracker's parent run and system runs.
    """

    config: Config
    report: Report
    files: tuple[Path, ...] = ()
    tracked: tuple[Tracked, ...] = ()

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

        from ..reports.report import file_sha256

        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalbridge-sha256")
        self._futures = {path: self._pool.submit(file_sha256, path) for path in dict.fromkeys(paths)}
        self._pool.shutdown(wait=False)  # the thread ends once the queued files are hashed

    def __getitem__(self, path: Path) -> str:
        return self._futures[path].result()

    def cancel(self) -> None:
        """Drop the files not started yet (the run stopped on an error)."""
        for future in self._futures.values():
            future.cancel()


def _fingerprint(source: Source, hashes: _Hashes, read: Any = None) -> dict[str, Any]:
    """What the provenance records of an input: where it is and its hash, the options it was read with
    (columns, ``ids``, ``duplicates``...) and the notes of what reading it did (``read``: the Qrels / Run)."""
    found = _origin(source, hashes)
    if source.options:
        found["options"] = json.loads(json.dumps(dict(source.options), default=str))
    from ..model.data import Qrels, Run

    if isinstance(read, (Qrels, Run)) and read.notes:  # (with engine: spark the qrels are a DataFrame)
        found["notes"] = list(read.notes)
    if source.format == "irds" and source.named is not None:  # a dataset says what its grades mean
        from ..io.datasets import grade_meanings

        if meanings := grade_meanings(source.named):
            found["grades"] = meanings
    return found


def _topics(qrels: Any) -> dict[str, str]:  # noqa: ANN401 - Qrels, a Spark DataFrame or None
    """The query texts the qrels came with (a dataset's topics), for the report to name its queries by."""
    from ..model.data import Qrels

    return dict(qrels.topics) if isinstance(qrels, Qrels) else {}


def _origin(source: Source, hashes: _Hashes) -> dict[str, Any]:
    if source.table is not None:  # a table of Spark's catalog: its name is all there is here
        return {"path": None, "format": source.format, "table": source.table}
    if source.named is not None:  # a dataset by name (irds:...): read from ir_datasets' cache, which it checks
        return {"path": source.written, "format": source.format, "named": True}
    if source.path is not None and source.path.is_dir():  # a folder of Parquet files read by Spark
        files = sorted(p for p in source.path.rglob("*") if p.is_file())
        return {"path": source.written, "format": source.format, "folder": True, "files": len(files),
                "bytes": sum(p.stat().st_size for p in files)}
    if source.path is not None:
        return {"path": source.written, "format": source.format, "sha256": hashes[source.path]}
    import hashlib

    text = json.dumps(source.data, sort_keys=True, ensure_ascii=False, default=str)
    return {"path": None, "format": source.format, "inline": True,
            "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()}


def _steps(config: Config) -> int:
    n = len(config.runs)
    plots = config.output.plots
    return (1 + n + (n if config.crosscheck else 0) + (1 if config.comparison or config.slices else 0)
            + (n if plots and plots.curves else 0) + analysis_steps(config)
            + 1 + len(config.tracking))


def input_sources(config: Config) -> list[Source]:
    """Every input a config reads: the qrels, the runs, the inputs its analyses name (each once)."""
    sources = [config.qrels, *config.runs.values(), *analysis_sources(config)]
    return list({s.key: s for s in sources if s is not None}.values())


def check_section_outputs(config: Config, inputs: list[Path], *, files: list[Any] | None = None,
                          folders: list[Any] | None = None) -> None:
    """Refuse, before any work, a file a section writes (``pool: {batch}``) that is one of ``inputs`` (the files
    the command reads), overlaps the other outputs (``files``, ``folders``: the report folder) or is not a regular
    file (:func:`evalbridge.reports.writing.check_outputs`), in the config's words: its file, line and key."""
    from ..reports.writing import check_outputs

    for output in analysis_outputs(config):
        try:
            check_outputs(inputs, files=[output.path, *(files or [])], folders=folders or [])
        except InputError as error:
            text = str(error).replace(str(output.path), output.written)
            if config.path is None:  # a command line's flag: the file as typed
                raise InputError(text.removesuffix(f" Fix: {error.fix}"), fix=error.fix) from None
            raise InputError(f"{output.key}: {text}", source=config.where, line=output.line) from None


def settings_of(config: Config) -> dict[str, Any]:
    """The description of the evaluation as the provenance records it: the same whichever door built it
    (a config file, ``evalbridge eval`` / ``check``, or Python), so equal evaluations give equal reports."""
    evaluated = {name: value for name, value in config.settings.to_dict().items() if not ROWS[name].reads}
    return {"title": config.title, "metrics": [r.to_dict() for r in config.metrics], **evaluated,
            "engine": config.engine, "spark": None if config.spark is None else dict(vars(config.spark)),
            "crosscheck": None if config.crosscheck is None else {
                "backends": list(config.crosscheck.backends), "atol": config.crosscheck.atol,
                "canonicalise": config.crosscheck.canonicalise},
            "comparison": None if config.comparison is None else config.comparison.to_dict(),
            "gates": [str(g) for g in config.gates], "seed": config.seed,
            **analysis_settings(config)}


class _SparkDoor:
    """``engine: spark``: the session (the active one, else one started on ``spark.master``), every input
    as a Spark DataFrame (:func:`~evalbridge.config.sources.load_frame`), each run evaluated by
    :func:`evalbridge.spark.evaluate` and its per-query values collected as :class:`~evalbridge.evaluation.results.Results`."""

    def __init__(self, config: Config) -> None:
        from .. import spark

        settings = config.spark
        self.config, self.master, self.buckets = config, settings.master, settings.buckets  # type: ignore[union-attr]
        self.session, self.started = spark.session(master=self.master)
        self.used_buckets: int | None = None
        self.shared: Any = None  # the shared Qrels, when read here

    def qrels(self, source: Source) -> Any:
        from .sources import load_frame

        frame, self.shared = load_frame(source, "qrels", self.session, self.config.settings.min_relevance)
        return frame

    def evaluate(self, source: Source, shared: Any) -> Any:
        from .. import spark
        from .sources import load_frames

        c = self.config
        qrels, run, own = load_frames(source, shared, self.session, c.settings.min_relevance)
        read_here = own if own is not None else self.shared
        given = c.settings.min_relevance
        level = given if given is not None or read_here is None else read_here.min_relevance
        # the read policies were the readers' (duplicates); ids='str' also lets Spark's str and int ids meet
        evaluation = spark.evaluate(qrels, run, c.metrics, buckets=self.buckets,
                                    settings=c.settings.replace(min_relevance=level, duplicates="error"))
        self.used_buckets = evaluation.provenance.buckets
        try:
            results = evaluation.require_results()
        finally:
            evaluation.unpersist()
        if read_here is None:  # read by Spark: no order of its own; the queries stay sorted by id
            return results
        # The local engine's order (the qrels'), so that what reads queries by position (the bootstrap
        # of a comparison) gives the same numbers as with engine: local.
        order = list(read_here)
        return replace(results, values={m: {q: v[q] for q in order if q in v} for m, v in results.values.items()})

    def provenance(self) -> dict[str, Any]:
        """What the report says of the engine: Spark's version, the master, whose session, the buckets."""
        return {"name": "spark", "spark_version": self.session.version, "master": self.session.sparkContext.master,
                "session": "started by evalbridge" if self.started else "the active session",
                "buckets": self.used_buckets}


def run_config(config: Config, *, output_dir: str | os.PathLike[str] | None = None,
               on_step: Callable[[str, int, int], None] | None = None, write: bool = True,
               means: bool = True) -> Outcome:
    """Run one validated evaluation: load inputs, evaluate every system, cross-check, compare, gate, write.

    Every door runs evaluations through this function: ``evalbridge run``, ``evalbridge eval`` and
    ``evalbridge check`` build a :class:`~evalbridge.config.schema.Config` (from a YAML file or from their
    flags, checked by the same schema) and call it.

    Args:
        config: from :func:`load_config`.
        output_dir: overrides ``output.dir``.
        on_step: called as ``on_step(description, done, total)`` before each step (progress bars).
        write: False computes everything but writes no file.
        means: False when only the analyses are read (a command of the registry shows its section alone): a
            system is then evaluated with the config's metrics only if a step reads its results (an analysis's
            ``Context.results``, a comparison, a gate), and the report holds no systems' means.

    Returns:
        :class:`Outcome`; ``exit_code`` is 1 when a gate failed or a cross-check found unexplained
        differences.
    """
    if not isinstance(config, Config):
        raise InputError(f"run_config runs a Config; got {type(config).__name__} {config!r:.60}.",
                         fix="load one first: eb.run_config(eb.load_config('eval.yaml')).")
    folder = Path(output_dir) if output_dir is not None else config.output.dir
    sources = [s.path for s in input_sources(config) if s.path is not None]
    if write:
        from ..reports.writing import check_outputs

        table = [config.slices.file] if config.slices is not None and config.slices.file is not None else []
        read = [*([config.path] if config.path is not None else []), *sources, *table]
        if folder is not None:
            check_outputs(read, folders=[folder])
        check_section_outputs(config, read, folders=[folder])
    files = [path for path in sources if not path.is_dir()]  # a folder of Parquet files is described, not hashed
    hashes = _Hashes([*files, *([config.path] if config.path is not None else [])])
    try:
        # a config's messages speak its words (columns: {...}, min_relevance: 7); a command line's keep its own
        with door("config") if config.path is not None else contextlib.nullcontext():
            return _run(config, hashes, output_dir=output_dir, on_step=on_step, write=write, means=means)
    finally:
        hashes.cancel()


def _run(config: Config, hashes: _Hashes, *, output_dir: str | os.PathLike[str] | None,
         on_step: Callable[[str, int, int], None] | None, write: bool, means: bool) -> Outcome:
    """:func:`run_config` once the outputs are checked and the input files are being hashed."""
    from .sources import load_qrels, load_run
    from ..io import read_into_columns
    from ..evaluation.evaluating import evaluate
    from ..reports.report import Report, make_provenance

    total, done = _steps(config), 0

    def step(text: str) -> None:
        nonlocal done
        if on_step is not None:
            on_step(text, done, total)
        done += 1

    level = config.settings.min_relevance
    step("reading the qrels")
    shared = None
    engine = _SparkDoor(config) if config.engine == "spark" else None
    if config.qrels is not None:
        with _reading(config, config.qrels):
            # Qrels evaluated against a run read into columns are read into columns too, as evaluate() reads them.
            shared = engine.qrels(config.qrels) if engine else load_qrels(
                config.qrels, level, prefer_columns=any(read_into_columns(s.origin) for s in config.runs.values()))
    settings = config.settings
    checks: dict[str, Any] = {}
    pairs: dict[str, tuple[Any, Any]] = {}

    def evaluated(name: str) -> Any:
        if engine is not None:  # (Spark reads and evaluates in one step)
            with _reading(config, config.runs[name]):
                return engine.evaluate(config.runs[name], shared)
        qrels, run = pairs[name]
        return evaluate(qrels, run, config.metrics, settings=settings)

    results = _Evaluations(config.runs, evaluated)
    for name, source in config.runs.items():
        step(f"evaluating {name}")
        if engine is None:
            with _reading(config, source):
                pairs[name] = load_run(source, name, shared, level,
                                       config.slices.by if config.slices and config.slices.file is None else None)
        if means or engine is not None:
            results.now(name)
    _same_judgements(config, pairs)
    # The hashes are asked for once everything is read and evaluated: meanwhile they were computed.
    inputs = {"qrels": _fingerprint(config.qrels, hashes, shared)} if config.qrels is not None else {}
    inputs.update((source.key, _fingerprint(source, hashes, pairs[name][1] if name in pairs else None))
                  for name, source in config.runs.items())
    if config.crosscheck is not None:
        from ..cross_check.checking import crosscheck

        for name, (qrels, run) in pairs.items():
            step(f"cross-checking {name}")
            checks[name] = crosscheck(
                qrels, run, config.metrics, backends=config.crosscheck.backends, atol=config.crosscheck.atol,
                canonicalise=config.crosscheck.canonicalise, settings=settings.replace(backend="auto"))
    labels = [r.label for r in config.metrics]
    comparison = sliced = None
    groups = _slice_labels(config, pairs)
    if config.comparison is not None:
        from ..decisions.compare import compare_systems

        step("comparing with the baseline")
        c = config.comparison
        comparison = compare_systems(results, config.metrics, baseline=c.baseline, statistics=c.statistics,
                                     slices=groups)
        sliced = comparison.slices
    elif groups is not None:
        from ..evaluation.slices import slice_table

        step("slicing the queries")
        sliced = slice_table({name: {r.label: res.query(r) for r in config.metrics} for name, res in results.items()},
                             groups, seed=config.seed)
    standings = comparison.standings() if comparison is not None else None
    # every analysis measures the systems against the comparison's baseline, else the first run
    baseline = config.comparison.baseline if config.comparison is not None else next(iter(results), None)
    loaded = {config.runs[name].key: run for name, (_, run) in pairs.items()}
    context = Context(config=config, results=results, pairs=pairs, qrels=shared, baseline=baseline, step=step,
                      judgements=lambda source: _judgements(config, source, inputs, hashes),
                      run=lambda name, source, keep=True: _section_run(config, name, source, loaded, inputs, hashes,
                                                                       keep=keep))
    analyses = {}
    for analysis in ANALYSES:
        if (asked := config.analyses.get(analysis.key)) is not None:
            with _in_section(config, analysis.key):
                found = analysis.run(context, asked)
            if found is not None:
                analyses[analysis.key] = found
    for source in analysis_sources(config):  # every input a section names (a batch's texts too), read or to be
        inputs.setdefault(source.key, _fingerprint(source, hashes))
    gates = []
    if config.gates:
        from ..decisions.gates import check_gates

        gates = check_gates(config.gates, results, baseline=config.comparison.baseline if config.comparison else None,
                            on_inconclusive=config.on_inconclusive)
    shown = dict(results) if means else {}
    provenance = make_provenance(
        shown, inputs=inputs, backends=[config.settings.backend, *(config.crosscheck.backends if config.crosscheck else ())],
        seed=config.seed, metrics=labels, config=settings_of(config), conventions=_conventions(config))
    if config.official:  # which measures "official" took, said once (the decision's caveats show it)
        provenance["official"] = list(config.official)
    provenance["engine"] = engine.provenance() if engine is not None else {"name": "local"}
    if engine is not None:  # not a backend of evalbridge.backends: its version is the Spark engine's own
        provenance["backend_versions"] = {"spark": next(iter(results.values())).provenance.backend_version}
    provenance["invocation"] = ({"door": "command line"} if config.path is None else
                                {"door": "config", "path": config.path.name, "document": config.document + 1,
                                 "sha256": hashes[config.path]})
    report = Report(results=shown, metrics=config.metrics, title=config.title, comparison=comparison,
                    gates=tuple(gates), crosscheck=checks, bands=config.bands, provenance=provenance,
                    digits=config.output.digits, standings=standings, slices=sliced,
                    analyses=analyses, topics=_topics(shared))
    curves: dict[str, tuple[Any, dict[str, dict[int, float]]]] = {}
    plots = config.output.plots
    if plots and plots.curves and results:
        from ..reports.plots import curve_label, curve_variant, cutoff_curves

        first_results = next(iter(results.values()))
        variants = [curve_variant(spec, first_results) for spec in plots.curves]
        for name, (qrels, run) in pairs.items():
            step(f"metric@k curves of {name}")
            for variant in variants:
                curves.setdefault(curve_label(variant), (variant, {}))[1][name] = cutoff_curves(
                    qrels, run, variant, plots.k, settings=settings)
    step("writing the reports")
    folder = Path(output_dir) if output_dir is not None else config.output.dir
    if write and folder is not None:
        from ..reports.report_files import write_report_folder

        files = write_report_folder(report, config.output, folder, curves)
    else:
        files = []
    for analysis in ANALYSES:  # the files a section writes beside the folder (pool: {batch})
        if write and analysis.write is not None and analysis.key in analyses:
            with _in_section(config, analysis.key):
                files += analysis.write(context, config.analyses[analysis.key], analyses[analysis.key])
    tracked = []
    if report.results:
        from ..tracking import log

        for tracker, given in config.tracking.items():
            step(f"logging to {tracker}")
            tracked.append(log(tracker, report, given, where=f"tracking.{tracker}.{{}}".format))
    return Outcome(config=config, report=report, files=tuple(files), tracked=tuple(tracked))


class _Evaluations(Mapping[str, Any]):
    """System name -> its Results under the config's metrics and settings, each evaluated the first time a step
    reads it (:meth:`now`: at once): an analysis that reads the runs and not their results (``ppi``, ``judges``
    evaluate under labels of their own) costs no evaluation of the config's when its command shows it alone."""

    def __init__(self, names: Iterable[str], evaluate: Callable[[str], Any]) -> None:
        self._names, self._evaluate = list(names), evaluate
        self._found: dict[str, Any] = {}

    def now(self, name: str) -> Any:
        """The results of ``name``, evaluated now if they are not yet."""
        if name not in self._found:
            self._found[name] = self._evaluate(name)
        return self._found[name]

    def __getitem__(self, name: str) -> Any:
        if name not in self._names:
            raise KeyError(name)
        return self.now(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _judgements(config: Config, source: Source, inputs: dict[str, Any], hashes: _Hashes) -> Any:
    """Judgements a section names (a second set, a judge, probabilities), read through the registry."""
    from .sources import load_qrels

    with _reading(config, source):
        qrels = load_qrels(source, config.settings.min_relevance)
    inputs[source.key] = _fingerprint(source, hashes, qrels)
    return qrels


def _section_run(config: Config, name: str, source: Source, loaded: dict[str, Any], inputs: dict[str, Any],
                 hashes: _Hashes, *, keep: bool = True) -> Any:
    """A run a section names (the agreement's), read through the registry once: a run of the config's is the one
    read; ``keep=False``: read each time it is asked for and not kept (a section reading its runs one at a time)."""
    from .sources import load_run

    if source.key in loaded:
        return loaded[source.key]
    with _reading(config, source):
        run = load_run(source, name, None, config.settings.min_relevance)[1]
    inputs[source.key] = _fingerprint(source, hashes)
    if keep:
        loaded[source.key] = run
    return run


@contextlib.contextmanager
def _in_section(config: Config, section: str) -> Iterator[None]:
    """An input error of a section's computation, prefixed with the section in a config's words."""
    try:
        yield
    except InputError as error:
        if config.path is None:
            raise
        raise InputError(f"{section}: {error}", source=config.where) from None


def _slice_labels(config: Config, pairs: Mapping[str, tuple[Any, Any]]) -> Any:
    """The labels of ``slices:`` (a field the RAG logs kept, or a column of a query table), or None; an error names
    the config's key."""
    if config.slices is None:
        return None
    from ..evaluation.slices import slice_labels

    try:
        return slice_labels(config.slices.source, [run for _, run in pairs.values()])
    except InputError as error:
        if config.path is None:
            raise
        raise InputError(f"slices: {error}", source=config.where) from None


def _same_judgements(config: Config, pairs: Mapping[str, tuple[Any, Any]]) -> None:
    """Several inputs that hold every judgement of their questions (RAG logs...) are systems over one set of
    judgements: a question judged differently is refused, naming the inputs as the user wrote them."""
    from ..io import get_format
    from ..io.registry import check_same_judgements

    if config.qrels is not None:
        return
    whole = {name: source for name, source in config.runs.items()
             if name in pairs and get_format(source.format).whole_judgements}
    if len(whole) > 1:
        try:
            check_same_judgements({source.written or source.key: pairs[name][0] for name, source in whole.items()})
        except InputError as error:
            raise (error if config.path is None else InputError(str(error), source=config.where)) from None


def _conventions(config: Config) -> dict[str, Any]:
    s = config.settings
    return {"ties": s.ties, "score_precision": s.score_precision, "missing_queries": s.missing_queries,
            "no_relevant": s.no_relevant}
