"""Every measure name trec_eval prints, against trec_eval's own expected outputs (``../shared/conformance/trec_eval``).

The inputs and expected outputs were copied unchanged from usnistgov/trec_eval's ``test/``
folder (see ``conformance/README.md``); the command line of each expected file is in the
table below. trec_eval prints ``measure<TAB>qid<TAB>value`` with 4 decimals, so a value
agrees when it is within 5e-5 of the printed one. Without ``-c`` trec_eval evaluates only
the topics in both qrels and run (``missing_queries="drop"``); with ``-c`` a missing topic
is scored as a topic that retrieved nothing (``"zero"``: 0, and R for ``num_rel``). ``-l2`` is
the relevance level of the binary measures; nDCG and rbp ignore it. ``-M100`` is ``depth=100``.
The counts (``num_ret``, ``num_rel``, ``num_rel_ret``) print their sum over topics on the ``all``
line, evalbridge's mean times the number of topics.

A trec_eval name given to evalbridge means trec_eval's measure: each name printed in any expected
file, evaluated under that very name, equals every value trec_eval printed for it, or is refused
with ``UnsupportedMetricError`` and its reason (``evalbridge.metrics.catalogue.TREC_UNSUPPORTED``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge import Metric, UnsupportedMetricError
from evalbridge.metrics.spec import parse_metric
from strategies import ranked_from_scores

#: counts: trec_eval's ``all`` line is their sum
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}

#: every measure the brief asks for must be compared in the -q files
REQUIRED = {"map", "P_5", "P_10", "recall_100", "Rprec", "recip_rank", "ndcg", "ndcg_cut_10", "map_cut_10",
            "success_1", "success_5", "success_10", "bpref", "infAP", "num_ret", "num_rel", "num_rel_ret", "set_P",
            "set_recall", "set_F", "relative_P_10"}
#: measures of trec_eval 10 only (not in the v9.0.8 outputs)
REQUIRED_10 = {"rbp", "rbp_resid"}

TOL = 5e-5 + 1e-9  # half a unit of the 4th decimal, plus float noise


def refusal(measure: str) -> str | None:
    """Why evalbridge refuses the trec_eval measure name (``UnsupportedMetricError``), or None when it computes it."""
    try:
        parse_metric(measure)
    except UnsupportedMetricError as error:
        return str(error)
    return None


def trec_to_spec(measure: str) -> str | None:
    """The evalbridge metric a trec_eval measure name means (its canonical spelling), or None when refused."""
    return None if refusal(measure) is not None else str(parse_metric(measure))


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
    Case("out.test.a", "qrels.test", "results.test"),
    Case("out.test.aq", "qrels.test", "results.test"),
    Case("out.test.aql", "qrels.rel_level", "results.test", level=2),
    Case("out.test.aqc", "qrels.test", "results.trunc", complete=True),
    Case("out.test.aqcM", "qrels.test", "results.trunc", complete=True, max_docs=100),
    Case("out.test.meas_params", "qrels.test", "results.test"),
    Case("out.comment.test", "qrels.comment.test", "results.comment.test"),
    Case("v9.0.8/out.test", "qrels.test", "results.test", version="v9.0.8"),
    Case("v9.0.8/out.test.a", "qrels.test", "results.test", version="v9.0.8"),
    Case("v9.0.8/out.test.aq", "qrels.test", "results.test", version="v9.0.8"),
    Case("v9.0.8/out.test.aql", "qrels.rel_level", "results.test", level=2, version="v9.0.8"),
    Case("v9.0.8/out.test.aqc", "qrels.test", "results.trunc", complete=True, version="v9.0.8"),
    Case("v9.0.8/out.test.aqcM", "qrels.test", "results.trunc", complete=True, max_docs=100, version="v9.0.8"),
    Case("v9.0.8/out.test.meas_params", "qrels.test", "results.test", version="v9.0.8"),
]

#: expected files whose every measure evalbridge refuses (-Z z-scores, -R prefs / qrels_prefs / qrels_jg): their
#: names are checked for a refusal with a reason, with no input read
REFUSED_FILES = ["out.test.aqZ", "v9.0.8/out.test.aqZ", "out.test.prefs", "out.test.qrels_prefs", "out.test.qrels_jg"]


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
    """Evaluate one case, each trec_eval measure name under its own spelling; return the mismatches (one
    line each), the names compared and the number of values compared. A refused name is checked by
    :func:`test_every_trec_eval_name_is_computed_or_refused_with_a_reason`."""
    expected = parse_expected(folder / case.expected)
    qrels = eb.read_qrels(folder / case.qrels)
    run = eb.read_run(folder / case.run, extra_columns="ignore")
    names = sorted({m for m, _ in expected if refusal(m) is None})
    res = eb.evaluate(qrels, run, names, min_relevance=case.level,
                      missing_queries="zero" if case.complete else "drop", depth=case.max_docs,
                      score_precision="float32" if case.version == "v9.0.8" else "float64")
    mismatches, n_values = [], 0
    for (measure, qid), printed in sorted(expected.items()):
        if measure not in names:
            continue
        n_values += 1
        if qid == "all":
            ours = res[measure] * (res.provenance.queries_evaluated if measure in COUNTS else 1)
        else:
            ours = res.query(measure).get(qid)
        if ours is None or abs(ours - float(printed)) > TOL:
            mismatches.append(f"{measure} ({parse_metric(measure)}) query {qid}: trec_eval {printed}, evalbridge {ours}")
    return mismatches, set(names), n_values


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.expected}[{c.qrels}]")
def test_reference_reproduces_trec_eval_expected_output(case: Case, trec_dir: Path) -> None:
    """Every trec_eval measure name evalbridge computes (map, P_k, recall_k, Rprec, recip_rank, ndcg, ndcg_cut_k,
    map_cut_k, success_k, rbp, rbp_resid, relative_P_k, num_rel with -c...), asked by that name, matches trec_eval's
    printed value per topic and for ``all``."""
    mismatches, compared, n_values = compare(case, trec_dir)
    assert not mismatches, f"{len(mismatches)} values differ from {case.expected}:\n" + "\n".join(mismatches[:25])
    if ".aq" in case.expected:  # -q: per topic and all; v9.0.8 prints no lines for a topic missing with -c
        required = REQUIRED | (REQUIRED_10 if case.version == "current" else set())
        assert required <= compared, f"not compared: {required - compared}"
        assert n_values >= 52 * 3
    elif case.expected.endswith("meas_params"):  # P_3, recall_2000, ndcg_cut_23, success_2, ndcg_1=3,2=9,4=4.5...
        assert {"P_3", "P_7", "recall_2000", "ndcg_cut_23", "success_2", "ndcg_1=3,2=9,4=4.5"} <= compared
    else:  # summary only: map, Rprec, recip_rank, bpref, P_5 .. P_1000 and the three counts
        assert {"map", "P_5", "Rprec", "recip_rank", "bpref", "num_ret", "num_rel", "num_rel_ret"} <= compared
        assert n_values == len(compared) >= 16


@pytest.mark.parametrize("expected", [c.expected for c in CASES] + REFUSED_FILES)
def test_every_trec_eval_name_is_computed_or_refused_with_a_reason(expected: str, trec_dir: Path) -> None:
    """Each measure name of the file either means an evalbridge metric (compared value by value above) or is
    refused by every door with ``UnsupportedMetricError`` and a reason naming it: never a different number."""
    names = {m for m, _ in parse_expected(trec_dir / expected)}
    refused = {name: reason for name in names if (reason := refusal(name)) is not None}
    for name, reason in refused.items():
        assert reason.startswith(f"{name!r}: ") and len(reason) > len(name) + 40, reason
        with pytest.raises(UnsupportedMetricError, match=re.escape(name)):
            eb.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, [name])
    assert {"runid", "num_q"} & names <= set(refused)  # a tag and a count of topics, not measures
    if expected in REFUSED_FILES:
        assert set(refused) == names
    elif ".aq" in expected or expected.endswith(".a"):
        computed = names - set(refused)
        assert len(computed) >= 50 and {"gm_map", "iprec_at_recall_0.10", "11pt_avg", "utility"} <= set(refused)


def test_trec_eval_names_are_case_sensitive_where_a_peer_spells_them_otherwise() -> None:
    """``rbp`` is trec_eval 10's graded RBP (p = 0.9, -l ignored), ``RBP`` ir-measures' binary one (p = 0.8)."""
    assert parse_metric("rbp") == Metric("RBP", None, {"p": 0.9, "weights": "graded", "rel": 1})
    assert parse_metric("RBP") == Metric("RBP")
    assert parse_metric("rbp_resid") == Metric("RBP_resid", None, {"p": 0.9})
    assert parse_metric("RBP_resid") == Metric("RBP_resid")
    res = eb.evaluate({"q": {"a": 2, "b": 1}}, {"q": {"a": 2.0, "b": 1.0}}, ["rbp", "RBP"], min_relevance=2)
    assert res["rbp"] == pytest.approx(0.1 * (1 + 0.9 * 0.5))  # graded weights 2/2 and 1/2, level 2 ignored
    assert res["RBP"] == pytest.approx(0.2)  # binary at level 2: only "a"


def test_num_rel_of_a_query_missing_from_the_run_is_its_judgements_count() -> None:
    """trec_eval -c: a qrels query the run lacks is scored as one that retrieved nothing; num_rel stays R."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 1, "c": 2, "d": 0}}
    res = eb.evaluate(qrels, {"q1": {"a": 1.0}}, ["num_rel", "NumRel(rel=2)", "AP", "num_ret"])
    assert res.query("num_rel") == {"q1": 1.0, "q2": 2.0}
    assert res.query("NumRel(rel=2)")["q2"] == 1.0
    assert res.query("AP")["q2"] == res.query("num_ret")["q2"] == 0.0


def test_every_compared_trec_name_parses_to_the_mapped_spec(trec_dir: Path) -> None:
    """The trec_eval names themselves (``ndcg_cut_10``, ``P_5``, ``recip_rank``, ``rbp``...) mean metrics of evalbridge's
    catalogue, whose canonical spelling parses back to the same metric."""
    measures = {m for m, _ in parse_expected(trec_dir / "out.test.aq")}
    mapped = {m: spec for m in measures if (spec := trec_to_spec(m)) is not None}
    assert len(mapped) >= 52
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


@pytest.mark.parametrize("qrels_name, level", [("qrels.test", 1), ("qrels.rel_level", 2)])
def test_judged_only_matches_trec_eval_9_with_minus_J(trec_dir: Path, qrels_name: str, level: int) -> None:
    """trec_eval's test suite has no ``-J`` output: trec_eval 9's own code inside pytrec_eval (judged_docs_only_flag)
    is the oracle. Every name of ``v9.0.8/out.test.aq`` evalbridge computes, asked by that name with
    ``judged_only=True``, equals trec_eval 9's ``-J`` value per topic (scores as C floats, as trec_eval 9)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    names = sorted({m for m, _ in parse_expected(trec_dir / "v9.0.8/out.test.aq") if refusal(m) is None})
    qrels = eb.read_qrels(trec_dir / qrels_name)
    run = eb.read_run(trec_dir / "results.test")
    families = {re.sub(r"_\d+$", "", name) for name in names}
    evaluator = pytrec_eval.RelevanceEvaluator({q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()},
                                               families, relevance_level=level, judged_docs_only_flag=True)
    want = evaluator.evaluate({q: dict(docs) for q, docs in run.items()})
    res = eb.evaluate(qrels, run, names, judged_only=True, min_relevance=level, missing_queries="drop",
                      score_precision="float32")
    assert res.provenance.removed_unjudged > 0
    compared = [(name, qid) for qid in want for name in names if name in want[qid]]
    bad = [f"{name} query {qid}: trec_eval 9 -J {want[qid][name]}, evalbridge {res.query(name)[qid]}"
           for name, qid in compared if abs(want[qid][name] - res.query(name)[qid]) > 1e-9]
    assert not bad, "\n".join(bad[:20])
    assert len({name for name, _ in compared}) >= 50
