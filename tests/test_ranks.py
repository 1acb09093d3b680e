"""Ranks: a rank column or field read as ranks at every format and door, and a rank never read as a score."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from doors import Case, assert_same, through_doors
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import EvalbridgeWarning, InputError
from evalbridge.io._rag_columns import read_log_columns
from evalbridge.io.ranks import says_rank
from evalbridge.common.ranking import rank as ranked

TABLES = ("csv", "tsv", "parquet", "pandas", "arrow", "polars", "jsonl")


def _frame(rows: list[tuple[str, str, int]], value: str) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["qid", "docno", value])


def _read(rows: list[tuple[str, str, int]], holder: str, folder: Path, value: str, **options: Any) -> eb.Run:
    """``rows`` (qid, doc, number) in ``holder``, the number column named ``value``, read as a run."""
    frame = _frame(rows, value)
    if holder in ("csv", "tsv"):
        path = folder / f"run.{holder}"
        frame.to_csv(path, sep="," if holder == "csv" else "\t", index=False)
        obj: Any = path
    elif holder == "parquet":
        obj = folder / "run.parquet"
        frame.to_parquet(obj, index=False)
    elif holder == "jsonl":
        obj = folder / "run.jsonl"
        obj.write_text("".join(json.dumps(r) + "\n" for r in frame.to_dict("records")))
    elif holder == "arrow":
        obj = pa.Table.from_pandas(frame, preserve_index=False)
    elif holder == "polars":
        obj = pl.from_pandas(frame)
    else:
        obj = frame
    return eb.read_run(obj, query="qid", doc="docno", **options)


@st.composite
def ranked_rows(draw: Any) -> list[tuple[str, str, int]]:
    """Queries with distinct ranks >= 1 (gaps allowed), rows in any order."""
    rows = []
    for q in range(draw(st.integers(1, 4))):
        n = draw(st.integers(1, 6))
        ranks = draw(st.lists(st.integers(1, 40), min_size=n, max_size=n, unique=True))
        rows += [(f"q{q}", f"d{i}", r) for i, r in enumerate(ranks)]
    return draw(st.permutations(rows))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ranked_rows(), holder=st.sampled_from(TABLES))
def test_a_run_given_by_rank_is_the_run_given_by_minus_rank_as_score(tmp_path: Path, rows: list, holder: str) -> None:
    """Every table and JSON Lines format: rank=r ranks the documents as score=-r does (and scores fall by rank)."""
    by_rank = _read(rows, holder, tmp_path, "position", rank="position")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalbridgeWarning)  # -rank may rise with the row order by chance
        by_score = _read([(q, d, -r) for q, d, r in rows], holder, tmp_path, "sim", score="sim")
    assert list(by_rank) == list(by_score)
    for qid in by_rank:
        assert ranked(by_rank[qid]) == ranked(by_score[qid])
        ranks = {d: r for q, d, r in rows if q == qid}
        assert {d: s for d, s in by_rank[qid].items()} == {d: max(ranks.values()) + 1.0 - r for d, r in ranks.items()}
    assert "ranks (position) turned into scores max_rank + 1 - rank per query" in by_rank.notes


@pytest.mark.parametrize("holder", TABLES)
def test_a_column_named_rank_is_read_as_ranks_when_no_column_is_a_score(tmp_path: Path, holder: str) -> None:
    run = _read([("q1", "a", 2), ("q1", "b", 1)], holder, tmp_path, "rank")
    assert dict(run["q1"]) == {"a": 1.0, "b": 2.0}
    assert any("rank=rank" in n for n in run.notes)


@pytest.mark.parametrize("holder", TABLES)
@pytest.mark.parametrize("name", ["rank", "position", "doc_rank", "Rank"])
def test_a_rank_column_named_as_the_score_is_refused_with_the_fix(tmp_path: Path, holder: str, name: str) -> None:
    with pytest.raises(InputError, match=rf"'{name}' is named as the score, but its name says rank.*"
                                         rf"Fix: use rank='{name}'"):
        _read([("q1", "a", 1), ("q1", "b", 2)], holder, tmp_path, name, score=name)


@pytest.mark.parametrize(("name", "says"), [("rank", True), ("position", True), ("docRank", True), ("bm25_pos", True),
                                            ("rank_score", False), ("score", False), ("sim", False), ("ranker", False)])
def test_names_that_say_rank(name: str, says: bool) -> None:
    assert says_rank(name) is says


@pytest.mark.parametrize("holder", TABLES)
def test_whole_scores_rising_with_the_rows_of_every_query_are_warned_about(tmp_path: Path, holder: str) -> None:
    rows = [("q1", "a", 1), ("q1", "b", 2), ("q1", "c", 3), ("q2", "d", 1), ("q2", "e", 2)]
    with pytest.warns(EvalbridgeWarning, match="rise with the row order in every query.*use rank='sim'"):
        run = _read(rows, holder, tmp_path, "sim", score="sim")
    assert any("as ranks do" in n for n in run.notes)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalbridgeWarning)
        _read([("q1", "a", 3), ("q1", "b", 1), ("q2", "d", 1), ("q2", "e", 2)], holder, tmp_path, "sim", score="sim")


@pytest.mark.parametrize("holder", TABLES)
@pytest.mark.parametrize(("ranks", "says"), [
    ((1, 1), "rank 1 is given twice"),
    ((0, 1), "is not a whole number >= 1"),
    ((1, -2), "is not a whole number >= 1"),
])
def test_ranks_are_whole_numbers_from_1_given_once_per_query(tmp_path: Path, holder: str, ranks: tuple,
                                                            says: str) -> None:
    with pytest.raises(InputError, match=says) as raised:
        _read([("q1", "a", ranks[0]), ("q1", "b", ranks[1])], holder, tmp_path, "position", rank="position")
    if holder in ("csv", "tsv", "jsonl"):
        assert f"run.{holder}:" in str(raised.value)


def test_a_fractional_rank_is_refused() -> None:
    frame = pd.DataFrame({"qid": ["q1", "q1"], "docno": ["a", "b"], "position": [1.0, 1.5]})
    with pytest.raises(InputError, match=r"position 1.5 in row 1 is not a whole number >= 1"):
        eb.read_run(frame, query="qid", doc="docno", rank="position")
    assert dict(eb.read_run(frame.iloc[:1], query="qid", doc="docno", rank="position")["q1"]) == {"a": 1.0}


def test_rank_and_score_together_or_rank_for_qrels_are_refused() -> None:
    frame = pd.DataFrame({"qid": ["q1"], "docno": ["a"], "position": [1], "sim": [0.5], "rel": [1]})
    with pytest.raises(InputError, match="give either score= or rank="):
        eb.read_run(frame, query="qid", doc="docno", score="sim", rank="position")
    with pytest.raises(InputError, match="option 'rank' names the rank column of runs"):
        eb.read_qrels(frame, query="qid", doc="docno", rank="position")


def test_a_mapping_of_ranks_takes_rank_true() -> None:
    run = eb.read_run({"q1": {"a": 2, "b": 1, "c": 3}}, rank=True)
    assert dict(run["q1"]) == {"a": 2.0, "b": 3.0, "c": 1.0}
    with pytest.raises(InputError, match="rank 1 is given twice"):
        eb.read_run({"q1": {"a": 1, "b": 1}}, rank=True)
    with pytest.raises(InputError, match="rank=True applies to runs"):
        eb.read_qrels({"q1": {"a": 1}}, rank=True)


def test_msmarco_ranks_give_the_same_scores_as_a_rank_column(tmp_path: Path) -> None:
    (tmp_path / "run.tsv").write_text("q1\ta\t2\nq1\tb\t1\nq2\tc\t1\n")
    rows = [("q1", "a", 2), ("q1", "b", 1), ("q2", "c", 1)]
    assert eb.read_run(tmp_path / "run.tsv") == _read(rows, "parquet", tmp_path, "rank", rank="rank")


# ---------------------------------------------------------------- RAG logs

def _log(folder: Path, questions: list[dict]) -> Path:
    path = folder / "log.jsonl"
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    return path


def _both(path: Path, **options: Any) -> tuple[Any, Any]:
    """What the strict reader and the columnar reader (any size) give: (qrels, run) or the error text / None."""
    try:
        strict: Any = eb.read_pair(path, format="rag", **options)
    except InputError as error:
        strict = str(error)
    return strict, read_log_columns(path, large_only=False, **options)


def test_a_rag_rank_field_gives_scores_by_rank_in_both_readers(tmp_path: Path) -> None:
    path = _log(tmp_path, [{"qid": "q1", "retrieved": [{"doc_id": "a", "pos": 2}, {"doc_id": "b", "pos": 1}],
                            "relevant": ["a"]},
                           {"qid": "q2", "retrieved": [{"doc_id": "c", "pos": 1}], "relevant": ["c"]}])
    (qrels, strict), (_, fast) = _both(path, rank="pos")
    assert strict == fast and dict(strict["q1"]) == {"a": 1.0, "b": 2.0}
    assert eb.evaluate(qrels, strict, "mrr")["mrr"] == 0.75
    assert "ranks (pos) turned into scores max_rank + 1 - rank per query" in strict.notes == fast.notes
    with pytest.raises(InputError, match="'pos' is named as the score.*use rank='pos'"):
        eb.read_pair(path, format="rag", score="pos")


SCORED = {"doc_id": "a", "score": 0.9}
PLAIN = {"doc_id": "b"}


@pytest.mark.parametrize(("questions", "says"), [
    ([[PLAIN, {"doc_id": "c"}], [SCORED, {"doc_id": "b", "score": 0.1}]],
     r"question 'q2' is ranked by the 'score' field.*but question 'q1' \(.*log.jsonl:1\) by its list order"),
    ([[SCORED], [PLAIN]], r"question 'q2' is ranked by its list order.*but question 'q1'.*by the 'score' field"),
    ([[SCORED], ["b"]], r"question 'q2' is ranked by its list order"),
    ([[SCORED, PLAIN]], r"1 of the 2 retrieved objects have a 'score' field"),
])
def test_a_rag_log_is_ranked_one_way_decided_once(tmp_path: Path, questions: list, says: str) -> None:
    """The score field was chosen at the first question whose objects all had one: earlier questions were ranked
    by list order, later ones by score. Now a log ranked two ways is refused (the columnar reader declines it)."""
    path = _log(tmp_path, [{"qid": f"q{i}", "retrieved": r, "relevant": ["a"]} for i, r in enumerate(questions, 1)])
    strict, fast = _both(path)
    assert fast is None
    assert isinstance(strict, str) and re.search(says, strict), strict
    assert "Fix: give every retrieved object a 'score'" in strict


def test_a_named_score_field_refuses_plain_ids(tmp_path: Path) -> None:
    path = _log(tmp_path, [{"qid": "q1", "retrieved": [{"doc_id": "a", "sim": 1.0}], "relevant": ["a"]},
                           {"qid": "q2", "retrieved": ["a", "b"], "relevant": ["a"]}])
    strict, fast = _both(path, score="sim")
    assert fast is None and "score='sim' names a sub-field of retrieved objects" in strict


def test_consistent_logs_read_the_same_in_both_readers(tmp_path: Path) -> None:
    for lists in ([[SCORED], [{"doc_id": "c", "score": 0.2}]], [[PLAIN], ["c", "d"]], [[], [SCORED]]):
        path = _log(tmp_path, [{"qid": f"q{i}", "retrieved": r, "relevant": ["a"]} for i, r in enumerate(lists, 1)])
        strict, fast = _both(path)
        assert strict == fast and strict[1].notes == fast[1].notes


# ---------------------------------------------------------------- the three doors

QRELS = "q1 0 a 1\nq2 0 d 1\nq3 0 h 1\n"
#: The issue's case in small: ranks read as scores reversed every ranking (MRR 0.2167 instead of 0.8333).
RANKS = pd.DataFrame({"qid": ["q1"] * 5 + ["q2"] * 5 + ["q3"] * 5,
                      "docno": list("abcxy") + list("defuv") + list("ghijk"),
                      "position": [1, 2, 3, 4, 5] * 3})


def _parquet(frame: pd.DataFrame) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    return sink.getvalue().to_pybytes()


@pytest.mark.parametrize(("options", "means", "says"), [
    ({"rank": "position"}, 0.8333, ()),
    ({}, 0.8333, ()),  # picked by name (no column looks like a score)
    ({"score": "position"}, None, ("'position' is named as the score", "rank", "position")),
])
def test_the_mrr_of_a_ranked_parquet_run_is_the_same_at_every_door(tmp_path: Path, options: dict, means: Any,
                                                                  says: tuple) -> None:
    case = Case(files={"qrels.txt": QRELS, "run.parquet": _parquet(RANKS)}, qrels="qrels.txt", runs=("run.parquet",),
                metrics=("mrr",), run_options={"query": "qid", "doc": "docno", **options})
    doors = through_doors(case, tmp_path)
    assert_same(doors, says=says)
    if means is None:
        assert doors["cli"].code == 2
    else:
        assert round(doors["api"].means["run"]["mrr"], 4) == means  # type: ignore[index]
        reversed_ = eb.read_run(RANKS.assign(position=6 - RANKS.position), query="qid", doc="docno", rank="position")
        assert round(eb.evaluate(eb.read_qrels(tmp_path / "qrels.txt"), reversed_, "mrr")["mrr"], 4) == 0.2167


def test_rising_whole_scores_are_warned_about_at_every_door(tmp_path: Path) -> None:
    frame = RANKS.rename(columns={"position": "sim"})
    case = Case(files={"qrels.txt": QRELS, "run.parquet": _parquet(frame)}, qrels="qrels.txt", runs=("run.parquet",),
                metrics=("mrr",), run_options={"query": "qid", "doc": "docno", "score": "sim"})
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    for door in doors.values():  # the command line prints EvalbridgeWarnings on stderr ("evalbridge: warning: ...")
        assert any("as ranks do" in w for w in door.warnings) or "warning: " in door.message, door


def _log_text(questions: list[dict]) -> str:
    return "".join(json.dumps(q) + "\n" for q in questions)


@pytest.mark.parametrize(("questions", "options", "means", "says"), [
    ([{"qid": "q1", "retrieved": [{"doc_id": "a", "pos": 2}, {"doc_id": "b", "pos": 1}], "relevant": ["a"]}],
     {"rank": "pos"}, 0.5, ()),
    ([{"qid": "q1", "retrieved": [{"doc_id": "a", "pos": 2}, {"doc_id": "b", "pos": 1}], "relevant": ["a"]}],
     {"score": "pos"}, None, ("'pos' is named as the score", "rank", "pos")),
    ([{"qid": "q1", "retrieved": [{"doc_id": "a"}, {"doc_id": "b"}], "relevant": ["a"]},
      {"qid": "q2", "retrieved": [{"doc_id": "a", "score": 0.1}, {"doc_id": "b", "score": 0.9}], "relevant": ["a"]}],
     {}, None, ("log.jsonl:2", "question 'q2' is ranked by the 'score' field", "one log is ranked one way")),
])
def test_rag_logs_read_ranks_and_refuse_two_orders_at_every_door(tmp_path: Path, questions: list, options: dict,
                                                                  means: Any, says: tuple) -> None:
    case = Case(files={"log.jsonl": _log_text(questions)}, runs=("log.jsonl",), metrics=("mrr",),
                run_options={"format": "rag", **options})
    doors = through_doors(case, tmp_path)
    assert_same(doors, says=says)
    if means is None:
        assert doors["cli"].code == 2
    else:
        assert doors["api"].means == {"log": {"mrr": means}}


def test_jsonl_ranks_at_every_door(tmp_path: Path) -> None:
    rows = [{"qid": "q1", "docno": "a", "position": 2}, {"qid": "q1", "docno": "b", "position": 1}]
    case = Case(files={"qrels.txt": "q1 0 a 1\n", "run.jsonl": _log_text(rows)}, qrels="qrels.txt",
                runs=("run.jsonl",), metrics=("mrr",), run_options={"rank": "position"})
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"run": {"mrr": 0.5}}


# ---------------------------------------------------------------- ranks in a mapping, a JSON object, a RAG log's field

#: ranks 1, 2, 3 in the order of every query of a JSON object: by rank q1 a (RR 1), q2 d second (1/2), q3 h second
#: (1/2); read as scores every list is reversed: q1 1/3, q2 1/2, q3 1/2
RISING = {"q1": {"a": 1, "b": 2, "c": 3}, "q2": {"e": 1, "d": 2, "f": 3}, "q3": {"g": 1, "h": 2, "i": 3}}
BY_RANK, AS_SCORES = (1 + 1 / 2 + 1 / 2) / 3, (1 / 3 + 1 / 2 + 1 / 2) / 3


def _said(door: Any) -> str:
    return " ".join((*door.warnings, door.message))


def test_whole_values_rising_in_every_query_of_a_json_object_are_warned_about_with_each_doors_fix(
        tmp_path: Path) -> None:
    case = Case(files={"qrels.txt": QRELS, "run.json": json.dumps(RISING)}, qrels="qrels.txt", runs=("run.json",),
                metrics=("mrr",))
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"run": {"mrr": pytest.approx(AS_SCORES)}}  # read as asked, but said
    fixes = {"api": "use rank=True", "cli": "use --run-columns rank=values", "config": "use columns: {rank: values}"}
    for name, door in doors.items():
        assert "rise with the row order in every query" in _said(door) and fixes[name] in _said(door), door


def test_a_json_object_of_ranks_named_as_ranks_gives_the_mrr_by_rank_at_every_door(tmp_path: Path) -> None:
    case = Case(files={"qrels.txt": QRELS, "run.json": json.dumps(RISING)}, qrels="qrels.txt", runs=("run.json",),
                metrics=("mrr",), run_options={"rank": "values"})
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    assert doors["config"].means == {"run": {"mrr": pytest.approx(BY_RANK)}}
    assert not any("as ranks do" in _said(door) for door in doors.values())


def test_a_python_mapping_of_ranks_is_warned_about_and_read_by_rank_true() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"d": 1}, "q3": {"h": 1}}
    with pytest.warns(EvalbridgeWarning, match=r"rise with the row order in every query.*use rank=True"):
        assert eb.evaluate(qrels, RISING, "mrr")["mrr"] == pytest.approx(AS_SCORES)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EvalbridgeWarning)
        assert eb.evaluate(qrels, eb.read_run(RISING, rank=True), "mrr")["mrr"] == pytest.approx(BY_RANK)
        eb.evaluate(qrels, {"q1": {"a": 3, "b": 2}, "q2": {"d": 1, "e": 2}}, "mrr")  # not rising in every query
        eb.evaluate(qrels, {"q1": {"a": 1.0, "b": 2.0}}, "mrr")  # not whole numbers as ints


#: a RAG log whose objects carry a rank, listed out of rank order: by rank q1 a first (RR 1), q2 d second (1/2),
#: q3 g first (1); by the list order q1 1/2, q2 1, q3 1/3
OUT_OF_ORDER = [{"qid": "q1", "retrieved": [{"doc_id": "c", "rank": 3}, {"doc_id": "a", "rank": 1},
                                            {"doc_id": "b", "rank": 2}], "relevant": ["a"]},
                {"qid": "q2", "retrieved": [{"doc_id": "d", "rank": 2}, {"doc_id": "f", "rank": 3},
                                            {"doc_id": "e", "rank": 1}], "relevant": ["d"]},
                {"qid": "q3", "retrieved": [{"doc_id": "i", "rank": 3}, {"doc_id": "h", "rank": 2},
                                            {"doc_id": "g", "rank": 1}], "relevant": ["g"]}]
RAG_BY_RANK = (1 + 1 / 2 + 1) / 3


@pytest.mark.parametrize("options", [{}, {"rank": "rank"}])
def test_a_rag_logs_rank_field_is_used_not_ignored_at_every_door(tmp_path: Path, options: dict) -> None:
    case = Case(files={"log.jsonl": _log_text(OUT_OF_ORDER)}, runs=("log.jsonl",), metrics=("mrr",),
                run_options={"format": "rag", **options})
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"log": {"mrr": pytest.approx(RAG_BY_RANK)}}
    qrels, run = eb.read_pair(tmp_path / "log.jsonl", format="rag", **options)
    assert "ranks (rank) turned into scores max_rank + 1 - rank per query" in run.notes
    assert "ranks (rank) turned into scores max_rank + 1 - rank per query" in eb.evaluate(
        qrels, run, "mrr").provenance.notes


def test_a_rag_logs_rank_field_disagreeing_with_its_scores_is_refused_at_every_door(tmp_path: Path) -> None:
    scored = [{**q, "retrieved": [{**item, "score": float(10 - i)} for i, item in enumerate(q["retrieved"])]}
              for q in OUT_OF_ORDER]
    case = Case(files={"log.jsonl": _log_text(scored)}, runs=("log.jsonl",), metrics=("mrr",),
                run_options={"format": "rag"})
    doors = through_doors(case, tmp_path)
    assert_same(doors, says=("log.jsonl:1", "'rank' and 'score' fields order them differently"))
    fixes = {"api": "score='score' or rank='rank'", "cli": "--run-columns score=score or --run-columns rank=rank",
             "config": "columns: {score: score} or columns: {rank: rank}"}
    assert all(fixes[name] in door.message for name, door in doors.items()), {n: d.message for n, d in doors.items()}
    for options, means in (({"rank": "rank"}, RAG_BY_RANK), ({"score": "score"}, (1 / 2 + 1 + 1 / 3) / 3)):
        named = through_doors(Case(files={}, runs=("log.jsonl",), metrics=("mrr",),
                                   run_options={"format": "rag", **options}), tmp_path)
        assert_same(named)
        assert named["cli"].means == {"log": {"mrr": pytest.approx(means)}}


def test_a_rag_rank_field_on_some_objects_only_is_refused(tmp_path: Path) -> None:
    path = _log(tmp_path, [{"qid": "q1", "retrieved": [{"doc_id": "a", "rank": 2}, {"doc_id": "b"}],
                            "relevant": ["a"]}])
    strict, fast = _both(path)
    assert fast is None and "1 of the 2 retrieved objects have a 'rank' field" in strict
