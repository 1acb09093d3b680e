"""Strip outputs and execution counts from notebooks, so git holds only their source.

Usage::

    python tools/strip_notebooks.py                 # strip notebooks/*.ipynb in place
    python tools/strip_notebooks.py --check         # exit 1 and list the notebooks that hold outputs
    python tools/strip_notebooks.py path/a.ipynb    # only these files

Notebook metadata is reduced to the kernel spec (no Python version, no widget state), so
running a notebook locally and stripping it again gives back the committed file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
#: notebook-level metadata kept in git
KEEP_METADATA = ("kernelspec",)
#: cell-level metadata dropped (set by Jupyter when a notebook is run or viewed)
DROP_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime")


def problems(nb) -> list[str]:  # noqa: ANN001 - nbformat.NotebookNode
    """What ``nb`` holds that a stripped notebook does not: one line per cell or key."""
    found = [f"notebook metadata {key!r}" for key in nb.metadata if key not in KEEP_METADATA]
    for index, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        if cell.get("outputs"):
            found.append(f"cell {index}: {len(cell.outputs)} output(s)")
        if cell.get("execution_count") is not None:
            found.append(f"cell {index}: execution count {cell.execution_count}")
        found += [f"cell {index}: metadata {key!r}" for key in cell.metadata if key in DROP_CELL_METADATA]
    return found


def strip(nb):  # noqa: ANN001, ANN201 - nbformat.NotebookNode
    """``nb`` without outputs, execution counts and run-time metadata (modified in place and returned)."""
    for key in [k for k in nb.metadata if k not in KEEP_METADATA]:
        del nb.metadata[key]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in DROP_CELL_METADATA:
            cell.metadata.pop(key, None)
    return nb


def main(argv: list[str] | None = None) -> int:
    """Strip (or, with ``--check``, only report) the given notebooks; default ``notebooks/*.ipynb``."""
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--check", action="store_true", help="report notebooks with outputs, change nothing")
    args = parser.parse_args(argv)
    dirty = 0
    for path in args.paths or sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        found = problems(nb)
        if not found:
            continue
        dirty += 1
        if args.check:
            print(f"{path}: " + "; ".join(found))
        else:
            nbformat.write(strip(nb), path)
            print(f"stripped {path}")
    return 1 if args.check and dirty else 0


if __name__ == "__main__":
    sys.exit(main())
