"""``evalbridge diagnose QRELS RUN RUN... -m METRIC...``: can this test collection tell these systems apart, and is it biased?"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .shared import (EXIT_OK, add_conventions, add_inputs, add_quiet, add_shown, add_statistics, config_of, emit,
                     refuse_overwrites, statistics_given)

#: the metric diagnosed when -m is left out
DEFAULT_METRIC = "nDCG@10"
#: the fields of Statistics diagnose's flags set
_STATISTICS = ("test", "correction", "alpha", "n_resamples", "seed")


def _inputs(args: argparse.Namespace) -> tuple[Any, dict[str, Any], Any, Any]:
    """(qrels, name -> run, settings, the judgements B or None) read as ``evalbridge eval`` reads them (the
    config's schema and sources)."""
    from ..config.sources import load_qrels, load_run, source_from_path

    if len(args.inputs) < 3:
        raise InputError(f"diagnose needs QRELS and at least two runs; got {len(args.inputs)} input"
                         f"{'s' if len(args.inputs) != 1 else ''}.", fix="evalbridge diagnose qrels.txt a.run b.run")
    config = config_of(args, args.inputs[0], args.inputs[1:])
    other = None if args.judgements_b is None else \
        source_from_path(args.judgements_b, "qrels", args.qrels_format, "judgements_b")
    refuse_overwrites(args, config)
    level = config.settings.min_relevance
    qrels = load_qrels(config.qrels, level)
    runs = {name: load_run(source, name, qrels, level)[1] for name, source in config.runs.items()}
    return qrels, runs, config.settings, None if other is None else load_qrels(other, level)


def handle(args: argparse.Namespace) -> int:
    from ..evalsets.diagnostics import diagnose

    args.metrics = metrics = args.metrics or [DEFAULT_METRIC]  # (extend would add to a default list, not replace it)
    qrels, runs, settings, other = _inputs(args)
    found = diagnose(qrels, runs, metrics[0] if len(metrics) == 1 else metrics, judgements_b=other, pool_depth=args.pool_depth, trials=args.trials,
                     statistics=statistics_given(args, *_STATISTICS), settings=settings)
    emit(found.table(args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..evalsets.diagnostics import DIAGNOSIS_PARAMETERS

    di = commands.add_parser("diagnose", help="diagnostics of a test collection: can it tell these systems apart?",
                             description="Discriminative power, swap rate between random halves of the queries, "
                                         "leave-one-run-out pool bias, saturated queries, judged share by rank and, "
                                         "with --judgements-b, the agreement of two sets of judgements; each with "
                                         "what it means for a decision.")
    di.add_argument("inputs", nargs="+", metavar="INPUT", help="QRELS then two or more RUNs (each PATH or NAME=PATH)")
    di.add_argument("-m", "--metrics", nargs="+", action="extend", default=None, metavar="METRIC",
                    help=f"the metrics the systems are compared on, each diagnosed (default {DEFAULT_METRIC})")
    di.add_argument("--judgements-b", default=None, metavar="QRELS_B",
                    help="a second set of judgements of the same pairs (another judge): their agreement")
    di.add_argument("--pool-depth", type=int, default=DIAGNOSIS_PARAMETERS["pool_depth"].default, metavar="N",
                    help="depth of the pool: a run's own documents are those in its first N that no other run has "
                         "there (default 100)")
    di.add_argument("--trials", type=int, default=DIAGNOSIS_PARAMETERS["trials"].default, metavar="N",
                    help="random splits of the queries into halves for the swap rate (default 1000)")
    add_statistics(di, *_STATISTICS)
    add_shown(di, "the diagnosis")
    di.add_argument("--title", default=None, help=argparse.SUPPRESS)
    add_quiet(di)
    add_inputs(di)
    add_conventions(di)
    di.set_defaults(handler=handle)
