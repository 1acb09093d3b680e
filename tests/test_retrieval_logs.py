"""Retrieval logs read as runs (issue 37, item 4): search engine responses, vector store results, span tables and
nested lists, each a format of the registry, so every door reads them alike, beside the qrels.

The fixtures are written by hand after each tool's documented response shape (Elasticsearch's ``_search`` and
``_msearch`` bodies, Qdrant's points/search and points/query responses (a Euclid collection's distances too), Chroma's
``collection.query`` result, OpenInference's span JSON and Phoenix's
span table, a vector store log of ``{id, score}`` objects). Every one holds the same ranking:

    q1: 102 (best), 101, 103        q2: 102, 104

judged by ``QRELS`` (relevant: 101 and 103 for q1, 102 for q2), so by hand P@2 = (1/2 + 1/2) / 2 = 0.5 and
RR = (1/2 + 1) / 2 = 0.75.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from doors import Case, assert_same, cli, through_doors

QRELS = "q1 0 101 1\nq1 0 103 1\nq2 0 102 1\nq2 0 101 0\n"
TRUTH = {"P@2": 0.5, "RR": 0.75}


def _lines(*objects: Any) -> str:
    return "".join(json.dumps(obj) + "\n" for obj in objects)


def _es_hit(doc: str, score: float, title: str) -> dict[str, Any]:
    return {"_index": "passages", "_id": doc, "_score": score, "_source": {"title": title, "url": "https://x.org/a:b"}}


def _es_response(took: int, hits: list[dict[str, Any]]) -> dict[str, Any]:
    return {"took": took, "timed_out": False, "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {"total": {"value": len(hits), "relation": "eq"},
                     "max_score": hits[0]["_score"] if hits else None, "hits": hits}}


ES_Q1 = _es_response(5, [_es_hit("102", 7.31, "Annual leave"), _es_hit("101", 6.02, "Leave policy"),
                         _es_hit("103", 2.4, "Holidays")])
ES_Q2 = _es_response(3, [_es_hit("102", 11.9, "Expenses"), _es_hit("104", 3.25, "Travel")])


def _point(pid: int, score: float, version: int = 1) -> dict[str, Any]:
    return {"id": pid, "version": version, "score": score, "payload": {"source": f"kb/{pid}.md"}, "vector": None}


QDRANT_Q1 = [_point(102, 0.912), _point(101, 0.87), _point(103, 0.55, 4)]
QDRANT_Q2 = [_point(102, 0.95), _point(104, 0.31)]


def _span(span_id: str, documents: list[tuple[str, float]] | None, kind: str = "RETRIEVER") -> dict[str, Any]:
    attributes: dict[str, Any] = {"input": {"value": "how many days of annual leave?"},
                                  "openinference": {"span": {"kind": kind}}}
    if documents is not None:
        attributes["retrieval"] = {"documents": [{"document": {"id": d, "score": s, "content": f"text of {d}"}}
                                                 for d, s in documents]}
    return {"name": "retrieve" if documents is not None else "llm", "span_kind": kind, "parent_id": None,
            "context": {"trace_id": "2b1f" + span_id, "span_id": span_id}, "start_time": "2026-11-30T10:00:00Z",
            "end_time": "2026-11-30T10:00:01Z", "status_code": "OK", "status_message": "", "attributes": attributes,
            "events": []}


#: name -> (file text, the API's options): every log format, the same ranking
LOGS: dict[str, tuple[str, dict[str, Any]]] = {
    "es.jsonl": (_lines(ES_Q1, ES_Q2), {}),
    "es_named.jsonl": (_lines({"qid": "q2", **ES_Q2}, {"qid": "q1", **ES_Q1}), {"query": "qid"}),
    "msearch.json": (json.dumps({"took": 8, "responses": [{**ES_Q1, "status": 200}, {**ES_Q2, "status": 200}]},
                                indent=2), {}),
    "qdrant.jsonl": (_lines({"result": QDRANT_Q1, "status": "ok", "time": 0.0021},
                            {"result": QDRANT_Q2, "status": "ok", "time": 0.0018}), {}),
    "qdrant_query.json": (json.dumps({"result": [{"points": QDRANT_Q1}, {"points": QDRANT_Q2}], "status": "ok",
                                      "time": 0.004, "usage": None}), {}),
    "qdrant_batch.json": (json.dumps({"result": [QDRANT_Q1, QDRANT_Q2], "status": "ok", "time": 0.003}), {}),
    "chroma.json": (json.dumps({"ids": [["102", "101", "103"], ["102", "104"]],
                                "distances": [[0.112, 0.35, 0.9], [0.05, 0.62]],
                                "documents": [["Annual leave", "Leave policy", "Holidays"], ["Expenses", "Travel"]],
                                "metadatas": [[{"src": "hr"}, {"src": "hr"}, None], [{"src": "fin"}, None]],
                                "embeddings": None, "uris": None, "data": None,
                                "included": ["metadatas", "documents", "distances"]}), {}),
    "qdrant_euclid.jsonl": (_lines({"result": [_point(102, 0.2), _point(101, 0.35), _point(103, 1.4)], "status": "ok",
                             "time": 0.002},
                            {"result": [_point(102, 0.1), _point(104, 2.5)], "status": "ok", "time": 0.002}),
                     {"distance": "score"}),
    "spans.jsonl": (_lines(_span("a1", [("102", 0.83), ("101", 0.79), ("103", 0.4)]), _span("a2", None, "LLM"),
                           _span("a3", [("102", 0.9), ("104", 0.2)])), {}),
    "vectors.jsonl": (_lines({"query_id": "q1", "question": "annual leave?", "latency_ms": 41,
                              "matches": [{"id": "102", "score": 0.9, "metadata": {}}, {"id": "101", "score": 0.8},
                                          {"id": "103", "score": 0.1}]},
                             {"query_id": "q2", "question": "expenses?", "latency_ms": 38,
                              "matches": [{"id": "102", "score": 0.7}, {"id": "104", "score": 0.6}]}), {}),
}
FORMAT_OF = {"es.jsonl": "elasticsearch", "es_named.jsonl": "elasticsearch", "msearch.json": "elasticsearch",
             "qdrant.jsonl": "qdrant", "qdrant_query.json": "qdrant", "qdrant_batch.json": "qdrant",
             "spans.jsonl": "openinference", "vectors.jsonl": "nested", "chroma.json": "chroma",
             "qdrant_euclid.jsonl": "qdrant"}


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_retrieval_log_beside_qrels_is_a_run_at_every_door(tmp_path: Path, name: str) -> None:
    text, options = LOGS[name]
    doors = through_doors(Case(files={"qrels.txt": QRELS, name: text}, qrels="qrels.txt", runs=(name,),
                               metrics=("P@2", "RR"), run_options=options), tmp_path)
    assert_same(doors)
    system = name.split(".")[0]
    assert doors["api"].means == {system: TRUTH}, doors


@pytest.mark.parametrize("name", sorted(LOGS))
def test_a_retrieval_log_is_recognised_by_its_first_bytes(tmp_path: Path, name: str) -> None:
    from evalbridge.io import resolve

    (tmp_path / name).write_text(LOGS[name][0], encoding="utf-8")
    assert resolve(str(tmp_path / name), kind="run").name == FORMAT_OF[name]


@pytest.mark.parametrize("name", sorted(LOGS))
def test_convert_writes_trec_from_a_retrieval_log_and_reads_back_the_same_run(tmp_path: Path, name: str) -> None:
    import evalbridge as eb

    text, options = LOGS[name]
    (tmp_path / name).write_text(text, encoding="utf-8")
    columns = [f"--columns={','.join(f'{k}={v}' for k, v in options.items())}"] if options else []
    code, _, err = cli("convert", tmp_path / name, tmp_path / "run.txt", *columns)
    assert code == 0, err
    assert eb.read_run(tmp_path / "run.txt").to_dict() == eb.read_run(tmp_path / name, **options).to_dict()


def _bad_score(response: dict[str, Any]) -> dict[str, Any]:
    hits = [dict(hit) for hit in response["hits"]["hits"]]
    hits[1]["_score"] = "high"
    return {**response, "hits": {**response["hits"], "hits": hits}}


#: name -> (file text, what every door says: the file and line, the fault, the fix)
MALFORMED: dict[str, tuple[str, tuple[str, ...]]] = {
    "score_text.jsonl": (_lines(ES_Q1, _bad_score(ES_Q2)), ("score_text.jsonl:2", "'_score'", "without quotes")),
    "truncated.jsonl": (_lines(ES_Q1) + json.dumps(ES_Q2)[:80] + "\n", ("truncated.jsonl:2", "invalid JSON")),
    "failed.json": (json.dumps({"took": 8, "responses": [
        {**ES_Q1, "status": 200},
        {"error": {"type": "index_not_found_exception", "reason": "no such index [pasages]"}, "status": 404}]}),
        ("failed.json", "response 2", "no such index [pasages]", "a failed search is not an empty ranking")),
    "euclid.jsonl": (_lines({"result": QDRANT_Q1, "status": "ok", "time": 0.002},
                            {"result": [_point(102, 0.2), _point(104, 1.7)], "status": "ok", "time": 0.002}),
                     ("euclid.jsonl:2", "distances", "name them as distances")),
    "twice.jsonl": (_lines({"result": QDRANT_Q1, "status": "ok", "time": 0.002}).replace('"time"', '"status": "ok", "time"'),
                    ("twice.jsonl:1", "'status' appears twice", "keep one of them")),
    "no_id.jsonl": (_lines(_span("a1", [("102", 0.83), ("101", 0.79)]),
                           _span("a3", [("102", 0.9)])).replace('{"score": 0.79', '{"score": 0.79').replace(
                               '"id": "101", ', ""), ("no_id.jsonl:1", "no doc field 'document.id'", "doc=")),
    "repeat.jsonl": (_lines({"query_id": "q1", "matches": [{"id": "102", "score": 0.9}, {"id": "102", "score": 0.8}]}),
                     ("repeat.jsonl:1", "'102' is retrieved twice", "duplicates='first'")),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_retrieval_log_is_refused_with_file_line_and_the_fix_at_every_door(tmp_path: Path,
                                                                                    name: str) -> None:
    text, says = MALFORMED[name]
    doors = through_doors(Case(files={"qrels.txt": QRELS, name: text}, qrels="qrels.txt", runs=(name,),
                               metrics=("P@2",)), tmp_path)
    assert_same(doors, says=says)
    assert doors["cli"].code == 2


def _span_table(path: Path) -> None:
    """A Phoenix span table as ``get_spans_dataframe().to_parquet()`` writes it: one row per span, dotted column
    names, the retrieved documents a list-of-struct column (null for the spans that retrieve nothing)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    document = pa.struct([("document.id", pa.string()), ("document.score", pa.float64()),
                          ("document.content", pa.string())])
    rows = [("retrieve", "RETRIEVER", "a1", "annual leave?", [("102", 0.83), ("101", 0.79), ("103", 0.4)]),
            ("llm", "LLM", "a2", "annual leave?", None),
            ("retrieve", "RETRIEVER", "a3", "expenses?", [("102", 0.9), ("104", 0.2)])]
    table = pa.table({
        "name": [r[0] for r in rows], "span_kind": [r[1] for r in rows], "context.span_id": [r[2] for r in rows],
        "attributes.input.value": [r[3] for r in rows],
        "attributes.retrieval.documents": pa.array(
            [None if r[4] is None else [{"document.id": d, "document.score": s, "document.content": f"text of {d}"}
                                        for d, s in r[4]] for r in rows], type=pa.list_(document))})
    pq.write_table(table, path)


def test_a_phoenix_span_table_in_parquet_is_a_run_at_every_door(tmp_path: Path) -> None:
    _span_table(tmp_path / "spans.parquet")
    doors = through_doors(Case(files={"qrels.txt": QRELS}, qrels="qrels.txt", runs=("spans.parquet",),
                               metrics=("P@2", "RR"), run_options={"format": "openinference"}), tmp_path)
    assert_same(doors)
    assert doors["api"].means == {"spans": TRUTH}


def test_a_sorted_search_with_null_scores_is_ranked_by_its_list_order() -> None:
    import evalbridge as eb

    hits = [{"_id": "102", "_score": None, "sort": [3]}, {"_id": "101", "_score": None, "sort": [2]}]
    run = eb.read_run([_es_response(2, hits)], format="elasticsearch")
    assert dict(run["q1"]) == {"102": 2.0, "101": 1.0}
    assert any("list order" in note for note in run.notes)


def test_a_retrieval_log_alone_says_it_holds_no_judgements_at_every_door(tmp_path: Path) -> None:
    doors = through_doors(Case(files={"es.jsonl": LOGS["es.jsonl"][0]}, runs=("es.jsonl",)), tmp_path)
    assert doors["cli"].code == doors["config"].code == 2
    assert "holds no judgements" in doors["cli"].message and "elasticsearch" in doors["cli"].message


def _rankings() -> Any:
    """Rankings of 1-4 queries: distinct doc ids, each with a score, best first."""
    from hypothesis import strategies as st

    ranked = st.dictionaries(st.text("abc123-", min_size=1, max_size=4),
                             st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False), min_size=1, max_size=6)
    return st.lists(ranked.map(lambda docs: sorted(docs.items(), key=lambda item: -item[1])), min_size=1,
                    max_size=4)


def _as_logs(rankings: list[list[tuple[str, float]]]) -> dict[str, Any]:
    """The same rankings as each format writes them (format -> records)."""
    return {
        "elasticsearch": [{"took": 1, "hits": {"hits": [{"_id": d, "_score": s} for d, s in ranked]}}
                          for ranked in rankings],
        "qdrant": [{"result": [{"id": d, "version": 0, "score": s} for d, s in ranked], "status": "ok", "time": 0}
                   for ranked in rankings],
        "chroma": {"ids": [[d for d, _ in ranked] for ranked in rankings],
                   "distances": [[-s for _, s in ranked] for ranked in rankings]},
        "openinference": [{"attributes": {"retrieval": {"documents": [{"document": {"id": d, "score": s}}
                                                                      for d, s in ranked]}}} for ranked in rankings],
        "nested": [{"results": [{"id": d, "score": s} for d, s in ranked]} for ranked in rankings],
    }


def test_every_log_format_gives_the_ranking_it_holds() -> None:
    """Property: a ranking written as each format's records is read back as that ranking (query ids the positions),
    Chroma's distances as scores -distance."""
    from hypothesis import given

    import evalbridge as eb

    @given(_rankings())
    def check(rankings: list[list[tuple[str, float]]]) -> None:
        truth = {f"q{i}": {d: s for d, s in ranked} for i, ranked in enumerate(rankings, 1)}
        for fmt, records in _as_logs(rankings).items():
            assert eb.read_run(records, format=fmt).to_dict() == truth, fmt

    check()


def test_chroma_takes_no_sub_field_options_its_column_lists_do_not_have(tmp_path: Path) -> None:
    import evalbridge as eb

    path = tmp_path / "chroma.json"
    path.write_text(LOGS["chroma.json"][0], encoding="utf-8")
    with pytest.raises(eb.InputError, match="option 'doc' does not apply to format 'chroma'"):
        eb.read_run(path, format="chroma", doc="id")


def test_flattened_span_attributes_give_the_same_run_as_nested_ones() -> None:
    """OpenTelemetry SDKs hold a span's documents as flattened attributes (``retrieval.documents.0.document.id``)."""
    import evalbridge as eb

    def flat(documents: list[tuple[str, float]]) -> dict[str, Any]:
        attributes: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": "leave?"}
        for i, (doc, score) in reversed(list(enumerate(documents))):  # (written out of index order)
            attributes[f"retrieval.documents.{i}.document.id"] = doc
            attributes[f"retrieval.documents.{i}.document.score"] = score
        return {"name": "retrieve", "context": {"span_id": "s"}, "attributes": attributes}

    spans = [flat([("102", 0.83), ("101", 0.79), ("103", 0.4)]), flat([("102", 0.9), ("104", 0.2)])]
    nested = [json.loads(line) for line in LOGS["spans.jsonl"][0].splitlines()]
    assert eb.read_run(spans, format="openinference").to_dict() == \
        eb.read_run(nested, format="openinference").to_dict()
