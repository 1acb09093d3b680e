"""eb.diagnose and eb.uncertain through their three doors: the Python API, the command line (evalbridge diagnose /
uncertain) and a config run (diagnose: / uncertain: sections of evalbridge run) give the same numbers; a config's
mistakes are refused with the key, the line and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalbridge as eb
from doors import cli

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 2\nq2 0 a 1\nq2 0 d 1\nq3 0 e 1\nq4 0 g 1\nq4 0 a 0\n"
QRELS_B = "q1 0 a 0\nq1 0 b 1\nq1 0 c 2\nq2 0 a 1\nq2 0 d 0\nq3 0 e 1\nq4 0 g 0\nq4 0 a 1\n"
PROBABILITIES = "q1 0 a 0.9\nq1 0 b 0.2\nq1 0 c 0.6\nq2 0 a 0.5\nq2 0 d 0.7\nq3 0 e 1\nq4 0 g 0.4\n"
RUNS = {"x.run": "q1 Q0 a 1 3 x\nq1 Q0 b 2 2 x\nq2 Q0 d 1 3 x\nq3 Q0 e 1 1 x\nq4 Q0 g 1 2 x\n",
        "y.run": "q1 Q0 c 1 3 y\nq1 Q0 a 2 2 y\nq2 Q0 a 1 3 y\nq2 Q0 z 2 2 y\nq3 Q0 f 1 1 y\nq4 Q0 a 1 2 y\n",
        "z.run": "q1 Q0 b 1 3 z\nq2 Q0 z 1 3 z\nq3 Q0 e 1 1 z\nq4 Q0 g 1 3 z\nq4 Q0 a 2 2 z\n"}


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in {"qrels.txt": QRELS, "qrels_b.txt": QRELS_B, "p.txt": PROBABILITIES, **RUNS}.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _config(folder: Path, **sections: object) -> str:
    config = {"qrels": "qrels.txt", "runs": {name[:-4]: name for name in RUNS}, "metrics": ["p@2"],
              "min_relevance": 1, "seed": 3, **sections}
    (folder / "eval.yaml").write_text(json.dumps(config))  # JSON is YAML
    return "eval.yaml"


def _run_json(folder: Path, **sections: object) -> dict:
    code, out, err = cli("run", _config(folder, **sections), "--no-write", "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _json(value: object) -> object:
    return json.loads(json.dumps(value))


def test_diagnose_gives_the_same_numbers_through_the_api_the_command_line_and_a_config(folder: Path) -> None:
    from evalbridge.views.diagnosis import meanings

    runs = {name[:-4]: eb.read_run(name) for name in RUNS}
    api = eb.diagnose(eb.read_qrels("qrels.txt"), runs, "p@2", judgements_b=eb.read_qrels("qrels_b.txt"),
                      pool_depth=2, trials=40, seed=3, min_relevance=1)
    code, out, err = cli("diagnose", "qrels.txt", *RUNS, "-m", "p@2", "--pool-depth", "2", "--trials", "40",
                         "--judgements-b", "qrels_b.txt", "--seed", "3", "--min-relevance", "1", "--format", "json")
    assert code == 0, err
    shown = {**api.to_dict(), "meanings": meanings(api)}
    assert json.loads(out) == _json(shown)
    report = _run_json(folder, diagnose={"pool_depth": 2, "trials": 40, "judgements_b": "qrels_b.txt"})
    assert report["diagnosis"] == _json(shown)
    assert api.metric == "P@2" and api.order is not None and api.agreement is not None


def test_diagnose_in_a_config_takes_the_first_metric_and_the_defaults_of_the_api(folder: Path) -> None:
    runs = {name[:-4]: eb.read_run(name) for name in RUNS}
    api = eb.diagnose(eb.read_qrels("qrels.txt"), runs, "P@2", seed=3, min_relevance=1)
    shown = _run_json(folder, diagnose=True)["diagnosis"]
    assert shown.pop("meanings") and shown == _json(api.to_dict())


@pytest.mark.parametrize("labels", ["judges", "probabilities"])
def test_uncertain_gives_the_same_numbers_through_the_api_the_command_line_and_a_config(folder: Path,
                                                                                       labels: str) -> None:
    from evalbridge.views.uncertainty import meaning

    given = {"judges": {"ann": eb.read_qrels("qrels.txt"), "bob": eb.read_qrels("qrels_b.txt")}} \
        if labels == "judges" else {"probabilities": eb.read_qrels("p.txt")}
    api = eb.uncertain(eb.read_run("x.run"), "p@2", system="x", n_resamples=500, draws=30, seed=3, min_relevance=1,
                       **given)
    flags = ["--judges", "qrels.txt", "qrels_b.txt"] if labels == "judges" else ["--probabilities", "p.txt"]
    code, out, err = cli("uncertain", "x.run", "-m", "p@2", *flags, "--n-resamples", "500", "--draws", "30",
                         "--seed", "3", "--min-relevance", "1", "--format", "json")
    assert code == 0, err
    shown = {**api.to_dict(), "meaning": meaning(api)}
    cli_shown = json.loads(out)
    if labels == "judges":  # the command line names each judge after its file
        cli_shown["labellings"] = ["ann", "bob"]
    assert cli_shown == _json(shown)
    section = {"judges": {"ann": "qrels.txt", "bob": "qrels_b.txt"}} if labels == "judges" else \
        {"probabilities": "p.txt"}
    report = _run_json(folder, uncertain={**section, "runs": ["x"], "n_resamples": 500, "draws": 30})
    assert report["uncertainty"] == {"x": _json(shown)}


def test_a_config_run_shows_the_diagnosis_and_the_uncertainty_in_every_report_format(folder: Path) -> None:
    """Every report format shows both sections (a CSV report folder holds them as files of their own)."""
    from evalbridge.views.formats import report_formats

    sections = {"diagnose": {"pool_depth": 2, "trials": 20, "judgements_b": "qrels_b.txt"},
                "uncertain": {"judges": {"ann": "qrels.txt", "bob": "qrels_b.txt"}, "n_resamples": 200}}
    _config(folder, **sections)
    for fmt in report_formats():
        if fmt == "csv":
            code, _, err = cli("run", "eval.yaml", "--output-dir", "out", "-q")
            assert code == 0, err
            written = {path.name: path.read_text() for path in (folder / "out").glob("*.csv")}
            assert "Kendall" in written["diagnosis_findings.csv"] and "widening" in written["uncertainty.csv"]
            # at full precision: the numbers of the JSON report, not the 4 digits of the text tables
            import pandas as pd

            data = json.loads((folder / "out" / "report.json").read_text())
            systems = pd.read_csv(folder / "out" / "diagnosis_systems.csv")
            assert list(systems["mean"]) == data["diagnosis"]["means"]
            assert list(systems["mean_b"]) == data["diagnosis"]["order"]["means_b"]
            assert len(pd.read_csv(folder / "out" / "diagnosis_swaps.csv")) == len(data["diagnosis"]["swap"]["bins"])
            measured = pd.read_csv(folder / "out" / "uncertainty.csv")
            assert list(measured["expected"]) == [u["expected"] for u in data["uncertainty"].values()]
            continue
        code, out, err = cli("run", "eval.yaml", "--no-write", "--format", fmt)
        assert code == 0, err
        assert "Kendall" in out and "widen" in out, fmt


@pytest.mark.parametrize("sections, said", [
    ({"diagnose": {"pool_depth": 0}}, "diagnose.pool_depth"),
    ({"diagnose": {"test": "anova"}}, "diagnose.test"),
    ({"diagnose": {"metric": {"P@2": "AP"}}}, "a metric (a spec such as nDCG@10) or a list"),
    ({"diagnose": {"metric": []}}, "or a list of them"),
    ({"diagnose": {"judgements_b": "missing.txt"}}, "missing.txt"),
    ({"diagnose": {"depth": 3}}, "pool_depth"),
    ({"uncertain": {"judges": {"ann": "qrels.txt", "bob": "qrels_b.txt"}, "probabilities": "p.txt"}},
     "not both and not neither"),
    ({"uncertain": {"judges": {"ann": "qrels.txt"}}}, "several judges"),
    ({"uncertain": {"probabilities": "p.txt", "runs": ["w"]}}, "unknown run 'w'"),
    ({"uncertain": {"probabilities": "p.txt", "confidence": 2}}, "uncertain.confidence"),
    ({"changed": {"metrics": ["P@2"]}}, "the judgements before"),
    ({"changed": {"before": "qrels_b.txt", "test": "anova"}}, "changed.test"),
    ({"changed": {"before": "qrels_b.txt", "alpha": 2}}, "changed.alpha"),
    ({"changed": {"before": "missing.txt"}}, "missing.txt"),
    ({"changed": {"before": "qrels_b.txt", "k": 3}}, "k"),
])
def test_a_config_that_asks_a_diagnosis_wrongly_is_refused_with_the_key_and_the_fix(folder: Path, sections: dict,
                                                                                  said: str) -> None:
    code, out, err = cli("run", _config(folder, **sections), "--no-write")
    assert code == 2 and said in err and "eval.yaml" in err and "Traceback" not in err, err


def test_a_diagnosis_needs_two_runs_and_one_set_of_judgements(folder: Path) -> None:
    (folder / "one.yaml").write_text(json.dumps({"qrels": "qrels.txt", "runs": {"x": "x.run"}, "metrics": ["P@2"],
                                                 "diagnose": True}))
    code, _, err = cli("run", "one.yaml", "--no-write")
    assert code == 2 and "at least two runs" in err and "one.yaml:" in err


@pytest.mark.parametrize("key, value", [("pool_depth", 0), ("trials", 0), ("alpha", 1.5), ("correction", "none!")])
def test_the_three_doors_refuse_a_bad_option_of_the_diagnosis_with_the_same_rule(folder: Path, key: str,
                                                                                 value: object) -> None:
    from evalbridge.errors import InputError

    runs = {name[:-4]: eb.read_run(name) for name in RUNS}
    with pytest.raises(InputError) as refused:
        eb.diagnose(eb.read_qrels("qrels.txt"), runs, "P@2", **{key: value})
    rule = str(refused.value).split(" Fix: ")[0]
    flag = f"--{key.replace('_', '-')}"
    code, _, err = cli("diagnose", "qrels.txt", *RUNS, "-m", "P@2", flag, value)
    assert code == 2 and rule.replace(key, flag, 1) in err, err  # the command line names the flag typed
    code, _, err = cli("run", _config(folder, diagnose={key: value}), "--no-write")
    assert code == 2 and rule in err and f"diagnose.{key}" in err, err


def test_diagnose_takes_several_metrics_each_as_it_is_alone_at_every_door(folder: Path) -> None:
    """diagnose(..., [m1, m2]) holds each metric's diagnosis with the numbers it has alone; -m m1 m2 and a config's
    diagnose: {metric: [m1, m2]} give the same JSON; the tables and frames carry a metric column."""
    from evalbridge.views.diagnosis import diagnosis_data

    runs = {name[:-4]: eb.read_run(name) for name in RUNS}
    qrels, other = eb.read_qrels("qrels.txt"), eb.read_qrels("qrels_b.txt")
    options = dict(judgements_b=other, pool_depth=2, trials=40, seed=3, min_relevance=1)
    both = eb.diagnose(qrels, runs, ["p@2", "nDCG@3"], **options)
    assert both.metrics == ("P@2", "nDCG@3")
    for metric in ("P@2", "nDCG@3"):
        assert both[metric] == eb.diagnose(qrels, runs, metric, **options)
    with pytest.raises(eb.InputError, match=r"no diagnosis of 'AP'; the metrics diagnosed are P@2, nDCG@3\."):
        both["AP"]
    frame = both.to_frame()
    assert list(frame.columns[:2]) == ["metric", "system"] and list(frame["metric"].unique()) == ["P@2", "nDCG@3"]
    text = both.table("markdown")
    assert "| metric " in text and "(nDCG@3)" in text and "(P@2)" in text
    code, out, err = cli("diagnose", "qrels.txt", *RUNS, "-m", "p@2", "-m", "nDCG@3", "--pool-depth", "2", "--trials",
                         "40", "--judgements-b", "qrels_b.txt", "--seed", "3", "--min-relevance", "1", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == _json(diagnosis_data(both))
    report = _run_json(folder, diagnose={"metric": ["p@2", "nDCG@3"], "pool_depth": 2, "trials": 40,
                                         "judgements_b": "qrels_b.txt"})
    assert report["diagnosis"] == _json(diagnosis_data(both))


def test_uncertain_takes_several_metrics_each_as_it_is_alone_at_every_door(folder: Path) -> None:
    from evalbridge.views.uncertainty import uncertainty_data

    run, given = eb.read_run("x.run"), {"probabilities": eb.read_qrels("p.txt")}
    options = dict(system="x", n_resamples=500, draws=30, seed=3, min_relevance=1, **given)
    both = eb.uncertain(run, ["p@2", "P@1", "P@2"], **options)
    assert both.metrics == ("P@2", "P@1")                               # asked again: kept once
    assert both["P@1"] == eb.uncertain(run, "P@1", **options) and both["p@2"] == eb.uncertain(run, "P@2", **options)
    with pytest.raises(eb.InputError, match=r"no measurement of 'p@3'; the metrics measured are P@2, P@1\."):
        both["p@3"]
    assert both.table("markdown").count("| x ") == 2
    code, out, err = cli("uncertain", "x.run", "-m", "p@2", "P@1", "--probabilities", "p.txt", "--n-resamples", "500",
                         "--draws", "30", "--seed", "3", "--min-relevance", "1", "--format", "json")
    assert code == 0, err
    assert json.loads(out) == _json(uncertainty_data(both))
    report = _run_json(folder, uncertain={"probabilities": "p.txt", "metric": ["p@2", "P@1"], "runs": ["x"],
                                          "n_resamples": 500, "draws": 30})
    assert report["uncertainty"] == {"x": _json(uncertainty_data(both))}
