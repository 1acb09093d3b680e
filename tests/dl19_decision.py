"""The DL19 decision config of the tests of the decision block and the page: the three TREC DL 2019 passage runs
of the shared data (BM25, BM25+RM3, SPLADE++ ED, 43 judged queries), compared with BM25, with run diffs, slices
(short and long queries, from the topics), gates (one that fails), power (with the comparison) and a diagnosis."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SHARED

DL19 = SHARED / "data" / "real" / "trec-dl-2019-passage"


def dl19_config(folder: Path) -> Path:
    """The config written in ``folder`` (with its slice table); skips when the shared data is absent."""
    if not DL19.is_dir():
        pytest.skip(f"the shared TREC DL 2019 data is absent ({DL19})")
    rows = ["query_id,length"]
    for line in (DL19 / "topics.dl19-passage.txt").read_text(encoding="utf-8").splitlines():
        qid, text = line.split("\t", 1)
        rows.append(f"{qid},{'short' if len(text.split()) <= 5 else 'long'}")
    (folder / "lengths.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    config = folder / "dl19.yaml"
    config.write_text(f"""title: DL19 decision
qrels: {DL19 / 'qrels.dl19-passage.txt'}
runs:
  bm25: {DL19 / 'run.bm25.top100.txt'}
  bm25-rm3: {DL19 / 'run.bm25-rm3.top100.txt'}
  splade-pp-ed: {DL19 / 'run.splade-pp-ed.top100.txt'}
metrics: [nDCG@10, R@100, AP, RR@10]
min_relevance: 2
ties: docid_desc
comparison: {{baseline: bm25, test: t, correction: holm, n_resamples: 2000}}
seed: 2019
gates:
  "splade-pp-ed: nDCG@10": ">= 0.7"
  "bm25-rm3: nDCG@10": ">= 0.6"
diff: true
slices: {{by: length, file: lengths.csv}}
diagnose: {{metric: nDCG@10, trials: 200, n_resamples: 500}}
""", encoding="utf-8")
    return config
