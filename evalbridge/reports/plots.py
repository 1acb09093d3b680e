"""Plots (matplotlib, Agg backend, imported lazily): distributions, metric@k curves, differences.

Each function writes one figure per requested format (``png``, ``svg``, ``pdf``)
atomically and returns the paths written:

* :func:`plot_distribution`: per-query values of one metric, one box per system, mean marked;
* :func:`plot_cutoff_curves`: a metric family's mean at each cutoff k, one line per system;
* :func:`plot_differences`: per-query difference system - baseline, sorted, one panel per system.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from .writing import slug

__all__ = ["plot_distribution", "plot_cutoff_curves", "plot_differences", "FORMATS", "slug"]

FORMATS = ("png", "svg", "pdf")


def _pyplot():  # noqa: ANN202 - matplotlib.pyplot
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, stem: str | os.PathLike, formats: Sequence[str]) -> list[Path]:
    from .report import atomic_path

    written = []
    for fmt in formats:
        if fmt not in FORMATS:
            raise InputError(f"unknown plot format {fmt!r}; choose one of {', '.join(FORMATS)}.")
        path = Path(f"{stem}.{fmt}")
        with atomic_path(path) as tmp:
            figure.savefig(tmp, format=fmt, bbox_inches="tight", dpi=120)
        written.append(path)
    _pyplot().close(figure)
    return written


def plot_distribution(values: Mapping[str, Mapping[str, float]], metric: str, stem: str | os.PathLike, *,
                      formats: Sequence[str] = ("png",)) -> list[Path]:
    """Box plot of one metric's per-query values, one box per system, the mean as a diamond.

    Args:
        values: system -> {query id: value}.
        metric: the metric's label (axis title).
        stem: output path without suffix.
        formats: file formats to write.
    """
    plt = _pyplot()
    names = list(values)
    data = [list(values[name].values()) for name in names]
    fig, ax = plt.subplots(figsize=(1.4 + 1.1 * len(names), 3.6))
    ax.boxplot(data, showmeans=True, meanprops={"marker": "D", "markerfacecolor": "white"})
    ax.set_xticks(range(1, len(names) + 1), names, rotation=20 if len(names) > 4 else 0)
    ax.set_ylabel(metric)
    ax.set_title(f"per-query {metric} ({len(data[0]) if data else 0} queries)")
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, stem, formats)


def plot_cutoff_curves(curves: Mapping[str, Mapping[int, float]], family: str, stem: str | os.PathLike, *,
                       formats: Sequence[str] = ("png",)) -> list[Path]:
    """Mean of a metric family at each cutoff k, one line per system (log-scaled k axis).

    Args:
        curves: system -> {k: mean of family@k}.
        family: the metric family's label (``nDCG``, ``P``, ``R``...).
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    for name, points in curves.items():
        ks = sorted(points)
        ax.plot(ks, [points[k] for k in ks], marker="o", label=name)
    ks = sorted({k for points in curves.values() for k in points})
    if ks and ks[-1] / max(ks[0], 1) >= 20:
        ax.set_xscale("log")
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.set_xlabel("cutoff k")
    ax.set_ylabel(f"{family}@k")
    ax.set_title(f"{family}@k")
    ax.grid(alpha=0.3)
    ax.legend()
    return _save(fig, stem, formats)


def plot_differences(values: Mapping[str, Mapping[str, float]], baseline: str, metric: str,
                     stem: str | os.PathLike, *, formats: Sequence[str] = ("png",)) -> list[Path]:
    """Per-query difference (system - baseline) of one metric, sorted, one panel per other system.

    Bars above 0 are queries where the system beats the baseline.
    """
    if baseline not in values:
        raise InputError(f"the baseline {baseline!r} is not one of the systems ({', '.join(values)}).")
    others = [name for name in values if name != baseline]
    if not others:
        return []
    plt = _pyplot()
    fig, axes = plt.subplots(len(others), 1, figsize=(6.4, 1.0 + 2.0 * len(others)), squeeze=False)
    base = values[baseline]
    for ax, name in zip(axes[:, 0], others):
        diffs = sorted((values[name][q] - base[q] for q in base if q in values[name]), reverse=True)
        colours = ["tab:green" if d > 0 else "tab:red" if d < 0 else "tab:gray" for d in diffs]
        ax.bar(range(len(diffs)), diffs, color=colours, width=1.0)
        ax.axhline(0, color="black", linewidth=0.6)
        mean = math.fsum(diffs) / len(diffs) if diffs else 0.0
        ax.set_title(f"{name} - {baseline}: {metric} per query (mean {mean:+.4f})", fontsize=9)
        ax.set_xticks([])
        ax.set_ylabel(f"Δ {metric}")
    fig.tight_layout()
    return _save(fig, stem, formats)
