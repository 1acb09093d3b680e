"""The reference metrics against trec_eval's own expected outputs (``../shared/conformance/trec_eval``).

The inputs and expected outputs were copied unchanged from usnistgov/trec_eval's ``test/``
folder (see ``conformance/README.md``); the command line of each expected file is in the
table below. trec_eval prints ``measure<TAB>qid<TAB>value`` with 4 decimals, so a value
agrees when it is within 5e-5 of the printed one. Without ``-c`` trec_eval evaluates only
the topics in both qrels and run (``missing_queries="drop"``); with ``-c`` a missing topic
scores 0 (``"zero"``). ``-l2`` is the relevance level of the binary measures; nDCG ignores it.
``-M100`` is ``depth=100``. The counts (``num_ret``, ``num_rel``, ``num_rel_ret``) print their
sum over topics on the ``all`` line, evalbridge's mean times the number of topics.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge import Metric, parse_metric
from strategies import ranked_from_scores

#: trec_eval measures without a cutoff -> evalbridge spec
TREC_PLAIN = {"map": "AP", "Rprec": "Rprec", "recip_rank": "RR", "ndcg": "nDCG",
              "bpref": "Bpref", "infAP": "infAP", "num_ret": "NumRet", "num_rel": "NumRel", "num_rel_ret": "Hits",
              "set_P": "SetP", "set_recall": "SetR", "set_F": "F1",
              # trec_eval 10: p = 0.9, gains = grades divided by the query's top grade, whatever -l says
              "rbp": "RBP(p=0.9,rel=1,weights=graded)", "rbp_resid": "RBP_resid(p=0.9)"}
#: counts: trec_eval's ``all`` line is their sum
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
#: with -c, trec_eval keeps num_rel for a topic missing from the run; evalbridge scores every metric 0 there
KEPT_BY_C = {"num_rel"}
#: trec_eval ``name_k`` measures -> evalbridge spec template
TREC_CUT = {"P": "P@{k}", "recall": "R@{k}", "ndcg_cut": "nDCG@{k}", "map_cut": "AP@{k}", "success": "Success@{k}"}
_CUT = re.compile(r"(?P<base>[A-Za-z_]+?)_(?P<k>\d+)")

#: every measure the brief asks for must be compared in the -q files
REQUIRED = {"map", "P_5", "P_10", "recall_100", "Rprec", "recip_rank", "ndcg", "ndcg_cut_10", "map_cut_10",
            "success_1", "success_5", "success_10", "bpref", "infAP", "num_ret", "num_rel", "num_rel_ret", "set_P",
            "set_recall", "set_F"}
#: measures of trec_eval 10 only (not in the v9.0.8 outputs)
REQUIRED_10 = {"rbp", "rbp_resid"}

TOL = 5e-5 + 1e-9  # half a unit of the 4th decimal, plus float noise


def trec_to_spec(measure: str) -> str | None:
    """The evalbridge spec of a trec_eval measure name, or None when evalbridge has no such metric."""
    if measure in TREC_PLAIN:
        return TREC_PLAIN[measure]
    match = _CUT.fullmatch(measure)
    if match and match["base"] in TREC_CUT:
        return TREC_CUT[match["base"]].format(k=int(match["k"]))
    return None


def parse_expected(path: Path) -> dict[tuple[str, str], str]:
    """``(measure, qid) -> printed value`` of a trec_eval output file."""
    expected = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            measure, qid, value = (part.strip() for part in line.split("\t"))
            expected[measure, qid] = value
    return expected


@dataclass(frozen=True)
class Case:
    """One trec_eval command line from the repository Makefile's ``quicktest``."""

    expected: str
    qrels: str
    run: str
    level: int = 1
    complete: bool = False          # -c: missing topics score 0
    max_docs: int | None = None     # -M: keep only the top M of each topic
    version: str = "current"        # v9.0.8 stores scores as C floats


CASES = [
    Case("out.test", "qrels.test", "results.test"),
    Case("out.test", "qrels.test.with-comments", "results.test"),
    Case("out.test.aq", "qrels.test", "results.test"),
    Case("out.test.aql", "qrels.rel_level", "results.test", level=2),
    Case("out.test.aqc", "qrels.test", "results.trunc", complete=True),
    Case("out.test.aqcM", "qrels.test", "results.trunc", complete=True, max_docs=100),
    Case("out.comment.test", "qrels.comment.test", "results.comment.test"),
    Case("v9.0.8/out.test", "qrels.test", "results.test", version="v9.0.8"),
    Case("v9.0.8/out.test.aq", "qrels.test", "results.test", version="v9.0.8"),
    Case("v9.0.8/out.test.aql", "qrels.rel_level", "results.test", level=2, version="v9.0.8"),
    Case("v9.0.8/out.test.aqc", "qrels.test", "results.trunc", complete=True, version="v9.0.8"),
    Case("v9.0.8/out.test.aqcM", "qrels.test", "results.trunc", complete=True, max_docs=100, version="v9.0.8"),
]


@pytest.fixture(scope="module")
def trec_dir(shared: Path) -> Path:
    """The folder of trec_eval's test files."""
    folder = shared / "conformance" / "trec_eval"
    if not folder.is_dir():
        pytest.skip(f"../shared/conformance/trec_eval is absent: {folder} does not exist")
    return folder


def top(run: eb.Run, m: int) -> dict[str, dict[str, float]]:
    """trec_eval's ``-M m``: sort each topic (score desc, docno desc), keep the first m."""
    return {q: {d: scores[d] for d in ranked_from_scores(dict(scores))[:m]} for q, scores in run.items()}


def compare(case: Case, folder: Path) -> tuple[list[str], set[str], int]:
    """Evaluate one case; return the mismatches (one line each), the trec measures compared and the
    number of values compared."""
    expected = parse_expected(folder / case.expected)
    qrels = eb.read_qrels(folder / case.qrels)
    run = eb.read_run(folder / case.run, extra_columns="ignore")
    specs = {m: spec for m, _ in expected if (spec := trec_to_spec(m)) is not None}
    res = eb.evaluate(qrels, run, sorted(set(specs.values())), min_relevance=case.level,
                      missing_queries="zero" if case.complete else "drop", depth=case.max_docs,
                      score_precision="float32" if case.version == "v9.0.8" else "float64")
    missing = set(res.provenance.missing_from_run)
    mismatches, n_values = [], 0
    for (measure, qid), printed in sorted(expected.items()):
        if measure == "num_q":
            if int(printed) != res.provenance.queries_evaluated:
                mismatches.append(f"num_q: trec_eval {printed}, evalbridge {res.provenance.queries_evaluated}")
            continue
        if measure not in specs or (measure in KEPT_BY_C and case.complete and missing and qid in {"all", *missing}):
            continue
        n_values += 1
        if qid == "all":
            ours = res[specs[measure]] * (res.provenance.queries_evaluated if measure in COUNTS else 1)
        else:
            ours = res.query(specs[measure]).get(qid)
        if ours is None or abs(ours - float(printed)) > TOL:
            mismatches.append(f"{measure} ({specs[measure]}) query {qid}: trec_eval {printed}, evalbridge {ours}")
    return mismatches, set(specs), n_values


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.expected}[{c.qrels}]")
def test_reference_reproduces_trec_eval_expected_output(case: Case, trec_dir: Path) -> None:
    """Every shared measure (map, P_k, recall_k, Rprec, recip_rank, ndcg, ndcg_cut_k, map_cut_k, success_k)
    matches trec_eval's printed value per topic and for ``all``."""
    mismatches, compared, n_values = compare(case, trec_dir)
    assert not mismatches, f"{len(mismatches)} values differ from {case.expected}:\n" + "\n".join(mismatches[:25])
    if ".aq" in case.expected:  # -q: per topic and all; v9.0.8 prints no lines for a topic missing with -c
        required = REQUIRED | (REQUIRED_10 if case.version == "current" else set())
        assert required <= compared, f"not compared: {required - compared}"
        assert n_values >= 43 * 3
    else:  # summary only: map, Rprec, recip_rank, bpref, P_5 .. P_1000 and the three counts
        assert {"map", "P_5", "Rprec", "recip_rank", "bpref", "num_ret", "num_rel", "num_rel_ret"} <= compared
        assert n_values == 16


def test_every_compared_trec_name_parses_to_the_mapped_spec(trec_dir: Path) -> None:
    """The trec_eval names themselves (``ndcg_cut_10``, ``P_5``, ``recip_rank``...) parse to the same metrics."""
    measures = {m for m, _ in parse_expected(trec_dir / "out.test.aq")}
    # rbp and rbp_resid parse to evalbridge's RBP family, whose p defaults to ir-measures' 0.8 (trec_eval: 0.9)
    mapped = {m: trec_to_spec(m) for m in measures - {"rbp", "rbp_resid"} if trec_to_spec(m) is not None}
    assert len(mapped) >= 40
    for measure, spec in mapped.items():
        assert parse_metric(measure) == parse_metric(spec), measure


def test_level_2_changes_binary_measures_but_not_ndcg(trec_dir: Path) -> None:
    """With -l2 map drops (fewer relevant docs) while ndcg is the level-1 value, as trec_eval prints."""
    qrels = eb.read_qrels(trec_dir / "qrels.rel_level")
    run = eb.read_run(trec_dir / "results.test")
    level1 = eb.evaluate(qrels, run, ["map", "ndcg"], missing_queries="drop")
    level2 = eb.evaluate(qrels, run, ["map", "ndcg"], min_relevance=2, missing_queries="drop")
    assert level2["ndcg"] == level1["ndcg"]
    assert level2["map"] != level1["map"]
    assert level2.metrics[0] == Metric("AP", None, {"rel": 2})
