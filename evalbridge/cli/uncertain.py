"""``evalbridge uncertain RUN -m METRIC --judges QRELS... | --probabilities QRELS``: a metric with its labels' uncertainty."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import InputError
from .shared import (EXIT_OK, add_conventions, add_inputs, add_quiet, add_shown, add_statistics, config_of, emit,
                     note_official, refuse_overwrites, statistics_given)

#: the fields of Statistics uncertain's flags set
_STATISTICS = ("n_resamples", "confidence", "seed")


def handle(args: argparse.Namespace) -> int:
    from ..config.sources import load_qrels, load_run, source_from_path
    from ..evalsets.uncertainty import uncertain

    if (not args.judges) == (args.probabilities is None):
        raise InputError("give either --judges QRELS QRELS... (several judges' grades) or --probabilities QRELS "
                         "(probabilities of relevance), not both and not neither.",
                         fix="evalbridge uncertain run.txt -m P@10 --judges ann.qrels bob.qrels")
    first = args.probabilities if args.probabilities is not None else args.judges[0]
    config = config_of(args, first, [args.run])
    names = [Path(p).name for p in args.judges]
    if len(set(names)) != len(names):
        names = [f"judge{i + 1}" for i in range(len(names))]
    sources = {n: source_from_path(p, "qrels", args.qrels_format, f"judges.{n}") for n, p in zip(names, args.judges)}
    refuse_overwrites(args, config)
    level = config.settings.min_relevance
    (name, source), = config.runs.items()
    run = load_run(source, name, None, level)[1]
    asked = args.metrics[0] if len(args.metrics) == 1 else list(args.metrics)
    options = dict(system=name, draws=args.draws, statistics=statistics_given(args, *_STATISTICS),
                   settings=config.settings)
    if args.judges:
        judges = {n: load_qrels(judge, level) for n, judge in sources.items()}
        found = uncertain(run, asked, judges=judges, **options)
    else:
        found = uncertain(run, asked, probabilities=load_qrels(config.qrels, level), **options)
    note_official(args, config)
    emit(found.table(args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..evalsets.uncertainty import UNCERTAINTY_PARAMETERS

    un = commands.add_parser("uncertain", help="a metric with the uncertainty of its labels (several judges, or "
                                               "probabilities of relevance)",
                             description="The expected value of the metric and an interval bootstrapped over queries "
                                         "and labels (one judge, or one labelling drawn from the probabilities, per "
                                         "query), beside the interval of the queries alone.")
    un.add_argument("run", metavar="RUN", help="the run: PATH or NAME=PATH")
    un.add_argument("-m", "--metrics", nargs="+", action="extend", required=True, metavar="METRIC",
                    help="the metrics, each measured")
    un.add_argument("--judges", nargs="+", default=[], metavar="QRELS", help="two or more judges' qrels of the same pairs")
    un.add_argument("--probabilities", default=None, metavar="QRELS",
                    help="one qrels whose grades are probabilities of relevance, in [0, 1]")
    un.add_argument("--draws", type=int, default=UNCERTAINTY_PARAMETERS["draws"].default,
                    help="labellings drawn from the probabilities (default 200)")
    add_statistics(un, *_STATISTICS)
    add_shown(un, "the measurement")
    un.add_argument("--title", default=None, help=argparse.SUPPRESS)
    add_quiet(un)
    add_inputs(un)
    add_conventions(un)
    un.set_defaults(handler=handle)
