"""``evalbridge design QRELS RUN RUN... -m METRIC``: the queries a collection needs (Sakai's topic set size design,
``topic_set_size:``)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import add_conventions, add_inputs, add_metrics, add_quiet, add_shown, show_analysis


def handle(args: argparse.Namespace) -> int:
    from ..views.topic_set_size import render_topic_set_size

    return show_analysis(args, "topic_set_size", render_topic_set_size)


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
