"""Queries with no relevant judgement (torchmetrics' empty_target_action): scored 0, dropped or refused, the same
at every door, and counted in the provenance."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from doors import Case, assert_same, through_doors
from strategies import qrels_and_run

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 0\nq3 0 d5 2\n"
RUN = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d3 1 2.0 a\nq2 Q0 d4 2 1.0 a\nq3 Q0 d6 1 1.0 a\n"


def case(**settings: object) -> Case:
    return Case(files={"qrels.txt": QRELS, "a.run": RUN}, qrels="qrels.txt", runs=("a.run",), metrics=("P@1", "RR"),
                settings=settings)


@pytest.mark.parametrize("policy, means", [
    ({}, {"P@1": 1 / 3, "RR": 1 / 3}),                               # q2 scores 0 (every library's default)
    ({"no_relevant": "zero"}, {"P@1": 1 / 3, "RR": 1 / 3}),
    ({"no_relevant": "drop"}, {"P@1": 1 / 2, "RR": 1 / 2}),         # q2 leaves the means
    ({"no_relevant": "drop", "min_relevance": 2}, {"P@1": 0.0, "RR": 0.0}),  # at level 2 only q3 has a relevant doc
])
def test_the_policy_gives_the_same_means_at_every_door(tmp_path, policy, means):
    doors = through_doors(case(**policy), tmp_path)
    assert_same(doors)
    got = doors["api"].means["a"]
    assert got == pytest.approx(means)


def test_error_refuses_naming_the_queries_with_the_fix_of_each_door(tmp_path):
    doors = through_doors(case(no_relevant="error"), tmp_path)
    assert_same(doors, says="1 of 3 qrels query has no judgement at or above the relevance level 1 ('q2')")
    fixes = {"api": "no_relevant='drop'", "cli": "--no-relevant drop", "config": "no_relevant: drop"}
    assert doors["api"].code == 2 and all(fixes[n] in d.message for n, d in doors.items())


def test_the_provenance_counts_the_queries_whatever_the_policy():
    qrels, run = {"q1": {"a": 1}, "q2": {"b": 0}, "q3": {}}, {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    zero = eb.evaluate(qrels, run, "P@1")
    dropped = eb.evaluate(qrels, run, "P@1", no_relevant="drop")
    assert zero.provenance.without_relevant == dropped.provenance.without_relevant == ("q2", "q3")
    assert zero.provenance.queries_evaluated == 3 and dropped.provenance.queries_evaluated == 1
    assert "2 without a relevant judgement (left out)" in dropped.provenance.summary()
    assert dropped.provenance.to_dict()["without_relevant"] == ["q2", "q3"]
    with pytest.raises(eb.InputError, match="no_relevant must be one of"):
        eb.evaluate(qrels, run, "P@1", no_relevant="skip")


@settings(max_examples=60, deadline=None)
@given(qrels_and_run(max_queries=4, missing=True), st.sampled_from(["P@3", "AP", "nDCG@5", "RR"]),
       st.sampled_from([1, 2]))
def test_dropping_is_the_mean_over_the_queries_with_a_relevant_judgement(data, metric, level):
    qrels, run = data
    zero = eb.evaluate(qrels, run, metric, min_relevance=level)
    drop = eb.evaluate(qrels, run, metric, min_relevance=level, no_relevant="drop")
    without = {q for q, docs in qrels.items() if not any(g >= level for g in docs.values())}
    assert set(zero.provenance.without_relevant) == without
    assert set(drop.query(metric)) == set(zero.query(metric)) - without
    assert all(zero.query(metric)[q] == drop.query(metric)[q] for q in drop.query(metric))
    if drop.query(metric):
        assert math.isclose(drop[metric], sum(drop.query(metric).values()) / len(drop.query(metric)))


def test_a_cross_check_applies_the_policy_to_every_column(tmp_path):
    """The cross-check takes no_relevant as evaluate does: with drop, q2 (nothing relevant) leaves the reference
    column and every library's; with error it is refused, naming it; at every door (keyword, --no-relevant, key)."""
    from doors import cli

    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "a.run").write_text(RUN)
    qrels, run = eb.read_qrels(tmp_path / "qrels.txt"), eb.read_run(tmp_path / "a.run")
    dropped = eb.crosscheck(qrels, run, ["P@1"], backends=["pytrec_eval"], no_relevant="drop")
    kept = eb.crosscheck(qrels, run, ["P@1"], backends=["pytrec_eval"])
    assert set(kept.query("P@1")) == {"q1", "q2", "q3"} and set(dropped.query("P@1")) == {"q1", "q3"}
    assert set(dropped.query("P@1", backend="pytrec_eval")) == {"q1", "q3"} and dropped.ok
    with pytest.raises(eb.InputError, match="'q2'"):
        eb.crosscheck(qrels, run, ["P@1"], backends=["pytrec_eval"], settings=eb.Settings(no_relevant="error"))
    code, out, _ = cli("check", tmp_path / "qrels.txt", tmp_path / "a.run", "-m", "P@1", "--backends", "pytrec_eval",
                       "--no-relevant", "drop")
    assert code == 0
    (tmp_path / "eval.yaml").write_text("qrels: qrels.txt\nruns: {a: a.run}\nmetrics: [P@1]\nno_relevant: error\n"
                                        "crosscheck: {backends: [pytrec_eval]}\n")
    code, _, err = cli("run", tmp_path / "eval.yaml", "--no-write")
    assert code == 2 and "'q2'" in err and "no_relevant: drop" in err
