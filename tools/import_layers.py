"""The imports between evalbridge's folders and files, every one (lazy and type-checking ones included): the circles.

A folder of the package is a stage of the flow (docs/architecture.md); its modules import only their own folder and
the folders below, so no two folders import each other, and no two files either, directly or through others.

    python tools/import_layers.py      # prints the folder arrows and any circle; exit 1 if there is one
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "evalbridge"


def _module(path: Path) -> list[str]:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return parts[:-1] if parts[-1] == "__init__" else parts


def file_imports() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports (``from .x import y`` of a submodule y counts as x.y)."""
    modules = {".".join(_module(p)): p for p in PACKAGE.rglob("*.py")}
    found: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    found[name].add(sub if sub in modules else target)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                found[name].update(n for n in names if n in modules)
    return {name: {t for t in targets if t != name and t in modules} for name, targets in found.items()}


def _folder(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else module


def folder_imports() -> dict[str, set[str]]:
    """Folder (or root module) -> the folders it imports."""
    out: dict[str, set[str]] = defaultdict(set)
    for source, targets in file_imports().items():
        for target in targets:
            if _folder(target) != _folder(source) and _folder(target) != "evalbridge":
                out[_folder(source)].add(_folder(target))
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def main() -> int:
    folders = folder_imports()
    for folder in sorted(folders):
        print(f"{folder} -> {', '.join(sorted(folders[folder]))}")
    found = circles(folders) + circles(file_imports())
    for group in found:
        print("circle:", " <-> ".join(group))
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
