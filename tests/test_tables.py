"""Arrow tables -> engine columns (``evalbridge.fast.arrow_input``): the same columns as the dicts of dicts
the rows describe, so the same values as the reference, whatever the row order."""

from __future__ import annotations

import math
import random

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import qrels_and_run
from test_engine import PRECISIONS, TIES, any_metric

from evalbridge.backends import reference
from evalbridge.fast import evaluate_columns, from_mappings
from evalbridge.fast import rows as engine_rows
from evalbridge.fast.arrow_input import TableProblem, columns_from_arrow, pair_from_arrow
from evalbridge.errors import InputError
from evalbridge.metrics.spec import Metric
from evalbridge.model.data import Qrels, Run
from evalbridge.model.settings import Settings


def rows_of(mapping: dict, shuffle: random.Random | None = None) -> list[tuple[str, str, float]]:
    """(query, doc, value) rows of a dict of dicts, in dict order or shuffled."""
    rows = [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]
    if shuffle is not None:
        shuffle.shuffle(rows)
    return rows


def table_of(rows: list[tuple[str, str, float]], value: str) -> pa.Table:
    return pa.table({"query_id": pa.array([r[0] for r in rows], pa.string()),
                     "doc_id": pa.array([r[1] for r in rows], pa.string()),
                     value: pa.array([float(r[2]) for r in rows], pa.float64())})


def dicts_of(rows: list[tuple[str, str, float]]) -> dict[str, dict[str, float]]:
    """The dict of dicts the rows describe, added in row order (independent of the module under test)."""
    out: dict[str, dict[str, float]] = {}
    for q, d, v in rows:
        out.setdefault(q, {})[d] = v
    return out


def assert_same_columns(got, want) -> None:  # noqa: ANN001 - Columns
    assert got.query_ids == want.query_ids
    for name in ("offsets", "scores", "judged_offsets", "judged", "hit_query", "hit_score", "hit_grade"):
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    every_row = np.arange(int(want.offsets[-1]), dtype=np.int64)
    assert got.doc_ids(every_row[::-1]) == want.doc_ids(every_row[::-1])
    every_hit = np.arange(len(want.hit_query), dtype=np.int64)
    assert got.hit_doc_ids(every_hit) == want.hit_doc_ids(every_hit)
    for name in ("zero_query", "zero_score"):  # the retrieved docs judged 0 (Judged, Bpref, infAP...)
        assert np.array_equal(getattr(got, name), getattr(want, name)), name
    every_zero = np.arange(len(want.zero_query), dtype=np.int64)
    assert got.zero_doc_ids(every_zero[::-1]) == want.zero_doc_ids(every_zero[::-1])
    assert np.array_equal(got.pool_rows(), want.pool_rows())  # docs judged for some query (Hole)


@settings(max_examples=200)
@given(data=qrels_and_run(max_queries=5, ties=True, float_grades=True, negative=True, missing=True, run_only=True,
                          max_docs=12, min_retrieved=0),
       shuffle=st.none() | st.randoms(use_true_random=False))
def test_columns_from_tables_equal_columns_from_the_dicts_the_rows_describe(data: tuple,
                                                                           shuffle: random.Random | None) -> None:
    """Query order (first appearance in the qrels), rows in table order within a query, hits in qrels
    order, doc ids of rows and hits: all as from_mappings gives them, with rows of a query adjacent or not."""
    qrels_rows, run_rows = rows_of(data[0], shuffle), rows_of(data[1], shuffle)
    pair = pair_from_arrow(table_of(qrels_rows, "relevance"), table_of(run_rows, "score"))
    qrels, run = dicts_of(qrels_rows), dicts_of(run_rows)
    assert_same_columns(pair.columns, from_mappings(qrels, run))
    assert pair.missing_from_run == [q for q in qrels if q not in run]
    assert pair.run_only == [q for q in run if q not in qrels]


@settings(max_examples=200)
@given(data=qrels_and_run(max_queries=4, ties=True, float_grades=True, negative=True, missing=True, run_only=True,
                          max_docs=12),
       metrics=st.lists(any_metric(), min_size=1, max_size=6), ties=st.sampled_from(TIES),
       precision=st.sampled_from(PRECISIONS), shuffle=st.randoms(use_true_random=False))
def test_engine_over_table_columns_equals_the_reference_per_query(data: tuple, metrics: list[Metric], ties: str,
                                                                  precision: str, shuffle: random.Random) -> None:
    """Ties, queries missing from the run, run-only queries, float and negative grades, shuffled rows:
    every metric, tie policy and precision gives the reference's value per query (atol 1e-12)."""
    qrels_rows, run_rows = rows_of(data[0], shuffle), rows_of(data[1], shuffle)
    conventions = Settings(ties=ties, score_precision=precision)
    columns = columns_from_arrow(table_of(qrels_rows, "relevance"), table_of(run_rows, "score"))
    got = evaluate_columns(columns, metrics, conventions)
    want, _ = reference.compute(Qrels(dicts_of(qrels_rows)), Run(dicts_of(run_rows)), metrics, conventions)
    for metric in metrics:
        assert list(want[metric]) == columns.query_ids
        for value, (qid, expected) in zip(got[metric].tolist(), want[metric].items()):
            assert math.isclose(value, expected, rel_tol=0, abs_tol=1e-12), (metric, qid, value, expected)


@settings(max_examples=60)
@given(data=qrels_and_run(max_queries=4, ties=True, missing=True, run_only=True, max_docs=12),
       shuffle=st.randoms(use_true_random=False))
def test_hash_collisions_cost_time_not_correctness(data: tuple, shuffle: random.Random) -> None:
    """With a hash that reads no byte of any id (every row of both tables collides), matches and duplicates
    are still decided on the strings: the columns are unchanged."""
    qrels_rows, run_rows = rows_of(data[0], shuffle), rows_of(data[1], shuffle)
    want = columns_from_arrow(table_of(qrels_rows, "relevance"), table_of(run_rows, "score"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_rows, "hash_strings", lambda h, ids: h)
        got = columns_from_arrow(table_of(qrels_rows, "relevance"), table_of(run_rows, "score"))
    assert_same_columns(got, want)


def test_ids_longer_than_a_word_and_non_ascii_are_matched_on_every_byte() -> None:
    """Doc ids that share their first 8 bytes (or differ only in a multi-byte character) are distinct docs."""
    docs = ["document-000001", "document-000002", "naïve-1", "naïve-2", "", "x" * 40]
    qrels = pa.table({"query_id": ["q"] * 3, "doc_id": [docs[1], docs[3], docs[4]], "relevance": [1.0, 2.0, 3.0]})
    run = pa.table({"query_id": ["q"] * len(docs), "doc_id": docs, "score": [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]})
    columns = columns_from_arrow(qrels, run)
    assert columns.hit_score.tolist() == [5.0, 3.0, 2.0]
    assert columns.hit_doc_ids(np.arange(3)) == [docs[1], docs[3], ""]


def test_integer_ids_are_read_as_str_reads_them_and_column_names_are_options() -> None:
    """Integer query/doc ids become '17', '5'; other column names are given by keyword."""
    qrels = pa.table({"qid": pa.array([17, 17], pa.int32()), "docno": [5, 6], "label": [1, 0]})
    run = pa.table({"qid": [17, 17, 18], "docno": [6, 5, 5], "sim": pa.array([2.0, 1.0, 1.0], pa.float32())})
    pair = pair_from_arrow(qrels, run, query="qid", doc="docno", relevance="label", score="sim")
    assert pair.columns.query_ids == ["17"] and pair.run_only == ["18"]
    assert pair.columns.doc_ids(np.arange(2)) == ["6", "5"]
    assert pair.columns.hit_score.tolist() == [1.0]


@pytest.mark.parametrize(("side", "rows", "query", "doc", "at"), [
    ("qrels", [("q1", "a", 1), ("q2", "a", 1), ("q1", "a", 2)], "q1", "a", (0, 2)),
    ("run", [("q1", "a", 1), ("q1", "b", 1), ("q9", "c", 1), ("q9", "c", 0.5)], "q9", "c", (2, 3)),  # run-only query
    ("run", [("q1", "b", 1), ("q1", "a", 1), ("q1", "b", 0.5), ("q1", "c", 1)], "q1", "b", (0, 2)),  # evaluated query
])
def test_a_query_doc_pair_given_twice_is_refused_with_its_rows(side: str, rows: list, query: str, doc: str,
                                                               at: tuple[int, int]) -> None:
    """Duplicates (a dict of dicts cannot hold them) name the table, the query, the doc and both rows, with
    the fix; the detail without the rows is kept apart for callers whose row numbers mean nothing."""
    other = [("q1", "a", 1.0)]
    qrels, run = (rows, other) if side == "qrels" else (other, rows)
    message = rf"the {side} table, query '{query}': doc '{doc}' is given twice.*\(rows {at[0]} and {at[1]}\)"
    with pytest.raises(TableProblem, match=message) as raised:
        pair_from_arrow(table_of(qrels, "relevance"), table_of(run, "score"))
    problem = raised.value
    assert (problem.side, problem.query_id, problem.rows) == (side, query, at)
    assert "keep one row per (query, doc)" in problem.fix and "rows" not in problem.detail


@pytest.mark.parametrize(("change", "message"), [
    (lambda q, r: (q.drop_columns(["relevance"]), r), r"qrels table: no column 'relevance'.*pass relevance="),
    (lambda q, r: (q, r.set_column(2, "score", pa.array([1.0, None]))), r"run table: column 'score' is empty"),
    (lambda q, r: (q, r.set_column(2, "score", pa.array([1.0, math.nan]))), r"'q1': the score of doc 'b' is nan"),
    (lambda q, r: (q.set_column(2, "relevance", pa.array(["1"])), r), r"must hold numbers; got string"),
    (lambda q, r: (q, r.set_column(1, "doc_id", pa.array([1.0, 2.0]))), r"strings or integers; got double"),
    (lambda q, r: (q.set_column(1, "doc_id", pa.array([1])), r), r"doc ids are int in the qrels table \(1\) but str in the run table \("),
    (lambda q, r: (q.set_column(2, "relevance", pa.array([2 ** 53 + 1])), r), r"cannot hold exactly"),
])
def test_bad_tables_raise_input_errors_saying_where_and_how_to_fix(change, message: str) -> None:  # noqa: ANN001
    """Missing columns, nulls, non-finite values, wrong types, int vs str ids, unrepresentable ints."""
    qrels = pa.table({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1.0]})
    run = pa.table({"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "score": [1.0, 0.5]})
    with pytest.raises(InputError, match=message):
        pair_from_arrow(*change(qrels, run))


def test_chunked_sliced_and_dictionary_columns_read_like_plain_ones() -> None:
    """Columns of several chunks, slices of a larger table, dictionary-encoded ids and large strings."""
    qrels = pa.table({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "relevance": [1.0, 2.0, 1.0]})
    run = pa.table({"query_id": ["q0", "q1", "q1", "q1", "q2"], "doc_id": ["z", "b", "a", "x", "c"],
                    "score": [9.0, 3.0, 2.0, 1.0, 1.0]})
    want = columns_from_arrow(qrels, run)
    chunked = pa.concat_tables([run.slice(0, 2), run.slice(2)])
    sliced = pa.concat_tables([run, run]).slice(0, 5)
    encoded = run.set_column(0, "query_id", run["query_id"].dictionary_encode())
    large = qrels.set_column(1, "doc_id", qrels["doc_id"].cast(pa.large_string()))
    for q, r in ((qrels, chunked), (qrels, sliced), (qrels, encoded), (large, run)):
        assert_same_columns(columns_from_arrow(q, r), want)


def test_empty_run_and_qrels_give_no_evaluated_query() -> None:
    """No shared query: zero evaluated queries, every qrels query missing, every run query run-only."""
    empty = pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                      "score": pa.array([], pa.float64())})
    qrels = pa.table({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1.0]})
    pair = pair_from_arrow(qrels, empty)
    assert pair.columns.n_queries == 0 and pair.missing_from_run == ["q1"] and pair.run_only == []


def test_a_run_without_qrels_rows_leaves_every_run_query_run_only() -> None:
    """An empty qrels table (a Spark bucket may hold only run rows): nothing evaluated, nothing missing."""
    empty = pa.table({"query_id": pa.array([], pa.string()), "doc_id": pa.array([], pa.string()),
                      "relevance": pa.array([], pa.float64())})
    run = pa.table({"query_id": ["q2", "q1", "q2"], "doc_id": ["a", "b", "b"], "score": [1.0, 2.0, 3.0]})
    pair = pair_from_arrow(empty, run)
    assert pair.columns.n_queries == 0 and pair.missing_from_run == [] and pair.run_only == ["q2", "q1"]
