"""Benchmark the analysis commands of the registry (evalbridge ppi, judges, changed...) against calling their verb
from Python (the floor): CPU time of a fresh process each, on TREC DL 2019 passage.

Usage::

    .venv/bin/python bench/commands.py                  # every command, best of 5
    .venv/bin/python bench/commands.py ppi judges -n 3  # some of them
    .venv/bin/python bench/commands.py --tree ../other  # the code of another checkout (before / after a change)

Each command runs its command line as a config through the one pipeline (``show_analysis``); the floor is a
process that imports evalbridge, calls the verb on the same files and renders the same table (its stdout is
checked to be the command's, byte for byte). The inputs are the DL19 qrels and three runs
(``examples/trec-dl-2019-passage``, in the repository) and, built here as the tests build theirs, a judge (every grade
moved by -1, 0 or +1 at random), a second judge and a human sample (the true grades of 25 of the 43 queries).
CPU time (user + sys of the child), best of ``-n`` runs, the command and its floor interleaved: on a shared
machine the wall time measures the other tenants; say the load (printed). Speed is never asserted in tests.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DL19 = HERE.parent / "examples" / "trec-dl-2019-passage"  # (the same files as ../shared/data/real/)
RUNS = {"bm25": "run.bm25.top100.txt", "rm3": "run.bm25-rm3.top100.txt", "splade": "run.splade-pp-ed.top100.txt"}
R = [f"{name}={path}" for name, path in RUNS.items()]
PPI_BATCH = ["--plan-difference", "0.05", "--batch", "B.jsonl", "--batch-size", "5", "--topics", "topics.txt"]

#: command -> (its command line, the verb called from Python with the same inputs, rendering the same table)
CASES = {
    "ppi": (["ppi", "judge.txt", *R, "--human", "human.txt", "-m", "nDCG@10", "P(rel=2)@10", *PPI_BATCH],
            "from evalbridge.views.ppi import render_ppi\n"
            "r = eb.ppi('judge.txt', 'human.txt', RUNS, ['nDCG@10', 'P(rel=2)@10'], baseline='bm25')\n"
            "r = r.with_plan(width=None, difference=0.05, cost_human=None, cost_llm=None)\n"
            "r.write_batch('B.jsonl', 5, queries='topics.txt')\n"
            "out = render_ppi(r, 'terminal')"),
    "judges": (["judges", "qrels.txt", "judge.txt", "two=j2.txt", "--runs", *R, "-m", "nDCG@10", "P@10"],
               "from evalbridge.views.judges import render_judges\n"
               "out = render_judges(eb.judges('qrels.txt', {'judge': 'judge.txt', 'two': 'j2.txt'}, RUNS, "
               "['nDCG@10', 'P@10']), 'terminal')"),
    "changed": (["changed", "judge.txt", "qrels.txt", *R, "-m", "nDCG@10", "P@10", "--n-resamples", "300"],
                "from evalbridge.views.eval_sets import render_change\n"
                "out = render_change(eb.what_changed('judge.txt', 'qrels.txt', RUNS, ['nDCG@10', 'P@10'], "
                "n_resamples=300), 'terminal')"),
    "diagnose": (["diagnose", "qrels.txt", *R, "-m", "nDCG@10", "--trials", "20", "--judgements-b", "judge.txt"],
                 "out = str(eb.diagnose('qrels.txt', RUNS, 'nDCG@10', trials=20, judgements_b='judge.txt')"
                 ".table('terminal'))"),
    "uncertain": (["uncertain", f"bm25={RUNS['bm25']}", "-m", "nDCG@10", "--judges", "qrels.txt", "judge.txt",
                   "j2.txt", "--draws", "50"],
                  "out = str(eb.uncertain(RUNS['bm25'], 'nDCG@10', judges={'qrels': 'qrels.txt', 'judge': "
                  "'judge.txt', 'j2': 'j2.txt'}, draws=50, system='bm25').table('terminal'))"),
    "power": (["power", "qrels.txt", *R, "-m", "nDCG@10"],
              "from evalbridge.views.power_view import render_power\n"
              "results = {n: eb.evaluate('qrels.txt', p, ['nDCG@10']) for n, p in RUNS.items()}\n"
              "out = render_power(eb.power(results, baseline='bm25'), 'terminal')"),
    "tiers": (["tiers", "qrels.txt", *R, "-m", "nDCG@10", "--n-resamples", "300"],
              "from evalbridge.decisions.tiers import tiers\nfrom evalbridge.views.tiers import render_tiers\n"
              "results = {n: eb.evaluate('qrels.txt', p, ['nDCG@10']) for n, p in RUNS.items()}\n"
              "out = render_tiers(tiers(results, n_resamples=300), 'terminal')"),
    "design": (["design", "qrels.txt", *R, "-m", "nDCG@10"],
               "from evalbridge.views.topic_set_size import render_topic_set_size\n"
               "results = {n: eb.evaluate('qrels.txt', p, ['nDCG@10']) for n, p in RUNS.items()}\n"
               "out = render_topic_set_size(eb.topic_set_size(results), 'terminal')"),
}


def inputs(folder: Path) -> None:
    """The qrels, runs and topics linked into ``folder``; the judges and the human sample drawn from the qrels."""
    for name in RUNS.values():
        (folder / name).symlink_to(DL19 / name)
    (folder / "topics.txt").symlink_to(DL19 / "topics.dl19-passage.txt")
    rows = [line.split() for line in (DL19 / "qrels.dl19-passage.txt").read_text().splitlines() if line.strip()]
    (folder / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, _, d, g in rows))
    draw = random.Random(7)
    for name in ("judge.txt", "j2.txt"):
        (folder / name).write_text("".join(f"{q} 0 {d} {min(3, max(0, int(g) + draw.choice([-1, 0, 1])))}\n"
                                           for q, _, d, g in rows))
    queries = sorted({q for q, *_ in rows})
    sample = set(draw.sample(queries, 25))
    (folder / "human.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, _, d, g in rows if q in sample))


def cpu(argv: list[str], folder: Path, tree: Path) -> tuple[float, str]:
    """The CPU time (user + sys) of one child process, and its stdout."""
    (folder / "B.jsonl").unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, *argv], cwd=folder, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(tree)})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}\n{done.stderr}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commands", nargs="*", metavar="COMMAND", help=f"the commands timed: {', '.join(CASES)} "
                                                                       "(default: every one)")
    parser.add_argument("-n", type=int, default=5, help="runs of each (the best is kept)")
    parser.add_argument("--tree", type=Path, default=HERE.parent, help="the checkout whose evalbridge is timed")
    args = parser.parse_args()
    if unknown := [name for name in args.commands if name not in CASES]:
        parser.error(f"no case for {', '.join(unknown)}; choose among {', '.join(CASES)}")
    print(f"load average {os.getloadavg()[0]:.1f}; CPU time, best of {args.n}")
    print("| command | CPU | floor (the verb from Python) | / floor |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        inputs(folder)
        runs = ", ".join(f"{name!r}: {path!r}" for name, path in RUNS.items())
        for name in args.commands or CASES:
            argv, verb = CASES[name]
            floor = ["-c", f"import sys\nimport evalbridge as eb\nRUNS = {{{runs}}}\n{verb}\nsys.stdout.write(out)"]
            command, verbs = [], []
            for _ in range(args.n):
                spent, shown = cpu(["-m", "evalbridge", *argv], folder, args.tree)
                command.append(spent)
                spent, printed = cpu(floor, folder, args.tree)
                verbs.append(spent)
                if printed != shown:
                    raise SystemExit(f"{name}: the floor does not print what the command prints")
            print(f"| {name} | {min(command):.2f} s | {min(verbs):.2f} s | {min(command) / min(verbs):.2f} |",
                  flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
