"""``evalbridge agree QRELS_A QRELS_B [RUN...]``: agreement of two sets of judgements, as a config's ``agreement:``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import InputError
from .shared import (EXIT_OK, FLAGS, add_conventions, add_inputs, add_quiet, add_statistics, conventions, emit,
                     input_source, named_runs, policies, progress, refuse_overwrites, side_columns)



#: agreement key path -> the ``evalbridge agree`` flag that sets it (the judges' own paths are added per call).
AGREE_FLAGS: dict[tuple[str, ...], str] = {
    ("agreement", "runs"): "RUN", ("agreement", "metrics"): "--metrics", ("agreement", "bins"): "--bins",
    ("agreement", "alpha_level"): "--alpha-level", ("agreement", "test"): "--test", ("agreement", "alpha"): "--alpha",
    ("agreement", "n_resamples"): "--n-resamples",
}


def _agreement_config(args: argparse.Namespace) -> Any:
    """``evalbridge agree`` as a :class:`~evalbridge.config.schema.Config` with an ``agreement:`` section,
    checked by the config's own schema (the same keys and rules as a config file's)."""
    from ..config.checking import FlagLocator
    from ..config.schema import validate

    stems = [Path(p).name.removesuffix(".gz").rsplit(".", 1)[0] for p in (args.qrels_a, args.qrels_b)]
    names = args.names or (stems if stems[0] != stems[1] else ["a", "b"])
    runs = named_runs(args.runs)
    sides = [(args.qrels_a, args.qrels_format, "qrels", "--qrels-columns"),
             (args.qrels_b, args.qrels_format, "qrels", "--qrels-columns"),
             *((path, args.run_format, "run", "--run-columns") for path in runs.values())]
    columns = side_columns(args, sides)
    section: dict[str, Any] = {
        "judges": {names[0]: input_source(args.qrels_a, args.qrels_format, columns[0]),
                   names[1]: input_source(args.qrels_b, args.qrels_format, columns[1])},
        "metrics": list(args.metrics), "alpha_level": args.alpha_level, "test": args.test, "alpha": args.alpha,
        "n_resamples": args.n_resamples,
    }
    if args.runs:
        section["runs"] = {name: input_source(path, args.run_format, wanted)
                           for (name, path), wanted in zip(runs.items(), columns[2:])}
    if args.bins is not None:
        section["bins"] = list(args.bins)
    for name, edges in zip(names, (args.bins_a, args.bins_b)):
        if edges is not None:
            if isinstance(section.get("bins"), list):
                raise InputError("give either --bins (both judges) or --bins-a / --bins-b (one each), not both.",
                                 fix="drop --bins, or the per-judge flags.")
            section.setdefault("bins", {})[name] = list(edges)
    raw: dict[str, Any] = {
        "title": args.title or f"evalbridge agree {Path(args.qrels_a).name} {Path(args.qrels_b).name}",
        "agreement": section, **conventions(args), **policies(args),
    }
    flags: dict[tuple[str, ...], str] = {
        **FLAGS, **AGREE_FLAGS, ("agreement", "judges", names[0]): "QRELS_A",
        ("agreement", "judges", names[1]): "QRELS_B", ("agreement", "bins", names[0]): "--bins-a",
        ("agreement", "bins", names[1]): "--bins-b", ("agreement", "judges"): "--names"}
    return validate(raw, locator=FlagLocator(flags), folder=Path.cwd(), default_dir=None)


def handle(args: argparse.Namespace) -> int:
    from ..config.pipeline import run_config
    from ..reports.report import render

    config = _agreement_config(args)
    refuse_overwrites(args, config)
    with progress(not args.quiet) as on_step:
        outcome = run_config(config, on_step=on_step, write=False)
    emit(render(outcome.report, "terminal" if args.format == "text" else args.format), args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..views.formats import report_formats
    from ..evalsets.agreement import DEFAULT_METRICS
    from ..stats.kappa import ALPHA_LEVELS

    ag = commands.add_parser("agree", help="agreement between two sets of judgements (e.g. human vs LLM judge)",
                             description="Compare two qrels over the (query, doc) pairs both judged: confusion, "
                                         "Cohen's kappa (plain, quadratic), Krippendorff's alpha; with runs, the "
                                         "system rankings each induces: Kendall's tau, tau_ap, flipped significant "
                                         "differences.")
    ag.add_argument("qrels_a", metavar="QRELS_A", help="the first judgements (e.g. human)")
    ag.add_argument("qrels_b", metavar="QRELS_B", help="the second judgements (e.g. an LLM judge)")
    ag.add_argument("runs", nargs="*", metavar="RUN", help="runs to rank under both (two or more), each PATH or NAME=PATH")
    ag.add_argument("-m", "--metrics", nargs="+", default=list(DEFAULT_METRICS), metavar="METRIC",
                    help="metrics the systems are ranked by, under each set of judgements")
    ag.add_argument("--names", nargs=2, default=None, metavar=("A", "B"), help="names of the two judges")
    ag.add_argument("--bins", nargs="+", type=float, default=None, metavar="T",
                    help="thresholds turning grades into categories (both sides)")
    ag.add_argument("--bins-a", nargs="+", type=float, default=None, metavar="T",
                    help="thresholds for the first judges' grades only")
    ag.add_argument("--bins-b", nargs="+", type=float, default=None, metavar="T",
                    help="thresholds for the second judges' grades only")
    ag.add_argument("--alpha-level", default="ordinal", metavar="LEVEL",
                    help=f"Krippendorff's alpha level of measurement: {', '.join(ALPHA_LEVELS)} (default ordinal)")
    add_statistics(ag, "test", "alpha", "n_resamples", "seed")
    ag.add_argument("--format", choices=["text", *report_formats()], default="text",
                    help="a report format (text = terminal): the report `evalbridge run` writes")
    ag.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write the report to this file instead of stdout")
    ag.add_argument("--title", default=None, help="heading of the report")
    add_quiet(ag)
    add_inputs(ag)
    add_conventions(ag)
    ag.set_defaults(handler=handle)
