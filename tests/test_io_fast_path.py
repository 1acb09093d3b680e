"""The columnar doors: every fast reader reads what its strict reader reads, or steps aside.

* TREC files: :mod:`evalbridge.io._arrow_trec` against :mod:`evalbridge.io.trec`, on generated files
  (tabs, unicode, comments, blank lines, BOM, CRLF, gzip, duplicates, odd numbers, ids with spaces);
* tables: :func:`evalbridge.io.tables.read_table` against a row-by-row reading of the same rows;
* RAG logs: :mod:`evalbridge.io._rag_columns` against :func:`evalbridge.io.rag.read_log`'s own loop;
* a columnar ``Qrels`` / ``Run`` equals the ``dict`` one through the whole mapping API, pickling
  and copying, and through ``evaluate`` for every metric, tie policy and score precision;
* the command line and config runs get the columnar objects and never turn them back into dicts.
"""

from __future__ import annotations

import copy
import gzip
import json
import math
import pickle
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import qrels_and_run
from test_engine import TIES, any_metric

import evalbridge as eb
from evalbridge.backends import fast, reference
from evalbridge.model.columnar import RowTable
from evalbridge.fast import rows as engine_rows
from evalbridge.errors import InputError
from evalbridge.io import _arrow_trec as arrow_io
from evalbridge.io import _rag_columns as rag_columns
from evalbridge.io import rag
from evalbridge.metrics.spec import Metric
from evalbridge.model.data import Qrels, Run
from evalbridge.model.settings import Settings

FILES = settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])


def typed(obj: Any) -> dict[str, list[tuple[str, Any, type]]]:
    """Every row with its value's type, in order: equality that tells 2 from 2.0."""
    return {qid: [(doc, value, type(value)) for doc, value in docs.items()] for qid, docs in obj.items()}


def outcome(read: Any, *args: Any, **options: Any) -> Any:
    """What a reader gives: the object, or the InputError's message."""
    try:
        return read(*args, **options)
    except InputError as error:
        return error


# ---------------------------------------------------------------- TREC files

QUERY_IDS = ("q1", "q2", "10", "é1", "问题")
DOC_IDS = ("a", "b", "A", "doc-é", "文档", "clueweb09-en0000-00-00001", "http://example.com/a/b/c.html")
GRADES = ("0", "1", "2", "-1", "2.5", "1e1", "+3", "007", "-0", "2.0")
SCORES = ("1.0", "0.5", "2", "-0.0", "1e-3", "3.25", "7", "-12.5")
#: Tokens a strict reader reads differently, or refuses.
ODD_TOKENS = ("#c", "q1 x", "x y", "d\u00a0e", "d\x0be", "d\u2003e", "d\re", "d\x1c", "\r", "", "nan", "inf",
              "-inf", "1e400", "x", "1_0", "9007199254740993", "0x10", "١")
#: Line-level changes: each makes a line something the strict reader skips, refuses or splits otherwise.
ODD_LINES = ("two delimiters", "other delimiter", "leading space", "trailing space", "extra word", "missing word",
             "comment", "blank", "duplicate")


@st.composite
def trec_text(draw: Any, *, run: bool) -> tuple[bytes, bool]:
    """The bytes of a TREC qrels or run file: plain lines (unique (query, doc) pairs, unicode ids, int and
    float numbers, spaces or tabs, CRLF, BOM, gzip), and in half the files one thing the fast path must
    decline or read as the strict reader does (an odd token, an odd line, a byte that is not UTF-8)."""
    pairs = draw(st.lists(st.tuples(st.sampled_from(QUERY_IDS), st.sampled_from(DOC_IDS)), min_size=1, max_size=12,
                          unique=True))
    if draw(st.booleans()):
        pairs.sort(key=lambda pair: QUERY_IDS.index(pair[0]))  # each query one block, as files usually are
    delimiter = draw(st.sampled_from([" ", "\t"]))
    rows = []
    for qid, doc in pairs:
        if run:
            rows.append([qid, "Q0", doc, draw(st.sampled_from(["1", "2", "x"])), draw(st.sampled_from(SCORES)),
                         draw(st.sampled_from(["bm25", "dense"]))])
        else:
            rows.append([qid, "0", doc, draw(st.sampled_from(GRADES))])
    lines = [delimiter.join(words) for words in rows]
    change = draw(st.sampled_from(("none", "token", "line", "not UTF-8")))
    at = draw(st.integers(0, len(rows) - 1))
    if change == "token":
        words = rows[at]
        words[draw(st.integers(0, len(words) - 1))] = draw(st.sampled_from(ODD_TOKENS))  # (read or only split off)
        lines[at] = delimiter.join(words)
    elif change == "line":
        other = " " if delimiter == "\t" else "\t"
        line, words = lines[at], rows[at]
        lines[at] = {"two delimiters": line.replace(delimiter, delimiter * 2, 1),
                     "other delimiter": line.replace(delimiter, other, 1), "leading space": " " + line,
                     "trailing space": line + " ", "extra word": line + delimiter + "extra",
                     "missing word": delimiter.join(words[:-1]), "comment": "# " + line, "blank": "",
                     "duplicate": line}[draw(st.sampled_from(ODD_LINES))]
        if lines[at] == line:
            lines.append(delimiter.join([*words[:-1], "1"]))  # the same (query, doc) again
    end = "\r\n" if draw(st.integers(0, 6)) == 0 else "\n"
    text = end.join(lines) + (end if draw(st.booleans()) else "")
    if draw(st.integers(0, 10)) == 0:
        text = "\ufeff" + text
    raw = text.encode("utf-8")
    if change == "not UTF-8":
        raw = raw.replace(b"a", b"\xff", 1) if b"a" in raw else raw + b"\xff"
    return raw, draw(st.integers(0, 4)) == 0


def write_file(folder: Path, name: str, raw: bytes, zipped: bool) -> Path:
    path = folder / (name + (".gz" if zipped else ""))
    path.write_bytes(gzip.compress(raw) if zipped else raw)
    return path


def assert_same_object(got: Qrels | Run, want: Qrels | Run) -> None:
    """Columnar ``got`` holds what the strict ``want`` holds: rows, order, value types, ids, name, notes."""
    assert got.columnar is not None
    assert typed(got) == typed(want)
    assert list(got) == list(want)
    assert (got.query_id_kind, got.doc_id_kind, got.source, got.notes) == \
        (want.query_id_kind, want.doc_id_kind, want.source, want.notes)
    assert got.n_rows == want.n_rows
    if isinstance(want, Run):
        assert got.name == want.name
    else:
        assert got.grades == want.grades and got.max_grade == want.max_grade
        assert type(got.max_grade) is type(want.max_grade)


@FILES
@given(qrels=trec_text(run=False), run=trec_text(run=True), metric=any_metric(), ties=st.sampled_from(TIES))
def test_trec_fast_path_reads_what_the_strict_reader_reads_or_declines(tmp_path: Path, qrels: tuple, run: tuple,
                                                                        metric: Metric, ties: str) -> None:
    """On generated files: where the strict reader raises, the fast path declines (None); where the fast
    path accepts, the strict reader reads the same rows, and the engine on the columns evaluates them as
    the reference does on the strict reader's dicts."""
    qrels_path = write_file(tmp_path, "qrels.txt", *qrels)
    run_path = write_file(tmp_path, "run.txt", *run)
    fast_qrels = arrow_io.read_qrels_columns(qrels_path, large_only=False)
    fast_run = arrow_io.read_run_columns(run_path, large_only=False)
    strict_qrels = outcome(eb.io.trec.read_qrels, qrels_path)
    strict_run = outcome(eb.io.trec.read_run, run_path)
    for what, got, want in (("qrels", fast_qrels, strict_qrels), ("run", fast_run, strict_run)):
        event(f"{what}: {'strict error' if isinstance(want, InputError) else 'declined' if got is None else 'columns'}")
        if isinstance(want, InputError):
            assert got is None
        elif got is not None:
            assert_same_object(got, want)
    if fast_qrels is None or fast_run is None or not any(q in fast_run for q in fast_qrels):
        return
    conventions = Settings(ties=ties)
    try:
        got, _ = fast.compute(fast_qrels, fast_run, [metric], conventions)
    except ValueError:  # AP(weights=graded) with grades beyond its max_grade: refused either way
        with pytest.raises(ValueError):
            reference.compute(strict_qrels, strict_run, [metric], conventions)
        return
    want, _ = reference.compute(strict_qrels, strict_run, [metric], conventions)
    assert list(got[metric]) == list(want[metric])
    for qid, value in want[metric].items():
        assert math.isclose(got[metric][qid], value, rel_tol=0, abs_tol=1e-12), (metric, qid)


def separators_by_the_rule(raw: bytes, crlf: bool) -> tuple[int, bool] | None:
    """What :func:`arrow_io._separators` checks, byte by byte: no byte below 0x21 first, last (but a
    newline) or beside another; a CR only before a newline and after a field, in a CRLF file (not
    counted), none in another; else (bytes below 0x21, a byte >= 0x80)."""
    if not raw or raw[0] < 0x21 or (raw[-1] < 0x21 and raw[-1] != 0x0A):
        return None
    low = []
    for at, byte in enumerate(raw):
        if byte == 0x0D:
            if not crlf or at + 1 == len(raw) or raw[at + 1] != 0x0A or raw[at - 1] < 0x21:
                return None
        low.append(byte < 0x21 and byte != 0x0D)
    if any(a and b for a, b in zip(low, low[1:])):
        return None
    return sum(low), any(byte >= 0x80 for byte in raw)


@settings(max_examples=300)
@given(raw=st.lists(st.sampled_from([b"a", b"b7", b" ", b"\t", b"\n", b"\r\n", b"\r", b"\x0b", b"\xc3\xa9"]),
                    max_size=40).map(b"".join),
       crlf=st.booleans(), share=st.integers(1, 9), piece=st.integers(1, 9))
def test_the_byte_check_follows_its_rule_whatever_the_shares_and_slices(raw: bytes, crlf: bool, share: int,
                                                                         piece: int) -> None:
    """The byte check before Arrow parses a TREC file is cut into shares (one per thread) and slices:
    with shares and slices of a few bytes, so that every boundary falls between two delimiters, a CR
    and its newline or inside a field somewhere, it gives what the rule gives byte by byte."""
    import numpy as np

    want = separators_by_the_rule(raw, crlf)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arrow_io, "_CHECK_SHARE", share * piece)
        patch.setattr(arrow_io, "_CHECK_SLICE", piece)
        assert arrow_io._separators(np.frombuffer(raw, dtype=np.uint8), crlf) == want
    assert arrow_io._separators(np.frombuffer(raw, dtype=np.uint8), crlf) == want


def test_clean_trec_files_take_the_fast_path_in_every_layout(tmp_path: Path) -> None:
    """Spaces or tabs, CRLF line ends, gzip, unicode ids, int and float grades: all read into columns."""
    qrels = "q1\t0\ta\t1\r\nq1\t0\tdoc-é\t2.5\r\nq2\t0\t文档\t0\r\n"
    run = "q1 Q0 a 1 2.5 bm25\nq2 Q0 文档 1 1e-3 bm25\nq1 Q0 doc-é 2 -0.0 bm25\n"
    paths = (write_file(tmp_path, "qrels.txt", qrels.encode(), False), write_file(tmp_path, "run", run.encode(), True))
    got_qrels = arrow_io.read_qrels_columns(paths[0], large_only=False)
    got_run = arrow_io.read_run_columns(paths[1], large_only=False)
    assert_same_object(got_qrels, eb.io.trec.read_qrels(paths[0]))
    assert_same_object(got_run, eb.io.trec.read_run(paths[1]))
    assert got_run.name == "bm25" and got_qrels.to_dict() == {"q1": {"a": 1, "doc-é": 2.5}, "q2": {"文档": 0}}


def test_read_qrels_and_read_run_give_columnar_objects_for_large_files(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the registry (``eb.read_qrels`` / ``eb.read_run`` / ``evaluate(paths)``): large files come back
    columnar, small ones as dict rows; a name given to ``read_run`` keeps the columns."""
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\n")
    run_path.write_text("q1 Q0 a 1 2.0 sys\nq1 Q0 x 2 1.0 sys\nq2 Q0 c 1 3.0 sys\n")
    assert eb.read_qrels(qrels_path).columnar is None and eb.read_run(run_path).columnar is None
    monkeypatch.setattr(arrow_io, "LARGE_BYTES", 0)
    qrels, run = eb.read_qrels(qrels_path), eb.read_run(run_path, name="bm25")
    assert qrels.columnar is not None and run.columnar is not None and run.name == "bm25"
    assert eb.read_run(str(run_path)).name == "sys"
    want = eb.evaluate(qrels.to_dict(), run.to_dict(), ["P@1", "nDCG"], backend="reference").values
    for backend in ("auto", "fast", "reference"):  # (auto picks by size: the reference for these three rows)
        assert eb.evaluate(str(qrels_path), str(run_path), ["P@1", "nDCG"], backend=backend).values == want


# ---------------------------------------------------------------- one data model, two representations

def columnar(obj: Qrels | Run) -> Qrels | Run:
    """The same rows as a columnar object."""
    table = engine_rows.table_from_mapping(obj._data, query_kind=obj.query_id_kind[0],
                                           doc_kind=obj.doc_id_kind[0] if obj.doc_id_kind else "str")
    return type(obj)(table, **({"name": obj.name} if isinstance(obj, Run) else {"min_relevance": obj.min_relevance}))


@given(data=qrels_and_run(float_grades=True, negative=True, missing=True, run_only=True, min_retrieved=0))
def test_a_columnar_object_equals_the_dict_one_through_the_whole_mapping_api(data: tuple) -> None:
    """len, iteration order, keys, ``in``, item and ``get`` (read-only rows), items, values, to_dict, n_rows,
    grades, max_grade, is_integral, id kinds, repr and equality: the same answers from either representation."""
    for want in (Qrels(data[0]), Run(data[1], name="sys")):
        got = columnar(want)
        assert got.columnar is not None and want.columnar is None
        assert len(got) == len(want) and list(got) == list(want) and got.keys() == want.keys()
        assert all(q in got for q in want) and "absent" not in got and got.get("absent") is None
        assert got.n_rows == want.n_rows and repr(got) == repr(want)
        assert typed(got) == typed(want) and got.to_dict() == want.to_dict() and got == want
        for qid in want:
            assert dict(got[qid]) == dict(want[qid]) and dict(got.get(qid)) == dict(want[qid])
            with pytest.raises(TypeError):
                got[qid]["new"] = 1  # type: ignore[index]
        assert [dict(v) for v in got.values()] == [dict(v) for v in want.values()]
        assert (got.query_id_kind, got.doc_id_kind) == (want.query_id_kind, want.doc_id_kind)
        if isinstance(want, Qrels):
            assert (got.grades, got.max_grade, got.is_integral) == (want.grades, want.max_grade, want.is_integral)


@given(grades=st.lists(st.sampled_from([0, 1, 2, 0.0, 1.0, 2.0, 2.5]), min_size=1, max_size=8))
def test_an_int_grade_stands_for_an_equal_float_grade_whatever_the_order(grades: list) -> None:
    """``2`` and ``2.0`` are one grade: the ``int``, in dict and columnar qrels alike, in any row order."""
    data = {f"q{i % 3}": {} for i in range(len(grades))}
    for i, grade in enumerate(grades):
        data[f"q{i % 3}"][f"d{i}"] = grade
    for qrels in (Qrels(data), Qrels(columnar(Qrels(data)))):
        assert {(g, type(g)) for g in qrels.grades} == \
            {(g, int if any(x == g and type(x) is int for x in grades) else float) for g in grades}
        assert type(qrels.max_grade) is type(max(qrels.grades))


@given(data=qrels_and_run(float_grades=True, run_only=True))
def test_pickles_and_copies_of_a_columnar_object_stay_columnar_and_equal(data: tuple) -> None:
    """pickle, copy.copy and copy.deepcopy carry the columns (and the name, level, source and notes)."""
    qrels = Qrels(columnar(Qrels(data[0])), min_relevance=2, source="qrels.txt", notes=("a note",))
    run = Run(columnar(Run(data[1])), name="bm25", source="run.txt")
    for obj in (qrels, run):
        for clone in (pickle.loads(pickle.dumps(obj)), copy.copy(obj), copy.deepcopy(obj)):
            assert type(clone) is type(obj) and clone.columnar is not None
            assert typed(clone) == typed(obj)
            assert (clone.source, clone.notes, clone.query_id_kind) == (obj.source, obj.notes, obj.query_id_kind)
            with pytest.raises(AttributeError):
                clone.source = "x"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(qrels)).min_relevance == 2 and pickle.loads(pickle.dumps(run)).name == "bm25"
    got = eb.evaluate(pickle.loads(pickle.dumps(qrels)), pickle.loads(pickle.dumps(run)), ["nDCG@5", "AP"],
                      backend="fast")
    assert got.values == eb.evaluate(qrels.to_dict(), run.to_dict(), ["nDCG@5", "AP"], backend="fast",
                                     min_relevance=2).values


@settings(max_examples=200)
@given(data=qrels_and_run(ties=True, float_grades=True, negative=True, missing=True, run_only=True, max_docs=12,
                          min_retrieved=0),
       metrics=st.lists(any_metric(), min_size=1, max_size=6), ties=st.sampled_from(TIES),
       precision=st.sampled_from(("float64", "float32")), sides=st.sampled_from(["both", "qrels", "run"]))
def test_columnar_inputs_evaluate_as_the_reference_for_every_metric_and_tie_policy(data: tuple, metrics: list,
                                                                                    ties: str, precision: str,
                                                                                    sides: str) -> None:
    """Both sides columnar, or one (the other's dict rows become a table): the engine's values are the
    reference's on the dicts, per query and in order."""
    qrels, run = Qrels(data[0]), Run(data[1])
    got_qrels = columnar(qrels) if sides in ("both", "qrels") else qrels
    got_run = columnar(run) if sides in ("both", "run") else run
    conventions = Settings(ties=ties, score_precision=precision)
    want, _ = reference.compute(qrels, run, metrics, conventions)
    got, _ = fast.compute(got_qrels, got_run, metrics, conventions)
    for metric in metrics:
        assert list(got[metric]) == list(want[metric]), metric
        for qid, value in want[metric].items():
            assert math.isclose(got[metric][qid], value, rel_tol=0, abs_tol=1e-12), (metric, qid, ties)


def test_columnar_objects_are_built_without_importing_heavy_libraries_until_needed() -> None:
    """``evalbridge.model.columnar`` and ``evalbridge.model.data`` import neither numpy nor pyarrow."""
    import subprocess
    import sys

    code = "import sys, evalbridge.model.data, evalbridge.model.columnar; print(sorted({'numpy', 'pyarrow'} & set(sys.modules)))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


# ---------------------------------------------------------------- tables

def rows_oracle(queries: list, docs: list, values: list) -> tuple[dict, tuple[int, int] | None]:
    """Row by row, as evalbridge read tables before: dict rows, and the first duplicate (first row, repeat)."""
    data: dict[Any, dict[Any, Any]] = {}
    seen: dict[tuple[Any, Any], int] = {}
    duplicate = None
    for i, (qid, doc, value) in enumerate(zip(queries, docs, values)):
        if (qid, doc) in seen and duplicate is None:
            duplicate = (seen[(qid, doc)], i)
        seen.setdefault((qid, doc), i)
        data.setdefault(qid, {})[doc] = value
    return data, duplicate


@st.composite
def table_rows(draw: Any) -> tuple[list, list, list, str]:
    n = draw(st.integers(1, 25))
    ints = draw(st.booleans())
    query_pool = [1, 2, 10, -3] if ints else ["q1", "q2", "é", "10"]
    doc_pool = [5, 6, 7, 70] if draw(st.booleans()) else ["a", "b", "文档", "7", "clueweb09-en0000-00-00001"]
    value_kind = draw(st.sampled_from(["int", "float"]))  # (booleans are refused: tests/test_values.py)
    value = {"int": st.integers(-2, 3), "float": st.floats(-10, 10, allow_nan=False)}[value_kind]
    queries = draw(st.lists(st.sampled_from(query_pool), min_size=n, max_size=n))
    if draw(st.booleans()):
        queries.sort(key=query_pool.index)  # blocks of one query, as files usually are
    docs = draw(st.lists(st.sampled_from(doc_pool), min_size=n, max_size=n))
    values = draw(st.lists(value, min_size=n, max_size=n))
    return queries, docs, values, draw(st.sampled_from(["pandas", "arrow", "categorical"]))


@settings(max_examples=150)
@given(rows=table_rows(), kind=st.sampled_from(["qrels", "run"]))
def test_tables_read_into_columns_what_a_row_by_row_reading_gives(rows: tuple, kind: str) -> None:
    """pandas, Arrow and categorical columns, int or str ids, rows of a query together or not, int / float /
    bool values: the columnar result equals the dict rows read row by row (values and their types), and a
    duplicate (query, doc) is refused naming the same first pair of rows."""
    import pandas as pd
    import pyarrow as pa

    queries, docs, values, library = rows
    value = "relevance" if kind == "qrels" else "score"
    frame = {"query_id": queries, "doc_id": docs, value: values}
    if library == "arrow":
        table: Any = pa.table(frame)
    else:
        table = pd.DataFrame(frame)
        if library == "categorical":
            table["query_id"] = table["query_id"].astype("category")
    data, duplicate = rows_oracle(queries, docs, values)
    if duplicate is not None:
        with pytest.raises(InputError, match=rf"\(rows {duplicate[0]} and {duplicate[1]}\)"):
            eb.read_qrels(table) if kind == "qrels" else eb.read_run(table)
        return
    got = eb.read_qrels(table) if kind == "qrels" else eb.read_run(table)
    want = Qrels(data) if kind == "qrels" else Run(data)
    assert got.columnar is not None
    assert typed(got) == typed(want)
    assert (got.query_id_kind, got.doc_id_kind) == (want.query_id_kind, want.doc_id_kind)


def test_table_errors_name_the_row_and_integers_beyond_float64_are_kept_exactly() -> None:
    """Nulls, float ids and non-finite values are refused with the row; 2**60 + 1 grades stay exact (dict rows)."""
    import pandas as pd

    with pytest.raises(InputError, match="column 'doc_id' is empty in row 1"):
        eb.read_qrels(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", None], "relevance": [1, 2]}))
    with pytest.raises(InputError, match=r"holds floats \(e.g. 1.0 in row 0\)"):
        eb.read_run(pd.DataFrame({"query_id": [1.0, 2.0], "doc_id": ["a", "b"], "score": [1, 2]}))
    with pytest.raises(InputError, match="score inf in row 1 is not a finite number"):
        eb.read_run(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, math.inf]}))
    big = eb.read_qrels(pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [2 ** 60 + 1, 1]}))
    assert big["q"]["a"] == 2 ** 60 + 1 and big.columnar is None


def test_table_files_are_read_into_columns(tmp_path: Path) -> None:
    """CSV, TSV and Parquet files give columnar objects; a duplicate names both lines of the file."""
    import pandas as pd

    frame = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["a", "b", "a"], "rel": [1, 0, 2]})
    frame.to_csv(tmp_path / "q.csv", index=False)
    frame.to_csv(tmp_path / "q.tsv", index=False, sep="\t")
    frame.to_parquet(tmp_path / "q.parquet")
    for name in ("q.csv", "q.tsv", "q.parquet"):
        qrels = eb.read_qrels(tmp_path / name)
        assert qrels.columnar is not None and qrels.to_dict() == {"q1": {"a": 1, "b": 0}, "q2": {"a": 2}}
    (tmp_path / "d.csv").write_text("qid,docno,rel\nq1,a,1\nq1,b,0\nq1,a,2\n")
    with pytest.raises(InputError, match=r"d.csv:4, query 'q1': doc 'a' appears twice for query 'q1' \(lines 2 and 4\)"):
        eb.read_qrels(tmp_path / "d.csv")


# ---------------------------------------------------------------- RAG logs

#: One change to a well-formed log: each is something ``read_log`` refuses, or reads as the fast path must.
RAG_CHANGES = ("question id twice", "int doc id", "str and int question ids", "bool question id", "float question id",
               "doc retrieved twice", "NaN score", "bool score", "text score", "infinite grade", "bool grade",
               "key twice", "spaces before colons", "colon in a string", "nested field", "blank line", "bad line",
               "list line", "CRLF", "lone CR", "missing field", "score of some objects only", "dotted doc option",
               "level above 1 with id lists", "empty lists", "int question ids")


@st.composite
def rag_log(draw: Any) -> tuple[bytes, dict[str, Any]]:
    """A RAG JSON Lines log (ids, or objects with or without scores; relevant ids or grades), well formed or
    with one change from :data:`RAG_CHANGES`; and options for ``read_log``."""
    shape = draw(st.sampled_from(["ids", "objects", "objects without scores"]))
    change = draw(st.sampled_from(("none",) * 8 + RAG_CHANGES))
    n = draw(st.integers(1, 8))
    graded = draw(st.booleans())
    questions = []
    for i in range(n):
        docs = draw(st.lists(st.sampled_from(["a", "b", "c", "文档", "d e", "clueweb09-en0000-00-00001"]), max_size=5,
                             unique=True))
        if shape == "ids":
            retrieved: Any = docs
        else:
            retrieved = [{"doc_id": d, **({"score": draw(st.floats(-5, 5, allow_nan=False) | st.integers(-3, 3))}
                                          if shape == "objects" else {})} for d in docs]
        relevant: Any = draw(st.dictionaries(st.sampled_from(["a", "b", "z"]), st.sampled_from([0, 1, 2, 7.5, -1]),
                                             max_size=3)) if graded else \
            draw(st.lists(st.sampled_from(["a", "b", "z"]), max_size=4))
        questions.append({"question_id": f"q{i}", "question": draw(st.sampled_from(["why?", "how?"])),
                          "contexts" if shape != "ids" else "retrieved_ids": retrieved,
                          "ground_truth" if graded else "relevant_ids": relevant})
    pick = questions[draw(st.integers(0, n - 1))]
    ranked_key = "contexts" if shape != "ids" else "retrieved_ids"
    gold_key = "ground_truth" if graded else "relevant_ids"
    options: dict[str, Any] = draw(st.sampled_from([{}, {"name": "sys"}, {"min_relevance": 0.5}]))
    if change == "question id twice" and n > 1:
        questions[-1]["question_id"] = questions[0]["question_id"]
    elif change == "int question ids":
        for i, question in enumerate(questions):
            question["question_id"] = i
    elif change in ("str and int question ids", "bool question id", "float question id"):
        pick["question_id"] = {"str and int question ids": 7, "bool question id": True, "float question id": 1.5}[change]
    elif change == "int doc id":  # (JSON object keys are strings: an int id is in a list)
        if shape == "ids":
            pick[ranked_key].append(9)
        elif not graded and draw(st.booleans()):
            pick[gold_key].append(9)
        else:
            pick[ranked_key].append({"doc_id": 9, **({"score": 0.5} if shape == "objects" else {})})
    elif change == "doc retrieved twice" and pick[ranked_key]:
        pick[ranked_key].append(pick[ranked_key][0])
    elif change in ("NaN score", "bool score", "text score") and shape == "objects" and pick[ranked_key]:
        pick[ranked_key][0]["score"] = {"NaN score": math.nan, "bool score": True, "text score": "x"}[change]
    elif change in ("infinite grade", "bool grade") and graded:
        pick[gold_key]["a"] = math.inf if change == "infinite grade" else True
    elif change == "nested field":
        pick["meta"] = {"model": "m", "k": [1, {"x": 2}]}
    elif change == "missing field":
        del pick[gold_key]
    elif change == "score of some objects only" and shape == "objects without scores" and pick[ranked_key]:
        pick[ranked_key][0]["score"] = 1.5
    elif change == "dotted doc option":
        options["doc"] = "meta.id"
    elif change == "level above 1 with id lists":
        options["min_relevance"] = 2
    elif change == "empty lists":
        pick[ranked_key], pick[gold_key] = [], {} if graded else []
    elif change == "colon in a string":
        pick["question"] = 'he said "x": y'
    lines = [json.dumps(q, ensure_ascii=draw(st.booleans()),
                        separators=(",", " : ") if change == "spaces before colons" else (", ", ": "))
             for q in questions]
    if change == "key twice":
        lines[0] = lines[0].replace("{", '{"question_id": "dup", ', 1)
    elif change in ("blank line", "bad line", "list line"):
        lines.insert(draw(st.integers(0, len(lines))), {"blank line": "   ", "bad line": "not json",
                                                         "list line": "[1, 2]"}[change])
    end = {"CRLF": "\r\n", "lone CR": "\r"}.get(change, "\n")
    return (end.join(lines) + "\n").encode(), options


def read_log_strictly(path: Path, **options: Any) -> Any:
    """``read_log``'s own loop (the fast path switched off)."""
    saved = rag_columns.read_log_columns
    rag_columns.read_log_columns = lambda *args, **kwargs: None
    try:
        return outcome(rag.read_log, path, **options)
    finally:
        rag_columns.read_log_columns = saved


@FILES
@given(log=rag_log())
def test_rag_fast_path_reads_what_read_log_reads_or_declines(tmp_path: Path, log: tuple) -> None:
    """Where ``read_log`` raises, the fast path declines; where the fast path accepts, ``read_log`` reads the
    same qrels and run (rows, value types, order, notes, level, name, id kinds)."""
    raw, options = log
    path = tmp_path / "log.jsonl"
    path.write_bytes(raw)
    got = rag_columns.read_log_columns(path, large_only=False, **options)
    want = read_log_strictly(path, **options)
    event("read_log error" if isinstance(want, InputError) else "declined" if got is None else "columns")
    if isinstance(want, InputError):
        assert got is None
        return
    if got is None:
        return
    for fast_obj, strict_obj in zip(got, want):
        assert fast_obj.columnar is not None
        assert typed(fast_obj) == typed(strict_obj)
        assert (fast_obj.notes, fast_obj.source, fast_obj.query_id_kind, fast_obj.doc_id_kind) == \
            (strict_obj.notes, strict_obj.source, strict_obj.query_id_kind, strict_obj.doc_id_kind)
    assert got[0].min_relevance == want[0].min_relevance and got[1].name == want[1].name


def test_large_rag_logs_are_read_into_columns_and_evaluate_as_their_dicts(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``read_pair`` on a JSON Lines log above the threshold gives columnar objects; evaluate agrees."""
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{i}", "contexts": [{"doc_id": f"d{j}", "score": 1 / (j + 1)}
                                                                     for j in range(5)],
                                        "ground_truth": {f"d{i % 5}": 2, "d9": 1}}) + "\n" for i in range(20)))
    monkeypatch.setattr(arrow_io, "LARGE_BYTES", 0)
    qrels, run = eb.read_pair(path)
    assert qrels.columnar is not None and run.columnar is not None
    metrics = ["nDCG@3", "AP", "RR", "R@2"]
    assert eb.evaluate(qrels, run, metrics).values == \
        eb.evaluate(qrels.to_dict(), run.to_dict(), metrics, backend="reference").values


# ---------------------------------------------------------------- the command line and config runs

@pytest.fixture
def no_materialising(monkeypatch: pytest.MonkeyPatch) -> list[RowTable]:
    """Columnar files whatever their size, and a record of every table turned back into dict rows."""
    built: list[RowTable] = []
    rows = RowTable.rows

    def spy(table: RowTable) -> dict:
        built.append(table)
        return rows(table)

    monkeypatch.setattr(arrow_io, "LARGE_BYTES", 0)
    monkeypatch.setattr(RowTable, "rows", spy)
    return built


def trec_pair(folder: Path) -> tuple[Path, Path]:
    """25,000 run lines: enough for the default backend to choose the engine."""
    qrels_path, run_path = folder / "qrels.txt", folder / "bm25.txt"
    qrels_path.write_text("".join(f"q{i} 0 d{j} {j % 3}\n" for i in range(250) for j in range(0, 100, 7)))
    run_path.write_text("".join(f"q{i} Q0 d{j} {j + 1} {100 - j // 2} bm25\n" for i in range(250) for j in range(100)))
    return qrels_path, run_path


def test_evalbridge_eval_evaluates_the_columns_without_turning_them_into_dicts(
        tmp_path: Path, no_materialising: list, capsys: pytest.CaptureFixture) -> None:
    """``evalbridge eval`` reads through the registry into columns and reports from them."""
    from evalbridge.cli import main

    qrels_path, run_path = trec_pair(tmp_path)
    assert main(["eval", str(qrels_path), str(run_path), "-m", "nDCG@10", "AP", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert no_materialising == []
    want = eb.evaluate(eb.io.trec.read_qrels(qrels_path), eb.io.trec.read_run(run_path), ["nDCG@10", "AP"],
                       backend="reference")
    assert report["provenance"]["backend"] == "fast"
    assert report["systems"]["bm25"]["metrics"] == pytest.approx(want.means, abs=1e-12)


def test_config_runs_evaluate_the_columns_without_turning_them_into_dicts(tmp_path: Path,
                                                                          no_materialising: list) -> None:
    """``evalbridge run`` (``run_config``) gets columnar objects from ``load_qrels`` / ``load_run``."""
    from evalbridge.config import load_config
    from evalbridge.config.pipeline import run_config

    qrels_path, run_path = trec_pair(tmp_path)
    config = tmp_path / "eval.yaml"
    config.write_text(f"qrels: {qrels_path.name}\nruns:\n  bm25: {run_path.name}\nmetrics: [nDCG@10, AP]\n")
    outcome_ = run_config(load_config(config), write=False)
    assert no_materialising == []
    result = outcome_.report.results["bm25"]
    assert result.provenance.backend == "fast"
    want = eb.evaluate(eb.io.trec.read_qrels(qrels_path), eb.io.trec.read_run(run_path), ["nDCG@10", "AP"],
                       backend="reference")
    assert result.values == want.values


def test_qrels_evaluated_against_a_large_run_are_read_into_columns_at_every_door(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """A qrels file below the columnar threshold, evaluated against a run file above it, is read into
    columns too (no dict rows turned into a table for the pairing) by ``evaluate(paths)``, ``evalbridge
    eval`` and a config run alike, with the strict readers' values; read alone it stays with the strict reader."""
    from evalbridge.cli import main
    from evalbridge.config import load_config
    from evalbridge.config.pipeline import run_config

    qrels_path, run_path = trec_pair(tmp_path)
    monkeypatch.setattr(arrow_io, "LARGE_BYTES", qrels_path.stat().st_size + 1)
    assert run_path.stat().st_size >= arrow_io.LARGE_BYTES
    assert eb.read_qrels(qrels_path).columnar is None and eb.read_qrels(qrels_path, prefer_columns=True).columnar is not None
    tabled: list = []
    monkeypatch.setattr(engine_rows, "table_from_mapping", lambda *a, **k: tabled.append(a) or pytest.fail("dict rows"))
    metrics = ["nDCG@10", "AP"]
    want = eb.evaluate(eb.io.trec.read_qrels(qrels_path), eb.io.trec.read_run(run_path), metrics, backend="reference")

    got = eb.evaluate(str(qrels_path), str(run_path), metrics)
    assert got.provenance.backend == "fast" and got.values == want.values
    assert main(["eval", str(qrels_path), str(run_path), "-m", *metrics, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["systems"]["bm25"]["metrics"] == want.means
    config = tmp_path / "eval.yaml"
    config.write_text(f"qrels: {qrels_path.name}\nruns:\n  bm25: {run_path.name}\nmetrics: [nDCG@10, AP]\n")
    assert run_config(load_config(config), write=False).report.results["bm25"].values == want.values
    assert tabled == []


def test_a_small_trec_file_is_read_without_importing_pyarrow_or_numpy(tmp_path: Path) -> None:
    """Below the columnar threshold the strict reader reads the file, and the size is checked before any
    import: ``evaluate(paths)`` on small files stays as light as ``import evalbridge`` (fresh process)."""
    import subprocess
    import sys

    qrels_path, run_path = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels_path.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run_path.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d3 2 1.0 t\n")
    code = ("import sys, evalbridge as eb; "
            f"print(eb.evaluate({str(qrels_path)!r}, {str(run_path)!r}, 'P@1')['P@1'], "
            "'pyarrow' in sys.modules, 'numpy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["1.0", "False", "False"]
