"""Cross-check: every metric, per query, on the reference and on each library, every difference explained.

(The module is ``cross_check``, not ``crosscheck``: a submodule named like the exported function
would replace ``evalbridge.crosscheck`` by the module as soon as anyone imported it.)

For each backend the metrics it supports are computed the way the library does it on its
own (its tie order, score precision, missing-query policy, grade handling), unless
``canonicalise=True``, when evalbridge's exact bridges make every backend follow the
requested conventions and all must agree. Each value that differs from the reference by
more than ``atol`` gets a cause only when the cause is **verified**: the reference, re-run
for that query with the backend's convention (or a combination of them), reproduces the
backend's value. Causes:

* ``ties broken differently``: the reference ranks tied documents as the backend does
  (by its tie rule, or in the order its ``native_ranking`` gives: ranx's ``Run`` order);
* ``float32 score collision``: the reference compares scores as C floats;
* ``float grade truncation``: the reference sees grades truncated to integers;
* ``missing-query policy``: the backend drops (or zero-fills) a query the reference does not;
* ``relevance threshold applied to nDCG``: the reference computes ``nDCG(rel=level)``;
* ``known library fault``: a fault the backend declares in its own module (``known_faults``:
  :class:`~evalbridge.backends.base.Fault` values), emulated in the reference, e.g. ranx's bpref: NaN
  for a query without a judged non-relevant document, 0 for every query after one without a relevant
  document in its batch, negative grades counted as judged non-relevant.

An explained difference in a query with tied scores also says how much of it is *tie luck*: with
``E`` the expected value over every order of each tie group (the reference under
``ties="average"``), once under the requested conventions and once under the verified setting
that reproduces the backend, the tie luck is ``(value - E_backend) - (reference - E_requested)``;
the rest, ``E_backend - E_requested``, is what the other causes change in expectation. Under
``ties="average"`` the reference *is* ``E_requested``, so whatever order a library picks is luck.

Anything else is ``unexplained``; a difference whose possible causes did not reproduce it is
``suspected: ...`` and counts as unexplained too.

The reference column is what :func:`evalbridge.evaluate` gives by default (``backend="auto"``:
the readable reference, or for large inputs the fast backend, which is tested per query against
it; :attr:`CrossCheck.reference_backend` names the one used). Every explanation re-runs the
readable reference itself.

Example:
    >>> import evalbridge as eb
    >>> qrels = {"q1": {"a": 1}}
    >>> run = {"q1": {"a": 0.5, "b": 0.5, "c": 0.5}}
    >>> check = eb.crosscheck(qrels, run, ["RR"], backends=["pytrec_eval"], ties="input")
    >>> check.differences[["backend", "reference", "value", "cause"]].to_dict("records")[0]["cause"][:23]
    'ties broken differently'
    >>> check.ok
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from itertools import combinations, filterfalse, repeat
from typing import TYPE_CHECKING, Any, Callable

from .backends import CROSSCHECK_BACKENDS
from .ranking import float32_collisions, fractional_grades, has_ties
from .errors import BackendUnavailableError, EvalbridgeError, InputError
from .metrics import tie_aware
from .metrics.requests import MetricRequest, MetricsArg, find_request, metric_requests
from .metrics.spec import Metric
from .evaluation import drop_queries, fill_missing, prepare, without_relevant
from .model import Qrels, Run
from .settings import Keywords, Settings, settings_of
from .wording import option
from .progress import Steps, steps

if TYPE_CHECKING:
    from typing_extensions import Unpack

    import pandas as pd

    from .backends.base import Backend, Fault

__all__ = ["crosscheck", "CrossCheck", "COLUMNS"]

COLUMNS = ("metric", "query_id", "backend", "reference", "value", "cause")


@dataclass(frozen=True)
class _Setting:
    """How the reference is re-run to emulate a backend for one query (``metric`` None: for
    several metrics at once)."""

    conventions: Settings
    metric: Metric | None
    truncate: bool = False
    native_order: bool = False
    drop_empty: bool = False
    zero_empty: bool = False
    faults: tuple[Fault, ...] = ()


@dataclass(frozen=True)
class _Deviation:
    """One way a backend differs from the requested conventions, and how to emulate it."""

    name: str
    cause: str
    apply: Callable[[_Setting], _Setting]


def _values(qrels: Qrels, run: Run, qids: list[str], setting: _Setting, metrics: list[Metric],
            native_run: Run | None) -> dict[Metric, dict[str, float | None]]:
    """The reference's value of each of ``qids`` for each of ``metrics`` under ``setting`` (its own
    metric aside; None: the query gets no value), in one call: each query is ranked once.

    ``native_run`` holds the queries' documents in the library's own order (see
    ``native_ranking``), used when ``setting.native_order`` is set.
    """
    from .backends import reference

    fixed: dict[str, float | None] = {}
    judged: dict[str, dict[str, float]] = {}
    ranked: dict[str, dict[str, float]] = {}
    for qid in qids:
        grades = qrels.get(qid)
        if grades is None or (not grades and setting.drop_empty):
            fixed[qid] = None
            continue
        if not grades and setting.zero_empty:
            fixed[qid] = 0.0
            continue
        scores = run.get(qid)
        if scores is None:
            fixed[qid] = 0.0 if setting.conventions.missing_queries == "zero" else None
            continue
        judged[qid] = {d: int(g) for d, g in grades.items()} if setting.truncate else dict(grades)
        for fault in setting.faults:
            if fault.qrels is not None:
                judged[qid] = fault.qrels(judged[qid])
        # native_order is only offered for a query with documents, so it is in native_run
        ranked[qid] = dict(native_run[qid] if setting.native_order and native_run is not None else scores)
    values = reference.compute(Qrels(judged, copy=False), Run(ranked, copy=False), metrics,
                               setting.conventions)[0] if judged else {m: {} for m in metrics}
    for fault in setting.faults:  # faults are offered for one family at a time, so every metric here has them
        emulate = fault.value
        if emulate is not None:
            for metric in metrics:
                values[metric] = {q: emulate(v, qrels, q, run, metric, setting.truncate)
                                  for q, v in values[metric].items()}
    return {m: {**fixed, **values[m]} for m in metrics}


def _same(a: float | None, b: float | None, atol: float) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= atol


def _compare(ref: dict[str, float], got: dict[str, float],
             atol: float) -> tuple[int, list[tuple[str, float | None, float | None]]]:
    """(queries compared, the ``(query id, reference, value)`` that are not the same), screened
    in one vectorised pass: only the values it flags (NaN or missing on a side included) go
    through :func:`_same`."""
    import numpy as np

    queries = [*ref, *filterfalse(ref.__contains__, got)]
    a, b = (np.fromiter(map(side.get, queries, repeat(math.nan)), dtype=np.float64, count=len(queries))
            for side in (ref, got))
    with np.errstate(invalid="ignore"):
        flagged = np.flatnonzero(~(np.abs(a - b) <= atol)).tolist()
    found = [(q, ref.get(q), got.get(q)) for q in map(queries.__getitem__, flagged)]
    return len(queries), [(q, x, y) for q, x, y in found if not _same(x, y, atol)]


def _native_metric(backend: Backend, metric: Metric, level: float, requested: Settings) -> Metric:
    """The metric as the library computes it natively (ranx: the level also filters nDCG and DCG)."""
    native = backend.native_conventions(metric, requested)
    if native.level_scope == "all" and "gain" in metric.info.options and metric.get("rel") is None and level != 1:
        return metric.replace(rel=level)
    return metric


def _deviations(backend: Backend, name: str, metric: Metric, asked: Metric, qrels: Qrels, run: Run, qid: str,
                requested: Settings, level: float) -> list[_Deviation]:
    """The backend's conventions that differ from the requested ones and could matter for this query."""
    native = backend.native_conventions(asked, requested)
    grades, scores = qrels.get(qid, {}), run.get(qid)
    found: list[_Deviation] = []
    # a library's zero fill is 0 for every metric, where evalbridge scores a query that retrieved nothing (NumRel: R)
    if scores is None and (native.missing_queries != requested.missing_queries or native.missing_queries == "zero"):
        verb = "drops" if native.missing_queries == "drop" else "scores 0 (every metric, NumRel too)"
        found.append(_Deviation("missing", f"missing-query policy: {name} {verb} queries absent from the run",
                                lambda s: replace(s, conventions=replace(s.conventions,
                                                                         missing_queries=native.missing_queries))))
    if not grades and native.empty_qrels == "drop":
        found.append(_Deviation("empty", f"missing-query policy: {name} drops queries with no judgement",
                                lambda s: replace(s, drop_empty=True)))
    if not grades and native.empty_qrels == "zero":
        found.append(_Deviation("empty", f"missing-query policy: {name} gives queries with no judgement 0 "
                                         f"without evaluating them (NumRet too)",
                                lambda s: replace(s, zero_empty=True)))
    if scores:
        if native.score_precision != requested.score_precision and float32_collisions(scores):
            found.append(_Deviation(
                "float32", f"float32 score collision: {name} stores scores as C floats, so scores that differ "
                           f"only beyond float32 precision tie",
                lambda s: replace(s, conventions=replace(s.conventions, score_precision=native.score_precision))))
        precision = "float32" if "float32" in (native.score_precision, requested.score_precision) else "float64"
        if has_ties(scores, score_precision=precision) and (native.ties != requested.ties or native.ties == "input"):
            reference = "averages over every order" if requested.ties == "average" else requested.ties
            if backend.native_ranking is not None:
                order = f" ({native.tie_order})" if native.tie_order else ""
                found.append(_Deviation(
                    "ties", f"ties broken differently: {name} keeps its own order of tied scores{order}, the "
                            f"reference {reference}",
                    lambda s: replace(s, native_order=True, conventions=replace(s.conventions, ties="input"))))
            else:
                found.append(_Deviation(
                    "ties", f"ties broken differently: {name} orders tied scores {native.ties}, the reference "
                            f"{reference}",
                    lambda s: replace(s, conventions=replace(s.conventions, ties=native.ties))))
    if native.grades == "truncate" and fractional_grades(grades):
        found.append(_Deviation("truncation", f"float grade truncation: {name} truncates float grades to integers",
                                lambda s: replace(s, truncate=True)))
    if metric != asked:
        found.append(_Deviation(
            "level", f"relevance threshold applied to nDCG: {name}'s level -l{level:g} also zeroes grades below "
                     f"{level:g} in {asked.name} (trec_eval ignores the level there)",
            lambda s: replace(s, metric=metric)))
    truncate = native.grades == "truncate"
    for fault in backend.known_faults.get(asked.name, ()):
        if fault.applies(qrels, qid, metric, truncate):
            found.append(_Deviation(fault.name, fault.cause, _with_fault(fault)))
    return found


def _with_fault(fault: Fault) -> Callable[[_Setting], _Setting]:
    """A setting's emulation with the library's known fault ``fault`` added."""
    return lambda s: replace(s, faults=(*s.faults, fault))


def _combinations(deviations: list[_Deviation]) -> Iterator[tuple[_Deviation, ...]]:
    """Every non-empty combination of ``deviations``, smallest first."""
    for size in range(1, len(deviations) + 1):
        yield from combinations(deviations, size)


def _explain(backend: Backend, name: str, natives: dict[Metric, Metric], qrels: Qrels, run: Run,
             differing: dict[Metric, list[tuple[str, float | None, float | None]]], requested: Settings,
             level: float, atol: float, native_run: Run | None) -> dict[Metric, list[tuple[str, bool]]]:
    """(cause, verified) for each differing ``(query id, reference, value)`` of one backend, by metric.

    Each value tries the combinations of its possible causes, smallest first, until the reference
    reproduces the backend's value; every round re-runs the reference once per distinct setting,
    for all the queries and metrics that try it.
    """
    items = [(asked, qid, value) for asked, found in differing.items() for qid, _, value in found]
    found = [_deviations(backend, name, natives[asked], asked, qrels, run, qid, requested, level)
             for asked, qid, _ in items]
    tries = list(map(_combinations, found))
    causes: list[tuple[str, bool] | None] = [None] * len(items)
    verified: dict[int, _Setting] = {}  # item -> the setting that reproduced the backend's value
    pending = list(range(len(items)))
    while pending:
        rounds: dict[_Setting, list[tuple[int, Metric, tuple[_Deviation, ...]]]] = {}
        for i in pending:
            subset = next(tries[i], None)
            if subset is None:
                names = "; ".join(d.name for d in found[i])
                causes[i] = (f"suspected (not reproduced by the reference): {names}", False) if names \
                    else ("unexplained", False)
                continue
            setting = _Setting(requested, items[i][0])
            for deviation in subset:
                setting = deviation.apply(setting)
            metric = items[i][0] if setting.metric is None else setting.metric  # deviations keep a metric
            rounds.setdefault(replace(setting, metric=None), []).append((i, metric, subset))
        pending = []
        for setting, members in rounds.items():
            got = _values(qrels, run, list(dict.fromkeys(items[i][1] for i, _, _ in members)), setting,
                          list(dict.fromkeys(metric for _, metric, _ in members)), native_run)
            for i, metric, subset in members:
                _, qid, value = items[i]
                if _same(got[metric][qid], value, atol):
                    causes[i] = ("; ".join(d.cause for d in subset), True)
                    verified[i] = replace(setting, metric=metric)
                else:
                    pending.append(i)
    references = [ref for found in differing.values() for _, ref, _ in found]
    for i, luck in _tie_luck(qrels, run, items, references, verified, requested, name, atol).items():
        cause = causes[i]
        if cause is not None:  # set for every verified item
            causes[i] = (f"{cause[0]}; {luck}", True)
    out: dict[Metric, list[tuple[str, bool]]] = {}
    for (asked, _, _), cause in zip(items, causes):  # every cause is set once nothing is pending
        out.setdefault(asked, []).append(cause if cause is not None else ("unexplained", False))
    return out


def _tie_luck(qrels: Qrels, run: Run, items: list[tuple[Metric, str, float | None]], references: list[float | None],
              verified: dict[int, _Setting], requested: Settings, name: str, atol: float) -> dict[int, str]:
    """For each verified item of a query with tied scores, how much of its difference is tie luck (when
    more than ``atol``).

    ``E_requested`` and ``E_backend`` are the reference under ``ties="average"``, with the requested
    conventions and with the verified setting's other conventions; the tie luck is
    ``(value - E_backend) - (reference - E_requested)``. Metrics without a tie-aware formula are skipped.
    """
    wanted: dict[_Setting, list[tuple[int, Metric, str]]] = {}
    for i, setting in verified.items():
        asked, qid, _ = items[i]
        precision = "float32" if "float32" in (setting.conventions.score_precision, requested.score_precision) \
            else "float64"
        if tie_aware.unsupported(asked) is not None or setting.metric is None or \
                not has_ties(run.get(qid) or {}, score_precision=precision):
            continue
        averaged = replace(setting, native_order=False, conventions=replace(setting.conventions, ties="average"))
        for role, chosen in (("backend", averaged), ("requested", _Setting(replace(requested, ties="average"), asked))):
            metric = asked if chosen.metric is None else chosen.metric  # both settings have one (checked above)
            wanted.setdefault(replace(chosen, metric=None), []).append((i, metric, role))
    expected: dict[int, dict[str, float | None]] = {}
    for setting, members in wanted.items():
        got = _values(qrels, run, list(dict.fromkeys(items[i][1] for i, _, _ in members)), setting,
                      list(dict.fromkeys(metric for _, metric, _ in members)), None)
        for i, metric, role in members:
            expected.setdefault(i, {})[role] = got[metric][items[i][1]]
    out: dict[int, str] = {}
    for i, found in expected.items():
        value, reference = items[i][2], references[i]
        mean_backend, mean_requested = found["backend"], found["requested"]
        if value is None or reference is None or mean_backend is None or mean_requested is None:
            continue
        luck = (value - mean_backend) - (reference - mean_requested)
        difference = value - reference
        if abs(luck) <= atol:
            continue
        share = "all" if abs(luck - difference) <= atol else f"{luck:+.4g}"
        text = (f"tie luck: {share} of the {difference:+.4g} difference (expected value over every order of the "
                f"tied documents: {mean_requested:.4g}")
        if abs(mean_backend - mean_requested) > atol:
            text += f", {mean_backend:.4g} with {name}'s other conventions"
        out[i] = text + ")"
    return out


@dataclass(frozen=True, eq=False)
class CrossCheck:
    """The report of :func:`crosscheck`: an immutable value that pickles and copies, compares equal to
    another check with the same tables and settings, and shows itself as HTML in Jupyter.

    Attributes:
        differences: DataFrame (``metric, query_id, backend, reference, value, cause``), one row
            per value that differs from the reference by more than ``atol``; ``value`` or
            ``reference`` is NaN when that side has no value for the query.
        unexplained: the rows of ``differences`` whose cause was not verified.
        agreement: DataFrame ``backend, metric, queries, agree, explained, unexplained``.
        unsupported: ``{(backend, metric): reason}`` for pairs that were not computed.
        bridges: backend -> the bridges applied before the library saw the data.
        values: backend (and ``reference``) -> metric -> query id -> value.
        canonicalised, atol, settings: how the check was run.
        reference_backend: what computed the reference column (``reference`` or ``fast``).
        names: each metric asked: its label, the spelling asked and the metric as checked (the
            ``metric`` column of the tables); :meth:`query` finds a metric by any of them.
    """

    differences: pd.DataFrame
    unexplained: pd.DataFrame
    agreement: pd.DataFrame
    unsupported: dict[tuple[str, str], str]
    bridges: dict[str, tuple[str, ...]]
    values: dict[str, dict[Metric, dict[str, float]]] = field(repr=False)
    canonicalised: bool = False
    atol: float = 1e-9
    settings: Settings = Settings()
    reference_backend: str = "reference"
    names: tuple[MetricRequest, ...] = ()

    def query(self, key: str | Metric, *, backend: str = "reference") -> dict[str, float]:
        """query id -> ``backend``'s value of the metric ``key`` names (its label, the spelling asked, any
        spelling), as a new dict.

        Raises:
            KeyError: no metric asked has that name, or ``backend`` did not compute it.
        """
        found = find_request(self.names, key)
        if found is None:
            raise KeyError(f"{str(key)!r} was not checked; checked: {', '.join(r.label for r in self.names)}")
        return dict(self.values[backend][found.metric])

    @property
    def ok(self) -> bool:
        """True when every difference is explained (or there is none)."""
        return self.unexplained.empty

    def summary_lines(self) -> list[str]:
        """One line per backend and metric: ``ranx nDCG@10: 41/43 agree, 2 explained``."""
        lines = []
        for row in self.agreement.itertuples(index=False):
            text = f"{row.backend} {row.metric}: {row.agree}/{row.queries} agree"
            if row.explained:
                text += f", {row.explained!s} explained"
            if row.unexplained:
                text += f", {row.unexplained!s} UNEXPLAINED"
            lines.append(text)
        lines += [f"{b} {m}: unsupported ({r})" for (b, m), r in self.unsupported.items()]
        return lines

    def to_markdown(self, *, digits: int = 4) -> str:
        """The agreement table, then the differences, as GitHub markdown."""
        from .views.result_tables import crosscheck_markdown

        return crosscheck_markdown(self, digits=digits)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ok, agreement, differences, unsupported, bridges."""
        def records(frame: Any) -> list[dict[str, Any]]:
            return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                    for row in frame.to_dict("records")]

        return {"ok": self.ok, "canonicalised": self.canonicalised, "atol": self.atol,
                "reference_backend": self.reference_backend,
                "agreement": records(self.agreement), "differences": records(self.differences),
                "unsupported": [{"backend": b, "metric": m, "reason": r} for (b, m), r in self.unsupported.items()],
                "bridges": {b: list(n) for b, n in self.bridges.items()}}

    def __str__(self) -> str:
        from .views.result_tables import crosscheck_text

        return crosscheck_text(self)

    def __repr__(self) -> str:
        return (f"CrossCheck(ok={self.ok}, differences={len(self.differences)}, "
                f"unexplained={len(self.unexplained)}, unsupported={len(self.unsupported)})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CrossCheck):
            return NotImplemented
        frames = ("differences", "unexplained", "agreement")
        return (all(getattr(self, f).equals(getattr(other, f)) for f in frames)
                and all(getattr(self, f.name) == getattr(other, f.name) for f in fields(self) if f.name not in frames))

    def __hash__(self) -> int:
        return hash((self.ok, len(self.differences), len(self.unexplained), tuple(self.unsupported), self.canonicalised,
                     self.atol, self.settings, self.reference_backend))

    def _repr_html_(self, *, max_rows: int = 20) -> str:
        """Jupyter's view: verdict, agreement, unsupported pairs, the first differences; settings as a footnote."""
        from .views.result_tables import crosscheck_html

        return crosscheck_html(self, max_rows=max_rows)


#: The backends that may compute a cross-check's reference column: evalbridge's own (the same numbers).
REFERENCE_COLUMN = ("auto", "reference", "fast")


def crosscheck(qrels: Any, run: Any, metrics: MetricsArg, *,
               backends: Sequence[str] = CROSSCHECK_BACKENDS, atol: float = 1e-9, canonicalise: bool = False,
               settings: Settings | None = None, progress: bool = False, **keywords: Unpack[Keywords]) -> CrossCheck:
    """Compare every metric per query between the reference and each backend, explaining each difference.

    Args:
        qrels, run: anything :func:`evalbridge.evaluate` accepts.
        metrics: metric specs in any spelling, or a mapping label -> spec (as :func:`evalbridge.evaluate`);
            :attr:`CrossCheck.names` records each label with the metric as checked.
        backends: backend names to compare with the reference (default
            :data:`evalbridge.backends.CROSSCHECK_BACKENDS`, as on the command line and in configs).
        atol: largest absolute difference still counted as agreement.
        canonicalise: False: each library runs with its own conventions and every
            difference is classified. True: evalbridge's exact bridges are applied first, so
            every backend must agree with the reference (any difference is unexplained).
        settings, **keywords: the reference's settings (:class:`~evalbridge.settings.Settings`, whole or as
            keywords), as in :func:`evalbridge.evaluate`; ``judged_only`` and ``depth`` cut the run once, before
            any backend sees it; ``no_relevant="drop"`` leaves the queries without a relevant judgement out of
            every column. The reference column is computed by ``backend`` (``auto``: ``reference`` or ``fast``);
            a library is compared with it, named in ``backends``. With ``ties="average"`` the reference column
            is each query's expected value over every order of its tied documents; no library can follow
            that (with ``canonicalise=True`` they are listed as unsupported), and on their own each
            differs from it by its tie luck, which the causes quantify.
        progress: show a progress bar on stderr (the reference column, then one step per backend) when it
            is a terminal; never drawn otherwise (see :mod:`evalbridge.progress`).

    Returns:
        :class:`CrossCheck`. Unsupported (backend, metric) pairs are listed, never raised.
    """
    if isinstance(backends, str) or not isinstance(backends, Iterable):
        raise InputError(f"backends must be a list of backend names; got {type(backends).__name__} {backends!r:.60}.",
                         fix="pass e.g. backends=['pytrec_eval', 'ranx'].")
    backends = tuple(backends)
    chosen = settings_of(settings, keywords)
    if chosen.backend not in REFERENCE_COLUMN:
        raise InputError(f"backend {chosen.backend!r} would compute the cross-check's reference column, which is "
                         f"evalbridge's own ({', '.join(map(repr, REFERENCE_COLUMN))}).",
                         fix=f"leave {option('backend', 'auto')} and name {chosen.backend} among the backends "
                             f"compared with it.")
    with steps(1 + len(backends), enabled=progress) as bar:
        bar.step("reference column")
        return _crosscheck(qrels, run, metrics, bar, backends=backends, atol=atol, canonicalise=canonicalise,
                           settings=chosen)


def _crosscheck(qrels: Any, run: Any, metrics: MetricsArg, bar: Steps, *,
                backends: Sequence[str], atol: float, canonicalise: bool, settings: Settings) -> CrossCheck:
    import pandas as pd

    from .backends import get_backend, unsupported

    if not (isinstance(atol, (int, float)) and atol >= 0):
        raise EvalbridgeError(f"atol must be a number >= 0; got {atol!r}.")
    conventions = settings
    ready = prepare(qrels, run, metric_requests(metrics), settings)
    qrels, run, reference_backend = ready.qrels, ready.run, ready.backend
    level, wanted = ready.resolved.level, list(ready.resolved.metrics)
    # no_relevant: "error" refuses here; "drop" leaves the same queries out of every column
    left_out = without_relevant(qrels, level, settings.no_relevant) if settings.no_relevant != "zero" else ()
    ref_values, _ = get_backend(reference_backend).compute(qrels, run, wanted, conventions)
    fill_missing(ref_values, qrels, conventions.missing_queries)
    drop_queries(ref_values, left_out)
    all_values: dict[str, dict[Metric, dict[str, float]]] = {"reference": ref_values}
    rows: list[tuple[str, str, str, float, float, str]] = []
    verified: list[bool] = []
    agreement: list[tuple[str, str, int, int, int, int]] = []
    skipped: dict[tuple[str, str], str] = {}
    bridges: dict[str, tuple[str, ...]] = {}

    for name in backends:
        bar.step(f"cross-checking {name}")
        try:
            backend = get_backend(name)
            backend.version()
        except BackendUnavailableError as error:
            skipped.update({(name, str(m)): str(error) for m in wanted})
            continue
        supported = []
        for metric in wanted:
            # with canonicalise, the library must follow the requested conventions, tie policy included
            reason = unsupported(backend, metric, qrels, conventions=conventions if canonicalise else None)
            if reason is None:
                supported.append(metric)
            else:
                skipped[(name, str(metric))] = reason
        natives = {m: m if canonicalise else _native_metric(backend, m, level, conventions) for m in supported}
        values, notes = _run_backend(backend, qrels, run, natives, conventions, canonicalise, skipped, name)
        bridges[name] = tuple(notes)
        if canonicalise:
            fill_missing(values, qrels, conventions.missing_queries)
        drop_queries(values, left_out)
        all_values[name] = values
        differing: dict[Metric, list[tuple[str, float | None, float | None]]] = {}
        compared: dict[Metric, int] = {}
        for metric in supported:
            if metric not in values:
                continue
            compared[metric], differing[metric] = _compare(ref_values[metric], values[metric], atol)
        explanations = {} if canonicalise else _explain(backend, name, natives, qrels, run, differing, conventions,
                                                        level, atol, _native_order(backend, run, differing))
        for metric, found in differing.items():
            explained = 0
            causes = explanations.get(metric, [("unexplained", False)] * len(found))
            for (qid, a, b), (cause, ok) in zip(found, causes):
                explained += ok
                verified.append(ok)
                rows.append((str(metric), qid, name, math.nan if a is None else a, math.nan if b is None else b,
                             cause))
            agreement.append((name, str(metric), compared[metric], compared[metric] - len(found), explained,
                              len(found) - explained))

    columns = list(zip(*rows)) if rows else [()] * len(COLUMNS)
    differences = pd.DataFrame({name: pd.Series(column, dtype="float64" if name in ("reference", "value") else None)
                                for name, column in zip(COLUMNS, columns)})
    unexplained = differences[[not ok for ok in verified]].reset_index(drop=True) if rows else differences.copy()
    agreement_frame = pd.DataFrame(agreement, columns=["backend", "metric", "queries", "agree", "explained",
                                                       "unexplained"])
    return CrossCheck(differences=differences, unexplained=unexplained, agreement=agreement_frame,
                      unsupported=skipped, bridges=bridges, values=all_values, canonicalised=canonicalise,
                      atol=atol, settings=settings, reference_backend=reference_backend,
                      names=ready.resolved.requests)


def _native_order(backend: Backend, run: Run,
                  differing: dict[Metric, list[tuple[str, float | None, float | None]]]) -> Run | None:
    """The differing queries' documents in the library's own order, ranked in one call (or None)."""
    native_ranking = backend.native_ranking
    queries = dict.fromkeys(qid for found in differing.values() for qid, _, _ in found if run.get(qid))
    if native_ranking is None or not queries:
        return None
    ranked: Run = native_ranking(Run({qid: dict(run[qid]) for qid in queries}, copy=False))
    return ranked


def _run_backend(backend: Backend, qrels: Qrels, run: Run, natives: dict[Metric, Metric], conventions: Settings,
                 canonicalise: bool, skipped: dict[tuple[str, str], str],
                 name: str) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """Backend values keyed by the asked metric; a metric whose call fails is listed as unsupported."""
    def call(batch: dict[Metric, Metric]) -> tuple[dict[Metric, dict[str, float]], list[str]]:
        got, notes = backend.compute(qrels, run, list(dict.fromkeys(batch.values())), conventions,
                                    native=not canonicalise)
        return {asked: got[native] for asked, native in batch.items()}, notes

    if not natives:
        return {}, []
    try:
        return call(natives)
    except Exception:  # noqa: BLE001 - isolate the failing metric, report it, keep the others
        values: dict[Metric, dict[str, float]] = {}
        notes: list[str] = []
        for asked, native in natives.items():
            try:
                got, more = call({asked: native})
            except Exception as error:  # noqa: BLE001
                skipped[(name, str(asked))] = f"{name} failed: {type(error).__name__}: {error}"
                continue
            values.update(got)
            notes += [n for n in more if n not in notes]
        return values, notes
