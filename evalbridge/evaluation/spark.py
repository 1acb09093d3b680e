"""Evaluate Spark DataFrames of qrels and runs with evalbridge's fast backend, on a Spark cluster.

The same metrics, conventions and per-query numbers as :func:`evalbridge.evaluate`, for data that
lives in a data lake (Databricks, EMR, Dataproc, or ``local[*]``)::

    evaluation = evalbridge.spark.evaluate(qrels_df, run_df, ["nDCG@10", "AP"])
    evaluation.means, evaluation.per_query   # exact means; a Spark DataFrame of per-query values

How (``docs/spark.md``): queries are hashed into ``buckets`` (``pmod(xxhash64(query_id), B)``);
the qrels and the run are co-grouped by bucket, and each bucket, a few whole queries, arrives in a
Python worker as two Arrow tables (``cogroup(...).applyInArrow``, Spark >= 4.0), where
:func:`evalbridge.fast.arrow_input.pair_from_arrow` and :func:`evalbridge.fast.evaluate_columns`
compute every metric of every query of the bucket at once. Queries are never grouped one by one
(about 5 ms a group in Spark). The per-query values stay a Spark DataFrame; counts and exact
sums are computed in each bucket, so the means equal the local engine's to the last bit;
:class:`~evalbridge.evaluation.results.Results` is built only when the per-query table is small enough to
collect.

pyspark is imported only inside the functions here; ``import evalbridge.spark`` is cheap.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from .._version import __version__
from ..errors import BackendUnavailableError, EvalbridgeError, InputError, UnsupportedMetricError
from ..metrics.resolution import resolve_metrics
from ..metrics.requests import MetricRequest, MetricsArg, metric_requests
from .matching import SAMPLE, describe, probe
from ..metrics.spec import Metric
from ..model.settings import Keywords, Settings, settings_of
from ..io.spark_tables import INSTALL_HINT, MIN_PYSPARK, pyspark_sql, quiet_pandas_warning
from .spark_buckets import (EVALUATED, MISSING, ORDER, PROBLEM, RUN_ONLY, evaluate_bucket, output_schema,
                            scored_statuses)

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from typing_extensions import Unpack

    from .results import Results

__all__ = ["evaluate", "SparkEvaluation", "SparkProvenance", "MIN_PYSPARK", "INSTALL_HINT", "session",
           "DEFAULT_MASTER"]

#: Rows per Arrow batch handed to the Python workers while the buckets are evaluated: Spark's default
#: (10,000) made that hand-off 1.6-1.9 times slower on 1M rows (bench/README.md). A bucket arrives whole
#: in its worker anyway, so larger batches add little memory there.
ARROW_BATCH_ROWS = 1_000_000
_ARROW_BATCH_KEY = "spark.sql.execution.arrow.maxRecordsPerBatch"

# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class SparkProvenance:
    """Where the numbers of a :class:`SparkEvaluation` come from; query counts, not ids (there may be
    millions: the ids are in :attr:`SparkEvaluation.per_query`, and in ``results`` when collected).

    Attributes:
        spark_version: the Spark version of the session.
        buckets: queries were hashed into this many buckets.
        settings, relevance_level: as in :class:`~evalbridge.evaluation.results.Provenance`.
        queries_evaluated: queries in the mean: those in both the qrels and the run, and with
            ``missing_queries="zero"`` the qrels queries absent from the run (as ``Provenance``).
        missing_from_run: qrels queries absent from the run (scored 0, or left out with ``missing_queries="drop"``).
        ignored_run_only: run queries absent from the qrels, left out.
        warnings: what was also said as an :class:`~evalbridge.errors.EvalbridgeWarning` (queries whose
            retrieved and judged ids do not meet, as :func:`evalbridge.evaluate` says it).
        removed_beyond_depth, removed_unjudged: documents left out by ``depth`` and ``judged_only`` (as in
            :class:`~evalbridge.evaluation.results.Provenance`).
    """

    spark_version: str
    buckets: int
    settings: Settings
    relevance_level: float
    queries_evaluated: int
    missing_from_run: int
    ignored_run_only: int
    backend: str = "spark"
    evalbridge_version: str = __version__
    warnings: tuple[str, ...] = ()
    removed_beyond_depth: int = 0
    removed_unjudged: int = 0

    @property
    def backend_version(self) -> str:
        return f"{self.evalbridge_version} (Spark {self.spark_version}, {self.buckets} buckets)"

    def summary(self) -> str:
        """One line for the foot of a table (as :meth:`evalbridge.evaluation.results.Provenance.summary`)."""
        c = self.settings
        text = (f"backend {self.backend} {self.backend_version}; {self.queries_evaluated} queries; "
                f"{self.missing_from_run} missing from run ("
                f"{'scored 0' if c.missing_queries == 'zero' else 'left out'}); "
                f"{self.ignored_run_only} run-only ignored; ties {c.ties}; relevance level {self.relevance_level:g}")
        text += f"; scores as {c.score_precision}" if c.score_precision != "float64" else ""
        return text + "".join(f"; warning: {w}" for w in self.warnings)


@dataclass(frozen=True)
class SparkEvaluation:
    """What :func:`evaluate` returns.

    Attributes:
        metrics: the metrics computed, as resolved (e.g. with the relevance level).
        per_query: a Spark DataFrame, ``query_id`` and one double column per metric asked (named by
            its label: the user's, else the spelling asked), one row per query in the mean: the evaluated queries,
            and with ``missing_queries="zero"`` the qrels queries absent from the run (scored as retrieving
            nothing). When :attr:`results` was collected it is built from them (nothing stays cached);
            otherwise it is this evaluation's output, cached (persisted) by Spark and never shared with
            another call: :meth:`unpersist`, or ``with evalbridge.spark.evaluate(...) as evaluation:``,
            releases it.
        means: label (the user's, else the spelling asked) -> mean over ``per_query``; summed exactly (per
            bucket, then on the driver), so equal to :attr:`evalbridge.evaluation.results.Results.means` to the last bit.
        provenance: :class:`SparkProvenance` (Spark version, buckets, settings, query counts).
        results: :class:`~evalbridge.evaluation.results.Results` (rows sorted by query id), or ``None`` when
            more than ``collect_limit`` queries would have to come to the driver: see
            :attr:`collected` and :meth:`require_results`.
        collect_limit: the limit that decided it.
    """

    metrics: tuple[Metric, ...]
    per_query: DataFrame
    means: dict[str, float]
    provenance: SparkProvenance
    results: Results | None
    collect_limit: int
    _cached: Any = field(repr=False, compare=False)

    @property
    def collected(self) -> bool:
        """True when :attr:`results` was built (the per-query table came to the driver)."""
        return self.results is not None

    def require_results(self) -> Results:
        """:attr:`results`, or an :class:`~evalbridge.errors.EvalbridgeError` saying why there is none."""
        if self.results is None:
            p = self.provenance
            rows = p.queries_evaluated + p.ignored_run_only + (
                p.missing_from_run if p.settings.missing_queries == "drop" else 0)
            raise EvalbridgeError(
                f"the evaluation covers {rows} queries (evaluated, missing from the run or run-only), more than "
                f"collect_limit={self.collect_limit}, so no Results was collected to the driver. Fix: call "
                f"evalbridge.spark.evaluate(...) and use its .per_query DataFrame and .means, or raise collect_limit.")
        return self.results

    def unpersist(self) -> None:
        """Release the cached per-query table, if one is still cached (``per_query`` is recomputed, by this
        evaluation's plan, if used afterwards)."""
        if self._cached is not None:
            self._cached.unpersist()

    def __enter__(self) -> SparkEvaluation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.unpersist()

    def __str__(self) -> str:
        means = "\n".join(f"{name:<24} {value:.4f}" for name, value in self.means.items())
        return f"{means}\n{self.provenance.summary()}"


# --------------------------------------------------------------------------- on the driver

#: Where a session evalbridge starts itself runs (config ``spark: {master: ...}``, ``--spark-master``).
DEFAULT_MASTER = "local[*]"


def session(*, master: str = DEFAULT_MASTER) -> tuple[Any, bool]:  # noqa: ANN401 - SparkSession
    """The Spark session to evaluate on: the active one (``SparkSession.getActiveSession()``: a notebook's,
    a job's, Databricks'), else a new one on ``master``; and whether it was started here.

    A session started here on a ``local`` master runs its Python workers with this interpreter
    (``PYSPARK_PYTHON``, unless already set), so that they import this evalbridge, and has one shuffle
    partition per core (``local[4]``: 4; ``local[*]``: every core), so the default bucket count is
    4 per core rather than Spark's 200 partitions' 800 (one Python call per bucket: bench/README.md).
    It is left running (later evaluations in the process reuse it); ``session.stop()`` ends it.

    Raises:
        BackendUnavailableError: pyspark (>= 4.0) is not installed, or Spark could not start (no Java).
    """
    import os
    import re
    import sys

    sql = pyspark_sql()
    active = sql.SparkSession.getActiveSession()
    if active is not None:
        return active, False
    builder = sql.SparkSession.builder.master(master).appName("evalbridge").config("spark.ui.showConsoleProgress",
                                                                                  "false")
    local = re.fullmatch(r"local(?:\[(\d+|\*)(?:,\s*\d+)?\])?", master.strip())
    if local is not None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        cores = local.group(1) if local.group(1) not in (None, "*") else str(os.cpu_count() or 1)
        builder = builder.config("spark.sql.shuffle.partitions", "1" if local.group(1) is None else cores)
    from pyspark.errors import PySparkException

    try:
        with quiet_pandas_warning():
            started = builder.getOrCreate()
    except PySparkException as error:
        raise BackendUnavailableError(
            f"Spark could not start a session on master {master!r}: {str(error).splitlines()[0]}. "
            f"Fix: Spark needs Java 17 or 21 (java on PATH, or JAVA_HOME); check the master URL.") from None
    started.sparkContext.setLogLevel("ERROR")  # this session is evalbridge's: no INFO/WARN lines on the user's terminal
    return started, True


@contextmanager
def _large_arrow_batches(session: Any) -> Iterator[None]:  # noqa: ANN401 - SparkSession
    """:data:`ARROW_BATCH_ROWS` rows per Arrow batch for the jobs run inside, unless the session already
    allows as many (0 or less: no limit); the session's setting is restored afterwards."""
    before = session.conf.get(_ARROW_BATCH_KEY, None)
    if before is not None and (int(before) <= 0 or int(before) >= ARROW_BATCH_ROWS):
        yield
        return
    session.conf.set(_ARROW_BATCH_KEY, str(ARROW_BATCH_ROWS))
    try:
        yield
    finally:
        if before is None:
            session.conf.unset(_ARROW_BATCH_KEY)
        else:
            session.conf.set(_ARROW_BATCH_KEY, before)


def _id_kind(dtype: Any) -> str | None:  # noqa: ANN401 - a pyspark DataType
    from pyspark.sql import types as T

    kinds = ((T.StringType, "str"), (T.VarcharType, "str"), (T.CharType, "str"), (T.IntegralType, "int"))
    return next((kind for cls, kind in kinds if isinstance(dtype, cls)), None)


def _is_number(dtype: Any) -> bool:  # noqa: ANN401 - a pyspark DataType
    from pyspark.sql import types as T

    return isinstance(dtype, (T.NumericType, T.BooleanType))


#: option -> (what the column holds, the type check, what the check asks for)
_CHECKS: dict[str, tuple[str, Callable[[Any], str | bool | None], str]] = {
    "query": ("query id", _id_kind, "strings or integers"), "doc": ("doc id", _id_kind, "strings or integers"),
    "relevance": ("grade", _is_number, "numbers"), "score": ("score", _is_number, "numbers")}


def _columns(frame: DataFrame, side: str,
             names: dict[str, str]) -> tuple[list[Column], tuple[str | bool, str | bool]]:
    """The columns of one input, cast to strings and doubles (names kept), and the kinds of its ids."""
    from pyspark.sql import functions as F

    fields = {f.name: f.dataType for f in frame.schema.fields}
    selected: list[Column] = []
    kinds: list[str | bool] = []
    for option, name in names.items():
        role, check, wanted = _CHECKS[option]
        if name not in fields:
            raise InputError(f"the {side} DataFrame has no column {name!r} (the {role}); its columns are "
                             f"{list(fields)}.", fix=f"rename the column, or pass {option}=<its name>.")
        kind = check(fields[name])
        if not kind:
            raise InputError(f"column {name!r} of the {side} DataFrame (the {role}) must hold {wanted}; got "
                             f"{fields[name].simpleString()}.", fix=f"cast the column, e.g. F.col({name!r}).cast(...).")
        if option in ("query", "doc"):
            kinds.append(kind)
        selected.append(F.col(name).cast("string" if option in ("query", "doc") else "double").alias(name))
    return selected, (kinds[0], kinds[1])


@dataclass
class _Judgements:
    """What the evaluation-wide settings read from the qrels, as :class:`~evalbridge.model.data.Qrels` offers
    it: no relevance level of its own, and the top grade (one Spark job, run only when asked for)."""

    frame: Any
    column: str
    min_relevance: None = None
    _top: float | None = None

    @property
    def max_grade(self) -> float:
        if self._top is None:
            from pyspark.sql import functions as F

            top = self.frame.agg(F.max(self.column)).first()[0]
            self._top = 0 if top is None else (int(top) if float(top).is_integer() else float(top))
        return self._top

    @property
    def fractional_grade(self) -> float | None:
        """The smallest grade that is not a whole number, or None (one Spark job)."""
        from pyspark.sql import functions as F

        grade = F.col(self.column)
        found = self.frame.filter(grade != F.floor(grade)).agg(F.min(grade)).first()[0]
        return None if found is None else float(found)

    @property
    def grades(self) -> frozenset[float]:
        """The distinct grades (one Spark job; whole numbers here, so few: the first 1000 found tell a rating
        from a judged pool, :func:`~evalbridge.metrics.resolution.rating_scale`)."""
        rows = self.frame.select(self.column).distinct().limit(1000).collect()
        return frozenset(float(row[0]) for row in rows if row[0] is not None)


def _default_buckets(session: Any) -> int:  # noqa: ANN401 - SparkSession
    """Four buckets per shuffle partition (so partitions receive similar numbers of rows)."""
    setting = session.conf.get("spark.sql.shuffle.partitions", "200")
    return 4 * (int(setting) if setting.isdigit() else 200)


#: What the Spark engine does not apply: (is it asked?, why, the fix), each said in the words of the user's door.
_REFUSED: tuple[tuple[Callable[[Settings], bool], Callable[[Settings], str], Callable[[Settings], str]], ...] = (
    (lambda s: s.backend not in ("auto", "spark"),
     lambda s: f"Spark DataFrames are evaluated by the Spark engine (the fast backend in every bucket); "
               f"backend={s.backend!r} computes in memory.",
     lambda s: "leave backend='auto' (or 'spark'), or bring the DataFrames to the driver first (e.g. .toPandas())."),
    (lambda s: s.no_relevant != "zero",
     lambda s: f"no_relevant={s.no_relevant!r} is not applied by the Spark engine yet.",
     lambda s: "leave no_relevant at 'zero' on Spark, or evaluate in memory."),
    (lambda s: s.duplicates != "error",
     lambda s: "duplicates='first' keeps a document's first occurrence, and a DataFrame's rows have no order.",
     lambda s: "drop the repeated (query, doc) rows first, e.g. run.groupBy(query, doc).agg(max(score))."),
)


def _refuse_on_spark(settings: Settings) -> None:
    """Refuse, with the fix, a setting the Spark engine does not apply (:data:`_REFUSED`)."""
    for asked, why, fix in _REFUSED:
        if asked(settings):
            raise InputError(why(settings), fix=fix(settings))


def evaluate(qrels: DataFrame, run: DataFrame, metrics: MetricsArg, *,
             query: str = "query_id", doc: str = "doc_id", relevance: str = "relevance", score: str = "score",
             buckets: int | None = None, collect_limit: int = 1_000_000, settings: Settings | None = None,
             **keywords: Unpack[Keywords]) -> SparkEvaluation:
    """Evaluate a run against relevance judgements, both Spark DataFrames, on Spark.

    Args:
        qrels: one row per judged (query, doc): query id, doc id (strings or integers, read as
            ``str()`` writes them) and grade (any number; floats kept).
        run: one row per retrieved (query, doc): query id, doc id and score.
        metrics: one metric spec or several, any spelling (``"ndcg@10"``, ``"P(rel=2)@5"``), or a mapping
            label -> spec, as :func:`evalbridge.evaluate`.
        query, doc, relevance, score: the column names (the same in both DataFrames for the ids).
        buckets: number of hash buckets of queries (default: 4 x ``spark.sql.shuffle.partitions``).
            A bucket is evaluated in one Python call, in memory: keep ``rows / buckets`` to a few
            million rows.
        collect_limit: build :class:`~evalbridge.evaluation.results.Results` on the driver only when the
            queries (evaluated, missing from the run, run-only) are at most this many.
        settings, **keywords: as :func:`evalbridge.evaluate` (:class:`~evalbridge.model.settings.Settings`, whole or as
            keywords). ``depth`` and ``judged_only`` cut each bucket's rankings as :func:`evalbridge.evaluate`
            cuts them; ``ids="str"`` lets string ids meet integer ids (both are read as ``str()`` writes them).
            Refused with the fix: a ``backend`` other than ``auto`` / ``spark`` (the buckets are evaluated by
            the fast backend), ``no_relevant`` other than ``zero`` and ``duplicates="first"`` (no row order
            to pick a first occurrence by).

    While the buckets are evaluated, the session's ``spark.sql.execution.arrow.maxRecordsPerBatch``
    is raised to :data:`ARROW_BATCH_ROWS` (then restored).

    Returns:
        :class:`SparkEvaluation`: the per-query DataFrame, exact means, counts and provenance,
        and the :class:`~evalbridge.evaluation.results.Results` when small enough.

    Raises:
        BackendUnavailableError: pyspark (>= 4.0) is not installed.
        InputError: a missing column or a wrong column type; a null, a non-finite number or a
            (query, doc) given twice (named by query and doc id); no query in common.
    """
    sql = pyspark_sql()
    from pyspark.sql import functions as F

    for side, frame in (("qrels", qrels), ("run", run)):
        if not isinstance(frame, sql.DataFrame):
            raise InputError(f"evalbridge.spark.evaluate takes two Spark DataFrames; the {side} is a "
                             f"{type(frame).__module__}.{type(frame).__qualname__}.",
                             fix="use evalbridge.evaluate for data in memory, or spark.createDataFrame(...).")
    conventions = settings_of(settings, keywords)
    _refuse_on_spark(conventions)
    min_relevance, ties = conventions.min_relevance, conventions.ties
    session = qrels.sparkSession
    if buckets is None:
        buckets = _default_buckets(session)
    for name, value, low in (("buckets", buckets, 1), ("collect_limit", collect_limit, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise InputError(f"{name} must be an integer >= {low}; got {value!r}.")

    q_columns, q_kinds = _columns(qrels, "qrels", {"query": query, "doc": doc, "relevance": relevance})
    r_columns, r_kinds = _columns(run, "run", {"query": query, "doc": doc, "score": score})
    for what, q_kind, r_kind in zip(("query", "doc"), q_kinds, r_kinds):
        if q_kind != r_kind and conventions.ids != "str":  # (read as str() writes them either way)
            raise InputError(f"{what} ids are {q_kind} in the qrels DataFrame but {r_kind} in the run DataFrame "
                             f"(e.g. 1 vs '1'); evalbridge does not guess that they are the same ids.",
                             fix=f"give both the same id type, e.g. cast every {what} id to string.")

    # a Spark job when a binary metric needs a level; the top grade another, run only when a metric needs it
    resolved = resolve_metrics(_Judgements(qrels, relevance), metric_requests(metrics), min_relevance=min_relevance)
    level, top, wanted, named = resolved.level, resolved.max_grade, resolved.metrics, resolved.requests
    judged = probe(wanted)  # Judged@k, computed with the metrics: the queries whose ids never meet are said
    computed = wanted if judged in wanted else (*wanted, judged)
    for metric in wanted:
        if "in_pool" in metric.inputs:  # each bucket holds only its own queries' qrels rows
            raise UnsupportedMetricError(
                f"{metric} reads the pool (the docs judged for any query of the qrels), but evalbridge.spark "
                f"evaluates each bucket of queries with only their own qrels rows, so it cannot compute it. "
                f"Fix: evaluate {metric} with evalbridge.evaluate on the collected DataFrames (qrels and run "
                f"as dicts or Arrow tables).")

    qrels_rows = qrels.select(*q_columns)
    run_rows = run.select(*r_columns, *([F.monotonically_increasing_id().alias(ORDER)] if ties == "input" else []))
    bucket = F.pmod(F.xxhash64(F.col(query)), F.lit(buckets)).alias("__evalbridge_bucket")
    function = partial(evaluate_bucket, computed, conventions, (query, doc, relevance, score))
    with quiet_pandas_warning():
        output = (qrels_rows.groupBy(bucket).cogroup(run_rows.groupBy(bucket))
                  .applyInArrow(function, output_schema(len(computed))))
        # this call's own plan (a literal no other call has), so Spark never answers it from the cache of an
        # earlier call over the same inputs, whose tables may have changed since
        cached = output.select("*", F.lit(uuid.uuid4().hex).alias("_call")).persist()
    try:
        with _large_arrow_batches(session):  # the job that evaluates the buckets (and fills the cache)
            notes = cached.filter(F.col("_status") >= PROBLEM).select("query_id", "_status", "_note").collect()
    except Exception as error:  # Spark's report of a worker failure (a Py4J or PySpark exception)
        cached.unpersist()
        if _missing_module(error) is None:
            raise
        raise _worker_error(error, session) from None

    problems = sorted((row["query_id"] or "", row["_note"]) for row in notes if row["_status"] == PROBLEM)
    if problems:
        cached.unpersist()
        query_id, text = problems[0]
        found = json.loads(text)
        raise InputError(found["detail"], source=f"the {found['side']} DataFrame", query_id=query_id or None,
                         fix=found["fix"])
    summaries = [json.loads(row["_note"]) for row in notes]
    counts = [sum(note["counts"][s] for note in summaries) for s in (EVALUATED, MISSING, RUN_ONLY)]
    removed = [sum(note["removed"][i] for note in summaries) for i in range(2)]
    if counts[EVALUATED] == 0:
        cached.unpersist()
        raise InputError(f"no query id is in both the qrels ({_examples(qrels, query)}) and the run "
                         f"({_examples(run, query)}).",
                         fix="check that both DataFrames describe the same topics, with the same id spelling.")
    in_mean = sum(counts[s] for s in scored_statuses(conventions))
    totals = [sum((Fraction(note["sums"][i]) for note in summaries), Fraction(0)) for i in range(len(computed))]
    column = {m: i for i, m in enumerate(computed)}
    means = {r.label: float(totals[column[r.metric]]) / in_mean for r in named}
    emptied = sorted({q for note in summaries for q in note["emptied"]})
    warned = _warn_unmatched(cached, f"m{column[judged]}", counts[EVALUATED], judged.k, qrels_rows, run_rows,
                             (query, doc, relevance, score), conventions, emptied)
    provenance = SparkProvenance(spark_version=session.version, buckets=buckets, settings=conventions,
                                 relevance_level=level, queries_evaluated=in_mean,
                                 missing_from_run=counts[MISSING], ignored_run_only=counts[RUN_ONLY], warnings=warned,
                                 removed_beyond_depth=removed[0], removed_unjudged=removed[1])
    per_query = cached.filter(F.col("_status").isin(list(scored_statuses(conventions)))).select(
        "query_id", *(F.col(f"m{column[r.metric]}").alias(r.label) for r in named))
    if sum(counts) > collect_limit:
        return SparkEvaluation(metrics=wanted, per_query=per_query, means=means, provenance=provenance, results=None,
                               collect_limit=collect_limit, _cached=cached)
    try:
        with quiet_pandas_warning():
            results = _collect(cached, wanted, provenance, max_grade=top, requests=named)
            per_query = session.createDataFrame(per_query.toArrow())  # the values at hand: nothing left cached
    finally:
        cached.unpersist()
    return SparkEvaluation(metrics=wanted, per_query=per_query, means=means, provenance=provenance, results=results,
                           collect_limit=collect_limit, _cached=None)


def _warn_unmatched(cached: DataFrame, probed: str, evaluated: int, k: int | None, qrels: DataFrame,
                    run: DataFrame, names: tuple[str, str, str, str], settings: Settings,
                    emptied: list[str]) -> tuple[str, ...]:
    """Warn (:class:`~evalbridge.errors.EvalbridgeWarning`) as :func:`evalbridge.evaluate` does when evaluated
    queries have nothing judged in their first ``k`` (the probe column ``probed`` is 0; not those the cut left
    with nothing retrieved, ``emptied``): one count over the cached output, and the rows of at most
    :data:`~evalbridge.evaluation.matching.SAMPLE` such queries brought to the driver (their rankings cut as the buckets cut
    them, so the words are the local evaluation's)."""
    from pyspark.sql import functions as F

    from ..errors import warn

    found = (F.col("_status") == EVALUATED) & (F.col(probed) == 0)
    if emptied:
        found = found & ~F.col("query_id").isin(emptied)
    empty = cached.filter(found).select("query_id")
    n_empty = empty.count()
    if n_empty == 0:
        return ()
    sample = [row[0] for row in empty.orderBy("query_id").limit(SAMPLE).collect()]
    query, doc, relevance, score = names
    sides = []
    for frame, value in ((qrels, relevance), (run, score)):
        rows = frame.filter(F.col(query).cast("string").isin(sample))
        rows = rows.orderBy(ORDER) if ORDER in frame.columns else rows  # ties="input": the rows' order
        docs: dict[str, dict[str, float]] = {}
        for qid, did, number in rows.select(F.col(query).cast("string"), F.col(doc).cast("string"),
                                            F.col(value).cast("double")).collect():
            docs.setdefault(qid, {})[did] = number
        sides.append(docs)
    if settings.depth is not None or settings.judged_only:
        from .cutting import cut_run
        from ..model.data import Qrels, Run

        cut = cut_run(Qrels(sides[0], allow_empty=True), Run(sides[1], allow_empty=True), settings).run
        sides[1] = {q: dict(cut[q]) for q in cut}
    text = describe(sample, n_empty, evaluated, k, sides[0], sides[1], None)
    warn(text)
    return (text,)


def _missing_module(error: BaseException) -> str | None:
    """The module a Spark Python worker could not import, from the error Spark reports for it, else None."""
    import re

    found = re.search(r"ModuleNotFoundError: No module named '([^']+)'", str(error))
    return found.group(1) if found else None


def _worker_error(error: BaseException, session: Any) -> BackendUnavailableError:  # noqa: ANN401 - SparkSession
    """What to say when Spark's Python workers cannot import what evaluating a bucket needs."""
    import os
    import sys

    module = _missing_module(error)
    configured = session.conf.get("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON")
    python = f"PYSPARK_PYTHON / spark.pyspark.python is {configured!r}" if configured else (
        "PYSPARK_PYTHON / spark.pyspark.python is not set, so they run the cluster's default `python3`")
    return BackendUnavailableError(
        f"Spark's Python workers cannot import {module!r} (No module named {module!r}); evalbridge.spark runs "
        f"evalbridge, numpy and pyarrow inside them ({python}; this driver runs {sys.executable}). Fix: run the "
        f"workers with a Python that has them: set PYSPARK_PYTHON (or spark.pyspark.python) before the session "
        f"starts, e.g. to {sys.executable} in local mode, or install evalbridge[spark] on the cluster's Python "
        f"(a cluster library on Databricks, a bootstrap action on EMR).")


def _examples(frame: DataFrame, column: str, n: int = 3) -> str:
    ids = [row[0] for row in frame.select(column).distinct().limit(n + 1).collect()]
    shown = ", ".join(map(repr, ids[:n]))
    return shown + (" ..." if len(ids) > n else "") if ids else "no rows"


def _collect(cached: DataFrame, metrics: tuple[Metric, ...], provenance: SparkProvenance, *,
             max_grade: float | None, requests: tuple[MetricRequest, ...]) -> Results:
    """The bucket output brought to the driver as :class:`~evalbridge.evaluation.results.Results`, rows by query id."""
    from pyspark.sql import functions as F

    from .results import Provenance, Results

    table = cached.filter(F.col("_status") < PROBLEM).select(
        "query_id", "_status", *(f"m{i}" for i in range(len(metrics)))).toArrow().sort_by("query_id")
    # pyarrow is untyped here (see pyproject.toml): the query ids are strings, the values of the kept rows floats
    ids = cast("list[str]", table.column("query_id").to_pylist())
    status = table.column("_status").to_pylist()
    scored = scored_statuses(provenance.settings)
    keep = [i for i, s in enumerate(status) if s in scored]
    values = {}
    for i, metric in enumerate(metrics):
        column = cast("list[float]", table.column(f"m{i}").to_pylist())
        values[metric] = {ids[r]: column[r] for r in keep}
    full = Provenance(
        backend=provenance.backend, backend_version=provenance.backend_version, settings=provenance.settings,
        relevance_level=provenance.relevance_level, queries_evaluated=provenance.queries_evaluated,
        missing_from_run=tuple(q for q, s in zip(ids, status) if s == MISSING),
        ignored_run_only=tuple(q for q, s in zip(ids, status) if s == RUN_ONLY), evalbridge_version=__version__,
        warnings=provenance.warnings, removed_beyond_depth=provenance.removed_beyond_depth,
        removed_unjudged=provenance.removed_unjudged)
    return Results(metrics=metrics, values=values, provenance=full, max_grade=max_grade, requests=requests)

