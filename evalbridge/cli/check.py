"""``evalbridge check QRELS RUN -m ...``: the cross-check report; exit 1 on an unexplained difference."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import InputError
from .shared import (EXIT_FAILED, EXIT_OK, add_conventions, add_inputs, add_metrics, add_quiet, add_statistics,
                     config_of, emit, note_official, positionals, progress, refuse_overwrites)



def handle(args: argparse.Namespace) -> int:
    from ..config.pipeline import run_config
    from ..views.formats import check_formats, report_format

    qrels, runs = positionals(args)
    if len(runs) != 1:
        raise InputError(f"check cross-checks one run; got {len(runs)} ({', '.join(runs)}).",
                         fix="give QRELS and one RUN, or one input holding both; check each run on its own.")
    config = config_of(args, qrels, runs)
    refuse_overwrites(args, config)
    with progress(not args.quiet) as on_step:
        outcome = run_config(config, on_step=on_step, write=False)
    note_official(args, config)
    check = next(iter(outcome.report.crosscheck.values()))
    show = report_format(args.format).check
    if show is None:  # argparse offers only the formats that declare a check view
        raise InputError(f"check cannot show the format {args.format!r}; choose one of {', '.join(check_formats())}.")
    emit(show(outcome.report), args.output, args)
    if not check.ok:
        print(f"evalbridge: the cross-check found {len(check.unexplained)} unexplained difference(s)",
              file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..backends import CROSSCHECK_BACKENDS
    from ..views.formats import check_formats

    ck = commands.add_parser("check", help="cross-check every value against other libraries",
                             description="Compute every metric per query on the reference and on each backend; "
                                         "explain every difference. Exit 1 on an unexplained one.")
    ck.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="QRELS then RUN, or one input holding both (a RAG log, a judged list...); RUN may be NAME=PATH")
    add_metrics(ck)
    ck.add_argument("--backends", nargs="+", default=list(CROSSCHECK_BACKENDS), metavar="BACKEND",
                    help="the libraries compared with the reference")
    ck.add_argument("--atol", type=float, default=1e-9, help="largest difference still counted as agreement")
    ck.add_argument("--canonicalise", action="store_true",
                    help="apply evalbridge's exact bridges first, so every backend must agree")
    ck.add_argument("--format", choices=check_formats(), default="terminal",
                    help="json: the whole report (as `eval --format json`), with the cross-check")
    ck.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write the report to this file instead of stdout")
    add_statistics(ck, "seed", hidden=True)
    ck.add_argument("--title", default=None, help="heading of the report")
    add_quiet(ck)
    add_inputs(ck)
    add_conventions(ck)
    ck.set_defaults(handler=handle)
