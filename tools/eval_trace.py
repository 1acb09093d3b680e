"""The files an ``evalbridge eval QRELS RUN -m ndcg@10`` visits and the switches between them (docs/architecture.md).

Measured as docs/architecture.md's "Change traces" says: ``sys.setprofile`` records every Python call into a file of
the package, on the second run of the command in one process (the first imports the modules), for a 2-query TREC
pair written to a temporary folder; a switch is a call into another file than the previous call's. ``--pairs``
lists the pairs of files that switch most, ``--sequence`` every call in order (file:function). ``--config``: the
config-with-comparison walk instead, ``evalbridge run eval.yaml --no-write -q`` of a config with two runs of the same
pair, ``ndcg@10`` and a comparison against the first (100 resamples).

    python tools/eval_trace.py [--config] [--pairs N] [--sequence]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.5 r\nq2 Q0 d3 1 0.7 r\n"
OTHER = "q1 Q0 d2 1 0.9 s\nq1 Q0 d1 2 0.5 s\nq2 Q0 d3 1 0.7 s\n"
CONFIG = ("qrels: qrels.txt\nruns: {a: run.txt, b: other.txt}\nmetrics: [ndcg@10]\n"
          "comparison: {baseline: a, n_resamples: 100}\n")


def traced(package: str, call: Callable[[], Any]) -> tuple[Any, list[tuple[str, str]]]:
    """What ``call()`` returns, and the (file, function) of each Python call into ``package`` it made, in order."""
    calls: list[tuple[str, str]] = []

    def profile(frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code.co_filename.startswith(package):
            calls.append((os.path.relpath(frame.f_code.co_filename, package), frame.f_code.co_name))

    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            return call(), calls
    finally:
        sys.setprofile(None)


def counted(calls: list[tuple[str, str]]) -> tuple[int, int]:
    """Files visited and switches from one file to another."""
    files = [file for file, _ in calls]
    return len(set(files)), sum(a != b for a, b in zip(files, files[1:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=0, metavar="N", help="the N pairs of files that switch most")
    parser.add_argument("--sequence", action="store_true", help="every call, in order")
    parser.add_argument("--config", action="store_true", help="the config-with-comparison walk (evalbridge run)")
    options = parser.parse_args()

    import evalbridge
    from evalbridge.cli import build_parser
    from evalbridge.common.wording import door

    package = os.path.dirname(evalbridge.__file__) + os.sep
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "qrels.txt").write_text(QRELS)
        (Path(folder) / "run.txt").write_text(RUN)
        (Path(folder) / "other.txt").write_text(OTHER)
        (Path(folder) / "eval.yaml").write_text(CONFIG)
        argv = ["run", str(Path(folder) / "eval.yaml"), "--no-write", "-q"] if options.config else \
            ["eval", str(Path(folder) / "qrels.txt"), str(Path(folder) / "run.txt"), "-m", "ndcg@10", "-q"]
        runs = []
        for _ in range(2):  # the second run is measured: the first imports (each module's body is a call too)
            args, parsing = traced(package, lambda: build_parser(argv).parse_args(argv))

            def command() -> int:
                with door("config" if options.config else "command line"):
                    code: int = args.handler(args)
                return code

            _, commanding = traced(package, command)
            runs.append(parsing + commanding)
    rows = {"building the parser": parsing, "the command": commanding, "in all": parsing + commanding,
            "in all, the first run (imports included)": runs[0]}
    for name, calls in rows.items():
        print(f"{name}: {counted(calls)[0]} files, {counted(calls)[1]} switches")
    files = [file for file, _ in parsing + commanding]
    pairs = Counter(tuple(sorted(pair)) for pair in zip(files, files[1:]) if pair[0] != pair[1])
    for (a, b), n in pairs.most_common(options.pairs):
        print(f"{n:4d}  {a} <-> {b}")
    if options.sequence:
        for file, function in parsing + commanding:
            print(f"{file}:{function}")


if __name__ == "__main__":
    main()
