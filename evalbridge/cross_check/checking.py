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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from itertools import filterfalse, repeat
from typing import TYPE_CHECKING, Any

from ..backends import CROSSCHECK_BACKENDS
from ..errors import BackendUnavailableError, EvalbridgeError, InputError
from .explaining import explain, same as _same
from ..common.json_data import json_ready
from ..metrics.requests import MetricRequest, MetricsArg, find_request, metric_requests
from ..metrics.spec import Metric
from ..evaluation.evaluating import drop_queries, fill_missing, prepare, without_relevant
from ..model.data import Qrels, Run
from ..model.settings import Keywords, Settings, settings_of
from ..common.wording import option
from ..common.progress import Steps, steps

if TYPE_CHECKING:
    from typing_extensions import Unpack

    import pandas as pd

    from ..backends.base import Backend

__all__ = ["crosscheck", "CrossCheck", "COLUMNS"]

COLUMNS = ("metric", "query_id", "backend", "reference", "value", "cause")


def _compare(ref: dict[str, float], got: dict[str, float],
             atol: float) -> tuple[int, list[tuple[str, float | None, float | None]]]:
    """(queries compared, the ``(query id, reference, value)`` that are not the same), screened
    in one vectorised pass: only the values it flags (NaN or missing on a side included) go
    through :func:`~evalbridge.cross_check.explaining.same`."""
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

    def table(self, fmt: str = "terminal", *, digits: int = 4, max_rows: int | None = None) -> str:
        """The agreement per backend and metric, the pairs not computed, the differences (the first ``max_rows``;
        None: all), the settings under them, in an output format that writes tables."""
        from ..views.result_tables import render_crosscheck

        return render_crosscheck(self, fmt, digits=digits, max_rows=max_rows)

    def to_markdown(self, *, digits: int = 4) -> str:
        """:meth:`table` in GitHub Markdown."""
        return self.table("markdown", digits=digits)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (:func:`~evalbridge.common.json_data.json_ready`): ok, agreement, differences, unsupported, bridges."""
        return json_ready({"ok": self.ok, "canonicalised": self.canonicalised, "atol": self.atol,
                           "reference_backend": self.reference_backend,
                           "agreement": self.agreement.to_dict("records"),
                           "differences": self.differences.to_dict("records"),
                           "unsupported": [{"backend": b, "metric": m, "reason": r}
                                           for (b, m), r in self.unsupported.items()],
                           "bridges": self.bridges})

    def __str__(self) -> str:
        return self.table()

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
        """Jupyter's view: :meth:`table` in HTML, the first ``max_rows`` differences."""
        return self.table("html", max_rows=max_rows)


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
        settings, **keywords: the reference's settings (:class:`~evalbridge.model.settings.Settings`, whole or as
            keywords), as in :func:`evalbridge.evaluate`; ``judged_only`` and ``depth`` cut the run once, before
            any backend sees it; ``no_relevant="drop"`` leaves the queries without a relevant judgement out of
            every column. The reference column is computed by ``backend`` (``auto``: ``reference`` or ``fast``);
            a library is compared with it, named in ``backends``. With ``ties="average"`` the reference column
            is each query's expected value over every order of its tied documents; no library can follow
            that (with ``canonicalise=True`` they are listed as unsupported), and on their own each
            differs from it by its tie luck, which the causes quantify.
        progress: show a progress bar on stderr (the reference column, then one step per backend) when it
            is a terminal; never drawn otherwise (see :mod:`evalbridge.common.progress`).

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

    from ..backends import get_backend, unsupported

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
        explanations = {} if canonicalise else explain(backend, name, natives, qrels, run, differing, conventions,
                                                       level, atol)
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
