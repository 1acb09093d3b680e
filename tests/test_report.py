"""Reports (evalbridge.reports.report): the five renderers, per-query files, bands, atomic writes."""

from __future__ import annotations

import csv
import io
import json
import os
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.views.table import p_value
from evalbridge.views.decision import decision_lines
from evalbridge.decisions.compare import compare_systems
from evalbridge.decisions.gates import check_gates, parse_gates
from evalbridge.reports.per_query import per_query_frame, write_per_query
from evalbridge.reports.writing import atomic_file, write_file_atomic
from evalbridge.reports.report import (
    QUALITY_BANDS, Report, band_of, file_sha256, means_frame, render, system_json,
)

METRICS = ["nDCG@10", "P@5", "map", "mrr"]


@pytest.fixture(scope="module")
def results():
    """Three systems on 30 synthetic queries; 'hybrid' is clearly better than 'bm25'."""
    rng = random.Random(0)
    docs = [f"d{i}" for i in range(20)]
    qrels = {f"q{q}": {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, 8)} for q in range(30)}
    out = {}
    for name, bias in (("bm25", 0.0), ("dense", 0.5), ("hybrid", 2.0)):
        run = {q: {d: rng.random() + bias * qrels[q].get(d, 0) for d in rng.sample(docs, 12)} for q in qrels}
        out[name] = eb.evaluate(qrels, run, METRICS)
    return out


@pytest.fixture(scope="module")
def report(results):
    """A report with a comparison, gates, bands and provenance."""
    labels = [str(m) for m in results["bm25"].metrics]
    comparison = compare_systems(results, labels, baseline="bm25", n_resamples=500)
    gates = check_gates(parse_gates({"P@5": ">= 0.6", "ndcg@10": ">= baseline"}), results, baseline="bm25")
    return Report(results=results, title="synthetic", comparison=comparison, gates=gates, bands=QUALITY_BANDS,
                  provenance={"evalbridge_version": eb.__version__, "seed": 0})


@pytest.mark.parametrize("value, band", [(0.49, "poor"), (0.5, "fair"), (0.69, "fair"), (0.7, "good"),
                                         (0.849, "good"), (0.85, "excellent"), (1.0, "excellent")])
def test_band_of_puts_a_mean_in_the_highest_band_whose_lower_bound_it_reaches(value, band):
    """nDCG@K bands of 001_7752ff7570d0df9e.txt (the RAG guide's rating table): <0.5 poor, 0.5-0.7 fair, 0.7-0.85 good, >0.85 excellent."""
    assert band_of("ndcg@5", value) == band


def test_band_of_has_one_table_per_metric_family_and_takes_custom_bands():
    """P, Recall and MRR have their own bounds; a metric-specific entry beats the family; MAP has none."""
    assert (band_of("P@5", 0.6), band_of("recall@5", 0.6), band_of("mrr", 0.6)) == ("fair", "fair", "good")
    assert band_of("recall@5", 0.59) == "poor"
    assert band_of("map", 0.99) is None
    assert band_of("nDCG@10", 0.6, {"nDCG@10": (0.1, 0.2, 0.3), "nDCG": (0.9, 0.95, 0.99)}) == "excellent"


def test_csv_holds_full_precision_means(report, results):
    """The CSV table is systems x metrics with the exact means."""
    rows = list(csv.DictReader(io.StringIO(render(report, "csv"))))
    assert [r["system"] for r in rows] == ["bm25", "dense", "hybrid"]
    assert float(rows[2]["nDCG@10"]) == results["hybrid"]["nDCG@10"]
    assert list(rows[0]) == ["system", "nDCG@10", "P@5", "map", "mrr", "queries_evaluated", "missing_from_run",
                             "ignored_run_only"]


def test_json_report_has_systems_comparison_gates_bands_and_provenance(report, results):
    """The JSON report holds every section, is strict JSON, and means equal Results."""
    data = json.loads(render(report, "json"))
    assert data["systems"]["dense"]["metrics"]["map"] == pytest.approx(results["dense"]["map"])
    assert data["systems"]["dense"]["queries"] == {"evaluated": 30, "missing_from_run": 0, "ignored_run_only": 0}
    assert {"comparison", "gates", "bands", "provenance"} <= set(data)
    assert data["comparison"]["settings"]["baseline"] == "bm25"
    assert data["bands"]["systems"]["hybrid"]["nDCG@10"] == band_of("ndcg@10", results["hybrid"]["ndcg@10"])
    assert [g["passed"] for g in data["gates"]] == [g.passed for g in report.gates]


def test_markdown_marks_significant_improvements(report):
    """A significantly better system gets ▲ in the table; the legend names the test and correction."""
    text = render(report, "markdown")
    hybrid = next(line for line in text.splitlines() if line.startswith("| hybrid"))
    assert hybrid.count("▲") == 4
    bm25 = next(line for line in text.splitlines() if line.startswith("| bm25"))
    assert "▲" not in bm25 and "▼" not in bm25
    assert "two-sided paired t-test, Holm-corrected over 8 comparisons" in text
    assert "## Gates" in text and "**FAIL**" in text and "## Provenance" in text


def test_latex_is_a_booktabs_table_with_escaped_labels(report):
    """LaTeX: booktabs rules, bold best per column, arrows, provenance as % comments, escaped text."""
    text = render(Report(results=report.results, title="R_1 & 50%", comparison=report.comparison), "latex")
    assert r"\toprule" in text and r"\bottomrule" in text
    assert r"\textbf{" in text and r"$^{\uparrow}$" in text
    assert r"R\_1 \& 50\%" in text
    assert text.startswith("% R_1 & 50%")


def test_terminal_is_short_and_lists_failed_gates(report):
    """The terminal view: the decision (one line per failed gate), table, legend, bands, provenance and a gate
    count."""
    text = render(report, "terminal")
    failed = [g for g in report.gates if not g.passed]
    assert failed and text.count("gate FAILED") == len(failed)
    assert "gate FAILED: dense P@5" in text
    assert f"{len(report.gates) - len(failed)} passed, {len(failed)} failed, 0 inconclusive; the run fails" in text
    block = len(decision_lines(report.decision, report.digits)) + 3  # the decision: a heading, its lines, two blanks
    assert len(text.splitlines()) < 25 + 4 + len(report.comparison.rows) + block  # + the differences: title, head, rule


def test_unknown_format_is_refused(report):
    """An unknown renderer name is an InputError listing the formats."""
    with pytest.raises(eb.InputError, match="markdown"):
        render(report, "docx")


def test_per_query_frame_is_tidy(results):
    """One row per (system, query), one column per metric; values equal Results.per_query."""
    frame = per_query_frame(results)
    assert list(frame.columns[:2]) == ["system", "query_id"]
    assert len(frame) == 90
    dense = frame[frame.system == "dense"].set_index("query_id")["nDCG@10"]
    assert dense.to_dict() == results["dense"].query("nDCG@10")


def test_per_query_parquet_keeps_provenance_in_metadata(results, tmp_path):
    """Parquet round-trips the values and carries the provenance JSON in the schema metadata."""
    import pyarrow.parquet as pq

    path = write_per_query(results, tmp_path / "pq.parquet", fmt="parquet", provenance={"seed": 7})
    table = pq.read_table(path)
    assert table.num_rows == 90
    assert json.loads(table.schema.metadata[b"evalbridge.provenance"]) == {"seed": 7}
    back = write_per_query(results, tmp_path / "pq.csv", fmt="csv")
    assert back.read_text().startswith("system,query_id,nDCG@10")


def test_system_json_holds_the_means_under_metrics_plus_the_provenance(results):
    """Per-system JSON: {"metrics": {...}} (the output shape of 003_2568de527c81821d.txt), plus provenance."""
    data = system_json(results["bm25"], {"seed": 1})
    assert set(data) == {"metrics", "provenance"}
    assert data["metrics"]["nDCG@10"] == results["bm25"]["ndcg@10"]


def test_means_frame_keeps_the_spelling_asked_and_records_the_resolved_metric():
    """A binary metric evaluated at level 2 keeps the column P@1 (the spelling asked), found by its resolved
    name P(rel=2)@1 too; the report's names record P(rel=2)@1 beside the label."""
    res = eb.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"b": 0.9, "a": 0.1}}, ["P@1"], min_relevance=2)
    for shown in ("P@1", "P(rel=2)@1"):
        report = Report(results={"s": res}, metrics=[shown])
        frame = means_frame(report)
        assert list(frame.columns) == ["P@1"] and frame.iloc[0, 0] == 0.0
        assert [r.to_dict() for r in report.names] == [{"label": "P@1", "asked": "P@1", "metric": "P(rel=2)@1"}]


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path):
    """The target holds the new content; no temporary file remains in the directory."""
    target = tmp_path / "sub" / "r.md"
    write_file_atomic(target, "old")
    write_file_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert os.listdir(target.parent) == ["r.md"]


def test_interrupted_write_leaves_the_old_report(tmp_path):
    """An exception while writing leaves the previous file intact and removes the temporary."""
    target = tmp_path / "r.json"
    target.write_text("complete")
    with pytest.raises(RuntimeError):
        with atomic_file(target) as tmp:
            tmp.write_text("half-wri")
            raise RuntimeError("interrupted")
    assert target.read_text() == "complete"
    assert os.listdir(tmp_path) == ["r.json"]


def test_file_sha256_is_hashlib_sha256(tmp_path):
    """The digest of a file's bytes (known value of b'abc')."""
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    assert file_sha256(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(windows=st.integers(0, 3), tail=st.binary(max_size=300))
def test_file_sha256_hashes_every_window_of_a_mapped_file(tmp_path, monkeypatch, windows: int, tail: bytes):
    """Files of 0 to 3 whole windows plus any tail (empty files too) hash to hashlib's digest of their
    bytes, the windows made as small as mmap allows so that every boundary case is reached."""
    import hashlib
    import mmap

    from evalbridge.reports import report

    monkeypatch.setattr(report, "_HASH_WINDOW", mmap.ALLOCATIONGRANULARITY)
    data = random.Random(len(tail)).randbytes(windows * mmap.ALLOCATIONGRANULARITY) + tail
    path = tmp_path / "f"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()


def test_file_sha256_reads_what_is_not_a_regular_file(tmp_path):
    """A FIFO (a pipe given as an input path) cannot be mapped: its bytes are read and hashed."""
    import hashlib
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"abc" * 1000))
    writer.start()
    assert file_sha256(fifo) == hashlib.sha256(b"abc" * 1000).hexdigest()
    writer.join()


def test_plots_write_png_and_svg_files(results, tmp_path):
    """Distribution, cutoff-curve and difference plots are real PNG/SVG files, written with Agg."""
    import matplotlib

    from evalbridge.reports.plots import plot_cutoff_curves, plot_differences, plot_distribution

    values = {s: r.query("nDCG@10") for s, r in results.items()}
    written = plot_distribution(values, "nDCG@10", tmp_path / "dist", formats=["png", "svg"])
    written += plot_cutoff_curves({s: {1: 0.2, 5: 0.4, 10: 0.5} for s in results}, "nDCG", tmp_path / "curve")
    written += plot_differences(values, "bm25", "nDCG@10", tmp_path / "diff")
    assert [p.name for p in written] == ["dist.png", "dist.svg", "curve.png", "diff.png"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in written[1].read_bytes()[:400]
    assert matplotlib.get_backend().lower() == "agg"
    assert sorted(os.listdir(tmp_path)) == ["curve.png", "diff.png", "dist.png", "dist.svg"]


def test_plots_refuse_unknown_format_and_baseline(results, tmp_path):
    """An unknown format or baseline is an InputError; a lone baseline has no difference plot."""
    from evalbridge.reports.plots import plot_differences, plot_distribution

    values = {s: r.query("P@5") for s, r in results.items()}
    with pytest.raises(eb.InputError, match="unknown plot format 'gif'"):
        plot_distribution(values, "P@5", tmp_path / "x", formats=["gif"])
    with pytest.raises(eb.InputError, match="baseline 'nope'"):
        plot_differences(values, "nope", "P@5", tmp_path / "y")
    assert plot_differences({"bm25": values["bm25"]}, "bm25", "P@5", tmp_path / "z") == []


@pytest.mark.parametrize("let_pass", [True, False])
def test_the_gate_summary_counts_passed_failed_and_inconclusive_apart(results, let_pass):
    """3 passed, 1 failed, 2 inconclusive: every format says so, and what the inconclusive ones did to the run
    (counting a let-pass inconclusive gate as passed read '5/6 gates passed')."""
    from evalbridge.decisions.gates import GateResult, parse_gate

    gate = parse_gate("ndcg@10", ">= baseline - 0.01 at 95%")
    outcomes = [("passed", True)] * 3 + [("failed", False)] + [("inconclusive", let_pass)] * 2
    gates = [GateResult(gate, "dense", 0.5, 0.49, ok, outcome=o) for o, ok in outcomes]
    report = Report(results=results, title="synthetic", gates=gates)
    said = ("3 passed, 1 failed, 2 inconclusive (let pass: on_inconclusive is pass); the run fails" if let_pass
            else "3 passed, 1 failed, 2 inconclusive (counted as failed: on_inconclusive is fail); the run fails")
    for text in (render(report, "terminal"), render(report, "html"), repr(report)):
        assert said in text and "5/6" not in text and "3/6" not in text


def test_the_terminal_comparison_shows_each_difference_its_interval_and_its_corrected_p(report):
    """print(comparison) and a terminal report show, beside the arrows, every (system, baseline, metric): Δ =
    system - baseline, its interval labelled unadjusted, the corrected p-value and the decision; the footnote
    names the test, its sides and the correction's family."""
    comparison = report.comparison
    for text in (str(comparison), render(report, "terminal")):
        assert "95% CI (unadjusted)" in text and "Δ = system - baseline" in text
        assert "two-sided paired t-test, Holm-corrected over 8 comparisons" in text
        for r in comparison.rows:
            line = next(l for l in text.splitlines() if l.split()[:3] == [r.metric, r.system, r.baseline])
            assert f"{r.delta:+.4f}" in line and f"[{r.ci_low:.4f}, {r.ci_high:.4f}]" in line
            assert p_value(r.p_adjusted) in line and line.split()[-1] == ("yes" if r.significant else "no")
