"""Distances (lower is better, as vector stores return them): a ``distance`` role beside ``score`` and ``rank`` at
every door and in every format that names its columns or fields, turned into scores -distance once and said in the
provenance; a column whose name says distance named as the score is refused with the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from doors import Case, assert_same, through_doors

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.io.distances import says_distance

QRELS = "q1 0 a 1\nq2 0 d 1\nq3 0 h 1\n"
#: nearest first: q1 a b c (a relevant: RR 1), q2 e d f (d: 1/2), q3 g h i (h: 1/2): MRR (1 + 1/2 + 1/2) / 3
DISTANCES = {"q1": {"a": 0.1, "b": 0.2, "c": 0.3}, "q2": {"d": 0.5, "e": 0.2, "f": 0.9},
             "q3": {"g": 0.1, "h": 0.2, "i": 0.3}}
MRR = (1 + 1 / 2 + 1 / 2) / 3
#: the same distances read as scores (the silent mistake): q1 c b a (1/3), q2 f d e (1/2), q3 i h g (1/2)
REVERSED = (1 / 3 + 1 / 2 + 1 / 2) / 3
ROWS = [(q, d, v) for q, docs in DISTANCES.items() for d, v in docs.items()]


def _parquet(frame: pd.DataFrame) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), sink)
    return sink.getvalue().to_pybytes()


def _files(column: str) -> dict[str, str | bytes]:
    """The distances in every table / JSON Lines / JSON / RAG shape, the value column named ``column``."""
    frame = pd.DataFrame(ROWS, columns=["qid", "docno", column])
    log = "".join(json.dumps({"query_id": q, "retrieved": [{"doc_id": d, column: v} for d, v in docs.items()],
                              "relevant": [d for d in docs if d in "adh"]}) + "\n" for q, docs in DISTANCES.items())
    return {"qrels.txt": QRELS, "run.csv": frame.to_csv(index=False), "run.tsv": frame.to_csv(index=False, sep="\t"),
            "run.parquet": _parquet(frame),
            "run.jsonl": "".join(json.dumps(dict(zip(frame.columns, r))) + "\n" for r in ROWS),
            "run.json": json.dumps(DISTANCES), "log.jsonl": log}


def _case(fmt: str, column: str, options: dict[str, Any]) -> Case:
    files = _files(column)
    if fmt == "rag":
        return Case(files=files, runs=("log.jsonl",), metrics=("mrr",), run_options=options)
    tables = {} if fmt == "json" else {"query": "qid", "doc": "docno"}
    return Case(files=files, qrels="qrels.txt", runs=(f"run.{fmt}",), metrics=("mrr",),
                run_options={**tables, **options})


FORMATS = ("csv", "tsv", "parquet", "jsonl", "json", "rag")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_distance_role_ranks_the_nearest_first_at_every_door(tmp_path: Path, fmt: str) -> None:
    """API distance='dist', CLI --run-columns distance=dist, config columns: {distance: dist} (a JSON mapping has
    no column name: its values are the column 'values'): MRR by hand, not the reversed one."""
    case = _case(fmt, "dist", {"distance": "values" if fmt == "json" else "dist"})
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    assert doors["api"].code == 0
    assert next(iter(doors["cli"].means.values()))["mrr"] == pytest.approx(MRR)
    assert next(iter(doors["config"].means.values()))["mrr"] != pytest.approx(REVERSED)


@pytest.mark.parametrize("fmt", ("csv", "parquet", "jsonl", "rag"))
@pytest.mark.parametrize("column", ["distance", "_distance", "cosine_distance", "dist"])
def test_a_distance_named_as_the_score_is_refused_with_the_fix_of_each_door(tmp_path: Path, fmt: str,
                                                                             column: str) -> None:
    doors = through_doors(_case(fmt, column, {"score": column}), tmp_path)
    assert_same(doors, says=(f"{column!r} is named as the score, but its name says distance",
                             "the ranking would be reversed"))
    assert doors["api"].code == 2
    fixes = {"api": f"use distance='{column}'", "cli": f"use --run-columns distance={column}",
             "config": f"use columns: {{distance: {column}}}"}
    assert all(fixes[name] in door.message for name, door in doors.items()), {n: d.message for n, d in doors.items()}


@pytest.mark.parametrize("fmt", ("csv", "parquet", "jsonl"))
def test_a_column_named_distance_orders_the_run_when_no_column_looks_like_a_score(tmp_path: Path, fmt: str) -> None:
    doors = through_doors(_case(fmt, "distance", {}), tmp_path)
    assert_same(doors)
    assert doors["config"].means["run"]["mrr"] == pytest.approx(MRR)


def test_the_no_score_column_error_offers_the_distance_role() -> None:
    frame = pd.DataFrame(ROWS, columns=["qid", "docno", "l2"])
    with pytest.raises(InputError, match=r"of distances, lower is better: distance='\.\.\.'"):
        eb.read_run(frame, query="qid", doc="docno")


def test_scores_are_minus_the_distances_and_the_provenance_says_so() -> None:
    frame = pd.DataFrame(ROWS, columns=["qid", "docno", "dist"])
    run = eb.read_run(frame, query="qid", doc="docno", distance="dist")
    assert {q: dict(docs) for q, docs in run.items()} == {q: {d: -v for d, v in docs.items()}
                                                          for q, docs in DISTANCES.items()}
    said = "distances (dist) turned into scores -distance (the nearest document ranks first)"
    assert said in run.notes
    results = eb.evaluate(eb.read_qrels({"q1": {"a": 1}, "q2": {"d": 1}, "q3": {"h": 1}}), run, "mrr")
    assert results["mrr"] == pytest.approx(MRR)
    assert said in results.provenance.notes and said in results.provenance.summary()
    mapping = eb.read_run(DISTANCES, distance=True)
    assert mapping == run and "distances (the values) turned into scores -distance" in mapping.notes[0]


def test_a_distance_of_zero_is_the_score_zero() -> None:
    assert str(eb.read_run({"q1": {"a": 0.0}}, distance=True)["q1"]["a"]) == "0.0"


def test_distance_with_score_or_rank_or_for_qrels_is_refused() -> None:
    frame = pd.DataFrame({"qid": ["q1"], "docno": ["a"], "dist": [0.5], "sim": [0.5], "rel": [1]})
    with pytest.raises(InputError, match=r"both score='sim' and distance='dist' are given.*give either score= or "
                                         r"distance="):
        eb.read_run(frame, query="qid", doc="docno", score="sim", distance="dist")
    with pytest.raises(InputError, match="option 'distance' names the distance column of runs"):
        eb.read_qrels(frame, query="qid", doc="docno", distance="dist")
    with pytest.raises(InputError, match="distance=True applies to runs"):
        eb.read_qrels({"q1": {"a": 1}}, distance=True)
    with pytest.raises(InputError, match="no column looks like the score, and several could order the run"):
        eb.read_run(pd.DataFrame({"qid": ["q1"], "docno": ["a"], "rank": [1], "distance": [0.5]}),
                    query="qid", doc="docno")


@pytest.mark.parametrize(("name", "says"), [("distance", True), ("_distance", True), ("l2Distance", True),
                                            ("dist", True), ("distances", True), ("distance_score", False),
                                            ("score", False), ("distinct", False)])
def test_names_that_say_distance(name: str, says: bool) -> None:
    assert says_distance(name) is says
