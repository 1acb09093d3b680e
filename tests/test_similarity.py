"""eb.diff without judgements: how far two runs' rankings moved, per query and overall (RBO with ties and its
bounds, Jaccard at k, tau and tau_AP over the shared documents), and B as a reproduction of A with judgements."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import kendalltau

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.common.ranking import rank, rank_groups
from evalbridge.stats.rbo import rbo
from evalbridge.stats.similarity import MEASURES, similarity
from evalbridge.stats.system_order import tau_ap, tau_b


DOCS = [f"d{i}" for i in range(12)]


@st.composite
def runs(draw: st.DrawFn, queries: tuple[str, ...] = ("q1", "q2", "q3")) -> dict[str, dict[str, float]]:
    """Rankings over a shared pool of documents, with tied scores (scores from a few values)."""
    return {q: draw(st.dictionaries(st.sampled_from(DOCS), st.integers(0, 5).map(float), min_size=1, max_size=10))
            for q in queries}


@settings(deadline=None)
@given(runs(), runs(), st.sampled_from(["w", "a", "b"]), st.sampled_from([0.5, 0.9]), st.integers(1, 6))
def test_each_query_is_the_pure_functions_of_its_two_rankings(a: dict[str, dict[str, float]],
                                                               b: dict[str, dict[str, float]], variant: str,
                                                               p: float, k: int) -> None:
    d = eb.diff(None, a, b, p=p, ties=variant, k=k)
    s = d.similarity
    assert s is not None and sorted(s.queries) == sorted(a) and (s.p, s.ties, s.k) == (p, variant, k)
    for q, *values, shared in s.rows():
        expected = rbo(rank_groups(a[q]), rank_groups(b[q]), p=p, ties=variant)
        assert values[:4] == pytest.approx(list(expected[:4]), abs=1e-12)
        top_a, top_b = set(rank(a[q])[:k]), set(rank(b[q])[:k])
        assert values[4] == len(top_a & top_b) / len(top_a | top_b)
        common = [doc for doc in a[q] if doc in b[q]]
        assert shared == len(common)
        if len(common) >= 2:
            x, y = [a[q][doc] for doc in common], [b[q][doc] for doc in common]
            reference = kendalltau(x, y).statistic
            assert values[5] == pytest.approx(reference, abs=1e-12) or (math.isnan(values[5]) and math.isnan(reference))
            assert values[6] == pytest.approx(tau_ap(x, y), nan_ok=True)
    assert list(s.rbo) == sorted(s.rbo)  # the least similar first
    overall = s.overall()
    assert overall["rbo"] == pytest.approx(float(np.mean(s.rbo)))


@settings(deadline=None)  # scipy's first kendalltau call imports scipy.stats: no per-example deadline
@given(st.lists(st.floats(-3, 3, allow_nan=False), min_size=2, max_size=30).flatmap(
    lambda x: st.tuples(st.just(x), st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=len(x), max_size=len(x)))))
def test_tau_b_equals_scipy(pair: tuple[list[float], list[float]]) -> None:
    x, y = pair
    from evalbridge.stats.system_order import settled

    reference = kendalltau(settled(x), settled(y)).statistic  # scores equal to 12 digits tie, as tau_b documents
    assert tau_b(x, y) == pytest.approx(reference, abs=1e-12, nan_ok=True)


def test_a_run_against_itself_is_the_same_everywhere() -> None:
    run = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"x": 1.0, "y": 1.0}}
    d = eb.diff(None, run, run, ties="b")
    assert d.similarity is not None and d.empty and d.queries == ()
    assert d.similarity.rbo == pytest.approx((1.0, 1.0)) and d.similarity.jaccard == (1.0, 1.0)


def test_dl19_bm25_to_splade_without_judgements(dl19) -> None:  # noqa: ANN001
    a, b = dl19 / "run.bm25.top100.txt", dl19 / "run.splade-pp-ed.top100.txt"
    d = eb.diff(None, a, b, p=0.9, ties="a", names=("bm25", "splade"), queries=3)
    s = d.similarity
    assert s is not None and len(s.queries) == 43 and d.means == () and d.reproduction == ()
    run_a, run_b = eb.read_run(a), eb.read_run(b)
    q = s.queries[0]  # the least similar query, recomputed from the files
    assert s.rbo[0] == pytest.approx(rbo(rank_groups(run_a[q]), rank_groups(run_b[q]), p=0.9).ext)
    assert s.rbo[0] == min(s.rbo) and [x.query for x in d.queries] == list(s.queries[:3])
    assert all(c.grade is None for x in d.queries for c in (*x.unjudged_entered, *x.unjudged_left))
    for fmt in ("terminal", "markdown", "html", "latex"):
        text = d.table(fmt)
        assert "rbo" in text and "overall (mean of 43)" in text and q in text
    data = json.loads(d.table("json"))
    assert data["similarity"]["overall"]["rbo"] == pytest.approx(float(np.mean(s.rbo)))
    assert set(data["similarity"]["overall"]) == set(MEASURES)
    frame = d.to_frame(table="similarity")
    assert len(frame) == 43 and list(frame.columns[:5]) == ["query", "rbo", "rbo_min", "rbo_max", "rbo_res"]


def test_dl19_with_judgements_holds_the_similarity_and_the_reproduction(dl19) -> None:  # noqa: ANN001
    from repro_eval.measure.effectiveness import RMSE
    from repro_eval.measure.overall_effects import DRI, ER

    qrels = dl19 / "qrels.dl19-passage.txt"
    bm25, rm3, splade = (dl19 / f"run.{n}.top100.txt" for n in ("bm25", "bm25-rm3", "splade-pp-ed"))
    # the original experiment: RM3 over BM25; the "reproduction": SPLADE++ over BM25
    d = eb.diff(qrels, rm3, splade, ["nDCG@10", "AP(rel=2)"], baselines=(bm25, bm25), similarity=True)
    assert eb.diff(qrels, rm3, splade, "nDCG@10").similarity is None  # with judgements: asked for only
    assert d.similarity is not None and len(d.similarity.queries) == 43
    values = {name: eb.evaluate(qrels, run, ["nDCG@10", "AP(rel=2)"]) for name, run in
              (("bm25", bm25), ("rm3", rm3), ("splade", splade))}

    def shaped(name: str, label: str) -> dict[str, dict[str, float]]:
        return {q: {"m": v} for q, v in values[name].query(label).items()}

    for row in d.reproduction:
        assert row.n == 43
        assert row.rmse == pytest.approx(RMSE(shaped("rm3", row.metric), shaped("splade", row.metric))["m"])
        args = (shaped("rm3", row.metric), shaped("bm25", row.metric), shaped("splade", row.metric),
                shaped("bm25", row.metric))
        assert row.effect_ratio == pytest.approx(ER(*args)["m"])
        assert row.delta_ri == pytest.approx(DRI(*args)["m"])
    assert list(d.to_frame(table="reproduction").columns) == ["metric", "n", "rmse", "effect_ratio", "delta_ri"]
    assert "as a reproduction of" in d.table("markdown")


def test_different_query_sets_are_refused_naming_them() -> None:
    with pytest.raises(InputError, match=r"1 only in A \(q2\), 0 only in B") as caught:
        eb.diff(None, {"q1": {"a": 1.0}, "q2": {"a": 1.0}}, {"q1": {"a": 1.0}})
    assert caught.value.fix


def test_one_query_is_its_own_overall() -> None:
    d = eb.diff(None, {"q1": {"a": 2.0, "b": 1.0}}, {"q1": {"b": 2.0, "a": 1.0}})
    assert d.similarity is not None and d.similarity.overall()["rbo"] == d.similarity.rbo[0]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"p": 1.0}, "p must be"), ({"p": float("nan")}, "p"), ({"metrics": "nDCG@10"}, "need judgements"),
    ({"ties": "average"}, "ranks no single order"), ({"ties": "x"}, "ties must be one of"),
])
def test_bad_options_are_refused(kwargs: dict[str, object], message: str) -> None:
    run = {"q1": {"a": 1.0}}
    with pytest.raises(InputError, match=message):
        eb.diff(None, run, run, **kwargs)  # type: ignore[arg-type]


def test_nan_scores_are_refused_as_any_run() -> None:
    with pytest.raises(InputError, match="finite"):
        eb.diff(None, {"q1": {"a": float("nan")}}, {"q1": {"a": 1.0}})


def test_with_judgements_metrics_are_required() -> None:
    with pytest.raises(InputError, match="none was given"):
        eb.diff({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, {"q1": {"a": 1.0}})
