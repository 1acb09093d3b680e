"""fuse (evalbridge.transforms.fusion): ranx's fusion over any runs, the same fused ranking as ranx.fuse on ranx's objects (ties in the inputs
aside: ranked by evalbridge's rule), named by its recipe, evaluated and compared like any run."""

from __future__ import annotations

import random

import pytest

import evalbridge as eb
import evalbridge.common.ranking
from evalbridge.errors import InputError
from evalbridge.transforms.fusion import METHODS, NORMS, TRAINED, fuse

DL19 = ("data", "real", "trec-dl-2019-passage")

#: the parameters given to the methods that need them (the trained ones get ranx's own training's)
GIVEN = {"gmnz": {"gamma": 1.5}, "logn_isr": {"sigma": 0.02}, "rbc": {"phi": 0.8}, "rrf": {"k": 10},
         "mixed": {"weights": [0.2, 0.3, 0.5]}, "w_bordafuse": {"weights": [0.2, 0.3, 0.5]},
         "w_condorcet": {"weights": [0.2, 0.3, 0.5]}, "wmnz": {"weights": [0.2, 0.3, 0.5]},
         "wsum": {"weights": [0.2, 0.3, 0.5]}}


def untied_runs(seed: int) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, dict[str, int]]]:
    """Three runs over the same 6 queries (overlapping documents, distinct scores within each query) and qrels."""
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(30)]
    runs = {}
    for name in ("a", "b", "c"):
        runs[name] = {}
        for q in range(6):
            picked = rng.sample(docs, rng.randint(5, 20))
            scores = rng.sample(range(1, 1000), len(picked))
            runs[name][f"q{q}"] = {d: s / 100 for d, s in zip(picked, scores)}
    qrels = {f"q{q}": {d: rng.randint(0, 2) for d in rng.sample(docs, 12)} for q in range(6)}
    return runs, qrels


def ranx_fused(runs: dict[str, dict[str, dict[str, float]]], method: str, norm: str | None,
               params: dict[str, object]) -> dict[str, dict[str, float]]:
    import ranx

    fused = ranx.fuse([ranx.Run(run, name=name) for name, run in runs.items()], norm=norm, method=method,
                      params=params)
    return fused.to_dict()


def ranx_trained(runs: dict[str, dict[str, dict[str, float]]], qrels: dict[str, dict[str, int]], method: str,
                 norm: str | None) -> dict[str, object]:
    import ranx

    quiet = {"show_progress": False} if method in ("probfuse", "slidefuse") else {}
    return dict(ranx.optimize_fusion(qrels=ranx.Qrels(qrels), runs=[ranx.Run(r) for r in runs.values()], norm=norm,
                                     method=method, metric="ndcg@10", **quiet))


def assert_same_run(found: eb.Run, expected: dict[str, dict[str, float]]) -> None:
    assert set(found) == set(expected)
    for q, scores in expected.items():
        assert set(found[q]) == set(scores), q
        for doc, score in scores.items():
            assert found[q][doc] == pytest.approx(score, rel=1e-12, abs=1e-12), (q, doc)


@pytest.mark.slow
@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_equals_ranx_fuse_on_untied_runs(method: str) -> None:
    runs, qrels = untied_runs(seed=len(method))
    params = ranx_trained(runs, qrels, method, "min-max") if method in TRAINED else GIVEN.get(method, {})
    found = fuse(runs, method=method, norm="min-max", params=params)
    assert_same_run(found, ranx_fused(runs, method, "min-max", params))
    assert found.name is not None and found.name.startswith(method) and "a, b, c" in found.name


@pytest.mark.slow
@pytest.mark.parametrize("norm", NORMS)
def test_every_normalisation_equals_ranx_fuse(norm: str | None) -> None:
    runs, _ = untied_runs(seed=7)
    for method in ("wsum", "mnz"):
        params = GIVEN.get(method, {})
        assert_same_run(fuse(runs, method=method, norm=norm, params=params), ranx_fused(runs, method, norm, params))


@pytest.mark.slow
def test_weights_learnt_on_a_training_split_are_ranx_optimize_fusion_s() -> None:
    import ranx

    runs, qrels = untied_runs(seed=3)
    train = ["q0", "q1", "q2"]
    found = fuse(runs, method="wsum", qrels=qrels, train=train, metric="ndcg@10")
    best = ranx.optimize_fusion(qrels=ranx.Qrels({q: qrels[q] for q in train}),
                                runs=[ranx.Run({q: r[q] for q in train}) for r in runs.values()], norm="min-max",
                                method="wsum", metric="ndcg@10", show_progress=False)
    assert_same_run(found, ranx_fused(runs, "wsum", "min-max", dict(best)))
    assert set(found) == set(runs["a"])  # every query, the training ones included: the notes say which to evaluate
    assert any("3 training queries" in note for note in found.notes)
    assert "weights=" + ", ".join(f"{w:g}" for w in best["weights"]) in (found.name or "")


def test_tied_input_scores_meet_rrf_in_evalbridge_s_order() -> None:
    """20 documents tied in run a: RRF gives each 1 / (k + rank) at its rank by doc id descending (trec_eval's rule),
    where ranx's unstable sort would have put them in an order of its own."""
    tied = {f"t{i:02d}": 1.0 for i in range(20)}
    a = {"q1": {"top": 2.0, **tied}}
    b = {"q1": {"top": 1.0}}
    found = fuse({"a": a, "b": b}, method="rrf", params={"k": 60})
    expected = {"top": 1 / 61 + 1 / 61}
    for position, doc in enumerate(sorted(tied, reverse=True), start=2):
        expected[doc] = 1 / (60 + position)
    assert_same_run(found, {"q1": expected})
    theirs = ranx_fused({"a": a, "b": b}, "rrf", "min-max", {"k": 60})
    assert theirs["q1"] != pytest.approx(expected)  # the difference named: ranx's own order of the ties


def test_the_recipe_names_the_method_its_normalisation_and_parameters() -> None:
    runs, _ = untied_runs(seed=1)
    assert fuse(runs, method="rrf").name == "rrf(a, b, c; k=60)"
    assert fuse(runs, method="wsum", params={"weights": [0.2, 0.3, 0.5]}).name == \
        "wsum[min-max](a, b, c; weights=0.2, 0.3, 0.5)"
    assert fuse(runs, method="mnz", norm="zmuv").name == "mnz[zmuv](a, b, c)"
    assert fuse(runs, method="rrf", name="hybrid").name == "hybrid"


@pytest.mark.slow
def test_dl19_rrf_of_bm25_and_splade_compared_with_its_parts_in_one_call(shared) -> None:  # noqa: ANN001
    folder = shared.joinpath(*DL19)
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/trec-dl-2019-passage is absent: {folder} does not exist")
    qrels = folder / "qrels.dl19-passage.txt"
    parts = {"bm25": folder / "run.bm25.top100.txt", "splade": folder / "run.splade-pp-ed.top100.txt"}
    fused = fuse(parts, method="rrf")
    assert fused.name == "rrf(bm25, splade; k=60)"
    read = {name: eb.read_run(path) for name, path in parts.items()}
    # RRF by its definition (Cormack et al. 2009), each input ranked by evalbridge's rule
    expected: dict[str, dict[str, float]] = {}
    for run in read.values():
        for q, scores in run.items():
            for position, doc in enumerate(eb.common.ranking.rank(scores), start=1):
                expected.setdefault(q, {})[doc] = expected.get(q, {}).get(doc, 0.0) + 1 / (60 + position)
    assert_same_run(fused, expected)
    # ranx.fuse on ranx's objects: the same run on every query whose inputs tie no scores (the difference named)
    theirs = ranx_fused({n: r.to_dict() for n, r in read.items()}, "rrf", "min-max", {"k": 60})
    untied = [q for q in fused if all(len(set(r[q].values())) == len(r[q]) for r in read.values())]
    assert 0 < len(untied) < len(fused)
    assert_same_run(eb.Run({q: fused[q] for q in untied}), {q: theirs[q] for q in untied})
    c = eb.compare(qrels, {**read, fused.name: fused}, ["nDCG@10", "R(rel=2)@100"], baseline="bm25")
    alone = eb.evaluate(qrels, fused, ["nDCG@10", "R(rel=2)@100"])
    text = str(c)
    assert fused.name in text and f"{alone['nDCG@10']:.4f}" in text


@pytest.mark.parametrize(("call", "message"), [
    (lambda: fuse([{"q1": {"a": 1.0}}]), "at least two runs"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q2": {"d": 1.0}}}), "rank different queries"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="best"), "method must be one of .*got 'best'"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, norm="l2"), "norm must be one of .*got 'l2'"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum"), "wsum needs weights"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="probfuse"), "learnt from judged"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="rrf", params={"k": 5},
                  qrels={"q1": {"d": 1}}, train=["q1"]), "not both"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum", train=["q1"]),
     "needs the judgements"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum", qrels={"q1": {"d": 1}},
                  train=["q9"]), "not both judged and ranked"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="rrf", params={"w": 1}),
     "rrf takes k"),
    (lambda: fuse({"a": {"q1": {"d": float("nan")}}, "b": {"q1": {"d": 1.0}}}), "finite"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="sum", qrels={"q1": {"d": 1}},
                  train=["q1"]), "no parameter to learn"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum", params={"weights": 0.3}),
     r"weights takes one number per run \(2: a, b\); got 0.3"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum", params={"weights": [1.0]}),
     r"weights takes one number per run \(2: a, b\); got \[1.0\]"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum", qrels={"q1": {"d": 1}},
                  train=["q1"], metric="zz"), "metric 'zz' is not a measure ranx can train on"),
    (lambda: fuse({"a": {"q1": {"d": 1.0}}, "b": {"q1": {"d": 1.0}}}, method="wsum", qrels={"q1": {"d": 1}},
                  train=["q1"], metric="ndcg@x"), "metric 'ndcg@x' is not a measure ranx can train on"),
])
def test_bad_input_is_refused_with_the_fix(call, message: str) -> None:  # noqa: ANN001
    with pytest.raises(InputError, match=message) as caught:
        call()
    assert caught.value.fix or "finite" in message
