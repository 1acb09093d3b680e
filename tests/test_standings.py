"""Standings of many systems: win / tie / loss of every pair, the hardest queries, each system's rank per query."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.decisions.standings import standings

RUNS = ("bm25", "bm25-rm3", "splade-pp-ed")


def test_dl19_golden_by_hand(shared) -> None:  # noqa: ANN001
    """P(rel=2)@10 of the three TREC DL 2019 runs, counted by hand (awk over the top 10 of each run sorted by score
    then doc id, grades >= 2 from the qrels): wins / ties / losses of each pair and the three hardest queries."""
    folder = shared / "data" / "real" / "trec-dl-2019-passage"
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/trec-dl-2019-passage is absent: {folder} does not exist")
    results = {name: eb.evaluate(folder / "qrels.dl19-passage.txt", folder / f"run.{name}.top100.txt",
                                 "P(rel=2)@10") for name in RUNS}
    s = standings(results, hardest=3)
    assert [(p.system, p.other, p.wins, p.ties, p.losses) for p in s.pairs] == [
        ("bm25-rm3", "bm25", 17, 14, 12), ("splade-pp-ed", "bm25", 29, 10, 4), ("splade-pp-ed", "bm25-rm3", 29, 9, 5)]
    assert [(h.query, round(h.mean, 6)) for h in s.hardest] == [
        ("1121709", 0.1), ("1037798", 0.133333), ("443396", 0.133333)]
    assert s.n == (43,) and s.unpaired == (0,)
    for fmt in ("terminal", "markdown", "html", "latex"):
        assert "1121709" in s.table(fmt)


values = st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=3, max_size=3)


@given(st.lists(values, min_size=1, max_size=12), st.integers(0, 5))
def test_counts_and_ranks_are_consistent(columns, hardest) -> None:  # noqa: ANN001
    systems = ("a", "b", "c")
    per_system = {s: {"m": {f"q{i}": col[j] for i, col in enumerate(columns)}} for j, s in enumerate(systems)}
    st_ = standings(per_system, hardest=hardest)
    n = len(columns)
    for p in st_.pairs:
        assert p.wins + p.ties + p.losses == n
    ranks = dict(st_.ranks[0].ranks)
    for i in range(n):
        assert math.isclose(sum(ranks[s][i] for s in systems), 6.0)  # 1 + 2 + 3 whatever the ties
        best = max(columns[i])
        assert all((ranks[s][i] == 1.0) == (columns[i][j] == best and columns[i].count(best) == 1)
                   for j, s in enumerate(systems))
    means = [h.mean for h in st_.hardest]
    assert means == sorted(means) and len(means) == min(hardest, n)
    assert all(h.mean <= min(sum(c) / 3 for c in columns) + 1e-12 for h in st_.hardest[:1])


def test_queries_some_system_lacks_are_counted_not_compared() -> None:
    s = standings({"a": {"m": {"q1": 1.0, "q2": 0.0}}, "b": {"m": {"q1": 0.0}}})
    assert s.n == (1,) and s.unpaired == (1,)
    assert (s.pairs[0].system, s.pairs[0].wins, s.pairs[0].ties, s.pairs[0].losses) == ("b", 0, 0, 1)


def test_refusals() -> None:
    with pytest.raises(InputError, match="two systems or more"):
        standings({"a": {"m": {"q": 1.0}}})
    with pytest.raises(InputError, match="no per-query values"):
        standings({"a": {"m": {"q": 1.0}}, "b": {"x": {"q": 1.0}}})


def test_the_doors_show_the_same_standings(shared, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """eb.compare(...).standings(), a config's comparison report and `evalbridge eval --baseline` agree."""
    import json

    from doors import cli
    from evalbridge.views.formats import render

    folder = shared / "data" / "real" / "trec-dl-2019-passage"
    if not folder.is_dir():
        pytest.skip(f"../shared/data/real/trec-dl-2019-passage is absent: {folder} does not exist")
    qrels, runs = folder / "qrels.dl19-passage.txt", {name: folder / f"run.{name}.top100.txt" for name in RUNS}
    metrics = ["ndcg@10", "P(rel=2)@10"]
    api = eb.compare(qrels, runs, metrics, baseline="bm25", n_resamples=100).standings().to_dict()
    (tmp_path / "eval.yaml").write_text(json.dumps({
        "qrels": str(qrels), "runs": {n: str(p) for n, p in runs.items()}, "metrics": metrics,
        "comparison": {"baseline": "bm25", "n_resamples": 100}}))
    config = json.loads(render(eb.run_config(eb.load_config(tmp_path / "eval.yaml"), write=False).report, "json"))
    monkeypatch.chdir(folder)
    code, out, err = cli("eval", qrels.name, *(p.name for p in runs.values()), "-m", *metrics, "--baseline",
                         "run.bm25.top100", "--n-resamples", "100", "--format", "json")
    assert code == 0, err
    command_line = json.loads(out)["standings"]
    assert config["standings"] == api
    assert command_line["pairs"] == [{**p, "system": f"run.{p['system']}.top100", "other": f"run.{p['other']}.top100"}
                                     for p in api["pairs"]]
    assert command_line["hardest"][0]["query"] == api["hardest"][0]["query"]


@given(st.integers(2, 4), st.lists(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=4, max_size=4), min_size=2,
                                   max_size=10), st.integers(0, 4), st.booleans())
def test_a_comparison_stands_its_systems_as_their_results_do(k, rows, hardest, baseline) -> None:  # noqa: ANN001
    """Property: eb.compare(...).standings() are the standings of the values compared: every pair (whatever the
    baselines), the same hardest queries and each query's ranks, the queries in the order of their ids."""
    names = [f"s{j}" for j in range(k)]
    values = {name: {"P@1": {f"q{i:02d}": row[j] for i, row in enumerate(rows)}} for j, name in enumerate(names)}
    cmp = eb.compare(None, values, ["P@1"], baseline="s0" if baseline else None, n_resamples=10)
    got, expected = cmp.standings(hardest=hardest), standings(values, hardest=hardest)
    assert got == expected
    assert len(got.pairs) == k * (k - 1) // 2


def test_a_comparison_without_its_values_says_so() -> None:
    from dataclasses import replace

    cmp = eb.compare(None, {"a": {"m": {"q": 1.0}}, "b": {"m": {"q": 0.0}}}, ["m"], n_resamples=10)
    with pytest.raises(InputError, match="holds no per-query values"):
        replace(cmp, values={}).standings()


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0]),
                          st.sampled_from([0.0, 0.5, 1.0])), min_size=2, max_size=15))
def test_win_tie_loss_is_counted_from_the_systems_side_as_the_comparison_counts_it(rows) -> None:  # noqa: ANN001
    """Property: every pair of the standings is (system, baseline) as compare's all-pairs rows, with the same
    wins, ties and losses: one count from the system's side in both tables (they read 34/0/9 and 9/0/34)."""
    per_system = {s: {"m": {f"q{i}": row[j] for i, row in enumerate(rows)}} for j, s in enumerate(("a", "b", "c"))}
    cmp = eb.compare(None, per_system, ["m"], n_resamples=10)
    s = cmp.standings()
    assert [(p.system, p.other, p.wins, p.ties, p.losses) for p in s.pairs] == [
        (r.system, r.baseline, r.wins, r.ties, r.losses) for r in cmp.rows]
