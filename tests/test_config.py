"""Config files (evalbridge.config): validation before computing, clear errors, running, outputs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import textwrap
from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge.config import load_config, load_configs
from evalbridge.config.pipeline import run_config

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\nq2 0 d5 1\nq3 0 d6 1\n"
RUN_A = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq1 Q0 d3 3 1.0 a\nq2 Q0 d9 1 2.0 a\nq2 Q0 d4 2 1.0 a\nq3 Q0 d6 1 1.0 a\n"
RUN_B = "q1 Q0 d3 1 3.0 b\nq1 Q0 d1 2 2.0 b\nq2 Q0 d4 1 2.0 b\nq2 Q0 d5 2 1.0 b\nq3 Q0 d7 1 1.0 b\n"


@pytest.fixture
def folder(tmp_path):
    """A folder with TREC qrels and two runs under data/."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "qrels.txt").write_text(QRELS)
    (data / "a.run").write_text(RUN_A)
    (data / "b.run").write_text(RUN_B)
    return tmp_path


def write(folder: Path, text: str, name: str = "eval.yaml") -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


BASE = """\
qrels: data/qrels.txt
runs:
  a: data/a.run
  b: data/b.run
metrics: [P@2, ndcg@3, mrr]
"""


def error_of(path: Path) -> str:
    with pytest.raises(eb.InputError) as info:
        load_configs(path)
    return str(info.value)


def test_minimal_config_loads_into_frozen_dataclasses(folder):
    """Paths resolve against the config's folder; metrics are parsed; the result is immutable."""
    config = load_config(write(folder, BASE))
    assert config.runs["a"].path == (folder / "data" / "a.run").resolve()
    assert config.runs["a"].format == "trec" and config.qrels.format == "trec"
    assert [str(m.metric) for m in config.metrics] == ["P@2", "nDCG@3", "RR"]
    assert [m.label for m in config.metrics] == ["P@2", "ndcg@3", "mrr"]  # named as written
    assert config.output.dir == (folder / "reports" / "eval").resolve()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.backend = "ranx"
    with pytest.raises(TypeError):
        config.runs["c"] = config.runs["a"]


def test_paths_are_relative_to_the_config_not_the_working_directory(folder, tmp_path_factory, monkeypatch):
    """Loading from another working directory finds the same files."""
    path = write(folder, BASE)
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    assert load_config(path).qrels.path == (folder / "data" / "qrels.txt").resolve()


@pytest.mark.parametrize("text, expected", [
    (BASE + "metrcs: [P@5]\n", ["eval.yaml:6", "metrcs: unknown key 'metrcs'", "did you mean 'metrics'?"]),
    (BASE + "comparison: {basline: a}\n", ["comparison.basline: unknown key", "did you mean 'baseline'?"]),
    (BASE.replace("mrr]", "mrr, ndgc@10]"), ["eval.yaml:5", "metrics[3]", "unknown metric 'ndgc'",
                                             "did you mean"]),
    (BASE.replace("data/b.run", "data/bb.run"), ["eval.yaml:4", "runs.b.path", "data/bb.run: the file does not exist",
                                                 "did you mean 'data/b.run'?"]),
    (BASE + "ties: docid-desc\n", ["ties: must be one of", "got 'docid-desc'", "did you mean 'docid_desc'?"]),
    (BASE + "backend: ranks\n", ["backend: must be one of", "did you mean 'ranx'?"]),
    (BASE + "min_relevance: high\n", ["min_relevance must be a finite number; got 'high'"]),
    (BASE + "comparison: {baseline: c}\n", ["comparison.baseline: must be one of 'a', 'b'; got 'c'"]),
    (BASE + "comparison: {baseline: a, alpha: 1.5}\n", ["comparison.alpha must be a number in (0, 1); got 1.5"]),
    (BASE + "comparison: {baseline: a, correction: sidak}\n", ["comparison.correction must be one of"]),
    (BASE + "gates: {R@10: '>= 0.5'}\n", ["gates.R@10: R@10 is not one of the metrics", "add R@10 to metrics"]),
    (BASE + "gates: {P@2: '>= baseline'}\n", ["relative to the baseline, but there is none"]),
    (BASE + "gates: {'c: P@2': '>= 0.1'}\n", ["system 'c' is not one of the runs"]),
    (BASE + "gates: {P@2: 0.5}\n", ["gates.P@2: cannot read gate 0.5"]),
    (BASE + "bands: {nDCG: [0.7, 0.5, 0.9]}\n", ["bands.nDCG: the bounds must increase"]),
    (BASE + "output: {formats: [markdown, docx]}\n", ["output.formats[1]: must be one of"]),
    (BASE + "output: {plots: {curves: [nDGC]}}\n", ["output.plots.curves[0]", "did you mean 'ndcg'?"]),
    (BASE + "crosscheck: {backends: [trec_eval]}\n", ["crosscheck.backends[0]: must be one of"]),
    (BASE + "seed: -1\n", ["seed must be an integer >= 0; got -1"]),
    (BASE.replace("a: data/a.run", "a: {path: data/a.run, n_relevant: {q1: 2}}"),
     ["runs.a.n_relevant: option 'n_relevant' does not apply to format 'trec'", "it applies to labels"]),
    (BASE.replace("a: data/a.run", "a: {format: labels, data: {q1: [1]}}"),
     ["runs.a.format: format 'labels' holds its own judgements", "remove qrels:"]),
    (BASE.replace("qrels: data/qrels.txt\n", ""), ["runs.a: format 'trec' is a run without judgements",
                                                   "add qrels:"]),
    (BASE.replace("metrics: [P@2, ndcg@3, mrr]", "metrics: []"), ["metrics: expected a non-empty list"]),
    ("runs: {a: data/a.run}\n", ["has no 'metrics' key"]),
    (BASE + "backend: pytrec_eval\nmetrics: [nDCG(ideal=run)@3]\n", ["'metrics' is given twice (lines 5 and 7)"]),
])
def test_invalid_configs_name_file_line_key_value_and_fix(folder, text, expected):
    """Every validation error names the config file (and line), the key path, the value, and a fix."""
    message = error_of(write(folder, text))
    assert str(folder / "eval.yaml") in message
    for part in expected:
        assert part in message


def test_metric_a_backend_cannot_compute_is_refused_at_load(folder):
    """A metric the chosen backend does not support fails at load time with the backend's reason."""
    message = error_of(write(folder, BASE.replace("mrr]", "mrr, nDCG(ideal=run)@3]") + "backend: pytrec_eval\n"))
    assert "metrics[3]: backend 'pytrec_eval' cannot compute nDCG(ideal=run)@3" in message
    assert "evalbridge metrics" in message


def test_yaml_syntax_errors_and_python_tags_are_refused(folder):
    """Broken YAML gives the line; python object tags are refused (safe loading only)."""
    assert "eval.yaml:3" in error_of(write(folder, "qrels: x\nruns: [a\nmetrics: }\n"))
    assert "not valid YAML" in error_of(write(folder, BASE + "title: !!python/object/apply:os.system ['echo']\n"))


def test_validation_happens_before_reading_any_data(folder, monkeypatch):
    """A bad key at the end of the file fails before any qrels or run is read."""
    import evalbridge.io.trec

    def forbidden(*args, **kwargs):
        raise AssertionError("data was read before the config was validated")

    monkeypatch.setattr(evalbridge.io.trec, "read_qrels", forbidden)
    monkeypatch.setattr(evalbridge.io.trec, "read_run", forbidden)
    with pytest.raises(eb.InputError, match="unknown key 'sed'"):
        load_configs(write(folder, BASE + "sed: 3\n"))


def test_missing_config_file_is_an_input_error(tmp_path):
    """A config path that does not exist is an InputError naming it."""
    with pytest.raises(eb.InputError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_run_config_evaluates_each_system_like_evaluate(folder):
    """Means equal evalbridge.evaluate on the same files; no file is written with write=False."""
    outcome = run_config(load_config(write(folder, BASE)), write=False)
    direct = eb.evaluate(eb.read_qrels(folder / "data" / "qrels.txt"), eb.read_run(folder / "data" / "b.run"),
                         ["P@2", "ndcg@3", "mrr"])
    assert outcome.report.results["b"].means == direct.means
    assert outcome.files == () and outcome.exit_code == 0
    assert not (folder / "reports").exists()


def test_run_config_writes_every_output_atomically(folder):
    """Reports, per-query files, per-system JSON, provenance and plots land in output.dir, no temporary left."""
    config = load_config(write(folder, BASE + textwrap.dedent("""\
        comparison: {baseline: a, n_resamples: 200}
        output:
          dir: out
          formats: [markdown, json, csv, latex, terminal]
          per_query: [csv, parquet]
          plots: {formats: [png], curves: [P], k: [1, 2, 3]}
        """)))
    outcome = run_config(config)
    names = sorted(str(p.relative_to(folder / "out")) for p in outcome.files)
    assert {"report.md", "report.json", "report.csv", "report.tex", "report.txt", "comparison.csv",
            "provenance.json", "per_query.csv", "per_query.parquet", "systems/a.json", "systems/b.json",
            "plots/curve_P-at-k.png", "plots/distribution_P-at-2.png", "plots/difference_mrr.png"} <= set(names)
    assert all(p.is_file() for p in outcome.files)
    leftovers = [n for _, _, files in os.walk(folder / "out") for n in files if n.startswith(".tmp-")]
    assert leftovers == []
    system = json.loads((folder / "out" / "systems" / "b.json").read_text())
    assert system["metrics"] == outcome.report.results["b"].means


def test_provenance_records_versions_conventions_hashes_and_counts(folder):
    """Provenance holds versions, conventions, the config and its sha256, input sha256 and query counts."""
    path = write(folder, BASE + "missing_queries: drop\n")
    outcome = run_config(load_config(path), write=False)
    prov = outcome.report.provenance
    assert prov["evalbridge_version"] == eb.__version__
    assert prov["conventions"] == {"ties": "docid_desc", "score_precision": "float64", "missing_queries": "drop",
                                   "no_relevant": "zero"}
    assert prov["invocation"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert prov["config"]["missing_queries"] == "drop"
    assert prov["inputs"]["runs.b"]["sha256"] == hashlib.sha256(RUN_B.encode()).hexdigest()
    assert prov["inputs"]["qrels"]["path"] == "data/qrels.txt"
    assert prov["queries"]["a"] == {"evaluated": 3, "missing_from_run": 0, "ignored_run_only": 0, "without_relevant": 0}


def test_failed_gate_makes_the_exit_code_one_with_a_reason(folder):
    """A failing gate: exit_code 1 and one line naming system, metric, value and threshold."""
    outcome = run_config(load_config(write(folder, BASE + textwrap.dedent("""\
        comparison: {baseline: a, n_resamples: 100}
        gates: {mrr: ">= 0.9", P@2: ">= baseline - 0.5"}
        """))), write=False)
    assert outcome.exit_code == 1
    assert outcome.failures == ["gate FAILED: b mrr = 0.6667, needs >= 0.9 (>= 0.9)"]


def test_unexplained_crosscheck_difference_makes_the_exit_code_one(folder, monkeypatch):
    """A cross-check with unexplained differences fails the run (exit_code 1)."""
    class Fake:
        ok = False
        unexplained = [("P@2", "q1")]
        differences = unexplained

    monkeypatch.setattr("evalbridge.cross_check.checking.crosscheck", lambda *a, **k: Fake())
    outcome = run_config(load_config(write(folder, BASE + "crosscheck: {backends: [pytrec_eval]}\n")),
                         write=False)
    assert outcome.exit_code == 1
    assert outcome.failures == ["cross-check a: 1 unexplained difference(s)",
                                "cross-check b: 1 unexplained difference(s)"]


def test_rag_formats_carry_their_own_judgements(folder):
    """labels, pairs and records runs need no qrels; values match the adapters used directly (pairs and records
    hold every judgement of their questions, so they agree on q1: one set of judgements)."""
    path = write(folder, """\
        runs:
          labels: {format: labels, data: {q1: [1, 0, 1], q2: [0, 1]}, n_relevant: {q1: 3}}
          pairs: {format: pairs, data: {q1: [[x, y, z], [z]], q2: [[u], [u, v]]}}
          records: {format: records, data: {q1: {retrieved: [x, z], relevant: {z: 1}}}}
        metrics: [R@3, RR]
        """)
    results = run_config(load_config(path), write=False).report.results
    assert results["labels"]["R@3"] == eb.evaluate(*eb.from_labels({"q1": [1, 0, 1], "q2": [0, 1]},
                                                                   {"q1": 3}), "R@3")["R@3"]
    assert results["pairs"].query("RR") == {"q1": 1 / 3, "q2": 1.0}
    assert results["records"]["RR"] == 0.5


def test_llm_graded_qrels_with_ranked_runs_keep_float_grades(folder):
    """graded qrels + ranked runs: float grades stay exact for nDCG, min_relevance binarises P."""
    path = write(folder, """\
        qrels: {format: graded, data: {q1: {A: 8.0, B: 7.0, C: 6.0, D: 5.0}}}
        runs:
          r: {format: ranked, data: {q1: [C, E, A, F, B, G, H, I, J, D]}}
        min_relevance: 7
        metrics: [nDCG(gain=exp)@10, P@5]
        """)
    res = run_config(load_config(path), write=False).report.results["r"]
    assert res["nDCG(gain=exp)@10"] == pytest.approx(0.654, abs=5e-4)  # the worked example of 003_2568de527c81821d.txt
    assert res["P@5"] == pytest.approx(2 / 5)  # A (8.0) and B (7.0) reach 7


def test_tabular_inputs_with_column_names(folder):
    """csv qrels and a parquet run with custom column names are read through interop."""
    import pandas as pd

    pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0]}).to_csv(folder / "q.csv", index=False)
    pd.DataFrame({"qid": ["1", "1"], "docno": ["b", "a"], "sim": [2.0, 1.0]}).to_parquet(folder / "r.parquet")
    path = write(folder, """\
        qrels: {path: q.csv, columns: {query: qid, doc: docno, grade: rel}}
        runs:
          r: {path: r.parquet, columns: {query: qid, doc: docno, score: sim}}
        metrics: [RR]
        """)
    assert run_config(load_config(path), write=False).report.results["r"].query("RR") == {"1": 0.5}


def test_several_documents_are_several_evaluations(folder):
    """'---' separates evaluations; errors name the document; output dirs must differ."""
    two = BASE + "output: {dir: one}\n---\n" + BASE + "output: {dir: two}\n"
    configs = load_configs(write(folder, two))
    assert [c.output.dir.name for c in configs] == ["one", "two"] and configs[1].document == 1
    with pytest.raises(eb.InputError, match="holds 2 evaluations"):
        load_config(folder / "eval.yaml")
    bad = BASE + "---\n" + BASE + "colour: red\n"
    assert "document 2: colour: unknown key" in error_of(write(folder, bad))
    same = BASE + "output: {dir: x}\n---\n" + BASE + "output: {dir: x}\n"
    assert "same output.dir" in error_of(write(folder, same))


def test_progress_callback_counts_steps(folder):
    """on_step gets (description, done, total) with done increasing up to total - 1."""
    seen = []
    run_config(load_config(write(folder, BASE + "comparison: {baseline: a, n_resamples: 100}\n")),
               write=False, on_step=lambda text, done, total: seen.append((text, done, total)))
    assert [d for _, d, _ in seen] == list(range(len(seen)))
    assert seen[-1][1] == seen[-1][2] - 1
    assert [t for t, _, _ in seen] == ["reading the qrels", "evaluating a", "evaluating b",
                                       "comparing with the baseline", "writing the reports"]


def test_bad_inline_data_names_the_config_and_the_key(folder):
    """An error inside inline data (found while reading) names the config file, the line and the run's key."""
    config = load_config(write(folder, "runs:\n  rag: {format: labels, data: {q1: [1, x, 1]}}\nmetrics: [P@3]\n"))
    with pytest.raises(eb.InputError) as info:
        run_config(config, write=False)
    message = str(info.value)
    assert message.startswith(f"{folder / 'eval.yaml'}:2: runs.rag (labels): query 'q1': label at position 2")
    assert message.count("Fix:") == 1


def test_systems_with_their_own_qrels_may_resolve_metrics_differently(folder):
    """Label runs whose qrels have different top grades (graded MAP max_grade 2 vs 1) still compare and plot."""
    path = write(folder, """\
        runs:
          two: {format: labels, data: {q1: [2, 0, 1], q2: [1, 1, 0], q3: [0, 2, 1]}}
          one: {format: labels, data: {q1: [1, 0, 1], q2: [0, 1, 0], q3: [1, 1, 0]}}
        metrics: [wmap@3, P@1]
        comparison: {baseline: two, n_resamples: 100}
        output: {dir: out, plots: {formats: [png]}}
        """)
    outcome = run_config(load_config(path))
    row = outcome.report.comparison.rows[0]
    assert row.metric == "wmap@3"  # named as asked; the metric as the first system resolved it beside it
    assert outcome.report.comparison.names[0].to_dict() == {"label": "wmap@3", "asked": "wmap@3",
                                                            "metric": "AP(max_grade=2,weights=graded)@3"}
    assert row.system_mean == pytest.approx(outcome.report.results["one"]["wmap@3"])
    assert (folder / "out" / "plots" / "distribution_P-at-1.png").is_file()
