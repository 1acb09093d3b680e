"""Every report format carries the report's sections (standings, run diffs, power): the text formats their tables
under a heading, JSON their data, CSV one file per table at full precision; names survive every format."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

import evalbridge as eb
from evalbridge.reports.report import Report
from evalbridge.views.formats import output_format, render, report_format, show
from evalbridge.views.sections import report_sections

QRELS = {f"q{i}": {"a": 2, "b": 1, "c": i % 2} for i in range(12)}
RUNS = {
    "base": {q: {"a": 3.0, "x": 2.0, "b": 1.0} for q in QRELS},
    "new": {q: ({"x": 3.0, "c": 2.0, "a": 1.0} if int(q[1:]) % 3 else {"a": 3.0, "b": 2.0}) for q in QRELS},
    "third": {q: {"b": 3.0, "a": 2.0} for q in QRELS},
}
METRICS = ["P@2", "nDCG@3"]


def _report(runs: dict = RUNS) -> Report:
    names = list(runs)
    results = {name: eb.evaluate(QRELS, run, METRICS) for name, run in runs.items()}
    cmp = eb.compare(None, results, METRICS, baseline=names[0], n_resamples=50)
    diffs = {name: eb.diff(QRELS, runs[names[0]], runs[name], METRICS, k=2, names=(names[0], name))
             for name in names[1:]}
    return Report(results=results, metrics=METRICS, comparison=cmp, standings=cmp.standings(),
                  analyses={"diff": diffs, "power": eb.power(results, METRICS, baseline=names[0])})


def _csv(report: Report) -> dict[str, pd.DataFrame]:
    files = report_format("csv").extra_files(report)
    return {name: pd.read_csv(io.StringIO(text), keep_default_na=False, na_values=[""]) for name, text in files.items()}


def test_every_text_format_shows_each_section_under_its_heading() -> None:
    report = _report()
    sections = report_sections(report)
    assert [s.key for s in sections] == ["standings", "diffs", "diffs", "power"]
    for fmt in ("terminal", "markdown", "latex"):
        text = render(report, fmt)
        written = output_format(fmt)
        for section in sections:
            assert written.escape(section.title) in text, (fmt, section.title)
            assert show(section.tables(written), fmt).rstrip("\n") in text, (fmt, section.title)
    page = render(report, "html")
    for section in sections:  # each a section of the page, with its entry in the navigation
        assert f"<h2>{output_format('html').escape(section.title)}</h2>" in page
        assert f">{output_format('html').escape(section.title)}</a>" in page
    data = json.loads(render(report, "json"))
    assert {s.key for s in sections} <= set(data)


def test_csv_files_hold_each_section_at_full_precision() -> None:
    """The CSV files read back equal the results' own frames, number for number (every diff in one file, each row
    saying whose)."""
    report = _report()
    files = _csv(report)
    for table in ("pairs", "hardest", "mean_ranks", "ranks"):
        expected = report.standings.to_frame(table=table)
        got = files[f"standings_{table}.csv"]
        assert list(got.columns) == list(expected.columns)
        pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    power = files["power.csv"]
    assert power["mde"].tolist() == report.analyses["power"].to_frame()["mde"].tolist()
    assert power["delta"].tolist() == [r.delta for r in report.analyses["power"].rows]
    queries = files["diff_queries.csv"]
    expected = pd.concat([d.to_frame(table="queries").assign(baseline="base", system=name)
                          for name, d in report.analyses["diff"].items()], ignore_index=True)
    assert len(queries) == len(expected) and set(queries["system"]) == {"new", "third"}
    assert queries["delta"].tolist() == expected["delta"].tolist()
    documents = files["diff_documents.csv"]
    assert set(documents["kind"]) <= {"entered", "left", "unjudged_entered", "unjudged_left", "moves"}
    assert len(documents) == sum(len(d.to_frame(table="documents")) for d in report.analyses["diff"].values())


def test_a_report_without_sections_adds_no_files() -> None:
    results = {"base": eb.evaluate(QRELS, RUNS["base"], METRICS)}
    assert set(report_format("csv").extra_files(Report(results=results))) == set()


#: system names: any text (commas, quotes, line breaks, the names of the tables' own columns...)
names = hs.text(hs.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1, max_size=12) | \
    hs.sampled_from(["metric", "query", "mean", "system", "rank", "value"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hs.lists(names, min_size=2, max_size=2, unique=True))
def test_any_system_name_survives_the_csv_files(pair) -> None:  # noqa: ANN001
    """Property: names with commas, quotes, line breaks or any other character come back from every CSV file as
    they went in (quoted by the CSV writer, never split into cells or rows), but for the one change a spreadsheet
    needs: a name a spreadsheet would run as a formula (``=...``, ``+...``) is written with a leading ``'``
    (``escaping.csv_cell``)."""
    from evalbridge.common.escaping import csv_cell

    report = _report({pair[0]: RUNS["base"], pair[1]: RUNS["new"]})
    pair = (csv_cell(pair[0]), csv_cell(pair[1]))
    texts = report_format("csv").extra_files(report)
    as_text = {name: pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False) for name, text in texts.items()}
    assert set(as_text["standings_pairs.csv"]["system"]) == {pair[1]}   # system - baseline, as every pair
    assert set(as_text["standings_pairs.csv"]["other"]) == {pair[0]}
    assert set(as_text["power.csv"]["system"]) == {pair[1]} and set(as_text["power.csv"]["baseline"]) == {pair[0]}
    assert set(as_text["diff_means.csv"]["system"]) == {pair[1]}
    assert set(as_text["standings_ranks.csv"]["system"]) == set(pair)
    assert set(as_text["standings_hardest.csv"]["system"]) == set(pair)


def test_a_config_run_writes_the_section_files(tmp_path: Path) -> None:
    """The report folder of a config with a comparison and diff: holds the files, equal to the Python door's."""
    for name, text in (("qrels.txt", "".join(f"{q} 0 {d} {g}\n" for q, docs in QRELS.items() for d, g in docs.items())),
                       *((f"{n}.run", "".join(f"{q} Q0 {d} {r} {s} {n}\n" for q, docs in run.items()
                                              for r, (d, s) in enumerate(docs.items(), 1)))
                         for n, run in RUNS.items())):
        (tmp_path / name).write_text(text)
    (tmp_path / "eval.yaml").write_text(json.dumps({
        "qrels": "qrels.txt", "runs": {n: f"{n}.run" for n in RUNS}, "metrics": METRICS,
        "comparison": {"baseline": "base", "n_resamples": 50}, "diff": {"k": 2},
        "output": {"dir": "out", "formats": ["csv", "latex"]}}))
    outcome = eb.run_config(eb.load_config(tmp_path / "eval.yaml"))
    folder = tmp_path / "out"
    for stem in ("standings_pairs", "standings_hardest", "standings_mean_ranks", "standings_ranks", "diff_means",
                 "diff_queries", "diff_documents", "power"):
        assert (folder / f"{stem}.csv").is_file(), stem
    pairs = pd.read_csv(folder / "standings_pairs.csv")
    pd.testing.assert_frame_equal(pairs, outcome.report.standings.to_frame(), check_dtype=False)
    assert "% Across the systems" in (folder / "report.tex").read_text()


def test_the_agreement_is_a_section_placed_after_the_cross_checks_in_every_format() -> None:
    """A section whose view is placed after the cross-checks (the agreement) shows in every format under its
    heading, right after the cross-checks: below the other sections in the terminal and Markdown (which write the
    cross-checks after them), above them in JSON and LaTeX; its data are its CSV files; no renderer places it."""
    from pathlib import Path as _Path

    from evalbridge.views.sections import AFTER_CROSSCHECK, VIEWS

    report = _report()
    second = {q: {d: min(g, 1) for d, g in docs.items()} for q, docs in QRELS.items()}
    agreement = eb.agree(QRELS, second, RUNS, ["P@2"], names=("graded", "binary"), n_resamples=50)
    checks = {"base": eb.crosscheck(QRELS, RUNS["base"], METRICS, backends=["pytrec_eval"])}
    report = Report(results=report.results, metrics=METRICS, comparison=report.comparison, standings=report.standings,
                    crosscheck=checks, analyses={"agreement": agreement, **report.analyses})
    assert VIEWS["agreement"].place == AFTER_CROSSCHECK
    assert [s.key for s in report_sections(report, AFTER_CROSSCHECK)] == ["agreement"]
    assert "agreement" not in [s.key for s in report_sections(report)]
    title = "Agreement between the judgements graded and binary"
    for fmt, check, before in (("terminal", "cross-check base:", "Power"), ("markdown", "## Cross-check: base", "## Power")):
        text = render(report, fmt)
        assert text.index(before) < text.index(check) < text.index(title)
        assert agreement.table(fmt).rstrip("\n") in text
    latex = render(report, "latex")
    assert latex.index(f"% {title}") < latex.index("% Across the systems")
    assert agreement.table("latex").rstrip("\n") in latex
    data = list(json.loads(render(report, "json")))
    assert data.index("crosscheck") + 1 == data.index("agreement") < data.index("standings") < data.index("power")
    page = render(report, "html")
    assert page.index('<section id="crosscheck">') < page.index(f"<h2>{title}</h2>") < page.index('id="provenance"')
    files = _csv(report)
    pd.testing.assert_frame_equal(files["agreement.csv"], agreement.judges.to_frame().reset_index(), check_dtype=False)
    assert files["agreement_ranking.csv"]["metric"].tolist() == ["P@2"]
