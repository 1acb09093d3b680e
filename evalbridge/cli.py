"""The ``evalbridge`` command (also ``python -m evalbridge``).

Commands::

    evalbridge run CONFIG                       the whole configured evaluation (configs/*.yaml)
    evalbridge eval QRELS RUN... -m METRIC...   quick evaluation from files (or LOG...: inputs holding both)
    evalbridge check QRELS RUN -m ... --backends ...   the cross-check report (or check LOG)
    evalbridge metrics                          every metric, its options, which backend supports what
    evalbridge convert INPUT OUTPUT             between the supported input formats
    evalbridge agree QRELS_A QRELS_B [RUN...]   agreement of two sets of judgements (a config's agreement:)

Exit codes: 0 ok; 1 a gate failed or the cross-check found unexplained differences;
2 bad input or config (one line on stderr, no traceback). A progress bar is drawn on
stderr only when it is a terminal. ``docs/cli.md`` documents every option.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._version import __version__
from .errors import EvalbridgeError, InputError

__all__ = ["main", "build_parser", "commands", "EXIT_OK", "EXIT_FAILED", "EXIT_BAD_INPUT", "EXIT_INTERNAL"]

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


# ---------------------------------------------------------------- helpers

def _progress(enabled: bool) -> Any:
    """An ``on_step(description, done, total)`` callback drawing a bar on stderr, only on a terminal
    (:func:`evalbridge.progress.callback`)."""
    from .progress import callback

    return callback(enabled)


def _system_names(paths: Sequence[str]) -> list[str]:
    """Run names from file names without the last suffix (``bm25`` for ``runs/bm25.txt.gz``), made unique."""
    names: list[str] = []
    for path in paths:
        file = Path(path).name.removesuffix(".gz")
        base = Path(file).stem or file
        name, n = base, 2
        while name in names:
            name, n = f"{base}-{n}", n + 1
        names.append(name)
    return names


def _columns(text: str | None, flag: str = "--columns") -> dict[str, str]:
    """``--columns query=qid,doc=docno,score=score`` as ``{"query": "qid", ...}``."""
    from .config.sources import COLUMN_ROLES

    if not text:
        return {}
    out: dict[str, str] = {}
    for part in text.split(","):
        role, sep, name = part.partition("=")
        role, name = role.strip(), name.strip()
        if not sep or role not in COLUMN_ROLES or not name:
            raise InputError(f"{flag}: cannot read {part!r}; expected role=name with a role among "
                             f"{', '.join(COLUMN_ROLES)}.", fix=f"write e.g. {flag} query=qid,doc=docno,score=score.")
        out[role] = name
    return out


def _source(path: str, kind: str, fmt: str | None, key: str, columns: str | None = None,
            policies: Mapping[str, Any] | None = None) -> Any:
    """A :class:`~evalbridge.config.sources.Source` for ``convert``'s INPUT, through the format registry
    (every ``--columns`` role goes to it; one its format does not read is refused by the registry;
    ``policies``: the read policies given, ``--ids`` / ``--duplicates``)."""
    from .config.sources import source_from_path

    options: dict[str, Any] = dict(policies or {})
    wanted = _columns(columns)
    if wanted:
        options["columns"] = wanted
    return source_from_path(path, kind, fmt, key, options=options)


def _policies(args: argparse.Namespace) -> dict[str, Any]:
    """The read policies given on the command line (``--ids``, ``--duplicates``), as config keys."""
    from .io.policies import POLICIES

    return {key: getattr(args, key) for key in POLICIES if getattr(args, key, None) is not None}


def _note(args: argparse.Namespace, text: str) -> None:
    """A note on stderr (what was written where), left out with ``-q``; failures are never notes."""
    if not args.quiet:
        print(text, file=sys.stderr)


def _emit(text: str, output: str | None, args: argparse.Namespace) -> None:
    """``text`` to the file ``output`` (atomically), or to stdout when it is None or ``-``."""
    from .reports.writing import STDOUT

    if output is None or output == STDOUT:
        sys.stdout.write(text)
    else:
        from .reports.writing import write_file_atomic

        write_file_atomic(output, text)
        _note(args, f"wrote {output}")


# ---------------------------------------------------------------- commands

def _cmd_run(args: argparse.Namespace) -> int:
    from .config import load_configs
    from .pipeline import run_config
    from .reports.formats import render

    configs = load_configs(args.config)
    given = _tracking_given(args)
    if given:
        from .config.schema import FlagLocator, with_tracking

        configs = [with_tracking(c, given, FlagLocator(tracking_flags())) for c in configs]
    if args.output_dir is not None and len(configs) > 1:
        raise InputError(f"--output-dir is ambiguous: {args.config} holds {len(configs)} evaluations.",
                         fix="leave it out (each evaluation has its own output.dir).")
    from .pipeline import input_sources
    from .reports.writing import STDOUT, check_outputs

    folders = [] if args.no_write else [Path(args.output_dir) if args.output_dir is not None else c.output.dir
                                        for c in configs]
    report_out = None if args.junit == STDOUT else STDOUT  # `--junit -` takes stdout: the report is left out
    check_outputs([args.config, *(s.path for c in configs for s in input_sources(c) if s.path is not None)],
                  files=[args.junit, report_out], folders=folders)
    code = EXIT_OK
    gates: list[Any] = []
    for i, config in enumerate(configs):
        with _progress(not args.quiet) as on_step:
            outcome = run_config(config, output_dir=args.output_dir, on_step=on_step, write=not args.no_write)
        if report_out is not None:
            sys.stdout.write(("\n" if i else "") + render(outcome.report, args.format))
        folder = Path(args.output_dir) if args.output_dir is not None else config.output.dir
        if outcome.files and folder is not None:  # run_config writes files only into a folder
            _note(args, f"wrote {len(outcome.files)} files to {_shown(folder)}")
        _note_tracked(args, outcome)
        for line in outcome.failures:  # why the exit code is 1, one line per failed gate or check, even with -q
            print(f"evalbridge: {line}", file=sys.stderr)
        code = max(code, outcome.exit_code)
        gates += outcome.report.gates
    if args.junit is not None:
        from .reports.writing import write_file_atomic
        from .testing import junit_xml

        write_file_atomic(args.junit, junit_xml(gates, suite=f"evalbridge {Path(args.config).name}"))
    if args.annotations == "github":
        from .testing import github_annotations

        sys.stderr.write(github_annotations(gates, file=args.config))  # stdout stays the report (--format json)
    return code


def _note_tracked(args: argparse.Namespace, outcome: Any) -> None:
    for tracked in outcome.tracked:
        _note(args, f"logged to {tracked.tracker}: run {tracked.parent} with {len(tracked.runs)} nested system run(s) "
                    f"in experiment {tracked.experiment!r} at {tracked.uri}")


def tracking_flags() -> dict[tuple[str, ...], str]:
    """Config key path -> the flag of ``evalbridge run`` that sets it, for every option of every tracker
    (:mod:`evalbridge.tracking`): the first option is ``--NAME`` (``--mlflow URI``), the others ``--NAME-OPTION``."""
    from .tracking import trackers

    flags: dict[tuple[str, ...], str] = {}
    for name, tracker in trackers().items():
        for i, key in enumerate(tracker.options):
            flags[("tracking", name, key)] = f"--{name}" if i == 0 else f"--{name}-{key.replace('_', '-')}"
    return flags


def _tracking_given(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    """The tracking options given on the command line, as the config's ``tracking:`` section."""
    given: dict[str, dict[str, Any]] = {}
    for (_, name, key), flag in tracking_flags().items():
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if value is not None:
            given.setdefault(name, {})[key] = value
    return given


def _add_tracking(parser: argparse.ArgumentParser) -> None:
    from .tracking import trackers

    table = trackers()
    for (_, name, key), flag in tracking_flags().items():
        tracker = table[name]
        meaning = {"uri": f"also log params, means and artifacts to {tracker.title} at this tracking URI "
                          f"(tracking.{name}.uri), e.g. sqlite:///mlflow.db"}.get(
            key, f"{tracker.title}'s {key.replace('_', ' ')} (tracking.{name}.{key})")
        parser.add_argument(flag, default=None, metavar=key.upper(), help=meaning)


def _shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(Path.cwd()))
    return str(path)


#: config key path -> the command-line flag that sets it (errors name the flag).
FLAGS = {
    ("title",): "--title", ("qrels",): "QRELS", ("runs",): "RUN", ("metrics",): "--metrics", ("backend",): "--backend",
    ("min_relevance",): "--min-relevance", ("ids",): "--ids", ("duplicates",): "--duplicates", ("ties",): "--ties",
    ("score_precision",): "--score-precision",
    ("missing_queries",): "--missing-queries", ("no_relevant",): "--no-relevant", ("seed",): "--seed", ("bands",): "--bands",
    ("judged_only",): "--judged-only", ("depth",): "--depth", ("engine",): "--engine",
    ("spark",): "--spark-master / --spark-buckets", ("spark", "master"): "--spark-master",
    ("spark", "buckets"): "--spark-buckets",
    ("comparison", "baseline"): "--baseline", ("comparison", "test"): "--test",
    ("comparison", "correction"): "--correction", ("comparison", "alpha"): "--alpha",
    ("comparison", "confidence"): "--confidence", ("comparison", "n_resamples"): "--n-resamples",
    ("crosscheck", "backends"): "--backends", ("crosscheck", "atol"): "--atol",
    ("crosscheck", "canonicalise"): "--canonicalise",
}


def _input(path: str, fmt: str | None, columns: dict[str, str]) -> dict[str, Any]:
    """A command-line input as a config source: ``{path | table, format, columns}``."""
    source: dict[str, Any] = {"table" if fmt == "spark-table" else "path": path}
    if fmt is not None:
        source["format"] = fmt
    if columns:
        source["columns"] = columns
    return source


def _format_options(path: str, fmt: str | None, kind: str) -> Any:
    """The options the format of a command-line input takes (None when the format cannot be told yet:
    the path is checked, and named in the error, when the config is validated)."""
    from .io import get_format, resolve

    try:
        return get_format(fmt, kind=kind).options if fmt is not None else resolve(path, kind=kind).options
    except (InputError, OSError):
        return None


def _side_columns(args: argparse.Namespace, inputs: Sequence[tuple[str, str | None, str, str]]) -> list[dict[str, str]]:
    """The columns of each input ``(path, format, kind, flag of its side)``: ``--columns`` gives each input the
    roles its format takes, ``--qrels-columns`` / ``--run-columns`` give every role to their side (checked by the
    format). A ``--columns`` role no input takes is refused, never dropped."""
    shared = _columns(args.columns, "--columns")
    sides = {"--qrels-columns": _columns(getattr(args, "qrels_columns", None), "--qrels-columns"),
             "--run-columns": _columns(getattr(args, "run_columns", None), "--run-columns")}
    out: list[dict[str, str]] = []
    taken: set[str] = set()
    for path, fmt, kind, flag in inputs:
        options = _format_options(path, fmt, kind)
        mine = {r: n for r, n in shared.items() if options is None or r in options}
        taken.update(mine)
        out.append({**mine, **sides[flag]})
    unused = [role for role in shared if role not in taken]
    if unused:
        from .io import formats

        takers = sorted({n for n, f in formats().items() if any(r in f.options for r in unused)})
        raise InputError(f"--columns: no input's format reads the role {', '.join(map(repr, unused))}"
                         f"{' (formats that do: ' + ', '.join(takers) + ')' if takers else ''}.",
                         fix="remove it, or name the format with --qrels-format / --run-format.")
    return out


def _metric_entries(texts: Sequence[str]) -> list[Any]:
    """``-m`` values as config entries: ``LABEL=SPEC`` becomes ``{metric: SPEC, label: LABEL}`` (checked by the schema)."""
    from .metrics.requests import split_label

    entries: list[Any] = []
    for text in texts:
        label, spec = split_label(text)
        entries.append(spec if label is None else {"metric": spec, "label": label})
    return entries


def _conventions(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys every command's convention flags give (a flag left out is a key left out)."""
    raw: dict[str, Any] = {"backend": args.backend, "ties": args.ties, "score_precision": args.score_precision,
                           "missing_queries": args.missing_queries, "no_relevant": args.no_relevant, "seed": args.seed}
    if args.min_relevance is not None:
        raw["min_relevance"] = args.min_relevance
    if args.judged_only:
        raw["judged_only"] = True
    if args.depth is not None:
        raw["depth"] = args.depth
    return raw


def _positionals(args: argparse.Namespace) -> tuple[str | None, list[str]]:
    """``(QRELS or None, RUNs)`` of ``eval``'s inputs: ``QRELS RUN...``, or inputs that each hold their own
    judgements (RAG logs, judged lists, label lists: one system each, read as a config's run without qrels).
    The first input is the qrels unless its own format (its suffix and first bytes: a RAG log's) holds both, or
    it is the only input (then ``--run-format`` may name its format); ``--qrels-format`` makes it the qrels."""
    from .io import get_format, resolve

    inputs = list(args.inputs)
    if len(inputs) > 1 and args.qrels_format is not None:
        return inputs[0], inputs[1:]
    if len(inputs) == 1 and args.qrels_format is not None:
        raise InputError(f"--qrels-format is given but {inputs[0]} is the only input: the run is missing.",
                         fix="give QRELS then RUN..., or one input that holds both (e.g. --run-format rag).")
    try:
        first = get_format(args.run_format) if args.run_format is not None and len(inputs) == 1 else \
            resolve(inputs[0], kind="run" if len(inputs) == 1 else "qrels")
    except (InputError, OSError):
        first = None  # a missing file or an unknown format: the config's validation names it
    if first is not None and first.paired:
        return None, inputs
    if len(inputs) == 1:
        holders = ", ".join(n for n, f in _formats().items() if f.paired)
        raise InputError(f"{inputs[0]} is the only input, and it holds no judgements"
                         f"{f' (format {first.name!r})' if first is not None else ''}.",
                         fix=f"give QRELS then RUN..., or name the format of an input that holds both with "
                             f"--run-format ({holders}).")
    return inputs[0], inputs[1:]


def _formats() -> Any:
    from .io import formats

    return formats()


def _description(args: argparse.Namespace, qrels: str | None, runs: Sequence[str]) -> Any:
    """The command line as a :class:`~evalbridge.config.schema.Config`, checked by the config's own schema."""
    from .config.schema import FlagLocator, validate

    if qrels is None and getattr(args, "qrels_columns", None):
        raise InputError("--qrels-columns is given but there is no QRELS: the inputs hold their own judgements.",
                         fix="name their fields with --run-columns (or --columns).")
    sides = ([(qrels, args.qrels_format, "qrels", "--qrels-columns")] if qrels is not None else []) + \
        [(path, args.run_format, "run", "--run-columns") for path in runs]
    columns = _side_columns(args, sides)
    raw: dict[str, Any] = {"title": args.title or f"evalbridge {args.command} {Path(qrels or runs[0]).name}"}
    if qrels is not None:
        raw["qrels"] = _input(qrels, args.qrels_format, columns[0])
    raw["runs"] = {name: _input(path, args.run_format, wanted)
                   for name, path, wanted in zip(_system_names(runs), runs, columns[len(columns) - len(runs):])}
    raw.update({"metrics": _metric_entries(args.metrics), **_conventions(args), **_policies(args)})
    if getattr(args, "baseline", None) is not None:
        raw["comparison"] = {"baseline": args.baseline, "test": args.test, "correction": args.correction,
                             "alpha": args.alpha, "confidence": args.confidence, "n_resamples": args.n_resamples}
    if getattr(args, "bands", False):
        raw["bands"] = True
    if getattr(args, "engine", None) is not None:
        raw["engine"] = args.engine
    spark = {key: value for key, value in (("master", getattr(args, "spark_master", None)),
                                           ("buckets", getattr(args, "spark_buckets", None))) if value is not None}
    if spark:
        raw["spark"] = spark
    if args.command == "check":
        raw["crosscheck"] = {"backends": list(args.backends), "atol": args.atol, "canonicalise": args.canonicalise}
    tracking = _tracking_given(args)
    if tracking:
        raw["tracking"] = tracking
    return validate(raw, locator=FlagLocator({**FLAGS, **tracking_flags()}), folder=Path.cwd(), default_dir=None)


def _outputs(args: argparse.Namespace, config: Any) -> None:
    """Refuse an output file that is (or would overwrite) an input, before anything is computed."""
    from .pipeline import input_sources
    from .reports.writing import STDOUT, check_outputs

    check_outputs([s.path for s in input_sources(config) if s.path is not None],
                  files=[args.output or STDOUT, getattr(args, "per_query", None)])


def _cmd_eval(args: argparse.Namespace) -> int:
    from .pipeline import run_config
    from .reports.formats import render

    qrels, runs = _positionals(args)
    config = _description(args, qrels, runs)
    _outputs(args, config)
    with _progress(len(runs) > 1 and not args.quiet) as on_step:
        outcome = run_config(config, on_step=on_step, write=False)
    _emit(render(outcome.report, args.format), args.output, args)
    _note_tracked(args, outcome)
    if args.per_query is not None:
        from .reports.report import per_query_format_of, write_per_query

        fmt = per_query_format_of(args.per_query)
        write_per_query(outcome.report.results, args.per_query, fmt=fmt, provenance=outcome.report.provenance)
        if args.per_query != "-":
            _note(args, f"wrote {args.per_query}")
    return EXIT_OK


def _cmd_check(args: argparse.Namespace) -> int:
    from .pipeline import run_config
    from .reports.formats import check_formats, report_format

    qrels, runs = _positionals(args)
    if len(runs) != 1:
        raise InputError(f"check cross-checks one run; got {len(runs)} ({', '.join(runs)}).",
                         fix="give QRELS and one RUN, or one input holding both; check each run on its own.")
    config = _description(args, qrels, runs)
    _outputs(args, config)
    with _progress(not args.quiet) as on_step:
        outcome = run_config(config, on_step=on_step, write=False)
    check = next(iter(outcome.report.crosscheck.values()))
    show = report_format(args.format).check
    if show is None:  # argparse offers only the formats that declare a check view
        raise InputError(f"check cannot show the format {args.format!r}; choose one of {', '.join(check_formats())}.")
    _emit(show(outcome.report), args.output, args)
    if not check.ok:
        print(f"evalbridge: the cross-check found {len(check.unexplained)} unexplained difference(s)",
              file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


#: agreement key path -> the ``evalbridge agree`` flag that sets it (the judges' own paths are added per call).
AGREE_FLAGS: dict[tuple[str, ...], str] = {
    ("agreement", "runs"): "RUN", ("agreement", "metrics"): "--metrics", ("agreement", "bins"): "--bins",
    ("agreement", "alpha_level"): "--alpha-level", ("agreement", "test"): "--test", ("agreement", "alpha"): "--alpha",
    ("agreement", "n_resamples"): "--n-resamples",
}


def _agree_description(args: argparse.Namespace) -> Any:
    """``evalbridge agree`` as a :class:`~evalbridge.config.schema.Config` with an ``agreement:`` section,
    checked by the config's own schema (the same keys and rules as a config file's)."""
    from .config.schema import FlagLocator, validate

    stems = [Path(p).name.removesuffix(".gz").rsplit(".", 1)[0] for p in (args.qrels_a, args.qrels_b)]
    names = args.names or (stems if stems[0] != stems[1] else ["a", "b"])
    sides = [(args.qrels_a, args.qrels_format, "qrels", "--qrels-columns"),
             (args.qrels_b, args.qrels_format, "qrels", "--qrels-columns"),
             *((path, args.run_format, "run", "--run-columns") for path in args.runs)]
    columns = _side_columns(args, sides)
    section: dict[str, Any] = {
        "judges": {names[0]: _input(args.qrels_a, args.qrels_format, columns[0]),
                   names[1]: _input(args.qrels_b, args.qrels_format, columns[1])},
        "metrics": list(args.metrics), "alpha_level": args.alpha_level, "test": args.test, "alpha": args.alpha,
        "n_resamples": args.n_resamples,
    }
    if args.runs:
        section["runs"] = {name: _input(path, args.run_format, wanted)
                           for name, path, wanted in zip(_system_names(args.runs), args.runs, columns[2:])}
    if args.bins is not None:
        section["bins"] = list(args.bins)
    for name, edges in zip(names, (args.bins_a, args.bins_b)):
        if edges is not None:
            if isinstance(section.get("bins"), list):
                raise InputError("give either --bins (both judges) or --bins-a / --bins-b (one each), not both.",
                                 fix="drop --bins, or the per-judge flags.")
            section.setdefault("bins", {})[name] = list(edges)
    raw: dict[str, Any] = {
        "title": args.title or f"evalbridge agree {Path(args.qrels_a).name} {Path(args.qrels_b).name}",
        "agreement": section, **_conventions(args), **_policies(args),
    }
    flags: dict[tuple[str, ...], str] = {
        **FLAGS, **AGREE_FLAGS, ("agreement", "judges", names[0]): "QRELS_A",
        ("agreement", "judges", names[1]): "QRELS_B", ("agreement", "bins", names[0]): "--bins-a",
        ("agreement", "bins", names[1]): "--bins-b", ("agreement", "judges"): "--names"}
    return validate(raw, locator=FlagLocator(flags), folder=Path.cwd(), default_dir=None)


def _cmd_agree(args: argparse.Namespace) -> int:
    from .pipeline import run_config
    from .reports.report import render

    config = _agree_description(args)
    _outputs(args, config)
    with _progress(not args.quiet) as on_step:
        outcome = run_config(config, on_step=on_step, write=False)
    _emit(render(outcome.report, "terminal" if args.format == "text" else args.format), args.output, args)
    return EXIT_OK


def _variants() -> list[Any]:
    """One row per metric family and per non-default option value (plus rel=2 for binary metrics)."""
    from .metrics.catalogue import CHOICES, METRICS
    from .metrics.spec import Metric

    rows = []
    for name, info in METRICS.items():
        k = None if info.cutoff == "none" else 10
        base = Metric(name, k)
        rows.append(base)
        if info.binary:
            rows.append(base.replace(rel=2))
        for option, default in info.options.items():
            for value in CHOICES.get(option, ()):
                if value != default:
                    rows.append(base.replace(**{option: value}))
    return rows


def metric_capabilities() -> dict[str, Any]:
    """``{"metrics": [...], "backends": [...], "matrix": {metric: {backend: reason or None}}}``."""
    from .backends import BACKENDS, available, get_backend, unsupported
    from .metrics.catalogue import ALIASES, METRICS

    backends = list(BACKENDS)
    modules = {name: get_backend(name) for name in backends}
    installed = available()
    families = []
    for name, info in METRICS.items():
        aliases = sorted(a for a, (canonical, preset) in ALIASES.items() if canonical == name and not preset)
        families.append({"name": name, "title": info.title, "cutoff": info.cutoff, "binary": info.binary,
                         "options": dict(info.options), "aliases": aliases, "formula": info.formula})
    matrix = {str(m): {b: unsupported(modules[b], m) for b in backends} for m in _variants()}
    return {"metrics": families, "backends": {b: installed.get(b, True) for b in backends}, "matrix": matrix}


def _cmd_metrics(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    data = metric_capabilities()
    if args.format == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return EXIT_OK
    fmt = "github" if args.format == "markdown" else "simple"
    families = [(f["name"], f["title"], f["cutoff"],
                 ", ".join(f"{k}={v}" for k, v in f["options"].items()) or "-", ", ".join(f["aliases"]))
                for f in data["metrics"]]
    backends = list(data["backends"])
    matrix = [(metric, *["yes" if cell is None else "no" for cell in cells.values()])
              for metric, cells in data["matrix"].items()]
    heads = [b if data["backends"][b] else f"{b} (not installed)" for b in backends]
    out = ["metrics (any spelling: aliases of ranx, ir-measures, trec_eval and RAG code are accepted)",
           tabulate(families, headers=("metric", "what", "cutoff", "options (default)", "aliases"), tablefmt=fmt),
           "", "which backend computes what exactly (binary metrics take rel=; 'no' rows: see --format json)",
           tabulate(matrix, headers=("metric", *heads), tablefmt=fmt)]
    sys.stdout.write("\n".join(out) + "\n")
    return EXIT_OK


def _write(obj: Any, path: str, fmt: str | None) -> str:
    """Write Qrels or a Run to ``path`` in ``fmt`` (from the suffix of ``path`` when None), atomically; the note
    saying so."""
    from .io.registry import output_format, write
    from .model import Qrels
    from .reports.writing import atomic_file

    chosen = fmt or output_format(path, "qrels" if isinstance(obj, Qrels) else "run").name
    with atomic_file(path) as tmp:
        write(obj, tmp, format=chosen)
    shown = "standard output" if path == "-" else path
    return f"wrote {shown} ({len(obj)} queries, {obj.n_rows} rows)"


def _cmd_convert(args: argparse.Namespace) -> int:
    from .config import load_qrels, load_run
    from .io import get_format
    from .io.registry import prefixed
    from .reports.writing import check_outputs

    check_outputs([args.input], files=[args.output, args.run_output])

    fmt = args.input_format
    if fmt is not None and get_format(fmt).paired:
        if args.run_output is None:
            raise InputError(f"format {fmt!r} holds qrels and a run; OUTPUT receives the qrels and --run-output "
                             f"the run.", fix="add --run-output PATH.")
        source = _source(args.input, "run", fmt, "INPUT", args.columns, _policies(args))
        qrels, run = load_run(source, _system_names([args.input])[0], None, args.min_relevance)
        _note(args, _write(qrels, args.output, args.output_format))
        _note(args, _write(run, args.run_output, args.output_format))
        return EXIT_OK
    told = get_format(fmt) if fmt is not None else prefixed(args.input)  # a format that holds one kind says it
    kind = args.kind if args.kind is not None or told is None or len(told.holds) != 1 else next(iter(told.holds))
    if kind is None:
        raise InputError("say whether INPUT holds qrels or a run.", fix="add --kind qrels or --kind run.")
    source = _source(args.input, kind, fmt, "INPUT", args.columns, _policies(args))
    if kind == "qrels":
        obj = load_qrels(source, args.min_relevance)
    else:
        obj = load_run(source, _system_names([args.input])[0], None, args.min_relevance)[1]
    _note(args, _write(obj, args.output, args.output_format))
    return EXIT_OK


def format_table() -> list[dict[str, Any]]:
    """One row per registered format: name, what it holds, suffixes, options, writable, example."""
    from .io import formats

    return [{"format": f.name, "holds": f.describes, "what": f.title,
             "suffixes": " ".join(s or "(none)" for s in f.suffixes) or ("(object)" if f.accepts else "(named only)"),
             "options": ", ".join(f.takes) or "-", "writable": f.write is not None, "example": f.example}
            for f in formats().values()]


def _cmd_formats(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    rows = format_table()
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    fmt = "github" if args.format == "markdown" else "simple"
    table = [(r["format"], r["holds"], r["suffixes"], r["options"], "yes" if r["writable"] else "no", r["what"])
             for r in rows]
    sys.stdout.write("input and output formats (a path's suffix picks the format; --*-format / format: override)\n")
    sys.stdout.write(tabulate(table, headers=("format", "holds", "suffixes", "options", "writable", "what"),
                              tablefmt=fmt) + "\n")
    return EXIT_OK


# ---------------------------------------------------------------- parser

def _add_conventions(parser: argparse.ArgumentParser) -> None:
    from .settings import MISSING_QUERY_POLICIES, NO_RELEVANT_POLICIES, SCORE_PRECISIONS, TIE_POLICIES

    parser.add_argument("--min-relevance", type=float, default=None, metavar="LEVEL",
                        help="relevance level of binary metrics that do not set rel (default: 1)")
    parser.add_argument("--ties", choices=TIE_POLICIES, default="docid_desc",
                        help="order of tied scores (default: docid_desc, as trec_eval)")
    parser.add_argument("--score-precision", choices=SCORE_PRECISIONS, default="float64",
                        help="precision scores are compared at; float32 reproduces trec_eval <= 9")
    parser.add_argument("--missing-queries", choices=MISSING_QUERY_POLICIES, default="zero",
                        help="qrels queries absent from the run: score 0 (default) or drop")
    parser.add_argument("--no-relevant", choices=NO_RELEVANT_POLICIES, default="zero",
                        help="qrels queries with no relevant judgement: score 0 (default), drop, or error")
    parser.add_argument("--judged-only", action="store_true",
                        help="remove unjudged documents from every ranking before any metric (trec_eval -J)")
    parser.add_argument("--depth", type=int, default=None, metavar="N",
                        help="only the first N documents of every ranking count (trec_eval -M)")


def _add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q`` means the same for every command: a quieter stderr (the report and the failures stay)."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="quieter stderr: no progress bar, no note of the files written; the report and every "
                             "failure are still printed")


def _add_inputs(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--qrels-format", default=None, metavar="FMT",
                        help="input format of the qrels (default: from the suffix, else trec; see `evalbridge formats`)")
    parser.add_argument("--run-format", default=None, metavar="FMT",
                        help="input format of the runs (default: from the suffix, else trec)")
    parser.add_argument("--columns", default=None, metavar="ROLE=NAME,...",
                        help="column / field names of every input (each takes the roles its format reads), e.g. "
                             "query=qid,doc=docno,score=sim or, for a RAG log, query=user_input,"
                             "retrieved=retrieved_contexts,relevant=reference_contexts")
    parser.add_argument("--qrels-columns", default=None, metavar="ROLE=NAME,...",
                        help="column / field names of the qrels only (override --columns), e.g. "
                             "query=query,doc=doc,grade=judge_score")
    parser.add_argument("--run-columns", default=None, metavar="ROLE=NAME,...",
                        help="column / field names of the runs only (override --columns), e.g. query=qid,doc=docno")
    _add_policies(parser)


def _add_policies(parser: argparse.ArgumentParser) -> None:
    """``--ids`` and ``--duplicates``: the read policies, from their one declaration."""
    from .io.policies import POLICIES

    for key, (choices, meaning) in POLICIES.items():
        parser.add_argument(f"--{key}", choices=choices, default=None, help=meaning.replace("%", "%%"))


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of every command."""
    from .backends import CROSSCHECK_BACKENDS
    from .stats.compare import CORRECTIONS, TESTS
    from .reports.formats import check_formats, report_formats

    parser = argparse.ArgumentParser(
        prog="evalbridge", description="Retrieval evaluation (MAP, MRR, nDCG, P@k, R@k, hit rate) that bridges RAG "
                                       "inputs and ranx / ir-measures / pytrec_eval.",
        epilog="exit codes: 0 ok; 1 a gate failed or the cross-check found unexplained differences; "
               "2 bad input, config or usage; 3 an internal error (a bug: please report it).")
    parser.add_argument("--version", action="version", version=f"evalbridge {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run the evaluation(s) a YAML config describes",
                              description="Run every evaluation in a config file; reports go to output.dir.")
    run.add_argument("config", help="the YAML config (paths in it are relative to it)")
    run.add_argument("--output-dir", default=None, metavar="DIR", help="write the reports here instead of output.dir")
    run.add_argument("--format", choices=list(report_formats()), default="terminal",
                     help="what to print (default terminal)")
    run.add_argument("--no-write", action="store_true", help="compute and print, write no file")
    _add_quiet(run)
    run.add_argument("--junit", default=None, metavar="PATH",
                     help="also write the gates as a JUnit XML report (one test case per gate and system)")
    run.add_argument("--annotations", choices=("github",), default=None,
                     help="also print one GitHub Actions annotation per gate on stderr (::error for a failure)")
    _add_tracking(run)
    run.set_defaults(handler=_cmd_run)

    ev = commands.add_parser("eval", help="evaluate run files against qrels",
                             description="Evaluate one or more runs against QRELS; each run is named after its file. "
                                         "Inputs that hold their own judgements (a RAG log, a judged list, label "
                                         "lists) are evaluated alone, one system each: evalbridge eval log.jsonl -m "
                                         "mrr; several logs of the same questions are several systems.")
    ev.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="QRELS then RUN..., or inputs that each hold qrels and a run (RAG logs, judged lists...)")
    ev.add_argument("-m", "--metrics", nargs="+", required=True, metavar="METRIC",
                    help="metric specs in any spelling, e.g. ndcg@10 'P(rel=2)@5' map recall@100; LABEL=SPEC names "
                         "the metric's column and JSON key, e.g. precision@5=P@5")
    ev.add_argument("--backend", default="auto",
                    help="auto (default: reference on small inputs, fast on big ones), reference, fast, ranx, ...")
    ev.add_argument("--format", choices=list(report_formats()), default="terminal", help="output format")
    ev.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write the report to this file instead of stdout")
    ev.add_argument("--per-query", default=None, metavar="PATH", help="also write per-query values (.csv/.parquet)")
    ev.add_argument("--baseline", default=None, metavar="RUN", help="compare every run with this one")
    ev.add_argument("--test", default="t", metavar="TEST", help=f"significance test: {', '.join(TESTS)} (default t)")
    ev.add_argument("--correction", default="holm", metavar="NAME",
                    help=f"multiple-comparison correction: {', '.join(CORRECTIONS)} (default holm)")
    ev.add_argument("--alpha", type=float, default=0.05, help="significance level, in (0, 1) (default 0.05)")
    ev.add_argument("--confidence", type=float, default=0.95, help="level of the bootstrap intervals (default 0.95)")
    ev.add_argument("--n-resamples", type=int, default=10_000, help="resamples of the randomization test and the "
                                                                    "bootstrap (default 10000)")
    ev.add_argument("--seed", type=int, default=0, help="seed of every random step (default 0)")
    ev.add_argument("--bands", action="store_true",
                    help="add the RAG quality bands (poor / fair / good / excellent per metric; docs/config.md)")
    ev.add_argument("--title", default=None, help="heading of the report")
    ev.add_argument("--engine", default=None, metavar="ENGINE",
                    help="local (default) or spark: evaluate on a Spark session (the active one, else one started "
                         "on --spark-master); QRELS and RUN may then be Parquet folders or, with --qrels-format / "
                         "--run-format spark-table, tables of the session's catalog")
    ev.add_argument("--spark-master", default=None, metavar="URL",
                    help="master of the session started with --engine spark when none is active (default local[*])")
    ev.add_argument("--spark-buckets", type=int, default=None, metavar="N",
                    help="query buckets with --engine spark (default 4 x spark.sql.shuffle.partitions)")
    _add_quiet(ev)
    _add_inputs(ev)
    _add_conventions(ev)
    _add_tracking(ev)
    ev.set_defaults(handler=_cmd_eval)

    ck = commands.add_parser("check", help="cross-check every value against other libraries",
                             description="Compute every metric per query on the reference and on each backend; "
                                         "explain every difference. Exit 1 on an unexplained one.")
    ck.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="QRELS then RUN, or one input holding both (a RAG log, a judged list...)")
    ck.add_argument("-m", "--metrics", nargs="+", required=True, metavar="METRIC",
                    help="metric specs in any spelling; LABEL=SPEC names the metric (e.g. precision@5=P@5)")
    ck.add_argument("--backends", nargs="+", default=list(CROSSCHECK_BACKENDS), metavar="BACKEND",
                    help="the libraries compared with the reference")
    ck.add_argument("--atol", type=float, default=1e-9, help="largest difference still counted as agreement")
    ck.add_argument("--canonicalise", action="store_true",
                    help="apply evalbridge's exact bridges first, so every backend must agree")
    ck.add_argument("--format", choices=check_formats(), default="terminal",
                    help="json: the whole report (as `eval --format json`), with the cross-check")
    ck.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write the report to this file instead of stdout")
    ck.add_argument("--backend", default="auto", help="backend of the reference column and the evaluation")
    ck.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ck.add_argument("--title", default=None, help="heading of the report")
    _add_quiet(ck)
    _add_inputs(ck)
    _add_conventions(ck)
    ck.set_defaults(handler=_cmd_check)

    me = commands.add_parser("metrics", help="list metrics, options and the backend capability matrix")
    me.add_argument("--format", choices=("terminal", "markdown", "json"), default="terminal",
                    help="markdown: GitHub tables; json: with the reason of every `no`")
    me.set_defaults(handler=_cmd_metrics)

    cv = commands.add_parser("convert", help="convert qrels or runs between formats",
                             description="Read INPUT and write OUTPUT; formats come from the suffixes unless given. "
                                         "RAG inputs (labels, pairs, records, judged_list) hold qrels and a run: "
                                         "OUTPUT gets the qrels and --run-output the run.")
    cv.add_argument("input", help="the file to read")
    cv.add_argument("output", help="the file to write (never INPUT); for RAG inputs, the qrels")
    cv.add_argument("--kind", choices=("qrels", "run"), default=None, help="what INPUT holds (single formats)")
    cv.add_argument("--from", dest="input_format", default=None, metavar="FMT",
                    help="input format (default: from the suffix; see `evalbridge formats`)")
    cv.add_argument("--to", dest="output_format", default=None, metavar="FMT",
                    help="output format (default: from the suffix, else trec)")
    cv.add_argument("--columns", default=None, metavar="ROLE=NAME,...",
                    help="column / field names of the input, e.g. query=qid,doc=docno,score=sim")
    cv.add_argument("--run-output", default=None, metavar="PATH", help="where the run goes for RAG inputs")
    cv.add_argument("--min-relevance", type=float, default=None, metavar="LEVEL",
                    help="relevance level stored with RAG inputs")
    _add_quiet(cv)
    _add_policies(cv)
    cv.set_defaults(handler=_cmd_convert)

    from .stats.agreement import ALPHA_LEVELS, DEFAULT_METRICS
    from .stats.agreement import TESTS as AGREEMENT_TESTS

    ag = commands.add_parser("agree", help="agreement between two sets of judgements (e.g. human vs LLM judge)",
                             description="Compare two qrels over the (query, doc) pairs both judged: confusion, "
                                         "Cohen's kappa (plain, quadratic), Krippendorff's alpha; with runs, the "
                                         "system rankings each induces: Kendall's tau, tau_ap, flipped significant "
                                         "differences.")
    ag.add_argument("qrels_a", metavar="QRELS_A", help="the first judgements (e.g. human)")
    ag.add_argument("qrels_b", metavar="QRELS_B", help="the second judgements (e.g. an LLM judge)")
    ag.add_argument("runs", nargs="*", metavar="RUN", help="runs to rank under both (two or more)")
    ag.add_argument("-m", "--metrics", nargs="+", default=list(DEFAULT_METRICS), metavar="METRIC",
                    help="metrics the systems are ranked by, under each set of judgements")
    ag.add_argument("--names", nargs=2, default=None, metavar=("A", "B"), help="names of the two judges")
    ag.add_argument("--bins", nargs="+", type=float, default=None, metavar="T",
                    help="thresholds turning grades into categories (both sides)")
    ag.add_argument("--bins-a", nargs="+", type=float, default=None, metavar="T",
                    help="thresholds for the first judges' grades only")
    ag.add_argument("--bins-b", nargs="+", type=float, default=None, metavar="T",
                    help="thresholds for the second judges' grades only")
    ag.add_argument("--alpha-level", default="ordinal", metavar="LEVEL",
                    help=f"Krippendorff's alpha level of measurement: {', '.join(ALPHA_LEVELS)} (default ordinal)")
    ag.add_argument("--test", default="t", metavar="TEST",
                    help=f"test of each pair of systems: {', '.join(AGREEMENT_TESTS)} (default t)")
    ag.add_argument("--alpha", type=float, default=0.05, help="significance level, in (0, 1) (default 0.05)")
    ag.add_argument("--n-resamples", type=int, default=10_000, help="resamples of the randomization test")
    ag.add_argument("--seed", type=int, default=0, help="seed of every random step (default 0)")
    ag.add_argument("--backend", default="auto", help="backend of the evaluations (as for eval)")
    ag.add_argument("--format", choices=["text", *report_formats()], default="text",
                    help="a report format (text = terminal): the report `evalbridge run` writes")
    ag.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write the report to this file instead of stdout")
    ag.add_argument("--title", default=None, help="heading of the report")
    _add_quiet(ag)
    _add_inputs(ag)
    _add_conventions(ag)
    ag.set_defaults(handler=_cmd_agree)

    fo = commands.add_parser("formats", help="list the input and output formats",
                             description="Every format evalbridge reads or writes: what it holds, the suffixes that "
                                         "pick it, its options.")
    fo.add_argument("--format", choices=("terminal", "markdown", "json"), default="terminal", help="output format")
    fo.set_defaults(handler=_cmd_formats)
    return parser


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command of :func:`build_parser`'s parser, by name (tools/doc_tables.py documents them)."""
    for action in parser._actions:  # argparse keeps the subcommands only there
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@contextlib.contextmanager
def _said_once() -> Iterator[None]:
    """Print each :class:`~evalbridge.errors.EvalbridgeWarning` of the command once on stderr, as
    ``evalbridge: warning: ...`` (several systems with one fault say it once); other warnings pass on."""
    import warnings

    from .errors import EvalbridgeWarning

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", EvalbridgeWarning)
            yield
    finally:  # outside the recording: there, showwarning would record into the list being read, for ever
        for text in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, EvalbridgeWarning)):
            print(f"evalbridge: warning: {text}", file=sys.stderr)
        for w in caught:
            if not issubclass(w.category, EvalbridgeWarning):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalbridge`` console script; returns the exit code.

    0 ok; 1 a gate failed or a cross-check found unexplained differences; 2 bad input or usage (one line
    naming file:line / key / value and the fix); 3 an internal error (one line, "please report"; the
    traceback only with ``--debug``). No exception of a dependency reaches the user unwrapped.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    from .wording import door

    try:
        with door("config" if args.command == "run" else "command line"), _said_once():
            code: int = args.handler(args)  # argparse's Namespace is untyped: every handler returns the exit code
        return code
    except EvalbridgeError as error:
        print(f"evalbridge: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        print(f"evalbridge: error: {error.strerror or error}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("evalbridge: interrupted; no report was half-written", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the last line of defence: one line, exit 3, traceback on request
        if args.debug:
            import traceback

            traceback.print_exc()
        print(f"evalbridge: internal error: {type(error).__name__}: {error}. This is a bug in evalbridge; please "
              f"report it{'' if args.debug else ' (run again with --debug for the traceback)'}.", file=sys.stderr)
        return EXIT_INTERNAL
