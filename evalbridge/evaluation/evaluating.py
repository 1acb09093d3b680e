"""The public verb ``evaluate``, and the preparation every verb shares: coerce inputs, check their ids,
cut the run, resolve the metrics, choose the backend (:func:`prepare`), then ask it and apply the
missing-query policy once.

``evaluate`` and :func:`evalbridge.crosscheck` call :func:`prepare`; the Spark engine, whose inputs
are DataFrames, shares its metric step (:func:`evalbridge.metrics.resolution.resolve_metrics`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import filterfalse
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..backends import get_backend, unsupported
from ..errors import InputError, UnsupportedMetricError
from ..metrics.requests import MetricRequest, MetricsArg, metric_requests
from ..metrics.spec import Metric
from ..metrics.resolution import Resolved, resolve_metrics
from ..model.ids import kinds_error, seen_ids, shown_ids
from ..model.data import Qrels, Run, check_level, rows_of, with_str_ids
from ..model.settings import Keywords, Settings, settings_of
from .matching import probe, unmatched
from ..common.progress import Steps, steps
from .cutting import Cut, cut_run
from ..common.wording import option

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .results import Results

__all__ = ["evaluate", "prepare", "Prepared", "as_qrels", "as_run", "check_compatible", "check_supported",
           "fill_missing", "empty_notes", "evaluate_each", "backend_for",
           "without_relevant", "drop_queries"]


def as_qrels(obj: Any, *, copy: bool = True, prefer_columns: bool = False, ids: str | None = None) -> Qrels:
    """``obj`` as :class:`Qrels`: a Qrels, a dict of dicts, or anything the format registry reads
    (:func:`evalbridge.io.read_qrels`, with ``prefer_columns``). ``copy=False``: a dict of dicts is wrapped,
    not copied (for use within one call). An empty mapping is accepted (an evaluation over nothing,
    which its provenance says). ``ids="str"``: the read policy (:class:`~evalbridge.model.settings.Settings`),
    given to the reader, or applied to qrels already read (:func:`~evalbridge.model.data.with_str_ids`)."""
    if isinstance(obj, Qrels):
        return obj if ids is None else with_str_ids(obj)
    if isinstance(obj, Mapping) and not isinstance(obj, Run):
        qrels = Qrels(obj, copy=copy, allow_empty=True)
        return qrels if ids is None else with_str_ids(qrels)
    from ..io import read_qrels

    return read_qrels(obj, prefer_columns=prefer_columns, **({} if ids is None else {"ids": ids}))


def as_run(obj: Any, *, copy: bool = True, ids: str | None = None, duplicates: str = "error",
           stacklevel: int = 1) -> Run:
    """``obj`` as :class:`Run`: a Run, a dict of dicts, or anything the format registry reads
    (:func:`evalbridge.io.read_run`). ``copy=False``: a dict of dicts is wrapped, not copied. An empty
    mapping is accepted: a run that retrieved nothing, every qrels query missing from it. ``ids``,
    ``duplicates``: the read policies (:class:`~evalbridge.model.settings.Settings`), given to the reader of an
    input the registry reads (a mapping holds each document once: ``duplicates`` has nothing to do there).
    Whole-number values rising in every query of a mapping are warned about, pointing ``stacklevel`` frames up
    (1: the caller; :func:`evalbridge.io.objects.rising_values`)."""
    if isinstance(obj, Run):
        return obj if ids is None else with_str_ids(obj)
    if isinstance(obj, Mapping) and not isinstance(obj, Qrels):
        from ..io.objects import rising_values

        run = Run(obj, copy=copy, allow_empty=True)
        warned = rising_values(obj, stacklevel=stacklevel + 2)
        run = run if warned is None else Run(run, notes=(warned,), copy=False)
        return run if ids is None else with_str_ids(run)
    from ..io import read_run

    policies = {k: v for k, v in (("ids", ids), ("duplicates", duplicates)) if v not in (None, "error")}
    return read_run(obj, **policies)


def _examples(ids: Iterable[str], n: int = 3) -> str:
    ids = list(ids)
    shown = ", ".join(map(repr, ids[:n]))
    return shown + (f" (+{len(ids) - n} more)" if len(ids) > n else "")


def check_compatible(qrels: Qrels, run: Run) -> None:
    """Refuse id sets that cannot be what the user meant: int vs str ids (each side's ids shown), or no query in
    common."""
    for what, qk, rk in (("query", qrels.query_id_kind, run.query_id_kind),
                         ("doc", qrels.doc_id_kind, run.doc_id_kind)):
        if qk and rk and qk != rk:
            raise kinds_error(what, [("the qrels", qk, seen_ids(qrels, what)), ("the run", rk, seen_ids(run, what))],
                              fix=f"give both the same id type, e.g. convert every {what} id with str(), or read "
                                  f"both with {option('ids', 'str')}.")
    if len(qrels) and len(run) and not any(qid in run for qid in qrels):  # empty inputs: see empty_notes
        raise InputError(
            f"no query id is in both the qrels ({_examples(qrels)}) and the run ({_examples(run)}).",
            fix="check that both files describe the same topics, with the same id spelling.")


def check_supported(backend: str, metrics: Iterable[Metric], qrels: Qrels, conventions: Settings) -> None:
    """Refuse, in one error naming every reason, the metrics backend ``backend`` cannot compute exactly
    on these qrels under these conventions (see :func:`evalbridge.backends.unsupported`)."""
    declared = get_backend(backend)
    reasons = {m: r for m in metrics if (r := unsupported(declared, m, qrels, conventions=conventions)) is not None}
    if reasons:
        lines = "; ".join(f"{m}: {r.rstrip('.')}" for m, r in reasons.items())
        raise UnsupportedMetricError(f"backend {backend!r} cannot compute {lines}. "
                                     f"Fix: use backend='reference', or run `evalbridge metrics` for who supports what.")


def empty_notes(qrels: Qrels, run: Run, policy: str) -> tuple[str, ...]:
    """What the provenance says of an evaluation over an empty input (nothing otherwise)."""
    if not len(qrels):
        return ("the qrels hold no query: nothing was evaluated, every mean is NaN",)
    if not len(run):
        return ("the run holds no query: every qrels query is missing from it and "
                + ("scores 0" if policy == "zero" else "is left out, so every mean is NaN"),)
    return ()


def fill_missing(values: dict[Metric, dict[str, float]], qrels: Qrels, policy: str) -> None:
    """Apply the missing-query policy in place: under ``zero`` every qrels query absent from the values is
    scored as a query that retrieved nothing (trec_eval ``-c``): 0 for every metric of the ranking, and its
    judgements' own count for ``NumRel`` (R, as trec_eval prints ``num_rel``), by the reference functions."""
    if policy != "zero":
        return
    order = list(qrels)
    seen: list[str] | None = None  # keys found equal to ``order``: others with the same id objects compare by identity
    empty: dict[str, dict[Metric, float]] = {}
    for metric, per_query in values.items():
        keys = list(per_query)
        if keys == seen or (len(keys) == len(order) and keys == order):  # nothing to fill or reorder
            seen = keys
            continue
        values[metric] = {q: per_query[q] if q in per_query else _nothing_retrieved(metric, qrels, q, empty)
                          for q in order}


def _nothing_retrieved(metric: Metric, qrels: Qrels, qid: str, cache: dict[str, dict[Metric, float]]) -> float:
    """``metric`` of query ``qid`` when nothing was retrieved (:func:`evalbridge.metrics.reference.nothing_retrieved`)."""
    from ..metrics.reference import nothing_retrieved

    per_metric = cache.setdefault(qid, {})
    if metric not in per_metric:
        per_metric[metric] = nothing_retrieved(metric.name, metric.arguments, metric.inputs, list(qrels[qid].values()))
    return per_metric[metric]


@dataclass(frozen=True)
class Prepared:
    """One evaluation ready for a backend (:func:`prepare`).

    Attributes:
        qrels: the judgements, as :class:`Qrels`.
        run: the run as the metrics see it (``depth`` and ``judged_only`` applied).
        cut: what was removed from the run to get it (:class:`Cut`).
        resolved: the metrics as computed, with the relevance level and top grade
            (:class:`~evalbridge.metrics.resolution.Resolved`).
        backend: the backend that computes them (``auto`` decided: ``reference`` or ``fast``).
    """

    qrels: Qrels
    run: Run
    cut: Cut
    resolved: Resolved
    backend: str


def backend_for(settings: Settings, rows: int) -> str:
    """The backend that evaluates a run of ``rows`` rows (after the cut) under ``settings``: its ``backend``, with
    ``auto`` decided by :func:`evalbridge.backends.auto.choose_rows` (the reference below its threshold or under
    ``ties="average"``, else ``fast``). :func:`prepare` and the diagnosis's kernel path decide it here alone.

    Example:
        >>> backend_for(Settings(), 10), backend_for(Settings(), 10**6), backend_for(Settings(backend="ranx"), 10**6)
        ('reference', 'fast', 'ranx')
    """
    if settings.backend != "auto":
        return settings.backend
    from ..backends.auto import choose_rows

    return choose_rows(rows, ties=settings.ties)


def prepare(qrels: Any, run: Any, requests: tuple[MetricRequest, ...], settings: Settings) -> Prepared:
    """The preparation every verb that evaluates in memory shares, in one order: coerce both inputs
    (the rows wrapped, not copied: nothing built from them outlives the verb's call; files and tables read
    by the format registry, large ones into columns, the qrels too when the run is read into columns), check
    their ids, cut the run (:func:`cut_run`), decide ``auto`` (:func:`backend_for`, from the cut run's rows), resolve the metrics (:func:`~evalbridge.metrics.resolution.resolve_metrics`) and
    refuse those the backend cannot compute exactly (:func:`check_supported`), all under ``settings``
    (its read policies given to the readers).

    Example:
        >>> from evalbridge.metrics.requests import metric_requests
        >>> ready = prepare({"q": {"a": 2}}, {"q": {"a": 0.5, "b": 0.1}}, metric_requests("P@1"),
        ...                 Settings(min_relevance=2, depth=1))
        >>> ready.backend, [str(m) for m in ready.resolved.metrics], ready.cut.beyond_depth
        ('reference', ['P(rel=2)@1'], 1)
    """
    if not isinstance(run, Mapping):  # a path: not one holding its own judgements (a RAG log...)
        from ..io.registry import check_not_beside_qrels

        check_not_beside_qrels(run)
    qrels = as_qrels(qrels, copy=False, prefer_columns=_read_into_columns(run), ids=settings.ids)
    run = as_run(run, copy=False, ids=settings.ids, duplicates=settings.duplicates, stacklevel=4)
    check_compatible(qrels, run)
    cut = cut_run(qrels, run, settings)
    backend = backend_for(settings, cut.run.n_rows)
    resolved = resolve_metrics(qrels, requests, min_relevance=settings.min_relevance)
    check_supported(backend, resolved.metrics, qrels, settings)
    return Prepared(qrels, cut.run, cut, resolved, backend)


def without_relevant(qrels: Qrels, level: float, policy: str = "zero") -> tuple[str, ...]:
    """The qrels queries with no judgement at or above ``level``, in qrels order (the ``no_relevant`` policy's
    queries); with ``policy="error"``, an InputError naming them when there is one."""
    table = qrels.columnar
    if table is None:
        found = tuple(q for q, docs in rows_of(qrels).items() if not docs or max(docs.values()) < level)
    else:
        import numpy as np

        relevant = np.bincount(table.codes()[table.values >= level], minlength=len(table.query_ids))
        found = tuple(table.query_ids[i] for i in np.flatnonzero(relevant == 0).tolist())
    if found and policy == "error":
        raise InputError(
            f"{len(found)} of {len(qrels)} qrels quer{'y has' if len(found) == 1 else 'ies have'} no judgement at or "
            f"above the relevance level {level:g} ({_examples(found)}), and no_relevant is 'error'.",
            fix=f"judge a relevant document for each, or {option('no_relevant', 'drop')} to leave them out of the "
                f"means ({option('no_relevant', 'zero')}: score them 0).")
    return found


def drop_queries(values: dict[Metric, dict[str, float]], queries: Iterable[str]) -> None:
    """Leave ``queries`` out of every metric's values, in place (the ``no_relevant="drop"`` policy)."""
    gone = set(queries)
    if gone:
        for metric, per_query in values.items():
            values[metric] = {q: v for q, v in per_query.items() if q not in gone}


def evaluate(qrels: Any, run: Any, metrics: MetricsArg, *, settings: Settings | None = None, progress: bool = False,
             slices: Any = None, **keywords: Unpack[Keywords]) -> Results:
    """Evaluate a run against relevance judgements.

    Args:
        qrels: :class:`Qrels`, ``{query_id: {doc_id: grade}}`` or any input
            :func:`evalbridge.io.read_qrels` reads (DataFrame, file path, ranx...).
        run: :class:`Run`, ``{query_id: {doc_id: score}}`` or any input ``read_run`` reads.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``), or a
            mapping label -> spec (``{"precision@5": "P@5", "ndcg": "nDCG(gain=exp)@10"}``): the results,
            reports and JSON are keyed by each label, else by the spelling asked
            (:mod:`evalbridge.metrics.requests`). ``"official"`` (alone or in a list), with qrels of a dataset
            (``"irds:<id>"``), takes the measures ir_datasets lists as its official ones, and the provenance's
            notes say which.
        settings: everything that decides a number (:class:`~evalbridge.model.settings.Settings`: backend,
            min_relevance, ties, score_precision, missing_queries, judged_only, depth, no_relevant and the read
            policies ids and duplicates), whole; default: every setting's default.
        **keywords: the same settings as keywords (``ties="docid_asc"``, ``depth=100``), over ``settings``.
            ``backend="spark"`` (or Spark DataFrames given) evaluates on Spark by
            :func:`evalbridge.spark.evaluate`. Large TREC files and tables are read into columns, which
            ``auto`` and ``fast`` evaluate as they are. A qrels query absent from the run is counted in the
            provenance whatever ``missing_queries`` says; qrels with no query give a result with no query
            (means NaN), and the provenance says so.
        slices: per-slice means, counts and bootstrap intervals in :attr:`Results.slices`: a mapping query id ->
            label(s), the name of a field the RAG log kept (read with ``slice=FIELD``), or a pair (query table,
            column) (:mod:`evalbridge.evaluation.slices`). Numbers the run logged per question (``latency_ms``,
            cost) are summarised in :attr:`Results.numbers` in any case.
        progress: show a progress bar on stderr (reading, computing, assembling) when it is a
            terminal; never drawn on a pipe, a file or in a notebook (see :mod:`evalbridge.common.progress`).

    Returns:
        :class:`~evalbridge.evaluation.results.Results`, whatever was asked.

    Example:
        >>> res = evaluate({"q1": {"d1": 1, "d2": 1}}, {"q1": {"d1": 0.9, "d3": 0.5}}, ["P@2", "mrr"])
        >>> res["P@2"], res["RR"]
        (0.5, 1.0)
    """
    chosen = settings_of(settings, keywords)
    with steps(3, enabled=progress) as bar:
        bar.step("reading the qrels and the run")
        results = _evaluate(qrels, run, metrics, bar, chosen)
    if slices is None:
        return results
    from dataclasses import replace

    from .slices import slice_labels, slice_table

    labels = slice_labels(slices, [run] if isinstance(run, Run) else [])
    name = run.name if isinstance(run, Run) and run.name else "run"
    return replace(results, slices=slice_table({name: {r.label: results.values[r.metric] for r in results.requests}},
                                               labels))


def _evaluate(qrels: Any, run: Any, metrics: MetricsArg, bar: Steps, settings: Settings) -> Results:
    from ..io.fields import scoring_notes
    from .results import Provenance, Results, summarise_numbers

    from ..io.datasets import with_official

    metrics, official = with_official(metrics, qrels)  # "official": the measures of the qrels' dataset
    requests = metric_requests(metrics)
    if settings.backend == "spark" or _is_spark_frame(qrels) or _is_spark_frame(run):
        return _evaluate_on_spark(qrels, run, requests, settings)
    ready = prepare(qrels, run, requests, settings)
    qrels, run, cut, resolved, backend = ready.qrels, ready.run, ready.cut, ready.resolved, ready.backend
    wanted = list(resolved.metrics)
    unjudged = without_relevant(qrels, resolved.level, settings.no_relevant)
    chosen = get_backend(backend)
    bar.step(f"computing {len(wanted)} metric{'s' if len(wanted) > 1 else ''} with {backend}")
    values, bridges, judged = _compute(chosen, qrels, run, wanted, settings)

    bar.step("assembling the results")
    warned = _warn_unmatched(qrels, run, judged, resolved.level)
    missing = tuple(filterfalse(run.keys().__contains__, qrels))
    fill_missing(values, qrels, settings.missing_queries)
    if settings.no_relevant == "drop":
        drop_queries(values, unjudged)
    provenance = Provenance(
        backend=backend, backend_version=chosen.version(), settings=settings, relevance_level=resolved.level,
        queries_evaluated=len(values[wanted[0]]), missing_from_run=missing,
        ignored_run_only=tuple(filterfalse(qrels.keys().__contains__, run)), bridges=tuple(bridges),
        evalbridge_version=__version__, removed_beyond_depth=cut.beyond_depth, removed_unjudged=cut.unjudged,
        notes=(*official, *empty_notes(qrels, run, settings.missing_queries), *scoring_notes(run.notes),
               *_relevant_only_note(qrels, judged, resolved.level)), warnings=warned,
        without_relevant=unjudged)
    return Results(metrics=resolved.metrics, values=values, provenance=provenance, max_grade=resolved.max_grade,
                   requests=resolved.requests, numbers=summarise_numbers(run.logged))


#: Backends that compute the matching probe (``Judged@k``) in the same pass as the metrics asked.
_PROBED = ("reference", "fast")


def _compute(chosen: Any, qrels: Qrels, run: Run, wanted: list[Metric], conventions: Settings
             ) -> tuple[dict[Metric, dict[str, float]], list[str], tuple[Metric, dict[str, float]]]:
    """The backend's values of ``wanted`` and its bridges, and the probe of :mod:`evalbridge.evaluation.matching` with its
    per-query values: one more metric of the same pass for the reference and the engine (hits already placed),
    a pass of ``auto``'s choice beside a library backend."""
    judged = probe(wanted)
    asked = judged in wanted
    if chosen.name in _PROBED:
        values, bridges = chosen.compute(qrels, run, wanted if asked else [*wanted, judged], conventions)
        return values, bridges, (judged, values[judged] if asked else values.pop(judged))
    values, bridges = chosen.compute(qrels, run, wanted, conventions)
    if asked:
        return values, bridges, (judged, values[judged])
    apart = get_backend(backend_for(conventions.replace(backend="auto"), run.n_rows)).compute(
        qrels, run, [judged], conventions)[0]
    return values, bridges, (judged, apart[judged])


def _relevant_only_note(qrels: Qrels, judged: tuple[Metric, dict[str, float]], level: float) -> tuple[str, ...]:
    """:data:`~evalbridge.evaluation.matching.RELEVANT_ONLY` when the qrels list only relevant documents and some
    query found none of them (said once, where a warning would name the queries)."""
    from .matching import RELEVANT_ONLY, relevant_only

    missed = sum(v == 0 for v in judged[1].values())
    return (RELEVANT_ONLY,) if 0 < missed < len(judged[1]) and relevant_only(qrels, level) else ()


def _warn_unmatched(qrels: Qrels, run: Run, judged: tuple[Metric, dict[str, float]], level: float) -> tuple[str, ...]:
    """Warn (:class:`~evalbridge.errors.EvalbridgeWarning`) when retrieved and judged ids do not meet; the text
    goes to the provenance too."""
    text = unmatched(qrels, run, judged[1], judged[0], level=level)
    if text is None:
        return ()
    from ..errors import warn

    warn(text)
    return (text,)


def _read_into_columns(run: Any) -> bool:
    """:func:`evalbridge.io.read_into_columns` of a run, without importing the registry for data in memory."""
    if isinstance(run, Mapping) and not isinstance(run, Run):
        return False
    from ..io import read_into_columns

    return read_into_columns(run)


# --------------------------------------------------------------------------- Spark DataFrames
# Kept apart: everything above works on data in memory; Spark DataFrames go to evalbridge.spark whole.

def _is_spark_frame(obj: Any) -> bool:
    """True for a Spark DataFrame (classic or Spark Connect), told by its class's module: pyspark is not imported."""
    return type(obj).__module__.startswith("pyspark.sql")


def _evaluate_on_spark(qrels: Any, run: Any, requests: tuple[MetricRequest, ...], settings: Settings) -> Results:
    """:func:`evalbridge.spark.evaluate`'s Results, its cached table released; an error naming
    ``evalbridge.spark.evaluate`` when the per-query table is too large to collect."""
    from . import spark

    evaluation = spark.evaluate(qrels, run, requests, settings=settings)
    try:
        return evaluation.require_results()
    finally:
        evaluation.unpersist()


def evaluate_each(qrels: Any, runs: Mapping[str, Any], metrics: MetricsArg, *,
                  settings: Settings | None = None) -> dict[str, Results]:
    """Each run of ``runs`` (system name -> anything :func:`evaluate` reads) evaluated against ``qrels`` with the
    same ``metrics`` and ``settings``; a value already evaluated (:class:`~evalbridge.Results`) is kept as it is.
    The one way every verb that takes runs or results (compare, power, gates) turns runs into results."""
    from .results import Results

    if not isinstance(runs, Mapping):
        raise InputError(f"runs must be a mapping of system names to runs; got {type(runs).__name__}.",
                         fix="pass e.g. {'bm25': run_a, 'dense': run_b}.")
    return {name: run if isinstance(run, Results) else evaluate(qrels, run, metrics, settings=settings)
            for name, run in runs.items()}
