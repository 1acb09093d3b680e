"""Report formats in one table (evalbridge.views.formats): every door offers every registered format, and a new
format is one new module in evalbridge/reports/renderers/ with no other edit."""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import evalbridge.reports.renderers as renderers
from evalbridge.cli import main
from evalbridge.config import load_config
from evalbridge.errors import InputError
from evalbridge.config.pipeline import run_config
from evalbridge.views import formats
from evalbridge.views.formats import output_formats, report_format, report_formats

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d6 1\n"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d9 1 2.0 a\nq2 Q0 d4 2 1.0 a\nq3 Q0 d6 1 1.0 a\n"
RUN_B = "q1 Q0 d3 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq2 Q0 d4 1 2.0 b\nq2 Q0 d5 2 1.0 b\nq3 Q0 d7 1 1.0 b\n"
METRICS = ["P@2", "nDCG@3", "RR"]

TOY = '''"""A toy report format: one line per system, its means."""

from evalbridge.views.formats import ReportFormat


def render_toy(report):
    return "".join(f"{system}: " + " ".join(f"{label}={res[m]:.6f}" for m, label in zip(report.metrics, report.labels))
                   + "\\n" for system, res in report.results.items())


def check_toy(report):
    return "".join(f"{system} ok={check.ok}\\n" for system, check in report.crosscheck.items())


FORMAT = ReportFormat(name="toy", suffix=".toy", title="toy", render=render_toy, order=99, check=check_toy)
'''


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in (("qrels.txt", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def toy(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The toy format as one new file in the renderers package (its search path extended to a temporary folder)."""
    extra = tmp_path_factory.mktemp("more_renderers")
    (extra / "toy.py").write_text(TOY)
    monkeypatch.setattr(renderers, "__path__", [*renderers.__path__, str(extra)])
    output_formats.cache_clear()
    yield "toy"
    sys.modules.pop("evalbridge.reports.renderers.toy", None)
    output_formats.cache_clear()


def _cli(capsys: pytest.CaptureFixture, *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def _config(folder: Path, output_formats: list[str], **more: object) -> Path:
    path = folder / "eval.yaml"
    path.write_text(json.dumps({"title": "formats", "qrels": "qrels.txt", "runs": {"a": "a.run", "b": "b.run"},
                                "metrics": METRICS, "output": {"dir": "out", "formats": output_formats}, **more}))
    return path


def _as_from_the_command_line(report: object) -> object:
    """The report as `evalbridge eval` builds it: the same but for the door named in the provenance."""
    provenance = {**report.provenance, "invocation": {"door": "command line"}}
    return dataclasses.replace(report, provenance=provenance)


def test_every_registered_format_is_reachable_from_the_cli_a_config_and_python(folder: Path,
                                                                              capsys: pytest.CaptureFixture) -> None:
    """For each registered format: the config writes ``report`` + its suffix holding the renderer's text of the
    evaluation, ``evalbridge run --format`` prints that same text, and ``evalbridge eval --format`` prints it too
    (once the door's name in the provenance is set aside)."""
    names = list(report_formats())
    assert names == ["terminal", "markdown", "csv", "json", "latex", "html"]
    config = load_config(_config(folder, names))
    outcome = run_config(config)
    written = {path.name for path in outcome.files}
    for name in names:
        fmt = report_format(name)
        expected = fmt.render(outcome.report)
        assert (folder / "out" / f"report{fmt.suffix}").read_text() == expected
        assert f"report{fmt.suffix}" in written
        assert _cli(capsys, "run", "eval.yaml", "--format", name, "--no-write") == expected
        via_eval = _cli(capsys, "eval", "qrels.txt", "a.run", "b.run", "-m", *METRICS, "--title", "formats",
                        "--format", name)
        assert via_eval == fmt.render(_as_from_the_command_line(outcome.report))


def test_check_offers_the_formats_that_declare_a_cross_check_view(folder: Path, capsys: pytest.CaptureFixture) -> None:
    """``evalbridge check --format F`` prints the format's check view of the report a config with the same
    cross-check produces; formats without one (csv, latex) are refused by the parser."""
    assert formats.check_formats() == ("terminal", "markdown", "json")
    config = load_config(_config(folder, ["json"], crosscheck={"backends": ["pytrec_eval"]}, runs={"b": "b.run"}))
    report = _as_from_the_command_line(run_config(config, write=False).report)
    for name in formats.check_formats():
        out = _cli(capsys, "check", "qrels.txt", "b.run", "-m", *METRICS, "--backends", "pytrec_eval",
                   "--title", "formats", "--format", name)
        assert out == report_format(name).check(report)
    with pytest.raises(SystemExit):
        main(["check", "qrels.txt", "b.run", "-m", "P@2", "--format", "csv"])


def test_a_new_format_is_one_new_module_and_every_door_offers_it(folder: Path, toy: str,
                                                                 capsys: pytest.CaptureFixture) -> None:
    """A toy renderer dropped as one file into the renderers package is listed, written by a config run as
    ``report.toy``, printed by ``eval`` / ``run`` / ``check --format toy``, and rendered by ``Report.render``:
    all the same text."""
    assert list(report_formats())[-1] == toy
    outcome = run_config(load_config(_config(folder, ["csv", toy])))
    expected = outcome.report.render(toy)
    assert expected.splitlines()[0].startswith("a: P@2=")
    assert (folder / "out" / "report.toy").read_text() == expected
    assert _cli(capsys, "run", "eval.yaml", "--format", toy, "--no-write") == expected
    assert _cli(capsys, "eval", "qrels.txt", "a.run", "b.run", "-m", *METRICS, "--format", toy) == expected
    assert _cli(capsys, "check", "qrels.txt", "b.run", "-m", *METRICS, "--backends", "pytrec_eval",
                "--format", toy) == "b ok=True\n"


def test_an_unknown_format_is_refused_at_every_door_naming_the_registered_ones(folder: Path,
                                                                              capsys: pytest.CaptureFixture) -> None:
    """Python, a config and the command line refuse ``docx`` (no registered format) with the list of choices."""
    with pytest.raises(InputError, match="unknown report format 'docx'; choose one of terminal, markdown, csv"):
        report_format("docx")
    with pytest.raises(InputError, match=r"output\.formats.*'docx'"):
        load_config(_config(folder, ["docx"]))
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["eval", "qrels.txt", "a.run", "-m", "P@2", "--format", "docx"])
    assert "invalid choice: 'docx'" in capsys.readouterr().err


def test_per_query_files_take_their_suffix_and_writer_from_one_table(folder: Path) -> None:
    """``output.per_query`` accepts exactly the per-query table's formats and writes ``per_query`` + suffix."""
    from evalbridge.reports.per_query import PER_QUERY_FORMATS

    path = folder / "pq.yaml"
    path.write_text(json.dumps({"qrels": "qrels.txt", "runs": {"a": "a.run"}, "metrics": METRICS,
                                "output": {"dir": "pq", "formats": [], "per_query": list(PER_QUERY_FORMATS)}}))
    outcome = run_config(load_config(path))
    assert {f"per_query{f.suffix}" for f in PER_QUERY_FORMATS.values()} <= {p.name for p in outcome.files}
    path.write_text(json.dumps({"qrels": "qrels.txt", "runs": {"a": "a.run"}, "metrics": METRICS,
                                "output": {"dir": "pq", "per_query": ["xlsx"]}}))
    with pytest.raises(InputError, match=r"per_query.*'xlsx'"):
        load_config(path)
