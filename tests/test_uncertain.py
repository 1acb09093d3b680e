"""eb.uncertain: expected metrics under probabilities of relevance (against every labelling) and intervals with the labels."""

from __future__ import annotations

import json
from itertools import product

import pytest
from hypothesis import given, settings, strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.evalsets.uncertainty import expected_values, uncertain

METRICS = ["P@3", "R@3", "R@5", "Success@2", "RR", "RR@2", "AP", "AP@3", "nDCG@3", "nDCG"]


def _enumerated(probabilities: dict, run: dict, metric: str) -> dict[str, float]:
    """The metric averaged over every labelling of the judged documents, each weighted by its probability: the
    reference backend evaluates each labelling."""
    out = {}
    for qid, judged in probabilities.items():
        docs = list(judged)
        total = 0.0
        for labels in product((0, 1), repeat=len(docs)):
            weight = 1.0
            for doc, label in zip(docs, labels):
                weight *= judged[doc] if label else 1 - judged[doc]
            if weight == 0:
                continue
            qrels = {qid: dict(zip(docs, labels))}
            value = eb.evaluate(qrels, {qid: run.get(qid, {})}, metric, backend="reference").query(metric)[qid] \
                if run.get(qid) else 0.0
            total += weight * value
        out[qid] = total
    return out


@st.composite
def _cases(draw: st.DrawFn) -> tuple[dict, dict]:
    docs = [f"d{i}" for i in range(7)]
    probabilities, run = {}, {}
    for q in range(draw(st.integers(1, 2))):
        judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=6, unique=True))
        probabilities[f"q{q}"] = {d: draw(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.8, 1.0])) for d in judged}
        ranked = draw(st.lists(st.sampled_from(docs), min_size=0, max_size=5, unique=True))
        if ranked:
            run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    return probabilities, run


@settings(max_examples=60, deadline=None)
@given(_cases(), st.sampled_from(METRICS))
def test_the_expectation_equals_the_metric_averaged_over_every_labelling(case: tuple, metric: str) -> None:
    probabilities, run = case
    got = expected_values(probabilities, run, metric)
    want = _enumerated(probabilities, run, metric)
    assert got == pytest.approx(want, abs=1e-12)


def test_a_hand_case_of_reciprocal_rank() -> None:
    # E[RR] = 0.5 * 1 + 0.5 * 0.5 * 1/2 = 0.625
    assert expected_values({"q": {"a": 0.5, "b": 0.5}}, {"q": {"a": 2.0, "b": 1.0}}, "RR") == {"q": 0.625}


def test_certain_labels_give_the_metric_itself_and_no_label_widening() -> None:
    qrels = {f"q{i}": {"a": 1, "b": i % 2, "c": 0} for i in range(12)}
    run = {q: {"b": 3.0, "a": 2.0, "x": 1.0} for q in qrels}
    exact = eb.evaluate(qrels, run, "AP")
    u = uncertain(run, "AP", probabilities=qrels, draws=5, n_resamples=500)
    assert u.expected == pytest.approx(exact["AP"])
    assert (u.ci_low, u.ci_high) == (u.query_ci_low, u.query_ci_high)   # every draw is the same labelling


def test_judges_who_disagree_widen_the_interval_beyond_the_queries() -> None:
    queries = [f"q{i}" for i in range(30)]
    run = {q: {"a": 2.0, "b": 1.0} for q in queries}
    strict = {q: {"a": 0, "b": 1} for q in queries}
    lenient = {q: {"a": 1, "b": 1} for q in queries}
    u = uncertain(run, "P@1", judges={"strict": strict, "lenient": lenient}, n_resamples=2000, seed=1)
    assert u.expected == pytest.approx(0.5)
    assert u.query_ci_low == u.query_ci_high == 0.5     # every query is the same: the queries leave no doubt
    assert u.ci_low < 0.5 < u.ci_high
    assert "judges" in str(u)


def test_what_cannot_be_computed_is_refused_with_the_fix() -> None:
    run = {"q": {"a": 1.0}}
    with pytest.raises(InputError, match="either judges"):
        uncertain(run, "P@1")
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        uncertain(run, "P@1", probabilities={"q": {"a": 3}})
    with pytest.raises(InputError, match="expected value"):
        expected_values({"q": {"a": 0.5}}, run, "bpref")
    with pytest.raises(InputError, match="at least two"):
        uncertain(run, "P@1", judges={"one": {"q": {"a": 1}}})


def test_the_command_line_says_what_the_api_says(tmp_path, monkeypatch, capsys) -> None:
    import json

    from evalbridge.cli import main

    (tmp_path / "p.txt").write_text("q1 0 a 0.9\nq1 0 b 0.2\nq2 0 a 0.5\nq2 0 d 0.7\nq3 0 e 0.4\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq2 Q0 a 1 3 x\nq3 Q0 e 1 1 x\n")
    monkeypatch.chdir(tmp_path)
    api = uncertain(eb.read_run("r.run"), "RR", probabilities=eb.read_qrels("p.txt"), system="r", draws=30,
                    n_resamples=500)
    assert main(["uncertain", "r.run", "-m", "RR", "--probabilities", "p.txt", "--draws", "30", "--n-resamples", "500",
                 "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (shown["expected"], shown["ci_low"], shown["ci_high"]) == (api.expected, api.ci_low, api.ci_high)
    assert shown["per_query"] == dict(api.per_query)
    assert main(["uncertain", "r.run", "-m", "RR"]) == 2
    assert "either --judges" in capsys.readouterr().err


def test_the_measurement_shows_itself_in_every_table_format_with_names_escaped() -> None:
    from evalbridge.views.formats import output_formats

    run = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 2.0, "a": 1.0}, "q3": {"b": 1.0}}
    judges = {"ann": {"q1": {"a": 1, "b": 0}, "q2": {"c": 1}, "q3": {"b": 1}},
              "bob": {"q1": {"a": 0, "b": 1}, "q2": {"c": 1}, "q3": {"b": 0}}}
    name = "<b>|x\n%"
    u = uncertain(run, "P@1", judges=judges, system=name, n_resamples=200)
    formats = [f for f, shown in output_formats().items() if shown.table is not None]
    assert {"terminal", "markdown", "latex", "html"} <= set(formats)
    for fmt in formats:
        text = u.table(fmt)
        assert name not in text and output_formats()[fmt].escape(name) in text and "widen" in text, fmt
    data = json.loads(u.table("json"))
    assert data["expected"] == u.expected and data["per_query"] == dict(u.per_query) and "widen" in data["meaning"]
    assert str(u) == u.table("terminal")


def test_a_section_of_its_own_runs_is_a_config_without_qrels_and_says_what_the_api_says(tmp_path) -> None:
    from evalbridge.config import load_config
    from evalbridge.config.pipeline import run_config

    (tmp_path / "p.txt").write_text("q1 0 a 0.9\nq1 0 b 0.2\nq2 0 a 0.5\nq2 0 d 0.7\nq3 0 e 0.4\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq2 Q0 a 1 3 x\nq3 Q0 e 1 1 x\n")
    (tmp_path / "u.yaml").write_text("uncertain: {probabilities: p.txt, runs: {r: r.run}, metric: RR, draws: 30, "
                                     "n_resamples: 500}\n")
    found = run_config(load_config(tmp_path / "u.yaml"), write=False).report.analyses["uncertain"]["r"]
    api = uncertain(eb.read_run(tmp_path / "r.run"), "RR", probabilities=eb.read_qrels(tmp_path / "p.txt"),
                    system="r", draws=30, n_resamples=500)
    assert (found.expected, found.ci_low, found.ci_high) == (api.expected, api.ci_low, api.ci_high)
    (tmp_path / "w.yaml").write_text("uncertain: {probabilities: p.txt, runs: [r], metric: RR}\n")
    with pytest.raises(InputError, match="no 'runs' key.*a section that names its own runs.*uncertain:"):
        load_config(tmp_path / "w.yaml")


@pytest.mark.parametrize("runs, message", [
    ("{x: {format: labels, data: {q1: [1, 0]}}}", "runs.x: format 'labels' holds its own judgements; "),
    ("[nope]", "runs[0]: unknown run 'nope': a name in a list refers to the config's runs (r)"),
    ("bm25", "runs: expected a list of the config's runs, or runs of its own; got 'bm25'"),
])
@pytest.mark.parametrize("section", ["agreement", "uncertain"])
def test_the_runs_a_section_measures_are_read_by_one_rule_for_the_agreement_and_the_uncertainty(
        tmp_path, section: str, runs: str, message: str) -> None:
    """A run whose format holds its own judgements (their labels would be dropped without a word), an unknown name,
    a value neither a list nor a mapping: the same words under agreement: and uncertain:, at the key."""
    from evalbridge.config import load_config

    (tmp_path / "a.txt").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "b.txt").write_text("q1 0 a 0\nq1 0 b 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\n")
    judges = "judges: {a: a.txt, b: b.txt}" + (", metric: P@1" if section == "uncertain" else "")
    (tmp_path / "c.yaml").write_text(f"qrels: a.txt\nruns: {{r: r.run}}\nmetrics: [P@1]\n"
                                     f"{section}: {{{judges}, runs: {runs}}}\n")
    with pytest.raises(InputError) as caught:
        load_config(tmp_path / "c.yaml")
    assert f"{section}.{message}" in str(caught.value)
