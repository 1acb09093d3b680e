"""The backend contract (:mod:`evalbridge.backends.base`): every registered backend declares it, and a new
backend is one module plus one registry line, then used by evaluate, crosscheck and the capability matrix."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.backends import BACKENDS, available, get_backend, unsupported
from evalbridge.backends.base import Backend, Capabilities, Fault, NativeConventions
from evalbridge.errors import UnsupportedMetricError
from evalbridge.metrics.catalogue import METRICS
from evalbridge.metrics.spec import Metric, parse_metric
from evalbridge.model.data import Qrels, Run
from evalbridge.model.settings import ORDERED_TIES, Settings, TIE_POLICIES
from strategies import metrics, qrels_and_run


@pytest.mark.parametrize("name", list(BACKENDS))
def test_every_registered_backend_declares_the_whole_contract(name: str) -> None:
    """Each registry line leads to a Backend of that name with every member declared: capabilities as a
    Capabilities value, tie policies among the known ones, conventions of its own or None, known faults
    the cross-check can emulate, and a compute that takes the native keyword."""
    backend = get_backend(name)
    assert isinstance(backend, Backend) and backend.name == name
    assert isinstance(backend.capabilities, Capabilities)
    assert set(ORDERED_TIES) <= set(backend.ties) <= set(TIE_POLICIES)
    assert backend.conventions is None or isinstance(backend.conventions, NativeConventions)
    assert backend.library is None or isinstance(backend.library, str)
    assert set(backend.known_faults) <= set(METRICS)
    assert all(isinstance(fault, Fault) for faults in backend.known_faults.values() for fault in faults)
    assert backend.bridged_grades in ("int", "truncate", "float")
    parameters = inspect.signature(backend.compute).parameters
    assert list(parameters)[:4] == ["qrels", "run", "metrics", "conventions"]
    assert parameters["native"].kind is inspect.Parameter.KEYWORD_ONLY
    if available()[name]:
        assert isinstance(backend.version(), str) and backend.version()


def test_backends_with_conventions_of_their_own_are_the_libraries() -> None:
    """The reference, the engine and auto follow the conventions they are given (None); the libraries declare theirs."""
    own = {name for name in BACKENDS if get_backend(name).conventions is not None}
    assert own == {"ranx", "ir_measures", "pytrec_eval"}
    assert {name for name in BACKENDS if get_backend(name).capabilities.everything} == {"reference", "fast", "auto"}


@settings(max_examples=60, deadline=None)
@given(metric=metrics(gains=True))
def test_an_empty_capability_table_supports_nothing(metric: Metric) -> None:
    """Capabilities() refuses every metric, with a reason naming the backend; Capabilities.every() takes every one."""
    reason = Capabilities().problem("toy", metric)
    assert reason is not None and "toy" in reason
    assert Capabilities.every().problem("toy", metric) is None


def test_capabilities_for_every_metric_take_no_table() -> None:
    """'everything' with a table would be two answers to one question: refused when declared."""
    with pytest.raises(ValueError, match="no table"):
        Capabilities({"P": {}}, everything=True)


def test_a_backend_must_declare_capabilities_as_data() -> None:
    """A plain dict (which once meant 'everything' when empty) is refused at declaration."""
    with pytest.raises(TypeError, match="Capabilities"):
        Backend(name="bad", version=lambda: "0", library=None, conventions=None, capabilities={},  # type: ignore[arg-type]
                ties=ORDERED_TIES, compute=_toy_compute)


def test_the_crosscheck_default_libraries_are_one_constant_for_every_door() -> None:
    """Python, the command line and config files compare with the same libraries, in the same order."""
    from evalbridge.backends import CROSSCHECK_BACKENDS
    from evalbridge.cli import build_parser
    from evalbridge.config.layout import CrossCheckSettings

    python = inspect.signature(eb.crosscheck).parameters["backends"].default
    command_line = build_parser().parse_args(["check", "q", "r", "-m", "P@5"]).backends
    assert tuple(python) == tuple(command_line) == CrossCheckSettings().backends == CROSSCHECK_BACKENDS


# --- a new backend: this module, and one registry line --------------------------------------------------

def _toy_compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = Settings(), *,
                 native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """P@k written out here: documents by score, ties by doc id descending (trec_eval's order)."""
    values: dict[Metric, dict[str, float]] = {m: {} for m in metrics}
    for qid, grades in qrels.items():
        scores = run.get(qid)
        if scores is None:
            continue
        ranking = sorted(scores, key=lambda doc: (scores[doc], doc), reverse=True)
        for metric in metrics:
            rel = metric.get("rel") if metric.get("rel") is not None else 1
            top = ranking[:metric.k]
            values[metric][qid] = sum(grades.get(doc, 0) >= rel for doc in top) / metric.k
    return values, ["toy: precision counted by hand"]


BACKEND = Backend(name="toy", version=lambda: "0.1", library=None, conventions=NativeConventions(),
                  capabilities=Capabilities({"P": {"rel": "positive"}}, {"nDCG": "toy counts hits only."}),
                  ties=("docid_desc",), compute=_toy_compute)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> str:
    """The one registry line: name -> the module declaring BACKEND (this one)."""
    monkeypatch.setitem(BACKENDS, "toy", __name__)
    return "toy"


@settings(max_examples=40, deadline=None)
@given(data=qrels_and_run(max_queries=4, ties=True, missing=True), k=st.integers(1, 6), rel=st.sampled_from([1, 2]))
def test_a_backend_registered_in_one_line_is_used_by_evaluate(data: tuple[dict, dict], k: int, rel: int) -> None:
    """evaluate(backend='toy') calls the toy's compute (its note is in the provenance) and gives the reference's P@k."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(BACKENDS, "toy", __name__)
        qrels, run = data
        spec = f"P(rel={rel})@{k}"
        got = eb.evaluate(qrels, run, spec, backend="toy")
        assert got.provenance.backend == "toy" and got.provenance.backend_version == "0.1"
        assert "toy: precision counted by hand" in got.provenance.bridges
        assert got.query(spec) == eb.evaluate(qrels, run, spec, backend="reference").query(spec)


def test_a_registered_backend_refuses_what_its_table_does_not_list(toy: str) -> None:
    """Its capability table is read: nDCG is refused with the toy's own reason, before any computing."""
    assert unsupported(get_backend(toy), parse_metric("nDCG@10")) == "toy counts hits only."
    assert "toy has no" in unsupported(get_backend(toy), parse_metric("AP"))
    with pytest.raises(UnsupportedMetricError, match="toy counts hits only"):
        eb.evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, "nDCG@10", backend=toy)


def test_a_registered_backend_is_cross_checked_and_listed(toy: str) -> None:
    """crosscheck(backends=['toy']) compares the toy per query (agreeing on P@k), lists what it cannot compute,
    and `evalbridge metrics` shows it as a column."""
    from evalbridge.cli.metrics import metric_capabilities

    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 1}}
    run = {"q1": {"a": 2.0, "b": 1.0, "x": 3.0}, "q2": {"c": 1.0, "d": 1.0}}
    check = eb.crosscheck(qrels, run, ["P@2", "nDCG@3"], backends=[toy])
    assert check.ok and check.differences.empty
    assert check.agreement.to_dict("records") == [
        {"backend": "toy", "metric": "P@2", "queries": 2, "agree": 2, "explained": 0, "unexplained": 0}]
    assert check.unsupported == {("toy", "nDCG@3"): "toy counts hits only."}
    assert check.bridges["toy"] == ("toy: precision counted by hand",)
    matrix = metric_capabilities()
    assert matrix["backends"]["toy"] is True
    assert matrix["matrix"]["P@10"]["toy"] is None and matrix["matrix"]["nDCG@10"]["toy"] is not None


# --- a backend's known faults: declared in its own module, verified by the cross-check --------------------

def _grade_one_as_zero(grades: dict[str, float]) -> dict[str, float]:
    return {d: 0 if g == 1 else g for d, g in grades.items()}


#: The toy's fault: it takes grade-1 judgements for non-relevant, which the reference emulates by re-running
#: with those grades set to 0.
GRADE_ONE_IGNORED = Fault("toy_grade_one", "known library fault: toy takes grade 1 for non-relevant",
                          applies=lambda qrels, qid, metric, truncate: 1 in qrels.get(qid, {}).values(),
                          qrels=_grade_one_as_zero)


def _faulty_compute(qrels: Qrels, run: Run, metrics: Sequence[Metric], conventions: Settings = Settings(), *,
                    native: bool = False) -> tuple[dict[Metric, dict[str, float]], list[str]]:
    """The toy's P@k over qrels whose grade-1 judgements it reads as 0 (the fault it declares)."""
    faulty = Qrels({q: _grade_one_as_zero(dict(grades)) for q, grades in qrels.items()})
    return _toy_compute(faulty, run, metrics, conventions, native=native)


def test_a_fault_declared_beside_the_backend_explains_the_differences_it_causes(
        toy: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend with a known fault is still its module and one registry line: the Fault in its known_faults is
    what the cross-check re-runs the reference with, and the difference it reproduces is explained by its cause."""
    import sys

    plain = BACKEND
    monkeypatch.setattr(sys.modules[__name__], "BACKEND",
                        replace(plain, compute=_faulty_compute, known_faults={"P": (GRADE_ONE_IGNORED,)}))
    qrels = {"q1": {"a": 1, "b": 2}, "q2": {"c": 2}}
    run = {"q1": {"a": 2.0, "b": 1.0, "x": 3.0}, "q2": {"c": 1.0, "d": 1.0}}
    check = eb.crosscheck(qrels, run, ["P@2"], backends=[toy])
    assert check.ok
    assert check.differences[["query_id", "reference", "value", "cause"]].to_dict("records") == [
        {"query_id": "q1", "reference": 0.5, "value": 0.0, "cause": "known library fault: toy takes grade 1 for "
                                                                    "non-relevant"}]
    monkeypatch.setattr(sys.modules[__name__], "BACKEND", replace(plain, compute=_faulty_compute))
    undeclared = eb.crosscheck(qrels, run, ["P@2"], backends=[toy])
    assert not undeclared.ok and undeclared.unexplained["cause"].tolist() == ["unexplained"]
