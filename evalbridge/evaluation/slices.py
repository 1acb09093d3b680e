"""Per-slice results: each slice's means, counts and bootstrap intervals, and differences against the baseline.

A slice is a group of queries named by a label (a question's category, language, product or source). Where
the labels come from (``slices=`` of :func:`evalbridge.evaluate` and :func:`evalbridge.compare`, ``slices:`` in
a config, ``--slice-by`` on the command line), resolved by :func:`slice_labels`:

* a mapping query id -> a label or a list of labels (a query may be in several slices, or in none);
* the name of a field a RAG log logged for each question (read with ``slice=FIELD``, kept in
  :attr:`evalbridge.Run.logged`);
* a pair (table, column): a column of a query table (a CSV / TSV / Parquet / JSON Lines file, or a
  pandas / Arrow / Polars table) whose query-id column is one of the usual names
  (:data:`evalbridge.io.fields.CANDIDATES`).

For every slice, system and metric: the number of queries, the mean and its bootstrap interval (the
comparison's settings). With a baseline, every other system's difference on the slice's queries, its
bootstrap interval and the p-value of the comparison's test, corrected by Benjamini-Hochberg over every
(slice, system, metric) tested. A slice of fewer than :data:`MIN_QUERIES` queries is shown, not tested
(said so). Queries evaluated but in no slice are counted and listed (:attr:`Slices.unsliced`).

Example:
    >>> import evalbridge as eb
    >>> res = eb.evaluate({"q1": {"a": 1}, "q2": {"a": 1, "b": 0}, "q3": {"a": 1}},
    ...                   {"q1": {"a": 1.0}, "q2": {"b": 1.0}, "q3": {"a": 1.0}}, ["P@1"],
    ...                   slices={"q1": "billing", "q2": ["billing", "tech"]})
    >>> [(m.slice, m.n, m.mean) for m in res.slices.means], res.slices.unsliced
    ([('billing', 2, 0.5), ('tech', 1, 0.0)], ('q3',))
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..common.json_data import json_ready
from ..common.names import name_problem
from ..views.table import Shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MIN_QUERIES", "SliceMean", "SliceDifference", "Slices", "SliceLabels", "slice_labels", "slice_table"]

#: the fewest queries a slice needs for its differences to be tested (fewer: shown, not tested, said so)
MIN_QUERIES = 10


@dataclass(frozen=True)
class SliceLabels:
    """The slices of the queries: query id -> its labels (a query in no slice is absent), and where they came
    from (``by``: a field, a column, or 'a mapping')."""

    labels: Mapping[str, tuple[str, ...]]
    by: str


@dataclass(frozen=True)
class SliceMean:
    """One system's mean of one metric over the queries of one slice, with its bootstrap interval."""

    slice: str
    system: str
    metric: str
    n: int
    mean: float
    ci_low: float
    ci_high: float


@dataclass(frozen=True)
class SliceDifference:
    """One system against the baseline on one metric over one slice's queries (both evaluated on).

    ``tested`` is False for a slice of fewer than :data:`MIN_QUERIES` queries: ``p_value``, ``p_adjusted``
    are then nan and ``significant`` False."""

    slice: str
    system: str
    baseline: str
    metric: str
    n: int
    delta: float
    ci_low: float
    ci_high: float
    tested: bool
    p_value: float
    p_adjusted: float
    significant: bool


@dataclass(frozen=True)
class Slices(Shown):
    """Per-slice results of one evaluation or comparison (data; :mod:`evalbridge.reports` renders it).

    Attributes:
        by: where the labels came from (a field of the logs, a column of a table, a mapping).
        names: the slices, in order of first appearance in the queries.
        counts: queries of each slice (a query in two slices counts in both).
        unsliced: the queries evaluated that are in no slice.
        means: one :class:`SliceMean` per (slice, system, metric).
        differences: one :class:`SliceDifference` per (slice, system, metric) against the baseline; empty
            without one.
        too_small: the slices of fewer than ``min_queries`` queries (not tested).
        min_queries: :data:`MIN_QUERIES`.
        test, correction, alpha: the test deciding significance (a key of the comparison's ``TESTS``),
            ``bh`` over every (slice, system, metric) tested, and its level; test is '' without a baseline.
        confidence, n_resamples, seed, ci_method: the bootstrap's settings.
    """

    by: str
    names: tuple[str, ...]
    counts: tuple[int, ...]
    unsliced: tuple[str, ...]
    means: tuple[SliceMean, ...]
    differences: tuple[SliceDifference, ...] = ()
    too_small: tuple[str, ...] = ()
    min_queries: int = MIN_QUERIES
    test: str = ""
    correction: str = "bh"
    alpha: float = 0.05
    confidence: float = 0.95
    n_resamples: int = 10_000
    seed: int = 0
    ci_method: str = "BCa"

    def count(self, name: str) -> int:
        """The number of queries of slice ``name``."""
        return self.counts[self.names.index(name)]

    def mean(self, name: str, metric: str, system: str | None = None) -> SliceMean:
        """The :class:`SliceMean` of a slice and metric (of ``system``, default: the first one)."""
        for row in self.means:
            if row.slice == name and row.metric == metric and (system is None or row.system == system):
                return row
        raise KeyError((name, metric, system))

    def to_frame(self, *, table: str = "means") -> pd.DataFrame:
        """``means`` (one row per slice, system, metric) or ``differences`` as a DataFrame."""
        import pandas as pd

        rows: Sequence[Any] | None = {"means": self.means, "differences": self.differences}.get(table)
        if rows is None:
            raise InputError(f"unknown table {table!r}; choose 'means' or 'differences'.")
        fields = SliceMean.__dataclass_fields__ if table == "means" else SliceDifference.__dataclass_fields__
        return pd.DataFrame([vars(r) for r in rows], columns=list(fields))

    def table(self, fmt: str = "terminal") -> str:
        """The slices as text: ``json`` or any output format that writes tables (:mod:`evalbridge.views.slices`)."""
        from ..views.slices import render_slices

        return render_slices(self, fmt)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (:func:`~evalbridge.common.json_data.json_ready`: nan as None)."""
        apart = {"by", "names", "counts", "unsliced", "means", "differences"}
        return json_ready({"by": self.by, "counts": dict(zip(self.names, self.counts)),
                           "unsliced": {"count": len(self.unsliced), "queries": list(self.unsliced[:20])},
                           **{f.name: getattr(self, f.name) for f in fields(self) if f.name not in apart},
                           "means": [asdict(r) for r in self.means],
                           "differences": [asdict(r) for r in self.differences]})


# ---------------------------------------------------------------- where the labels come from

def _labels_of(value: Any, qid: str, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if value is None:
        return ()
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(x, str) and x for x in value):
        raise InputError(f"the slice label {value!r:.60} is not a text or a list of texts.", source=where,
                         query_id=qid, fix="give each query a label ('billing') or a list of labels; leave a "
                                           "query out (or give []) to put it in no slice.")
    for label in value:
        problem = name_problem(label, "slice")
        if problem is not None:
            raise InputError(problem[0], source=where, query_id=qid, fix=problem[1])
    return tuple(dict.fromkeys(sorted(value) if isinstance(value, (set, frozenset)) else value))


def _from_logs(field: str, runs: Sequence[Any]) -> dict[str, tuple[str, ...]]:
    """The labels a field of the runs' logs gives; two logs giving one question two labellings is refused."""
    found = [run for run in runs if field in getattr(run, "logged", {})]
    if not found:
        logged = sorted({f for run in runs for f in getattr(run, "logged", {})})
        have = f"the logs kept {', '.join(map(repr, logged))}" if logged else "no field was kept from the inputs"
        raise InputError(f"slices={field!r} names a field of a RAG log, but {have}.",
                         fix=f"read the logs with slice={field!r} (--columns slice={field} / columns: {{slice: "
                             f"{field}}}), or give the labels as a mapping or a (table, column) pair.")
    labels: dict[str, tuple[str, ...]] = {}
    owner: dict[str, str] = {}
    for run in found:
        for qid, value in run.logged[field].items():
            value = _labels_of(value, qid, run.source or f"run {run.name!r}")
            if qid in labels and labels[qid] != value:
                raise InputError(f"question {qid!r} is in slice(s) {list(labels[qid])} in {owner[qid]} but "
                                 f"{list(value)} in {run.source or run.name}.", query_id=qid,
                                 fix="log the same slice labels for a question in every system's log.")
            labels[qid], owner[qid] = value, str(run.source or run.name)
    named = {q: v for q, v in labels.items() if v}
    if not named:
        raise InputError(f"slices={field!r}: no question of the logs has a label in the field {field!r} (it is "
                         f"missing or empty on every line).",
                         fix=f"name the field that holds the labels (--slice-by / slices:), or fill {field!r}.")
    return named


def _from_table(table: Any, column: str) -> tuple[dict[str, tuple[str, ...]], str]:
    """The labels of a column of a query table (a file or an in-memory table, read by
    :func:`evalbridge.io.query_tables.read_query_table`: ids as text, file:line in every error)."""
    from ..io.fields import CANDIDATES
    from ..io.query_tables import read_query_table

    where = str(table) if isinstance(table, (str, Path)) else None
    data = read_query_table(table)
    names = list(data.columns)
    if column not in names:
        raise InputError(f"the query table has no column {column!r} (its columns are "
                         f"{', '.join(map(repr, names))}).", source=where, fix="name the column of the labels.")
    ids = [n for n in CANDIDATES["query"] if n in names and n != column]
    if len(ids) != 1:
        raise InputError(f"{'no column' if not ids else 'several columns'} of the query table look like the query id "
                         f"({', '.join(CANDIDATES['query'])} were looked for; the columns are "
                         f"{', '.join(map(repr, names))}).", source=where,
                         fix="name the query-id column with one of the usual names, e.g. query_id.")
    labels: dict[str, tuple[str, ...]] = {}
    for row, (qid, value) in enumerate(zip(data.ids(ids[0]), data.columns[column])):
        if qid is None:
            continue
        value = None if value == "" else value
        labels[qid] = (*labels.get(qid, ()),
                       *(x for x in _labels_of(value, qid, data.place(row)) if x not in labels.get(qid, ())))
    found = {q: v for q, v in labels.items() if v}
    if not found:
        raise InputError(f"the column {column!r} of the query table gives no query a slice (every cell is empty).",
                         source=where, fix=f"fill the column {column!r} with each query's label, or name the "
                                           f"column that holds them (the columns are {', '.join(map(repr, names))}).")
    return found, f"{column} of {Path(where).name if where else 'a table'}"


def slice_labels(slices: Any, runs: Sequence[Any] = ()) -> SliceLabels:
    """The slices of the queries from a mapping, a field of the runs' logs or a (table, column) pair (see the
    module docstring).

    Raises:
        InputError: a label that is not a text, a field no log kept, two logs disagreeing, a table without the
            column or without a query-id column.
    """
    if isinstance(slices, SliceLabels):
        return slices
    if isinstance(slices, str):
        return SliceLabels(_from_logs(slices, runs), slices)
    if isinstance(slices, tuple) and len(slices) == 2 and isinstance(slices[1], str):
        labels, by = _from_table(*slices)
        return SliceLabels(labels, by)
    if isinstance(slices, Mapping):
        labels = {str(q): _labels_of(v, str(q), "slices") for q, v in slices.items()}
        return SliceLabels({q: v for q, v in labels.items() if v}, "a mapping")
    raise InputError(f"slices takes a mapping query -> label(s), a field of a RAG log or a (table, column) pair; "
                     f"got {type(slices).__name__} {slices!r:.60}.",
                     fix="pass e.g. {'q1': 'billing'}, 'category', or ('queries.csv', 'category').")


# ---------------------------------------------------------------- the numbers

class _Block:
    """Columns over one ordered set of queries, and the differences of their pairs: one bootstrap call."""

    def __init__(self) -> None:
        self.columns: list[Any] = []
        self.keys: list[tuple[str, ...]] = []
        self.differences: list[tuple[int, int]] = []
        self.difference_keys: list[tuple[str, ...]] = []

    def column(self, key: tuple[str, ...], values: Any) -> int:
        if key not in self.keys:
            self.keys.append(key)
            self.columns.append(values)
        return self.keys.index(key)


def _nothing_sliced(labels: SliceLabels, evaluated: Sequence[str]) -> InputError:
    """No query evaluated is in a slice: the slices' ids and the evaluated ones, side by side (and the fix when
    they differ only by leading zeros, ``095`` and ``95``)."""
    def shown(ids: Sequence[str]) -> str:
        return ", ".join(map(repr, ids[:5])) + (", ..." if len(ids) > 5 else "")

    sliced = sorted(labels.labels)
    bare = {q.lstrip("0") or "0" for q in evaluated}
    zeros = any((q.lstrip("0") or "0") in bare for q in sliced)
    return InputError(f"none of the {len(evaluated)} queries evaluated is in a slice: the slices ({labels.by}) name "
                      f"{len(sliced)} queries ({shown(sliced)}), and the queries evaluated are {shown(list(evaluated))}.",
                      fix="write the query ids as the qrels and runs write them" +
                          (" (the ids differ only by leading zeros: a table tool turned '095' into 95?)"
                           if zeros else "") + ", or give the slices of these queries.")


def slice_table(values: Mapping[str, Mapping[str, Mapping[str, float]]], labels: SliceLabels, *,
                pairs: Sequence[tuple[str, str]] = (), test: str = "",
                pvalues: Callable[[Any, Any, int, int], Sequence[float]] | None = None,
                adjust: Callable[[Sequence[float]], list[float]] | None = None, alpha: float = 0.05,
                confidence: float = 0.95, n_resamples: int = 10_000, seed: int = 0,
                ci_method: str = "BCa") -> Slices:
    """Per-slice means, intervals and differences.

    ``values``: system -> metric label -> {query id: value} (each system's per-query values, as evaluated);
    ``pairs``: (system, baseline) pairs to test on each slice with ``pvalues(a, b, n_resamples, seed)`` (the
    comparison's test, :meth:`~evalbridge.stats.paired_tests.PairedTest.pvalues`: the p-value of each row of
    ``a`` against the same row of ``b``; every pair and metric of a slice in one call), corrected with
    ``adjust`` (Benjamini-Hochberg) over every (slice, pair, metric) tested. Every column of one slice (each
    system's values and each difference, every metric) shares one set of bootstrap resamples, over the slice's
    queries in the order of their ids; the intervals are counted
    (:func:`~evalbridge.stats.resampling.counted_means`: the resamples scipy draws, the means equal to rounding).
    """
    import numpy as np

    from ..stats.resampling import bootstrap_intervals

    systems = list(values)
    metrics = list(next(iter(values.values()))) if values else []
    columns = [(system, metric) for system in systems for metric in metrics]
    evaluated: dict[str, None] = dict.fromkeys(values[columns[0][0]][columns[0][1]]) if columns else {}
    order = list(evaluated)
    for system, metric in columns[1:]:
        if list(values[system][metric]) != order:   # (usually every column lists the first one's queries, in order)
            evaluated.update(dict.fromkeys(values[system][metric]))
    order = list(evaluated)
    position = {q: i for i, q in enumerate(order)}
    # each system's values of each metric over every query evaluated, when it has them all (the usual case)
    whole = {(system, metric): np.fromiter(values[system][metric].values() if list(values[system][metric]) == order
                                           else map(values[system][metric].__getitem__, order), dtype=np.float64,
                                           count=len(order))
             for system, metric in columns if len(values[system][metric]) == len(order)}
    members: dict[str, list[str]] = {}
    unsliced: list[str] = []
    for qid in evaluated:
        own = labels.labels.get(qid)
        if not own:
            unsliced.append(qid)
        for label in own or ():
            members.setdefault(label, []).append(qid)
    if evaluated and labels.labels and not members:  # (labels naming no query: every query is unsliced, said)
        raise _nothing_sliced(labels, order)
    means: list[SliceMean] = []
    rows: list[dict[str, Any]] = []
    too_small = tuple(name for name, qids in members.items() if len(qids) < MIN_QUERIES)
    for name, qids in members.items():
        qids = sorted(qids)
        every, at = tuple(qids), np.fromiter(map(position.__getitem__, qids), dtype=np.intp, count=len(qids))
        # each system's values of each metric over the slice's queries it was evaluated on
        here: dict[tuple[str, str], tuple[tuple[str, ...], Any]] = {}
        for metric in metrics:
            for system in systems:
                if (system, metric) in whole:
                    here[system, metric] = (every, whole[system, metric][at])
                    continue
                per_query = values[system][metric]
                ids = tuple(q for q in qids if q in per_query)
                here[system, metric] = (ids, np.fromiter(map(per_query.__getitem__, ids), dtype=np.float64,
                                                         count=len(ids)))
        paired: dict[tuple[str, str, str], tuple[tuple[str, ...], Any, Any]] = {}
        for metric in metrics:
            for system, base in pairs:
                (ia, a), (ib, b) = here[system, metric], here[base, metric]
                if ia != ib:
                    common = tuple(q for q in ib if q in set(ia))
                    pa, pb = values[system][metric], values[base][metric]
                    a, b = np.array([pa[q] for q in common]), np.array([pb[q] for q in common])
                    ib = common
                paired[system, base, metric] = (ib, a, b)
        # the columns over the same queries share one set of resamples (the usual case: one set per slice)
        groups: dict[tuple[str, ...], _Block] = {}
        for column, (ids, array) in here.items():
            groups.setdefault(ids, _Block()).column(column, array)
        for (system, base, metric), (ids, a, b) in paired.items():
            block = groups.setdefault(ids, _Block())
            shared = here[system, metric][0] == ids and here[base, metric][0] == ids
            i = block.column((system, metric) if shared else (system, base, metric), a)
            j = block.column((base, metric) if shared else (system, base, metric, "baseline"), b)
            block.differences.append((i, j))
            block.difference_keys.append((system, base, metric))
        found: dict[tuple[str, ...], tuple[float, float]] = {}
        for ids, block in groups.items():
            if ids:
                out = bootstrap_intervals(np.stack(block.columns), block.differences, confidence=confidence,
                                          n_resamples=n_resamples, seed=seed, method=ci_method, counted=True)
                found.update(zip([*block.keys, *block.difference_keys], out))
        for metric in metrics:
            for system in systems:
                ids, array = here[system, metric]
                low, high = found.get((system, metric), (math.nan, math.nan))
                means.append(SliceMean(name, system, metric, len(ids), math.fsum(array) / len(ids) if len(ids)
                                       else math.nan, low, high))
        # the pairs over the same queries are tested together (a test that resamples draws once for them all)
        together: dict[tuple[str, ...], list[int]] = {}
        for pair, (ids, a, b) in paired.items():
            n = len(ids)
            tested = n >= MIN_QUERIES and pvalues is not None
            low, high = found.get(pair, (math.nan, math.nan))
            if tested:
                together.setdefault(ids, []).append(len(rows))
            rows.append(dict(slice=name, system=pair[0], baseline=pair[1], metric=pair[2], n=n,
                             delta=math.fsum(a - b) / n if n else math.nan, ci_low=low, ci_high=high, tested=tested,
                             p_value=math.nan))
        for chosen in together.values():
            tests = [paired[rows[r]["system"], rows[r]["baseline"], rows[r]["metric"]] for r in chosen]
            if pvalues is not None:
                tested_p = pvalues(np.stack([a for _, a, _ in tests]), np.stack([b for _, _, b in tests]), n_resamples,
                                   seed)
                for place, p in zip(chosen, tested_p):
                    rows[place]["p_value"] = float(p)
    family = [r["p_value"] for r in rows if r["tested"]]
    adjusted = iter(adjust(family) if adjust is not None and family else family)
    differences = []
    for r in rows:
        p = next(adjusted) if r["tested"] else math.nan
        differences.append(SliceDifference(**r, p_adjusted=p, significant=bool(r["tested"] and p <= alpha)))
    return Slices(by=labels.by, names=tuple(members), counts=tuple(map(len, members.values())),
                  unsliced=tuple(unsliced), means=tuple(means), differences=tuple(differences), too_small=too_small,
                  test=test if pairs else "", alpha=alpha, confidence=confidence, n_resamples=n_resamples, seed=seed,
                  ci_method=ci_method)
