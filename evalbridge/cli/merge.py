"""``evalbridge merge BASE NEW -o MERGED``: new judgements merged into qrels, who gave each grade kept, conflicts refused unless a rule is chosen."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .shared import EXIT_OK, add_quiet, note, write_output


def handle(args: argparse.Namespace) -> int:
    from ..config.sources import load_qrels, source_from_path
    from ..evalsets.merging import merge_judgements
    from ..reports.writing import check_outputs

    if args.output is None:
        raise InputError("merge writes the merged judgements to a file, and none is named.",
                         fix="add -o merged.jsonl (graded pairs with their source; .txt: TREC qrels, no source).")
    check_outputs([args.base, args.new], files=[args.output])
    sides = [load_qrels(source_from_path(path, "qrels", fmt, key), None)
             for path, fmt, key in ((args.base, args.base_format, "BASE"), (args.new, args.new_format, "NEW"))]
    merged = merge_judgements(*sides, prefer=args.prefer, names=tuple(args.names) if args.names else (None, None))
    write_output(merged, args.output, args.to)
    note(args, f"wrote {args.output}: {merged.notes[-1]}")
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..evalsets.merging import RULES

    me = commands.add_parser("merge", help="merge new judgements (a judge's graded pairs) into qrels",
                             description="Add the judgements of NEW to BASE, keeping who gave each grade (written "
                                         "beside it in the judgements format); a pair graded differently on the two "
                                         "sides is refused unless --prefer names a rule.")
    me.add_argument("base", metavar="BASE", help="the judgements so far (e.g. the human qrels)")
    me.add_argument("new", metavar="NEW", help="the new judgements (e.g. graded pairs from an LLM judge)")
    me.add_argument("--prefer", choices=list(RULES), default=None,
                    help="how a conflict is settled: " + "; ".join(f"{n}: {w}" for n, (w, _) in RULES.items())
                         + " (default: refuse)")
    me.add_argument("--names", nargs=2, default=None, metavar=("BASE_NAME", "NEW_NAME"),
                    help="who gave each side's grades where the input does not say (e.g. human umbrela)")
    me.add_argument("--base-format", default=None, metavar="FMT", help="input format of BASE")
    me.add_argument("--new-format", default=None, metavar="FMT", help="input format of NEW")
    me.add_argument("--to", default=None, metavar="FMT",
                    help="output format (default: from the suffix; .jsonl keeps the sources: judgements)")
    me.add_argument("-o", "--output", default=None, metavar="PATH", help="the merged judgements (required)")
    add_quiet(me)
    me.set_defaults(handler=handle)
