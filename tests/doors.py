"""Run one input case through the three doors (Python API, CLI, config run) and return what each showed.

Every door is the same door: a table-driven test writes one case and asserts the doors agree::

    from doors import Case, through_doors, assert_same

    case = Case(files={"qrels.txt": QRELS, "a.run": RUN}, qrels="qrels.txt", runs=("a.run",), metrics=("P@2",))
    doors = through_doors(case, tmp_path)        # {"api": Door, "cli": Door, "config": Door}
    assert_same(doors)                           # one exit code; the same means (or a message in each)
    assert doors["cli"].code == 2 and "a.run:1" in doors["cli"].message

``Case``:
    files: name -> text (str) or bytes, written into the folder (``"logs/x.jsonl"`` makes ``logs/``;
        a name ending in ``/`` makes an empty folder).
    qrels: the qrels file, or None when every run holds its own judgements (a RAG log, a judged list:
        the API reads it with ``read_pair``, the CLI gets it as its only positional input, a config as a run).
    runs: the run files; each system is named after its file (``a`` for ``a.run``), as the CLI names it.
    metrics: metric specs (``LABEL=SPEC`` names one, as ``-m`` does).
    qrels_options / run_options: how each side is read, spelled as the API spells it: ``format``, the
        column roles (``query``, ``doc``, ``grade``, ``score``, ...: every name in
        ``evalbridge.config.sources.COLUMN_ROLES``) and any other format option (``min_relevance``...).
    settings: ``evaluate()``'s keyword options (``min_relevance``, ``ties``, ``depth``, ``judged_only``...).

How each door gets them:
    api: ``read_qrels(path, **qrels_options)`` / ``read_run(path, name=, **run_options)`` (without qrels:
        ``read_pair`` of the one input, ``read_logs`` of several), then ``evaluate(qrels, run, metrics, **settings)``
        per system.
    cli: ``evalbridge eval [QRELS] RUN... -m ... --format json`` in-process; ``format`` becomes
        ``--qrels-format`` / ``--run-format``, the roles ``--qrels-columns`` / ``--run-columns`` (ROLE=NAME,...),
        any other option or setting ``--its-name value`` (``True``: the bare flag; a list: several values).
    config: ``evalbridge run eval.yaml --no-write --format json`` in-process, the config holding
        ``qrels: {path, format, columns: {...}, ...}``, ``runs: {name: {...}}``, ``metrics`` and the settings.

Every door runs with the folder as the working directory and the paths as the user writes them
(``qrels.txt``), so a message names the file the same way at every door.

``Door`` (what the user saw):
    code: 0 ok, 2 bad input or usage, 3 internal error (API: 2 for an ``EvalbridgeError``, 3 for any other
        exception, i.e. a raw dependency or Python exception reaching the user).
    message: the text the user read: the exception (API; ``TypeName: text`` when it is no EvalbridgeError), or
        stderr without the ``evalbridge: error:`` prefix (CLI, config); "" when nothing was said.
    means: system -> metric label -> mean (NaN as None) when the door succeeded, else None.
    warnings: the Python warnings raised while the door ran (their text).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import warnings as _warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["Case", "Door", "through_doors", "assert_same", "cli", "write_collection"]

PREFIX = "evalbridge: error: "


@dataclass(frozen=True)
class Case:
    """One input case (see the module docstring)."""

    files: Mapping[str, str | bytes]
    runs: tuple[str, ...]
    metrics: tuple[str, ...] = ("P@2",)
    qrels: str | None = None
    qrels_options: Mapping[str, Any] = field(default_factory=dict)
    run_options: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Door:
    """What one door showed the user (see the module docstring)."""

    door: str
    code: int
    message: str
    means: dict[str, dict[str, float | None]] | None = None
    warnings: tuple[str, ...] = ()


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _write(files: Mapping[str, str | bytes], folder: Path) -> None:
    for name, content in files.items():
        path = folder / name
        if name.endswith("/"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def _names(runs: tuple[str, ...]) -> list[str]:
    from evalbridge.cli.shared import system_names as _system_names

    return _system_names(runs)


def _split(options: Mapping[str, Any]) -> tuple[str | None, dict[str, str], dict[str, Any]]:
    """(format, column roles, other options) of one side's API options."""
    from evalbridge.config.sources import COLUMN_ROLES

    rest = {k: v for k, v in options.items() if k != "format"}
    columns = {k: v for k, v in rest.items() if k in COLUMN_ROLES}
    return options.get("format"), columns, {k: v for k, v in rest.items() if k not in columns}


def _nan_free(means: Mapping[str, Any]) -> dict[str, float | None]:
    return {k: (None if v is None or v != v else float(v)) for k, v in means.items()}


def cli(*argv: Any) -> tuple[int, str, str]:
    """``(exit code, stdout, stderr)`` of ``evalbridge argv...`` run in-process (argparse's exit included)."""
    from evalbridge.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code if isinstance(exit_.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _api(case: Case) -> tuple[int, str, dict[str, dict[str, float | None]] | None]:
    import evalbridge as eb

    names = _names(case.runs)
    try:
        qrels = None if case.qrels is None else eb.read_qrels(case.qrels, **case.qrels_options)
        if qrels is None and len(case.runs) > 1:  # several logs of the same questions: one qrels, a run each
            options = {k: v for k, v in case.run_options.items() if k != "format"}
            qrels, runs = eb.read_logs(dict(zip(names, case.runs)), **options)
            pairs = [(qrels, runs[name]) for name in names]
        else:
            pairs = [eb.read_pair(path, name=name, **case.run_options) if qrels is None else
                     (qrels, eb.read_run(path, name=name, **case.run_options)) for name, path in zip(names, case.runs)]
        means = {name: _nan_free(eb.evaluate(own, run, list(case.metrics), **case.settings).means)
                 for name, (own, run) in zip(names, pairs)}
    except eb.EvalbridgeError as error:
        return 2, str(error), None
    except Exception as error:  # noqa: BLE001 - what reaches a Python user unwrapped is the finding
        return 3, f"{type(error).__name__}: {error}", None
    return 0, "", means


def _flags(options: Mapping[str, Any]) -> list[str]:
    argv: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is not False and value is not None:
            argv += [flag, *(map(str, value) if isinstance(value, (list, tuple)) else [str(value)])]
    return argv


def _cli_argv(case: Case) -> list[str]:
    argv = ["eval", *([case.qrels] if case.qrels is not None else []), *case.runs, "-m", *case.metrics,
            "--format", "json"]
    for side, options in (("qrels", case.qrels_options), ("run", case.run_options)):
        fmt, columns, rest = _split(options)
        if fmt is not None:
            argv += [f"--{side}-format", fmt]
        if columns:
            argv += [f"--{side}-columns", ",".join(f"{role}={name}" for role, name in columns.items())]
        argv += _flags(rest)
    return argv + _flags(case.settings)


def _source(path: str, options: Mapping[str, Any]) -> dict[str, Any]:
    fmt, columns, rest = _split(options)
    source: dict[str, Any] = {"path": path, **({"format": fmt} if fmt is not None else {}), **rest}
    if columns:
        source["columns"] = columns
    return source


def _config(case: Case) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if case.qrels is not None:
        config["qrels"] = _source(case.qrels, case.qrels_options)
    config["runs"] = {name: _source(path, case.run_options) for name, path in zip(_names(case.runs), case.runs)}
    config["metrics"] = list(case.metrics)
    config.update(case.settings)
    return config


def _from_report(code: int, out: str, err: str) -> tuple[int, str, dict[str, dict[str, float | None]] | None]:
    message = "\n".join(line.removeprefix(PREFIX) for line in err.strip().splitlines())
    if code != 0:
        return code, message, None
    systems = json.loads(out)["systems"]
    return code, message, {name: _nan_free(system["metrics"]) for name, system in systems.items()}


def through_doors(case: Case, folder: str | os.PathLike[str]) -> dict[str, Door]:
    """Write the case's files into ``folder`` and run it through the API, the CLI and a config run."""
    folder = Path(folder)
    _write(case.files, folder)
    (folder / "eval.yaml").write_text(json.dumps(_config(case)), encoding="utf-8")  # JSON is YAML
    doors: dict[str, Door] = {}
    runners = {"api": lambda: _api(case), "cli": lambda: _from_report(*cli(*_cli_argv(case))),
               "config": lambda: _from_report(*cli("run", "eval.yaml", "--no-write", "--format", "json"))}
    for name, runner in runners.items():
        with _inside(folder), _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter("always")
            code, message, means = runner()
        doors[name] = Door(name, code, message, means, tuple(str(w.message) for w in caught))
    return doors


def assert_same(doors: Mapping[str, Door], *, says: str | tuple[str, ...] = ()) -> None:
    """Every door gave the same exit code; on success the same means, on failure a one-paragraph message
    without a traceback that holds every text in ``says`` (case-sensitive)."""
    codes = {name: door.code for name, door in doors.items()}
    assert len(set(codes.values())) == 1, f"exit codes differ: {codes}; messages: " + \
        "; ".join(f"{n}: {d.message!r}" for n, d in doors.items())
    wanted = (says,) if isinstance(says, str) else says
    for name, door in doors.items():
        if door.code == 0:
            assert door.means == next(iter(doors.values())).means, \
                f"means differ: " + "; ".join(f"{n}: {d.means}" for n, d in doors.items())
        else:
            assert "Traceback" not in door.message, f"{name}: {door.message}"
            missing = [text for text in wanted if text not in door.message]
            assert not missing, f"{name} does not say {missing}: {door.message!r}"


def _rank_score(draw: random.Random, rank: int) -> str:
    return f"{10 - rank}"


def write_collection(folder: Path, runs: Sequence[str], *, queries: int, docs: int, ranked: int, seed: int,
                     query: str = "q{i}", score: Callable[[random.Random, int], str] = _rank_score) -> Path:
    """A graded collection written into ``folder`` for the doors tests of the analyses (power, tiers, fusion):
    ``qrels.txt`` grading ``docs`` documents of each of ``queries`` queries (0, 0, 1 or 2 at random), and one
    ``NAME.run`` per name of ``runs`` ranking ``ranked`` of them at random, scored ``score(draw, rank)`` (default
    ``10 - rank``: no ties); ``query`` formats the query ids. One ``random.Random(seed)`` draws everything in one
    order (the grades of a query, then each run's ranking of it), so a seed gives the same files every time."""
    draw = random.Random(seed)
    qrels: list[str] = []
    rows: dict[str, list[str]] = {name: [] for name in runs}
    for i in range(queries):
        q = query.format(i=i)
        qrels += [f"{q} 0 d{d} {draw.choice([0, 0, 1, 2])}" for d in range(docs)]
        for name, lines in rows.items():
            chosen = draw.sample([f"d{d}" for d in range(docs)], ranked)
            lines += [f"{q} Q0 {doc} {r + 1} {score(draw, r)} {name}" for r, doc in enumerate(chosen)]
    (folder / "qrels.txt").write_text("\n".join(qrels) + "\n")
    for name, lines in rows.items():
        (folder / f"{name}.run").write_text("\n".join(lines) + "\n")
    return folder
