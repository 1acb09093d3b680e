"""Outputs that hold: no output of a command replaces a file the command read, wherever that file was named (a
positional, an option, a config's section), and Ctrl-C leaves every old output as it was.

Each file a command reads is noted once where it is named (a config's paths, a command line's files), and every
output check (the one before the work and the one just before a file is replaced) refuses it.
"""

from __future__ import annotations

import json
from xml.etree import ElementTree
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import SHARED

from evalbridge.cli import main

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d2 1\nq2 0 d3 1\nq3 0 d1 1\n"
QRELS_B = "q1 0 d1 1\nq1 0 d2 1\nq2 0 d2 1\nq2 0 d3 0\nq3 0 d1 1\n"
RUN_A = "q1 Q0 d1 1 0.9 a\nq1 Q0 d2 2 0.5 a\nq2 Q0 d3 1 0.8 a\nq2 Q0 d2 2 0.2 a\nq3 Q0 d1 1 0.3 a\n"
RUN_B = "q1 Q0 d2 1 0.9 b\nq1 Q0 d1 2 0.5 b\nq2 Q0 d2 1 0.8 b\nq2 Q0 d1 2 0.2 b\nq3 Q0 d2 1 0.3 b\n"
TABLE = "query_id,topic\nq1,x\nq2,y\nq3,x\n"


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    monkeypatch.chdir(tmp_path)
    paths = {"qrels": tmp_path / "qrels.txt", "qrels_b": tmp_path / "judge_b.txt", "a": tmp_path / "a.txt",
             "b": tmp_path / "b.txt", "table": tmp_path / "topics.csv"}
    for key, text in (("qrels", QRELS), ("qrels_b", QRELS_B), ("a", RUN_A), ("b", RUN_B), ("table", TABLE)):
        paths[key].write_text(text)
    paths["config"] = tmp_path / "eval.yaml"
    paths["config"].write_text("title: t\nqrels: qrels.txt\nruns: {a: a.txt, b: b.txt}\nmetrics: [P@2]\n"
                               "comparison: {baseline: a}\nslices: {by: topic, file: topics.csv}\n"
                               "gates: {P@2: '>= 0'}\noutput: {dir: reports/demo, formats: [markdown]}\n")
    return paths


#: case -> (the command line, the input it names as an output)
CASES = {
    "changed -o AFTER": (lambda f: ["changed", f["qrels"], f["qrels_b"], f["a"], f["b"], "-m", "P@2",
                                    "-o", f["qrels_b"]], "qrels_b"),
    "uncertain --judges J1 J2 -o J2": (lambda f: ["uncertain", f["a"], "-m", "P@2", "--judges", f["qrels"],
                                                  f["qrels_b"], "-o", f["qrels_b"]], "qrels_b"),
    "diagnose --judgements-b B -o B": (lambda f: ["diagnose", f["qrels"], f["a"], f["b"], "-m", "P@2", "--trials", "5",
                                                  "--judgements-b", f["qrels_b"], "-o", f["qrels_b"]], "qrels_b"),
    "eval --slices-file T -o T": (lambda f: ["eval", f["qrels"], f["a"], f["b"], "-m", "P@2", "--baseline", "a",
                                             "--slice-by", "topic", "--slices-file", f["table"], "-o", f["table"]],
                                  "table"),
    "eval --slices-file T --per-query T": (lambda f: ["eval", f["qrels"], f["a"], f["b"], "-m", "P@2", "--baseline",
                                                      "a", "--slice-by", "topic", "--slices-file", f["table"],
                                                      "-o", "report.md", "--per-query", f["table"]], "table"),
    "run --junit T with slices: {file: T}": (lambda f: ["run", f["config"], "-q", "--no-write", "--junit", f["table"]],
                                             "table"),
    "run --junit CONFIG": (lambda f: ["run", f["config"], "-q", "--no-write", "--junit", f["config"]], "config"),
    "eval -o RUN": (lambda f: ["eval", f["qrels"], f["a"], f["b"], "-m", "P@2", "-o", f["b"]], "b"),
    "check -o QRELS": (lambda f: ["check", f["qrels"], f["a"], "-m", "P@2", "--backends", "pytrec_eval",
                                  "-o", f["qrels"]], "qrels"),
    "diff -o RUN_B": (lambda f: ["diff", f["qrels"], f["a"], f["b"], "-m", "P@2", "-o", f["b"]], "b"),
    "power -o RUN": (lambda f: ["power", f["qrels"], f["a"], f["b"], "-m", "P@2", "-o", f["a"]], "a"),
    "tiers -o RUN": (lambda f: ["tiers", f["qrels"], f["a"], f["b"], "-m", "P@2", "-o", f["b"]], "b"),
    "design -o QRELS": (lambda f: ["design", f["qrels"], f["a"], f["b"], "-m", "P@2", "-o", f["qrels"]], "qrels"),
    "agree -o QRELS_B": (lambda f: ["agree", f["qrels"], f["qrels_b"], "-o", f["qrels_b"]], "qrels_b"),
    "pool --batch TOPICS": (lambda f: ["pool", f["qrels"], f["a"], "--topics", f["table"], "--batch", f["table"]],
                            "table"),
    "merge -o NEW": (lambda f: ["merge", f["qrels"], f["qrels_b"], "--prefer", "new", "-o", f["qrels_b"]], "qrels_b"),
    "convert INPUT INPUT": (lambda f: ["convert", f["a"], f["a"], "--kind", "run"], "a"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_output_naming_a_file_the_command_reads_is_refused(files: dict[str, Path], case: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    command, victim = CASES[case]
    before = {path: path.read_bytes() for path in files.values()}
    code = main([str(part) for part in command(files)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert files[victim].name in err and "would destroy the input" in err, err
    assert {path: path.read_bytes() for path in files.values()} == before
    assert not Path("report.md").exists()  # refused before anything was written


def test_a_config_run_refuses_a_report_folder_that_holds_its_slice_table(files: dict[str, Path],
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import evalbridge as eb

    (files["qrels"].parent / "tables").mkdir()
    table = files["table"].rename(files["qrels"].parent / "tables" / "topics.csv")
    files["config"].write_text(files["config"].read_text().replace("file: topics.csv", "file: tables/topics.csv"))
    config = eb.load_config(files["config"])
    with pytest.raises(eb.InputError, match="contains the input .*topics.csv"):
        eb.run_config(config, output_dir=table.parent)
    assert table.read_text() == TABLE


# ---------------------------------------------------------------- Ctrl-C

DL19 = SHARED / "data" / "real" / "trec-dl-2019-passage"
ROOT = Path(__file__).resolve().parents[1]


def _command(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "evalbridge", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _interrupted(process: subprocess.Popen[str]) -> tuple[int, str]:
    """Interrupt ``process`` and wait for its end: (exit code, stderr). CPython's own case: a SIGINT that lands in the
    import system's lock callback is swallowed ("Exception ignored in: <function _get_module_lock...>") and can leave
    the import lock held, so the interpreter never ends, whatever the code it was importing: it is killed and what
    it said is given (its traceback holds frames of importlib only)."""
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired as stuck:
        process.kill()
        _, rest = process.communicate()
        said = stuck.stderr.decode() if isinstance(stuck.stderr, bytes) else stuck.stderr or ""
        if "_get_module_lock" not in said + rest:
            raise
        err = said + rest
    return process.returncode, err


#: a process that ends by its own SIGINT (the shell's 130 too) is as right as exit 130
INTERRUPTED = (130, -signal.SIGINT)


@pytest.mark.skipif(not DL19.is_dir(), reason="the TREC DL 2019 files are not on this machine")
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["Ctrl-C", "kill -9"])
def test_stopping_the_command_while_the_judging_batch_is_written_keeps_the_old_batch(tmp_path: Path,
                                                                                     stop: signal.Signals) -> None:
    batch = tmp_path / "batch.jsonl"
    old = '{"query_id": "old", "query": null, "doc_id": "d", "passage": null}\n'
    batch.write_text(old)
    runs = [str(DL19 / name) for name in ("run.bm25.top100.txt", "run.bm25-rm3.top100.txt",
                                          "run.splade-pp-ed.top100.txt")]
    process = _command(["pool", str(DL19 / "qrels.dl19-passage.txt"), *runs, "--depth", "100", "--queries", "runs",
                        "--topics", str(DL19 / "topics.dl19-passage.txt"), "--batch", str(batch), "-q",
                        "-o", str(tmp_path / "pool.txt")])
    deadline = time.monotonic() + 120
    while not any(p.name.startswith(".tmp-") and p.stat().st_size > 0 for p in tmp_path.iterdir()):
        assert process.poll() is None and time.monotonic() < deadline, "the batch was never being written"
        time.sleep(0.002)
    process.send_signal(stop)  # mid-write: the temporary batch holds some lines
    _, err = process.communicate(timeout=120)
    assert batch.read_text() == old
    assert not (tmp_path / "pool.txt").exists()
    if stop == signal.SIGKILL:  # nothing runs after a kill: its temporary file stays, beside the old batch ...
        assert process.returncode == -signal.SIGKILL
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
        again = subprocess.run([sys.executable, "-m", "evalbridge", "pool", str(DL19 / "qrels.dl19-passage.txt"),
                                runs[0], "--depth", "5", "--batch", str(batch), "-q"], capture_output=True, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=240)
        assert again.returncode == 0, again.stderr
        assert sorted(p.name for p in tmp_path.iterdir()) == ["batch.jsonl"]  # ... until the next write of it
        return
    assert process.returncode in INTERRUPTED, err
    assert "Traceback" not in err and "no report was half-written" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["batch.jsonl"]  # no temporary file left


_WRITER = """
import sys, time
from evalbridge.io.text import replacing
with replacing(sys.argv[1]) as temporary:
    temporary.write_text("half")
    print(temporary.name, flush=True)
    time.sleep(120)
"""


def _writing(target: Path) -> tuple[subprocess.Popen[str], str]:
    """A process in the middle of writing ``target`` (its temporary file written, the lock held), and that file."""
    process = subprocess.Popen([sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


@pytest.mark.skipif(os.name != "posix", reason="leftovers are swept where fcntl's locks are (POSIX)")
def test_the_next_write_of_an_output_sweeps_what_a_killed_writer_left_and_nothing_a_live_one_holds(
        tmp_path: Path) -> None:
    """Every output is written by one atomic write (io.text.replacing, under the command line's atomic_file and the
    Python API's writers): a writer killed with -9 leaves its temporary file, which the next write of the same output
    removes; the temporary file of a writer still at work, and those of other outputs, stay."""
    from evalbridge.io.text import replacing
    from evalbridge.reports.writing import write_file_atomic

    target, other = tmp_path / "batch.jsonl", tmp_path / "other.jsonl"
    target.write_text("old\n")
    live, held = _writing(target)
    killed, left = _writing(target)
    killed.kill()
    killed.wait()
    elsewhere, theirs = _writing(other)
    elsewhere.kill()
    elsewhere.wait()
    try:
        assert {left, held, theirs} <= {p.name for p in tmp_path.iterdir()} and target.read_text() == "old\n"
        write_file_atomic(target, "new\n")  # the command line's door ...
        assert target.read_text() == "new\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["batch.jsonl", held, theirs])
    finally:
        live.kill()
        live.wait()
    with replacing(target) as temporary:  # ... and the Python API's: the same write
        temporary.write_text("newer\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["batch.jsonl", theirs])
    assert target.read_text() == "newer\n"


@pytest.mark.skipif(not DL19.is_dir(), reason="the TREC DL 2019 files are not on this machine")
@pytest.mark.parametrize("moment", [0.3, 0.5, 0.7, 0.9, 1.1, 1.5])
def test_ctrl_c_at_any_moment_of_a_run_ends_it_with_130_and_the_old_outputs(tmp_path: Path, moment: float) -> None:
    (tmp_path / "eval.yaml").write_text(
        f"title: dl19\nqrels: {DL19 / 'qrels.dl19-passage.txt'}\n"
        f"runs: {{bm25: {DL19 / 'run.bm25.top100.txt'}, rm3: {DL19 / 'run.bm25-rm3.top100.txt'}}}\n"
        "metrics: [nDCG@10, AP]\ncomparison: {baseline: bm25, n_resamples: 20000}\n"
        "output: {dir: reports, formats: [markdown, json]}\n")
    junit = tmp_path / "gates.xml"
    junit.write_text("old junit\n")
    process = _command(["run", str(tmp_path / "eval.yaml"), "-q", "--junit", str(junit)])
    time.sleep(moment)
    if process.poll() is not None:
        pytest.skip(f"the run ended before {moment} s")
    code, err = _interrupted(process)
    # 0: the run ended between the look and the signal (a loaded machine), and then its outputs are the new ones
    assert code in (*INTERRUPTED, 0), err
    assert "Traceback" not in err and "internal error" not in err, err
    # the old file, or the whole new one when the interrupt came after it was written (never a part of it)
    written = junit.read_text()
    assert written == "old junit\n" or ElementTree.fromstring(written).tag == "testsuites", written
    assert code != 0 or written != "old junit\n", written
    assert not (tmp_path / "reports").exists() or json.loads((tmp_path / "reports" / "report.json").read_text())
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def _entry_point() -> str:
    """The code of the ``evalbridge`` console script as pip writes it from pyproject.toml's entry point."""
    import tomllib

    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["evalbridge"]
    module, function = entry.split(":")
    return f"import sys\nfrom {module} import {function}\nif __name__ == '__main__':\n    sys.exit({function}())\n"


#: the modules the entry point imports before its guard can run (the package's ``__init__``, ``__main__`` itself): an
#: interrupt there, a millisecond on a quiet machine, is Python's KeyboardInterrupt
BEFORE_THE_GUARD = {"__init__.py", "__main__.py", "_version.py"}


@pytest.mark.skipif(not DL19.is_dir(), reason="the TREC DL 2019 files are not on this machine")
@pytest.mark.parametrize("door", ["python -m evalbridge", "console script"])
def test_ctrl_c_in_the_first_moments_of_a_command_ends_it_with_130_once_evalbridge_runs(tmp_path: Path,
                                                                                      door: str) -> None:
    """A real SIGINT at 10 ms to 400 ms of a command (the interpreter starting, the command line loading, the
    inputs read): the old output stays, and every interrupt that came once evalbridge's first line ran ends with
    130 and one line (or 0, when it came after the command's end); one that came before (Python's own start:
    ``site``, ``.pth`` files, and the import of the package's ``__init__`` and ``__main__`` that hold the guard) is
    Python's to say, so its traceback holds no frame of evalbridge but those modules' top level."""
    script = tmp_path / "evalbridge_script.py"
    script.write_text(_entry_point())
    start = [sys.executable, "-m", "evalbridge"] if door == "python -m evalbridge" else [sys.executable, str(script)]
    out = tmp_path / "out.md"
    said = []
    for moment in (0.01, 0.03, 0.06, 0.1, 0.15, 0.2, 0.3, 0.4):
        out.write_text("old\n")
        process = subprocess.Popen([*start, "eval", str(DL19 / "qrels.dl19-passage.txt"), str(DL19 / "run.bm25.top100.txt"),
                                    "-m", "nDCG@10", "AP", "--format", "markdown", "-o", str(out)],
                                   env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        time.sleep(moment)
        code, err = _interrupted(process)
        said.append((moment, code, err.strip().splitlines()[-1:] if err.strip() else []))
        written = out.read_text()  # the old file, or the whole new one when the interrupt came after it was written
        whole = written.startswith("# ") and written.rstrip().endswith("```")  # the report's last block, closed
        assert written == "old\n" or whole, (moment, code, written)
        if "Traceback" in err:  # Python's own start, or the package's own import before the guard's first line
            ours = [line for line in err.splitlines() if f"{os.sep}evalbridge{os.sep}" in line]
            assert all(line.strip().startswith("File") and line.rstrip().endswith("in <module>") and
                       Path(line.split('"')[1]).name in BEFORE_THE_GUARD for line in ours), (moment, err)
            continue
        assert code in (*INTERRUPTED, 0), (moment, code, err)
        assert err.count("\n") <= 1, (moment, err)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".tmp-")] == []
    assert any(code == 130 for _, code, _ in said), said


# ---------------------------------------------------------------- JSON by one rule

def _strict_json(text: str) -> object:
    """``text`` parsed as JSON proper: ``NaN`` / ``Infinity`` are refused (Python's parser takes them)."""
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


#: a command that writes JSON -> its command line (the randomization test over 3 queries can detect nothing)
JSON_COMMANDS = {
    "power": lambda f: ["power", f["qrels"], f["a"], f["b"], "-m", "P@2", "--test", "randomization"],
    "eval": lambda f: ["eval", f["qrels"], f["a"], f["b"], "-m", "P@2", "--baseline", "a", "--test", "randomization"],
    "diff": lambda f: ["diff", f["qrels"], f["a"], f["b"], "-m", "P@2"],
    "diagnose": lambda f: ["diagnose", f["qrels"], f["a"], f["b"], "-m", "P@2", "--trials", "5",
                           "--judgements-b", f["qrels_b"]],
    "uncertain": lambda f: ["uncertain", f["a"], "-m", "P@2", "--judges", f["qrels"], f["qrels_b"]],
    "pool": lambda f: ["pool", f["qrels"], f["a"], f["b"], "--depth", "2"],
    "changed": lambda f: ["changed", f["qrels"], f["qrels_b"], f["a"], f["b"], "-m", "P@2"],
    "ppi": lambda f: ["ppi", f["qrels_b"], f["a"], f["b"], "-m", "P@2", "--human", f["qrels"], "--plan-width", "0.1"],
    "tiers": lambda f: ["tiers", f["qrels"], f["a"], f["b"], "-m", "P@2", "--n-resamples", "50"],
    "design": lambda f: ["design", f["qrels"], f["a"], f["b"], "-m", "P@2"],
    "metrics": lambda f: ["metrics"],
}


@pytest.mark.parametrize("command", list(JSON_COMMANDS))
def test_every_json_output_is_strict_json(files: dict[str, Path], command: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(part) for part in JSON_COMMANDS[command](files)] + ["--format", "json"])
    out = capsys.readouterr().out
    assert code == 0
    assert isinstance(_strict_json(out), (dict, list))


def test_power_says_null_where_nothing_is_detectable(files: dict[str, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    main([str(p) for p in JSON_COMMANDS["power"](files)] + ["--format", "json"])
    (row,) = _strict_json(capsys.readouterr().out)["rows"]  # type: ignore[index]
    assert row["mde"] is None and row["n"] == 3


# ---------------------------------------------------------------- names escaped in every message and format

from hypothesis import given, strategies as st  # noqa: E402

from evalbridge.common.escaping import csv_cell, markdown_text, message_text  # noqa: E402

FORMULA = ("=", "+", "-", "@", "\t", "\r")


@given(st.text())
def test_a_message_is_always_one_line_without_control_characters(text: str) -> None:
    shown = message_text(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert message_text(shown.replace("\\", "")) == shown.replace("\\", "") or "\\" in text or shown != text


@given(st.text())
def test_a_csv_cell_never_starts_a_formula_unless_it_is_a_plain_number(text: str) -> None:
    cell = csv_cell(text)
    if cell.startswith(FORMULA):
        float(cell)  # a plain number such as -0.5 is left as it is
    assert cell in (text, "'" + text)


@given(st.text())
def test_markdown_text_opens_no_tag_and_ends_no_cell(text: str) -> None:
    shown = markdown_text(text)
    assert "<" not in shown and ">" not in shown and "\n" not in shown
    assert "|" not in shown.replace("\\|", "")


@pytest.mark.parametrize("key", ["bad\n::error file=x.py::injected", "comparison.base\r\n::warning::x"])
def test_a_control_character_in_a_config_key_stays_inside_the_one_line_of_the_refusal(
        files: dict[str, Path], key: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = files["config"]
    config.write_text(config.read_text() + f"{json.dumps(key)}: 1\n")
    code = main(["run", str(config), "--no-write", "-q"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("evalbridge: error: ") and "unknown key" in err, err
    assert "\\n::" in err


HOSTILE = "<img src=x onerror=alert(1)>"


def test_a_name_holding_html_is_text_in_a_markdown_report(files: dict[str, Path],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import re

    run = files["a"].rename(files["a"].parent / f"{HOSTILE}.txt")
    assert main(["eval", str(files["qrels"]), str(run), str(files["b"]), "-m", "P@2", "--baseline", str(run),
                 "--format", "markdown", "--title", f"{HOSTILE} report"]) == 0
    out = capsys.readouterr().out
    outside_code = re.sub(r"```.*?```", "", out, flags=re.S)  # a code block shows its text as it is
    assert HOSTILE not in outside_code and "<img" not in outside_code
    assert "&lt;img src=x onerror=alert(1)&gt;" in outside_code


@pytest.mark.parametrize("name", ["=HYPERLINK(\"x\")", "@SUM(A1)", "+cmd", "-2+3"])
def test_a_name_a_spreadsheet_would_run_is_neutralised_in_every_csv(files: dict[str, Path], name: str,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io

    run = files["b"].rename(files["b"].parent / f"{name}.txt")
    per_query = files["qrels"].parent / "per_query.csv"
    assert main(["eval", str(files["qrels"]), str(files["a"]), str(run), "-m", "P@2", "--format", "csv",
                 "--per-query", str(per_query), "-q"]) == 0
    for text in (capsys.readouterr().out, per_query.read_text()):
        cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
        assert "'" + name in cells
        assert not [cell for cell in cells if cell.startswith(FORMULA) and not _number(cell)]


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------- the Python API's writers too

@pytest.mark.parametrize("failure", [KeyboardInterrupt(), OSError(28, "No space left on device")])
def test_a_writer_that_fails_midway_leaves_the_old_file_and_no_temporary(tmp_path: Path,
                                                                         failure: BaseException) -> None:
    from evalbridge.io.text import open_text, replacing

    target = tmp_path / "batch.jsonl.gz"
    target.write_bytes(b"old")
    with pytest.raises(type(failure)):
        with replacing(target) as temporary, open_text(temporary) as f:
            f.write('{"query_id": "q1"}\n' * 1000)
            raise failure
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["batch.jsonl.gz"]


@pytest.mark.parametrize("suffix", [".txt", ".jsonl", ".parquet", ".csv.gz"])
def test_eb_write_replaces_a_file_whole_and_follows_a_symlink(tmp_path: Path, suffix: str) -> None:
    import evalbridge as eb

    run = eb.read_run({"q1": {"d1": 0.9, "d2": 0.5}})
    real, link = tmp_path / f"real{suffix}", tmp_path / f"link{suffix}"
    real.write_bytes(b"old")
    link.symlink_to(real)
    eb.write(run, link)
    back = eb.read_run(real)
    assert link.is_symlink() and {q: dict(back[q]) for q in back} == {"q1": {"d1": 0.9, "d2": 0.5}}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([real.name, link.name])


def test_a_control_character_in_a_config_key_is_escaped_in_the_python_error_too(files: dict[str, Path]) -> None:
    import evalbridge as eb

    config = files["config"]
    config.write_text(config.read_text().replace("comparison: {baseline: a}", 'comparison: {"base\\nline": a}'))
    with pytest.raises(eb.InputError) as error:
        eb.load_config(config)
    assert "\n" not in str(error.value) and "comparison.base\\nline" in str(error.value)
