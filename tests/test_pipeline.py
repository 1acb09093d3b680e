"""One pipeline behind every door: `eval`, `check`, `run` and `run_config` give the same report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalbridge.cli import main
from evalbridge.config import load_config
from evalbridge.config.pipeline import run_config
from evalbridge.views.formats import render

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d6 1\n"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d9 1 2.0 a\nq2 Q0 d4 2 1.0 a\nq3 Q0 d6 1 1.0 a\n"
RUN_B = "q1 Q0 d3 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq2 Q0 d4 1 2.0 b\nq2 Q0 d5 2 1.0 b\nq3 Q0 d7 1 1.0 b\n"
METRICS = ["P@2", "nDCG@3", "RR"]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in (("qrels.txt", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)  # the CLI reads paths from the working directory, a config from its folder
    return tmp_path


def _json(report_text: str) -> dict:
    """A JSON report without what names the door (``provenance.invocation``): everything else must match."""
    data = json.loads(report_text)
    data["provenance"].pop("invocation")
    return data


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) in (0, 1)
    return capsys.readouterr().out


def test_eval_run_and_run_config_give_byte_identical_json_reports(folder: Path, capsys: pytest.CaptureFixture) -> None:
    """The same evaluation (two runs, a baseline comparison) through `evalbridge eval`, `evalbridge run` and
    `run_config` gives the same JSON report, byte for byte once the door's name is set aside."""
    (folder / "eval.yaml").write_text(json.dumps({
        "title": "same", "qrels": "qrels.txt", "runs": {"a": "a.run", "b": "b.run"}, "metrics": METRICS,
        "comparison": {"baseline": "a", "test": "randomization", "n_resamples": 500}, "seed": 3}))
    via_eval = _cli(capsys, "eval", "qrels.txt", "a.run", "b.run", "-m", *METRICS, "--baseline", "a", "--test",
                    "randomization", "--n-resamples", "500", "--seed", "3", "--title", "same", "--format", "json")
    via_run = _cli(capsys, "run", "eval.yaml", "--format", "json", "--no-write")
    via_python = render(run_config(load_config(folder / "eval.yaml"), write=False).report, "json")
    reports = [_json(text) for text in (via_eval, via_run, via_python)]
    assert json.dumps(reports[0]) == json.dumps(reports[1]) == json.dumps(reports[2])
    assert reports[0]["comparison"]["rows"] and reports[0]["provenance"]["inputs"]["runs.b"]["sha256"]


def test_check_and_run_with_a_crosscheck_give_byte_identical_json_reports(folder: Path,
                                                                           capsys: pytest.CaptureFixture) -> None:
    """`evalbridge check` is the pipeline with a cross-check: its JSON report equals a config run's."""
    (folder / "check.yaml").write_text(json.dumps({
        "title": "checked", "qrels": "qrels.txt", "runs": {"b": "b.run"}, "metrics": METRICS,
        "crosscheck": {"backends": ["pytrec_eval"], "atol": 1e-9}}))
    via_check = _cli(capsys, "check", "qrels.txt", "b.run", "-m", *METRICS, "--backends", "pytrec_eval",
                     "--title", "checked", "--format", "json")
    via_run = _cli(capsys, "run", "check.yaml", "--format", "json", "--no-write")
    assert json.dumps(_json(via_check)) == json.dumps(_json(via_run))
    assert _json(via_check)["crosscheck"]["b"]["ok"] is True


@pytest.mark.parametrize("flag, value, message", [
    ("--alpha", "5", "--alpha must be a number in (0, 1); got 5.0"),
    ("--alpha", "nan", "--alpha must be a number in (0, 1); got nan"),
    ("--alpha", "-1", "--alpha must be a number in (0, 1); got -1.0"),
    ("--seed", "-1", "--seed must be an integer >= 0; got -1"),
    ("--n-resamples", "1000000000000", "--n-resamples must be an integer in [1, "),
])
def test_a_flag_and_its_config_key_share_one_rule_and_one_message(folder: Path, capsys: pytest.CaptureFixture,
                                                                  flag: str, value: str, message: str) -> None:
    """A bad value is refused at the command line (exit 2) with the message the config key gets, naming the flag."""
    capsys.readouterr()
    code = main(["eval", "qrels.txt", "a.run", "b.run", "-m", "P@2", "--baseline", "a", flag, value])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_an_internal_error_exits_3_with_one_line_and_the_traceback_only_with_debug(
        folder: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug (an exception evalbridge did not mean to raise) is exit 3, one line asking for a report; --debug
    adds the traceback. Exit 1 stays the code of a failed gate."""
    import evalbridge.config.pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("division by zero")

    monkeypatch.setattr(evalbridge.config.pipeline, "run_config", broken)
    capsys.readouterr()
    assert main(["eval", "qrels.txt", "a.run", "-m", "P@2"]) == 3
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [
        "evalbridge: internal error: ZeroDivisionError: division by zero. This is a bug in evalbridge; please report "
        "it (run again with --debug for the traceback)."]
    assert main(["--debug", "eval", "qrels.txt", "a.run", "-m", "P@2"]) == 3
    err = capsys.readouterr().err
    assert "Traceback" in err and err.strip().endswith("please report it.")


def test_an_output_that_is_an_input_is_refused_and_the_input_stays_byte_identical(
        folder: Path, capsys: pytest.CaptureFixture) -> None:
    """`-o run`, `--per-query qrels` and `check -o qrels` would destroy an input: exit 2 naming both."""
    before = {name: (folder / name).read_bytes() for name in ("qrels.txt", "a.run")}
    for argv in (["eval", "qrels.txt", "a.run", "-m", "P@1", "-o", "a.run"],
                 ["eval", "qrels.txt", "a.run", "-m", "P@1", "--per-query", "qrels.txt"],
                 ["check", "qrels.txt", "a.run", "-m", "P@1", "-o", "qrels.txt"]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "would destroy the input" in err and ("a.run" in err or "qrels.txt" in err), err
    assert {name: (folder / name).read_bytes() for name in before} == before


def test_judged_only_and_depth_are_one_setting_at_every_door(folder: Path, capsys: pytest.CaptureFixture) -> None:
    """`--judged-only --depth 2` on the command line and `judged_only: true, depth: 2` in a config give the
    report `evaluate(..., judged_only=True, depth=2)` gives; a bad depth is refused with the flag's name."""
    import evalbridge as eb

    (folder / "cut.yaml").write_text(json.dumps({"title": "cut", "qrels": "qrels.txt", "runs": {"a": "a.run"},
                                                 "metrics": METRICS, "judged_only": True, "depth": 2}))
    via_eval = _json(_cli(capsys, "eval", "qrels.txt", "a.run", "-m", *METRICS, "--judged-only", "--depth", "2",
                          "--title", "cut", "--format", "json"))
    via_run = _json(_cli(capsys, "run", "cut.yaml", "--format", "json", "--no-write"))
    assert json.dumps(via_eval) == json.dumps(via_run)
    direct = eb.evaluate("qrels.txt", "a.run", METRICS, judged_only=True, depth=2)
    assert via_run["systems"]["a"]["metrics"] == pytest.approx(direct.means)
    capsys.readouterr()
    assert main(["eval", "qrels.txt", "a.run", "-m", "P@1", "--depth", "0"]) == 2
    assert "--depth must be an integer >= 1; got 0" in capsys.readouterr().err


@pytest.mark.parametrize("section, reads_results", [
    ({"judges": {"labels": {"judge": "judge.txt"}}}, False),
    ({"changed": {"before": "judge.txt", "n_resamples": 200}}, False),
    ({"ppi": {"human": "judge.txt", "scale": [0, 2]}}, False),
    ({"power": {}}, True),
    ({"tiers": {"n_resamples": 200}}, True),
])
def test_a_section_shown_alone_evaluates_the_config_s_metrics_only_when_it_reads_the_results(
        folder: Path, monkeypatch: pytest.MonkeyPatch, section: dict, reads_results: bool) -> None:
    """`run_config(config, means=False)` (a command of the registry showing its section alone) gives the section
    the same result as the whole report, and evaluates the runs with the config's metrics only for a section that
    reads their results (power, tiers), not for one that evaluates under labels of its own (judges, changed, ppi)."""
    from evalbridge.evaluation import evaluating

    (folder / "judge.txt").write_text(QRELS.replace("q1 0 d2 0", "q1 0 d2 1"))
    (folder / "eval.yaml").write_text(json.dumps({"qrels": "qrels.txt", "runs": {"a": "a.run", "b": "b.run"},
                                                  "metrics": METRICS, "seed": 3, **section}))
    key = next(iter(section))
    calls: list[int] = []
    evaluate = evaluating.evaluate
    monkeypatch.setattr(evaluating, "evaluate", lambda *args, **kwargs: calls.append(1) or evaluate(*args, **kwargs))
    found = {}
    for means in (True, False):
        calls.clear()
        outcome = run_config(load_config(folder / "eval.yaml"), write=False, means=means)
        found[means] = (len(calls), json.dumps(outcome.report.analyses[key].to_dict(), default=str),
                        sorted(outcome.report.results))
    assert found[True][1] == found[False][1]
    assert found[True][2] == ["a", "b"] and found[False][2] == []  # the report's means only when they are shown
    assert found[True][0] - found[False][0] == (0 if reads_results else 2)
