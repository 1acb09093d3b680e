"""The format registry: one meaning per path at every door (Python API, CLI, config), strict everywhere."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.cli import main
from evalbridge.config import load_config
from evalbridge.config.pipeline import run_config
from evalbridge.errors import InputError
from evalbridge.io import formats, get_format, resolve

#: One evaluation's data. Run scores are n..1 by rank, so formats that carry only the order
#: (MS MARCO ranks, RAG id lists, pairs, records) hold exactly the same run.
QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d2": 1, "d5": 2}, "q3": {"d4": 1}}
RUN = {"q1": {"d3": 3.0, "d1": 2.0, "d4": 1.0}, "q2": {"d2": 2.0, "d5": 1.0}, "q3": {"d1": 2.0, "d4": 1.0}}
METRICS = ["P@2", "nDCG@3", "RR", "AP", "R@2"]


def _rows(data: dict, value: str) -> list[dict]:
    return [{"query_id": q, "doc_id": d, value: v} for q, docs in data.items() for d, v in docs.items()]


def _delimited(data: dict, value: str, sep: str, names: tuple[str, str, str]) -> str:
    lines = [sep.join(names)] + [sep.join((q, d, str(v))) for q, docs in data.items() for d, v in docs.items()]
    return "\n".join(lines) + "\n"


def _rag_log() -> list[dict]:
    return [{"question_id": q, "question": f"what about {q}?",
             "contexts": [{"doc_id": d, "score": s, "text": "..."} for d, s in RUN[q].items()],
             "ground_truth": QRELS[q]} for q in QRELS]


def write_pair(kind: str, folder: Path) -> tuple[str | None, str | None, dict]:
    """Files holding QRELS and RUN in format ``kind``: (qrels path, run path, format options)."""
    q, r = folder / "qrels", folder / "run"
    if kind == "trec":
        eb.write(eb.Qrels(QRELS), q.with_suffix(".txt"))
        eb.write(eb.Run(RUN), r.with_suffix(".txt"), tag="sys")
        return str(q.with_suffix(".txt")), str(r.with_suffix(".txt")), {}
    if kind == "json":
        q.with_suffix(".json").write_text(json.dumps(QRELS))
        r.with_suffix(".json").write_text(json.dumps(RUN))
    elif kind == "jsonl":
        q.with_suffix(".jsonl").write_text("".join(json.dumps(x) + "\n" for x in _rows(QRELS, "relevance")))
        r.with_suffix(".jsonl").write_text("".join(json.dumps(x) + "\n" for x in _rows(RUN, "score")))
    elif kind == "csv":
        q.with_suffix(".csv").write_text(_delimited(QRELS, "relevance", ",", ("qid", "docno", "rel")))
        r.with_suffix(".csv").write_text(_delimited(RUN, "score", ",", ("qid", "docno", "sim")))
        return str(q.with_suffix(".csv")), str(r.with_suffix(".csv")), {"query": "qid", "doc": "docno"}
    elif kind == "tsv":
        q.with_suffix(".tsv").write_text(_delimited(QRELS, "relevance", "\t", ("query-id", "corpus-id", "score")))
        r.with_suffix(".tsv").write_text(_delimited(RUN, "score", "\t", ("query_id", "doc_id", "score")))
    elif kind == "parquet":
        import pandas as pd

        pd.DataFrame(_rows(QRELS, "relevance")).to_parquet(q.with_suffix(".parquet"))
        pd.DataFrame(_rows(RUN, "score")).to_parquet(r.with_suffix(".parquet"))
    suffix = {"json": ".json", "jsonl": ".jsonl", "tsv": ".tsv", "parquet": ".parquet"}[kind]
    return str(q.with_suffix(suffix)), str(r.with_suffix(suffix)), {}


FILE_FORMATS = ["trec", "json", "jsonl", "csv", "tsv", "parquet"]


def _config(folder: Path, qrels: str, run: str, fmt: str | None, options: dict) -> Path:
    qrels_source = {"path": qrels, **({"format": fmt} if fmt else {})}
    run_source = {"path": run, **({"format": fmt} if fmt else {})}
    if options:
        qrels_source["columns"] = {k: v for k, v in options.items() if k in ("query", "doc", "grade")}
        run_source["columns"] = {k: v for k, v in options.items() if k in ("query", "doc", "score")}
    path = folder / "eval.yaml"
    path.write_text(json.dumps({"qrels": qrels_source, "runs": {"sys": run_source}, "metrics": METRICS}))
    return path


def _cli_means(args: list[str], capsys: pytest.CaptureFixture) -> dict:
    capsys.readouterr()
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    return next(iter(report["systems"].values()))["metrics"]


@pytest.mark.parametrize("kind", FILE_FORMATS)
@pytest.mark.parametrize("named", [False, True], ids=["by-suffix", "named"])
def test_every_file_format_reads_the_same_data_at_every_door(kind: str, named: bool, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture) -> None:
    """Python API, `evalbridge eval` and a config run read the same Qrels/Run and give the same values, whether
    the format comes from the suffix or is named."""
    qrels_path, run_path, options = write_pair(kind, tmp_path)
    fmt = kind if named else None
    qrels = eb.read_qrels(qrels_path, format=fmt, **{k: v for k, v in options.items() if k != "score"})
    run = eb.read_run(run_path, format=fmt, **{k: v for k, v in options.items() if k != "grade"})
    assert qrels.to_dict() == QRELS and run.to_dict() == RUN
    api = eb.evaluate(qrels, run, METRICS).means
    direct = eb.evaluate(qrels_path, run_path, METRICS).means if not options and not named else api
    assert direct == api

    args = ["eval", qrels_path, run_path, "-m", *METRICS, "--format", "json"]
    if named:
        args += ["--qrels-format", kind, "--run-format", kind]
    if options:
        args += ["--columns", ",".join(f"{k}={v}" for k, v in options.items())]
    assert _cli_means(args, capsys) == api

    outcome = run_config(load_config(_config(tmp_path, qrels_path, run_path, fmt, options)), write=False)
    assert outcome.report.results["sys"].means == api


@pytest.mark.parametrize("kind, builder", [
    ("rag", lambda folder: (folder / "log.jsonl").write_text("".join(json.dumps(o) + "\n" for o in _rag_log()))),
    ("rag-json", lambda folder: (folder / "log.json").write_text(json.dumps(_rag_log()))),
])
def test_a_rag_log_reads_the_same_at_every_door(kind: str, builder, tmp_path: Path,
                                                capsys: pytest.CaptureFixture) -> None:
    """A RAG log (both its shapes) gives the same qrels and run through the API, the CLI and a config."""
    builder(tmp_path)
    path = str(next(tmp_path.iterdir()))
    qrels, run = eb.read_pair(path)
    assert qrels.to_dict() == QRELS and run.to_dict() == RUN
    api = eb.evaluate(qrels, run, METRICS).means
    assert eb.evaluate(eb.read_qrels(path), eb.read_run(path), METRICS).means == api
    config = tmp_path / "eval.yaml"
    config.write_text(json.dumps({"runs": {"sys": path}, "metrics": METRICS}))
    assert run_config(load_config(config), write=False).report.results["sys"].means == api
    out = tmp_path / "converted.txt"
    assert main(["convert", path, str(out), "--from", "rag", "--run-output", str(tmp_path / "run.txt")]) == 0
    assert eb.read_qrels(out).to_dict() == QRELS and eb.read_run(tmp_path / "run.txt").to_dict() == RUN


@pytest.mark.parametrize("fmt, data", [
    ("records", {q: {"retrieved": list(RUN[q]), "relevant": QRELS[q]} for q in QRELS}),
    ("pairs", {q: [list(RUN[q]), QRELS[q]] for q in QRELS}),
])
def test_inline_rag_shapes_read_the_same_in_python_and_in_a_config(fmt: str, data: dict, tmp_path: Path) -> None:
    """Inline data in a config and the same data in Python are one door."""
    qrels, run = eb.read_pair(data, format=fmt)
    assert qrels.to_dict() == QRELS and run.to_dict() == RUN
    config = tmp_path / "eval.yaml"
    config.write_text(json.dumps({"runs": {"sys": {"format": fmt, "data": data}}, "metrics": METRICS}))
    api = eb.evaluate(qrels, run, METRICS).means
    assert run_config(load_config(config), write=False).report.results["sys"].means == api


@pytest.mark.parametrize("make", [
    lambda: __import__("pandas").DataFrame(_rows(RUN, "score")),
    lambda: __import__("pyarrow").Table.from_pylist(_rows(RUN, "score")),
    lambda: [(r["query_id"], r["doc_id"], r["score"]) for r in _rows(RUN, "score")],
    lambda: RUN,
], ids=["pandas", "arrow", "tuples", "dict"])
def test_in_memory_tables_and_rows_read_as_the_same_run(make) -> None:
    """pandas, Arrow, plain tuples and dicts of dicts hold the same run."""
    assert eb.read_run(make()).to_dict() == RUN


def test_polars_tables_read_through_arrow() -> None:
    """A Polars DataFrame is read through Arrow like the others (when Polars is installed)."""
    pl = pytest.importorskip("polars", reason="polars is an optional dependency")
    assert eb.read_run(pl.DataFrame(_rows(RUN, "score"))).to_dict() == RUN


def test_msmarco_and_beir_files_are_recognised_by_their_first_line(tmp_path: Path) -> None:
    """`.tsv` holds a header table (BEIR), a TREC file or an MS MARCO run: the first line decides."""
    beir = tmp_path / "test.tsv"
    beir.write_text(_delimited(QRELS, "relevance", "\t", ("query-id", "corpus-id", "score")))
    marco = tmp_path / "run.dev.tsv"
    marco.write_text("".join(f"{q}\t{d}\t{i}\n" for q, docs in RUN.items() for i, d in enumerate(docs, 1)))
    trec = tmp_path / "qrels.dev.tsv"
    trec.write_text("".join(f"{q}\t0\t{d}\t{g}\n" for q, docs in QRELS.items() for d, g in docs.items()))
    assert resolve(beir, kind="qrels").name == "tsv" and eb.read_qrels(beir).to_dict() == QRELS
    assert resolve(marco, kind="run").name == "msmarco" and eb.read_run(marco).to_dict() == RUN
    assert resolve(trec, kind="qrels").name == "trec" and eb.read_qrels(trec).to_dict() == QRELS
    assert eb.read_qrels(beir, format="beir").to_dict() == QRELS


# ---------------------------------------------------------------- strictness, with the messages


def _bad_files(folder: Path) -> dict[str, tuple[Path, str, str]]:
    """name -> (path, what it is read as, the message it must raise)."""
    cases: dict[str, tuple[Path, str, str]] = {}
    trunc = folder / "run.txt.gz"
    trunc.write_bytes(gzip.compress("".join(f"q1 Q0 d{i} {i} {i}.5 sys\n" for i in range(2000)).encode())[:400])
    cases["truncated gzip"] = (trunc, "run", "the gzip file is truncated or corrupt")
    latin = folder / "qrels.json"
    latin.write_bytes('{"q1": {"d1": 1},\n "caf\u00e9": {"d2": 1}}'.encode("latin-1"))
    cases["json not UTF-8"] = (latin, "qrels", "not UTF-8 text: byte 0xe9")
    latin_jsonl = folder / "rows.jsonl"
    latin_jsonl.write_bytes(b'{"query_id": "q1", "doc_id": "d1", "score": 1}\n{"query_id": "caf\xe9", '
                            b'"doc_id": "d1", "score": 1}\n')
    cases["jsonl not UTF-8"] = (latin_jsonl, "run", "not UTF-8 text: byte 0xe9")
    latin_csv = folder / "rows.csv"
    latin_csv.write_bytes(b"query_id,doc_id,score\nq1,d1,1\ncaf\xe9,d2,2\n")
    cases["csv not UTF-8"] = (latin_csv, "run", "not UTF-8 text: byte 0xe9")
    empty = folder / "empty.csv"
    empty.write_text("")
    cases["empty csv"] = (empty, "run", "the file is empty")
    junk = folder / "junk.parquet"
    junk.write_bytes(b"this is not parquet at all")
    cases["junk parquet"] = (junk, "qrels", "not a readable Parquet file")
    dup = folder / "dup.json"
    dup.write_text('{"q1": {"d1": 1.0, "d1": 2.0}}')
    cases["duplicate JSON key"] = (dup, "run", "the key 'd1' appears twice in one JSON object")
    dup_yaml = folder / "grades.yaml"
    dup_yaml.write_text("q1:\n  d1: 1\n  d1: 2\n")
    cases["duplicate YAML key"] = (dup_yaml, "qrels", "the key 'q1.d1' is given twice (lines 2 and 3)")
    float_ids = folder / "float_ids.csv"
    float_ids.write_text("query_id,doc_id,score\nq1,d1,1.0\n")
    return cases


@pytest.mark.parametrize("case", ["truncated gzip", "json not UTF-8", "jsonl not UTF-8", "csv not UTF-8", "empty csv",
                                  "junk parquet", "duplicate JSON key", "duplicate YAML key"])
def test_broken_files_raise_an_input_error_naming_the_file(case: str, tmp_path: Path) -> None:
    """Each broken file gives an InputError with its path and what is wrong, never a dependency's traceback."""
    path, kind, message = _bad_files(tmp_path)[case]
    read = eb.read_qrels if kind == "qrels" else eb.read_run
    with pytest.raises(InputError) as raised:
        read(path)
    assert message in str(raised.value)
    assert str(path) in str(raised.value)


def test_a_bad_byte_is_reported_on_its_own_line(tmp_path: Path) -> None:
    """A non-UTF-8 byte on line 150001 of a TREC file is reported at line 150001."""
    path = tmp_path / "run.txt"
    lines = [f"q{i // 100} Q0 d{i} {i % 100 + 1} {1000 - i % 100} sys\n".encode() for i in range(150_000)]
    path.write_bytes(b"".join(lines) + b"q9999 Q0 caf\xe9 1 1.0 sys\n")
    with pytest.raises(InputError) as raised:
        eb.read_run(path)
    assert f"{path}:150001:" in str(raised.value)


@pytest.mark.parametrize("suffix, text", [
    (".txt", "\ufeffq1 Q0 d1 1 2.0 sys\nq1 Q0 d2 2 1.0 sys\nq2 Q0 d1 1 1.0 sys\n"),
    (".csv", "\ufeffquery_id,doc_id,score\nq1,d1,2.0\nq1,d2,1.0\nq2,d1,1.0\n"),
    (".jsonl", '\ufeff{"query_id": "q1", "doc_id": "d1", "score": 2.0}\n{"query_id": "q1", "doc_id": "d2", '
               '"score": 1.0}\n{"query_id": "q2", "doc_id": "d1", "score": 1.0}\n'),
    (".json", '\ufeff{"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d1": 1.0}}'),
])
def test_a_byte_order_mark_is_removed_and_noted_never_part_of_an_id(suffix: str, text: str, tmp_path: Path) -> None:
    """A BOM at the start of a file does not end up in the first query id (it split a query in two and
    changed P@1 from 1.0 to 0.5), and the removal is noted."""
    path = tmp_path / f"run{suffix}"
    path.write_text(text, encoding="utf-8")
    run = eb.read_run(path)
    assert list(run) == ["q1", "q2"]
    assert any("byte order mark" in note for note in run.notes)
    results = eb.evaluate({"q1": {"d1": 1}, "q2": {"d1": 1}}, run, ["P@1"])
    assert results["P@1"] == 1.0


def test_ids_that_only_look_alike_are_refused_with_the_fix() -> None:
    """1 vs "1" across qrels and run, and float ids (1.0), are refused instead of silently not matching."""
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError, match="evalbridge does not guess that they are the same ids"):
        eb.evaluate({1: {"d1": 1}}, {"1": {"d1": 1.0}}, ["P@1"])
    frame = pd.DataFrame({"query_id": [1.0, 2.0], "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(InputError, match="holds floats .* only looks like 1"):
        eb.read_run(frame)


def test_an_unknown_option_lists_the_formats_that_take_it(tmp_path: Path) -> None:
    """Options are declared once per format: a misplaced one says where it applies."""
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 1.0 sys\n")
    with pytest.raises(InputError, match="option 'retrieved' does not apply to format 'trec' \\(it applies to nested, rag\\)"):
        eb.read_run(path, retrieved="contexts")


def test_yaml_alias_bomb_is_refused(tmp_path: Path) -> None:
    """A YAML data file whose aliases expand to billions of nodes is refused before it fills the memory."""
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"] + [
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 10) + "]" for i in range(9)]
    path = tmp_path / "grades.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match="alias bomb"):
        eb.read_qrels(path)


# ---------------------------------------------------------------- round trips

_ID = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"), blacklist_characters="#\x85\ufeff"),
              min_size=1, max_size=8)
_SPACED = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=8)
_GRADES = st.one_of(st.integers(-3, 10), st.floats(-5, 10, allow_nan=False).map(lambda x: round(x, 3)))
_SCORES = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


def _data(ids, values):
    return st.dictionaries(ids, st.dictionaries(ids, values, min_size=1, max_size=4), min_size=1, max_size=4)


WRITABLE = [name for name, f in formats().items() if f.write is not None]


@pytest.mark.parametrize("fmt", WRITABLE)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_writing_then_reading_gives_back_the_same_qrels_and_runs(fmt: str, data: st.DataObject,
                                                                tmp_path_factory: pytest.TempPathFactory) -> None:
    """write -> read is the identity for every writable format; ids with spaces, quotes and unicode where the
    format can hold them (TREC and MS MARCO separate columns by whitespace, so their ids are single words)."""
    spec = get_format(fmt)
    ids = _ID if fmt in ("trec", "msmarco", "sample_eval") else _SPACED
    folder = tmp_path_factory.mktemp(fmt)
    suffix = next((s for s in spec.suffixes if s), ".txt")
    for kind in ("qrels", "run"):
        if kind not in spec.holds:
            continue
        values = _GRADES if kind == "qrels" else _SCORES
        raw = data.draw(_data(ids, values))
        if fmt == "msmarco":  # a rank format holds scores n..1
            raw = {q: {d: float(len(docs) - i) for i, d in enumerate(sorted(docs, key=lambda d: (-docs[d], d)))}
                   for q, docs in raw.items()}
        obj = eb.Qrels(raw) if kind == "qrels" else eb.Run(raw)
        path = folder / f"{kind}{suffix}"
        eb.write(obj, path, format=fmt)
        back = (eb.read_qrels if kind == "qrels" else eb.read_run)(path, format=fmt)
        assert back.to_dict() == obj.to_dict()


def test_a_rag_log_with_nested_contexts_and_extra_fields_reads_with_defaults_and_mapping(tmp_path: Path) -> None:
    """Defaults find the common field names and say which they picked; an explicit (dotted) mapping reads a
    nested log; extra fields are counted, not refused."""
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps({
        "id": q, "question": "?", "answer": "!", "latency_ms": 12,
        "retrieval": {"contexts": [{"chunk": {"doc": d}, "sim": s} for d, s in RUN[q].items()]},
        "labels": {"gold": QRELS[q]}}) + "\n" for q in QRELS))
    qrels, run = eb.read_pair(log, retrieved="retrieval.contexts", doc="chunk.doc", score="sim",
                              relevant="labels.gold")
    assert qrels.to_dict() == QRELS and run.to_dict() == RUN
    assert any("question (3 questions)" in note and "answer" in note for note in run.notes)
    flat = tmp_path / "flat.jsonl"
    flat.write_text("".join(json.dumps({"qid": q, "question": "?", "retrieved_ids": list(RUN[q]),
                                        "relevant_ids": [d for d, g in QRELS[q].items() if g > 0]}) + "\n"
                            for q in QRELS))
    qrels, run = eb.read_pair(flat)
    assert run.to_dict() == RUN
    assert "query=qid, retrieved=retrieved_ids, relevant=relevant_ids" in qrels.notes[0]


def test_an_ambiguous_rag_log_lists_the_candidate_fields(tmp_path: Path) -> None:
    """Two fields that could be the ranked list: an error naming both, not a guess."""
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"id": "q1", "retrieved": ["d1"], "contexts": ["d1"], "relevant": ["d1"]}) + "\n")
    with pytest.raises(InputError, match="several fields could be the retrieved: 'retrieved', 'contexts'"):
        eb.read_pair(log)


def test_several_logs_give_one_qrels_and_a_run_per_system(tmp_path: Path) -> None:
    """Logs of two retrievers over the same questions share their judgements."""
    paths = {}
    for system, order in (("bm25", 1), ("dense", -1)):
        path = tmp_path / f"{system}.jsonl"
        path.write_text("".join(json.dumps({"query_id": q, "retrieved": list(RUN[q])[::order],
                                            "relevant": QRELS[q]}) + "\n" for q in QRELS))
        paths[system] = path
    qrels, runs = eb.read_logs(paths)
    assert qrels.to_dict() == QRELS and list(runs) == ["bm25", "dense"]
    assert runs["dense"].name == "dense" and list(runs["dense"]["q1"]) == list(RUN["q1"])[::-1]


def test_evalbridge_formats_lists_the_registry(capsys: pytest.CaptureFixture) -> None:
    """`evalbridge formats` prints every registered format with what it holds."""
    assert main(["formats", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["format"] for r in rows] == list(formats())
    assert {r["format"]: r["holds"] for r in rows}["rag"] == "qrels and run"
