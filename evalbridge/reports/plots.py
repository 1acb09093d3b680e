"""Plots (matplotlib, imported lazily): distributions, hit shares, metric@k curves, differences.

Figures are built as :class:`matplotlib.figure.Figure` objects on their own Agg canvas, never
through ``pyplot``: plotting neither switches nor even reads the user's matplotlib backend, and
opens no window. Each function writes one figure per requested format (``png``, ``svg``,
``pdf``) atomically and returns the paths written:

* :func:`plot_distribution`: per-query values of one metric, one box per system with its mean
  marked; for a binary metric (every per-query value 0 or 1, e.g. ``Success@5``) a bar of the
  share of queries with a hit per system instead, since a box over 0s and 1s says nothing;
* :func:`plot_cutoff_curves`: the mean of one metric variant (``nDCG(gain=exp)``, ``P(rel=2)``)
  at each cutoff k, one line per system; :func:`cutoff_curves` computes the points and
  :func:`curve_variant` checks a spec and resolves it as an evaluation did;
* :func:`plot_differences`: per-query difference system - baseline, sorted, one panel per system (a bar
  per query up to :data:`MAX_BARS` queries, the filled curve of the sorted values beyond).

Every mark has a legend entry (mean, median, box, whiskers, outliers; better / worse / equal).
``distribution_figure``, ``cutoff_curves_figure`` and ``differences_figure`` return the figure
instead of writing it (a notebook shows it with ``display(figure)``).
"""

from __future__ import annotations

import math
import re
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

from ..errors import InputError, MetricSpecError
from ..metrics.spec import Metric, parse_metric
from .writing import slug

__all__ = ["plot_distribution", "plot_cutoff_curves", "plot_differences", "distribution_figure",
           "cutoff_curves_figure", "differences_figure", "cutoff_curves", "curve_variant", "curve_label", "is_binary",
           "FORMATS", "MAX_BARS", "plain", "differences", "slug"]

FORMATS = ("png", "svg", "pdf")
#: colours of the differences plot: better than, worse than, equal to the baseline
_BETTER, _WORSE, _EQUAL = "tab:green", "tab:red", "tab:gray"
#: a differences panel of more queries than this draws its sorted curve through this many of them, not one bar each
MAX_BARS = 500


def plain(text: object) -> str:
    r"""A name as matplotlib shows it literally: a ``$`` escaped, so ``$x$`` in a system or metric name is not
    read as mathtext (which would typeset it, or fail to parse it).

    >>> plain("cost $5 / $6")
    'cost \\$5 / \\$6'
    """
    return str(text).replace("$", r"\$")


def _figure(width: float, height: float) -> Any:
    """A figure on its own Agg canvas (no pyplot, no global backend), laid out to keep labels inside."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _save(figure: Any, stem: str | os.PathLike[str], formats: Sequence[str]) -> list[Path]:
    from .writing import atomic_file

    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown:
        raise InputError(f"unknown plot format {unknown[0]!r}; choose one of {', '.join(FORMATS)}.")
    written = []
    for fmt in formats:
        path = Path(f"{stem}.{fmt}")
        with atomic_file(path) as tmp:
            figure.savefig(tmp, format=fmt, dpi=120)
        written.append(path)
    return written


def is_binary(values: Mapping[str, Mapping[str, float]]) -> bool:
    """True when every per-query value of every system is 0 or 1 (and there is at least one).

    >>> is_binary({"bm25": {"q1": 1.0, "q2": 0.0}}), is_binary({"bm25": {"q1": 0.5}})
    (True, False)
    """
    seen = False
    for per_query in values.values():
        for value in per_query.values():
            if value not in (0, 1):
                return False
            seen = True
    return seen


def _tick_labels(axes: Any, names: Sequence[str]) -> None:
    crowded = len(names) > 4 or max(map(len, names), default=0) > 14
    axes.set_xticks(range(1, len(names) + 1), [plain(name) for name in names], rotation=20 if crowded else 0, ha="right" if crowded else "center")


def plot_distribution(values: Mapping[str, Mapping[str, float]], metric: str, stem: str | os.PathLike[str], *,
                      formats: Sequence[str] = ("png",)) -> list[Path]:
    """One metric's per-query values per system: a box plot with the mean marked, or, for a binary
    metric (:func:`is_binary`), a bar of the share of queries with a hit.

    Args:
        values: system -> {query id: value}.
        metric: the metric's label (axis title), e.g. ``nDCG@10`` or ``Success@5``.
        stem: output path without suffix.
        formats: file formats to write.
    """
    return _save(distribution_figure(values, metric), stem, formats)



class _MeanStyle(TypedDict):
    """How the mean is drawn in a box plot and in its legend (keywords of matplotlib's Line2D)."""

    marker: str
    markerfacecolor: str
    markeredgecolor: str
    markersize: float

def distribution_figure(values: Mapping[str, Mapping[str, float]], metric: str) -> Any:
    """The :class:`~matplotlib.figure.Figure` of :func:`plot_distribution` (to show or save yourself)."""
    if not values:
        raise InputError("a distribution plot needs at least one system's values.")
    if is_binary(values):
        return _hit_share_figure(values, metric)
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    names = list(values)
    data = [list(values[name].values()) for name in names]
    figure = _figure(3.2 + 1.25 * len(names), 3.8)
    axes = figure.add_subplot()
    mean_style: _MeanStyle = {"marker": "D", "markerfacecolor": "white", "markeredgecolor": "black", "markersize": 6}
    axes.bxp(_box_stats(data), showmeans=True, meanprops=mean_style, medianprops={"color": "tab:orange"},
             flierprops={"marker": "o", "markersize": 3, "alpha": 0.6})
    _tick_labels(axes, names)
    axes.set_ylabel(plain(metric))
    counts = sorted({len(d) for d in data})
    axes.set_title(f"per-query {plain(metric)} ({'/'.join(map(str, counts))} queries)")
    axes.grid(axis="y", alpha=0.3)
    handles = [Line2D([], [], linestyle="none", label="mean", **mean_style),
               Line2D([], [], color="tab:orange", label="median"),
               Patch(facecolor="white", edgecolor="black", label="middle 50% of queries"),
               Line2D([], [], color="black", label="whiskers: up to 1.5 × box height"),
               Line2D([], [], linestyle="none", marker="o", markersize=3, color="black", alpha=0.6,
                      label="queries beyond the whiskers")]
    figure.legend(handles=handles, loc="outside right center", fontsize=8, frameon=False)
    return figure


def _box_stats(data: Sequence[Sequence[float]]) -> list[dict[str, Any]]:
    """matplotlib's box statistics of each system's values, each outlier drawn once per place it lands: outliers
    closer than 1/1000 of the axis's span share one marker (at 100,000 queries, thousands of markers at the same
    height would be drawn, and written into an SVG, as one dot)."""
    import numpy as np
    from matplotlib.cbook import boxplot_stats

    stats: list[dict[str, Any]] = boxplot_stats([np.asarray(d, dtype=np.float64) for d in data])
    finite = [v for d in data for v in (min(d, default=0.0), max(d, default=0.0)) if math.isfinite(v)]
    step = (max(finite) - min(finite)) / 1000 if finite and max(finite) > min(finite) else 1.0
    for box in stats:
        fliers = np.asarray(box["fliers"], dtype=np.float64)
        _, first = np.unique(np.floor(fliers / step), return_index=True)
        box["fliers"] = fliers[np.sort(first)]
    return stats


def _hit_share_figure(values: Mapping[str, Mapping[str, float]], metric: str) -> Any:
    """A bar per system: the share of queries whose value is 1, labelled ``hits/queries``."""
    names = list(values)
    hits = [sum(1 for v in values[name].values() if v == 1) for name in names]
    totals = [len(values[name]) for name in names]
    shares = [h / t if t else 0.0 for h, t in zip(hits, totals)]
    figure = _figure(1.6 + 1.25 * len(names), 3.8)
    axes = figure.add_subplot()
    colours = [f"C{i % 10}" for i in range(len(names))]
    bars = axes.bar(range(1, len(names) + 1), shares, color=colours, width=0.6)
    axes.bar_label(bars, labels=[f"{s:.0%}\n{h}/{t}" for s, h, t in zip(shares, hits, totals)], padding=2,
                   fontsize=8)
    _tick_labels(axes, names)
    axes.set_ylim(0, 1.18)
    axes.set_yticks([0, 0.25, 0.5, 0.75, 1.0], ["0%", "25%", "50%", "75%", "100%"])
    axes.set_ylabel(f"queries with {plain(metric)} = 1")
    axes.set_title(f"{plain(metric)}: share of queries with a hit")
    axes.grid(axis="y", alpha=0.3)
    return figure


def curve_variant(spec: str | Metric, results: Any = None) -> Metric:
    """The metric variant a curve follows over k, from any spec (its own cutoff, if any, is replaced).

    ``nDCG(gain=exp)@10``, ``nDCG(gain=exp)``, ``ndcg_burges`` and ``P(rel=2)`` are accepted; a
    family that needs a cutoff may be written without one (``P``). With ``results`` (a
    :class:`~evalbridge.evaluation.results.Results`), the variant is resolved as that evaluation resolved its
    metrics (``P`` at relevance level 2 becomes ``P(rel=2)``), so the curve shows what the table shows.

    Raises:
        MetricSpecError: an unknown spelling, or a metric without a cutoff (``Rprec``).

    >>> str(curve_variant("ndcg_burges@10"))
    'nDCG(gain=exp)@1'
    >>> curve_label(curve_variant("P(rel=2)"))
    'P(rel=2)@k'
    """
    try:
        metric = parse_metric(spec)
    except MetricSpecError:
        # a family that needs a cutoff, written without one: "P", "P(rel=2)", "P-l2"
        text = spec.strip() if isinstance(spec, str) else ""
        parts = re.fullmatch(r"(?P<head>[^@]*?)(?P<level>\s*-l\s*[^\s()@-]+)?", text)
        guess: Metric | None
        try:
            guess = parse_metric(f"{parts['head']}@1{parts['level'] or ''}") if parts and text else None
        except MetricSpecError:
            guess = None
        if guess is None:
            raise
        metric = guess
    if metric.info.cutoff == "none":
        raise MetricSpecError(f"{metric} takes no cutoff k, so it has no curve over k; use a metric with a cutoff, "
                              f"e.g. nDCG, P, R, AP, RR or Success, with any options (nDCG(gain=exp)).")
    metric = metric.replace(k=1)
    if results is not None:
        metric = results.resolve(metric)
    return metric


def curve_label(metric: str | Metric) -> str:
    """The label of a curve over k: ``nDCG(gain=exp)@k``.

    >>> curve_label("ndcg_burges@10")
    'nDCG(gain=exp)@k'
    """
    return str(curve_variant(metric)).removesuffix("@1") + "@k"


def cutoff_curves(qrels: Any, run: Any, metric: str | Metric, ks: Iterable[int], **options: Any) -> dict[int, float]:
    """The mean of ``metric``'s exact variant at each cutoff in ``ks``: ``{k: mean}`` (one evaluation).

    Args:
        qrels, run: anything :func:`evalbridge.evaluate` accepts.
        metric: any spec, see :func:`curve_variant` (its own cutoff is ignored).
        ks: the cutoffs, each >= 1.
        options: keyword arguments of :func:`evalbridge.evaluate` (``settings=``, or ``min_relevance``, ``ties``...).

    Example:
        >>> cutoff_curves({"q": {"a": 1, "b": 1}}, {"q": {"a": 0.9, "c": 0.5, "b": 0.1}}, "P", [1, 2, 3])
        {1: 1.0, 2: 0.5, 3: 0.6666666666666666}
    """
    from ..evaluation.evaluating import evaluate

    variant = curve_variant(metric)
    cutoffs = sorted(set(ks))
    if not cutoffs:
        raise InputError("cutoff_curves needs at least one cutoff k.", fix="pass e.g. ks=[1, 5, 10, 20].")
    results = evaluate(qrels, run, [variant.replace(k=k) for k in cutoffs], **options)
    return {k: results[variant.replace(k=k)] for k in cutoffs}


def plot_cutoff_curves(curves: Mapping[str, Mapping[int, float]], metric: str | Metric, stem: str | os.PathLike[str], *,
                       formats: Sequence[str] = ("png",)) -> list[Path]:
    """The mean of one metric variant at each cutoff k, one line per system (log-scaled k axis when wide).

    Args:
        curves: system -> {k: mean of the variant at k} (:func:`cutoff_curves`).
        metric: the variant the points were computed for, as any spec (``nDCG(gain=exp)``,
            ``nDCG(gain=exp)@10``, ``P(rel=2)``); the labels show it as ``nDCG(gain=exp)@k``.
        stem: output path without suffix.
        formats: file formats to write.
    """
    return _save(cutoff_curves_figure(curves, metric), stem, formats)


def cutoff_curves_figure(curves: Mapping[str, Mapping[int, float]], metric: str | Metric) -> Any:
    """The :class:`~matplotlib.figure.Figure` of :func:`plot_cutoff_curves`."""
    label = curve_label(metric)
    figure = _figure(6.0, 3.8)
    axes = figure.add_subplot()
    for name, points in curves.items():
        ks = sorted(points)
        axes.plot(ks, [points[k] for k in ks], marker="o", markersize=4, label=plain(name))
    ks = sorted({k for points in curves.values() for k in points})
    if ks and ks[-1] / max(ks[0], 1) >= 20:
        axes.set_xscale("log")
        axes.minorticks_off()
    axes.set_xticks(ks, [str(k) for k in ks])
    axes.set_xlabel("cutoff k" + (" (log scale)" if axes.get_xscale() == "log" else ""))
    axes.set_ylabel(f"mean {plain(label)}")
    axes.set_title(f"{plain(label)}: mean over queries at each cutoff")
    axes.grid(alpha=0.3)
    figure.legend(loc="outside right center", fontsize=8, frameon=False, title="system", title_fontsize=8)
    return figure


def plot_differences(values: Mapping[str, Mapping[str, float]], baseline: str, metric: str,
                     stem: str | os.PathLike[str], *, formats: Sequence[str] = ("png",)) -> list[Path]:
    """Per-query difference (system - baseline) of one metric, sorted, one panel per other system.

    Bars above 0 (green) are queries where the system beats the baseline, below 0 (red) where it
    loses; the legend counts each, and the dashed line is the mean difference. Nothing is written
    (and ``[]`` returned) when the baseline is the only system.
    """
    _others(values, baseline)
    if len(values) == 1:
        return []
    return _save(differences_figure(values, baseline, metric), stem, formats)


def _others(values: Mapping[str, Mapping[str, float]], baseline: str) -> list[str]:
    if baseline not in values:
        raise InputError(f"the baseline {baseline!r} is not one of the systems ({', '.join(values)}).")
    return [name for name in values if name != baseline]


#: the start of a bar's SVG id that names its query (:func:`differences_figure`'s ``named``): the rest is the hex of
#: the name's UTF-8 bytes, which a page turns into the bar's hover title
NAMED = "evalbridge-named-"


def differences_figure(values: Mapping[str, Mapping[str, float]], baseline: str, metric: str, *,
                       named: Callable[[str, float], str] | None = None) -> Any:
    """The :class:`~matplotlib.figure.Figure` of :func:`plot_differences`. ``named``: (query id, Δ) -> the name of
    the query's bar (its id, its text); each bar's SVG id is then :data:`NAMED`, its panel, its place and the
    name's hex (a page shows it on hover); bars only: beyond :data:`MAX_BARS` queries the curve names none."""
    others = _others(values, baseline)
    if not others:
        raise InputError(f"a differences plot needs a system besides the baseline {baseline!r}.")
    import numpy as np
    from matplotlib.patches import Patch

    figure = _figure(7.2, 0.6 + 2.2 * len(others))
    base = values[baseline]
    panels = figure.subplots(len(others), 1, sharey=True, squeeze=False)[:, 0]  # one scale: panels compare
    for panel, (axes, name) in enumerate(zip(panels, others)):
        shared, unsorted = differences(values[name], base)
        order = np.argsort(-unsorted, kind="stable")  # from the largest
        diffs = unsorted[order]
        bars = _sorted_differences(axes, diffs)
        if named is not None:
            for place, (bar, i) in enumerate(zip(bars, order)):
                text = named(shared[i], float(unsorted[i])).encode("utf-8").hex()
                bar.set_gid(f"{NAMED}{panel}-{place}-{text}")
        axes.axhline(0, color="black", linewidth=0.6)
        mean = math.fsum(diffs) / len(diffs) if len(diffs) else 0.0
        mean_line = axes.axhline(mean, color="black", linestyle="--", linewidth=0.8, label=f"mean Δ {mean:+.4f}")
        axes.set_title(f"{plain(name)} - {plain(baseline)}: {plain(metric)} per query ({len(diffs)} queries, sorted)",
                       fontsize=9)
        axes.set_xticks([])
        axes.set_xlabel("queries, sorted by Δ", fontsize=8)
        axes.set_xlim(-0.5, max(len(diffs), 1) - 0.5)
        axes.set_ylabel(f"Δ {plain(metric)}")
        better, worse = int((diffs > 0).sum()), int((diffs < 0).sum())
        handles = [Patch(color=_BETTER, label=f"better: {better}"), Patch(color=_WORSE, label=f"worse: {worse}"),
                   Patch(color=_EQUAL, label=f"equal: {len(diffs) - better - worse}"), mean_line]
        axes.legend(handles=handles, loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8, frameon=False)
    return figure


def differences(system: Mapping[str, float], baseline: Mapping[str, float]) -> tuple[list[str], Any]:
    """(the queries both have, in the baseline's order; the per-query differences system - baseline over them,
    as a numpy array). Two mappings of the same queries in the same order (what evaluations of one qrels give)
    are subtracted as arrays, with no lookup per query."""
    import numpy as np

    shared = list(baseline)
    if len(system) != len(baseline) or list(system) != shared:
        shared = [q for q in shared if q in system]
        own = np.fromiter(map(system.__getitem__, shared), dtype=np.float64, count=len(shared))
        base = np.fromiter(map(baseline.__getitem__, shared), dtype=np.float64, count=len(shared))
    else:
        own = np.fromiter(system.values(), dtype=np.float64, count=len(shared))
        base = np.fromiter(baseline.values(), dtype=np.float64, count=len(shared))
    return shared, own - base


def _sorted_differences(axes: Any, diffs: Any) -> list[Any]:
    """The sorted differences of one panel: a bar per query up to :data:`MAX_BARS` queries; beyond, the curve of
    the sorted values through :data:`MAX_BARS` evenly spaced ranks (first and last included), filled green above 0
    and red below (one bar per query would be drawn for minutes and read as one shape anyway). Returns the bars
    (none for the curve)."""
    if len(diffs) <= MAX_BARS:
        colours = [_BETTER if d > 0 else _WORSE if d < 0 else _EQUAL for d in diffs]
        return list(axes.bar(range(len(diffs)), diffs, color=colours, width=1.0))
    import numpy as np

    ranks = np.unique(np.linspace(0, len(diffs) - 1, MAX_BARS).round().astype(np.int64))
    shown = diffs[ranks]
    axes.fill_between(ranks, shown, 0, where=shown > 0, color=_BETTER, interpolate=True, linewidth=0)
    axes.fill_between(ranks, shown, 0, where=shown < 0, color=_WORSE, interpolate=True, linewidth=0)
    return []


def rank_intervals_figure(tiers: Any) -> Any:
    """Each system's rank interval (a line from its lowest to its highest rank over the bootstrap, a dot at its rank)
    and its tier letters, one panel per metric of a :class:`~evalbridge.decisions.tiers.Tiers`, the best system on top."""
    panels_rows = [[r for r in tiers.rows if r.metric == metric] for metric in tiers.metrics]
    systems = len(tiers.systems)
    figure = _figure(7.2, sum(0.9 + 0.22 * systems for _ in panels_rows))
    panels = figure.subplots(len(panels_rows), 1, squeeze=False)[:, 0]
    for axes, metric, rows in zip(panels, tiers.metrics, panels_rows):
        y = list(range(len(rows)))
        axes.hlines(y, [r.rank_low for r in rows], [r.rank_high for r in rows], color="tab:blue", linewidth=2)
        axes.plot([r.rank for r in rows], y, "o", color="black", markersize=4)
        axes.set_yticks(y, [f"{plain(r.system)}  [{plain(r.tier)}]" for r in rows], fontsize=8)
        axes.invert_yaxis()
        axes.set_xlim(0.5, systems + 0.5)
        axes.set_xlabel("rank (1 = best)", fontsize=8)
        axes.set_title(f"{plain(metric)}: rank and {tiers.confidence:.0%} rank interval [tier letters]", fontsize=9)
        axes.grid(axis="x", linewidth=0.3)
    return figure
