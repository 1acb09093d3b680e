"""Fusion at the config's door: a ``fusion:`` section gives the numbers of ``fuse`` and ``eb.compare`` on the same
runs (the config's metrics, settings and comparison statistics), shows in every report format, and a bad key is
refused naming it, its file and its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import evalbridge as eb
from doors import write_collection
from evalbridge.errors import InputError
from evalbridge.transforms.fusion import fuse
from evalbridge.views.formats import render

METRICS = ["nDCG@5", "P@3"]
RUNS = ("bm25", "dense", "other")


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 queries of 10 graded documents, three runs scoring 6 of them (distinct scores: no ties)."""
    return write_collection(tmp_path_factory.mktemp("fusion"), RUNS, queries=30, docs=10, ranked=6, seed=7,
                            query="q{i:02d}", score=lambda draw, r: f"{draw.uniform(0, 1) + 10 - r:.6f}")


def _config(folder: Path, sections: str) -> eb.Report:
    runs = "".join(f"  {n}: {n}.run\n" for n in RUNS)
    (folder / "eval.yaml").write_text(f"qrels: qrels.txt\nruns:\n{runs}metrics: [nDCG@5, P@3]\nseed: 5\n{sections}")
    return eb.run_config(eb.load_config(folder / "eval.yaml"), write=False).report


def _parts(folder: Path, names: tuple[str, ...]) -> dict[str, eb.Run]:
    return {name: eb.read_run(folder / f"{name}.run") for name in names}


def test_a_configs_fusion_is_fuse_then_compare_with_its_parts(folder: Path) -> None:
    report = _config(folder, "comparison: {baseline: bm25, alpha: 0.1, n_resamples: 300}\n"
                             "fusion:\n  runs: [bm25, dense]\n  method: wsum\n  params: {weights: [0.3, 0.7]}\n")
    fused = fuse(_parts(folder, ("bm25", "dense")), method="wsum", params={"weights": [0.3, 0.7]})
    assert fused.name == "wsum[min-max](bm25, dense; weights=0.3, 0.7)"
    expected = eb.compare(folder / "qrels.txt", {fused.name: fused, **_parts(folder, ("bm25", "dense"))}, METRICS,
                          baseline=["bm25", "dense"], alpha=0.1, n_resamples=300, seed=5)
    found = report.analyses["fusion"]
    assert found.to_dict() == expected.to_dict()
    pairs = {(r.system, r.baseline) for r in found.rows}
    assert {(fused.name, "bm25"), (fused.name, "dense")} <= pairs
    assert json.loads(render(report, "json"))["fusion"] == json.loads(json.dumps(expected.to_dict()))
    for fmt in ("terminal", "markdown", "html", "latex"):
        assert "Fusion" in render(report, fmt) and "weights=0.3" in render(report, fmt)
    from evalbridge.views.sections import report_headlines

    headline = {name: value for name, value in report_headlines(report).items() if name[0] == "fusion"}
    assert headline == {("fusion", f"fused vs {r.baseline}", r.metric, "delta"): r.delta for r in expected.rows
                        if r.system == fused.name}


def test_a_configs_fusion_without_a_comparison_uses_the_default_statistics_at_its_seed(folder: Path) -> None:
    report = _config(folder, "fusion: {method: rrf, norm: null, params: {k: 10}}\n")
    parts = _parts(folder, RUNS)
    fused = fuse(parts, method="rrf", norm=None, params={"k": 10})
    expected = eb.compare(folder / "qrels.txt", {fused.name: fused, **parts}, METRICS, baseline=list(RUNS), seed=5)
    assert report.analyses["fusion"].to_dict() == expected.to_dict()


def test_a_configs_trained_fusion_learns_on_the_training_queries(folder: Path) -> None:
    train = [f"q{i:02d}" for i in range(15)]
    report = _config(folder, f"fusion: {{runs: [bm25, dense], method: wsum, train: [{', '.join(train)}]}}\n")
    fused = fuse(_parts(folder, ("bm25", "dense")), method="wsum", qrels=folder / "qrels.txt", train=train)
    assert report.analyses["fusion"].systems[0] == fused.name


@pytest.mark.parametrize(("section", "key", "line"), [
    ("fusion:\n  runs: [bm25, dense]\n  method: rff\n", "fusion.method", 10),
    ("fusion:\n  runs: [bm25, dens]\n", "fusion.runs", 9),
    ("fusion:\n  method: rrf\n  params: {weights: [1, 2]}\n", "fusion.params.weights", 10),
    ("fusion:\n  norm: minmax\n", "fusion.norm", 9),
    ("fusion:\n  runs: [bm25]\n", "fusion.runs", 9),
    ("fusion:\n  metric: ndcg@10\n  wieghts: [1, 2]\n", "wieghts", 10),
])
def test_a_bad_fusion_key_is_refused_naming_it_its_file_and_line(folder: Path, section: str, key: str,
                                                                  line: int) -> None:
    with pytest.raises(InputError, match=key.replace(".", r"\.")) as caught:
        _config(folder, section)
    assert caught.value.source is not None and caught.value.source.endswith("eval.yaml")
    assert caught.value.line == line


def _cli(folder: Path, *argv: str) -> tuple[int, str, str]:
    from doors import cli

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        return cli("diff", *argv)


@pytest.mark.parametrize("flags", [(), ("--p", "0.8", "--rbo-ties", "w", "-k", "5")])
def test_a_diff_without_qrels_on_the_command_line_is_eb_diff_of_no_qrels(folder: Path, flags: tuple[str, ...]) -> None:
    code, out, err = _cli(folder, "bm25=bm25.run", "dense=dense.run", "--format", "json", *flags)
    assert code == 0, err
    keywords = {"p": 0.8, "ties": "w", "k": 5} if flags else {}
    expected = eb.diff(None, eb.read_run(folder / "bm25.run"), eb.read_run(folder / "dense.run"),
                       names=("bm25", "dense"), **keywords)  # type: ignore[arg-type]
    assert json.loads(out) == json.loads(json.dumps(expected.to_dict()))
    assert {"rbo", "jaccard", "tau"} <= set(expected.to_frame(table="similarity").columns.str.split("@").str[0])


def test_a_diff_with_qrels_and_p_adds_the_rankings_similarity_as_the_config_section_does(folder: Path) -> None:
    """`evalbridge diff QRELS A B -m P@3 --p 0.8 --rbo-ties w` is a config's `diff: {p: 0.8, rbo_ties: w}`: the
    metrics' diff with the rankings' similarity beside, the same numbers as eb.diff(qrels, ..., similarity=True)."""
    code, out, err = _cli(folder, "qrels.txt", "bm25=bm25.run", "dense=dense.run", "-m", "P@3", "--p", "0.8",
                          "--rbo-ties", "w", "--format", "json")
    assert code == 0, err
    got = json.loads(out)
    expected = eb.diff(eb.read_qrels(folder / "qrels.txt"), eb.read_run(folder / "bm25.run"),
                       eb.read_run(folder / "dense.run"), "P@3", names=("bm25", "dense"), p=0.8, ties="w",
                       similarity=True)
    wanted = json.loads(json.dumps(expected.to_dict()))
    assert got["similarity"] == wanted["similarity"] and got["similarity"]
    code, plain, err = _cli(folder, "qrels.txt", "bm25=bm25.run", "dense=dense.run", "-m", "P@3", "--format", "json")
    assert code == 0, err
    assert not json.loads(plain).get("similarity")


@pytest.mark.parametrize(("argv", "message"), [
    (("bm25.run", "dense.run", "-m", "P@3"), "metrics need judgements"),
    (("qrels.txt", "bm25.run", "dense.run"), "none was given"),
    (("qrels.txt", "bm25.run", "dense.run", "-m", "P@3", "--p", "1.5"), "--p"),
    (("bm25.run",), "RUN_A RUN_B"),
    (("bm25.run", "dense.run", "--p", "1.5"), "p must be"),
    (("bm25.run", "dense.run", "--rbo-ties", "x"), "ties"),
])
def test_a_bad_diff_command_line_is_refused_with_the_fix(folder: Path, argv: tuple[str, ...], message: str) -> None:
    code, _, err = _cli(folder, *argv)
    assert code == 2 and message in err and "Traceback" not in err


@pytest.mark.parametrize("method, flags, keywords", [
    ("rrf", ("--params", "k=10", "--norm", "none"), {"params": {"k": 10}, "norm": None}),
    ("wsum", ("--params", "weights=0.3,0.7,0.5"), {"params": {"weights": [0.3, 0.7, 0.5]}}),
    ("mnz", ("--norm", "zmuv"), {"norm": "zmuv"}),
    ("wsum", ("--qrels", "qrels.txt", "--train", "q00", "q01", "q02", "--metric", "ndcg@5"),
     {"qrels": "qrels.txt", "train": ["q00", "q01", "q02"], "metric": "ndcg@5"}),
])
def test_evalbridge_fuse_writes_the_run_eb_fuse_makes(folder: Path, method: str, flags: tuple[str, ...],
                                                     keywords: dict) -> None:
    """evalbridge fuse RUN... -o FUSED writes what eb.fuse returns (same queries, documents and scores), named by its
    recipe in the note and, without spaces, in the TREC tag column."""
    from doors import cli

    out = folder / f"fused-{method}-{len(flags)}.run"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, _, err = cli("fuse", *(f"{n}.run" for n in RUNS), "--method", method, *flags, "-o", out.name)
        expected = eb.fuse(_parts(folder, RUNS), method=method, **keywords)
    assert code == 0, err
    assert f"fused: {expected.name}" in err and f"wrote {out.name}" in err
    written = eb.read_run(out)
    assert written.name == "".join(expected.name.split())
    flat = {(q, doc): score for q, docs in written.items() for doc, score in docs.items()}
    assert flat == pytest.approx({(q, doc): score for q, docs in expected.items() for doc, score in docs.items()})


@pytest.mark.parametrize("flags, message", [
    (("bm25.run", "-o", "x.run"), "two runs or more"),
    (("bm25.run", "dense.run", "-o", "bm25.run"), "would destroy the input"),
    (("bm25.run", "dense.run", "--params", "k=ten", "-o", "x.run"), "--params k 'ten' is not a number"),
    (("bm25.run", "dense.run", "--params", "w=1", "-o", "x.run"), "rrf takes k"),
    (("bm25.run", "dense.run", "--train", "q00", "-o", "x.run"), "--qrels"),
    (("bm25.run", "dense.run", "--method", "wsum", "--params", "weights=0.3", "-o", "x.run"),
     "weights takes one number per run (2: bm25, dense); got 0.3"),
    (("bm25.run", "dense.run", "--method", "wsum", "--qrels", "qrels.txt", "--train", "q00", "--metric", "zz",
      "-o", "x.run"), "metric 'zz' is not a measure ranx can train on"),
    (("bm25.run", "dense.run", "--name", "my fused", "-o", "x.run"), "the run tag must be one word"),
    (("bm25.run", "dense.run", "--to", "zz", "-o", "x.run"), "unknown format 'zz'"),
])
def test_evalbridge_fuse_refuses_bad_input_with_the_fix(folder: Path, flags: tuple[str, ...], message: str) -> None:
    from doors import cli

    before = (folder / "bm25.run").read_bytes()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        code, _, err = cli("fuse", *flags)
    assert code == 2 and message in err and "Traceback" not in err, err
    assert "fused:" not in err  # refused before any work
    assert (folder / "bm25.run").read_bytes() == before and not (folder / "x.run").exists()
