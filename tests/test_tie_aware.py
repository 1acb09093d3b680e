"""ties="average": every metric is its expected value over all orders of each tie group, exactly.

The oracle is brute force: every order of every tie group enumerated with ``itertools.permutations``
and the reference computed on each, then averaged. Independent golden values: scikit-learn's
``ndcg_score`` / ``dcg_score`` (``ignore_ties=False``, McSherry & Najork's tie averaging), scipy's
hypergeometric distribution, and values derived by hand in the docstrings.
"""

from __future__ import annotations

import inspect
import itertools
import math
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import grades, metrics, qrels_and_run

import evalbridge as eb
from evalbridge.backends import auto, get_backend, unsupported
from evalbridge.errors import UnsupportedMetricError
from evalbridge.metrics import reference, tie_aware
from evalbridge.metrics.catalogue import METRICS
from evalbridge.metrics.resolution import needs_max_grade
from evalbridge.metrics.spec import Metric, parse_metric
from evalbridge.model.data import Qrels, Run
from evalbridge.model.settings import Settings
from evalbridge.common.ranking import rank, rank_groups

#: Most orders a brute-force check enumerates for one query.
MAX_ORDERS = 720
AVERAGE = Settings(ties="average")
#: The families with a tie-aware function; the others are refused under ties="average".
TIE_AWARE = tuple(tie_aware.FUNCTIONS)


def tie_aware_metrics(**kwargs) -> st.SearchStrategy[Metric]:  # noqa: ANN003
    """Metrics evaluate computes under ties="average" (a tie-aware family, no judgement inputs)."""
    return metrics(names=TIE_AWARE, **kwargs).filter(lambda m: tie_aware.unsupported(m) is None)


def orders(groups: list[list]) -> int:
    return math.prod(math.factorial(len(g)) for g in groups)


@st.composite
def grade_groups(draw, *, max_groups: int = 5, max_size: int = 6, float_grades: bool = False) -> list[list]:  # noqa: ANN001
    """Tie groups of grades in rank order, at most :data:`MAX_ORDERS` orders in all."""
    sizes = draw(st.lists(st.integers(1, max_size), min_size=0, max_size=max_groups))
    groups = [draw(st.lists(grades(float_grades=float_grades), min_size=n, max_size=n)) for n in sizes]
    assume(orders(groups) <= MAX_ORDERS)
    return groups


@st.composite
def judged_for(draw, groups: list[list]) -> list:  # noqa: ANN001
    """The judged grades: some of the retrieved ones (relevant documents may be unretrieved too)."""
    retrieved = [g for group in groups for g in group if g != 0]
    kept = [g for g in retrieved if draw(st.booleans()) or g > 0]
    return kept + draw(st.lists(grades(), max_size=3))


def kernel_arguments(metric: Metric, judged: list, groups: list[list]) -> dict:
    """The metric's keyword arguments, ``max_grade`` resolved as evaluate does (the top grade, else 1)."""
    kwargs = metric.arguments
    if needs_max_grade(metric):
        top = max([*judged, *(g for group in groups for g in group)], default=0)
        kwargs["max_grade"] = top if top > 0 else 1
    return kwargs


@st.composite
def document_groups(draw, *, max_groups: int = 5, max_size: int = 6, float_grades: bool = False) -> list[list]:  # noqa: ANN001
    """Tie groups of retrieved documents ``(grade, in_qrels, in_pool)`` in rank order, at most
    :data:`MAX_ORDERS` orders: an unjudged document has grade 0 (as the reference backend reads it),
    a negative grade is trec_eval's pooled-but-unjudged, and a document judged for the query is in
    the pool (judged for some query)."""
    groups = []
    for group in draw(grade_groups(max_groups=max_groups, max_size=max_size, float_grades=float_grades)):
        documents = []
        for grade in group:
            if draw(st.integers(0, 3)) == 0:
                grade = -1
            in_qrels = grade != 0 or draw(st.booleans())
            documents.append((grade, in_qrels, in_qrels or draw(st.booleans())))
        groups.append(documents)
    return groups


@st.composite
def judged_of(draw, documents: list[list]) -> list:  # noqa: ANN001
    """The query's judged grades: those of the retrieved documents judged for it, and a few unretrieved ones."""
    return [g for group in documents for g, in_qrels, _ in group if in_qrels] + \
        draw(st.lists(grades(negative=True), max_size=3))


def document_arguments(metric: Metric, judged: list, documents: list[list], *, grouped: bool) -> tuple[list, dict]:
    """``(retrieved, kwargs)`` for the tie-aware function (``grouped``: the grades, and each input the
    metric reads, in the shape of the tie groups) or for the reference (one flat ranking)."""
    grades_ = [[g for g, _, _ in group] for group in documents]
    kwargs = kernel_arguments(metric, judged, grades_)
    for position, name in ((1, "in_qrels"), (2, "in_pool")):
        if name in metric.inputs:
            flags = [[document[position] for document in group] for group in documents]
            kwargs[name] = flags if grouped else [f for group in flags for f in group]
    return (grades_ if grouped else [g for group in grades_ for g in group]), kwargs


def brute_force_documents(metric: Metric, documents: list[list], judged: list) -> float:
    """The mean of the reference over every order of every tie group, each document keeping its flags."""
    kernel = reference.FUNCTIONS[metric.name]
    values = []
    for order in itertools.product(*map(itertools.permutations, documents)):
        retrieved, kwargs = document_arguments(metric, judged, [list(group) for group in order], grouped=False)
        values.append(kernel(retrieved, judged, **kwargs))
    return math.fsum(values) / len(values)


def brute_force(name: str, groups: list[list], judged: list, kwargs: dict) -> float:
    """The mean of the reference over every order of every tie group."""
    kernel = reference.FUNCTIONS[name]
    values = [kernel([g for group in order for g in group], judged, **kwargs)
              for order in itertools.product(*map(itertools.permutations, groups))]
    return math.fsum(values) / len(values)


# -- the definition: the mean over every order ------------------------------------------------------------


@pytest.mark.parametrize("name", TIE_AWARE)
@given(data=st.data())
@settings(max_examples=80)
def test_tie_aware_value_is_the_mean_of_the_reference_over_every_order_of_each_tie_group(name: str, data) -> None:  # noqa: ANN001
    """For every metric family and option (gain maps and judgement inputs included), the exact value
    equals brute-force enumeration of every order of each tie group (groups of up to 6 documents)."""
    metric = data.draw(metrics(names=(name,), max_k=12, gains=True))
    documents = data.draw(document_groups(float_grades=data.draw(st.booleans())))
    judged = data.draw(judged_of(documents))
    expected = brute_force_documents(metric, documents, judged)
    groups, kwargs = document_arguments(metric, judged, documents, grouped=True)
    assert tie_aware.FUNCTIONS[name](groups, judged, **kwargs) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@given(data=qrels_and_run(ties=True, max_docs=7, max_queries=2, negative=True), metric=tie_aware_metrics(max_k=8))
@settings(max_examples=120)
def test_evaluate_with_average_ties_is_the_mean_over_every_order_of_the_tied_documents(data, metric) -> None:  # noqa: ANN001
    """End to end: evaluate(ties="average") per query equals the mean of evaluate over every run that
    orders each group of tied documents one way (scores n..1), enumerated from the raw scores."""
    qrels, run = data
    groups_of = {qid: [[d for d in scores if scores[d] == v] for v in sorted(set(scores.values()), reverse=True)]
                 for qid, scores in run.items()}
    assume(all(orders(groups) <= MAX_ORDERS for groups in groups_of.values()))
    results = eb.evaluate(qrels, run, [metric], ties="average")
    resolved = results.metrics[0]  # the evaluation's level and top grade made explicit
    compute = get_backend("reference").compute
    for qid, groups in groups_of.items():
        values = []
        for order in itertools.product(*map(itertools.permutations, groups)):
            docs = [d for group in order for d in group]
            ranked = Run({qid: {d: float(len(docs) - i) for i, d in enumerate(docs)}})
            values.append(compute(Qrels(qrels), ranked, [resolved])[0][resolved][qid])  # every query: Hole's pool
        assert results.query(metric)[qid] == pytest.approx(math.fsum(values) / len(values), rel=1e-12, abs=1e-15)


def test_reciprocal_rank_of_a_tie_group_matches_the_hand_derivation() -> None:
    """One non-relevant document, then 4 tied with 2 relevant (s = 1, n = 4, r = 2). The first
    relevant one is at group rank j with P = C(4 - j, 1) / C(4, 2): 3/6, 2/6, 1/6 for j = 1, 2, 3,
    so E[RR] = (1/2)/2 + (1/3)/3 + (1/6)/4 = 1/4 + 1/9 + 1/24 = 29/72."""
    groups = [[0], [1, 0, 0, 1]]
    assert tie_aware.reciprocal_rank(groups, [1, 1]) == pytest.approx(29 / 72, rel=1e-15)
    assert tie_aware.reciprocal_rank(groups, [1, 1], k=2) == pytest.approx(1 / 4, rel=1e-15)


def test_average_precision_normalised_by_retrieved_matches_the_hand_derivation() -> None:
    """A relevant document, then [relevant, non-relevant] tied, cutoff 2 (the pair straddles it).

    Order 1: top 2 = rel, rel: AP(norm=retrieved) = (1/1 + 2/2) / 2 = 1; order 2: top 2 = rel,
    non-rel: (1/1) / 1 = 1. E = 1. With norm=R (R = 2): (1 + 1) / 2 = 1 and 1/2, E = 3/4.

    A non-relevant document, then the same pair, cutoff 2: order 1 gives (1/2) / 1 = 1/2, order 2
    retrieves no relevant document in the top 2, AP = 0, so E = 1/4; the ratio of expectations
    E[X] / E[N] = (1/4) / (1/2) = 1/2 would be wrong, which is why N is conditioned on."""
    metric = parse_metric("AP(norm=retrieved)@2")
    assert tie_aware.average_precision([[1], [1, 0]], [1, 1], **metric.arguments) == 1.0
    assert tie_aware.average_precision([[1], [1, 0]], [1, 1], k=2) == 0.75
    assert tie_aware.average_precision([[0], [1, 0]], [1], **metric.arguments) == 0.25


def test_success_of_a_straddling_group_is_one_minus_the_chance_that_no_relevant_document_is_drawn() -> None:
    """Six tied documents, two relevant, three ranks within the cutoff: P(none) = C(4, 3) / C(6, 3)
    = 4/20, so E[Success@3] = 4/5 exactly (the float is correctly rounded)."""
    assert tie_aware.success([[0, 1, 0, 0, 1, 0]], [1, 1], k=3) == 4 / 5
    assert tie_aware.success([[0, 1, 0, 0, 1, 0]], [1, 1], k=5) == 1.0  # 5 > n - r = 4: always a hit


@pytest.mark.parametrize("n", [1, 7, 2000])
def test_one_relevant_document_in_a_large_tie_group_follows_the_uniform_rank(n: int) -> None:
    """One relevant document among n tied at the top lands on each rank with probability 1/n:
    E[RR] = E[AP] = H_n / n, E[P@k] = E[Success@k] = k/n (k < n), E[DCG] = mean discount."""
    groups = [[0] * (n - 1) + [1]]
    harmonic = math.fsum(1 / j for j in range(1, n + 1))
    assert tie_aware.reciprocal_rank(groups, [1]) == pytest.approx(harmonic / n, rel=1e-13)
    assert tie_aware.average_precision(groups, [1]) == pytest.approx(harmonic / n, rel=1e-13)
    k = max(1, n // 3)
    assert tie_aware.precision(groups, [1], k=k) == float(Fraction(1, n))
    assert tie_aware.success(groups, [1], k=k) == k / n
    assert tie_aware.dcg(groups, [1]) == pytest.approx(math.fsum(1 / math.log2(i + 1) for i in range(1, n + 1)) / n,
                                                       rel=1e-13)


@pytest.mark.parametrize(("n", "r"), [(2, 1), (10, 3), (500, 20), (100_000, 10_000)])
def test_average_precision_of_one_shuffled_group_is_bestgens_random_baseline(n: int, r: int) -> None:
    """All n documents tied, r relevant: the expected AP of a random ranking, derived independently by
    Bestgen (2015, "Exact expected average precision of the random baseline for system evaluation"),
    is (1/n) * ((r - 1) n + (n - r) H_n) / (n - 1). At n = 10^5, C(n, r) overflows a float; the
    recurrences do not. E[P@k] = r/n and E[R@k] = k/n exactly, and a hit is certain once k > n - r."""
    groups = [[1] * r + [0] * (n - r)]
    judged = [1] * r
    harmonic = math.fsum(1 / i for i in range(1, n + 1))
    bestgen = ((r - 1) * n + (n - r) * harmonic) / (n - 1) / n
    assert tie_aware.average_precision(groups, judged) == pytest.approx(bestgen, rel=1e-12)
    assert tie_aware.average_precision(groups, judged, norm="retrieved") == pytest.approx(bestgen, rel=1e-12)
    k = n // 2
    assert tie_aware.precision(groups, judged, k=k) == r / n
    assert tie_aware.recall(groups, judged, k=k) == k / n
    assert tie_aware.success(groups, judged, k=n - r + 1) == 1.0
    for name in ("RR", "AP"):
        value = tie_aware.FUNCTIONS[name](groups, judged, k=k, **({"norm": "retrieved"} if name == "AP" else {}))
        assert 0.0 < value <= 1.0


@pytest.mark.parametrize("metric", ["P@30", "R@30", "RR@30", "AP@30", "AP(norm=retrieved)@30",
                                    "AP(norm=retrieved,weights=graded,max_grade=3)@30", "nDCG(gain=exp)@30",
                                    "DCG(discount=jk)@30", "Rprec", "Success@12", "ERR@30", "ERR", "Bpref",
                                    "infAP", "RBP(p=0.95,weights=graded)@30"])
def test_groups_too_large_to_enumerate_agree_with_a_seeded_monte_carlo_estimate(metric: str) -> None:
    """Ranks 1-5 fixed, then 40 tied documents straddling every cutoff used, then 10 more tied:
    40! orders cannot be enumerated, so 20,000 seeded shuffles of the reference estimate the mean,
    which must lie within 4.5 standard errors of the closed form. Every retrieved document is judged
    (its zeros are in the qrels), as bpref and infAP without in_qrels take it."""
    import random

    rng = random.Random(20080401)
    groups = [[0], [2], [0], [0], [1], [3, 0, 0, 1, 0, 2, 0, 0, 0, 1] + [0] * 28 + [2, 0], [1, 0, 0, 3] + [0] * 6]
    judged = [2, 3, 1, 1, 2, 1, 1, 3, 2, 1] + [0] * 46  # every retrieved document judged
    parsed = parse_metric(metric)
    kwargs = kernel_arguments(parsed, judged, groups)
    kernel = reference.FUNCTIONS[parsed.name]
    samples = []
    for _ in range(20_000):
        shuffled = [rng.sample(group, len(group)) for group in groups]
        samples.append(kernel([g for group in shuffled for g in group], judged, **kwargs))
    mean = math.fsum(samples) / len(samples)
    spread = math.sqrt(math.fsum((x - mean) ** 2 for x in samples) / (len(samples) - 1) / len(samples))
    assert abs(tie_aware.FUNCTIONS[parsed.name](groups, judged, **kwargs) - mean) <= 4.5 * spread + 1e-12


@pytest.mark.parametrize("metric", ["infAP", "Bpref", "ERR(gains={0:0.25,1:0.5})@20", "RBP_resid(p=0.9)@20",
                                    "Judged@20", "Hole@20", "nDCG(gains={0:1,1:2,2:3})@20"])
def test_large_groups_with_unjudged_and_pooled_documents_agree_with_a_seeded_monte_carlo_estimate(metric: str) -> None:
    """As above, with the judgement inputs: a group of 36 tied documents (relevant, judged non-relevant,
    pooled with a negative grade, unjudged, and unjudged documents outside the pool) straddling the
    cutoff, after two fixed ones and before 8 more tied. Each document keeps its flags when shuffled."""
    import random

    rng = random.Random(20260411)
    kinds = {"rel": (1, True, True), "high": (2, True, True), "non": (0, True, True), "pooled": (-1, True, True),
             "unjudged": (0, False, True), "unpooled": (0, False, False)}
    big = ["rel"] * 5 + ["high"] * 2 + ["non"] * 9 + ["pooled"] * 4 + ["unjudged"] * 10 + ["unpooled"] * 6
    documents = [[kinds["non"]], [kinds["rel"]], [kinds[kind] for kind in big],
                 [kinds[kind] for kind in ["rel", "non", "unjudged", "unpooled", "pooled", "non", "high", "non"]]]
    judged = [g for group in documents for g, in_qrels, _ in group if in_qrels] + [1, 2, 0]
    parsed = parse_metric(metric)
    kernel = reference.FUNCTIONS[parsed.name]
    samples = []
    for _ in range(20_000):
        retrieved, flat = document_arguments(parsed, judged, [rng.sample(group, len(group)) for group in documents],
                                             grouped=False)
        samples.append(kernel(retrieved, judged, **flat))
    mean = math.fsum(samples) / len(samples)
    spread = math.sqrt(math.fsum((x - mean) ** 2 for x in samples) / (len(samples) - 1) / len(samples))
    groups, kwargs = document_arguments(parsed, judged, documents, grouped=True)
    assert abs(tie_aware.FUNCTIONS[parsed.name](groups, judged, **kwargs) - mean) <= 4.5 * spread + 1e-12


@pytest.mark.parametrize(("n", "r", "c"), [(4, 2, 2), (10, 3, 7), (50, 20, 25), (100_000, 10_000, 50_000),
                                           (1000, 1, 999), (30, 30, 12), (30, 0, 12)])
def test_hypergeometric_probabilities_match_scipy(n: int, r: int, c: int) -> None:
    """The mode-anchored recurrence gives scipy.stats.hypergeom's pmf, even where C(n, c) overflows."""
    from scipy.stats import hypergeom

    import numpy as np

    hs, ps = map(np.asarray, zip(*tie_aware.hypergeometric(n, r, c)))
    assert math.fsum(ps) == pytest.approx(1.0, abs=1e-14)
    assert hs.tolist() == list(range(max(0, c - n + r), min(r, c) + 1))
    np.testing.assert_allclose(ps, hypergeom.pmf(hs, n, r, c), rtol=1e-9, atol=1e-300)


# -- properties --------------------------------------------------------------------------------------------


@given(data=st.data(), metric=metrics(names=TIE_AWARE, max_k=15, gains=True))
def test_without_ties_the_tie_aware_value_is_the_reference_value_bit_for_bit(data, metric) -> None:  # noqa: ANN001
    documents = data.draw(document_groups(max_groups=15, max_size=1, float_grades=data.draw(st.booleans())))
    judged = data.draw(judged_of(documents))
    groups, grouped = document_arguments(metric, judged, documents, grouped=True)
    retrieved, flat = document_arguments(metric, judged, documents, grouped=False)
    assert tie_aware.FUNCTIONS[metric.name](groups, judged, **grouped) == \
        reference.FUNCTIONS[metric.name](retrieved, judged, **flat)


@given(data=st.data(), metric=metrics(names=TIE_AWARE, max_k=15, gains=True))
def test_permuting_the_documents_of_a_tie_group_changes_nothing(data, metric) -> None:  # noqa: ANN001
    """Not a bit: each document keeps its flags, and sums over a group are exactly rounded or sorted."""
    documents = data.draw(document_groups(max_size=6, float_grades=True))
    judged = data.draw(judged_of(documents))
    shuffled = [data.draw(st.permutations(group)) for group in documents]

    def value(groups: list[list]) -> float:
        retrieved, kwargs = document_arguments(metric, judged, groups, grouped=True)
        return tie_aware.FUNCTIONS[metric.name](retrieved, judged, **kwargs)

    assert value(shuffled) == value(documents)


@given(data=qrels_and_run(ties=True, max_docs=12, max_queries=2), metric=tie_aware_metrics(max_k=12))
def test_average_ties_do_not_depend_on_doc_ids_or_input_order(data, metric) -> None:  # noqa: ANN001
    """Renaming documents (which reorders ties under docid_desc) and reversing the input order
    (which reorders them under input) leave every value under ties="average" identical."""
    qrels, run = data
    rename = {d: f"z{999 - i:03d}" for i, d in enumerate(sorted({d for row in (*qrels.values(), *run.values())
                                                                      for d in row}))}
    qrels2 = {q: {rename[d]: g for d, g in row.items()} for q, row in qrels.items()}
    run2 = {q: {rename[d]: s for d, s in reversed(row.items())} for q, row in run.items()}
    assert eb.evaluate(qrels, run, [metric], ties="average").query(metric) == \
        eb.evaluate(qrels2, run2, [metric], ties="average").query(metric)


@given(data=st.data(), metric=metrics(names=("P", "R", "RR", "AP", "nDCG", "Rprec", "Success"), max_k=15))
def test_normalised_tie_aware_values_lie_between_0_and_1(data, metric) -> None:  # noqa: ANN001
    groups = data.draw(st.lists(st.lists(grades(), min_size=1, max_size=10), max_size=5))
    judged = data.draw(judged_for(groups))
    kwargs = kernel_arguments(metric, judged, groups)
    value = tie_aware.FUNCTIONS[metric.name](groups, judged, **kwargs)
    assert 0.0 <= value <= 1.0 + 1e-12


@given(scores=st.dictionaries(st.sampled_from([f"d{i}" for i in range(10)]),
                              st.sampled_from([0.5, 1.0, 0.9752302811, 0.9752302801, -0.0, 0.0]), max_size=10),
       precision=st.sampled_from(["float64", "float32"]), ties=st.sampled_from(["docid_desc", "docid_asc", "input"]))
def test_rank_groups_partition_every_ranking_into_its_tie_groups(scores: dict, precision: str, ties: str) -> None:
    """Each ordered ranking is the groups in order, each group's documents in some order."""
    groups = rank_groups(scores, score_precision=precision)
    ranking = rank(scores, ties=ties, score_precision=precision)
    assert sorted(d for g in groups for d in g) == sorted(scores)
    start = 0
    for group in groups:
        assert set(ranking[start:start + len(group)]) == set(group)
        start += len(group)


def test_rank_refuses_average_and_points_at_the_tie_groups() -> None:
    with pytest.raises(ValueError, match="rank_groups"):
        rank({"a": 1.0}, ties="average")


def test_float32_collisions_tie_under_average_at_float32_precision() -> None:
    """Scores 1e-9 apart are one tie group as C floats: RR averages 1 and 1/2."""
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 0.9752302811, "b": 0.9752302801}}
    assert eb.evaluate(qrels, run, "RR", ties="average")["RR"] == 1.0
    assert eb.evaluate(qrels, run, "RR", ties="average", score_precision="float32")["RR"] == 0.75


# -- independent golden values: scikit-learn --------------------------------------------------------------


@given(data=st.data())
@settings(max_examples=150)
def test_tie_averaged_ndcg_and_dcg_match_scikit_learn(data) -> None:  # noqa: ANN001
    """scikit-learn's ndcg_score / dcg_score with ignore_ties=False average the discounts of each
    tie group (linear gain, log2 discount, ideal from the scored items' grades = ideal=run)."""
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    import numpy as np

    n = data.draw(st.integers(2, 12))
    grades_ = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n).filter(any))
    scores = data.draw(st.lists(st.sampled_from([0.1, 0.5, 0.9]), min_size=n, max_size=n))
    k = data.draw(st.none() | st.integers(1, n + 2))
    docs = [f"d{i}" for i in range(n)]
    qrels, run = {"q": dict(zip(docs, grades_))}, {"q": dict(zip(docs, scores))}
    ours = eb.evaluate(qrels, run, [Metric("nDCG", k, {"ideal": "run"}), Metric("DCG", k)], ties="average")
    y_true, y_score = np.asarray([grades_], dtype=float), np.asarray([scores])
    assert ours[str(Metric("nDCG", k, {"ideal": "run"}))] == pytest.approx(
        sklearn_metrics.ndcg_score(y_true, y_score, k=k, ignore_ties=False), rel=1e-12)
    assert ours[str(Metric("DCG", k))] == pytest.approx(
        sklearn_metrics.dcg_score(y_true, y_score, k=k, ignore_ties=False), rel=1e-12)


# -- backends and coverage ---------------------------------------------------------------------------------


def test_every_tie_aware_function_takes_exactly_the_options_of_its_reference_function() -> None:
    """A reference option the tie-aware function did not know would otherwise fail at call time; the
    judgement inputs (``in_qrels``, ``in_pool``) keep their names, grouped as the tie groups."""
    for name, kernel in tie_aware.FUNCTIONS.items():
        ours = list(inspect.signature(kernel).parameters.values())[2:]
        theirs = list(inspect.signature(reference.FUNCTIONS[name]).parameters.values())[2:]
        assert [(p.name, p.kind, p.default) for p in ours] == [(p.name, p.kind, p.default) for p in theirs], name


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_catalogue_metric_is_tie_aware_or_refused_under_average(name: str) -> None:
    """A metric family either has an exact tie-aware function or evaluate refuses it under average."""
    info = METRICS[name]
    metric = Metric(name, 3 if info.cutoff != "none" else None)
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}}
    if name in tie_aware.FUNCTIONS:
        assert math.isfinite(eb.evaluate(qrels, run, [metric], ties="average")[str(metric)])
    else:
        with pytest.raises(UnsupportedMetricError, match="ties='average'"):
            eb.evaluate(qrels, run, [metric], ties="average")


def test_a_gain_map_under_average_gives_unjudged_tied_documents_no_gain() -> None:
    """qrels a = 2, b = 0; a, b and the unjudged c tied at the top; gains {0: 1, 2: 3}. Gains: a 3, b 1
    (judged 0, the map gives it 1), c 0 (unjudged). Each document takes each of the 3 ranks with
    probability 1/3: E[DCG] = (3 + 1 + 0) * (1 + 1/log2(3) + 1/2) / 3; IDCG from the judged gains
    3, 1: 3 + 1/log2(3)."""
    qrels, run = {"q": {"a": 2, "b": 0}}, {"q": {"a": 1.0, "b": 1.0, "c": 1.0}}
    mean_discount = (1 + 1 / math.log2(3) + 1 / 2) / 3
    got = eb.evaluate(qrels, run, ["DCG(gains={0:1,2:3})", "nDCG(gains={0:1,2:3})"], ties="average")
    assert got["DCG(gains={0:1,2:3})"] == pytest.approx(4 * mean_discount, rel=1e-15)
    assert got["nDCG(gains={0:1,2:3})"] == pytest.approx(4 * mean_discount / (3 + 1 / math.log2(3)), rel=1e-15)


def test_bpref_of_a_tie_group_matches_the_hand_derivation() -> None:
    """qrels: a, b relevant, x, y, z non-relevant (R = 2, N = 3); ranking x, then a, y, u tied (u
    unjudged, skipped), then b. a has 1 non-relevant above it (x) or 2 (x, y), each with probability 1/2
    (its order against y alone decides): term (1 - 1/2) or (1 - 2/2), mean 1/4; b always has 2 above: 0.
    E[bpref] = (1/4 + 0) / 2 = 1/8; the docid_desc order (y, u, a) gives 0, the input order (a, y, u) 1/4."""
    qrels = {"q": {"a": 1, "b": 1, "x": 0, "y": 0, "z": 0}}
    run = {"q": {"x": 3.0, "a": 2.0, "y": 2.0, "u": 2.0, "b": 1.0}}
    assert [eb.evaluate(qrels, run, "Bpref", ties=t)["Bpref"] for t in ("average", "docid_desc", "input")] == \
        [0.125, 0.0, 0.25]


def test_err_of_a_tie_group_matches_the_hand_derivation() -> None:
    """Grades 2, 1 tied, then 2; max_grade 2: R = 3/4, 1/4, 3/4. Order (2, 1): 3/4 + (1/4)(1/4)/2, then
    rank 3: (1/4)(3/4)(3/4)/3; order (1, 2): 1/4 + (3/4)(3/4)/2, then the same rank-3 term (the
    product over a whole group does not depend on its order). E = (3/4 + 1/32 + 1/4 + 9/32) / 2 + 3/64
    = 21/32 + 3/64 = 45/64."""
    assert tie_aware.expected_reciprocal_rank([[2, 1], [2]], [2, 2, 1], max_grade=2) == pytest.approx(45 / 64,
                                                                                                     rel=1e-15)


def test_infap_of_a_tie_group_with_an_unjudged_document_matches_the_hand_derivation() -> None:
    """A relevant document a and an unjudged one u tied at the top, then a relevant b; R = 2. Order (a, u, b):
    a at j = 0 scores 1; b at j = 2 with r = 1, n = u = 0 above: 1/3 + (2/3)(1/2)(1 + e)/(1 + 2e).
    Order (u, a, b): a at j = 1 with nothing judged above: 1/2; b at j = 2 as before. With
    t = (1 + e)/(1 + 2e): E = ((1 + 1/2) / 2 + 1/3 + t/3) / 2."""
    e = reference.INFAP_EPSILON
    t = (1 + e) / (1 + 2 * e)
    value = tie_aware.inferred_ap([[1, 0], [1]], [1, 1], in_qrels=[[True, False], [True]])
    assert value == pytest.approx(((1 + 1 / 2) / 2 + 1 / 3 + t / 3) / 2, rel=1e-14)


@pytest.mark.parametrize(("metric", "expected"), [
    ("Judged@2", (1 + 1 / 2) / 2),   # d1 judged at rank 1; one of the tied d2 (judged), d3 (not) at rank 2
    ("Hole@2", (0 + 1 / 2) / 2),     # d3 is judged for no query: at rank 2 half the time
    ("Hits@2", 1 + 1 / 2),           # d1 relevant; d2 relevant, at rank 2 half the time
    ("R_cap@2", (1 + 1 / 2) / 2),    # R = 2
    ("F1@2", 2 * (1 + 1 / 2) / (2 + 2)),
    ("RBP(p=0.5)@2", 0.5 * (1 + 0.5 * 1 / 2)),
    ("RBP_resid(p=0.5)@2", 0.5 * 0.5 ** 2 + 0.5 * 0.5 * 1 / 2),  # unjudged d3 in the top 2 half the time
    ("SetP", 2 / 3), ("SetR", 1.0), ("NumRet", 3.0), ("NumRel", 2.0),
])
def test_linear_and_set_metrics_of_a_tie_straddling_the_cutoff_match_the_hand_derivation(metric: str,
                                                                                          expected: float) -> None:
    """d1 first; d2 (relevant) and d3 (judged for no query) tied for ranks 2-3, straddling the cutoff 2."""
    qrels, run = {"q": {"d1": 1, "d2": 1}}, {"q": {"d1": 2.0, "d2": 1.0, "d3": 1.0}}
    assert eb.evaluate(qrels, run, metric, ties="average")[str(parse_metric(metric))] == pytest.approx(expected,
                                                                                                      rel=1e-15)


@given(data=st.data(), metric=tie_aware_metrics(max_k=15))
def test_tie_aware_values_lie_between_the_bounds_of_every_order(data, metric) -> None:  # noqa: ANN001
    """Every order's value lies in [0, 1] for the normalised families (RBP with raw weights aside), in
    [0, min(k, |retrieved|)] for Hits; so does their mean, on groups too large to enumerate."""
    documents = data.draw(st.lists(st.lists(st.tuples(grades(negative=True), st.booleans(), st.booleans()),
                                            min_size=1, max_size=12), max_size=4))
    documents = [[(g, flag or g != 0, pooled or flag or g != 0) for g, flag, pooled in group] for group in documents]
    judged = data.draw(judged_of(documents))
    groups, kwargs = document_arguments(metric, judged, documents, grouped=True)
    value = tie_aware.FUNCTIONS[metric.name](groups, judged, **kwargs)
    length = sum(map(len, groups))
    if metric.name in ("Hits", "NumRet", "NumRel") or dict(metric.options).get("weights") == "raw" \
            or metric.name == "DCG":
        assert value >= 0.0
        if metric.name == "Hits":
            assert value <= (length if metric.k is None else min(metric.k, length)) + 1e-12
    else:
        assert 0.0 <= value <= 1.0 + 1e-12


def test_a_tie_group_too_large_for_exact_err_or_infap_is_refused_saying_why_and_what_to_do() -> None:
    """5,000 tied documents, half relevant: ERR without a cutoff and infAP would take beyond
    MAX_GROUP_STEPS in one group; evaluate refuses with the query id and the fixes. A cutoff makes ERR
    cheap: every document stops with probability 1/2 (max_grade 1), so ERR@1 = 1/2 * (1/2) = 1/4."""
    docs = [f"d{i}" for i in range(5000)]
    qrels, run = {"q": {d: i % 2 for i, d in enumerate(docs)}}, {"q": {d: 1.0 for d in docs}}
    for metric in ("ERR", "infAP"):
        with pytest.raises(eb.InputError, match=r"query 'q'.*tie group of 5000 documents.*MAX_GROUP_STEPS.*Fix: "):
            eb.evaluate(qrels, run, metric, ties="average")
    assert eb.evaluate(qrels, run, "ERR@1", ties="average")["ERR@1"] == 0.25


def test_many_tied_relevant_documents_cost_little_when_nothing_separates_them() -> None:
    """One probability and no cutoff-free mixture to spread: 2,000 tied documents all of grade 1 (R = 1/2)
    give ERR@50 = sum_{j <= 50} (1/j) (1/2)^j; for infAP every order is the same ranking of grades, so
    the expected value is the reference's value of that ranking (1 up to trec_eval's epsilon)."""
    groups = [[1] * 2000]
    expected = math.fsum(0.5 ** j / j for j in range(1, 51))
    assert tie_aware.expected_reciprocal_rank(groups, [1] * 2000, k=50, max_grade=1) == pytest.approx(expected,
                                                                                                     rel=1e-13)
    assert tie_aware.inferred_ap(groups, [1] * 2000) == pytest.approx(reference.inferred_ap([1] * 2000, [1] * 2000),
                                                                      rel=1e-12)


def test_exp_gains_of_huge_grades_average_without_overflow() -> None:
    """Grades beyond 1024: 2^grade overflows float64, yet tie-aware nDCG (exp) equals brute force,
    and DCG, beyond float64, raises the reference's InputError instead of returning inf."""
    groups, judged = [[2000, 0, 1999], [1998, 3]], [2000, 1999, 1998, 3]
    for k in (None, 2, 4):
        value = tie_aware.ndcg(groups, judged, k=k, gain="exp")
        assert 0.0 < value <= 1.0
        assert value == pytest.approx(brute_force("nDCG", groups, judged, {"k": k, "gain": "exp"}), rel=1e-12)
    assert tie_aware.dcg([[3, 0], [1]], [3, 1], gain="exp") == pytest.approx(
        brute_force("DCG", [[3, 0], [1]], [3, 1], {"gain": "exp"}), rel=1e-15)
    with pytest.raises(eb.InputError, match="beyond the largest float64"):
        tie_aware.dcg(groups, judged, gain="exp")


def test_a_metric_without_a_tie_aware_formula_is_refused_not_approximated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(tie_aware.FUNCTIONS, "RR")
    with pytest.raises(UnsupportedMetricError, match="RR has no exact tie-aware formula"):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["RR", "P@1"], ties="average")
    with pytest.raises(UnsupportedMetricError, match="RR has no exact tie-aware formula"):
        get_backend("reference").compute(Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0}}), [parse_metric("RR")],
                                         AVERAGE)
    assert eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, ["RR"], ties="docid_desc")["RR"] == 0.5


@pytest.mark.parametrize("backend", ["fast", "ranx", "ir_measures", "pytrec_eval"])
def test_backends_that_rank_one_order_refuse_average(backend: str) -> None:
    module = get_backend(backend)
    assert "ties='average'" in unsupported(module, parse_metric("nDCG@10"), conventions=AVERAGE)
    assert unsupported(module, parse_metric("nDCG@10"), conventions=Settings()) is None
    with pytest.raises(UnsupportedMetricError, match=f"backend '{backend}' cannot compute.*ties='average'"):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}, "nDCG@10", ties="average", backend=backend)


def test_a_library_asked_to_follow_average_directly_refuses_instead_of_ranking_one_order() -> None:
    module = get_backend("pytrec_eval")
    with pytest.raises(UnsupportedMetricError, match="ties='average'"):
        module.compute(Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0, "b": 1.0}}), [parse_metric("P@1")], AVERAGE)
    with pytest.raises(UnsupportedMetricError, match="ties='average'"):
        get_backend("fast").compute(Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0}}), [parse_metric("P@1")], AVERAGE)


def test_auto_chooses_the_reference_under_average_whatever_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under ties='average' auto takes the reference even where the size alone would take the engine."""
    monkeypatch.setattr(auto, "THRESHOLD", 1)
    qrels, run = Qrels({"q": {"a": 1}}), Run({"q": {"a": 1.0, "b": 1.0}})
    assert auto.choose(qrels, run) == "fast"
    assert auto.choose(qrels, run, ties="average") == "reference"
    result = eb.evaluate(qrels, run, "P@1", ties="average")
    assert (result.provenance.backend, result["P@1"]) == ("reference", 0.5)
    assert result.provenance.settings.ties == "average"


@given(data=st.data())
@settings(max_examples=60)
def test_infap_follows_the_same_chain_in_numpy_as_in_python(data) -> None:  # noqa: ANN001
    """Large groups take the numpy chain (NUMPY_CHAIN_STEPS); forced on small ones, it equals brute force."""
    documents = data.draw(document_groups(float_grades=False))
    judged = data.draw(judged_of(documents))
    metric = parse_metric("infAP")
    groups, kwargs = document_arguments(metric, judged, documents, grouped=True)
    python = tie_aware.inferred_ap(groups, judged, **kwargs)
    saved, tie_aware.NUMPY_CHAIN_STEPS = tie_aware.NUMPY_CHAIN_STEPS, -1
    try:
        numpy_ = tie_aware.inferred_ap(groups, judged, **kwargs)
    finally:
        tie_aware.NUMPY_CHAIN_STEPS = saved
    expected = brute_force_documents(metric, documents, judged)
    assert numpy_ == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert python == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_depth_under_average_cuts_between_tie_groups_and_refuses_to_split_one() -> None:
    """a alone, then b, c tied, then d. depth=3 keeps a, b, c whatever the order: the same values as the
    run without d. depth=2 would keep b or c depending on an order: refused, naming the group's edges."""
    qrels = {"q": {"a": 0, "b": 1, "c": 0, "d": 1}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 2.0, "d": 1.0}}
    metrics_ = ["RR", "AP", "Bpref", "infAP", "NumRet", "SetR"]
    cut = eb.evaluate(qrels, run, metrics_, ties="average", depth=3)
    assert cut.means == eb.evaluate(qrels, {"q": {"a": 3.0, "b": 2.0, "c": 2.0}}, metrics_, ties="average").means
    assert cut.means["RR"] == (1 / 2 + 1 / 3) / 2
    with pytest.raises(eb.InputError, match=r"query 'q'.*depth=2 cuts a group of 2 documents tied at ranks 2-3.*"
                                            r"Fix: use depth=1 or 3"):
        eb.evaluate(qrels, run, "RR", ties="average", depth=2)


def test_unknown_tie_policy_is_refused_with_the_choices() -> None:
    with pytest.raises(eb.InputError, match="'average'"):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "P@1", ties="mean")


# -- cross-check: tie luck ---------------------------------------------------------------------------------


def test_crosscheck_reports_a_difference_due_to_tie_order_as_all_tie_luck() -> None:
    """One relevant document tied with two others. In input order it is first (RR = 1); pytrec_eval
    orders ties by doc id descending, c, b, a (RR = 1/3). Over the 3! orders it is first, second or
    third with probability 1/3 each: E[RR] = (1 + 1/2 + 1/3) / 3 = 11/18 = 0.6111."""
    check = eb.crosscheck({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.5}}, ["RR"],
                          backends=["pytrec_eval"], ties="input")
    (cause,) = check.differences.cause
    assert cause.startswith("ties broken differently: pytrec_eval orders tied scores docid_desc, the reference input")
    assert cause.endswith("tie luck: all of the -0.6667 difference (expected value over every order of the tied "
                          "documents: 0.6111)")
    assert check.ok


def test_crosscheck_under_average_compares_each_library_order_with_the_expected_value() -> None:
    """Under ties="average" the reference column is E[RR] = 11/18 and pytrec_eval's doc id order
    (RR = 1/3) is tie luck of 1/3 - 11/18 = -5/18 = -0.2778."""
    check = eb.crosscheck({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5, "c": 0.5}}, ["RR"],
                          backends=["pytrec_eval"], ties="average")
    (row,) = check.differences.itertuples()
    assert (row.reference, row.value) == (pytest.approx(11 / 18, rel=1e-15), pytest.approx(1 / 3, rel=1e-15))
    assert "the reference averages over every order; tie luck: all of the -0.2778 difference" in row.cause
    assert check.ok and check.reference_backend == "reference"


def test_tie_luck_is_the_part_of_a_difference_that_averaging_over_tie_orders_removes() -> None:
    """a and b differ only beyond float32 precision, b is relevant. In float64 a ranks first:
    RR = 1/2 with no tie at all (E_requested = 1/2). pytrec_eval's C floats tie them and doc id
    descending puts b first: RR = 1. Under its conventions the expected value is (1 + 1/2) / 2 = 3/4,
    so of the +1/2 difference, 3/4 - 1/2 = +1/4 is the float32 collision and (1 - 3/4) - 0 = +1/4
    is tie luck."""
    run = {"q": {"a": 0.9752302811, "b": 0.9752302801, "c": 0.5, "d": 0.5}}
    check = eb.crosscheck({"q": {"b": 1}}, run, ["RR"], backends=["pytrec_eval"])
    (cause,) = check.differences.cause
    assert cause.startswith("float32 score collision")
    assert cause.endswith("tie luck: +0.25 of the +0.5 difference (expected value over every order of the tied "
                          "documents: 0.5, 0.75 with pytrec_eval's other conventions)")


@pytest.mark.slow  # ranx compiles its kernels on first use
def test_a_difference_in_a_query_without_ties_mentions_no_tie_luck() -> None:
    """ranx truncates the grade 2.5 to 2: nDCG differs, with no tie anywhere, so no tie luck."""
    check = eb.crosscheck({"q": {"a": 2.5, "b": 1}}, {"q": {"a": 1.0, "b": 2.0}}, ["nDCG"], backends=["ranx"])
    (cause,) = check.differences.cause
    assert cause == "float grade truncation: ranx truncates float grades to integers" and check.ok


def test_canonicalised_crosscheck_lists_every_library_as_unable_to_average() -> None:
    check = eb.crosscheck({"q": {"a": 1}}, {"q": {"a": 0.5, "b": 0.5}}, ["P@1", "nDCG"],
                          backends=["ir_measures", "pytrec_eval"], ties="average", canonicalise=True)
    assert set(check.unsupported) == {(b, m) for b in ("ir_measures", "pytrec_eval") for m in ("P@1", "nDCG")}
    assert all("ties='average'" in reason for reason in check.unsupported.values())
    assert check.values["reference"][parse_metric("P@1")] == {"q": 0.5}


@pytest.mark.parametrize(("metric", "expected"), [
    ("Bpref", 0.5),  # R = N = 1: b above a gives 1 - 1/1 = 0, a above b gives 1
    ("infAP", 0.75 + 0.5 * 0.5 * reference.INFAP_EPSILON / (1 + 2 * reference.INFAP_EPSILON)),
])
def test_crosscheck_reports_the_tie_order_difference_of_bpref_and_infap_as_tie_luck(metric: str,
                                                                                   expected: float) -> None:
    """a (relevant) and b (judged non-relevant) tied. Input order puts a first: bpref = infAP = 1;
    pytrec_eval's doc id order puts b first: bpref = 0, infAP = 1/2 + (1/2)(1/1)(e / (1 + 2e)) at j = 1.
    The expected value is the mean of the two orders, and the whole difference is tie luck."""
    check = eb.crosscheck({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.5}}, [metric], backends=["pytrec_eval"],
                          ties="input")
    (row,) = check.differences.itertuples()
    assert row.reference == 1.0
    assert row.cause.startswith("ties broken differently: pytrec_eval orders tied scores docid_desc")
    assert row.cause.endswith(f"tie luck: all of the {row.value - 1:+.4g} difference (expected value over every "
                              f"order of the tied documents: {expected:.4g})")
    assert eb.evaluate({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.5}}, metric,
                       ties="average")[metric] == pytest.approx(expected, rel=1e-15)
    assert check.ok


def test_crosscheck_refuses_a_reference_metric_without_a_tie_aware_formula(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(tie_aware.FUNCTIONS, "AP")
    with pytest.raises(UnsupportedMetricError, match="AP has no exact tie-aware formula"):
        eb.crosscheck({"q": {"a": 1}}, {"q": {"a": 0.5}}, ["AP"], backends=["pytrec_eval"], ties="average")


@given(data=qrels_and_run(ties=True, max_docs=10, max_queries=3, missing=True),
       metric=metrics(names=("P", "R", "RR", "AP", "nDCG", "Rprec", "Success", "Bpref", "infAP", "Judged", "F1",
                             "Hits", "SetP", "SetR", "NumRet", "NumRel"), max_k=10))
@settings(max_examples=60)
def test_under_average_every_library_difference_with_both_values_is_explained_as_tie_luck(data, metric) -> None:  # noqa: ANN001
    """pytrec_eval and ir-measures on their own: each difference from the expected value is verified,
    and wherever both sides have a value it is all tie luck (under average the reference is E), but for the
    missing-query policy on a query absent from the run."""
    qrels, run = data
    check = eb.crosscheck(qrels, run, [metric], backends=["pytrec_eval", "ir_measures"], ties="average")
    assert check.ok
    (reference_values,) = check.values["reference"].values()
    assert reference_values == eb.evaluate(qrels, run, [metric], ties="average").query(metric)
    for row in check.differences.itertuples():
        if not (math.isnan(row.reference) or math.isnan(row.value)):  # a query absent from the run retrieved nothing:
            # its NumRel is R (trec_eval -c) where ir_measures scores every measure 0, a policy and not luck
            assert ("missing-query policy" if row.query_id not in run else "tie luck: all of the") in row.cause


def test_every_backend_declares_the_tie_policies_it_follows() -> None:
    """Each backend's ties is a subset of the policies; the reference and auto follow all of them."""
    from evalbridge.backends import BACKENDS
    from evalbridge.model.settings import ORDERED_TIES, TIE_POLICIES

    for name in BACKENDS:
        ties = get_backend(name).ties
        assert set(ORDERED_TIES) <= set(ties) <= set(TIE_POLICIES), name
    assert get_backend("reference").ties == get_backend("auto").ties == TIE_POLICIES


def test_trec_files_under_average_are_evaluated_by_the_reference_not_read_into_columns(tmp_path) -> None:  # noqa: ANN001
    """auto reads nothing into the fast backend's columns for average; fast itself refuses it."""
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 1.0 x\nq1 Q0 b 2 1.0 x\n")
    qrels, run = str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")
    result = eb.evaluate(qrels, run, "P@1", ties="average")
    assert (result.provenance.backend, result["P@1"]) == ("reference", 0.5)
    with pytest.raises(UnsupportedMetricError, match="backend 'fast' cannot compute P@1"):
        eb.evaluate(qrels, run, "P@1", ties="average", backend="fast")
