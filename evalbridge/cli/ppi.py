"""``evalbridge ppi QRELS BASE RUN... --human HUMAN -m METRIC``: prediction-powered estimates (a config's ``ppi:``)."""

from __future__ import annotations

import argparse
from typing import Any

from .shared import (EXIT_OK, add_conventions, add_inputs, add_metrics, add_quiet, add_rules, add_shown, config_of, emit,
                     note, note_official, positionals, refuse_overwrites)


def handle(args: argparse.Namespace) -> int:
    from ..common.json_data import json_text
    from ..config.pipeline import run_config
    from ..errors import InputError
    from ..reports.writing import STDOUT, check_outputs

    qrels, runs = positionals(args)
    if qrels is None:
        raise InputError("ppi corrects a judge's labels: give them first (QRELS), then the runs.",
                         fix="evalbridge ppi llm.qrels bm25.run dense.run --human human.qrels -m nDCG@10")
    planned = args.plan_width is not None or args.plan_difference is not None
    if (args.cost_human is not None or args.cost_llm is not None) and not planned:
        raise InputError("--cost-human / --cost-llm price a plan, and no plan is asked for.",
                         fix="add --plan-width W (or --plan-difference D).")
    if (args.topics is not None or args.corpus is not None) and args.batch is None:
        raise InputError("--topics / --corpus give the texts of a judging batch, and no --batch file is named.",
                         fix="add --batch batch.jsonl (the items to label next, with their texts).")
    config = config_of(args, qrels, runs)
    refuse_overwrites(args, config)
    inputs = [s.path for s in (config.qrels, *config.runs.values()) if s is not None and s.path is not None]
    check_outputs(inputs + [args.human], files=[args.output or STDOUT, args.batch])
    outcome = run_config(config, write=False)
    note_official(args, config)
    result = outcome.report.analyses["ppi"]
    plan = result.plan(width=args.plan_width, difference=args.plan_difference, cost_human=args.cost_human,
                       cost_llm=args.cost_llm) if planned else None
    if args.format == "json":
        text = json_text({**result.to_dict(), **({"plan": plan.to_dict()} if plan is not None else {})})
    else:
        text = result.table(args.format) + ("" if plan is None else "\n" + plan.table(args.format))
    if args.batch is not None:
        written = result.write_batch(args.batch, args.batch_size, by=args.by, queries=args.topics,
                                     documents=args.corpus)
        note(args, f"wrote {written}: the next {args.batch_size} {'queries' if result.unit == 'query' else 'pairs'} "
                   f"to label ({args.by})")
    emit(text, args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..evalsets.prediction_powered import PPI_PARAMETERS

    p = commands.add_parser(
        "ppi", help="metrics from a judge's labels of every pair and humans' of a sample (prediction-powered)",
        description="Each run's metrics and each difference against the first run (the baseline), estimated from a "
                    "judge's labels of every pair (QRELS, an LLM's) and the humans' labels of a random sample "
                    "(--human), PPI++ with the judge's power-tuned weight, beside the human sample's interval and "
                    "the judge-only number (eb.ppi; a config's ppi: section); optionally the human labels a target "
                    "needs (--plan-width / --plan-difference) and the items to label next (--batch).")
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="QRELS (the judge's labels), the baseline run, then the other runs (each PATH or NAME=PATH)")
    p.add_argument("--human", required=True, metavar="QRELS", help="the humans' labels of a random sample")
    add_metrics(p)
    add_rules(p, PPI_PARAMETERS, ("unit",),
              helps={"unit": "what the humans sampled: query (each labelled whole) or pair (P@k, DCG)"})
    p.add_argument("--scale", nargs=2, type=float, default=None, metavar=("LOW", "HIGH"),
                   help="the grades of both sets of labels (default: the human labels' range)")
    add_rules(p, PPI_PARAMETERS, ("confidence", "alpha", "correction"),
              helps={"confidence": "level of the intervals", "alpha": "significance level of the differences",
                     "correction": "over every (system, metric) difference"})
    p.add_argument("--plan-width", type=float, default=None, metavar="W",
                   help="also give the human labels an interval no wider than W needs, with the judge and without")
    p.add_argument("--plan-difference", type=float, default=None, metavar="D",
                   help="also give the human labels detecting a difference D needs (power 0.8)")
    p.add_argument("--cost-human", type=float, default=None, help="the cost of one human label, for the plan")
    p.add_argument("--cost-llm", type=float, default=None, help="the cost of one judge label, for the plan")
    p.add_argument("--batch", default=None, metavar="PATH",
                   help="write the items to label next as a judging batch, JSON Lines (read back by merge)")
    p.add_argument("--batch-size", type=int, default=100, help="how many items the batch holds (default 100)")
    p.add_argument("--by", choices=("judge", "systems"), default="judge",
                   help="label next where the judge is least reliable, or where the systems differ most "
                        "(default judge)")
    p.add_argument("--topics", default=None, help="the queries' texts for the batch: TREC topics, BEIR queries.jsonl")
    p.add_argument("--corpus", default=None, help="the documents' texts for the batch: BEIR corpus.jsonl")
    add_shown(p, "the estimates")
    p.add_argument("--title", default=None, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    add_quiet(p)
    add_inputs(p)
    add_conventions(p)
    p.set_defaults(handler=handle)
