"""The metrics for incomplete (LLM-judged) pools and the measures peers have, each held to an
independent source: trec_eval's expected outputs (see also ``test_reference_conformance.py``),
pytrec_eval, ir-measures (its ``judged`` and ``gdeval`` providers), ranx, or a value derived by
hand in the test's docstring. Plus the exact exponential gain of nDCG for any grade.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.metrics.catalogue import INPUTS, METRICS
from strategies import DOCS, metrics, qrels_and_run, query_case, ranked_from_scores

#: any kind of data: int grades (with -1, trec_eval's "pooled but unjudged"), tied scores or not
int_data = st.booleans().flatmap(lambda ties: qrels_and_run(negative=True, ties=ties, max_queries=4))


def per_query(qrels: dict, run: dict, metric: str, **kwargs) -> dict[str, float]:  # noqa: ANN003
    """query id -> value of one metric, from the readable reference."""
    return eb.evaluate(qrels, run, metric, backend="reference", **kwargs).query(metric)


def one(qrels: dict, run: dict, metric: str, **kwargs) -> float:  # noqa: ANN003
    """The value of the single query ``q`` of a fixture."""
    return per_query({"q": qrels}, {"q": run}, metric, **kwargs)["q"]


def ranked(*docs: str) -> dict[str, float]:
    """Scores that rank ``docs`` in the order given."""
    return {doc: float(len(docs) - i) for i, doc in enumerate(docs)}


# ---------------------------------------------------------------- Judged@k and Hole@k

def test_judged_counts_any_judgement_and_divides_by_the_ranking_shown() -> None:
    """Qrels a=1, b=0, c=-1; run x, a, b, c, y.

    Judged@3 = |{a, b}| / 3 = 2/3 (x has no judgement); Judged@10 = |{a, b, c}| / min(10, 5) = 3/5:
    a negative grade is a judgement (ir-measures), and a ranking shorter than k is divided by its length.
    """
    qrels, run = {"a": 1, "b": 0, "c": -1}, ranked("x", "a", "b", "c", "y")
    assert one(qrels, run, "Judged@3") == pytest.approx(2 / 3)
    assert one(qrels, run, "Judged@10") == pytest.approx(3 / 5)
    assert one(qrels, run, "Judged") == pytest.approx(3 / 5)
    assert one(qrels, {}, "Judged@10") == 0.0


@settings(max_examples=60)
@given(int_data, st.one_of(st.none(), st.integers(1, 12)))
def test_judged_equals_ir_measures_judged_provider(data: tuple, k: int | None) -> None:
    """ir-measures' own ``Judged`` (its judged provider, called directly) gives the reference's value on
    every query with a non-empty ranking, ties broken as it breaks them (doc id ascending)."""
    import ir_measures

    qrels, run = data
    run = {q: docs for q, docs in run.items() if docs}  # ir-measures divides by zero on an empty ranking
    assume(run and any(q in run for q in qrels))
    measure = ir_measures.Judged @ k if k else ir_measures.Judged
    theirs = {m.query_id: m.value for m in ir_measures.judged.iter_calc([measure], qrels, run)}
    ours = per_query(qrels, run, f"Judged@{k}" if k else "Judged", ties="docid_asc")
    for qid, value in ours.items():
        if run.get(qid) and qrels[qid]:
            assert value == pytest.approx(theirs[qid], abs=1e-12), qid


def test_judged_is_one_minus_trec_eval_unjudged_on_the_conformance_run(shared: Path) -> None:
    """trec_eval 10's unj_k (out.test.aq; every topic retrieves 500 docs and qrels.test has no negative
    grade, so both divide by k and count the same judgements): Judged@k = 1 - unj_k per topic."""
    from test_reference_conformance import parse_expected

    folder = shared / "conformance" / "trec_eval"
    expected = parse_expected(folder / "out.test.aq")
    res = eb.evaluate(eb.read_qrels(folder / "qrels.test"), eb.read_run(folder / "results.test"),
                      ["Judged@5", "Judged@10", "Judged@20"], missing_queries="drop")
    compared = 0
    for (measure, qid), printed in expected.items():
        if measure.startswith("unj_") and qid != "all":
            assert 1 - res.query(f"Judged@{measure[4:]}")[qid] == pytest.approx(float(printed), abs=5e-5)
            compared += 1
    assert compared == 9


def test_hole_pools_the_judgements_of_every_query() -> None:
    """BEIR's Hole@k: the pool is every doc judged for any query. q1 judges a, q2 judges b; q1's run
    a, b, x, y: Hole@3 = |{x}| / 3 = 1/3 (b counts as annotated), while Judged@3 = |{a}| / 3 = 1/3 for
    another reason; Hole@10 = |{x, y}| / 10 = 0.2 (BEIR divides by k), Judged@10 = 1/4."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": ranked("a", "b", "x", "y"), "q2": ranked("b")}
    res = eb.evaluate(qrels, run, ["Hole@3", "Hole@10", "Judged@10"])
    assert res.query("Hole@3") == {"q1": pytest.approx(1 / 3), "q2": 0.0}
    assert res.query("Hole@10")["q1"] == pytest.approx(0.2)
    assert res.query("Judged@10")["q1"] == pytest.approx(0.25)


# ---------------------------------------------------------------- bpref and infAP

@pytest.mark.parametrize(("qrels", "order", "expected"), [
    # Buckley and Voorhees: R = 2, N = 3, ranking n r n r -> ((1 - 1/2) + (1 - 2/2)) / 2
    ({"r1": 1, "r2": 1, "n1": 0, "n2": 0, "n3": 0}, ("n1", "r1", "n2", "r2"), 0.25),
    # no judged non-relevant doc (research notes 2.18): the term of a is 1, R = 2: 0.5 (ranx gives NaN)
    ({"a": 1, "b": 1}, ("x", "a"), 0.5),
    # a negative grade is skipped as unjudged (research notes 2.6): 1.0 (ranx 0.0)
    ({"a": -1, "b": 1, "c": 0}, ("a", "b", "c"), 1.0),
    # unjudged docs are skipped: x and y change nothing, n above r costs min(1, 1) / min(1, 1)
    ({"r": 1, "n": 0}, ("x", "n", "y", "r"), 0.0),
])
def test_bpref_counts_judged_nonrelevant_docs_above_each_relevant_one(qrels: dict, order: tuple,
                                                                     expected: float) -> None:
    """bpref = (1/R) sum over judged relevant retrieved r of (1 - min(n_r, R) / min(N, R))."""
    assert one(qrels, ranked(*order), "Bpref") == pytest.approx(expected)


def _pytrec_eval(qrels: dict, run: dict, measures: set[str], **options) -> dict:  # noqa: ANN003
    import pytrec_eval

    return pytrec_eval.RelevanceEvaluator(qrels, measures, **options).evaluate(run)


@settings(max_examples=80)
@given(int_data, st.sampled_from([1, 2]))
def test_bpref_and_infap_equal_pytrec_eval_called_directly(data: tuple, level: int) -> None:
    """pytrec_eval's bpref and infAP (trec_eval 9, called without evalbridge's bridges; scores made
    distinct in float32 so both sides rank alike) equal the reference on every query both evaluate."""
    qrels, run = data
    run = {q: ranked(*ranked_from_scores(docs)) for q, docs in run.items()}
    theirs = _pytrec_eval({q: d for q, d in qrels.items() if d}, run, {"bpref", "infAP"}, relevance_level=level)
    res = eb.evaluate(qrels, run, ["Bpref", "infAP"], min_relevance=level, backend="reference")
    for qid, values in theirs.items():
        assert res.query(f"Bpref(rel={level})" if level != 1 else "Bpref")[qid] == pytest.approx(values["bpref"], abs=1e-12)
        assert res.query(f"infAP(rel={level})" if level != 1 else "infAP")[qid] == pytest.approx(values["infAP"], abs=1e-12)


@given(qrels_and_run(max_queries=3))
def test_infap_is_ap_when_every_retrieved_doc_is_judged(data: tuple) -> None:
    """With nothing unjudged above a relevant doc, infAP's term is (r + e)/(j + 2e) ~ r / j: infAP is
    AP up to trec_eval's epsilon of 1e-5."""
    qrels, run = data
    judged_run = {q: {d: s for d, s in docs.items() if d in qrels[q]} for q, docs in run.items()}
    infap, ap = per_query(qrels, judged_run, "infAP"), per_query(qrels, judged_run, "AP")
    assert infap == pytest.approx(ap, abs=1e-5)


@given(query_case(min_retrieved=1))
def test_bpref_is_one_when_every_relevant_doc_precedes_every_nonrelevant_one(case: tuple) -> None:
    """A ranking of all relevant judged docs, then anything: no judged non-relevant doc is above a relevant one."""
    judged, ranking = case
    relevant = [d for d, g in judged.items() if g >= 1]
    assume(relevant)
    order = relevant + [d for d in ranking if d not in relevant]
    assert one(judged, ranked(*order), "Bpref") == 1.0


# ---------------------------------------------------------------- ERR

def test_err_of_a_hand_computed_ranking() -> None:
    """Grades 2, 0, 1, max_grade 2: R = (2^g - 1)/2^2 = 3/4, 0, 1/4, so ERR = 3/4 / 1 + 0 + (1/4)(1/4)/3
    = 0.7708333; with max_grade 4 (gdeval): 3/16 + (1/16)(13/16)/3 = 0.2044271."""
    qrels, run = {"a": 2, "c": 1}, ranked("a", "x", "c")
    assert one(qrels, run, "ERR") == pytest.approx(0.75 + 1 / 48)
    assert one(qrels, run, "ERR(max_grade=4)") == pytest.approx(3 / 16 + (1 / 16) * (13 / 16) / 3)
    assert one(qrels, run, "ERR(max_grade=4)@1") == pytest.approx(3 / 16)


@settings(max_examples=20)
@given(qrels_and_run(max_queries=3, max_grade=4), st.integers(1, 10))
def test_err_equals_gdeval_through_ir_measures(data: tuple, k: int) -> None:
    """gdeval (the TREC Web track script behind ir-measures' ERR) prints 5 decimals and takes grades up to 4:
    the reference's ERR(max_grade=4)@k is its value to 5e-6 (a printed tie, 0.109375 -> 0.10938, is
    exactly that far), per query."""
    import ir_measures

    qrels, run = data
    numeric = {q: str(i + 1) for i, q in enumerate(qrels)}  # gdeval needs numeric query ids
    theirs = {m.query_id: m.value for m in ir_measures.gdeval.iter_calc(
        [ir_measures.ERR @ k], {numeric[q]: d for q, d in qrels.items()},
        {numeric[q]: d for q, d in run.items() if q in numeric})}
    ours = per_query(qrels, run, f"ERR(max_grade=4)@{k}")
    for qid, value in ours.items():
        assert value == pytest.approx(theirs.get(numeric[qid], 0.0), abs=5e-6 + 1e-12), qid  # half a unit of %.5f


def test_err_refuses_grades_above_its_max_grade() -> None:
    """A grade above max_grade would make a stopping probability above 1: refused with the fix."""
    with pytest.raises(InputError, match="above max_grade=2.*set max_grade to at least 3"):
        eb.evaluate({"q": {"a": 3}}, {"q": {"a": 1.0}}, "ERR(max_grade=2)")


def test_err_gain_map_gives_stopping_probabilities() -> None:
    """gains={1: 0.5, 2: 1}: a grade-2 doc at rank 2 after a grade-1 doc: 0.5 + 1 * 0.5 / 2 = 0.75."""
    assert one({"a": 1, "b": 2}, ranked("a", "b"), "ERR(gains={1:0.5,2:1})") == pytest.approx(0.75)


# ---------------------------------------------------------------- RBP and its residual

def test_rbp_variants_of_the_research_example() -> None:
    """Qrels a=3, b=1, run a, b, p = 0.8: binary (1 - p)(1 + p) = 0.36; graded (trec_eval 10, gains / top
    grade 3) 0.2 (1 + 0.8/3) = 0.2533; raw (ranx) 0.2 (3 + 0.8) = 0.76, which ranx itself gives."""
    import ranx

    qrels, run = {"a": 3, "b": 1}, ranked("a", "b")
    assert one(qrels, run, "RBP") == pytest.approx(0.36)
    assert one(qrels, run, "RBP(weights=graded)") == pytest.approx(0.2 * (1 + 0.8 / 3))
    assert one(qrels, run, "RBP(weights=raw)") == pytest.approx(0.76)
    assert ranx.evaluate({"q": qrels}, {"q": run}, "rbp.8") == pytest.approx(0.76)


def test_rbp_residual_adds_unjudged_docs_and_the_tail() -> None:
    """p = 0.5, ranking a (judged), x (unjudged), c (grade -1: pooled, unjudged): the residual is
    p^3 + (1 - p)(p^1 + p^2) = 0.125 + 0.5 * 0.75 = 0.5; fully judged: 0 (trec_eval leaves the tail out)."""
    assert one({"a": 1, "c": -1}, ranked("a", "x", "c"), "RBP_resid(p=0.5)") == pytest.approx(0.5)
    assert one({"a": 1, "c": 0}, ranked("a", "c"), "RBP_resid(p=0.5)") == 0.0


@given(int_data, st.sampled_from([0.5, 0.8, 0.95]), st.one_of(st.none(), st.integers(1, 12)))
def test_rbp_and_its_residual_never_sum_above_one(data: tuple, p: float, k: int | None) -> None:
    """Binary RBP counts judged relevant docs, the residual the unjudged ones and the tail: at most 1 together."""
    qrels, run = data
    cut = f"@{k}" if k else ""
    rbp, resid = per_query(qrels, run, f"RBP(p={p}){cut}"), per_query(qrels, run, f"RBP_resid(p={p}){cut}")
    assert all(0 <= rbp[q] and 0 <= resid[q] and rbp[q] + resid[q] <= 1 + 1e-12 for q in rbp)


# ---------------------------------------------------------------- F1, R_cap and the counts

def test_f1_and_capped_recall_of_a_hand_computed_ranking() -> None:
    """Relevant a, b, c (R = 3); run a, x, b. F1@2 = 2 * 1 / (2 + 3) = 0.4 (P@2 = 1/2, R@2 = 1/3);
    F1 = 2 * 2 / (3 + 3) = 2/3; R_cap@2 = 1 / min(2, 3) = 0.5 while R@2 = 1/3; R_cap@5 = 2/3."""
    qrels, run = {"a": 1, "b": 1, "c": 1}, ranked("a", "x", "b")
    assert one(qrels, run, "F1@2") == pytest.approx(0.4)
    assert one(qrels, run, "F1") == pytest.approx(2 / 3)
    assert one(qrels, run, "R_cap@2") == pytest.approx(0.5)
    assert one(qrels, run, "R_cap@5") == pytest.approx(2 / 3)


@settings(max_examples=40)
@given(int_data, st.sampled_from([1, 2]), st.integers(1, 12))
def test_hits_and_f1_equal_ranx_called_directly(data: tuple, level: int, k: int) -> None:
    """ranx's hits@k and f1@k (raw dicts, distinct scores) equal the reference's Hits@k and F1@k."""
    import ranx

    qrels, run = data
    common = [q for q in qrels if q in run and run[q] and qrels[q]]
    assume(common)
    names = [f"hits@{k}-l{level}", f"f1@{k}-l{level}"]
    theirs = ranx.evaluate({q: qrels[q] for q in common}, {q: ranked(*ranked_from_scores(run[q])) for q in common},
                           names, return_mean=False)
    res = eb.evaluate({q: qrels[q] for q in common}, {q: run[q] for q in common}, [f"Hits@{k}", f"F1@{k}"],
                      min_relevance=level)
    for name, spec in zip(names, res.metrics):
        assert list(res.query(spec).values()) == pytest.approx(list(map(float, theirs[name])), abs=1e-12)


@given(int_data, st.sampled_from([1, 2, 0.5]))
def test_set_measures_and_counts_agree_with_each_other(data: tuple, level: float) -> None:
    """SetP * NumRet = Hits, SetR * NumRel = Hits, F1 (no cutoff) = the harmonic mean of SetP and SetR."""
    qrels, run = data
    res = eb.evaluate(qrels, run, ["SetP", "SetR", "NumRet", "NumRel", "Hits", "F1"], min_relevance=level)
    frame = res.per_query
    for row in frame.itertuples(index=False):
        setp, setr, numret, numrel, hits, f1 = row
        assert setp * numret == pytest.approx(hits) and setr * numrel == pytest.approx(hits)
        assert f1 == pytest.approx(2 * setp * setr / (setp + setr) if hits else 0.0)


@given(int_data, st.integers(1, 11))
def test_hits_err_and_rbp_never_decrease_with_k(data: tuple, k: int) -> None:
    """Looking further down the ranking adds to Hits, ERR and RBP (their terms are non-negative)."""
    qrels, run = data
    for family in ("Hits", "ERR", "RBP(weights=graded)"):
        low, high = per_query(qrels, run, f"{family}@{k}"), per_query(qrels, run, f"{family}@{k + 1}")
        assert all(high[q] >= low[q] for q in low), family


@given(st.tuples(st.booleans(), st.booleans()).flatmap(
    lambda f: qrels_and_run(float_grades=f[0], negative=not f[0], ties=f[1], max_queries=4)),
    metrics(names=("Judged", "Hole", "Bpref", "infAP", "ERR", "RBP", "RBP_resid", "F1", "R_cap", "SetP", "SetR"),
            gains=True))
def test_every_new_normalised_metric_is_between_0_and_1(data: tuple, metric: eb.Metric) -> None:
    """Judged, Hole, bpref, infAP, ERR, RBP (binary and graded), the residual, F1, R_cap, SetP and SetR
    lie in [0, 1] for every query, whatever the grades (RBP(weights=raw) is the exception: it weighs by
    the grade), the ties and the gain map."""
    qrels, run = data
    assume(metric.get("weights") != "raw" if metric.name == "RBP" else True)
    for value in per_query(qrels, run, str(metric), min_relevance=1).values():  # float grades need a stated level
        assert 0.0 <= value <= 1.0 + 1e-12


# ---------------------------------------------------------------- gain maps

def test_gain_map_with_a_negative_gain_as_trec_eval() -> None:
    """trec_eval 10's ``-m ndcg.0=-1`` (research notes 2.6: -0.3691). Qrels a=-1, b=1, c=0, ranking c, b, a:
    c is judged 0 and gains -1, b gains 1/log2(3), a (trec_eval's pooled-unjudged) gains 0; the ideal
    keeps the positive gains only: IDCG = 1. nDCG = -1 + 0.6309 = -0.3691."""
    value = one({"a": -1, "b": 1, "c": 0}, ranked("c", "b", "a"), "nDCG(gains={0:-1})")
    assert value == pytest.approx(-1 + 1 / math.log2(3))
    assert round(value, 4) == -0.3691


def test_gain_map_leaves_unjudged_docs_at_zero() -> None:
    """gains={0: 2}: a judged non-relevant doc gains 2, an unjudged one nothing. Ranking n, x (qrels n=0):
    DCG = 2 (n at rank 1), not 2 + 2/log2(3)."""
    assert one({"n": 0}, ranked("n", "x"), "DCG(gains={0:2})") == 2.0


@settings(max_examples=40)
@given(qrels_and_run(max_queries=3, max_grade=3), st.sampled_from([{0: 0, 1: 1, 2: 3, 3: 7}, {1: 3, 2: 9},
                                                                   {0: 0, 1: 5, 3: 2}]),
       st.one_of(st.none(), st.integers(1, 10)))
def test_gain_map_equals_ir_measures_gains(data: tuple, gains: dict, k: int | None) -> None:
    """ir-measures' ``nDCG(gains=...)`` (pytrec_eval provider, which rewrites the grades; one measure per
    call, to avoid its hash-seed bug) equals the reference for non-negative integer gains."""
    import ir_measures

    qrels, run = data
    qrels = {q: d for q, d in qrels.items() if d}
    measure = ir_measures.nDCG(gains=gains) @ k if k else ir_measures.nDCG(gains=gains)
    run = {q: ranked(*ranked_from_scores(docs)) for q, docs in run.items()}
    theirs = {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([measure], qrels, run)}
    spec = "nDCG(gains={" + ",".join(f"{g}:{v}" for g, v in gains.items()) + "})" + (f"@{k}" if k else "")
    for qid, value in per_query(qrels, run, spec).items():
        assert value == pytest.approx(theirs[qid], abs=1e-12), qid


def test_gain_map_of_trec_eval_meas_params(shared: Path) -> None:
    """out.test.meas_params: ``-mndcg.1=3,2=9,4=4.5`` over qrels.test (grades 0/1) prints ndcg per run; the
    reference with gains={1:3,2:9,4:4.5} reproduces the summary value."""
    from test_reference_conformance import parse_expected

    folder = shared / "conformance" / "trec_eval"
    expected = parse_expected(folder / "out.test.meas_params")
    res = eb.evaluate(eb.read_qrels(folder / "qrels.test"), eb.read_run(folder / "results.test"),
                      "nDCG(gains={1:3,2:9,4:4.5})", missing_queries="drop")
    printed = [v for (m, q), v in expected.items() if m.startswith("ndcg") and not m.startswith("ndcg_cut") and q == "all"]
    assert printed and res["nDCG(gains={1:3,2:9,4:4.5})"] == pytest.approx(float(printed[0]), abs=5e-5)


# ---------------------------------------------------------------- exponential gain without overflow

def naive_exp_ndcg(grades_in_rank_order: list[float], judged: list[float]) -> float:
    """nDCG with gain 2^g - 1 computed the obvious way in float64 (may overflow to inf or raise)."""
    def dcg(grades: list[float]) -> float:
        return sum((2.0 ** g - 1) / math.log2(i + 2) for i, g in enumerate(grades) if g > 0)

    ideal = dcg(sorted(judged, reverse=True))
    if not math.isfinite(ideal):  # the ideal overflowed while the run's DCG may not have: x / inf = 0 is no answer
        return math.nan
    return dcg(grades_in_rank_order) / ideal if ideal else 0.0


grade_values = st.one_of(st.integers(0, 1100), st.floats(0, 1100, allow_nan=False).map(lambda g: round(g, 2)))


@settings(max_examples=150)
@given(st.lists(grade_values, min_size=1, max_size=8), st.randoms(use_true_random=False))
def test_exp_gain_ndcg_equals_the_float64_formula_wherever_that_is_finite(grades: list[float], rnd) -> None:  # noqa: ANN001
    """Where 2^g - 1 summed in float64 stays finite, the overflow-free nDCG (gains divided by 2^shift)
    is the same number; where it does not, the naive value is inf/NaN or raises and ours is still in [0, 1]."""
    docs = list(DOCS[:len(grades)])
    qrels = dict(zip(docs, grades))
    order = docs[:]
    rnd.shuffle(order)
    ours = one(qrels, ranked(*order), "nDCG(gain=exp)")
    try:
        naive = naive_exp_ndcg([qrels[d] for d in order], grades)
    except OverflowError:
        naive = math.nan
    if math.isfinite(naive):
        assert ours == pytest.approx(naive, rel=1e-12, abs=1e-300)
    assert 0.0 <= ours <= 1.0 + 1e-12


@settings(max_examples=100)
@given(st.lists(st.one_of(st.integers(0, 10_000), st.floats(0, 10_000, allow_nan=False)), min_size=1, max_size=8),
       st.randoms(use_true_random=False), st.sampled_from(["nDCG(gain=exp)", "nDCG(gain=exp)@3",
                                                           "nDCG(gain=exp,ideal=run)", "nDCG(gain=exp,discount=jk)@5"]))
def test_exp_gain_ndcg_stays_in_0_1_for_grades_up_to_10000(grades: list[float], rnd, spec: str) -> None:  # noqa: ANN001
    """Grades up to 10,000 (2^10000 overflows float64 by far): every exp-gain nDCG variant is a number in [0, 1],
    on the readable reference and on the fast backend alike."""
    docs = list(DOCS[:len(grades)])
    qrels = {"q": dict(zip(docs, grades))}
    order = docs[:]
    rnd.shuffle(order)
    run = {"q": ranked(*order)}
    values = [eb.evaluate(qrels, run, spec, backend=b).query(spec)["q"] for b in ("reference", "fast")]
    assert values[0] == values[1]
    assert 0.0 <= values[0] <= 1.0 + 1e-12


def test_exp_gain_of_the_issue_grades() -> None:
    """Grades 1023 (NaN before) and 2000 (OverflowError before). Qrels a=2000, b=1999, ranking b, a:
    gains 2^1999 and 2^2000 (minus 1, lost in float64), i.e. 1 and 2 after dividing by 2^1999: DCG = 1 + 2/log2(3),
    IDCG = 2 + 1/log2(3). A grade-1023 pair ranked ideally gives exactly 1."""
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert one({"a": 2000, "b": 1999}, ranked("b", "a"), "nDCG(gain=exp)") == pytest.approx(expected, rel=1e-15)
    assert one({"a": 1023, "b": 1023}, ranked("a", "b"), "nDCG(gain=exp)") == 1.0
    assert one({"a": 1023, "b": 1022}, ranked("a", "b"), "DCG(gain=exp)") == pytest.approx(
        (2.0 ** 1023 - 1) + (2.0 ** 1022 - 1) / math.log2(3), rel=1e-15)


@pytest.mark.parametrize("backend", ["reference", "fast"])
def test_dcg_beyond_float64_is_an_error_naming_the_query(backend: str) -> None:
    """DCG is not a ratio: 2^2000 is not a float64, so it is refused, naming the query and the fix."""
    with pytest.raises(InputError, match=r"query 'q2': DCG\(gain=exp\)@5: DCG with exp gain is about 2\^2000.*nDCG"):
        eb.evaluate({"q1": {"a": 1}, "q2": {"a": 2000}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}}, "DCG(gain=exp)@5",
                    backend=backend)


# ---------------------------------------------------------------- a metric is its catalogue entry and its functions


@pytest.mark.parametrize("family", list(METRICS))
def test_every_catalogue_family_has_its_reference_fast_and_tie_aware_function(family: str) -> None:
    """Each family's entry names its function; the reference and the fast backend define it (in their own module,
    with the reference's options), the tie-aware module too unless the entry declares tie_aware=False; the three
    FUNCTIONS and KERNELS tables hold the catalogue's families and nothing else."""
    from evalbridge.fast import kernels as fast
    from evalbridge.metrics import reference, tie_aware

    info = METRICS[family]
    assert reference.FUNCTIONS[family].__name__ == fast.KERNELS[family].__name__ == info.function
    assert reference.FUNCTIONS[family].__module__ == reference.__name__ and \
        fast.KERNELS[family].__module__ == fast.__name__
    ours = list(inspect.signature(fast.KERNELS[family]).parameters.values())[1:]
    theirs = [p for p in list(inspect.signature(reference.FUNCTIONS[family]).parameters.values())[2:]
              if p.name not in INPUTS]
    assert [(p.name, p.kind, p.default) for p in ours] == [(p.name, p.kind, p.default) for p in theirs]
    assert (family in tie_aware.FUNCTIONS) is info.tie_aware
    if info.tie_aware:
        assert tie_aware.FUNCTIONS[family].__name__ == info.function
        assert tie_aware.FUNCTIONS[family].__module__ == tie_aware.__name__
    for table in (reference.FUNCTIONS, fast.KERNELS, tie_aware.FUNCTIONS):
        assert set(table) <= set(METRICS)


def test_a_module_without_a_family_s_function_leaves_the_family_out() -> None:
    """The one rule finds a family's function by the name its entry gives, defined in the module asked about: a
    function of that name imported from elsewhere, or a value that is no function, is not taken."""
    from evalbridge.metrics import reference
    from evalbridge.metrics.catalogue import functions_of

    here = {"__name__": __name__}
    assert functions_of(here) == {}
    assert functions_of({**here, "precision": reference.precision, "recall": 0.5}) == {}

    def precision(retrieved: list[float], judged: list[float], *, k: int, rel: float = 1) -> float:
        return 0.0

    assert functions_of({**here, "precision": precision}) == {"P": precision}
