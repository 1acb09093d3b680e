"""``Statistics``: one frozen value decides the tests and intervals, whole or as keywords, at every door."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.stats.statistics import ROWS, Statistics, statistics_of

QRELS = {f"q{i}": {"d1": 1, "d2": int(i % 3 == 0), "d3": 0} for i in range(9)}
RUNS = {"a": {q: {"d3": 0.9, "d1": 0.5, "d2": 0.1} for q in QRELS},
        "b": {q: {"d1": 0.9, "d2": 0.8 if int(q[1:]) % 2 else 0.05, "d3": 0.1} for q in QRELS}}

options = st.fixed_dictionaries({}, optional={
    "test": st.sampled_from(["t", "randomization", "wilcoxon"]),
    "correction": st.sampled_from(["holm", "bh", "bonferroni", "none"]),
    "alpha": st.sampled_from([0.01, 0.05, 0.1]),
    "confidence": st.sampled_from([0.9, 0.95]),
    "n_resamples": st.integers(20, 200),
    "seed": st.integers(0, 5),
    "ci_method": st.sampled_from(["BCa", "percentile"]),
})


@settings(max_examples=25, deadline=None)
@given(options)
def test_the_value_whole_and_its_keywords_give_the_same_comparison(chosen: dict) -> None:
    whole = eb.compare(QRELS, RUNS, ["P@1", "RR"], baseline="a", statistics=eb.Statistics(**chosen))
    loose = eb.compare(QRELS, RUNS, ["P@1", "RR"], baseline="a", **chosen)
    assert whole.to_dict() == loose.to_dict()


@settings(max_examples=15, deadline=None)
@given(options)
def test_keywords_beside_the_value_replace_its_fields(chosen: dict) -> None:
    base = Statistics(test="wilcoxon", n_resamples=77, alpha=0.2)
    assert statistics_of(base, chosen) == Statistics(**{**base.to_dict(), **chosen})


def test_a_bad_value_is_refused_with_one_message_at_every_door(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"alpha must be a number in \(0, 1\); got 1.5"):
        eb.Statistics(alpha=1.5)
    with pytest.raises(InputError, match=r"alpha must be a number in \(0, 1\); got 1.5"):
        eb.compare(QRELS, RUNS, ["P@1"], baseline="a", alpha=1.5)
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items()
                                                for d, g in docs.items()))
    for name, run in RUNS.items():
        (tmp_path / f"{name}.run").write_text("".join(f"{q} Q0 {d} {r} {s} x\n" for q, docs in run.items()
                                                      for r, (d, s) in enumerate(docs.items(), 1)))
    (tmp_path / "c.yaml").write_text("qrels: qrels.txt\nruns: {a: a.run, b: b.run}\nmetrics: [P@1]\n"
                                     "comparison: {baseline: a, alpha: 1.5}\n")
    with pytest.raises(InputError, match=r"c.yaml:4: comparison.alpha must be a number in \(0, 1\); got 1.5"):
        eb.load_config(tmp_path / "c.yaml")
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "eval", "qrels.txt", "a.run", "b.run", "-m", "P@1",
                          "--baseline", "a", "--alpha", "1.5"], cwd=tmp_path, capture_output=True, text=True)
    assert cli.returncode == 2 and "--alpha must be a number in (0, 1); got 1.5" in cli.stderr


def test_the_three_doors_give_the_same_comparison(tmp_path: Path) -> None:
    chosen = {"test": "randomization", "correction": "bh", "alpha": 0.1, "n_resamples": 300, "seed": 3}
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items()
                                                for d, g in docs.items()))
    for name, run in RUNS.items():
        (tmp_path / f"{name}.run").write_text("".join(f"{q} Q0 {d} {r} {s} x\n" for q, docs in run.items()
                                                      for r, (d, s) in enumerate(docs.items(), 1)))
    api = eb.compare(tmp_path / "qrels.txt", {"a": tmp_path / "a.run", "b": tmp_path / "b.run"}, ["P@1", "RR"],
                     baseline="a", statistics=eb.Statistics(**chosen)).to_dict()
    (tmp_path / "c.yaml").write_text("qrels: qrels.txt\nruns: {a: a.run, b: b.run}\nmetrics: [P@1, RR]\nseed: 3\n"
                                     "comparison: {baseline: a, test: randomization, correction: bh, alpha: 0.1, "
                                     "n_resamples: 300}\n")
    config = eb.run_config(eb.load_config(tmp_path / "c.yaml"), write=False).report.comparison.to_dict()
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in chosen.items()]
    cli = subprocess.run([sys.executable, "-m", "evalbridge", "eval", "qrels.txt", "a.run", "b.run", "-m", "P@1",
                          "-m", "RR", "--baseline", "a", "--format", "json", *flags], cwd=tmp_path,
                         capture_output=True, text=True, check=True)
    shown = json.loads(cli.stdout)["comparison"]
    for got in (config, shown):
        assert [(r["metric"], r["delta"], r["p_randomization"], r["p_adjusted"]) for r in got["rows"]] == \
            [(r["metric"], r["delta"], r["p_randomization"], r["p_adjusted"]) for r in api["rows"]]


def test_every_flag_of_the_statistics_is_generated_from_its_row() -> None:
    out = subprocess.run([sys.executable, "-m", "evalbridge", "eval", "--help"], capture_output=True, text=True,
                         check=True).stdout
    for name in ("test", "correction", "alpha", "confidence", "n_resamples", "seed"):
        row = ROWS[name]
        assert row.flag in out
        assert " ".join(row.help.split()[:3]) in " ".join(out.split())


def test_an_unknown_option_is_refused_with_the_closest_name() -> None:
    with pytest.raises(InputError, match=r"unknown statistics option 'n_resample'.*did you mean 'n_resamples'"):
        statistics_of(None, {"n_resample": 10})
    with pytest.raises(InputError, match=r"statistics must be an evalbridge.Statistics"):
        eb.compare(QRELS, RUNS, ["P@1"], baseline="a", statistics={"test": "t"})  # type: ignore[arg-type]


def test_a_comparison_refuses_one_sided_tests_instead_of_ignoring_them() -> None:
    with pytest.raises(InputError, match="two-sided"):
        eb.compare(QRELS, RUNS, ["P@1"], baseline="a", sides=1)


# ---------------------------------------------------------------- every verb that tests or resamples takes it whole

AFTER = {q: {**docs, "d3": int(int(q[1:]) % 4 == 0)} for q, docs in QRELS.items()}
RUNS3 = {**RUNS, "c": {q: {"d2": 0.9, "d1": 0.4, "d3": 0.2} for q in QRELS}}
PER_QUERY = {name: eb.evaluate(QRELS, run, ["P@1", "RR"]) for name, run in RUNS3.items()}


def same(whole: object, loose: object) -> bool:
    """The two results, as their JSON (nan equal to nan)."""
    return json.dumps(whole.to_dict(), sort_keys=True, default=str) == \
        json.dumps(loose.to_dict(), sort_keys=True, default=str)  # type: ignore[attr-defined]


#: verb -> (a call taking its statistics, the options its call honours)
VERBS = {
    "power": (lambda **o: eb.power(PER_QUERY, ["P@1", "RR"], baseline="a", effect=0.1, **o),
              st.fixed_dictionaries({}, optional={"test": st.sampled_from(["t", "randomization"]),
                                                  "alpha": st.sampled_from([0.01, 0.05, 0.1]),
                                                  "sides": st.sampled_from([1, 2])})),
    "diagnose": (lambda **o: eb.diagnose(QRELS, RUNS3, "P@1", trials=20, **o),
                 st.fixed_dictionaries({}, optional={"test": st.sampled_from(["t", "randomization", "wilcoxon"]),
                                                     "correction": st.sampled_from(["holm", "bh", "none"]),
                                                     "alpha": st.sampled_from([0.05, 0.1]),
                                                     "n_resamples": st.integers(20, 100),
                                                     "seed": st.integers(0, 3)})),
    "what_changed": (lambda **o: eb.what_changed(QRELS, AFTER, RUNS3, ["P@1", "RR"], **o),
                     st.fixed_dictionaries({}, optional={"test": st.sampled_from(["t", "randomization"]),
                                                         "alpha": st.sampled_from([0.05, 0.1]),
                                                         "n_resamples": st.integers(20, 100),
                                                         "seed": st.integers(0, 3)})),
    "uncertain": (lambda **o: eb.uncertain(RUNS["b"], "P@1", judges={"x": QRELS, "y": AFTER}, draws=20, **o),
                  st.fixed_dictionaries({}, optional={"confidence": st.sampled_from([0.9, 0.95]),
                                                      "n_resamples": st.integers(20, 100),
                                                      "seed": st.integers(0, 3)})),
    "ppi": (lambda **o: eb.ppi(QRELS, {q: AFTER[q] for q in list(AFTER)[:5]}, RUNS3, ["P@1"], baseline="a", **o),
            st.fixed_dictionaries({}, optional={"confidence": st.sampled_from([0.9, 0.95]),
                                                "alpha": st.sampled_from([0.05, 0.1]),
                                                "correction": st.sampled_from(["holm", "bh", "none"])})),
    "agree": (lambda **o: eb.agree(QRELS, AFTER, RUNS3, ["P@1"], **o),
              st.fixed_dictionaries({}, optional={"test": st.sampled_from(["t", "randomization"]),
                                                  "alpha": st.sampled_from([0.05, 0.1]),
                                                  "n_resamples": st.integers(20, 100),
                                                  "seed": st.integers(0, 3)})),
}


@pytest.mark.parametrize("verb", VERBS)
@settings(max_examples=6, deadline=None)
@given(data=st.data())
def test_every_verb_gives_the_same_answer_to_the_value_whole_and_to_its_keywords(verb: str, data: st.DataObject
                                                                                 ) -> None:
    call, options = VERBS[verb]
    chosen = data.draw(options)
    assert same(call(statistics=Statistics(**chosen)), call(**chosen))


@pytest.mark.parametrize("verb", VERBS)
def test_keywords_beside_the_value_replace_its_fields_in_every_verb(verb: str) -> None:
    call, _ = VERBS[verb]
    field = "confidence" if verb == "uncertain" else "alpha"
    assert same(call(statistics=Statistics(**{field: 0.2}), **{field: 0.1}), call(**{field: 0.1}))


#: verb -> (a field it cannot honour, and what its refusal says)
REFUSED = {
    "power": ({"test": "wilcoxon"}, r"power takes test = 't' or 'randomization'; got test='wilcoxon'.*no closed form"),
    "diagnose": ({"sides": 1}, r"diagnose takes sides = 2; got sides=1"),
    "what_changed": ({"correction": "bh"}, r"what_changed takes correction = 'holm'; got correction='bh'"),
    "uncertain": ({"test": "randomization"}, r"uncertain does not use test \(.*it tests nothing\); "
                                             r"got test='randomization'.*leave test at its default"),
    "ppi": ({"seed": 2}, r"ppi does not use seed \(.*without resampling\); got seed=2"),
    "agree": ({"confidence": 0.9}, r"agree does not use confidence \(.*no interval\); got confidence=0.9"),
}


@pytest.mark.parametrize("verb", VERBS)
def test_a_field_a_verb_cannot_honour_is_refused_with_the_reason(verb: str) -> None:
    call, _ = VERBS[verb]
    field, message = REFUSED[verb]
    with pytest.raises(InputError, match=message):
        call(statistics=Statistics(**field))


def test_power_refuses_what_it_would_ignore() -> None:
    call, _ = VERBS["power"]
    for field in ({"seed": 3}, {"n_resamples": 100}, {"correction": "bh"}, {"ci_method": "percentile"}):
        with pytest.raises(InputError, match=f"power does not use {next(iter(field))} .*its answer is exact"):
            call(statistics=Statistics(**field))
