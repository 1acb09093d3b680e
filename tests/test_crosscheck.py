"""The cross-check: per-query agreement, and one small fixture per known difference, each with its verified cause."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.cross_check.checking import CrossCheck
from evalbridge.cross_check.checking import COLUMNS
from strategies import metrics, qrels_and_run

FAST = ["ir_measures", "pytrec_eval"]


@pytest.fixture(scope="module")
def ranx_ready() -> None:
    """Import and JIT ranx once for this module."""
    pytest.importorskip("ranx")
    eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1", "nDCG@2"], backend="ranx")


def causes(check: CrossCheck, backend: str) -> set[str]:
    """The cause names (text before the colon) of one backend's differences."""
    rows = check.differences[check.differences.backend == backend]
    return {cause.split(":")[0] for cause in rows.cause}


# --- one fixture per known difference ------------------------------------------------------------------

def test_pytrec_eval_ties_by_docid_are_explained_when_input_order_is_asked() -> None:
    """Research §2.1: a, b, c tied, a relevant: input order RR 1.0, pytrec_eval (doc id desc) 1/3."""
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}, ["RR"],
                          backends=["pytrec_eval"], ties="input")
    row = check.differences.iloc[0]
    assert (row.reference, row.value) == (1.0, pytest.approx(1 / 3))
    assert row.cause.startswith("ties broken differently") and "docid_desc" in row.cause
    assert check.ok


def test_ir_measures_rr_at_k_ties_by_docid_ascending_are_explained() -> None:
    """RR@k goes to the msmarco provider, which breaks ties by doc id ascending: RR@3 1.0 vs 1/3."""
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}, ["RR@3", "RR"],
                          backends=["ir_measures"])
    diff = check.differences
    assert list(diff.metric) == ["RR@3"] and diff.value.iloc[0] == 1.0
    assert "docid_asc" in diff.cause.iloc[0] and check.ok


def test_ranx_insertion_order_ties_are_explained(ranx_ready: None) -> None:
    """ranx.Run keeps tied docs in insertion order (c, a, b): RR 0.5 where trec_eval's rule gives 1/3."""
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"c": 1.0, "a": 1.0, "b": 1.0}}, ["RR"], backends=["ranx"])
    row = check.differences.iloc[0]
    assert (row.reference, row.value) == (pytest.approx(1 / 3), 0.5)
    assert causes(check, "ranx") == {"ties broken differently"} and check.ok


def test_ranx_large_tie_group_is_explained_by_its_own_order(ranx_ready: None) -> None:
    """A 40-way tie: ranx's numba argsort order is neither insertion order nor doc id order, yet verified."""
    run = {"q1": {f"d{i:02d}": 1.0 for i in range(40)}}
    qrels = {"q1": {"d00": 1, "d05": 1}}
    check = eb.crosscheck(qrels, run, ["RR", "AP"], backends=["ranx"])
    assert not check.differences.empty
    assert causes(check, "ranx") == {"ties broken differently"} and check.ok


def test_float32_score_collision_is_explained() -> None:
    """Research §2.2: scores 1e-9 apart tie in pytrec_eval (C float): RR 0.5 instead of 1.0."""
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"a": 0.9752302811, "b": 0.9752302801}}, ["RR"],
                          backends=["pytrec_eval", "ir_measures"])
    assert list(check.differences.value) == [0.5, 0.5]
    assert causes(check, "pytrec_eval") == {"float32 score collision"} and check.ok


def test_ranx_float_grade_truncation_is_explained(ranx_ready: None) -> None:
    """Research §2.13: grades 7.5 and 2.5: nDCG 0.7967 with floats, 0.7766 in ranx (truncated to 7 and 2)."""
    check = eb.crosscheck({"q1": {"a": 7.5, "b": 2.5}}, {"q1": {"b": 2.0, "a": 1.0}}, ["nDCG"],
                          backends=["ranx", "pytrec_eval"])
    ranx_row = check.differences[check.differences.backend == "ranx"].iloc[0]
    assert ranx_row.reference == pytest.approx(0.7967, abs=1e-4) and ranx_row.value == pytest.approx(0.7766, abs=1e-4)
    assert causes(check, "ranx") == {"float grade truncation"}
    assert causes(check, "pytrec_eval") == set()  # scaled to integers: exact
    assert check.ok


def test_pytrec_eval_dropping_missing_queries_is_explained() -> None:
    """Research §2.3: q2 is not in the run: pytrec_eval returns no value, the reference (zero policy) 0."""
    check = eb.crosscheck({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["RR"], backends=FAST)
    rows = check.differences
    assert list(rows.backend) == ["pytrec_eval"] and list(rows.query_id) == ["q2"]
    assert math.isnan(rows.value.iloc[0]) and rows.reference.iloc[0] == 0.0
    assert rows.cause.iloc[0].startswith("missing-query policy") and check.ok


def test_zero_filled_missing_queries_are_explained_under_drop_policy(ranx_ready: None) -> None:
    """With missing_queries='drop', ranx (make_comparable) and ir_measures score q2 0: explained."""
    check = eb.crosscheck({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["P@1"],
                          backends=["ranx", "ir_measures", "pytrec_eval"], missing_queries="drop")
    assert set(check.differences.backend) == {"ranx", "ir_measures"}
    assert all(c.startswith("missing-query policy") for c in check.differences.cause) and check.ok


def test_pytrec_eval_dropping_unjudged_queries_is_explained() -> None:
    """Research §2.5: a qrels query with no judgement is dropped by pytrec_eval, kept (0) elsewhere."""
    check = eb.crosscheck({"q1": {"a": 1}, "q2": {}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}}, ["P@1"],
                          backends=FAST)
    assert list(check.differences.backend) == ["pytrec_eval"]
    assert "no judgement" in check.differences.cause.iloc[0] and check.ok


def test_ranx_level_applied_to_ndcg_is_explained(ranx_ready: None) -> None:
    """Research §2.7: level 2, qrels a=1, b=2, c=0, run a, b, c, d: nDCG 0.8597 (trec_eval) vs ranx 0.6309."""
    qrels, run = {"q1": {"a": 1, "b": 2, "c": 0}}, {"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}}
    check = eb.crosscheck(qrels, run, ["nDCG", "P@2", "AP", "RR", "Rprec", "R@2", "Success@1"],
                          min_relevance=2)
    rows = check.differences
    assert list(rows.backend) == ["ranx"] and list(rows.metric) == ["nDCG"]
    assert (rows.reference.iloc[0], rows.value.iloc[0]) == (pytest.approx(0.8597, abs=1e-4),
                                                             pytest.approx(0.6309, abs=1e-4))
    assert rows.cause.iloc[0].startswith("relevance threshold applied to nDCG") and check.ok
    means = {b: check.values[b][eb.Metric.parse("P(rel=2)@2")]["q1"] for b in ("ranx", "ir_measures", "pytrec_eval")}
    assert set(means.values()) == {0.5}


def test_ir_measures_gain_variants_do_not_depend_on_the_hash_seed() -> None:
    """Research §2.8: nDCG@10 and exp-gain nDCG@10 in one request are 0.8597 / 0.7967 under every PYTHONHASHSEED."""
    code = ("import json, evalbridge as eb; r = eb.evaluate({'q': {'a': 2, 'b': 1}}, {'q': {'b': 2.0, 'a': 1.0}}, "
            "['nDCG@10', 'nDCG(gain=exp)@10'], backend='ir_measures'); print(json.dumps(r.means))")
    for seed in ("1", "2"):  # seeds 1-4 broke the naive single call in ir-measures 0.4.3
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        means = json.loads(out.stdout)
        assert means["nDCG@10"] == pytest.approx(0.8597187, abs=1e-6)
        assert means["nDCG(gain=exp)@10"] == pytest.approx(0.7967076, abs=1e-6)


def test_float_grades_on_integer_backends_are_bridged_not_unexplained() -> None:
    """pytrec_eval rejects float grades; the cross-check bridges binary metrics and linear nDCG exactly."""
    qrels, run = {"q1": {"a": 7.5, "b": 2.5, "c": 0.4}}, {"q1": {"c": 3.0, "b": 2.0, "a": 1.0}}
    check = eb.crosscheck(qrels, run, ["nDCG@3", "P@2", "nDCG(gain=exp)@3"], backends=FAST, min_relevance=2)
    assert check.differences.empty and check.ok
    assert {m for _, m in check.unsupported} == {"nDCG(gain=exp)@3"}
    assert any("binarised" in note for note in check.bridges["pytrec_eval"])


def test_ranx_bpref_batch_fault_is_a_verified_known_library_fault(ranx_ready: None) -> None:
    """Research notes 2.18: qrels A{n:0}, B{b:1, m:0}, C{c:1, m:0}: ranx's bpref is [0, 0, 0] where trec_eval
    (and pytrec_eval) give [0, 1, 1]: A has no relevant doc, and ranx's loop stops there for the rest of the batch.
    The reference, re-run with that fault emulated, reproduces both zeros."""
    qrels = {"A": {"n": 0}, "B": {"b": 1, "m": 0}, "C": {"c": 1, "m": 0}}
    run = {q: {doc: 2.0 - i for i, doc in enumerate(docs)} for q, docs in qrels.items()}
    check = eb.crosscheck(qrels, run, ["Bpref"], backends=["ranx", "pytrec_eval"])
    assert check.values["ranx"][eb.Metric.parse("Bpref")] == {"A": 0.0, "B": 0.0, "C": 0.0}
    assert check.values["pytrec_eval"][eb.Metric.parse("Bpref")] == {"A": 0.0, "B": 1.0, "C": 1.0}
    rows = check.differences
    assert list(rows.query_id) == ["B", "C"]
    assert all(c.startswith("known library fault: ranx's bpref is 0 for a query at or after one") for c in rows.cause)
    assert check.ok


def test_ranx_bpref_nan_and_negative_grades_are_verified_known_library_faults(ranx_ready: None) -> None:
    """No judged non-relevant doc (qrels a=1, b=1; run x, a): trec_eval 0.5, ranx NaN (AmenRa/ranx#66).
    A negative grade (qrels a=-1, b=1, c=0; run a, b, c): trec_eval 1.0 (a is skipped as unjudged), ranx 0.0
    (a counted as judged non-relevant above b). Both are emulated and verified; a canonicalised check,
    through evalbridge's bridges, agrees with the reference."""
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"a": -1, "b": 1, "c": 0}}
    run = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"a": 3.0, "b": 2.0, "c": 1.0}}
    check = eb.crosscheck(qrels, run, ["Bpref"], backends=["ranx"])
    rows = check.differences.set_index("query_id")
    assert math.isnan(rows.loc["q1", "value"]) and rows.loc["q1", "reference"] == 0.5
    assert "NaN" in rows.loc["q1", "cause"] and rows.loc["q1", "cause"].startswith("known library fault")
    assert (rows.loc["q2", "reference"], rows.loc["q2", "value"]) == (1.0, 0.0)
    assert "negative grades" in rows.loc["q2", "cause"] and check.ok
    bridged = eb.crosscheck(qrels, run, ["Bpref"], backends=["ranx"], canonicalise=True)
    assert bridged.differences.empty and any("NaN" in note for note in bridged.bridges["ranx"])


def test_a_fault_that_does_not_reproduce_is_not_an_explanation(monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong bpref value from ranx is not explained by its known faults merely because ranx has some."""
    pytest.importorskip("ranx")
    from evalbridge.backends import ranx as module

    def wrong(qrels, run, metrics, conventions=None, *, native=False):  # noqa: ANN001, ANN202
        return {m: {q: 0.25 for q in qrels} for m in metrics}, []

    monkeypatch.setattr(module, "BACKEND", replace(module.BACKEND, compute=wrong))
    check = eb.crosscheck({"A": {"n": 0}, "B": {"b": 1, "m": -1}}, {"A": {"n": 1.0}, "B": {"b": 1.0, "m": 0.5}},
                          ["Bpref"], backends=["ranx"])
    assert not check.ok
    assert all(c.startswith(("suspected", "unexplained")) for c in check.unexplained.cause)


# --- the report ---------------------------------------------------------------------------------------

def test_report_has_the_public_columns_and_renders() -> None:
    """differences/unexplained have exactly the contract's columns; markdown, dict and str render."""
    check = eb.crosscheck({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}}, ["RR", "DCG@3"], backends=FAST)
    assert tuple(check.differences.columns) == COLUMNS == tuple(check.unexplained.columns)
    assert check.unexplained.empty and check.ok
    assert ("pytrec_eval", "DCG@3") in check.unsupported
    markdown = check.to_markdown()
    assert "| backend" in markdown and "missing-query policy" in markdown and "no plain DCG" in markdown
    data = check.to_dict()
    json.dumps(data)
    assert data["ok"] is True and data["differences"][0]["value"] is None
    rows = [line.split() for line in str(check).splitlines()]
    assert ["pytrec_eval", "RR", "2", "1", "1", "0"] in rows  # backend, metric, queries, agree, explained, unexplained
    unsupported = rows[rows.index(["backend", "metric", "unsupported", "because"]) + 2:]
    assert any(row[:2] == ["pytrec_eval", "DCG@3"] and "no plain DCG" in " ".join(row) for row in unsupported)


def test_canonicalised_crosscheck_agrees_everywhere(ranx_ready: None) -> None:
    """With canonicalise=True ties, float32 collisions, empty and float-graded queries are bridged: no difference."""
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"x": 7.5, "y": 2.5}, "q3": {}, "q4": {"z": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}, "q2": {"y": 0.9752302811, "x": 0.9752302801}, "q3": {"a": 1.0}}
    check = eb.crosscheck(qrels, run, ["nDCG@3", "P(rel=2)@2", "RR", "AP", "Success@1"], canonicalise=True,
                          min_relevance=1)
    assert check.differences.empty and check.ok and not check.unsupported
    assert all(check.bridges[b] for b in ("ranx", "ir_measures", "pytrec_eval"))


def test_unexplained_difference_makes_the_report_not_ok(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that returns a wrong number is reported as unexplained and .ok is False."""
    from evalbridge.backends import pytrec_eval as module

    real = module.compute

    def wrong(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        values, notes = real(*args, **kwargs)
        return {m: {q: v / 2 for q, v in per.items()} for m, per in values.items()}, notes

    monkeypatch.setattr(module, "BACKEND", replace(module.BACKEND, compute=wrong))
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"b": 2.0, "a": 1.0}}, ["RR"], backends=["pytrec_eval"])
    assert not check.ok and list(check.unexplained.cause) == ["unexplained"]
    assert "UNEXPLAINED" in str(check)


def test_unavailable_backend_is_listed_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend whose library is missing appears in .unsupported with the pip install hint."""
    monkeypatch.setitem(sys.modules, "pytrec_eval", None)
    check = eb.crosscheck({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, ["RR"], backends=["pytrec_eval"])
    assert "pip install" in check.unsupported[("pytrec_eval", "RR")]


# --- property: every native difference is explained ---------------------------------------------------

@st.composite
def messy(draw):  # noqa: ANN001, ANN201
    """Graded qrels, tied scores, missing, run-only and empty queries, sometimes float grades."""
    qrels, run = draw(qrels_and_run(max_queries=4, ties=draw(st.booleans()), missing=True, run_only=True,
                                    min_retrieved=0, float_grades=draw(st.booleans())))
    if draw(st.booleans()):
        qrels["q_empty"] = {}
        run["q_empty"] = {"d00": 1.0}
    if draw(st.booleans()):
        run[next(iter(qrels))] = {}
    if draw(st.booleans()):  # a float32 collision
        run.setdefault("q1", {}).update({"d20": 0.9752302811, "d21": 0.9752302801})
    return qrels, run


#: every family a library computes (the others are listed as unsupported, never compared)
SPECS = st.lists(metrics(names=("P", "R", "RR", "AP", "nDCG", "Rprec", "Success", "Judged", "Bpref", "infAP", "Hits",
                                "F1", "NumRet", "NumRel", "SetP", "SetR", "RBP"), max_k=12, gains=True),
                 min_size=1, max_size=4)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=messy(), specs=SPECS, ties=st.sampled_from(["docid_desc", "docid_asc", "input"]),
       missing=st.sampled_from(["zero", "drop"]), level=st.sampled_from([1, 2]))
def test_every_native_difference_of_fast_backends_is_explained(data, specs, ties, missing, level) -> None:  # noqa: ANN001
    """pytrec_eval and ir_measures under their own conventions: the reference reproduces each difference."""
    qrels, run = data
    check = eb.crosscheck(qrels, run, specs, backends=FAST, ties=ties, missing_queries=missing, min_relevance=level)
    assert check.ok, check.to_markdown()


@pytest.mark.slow
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=messy(), specs=SPECS, missing=st.sampled_from(["zero", "drop"]), level=st.sampled_from([1, 2]))
def test_every_native_difference_of_ranx_is_explained(ranx_ready, data, specs, missing, level) -> None:  # noqa: ANN001
    """ranx with Qrels/Run objects (truncation, its own tie order, level on nDCG): every difference is verified."""
    qrels, run = data
    check = eb.crosscheck(qrels, run, specs, backends=["ranx"], missing_queries=missing, min_relevance=level)
    assert check.ok, check.to_markdown()


@pytest.mark.slow
def test_ranx_truncates_grades_before_a_bridged_level(ranx_ready) -> None:  # noqa: ANN001
    """A level ranx cannot express (0.5) is bridged; the bridge sees grades as ranx.Qrels keeps them.

    Found by hypothesis: the gains 2^1.59 - 1 used to be truncated (to 2) instead of the grade
    (to 1), a value no ranx user could get and the reference could not explain.
    """
    qrels = {"q1": {"d00": 0.0}, "q2": {"d00": 1.0, "d01": 0.7, "d02": 1.59}}
    run = {"q1": {}, "q2": {"d00": 1.0, "d01": 0.5}}
    check = eb.crosscheck(qrels, run, ["nDCG(gain=exp,rel=0.5)", "P(rel=0.5)@2"], backends=["ranx"])
    assert check.ok, check.to_markdown()
    got = check.values["ranx"]
    ndcg, precision = (next(m for m in got if str(m).startswith(p)) for p in ("nDCG", "P"))
    # ranx.Qrels keeps 1, 0, 1: DCG = 1, IDCG = 1 + 1/log2(3); d01 (0.7 -> 0) is not relevant.
    assert got[ndcg]["q2"] == pytest.approx(1 / (1 + 1 / math.log2(3)))
    assert got[precision]["q2"] == pytest.approx(0.5)
    assert set(check.differences["cause"]) == {"float grade truncation: ranx truncates float grades to integers"}


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=messy(), specs=SPECS)
def test_canonicalised_fast_backends_agree_exactly(data, specs) -> None:  # noqa: ANN001
    """After canonicalisation pytrec_eval and ir_measures agree with the reference on every query."""
    qrels, run = data
    check = eb.crosscheck(qrels, run, specs, backends=FAST, canonicalise=True, min_relevance=1)  # float grades: a level
    assert check.differences.empty, check.to_markdown()


def test_large_inputs_take_the_reference_column_from_the_engine_with_the_reference_values() -> None:
    """From THRESHOLD run rows the reference column comes from the fast backend (as in
    ``evaluate``), named in the report, and equals the readable reference query by query."""
    import random

    from evalbridge.backends import auto, reference
    from evalbridge.metrics.spec import parse_metrics

    rng = random.Random(3)
    run = {f"q{i}": {f"d{j}": float(rng.randint(0, 30)) for j in range(100)} for i in range(auto.THRESHOLD // 90)}
    qrels = {q: {f"d{j}": rng.choice([0, 1, 2]) for j in rng.sample(range(120), 12)} for q in run}
    specs = ["nDCG@10", "AP", "RR@10", "P@5", "R@50"]
    check = eb.crosscheck(qrels, run, specs, backends=["pytrec_eval"])
    assert check.reference_backend == "fast"
    assert "reference column: fast" in check.to_markdown()
    assert check.to_dict()["reference_backend"] == "fast"
    assert check.ok, check.to_markdown()
    readable, _ = reference.compute(eb.Qrels(qrels), eb.Run(run), parse_metrics(specs), eb.Settings())
    for metric, values in readable.items():
        got = check.values["reference"][metric]
        assert got.keys() == values.keys()
        assert all(math.isclose(got[q], values[q], abs_tol=1e-12) for q in values), str(metric)


@given(st.dictionaries(st.sampled_from([f"d{i}" for i in range(12)]),
                       st.sampled_from([0.0, -0.0, 1.0, 0.5, 0.9752302811, 0.9752302801, 1e-300, 2.0 ** -150]),
                       max_size=12),
       st.sampled_from(["float64", "float32"]))
def test_tie_and_collision_checks_agree_with_the_tie_groups(scores: dict, precision: str) -> None:
    """has_ties and float32_collisions (counting distinct values) say what the tie groups say."""
    from evalbridge.common.ranking import float32_collisions, has_ties
    from evalbridge.common.ranking import tie_groups

    assert has_ties(scores, score_precision=precision) == bool(tie_groups(scores, score_precision=precision))
    assert float32_collisions(scores) == [g for g in tie_groups(scores, score_precision="float32")
                                          if len({scores[d] for d in g}) > 1]


_SIDE = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]),
                        st.sampled_from([0.0, 0.5, 0.5 + 1e-12, 0.5 + 1e-6, math.nan, math.inf, 1]), max_size=4)


@given(_SIDE, _SIDE)
def test_comparison_flags_exactly_the_values_that_are_not_the_same(ref: dict, got: dict) -> None:
    """The vectorised screen misses nothing _same would flag (NaN, inf, a missing side included)."""
    from evalbridge.cross_check.checking import _compare, _same

    queries = list(dict.fromkeys([*ref, *got]))
    expected = [(q, ref.get(q), got.get(q)) for q in queries if not _same(ref.get(q), got.get(q), 1e-9)]
    assert _compare(ref, got, 1e-9) == (len(queries), expected)
