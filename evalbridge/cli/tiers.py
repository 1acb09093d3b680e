"""``evalbridge tiers QRELS RUN RUN... -m METRIC``: the tiers no test separates and each run's rank interval (``tiers:``)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import add_conventions, add_inputs, add_metrics, add_quiet, add_shown, show_analysis


def handle(args: argparse.Namespace) -> int:
    from ..views.tiers import render_tiers

    return show_analysis(args, "tiers", render_tiers)


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..stats.tiers import TIER_METHODS, TIERS_PARAMETERS

    p = commands.add_parser(
        "tiers", help="the tiers of runs no test over all pairs separates, and each run's rank interval",
        description="Evaluate every run once and, metric by metric, test every pair of runs at once (the family-wise "
                    "error over all pairs controlled), group the runs no test separates into tiers (letters) and give "
                    "each run's rank interval from the bootstrap over the queries every run has (Comparison.tiers; a "
                    "config's tiers: section). Inputs: QRELS then the runs, or inputs that hold their own judgements.")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="QRELS, then two or more runs (each PATH or NAME=PATH)")
    add_metrics(p)
    p.add_argument("--method", choices=TIER_METHODS, default=None,
                   help="randomization (Carterette's randomised Tukey HSD, default), bootstrap (the bootstrap of the "
                        "maximum statistic) or tukey (Tukey's HSD on the two-way ANOVA residual)")
    for name, kind in (("alpha", float), ("confidence", float), ("n_resamples", int)):
        rule = TIERS_PARAMETERS[name]
        p.add_argument(f"--{name.replace('_', '-')}", dest=name, type=kind, default=None, metavar=name.upper(),
                       help=f"{rule.fix.split(';')[0].rstrip('.')} (default {rule.default})".replace("%", "%%"))
    add_shown(p, "the tables")
    p.add_argument("--title", default=None, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help="seed of the permutations and the bootstrap (default 0)")
    add_quiet(p)
    add_inputs(p)
    add_conventions(p)
    p.set_defaults(handler=handle)
