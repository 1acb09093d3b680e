"""A judging batch out, graded pairs back in, merged, and what the new judgements changed (evalbridge.io.judging,
evalbridge.io.texts, evalbridge.evalsets.merging, evalbridge.evalsets.changes): hand examples, the texts of real topics files,
and the whole loop on TREC DL 2019 with judgements removed and restored."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.io.judging import BATCH_FIELDS, write_batch
from evalbridge.io.texts import read_texts
from evalbridge.evalsets.merging import RULES
from evalbridge.evalsets.ranking_agreement import ranking_agreement
from evalbridge.stats.system_order import kendall_tau, tau_ap

DL19 = "data/real/trec-dl-2019-passage"
RUN_FILES = {"bm25": "run.bm25.top100.txt", "bm25-rm3": "run.bm25-rm3.top100.txt",
             "splade": "run.splade-pp-ed.top100.txt"}


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# -- texts ------------------------------------------------------------------------------------------------

def test_texts_of_trec_topics_in_both_shapes(shared, tmp_path):
    """The DL 2019 topics (qid TAB text, 43 lines) and the Robust04 SGML topics (<num> Number: 301 <title> ...;
    250 <top> blocks, counted with grep)."""
    dl = read_texts(shared / DL19 / "topics.dl19-passage.txt")
    assert len(dl) == 43 and dl["156493"] == "do goldfish grow"
    robust = read_texts(shared / "data/real/robust04/topics.robust04.301-450.601-700.txt")
    assert len(robust) == 250 and robust["301"] == "International Organized Crime"
    assert robust["302"] == "Poliomyelitis and Post-Polio"


def test_texts_of_beir_files_and_of_a_rag_log(tmp_path):
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "annual leave?", "metadata": {}}\n', encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "title": "Leave", "text": "20 days a year."}\n'
                      '{"_id": "d2", "title": "", "text": "No title."}\n', encoding="utf-8")
    assert read_texts(queries) == {"q1": "annual leave?"}
    assert read_texts(corpus, kind="documents") == {"d1": "Leave 20 days a year.", "d2": "No title."}
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"question_id": "q1", "question": "annual leave?",
                               "retrieved": [{"doc_id": "d1", "text": "20 days."}, {"doc_id": "d9", "text": "x"}]})
                   + "\n", encoding="utf-8")
    assert read_texts(log) == {"q1": "annual leave?"}
    assert read_texts(log, kind="documents") == {"d1": "20 days.", "d9": "x"}


def test_an_id_with_two_texts_is_refused_with_its_line(tmp_path):
    path = tmp_path / "topics.tsv"
    path.write_text("q1\tfirst\nq1\tsecond\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"topics.tsv:2.*two texts"):
        read_texts(path)


# -- the batch and the graded pairs -------------------------------------------------------------------------

QRELS = {"q1": {"a": 1}, "q2": {"c": 0}}
RUNS = {"x": {"q1": {"a": 3, "b": 2, "e": 1}, "q2": {"c": 2, "d": 1}}, "y": {"q1": {"e": 2, "a": 1}}}


def test_the_batch_is_one_object_per_pool_pair_with_both_texts(tmp_path):
    pool = eb.pool(QRELS, RUNS, depth=2)
    path = write_batch(pool, tmp_path / "batch.jsonl", queries={"q1": "one?", "q2": "two?"},
                       documents={"b": "B.", "d": "D.", "e": "E."})
    items = lines(path)
    assert [tuple(item) for item in items] == [BATCH_FIELDS] * 3
    assert [(i["query_id"], i["doc_id"], i["query"], i["passage"]) for i in items] == [
        ("q1", "e", "one?", "E."), ("q1", "b", "one?", "B."), ("q2", "d", "two?", "D.")]
    bare = lines(write_batch(pool, tmp_path / "bare.jsonl", depth=2))
    assert all(i["query"] is None and i["passage"] is None for i in bare)


def test_a_pool_pair_without_a_text_is_refused_naming_it(tmp_path):
    pool = eb.pool(QRELS, RUNS, depth=2)
    with pytest.raises(InputError, match=r"1 documents of the pool have no text in the corpus given: 'd'"):
        write_batch(pool, tmp_path / "b.jsonl", documents={"b": "B.", "e": "E."})


def test_graded_pairs_come_back_through_the_registry_with_their_judge(tmp_path):
    path = tmp_path / "graded.jsonl"
    path.write_text('{"query_id": "q1", "doc_id": "e", "passage": "E.", "grade": 2, "judge": "umbrela"}\n'
                    '{"query_id": "q1", "doc_id": "b", "passage": "B.", "grade": 0}\n', encoding="utf-8")
    qrels = eb.read_qrels(path)  # recognised by its judge / passage fields
    assert qrels == {"q1": {"e": 2, "b": 0}}
    assert dict(qrels.judged_by["q1"]) == {"e": "umbrela", "b": "judge"}
    named = eb.read_qrels(path, format="judgements", judge_name="gpt-judge")
    assert named.judged_by["q1"]["b"] == "gpt-judge"
    out = tmp_path / "back.jsonl"
    eb.write(qrels, out, format="judgements")
    again = eb.read_qrels(out)
    assert again == qrels and dict(again.judged_by["q1"]) == dict(qrels.judged_by["q1"])


@pytest.mark.parametrize("text, message", [
    ('{"query_id": "q1", "doc_id": "a", "judge": "j"}\n', r"graded.jsonl:1.*no grade"),
    ('{"query_id": "q1", "doc_id": "a", "grade": 1, "judge": "j"}\n{"query_id": "q1", "doc_id": "a", "grade": 2}\n',
     r"graded.jsonl:2.*graded twice.*lines 1 and 2"),
    ('{"query_id": "q1", "doc_id": "a", "grade": "high", "judge": "j"}\n', r"graded.jsonl:1"),
    ('{"query_id": "q1", "grade": 1, "judge": "j"}\n', r"graded.jsonl:1.*no 'doc_id'"),
])
def test_bad_graded_pairs_are_refused_with_file_and_line(tmp_path, text, message):
    path = tmp_path / "graded.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        eb.read_qrels(path, format="judgements")


# -- merging ------------------------------------------------------------------------------------------------

def test_merge_adds_new_pairs_and_keeps_every_source():
    human = {"q1": {"a": 2, "b": 0}}
    judge = eb.Qrels({"q1": {"c": 1}, "q2": {"d": 3}}, judged_by={"q1": {"c": "umbrela"}, "q2": {"d": "umbrela"}})
    merged = eb.merge_judgements(human, judge, names=("human", None))
    assert merged == {"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"d": 3}}
    assert {q: dict(d) for q, d in merged.judged_by.items()} == {
        "q1": {"a": "human", "b": "human", "c": "umbrela"}, "q2": {"d": "umbrela"}}
    assert merged.notes[-1] == ("judgements merged: 2 grades added (2 from umbrela) to the 2 of human, 0 pairs graded "
                                "alike")


def test_a_conflict_is_refused_naming_the_pair_both_grades_and_the_rules():
    with pytest.raises(InputError) as caught:
        eb.merge_judgements({"q1": {"a": 2, "b": 1}}, {"q1": {"a": 0, "b": 1}}, names=("human", "umbrela"))
    text = str(caught.value)
    assert "query 'q1'" in text and "doc 'a'" in text and "grade 2 from human" in text
    assert "grade 0 from umbrela" in text and all(f"'{rule}'" in text for rule in RULES)


grades = st.dictionaries(st.sampled_from(["q1", "q2"]), st.dictionaries(st.sampled_from("abcd"), st.integers(0, 3),
                                                                          min_size=1), min_size=1)


@settings(max_examples=80)
@given(grades, grades, st.sampled_from(sorted(RULES)))
def test_each_rule_settles_every_conflict_its_way(base, new, rule):
    merged = eb.merge_judgements(base, new, prefer=rule, names=("b", "n"))
    pick = {"base": lambda x, y: x, "new": lambda x, y: y, "higher": max, "lower": min}[rule]
    for q in set(base) | set(new):
        for d in set(base.get(q, {})) | set(new.get(q, {})):
            x, y = base.get(q, {}).get(d), new.get(q, {}).get(d)
            expected = y if x is None else x if y is None else pick(x, y)
            assert merged[q][d] == expected
            source = merged.judged_by[q][d]
            assert source == ("b" if x is not None and (y is None or expected == x) else "n")


def test_merge_refuses_an_unknown_rule_and_two_relevance_levels():
    with pytest.raises(InputError, match="prefer must be one of"):
        eb.merge_judgements({"q1": {"a": 1}}, {"q1": {"a": 2}}, prefer="max")
    with pytest.raises(InputError, match="different relevance levels"):
        eb.merge_judgements(eb.Qrels({"q1": {"a": 1}}, min_relevance=2), eb.Qrels({"q1": {"b": 1}}, min_relevance=7))


# -- what changed -------------------------------------------------------------------------------------------

def test_what_changed_is_the_ranking_agreement_of_the_two_sides_and_says_who_to_ship():
    """Two judgements: before, x wins every query on P@1; after (the new grades make y's documents relevant and x's
    not), y does. Ship before x, after y: the line says no."""
    queries = [f"q{i}" for i in range(8)]
    runs = {"x": {q: {"r": 2.0, "s": 1.0} for q in queries}, "y": {q: {"s": 2.0, "r": 1.0} for q in queries},
            "z": {q: {"n": 2.0} for q in queries}}
    before = {q: {"r": 1, "s": 0} for q in queries}
    after = eb.merge_judgements(before, {q: {"r": 0, "s": 1} for q in queries}, prefer="new")
    change = eb.what_changed(before, after, runs, ["P@1", "RR"])
    assert (change.ship_before, change.ship_after, change.same_ship) == ("x", "y", False)
    assert change.answer.startswith("No: on P@1 the best system was x (1.0000) before and is y (1.0000) after")
    results = [{n: eb.evaluate(q, r, ["P@1", "RR"]) for n, r in runs.items()} for q in (before, after)]
    expected = ranking_agreement(*results, names=("before", "after"), truth=1)
    assert change.ranking == expected
    row = change.ranking["P@1"]
    assert row.kendall_tau == pytest.approx(kendall_tau(row.means_a, row.means_b)[0])
    assert row.tau_ap == tau_ap(row.means_b, row.means_a)   # after, as full as before, is the truth
    assert change.judgements == {"before": 16, "after": 16, "changed": 16, "added": 0, "removed": 0}
    assert json.loads(change.render("json"))["same_ship"] is False
    assert "reversed" in str(change)


# -- the whole loop on TREC DL 2019 ---------------------------------------------------------------------------

@pytest.mark.slow
def test_the_loop_on_dl19_restores_the_nist_numbers(shared, tmp_path):
    """A third of the NIST judgements removed (fixed seed). Pool the three runs at depth 10 -> a batch with the
    real topics -> graded pairs back (the 'judge' answers with the removed NIST grades) -> merge -> re-evaluate:
    every pair the batch asks for is unjudged, the merged qrels are the NIST qrels on every pair the runs rank in
    their first 10, so DCG@10 and P@10 equal evaluate's with the full qrels, and what changed counts the pairs added."""
    folder = shared / DL19
    full = eb.read_qrels(folder / "qrels.dl19-passage.txt")
    rng = random.Random(2019)
    removed = {(q, d) for q, docs in full.items() for d in docs if rng.random() < 1 / 3}
    partial = eb.Qrels({q: {d: g for d, g in docs.items() if (q, d) not in removed} for q, docs in full.items()})
    runs = {name: eb.read_run(folder / f) for name, f in RUN_FILES.items()}
    pool = eb.pool(partial, runs, depth=10)
    batch = write_batch(pool, tmp_path / "batch.jsonl", queries=folder / "topics.dl19-passage.txt")
    items = lines(batch)
    assert len(items) == pool.size() > 0 and all(i["query"] for i in items)
    asked = {(i["query_id"], i["doc_id"]) for i in items}
    # the judge: NIST's grade where NIST judged the pair, else (a pair NIST never judged) grade 0
    graded = tmp_path / "graded.jsonl"
    graded.write_text("".join(json.dumps({**i, "grade": full[i["query_id"]].get(i["doc_id"], 0),
                                          "judge": "nist-replay"}) + "\n" for i in items), encoding="utf-8")
    new = eb.read_qrels(graded)
    merged = eb.merge_judgements(partial, new, names=("nist", None))
    assert set(merged.judged_by["1037798"].values()) <= {"nist", "nist-replay"}
    for name, run in runs.items():
        top = {(q, d) for q in run for d, _ in sorted(run[q].items(), key=lambda x: (-x[1], x[0]))[:10]}
        assert all(merged.get(q, {}).get(d) == full[q].get(d, merged.get(q, {}).get(d)) for q, d in top)
        # what depends only on the first 10 documents is NIST's again (nDCG's ideal also counts the removed
        # relevant documents no run ranks in its first 10, which the pool never asks for)
        for metric in ("DCG@10", "P(rel=2)@10"):
            assert eb.evaluate(merged, run, metric)[metric] == pytest.approx(eb.evaluate(full, run, metric)[metric],
                                                                             abs=1e-12)
        assert pool.judged_at_k(name, after=10) == 1.0
    assert all(d not in partial.get(q, {}) for q, d in asked)
    assert {(q, d) for q, d in asked if d in full.get(q, {})} <= removed
    change = eb.what_changed(partial, merged, runs, ["nDCG@10", "AP"])
    assert change.judgements["added"] == new.n_rows == len(asked)
    assert change.ship_after == max(runs, key=lambda n: eb.evaluate(full, runs[n], "nDCG@10")["nDCG@10"])
    assert change.answer.startswith(("Yes", "No"))


def test_what_changed_speaks_as_compare_does_system_minus_baseline_and_the_fuller_judgements_as_the_truth():
    """Each pair's delta is the later run minus the earlier (system - baseline), as compare's; each system's is
    after - before. Four runs, each ranking its own document first; P@1 before a .8 > b .6 > c .4 > d .2, after
    b .9 > c .7 > a .5 > d .1. tau_ap takes the fuller judgements as the truth (after here: before leaves one pair
    unjudged), and says so; given the other way round, the fuller is before and it takes before."""
    queries = [f"q{i}" for i in range(10)]
    runs = {s: {q: {f"doc-{s}": 2.0, "other": 1.0} for q in queries} for s in "abcd"}

    def judged(shares: dict[str, int]) -> dict[str, dict[str, int]]:
        return {q: {f"doc-{s}": int(i < k) for s, k in shares.items()} for i, q in enumerate(queries)}

    before, after = judged({"a": 8, "b": 6, "c": 4, "d": 2}), judged({"a": 5, "b": 9, "c": 7, "d": 1})
    del before["q9"]["doc-d"]   # not relevant either way: one judgement fewer
    change = eb.what_changed(before, after, runs, ["P@1"])
    row = change.ranking["P@1"]
    compared = eb.compare(after, runs, ["P@1"], baseline="a", n_resamples=100)
    pair = next(p for p in row.pairs if (p.system_1, p.system_2) == ("b", "a"))
    assert pair.delta_b == pytest.approx(compared.get("b", "P@1").delta) == pytest.approx(0.4)
    assert pair.delta_a == pytest.approx(-0.2)
    assert row.tau_ap == tau_ap(row.means_b, row.means_a) != tau_ap(row.means_a, row.means_b)
    assert "after as the truth" in str(change) and "after as the truth" in change.ranking.describe()
    other = eb.what_changed(after, before, runs, ["P@1"]).ranking
    assert other["P@1"].tau_ap == tau_ap(other["P@1"].means_a, other["P@1"].means_b)
    assert "before as the truth" in other.describe()
