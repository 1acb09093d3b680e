"""``evalbridge diff QRELS RUN_A RUN_B -m METRIC...``: where run B differs from run A, query by query (a config's ``diff:``)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import (add_statistics, EXIT_OK, add_conventions, add_inputs, add_metrics, add_quiet, add_shown, config_of, emit,
                     refuse_overwrites)


def handle(args: argparse.Namespace) -> int:
    from ..config.pipeline import run_config
    from ..views.run_diff import render_diff

    config = config_of(args, args.qrels, [args.run_a, args.run_b])
    refuse_overwrites(args, config)
    outcome = run_config(config, write=False)
    found = next(iter(outcome.report.analyses["diff"].values()))
    emit(render_diff(found, args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..decisions.diffing import DIFF_PARAMETERS

    p = commands.add_parser(
        "diff", help="where run B differs from run A, query by query",
        description="Evaluate RUN_A and RUN_B once each, rank every query by the change of each metric, and show for "
                    "the largest drops and gains the judged documents that entered or left the top k (grade, rank in "
                    "A and B), the unjudged ones, and the largest rank moves (a config's diff: section).")
    p.add_argument("qrels", metavar="QRELS", help="the judgements")
    p.add_argument("run_a", metavar="RUN_A", help="the run compared with (the baseline): PATH or NAME=PATH")
    p.add_argument("run_b", metavar="RUN_B", help="the run compared: PATH or NAME=PATH")
    add_metrics(p)
    for flag, name in (("-k", "k"), ("--queries", "queries"), ("--moves", "moves")):
        rule = DIFF_PARAMETERS[name]
        p.add_argument(flag, dest=name, type=int, default=rule.default, metavar="N",
                       help=f"{rule.fix.rstrip('.')} (default {rule.default})")
    add_shown(p, "the diff")
    p.add_argument("--title", default=None, help="heading of the report")
    add_statistics(p, "seed", hidden=True)
    add_quiet(p)
    add_inputs(p)
    add_conventions(p)
    p.set_defaults(handler=handle)
