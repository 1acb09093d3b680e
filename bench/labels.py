"""Benchmark the judges' report card, the stratified pool's sample and xinfAP / infNDCG, each against its floor and peer.

Usage::

    .venv/bin/python bench/labels.py                  # 2,000 queries x depth 100, 5 systems, 5 judges
    .venv/bin/python bench/labels.py --queries 500    # smaller, on a busy machine

The qrels and the five columnar runs are ``bench/diff.py``'s (``bench/data.py``, fixed seed); five judges are the
qrels with one grade in ten moved by one (each its own fixed seed). CPU seconds of this process
(``time.process_time``) and of the child processes (``RUSAGE_CHILDREN``: NIST's Perl script), the median of
``--repeat`` calls after a warm-up call (first-call imports and numba's compilation are not timed), so a shared
machine's load moves the times less than wall time; each row's ratio is to its floor in the same run:

* ``judges`` (five judges, five runs, five metrics, t-test flips) against its floor, the 30 evaluations it needs
  (the five runs under the humans and under each judge), and scikit-learn's ``cohen_kappa_score`` (plain and
  quadratic) and ``confusion_matrix`` of the same pairs, the peer of its label agreement;
* ``pool(strata=)`` (strata 1-10 at 1, 11-50 at 0.2, 51-100 at 0.05, seeded) against ``pool(depth=[10, 50, 100])``
  of the same runs, the floor: what drawing the sample costs;
* ``xinfAP`` + ``infNDCG`` of the five runs on that sample (fast backend) against ``AP`` + ``nDCG`` of them on the
  same qrels (the floor: the same input read, no strata), and NIST's ``sample_eval.pl`` on the same sample and runs
  against evalbridge's estimates (the peer, when ``../shared/conformance/sample_eval/sample_eval.pl`` and ``perl``
  are there; its ratio is to ``xinfAP`` + ``infNDCG``).

Results go to ``bench/results/labels-<date>.md``; speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import datetime
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from diff import METRICS, _strings, inputs  # noqa: E402 - bench/ is on the path
from run import machine  # noqa: E402

SAMPLE_EVAL = HERE.parents[1] / "shared" / "conformance" / "sample_eval" / "sample_eval.pl"
STRATA = {"1-10": 1.0, "11-50": 0.2, "51-100": 0.05}
JUDGES = 5


def judge(queries: int, depth: int, seed: int) -> Any:
    """The qrels of ``inputs`` with one grade in ten moved by one, kept within 0-3 (``seed``)."""
    from data import generate

    from evalbridge.fast.rows import build_table
    from evalbridge.model.data import Qrels

    data = generate(queries, depth, seed=0)
    grades = data.qrels_grade.astype(np.float64)
    rng = np.random.default_rng(seed)
    moved = rng.random(grades.size) < 0.1
    grades[moved] = np.clip(grades[moved] + rng.choice([-1.0, 1.0], moved.sum()), 0, 3)
    return Qrels(build_table(_strings("q", data.qrels_query), _strings("d", data.qrels_doc), grades, True))


def cpu() -> float:
    """CPU seconds of this process and its finished children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def measure(call: Callable[[], Any], repeat: int) -> float:
    """Median CPU seconds of ``repeat`` calls after one warm-up call."""
    call()
    times = []
    for _ in range(repeat):
        start = cpu()
        call()
        times.append(cpu() - start)
    return statistics.median(times)


def sample_qrels(found: Any, qrels: Any) -> Any:
    """The stratified pool's sample graded from ``qrels`` (a pair they do not judge: 0), as qrels with strata."""
    import evalbridge as eb

    grades: dict[str, dict[str, float]] = {}
    strata: dict[str, dict[str, str]] = {}
    for qid, doc, stratum, _, sampled in found.sample():
        grades.setdefault(qid, {})[doc] = qrels.get(qid, {}).get(doc, 0) if sampled else -1
        strata.setdefault(qid, {})[doc] = stratum
    return eb.Qrels(grades, strata=strata)


def rows(queries: int, depth: int, folder: Path) -> dict[str, tuple[Callable[[], Any], str]]:
    """Each row's call (and the name of its floor) on the same inputs, built here, not timed."""
    import evalbridge as eb
    from sklearn.metrics import cohen_kappa_score, confusion_matrix

    qrels, runs = inputs(queries, depth)
    by_name = {run.name: run for run in runs}
    labels = {f"j{i}": judge(queries, depth, seed=10 + i) for i in range(JUDGES)}
    pairs = [(q, d) for q in qrels for d in qrels[q]]
    human = np.asarray([qrels[q][d] for q, d in pairs]).astype(int)
    given = {name: np.asarray([j[q][d] for q, d in pairs]).astype(int) for name, j in labels.items()}

    def evaluations() -> None:
        for judgements in (qrels, *labels.values()):
            for run in runs:
                eb.evaluate(judgements, run, METRICS)

    def sklearn() -> None:
        for grades in given.values():
            cohen_kappa_score(human, grades)
            cohen_kappa_score(human, grades, weights="quadratic")
            confusion_matrix(human, grades)

    found = eb.pool(None, by_name, strata=STRATA, queries="runs", seed=1)
    sample = sample_qrels(found, qrels)
    calls: dict[str, tuple[Callable[[], Any], str]] = {
        "evaluations (6 x 5 runs)": (evaluations, ""),
        "judges (5 judges, 5 runs)": (lambda: eb.judges(qrels, labels, by_name, METRICS), "evaluations (6 x 5 runs)"),
        "scikit-learn kappas + confusion (5 judges)": (sklearn, "evaluations (6 x 5 runs)"),
        "pool(depth=[10, 50, 100])": (lambda: eb.pool(None, by_name, depth=[10, 50, 100], queries="runs"), ""),
        "pool(strata=...)": (lambda: eb.pool(None, by_name, strata=STRATA, queries="runs", seed=1),
                             "pool(depth=[10, 50, 100])"),
        "AP + nDCG (5 runs, sample)": (lambda: [eb.evaluate(sample, run, ["AP", "nDCG"], backend="fast")
                                                for run in runs], ""),
        "xinfAP + infNDCG (5 runs, sample)": (lambda: [eb.evaluate(sample, run, ["xinfAP", "infNDCG"],
                                                                   backend="fast") for run in runs],
                                              "AP + nDCG (5 runs, sample)"),
    }
    if SAMPLE_EVAL.is_file() and shutil.which("perl"):
        sample_path = eb.write(sample, folder / "sample.qrels", format="sample_eval")
        run_paths = [eb.write(run, folder / f"{run.name}.run", format="trec") for run in runs]

        def perl() -> None:
            for path in run_paths:
                subprocess.run(["perl", str(SAMPLE_EVAL), str(sample_path), str(path)], check=True,
                               stdout=subprocess.DEVNULL)

        calls["sample_eval.pl (5 runs, sample)"] = (perl, "xinfAP + infNDCG (5 runs, sample)")
    return calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    import warnings

    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as folder:
        calls = rows(args.queries, args.depth, Path(folder))
        measured = {name: measure(call, args.repeat) for name, (call, _) in calls.items()}
    lines = [f"# Labels: judges, stratified pools, xinfAP / infNDCG, {args.queries:,} queries x depth {args.depth}, "
             f"5 systems ({datetime.date.today()})", "", machine(), "",
             "| row | CPU (median) | floor | / floor |", "|---|---|---|---|"]
    for name, (_, floor) in calls.items():
        ratio = f"{measured[name] / measured[floor]:.2f}" if floor else "1 (floor)"
        lines.append(f"| {name} | {measured[name] * 1000:,.0f} ms | {floor or '-'} | {ratio} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"labels-{datetime.date.today()}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
