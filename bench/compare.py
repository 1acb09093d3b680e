"""Benchmark system comparisons: 5 systems x 5 metrics, randomization test and bootstrap CIs, memory and time.

Usage::

    .venv/bin/python bench/compare.py            # full: up to 100,000 queries x 10,000 resamples, ~5-10 min
    .venv/bin/python bench/compare.py --quick    # small sizes only, < 1 min
    .venv/bin/python bench/compare.py --goal     # issue 36's goals: 100,000 x 10,000 on both cores and one, the
                                                 # floor, power (about 1 min on a quiet machine)

Each measurement runs in a fresh worker process (``--worker``): the per-query values of five
systems on five metrics are generated there with a fixed seed (not timed), then one comparison
runs against the baseline; its wall time and its peak memory growth (``VmHWM`` reset through
``/proc/self/clear_refs``, minus the RSS before the call, as in ``bench/run.py``) are reported and
written to ``bench/results/compare-<mode>-<date>.md``.

Contenders:

* ``evalbridge``: ``compare_systems(..., baseline="s0", test="randomization", n_resamples=R)``:
  t, randomization and Wilcoxon p-values of the 20 pairs, BCa CIs of the 20 differences and of
  the 25 system means, batched (``evalbridge.stats.resampling``).
* ``one core``: the same call in a worker bound to one core (``sched_setaffinity`` before it starts, so numpy, BLAS
  and evalbridge see one core): the same numbers, the time the second core saves.
* ``floor``: what any implementation must do at that size: drawing the same resamples (the bootstrap's query
  indices and the randomization test's 32-bit sign draws, each stream with its own generator) and one BLAS product
  of that size (a float64 ``(B, n)`` matrix of the draws times the ``(n, 25)`` columns, and times the ``(n, 20)``
  differences), in batches of 64 resamples, the two streams on two threads side by side (BLAS on one thread each);
  no counting, no comparison, no test.
* ``power``: ``eb.power`` of 20 systems against the baseline on 5 metrics (100 rows; no resampling).
* ``before``: the comparison code as it was before the batched resampling (kept here verbatim
  in spirit: one ``scipy.stats.permutation_test`` and one ``scipy.stats.bootstrap(method="BCa")``
  per pair, ``vectorized=True`` without ``batch``), on the sizes it survives on this machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from run import _reset_peak, _status, machine  # noqa: E402 - bench/ is on the path

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
SYSTEMS = 5


def values(n_queries: int, n_systems: int = SYSTEMS, n_metrics: int = len(METRICS), seed: int = 7) -> dict:
    """system -> metric -> {query id: value}: per-query values shaped like real ones (fixed seed).

    A query difficulty shared by every system, a small gain per system, per-query noise; P@10 on
    the 0.1 grid, RR@10 as 1/rank or 0 (many zero differences and ties, as in real runs), the
    others continuous in [0, 1].
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = [f"q{i}" for i in range(n_queries)]
    difficulty = rng.beta(2, 3, n_queries)
    out: dict = {}
    for s in range(n_systems):
        per_metric = {}
        for metric in METRICS[:n_metrics]:
            v = np.clip(difficulty + 0.02 * s + rng.normal(0, 0.15, n_queries), 0, 1)
            if metric == "P@10":
                v = np.round(v, 1)
            elif metric == "RR@10":
                rank = np.ceil(1 / np.maximum(v, 1e-9))
                v = np.where(rank <= 10, 1 / rank, 0.0)
            per_metric[metric] = dict(zip(ids, v.tolist()))
        out[f"s{s}"] = per_metric
    return out


def evalbridge_compare(data: dict, n_resamples: int) -> int:
    from evalbridge.decisions.compare import compare_systems

    metrics = list(next(iter(data.values())))
    return len(compare_systems(data, metrics, baseline="s0", test="randomization", n_resamples=n_resamples,
                               seed=0).rows)


def before_compare(data: dict, n_resamples: int) -> int:
    """The scipy calls each (system, metric) pair made before the batched resampling."""
    import numpy as np
    from scipy.stats import bootstrap, permutation_test, ttest_rel

    def mean_difference(x, y, axis=-1):  # noqa: ANN001, ANN202
        return (x - y).mean(axis=axis)

    rows = 0
    metrics = list(next(iter(data.values())))
    for metric in metrics:
        base = data["s0"][metric]
        for system, per_metric in data.items():
            if system == "s0":
                continue
            other = per_metric[metric]
            common = [q for q in base if q in other]
            x = np.array([other[q] for q in common])
            y = np.array([base[q] for q in common])
            ttest_rel(x, y)
            permutation_test((x, y), mean_difference, permutation_type="samples", vectorized=True,
                             n_resamples=n_resamples, alternative="two-sided", rng=np.random.default_rng(0))
            bootstrap((x, y), mean_difference, paired=True, vectorized=True, n_resamples=n_resamples,
                      confidence_level=0.95, method="BCa", rng=np.random.default_rng(0))
            rows += 1
    return rows


def floor(data: dict, n_resamples: int) -> int:
    """Drawing the comparison's resamples and one BLAS product of that size (see the module docstring); the pairs
    (x metrics) it stands for."""
    import threading

    import numpy as np
    from threadpoolctl import threadpool_limits

    systems = list(data)
    metrics = list(next(iter(data.values())))
    n = len(data[systems[0]][metrics[0]])
    columns = np.random.default_rng(1).random((n, len(systems) * len(metrics)))
    differences = np.random.default_rng(2).random((n, (len(systems) - 1) * len(metrics)))

    def stream(draw, against) -> None:  # noqa: ANN001
        rng = np.random.default_rng(0)
        for start in range(0, n_resamples, 64):
            drawn = draw(rng, (min(64, n_resamples - start), n))
            np.asarray(drawn, dtype=np.float64) @ against

    streams = [(lambda rng, shape: rng.integers(0, n, shape), columns),
               (lambda rng, shape: rng.integers(0, 2 ** 32, shape, dtype=np.uint32), differences)]
    with threadpool_limits(1, user_api="blas"):
        threads = [threading.Thread(target=stream, args=pair) for pair in streams]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return differences.shape[1]   # the pairs, as the comparison's rows


def power_analysis(data: dict, n_resamples: int) -> int:  # noqa: ARG001 - no resampling
    """eb.power of every system against the baseline on every metric (the issue's goal: 20 pairs x 5 metrics
    at 100,000 queries < 1 s): the MDE and the queries needed for the observed difference, paired t-test."""
    from evalbridge.decisions.power import power

    metrics = list(next(iter(data.values())))
    return len(power(data, metrics, baseline="s0").rows)


TASKS = {"evalbridge": evalbridge_compare, "one core": evalbridge_compare, "floor": floor,
         "before": before_compare, "power": power_analysis}
#: the tasks whose worker runs bound to one core
ONE_CORE = {"one core"}


def worker(spec: dict) -> dict:
    """Generate the values, import, then time one comparison; report time and memory."""
    import numpy  # noqa: F401 - imported before the clock, like the libraries in bench/run.py
    import scipy.stats  # noqa: F401

    import evalbridge.decisions.compare  # noqa: F401

    data = values(spec["queries"], spec["systems"], spec["metrics"])
    times, growth, cpu = [], [], []
    for _ in range(spec["reps"]):
        _reset_peak()
        before = _status("VmRSS")
        start, used = time.perf_counter(), time.process_time()
        rows = TASKS[spec["task"]](data, spec["resamples"])
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - used)   # every thread's CPU time: the wall time on idle cores x cores busy
        growth.append(_status("VmHWM") - before)
    return {"median": statistics.median(times), "times": times, "peak_growth": max(growth), "rows": rows,
            "input_rss": before, "cpu": statistics.median(cpu)}


def spawn(spec: dict) -> dict:
    def one_core() -> None:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

    done = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], capture_output=True, text=True,
                          preexec_fn=one_core if spec["task"] in ONE_CORE else None)
    if done.returncode:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def plan(quick: bool, goal: bool = False) -> list[dict]:
    """What to measure: (task, queries, resamples, systems, metrics, reps)."""
    def step(task: str, queries: int, resamples: int, systems: int = SYSTEMS, metrics: int = len(METRICS),
             reps: int = 1) -> dict:
        return {"task": task, "queries": queries, "resamples": resamples, "systems": systems, "metrics": metrics,
                "reps": reps}

    if goal:   # the goals only: the comparison on both cores and on one, the floor, and power
        return [step("evalbridge", 100_000, 10_000), step("one core", 100_000, 10_000), step("floor", 100_000, 10_000),
                step("power", 100_000, 0, systems=21, reps=3)]
    if quick:
        return [step("evalbridge", 1_000, 1_000, reps=3), step("evalbridge", 1_000, 10_000),
                step("evalbridge", 10_000, 1_000), step("one core", 10_000, 1_000), step("floor", 10_000, 1_000),
                step("before", 1_000, 1_000), step("power", 10_000, 0, systems=21, reps=3)]
    return [step("evalbridge", 1_000, 10_000, reps=3), step("evalbridge", 10_000, 10_000),
            step("evalbridge", 100_000, 1_000), step("evalbridge", 100_000, 10_000),
            step("one core", 100_000, 10_000), step("floor", 100_000, 10_000),
            step("power", 100_000, 0, systems=21, reps=3),
            step("before", 1_000, 10_000), step("before", 5_000, 10_000, systems=2, metrics=1)]


def fmt(seconds: float) -> str:
    return f"{seconds * 1e3:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def goals(results: list[tuple[dict, dict]]) -> list[str]:
    """The goal lines of issue 36 for the largest size measured on both cores, on one and as the floor."""
    timed = {(s["task"], s["queries"], s["resamples"]): g for s, g in results if "error" not in g}
    sizes = [(q, r) for task, q, r in timed if task == "evalbridge" and ("one core", q, r) in timed]
    if not sizes:
        return []
    q, r = max(sizes)
    two, one = timed["evalbridge", q, r], timed["one core", q, r]
    out = [f"Goals at {q:,} queries x {r:,} resamples (issue 36): two cores {two['median']:.1f} s (goal <= 20 s; CPU "
           f"{two['cpu']:.1f} s), one core {one['median']:.1f} s; two cores x{one['median'] / two['median']:.2f} one "
           f"(goal >= 1.7); peak memory growth {two['peak_growth'] / 2 ** 20:.0f} MiB (goal <= 1,024)."]
    if ("floor", q, r) in timed:
        bottom = timed["floor", q, r]
        out.append(f"Floor (the same draws and one BLAS product of that size, two threads): {bottom['median']:.1f} s; "
                   f"evalbridge x{two['median'] / bottom['median']:.2f} the floor.")
    return out + [""]


def render(results: list[tuple[dict, dict]], mode: str, wall: float) -> str:
    lines = [f"# Comparison benchmark ({mode}, {time.strftime('%Y-%m-%d %H:%M')})", "",
             f"Machine: {machine()}.", "",
             "One comparison against the baseline: t, randomization and Wilcoxon p-values of every (system, metric) "
             "pair, BCa bootstrap CIs (evalbridge: of the differences and of every system's mean; before: of the "
             "differences). Peak memory = growth of the peak RSS during the call (the input is built before).", "",
             "| contender | systems x metrics | queries | resamples | time | time per query x resample x pair "
             "| peak memory growth | CPU time (all threads) |", "|---|---|---|---|---|---|---|---|"]
    for spec, got in results:
        size = f"{spec['systems']} x {spec['metrics']}"
        if "error" in got:
            lines.append(f"| {spec['task']} | {size} | {spec['queries']:,} | {spec['resamples']:,} | "
                         f"error: {got['error']} | | | |")
            continue
        unit = got["median"] / (spec["queries"] * max(1, spec["resamples"]) * got["rows"]) * 1e9
        lines.append(f"| {spec['task']} | {size} | {spec['queries']:,} | {spec['resamples']:,} | {fmt(got['median'])} "
                     f"| {unit:.1f} ns | {got['peak_growth'] / 2 ** 20:.0f} MiB | {fmt(got.get('cpu', math.nan))} |")
    lines += ["", *goals(results), "Growth (evalbridge, same systems x metrics):", ""]
    ours = {(s["queries"], s["resamples"]): g for s, g in results if s["task"] == "evalbridge" and "error" not in g}
    for (q1, r1), g1 in ours.items():
        for (q2, r2), g2 in ours.items():
            if (q2, r2) != (q1, r1) and q2 >= q1 and r2 >= r1 and (q2 == q1 or r2 == r1):
                factor = (q2 * r2) / (q1 * r1)
                lines.append(f"- {q1:,} x {r1:,} -> {q2:,} x {r2:,} (queries x resamples x{factor:g}): time "
                             f"x{g2['median'] / g1['median']:.1f}, peak memory "
                             f"{g1['peak_growth'] / 2 ** 20:.0f} -> {g2['peak_growth'] / 2 ** 20:.0f} MiB")
    lines += ["", f"Total wall time: {wall:.0f} s; load average at the end "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes only (< 1 minute)")
    parser.add_argument("--goal", action="store_true", help="only the goals of issue 36: 100,000 queries x 10,000 "
                                                           "resamples on both cores and on one, the floor, power")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=HERE / "results", help="folder of the markdown report")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    began = time.perf_counter()
    print(f"comparison benchmark ({'goal' if args.goal else 'quick' if args.quick else 'full'}): {machine()}",
          flush=True)
    results = []
    for spec in plan(args.quick, args.goal):
        got = spawn(spec)
        results.append((spec, got))
        text = got["error"] if "error" in got else (f"{fmt(got['median'])}, peak +{got['peak_growth'] / 2 ** 20:.0f} "
                                                     f"MiB")
        print(f"  {spec['task']} {spec['systems']}x{spec['metrics']} {spec['queries']:,} queries x "
              f"{spec['resamples']:,} resamples: {text}", flush=True)
    mode = "goal" if args.goal else "quick" if args.quick else "full"
    report = render(results, mode, time.perf_counter() - began)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"compare-{mode}-{time.strftime('%Y-%m-%d')}.md"
    path.write_text(report)
    print(f"written to {path}")


if __name__ == "__main__":
    main()
