"""The command line (evalbridge.cli): run, eval, check, metrics, convert, and the exit codes 0/1/2."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge.cli import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d6 1\n"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d9 1 2.0 a\nq2 Q0 d4 2 1.0 a\nq3 Q0 d6 1 1.0 a\n"
RUN_B = "q1 Q0 d3 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq2 Q0 d4 1 2.0 b\nq2 Q0 d5 2 1.0 b\nq3 Q0 d7 1 1.0 b\n"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def files(tmp_path):
    """qrels.txt, a.run and b.run in a temporary folder."""
    for name, text in (("qrels.txt", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
    return tmp_path


def said(err: str) -> str:
    """stderr without the warnings (b.run retrieves nothing the qrels judge for q3: EvalbridgeWarning says so)."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("evalbridge: warning: "))


def cli(capsys, *argv):
    """(exit code, stdout, stderr without the warnings: tests/test_warnings.py has them) of ``evalbridge argv...``
    run in-process."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, said(err)


def test_eval_prints_the_systems_by_metrics_table(files, capsys):
    """eval: one row per run (named after the file), the means of evaluate(), exit 0."""
    code, out, err = cli(capsys, "eval", files / "qrels.txt", files / "a.run", files / "b.run", "-m", "P@2", "mrr")
    assert code == 0 and err == ""
    expected = eb.evaluate(eb.read_qrels(files / "qrels.txt"), eb.read_run(files / "b.run"), ["P@2", "mrr"])
    row = next(line for line in out.splitlines() if line.startswith("b "))
    assert row.split()[1:] == [f"{expected['P@2']:.4f}", f"{expected['RR']:.4f}"]
    assert any(line.startswith("a ") for line in out.splitlines())


@pytest.mark.parametrize("fmt, check", [
    ("csv", lambda out: out.splitlines()[0] == "system,P@2,mrr,queries_evaluated,missing_from_run,ignored_run_only"),
    ("json", lambda out: set(json.loads(out)["systems"]) == {"a", "b"}),
    ("markdown", lambda out: "| system" in out and "## Provenance" in out),
    ("latex", lambda out: r"\begin{tabular}" in out),
])
def test_eval_renders_every_format(files, capsys, fmt, check):
    """--format csv / json / markdown / latex."""
    code, out, _ = cli(capsys, "eval", files / "qrels.txt", files / "a.run", files / "b.run", "-m", "P@2", "mrr",
                       "--format", fmt)
    assert code == 0 and check(out)


def test_eval_report_carries_provenance(files, capsys):
    """The JSON report of eval names versions, conventions, input sha256 and query counts."""
    import hashlib

    code, out, _ = cli(capsys, "eval", files / "qrels.txt", files / "a.run", "-m", "P@2", "--format", "json",
                       "--ties", "input")
    prov = json.loads(out)["provenance"]
    assert prov["evalbridge_version"] == eb.__version__ and prov["backend_versions"][prov["backend"]]
    assert prov["conventions"]["ties"] == "input"
    assert prov["inputs"]["runs.a"]["sha256"] == hashlib.sha256(RUN_A.encode()).hexdigest()
    assert prov["queries"]["a"] == {"evaluated": 3, "missing_from_run": 0, "ignored_run_only": 0, "without_relevant": 0}


def test_eval_with_baseline_adds_the_comparison(files, capsys):
    """--baseline a: the JSON report holds the paired comparison of b against a."""
    code, out, _ = cli(capsys, "eval", files / "qrels.txt", files / "a.run", files / "b.run", "-m", "P@2",
                       "--baseline", "a", "--format", "json")
    rows = json.loads(out)["comparison"]["rows"]
    assert code == 0 and [(r["system"], r["baseline"]) for r in rows] == [("b", "a")]


def test_eval_writes_output_and_per_query_files(files, capsys):
    """-o writes the report file; --per-query writes the per-query CSV."""
    code, out, err = cli(capsys, "eval", files / "qrels.txt", files / "a.run", "-m", "P@2", "-o",
                         files / "r.md", "--format", "markdown", "--per-query", files / "pq.csv")
    assert code == 0 and out == ""
    assert (files / "r.md").read_text().startswith("# evalbridge eval qrels.txt")
    assert (files / "pq.csv").read_text().splitlines()[0] == "system,query_id,P@2"


@pytest.mark.parametrize("argv, message", [
    (["eval", "{d}/qrels.txt", "{d}/a.run", "-m", "ndgc@10"], "unknown metric 'ndgc'"),
    (["eval", "{d}/qrels.txt", "{d}/missing.run", "-m", "P@5"], "missing.run: the file does not exist"),
    (["eval", "{d}/a.run", "{d}/a.run", "-m", "P@5"], "a.run:1"),
    (["eval", "{d}/qrels.txt", "{d}/a.run", "-m", "P@5", "--baseline", "z"], "--baseline: must be one of 'a'; got 'z'"),
    (["run", "{d}/nope.yaml"], "nope.yaml: the config file does not exist"),
    (["convert", "{d}/a.run", "{d}/x.json"], "--kind qrels or --kind run"),
])
def test_bad_input_exits_2_with_one_line_and_no_traceback(files, capsys, argv, message):
    """Bad input or config: exit 2, one 'evalbridge: error:' line on stderr, no traceback."""
    code, out, err = cli(capsys, *[a.format(d=files) for a in argv])
    assert code == 2
    assert err.startswith("evalbridge: error: ") and message in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_argparse_usage_errors_exit_2(capsys):
    """A missing required option is a usage error with exit code 2."""
    with pytest.raises(SystemExit) as info:
        main(["eval", "q.txt", "r.txt"])
    assert info.value.code == 2
    assert "-m/--metrics" in capsys.readouterr().err


CONFIG = """\
qrels: qrels.txt
runs: {a: a.run, b: b.run}
metrics: [P@2, mrr]
comparison: {baseline: a, n_resamples: 200}
output: {dir: out, formats: [markdown, json], per_query: [csv]}
"""


def test_run_prints_the_table_writes_reports_and_exits_0(files, capsys):
    """run CONFIG: terminal table on stdout, files in output.dir, exit 0; no progress bar off a TTY."""
    (files / "eval.yaml").write_text(CONFIG)
    code, out, err = cli(capsys, "run", files / "eval.yaml")
    assert code == 0 and len(err.splitlines()) == 1 and re.fullmatch(r"wrote \d+ files to \S*out\n", err)
    assert "vs baseline 'a'" in out and "wrote" not in out
    assert (files / "out" / "report.md").is_file() and (files / "out" / "per_query.csv").is_file()


def test_run_exits_1_with_one_line_per_failed_gate(files, capsys):
    """A failing gate: exit 1; the report on stdout lists each failure once and stderr names each failed gate
    on its own line, with or without --quiet (which only drops the notes)."""
    (files / "eval.yaml").write_text(CONFIG + "gates: {mrr: '>= 0.99', P@2: ['>= 0.99', '>= 0']}\n")
    for quiet in ((), ("--quiet",)):
        code, out, err = cli(capsys, "run", files / "eval.yaml", "--no-write", *quiet)
        assert code == 1
        assert len([line for line in out.splitlines() if "gate FAILED" in line]) == 2
        failed = err.strip().splitlines()
        assert len(failed) == 2 and all(line.startswith("evalbridge: gate FAILED: b ") for line in failed)
        assert any(" mrr " in line or " RR " in line for line in failed) and any("P@2" in line for line in failed)
    assert not (files / "out").exists()


def test_quiet_means_one_thing_for_every_command():
    """-q is one option with one meaning on every command that prints notes: a quieter stderr."""
    from evalbridge.cli import build_parser, commands as command_parsers

    commands = command_parsers(build_parser())
    quiet = {name: next((a for a in sub._actions if "-q" in a.option_strings), None) for name, sub in commands.items()}
    helps = {action.help for action in quiet.values() if action is not None}
    assert {name for name, action in quiet.items() if action is not None} >= {"run", "eval", "check", "agree",
                                                                             "convert"}
    assert len(helps) == 1 and "stderr" in helps.pop()


def test_quiet_drops_the_notes_and_keeps_the_report(files, capsys):
    """eval -o FILE says where it wrote on stderr; with -q stderr is empty and the file is the same."""
    args = ("eval", files / "qrels.txt", files / "a.run", "-m", "P@2", "--format", "json")
    code, out, err = cli(capsys, *args, "-o", files / "loud.json")
    assert (code, out, err) == (0, "", f"wrote {files / 'loud.json'}\n")
    code, out, err = cli(capsys, *args, "-o", files / "quiet.json", "-q")
    assert (code, out, err) == (0, "", "")
    assert json.loads((files / "quiet.json").read_text()) == json.loads((files / "loud.json").read_text())
    code, out, err = cli(capsys, *args, "-q")
    assert code == 0 and err == "" and json.loads(out)


def test_run_junit_to_stdout_takes_the_place_of_the_report(files, capsys):
    """`--junit -` writes the JUnit XML on stdout instead of the report, with or without -q; failures on stderr."""
    from xml.etree import ElementTree

    (files / "eval.yaml").write_text(CONFIG + "gates: {mrr: '>= 0.99'}\n")
    for quiet in ((), ("-q",)):
        code, out, err = cli(capsys, "run", files / "eval.yaml", "--no-write", "--junit", "-", *quiet)
        suite = ElementTree.fromstring(out).find("testsuite")
        assert code == 1 and suite is not None and suite.get("failures") == "1"
        assert [line for line in err.splitlines() if "gate FAILED" in line]


def test_run_exits_2_on_a_bad_config_naming_file_line_and_key(files, capsys):
    """An invalid config: exit 2, the message names file:line and the key path."""
    (files / "eval.yaml").write_text(CONFIG + "comparsion: {}\n")
    code, _, err = cli(capsys, "run", files / "eval.yaml")
    assert code == 2
    assert f"{files / 'eval.yaml'}:6: comparsion: unknown key" in err and "did you mean 'comparison'?" in err


def test_run_output_dir_and_quiet(files, capsys, tmp_path_factory):
    """--output-dir redirects the files; --quiet leaves stderr empty on success (the report is still printed)."""
    (files / "eval.yaml").write_text(CONFIG)
    target = tmp_path_factory.mktemp("elsewhere")
    code, out, err = cli(capsys, "run", files / "eval.yaml", "--output-dir", target, "-q")
    assert (code, err) == (0, "") and "vs baseline 'a'" in out
    assert (target / "report.json").is_file() and not (files / "out").exists()


def test_check_exits_0_when_every_difference_is_explained(files, capsys):
    """check against pytrec_eval on tie-free data: agreement, exit 0."""
    code, out, _ = cli(capsys, "check", files / "qrels.txt", files / "b.run", "-m", "P@2", "ndcg@3",
                       "--backends", "pytrec_eval", "--format", "json")
    check = json.loads(out)["crosscheck"]["b"]
    assert code == 0 and check["ok"] is True and check["differences"] == []


def test_check_exits_1_on_unexplained_differences(files, capsys, monkeypatch):
    """An unexplained cross-check difference (a library that returns wrong values): exit 1 with a one-line reason."""
    from evalbridge.backends import pytrec_eval

    compute = pytrec_eval.compute

    def off_by_a_half(*args, **kwargs):
        values, notes = compute(*args, **kwargs)
        return {m: {q: v + 0.5 for q, v in per_query.items()} for m, per_query in values.items()}, notes

    monkeypatch.setattr(pytrec_eval, "BACKEND", replace(pytrec_eval.BACKEND, compute=off_by_a_half))
    code, out, err = cli(capsys, "check", files / "qrels.txt", files / "b.run", "-m", "P@2",
                         "--backends", "pytrec_eval")
    assert code == 1 and "UNEXPLAINED" in out
    assert err.strip().startswith("evalbridge: the cross-check found") and "unexplained difference(s)" in err


def test_metrics_lists_every_metric_and_the_capability_matrix(capsys):
    """metrics --format json: every catalogue family, and the reference computes every variant."""
    from evalbridge.metrics.catalogue import METRICS

    code, out, _ = cli(capsys, "metrics", "--format", "json")
    data = json.loads(out)
    assert code == 0 and [m["name"] for m in data["metrics"]] == list(METRICS)
    assert all(cells["reference"] is None for cells in data["matrix"].values())
    assert data["matrix"]["nDCG(ideal=run)@10"]["pytrec_eval"] is not None
    code, text, _ = cli(capsys, "metrics")
    assert code == 0 and "nDCG(gain=exp)@10" in text and "pytrec_eval" in text


def test_convert_round_trips_a_run_through_json(files, capsys):
    """TREC run -> JSON -> TREC keeps every score; the kind is required for single formats."""
    assert cli(capsys, "convert", files / "b.run", files / "b.json", "--kind", "run")[0] == 0
    assert cli(capsys, "convert", files / "b.json", files / "b2.run", "--kind", "run", "--to", "trec")[0] == 0
    assert eb.read_run(files / "b2.run").to_dict() == eb.read_run(files / "b.run").to_dict()
    assert json.loads((files / "b.json").read_text())["q1"] == {"d3": 3.0, "d1": 2.0}


def test_convert_splits_rag_labels_into_qrels_and_run(files, capsys):
    """--from labels: OUTPUT gets the qrels and --run-output the run, as TREC files."""
    (files / "labels.json").write_text(json.dumps({"q1": [1, 0, 2]}))
    code, _, err = cli(capsys, "convert", files / "labels.json", files / "q.txt", "--from", "labels",
                       "--run-output", files / "r.txt")
    assert code == 0 and "wrote" in err
    assert (files / "q.txt").read_text() == "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\n"
    assert [line.split()[2] for line in (files / "r.txt").read_text().splitlines()] == ["d1", "d2", "d3"]


def test_python_dash_m_and_console_script_share_main(files):
    """`python -m evalbridge` runs the CLI as a subprocess: --version, and exit 2 without traceback."""
    version = subprocess.run([sys.executable, "-m", "evalbridge", "--version"], capture_output=True, text=True,
                             cwd=REPO, check=False)
    assert version.returncode == 0 and version.stdout.strip() == f"evalbridge {eb.__version__}"
    bad = subprocess.run([sys.executable, "-m", "evalbridge", "run", str(files / "nope.yaml")],
                         capture_output=True, text=True, cwd=REPO, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("evalbridge: error:")


def test_docs_cli_lists_every_command_and_exit_code():
    """docs/cli.md documents each subcommand of the parser and the exit codes 0, 1, 2 and 3."""
    from evalbridge.cli import build_parser

    text = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    commands = next(a for a in build_parser()._subparsers._group_actions).choices  # noqa: SLF001
    for command in commands:
        assert f"evalbridge {command}" in text
    assert all(f"| {code} |" in text for code in (0, 1, 2, 3))


def test_docs_config_describes_every_top_level_key():
    """docs/config.md has a section for every key config.py accepts."""
    from evalbridge.config import TOP_KEYS

    text = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    missing = [key for key in TOP_KEYS if f"`{key}`" not in text]
    assert missing == []


def test_progress_bar_is_drawn_only_on_a_terminal(files, monkeypatch):
    """progress yields a callback only when stderr is a TTY."""
    from evalbridge.cli import shared as module

    with module.progress(True) as on_step:
        assert on_step is None  # pytest's stderr is not a terminal
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    with module.progress(True) as on_step:
        assert callable(on_step)
        on_step("evaluating", 0, 2)
    with module.progress(False) as on_step:
        assert on_step is None


def test_example_in_docs_runs(tmp_path, capsys):
    """The quick-start command of docs/cli.md works on a tiny labels config."""
    (tmp_path / "rag.yaml").write_text(textwrap.dedent("""\
        runs:
          rag: {format: labels, data: {q1: [1, 0, 1], q2: [0, 0, 1]}}
        metrics: [P@3, mrr, hit_rate@3]
        gates: {hit_rate@3: ">= 0.8"}
        output: {dir: out}
        """))
    code, out, _ = cli(capsys, "run", tmp_path / "rag.yaml")
    assert code == 0 and "1 passed, 0 failed, 0 inconclusive; the run passes" in out


def test_agree_compares_two_judgement_sets_and_the_rankings_they_induce(files, capsys):
    """`evalbridge agree` prints the judge agreement and, with runs, the ranking agreement; JSON is parseable."""
    lenient = files / "lenient.txt"
    lenient.write_text((files / "qrels.txt").read_text().replace(" 0\n", " 1\n"))
    code, out, _ = cli(capsys, "agree", files / "qrels.txt", lenient, files / "a.run", files / "b.run", "-m", "P@2",
                       "--format", "json")
    data = json.loads(out)["agreement"]  # the pipeline's report.json, the agreement under "agreement"
    assert code == 0 and data["judges"]["cohen_kappa"] < 1
    assert [row["metric"] for row in data["ranking"]["metrics"]] == ["P@2"]
    code, out, _ = cli(capsys, "agree", files / "qrels.txt", files / "qrels.txt", "--alpha", "5")
    assert code == 2


@pytest.mark.parametrize(("fmt", "pandas_imported"), [("terminal", False), ("markdown", False), ("json", False),
                                                      ("csv", True)])
def test_eval_imports_pandas_only_for_a_table_file(files, fmt, pandas_imported):
    """A fresh `evalbridge eval` lays out its text, Markdown and JSON reports without pandas (its import
    costs more than evaluating a RAG-sized input); the CSV report is a DataFrame's, and the probe sees it."""
    code = (f"import sys\nfrom evalbridge.cli import main\n"
            f"main(['eval', {str(files / 'qrels.txt')!r}, {str(files / 'a.run')!r}, '-m', 'P@2', 'ndcg', "
            f"'--format', {fmt!r}, '-o', {str(files / 'report.out')!r}])\n"
            f"print('pandas' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == str(pandas_imported)
    assert "P@2" in (files / "report.out").read_text()


def test_a_command_line_builds_the_parser_of_its_command_alone_and_help_builds_every_one() -> None:
    """`evalbridge eval ...` imports and builds only eval's parser; no command, an unknown one, or --help before
    it builds them all (so --help lists every command and an unknown one is told the choices)."""
    from evalbridge.cli import COMMANDS, build_parser, commands as command_parsers

    assert list(command_parsers(build_parser(["--debug", "eval", "q", "r", "-m", "P@1"]))) == ["eval"]
    for argv in (None, [], ["--help", "eval"], ["nosuch"], ["--debug"]):
        assert list(command_parsers(build_parser(argv))) == list(COMMANDS)
