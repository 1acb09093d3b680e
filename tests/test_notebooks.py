"""The notebooks run from top to bottom in a plain copy of the repository, and git holds them without outputs.

A user who clones the repository has no ``../shared`` beside it, so the notebooks run in a copy of the
files a clone holds (``git ls-files``: tracked and new, not ignored), made in a temporary folder with no
``shared`` folder beside it, plus ``.cache/robust04`` that ``make demo-data`` fetches from PyPI. Each
runs in a fresh kernel whose interpreter is the one running the tests (the ``.venv`` under ``make
test``) and whose ``PYTHONPATH`` is the copy (so it imports the copy's evalbridge), with the copy's
``notebooks/`` as working directory. A notebook fails if any cell raises; the notebooks assert their own
numbers (the worked examples of the user's documents, the published TREC DL 2019 results).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from demo_data import fetch_robust04

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: the notebooks, in reading order (01-04 from issue 6; 05 on judge agreement; 06 from numbers to decisions;
#: 07 pool, judge, merge, what changed)
EXPECTED = ("01_quickstart_rag.ipynb", "02_llm_graded_relevance.ipynb", "03_library_cross_validation.ipynb",
            "04_config_runs_and_comparison.ipynb", "05_llm_judges.ipynb", "06_decisions.ipynb", "07_eval_sets.ipynb")
#: seconds any one cell may take (the first ranx import compiles numba code)
CELL_TIMEOUT = 600

sys.path.insert(0, str(ROOT / "tools"))
import strip_notebooks  # noqa: E402

sys.path.remove(str(ROOT / "tools"))


def _kernel_manager(tmp_path: Path, env: dict[str, str] | None = None):  # noqa: ANN202 - a KernelManager
    """A kernel manager whose kernel is ``sys.executable`` (never a kernel found elsewhere on the machine),
    with ``env`` added to its environment."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = tmp_path / "kernels" / "evalbridge-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "evalbridge tests", "language": "python", "env": env or {}}))
    specs = KernelSpecManager(kernel_dirs=[str(spec.parent)], ensure_native_kernel=False)
    return KernelManager(kernel_name="evalbridge-test", kernel_spec_manager=specs)


def execute(path: Path, tmp_path: Path, env: dict[str, str] | None = None):  # noqa: ANN201 - a NotebookNode
    """Run the notebook at ``path`` in a fresh kernel (``env`` added to its environment), from the notebook's
    folder; raise ``CellExecutionError`` if a cell raises."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, km=_kernel_manager(tmp_path, env), timeout=CELL_TIMEOUT,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    return nb


def clone_files(root: Path) -> list[str]:
    """The files a clone of the checkout at ``root`` would hold once its changes are committed: tracked files
    that still exist, and new files git does not ignore."""
    done = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"{root} is not a git checkout (git ls-files: {done.stderr.decode(errors='replace').strip()})")
    return [name for name in done.stdout.decode().split("\0") if name and (root / name).is_file()]


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository as a user's clone has it, in a temporary folder with no ``shared`` folder beside it,
    with the demo data `make demo-data` fetches."""
    copy = tmp_path_factory.mktemp("clone") / "evalbridge"
    for name in clone_files(ROOT):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, copy / name)
    shutil.copytree(fetch_robust04(), copy / ".cache" / "robust04")
    return copy


def _clean_env(copy: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(copy), "MPLBACKEND": "Agg"}


def test_the_copy_is_a_plain_clone_and_its_kernel_uses_its_evalbridge(clean_copy: Path, tmp_path: Path) -> None:
    """No ``shared`` folder beside the copy, no untracked data in it; a notebook's kernel imports the copy's
    evalbridge and starts in the copy's notebooks/ folder."""
    import nbformat

    assert not (clean_copy.parent / "shared").exists() and not (clean_copy / ".venv").exists()
    assert (clean_copy / "examples" / "README.md").is_file() and (clean_copy / "notebooks").is_dir()
    probe = clean_copy / "notebooks" / "probe.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import os, evalbridge; print(evalbridge.__file__); print(os.getcwd())")]), probe)
    try:
        out = execute(probe, tmp_path, _clean_env(clean_copy)).cells[0].outputs[0].text.split()
    finally:
        probe.unlink()
    assert out == [str(clean_copy / "evalbridge" / "__init__.py"), str(clean_copy / "notebooks")]


def test_the_expected_notebooks_are_there() -> None:
    """notebooks/ holds exactly the expected notebooks."""
    assert tuple(sorted(p.name for p in NOTEBOOKS.glob("*.ipynb"))) == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_committed_notebook_has_no_outputs(name: str) -> None:
    """The notebook file holds no outputs, execution counts or run-time metadata (see tools/strip_notebooks.py)."""
    import nbformat

    path = NOTEBOOKS / name
    if not path.exists():
        pytest.fail(f"{path} is missing")
    assert strip_notebooks.problems(nbformat.read(path, as_version=4)) == []


def nbconvert(path: Path, folder: Path, env: dict[str, str]):  # noqa: ANN201 - nbformat.NotebookNode
    """Run the notebook as README.md tells a user to, `jupyter nbconvert --to notebook --execute` (the kernel
    is the venv's own python3), and read the executed copy it writes into ``folder``."""
    import nbformat

    done = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                           f"--ExecutePreprocessor.timeout={CELL_TIMEOUT}", "--output-dir", str(folder), str(path)],
                          capture_output=True, text=True, env={**os.environ, **env}, timeout=CELL_TIMEOUT * 2)
    assert done.returncode == 0, done.stderr[-3000:]
    return nbformat.read(folder / path.name, as_version=4)


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_runs_from_a_plain_clone(name: str, clean_copy: Path, tmp_path: Path) -> None:
    """Every cell of the notebook runs in the venv's kernel, in a copy of the repository with no ../shared
    (the notebook asserts its own numbers); the first one through `jupyter nbconvert --execute`."""
    path = clean_copy / "notebooks" / name
    if not path.exists():
        pytest.fail(f"{path} is missing")
    run = nbconvert if name == EXPECTED[0] else execute
    nb = run(path, tmp_path, _clean_env(clean_copy))
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count is not None for cell in code)


def test_a_raising_cell_fails_the_run(tmp_path: Path) -> None:
    """The harness reports a cell that raises (so a broken notebook cannot pass), and runs in this interpreter."""
    import nbformat
    from nbclient.exceptions import CellExecutionError

    good = tmp_path / "good.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys, os; print(sys.executable, os.getcwd())")])
    nbformat.write(nb, good)
    out = execute(good, tmp_path / "a").cells[0].outputs[0].text
    assert out.split() == [sys.executable, str(tmp_path)]

    bad = tmp_path / "bad.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert 1 + 1 == 3, 'arithmetic'")]),
                   bad)
    with pytest.raises(CellExecutionError, match="arithmetic"):
        execute(bad, tmp_path / "b")


def test_strip_removes_outputs_counts_and_metadata() -> None:
    """strip() leaves nothing that problems() reports, and keeps the source and the kernel spec."""
    import nbformat

    cell = nbformat.v4.new_code_cell("1 + 1", execution_count=3,
                                     outputs=[nbformat.v4.new_output("execute_result", {"text/plain": "2"},
                                                                     execution_count=3)])
    cell.metadata["execution"] = {"iopub.status.busy": "now"}
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb = nbformat.v4.new_notebook(cells=[cell], metadata={"kernelspec": kernel, "language_info": {"name": "python", "version": "3.11"}})
    assert len(strip_notebooks.problems(nb)) == 4
    stripped = strip_notebooks.strip(nb)
    assert strip_notebooks.problems(stripped) == []
    assert stripped.cells[0].source == "1 + 1" and stripped.metadata == {"kernelspec": kernel}
