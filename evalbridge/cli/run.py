"""``evalbridge run CONFIG``: every evaluation a YAML config describes, its reports, gates and trackers."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..common.escaping import message_text
from ..decisions.gates import ON_INCONCLUSIVE
from .shared import EXIT_OK, add_quiet, add_tracking, note, note_tracked, progress, shown, tracking_flags, tracking_given



def handle(args: argparse.Namespace) -> int:
    from ..config import load_configs
    from ..config.analyses import analysis_outputs
    from ..config.pipeline import run_config
    from ..views.formats import render

    configs = load_configs(args.config)
    given = tracking_given(args)
    if given:
        from ..config.checking import FlagLocator
        from ..config.schema import with_tracking

        configs = [with_tracking(c, given, FlagLocator(tracking_flags())) for c in configs]
    if args.on_inconclusive is not None:   # the flag over every config's on_inconclusive:
        from dataclasses import replace

        configs = [replace(c, on_inconclusive=args.on_inconclusive) for c in configs]
    if args.output_dir is not None and len(configs) > 1:
        raise InputError(f"--output-dir is ambiguous: {args.config} holds {len(configs)} evaluations.",
                         fix="leave it out (each evaluation has its own output.dir).")
    from ..config.pipeline import check_section_outputs, input_sources
    from ..reports.writing import STDOUT, check_outputs

    folders = [] if args.no_write else [Path(args.output_dir) if args.output_dir is not None else c.output.dir
                                        for c in configs]
    report_out = None if args.junit == STDOUT else STDOUT  # `--junit -` takes stdout: the report is left out
    read = [args.config, *(s.path for c in configs for s in input_sources(c) if s.path is not None)]
    check_outputs(read, files=[args.junit, report_out], folders=folders)
    for config in [] if args.no_write else configs:  # the files a section writes (pool: {batch}), before any work
        check_section_outputs(config, read, files=[args.junit], folders=folders)
    code = EXIT_OK
    gates: list[Any] = []
    for i, config in enumerate(configs):
        with progress(not args.quiet) as on_step:
            outcome = run_config(config, output_dir=args.output_dir, on_step=on_step, write=not args.no_write)
        if report_out is not None:
            sys.stdout.write(("\n" if i else "") + render(outcome.report, args.format))
        folder = Path(args.output_dir) if args.output_dir is not None else config.output.dir
        beside = {output.path for output in analysis_outputs(config)}  # a section's own file (pool: {batch})
        in_folder = [path for path in outcome.files if path not in beside]
        if in_folder and folder is not None:
            note(args, f"wrote {len(in_folder)} files to {shown(folder)}")
        for output in analysis_outputs(config):
            if output.path in outcome.files:
                note(args, f"wrote {shown(output.path)} ({output.key})")
        note_tracked(args, outcome)
        for line in outcome.failures:  # why the exit code is 1, one line per failed gate or check, even with -q
            print(f"evalbridge: {message_text(line)}", file=sys.stderr)
        code = max(code, outcome.exit_code)
        gates += outcome.report.gates
    if args.junit is not None:
        from ..reports.writing import write_file_atomic
        from ..ci.testing import junit_xml

        write_file_atomic(args.junit, junit_xml(gates, suite=f"evalbridge {Path(args.config).name}"))
    if args.annotations == "github":
        from ..ci.testing import github_annotations

        sys.stderr.write(github_annotations(gates, file=args.config))  # stdout stays the report (--format json)
    return code


def add(commands: Any) -> None:
    """Add the command's parser to ``commands`` (argparse's subparsers)."""
    from ..views.formats import report_formats

    run = commands.add_parser("run", help="run the evaluation(s) a YAML config describes",
                              description="Run every evaluation in a config file; reports go to output.dir.")
    run.add_argument("config", help="the YAML config (paths in it are relative to it)")
    run.add_argument("--output-dir", default=None, metavar="DIR", help="write the reports here instead of output.dir")
    run.add_argument("--format", choices=list(report_formats()), default="terminal",
                     help="what to print (default terminal)")
    run.add_argument("--no-write", action="store_true", help="compute and print, write no file")
    add_quiet(run)
    run.add_argument("--junit", default=None, metavar="PATH",
                     help="also write the gates as a JUnit XML report (one test case per gate and system)")
    run.add_argument("--annotations", choices=("github",), default=None,
                     help="also print one GitHub Actions annotation per gate on stderr (::error for a failure)")
    run.add_argument("--on-inconclusive", choices=ON_INCONCLUSIVE, default=None,
                     help="what a gate with a level ('>= baseline - 0.01 at 95%%') does when the eval set cannot "
                          "decide it: fail the run (exit 1) or pass; default: the config's on_inconclusive, else fail")
    add_tracking(run)
    run.set_defaults(handler=handle)
