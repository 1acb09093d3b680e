"""Cross-check on the three real TREC DL 2019 passage runs (``../shared/data/real/trec-dl-2019-passage``).

After canonicalisation every backend agrees with the reference on every query. Natively, the
BM25 runs have no tied scores; the SPLADE++ run has 17 tie groups, and the queries where a
backend's own tie order changes a value are explained as ties (verified by re-running the
reference with that backend's order).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge.common.ranking import has_ties

RUNS = ("bm25", "bm25-rm3", "splade-pp-ed")
METRICS = ["nDCG@10", "AP", "AP@100", "RR", "P@10", "R@100", "Rprec", "Success@1", "nDCG(gain=exp)@10"]


@pytest.fixture(scope="module")
def qrels(dl19: Path) -> eb.Qrels:
    return eb.read_qrels(dl19 / "qrels.dl19-passage.txt")


def read(dl19: Path, name: str) -> eb.Run:
    return eb.read_run(dl19 / f"run.{name}.top100.txt")


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNS)
def test_all_backends_agree_after_canonicalisation(dl19: Path, qrels: eb.Qrels, name: str) -> None:
    """Every backend equals the reference on all 43 queries for every metric, at level 1 and level 2."""
    run = read(dl19, name)
    for level in (1, 2):
        check = eb.crosscheck(qrels, run, METRICS, canonicalise=True, min_relevance=level)
        assert check.differences.empty, check.to_markdown()
        assert not check.unsupported
        assert set(check.agreement.queries) == {43}


def test_splade_run_has_the_17_documented_tie_groups(dl19: Path) -> None:
    """The data README says the SPLADE run has 17 groups of tied scores and the BM25 runs none."""
    from evalbridge.common.ranking import tie_groups

    counts = {name: sum(len(tie_groups(scores)) for scores in read(dl19, name).values()) for name in RUNS}
    assert counts == {"bm25": 0, "bm25-rm3": 0, "splade-pp-ed": 17}


@pytest.mark.slow
def test_splade_tie_differences_are_explained(dl19: Path, qrels: eb.Qrels) -> None:
    """Natively, SPLADE's ties change some values; each is verified as 'ties broken differently'."""
    run = read(dl19, "splade-pp-ed")
    check = eb.crosscheck(qrels, run, METRICS, ties="input")
    assert check.ok, check.unexplained.to_string()
    assert not check.differences.empty
    assert {c.split(":")[0] for c in check.differences.cause} == {"ties broken differently"}
    assert all(has_ties(run[q]) for q in check.differences.query_id)


@pytest.mark.slow
def test_bm25_runs_agree_natively_except_nothing(dl19: Path, qrels: eb.Qrels) -> None:
    """Without ties, every library on its own already matches the reference on the BM25 runs."""
    for name in ("bm25", "bm25-rm3"):
        check = eb.crosscheck(qrels, read(dl19, name), METRICS, min_relevance=2)
        rows = check.differences
        # ranx applies the level to nDCG; everything else agrees exactly
        assert set(rows.backend) <= {"ranx"} and check.ok, check.to_markdown()
        assert all(c.startswith("relevance threshold applied to nDCG") for c in rows.cause)
