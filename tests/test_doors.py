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



def unwarned(err: str) -> str:
    """stderr without the EvalbridgeWarnings (tests/test_warnings.py has them)."""
    return "".join(line for line in err.splitlines(keepends=True) if not line.startswith("evalbridge: warning: "))

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
    assert (code, unwarned(err)) == (0, "")  # a question with nothing judged retrieved is warned about
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


def test_several_logs_that_judge_a_question_differently_are_refused_at_every_door(tmp_path):
    """Two logs = two systems over ONE set of judgements: a question judged differently is an error naming both
    files, the question and the document (read_logs in Python), never two systems scored on different truths."""
    other = [dict(row, reference_contexts=[*row["reference_contexts"], "Rome has the Colosseum."])
             if i == 1 else row for i, row in enumerate(RAGAS)]
    doors = through_doors(Case(files={"base.jsonl": jsonl(RAGAS), "other.jsonl": jsonl(other)},
                               runs=("base.jsonl", "other.jsonl"), metrics=("mrr",), run_options=RAGAS_ROLES),
                          tmp_path)
    assert_same(doors, says=("query 'What is the Louvre?'", "judge this question differently",
                             "doc 'Rome has the Colosseum.' has no judgement in base", "grade 1 in other"))
    assert {door.code for door in doors.values()} == {2}


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

    assert eb.read_qrels(tmp_path / "qrels.json").to_dict() == {
        row["user_input"]: {row["reference_contexts"][0]: 1} for row in RAGAS}
    assert eb.read_run(tmp_path / "run.json")["Capital of Peru?"] == {"Rome has the Colosseum.": 1.0}


# ---------------------------------------------------------------- one message per fault, exit 2, at every door

BIG = "1" + "0" * 400  # an integer beyond the float range: no OverflowError may reach the user

FAULTS = {
    "a folder given as the run": (
        Case(files={"qrels.txt": QRELS, "a.run/": ""}, qrels="qrels.txt", runs=("a.run",)),
        ("a.run", "this is a folder, not a file", "give the path of a file inside it")),
    "a folder given as the qrels": (
        Case(files={"qrels.txt/": "", "a.run": RUN}, qrels="qrels.txt", runs=("a.run",)),
        ("qrels.txt", "this is a folder, not a file")),
    "a run that does not exist": (
        Case(files={"qrels.txt": QRELS}, qrels="qrels.txt", runs=("a.run",)),
        ("a.run", "the file does not exist")),
    "a 400-digit score in a JSON run": (
        Case(files={"qrels.txt": QRELS, "a.json": '{"q1": {"d1": %s}}' % BIG}, qrels="qrels.txt", runs=("a.json",)),
        ("a.json", "query 'q1'", "(401 digits) is too large")),
    "a 400-digit grade in JSON qrels": (
        Case(files={"qrels.json": '{"q1": {"d1": %s}}' % BIG, "a.run": RUN}, qrels="qrels.json", runs=("a.run",)),
        ("qrels.json", "(401 digits) is too large")),
    "a 400-digit score in a JSON Lines run": (
        Case(files={"qrels.txt": QRELS, "a.jsonl": '{"query_id": "q1", "doc_id": "d1", "score": %s}\n' % BIG},
             qrels="qrels.txt", runs=("a.jsonl",)),
        ("a.jsonl:1", "(401 digits) is too large")),
    "a 400-digit score in a RAG log": (
        Case(files={"log.jsonl": jsonl([{"query_id": "q1", "retrieved": [{"doc_id": "d1", "score": 1}],
                                         "relevant": ["d1"]}]).replace('"score": 1', f'"score": {BIG}')},
             runs=("log.jsonl",)),
        ("log.jsonl:1", "(401 digits) is too large")),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_one_fault_gives_one_message_and_exit_2_at_every_door(tmp_path, name):
    """The API raises an EvalbridgeError, the CLI and a config run exit 2: each message names the file as the
    user wrote it and says the same thing (no internal error, no dependency exception)."""
    case, says = FAULTS[name]
    doors = through_doors(case, tmp_path)
    assert_same(doors, says=says)
    assert {door.code for door in doors.values()} == {2}


def test_the_command_line_names_the_file_as_written_without_config_words(tmp_path):
    """A reader's error on the command line is the API's message (the path as typed, no `runs.a (trec)` key path,
    no `command line:` prefix); a config run prefixes it with its file, line and key."""
    case = Case(files={"qrels.txt": QRELS, "a.run": RUN.replace("2.0", "2,0")}, qrels="qrels.txt", runs=("a.run",))
    doors = through_doors(case, tmp_path)
    assert_same(doors)
    assert doors["cli"].message == doors["api"].message
    assert doors["config"].message.endswith(f"eval.yaml:1: runs.a (trec): {doors['api'].message}")


@pytest.mark.parametrize("metrics", [None, 5, b"P@5"])
def test_metrics_that_are_no_metric_are_a_clear_error_at_every_verb(metrics):
    """`metrics=None` (or an int, bytes) is a MetricSpecError saying what metrics may be, never a TypeError."""
    import evalbridge as eb

    qrels, run = {"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}
    results = eb.evaluate(qrels, run, "P@1")
    for call in (lambda: eb.evaluate(qrels, run, metrics), lambda: eb.crosscheck(qrels, run, metrics),
                 lambda: eb.compare(None, {"a": results, "b": results}, metrics)):
        with pytest.raises(eb.MetricSpecError, match="metrics must be a metric like 'nDCG@10', a list of them"):
            call()


def test_rows_of_mixed_types_are_an_input_error():
    """ir-measures rows mixed with tuples or dicts: an InputError naming both types, never an AttributeError."""
    import ir_measures

    import evalbridge as eb

    for other in [("q1", "d2", 0.3), {"query_id": "q1"}, "q1 d2 0.3"]:
        with pytest.raises(eb.InputError, match="the rows mix ScoredDoc and"):
            eb.read_run([ir_measures.ScoredDoc("q1", "d1", 0.9), other])


def test_a_comparison_names_a_missing_metric_by_its_label_not_its_repr():
    """compare_systems on a metric no system was evaluated on: the label, never `MetricRequest(...)`."""
    import evalbridge as eb

    results = eb.evaluate({"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}, "P@1")
    with pytest.raises(eb.InputError) as info:
        eb.compare(None, {"a": results, "b": results}, {"precision": "P@5"})
    assert "'precision'" in str(info.value) and "MetricRequest" not in str(info.value)


def test_a_400_digit_number_in_a_dataframe_is_an_input_error():
    """pandas object columns holding a huge int: an InputError, not pyarrow's OverflowError."""
    import pandas as pd

    import evalbridge as eb

    frame = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d2"], "score": [int(BIG), 1]})
    with pytest.raises(eb.InputError, match="too large"):
        eb.read_run(frame)
    with pytest.raises(eb.InputError, match=r"\(401 digits\) is too large"):
        eb.Run({"q1": {"d1": int(BIG)}})


# ---------------------------------------------------------------- the fix in the words of the door

#: fault -> (case, what every door says, the fix as each door spells it)
WORDED = {
    "QRELS and RUN swapped": (
        Case(files={"qrels.txt": QRELS, "a.run": RUN}, qrels="a.run", runs=("qrels.txt",)),
        ("a.run:1", "expected 4 columns (qid iter docid rel), got 6", "this file looks like a run"),
        {"api": "read it with read_run()", "cli": "give it after QRELS, as a RUN (were QRELS and RUN swapped?)",
         "config": "give it under runs:"}),
    "a RAG log whose relevant field is not found": (
        Case(files={"log.jsonl": jsonl([{"query_id": "q1", "retrieved": ["d1"], "gold_ids": ["d1"]}])},
             runs=("log.jsonl",)),
        ("log.jsonl:1", "no field looks like the relevant list"),
        {"api": "relevant='...'", "cli": "--run-columns relevant=...", "config": "columns: {relevant: ...}"}),
    "a CSV without its header": (
        Case(files={"qrels.txt": QRELS, "a.csv": "q1,d1,3\nq1,d2,2\n"}, qrels="qrels.txt", runs=("a.csv",)),
        ("a.csv:1", "the file has no header line", "'q1,d1,3' is data"),
        dict.fromkeys(("api", "cli", "config"), "add a header line naming the columns")),
}


@pytest.mark.parametrize("name", list(WORDED))
def test_the_fix_is_spelled_as_the_user_writes_it_at_their_door(tmp_path, name):
    """One fault, one message (exit 2) at every door; the fix names the option or place as that door spells it,
    and never another door's (no Python call on the command line, no `qrels:` key outside a config)."""
    case, says, fixes = WORDED[name]
    doors = through_doors(case, tmp_path)
    assert_same(doors, says=says)
    for door, fix in fixes.items():
        assert fix in doors[door].message, (door, doors[door].message)
        others = [other for d, other in fixes.items() if d != door and other not in fix]
        assert not [other for other in others if other in doors[door].message], (door, doors[door].message)


def test_a_qrels_beside_a_log_is_refused_at_every_door_in_its_words(tmp_path):
    """A RAG log holds its own judgements: beside qrels, whose judgements count would be a guess, so every door
    refuses it (exit 2) with its own way out: Python read_pair / read_run, the command line the log alone (never
    `remove qrels:`, a config's words), a config `remove qrels:`."""
    log = jsonl([{"query_id": "q1", "retrieved": ["d1"], "relevant": ["d1"]}])
    case = Case(files={"qrels.txt": QRELS, "log.jsonl": log}, qrels="qrels.txt", runs=("log.jsonl",),
                run_options={"format": "rag"})
    doors = through_doors(case, tmp_path)
    import evalbridge as eb

    with pytest.raises(eb.InputError) as info:  # the Python door of a file given as the run: evaluate(qrels, path)
        eb.evaluate(tmp_path / "qrels.txt", tmp_path / "log.jsonl", "P@1")
    messages = {"api": str(info.value), "cli": doors["cli"].message, "config": doors["config"].message}
    for message in messages.values():
        assert "format 'rag' holds its own judgements, and qrels are given too" in message
        assert "evalbridge does not choose which judge" in message
    assert doors["cli"].code == doors["config"].code == 2
    assert "evaluate(*read_pair(path), metrics)" in messages["api"]
    assert "evaluate it alone, without QRELS" in messages["cli"] and "qrels:" not in messages["cli"]
    assert "remove qrels:" in messages["config"]
    # the ranking alone, asked for explicitly (what tests/doors.py's API door does with read_run)
    assert doors["api"].means == {"log": {"P@2": 0.25}}  # q1: 1 of 2; q2 missing from the log: 0


def test_wording_spells_options_per_door():
    """evalbridge.common.wording: Python by default; the door opened by the CLI or a config inside its block only; on the
    command line a column of the side being read has that side's flag."""
    from evalbridge.common.wording import current, door, option, place, side

    assert (current(), option("min_relevance", 7), option("doc", "docno", column=True)) == \
        ("python", "min_relevance=7", "doc='docno'")
    with door("command line"):
        assert (option("min_relevance", 7), option("doc", "docno", column=True)) == \
            ("--min-relevance 7", "--columns doc=docno")
        assert "QRELS" in place("qrels")
        with side("qrels"):
            assert option("grade", "judge_score", column=True) == "--qrels-columns grade=judge_score"
            assert option("format", "csv") == "--qrels-format csv"
    with door("config"):
        assert (option("min_relevance", 7), option("doc", "docno", column=True)) == \
            ("min_relevance: 7", "columns: {doc: docno}")
    assert current() == "python"
    with pytest.raises(ValueError, match="unknown door"), door("carrier pigeon"):
        pass


def test_check_cross_checks_a_log_alone(tmp_path):
    """`evalbridge check LOG -m ...`: a RAG log holding qrels and run is cross-checked alone, as eval reads it;
    two runs are refused (check compares one run with the libraries)."""
    (tmp_path / "log.jsonl").write_text(jsonl(RAGAS))
    roles = "query=user_input,retrieved=retrieved_contexts,relevant=reference_contexts"
    code, out, err = cli("check", tmp_path / "log.jsonl", "-m", "mrr", "P@1", "--backends", "pytrec_eval",
                         "--format", "json", "--columns", roles)
    assert (code, unwarned(err)) == (0, "") and json.loads(out)["crosscheck"]["log"]["ok"] is True
    code, _, err = cli("check", tmp_path / "log.jsonl", tmp_path / "log.jsonl", "-m", "mrr", "--columns", roles)
    assert code == 2 and "check cross-checks one run; got 2" in err


@pytest.mark.parametrize("call", [
    "eb.compare(None, None, ['P@1'])", "eb.compare(None, {'a': 5, 'b': 6}, ['P@1'])",
    "eb.crosscheck(QRELS_DICT, RUN_DICT, 'P@1', backends=5)", "eb.crosscheck(QRELS_DICT, RUN_DICT, 'P@1', backends='ranx')",
    "eb.check_gates(None, {})", "eb.check_gates({'P@1': '>= 0'}, None)",
    "eb.write(eb.Qrels(QRELS_DICT), None)", "eb.write(5, 'x.txt')", "eb.Metric.parse(None)",
    "eb.load_config(None)", "eb.run_config(None)", "eb.read_pair(None, format='rag')",
])
def test_a_wrong_argument_at_the_api_is_an_evalbridge_error_saying_what_is_expected(call):
    """Arguments of the wrong kind at the Python door: an EvalbridgeError naming what was expected and what was got,
    never a raw TypeError / AttributeError from deep inside."""
    import evalbridge as eb

    with pytest.raises(eb.EvalbridgeError) as info:
        eval(call, {"eb": eb, "QRELS_DICT": {"q1": {"d1": 1}}, "RUN_DICT": {"q1": {"d1": 1.0}}})  # noqa: S307
    assert "got " in str(info.value)


JUDGED = "q1 Q0 d3 1\nq1 Q0 d1 2\nq1 Q0 d2 0\nq2 Q0 d4 1\n"


@pytest.mark.parametrize(("argv", "systems"), [
    (["judged.txt", "--run-format", "judged_list"], ["judged"]),
    (["qrels.txt", "a.run"], ["a"]),
    (["qrels.txt", "a.run", "--run-format", "trec"], ["a"]),
])
def test_eval_tells_qrels_from_inputs_that_hold_both(tmp_path, argv, systems):
    """The first input is QRELS unless its own format holds both (a RAG log) or it is alone (then --run-format names
    its format): a judged list alone, a TREC qrels and run with or without --run-format."""
    for name, text in (("judged.txt", JUDGED), ("other.txt", JUDGED), ("qrels.txt", QRELS), ("a.run", RUN)):
        (tmp_path / name).write_text(text)
    code, out, err = cli("eval", *[tmp_path / a if a.endswith((".txt", ".run")) else a for a in argv], "-m", "P@2",
                         "--format", "json")
    assert (code, err) == (0, "") and list(json.loads(out)["systems"]) == systems


@pytest.mark.parametrize(("argv", "says"), [
    (["a.run"], "a.run is the only input, and it holds no judgements (format 'trec')"),
    (["log.jsonl", "--qrels-format", "trec"], "--qrels-format is given but"),
    (["log.jsonl", "--qrels-columns", "query=qid"], "--qrels-columns is given but there is no QRELS"),
    (["judged.txt", "other.txt", "--run-format", "judged_list"],
     "format 'judged_list' holds its own judgements, and qrels are given too (QRELS)"),
])
def test_eval_with_one_input_that_cannot_be_evaluated_alone_says_why(tmp_path, argv, says):
    """A lone run without judgements, or a qrels flag with no qrels: exit 2 and the way out, never argparse's
    'the following arguments are required'."""
    for name, text in (("a.run", RUN), ("log.jsonl", jsonl(RAGAS)), ("judged.txt", JUDGED), ("other.txt", JUDGED)):
        (tmp_path / name).write_text(text)
    code, _, err = cli("eval", *[tmp_path / a if "." in a and not a.startswith("-") and "=" not in a else a
                                 for a in argv], "-m", "P@2")
    assert code == 2 and says in err and "Fix:" in err and len(err.strip().splitlines()) == 1
