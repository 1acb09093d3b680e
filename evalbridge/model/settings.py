"""``Settings``: everything that decides a number, one frozen value, and the one table its three doors are built from.

Every verb that evaluates (``evaluate``, ``compare``, ``crosscheck``, ``agree``, ``evalbridge.spark.evaluate``, a
config run and the command line) takes the same settings, either whole (``settings=Settings(ties="docid_asc")``)
or as keywords of the same names (``ties="docid_asc"``), built into one ``Settings`` at the door
(:func:`settings_of`); keywords given beside ``settings=`` replace its fields.

Each setting is one field of :class:`Settings`, declared with :func:`setting`: its default, its rule
(:mod:`evalbridge.common.parameters`: allowed values, errors saying expected vs got, checked once when the value is
built) and its help. :data:`ROWS` is that table; the command line's flags (``--min-relevance``,
``--judged-only``...) and the config's keys (``min_relevance:``, ``judged_only:``) are generated from it
(:func:`evalbridge.cli.shared.add_settings`, :func:`evalbridge.config.schema.validate`), so a new setting is one
field here (and its line in :class:`Keywords`, which type checkers read).

Two settings are *read* policies (``ROWS[name].reads``): ``ids`` and ``duplicates`` decide which ids meet and
which repeated document counts, so they decide numbers, but they act where an input is read (the format registry,
:mod:`evalbridge.io.policies`); a verb given a file, a table or a list hands them to its reader, and a config
source may set its own. What describes one file (its columns, a ``rank`` column, the relevance level stored with
the judgements) stays an option of that input.

Example:
    >>> s = Settings(ties="docid_asc", depth=10)
    >>> s.ties, s.depth, s.backend
    ('docid_asc', 10, 'auto')
    >>> settings_of(s, {"judged_only": True}).judged_only
    True
    >>> Settings(ties="random")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: ties must be one of 'docid_desc', 'docid_asc', 'input', 'average'; got 'random'. Fix: choose one of 'docid_desc', 'docid_asc', 'input', 'average'.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypedDict

from ..errors import InputError
from ..common.parameters import Boolean, Interval, OneOf, Row, Rule, Text, check_parameters, declared as setting, \
    rows_of, value_of

if TYPE_CHECKING:
    from typing_extensions import Unpack

__all__ = ["Settings", "Row", "ROWS", "Keywords", "settings_of", "setting", "TIE_POLICIES", "ORDERED_TIES",
           "SCORE_PRECISIONS", "MISSING_QUERY_POLICIES", "NO_RELEVANT_POLICIES", "DEFAULT"]

#: Tie policies that put every query's documents in one order; ``average`` instead averages each
#: metric over every order of each group of tied documents.
ORDERED_TIES = ("docid_desc", "docid_asc", "input")
TIE_POLICIES = (*ORDERED_TIES, "average")
SCORE_PRECISIONS = ("float64", "float32")
MISSING_QUERY_POLICIES = ("zero", "drop")
#: What a query with no relevant judgement (at the relevance level) does, as torchmetrics' empty_target_action.
NO_RELEVANT_POLICIES = ("zero", "drop", "error")


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Everything that decides a number of an evaluation; frozen, keyword-only, checked when built.

    Attributes:
        backend: who computes the numbers: ``auto`` (the pure-Python ``reference`` for small inputs, the numpy
            ``fast`` backend for large ones), another name of :data:`evalbridge.backends.BACKENDS`, or ``spark``.
        min_relevance: relevance level of binary metrics that do not set ``rel`` (``None``: the qrels' own level,
            else 1). nDCG ignores it, as trec_eval does.
        ties: order of equal scores. ``docid_desc`` is trec_eval's rule (score descending, then doc id
            descending); ``docid_asc`` is ir-measures' msmarco provider; ``input`` keeps the order the documents
            were given in; ``average`` orders no tie group: each metric is its expected value over every order of
            each group of equal scores (:mod:`evalbridge.metrics.tie_aware`).
        score_precision: ``float32`` reproduces trec_eval <= 9 / pytrec_eval, which store scores as C floats, so
            scores 1e-9 apart tie.
        missing_queries: a query in the qrels but absent from the run scores 0 (``zero``, ir-measures and
            trec_eval ``-c``) or is left out of the mean (``drop``, pytrec_eval). Either way it is counted.
        judged_only: evaluate "condensed lists" (trec_eval ``-J``, ir-measures ``judged_only``): documents
            without a judgement, or with a negative grade, are removed from each ranking before any metric.
        depth: only the first ``depth`` documents of each ranking count (trec_eval ``-M``), cut after ranking and
            before ``judged_only``, as trec_eval does; ``None``: all.
        no_relevant: a qrels query with no judgement at or above the relevance level (torchmetrics'
            ``empty_target_action``): ``zero`` keeps it, its metrics of relevance 0; ``drop`` leaves it out of
            every mean; ``error`` refuses the evaluation, naming it. Either way it is counted.
        ids: ``str`` reads every query and doc id as a string, so an int 1 meets the str '1' (a read policy);
            ``None``: ids as the input holds them (int and str ids are then refused together).
        duplicates: a document repeated in a run or ranked list: ``error`` refuses it, ``first`` keeps its first
            occurrence and counts the others in the notes (a read policy; qrels never take it).
    """

    backend: str = setting("auto", Text("backend", fix="choose one of the backends `evalbridge metrics` lists."),
                           "who computes the numbers: auto (reference on small inputs, fast on big ones), reference, "
                           "fast, or a library (every backend `evalbridge metrics` lists)", registry=True)
    min_relevance: float | None = setting(
        None, Interval("min_relevance", float, None, None, closed="neither",
                       fix="a relevance level such as 1, 2 or 7.5."),
        "relevance level of binary metrics that do not set rel (default: the qrels' own, else 1; float grades "
        "allowed, e.g. 7)", optional=True, metavar="LEVEL")
    ties: str = setting("docid_desc", OneOf("ties", TIE_POLICIES),
                        "order of tied scores: docid_desc (default, trec_eval), docid_asc, input, or average (every "
                        "metric averaged over the orders of each tie group)")
    score_precision: str = setting("float64", OneOf("score_precision", SCORE_PRECISIONS),
                                   "precision scores are compared at: float64 (default), or float32 as trec_eval <= 9")
    missing_queries: str = setting("zero", OneOf("missing_queries", MISSING_QUERY_POLICIES),
                                   "qrels queries absent from the run: zero (score 0, default) or drop (leave out of "
                                   "the mean)")
    judged_only: bool = setting(False, Boolean("judged_only"),
                                "remove unjudged documents from every ranking before any metric (trec_eval -J)")
    depth: int | None = setting(None, Interval("depth", int, 1, None, closed="left",
                                               fix="e.g. 1000, as trec_eval -M 1000."),
                                "only the first N documents of every ranking count (trec_eval -M)", optional=True,
                                metavar="N")
    no_relevant: str = setting("zero", OneOf("no_relevant", NO_RELEVANT_POLICIES),
                               "qrels queries with no relevant judgement: zero (score 0, default), drop (leave out "
                               "of every mean) or error")
    ids: str | None = setting(None, OneOf("ids", ("str",)),
                              "str: read every query and doc id as a string (an int 1 then meets the str '1')",
                              optional=True, reads=True)
    duplicates: str = setting("error", OneOf("duplicates", ("error", "first")),
                              "a document repeated in a run or ranked list: error (default) or first (keep its first "
                              "occurrence; the dropped ones are counted in the notes)", reads=True)

    def __post_init__(self) -> None:
        # every value checked by its row's rule, in one call (None is a value of an optional setting), and kept as
        # given (a level 2 stays 2: metric names show it)
        check_parameters(_RULES, {name: value for name, row in ROWS.items()
                                  if (value := getattr(self, name)) is not None or not row.optional})

    def replace(self, **changes: Unpack[Keywords]) -> Settings:
        """A copy with ``changes`` (checked as any value is)."""
        return settings_of(self, changes)

    def changed(self) -> dict[str, Any]:
        """The settings that differ from their defaults, by name (what a door needs to pass on)."""
        return {name: getattr(self, name) for name, row in ROWS.items() if getattr(self, name) != DEFAULTS[name]}

    def read_options(self) -> dict[str, Any]:
        """The read policies to hand to a reader (``ids``, ``duplicates``), those set away from their default."""
        return {name: value for name, value in self.changed().items() if ROWS[name].reads}

    def to_dict(self) -> dict[str, Any]:
        """Every setting by name, JSON-ready."""
        return {name: getattr(self, name) for name in ROWS}


class Keywords(TypedDict, total=False):
    """The settings as keywords (``evaluate(..., ties="docid_asc")``): one key per field of :class:`Settings`."""

    backend: str
    min_relevance: float | None
    ties: str
    score_precision: str
    missing_queries: str
    judged_only: bool
    depth: int | None
    no_relevant: str
    ids: str | None
    duplicates: str


#: setting name -> its :class:`Row`, in the order of :class:`Settings`' fields.
ROWS: Mapping[str, Row] = rows_of(Settings)
#: setting name -> its default
DEFAULTS: Mapping[str, Any] = MappingProxyType({f.name: f.default for f in dataclasses.fields(Settings)})
#: setting name -> its rule (what Settings checks each value by)
_RULES: Mapping[str, Rule] = MappingProxyType({name: row.rule for name, row in ROWS.items()})
#: the default settings
DEFAULT = Settings()


def settings_of(settings: Settings | None = None, keywords: Mapping[str, Any] | None = None) -> Settings:
    """The one :class:`Settings` of a call: ``settings`` (default: every default) with ``keywords`` over it.

    A keyword that is no setting is refused with the closest name, as a misspelt keyword would be.

    Example:
        >>> settings_of(None, {"depth": 5}) == Settings(depth=5)
        True
    """
    return value_of(Settings, settings, keywords, what="setting", argument="settings", example="ties='docid_desc', ...")
