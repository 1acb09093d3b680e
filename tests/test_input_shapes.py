"""More input shapes, read alike at every door (API, command line, config): common column names, a BEIR
file without its header, relevant-id lists and LlamaIndex datasets as qrels, ``duplicates="first"`` and
``ids="str"``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, strategies as st

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.config import load_config
from evalbridge.config.pipeline import run_config

QRELS = "q1 0 d1 1\nq1 0 d2 2\nq2 0 d4 1\n"
RUN = "q1 Q0 d3 1 3.0 bm25\nq1 Q0 d1 2 2.0 bm25\nq1 Q0 d2 3 1.0 bm25\nq2 Q0 d4 1 1.0 bm25\n"
#: the run above with d3 given twice for q1 (its first line kept by duplicates="first")
RUN_REPEATED = RUN + "q1 Q0 d3 4 0.5 bm25\n"
METRIC = "mrr"


# ---------------------------------------------------------------- the three doors

def cli_door(capsys: pytest.CaptureFixture[str], qrels: Path, run: Path, *flags: str) -> tuple[int, Any]:
    """(exit code, the value of METRIC or the error message) of ``evalbridge eval``."""
    code = main(["eval", str(qrels), str(run), "-m", METRIC, "--format", "json", *flags])
    out, err = capsys.readouterr()
    if code:
        return code, err.strip()
    return code, next(iter(json.loads(out)["systems"].values()))["metrics"][METRIC]


def config_door(capsys: pytest.CaptureFixture[str], folder: Path, text: str) -> tuple[int, Any]:
    """(exit code, the value of METRIC or the error message) of a config run (``evalbridge run``'s pipeline;
    its errors as ``evalbridge run`` prints them)."""
    path = folder / "eval.yaml"
    path.write_text(text + f"metrics: [{METRIC}]\n", encoding="utf-8")
    try:
        outcome = run_config(load_config(path), write=False)
    except eb.InputError:
        code = main(["run", str(path), "-q"])
        return code or 0, capsys.readouterr().err.strip()
    return 0, next(iter(outcome.report.results.values())).means[METRIC]


def _message(text: str) -> str:
    """An error message without the door's own prefix (``evalbridge: error: ...: `` on the command line)."""
    return text.split("Fix:")[0].rsplit(": ", 1)[-1].strip() if "Fix:" in text else text


# ---------------------------------------------------------------- common names

@pytest.mark.parametrize("header, picked", [
    ("query,doc,judge_score", "query=query, doc=doc, grade=judge_score"),
    ("topic,docno,rel", "query=topic, doc=docno, grade=rel"),
    ("query-id,corpus-id,score", "query=query-id, doc=corpus-id, grade=score"),
    ("qid,passage_id,label", "query=qid, doc=passage_id, grade=label"),
    ("query_id,corpus_id,relevance", "query=query_id, doc=corpus_id, grade=relevance"),
])
def test_common_qrels_column_names_are_picked_and_said(tmp_path: Path, header: str, picked: str) -> None:
    """Every usual spelling of the three roles is picked, and the notes say which column took each role."""
    path = tmp_path / "judge.csv"
    path.write_text(header + "\nq1,d1,1\nq1,d2,2\nq2,d4,1\n", encoding="utf-8")
    qrels = eb.read_qrels(path)
    assert qrels == eb.Qrels({"q1": {"d1": 1, "d2": 2}, "q2": {"d4": 1}})
    assert qrels.notes == (f"columns picked by name: {picked}",)


@pytest.mark.parametrize("header, role", [("qid,query,doc,judge_score", "query"),
                                          ("query,docid,doc_id,grade", "doc"),
                                          ("query,doc,label,judge_score", "grade")])
def test_two_usual_names_for_one_role_is_an_error_listing_both(tmp_path: Path, header: str, role: str) -> None:
    path = tmp_path / "judge.csv"
    path.write_text(header + "\n" + ",".join(["x", "y", "1", "1"]) + "\n", encoding="utf-8")
    with pytest.raises(eb.InputError, match=f"several columns could be the {role}"):
        eb.read_qrels(path)


def test_judge_csv_beside_a_run_csv_gives_one_value_at_every_door(tmp_path: Path, capsys: Any) -> None:
    """`query,doc,judge_score` (an LLM judge's CSV) beside a run table, with no column named anywhere."""
    (tmp_path / "judge.csv").write_text("query,doc,judge_score\nq1,d1,1\nq1,d2,2\nq2,d4,1\n", encoding="utf-8")
    (tmp_path / "run.csv").write_text("query,doc,sim\nq1,d3,3\nq1,d1,2\nq1,d2,1\nq2,d4,1\n", encoding="utf-8")
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    expected = eb.evaluate(str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), METRIC)[METRIC]
    api = eb.evaluate(str(tmp_path / "judge.csv"), str(tmp_path / "run.csv"), METRIC)[METRIC]
    assert api == expected == 0.75
    assert cli_door(capsys, tmp_path / "judge.csv", tmp_path / "run.csv") == (0, expected)
    assert config_door(capsys, tmp_path, "qrels: judge.csv\nruns: {bm25: run.csv}\n") == (0, expected)


# ---------------------------------------------------------------- a BEIR file without its header

def test_a_beir_qrels_file_without_its_header_is_told_so_at_every_door(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "test.tsv").write_text("q1\td1\t1\nq2\td4\t1\n", encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN)
    with pytest.raises(eb.InputError) as api:
        eb.read_qrels(tmp_path / "test.tsv")
    assert "has no header line" in str(api.value) and "query-id<TAB>corpus-id<TAB>score" in str(api.value)
    assert str(api.value).startswith(f"{tmp_path / 'test.tsv'}:1: ")
    code, cli = cli_door(capsys, tmp_path / "test.tsv", tmp_path / "run.txt")
    assert code == 2 and _message(str(api.value)) in cli
    code, config = config_door(capsys, tmp_path, "qrels: test.tsv\nruns: {bm25: run.txt}\n")
    assert code == 2 and _message(str(api.value)) in config
    with pytest.raises(eb.InputError, match="has no header line"):
        eb.read_qrels(tmp_path / "test.tsv", format="beir")


def test_a_header_of_names_is_not_mistaken_for_a_missing_one(tmp_path: Path) -> None:
    """A header naming columns evalbridge does not know gets the usual error (names it looked for), not
    'no header'."""
    (tmp_path / "t.tsv").write_text("a\tb\tc\nq1\td1\t1\n", encoding="utf-8")
    with pytest.raises(eb.InputError, match="no column looks like the query"):
        eb.read_qrels(tmp_path / "t.tsv", format="tsv")


# ---------------------------------------------------------------- relevant-id lists and LlamaIndex

def test_relevant_id_lists_are_binary_qrels_in_memory_in_json_and_in_yaml(tmp_path: Path) -> None:
    lists = {"q1": ["d1", "d2"], "q2": ["d4"], "q3": []}
    expected = {"q1": {"d1": 1, "d2": 1}, "q2": {"d4": 1}, "q3": {}}
    (tmp_path / "rel.json").write_text(json.dumps(lists), encoding="utf-8")
    (tmp_path / "rel.yaml").write_text("q1: [d1, d2]\nq2: [d4]\nq3: []\n", encoding="utf-8")
    for qrels in (eb.read_qrels(lists), eb.read_qrels(lists, format="relevant"), eb.read_qrels(tmp_path / "rel.json"),
                  eb.read_qrels(tmp_path / "rel.yaml")):
        assert qrels.to_dict() == expected
    assert eb.read_qrels(tmp_path / "rel.json").notes == ("lists read as relevant doc ids (grade 1 each)",)


def test_id_lists_read_as_a_run_are_a_ranking() -> None:
    run = eb.read_run({"q1": ["d3", "d1"]})
    assert dict(run["q1"]) == {"d3": 2.0, "d1": 1.0}


def llamaindex(folder: Path) -> Path:
    """A LlamaIndex dataset as ``EmbeddingQAFinetuneDataset.save_json`` writes it (indented)."""
    data = {"queries": {"q1": "How long is annual leave?", "q2": "Where do I park?", "q3": "Who signs?"},
            "corpus": {"d1": "Leave is 25 days.", "d2": "Leave accrues monthly.", "d4": "Park in lot B."},
            "relevant_docs": {"q1": ["d1", "d2"], "q2": ["d4"]}, "mode": "text"}
    path = folder / "dataset.json"
    path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    return path


def test_a_llamaindex_dataset_is_qrels_with_its_queries_as_topics(tmp_path: Path) -> None:
    qrels = eb.read_qrels(llamaindex(tmp_path))
    assert qrels.to_dict() == {"q1": {"d1": 1, "d2": 1}, "q2": {"d4": 1}}
    assert dict(qrels.topics) == {"q1": "How long is annual leave?", "q2": "Where do I park?", "q3": "Who signs?"}
    assert qrels.notes == ("LlamaIndex dataset: relevant_docs read as qrels (grade 1 each), the 3 queries' texts "
                           "kept as qrels.topics, the corpus (3 texts) not read",
                           "1 of the queries have no relevant_docs entry")


def test_a_llamaindex_dataset_gives_one_value_at_every_door(tmp_path: Path, capsys: Any) -> None:
    path = llamaindex(tmp_path)
    (tmp_path / "run.txt").write_text(RUN)
    api = eb.evaluate(eb.read_qrels(path), str(tmp_path / "run.txt"), METRIC)[METRIC]
    assert api == eb.evaluate(QRELS_AS_LISTS, eb.read_run(tmp_path / "run.txt"), METRIC)[METRIC]
    assert cli_door(capsys, path, tmp_path / "run.txt") == (0, api)
    assert config_door(capsys, tmp_path, "qrels: dataset.json\nruns: {bm25: run.txt}\n") == (0, api)


QRELS_AS_LISTS = {"q1": {"d1": 1, "d2": 1}, "q2": {"d4": 1}}


def test_a_llamaindex_dataset_with_an_unknown_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps({"queries": {"q1": "x"}, "relevant_docs": {"q1": ["d1"]}, "answers": {}}))
    with pytest.raises(eb.InputError, match="unknown key 'answers' in a LlamaIndex dataset"):
        eb.read_qrels(path)


# ---------------------------------------------------------------- duplicates="first"

ranked_with_repeats = st.lists(st.sampled_from([f"d{i}" for i in range(6)]), max_size=12)


@given(st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), ranked_with_repeats, min_size=1))
def test_first_occurrence_kept_equals_deduplicating_by_hand(lists: dict[str, list[str]]) -> None:
    by_hand = {qid: list(dict.fromkeys(docs)) for qid, docs in lists.items()}
    pairs = {qid: (docs, ["d0"]) for qid, docs in lists.items()}
    _, run = eb.from_pairs(pairs, duplicates="first")
    assert run == eb.from_pairs({qid: (docs, ["d0"]) for qid, docs in by_hand.items()})[1]
    assert eb.read_run(lists, duplicates="first") == eb.read_run(by_hand)
    dropped = sum(len(docs) for docs in lists.values()) - sum(len(docs) for docs in by_hand.values())
    assert any(f"{dropped} repeated document" in note for note in run.notes) == bool(dropped)


@given(st.lists(st.tuples(st.sampled_from(["q1", "q2"]), st.integers(0, 5), st.floats(-9, 9)), min_size=1,
                max_size=30))
def test_first_row_kept_in_a_table_equals_pandas_drop_duplicates(rows: list[tuple[str, int, float]]) -> None:
    frame = pd.DataFrame(rows, columns=["qid", "doc_id", "score"]).astype({"doc_id": str})
    kept = eb.read_run(frame, duplicates="first")
    assert kept == eb.read_run(frame.drop_duplicates(["qid", "doc_id"], keep="first"))
    assert kept.columnar is not None


def test_first_line_kept_in_trec_jsonl_and_rag_logs(tmp_path: Path) -> None:
    (tmp_path / "run.txt").write_text(RUN_REPEATED)
    assert dict(eb.read_run(tmp_path / "run.txt", duplicates="first")["q1"]) == {"d3": 3.0, "d1": 2.0, "d2": 1.0}
    lines = [{"query_id": "q1", "doc_id": d, "score": s} for d, s in (("d3", 3), ("d1", 2), ("d3", 1))]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert dict(eb.read_run(tmp_path / "run.jsonl", duplicates="first")["q1"]) == {"d3": 3, "d1": 2}
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"query_id": "q1", "retrieved": ["d3", "d1", "d3", "d2"], "relevant": ["d1"]}) + "\n")
    qrels, run = eb.read_pair(log, duplicates="first")
    assert dict(run["q1"]) == {"d3": 3.0, "d1": 2.0, "d2": 1.0}
    assert run.notes[-1] == "duplicates='first': 1 repeated document dropped (the first occurrence of each kept)"
    with pytest.raises(eb.InputError, match="retrieved twice.*duplicates='first'"):
        eb.read_pair(log)


def test_duplicates_first_at_every_door_and_refused_by_default_alike(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN_REPEATED)
    (tmp_path / "clean.txt").write_text(RUN)
    expected = eb.evaluate(str(tmp_path / "qrels.txt"), str(tmp_path / "clean.txt"), METRIC)[METRIC]
    run = eb.read_run(tmp_path / "run.txt", duplicates="first")
    assert eb.evaluate(str(tmp_path / "qrels.txt"), run, METRIC)[METRIC] == expected
    assert cli_door(capsys, tmp_path / "qrels.txt", tmp_path / "run.txt", "--duplicates", "first") == (0, expected)
    base = "qrels: qrels.txt\nruns: {bm25: run.txt}\n"
    assert config_door(capsys, tmp_path, base + "duplicates: first\n") == (0, expected)
    assert config_door(capsys, tmp_path, "qrels: qrels.txt\nruns: {bm25: {path: run.txt, duplicates: first}}\n") \
        == (0, expected)
    with pytest.raises(eb.InputError) as api:
        eb.read_run(tmp_path / "run.txt")
    message = _message(str(api.value))
    assert "appears twice" in message
    for code, text in (cli_door(capsys, tmp_path / "qrels.txt", tmp_path / "run.txt"),
                       config_door(capsys, tmp_path, base)):
        assert code == 2 and message in text


def test_duplicates_first_is_noted_in_the_report_provenance(tmp_path: Path, capsys: Any) -> None:
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN_REPEATED)
    assert main(["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", METRIC, "--format", "json",
                 "--duplicates", "first"]) == 0
    run = json.loads(capsys.readouterr().out)["provenance"]["inputs"]["runs.run"]
    assert run["options"] == {"duplicates": "first"}
    assert run["notes"] == ["duplicates='first': 1 repeated document dropped (the first occurrence of each kept)"]


def test_duplicates_is_refused_for_qrels_and_for_an_unknown_choice(tmp_path: Path) -> None:
    with pytest.raises(eb.InputError, match="applies to runs and ranked lists, not to qrels"):
        eb.read_qrels({"q1": {"d1": 1}}, duplicates="first")
    with pytest.raises(eb.InputError, match="duplicates='last' is not one of 'error', 'first'"):
        eb.read_run({"q1": ["d1"]}, duplicates="last")


# ---------------------------------------------------------------- ids="str"

@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(-5, 5)), min_size=1, max_size=25,
                unique_by=lambda row: row[:2]))
def test_ids_read_as_strings_equal_reading_stringified_data(rows: list[tuple[int, int, int]]) -> None:
    frame = pd.DataFrame(rows, columns=["qid", "doc_id", "score"])
    as_str = eb.read_run(frame, ids="str")
    assert as_str == eb.read_run(frame.astype({"qid": str, "doc_id": str}))
    assert as_str.query_id_kind == as_str.doc_id_kind == ("str",)
    data = {q: {d: s for qq, d, s in rows if qq == q} for q, _, _ in rows}
    assert eb.read_run(data, ids="str") == eb.read_run({str(q): {str(d): s for d, s in docs.items()}
                                                   for q, docs in data.items()})


def test_an_int_chunk_id_beside_string_ids_meets_them_with_ids_str(tmp_path: Path) -> None:
    log = [{"qid": "q1", "contexts": [{"chunk_id": 7, "score": 0.9}, {"chunk_id": 3, "score": 0.5}],
            "relevant": ["3"]}]
    with pytest.raises(eb.InputError, match="ids='str'"):
        eb.evaluate(*eb.read_pair(log, format="rag", doc="chunk_id"), METRIC)
    qrels, run = eb.read_pair(log, format="rag", doc="chunk_id", ids="str")
    assert eb.evaluate(qrels, run, METRIC)[METRIC] == 0.5
    assert eb.read_qrels({"q1": ["3", 4]}, ids="str").to_dict() == {"q1": {"3": 1, "4": 1}}
    with pytest.raises(eb.InputError, match="judged twice"):
        eb.from_graded({"q1": {3: 1.0, "3": 2.0}}, {"q1": ["3"]}, min_relevance=1, ids="str")


def test_ids_str_at_every_door(tmp_path: Path, capsys: Any) -> None:
    """A Parquet run whose doc ids are ints beside TREC qrels (str ids): refused alike without ``ids``,
    one value at every door with it."""
    (tmp_path / "qrels.txt").write_text("q1 0 1 1\nq1 0 2 2\nq2 0 4 1\n")
    frame = pd.DataFrame({"qid": ["q1", "q1", "q1", "q2"], "doc_id": [3, 1, 2, 4], "score": [3.0, 2.0, 1.0, 1.0]})
    frame.to_parquet(tmp_path / "run.parquet")
    with pytest.raises(eb.InputError) as refused:
        eb.evaluate(str(tmp_path / "qrels.txt"), str(tmp_path / "run.parquet"), METRIC)
    message = _message(str(refused.value))
    api = eb.evaluate(eb.read_qrels(tmp_path / "qrels.txt", ids="str"),
                      eb.read_run(tmp_path / "run.parquet", ids="str"), METRIC)[METRIC]
    assert api == 0.75
    config = "qrels: qrels.txt\nruns: {bm25: run.parquet}\n"
    assert cli_door(capsys, tmp_path / "qrels.txt", tmp_path / "run.parquet", "--ids", "str") == (0, api)
    assert config_door(capsys, tmp_path, config + "ids: str\n") == (0, api)
    for code, text in (cli_door(capsys, tmp_path / "qrels.txt", tmp_path / "run.parquet"),
                       config_door(capsys, tmp_path, config)):
        assert code == 2 and message in text


# ---------------------------------------------------------------- a RAG log, alone, at the three doors (tests/doors.py)

def _log(*questions: dict[str, Any]) -> str:
    return "".join(json.dumps(q) + "\n" for q in questions)


DUPLICATED_CHUNK = _log({"query_id": "q1", "retrieved": ["c7", "c3", "c7", "c1"], "relevant": ["c1"]},
                        {"query_id": "q2", "retrieved": ["c2", "c2"], "relevant": ["c2"]})
INT_CHUNK_IDS = _log({"qid": "q1", "contexts": [{"chunk_id": 7, "score": 0.9}, {"chunk_id": 3, "score": 0.5}],
                      "relevant": ["3"]})


@pytest.mark.parametrize("options, says, means", [
    ({}, "doc 'c7' is retrieved twice", None),
    ({"duplicates": "first"}, (), {"log": {"mrr": (1 / 3 + 1) / 2}}),
])
def test_a_rag_log_with_a_duplicated_chunk_at_every_door(tmp_path: Path, options: dict[str, str], says: Any,
                                                         means: Any) -> None:
    from doors import Case, assert_same, through_doors

    doors = through_doors(Case(files={"log.jsonl": DUPLICATED_CHUNK}, runs=("log.jsonl",), metrics=("mrr",),
                               run_options={"format": "rag", **options}), tmp_path)
    assert_same(doors, says=says)
    assert doors["api"].means == means
    assert doors["cli"].code == (0 if means else 2)


@pytest.mark.parametrize("options, code", [({"doc": "chunk_id"}, 2), ({"doc": "chunk_id", "ids": "str"}, 0)])
def test_an_int_chunk_id_beside_string_ids_at_every_door(tmp_path: Path, options: dict[str, str], code: int) -> None:
    from doors import Case, assert_same, through_doors

    doors = through_doors(Case(files={"log.jsonl": INT_CHUNK_IDS}, runs=("log.jsonl",), metrics=("mrr",),
                               run_options={"format": "rag", **options}), tmp_path)
    assert_same(doors, says=() if code == 0 else "doc ids are")
    assert doors["config"].code == code
    if code == 0:
        assert doors["api"].means == {"log": {"mrr": 0.5}}


@pytest.mark.parametrize("name, text", [
    ("relevant.json", json.dumps(QRELS_AS_LISTS)),
    ("dataset.json", json.dumps({"queries": {"q1": "a?", "q2": "b?"}, "corpus": {}, "relevant_docs":
                                 {q: list(docs) for q, docs in QRELS_AS_LISTS.items()}})),
])
def test_relevant_lists_and_llamaindex_qrels_at_every_door(tmp_path: Path, name: str, text: str) -> None:
    from doors import Case, assert_same, through_doors

    doors = through_doors(Case(files={name: text, "a.run": RUN}, qrels=name, runs=("a.run",), metrics=("mrr",)),
                          tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"a": {"mrr": eb.evaluate(QRELS_AS_LISTS, eb.Run(_run_dict()), "mrr")["mrr"]}}


def _run_dict() -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in RUN.splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    return run


@pytest.mark.slow
def test_ids_str_and_duplicates_with_engine_spark(spark: Any, tmp_path: Path) -> None:
    """A Parquet run Spark reads itself (int doc ids) gets ids='str' as a cast, and the local engine's value;
    duplicates='first' is refused there (a table Spark reads has no row order), never ignored."""
    (tmp_path / "qrels.txt").write_text("q1 0 1 1\nq1 0 2 2\nq2 0 4 1\n")
    pd.DataFrame({"qid": ["q1", "q1", "q1", "q2"], "doc_id": [3, 1, 2, 4], "score": [3.0, 2.0, 1.0, 1.0]}).to_parquet(
        tmp_path / "run.parquet")
    config = "qrels: qrels.txt\nruns: {bm25: run.parquet}\nids: str\n"
    assert config_door(None, tmp_path, config + "engine: spark\n") == config_door(None, tmp_path, config) == (0, 0.75)
    path = tmp_path / "eval.yaml"
    path.write_text(config + "engine: spark\nduplicates: first\nmetrics: [mrr]\n")
    with pytest.raises(eb.InputError, match="has no row order"):
        run_config(load_config(path), write=False)
