"""The backend contract: what every backend declares, as one type (:class:`Backend`).

A backend is one module that builds a :class:`Backend` value named ``BACKEND``, and one line in
:data:`evalbridge.backends.BACKENDS` (name -> module). Everything evalbridge asks of a backend is a
field here; nothing is probed with ``getattr``/``hasattr``:

* ``name``, ``version()``, ``library`` (the importable library it needs, for
  :func:`evalbridge.backends.available`);
* ``conventions``: what the library does on its own (:class:`NativeConventions`), or ``None`` for
  a backend that follows whatever :class:`~evalbridge.model.settings.Settings` it is given (the reference,
  the fast backend, ``auto``);
* ``capabilities``: the metrics it computes exactly, as data (:class:`Capabilities`; required: an
  empty table supports nothing, :meth:`Capabilities.every` everything);
* ``ties``: the tie policies its ``compute`` follows exactly;
* ``compute(qrels, run, metrics, conventions, *, native=False) -> (values, bridges)``: per-query values
  for the queries in both inputs, plus a note for every bridge applied (``native=True``: the library's
  own behaviour, what the cross-check compares; ignored by backends without conventions of their own);
* optional, explicitly ``None`` when absent: ``native_ranking`` (the library's own order of tied
  documents, when no tie rule describes it), ``conventions_for`` (per-metric conventions, e.g.
  ir-measures' providers); ``known_faults`` (empty when none: the library's known faults, as
  :class:`Fault` values declared beside it, which a cross-check emulates), ``bridged_grades``.

Missing-query policy and averaging are done once, by :func:`evalbridge.evaluate`.
Backend libraries are imported lazily, inside ``compute`` and ``version``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..model.settings import Settings

if TYPE_CHECKING:
    from ..metrics.spec import Metric
    from ..model.data import Qrels, Run

__all__ = ["Backend", "Capabilities", "Compute", "Fault", "NativeConventions", "capability_problem"]

#: Values per query id, per metric: what ``compute`` returns with its bridge notes.
Values = dict["Metric", dict[str, float]]


class Compute(Protocol):
    """The signature of :attr:`Backend.compute`."""

    def __call__(self, qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = ..., *,
                 native: bool = False) -> tuple[Values, list[str]]: ...


@dataclass(frozen=True)
class NativeConventions:
    """What a library does on its own, when given the data as is.

    Attributes:
        ties: order of tied scores: ``docid_desc`` (trec_eval), ``docid_asc`` (ir-measures'
            msmarco provider) or ``input`` (ranx ``Run``: insertion order for small tie
            groups, arbitrary, numba argsort order, for larger ones).
        score_precision: ``float32`` when the library stores scores as C floats.
        missing_queries: ``drop`` (a qrels query absent from the run gets no value) or ``zero``.
        empty_qrels: ``drop`` when a qrels query with no judgement gets no value, ``zero`` when it gets
            0 without being evaluated (ir-measures' default value), else ``keep`` (evaluated).
        grades: ``int`` (float grades raise), ``truncate`` (float grades silently cut to
            integers, ranx ``Qrels``) or ``float`` (kept).
        level_scope: ``binary`` when a relevance level only affects binary metrics (trec_eval),
            ``all`` when it also zeroes lower grades in nDCG/DCG (ranx ``-lN``).
        tie_order: the library's own order of tied scores, in words, for a library whose ``native_ranking``
            gives it (no tie rule describes it): the cross-check's cause names it.
        notes: other documented behaviours, for the differences table.
    """

    ties: str = "docid_desc"
    score_precision: str = "float64"
    missing_queries: str = "zero"
    empty_qrels: str = "keep"
    grades: str = "int"
    level_scope: str = "binary"
    tie_order: str = ""
    notes: tuple[str, ...] = ()

    @property
    def conventions(self) -> Settings:
        """The reference's :class:`Settings` that emulate this library."""
        return Settings(ties=self.ties, score_precision=self.score_precision,
                           missing_queries=self.missing_queries)

    @classmethod
    def following(cls, conventions: Settings) -> NativeConventions:
        """The conventions of a backend that follows ``conventions`` (evaluates every query, keeps float grades)."""
        return cls(ties=conventions.ties, score_precision=conventions.score_precision,
                   missing_queries=conventions.missing_queries, empty_qrels="keep", grades="float")


@dataclass(frozen=True)
class Fault:
    """A known fault of a library, declared by its backend: when it can apply, how the reference
    emulates it, and the cause a cross-check gives for a difference it explains.

    Attributes:
        name: short name, shown when the fault was suspected but did not reproduce a value.
        cause: the ``known library fault: ...`` text of a difference it explains.
        applies: ``(qrels, query id, metric, grades truncated?) -> bool``: the fault can touch this query.
        qrels: transform of one query's grades before the reference re-runs (None: none).
        value: ``(reference value, qrels, query id, run, metric, grades truncated?) -> value``, applied after.
    """

    name: str
    cause: str
    applies: Callable[[Qrels, str, Metric, bool], bool]
    qrels: Callable[[dict[str, float]], dict[str, float]] | None = None
    value: Callable[[float, Qrels, str, Run, Metric, bool], float] | None = None


def _nothing() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Capabilities:
    """The metrics a backend computes exactly, as data.

    Attributes:
        table: metric family -> option -> allowed values (or a marker, see :func:`capability_problem`).
            A family not in the table is not supported: an empty table supports nothing.
        missing: metric family -> why the backend does not have it (the reason given instead of
            the generic one).
        everything: every metric with every option (the reference, the engine, ``auto``); the table
            is then empty.
    """

    table: Mapping[str, Mapping[str, Any]] = field(default_factory=_nothing)
    missing: Mapping[str, str] = field(default_factory=_nothing)
    everything: bool = False

    def __post_init__(self) -> None:
        if self.everything and self.table:
            raise ValueError("Capabilities(everything=True) takes no table: it supports every metric already.")

    @classmethod
    def every(cls) -> Capabilities:
        """Every metric, with every option."""
        return cls(everything=True)

    def problem(self, backend: str, metric: Metric) -> str | None:
        """Why ``backend`` cannot compute ``metric`` by these capabilities, or ``None``."""
        if self.everything:
            return None
        return capability_problem(backend, self.table, metric, self.missing)


@dataclass(frozen=True)
class Backend:
    """One backend, declared (see the module docstring for each member).

    Attributes:
        name: the name it is registered under in :data:`evalbridge.backends.BACKENDS`.
        version: its version (the library's, read lazily).
        library: the importable module it needs (``None``: nothing beyond evalbridge).
        conventions: what the library does on its own, or ``None`` when it follows the conventions
            it is given.
        capabilities: what it computes exactly.
        ties: the tie policies (:data:`evalbridge.model.data.TIE_POLICIES`) ``compute`` follows exactly.
        compute: see :class:`Compute`.
        bridged_grades: how grades reach the library in the call evalbridge makes: ``int`` (bridged to
            integers, see :func:`evalbridge.backends._bridge.grade_problem`), ``truncate`` or ``float``.
        known_faults: metric family -> the library's known faults (:class:`Fault`), which a cross-check
            verifies by emulating them in the reference.
        native_ranking: ``run`` with every query's documents in the library's own order, for a
            library whose order of tied documents no tie rule describes (ranx); else ``None``.
        conventions_for: per-metric native conventions (ir-measures routes metrics to providers that
            differ); ``None``: :attr:`conventions` for every metric.
    """

    name: str
    version: Callable[[], str]
    library: str | None
    conventions: NativeConventions | None
    capabilities: Capabilities
    ties: tuple[str, ...]
    compute: Compute
    bridged_grades: str = "float"
    known_faults: Mapping[str, tuple[Fault, ...]] = field(default_factory=_nothing)
    native_ranking: Callable[[Run], Run] | None = None
    conventions_for: Callable[[Metric], NativeConventions] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.capabilities, Capabilities):
            raise TypeError(f"backend {self.name!r}: capabilities must be a Capabilities value "
                            f"(Capabilities.every() for every metric), not {type(self.capabilities).__name__}.")
        if self.bridged_grades not in ("int", "truncate", "float"):
            raise ValueError(f"backend {self.name!r}: bridged_grades must be 'int', 'truncate' or 'float'.")

    def native_conventions(self, metric: Metric, requested: Settings) -> NativeConventions:
        """What the backend does on its own for ``metric`` (``requested``, for a backend that follows it)."""
        if self.conventions_for is not None:
            return self.conventions_for(metric)
        return self.conventions if self.conventions is not None else NativeConventions.following(requested)


def capability_problem(name: str, capabilities: Mapping[str, Mapping[str, Any]], metric: Metric,
                       missing: Mapping[str, str] | None = None) -> str | None:
    """Why backend ``name`` cannot compute ``metric`` (by its declared capabilities), or None.

    ``capabilities`` maps a metric family to option -> allowed values, or to a marker: ``rel``
    ``"positive"`` (any level > 0), ``p`` ``"fraction"`` (written ``0.xx``), ``gains``
    ``"nonnegative"`` (no negative gain); ``"cutoff": "none"`` means the library has the family
    over the whole ranking only. An option not listed must keep its default. A metric that weighs
    documents by their grade (``weights`` other than ``binary``) cannot take a level that is not an
    integer, since the level bridge binarises the grades.
    """
    caps = capabilities.get(metric.name)
    if caps is None:
        reason = (missing or {}).get(metric.name)
        return reason or f"{name} has no {metric.info.title} ({metric.name})."
    rel = dict(metric.options).get("rel")
    weighs_grades = "weights" in metric.info.options and metric.get("weights") != "binary"
    if weighs_grades and rel is not None and not integral_level(rel):
        return (f"{name} takes integer relevance levels, and {metric} weighs documents by their grade, so "
                f"the level {rel:g} cannot be bridged by binarising the grades.")
    if caps.get("cutoff") == "none" and metric.k is not None:
        return (f"{name} computes {metric.name} over the whole ranking only (trec_eval's set measures), "
                f"not {metric.name}@{metric.k}.")
    for option, value in metric.options:
        allowed = caps.get(option)
        if option == "rel" and allowed == "positive":
            if value <= 0:
                return (f"a relevance level of {value:g} (<= 0) cannot be expressed in {name}: it would count "
                        f"unjudged documents as relevant.")
            continue
        if allowed is None:
            return f"{name} cannot compute {metric.name} with {option}={value}."
        if allowed == "fraction":  # a persistence a library reads from its digits after "0."
            if not repr(float(value)).startswith("0."):
                return f"{name} reads {option} from the digits after '0.', so it cannot take {option}={value}."
            continue
        if allowed == "nonnegative":
            if any(gain < 0 for gain in value.values()):
                return (f"negative gains ({option}={value}) cannot be handed to {name} as grades: a negative grade "
                        f"means \"unjudged\" there, and the ideal DCG would change.")
            continue
        if value not in allowed:
            return (f"{name} computes {metric.name} with {option} in {{{', '.join(map(str, allowed))}}} only, "
                    f"not {option}={value}.")
    return None


def integral_level(value: float | None) -> bool:
    """True for a relevance level a library takes as is: an integer >= 1."""
    return value is not None and float(value).is_integer() and value >= 1
