"""One number rule for every format: what is refused, with the same reason, the place and the fix, at every door."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from doors import Case, assert_same, through_doors
from hypothesis import given
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.common.values import DECIMAL, check_value, parse

#: token -> what the message says about it
FAULTS = {
    " 2": "is not a number: it has spaces in it",
    "2 ": "is not a number: it has spaces in it",
    "1_000": "is not a number: it has '_' in it",
    "\u0662": "is not a number: it has digits other than 0-9",  # ARABIC-INDIC DIGIT TWO
    "1\x00": "is not a number: it holds a NUL byte",
    "true": "is not a number: it is a boolean",
    "nan": "is not a finite number",
    "-inf": "is not a finite number",
    "1e400": "is too large",
    "1" + "0" * 400: "is too large",
    "0x10": "is not a number: it is not a decimal number",
}


@given(st.text(alphabet=st.sampled_from(list("0123456789+-.eE_ x\u0662\x00")), max_size=8))
def test_a_token_is_read_exactly_when_it_is_a_plain_finite_decimal(token: str) -> None:
    """parse reads a token iff it is a plain ASCII decimal within float64's range, as Python reads it."""
    plain = re.fullmatch(DECIMAL.strip("^$"), token, re.ASCII) is not None
    if plain and math.isfinite(float(token)):
        value = parse(token, label="the score")
        assert value == (int(token) if re.fullmatch(r"[+-]?[0-9]+", token) else float(token))
        assert isinstance(value, int) == (re.fullmatch(r"[+-]?[0-9]+", token) is not None)
    else:
        with pytest.raises(InputError, match="the score"):
            parse(token, label="the score")


def _trec(token: str) -> str:
    return f"q1 Q0 d1 1 {token} r\n"


def _delimited(sep: str) -> object:
    return lambda token: f"query_id{sep}doc_id{sep}score\nq1{sep}d1{sep}{token}\n"


TEXT_FORMATS = {"run.txt": _trec, "run.csv": _delimited(","), "run.tsv": _delimited("\t")}


@pytest.mark.parametrize(("name", "token", "says"), [
    (name, token, says) for name in TEXT_FORMATS for token, says in FAULTS.items()
    if not (name == "run.txt" and token != token.strip())])  # in a TREC file white space separates the columns
def test_every_text_format_refuses_the_same_tokens_naming_the_line_and_the_value(
        tmp_path: Path, name: str, token: str, says: str) -> None:
    path = tmp_path / name
    path.write_text(TEXT_FORMATS[name](token), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(InputError) as raised:
        eb.read_run(path)
    text = str(raised.value)
    line = 1 if name == "run.txt" else 2
    assert text.startswith(f"{path}:{line}:") and says in text and "Fix: " in text
    assert repr(token)[:40].rstrip("'") in text


@pytest.mark.parametrize(("token", "says"), [(t, s) for t, s in FAULTS.items() if t != "1" + "0" * 400])
@pytest.mark.parametrize("holder", ["parquet", "pandas", "arrow"])
def test_text_columns_of_parquet_and_dataframes_follow_the_same_rule(tmp_path: Path, holder: str, token: str,
                                                                        says: str) -> None:
    table = pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": ["1", token]})
    obj: object = table
    if holder == "parquet":
        obj = tmp_path / "run.parquet"
        pq.write_table(table, obj)
    elif holder == "pandas":
        obj = table.to_pandas()
    with pytest.raises(InputError, match=re.escape(says)) as raised:
        eb.read_run(obj)
    assert ("row 1" in str(raised.value)) == (holder != "parquet")
    assert (f"{obj}:3:" in str(raised.value)) == (holder == "parquet")


@pytest.mark.parametrize(("value", "says"), [
    ("true", "is not a number: it is a boolean"),
    ('"2"', "is not a number: it is a text"),
    ("1" + "0" * 400, "is too large"),
    ("1e400", "is not a finite number"),  # json reads 1e400 as inf
    ("NaN", "is not a finite number"),
])
@pytest.mark.parametrize("shape", ["jsonl", "rag"])
def test_json_values_follow_the_same_rule(tmp_path: Path, shape: str, value: str, says: str) -> None:
    """JSON Lines rows and RAG logs: booleans, texts, NaN, and an int beyond float64 (no OverflowError)."""
    path = tmp_path / "run.jsonl"
    if shape == "jsonl":
        path.write_text(f'{{"query_id": "q1", "doc_id": "d1", "score": {value}}}\n')
        read = eb.read_run
    else:
        path.write_text(f'{{"query_id": "q1", "retrieved": [{{"doc_id": "d1", "score": {value}}}], '
                        f'"relevant": ["d1"]}}\n')
        read = eb.read_pair
    with pytest.raises(InputError, match=re.escape(says)) as raised:
        read(path)
    assert str(raised.value).startswith(f"{path}:1")


@pytest.mark.parametrize(("value", "says"), [(True, "it is a boolean"), (10 ** 400, "is too large"),
                                             (math.nan, "is not a finite number"), ("2", "it is a text")])
def test_mappings_follow_the_same_rule(value: object, says: str) -> None:
    with pytest.raises(InputError, match=re.escape(says)):
        eb.Run({"q1": {"d1": value}})
    with pytest.raises(InputError, match=re.escape(says)):
        check_value(value, label="the score")


def test_a_boolean_column_is_refused_with_the_cast_that_fixes_it() -> None:
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [True]})
    with pytest.raises(InputError, match=r"holds booleans.*astype\(int\)"):
        eb.read_qrels(frame)
    assert dict(eb.read_qrels(frame.astype({"relevance": int}))["q1"]) == {"d1": 1}


QRELS = "q1 0 d1 1\nq1 0 d2 0\n"


@pytest.mark.parametrize(("token", "says"), [(" 2", "it has spaces in it"), ("1_000", "'_'"),
                                             ("\u0662", "digits other than 0-9"), ("1e400", "is too large")])
def test_a_bad_number_is_the_same_input_error_at_every_door(tmp_path: Path, token: str, says: str) -> None:
    """`q1,d1, 2` in a CSV was "internal error: ArrowInvalid", exit 3: now exit 2 and one message at every door."""
    case = Case(files={"qrels.txt": QRELS, "run.csv": f"query_id,doc_id,score\nq1,d1,{token}\nq1,d2,1\n"},
                qrels="qrels.txt", runs=("run.csv",), metrics=("mrr",))
    doors = through_doors(case, tmp_path)
    assert_same(doors, says=("run.csv:2", says, "Fix: "))
    assert doors["cli"].code == 2


# ---------------------------------------------------------------- statistics

@pytest.mark.parametrize("bad", [
    {"q1": 1.0, "q2": math.nan, "q3": 1.0},
    {"q1": 1.0, "q2": math.inf, "q3": 1.0},
    {"q1": math.nan, "q2": math.nan, "q3": math.nan},
])
def test_comparisons_refuse_values_that_are_not_finite(bad: dict[str, float]) -> None:
    """compare_systems reported significant=True, p = 0 with a NaN or an inf per-query value."""
    base = {"P@1": {"q1": 0.0, "q2": 1.0, "q3": 0.0}}
    with pytest.raises(InputError, match=r"per-query values of 'new' for P@1 include .* not a finite number "
                                         r"\(query 'q\d'"):
        eb.compare(None, {"base": base, "new": {"P@1": bad}}, ["P@1"], baseline="base")


def test_the_paired_tests_refuse_values_that_are_not_finite() -> None:
    from evalbridge.stats.paired_tests import paired_t_test, randomization_test, wilcoxon_test

    for test in (paired_t_test, randomization_test, wilcoxon_test):
        with pytest.raises(InputError, match=r"not a finite number \(value 1: inf\)"):
            test([0.5, math.inf, 0.2], [0.1, 0.2, 0.3])


def test_json_dump_of_a_value_message_is_one_line() -> None:
    """Every message is one paragraph: a NUL or a newline in the token is shown escaped."""
    with pytest.raises(InputError) as raised:
        parse("1\n2", label="the score")
    assert "\n" not in str(raised.value) and json.dumps(str(raised.value))


@pytest.mark.parametrize(("token", "says"), [("1_0", "it has '_' in it"), ("\u0662", "digits other than 0-9"),
                                             ("2.0", "is not a whole number >= 1")])
def test_msmarco_ranks_follow_the_same_rule(tmp_path: Path, token: str, says: str) -> None:
    """int() read '1_0' as 10 and Arabic-Indic digits as numbers."""
    path = tmp_path / "run.tsv"
    path.write_text(f"q1\ta\t1\nq1\tb\t{token}\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(says)) as raised:
        eb.read_run(path, format="msmarco")
    assert str(raised.value).startswith(f"{path}:2")


@given(st.lists(st.text(alphabet=st.sampled_from(list("0123456789+-.eE_ \u0662")), min_size=1, max_size=6),
                min_size=1, max_size=6))
def test_a_column_of_tokens_is_read_as_each_token_is(tokens: list[str]) -> None:
    """parse_column (tables) and parse (TREC, one token) are one rule: the same numbers, or the same message for
    the first token refused."""
    from evalbridge.common.values import parse_column

    expected: list[int | float] = []
    error = None
    for row, token in enumerate(tokens):
        try:
            expected.append(parse(token, label="score", at=f"row {row}"))
        except InputError as raised:
            error = str(raised)
            break
    try:
        column, integral = parse_column(pa.chunked_array([pa.array(tokens)]), label="score",
                                        where=lambda row: {"at": f"row {row}"})
    except InputError as raised:
        assert str(raised) == error
        return
    assert error is None and column.to_pylist() == expected
    assert integral == all(isinstance(v, int) for v in expected)


@pytest.mark.parametrize(("token", "says"), [("1_000", "it has '_' in it"), ("1:30", "not a decimal number"),
                                             ("0x1F", "not a decimal number")])
def test_yaml_data_files_follow_the_one_number_rule(tmp_path: Path, token: str, says: str) -> None:
    """YAML 1.1 read 1_000 as 1000, 1:30 as 90 and 0x1F as 31 without a word; now they are refused where read."""
    path = tmp_path / "grades.yaml"
    path.write_text(f"q1:\n  d1: {token}\n  d2: 0\n", encoding="utf-8")
    with pytest.raises(InputError, match=re.escape(says)):
        eb.read_qrels(path)


def test_a_yaml_number_with_a_leading_zero_is_decimal() -> None:
    """YAML 1.1 read 010 as octal 8; a grade 010 is ten, as YAML 1.2, JSON and every other format read it."""
    from evalbridge.io.yamldata import load_yaml

    assert load_yaml("a: [010, 7, -3, +4, 2.5, 1e-9, .5]", source="x.yaml") == {"a": [10, 7, -3, 4, 2.5, 1e-9, 0.5]}
