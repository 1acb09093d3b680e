"""``evalbridge formats``: every input and output format, what it holds, its suffixes and options."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .shared import EXIT_OK
from ..common.json_data import json_text



def format_table() -> list[dict[str, Any]]:
    """One row per registered format: name, what it holds, suffixes, options, writable, example."""
    from ..io import formats

    return [{"format": f.name, "holds": f.describes, "what": f.title,
             "suffixes": " ".join(s or "(none)" for s in f.suffixes) or ("(object)" if f.accepts else "(named only)"),
             "options": ", ".join(f.takes) or "-", "writable": f.write is not None, "example": f.example}
            for f in formats().values()]


def handle(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    rows = format_table()
    if args.format == "json":
        sys.stdout.write(json_text(rows))
        return EXIT_OK
    fmt = "github" if args.format == "markdown" else "simple"
    table = [(r["format"], r["holds"], r["suffixes"], r["options"], "yes" if r["writable"] else "no", r["what"])
             for r in rows]
    sys.stdout.write("input and output formats (a path's suffix picks the format; --*-format / format: override)\n")
    sys.stdout.write(tabulate(table, headers=("format", "holds", "suffixes", "options", "writable", "what"),
                              tablefmt=fmt) + "\n")
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""

    fo = commands.add_parser("formats", help="list the input and output formats",
                             description="Every format evalbridge reads or writes: what it holds, the suffixes that "
                                         "pick it, its options.")
    fo.add_argument("--format", choices=("terminal", "markdown", "json"), default="terminal", help="output format")
    fo.set_defaults(handler=handle)
