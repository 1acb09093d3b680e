"""The field names of RAG tools' own logs (issue 37, item 5): ragas, LlamaIndex, DeepEval, TruLens and LangSmith logs
are read with their own field names (``preset="ragas"``, or picked up when only one tool's names fit), and roles only
a RAG log has (``retrieved=``, ``relevant=``, ``preset=``) make a JSON Lines file a RAG log at every door.

Every log below holds the same two questions, written by hand after each tool's documented record: the first
retrieved its relevant document first (RR 1), the second at rank 2 (RR 1/2); one relevant each, so by hand
P@2 = 0.5 and RR = 0.75.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from doors import Case, assert_same, through_doors

TRUTH = {"P@2": 0.5, "RR": 0.75}
LEAVE, PARKING, EXPENSES, TRAVEL = ("Annual leave is 25 days.", "Parking is free after 6pm.",
                                    "Expenses are filed within 30 days.", "Travel is booked through the portal.")


def _lines(*objects: Any) -> str:
    return "".join(json.dumps(obj) + "\n" for obj in objects)


#: tool -> its log (one record per question, as the tool writes it)
LOGS: dict[str, str] = {
    "ragas": _lines(
        {"user_input": "How many days of leave?", "retrieved_contexts": [LEAVE, PARKING],
         "reference_contexts": [LEAVE], "response": "25 days.", "reference": "25 days."},
        {"user_input": "How do I book travel?", "retrieved_contexts": [EXPENSES, TRAVEL],
         "reference_contexts": [TRAVEL], "response": "Through the portal.", "reference": "Use the portal."}),
    "llamaindex": _lines(
        {"query": "How many days of leave?", "expected_ids": ["n-7"], "retrieved_ids": ["n-7", "n-2"],
         "expected_texts": None, "retrieved_texts": [LEAVE, PARKING], "mode": "text", "metric_dict": {}},
        {"query": "How do I book travel?", "expected_ids": ["n-9"], "retrieved_ids": ["n-4", "n-9"],
         "expected_texts": None, "retrieved_texts": [EXPENSES, TRAVEL], "mode": "text", "metric_dict": {}}),
    "deepeval": _lines(
        {"input": "How many days of leave?", "actual_output": "25 days.", "expected_output": "25 days.",
         "context": [LEAVE], "retrieval_context": [LEAVE, PARKING]},
        {"input": "How do I book travel?", "actual_output": "The portal.", "expected_output": "Use the portal.",
         "context": [TRAVEL], "retrieval_context": [EXPENSES, TRAVEL]}),
}


@pytest.mark.parametrize("tool", sorted(LOGS))
def test_a_tools_own_log_is_read_by_its_field_names_at_every_door(tmp_path: Path, tool: str) -> None:
    name = f"{tool}.jsonl"
    doors = through_doors(Case(files={name: LOGS[tool]}, runs=(name,), metrics=("P@2", "RR")), tmp_path)
    assert_same(doors)
    assert doors["api"].means == {tool: TRUTH}


@pytest.mark.parametrize("tool", sorted(LOGS))
def test_a_named_preset_reads_the_same_log_at_every_door(tmp_path: Path, tool: str) -> None:
    name = f"{tool}.jsonl"
    doors = through_doors(Case(files={name: LOGS[tool]}, runs=(name,), metrics=("P@2", "RR"),
                               run_options={"preset": tool}), tmp_path)
    assert_same(doors)
    assert doors["api"].means == {tool: TRUTH}


def test_ragas_ids_are_read_before_its_texts() -> None:
    from evalbridge.io.rag import read_log

    qrels, run = read_log([{"user_input": "leave?", "retrieved_contexts": [LEAVE, PARKING],
                            "retrieved_context_ids": ["hr-1", "fac-2"], "reference_contexts": [LEAVE],
                            "reference_context_ids": ["hr-1"]}])
    assert dict(run["leave?"]) == {"hr-1": 2.0, "fac-2": 1.0} and dict(qrels["leave?"]) == {"hr-1": 1}
    assert "retrieved=retrieved_context_ids (ragas)" in qrels.notes[0]


def test_an_unknown_preset_is_refused_with_the_choices(tmp_path: Path) -> None:
    doors = through_doors(Case(files={"ragas.jsonl": LOGS["ragas"]}, runs=("ragas.jsonl",),
                               run_options={"preset": "ragaz"}), tmp_path)
    assert_same(doors, says=("preset='ragaz'", "'ragas', 'llamaindex'"))
    assert doors["cli"].code == 2


#: a LangSmith experiment's runs beside their examples: nested, no list at the top of a record
LANGSMITH = _lines(
    {"reference_example_id": "e-1", "inputs": {"question": "How many days of leave?"},
     "outputs": {"documents": [{"id": "hr-1", "page_content": LEAVE, "type": "Document"},
                               {"id": "fac-2", "page_content": PARKING, "type": "Document"}]},
     "reference_outputs": {"relevant": ["hr-1"]}},
    {"reference_example_id": "e-2", "inputs": {"question": "How do I book travel?"},
     "outputs": {"documents": [{"id": "fin-4", "page_content": EXPENSES, "type": "Document"},
                               {"id": "trv-9", "page_content": TRAVEL, "type": "Document"}]},
     "reference_outputs": {"relevant": ["trv-9"]}})


@pytest.mark.parametrize("options", [
    {"query": "reference_example_id", "retrieved": "outputs.documents", "relevant": "reference_outputs.relevant"},
    {"preset": "langsmith"}], ids=["fields", "preset"])
def test_rag_only_roles_make_a_nested_log_a_rag_log_at_every_door(tmp_path: Path, options: dict[str, str]) -> None:
    doors = through_doors(Case(files={"langsmith.jsonl": LANGSMITH}, runs=("langsmith.jsonl",),
                               metrics=("P@2", "RR"), run_options=options), tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"langsmith": TRUTH}


@pytest.mark.parametrize("tool", sorted(LOGS))
def test_the_columnar_reader_of_large_logs_picks_the_same_fields(tmp_path: Path, tool: str) -> None:
    from evalbridge.io._rag_columns import read_log_columns
    from evalbridge.io.rag import read_log

    path = tmp_path / f"{tool}.jsonl"
    path.write_text(LOGS[tool], encoding="utf-8")
    fast = read_log_columns(path, large_only=False)
    assert fast is not None
    strict = read_log([json.loads(line) for line in LOGS[tool].splitlines()])
    assert (fast[0].to_dict(), fast[1].to_dict()) == (strict[0].to_dict(), strict[1].to_dict())
    assert fast[0].notes[0] == strict[0].notes[0]
