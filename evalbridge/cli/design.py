"""``evalbridge design QRELS RUN RUN... -m METRIC``: the queries a collection needs (Sakai's topic set size design,
``topic_set_size:``)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import (EXIT_OK, add_conventions, add_inputs, add_metrics, add_quiet, add_shown, config_of, emit,
                     positionals, refuse_overwrites)


def handle(args: argparse.Namespace) -> int:
    from ..config.pipeline import run_config
    from ..views.topic_set_size import render_topic_set_size

    qrels, runs = positionals(args)
    config = config_of(args, qrels, runs)
    refuse_overwrites(args, config)
    outcome = run_config(config, write=False)
    emit(render_topic_set_size(outcome.report.analyses["topic_set_size"], args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..decisions.topic_set_size import TOPIC_SET_PARAMETERS

    p = commands.add_parser(
        "design", help="the queries a collection needs to tell systems apart (topic set size design)",
        description="Evaluate every run once and, metric by metric, estimate the within-system variance (the residual "
                    "of the two-way ANOVA of runs x queries) and give the queries a paired t-test, a one-way ANOVA "
                    "and a confidence interval need at the requirements given (Sakai's topic set size design; "
                    "eb.topic_set_size; a config's topic_set_size: section). Inputs: QRELS then the runs (a pilot or "
                    "an existing collection), or inputs that hold their own judgements.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="QRELS, then two or more runs (each PATH or NAME=PATH)")
    add_metrics(p)
    for name, kind in (("min_difference", float), ("alpha", float), ("beta", float), ("ci_width", float),
                       ("systems", int)):
        rule = TOPIC_SET_PARAMETERS[name]
        shown = {"ci_width": "the minimum difference", "systems": "the runs' count"}.get(name, rule.default)
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=None, metavar=name.upper(),
                       help=f"{rule.fix.rstrip('.')} (default {shown})".replace("%", "%%"))
    add_shown(p, "the table")
    p.add_argument("--title", default=None, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    add_quiet(p)
    add_inputs(p)
    add_conventions(p)
    p.set_defaults(handler=handle)
