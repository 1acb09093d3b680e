"""``evalbridge power QRELS BASE RUN... -m METRIC``: the smallest difference an eval set can detect (``power:``)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import add_conventions, add_inputs, add_metrics, add_quiet, add_shown, add_statistics, show_analysis


def handle(args: argparse.Namespace) -> int:
    from ..views.power_view import render_power

    return show_analysis(args, "power", render_power)


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..decisions.power import POWER_PARAMETERS, POWER_TESTS

    p = commands.add_parser(
        "power", help="the smallest difference the eval set can detect, and the queries a target effect needs",
        description="Evaluate every run once and, for each run against the first (the baseline) and each metric, "
                    "give the minimum detectable effect with the queries at hand and the queries needed to detect "
                    "the target effect (default: the observed difference), from the spread of the per-query "
                    "differences (eb.power; a config's power: section). Inputs: QRELS then the runs, or inputs that "
                    "hold their own judgements (RAG logs).")
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="QRELS, the baseline run, then one or more runs (each PATH or NAME=PATH)")
    add_metrics(p)
    p.add_argument("--test", choices=POWER_TESTS, default=None,
                   help="t (noncentral t, as statsmodels' TTestPower) or randomization (Fisher's test, from its "
                        "permutation distribution on small sets) (default t)")
    for name, kind in (("alpha", float), ("power", float), ("effect", float), ("sides", int)):
        rule = POWER_PARAMETERS[name]
        shown = "the observed |difference|" if rule.default is None else rule.default
        p.add_argument(f"--{name}", type=kind, default=None, metavar=name.upper(),
                       help=f"{rule.fix.rstrip('.')} (default {shown})".replace("%", "%%"))
    add_shown(p, "the table")
    p.add_argument("--title", default=None, help=argparse.SUPPRESS)
    add_statistics(p, "seed", hidden=True)
    add_quiet(p)
    add_inputs(p)
    add_conventions(p)
    p.set_defaults(handler=handle)
