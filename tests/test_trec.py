"""TREC qrels / run / judged-list files: reading real files, strict errors, and write -> read round trips."""

from __future__ import annotations

import gzip
import math
import re
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.common.ranking import rank
from evalbridge.io.trec import read_judged_list, read_qrels, read_run, write_qrels, write_run
from evalbridge.model.data import Qrels, Run
from document_oracles import MAP_eval, MRR_eval, NDCG_eval, generate_tweetid_gain


def _write(tmp_path: Path, text: str, name: str = "f.txt") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _expected(path: Path) -> dict[str, float]:
    """The ``all`` lines of a trec_eval output file: measure -> value."""
    values = {}
    for line in path.read_text().splitlines():
        measure, qid, value = line.split()
        if qid == "all" and measure != "runid":
            values[measure] = float(value)
    return values


# ---------------------------------------------------------------- real files, read in place

@pytest.fixture(scope="module")
def trec_eval_dir(shared: Path) -> Path:
    folder = shared / "conformance" / "trec_eval"
    if not folder.is_dir():
        pytest.skip(f"../shared/conformance/trec_eval is absent: {folder} does not exist")
    return folder


def test_reads_trec_eval_qrels_test(trec_eval_dir):
    """qrels.test: 3 topics, 3681 judgements, 561 relevant (as its README and out.test say)."""
    qrels = read_qrels(trec_eval_dir / "qrels.test")
    assert list(qrels) == ["301", "302", "303"] and qrels.n_rows == 3681
    assert sum(g > 0 for docs in qrels.values() for g in docs.values()) == 561
    assert qrels.source == str(trec_eval_dir / "qrels.test")


def test_comment_lines_are_skipped_and_a_hash_inside_a_doc_id_is_kept(trec_eval_dir):
    """qrels.test.with-comments equals qrels.test once comments are skipped; CR#93E-1860 keeps its '#'."""
    plain = read_qrels(trec_eval_dir / "qrels.test").to_dict()
    commented = read_qrels(trec_eval_dir / "qrels.test.with-comments").to_dict()
    assert commented["301"].pop("CR#93E-1860") == 0
    assert plain["301"].pop("CR93E-1860") == 0
    assert commented == plain


def test_reads_trec_eval_results_test_and_reproduces_out_test(trec_eval_dir):
    """results.test: 3 x 500 docs, tag STANDARD; map, P_10, recip_rank and Rprec match trec_eval's out.test."""
    run = read_run(trec_eval_dir / "results.test")
    assert run.name == "STANDARD" and run.n_rows == 1500 and all(len(d) == 500 for d in run.values())
    expected = _expected(trec_eval_dir / "out.test")
    res = eb.evaluate(read_qrels(trec_eval_dir / "qrels.test"), run, ["map", "P@10", "mrr", "Rprec"])
    for ours, theirs in (("AP", "map"), ("P@10", "P_10"), ("RR", "recip_rank"), ("Rprec", "Rprec")):
        assert res[ours] == pytest.approx(expected[theirs], abs=5e-5)


def test_results_trunc_needs_extra_columns_ignore(trec_eval_dir):
    """results.trunc has junk after the tag: refused by default with a fix, read with extra_columns='ignore'."""
    path = trec_eval_dir / "results.trunc"
    with pytest.raises(InputError) as info:
        read_run(path)
    assert f"{path}:1:" in str(info.value) and "got 9" in str(info.value)
    assert "extra_columns='ignore'" in str(info.value)
    run = read_run(path, extra_columns="ignore")
    assert {q: len(d) for q, d in run.items()} == {"301": 500, "303": 84}
    expected = _expected(trec_eval_dir / "out.test.aqc")  # trec_eval -c: topic 302 scores 0
    res = eb.evaluate(read_qrels(trec_eval_dir / "qrels.test"), run, "map")
    assert res["map"] == pytest.approx(expected["map"], abs=5e-5)


def test_reads_gzipped_robust04_in_place(shared):
    """Robust04 (gzip): 311410 qrels in 249 topics with grades 0/1/2 as published; run 250 topics x 1000."""
    folder = shared / "data" / "real" / "robust04"
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/robust04 is absent: {folder} does not exist")
    qrels = read_qrels(folder / "qrels.robust2004.txt.gz")
    assert qrels.n_rows == 311410 and len(qrels) == 249
    assert Counter(g for docs in qrels.values() for g in docs.values()) == {0: 293998, 1: 16381, 2: 1031}
    run = read_run(folder / "rob04_yang19_rm3.run.gz")
    assert len(run) == 250 and all(len(docs) == 1000 for docs in run.values()) and run.name == "Anserini"
    assert sum(q in run for q in qrels) == 249


# ---------------------------------------------------------------- format details

def test_tabs_spaces_blank_lines_and_indented_comments(tmp_path):
    """Columns split on any whitespace; blank lines and lines starting with (indented) '#' are skipped."""
    path = _write(tmp_path, "# header\n\nq1\t0  d1 \t1\n   # indented comment\n \t\nq1 0 d#2 0\n# a b c\n")
    assert read_qrels(path).to_dict() == {"q1": {"d1": 1, "d#2": 0}}


def test_grades_are_int_for_integer_tokens_and_float_otherwise(tmp_path):
    """'2' -> int 2, '-1' -> int -1, '7.5' -> 7.5, '1.0' -> float 1.0 (never truncated)."""
    qrels = read_qrels(_write(tmp_path, "q 0 a 2\nq 0 b -1\nq 0 c 7.5\nq 0 d 1.0\nq 0 e 1e-3\n"))
    grades = dict(qrels["q"])
    assert grades == {"a": 2, "b": -1, "c": 7.5, "d": 1.0, "e": 0.001}
    assert [type(g) for g in grades.values()] == [int, int, float, float, float]


def test_run_keeps_scores_and_ignores_the_rank_column(tmp_path):
    """The rank column is ignored (as trec_eval does): the order comes from the scores."""
    run = read_run(_write(tmp_path, "q Q0 a 1 0.5 t\nq Q0 b 2 0.9 t\nq Q0 c 3 0.7 t\n"))
    assert dict(run["q"]) == {"a": 0.5, "b": 0.9, "c": 0.7}
    assert rank(run["q"]) == ["b", "c", "a"]


def test_run_name_is_the_first_tag_unless_given(tmp_path):
    """The run's name is the tag of its first line; name= overrides it."""
    path = _write(tmp_path, "q Q0 a 1 0.5 bm25\nq Q0 b 2 0.4 other\n")
    assert read_run(path).name == "bm25" and read_run(path, name="mine").name == "mine"


def test_gzip_is_detected_by_magic_bytes_not_by_name(tmp_path):
    """A gzip file is read transparently even without a .gz suffix; str paths work too."""
    path = tmp_path / "qrels.txt"
    path.write_bytes(gzip.compress(b"q1 0 d1 1\n"))
    assert read_qrels(str(path)).to_dict() == {"q1": {"d1": 1}}


def test_interleaved_queries_are_grouped(tmp_path):
    """Lines of different queries may alternate; each query gets all of its lines."""
    run = read_run(_write(tmp_path, "1 Q0 a 1 3 t\n2 Q0 a 1 3 t\n1 Q0 b 2 2 t\n"))
    assert run.to_dict() == {"1": {"a": 3.0, "b": 2.0}, "2": {"a": 3.0}}


def test_read_judged_list_takes_grades_and_line_order(tmp_path):
    """A judged ranked list (the `qid Q0 docid rel` lines of 002_302ebfc17d0870d4.txt) gives grades and a run in line order."""
    path = _write(tmp_path, "171 Q0 305345146675949568 0\n171 Q0 305345146675949569 2\n172 Q0 9 1\n"
                            "171 Q0 305345146675949570 1\n")
    qrels, run = read_judged_list(path)
    assert dict(qrels["171"]) == {"305345146675949568": 0, "305345146675949569": 2, "305345146675949570": 1}
    assert rank(run["171"]) == ["305345146675949568", "305345146675949569", "305345146675949570"]
    assert list(run["171"].values()) == [3.0, 2.0, 1.0] and dict(run["172"]) == {"9": 1.0}


def test_read_judged_list_keeps_queries_without_a_relevant_doc_in_the_mean(tmp_path):
    """The MRR example of 002_302ebfc17d0870d4.txt (§2) as a judged list (q2, q3 without a relevant doc) gives 0.1125."""
    lines = [f"q1 Q0 a{i} {int(i == 4)}" for i in range(1, 5)] + ["q2 Q0 b1 0", "q3 Q0 c1 0"]
    lines += [f"q4 Q0 e{i} {int(i == 5)}" for i in range(1, 6)]
    qrels, run = read_judged_list(_write(tmp_path, "\n".join(lines) + "\n"))
    assert eb.evaluate(qrels, run, "mrr")["RR"] == pytest.approx(0.1125, abs=1e-12)



def test_a_judged_list_file_gives_the_courses_map_mrr_and_ndcg(tmp_path) -> None:  # noqa: ANN001
    """A ``qid Q0 docid rel`` file read by read_judged_list gives MAP_eval, MRR_eval and NDCG_eval's numbers.

    Reproduces 002_302ebfc17d0870d4.txt, 实验预处理, generate_tweetid_gain over `qid Q0 docid rel` lines.
    """
    lines = ["171 Q0 305345146675949568 0", "171 Q0 305345146675949569 2", "171 Q0 305345146675949570 1",
             "171 Q0 305345146675949571 0", "172 Q0 305345146675949600 1", "172 Q0 305345146675949601 0",
             "173 Q0 305345146675949700 0", "173 Q0 305345146675949701 0", "173 Q0 305345146675949702 3",
             "173 Q0 305345146675949703 -1"]
    path = tmp_path / "qrels.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = generate_tweetid_gain(str(path))
    qrels, run = eb.read_pair(path, format="judged_list")
    res = eb.evaluate(qrels, run, ["AP(norm=retrieved)", "RR", "nDCG(discount=jk,ideal=run)"])
    assert res["AP(norm=retrieved)"] == pytest.approx(MAP_eval(data))
    assert res["RR"] == pytest.approx(MRR_eval(data))
    assert res["nDCG(discount=jk,ideal=run)"] == pytest.approx(NDCG_eval(data))


# ---------------------------------------------------------------- bad input: file:line, value and fix

@pytest.mark.parametrize("reader, text, line, message", [
    (read_qrels, "q 0 a 1\nq 0 b\n", 2, "expected 4 columns (qid iter docid rel), got 3: 'q 0 b'"),
    (read_qrels, "q 0 a 1 extra\n", 1, "expected 4 columns"),
    (read_qrels, "q Q0 a 1 0.5 run\n", 1, "read it with read_run()"),
    (read_run, "q Q0 a 1 0.5 t\nq Q0 b 2 0.4\n", 2, "expected 6 columns (qid Q0 docid rank score tag), got 5"),
    (read_run, "q 0 a 1\n", 1, "read it with read_qrels()"),
    (read_run, "q Q0 a 1 0.5 t junk\n", 1, "got 7"),
    (read_judged_list, "q Q0 a\n", 1, "expected 4 columns"),
])
def test_wrong_column_count_names_file_line_and_counts(tmp_path, reader, text, line, message):
    """A line with the wrong number of columns raises with file:line, expected and found counts."""
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=re.escape(message)) as info:
        reader(path)
    assert str(info.value).startswith(f"{path}:{line}:") and info.value.line == line


@pytest.mark.parametrize("reader, text, line, value", [
    (read_qrels, "q 0 a 1\nq 0 b high\n", 2, "'high'"),
    (read_qrels, "q 0 a nan\n", 1, "'nan'"),
    (read_qrels, "q 0 a inf\n", 1, "'inf'"),
    (read_run, "q Q0 a 1 0.5 t\nq Q0 b 2 x0.4 t\n", 2, "'x0.4'"),
])
def test_non_numeric_grade_or_score_names_file_line_and_value(tmp_path, reader, text, line, value):
    """A grade or score that is not a finite number raises with file:line and the token."""
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match="is not a (finite )?number") as info:
        reader(path)
    assert str(info.value).startswith(f"{path}:{line}:") and value in str(info.value)


@pytest.mark.parametrize("token", ["nan", "NaN", "inf", "-Infinity"])
def test_nan_or_inf_score_names_its_line(tmp_path, token):
    """NaN and infinite scores are refused, naming the line they are on."""
    path = _write(tmp_path, f"q Q0 a 1 0.5 t\nq Q0 b 2 0.4 t\n\nq Q0 c 3 {token} t\n")
    with pytest.raises(InputError, match="not a finite number") as info:
        read_run(path)
    assert str(info.value).startswith(f"{path}:4:")


@pytest.mark.parametrize("reader, text", [
    (read_qrels, "# c\nq 0 a 1\nq 0 b 0\nq 0 a 0\n"),
    (read_run, "# c\nq Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n"),
    (read_judged_list, "# c\nq Q0 a 1\nq Q0 b 0\nq Q0 a 0\n"),
])
def test_duplicate_doc_names_both_lines(tmp_path, reader, text):
    """A doc twice in one query raises, naming the query, the doc and both line numbers."""
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match=r"query 'q'.*doc 'a' appears twice for query 'q', on lines 2 and 4"):
        reader(path)


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n  # another\n"])
@pytest.mark.parametrize("reader", [read_qrels, read_run, read_judged_list])
def test_file_without_data_lines_raises(tmp_path, reader, text):
    """An empty file, or one with only blank lines and comments, raises naming the file."""
    path = _write(tmp_path, text)
    with pytest.raises(InputError, match="has no .* lines") as info:
        reader(path)
    assert str(info.value).startswith(str(path))


def test_non_utf8_file_raises_with_a_fix(tmp_path):
    """A file that is not UTF-8 raises with the file name and a fix."""
    path = tmp_path / "latin1.txt"
    path.write_bytes("q 0 caf\u00e9 1\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8.*re-save"):
        read_qrels(path)


def test_bad_extra_columns_option_raises():
    """extra_columns accepts only 'error' and 'ignore'."""
    with pytest.raises(InputError, match="extra_columns"):
        read_run("unused.txt", extra_columns="drop")  # type: ignore[arg-type]


# ---------------------------------------------------------------- writing and round trips

ids = st.text("abcdefghij0123456789-_.:#", min_size=1, max_size=8).filter(lambda s: s[0] != "#")
grades = st.one_of(st.integers(-1, 4), st.floats(-5, 10, allow_nan=False, allow_infinity=False))
scores = st.floats(allow_nan=False, allow_infinity=False, width=64)


@given(st.dictionaries(ids, st.dictionaries(ids, grades, min_size=1, max_size=6), min_size=1, max_size=4))
@settings(max_examples=60, deadline=None)
def test_qrels_write_read_round_trip_is_exact(data):
    """write_qrels then read_qrels gives the same grades, with the same int/float types."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "qrels.txt"
        write_qrels(Qrels(data), path)
        back = read_qrels(path).to_dict()
    assert back == data
    assert {(q, d): type(g) for q, docs in back.items() for d, g in docs.items()} == \
        {(q, d): type(g) for q, docs in data.items() for d, g in docs.items()}


@given(st.dictionaries(ids, st.dictionaries(ids, scores, min_size=1, max_size=6), min_size=1, max_size=4),
       st.booleans())
@settings(max_examples=60, deadline=None)
def test_run_write_read_round_trip_keeps_scores_and_rank_order(data, gz):
    """write_run then read_run gives the same scores (exactly) and the same ranking, plain or gzip."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("run.txt.gz" if gz else "run.txt")
        write_run(Run(data), path, tag="sys1")
        back = read_run(path)
        lines = (gzip.open(path, "rt") if gz else open(path)).read().splitlines()
    assert back.to_dict() == data and back.name == "sys1"
    for qid, docs in data.items():
        assert rank(back[qid]) == rank(docs)
    first = lines[0].split()
    assert first[3] == "1" and first[1] == "Q0"


def test_write_run_writes_rank_order_with_trec_eval_ties(tmp_path):
    """Lines are in rank order; equal scores are ordered by doc id descending, as trec_eval reads them."""
    path = tmp_path / "run.txt"
    write_run({"q": {"a": 1.0, "c": 1.0, "b": 2.0}}, path)
    assert path.read_text().splitlines() == ["q Q0 b 1 2.0 evalbridge", "q Q0 c 2 1.0 evalbridge",
                                             "q Q0 a 3 1.0 evalbridge"]


def test_written_gz_file_is_gzip(tmp_path):
    """A path ending in .gz is written gzip-compressed."""
    path = tmp_path / "qrels.gz"
    write_qrels({"q": {"d": 1}}, path)
    assert path.read_bytes()[:2] == b"\x1f\x8b" and gzip.decompress(path.read_bytes()) == b"q 0 d 1\n"


@pytest.mark.parametrize("data, message", [
    ({"q 1": {"d": 1}}, "query id 'q 1'"),
    ({"#q": {"d": 1}}, "starts with '#'"),
    ({"q": {"d\t2": 1}}, r"doc id 'd\\t2'"),
    ({"q": {"": 1}}, "doc id ''"),
])
def test_writing_ids_that_would_break_the_format_raises(tmp_path, data, message):
    """Ids with whitespace, empty ids and query ids starting with '#' cannot be written."""
    for write in (write_qrels, write_run):
        with pytest.raises(InputError, match=message):
            write(data, tmp_path / "out.txt")


def test_write_run_rejects_a_tag_with_spaces(tmp_path):
    """The tag is one column, so it must be one word."""
    with pytest.raises(InputError, match="one word"):
        write_run({"q": {"d": 1.0}}, tmp_path / "run.txt", tag="my run")


def test_float_scores_survive_exactly(tmp_path):
    """Scores are written with repr, so 0.1 + 0.2 and 1e-300 read back bit for bit."""
    data = {"q": {"a": 0.1 + 0.2, "b": 1e-300, "c": -2.5e17}}
    write_run(data, tmp_path / "run.txt")
    back = read_run(tmp_path / "run.txt")["q"]
    assert all(back[d] == v and math.copysign(1, back[d]) == math.copysign(1, v) for d, v in data["q"].items())
