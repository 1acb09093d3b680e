"""eb.diff: the queries ranked by change, and the documents that entered, left or moved in the top k."""

from __future__ import annotations

import json
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.decisions.diffing import diff
from evalbridge.errors import EvalbridgeWarning, InputError
from evalbridge.common.ranking import rank
from evalbridge.views.run_diff import render_diff


def test_dl19_bm25_to_splade_golden_by_hand(dl19) -> None:  # noqa: ANN001
    """Query 1124210, BM25 -> SPLADE++ at k=10, read off the files by hand (sort by score desc, then doc id desc;
    grades from the qrels): P(rel=2)@10 falls from 1.0 to 0.3, the largest drop of the 43 queries; the ten
    grade-2 passages of BM25's top 10 all leave it, three judged passages and seven unjudged ones enter."""
    d = diff(dl19 / "qrels.dl19-passage.txt", dl19 / "run.bm25.top100.txt", dl19 / "run.splade-pp-ed.top100.txt",
             ["P(rel=2)@10", "ndcg@10"], k=10, names=("bm25", "splade"))
    p10 = d.metric("P(rel=2)@10")
    assert (p10.queries[0], p10.a[0], p10.b[0]) == ("1124210", 1.0, 0.3)
    assert p10.queries[1:3] == ("131843", "19335")  # -0.4, then -0.1 (the first of the -0.1 by query id)
    assert [round(m.a, 4) for m in d.means] == [0.4116, 0.5058]  # nDCG@10 as published (anserini regressions)
    assert round(d.means[1].b, 4) == 0.7308  # SPLADE++ ED nDCG@10 as published (pyserini 2cr)
    q = d.query("1124210")
    assert q is not None
    assert [(c.doc, c.grade, c.rank_a, c.rank_b) for c in q.left] == [
        ("2258597", 2.0, 1, 96), ("8026740", 2.0, 2, None), ("2494577", 2.0, 3, 17), ("8026735", 2.0, 4, 61),
        ("8492305", 2.0, 5, 43), ("2258595", 2.0, 6, None), ("3162331", 2.0, 7, 14), ("4648414", 2.0, 8, None),
        ("2258594", 2.0, 9, None), ("2461683", 2.0, 10, None)]
    assert [(c.doc, c.grade, c.rank_a, c.rank_b) for c in q.entered] == [
        ("2258592", 3.0, 20, 2), ("2258591", 2.0, 14, 4), ("8026737", 2.0, 15, 5)]
    assert [(c.doc, c.rank_b) for c in q.unjudged_entered] == [
        ("546158", 1), ("1383617", 3), ("3520553", 6), ("5366909", 7), ("3680798", 8), ("4057442", 9),
        ("4425464", 10)]
    assert q.moves == ()  # no passage stayed in the top 10


def test_values_are_evaluates_own(dl19) -> None:  # noqa: ANN001
    qrels, a, b = dl19 / "qrels.dl19-passage.txt", dl19 / "run.bm25.top100.txt", dl19 / "run.bm25-rm3.top100.txt"
    metrics = {"ndcg": "nDCG@10", "recall": "R(rel=2)@100", "rr": "RR@10"}
    d = diff(qrels, a, b, metrics, k=5)
    for label in metrics:
        old, new = eb.evaluate(qrels, a, metrics).query(label), eb.evaluate(qrels, b, metrics).query(label)
        changes = d.metric(label)
        assert dict(zip(changes.queries, changes.a)) == old and dict(zip(changes.queries, changes.b)) == new
        assert list(changes.delta) == sorted(changes.delta)


def test_the_views_show_the_same_queries(dl19) -> None:  # noqa: ANN001
    d = diff(dl19 / "qrels.dl19-passage.txt", dl19 / "run.bm25.top100.txt", dl19 / "run.splade-pp-ed.top100.txt",
             "P(rel=2)@10", queries=2)
    shown = [q.query for q in d.queries]
    assert shown[0] == "1124210" and len(shown) == 4  # two largest drops, two largest gains
    for fmt in ("terminal", "markdown", "html"):
        text = render_diff(d, fmt)
        assert all(q in text for q in shown) and "2258597" in text
    data = json.loads(render_diff(d, "json"))
    assert [q["query"] for q in data["queries"]] == shown and data["systems"] == ["A", "B"]
    frame = d.to_frame(table="documents")
    assert set(frame["query"]) == set(shown)
    assert len(d.to_frame()) == 43


def test_names_are_escaped_in_every_view() -> None:
    name = "<b>|x\n"
    d = diff({name: {"d|1": 1}}, {name: {"d|1": 1.0, "<i>": 2.0}}, {name: {"d|1": 2.0, "<i>": 1.0}}, "P@1", k=1,
             names=("a<", "b|"))
    assert "<b>|x" not in render_diff(d, "html") and "&lt;b&gt;|x" in render_diff(d, "html")
    assert "<i>" not in render_diff(d, "html") and "a&lt;" in render_diff(d, "html")
    markdown = render_diff(d, "markdown")
    assert "<b>|x" not in markdown
    assert "\n|x" not in render_diff(d, "terminal")


def test_refusals() -> None:
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    with pytest.raises(InputError, match="average"):
        diff(qrels, run, run, "P@1", ties="average")
    with pytest.raises(InputError, match="k must be an integer >= 1"):
        diff(qrels, run, run, "P@1", k=0)
    with pytest.raises(InputError, match="names must be two names"):
        diff(qrels, run, run, "P@1", names=("x",))


ids = st.sampled_from([f"d{i}" for i in range(8)])
rankings = st.dictionaries(ids, st.integers(0, 4).map(float), min_size=0, max_size=8)
grades = st.dictionaries(ids, st.integers(0, 2), min_size=1, max_size=6)


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict, dict, dict, int]:
    queries = draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), min_size=1, max_size=3, unique=True))
    qrels = {q: draw(grades) for q in queries}
    run_a = {q: draw(rankings) for q in queries}
    run_b = {q: draw(rankings) for q in queries}
    return qrels, {q: r for q, r in run_a.items() if r}, {q: r for q, r in run_b.items() if r}, draw(st.integers(1, 5))


def _quiet_diff(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EvalbridgeWarning)
        return diff(*args, **kwargs)


@given(cases())
def test_a_run_against_itself_is_empty(case) -> None:  # noqa: ANN001
    qrels, run, _, k = case
    d = _quiet_diff(qrels, run, run, ["P@3", "nDCG@5", "AP"], k=k, queries=None)
    assert d.empty and d.queries == ()
    assert all(delta == 0 for c in d.changes for delta in c.delta)


@given(cases(), st.sampled_from(["docid_desc", "docid_asc", "input"]))
def test_entered_and_left_match_the_two_top_k_lists(case, ties) -> None:  # noqa: ANN001
    qrels, run_a, run_b, k = case
    d = _quiet_diff(qrels, run_a, run_b, ["P@2", "RR"], k=k, queries=None, ties=ties, moves=100)
    shown = {q.query: q for q in d.queries}
    for query in qrels:
        top_a = rank(run_a.get(query, {}), ties=ties)[:k]
        top_b = rank(run_b.get(query, {}), ties=ties)[:k]
        q = shown.get(query)
        if top_a == top_b and q is None:
            continue
        assert q is not None, query
        assert {c.doc for c in (*q.entered, *q.unjudged_entered)} == set(top_b) - set(top_a)
        assert {c.doc for c in (*q.left, *q.unjudged_left)} == set(top_a) - set(top_b)
        for c in (*q.entered, *q.left, *q.unjudged_entered, *q.unjudged_left, *q.moves):
            assert c.grade == (float(qrels[query][c.doc]) if c.doc in qrels[query] else None)
            full_a, full_b = rank(run_a.get(query, {}), ties=ties), rank(run_b.get(query, {}), ties=ties)
            assert c.rank_a == (full_a.index(c.doc) + 1 if c.doc in full_a else None)
            assert c.rank_b == (full_b.index(c.doc) + 1 if c.doc in full_b else None)
        assert all(c.grade is not None for c in (*q.entered, *q.left))
        moved = {d_ for d_ in set(top_a) & set(top_b) if top_a.index(d_) != top_b.index(d_)}
        assert moved == {c.doc for c in q.moves}
        assert [abs(c.move or 0) for c in q.moves] == sorted((abs(c.move or 0) for c in q.moves), reverse=True)


def test_columnar_inputs_give_the_same_diff(dl19) -> None:  # noqa: ANN001
    """Runs and qrels held as columns (what large files and tables are read into) give the diff of dict rows."""
    import pyarrow as pa

    def table(path, value):  # noqa: ANN001, ANN202
        rows = [line.split() for line in path.read_text().splitlines()]
        column = 3 if value == "grade" else 4
        return pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows],
                         value: [float(r[column]) for r in rows]})

    qrels_path, a_path, b_path = (dl19 / "qrels.dl19-passage.txt", dl19 / "run.bm25.top100.txt",
                                  dl19 / "run.splade-pp-ed.top100.txt")
    qrels, a, b = eb.read_qrels(table(qrels_path, "grade")), eb.read_run(table(a_path, "score")), \
        eb.read_run(table(b_path, "score"))
    assert qrels.columnar is not None and a.columnar is not None
    from_columns = diff(qrels, a, b, ["P(rel=2)@10", "ndcg@10"], queries=None)
    from_dicts = diff(qrels.to_dict(), a.to_dict(), b.to_dict(), ["P(rel=2)@10", "ndcg@10"], queries=None)
    assert from_columns.queries == from_dicts.queries and from_columns.changes == from_dicts.changes
    assert len(from_columns.queries) == 43


@given(cases(), st.sampled_from(["docid_desc", "input"]), st.one_of(st.none(), st.integers(1, 4)), st.booleans(),
       st.sampled_from(["float64", "float32"]))
def test_the_top_k_is_the_one_the_metrics_saw(case, ties, depth, judged_only, precision) -> None:  # noqa: ANN001
    """With depth, judged_only and the score precision, each run's top k is cut_run's run ranked by the tie rule:
    the documents the evaluation scored."""
    from evalbridge.evaluation.cutting import cut_run
    from evalbridge.model.data import Qrels, Run
    from evalbridge.model.settings import Settings

    qrels, run_a, run_b, k = case
    settings = Settings(ties=ties, depth=depth, judged_only=judged_only, score_precision=precision)
    d = _quiet_diff(qrels, run_a, run_b, ["P@2"], k=k, queries=None, settings=settings)
    shown = {q.query: q for q in d.queries}
    cut_a = cut_run(Qrels(qrels), Run(run_a, allow_empty=True), settings).run
    cut_b = cut_run(Qrels(qrels), Run(run_b, allow_empty=True), settings).run
    for query in qrels:
        top_a = rank(cut_a.get(query, {}), ties=ties, score_precision=precision)[:k]
        top_b = rank(cut_b.get(query, {}), ties=ties, score_precision=precision)[:k]
        q = shown.get(query)
        if q is None:
            assert set(top_a) == set(top_b)
            continue
        assert {c.doc for c in (*q.entered, *q.unjudged_entered)} == set(top_b) - set(top_a)
        assert {c.doc for c in (*q.left, *q.unjudged_left)} == set(top_a) - set(top_b)
