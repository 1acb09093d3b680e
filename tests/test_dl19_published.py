"""Published TREC DL 2019 passage scores, reproduced by the reference from the shared run files.

Source of every number: ``../shared/data/real/README.md``. The independent ones come from
the Anserini regression page / Pyserini's 2cr yaml (A) and rank_llm's own trec_eval output
(R), computed with ``-c`` (a query missing from the run scores 0) and printed to 4 decimals.
The "regression guards" were computed with pytrec_eval by whoever prepared the data: they are
not independent, only a check that nothing drifts. Binary measures use level 2 where the
trec_eval flags say ``-l 2``; nDCG uses the raw 0-3 grades whatever the level.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import evalbridge as eb

TOL = 5e-5 + 1e-9  # 4 printed decimals

#: (run, evalbridge metric, relevance level, expected, source)
PUBLISHED = [
    ("bm25", "nDCG@10", 1, 0.5058, "A: ndcg_cut.10 -c"),
    ("bm25", "R@100", 2, 0.4910, "A: recall.100 -c -l 2"),
    ("bm25", "R@100", 1, 0.4531, "R: recall.100 -c"),
    ("bm25-rm3", "nDCG@10", 1, 0.5216, "A: ndcg_cut.10 -c"),
    ("bm25-rm3", "R@100", 2, 0.5259, "A: recall.100 -c -l 2"),
    ("bm25-rm3", "R@100", 1, 0.4821, "R: recall.100 -c"),
    ("splade-pp-ed", "nDCG@10", 1, 0.7308, "Pyserini 2cr: ndcg_cut.10 -c"),
    ("splade-pp-ed", "R@100", 1, 0.5549, "R: recall.100 -c"),
]

#: not independent (pytrec_eval on the same files): regression guards only
GUARDS = [
    ("bm25", "AP", 1, 0.2993),
    ("bm25", "AP", 2, 0.2476),
    ("bm25", "RR", 1, 0.8245),
    ("bm25-rm3", "AP", 2, 0.2807),
    ("splade-pp-ed", "AP", 2, 0.4464),
    ("splade-pp-ed", "R@100", 2, 0.6390),
]


@pytest.fixture(scope="module")
def data(dl19: Path) -> dict:
    """The qrels and the three runs, read once."""
    runs = {name: eb.read_run(dl19 / f"run.{name}.top100.txt") for name in ("bm25", "bm25-rm3", "splade-pp-ed")}
    return {"qrels": eb.read_qrels(dl19 / "qrels.dl19-passage.txt"), **runs}


def score(data: dict, run: str, metric: str, level: int) -> float:
    """Mean over the 43 judged queries, missing queries scored 0 (trec_eval -c)."""
    res = eb.evaluate(data["qrels"], data[run], metric, min_relevance=level, missing_queries="zero")
    assert res.provenance.queries_evaluated == 43
    return res[metric]


@pytest.mark.parametrize(("run", "metric", "level", "expected", "source"), PUBLISHED,
                         ids=[f"{r}-{m}-l{lv}" for r, m, lv, _, _ in PUBLISHED])
def test_published_dl19_score_is_reproduced(data: dict, run: str, metric: str, level: int, expected: float,
                                            source: str) -> None:
    """The reference gives the published 4-decimal score of each run."""
    value = score(data, run, metric, level)
    assert abs(value - expected) <= TOL, f"{run} {metric} level {level}: {value:.6f}, published {expected} ({source})"


@pytest.mark.parametrize(("run", "metric", "level", "expected"), GUARDS,
                         ids=[f"{r}-{m}-l{lv}" for r, m, lv, _ in GUARDS])
def test_dl19_regression_guard(data: dict, run: str, metric: str, level: int, expected: float) -> None:
    """Values computed with pytrec_eval when the data was prepared (not independent) do not drift."""
    value = score(data, run, metric, level)
    assert abs(value - expected) <= TOL, f"{run} {metric} level {level}: {value:.6f}, guard {expected}"


def test_dl19_qrels_grade_counts_match_ir_datasets_metadata(data: dict) -> None:
    """The qrels hold 9260 judgements over 43 queries: 5158 x 0, 1601 x 1, 1804 x 2, 697 x 3."""
    qrels = data["qrels"]
    counts: dict[int, int] = {}
    for docs in qrels.values():
        for grade in docs.values():
            counts[grade] = counts.get(grade, 0) + 1
    assert (len(qrels), qrels.n_rows, counts) == (43, 9260, {0: 5158, 1: 1601, 2: 1804, 3: 697})
