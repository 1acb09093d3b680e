"""Benchmark eb.ppi (issue 34): 5 systems x 5 metrics x 100,000 queries, 1,000 of them human-labelled, against
evaluating the runs; and a longer coverage run of the intervals on the LLMJudge labels.

Usage::

    .venv/bin/python bench/ppi.py                      # 100,000 queries x depth 100, 1,000 labelled
    .venv/bin/python bench/ppi.py --queries 10000      # smaller, on a busy machine
    .venv/bin/python bench/ppi.py --coverage           # the coverage run (needs ../shared/data/real/llmjudge)

Goal (issue 34): eb.ppi <= 2 x the time of evaluating the five runs. The qrels and the five columnar runs are
``bench/diff.py``'s (``bench/data.py``, fixed seed); they are the judge's labels. The human labels are those of
``--labelled`` queries drawn at random, every judged pair of each, a fifth of the grades redrawn (a judge that
agrees with the humans on most pairs). Each row runs in a fresh worker process: the inputs are built there
(not timed), then

* ``evaluate``: ``eb.evaluate`` of the five runs under the judge's labels (the judge-only numbers);
* ``ppi``: ``eb.ppi(judge, human, runs, metrics, baseline="s0")``: the same evaluations, the human-labelled
  queries evaluated again, and every mean and difference estimated.

Wall time (median of ``--repeat`` workers) and peak memory growth, as ``bench/run.py``. The coverage run draws
``--samples`` random human samples of each size from the LLMJudge pairs (willia-umbrela1 as the judge, runs
ranking each query's pairs by other judges' grades) and counts how often the 95% interval covers the value under
every human label, for metrics at 10 (sparse: few pairs count) and at 100. Results go to
``bench/results/ppi-<date>.md``; speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from diff import METRICS, SYSTEMS, inputs  # noqa: E402 - bench/ is on the path
from run import against, interleaved, machine, measured, written  # noqa: E402

MODES = ("evaluate", "ppi")
LLMJUDGE = HERE.parent.parent / "shared" / "data" / "real" / "llmjudge"


def _human(qrels: object, labelled: int) -> dict[str, dict[str, float]]:
    import numpy as np

    ids = list(qrels)  # type: ignore[call-overload]
    rng = np.random.default_rng(7)
    human: dict[str, dict[str, float]] = {}
    for i in sorted(rng.choice(len(ids), labelled, replace=False).tolist()):
        docs = dict(qrels[ids[i]])  # type: ignore[index]
        grades = {d: float(rng.integers(0, 4)) if rng.random() < 0.2 else float(g) for d, g in docs.items()}
        human[ids[i]] = grades
    return human


def work(mode: str, queries: int, depth: int, labelled: int) -> dict[str, float]:
    import warnings

    import evalbridge as eb

    warnings.simplefilter("ignore")
    qrels, runs = inputs(queries, depth)
    human = _human(qrels, labelled)
    named = {f"s{s}": run for s, run in enumerate(runs)}
    eb.evaluate(qrels, runs[0], METRICS)  # warm-up: imports, first allocations
    eb.ppi(qrels, {q: human[q] for q in list(human)[:5]}, {"s0": runs[0]}, METRICS[:1], scale=(0, 3))  # scipy
    if mode == "evaluate":
        return measured(lambda: [eb.evaluate(qrels, run, METRICS) for run in runs])[0]
    return measured(lambda: eb.ppi(qrels, human, named, METRICS, baseline="s0"))[0]


def coverage(samples: int, sizes: list[int], folder: Path) -> str:
    """The share of 95% intervals that cover the all-human value, and the width over the human sample's."""
    import numpy as np

    import evalbridge as eb
    from evalbridge.stats.ppi import classical_mean, ppi_mean

    human = eb.read_qrels(folder / "human.test.qrels")
    judge = eb.read_qrels(folder / "judges" / "willia-umbrela1.qrels")
    runs = {}
    for i, name in enumerate(("TREMA-nuggets", "NISTRetrieval-instruct0", "h2oloo-fewself")):
        grades = eb.read_qrels(folder / "judges" / f"{name}.qrels")
        rng = np.random.default_rng(i)
        runs[name] = {q: {d: float(g) + rng.random() for d, g in sorted(docs.items())} for q, docs in grades.items()}
    lines = ["| metrics | labelled pairs | intervals | covered (goal 0.92-0.98) | width / human-only width |",
             "|---|---|---|---|---|"]
    for metrics in (["P(rel=2)@10", "DCG@10"], ["P(rel=2)@100", "DCG@100"]):
        whole = eb.ppi(judge, human, runs, metrics, baseline="TREMA-nuggets", unit="pair")
        y_all, f_all = np.array(whole.samples.human), np.array(whole.samples.judge)
        truth = y_all.mean(axis=1)
        rng = np.random.default_rng(0)
        for n in sizes:
            covered, ratio = [], []
            for _ in range(samples):
                chosen = rng.choice(f_all.shape[1], n, replace=False)
                for e in range(len(truth)):
                    estimate = ppi_mean(y_all[e, chosen], f_all[e, chosen], f_all[e])
                    alone = classical_mean(y_all[e, chosen])
                    covered.append(estimate.low <= truth[e] <= estimate.high)
                    if alone.high > alone.low:
                        ratio.append((estimate.high - estimate.low) / (alone.high - alone.low))
            lines.append(f"| {', '.join(metrics)} | {n} | {len(covered)} | {np.mean(covered):.3f} | "
                         f"{np.mean(ratio) if ratio else math.nan:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--labelled", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=2, help="workers per row (median)")
    parser.add_argument("--coverage", action="store_true", help="the coverage run on the LLMJudge labels instead")
    parser.add_argument("--samples", type=int, default=1_000, help="human samples per size (coverage)")
    parser.add_argument("--llmjudge", type=Path, default=LLMJUDGE, help="the LLMJudge folder (coverage)")
    parser.add_argument("--worker", choices=MODES, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(work(args.worker, args.queries, args.depth, args.labelled)))
        return
    stamp = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
    if args.coverage:
        table = coverage(args.samples, [50, 100, 200, 500, 1000, 2000], args.llmjudge)
        text = (f"# ppi coverage, {stamp}\n\nLLMJudge labels, judge willia-umbrela1, {args.samples} random human "
                f"samples per size, 95% intervals, means and differences of 3 systems\n\n{table}\n\n{machine()}\n")
        print(text)
        (HERE / "results" / f"ppi-coverage-{datetime.date.today().isoformat()}.md").write_text(text)
        return
    seconds, peak, _ = interleaved(__file__, MODES, ["--queries", str(args.queries), "--depth", str(args.depth),
                                                     "--labelled", str(args.labelled)], args.repeat)
    lines = against(seconds, peak, MODES, "evaluate")
    size = (f"{args.queries:,} queries x depth {args.depth} x {SYSTEMS} systems x {len(METRICS)} metrics, "
            f"{args.labelled:,} human-labelled queries; goal: ppi <= 2.0 x evaluate")
    written(f"ppi-{args.queries}", "ppi bench", size, lines, args.repeat)


if __name__ == "__main__":
    main()
