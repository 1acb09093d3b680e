"""The analyses a config adds to its evaluation, one registry (:data:`ANALYSES`): ``agreement:``, ``diff:``, ``power:``, ``tiers:``,
``topic_set_size:``, ``fusion:``, ``diagnose:``, ``uncertain:``, ``changed:``, ``ppi:``, ``judges:``, ``pool:``.

Each :class:`Analysis` declares once its config section (key, help, the rules of its keys, how the section is
read), the inputs it reads beyond the runs, whether ``engine: spark`` can compute it, its steps and its step of the
pipeline (what it computes from the runs evaluated). The schema reads every section the registry lists, the pipeline
runs every analysis a config asks for, in the registry's order, and the report holds each result under the
analysis's key, where :mod:`evalbridge.views.sections` finds its view: a new analysis is its module (the verb), its
view and one entry here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..evalsets.agreement import DEFAULT_METRICS
from ..metrics.requests import MetricRequest
from ..metrics.spec import Metric
from .checking import Checker, suggest
from .layout import (AGREEMENT_KEYS, CORE_KEYS, AgreementSettings, ChangedSettings, ComparisonSettings, Config, DiagnoseSettings, DiffSettings,
                     FusionSettings, JudgesSettings, OfficialNotes, OutputFile, PoolSettings, PowerSettings, PPISettings, TiersSettings,
                     TopicSetSettings, UncertainSettings)
from .sources import Source

if TYPE_CHECKING:
    from ..common.parameters import Rule
    from ..errors import InputError
    from ..stats.statistics import Statistics

__all__ = ["Analysis", "Command", "Judgements", "ANALYSES", "commands", "TOP_KEYS", "Given", "Context", "read_analyses", "analysis_sources", "analysis_outputs", "analysis_steps",
           "analysis_settings"]


@dataclass(frozen=True)
class Given:
    """What a section's reader sees of the rest of the config."""

    folder: Path
    qrels: Source | None
    runs: Mapping[str, Source]
    metrics: tuple[MetricRequest, ...]
    policies: Mapping[str, str]
    comparison: ComparisonSettings | None
    backend: str = "auto"


@dataclass(frozen=True)
class Context:
    """What an analysis's step sees of the run so far.

    Attributes:
        config: the evaluation.
        results: system name -> its Results (evaluated with the config's metrics and settings; when the command
            shows the section alone, only those a step reads, when it first reads them).
        pairs: system name -> (qrels, run) as read (empty with ``engine: spark``).
        qrels: the config's qrels as read (None when the runs carry their own).
        baseline: the system the others are measured against: the comparison's, else the first run.
        step: reports one step of the pipeline (``step("diff of x against y")``).
        judgements: reads a qrels source a section names (a second set, a judge), recorded with the inputs.
        run: reads a run a section names (``run(name, source, keep=True)``; a run of the config's is the one read;
            ``keep=False``: not kept, for a section reading its runs one at a time), recorded with
            the inputs.
    """

    config: Config
    results: Mapping[str, Any]
    pairs: Mapping[str, tuple[Any, Any]]
    qrels: Any
    baseline: str | None
    step: Callable[[str], None]
    judgements: Callable[[Source], Any]
    run: Callable[..., Any]

    @property
    def runs(self) -> dict[str, Any]:
        """System name -> its run, as read."""
        return {name: run for name, (_, run) in self.pairs.items()}


def _statistics(settings: Any, keys: Iterable[str], seed: int | None = None) -> Statistics:
    """The one :class:`~evalbridge.Statistics` of an analysis: its section's keys that are fields of it (read into
    ``settings``), and the config's ``seed`` for an analysis that draws at random."""
    from ..stats.statistics import ROWS, Statistics

    chosen: dict[str, Any] = {name: getattr(settings, name) for name in keys if name in ROWS}
    if seed is not None:
        chosen["seed"] = seed
    return Statistics(**chosen)


def _none(settings: Any) -> tuple[()]:
    return ()


def _one(config: Config, settings: Any) -> int:
    return 1


@dataclass(frozen=True)
class Command:
    """An analysis's own command (``evalbridge power QRELS BASE RUN... -m METRIC``), declared with its entry: the
    command line builds its parser from this and from the analysis's rules (:func:`evalbridge.cli.shared.add_analysis`:
    INPUT..., ``-m``, one ``--KEY`` per key, the output, the settings' and inputs' flags) and its handler runs the
    command line as a config with the analysis's section through the one pipeline
    (:func:`evalbridge.cli.shared.show_analysis`), so a new analysis gets its command with no module of the CLI.

    Attributes:
        name: the command (``design`` for ``topic_set_size:``).
        help: its line in ``evalbridge --help``; ``description``: its own ``--help``.
        inputs: what its INPUTs are; ``runs``: how a message about the section names them (``RUN RUN...``).
        keys: the section's keys given as flags (``--KEY``), typed, helped and checked by the analysis's rules (a key
            without a rule is a path: ``--batch PATH``).
        helps: a key's help where its rule's fix does not say what it chooses (the tests of ``--test``), or it has
            no rule.
        defaults: how a key's default reads where its rule's default is None (``the observed |difference|``).
        random: its numbers draw at random (``--seed`` shown; else kept for scripts but out of the help).
        render: (its result, an output format) -> the text shown; ``what``: what ``-o`` writes.
        statistics: the section's keys that are fields of :class:`~evalbridge.Statistics`, given by their flags
            (:func:`evalbridge.cli.shared.add_statistics`: the rows' help and defaults, checked by the section's rules).
        judgements: the judgements it reads beside the runs, each a section key (:class:`Judgements`).
        metric: the metric measured when ``-m`` is left out (None: ``-m`` is required).
        metrics: the section's key that takes every ``-m`` metric (``diagnose: {metric}``; None: the config's
            metrics alone).
        qrels: the config's qrels when they are a positional of their own (``changed``'s AFTER, after its BEFORE),
            not the first INPUT; the INPUTs are then the runs.
        formats: the choices of ``--format``, the first the default (empty: every format that writes tables).
        report: it shows the whole report (``--format`` a report format or text, ``-o``, ``--title``, the progress
            bar), not its result alone.
        nargs: how many INPUTs (argparse's ``nargs``: ``"*"`` none or more, None exactly one).
        own_runs: the section's key that takes the RUNs as its own (``agreement.runs``): the config then has no
            runs or metrics of its own, and ``-m`` goes to ``metrics``.
        names: the flag naming the named judgements (``--names A B``; left out: ``naming`` of their paths).
        naming: the names of the named judgements from their paths, when ``names`` is not given.
        numbers: the section's keys that take a list of numbers (``--bins T...``), key -> help; a named judgement's
            ``own`` flags give one per judge instead (a mapping by name), and both kinds together are refused.
        metavars: a key's metavar where it is not the key's name (``--plan-width W``); several, the values a key
            takes (``--scale LOW HIGH``: the section's ``scale: [low, high]``).
        wrote: (its settings, its result) -> the note on stderr of the files its section wrote (``wrote
            next.jsonl: the next 100 queries to label (judge)``); None: ``wrote PATH``.
        runs_flag: the option giving the runs (none or several), where the INPUTs are not them (``judges --runs``).
        by_name: the section's keys given as ``NAME=X1,X2,...`` words, key -> help: a mapping name -> the list of
            numbers (``--bins umbrela=0.25,0.5``: ``bins: {umbrela: [0.25, 0.5]}``).
        measures: it measures metrics (``-m``); False: it has no ``-m`` (a pool counts pairs).
        lists: the section's keys given as one or more words (``--depth 10 20 50``), key -> the type of each.
        flags: a key's flag where it is not ``--KEY`` (``-k``).
        unjudged: (flag, help) of the flag saying nothing is judged yet: its positional judgements are then the
            first of the runs (``pool --unjudged RUN RUN...``).
        rankings: how many runs it compares, given after QRELS or alone (``diff [QRELS] RUN_A RUN_B``: 2): after
            QRELS they are the config's runs, measured by ``-m`` (required then); alone, the section's own runs
            (``own_runs``), their rankings compared without judgements, and ``-m`` is refused.
        settings: the settings its numbers depend on, each given by its flag (``pool``: ``ties``,
            ``score_precision``); None: every setting (a command that evaluates). A setting it does not read has no
            flag, so none is taken and ignored.
    """

    name: str
    help: str
    description: str
    inputs: str
    runs: str
    keys: tuple[str, ...]
    render: Callable[[Any, str], str]
    helps: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, str] = field(default_factory=dict)
    random: bool = False
    what: str = "the table"
    statistics: tuple[str, ...] = ()
    judgements: tuple[Judgements, ...] = ()
    metric: str | tuple[str, ...] | None = None
    metrics: str | None = None
    qrels: Judgements | None = None
    formats: tuple[str, ...] = ()
    report: bool = False
    nargs: str | None = "+"
    own_runs: str | None = None
    names: str | None = None
    naming: Callable[[Sequence[str]], list[str]] | None = None
    numbers: Mapping[str, str] = field(default_factory=dict)
    metavars: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict)
    wrote: Callable[[Any, Any], str] | None = None
    runs_flag: str | None = None
    by_name: Mapping[str, str] = field(default_factory=dict)
    measures: bool = True
    lists: Mapping[str, Callable[[str], Any]] = field(default_factory=dict)
    flags: Mapping[str, str] = field(default_factory=dict)
    unjudged: tuple[str, str] | None = None
    rankings: int | None = None
    settings: tuple[str, ...] | None = None

    def own(self, qrels: str | None) -> str | None:
        """The section's key taking the RUNs as its own (:attr:`own_runs`), given ``qrels`` (the QRELS of the command
        line, or None): always, or only without QRELS for a command comparing :attr:`rankings`."""
        return None if self.rankings is not None and qrels is not None else self.own_runs


@dataclass(frozen=True)
class Judgements:
    """A set of judgements an analysis's command reads beside its runs: its section's ``key`` takes it as a qrels
    source, given by ``flag`` (an option, ``--judgements-b``, or a positional, ``BEFORE``), ``help`` saying what it
    is; read in ``format`` (its own flag, ``--after-format``), else in ``--qrels-format`` with ``--qrels-columns``.
    ``named``: one entry of the mapping ``key`` (``agreement.judges``), named as the command's ``names`` says;
    ``many``: an option taking several files, one entry each; ``own``: a key of the command's ``numbers`` -> this
    judgement's own flag for it (``{"bins": "--bins-a"}``); ``required``: an option the command cannot do without
    (``--human``); ``keyed``: each of several files given as ``NAME=PATH``, one more entry of the list ``key: {NAME:
    [...]}`` (``--reruns umbrela=run2.qrels``)."""

    key: str
    flag: str
    help: str
    metavar: str = "QRELS"
    format: str | None = None
    named: bool = False
    many: bool = False
    own: Mapping[str, str] = field(default_factory=dict)
    required: bool = False
    keyed: bool = False


@dataclass(frozen=True)
class Analysis:
    """One analysis a config can ask for.

    Attributes:
        key: its config section (``power``), the report's key of its result and the name of its view.
        help: what the section sets, for the config reference and messages.
        read: the section's value (None when absent) checked into its settings, or None when not asked for.
        run: its step of the pipeline: the settings and what the pipeline has (:class:`Context`) -> its result.
        rules: key of the section -> its rule (the verb's own parameters), gathered when a key is checked.
        sources: the inputs its settings name beyond the qrels and runs (for hashing and the overwrite check).
        outputs: the files its settings name to write beside the report folder (for the overwrite check).
        write: writes those files from its result (``write(context, settings, result)`` -> the files written),
            called only when the config writes (not with ``--no-write`` / ``write=False``).
        steps: how many steps of progress it reports.
        spark: why ``engine: spark`` cannot compute it (None: it can).
        command: its own command of the command line (None: a config section only, or a command of its own module).
        record: its settings as the provenance records them (None: every field, inputs by their key).
        alone: whether its section (the value given) names its own judgements and runs, so it may be the whole
            config (no runs, metrics or qrels of the config's: ``agreement:``, ``uncertain: {runs: {bm25: ...}}``).
        official: the section's keys naming judgements whose dataset the config's ``metrics: official`` takes the
            measures of after its qrels' (``ppi``'s ``human``, as :func:`evalbridge.ppi` takes them).
        runs_optional: it needs no runs, on the config's qrels and its own judgements (``judges:``, the labels
            alone): the config may then have qrels and no runs or metrics.
    """

    key: str
    help: str
    read: Callable[[Checker, Any, Given], Any]
    run: Callable[[Context, Any], Any]
    rules: Callable[[], Mapping[str, Rule]]
    sources: Callable[[Any], Iterable[Source | None]] = _none
    outputs: Callable[[Any], Iterable[OutputFile | None]] = _none
    write: Callable[[Context, Any, Any], Sequence[Path]] | None = None
    steps: Callable[[Config, Any], int] = _one
    spark: str | None = None
    command: Command | None = None
    record: Callable[[Any], Any] | None = None
    alone: Callable[[Any], bool] | None = None
    official: tuple[str, ...] = ()
    runs_optional: bool = False

    def checked(self, check: Checker, spec: Mapping[str, Any], names: Iterable[str], defaults: Any) -> dict[str, Any]:
        """The keys ``names`` of the section ``spec``, each checked by its rule (absent: its default in ``defaults``,
        the settings' dataclass)."""
        rules = self.rules()
        return {name: check.checked(spec[name], (self.key, name), rules[name]) if name in spec
                else getattr(defaults, name) for name in names}


def _at_least_two(check: Checker, key: str, runs: Mapping[str, Source], why: str) -> None:
    if len(runs) < 2:
        raise check.fail((key,), f"{why}, and needs at least two runs; got {len(runs)}.",
                         fix=f"add another run, or remove the {key} section."
                         if check.locator.source else "add another run.")


def _metrics_of(check: Checker, spec: Mapping[str, Any], section: str, metrics: Sequence[MetricRequest],
                *qrels: Source | None) -> tuple[Metric | tuple[Metric, ...], tuple[str, ...]]:
    """The section's ``metric``: one spec, or a list of specs (each measured, a tuple); else the config's first
    metric. ``official`` takes the measures of the first of ``qrels`` that is a dataset (the config's qrels, then the
    section's own judgements), said by the note returned beside (none when not asked)."""
    from .sections import read_metrics, read_official

    if "metric" not in spec:
        if not metrics:
            raise check.fail((section,), "no metric to measure: the config has no metrics.",
                             fix=f"write {section}: {{metric: nDCG@10}}.")
        return metrics[0].metric, ()
    given, official = read_official(check, spec["metric"], (section, "metric"), *qrels)
    if isinstance(given, list) and given and all(isinstance(m, str) for m in given):
        return tuple(r.metric for r in read_metrics(check, given, (section, "metric"))), official
    if not isinstance(given, str):
        raise check.fail((section, "metric"), f"{section} measures a metric (a spec such as nDCG@10) or a list of "
                                              f"them; got {type(given).__name__} {given!r:.60}.",
                         fix=f"write {section}: {{metric: nDCG@10}} or {{metric: [nDCG@10, P@10]}}.")
    return read_metrics(check, [given], (section, "metric"))[0].metric, official


def _asked(metric: Metric | tuple[Metric, ...]) -> str | list[str]:
    """A section's metric as its verb takes it: one spec, or a list of specs."""
    return str(metric) if isinstance(metric, Metric) else [str(m) for m in metric]


def _named(check: Checker, section: str) -> Callable[[str], str]:
    """How the door names a key of ``section`` in a message: its flag on a command line (``--batch``), else the key."""
    return (lambda key: check.locator.label((section, key))) if check.locator.source is None else (lambda key: key)


def _refuse(check: Checker, path: tuple[str, ...], message: str, fix: str) -> InputError:
    """A refusal of the keys at ``path``: a config's names its file, line and key first; a command line's message
    names its flags itself (:func:`_named`)."""
    from ..errors import InputError

    return check.fail(path, message, fix=fix) if check.locator.source is not None else InputError(message, fix=fix)


def _judging_batch(check: Checker, spec: Mapping[str, Any], section: str, given: Given,
                   what: str) -> tuple[OutputFile | None, Source | None, Source | None]:
    """A section's judging batch (``batch``: the file written, beside the report folder) and the texts it carries
    (``topics``, ``corpus``: files read, relative to the config's folder); texts without a batch are refused
    (``what``: what the batch holds)."""
    named = _named(check, section)
    texts = {key: Source(f"{section}.{key}", "texts",
                         path=check.existing_file(spec[key], (section, key), given.folder), written=spec[key],
                         line=check.locator.line((section, key)))
             for key in ("topics", "corpus") if key in spec}
    if texts and "batch" not in spec:
        raise _refuse(check, (section, next(iter(texts))),
                      f"{named('topics')} / {named('corpus')} give the texts of a judging batch, and no "
                      f"{named('batch')} file is named.",
                      f"add {named('batch')}{' ' if check.locator.source is None else ': '}batch.jsonl ({what}, with "
                      f"their texts).")
    batch = None
    if "batch" in spec:
        written = check.string(spec["batch"], (section, "batch"))
        batch = OutputFile(check.locator.label((section, "batch")),
                           Path(os.path.normpath(given.folder / Path(written).expanduser())), written,
                           check.locator.line((section, "batch")))
    return batch, texts.get("topics"), texts.get("corpus")


# --- agreement: ---------------------------------------------------------------------------------------------------

#: the keys of ``agreement:`` that are the verb's options, each checked by its rule
_AGREEMENT_KEYS = ("alpha_level", "test", "alpha", "n_resamples")


def _agreement_rules() -> Mapping[str, Rule]:
    """Krippendorff's alpha level and the ranking agreement's test, alpha and resamples."""
    from ..common.parameters import OneOf
    from ..evalsets.ranking_agreement import TESTS as AGREEMENT_TESTS
    from ..stats.kappa import ALPHA_LEVELS
    from ..stats.paired_tests import COMPARISON_PARAMETERS as P

    return {"alpha_level": OneOf("alpha_level", tuple(ALPHA_LEVELS), default="ordinal"),
            "test": OneOf("test", tuple(AGREEMENT_TESTS), default="t"), "alpha": P["alpha"],
            "n_resamples": P["n_resamples"]}


def _section_runs(check: Checker, value: Any, path: tuple[str, ...], given: Given, why: str) -> dict[str, Source]:
    """The runs a section measures (``runs:``, of the agreement's and the uncertainty's): a list of the config's runs
    by name, or runs of its own (name -> run source, read as the config's are). A run whose format holds its own
    judgements (a RAG log's) is refused: the section measures it under other labels (``why``), and its own would be
    dropped without a word."""
    from .sections import read_name, read_source

    where = path + ("runs",)
    chosen: dict[str, Source] = {}
    if isinstance(value, list):
        for i, name in enumerate(value):
            if name not in given.runs:
                raise check.fail(where + (i,), f"unknown run {name!r}: a name in a list refers to the config's runs "
                                               f"({', '.join(given.runs) or 'none'}).",
                                 fix=f"{suggest(str(name), list(given.runs))}Or give the runs themselves: "
                                     f"runs: {{bm25: runs/bm25.txt}}.")
            chosen[str(name)] = given.runs[name]
    elif isinstance(value, Mapping):
        for name, source in check.mapping(value, where, None, "{bm25: runs/bm25.txt}").items():
            chosen[read_name(check, name, where + (name,), "system")] = read_source(
                check, source, where + (name,), given.folder, "run", "local", given.policies)
    else:
        raise check.fail(where, f"expected a list of the config's runs, or runs of its own; got {value!r:.60}.",
                         fix="write e.g. runs: [bm25, dense], or runs: {bm25: runs/bm25.txt}.")
    for name, source in chosen.items():
        if source.carries_qrels:
            raise check.fail(where + (name,), f"format {source.format!r} holds its own judgements; {why}.",
                             fix="give this run in a run format (trec, json, ranked, ...).")
    return chosen


def _read_agreement(check: Checker, value: Any, given: Given) -> AgreementSettings | None:
    """``agreement:``: two judges (qrels sources), the runs ranked under both, the agreement's own options."""
    from ..errors import InputError
    from ..evalsets.agreement import DEFAULT_METRICS, check_thresholds
    from ..metrics.spec import parse_metric
    from .sections import read_metrics, read_name, read_official, read_source, read_supported

    if value is None:
        return None
    path, folder, policies = ("agreement",), given.folder, given.policies
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
    judges = {read_name(check, name, path + ("judges", name), "judge"):
              read_source(check, source, path + ("judges", name), folder, "qrels", "local", policies)
              for name, source in judges_spec.items()}
    chosen = _section_runs(check, spec.get("runs", []), path, given, "the agreement ranks each run under both judges")
    if len(chosen) == 1:
        raise check.fail(path + ("runs",), f"ranking systems needs at least two runs; got one ({next(iter(chosen))}).",
                         fix="add another run, or leave runs out for the judge agreement alone.")
    named, official = (read_official(check, spec["metrics"], path + ("metrics",), *judges.values())
                       if "metrics" in spec else (None, ()))
    asked = (tuple(r.metric for r in read_metrics(check, named, path + ("metrics",))) if "metrics" in spec
             else tuple(r.metric for r in given.metrics) or tuple(parse_metric(m) for m in DEFAULT_METRICS))
    bins: dict[str, tuple[float, ...]] = {}
    given_bins = spec.get("bins")
    if given_bins is not None:
        per_judge = (given_bins if isinstance(given_bins, Mapping) else dict.fromkeys(judges, given_bins))
        for name, edges in per_judge.items():
            where = path + ("bins",) + ((name,) if isinstance(given_bins, Mapping) else ())
            if str(name) not in judges:
                raise check.fail(where, f"unknown judge {name!r}; the judges are {', '.join(judges)}.",
                                 fix=f"{suggest(str(name), list(judges))}Key bins by a judge's name, or give one "
                                     f"list for both.")
            try:
                checked = check_thresholds(edges, "bins")
            except InputError as error:
                raise check.fail(where, str(error)) from None
            if checked is None:
                raise check.fail(where, "expected a list of thresholds; got null.", fix="write e.g. [2.5, 5, 7.5].")
            bins[str(name)] = checked
    read_supported(check, asked, given.backend, path + ("metrics",))
    return AgreementSettings(
        judges=MappingProxyType(judges), runs=MappingProxyType(chosen), metrics=asked, bins=MappingProxyType(bins),
        official=official,
        **AGREEMENT.checked(check, spec, _AGREEMENT_KEYS, AgreementSettings))


def _run_agreement(ctx: Context, settings: AgreementSettings) -> Any:
    """:func:`evalbridge.agree` of the two judges read, every run named ranked under both (the config's seed and
    settings)."""
    from ..errors import InputError
    from ..evalsets.agreement import agree

    ctx.step("comparing the judges")
    judges = [ctx.judgements(source) for source in settings.judges.values()]
    runs = {name: ctx.run(name, source) for name, source in settings.runs.items()}
    a, b = settings.names
    bins_a, bins_b = settings.bins.get(a), settings.bins.get(b)
    same = bins_a is not None and bins_a == bins_b
    try:
        return agree(judges[0], judges[1], runs or None, [str(m) for m in settings.metrics], names=(a, b),
                     bins=bins_a if same else None, bins_a=None if same else bins_a, bins_b=None if same else bins_b,
                     alpha_level=settings.alpha_level,
                     statistics=_statistics(settings, _AGREEMENT_KEYS, ctx.config.seed), settings=ctx.config.settings)
    except InputError as error:
        if ctx.config.path is not None:  # the pipeline names the section of a config file
            raise
        raise InputError(f"agreement: {error}", source=ctx.config.where) from None


def _agreement_record(settings: AgreementSettings) -> dict[str, Any]:
    """What the provenance records of ``agreement:``: the judges and runs by name, the metrics as specs."""
    return {"judges": list(settings.judges), "runs": list(settings.runs), "metrics": [str(m) for m in settings.metrics],
            "bins": {name: list(edges) for name, edges in settings.bins.items()}, "alpha_level": settings.alpha_level,
            "test": settings.test, "alpha": settings.alpha, "n_resamples": settings.n_resamples}


def _stems(paths: Sequence[str]) -> list[str]:
    """Judges named after their files without the last suffix (``human`` for ``qrels/human.txt.gz``); the same
    stem twice: ``a``, ``b``..."""
    stems = [Path(p).name.removesuffix(".gz").rsplit(".", 1)[0] for p in paths]
    return stems if len(set(stems)) == len(stems) else [chr(ord("a") + i) for i in range(len(stems))]


def _render_report(report: Any, fmt: str) -> str:
    """The whole report in a report format (``text``: what a terminal shows)."""
    from ..reports.report import render

    return render(report, "terminal" if fmt == "text" else fmt)


AGREEMENT = Analysis(
    "agreement", "{judges, runs, metrics, bins, alpha_level, test, alpha, n_resamples}: two sets of judgements "
                 "compared, and the system rankings they induce",
    _read_agreement, _run_agreement, _agreement_rules,
    sources=lambda s: (*s.judges.values(), *s.runs.values()), record=_agreement_record, alone=lambda value: True,
    spark="the agreement between judges is computed from judgements and runs in memory, and the inputs stay in Spark",
    command=Command(
        "agree", "agreement between two sets of judgements (e.g. human vs LLM judge)",
        "Compare two qrels over the (query, doc) pairs both judged: confusion, Cohen's kappa (plain, quadratic), "
        "Krippendorff's alpha; with runs, the system rankings each induces: Kendall's tau, tau_ap, flipped "
        "significant differences.",
        "runs to rank under both (two or more), each PATH or NAME=PATH", "RUN", ("alpha_level",), _render_report,
        helps={"alpha_level": "Krippendorff's alpha level of measurement"}, random=True, what="the report",
        statistics=("test", "alpha", "n_resamples"),
        judgements=(Judgements("judges", "QRELS_A", "the first judgements (e.g. human)", named=True,
                               own={"bins": "--bins-a"}),
                    Judgements("judges", "QRELS_B", "the second judgements (e.g. an LLM judge)", named=True,
                               own={"bins": "--bins-b"})),
        metric=DEFAULT_METRICS, metrics="metrics", report=True, nargs="*", own_runs="runs", names="--names",
        naming=_stems, numbers={"bins": "thresholds turning grades into categories"}))


# --- diff: --------------------------------------------------------------------------------------------------------

#: the keys of ``diff:``: the diff's own and the rankings' similarity's (``p``, ``rbo_ties``, as ``evalbridge diff
#: --p --rbo-ties``)
_DIFF_KEYS = ("k", "queries", "moves", "p", "rbo_ties")


def _diff_rules() -> Mapping[str, Rule]:
    from ..decisions.diffing import DIFF_PARAMETERS
    from ..stats.similarity import SIMILARITY_PARAMETERS

    return {**DIFF_PARAMETERS, "p": SIMILARITY_PARAMETERS["p"], "rbo_ties": SIMILARITY_PARAMETERS["ties"]}


def _read_diff(check: Checker, value: Any, given: Given) -> DiffSettings | None:
    """``diff:``: true, false or ``{k, queries, moves, p, rbo_ties}``; ``p`` or ``rbo_ties`` given: the rankings'
    similarity (RBO at persistence ``p``, its ties variant; Jaccard at k, tau, tau_AP) shown beside the metrics.
    ``runs`` (two runs of its own, in a config without runs): their rankings compared alone, without judgements
    (``eb.diff(None, a, b)``)."""
    from .sections import read_name, read_source

    if value is None or value is False:
        return None
    spec = check.mapping({} if value is True else value, ("diff",), (*_DIFF_KEYS, "runs"),
                         "{k: 10, queries: 10, moves: 3, p: 0.9, rbo_ties: a}")
    own: dict[str, Source] = {}
    if "runs" in spec:
        path = ("diff", "runs")
        if given.runs or given.qrels is not None:
            raise check.fail(path, "a diff of its own runs compares their rankings without judgements, and the "
                                   "config has runs or qrels of its own.",
                             fix="remove diff.runs to diff the config's runs, or give the two runs in a config "
                                 "without runs and qrels.")
        named = check.mapping(spec["runs"], path, None, "{bm25: runs/bm25.txt, dense: runs/dense.txt}")
        if len(named) != 2:
            raise check.fail(path, f"a diff compares two rankings; got {len(named)}.",
                             fix="name two: runs: {bm25: runs/bm25.txt, dense: runs/dense.txt} (the first is the "
                                 "baseline).")
        own = {read_name(check, name, path + (name,), "system"):
               read_source(check, source, path + (name,), given.folder, "run", "local", given.policies)
               for name, source in named.items()}
    else:
        _at_least_two(check, "diff", given.runs, "a diff compares a system with the baseline")
    return DiffSettings(**DIFF.checked(check, spec, _DIFF_KEYS, DiffSettings), runs=MappingProxyType(own))


def _run_diff(ctx: Context, settings: DiffSettings) -> dict[str, Any]:
    """Every other system against the baseline, from the results already computed
    (:func:`evalbridge.decisions.diffing.diff_results`), with the rankings' similarity when asked for
    (:func:`evalbridge.stats.similarity.similarity`, as ``eb.diff(..., similarity=True)``)."""
    from ..decisions.diffing import diff, diff_results
    from ..stats.similarity import SIMILARITY_PARAMETERS, similarity

    baseline, found = ctx.baseline, {}
    conventions = ctx.config.settings
    if settings.runs:  # two rankings of its own, compared without judgements
        (name_a, a), (name_b, b) = ((name, ctx.run(name, source)) for name, source in settings.runs.items())
        ctx.step(f"the rankings of {name_b} against {name_a}")
        chosen: dict[str, Any] = {key: value for key, value in (("p", settings.p), ("ties", settings.rbo_ties))
                                  if value is not None}  # (else diff's defaults)
        return {name_b: diff(None, a, b, k=settings.k, queries=settings.queries, moves=settings.moves,
                             names=(name_a, name_b), settings=conventions, **chosen)}
    for name in ctx.results:
        if name != baseline and baseline is not None:
            ctx.step(f"diff of {name} against {baseline}")
            qrels, run = ctx.pairs[name]
            base = ctx.pairs[baseline][1]
            moved = similarity(base, run, p=SIMILARITY_PARAMETERS["p"].default if settings.p is None else settings.p,
                               ties=settings.rbo_ties or SIMILARITY_PARAMETERS["ties"].default, k=settings.k,
                               order=conventions.ties, score_precision=conventions.score_precision,
                               depth=conventions.depth, unpaired="count") if settings.similarity else None
            found[name] = diff_results(qrels, base, run, ctx.results[baseline], ctx.results[name],
                                       k=settings.k, queries=settings.queries, moves=settings.moves,
                                       names=(baseline, name), similarity=moved)
    return found


def _own_runs(value: Any) -> bool:
    """A section that names runs of its own (``runs:`` a mapping of them)."""
    return isinstance(value, Mapping) and isinstance(value.get("runs"), Mapping)


def _diff_record(settings: DiffSettings) -> dict[str, Any]:
    """What the provenance records of ``diff:``: its options, and its own runs by name when it has them."""
    return {**{key: getattr(settings, key) for key in _DIFF_KEYS},
            **({"runs": list(settings.runs)} if settings.runs else {})}


def _render_diff(found: Mapping[str, Any], fmt: str) -> str:
    """The diff of the command's two runs (the one of the section's)."""
    from ..views.run_diff import render_diff

    return render_diff(next(iter(found.values())), fmt)


DIFF = Analysis(
    "diff", "true or {k, queries, moves, p, rbo_ties}: every system against the baseline query by query (the "
            "documents that entered or left the top k; with p or rbo_ties, the rankings' similarity beside)",
    _read_diff, _run_diff, _diff_rules, steps=lambda config, s: 1 if s.runs else max(len(config.runs) - 1, 0),
    sources=lambda s: tuple(s.runs.values()), alone=_own_runs, record=_diff_record,
    spark="a diff reads each ranking's documents in memory, and the inputs stay in Spark",
    command=Command(
        "diff", "where run B differs from run A, query by query (without QRELS: how far the rankings moved)",
        "Evaluate RUN_A and RUN_B once each, rank every query by the change of each metric, and show for the largest "
        "drops and gains the judged documents that entered or left the top k (grade, rank in A and B), the unjudged "
        "ones, and the largest rank moves (a config's diff: section). Without QRELS (RUN_A RUN_B only): the rankings "
        "compared, per query and overall: rank-biased overlap with its min / max / residual, Jaccard at k, Kendall's "
        "tau and tau_AP over the shared documents.",
        "the judgements (leave them out to compare the rankings only), the run compared with (the baseline) and the "
        "run compared, each run PATH or NAME=PATH", "RUN_A RUN_B", _DIFF_KEYS, _render_diff,
        helps={"p": "the rankings' similarity (always without QRELS; with QRELS given this or --rbo-ties): the "
                    "persistence of rank-biased overlap, e.g. 0.9 (the top 10 hold 65% of the weight)",
               "rbo_ties": "RBO's treatment of ties: w (tied documents are equal), a (their order is unknown: the "
                           "expected RBO over their orders) or b (a, corrected for what the ties lose)"},
        defaults={"p": "0.9", "rbo_ties": "a"}, metavars={"k": "N", "queries": "N", "moves": "N", "rbo_ties": "w|a|b"},
        what="the diff", flags={"k": "-k"}, own_runs="runs", rankings=2))


# --- power: -------------------------------------------------------------------------------------------------------

def _power_rules() -> Mapping[str, Rule]:
    from ..decisions.power import POWER_PARAMETERS

    return POWER_PARAMETERS


#: the keys of ``power:`` (the keywords of :func:`evalbridge.power` but the results, metrics and baseline)
_POWER_KEYS = ("test", "alpha", "power", "effect", "sides")


def _read_power(check: Checker, value: Any, given: Given) -> PowerSettings | None:
    """``power:``: true, false or ``{test, alpha, power, effect, sides}``. Left out, a comparison has it at the
    comparison's test and alpha (the t-test's for ``test: wilcoxon``, which has no closed-form power here, and the
    report says which)."""
    from ..decisions.power import POWER_TESTS

    comparison = given.comparison
    if value is False or (value is None and comparison is None):
        return None
    spec = check.mapping({} if value is None or value is True else value, ("power",), _POWER_KEYS,
                         "{effect: 0.01, power: 0.8}")
    _at_least_two(check, "power", given.runs, "power compares a system with the baseline")
    test = comparison.statistics.test if comparison is not None else "t"
    defaults: dict[str, Any] = {"test": test if test in POWER_TESTS else "t",
                                "alpha": comparison.statistics.alpha if comparison is not None else PowerSettings.alpha}
    chosen = POWER.checked(check, {k: v for k, v in spec.items() if v is not None}, _POWER_KEYS, PowerSettings)
    return PowerSettings(**{**chosen, **{k: v for k, v in defaults.items() if spec.get(k) is None}})


def _run_power(ctx: Context, settings: PowerSettings) -> Any:
    """The power of every system against the baseline, metric by metric (:func:`evalbridge.power`)."""
    from ..decisions.power import power

    if not ctx.results:
        return None
    return power(ctx.results, ctx.config.metrics, baseline=ctx.baseline, statistics=_statistics(settings, _POWER_KEYS),
                 power=settings.power, effect=settings.effect)


def _render_power(result: Any, fmt: str) -> str:
    from ..views.power_view import render_power

    return render_power(result, fmt)


POWER = Analysis(
    "power", "true, false or {effect, power, alpha, test, sides}: the smallest difference each pair can detect and "
             "the queries a target effect needs (on by default with a comparison, at its test and alpha)",
    _read_power, _run_power, _power_rules, steps=lambda config, s: 0,  # closed-form: no step worth showing
    command=Command(
        "power", "the smallest difference the eval set can detect, and the queries a target effect needs",
        "Evaluate every run once and, for each run against the first (the baseline) and each metric, give the minimum "
        "detectable effect with the queries at hand and the queries needed to detect the target effect (default: the "
        "observed difference), from the spread of the per-query differences (eb.power; a config's power: section). "
        "Inputs: QRELS then the runs, or inputs that hold their own judgements (RAG logs).",
        "QRELS, the baseline run, then one or more runs (each PATH or NAME=PATH)", "BASELINE RUN...", _POWER_KEYS,
        _render_power,
        helps={"test": "t (noncentral t, as statsmodels' TTestPower) or randomization (Fisher's test, from its "
                       "permutation distribution on small sets)"},
        defaults={"effect": "the observed |difference|"}))


# --- diagnose: ----------------------------------------------------------------------------------------------------

_DIAGNOSE_KEYS = ("pool_depth", "trials", "test", "correction", "alpha", "n_resamples")


def _diagnose_rules() -> Mapping[str, Rule]:
    from ..evalsets.diagnostics import DIAGNOSIS_PARAMETERS
    from ..stats.paired_tests import COMPARISON_PARAMETERS as P

    return {**DIAGNOSIS_PARAMETERS, **{name: P[name] for name in ("test", "correction", "alpha", "n_resamples")}}


def _read_diagnose(check: Checker, value: Any, given: Given) -> DiagnoseSettings | None:
    """``diagnose:``: true, or the one metric, a second set of judgements and the options of the diagnostics."""
    from .sections import read_source

    if value is None or value is False:
        return None
    spec = check.mapping({} if value is True else value, ("diagnose",), ("metric", "judgements_b", *_DIAGNOSE_KEYS),
                         "{metric: nDCG@10, judgements_b: qrels/llm.txt, pool_depth: 100}")
    if given.qrels is None:
        raise check.fail(("diagnose",), "the diagnostics judge the runs with one set of judgements, and the config "
                                        "has no qrels (its inputs hold their own).",
                         fix="add qrels: <path to the qrels>, with the runs in a run format.")
    if len(given.runs) < 2:
        raise check.fail(("diagnose",), f"the diagnostics tell systems apart, and need at least two runs; got "
                                        f"{len(given.runs)}.", fix="add every system the collection is to tell apart.")
    other = spec.get("judgements_b")
    judgements_b = None if other is None else read_source(check, other, ("diagnose", "judgements_b"), given.folder,
                                                          "qrels", "local", given.policies)
    metric, official = _metrics_of(check, spec, "diagnose", given.metrics, given.qrels, judgements_b)
    return DiagnoseSettings(
        metric=metric, judgements_b=judgements_b, official=official,
        **DIAGNOSE.checked(check, spec, _DIAGNOSE_KEYS, DiagnoseSettings))


def _run_diagnose(ctx: Context, settings: DiagnoseSettings) -> Any:
    """:func:`evalbridge.diagnose` of the qrels and the runs read (the config's seed and settings)."""
    from ..evalsets.diagnostics import diagnose

    other = None if settings.judgements_b is None else ctx.judgements(settings.judgements_b)
    ctx.step("diagnosing the test collection")
    return diagnose(ctx.qrels, ctx.runs, _asked(settings.metric), judgements_b=other, pool_depth=settings.pool_depth,
                    trials=settings.trials, statistics=_statistics(settings, _DIAGNOSE_KEYS, ctx.config.seed),
                    settings=ctx.config.settings)


DIAGNOSE = Analysis(
    "diagnose", "true or {metric, judgements_b, pool_depth, trials, test, correction, alpha, n_resamples}: can the "
                "qrels tell the runs apart, and do they favour some, for one metric or a list (evalbridge.diagnose)",
    _read_diagnose, _run_diagnose, _diagnose_rules, sources=lambda s: (s.judgements_b,),
    spark="the diagnostics read every run's first documents and the judgements in memory, and the inputs stay in "
          "Spark",
    command=Command(
        "diagnose", "diagnostics of a test collection: can it tell these systems apart?",
        "Discriminative power, swap rate between random halves of the queries, leave-one-run-out pool bias, "
        "saturated queries, judged share by rank and, with --judgements-b, the agreement of two sets of judgements; "
        "each with what it means for a decision.",
        "QRELS then two or more RUNs (each PATH or NAME=PATH)", "RUN RUN...", ("pool_depth", "trials"),
        lambda found, fmt: str(found.table(fmt)),
        helps={"pool_depth": "depth of the pool: a run's own documents are those in its first POOL_DEPTH that no "
                             "other run has there",
               "trials": "random splits of the queries into halves for the swap rate"},
        what="the diagnosis", random=True, statistics=("test", "correction", "alpha", "n_resamples"),
        judgements=(Judgements("judgements_b", "--judgements-b", "a second set of judgements of the same pairs "
                                                                 "(another judge): their agreement", "QRELS_B"),),
        metric="nDCG@10", metrics="metric"))


# --- uncertain: ---------------------------------------------------------------------------------------------------

_UNCERTAIN_KEYS = ("draws", "n_resamples", "confidence")


def _uncertain_rules() -> Mapping[str, Rule]:
    from ..evalsets.uncertainty import UNCERTAINTY_PARAMETERS

    return {name: rule for name, rule in UNCERTAINTY_PARAMETERS.items() if name != "seed"}


def _read_uncertain(check: Checker, value: Any, given: Given) -> UncertainSettings | None:
    """``uncertain:``: several judges or one qrels of probabilities, the runs measured (a list of the config's,
    default all; or runs of its own, a mapping, as the agreement's: the config then needs no runs) and the
    bootstrap's options."""
    from .sections import read_name, read_source

    if value is None:
        return None
    path, runs = ("uncertain",), given.runs
    spec = check.mapping(value, path, ("metric", "judges", "probabilities", "runs", *_UNCERTAIN_KEYS),
                         "{metric: P@10, judges: {ann: qrels/ann.txt, bob: qrels/bob.txt}}")
    if ("judges" in spec) == ("probabilities" in spec):
        judges_key, probabilities_key = (check.locator.label(path + (key,)) for key in ("judges", "probabilities"))
        raise check.fail(path, f"give either {judges_key} (several judges' grades of the same pairs) or "
                               f"{probabilities_key} (one qrels of probabilities of relevance), not both and not "
                               f"neither.",
                         fix="write uncertain: {judges: {ann: qrels/ann.txt, bob: qrels/bob.txt}} or uncertain: "
                             "{probabilities: qrels/p.txt}." if check.locator.source else
                             f"give {judges_key} with two judges' qrels or more, or {probabilities_key} with one.")
    judges: dict[str, Source] = {}
    if "judges" in spec:
        named = check.mapping(spec["judges"], path + ("judges",), None, "{ann: qrels/ann.txt, bob: qrels/bob.txt}")
        if len(named) < 2:
            raise check.fail(path + ("judges",), f"several judges are compared; got {len(named)}.",
                             fix="name two or more: judges: {ann: qrels/ann.txt, bob: qrels/bob.txt}."
                             if check.locator.source else "name two or more.")
        judges = {read_name(check, name, path + ("judges", name), "judge"):
                  read_source(check, source, path + ("judges", name), given.folder, "qrels", "local", given.policies)
                  for name, source in named.items()}
    probabilities = read_source(check, spec["probabilities"], path + ("probabilities",), given.folder, "qrels",
                                "local", given.policies) if "probabilities" in spec else None
    measured = _section_runs(check, spec.get("runs", list(runs)), path, given,
                             "the metric is measured under the judges' labels in question")
    if not measured:
        raise check.fail(path + ("runs",), f"expected a list of the config's runs, or runs of its own; got "
                                           f"{spec.get('runs')!r:.60}.",
                         fix=f"write e.g. runs: [{next(iter(runs), 'bm25')}].")
    metric, official = _metrics_of(check, spec, "uncertain", given.metrics, given.qrels, *judges.values(),
                                   probabilities)
    return UncertainSettings(
        metric=metric, runs=MappingProxyType(measured), official=official,
        judges=MappingProxyType(judges), probabilities=probabilities,
        **UNCERTAIN.checked(check, spec, _UNCERTAIN_KEYS, UncertainSettings))


def _run_uncertain(ctx: Context, settings: UncertainSettings) -> dict[str, Any]:
    """:func:`evalbridge.uncertain` of each run named, with the judges' labels or the probabilities (the config's
    seed and settings)."""
    from ..evalsets.uncertainty import uncertain

    judges = {name: ctx.judgements(source) for name, source in settings.judges.items()}
    probabilities = None if settings.probabilities is None else ctx.judgements(settings.probabilities)
    found = {}
    for name, source in settings.runs.items():
        ctx.step(f"the uncertainty of {name}'s labels")
        found[name] = uncertain(ctx.run(name, source), _asked(settings.metric), judges=judges or None,
                                probabilities=probabilities, system=name, draws=settings.draws,
                                statistics=_statistics(settings, _UNCERTAIN_KEYS, ctx.config.seed),
                                settings=ctx.config.settings)
    return found


def _uncertain_record(settings: UncertainSettings) -> dict[str, Any]:
    """What the provenance records of ``uncertain:``: the runs by name, the inputs by their key."""
    return {"metric": _asked(settings.metric), "runs": list(settings.runs),
            "judges": {name: source.key for name, source in settings.judges.items()},
            "probabilities": None if settings.probabilities is None else settings.probabilities.key,
            "draws": settings.draws, "n_resamples": settings.n_resamples, "confidence": settings.confidence}


def _file_names(paths: Sequence[str]) -> list[str]:
    """Judges named after their files (``ann.qrels``); the same name twice: ``judge1``, ``judge2``..."""
    names = [Path(p).name for p in paths]
    return names if len(set(names)) == len(names) else [f"judge{i + 1}" for i in range(len(names))]


def _render_uncertain(found: Mapping[str, Any], fmt: str) -> str:
    """The measurement of the command's one run."""
    return str(next(iter(found.values())).table(fmt))


UNCERTAIN = Analysis(
    "uncertain", "{metric, judges | probabilities, runs, draws, n_resamples, confidence}: the metric (or a list) of "
                 "each run with the uncertainty of its labels (evalbridge.uncertain)",
    _read_uncertain, _run_uncertain, _uncertain_rules,
    sources=lambda s: (*s.judges.values(), s.probabilities, *s.runs.values()), steps=lambda config, s: len(s.runs),
    spark="the uncertainty of the labels is measured from runs and judgements in memory, and the inputs stay in "
          "Spark", record=_uncertain_record, alone=_own_runs,
    command=Command(
        "uncertain", "a metric with the uncertainty of its labels (several judges, or probabilities of relevance)",
        "The expected value of the metric and an interval bootstrapped over queries and labels (one judge, or one "
        "labelling drawn from the probabilities, per query), beside the interval of the queries alone.",
        "the run: PATH or NAME=PATH", "RUN", ("draws",), _render_uncertain,
        helps={"draws": "labellings drawn from the probabilities"}, what="the measurement", random=True,
        statistics=("n_resamples", "confidence"),
        judgements=(Judgements("judges", "--judges", "two or more judges' qrels of the same pairs", many=True),
                    Judgements("probabilities", "--probabilities",
                               "one qrels whose grades are probabilities of relevance, in [0, 1]")),
        metrics="metric", nargs=None, own_runs="runs", naming=_file_names))


# --- changed: -----------------------------------------------------------------------------------------------------

_CHANGED_KEYS = ("test", "alpha", "n_resamples")


def _changed_rules() -> Mapping[str, Rule]:
    """what_changed's test, alpha and n_resamples are the agreement's (it is the ranking agreement of two sides)."""
    from ..evalsets.ranking_agreement import TESTS as AGREEMENT_TESTS
    from ..common.parameters import OneOf
    from ..stats.paired_tests import COMPARISON_PARAMETERS as P

    return {"test": OneOf("test", tuple(AGREEMENT_TESTS), default="t"), "alpha": P["alpha"],
            "n_resamples": P["n_resamples"]}


def _read_changed(check: Checker, value: Any, given: Given) -> ChangedSettings | None:
    """``changed:``: ``{before, metrics, test, alpha, n_resamples}``: what the config's qrels (after) changed against
    the judgements ``before`` (a qrels source) for the config's runs."""
    from .sections import read_metrics, read_official, read_source

    if value is None:
        return None
    spec = check.mapping(value, ("changed",), ("before", "metrics", *_CHANGED_KEYS),
                         "{before: qrels.before.txt, metrics: [nDCG@10]}")
    if "before" not in spec:
        raise check.fail(("changed",), "what changed needs the judgements before (the config's qrels are after).",
                         fix="write changed: {before: <path to the qrels before>}.")
    if given.qrels is None:
        raise check.fail(("changed",), "what changed compares the judgements before with the config's qrels, and "
                                       "the config has none.", fix="add qrels: <path to the qrels after>.")
    if len(given.runs) < 2:
        raise check.fail(("changed",), f"what changed for the decision orders systems, and needs two runs or more; "
                                       f"got {len(given.runs)}.",
                         fix="add another run, or remove the changed section." if check.locator.source else
                         "add another run.")
    before = read_source(check, spec["before"], ("changed", "before"), given.folder, "qrels", "local",
                         given.policies)
    named, official = read_official(check, spec.get("metrics"), ("changed", "metrics"), given.qrels, before)
    asked = read_metrics(check, [named] if isinstance(named, str) else named, ("changed", "metrics")) \
        if named is not None else given.metrics
    if not asked:
        raise check.fail(("changed",), "no metric to order the systems by: the config has no metrics.",
                         fix="write changed: {before: ..., metrics: [nDCG@10]}.")
    return ChangedSettings(
        before=before, official=official,
        metrics=tuple(r.asked for r in asked), **CHANGED.checked(check, spec, _CHANGED_KEYS, ChangedSettings))


def _run_changed(ctx: Context, settings: ChangedSettings) -> Any:
    """:func:`evalbridge.what_changed` of the judgements before against the config's qrels for the runs read (the
    config's seed and settings)."""
    from ..evalsets.changes import what_changed

    before = ctx.judgements(settings.before)
    ctx.step("what the judgements changed")
    return what_changed(before, ctx.qrels, ctx.runs, list(settings.metrics),
                        statistics=_statistics(settings, _CHANGED_KEYS, ctx.config.seed), settings=ctx.config.settings)


CHANGED = Analysis(
    "changed", "{before, metrics, test, alpha, n_resamples}: what the config's qrels changed against the judgements "
               "before: means, order, significance, the system to ship (evalbridge.what_changed)",
    _read_changed, _run_changed, _changed_rules, sources=lambda s: (s.before,),
    spark="what changed is measured from runs and two sets of judgements in memory, and the inputs stay in Spark",
    command=Command(
        "changed", "what new judgements changed: means, orderings, significance, ship",
        "Evaluate the runs with the judgements BEFORE and AFTER (e.g. merged with a judge's grades): each system's "
        "mean, Kendall's tau and tau_ap between the orderings, every pair's significance decision before and after, "
        "and whether the same system would be shipped (by the first metric).",
        "the runs (two or more), each PATH or NAME=PATH", "RUN RUN...", (),
        lambda found, fmt: found.render("terminal" if fmt == "text" else fmt).rstrip("\n") + "\n",
        random=True, statistics=_CHANGED_KEYS, metric="nDCG@10", formats=("text", "markdown", "json"),
        judgements=(Judgements("before", "BEFORE", "the judgements before"),),
        qrels=Judgements("qrels", "AFTER", "the judgements after", format="--after-format")))


# --- ppi: ---------------------------------------------------------------------------------------------------------

_PPI_KEYS = ("unit", "confidence", "alpha", "correction")
#: the keys of ``ppi:`` that ask for a plan (PredictionPowered.plan's width, difference and costs)
_PLAN_KEYS = ("plan_width", "plan_difference", "cost_human", "cost_llm")
#: the keys of ``ppi:`` that choose the items of its judging batch (PredictionPowered.write_batch's count and by)
_NEXT_KEYS = ("batch_size", "by")


def _ppi_rules() -> Mapping[str, Rule]:
    """The estimates' (eb.ppi's), the plan's (``plan_*``, the costs) and the judging batch's (its size and order)
    rules; the batch's files (``batch``, ``topics``, ``corpus``) are paths (:func:`_judging_batch`)."""
    from dataclasses import replace

    from ..common.parameters import Interval
    from ..evalsets.prediction_powered import NEXT_PARAMETERS, PLAN_PARAMETERS, PPI_PARAMETERS

    return {**PPI_PARAMETERS,
            "scale": Interval("scale", float, None, None, fix="the grades of both sets of labels, lowest and highest"),
            **{f"plan_{name}": PLAN_PARAMETERS[name] for name in ("width", "difference")},
            **{name: PLAN_PARAMETERS[name] for name in ("cost_human", "cost_llm")},
            "batch_size": replace(NEXT_PARAMETERS["count"], name="batch_size", default=PPISettings.batch_size),
            "by": NEXT_PARAMETERS["by"]}


def _read_ppi(check: Checker, value: Any, given: Given) -> PPISettings | None:
    """``ppi:``: ``{human, unit, scale, confidence, alpha, correction}``: the config's qrels are the judge's labels of
    every pair, ``human`` (a qrels source) the humans' labels of a random sample; ``plan_width`` or
    ``plan_difference`` (with ``cost_human``, ``cost_llm``): the human labels that target needs; ``batch`` (with
    ``batch_size``, ``by``, ``topics``, ``corpus``): the items to label next, written as a judging batch."""
    from .sections import read_source

    if value is None:
        return None
    spec = check.mapping(value, ("ppi",), ("human", "scale", *_PPI_KEYS, *_PLAN_KEYS, "batch", *_NEXT_KEYS,
                                           "topics", "corpus"), "{human: qrels/human_sample.txt}")
    if "human" not in spec:
        raise check.fail(("ppi",), "prediction-powered estimates need the humans' labels of a sample (the config's "
                                   "qrels are the judge's labels of every pair).",
                         fix="write ppi: {human: <path to the human-labelled sample>}.")
    if given.qrels is None:
        raise check.fail(("ppi",), "prediction-powered estimates correct the judge's labels (the config's qrels), and "
                                   "the config has none.", fix="add qrels: <path to the judge's labels>.")
    scale = spec.get("scale")
    if scale is not None and not (isinstance(scale, list) and len(scale) == 2 and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in scale) and scale[0] < scale[1]):
        raise check.fail(("ppi", "scale"), f"expected the lowest and the highest grade, [low, high]; got "
                                           f"{scale!r:.60}.", fix="write e.g. scale: [0, 3].")
    named, flag = _named(check, "ppi"), check.locator.source is None
    plan = PPI.checked(check, {k: v for k, v in spec.items() if v is not None}, _PLAN_KEYS, PPISettings)
    width, difference = plan["plan_width"], plan["plan_difference"]
    costs = [key for key in ("cost_human", "cost_llm") if plan[key] is not None]
    if costs and width is None and difference is None:
        raise _refuse(check, ("ppi", costs[0]), f"{named('cost_human')} / {named('cost_llm')} price a plan, and no "
                                                f"plan is asked for.",
                      f"add {named('plan_width')}{' ' if flag else ': '}W (or {named('plan_difference')}"
                      f"{' ' if flag else ': '}D).")
    if width is not None and difference is not None:
        raise _refuse(check, ("ppi", "plan_difference"), f"a plan is for a target width ({named('plan_width')}) or a "
                                                         f"target difference ({named('plan_difference')}), not both.",
                      f"leave {named('plan_width')} or {named('plan_difference')} out.")
    if difference is not None and len(given.runs) < 2:
        raise check.fail(("ppi", "plan_difference"), "without a baseline there is no difference to plan for: one run "
                                                     "is given.",
                         fix=f"plan for a target width ({named('plan_width')}), or give the runs to compare with the "
                             f"first.")
    batch, topics, corpus = _judging_batch(check, spec, "ppi", given, "the items to label next")
    return PPISettings(
        human=read_source(check, spec["human"], ("ppi", "human"), given.folder, "qrels", "local", given.policies),
        scale=None if scale is None else (float(scale[0]), float(scale[1])), batch=batch, topics=topics,
        corpus=corpus, **plan, **PPI.checked(check, spec, (*_PPI_KEYS, *_NEXT_KEYS), PPISettings))


def _run_ppi(ctx: Context, settings: PPISettings) -> Any:
    """:func:`evalbridge.ppi` of the runs read with the config's qrels as the judge's labels and the human sample
    (the config's metrics, baseline and settings), carrying the plan asked (``PredictionPowered.with_plan``)."""
    from ..evalsets.prediction_powered import ppi

    human = ctx.judgements(settings.human)
    ctx.step("prediction-powered estimates")
    found = ppi(ctx.qrels, human, ctx.runs, ctx.config.metrics, baseline=ctx.baseline if len(ctx.runs) > 1 else None,
                unit=settings.unit, scale=settings.scale, statistics=_statistics(settings, _PPI_KEYS),
                settings=ctx.config.settings)
    if settings.plan_width is None and settings.plan_difference is None:
        return found
    return found.with_plan(width=settings.plan_width, difference=settings.plan_difference,
                           cost_human=settings.cost_human, cost_llm=settings.cost_llm)


def _write_ppi(ctx: Context, settings: PPISettings, found: Any) -> list[Path]:
    """The judging batch of ``batch:``: the ``batch_size`` items to label next (``PredictionPowered.write_batch``,
    as ``evalbridge ppi --batch``), written atomically, with the texts of ``topics:`` and ``corpus:``."""
    from ..reports.writing import atomic_file

    if settings.batch is None:
        return []
    with atomic_file(settings.batch.path) as temporary:  # the old batch stays whole until the new one is
        found.write_batch(temporary, settings.batch_size, by=settings.by,
                          queries=None if settings.topics is None else settings.topics.path,
                          documents=None if settings.corpus is None else settings.corpus.path)
    return [settings.batch.path]


def _ppi_record(settings: PPISettings) -> dict[str, Any]:
    """What the provenance records of ``ppi:``: the human sample by its key and the estimates' options; the plan's
    and the batch's keys when they are asked for."""
    record: dict[str, Any] = {"human": settings.human.key, "unit": settings.unit,
                              "scale": None if settings.scale is None else list(settings.scale),
                              **{key: getattr(settings, key) for key in _PPI_KEYS[1:]}}
    if settings.plan_width is not None or settings.plan_difference is not None:
        record.update({key: getattr(settings, key) for key in _PLAN_KEYS})
    if settings.batch is not None:
        record.update({"batch": settings.batch.written, **{key: getattr(settings, key) for key in _NEXT_KEYS},
                       **{key: None if (text := getattr(settings, key)) is None else text.key
                          for key in ("topics", "corpus")}})
    return record


def _ppi_wrote(settings: PPISettings, found: Any) -> str:
    return (f"wrote {Path(settings.batch.written) if settings.batch else ''}: the next {settings.batch_size} "
            f"{'queries' if found.unit == 'query' else 'pairs'} to label ({settings.by})")


PPI = Analysis(
    "ppi", "{human, unit, scale, confidence, alpha, correction, plan_width | plan_difference, cost_human, cost_llm, "
           "batch, batch_size, by, topics, corpus}: the qrels are a judge's labels, human a random human-labelled "
           "sample: each run's metrics and differences estimated from both (evalbridge.ppi); plan_*: the human labels "
           "that target needs; batch: the items to label next, written as a judging batch",
    _read_ppi, _run_ppi, _ppi_rules, sources=lambda s: (s.human, s.topics, s.corpus), outputs=lambda s: (s.batch,),
    write=_write_ppi, record=_ppi_record, official=("human",),
    spark="prediction-powered estimates are measured from runs and two sets of judgements in memory, and the inputs "
          "stay in Spark",
    command=Command(
        "ppi", "metrics from a judge's labels of every pair and humans' of a sample (prediction-powered)",
        "Each run's metrics and each difference against the first run (the baseline), estimated from a judge's "
        "labels of every pair (QRELS, an LLM's) and the humans' labels of a random sample (--human), PPI++ with the "
        "judge's power-tuned weight, beside the human sample's interval and the judge-only number (eb.ppi; a "
        "config's ppi: section); optionally the human labels a target needs (--plan-width / --plan-difference) and "
        "the items to label next (--batch).",
        "QRELS (the judge's labels), the baseline run, then the other runs (each PATH or NAME=PATH)", "BASELINE RUN...",
        ("unit", "scale", "confidence", "alpha", "correction", *_PLAN_KEYS, "batch", *_NEXT_KEYS, "topics", "corpus"),
        lambda found, fmt: str(found.table(fmt)),
        helps={"unit": "what the humans sampled: query (each labelled whole) or pair (P@k, DCG)",
               "scale": "the grades of both sets of labels",
               "confidence": "level of the intervals", "alpha": "significance level of the differences",
               "correction": "over every (system, metric) difference",
               "plan_width": "also give the human labels an interval no wider than W needs, with the judge and "
                             "without",
               "plan_difference": "also give the human labels detecting a difference D needs (power 0.8)",
               "cost_human": "the cost of one human label, for the plan",
               "cost_llm": "the cost of one judge label, for the plan",
               "batch": "write the items to label next as a judging batch, JSON Lines (read back by merge)",
               "batch_size": "how many items the batch holds",
               "by": "label next where the judge is least reliable, or where the systems differ most",
               "topics": "the queries' texts for the batch: TREC topics, BEIR queries.jsonl",
               "corpus": "the documents' texts for the batch: BEIR corpus.jsonl"},
        defaults={"scale": "the human labels' range"}, what="the estimates",
        judgements=(Judgements("human", "--human", "the humans' labels of a random sample", required=True),),
        metavars={"scale": ("LOW", "HIGH"), "plan_width": "W", "plan_difference": "D", "batch": "PATH"},
        wrote=_ppi_wrote))


# --- judges: ------------------------------------------------------------------------------------------------------

_JUDGES_KEYS = ("calibration_bins", "test", "alpha", "n_resamples")


def _judges_rules() -> Mapping[str, Rule]:
    from ..evalsets.judges import JUDGES_PARAMETERS
    from ..stats.statistics import ROWS

    return {**JUDGES_PARAMETERS, "n_resamples": ROWS["n_resamples"].rule}


def _read_judges(check: Checker, value: Any, given: Given) -> JudgesSettings | None:
    """``judges:``: ``{labels: {name: qrels source}, bins: {name: thresholds}, reruns: {name: [qrels source, ...]},
    calibration_bins, test, alpha, n_resamples}``: the config's qrels are the humans' labels, each of ``labels`` a
    judge's (``bins``: thresholds onto the humans' scale of a judge giving scores; ``reruns``: the labels of its
    re-runs, for its label noise)."""
    from ..errors import InputError
    from ..evalsets.judges import check_bins
    from .sections import read_name, read_source

    if value is None:
        return None
    path = ("judges",)
    spec = check.mapping(value, path, ("labels", "bins", "reruns", *_JUDGES_KEYS),
                         "{labels: {gpt4o: judges/gpt4o.qrels}}")
    if "labels" not in spec:
        raise check.fail(path, "a judge's report card holds its labels against the humans' (the config's qrels).",
                         fix="write judges: {labels: {gpt4o: <path to the judge's labels>}}.")
    if given.qrels is None:
        raise check.fail(path, "the judges are held against the humans' labels (the config's qrels), and the config "
                               "has none.", fix="add qrels: <path to the human labels>.")
    if len(given.runs) == 1:
        raise _refuse(check, path, "the system order under a judge compares two or more runs; one is given.",
                      f"give {'--runs ' if check.locator.source is None else ''}two or more runs, or none (the labels "
                      f"alone).")
    named = check.mapping(spec["labels"], path + ("labels",), None, "{gpt4o: judges/gpt4o.qrels}")
    if not named:
        raise check.fail(path + ("labels",), "no judge is named.", fix="name one or more: labels: {gpt4o: ...}.")
    labels = {read_name(check, name, path + ("labels", name), "judge"):
              read_source(check, source, path + ("labels", name), given.folder, "qrels", "local", given.policies)
              for name, source in named.items()}
    bins = check.mapping(spec.get("bins", {}), path + ("bins",), None, "{umbrela: [0.25, 0.5, 0.75]}")
    thresholds: dict[str, tuple[float, ...]] = {}
    for name, edges in bins.items():
        try:
            thresholds.update(check_bins({name: edges}, labels))
        except InputError as error:
            raise check.fail(path + ("bins", name), str(error)) from None
    reruns: dict[str, tuple[Source, ...]] = {}
    for name, given_sources in check.mapping(spec.get("reruns", {}), path + ("reruns",), None,
                                             "{gpt4o: [judges/gpt4o.run2.qrels]}").items():
        where = path + ("reruns", name)
        if str(name) not in labels:
            raise check.fail(where, f"{name!r} is no judge of labels ({', '.join(labels)}).",
                             fix=f"{suggest(str(name), list(labels))}Key reruns by a judge's name.")
        if not isinstance(given_sources, list) or not given_sources:
            raise check.fail(where, f"expected a list of the re-runs' labels; got {given_sources!r:.60}.",
                             fix=f"write reruns: {{{name}: [<path of a re-run's labels>, ...]}}.")
        reruns[str(name)] = tuple(read_source(check, source, where + (i,), given.folder, "qrels", "local",
                                              given.policies) for i, source in enumerate(given_sources))
    return JudgesSettings(labels=MappingProxyType(labels), bins=MappingProxyType(thresholds),
                          reruns=MappingProxyType(reruns),
                          **JUDGES.checked(check, spec, _JUDGES_KEYS, JudgesSettings))


def _run_judges(ctx: Context, settings: JudgesSettings) -> Any:
    """:func:`evalbridge.judges` of the config's qrels (the humans) and each judge's labels, the runs ranked by the
    config's metrics under each."""
    from ..evalsets.judges import judges

    labels = {name: ctx.judgements(source) for name, source in settings.labels.items()}
    ctx.step("the judges' report cards")
    reruns = {name: [ctx.judgements(source) for source in sources] for name, sources in settings.reruns.items()}
    return judges(ctx.qrels, labels, ctx.runs or None, [r.label for r in ctx.config.metrics], bins=settings.bins or None,
                  reruns=reruns or None,
                  calibration_bins=settings.calibration_bins,
                  statistics=_statistics(settings, _JUDGES_KEYS, ctx.config.seed), settings=ctx.config.settings)


JUDGES = Analysis(
    "judges", "{labels: {name: qrels}, bins, reruns, calibration_bins, test, alpha, n_resamples}: the qrels are the "
              "humans' labels, each of labels a judge's: each judge's kappas, confusion, precision and recall per "
              "grade, grade shift, out-of-scale grades and calibration, the runs' order under it against the humans', "
              "and a re-run judge's label noise carried into the systems' intervals (evalbridge.judges)",
    _read_judges, _run_judges, _judges_rules,
    sources=lambda s: (*s.labels.values(), *(source for sources in s.reruns.values() for source in sources)),
    spark="the judges are measured from runs and several sets of judgements in memory, and the inputs stay in Spark",
    runs_optional=True,
    command=Command(
        "judges", "each judge's (LLM's) labels against the humans': kappas, confusion, calibration, system order",
        "Each judge's report card against the humans' labels (HUMAN): Cohen's kappa (plain, linear, quadratic), the "
        "confusion table, precision and recall per grade, the mean grade shift, grades outside the humans' scale, a "
        "calibration curve; with --runs, each system's mean under the judge and the humans, Kendall's tau and tau_AP "
        "of the orders and the pairs whose significance flips. Judges side by side, best first (eb.judges; a "
        "config's judges: section).",
        "runs ranked under each (two or more)", "--runs", ("calibration_bins",),
        lambda report, fmt: str(report.table("terminal" if fmt == "text" else fmt)),
        helps={"calibration_bins": "bins of equal counts of a calibration curve over scores"},
        metavars={"calibration_bins": "N"}, what="the report cards", random=True,
        statistics=("test", "alpha", "n_resamples"),
        judgements=(Judgements("labels", "NAME=LABELS", "each judge's labels (qrels), PATH or NAME=PATH", many=True),
                    Judgements("reruns", "--reruns", "a judge's labels from re-running the same prompt (one per "
                                                     "re-run, NAME one of the judges): its label noise, carried into "
                                                     "the systems' intervals", "NAME=PATH", many=True, keyed=True)),
        metric=DEFAULT_METRICS, qrels=Judgements("qrels", "HUMAN", "the humans' labels (qrels)"),
        formats=("text", "json", "terminal", "markdown", "latex", "html"), runs_flag="--runs",
        by_name={"bins": "thresholds onto the humans' scale of a judge giving scores or probabilities (a score s is "
                         "the grade of the number of thresholds <= s), e.g. --bins umbrela=0.25,0.5,0.75"}))


# --- pool: -------------------------------------------------------------------------------------------------------

_POOL_KEYS = ("k", "queries")


def _pool_rules() -> Mapping[str, Rule]:
    from ..evalsets.pooling import POOL_PARAMETERS

    return POOL_PARAMETERS


#: the keys of ``pool:`` that name files: the judging batch it writes, and the texts the batch carries
_POOL_FILES = ("batch", "topics", "corpus")


def _read_pool(check: Checker, value: Any, given: Given) -> PoolSettings | None:
    """``pool:``: ``{depth, strata, k, queries, batch, topics, corpus}``: the pool of the config's runs against its
    qrels (the judgements so far), nested at each depth, or sampled by rank strata (``{1-10: 1, 11-100: 0.1}``) at
    the config's seed; ``batch``: the judging batch written (as ``evalbridge pool --batch``), with the texts of
    ``topics`` and ``corpus`` (paths relative to the config's folder); ``runs`` (a mapping) and ``judgements``: runs
    and judgements of its own, in a config without runs (no judgements: nothing is judged yet, and every query a
    run answers is pooled)."""
    from ..evalsets.pooling import check_depths
    from ..evalsets.stratified import check_strata
    from .sections import read_source

    if value is None:
        return None
    path = ("pool",)
    spec = check.mapping({} if value is True else value, path,
                         ("depth", "strata", *_POOL_KEYS, *_POOL_FILES, "runs", "judgements"),
                         "{strata: {1-10: 1, 11-100: 0.1}, batch: batch.jsonl}")
    own = _pooled_alone(spec)
    if own and not _own_runs(spec):
        raise _refuse(check, path + ("runs",), "pool needs QRELS and at least one run (or --unjudged and the runs, "
                                               "when nothing is judged yet).",
                      "evalbridge pool qrels.txt a.run b.run --depth 10, or evalbridge pool --unjudged a.run b.run "
                      "--depth 10") if check.locator.source is None else \
            check.fail(path + ("runs",), "the pool's judgements are those of runs of its own, and it names none.",
                       fix="add runs: {bm25: runs/bm25.txt} to pool:, or leave judgements: out of it.")
    if not own and given.qrels is None:
        raise check.fail(path, "a pool is the pairs the judgements so far (the config's qrels) do not judge, and the "
                               "config has none.", fix="add qrels: <path to the judgements so far>, or, when nothing "
                                                       "is judged yet, pool: {runs: {bm25: runs/bm25.txt}}.")

    def where(key: str) -> dict[str, Any]:
        return {"source": check.locator.source, "line": check.locator.line(path + (key,)),
                "key": check.locator.label(path + (key,))}

    depth = check_depths(spec["depth"], **where("depth")) if "depth" in spec else None
    strata = check_strata(spec["strata"], **where("strata")) if "strata" in spec else None
    ends = None if strata is None else tuple(s.high for s in strata)
    if depth is not None and ends is not None and depth != ends:  # (as evalbridge.pool: the same depths may be said)
        raise check.fail(path + ("depth",), f"the strata end at ranks {', '.join(map(str, ends))}, which are the "
                                            f"pool's depths; depth {', '.join(map(str, depth))} is given too.",
                         fix="leave depth out: a stratified pool is pooled to each stratum's end.")
    runs = _section_runs(check, spec["runs"], path, given, "a pool counts as judged only the judgements so far it "
                                                            "is given, and would drop these") if own else {}
    judgements = read_source(check, spec["judgements"], path + ("judgements",), given.folder, "qrels", "local",
                             given.policies) if "judgements" in spec else None
    unjudged = own and judgements is None  # nothing judged yet: the queries are the runs'
    if unjudged and spec.get("queries") == "qrels":
        raise _refuse(check, path + ("queries",), "--unjudged pools the queries the runs answer (there are no qrels to "
                                                  "take them from); --queries qrels contradicts it."
                      if check.locator.source is None else "a pool without judgements pools the queries the runs "
                                                           "answer; queries: qrels contradicts it.",
                      "leave --queries out, or give QRELS and drop --unjudged." if check.locator.source is None else
                      "leave queries: out, or give the judgements so far (judgements:).")
    batch, topics, corpus = _judging_batch(check, spec, "pool", given, "the pairs to judge")
    checked = POOL.checked(check, {**({"queries": "runs"} if unjudged else {}), **spec}, _POOL_KEYS, PoolSettings)
    return PoolSettings(depth=depth, strata=None if strata is None else tuple((s.name, s.rate) for s in strata),
                        batch=batch, topics=topics, corpus=corpus, runs=MappingProxyType(runs), judgements=judgements,
                        **checked)


def _pooled_alone(value: Any) -> bool:
    """A pool of runs and judgements of its own (``runs:`` a mapping, or ``judgements:``), in a config without runs."""
    return _own_runs(value) or (isinstance(value, Mapping) and "judgements" in value)


class _OneAtATime(Mapping[str, Any]):
    """A section's own runs by name, each read when asked for and not kept (the pool reads one run at a time)."""

    def __init__(self, ctx: Context, sources: Mapping[str, Source]) -> None:
        self.ctx, self.sources = ctx, sources

    def __getitem__(self, name: str) -> Any:
        return self.ctx.run(name, self.sources[name], keep=False)

    def __iter__(self) -> Iterator[str]:
        return iter(self.sources)

    def __len__(self) -> int:
        return len(self.sources)


def _pooled(ctx: Context, settings: PoolSettings) -> Any:
    """The judgements so far a pool is made against: its own (none: nothing judged yet), else the config's qrels."""
    from ..model.data import Qrels

    if not settings.runs:
        return ctx.qrels
    return Qrels({}, allow_empty=True) if settings.judgements is None else ctx.judgements(settings.judgements)


def _run_pool(ctx: Context, settings: PoolSettings) -> Any:
    """:func:`evalbridge.pool` of the runs read against the config's qrels, or of its own runs (read one at a time)
    against its own judgements (its settings' tie order; the strata's sample at the config's seed)."""
    from ..evalsets.pooling import pool

    qrels = _pooled(ctx, settings)
    ctx.step("the pool")
    chosen = ctx.config.settings
    return pool(qrels, _OneAtATime(ctx, settings.runs) if settings.runs else ctx.runs, depth=settings.depth,
                k=settings.k, queries=settings.queries,
                strata=None if settings.strata is None else dict(settings.strata), seed=ctx.config.seed,
                ties=chosen.ties, score_precision=chosen.score_precision)


def _write_pool(ctx: Context, settings: PoolSettings, found: Any) -> list[Path]:
    """The judging batch of ``batch:`` (:func:`evalbridge.io.judging.write_batch`, as ``evalbridge pool --batch``),
    written atomically, with the texts of ``topics:`` (else the qrels' own: an ``irds:`` dataset's) and ``corpus:``."""
    from ..io.judging import write_batch
    from ..model.data import Qrels
    from ..reports.writing import atomic_file

    if settings.batch is None:
        return []
    qrels = _pooled(ctx, settings) if settings.topics is None else None  # (the qrels' own topics, when no texts)
    own = qrels.topics if isinstance(qrels, Qrels) else None
    queries = settings.topics.path if settings.topics is not None else own or None
    source = qrels.source if isinstance(qrels, Qrels) and queries is own and own else None
    with atomic_file(settings.batch.path) as temporary:  # the old batch stays whole until the new one is
        write_batch(found, temporary, queries=queries, topics_of=source,
                    documents=None if settings.corpus is None else settings.corpus.path)
    return [settings.batch.path]


def _pool_wrote(settings: PoolSettings, found: Any) -> str:
    """The note of the judging batch written: how many pairs, at which depth."""
    to_judge = found.size() if found.drawn is None else int(found.drawn.sampled.sum())
    return f"wrote {settings.batch.written if settings.batch is not None else ''}: {to_judge} pairs to judge " \
           f"(depth {found.depths[-1]})"


def _pool_record(settings: PoolSettings) -> dict[str, Any]:
    """What the provenance records of ``pool:``: its options and files as every section's, and its own runs by name
    and judgements by key when it has them."""
    own = {"runs": list(settings.runs), "judgements": None if settings.judgements is None else
           settings.judgements.key} if settings.runs else {}
    return {"depth": None if settings.depth is None else list(settings.depth),
            "strata": None if settings.strata is None else [list(s) for s in settings.strata], "k": settings.k,
            "queries": settings.queries, "batch": None if settings.batch is None else settings.batch.written,
            "topics": None if settings.topics is None else settings.topics.key,
            "corpus": None if settings.corpus is None else settings.corpus.key, **own}


POOL = Analysis(
    "pool", "{depth, strata, k, queries, batch, topics, corpus}: the pairs the qrels do not judge in the runs' first "
            "documents, nested at each depth or sampled by rank strata ({1-10: 1, 11-100: 0.1}: range -> inclusion "
            "rate) at the config's seed, each run's Judged@k now and once judged (evalbridge.pool); batch: the "
            "judging batch written, with the texts of topics and corpus",
    _read_pool, _run_pool, _pool_rules,
    sources=lambda s: (s.topics, s.corpus, s.judgements, *s.runs.values()), outputs=lambda s: (s.batch,),
    write=_write_pool, alone=_pooled_alone, record=_pool_record,
    spark="a pool reads each ranking's first documents in memory, and the inputs stay in Spark",
    command=Command(
        "pool", "the unjudged pairs in any run's first d documents (depth pooling)",
        "Depth pooling: the (query, doc) pairs in the first d documents of any run that the qrels do not judge yet, "
        "per run and per query, with each run's Judged@k now and once the pool is judged; --batch writes them as a "
        "judging batch (JSON Lines: query_id, query, doc_id, passage).",
        "the runs to pool (one or more), each PATH or NAME=PATH (the name a config's runs: gives it)", "RUN",
        ("depth", "strata", "k", "queries", "batch", "topics", "corpus"),
        lambda found, fmt: found.render("terminal" if fmt == "text" else fmt).rstrip("\n") + "\n",
        helps={"depth": "pool depth, or several (nested pools), e.g. --depth 10 20 50",
               "strata": "sample the pool by rank strata, each at its inclusion rate, e.g. --strata 1-10:1 11-100:0.1 "
                         "101-1000:0.02 (the batch records each pair's stratum and rate; merged back, xinfAP and "
                         "infNDCG)",
               "k": "cutoff of Judged@k",
               "queries": "qrels: the queries of the qrels (the eval set); queries only the runs answer are counted, "
                          "not pooled; runs: every query any run answers, in the order first met (TREC's and "
                          "trectools' pools)",
               "batch": "write the pool (at the deepest depth) as a judging batch, JSON Lines",
               "topics": "the queries' texts for the batch: TREC topics, BEIR queries.jsonl, a RAG log (default: the "
                         "topics of an irds: dataset, when ir_datasets' cache holds them)",
               "corpus": "the documents' texts for the batch: BEIR corpus.jsonl, a RAG log"},
        defaults={"depth": "10, or the strata's ends", "k": "the deepest depth", "queries": "qrels; runs with "
                                                                                           "--unjudged"},
        metavars={"depth": "N", "strata": "RANKS:RATE", "k": "K", "batch": "PATH", "topics": "PATH",
                  "corpus": "PATH"},
        random=True, what="the pool", formats=("text", "markdown", "json"), nargs="*", own_runs="runs",
        settings=("ties", "score_precision"),
        judgements=(Judgements("judgements", "QRELS", "the judgements so far (with --unjudged: the first run)"),),
        wrote=_pool_wrote, measures=False, lists={"depth": int, "strata": str}, flags={"k": "-k"},
        unjudged=("--unjudged", "nothing is judged yet: every input is a run (no QRELS), and every query a run "
                                "answers is pooled (--queries runs)")))



# --- tiers: -------------------------------------------------------------------------------------------------------

#: the keys of ``tiers:`` (the keywords of Comparison.tiers but the seed, which is the config's)
_TIERS_KEYS = ("method", "alpha", "confidence", "n_resamples")


def _tiers_rules() -> Mapping[str, Rule]:
    from ..stats.tiers import TIERS_PARAMETERS

    return TIERS_PARAMETERS


def _read_tiers(check: Checker, value: Any, given: Given) -> TiersSettings | None:
    """``tiers:``: true, false or ``{method, alpha, confidence, n_resamples}``; the keys left out are the
    comparison's (alpha, confidence, n_resamples), else their defaults."""
    if value is None or value is False:
        return None
    spec = check.mapping({} if value is True else value, ("tiers",), _TIERS_KEYS,
                         "{method: randomization, alpha: 0.05, n_resamples: 1000}")
    _at_least_two(check, "tiers", given.runs, "tiers compare the systems with each other")
    c = given.comparison
    defaults = (TiersSettings(alpha=c.statistics.alpha, confidence=c.statistics.confidence,
                              n_resamples=c.statistics.n_resamples) if c is not None else TiersSettings())
    return TiersSettings(**TIERS.checked(check, {k: v for k, v in spec.items() if v is not None}, _TIERS_KEYS,
                                         defaults))


def _run_tiers(ctx: Context, settings: TiersSettings) -> Any:
    """Every system's tier and rank interval, metric by metric (:func:`evalbridge.decisions.tiers.tiers`)."""
    from ..decisions.tiers import tiers

    if len(ctx.results) < 2:
        return None
    ctx.step("tiers of the systems")
    return tiers(ctx.results, [r.label for r in ctx.config.metrics], method=settings.method,
                 statistics=_statistics(settings, _TIERS_KEYS, ctx.config.seed))


def _render_tiers(result: Any, fmt: str) -> str:
    from ..views.tiers import render_tiers

    return render_tiers(result, fmt)


TIERS = Analysis(
    "tiers", "true or {method, alpha, confidence, n_resamples}: the tiers of systems no simultaneous test over all "
             "pairs separates and each system's rank interval (Comparison.tiers; the comparison's settings by "
             "default)",
    _read_tiers, _run_tiers, _tiers_rules,
    command=Command(
        "tiers", "the tiers of runs no test over all pairs separates, and each run's rank interval",
        "Evaluate every run once and, metric by metric, test every pair of runs at once (the family-wise error over "
        "all pairs controlled), group the runs no test separates into tiers (letters) and give each run's rank "
        "interval from the bootstrap over the queries every run has (Comparison.tiers; a config's tiers: section). "
        "Inputs: QRELS then the runs, or inputs that hold their own judgements.",
        "QRELS, then two or more runs (each PATH or NAME=PATH)", "RUN RUN...", _TIERS_KEYS, _render_tiers,
        helps={"method": "randomization (Carterette's randomised Tukey HSD, default), bootstrap (the bootstrap of the "
                         "maximum statistic) or tukey (Tukey's HSD on the two-way ANOVA residual)"},
        what="the tables", random=True))


# --- topic_set_size: ----------------------------------------------------------------------------------------------

_TOPIC_SET_KEYS = ("alpha", "beta", "min_difference", "ci_width", "systems")


def _topic_set_rules() -> Mapping[str, Rule]:
    from ..decisions.topic_set_size import TOPIC_SET_PARAMETERS

    return TOPIC_SET_PARAMETERS


def _read_topic_set(check: Checker, value: Any, given: Given) -> TopicSetSettings | None:
    """``topic_set_size:``: true, false or ``{alpha, beta, min_difference, ci_width, systems}``."""
    if value is None or value is False:
        return None
    spec = check.mapping({} if value is True else value, ("topic_set_size",), _TOPIC_SET_KEYS,
                         "{min_difference: 0.05, beta: 0.2}")
    _at_least_two(check, "topic_set_size", given.runs, "the design estimates the variance of systems x queries")
    return TopicSetSettings(**TOPIC_SET.checked(check, {k: v for k, v in spec.items() if v is not None},
                                                _TOPIC_SET_KEYS, TopicSetSettings))


def _run_topic_set(ctx: Context, settings: TopicSetSettings) -> Any:
    """The queries a collection needs, from the runs' per-query values (:func:`evalbridge.topic_set_size`)."""
    from ..decisions.topic_set_size import topic_set_size

    if len(ctx.results) < 2:
        return None
    return topic_set_size(ctx.results, [r.label for r in ctx.config.metrics], alpha=settings.alpha,
                          beta=settings.beta, min_difference=settings.min_difference, ci_width=settings.ci_width,
                          systems=settings.systems)


def _render_topic_set(result: Any, fmt: str) -> str:
    from ..views.topic_set_size import render_topic_set_size

    return render_topic_set_size(result, fmt)


TOPIC_SET = Analysis(
    "topic_set_size", "true or {alpha, beta, min_difference, ci_width, systems}: the queries a collection needs for "
                      "a paired t-test, a one-way ANOVA and a confidence interval, from the runs' variance (Sakai's "
                      "topic set size design, evalbridge.topic_set_size)",
    _read_topic_set, _run_topic_set, _topic_set_rules, steps=lambda config, s: 0,
    command=Command(
        "design", "the queries a collection needs to tell systems apart (topic set size design)",
        "Evaluate every run once and, metric by metric, estimate the within-system variance (the residual of the "
        "two-way ANOVA of runs x queries) and give the queries a paired t-test, a one-way ANOVA and a confidence "
        "interval need at the requirements given (Sakai's topic set size design; eb.topic_set_size; a config's "
        "topic_set_size: section). Inputs: QRELS then the runs (a pilot or an existing collection), or inputs that "
        "hold their own judgements.",
        "QRELS, then two or more runs (each PATH or NAME=PATH)", "RUN RUN...",
        ("min_difference", "alpha", "beta", "ci_width", "systems"), _render_topic_set,
        defaults={"ci_width": "the minimum difference", "systems": "the runs' count"}))


# --- fusion: ------------------------------------------------------------------------------------------------------

_FUSION_KEYS = ("runs", "method", "norm", "params", "train", "metric")


def _fusion_rules() -> Mapping[str, Rule]:
    from ..transforms.fusion import FUSION_PARAMETERS

    return FUSION_PARAMETERS


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _read_fusion(check: Checker, value: Any, given: Given) -> FusionSettings | None:
    """``fusion:``: ``{runs, method, norm, params, train, metric}``: the config's runs named (default: all) fused into
    one by ranx's ``method``, its parameters given (``params``) or learnt on the training queries (``train``)."""
    from ..transforms.fusion import METHODS, TRAINED

    if value is None or value is False:
        return None
    path, runs = ("fusion",), given.runs
    spec = check.mapping({} if value is True else value, path, _FUSION_KEYS,
                         "{runs: [bm25, splade], method: rrf, params: {k: 60}}")
    chosen = spec.get("runs", list(runs))
    if not isinstance(chosen, list) or len(chosen) < 2 or len(set(map(str, chosen))) != len(chosen):
        raise check.fail(path + ("runs",), f"fusion combines two or more distinct runs of the config; got "
                                           f"{chosen!r:.60}.", fix=f"write e.g. runs: [{', '.join(list(runs)[:2])}].")
    for i, name in enumerate(chosen):
        if name not in runs:
            raise check.fail(path + ("runs", i), f"unknown run {name!r}: the config's runs are "
                                                 f"{', '.join(runs) or 'none'}.",
                             fix=f"{suggest(str(name), list(runs))}Name one of the config's runs.")
    chosen_keys = {k: v for k, v in spec.items() if k in ("method", "norm", "metric") and v is not None}
    picked = FUSION.checked(check, chosen_keys, ("method", "norm", "metric"), FusionSettings)
    if "norm" in spec and spec["norm"] is None:
        picked["norm"] = None
    method = picked["method"]
    params = spec.get("params")
    if params is not None:
        if not isinstance(params, Mapping):
            raise check.fail(path + ("params",), f"expected a mapping parameter -> value; got {params!r:.60}.",
                             fix="write e.g. params: {k: 60} or params: {weights: [0.3, 0.7]}.")
        for key, given_value in params.items():
            if key not in METHODS[method]:
                raise check.fail(path + ("params", key), f"{method} takes "
                                                         f"{', '.join(METHODS[method]) or 'no parameter'}; got "
                                                         f"{key!r}.",
                                 fix=f"{suggest(str(key), METHODS[method])}Give the parameters of {method}.")
            if method not in TRAINED and not (_number(given_value) or (
                    isinstance(given_value, list) and given_value and all(map(_number, given_value)))):
                raise check.fail(path + ("params", key), f"expected a number or a list of numbers; got "
                                                         f"{given_value!r:.60}.", fix="write e.g. k: 60.")
    train = spec.get("train")
    if train is not None:
        if not isinstance(train, list) or not train or not all(isinstance(q, (str, int)) for q in train):
            raise check.fail(path + ("train",), f"expected a list of query ids to learn the parameters on; got "
                                                f"{train!r:.60}.", fix="write e.g. train: [q1, q2, q3].")
        if params is not None:
            raise check.fail(path, "fusion takes params or a training split (train) to learn them, not both.",
                             fix="leave params out to learn them, or train out to use them.")
        if given.qrels is None:
            raise check.fail(path + ("train",), "learning the fusion's parameters needs judgements, and the config "
                                                "has no qrels.", fix="add qrels: <path to the qrels>.")
    return FusionSettings(runs=tuple(map(str, chosen)), params=None if params is None else MappingProxyType(
        {str(k): tuple(v) if isinstance(v, list) else v for k, v in params.items()}),
        train=None if train is None else tuple(map(str, train)), **picked)


def _run_fusion(ctx: Context, settings: FusionSettings) -> Any:
    """The runs named fused (:func:`evalbridge.transforms.fusion.fuse`), evaluated with the config's metrics and
    settings, and compared with each of its parts (:func:`evalbridge.decisions.compare.compare_systems`: the
    comparison's statistics, else the defaults at the config's seed)."""
    from ..decisions.compare import compare_systems
    from ..evaluation.evaluating import evaluate
    from ..stats.statistics import Statistics
    from ..transforms.fusion import fuse

    qrels = ctx.pairs[settings.runs[0]][0]
    ctx.step(f"fusing {', '.join(settings.runs)}")
    params = None if settings.params is None else {k: list(v) if isinstance(v, tuple) else v
                                                   for k, v in settings.params.items()}
    fused = fuse({name: ctx.pairs[name][1] for name in settings.runs}, method=settings.method, norm=settings.norm,
                 params=params, qrels=qrels if settings.train is not None else None,
                 train=None if settings.train is None else list(settings.train), metric=settings.metric)
    results: dict[str, Any] = {fused.name or settings.method: evaluate(qrels, fused, ctx.config.metrics, settings=ctx.config.settings),
                               **{name: ctx.results[name] for name in settings.runs}}
    c = ctx.config.comparison
    return compare_systems(results, ctx.config.metrics, baseline=list(settings.runs),
                           statistics=c.statistics if c is not None else Statistics(seed=ctx.config.seed))


FUSION = Analysis(
    "fusion", "{runs, method, norm, params, train, metric}: the runs named (default: all) fused into one by ranx "
              "(rrf, wsum, ...), evaluated and compared with each of its parts (the comparison's statistics)",
    _read_fusion, _run_fusion, _fusion_rules,
    spark="fusion reads every run's rankings in memory, and the inputs stay in Spark")


#: every analysis a config can ask for, in the order the pipeline runs them and the report shows them
ANALYSES: tuple[Analysis, ...] = (AGREEMENT, DIFF, POWER, TIERS, TOPIC_SET, FUSION, DIAGNOSE, UNCERTAIN, CHANGED, PPI, JUDGES,
                                  POOL)


def commands() -> dict[str, Analysis]:
    """The analyses that declare a command of their own: command name -> analysis, in the registry's order."""
    return {analysis.command.name: analysis for analysis in ANALYSES if analysis.command is not None}


#: every top-level key of a config -> what it sets: the core sections' and the analyses'
TOP_KEYS: Mapping[str, str] = MappingProxyType({**CORE_KEYS, **{analysis.key: analysis.help for analysis in ANALYSES}})


def read_analyses(check: Checker, spec: Mapping[str, Any], given: Given) -> Mapping[str, Any]:
    """Every analysis the config's sections ask for: key -> its settings, in the registry's order."""
    found = {}
    for analysis in ANALYSES:
        settings = analysis.read(check, spec.get(analysis.key), given)
        if settings is not None:
            found[analysis.key] = settings
    return MappingProxyType(found)


def analysis_sources(config: Config) -> list[Source]:
    """The inputs the config's analyses read beyond its qrels and runs."""
    return [source for analysis in ANALYSES if (settings := config.analyses.get(analysis.key)) is not None
            for source in analysis.sources(settings) if source is not None]


def analysis_outputs(config: Config) -> list[OutputFile]:
    """The files the config's analyses write beside its report folder."""
    return [output for analysis in ANALYSES if (settings := config.analyses.get(analysis.key)) is not None
            for output in analysis.outputs(settings) if output is not None]


def analysis_steps(config: Config) -> int:
    """The steps of progress the config's analyses report."""
    return sum(analysis.steps(config, settings) for analysis in ANALYSES
               if (settings := config.analyses.get(analysis.key)) is not None)


def analysis_settings(config: Config) -> dict[str, Any]:
    """The config's analyses as the provenance records them: inputs by their key, outputs as written, metrics as
    their specs."""
    def plain(value: Any) -> Any:
        if isinstance(value, Source):
            return value.key
        if isinstance(value, OutputFile):
            return value.written
        if isinstance(value, Metric):
            return str(value)
        if isinstance(value, Mapping):
            return {name: plain(v) for name, v in value.items()}
        return [plain(v) for v in value] if isinstance(value, tuple) else value

    records = {analysis.key: analysis.record for analysis in ANALYSES}
    return {key: record(settings) if (record := records[key]) is not None
            else {name: plain(getattr(settings, name)) for name in settings.__dataclass_fields__
                  if name not in OfficialNotes.__dataclass_fields__}  # recorded once, as the config's official
            for key, settings in config.analyses.items()}
