"""Plots draw what was evaluated: the exact metric variant over k, hit shares for binary metrics, complete
legends; and plotting never touches the user's matplotlib backend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError, MetricSpecError
from evalbridge.reports import plots
from strategies import qrels_and_run

ROOT = Path(__file__).resolve().parents[1]


def _legend_texts(figure) -> list[str]:  # noqa: ANN001
    legends = [*figure.legends, *(ax.get_legend() for ax in figure.axes if ax.get_legend() is not None)]
    return [text.get_text() for legend in legends for text in legend.get_texts()]


BACKEND_PROBE = """
import json, sys, tempfile
import matplotlib
matplotlib.use("svg")
import matplotlib.pyplot as plt
from evalbridge.reports import plots
values = {"a": {"q1": 0.2, "q2": 0.7}, "b": {"q1": 0.4, "q2": 0.1}}
out = tempfile.mkdtemp()
plots.plot_distribution(values, "nDCG@10", out + "/d", formats=["png", "pdf"])
plots.plot_distribution({"a": {"q1": 1.0, "q2": 0.0}}, "Success@5", out + "/h")
plots.plot_cutoff_curves({"a": {1: 0.1, 10: 0.3}}, "nDCG(gain=exp)", out + "/c", formats=["svg"])
plots.plot_differences(values, "a", "nDCG@10", out + "/x")
print(json.dumps({"backend": matplotlib.get_backend(), "rc": matplotlib.rcParams["backend"],
                  "figures": plt.get_fignums()}))
"""


@pytest.mark.slow
def test_plotting_leaves_the_users_backend_and_pyplot_alone() -> None:
    """A process that chose the svg backend and uses pyplot still has svg after every kind of plot, and no
    figure was opened in pyplot's registry (figures live on their own Agg canvas)."""
    done = subprocess.run([sys.executable, "-c", BACKEND_PROBE], capture_output=True, text=True, check=True,
                          timeout=120)
    state = json.loads(done.stdout.strip().splitlines()[-1])
    assert state == {"backend": "svg", "rc": "svg", "figures": []}


def test_plotting_in_this_process_does_not_import_pyplot_or_change_the_backend(tmp_path: Path) -> None:
    """In the test process too: the backend is what it was before plotting."""
    import matplotlib

    before = matplotlib.rcParams["backend"]
    plots.plot_distribution({"a": {"q1": 0.5, "q2": 0.25}}, "AP", tmp_path / "d")
    assert matplotlib.rcParams["backend"] == before


@given(st.dictionaries(st.sampled_from(["bm25", "dense", "hybrid"]),
                       st.dictionaries(st.sampled_from([f"q{i}" for i in range(8)]),
                                       st.sampled_from([0.0, 1.0, 0.5, 0.25]), min_size=1), min_size=1))
def test_is_binary_means_every_value_is_zero_or_one(values: dict) -> None:
    """is_binary holds exactly when no per-query value of any system is other than 0 and 1."""
    expected = all(v in (0.0, 1.0) for per_query in values.values() for v in per_query.values())
    assert plots.is_binary(values) == expected


def test_a_binary_metric_gets_bars_of_the_hit_share_labelled_hits_over_queries() -> None:
    """Success@3 on three systems: one bar per system whose height is the share of queries with value 1
    (3/4, 1/4 and 0/4, counted by hand), labelled with the count; no box is drawn."""
    values = {"bm25": {"q1": 1.0, "q2": 1.0, "q3": 0.0, "q4": 1.0},
              "dense": {"q1": 0.0, "q2": 1.0, "q3": 0.0, "q4": 0.0},
              "none": {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}}
    figure = plots.distribution_figure(values, "Success@3")
    axes = figure.axes[0]
    assert [bar.get_height() for bar in axes.patches] == [0.75, 0.25, 0.0]
    labels = [text.get_text() for text in axes.texts]
    assert labels == ["75%\n3/4", "25%\n1/4", "0%\n0/4"]
    assert "share of queries with a hit" in axes.get_title()
    assert [t.get_text() for t in axes.get_xticklabels()] == ["bm25", "dense", "none"]


def test_a_graded_metric_gets_boxes_with_every_mark_in_the_legend() -> None:
    """nDCG values get a box plot; the legend names the mean marker, the median, the box, the whiskers and
    the outliers, and the title counts the queries."""
    values = {"bm25": {"q1": 0.2, "q2": 0.9, "q3": 0.5}, "dense": {"q1": 0.1, "q2": 0.4, "q3": 0.35}}
    figure = plots.distribution_figure(values, "nDCG@10")
    texts = _legend_texts(figure)
    assert {"mean", "median", "middle 50% of queries"} <= set(texts)
    assert any(t.startswith("whiskers") for t in texts) and any("beyond the whiskers" in t for t in texts)
    assert figure.axes[0].get_title() == "per-query nDCG@10 (3 queries)"


@pytest.mark.parametrize("spec, label", [
    ("nDCG(gain=exp)@10", "nDCG(gain=exp)@k"), ("nDCG(gain=exp)", "nDCG(gain=exp)@k"),
    ("ndcg_burges", "nDCG(gain=exp)@k"), ("P", "P@k"), ("P(rel=2)", "P(rel=2)@k"), ("P-l2", "P(rel=2)@k"),
    ("recall@100", "R@k"), ("ndcg_cut_10", "nDCG@k"), ("AP(norm=retrieved)", "AP(norm=retrieved)@k"),
])
def test_curve_variant_accepts_any_spelling_of_a_metric_with_a_cutoff(spec: str, label: str) -> None:
    """Every spelling, with or without its own cutoff, names one variant; the label puts @k in place of k."""
    assert plots.curve_label(spec) == label


@pytest.mark.parametrize("spec", ["Rprec", "r-precision", "nDCG(gain=cubic)", "nope"])
def test_curve_variant_refuses_metrics_without_cutoff_and_bad_specs(spec: str) -> None:
    """A metric without a cutoff has no curve over k; an unknown spelling is refused as everywhere."""
    with pytest.raises(MetricSpecError):
        plots.curve_variant(spec)


def test_curve_variant_resolves_the_level_as_the_evaluation_did() -> None:
    """With the Results of an evaluation at level 2, P is curved as P(rel=2), as the table labels it."""
    res = eb.evaluate({"q": {"a": 2}}, {"q": {"a": 1.0}}, "P@5", min_relevance=2)
    assert plots.curve_label(plots.curve_variant("P", res)) == "P(rel=2)@k"
    assert plots.curve_label(plots.curve_variant("nDCG(gain=exp)", res)) == "nDCG(gain=exp)@k"  # nDCG ignores it


@given(qrels_and_run(max_queries=4, max_grade=3), st.sampled_from(["nDCG(gain=exp)", "nDCG(discount=jk)",
                                                                    "AP(weights=graded)", "P(rel=2)", "R"]),
       st.lists(st.integers(1, 12), min_size=1, max_size=5, unique=True))
@settings(max_examples=40)
def test_cutoff_curves_follow_the_exact_variant_at_each_k(data, spec: str, ks: list[int]) -> None:  # noqa: ANN001
    """Each point is the mean of the variant evaluated on its own at that cutoff, never of the plain family."""
    qrels, run = data
    curve = plots.cutoff_curves(qrels, run, spec, ks)
    assert sorted(curve) == sorted(ks)
    for k in ks:
        single = eb.evaluate(qrels, run, f"{spec}@{k}")
        assert curve[k] == single.mean(single.metrics[0])


def test_the_curve_of_exp_gain_ndcg_is_not_the_linear_one() -> None:
    """On graded qrels the exp-gain curve differs from the linear one, and the plotted line carries the
    exp-gain values (hand-checked: grades 2 and 1, d2 ranked first: exp nDCG@1 = 1/3, linear 1/2)."""
    qrels, run = {"q1": {"d1": 2, "d2": 1}}, {"q1": {"d2": 0.9, "d1": 0.8}}
    exp, linear = plots.cutoff_curves(qrels, run, "nDCG(gain=exp)@10", [1]), plots.cutoff_curves(qrels, run, "nDCG",
                                                                                                   [1])
    assert exp == {1: pytest.approx(1 / 3)} and linear == {1: pytest.approx(1 / 2)}
    figure = plots.cutoff_curves_figure({"bm25": exp}, "nDCG(gain=exp)@10")
    line = figure.axes[0].get_lines()[0]
    assert list(line.get_ydata()) == [exp[1]]
    assert figure.axes[0].get_ylabel() == "mean nDCG(gain=exp)@k"
    assert _legend_texts(figure) == ["bm25"]


def test_differences_legend_counts_better_worse_equal_and_the_mean() -> None:
    """One panel per non-baseline system; the legend's counts add up to the queries compared, and the mean
    line says the mean difference (hand-computed: (+0.5 - 0.25 + 0) / 3)."""
    values = {"base": {"q1": 0.0, "q2": 0.5, "q3": 0.2}, "new": {"q1": 0.5, "q2": 0.25, "q3": 0.2},
              "other": {"q1": 0.0, "q2": 0.5, "q3": 0.2}}
    figure = plots.differences_figure(values, "base", "AP")
    assert len(figure.axes) == 2
    texts = figure.axes[0].get_legend().get_texts()
    assert [t.get_text() for t in texts] == ["better: 1", "worse: 1", "equal: 1", "mean Δ +0.0833"]
    assert plots.plot_differences({"base": values["base"]}, "base", "AP", "/nonexistent/x") == []
    with pytest.raises(InputError, match="baseline 'nope'"):
        plots.differences_figure(values, "nope", "AP")


def test_every_format_is_written_and_an_unknown_one_refused(tmp_path: Path) -> None:
    """png, svg and pdf files are written with their suffix; 'jpg' is refused with the allowed list."""
    written = plots.plot_cutoff_curves({"a": {1: 0.5, 5: 0.6}}, "P", tmp_path / "c", formats=["png", "svg", "pdf"])
    assert [p.suffix for p in written] == [".png", ".svg", ".pdf"] and all(p.stat().st_size > 0 for p in written)
    assert written[0].read_bytes()[:4] == b"\x89PNG" and written[2].read_bytes()[:4] == b"%PDF"
    with pytest.raises(InputError, match="png, svg, pdf"):
        plots.plot_cutoff_curves({"a": {1: 0.5}}, "P", tmp_path / "c", formats=["jpg"])


@pytest.mark.slow
def test_the_gallery_tool_writes_one_png_per_kind_and_docs_img_holds_them(tmp_path: Path, shared: Path) -> None:
    """tools/plot_gallery.py draws every kind from the DL 2019 runs into a folder; docs/img holds one PNG per
    kind, and docs/config.md shows each of them."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import plot_gallery
    finally:
        sys.path.remove(str(ROOT / "tools"))
    assert plot_gallery.main(["--data", str(shared / "data" / "real" / "trec-dl-2019-passage"),
                              "--out", str(tmp_path)]) == 0
    stems = [stem for stem, _ in plot_gallery.KINDS.values()]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{s}.png" for s in stems)
    assert all((tmp_path / f"{s}.png").read_bytes()[:4] == b"\x89PNG" for s in stems)
    # beside them, the pictures of report.html (tools/report_picture.py, tests/test_html_report.py)
    assert sorted(p.name for p in (ROOT / "docs" / "img").glob("*.png")) == sorted([*(f"{s}.png" for s in stems),
                                                                                    "report.png", "page-1400.png",
                                                                                    "page-400.png"])
    page = (ROOT / "docs" / "config.md").read_text()
    assert all(f"](img/{s}.png)" in page for s in stems)
