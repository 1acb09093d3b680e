"""The sections of a config that add analyses of the runs it evaluates to the report: ``diff:``, ``power:``, ``changed:``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..metrics.requests import MetricRequest
from .checking import Checker
from .layout import ChangedSettings, ComparisonSettings, DiffSettings, PowerSettings
from .sources import Source

__all__ = ["read_diff", "read_power", "read_changed"]


def read_diff(check: Checker, value: Any, runs: Mapping[str, Source]) -> DiffSettings | None:
    """``diff:``: true, false or ``{k, queries, moves}``, each key checked by its rule of
    :data:`evalbridge.decisions.diffing.DIFF_PARAMETERS`."""
    if value is None or value is False:
        return None
    if value is True:
        value = {}
    spec = check.mapping(value, ("diff",), ("k", "queries", "moves"), "{k: 10, queries: 10, moves: 3}")
    if len(runs) < 2:
        raise check.fail(("diff",), "a diff compares a system with the baseline, and needs at least two runs.",
                         fix="add another run, or remove the diff section.")
    return DiffSettings(**{key: check.rule(spec.get(key, getattr(DiffSettings, key)), ("diff", key), f"diff.{key}")
                           for key in ("k", "queries", "moves")})


def read_power(check: Checker, value: Any, runs: Mapping[str, Source],
               comparison: ComparisonSettings | None) -> PowerSettings | None:
    """``power:``: true, false or ``{test, alpha, power, effect, sides}``, each key checked by its rule of
    :data:`evalbridge.decisions.power.POWER_PARAMETERS`. Left out, a comparison has it at the comparison's test and alpha
    (the t-test's for ``test: wilcoxon``, which has no closed-form power here, and the report says which)."""
    from ..decisions.power import POWER_TESTS

    if value is False or (value is None and comparison is None):
        return None
    spec = check.mapping({} if value is None or value is True else value, ("power",), _POWER_KEYS,
                         "{effect: 0.01, power: 0.8}")
    if len(runs) < 2:
        raise check.fail(("power",), "power compares a system with the baseline, and needs at least two runs.",
                         fix="add another run" + (", or remove the power section." if check.locator.source else "."))
    test = comparison.test if comparison is not None else "t"
    defaults: dict[str, Any] = {"test": test if test in POWER_TESTS else "t",
                                "alpha": comparison.alpha if comparison is not None else PowerSettings.alpha}
    given: dict[str, Any] = {key: check.rule(spec[key], ("power", key), f"power.{key}") for key in _POWER_KEYS
                             if spec.get(key) is not None}
    return PowerSettings(**{**defaults, **given})


#: the keys of ``power:`` (the keywords of :func:`evalbridge.power` but the results, metrics and baseline)
_POWER_KEYS = ("test", "alpha", "power", "effect", "sides")


def read_changed(check: Checker, value: Any, folder: Path, qrels: Source | None, runs: Mapping[str, Source],
                 metrics: Sequence[MetricRequest], policies: Mapping[str, str]) -> ChangedSettings | None:
    """``changed:``: ``{before, metrics, test, alpha, n_resamples}``: what the config's qrels (after) changed against
    the judgements ``before`` (a qrels source) for the config's runs; test, alpha and n_resamples checked by the
    agreement's rules (:func:`evalbridge.what_changed` is the ranking agreement of the two sides)."""
    from .sections import read_metrics, read_source

    if value is None:
        return None
    spec = check.mapping(value, ("changed",), ("before", "metrics", "test", "alpha", "n_resamples"),
                         "{before: qrels.before.txt, metrics: [nDCG@10]}")
    if "before" not in spec:
        raise check.fail(("changed",), "what changed needs the judgements before (the config's qrels are after).",
                         fix="write changed: {before: <path to the qrels before>}.")
    if qrels is None:
        raise check.fail(("changed",), "what changed compares the judgements before with the config's qrels, and "
                                       "the config has none.", fix="add qrels: <path to the qrels after>.")
    if len(runs) < 2:
        raise check.fail(("changed",), "what changed for the decision orders systems, and needs at least two runs.",
                         fix="add another run, or remove the changed section.")
    given = spec.get("metrics")
    asked = read_metrics(check, [given] if isinstance(given, str) else given, ("changed", "metrics")) \
        if given is not None else metrics
    if not asked:
        raise check.fail(("changed",), "no metric to order the systems by: the config has no metrics.",
                         fix="write changed: {before: ..., metrics: [nDCG@10]}.")
    return ChangedSettings(
        before=read_source(check, spec["before"], ("changed", "before"), folder, "qrels", "local", policies),
        metrics=tuple(r.asked for r in asked),
        **{key: check.rule(spec.get(key, getattr(ChangedSettings, key)), ("changed", key), f"changed.{key}")
           for key in ("test", "alpha", "n_resamples")})
