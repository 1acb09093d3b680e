"""Paired comparison of systems on per-query values, in one call.

``eb.compare(qrels, {"bm25": run_a, "dense": run_b}, metrics, baseline="bm25")`` evaluates each
run and compares them; :func:`compare_systems` does the comparison from results already
computed. Which pairs are compared:

* ``baseline="bm25"``: every other system against that baseline;
* ``baseline=["bm25", "dense"]``: every system against each baseline (each pair once);
* ``baseline=None``: all pairs, as ranx's ``compare``.

For each pair (system, baseline) and metric, on the queries both were evaluated on:

* ``delta`` = mean(system) - mean(baseline) = mean(d), with d_q = system_q - baseline_q;
* two-sided p-values of the paired t-test (:func:`scipy.stats.ttest_rel`,
  t = mean(d) / (sd(d) / sqrt(n))), of Fisher's randomization test (each d_q's sign flipped at
  random; scipy's ``permutation_test``, batched in :mod:`evalbridge.stats.resampling`) and of
  the Wilcoxon signed-rank test (:func:`scipy.stats.wilcoxon`, zero differences left out);
* a bootstrap confidence interval of ``delta`` (BCa or percentile, batched);
* the effect size d_z = mean(d) / sd(d) (Cohen's d for paired samples);
* win / tie / loss counts: queries where the system is above / equal to / below the baseline.

Each system also gets a bootstrap confidence interval of its own mean, per metric. The
p-values of the chosen test are corrected over the whole family, every (pair, metric)
compared: Holm or Bonferroni (family-wise error) or Benjamini-Hochberg (false discovery
rate). Every random step is seeded. Tables mark significance with arrows against the
baseline, or with ranx's superscript letters: each system gets a letter, and a cell carries
the letters of the systems it is significantly better than.

The tests, corrections and the rule of each parameter are in :mod:`evalbridge.stats.paired_tests`; the value
returned, :class:`~evalbridge.decisions.comparison.Comparison`, in :mod:`evalbridge.decisions.comparison`.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from ..common.parallel import workers
from ..errors import InputError, MetricSpecError
from ..metrics.requests import MetricRequest, MetricsArg, bad_metrics, metric_requests, request
from ..metrics.spec import Metric
from .comparison import Comparison, PairedComparison, SystemInterval
from ..stats.paired_tests import CORRECTIONS, TESTS, check_finite, effect_size, \
    paired_t_test, win_tie_loss, wilcoxon_test
from ..stats.resampling import DEFAULT_MEMORY, PARALLEL_WORK
from ..stats.statistics import Statistics, split_statistics, statistics_of

if TYPE_CHECKING:
    import numpy as np
    from typing_extensions import Unpack

    from ..model.settings import Keywords, Settings
    from ..stats.statistics import StatisticsKeywords

    class CompareKeywords(Keywords, StatisticsKeywords, total=False):
        """The keywords :func:`compare` takes beside its own: the settings of the evaluation and the statistics."""


def comparison_parameters(statistics: Statistics) -> dict[str, Any]:
    """What a comparison takes of ``statistics`` (its tests are two-sided: ``sides=1`` is refused, not ignored)."""
    if statistics.sides != 2:
        raise InputError("the comparisons' tests are two-sided (sides=1 is a question of power, or of a gate's "
                         "'>= baseline - 0.01 at 95%'); got sides=1.", fix="leave sides at 2 for a comparison.")
    return statistics.keywords("test", "correction", "alpha", "confidence", "n_resamples", "seed", "ci_method")

__all__ = ["compare_systems", "compare", "comparison_parameters"]

# ---------------------------------------------------------------- computing a comparison

def _per_query(results: Any, metric: Any) -> Mapping[str, float]:
    from ..evaluation.results import Results

    if not isinstance(results, (Results, Mapping)):
        raise InputError(f"a system's results must be Results or {{metric: {{query: value}}}}; got "
                         f"{type(results).__name__} {results!r:.60}.", fix="pass what evaluate() returns.")
    try:
        if isinstance(results, Results):
            return results.query(metric)
        given: Mapping[str, float] = results[metric.asked if isinstance(metric, MetricRequest) else str(metric)]
        return given
    except KeyError:
        got = results.metrics if isinstance(results, Results) else results
        name = metric.label if isinstance(metric, MetricRequest) else str(metric)
        raise InputError(f"no per-query values for {name!r}; got {', '.join(map(str, got))}.",
                         fix="evaluate every system on the metrics compared.") from None


def _systems(names: Sequence[str]) -> tuple[str, ...]:
    """The system names, refused when fewer than two."""
    if len(names) < 2:
        raise InputError(f"a comparison needs at least two systems; got {len(names)} ({', '.join(map(repr, names))}).",
                         fix="pass a mapping of two or more system names to their results (or runs).")
    return tuple(names)


def _baselines(baseline: str | Sequence[str] | None, names: Sequence[str]) -> tuple[str, ...]:
    chosen = () if baseline is None else (baseline,) if isinstance(baseline, str) else tuple(baseline)
    for name in chosen:
        if name not in names:
            raise InputError(f"the baseline {name!r} is not one of the systems ({', '.join(map(repr, names))}).",
                             fix="set the baseline to the name of one of the runs.")
    if len(set(chosen)) != len(chosen):
        raise InputError(f"a baseline is named twice in {list(chosen)}.")
    if baseline is not None and not chosen:
        raise InputError("baseline=[] names no baseline.", fix="use baseline=None to compare all pairs.")
    return chosen


def _pairs(names: Sequence[str], baselines: Sequence[str]) -> list[tuple[str, str]]:
    """(system, baseline) pairs: each system against each baseline, or all pairs (later vs earlier); each pair once."""
    if not baselines:
        return [(names[j], names[i]) for j in range(len(names)) for i in range(j)]
    seen: set[frozenset[str]] = set()
    pairs = []
    for base in baselines:
        for system in names:
            key = frozenset((system, base))
            if system != base and key not in seen:
                seen.add(key)
                pairs.append((system, base))
    return pairs


class _Group:
    """Columns over one ordered set of queries: they share resamples (bootstrap) and sign flips."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.columns: list[Any] = []          # base value arrays, each of length n
        self.index: dict[tuple[int, str], int] = {}   # (metric index, system) -> column
        self.units: dict[int, tuple[list[int], list[tuple[int, int]]]] = {}  # metric -> (columns, differences)

    def column(self, metric: int, system: str, values: Any) -> int:
        key = (metric, system)
        if key not in self.index:
            self.index[key] = len(self.columns)
            self.columns.append(values)
            self.units.setdefault(metric, ([], []))[0].append(self.index[key])
        return self.index[key]

    def difference(self, metric: int, i: int, j: int) -> None:
        self.units.setdefault(metric, ([], []))[1].append((i, j))


def _resample(group: _Group, *, confidence: float, n_resamples: int, seed: int, method: str,
              memory: int) -> tuple[dict[int, tuple[float, float]], dict[tuple[int, int], tuple[float, float]],
                                    dict[tuple[int, int], float]]:
    """Bootstrap intervals of every column and difference of a group, and randomization p-values.

    Metrics are taken together as long as their bootstrap means fit in ``memory``; each batch of
    metrics draws the same resamples (same seed), so the split changes nothing. The randomization test runs on
    a second thread beside the bootstrap when the work is large and the cores are free (two streams of draws
    that never meet: the same numbers either way).
    """
    import numpy as np
    from threadpoolctl import threadpool_limits

    from ..stats.resampling import bootstrap_intervals, randomization_pvalues

    units = list(group.units.values())
    pairs = [pair for _, diffs in units for pair in diffs]
    columns: dict[int, tuple[float, float]] = {}
    differences: dict[tuple[int, int], tuple[float, float]] = {}
    pvalues: dict[tuple[int, int], float] = {}
    d = np.stack([group.columns[i] - group.columns[j] for i, j in pairs]) if pairs and group.n >= 2 else None

    def randomization() -> Any:
        return randomization_pvalues(d, n_resamples=n_resamples, seed=seed, memory=memory)

    widest = max(len(cols) + len(diffs) for cols, diffs in units)
    per_metric = max(1, memory // max(1, 8 * n_resamples * widest))
    large = _large(group, n_resamples)
    # one BLAS thread each: the two threads (and theirs) keep the cores busy with draws and products
    with threadpool_limits(1, user_api="blas") if large else nullcontext(), \
            workers(2, None if large else 1) as pool:
        tested = pool.submit(randomization) if pool is not None and d is not None else None
        for start in range(0, len(units), per_metric):
            chosen = units[start:start + per_metric]
            order = [c for cols, _ in chosen for c in cols]
            position = {c: k for k, c in enumerate(order)}
            metric_pairs = [(i, j) for _, diffs in chosen for i, j in diffs]
            intervals = bootstrap_intervals(np.stack([group.columns[c] for c in order]),
                                            [(position[i], position[j]) for i, j in metric_pairs],
                                            confidence=confidence, n_resamples=n_resamples, seed=seed, method=method,
                                            memory=memory)
            columns.update(zip(order, intervals[:len(order)]))
            differences.update(zip(metric_pairs, intervals[len(order):]))
        if d is not None:
            pvalues = dict(zip(pairs, map(float, tested.result() if tested is not None else randomization())))
            pvalues.update({pair: 1.0 for pair, row in zip(pairs, d) if not row.any()})
    return columns, differences, pvalues


def _large(group: _Group, n_resamples: int) -> bool:
    """Whether a group's resampling is worth threads (below, handing work over costs more than it saves)."""
    return n_resamples * group.n * len(group.columns) >= PARALLEL_WORK


def _provenance(results: Mapping[str, Any]) -> tuple[str, ...]:
    """One line per distinct provenance summary, naming the systems it covers."""
    from ..evaluation.results import Results

    systems: dict[str, list[str]] = {}
    for name, res in results.items():
        if isinstance(res, Results):
            systems.setdefault(res.provenance.summary(), []).append(name)
    return tuple(f"{', '.join(names)}: {summary}" for summary, names in systems.items())


def compare_systems(results: Mapping[str, Any], metrics: MetricsArg | Sequence[Any], *,
                    baseline: str | Sequence[str] | None = None, statistics: Statistics | None = None,
                    labels: Sequence[str] | None = None, slices: Any = None,
                    **keywords: Unpack[StatisticsKeywords]) -> Comparison:
    """Compare systems pair by pair on each metric, paired by query id.

    Args:
        results: system name -> :class:`~evalbridge.evaluation.results.Results` (or metric -> {query id: value}),
            in display order (the order of the letters).
        metrics: the metrics to compare (any spelling, as evaluated), a mapping label -> spec, or
            :class:`~evalbridge.metrics.requests.MetricRequest` values; the rows are named by each label
            (default: the spelling given), and :attr:`Comparison.names` records each label's metric.
        baseline: one system name (every other system against it), several (every system against
            each, each pair once), or None (all pairs, as ranx's ``compare``).
        statistics: the tests and intervals (:class:`~evalbridge.Statistics`), or its fields as keywords:
            ``test`` (``t``, ``randomization``, ``wilcoxon``: decides significance), ``correction`` (``holm``, ``bh``,
            ``bonferroni`` or ``none``, over every (pair, metric) compared), ``alpha`` (of the corrected p-values),
            ``confidence`` (of the bootstrap intervals: each system's mean, each difference), ``n_resamples`` (of
            the randomization test and the bootstrap), ``seed`` (of every random generator), ``ci_method``
            (``BCa`` or ``percentile``); the tests are two-sided.
        labels: the name of each metric in the rows, overriding the labels of ``metrics``.
        slices: per-slice means and differences in :attr:`Comparison.slices`: a mapping query id -> label(s),
            a field the systems' RAG logs kept, or a (query table, column) pair
            (:mod:`evalbridge.evaluation.slices`); each system against the baseline(s) on every slice with
            ``test``, Benjamini-Hochberg over every (slice, pair, metric) tested.

    Every parameter is checked with :data:`COMPARISON_PARAMETERS`. Memory does not grow with
    ``n_resamples`` x queries: the resampling runs in batches
    (:mod:`evalbridge.stats.resampling`); the randomization p-values and bootstrap intervals
    are scipy's for the same seed, over the queries in the order of their ids (so the order in which
    ``results`` list them changes nothing).

    Raises:
        InputError: a bad setting, an unknown baseline, fewer than two systems, or a pair without
            any query in common.

    Example:
        >>> base = {"P@1": {"q1": 0.0, "q2": 1.0, "q3": 0.0}}
        >>> new = {"P@1": {"q1": 1.0, "q2": 1.0, "q3": 1.0}}
        >>> row = compare_systems({"base": base, "new": new}, ["P@1"], baseline="base").rows[0]
        >>> round(row.delta, 4), (row.wins, row.ties, row.losses), round(row.p_t, 4)
        (0.6667, (2, 1, 0), 0.1835)
    """
    import numpy as np

    settings = comparison_parameters(statistics_of(statistics, keywords))
    if not isinstance(results, Mapping):
        raise InputError(f"results must be a mapping of system names to their results; got "
                         f"{type(results).__name__} {results!r:.60}.",
                         fix="pass e.g. {'bm25': eb.evaluate(qrels, bm25, metrics), 'dense': ...}.")
    names = _systems(list(results))
    baselines = _baselines(baseline, names)
    metrics = _requests(metrics)
    if not metrics:
        raise InputError("no metric to compare.", fix="name at least one metric, e.g. ['ndcg@10'].")
    if labels is not None:
        labels = list(labels)
        if len(labels) != len(metrics):
            raise InputError(f"got {len(labels)} labels for {len(metrics)} metrics.")
        metrics = [request(m, label=label) if isinstance(m, MetricRequest) else m for m, label in zip(metrics, labels)]
    else:
        labels = [m.label if isinstance(m, MetricRequest) else str(m) for m in metrics]
    pairs = _pairs(names, baselines)

    groups: dict[tuple[str, ...], _Group] = {}
    own: dict[tuple[int, str], tuple[_Group, int, Any]] = {}       # per-system columns
    kept: dict[str, dict[str, tuple[tuple[str, ...], Any]]] = {name: {} for name in names}   # Comparison.values
    paired: dict[tuple[int, str, str], tuple[_Group, int, int, int]] = {}   # pair columns, unpaired count
    for m, metric in enumerate(metrics):
        maps = {name: _per_query(results[name], metric) for name in names}
        # Queries are resampled in the order of their ids, not in the order an evaluation listed them (qrels
        # order locally, sorted by Spark): the same seed gives the same numbers for the same values.
        ids = {name: tuple(sorted(maps[name])) for name in names}
        arrays = {name: np.fromiter(map(maps[name].__getitem__, ids[name]), dtype=np.float64, count=len(ids[name]))
                  for name in names}
        for name in names:
            check_finite(arrays[name], f"per-query values of {name!r} for {labels[m]}",
                          lambda i: f"query {ids[name][i]!r}")  # (called here, before name changes)
            group = groups.setdefault(ids[name], _Group(len(ids[name])))
            own[m, name] = (group, group.column(m, name, arrays[name]), arrays[name])
            kept[name][labels[m]] = (ids[name], arrays[name])
        for system, base in pairs:
            if ids[system] == ids[base]:
                common, x, y = ids[base], arrays[system], arrays[base]
            else:
                common = tuple(q for q in ids[base] if q in maps[system])
                x = np.fromiter(map(maps[system].__getitem__, common), dtype=np.float64, count=len(common))
                y = np.fromiter(map(maps[base].__getitem__, common), dtype=np.float64, count=len(common))
            if not common:
                raise InputError(f"{system!r} and {base!r} have no query in common for {labels[m]}.",
                                 fix="evaluate both systems on the same qrels.")
            group = groups.setdefault(common, _Group(len(common)))
            i, j = group.column(m, system, x), group.column(m, base, y)
            group.difference(m, i, j)
            paired[m, system, base] = (group, i, j, len(ids[system]) + len(ids[base]) - 2 * len(common))

    options = dict(confidence=settings["confidence"], n_resamples=settings["n_resamples"], seed=settings["seed"],
                   method=settings["ci_method"], memory=DEFAULT_MEMORY)
    large = any(_large(group, settings["n_resamples"]) for group in groups.values())
    # the resampling runs on its own threads while this one computes the rest of every row
    with workers(2, None if large else 1) as pool:
        resampled = {id(group): pool.submit(_resample, group, **options) for group in groups.values()} \
            if pool is not None else {}
        rows: list[dict[str, Any]] = []
        keys = [(m, system, base) for m in range(len(labels)) for system, base in pairs]
        for m, system, base in keys:
            group, i, j, unpaired = paired[m, system, base]
            a, b = group.columns[i], group.columns[j]
            mean_a, mean_b = math.fsum(a) / len(a), math.fsum(b) / len(b)
            wins, ties, losses = win_tie_loss(a, b)
            rows.append(dict(metric=labels[m], system=system, baseline=base, n=len(a), baseline_mean=mean_b,
                             system_mean=mean_a, delta=mean_a - mean_b, effect_size=effect_size(a, b),
                             wins=wins, ties=ties, losses=losses, p_t=paired_t_test(a, b),
                             p_wilcoxon=wilcoxon_test(a, b), unpaired=unpaired))
        done = {key: job.result() for key, job in resampled.items()} if resampled else \
            {id(group): _resample(group, **options) for group in groups.values()}

    intervals = []
    for m, label in enumerate(labels):
        for name in names:
            group, column, values = own[m, name]
            low, high = done[id(group)][0][column]
            intervals.append(SystemInterval(metric=label, system=name, n=len(values),
                                            mean=math.fsum(values) / len(values), ci_low=low, ci_high=high))
    for row, key in zip(rows, keys):
        group, i, j, _ = paired[key]
        row["ci_low"], row["ci_high"] = done[id(group)][1][i, j]
        row["p_randomization"] = done[id(group)][2].get((i, j), math.nan)
    chosen = TESTS[settings["test"]].field
    adjusted = CORRECTIONS[settings["correction"]].adjust([row[chosen] for row in rows])
    final = tuple(PairedComparison(**row, p_adjusted=p, significant=bool(p <= settings["alpha"]))
                  for row, p in zip(rows, adjusted))
    sliced = None
    if slices is not None:
        from ..evaluation.slices import slice_labels, slice_table

        sliced = slice_table({name: {label: _per_query(results[name], metric) for label, metric in zip(labels, metrics)}
                              for name in names}, slice_labels(slices), pairs=pairs if baselines else (),
                             test=settings["test"], pvalues=TESTS[settings["test"]].pvalues,
                             adjust=CORRECTIONS["bh"].adjust, alpha=settings["alpha"],
                             confidence=settings["confidence"], n_resamples=settings["n_resamples"],
                             seed=settings["seed"], ci_method=settings["ci_method"])
    return Comparison(rows=final, intervals=tuple(intervals), systems=names, metrics=tuple(labels),
                      baselines=baselines, test=settings["test"], correction=settings["correction"],
                      alpha=settings["alpha"], confidence=settings["confidence"],
                      n_resamples=settings["n_resamples"], seed=settings["seed"], ci_method=settings["ci_method"],
                      provenance=_provenance(results), names=_names(results[names[0]], metrics, labels),
                      slices=sliced, values=kept)


def _requests(metrics: Any) -> list[Any]:
    """``metrics`` as requests (:func:`~evalbridge.metrics.requests.metric_requests`), or as given when they
    are keys of plain mappings rather than metrics."""
    if isinstance(metrics, (str, Metric, MetricRequest)):
        metrics = [metrics]
    if not isinstance(metrics, (Mapping, Iterable)) or isinstance(metrics, (bytes, bytearray)):
        raise bad_metrics(metrics)
    if not isinstance(metrics, Mapping):
        metrics = list(metrics)
        if not metrics:
            return []
    try:
        return list(metric_requests(metrics))
    except MetricSpecError:
        return list(metrics)


def _names(first: Any, metrics: Sequence[Any], labels: Sequence[str]) -> tuple[MetricRequest, ...]:
    """Each label with the spelling asked and the metric as ``first`` (a system's results) evaluated it."""
    from ..evaluation.results import Results

    if not all(isinstance(m, MetricRequest) for m in metrics):
        return ()
    out = []
    for m, label in zip(metrics, labels):
        metric = first.request(m).metric if isinstance(first, Results) else m.metric
        out.append(MetricRequest(label, m.asked, metric))
    return tuple(out)


def compare(qrels: Any, runs: Mapping[str, Any], metrics: MetricsArg, *,
            baseline: str | Sequence[str] | None = None, statistics: Statistics | None = None,
            settings: Settings | None = None, slices: Any = None, **keywords: Unpack[CompareKeywords]) -> Comparison:
    """Evaluate every run against ``qrels`` and compare them, in one call.

    ``runs`` maps system names to runs (anything :func:`evalbridge.evaluate` reads: dicts,
    :class:`~evalbridge.Run`, TREC file paths, DataFrames...) or to their evaluated
    :class:`~evalbridge.Results`, in display order; with ``qrels=None`` every value is taken as evaluated
    (Results, or ``{metric: {query id: value}}``). Each run is
    evaluated with the same settings (``settings=Settings(...)`` or its keywords, as ``evaluate``), then
    :func:`compare_systems` compares them with the same statistics (``statistics=Statistics(...)`` or its
    keywords, ``test="randomization"``, see there); each metric
    is named by its label (``metrics={"precision@10": "P@10"}``), else by the spelling asked, and
    :attr:`Comparison.names` records the metric as evaluated (``P(rel=2)@10``). ``slices``: per-slice
    means and differences (see :func:`compare_systems`); a field name reads the labels the runs' RAG logs kept.
    ``"official"`` (alone or in a list), with qrels of a dataset (``"irds:<id>"``), takes its official measures, as
    ``evaluate``, and the first line of :attr:`Comparison.provenance` says which.

    >>> import evalbridge as eb
    >>> qrels = {f"q{i}": {"d1": 1, "d2": 1} for i in range(6)}
    >>> runs = {"bm25": {q: {"d3": 0.9, "d1": 0.5} for q in qrels},
    ...         "dense": {q: {"d1": 0.9, "d2": 0.8} for q in qrels}}
    >>> cmp = eb.compare(qrels, runs, ["P@1", "RR"], baseline="bm25", test="randomization")
    >>> [(r.metric, r.delta, round(r.p_randomization, 4)) for r in cmp.rows]
    [('P@1', 1.0, 0.0312), ('RR', 0.5, 0.0312)]
    """
    from ..evaluation.evaluating import evaluate_each
    from ..model.settings import settings_of

    tests, rest = split_statistics(keywords)
    chosen = settings_of(settings, rest)
    chosen_statistics = statistics_of(statistics, tests)
    comparison_parameters(chosen_statistics)
    if not isinstance(runs, Mapping):
        raise InputError(f"runs must be a mapping of system names to runs; got {type(runs).__name__}.",
                         fix="pass e.g. {'bm25': run_a, 'dense': run_b}.")
    _baselines(baseline, _systems(list(runs)))
    if qrels is None:  # every value already evaluated (Results, or {metric: {query id: value}}): compared as it is
        return compare_systems(runs, metrics, baseline=baseline, slices=slices, statistics=chosen_statistics)
    from ..io.datasets import with_official

    asked, official = with_official(metrics, qrels)  # "official": the measures of the qrels' dataset
    wanted = metric_requests(asked)
    results = evaluate_each(qrels, runs, wanted, settings=chosen)
    if isinstance(slices, str):
        from ..model.data import Run
        from ..evaluation.slices import slice_labels

        slices = slice_labels(slices, [run for run in runs.values() if isinstance(run, Run)])
    found = compare_systems(results, wanted, baseline=baseline, slices=slices, statistics=chosen_statistics)
    return replace(found, provenance=(*official, *found.provenance))  # its first lines say what official took
