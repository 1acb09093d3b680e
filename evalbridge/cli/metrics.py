"""``evalbridge metrics``: every metric, its options, and which backend computes what."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .shared import EXIT_OK
from ..common.json_data import json_text



def _variants() -> list[Any]:
    """One row per metric family and per non-default option value (plus rel=2 for binary metrics)."""
    from ..metrics.catalogue import CHOICES, METRICS
    from ..metrics.spec import Metric

    rows = []
    for name, info in METRICS.items():
        k = None if info.cutoff == "none" else 10
        base = Metric(name, k)
        rows.append(base)
        if info.binary:
            rows.append(base.replace(rel=2))
        for option, default in info.options.items():
            for value in CHOICES.get(option, ()):
                if value != default:
                    rows.append(base.replace(**{option: value}))
    return rows


def metric_capabilities() -> dict[str, Any]:
    """``{"metrics": [...], "backends": [...], "matrix": {metric: {backend: reason or None}}}``."""
    from ..backends import BACKENDS, available, get_backend, unsupported
    from ..metrics.catalogue import ALIASES, METRICS

    backends = list(BACKENDS)
    modules = {name: get_backend(name) for name in backends}
    installed = available()
    families = []
    for name, info in METRICS.items():
        aliases = sorted(a for a, (canonical, preset) in ALIASES.items() if canonical == name and not preset)
        families.append({"name": name, "title": info.title, "cutoff": info.cutoff, "binary": info.binary,
                         "options": dict(info.options), "aliases": aliases, "formula": info.formula})
    matrix = {str(m): {b: unsupported(modules[b], m) for b in backends} for m in _variants()}
    return {"metrics": families, "backends": {b: installed.get(b, True) for b in backends}, "matrix": matrix}


def handle(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    data = metric_capabilities()
    if args.format == "json":
        sys.stdout.write(json_text(data))
        return EXIT_OK
    fmt = "github" if args.format == "markdown" else "simple"
    families = [(f["name"], f["title"], f["cutoff"],
                 ", ".join(f"{k}={v}" for k, v in f["options"].items()) or "-", ", ".join(f["aliases"]))
                for f in data["metrics"]]
    backends = list(data["backends"])
    matrix = [(metric, *["yes" if cell is None else "no" for cell in cells.values()])
              for metric, cells in data["matrix"].items()]
    heads = [b if data["backends"][b] else f"{b} (not installed)" for b in backends]
    out = ["metrics (any spelling: aliases of ranx, ir-measures, trec_eval and RAG code are accepted)",
           tabulate(families, headers=("metric", "what", "cutoff", "options (default)", "aliases"), tablefmt=fmt),
           "", "which backend computes what exactly (binary metrics take rel=; 'no' rows: see --format json)",
           tabulate(matrix, headers=("metric", *heads), tablefmt=fmt)]
    sys.stdout.write("\n".join(out) + "\n")
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""

    me = commands.add_parser("metrics", help="list metrics, options and the backend capability matrix")
    me.add_argument("--format", choices=("terminal", "markdown", "json"), default="terminal",
                    help="markdown: GitHub tables; json: with the reason of every `no`")
    me.set_defaults(handler=handle)
