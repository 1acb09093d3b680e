"""One rule for graded judgements at every door: grades that are not whole numbers (LLM judges' 0-10 scores)
give a binary metric no level to guess; a level stated anywhere (Python, command line, config, a reader's
option) is used; graded metrics need none. And an agreement with one side empty says so."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from doors import Case, assert_same, through_doors
from evalbridge.cli import main
from strategies import metrics, qrels_and_run

#: an LLM judge's grades 0-10 and a ranking: P@5 is 0.6 at level 7, 1.0 at the silent level 1
GRADES = {"q1": {"a": 9.5, "b": 7.5, "c": 3.5, "d": 8.0, "e": 1.5}}
RANKING = {"q1": {"a": 5.0, "c": 4.0, "b": 3.0, "e": 2.0, "d": 1.0}}
AT_7 = 0.6


def qrels_file(folder: Path, fmt: str) -> Path:
    """GRADES written as a file of format ``fmt``."""
    rows = [(q, d, g) for q, docs in GRADES.items() for d, g in docs.items()]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    path = folder / {"csv": "judge.csv", "parquet": "judge.parquet", "jsonl": "judge.jsonl", "json": "judge.json",
                     "tsv": "judge.tsv"}[fmt]
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif fmt == "parquet":
        frame.to_parquet(path)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(dict(zip(frame.columns, r))) + "\n" for r in rows))
    else:
        path.write_text(json.dumps(GRADES))
    return path


RUN = "".join(f"{q} Q0 {d} {i + 1} {s} sys\n" for q, docs in RANKING.items() for i, (d, s) in enumerate(docs.items()))
#: the same data as one RAG log: retrieved ids in rank order, the judge's grades per question
LOG = "".join(json.dumps({"query_id": q, "retrieved": list(RANKING[q]), "relevant": GRADES[q]}) + "\n" for q in GRADES)
FORMATS = ["csv", "tsv", "parquet", "jsonl", "json", "rag"]


def case(folder: Path, fmt: str, metric: str, **settings: float) -> Case:
    """The judge's grades in format ``fmt`` beside the run (a RAG log holds both)."""
    if fmt == "rag":
        return Case(files={"log.jsonl": LOG}, runs=("log.jsonl",), metrics=(metric,), settings=settings)
    judge = qrels_file(folder, fmt).name
    return Case(files={"run.txt": RUN}, qrels=judge, runs=("run.txt",), metrics=(metric,), settings=settings)


@pytest.mark.parametrize("fmt", FORMATS)
def test_fractional_grades_with_a_binary_metric_and_no_level_are_refused_with_the_fix(tmp_path, fmt):
    """Every format, every door: exit 2 and one message naming a grade, the metric and the fix of each door."""
    doors = through_doors(case(tmp_path, fmt, "P@5"), tmp_path)
    assert_same(doors, says=("not whole numbers (e.g. 1.5; top grade 9.5)", "P@5 needs a relevance level"))
    assert doors["api"].code == 2
    fixes = {"api": "min_relevance=7 (", "cli": "--min-relevance 7 (", "config": "min_relevance: 7 ("}
    assert all(fixes[name] in door.message for name, door in doors.items())


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_stated_level_gives_the_same_value_at_every_door(tmp_path, fmt):
    doors = through_doors(case(tmp_path, fmt, "P@5", min_relevance=7), tmp_path)
    assert_same(doors)
    assert next(iter(doors["cli"].means.values()))["P@5"] == pytest.approx(AT_7)


@pytest.mark.parametrize("metric", ["nDCG@5", "nDCG(gain=exp)@5", "ERR@5", "P(rel=7)@5"])
def test_graded_metrics_and_metrics_with_their_own_level_need_no_level(tmp_path, metric):
    reference = eb.evaluate(eb.Qrels(GRADES), RANKING, metric)[metric]
    doors = through_doors(case(tmp_path, "csv", metric), tmp_path)
    assert_same(doors)
    assert doors["api"].code == 0 and doors["api"].means["run"][metric] == pytest.approx(reference)


def test_the_level_is_a_read_option_of_every_format_that_reads_judgements(tmp_path):
    """read_qrels(..., min_relevance=7) for CSV / TSV / Parquet / JSON Lines / JSON / a table / a mapping, and
    a config source's own min_relevance: stored on the qrels, so evaluate needs nothing more."""
    frame = pd.DataFrame([(q, d, g) for q, docs in GRADES.items() for d, g in docs.items()],
                         columns=["query_id", "doc_id", "relevance"])
    inputs = [qrels_file(tmp_path, fmt) for fmt in ("csv", "tsv", "parquet", "jsonl", "json")] + [frame, GRADES]
    for obj in inputs:
        qrels = eb.read_qrels(obj, min_relevance=7)
        assert qrels.min_relevance == 7, obj
        assert eb.evaluate(qrels, RANKING, "P@5")["P@5"] == pytest.approx(AT_7)
    judge = qrels_file(tmp_path, "csv").name
    doors = through_doors(Case(files={"run.txt": RUN}, qrels=judge, runs=("run.txt",), metrics=("P@5",),
                               qrels_options={"min_relevance": 7}), tmp_path)  # config: qrels: {min_relevance: 7}
    assert_same(doors)
    assert doors["config"].means["run"]["P@5"] == pytest.approx(AT_7)


def test_the_level_is_not_an_option_of_a_run(tmp_path):
    with pytest.raises(eb.InputError, match="a level of judgements, and a run is being read"):
        eb.read_run(RANKING, min_relevance=7)


def test_the_formats_table_lists_the_level_wherever_judgements_are_read():
    from evalbridge.io import formats

    for fmt in formats().values():
        assert ("min_relevance" in fmt.takes) == fmt.can_read("qrels"), fmt.name


# ------------------------------------------------------------------ properties

@settings(max_examples=60, deadline=None)
@given(qrels_and_run(float_grades=False, negative=True), metrics(names=("P", "R", "RR", "AP", "Success", "Rprec")))
def test_whole_number_grades_of_a_judged_pool_never_need_a_level(data, metric):
    qrels, run = data
    eb.evaluate(qrels, run, metric)
    eb.evaluate({q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()}, run, metric)


@settings(max_examples=60, deadline=None)
@given(qrels_and_run(float_grades=True), metrics(names=("P", "R", "RR", "AP", "Success", "Rprec", "nDCG", "DCG")),
       st.sampled_from([None, 0.5, 7]))
def test_a_level_is_asked_for_exactly_when_a_binary_metric_meets_a_fractional_grade(data, metric, level):
    """Whole-number grades that look like a rating have their own rule (the rating tests below), left out here."""
    from evalbridge.metrics.resolution import rating_scale

    qrels, run = data
    grades = {float(g) for docs in qrels.values() for g in docs.values()}
    fractional = any(not g.is_integer() for g in grades)
    assume(fractional or rating_scale(grades) is None)
    refused = level is None and fractional and metric.info.binary and metric.get("rel") is None
    try:
        eb.evaluate(qrels, run, metric, min_relevance=level)
    except eb.InputError as error:
        assert refused and "not whole numbers" in str(error)
    else:
        assert not refused


# ------------------------------------------------------------------ agreement with one side empty

@pytest.mark.parametrize("door", ["api", "cli", "config"])
def test_an_agreement_with_one_side_empty_is_an_input_error_with_the_fix(tmp_path, capsys, door):
    """``{"q1": {}}`` on one side (an empty file is refused by its reader: "the qrels has no queries")."""
    judged, empty = {"q1": {"d1": 1, "d2": 0}}, {"q1": {}}
    (tmp_path / "a.json").write_text(json.dumps(judged))
    (tmp_path / "b.json").write_text(json.dumps(empty))
    if door == "api":
        with pytest.raises(eb.InputError) as info:
            eb.agree(judged, empty).judges
        code, message = 2, str(info.value).replace("'b'", "'b.json'")
    elif door == "cli":
        code = main(["agree", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--names", "a", "b.json"])
        message = capsys.readouterr().err
    else:
        (tmp_path / "agree.yaml").write_text("title: t\nagreement:\n  judges: {a: a.json, b.json: b.json}\n")
        code = main(["run", str(tmp_path / "agree.yaml")])
        message = capsys.readouterr().err
    assert code == 2
    assert "the judgements 'b.json' hold no (query, doc, grade)" in message
    assert "Fix: give 'b.json' its judgements" in message and "min() arg" not in message


def test_an_agreement_with_nothing_on_one_side_in_python_says_so():
    with pytest.raises(eb.InputError, match="the judgements 'a' hold no .query, doc, grade.: no query"):
        eb.agree({}, {"q1": {"d1": 1}}).judges


# ------------------------------------------------------------------ rating scales (1-5 ratings, integer 0-10 scores)

#: an LLM's 1-5 ratings of every retrieved document: at rating >= 4, P@5 is 2/5 in each query (q1 a b, q2 g i);
#: at the silent level 1 every rated document was relevant: P@5 1.0
RATING = {"q1": {"a": 5, "b": 4, "c": 1, "d": 2, "e": 3}, "q2": {"f": 1, "g": 4, "h": 2, "i": 5, "j": 1}}
#: integer 0-10 judge scores: at >= 7, P@5 is 3/5 in q1 (a b d) and 1/5 in q2 (i); at level 1, 4/5 and 4/5
SCORES = {"q1": {"a": 9, "b": 7, "c": 3, "d": 8, "e": 0}, "q2": {"f": 2, "g": 6, "h": 1, "i": 10, "j": 0}}
RANKED = {q: {d: float(5 - i) for i, d in enumerate(docs)} for q, docs in RATING.items()}
RATING_AT_4, SCORES_AT_7 = (2 / 5 + 2 / 5) / 2, (3 / 5 + 1 / 5) / 2


def graded_case(folder: Path, fmt: str, grades: dict, metric: str, **settings: float) -> Case:
    """``grades`` in format ``fmt`` (a TREC qrels file too) beside a run ranking each query's five documents."""
    run = "".join(f"{q} Q0 {d} {i + 1} {s} sys\n" for q, docs in RANKED.items() for i, (d, s) in enumerate(docs.items()))
    rows = [(q, d, g) for q, docs in grades.items() for d, g in docs.items()]
    if fmt == "rag":
        log = "".join(json.dumps({"query_id": q, "retrieved": list(RANKED[q]), "relevant": grades[q]}) + "\n"
                      for q in grades)
        return Case(files={"log.jsonl": log}, runs=("log.jsonl",), metrics=(metric,), settings=settings)
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])
    if fmt == "parquet":
        frame.to_parquet(folder / "judge.parquet")
        files: dict = {}
    else:
        files = {"judge.csv": frame.to_csv(index=False), "judge.tsv": frame.to_csv(index=False, sep="\t"),
                 "judge.jsonl": "".join(json.dumps(dict(zip(frame.columns, r))) + "\n" for r in rows),
                 "judge.json": json.dumps(grades), "judge.qrels": "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)}
    name = {"trec": "judge.qrels"}.get(fmt, f"judge.{fmt}")
    return Case(files={**files, "run.txt": run}, qrels=name, runs=("run.txt",), metrics=(metric,), settings=settings)


RATING_FORMATS = ["csv", "tsv", "parquet", "jsonl", "json", "trec", "rag"]


@pytest.mark.parametrize("fmt", RATING_FORMATS)
@pytest.mark.parametrize(("grades", "level", "says"), [
    (RATING, 4, "grades 1, 2, 3, 4, 5: several, none below 1, as in a 1-5 rating"),
    ({q: {d: min(g, 4) for d, g in docs.items()} for q, docs in RATING.items()}, 3,
     "grades 1, 2, 3, 4: several, none below 1"),
    (SCORES, 7, "grades up to 10, above the 0-4 of judged pools"),
])
def test_a_rating_with_a_binary_metric_and_no_level_is_refused_with_each_doors_fix(tmp_path, fmt, grades, level,
                                                                                    says):
    doors = through_doors(graded_case(tmp_path, fmt, grades, "P@5"), tmp_path)
    assert_same(doors, says=("grades that look like a rating", says, "P@5 needs a relevance level"))
    assert doors["api"].code == 2
    fixes = {"api": f"min_relevance={level} (", "cli": f"--min-relevance {level} (",
             "config": f"min_relevance: {level} ("}
    assert all(fixes[name] in door.message for name, door in doors.items()), {n: d.message for n, d in doors.items()}


@pytest.mark.parametrize("fmt", RATING_FORMATS)
@pytest.mark.parametrize(("grades", "level", "truth"), [(RATING, 4, RATING_AT_4), (SCORES, 7, SCORES_AT_7)])
def test_a_rating_with_its_level_gives_the_precision_by_hand_at_every_door(tmp_path, fmt, grades, level, truth):
    doors = through_doors(graded_case(tmp_path, fmt, grades, "P@5", min_relevance=level), tmp_path)
    assert_same(doors)
    assert next(iter(doors["config"].means.values()))["P@5"] == pytest.approx(truth)


@pytest.mark.parametrize("metric", ["nDCG@5", "ERR@5", "P(rel=4)@5", "RR(rel=4)"])
def test_graded_metrics_and_metrics_with_their_own_level_take_a_rating_as_it_is(tmp_path, metric):
    doors = through_doors(graded_case(tmp_path, "csv", RATING, metric), tmp_path)
    assert_same(doors)
    assert doors["cli"].means["run"][metric] == pytest.approx(eb.evaluate(eb.Qrels(RATING), RANKED, metric)[metric])


@pytest.mark.parametrize(("name", "grades"), [
    ("relevant only, one grade (BEIR, MS MARCO)", {"q1": {"a": 1, "c": 1}, "q2": {"g": 1}}),
    ("relevant only, two grades", {"q1": {"a": 2, "c": 1}, "q2": {"g": 1}}),
    ("relevant only, a TREC 0-3 pool's 1, 2, 3", {"q1": {"a": 3, "c": 1}, "q2": {"g": 2, "i": 1}}),
    ("TREC 0-3", {"q1": {"a": 3, "b": 2, "c": 1, "d": 0}, "q2": {"g": 2, "h": 0}}),
    ("TREC 0-4", {"q1": {"a": 4, "b": 3, "c": 1, "d": 0}, "q2": {"g": 2, "h": 0}}),
    ("TREC web, -2 for spam", {"q1": {"a": 4, "b": -2, "c": 1, "d": 0}, "q2": {"g": 3, "h": 2}}),
])
def test_judged_pools_keep_level_1_silently_at_every_door(tmp_path, name, grades):
    """By hand, level 1: every graded doc >= 1 among the five retrieved of each query, over 5."""
    truth = sum(sum(1 for d in RANKED[q] if docs.get(d, 0) >= 1) / 5 for q, docs in grades.items()) / len(grades)
    for fmt in ("csv", "trec"):
        doors = through_doors(graded_case(tmp_path, fmt, grades, "P@5"), tmp_path)
        assert_same(doors)
        assert doors["config"].means["run"]["P@5"] == pytest.approx(truth), name
        assert not any("rating" in w for door in doors.values() for w in door.warnings), name


@settings(max_examples=80, deadline=None)
@given(st.dictionaries(st.sampled_from(["q1", "q2"]), st.dictionaries(st.sampled_from(list("abcdef")),
                                                                    st.integers(-2, 10), min_size=1), min_size=1),
       st.sampled_from(["P@3", "RR", "AP", "nDCG@3"]), st.sampled_from([None, 1, 4]))
def test_a_level_is_asked_for_exactly_when_a_binary_metric_meets_a_rating(grades, metric, level):
    """The rule said independently: four distinct grades or more and none below 1, or a grade above 4."""
    ranked = {q: {d: float(6 - i) for i, d in enumerate("abcdef")} for q in grades}
    drawn = {g for docs in grades.values() for g in docs.values()}
    rating = (len(drawn) >= 4 and min(drawn) >= 1) or max(drawn) > 4
    refused = level is None and rating and metric != "nDCG@3"
    try:
        eb.evaluate(grades, ranked, metric, min_relevance=level)
    except eb.InputError as error:
        assert refused and "look like a rating" in str(error)
    else:
        assert not refused
