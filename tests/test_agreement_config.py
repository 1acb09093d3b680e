"""The ``agreement:`` config section: one door for configs, ``evalbridge agree`` and ``eb.agree``.

A config's section, the command line's flags and the Python call describe the same comparison of two
sets of judgements, are checked by the same rules and give the same numbers and the same report.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import tempfile
import textwrap
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import DOCS, two_judges

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.config import load_config
from evalbridge.errors import InputError
from evalbridge.config.pipeline import run_config
from evalbridge.reports.report import render, report_dict

DL19 = ("data", "real", "trec-dl-2019-passage")
DL19_RUNS = ("bm25", "bm25-rm3", "splade-pp-ed")


def cli(*argv: Any) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``evalbridge argv...`` run in-process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def config_report(path: Path) -> dict[str, Any]:
    """report.json of a config, computed without writing."""
    return json.loads(render(run_config(load_config(path), write=False).report, "json"))


def without_door(report: dict[str, Any]) -> dict[str, Any]:
    """A report.json without the one thing that differs between doors: which door it came through."""
    provenance = dict(report["provenance"])
    provenance.pop("invocation")
    return {**report, "provenance": provenance}


def json_ready(data: dict[str, Any]) -> Any:
    return json.loads(json.dumps(data, allow_nan=False))


def yaml_config(folder: Path, text: str, name: str = "agreement.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


# -- one door -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_config_cli_and_python_give_the_same_report_on_dl19_against_a_noisy_judge(shared: Path,
                                                                                   tmp_path: Path) -> None:
    """TREC DL 2019 NIST judgements against a copy with 15% of the grades changed (seeded, as notebook 05
    does), the three real runs ranked under both: the config's report.json and `evalbridge agree --format
    json` are equal but for the door, and their agreement is `eb.agree(...).to_dict()`."""
    folder = shared.joinpath(*DL19)
    nist = eb.read_qrels(folder / "qrels.dl19-passage.txt")
    rng = random.Random(2019)
    noisy = {q: {d: rng.choice([x for x in range(4) if x != g]) if rng.random() < 0.15 else int(g)
                 for d, g in nist[q].items()} for q in nist}
    eb.write(eb.Qrels(noisy), tmp_path / "noisy.txt")
    runs = {f"run.{name}.top100": str(folder / f"run.{name}.top100.txt") for name in DL19_RUNS}
    config = yaml_config(tmp_path, f"""\
        title: NIST vs noisy
        agreement:
          judges: {{nist: {folder / 'qrels.dl19-passage.txt'}, noisy: {tmp_path / 'noisy.txt'}}}
          runs: {json.dumps(runs)}
          metrics: [nDCG@10, P@10]
        min_relevance: 2
        """)
    from_config = config_report(config)
    code, out, err = cli("agree", folder / "qrels.dl19-passage.txt", tmp_path / "noisy.txt", *runs.values(),
                         "--names", "nist", "noisy", "-m", "nDCG@10", "P@10", "--min-relevance", "2",
                         "--title", "NIST vs noisy", "--format", "json")
    assert (code, err) == (0, "")
    from_cli = json.loads(out)
    assert without_door(from_config) == without_door(from_cli)
    python = eb.agree(nist, noisy, runs, ["nDCG@10", "P@10"], names=("nist", "noisy"), min_relevance=2)
    assert from_config["agreement"] == json_ready(python.to_dict())
    judges = from_config["agreement"]["judges"]
    assert judges["shared_pairs"] == 9260 and 0.74 < judges["cohen_kappa"] < 0.78  # notebook 05's band
    assert from_config["provenance"]["invocation"]["door"] == "config"
    assert from_cli["provenance"]["invocation"]["door"] == "command line"


def _runs(draw: Any, queries: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Three runs over the queries, integer-valued scores (exact in any text format)."""
    runs = {}
    for name in ("x", "y", "z"):
        runs[name] = {q: {d: float(s) for d, s in draw(st.dictionaries(st.sampled_from(DOCS), st.integers(1, 99),
                                                                      min_size=1, max_size=6)).items()}
                      for q in queries}
    return runs


@settings(max_examples=15)
@given(judges=two_judges(), data=st.data(), test=st.sampled_from(["t", "randomization"]),
       level=st.sampled_from([None, 1.0, 2.0]))
def test_config_cli_and_python_agree_on_any_two_judges_and_runs(judges: tuple[dict, dict], data: st.DataObject,
                                                                  test: str, level: float | None) -> None:
    """For any two judges over one pool, three runs, either test and any relevance level: the config door,
    the command line and `eb.agree` give the same agreement, and the config and the command line the
    same report."""
    qrels_a, qrels_b = judges
    runs = _runs(data.draw, sorted(qrels_a))
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        eb.write(eb.Qrels(qrels_a), folder / "human.txt")
        eb.write(eb.Qrels(qrels_b), folder / "llm.txt")
        for run_name, run in runs.items():
            eb.write(eb.Run(run), folder / f"{run_name}.run")
        config = yaml_config(folder, f"""\
            title: human vs llm
            agreement:
              judges: {{human: human.txt, llm: llm.txt}}
              runs: {{x: x.run, y: y.run, z: z.run}}
              metrics: [P@3, RR]
              test: {test}
              n_resamples: 200
            seed: 7
            """ + (f"min_relevance: {level}\n" if level is not None else ""))
        from_config = config_report(config)
        flags = ["--min-relevance", level] if level is not None else []
        code, out, _ = cli("agree", folder / "human.txt", folder / "llm.txt", *(folder / f"{r}.run" for r in "xyz"),
                           "--names", "human", "llm", "-m", "P@3", "RR", "--test", test, "--n-resamples", "200",
                           "--seed", "7", "--title", "human vs llm", "--format", "json", *flags)
    assert code == 0
    from_cli = json.loads(out)
    python = eb.agree(qrels_a, qrels_b, runs, ["P@3", "RR"], names=("human", "llm"), min_relevance=level, test=test,
                      n_resamples=200, seed=7)
    assert from_config["agreement"] == from_cli["agreement"] == json_ready(python.to_dict())
    inputs = from_config["provenance"]["inputs"]
    assert sorted(inputs) == ["agreement.judges.human", "agreement.judges.llm", "agreement.runs.x",
                              "agreement.runs.y", "agreement.runs.z"]
    assert from_config["provenance"]["config"] == from_cli["provenance"]["config"]


def test_bins_given_as_flags_or_keys_group_the_same_grades(tmp_path: Path) -> None:
    """An LLM's 0-10 scores mapped onto a 0-3 human scale: `--bins-b 2.5 5 7.5`, `bins: {llm: [2.5, 5, 7.5]}`
    and `bins_b=[2.5, 5, 7.5]` give the same categories. By hand: 7.5 -> 3, 2.0 -> 0, 4.5 -> 1 and 9 -> 3,
    against human grades 2, 0, 1, 3: three of four pairs agree."""
    (tmp_path / "human.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq2 0 d5 1\nq2 0 d6 3\n")
    (tmp_path / "llm.txt").write_text("q1 0 d1 7.5\nq1 0 d2 2.0\nq2 0 d5 4.5\nq2 0 d6 9\n")
    config = yaml_config(tmp_path, """\
        agreement:
          judges: {human: human.txt, llm: llm.txt}
          bins: {llm: [2.5, 5, 7.5]}
        """)
    from_config = config_report(config)["agreement"]["judges"]
    code, out, _ = cli("agree", tmp_path / "human.txt", tmp_path / "llm.txt", "--names", "human", "llm",
                       "--bins-b", "2.5", "5", "7.5", "--format", "json")
    python = eb.agree(eb.read_qrels(tmp_path / "human.txt"), eb.read_qrels(tmp_path / "llm.txt"),
                      names=("human", "llm"), bins_b=[2.5, 5, 7.5]).judges
    assert code == 0 and from_config == json.loads(out)["agreement"]["judges"] == json_ready(python.to_dict())
    assert from_config["labels_b"] == ["<2.5", "[2.5, 5)", "[5, 7.5)", ">=7.5"]
    assert from_config["observed_agreement"] == 0.75


def test_agreement_runs_named_by_the_config_are_ranked_under_both_judges(tmp_path: Path) -> None:
    """`agreement.runs: [a, b]` reuses the config's runs: under the judge that is also the config's qrels, the
    agreement's means are the report's own means of those runs."""
    (tmp_path / "human.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 1\n")
    (tmp_path / "llm.txt").write_text("q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 2\nq2 0 d4 0\nq2 0 d5 1\n")
    (tmp_path / "a.run").write_text("q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d4 1 1 a\n")
    (tmp_path / "b.run").write_text("q1 Q0 d3 1 3 b\nq1 Q0 d1 2 2 b\nq2 Q0 d5 1 1 b\n")
    config = yaml_config(tmp_path, """\
        qrels: human.txt
        runs: {a: a.run, b: b.run}
        metrics: [P@2, RR]
        agreement:
          judges: {human: human.txt, llm: llm.txt}
          runs: [a, b]
        """)
    report = run_config(load_config(config), write=False).report
    assert set(report.results) == {"a", "b"}
    assert [str(m) for m in load_config(config).agreement.metrics] == ["P@2", "RR"]  # the config's metrics
    for name, results in report.results.items():
        assert report.agreement.results_a[name].means == results.means
    data = report_dict(report)
    assert set(data["systems"]) == {"a", "b"} and data["agreement"]["means"]["human"]["a"] == data["systems"]["a"][
        "metrics"]


# -- every report format ------------------------------------------------------------------------------

def test_every_report_format_carries_the_agreement_section(tmp_path: Path) -> None:
    """terminal, Markdown, JSON, LaTeX, CSV files and the HTML view each hold the agreement as
    `evalbridge agree` renders it (the section's own text, tables and numbers)."""
    (tmp_path / "human.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq1 0 d4 1\nq2 0 d5 0\nq2 0 d6 2\n")
    (tmp_path / "llm.txt").write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 1\nq1 0 d4 2\nq2 0 d5 0\nq2 0 d7 1\n")
    for name, lines in (("x", "q1 Q0 d1 1 2 x\nq2 Q0 d6 1 1 x\n"), ("y", "q1 Q0 d2 1 2 y\nq2 Q0 d5 1 1 y\n")):
        (tmp_path / f"{name}.run").write_text(lines)
    config = yaml_config(tmp_path, """\
        title: judges
        agreement:
          judges: {human: human.txt, llm: llm.txt}
          runs: {x: x.run, y: y.run}
          metrics: [P@1]
        min_relevance: 2
        output: {dir: out, formats: [terminal, markdown, json, csv, latex]}
        """)
    outcome = run_config(load_config(config))
    agreement = outcome.report.agreement
    out = tmp_path / "out"
    written = sorted(p.name for p in out.iterdir() if not p.name.startswith("."))  # not the folder's hidden marker file
    assert written == ["agreement.csv", "agreement_per_query.csv", "agreement_ranking.csv", "provenance.json",
                       "report.csv", "report.json", "report.md", "report.tex", "report.txt"]
    assert str(agreement) in (out / "report.txt").read_text()
    assert agreement.to_markdown().strip() in (out / "report.md").read_text()
    assert json.loads((out / "report.json").read_text())["agreement"] == json_ready(agreement.to_dict())
    latex = (out / "report.tex").read_text()
    # the docs' worked example: kappa 7/17, quadratic 0.6875 (docs/agreement.md derives both by hand)
    assert "Cohen's kappa & 0.4118" in latex and "quadratic-weighted kappa & 0.6875" in latex
    assert agreement.table("latex").rstrip("\n") in latex  # the section's tables, as every format writes them
    assert r"Tau\_ap & tau\_ap (sym.)" not in latex and r"tau\_ap & tau\_ap (sym.)" in latex  # LaTeX-safe headers
    measures = (out / "agreement.csv").read_text().splitlines()
    assert measures[0].startswith("judges,shared_pairs") and measures[1].startswith("llm vs human,5,1,1,")
    assert (out / "agreement_ranking.csv").read_text().splitlines()[1].startswith("P@1,2,")
    assert agreement._repr_html_() in outcome.report._repr_html_()
    per_query = pd.read_csv(out / "agreement_per_query.csv", dtype={"query_id": str}).set_index("query_id")
    pd.testing.assert_frame_equal(per_query, agreement.judges.per_query(), check_dtype=False)
    assert (out / "report.csv").read_text() == (out / "agreement.csv").read_text()  # no systems table: the measures


# -- one rule, one message ----------------------------------------------------------------------------

def _schema_cases() -> list[Any]:
    return [
        pytest.param("agreement:\n  judges: {human: human.txt}\n", 2,
                     "agreement.judges: expected exactly two sets of judgements; got 1 (human)", id="one judge"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: lm.txt}\n", 2,
                     "agreement.judges.llm.path: lm.txt: the file does not exist", id="missing file"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  bins: {lm: [1]}\n", 3,
                     "agreement.bins.lm: unknown judge 'lm'; the judges are human, llm. Fix: did you mean 'llm'?",
                     id="unknown judge"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  runs: {x: x.run}\n", 3,
                     "agreement.runs: ranking systems needs at least two runs", id="one run"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  runs: [x, y]\n", 3,
                     "agreement.runs[0]: unknown run 'x'", id="unknown run name"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  runs:\n"
                     "    x: {format: labels, data: {q1: [1, 0]}}\n    y: x.run\n", 4,
                     "agreement.runs.x: format 'labels' holds its own judgements", id="run with judgements"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  alpha_levl: nominal\n", 3,
                     "agreement.alpha_levl: unknown key 'alpha_levl'. Fix: did you mean 'alpha_level'?",
                     id="typo"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  bins: [2, 1]\n", 3,
                     "agreement.bins: bins must be strictly increasing", id="decreasing bins"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  test: wilcoxon\n", 3,
                     "agreement.test", id="test the ranking agreement lacks"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\n  metrics: [ndgc@10]\n", 3,
                     "agreement.metrics[0]", id="bad metric"),
        pytest.param("qrels: human.txt\nagreement:\n  judges: {human: human.txt, llm: llm.txt}\n", 1,
                     "qrels: qrels are given but no runs", id="qrels without runs"),
        pytest.param("agreement:\n  judges: {human: human.txt, llm: llm.txt}\ncomparison: {baseline: x}\n", 3,
                     "comparison: a comparison needs at least two runs; the config has none", id="comparison"),
    ]


@pytest.mark.parametrize("text, line, message", _schema_cases())
def test_agreement_schema_errors_name_the_file_line_and_key_and_exit_2(tmp_path: Path, text: str, line: int,
                                                                       message: str) -> None:
    """Every mistake in the section is refused when the config is loaded, naming file:line, the key path and
    a fix; `evalbridge run` exits 2 with that one line."""
    for name in ("human.txt", "llm.txt"):
        (tmp_path / name).write_text("q1 0 d1 1\n")
    (tmp_path / "x.run").write_text("q1 Q0 d1 1 1 x\n")
    config = yaml_config(tmp_path, text)
    with pytest.raises(InputError) as error:
        load_config(config)
    assert str(error.value).startswith(f"{config}:{line}: {message}")
    code, out, err = cli("run", config)
    assert (code, out) == (2, "") and err == f"evalbridge: error: {error.value}\n"


@pytest.mark.parametrize("flag, key, value", [("--alpha", "alpha", "1.5"), ("--n-resamples", "n_resamples", "0"),
                                              ("--test", "test", "wilcoxon"),
                                              ("--alpha-level", "alpha_level", "ratio")])
def test_agree_flags_and_config_keys_are_refused_by_the_same_rule(tmp_path: Path, flag: str, key: str,
                                                                  value: str) -> None:
    """A bad `evalbridge agree` flag gets the message the config key gets, the flag in place of file:line."""
    for name in ("human.txt", "llm.txt"):
        (tmp_path / name).write_text("q1 0 d1 1\n")
    config = yaml_config(tmp_path, f"agreement:\n  judges: {{human: human.txt, llm: llm.txt}}\n  {key}: {value}\n")
    with pytest.raises(InputError) as error:
        load_config(config)
    from_config = str(error.value).removeprefix(f"{config}:3: agreement.{key}")
    code, _, err = cli("agree", tmp_path / "human.txt", tmp_path / "llm.txt", flag, value)
    assert code == 2 and err == f"evalbridge: error: {flag}{from_config}\n"


def test_agree_refuses_both_bins_for_both_and_bins_for_one(tmp_path: Path) -> None:
    """`--bins` and `--bins-a` together are ambiguous: exit 2 saying which to drop."""
    for name in ("human.txt", "llm.txt"):
        (tmp_path / name).write_text("q1 0 d1 1\n")
    code, _, err = cli("agree", tmp_path / "human.txt", tmp_path / "llm.txt", "--bins", "1", "--bins-a", "2")
    assert code == 2 and "either --bins (both judges) or --bins-a / --bins-b" in err


def test_agree_prints_the_terminal_report_of_the_equivalent_config(tmp_path: Path) -> None:
    """`evalbridge agree` (default format) prints exactly what `evalbridge run` prints for the config holding
    the same agreement section."""
    (tmp_path / "human.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d5 0\nq2 0 d6 2\n")
    (tmp_path / "llm.txt").write_text("q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 1\nq2 0 d5 0\nq2 0 d6 1\n")
    config = yaml_config(tmp_path, """\
        title: judges
        agreement:
          judges: {human: human.txt, llm: llm.txt}
          alpha_level: interval
        """)
    code, from_run, _ = cli("run", config, "--no-write")
    assert code == 0
    code, from_agree, _ = cli("agree", tmp_path / "human.txt", tmp_path / "llm.txt", "--names", "human", "llm",
                              "--alpha-level", "interval", "--title", "judges")
    assert code == 0 and from_agree == from_run and "Krippendorff's alpha (interval)" in from_agree


def test_a_judge_in_a_format_with_a_level_keeps_its_own_relevance_level(tmp_path: Path) -> None:
    """Without a top-level min_relevance, an LLM judge given as `graded` scores with `min_relevance: 7` is
    relevant from 7 while the human TREC judge keeps the default 1: the same as `eb.agree` on
    `eb.Qrels(scores, min_relevance=7)`. By hand: human 2, 0, 1, 1 against scores 8.5, 1, 6, 7 are relevant /
    not / relevant / relevant against relevant / not / not / relevant: [[1, 0], [1, 2]], p_o = 3/4,
    p_e = (1 x 2 + 3 x 2) / 16 = 1/2, kappa = (3/4 - 1/2) / (1 - 1/2) = 1/2."""
    (tmp_path / "human.txt").write_text("q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\n")
    (tmp_path / "llm.yaml").write_text("q1: {d1: 8.5, d2: 1.0, d3: 6}\nq2: {d4: 7}\n")
    config = yaml_config(tmp_path, """\
        agreement:
          judges:
            human: human.txt
            llm: {path: llm.yaml, format: graded, min_relevance: 7}
          bins: {llm: [2.5, 5, 7.5]}
        """)
    judges = run_config(load_config(config), write=False).report.agreement.judges
    python = eb.agree(eb.read_qrels(tmp_path / "human.txt"),
                      eb.Qrels({"q1": {"d1": 8.5, "d2": 1.0, "d3": 6}, "q2": {"d4": 7}}, min_relevance=7),
                      names=("human", "llm"), bins_b=[2.5, 5, 7.5]).judges
    assert (judges.level_a, judges.level_b) == (1, 7) and judges.to_dict() == python.to_dict()
    assert judges.binary_confusion == ((1, 0), (1, 2)) and judges.binary_kappa == pytest.approx(0.5)
