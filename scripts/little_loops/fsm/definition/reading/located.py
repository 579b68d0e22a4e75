"""Loop data whose every value remembers the file and line it was written at (for `reuse`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from little_loops.fsm.definition.reading.loader import KeyPath, LoadedDocument
from little_loops.fsm.facts.errors import LoopFileError


@dataclass(slots=True)
class Node:
    """A value of a loop file: a mapping of Nodes, a list of Nodes or a plain value, and
    where it was written (the line of its key, or of its list item)."""

    value: Any
    file: str
    line: int | None

    def fail(self, detail: str) -> LoopFileError:
        """The one-line error about this value, at its file and line."""
        return LoopFileError(self.file, detail, self.line)

    def get(self, key: str) -> Node | None:
        """The value at *key* when this is a mapping that has it."""
        return self.value.get(key) if isinstance(self.value, dict) else None

    def plain(self) -> Any:
        """The value as plain data, without the places."""
        if isinstance(self.value, dict):
            return {key: node.plain() for key, node in self.value.items()}
        if isinstance(self.value, list):
            return [node.plain() for node in self.value]
        return self.value


def wrap(doc: LoadedDocument) -> Node:
    """The whole document *doc* as Nodes (the top level at line 1)."""
    return _wrap(doc.data, doc, (), 1)


def _wrap(value: Any, doc: LoadedDocument, path: KeyPath, line: int | None) -> Node:
    file = doc.files.get(path, doc.source) if path else doc.source
    if isinstance(value, dict):
        items = {k: _wrap(v, doc, (*path, k), doc.lines.get((*path, k))) for k, v in value.items()}
        return Node(items, file, line)
    if isinstance(value, list):
        listed = [_wrap(v, doc, (*path, i), doc.lines.get((*path, i))) for i, v in enumerate(value)]
        return Node(listed, file, line)
    return Node(value, file, line)


def new(value: Any, at: Node) -> Node:
    """A value made from the one at *at* (a state made of a `flow:` entry): placed there."""
    if isinstance(value, dict):
        return Node(
            {k: v if isinstance(v, Node) else new(v, at) for k, v in value.items()},
            at.file,
            at.line,
        )
    return Node(value, at.file, at.line)


def deep_merge(base: Node, over: Node) -> Node:
    """*over* laid on *base*: mappings merge key by key at every level, *over*'s keys
    winning; any other value of *over* (a list, a text) replaces *base*'s whole."""
    if not (isinstance(base.value, dict) and isinstance(over.value, dict)):
        return over
    merged = dict(base.value)
    for key, node in over.value.items():
        merged[key] = deep_merge(merged[key], node) if key in merged else node
    return Node(merged, over.file, over.line)


def unwrap(root: Node, source: str) -> LoadedDocument:
    """The document the Nodes *root* stand for, read from *source*: its data, the line of
    each key and, for keys from another file, that file."""
    doc = LoadedDocument(data={}, source=source)
    data = _unwrap(root, (), doc)
    doc.data = data if isinstance(data, dict) else {}
    return doc


def _unwrap(node: Node, path: KeyPath, doc: LoadedDocument) -> Any:
    if path:
        if node.line is not None:
            doc.lines[path] = node.line
        if node.file != doc.source:
            doc.files[path] = node.file
    if isinstance(node.value, dict):
        return {key: _unwrap(child, (*path, key), doc) for key, child in node.value.items()}
    if isinstance(node.value, list):
        return [_unwrap(child, (*path, i), doc) for i, child in enumerate(node.value)]
    return node.value
