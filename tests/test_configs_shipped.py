"""Every file in configs/ is loaded AND run, and the real-data ones reproduce known numbers.

Every config reads files of the repository only (examples/ holds the small public data), so each runs
from a plain clone. configs/demo.yaml needs the Robust04 files that `make demo-data` extracts from the
capreolus 0.2.6 wheel into .cache/robust04/; when they are missing this test fetches them the same way
(pip download + zipfile) and skips only if the download fails.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from demo_data import ROBUST, fetch_robust04
from evalbridge.config import load_configs
from evalbridge.config.pipeline import run_config

REPO = Path(__file__).resolve().parents[1]
CONFIGS = sorted((REPO / "configs").glob("*.yaml"))
SLOW = {"demo.yaml", "crosscheck_splade.yaml", "dl19.yaml"}


def _prepare(path: Path) -> None:
    if path.name == "demo.yaml":
        fetch_robust04()


def _params():
    # demo.yaml is run once, by test_demo_runs_robust04_and_the_rag_example (its cross-check is the slow part)
    return [pytest.param(p, id=p.name, marks=[pytest.mark.slow] if p.name in SLOW else [])
            for p in CONFIGS if p.name != "demo.yaml"]


def test_the_required_configs_ship():
    """The issue's configs exist (this list only grows)."""
    names = {p.name for p in CONFIGS}
    assert {"demo.yaml", "dl19.yaml", "rag_labels.yaml", "rag_pairs.yaml", "llm_graded.yaml",
            "graded_methods.yaml", "crosscheck_splade.yaml", "agreement.yaml"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_reads_only_files_of_the_repository(path: Path) -> None:
    """Every input file of every evaluation in the file is inside the checkout: examples/, or .cache/robust04/
    that `make demo-data` fetches from PyPI; never ../shared, which a clone does not have."""
    from evalbridge.config.pipeline import input_sources

    _prepare(path)
    paths = [Path(s.path).resolve() for config in load_configs(path) for s in input_sources(config)
             if s.path is not None]  # data written inside the config has no path
    outside = [p for p in paths if not p.is_relative_to(REPO)]
    assert not outside, f"{path.name} reads files outside the repository: {outside}"
    fetched = [p for p in paths if p.is_relative_to(REPO / ".cache")]
    assert all(p.is_relative_to(ROBUST) for p in fetched), fetched


def _run_all(path: Path, folder: Path) -> list:
    """Run every evaluation of a config file into folder/<i>; each must write its reports and exit 0."""
    outcomes = []
    for i, config in enumerate(load_configs(path)):
        outcome = run_config(config, output_dir=folder / str(i))
        assert outcome.exit_code == 0, outcome.failures
        assert outcome.files and all(f.is_file() for f in outcome.files)
        assert (folder / str(i) / "provenance.json").is_file()
        assert set(outcome.report.results) == set(config.runs)
        outcomes.append(outcome)
    return outcomes


@pytest.mark.parametrize("path", _params())
def test_config_loads_runs_and_passes(path, tmp_path):
    """Each evaluation in the file validates, runs, writes its reports, and exits 0 (gates pass, checks ok)."""
    _prepare(path)
    _run_all(path, tmp_path)


@pytest.mark.slow
def test_dl19_reproduces_the_published_scores():
    """TREC DL 2019: nDCG@10 and R@100 (level 2) of the Anserini / Pyserini pages, to 4 decimals."""
    _prepare(REPO / "configs" / "dl19.yaml")
    results = run_config(load_configs(REPO / "configs" / "dl19.yaml")[0], write=False).report.results
    published = {("bm25", "nDCG@10"): 0.5058, ("bm25", "R@100"): 0.4910, ("bm25-rm3", "nDCG@10"): 0.5216,
                 ("bm25-rm3", "R@100"): 0.5259, ("splade-pp-ed", "nDCG@10"): 0.7308}
    for (system, metric), value in published.items():
        assert round(results[system][metric], 4) == value, (system, metric)
    assert str(results["bm25"].metrics[1]) == "R(rel=2)@100"


@pytest.mark.slow
def test_demo_runs_robust04_and_the_rag_example(tmp_path):
    """demo.yaml (make run): Robust04 BM25+RM3 MAP 0.3033, P@20 0.3974, nDCG@20 0.4514 over 249 topics,
    every backend agrees; the RAG example's gates pass."""
    path = REPO / "configs" / "demo.yaml"
    _prepare(path)
    outcome, rag = _run_all(path, tmp_path)
    assert [g.passed for g in rag.report.gates] == [True, True]
    res = outcome.report.results["bm25-rm3"]
    assert (round(res["map"], 4), round(res["P@20"], 4), round(res["ndcg@20"], 4)) == (0.3033, 0.3974, 0.4514)
    assert res.provenance.queries_evaluated == 249 and len(res.provenance.ignored_run_only) == 1
    check = outcome.report.crosscheck["bm25-rm3"]
    assert check.ok and set(check.agreement["backend"]) == {"pytrec_eval", "ranx", "ir_measures"}


def test_rag_configs_reproduce_the_documents_worked_examples():
    """The MAP@3/NDCG@3 code of 000_86ca3c6974105328.txt, NDCG@10 = 0.654 and AP = 0.756 of
    003_2568de527c81821d.txt, the hit rate 60% of 001_7752ff7570d0df9e.txt."""
    labels = run_config(load_configs(REPO / "configs" / "rag_labels.yaml")[0], write=False).report.results
    hybrid = labels["hybrid"]
    # 000_86ca3c6974105328.txt's calculate_ap / calculate_ndcg on its own example q1-q3 ([1,0,1], [1,1,0], [0,1,1])
    assert [round(hybrid.query("AP(norm=retrieved)@3")[q], 4) for q in ("q1", "q2", "q3")] == [0.8333, 1.0, 0.5833]
    assert [round(hybrid.query("nDCG(ideal=run)@3")[q], 4) for q in ("q1", "q2", "q3")] == [0.9197, 1.0, 0.6934]
    graded = run_config(load_configs(REPO / "configs" / "llm_graded.yaml")[0], write=False).report.results["bm25"]
    assert round(graded.query("nDCG(gain=exp)@10")["q1"], 3) == 0.654
    assert round(graded.query("AP")["q2"], 3) == 0.756
    pairs = run_config(load_configs(REPO / "configs" / "rag_pairs.yaml")[0], write=False).report.results["faq"]
    assert pairs["hit_rate@3"] == pytest.approx(0.6)


def test_agreement_config_counts_the_judgements_trec_eval_ships():
    """configs/agreement.yaml: trec_eval's binary qrels.test against its graded qrels.rel_level (binned at 1).
    The confusion table equals a plain join of the two files' lines (grade >= 1 is relevant on the graded
    side), and the two runs are ranked under both."""
    path = REPO / "configs" / "agreement.yaml"
    _prepare(path)
    folder = REPO / "examples" / "trec_eval"
    binary = {tuple(line.split()[::2]): int(line.split()[3])
              for line in (folder / "qrels.test").read_text().splitlines()}
    graded = {tuple(line.split()[::2]): int(line.split()[3]) >= 1
              for line in (folder / "qrels.rel_level").read_text().splitlines()}
    counted = [[sum(1 for pair, g in binary.items() if g == a and graded[pair] == b) for b in (False, True)]
               for a in (0, 1)]
    report = run_config(load_configs(path)[0], write=False).report
    judges = report.agreement.judges
    assert judges.shared_pairs == len(binary) == len(graded)
    assert [list(row) for row in judges.confusion] == counted
    assert [row.metric for row in report.agreement.ranking.rows] == ["P@10", "AP", "nDCG@10"]
    assert report.agreement.ranking.rows[0].systems == ("full", "truncated")
