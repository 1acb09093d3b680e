"""The tree shows the architecture: the package root holds only its four modules, and no two folders (nor two files)
import each other, lazy and type-checking imports included (tools/import_layers.py)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("import_layers", ROOT / "tools" / "import_layers.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["import_layers"] = module
    spec.loader.exec_module(module)
    return module


def test_the_package_root_holds_only_its_four_modules() -> None:
    assert sorted(p.name for p in (ROOT / "evalbridge").glob("*.py")) == \
        ["__init__.py", "__main__.py", "_version.py", "errors.py"]


def test_no_two_folders_import_each_other() -> None:
    tool = _tool()
    assert tool.circles(tool.folder_imports()) == []


def test_no_two_files_import_each_other() -> None:
    tool = _tool()
    assert tool.circles(tool.file_imports()) == []


def test_a_circle_is_found_where_there_is_one() -> None:
    tool = _tool()
    assert tool.circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
