"""What the messages say, alike at every door: the ids each side holds when int meets str, where two long ids differ
(and that normalising white space makes them meet), qrels that list only relevant documents said once, and every
warning pointing at the caller's line."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import evalbridge as eb
from doors import Case, through_doors

QRELS_INT = '{"query_id": 101, "doc_id": 7, "relevance": 1}\n{"query_id": 102, "doc_id": 8, "relevance": 1}\n'
RUN_STR = "101 Q0 7 1 2 x\n102 Q0 8 1 2 x\n"


def test_the_int_against_str_id_error_shows_the_ids_each_side_holds(tmp_path: Path) -> None:
    """Not a canned '1 vs '1'': the qrels' ids as integers (101, 102), the run's as texts ('101', '102'), and that
    they meet as text; exit 2 at every door."""
    case = Case(files={"qrels.jsonl": QRELS_INT, "a.run": RUN_STR}, qrels="qrels.jsonl", runs=("a.run",),
                metrics=("P@1",))
    doors = through_doors(case, tmp_path)
    for name, door in doors.items():
        assert door.code == 2, (name, door.message)
        assert "int in the qrels (101, 102)" in door.message, (name, door.message)
        assert "str in the run ('101', '102')" in door.message, (name, door.message)
        assert "as text they meet" in door.message and "1 vs '1'" not in door.message, (name, door.message)
    assert "ids='str'" in doors["api"].message and "--ids str" in doors["cli"].message
    assert "ids: str" in doors["config"].message


def test_the_doc_id_error_and_the_agreement_show_both_sides_ids() -> None:
    with pytest.raises(eb.InputError, match=r"doc ids are int in the qrels \(7\) but str in the run \('7'\)"):
        eb.evaluate({"q1": {7: 1}}, {"q1": {"7": 1.0}}, "P@1")
    with pytest.raises(eb.InputError, match=r"query ids are int in 'a' \(1, 2\) but str in 'b' \('1', '2'\)"):
        eb.agree({1: {"d": 1}, 2: {"d": 0}}, {"1": {"d": 1}, "2": {"d": 0}}, names=("a", "b"))


TEXT = "Annual leave is twenty-five days a year for every employee, taken in blocks of at most two weeks"
SPACED = TEXT.replace("two weeks", "two  weeks")


def test_two_long_ids_that_differ_at_the_end_are_shown_where_they_differ(tmp_path: Path) -> None:
    """A text cut at 37 characters hid the ending that differs; the warning shows the place (character 89) and
    says normalising white space makes them meet, never 'another corpus'; at every door alike."""
    qrels = "query_id,doc_id,relevance\n" + f'q1,"{TEXT}",1\nq2,d2,1\n'
    run = "query_id,doc_id,score\n" + f'q1,"{SPACED}",1\nq2,d2,1\n'
    case = Case(files={"qrels.csv": qrels, "run.csv": run}, qrels="qrels.csv", runs=("run.csv",), metrics=("P@1",))
    doors = through_doors(case, tmp_path)
    at = TEXT.index("two weeks") + 5  # 'two' and a space alike, then 'w' against a second space
    said = {"api": " ".join(doors["api"].warnings), "cli": doors["cli"].message, "config": doors["config"].message}
    for name, text in said.items():
        assert doors[name].code == 0, (name, doors[name].message)
        assert f"first differ at character {at}" in text, (name, text)
        assert "'...ocks of at most two  weeks' (retrieved) vs '...ocks of at most two weeks' (judged)" in text, (name, text)
        assert "normalising the white space" in text and "another corpus" not in text, (name, text)
    assert doors["api"].means == doors["cli"].means == doors["config"].means == {"run": {"P@1": 0.5}}


#: BEIR-style qrels: only relevant documents, one grade; q2 and q3 retrieve none of theirs (a legitimate miss)
BEIR = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\nq3\td3\t1\nq4\td4\t1\n"
RUN = "q1 Q0 d1 1 2 x\nq1 Q0 z1 2 1 x\nq2 Q0 z2 1 2 x\nq3 Q0 z3 1 2 x\nq4 Q0 d4 1 2 x\n"


def test_qrels_of_relevant_documents_only_are_said_once_not_warned_per_query(tmp_path: Path) -> None:
    case = Case(files={"qrels.tsv": BEIR, "a.run": RUN}, qrels="qrels.tsv", runs=("a.run",), metrics=("P@1",))
    doors = through_doors(case, tmp_path)
    for name, door in doors.items():
        assert door.code == 0, (name, door.message)
        assert door.means == {"a": {"P@1": 0.5}}
        assert not [w for w in door.warnings if "no judgement" in w], (name, door.warnings)
        assert "no judgement" not in door.message, (name, door.message)
    res = eb.evaluate(str(tmp_path / "qrels.tsv"), str(tmp_path / "a.run"), "P@1")
    assert res.provenance.notes.count(eb.evaluation.matching.RELEVANT_ONLY) == 1
    from doors import cli

    code, out, err = cli("eval", str(tmp_path / "qrels.tsv"), str(tmp_path / "a.run"), "-m", "P@1")
    assert code == 0 and (out + err).count("list only relevant documents") == 1, out + err


def test_qrels_with_a_grade_0_still_warn_about_queries_that_miss_every_judgement() -> None:
    qrels = {"q1": {"d1": 1, "n1": 0}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": {"d1": 1.0}, "q2": {"z2": 1.0}, "q3": {"d3": 1.0}}
    with pytest.warns(eb.EvalbridgeWarning, match="1 of 3 evaluated queries have no judgement"):
        eb.evaluate(qrels, run, "P@1")


def test_relevant_only_qrels_whose_every_query_misses_are_still_warned_about() -> None:
    with pytest.warns(eb.EvalbridgeWarning, match="any of the 2 evaluated queries has a judgement"):
        eb.evaluate({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"x": 1.0}, "q2": {"y": 1.0}}, "P@1")


Q = {"q1": {"a": 1, "b": 0}, "q2": {"x": 1}, "q3": {"c": 1}}
A = {"q1": {"zz": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 2.0, "d": 1.0}}
B = {"q1": {"a": 1.0}, "q2": {"y": 1.0}, "q3": {"d": 2.0}}
CALLS = {
    "evaluate": lambda: eb.evaluate(Q, A, "P@1"),
    "compare": lambda: eb.compare(Q, {"a": A, "b": B}, ["P@1"], n_resamples=50),
    "diff": lambda: eb.diff(Q, A, B, ["P@1"]),
    "diagnose": lambda: eb.diagnose(Q, {"a": A, "b": B}, "P@1", trials=5, n_resamples=50),
    "what_changed": lambda: eb.what_changed(Q, Q, {"a": A, "b": B}, ["P@1"], n_resamples=50),
    "agree": lambda: eb.agree(Q, Q, runs={"a": A, "b": B}, n_resamples=50),
    "read_run of ranks": lambda: eb.read_run({"q1": {"a": 1, "b": 2, "c": 3}}),
}


@pytest.mark.parametrize("verb", list(CALLS))
def test_every_warning_points_at_the_callers_line(verb: str) -> None:
    """Not a library line such as compare.py:395: the line of this file that called the verb."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        CALLS[verb]()
    ours = [w for w in seen if issubclass(w.category, eb.EvalbridgeWarning)]
    assert ours, verb
    assert {Path(w.filename).name for w in ours} == {Path(__file__).name}, [(w.filename, w.lineno) for w in ours]


def test_ratings_read_at_a_level_are_no_relevant_only_qrels() -> None:
    """1-5 ratings at min_relevance=4 list non-relevant documents (their 1-3): a query whose first documents hold
    no judgement is still warned about, and no note says the qrels list only relevant documents."""
    qrels = {"q1": {"d1": 5, "n1": 2}, "q2": {"d2": 4, "n2": 1}, "q3": {"d3": 3}}
    run = {"q1": {"d1": 1.0}, "q2": {"z2": 1.0}, "q3": {"d3": 1.0}}
    with pytest.warns(eb.EvalbridgeWarning, match="1 of 3 evaluated queries have no judgement"):
        res = eb.evaluate(qrels, run, "P@1", min_relevance=4)
    assert eb.evaluation.matching.RELEVANT_ONLY not in res.provenance.notes
