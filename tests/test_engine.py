"""The fast backend (``backend="fast"``) equals the readable reference per query, and its TREC fast path
reads exactly what the strict reader reads (or steps aside for it). More on the columnar doors:
``tests/test_io_fast_path.py``."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import gain_maps, qrels_and_run

import evalbridge as eb
from evalbridge.backends import fast, reference
from evalbridge.metrics.catalogue import CHOICES, METRICS
from evalbridge.fast import rows as engine_rows
from evalbridge.io import _arrow_trec as arrow_io
from evalbridge.errors import InputError
from evalbridge.metrics.spec import Metric, parse_metric
from evalbridge.io.trec import write_qrels, write_run
from evalbridge.model.data import Qrels, Run
from evalbridge.model.settings import Settings

TIES = ("docid_desc", "docid_asc", "input")
PRECISIONS = ("float64", "float32")
#: Relevance levels, including those <= 0 where unjudged documents count as relevant.
LEVELS = (None, 1, 2, 0.5, 3, 0, -1)


@st.composite
def any_metric(draw: Any, *, stratified: bool = False) -> Metric:
    """Any family of the catalogue with any option value, cutoff and level (rel <= 0 included); ``stratified``: the
    estimates from a stratified sample too (xinfAP, infNDCG), which read qrels with strata."""
    name = draw(st.sampled_from(sorted(m for m in METRICS if stratified or "stratum" not in METRICS[m].inputs)))
    info = METRICS[name]
    k = None if info.cutoff == "none" else draw(st.integers(1, 12))
    if info.cutoff == "optional" and draw(st.booleans()):
        k = None
    options: dict[str, Any] = {}
    for key in info.options:
        if key == "rel":
            options[key] = draw(st.sampled_from(LEVELS))
        elif key == "p":
            options[key] = draw(st.sampled_from([None, 0.5, 0.9]))
        elif key == "gains":
            options[key] = draw(st.none() | gain_maps(probabilities=name == "ERR"))
        elif info.allowed(key):
            options[key] = draw(st.sampled_from(info.allowed(key)))
    if options.get("weights") == "graded" and name == "AP" or name == "ERR":
        options["max_grade"] = draw(st.sampled_from([3, 10, 12.5]))
    return Metric(name, k, {key: v for key, v in options.items() if v is not None})


def assert_same(qrels: dict, run: dict, metrics: list[Metric], conventions: Settings) -> None:
    """Per query, the fast backend's value is the reference's (atol 1e-12), for the same queries."""
    strata = {q: {d: "ab"[i % 2] for i, d in enumerate(docs)} for q, docs in qrels.items()}  # xinfAP, infNDCG read them
    want, _ = reference.compute(Qrels(qrels, strata=strata), Run(run), metrics, conventions)
    got, _ = fast.compute(Qrels(qrels, strata=strata), Run(run), metrics, conventions)
    for metric in metrics:
        assert list(got[metric]) == list(want[metric]), metric
        for qid, value in want[metric].items():
            assert math.isclose(got[metric][qid], value, rel_tol=0, abs_tol=1e-12), (metric, qid, got[metric][qid],
                                                                                       value, conventions)


@settings(max_examples=300)
@given(data=qrels_and_run(ties=True, negative=True, missing=True, run_only=True, max_docs=12, min_retrieved=0),
       metrics=st.lists(any_metric(stratified=True), min_size=1, max_size=6),
       ties=st.sampled_from(TIES), precision=st.sampled_from(PRECISIONS))
def test_fast_equals_reference_per_query_with_ties_and_graded_labels(data: tuple, metrics: list[Metric], ties: str,
                                                                      precision: str) -> None:
    """Any metric and option, any tie policy and precision: the fast backend gives the reference's values."""
    qrels, run = data
    assert_same(qrels, run, metrics, Settings(ties=ties, score_precision=precision))


@settings(max_examples=150)
@given(data=qrels_and_run(ties=True, float_grades=True, negative=True, max_docs=12),
       metrics=st.lists(any_metric(stratified=True), min_size=1, max_size=6), ties=st.sampled_from(TIES),
       shuffle=st.randoms(use_true_random=False))
def test_fast_equals_reference_with_float_labels_and_unsorted_runs(data: tuple, metrics: list[Metric], ties: str,
                                                                    shuffle: random.Random) -> None:
    """Float grades (LLM judges) and runs whose documents are not given in rank order."""
    qrels, run = data
    run = {q: dict(shuffle.sample(list(docs.items()), len(docs))) for q, docs in run.items()}
    assert_same(qrels, run, metrics, Settings(ties=ties))


@given(data=qrels_and_run(max_queries=4, run_only=True), picks=st.data())
def test_doc_ids_of_run_rows_in_any_order_are_the_runs_own(data: tuple, picks: st.DataObject) -> None:
    """``Columns.doc_ids`` of global rows, sorted or shuffled, repeated or not, is the run read in order."""
    from evalbridge.fast.columns import from_mappings

    qrels, run = data
    columns = from_mappings(qrels, run)
    flat = [doc for qid in columns.query_ids for doc in run[qid]]
    rows = picks.draw(st.lists(st.integers(0, len(flat) - 1), max_size=12) if flat else st.just([]))
    assert columns.doc_ids(np.array(rows, dtype=np.int64)) == [flat[r] for r in rows]


@pytest.mark.parametrize("precision", PRECISIONS)
@pytest.mark.parametrize("ties", TIES)
def test_every_catalogue_option_matches_the_reference(ties: str, precision: str) -> None:
    """Every family x every choice value x cutoffs and levels, on one input with ties, float32-only ties,
    negative and float grades, unjudged docs and a query missing from the run."""
    qrels = {"q1": {"a": 2, "b": 0, "c": 1, "d": 3, "z": 1}, "q2": {"x": 1.5, "y": -1, "w": 0.5},
             "q3": {"a": 1}, "q4": {}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 2.0, "e": 1.0, "d": 1.0 + 1e-9, "f": 0.5},
           "q2": {"y": 3.0, "x": 3.0, "v": 3.0, "w": 1.0}, "q4": {"a": 1.0}, "q9": {"a": 1.0}}
    metrics = []
    for name, info in METRICS.items():
        base = {"max_grade": 3} if name == "ERR" else {}
        for k in ([None] if info.cutoff == "none" else [1, 2, 3, 10] + ([None] if info.cutoff == "optional" else [])):
            for rel in (None, 1, 2, 0, -1) if "rel" in info.options else (None,):
                metrics.append(Metric(name, k, {**base, **({} if rel is None else {"rel": rel})}))
            for key in info.options:
                for value in info.allowed(key) or ():
                    extra = {"max_grade": 3} if (name, key, value) == ("AP", "weights", "graded") else {}
                    metrics.append(Metric(name, k, {**base, key: value, **extra}))
            if "gains" in info.options:
                gains = {0: 0.5, 1: 0, 3: 1} if name == "ERR" else {0: -1, 1: 2.5, 3: 0.5, -1: 4}
                metrics.append(Metric(name, k, {**base, "gains": gains}))
                metrics.append(Metric(name, k, {**base, "gains": gains, "rel": 1}))
            if "p" in info.options:
                metrics.append(Metric(name, k, {**base, "p": 0.95}))
    assert_same(qrels, run, list(dict.fromkeys(metrics)), Settings(ties=ties, score_precision=precision))


@pytest.mark.parametrize(("ties", "expected"), [("docid_desc", 1 / 3), ("docid_asc", 1.0), ("input", 0.5)])
def test_mixed_tie_group_follows_the_tie_policy(ties: str, expected: float) -> None:
    """Three docs tie; only 'a' is relevant: trec_eval order c, b, a; ascending a, b, c; input order b, a, c."""
    values, _ = fast.compute(Qrels({"q": {"a": 1}}), Run({"q": {"b": 1.0, "a": 1.0, "c": 1.0}}),
                             [parse_metric("RR")], Settings(ties=ties))
    assert values[parse_metric("RR")] == {"q": expected}


def test_float32_precision_makes_near_scores_tie() -> None:
    """1 + 1e-9 and 1 are one C float: with float32 they tie and the doc id decides (trec_eval <= 9)."""
    qrels, run = Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0 + 1e-9, "b": 1.0}})
    rr = parse_metric("RR")
    assert fast.compute(qrels, run, [rr], Settings())[0][rr] == {"q": 1.0}
    assert fast.compute(qrels, run, [rr], Settings(score_precision="float32"))[0][rr] == {"q": 0.5}


def test_ints_beyond_float64_are_left_to_the_reference() -> None:
    """Scores 2**60 + 1 and 2**60 differ as ints but not as float64: the reference's exact answer is kept."""
    qrels, run = Qrels({"q": {"a": 1}}), Run({"q": {"b": 2 ** 60, "a": 2 ** 60 + 1}})
    rr = parse_metric("RR")
    assert fast.compute(qrels, run, [rr])[0][rr] == reference.compute(qrels, run, [rr])[0][rr] == {"q": 1.0}


@pytest.mark.parametrize("ids", [["q1", "q2", ""], ["q1", "line\nbreak", "q3"], ["\n", "q2", "q3"]])
def test_results_are_keyed_by_the_query_ids_whatever_characters_they_hold(ids: list[str]) -> None:
    """The result dicts are keyed by copies of the ids made by joining and splitting on newlines;
    ids holding a newline keep their own objects, and every value stays with its query."""
    qrels = Qrels({q: {"a": 1} for q in ids})
    run = Run({q: {"a": score, "b": 0.5} for q, score in zip(ids, (1.0, 0.9, 0.1))})  # a ranks 1st, 1st, 2nd
    rr = parse_metric("RR")
    assert fast.compute(qrels, run, [rr])[0][rr] == {ids[0]: 1.0, ids[1]: 1.0, ids[2]: 0.5}


def test_auto_backend_uses_reference_for_small_inputs_and_fast_for_large() -> None:
    """The default backend records which engine computed the numbers; both give the same values."""
    small = eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 0.5}}, "P@1")
    assert small.provenance.backend == "reference"
    run = {f"q{i}": {f"d{j}": float(-j) for j in range(100)} for i in range(1100)}
    qrels = {f"q{i}": {f"d{i % 100}": 1} for i in range(1100)}
    large = eb.evaluate(qrels, run, ["nDCG@10", "AP"])
    assert large.provenance.backend == "fast"
    assert large.values == eb.evaluate(qrels, run, ["nDCG@10", "AP"], backend="reference").values


# ---------------------------------------------------------------- the TREC fast path


def write_pair(folder: Path, qrels: dict, run: dict) -> tuple[Path, Path]:
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"
    write_qrels({q: d for q, d in qrels.items() if d}, qrels_path)
    write_run(run, run_path, tag="sys")
    return qrels_path, run_path


def read_columns(qrels_path: Path, run_path: Path) -> tuple[Qrels | None, Run | None]:
    """Both files through the columnar fast path, whatever their size."""
    return (arrow_io.read_qrels_columns(qrels_path, large_only=False),
            arrow_io.read_run_columns(run_path, large_only=False))


def assert_same_results(qrels_path: Path, run_path: Path, metrics: list[str], **options: Any) -> None:
    """The files read by the columnar fast path (each on its own, or the strict reader where it declines)
    and evaluated by the engine equal the strict readers + reference, provenance included."""
    fast_qrels, fast_run = read_columns(qrels_path, run_path)
    try:
        qrels = fast_qrels if fast_qrels is not None else eb.read_qrels(qrels_path)
        run = fast_run if fast_run is not None else eb.read_run(run_path)
    except InputError as error:  # declined, and the strict reader's error
        with pytest.raises(InputError) as raised:
            eb.evaluate(eb.read_qrels(qrels_path), eb.read_run(run_path), metrics, backend="reference")
        assert str(raised.value) == str(error)
        return
    try:
        want = eb.evaluate(eb.read_qrels(qrels_path), eb.read_run(run_path), metrics, backend="reference", **options)
    except InputError as error:  # e.g. a grade above AP's max_grade: the same error either way
        with pytest.raises(InputError) as raised:
            eb.evaluate(qrels, run, metrics, backend="fast", **options)
        assert str(raised.value) == str(error)
        return
    got = eb.evaluate(qrels, run, metrics, backend="fast", **options)
    assert got.metrics == want.metrics
    for metric in want.metrics:
        assert list(got.values[metric]) == list(want.values[metric])
        for qid, value in want.values[metric].items():
            assert math.isclose(got.values[metric][qid], value, rel_tol=0, abs_tol=1e-12)
    for field in ("missing_from_run", "ignored_run_only", "queries_evaluated", "relevance_level"):
        assert getattr(got.provenance, field) == getattr(want.provenance, field), field
    assert got.provenance.backend == "fast"


@settings(max_examples=40)
@given(data=qrels_and_run(ties=True, float_grades=True, negative=True, missing=True, run_only=True, min_retrieved=1),
       metrics=st.lists(any_metric(), min_size=1, max_size=4), ties=st.sampled_from(TIES))
def test_trec_fast_path_equals_strict_reader_and_reference(tmp_path_factory: pytest.TempPathFactory, data: tuple,
                                                           metrics: list[Metric], ties: str) -> None:
    """Files written by evalbridge, each read by pyarrow into columns and paired by the engine: same
    Results as the strict readers and the reference."""
    qrels, run = data
    paths = write_pair(tmp_path_factory.mktemp("trec"), qrels, run)
    assert all(obj is not None and obj.columnar is not None for obj in read_columns(*paths))
    assert_same_results(*paths, [str(m) for m in metrics], ties=ties)


def test_trec_fast_path_handles_interleaved_queries_tabs_and_gzip(tmp_path: Path) -> None:
    """Query blocks that come back later, tab-separated qrels and a gzip run still take the fast path."""
    import gzip

    qrels_path, run_path = tmp_path / "qrels.tsv", tmp_path / "run.gz"
    qrels_path.write_text("q2\t0\tb\t1\nq1\t0\ta\t2\nq2\t0\tc\t3\nq1\t0\tz\t1\n")
    lines = "q1 Q0 a 1 3 s\nq2 Q0 c 1 9 s\nq1 Q0 b 2 2 s\nq3 Q0 a 1 1 s\nq2 Q0 b 2 9 s\n"
    run_path.write_bytes(gzip.compress(lines.encode()))
    assert all(obj is not None for obj in read_columns(qrels_path, run_path))
    assert_same_results(qrels_path, run_path, ["nDCG@2", "AP", "P@1", "RR(rel=2)"])


UNUSUAL = {
    "comment line": "# produced by bm25\nq1 Q0 a 1 2.0 s\n",
    "comment with six words": "#q Q0 a 1 2.0 s\nq1 Q0 a 1 2.0 s\n",
    "blank line": "q1 Q0 a 1 2.0 s\n\nq1 Q0 b 2 1.0 s\n",
    "two spaces (a missing column)": "q1 Q0 a  2.0 s\nq1 Q0 b 2 1.0 s\n",
    "leading space": " q1 Q0 a 1 2.0 s\n",
    "tabs and spaces": "q1\tQ0 a 1 2.0 s\n",
    "vertical tab inside a field": "q1 Q0 a\x0bx 1 2.0 s\n",
    "no-break space inside a field": "q1 Q0 a\u00a0x 1 2.0 s\n",
    "byte order mark": "\ufeffq1 Q0 a 1 2.0 s\n",
    "duplicate doc": "q1 Q0 a 1 2.0 s\nq1 Q0 a 2 1.0 s\n",
    "duplicate doc in a later block": "q1 Q0 a 1 2.0 s\nq2 Q0 a 1 1.0 s\nq1 Q0 a 3 1.0 s\n",
    "duplicate doc among queries of unequal length": "q1 Q0 a 1 3 s\nq1 Q0 b 2 2 s\nq1 Q0 a 3 1 s\nq2 Q0 a 1 1 s\n"
                                                     "q2 Q0 b 2 0 s\nq3 Q0 a 1 3 s\nq3 Q0 b 2 2 s\nq3 Q0 c 3 1 s\n",
    "NaN score": "q1 Q0 a 1 nan s\n",
    "infinite score": "q1 Q0 a 1 1e400 s\n",
    "five columns": "q1 Q0 a 1 2.0\n",
    "seven columns": "q1 Q0 a 1 2.0 s extra\n",
    "score that is not a number": "q1 Q0 a 1 high s\n",
    "not UTF-8": "q1 Q0 a\xff 1 2.0 s\n",
}


@pytest.mark.parametrize("case", sorted(UNUSUAL))
def test_unusual_run_files_go_to_the_strict_reader(tmp_path: Path, case: str) -> None:
    """Anything the columnar reader might read differently is declined; the result (or the error,
    with file:line) is the strict reader's, whatever the file's size."""
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 b 2\nq2 0 a 1\n")
    run_path.write_bytes(UNUSUAL[case].encode("latin-1" if case == "not UTF-8" else "utf-8"))
    assert arrow_io.read_run_columns(run_path, large_only=False) is None
    assert_same_results(qrels_path, run_path, ["P@2", "AP"])


def test_rank_column_is_ignored_as_by_the_strict_reader(tmp_path: Path) -> None:
    """Any rank token is accepted (the order comes from the scores), on the fast path too."""
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 b 2\n")
    run_path.write_text("q1 Q0 a first 1.0 s\nq1 Q0 b 7.5 2.0 s\nq1 Q0 c - 3.0 s\n")
    assert all(obj is not None for obj in read_columns(qrels_path, run_path))
    assert_same_results(qrels_path, run_path, ["AP", "nDCG"])


def test_duplicate_qrels_lines_raise_the_strict_readers_error(tmp_path: Path) -> None:
    """A doc judged twice is declined by the fast path and refused by the strict reader with both line numbers."""
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 b 2\nq1 0 a 0\n")
    assert arrow_io.read_qrels_columns(qrels_path, large_only=False) is None
    with pytest.raises(InputError, match=r"qrels.txt:3.*lines 1 and 3"):
        eb.read_qrels(qrels_path)


def test_a_hash_shared_within_a_file_sends_the_files_to_the_strict_reader(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """With a hash that collides for every id the fast path declines, and the strict reader answers."""
    def same_hash_for_all(h: np.ndarray, array: Any) -> np.ndarray:
        h.fill(0)
        return h

    monkeypatch.setattr(engine_rows, "hash_strings", same_hash_for_all)
    qrels = {"q1": {"a": 1, "b": 2, "c": 0}, "q2": {"a": 3}}
    run = {"q1": {"a": 1.0, "b": 1.0, "x": 2.0}, "q2": {"b": 1.0, "a": 0.5}, "q3": {"a": 1.0}}
    paths = write_pair(tmp_path, qrels, run)
    assert read_columns(*paths) == (None, None)
    assert_same_results(*paths, ["nDCG@2", "AP", "RR"])


def test_hashes_shared_across_queries_and_files_are_matched_by_comparing_the_ids(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """With a hash of (length of the query id, length of the doc id), distinct within each query here,
    ``q1``/``a`` and ``q2``/``a`` share one within the qrels, and ``x`` and ``a`` one across the files:
    only the strings tell that they are not the same (query, doc)."""
    def lengths(h: np.ndarray, array: Any) -> np.ndarray:
        h += np.diff(engine_rows.string_offsets(array)).astype(np.uint64)
        return h

    monkeypatch.setattr(engine_rows, "hash_strings", lengths)
    qrels = {"q1": {"a": 1, "bb": 2, "ccc": 0}, "q2": {"a": 3, "bb": 1}}
    run = {"q1": {"x": 2.0, "bb": 1.0, "dddd": 1.0}, "q2": {"bb": 1.0, "y": 0.5, "ffffff": 0.2},
           "q3": {"a": 1.0, "hh": 0.5, "iii": 0.1}}  # blocks of one length: each query's hashes sorted alone
    paths = write_pair(tmp_path, qrels, run)
    fast_qrels, fast_run = read_columns(*paths)
    assert fast_qrels is not None and fast_run is not None
    assert len(set(fast_qrels.columnar.hashes.tolist())) < fast_qrels.n_rows  # the shared hashes are there
    assert_same_results(*paths, ["nDCG@2", "AP", "RR", "R@2"])


@given(width=st.integers(1, 6), shortfalls=st.lists(st.sampled_from([0, 0, 0, 1, 3]), min_size=1, max_size=8),
       values=st.data(), repeat_a_query=st.booleans(), high=st.booleans())
def test_shared_hashes_are_found_whatever_the_layout_of_the_blocks(width: int, shortfalls: list[int],
                                                                   values: st.DataObject,
                                                                   repeat_a_query: bool, high: bool) -> None:
    """Equal-length blocks, padded blocks of unequal length, a query in two blocks: a hash shared
    within a query is always found, and hashes that share only their top 32 bits (the keys sorted
    first) are not taken for one (hashes here are ``query * 1000 + a small number``, in the top or the
    bottom 32 bits, plus 0 or 1 in the bottom bits)."""
    from evalbridge.model.columnar import RowTable

    lengths = [max(1, width - short) for short in shortfalls]
    codes = list(range(len(lengths)))
    if repeat_a_query and len(codes) > 1:
        codes[-1] = 0
    row_codes = np.repeat(codes, lengths)
    small = values.draw(st.lists(st.integers(0, 8), min_size=len(row_codes), max_size=len(row_codes)))
    low = values.draw(st.lists(st.integers(0, 1), min_size=len(row_codes), max_size=len(row_codes)))
    hashes = (row_codes * 1000 + np.array(small)).astype(np.uint64)
    if high:
        hashes = (hashes << np.uint64(32)) | np.array(low, dtype=np.uint64)
    table = RowTable(query_ids=tuple(f"q{c}" for c in sorted(set(codes))),
                     block_start=np.r_[0, np.cumsum(lengths)[:-1]].astype(np.int64),
                     block_code=np.array(codes, dtype=np.int64), docs=None, values=np.zeros(len(hashes)),
                     integral=np.zeros(len(hashes), dtype=bool), hashes=hashes)
    assert engine_rows.shared_hash(table) == (len(set(hashes.tolist())) < len(hashes))


@settings(max_examples=60)
@given(blocks=st.lists(st.lists(st.text("ab\u00e9\u6587-", min_size=0, max_size=20), min_size=1, max_size=9),
                       min_size=1, max_size=12),
       slice_rows=st.integers(1, 7), duplicate=st.booleans())
def test_hashes_and_the_duplicate_check_do_not_depend_on_how_the_rows_are_sliced(blocks: list[list[str]], slice_rows: int,
                                                                               duplicate: bool) -> None:
    """Hashing and the duplicate check go through the rows a slice at a time, the slices shared between
    threads: with slices of a few rows (many slices, so several threads) the hashes are the same as
    with one slice, and a doc given twice for a query is found either way."""
    import pyarrow as pa

    rows = [(f"q{n}", doc) for n, docs in enumerate(blocks) for doc in dict.fromkeys(docs)]
    if duplicate:
        rows.append(rows[-1])
    queries, docs = pa.array([q for q, _ in rows]), pa.array([d for _, d in rows])

    def build() -> Any:
        return engine_rows.build_table(queries, docs, np.zeros(len(rows)), False)

    whole = build()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine_rows, "_SLICE", slice_rows)
        sliced = build()
        assert np.array_equal(sliced.hashes, whole.hashes)
        assert engine_rows.shared_hash(sliced) == engine_rows.shared_hash(whole) == duplicate


@given(keys=st.lists(st.integers(0, 2 ** 33), max_size=60), small=st.booleans())
def test_stable_order_is_numpys_stable_argsort(keys: list[int], small: bool) -> None:
    """The radix passes over 16-bit digits give ``argsort(kind="stable")``, with one digit or several."""
    from evalbridge.fast.placing import stable_order

    array = np.array([k % 50 if small else k for k in keys], dtype=np.int64)
    n_keys = int(array.max()) + 1 if len(array) else 1
    assert stable_order(array, n_keys).tolist() == np.argsort(array, kind="stable").tolist()


@settings(max_examples=300)
@given(lengths=st.lists(st.integers(0, 9), min_size=1, max_size=8),
       values=st.lists(st.sampled_from([0.0, 1.0, 1.0, 2.5, -1.0, float("inf"), -float("inf"), 3.0]), min_size=72,
                       max_size=72),
       uniform=st.booleans())
def test_each_query_is_put_in_score_then_input_order_whatever_its_layout(lengths: list[int], values: list[float],
                                                                         uniform: bool) -> None:
    """The rows of each query not already in rank order are sorted by score descending, ties in input
    order, infinities included; queries of one length (sorted side by side as a grid) and of mixed
    lengths (sorted at once, then grouped) alike; rows of queries already in order do not move."""
    from evalbridge.fast.placing import _sort_unsorted

    if uniform:
        lengths = [max(lengths)] * len(lengths)
    offsets = np.r_[0, np.cumsum(lengths)].astype(np.int64)
    scores = np.array(values[:int(offsets[-1])], dtype=np.float64)
    want = [row for q in range(len(lengths))
            for row in sorted(range(int(offsets[q]), int(offsets[q + 1])), key=lambda r: (-scores[r], r))]
    order = _sort_unsorted(scores, offsets)
    assert (list(range(len(scores))) if order is None else order.tolist()) == want


def test_a_doc_ids_hash_does_not_depend_on_the_other_ids_of_its_file(tmp_path: Path) -> None:
    """An id's hash folds its own 8-byte words only: ``a`` hashes the same in a qrels file that also
    holds a 24-byte id as in a run whose ids are short, so the judged ``a`` is found (P@1 = 1)."""
    import pyarrow as pa

    short, long = pa.array(["a", "b"]), pa.array(["a", "a-very-long-document-id"])
    assert engine_rows.hash_strings(np.zeros(2, dtype=np.uint64), short)[0] == \
        engine_rows.hash_strings(np.zeros(2, dtype=np.uint64), long)[0]
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 a-very-long-document-id 0\n")
    run_path.write_text("q1 Q0 a 1 1.0 s\nq1 Q0 b 2 0.5 s\n")
    qrels, run = read_columns(qrels_path, run_path)
    assert eb.evaluate(qrels, run, "P@1", backend="fast")["P@1"] == 1.0
    assert_same_results(qrels_path, run_path, ["P@1", "AP"])


def test_an_empty_doc_id_is_matched_across_tables_like_any_other() -> None:
    """An empty doc id (a table may hold one) hashes the same alone in its slice as beside longer ids:
    judged in the qrels, it is found in the run (the fast backend gave P@1 = 0 here, the reference 1)."""
    import pandas as pd

    qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["", "a"], "relevance": [1, 0]})
    run = pd.DataFrame({"query_id": ["q1"], "doc_id": [""], "score": [1.0]})
    assert eb.evaluate(qrels, run, "P@1", backend="fast")["P@1"] == \
        eb.evaluate(qrels, run, "P@1", backend="reference")["P@1"] == 1.0


def test_long_ids_differing_only_in_the_middle_have_distinct_hashes() -> None:
    """Every 8-byte word of an id enters its hash (URL-like and ClueWeb-like ids differ in the middle)."""
    import pyarrow as pa

    ids = [f"clueweb09-en{segment:04d}-00-00001" for segment in range(500)]
    ids += [f"http://example.com/{n}/index.html" for n in range(500)]
    hashes = engine_rows.hash_strings(np.zeros(len(ids), dtype=np.uint64), pa.array(ids))
    assert len(set(hashes.tolist())) == len(ids)


def test_non_ascii_ids_are_read_by_the_fast_path(tmp_path: Path) -> None:
    """UTF-8 ids (not whitespace) are kept byte for byte, as the strict reader keeps them."""
    qrels = {"问题1": {"文档a": 1, "doc-é": 2}}
    run = {"问题1": {"文档a": 0.5, "doc-é": 0.5, "文档b": 0.7}}
    paths = write_pair(tmp_path, qrels, run)
    assert all(obj is not None for obj in read_columns(*paths))
    assert_same_results(*paths, ["nDCG@3", "RR"], ties="docid_asc")


def test_small_files_take_the_ordinary_readers_under_auto(tmp_path: Path) -> None:
    """A small TREC file is read line by line (no pyarrow import needed) and evaluated by the reference."""
    paths = write_pair(tmp_path, {"q1": {"a": 1}}, {"q1": {"a": 1.0}})
    assert arrow_io.read_run_columns(paths[1]) is None and eb.read_run(paths[1]).columnar is None
    assert eb.evaluate(*map(str, paths), "P@1").provenance.backend == "reference"


# ---------------------------------------------------------------- Qrels/Run validation fast path

VALID = [
    {"q1": {"a": 1, "b": 2.5}, "q2": {}},
    {1: {2: 1}},
    {"q": {1: 1.0}},
    {"q": {"a": 2 ** 80, "b": -0.0}},
]
INVALID = [
    {"q": {"a": True}},  # a boolean is not a grade (evalbridge.common.values)
    {"q": {"a": 10 ** 400}},  # beyond float64: an InputError, not an OverflowError
    {"q": {"a": float("nan")}},
    {"q": {"a": 1e308, "b": 1e308, "c": float("inf")}},
    {"q": {"a": "1"}},
    {"q": {"a": 1, 2: 1}},
    {"q": [("a", 1)]},
    {"q1": {"a": 1}, 2: {"b": 1}},
]


class _Mapping(dict):
    """A dict subclass: forces the general validation loop."""


@pytest.mark.parametrize("data", VALID)
def test_fast_validation_builds_what_the_general_loop_builds(data: dict) -> None:
    """Plain dicts take the C-level path; the result equals the general loop's (values, types and id kinds)."""
    for cls in (Qrels, Run):
        quick, general = cls(data), cls(_Mapping((q, _Mapping(d) if isinstance(d, dict) else d)
                                                 for q, d in data.items()))
        assert quick.to_dict() == general.to_dict()
        assert [list(map(type, d.values())) for d in quick.values()] == \
               [list(map(type, d.values())) for d in general.values()]
        assert (quick.query_id_kind, quick.doc_id_kind) == (general.query_id_kind, general.doc_id_kind)


@pytest.mark.parametrize("data", INVALID)
def test_fast_validation_raises_what_the_general_loop_raises(data: dict) -> None:
    """Bad values or ids give the same InputError whichever path validates them, copied or not."""
    messages = []
    for wrap, copy in ((dict, True), (dict, False), (_Mapping, True)):
        with pytest.raises(InputError) as raised:
            Run(wrap((q, _Mapping(d) if wrap is _Mapping and isinstance(d, dict) else d) for q, d in data.items()),
                copy=copy)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] == messages[2]


def test_rows_are_copied_unless_copy_is_false_and_read_only_either_way() -> None:
    """By default later changes to the input do not show; with ``copy=False`` they do (the rows are
    wrapped), and neither object can be changed through its own API."""
    data = {"q1": {"a": 1.0, "b": 0.5}}
    copied, wrapped = Run(data), Run(data, copy=False)
    data["q1"]["c"] = 2.0
    assert list(copied["q1"]) == ["a", "b"]
    assert list(wrapped["q1"]) == ["a", "b", "c"]
    for run in (copied, wrapped):
        for row in (run["q1"], run.get("q1"), *run.values(), *dict(run.items()).values()):
            with pytest.raises(TypeError):
                row["a"] = 9.0  # type: ignore[index]
    assert wrapped.get("q9") is None and wrapped.get("q9", {}) == {}
    assert wrapped.keys() == {"q1"} and wrapped.keys() - {"q1"} == set()
    odd = {"q1": {1: 1.0}}  # int doc ids: converted, so copied whatever ``copy`` says
    assert Run(odd, copy=False)["q1"] == {"1": 1.0} and odd == {"q1": {1: 1.0}}


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]),
                       st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from([0, 1, 2, 2.0, 0.5, -1, 7.25])),
                       min_size=1))
def test_grade_facts_are_those_of_every_grade(data: dict) -> None:
    """grades, max_grade and is_integral (read from the distinct grades) say what a pass over every grade says
    (an ``int`` stands for an equal ``float``: ``2`` for ``2.0``)."""
    every = [g for docs in data.values() for g in docs.values()]
    qrels = Qrels(data)
    top = max(every, default=0)
    assert qrels.grades == set(every)
    assert qrels.max_grade == top
    assert type(qrels.max_grade) is (int if not every or any(g == top and type(g) is int for g in every) else float)
    assert qrels.is_integral == all(float(g).is_integer() for g in every)


def test_an_id_hashes_the_same_whatever_the_longest_id_of_its_file(tmp_path: Path) -> None:
    """The run's `d1` matches the qrels' `d1` when the run also holds a much longer id (the hash of an id
    once depended on the longest id of its file, and the fast path then found no match: P@1 0.0 for 1.0)."""
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("q1 0 d1 1\nq2 0 short 2\n")
    run_path.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 a-very-long-document-id-of-many-words 2 1.0 t\n"
                        "q2 Q0 short 1 3.0 t\nq2 Q0 x 2 1.0 t\n")
    qrels = arrow_io.read_qrels_columns(qrels_path, large_only=False)
    run = arrow_io.read_run_columns(run_path, large_only=False)
    assert qrels is not None and run is not None and run.columnar is not None
    fast = eb.evaluate(qrels, run, ["P@1", "nDCG@2"], backend="fast")
    reference = eb.evaluate(eb.read_qrels(qrels_path), eb.read_run(run_path), ["P@1", "nDCG@2"], backend="reference")
    assert fast.values == reference.values and fast["P@1"] == 1.0


@pytest.mark.parametrize(("metric", "options"), [
    ("nDCG@10", {}),
    ("nDCG(gain=exp)@10", {}),
    ("nDCG(gains={0:1})@10", {}),   # a gain map reads the docs judged 0
    ("Bpref", {}),
    ("Judged@10", {}),
    ("Hole@10", {}),                # reads the pool: docs judged for any query
    ("P@5", {"judged_only": True}),
    ("P@5", {"depth": 3}),
])
def test_columns_read_by_pyarrow_hold_what_metrics_reading_judgements_need(
        tmp_path: Path, metric: str, options: dict) -> None:
    """TREC files read into columns keep every judgement (grade 0 included) and give the fast backend the
    docs judged 0 and the pool, so metrics that read judgements and the cutting conventions get the
    reference's values from columnar inputs."""
    qrels = {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 1, "e": 0}}
    run = {"q1": {"a": 3.0, "x": 2.5, "b": 2.0, "c": 1.0, "d": 0.2}, "q2": {"e": 2.0, "d": 1.0, "y": 0.5}}
    qrels_path, run_path = write_pair(tmp_path, qrels, run)
    columnar = (arrow_io.read_qrels_columns(qrels_path, large_only=False),
                arrow_io.read_run_columns(run_path, large_only=False))
    assert all(x is not None and x.columnar is not None for x in columnar)
    got = eb.evaluate(*columnar, metric, backend="fast", **options)
    assert got.values == eb.evaluate(qrels, run, metric, backend="reference", **options).values
