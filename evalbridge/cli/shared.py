"""What the commands of the command line share: reading its inputs into a config, and writing what it prints."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..model.settings import ROWS

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def progress(enabled: bool) -> Any:
    """An ``on_step(description, done, total)`` callback drawing a bar on stderr, only on a terminal
    (:func:`evalbridge.common.progress.callback`)."""
    from ..common.progress import callback

    return callback(enabled)


def system_names(paths: Sequence[str]) -> list[str]:
    """Run names from file names without the last suffix (``bm25`` for ``runs/bm25.txt.gz``), made unique."""
    return list(named_runs(paths))


def split_named(text: str) -> tuple[str | None, str]:
    """``(NAME, PATH)`` of a command-line run ``NAME=PATH``, or ``(None, text)`` for a bare path: the text is split
    at its first ``=`` when the part before it holds no path separator and the whole text is no existing file
    (a file named ``a=b.run`` stays a path)."""
    name, sep, path = text.partition("=")
    if not sep or not name.strip() or not path or "/" in name or "\\" in name or Path(text).exists():
        return None, text
    return name.strip(), path


def named_runs(texts: Sequence[str], taken: Sequence[str] = ()) -> dict[str, str]:
    """Name -> path of the command line's runs, each ``NAME=PATH`` (named as a config's ``runs:`` names it) or
    ``PATH`` (named after its file without the last suffix, ``bm25`` for ``runs/bm25.txt.gz``, made unique among
    every name; ``taken``: names already used). Two runs given one name are refused."""
    given = [split_named(text) for text in texts]
    explicit = [name for name, _ in given if name is not None]
    twice = sorted({name for name in explicit if explicit.count(name) > 1} | (set(explicit) & set(taken)))
    if twice:
        raise InputError(f"two runs are named {twice[0]!r} on the command line.",
                         fix=f"give each run its own name, e.g. {twice[0]}=a.run {twice[0]}-2=b.run.")
    out: dict[str, str] = {}
    used = {*explicit, *taken}
    for name, path in given:
        if name is None:
            file = Path(path).name.removesuffix(".gz")
            base = Path(file).stem or file
            name, n = base, 2
            while name in used:
                name, n = f"{base}-{n}", n + 1
            used.add(name)
        out[name] = path
    return out


def runs_and_baseline(runs: Sequence[str], baseline: str | None) -> tuple[dict[str, str], str | None]:
    """``(name -> path, the baseline's name)`` of the runs and ``--baseline``: the name of a run (``bm25``, as a
    config's ``comparison.baseline``), the path of one of the runs, or ``NAME=PATH`` / a path not among them: one
    more run, the baseline, listed first."""
    named = named_runs(runs)
    if baseline is None:
        return named, None
    name, path = split_named(baseline)
    if name is None:
        if baseline in named:
            return named, baseline
        same = [n for n, p in named.items() if p == baseline]
        if same:
            return named, same[0]
        if not Path(baseline).exists():
            return named, baseline  # an unknown name: the config's schema refuses it with the names it knows
    extra = named_runs([baseline], taken=list(named))
    return {**extra, **named}, next(iter(extra))


def columns_of(text: str | None, flag: str = "--columns") -> dict[str, str]:
    """``--columns query=qid,doc=docno,score=score`` as ``{"query": "qid", ...}``."""
    from ..config.sources import COLUMN_ROLES

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


def source_of(path: str, kind: str, fmt: str | None, key: str, columns: str | None = None,
            policies: Mapping[str, Any] | None = None) -> Any:
    """A :class:`~evalbridge.config.sources.Source` for ``convert``'s INPUT, through the format registry
    (every ``--columns`` role goes to it; one its format does not read is refused by the registry;
    ``policies``: the read policies given, ``--ids`` / ``--duplicates``)."""
    from ..config.sources import source_from_path

    options: dict[str, Any] = dict(policies or {})
    wanted = columns_of(columns)
    if wanted:
        options["columns"] = wanted
    return source_from_path(path, kind, fmt, key, options=options)


def policies(args: argparse.Namespace) -> dict[str, Any]:
    """The read policies given on the command line (``--ids``, ``--duplicates``), as config keys."""
    return settings_given(args, reads=True)


def settings_given(args: argparse.Namespace, *, reads: bool) -> dict[str, Any]:
    """The settings whose flags were given (:func:`add_settings`), as config keys: a flag left out is a key left
    out; ``reads``: the read policies, else the others. A setting whose flag an analysis's key took
    (:func:`add_conventions`) is not given."""
    analysis = getattr(args, "analysis", None)
    taken = analysis.command.keys if analysis is not None else ()
    return {name: getattr(args, name) for name, row in ROWS.items()
            if row.reads == reads and name not in taken and getattr(args, name, None) is not None}


def write_output(obj: Any, path: str, fmt: str | None, *, tag: str | None = None) -> str:
    """Write Qrels or a Run to ``path`` in ``fmt`` (from the suffix of ``path`` when None), atomically; the note
    saying so. ``tag``: a run's tag column, for a format that writes one (the run's name otherwise)."""
    from ..io.registry import get_format, output_format, write
    from ..model.data import Qrels
    from ..reports.writing import atomic_file

    chosen = fmt or output_format(path, "qrels" if isinstance(obj, Qrels) else "run").name
    options = {"tag": tag} if tag is not None and "tag" in get_format(chosen).options else {}
    with atomic_file(path) as tmp:
        write(obj, tmp, format=chosen, **options)
    shown = "standard output" if path == "-" else path
    return f"wrote {shown} ({len(obj)} queries, {obj.n_rows} rows)"


def note(args: argparse.Namespace, text: str) -> None:
    """A note on stderr (what was written where), left out with ``-q``; failures are never notes."""
    if not args.quiet:
        from ..common.escaping import message_text

        print(message_text(text), file=sys.stderr)


def note_official(args: argparse.Namespace, config: Any) -> None:
    """Say which measures ``-m official`` took (the dataset's), once, in the words of the Python door's provenance,
    for a command that shows a result without the report's decision block (which says it there)."""
    for said in config.official:
        note(args, said)


def emit(text: str, output: str | None, args: argparse.Namespace) -> None:
    """``text`` to the file ``output`` (atomically), or to stdout when it is None or ``-``."""
    from ..reports.writing import STDOUT

    if output is None or output == STDOUT:
        sys.stdout.write(text)
    else:
        from ..reports.writing import write_file_atomic

        write_file_atomic(output, text)
        note(args, f"wrote {output}")


def note_tracked(args: argparse.Namespace, outcome: Any) -> None:
    for tracked in outcome.tracked:
        note(args, f"logged to {tracked.tracker}: run {tracked.parent} with {len(tracked.runs)} nested system run(s) "
                    f"in experiment {tracked.experiment!r} at {tracked.uri}")


def tracking_flags(table: Mapping[str, Any] | None = None) -> dict[tuple[str, ...], str]:
    """Config key path -> the flag of ``evalbridge run`` that sets it, for every option of every tracker
    (``table``, default :func:`evalbridge.tracking.trackers`): the first option is ``--NAME`` (``--mlflow URI``),
    the others ``--NAME-OPTION``."""
    from ..tracking import trackers

    flags: dict[tuple[str, ...], str] = {}
    for name, tracker in (trackers() if table is None else table).items():
        for i, key in enumerate(tracker.options):
            flags[("tracking", name, key)] = f"--{name}" if i == 0 else f"--{name}-{key.replace('_', '-')}"
    return flags


def tracking_given(args: argparse.Namespace, flags: Mapping[tuple[str, ...], str] | None = None
                   ) -> dict[str, dict[str, Any]]:
    """The tracking options given on the command line, as the config's ``tracking:`` section (``flags``: those of
    :func:`tracking_flags`, when the caller has them)."""
    given: dict[str, dict[str, Any]] = {}
    for (_, name, key), flag in (tracking_flags() if flags is None else flags).items():
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        if value is not None:
            given.setdefault(name, {})[key] = value
    return given


def add_tracking(parser: argparse.ArgumentParser) -> None:
    from ..tracking import trackers

    table = trackers()
    for (_, name, key), flag in tracking_flags(table).items():
        tracker = table[name]
        meaning = {"uri": f"also log params, means and artifacts to {tracker.title} at this tracking URI "
                          f"(tracking.{name}.uri), e.g. sqlite:///mlflow.db"}.get(
            key, f"{tracker.title}'s {key.replace('_', ' ')} (tracking.{name}.{key})")
        parser.add_argument(flag, default=None, metavar=key.upper(), help=meaning)


def shown(path: Path) -> str:
    with contextlib.suppress(ValueError):
        return str(path.resolve().relative_to(Path.cwd()))
    return str(path)


#: config key path -> the command-line flag that sets it (errors name the flag).
FLAGS: dict[tuple[str, ...], str] = {
    ("title",): "--title", ("qrels",): "QRELS", ("runs",): "RUN", ("metrics",): "--metrics",
    **{(name,): row.flag for name, row in ROWS.items()},  # every setting's flag, generated from its row
    ("seed",): "--seed", ("bands",): "--bands", ("engine",): "--engine",
    ("spark",): "--spark-master / --spark-buckets", ("spark", "master"): "--spark-master",
    ("spark", "buckets"): "--spark-buckets",
    ("comparison", "baseline"): "--baseline", ("comparison", "test"): "--test",
    ("comparison", "correction"): "--correction", ("comparison", "alpha"): "--alpha",
    ("comparison", "confidence"): "--confidence", ("comparison", "n_resamples"): "--n-resamples",
    ("crosscheck", "backends"): "--backends", ("crosscheck", "atol"): "--atol",
    ("crosscheck", "canonicalise"): "--canonicalise",
    ("slices",): "--slice-by", ("slices", "by"): "--slice-by", ("slices", "file"): "--slices-file",
}


def _flag(name: str) -> str:
    return f"--{name.replace('_', '-')}"


def analysis_flags(analysis: Any, judged: Sequence[tuple[Any, str | None, str]] = (), own: str | None = None
                   ) -> dict[tuple[str, ...], str]:
    """An analysis command's section (:class:`~evalbridge.config.analyses.Command`): config key path -> its flag;
    ``judged``: the judgements given (:func:`judgements_given`), whose named entries are each named by their own;
    ``own``: the section's key holding the RUNs when they are its own (:meth:`~evalbridge.config.analyses.Command.own`)."""
    command, key = analysis.command, analysis.key
    runs = (key,) if own is None else (key, own)  # (a section's own runs: its key)
    return {runs: command.runs, **{(key, k): command.flags.get(k, _flag(k))
                                   for k in (*command.keys, *command.statistics, *command.numbers, *command.by_name)},
            **{(key, j.key): j.flag for j in command.judgements},
            **({(key, command.metrics): "--metrics"} if command.metrics is not None else {}),
            **({("qrels",): command.qrels.flag} if command.qrels is not None else {}),
            **{(key, j.key, name): j.flag for j, name, _ in judged if name is not None},
            **{(key, k, name): flag for j, name, _ in judged for k, flag in j.own.items() if name is not None},
            **({(key, j.key): command.names for j in command.judgements if j.named} if command.names else {})}


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")


def _dest_of(judgements: Any) -> str:
    """Where argparse keeps a set of judgements an analysis's command reads: after its flag (``--judgements-b``,
    ``QRELS_A``)."""
    return _dest(judgements.flag).lower()


def _side(args: argparse.Namespace, judgements: Any) -> tuple[str | None, str, str]:
    """(format, kind, flag of its columns) of judgements an analysis's command reads: their own format flag
    (``--after-format``, and no columns of their own), else ``--qrels-format`` and ``--qrels-columns``."""
    if judgements is None or judgements.format is None:
        return args.qrels_format, "qrels", "--qrels-columns"
    return getattr(args, _dest(judgements.format)), "qrels", judgements.format


def judgements_given(args: argparse.Namespace, command: Any) -> list[tuple[Any, str | None, str]]:
    """The judgements an analysis's command reads beside its runs that were given, in order: (their
    :class:`~evalbridge.config.analyses.Judgements`, their name in the section's mapping, None for a key's own value,
    path). The named ones are named by the command's ``--names``, else by its ``naming`` of their paths."""
    given = [(j, text) for j in command.judgements for text in _listed(getattr(args, _dest_of(j)))]
    texts = [text for j, text in given if (j.named or j.many) and not j.keyed]
    chosen = getattr(args, _dest(command.names), None) if command.names is not None else None
    named = iter(zip(chosen, texts) if chosen else zip(command.naming(texts), texts) if command.naming is not None
                 else named_runs(texts).items())  # (NAME=PATH, else the file's stem, made unique)
    found: list[tuple[Any, str | None, str]] = []
    for j, text in given:
        if j.keyed:  # NAME=PATH, one more of NAME's files
            name, path = split_named(text)
            if name is None:
                raise InputError(f"{j.flag} takes {j.metavar}; got {text!r}.", fix=f"e.g. {j.flag} {j.metavar}, one "
                                                                                  f"word per file.")
            found.append((j, name, path))
        else:
            found.append((j, *next(named)) if j.named or j.many else (j, None, text))
    return found


def _listed(value: Any) -> list[str]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _numbers(args: argparse.Namespace, command: Any, judged: Sequence[tuple[Any, str | None, str]]) -> dict[str, Any]:
    """The section's lists of numbers (:attr:`~evalbridge.config.analyses.Command.numbers`): ``--KEY`` for every
    judgement, or each named judgement's own flag (a mapping by name); both kinds given are refused."""
    out: dict[str, Any] = {}
    for key in command.numbers:
        every = getattr(args, key)
        own = {name: list(values) for j, name, _ in judged if key in j.own and name is not None
               and (values := getattr(args, _dest(j.own[key]))) is not None}
        if every is not None and own:
            flags = [j.own[key] for j in command.judgements if key in j.own]
            raise InputError(f"give either {_flag(key)} ({'both judges' if len(flags) == 2 else 'every judge'}) or "
                             f"{' / '.join(flags)} (one each), not both.", fix=f"drop {_flag(key)}, or the per-judge flags.")
        if every is not None or own:
            out[key] = list(every) if every is not None else own
    return out


def _by_name(args: argparse.Namespace, command: Any) -> dict[str, Any]:
    """The section's mappings name -> numbers given as ``NAME=X1,X2,...`` words
    (:attr:`~evalbridge.config.analyses.Command.by_name`: ``--bins umbrela=0.25,0.5``), checked by the section."""
    out: dict[str, Any] = {}
    for key, said in command.by_name.items():
        for word in getattr(args, key) or ():
            name, _, values = word.partition("=")
            example = said.rpartition("e.g. ")[2] or f"{_flag(key)} NAME=0.25,0.5,0.75"
            try:
                numbers = [float(value) for value in values.split(",")]
            except ValueError:
                numbers = []
            if not name or not numbers:
                raise InputError(f"{_flag(key)} takes NAME=X1,X2,... (numbers); got {word!r}.", fix=f"e.g. {example}.")
            out.setdefault(key, {})[name] = numbers
    return out


def analysis_section(args: argparse.Namespace, command: Any) -> dict[str, Any]:
    """An analysis command's section (:class:`~evalbridge.config.analyses.Command`) from its flags: the keys given
    and, when it takes them, the ``-m`` metrics (one spec, or a list of them); its judgements are added by
    :func:`config_of`, which reads every input's columns."""
    section: dict[str, Any] = {key: value for key in command.keys + command.statistics
                               if (value := getattr(args, key)) is not None}
    if command.metrics is not None:  # the texts as typed: the section reads them as a config file's (no LABEL=)
        specs = list(args.metrics)
        section[command.metrics] = specs[0] if len(specs) == 1 else specs
    return section


def input_source(path: str, fmt: str | None, columns: dict[str, str]) -> dict[str, Any]:
    """A command-line input as a config source: ``{path | table, format, columns}``."""
    source: dict[str, Any] = {"table" if fmt == "spark-table" else "path": path}
    if fmt is not None:
        source["format"] = fmt
    if columns:
        source["columns"] = columns
    return source


def format_options(path: str, fmt: str | None, kind: str, columns: Mapping[str, str] | None = None) -> Any:
    """The options the format of a command-line input takes (None when the format cannot be told yet:
    the path is checked, and named in the error, when the config is validated); ``columns``: the roles given,
    which pick among the formats of a shared suffix as at every door (:func:`evalbridge.io.resolve`)."""
    from ..io import get_format, resolve

    try:
        return get_format(fmt, kind=kind).options if fmt is not None else \
            resolve(path, kind=kind, options=columns).options
    except (InputError, OSError):
        return None


def side_columns(args: argparse.Namespace, inputs: Sequence[tuple[str, str | None, str, str]]) -> list[dict[str, str]]:
    """The columns of each input ``(path, format, kind, flag of its side)``: ``--columns`` gives each input the
    roles its format takes, ``--qrels-columns`` / ``--run-columns`` give every role to their side (checked by the
    format). A ``--columns`` role no input takes is refused, never dropped."""
    shared = columns_of(args.columns, "--columns")
    sides = {"--qrels-columns": columns_of(getattr(args, "qrels_columns", None), "--qrels-columns"),
             "--run-columns": columns_of(getattr(args, "run_columns", None), "--run-columns")}
    out: list[dict[str, str]] = []
    taken: set[str] = set()
    for path, fmt, kind, flag in inputs:
        options = format_options(path, fmt, kind, {**shared, **sides.get(flag, {})}) if shared else None  # (to share)
        mine = {r: n for r, n in shared.items() if options is None or r in options}
        taken.update(mine)
        out.append({**mine, **sides.get(flag, {})})
    unused = [role for role in shared if role not in taken]
    if unused:
        from ..io import formats

        takers = sorted({n for n, f in formats().items() if any(r in f.options for r in unused)})
        raise InputError(f"--columns: no input's format reads the role {', '.join(map(repr, unused))}"
                         f"{' (formats that do: ' + ', '.join(takers) + ')' if takers else ''}.",
                         fix="remove it, or name the format with --qrels-format / --run-format.")
    return out


def metric_entries(texts: Sequence[str]) -> list[Any]:
    """``-m`` values as config entries: ``LABEL=SPEC`` becomes ``{metric: SPEC, label: LABEL}`` (checked by the schema)."""
    from ..metrics.requests import split_label

    entries: list[Any] = []
    for text in texts:
        label, spec = split_label(text)
        entries.append(spec if label is None else {"metric": spec, "label": label})
    return entries


def conventions(args: argparse.Namespace) -> dict[str, Any]:
    """The config keys every command's setting flags give (a flag left out is a key left out), and ``--seed``."""
    return {**settings_given(args, reads=False), "seed": args.seed}


def positionals(args: argparse.Namespace) -> tuple[str | None, list[str]]:
    """``(QRELS or None, RUNs)`` of ``eval``'s inputs: ``QRELS RUN...``, or inputs that each hold their own
    judgements (RAG logs, judged lists, label lists: one system each, read as a config's run without qrels).
    The first input is the qrels unless its own format (its suffix and first bytes: a RAG log's) holds both, or
    it is the only input (then ``--run-format`` may name its format); ``--qrels-format`` makes it the qrels."""
    from ..io import get_format, resolve

    inputs = list(args.inputs)
    if len(inputs) > 1 and args.qrels_format is not None:
        return inputs[0], inputs[1:]
    if len(inputs) == 1 and args.qrels_format is not None:
        raise InputError(f"--qrels-format is given but {inputs[0]} is the only input: the run is missing.",
                         fix="give QRELS then RUN..., or one input that holds both (e.g. --run-format rag).")
    roles = {**columns_of(args.columns), **columns_of(getattr(args, "run_columns", None), "--run-columns")}
    try:
        first = get_format(args.run_format) if args.run_format is not None and len(inputs) == 1 else \
            resolve(split_named(inputs[0])[1], kind="run" if len(inputs) == 1 else "qrels", options=roles)
    except (InputError, OSError):
        first = None  # a missing file or an unknown format: the config's validation names it
    if first is not None and first.paired:
        return None, inputs
    if split_named(inputs[0])[0] is not None and len(inputs) > 1:
        raise InputError(f"{inputs[0]}: the first input is the qrels, and NAME=PATH names a run.",
                         fix=f"give QRELS first, without a name, then the runs: evalbridge {args.command} qrels.txt "
                             f"{inputs[0]} ...")
    if len(inputs) == 1:
        holders = ", ".join(n for n, f in input_formats().items() if f.paired)
        raise InputError(f"{inputs[0]} is the only input, and it holds no judgements"
                         f"{f' (format {first.name!r})' if first is not None else ''}.",
                         fix=f"give QRELS then RUN..., or name the format of an input that holds both with "
                             f"--run-format ({holders}).")
    return inputs[0], inputs[1:]


def input_formats() -> Any:
    from ..io import formats

    return formats()


def _input_name(given: str) -> str:
    """An input as a title names it: a dataset by its id (``irds:msmarco-passage/trec-dl-2019/judged``), a file by
    its name."""
    from ..io.datasets import PREFIX

    return given if given.startswith(PREFIX) else Path(given).name


def config_of(args: argparse.Namespace, qrels: str | None, runs: Sequence[str]) -> Any:
    """The command line as a :class:`~evalbridge.config.schema.Config`, checked by the config's own schema."""
    from ..config.checking import FlagLocator
    from ..config.schema import validate

    analysis = getattr(args, "analysis", None)  # a command of the registry (add_analysis): its section's keys given
    command: Any = analysis.command if analysis is not None else None
    judged = judgements_given(args, command) if command is not None else []
    if qrels is None and not judged and getattr(args, "qrels_columns", None):
        raise InputError("--qrels-columns is given but there is no QRELS: the inputs hold their own judgements.",
                         fix="name their fields with --run-columns (or --columns).")
    named, baseline = runs_and_baseline(runs, getattr(args, "baseline", None))
    own = command.qrels if command is not None and command.qrels is not None else None
    sides = ([(qrels, *_side(args, own))] if qrels is not None else []) + \
        [(path, args.run_format, "run", "--run-columns") for path in named.values()] + \
        [(path, *_side(args, j)) for j, _, path in judged]
    columns = side_columns(args, sides)
    titled = [path for j, name, path in judged if name is not None and not j.flag.startswith("-")] or \
        ([qrels] if qrels else [split_named(run)[1] for run in runs[:1]] or [path for _, _, path in judged[:1]])
    # (the named judgements of the command line, else its first input)
    raw: dict[str, Any] = {"title": args.title or f"evalbridge {args.command} {' '.join(map(_input_name, titled))}"}
    if qrels is not None:
        raw["qrels"] = input_source(qrels, sides[0][1], columns[0])
    at = len(columns) - len(judged) - len(named)
    given_runs = {name: input_source(path, args.run_format, wanted)
                  for (name, path), wanted in zip(named.items(), columns[at:at + len(named)])}
    own = command.own(qrels) if command is not None else None
    if own is None and (given_runs or command is None or command.runs_flag is None):
        raw.update({"runs": given_runs, "metrics": metric_entries(args.metrics)})  # (else the section's own, or none)
    raw.update({**conventions(args), **policies(args)})
    if baseline is not None:
        raw["comparison"] = {"baseline": baseline, "test": args.test, "correction": args.correction,
                             "alpha": args.alpha, "confidence": args.confidence, "n_resamples": args.n_resamples}
    if getattr(args, "slice_by", None) is not None:
        raw["slices"] = {"by": args.slice_by, **({"file": args.slices_file} if args.slices_file else {})}
    elif getattr(args, "slices_file", None) is not None:
        raise InputError("--slices-file is given without --slice-by: which column holds the slices?",
                         fix="add --slice-by COLUMN (the column of the query table holding each query's label).")
    if getattr(args, "bands", False):
        raw["bands"] = True
    if getattr(args, "engine", None) is not None:
        raw["engine"] = args.engine
    spark = {key: value for key, value in (("master", getattr(args, "spark_master", None)),
                                           ("buckets", getattr(args, "spark_buckets", None))) if value is not None}
    if spark:
        raw["spark"] = spark
    if analysis is not None:
        section = analysis_section(args, command)
        for (j, name, path), (_, fmt, _, _), wanted in zip(judged, sides[len(sides) - len(judged):],
                                                           columns[len(columns) - len(judged):]):
            source = input_source(path, fmt, wanted)
            if name is None:
                section[j.key] = source
            elif j.keyed:
                section.setdefault(j.key, {}).setdefault(name, []).append(source)
            else:
                section.setdefault(j.key, {})[name] = source
        if own is not None and given_runs:
            section[own] = given_runs
        raw[analysis.key] = {**section, **_numbers(args, command, judged), **_by_name(args, command)}
    if args.command == "check":
        raw["crosscheck"] = {"backends": list(args.backends), "atol": args.atol, "canonicalise": args.canonicalise}
    flags = tracking_flags()
    tracking = tracking_given(args, flags)
    if tracking:
        raw["tracking"] = tracking
    located = analysis_flags(analysis, judged, own) if analysis is not None else {}
    return validate(raw, locator=FlagLocator({**FLAGS, **flags, **located}), folder=Path.cwd(),
                    default_dir=None)


def refuse_overwrites(args: argparse.Namespace, config: Any) -> None:
    """Refuse an output file that is (or would overwrite) an input, before anything is computed: the command's own
    (``-o``, ``--per-query``) and the files its section writes (``ppi --batch``)."""
    from ..config.pipeline import check_section_outputs, input_sources
    from ..reports.writing import STDOUT, check_outputs

    inputs = [s.path for s in input_sources(config) if s.path is not None]
    check_outputs(inputs, files=[args.output or STDOUT, getattr(args, "per_query", None)])
    check_section_outputs(config, inputs, files=[args.output or STDOUT])


def show_analysis(args: argparse.Namespace, analysis: Any) -> int:
    """A command that shows one analysis of the registry (``power``, ``tiers``, ``diagnose``...): the command line
    checked as a config with that section, run by the one pipeline, its result shown by the command's ``render``
    in ``--format`` to ``-o`` or stdout."""
    from ..config.pipeline import run_config

    command = analysis.command
    if not args.metrics and command.metric is not None:  # (extend would add to a default list, not replace it)
        args.metrics = [command.metric] if isinstance(command.metric, str) else list(command.metric)
    inputs = _listed(args.inputs)
    if command.unjudged is not None and getattr(args, _dest(command.unjudged[0])):  # its judgements are runs too
        positional = [j for j in command.judgements if not j.flag.startswith("-")]
        inputs = [*(path for j in positional for path in _listed(getattr(args, _dest_of(j)))), *inputs]
        for j in positional:
            setattr(args, _dest_of(j), None)
    if command.rankings is not None:
        qrels, runs = _rankings(args, command, inputs)
    else:
        qrels, runs = (None, inputs) if command.own_runs is not None else positionals(args) if command.qrels is None \
            else (getattr(args, _dest_of(command.qrels)), inputs)
    config = config_of(args, qrels, runs)
    refuse_overwrites(args, config)
    with progress(command.report and not args.quiet) as on_step:  # no report folder: only the section's files
        outcome = run_config(config, on_step=on_step, write=True, means=command.report)
    if not command.report:  # (the report's decision says it)
        note_official(args, config)
    found = outcome.report.analyses.get(analysis.key)
    for path in outcome.files:  # (--batch)
        note(args, command.wrote(config.analyses[analysis.key], found) if command.wrote else f"wrote {shown(path)}")
    emit(command.render(outcome.report if command.report else found, args.format), args.output, args)
    return EXIT_OK


#: a count as a message says it
_COUNTS = {2: "two", 3: "three", 4: "four"}


def _rankings(args: argparse.Namespace, command: Any, inputs: list[str]) -> tuple[str | None, list[str]]:
    """``(QRELS or None, the runs)`` of a command comparing :attr:`~evalbridge.config.analyses.Command.rankings` runs,
    given after QRELS (their metrics compared, ``-m`` required) or alone (their rankings, ``-m`` refused)."""
    n, name, runs = command.rankings, command.name, command.runs
    said = _COUNTS.get(n, str(n))
    if len(inputs) not in (n, n + 1):
        raise InputError(f"{name} takes {runs}, or QRELS {runs}; got {len(inputs)} inputs.",
                         fix=f"give the {said} runs compared, after the qrels when their metrics are compared.")
    if len(inputs) == n and args.metrics:
        raise InputError(f"metrics need judgements, and {name} was given no QRELS ({said} inputs: the runs).",
                         fix=f"give QRELS {runs} to compare the metrics, or leave -m out to compare the rankings.")
    if len(inputs) > n and not args.metrics:
        raise InputError(f"{name} with QRELS compares metrics, and none was given.",
                         fix="add -m METRIC..., e.g. -m ndcg@10 P@10; or leave QRELS out to compare the rankings.")
    return (inputs[0], inputs[1:]) if len(inputs) > n else (None, inputs)


def _add_judgements(parser: argparse.ArgumentParser, judgements: Any) -> None:
    """A set of judgements an analysis's command reads (:class:`~evalbridge.config.analyses.Judgements`): a flag
    (``--judgements-b QRELS_B``) or a positional (``BEFORE``), and its own format flag when it has one."""
    if judgements.flag.startswith("-"):
        parser.add_argument(judgements.flag, dest=_dest_of(judgements), nargs="+" if judgements.many else None,
                            default=None, metavar=judgements.metavar, required=judgements.required,
                            help=judgements.help)
    else:
        parser.add_argument(_dest_of(judgements), nargs="+" if judgements.many else None, metavar=judgements.flag,
                            help=judgements.help)

def add_conventions(parser: argparse.ArgumentParser, taken: Sequence[str] = (),
                    only: Sequence[str] | None = None) -> None:
    """Every setting's flag but the read policies (:func:`add_policies`) and the settings named ``taken`` (an
    analysis's keys of the same names: ``pool --depth`` is the pool's depth, not the evaluation's cut); ``only``: the
    settings a command reads (:attr:`~evalbridge.config.analyses.Command.settings`), None for every one."""
    add_settings(parser, reads=False, taken=taken, only=only)


def add_settings(parser: argparse.ArgumentParser, *, reads: bool, taken: Sequence[str] = (),
                 only: Sequence[str] | None = None) -> None:
    """One flag per setting of :data:`evalbridge.model.settings.ROWS` (``reads``: the read policies, else the others;
    ``only``: those settings alone), generated from its row: ``--judged-only`` for a True/False setting, the choices
    of a set of words, the type of a number. Every flag defaults to None: left out, the config's default decides
    (:func:`settings_given`)."""
    from ..common.parameters import Boolean, Interval, OneOf

    for row in ROWS.values():
        if row.reads != reads or row.name in taken or (only is not None and row.name not in only):
            continue
        rule, shown = row.rule, row.help.replace("%", "%%")
        if isinstance(rule, Boolean):
            parser.add_argument(row.flag, action="store_const", const=True, default=None, help=shown)
        elif isinstance(rule, OneOf):
            parser.add_argument(row.flag, choices=rule.choices, default=None, help=shown)
        else:
            kind = rule.kind if isinstance(rule, Interval) else str
            parser.add_argument(row.flag, type=kind, default=None, metavar=row.metavar or row.name.upper(), help=shown)


def add_statistics(parser: argparse.ArgumentParser, *names: str, hidden: bool = False) -> None:
    """One flag per field ``names`` of :class:`~evalbridge.Statistics` (``--test``, ``--n-resamples``...), generated
    from its row (:data:`evalbridge.stats.statistics.ROWS`) with the row's default; its value is checked by the row's
    rule where the command builds its config or calls its verb, so a bad value has one message at every door.
    ``hidden``: flags kept for scripts but out of the help (a command whose numbers use no randomness)."""
    from ..common.parameters import Interval
    from ..stats.statistics import ROWS as STATISTICS

    for name in names:
        row = STATISTICS[name]
        kind = row.rule.kind if isinstance(row.rule, Interval) else str
        parser.add_argument(row.flag, type=kind, default=row.rule.default, metavar=row.metavar or name.upper(),
                            help=argparse.SUPPRESS if hidden else row.help.replace("%", "%%"))


def statistics_given(args: argparse.Namespace, *names: str) -> Any:
    """The one :class:`~evalbridge.Statistics` of the statistics flags ``names`` a command has (:func:`add_statistics`:
    each defaults to its row's default), built and checked once, passed whole to the verb."""
    from ..stats.statistics import Statistics

    return Statistics(**{name: getattr(args, name) for name in names})


def add_rules(parser: argparse.ArgumentParser, rules: Mapping[str, Any], names: Sequence[str], *,
              helps: Mapping[str, str] | None = None, defaults: Mapping[str, str] | None = None,
              metavars: Mapping[str, str | tuple[str, ...]] | None = None,
              lists: Mapping[str, Any] | None = None, flags: Mapping[str, str] | None = None) -> None:
    """One flag per parameter ``names`` of ``rules`` (an analysis's: ``--alpha``, ``--min-difference``...), generated
    from its rule as :func:`add_statistics` generates the statistics' flags: the choices of a set of words, the type of
    a number (a name without a rule: a path), the help from the rule's fix (``helps``: where it does not say what a key
    chooses) and its default (``defaults``: how it reads where the rule's is None; none said when neither has one),
    its metavar (``metavars``: where it is not the name; several: the values the key takes, ``--scale LOW HIGH``),
    one or more words of a type (``lists``: key -> the type, ``--depth 10 20 50``) and its flag (``flags``: where it
    is not ``--KEY``, ``-k``).
    Every flag defaults to None: left out, the section's default decides; its value is checked by the rule where the
    config is read, so a bad value has one message at every door."""
    from ..common.parameters import Interval, OneOf

    for name in names:
        rule = rules.get(name)
        default = (defaults or {}).get(name, None if rule is None else rule.default)
        said = (helps or {}).get(name) or (rule.fix.split(";")[0].rstrip(".") if rule is not None and rule.fix else "")
        shown = (said if default is None else f"{said} (default {default})").replace("%", "%%")
        metavar = (metavars or {}).get(name, name.upper())
        flag = (flags or {}).get(name, _flag(name))
        if isinstance(rule, OneOf):
            parser.add_argument(flag, dest=name, default=None, metavar=f"{{{','.join(rule.choices)}}}",
                                help=shown)  # (the choices shown; the rule refuses the others, as the config's)
        elif name in (lists or {}):
            parser.add_argument(flag, dest=name, type=(lists or {})[name], nargs="+", default=None, metavar=metavar,
                                help=shown)
        else:
            kind = rule.kind if isinstance(rule, Interval) else str
            parser.add_argument(flag, dest=name, type=kind, default=None, metavar=metavar, help=shown,
                                nargs=len(metavar) if isinstance(metavar, tuple) else None)


def add_analysis(commands: Any, analysis: Any) -> None:
    """The command of an analysis of the registry (``analysis.command``, :class:`~evalbridge.config.analyses.Command`),
    added to ``commands`` (argparse's subparsers): INPUT..., ``-m``, its section's keys (:func:`add_rules`), the output,
    ``--seed`` and the flags of the inputs and settings; its handler is :func:`show_analysis`."""
    command = analysis.command
    p = commands.add_parser(command.name, help=command.help, description=command.description)
    read = (*command.judgements, *((command.qrels,) if command.qrels is not None else ()))
    for judgements in sorted((j for j in read if not j.flag.startswith("-")), key=lambda j: j.many):
        _add_judgements(p, judgements)  # positionals first, in order (one of several files last), before the inputs
    runs_only = command.qrels is not None or command.own_runs is not None
    if command.runs_flag is not None:  # the runs are an option (none or several)
        p.add_argument(command.runs_flag, dest="inputs", nargs="+", default=None, metavar="RUN", help=command.inputs)
    else:
        shown = f"[QRELS] {command.runs}" if command.rankings is not None else "RUN" if runs_only else "INPUT"
        p.add_argument("inputs", nargs=command.nargs, metavar=shown, help=command.inputs)
    if command.unjudged is not None:
        p.add_argument(command.unjudged[0], dest=_dest(command.unjudged[0]), action="store_true",
                       help=command.unjudged[1])
    options = [judgements for judgements in read if judgements.flag.startswith("-")]
    for judgements in options:  # a required one before -m (--human QRELS -m METRIC), the others after
        if judgements.required:
            _add_judgements(p, judgements)
    metric = command.metric if command.metric is None or isinstance(command.metric, str) else " ".join(command.metric)
    if command.measures:
        add_metrics(p, required=command.metric is None and command.rankings is None, default=metric)
    else:
        p.set_defaults(metrics=[])
    for judgements in options:
        if not judgements.required:
            _add_judgements(p, judgements)
    for judgements in read:
        if judgements.format is not None:
            p.add_argument(judgements.format, dest=_dest(judgements.format), default=None, metavar="FMT",
                           help=f"input format of {judgements.flag}")
    named = [j.flag for j in command.judgements if j.named]
    if command.names is not None:
        p.add_argument(command.names, dest=_dest(command.names), nargs=len(named), default=None,
                       metavar=("NAME",) * len(named),
                       help=f"names of {' and '.join(named)} (default: after their files)")
    for key, said in command.numbers.items():
        p.add_argument(_flag(key), dest=key, nargs="+", type=float, default=None, metavar="X",
                       help=f"{said}, of every set of judgements")
        for judgements in command.judgements:
            if key in judgements.own:
                p.add_argument(judgements.own[key], dest=_dest(judgements.own[key]), nargs="+", type=float,
                               default=None, metavar="X", help=f"{said}, of {judgements.flag} only")
    add_rules(p, analysis.rules(), command.keys, helps=command.helps, defaults=command.defaults,
              metavars=command.metavars, lists=command.lists, flags=command.flags)
    for key, said in command.by_name.items():
        p.add_argument(_flag(key), dest=key, nargs="+", default=None, metavar="NAME=X1,X2,...", help=said)
    add_statistics(p, *command.statistics)
    if command.report:
        from ..views.formats import report_formats

        p.add_argument("--format", choices=["text", *report_formats()], default="text",
                       help="a report format (text = terminal): the report `evalbridge run` writes")
        p.add_argument("-o", "--output", default=None, metavar="PATH", help=f"write {command.what} to this file "
                                                                            f"instead of stdout")
        p.add_argument("--title", default=None, help="heading of the report")
    elif command.formats:
        p.add_argument("--format", choices=command.formats, default=command.formats[0], help="output format")
        p.add_argument("-o", "--output", default=None, metavar="PATH", help="write to this file instead of stdout")
    else:
        add_shown(p, command.what)
    if not command.report:
        p.add_argument("--title", default=None, help=argparse.SUPPRESS)
    add_statistics(p, "seed", hidden=not command.random)
    add_quiet(p)
    add_inputs(p)
    add_conventions(p, taken=command.keys, only=command.settings)
    p.set_defaults(handler=lambda args: show_analysis(args, analysis), analysis=analysis)


def add_shown(parser: argparse.ArgumentParser, what: str) -> None:
    """``--format`` and ``-o/--output`` of a command that shows one result (``what``) in any format that writes
    tables, or JSON (:func:`evalbridge.views.formats.shown_formats`)."""
    from ..views.formats import shown_formats

    parser.add_argument("--format", choices=shown_formats(), default="terminal", help="output format (default terminal)")
    parser.add_argument("-o", "--output", default=None, metavar="PATH",
                        help=f"write {what} to this file instead of stdout")


def add_metrics(parser: argparse.ArgumentParser, *, required: bool = True, default: str | None = None) -> None:
    """``-m/--metrics``: the metrics every command that evaluates asks for, in any spelling (``required``: a command
    that also works without judgements, and so without metrics, leaves them optional; ``default``: the metric its
    handler measures when they are left out, said in the help)."""
    parser.add_argument("-m", "--metrics", nargs="+", action="extend", required=required, metavar="METRIC",
                        help="metric specs in any spelling, e.g. ndcg@10 'P(rel=2)@5' map recall@100; LABEL=SPEC "
                             "names the metric's column and JSON key, e.g. precision@5=P@5"
                             f"{f' (default {default})' if default is not None else ''}")


def add_quiet(parser: argparse.ArgumentParser) -> None:
    """``-q`` means the same for every command: a quieter stderr (the report and the failures stay)."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="quieter stderr: no progress bar, no note of the files written; the report and every "
                             "failure are still printed")


def add_inputs(parser: argparse.ArgumentParser) -> None:
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
    add_policies(parser)


def add_policies(parser: argparse.ArgumentParser) -> None:
    """``--ids`` and ``--duplicates``: the read policies, from their one declaration (the settings' rows)."""
    add_settings(parser, reads=True)
