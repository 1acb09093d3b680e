"""Interop: read_qrels / read_run from every supported object, and the way back (DataFrame, ranx, ir-measures, JSON)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.io import read_qrels, read_run
from evalbridge.io.jsonl import write_json, write_jsonl
from evalbridge.io.objects import to_dataframe, to_ir_measures, to_ranx
from evalbridge.model.data import Qrels, Run

QRELS = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
RUN = {"q1": {"d1": 0.5, "d9": 1.5}, "q2": {"d3": 0.25}}

ids = st.text("abcdefghij0123456789", min_size=1, max_size=5)
int_grades = st.dictionaries(ids, st.dictionaries(ids, st.integers(-1, 4), min_size=1, max_size=5),
                             min_size=1, max_size=4)
float_scores = st.dictionaries(ids, st.dictionaries(ids, st.floats(-1e6, 1e6, allow_nan=False), min_size=1,
                                                    max_size=5), min_size=1, max_size=4)


# ---------------------------------------------------------------- dispatch

def test_qrels_and_run_are_returned_as_they_are():
    """A Qrels or Run is returned unchanged (the same object)."""
    qrels, run = Qrels(QRELS), Run(RUN)
    assert read_qrels(qrels) is qrels and read_run(run) is run


def test_a_run_where_qrels_are_expected_raises():
    """Passing a Run as qrels (or the reverse) is refused with a fix."""
    with pytest.raises(InputError, match="got a Run where qrels were expected"):
        read_qrels(Run(RUN))
    with pytest.raises(InputError, match="got a Qrels where run were expected"):
        read_run(Qrels(QRELS))


def test_dict_of_dicts_is_read():
    """A mapping {qid: {doc: value}} becomes Qrels / Run."""
    assert read_qrels(QRELS).to_dict() == QRELS and read_run(RUN).to_dict() == RUN


@pytest.mark.parametrize("obj, shown", [
    (42, "int 42"),
    (b"q1 0 d1 1", "bytes"),
])
def test_unknown_input_lists_the_accepted_types(obj, shown):
    """An unsupported object raises, saying what it got and listing every accepted input (from the registry)."""
    with pytest.raises(InputError) as info:
        read_qrels(obj)
    text = str(info.value)
    assert shown in text
    for fmt in eb.formats().values():
        if fmt.accepts is not None:
            assert fmt.title in text
    assert "file path" in text and "from_labels / from_pairs" in text


@pytest.mark.parametrize("obj, shown", [
    ([[1, 0, 1]], "rows like [1, 0, 1]"),
    ([], "an empty iterable"),
])
def test_rows_that_are_not_query_doc_value_triples_are_refused(obj, shown):
    """Iterables are read as (query, doc, value) rows; anything else says what it got and what is expected."""
    with pytest.raises(InputError, match="query_id, doc_id") as info:
        read_qrels(obj)
    assert shown in str(info.value) or "empty" in str(info.value)


def test_evaluate_reads_any_supported_input(tmp_path):
    """evaluate() takes paths and DataFrames for qrels and run through read_qrels / read_run."""
    pd = pytest.importorskip("pandas")
    eb.write(eb.Qrels(QRELS), tmp_path / "qrels.txt")
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d9", "d3"], "score": [0.5, 1.5, 0.25]})
    res = eb.evaluate(str(tmp_path / "qrels.txt"), frame, "P@1")
    assert res.query("P@1") == {"q1": 0.0, "q2": 1.0}


# ---------------------------------------------------------------- paths: TREC, JSON, JSONL

def test_paths_dispatch_by_extension(tmp_path):
    """'.json' -> dict of dicts, '.jsonl' -> rows, '.gz' is looked through, anything else -> TREC."""
    (tmp_path / "q.json").write_text(json.dumps(QRELS))
    with gzip.open(tmp_path / "q.json.gz", "wt") as f:
        json.dump(QRELS, f)
    (tmp_path / "r.jsonl").write_text("".join(json.dumps({"query_id": q, "doc_id": d, "score": s}) + "\n"
                                              for q, docs in RUN.items() for d, s in docs.items()))
    eb.write(eb.Run(RUN), tmp_path / "r.run")
    assert read_qrels(tmp_path / "q.json").to_dict() == QRELS
    assert read_qrels(str(tmp_path / "q.json.gz")).to_dict() == QRELS
    assert read_run(tmp_path / "r.jsonl").to_dict() == RUN
    assert read_run(tmp_path / "r.run").to_dict() == RUN and read_run(tmp_path / "r.run").name == "evalbridge"


@pytest.mark.parametrize("write", [write_json, write_jsonl])
@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_json_and_jsonl_round_trip(tmp_path, write, suffix):
    """write_json / write_jsonl then read_qrels / read_run give the same data, plain or gzip."""
    ext = ".json" if write is write_json else ".jsonl"
    write(Qrels({"q1": {"d1": 7.5, "d2": 0}}), tmp_path / f"q{ext}{suffix}")
    write(Run(RUN), tmp_path / f"r{ext}{suffix}")
    assert read_qrels(tmp_path / f"q{ext}{suffix}").to_dict() == {"q1": {"d1": 7.5, "d2": 0}}
    assert read_run(tmp_path / f"r{ext}{suffix}").to_dict() == RUN


def test_jsonl_keys_are_configurable(tmp_path):
    """JSONL keys follow the query= / doc= / grade= options."""
    (tmp_path / "q.jsonl").write_text('{"qid": "q1", "pid": 7, "label": 1}\n\n')
    assert read_qrels(tmp_path / "q.jsonl", query="qid", doc="pid", grade="label").to_dict() == {"q1": {"7": 1}}


@pytest.mark.parametrize("text, line, message", [
    ('{"query_id": "q", "doc_id": "a", "relevance": 1}\n{"query_id": "q", "docid": "b", "relevance": 1}\n', 2,
     r"no 'doc_id' key.*did you mean 'docid'"),
    ('{"query_id": "q", "doc_id": "a", "relevance": 1}\n{"query_id": "q", "doc_id": "a", "relevance": 0}\n', 2,
     "doc 'a' appears twice for query 'q', on lines 1 and 2"),
    ('{"query_id": "q", "doc_id": "a", "relevance": 1}\n{"query_id": "q",\n', 2, "invalid JSON"),
    ('[1, 2]\n', 1, "expected a JSON object"),
    ('{"query_id": "q", "doc_id": "a", "relevance": "high"}\n', 1, "relevance 'high' is not a number: it is a text"),
    ('{"query_id": "q", "doc_id": "a", "relevance": NaN}\n', 1, "relevance nan is not a finite number"),
])
def test_bad_jsonl_names_file_line_and_value(tmp_path, text, line, message):
    """Missing keys (with the closest key), duplicates, bad JSON and bad values name file:line."""
    path = tmp_path / "q.jsonl"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as info:
        read_qrels(path)
    assert str(info.value).startswith(f"{path}:{line}") and info.value.line == line


def test_bad_json_names_file_and_line(tmp_path):
    """A broken JSON file raises with file:line; a JSON list is refused by the qrels."""
    path = tmp_path / "q.json"
    path.write_text('{"q1": {"d1": 1},\n "q2": }')
    with pytest.raises(InputError, match="invalid JSON") as info:
        read_qrels(path)
    assert str(info.value).startswith(f"{path}:2:")
    path.write_text("[1, 2]")
    with pytest.raises(InputError, match="expected one JSON object"):
        read_qrels(path)


def test_empty_jsonl_raises(tmp_path):
    """A JSONL file without objects is refused."""
    (tmp_path / "q.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="no JSON objects"):
        read_qrels(tmp_path / "q.jsonl")


# ---------------------------------------------------------------- pandas

@pytest.fixture(scope="module")
def pd():
    return pytest.importorskip("pandas")


def test_dataframe_long_format_default_columns(pd):
    """query_id / doc_id / relevance|score columns are read; int grades stay ints."""
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "relevance": [2, 0, 1]})
    qrels = read_qrels(frame)
    assert qrels.to_dict() == QRELS and all(type(g) is int for g in qrels["q1"].values())


def test_dataframe_columns_are_configurable_and_string_dtypes_work(pd):
    """Custom column names work, with pandas' string dtype (the pandas 3 default) for ids."""
    frame = pd.DataFrame({"qid": pd.array(["q1", "q2"], dtype="string"), "pid": pd.array(["a", "b"], dtype="str"),
                          "s": [0.5, 0.25]})
    run = read_run(frame, query="qid", doc="pid", score="s")
    assert run.to_dict() == {"q1": {"a": 0.5}, "q2": {"b": 0.25}}
    assert all(type(q) is str for q in run) and all(type(d) is str for docs in run.values() for d in docs)


def test_dataframe_int_ids_become_str_and_are_remembered_as_int(pd):
    """Integer id columns become str ids, with the int kind kept for the id-type check in evaluate."""
    qrels = read_qrels(pd.DataFrame({"query_id": [1, 1], "doc_id": [10, 11], "relevance": [1, 0]}))
    assert qrels.to_dict() == {"1": {"10": 1, "11": 0}} and qrels.query_id_kind == ("int",)


def test_dataframe_duplicate_rows_are_named(pd):
    """Duplicate (query, doc) rows raise, naming the pairs and the row labels."""
    frame = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q1"], "doc_id": ["a", "b", "a", "a"],
                          "score": [1.0, 2.0, 3.0, 4.0]})
    with pytest.raises(InputError, match=r"doc 'a' appears twice for query 'q1' \(rows 0 and 3\)"):
        read_run(frame)


def test_dataframe_missing_column_lists_the_columns(pd):
    """A missing column raises, listing the DataFrame's columns and the closest name."""
    frame = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevancy": [1]})
    with pytest.raises(InputError, match=r"no column looks like the grade.*'query_id', 'doc_id', 'relevancy'"
                                         r".*did you mean 'relevancy'"):
        read_qrels(frame)
    with pytest.raises(InputError, match=r"there is no column 'relevance'.*did you mean 'relevancy'"):
        read_qrels(frame, grade="relevance")


def test_dataframe_missing_value_names_the_row(pd):
    """A missing grade or id names its column and row."""
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, None]})
    with pytest.raises(InputError, match="column 'relevance' is empty in row 1"):
        read_qrels(frame)


def test_empty_dataframe_raises(pd):
    """A DataFrame with the right columns but no rows is refused."""
    with pytest.raises(InputError, match="no rows"):
        read_qrels(pd.DataFrame({"query_id": [], "doc_id": [], "relevance": []}))


@given(int_grades)
@settings(max_examples=40, deadline=None)
def test_dataframe_round_trip_qrels(data):
    """Qrels -> to_dataframe -> read_qrels gives the same qrels."""
    pytest.importorskip("pandas")
    frame = to_dataframe(Qrels(data))
    assert list(frame.columns) == ["query_id", "doc_id", "relevance"] and len(frame) == Qrels(data).n_rows
    assert read_qrels(frame).to_dict() == data


@given(float_scores)
@settings(max_examples=40, deadline=None)
def test_dataframe_round_trip_run(data):
    """Run -> to_dataframe -> read_run gives the same scores."""
    pytest.importorskip("pandas")
    frame = to_dataframe(Run(data))
    assert list(frame.columns) == ["query_id", "doc_id", "score"]
    assert read_run(frame).to_dict() == data


def test_to_dataframe_needs_qrels_or_run():
    """The way back needs a Qrels or a Run (a plain dict is ambiguous)."""
    with pytest.raises(InputError, match="needs a Qrels or a Run"):
        to_dataframe(QRELS)  # type: ignore[arg-type]


# ---------------------------------------------------------------- ranx

@pytest.fixture(scope="module")
def ranx():
    return pytest.importorskip("ranx")


@pytest.mark.slow  # ranx compiles its typed-dict code (to_dict) on first use: seconds
def test_ranx_round_trip(ranx):
    """to_ranx then read_qrels / read_run give the same data, and the run keeps its name."""
    qrels, run = to_ranx(Qrels(QRELS)), to_ranx(Run(RUN, name="bm25"))
    assert type(qrels).__name__ == "Qrels" and type(run).__name__ == "Run"
    assert read_qrels(qrels).to_dict() == QRELS
    back = read_run(run)
    assert back.to_dict() == RUN and back.name == "bm25"


@pytest.mark.slow  # ranx compiles its typed-dict code (to_dict) on first use: seconds
def test_ranx_objects_made_by_ranx_are_read(ranx):
    """ranx Qrels / Run built by ranx itself are recognised by their module."""
    assert read_qrels(ranx.Qrels({"q": {"a": 1}})).to_dict() == {"q": {"a": 1}}
    with pytest.raises(InputError, match="got a ranx Run where qrels were expected"):
        read_qrels(ranx.Run({"q": {"a": 1.0}}))


@pytest.mark.slow  # ranx compiles its typed-dict code (to_dict) on first use: seconds
def test_to_ranx_refuses_float_grades_instead_of_truncating(ranx):
    """ranx would truncate 7.5 to 7 silently; to_ranx raises, naming the query, doc and grade."""
    with pytest.raises(InputError, match=r"query 'q1'.*grade 7.5 of doc 'a' is not a whole number.*truncate it to 7"):
        to_ranx(Qrels({"q1": {"a": 7.5}}))
    assert to_ranx(Qrels({"q1": {"a": 2.0}})).to_dict()["q1"] == {"a": 2}


@pytest.mark.slow  # ranx compiles its typed-dict code (to_dict) on first use: seconds
def test_to_ranx_refuses_qrels_without_any_document(ranx):
    """ranx cannot hold a qrels whose queries are all empty; the error says so."""
    with pytest.raises(InputError, match="no query has documents"):
        to_ranx(Qrels({"q1": {}}))


# ---------------------------------------------------------------- ir-measures

@pytest.fixture(scope="module")
def ir_measures():
    return pytest.importorskip("ir_measures")


@given(int_grades, float_scores)
@settings(max_examples=30, deadline=None)
def test_ir_measures_round_trip(grades, scores):
    """to_ir_measures then read_qrels / read_run give the same data."""
    pytest.importorskip("ir_measures")
    assert read_qrels(to_ir_measures(Qrels(grades))).to_dict() == grades
    assert read_run(to_ir_measures(Run(scores))).to_dict() == scores


def test_ir_measures_namedtuples_from_a_generator(ir_measures):
    """A generator of ir-measures Qrel / ScoredDoc rows is read (iteration ignored)."""
    rows = (ir_measures.Qrel("q1", d, g, "0") for d, g in (("a", 1), ("b", 0)))
    assert read_qrels(rows).to_dict() == {"q1": {"a": 1, "b": 0}}
    assert read_run(iter([ir_measures.ScoredDoc("q1", "a", 2.5)])).to_dict() == {"q1": {"a": 2.5}}


def test_ir_measures_rows_of_the_wrong_kind_or_duplicated_raise(ir_measures):
    """ScoredDoc rows are not qrels; a repeated (query, doc) row is refused (ir-measures keeps the last)."""
    with pytest.raises(InputError, match="cannot read qrels from ScoredDoc rows"):
        read_qrels([ir_measures.ScoredDoc("q", "a", 1.0)])
    with pytest.raises(InputError, match="query 'q'.*doc 'a' appears twice"):
        read_qrels([ir_measures.Qrel("q", "a", 1), ir_measures.Qrel("q", "a", 0)])


def test_ir_measures_evaluates_the_same_as_evalbridge(ir_measures):
    """The converted rows give ir-measures the same P@1 as evalbridge's reference (an independent check)."""
    qrels, run = Qrels(QRELS), Run(RUN)
    ours = eb.evaluate(qrels, run, "P@1").query("P@1")
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.P @ 1], to_ir_measures(qrels),
                                                                  to_ir_measures(run))}
    assert theirs == pytest.approx(ours)


def test_importing_interop_does_not_import_heavy_libraries():
    """Reading dicts and files needs none of pandas, ranx or ir_measures."""
    import subprocess
    import sys

    code = ("import sys, evalbridge.io.objects, evalbridge.io.trec, evalbridge.io.shapes; "
            "print(sorted(m for m in ('pandas', 'ranx', 'ir_measures', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    assert out.strip() == "[]"
