"""``evalbridge changed BEFORE AFTER RUN... -m METRIC``: what new judgements changed: means, orderings, significance, the system to ship."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .shared import (EXIT_OK, add_conventions, add_inputs, add_quiet, add_statistics, config_of, emit, refuse_overwrites,
                     statistics_given)

#: the fields of Statistics changed's flags set
_STATISTICS = ("test", "alpha", "n_resamples", "seed")


def handle(args: argparse.Namespace) -> int:
    from ..config.sources import load_qrels, load_run, source_from_path
    from ..evalsets.changes import what_changed

    if len(args.runs) < 2:
        raise InputError(f"changed needs BEFORE, AFTER and two runs or more; got {len(args.runs)} run"
                         f"{'s' if len(args.runs) != 1 else ''}.", fix="evalbridge changed before.txt after.jsonl a.run b.run")
    config = config_of(args, args.before, args.runs)
    after_source = source_from_path(args.after, "qrels", args.after_format, "AFTER")
    refuse_overwrites(args, config)
    level = config.settings.min_relevance
    before = load_qrels(config.qrels, level)
    after = load_qrels(after_source, level)
    runs = {name: load_run(source, name, before, level)[1] for name, source in config.runs.items()}
    found = what_changed(before, after, runs, list(args.metrics), statistics=statistics_given(args, *_STATISTICS),
                         settings=config.settings)
    emit(found.render("terminal" if args.format == "text" else args.format).rstrip("\n") + "\n", args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    ch = commands.add_parser("changed", help="what new judgements changed: means, orderings, significance, ship",
                             description="Evaluate the runs with the judgements BEFORE and AFTER (e.g. merged with a "
                                         "judge's grades): each system's mean, Kendall's tau and tau_ap between the "
                                         "orderings, every pair's significance decision before and after, and "
                                         "whether the same system would be shipped (by the first metric).")
    ch.add_argument("before", metavar="BEFORE", help="the judgements before")
    ch.add_argument("after", metavar="AFTER", help="the judgements after")
    ch.add_argument("runs", nargs="*", metavar="RUN", help="the runs (two or more), each PATH or NAME=PATH")
    ch.add_argument("-m", "--metrics", nargs="+", default=["nDCG@10"], metavar="METRIC",
                    help="the metrics; the first decides which system to ship (default nDCG@10)")
    ch.add_argument("--after-format", default=None, metavar="FMT", help="input format of AFTER")
    add_statistics(ch, *_STATISTICS)
    ch.add_argument("--format", choices=["text", "markdown", "json"], default="text", help="output format")
    ch.add_argument("-o", "--output", default=None, metavar="PATH", help="write to this file instead of stdout")
    ch.add_argument("--title", default=None, help=argparse.SUPPRESS)
    add_quiet(ch)
    add_inputs(ch)
    add_conventions(ch)
    ch.set_defaults(handler=handle)
