"""Tables of the README and docs/ built from the code, so they cannot drift from it.

* ``metrics``: every metric family of :data:`evalbridge.metrics.catalogue.METRICS` with its formula,
  options, aliases and which backend computes which options (each backend is asked through
  :func:`evalbridge.backends.unsupported`, i.e. its ``CAPABILITIES`` table);
* ``reports``: every report format (:func:`evalbridge.views.formats.report_formats`): its file in a
  report folder, what it holds, and whether ``evalbridge check --format`` offers it;
* ``inputs``: every registered input/output format (:func:`evalbridge.io.formats`) with a one-line
  example; ``tests/test_docs.py`` runs each example in a folder holding the small files of :data:`FILES`;
* ``cli_COMMAND`` (e.g. ``cli_run``): every argument and option of ``evalbridge COMMAND``, read from its
  argparse parser (:func:`evalbridge.cli.build_parser`), so docs/cli.md cannot miss one.

A page marks a table with ``<!-- generated:NAME -->`` ... ``<!-- /generated:NAME -->``.

Usage::

    python tools/doc_tables.py            # print the tables
    python tools/doc_tables.py --write    # rewrite them in README.md and docs/*.md
    python tools/doc_tables.py --check    # exit 1 if a page holds a stale table
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalbridge.backends.base import Backend

ROOT = Path(__file__).resolve().parents[1]
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
MARKED = re.compile(r"(<!-- generated:(?P<name>\w+) -->\n).*?(<!-- /generated:(?P=name) -->)", re.S)

#: Small files the format examples read (written to a scratch folder by the test; ``qrels.parquet`` is
#: written there from ``qrels.txt``).
FILES = {
    "qrels.txt": "q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 1\nq2 0 d4 1\n",
    "run.txt": "q1 Q0 d3 1 12.5 bm25\nq1 Q0 d1 2 11.0 bm25\nq2 Q0 d5 1 9.1 bm25\nq2 Q0 d4 2 8.7 bm25\n",
    "judged.txt": "q1 Q0 d3 1\nq1 Q0 d1 2\nq1 Q0 d2 0\n",
    "sample.qrels": "q1 0 d1 top 2\nq1 0 d2 top 0\nq1 0 d3 rest 1\nq1 0 d4 rest -1\n",
    "run.json": '{"q1": {"d3": 12.5, "d1": 11.0}, "q2": {"d5": 9.1}}\n',
    "run.jsonl": '{"query_id": "q1", "doc_id": "d3", "score": 12.5}\n{"query_id": "q1", "doc_id": "d1", "score": 11.0}\n',
    "graded.jsonl": '{"query_id": "q1", "doc_id": "d3", "grade": 2, "judge": "umbrela"}\n',
    "rag_log.jsonl": '{"id": "q1", "question": "annual leave?", "contexts": [{"doc_id": "d3", "score": 0.8}, '
                     '{"doc_id": "d1", "score": 0.7}], "ground_truth": {"d1": 2}}\n',
    "run.csv": "qid,docno,score\nq1,d3,12.5\nq1,d1,11.0\n",
    "qrels.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td3\t1\n",
    "run.dev.tsv": "q1\td3\t1\nq1\td1\t2\n",
    "responses.jsonl": '{"qid": "q1", "took": 3, "timed_out": false, "hits": {"total": {"value": 2, "relation": "eq"}, '
                       '"max_score": 7.3, "hits": [{"_index": "docs", "_id": "d3", "_score": 7.3}, '
                       '{"_index": "docs", "_id": "d1", "_score": 6.0}]}}\n',
    "qdrant.jsonl": '{"result": [{"id": 3, "version": 1, "score": 0.91, "payload": {}}, {"id": 1, "version": 1, '
                    '"score": 0.87, "payload": {}}], "status": "ok", "time": 0.002}\n',
    "chroma.json": '{"ids": [["d3", "d1"]], "distances": [[0.12, 0.3]], "documents": [["...", "..."]], '
                   '"metadatas": [[{}, {}]], "embeddings": null, "included": ["metadatas", "documents", "distances"]}\n',
    "spans.jsonl": '{"name": "retrieve", "span_kind": "RETRIEVER", "context": {"trace_id": "t1", "span_id": "s1"}, '
                   '"attributes": {"metadata": {"query_id": "q1"}, "retrieval": {"documents": [{"document": '
                   '{"id": "d3", "score": 0.8}}, {"document": {"id": "d1", "score": 0.7}}]}}}\n',
    "results.jsonl": '{"query_id": "q1", "results": [{"id": "d3", "score": 0.8}, {"id": "d1", "score": 0.7}]}\n',
    "llamaindex_dataset.json": '{"queries": {"q1": "annual leave?"}, "corpus": {"d1": "Leave is 25 days."}, '
                               '"relevant_docs": {"q1": ["d1"]}, "mode": "text"}\n',
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def inputs_table() -> str:
    """The formats table (Markdown), from the format registry (:func:`evalbridge.io.formats`)."""
    from evalbridge.io import formats

    rows = ["| format | holds | suffixes | options | writable | example |", "|---|---|---|---|---|---|"]
    for f in formats().values():
        suffixes = " ".join(f"`{s}`" for s in f.suffixes if s) or ("(any other)" if f.name == "trec" else
                                                                    "(object)" if f.accepts else "(named)")
        rows.append(f"| `{f.name}`: {_cell(f.title)} | {f.describes} | {suffixes} | "
                    f"{', '.join(f'`{o}`' for o in f.takes) or '-'} | {'yes' if f.write else 'no'} | "
                    f"`{_cell(f.example)}` |")
    return "\n".join(rows) + "\n"


def reports_table() -> str:
    """The report formats table (Markdown), from the report format registry."""
    from evalbridge.views.formats import report_formats

    rows = ["| format | file in a report folder | what | `check --format` |", "|---|---|---|---|"]
    for f in report_formats().values():
        rows.append(f"| `{f.name}` | `report{f.suffix}` | {_cell(f.title)} | {'yes' if f.check else 'no'} |")
    return "\n".join(rows) + "\n"


#: How a non-choice option is shown in the options cell.
OPTION_TEXT = {
    "max_grade": "`max_grade` (default: top grade of the qrels)",
    "gains": "`gains`: `{grade: gain}` map (default: none)",
}


def _options(name: str) -> str:
    from evalbridge.metrics.catalogue import METRICS

    info = METRICS[name]
    parts = {"required": ["`@k` required"], "optional": ["`@k` optional (whole ranking)"], "none": []}[info.cutoff]
    for option, default in info.options.items():
        allowed = info.allowed(option)
        if allowed:
            parts.append(f"`{option}`: " + " / ".join(f"**{c}**" if c == default else c for c in allowed))
        elif option == "rel":
            parts.append("`rel`: level (default: the evaluation's, 1)" if info.binary
                         else "`rel`: grades below it gain 0 (default: none)")
        elif option == "p":
            parts.append(f"`p`: persistence (default {default})")
        else:
            parts.append(OPTION_TEXT[option])
    return "<br>".join(parts)


def _aliases(name: str) -> str:
    from evalbridge.metrics.catalogue import ALIASES, TREC_MEASURES, TREC_NAMES

    words = []
    for alias, (canonical, preset) in ALIASES.items():
        if canonical == name and alias != name.lower():
            words.append(f"`{alias}`" + (" (" + ", ".join(f"{k}={v}" for k, v in preset.items()) + ")"
                                          if preset else ""))
    words += [f"`{trec}_k`" for trec, alias in TREC_NAMES.items() if ALIASES[alias] == (name, {})]
    words += [f"`{trec}` (trec_eval: " + ", ".join(f"{k}={v}" for k, v in preset.items()) + ")"
              for trec, (canonical, preset) in TREC_MEASURES.items() if canonical == name]
    return ", ".join(words)


def _probes(name: str):  # noqa: ANN202 - list of (label, Metric)
    """The metric with default options, then one variant per non-default option value (and a cutoff)."""
    from evalbridge.metrics.catalogue import METRICS
    from evalbridge.metrics.spec import Metric

    info = METRICS[name]
    k = 10 if info.cutoff == "required" else None
    probes = [("", Metric(name, k))]
    if info.cutoff == "optional":
        probes.append(("@k", Metric(name, 10)))
    for option, default in info.options.items():
        if info.allowed(option):
            probes += [(f"{option}={c}", Metric(name, k, {option: c})) for c in info.allowed(option) if c != default]
        elif option == "rel":
            probes += [("rel=2", Metric(name, k, {"rel": 2})), ("rel=0.5", Metric(name, k, {"rel": 0.5})),
                       ("rel≤0", Metric(name, k, {"rel": 0}))]
        elif option == "gains" and name != "ERR":
            probes += [("gains", Metric(name, k, {"gains": {1: 2.5}})), ("gains<0", Metric(name, k, {"gains": {0: -1}}))]
        elif option == "gains":
            probes.append(("gains", Metric(name, k, {"gains": {1: 0.5}})))
    return probes


def support(backend: str, name: str) -> str:
    """What ``backend`` computes of metric family ``name``: all, all but some option values, or nothing."""
    from evalbridge.backends import get_backend, unsupported

    module = get_backend(backend)
    (_, base), *variants = _probes(name)
    if unsupported(module, base) is not None:
        return "no"
    refused = [label for label, metric in variants if unsupported(module, metric) is not None]
    return "yes" + (" except " + ", ".join(refused) if refused else "")


def metrics_table() -> str:
    """The metrics table (Markdown): formula, options, aliases, and support per backend."""
    from evalbridge.backends import BACKENDS
    from evalbridge.metrics.catalogue import METRICS

    backends = list(BACKENDS)
    rows = ["| metric | formula (one query) | options (**default**) | aliases | " + " | ".join(backends) + " |",
            "|---|---|---|---|" + "---|" * len(backends)]
    for name, info in METRICS.items():
        cells = [f"`{name}` {info.title}", _cell(info.formula), _options(name), _aliases(name)]
        cells += [support(backend, name) for backend in backends]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


#: convention -> (row title, value -> words); values are the backends' ``CONVENTIONS`` fields.
CONVENTION_ROWS = {
    "ties": ("equal scores ordered by", {
        "docid_desc": "doc id descending (trec_eval)", "docid_asc": "doc id ascending",
        "input": "insertion order; arbitrary in large tie groups"}),
    "score_precision": ("scores compared as", {
        "float64": "float64", "float32": "float32 (1e-9 apart = tie)"}),
    "missing_queries": ("qrels query absent from the run", {
        "zero": "scored 0", "drop": "left out of the mean"}),
    "empty_qrels": ("query with no judgement", {"keep": "scored 0", "drop": "left out",
                                                "zero": "scored 0 without evaluation (NumRet too)"}),
    "grades": ("float grades (LLM scores)", {
        "int": "raise TypeError", "truncate": "silently truncated (7.5 -> 7)", "float": "kept"}),
    "level_scope": ("relevance level (`-l`, `rel`)", {
        "binary": "binary metrics only; nDCG ignores it", "all": "binary metrics, and zeroes lower grades in nDCG"}),
}
#: What the reference does for each convention (it follows any ``Settings`` it is given).
REFERENCE_CONVENTIONS = {
    "ties": "any of the three (`ties=`), or the expected value over every order (`average`); default doc id descending",
    "score_precision": "float64, or float32 on request",
    "missing_queries": "scored 0, or left out (`missing_queries=`)",
    "empty_qrels": "scored 0",
    "grades": "kept",
    "level_scope": "binary metrics only; `nDCG(rel=2)` is explicit",
}


def _conventions_cell(backend: Backend, field: str) -> str:
    from evalbridge.backends import ir_measures

    words = CONVENTION_ROWS[field][1]
    default = backend.conventions
    text = words.get(getattr(default, field), str(getattr(default, field)))
    providers = ir_measures.PROVIDER_CONVENTIONS if backend.name == "ir_measures" else {}
    for provider, conventions in providers.items():
        value = getattr(conventions, field)
        if conventions is not default and value != getattr(default, field):
            text += f"; {provider} provider: {words.get(value, value)}"
    return text


def differences_table() -> str:
    """What each library does on its own (its native conventions), from the backends' data."""
    from evalbridge.backends import BACKENDS, get_backend

    # the backends that wrap a library describe its native conventions (the others follow the requested ones)
    modules = {name: backend for name in BACKENDS if (backend := get_backend(name)).conventions is not None}
    libraries = list(modules)
    rows = ["| | reference | " + " | ".join(libraries) + " |", "|---|---|" + "---|" * len(libraries)]
    for field, (title, _) in CONVENTION_ROWS.items():
        cells = [title, REFERENCE_CONVENTIONS[field]] + [_conventions_cell(modules[n], field) for n in libraries]
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    notes = [_cell("; ".join(modules[n].conventions.notes)) or "" for n in libraries]
    rows.append("| also | the definition every backend is tested against | " + " | ".join(notes) + " |")
    return "\n".join(rows) + "\n"


def _invocation(action: argparse.Action) -> str:
    """How an argument is written: ``-m``, ``--metrics METRIC...``; ``--format {a,b}``; ``QRELS``."""
    if isinstance(action.metavar, tuple):
        words = " ".join(action.metavar)
    else:
        name = action.metavar or ("{" + ",".join(map(str, action.choices)) + "}" if action.choices
                                  else action.dest.upper())
        words = {None: name, "+": f"{name}...", "*": f"[{name}...]", "?": f"[{name}]", 0: ""}.get(action.nargs, name)
    if not action.option_strings:
        return f"`{words}`"
    *short, last = action.option_strings
    return ", ".join([*(f"`{o}`" for o in short), f"`{last} {words}`".replace(" `", "`")])


def _default(action: argparse.Action) -> str:
    if action.default is None or action.default is False or action.default == argparse.SUPPRESS \
            or not action.option_strings:
        return ""
    value = " ".join(map(str, action.default)) if isinstance(action.default, list) else str(action.default)
    return f"`{value}`"


def cli_table(command: str) -> str:
    """The arguments and options of ``evalbridge COMMAND`` (Markdown), from its argparse parser."""
    from evalbridge.cli import build_parser, commands

    parser = commands(build_parser())[command]
    formatter = parser._get_formatter()  # argparse's own expansion of %(default)s in a help text
    rows = ["| argument | default | meaning |", "|---|---|---|"]
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._HelpAction):
            continue
        meaning = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {_cell(_invocation(action))} | {_cell(_default(action))} | {_cell(meaning)} |")
    return "\n".join(rows) + "\n"


#: table name -> renderer
TABLES: dict[str, Callable[[], str]] = {"metrics": metrics_table, "inputs": inputs_table,
                                        "differences": differences_table, "reports": reports_table}


def render(name: str) -> str:
    """The table called ``name``: one of :data:`TABLES`, or ``cli_COMMAND``."""
    return cli_table(name.removeprefix("cli_")) if name.startswith("cli_") else TABLES[name]()


def refresh(text: str) -> str:
    """``text`` with every marked table re-rendered."""
    return MARKED.sub(lambda m: m.group(1) + render(m["name"]) + m.group(3), text)


def stale_pages() -> list[str]:
    """Pages (relative paths) whose marked tables differ from what the code renders now."""
    return [str(page.relative_to(ROOT)) for page in PAGES
            if page.exists() and refresh(text := page.read_text(encoding="utf-8")) != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the tables in README.md and docs/*.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page holds a stale table")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        print("\n".join(f"stale: {page}" for page in stale) or "all tables are up to date")
        return 1 if stale else 0
    if args.write:
        for page in PAGES:
            text = page.read_text(encoding="utf-8")
            if refresh(text) != text:
                page.write_text(refresh(text), encoding="utf-8")
                print(f"rewrote {page.relative_to(ROOT)}")
        return 0
    for name, render in TABLES.items():
        print(f"<!-- generated:{name} -->\n{render()}<!-- /generated:{name} -->\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
