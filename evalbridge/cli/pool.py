"""``evalbridge pool QRELS RUN... --depth 10``: the unjudged pairs in any run's first d documents, and a judging batch."""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import InputError
from .shared import EXIT_OK, add_policies, add_quiet, emit, note, named_runs, policies


class _Runs(Mapping[str, Any]):
    """The runs of the command line by name, each read when the pool asks for it (one at a time)."""

    def __init__(self, paths: list[str], fmt: str | None, options: Mapping[str, Any]) -> None:
        self.paths = named_runs(paths)
        self.fmt, self.options = fmt, options

    def __getitem__(self, name: str) -> Any:
        from ..config.sources import source_from_path
        from ..io import read_run

        source = source_from_path(self.paths[name], "run", self.fmt, "RUN")
        return read_run(source.origin, format=source.format, name=name, **{**source.options, **self.options})

    def __iter__(self) -> Iterator[str]:
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


def handle(args: argparse.Namespace) -> int:
    from ..config.sources import load_qrels, source_from_path
    from ..io.judging import write_batch
    from ..evalsets.pooling import pool
    from ..model.data import Qrels
    from ..reports.writing import STDOUT, atomic_file, check_outputs

    if args.unjudged:  # nothing judged yet: every input is a run, every query a run answers is pooled
        if args.queries == "qrels":
            raise InputError("--unjudged pools the queries the runs answer (there are no qrels to take them from); "
                             "--queries qrels contradicts it.", fix="leave --queries out, or give QRELS and drop "
                                                                     "--unjudged.")
        args.runs, args.qrels, args.queries = [args.qrels, *args.runs], None, "runs"
    elif not args.runs:
        raise InputError("pool needs QRELS and at least one run (or --unjudged and the runs, when nothing is judged "
                         "yet).", fix="evalbridge pool qrels.txt a.run b.run --depth 10, or evalbridge pool "
                                      "--unjudged a.run b.run --depth 10")
    inputs = [*([args.qrels] if args.qrels is not None else []), *args.runs,
              *(p for p in (args.topics, args.corpus) if p is not None)]
    check_outputs(inputs, files=[args.output or STDOUT, args.batch])
    if (args.topics is not None or args.corpus is not None) and args.batch is None:
        raise InputError("--topics / --corpus give the texts of a judging batch, and no --batch file is named.",
                         fix="add --batch batch.jsonl (the pairs to judge, with their texts).")
    read = policies(args)
    ids = {"ids": read["ids"]} if "ids" in read else {}
    qrels = Qrels({}, allow_empty=True) if args.qrels is None else \
        load_qrels(source_from_path(args.qrels, "qrels", args.qrels_format, "QRELS", options=ids), None)
    found = pool(qrels, _Runs(args.runs, args.run_format, read), depth=args.depth, k=args.k,
                 queries=args.queries or "qrels",
                 strata=args.strata, seed=args.seed, ties=args.ties,
                 score_precision=args.score_precision)
    if args.batch is not None:
        with atomic_file(args.batch) as temporary:  # the old batch stays whole until the new one is
            write_batch(found, temporary, queries=args.topics or qrels.topics or None, documents=args.corpus,
                        topics_of=None if args.topics else qrels.source)
        to_judge = found.size() if found.drawn is None else int(found.drawn.sampled.sum())
        note(args, f"wrote {args.batch}: {to_judge} pairs to judge (depth {found.depths[-1]})")
    emit(found.render("terminal" if args.format == "text" else args.format).rstrip("\n") + "\n", args.output, args)
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..evalsets.pooling import QUERY_SCOPES, POOL_TIES
    from ..evalsets.stratified import STRATA_EXAMPLE
    from ..model.settings import SCORE_PRECISIONS

    po = commands.add_parser("pool", help="the unjudged pairs in any run's first d documents (depth pooling)",
                             description="Depth pooling: the (query, doc) pairs in the first d documents of any run "
                                         "that the qrels do not judge yet, per run and per query, with each run's "
                                         "Judged@k now and once the pool is judged; --batch writes them as a judging "
                                         "batch (JSON Lines: query_id, query, doc_id, passage).")
    po.add_argument("qrels", metavar="QRELS", help="the judgements so far (with --unjudged: the first run)")
    po.add_argument("runs", nargs="*", metavar="RUN", help="the runs to pool (one or more), each PATH or NAME=PATH (the name a config's runs: gives it)")
    po.add_argument("--unjudged", action="store_true",
                    help="nothing is judged yet: every input is a run (no QRELS), and every query a run answers is "
                         "pooled (--queries runs)")
    po.add_argument("--depth", type=int, nargs="+", default=None, metavar="N",
                    help="pool depth, or several (nested pools), e.g. --depth 10 20 50 (default 10, or the strata's "
                         "ends)")
    po.add_argument("--strata", nargs="+", default=None, metavar="RANKS:RATE",
                    help=f"sample the pool by rank strata, each at its inclusion rate, e.g. --strata {STRATA_EXAMPLE} "
                         f"(the batch records each pair's stratum and rate; merged back, xinfAP and infNDCG)")
    po.add_argument("--seed", type=int, default=0, metavar="N", help="seed of the strata's sample (default 0)")
    po.add_argument("-k", type=int, default=None, metavar="K", help="cutoff of Judged@k (default: the deepest depth)")
    po.add_argument("--queries", choices=list(QUERY_SCOPES), default=None,
                    help="; ".join(f"{name}: {what}" for name, what in QUERY_SCOPES.items()) +
                         " (default qrels; runs with --unjudged)")
    po.add_argument("--ties", choices=POOL_TIES, default="docid_desc",
                    help="order of tied scores (default: docid_desc, as trec_eval)")
    po.add_argument("--score-precision", choices=SCORE_PRECISIONS, default="float64",
                    help="precision scores are compared at; float32 reproduces trec_eval <= 9")
    po.add_argument("--batch", default=None, metavar="PATH",
                    help="write the pool (at the deepest depth) as a judging batch, JSON Lines")
    po.add_argument("--topics", default=None, metavar="PATH",
                    help="the queries' texts for the batch: TREC topics, BEIR queries.jsonl, a RAG log (default: "
                         "the topics of an irds: dataset, when ir_datasets' cache holds them)")
    po.add_argument("--corpus", default=None, metavar="PATH",
                    help="the documents' texts for the batch: BEIR corpus.jsonl, a RAG log")
    po.add_argument("--qrels-format", default=None, metavar="FMT", help="input format of the qrels")
    po.add_argument("--run-format", default=None, metavar="FMT", help="input format of the runs")
    po.add_argument("--format", choices=["text", "markdown", "json"], default="text", help="output format")
    po.add_argument("-o", "--output", default=None, metavar="PATH", help="write to this file instead of stdout")
    add_quiet(po)
    add_policies(po)
    po.set_defaults(handler=handle)
