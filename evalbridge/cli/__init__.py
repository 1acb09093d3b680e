"""The ``evalbridge`` command (also ``python -m evalbridge``): one module per command, listed in :data:`COMMANDS`.

Commands::

    evalbridge run CONFIG                       the whole configured evaluation (configs/*.yaml)
    evalbridge eval QRELS RUN... -m METRIC...   quick evaluation from files (or LOG...: inputs holding both)
    evalbridge check QRELS RUN -m ... --backends ...   the cross-check report (or check LOG)
    evalbridge diff QRELS RUN_A RUN_B -m ...    where run B differs from run A, query by query
    evalbridge power QRELS BASE RUN... -m ...   the smallest difference the eval set can detect (eb.power)
    evalbridge tiers QRELS RUN RUN... -m ...    the tiers no test separates, each run's rank interval
    evalbridge design QRELS RUN RUN... -m ...   the queries a collection needs (eb.topic_set_size)
    evalbridge metrics                          every metric, its options, which backend supports what
    evalbridge convert INPUT OUTPUT             between the supported input formats
    evalbridge agree QRELS_A QRELS_B [RUN...]   agreement of two sets of judgements (a config's agreement:)
    evalbridge diagnose QRELS RUN RUN... -m M   can the test collection tell the systems apart (eb.diagnose)
    evalbridge pool QRELS RUN... --depth 10     the unjudged pairs of the runs' first documents; --batch to judge
    evalbridge merge BASE NEW -o MERGED         a judge's graded pairs merged into qrels, each grade's source kept
    evalbridge changed BEFORE AFTER RUN...      what new judgements changed: means, order, significance, ship
    evalbridge uncertain RUN -m M --judges ...  a metric with its labels' uncertainty (eb.uncertain)
    evalbridge ppi QRELS BASE RUN... --human H  metrics from a judge's labels and a human sample (eb.ppi)

A command is one module of this package with ``add(commands)`` (its parser, whose ``handler`` returns the exit
code) and one line in :data:`COMMANDS`. Exit codes: 0 ok; 1 a gate failed or the cross-check found unexplained
differences; 2 bad input or config (one line on stderr, no traceback); 3 an internal error; 130 interrupted
(Ctrl-C), every output as it was or complete. A progress bar is
drawn on stderr only when it is a terminal. ``docs/cli.md`` documents every option.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys
from collections.abc import Iterator, Sequence

from .._version import __version__
from ..errors import EvalbridgeError
from ..common.escaping import message_text
from .shared import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERNAL, EXIT_OK

__all__ = ["main", "build_parser", "commands", "COMMANDS", "EXIT_OK", "EXIT_FAILED", "EXIT_BAD_INPUT", "EXIT_INTERNAL"]

#: the commands, in the order ``evalbridge --help`` lists them: each is the module of this package of that name.
COMMANDS = ("run", "eval", "check", "diff", "power", "tiers", "design", "metrics", "convert", "agree", "diagnose",
            "uncertain", "pool", "merge", "changed", "ppi", "judges", "formats")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The argparse parser of the commands in :data:`COMMANDS`: with ``argv`` naming a command, of that command
    alone (the others' modules are not imported); otherwise of every command (``--help``, an unknown command,
    the docs)."""
    parser = argparse.ArgumentParser(
        prog="evalbridge", description="Retrieval evaluation (MAP, MRR, nDCG, P@k, R@k, hit rate) that bridges RAG "
                                       "inputs and ranx / ir-measures / pytrec_eval.",
        epilog="exit codes: 0 ok; 1 a gate failed or the cross-check found unexplained differences; "
               "2 bad input, config or usage; 3 an internal error (a bug: please report it).")
    parser.add_argument("--version", action="version", version=f"evalbridge {__version__}")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = _command_of(argv)
    for name in COMMANDS if chosen is None else (chosen,):
        importlib.import_module(f".{name}", __name__).add(subparsers)
    return parser


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The command ``argv`` names (its first word that is not an option), or None: none, an unknown one, or help
    asked before it (the top-level options take no value)."""
    for token in argv or ():
        if token in ("-h", "--help"):
            return None
        if not token.startswith("-"):
            return token if token in COMMANDS else None
    return None


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser of each command of :func:`build_parser`'s parser, by name (tools/doc_tables.py documents them)."""
    for action in parser._actions:  # argparse keeps the subcommands only there
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@contextlib.contextmanager
def _said_once() -> Iterator[None]:
    """Print each :class:`~evalbridge.errors.EvalbridgeWarning` of the command once on stderr, as
    ``evalbridge: warning: ...`` (several systems with one fault say it once); other warnings pass on."""
    import warnings

    from ..errors import EvalbridgeWarning

    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", EvalbridgeWarning)
            yield
    finally:  # outside the recording: there, showwarning would record into the list being read, for ever
        for text in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, EvalbridgeWarning)):
            print(f"evalbridge: warning: {message_text(text)}", file=sys.stderr)
        for w in caught:
            if not issubclass(w.category, EvalbridgeWarning):
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``evalbridge`` console script; returns the exit code.

    0 ok; 1 a gate failed or a cross-check found unexplained differences; 2 bad input or usage (one line
    naming file:line / key / value and the fix); 3 an internal error (one line, "please report"; the
    traceback only with ``--debug``). No exception of a dependency reaches the user unwrapped.
    """
    arguments = sys.argv[1:] if argv is None else list(argv)
    args: argparse.Namespace | None = None
    try:
        from ..reports.writing import one_command

        with one_command():  # no output replaces a file it read; Ctrl-C ends it with 130, the old outputs intact
            args = build_parser(arguments).parse_args(arguments)
            from ..common.wording import door

            with door("config" if args.command == "run" else "command line"), _said_once():
                code: int = args.handler(args)  # argparse's Namespace is untyped: every handler returns the exit code
        return code
    except EvalbridgeError as error:
        print(f"evalbridge: error: {message_text(str(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        where = f": {error.filename}" if error.filename else ""
        print(f"evalbridge: error: {message_text(f'{error.strerror or error}{where}')}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("evalbridge: interrupted; every output is as it was or complete (each is replaced whole, only once "
              "written)", file=sys.stderr)
        return 130
    except Exception as error:  # noqa: BLE001 - the last line of defence: one line, exit 3, traceback on request
        debug = args is not None and args.debug
        if debug:
            import traceback

            traceback.print_exc()
        print(f"evalbridge: internal error: {type(error).__name__}: {message_text(str(error))}. This is a bug in evalbridge; please "
              f"report it{'' if debug else ' (run again with --debug for the traceback)'}.", file=sys.stderr)
        return EXIT_INTERNAL
