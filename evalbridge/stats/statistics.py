"""``Statistics``: everything that decides a test or an interval, one frozen value, and the one table its doors are built from.

``Settings`` decides the numbers, ``Statistics`` decides the tests: which paired test, which correction over the
comparisons, the significance level, the confidence of the intervals and their method, one or two sides, the
resamples and the seed of every random step. Every verb that tests or resamples (``compare``, ``power``,
``diagnose``, ``what_changed``, ``uncertain``, ``agree``, a config run and the command line) takes it whole
(``statistics=Statistics(test="randomization")``) or as keywords of the same names, built into one value at the door
(:func:`statistics_of`); keywords given beside ``statistics=`` replace its fields.

Each field is declared once with :func:`~evalbridge.common.parameters.declared`: its default, its rule (the rules of
:data:`evalbridge.stats.paired_tests.COMPARISON_PARAMETERS`, checked once when the value is built) and its help.
:data:`ROWS` is that table; the command line's flags (``--test``, ``--alpha``, ``--n-resamples``...) are generated
from it (:func:`evalbridge.cli.shared.add_statistics`) and a config's keys are checked by the same rules.

Example:
    >>> s = Statistics(test="randomization", n_resamples=1000)
    >>> s.test, s.correction, s.alpha, s.n_resamples
    ('randomization', 'holm', 0.05, 1000)
    >>> statistics_of(s, {"alpha": 0.01}).alpha
    0.01
    >>> Statistics(alpha=1.5)
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: alpha must be a number in (0, 1); got 1.5. Fix: the significance level is a probability, e.g. 0.05 or 0.01.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, TypedDict

from ..errors import InputError
from ..common.parameters import Interval, Row, Rule, check_parameters, declared, rows_of, value_of
from .paired_tests import COMPARISON_PARAMETERS as _P

__all__ = ["Statistics", "ROWS", "DEFAULTS", "StatisticsKeywords", "statistics_of", "split_statistics",
           "statistics_for"]

_SIDES = Interval("sides", int, 1, 2, closed="both", default=2, fix="1 (one-sided) or 2 (two-sided).")


@dataclass(frozen=True, kw_only=True)
class Statistics:
    """Everything that decides a test or an interval; frozen, keyword-only, checked when built.

    Attributes:
        test: the paired test that decides significance: ``t`` (Student's paired t-test), ``randomization``
            (Fisher's, resampled) or ``wilcoxon`` (signed-rank).
        correction: over every comparison of one family: ``holm``, ``bh`` (Benjamini-Hochberg), ``bonferroni`` or
            ``none``.
        alpha: the significance level of the corrected p-values.
        confidence: the level of the bootstrap intervals.
        sides: 2, a difference either way; 1, an improvement over the baseline only (the power of a one-sided
            question; the comparisons' tests are two-sided).
        n_resamples: resamples of the randomization test and of the bootstrap.
        seed: seed of every random step.
        ci_method: the bootstrap interval: ``BCa`` (bias-corrected and accelerated) or ``percentile``.
    """

    test: str = declared("t", _P["test"], "significance test: t (paired t-test, default), randomization, wilcoxon",
                         metavar="TEST")
    correction: str = declared("holm", _P["correction"],
                               "correction over the comparisons: holm (default), bh, bonferroni or none",
                               metavar="NAME")
    alpha: float = declared(0.05, _P["alpha"], "significance level, in (0, 1) (default 0.05)")
    confidence: float = declared(0.95, _P["confidence"], "level of the bootstrap intervals (default 0.95)")
    sides: int = declared(2, _SIDES, "2 (default): a difference either way; 1: an improvement only (power)")
    n_resamples: int = declared(10_000, _P["n_resamples"],
                                "resamples of the randomization test and the bootstrap (default 10000)", metavar="N")
    seed: int = declared(0, _P["seed"], "seed of every random step (default 0)")
    ci_method: str = declared("BCa", _P["ci_method"], "bootstrap interval: BCa (default) or percentile",
                              metavar="METHOD")

    def __post_init__(self) -> None:
        # every value checked by its row's rule, in one call, and kept as checked (numpy ints become ints)
        for name, value in check_parameters(_RULES, {name: getattr(self, name) for name in ROWS}).items():
            object.__setattr__(self, name, value)

    def replace(self, **changes: Any) -> Statistics:
        """A copy with ``changes`` (checked as any value is)."""
        return statistics_of(self, changes)

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, JSON-ready."""
        return {name: getattr(self, name) for name in ROWS}

    def keywords(self, *names: str) -> dict[str, Any]:
        """The fields ``names`` as keywords (every field when none is named)."""
        return {name: getattr(self, name) for name in names or ROWS}


class StatisticsKeywords(TypedDict, total=False):
    """The statistics as keywords (``compare(..., test="randomization")``): one key per field of :class:`Statistics`."""

    test: str
    correction: str
    alpha: float
    confidence: float
    sides: int
    n_resamples: int
    seed: int
    ci_method: str


#: field name -> its :class:`~evalbridge.common.parameters.Row`, in the order of :class:`Statistics`' fields.
ROWS: Mapping[str, Row] = rows_of(Statistics)
#: field name -> its default
DEFAULTS: Mapping[str, Any] = MappingProxyType({f.name: f.default for f in dataclasses.fields(Statistics)})
_RULES: Mapping[str, Rule] = MappingProxyType({name: row.rule for name, row in ROWS.items()})


def statistics_of(statistics: Statistics | None = None, keywords: Mapping[str, Any] | None = None) -> Statistics:
    """The one :class:`Statistics` of a call: ``statistics`` (default: every default) with ``keywords`` over it.

    Example:
        >>> statistics_of(None, {"test": "wilcoxon"}) == Statistics(test="wilcoxon")
        True
    """
    return value_of(Statistics, statistics, keywords, what="statistics option", argument="statistics",
                    example="test='t', ...")


def split_statistics(keywords: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``keywords`` parted into the fields of :class:`Statistics` and the rest (the settings, say)."""
    ours = {name: value for name, value in keywords.items() if name in ROWS}
    return ours, {name: value for name, value in keywords.items() if name not in ROWS}


def statistics_for(verb: str, statistics: Statistics | None, keywords: Mapping[str, Any], *,
                   uses: Mapping[str, tuple[Any, ...] | None], why: str, fixes: Mapping[str, str] | None = None
                   ) -> Statistics:
    """The one :class:`Statistics` of a call to ``verb``, refused where ``verb`` cannot honour it.

    ``keywords`` are the verb's loose keywords, None meaning "from ``statistics``"; the others go over
    ``statistics``. ``uses`` declares, once per verb, the fields it honours: field -> the values it can honour
    (None: any value the field's rule allows). A field the verb does not use is refused when it is not at its
    default (``why`` says what the verb does instead), never ignored; ``fixes`` holds the fix of a refused value.

    Example:
        >>> statistics_for("power", None, {"test": "t", "alpha": None}, uses={"test": ("t",), "alpha": None},
        ...                why="its answer is exact").alpha
        0.05
        >>> statistics_for("power", Statistics(seed=3), {}, uses={"test": ("t",)}, why="its answer is exact")
        Traceback (most recent call last):
        ...
        evalbridge.errors.InputError: power does not use seed (its answer is exact); got seed=3. Fix: leave seed at its default (0) for power.
    """
    chosen = statistics_of(statistics, {name: value for name, value in keywords.items() if value is not None})
    for name in ROWS:
        value, allowed = getattr(chosen, name), uses.get(name)
        if name not in uses and value != DEFAULTS[name]:
            raise InputError(f"{verb} does not use {name} ({why}); got {name}={value!r}.",
                             fix=f"leave {name} at its default ({DEFAULTS[name]!r}) for {verb}.")
        if allowed is not None and value not in allowed:
            raise InputError(f"{verb} takes {name} = {' or '.join(map(repr, allowed))}; got {name}={value!r}.",
                             fix=(fixes or {}).get(name, f"ask {verb} for {name}={allowed[0]!r}."))
    return chosen
