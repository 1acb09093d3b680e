"""Every verb reads the relevance level by evaluate's own rule: the diagnosis of first-document arrays (the kernels'
direct path, no evaluate call) refuses fractional grades and ratings without a level, as evaluate does."""

from __future__ import annotations

import pytest

import evalbridge as eb
from evalbridge.errors import InputError
from evalbridge.fast.tops import from_runs

QRELS = {f"q{i}": {"d1": 7.5, "d2": 3.0, "d3": 0.0} for i in range(6)}
RUNS = {"a": {q: {"d1": 0.9, "d2": 0.5, "d3": 0.1} for q in QRELS},
        "b": {q: {"d3": 0.9, "d2": 0.5, "d1": 0.1} for q in QRELS}}


@pytest.mark.parametrize("runs", [RUNS, from_runs({n: eb.Run(r) for n, r in RUNS.items()}, 3)],
                         ids=["runs", "first-document arrays"])
def test_a_binary_metric_on_fractional_grades_without_a_level_is_refused_as_evaluate_refuses_it(runs) -> None:
    with pytest.raises(InputError) as evaluated:
        eb.evaluate(QRELS, RUNS["a"], "P@2")
    with pytest.raises(InputError) as diagnosed:
        eb.diagnose(QRELS, runs, "P@2", trials=10, n_resamples=20)
    assert "not whole numbers" in str(evaluated.value) and "not whole numbers" in str(diagnosed.value)


def test_with_a_level_the_diagnosis_uses_it_for_the_pool_bias() -> None:
    tops = from_runs({n: eb.Run(r) for n, r in RUNS.items()}, 3)
    found = eb.diagnose(QRELS, tops, "P@2", trials=10, n_resamples=20, min_relevance=5)
    assert found.pool_bias.level == 5.0
    assert found.means == pytest.approx((eb.evaluate(QRELS, RUNS["a"], "P@2", min_relevance=5)["P@2"],
                                         eb.evaluate(QRELS, RUNS["b"], "P@2", min_relevance=5)["P@2"]))


@pytest.mark.parametrize("backend, ties, threshold, direct", [
    ("auto", "docid_desc", 1, True),            # auto, every run at or above the threshold: the kernels directly
    ("auto", "docid_desc", 10**9, False),       # auto, below it: the reference over each run, as evaluate decides
    ("auto", "average", 1, False),              # a tie policy the engine does not follow: never the kernels
    ("fast", "docid_desc", 10**9, True),        # the engine asked for: the kernels whatever the size
    ("reference", "docid_desc", 1, False),      # the reference asked for: never the kernels
])
def test_the_diagnosis_of_first_document_arrays_takes_the_backend_evaluate_would_take(
        monkeypatch, backend: str, ties: str, threshold: int, direct: bool) -> None:
    """The kernels' direct path over TopLists (no Run built) is taken exactly when evaluate's own decision
    (evaluation.evaluating.backend_for: auto by the run's rows and the tie policy) gives the fast backend, and the
    numbers are the same either way."""
    from evalbridge.backends import auto
    from evalbridge.evalsets import diagnostics

    qrels = {q: {"d1": 2, "d2": 1, "d3": 0} for q in QRELS}
    tops = from_runs({n: eb.Run(r) for n, r in RUNS.items()}, 3)
    calls: list[int] = []
    kernels = diagnostics._direct_values
    monkeypatch.setattr(diagnostics, "_direct_values", lambda *a, **k: calls.append(1) or kernels(*a, **k))
    monkeypatch.setattr(auto, "THRESHOLD", threshold)
    found = eb.diagnose(qrels, tops, "P@2", trials=10, n_resamples=20, backend=backend, ties=ties)
    assert bool(calls) is direct
    monkeypatch.setattr(auto, "THRESHOLD", 15_000)
    assert found.means == eb.diagnose(qrels, RUNS, "P@2", trials=10, n_resamples=20, backend="reference").means
