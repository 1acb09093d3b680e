"""``evalbridge fuse RUN RUN... -o FUSED``: several runs fused into one by ranx (``eb.fuse``), written as a run.

A module of its own, not a command of the registry: its inputs are runs alone (judgements only to learn the
parameters) and its output is a run file, where the registry's commands evaluate QRELS and RUNs and show a table.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InputError
from .shared import (EXIT_OK, add_policies, add_quiet, add_rules, named_runs, note, policies, source_of,
                     write_output)


def _params(given: list[str] | None) -> dict[str, Any] | None:
    """``--params k=60 weights=0.3,0.7`` as ``{"k": 60.0, "weights": [0.3, 0.7]}`` (the keys are checked by fuse)."""
    from ..common.values import parse

    if not given:
        return None
    out: dict[str, Any] = {}
    for text in given:
        key, sep, value = text.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InputError(f"--params: cannot read {text!r}; expected KEY=NUMBER or KEY=NUMBER,NUMBER,...",
                             fix="write e.g. --params k=60, or --params weights=0.3,0.7.")
        numbers = [parse(part.strip(), label=f"--params {key.strip()}") for part in value.split(",")]
        out[key.strip()] = numbers if "," in value else numbers[0]
    return out


def _check_output(args: argparse.Namespace) -> None:
    """The fused run's format (``--to``, else the suffix of ``-o``) and its tag (``--name``), checked before any work,
    as writing them would check them after the fusion."""
    from ..io.registry import get_format, output_format
    from ..io.trec import check_tag

    chosen = get_format(args.output_format, kind="run") if args.output_format is not None else output_format(args.output, "run")
    if args.name is not None and "tag" in chosen.options:
        check_tag(args.name)


def handle(args: argparse.Namespace) -> int:
    from ..config import load_qrels, load_run
    from ..reports.writing import check_outputs
    from ..transforms.fusion import FUSION_PARAMETERS as RULES, fuse

    named = named_runs(args.runs)
    if len(named) < 2:
        raise InputError(f"fusion combines two runs or more; got {len(named)}.",
                         fix="evalbridge fuse bm25.run splade.run -o fused.run")
    if (args.qrels is None) != (args.train is None):
        raise InputError("learning the fusion's parameters needs both the judgements (--qrels) and the training "
                         "queries (--train).", fix="give --qrels QRELS --train Q1 Q2 ..., or neither (--params).")
    check_outputs([*named.values(), *([args.qrels] if args.qrels else [])], files=[args.output])
    _check_output(args)
    read = policies(args)
    runs = {name: load_run(source_of(path, "run", args.run_format, name, args.run_columns, read), name, None, None)[1]
            for name, path in named.items()}
    qrels = None if args.qrels is None else load_qrels(source_of(args.qrels, "qrels", args.qrels_format, "--qrels",
                                                                 None, read), None)
    norm = None if args.norm == "none" else args.norm or RULES["norm"].default
    fused = fuse(runs, method=args.method or RULES["method"].default, norm=norm, params=_params(args.params),
                 qrels=qrels, train=args.train, metric=args.metric or RULES["metric"].default, name=args.name)
    note(args, f"fused: {fused.name}")
    tag = args.name or "".join(str(fused.name).split())  # a TREC run's tag is one word: the recipe without spaces
    note(args, write_output(fused, args.output, args.output_format, tag=tag))
    return EXIT_OK


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..transforms.fusion import FUSION_PARAMETERS, NORMS

    p = commands.add_parser(
        "fuse", help="several runs fused into one by ranx (rrf, wsum, ...), written as a run",
        description="Fuse the runs into one with one of ranx's methods and score normalisations, the parameters "
                    "given (--params) or learnt by ranx on training queries (--qrels, --train), and write it "
                    "(atomically; never over an input). The fused run is named by its recipe, "
                    "rrf(bm25, splade; k=60), the ranking of ranx.fuse but for tied scores, ordered by evalbridge's "
                    "rule (eb.fuse; a config's fusion: section fuses its runs and compares the result with each).")
    p.add_argument("runs", nargs="+", metavar="RUN", help="two or more runs, each PATH or NAME=PATH")
    p.add_argument("-o", "--output", required=True, metavar="PATH",
                   help="where the fused run goes (- for standard output); never one of the inputs")
    p.add_argument("--to", dest="output_format", default=None, metavar="FMT",
                   help="output format (default: from the suffix, else trec)")
    add_rules(p, FUSION_PARAMETERS, ("method",))
    norm = FUSION_PARAMETERS["norm"]
    p.add_argument("--norm", choices=[n or "none" for n in NORMS], default=None,
                   help=f"{norm.fix.split(' (')[0].rstrip('.')}, or none (default {norm.default})")
    p.add_argument("--params", nargs="+", default=None, metavar="KEY=VALUE",
                   help="the method's parameters, e.g. k=60 (rrf) or weights=0.3,0.7 (wsum) (default: ranx's)")
    p.add_argument("--qrels", default=None, metavar="QRELS", help="judgements of the training queries (with --train)")
    p.add_argument("--train", nargs="+", default=None, metavar="QUERY",
                   help="the ids of the queries the parameters are learnt on (with --qrels); evaluate on the others")
    add_rules(p, FUSION_PARAMETERS, ("metric",), helps={"metric": "what the training maximises, in ranx's spelling"})
    p.add_argument("--name", default=None,
                   help="the fused run's name, a TREC run's tag (default: its recipe, without spaces in the tag)")
    p.add_argument("--run-format", default=None, metavar="FMT",
                   help="input format of the runs (default: from the suffix, else trec)")
    p.add_argument("--qrels-format", default=None, metavar="FMT", help="input format of --qrels")
    p.add_argument("--run-columns", default=None, metavar="ROLE=NAME,...",
                   help="column / field names of the runs, e.g. query=qid,doc=docno,score=sim")
    add_quiet(p)
    add_policies(p)
    p.set_defaults(handler=handle)
