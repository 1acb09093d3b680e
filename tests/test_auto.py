"""``backend="auto"`` chooses from the input size only: one threshold, whatever is imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evalbridge as eb
from evalbridge.backends import auto


def _of_rows(n: int) -> tuple[eb.Qrels, eb.Run]:
    """A pair whose run has exactly ``n`` rows (100 per query, the last query shorter)."""
    run = {f"q{i // 100}": {} for i in range(n)}
    for i in range(n):
        run[f"q{i // 100}"][f"d{i % 100}"] = 1.0 / (1 + i % 100)
    return eb.Qrels({q: {"d0": 1} for q in run}), eb.Run(run)


@pytest.mark.parametrize("rows, backend", [(1, "reference"), (auto.THRESHOLD - 1, "reference"),
                                           (auto.THRESHOLD, "fast"), (auto.THRESHOLD + 1, "fast")])
def test_the_threshold_splits_reference_and_fast(rows: int, backend: str) -> None:
    """Below THRESHOLD run rows the reference is chosen, from THRESHOLD on the fast backend."""
    assert auto.choose(*_of_rows(rows)) == backend


@given(st.sampled_from([1, 10, auto.THRESHOLD - 1, auto.THRESHOLD, 3 * auto.THRESHOLD]))
def test_the_choice_does_not_depend_on_what_is_imported(rows: int) -> None:
    """The same input gets the same backend with numpy (and the engine) in sys.modules or not."""
    qrels, run = _of_rows(rows)
    with_numpy = auto.choose(qrels, run)
    saved = {name: sys.modules.pop(name) for name in list(sys.modules)
             if name == "numpy" or name.startswith(("numpy.", "evalbridge.fast"))}
    try:
        without = auto.choose(qrels, run)
    finally:
        sys.modules.update(saved)
    assert with_numpy == without == ("fast" if rows >= auto.THRESHOLD else "reference")


PROBE = """
import json, sys
import evalbridge as eb
from evalbridge.backends import auto
sizes = {sizes!r}
pairs = {{n: ({{"q": {{"d0": 1}}}}, {{"q": {{f"d{{i}}": float(-i) for i in range(n)}}}}) for n in sizes}}
cold = {{n: eb.evaluate(*pairs[n], "P@1").provenance.backend for n in sizes}}
numpy_before = "numpy" in sys.modules
import numpy, evalbridge.fast  # noqa: F401 - what a warm process holds
warm = {{n: eb.evaluate(*pairs[n], "P@1").provenance.backend for n in sizes}}
print(json.dumps({{"cold": cold, "warm": warm, "numpy_before": numpy_before}}))
"""


def test_a_fresh_process_and_a_warm_one_record_the_same_backend() -> None:
    """In a fresh interpreter, before and after numpy and the engine are imported, evaluate records the same
    backend for the same input (the provenance no longer depends on the process's history)."""
    sizes = [10, auto.THRESHOLD - 1, auto.THRESHOLD]
    done = subprocess.run([sys.executable, "-c", PROBE.format(sizes=sizes)], capture_output=True, text=True,
                          check=True, timeout=120)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["cold"] == got["warm"] == {str(sizes[0]): "reference", str(sizes[1]): "reference",
                                          str(sizes[2]): "fast"}
    assert got["numpy_before"] is True  # the largest input was evaluated by the engine first


@pytest.mark.parametrize("rows, depth, backend", [(10, None, "reference"), (auto.THRESHOLD, None, "fast"),
                                                  (auto.THRESHOLD + 100, 50, "reference")])
def test_evaluate_and_crosscheck_decide_auto_on_the_same_cut_run(rows: int, depth: int | None, backend: str) -> None:
    """Both verbs prepare through one function: auto picks the same backend, from the run as cut by depth (100
    documents per query cut to 50 bring a run above the threshold below it), and the metrics as resolved and the
    reference values are the same."""
    qrels, run = _of_rows(rows)
    specs = {"p": "P@5", "err": "ERR@10"}
    results = eb.evaluate(qrels, run, specs, depth=depth)
    check = eb.crosscheck(qrels, run, specs, backends=[], depth=depth)
    assert results.provenance.backend == check.reference_backend == backend
    assert [r.metric for r in results.requests] == [r.metric for r in check.names]
    assert results.query("err") == check.query("err") and results.query("p") == check.query("p")
