"""Agreement between two sets of judgements and between the system rankings they induce
(evalbridge.evalsets.agreement), checked against scikit-learn, the ``krippendorff`` package, scipy and
hand-computed cases."""

from __future__ import annotations

import copy
import itertools
import json
import math
import warnings
from typing import Any

import krippendorff
import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score
from strategies import DOCS, grades, two_judges

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.views.agreement_tables import FORMATS
from evalbridge.evalsets.agreement import JudgeAgreement, agree, agreement
from evalbridge.stats.kappa import ALPHA_LEVELS, cohen_kappa, krippendorff_alpha
from evalbridge.evalsets.ranking_agreement import OUTCOMES, ranking_agreement


# -- helpers ------------------------------------------------------------------------------------------

def shared_grades(qrels_a: dict, qrels_b: dict) -> tuple[list, list]:
    """The grades of the pairs both judged, written independently of the module."""
    pairs = [(g, qrels_b[q][d]) for q, row in qrels_a.items() for d, g in row.items() if d in qrels_b.get(q, {})]
    return [a for a, _ in pairs], [b for _, b in pairs]


grade_pairs = st.integers(2, 60).flatmap(lambda n: st.tuples(st.lists(st.integers(0, 3), min_size=n, max_size=n),
                                                             st.lists(st.integers(0, 3), min_size=n, max_size=n)))


def table(a: list[int], b: list[int], k: int = 4) -> list[list[int]]:
    return [[sum(x == i and y == j for x, y in zip(a, b)) for j in range(k)] for i in range(k)]


# -- kappa ----------------------------------------------------------------------------------------------

def test_cohen_kappa_matches_hand_computed_2x2_table():
    """[[20, 5], [10, 15]], 50 pairs: p_o = 35/50 = 0.7; margins a (25, 25), b (30, 20) so
    p_e = (25*30 + 25*20) / 2500 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4."""
    assert cohen_kappa([[20, 5], [10, 15]]) == pytest.approx(0.4, abs=1e-15)


def test_weighted_kappa_matches_hand_computed_3x3_table():
    """[[10, 2, 0], [3, 8, 2], [1, 2, 12]], n = 40, rows (12, 13, 15), columns (14, 12, 14).
    Quadratic weights (i - j)^2: observed sum w n = 1*(2 + 3 + 2 + 2) + 4*(0 + 1) = 13;
    expected sum w r_i c_j / n = [1*(12*12 + 13*14 + 13*14 + 15*12) + 4*(12*14 + 15*14)] / 40
    = (688 + 1512) / 40 = 55; kappa_w = 1 - 13/55 = 42/55.
    Plain: p_o = 30/40, p_e = (12*14 + 13*12 + 15*14)/1600 = 534/1600; kappa = (1200 - 534)/(1600 - 534) = 666/1066."""
    confusion = [[10, 2, 0], [3, 8, 2], [1, 2, 12]]
    assert cohen_kappa(confusion, weights="quadratic") == pytest.approx(42 / 55, rel=1e-14)
    assert cohen_kappa(confusion) == pytest.approx(666 / 1066, rel=1e-14)


@given(grade_pairs, st.sampled_from(["none", "linear", "quadratic"]))
def test_cohen_kappa_equals_sklearn_cohen_kappa_score(pair, weights):
    """Plain, linear and quadratic kappa of a confusion table equal scikit-learn's on the same labels."""
    a, b = pair
    assume(len(set(a)) > 1 or len(set(b)) > 1 or a[0] != b[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = cohen_kappa_score(a, b, labels=[0, 1, 2, 3], weights=None if weights == "none" else weights)
    assume(math.isfinite(expected))
    assert cohen_kappa(table(a, b), weights=weights) == pytest.approx(expected, rel=1e-9, abs=1e-12)


@given(two_judges())
def test_agreement_kappas_equal_sklearn_on_the_shared_pairs(judges):
    """agreement()'s kappa and quadratic kappa are scikit-learn's over the grades of the pairs both judged."""
    qrels_a, qrels_b = judges
    a, b = shared_grades(qrels_a, qrels_b)
    labels = list(range(min(a + b), max(a + b) + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = cohen_kappa_score(a, b, labels=labels)
        quadratic = cohen_kappa_score(a, b, labels=labels, weights="quadratic")
    result = agreement(qrels_a, qrels_b)
    for got, expected in ((result.cohen_kappa, plain), (result.weighted_kappa, quadratic)):
        if math.isfinite(expected):
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)
        else:
            assert math.isnan(got)


def test_kappa_is_nan_when_both_judges_use_one_category():
    """Every pair in one category on both sides: p_e = 1, kappa = 0/0, reported as nan (not 1, not 0)."""
    result = agreement({"q1": {"d1": 1, "d2": 1}}, {"q1": {"d1": 1, "d2": 1}})
    assert result.observed_agreement == 1.0
    assert math.isnan(result.cohen_kappa) and math.isnan(result.weighted_kappa)
    assert math.isnan(result.krippendorff_alpha)


# -- Krippendorff's alpha ------------------------------------------------------------------------------

def test_alpha_reproduces_krippendorffs_binary_textbook_example():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", binary data, two observers:
    A = 0 1 0 0 0 0 0 0 1 0, B = 1 1 1 0 0 1 0 0 0 0. Coincidences o_00 = 10, o_11 = 2, o_01 = o_10 = 4;
    n_0 = 14, n_1 = 6, n = 20; alpha = 1 - (n - 1) o_01 / (n_0 n_1) = 1 - 19*4/84 = 0.095."""
    a = [0, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    b = [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]
    assert krippendorff_alpha(table(a, b, 2), level="nominal") == pytest.approx(1 - 76 / 84, rel=1e-14)
    assert round(1 - 76 / 84, 3) == 0.095


@given(grade_pairs, st.sampled_from(sorted(ALPHA_LEVELS)))
def test_alpha_equals_the_krippendorff_package(pair, level):
    """Nominal, ordinal and interval alpha equal the ``krippendorff`` package's on the same two-row data."""
    a, b = pair
    assume(len(set(a + b)) > 1)
    expected = krippendorff.alpha(reliability_data=[a, b], level_of_measurement=level, value_domain=[0, 1, 2, 3])
    assert krippendorff_alpha(table(a, b), level=level, values=[0, 1, 2, 3]) == pytest.approx(expected, rel=1e-9,
                                                                                               abs=1e-12)


@given(two_judges(), st.sampled_from(sorted(ALPHA_LEVELS)))
def test_agreement_alpha_equals_the_krippendorff_package_with_unpaired_values(judges, level):
    """agreement()'s alpha is the package's on the full reliability matrix, pairs judged by one side given
    as missing values (Krippendorff's alpha ignores units with a single value, as agreement() does)."""
    qrels_a, qrels_b = judges
    units = sorted({(q, d) for q, row in qrels_a.items() for d in row} | {(q, d) for q, row in qrels_b.items()
                                                                           for d in row})
    data = [[float(qrels.get(q, {}).get(d, np.nan)) for q, d in units] for qrels in (qrels_a, qrels_b)]
    values = sorted({g for row in data for g in row if not math.isnan(g)})
    domain = list(range(int(values[0]), int(values[-1]) + 1))
    result = agreement(qrels_a, qrels_b, alpha_level=level)
    a, b = shared_grades(qrels_a, qrels_b)
    if len(set(a + b)) < 2:
        assert math.isnan(result.krippendorff_alpha)
        return
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level, value_domain=domain)
    assert result.krippendorff_alpha == pytest.approx(expected, rel=1e-9, abs=1e-12)


# -- judge agreement: invariants --------------------------------------------------------------------------

@given(two_judges())
def test_identical_judgements_give_kappa_alpha_and_agreement_one(judges):
    """A judge compared with itself: every pair shared, none only on one side, kappa = weighted kappa =
    alpha (every level) = 1 exactly, whenever two categories are used."""
    qrels_a, _ = judges
    assume(len({g for row in qrels_a.values() for g in row.values()}) > 1)
    for level in ALPHA_LEVELS:
        result = agreement(qrels_a, copy.deepcopy(qrels_a), alpha_level=level)
        assert result.krippendorff_alpha == 1.0
    assert (result.cohen_kappa, result.weighted_kappa, result.observed_agreement) == (1.0, 1.0, 1.0)
    assert (result.only_in_a, result.only_in_b, result.mean_difference) == (0, 0, 0.0)
    assert result.shared_pairs == sum(map(len, qrels_a.values()))
    assert all(result.confusion[i][j] == 0 for i in range(len(result.categories))
               for j in range(len(result.categories)) if i != j)


@given(two_judges())
def test_kappa_and_alpha_are_at_most_one_and_symmetric_in_a_and_b(judges):
    """Swapping the judges transposes the confusion table and swaps the one-sided counts; kappa, weighted
    kappa and alpha are unchanged and never above 1; the mean difference changes sign."""
    qrels_a, qrels_b = judges
    ab, ba = agreement(qrels_a, qrels_b), agreement(qrels_b, qrels_a)
    assert ba.confusion == tuple(zip(*ab.confusion))
    assert (ba.only_in_a, ba.only_in_b, ba.shared_pairs) == (ab.only_in_b, ab.only_in_a, ab.shared_pairs)
    for name in ("cohen_kappa", "weighted_kappa", "krippendorff_alpha", "binary_kappa", "observed_agreement"):
        x, y = getattr(ab, name), getattr(ba, name)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12), name
        assert math.isnan(x) or x <= 1 + 1e-12, name
    assert ba.mean_difference == pytest.approx(-ab.mean_difference, abs=1e-12)


@settings(max_examples=30)  # builds two DataFrames per example
@given(two_judges())
def test_pairs_judged_by_one_side_are_counted_never_dropped(judges):
    """shared + only in a = every pair of a; shared + only in b = every pair of b; pairs() lists them all;
    the queries judged by one side only are named."""
    qrels_a, qrels_b = judges
    before = copy.deepcopy(judges)
    result = agreement(qrels_a, qrels_b)
    assert result.shared_pairs + result.only_in_a == sum(map(len, qrels_a.values()))
    assert result.shared_pairs + result.only_in_b == sum(map(len, qrels_b.values()))
    assert sum(map(sum, result.confusion)) == result.shared_pairs == sum(map(sum, result.binary_confusion))
    assert result.queries_only_in_b == tuple(q for q in qrels_b if q not in qrels_a)
    frame = result.pairs()
    assert len(frame) == result.shared_pairs + result.only_in_a + result.only_in_b
    assert int(frame[["grade_a", "grade_b"]].notna().all(axis=1).sum()) == result.shared_pairs
    per_query = result.per_query()
    assert per_query[["shared", "only_in_a", "only_in_b"]].to_numpy().sum() == len(frame)
    assert (qrels_a, qrels_b) == before  # inputs untouched


def test_per_category_agreement_matches_hand_computed_values():
    """a = 0 0 1 1 2, b = 0 1 1 1 2: category 1 is used 2 times by a, 3 by b, 2 by both:
    specific agreement 2*2/(2+3) = 0.8; its 2x2 table [[2, 0], [1, 2]] has p_o = 4/5,
    p_e = (2*3 + 3*2)/25 = 12/25, kappa = (20 - 12)/(25 - 12) = 8/13."""
    docs = ["d1", "d2", "d3", "d4", "d5"]
    result = agreement({"q": dict(zip(docs, [0, 0, 1, 1, 2]))}, {"q": dict(zip(docs, [0, 1, 1, 1, 2]))})
    row = result.per_grade().loc[1]
    assert (row["a"], row["b"], row["both"]) == (2, 3, 2)
    assert row["specific_agreement"] == pytest.approx(0.8)
    assert row["kappa"] == pytest.approx(8 / 13)
    assert result.mean_difference == pytest.approx(1 / 5)


def test_lenient_judge_keeps_weighted_measures_high_but_binary_kappa_low():
    """A judge upgrading every 1 to 2 (a = 0 0 1 1 2 3, b = 0 0 2 2 2 3): at level 2 the binary table is
    [[2, 2], [0, 2]]: p_o = 4/6, p_e = (4*2 + 2*4)/36 = 16/36, kappa = (24 - 16)/(36 - 16) = 0.4;
    plain kappa on 0-3: p_o = 4/6, p_e = (2*2 + 2*0 + 1*3 + 1*1)/36 = 8/36, kappa = (24 - 8)/(36 - 8) = 4/7."""
    docs = [f"d{i}" for i in range(6)]
    result = agreement({"q": dict(zip(docs, [0, 0, 1, 1, 2, 3]))}, {"q": dict(zip(docs, [0, 0, 2, 2, 2, 3]))},
                       min_relevance=2)
    assert result.binary_confusion == ((2, 2), (0, 2))
    assert result.binary_kappa == pytest.approx(0.4)
    assert result.cohen_kappa == pytest.approx(4 / 7)
    assert result.weighted_kappa > result.cohen_kappa > result.binary_kappa


# -- judge agreement: grades, bins, levels --------------------------------------------------------------

LLM_A = {"q1": {"d1": 7.5, "d2": 2.0, "d3": 9.0}, "q2": {"d4": 4.5}}
LLM_B = {"q1": {"d1": 8.0, "d2": 6.5, "d3": 9.5}, "q2": {"d4": 1.0}}


def test_float_grades_without_bins_or_level_are_refused_with_the_fix():
    """LLM scores 0-10 have no categories: InputError naming the query, the doc, and both ways out."""
    with pytest.raises(InputError, match=r"query 'q1'.*non-integer grades.*7\.5.*bins_a=.*min_relevance"):
        agreement(LLM_A, LLM_B)


def test_float_grades_with_a_level_are_compared_as_relevant_or_not():
    """min_relevance=7: a relevant = d1, d3; b relevant = d1, d3: every pair agrees, two categories."""
    result = agreement(LLM_A, LLM_B, min_relevance=7)
    assert result.labels_a == ("<7", ">=7") and result.confusion == ((2, 0), (0, 2))
    assert result.cohen_kappa == 1.0 and result.binary_kappa == 1.0
    assert any("relevant / not relevant" in note for note in result.notes)


def test_the_level_carried_by_the_qrels_binarises_float_grades():
    """A Qrels built with its own min_relevance needs no argument; each side keeps its own level."""
    human = eb.Qrels({"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d4": 0}}, min_relevance=2)
    llm = eb.Qrels(LLM_A, min_relevance=7)
    result = agreement(human, llm)
    assert (result.level_a, result.level_b) == (2, 7)
    assert result.binary_confusion == ((2, 1), (0, 1))  # d2, d4 | d3 (1 vs 9.0) | d1


def test_bins_group_scores_into_ordered_categories():
    """bins=[2.5, 5, 7.5]: a grade is the number of thresholds it reaches. a: 7.5 -> 3, 2.0 -> 0, 9.0 -> 3,
    4.5 -> 1; b: 8.0 -> 3, 6.5 -> 2, 9.5 -> 3, 1.0 -> 0."""
    result = agreement(LLM_A, LLM_B, bins=[2.5, 5, 7.5])
    frame = result.pairs()
    assert frame["category_a"].tolist() == [3, 0, 3, 1] and frame["category_b"].tolist() == [3, 2, 3, 0]
    assert result.labels_a == ("<2.5", "[2.5, 5)", "[5, 7.5)", ">=7.5")
    assert result.confusion_frame().loc["<2.5", "[5, 7.5)"] == 1


@given(two_judges())
def test_bins_at_every_integer_reproduce_integer_grades(judges):
    """bins=[1, 2, 3] on grades 0-3 gives the same categories, kappa and alpha as the grades themselves."""
    qrels_a, qrels_b = judges
    exact, binned = agreement(qrels_a, qrels_b), agreement(qrels_a, qrels_b, bins=[1, 2, 3])
    assert [list(row) for row in binned.confusion] == table(*shared_grades(qrels_a, qrels_b))
    for name in ("cohen_kappa", "weighted_kappa", "krippendorff_alpha"):
        x, y = getattr(exact, name), getattr(binned, name)
        assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12)


def test_bins_b_maps_a_0_to_10_judge_onto_the_human_0_to_3_scale():
    """Human 0-3 against LLM scores: bins_b=[2.5, 5, 7.5] puts 8.0 -> 3, 6.5 -> 2, 9.5 -> 3, 1.0 -> 0."""
    human = {"q1": {"d1": 3, "d2": 2, "d3": 2}, "q2": {"d4": 0}}
    result = agreement(human, LLM_B, bins_b=[2.5, 5, 7.5], names=("human", "llm"))
    assert result.confusion == ((1, 0, 0, 0), (0, 0, 0, 0), (0, 0, 1, 1), (0, 0, 0, 1))
    assert result.labels_a == ("0", "1", "2", "3") and result.labels_b[3] == ">=7.5"
    assert len(result.notes) == 1 and "default 1" in result.notes[0]


@pytest.mark.parametrize("bins, message", [
    ([], "at least one finite number"), ([3, 2], "strictly increasing"), ("2.5", "list of thresholds"),
    ([1, math.inf], "finite"),
])
def test_bad_bins_are_refused(bins, message):
    with pytest.raises(InputError, match=message):
        agreement(LLM_A, LLM_B, bins=bins)


def test_bins_for_both_and_for_one_side_are_exclusive():
    with pytest.raises(InputError, match="either bins"):
        agreement(LLM_A, LLM_B, bins=[5], bins_b=[5])


def test_no_shared_pair_is_refused_with_examples():
    with pytest.raises(InputError, match=r"no \(query, doc\) pair is judged in both.*'q1'.*'q9'"):
        agreement({"q1": {"d1": 1}}, {"q9": {"d1": 1}})


def test_int_and_str_ids_are_not_guessed_equal():
    with pytest.raises(InputError, match="query ids are int"):
        agreement({1: {"d1": 1}}, {"1": {"d1": 1}})


def test_too_many_integer_categories_ask_for_bins():
    with pytest.raises(InputError, match="bins"):
        agreement({"q": {"d1": 0, "d2": 500}}, {"q": {"d1": 0, "d2": 500}})


def test_unknown_alpha_level_and_names_are_refused():
    with pytest.raises(InputError, match="alpha_level"):
        agreement({"q": {"d": 1}}, {"q": {"d": 1}}, alpha_level="ratio-ish")
    with pytest.raises(InputError, match="names"):
        agreement({"q": {"d": 1}}, {"q": {"d": 1}}, names=("same", "same"))


# -- judge agreement: renderings ------------------------------------------------------------------------

def test_judge_agreement_renders_as_text_markdown_html_dict_and_frame():
    """Every rendering names both judges and shows kappa; to_dict is strict JSON (nan -> null)."""
    result = agreement({"q1": {"d1": 2, "d2": 0, "d3": 1}}, {"q1": {"d1": 2, "d2": 1, "d4": 0}},
                       names=("human", "llm"))
    for text in (str(result), result.to_markdown(), result._repr_html_()):
        assert "human" in text and "llm" in text and "kappa" in text
    assert "| Cohen's kappa" in result.to_markdown()
    data = json.loads(json.dumps(result.to_dict(), allow_nan=False))
    assert data["shared_pairs"] == 2 and data["only_in_b"] == 1 and "qrels" not in data
    assert list(result.to_frame().index) == ["llm vs human"]
    assert result.confusion_frame().index.name == "human"


# -- ranking agreement --------------------------------------------------------------------------------------

def results_for(qrels: dict, runs: dict, metrics: Any = "P@1") -> dict:
    return {name: eb.evaluate(qrels, run, metrics) for name, run in runs.items()}


#: 12 queries; under a the relevant doc is "r", under b it is "s". x retrieves r, y retrieves s, z neither.
QUERIES = [f"q{i}" for i in range(12)]
JUDGES_A = {q: {"r": 1, "s": 0} for q in QUERIES}
JUDGES_B = {q: {"r": 0, "s": 1} for q in QUERIES}
RUNS = {"x": {q: {"r": 1.0} for q in QUERIES}, "y": {q: {"s": 1.0} for q in QUERIES},
        "z": {q: {"n": 1.0} for q in QUERIES}}


def test_ranking_agreement_of_identical_judgements_is_perfect():
    """The same results on both sides: tau = tau_ap = 1, every significant pair agrees, nothing flips."""
    qrels = {q: {"r": 1, "s": 1 if i % 2 else 0} for i, q in enumerate(QUERIES)}
    results = results_for(qrels, RUNS, ["P@1", "RR"])
    out = ranking_agreement(results, results)
    for row in out.rows:
        assert row.kendall_tau == pytest.approx(1.0, abs=1e-12)
        assert (row.tau_ap, row.tau_ap_symmetric, row.flipped) == (1.0, 1.0, 0)
        assert row.count("agree") == row.significant_a == row.significant_b > 0
        assert row.flipped_share == 0.0


def test_flips_are_sorted_into_reversed_lost_and_gained():
    """P@1 per query: a gives x 1, y 0, z 0; b gives x 0, y 1, z 0, on all 12 queries. Under a, x-y and
    x-z differ on every query (significant, x ahead) and y-z never (p = 1); under b, x-y is significant
    with y ahead (reversed), x-z not (lost), y-z is (gained): 3 flips of 3 pairs significant somewhere."""
    out = ranking_agreement(results_for(JUDGES_A, RUNS), results_for(JUDGES_B, RUNS), names=("human", "llm"))
    row = out["P@1"]
    assert {(p.system_1, p.system_2): p.outcome for p in row.pairs} == {
        ("y", "x"): "reversed", ("z", "x"): "lost", ("z", "y"): "gained"}
    assert (row.significant_a, row.significant_b, row.flipped, row.flipped_share) == (2, 2, 3, 1.0)
    assert row.ranking("a")[0] == "x" and row.ranking("b")[0] == "y"
    assert row.kendall_tau == pytest.approx(kendalltau([1, 0, 0], [0, 1, 0]).statistic)
    frame = out.pairs_frame()
    assert frame["outcome"].tolist() == ["reversed", "lost", "gained"]
    assert out.to_frame().loc["P@1", "flipped_share"] == 1.0


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=3, max_size=7, unique=True), st.randoms())
def test_kendall_tau_is_the_concordant_minus_discordant_share(means_a, rnd):
    """With distinct means tau = (concordant - discordant) / pairs, counted by hand over the system means."""
    means_b = list(means_a)
    rnd.shuffle(means_b)
    systems = [f"s{i}" for i in range(len(means_a))]
    one = {"q": {"r": 1}}

    def side(means: list[float]) -> dict:
        # one query; RR of a run whose relevant doc sits at rank 1 / v: mean RR = v exactly for v = 1/k
        return {s: eb.evaluate(one, {"q": {f"n{j}": 1.0 - j / 100 for j in range(rank - 1)} | {"r": 0.0}}, "RR")
                for s, rank in zip(systems, means)}

    ranks_a = [sorted(means_a).index(m) + 1 for m in means_a]
    ranks_b = [sorted(means_b).index(m) + 1 for m in means_b]
    row = ranking_agreement(side(ranks_a), side(ranks_b)).rows[0]
    pairs = list(itertools.combinations(range(len(systems)), 2))
    signs = [np.sign(ranks_a[i] - ranks_a[j]) * np.sign(ranks_b[i] - ranks_b[j]) for i, j in pairs]
    assert row.kendall_tau == pytest.approx(sum(signs) / len(pairs), abs=1e-12)


def test_randomization_test_gives_the_same_outcomes_here():
    out = ranking_agreement(results_for(JUDGES_A, RUNS), results_for(JUDGES_B, RUNS), test="randomization",
                            n_resamples=500)
    assert [p.outcome for p in out.rows[0].pairs] == ["reversed", "lost", "gained"]


def test_ranking_agreement_refuses_mismatched_or_too_few_systems_and_unknown_metrics():
    a = results_for(JUDGES_A, RUNS)
    with pytest.raises(InputError, match=r"same systems.*\['z'\]"):
        ranking_agreement(a, {k: v for k, v in a.items() if k != "z"})
    with pytest.raises(InputError, match="at least two"):
        ranking_agreement({"x": a["x"]}, {"x": a["x"]})
    with pytest.raises(InputError, match="nDCG@10 was not evaluated"):
        ranking_agreement(a, a, metrics=["ndcg@10"])
    with pytest.raises(InputError, match="unknown test"):
        ranking_agreement(a, a, test="wilcoxon")


def test_outcome_table_covers_every_case():
    assert sorted(OUTCOMES.values()) == ["agree", "gained", "lost", "neither", "reversed"]


# -- agree ---------------------------------------------------------------------------------------------------

def test_agree_with_the_same_judgements_twice_agrees_everywhere():
    """agree(q, q, runs): kappa 1, alpha 1, tau 1, tau_ap 1, no flips; the means are evaluate()'s."""
    qrels = {q: {"r": 1 + i % 2, "s": i % 3, "t": 0} for i, q in enumerate(QUERIES)}
    runs = {"x": RUNS["x"], "y": {q: {"s": 2.0, "r": 1.0} for q in QUERIES}, "z": RUNS["z"]}
    result = agree(qrels, qrels, runs, ["P@1", "nDCG@2"], names=("human", "human again"))
    assert (result.judges.cohen_kappa, result.judges.krippendorff_alpha) == (1.0, 1.0)
    for row in result.ranking.rows:
        assert row.kendall_tau == pytest.approx(1.0) and row.tau_ap == 1.0 and row.flipped == 0
    assert result.results_a["y"].means == eb.evaluate(qrels, runs["y"], ["P@1", "nDCG@2"]).means
    for fmt in FORMATS:
        assert "human again" in result.render(fmt)
    assert json.loads(result.render("json"))["judges"]["cohen_kappa"] == 1.0


def test_agree_without_runs_gives_only_the_judge_agreement():
    result = agree(JUDGES_A, JUDGES_B)
    assert isinstance(result.judges, JudgeAgreement) and result.ranking.rows == ()
    assert "no runs given" in str(result) and "no runs given" in result.render("markdown")
    assert result.ranking.to_frame().empty


def test_agree_with_a_single_run_says_two_are_needed():
    with pytest.raises(InputError, match="at least two"):
        agree(JUDGES_A, JUDGES_B, {"x": RUNS["x"]}, ["P@1"])


def test_agree_uses_each_qrels_own_level_for_binary_metrics():
    """Human 0-3 at level 2 and LLM scores 0-10 at level 7, mapped onto 0-3 by bins_b=[2.5, 5, 7.5]:
    r is 3 / 8.5 (category 3), s is 1 / 3.0 (category 1), so the grades agree; P@1 reads each side with
    its own level (x retrieves r: relevant under both; y retrieves s: relevant under neither)."""
    human = eb.Qrels({q: {"r": 3, "s": 1} for q in QUERIES}, min_relevance=2)
    llm = eb.Qrels({q: {"r": 8.5, "s": 3.0} for q in QUERIES}, min_relevance=7)
    result = agree(human, llm, {"x": RUNS["x"], "y": RUNS["y"]}, ["P@1"], bins_b=[2.5, 5, 7.5])
    row = result.ranking["P@1"]
    assert (row.metric_a, row.metric_b) == ("P(rel=2)@1", "P(rel=7)@1")
    assert row.means_a == row.means_b == (1.0, 0.0)
    assert (result.judges.cohen_kappa, result.judges.binary_kappa) == (1.0, 1.0)
    assert (result.judges.level_a, result.judges.level_b) == (2, 7)


def test_a_binned_side_without_its_own_level_gets_a_note():
    """Binning a 0-10 scale leaves its relevance level at the default 1: the binary kappa would read 1.0
    as relevant, so the result says so."""
    human = {"q1": {"d1": 3, "d2": 2, "d3": 2}, "q2": {"d4": 0}}
    quiet = agreement(human, eb.Qrels(LLM_B, min_relevance=7), bins_b=[2.5, 5, 7.5])
    noted = agreement(human, LLM_B, bins_b=[2.5, 5, 7.5], names=("human", "llm"))
    assert quiet.notes == () and any("relevance level of llm is the default 1" in n for n in noted.notes)


def test_settings_and_input_shapes_are_checked_before_any_work():
    """Unknown test, significance level out of (0, 1), runs not keyed by name, per-query dicts instead of
    Results, an unknown output format: each an InputError saying what is expected."""
    with pytest.raises(InputError, match="test must be one of 't', 'randomization', 'wilcoxon'; got 'bogus'"):
        agree(JUDGES_A, JUDGES_B, test="bogus")
    with pytest.raises(InputError, match=r"alpha must be a number in \(0, 1\); got 1.5"):
        agree(JUDGES_A, JUDGES_B, alpha=1.5)
    with pytest.raises(InputError, match="runs must map a name to each run"):
        agree(JUDGES_A, JUDGES_B, [RUNS["x"], RUNS["y"]])
    with pytest.raises(InputError, match="not the Results of eb.evaluate"):
        ranking_agreement({"x": {"P@1": {"q": 1.0}}, "y": {"P@1": {"q": 0.0}}}, results_for(JUDGES_A, RUNS))
    with pytest.raises(InputError, match="unknown format 'pdf'"):
        agree(JUDGES_A, JUDGES_B).render("pdf")
    with pytest.raises(InputError, match="unknown kappa weights"):
        cohen_kappa([[1, 0], [0, 1]], weights="cubic")


def _markdown_tables(text: str) -> list[list[str]]:
    """The rows of each Markdown table in ``text`` (the lines that start with '|', one list per table)."""
    tables: list[list[str]] = []
    for block in text.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        if rows:
            tables.append(rows)
    return tables


@settings(max_examples=20, deadline=None)
@given(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8))
@example("hu|man \\ <i>&%_\n")
def test_a_judge_or_system_name_stays_in_its_cell_in_every_table_format(name):
    """Property: whatever a set of judgements or a system is called (pipes, backslashes, line breaks, LaTeX
    specials, markup), each Markdown table keeps its columns in every row, and LaTeX and HTML escape the name."""
    import html

    from evalbridge.common.escaping import latex_escape

    other = "b" if name != "b" else "c"
    assume(name.strip() and other != name)
    runs = {name: RUNS["x"], other: RUNS["y"]}
    result = agree(JUDGES_A, JUDGES_B, runs, ["P@1"], names=(name, other), n_resamples=20)
    tables = _markdown_tables(result.to_markdown())
    assert len(tables) == 4  # summary, confusion, per category, ranking
    for rows in tables:
        cells = {row.replace("\\\\", "").replace("\\|", "").count("|") for row in rows}
        assert len(cells) == 1, rows
    assert latex_escape(name) in result.table("latex") and html.escape(name) in result.table("html")
