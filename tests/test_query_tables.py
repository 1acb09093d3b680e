"""Query tables (slice labels) are read by the formats' own rules at every door: ids stay text, a bad file is
file:line and the fix (exit 2), and slices with nothing to work on say so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from doors import PREFIX, cli

IDS = ("095", "096", "097", "098", "099")
QRELS = "".join(f"{q} 0 d1 1\n{q} 0 d2 0\n" for q in IDS)
#: P@1 is 1 on 095-097 (d1 first), 0 on 098-099 (d2 first): billing (095, 096) 1.0, tech (097-099) 1/3
RUN = "".join(f"{q} Q0 d1 1 2 x\n{q} Q0 d2 2 1 x\n" if q < "098" else f"{q} Q0 d2 1 2 x\n{q} Q0 d1 2 1 x\n"
              for q in IDS)
CATEGORIES = {"095": "billing", "096": "billing", "097": "tech", "098": "tech", "099": "tech"}


def _three_doors(folder: Path, table: str, column: str = "category") -> dict[str, tuple[int, str, Any]]:
    """(exit code, message, {slice: mean of P@1}) of the API, the CLI and a config, the slices from ``table``."""
    import evalbridge as eb

    (folder / "qrels.txt").write_text(QRELS)
    (folder / "a.run").write_text(RUN)
    (folder / "eval.yaml").write_text(json.dumps({"qrels": "qrels.txt", "runs": {"a": "a.run"}, "metrics": ["P@1"],
                                                  "slices": {"by": column, "file": table}}))
    out: dict[str, tuple[int, str, Any]] = {}
    try:
        res = eb.evaluate(eb.read_qrels(str(folder / "qrels.txt")), eb.read_run(str(folder / "a.run")), ["P@1"],
                          slices=(str(folder / table), column))
        out["api"] = (0, "", {m.slice: m.mean for m in res.slices.means})
    except eb.EvalbridgeError as error:
        out["api"] = (2, str(error), None)
    except Exception as error:  # noqa: BLE001 - what reaches a Python user unwrapped is the finding
        out["api"] = (3, f"{type(error).__name__}: {error}", None)
    for door, argv in (("cli", ["eval", str(folder / "qrels.txt"), str(folder / "a.run"), "-m", "P@1", "--slice-by",
                                column, "--slices-file", str(folder / table), "--format", "json"]),
                       ("config", ["run", str(folder / "eval.yaml"), "--no-write", "--format", "json"])):
        code, stdout, err = cli(*argv)
        message = " ".join(line.removeprefix(PREFIX) for line in err.strip().splitlines())
        means = None
        if code == 0:
            means = {m["slice"]: m["mean"] for m in json.loads(stdout)["slices"]["means"]}
        out[door] = (code, message, means)
    return out


def _parquet(path: Path, ids: list[Any]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"query_id": ids, "category": [CATEGORIES[q] for q in IDS]}), path)


TABLES = {
    "queries.csv": "query_id,category\n" + "".join(f"{q},{c}\n" for q, c in CATEGORIES.items()),
    "queries.tsv": "query_id\tcategory\n" + "".join(f"{q}\t{c}\n" for q, c in CATEGORIES.items()),
    "queries.jsonl": "".join(json.dumps({"query_id": q, "category": c}) + "\n" for q, c in CATEGORIES.items()),
}


@pytest.mark.parametrize("name", [*TABLES, "queries.parquet"])
def test_ids_with_leading_zeros_stay_text_in_every_query_table(tmp_path: Path, name: str) -> None:
    """'095' stays '095' (CSV/TSV are read as text, not typed by inference): every query is in its slice, at
    every door; the means by hand: billing 2/2, tech 1/3."""
    if name.endswith(".parquet"):
        _parquet(tmp_path / name, list(IDS))
    else:
        (tmp_path / name).write_text(TABLES[name])
    doors = _three_doors(tmp_path, name)
    for door, (code, message, means) in doors.items():
        assert code == 0, (door, message)
        assert means == pytest.approx({"billing": 1.0, "tech": 1 / 3}), door


BAD = {
    "junk.parquet": (b"PAR1 this is not parquet", "junk.parquet", "Parquet"),
    "bad.jsonl": (b'{"query_id": "095", "category": "billing"}\n{"query_id": 096}\n', "bad.jsonl:2", "JSON"),
    "list.jsonl": (b'["095", "billing"]\n', "list.jsonl:1", "JSON object"),
    "latin1.csv": ("query_id,category\n095,caf\u00e9\n".encode("latin-1"), "latin1.csv:2", "UTF-8"),
    "ragged.csv": (b"query_id,category\n095,billing,extra\n", "ragged.csv", "CSV"),
    "empty.csv": (b"", "empty.csv", "empty"),
    "queries.xlsx": (b"PK\x03\x04", "queries.xlsx", ".csv"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_query_table_is_file_line_and_the_fix_with_exit_2(tmp_path: Path, name: str) -> None:
    content, where, says = BAD[name]
    (tmp_path / name).write_bytes(content)
    doors = _three_doors(tmp_path, name)
    for door, (code, message, _) in doors.items():
        assert code == 2, (door, message)
        assert where in message and says in message and "Fix:" in message, (door, message)
        assert "Arrow" not in message and "Traceback" not in message, (door, message)


def test_float_ids_in_a_parquet_query_table_are_refused(tmp_path: Path) -> None:
    _parquet(tmp_path / "queries.parquet", [95.0, 96.0, 97.0, 98.0, 99.0])
    for door, (code, message, _) in _three_doors(tmp_path, "queries.parquet").items():
        assert code == 2 and "95.0" in message and "Fix:" in message, (door, message)


def test_slices_naming_only_unknown_queries_say_so_with_both_sides_ids(tmp_path: Path) -> None:
    """A table whose ids lost their zeros (95 ... 99, as a spreadsheet writes them) slices no evaluated query:
    refused with the ids on both sides and the hint, never an empty table."""
    (tmp_path / "queries.csv").write_text("query_id,category\n" + "".join(f"{int(q)},{c}\n"
                                                                          for q, c in CATEGORIES.items()))
    for door, (code, message, _) in _three_doors(tmp_path, "queries.csv").items():
        assert code == 2, (door, message)
        assert "'95'" in message and "'095'" in message and "leading zeros" in message, (door, message)


def test_a_slice_column_no_row_fills_is_refused(tmp_path: Path) -> None:
    (tmp_path / "queries.csv").write_text("query_id,category,lang\n" + "".join(f"{q},{c},\n"
                                                                               for q, c in CATEGORIES.items()))
    for door, (code, message, _) in _three_doors(tmp_path, "queries.csv", column="lang").items():
        assert code == 2 and "'lang'" in message and "no query a slice" in message, (door, message)


def test_a_slice_field_no_log_line_has_is_refused(tmp_path: Path) -> None:
    """A RAG log read with slice=FIELD where no line has the field: said, not an empty slice table."""
    import evalbridge as eb

    lines = [{"query_id": q, "retrieved": ["d1", "d2"], "relevant": ["d1"]} for q in IDS]
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (tmp_path / "eval.yaml").write_text(json.dumps({"runs": {"log": {"path": "log.jsonl", "columns": {
        "slice": "category"}}}, "metrics": ["P@1"], "slices": "category"}))
    messages = []
    try:
        qrels, run = eb.read_pair(str(tmp_path / "log.jsonl"), slice="category")
        eb.evaluate(qrels, run, ["P@1"], slices="category")
        messages.append((0, ""))
    except eb.EvalbridgeError as error:
        messages.append((2, str(error)))
    code, _, err = cli("eval", str(tmp_path / "log.jsonl"), "-m", "P@1", "--columns", "slice=category",
                       "--slice-by", "category")
    messages.append((code, err))
    code, _, err = cli("run", str(tmp_path / "eval.yaml"), "--no-write")
    messages.append((code, err))
    for code, message in messages:
        assert code == 2 and "'category'" in message and "Fix:" in message, message


@pytest.mark.parametrize("value", ["95.0", "true", "[95]"])
def test_a_topics_id_that_is_no_text_or_integer_is_refused_with_its_line(tmp_path: Path, value: str) -> None:
    """The texts of a judging batch (pool --topics, eb.pool's write_batch, read_texts): a float id such as 95.0
    was kept as the text '95.0'; now its file:line and the fix, exit 2."""
    import evalbridge as eb
    from evalbridge.io.texts import read_texts

    (tmp_path / "queries.jsonl").write_text('{"_id": "094", "text": "a"}\n{"_id": ' + value + ', "text": "b"}\n')
    with pytest.raises(eb.InputError, match=r"queries.jsonl:2.*not a text or an integer.*Fix:"):
        read_texts(str(tmp_path / "queries.jsonl"))
    (tmp_path / "qrels.txt").write_text("094 0 d1 1\n")
    (tmp_path / "a.run").write_text("094 Q0 d1 1 2 a\n094 Q0 d2 2 1 a\n")
    code, _, err = cli("pool", str(tmp_path / "qrels.txt"), str(tmp_path / "a.run"), "--depth", "2", "--batch",
                       str(tmp_path / "batch.jsonl"), "--topics", str(tmp_path / "queries.jsonl"))
    assert code == 2 and "queries.jsonl:2" in err and "Fix:" in err, err
