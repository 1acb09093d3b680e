"""Benchmark data with a fixed seed: graded qrels, runs with ties, string ids.

The shape follows ``shared/research/performance-anchors.md``:

* qrels: ``1 + Poisson(1)`` relevant docs per query (3% of queries have 20-200), graded
  1/2/3 with p = .5/.3/.2, plus ``Poisson(2)`` judged non-relevant docs (grade 0);
* run: ``depth`` docs per query in rank order with BM25-like scores rounded to 6 decimals
  (as a TREC file carries them); in 25% of the queries the scores are quantised, which
  gives ties; judged docs sit at ranks skewed towards the top;
* ids: ``q<int>`` and ``d<int>``, doc ids drawn from 8.8M (MS MARCO size).

Everything is generated with numpy; the dict, file, Arrow and RAG-log forms are built from the arrays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Dataset", "generate", "to_dicts", "write_trec", "to_arrow", "write_rag_log"]

#: A prime near MS MARCO's 8.8M passages: ``(a + j * s) mod P`` never repeats within a query.
_P = 8_800_009


@dataclass(frozen=True)
class Dataset:
    """Columns of one benchmark input (rows of the run are in rank order per query)."""

    name: str
    n_queries: int
    depth: int
    qrels_query: np.ndarray
    qrels_doc: np.ndarray
    qrels_grade: np.ndarray
    run_query: np.ndarray
    run_doc: np.ndarray
    run_score: np.ndarray

    @property
    def run_rows(self) -> int:
        return len(self.run_query)

    @property
    def qrels_rows(self) -> int:
        return len(self.qrels_query)


def generate(n_queries: int, depth: int, *, seed: int = 0, name: str = "", tie_share: float = 0.25) -> Dataset:
    """A dataset of ``n_queries`` x ``depth`` run rows (see the module docstring)."""
    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(n_queries, dtype=np.int64), depth)
    j = np.tile(np.arange(depth, dtype=np.int64), n_queries)
    start, step = rng.integers(0, _P, n_queries), rng.integers(1, _P, n_queries)
    run_doc = (start[q] + j * step[q]) % _P

    top = rng.uniform(20.0, 35.0, n_queries)
    gaps = rng.exponential(10.0 / depth, (n_queries, depth))
    gaps[:, 0] = 0.0
    scores = top[:, None] - np.cumsum(gaps, axis=1)
    tied = rng.random(n_queries) < tie_share
    quantum = 20.0 / depth
    scores[tied] = np.round(scores[tied] / quantum) * quantum
    run_score = np.round(scores, 6).ravel()

    n_rel = 1 + rng.poisson(1.0, n_queries)
    many = rng.random(n_queries) < 0.03
    n_rel[many] = rng.integers(20, 201, many.sum())
    n_non = rng.poisson(2.0, n_queries)
    n_judged = n_rel + n_non
    qrels_query = np.repeat(np.arange(n_queries, dtype=np.int64), n_judged)
    first = np.repeat(np.cumsum(n_judged) - n_judged, n_judged)
    within = np.arange(len(qrels_query)) - first
    relevant = within < n_rel[qrels_query]
    grade = np.where(relevant, rng.choice([1, 2, 3], size=len(qrels_query), p=[0.5, 0.3, 0.2]), 0)

    # Retrieved judged docs take run rows at ranks skewed to the top; the others get fresh ids.
    retrieved = rng.random(len(qrels_query)) < np.where(relevant, 0.6, 0.8)
    rank = np.minimum((depth * rng.random(len(qrels_query)) ** 3).astype(np.int64), depth - 1)
    slot = qrels_query * depth + rank
    order = np.lexsort((~retrieved, slot))
    duplicate = np.zeros(len(slot), dtype=bool)
    duplicate[order[1:]] = slot[order[1:]] == slot[order[:-1]]
    retrieved &= ~duplicate
    qrels_doc = np.where(retrieved, run_doc[slot], _P + np.arange(len(qrels_query)))
    return Dataset(name or f"{n_queries}x{depth}", n_queries, depth, qrels_query, qrels_doc,
                   grade.astype(np.int64), q, run_doc, run_score)


def _ids(prefix: str, numbers: np.ndarray) -> list[str]:
    return [f"{prefix}{n}" for n in numbers.tolist()]


def to_dicts(data: Dataset) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """``(qrels, run)`` as dict-of-dicts with string ids, every query in rank order."""
    names = _ids("q", np.arange(data.n_queries))
    qrels: dict[str, dict[str, int]] = {}
    for qi, doc, grade in zip(data.qrels_query.tolist(), _ids("d", data.qrels_doc), data.qrels_grade.tolist()):
        qrels.setdefault(names[qi], {})[doc] = grade
    docs, scores, depth = _ids("d", data.run_doc), data.run_score.tolist(), data.depth
    run = {names[i]: dict(zip(docs[i * depth:(i + 1) * depth], scores[i * depth:(i + 1) * depth]))
           for i in range(data.n_queries)}
    return qrels, run


def write_trec(data: Dataset, folder: Path) -> tuple[Path, Path]:
    """Write ``qrels.txt`` (``qid 0 docid grade``) and ``run.txt`` (``qid Q0 docid rank score tag``)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as csv

    folder.mkdir(parents=True, exist_ok=True)
    qrels_path, run_path = folder / "qrels.txt", folder / "run.txt"

    def column(prefix: str, numbers: np.ndarray) -> pa.Array:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")

    n = data.qrels_rows
    qrels = pa.table({"q": column("q", data.qrels_query), "it": pa.array(["0"] * n),
                      "d": column("d", data.qrels_doc), "g": pa.array(data.qrels_grade)})
    rank = np.arange(data.run_rows) % data.depth + 1
    run = pa.table({"q": column("q", data.run_query), "q0": pa.array(["Q0"] * data.run_rows),
                    "d": column("d", data.run_doc), "r": pa.array(rank),
                    "s": pc.cast(pa.array(data.run_score), pa.string()),
                    "t": pa.array(["bench"] * data.run_rows)})
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    for table, path in ((qrels, qrels_path), (run, run_path)):
        csv.write_csv(table, path, write_options=options)
    return qrels_path, run_path


def to_arrow(data: Dataset) -> tuple[object, object]:
    """``(qrels, run)`` as Arrow tables ``query_id, doc_id, relevance`` / ``query_id, doc_id, score``, rows as in
    the TREC files."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def column(prefix: str, numbers: np.ndarray) -> pa.Array:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")

    qrels = pa.table({"query_id": column("q", data.qrels_query), "doc_id": column("d", data.qrels_doc),
                      "relevance": pa.array(data.qrels_grade)})
    run = pa.table({"query_id": column("q", data.run_query), "doc_id": column("d", data.run_doc),
                    "score": pa.array(data.run_score)})
    return qrels, run


def write_rag_log(data: Dataset, path: Path) -> Path:
    """A RAG log, one JSON object per query (``question_id``, a ``question`` text, ``contexts``: ``{doc_id, score}``
    objects in rank order, ``ground_truth``: ``{doc_id: grade}``): the same judgements and run as the TREC files."""
    import json

    path.parent.mkdir(parents=True, exist_ok=True)
    qrels, run = to_dicts(data)
    with path.open("w") as f:
        for qid, scores in run.items():
            f.write(json.dumps({"question_id": qid, "question": f"question {qid}?",
                                "contexts": [{"doc_id": d, "score": s} for d, s in scores.items()],
                                "ground_truth": qrels.get(qid, {})}) + "\n")
    return path
