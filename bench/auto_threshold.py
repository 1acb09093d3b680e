"""Where ``backend="auto"`` should switch from the reference to the fast backend: one threshold in run rows.

Usage::

    .venv/bin/python bench/auto_threshold.py            # ~3-5 minutes on 2 shared cores
    .venv/bin/python bench/auto_threshold.py --quick    # fewer sizes and repetitions

``auto`` must choose from the input alone (never from what happens to be imported), so one
threshold has to serve two callers: a *warm* process, where numpy and the engine are already
imported (a notebook, a config run, a loop over systems), and a *cold* one, where the first
call to the engine also pays for importing numpy and the engine (a fresh ``python -c``, a CI
job). For each size (run rows, at 10 and 100 documents per query; five metrics: nDCG@10, AP,
R@100, RR@10, P@10) this measures, in fresh worker processes:

* warm: the median of 7 ``evaluate`` calls with ``backend="reference"`` and ``"fast"`` after a
  warm-up call, numpy and the engine imported beforehand;
* cold: one ``evaluate`` call in a fresh process whose input was unpickled without numpy, so
  ``fast`` includes the import of numpy and the engine (median over 5 processes).

Times are CPU times of the worker process (``time.process_time``: both backends run on one
thread for dict inputs), so that a machine shared with other work inflates them far less than
wall time. Then, for every candidate threshold, the worst *regret* (time of the backend ``auto`` would
choose / time of the faster one) over all sizes and both kinds of process, and the threshold
with the smallest worst regret. The table goes to ``bench/results/auto-threshold-<date>.md``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
ROWS = (1_000, 2_000, 5_000, 10_000, 15_000, 20_000, 30_000, 50_000, 100_000, 200_000)
DEPTHS = (10, 100)
CANDIDATES = (1_000, 2_000, 5_000, 10_000, 15_000, 20_000, 30_000, 50_000, 100_000, 200_000, 10**9)
CACHE = Path(tempfile.gettempdir()) / "evalbridge_bench"

WORKER = """
import json, pickle, statistics, sys, time
sys.path.insert(0, {root!r})
with open({path!r}, "rb") as f:
    qrels, run = pickle.load(f)
import evalbridge
mode, backend = {mode!r}, {backend!r}
if mode == "warm":
    import numpy, evalbridge.fast, evalbridge.backends.fast  # noqa: F401 - what a warm process holds
    evalbridge.evaluate(qrels, run, {metrics!r}, backend=backend)
    times = []
    for _ in range({reps}):
        start = time.process_time()
        evalbridge.evaluate(qrels, run, {metrics!r}, backend=backend)
        times.append(time.process_time() - start)
    print(json.dumps(statistics.median(times)))
else:
    assert "numpy" not in sys.modules
    start = time.process_time()
    evalbridge.evaluate(qrels, run, {metrics!r}, backend=backend)
    print(json.dumps(time.process_time() - start))
"""


def inputs(rows: int, depth: int) -> Path:
    """A pickle of ``(qrels, run)`` dicts (no numpy object inside) with ``rows`` run rows."""
    import data

    path = CACHE / f"auto-{rows}-{depth}.pickle"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        pair = data.to_dicts(data.generate(max(rows // depth, 1), depth, seed=11, name=f"auto-{rows}"))
        with path.open("wb") as f:
            pickle.dump(pair, f, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def measure(path: Path, mode: str, backend: str, reps: int) -> float:
    code = WORKER.format(root=str(HERE.parent), path=str(path), mode=mode, backend=backend, metrics=METRICS,
                         reps=reps)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rows_list = ROWS[::2] if args.quick else ROWS
    cold_reps, warm_reps = (1, 3) if args.quick else (5, 7)
    table: dict[tuple[int, int], dict[str, float]] = {}
    for depth in DEPTHS:
        for rows in rows_list:
            path = inputs(rows, depth)
            got = {}
            for backend in ("reference", "fast"):
                got[f"warm {backend}"] = measure(path, "warm", backend, warm_reps)
                got[f"cold {backend}"] = statistics.median(measure(path, "cold", backend, 1) for _ in range(cold_reps))
            table[(rows, depth)] = got
            print(rows, depth, {k: round(v * 1e3, 2) for k, v in got.items()}, flush=True)

    def regret(threshold: int) -> tuple[float, float]:
        """(worst time / best time, worst time - best time in seconds) over sizes and both processes."""
        ratio, loss = 1.0, 0.0
        for (rows, _), got in table.items():
            chosen = "fast" if rows >= threshold else "reference"
            for mode in ("warm", "cold"):
                best = min(got[f"{mode} reference"], got[f"{mode} fast"])
                ratio = max(ratio, got[f"{mode} {chosen}"] / best)
                loss = max(loss, got[f"{mode} {chosen}"] - best)
        return ratio, loss

    regrets = {t: regret(t) for t in CANDIDATES}
    best = min(regrets, key=lambda t: (regrets[t], t))
    lines = [f"# auto threshold ({time.strftime('%Y-%m-%d %H:%M')}, {'quick' if args.quick else 'full'})", "",
             f"Five metrics ({', '.join(METRICS)}); medians of CPU time in ms; cold = first call in a fresh process "
             "(fast includes importing numpy and the engine).", "",
             "| run rows | docs/query | warm reference | warm fast | cold reference | cold fast |",
             "|---|---|---|---|---|---|"]
    for (rows, depth), got in sorted(table.items()):
        lines.append(f"| {rows:,} | {depth} | " + " | ".join(
            f"{got[k] * 1e3:.1f}" for k in ("warm reference", "warm fast", "cold reference", "cold fast")) + " |")
    lines += ["", "| threshold (rows) | worst regret (x the faster backend) | worst loss (ms) |", "|---|---|---|"]
    lines += [f"| {'never' if t == 10**9 else f'{t:,}'} | {r:.2f} | {loss * 1e3:.0f} |"
              for t, (r, loss) in regrets.items()]
    lines += ["", f"Smallest worst regret: {best:,} rows ({regrets[best][0]:.2f}x the faster backend at worst, "
                  f"{regrets[best][1] * 1e3:.0f} ms at worst)."]
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"auto-threshold-{time.strftime('%Y-%m-%d')}.md"
    out.write_text(text)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
