"""Every door is the same door: one input through the Python API, `evalbridge eval` and a config run
(tests/doors.py) gives the same means, or the same fault with exit 2."""

from __future__ import annotations

import io
import json

import pytest

from doors import Case, assert_same, cli, through_doors

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d4 1\n"
RUN = "q1 Q0 d1 1 3.0 a\nq1 Q0 d2 2 2.0 a\nq2 Q0 d9 1 2.0 a\nq2 Q0 d4 2 1.0 a\n"

#: a ragas-like evaluation log: the questions themselves as ids, contexts as text
RAGAS = [
    {"user_input": "Where is the Colosseum?", "retrieved_contexts": ["Paris has the Louvre.", "Rome has the Colosseum."],
     "reference_contexts": ["Rome has the Colosseum."]},
    {"user_input": "What is the Louvre?", "retrieved_contexts": ["Paris has the Louvre.", "Rome has the Colosseum."],
     "reference_contexts": ["Paris has the Louvre."]},
    {"user_input": "Capital of Peru?", "retrieved_contexts": ["Rome has the Colosseum."],
     "reference_contexts": ["Lima is the capital of Peru."]},
]
RAGAS_ROLES = {"query": "user_input", "retrieved": "retrieved_contexts", "relevant": "reference_contexts"}


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def parquet(**columns: list) -> bytes:
    import pandas as pd

    buffer = io.BytesIO()
    pd.DataFrame(columns).to_parquet(buffer)
    return buffer.getvalue()


def test_a_trec_qrels_and_run_give_the_same_means_at_every_door(tmp_path):
    """The plainest case: the three doors agree on the means (and on the system's name)."""
    doors = through_doors(Case(files={"qrels.txt": QRELS, "a.run": RUN}, qrels="qrels.txt", runs=("a.run",),
                               metrics=("P@2", "mrr")), tmp_path)
    assert_same(doors)
    assert doors["cli"].means == {"a": {"P@2": 0.5, "mrr": 0.75}}


def test_a_ragas_log_with_text_contexts_is_evaluated_alone_at_every_door(tmp_path):
    """One positional log holding qrels and run, its fields named by RAG roles (--columns retrieved=...,
    relevant=...; columns: in a config; read_pair(retrieved=...) in Python): text contexts are the doc ids."""
    doors = through_doors(Case(files={"log.jsonl": jsonl(RAGAS)}, runs=("log.jsonl",), metrics=("mrr", "P@1"),
                               run_options=RAGAS_ROLES), tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"log": {"mrr": 0.5, "P@1": pytest.approx(1 / 3)}}


def test_a_ragas_log_on_the_command_line_with_columns(tmp_path):
    """The command of the issue, as a user types it: `evalbridge eval log.jsonl -m mrr --columns query=...,...`."""
    (tmp_path / "log.jsonl").write_text(jsonl(RAGAS))
    code, out, err = cli("eval", tmp_path / "log.jsonl", "-m", "mrr", "--format", "json", "--columns",
                         "query=user_input,retrieved=retrieved_contexts,relevant=reference_contexts")
    assert (code, err) == (0, "")
    assert json.loads(out)["systems"]["log"]["metrics"] == {"mrr": 0.5}


def test_several_logs_are_several_systems_over_the_same_questions(tmp_path):
    """Two logs = two systems, each judged by its own (equal) judgements, at every door."""
    better = [dict(row, retrieved_contexts=[*row["reference_contexts"], "Nothing to do with it."])
              for row in RAGAS]
    doors = through_doors(Case(files={"base.jsonl": jsonl(RAGAS), "better.jsonl": jsonl(better)},
                               runs=("base.jsonl", "better.jsonl"), metrics=("mrr",), run_options=RAGAS_ROLES),
                          tmp_path)
    assert_same(doors)
    assert doors["cli"].means == {"base": {"mrr": 0.5}, "better": {"mrr": 1.0}}


def test_a_judge_csv_beside_a_parquet_run_names_each_side_columns(tmp_path):
    """--qrels-columns / --run-columns (columns: per source; query=, doc= per call): a judge CSV
    `query,doc,judge_score` beside a Parquet run `qid,docno,score`, at every door."""
    judge = "query,doc,judge_score\nq1,d2,1\nq1,d1,0\nq2,d3,1\n"
    run = parquet(qid=["q1", "q1", "q2", "q2"], docno=["d1", "d2", "d4", "d3"], sim=[3.0, 2.0, 2.0, 1.0])
    doors = through_doors(Case(files={"judge.csv": judge, "run.parquet": run}, qrels="judge.csv",
                               runs=("run.parquet",), metrics=("mrr",),
                               qrels_options={"query": "query", "doc": "doc", "grade": "judge_score"},
                               run_options={"query": "qid", "doc": "docno", "score": "sim"}), tmp_path)
    assert_same(doors)
    assert doors["config"].means == {"run": {"mrr": 0.5}}


def test_shared_columns_go_to_the_inputs_whose_format_reads_them(tmp_path):
    """--columns applies to every input, each taking the roles its format reads (a TREC qrels takes none);
    a role no input reads is refused, never dropped."""
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.csv").write_text("qid,docno,sim\nq1,d3,2\nq1,d1,1\nq2,d4,1\n")
    code, out, err = cli("eval", tmp_path / "qrels.txt", tmp_path / "run.csv", "-m", "mrr", "--format", "json",
                         "--columns", "query=qid,doc=docno,score=sim")
    assert (code, err) == (0, "") and json.loads(out)["systems"]["run"]["metrics"] == {"mrr": 1.0}
    code, _, err = cli("eval", tmp_path / "qrels.txt", tmp_path / "run.csv", "-m", "mrr", "--columns",
                       "query=qid,doc=docno,score=sim,retrieved=contexts")
    assert code == 2 and "--columns: no input's format reads the role 'retrieved'" in err and "rag" in err


def test_convert_reads_a_ragas_log_with_rag_roles(tmp_path):
    """convert takes the same --columns: a ragas log becomes a JSON qrels and run (its question texts cannot
    be TREC ids)."""
    (tmp_path / "log.jsonl").write_text(jsonl(RAGAS))
    code, _, err = cli("convert", tmp_path / "log.jsonl", tmp_path / "qrels.json", "--from", "rag", "--run-output",
                       tmp_path / "run.json", "--columns",
                       "query=user_input,retrieved=retrieved_contexts,relevant=reference_contexts")
    assert code == 0, err
    import evalbridge as eb

    assert eb.to_qrels(tmp_path / "qrels.json").to_dict() == {
        row["user_input"]: {row["reference_contexts"][0]: 1} for row in RAGAS}
    assert eb.to_run(tmp_path / "run.json")["Capital of Peru?"] == {"Rome has the Colosseum.": 1.0}
