"""jq-style paths into parsed JSON (`.a.b[0]`), for the `output_json` evaluator."""

from __future__ import annotations

import re

from little_loops.fsm.values.value_checks import is_number

# One segment of a jq-style path: `.name`, `[3]`, `[-1]`, `["odd key"]` (`.` before `[` allowed).
# Compiled by re when first used (re caches it), not when validate imports the evaluators.
_PATH_TOKEN = r'\.?\[(?P<index>-?\d+)\]|\.?\["(?P<quoted>[^"]*)"\]|\.(?P<name>[^.\[\]]+)'


def _shorten(text: str, limit: int = 40) -> str:
    return f"'{text[: limit - 3]}...'" if len(text) > limit else f"'{text}'"


class JsonPathError(ValueError):
    """A jq-style path is malformed or leads nowhere in the document."""


def extract_json_path(data: object, path: str) -> object:
    """The value at jq-style *path* (`.`, `.a.b`, `.items[0]`, `.items[-1]`, `.["a b"]`)."""
    if not path or not path.strip():
        raise JsonPathError("path is empty")
    path = path.strip()
    if path == ".":
        return data
    if not path.startswith((".", "[")):
        path = "." + path  # `summary.failed` reads as `.summary.failed`
    value, pos, walked = data, 0, ""
    while pos < len(path):
        match = re.compile(_PATH_TOKEN).match(path, pos)
        if match is None:
            raise JsonPathError(f"path {path}: malformed at {_shorten(path[pos:])}")
        index, key = match.group("index"), match.group("quoted")
        if key is None:
            key = match.group("name")
        if index is None and key is not None and key.isdigit() and isinstance(value, list):
            index = key
        here = walked or "."
        if index is not None:
            if not isinstance(value, list):
                raise JsonPathError(f"path {path}: {here} is {json_kind(value)}, not an array")
            i = int(index)
            if not -len(value) <= i < len(value):
                raise JsonPathError(
                    f"path {path}: index {i} out of range in {here} ({len(value)} items)"
                )
            value = value[i]
            walked += f"[{i}]"
        else:
            if not isinstance(value, dict):
                raise JsonPathError(f"path {path}: {here} is {json_kind(value)}, not an object")
            if key not in value:
                raise JsonPathError(f"path {path}: key '{key}' not found in {here}")
            value = value[key]
            walked += f".{key}"
        pos = match.end()
    return value


def json_kind(value: object) -> str:
    """How a JSON value is named in messages: `a string`, `an array`, `null` ..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
