"""The library backends (ranx, ir_measures, pytrec_eval): same numbers as the reference, or a stated reason.

ranx JIT-compiles on its first call (~30-50 s on a cold numba cache), so ranx examples are
few and share one process-wide warm-up.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.backends import BACKENDS, available, get_backend, unsupported
from evalbridge.backends._bridge import GradeInfo, PLACEHOLDER, capability_problem
from evalbridge.errors import BackendUnavailableError, UnsupportedMetricError
from evalbridge.metrics.spec import parse_metric
from strategies import metrics, qrels_and_run

LIBRARIES = ("ranx", "ir_measures", "pytrec_eval")
FAST = ("ir_measures", "pytrec_eval")
EXAMPLES = settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def assert_same(backend: str, qrels, run, specs, **options) -> None:  # noqa: ANN001
    """Per-query values of ``backend`` equal the reference's (to 1e-9) for every supported metric."""
    wanted = [m for m in map(parse_metric, specs) if unsupported(get_backend(backend), m, eb.Qrels(qrels)) is None]
    if not wanted:
        return
    ref = eb.evaluate(qrels, run, wanted, **options)
    got = eb.evaluate(qrels, run, wanted, backend=backend, **options)
    for metric in ref.metrics:
        a, b = ref.query(metric), got.query(metric)
        assert a.keys() == b.keys(), (backend, str(metric))
        bad = {q: (a[q], b[q]) for q in a if not math.isclose(a[q], b[q], abs_tol=1e-9)}
        assert not bad, f"{backend} {metric}: reference vs backend {bad}; bridges {got.provenance.bridges}"


@st.composite
def messy(draw, *, float_grades: bool = False):  # noqa: ANN001, ANN201
    """qrels/run with ties, missing and run-only queries, and sometimes empty queries on either side."""
    qrels, run = draw(qrels_and_run(max_queries=4, ties=draw(st.booleans()), missing=True, run_only=True,
                                    min_retrieved=0, float_grades=float_grades))
    if draw(st.booleans()):
        qrels["q_empty"] = {}
        run["q_empty"] = {"d00": 1.0}
    if draw(st.booleans()):
        run[next(iter(qrels))] = {}
    return qrels, run


#: every family: what a backend does not compute is left out by assert_same (unsupported() says so)
SPECS = st.lists(metrics(max_k=12, gains=True), min_size=1, max_size=5)


@pytest.mark.parametrize("backend", FAST)
@EXAMPLES
@given(data=messy(), specs=SPECS, ties=st.sampled_from(["docid_desc", "docid_asc", "input"]),
       precision=st.sampled_from(["float64", "float32"]), level=st.sampled_from([None, 2]))
def test_fast_backends_equal_reference_under_any_conventions(backend, data, specs, ties, precision, level) -> None:  # noqa: ANN001
    """pytrec_eval and ir_measures give the reference's per-query values whatever ties, precision and level."""
    qrels, run = data
    assert_same(backend, qrels, run, specs, ties=ties, score_precision=precision, min_relevance=level)


@pytest.mark.parametrize("backend", FAST)
@EXAMPLES
@given(data=messy(float_grades=True), specs=SPECS, level=st.sampled_from([1, 2.5, 7]))
def test_fast_backends_bridge_float_grades_exactly(backend, data, specs, level) -> None:  # noqa: ANN001
    """Float grades (LLM-judge scores) are binarised at the level stated or scaled exactly, never truncated."""
    qrels, run = data
    assert_same(backend, qrels, run, specs, min_relevance=level)


@pytest.mark.slow
@settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=messy(), specs=SPECS,
       ties=st.sampled_from(["docid_desc", "input"]), floats=st.booleans())
def test_ranx_equals_reference_under_any_conventions(ranx_warm, data, specs, ties, floats) -> None:  # noqa: ANN001
    """ranx (raw-dict path, float grades kept) gives the reference's per-query values."""
    qrels, run = data
    if floats:
        qrels = {q: {d: g + 0.25 if g else g for d, g in docs.items()} for q, docs in qrels.items()}
    assert_same("ranx", qrels, run, specs, ties=ties, min_relevance=1)  # float grades need a stated level


#: evalbridge spec -> the name a ranx user writes (independent of evalbridge's own naming table).
RANX_NAMES = {"P@3": "precision@3", "R@5": "recall@5", "RR": "mrr", "RR@3": "mrr@3", "AP": "map", "AP@5": "map@5",
              "nDCG@5": "ndcg@5", "nDCG(gain=exp)@5": "ndcg_burges@5", "Rprec": "r-precision",
              "Success@3": "hit_rate@3", "P(rel=2)@3": "precision@3-l2", "nDCG(rel=2)@5": "ndcg@5-l2",
              "AP(rel=2)": "map-l2"}


@pytest.mark.slow
@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=messy(float_grades=True), specs=st.lists(st.sampled_from(sorted(RANX_NAMES)), min_size=1, max_size=4,
                                                     unique=True))
def test_ranx_native_values_equal_those_of_ranx_objects(ranx_warm, data, specs) -> None:  # noqa: ANN001
    """compute(native=True) gives, per query, what ranx.Qrels/ranx.Run with make_comparable=True give.

    The native values come from ranx's raw-dict path (building the objects costs several times the
    evaluation); this holds them to the objects themselves: truncated grades, ranx's tie order,
    missing and empty queries.
    """
    import ranx

    from evalbridge.backends import ranx as ranx_backend

    qrels, run = data
    rows = {q: docs for q, docs in run.items() if docs}  # ranx.Run rejects a run of empty rows only
    assume(rows)
    metrics = [parse_metric(spec) for spec in specs]
    got, _ = ranx_backend.compute(eb.Qrels(qrels), eb.Run(run), metrics, native=True)
    names = [RANX_NAMES[spec] for spec in specs]
    expected = ranx_backend._evaluate(ranx, ranx.Qrels(qrels), ranx.Run(rows), names, make_comparable=True)
    for metric, name in zip(metrics, names):
        assert list(got[metric]) == list(qrels), str(metric)
        want = dict(zip(qrels, map(float, expected[name])))
        bad = {q: (got[metric][q], want[q]) for q in qrels if not math.isclose(got[metric][q], want[q], abs_tol=1e-12)}
        assert not bad, f"{metric} ({name}): native=True vs ranx objects {bad}"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.5, -1.0]), min_size=1, max_size=60),
                min_size=1, max_size=6))
def test_ranx_order_is_the_order_of_ranx_run_objects(ranx_warm, queries) -> None:  # noqa: ANN001
    """The two numba sorts on flat arrays leave every query's documents, tie groups of any size
    included (numba's quicksort is unstable above 15), where ranx.Run(...).sort() leaves them."""
    import ranx

    from evalbridge.backends.ranx import _ranx_order

    run = {f"q{i}": {f"d{j:02d}": score for j, score in enumerate(scores)} for i, scores in enumerate(queries)}
    objects = ranx.Run(run)
    objects.sort()  # what make_comparable does
    assert _ranx_order(eb.Run(run)) == {q: list(docs.keys()) for q, docs in objects.run.items()}


@pytest.mark.slow
def test_ranx_native_values_follow_ranx_order_of_large_tie_groups(ranx_warm) -> None:  # noqa: ANN001
    """Large tie groups, where numba's argsort is not stable: native=True still matches the ranx objects."""
    import random

    import ranx

    from evalbridge.backends import ranx as ranx_backend

    rng = random.Random(5)
    run = {f"q{i}": {f"d{j:03d}": float(rng.choice([1, 2])) for j in range(rng.randint(40, 200))} for i in range(8)}
    qrels = {q: {d: rng.choice([0, 1, 2]) for d in rng.sample(sorted(docs), 15)} for q, docs in run.items()}
    specs = ["P@3", "RR", "AP@5", "nDCG@5"]
    got, _ = ranx_backend.compute(eb.Qrels(qrels), eb.Run(run), [parse_metric(s) for s in specs], native=True)
    names = [RANX_NAMES[s] for s in specs]
    expected = ranx_backend._evaluate(ranx, ranx.Qrels(qrels), ranx.Run(run), names, make_comparable=True)
    for spec, name in zip(specs, names):
        assert list(got[parse_metric(spec)].values()) == pytest.approx(list(map(float, expected[name])), abs=1e-12)
    by_docid = eb.evaluate(qrels, run, [parse_metric("AP@5")]).query(parse_metric("AP@5"))
    assert list(by_docid.values()) != list(got[parse_metric("AP@5")].values())  # the tie order matters here


@pytest.fixture(scope="session")
def ranx_warm() -> None:
    """Import ranx and run it once (JIT) before the ranx examples."""
    pytest.importorskip("ranx")
    eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1", "nDCG@2"], backend="ranx")


def test_backends_table_lists_the_three_libraries_and_reports_availability() -> None:
    """BACKENDS names the reference and the three libraries; available() says which can be imported."""
    assert set(LIBRARIES) | {"reference"} <= set(BACKENDS)
    status = available()
    assert status["reference"] is True
    assert set(status) == set(BACKENDS)


@pytest.mark.parametrize("backend, spec, words", [
    ("pytrec_eval", "DCG@5", "no plain DCG"),
    ("pytrec_eval", "Judged@10", "unj_k"),
    ("pytrec_eval", "Hits@10", "whole ranking only"),
    ("ir_measures", "F1@10", "whole ranking only"),
    ("ir_measures", "ERR@10", "5 decimals"),
    ("ir_measures", "RBP", "cwl_eval"),
    ("pytrec_eval", "nDCG(gains={0:-1,1:1})@10", "negative gains"),
    ("ranx", "RBP(weights=graded)", "weights in {binary, raw}"),
    ("ranx", "RBP(p=0.00001)", "digits after '0.'"),
    ("ranx", "Hole@10", "no unannotated share"),
    ("ir_measures", "DCG@5", "no plain DCG"),
    ("pytrec_eval", "nDCG(discount=jk)@5", "discount"),
    ("ranx", "nDCG(ideal=run)@5", "ideal"),
    ("ranx", "AP(weights=graded)", "weights"),
    ("ir_measures", "AP(norm=retrieved)@3", "norm"),
    ("pytrec_eval", "P(rel=0)@5", "unjudged"),
])
def test_unsupported_gives_the_reason(backend: str, spec: str, words: str) -> None:
    """The capability tables refuse options a library does not have, with a reason naming it."""
    reason = unsupported(get_backend(backend), parse_metric(spec))
    assert reason is not None and words in reason


def test_supported_metrics_have_no_reason() -> None:
    """Everything the libraries compute natively (or bridge exactly) passes the check."""
    for backend in LIBRARIES:
        module = get_backend(backend)
        for spec in ["P(rel=2)@5", "R@10", "RR", "RR@10", "AP@10", "nDCG@10", "nDCG(gain=exp)@10", "Rprec",
                     "Success@5", "P(rel=7.5)@3", "Bpref", "Bpref(rel=2)", "Hits", "F1"]:
            assert unsupported(module, parse_metric(spec)) is None, (backend, spec)
    for backend in FAST:
        for spec in ["infAP", "NumRet", "NumRel(rel=2)", "SetP", "SetR", "nDCG(gains={0:0,1:1,2:3.5})@10"]:
            assert unsupported(get_backend(backend), parse_metric(spec)) is None, (backend, spec)
    for spec in ["Hits@10", "F1@10", "RBP(p=0.95)@10", "RBP(weights=raw)"]:
        assert unsupported(get_backend("ranx"), parse_metric(spec)) is None, spec
    assert unsupported(get_backend("ir_measures"), parse_metric("Judged@10")) is None


def test_evaluate_refuses_exp_gain_ndcg_over_float_grades_on_integer_backends() -> None:
    """2^7.5 - 1 cannot be scaled to an integer: pytrec_eval and ir_measures say so instead of truncating."""
    qrels, run = {"q": {"a": 7.5, "b": 2.5}}, {"q": {"b": 2.0, "a": 1.0}}
    for backend in FAST:
        with pytest.raises(UnsupportedMetricError, match="not scale-invariant"):
            eb.evaluate(qrels, run, "nDCG(gain=exp)", backend=backend)


def test_linear_ndcg_over_float_grades_is_scaled_and_recorded() -> None:
    """The 0-10 LLM scores of 003_2568de527c81821d.txt: linear nDCG on pytrec_eval equals the float value 0.7967, not 0.7766."""
    qrels, run = {"q": {"a": 7.5, "b": 2.5}}, {"q": {"b": 2.0, "a": 1.0}}
    res = eb.evaluate(qrels, run, "nDCG", backend="pytrec_eval")
    assert res["nDCG"] == pytest.approx(0.7967075809905066, abs=1e-12)
    assert any("times 10" in b for b in res.provenance.bridges)


def test_binary_metrics_with_float_threshold_are_binarised_and_recorded() -> None:
    """P(rel=7.5) counts grade >= 7.5 as relevant on every backend, and the bridge says so."""
    qrels, run = {"q": {"a": 7.5, "b": 7.4, "c": 9}}, {"q": {"b": 3.0, "a": 2.0, "c": 1.0}}
    for backend in FAST:
        res = eb.evaluate(qrels, run, ["P(rel=7.5)@2", "RR(rel=7.5)"], backend=backend)
        assert res["P(rel=7.5)@2"] == 0.5 and res["RR(rel=7.5)"] == 0.5
        assert any("binarised" in b and ">= 7.5" in b for b in res.provenance.bridges)


def test_tied_scores_are_rescored_in_the_requested_order() -> None:
    """Three tied docs: pytrec_eval follows ties='input' through rank-derived scores, and records it."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.5}}
    res = eb.evaluate(qrels, run, "RR", backend="pytrec_eval", ties="input")
    assert res["RR"] == 1.0
    assert any("rank-derived" in b for b in res.provenance.bridges)
    native = eb.evaluate(qrels, run, "RR", backend="pytrec_eval")  # docid_desc is pytrec_eval's own rule
    assert native["RR"] == pytest.approx(1 / 3)
    assert not any("rank-derived" in b for b in native.provenance.bridges)


def test_float32_collision_is_bridged_for_float64_conventions() -> None:
    """Scores 1e-9 apart tie inside pytrec_eval; with float64 conventions the higher one still ranks first."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 0.9752302811, "b": 0.9752302801}}
    assert eb.evaluate(qrels, run, "RR", backend="pytrec_eval")["RR"] == 1.0
    assert eb.evaluate(qrels, run, "RR", backend="pytrec_eval", score_precision="float32")["RR"] == 0.5


def test_rr_at_k_cuts_rankings_for_pytrec_eval_and_uses_msmarco_for_ir_measures() -> None:
    """trec_eval has no RR cutoff: the ranking is cut; ir_measures names the msmarco provider."""
    qrels, run = {"q": {"c": 1}}, {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    pte = eb.evaluate(qrels, run, ["RR@2", "RR"], backend="pytrec_eval")
    assert (pte["RR@2"], pte["RR"]) == (0.0, pytest.approx(1 / 3))
    assert any("cut at 2" in b for b in pte.provenance.bridges)
    irm = eb.evaluate(qrels, run, ["RR@2", "RR"], backend="ir_measures")
    assert (irm["RR@2"], irm["RR"]) == (0.0, pytest.approx(1 / 3))
    assert any("RR@2->msmarco" in b for b in irm.provenance.bridges)


def test_exp_gain_ndcg_on_pytrec_eval_uses_gains_as_grades() -> None:
    """Research §2.8: qrels a=2, b=1, run b, a: exp-gain nDCG 0.7967, linear 0.8597, on every backend."""
    qrels, run = {"q": {"a": 2, "b": 1}}, {"q": {"b": 2.0, "a": 1.0}}
    for backend in FAST:
        res = eb.evaluate(qrels, run, ["nDCG", "nDCG(gain=exp)"], backend=backend)
        assert res["nDCG"] == pytest.approx(0.8597186998, abs=1e-9)
        assert res["nDCG(gain=exp)"] == pytest.approx(0.7967075809, abs=1e-9)


def test_empty_queries_score_zero_on_every_fast_backend() -> None:
    """A query with no judgement, and one with no results, score 0 (pytrec_eval alone would drop the first)."""
    qrels, run = {"q1": {"a": 1}, "q2": {}, "q3": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}, "q3": {}}
    for backend in FAST:
        res = eb.evaluate(qrels, run, ["P@1", "nDCG"], backend=backend)
        assert res.query("P@1") == {"q1": 1.0, "q2": 0.0, "q3": 0.0}, backend


def test_placeholder_doc_id_never_reaches_results() -> None:
    """The placeholder used for empty queries is not a query or doc id anyone sees."""
    res = eb.evaluate({"q1": {"a": 1}, "q2": {}}, {"q1": {"a": 1.0}, "q2": {"x": 1.0}}, "P@1",
                      backend="pytrec_eval")
    assert PLACEHOLDER not in res.query_ids and set(res.query_ids) == {"q1", "q2"}


def test_capability_problem_names_allowed_values() -> None:
    """The generic check quotes what the backend allows."""
    caps = {"nDCG": {"gain": ("linear",)}}
    reason = capability_problem("lib", caps, parse_metric("nDCG(gain=exp)@3"))
    assert "gain in {linear}" in reason and "gain=exp" in reason


def test_grade_info_counts_decimals() -> None:
    """Finite decimals are counted; 1/3 has none, so linear nDCG cannot be scaled to integers."""
    assert GradeInfo.of(eb.Qrels({"q": {"a": 7.25, "b": 1}})).decimals == 2
    assert GradeInfo.of(eb.Qrels({"q": {"a": 1 / 3}})).decimals is None
    reason = unsupported(get_backend("pytrec_eval"), parse_metric("nDCG@3"), eb.Qrels({"q": {"a": 1 / 3}}))
    assert reason is not None and "decimals" in reason


def test_missing_library_raises_backend_unavailable_with_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    """When the library cannot be imported the error says which pip install fixes it."""
    import sys

    module = get_backend("pytrec_eval")
    monkeypatch.setitem(sys.modules, "pytrec_eval", None)
    with pytest.raises(BackendUnavailableError, match="pip install pytrec-eval-terrier"):
        module.compute(eb.Qrels({"q": {"a": 1}}), eb.Run({"q": {"a": 1.0}}), [parse_metric("P@1")])


def test_pytrec_eval_measure_names_are_validated() -> None:
    """A malformed measure name is refused before the C extension can abort the process."""
    from evalbridge.backends import pytrec_eval as pte_backend
    from evalbridge.backends._bridge import Task

    assert pte_backend.measure_name(Task(parse_metric("P@5"), k=5), ["P"]) == "P.5"
    with pytest.raises(UnsupportedMetricError, match="malformed"):
        pte_backend.measure_name(Task(parse_metric("P@5"), k=5), ["map"])


def test_ranx_metric_names_carry_the_level_suffix() -> None:
    """ranx spells levels as a suffix: map@100-l2, ndcg_burges@10."""
    from evalbridge.backends import ranx as ranx_backend
    from evalbridge.backends._bridge import Task

    assert ranx_backend.metric_name(Task(parse_metric("AP(rel=2)@100"), level=2, k=100)) == "map@100-l2"
    assert ranx_backend.metric_name(Task(parse_metric("nDCG(gain=exp)@10"), k=10, gain="exp")) == "ndcg_burges@10"


@pytest.mark.parametrize("code", [
    # bpref with num_ret on an empty ranking: a segmentation fault in pytrec_eval-terrier 0.5.11
    "eb.evaluate({'q': {'d': 0}}, {'q': {}}, ['Bpref', 'NumRet', 'Rprec'], backend=BACKEND)",
    "get_backend(BACKEND).compute(eb.Qrels({'q': {'d': 0}}), eb.Run({'q': {}}), parse_metrics(['Bpref', 'NumRet']), "
    "native=True)",
    # a query judged only negative, then another: trec_eval 9 reads stale memory and crashes
    "eb.evaluate({'q1': {'d06': -1}, 'q2': {'d06': 1, 'd09': 2}}, {'q1': {'d01': 5.0, 'd08': 4.0}, "
    "'q2': {'d07': 3.0, 'd09': 2.0, 'd06': 1.0}}, ['P@5', 'AP', 'nDCG', 'Bpref', 'Rprec', 'NumRet'], backend=BACKEND)",
])
@pytest.mark.parametrize("backend", FAST)
def test_inputs_that_crash_pytrec_eval_are_bridged(backend: str, code: str) -> None:
    """Run in a child process (a crash would take pytest down): the call returns, with the reference's values."""
    import subprocess
    import sys

    script = (f"import evalbridge as eb\nfrom evalbridge.backends import get_backend\n"
              f"from evalbridge.metrics.spec import parse_metrics\nBACKEND = {backend!r}\nprint({code})")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_all_negative_query_keeps_its_numret_on_pytrec_eval() -> None:
    """The guard judgement is the only change: pytrec_eval alone gives such a query num_ret 0."""
    qrels, run = {"q1": {"a": -1}, "q2": {"b": 1}}, {"q1": {"a": 1.0, "x": 0.5}, "q2": {"b": 1.0}}
    for backend in FAST:
        res = eb.evaluate(qrels, run, ["NumRet", "Bpref", "P@2"], backend=backend)
        assert res.values == eb.evaluate(qrels, run, ["NumRet", "Bpref", "P@2"]).values
        assert any("all negative" in note for note in res.provenance.bridges)
