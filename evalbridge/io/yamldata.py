"""Strict reading of YAML configs and of the YAML / JSON data files they point to.

:func:`load_yaml_documents` is the one YAML reader (PyYAML's safe loader, plain data only). On
top of ``yaml.safe_load_all`` it refuses what would silently go wrong later:

* duplicate keys (``safe_load`` keeps the last one silently): both lines are named;
* an alias bomb ("billion laughs"): the nodes reached through aliases are counted without being
  expanded, and a document whose aliases expand to more than ``max_alias_nodes`` (100,000) is
  refused at once, naming the alias and its line;
* a recursive alias (``a: &x [*x]``): named with its key path;
* text that is not UTF-8 (with the line of the first bad byte), UTF-16 / UTF-32 files (by their
  byte order mark); a UTF-8 byte order mark is stripped and reading goes on;
* YAML errors and Python tags, with the line, the problem and a fix;
* nesting deeper than Python can follow.

Each document comes with a table: key path (a tuple of keys and list indices) -> line number,
for error messages (``runs.bm25.path`` -> line 4). Data reached through an alias is a copy: two
places never share one mutable object.

:func:`load_data_file` reads a ``.json``, ``.yaml`` or ``.yml`` data file (``path: data.yaml``
in a config) with the same strictness; JSON duplicate keys are refused too, with both lines.

Example:
    >>> documents = load_yaml_documents("runs:\\n  bm25: run.txt\\nmetrics: [P@5, mrr]\\n", "eval.yaml")
    >>> data, lines = documents[0]
    >>> data, lines[("runs", "bm25")], lines[("metrics", 1)]
    ({'runs': {'bm25': 'run.txt'}, 'metrics': ['P@5', 'mrr']}, 2, 3)
    >>> load_yaml_documents("a: 1\\nb: 2\\na: 3\\n", "eval.yaml")
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: eval.yaml:3: the key 'a' is given twice (lines 1 and 3). Fix: keep one of them.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..errors import InputError
from .text import file_error

__all__ = ["load_yaml_documents", "load_yaml", "load_data_file", "dotted", "MAX_ALIAS_NODES", "KeyPath",
           "LineTable"]

#: Nodes a document may reach through aliases (a billion-laughs document reaches 10**9).
MAX_ALIAS_NODES = 100_000

KeyPath = tuple[Any, ...]
#: key path -> line number (1-based) of the key, or of the list item
LineTable = dict[KeyPath, int]

_MERGE = "tag:yaml.org,2002:merge"
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"

#: Byte order marks of encodings that are not UTF-8 (UTF-32 first: its LE mark starts like UTF-16's).
_FOREIGN_BOMS: Mapping[bytes, str] = {
    b"\xff\xfe\x00\x00": "UTF-32", b"\x00\x00\xfe\xff": "UTF-32", b"\xff\xfe": "UTF-16", b"\xfe\xff": "UTF-16"}
_UTF8_BOM = b"\xef\xbb\xbf"

#: part of a PyYAML problem -> the fix to suggest
_YAML_FIXES: Mapping[str, str] = {
    "found character '\\t'": "indent with spaces: YAML does not allow tabs there.",
    "mapping values are not allowed here": "quote a value that contains ': ' (e.g. title: \"bm25: baseline\"), or "
                                           "check the indentation.",
    "found undefined alias": "define the anchor (&name) before the alias (*name), in the same document.",
    "found duplicate anchor": "give each anchor (&name) its own name.",
    "could not determine a constructor": "only plain YAML data is read: remove the tag (e.g. !!python/...).",
    "expected <block end>": "check the indentation: the keys of one mapping, and the items of one list, start in "
                            "the same column.",
    "could not find expected ':'": "add ': ' after the key, or quote the text.",
    "found unexpected end of stream": "close the quote or bracket that starts on the line named.",
    "expected ',' or ']'": "close the list with ']' (or quote a value that contains ': ').",
    "expected ',' or '}'": "close the mapping with '}' (or quote a value that contains ': ').",
}
_DEFAULT_FIX = "check the indentation, and quote strings that start with special characters (e.g. '>= 0.8')."


def dotted(path: KeyPath) -> str:
    """A key path as people write it: ``runs.bm25.path``, ``metrics[2]``, ``(top level)``; a control character in
    a key shown as its escape (a key is the user's text, and the path goes into one-line messages).

    >>> dotted(("runs", "bm25", "path")), dotted(("metrics", 2)), dotted(()), dotted(("a\\n::error::x",))
    ('runs.bm25.path', 'metrics[2]', '(top level)', 'a\\\\n::error::x')
    """
    from ..common.escaping import message_text

    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) and not isinstance(part, bool) else (
            f".{message_text(str(part))}" if text else message_text(str(part)))
    return text or "(top level)"


def _decode(data: str | bytes, source: str) -> str:
    """UTF-8 text without its byte order mark; refuses other encodings with the line of the first bad byte."""
    if isinstance(data, str):
        return data[1:] if data.startswith("\ufeff") else data
    for bom, encoding in _FOREIGN_BOMS.items():
        if data.startswith(bom):
            raise InputError(f"the file is {encoding} text (it starts with a {encoding} byte order mark); "
                             "UTF-8 is expected.", source=source, line=1,
                             fix="save it as UTF-8 (in most editors: Save with encoding > UTF-8).")
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM):]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - data.rfind(b"\n", 0, error.start)
        raise InputError(f"not UTF-8 text: byte 0x{data[error.start]:02x} at column {column} cannot be decoded "
                         f"({error.reason}).", source=source, line=line,
                         fix="save the file as UTF-8 (in most editors: Save with encoding > UTF-8).") from None


# ---------------------------------------------------------------- YAML

@functools.lru_cache(maxsize=1)
def _loader_class() -> type:
    """PyYAML's SafeLoader that also remembers where each alias was written (created on first use)."""
    import yaml

    class Loader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            #: (id(parent node), slot) -> (anchor, line); slot = list index or id(key node)
            self.alias_at: dict[tuple[int, int], tuple[str, int]] = {}

        def compose_node(self, parent: Any, index: Any) -> Any:
            if parent is not None and index is not None and self.check_event(yaml.AliasEvent):
                # through the class: types-PyYAML leaves peek_event unannotated (pyproject: untyped_calls_exclude)
                event = yaml.SafeLoader.peek_event(self)
                node = super().compose_node(parent, index)
                slot = index if isinstance(index, int) else id(index)
                self.alias_at[(id(parent), slot)] = (event.anchor, event.start_mark.line + 1)
                return node
            return super().compose_node(parent, index)

    # Numbers are plain decimals, as YAML 1.2 and JSON write them (and as evalbridge.common.values reads text): YAML 1.1
    # would read 010 as 8, 1_000 as 1000, 1:30 as 90 and 0x1F as 31 without a word; those stay strings here, so a
    # grade or a score written so is refused where it is read, and an id keeps its spelling. 1e-9 is a number.
    import re

    from ..common.values import DECIMAL, INTEGER

    Loader.yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag not in (_INT, _FLOAT)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    Loader.add_implicit_resolver(_INT, re.compile(INTEGER), list("-+0123456789"))
    Loader.add_implicit_resolver(_FLOAT, re.compile(f"{DECIMAL}|^[-+]?\\.(?:inf|Inf|INF)$|^\\.(?:nan|NaN|NAN)$"),
                                 list("-+0123456789."))
    def decimal(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
        return int(loader.construct_scalar(node))  # 010 is ten, not eight

    Loader.add_constructor(_INT, decimal)
    return Loader


class _Walk:
    """One document's checks and line table.

    :meth:`budget` walks the document as written (aliases not followed) and adds up what every
    alias stands for, from memoised subtree sizes: a bomb is refused before anything is expanded.
    :meth:`lines_of` then walks the expanded tree (bounded by the budget), refusing duplicate and
    non-scalar keys and recording the line of every key path.
    """

    def __init__(self, loader: Any, source: str, limit: int) -> None:
        import yaml

        self.yaml, self.loader, self.source, self.limit = yaml, loader, source, limit
        self.lines: LineTable = {}
        self.expanded = 0
        self.sizes: dict[int, int] = {}

    def fail(self, message: str, line: int, fix: str) -> InputError:
        return InputError(message, source=self.source, line=line, fix=fix)

    def children(self, node: Any, path: KeyPath) -> Iterator[tuple[Any, int, Any, KeyPath, int | None]]:
        """``(parent, slot, child, path, key line)`` of a node; the key line is None for list items and for
        what a merge (``<<``) brings, whose keys belong to the merging mapping."""
        if isinstance(node, self.yaml.SequenceNode):
            for index, item in enumerate(node.value):
                yield node, index, item, path + (index,), None
        elif isinstance(node, self.yaml.MappingNode):
            for key_node, value in node.value:
                if key_node.tag != _MERGE:
                    yield node, id(key_node), value, path + (self.key(key_node, path),), key_node.start_mark.line + 1
                elif isinstance(value, self.yaml.SequenceNode):  # `<<: [*a, *b]`
                    for index, item in enumerate(value.value):
                        yield value, index, item, path, None
                else:  # `<<: *defaults`
                    yield node, id(key_node), value, path, None

    def key(self, node: Any, path: KeyPath) -> Any:
        if not isinstance(node, self.yaml.ScalarNode):
            kind = "list" if isinstance(node, self.yaml.SequenceNode) else "mapping"
            raise self.fail(f"a key under {dotted(path)} is a {kind}; keys are plain values.",
                            node.start_mark.line + 1, fix="use a string or a number as the key.")
        return self.loader.construct_object(node)

    def size(self, node: Any, open_nodes: set[int]) -> int:
        """Nodes in ``node``'s expansion (aliases expanded), computed without expanding: memoised per node."""
        key = id(node)
        if key in self.sizes:
            return self.sizes[key]
        if key in open_nodes:
            raise self.fail("an alias refers to a node that contains it (a recursive structure).",
                            node.start_mark.line + 1, fix="YAML data must be a tree: remove that alias.")
        open_nodes.add(key)
        children = (node.value if isinstance(node, self.yaml.SequenceNode) else
                    [n for pair in node.value for n in pair] if isinstance(node, self.yaml.MappingNode) else [])
        total = 1 + sum(self.size(child, open_nodes) for child in children)
        open_nodes.discard(key)
        self.sizes[key] = total
        return total

    def budget(self, node: Any, path: KeyPath, ancestors: frozenset[int]) -> None:
        """Refuse recursive aliases and a document whose aliases stand for more than ``limit`` nodes."""
        ancestors = ancestors | {id(node)}
        for parent, slot, child, child_path, _ in self.children(node, path):
            alias = self.loader.alias_at.get((id(parent), slot))
            if alias is None:
                self.budget(child, child_path, ancestors)
                continue
            anchor, line = alias
            if id(child) in ancestors:
                raise self.fail(f"the alias *{anchor} at {dotted(child_path)} refers to a node that contains it (a "
                                "recursive structure).", line, fix="YAML data must be a tree: remove that alias.")
            reached = self.size(child, set())
            self.expanded += reached
            if self.expanded > self.limit:
                raise self.fail(f"the aliases of this document expand to more than {self.limit:,} nodes (the "
                                f"alias *{anchor} at {dotted(child_path)} alone reaches {reached:,}): an alias bomb.",
                                line, fix="write the data out instead of repeating it through aliases, or split "
                                          "the file.")

    def lines_of(self, node: Any, path: KeyPath, *, merged: bool) -> None:
        """Record the line of ``node``'s key path and of everything below; refuse duplicate keys."""
        self.record(path, node.start_mark.line + 1, weak=True)
        seen: dict[Any, int] = {}
        for parent, slot, child, child_path, line in self.children(node, path):
            alias = self.loader.alias_at.get((id(parent), slot))
            from_merge = line is None and isinstance(node, self.yaml.MappingNode)
            if line is not None:
                key = child_path[-1]
                if key in seen:
                    raise self.fail(f"the key {dotted(child_path)!r} is given twice (lines {seen[key]} and {line}).",
                                    line, fix="keep one of them.")
                seen[key] = line
                self.record(child_path, line, weak=merged)
            if alias is not None:
                self.record(child_path, alias[1], weak=merged or from_merge)
            self.lines_of(child, child_path, merged=merged or from_merge)

    def record(self, path: KeyPath, line: int, *, weak: bool) -> None:
        if weak:
            self.lines.setdefault(path, line)
        else:
            self.lines[path] = line


def _unshared(value: Any) -> Any:
    """A copy in which no list or dict appears twice (aliases give shared objects)."""
    if isinstance(value, dict):
        return {k: _unshared(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unshared(v) for v in value]
    return value


def _yaml_error(error: Exception, text: str, source: str) -> InputError:
    """An InputError with the line, the problem and a fix, from any PyYAML error."""
    import yaml

    if isinstance(error, yaml.reader.ReaderError):
        line = text.count("\n", 0, error.position) + 1
        return InputError(f"the character U+{error.character:04X} is not allowed in YAML.", source=source, line=line,
                          fix="remove it (YAML allows control characters only as escapes in double quotes, "
                              "e.g. \"\\x07\").")
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    problem = getattr(error, "problem", None) or str(error)
    context, opened = getattr(error, "context", None), getattr(error, "context_mark", None)
    if context and opened is not None and opened is not mark:
        context += f" that starts on line {opened.line + 1}"
    fix = next((fix for part, fix in _YAML_FIXES.items() if part in problem), _DEFAULT_FIX)
    return InputError(f"not valid YAML: {problem}" + (f" ({context})" if context else "") + ".", source=source,
                      line=mark.line + 1 if mark is not None else None, fix=fix)


def load_yaml_documents(text: str | bytes, source: str, *,
                        max_alias_nodes: int = MAX_ALIAS_NODES) -> list[tuple[Any, LineTable]]:
    """Every document of a YAML text as ``(data, lines)``; ``lines`` maps key paths to line numbers.

    ``text`` may be bytes (decoded as UTF-8; a UTF-8 byte order mark is stripped). ``source``
    names the file in messages. An empty text has no documents; an empty document (``---`` alone)
    is ``(None, {(): line})``. Keys reached through a merge (``<<: *defaults``) are in the table at
    the mapping that merges them (with the line where they are written). The alias budget counts
    the nodes every alias stands for, aliases inside it included, per document.

    Raises:
        InputError: not UTF-8, not YAML, a Python tag, a duplicate key, a non-scalar key, an alias
            bomb, a recursive alias, nesting too deep; with file:line and a fix.
    """
    import yaml

    decoded = _decode(text, source)
    documents: list[tuple[Any, LineTable]] = []
    loader = None
    try:
        loader = _loader_class()(decoded)  # reading starts here: it refuses control characters
        while loader.check_node():
            node = loader.get_node()
            walk = _Walk(loader, source, max_alias_nodes)
            walk.budget(node, (), frozenset())
            walk.lines_of(node, (), merged=False)
            documents.append((_unshared(loader.construct_document(node)), walk.lines))
            loader.alias_at.clear()
    except yaml.YAMLError as error:
        raise _yaml_error(error, decoded, source) from None
    except RecursionError:
        raise InputError("the YAML is nested too deeply to be read.", source=source,
                         fix="flatten the data (a config or data file needs a few levels).") from None
    finally:
        if loader is not None:
            loader.dispose()
    return documents


# ---------------------------------------------------------------- data files

class _DuplicateKey(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        raise _DuplicateKey
    return data


def _json_duplicate(text: str, source: str) -> InputError:
    """The first duplicate key of a JSON text with both its lines (parsed again, in pure Python, to know where)."""
    # CPython's pure-Python JSON parser: public modules, private helpers that typeshed does not declare
    from json.decoder import JSONObject  # type: ignore[attr-defined]
    from json.scanner import py_make_scanner  # type: ignore[attr-defined]

    found: list[InputError] = []

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, object_hook: Any,
                     object_pairs_hook: Any, memo: Any = None) -> tuple[dict[str, Any], int]:
        starts: list[int] = []

        def scan_value(string: str, index: int) -> Any:
            starts.append(index)
            return scan_once(string, index)

        pairs, end = JSONObject(s_and_end, strict, scan_value, None, lambda p: p, memo)
        seen: dict[str, int] = {}
        for (key, _), start in zip(pairs, starts):
            line = text.count("\n", 0, start) + 1
            if key in seen and not found:
                lines = f"twice on line {line}" if seen[key] == line else f"lines {seen[key]} and {line}"
                found.append(InputError(f"the key {key!r} appears twice in one JSON object ({lines}).",
                                        source=source, line=line, fix="keep one of them."))
            seen[key] = line
        return dict(pairs), end

    decoder: Any = json.JSONDecoder()  # typeshed does not declare the parser hooks set below
    decoder.parse_object = parse_object
    decoder.scan_once = py_make_scanner(decoder)
    decoder.decode(text)
    return found[0] if found else InputError("a key appears twice in one JSON object.", source=source,
                                             fix="keep one of them.")


def _read_json(data: bytes, source: str) -> Any:
    text = _decode(data, source)
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs)
    except json.JSONDecodeError as error:
        raise InputError(f"not valid JSON: {error.msg} (column {error.colno}).", source=source, line=error.lineno,
                         fix="check the brackets, commas and quotes (JSON needs double quotes, no trailing "
                             "comma).") from None
    except _DuplicateKey:
        raise _json_duplicate(text, source) from None
    except RecursionError:
        raise InputError("the JSON is nested too deeply to be read.", source=source,
                         fix="flatten the data.") from None


def load_yaml(text: str | bytes, *, source: str) -> Any:
    """The data of a YAML text that holds exactly one document (a data file), read as strictly as a config.

    Raises:
        InputError: no document or several, or anything :func:`load_yaml_documents` refuses.

    >>> load_yaml("q1: [1, 0, 1]\\nq2: [0, 1]\\n", source="labels.yaml")
    {'q1': [1, 0, 1], 'q2': [0, 1]}
    """
    documents = load_yaml_documents(text, source)
    if not documents:
        raise InputError("the file is empty.", source=source, fix="write the data in it (e.g. q1: [1, 0, 1]).")
    if len(documents) > 1:
        raise InputError(f"the file holds {len(documents)} YAML documents; a data file holds one.", source=source,
                         fix="write the data as one document (no '---' between parts).")
    return documents[0][0]


def _read_yaml(data: bytes, source: str) -> Any:
    return load_yaml(data, source=source)


#: file suffix -> reader(bytes, source)
_DATA_READERS = {".json": _read_json, ".yaml": _read_yaml, ".yml": _read_yaml}


def load_data_file(path: str | os.PathLike[str]) -> Any:
    """The data of a ``.json``, ``.yaml`` or ``.yml`` file, read as strictly as a config.

    JSON: UTF-8 (a byte order mark is stripped), duplicate keys refused with both lines. YAML:
    :func:`load_yaml_documents`, exactly one document.

    Raises:
        InputError: another suffix, a missing or unreadable file, or anything
            :func:`load_yaml_documents` refuses; with file:line and a fix.

    >>> import pathlib, tempfile
    >>> file = pathlib.Path(tempfile.mkdtemp()) / "labels.json"
    >>> _ = file.write_text('{"q1": [1, 0, 1],\\n "q1": [0, 0, 1]}')
    >>> load_data_file(file)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    evalbridge.errors.InputError: ...labels.json:2: the key 'q1' appears twice in one JSON object (lines 1 and 2). \
Fix: ...
    """
    file = Path(path)
    reader = _DATA_READERS.get(file.suffix.lower())
    if reader is None:
        raise InputError(f"a data file is .json, .yaml or .yml; got {file.name!r}.", source=str(file),
                         fix="convert it, or give it the right suffix.")
    try:
        data = file.read_bytes()
    except FileNotFoundError:
        raise file_error(file, "missing") from None
    except IsADirectoryError:
        raise file_error(file, "folder") from None
    except OSError as error:
        raise InputError(f"the file cannot be read ({error.strerror}).", source=str(file),
                         fix="check its permissions.") from None
    return reader(data, str(file))
