"""The README and every page in ``docs/`` are executable: their code blocks run in the test suite.

Rules for fenced code blocks (the first word after the fence is the language):

* ```` ```python ```` blocks run in order, one namespace per Markdown file, from the repo root.
  A block whose first line starts with ``>>>`` is run as a doctest, so shown output is checked.
* ```` ```python no-run ```` is shown but not run (e.g. a sketch that needs a server).
* ```` ```bash run ```` (or ``sh run``) runs with bash from the repo root, ``.venv/bin`` first on
  ``PATH``; any other ``bash``/``sh``/``console``/``text``/``yaml`` block is not run.
* Relative links must point at files that exist.
* Tables generated from the code (between ``<!-- generated:NAME -->`` markers) must be up to date:
  ``python tools/doc_tables.py --write`` rewrites them.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
import textwrap
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

import evalbridge as eb

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")
SHELLS = ("bash", "sh", "shell")

sys.path.insert(0, str(ROOT / "tools"))
import doc_tables  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown page."""

    page: Path
    line: int  # 1-based line of the opening fence
    info: tuple[str, ...]  # the words after the fence, lower-cased
    code: str

    @property
    def language(self) -> str:
        return self.info[0] if self.info else ""

    @property
    def where(self) -> str:
        return f"{_page_id(self.page)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """Every fenced code block of ``page``, in order (``~~~`` and longer fences included)."""
    found, lines, i = [], page.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        fence, start, body = match["fence"], i, []
        i += 1
        while i < len(lines) and not (lines[i].strip().startswith(fence) and not lines[i].strip().strip(fence[0])):
            body.append(lines[i])
            i += 1
        found.append(Block(page, start + 1, tuple(match["info"].lower().replace(",", " ").split()),
                           textwrap.dedent("\n".join(body)) + "\n"))
        i += 1
    return found


def _runnable_python(block: Block) -> bool:
    return block.language in ("python", "py", "pycon") and "no-run" not in block.info


def _runnable_shell(block: Block) -> bool:
    return block.language in SHELLS and "run" in block.info


def run_python(block: Block, namespace: dict) -> None:
    """Run one Python block in ``namespace``; raise AssertionError naming the page and line."""
    if block.code.lstrip().startswith(">>>"):
        parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        test = parser.get_doctest(block.code, namespace, block.where, str(block.page), block.line)
        out: list[str] = []
        result = runner.run(test, out=out.append, clear_globs=False)
        namespace.update(test.globs)  # DocTest runs in a copy of the namespace
        if result.failed:
            raise AssertionError(f"doctest in {block.where} failed:\n{''.join(out)}")
        return
    try:
        # Padded so that tracebacks give the line number in the Markdown file.
        exec(compile("\n" * block.line + block.code, str(block.page), "exec"), namespace)  # noqa: S102
    except Exception:
        raise AssertionError(f"code block {block.where} raised:\n{traceback.format_exc()}") from None


def run_shell(block: Block) -> None:
    """Run one ``bash run`` block from the repo root with the venv's scripts first on PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "MPLBACKEND": "Agg"}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.code], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise AssertionError(f"shell block {block.where} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def _page_id(page: Path) -> str:
    return str(page.relative_to(ROOT)) if page.is_relative_to(ROOT) else page.name


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_code_blocks_of_the_page_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every python block of the page runs in order in one namespace; `bash run` blocks exit 0."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": f"docs:{_page_id(page)}"}
    for block in blocks(page):
        if _runnable_python(block):
            run_python(block, namespace)
        elif _runnable_shell(block):
            run_shell(block)


@pytest.mark.parametrize("page", PAGES, ids=_page_id)
def test_relative_links_of_the_page_exist(page: Path) -> None:
    """Every relative link of the page points at a file or folder of the checkout."""
    text = page.read_text(encoding="utf-8")
    broken = []
    for match in LINK.finditer(text):
        target = match["target"].split("#", 1)[0]
        if not target or re.match(r"^[a-z][a-z0-9+.-]*:", target):  # anchors, http:, mailto:
            continue
        if not (page.parent / target).exists():
            broken.append(f"{_page_id(page)}:{text.count(chr(10), 0, match.start()) + 1}: {match['target']}")
    assert not broken, "broken relative links:\n" + "\n".join(broken)


def test_readme_shows_the_two_commands_near_the_top() -> None:
    """`make run` and `make test` appear in the first 25 lines of the README."""
    head = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:25])
    assert "make run" in head and "make test" in head


def test_generated_tables_are_up_to_date() -> None:
    """The tables built from the code (metrics, inputs) equal what tools/doc_tables.py renders now."""
    stale = doc_tables.stale_pages()
    assert not stale, f"regenerate with `python tools/doc_tables.py --write`: stale tables in {stale}"


def test_cli_md_documents_every_option_of_every_command() -> None:
    """docs/cli.md holds a table generated from each command's parser (kept fresh by
    test_generated_tables_are_up_to_date), and every argument there has a meaning (a help text)."""
    import argparse

    from evalbridge.cli import build_parser, commands

    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    parsers = commands(build_parser())
    assert not [name for name in parsers if f"<!-- generated:cli_{name} -->" not in text]
    summary = text.split("## ", 1)[0]   # the table of commands at the top of the page: one row per command
    assert not [name for name in parsers if f"| `evalbridge {name}" not in summary]
    unexplained = [(name, action.option_strings or action.dest) for name, parser in parsers.items()
                   for action in parser._actions if not action.help]
    assert not unexplained, f"arguments without a help text: {unexplained}"
    run_options = {action.option_strings[-1] for action in parsers["run"]._actions
                   if action.option_strings and not isinstance(action, argparse._HelpAction)}
    assert {"--junit", "--annotations", "--quiet"} <= run_options
    assert all(f"`{option}" in doc_tables.cli_table("run") for option in run_options)


@pytest.mark.parametrize("example", [f.example for f in eb.formats().values()])
def test_input_table_example_builds_evalbridge_data(example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    request: pytest.FixtureRequest) -> None:
    """Each format's one-line example (the formats table) gives Qrels/Run objects with data (the
    spark-table example reads a table of the test session's Spark, made from run.txt)."""
    import pandas as pd

    for name, text in doc_tables.FILES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    eb.write(eb.read_qrels(tmp_path / "qrels.txt"), tmp_path / "qrels.parquet")
    if "spark-table" in example:
        spark = request.getfixturevalue("spark")
        rows = [(q, d, s) for q, docs in eb.read_run(tmp_path / "run.txt").items() for d, s in docs.items()]
        spark.createDataFrame(rows, "query_id string, doc_id string, score double").createOrReplaceTempView("bm25_run")
    monkeypatch.chdir(tmp_path)
    if "irds:" in example:  # ir_datasets binds its cache when imported: a fresh interpreter with the DL 2019 qrels
        _run_with_dl19_cache(example, tmp_path, request.getfixturevalue("shared"))
        return
    namespace = {"eb": eb, "pd": pd}
    if "ranx." in example:
        namespace["ranx"] = pytest.importorskip("ranx")
    if "ir_measures." in example:
        namespace["ir_measures"] = pytest.importorskip("ir_measures")
    result = eval(example, namespace)  # noqa: S307 - the documentation's own examples
    parts = result if isinstance(result, tuple) else (result,)
    assert parts and all(isinstance(p, (eb.Qrels, eb.Run)) and p.n_rows > 0 for p in parts)


def _run_with_dl19_cache(example: str, folder: Path, shared: Path) -> None:
    """Run a dataset-by-name example where ir_datasets' cache (``IR_DATASETS_HOME``) holds the TREC DL 2019
    passage qrels (where ir_datasets keeps them) and any download is refused on the loopback interface."""
    import shutil

    pytest.importorskip("ir_datasets", reason="ir_datasets is installed by `make test` (evalbridge[datasets])")
    target = folder / "irds" / "msmarco-passage" / "trec-dl-2019" / "qrels"
    target.parent.mkdir(parents=True)
    shutil.copyfile(shared / "data" / "real" / "trec-dl-2019-passage" / "qrels.dl19-passage.txt", target)
    closed = "http://127.0.0.1:9"
    env = {**os.environ, "IR_DATASETS_HOME": str(folder / "irds"), "HTTPS_PROXY": closed, "HTTP_PROXY": closed}
    code = f"import evalbridge as eb\nresult = {example}\nassert isinstance(result, eb.Qrels) and result.n_rows > 0"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240, env=env,
                          cwd=folder)
    assert done.returncode == 0, done.stderr


# --- the harness itself must be able to fail -------------------------------------------------------

def _page(tmp_path: Path, text: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(textwrap.dedent(text), encoding="utf-8")
    return page


def test_blocks_are_found_with_language_options_and_lines(tmp_path: Path) -> None:
    """The parser returns each fenced block with its language words and the fence's line number."""
    page = _page(tmp_path, """\
        # t
        ```python
        x = 1
        ```

        ````python no-run
        ```
        y = 2
        ````
        ```bash
        echo hi
        ```
        """)
    found = blocks(page)
    assert [(b.line, b.info) for b in found] == [(2, ("python",)), (6, ("python", "no-run")), (10, ("bash",))]
    assert found[1].code == "```\ny = 2\n"


def test_a_raising_block_fails_with_its_page_and_line(tmp_path: Path) -> None:
    """A block that raises fails the run with an AssertionError naming file:line."""
    (block,) = blocks(_page(tmp_path, "text\n\n```python\n1 / 0\n```\n"))
    with pytest.raises(AssertionError, match=r"(?s)page\.md:3 raised.*page\.md\", line 4.*ZeroDivisionError"):
        run_python(block, {})


def test_a_doctest_block_checks_its_shown_output(tmp_path: Path) -> None:
    """A `>>>` block whose shown output is wrong fails; blocks share one namespace."""
    first, good, bad = blocks(_page(tmp_path, """\
        ```python
        x = 20
        ```
        ```python
        >>> x + 1
        21
        ```
        ```pycon
        >>> x + 1
        22
        ```
        """))
    namespace: dict = {}
    for block in (first, good):
        run_python(block, namespace)
    with pytest.raises(AssertionError, match=r"doctest in page\.md:8"):
        run_python(bad, namespace)


def test_no_run_and_plain_shell_blocks_are_skipped_but_bash_run_is_run(tmp_path: Path) -> None:
    """`python no-run` and plain `bash` blocks are not run; a failing `bash run` block fails."""
    skipped_py, skipped_sh, run_sh = blocks(_page(tmp_path, """\
        ```python no-run
        raise SystemExit
        ```
        ```bash
        exit 3
        ```
        ```bash run
        exit 3
        ```
        """))
    assert not _runnable_python(skipped_py) and not _runnable_shell(skipped_sh) and _runnable_shell(run_sh)
    with pytest.raises(AssertionError, match="exited 3"):
        run_shell(run_sh)
