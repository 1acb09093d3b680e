"""Benchmark the verbs that have no row of their own elsewhere in bench/, each against evaluating its inputs.

Usage::

    .venv/bin/python bench/verbs.py                   # 10,000 queries x depth 100, 5 systems, 5 metrics
    .venv/bin/python bench/verbs.py --queries 2000    # smaller, on a busy machine

The qrels and the five columnar runs are ``bench/diff.py``'s (``bench/data.py``, fixed seed); a second set of
judgements is the first with one grade in ten moved by one (a second judge, a re-judged pool; fixed seed). In one
process, after a warm-up call of each (first-call imports and numba's compilation are not timed), the median of
``--repeat`` calls of:

* ``evaluate``: ``eb.evaluate`` of each of the five runs: the floor, since every verb below evaluates them at least once;
* ``check_gates``: two gates (an absolute level and a non-inferiority margin against the baseline) on those results;
* ``standings``: ``eb.compare`` of the five runs (t-test, 1,000 resamples) and its standings table;
* ``what_changed``: the five runs under both judgement sets: Δ of each metric, the order's tau and tau_AP;
* ``agree``: the two judgement sets against each other (kappa, alpha, confusion) and the five runs' order under each;
* ``uncertain``: the baseline under the two judges (expected value and interval over 200 labellings);
* ``merge_judgements``: the second set merged into the first (the other's grades where they differ, preferring it);
* ``topic_set_size``: queries needed for a paired t, ANOVA and CI width, from the five runs' per-query nDCG@10.

Each row's ratio is to ``evaluate`` in the same run; peak memory growth as ``bench/run.py`` (``VmHWM`` reset,
minus the RSS before the call). Results go to ``bench/results/verbs-<date>.md``; speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import datetime
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from diff import METRICS, _strings, inputs  # noqa: E402 - bench/ is on the path
from run import machine, repeated  # noqa: E402


def second_judge(queries: int, depth: int) -> Any:
    """The qrels of ``inputs`` with one grade in ten moved by one, kept within 0-3 (seeded)."""
    from data import generate

    from evalbridge.fast.rows import build_table
    from evalbridge.model.data import Qrels

    data = generate(queries, depth, seed=0)
    grades = data.qrels_grade.astype(np.float64)
    rng = np.random.default_rng(2)
    moved = rng.random(grades.size) < 0.1
    grades[moved] = np.clip(grades[moved] + rng.choice([-1.0, 1.0], moved.sum()), 0, 3)
    return Qrels(build_table(_strings("q", data.qrels_query), _strings("d", data.qrels_doc), grades, True))


def rows(queries: int, depth: int) -> dict[str, Callable[[], Any]]:
    """Each verb's call on the same inputs (built here, not timed)."""
    import evalbridge as eb

    qrels, runs = inputs(queries, depth)
    other = second_judge(queries, depth)
    by_name = {run.name: run for run in runs}

    def evaluate() -> dict[str, Any]:
        return {name: eb.evaluate(qrels, run, METRICS) for name, run in by_name.items()}

    results = evaluate()
    gates = {"nDCG@10": [">= 0.1", ">= baseline - 0.05"]}
    statistics_ = eb.Statistics(n_resamples=1000)
    return {
        "evaluate": evaluate,
        "check_gates": lambda: eb.check_gates(gates, results, baseline="s0"),
        "standings": lambda: eb.compare(qrels, by_name, METRICS, baseline="s0", statistics=statistics_).standings(),
        "what_changed": lambda: eb.what_changed(qrels, other, by_name, METRICS, statistics=statistics_),
        "agree": lambda: eb.agree(qrels, other, by_name, METRICS, statistics=statistics_),
        "uncertain": lambda: eb.uncertain(runs[0], "nDCG@10", judges={"a": qrels, "b": other},
                                          statistics=statistics_),
        "merge_judgements": lambda: eb.merge_judgements(qrels, other, prefer="new"),
        "topic_set_size": lambda: eb.topic_set_size(results, ["nDCG@10"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import warnings

    warnings.simplefilter("ignore")
    calls = rows(args.queries, args.depth)
    measured = {name: repeated(call, args.repeat) for name, call in calls.items()}
    floor = measured["evaluate"][0]
    lines = [f"# Verbs against evaluating their inputs, {args.queries:,} queries x depth {args.depth}, 5 systems, "
             f"{len(METRICS)} metrics ({datetime.date.today()})", "", machine(), "",
             "| verb | wall (median) | / evaluate | peak RSS growth |", "|---|---|---|---|"]
    lines += [f"| {name} | {seconds * 1000:,.1f} ms | {seconds / floor:.2f} | +{peak:.0f} MiB |"
              for name, (seconds, peak) in measured.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"verbs-{datetime.date.today()}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
