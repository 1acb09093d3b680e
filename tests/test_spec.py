"""Metric specs: every ecosystem's spelling parses to one canonical, hashable ``Metric``."""

from __future__ import annotations

import inspect
import io
import tokenize

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from evalbridge import Metric, MetricSpecError, UnsupportedMetricError
from evalbridge.metrics.spec import parse_metric, parse_metrics
from evalbridge.metrics import spec as spec_module
from evalbridge.metrics.catalogue import ALIASES, METRICS, TREC_MEASURES
from evalbridge.metrics.spec import GainMap
from strategies import gain_maps, metrics

#: spelling (as in the issue text) -> canonical string
ALIAS_CASES = {
    # ranx
    "ndcg@10": "nDCG@10",
    "ndcg_burges@10": "nDCG(gain=exp)@10",
    "map@100": "AP@100",
    "map@100-l2": "AP(rel=2)@100",
    "precision@5": "P@5",
    "recall@5": "R@5",
    "mrr": "RR",
    "hit_rate@5": "Success@5",
    "r-precision": "Rprec",
    "ndcg@10-l2": "nDCG(rel=2)@10",
    # ir-measures
    "nDCG@10": "nDCG@10",
    "AP@100": "AP@100",
    "P@5": "P@5",
    "R@5": "R@5",
    "RR": "RR",
    "RR@10": "RR@10",
    "Success@5": "Success@5",
    "Rprec": "Rprec",
    "P(rel=2)@5": "P(rel=2)@5",
    "nDCG(dcg=exp-log2)@10": "nDCG(gain=exp)@10",
    "nDCG(dcg='exp-log2')@10": "nDCG(gain=exp)@10",
    # trec_eval
    "ndcg_cut_10": "nDCG@10",
    "map_cut_100": "AP@100",
    "P_5": "P@5",
    "recall_100": "R@100",
    "recip_rank": "RR",
    "success_5": "Success@5",
    "map": "AP",
    "ndcg": "nDCG",
    # evalbridge options and RAG names
    "nDCG(gain=exp)@10": "nDCG(gain=exp)@10",
    "nDCG(ideal=run)@3": "nDCG(ideal=run)@3",
    "nDCG(discount=jk,ideal=run)": "nDCG(discount=jk,ideal=run)",
    "ndcg_jk": "nDCG(discount=jk)",
    "AP(norm=retrieved)@3": "AP(norm=retrieved)@3",
    "AP(weights=graded)@10": "AP(weights=graded)@10",
    "wmap@10": "AP(weights=graded)@10",
    "coverage@5": "Success@5",
    "hits_at_k@3": "Success@3",
    # incomplete judgements, and the measures peers have
    "Judged@10": "Judged@10",
    "judged": "Judged",
    "hole@10": "Hole@10",
    "bpref": "Bpref",
    "BPref": "Bpref",
    "infAP": "infAP",
    "ERR@20": "ERR@20",
    "err(max_grade=4)@20": "ERR(max_grade=4)@20",
    "RBP(p=0.8)": "RBP",
    "Rbp(p=0.95,weights=raw)": "RBP(p=0.95,weights=raw)",
    "rbp_resid(p=0.9)": "RBP_resid(p=0.9)",
    "f1@10": "F1@10",
    "set_F": "F1",
    "SetF": "F1",
    "R_cap@10": "R_cap@10",
    "capped_recall@5": "R_cap@5",
    "hits@10": "Hits@10",
    "num_rel_ret": "Hits",
    "NumRelRet": "Hits",
    "num_ret": "NumRet",
    "NumRel": "NumRel",
    "set_P": "SetP",
    "set_recall": "SetR",
    "SetR": "SetR",
    # gain maps: ir-measures gains=, written in any order and spacing, printed sorted
    "nDCG(gains={0:0,1:1,2:3})@10": "nDCG(gains={0:0,1:1,2:3})@10",
    "nDCG(gains={2: 3, 1: 1, 0: 0})@10": "nDCG(gains={0:0,1:1,2:3})@10",
    "ndcg(gains={1:3.5,2:9.0,4:7.0})": "nDCG(gains={1:3.5,2:9,4:7})",
    "dcg(gains={0:-1})@5": "DCG(gains={0:-1})@5",
    "ndcg_burges(gains={3:10})@5": "nDCG(gain=exp,gains={3:10})@5",
    "nDCG(gains={})@10": "nDCG@10",
}


@pytest.mark.parametrize(("spelling", "canonical"), sorted(ALIAS_CASES.items()))
def test_alias_parses_to_canonical_metric(spelling: str, canonical: str) -> None:
    """Each alias from ranx, ir-measures, trec_eval and the RAG world names the right canonical metric."""
    assert str(parse_metric(spelling)) == canonical


def test_equal_meaning_gives_equal_hashable_metrics() -> None:
    """Different spellings of one metric are equal, hash alike, and collapse in a set."""
    spellings = ["AP(weights=graded)@10", "wmap@10", "WMAP@10", "ap(WEIGHTS=Graded)@10", "MAP(weights=graded)@10",
                 "map_cut_10(weights=graded)"]
    parsed = {parse_metric(s) for s in spellings}
    assert parsed == {Metric("AP", 10, {"weights": "graded"})}
    assert hash(parse_metric("ndcg_burges@10")) == hash(Metric("nDCG", 10, {"gain": "exp"}))


def test_default_options_are_dropped() -> None:
    """Options equal to their default do not change the metric or its string."""
    explicit = parse_metric("nDCG(gain=linear,ideal=qrels,discount=log2)@10")
    assert explicit == parse_metric("ndcg@10")
    assert str(explicit) == "nDCG@10"
    assert parse_metric("AP(norm=R,weights=binary)") == parse_metric("map")


@pytest.mark.parametrize("spelling", ["NDCG@10", "Ndcg_Burges@10", "MAP@100-L2", "P(REL=2)@5", "HIT_RATE@5",
                                      "nDCG(GAIN=EXP)@10", "R-PRECISION", "NDCG_CUT_10", "Coverage@5"])
def test_parsing_is_case_insensitive(spelling: str) -> None:
    """Upper, lower and mixed case all parse to the same metric as the lower-case spelling."""
    assert parse_metric(spelling) == parse_metric(spelling.lower())


def test_parse_metrics_keeps_one_of_each_meaning_in_order() -> None:
    """``parse_metrics`` de-duplicates equal meanings and keeps the first-seen order."""
    assert [str(m) for m in parse_metrics(["mrr", "P@5", "RR", "precision@5", "ndcg@10"])] == ["RR", "P@5", "nDCG@10"]
    assert parse_metrics("P@5") == [Metric("P", 5)]


@given(metrics())
def test_canonical_string_is_a_fixed_point(metric: Metric) -> None:
    """``str(parse_metric(str(m)))`` equals ``str(m)`` and parses back to an equal Metric."""
    text = str(metric)
    again = parse_metric(text)
    assert again == metric
    assert hash(again) == hash(metric)
    assert str(again) == text


@given(st.sampled_from(sorted(ALIAS_CASES)), st.randoms(use_true_random=False))
def test_random_casing_of_any_spelling_parses_the_same(spelling: str, rnd) -> None:  # noqa: ANN001
    """Flipping the case of any letter of a spelling changes nothing, and the result is a fixed point. Except
    where the flip makes trec_eval's name of a measure with fixed options (``RBP(p=0.8)`` -> ``rbp(p=0.8)``:
    ``rbp`` is trec_eval's RBP(p=0.9), matched exactly, and p=0.8 contradicts it: refused)."""
    flipped = "".join(c.upper() if rnd.random() < 0.5 else c.lower() for c in spelling)
    head = flipped.split("(")[0].split("@")[0]
    assume(head not in TREC_MEASURES or spelling.startswith(head))
    metric = parse_metric(flipped)
    assert metric == parse_metric(spelling)
    assert str(parse_metric(str(metric))) == str(metric)


@given(st.sampled_from(sorted(ALIASES)), st.integers(1, 1000))
def test_every_catalogue_alias_parses(alias: str, k: int) -> None:
    """Every alias in the catalogue parses, with a cutoff when its family takes one."""
    metric = parse_metric(alias if parse_metric_needs_no_k(alias) else f"{alias}@{k}")
    assert str(parse_metric(str(metric))) == str(metric)


def parse_metric_needs_no_k(alias: str) -> bool:
    """True for aliases of families without a cutoff (R-precision, bpref, the counts...)."""
    return METRICS[ALIASES[alias][0]].cutoff == "none"


@pytest.mark.parametrize(("spec", "expected"), [
    ("ndgc@10", "did you mean 'ndcg'"),
    ("precison@5", "did you mean 'precision'"),
    ("nDCG(gian=exp)@10", "did you mean 'gain'"),
    ("P(gain=exp)@5", "'gain' applies to DCG, nDCG"),
    ("nDCG(gain=exponential)@10", "did you mean 'exp'"),
    ("AP(norm=retreived)@3", "did you mean 'retrieved'"),
    ("P@-1", "P@10"),
    ("P@0", "P@10"),
    ("P", "P@10"),
    ("precision", "P@10"),
    ("Rprec@5", "write Rprec"),
    ("P(rel=high)@5", "'high'"),
    ("P@ten", "'ten'"),
    ("AP(max_grade=2)@10", "weights=graded"),
    ("mrr(rel=2,rel=3)", "twice"),
    ("ndcg_burges(gain=linear)@10", "contradicts"),
    ("foo(", "e.g. 'nDCG(gain=exp)@10'"),
    ("nDCG(gains=3)@10", "{grade: gain"),
    ("nDCG(gains={1:a})@10", "must be a number"),
    ("nDCG(gains={1:1,1:2})@10", "twice"),
    ("nDCG(gains={1})@10", "grade:gain"),
    ("nDCG(gains={1:inf})@10", "finite"),
    ("ERR(gains={1:2})@10", "[0, 1]"),
    ("RBP(p=1)", "between 0 and 1"),
    ("RBP(p=0)", "between 0 and 1"),
    ("AP(weights=raw)", "one of binary, graded"),
    ("NumRet(rel=2)", "takes no option"),
    ("Judged(rel=2)@5", "'rel' applies to"),
    ("bpref@10", "write Bpref"),
    ("Hole", "Hole@10"),
    ("R_cap", "R_cap@10"),
    ("ERR(max_grade=0)@5", "> 0"),
])
def test_error_names_the_closest_valid_spelling(spec: str, expected: str) -> None:
    """Bad names, options, values and cutoffs raise MetricSpecError (a ValueError) that shows a fix."""
    with pytest.raises(MetricSpecError) as info:
        parse_metric(spec)
    assert isinstance(info.value, ValueError)
    assert expected.lower() in str(info.value).lower()


def test_non_string_metric_is_refused() -> None:
    """A number is not a metric; the error says what is expected."""
    with pytest.raises(MetricSpecError, match="string like 'nDCG@10'"):
        parse_metric(10)  # type: ignore[arg-type]


def test_metric_is_immutable() -> None:
    """A Metric cannot be changed after construction (it is a dict key)."""
    metric = parse_metric("P@5")
    with pytest.raises(AttributeError):
        metric.k = 10  # type: ignore[misc]


def test_spec_module_uses_no_eval_or_ast() -> None:
    """The parser is a regex: no eval, exec, compile, ast or literal_eval anywhere in its code."""
    source = inspect.getsource(spec_module)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    # bare names only: ``re.compile`` is an attribute, the builtin ``compile`` would not be
    names = {tok.string for prev, tok in zip(tokens, tokens[1:])
             if tok.type == tokenize.NAME and prev.string != "."}
    assert not names & {"eval", "exec", "compile", "ast", "literal_eval", "__import__"}
    assert "import ast" not in source and "from ast" not in source


_SPEC_ALPHABET = st.sampled_from(list("PpRrAaNnDdCcGgLlMmSsEeXxUuIi@()=,-_ '\"0123456789.+k"))


@given(st.text(_SPEC_ALPHABET, max_size=30) | st.text(max_size=20))
def test_any_text_either_parses_or_raises_metric_spec_error(text: str) -> None:
    """No string makes the parser fail with anything but MetricSpecError, or UnsupportedMetricError for a trec_eval
    name evalbridge refuses with its reason (``Z0``: a z-score); what parses is a fixed point."""
    try:
        metric = parse_metric(text)
    except (MetricSpecError, UnsupportedMetricError):
        return
    assert parse_metric(str(metric)) == metric


@given(metrics(gains=True))
def test_canonical_string_with_gain_maps_is_a_fixed_point(metric: Metric) -> None:
    """Metrics with gain maps (floats, negatives, ERR probabilities) print and parse back to themselves."""
    text = str(metric)
    assert parse_metric(text) == metric and str(parse_metric(text)) == text


@given(gain_maps(), st.randoms(use_true_random=False))
def test_gain_map_order_and_spacing_do_not_matter(gains: GainMap, rnd) -> None:  # noqa: ANN001
    """A gain map written in any order, with spaces, is the same option: one metric, one hash."""
    items = list(gains.items())
    rnd.shuffle(items)
    written = "{" + ", ".join(f"{k} : {v}" for k, v in items) + "}"
    metric = parse_metric(f"nDCG(gains={written})@10")
    assert metric == Metric("nDCG", 10, {"gains": dict(gains)})
    assert hash(metric) == hash(parse_metric(str(metric)))
    assert metric.get("gains") == gains


def test_gain_map_is_an_immutable_hashable_mapping() -> None:
    """GainMap reads like a dict, cannot change, and whole floats print as ints."""
    gains = GainMap({1: 3.5, 2: 9.0, 0: -1})
    assert dict(gains) == {0: -1, 1: 3.5, 2: 9}
    assert str(gains) == "{0:-1,1:3.5,2:9}" and gains.get(7) is None
    with pytest.raises(AttributeError):
        gains.x = 1  # type: ignore[attr-defined]
    assert {gains: 1}[GainMap({0: -1, 2: 9, 1: 3.5})] == 1


def test_rbp_persistence_and_weights_are_options() -> None:
    """RBP's p defaults to 0.8 (ir-measures); trec_eval's rbp is RBP(p=0.9,weights=graded)."""
    assert parse_metric("RBP(p=0.8,weights=binary)") == parse_metric("RBP") == Metric("RBP")
    assert str(parse_metric("RBP(weights=graded,p=.9)")) == "RBP(p=0.9,weights=graded)"
    assert parse_metric("RBP(p=0.9)").arguments == {"rel": 1, "p": 0.9, "weights": "binary", "k": None}
