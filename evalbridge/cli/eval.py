"""``evalbridge eval QRELS RUN... -m METRIC...``: a quick evaluation from files, printed as a report."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import (EXIT_OK, add_conventions, add_inputs, add_metrics, add_quiet, add_statistics, add_tracking,
                     config_of, emit, note, note_tracked, positionals, progress, refuse_overwrites)



def handle(args: argparse.Namespace) -> int:
    from ..config.pipeline import run_config
    from ..views.formats import render

    qrels, runs = positionals(args)
    config = config_of(args, qrels, runs)
    refuse_overwrites(args, config)
    with progress(len(runs) > 1 and not args.quiet) as on_step:
        outcome = run_config(config, on_step=on_step, write=False)
    emit(render(outcome.report, args.format), args.output, args)
    note_tracked(args, outcome)
    if args.per_query is not None:
        from ..reports.per_query import per_query_format_of, write_per_query

        fmt = per_query_format_of(args.per_query)
        write_per_query(outcome.report.results, args.per_query, fmt=fmt, provenance=outcome.report.provenance)
        if args.per_query != "-":
            note(args, f"wrote {args.per_query}")
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..views.formats import report_formats
    ev = commands.add_parser("eval", help="evaluate run files against qrels",
                             description="Evaluate one or more runs against QRELS; each run is named after its file, or NAME=PATH names it. "
                                         "Inputs that hold their own judgements (a RAG log, a judged list, label "
                                         "lists) are evaluated alone, one system each: evalbridge eval log.jsonl -m "
                                         "mrr; several logs of the same questions are several systems.")
    ev.add_argument("inputs", nargs="+", metavar="INPUT",
                    help="QRELS then RUN..., or inputs that each hold qrels and a run (RAG logs, judged lists...); a run is "
                         "PATH (named after its file: bm25 for bm25.txt) or NAME=PATH, as a config's runs: names it")
    add_metrics(ev)
    ev.add_argument("--format", choices=list(report_formats()), default="terminal", help="output format")
    ev.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="write the report to this file instead of stdout")
    ev.add_argument("--per-query", default=None, metavar="PATH", help="also write per-query values (.csv/.parquet)")
    ev.add_argument("--baseline", default=None, metavar="NAME",
                    help="compare every run with this one: its name (bm25 for bm25=runs/x.txt or for bm25.txt), "
                         "or NAME=PATH, one more run that is the baseline")
    add_statistics(ev, "test", "correction", "alpha", "confidence", "n_resamples", "seed")
    ev.add_argument("--slice-by", default=None, metavar="FIELD",
                    help="per-slice means, intervals and differences against the baseline (slices:): a field of "
                         "the RAG logs holding each question's label(s), or with --slices-file a column of a table")
    ev.add_argument("--slices-file", default=None, metavar="TABLE",
                    help="a query table (CSV, TSV, Parquet, JSON Lines; a query-id column) whose --slice-by column "
                         "holds each query's slice")
    ev.add_argument("--bands", action="store_true",
                    help="add the RAG quality bands (poor / fair / good / excellent per metric; docs/config.md)")
    ev.add_argument("--title", default=None, help="heading of the report")
    ev.add_argument("--engine", default=None, metavar="ENGINE",
                    help="local (default) or spark: evaluate on a Spark session (the active one, else one started "
                         "on --spark-master); QRELS and RUN may then be Parquet folders or, with --qrels-format / "
                         "--run-format spark-table, tables of the session's catalog")
    ev.add_argument("--spark-master", default=None, metavar="URL",
                    help="master of the session started with --engine spark when none is active (default local[*])")
    ev.add_argument("--spark-buckets", type=int, default=None, metavar="N",
                    help="query buckets with --engine spark (default 4 x spark.sql.shuffle.partitions)")
    add_quiet(ev)
    add_inputs(ev)
    add_conventions(ev)
    add_tracking(ev)
    ev.set_defaults(handler=handle)
