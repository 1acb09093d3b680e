"""What a validated config holds: its keys, and ``Config`` with its sections as frozen dataclasses.

A config file (YAML) and a command line (``evalbridge eval`` / ``check``) describe the same thing, a :class:`Config`
(checked by :func:`evalbridge.config.schema.validate`); ``docs/config.md`` documents every key. The settings that
decide a number are one :class:`~evalbridge.model.settings.Settings` (``Config.settings``), their keys its rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..backends import CROSSCHECK_BACKENDS
from ..metrics.requests import MetricRequest
from ..metrics.spec import Metric
from ..model.settings import ROWS, Settings
from ..stats.statistics import Statistics
from .sources import Source

__all__ = ["Config", "CrossCheckSettings", "ComparisonSettings", "DiffSettings", "PowerSettings", "TiersSettings",
           "TopicSetSettings", "FusionSettings", "SliceSettings",
           "AgreementSettings", "PlotSettings", "OutputSettings", "SparkSettings", "DiagnoseSettings",
           "UncertainSettings", "OutputFile", "CORE_KEYS", "AGREEMENT_KEYS", "ENGINES"]

#: top-level key -> what it sets (docs/config.md has the full reference), but the analyses' sections, which their
#: registry declares (:data:`evalbridge.config.analyses.TOP_KEYS` has both)
CORE_KEYS: Mapping[str, str] = MappingProxyType({
    "title": "heading of the reports",
    "qrels": "the relevance judgements (a path, or {path|data, format, ...})",
    "runs": "system name -> run (a path, or {path|data, format, ...})",
    "metrics": "metric specs, any spelling; an entry {metric: P@5, label: precision@5} names its outputs",
    # every setting of evalbridge.Settings is a key (a read policy, ids / duplicates, may be set by a source too)
    **{name: row.help for name, row in ROWS.items()},
    "crosscheck": "{backends, atol, canonicalise}: compare every value with other libraries",
    "comparison": "{baseline, test, correction, alpha, confidence, n_resamples}: paired significance tests",
    "gates": "metric -> '>= 0.8' / '>= baseline - 0.01' (or a list); 'system: metric' targets one system; "
             "'>= baseline - 0.01 at 95%' gates the interval of the difference (pass, fail or inconclusive)",
    "on_inconclusive": "fail (default) or pass: what a gate with a level does to the run when the eval set cannot "
                       "decide it",
    "bands": "true (the RAG quality bands), false, or {metric or family: [fair, good, excellent]}",
    "output": "{dir, formats, per_query, system_json, plots, digits}",
    "seed": "seed of every random step (randomization test, bootstrap)",
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


@dataclass(frozen=True)
class CrossCheckSettings:
    """``crosscheck:``: the libraries every value is compared with (see :func:`evalbridge.crosscheck`)."""

    backends: tuple[str, ...] = CROSSCHECK_BACKENDS
    atol: float = 1e-9
    canonicalise: bool = False


@dataclass(frozen=True)
class ComparisonSettings:
    """``comparison:``: paired tests of every system against ``baseline`` (see :mod:`evalbridge.decisions.compare`),
    with the section's ``test``, ``correction``, ``alpha``, ``confidence`` and ``n_resamples`` and the config's
    ``seed``, one :class:`~evalbridge.Statistics`."""

    baseline: str
    statistics: Statistics = Statistics()

    def to_dict(self) -> dict[str, Any]:
        """The section as the provenance records it (the seed is the config's own key)."""
        return {"baseline": self.baseline, **self.statistics.keywords(*COMPARISON_KEYS)}


#: the keys of ``comparison:`` that are fields of :class:`~evalbridge.Statistics`
COMPARISON_KEYS = ("test", "correction", "alpha", "confidence", "n_resamples")


@dataclass(frozen=True)
class DiffSettings:
    """``diff:``: every other system against the baseline (the comparison's, else the first run), query by query
    (see :func:`evalbridge.diff`); or, given ``runs`` of its own (two), their rankings compared without judgements."""

    k: int = 10
    queries: int = 10
    moves: int = 3
    p: float | None = None
    rbo_ties: str | None = None
    runs: Mapping[str, Source] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def similarity(self) -> bool:
        """Whether the rankings' similarity is shown beside (``p`` or ``rbo_ties`` given)."""
        return self.p is not None or self.rbo_ties is not None


@dataclass(frozen=True)
class PowerSettings:
    """``power:``: the power of every system against the baseline (the comparison's, else the first run), metric by
    metric (see :func:`evalbridge.power`; the keys are its keywords, checked by the same rules)."""

    test: str = "t"
    alpha: float = 0.05
    power: float = 0.8
    effect: float | None = None
    sides: int = 2


@dataclass(frozen=True)
class TiersSettings:
    """``tiers:``: every system's tier and rank interval, metric by metric (see
    :meth:`evalbridge.decisions.comparison.Comparison.tiers`; the keys are its keywords, checked by the same rules;
    absent, alpha, confidence and n_resamples are the comparison's, the seed the config's)."""

    method: str = "randomization"
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 10_000


@dataclass(frozen=True)
class TopicSetSettings:
    """``topic_set_size:``: the queries a collection needs, from the variance of the runs' per-query values (see
    :func:`evalbridge.topic_set_size`; the keys are its keywords, checked by the same rules)."""

    alpha: float = 0.05
    beta: float = 0.2
    min_difference: float = 0.05
    ci_width: float | None = None
    systems: int | None = None


@dataclass(frozen=True)
class FusionSettings:
    """``fusion:``: the config's runs named fused into one (see :func:`evalbridge.transforms.fusion.fuse`; the keys
    are its keywords, checked by the same rules), evaluated with the config's metrics and settings and compared with
    each of its parts (the comparison's statistics, else the defaults at the config's seed)."""

    runs: tuple[str, ...]
    method: str = "rrf"
    norm: str | None = "min-max"
    params: Mapping[str, Any] | None = None
    train: tuple[str, ...] | None = None
    metric: str = "ndcg@10"


@dataclass(frozen=True, kw_only=True)
class OfficialNotes:
    """The settings of a section whose metrics may be ``official``: ``official`` says which measures of which
    dataset they took (none when not asked); the config holds every section's notes once (:attr:`Config.official`),
    and the provenance records them there, not among the section's settings."""

    official: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChangedSettings(OfficialNotes):
    """``changed:``: what the config's qrels (after) changed against the judgements ``before`` for the config's
    runs (see :func:`evalbridge.what_changed`; the keys are its keywords, checked by the same rules)."""

    before: Source
    metrics: tuple[str, ...]
    test: str = "t"
    alpha: float = 0.05
    n_resamples: int = 10_000


@dataclass(frozen=True)
class SliceSettings:
    """``slices:``: the queries grouped by a field of the RAG logs (``by``), or by the column ``by`` of the query
    table ``file`` (see :mod:`evalbridge.evaluation.slices`)."""

    by: str
    file: Path | None = None

    @property
    def source(self) -> Any:
        """What :func:`evalbridge.evaluation.slices.slice_labels` takes: the field, or (file, column)."""
        return self.by if self.file is None else (str(self.file), self.by)


@dataclass(frozen=True)
class AgreementSettings(OfficialNotes):
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
class DiagnoseSettings(OfficialNotes):
    """``diagnose:``: the diagnostics of the config's qrels and runs (see :func:`evalbridge.diagnose`); the seed
    and the settings are the config's; ``metric``: one, or several (a tuple: each diagnosed)."""

    metric: Metric | tuple[Metric, ...]
    judgements_b: Source | None = None
    pool_depth: int = 100
    trials: int = 1000
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    n_resamples: int = 10_000


@dataclass(frozen=True)
class UncertainSettings(OfficialNotes):
    """``uncertain:``: each of ``runs`` (name -> run: the config's, or the section's own) measured on ``metric``
    with the uncertainty of its labels: several ``judges`` (name -> qrels) or one qrels of ``probabilities`` (see
    :func:`evalbridge.uncertain`); the seed and the settings are the config's."""

    metric: Metric | tuple[Metric, ...]
    runs: Mapping[str, Source]
    judges: Mapping[str, Source] = field(default_factory=lambda: MappingProxyType({}))
    probabilities: Source | None = None
    draws: int = 200
    n_resamples: int = 10_000
    confidence: float = 0.95


@dataclass(frozen=True)
class PPISettings:
    """``ppi:``: the config's qrels are a judge's labels of every pair, ``human`` the humans' labels of a random
    sample; every run's metrics and differences against the baseline estimated from both (see
    :func:`evalbridge.ppi`); the settings are the config's. ``plan_width`` / ``plan_difference``: the human labels
    that target needs (``PredictionPowered.plan``, with ``cost_human`` / ``cost_llm``) carried by the result;
    ``batch``: the ``batch_size`` items to label next ``by`` the judge or the systems, written as a judging batch
    with the texts of ``topics`` and ``corpus`` (``PredictionPowered.write_batch``)."""

    human: Source
    unit: str = "query"
    scale: tuple[float, float] | None = None
    confidence: float = 0.95
    alpha: float = 0.05
    correction: str = "holm"
    plan_width: float | None = None
    plan_difference: float | None = None
    cost_human: float | None = None
    cost_llm: float | None = None
    batch: OutputFile | None = None
    batch_size: int = 100
    by: str = "judge"
    topics: Source | None = None
    corpus: Source | None = None


@dataclass(frozen=True)
class JudgesSettings:
    """``judges:``: the config's qrels are the humans' labels, ``labels`` each judge's labels of the same pairs;
    every judge's report card against the humans, the runs ranked under each (see :func:`evalbridge.judges`)."""

    labels: Mapping[str, Source]
    bins: Mapping[str, tuple[float, ...]] = field(default_factory=lambda: MappingProxyType({}))
    reruns: Mapping[str, tuple[Source, ...]] = field(default_factory=lambda: MappingProxyType({}))
    calibration_bins: int = 10
    test: str = "t"
    alpha: float = 0.05
    n_resamples: int = 10_000


@dataclass(frozen=True)
class PoolSettings:
    """``pool:``: the unjudged pairs of the runs' first documents against the config's qrels (the judgements so far),
    nested at each ``depth`` or sampled by rank ``strata`` (range -> inclusion rate) at the config's seed (see
    :func:`evalbridge.pool`)."""

    depth: tuple[int, ...] | None = None
    strata: tuple[tuple[str, float], ...] | None = None
    k: int | None = None
    queries: str = "qrels"
    #: the judging batch written (the pool at its deepest depth, or the strata's sample), with the texts of
    #: ``topics`` (else the topics the qrels came with: an ``irds:`` dataset's) and ``corpus``
    batch: OutputFile | None = None
    topics: Source | None = None
    corpus: Source | None = None
    #: runs of its own, pooled one at a time against its own ``judgements`` (None: nothing judged yet, every query
    #: a run answers pooled), in a config without runs; empty: the config's runs and qrels
    runs: Mapping[str, Source] = field(default_factory=lambda: MappingProxyType({}))
    judgements: Source | None = None


@dataclass(frozen=True)
class OutputFile:
    """A file a section writes beside the report folder (``pool: {batch}``), checked with the config's outputs
    before any work.

    Attributes:
        key: its key path in the config (``pool.batch``), as messages name it.
        path: the file (relative paths are relative to the config's folder).
        written: the path as the user wrote it.
        line: the line of the config file that names it (None on a command line).
    """

    key: str
    path: Path
    written: str
    line: int | None = None


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
    gates: tuple[Any, ...] = ()
    on_inconclusive: str = "fail"
    bands: Mapping[str, tuple[float, float, float]] | None = None
    seed: int = 0
    engine: str = "local"
    spark: SparkSettings | None = None
    tracking: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    slices: SliceSettings | None = None
    #: analysis key -> its settings, each analysis of :data:`evalbridge.config.analyses.ANALYSES` the config asks for
    analyses: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    document: int = 0
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    #: what ``official`` took (the dataset's measures) in ``metrics:`` and in the sections (:class:`OfficialNotes`),
    #: each note once, in the order read; said once by the report
    official: tuple[str, ...] = ()

    @property
    def agreement(self) -> AgreementSettings | None:
        """The ``agreement:`` section's settings (its analysis's), or None."""
        settings: AgreementSettings | None = self.analyses.get("agreement")
        return settings

    @property
    def where(self) -> str:
        """``path`` or ``path (document n)`` for messages."""
        if self.path is None:
            return "command line"
        return f"{self.path} (document {self.document + 1})" if self.document else str(self.path)
