"""Depth pools (evalbridge.evalsets.pooling.pool): against trectools' TrecPoolMaker on TREC DL 2019, against a direct
implementation (sort each run, take its first d, drop the judged pairs) on generated runs with ties, and the
Judged@k it reports against evalbridge.evaluate before and after the pool is judged."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.evalsets.pooling import pool

DL19 = "data/real/trec-dl-2019-passage"
RUN_FILES = ("run.bm25.top100.txt", "run.bm25-rm3.top100.txt", "run.splade-pp-ed.top100.txt")


def direct_pool(qrels: dict, runs: dict, depth: int, ties: str = "docid_desc") -> set[tuple[str, str]]:
    """The pool written independently: each query's documents sorted by (score desc, doc id) in Python,
    the first ``depth`` kept, the pairs the qrels judge dropped."""
    out = set()
    for run in runs.values():
        for q, docs in run.items():
            key = (lambda d: (-docs[d], [-ord(c) for c in d])) if ties == "docid_desc" else (lambda d: (-docs[d], d))
            for doc in sorted(docs, key=key)[:depth]:
                if doc not in qrels.get(q, {}):
                    out.add((q, doc))
    return out


# -- against trectools ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dl19(shared: Path) -> tuple[Path, list[Path]]:
    folder = shared / DL19
    return folder / "qrels.dl19-passage.txt", [folder / f for f in RUN_FILES]


@pytest.mark.parametrize("depth", [1, 10, 50])
def test_pool_of_the_dl19_runs_is_trectools_pool_without_the_judged_pairs(dl19, depth):
    """trectools' Depth@K pool (TrecPoolMaker, strategy topX; it sorts by score, then doc id ascending) of the
    three DL 2019 runs, less the pairs the NIST qrels judge, is our pool with ties='docid_asc'; with nothing
    judged (queries='runs'), the two pools are equal."""
    trectools = pytest.importorskip("trectools")
    qrels_path, run_paths = dl19
    theirs = trectools.TrecPoolMaker().make_pool([trectools.TrecRun(str(p)) for p in run_paths], strategy="topX",
                                                topX=depth).pool
    their_pairs = {(str(q), d) for q, docs in theirs.items() for d in docs}
    qrels = eb.read_qrels(qrels_path)
    runs = {p.name: eb.read_run(p) for p in run_paths}
    ours = pool(qrels, runs, depth=depth, ties="docid_asc", queries="runs")
    judged = {(q, d) for q, docs in qrels.items() for d in docs}
    assert {(q, d) for q, d, _ in ours.pairs()} == their_pairs - judged
    empty = pool({}, runs, depth=depth, ties="docid_asc", queries="runs")
    assert {(q, d) for q, d, _ in empty.pairs()} == their_pairs
    assert empty.size() == len(their_pairs) and sum(empty.by_query[:, 0]) == len(their_pairs)


def test_dl19_judged_at_k_before_and_after_is_evaluates(dl19):
    """Half of each query's NIST judgements removed: Judged@10 now is evaluate's Judged@10; once the pool at
    depth 5 and at depth 10 is judged (any grade), evaluate gives the 'after' values."""
    qrels_path, run_paths = dl19
    full = eb.read_qrels(qrels_path)
    half = {q: {d: g for i, (d, g) in enumerate(sorted(docs.items())) if i % 2} for q, docs in full.items()}
    runs = {p.name: eb.read_run(p) for p in run_paths}
    result = pool(half, runs, depth=[5, 10])
    for name, run in runs.items():
        assert result.judged_at_k(name) == pytest.approx(eb.evaluate(half, run, "Judged@10")["Judged@10"], abs=1e-12)
        for d in (5, 10):
            judged = {q: dict(docs) for q, docs in half.items()}
            for q, doc, _ in result.pairs(d):
                judged[q][doc] = 0
            expected = eb.evaluate(judged, run, "Judged@10")["Judged@10"]
            assert result.judged_at_k(name, after=d) == pytest.approx(expected, abs=1e-12)
        assert result.judged_at_k(name, after=10) == 1.0
        assert result.gain(name, 10) == pytest.approx(1.0 - result.judged_at_k(name))


# -- against a direct implementation ------------------------------------------------------------------------

DOCS = st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h", "é", "B"])
SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0])  # few values: many ties
runs_st = st.dictionaries(st.sampled_from(["x", "y", "z"]), st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(DOCS, SCORES, min_size=1, max_size=8), min_size=1,
    max_size=3), min_size=1, max_size=3)
qrels_st = st.dictionaries(st.sampled_from(["q1", "q2", "q3", "q4"]), st.dictionaries(DOCS, st.integers(0, 2),
                                                                                       max_size=5), max_size=4)


@settings(max_examples=150)
@given(qrels_st, runs_st, st.integers(1, 9), st.sampled_from(["docid_desc", "docid_asc"]))
def test_pool_is_the_union_of_each_runs_first_d_less_the_judged(qrels, runs, depth, ties):
    result = pool(qrels, runs, depth=[depth, depth + 2], ties=ties, queries="runs")
    assert {(q, d) for q, d, _ in result.pairs(depth)} == direct_pool(qrels, runs, depth, ties)
    assert {(q, d) for q, d, _ in result.pairs()} == direct_pool(qrels, runs, depth + 2, ties)
    listed = result.pairs()
    assert len(listed) == len(set(listed)) == result.size()
    for name, run in runs.items():
        own = {(q, d) for q, d in direct_pool(qrels, {name: run}, depth, ties)}
        assert result.unjudged(name, depth) == len(own)
    for i, q in enumerate(result.query_ids):  # per query counts
        assert result.by_query[i, 0] == sum(p[0] == q for p in direct_pool(qrels, runs, depth, ties))


@settings(max_examples=60)
@given(qrels_st, runs_st, st.integers(1, 6))
def test_best_rank_is_the_best_rank_any_run_gives_the_pair(qrels, runs, depth):
    result = pool(qrels, runs, depth=depth, queries="runs")
    for q, doc, best in result.pairs():
        ranks = [eb_rank(run[q], doc) for run in runs.values() if q in run and doc in run[q]]
        assert best == min(ranks)


def eb_rank(docs: dict, doc: str) -> int:
    order = sorted(docs, key=lambda d: (-docs[d], [-ord(c) for c in d]))
    return order.index(doc) + 1


@settings(max_examples=60)
@given(qrels_st.filter(bool), runs_st, st.integers(1, 6))
def test_judged_at_k_now_is_evaluates_over_the_qrels_queries(qrels, runs, k):
    for name, run in runs.items():
        try:
            result = pool(qrels, {name: run}, depth=k)
        except InputError:
            result = None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ids that never meet: evaluate warns, the number is still its
            try:
                expected = eb.evaluate(qrels, run, f"Judged@{k}")[f"Judged@{k}"]
            except InputError:  # evaluate refuses a run sharing no query with the qrels; so does pool
                assert result is None
                continue
        assert result.judged_at_k(name) == pytest.approx(expected, abs=1e-12)


# -- hand examples --------------------------------------------------------------------------------------------

def test_hand_example_two_runs_two_depths():
    """x ranks q1: a (judged) b c d; y ranks q1: d c e. Depth 1: x's a is judged, y's d is not: {d}. Depth 2: x adds
    b, y adds c: {b, c, d}. x's unjudged in its first 2: b only; y's: d, c. Best ranks: d 1 (y), c 2 (y), b 2 (x)."""
    qrels = {"q1": {"a": 1}}
    runs = {"x": {"q1": {"a": 4, "b": 3, "c": 2, "d": 1}}, "y": {"q1": {"d": 3, "c": 2, "e": 1}}}
    result = pool(qrels, runs, depth=[1, 2])
    assert result.pairs(1) == [("q1", "d", 1)]
    assert result.pairs(2) == [("q1", "d", 1), ("q1", "b", 2), ("q1", "c", 2)]
    assert (result.unjudged("x", 1), result.unjudged("x", 2), result.unjudged("y", 2)) == (0, 1, 2)
    # Judged@2 of x: 1/2 now; after depth 1 (d judged) still 1/2; after depth 2, 2/2.
    assert (result.judged_at_k("x"), result.judged_at_k("x", after=1), result.judged_at_k("x", after=2)) == \
        (0.5, 0.5, 1.0)
    frame = result.pairs_frame()  # each pair is in one run's first 2 only (x has d at rank 4)
    assert frame["depth"].tolist() == [1, 2, 2] and frame["runs"].tolist() == [1, 1, 1]


def test_ties_follow_trec_evals_order_by_default():
    """Three docs tie at the top: trec_eval orders them by doc id descending (c, b, a), so depth 1 pools c."""
    result = pool({"q1": {}}, {"x": {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}}, depth=1)
    assert result.pairs() == [("q1", "c", 1)]
    assert pool({"q1": {}}, {"x": {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}}, depth=1, ties="docid_asc").pairs() == \
        [("q1", "a", 1)]
    assert pool({"q1": {}}, {"x": {"q1": {"a": 1.0, "b": 1.0, "c": 1.0}}}, depth=1,
                settings=eb.Settings(ties="docid_asc")).pairs() == [("q1", "a", 1)]


def test_queries_only_the_runs_answer_are_counted_not_pooled_by_default():
    result = pool({"q1": {"a": 1}}, {"x": {"q1": {"b": 1}, "q9": {"c": 1}}}, depth=5)
    assert result.pairs() == [("q1", "b", 1)] and result.unpooled_queries == 1
    assert pool({"q1": {"a": 1}}, {"x": {"q1": {"b": 1}, "q9": {"c": 1}}}, queries="runs").size() == 2


@pytest.mark.parametrize("kwargs, message", [
    ({"depth": 0}, "positive integer"), ({"depth": [5, "x"]}, "positive integer"), ({"k": 0}, "k must be .* cutoff of Judged@k"),
    ({"ties": "average"}, "no order"), ({"queries": "all"}, "queries must be one of"),
])
def test_bad_options_are_refused_with_the_fix(kwargs, message):
    with pytest.raises(InputError, match=message):
        pool({"q1": {"a": 1}}, {"x": {"q1": {"a": 1}}}, **kwargs)


def test_an_empty_qrels_with_the_qrels_scope_is_refused_with_the_way_out():
    with pytest.raises(InputError, match="queries='runs'"):
        pool({}, {"x": {"q1": {"a": 1}}})


def test_pool_depth_larger_than_every_ranking_pools_everything_unjudged():
    result = pool({"q1": {"a": 0}}, [eb.Run({"q1": {"a": 2, "b": 1}}, name="only")], depth=1000)
    assert result.pairs() == [("q1", "b", 2)] and result.systems == ("only",)
    assert math.isclose(result.gain("only"), 0.5)


def test_pairs_sharing_a_hash_are_told_apart_on_their_strings():
    """Every row's 64-bit hash forced to one value: the judged check and the union confirm each match on the
    (query, doc) strings, so the pool is still the direct one."""
    import numpy as np

    from evalbridge.fast import pooling
    from evalbridge.fast.rows import table_from_mapping

    qrels = {"q1": {"a": 1, "c": 0}, "q2": {"b": 2}}
    runs = {"x": {"q1": {"a": 3, "b": 2, "d": 1}, "q2": {"b": 2, "e": 1}},
            "y": {"q1": {"d": 3, "e": 2}, "q2": {"a": 2, "e": 1}}}

    def collided(rows):
        table = table_from_mapping(rows)
        object.__setattr__(table, "hashes", np.zeros(table.n_rows, dtype=np.uint64))
        return table

    columns = pooling.pool_tables(collided(qrels), [collided(r) for r in runs.values()], ["q1", "q2"], [1, 3], 3)
    ids = ["q1", "q2"]
    got = {(ids[q], d, r) for q, d, r in zip(columns.pair_query.tolist(), columns.pair_docs.to_pylist(),
                                             columns.pair_rank.tolist())}
    assert {(q, d) for q, d, _ in got} == direct_pool(qrels, runs, 3)
    assert got == {(q, d, r) for q, d, r in pool(qrels, runs, depth=[1, 3]).pairs()}
    assert columns.unjudged.tolist() == [[0, 3], [2, 4]]  # x: q1 b, d and q2 e; y: all four of its rows


def test_runs_are_taken_one_at_a_time():
    """A mapping whose runs are made when asked for (files read in turn, a TopLists): when a run is asked for, no
    earlier run is still held, so 100 runs of 5M rows never sit in memory side by side."""
    import gc
    from collections.abc import Mapping

    alive_when_asked: list[int] = []

    class Lazy(Mapping):
        def __getitem__(self, name):
            gc.collect()
            # type(), not isinstance(): gc.get_objects() may hold a dead weak proxy, which isinstance dereferences
            alive_when_asked.append(sum(type(o) is eb.Run and o.name in "abcd" for o in gc.get_objects()))
            return eb.Run({"q1": {f"{name}-{i}": float(-i) for i in range(20)}}, name=name)

        def __iter__(self):
            return iter(["a", "b", "c", "d"])

        def __len__(self):
            return 4

    result = pool({"q1": {"a-0": 1}}, Lazy(), depth=3)
    assert alive_when_asked == [0, 0, 0, 0] and result.size() == 11


# -- every number against a direct pooling in Python ----------------------------------------------------------

def direct_pooling(qrels: dict, runs: dict, query_ids: list, depths: list, k: int, ties: str) -> dict:
    """Every number of a pool, written directly: each run's queries sorted in Python by (score desc, doc id in
    ``ties``' order); a pair is in the pool at depth d when some run ranks it within d and the qrels do not judge
    it; pairs listed by query (in ``query_ids``' order), best rank, then the first run (in the order given) to rank
    it within the deepest depth and the rank there; Judged@k is the mean over ``query_ids`` of the judged share of
    each run's first k (0 for a query it does not answer)."""
    def ranked(docs: dict) -> list:
        if ties == "docid_desc":
            return sorted(docs, key=lambda d: (-docs[d], [-ord(c) for c in d]))
        return sorted(docs, key=lambda d: (-docs[d], d))

    lists = [{q: ranked(docs) for q, docs in run.items() if q in query_ids} for run in runs.values()]
    deepest = max(depths)
    best: dict = {}
    holders: dict = {}
    first: dict = {}
    for i, run in enumerate(lists):
        for q, docs in run.items():
            for r, doc in enumerate(docs[:deepest], 1):
                if doc not in qrels.get(q, {}):
                    best[q, doc] = min(best.get((q, doc), r), r)
                    holders[q, doc] = holders.get((q, doc), 0) + 1
                    first.setdefault((q, doc), (i, r))
    order = sorted(best, key=lambda p: (query_ids.index(p[0]), best[p], first[p]))

    def judged_share(run: dict, depth: int | None) -> float:
        shares = []
        for q in query_ids:
            top = run.get(q, [])[:k]
            seen = sum(doc in qrels.get(q, {}) or (depth is not None and best.get((q, doc), depth + 1) <= depth)
                       for doc in top)
            shares.append(seen / len(top) if top else 0.0)
        return sum(shares) / len(shares)

    return {
        "pairs": [(q, doc, best[q, doc], holders[q, doc]) for q, doc in order],
        "unjudged": [[sum(doc not in qrels.get(q, {}) for q, docs in run.items() for doc in docs[:d]) for d in depths]
                     for run in lists],
        "by_query": [[sum(p[0] == q and best[p] <= d for p in best) for d in depths] for q in query_ids],
        "before": [judged_share(run, None) for run in lists],
        "after": [[judged_share(run, d) for d in depths] for run in lists],
    }


def numbers_of(result_pairs: list, unjudged, by_query, before, after) -> dict:
    return {"pairs": result_pairs, "unjudged": unjudged.tolist(), "by_query": by_query.tolist(),
            "before": before.tolist(), "after": after.tolist()}


def assert_same_numbers(got: dict, expected: dict) -> None:
    assert got["pairs"] == expected["pairs"]
    assert got["unjudged"] == expected["unjudged"] and got["by_query"] == expected["by_query"]
    assert got["before"] == pytest.approx(expected["before"], abs=1e-12)
    assert len(got["after"]) == len(expected["after"])
    for row, expected_row in zip(got["after"], expected["after"]):
        assert row == pytest.approx(expected_row, abs=1e-12)


many_runs_st = st.dictionaries(st.sampled_from(["x", "y", "z", "u", "v"]), st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]), st.dictionaries(DOCS, SCORES, min_size=1, max_size=8), min_size=1,
    max_size=3), min_size=1, max_size=5)
depths_st = st.lists(st.integers(1, 9), min_size=1, max_size=3, unique=True).map(sorted)


@settings(max_examples=200)
@given(qrels_st, many_runs_st, depths_st, st.integers(1, 12), st.sampled_from(["docid_desc", "docid_asc"]),
       st.sampled_from(["runs", "qrels"]))
def test_every_number_of_the_pool_is_a_direct_pooling_in_python(qrels, runs, depths, k, ties, queries):
    """The pairs in order with their best rank and number of runs, the unjudged pairs of each run, the pairs of
    each query, Judged@k now and after each depth: all as the direct pooling says, for k below, between and
    beyond the depths."""
    try:
        result = pool(qrels, runs, depth=depths, k=k, ties=ties, queries=queries)
    except InputError:  # an empty eval set, or runs sharing no query with it: refused, as evaluate refuses them
        assert queries == "qrels"
        return
    query_ids = list(dict.fromkeys(q for run in runs.values() for q in run)) if queries == "runs" else list(qrels)
    assert list(result.query_ids) == query_ids
    pairs = [(q, d, r, n) for (q, d, r), n in zip(result.pairs(), result.pair_runs.tolist())]
    assert_same_numbers(numbers_of(pairs, result.unjudged_by_run, result.by_query, result.judged_before,
                                   result.judged_after), direct_pooling(qrels, runs, query_ids, depths, k, ties))


@settings(max_examples=100)
@given(qrels_st, many_runs_st, depths_st, st.integers(1, 12), st.integers(1, 3))
def test_pairs_whose_hashes_collide_everywhere_are_still_the_direct_pooling(qrels, runs, depths, k, kinds):
    """Every row's 64-bit hash cut to ``kinds`` values, so that most pairs share their hash with others within a
    run, across runs and with the qrels: each match is confirmed on the strings, and every number is the direct
    pooling's."""
    import numpy as np

    from evalbridge.fast import pooling
    from evalbridge.fast.rows import table_from_mapping

    def collided(rows):
        table = table_from_mapping(rows)
        object.__setattr__(table, "hashes", table.hashes % np.uint64(kinds))
        return table

    query_ids = list(dict.fromkeys(q for run in runs.values() for q in run))
    columns = pooling.pool_tables(collided(qrels), [collided(r) for r in runs.values()], query_ids, depths, k)
    pairs = [(query_ids[q], d, r, n) for q, d, r, n in zip(columns.pair_query.tolist(), columns.pair_docs.to_pylist(),
                                                           columns.pair_rank.tolist(), columns.pair_runs.tolist())]
    assert_same_numbers(numbers_of(pairs, columns.unjudged, columns.by_query, columns.judged_before,
                                   columns.judged_after),
                        direct_pooling(qrels, runs, query_ids, depths, k, "docid_desc"))


@pytest.mark.parametrize("flag", [["--min-relevance", "2"], ["--backend", "fast"], ["--judged-only"],
                                  ["--missing-queries", "drop"]])
def test_the_pool_command_has_no_flag_for_a_setting_it_does_not_read(tmp_path, capsys, flag) -> None:
    """A pool counts pairs: only the tie order and the score precision decide which; a setting that would be taken and
    change nothing (the relevance level, the backend...) has no flag, a usage error (exit 2), where --ties is read."""
    from evalbridge.cli import main

    (tmp_path / "q.txt").write_text("q1 0 a 1\n")
    (tmp_path / "r.run").write_text("q1 Q0 a 1 3 x\nq1 Q0 b 2 3 x\nq1 Q0 c 3 1 x\n")
    args = ["pool", str(tmp_path / "q.txt"), str(tmp_path / "r.run"), "--depth", "1", "-q"]
    with pytest.raises(SystemExit) as caught:
        main([*args, *flag])
    assert caught.value.code == 2 and "unrecognized arguments" in capsys.readouterr().err
    assert main([*args, "--ties", "docid_asc"]) == 0  # a before b: the judged a is the first document
    assert "ties docid_asc\ndepth    pairs to judge    queries with some\n" in (out := capsys.readouterr().out)
    assert "\n1        0 " in out
    assert main(args) == 0  # trec_eval's order, b before a: b is to judge
    assert "\n1        1 " in capsys.readouterr().out
