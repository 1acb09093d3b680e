"""The command line names systems as a config's ``runs:`` does: ``NAME=PATH`` for each run and in ``--baseline``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from doors import cli

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq2 0 d4 1\nq3 0 d5 1\n"
#: bm25: P@1 = (1 + 1 + 0) / 3; dense: (0 + 1 + 1) / 3; RR: bm25 (1 + 1 + 1/2) / 3, dense (1/2 + 1 + 1) / 3
BM25 = "q1 Q0 d1 1 2 x\nq1 Q0 d2 2 1 x\nq2 Q0 d3 1 2 x\nq2 Q0 d9 2 1 x\nq3 Q0 d8 1 3 x\nq3 Q0 d5 2 1 x\n"
DENSE = "q1 Q0 d2 1 2 y\nq1 Q0 d1 2 1 y\nq2 Q0 d3 1 2 y\nq2 Q0 d4 2 1 y\nq3 Q0 d5 1 3 y\n"


@pytest.fixture()
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.bm25.top100").write_text(BM25)
    (tmp_path / "dense.txt").write_text(DENSE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _report(*argv: str) -> dict:
    code, out, err = cli(*argv, "--format", "json")
    assert code == 0, err
    return json.loads(out)


def _decisions(report: dict) -> list[tuple[str, str, str, float]]:
    return [(row["metric"], row["system"], row["baseline"], row["delta"]) for row in report["comparison"]["rows"]]


def test_named_runs_and_baseline_are_the_configs_runs_and_baseline(folder: Path) -> None:
    """`eval qrels bm25=run.bm25.top100 dense=dense.txt --baseline bm25` == a config's runs: {bm25, dense} with
    comparison.baseline: bm25 == eb.compare(..., baseline="bm25"): the same names, means and differences."""
    import evalbridge as eb

    argv = ("-m", "P@1", "RR", "--n-resamples", "200")
    by_cli = _report("eval", "qrels.txt", "bm25=run.bm25.top100", "dense=dense.txt", "--baseline", "bm25", *argv)
    (folder / "eval.yaml").write_text(json.dumps({
        "qrels": "qrels.txt", "runs": {"bm25": "run.bm25.top100", "dense": "dense.txt"}, "metrics": ["P@1", "RR"],
        "comparison": {"baseline": "bm25", "n_resamples": 200}}))
    by_config = _report("run", "eval.yaml", "--no-write")
    qrels = eb.read_qrels("qrels.txt")
    runs = {"bm25": eb.read_run("run.bm25.top100"), "dense": eb.read_run("dense.txt")}
    by_api = eb.compare(qrels, runs, ["P@1", "RR"], baseline="bm25", n_resamples=200)
    assert list(by_cli["systems"]) == list(by_config["systems"]) == ["bm25", "dense"]
    assert by_cli["systems"] == by_config["systems"]
    assert by_cli["systems"]["bm25"]["metrics"] == pytest.approx({"P@1": 2 / 3, "RR": 2.5 / 3})
    assert by_cli["systems"]["dense"]["metrics"] == pytest.approx({"P@1": 2 / 3, "RR": 2.5 / 3})
    assert _decisions(by_cli) == _decisions(by_config) == [
        (row.metric, row.system, row.baseline, row.delta) for row in by_api.rows]
    assert {row[2] for row in _decisions(by_cli)} == {"bm25"}


def test_a_bare_path_is_named_after_its_file_and_baseline_takes_that_name_or_the_path(folder: Path) -> None:
    named = _report("eval", "qrels.txt", "run.bm25.top100", "dense.txt", "-m", "P@1", "--baseline", "run.bm25")
    by_path = _report("eval", "qrels.txt", "run.bm25.top100", "dense.txt", "-m", "P@1", "--baseline", "run.bm25.top100")
    assert list(named["systems"]) == ["run.bm25", "dense"]
    assert _decisions(named) == _decisions(by_path)
    assert {row[2] for row in _decisions(named)} == {"run.bm25"}


def test_baseline_name_equals_path_adds_the_baseline_run_first(folder: Path) -> None:
    report = _report("eval", "qrels.txt", "dense.txt", "-m", "P@1", "--baseline", "bm25=run.bm25.top100")
    assert list(report["systems"]) == ["bm25", "dense"]
    assert {(row[1], row[2]) for row in _decisions(report)} == {("dense", "bm25")}


@pytest.mark.parametrize("command", ["check", "diff", "power", "tiers", "diagnose", "changed", "pool", "agree",
                                     "uncertain", "convert"])
def test_every_command_that_takes_runs_takes_name_equals_path(folder: Path, command: str) -> None:
    """The name NAME=PATH gives is the system's name in what the command shows (and a file is never looked up as
    'bm25=run.bm25.top100')."""
    runs = ["bm25=run.bm25.top100", "dense=dense.txt"]
    argv = {"check": ["check", "qrels.txt", runs[0], "-m", "P@1", "--format", "json"],
            "diff": ["diff", "qrels.txt", *runs, "-m", "P@1", "--format", "json"],
            "power": ["power", "qrels.txt", *runs, "-m", "P@1", "--format", "json"],
            "tiers": ["tiers", "qrels.txt", *runs, "-m", "P@1", "--n-resamples", "50", "--format", "json"],
            "diagnose": ["diagnose", "qrels.txt", *runs, "-m", "P@1", "--trials", "10", "--n-resamples", "50",
                         "--format", "json"],
            "changed": ["changed", "qrels.txt", "qrels.txt", *runs, "-m", "P@1", "--n-resamples", "50", "--format",
                        "json"],
            "pool": ["pool", "qrels.txt", *runs, "--depth", "2", "--format", "json"],
            "agree": ["agree", "qrels.txt", "qrels.txt", *runs, "--n-resamples", "50", "--format", "json"],
            "uncertain": ["uncertain", runs[0], "-m", "P@1", "--judges", "qrels.txt", "qrels.txt",
                          "--n-resamples", "50", "--format", "json"],
            "convert": ["convert", runs[0], "out.txt"]}[command]
    code, out, err = cli(*argv)
    assert code == 0, err
    shown = (folder / "out.txt").read_text() if command == "convert" else out
    assert "bm25" in shown and "run.bm25" not in shown.replace("run.bm25.top100", "")


def test_two_runs_given_one_name_are_refused(folder: Path) -> None:
    code, _, err = cli("eval", "qrels.txt", "a=run.bm25.top100", "a=dense.txt", "-m", "P@1")
    assert code == 2
    assert "two runs are named 'a'" in err and "Fix:" in err


def test_an_unknown_baseline_name_is_refused_with_the_names_there_are(folder: Path) -> None:
    code, _, err = cli("eval", "qrels.txt", "bm25=run.bm25.top100", "dense=dense.txt", "-m", "P@1", "--baseline", "bm2")
    assert code == 2
    assert "--baseline" in err and "'bm25'" in err


def test_a_file_whose_name_holds_equals_stays_a_path(folder: Path) -> None:
    (folder / "k=10.run").write_text(BM25)
    report = _report("eval", "qrels.txt", "k=10.run", "-m", "P@1")
    assert list(report["systems"]) == ["k=10"]


def test_a_named_qrels_is_refused(folder: Path) -> None:
    code, _, err = cli("eval", "gold=qrels.txt", "dense.txt", "-m", "P@1")
    assert code == 2 and "the first input is the qrels" in err
