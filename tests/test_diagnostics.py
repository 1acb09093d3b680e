"""eb.diagnose: discriminative power, swap rate, leave-one-run-out pool bias, saturation, judged share, agreement."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import kendalltau
from test_system_order import yilmaz  # tau_AP as Yilmaz et al. write it, for lists without ties

import evalbridge as eb
from evalbridge.evalsets.diagnostics import diagnose, discriminative_power, swap_rate
from evalbridge.errors import InputError
from evalbridge.fast.tops import from_ranked, from_runs
from evalbridge.common.ranking import rank
from evalbridge.views.diagnosis import meanings
from evalbridge.decisions.compare import compare_systems


def _p_at_1_runs(n: int) -> tuple[dict, dict]:
    """n queries, each with one relevant doc 'r': 'best' ranks it first everywhere, 'none' and 'same' never."""
    qrels = {f"q{i}": {"r": 1, "x": 0} for i in range(n)}
    runs = {"best": {q: {"r": 2.0, "x": 1.0} for q in qrels},
            "none": {q: {"x": 2.0, "r": 1.0} for q in qrels},
            "same": {q: {"x": 2.0, "r": 1.0} for q in qrels}}
    return qrels, runs


def test_discriminative_power_counts_the_pairs_known_to_differ() -> None:
    qrels, runs = _p_at_1_runs(8)
    d = diagnose(qrels, runs, "P@1", pool_depth=2, trials=10)
    power = d.discriminative_power
    # best-none and best-same differ on every query by 1 (p = 0); none-same never differ (p = 1)
    assert (power.pairs, power.significant) == (3, 2)
    assert power.share == pytest.approx(2 / 3)


@settings(max_examples=25, deadline=None)
@given(st.integers(3, 5).flatmap(lambda s: st.lists(st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=6,
                                                             max_size=6), min_size=s, max_size=s)),
       st.sampled_from(["t", "wilcoxon", "randomization"]), st.sampled_from(["holm", "bh", "none"]))
def test_discriminative_power_is_compare_systems_over_all_pairs(rows: list[list[float]], test: str,
                                                                correction: str) -> None:
    values = np.array(rows)
    power = discriminative_power(values, test=test, correction=correction, alpha=0.05, n_resamples=200, seed=3)
    per_query = {f"s{i}": {"m": {f"q{j}": v for j, v in enumerate(row)}} for i, row in enumerate(rows)}
    comparison = compare_systems(per_query, ["m"], test=test, correction=correction, n_resamples=200, seed=3)
    assert power.pairs == len(comparison.rows)
    assert power.significant == sum(row.significant for row in comparison.rows)


def test_swap_rate_is_zero_when_one_system_wins_every_query_and_one_when_halves_disagree() -> None:
    dominant = np.array([[0.9, 0.8, 0.7, 0.6], [0.1, 0.2, 0.3, 0.4]])
    assert swap_rate(dominant, trials=50, seed=1).swaps == 0
    # two queries, one each way: every split puts one in each half, and the halves always disagree
    split = np.array([[1.0, 0.0], [0.0, 1.0]])
    result = swap_rate(split, trials=40, seed=1)
    assert (result.comparisons, result.swaps, result.rate) == (40, 40, 1.0)
    assert result.stable_delta is None


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 4).flatmap(lambda s: st.lists(st.lists(st.integers(0, 3).map(lambda v: v / 3), min_size=7,
                                                             max_size=7), min_size=s, max_size=s)),
       st.integers(1, 30), st.integers(0, 10))
def test_swap_rate_equals_a_loop_over_the_same_halves(rows: list[list[float]], trials: int, seed: int) -> None:
    values = np.array(rows)
    result = swap_rate(values, trials=trials, seed=seed)
    n, half = values.shape[1], values.shape[1] // 2
    order = np.random.default_rng(seed).permuted(np.tile(np.arange(n), (trials, 1)), axis=1)  # the same draws
    exact = [[Fraction(v).limit_denominator(3) for v in row] for row in rows]
    swaps = comparisons = 0
    for t in range(trials):
        a, b = order[t, :half], order[t, half:2 * half]
        for i in range(len(rows)):
            for j in range(i + 1, len(rows)):
                da = sum(exact[i][q] - exact[j][q] for q in a)  # exact: a tie is a tie
                db = sum(exact[i][q] - exact[j][q] for q in b)
                comparisons += 1
                swaps += (da > 0 > db) or (da < 0 < db)
    assert (result.comparisons, result.swaps) == (comparisons, swaps)
    assert sum(b.comparisons for b in result.bins) == comparisons


def _known_bias() -> tuple[dict, dict]:
    """'explorer' alone finds u1 (q1) and u2, u3 (q2) in its first 3; 'a' and 'b' share everything else."""
    qrels = {"q1": {"c": 1, "u1": 2, "n": 0}, "q2": {"c": 1, "u2": 1, "u3": 1}, "q3": {"c": 1}}
    runs = {
        "a": {"q1": {"c": 3, "n": 2, "z": 1}, "q2": {"c": 3, "z": 2}, "q3": {"c": 1}},
        "b": {"q1": {"n": 3, "c": 2}, "q2": {"z": 3, "c": 2}, "q3": {"z": 2, "c": 1}},
        "explorer": {"q1": {"u1": 3, "c": 2}, "q2": {"u2": 3, "u3": 2, "c": 1, "y": 0.5}, "q3": {"y": 3, "c": 2}},
    }
    return qrels, runs


def test_pool_bias_removes_exactly_the_relevant_documents_only_that_run_found() -> None:
    qrels, runs = _known_bias()
    d = diagnose(qrels, runs, "AP", pool_depth=3, trials=10)
    explorer = d.pool_bias.runs[2]
    assert (explorer.system, explorer.unique_relevant, explorer.queries) == ("explorer", 3, 2)
    reduced = {"q1": {"c": 1, "n": 0}, "q2": {"c": 1}, "q3": {"c": 1}}
    assert explorer.score == pytest.approx(eb.evaluate(qrels, runs["explorer"], "AP")["AP"])
    assert explorer.score_without == pytest.approx(eb.evaluate(reduced, runs["explorer"], "AP")["AP"])
    assert [r.unique_relevant for r in d.pool_bias.runs[:2]] == [0, 0]
    assert [r.score_without for r in d.pool_bias.runs[:2]] == [r.score for r in d.pool_bias.runs[:2]]
    others = [r.score for r in d.pool_bias.runs[:2]]
    assert explorer.rank == 1 + sum(s > explorer.score for s in others)
    assert explorer.rank_without == 1 + sum(s > explorer.score_without for s in others)
    assert (explorer.rank, explorer.rank_without) == (1, 2)


def _collections(draw: st.DrawFn) -> tuple[dict, dict, int]:
    docs = [f"d{i}" for i in range(8)]
    queries = [f"q{i}" for i in range(draw(st.integers(2, 4)))]
    qrels = {q: {d: draw(st.integers(0, 2)) for d in draw(st.lists(st.sampled_from(docs), min_size=1, unique=True))}
             for q in queries}
    runs = {}
    for s in range(draw(st.integers(2, 4))):
        runs[f"s{s}"] = {q: {d: float(draw(st.integers(0, 50))) for d in
                             draw(st.lists(st.sampled_from(docs), min_size=1, max_size=6, unique=True))}
                         for q in queries}
    return qrels, runs, draw(st.integers(1, 4))


@settings(max_examples=40, deadline=None)
@given(st.composite(_collections)(), st.sampled_from(["AP", "nDCG@3", "P@2", "bpref", "RR"]))
def test_pool_bias_equals_evaluating_from_scratch_without_the_unique_documents(case: tuple, metric: str) -> None:
    qrels, runs, depth = case
    d = diagnose(qrels, runs, metric, pool_depth=depth, trials=5)
    tops = {name: {q: rank(scores)[:depth] for q, scores in run.items()} for name, run in runs.items()}
    for bias in d.pool_bias.runs:
        others = {q: set().union(*(tops[o].get(q, []) for o in runs if o != bias.system)) for q in qrels}
        unique = {q: {doc for doc in tops[bias.system].get(q, []) if doc not in others[q]
                      and qrels[q].get(doc, 0) >= 1} for q in qrels}
        reduced = {q: {doc: g for doc, g in judged.items() if doc not in unique[q]} for q, judged in qrels.items()}
        scratch = eb.evaluate(reduced, runs[bias.system], metric).query(metric)
        expected = sum(scratch.values()) / len(scratch)
        assert bias.unique_relevant == sum(map(len, unique.values()))
        assert bias.score_without == pytest.approx(expected, abs=1e-12)


def test_saturation_finds_the_queries_every_system_answers_perfectly() -> None:
    qrels = {"easy": {"r": 1}, "hard": {"r": 1, "s": 1}, "empty": {"x": 0}}
    runs = {"a": {"easy": {"r": 1.0}, "hard": {"r": 1.0, "z": 0.5}, "empty": {"x": 1.0}},
            "b": {"easy": {"r": 1.0, "y": 0.1}, "hard": {"z": 1.0, "s": 0.5}, "empty": {"y": 1.0}}}
    s = diagnose(qrels, runs, "nDCG@2", pool_depth=2, trials=5).saturation
    assert s.perfect == ("easy",)           # 'empty' ties at 0 but has nothing to answer
    assert set(s.tied) == {"easy", "empty"}


def test_judged_share_by_rank_counts_judged_documents_at_each_rank() -> None:
    qrels = {"q1": {"a": 1, "b": 0}}
    runs = {"x": {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, "y": {"q1": {"c": 3.0, "a": 2.0}}}
    j = diagnose(qrels, runs, "P@1", pool_depth=3, trials=5).judged
    assert j.documents == (2, 2, 1)
    assert j.share == (0.5, 1.0, 0.0)
    # a pool deeper than every ranking is as deep as the longest (as for TopLists): no rank no run reaches is listed
    assert diagnose(qrels, runs, "P@1", pool_depth=4, trials=5).judged == j


def test_agreement_of_a_second_set_of_judgements_is_the_agreement_verb() -> None:
    qrels, runs = _known_bias()
    other = {"q1": {"c": 1, "u1": 0, "n": 0}, "q2": {"c": 1, "u2": 1, "u3": 0}, "q3": {"c": 0}}
    d = diagnose(qrels, runs, "P@1", judgements_b=other, trials=5)
    assert d.agreement is not None
    assert d.agreement.cohen_kappa == eb.agree(qrels, other).judges.cohen_kappa
    assert "agreement" in meanings(d) and "kappa" in meanings(d)["agreement"]


@settings(max_examples=40, deadline=None)
@given(st.composite(_collections)(), st.sampled_from(["AP", "nDCG@3", "P@2", "RR"]), st.data())
def test_the_order_of_the_systems_under_two_judgement_sets_is_kendall_tau_and_tau_ap(case: tuple, metric: str,
                                                                                     data: st.DataObject) -> None:
    """Each system's mean under the second judgements is evaluate's; tau is scipy's kendalltau between the two
    lists of means and, without ties, tau_AP is Yilmaz et al.'s formula with the first judgements as the truth."""
    qrels, runs, depth = case
    judgements_b = {q: {doc: data.draw(st.integers(0, 2)) for doc in judged} for q, judged in qrels.items()}
    d = diagnose(qrels, runs, metric, judgements_b=judgements_b, pool_depth=depth, trials=5)
    assert d.order is not None
    means_a = [eb.evaluate(qrels, run, metric)[metric] for run in runs.values()]
    means_b = [eb.evaluate(judgements_b, run, metric)[metric] for run in runs.values()]
    assert list(d.means) == pytest.approx(means_a, abs=1e-12)
    assert list(d.order.means_b) == pytest.approx(means_b, abs=1e-12)
    # means equal but for floating-point rounding tie (12 significant digits), as system_order says
    means_a, means_b = ([float(f"{m:.12g}") for m in means] for means in (means_a, means_b))
    expected = kendalltau(means_a, means_b).statistic
    assert (math.isnan(d.order.kendall_tau) and math.isnan(expected)) or d.order.kendall_tau == pytest.approx(expected)
    if len(set(means_a)) == len(means_a) and len(set(means_b)) == len(means_b):
        assert d.order.tau_ap == pytest.approx(yilmaz(means_a, means_b), abs=1e-12)
    tops = diagnose(qrels, from_runs(runs, 4), metric if "@" in metric else f"{metric}@4", judgements_b=judgements_b,
                    pool_depth=depth, trials=5)
    cut = [eb.evaluate(judgements_b, run, tops.metric)[tops.metric] for run in runs.values()]
    assert tops.order is not None and list(tops.order.means_b) == pytest.approx(cut, abs=1e-12)


def test_the_order_under_two_judgement_sets_says_whether_the_ship_decision_depends_on_the_judge() -> None:
    qrels, runs = _known_bias()
    same = meanings(diagnose(qrels, runs, "P@1", judgements_b=qrels, trials=5))["order"]
    assert "tau 1.000" in same and "order the systems alike" in same
    flipped = {q: {doc: (1 if g == 0 else 0) for doc, g in judged.items()} for q, judged in qrels.items()}
    d = diagnose(qrels, runs, "P@1", judgements_b=flipped, trials=5)
    assert d.order is not None and d.order.kendall_tau < 0.9
    assert "best system differs" in meanings(d)["order"]


def test_the_diagnosis_shows_itself_in_every_table_format_with_names_escaped() -> None:
    from evalbridge.views.formats import output_formats

    qrels, runs = _known_bias()
    name = "<b>|x\n%"
    runs = {name if n == "explorer" else n: run for n, run in runs.items()}
    d = diagnose(qrels, runs, "AP", pool_depth=3, judgements_b=qrels, trials=10)
    formats = [f for f, shown in output_formats().items() if shown.table is not None]
    assert {"terminal", "markdown", "latex", "html"} <= set(formats)
    for fmt in formats:
        text = d.table(fmt)
        assert name not in text and "Kendall" in text and "pool bias" in text, fmt
        assert output_formats()[fmt].escape(name) in text, fmt
    assert "&lt;b&gt;|x" in d.table("html") and "<b>|x" not in d.table("html")
    assert "\\|x" in d.to_markdown() and "\\%" in d.table("latex")
    assert json.loads(d.table("json"))["order"]["kendall_tau"] == 1.0
    assert str(d) == d.table("terminal")


def test_every_finding_says_what_it_means_for_the_decision() -> None:
    qrels, runs = _known_bias()
    d = diagnose(qrels, runs, "AP", pool_depth=3, trials=20)
    said = meanings(d)
    assert set(said) == {"discriminative_power", "swap", "pool_bias", "saturation", "judged"}
    with_b = meanings(diagnose(qrels, runs, "AP", pool_depth=3, trials=20, judgements_b=qrels))
    assert set(with_b) == set(said) | {"agreement", "order"}
    said = with_b
    assert "explorer" in said["pool_bias"]
    assert all(text.count(". ") == 0 and text.endswith(".") for text in said.values())  # one sentence each
    assert "explorer" in str(d)


def test_top_lists_give_the_numbers_of_the_runs_themselves() -> None:
    qrels, runs = _known_bias()
    direct = diagnose(qrels, runs, "nDCG@3", pool_depth=3, trials=50)
    tops = from_runs(runs, 3)
    assert diagnose(qrels, tops, "nDCG@3", pool_depth=3, trials=50) == direct
    with pytest.raises(InputError, match="cut-off of at most 3"):
        diagnose(qrels, tops, "AP")


def test_runs_given_as_arrays_keep_the_first_documents_in_rank_order_with_ties_by_doc_id() -> None:
    doc_ids = pa.array(["a", "b", "c", "d"])
    docs = np.array([[0, 1, 2, 3], [3, 2, 1, 0]])
    scores = np.array([[0.1, 0.9, 0.9, 0.5], [4.0, 3.0, 2.0, 1.0]])  # row 0 out of order, with a tie b/c
    tops = from_ranked([("x", docs, scores)], query_ids=["q1", "q2"], doc_ids=doc_ids, depth=3)
    expected = {"q1": rank({"a": 0.1, "b": 0.9, "c": 0.9, "d": 0.5})[:3], "q2": ["d", "c", "b"]}
    assert {q: list(tops["x"][q]) for q in ("q1", "q2")} == expected
    same = from_runs({"x": {"q1": {"a": 0.1, "b": 0.9, "c": 0.9, "d": 0.5}, "q2": {"d": 4, "c": 3, "b": 2, "a": 1}}}, 3)
    assert {q: list(same["x"][q]) for q in ("q1", "q2")} == expected


def test_bad_options_are_refused_with_the_fix() -> None:
    qrels, runs = _known_bias()
    with pytest.raises(InputError, match="at least two runs"):
        diagnose(qrels, {"a": runs["a"]})
    with pytest.raises(InputError, match="pool_depth"):
        diagnose(qrels, runs, pool_depth=0)
    assert diagnose(qrels, runs, ["P@1", "p@1"], trials=3).metrics == ("P@1",)   # asked again: kept once
    assert not math.isnan(diagnose(qrels, runs, "P@1", trials=3).swap.rate)


@settings(max_examples=30, deadline=None)
@given(st.composite(_collections)(), st.sampled_from(["nDCG@3", "P@2", "P(rel=2)@3", "RR@4", "AP@4", "Judged@3"]),
       st.sampled_from([None, 2]))
def test_the_first_documents_as_arrays_diagnose_as_the_runs_do(case: tuple, metric: str, level: int | None) -> None:
    qrels, runs, _ = case
    direct = diagnose(qrels, runs, metric, pool_depth=4, trials=20, min_relevance=level)
    assert diagnose(qrels, from_runs(runs, 4), metric, pool_depth=4, trials=20, min_relevance=level) == direct


QRELS_TXT = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 d 1\nq3 0 e 1\n"
RUNS_TXT = {"x.run": "q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq2 Q0 d 1 3 x\nq3 Q0 e 1 1 x\n",
            "y.run": "q1 Q0 c 1 3 y\nq1 Q0 a 2 2 y\nq2 Q0 a 1 3 y\nq2 Q0 z 2 2 y\nq3 Q0 f 1 1 y\n",
            "z.run": "q1 Q0 b 1 3 z\nq2 Q0 z 1 3 z\nq3 Q0 e 1 1 z\n"}


def test_the_command_line_says_what_the_api_says(tmp_path, monkeypatch, capsys) -> None:
    from evalbridge.cli import main

    (tmp_path / "qrels.txt").write_text(QRELS_TXT)
    for name, text in RUNS_TXT.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    api = diagnose(eb.read_qrels("qrels.txt"), {n[:-4]: eb.read_run(n) for n in RUNS_TXT}, "P@2", pool_depth=2,
                   trials=30, judgements_b=eb.read_qrels("qrels.txt"), min_relevance=1)
    code = main(["diagnose", "qrels.txt", *RUNS_TXT, "-m", "P@2", "--pool-depth", "2", "--trials", "30",
                 "--judgements-b", "qrels.txt", "--min-relevance", "1", "--format", "json"])
    shown = json.loads(capsys.readouterr().out)
    assert code == 0
    assert shown.pop("meanings") == meanings(api)
    assert shown == json.loads(json.dumps(api.to_dict()))


@pytest.mark.parametrize("argv, said", [
    (["diagnose", "qrels.txt", "x.run"], "at least two runs"),
    (["diagnose", "qrels.txt", "x.run", "y.run", "-m", "P@"], "cannot parse metric"),
    (["diagnose", "qrels.txt", "x.run", "missing.run"], "missing.run"),
    (["diagnose", "qrels.txt", "x.run", "y.run", "--pool-depth", "0"], "--pool-depth must be"),
    (["diagnose", "qrels.txt", "x.run", "y.run", "-o", "x.run"], "x.run"),
])
def test_bad_input_at_the_command_line_is_exit_2_without_a_traceback(tmp_path, monkeypatch, capsys, argv: list,
                                                                      said: str) -> None:
    from evalbridge.cli import main

    (tmp_path / "qrels.txt").write_text(QRELS_TXT)
    for name, text in RUNS_TXT.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err
    assert (tmp_path / "x.run").read_text() == RUNS_TXT["x.run"]


def test_a_label_on_the_diagnosed_metric_is_refused_at_the_command_line_as_in_a_config(tmp_path, monkeypatch,
                                                                                       capsys) -> None:
    from evalbridge.cli import main
    from evalbridge.config import load_config

    (tmp_path / "qrels.txt").write_text(QRELS_TXT)
    for name, text in RUNS_TXT.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "c.yaml").write_text("qrels: qrels.txt\nruns: {x: x.run, y: y.run}\nmetrics: [P@2]\n"
                                     "diagnose: {metric: p2=P@2}\n")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="cannot parse metric 'p2=P@2'"):
        load_config(tmp_path / "c.yaml")
    assert main(["diagnose", "qrels.txt", "x.run", "y.run", "-m", "p2=P@2"]) == 2
    captured = capsys.readouterr()
    assert "--metrics: cannot parse metric 'p2=P@2'" in captured.err and "Fix:" in captured.err
    assert captured.out == ""


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 5), st.data())
def test_runs_read_as_arrays_keep_what_ranking_the_runs_keeps(n_systems: int, n_queries: int, depth: int,
                                                              data: st.DataObject) -> None:
    doc_ids = pa.array([f"d{i}" for i in range(9)])
    arrays, dicts = [], {}
    for s in range(n_systems):
        width = data.draw(st.integers(1, 6))
        docs = np.array([data.draw(st.permutations(range(9)))[:width] for _ in range(n_queries)])
        scores = np.array(data.draw(st.lists(st.lists(st.integers(0, 3).map(float), min_size=width, max_size=width),
                                             min_size=n_queries, max_size=n_queries)))
        arrays.append((f"s{s}", docs, scores))
        dicts[f"s{s}"] = {f"q{q}": {f"d{d}": sc for d, sc in zip(docs[q], scores[q])} for q in range(n_queries)}
    tops = from_ranked(arrays, query_ids=[f"q{q}" for q in range(n_queries)], doc_ids=doc_ids, depth=depth)
    for name, run in dicts.items():
        assert {q: list(tops[name][q]) for q in run} == {q: rank(scores)[:depth] for q, scores in run.items()}
    same = from_runs(dicts, depth)
    assert sorted(zip(tops.pairs.codes().tolist(), tops.pairs.docs.to_pylist())) == \
        sorted(zip(same.pairs.codes().tolist(), same.pairs.docs.to_pylist()))


@pytest.mark.parametrize("value, word", [(1.0, "perfect"), (0.95, "almost perfect"), (0.8, "almost perfect"),
                                         (0.7, "substantial"), (0.5, "moderate"), (0.3, "fair"), (0.1, "slight"),
                                         (-0.1, "worse than chance")])
def test_kappa_and_alpha_are_worded_by_one_scale_where_one_is_perfect(value: float, word: str) -> None:
    """Landis & Koch's words, 1.0 alone perfect (a kappa of 1.000 was called 'substantial')."""
    from evalbridge.views.agreement_tables import agreement_word

    assert agreement_word(value) == word


def test_identical_judgements_agree_perfectly_in_the_diagnosis_and_the_agreement_table() -> None:
    """The same judgements twice: kappa and alpha 1, worded 'perfect' in the diagnosis and in agree's table."""
    qrels, runs = _known_bias()
    said = meanings(diagnose(qrels, runs, "P@1", judgements_b=qrels, trials=5))["agreement"]
    assert "kappa 1.000" in said and "(perfect agreement, 1 being perfect)" in said and "substantial" not in said
    table = eb.agree(qrels, qrels).judges.table()
    assert "1.0000 (perfect)" in table and "substantial" not in table


def test_power_gates_and_the_diagnosis_name_one_smallest_decidable_difference() -> None:
    """The diagnosis's decision threshold is power's minimum detectable effect (the median over the pairs), in
    the same words as power's table and an inconclusive gate; its swap-rate sentence speaks of halves and reads
    the decision against that threshold (it said 'a difference under 0.1 should not decide' where power said 0.049)."""
    import numpy as np

    from evalbridge.decisions.gates import evaluate_noise_gate, parse_gate
    from evalbridge.views.power_view import DECIDABLE

    rng = np.random.default_rng(5)
    n = 60
    qrels = {f"q{i}": {f"d{j}": int(rng.random() < 0.4) for j in range(12)} for i in range(n)}
    runs = {name: {q: {f"d{j}": float(rng.random() + bias * qrels[q][f"d{j}"]) for j in range(12)} for q in qrels}
            for name, bias in (("bm25", 0.0), ("dense", 0.3), ("hybrid", 0.6))}
    d = diagnose(qrels, runs, "nDCG@10", trials=50)
    results = {name: eb.evaluate(qrels, run, "nDCG@10") for name, run in runs.items()}
    analysis = eb.power(results, ["nDCG@10"])
    assert d.detectable == pytest.approx(float(np.median([r.mde for r in analysis.rows])), rel=1e-12)
    said = meanings(d)["swap"]
    assert f"{DECIDABLE} is {d.detectable:.4f}" in said and "of half the queries each" in said
    assert DECIDABLE in str(analysis)
    gate = evaluate_noise_gate(parse_gate("nDCG@10", ">= baseline - 0.01 at 95%"), "dense",
                               [0.2, -0.3, 0.1, -0.1, 0.1] * 4, baseline_mean=0.5)
    assert gate.inconclusive and f"{DECIDABLE} is {gate.detectable:.4f} from the margin" in gate.reason
