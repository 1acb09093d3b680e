"""``evalbridge judges HUMAN NAME=LABELS... [--runs RUN...] -m METRIC``: each judge's report card against the humans
(eb.judges; a config's ``judges:`` section)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import (EXIT_OK, add_inputs, add_quiet, add_statistics, emit, named_runs, note, split_named,
                     statistics_given)


#: the fields of Statistics the judges' flags set (the flips' paired test)
_STATISTICS = ("test", "alpha", "n_resamples", "seed")


def _bins(given: list[str] | None) -> dict[str, list[float]] | None:
    """``--bins NAME=T1,T2,...``: each judge's thresholds (checked by the verb, as every door's)."""
    from ..errors import InputError

    if given is None:
        return None
    found: dict[str, list[float]] = {}
    for word in given:
        name, _, edges = word.partition("=")
        try:
            found[name] = [float(edge) for edge in edges.split(",")]
        except ValueError:
            raise InputError(f"--bins takes NAME=T1,T2,... (a judge's thresholds onto the humans' scale); got "
                             f"{word!r}.", fix="e.g. --bins umbrela=0.25,0.5,0.75.") from None
        if not name or not edges:
            raise InputError(f"--bins takes NAME=T1,T2,...; got {word!r}.", fix="e.g. --bins umbrela=0.25,0.5,0.75.")
    return found


def handle(args: argparse.Namespace) -> int:
    from ..errors import InputError
    from ..evalsets.judges import judges
    from ..reports.writing import STDOUT, check_outputs

    labels = named_runs(args.labels)
    runs = named_runs(args.runs or [])
    if len(runs) == 1:
        raise InputError("the system order under a judge compares two or more runs; one is given.",
                         fix="give --runs two or more runs, or none (the labels alone).")
    reruns: dict[str, list[str]] = {}
    for text in args.reruns or []:
        name, path = split_named(text)
        if name is None or name not in labels:
            raise InputError(f"--reruns takes NAME=PATH, NAME one of the judges ({', '.join(labels)}); got {text!r}.",
                             fix="e.g. --reruns umbrela=umbrela.run2.qrels umbrela=umbrela.run3.qrels.")
        reruns.setdefault(name, []).append(path)
    check_outputs([args.human, *labels.values(), *runs.values(), *(p for ps in reruns.values() for p in ps)],
                  files=[args.output or STDOUT])
    from ..io.datasets import with_official

    metrics, said = with_official(list(args.metrics), args.human, *labels.values()) if runs else (args.metrics, ())
    report = judges(args.human, labels, runs or None, list(metrics), bins=_bins(args.bins), reruns=reruns or None,
                    calibration_bins=args.calibration_bins, statistics=statistics_given(args, *_STATISTICS),
                    min_relevance=args.min_relevance)
    for line in said:  # which measures -m official took, as note_official says them
        note(args, line)
    emit(report.table("terminal" if args.format == "text" else args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..evalsets.agreement import DEFAULT_METRICS
    from ..evalsets.judges import JUDGES_PARAMETERS
    from ..views.formats import report_formats

    p = commands.add_parser(
        "judges", help="each judge's (LLM's) labels against the humans': kappas, confusion, calibration, system order",
        description="Each judge's report card against the humans' labels (HUMAN): Cohen's kappa (plain, linear, "
                    "quadratic), the confusion table, precision and recall per grade, the mean grade shift, grades "
                    "outside the humans' scale, a calibration curve; with --runs, each system's mean under the judge "
                    "and the humans, Kendall's tau and tau_AP of the orders and the pairs whose significance flips. "
                    "Judges side by side, best first (eb.judges; a config's judges: section).")
    p.add_argument("human", metavar="HUMAN", help="the humans' labels (qrels)")
    p.add_argument("labels", nargs="+", metavar="NAME=LABELS", help="each judge's labels (qrels), PATH or NAME=PATH")
    p.add_argument("--runs", nargs="+", default=None, metavar="RUN", help="runs ranked under each (two or more)")
    p.add_argument("-m", "--metrics", nargs="+", default=list(DEFAULT_METRICS), metavar="METRIC",
                   help="metrics the systems are ranked by (the first ranks the judges)")
    p.add_argument("--min-relevance", type=float, default=None, metavar="LEVEL",
                   help="the humans' relevance level (default: 1), the calibration's 'relevant'")
    p.add_argument("--bins", nargs="+", default=None, metavar="NAME=T1,T2,...",
                   help="thresholds onto the humans' scale of a judge giving scores or probabilities (a score s is "
                        "the grade of the number of thresholds <= s), e.g. --bins umbrela=0.25,0.5,0.75")
    p.add_argument("--reruns", nargs="+", default=None, metavar="NAME=PATH",
                   help="a judge's labels from re-running the same prompt (one per re-run, NAME one of the judges): "
                        "its label noise, carried into the systems' intervals")
    p.add_argument("--calibration-bins", type=int, default=JUDGES_PARAMETERS["calibration_bins"].default,
                   metavar="N", help="bins of equal counts of a calibration curve over scores (default 10)")
    add_statistics(p, *_STATISTICS)
    p.add_argument("--format", choices=["text", "json", *(f for f in report_formats() if f not in ("json", "csv"))],
                   default="text", help="output format (text = terminal)")
    p.add_argument("-o", "--output", default=None, metavar="PATH", help="write to this file instead of stdout")
    add_quiet(p)
    add_inputs(p)
    p.set_defaults(handler=handle)
