"""Benchmark MLflow logging (``eb.log_mlflow``): 5 systems x 5 metrics x 100,000 queries to a local SQLite store.

Usage::

    .venv/bin/python bench/tracking.py                    # 100,000 queries (issue 28's size), 3 repetitions
    .venv/bin/python bench/tracking.py --queries 10000    # smaller, on a busy machine

The per-query values are random (fixed seed) and the results are built directly (the time of logging does not
depend on how the values were computed). The store is created (MLflow's migrations of a new SQLite database) and
``mlflow`` imported before the clock starts; both are timed apart, in fresh processes, as what a first call pays.
Each repetition logs one parent run and five nested runs (params, five means each, ``provenance.json``, and each
system's ``per_query.csv``) into the same store; the medians are printed and written to
``bench/results/tracking-<date>.md``. Speed is never asserted in the unit tests.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

METRICS = ["nDCG@10", "AP", "R@100", "RR@10", "P@10"]
SYSTEMS = ["bm25", "bm25+rm3", "splade", "colbert", "hybrid"]


def results(queries: int) -> dict:
    """``{system: Results}``: the five metrics' per-query values drawn at random (seed 7)."""
    import numpy as np

    import evalbridge as eb
    from evalbridge.evaluation.results import Results

    base = eb.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, METRICS)
    ids = [f"q{i}" for i in range(queries)]
    rng = np.random.default_rng(7)
    out = {}
    for system in SYSTEMS:
        values = {m: dict(zip(ids, rng.random(queries).tolist())) for m in base.metrics}
        out[system] = Results(base.metrics, values, replace(base.provenance, queries_evaluated=queries),
                              requests=base.requests)
    return out


def fresh(code: str) -> float:
    """Seconds of a fresh interpreter running ``code`` (its own clock, printed last)."""
    done = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter()\n{code}\n"
                                                 f"print(time.perf_counter() - t)"],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    import evalbridge as eb
    from evalbridge.tracking import tracked_runs

    folder = Path(tempfile.mkdtemp(prefix="evalbridge-bench-mlflow-"))
    uri = f"sqlite:///{folder / 'mlflow.db'}"
    create = fresh(f"import evalbridge as eb\neb.log_mlflow(eb.evaluate({{'q': {{'d': 1}}}}, {{'q': {{'d': 1.0}}}}, "
                   f"'P@1'), uri={uri!r})")
    imports = statistics.median(fresh("import mlflow.tracking, mlflow.entities") for _ in range(3))
    data = results(args.queries)
    import mlflow.tracking  # noqa: F401 - imported before the clock (timed above, apart)

    eb.log_mlflow(data, uri=uri)  # warm-up: the experiment exists, SQLAlchemy's mappers are configured
    build, total = [], []
    for _ in range(args.reps):
        start = time.perf_counter()
        parent, systems = tracked_runs(data)
        with tempfile.TemporaryDirectory() as scratch:
            for run in [parent, *systems.values()]:
                for name, write in run.files.items():
                    write(Path(scratch) / name)
        build.append(time.perf_counter() - start)
        start = time.perf_counter()
        eb.log_mlflow(data, uri=uri)
        total.append(time.perf_counter() - start)
    load = os.getloadavg()[0]
    rows = [("log_mlflow, 5 systems x 5 metrics (median)", statistics.median(total)),
            ("  of which: the runs built and their artifacts written (median)", statistics.median(build)),
            ("import mlflow (fresh process, median of 3)", imports),
            ("first call on a new store (fresh process: imports, migrations, one tiny run)", create)]
    lines = [f"# MLflow logging: {len(SYSTEMS)} systems x {len(METRICS)} metrics x {args.queries:,} queries",
             "", f"{datetime.datetime.now():%Y-%m-%d %H:%M}, load {load:.1f}, {os.cpu_count()} cores, "
                 f"mlflow {mlflow_version()}, {args.reps} repetitions, SQLite store", "",
             "| what | seconds |", "|---|---|", *(f"| {what} | {seconds:.2f} |" for what, seconds in rows),
             "", "goal (issue 28): <= 5 s for log_mlflow at 100,000 queries"]
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"tracking-{datetime.date.today()}.md"
    out.write_text(text)
    print(f"wrote {out}")


def mlflow_version() -> str:
    import mlflow

    return str(mlflow.__version__)


if __name__ == "__main__":
    main()
