"""``evalbridge diff QRELS RUN_A RUN_B -m METRIC...``: where run B differs from run A, query by query (a config's
``diff:``); ``evalbridge diff RUN_A RUN_B``, without judgements: how far the rankings moved (a ``diff:`` of the two
runs as its own, ``eb.diff(None, ...)``: RBO with its bounds, Jaccard at k, tau and tau_AP per query and overall)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import InputError
from .shared import (DIFF_FLAGS, EXIT_OK, FLAGS, add_conventions, add_inputs, add_metrics, add_quiet, add_shown,
                     add_statistics, config_of, conventions, emit, input_source, named_runs, note_official, policies,
                     refuse_overwrites, side_columns)


def _inputs(args: argparse.Namespace) -> tuple[str | None, str, str]:
    """``(QRELS or None, RUN_A, RUN_B)`` of the command line's two or three inputs."""
    if len(args.inputs) not in (2, 3):
        raise InputError(f"diff takes RUN_A RUN_B, or QRELS RUN_A RUN_B; got {len(args.inputs)} inputs.",
                         fix="give the two runs compared, after the qrels when their metrics are compared.")
    *qrels, run_a, run_b = args.inputs
    return (qrels[0] if qrels else None), run_a, run_b


def _similarity(args: argparse.Namespace, run_a: str, run_b: str) -> int:
    """The rankings of two runs compared without judgements: a config whose ``diff:`` has the two runs as its own
    (:func:`evalbridge.decisions.diffing.diff` of no qrels), run by the one pipeline."""
    from ..config.checking import FlagLocator
    from ..config.pipeline import run_config
    from ..config.schema import validate
    from ..views.run_diff import render_diff

    if args.metrics:
        raise InputError("metrics need judgements, and diff was given no QRELS (two inputs: the runs).",
                         fix="give QRELS RUN_A RUN_B to compare the metrics, or leave -m out to compare the rankings.")
    runs = named_runs([run_a, run_b])
    columns = side_columns(args, [(path, args.run_format, "run", "--run-columns") for path in runs.values()])
    section = {"k": args.k, "queries": args.queries, "moves": args.moves,
               **{key: value for key, value in (("p", args.p), ("rbo_ties", args.rbo_ties)) if value is not None},
               "runs": {name: input_source(path, args.run_format, wanted)
                        for (name, path), wanted in zip(runs.items(), columns)}}
    raw = {"title": args.title or f"evalbridge diff {Path(run_a).name} {Path(run_b).name}", "diff": section,
           **conventions(args), **policies(args)}
    config = validate(raw, locator=FlagLocator({**FLAGS, **DIFF_FLAGS}), folder=Path.cwd(), default_dir=None)
    refuse_overwrites(args, config)
    outcome = run_config(config, write=False)
    emit(render_diff(next(iter(outcome.report.analyses["diff"].values())), args.format), args.output, args)
    return EXIT_OK


def handle(args: argparse.Namespace) -> int:
    from ..config.pipeline import run_config
    from ..views.run_diff import render_diff

    qrels, run_a, run_b = _inputs(args)
    if qrels is None:
        return _similarity(args, run_a, run_b)
    if not args.metrics:
        raise InputError("diff with QRELS compares metrics, and none was given.",
                         fix="add -m METRIC..., e.g. -m ndcg@10 P@10; or leave QRELS out to compare the rankings.")
    config = config_of(args, qrels, [run_a, run_b])
    refuse_overwrites(args, config)
    outcome = run_config(config, write=False)
    note_official(args, config)
    found = next(iter(outcome.report.analyses["diff"].values()))
    emit(render_diff(found, args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..decisions.diffing import DIFF_PARAMETERS
    from ..stats.similarity import SIMILARITY_PARAMETERS

    p = commands.add_parser(
        "diff", help="where run B differs from run A, query by query (without QRELS: how far the rankings moved)",
        description="Evaluate RUN_A and RUN_B once each, rank every query by the change of each metric, and show for "
                    "the largest drops and gains the judged documents that entered or left the top k (grade, rank in "
                    "A and B), the unjudged ones, and the largest rank moves (a config's diff: section). Without QRELS "
                    "(RUN_A RUN_B only): the rankings compared, per query and overall: rank-biased overlap with its "
                    "min / max / residual, Jaccard at k, Kendall's tau and tau_AP over the shared documents.")
    p.add_argument("inputs", nargs="+", metavar="[QRELS] RUN_A RUN_B",
                   help="the judgements (leave them out to compare the rankings only), the run compared with (the "
                        "baseline) and the run compared, each run PATH or NAME=PATH")
    add_metrics(p, required=False)
    persistence, ties = SIMILARITY_PARAMETERS["p"], SIMILARITY_PARAMETERS["ties"]
    p.add_argument("--p", dest="p", type=float, default=None, metavar="P",
                   help=f"the rankings' similarity (always without QRELS; with QRELS given this or --rbo-ties): "
                        f"{persistence.fix.rstrip('.')} (default {persistence.default})".replace("%", "%%"))
    p.add_argument("--rbo-ties", dest="rbo_ties", default=None, metavar="w|a|b",
                   help=f"RBO's treatment of ties: {ties.fix.rstrip('.')} (default a)".replace("%", "%%"))
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
