"""Strict YAML / JSON reading (evalbridge.io.yamldata): bombs, recursion, duplicates, lines, encodings."""

from __future__ import annotations

import contextlib
import json
import re
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from evalbridge.io.yamldata import MAX_ALIAS_NODES, dotted, load_data_file, load_yaml_documents
from evalbridge.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    """Fail the block (TimeoutError) if it runs longer than ``seconds``: a guard, not a measurement."""
    if not hasattr(signal, "SIGALRM"):
        yield
        return

    def expire(*_: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def load(text: str | bytes, **options: Any) -> list[tuple[Any, dict]]:
    return load_yaml_documents(text, "eval.yaml", **options)


def billion_laughs(levels: int = 9) -> str:
    """The classic: lol1 holds 9 strings, each level 9 aliases of the one below (9**9 strings at lol9)."""
    lines = ['lol1: &lol1 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(2, levels + 1):
        lines.append(f"lol{level}: &lol{level} [" + ", ".join([f"*lol{level - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- alias bombs and recursion

def test_a_billion_laughs_bomb_is_refused_at_once_naming_the_alias_and_its_line():
    """Expanded, lol9 is 9**9 strings; the budget is met inside lol6 (line 6): lol2..lol5 reach
    9*10 + 9*91 + 9*820 + 9*7381 = 74,718 nodes, and lol6's first alias *lol5 adds 66,430."""
    with time_limit(10), pytest.raises(InputError, match=r"^eval.yaml:6: the aliases of this document expand to "
                                                         r"more than 100,000 nodes \(the alias \*lol5 at lol6\[0\] "
                                                         r"alone reaches 66,430\): an alias bomb\. Fix: write the "
                                                         r"data out"):
        load(billion_laughs())


def test_a_bomb_in_a_data_file_is_refused_too(tmp_path):
    (tmp_path / "labels.yaml").write_text(billion_laughs())
    with time_limit(10), pytest.raises(InputError, match=r"labels.yaml:6: .* an alias bomb"):
        load_data_file(tmp_path / "labels.yaml")


@given(items=st.integers(0, 30), aliases=st.integers(1, 30), limit=st.integers(0, 600))
def test_the_alias_budget_counts_every_node_an_alias_stands_for(items, aliases, limit):
    """`a` is a list of `items` numbers (items + 1 nodes); `b` holds `aliases` aliases of it, so
    the document reaches aliases * (items + 1) nodes through aliases: refused iff above the limit."""
    text = f"a: &a [{', '.join(['1'] * items)}]\nb: [{', '.join(['*a'] * aliases)}]\n"
    reached = aliases * (items + 1)
    if reached > limit:
        with pytest.raises(InputError, match="an alias bomb"):
            load(text, max_alias_nodes=limit)
    else:
        [(data, _)] = load(text, max_alias_nodes=limit)
        assert data["b"] == [[1] * items] * aliases


def test_nested_aliases_are_counted_once_through_the_outer_alias():
    """`c` aliases `b`, which holds 2 aliases of `a` (2 nodes each): *b stands for 1 + 2 * 2 = 5 nodes;
    with b's own two aliases (4 nodes) the document reaches 9 through aliases."""
    text = "a: &a [1]\nb: &b [*a, *a]\nc: *b\n"
    assert load(text, max_alias_nodes=9)[0][0]["c"] == [[1], [1]]
    with pytest.raises(InputError, match="more than 8 nodes"):
        load(text, max_alias_nodes=8)


def test_data_reached_through_an_alias_is_a_copy():
    [(data, _)] = load("base: &b {k: [10]}\nruns: {x: *b, y: *b}\n")
    data["runs"]["x"]["k"].append(20)
    assert data["base"] == {"k": [10]} and data["runs"]["y"] == {"k": [10]}


@pytest.mark.parametrize("text, where, line", [
    ("a: &x [1, *x]\n", "a[1]", 1),
    ("a:\n  b: &x\n    c: *x\n", "a.b.c", 3),
    ("runs:\n  - &r\n    name: x\n    more: [1, [2, *r]]\n", "runs[0].more[1][1]", 4),
    ("a: &x\n  <<: *x\n", "a", 2),
])
def test_a_recursive_alias_is_refused_with_its_key_path(text, where, line):
    with time_limit(10), pytest.raises(InputError, match=rf"^eval.yaml:{line}: the alias \*\w+ at {re.escape(where)} "
                                                         r"refers to a node that contains it"):
        load(text)


# ---------------------------------------------------------------- duplicate keys

@pytest.mark.parametrize("text, key, first, second", [
    ("a: 1\nb: 2\na: 3\n", "a", 1, 3),
    ("runs:\n  bm25: x.txt\n  dense: y.txt\n  bm25: z.txt\n", "runs.bm25", 2, 4),
    ("runs:\n  - {name: a, name: b}\n", "runs[0].name", 2, 2),
    ("gates:\n  - x: 1\n    y: 2\n    x: 3\n", "gates[0].x", 2, 4),
    ("a: 1\n1: 2\ntrue: 3\n", "True", 2, 3),  # 1 and true are one key in Python
])
def test_a_duplicate_yaml_key_is_refused_with_both_lines(text, key, first, second):
    with pytest.raises(InputError, match=rf"^eval.yaml:{second}: the key '{re.escape(key)}' "
                                         rf"is given twice \(lines {first} and {second}\)\. Fix: keep one of them\."):
        load(text)


def test_a_merge_may_override_keys_without_being_a_duplicate():
    [(data, lines)] = load("base: &b {format: trec, k: 1}\nruns:\n  x:\n    <<: *b\n    k: 2\n")
    assert data["runs"]["x"] == {"format": "trec", "k": 2}
    assert lines[("runs", "x", "k")] == 5 and lines[("runs", "x", "format")] == 1


def test_a_key_that_is_a_list_is_refused():
    with pytest.raises(InputError, match=r"eval.yaml:1: a key under \(top level\) is a list; keys are plain values"):
        load("{[1, 2]: 3}\n")


# ---------------------------------------------------------------- line numbers

def test_line_numbers_of_nested_keys_and_list_items():
    """Counted by hand: `runs` on line 2, its key `bm25` on 3, `path` on 4; `metrics` on 6 and its
    items on 7 and 8; the gate list's first item (a mapping) starts on line 10, its `x` key too."""
    text = ("title: demo\n"           # 1
            "runs:\n"                 # 2
            "  bm25:\n"               # 3
            "    path: bm25.run\n"    # 4
            "\n"                      # 5
            "metrics:\n"              # 6
            "  - nDCG@10\n"           # 7
            "  - P@5\n"               # 8
            "gates:\n"                # 9
            "  - x: 1\n"              # 10
            "    y: [a, b]\n")        # 11
    [(_, lines)] = load(text)
    assert lines == {(): 1, ("title",): 1, ("runs",): 2, ("runs", "bm25"): 3, ("runs", "bm25", "path"): 4,
                     ("metrics",): 6, ("metrics", 0): 7, ("metrics", 1): 8, ("gates",): 9, ("gates", 0): 10,
                     ("gates", 0, "x"): 10, ("gates", 0, "y"): 11, ("gates", 0, "y", 0): 11,
                     ("gates", 0, "y", 1): 11}


SCALARS = st.one_of(st.integers(-1000, 1000), st.booleans(), st.none(),
                    st.text(alphabet="abc xyz:#-@", max_size=6))
KEYS = st.text(alphabet="abcdef_@ ", min_size=1, max_size=5)
TREES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                      st.dictionaries(KEYS, inner, max_size=3)), max_leaves=12)


def emit(value: Any, indent: int, path: tuple, out: list[str], lines: dict[tuple, int]) -> None:
    """Block-style YAML of ``value`` into ``out``, recording the line of every key and list item:
    an independent oracle for the line table (scalars and keys written as JSON strings)."""
    pad = " " * indent
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        nested = isinstance(child, (dict, list)) and child
        head = f"{pad}{json.dumps(key)}:" if isinstance(value, dict) else f"{pad}-"
        out.append(head if nested else f"{head} {json.dumps(child)}")
        # a key's line is its own; a list item's is where its content starts (the next line if nested)
        lines[path + (key,)] = len(out) + (1 if nested and isinstance(value, list) else 0)
        if nested:
            emit(child, indent + 2, path + (key,), out, lines)


@given(st.dictionaries(KEYS, TREES, min_size=1, max_size=4))
def test_the_line_table_matches_an_independent_emitter(data):
    out: list[str] = []
    expected: dict[tuple, int] = {}
    emit(data, 0, (), out, expected)
    [(loaded, lines)] = load("\n".join(out) + "\n")
    assert loaded == data
    assert {path: line for path, line in lines.items() if path} == expected


def test_every_document_has_its_own_line_table():
    documents = load("a: 1\n---\nb:\n  - 1\n  - 2\n")
    assert [d for d, _ in documents] == [{"a": 1}, {"b": [1, 2]}]
    assert documents[1][1] == {(): 3, ("b",): 3, ("b", 0): 4, ("b", 1): 5}


def test_an_empty_text_has_no_document():
    assert load("") == [] and load("# only a comment\n") == []


# ---------------------------------------------------------------- encodings and YAML errors

def test_a_utf8_byte_order_mark_is_stripped_and_lines_stay_right():
    plain = "a: 1\nb:\n  c: café\n"
    assert load(b"\xef\xbb\xbf" + plain.encode()) == load(plain) == load("\ufeff" + plain)
    assert load(plain)[0][1][("b", "c")] == 3


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_utf16_and_utf32_files_are_refused_clearly(encoding):
    with pytest.raises(InputError, match=rf"eval.yaml:1: the file is {encoding.upper()} text .* UTF-8 is expected"):
        load("a: 1\n".encode(encoding))


@given(st.lists(st.text(alphabet="abc: -", max_size=10), min_size=1, max_size=8), st.data())
def test_bad_utf8_is_refused_with_the_line_of_the_bad_byte(lines, data):
    line = data.draw(st.integers(0, len(lines) - 1))
    raw = [text.encode() for text in lines]
    raw[line] += b"\xff"
    with pytest.raises(InputError, match=rf"^eval.yaml:{line + 1}: not UTF-8 text: byte 0xff at column "
                                         rf"{len(raw[line])} "):
        load(b"\n".join(raw))


@pytest.mark.parametrize("text, line, problem, fix", [
    ("a:\n\t- 1\n", 2, "found character '\\\\t' that cannot start any token", "indent with spaces"),
    ("title: bm25: baseline\n", 1, "mapping values are not allowed here", "quote a value that contains ': '"),
    ("a: 1\nb: *nope\n", 2, "found undefined alias 'nope'", "define the anchor"),
    ("a: !!python/object/apply:os.system [ls]\n", 1, "could not determine a constructor", "remove the tag"),
    ("a: [1, 2\nb: 3\n", 2, "expected ',' or ']', but got ':' \\(while parsing a flow sequence that starts on "
                            "line 1\\)", "close the list with ']'"),
    ("a: 1\nb: \x07\n", 2, "the character U\\+0007 is not allowed", "escapes in double quotes"),
])
def test_a_yaml_error_names_the_line_the_problem_and_a_fix(text, line, problem, fix):
    with pytest.raises(InputError, match=rf"^eval.yaml:{line}: .*{problem}.* Fix: .*{fix}"):
        load(text)


def test_nesting_too_deep_is_refused_not_a_recursion_error():
    """Nesting past Python's recursion limit is an InputError. The limit is pinned to its default here:
    other code in the same process (hypothesis) may have raised it, and the nesting would then be read."""
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        with pytest.raises(InputError, match="nested too deeply"):
            load("a: " + "[" * 5000 + "]" * 5000 + "\n")
    finally:
        sys.setrecursionlimit(limit)


def test_dotted_paths_read_as_written():
    assert dotted(("runs", "bm25", "path")) == "runs.bm25.path"
    assert dotted(("gates", 0, "x")) == "gates[0].x" and dotted(()) == "(top level)"


def test_the_shipped_configs_read_as_safe_load_reads_them():
    for config in sorted((ROOT / "configs").glob("*.yaml")):
        text = config.read_text(encoding="utf-8")
        documents = load_yaml_documents(config.read_bytes(), str(config))
        assert [data for data, _ in documents] == list(yaml.safe_load_all(text)), config.name


# ---------------------------------------------------------------- data files

JSON_DATA = st.recursive(st.one_of(st.integers(), st.floats(allow_nan=False), st.text(), st.booleans(), st.none()),
                         lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                 st.dictionaries(st.text(max_size=4), inner, max_size=3)),
                         max_leaves=10)


@given(JSON_DATA)
def test_a_json_data_file_reads_back_what_was_written(data):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder, "data.json")
        path.write_text(json.dumps(data, indent=1), encoding="utf-8")
        assert load_data_file(path) == data


@pytest.mark.parametrize("text, key, lines, line", [
    ('{"q1": [1, 0],\n "q1": [0, 1]}', "q1", "lines 1 and 2", 2),
    ('{"q1": {"d1": 1,\n  "d2": 0},\n "q2": {"d1": 1,\n   "d1": 2}}', "d1", "lines 3 and 4", 4),
    ('[{"a": 1}, {"b": 1, "b": 2}]', "b", "twice on line 1", 1),
])
def test_a_duplicate_json_key_is_refused_with_its_lines(tmp_path, text, key, lines, line):
    (tmp_path / "data.json").write_text(text)
    with pytest.raises(InputError, match=rf"data.json:{line}: the key '{key}' appears twice in one JSON object "
                                         rf"\({lines}\)"):
        load_data_file(tmp_path / "data.json")


def test_a_json_file_with_a_byte_order_mark_reads(tmp_path):
    (tmp_path / "data.json").write_bytes(b'\xef\xbb\xbf{"q1": [1, 0]}')
    assert load_data_file(tmp_path / "data.json") == {"q1": [1, 0]}


def test_bad_utf8_in_json_names_the_line(tmp_path):
    (tmp_path / "data.json").write_bytes(b'{"q1": [1, 0],\n "q2": "caf\xe9"}')
    with pytest.raises(InputError, match=r"data.json:2: not UTF-8 text: byte 0xe9 at column 12"):
        load_data_file(tmp_path / "data.json")


def test_a_json_syntax_error_names_line_and_column(tmp_path):
    (tmp_path / "data.json").write_text('{"q1": [1, 0],\n "q2": [1,]}')
    with pytest.raises(InputError, match=r"data.json:2: not valid JSON: Expecting value \(column 11\)\. Fix: "):
        load_data_file(tmp_path / "data.json")


@pytest.mark.parametrize("name, content, message", [
    ("data.yaml", "q1: [1, 0]\n---\nq2: [1]\n", "holds 2 YAML documents"),
    ("data.yml", "", "the file is empty"),
    ("data.yml", "q1: [1]\nq1: [0]\n", "the key 'q1' is given twice"),
    ("data.txt", "q1 0 d1 1\n", "a data file is .json, .yaml or .yml; got 'data.txt'"),
])
def test_a_data_file_is_read_as_strictly_as_a_config(tmp_path, name, content, message):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=message):
        load_data_file(tmp_path / name)


def test_a_yaml_data_file_reads_one_document(tmp_path):
    (tmp_path / "labels.yaml").write_text("q1: [1, 0, 1]\nq2: [0, 0]\n")
    assert load_data_file(tmp_path / "labels.yaml") == {"q1": [1, 0, 1], "q2": [0, 0]}


def test_a_missing_data_file_or_a_folder_is_refused(tmp_path):
    with pytest.raises(InputError, match="missing.json: the file does not exist"):
        load_data_file(tmp_path / "missing.json")
    (tmp_path / "folder.json").mkdir()
    with pytest.raises(InputError, match="folder.json: this is a folder"):
        load_data_file(tmp_path / "folder.json")


def test_the_default_budget_is_large_enough_for_real_aliasing():
    """A config that reuses one run definition 1000 times reaches 9,000 nodes through aliases (the
    mapping, 3 keys, 2 scalars, the inner mapping, its key and value), well under the budget."""
    text = "base: &b {path: run.txt, format: trec, options: {k: 1}}\nruns:\n" + "".join(
        f"  r{i}: *b\n" for i in range(1000))
    [(data, _)] = load(text)
    assert len(data["runs"]) == 1000 and data["runs"]["r999"] == data["base"]
    assert data["runs"]["r0"] is not data["runs"]["r1"]
    with pytest.raises(InputError, match="more than 8,999 nodes"):
        load(text, max_alias_nodes=8_999)
    assert 9_000 < MAX_ALIAS_NODES


def test_scientific_notation_without_a_dot_is_a_number_as_in_json_and_yaml_1_2() -> None:
    """YAML 1.1 reads `1e-9` as a string, which refused `atol: 1e-9`; it is a number, as JSON and YAML 1.2 say."""
    from evalbridge.io.yamldata import load_yaml

    assert load_yaml("a: 1e-9\nb: -2E+3\nc: 1e9x\nd: 1.5e-3\n", source="x") == {
        "a": 1e-9, "b": -2000.0, "c": "1e9x", "d": 0.0015}
