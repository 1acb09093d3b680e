"""One ranking, three ways to say it: scores (higher is better), ranks (1 = best) or distances (lower is better) give
the same numbers in every format that names its values and at every door (Python API, command line, config)."""

from __future__ import annotations

import json
import tempfile
import warnings
from typing import Any

from doors import Case, assert_same, through_doors
from hypothesis import given, settings
from hypothesis import strategies as st

from evalbridge.errors import EvalbridgeWarning

METRICS = ("mrr", "P@3", "nDCG@5", "AP", "R@2")
#: the value of each way, from a document's score s (distinct whole numbers, so the ranking has no tie) and its
#: place among its query's documents (1 = the highest score)
WAYS = {"score": lambda s, place: s / 8, "rank": lambda s, place: place, "distance": lambda s, place: 64 - s / 4}


@st.composite
def rankings(draw: Any) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
    """(scores {qid: {doc: s}} listed in any order, grades {qid: {doc: 0..2}} of some of the documents)."""
    scores, grades = {}, {}
    for q in range(draw(st.integers(1, 3))):
        docs = [f"d{i}" for i in range(draw(st.integers(1, 6)))]
        values = draw(st.lists(st.integers(1, 200), min_size=len(docs), max_size=len(docs), unique=True))
        listed = draw(st.permutations(list(zip(docs, values))))
        scores[f"q{q}"] = dict(listed)
        judged = draw(st.lists(st.sampled_from(docs), unique=True, min_size=1))
        grades[f"q{q}"] = {d: draw(st.integers(0, 2)) for d in judged}
    if not any(g for docs in grades.values() for g in docs.values()):
        first = next(iter(grades))
        grades[first][next(iter(grades[first]))] = 1
    return scores, grades


def _values(scores: dict[str, dict[str, int]], way: str) -> dict[str, dict[str, float | int]]:
    """Each query's documents, listed as drawn, with the value ``way`` gives them."""
    out = {}
    for qid, docs in scores.items():
        place = {d: i for i, d in enumerate(sorted(docs, key=docs.__getitem__, reverse=True), 1)}
        out[qid] = {d: WAYS[way](s, place[d]) for d, s in docs.items()}
    return out


def _case(fmt: str, way: str, scores: dict, grades: dict) -> Case:
    values = _values(scores, way)
    column = {"score": "sim", "rank": "pos", "distance": "dist"}[way]
    if fmt == "rag":
        log = "".join(json.dumps({"qid": q, "retrieved": [{"doc_id": d, column: v} for d, v in docs.items()],
                                  "relevant": grades[q]}) + "\n" for q, docs in values.items())
        return Case(files={"log.jsonl": log}, runs=("log.jsonl",), metrics=METRICS,
                    run_options={"format": "rag", way: column})
    qrels = "".join(f"{q} 0 {d} {g}\n" for q, docs in grades.items() for d, g in docs.items())
    rows = [{"qid": q, "docno": d, column: v} for q, docs in values.items() for d, v in docs.items()]
    if fmt == "json":
        files = {"run.json": json.dumps(values)}
        options: dict[str, Any] = {} if way == "score" else {way: "values"}
    else:
        files = {"run.jsonl": "".join(json.dumps(r) + "\n" for r in rows)} if fmt == "jsonl" else {
            "run.csv": "qid,docno," + column + "\n" + "".join(f"{r['qid']},{r['docno']},{r[column]}\n" for r in rows)}
        options = {"query": "qid", "doc": "docno", way: column}
    return Case(files={"qrels.txt": qrels, **files}, qrels="qrels.txt", runs=(next(iter(files)),), metrics=METRICS,
                run_options=options)


@settings(max_examples=12, deadline=None)
@given(rankings(), st.sampled_from(["csv", "jsonl", "json", "rag"]))
def test_a_ranking_given_as_scores_ranks_or_distances_gives_the_same_numbers_at_every_door(data: Any,
                                                                                          fmt: str) -> None:
    scores, grades = data
    seen: dict[str, Any] = {}
    for way in WAYS:
        with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
            warnings.simplefilter("ignore", EvalbridgeWarning)  # ids of the run the qrels do not judge
            doors = through_doors(_case(fmt, way, scores, grades), folder)
        assert_same(doors)
        assert doors["api"].code == 0, doors["api"].message
        seen[way] = next(iter(doors["api"].means.values()))
    assert seen["rank"] == seen["score"] == seen["distance"], seen
