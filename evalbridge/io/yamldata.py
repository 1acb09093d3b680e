"""YAML data, read strictly (PyYAML's safe loader, with the checks it lacks).

* a key given twice in one mapping is an error naming both lines (``safe_load`` keeps the last);
* aliases may expand to at most :data:`MAX_NODES` nodes in all, so an alias bomb ("billion
  laughs") is refused at once instead of filling the memory; an alias that contains itself is
  refused with its line;
* YAML syntax errors name the line.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError

__all__ = ["load_yaml", "compose_all", "construct", "key_lines", "MAX_NODES"]

#: Most nodes a document may expand to through aliases (a config or data file has far fewer).
MAX_NODES = 1_000_000


def _syntax_error(error: Exception, source: str) -> InputError:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    return InputError(f"not valid YAML: {problem}.", source=source, line=mark.line + 1 if mark is not None else None,
                      fix="check indentation, and quote strings that start with special characters (e.g. '>= 0.8').")


def _check(root: Any, source: str) -> None:
    """Refuse duplicate keys, recursive aliases and documents that expand past :data:`MAX_NODES`."""
    import yaml

    expanded = 0
    counted: dict[int, int] = {}  # node id -> nodes it expands to (aliases share node objects)

    def size(node: Any, open_: set[int]) -> int:
        nonlocal expanded
        key = id(node)
        if key in counted:
            return counted[key]
        if key in open_:
            raise InputError("an alias refers to the node that contains it (a recursive structure).", source=source,
                             line=node.start_mark.line + 1, fix="remove the recursive alias.")
        open_.add(key)
        total = 1
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for k, v in node.value:
                name = getattr(k, "value", None)
                line = k.start_mark.line + 1
                if isinstance(name, str) and name in seen and name != "<<":
                    raise InputError(f"the key {name!r} is given twice (lines {seen[name]} and {line}).",
                                     source=source, line=line, fix="keep one of them.")
                seen[name] = line
                total += size(k, open_) + size(v, open_)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                total += size(item, open_)
        open_.discard(key)
        counted[key] = total
        expanded = max(expanded, total)
        if total > MAX_NODES:
            raise InputError(f"the document expands to more than {MAX_NODES:,} nodes through its aliases.",
                             source=source, line=node.start_mark.line + 1,
                             fix="write the data out instead of nesting aliases (this looks like an alias bomb).")
        return total

    size(root, set())


def compose_all(text: str, source: str) -> list[Any]:
    """The checked node tree of every document (None for an empty document)."""
    import sys

    import yaml

    try:
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError as error:
        raise _syntax_error(error, source) from None
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(max(limit, 20_000))
        for node in nodes:
            if node is not None:
                _check(node, source)
    except RecursionError:
        raise InputError("the YAML nests too deeply.", source=source, fix="flatten the data.") from None
    finally:
        sys.setrecursionlimit(limit)
    return nodes


def load_yaml(text: str, *, source: str) -> Any:
    """The data of a one-document YAML text, checked as the module docstring says."""
    nodes = compose_all(text, source)
    if len(nodes) != 1:
        raise InputError(f"expected one YAML document; got {len(nodes)}.", source=source,
                         fix="a data file holds one document (no '---' separators).")
    return None if nodes[0] is None else construct(nodes[0], source)


def key_lines(node: Any) -> dict[tuple, int]:
    """Key path -> line number (1-based) of every mapping key and list item under ``node``."""
    import yaml

    table: dict[tuple, int] = {}

    def walk(item: Any, path: tuple, depth: int) -> None:
        table.setdefault(path, item.start_mark.line + 1)
        if depth > 64:  # aliases were bounded by compose_all; the key paths of a config are shallow
            return
        if isinstance(item, yaml.MappingNode):
            for key, value in item.value:
                table[path + (key.value,)] = key.start_mark.line + 1
                walk(value, path + (key.value,), depth + 1)
        elif isinstance(item, yaml.SequenceNode):
            for i, child in enumerate(item.value):
                walk(child, path + (i,), depth + 1)

    walk(node, (), 0)
    return table


def construct(node: Any, source: str) -> Any:
    """The Python data of a checked node (see :func:`compose_all`)."""
    import yaml

    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as error:
        raise _syntax_error(error, source) from None
    finally:
        loader.dispose()
