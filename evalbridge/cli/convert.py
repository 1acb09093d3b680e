"""``evalbridge convert INPUT OUTPUT``: qrels or runs from one supported format to another."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .shared import EXIT_OK, add_policies, add_quiet, note, policies, named_runs, source_of, split_named, write_output



def handle(args: argparse.Namespace) -> int:
    from ..config import load_qrels, load_run
    from ..io import get_format
    from ..io.registry import prefixed
    from ..reports.writing import check_outputs

    (name, path), = named_runs([args.input]).items()  # a run is named by NAME=PATH, or after its file
    check_outputs([path], files=[args.output, args.run_output])

    fmt = args.input_format
    if fmt is not None and get_format(fmt).paired:
        if args.run_output is None:
            raise InputError(f"format {fmt!r} holds qrels and a run; OUTPUT receives the qrels and --run-output "
                             f"the run.", fix="add --run-output PATH.")
        source = source_of(path, "run", fmt, "INPUT", args.columns, policies(args))
        qrels, run = load_run(source, name, None, args.min_relevance)
        note(args, write_output(qrels, args.output, args.output_format))
        note(args, write_output(run, args.run_output, args.output_format))
        return EXIT_OK
    told = get_format(fmt) if fmt is not None else prefixed(path) or _sniffed(path)  # one kind: says it
    kind = args.kind if args.kind is not None or told is None or len(told.holds) != 1 else next(iter(told.holds))
    if kind is None and split_named(args.input)[0] is not None:
        kind = "run"  # NAME=PATH names a run
    if kind is None:
        raise InputError("say whether INPUT holds qrels or a run.", fix="add --kind qrels or --kind run.")
    source = source_of(path, kind, fmt, "INPUT", args.columns, policies(args))
    if kind == "qrels" and split_named(args.input)[0] is not None:
        raise InputError(f"{args.input}: NAME=PATH names a run, and INPUT holds qrels.",
                         fix=f"give the path alone: evalbridge convert {path} OUTPUT.")
    if kind == "qrels":
        obj = load_qrels(source, args.min_relevance)
    else:
        obj = load_run(source, name, None, args.min_relevance)[1]
    note(args, write_output(obj, args.output, args.output_format))
    return EXIT_OK


def _sniffed(path: str) -> Any:
    """The format a file's first bytes name when it holds runs only (a search engine's responses), else None."""
    from ..io import resolve

    try:
        fmt = resolve(path, kind="run")
    except (InputError, OSError):
        return None
    return fmt if fmt.sniffed_only and fmt.holds == {"run"} else None


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""

    cv = commands.add_parser("convert", help="convert qrels or runs between formats",
                             description="Read INPUT and write OUTPUT; formats come from the suffixes unless given. "
                                         "RAG inputs (labels, pairs, records, judged_list) hold qrels and a run: "
                                         "OUTPUT gets the qrels and --run-output the run.")
    cv.add_argument("input", help="the file to read; a run may be NAME=PATH (the name a TREC run's tag column gets)")
    cv.add_argument("output", help="the file to write (never INPUT); for RAG inputs, the qrels")
    cv.add_argument("--kind", choices=("qrels", "run"), default=None, help="what INPUT holds (single formats)")
    cv.add_argument("--from", dest="input_format", default=None, metavar="FMT",
                    help="input format (default: from the suffix; see `evalbridge formats`)")
    cv.add_argument("--to", dest="output_format", default=None, metavar="FMT",
                    help="output format (default: from the suffix, else trec)")
    cv.add_argument("--columns", default=None, metavar="ROLE=NAME,...",
                    help="column / field names of the input, e.g. query=qid,doc=docno,score=sim")
    cv.add_argument("--run-output", default=None, metavar="PATH", help="where the run goes for RAG inputs")
    cv.add_argument("--min-relevance", type=float, default=None, metavar="LEVEL",
                    help="relevance level stored with RAG inputs")
    add_quiet(cv)
    add_policies(cv)
    cv.set_defaults(handler=handle)
