"""trec_eval's own test suite (``../shared/conformance/trec_eval``) through the pytrec_eval backend.

Same cases and tolerance as ``test_reference_conformance.py`` (which runs the reference): the
expected files are trec_eval's printed values (4 decimals). pytrec_eval is checked twice: as
:func:`evalbridge.evaluate` calls it (bridged, following the case's conventions) and natively
(pytrec_eval's own float32 scores and dropping of missing topics). The native per-topic values
must match wherever trec_eval printed a topic that pytrec_eval evaluates; for ``-c`` the
``all`` line is the mean over every qrels topic, which evalbridge's zero policy supplies.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import evalbridge as eb
from evalbridge.backends import get_backend, unsupported
from test_reference_conformance import CASES, COUNTS, TOL, Case, parse_expected, top, trec_to_spec

#: the expected files the issue names (current trec_eval outputs)
NAMED = {"out.test", "out.test.aq", "out.test.aqc", "out.test.aql", "out.comment.test"}


@pytest.fixture(scope="module")
def trec_dir(shared: Path) -> Path:
    """The folder of trec_eval's test files."""
    folder = shared / "conformance" / "trec_eval"
    if not folder.is_dir():
        pytest.skip(f"../shared/conformance/trec_eval is absent: {folder} does not exist")
    return folder


def load(case: Case, folder: Path, backend: str) -> tuple[dict, eb.Qrels, eb.Run, dict[str, str]]:
    """The expected values, the inputs (``-M`` applied) and the specs of the measures ``backend`` computes."""
    expected = parse_expected(folder / case.expected)
    qrels = eb.read_qrels(folder / case.qrels)
    run = eb.read_run(folder / case.run, extra_columns="ignore")
    if case.max_docs is not None:
        run = eb.Run(top(run, case.max_docs))
    module = get_backend(backend)
    specs = {m: spec for m, _ in expected if (spec := trec_to_spec(m)) is not None
             and unsupported(module, eb.Metric.parse(spec)) is None}
    return expected, qrels, run, specs


def mismatches(expected: dict, specs: dict[str, str], per_query, mean, n_queries: int) -> list[str]:  # noqa: ANN001
    """Lines for every printed value (per topic and ``all``) the backend does not reproduce."""
    out = []
    for (measure, qid), printed in sorted(expected.items()):
        if measure not in specs:
            continue
        if qid == "all":
            ours = mean(specs[measure]) * (n_queries if measure in COUNTS else 1)
        else:
            ours = per_query(specs[measure]).get(qid)
        if ours is None or abs(ours - float(printed)) > TOL:
            out.append(f"{measure} query {qid}: trec_eval {printed}, backend {ours}")
    return out


CURRENT = [c for c in CASES if c.version == "current" and c.expected in NAMED]


@pytest.mark.parametrize("case", CURRENT, ids=lambda c: f"{c.expected}[{c.qrels}]")
def test_pytrec_eval_backend_reproduces_trec_eval_expected_output(case: Case, trec_dir: Path) -> None:
    """evaluate(backend='pytrec_eval') matches every shared measure trec_eval printed, per topic and 'all'."""
    expected, qrels, run, specs = load(case, trec_dir, "pytrec_eval")
    res = eb.evaluate(qrels, run, sorted(set(specs.values())), backend="pytrec_eval", min_relevance=case.level,
                      missing_queries="zero" if case.complete else "drop")
    bad = mismatches(expected, specs, res.query, res.__getitem__, res.provenance.queries_evaluated)
    assert not bad, f"{len(bad)} values differ from {case.expected}:\n" + "\n".join(bad[:20])
    assert {"map", "P_5", "Rprec", "recip_rank", "bpref", "num_rel_ret"} <= set(specs)
    if ".aq" in case.expected:
        assert {"infAP", "set_F", "set_P", "set_recall", "num_ret"} <= set(specs)


@pytest.mark.parametrize("case", CURRENT, ids=lambda c: f"{c.expected}[{c.qrels}]")
def test_native_pytrec_eval_reproduces_trec_eval_per_topic(case: Case, trec_dir: Path) -> None:
    """pytrec_eval on its own (float32, missing topics dropped) gives trec_eval's per-topic values."""
    expected, qrels, run, specs = load(case, trec_dir, "pytrec_eval")
    module = get_backend("pytrec_eval")
    wanted = {spec: eb.Metric.parse(spec) for spec in set(specs.values())}
    resolved = {s: m.replace(rel=case.level) if m.info.binary and case.level != 1 else m for s, m in wanted.items()}
    values, _ = module.compute(qrels, run, list(resolved.values()), native=True)
    per_topic = {(m, q): v for (m, q), v in expected.items() if q != "all" and m in specs}
    dropped = {q for q in qrels if q not in run}
    # the run of -c holds no line for a missing topic: the native call drops it whatever the measure
    bad = [f"{m} query {q}: trec_eval {v}, pytrec_eval {values[resolved[specs[m]]].get(q)}"
           for (m, q), v in sorted(per_topic.items()) if q not in dropped
           and abs(values[resolved[specs[m]]][q] - float(v)) > TOL]
    assert not bad, "\n".join(bad[:20])
    assert all(q not in per_query for per_query in values.values() for q in dropped)


@pytest.mark.parametrize("case", [c for c in CURRENT if c.expected in ("out.test.aq", "out.test.aqc")],
                         ids=lambda c: c.expected)
def test_ir_measures_backend_reproduces_trec_eval_expected_output(case: Case, trec_dir: Path) -> None:
    """evaluate(backend='ir_measures') matches trec_eval too (its RR@k goes through the msmarco provider)."""
    expected, qrels, run, specs = load(case, trec_dir, "ir_measures")
    res = eb.evaluate(qrels, run, sorted(set(specs.values())), backend="ir_measures", min_relevance=case.level,
                      missing_queries="zero" if case.complete else "drop")
    bad = mismatches(expected, specs, res.query, res.__getitem__, res.provenance.queries_evaluated)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.slow
def test_ranx_backend_reproduces_trec_eval_with_level_2(trec_dir: Path) -> None:
    """ranx (bridged) matches out.test.aql (-l2), including nDCG, which trec_eval computes without the level."""
    case = next(c for c in CURRENT if c.expected == "out.test.aql")
    expected, qrels, run, specs = load(case, trec_dir, "ranx")
    res = eb.evaluate(qrels, run, sorted(set(specs.values())), backend="ranx", min_relevance=2,
                      missing_queries="drop")
    bad = mismatches(expected, specs, res.query, res.__getitem__, res.provenance.queries_evaluated)
    assert not bad, "\n".join(bad[:20])


def test_conformance_crosscheck_is_ok_for_the_comment_file(trec_dir: Path) -> None:
    """TREC 2024 RAG qrels (doc ids with '#'): pytrec_eval and ir_measures agree with the reference or explain why."""
    qrels = eb.read_qrels(trec_dir / "qrels.comment.test")
    run = eb.read_run(trec_dir / "results.comment.test")
    check = eb.crosscheck(qrels, run, ["nDCG@10", "AP", "P@5", "RR", "R@100"], backends=["pytrec_eval", "ir_measures"])
    assert check.ok, check.to_markdown()
    assert int(check.agreement.queries.min()) == 31
